-- purge_files.lua (issue 23): Java's purge_files (FileStoreTable.purgeFiles,
-- Paimon 1.2+): the table emptied but for its schemas; every branch, tag,
-- consumer, snapshot and long-lived changelog gone; one new snapshot that
-- reads empty; the dry run's plan is exactly what the real run deletes.
local H = require "helper"
local paimon = require "paimon"

local PK = "cpp-parquet-pk_btree_partitioned_e2e"     -- 5 snapshots, tag fallback-base, branch fallback

local function purge(args) return H.script("purge_files.lua", args) end

local function minus(a, b)
  local v = {}
  for p in pairs(a) do if not b[p] then v[#v + 1] = p end end
  table.sort(v)
  return v
end

local function rel_paths(copy, r)
  local v = {}
  for _, p in ipairs(r.paths) do v[#v + 1] = p.path:sub(#copy + 2) end
  table.sort(v)
  return v
end

local function schema_files(copy)
  local out = {}
  for name in pairs(H.file_set(copy .. "/schema")) do out[name] = H.read_file(copy .. "/schema/" .. name) end
  return out
end

describe("purge_files (issue 23)", function()
  it("empties a Java fixture: dry run first, plan == deletions, schema intact, one empty snapshot", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    H.write_file(copy .. "/consumer/consumer-job1", '{\n  "nextSnapshot" : 3\n}')
    local schemas = schema_files(copy)
    local before = H.file_set(copy)
    -- without --dry-run or --yes: a usage error, nothing changed
    local out, err, rc = purge({copy})
    assert.equals(2, rc)
    assert.matches("--dry-run", err, 1, true)
    _, err, rc = purge({copy, "--yes", "--branch", "fallback"})
    assert.equals(2, rc)
    out, err, rc = purge({copy, "--dry-run"})
    assert.equals(0, rc, err)
    assert.matches("WOULD EMPTY THE TABLE", out, 1, true)
    out, err, rc = purge({copy, "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local plan = H.decode(out)
    assert.same({}, minus(before, H.file_set(copy)))
    assert.same({"fallback"}, plan.branches)
    assert.same({"fallback-base"}, plan.tags)
    assert.same({"job1"}, plan.consumers)
    assert.equals(5, plan.snapshots)
    assert.equals(6, plan.latest)
    local planned = rel_paths(copy, plan)
    out, err, rc = purge({copy, "--yes", "--json"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    local after = H.file_set(copy)
    assert.same(planned, minus(before, after))        -- the plan is exactly what went
    assert.equals(#planned, r.files)
    -- what is left: the schemas (byte for byte), the hints, the new snapshot and its lists
    assert.same(schemas, schema_files(copy))
    for p in pairs(after) do
      local new = before[p] == nil and (p:match("^manifest/") ~= nil or p == "snapshot/snapshot-6")
      assert.is_true(new or p:match("^schema/") ~= nil or p:match("^snapshot/[A-Z]+$") ~= nil or p == "README", p)
    end
    assert.equals("6", H.read_file(copy .. "/snapshot/EARLIEST"))
    assert.equals("6", H.read_file(copy .. "/snapshot/LATEST"))
    assert.same({}, H.pyref_json(copy, "files"))
    local snaps = H.pyref_json(copy, "snapshots")
    assert.equals(1, #snaps)
    assert.equals("OVERWRITE", H.decode(H.read_file(copy .. "/snapshot/snapshot-6")).commitKind)
    assert.is_false(H.exists(copy .. "/branch/branch-fallback"))
    local t = assert(paimon.open(copy))
    local v = assert(t:verify{all_snapshots = true})
    assert.is_true(v.ok)
    -- nothing left for orphan cleaning
    local o = assert(t:remove_orphan_files{older_than = 0, allow_young_cutoff = true, dry_run = true})
    assert.equals(0, o.files)
    t:close()
    H.rmdir(dir)
  end)

  for _, fx in ipairs(H.fixture_tables()) do
    if not fx.name:match("orc") then
      it(fx.name .. ": the dry run's plan is what the real run deletes; the rest reads whole and empty", function()
        local copy, dir = H.copy_table(fx.path)
        local before = H.file_set(copy)
        local out, err, rc = purge({copy, "--dry-run", "--json"})
        assert.equals(0, rc, err)
        local planned = rel_paths(copy, H.decode(out))
        out, err, rc = purge({copy, "--yes", "--json"})
        assert.equals(0, rc, err)
        local r = H.decode(out)
        assert.same(planned, minus(before, H.file_set(copy)))
        assert.equals(0, r.protected)
        assert.same({}, H.pyref_json(copy, "files"))
        local t = assert(paimon.open(copy))
        assert.is_true(assert(t:verify{all_snapshots = true}).ok)
        t:close()
        H.rmdir(dir)
      end)
    end
  end

  it("a table written here takes new writes after the purge; the Lua API and paimon.h run it", function()
    local dir = H.tmpdir()
    local tp = dir .. "/t"
    assert.equals(0, select(3, H.script("create_table.lua", {tp, "--field", "id:BIGINT", "--field", "p:STRING",
                                                            "--partition", "p"})))
    local input = dir .. "/rows.jsonl"
    H.write_file(input, '{"id": 1, "p": "a"}\n{"id": 2, "p": "b"}\n')
    for _ = 1, 3 do assert.equals(0, select(3, H.script("write.lua", {tp, "--input", input}))) end
    assert.equals(0, select(3, H.script("tag.lua", {tp, "create", "t1"})))
    assert.equals(0, select(3, H.script("branch.lua", {tp, "create", "b1", "--from-tag", "t1"})))
    -- opened on a branch: refused (the purge drops every branch), nothing changed
    local tree = H.tree(tp)
    local b = assert(paimon.open(tp, {branch = "b1"}))
    assert.has_error(function() b:purge_files{dry_run = true} end)
    b:close()
    assert.equals(tree, H.tree(tp))
    local t = assert(paimon.open(tp))
    local plan = assert(t:purge_files{dry_run = true})
    assert.is_true(plan.dry_run)
    assert.equals(4, plan.latest)
    assert.is_true(plan.files > 0)
    local r = assert(t:purge_files{})
    assert.equals(4, r.latest)
    assert.equals(plan.files, r.files)
    assert.has_error(function() t:purge_files{bogus = true} end)
    t:close()
    local out, err, rc = H.script("read.lua", {tp})
    assert.equals(0, rc, err)
    assert.equals("", out)
    assert.equals(0, select(3, H.script("write.lua", {tp, "--input", input})))
    out = H.script("read.lua", {tp})
    local n = 0
    for _ in out:gmatch("[^\n]+") do n = n + 1 end
    assert.equals(2, n)
    H.rmdir(dir)
  end)
end)
