-- The maintenance operations through the public C API (paimon.h) alone:
-- examples/c/table_maint, on temp copies of every Java fixture, returns the
-- result the Lua methods return on a second copy (same keys, same values),
-- and a real run leaves exactly the tree the scripts leave, checked with
-- the independent python3-avro walk; bad options name the option, exit 2
-- and change nothing.
local H = require "helper"
local paimon = require "paimon"
local maint = require "paimon.maint"

local ORC = "cpp-parquet-append_10-orc-manifests"
local MAINT = H.build .. "/examples/table_maint"

-- table_maint OP TABLE key=value ...: stdout, stderr, exit code
local function table_maint(op, path, kv)
  local parts = {H.sh_quote(MAINT), op, H.sh_quote(path)}
  for _, a in ipairs(kv or {}) do parts[#parts + 1] = H.sh_quote(a) end
  return H.run(table.concat(parts, " "))
end

-- A result comparable across copies: the copy's path replaced, durations
-- left out, lists of {path = ...} items in path order.
local function normalize(v, root)
  if type(v) == "string" then return (v:gsub(root:gsub("%p", "%%%0"), "COPY")) end
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do
    if k ~= "duration_ms" then out[k] = normalize(x, root) end
  end
  if #out > 0 and type(out[1]) == "table" and out[1].path then
    table.sort(out, function(a, b) return a.path < b.path end)
  end
  return out
end

local function snapshot_ids(path)
  local t = assert(paimon.open(path))
  local ids = assert(t:snapshot_ids())
  t:close()
  return ids
end

describe("table_maint (paimon.h) on every Java fixture", function()
  for _, fx in ipairs(H.fixture_tables()) do
    if fx.name == ORC then
      it("refuses " .. fx.name .. " (ORC manifests) naming the option, and changes nothing", function()
        local copy, dir = H.copy_table(fx.path)
        local before = H.tree(copy)
        for op, kv in pairs{expire = {"retain-min=1", "older-than=0s"}, orphans = {"older-than=0s", "allow-young-cutoff=true"}} do
          local _, err, rc = table_maint(op, copy, kv)
          assert.equals(1, rc)
          assert.matches("manifest.format", err, 1, true)
        end
        assert.equals(before, H.tree(copy))
        H.rmdir(dir)
      end)
    else
      it("expires " .. fx.name .. " as t:expire_snapshots does (dry run, then for real)", function()
        local a, dir_a = H.copy_table(fx.path)
        local b, dir_b = H.copy_table(fx.path)
        local now = maint.now_ms()
        -- dry run: the same result, key for key
        local out, err, rc = table_maint("expire", a, {"retain-min=1", "older-than-ms=" .. now, "now-ms=" .. now,
                                                       "max-deletes=1000", "threads=2", "dry-run=true"})
        assert.equals(0, rc, err)
        local got = H.decode(out)
        local t = assert(paimon.open(b))
        local want = assert(t:expire_snapshots{retain_min = 1, older_than = now, now = now, max_deletes = 1000,
                                               threads = 2, dry_run = true})
        t:close()
        assert.same(normalize(want, b), normalize(got, a))
        local ids = snapshot_ids(a)
        assert.equals(#ids - 1, got.expired)
        assert.equals(#got.paths, got.files)
        -- for real: the same files go as with expire.lua, and what the
        -- latest snapshot, tags and branches use (python3-avro) is all there
        out, err, rc = table_maint("expire", a, {"retain-min=1", "older-than=0s", "max-deletes=1000"})
        assert.equals(0, rc, err)
        local real = H.decode(out)
        assert.equals(got.expired, real.expired)
        assert.same(got.deleted, real.deleted)
        local _, err2, rc2 = H.script("expire.lua", {b, "--retain-min", "1", "--older-than", "0s",
                                                    "--max-deletes", "1000", "--json"})
        assert.equals(0, rc2, err2)
        assert.equals(H.tree(b), H.tree(a))
        local used = H.used_paths(H.refs(a), a, true)
        for p in pairs(used) do assert.is_true(H.exists(p), "used file deleted: " .. p) end
        H.rmdir(dir_a)
        H.rmdir(dir_b)
      end)

      it("cleans orphans and verifies " .. fx.name .. " as the Lua methods do", function()
        local a, dir_a = H.copy_table(fx.path)
        local b, dir_b = H.copy_table(fx.path)
        -- the cut-off is now: let the clock pass the copies' mtimes (a file
        -- written in the same millisecond is not older than it)
        local copied = maint.now_ms()
        while maint.now_ms() <= copied + 1 do end
        local now = maint.now_ms()
        local out, err, rc = table_maint("orphans", a, {"older-than-ms=" .. now, "now-ms=" .. now, "dry-run=true",
                                                       "allow-young-cutoff=true"})
        assert.equals(0, rc, err)
        local t = assert(paimon.open(b))
        local want = assert(t:remove_orphan_files{older_than = now, now = now, dry_run = true, threads = 4,
                                                    allow_young_cutoff = true})
        assert.same(normalize(want, b), normalize(H.decode(out), a))
        -- verify: the same report (read-only), the same exit code as verify.lua
        local vout, verr, vrc = table_maint("verify", a, {"all-snapshots=true"})
        local vwant = assert(t:verify{all_snapshots = true})
        t:close()
        local _, _, lrc = H.script("verify.lua", {b, "--all-snapshots"})
        assert.equals(lrc, vrc, verr)
        assert.same(normalize(vwant, b), normalize(H.decode(vout), a))
        -- for real: the same tree as remove_orphan_files.lua leaves
        out, err, rc = table_maint("orphans", a, {"older-than=0s", "allow-young-cutoff=true"})
        assert.equals(0, rc, err)
        local _, err2, rc2 = H.script("remove_orphan_files.lua", {b, "--older-than", "0s", "--allow-young-cutoff"})
        assert.equals(0, rc2, err2)
        assert.equals(H.tree(b), H.tree(a))
        H.rmdir(dir_a)
        H.rmdir(dir_b)
      end)
    end
  end
end)

describe("table_maint drop (paimon.h)", function()
  local PARTED = "cpp-parquet-pk_btree_partitioned_e2e"

  local function live_files(path)
    local rows = H.inspect_json(path, "files")
    local names = {}
    for _, f in ipairs(rows) do names[#names + 1] = f.partition.pt .. "/" .. f.file_name end
    table.sort(names)
    return names
  end

  it("drops a partition as drop_partition.lua does: the same live files afterwards", function()
    local a, dir_a = H.copy_table(H.fixture(PARTED))
    local b, dir_b = H.copy_table(H.fixture(PARTED))
    local before = live_files(a)
    local out, err, rc = table_maint("drop", a, {"partition=pt=1"})
    assert.equals(0, rc, err)
    local got = H.decode(out)
    local lout, lerr, lrc = H.script("drop_partition.lua", {b, "--partition", "pt=1", "--json"})
    assert.equals(0, lrc, lerr)
    local want = H.decode(lout)
    for _, k in ipairs{"files", "rows", "bytes", "index_files", "commits", "base_snapshot_id", "snapshot_id"} do
      assert.equals(want[k], got[k], k)
    end
    assert.equals(1, #got.partitions)
    assert.equals(want.partitions[1].path, got.partitions[1].path)
    assert.same(live_files(b), live_files(a))
    local left = live_files(a)
    for _, f in ipairs(left) do assert.is_nil(f:match("^1/"), "pt=1 file still live: " .. f) end
    assert.equals(#before - got.files, #left)
    assert.is_true(got.files > 0)
    H.rmdir(dir_a)
    H.rmdir(dir_b)
  end)

  it("returns the result t:drop_partitions returns, key for key (Lua adds typed partition values)", function()
    local a, dir_a = H.copy_table(H.fixture(PARTED))
    local b, dir_b = H.copy_table(H.fixture(PARTED))
    local out, err, rc = table_maint("drop", a, {"partition=pt=1", "dry-run=true"})
    assert.equals(0, rc, err)
    local got = H.decode(out)
    local t = assert(paimon.open(b))
    local want = assert(t:drop_partitions({pt = 1}, {dry_run = true}))
    t:close()
    assert.equals(1, #want.partitions)
    for _, p in ipairs(want.partitions) do
      assert.is_table(p.partition)
      assert.is_string(p.binary_row)
      p.partition, p.values, p.binary_row = nil, nil, nil   -- Lua values: no JSON form
    end
    assert.same(normalize(want, b), normalize(got, a))
    assert.same({"pt"}, got.partition_keys)
    assert.same({}, got.failures)
    H.rmdir(dir_a)
    H.rmdir(dir_b)
  end)

  it("a dry run commits nothing; a partition column the table lacks is a usage error", function()
    local a, dir_a = H.copy_table(H.fixture(PARTED))
    local before = H.tree(a)
    local out, err, rc = table_maint("drop", a, {"partition=pt=2", "dry-run=true"})
    assert.equals(0, rc, err)
    assert.is_true(H.decode(out).files > 0)
    assert.equals(before, H.tree(a))
    _, err, rc = table_maint("drop", a, {"partition=nope=2"})
    assert.equals(2, rc)
    assert.matches("'nope' is not a partition column", err, 1, true)
    _, err, rc = table_maint("drop", a, {})
    assert.equals(2, rc)
    assert.matches("no 'partition' option", err, 1, true)
    _, err, rc = table_maint("drop", a, {"partition=pt="})
    assert.equals(2, rc)
    assert.matches("no value for 'pt'", err, 1, true)
    assert.equals(before, H.tree(a))
    H.rmdir(dir_a)
  end)

  it("splits a spec only where a partition column follows the comma (values may hold commas)", function()
    local dir = H.tmpdir()
    local path = dir .. "/t"
    local _, err, rc = H.script("create_table.lua", {path, "--field", "a:STRING", "--field", "b:INT",
                                                     "--field", "v:BIGINT", "--partition", "a",
                                                     "--partition", "b", "--option", "bucket=-1",
                                                     "--option", "file.format=avro"})
    assert.equals(0, rc, err)
    H.write_file(dir .. "/rows.jsonl", '{"a":"x,b=1","b":2,"v":1}\n{"a":"x","b":2,"v":2}\n{"a":"x,y","b":3,"v":3}\n')
    _, err, rc = H.script("write.lua", {path, "--input", dir .. "/rows.jsonl"})
    assert.equals(0, rc, err)
    -- "a=x,b=1,b=2": a is "x,b=1"? No: ",b=" starts the column b, so a = "x",
    -- then b given twice -- refused, nothing committed
    local out
    out, err, rc = table_maint("drop", path, {"partition=a=x,b=1,b=2"})
    assert.equals(2, rc)
    assert.matches("column 'b' given twice", err, 1, true)
    -- "a=x,y,b=3": a = "x,y" (",y" is no column), b = 3
    out, err, rc = table_maint("drop", path, {"partition=a=x,y,b=3", "dry-run=true"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    assert.equals(1, #r.partitions)
    assert.equals("a=x,y/b=3/", r.partitions[1].path)
    assert.equals(1, r.rows)
    -- two specs in one snapshot
    out, err, rc = table_maint("drop", path, {"partition=a=x,b=2", "partition=a=x,y,b=3"})
    assert.equals(0, rc, err)
    r = H.decode(out)
    assert.equals(2, #r.partitions)
    assert.equals(2, r.rows)
    assert.equals(1, r.commits)
    local rows = H.inspect_json(path, "files")
    assert.equals(1, #rows)
    assert.equals("x,b=1", rows[1].partition.a)
    H.rmdir(dir)
  end)
end)

describe("table_maint options (paimon.h)", function()
  local SMALL = "cpp-parquet-append_with_bitmap"

  it("an unknown, malformed or out-of-range option names itself, exits 2 and deletes nothing", function()
    local a, dir = H.copy_table(H.fixture(SMALL))
    local before = H.tree(a)
    local cases = {
      {"expire", {"retain-mim=1"}, "unknown option 'retain-mim'"},
      {"expire", {"retain-min=0"}, "option 'retain-min' must be between 1 and"},
      {"expire", {"retain-min=1x"}, "option 'retain-min' must be an integer, got '1x'"},
      {"expire", {"retain-min="}, "option 'retain-min' must be an integer"},
      {"expire", {"max-deletes=99999999999"}, "option 'max-deletes' must be between"},
      {"expire", {"dry-run=yes"}, "option 'dry-run' must be true or false, got 'yes'"},
      {"expire", {"older-than=7 fortnights"}, "option 'older-than'"},
      {"expire", {"older-than=1h", "older-than-ms=5"}, "exclude each other"},
      {"expire", {"threads=0"}, "option 'threads' must be between 1 and 256"},
      {"orphans", {"retain-min=1"}, "remove_orphan_files: unknown option 'retain-min'"},
      {"orphans", {"older-than-ms=" .. (maint.now_ms() + 86400000)}, "is in the future"},
      {"verify", {"dry-run=true"}, "verify: unknown option 'dry-run'"},
      {"drop", {"partition=pt=1", "older-than=1h"}, "drop_partitions: unknown option 'older-than'"},
    }
    for _, c in ipairs(cases) do
      local out, err, rc = table_maint(c[1], a, c[2])
      assert.equals(2, rc, c[1] .. " " .. table.concat(c[2], " ") .. ": " .. err)
      assert.matches(c[3], err, 1, true)
      assert.equals("", out)
    end
    assert.equals(before, H.tree(a))
    H.rmdir(dir)
  end)

  it("a missing table fails with the path named (exit 1)", function()
    local _, err, rc = table_maint("expire", "/nonexistent/paimon/table", {})
    assert.equals(1, rc)
    assert.matches("/nonexistent/paimon/table", err, 1, true)
  end)
end)
