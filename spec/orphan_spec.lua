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

  it("removes old temp files in snapshot/ and other files in Paimon's directories, never schema/", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local tmp = copy .. "/snapshot/.snapshot-2.0f6c3c5e-2c55-4f8b-9a55-7d1f3e3a9b1c.tmp"
    H.write_file(tmp, "partial")
    H.write_file(copy .. "/manifest/notes.txt", "junk")
    H.write_file(copy .. "/bucket-0/random.bin", "junk")
    H.write_file(copy .. "/schema/.schema-1.x.tmp", "keep me")
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--allow-young-cutoff", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(1, r.deleted.temp_files)
    assert.equals(2, r.deleted.other_files)
    assert.is_false(H.exists(tmp))
    assert.is_false(H.exists(copy .. "/manifest/notes.txt"))
    assert.is_false(H.exists(copy .. "/bucket-0/random.bin"))
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
    -- a symlinked directory is not listed at all: nothing in it is a candidate
    assert.equals(0, #r.skipped)
    assert.is_true(H.is_dir(copy .. "/bucket-7"))
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

-- Java's OrphanFilesClean: any old file in manifest/, index/, statistics/,
-- the bucket directories and snapshot/ that nothing uses; then directories
-- left empty, bottom up. Everything else stays.
describe("orphan cleaning removes what Java's does", function()
  local function old(paths)
    local q = {}
    for _, p in ipairs(paths) do q[#q + 1] = H.sh_quote(p) end
    local _, err, rc = H.run("touch -h -d '3 days ago' " .. table.concat(q, " "))
    assert.equals(0, rc, err)
  end
  local function mkdirs(paths)
    for _, p in ipairs(paths) do assert(os.execute("mkdir -p " .. H.sh_quote(p))) end
  end

  it("removes old junk files and empty directories, keeps young ones, metadata and symlinked dirs", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    local outside = H.tmpdir()
    -- old junk: each must go
    local junk = {"manifest/.manifest-0b1c.tmp", "manifest/notes.txt", "pt=1/bucket-0/junk.orc",
                  "pt=2/bucket-1/.data-x.parquet.tmp", "pt=1/leftover.txt", "index/junk.idx",
                  "snapshot/junk", "snapshot/.LATEST.1234.tmp",
                  "branch/branch-" .. "b1/snapshot/junk"}
    -- old files that stay: Java never touches them
    local keep = {"pt=1/_SUCCESS", "schema/.schema-1.x.tmp", "schema/junk", "tag/junk", "consumer/consumer-x",
                  "README.x", "branch/junk", "commit_messages/x"}
    -- young junk stays (a writer may still be publishing it)
    local young = {"pt=1/bucket-0/young.orc", "manifest/.manifest-young.tmp"}
    local bdir = H.run("ls -d " .. H.sh_quote(copy) .. "/branch/branch-*"):gsub("%s+$", "")
    junk[#junk] = bdir:sub(#copy + 2) .. "/snapshot/junk"
    mkdirs({copy .. "/consumer", copy .. "/commit_messages"})
    for _, p in ipairs(junk) do H.write_file(copy .. "/" .. p, "junk") end
    for _, p in ipairs(keep) do H.write_file(copy .. "/" .. p, "keep") end
    for _, p in ipairs(young) do H.write_file(copy .. "/" .. p, "young") end
    -- empty directories: left after expiration (a whole partition), junk ones
    local gone_dirs = {"pt=9/bucket-0", "pt=9/bucket-1", "pt=9", "pt=1/bucket-5", "pt=2/bucket-0/tmpdir",
                       "manifest/tmpdir", "pt=1/stray"}
    -- young empty directories (a writer just made them), the fixed ones, a partition with only _SUCCESS
    local kept_dirs = {"pt=8/bucket-0", "pt=8", "statistics", "changelog", "tag", "consumer", "pt=7"}
    mkdirs({copy .. "/pt=9/bucket-0", copy .. "/pt=9/bucket-1", copy .. "/pt=1/bucket-5",
            copy .. "/pt=2/bucket-0/tmpdir", copy .. "/manifest/tmpdir", copy .. "/pt=1/stray",
            copy .. "/pt=8/bucket-0", copy .. "/statistics", copy .. "/changelog"})
    mkdirs({copy .. "/pt=7"})
    H.write_file(copy .. "/pt=7/_SUCCESS", "{}")
    -- a symlinked partition and a symlink in a bucket, to old files and empty dirs outside
    mkdirs({outside .. "/bucket-0/empty", outside .. "/emptydir"})
    local outside_file = outside .. "/bucket-0/data-11111111-2222-3333-4444-555555555555-0.parquet"
    H.write_file(outside_file, "outside")
    H.write_file(outside .. "/junk.orc", "outside")
    assert(os.execute("ln -s " .. H.sh_quote(outside) .. " " .. H.sh_quote(copy .. "/pt=6")))
    assert(os.execute("ln -s " .. H.sh_quote(outside .. "/emptydir") .. " " .. H.sh_quote(copy .. "/pt=1/bucket-0/link")))
    assert(os.execute("ln -s " .. H.sh_quote(outside .. "/junk.orc") .. " " .. H.sh_quote(copy .. "/pt=1/bucket-1/flink.orc")))
    local olds = {outside_file, outside .. "/junk.orc", outside .. "/bucket-0/empty", outside .. "/emptydir",
                  outside .. "/bucket-0", copy .. "/pt=6", copy .. "/pt=1/bucket-0/link", copy .. "/pt=1/bucket-1/flink.orc"}
    for _, p in ipairs(junk) do olds[#olds + 1] = copy .. "/" .. p end
    for _, p in ipairs(keep) do olds[#olds + 1] = copy .. "/" .. p end
    for _, p in ipairs(gone_dirs) do olds[#olds + 1] = copy .. "/" .. p end
    for _, p in ipairs({"statistics", "changelog", "consumer", "pt=7", "pt=7/_SUCCESS"}) do olds[#olds + 1] = copy .. "/" .. p end
    old(olds)
    local used = H.used_paths(H.refs(copy), copy, true)
    local before = H.file_set(copy, "-type f -o -type l")
    -- the default cut-off (1 day): the copied fixture's own files are young
    local out, err, rc = orphan_cli({copy, "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    local after = H.file_set(copy, "-type f -o -type l")
    local removed, expect = {}, {}
    for p in pairs(before) do if not after[p] then removed[p] = true end end
    for _, p in ipairs(junk) do expect[p] = true end
    assert.same(expect, removed)
    assert.equals(5, r.deleted.temp_files + 0)
    assert.equals(4, r.deleted.other_files)
    for _, p in ipairs(gone_dirs) do assert.is_false(H.is_dir(copy .. "/" .. p), "empty dir stays: " .. p) end
    for _, p in ipairs(kept_dirs) do assert.is_true(H.is_dir(copy .. "/" .. p), "dir removed: " .. p) end
    assert.equals(#gone_dirs, r.directories)
    for p in pairs(used) do assert.is_true(H.exists(p), "used file deleted: " .. p) end
    -- outside and behind symlinks: untouched
    assert.is_true(H.exists(outside_file))
    assert.is_true(H.exists(outside .. "/junk.orc"))
    assert.is_true(H.is_dir(outside .. "/bucket-0/empty"))
    assert.is_true(H.is_dir(outside .. "/emptydir"))
    H.rmdir(outside)
    H.rmdir(dir)
  end)

  it("a dry run deletes nothing and lists the junk", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    H.write_file(copy .. "/pt=1/bucket-0/junk.orc", "junk")
    assert(os.execute("mkdir -p " .. H.sh_quote(copy .. "/pt=9/bucket-0")))
    old({copy .. "/pt=1/bucket-0/junk.orc", copy .. "/pt=9/bucket-0", copy .. "/pt=9"})
    local before = H.tree(copy)
    local out, err, rc = orphan_cli({copy, "--json", "--dry-run"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(1, r.deleted.other_files)
    assert.equals(before, H.tree(copy))
    assert.is_true(H.is_dir(copy .. "/pt=9/bucket-0"))
    H.rmdir(dir)
  end)
end)

-- Java's remove_orphan_files('db.*') / '*': PATH is a warehouse or a
-- database; each table in turn, one's failure reported and not stopping
-- the others (exit 4), JSON lines then a summary.
describe("remove_orphan_files.lua over a warehouse", function()
  local function warehouse()
    local dir = H.tmpdir()
    local w = dir .. "/wh"
    assert(os.execute("mkdir -p " .. H.sh_quote(w .. "/db1.db") .. " " .. H.sh_quote(w .. "/db2.db")
                      .. " " .. H.sh_quote(w .. "/notadb/x")))
    local src = H.fixture(TAGGED)
    for _, t in ipairs({"db1.db/a", "db1.db/b", "db2.db/c"}) do
      local _, err, rc = H.run("cp -R " .. H.sh_quote(src) .. " " .. H.sh_quote(w .. "/" .. t))
      assert.equals(0, rc, err)
      H.write_file(w .. "/" .. t .. "/pt=1/bucket-0/junk.orc", "junk")
      H.run("touch -d '3 days ago' " .. H.sh_quote(w .. "/" .. t .. "/pt=1/bucket-0/junk.orc"))
    end
    H.write_file(w .. "/db1.db/b/snapshot/snapshot-5", "not json")   -- corrupt metadata
    assert(os.execute("mkdir -p " .. H.sh_quote(w .. "/db1.db/notatable/schema")))
    return w, dir
  end

  it("cleans every table, reports the corrupt one with its path and goes on (exit 4)", function()
    local w, dir = warehouse()
    local before_b = H.tree(w .. "/db1.db/b")
    local out, err, rc = orphan_cli({w, "--json"})
    assert.equals(4, rc, err)
    assert.matches(w .. "/db1.db/b: ", err, 1, true)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = H.cjson.decode(l) end
    assert.equals(4, #lines)
    assert.same({"a", "b", "c"}, {lines[1].table, lines[2].table, lines[3].table})
    assert.same({"db1", "db1", "db2"}, {lines[1].database, lines[2].database, lines[3].database})
    assert.is_true(lines[1].ok)
    assert.equals(1, lines[1].deleted.other_files)
    assert.is_false(lines[2].ok)
    assert.equals(w .. "/db1.db/b", lines[2].path)
    assert.matches("snapshot-5", lines[2].error, 1, true)
    assert.is_true(lines[3].ok)
    local sum = lines[4]
    assert.is_true(sum.summary)
    assert.same({3, 2, 1, 2}, {sum.tables, sum.ok, sum.failed, sum.files})
    assert.same({w .. "/db1.db/b"}, sum.failed_tables)
    assert.is_false(H.exists(w .. "/db1.db/a/pt=1/bucket-0/junk.orc"))
    assert.is_false(H.exists(w .. "/db2.db/c/pt=1/bucket-0/junk.orc"))
    assert.equals(before_b, H.tree(w .. "/db1.db/b"))   -- the failed table: untouched
    H.rmdir(dir)
  end)

  it("takes a database directory and --database/--table globs", function()
    local w, dir = warehouse()
    local out, err, rc = orphan_cli({w .. "/db2.db", "--json", "--dry-run"})
    assert.equals(0, rc, err)
    local n = 0
    for l in out:gmatch("[^\n]+") do n = n + 1; if n == 1 then assert.equals("c", H.cjson.decode(l).table) end end
    assert.equals(2, n)
    out, err, rc = orphan_cli({w, "--database", "db1", "--table", "[a]", "--json"})
    assert.equals(0, rc, err)
    assert.is_false(H.exists(w .. "/db1.db/a/pt=1/bucket-0/junk.orc"))
    assert.is_true(H.exists(w .. "/db2.db/c/pt=1/bucket-0/junk.orc"))
    _, err, rc = orphan_cli({w, "--table", "nomatch"})
    assert.equals(1, rc)
    assert.matches("no table matches", err, 1, true)
    _, err, rc = orphan_cli({w, "--bogus"})
    assert.equals(2, rc, err)
    H.rmdir(dir)
  end)

  it("paimon.list_tables finds tables by Java's catalog layout", function()
    local w, dir = warehouse()
    local v, kind = assert(paimon.list_tables(w))
    assert.equals("warehouse", kind)
    local names = {}
    for _, t in ipairs(v) do names[#names + 1] = t.database .. "." .. t.table .. "=" .. t.path end
    assert.same({"db1.a=" .. w .. "/db1.db/a", "db1.b=" .. w .. "/db1.db/b", "db2.c=" .. w .. "/db2.db/c"}, names)
    v, kind = assert(paimon.list_tables(w .. "/db1.db", {table = "b*"}))
    assert.equals("database", kind)
    assert.equals(1, #v)
    v, kind = assert(paimon.list_tables(w .. "/db1.db/a"))
    assert.equals("table", kind)
    assert.same({database = "db1", table = "a", path = w .. "/db1.db/a"}, v[1])
    -- a symlinked database is not looked into
    assert(os.execute("ln -s " .. H.sh_quote(w .. "/db2.db") .. " " .. H.sh_quote(w .. "/db3.db")))
    assert.equals(3, #assert(paimon.list_tables(w)))
    assert.has_error(function() paimon.list_tables(w, {bogus = 1}) end)
    H.rmdir(dir)
  end)
end)
