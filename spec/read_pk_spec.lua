-- read.lua returns the rows Java's batch read returns: primary-key tables
-- merged by key (merge-engine deduplicate or first-row, _SEQUENCE_NUMBER,
-- -U/-D dropping the key), deletion vectors applied, level-0 files unseen
-- where Java skips them; other merge engines refused. Checked for every
-- snapshot and tag of every Avro fixture against the independent
-- python3-avro reader (spec/support/pyref.py rows) and against the rows a
-- fixture's SOURCE.md states (paimon-cpp's tests of the Java-written table).
local H = require "helper"
local cjson = H.cjson

-- canonical text of a decoded JSON value (keys sorted, numbers as %.17g)
local function canon(v)
  if v == cjson.null or v == nil then return "null" end
  if type(v) == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. canon(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  if type(v) == "number" then return string.format("%.17g", v) end
  return type(v) .. ":" .. tostring(v)
end

-- sorted canonical rows of JSON lines
local function lines_rows(text)
  local out = {}
  for line in text:gmatch("[^\n]+") do out[#out + 1] = canon(H.decode(line)) end
  table.sort(out)
  return out
end

local function array_rows(rows)
  local out = {}
  for _, r in ipairs(rows) do out[#out + 1] = canon(r) end
  table.sort(out)
  return out
end

local function read_rows(path, extra)
  local args = {"read.lua", path}
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  local out, err, rc = H.paimon_lua(args)
  assert(rc == 0, "read.lua " .. table.concat(args, " ", 2) .. " failed (" .. rc .. "): " .. err)
  return lines_rows(out)
end

local function option(path, key)
  for _, kv in ipairs(H.pyref_json(path, "options")) do
    if kv.key == key then return kv.value end
  end
end

-- ```rows snapshot N ... ``` blocks of a fixture's SOURCE.md
local function stated_rows(fx_dir)
  local text = H.read_file(fx_dir .. "/SOURCE.md")
  local out = {}
  if not text then return out end
  for id, body in text:gmatch("```rows snapshot (%d+)\n(.-)```") do out[tonumber(id)] = lines_rows(body) end
  return out
end

local function fixture_dir(fx)
  return H.fixtures .. "/paimon-java/" .. fx.name
end

-- every snapshot and tag of path: {{"--snapshot", id}, {"--tag", name}, ...}
local function versions(path)
  local out = {}
  for _, s in ipairs(H.pyref_json(path, "snapshots")) do
    out[#out + 1] = {"--snapshot", string.format("%d", s.snapshot_id)}
  end
  for name in H.run("ls " .. H.sh_quote(path .. "/tag") .. " 2>/dev/null"):gmatch("tag%-([^\n]+)") do
    out[#out + 1] = {"--tag", name}
  end
  return out
end

local function set_options(path, opts)
  -- a copy's latest schema file with options changed (tests only)
  local dir = path .. "/schema"
  local last
  for name in H.run("ls " .. H.sh_quote(dir)):gmatch("[^\n]+") do
    local n = tonumber(name:match("^schema%-(%d+)$"))
    if n and (not last or n > last) then last = n end
  end
  local file = dir .. "/schema-" .. last
  local s = H.decode(H.read_file(file))
  for k, v in pairs(opts) do s.options[k] = v end
  H.write_file(file, cjson.encode(s))
end

local DV = "cpp-avro-pk_table_scan_and_read_dv"
local MULTI = "cpp-avro-pk_with_multiple_type"

describe("read.lua on primary-key tables", function()
  local tables = H.fixture_tables()

  it("has the Avro primary-key fixtures", function()
    local seen = {}
    for _, fx in ipairs(tables) do seen[fx.name] = true end
    assert.is_true(seen[DV] and seen[MULTI], "fixtures " .. DV .. " and " .. MULTI .. " under " .. H.fixtures)
  end)

  local function is_pk(path)
    local schemas = H.pyref_json(path, "schemas")
    return #(schemas[#schemas].primary_keys or {}) > 0
  end

  for _, fx in ipairs(tables) do
    if option(fx.path, "file.format") == "avro" and is_pk(fx.path) then
      it(fx.name .. ": every snapshot and tag reads as python3-avro merges it", function()
        local vs = versions(fx.path)
        assert.is_true(#vs >= 1)
        for _, v in ipairs(vs) do
          local theirs = array_rows(H.pyref_json(fx.path, "rows", v))
          assert.are.same(theirs, read_rows(fx.path, v), fx.name .. " " .. table.concat(v, " "))
        end
      end)

      local stated = stated_rows(fixture_dir(fx))
      if next(stated) then
        it(fx.name .. ": the rows its SOURCE.md states (paimon-cpp's tests)", function()
          for id, rows in pairs(stated) do
            assert.are.same(rows, read_rows(fx.path, {"--snapshot", tostring(id)}), fx.name .. " snapshot " .. id)
          end
        end)
      end
    end
  end

  it("16 rows in the files for 13 keys: 8 rows, each key once", function()
    local path = H.fixture(DV)
    local rows = read_rows(path)
    assert.equals(8, #rows)
    local keys = {}
    for _, r in ipairs(rows) do
      local k = r:match("f0=string:([^,]*)")
      assert.is_nil(keys[k], "key " .. tostring(k) .. " twice")
      keys[k] = true
    end
  end)

  it("--partition and --limit apply to the merged rows", function()
    local path = H.fixture(DV)
    assert.are.same(array_rows(H.pyref_json(path, "rows")), read_rows(path))
    local p20 = read_rows(path, {"--partition", "f1=20"})
    assert.equals(2, #p20)
    for _, r in ipairs(p20) do assert.truthy(r:find("f1=2", 1, true)) end
    assert.equals(3, #read_rows(path, {"--limit", "3"}))
  end)

  describe("on a copy with other options", function()
    local dirs = {}
    after_each(function()
      for _, d in ipairs(dirs) do H.rmdir(d) end
      dirs = {}
    end)

    local function copy(name, opts)
      local p, dir = H.copy_table(H.fixture(name))
      dirs[#dirs + 1] = dir
      set_options(p, opts)
      return p
    end

    it("deletion vectors off: every level merged by key, deletes drop keys, no deletion vector read", function()
      local p = copy(DV, {["deletion-vectors.enabled"] = "false"})
      for _, v in ipairs(versions(p)) do
        assert.are.same(array_rows(H.pyref_json(p, "rows", v)), read_rows(p, v), table.concat(v, " "))
      end
      local rows = read_rows(p)
      -- 13 keys, Alex deleted by a -D row; Tony's -D went into a deletion
      -- vector at the compaction of snapshot 4, which Java reads only with
      -- deletion-vectors.enabled: Tony is back
      assert.equals(12, #rows)
      local text = table.concat(rows, "\n")
      assert.truthy(text:find("string:Tony", 1, true))
      assert.falsy(text:find("string:Alex", 1, true))
      assert.truthy(text:find("f3=19.100000000000001", 1, true))   -- Alice's +U won
    end)

    it("deletion-vectors.merge-on-read: level 0 visible, merged with the deletion vectors", function()
      local p = copy(DV, {["deletion-vectors.merge-on-read"] = "true"})
      for _, v in ipairs(versions(p)) do
        assert.are.same(array_rows(H.pyref_json(p, "rows", v)), read_rows(p, v), table.concat(v, " "))
      end
      assert.equals(11, #read_rows(p))
    end)

    it("first-row: level 0 unseen, upper levels read file by file", function()
      local p = copy(DV, {["deletion-vectors.enabled"] = "false", ["merge-engine"] = "first-row"})
      for _, v in ipairs(versions(p)) do
        assert.are.same(array_rows(H.pyref_json(p, "rows", v)), read_rows(p, v), table.concat(v, " "))
      end
      assert.equals(0, #read_rows(p, {"--snapshot", "1"}))
    end)

    it("first-row on level-0 files only: nothing visible", function()
      local p = copy(MULTI, {["merge-engine"] = "first-row", ["ignore-delete"] = "true"})
      assert.are.same(array_rows(H.pyref_json(p, "rows")), read_rows(p))
      assert.equals(0, #read_rows(p))
    end)

    it("deduplicate with ignore-delete: retract rows never win", function()
      local p = copy(MULTI, {["ignore-delete"] = "true"})
      local rows = read_rows(p)
      assert.are.same(array_rows(H.pyref_json(p, "rows")), rows)
      assert.equals(5, #rows)            -- Emily's -D ignored
    end)

    it("every combination of engine, deletion vectors, merge-on-read and ignore-delete, tags too", function()
      -- the same rows as python3-avro, or both fail (first-row meeting a -D without
      -- ignore-delete, as Java's FirstRowMergeFunction: exit 1, possibly after the
      -- rows of the buckets before)
      local n = 0
      for _, name in ipairs({DV, MULTI}) do
        for _, engine in ipairs({"deduplicate", "first-row"}) do
          for _, dv in ipairs({"true", "false"}) do
            for _, mor in ipairs(dv == "true" and {"true", "false"} or {"false"}) do   -- mor: a DV option
              for _, ign in ipairs({"true", "false"}) do
                local p = copy(name, {["merge-engine"] = engine, ["deletion-vectors.enabled"] = dv,
                                      ["deletion-vectors.merge-on-read"] = mor, ["ignore-delete"] = ign})
                local _, terr, trc = H.paimon_lua({"tag.lua", p, "create", "t1", "--snapshot", "1"})
                assert(trc == 0, terr)
                local vs = versions(p)
                for _, v in ipairs(vs) do
                  local what = table.concat({name, engine, "dv=" .. dv, "mor=" .. mor, "ignore=" .. ign,
                                             table.concat(v, " ")}, " ")
                  local pout, perr, prc = H.pyref(p, "rows", v)
                  local out, err, rc = H.paimon_lua({"read.lua", p, v[1], v[2]})
                  if prc == 0 then
                    assert(rc == 0, what .. ": read.lua failed: " .. err)
                    assert.are.same(array_rows(H.decode(pout)), lines_rows(out), what)
                  else
                    assert(perr:find("retract", 1, true), what .. ": " .. perr)
                    assert.equals(1, rc, what)
                    assert.truthy(err:find("first-row", 1, true), what .. ": " .. err)
                  end
                  n = n + 1
                end
              end
            end
          end
        end
      end
      assert.equals(12 * (7 + 3), n)     -- 12 combinations x (6 + 2 snapshots, 1 tag each)
    end)

    for _, engine in ipairs({"partial-update", "aggregation", "no-such-engine"}) do
      it("refuses merge-engine=" .. engine .. " naming the engine and the table, exit 1, no rows", function()
        local p = copy(DV, {["merge-engine"] = engine})
        local out, err, rc = H.paimon_lua({"read.lua", p})
        assert.equals(1, rc)
        assert.equals("", out)
        assert.truthy(err:find("merge-engine=" .. engine, 1, true), err)
        assert.truthy(err:find(p, 1, true), err)
      end)
    end

    it("refuses sequence.field (its ordering is not read)", function()
      local p = copy(MULTI, {["sequence.field"] = "f4"})
      local out, err, rc = H.paimon_lua({"read.lua", p})
      assert.equals(1, rc)
      assert.equals("", out)
      assert.truthy(err:find("sequence.field", 1, true), err)
    end)

    it("a damaged deletion vector fails the read, naming the index file", function()
      local p = copy(DV, {})
      local f = p .. "/index/index-3be0d042-692a-41cc-8d24-449ebfd0370a-1"
      local b = H.read_file(f)
      H.write_file(f, b:sub(1, 20) .. string.char((b:byte(21) + 1) % 256) .. b:sub(22))
      local out, err, rc = H.paimon_lua({"read.lua", p})
      assert.equals(1, rc)
      assert.truthy(err:find("index-3be0d042-692a-41cc-8d24-449ebfd0370a-1", 1, true), err)
      assert.is_nil(out:find("Tony", 1, true))
    end)
  end)

  it("primary-key tables of other file formats: an error or no rows, never unmerged rows", function()
    for _, fx in ipairs(tables) do
      local pk = fx.name ~= "cpp-parquet-append_10-orc-manifests" and is_pk(fx.path)
      local fmt = option(fx.path, "file.format")
      if pk and fmt ~= "avro" and fx.name ~= "cpp-parquet-append_10-orc-manifests" then
        local out, err, rc = H.paimon_lua({"read.lua", fx.path})
        if rc == 0 then assert.equals("", out, fx.name)
        else assert.equals(1, rc, fx.name .. ": " .. err) end
      end
    end
  end)
end)
