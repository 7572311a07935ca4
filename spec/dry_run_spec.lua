-- The dry run equals the real run (issue 24, defect 5), as a property: for
-- every destructive operation and every Java fixture it applies to, the
-- dry run on one copy and the real run on another; the plan must be what
-- was done, path by path and kind by kind:
--   * the dry run changes nothing;
--   * every file the real run removed is in the plan, and every planned
--     file is gone afterwards (or was written anew: a fast-forward puts the
--     branch's snapshot-N where main's was);
--   * each planned path's kind is what its place says it is (classified
--     here, independently of the core), and the dry run's and the real
--     run's counts agree kind by kind.
local H = require "helper"

-- The kind of a table file by its path relative to the table (the result
-- keys), written from Paimon's layout, not from the core's code.
local function kind_of(rel)
  local base = rel:match("([^/]+)$")
  local dir = rel:match("([^/]+)/[^/]+$") or ""
  if (dir == "snapshot" or dir == "changelog") and (base == "EARLIEST" or base == "LATEST") then return "hints" end
  if dir == "snapshot" and base:match("^snapshot%-%d+$") then return "snapshots" end
  if dir == "schema" and base:match("^schema%-%d+$") then return "schemas" end
  if dir == "tag" and base:match("^tag%-") then return "tags" end
  if dir == "changelog" and base:match("^changelog%-%d+$") then return "changelogs" end
  if dir == "consumer" and base:match("^consumer%-") then return "consumers" end
  if dir == "manifest" and base:match("^manifest%-list%-") then return "manifest_lists" end
  if dir == "manifest" and base:match("^index%-manifest%-") then return "index_manifests" end
  if dir == "manifest" and base:match("^manifest%-") then return "manifests" end
  if dir == "index" then return "index_files" end
  if dir == "statistics" then return "statistics" end
  if dir:match("^bucket%-") and base:match("^changelog%-") then return "changelog_files" end
  if dir:match("^bucket%-") and base:match("^data%-") then return "data_files" end
  if dir:match("^bucket%-") and base:match("%.index$") then return "index_files" end
  return "other"
end

local function ls(path)
  local out = {}
  local p = io.popen("ls " .. H.sh_quote(path) .. " 2>/dev/null")
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

-- md5 per file below dir: {rel = md5}
local function sums(dir)
  local out = {}
  local text = H.run("cd " .. H.sh_quote(dir) .. " && find . -type f -print0 | xargs -0 -r md5sum")
  for sum, p in text:gmatch("(%x+)  %./([^\n]+)") do out[p] = sum end
  return out
end

