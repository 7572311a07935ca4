-- Bad input gives a clear error naming the file and the problem; never a
-- crash or a hang. Every case works on a temp copy of a fixture.
local H = require "helper"
local paimon = require "paimon"

local COMPLEX = "cpp-parquet-append_complex_data"

local function with_copy(fn)
  local path, dir = H.copy_table(H.fixture(COMPLEX))
  local ok, err = pcall(fn, path)
  H.rmdir(dir)
  if not ok then error(err, 0) end
end

local function first_manifest(path, list_field)
  local t = assert(paimon.open(path))
  local s = assert(t:latest_snapshot())
  local list = s[list_field or "base_manifest_list"]
  local m = paimon.collect(s:manifests("base"))[1]
  t:close()
  return list, m.file_name
end

describe("bad input", function()
  it("invalid snapshot JSON names the file", function()
    with_copy(function(path)
      H.write_file(path .. "/snapshot/snapshot-2", '{ "version" : 3, "id" : 2,')
      local t = assert(paimon.open(path))
      local s, msg, code = t:snapshot(2)
      assert.is_nil(s)
      assert.equals("corrupt", code)
      assert.matches("snapshot-2", msg, 1, true)
      local _, err, rc = H.paimon_lua({"inspect.lua", path, "snapshots"})
      assert.equals(1, rc)
      assert.matches("snapshot-2", err, 1, true)
    end)
  end)

  it("a snapshot file missing a required field names the field", function()
    with_copy(function(path)
      local json = H.read_file(path .. "/snapshot/snapshot-3"):gsub('"commitKind" : "[A-Z]+",?', "")
      H.write_file(path .. "/snapshot/snapshot-3", json)
      local s, msg = assert(paimon.open(path)):snapshot(3)
      assert.is_nil(s)
      assert.matches("commitKind", msg, 1, true)
    end)
  end)

  it("a snapshot missing in the middle is skipped, not fatal", function()
    with_copy(function(path)
      os.remove(path .. "/snapshot/snapshot-2")
      local t = assert(paimon.open(path))
      local ids = {}
      for s in t:snapshots() do ids[#ids + 1] = s.id end
      assert.same({1, 3, 4}, ids)
      local s, _, code = t:snapshot(2)
      assert.is_nil(s)
      assert.equals("notfound", code)
      assert.equals(4, assert(t:latest_snapshot()).id)
      local out, _, rc = H.paimon_lua({"inspect.lua", path, "files"})
      assert.equals(0, rc, out)
    end)
  end)

  it("junk hint files fall back to listing", function()
    with_copy(function(path)
      for _, junk in ipairs({"junk", "4\n", " 4", "", "99999999999999999999", "2", "-1"}) do
        H.write_file(path .. "/snapshot/LATEST", junk)
        H.write_file(path .. "/snapshot/EARLIEST", junk == "2" and "0" or junk)
        local t = assert(paimon.open(path))
        assert.equals(4, assert(t:latest_snapshot()).id, "LATEST=" .. junk)
        assert.equals(1, assert(t:earliest_snapshot()).id, "EARLIEST=" .. junk)
        t:close()
      end
      os.remove(path .. "/snapshot/LATEST")
      os.remove(path .. "/snapshot/EARLIEST")
      assert.equals(4, assert(paimon.open(path)):latest_snapshot().id)
    end)
  end)

  it("a stale LATEST hint is not trusted", function()
    with_copy(function(path)
      H.write_file(path .. "/snapshot/LATEST", "2")
      assert.equals(4, assert(paimon.open(path)):latest_snapshot().id)
    end)
  end)

  it("a truncated manifest list is reported with its name", function()
    with_copy(function(path)
      local list = first_manifest(path)
      local full = H.read_file(path .. "/manifest/" .. list)
      H.write_file(path .. "/manifest/" .. list, full:sub(1, #full - 7))
      local s = assert(assert(paimon.open(path)):latest_snapshot())
      local ok, err = pcall(function()
        local it, msg = s:files()
        if not it then error(msg, 0) end
        for _ in it do end
      end)
      assert.is_false(ok)
      assert.matches(list, err, 1, true)
    end)
  end)

  it("a corrupt manifest raises mid-iteration with its name; inspect exits 1", function()
    with_copy(function(path)
      local _, man = first_manifest(path)
      local full = H.read_file(path .. "/manifest/" .. man)
      H.write_file(path .. "/manifest/" .. man, "XXXX" .. full:sub(5))
      local s = assert(assert(paimon.open(path)):latest_snapshot())
      local ok, err = pcall(function()
        local it, msg = s:files()
        if not it then error(msg, 0) end
        for _ in it do end
      end)
      assert.is_false(ok)
      assert.matches(man, err, 1, true)
      assert.matches("magic", err, 1, true)
      local _, serr, rc = H.paimon_lua({"inspect.lua", path, "files"})
      assert.equals(1, rc)
      assert.matches(man, serr, 1, true)
    end)
  end)

  it("a missing manifest is reported with its name", function()
    with_copy(function(path)
      local _, man = first_manifest(path)
      os.remove(path .. "/manifest/" .. man)
      local _, serr, rc = H.paimon_lua({"inspect.lua", path, "files"})
      assert.equals(1, rc)
      assert.matches(man, serr, 1, true)
    end)
  end)

  it("random corruption of every metadata file never crashes the CLI", function()
    with_copy(function(path)
      local files = {}
      local p = io.popen("ls " .. H.sh_quote(path .. "/manifest") .. " " .. H.sh_quote(path .. "/snapshot"))
      for line in p:lines() do files[#files + 1] = line end
      p:close()
      math.randomseed(42)
      for round = 1, 20 do
        for _, dir in ipairs({"manifest", "snapshot"}) do
          local pp = io.popen("ls " .. H.sh_quote(path .. "/" .. dir))
          for name in pp:lines() do
            local fpath = path .. "/" .. dir .. "/" .. name
            local data = H.read_file(fpath)
            if #data > 0 then
              local pos = math.random(1, #data)
              local b = string.char((data:byte(pos) + math.random(1, 255)) % 256)
              H.write_file(fpath, data:sub(1, pos - 1) .. b .. data:sub(pos + 1))
            end
          end
          pp:close()
        end
        for _, view in ipairs({"snapshots", "files", "manifests"}) do
          local _, err, rc = H.paimon_lua({"inspect.lua", path, view})
          assert.is_true(rc == 0 or rc == 1, "round " .. round .. " " .. view .. " exit " .. rc .. ": " .. err)
          if rc == 1 then assert.is_true(#err > 0) end
        end
      end
    end)
  end)

  it("a corrupt schema makes open fail with the file name", function()
    with_copy(function(path)
      H.write_file(path .. "/schema/schema-0", "{ not json")
      local t, msg, code = paimon.open(path)
      assert.is_nil(t)
      assert.equals("corrupt", code)
      assert.matches("schema-0", msg, 1, true)
    end)
  end)

  it("corrupt tag and consumer files are reported, not skipped", function()
    with_copy(function(path)
      os.execute("mkdir -p " .. H.sh_quote(path .. "/tag") .. " " .. H.sh_quote(path .. "/consumer"))
      H.write_file(path .. "/tag/tag-bad", "garbage")
      H.write_file(path .. "/consumer/consumer-c1", '{ "other" : 1 }')
      local t = assert(paimon.open(path))
      local tags, msg = t:tags()
      assert.is_nil(tags)
      assert.matches("tag-bad", msg, 1, true)
      local cs, msg2 = t:consumers()
      assert.is_nil(cs)
      assert.matches("consumer-c1", msg2, 1, true)
    end)
  end)

  it("a path that is not a table is refused", function()
    local dir = H.tmpdir()
    local t, msg, code = paimon.open(dir)
    assert.is_nil(t)
    assert.equals("notfound", code)
    assert.matches("not a Paimon table", msg, 1, true)
    H.rmdir(dir)
  end)
end)
