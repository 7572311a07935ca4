-- Table creation, the Avro append writer, commits and reading rows back,
-- checked against the independent python3-avro reader.
local H = require "helper"
local paimon = require "paimon"
local core = require "paimon.core"
local json = require "paimon.json"
local cjson = require "cjson"

local create_table = paimon.create_table or core.create_table
local MAP_FIXTURE = "cpp-avro-append_with_multiple_map"

local COLUMNS = {
  {name = "id", type = "BIGINT NOT NULL"},
  {name = "i", type = "INT"},
  {name = "s", type = "STRING"},
  {name = "d", type = "DOUBLE"},
  {name = "b", type = "BOOLEAN"},
  {name = "m", type = "DECIMAL(10, 2)"},
  {name = "dt", type = "DATE"},
  {name = "ts", type = "TIMESTAMP(3)"},
  {name = "p", type = "STRING"},
}

local function rows_a()
  return {
    {id = 1, i = 10, s = "hello", d = 1.5, b = true, m = "12.34", dt = "2024-01-02", ts = "2024-01-02 03:04:05.678", p = "a"},
    {id = 2, i = paimon.null, s = "a string longer than sixteen chars", d = -2.25, b = false, m = "-0.01",
     dt = "1970-01-01", ts = "1969-12-31 23:59:59.999", p = "a"},
    {id = 3, p = "b"},
    {id = 4, i = -5, s = "", d = 0, b = true, m = 7, dt = "2000-02-29", ts = "2000-02-29 00:00:00", p = "b"},
  }
end

-- what snapshot:read returns for a written row
local function expected(row)
  local out = {}
  for _, c in ipairs(COLUMNS) do
    local v = row[c.name]
    if v == nil then v = paimon.null end
    if c.name == "m" and v ~= paimon.null then
      v = tostring(v)
      if not v:find("%.") then v = v .. ".00" end
    elseif c.name == "ts" and v ~= paimon.null and not v:find("%.") then
      v = v .. ".000"
    elseif c.name == "ts" and v ~= paimon.null then
      v = v
    end
    out[c.name] = v
  end
  return out
end

local function sorted_rows(rows)
  table.sort(rows, function(a, b) return a.id < b.id end)
  return rows
end

