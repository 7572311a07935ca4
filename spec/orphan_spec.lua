-- Orphan file cleaning on temp copies of every Java fixture: exactly the
-- files the fixture's SOURCE.md lists as referenced by nothing are removed,
-- everything a snapshot, tag or branch uses (walked with the independent
-- python3-avro reader) stays. Plus Java's safety rules: no future cut-off,
-- abort when the used set cannot be built, only Paimon's own directories and
-- names, nothing outside the table directory, dry runs.
local H = require "helper"
local paimon = require "paimon"
local maint = require "paimon.maint"

local ORC = "cpp-parquet-append_10-orc-manifests"

-- The fixture's "files present but referenced by nothing" list.
local function source_orphans(fixture_table)
  local src = H.read_file(fixture_table:match("(.*)/[^/]+/[^/]+$") .. "/SOURCE.md")
  local line = src:match("candidate orphans%): ([^\n]*)")
  local set = {}
  if line and line ~= "none" then
    for p in line:gmatch("'([^']+)'") do set[p] = true end
  end
  return set
end

local function orphan_cli(args) return H.script("remove_orphan_files.lua", args) end

describe("remove_orphan_files.lua on every Java fixture", function()
  for _, fx in ipairs(H.fixture_tables()) do
    if fx.name == ORC then
      it("refuses " .. fx.name .. " (ORC manifests) and changes nothing", function()
        local copy, dir = H.copy_table(fx.path)
        H.refuses_unchanged(copy, orphan_cli, {copy, "--older-than", "0s", "--allow-young-cutoff"}, 1, "manifest.format")
        H.rmdir(dir)
      end)
    else
      it("removes exactly the unreferenced files of " .. fx.name, function()
        local copy, dir = H.copy_table(fx.path)
        local expected = source_orphans(fx.path)
        local before = H.file_set(copy)
        local used = H.used_paths(H.refs(copy), copy, true)
        local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--allow-young-cutoff", "--json"})
        assert.equals(0, rc, err)
        local res = H.cjson.decode(out)
        local after = H.file_set(copy)
        local removed = {}
        for p in pairs(before) do if not after[p] then removed[p] = true end end
        assert.same(expected, removed)
        local n = 0
        for _, c in pairs(res.deleted) do n = n + c end
        for _ in pairs(expected) do n = n - 1 end
        assert.equals(0, n)
        for p in pairs(used) do assert.is_true(H.exists(p), "used file deleted: " .. p) end
        -- non-Paimon files (README, commit_messages-*) are never touched
        for p in pairs(before) do
          if not p:match("/") or p:match("commit_messages") then assert.is_true(after[p], p) end
        end
        H.rmdir(dir)
      end)
    end
  end
end)

local BITMAP = "cpp-parquet-append_with_bitmap"     -- 4 orphan files
local TAGGED = "cpp-parquet-pk_btree_partitioned_e2e"