-- The operations that apply to a table: {name, args...} with T for the table.
local function operations(path)
  local ops = {
    {"expire", "expire.lua", "T", "--retain-min", "1", "--older-than", "1ms"},
    {"orphans", "remove_orphan_files.lua", "T", "--older-than", "1ms", "--allow-young-cutoff"},
    {"changelogs", "expire_changelogs.lua", "T", "--retain-min", "1", "--older-than", "1ms"},
    {"purge", "purge_files.lua", "T", "--yes"},
  }
  local ids = {}
  for _, f in ipairs(ls(path .. "/snapshot")) do ids[#ids + 1] = tonumber(f:match("^snapshot%-(%d+)$")) end
  table.sort(ids)
  if #ids > 1 then
    ops[#ops + 1] = {"rollback", "rollback.lua", "T", "--to-snapshot", tostring(ids[1])}
    ops[#ops + 1] = {"rollback --purge-files", "rollback.lua", "T", "--to-snapshot", tostring(ids[1]), "--purge-files"}
  end
  for _, f in ipairs(ls(path .. "/tag")) do
    local name = f:match("^tag%-(.+)$")
    if name then ops[#ops + 1] = {"tag delete " .. name, "tag.lua", "T", "delete", name} end
  end
  for _, f in ipairs(ls(path .. "/branch")) do
    local name = f:match("^branch%-(.+)$")
    if name then
      ops[#ops + 1] = {"branch delete " .. name, "branch.lua", "T", "delete", name}
      ops[#ops + 1] = {"fast-forward " .. name, "branch.lua", "T", "fast-forward", name}
    end
  end
  return ops
end

local function run(op, table_path, extra)
  local args = {}
  for i = 2, #op do args[#args + 1] = op[i] == "T" and table_path or op[i] end
  for _, a in ipairs(extra) do args[#args + 1] = a end
  local out, err, rc = H.paimon_lua(args)
  return out, err, rc
end

local function zero_kinds(t)
  local out = {}
  for k, v in pairs(t or {}) do if v ~= 0 then out[k] = v end end
  return out
end

describe("every destructive operation: the dry run is the real run", function()
  for _, f in ipairs(H.fixture_tables()) do
    if not f.name:match("orc") then
      for _, op in ipairs(operations(f.path)) do
        it(f.name .. ": " .. op[1], function()
          local a, adir = H.copy_table(f.path)
          local b, bdir = H.copy_table(f.path)
          local fp = H.fingerprint(a)
          local dout, derr, drc = run(op, a, {"--dry-run", "--json"})
          assert.equals(fp, H.fingerprint(a), "the dry run changed the table")
          local before = sums(b)
          local rout, rerr, rrc = run(op, b, {"--json"})
          -- both refuse alike (e.g. nothing a rollback may remove), or both plan and do
          assert.equals(drc, rrc, "dry run exit " .. drc .. " (" .. derr .. "), real run " .. rrc .. " (" .. rerr .. ")")
          if rrc ~= 0 then H.rmdir(adir); H.rmdir(bdir); return end
          local plan, done = H.decode(dout), H.decode(rout)
          assert.is_true(plan.dry_run)
          local after = sums(b)
          local planned, planned_kinds = {}, {}
          for _, p in ipairs(plan.paths or {}) do
            local rel = p.path:sub(#a + 2)
            assert.equals(a .. "/", p.path:sub(1, #a + 1), "planned path outside the table: " .. p.path)
            planned[rel] = true
            assert.equals(kind_of(rel), p.kind, "the kind of " .. rel)
            planned_kinds[p.kind] = (planned_kinds[p.kind] or 0) + 1
          end
          for rel in pairs(before) do
            if not after[rel] then assert.is_true(planned[rel] == true, rel .. " was removed but not planned") end
          end
          -- a fast-forward writes the branch's files where main's were
          local taken = {}
          for _, p in ipairs(plan.taken_paths or {}) do taken[p:sub(#a + 2)] = true end
          for rel in pairs(planned) do
            assert.is_true(before[rel] ~= nil, rel .. " was planned but did not exist")
            assert.is_true(after[rel] == nil or after[rel] ~= before[rel] or taken[rel] == true,
                           rel .. " was planned but is still there")
          end
          assert.same(zero_kinds(plan.deleted), planned_kinds)
          assert.same(zero_kinds(plan.deleted), zero_kinds(done.deleted))
          if plan.taken then assert.same(plan.taken, done.taken) end
          H.rmdir(adir)
          H.rmdir(bdir)
        end)
      end
    end
  end
end)

-- Issue 24: consumer reset, consumer delete and tag rename had no --dry-run.
-- Each dry run changes nothing, refuses what the real run refuses, and
-- reports what the real run then does.
describe("the small operations' dry runs", function()
  it("consumer reset/delete and tag rename: nothing changed, the real run's answer", function()
    local path, dir = H.copy_table(H.fixture("cpp-parquet-append_table_with_append_pt_branch"))
    local function run(args)
      local out, err, rc = H.paimon_lua(args)
      return rc == 0 and H.decode(out) or nil, err, rc
    end
    assert(run({"tag.lua", path, "create", "t9", "--json"}))
    for _, case in ipairs{
      {{"consumer.lua", path, "reset", "c1", "--next-snapshot", "2", "--json"}},
      {{"consumer.lua", path, "delete", "c1", "--json"}},
      {{"tag.lua", path, "rename", "t9", "t10", "--json"}},
      {{"consumer.lua", path, "delete", "nope", "--json"}, 1},
      {{"tag.lua", path, "rename", "missing", "t11", "--json"}, 1},
      {{"consumer.lua", path, "reset", "c2", "--next-snapshot", "99", "--json"}, 2},
    } do
      local args, want_rc = case[1], case[2] or 0
      local dry = {}
      for i, a in ipairs(args) do dry[i] = a end
      dry[#dry + 1] = "--dry-run"
      local fp = H.fingerprint(path)
      local d, derr, drc = run(dry)
      assert.equals(want_rc, drc, table.concat(dry, " ") .. ": " .. derr)
      assert.equals(fp, H.fingerprint(path), table.concat(dry, " ") .. " changed the table")
      local r, rerr, rrc = run(args)
      assert.equals(want_rc, rrc, table.concat(args, " ") .. ": " .. rerr)
      if want_rc == 0 then
        assert.is_true(d.dry_run)
        assert.is_false(r.dry_run)
        d.dry_run, r.dry_run, d.deleted, r.deleted = nil, nil, nil, nil
        assert.same(r, d)
        assert.are_not.equal(fp, H.fingerprint(path))
      end
    end
    H.rmdir(dir)
  end)
end)