local function read_all(s, filter)
  local out = {}
  for row in assert(s:read(filter)) do out[#out + 1] = row end
  return sorted_rows(out)
end

local function read_all_any(t)
  local out = {}
  for row in assert(assert(t:latest_snapshot()):read()) do out[#out + 1] = row end
  return out
end

local function new_table(dir, options, partition_keys)
  local opts = {["file.format"] = "avro"}
  for k, v in pairs(options or {}) do opts[k] = v end
  return assert(create_table(dir .. "/db.db/t", {fields = COLUMNS, partition_keys = partition_keys or {"p"},
                                                  options = opts}))
end

local function write_commit(t, rows, user)
  local w = assert(t:new_write{})
  for _, r in ipairs(rows) do w:write(r) end
  local msgs = assert(w:prepare_commit())
  local c = t:new_commit{commit_user = user}
  local id, committed = c:commit(msgs)
  assert(id, committed)
  w:close()
  return id, msgs, c
end

-- python3-avro: the rows of every .avro data file below dir, normalized
local PY_ROWS = [[
import sys, json, glob, warnings, datetime, decimal
warnings.simplefilter("ignore")
import avro.datafile, avro.io
def norm(v):
    if isinstance(v, dict): return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list): return [norm(x) for x in v]
    if isinstance(v, bytes): return v.hex()
    if isinstance(v, decimal.Decimal): return str(v)
    if isinstance(v, datetime.datetime): return v.strftime("%Y-%m-%d %H:%M:%S.") + "%03d" % (v.microsecond // 1000)
    if isinstance(v, datetime.date): return v.isoformat()
    return v
out = []
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        for r in avro.datafile.DataFileReader(f, avro.io.DatumReader()):
            out.append(norm(r))
print(json.dumps(out))
]]

local function python_rows(paths)
  local f = os.tmpname()
  H.write_file(f, PY_ROWS)
  local cmd = "/usr/bin/python3 " .. H.sh_quote(f)
  for _, p in ipairs(paths) do cmd = cmd .. " " .. H.sh_quote(p) end
  local out, err, code = H.run(cmd)
  os.remove(f)
  assert(code == 0, err)
  return cjson.decode(out)
end

local function live_paths(t, s)
  local paths = {}
  for f in assert(s:files()) do paths[#paths + 1] = t:path() .. "/" .. f.file_path end
  return paths
end

local function normalize_files(list)
  local out = {}
  for _, f in ipairs(list) do
    out[#out + 1] = string.format("%s|%s|%d|%d|%d|%d|%d|%d", f.file_path, cjson.encode(f.partition), f.bucket,
                                  f.record_count, f.file_size_in_bytes, f.min_sequence_number,
                                  f.max_sequence_number, f.schema_id)
  end
  table.sort(out)
  return out
end

describe("create_table", function()
  it("writes schema-0 with Java's field names, ids and types", function()
    local dir = H.tmpdir()
    local t = assert(create_table(dir .. "/t", {
      fields = {{name = "k", type = "BIGINT"}, {name = "r", type = "ROW<x INT, y STRING>"},
                {name = "v", type = "DECIMAL(38, 10)", description = "a value"}, {name = "p", type = "DATE"}},
      partition_keys = {"p"}, primary_keys = {"p", "k"},
      options = {bucket = 4, ["file.format"] = "avro", ["manifest.format"] = "avro"}, comment = "demo"}))
    assert.equals("paimon.Table", getmetatable(t).__name)
    local text = H.read_file(dir .. "/t/schema/schema-0")
    assert.is_nil(text:find("\n$"))
    local j = cjson.decode(text)
    assert.equals(3, j.version)
    assert.equals(0, j.id)
    assert.equals(5, j.highestFieldId)
    assert.same({"p"}, j.partitionKeys)
    assert.same({"p", "k"}, j.primaryKeys)
    assert.equals("BIGINT NOT NULL", j.fields[1].type)     -- primary key: NOT NULL
    assert.equals("ROW", j.fields[2].type.type)
    assert.equals(2, j.fields[2].type.fields[1].id)
    assert.equals("y", j.fields[2].type.fields[2].name)
    assert.equals(4, j.fields[3].id)
    assert.equals(5, j.fields[4].id)
    assert.equals("a value", j.fields[3].description)
    assert.equals("DATE NOT NULL", j.fields[4].type)
    assert.equals("4", j.options.bucket)
    assert.equals("demo", j.comment)
    assert.is_number(j.timeMillis)
    -- Java's HashMap order for these three keys
    local a, b, c = text:find('"bucket"'), text:find('"manifest.format"'), text:find('"file.format"')
    assert.is_true(a < b and b < c)
    -- the key order of the whole file is Java's
    local keys = {}
    for k in text:gmatch('\n  "([%w]+)" :') do keys[#keys + 1] = k end
    assert.same({"version", "id", "fields", "highestFieldId", "partitionKeys", "primaryKeys", "options",
                 "comment", "timeMillis"}, keys)
    -- and it reads back through the schema reader
    assert.equals("DECIMAL(38, 10)", t:schema().fields[3].type)
    t:close()
    H.rmdir(dir)
  end)

  it("refuses an existing table and invalid specs", function()
    local dir = H.tmpdir()
    assert(create_table(dir .. "/t", {fields = {{name = "a", type = "INT"}}})):close()
    local t, msg, code = create_table(dir .. "/t", {fields = {{name = "a", type = "INT"}}})
    assert.is_nil(t)
    assert.equals("exists", code)
    assert.matches("already exists", msg)
    assert.has_error(function() create_table(dir .. "/u", {fields = {{name = "a", type = "NOPE"}}}) end)
    assert.has_error(function() create_table(dir .. "/u", {fields = {{name = "a", type = "INT"}}, partition_keys = {"zz"}}) end)
    assert.has_error(function() create_table(dir .. "/u", {fields = {{name = "a", type = "INT"}, {name = "a", type = "INT"}}}) end)
    H.rmdir(dir)
  end)
end)

describe("append writer", function()
  it("writes Avro data files that read back identically, through us and python3-avro", function()
    local dir = H.tmpdir()
    local t = new_table(dir)
    local id1 = write_commit(t, rows_a(), "spec-user")
    assert.equals(1, id1)
    local id2 = write_commit(t, {{id = 5, s = "second", p = "c", m = "99999999.99"}}, "spec-user")
    assert.equals(2, id2)
    local want = {}
    for _, r in ipairs(rows_a()) do want[#want + 1] = expected(r) end
    local s1 = assert(t:snapshot(1))
    assert.same(want, read_all(s1))
    want[#want + 1] = expected({id = 5, s = "second", p = "c", m = "99999999.99"})
    local s2 = assert(t:snapshot(2))
    assert.same(want, read_all(s2))
    assert.same({expected(rows_a()[3]), expected(rows_a()[4])}, read_all(s2, {partition = {p = "b"}}))
    -- python3-avro reads the same rows from the data files
    local py = python_rows(live_paths(t, s2))
    for _, r in ipairs(py) do
      for k, v in pairs(r) do if v == cjson.null then r[k] = paimon.null end end
    end
    sorted_rows(py)
    assert.equals(#want, #py)
    for i, r in ipairs(py) do
      for _, c in ipairs(COLUMNS) do
        local a, b = want[i][c.name], r[c.name]
        if type(a) == "number" then assert.is_true(math.abs(a - b) < 1e-12, c.name)
        else assert.equals(a, b, c.name .. " of row " .. i) end
      end
    end
    t:close()
    H.rmdir(dir)
  end)

  it("writes metadata the python reference reader agrees with", function()
    local dir = H.tmpdir()
    local t = new_table(dir)
    write_commit(t, rows_a())
    write_commit(t, {{id = 9, p = "a"}})
    local path = t:path()
    for _, sid in ipairs({1, 2}) do
      local py, err, code = H.pyref(path, "files", {"--snapshot", tostring(sid)})
      assert.equals(0, code, err)
      assert.same(normalize_files(cjson.decode(py)), normalize_files(H.inspect_json(path, "files", {"--snapshot", tostring(sid)})))
    end
    -- every manifest-family file decodes record by record with python3-avro
    local names = {}
    for s in t:snapshots() do
      for _, list in ipairs({s.base_manifest_list, s.delta_manifest_list}) do
        local lp = path .. "/manifest/" .. list
        local out, err, code = H.run("/usr/bin/python3 " .. H.sh_quote(H.spec_dir .. "support/manifest_compare.py") ..
                                     " names " .. H.sh_quote(lp))
        assert.equals(0, code, err)
        for m in assert(s:manifests(list == s.base_manifest_list and "base" or "delta")) do
          assert.truthy(out:find(m.file_name, 1, true))
          names[m.file_name] = true
        end
      end
    end
    for name in pairs(names) do
      local out, err, code = H.run("/usr/bin/python3 " .. H.sh_quote(H.spec_dir .. "support/manifest_compare.py") ..
                                   " names " .. H.sh_quote(path .. "/manifest/" .. name))
      assert.equals(0, code, err)
      assert.truthy(out:find("data-", 1, true))
    end
    -- snapshot JSON has Java's keys
    local j = cjson.decode(H.read_file(path .. "/snapshot/snapshot-2"))
    for _, k in ipairs({"version", "id", "schemaId", "baseManifestList", "deltaManifestList", "commitUser",
                        "commitIdentifier", "commitKind", "timeMillis", "totalRecordCount", "deltaRecordCount"}) do
      assert.is_not_nil(j[k], k)
    end
    assert.equals(5, j.totalRecordCount)
    assert.equals(1, j.deltaRecordCount)
    assert.equals("APPEND", j.commitKind)
    t:close()
    H.rmdir(dir)
  end)

  it("describes the new files in plain commit messages", function()
    local dir = H.tmpdir()
    local t = new_table(dir)
    local w = assert(t:new_write{})
    assert.equals("paimon.Write", getmetatable(w).__name)
    assert.matches("^paimon.Write", tostring(w))
    for _, r in ipairs(rows_a()) do w:write(r) end
    local msgs = assert(w:prepare_commit())
    assert.equals(2, #msgs)
    table.sort(msgs, function(a, b) return a.partition.p < b.partition.p end)
    local m = msgs[1]
    assert.equals("ADD", m.kind)
    assert.equals("a", m.partition.p)
    assert.equals(0, m.bucket)
    assert.equals(-1, m.total_buckets)
    assert.matches("^p=a/bucket%-0/data%-[%x%-]+%-0%.avro$", m.file_path)
    assert.equals(2, m.file.row_count)
    assert.equals(0, m.file.min_sequence_number)
    assert.equals(1, m.file.max_sequence_number)
    assert.equals(0, m.file.level)
    assert.equals(0, m.file.file_source)
    assert.equals(0, m.file.delete_row_count)
    assert.same({}, m.file.extra_files)
    assert.is_nil(m.file.value_stats_cols)
    assert.same({0, 1, 0, 0, 0, 0, 0, 0, 0}, m.file.value_stats.null_counts)
    assert.same({}, m.file.key_stats.null_counts)
    assert.equals(string.rep("\0", 12), m.file.min_key)
    local f = io.open(t:path() .. "/" .. m.file_path, "rb")
    assert.equals(m.file.file_size, #f:read("a"))
    f:close()
    -- creation time is local wall-clock millis
    local now = os.time() * 1000
    local off = (os.time() - os.time(os.date("!*t"))) * 1000
    assert.is_true(math.abs(m.file.creation_time - (now + off)) < 120000)
    w:close()
    -- a closed writer raises
    assert.has_error(function() w:write(rows_a()[1]) end)
    assert.matches("closed", tostring(w))
    t:close()
    H.rmdir(dir)
  end)

  it("raises on bad rows and keeps working", function()
    local dir = H.tmpdir()
    local t = new_table(dir)
    local w = assert(t:new_write{})
    assert.has_error(function() w:write{id = 1, nope = 1} end, nil)
    assert.has_error(function() w:write{p = "a"} end)                    -- id is NOT NULL
    assert.has_error(function() w:write{id = "x"} end)
    assert.has_error(function() w:write{id = 1, i = 2^40} end)
    assert.has_error(function() w:write{id = 1, m = "1.234"} end)         -- scale 2
    assert.has_error(function() w:write{id = 1, m = "123456789.00"} end)  -- precision 10
    assert.has_error(function() w:write{id = 1, dt = "2023-02-29"} end)
    assert.has_error(function() w:write{id = 1, b = "yes"} end)
    w:write{id = 7, p = "z"}
    local msgs = assert(w:prepare_commit())
    assert.equals(1, #msgs)
    assert.equals(1, msgs[1].file.row_count)
    w:close()
    t:close()
    H.rmdir(dir)
  end)

  it("takes integers exactly: decimal text or exact numbers, anything else refused quoting the input", function()
    local dir = H.tmpdir()
    local t = assert(create_table(dir .. "/db.db/ints", {fields = {
      {name = "k", type = "INT NOT NULL"}, {name = "big", type = "BIGINT"}, {name = "i", type = "INT"},
      {name = "si", type = "SMALLINT"}, {name = "ti", type = "TINYINT"}, {name = "arr", type = "ARRAY<BIGINT>"}},
      options = {["file.format"] = "avro"}}))
    local w = assert(t:new_write{})
    local function refused(row, text)
      local ok, err = pcall(w.write, w, row)
      assert.is_false(ok, "accepted " .. text)
      assert.matches(text, tostring(err), 1, true)
    end
    -- beyond int64: refused, never clamped to 9223372036854775807
    refused({k = 1, big = "9223372036854775808"}, "'9223372036854775808' is out of range")
    refused({k = 1, big = "-9223372036854775809"}, "'-9223372036854775809' is out of range")
    -- decimal text only: no hex, exponent, blanks or fraction
    for _, text in ipairs{"0x10", "1e3", " 5", "5 ", "1.0", "", "-", "+", "12a"} do
      refused({k = 1, big = text}, "expected an integer (a number or decimal digits), got '" .. text .. "'")
    end
    -- the range message shows the input as given, not a clamped value
    refused({k = 1, i = "99999999999999999999"}, "'99999999999999999999' is out of range [-2147483648, 2147483647]")
    refused({k = 1, i = "2147483648"}, "'2147483648' is out of range [-2147483648, 2147483647]")
    refused({k = 1, si = "32768"}, "'32768' is out of range [-32768, 32767]")
    refused({k = 1, ti = "-129"}, "'-129' is out of range [-128, 127]")
    refused({k = 1, ti = 128}, "128 is out of range [-128, 127]")
    -- numbers: integral and exact, or refused
    refused({k = 1, i = 1.5}, "got 1.5")
    refused({k = 1, big = 2^63}, "is out of range")
    refused({k = 1, big = 2^53}, "may have been rounded")
    refused({k = 1, big = 0/0}, "expected an integer")
    -- nested values follow the same rule
    refused({k = 1, arr = {"1", "9223372036854775808"}}, "'9223372036854775808' is out of range")
    refused({k = 1, arr = {"0x10"}}, "got '0x10'")
    w:write{k = 1, big = "9223372036854775807", i = "-2147483648", si = "+32767", ti = "-128", arr = {"-9223372036854775808", 7}}
    w:write{k = 2, big = "-9223372036854775808", i = 3.0, si = -32768, ti = 127, arr = {2^53 - 1}}
    w:write{k = 3, big = 2^53 - 1, i = "007"}
    local msgs = assert(w:prepare_commit())
    local c = t:new_commit{}
    assert(c:commit(msgs))
    local rows = read_all_any(t)
    table.sort(rows, function(a, b) return a.k < b.k end)
    assert.equals(3, #rows)
    assert.equals("9223372036854775807", tostring(rows[1].big))   -- exact (a string under LuaJIT)
    assert.equals(-2147483648, rows[1].i)
    assert.equals(32767, rows[1].si)
    assert.equals(-128, rows[1].ti)
    assert.equals("-9223372036854775808", tostring(rows[1].arr[1]))
    assert.equals(7, rows[1].arr[2])
    assert.equals("-9223372036854775808", tostring(rows[2].big))
    assert.equals(3, rows[2].i)
    assert.equals(9007199254740991, rows[2].arr[1])
    assert.equals(9007199254740991, rows[3].big)
    assert.equals(7, rows[3].i)
    w:close()
    t:close()
    H.rmdir(dir)
  end)

  it("rolls files at target-file-size and keeps sequence numbers contiguous", function()
    local dir = H.tmpdir()
    local t = new_table(dir, {["target-file-size"] = "1 kb"})
    local rows = {}
    for k = 1, 200 do rows[k] = {id = k, s = string.rep("x", 40), p = "a"} end
    local _, msgs = write_commit(t, rows)
    assert.is_true(#msgs > 3)
    table.sort(msgs, function(a, b) return a.file.min_sequence_number < b.file.min_sequence_number end)
    local next_seq, total = 0, 0
    for _, m in ipairs(msgs) do
      assert.equals(next_seq, m.file.min_sequence_number)
      next_seq = m.file.max_sequence_number + 1
      total = total + m.file.row_count
      assert.matches("%-" .. (_ - 1) .. "%.avro$", m.file.file_name)
    end
    assert.equals(200, total)
    assert.equals(200, #read_all(assert(t:latest_snapshot())))
    t:close()
    H.rmdir(dir)
  end)

  it("refuses tables it cannot write, naming the reason", function()
    local dir = H.tmpdir()
    local t = assert(create_table(dir .. "/b", {fields = {{name = "a", type = "INT"}},
                                                options = {bucket = 2, ["bucket-key"] = "a", ["file.format"] = "avro"}}))
    local w, msg, code = t:new_write{}
    assert.is_nil(w)
    assert.equals("unsupported", code)
    assert.matches("bucket=2", msg)
    t:close()
    t = assert(create_table(dir .. "/pk", {fields = {{name = "a", type = "INT"}, {name = "b", type = "INT"}},
                                           primary_keys = {"a"}, options = {["file.format"] = "avro"}}))
    w, msg, code = t:new_write{}
    assert.is_nil(w)
    assert.matches("primary", msg)
    t:close()
    t = assert(create_table(dir .. "/ts9", {fields = {{name = "ts", type = "TIMESTAMP(9)"}},
                                            options = {["file.format"] = "avro"}}))
    w, msg = t:new_write{}
    assert.is_nil(w)
    assert.matches("'ts'", msg)
    t:close()
    H.rmdir(dir)
  end)
end)

describe("every atomic type", function()
  local TYPES = {
    {name = "ti", type = "TINYINT"}, {name = "si", type = "SMALLINT"}, {name = "f", type = "FLOAT"},
    {name = "vc", type = "VARCHAR(8)"}, {name = "ch", type = "CHAR(3)"}, {name = "bin", type = "BINARY(2)"},
    {name = "vb", type = "VARBINARY(9)"}, {name = "big", type = "DECIMAL(20, 4)"}, {name = "tm", type = "TIME(3)"},
    {name = "ts6", type = "TIMESTAMP(6)"}, {name = "ltz", type = "TIMESTAMP(3) WITH LOCAL TIME ZONE"},
    {name = "k", type = "INT NOT NULL"},
  }
  local PY = [[
import sys, json, warnings, datetime, decimal
warnings.simplefilter("ignore")
import avro.datafile, avro.io
out = []
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        codec = r.meta["avro.codec"].decode()
        for x in r:
            row = {"_codec": codec}
            for k, v in x.items():
                if isinstance(v, bytes): v = v.hex()
                elif isinstance(v, decimal.Decimal): v = str(v)
                elif isinstance(v, datetime.datetime): v = v.strftime("%Y-%m-%d %H:%M:%S.%f")
                elif isinstance(v, datetime.time): v = v.strftime("%H:%M:%S.%f")
                elif isinstance(v, float): v = repr(v)
                row[k] = v
            out.append(row)
out.sort(key=lambda r: r["k"])
print(json.dumps(out))
]]

  for _, codec in ipairs({"zstd", "snappy", "deflate", "none"}) do
    it("round-trips through python3-avro with file.compression=" .. codec, function()
      local dir = H.tmpdir()
      local t = assert(create_table(dir .. "/t", {fields = TYPES,
        options = {["file.format"] = "avro", ["file.compression"] = codec}}))
      write_commit(t, {
        {k = 1, ti = -128, si = 32767, f = 1.5, vc = "héllo", ch = "abc", bin = "\1\2", vb = "\0\255",
         big = "-1234567890123456.7891", tm = "23:59:58.5", ts6 = "2024-05-06 07:08:09.123456",
         ltz = "2024-05-06 07:08:09.5"},
        {k = 2},
      })
      local rows = read_all_any(t)
      table.sort(rows, function(a, b) return a.k < b.k end)
      local r = rows[1]
      assert.equals(-128, r.ti)
      assert.equals(32767, r.si)
      assert.equals(1.5, r.f)
      assert.equals("héllo", r.vc)
      assert.equals("\1\2", r.bin)
      assert.equals("\0\255", r.vb)
      assert.equals("-1234567890123456.7891", r.big)
      assert.equals("23:59:58.5", r.tm)
      assert.equals("2024-05-06 07:08:09.123456", r.ts6)
      assert.equals("2024-05-06 07:08:09.500", r.ltz)
      for _, c in ipairs(TYPES) do
        if c.name ~= "k" then assert.equals(paimon.null, rows[2][c.name], c.name) end
      end
      local f = os.tmpname()
      H.write_file(f, PY)
      local cmd = "/usr/bin/python3 " .. H.sh_quote(f) .. " x"
      for _, p in ipairs(live_paths(t, assert(t:latest_snapshot()))) do cmd = cmd .. " " .. H.sh_quote(p) end
      local out, err, code = H.run(cmd)
      os.remove(f)
      assert.equals(0, code, err)
      local py = cjson.decode(out)
      local want_codec = ({zstd = "zstandard", snappy = "snappy", deflate = "deflate", none = "null"})[codec]
      assert.equals(want_codec, py[1]._codec)
      assert.equals(-128, py[1].ti)
      assert.equals("1.5", py[1].f)
      assert.equals("héllo", py[1].vc)
      assert.equals("0102", py[1].bin)
      assert.equals("00ff", py[1].vb)
      assert.equals("-1234567890123456.7891", py[1].big)
      assert.equals("23:59:58.500000", py[1].tm)
      assert.equals("2024-05-06 07:08:09.123456", py[1].ts6)
      assert.equals(cjson.null, py[2].big)
      t:close()
      H.rmdir(dir)
    end)
  end
end)

describe("commit", function()
  it("skips empty commits, filters committed identifiers, applies policies", function()
    local dir = H.tmpdir()
    local t = new_table(dir)
    local c = t:new_commit{commit_user = "u1"}
    assert.equals("paimon.Commit", getmetatable(c).__name)
    assert.equals("paimon.Commit (u1)", tostring(c))
    local id, committed = c:commit({})
    assert.equals(0, id)
    assert.is_false(committed)
    local w = assert(t:new_write{})
    w:write{id = 1, p = "a"}
    id, committed = c:commit(w:prepare_commit(), {identifier = 5})
    assert.equals(1, id)
    assert.is_true(committed)
    assert.equals(5, t:snapshot(1).commit_identifier)
    assert.equals("u1", t:snapshot(1).commit_user)
    id, committed = c:commit({})
    assert.equals(1, id)
    assert.is_false(committed)
    assert.same({6, 7}, c:filter_committed({4, 5, 6, 7}))
    assert.same({4, 5}, t:new_commit{commit_user = "other"}:filter_committed({4, 5}))
    -- the default policy reads the manifest options; a replacement policy wins
    assert.equals(30, c:options().merge_min_count)
    local c2 = t:new_commit{policy = function(o)
      assert.equals("8 mb", o["manifest.target-file-size"])
      return {merge_min_count = 2, target_file_size = 65536}
    end}
    assert.equals(2, c2:options().merge_min_count)
    assert.equals(65536, c2:options().manifest_target_size)
    local pf = dir .. "/policy.lua"
    H.write_file(pf, "return function(o) return {merge_min_count = 3} end")
    assert.equals(3, t:new_commit{policy = pf}:options().merge_min_count)
    -- the one loader's shapes: a table {manifest_merge = f}, a wrong type raises
    assert.equals(4, t:new_commit{policy = {manifest_merge = function() return {merge_min_count = 4} end}}
                     :options().merge_min_count)
    assert.has_error(function() t:new_commit{policy = 42} end)
    -- the default policy's fallbacks are the core's defaults, not a copy
    local core = require "paimon.core"
    local mm = require "paimon.policy.manifest_merge"
    assert.equals("30", core.defaults["manifest.merge-min-count"])
    assert.same({target_file_size = core.memory_size(core.defaults["manifest.target-file-size"]),
                 full_compaction_threshold = core.memory_size(core.defaults["manifest.full-compaction-threshold-size"]),
                 merge_min_count = 30},
                mm.manifest_merge({["manifest.target-file-size"] = "huge", ["manifest.merge-min-count"] = "x"}))
    assert.same(t:options(true), (function()
      local o = {}
      for k, v in pairs(core.defaults) do o[k] = v end
      for k, v in pairs(t:options()) do o[k] = v end
      return o
    end)())
    -- merging with a tiny target merges the previous manifests
    for k = 2, 4 do
      w:write{id = k, p = "a"}
      assert(c2:commit(w:prepare_commit()))
    end
    local s = assert(t:latest_snapshot())
    local n = 0
    for _ in assert(s:manifests("base")) do n = n + 1 end
    assert.is_true(n <= 2)
    assert.equals(4, #read_all(s))
    w:close()
    c:close()
    assert.has_error(function() c:commit({}) end)
    t:close()
    H.rmdir(dir)
  end)

  it("chains onto a Java-written table and leaves its files untouched", function()
    local path, dir = H.copy_table(H.fixture(MAP_FIXTURE))
    local before = {}
    for f in pairs(H.file_set(path)) do before[f] = H.read_file(path .. "/" .. f) end
    local t = assert(paimon.open(path))
    local java_rows = read_all_any(t)
    assert.equals(1, #java_rows)
    -- the writer adds rows with the table's map/array/row columns
    local w = assert(t:new_write{})
    w:write{f0 = {[1] = 10, [2] = 20}, f1 = {[1.5] = 10.25}, f2 = {key1 = "val1", key2 = paimon.null},
            f3 = {["123456"] = "abcdef"}, f4 = {["2023-01-01 12:00:00.123"] = "2023-01-02 13:30:00.456789"},
            f5 = {arr_key = {1.5, 2.5}}, f6 = {outer = {[99.5] = "nested_val"}},
            f7 = {[1000] = {f0 = 42, f1 = "row_str", f2 = "123.45"}}}
    local msgs = assert(w:prepare_commit())
    local c = t:new_commit{commit_user = "lua"}
    local id = assert(c:commit(msgs))
    assert.equals(2, id)
    w:close()
    -- composite columns get no min/max, only null counts, exactly like Java's entry
    local java_entry
    for f in assert(t:snapshot(1):files()) do java_entry = f end
    assert.equals(java_entry.file.value_stats.min_values, msgs[1].file.value_stats.min_values)
    assert.equals(java_entry.file.value_stats.max_values, msgs[1].file.value_stats.max_values)
    assert.same(java_entry.file.value_stats.null_counts, msgs[1].file.value_stats.null_counts)
    local s2 = assert(t:snapshot(2))
    assert.equals(2, s2.total_record_count)
    assert.equals(1, s2.delta_record_count)
    local rows = read_all_any(t)
    assert.equals(2, #rows)
    local mine = rows[1].f7 and rows[1].f1[1.5] and rows[1] or rows[2]
    assert.equals(10.25, mine.f1[1.5])
    assert.equals(paimon.null, mine.f2.key2)
    assert.equals("2023-01-02 13:30:00.456789", mine.f4["2023-01-01 12:00:00.123000"])
    assert.same({1.5, 2.5}, mine.f5.arr_key)
    assert.same({f0 = 42, f1 = "row_str", f2 = "123.45"}, mine.f7[1000])
    -- python3-avro reads our file
    local py_rows = python_rows({path .. "/" .. msgs[1].file_path})
    assert.equals(1, #py_rows)
    assert.same({{key = 1, value = 10}, {key = 2, value = 20}}, py_rows[1].f0)
    assert.equals("123.45", py_rows[1].f7[1].value.f2)
    local py, err, code = H.pyref(path, "files", {"--snapshot", "2"})
    assert.equals(0, code, err)
    assert.same(normalize_files(cjson.decode(py)), normalize_files(H.inspect_json(path, "files", {"--snapshot", "2"})))
    assert.equals(2, #cjson.decode(py))
    -- Java's files are byte-identical (the LATEST hint is rewritten by every commit, as Java does)
    assert.equals("2", H.read_file(path .. "/snapshot/LATEST"))
    before["snapshot/LATEST"] = nil
    for f, bytes in pairs(before) do assert.equals(bytes, H.read_file(path .. "/" .. f), f) end
    t:close()
    H.rmdir(dir)
  end)
end)

describe("command line", function()
  it("creates, writes and reads a table", function()
    local dir = H.tmpdir()
    local tp = dir .. "/t"
    local out, err, code = H.paimon_lua({"create_table.lua", tp, "--field", "id:BIGINT NOT NULL",
                                         "--field", "p:STRING", "--field", "v:DECIMAL(10, 2)", "--field", "raw:BYTES",
                                         "--partition", "p", "--option", "file.format=avro", "--json"})
    assert.equals(0, code, err)
    assert.equals("DECIMAL(10, 2)", cjson.decode(out).fields[3].type)
    out, err, code = H.paimon_lua({"create_table.lua", tp, "--field", "a:INT"})
    assert.equals(3, code)   -- already exists: 3, as tags and branches
    assert.matches("already exists", err)
    out, err, code = H.paimon_lua({"create_table.lua", dir .. "/u", "--field", "a"})
    assert.equals(2, code)
    out, err, code = H.paimon_lua({"create_table.lua", "--help"})
    assert.equals(0, code)
    local input = dir .. "/rows.jsonl"
    H.write_file(input, '{"id": 1, "p": "x", "v": "1.25", "raw": "AAEC"}\n\n{"id": "9223372036854775807", "p": "y", "v": 2}\n')
    out, err, code = H.paimon_lua({"write.lua", tp, "--input", input, "--json"})
    assert.equals(0, code, err)
    local res = cjson.decode(out)
    -- the upkeep after the commit (docs/maintenance.md): six steps, nothing failed
    assert.equals(0, res.upkeep.errors)
    assert.equals(6, #res.upkeep.steps)
    res.upkeep = nil
    assert.same({snapshot_id = 1, rows = 2, files = 2}, res)
    H.write_file(input, '{"id": 2, "p": "x", "bogus": 1}\n')
    out, err, code = H.paimon_lua({"write.lua", tp, "--input", input})
    assert.equals(1, code)
    assert.matches("line 1", err)
    out, err, code = H.paimon_lua({"read.lua", tp})
    assert.equals(0, code, err)
    local lines = {}
    for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
    table.sort(lines)
    assert.same({'{"id":1,"p":"x","v":"1.25","raw":"AAEC"}', '{"id":9223372036854775807,"p":"y","v":"2.00","raw":null}'}, lines)
    out, err, code = H.paimon_lua({"read.lua", tp, "--partition", "p=y"})
    assert.equals(0, code, err)
    assert.equals('{"id":9223372036854775807,"p":"y","v":"2.00","raw":null}\n', out)
    out, err, code = H.paimon_lua({"read.lua", tp, "--snapshot", "7"})
    assert.equals(1, code)
    H.write_file(input, '{"id": 3, "p": "x"}\n')
    assert.equals(0, select(3, H.paimon_lua({"write.lua", tp, "--input", input})))
    out, err, code = H.paimon_lua({"compact_manifest.lua", tp, "--json"})
    assert.equals(0, code, err)
    assert.equals(3, cjson.decode(out).snapshot_id)
    local after = H.inspect_json(tp, "manifests")
    assert.equals(1, #after)
    local py
    py, err, code = H.pyref(tp, "files", {"--snapshot", "3"})
    assert.equals(0, code, err)
    assert.same(normalize_files(cjson.decode(py)), normalize_files(H.inspect_json(tp, "files", {"--snapshot", "3"})))
    out, err, code = H.run("/usr/bin/python3 " .. H.sh_quote(H.spec_dir .. "support/manifest_compare.py") ..
                           " names " .. H.sh_quote(tp .. "/manifest/" .. after[1].file_name))
    assert.equals(0, code, err)
    local names = 0
    for _ in out:gmatch("data%-") do names = names + 1 end
    assert.equals(3, names)
    out = H.paimon_lua({"read.lua", tp})
    local n = 0
    for _ in out:gmatch("[^\n]+") do n = n + 1 end
    assert.equals(3, n)
    H.rmdir(dir)
  end)

  it("write.lua refuses malformed base64 with a clear error (one decoder, paimon.base64)", function()
    local dir = H.tmpdir()
    local tp = dir .. "/t"
    local _, err, code = H.paimon_lua({"create_table.lua", tp, "--field", "id:INT", "--field", "raw:BYTES",
                                       "--option", "file.format=avro"})
    assert.equals(0, code, err)
    local input = dir .. "/rows.jsonl"
    for _, bad in ipairs{"====", "QQ==QQ==", "Q=QQ"} do
      H.write_file(input, '{"id": 1, "raw": "' .. bad .. '"}\n')
      _, err, code = H.paimon_lua({"write.lua", tp, "--input", input})
      assert.equals(1, code, bad)
      assert.matches("column 'raw': not base64", err, 1, true)
      assert.not_matches("internal error", err, 1, true)
    end
    assert.is_false(H.exists(tp .. "/snapshot/snapshot-1"))
    local b64 = require "paimon.base64"
    for _, raw in ipairs{"", "a", "ab", "abc", "\0\255\128x"} do assert.equals(raw, b64.decode(b64.encode(raw))) end
    assert.equals("AAEC", b64.encode("\0\1\2"))
    H.rmdir(dir)
  end)

  it("read.lua prints every double the same way, nested ones too (shortest round-trip)", function()
    local dir = H.tmpdir()
    local tp = dir .. "/db.db/dbl"
    assert(create_table(tp, {fields = {
      {name = "k", type = "INT"}, {name = "d", type = "DOUBLE"}, {name = "arr", type = "ARRAY<DOUBLE>"},
      {name = "m", type = "MAP<STRING, DOUBLE>"}, {name = "r", type = "ROW<x DOUBLE, n BIGINT>"},
      {name = "nested", type = "ARRAY<ARRAY<DOUBLE>>"}}, options = {["file.format"] = "avro"}}))
    local input = dir .. "/rows.jsonl"
    H.write_file(input, '{"k": 1, "d": 20.2, "arr": [20.2, 0.1, 2.0, 1e300], "m": {"a": 20.2, "b": 3.0},' ..
                        ' "r": {"x": 20.2, "n": 5}, "nested": [[0.1, 20.2]]}\n')
    local out, err, code = H.paimon_lua({"write.lua", tp, "--input", input})
    assert.equals(0, code, err)
    out, err, code = H.paimon_lua({"read.lua", tp})
    assert.equals(0, code, err)
    assert.equals('{"k":1,"d":20.2,"arr":[20.2,0.1,2.0,1e+300],"m":{"a":20.2,"b":3.0},"r":{"n":5,"x":20.2},' ..
                  '"nested":[[0.1,20.2]]}\n', out)
    H.rmdir(dir)
  end)
end)

describe("write.lua retries (--commit-user and --identifier)", function()
  local function snapshot_count(tp) return #H.inspect_json(tp, "snapshots") end
  local function row_count(tp)
    local out, err, code = H.paimon_lua({"read.lua", tp})
    assert.equals(0, code, err)
    local n = 0
    for _ in out:gmatch("[^\n]+") do n = n + 1 end
    return n
  end
  local function data_files(dir)
    local _, n = H.file_set(dir, "-name 'data-*'")
    return n
  end
  local function make(dir)
    local tp = dir .. "/t"
    local _, err, code = H.paimon_lua({"create_table.lua", tp, "--field", "id:BIGINT", "--field", "p:STRING",
                                       "--partition", "p", "--option", "file.format=avro"})
    assert.equals(0, code, err)
    local input = dir .. "/rows.jsonl"
    H.write_file(input, '{"id": 1, "p": "x"}\n{"id": 2, "p": "y"}\n{"id": 3, "p": "x"}\n')
    return tp, input
  end

  it("a re-run of a landed commit reports it and commits nothing", function()
    local dir = H.tmpdir()
    local tp, input = make(dir)
    local args = {"write.lua", tp, "--input", input, "--commit-user", "loader-7", "--identifier", "42"}
    local out, err, code = H.paimon_lua(args)
    assert.equals(0, code, err)
    assert.matches("committed snapshot 1", out, 1, true)
    local files = data_files(tp)
    -- the retry: same user and identifier
    out, err, code = H.paimon_lua(args)
    assert.equals(0, code, err)
    assert.matches("already committed in snapshot 1", out, 1, true)
    assert.equals(1, snapshot_count(tp))
    assert.equals(3, row_count(tp))
    assert.equals(files, data_files(tp))               -- no data file written either
    local jargs = {}
    for i, a in ipairs(args) do jargs[i] = a end
    jargs[#jargs + 1] = "--json"
    out, err, code = H.paimon_lua(jargs)
    assert.equals(0, code, err)
    assert.same({snapshot_id = 1, rows = 0, files = 0, already_committed = true}, cjson.decode(out))
    -- the next identifier commits; an older one is behind this user's latest
    out, err, code = H.paimon_lua({"write.lua", tp, "--input", input, "--commit-user", "loader-7",
                                   "--identifier", "43", "--json"})
    assert.equals(0, code, err)
    assert.equals(2, cjson.decode(out).snapshot_id)
    out, err, code = H.paimon_lua(args)
    assert.equals(0, code, err)
    assert.matches("already committed: commit user loader-7 is at identifier 43 (snapshot 2), past 42", out, 1, true)
    assert.equals(2, snapshot_count(tp))
    assert.equals(6, row_count(tp))
    -- c:filter_committed's second and third values: where this user's newest commit is
    local t = assert(paimon.open(tp))
    local left, sid, last = t:new_commit{commit_user = "loader-7"}:filter_committed({42, 43, 44})
    assert.same({44}, left)
    assert.equals(2, sid)
    assert.equals(43, last)
    assert.equals(1, select("#", t:new_commit{commit_user = "nobody"}:filter_committed({1})))
    t:close()
    -- another user with the same identifier is another commit
    out, err, code = H.paimon_lua({"write.lua", tp, "--input", input, "--commit-user", "loader-8",
                                   "--identifier", "42"})
    assert.equals(0, code, err)
    assert.equals(3, snapshot_count(tp))
    -- without an identifier nothing is filtered (Java batch: every run commits)
    out, err, code = H.paimon_lua({"write.lua", tp, "--input", input, "--commit-user", "loader-8"})
    assert.equals(0, code, err)
    assert.equals(4, snapshot_count(tp))
    H.rmdir(dir)
  end)

  it("a run killed (SIGKILL) right after its snapshot landed is not committed twice by the retry", function()
    local dir = H.tmpdir()
    local tp, input = make(dir)
    -- the first run: commits through the same API as write.lua, then dies
    -- by SIGKILL before it can report (exit 137)
    local prog = [[
local paimon = require "paimon"
local t = assert(paimon.open(arg[1]))
local w = assert(t:new_write{})
w:write{id = 1, p = "x"}; w:write{id = 2, p = "y"}; w:write{id = 3, p = "x"}
local c = t:new_commit{commit_user = "loader-7"}
assert(c:commit(assert(w:prepare_commit()), {identifier = 42}))
os.execute("kill -9 $PPID")
os.exit(0)
]]
    H.write_file(dir .. "/first.lua", prog)
    local _, _, code = H.run(H.sh_quote(H.cli) .. " " .. H.sh_quote(dir .. "/first.lua") .. " " .. H.sh_quote(tp))
    assert.equals(137, code)
    assert.equals(1, snapshot_count(tp))
    local out, err
    out, err, code = H.paimon_lua({"write.lua", tp, "--input", input, "--commit-user", "loader-7",
                                   "--identifier", "42"})
    assert.equals(0, code, err)
    assert.matches("already committed in snapshot 1", out, 1, true)
    assert.equals(1, snapshot_count(tp))
    assert.equals(3, row_count(tp))
    H.rmdir(dir)
  end)

  it("a commit that lands while the retry reads its rows is found before committing", function()
    local dir = H.tmpdir()
    local tp = make(dir)
    -- the retry reads its rows from a pipe that stays open until `go`
    -- exists; meanwhile the original run's commit (identifier 42) lands
    local q = H.sh_quote
    local feeder = "{ printf '%s\\n' '{\"id\": 9, \"p\": \"z\"}'; i=0; while [ ! -e " .. q(dir .. "/go") ..
                   " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; }"
    local job = feeder .. " | " .. q(H.cli) .. " write.lua " .. q(tp) ..
                " --commit-user loader-7 --identifier 42 >" .. q(dir .. "/retry.out") .. " 2>&1 & echo $! >" ..
                q(dir .. "/retry.pid") .. "; wait $!; echo $? >" .. q(dir .. "/retry.rc")
    os.execute("sh -c " .. q(job) .. " >/dev/null 2>&1 &")
    local function wait_for(fn)
      for _ = 1, 400 do
        local v = fn()
        if v then return v end
        os.execute("sleep 0.05")
      end
    end
    local pid = wait_for(function()
      local s = H.exists(dir .. "/retry.pid") and H.read_file(dir .. "/retry.pid")
      return s and s:match("%d+")
    end)
    assert.is_truthy(pid, "the retry did not start")
    -- past its first check: blocked reading the rest of its rows from the pipe
    local blocked = wait_for(function()
      local w = H.exists("/proc/" .. pid .. "/wchan") and H.read_file("/proc/" .. pid .. "/wchan")
      return w and w:find("pipe", 1, true)
    end)
    assert.is_truthy(blocked, "the retry never waited for its input")
    assert.equals(0, snapshot_count(tp))
    local t = assert(paimon.open(tp))
    local w = assert(t:new_write{})
    w:write{id = 2, p = "y"}
    local c = t:new_commit{commit_user = "loader-7"}
    assert(c:commit(assert(w:prepare_commit()), {identifier = 42}))
    w:close()
    t:close()
    local files = data_files(tp)
    H.write_file(dir .. "/go", "")
    local rc = wait_for(function()
      local s = H.exists(dir .. "/retry.rc") and H.read_file(dir .. "/retry.rc")
      return s and s:match("%d+")
    end)
    local out = H.read_file(dir .. "/retry.out")
    assert.equals("0", rc, out)
    assert.matches("already committed in snapshot 1", out, 1, true)
    assert.equals(1, snapshot_count(tp))
    assert.equals(1, row_count(tp))
    assert.equals(files, data_files(tp))               -- the retry's own data file is removed
    H.rmdir(dir)
  end)
end)

describe("commit abort", function()
  local function data_files(dir)
    local _, n = H.file_set(dir, "-name 'data-*'")
    return n
  end

  it("deletes the files of messages that were never committed", function()
    local dir = H.tmpdir()
    local t = new_table(dir)
    local w = assert(t:new_write{})
    for _, r in ipairs(rows_a()) do w:write(r) end
    local msgs = assert(w:prepare_commit())
    w:close()
    assert.equals(2, data_files(dir))                 -- partitions a and b
    local c = t:new_commit{commit_user = "u"}
    local removed, kept = c:abort(msgs)
    assert.equals(2, removed)
    assert.equals(0, kept)
    assert.equals(0, data_files(dir))
    t:close()
    H.rmdir(dir)
  end)

  it("keeps files a snapshot adds: a commit whose outcome looked unknown may have landed", function()
    local dir = H.tmpdir()
    local t = new_table(dir)
    local id, msgs, c = write_commit(t, rows_a(), "u")
    -- the same object, and a fresh one that never committed (checks every snapshot)
    for _, cc in ipairs{c, t:new_commit{commit_user = "other"}} do
      local removed, kept = cc:abort(msgs)
      assert.equals(0, removed)
      assert.equals(2, kept)
    end
    assert.equals(2, data_files(dir))
    assert.equals(#rows_a(), #read_all(t:snapshot(id)))
    t:close()
    H.rmdir(dir)
  end)
end)

-- Issue 24, defect 1: {"amount":2.675} into DECIMAL(10,2) stored 2.67 and
-- 1.005 stored 1.00 (the double was rounded to the scale).
describe("write.lua: a DECIMAL from a JSON number", function()
  local function table_with_amount()
    local dir = H.tmpdir()
    local tp = dir .. "/t"
    local _, err, rc = H.script("create_table.lua", {tp, "--field", "id:INT", "--field", "amount:DECIMAL(10, 2)",
                                                     "--field", "wide:DECIMAL(38, 20)", "--option", "file.format=avro"})
    assert(rc == 0, err)
    return tp, dir
  end
  local function write(tp, dir, line)
    H.write_file(dir .. "/rows.jsonl", line .. "\n")
    return H.script("write.lua", {tp, "--input", dir .. "/rows.jsonl"})
  end

  it("is the number's text, exactly: never rounded to the scale", function()
    local tp, dir = table_with_amount()
    for _, case in ipairs{{"2.67", "2.67"}, {"12.5", "12.50"}, {"-0.01", "-0.01"}, {"1e2", "100.00"},
                          {"7", "7.00"}, {"0.000001e6", "1.00"}, {"99999999.99", "99999999.99"}} do
      local _, err, rc = write(tp, dir, '{"id":1,"amount":' .. case[1] .. '}')
      assert.equals(0, rc, err)
      local out = assert(H.script("read.lua", {tp}))
      local last
      for l in out:gmatch("[^\n]+") do last = l end
      assert.equals(case[2], H.cjson.decode(last).amount, case[1])
    end
    H.rmdir(dir)
  end)

  it("refuses a value with more digits than the scale, quoting column and value", function()
    local tp, dir = table_with_amount()
    for _, v in ipairs{"2.675", "1.005", "0.001"} do
      local _, err, rc = write(tp, dir, '{"id":1,"amount":' .. v .. '}')
      assert.equals(1, rc)
      assert.matches("column 'amount' (DECIMAL(10, 2)): value " .. v .. " has more fractional digits than the scale",
                     err, 1, true)
    end
    -- a double that needs 17 digits may not be what was written: as a string it is exact
    local _, err, rc = write(tp, dir, '{"id":1,"wide":0.30000000000000004}')
    assert.equals(1, rc)
    assert.matches("column 'wide' (DECIMAL(38, 20)): value 0.30000000000000004 has more than 15 significant digits",
                   err, 1, true)
    _, err, rc = write(tp, dir, '{"id":1,"wide":"0.30000000000000004"}')
    assert.equals(0, rc, err)
    local _, _, n = H.script("read.lua", {tp})
    assert.equals(0, n)
    H.rmdir(dir)
  end)
end)
