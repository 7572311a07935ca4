-- Every Java-written fixture table is read by paimon-lua and compared with
-- the independent python3-avro reader (spec/support/pyref.py).
local H = require "helper"
local paimon = require "paimon"
local cjson = H.cjson

local ORC = "cpp-parquet-append_10-orc-manifests"

-- ours: inspect.lua --json; theirs: the independent reader pyref.py
local ours, theirs = H.inspect_json, H.pyref_json

-- A comparable line per row; cjson decodes big integers lossily, so the
-- raw JSON text is compared for commit identifiers separately.
local function norm(v)
  if type(v) == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. norm(v[k] == nil and v[tonumber(k)] or v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  elseif v == cjson.null then
    return "null"
  elseif type(v) == "number" and v == math.floor(v) then
    return string.format("%d", v)
  end
  return tostring(v)
end

local function rows_by(rows, cols, key)
  local out = {}
  for _, r in ipairs(rows) do
    local sub = {}
    for _, c in ipairs(cols) do sub[c] = r[c] end
    out[#out + 1] = norm(sub)
  end
  table.sort(out)
  return out
end

local FILE_COLS = {"partition", "bucket", "file_path", "file_name", "file_format", "schema_id", "level",
                   "record_count", "file_size_in_bytes", "min_sequence_number", "max_sequence_number",
                   "creation_time"}
local SNAP_COLS = {"snapshot_id", "schema_id", "commit_user", "commit_kind", "commit_time",
                   "base_manifest_list", "delta_manifest_list", "changelog_manifest_list",
                   "total_record_count", "delta_record_count", "changelog_record_count"}
local PART_COLS = {"partition", "record_count", "file_size_in_bytes", "file_count", "last_update_time"}
local MAN_COLS = {"file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id"}

local function compare_table(path, extra)
  extra = extra or {}
  local a, b = ours(path, "snapshots", extra), theirs(path, "snapshots", extra)
  assert.are.same(rows_by(b, SNAP_COLS), rows_by(a, SNAP_COLS))
  local ids = {}
  for _, s in ipairs(b) do ids[#ids + 1] = s.snapshot_id end
  for _, id in ipairs(ids) do
    local ex = {"--snapshot", string.format("%d", id)}
    for _, x in ipairs(extra) do ex[#ex + 1] = x end
    assert.are.same(rows_by(theirs(path, "files", ex), FILE_COLS), rows_by(ours(path, "files", ex), FILE_COLS))
    assert.are.same(rows_by(theirs(path, "manifests", ex), MAN_COLS), rows_by(ours(path, "manifests", ex), MAN_COLS))
    assert.are.same(rows_by(theirs(path, "partitions", ex), PART_COLS), rows_by(ours(path, "partitions", ex), PART_COLS))
  end
  return #ids
end

describe("reading Java-written tables", function()
  local tables = H.fixture_tables()

  it("finds the fixture tables", function()
    assert.is_true(#tables >= 10, "expected the fixture tables under " .. H.fixtures)
  end)

  for _, fx in ipairs(tables) do
    if fx.name ~= ORC then
      it(fx.name .. ": snapshots, files, manifests and partitions match python3-avro", function()
        local n = compare_table(fx.path)
        assert.is_true(n >= 1)
      end)

      it(fx.name .. ": tags and branches match python3-avro", function()
        local t = assert(paimon.open(fx.path))
        for _, tag in ipairs(assert(t:tags())) do
          local ex = {"--tag", tag.name}
          assert.are.same(rows_by(theirs(fx.path, "files", ex), FILE_COLS), rows_by(ours(fx.path, "files", ex), FILE_COLS))
        end
        for _, b in ipairs(assert(t:branches())) do
          compare_table(fx.path, {"--branch", b})
        end
        t:close()
      end)

      it(fx.name .. ": every live file of every snapshot exists on disk", function()
        local t = assert(paimon.open(fx.path))
        for s in t:snapshots() do
          for f in assert(s:files()) do
            if not f.file.external_path then
              local fh = io.open(fx.path .. "/" .. f.file_path, "rb")
              assert.is_not_nil(fh, "missing " .. f.file_path .. " of snapshot " .. s.id)
              fh:close()
            end
          end
        end
        t:close()
      end)
    end
  end

  it("the bundled sample table (written by our own Avro writer) matches python3-avro", function()
    local sample = H.root .. "/examples/sample/warehouse/demo.db/orders"
    assert.equals(5, compare_table(sample))
    local ex = {"--tag", "nightly"}
    local tagged = ours(sample, "files", ex)
    assert.is_true(#tagged > 0)
    assert.are.same(rows_by(theirs(sample, "files", ex), FILE_COLS), rows_by(tagged, FILE_COLS))
  end)

  it("refuses ORC manifests with an error naming manifest.format", function()
    local path = H.fixture(ORC)
    local t = assert(paimon.open(path))
    local s = assert(t:latest_snapshot())
    local it_, msg, code = s:files()
    assert.is_nil(it_)
    assert.matches("manifest.format=orc", msg, 1, true)
    assert.equals("unsupported", code)
    local _, err, rc = H.paimon_lua({"inspect.lua", path, "files"})
    assert.equals(1, rc)
    assert.matches("manifest.format=orc", err, 1, true)
  end)
end)
