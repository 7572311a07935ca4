-- Decoupled changelog lifecycle through both faces (issue 15): expire.lua
-- moves expired snapshots to changelog/ as Java's ExpireSnapshotsImpl does,
-- inspect.lua lists them, expire_changelogs.lua / t:expire_changelogs
-- expire them by ExpireChangelogImpl's rule (dry-run plan, --json, exit
-- codes), and verify and orphan cleaning cover them afterwards. The C side
-- (Java's bytes, exact deletions, fault sweeps) is spec/c/test_changelog.c.
local H = require "helper"
local paimon = require "paimon"
local maint = require "paimon.maint"

local PK = "cpp-parquet-pk_table_scan_and_read_dv"

-- A copy of the PK fixture (snapshots 1-6) whose changelogs are kept longer
-- than snapshots, with snapshots 1-5 moved to changelog/.
local function decoupled_copy()
  local copy, dir = H.copy_table(H.fixture(PK))
  local sp = copy .. "/schema/schema-0"
  local s = H.read_file(sp)
  s = s:gsub('"options" : {', '"options" : {\n    "changelog.num-retained.min" : "100",', 1)
  H.write_file(sp, s)
  local out, err, rc = H.script("expire.lua", {copy, "--retain-min", "1", "--older-than", "0s", "--json"})
  assert.equals(0, rc, err)
  assert.equals(5, H.cjson.decode(out).changelogs)
  return copy, dir
end

local function cl(args) return H.script("expire_changelogs.lua", args) end

describe("decoupled changelogs", function()
  it("inspect.lua TABLE changelogs lists changelog/ in id order", function()
    local copy, dir = decoupled_copy()
    local out, err, rc = H.script("inspect.lua", {copy, "changelogs", "--json"})
    assert.equals(0, rc, err)
    local rows = H.cjson.decode(out)
    assert.equals(5, #rows)
    for i, r in ipairs(rows) do assert.equals(i, r.changelog_id) end
    out, err, rc = H.script("inspect.lua", {copy, "changelogs"})
    assert.equals(0, rc, err)
    assert.matches("changelog_id", out, 1, true)
    H.rmdir(dir)
  end)

  it("expire_changelogs.lua: a dry run plans and changes nothing, a run expires by its own retention", function()
    local copy, dir = decoupled_copy()
    local before = H.tree(copy)
    local out, err, rc = cl({copy, "--retain-min", "3", "--older-than", "0s", "--dry-run"})
    assert.equals(0, rc, err)
    assert.matches("would expire 3 changelog(s): 1..3", out, 1, true)
    assert.equals(before, H.tree(copy))
    out, err, rc = cl({copy, "--retain-min", "3", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(3, r.expired)
    assert.same({1, 3}, r.range)
    assert.equals(4, r.plan["end"])
    for id = 1, 3 do assert.is_false(H.exists(copy .. "/changelog/changelog-" .. id)) end
    for id = 4, 5 do assert.is_true(H.exists(copy .. "/changelog/changelog-" .. id)) end
    assert.equals("4", H.read_file(copy .. "/changelog/EARLIEST"))
    -- verify and orphan cleaning cover what stays
    out, err, rc = H.script("verify.lua", {copy, "--all-snapshots", "--json"})
    assert.equals(0, rc, err .. out)
    out, err, rc = H.script("remove_orphan_files.lua", {copy, "--older-than", "0s", "--allow-young-cutoff", "--json"})
    assert.equals(0, rc, err)
    out, err, rc = H.script("verify.lua", {copy, "--all-snapshots", "--json"})
    assert.equals(0, rc, err .. out)
    assert.equals(2, #H.cjson.decode((H.script("inspect.lua", {copy, "changelogs", "--json"}))))
    H.rmdir(dir)
  end)

  it("never expires the latest changelog; usage errors exit 2", function()
    local copy, dir = decoupled_copy()
    local out, err, rc = cl({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(4, r.expired)
    assert.equals("latest-changelog", r.capped_by)
    assert.is_true(H.exists(copy .. "/changelog/changelog-5"))
    _, _, rc = cl({copy, "--retain-min", "0"})
    assert.equals(2, rc)
    _, _, rc = cl({copy, "--retain-min", "3", "--retain-max", "2"})
    assert.equals(2, rc)
    H.rmdir(dir)
  end)

  it("t:changelogs and t:expire_changelogs", function()
    local copy, dir = decoupled_copy()
    local t = assert(paimon.open(copy))
    local v = assert(t:changelogs())
    assert.equals(5, #v)
    assert.equals(1, v[1].id)
    assert.has_error(function() t:expire_changelogs{bogus = 1} end)
    -- epoch 0 as the cut-off: every changelog is younger, Java's time rule keeps all
    local r = assert(t:expire_changelogs{retain_min = 4, older_than = 0})
    assert.equals(0, r.expired)
    assert.equals("time-retained", r.capped_by)
    r = assert(t:expire_changelogs{retain_min = 4, older_than = maint.now_ms(), dry_run = true})
    assert.equals(2, r.expired)
    r = assert(t:expire_changelogs{retain_min = 4, older_than = maint.now_ms()})
    assert.equals(2, r.expired)
    assert.equals(3, #assert(t:changelogs()))
    t:close()
    H.rmdir(dir)
  end)
end)

-- A fast-forward after main's snapshots moved to long-lived changelogs:
-- main's changelog-N is of history the branch's snapshot N replaced.
-- Expiring that snapshot refused for ever (exit 3, "exists with other
-- content"); Java's commitChangelog overwrites it, and so do we now.
describe("a changelog of history a fast-forward replaced", function()
  it("is overwritten when the branch's snapshot of that id expires", function()
    local dir = H.tmpdir()
    local T = dir .. "/t"
    local function ok(args, stdin)
      local cmd = {}
      for i, a in ipairs(args) do cmd[i] = H.sh_quote(a) end
      local line = H.sh_quote(H.cli) .. " " .. table.concat(cmd, " ")
      if stdin then line = "printf '%s\\n' " .. H.sh_quote(stdin) .. " | " .. line end
      local out, err, rc = H.run(line)
      assert.equals(0, rc, table.concat(args, " ") .. ": " .. err)
      return out
    end
    ok({"create_table.lua", T, "--field", "id:INT", "--field", "v:STRING", "--option", "file.format=avro",
        "--option", "changelog.time-retained=1d"})
    for i = 1, 2 do ok({"write.lua", T}, '{"id":' .. i .. ',"v":"m"}') end
    ok({"tag.lua", T, "create", "t1"})
    ok({"branch.lua", T, "create", "b", "--from-tag", "t1"})
    for i = 3, 4 do
      ok({"write.lua", T, "--branch", "b"}, '{"id":' .. i .. ',"v":"b"}')
      ok({"write.lua", T}, '{"id":' .. i .. ',"v":"m"}')
    end
    ok({"tag.lua", T, "delete", "t1"})
    ok({"expire.lua", T, "--retain-min", "1", "--older-than", "1ms"})     -- main's 1..3 into changelogs
    local old3 = H.read_file(T .. "/changelog/changelog-3")
    ok({"branch.lua", T, "fast-forward", "b"})                             -- the branch's 2..4 come in
    ok({"expire.lua", T, "--retain-min", "1", "--older-than", "1ms"})     -- refused before (exit 3)
    local new3 = H.cjson.decode(H.read_file(T .. "/changelog/changelog-3"))
    local b3 = H.cjson.decode(H.read_file(T .. "/branch/branch-b/snapshot/snapshot-3"))
    assert.are_not.equal(old3, H.read_file(T .. "/changelog/changelog-3"))
    assert.equals(b3.baseManifestList, new3.baseManifestList)
    assert.equals(b3.deltaManifestList, new3.deltaManifestList)
    local out = ok({"verify.lua", T, "--all-snapshots", "--json"})
    assert.is_true(H.decode(out).ok)
    H.rmdir(dir)
  end)
end)