describe("orphan cleaning safety", function()
  it("rejects a cut-off in the future", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local before = H.tree(copy)
    local _, err, rc = orphan_cli({copy, "--older-than", "2999-01-01 00:00:00"})
    assert.equals(2, rc)
    assert.matches("future", err, 1, true)
    local t = assert(paimon.open(copy))
    assert.has_error(function() t:remove_orphan_files{older_than = maint.now_ms() + 60000} end)
    t:close()
    assert.equals(before, H.tree(copy))
    H.rmdir(dir)
  end)

  it("keeps young files: the default cut-off is one day", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local before = H.tree(copy)
    local out, err, rc = orphan_cli({copy, "--json"})
    assert.equals(0, rc, err)
    assert.equals(0, H.cjson.decode(out).files)
    assert.equals(before, H.tree(copy))
    -- once they are two days old they go
    H.run("find " .. H.sh_quote(copy) .. " -type f -exec touch -d '2 days ago' {} +")
    out, err, rc = orphan_cli({copy, "--json"})
    assert.equals(0, rc, err)
    assert.equals(4, H.cjson.decode(out).files)
    H.rmdir(dir)
  end)

  it("a dry run changes nothing and lists the plan", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local before = H.tree(copy)
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--allow-young-cutoff", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(4, #r.paths)
    assert.equals(before, H.tree(copy))
    out, err, rc = orphan_cli({copy, "--older-than", "0s", "--allow-young-cutoff", "--dry-run"})
    assert.equals(0, rc, err)
    assert.matches("manifest-53092f56", out, 1, true)
    assert.equals(before, H.tree(copy))
    H.rmdir(dir)
  end)

  it("aborts when a tag cannot be read, naming it, and deletes nothing", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    H.write_file(copy .. "/tag/tag-fallback-base", "{ broken")
    H.refuses_unchanged(copy, orphan_cli, {copy, "--older-than", "0s", "--allow-young-cutoff"}, 1, "tag-fallback-base")
    H.rmdir(dir)
  end)

  it("aborts when a manifest of the used set is missing, and deletes nothing", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    local r = H.refs(copy)
    -- remove one manifest the branch uses
    local victim
    for _, paths in pairs(r.fallback.snapshots) do
      for _, p in ipairs(paths) do if p:match("^manifest/manifest%-[0-9a-f]") then victim = p end end
    end
    assert.is_not_nil(victim)
    os.remove(copy .. "/" .. victim)
    local before = H.tree(copy)
    local _, err, rc = orphan_cli({copy, "--older-than", "0s", "--allow-young-cutoff"})
    assert.is_true(rc == 1 or rc == 3)
    assert.matches(victim:match("[^/]+$"), err, 1, true)
    assert.equals(before, H.tree(copy))
    H.rmdir(dir)
  end)

  it("aborts when no snapshot uses any file while data files exist", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    H.run("rm -f " .. H.sh_quote(copy) .. "/snapshot/*")
    H.refuses_unchanged(copy, orphan_cli, {copy, "--older-than", "0s", "--allow-young-cutoff"}, 3, "no snapshot")
    H.rmdir(dir)
  end)

  it("removes old temp files in snapshot/ but nothing it does not know", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local tmp = copy .. "/snapshot/.snapshot-2.0f6c3c5e-2c55-4f8b-9a55-7d1f3e3a9b1c.tmp"
    H.write_file(tmp, "partial")
    H.write_file(copy .. "/manifest/notes.txt", "keep me")
    H.write_file(copy .. "/bucket-0/random.bin", "keep me")
    H.write_file(copy .. "/schema/.schema-1.x.tmp", "keep me")
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--allow-young-cutoff", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(1, r.deleted.temp_files)
    assert.is_false(H.exists(tmp))
    assert.is_true(H.exists(copy .. "/manifest/notes.txt"))
    assert.is_true(H.exists(copy .. "/bucket-0/random.bin"))
    assert.is_true(H.exists(copy .. "/schema/.schema-1.x.tmp"))
    H.rmdir(dir)
  end)

  it("never deletes through a symlinked bucket directory pointing outside", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local outside = H.tmpdir()
    local sentinel = outside .. "/data-11111111-2222-3333-4444-555555555555-0.parquet"
    H.write_file(sentinel, "sentinel")
    H.run("touch -d '2 days ago' " .. H.sh_quote(sentinel))
    assert(os.execute("ln -s " .. H.sh_quote(outside) .. " " .. H.sh_quote(copy .. "/bucket-7")))
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--allow-young-cutoff", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.is_true(H.exists(sentinel))
    assert.equals(1, #r.skipped)
    assert.matches("outside", r.skipped[1].message, 1, true)
    assert.equals(4, r.files)
    H.rmdir(outside)
    H.rmdir(dir)
  end)

  it("keeps files only a branch uses", function()
    local copy, dir = H.copy_table(H.fixture("cpp-parquet-append_table_with_append_pt_branch"))
    local used = H.used_paths(H.refs(copy), copy, true)
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--allow-young-cutoff", "--json", "--threads", "8"})
    assert.equals(0, rc, err)
    assert.equals(0, H.cjson.decode(out).files)
    for p in pairs(used) do assert.is_true(H.exists(p), p) end
    H.rmdir(dir)
  end)

  it("has a Lua API with the same result shape", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local t = assert(paimon.open(copy))
    local phases = {}
    -- the copy's files were written just now: let the clock pass their mtimes
    -- so a cut-off of "now" really is after them
    os.execute("sleep 0.05")
    local r = assert(t:remove_orphan_files{older_than = maint.now_ms(), allow_young_cutoff = true, threads = 2,
                                           progress = function(phase) phases[phase] = true end})
    t:close()
    assert.equals(4, r.files)
    assert.equals(1, r.deleted.data_files)
    assert.equals(1, r.deleted.manifests)
    assert.equals(2, r.deleted.manifest_lists)
    assert.is_true(r.bytes.data_files > 0)
    assert.same({}, r.failures)
    assert.is_true(phases.deleting)
    H.rmdir(dir)
  end)
end)
