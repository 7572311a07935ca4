-- drop_partition.lua / expire_partitions.lua and t:drop_partitions /
-- t:expire_partitions on temp copies of Java-written tables, checked with
-- the independent python3-avro reader. (Tables with dated partitions are
-- built and expired in spec/c/test_partition_ops.c.)
local H = require "helper"
local paimon = require "paimon"
local cjson = H.cjson

local COMPLEX = "cpp-parquet-append_complex_data"      -- partition f1 INT: 10, 20
local PK2 = "cpp-parquet-pk_table_with_alter_table"   -- partitions key0, key1; deletion vectors

local function py_files(path) return H.pyref_json(path, "files") end

local function py_snapshots(path) return H.pyref_json(path, "snapshots") end

local function data_files_on_disk(dir) return (H.file_set(dir, "-name 'data-*'")) end

-- spec/support/index_manifest_check.py (python3-avro): decoded JSON, asserts exit 0
local function index_check(args)
  local out, err, rc = H.support_py("index_manifest_check.py", args)
  assert(rc == 0, err)
  return cjson.decode(out)
end

local function latest_snapshot(path)
  local snaps = py_snapshots(path)
  return snaps[#snaps]
end

local function drop(args) return H.script("drop_partition.lua", args) end

local function expire(args) return H.script("expire_partitions.lua", args) end

describe("drop_partition.lua", function()
  it("drops one partition with an OVERWRITE snapshot and deletes no file", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local before = py_files(path)
    local n20 = 0
    for _, f in ipairs(before) do if f.partition.f1 == 20 then n20 = n20 + 1 end end
    assert.is_true(n20 > 0)
    local disk = data_files_on_disk(path)
    local nsnap = #py_snapshots(path)
    local out, err, rc = drop({path, "--partition", "f1=10", "--json"})
    assert.equals(0, rc, err)
    local r = cjson.decode(out)
    assert.equals(nsnap + 1, r.snapshot_id)
    assert.equals(1, #r.partitions)
    assert.equals("f1=10/", r.partitions[1].path)
    assert.equals(1, r.files)
    assert.equals(6, r.rows)
    assert.is_number(r.duration_ms)
    local snaps = py_snapshots(path)
    assert.equals(nsnap + 1, #snaps)
    assert.equals("OVERWRITE", snaps[#snaps].commit_kind)
    assert.equals(snaps[#snaps - 1].total_record_count - 6, snaps[#snaps].total_record_count)
    local after = py_files(path)
    assert.equals(n20, #after)
    for _, f in ipairs(after) do assert.equals(20, f.partition.f1) end
    assert.same(disk, data_files_on_disk(path))
    H.rmdir(dir)
  end)

  it("changes nothing for a partition that does not exist", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local fp = H.fingerprint(path)
    local out, err, rc = drop({path, "--partition", "f1=99", "--json"})
    assert.equals(0, rc, err)
    local r = cjson.decode(out)
    assert.equals(0, r.files)
    assert.equals(cjson.null, r.snapshot_id)
    assert.equals(fp, H.fingerprint(path))
    out, err, rc = drop({path, "--partition", "f1=99"})
    assert.equals(0, rc, err)
    assert.matches("nothing to drop", out)
    H.rmdir(dir)
  end)

  it("refuses a value that is not of the partition column's type (usage error)", function()
    -- issue 24: "f1=abc" on an INT key printed "nothing to drop", exit 0
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local fp = H.fingerprint(path)
    for _, spec in ipairs{"f1=abc", "f1=1.5", "f1=99999999999", "f1=0x10"} do
      local out, err, rc = drop({path, "--partition", spec, "--dry-run"})
      assert.equals(2, rc, spec .. ": " .. out .. err)
      assert.matches("is not a value of partition key 'f1' %(INT%)", err)
    end
    -- the null partition and in-range integers are values
    for _, spec in ipairs{"f1=__DEFAULT_PARTITION__", "f1=-7"} do
      local _, err, rc = drop({path, "--partition", spec, "--dry-run"})
      assert.equals(0, rc, spec .. ": " .. err)
    end
    assert.equals(fp, H.fingerprint(path))
    H.rmdir(dir)
  end)

  it("--dry-run prints the plan and changes nothing", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local fp = H.fingerprint(path)
    local out, err, rc = drop({path, "--partition", "f1=10", "--dry-run"})
    assert.equals(0, rc, err)
    assert.matches("f1=10/", out, 1, true)
    assert.matches("would drop 1 partition", out, 1, true)
    out, err, rc = drop({path, "--partition", "f1=10", "--partition", "f1=20", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local r = cjson.decode(out)
    assert.is_true(r.dry_run)
    assert.equals(2, #r.partitions)
    assert.equals(3, r.files)
    assert.equals(cjson.null, r.snapshot_id)
    assert.equals(fp, H.fingerprint(path))
    H.rmdir(dir)
  end)

  it("drops several partitions in one snapshot", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local nsnap = #py_snapshots(path)
    local _, err, rc = drop({path, "--partition", "f1=10", "--partition", "f1=20"})
    assert.equals(0, rc, err)
    assert.equals(nsnap + 1, #py_snapshots(path))
    assert.equals(0, #py_files(path))
    H.rmdir(dir)
  end)

  it("a partial spec on a two-key table selects every matching partition", function()
    local path, dir = H.copy_table(H.fixture(PK2))
    local t = assert(paimon.open(path))
    assert.same({"key0", "key1"}, t:schema().partition_keys)
    t:close()
    local fp = H.fingerprint(path)
    -- the plan: key1=1 matches key0=0/key1=1 and key0=1/key1=1
    local out, err, rc = drop({path, "--partition", "key1=1", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local r = cjson.decode(out)
    assert.equals(2, #r.partitions)
    assert.equals("key0=0/key1=1/", r.partitions[1].path)
    assert.equals("key0=1/key1=1/", r.partitions[2].path)
    assert.equals(#py_files(path), r.files)
    assert.equals(fp, H.fingerprint(path))
    -- the partial spec drops both partitions and both deletion-vector files
    out, err, rc = drop({path, "--partition", "key1=1", "--json"})
    assert.equals(0, rc, err)
    assert.equals(2, #cjson.decode(out).partitions)
    assert.equals(0, #py_files(path))
    local ix = index_check({"drop", path, "6", "7", "key1=1"})
    assert.equals(2, #ix.dropped)
    assert.equals(0, ix.new)
    H.rmdir(dir)
  end)

  it("concurrent drops of the same partition end consistent", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local nsnap = #py_snapshots(path)
    local cmd = {}
    for i = 1, 4 do
      cmd[#cmd + 1] = "(" .. H.sh_quote(H.cli) .. " drop_partition.lua " .. H.sh_quote(path) ..
                      " --partition f1=10 >/dev/null 2>&1; echo $? >" .. H.sh_quote(dir .. "/rc" .. i) .. ") &"
    end
    H.run(table.concat(cmd, "\n") .. "\nwait")
    for i = 1, 4 do
      local code = tonumber((H.read_file(dir .. "/rc" .. i):gsub("%s", "")))
      assert.is_true(code == 0 or code == 3, "exit code " .. tostring(code))
    end
    local snaps = py_snapshots(path)
    assert.equals(nsnap + 1, #snaps)       -- exactly one drop happened
    assert.equals("OVERWRITE", snaps[#snaps].commit_kind)
    for _, f in ipairs(py_files(path)) do assert.equals(20, f.partition.f1) end
    H.rmdir(dir)
  end)

  it("drops on a branch without touching main", function()
    local path, dir = H.copy_table(H.fixture("cpp-parquet-append_table_with_append_pt_branch"))
    local main_before = H.pyref(path, "files")
    local out, err, rc = H.pyref(path, "files", {"--branch", "test"})
    assert.equals(0, rc, err)
    assert.is_true(#cjson.decode(out) > 0)
    out, err, rc = drop({path, "--branch", "test", "--partition", "pt=2", "--json"})
    assert.equals(0, rc, err)
    assert.is_true(cjson.decode(out).files > 0)
    out, err, rc = H.pyref(path, "files", {"--branch", "test"})
    assert.equals(0, rc, err)
    assert.equals(0, #cjson.decode(out))
    assert.equals(main_before, (H.pyref(path, "files")))
    H.rmdir(dir)
  end)

  it("rejects bad input", function()
    local path = H.fixture(COMPLEX)
    local _, err, rc = drop({path, "--partition", "nope=1"})
    assert.equals(2, rc)
    assert.matches("'nope' is not a partition column", err, 1, true)
    for _, bad in ipairs({"f1", "=10", "f1=", "f1=1,f1=2"}) do
      _, err, rc = drop({path, "--partition", bad})
      assert.equals(2, rc, bad .. ": " .. err)
    end
    _, _, rc = drop({path})
    assert.equals(2, rc)
    _, err, rc = drop({"/nonexistent/table", "--partition", "f1=10"})
    assert.equals(1, rc)
    assert.matches("no such table", err, 1, true)
    local out
    out, _, rc = drop({"--help"})
    assert.equals(0, rc)
    assert.matches("--partition", out, 1, true)
  end)
end)

describe("Table:drop_partitions", function()
  it("returns the plan or the commit, and raises on misuse", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local t = assert(paimon.open(path))
    local r = assert(t:drop_partitions({{f1 = 20}}, {dry_run = true}))
    assert.is_true(r.dry_run)
    assert.equals(2, r.files)
    assert.is_nil(r.snapshot_id)
    assert.equals(20, r.partitions[1].partition.f1)
    assert.equals(2, r.partitions[1].files)
    assert.equals(1, assert(t:drop_partitions({f1 = 10.0}, {dry_run = true})).files)
    assert.equals(3, assert(t:drop_partitions({{f1 = "10"}, {f1 = 20}}, {dry_run = true})).files)
    -- a single spec table works too, numbers match the rendered value
    r = assert(t:drop_partitions({f1 = 10}))
    assert.equals(5, r.snapshot_id)
    assert.equals(1, r.files)
    assert.has_error(function() t:drop_partitions({{nope = 1}}) end)
    assert.has_error(function() t:drop_partitions({{}}) end)
    local entries = assert(t:partition_entries())
    assert.equals(1, #entries)
    assert.equals("f1=20/", entries[1].path)
    assert.equals(2, entries[1].file_count)
    t:close()
    H.rmdir(dir)
  end)
end)

describe("expire_partitions.lua", function()
  it("update-time expires partitions whose newest file is old enough", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))   -- files written in 2025
    local fp = H.fingerprint(path)
    local out, err, rc = expire({path, "--expiration-time", "1d", "--strategy", "update-time",
                                 "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local r = cjson.decode(out)
    assert.equals(2, r.candidates)
    assert.equals(2, #r.partitions)
    assert.equals(fp, H.fingerprint(path))
    out, err, rc = expire({path, "--expiration-time", "1d", "--strategy", "update-time", "--max-expires", "1",
                           "--json"})
    assert.equals(0, rc, err)
    r = cjson.decode(out)
    assert.is_true(r.limited)
    assert.equals(1, #r.partitions)
    assert.equals("f1=10/", r.partitions[1].path)
    for _, f in ipairs(py_files(path)) do assert.equals(20, f.partition.f1) end
    -- far in the future of the files: nothing
    out, err, rc = expire({path, "--expiration-time", "3650d", "--strategy", "update-time", "--json"})
    assert.equals(0, rc, err)
    assert.equals(0, cjson.decode(out).files)
    H.rmdir(dir)
  end)

  it("values-time reports values that are not times and expires nothing", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local fp = H.fingerprint(path)
    local out, err, rc = expire({path, "--expiration-time", "1d", "--json"})
    assert.equals(0, rc, err)
    local r = cjson.decode(out)
    assert.equals(2, r.unparseable)
    assert.equals(2, #r.failures)
    assert.equals("unparseable", r.failures[1].kind)
    assert.matches("not expiring f1=10/", err, 1, true)
    assert.equals(0, r.files)
    assert.equals(fp, H.fingerprint(path))
    H.rmdir(dir)
  end)

  it("takes a policy file", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local pol = dir .. "/pol.lua"
    H.write_file(pol, "return function(p, ctx) return p.partition.f1 == 20 end\n")
    local out, err, rc = expire({path, "--expiration-time", "1d", "--policy", pol, "--json"})
    assert.equals(0, rc, err)
    local r = cjson.decode(out)
    assert.equals(1, #r.partitions)
    assert.equals("f1=20/", r.partitions[1].path)
    for _, f in ipairs(py_files(path)) do assert.equals(10, f.partition.f1) end
    H.rmdir(dir)
  end)

  it("rejects bad input", function()
    local path = H.fixture(COMPLEX)
    local cases = {
      {{path}, "no expiration time"},
      {{path, "--expiration-time", "soon"}, "expiration"},
      {{path, "--expiration-time", "1d", "--strategy", "sometimes"}, "strategy"},
      {{path, "--expiration-time", "1d", "--timestamp-formatter", "yyyy-MMM-dd"}, "MMM"},
      {{path, "--expiration-time", "1d", "--max-expires", "0"}, "max"},
      {{path, "--expiration-time", "1d", "--policy", "/nonexistent.lua"}, "policy"},
    }
    for _, c in ipairs(cases) do
      local _, err, rc = expire(c[1])
      assert.equals(2, rc, table.concat(c[1], " ") .. ": " .. err)
      assert.matches(c[2], err, 1, true)
    end
    local _, err, rc = expire({"/nonexistent/table", "--expiration-time", "1d"})
    assert.equals(1, rc)
    assert.matches("no such table", err, 1, true)
  end)
end)

describe("Table:expire_partitions", function()
  it("applies the default rules or a policy function", function()
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    local t = assert(paimon.open(path))
    local r = assert(t:expire_partitions{expiration_time = "1d", strategy = "update-time", dry_run = true})
    assert.equals(2, r.candidates)
    assert.equals(2, #r.partitions)
    r = assert(t:expire_partitions{expiration_time = 1000, policy = function(p) return p.path == "f1=10/" end})
    assert.equals(1, #r.partitions)
    assert.equals(5, r.snapshot_id)
    -- an unparseable answer is reported, never expired
    r = assert(t:expire_partitions{expiration_time = "1d", policy = function() return nil, "no idea" end})
    assert.equals(1, r.unparseable)
    assert.equals("no idea", r.failures[1].reason)
    assert.equals(0, r.files)
    assert.has_error(function() t:expire_partitions{} end)
    t:close()
    H.rmdir(dir)
  end)

  it("runs from paimon.partition_expire; the policy folder holds the policy, found by name too", function()
    local rules = require "paimon.policy.partition_expire"
    assert.is_nil(rules.run)
    assert.is_function(require("paimon.partition_expire").run)
    local path, dir = H.copy_table(H.fixture(COMPLEX))
    os.execute("mkdir -p " .. H.sh_quote(dir .. "/pol"))
    H.write_file(dir .. "/pol/only20.lua", "return {expired = function(p) return p.partition.f1 == 20 end}")
    local t = assert(paimon.open(path))
    local saved = paimon.policies_dir
    paimon.policies_dir = dir .. "/pol"
    local ok, r = pcall(t.expire_partitions, t, {expiration_time = "1d", dry_run = true, policy = "only20.lua"})
    paimon.policies_dir = saved
    assert.is_true(ok, tostring(r))
    assert.equals(1, #r.partitions)
    assert.equals("f1=20/", r.partitions[1].path)
    -- the bundled default is itself a policy file: {expired = f}
    r = assert(t:expire_partitions{expiration_time = "1d", dry_run = true, strategy = "update-time",
                                   policy = H.root .. "/lua/paimon/policy/partition_expire.lua"})
    assert.equals(2, r.candidates)
    t:close()
    H.rmdir(dir)
  end)

  it("parses partition times as Java's PartitionTimeExtractor", function()
    local P = require "paimon.policy.partition_expire"
    local day = 86400000
    local jan1 = 20454 * day                  -- 2026-01-01
    assert.equals(jan1, P.parse_default("2026-01-01"))
    assert.equals(jan1, P.parse_default("2026-1-1"))
    assert.equals(jan1 + 3 * 3600000 + 4 * 60000 + 5500, P.parse_default("2026-1-1 3:4:5.5"))
    assert.is_nil(P.parse_default("2026-01-01 10:00"))
    assert.is_nil(P.parse_default("20260101"))
    assert.is_nil(P.parse_default("2026-13-01"))
    assert.equals(jan1 + 58 * day, P.parse_default("2026-02-30"))   -- SMART: last day of February
    assert.equals(jan1, P.parse_time("20260101", "yyyyMMdd"))
    assert.equals(jan1 + 12 * 3600000, P.parse_time("2026010112", "yyyyMMddHH"))
    assert.equals(jan1 + 10 * 3600000, P.parse_time("2026-01-01 10:00:00", "yyyy-MM-dd HH:mm:ss"))
    assert.is_nil(P.parse_time("2026-01-01", "yyyy-MM-dd HH:mm:ss"))
    assert.is_nil(P.parse_time("2026-1-01", "yyyy-MM-dd"))
    assert.equals("2026-01-01 10:00:00", P.substitute("$dt $hour:00:00", {"dt", "hour"}, {"2026-01-01", "10"}))
    local ctx = {strategy = "values-time", keys = {"dt", "hour"}, pattern = "$dt $hour:00:00",
                 expire_before = jan1 + 11 * 3600000, parse = P.parse_default}
    assert.is_true(P.expired({values = {"2026-01-01", "10"}}, ctx))
    assert.is_false(P.expired({values = {"2026-01-01", "11"}}, ctx))   -- not strictly before
    assert.is_nil(P.expired({values = {"2026-01-01", paimon.null}}, ctx))
  end)
end)

-- Primary-key tables with deletion vectors: the drop also removes the index
-- files of the dropped partitions from the index manifest (Java drops them
-- in the same OVERWRITE commit, paimon-format.md §7.8), checked against the
-- previous index manifest with python3-avro.
describe("dropping partitions with deletion-vector index files", function()
  local DV = "cpp-parquet-pk_table_scan_and_read_dv"           -- f1 = 10 (2 DV files), 20
  local EXT = "cpp-parquet-pk_dv_index_in_data_with_external"  -- f1 = 10 (2 DV files), 20; external paths

  -- expire every snapshot but the latest (retain-min 1, cut-off now)
  local function expire_all_but_latest(path)
    local maint = require "paimon.maint"
    local latest = latest_snapshot(path)
    while maint.now_ms() <= latest.commit_time do H.run("sleep 0.01") end
    local t = assert(paimon.open(path))
    local r, msg = t:expire_snapshots{retain_min = 1, older_than = maint.now_ms(), max_deletes = 100}
    t:close()
    assert(r, msg)
    local snaps = py_snapshots(path)
    assert.equals(1, #snaps)
    assert.equals(latest.snapshot_id, snaps[1].snapshot_id)
    return r
  end

  it("drops one partition of a two-key table and keeps the other's index file", function()
    local path, dir = H.copy_table(H.fixture(PK2))
    local before = py_files(path)
    local keep = 0
    for _, f in ipairs(before) do if f.partition.key0 == 0 then keep = keep + 1 end end
    assert.is_true(keep > 0 and keep < #before)
    local old = index_check({"files", path, "6"})
    assert.equals(2, #old)
    local out, err, rc = drop({path, "--partition", "key0=1", "--json"})
    assert.equals(0, rc, err)
    local r = cjson.decode(out)
    assert.equals(7, r.snapshot_id)
    assert.equals(1, #r.partitions)
    assert.equals("key0=1/key1=1/", r.partitions[1].path)
    local snap = latest_snapshot(path)
    assert.equals(7, snap.snapshot_id)
    assert.equals("OVERWRITE", snap.commit_kind)
    -- the new index manifest = the old one minus key0=1's entry
    local ix = index_check({"drop", path, "6", "7", "key0=1"})
    assert.same({"index-c93829f3-1a72-4d88-8401-70663ce46426-1"}, ix.dropped)
    assert.same({"index-c93829f3-1a72-4d88-8401-70663ce46426-0"}, ix.kept)
    assert.equals(1, ix.new)
    assert.is_false(ix.same_file)
    local after = py_files(path)
    assert.equals(keep, #after)
    for _, f in ipairs(after) do assert.equals(0, f.partition.key0) end
    -- nothing deleted from storage yet
    for _, f in ipairs(old) do assert.is_true(f.exists, f.path) end
    -- expiration keeps every file of the retained snapshot, drops the rest
    expire_all_but_latest(path)
    local kept = index_check({"files", path, "7"})
    assert.equals(1, #kept)
    for _, f in ipairs(kept) do assert.is_true(f.exists, f.path) end
    assert.is_false(H.exists(path .. "/index/index-c93829f3-1a72-4d88-8401-70663ce46426-1"))
    assert.is_false(H.exists(path .. "/index/index-84326ea4-5d74-40a2-8a08-9d43d29f657a-1"))
    for _, f in ipairs(py_files(path)) do assert.is_true(H.exists(path .. "/" .. f.file_path), f.file_path) end
    for _, f in ipairs(before) do
      if f.partition.key0 == 1 then assert.is_false(H.exists(path .. "/" .. f.file_path), f.file_path) end
    end
    assert.equals(keep, #py_files(path))
    H.rmdir(dir)
  end)

  it("reuses the index manifest when the dropped partition has no index file", function()
    local path, dir = H.copy_table(H.fixture(DV))
    local n20 = 0
    for _, f in ipairs(py_files(path)) do if f.partition.f1 == 20 then n20 = n20 + 1 end end
    assert.is_true(n20 > 0)
    local _, err, rc = drop({path, "--partition", "f1=20"})
    assert.equals(0, rc, err)
    local ix = index_check({"drop", path, "6", "7", "f1=20"})
    assert.is_true(ix.same_file)
    assert.equals(0, #ix.dropped)
    assert.equals(2, ix.new)
    -- then f1=10: both deletion-vector files go, the table is empty
    _, err, rc = drop({path, "--partition", "f1=10"})
    assert.equals(0, rc, err)
    ix = index_check({"drop", path, "7", "8", "f1=10"})
    assert.equals(2, #ix.dropped)
    assert.equals(0, ix.new)
    assert.is_false(ix.same_file)
    assert.equals("OVERWRITE", latest_snapshot(path).commit_kind)
    assert.equals(0, #py_files(path))
    for _, name in ipairs(ix.dropped) do assert.is_true(H.exists(path .. "/index/" .. name), name) end
    expire_all_but_latest(path)
    assert.equals(0, #index_check({"files", path, "8"}))
    for _, name in ipairs(ix.dropped) do assert.is_false(H.exists(path .. "/index/" .. name), name) end
    H.rmdir(dir)
  end)

  it("drops the global (btree) index files of the dropped partition", function()
    local path, dir = H.copy_table(H.fixture("cpp-parquet-append_with_btree_with_partition"))
    local _, err, rc = drop({path, "--partition", "pt=0"})
    assert.equals(0, rc, err)
    local ix = index_check({"drop", path, "3", "4", "pt=0"})
    assert.equals(16, #ix.dropped)
    assert.equals(16, ix.new)
    for _, f in ipairs(index_check({"files", path, "4"})) do
      assert.equals("pt=1/", f.partition_path)
      assert.equals("btree", f.index_type)
    end
    local files = py_files(path)
    assert.equals(1, #files)
    assert.equals(1, files[1].partition.pt)
    H.rmdir(dir)
  end)

  it("drops index files with external paths through Table:drop_partitions", function()
    local path, dir = H.copy_table(H.fixture(EXT))
    local t = assert(paimon.open(path))
    local r = assert(t:drop_partitions({f1 = "10"}))
    t:close()
    assert.equals(5, r.snapshot_id)
    assert.equals(1, #r.partitions)
    assert.equals("f1=10/", r.partitions[1].path)
    local ix = index_check({"drop", path, "4", "5", "f1=10"})
    assert.equals(2, #ix.dropped)
    assert.equals(0, ix.new)
    local files = py_files(path)
    assert.equals(1, #files)
    assert.equals(20, files[1].partition.f1)
    assert.equals("OVERWRITE", latest_snapshot(path).commit_kind)
    H.rmdir(dir)
  end)
end)
