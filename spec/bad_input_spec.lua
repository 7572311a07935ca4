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
      -- reported as a row with its error (issue 24: one unreadable tag
      -- no longer hides the others), never skipped
      local tags = assert(t:tags())
      local bad
      for _, x in ipairs(tags) do if x.name == "bad" then bad = x end end
      assert.truthy(bad)
      assert.matches("tag-bad: invalid JSON", bad.error, 1, true)
      assert.is_nil(bad.snapshot_id)
      local cs, msg2 = t:consumers()
      assert.is_nil(cs)
      assert.matches("consumer-c1", msg2, 1, true)
    end)
  end)

  -- issue 12: expiration trusted the "id" field over the file name (a
  -- snapshot-1 with id -5 lost its manifest lists while its file stayed; a
  -- snapshot-3 with id 17 moved EARLIEST to 17)
  local function set_field(path, file, pattern, repl)
    local json, n = H.read_file(path .. "/" .. file):gsub(pattern, repl)
    assert.equals(1, n, file .. ": " .. pattern)
    H.write_file(path .. "/" .. file, json)
  end

  local function refused_by_every_operation(path, file, msg)
    local function cli(script) return function(args) return H.script(script, args) end end
    H.refuses_unchanged(path, cli("expire.lua"),
                        {path, "--retain-min", "1", "--older-than", "0s", "--max-deletes", "1000"}, 1, msg)
    H.refuses_unchanged(path, cli("expire.lua"),
                        {path, "--retain-min", "1", "--older-than", "0s", "--max-deletes", "1000", "--dry-run"}, 1, msg)
    H.refuses_unchanged(path, cli("remove_orphan_files.lua"), {path, "--older-than", "0s", "--allow-young-cutoff"},
                        1, msg)
    H.refuses_unchanged(path, cli("inspect.lua"), {path, "snapshots"}, 1, msg)
    for _, all in ipairs({false, true}) do
      local out, err, rc = H.script("verify.lua", {path, "--json", all and "--all-snapshots" or nil})
      assert.equals(1, rc, err)
      local r = H.decode(out)
      assert.is_false(r.ok)
      local found
      for _, u in ipairs(r.unreadable) do
        if u.path == path .. "/" .. file and u.message:find(msg, 1, true) then found = true end
      end
      assert.is_true(found, "verify (all snapshots: " .. tostring(all) .. ") reports " .. file .. ": " .. out)
    end
  end

  it("a snapshot whose id is not its file name's is refused by every operation and reported by verify", function()
    for _, case in ipairs({{1, "-5"}, {3, "17"}}) do
      with_copy(function(path)
        local file = "snapshot/snapshot-" .. case[1]
        set_field(path, file, '"id" : %d+', '"id" : ' .. case[2])
        refused_by_every_operation(path, file, file .. ": field 'id' is " .. case[2] .. " but the file name says " .. case[1])
        local s, msg, code = assert(paimon.open(path)):snapshot(case[1])
        assert.is_nil(s)
        assert.equals("corrupt", code)
        assert.matches("field 'id'", msg, 1, true)
      end)
    end
  end)

  it("the latest snapshot contradicting its name stops a commit", function()
    with_copy(function(path)
      set_field(path, "snapshot/snapshot-4", '"id" : 4', '"id" : 9')
      H.refuses_unchanged(path, function(args) return H.script("compact_manifest.lua", args) end, {path}, 1,
                          "snapshot/snapshot-4: field 'id' is 9 but the file name says 4")
    end)
  end)

  it("snapshot values Java refuses name the file and the field, in every operation", function()
    for _, case in ipairs({
      {'"commitKind" : "[A-Z]+"', '"commitKind" : "MERGE"', "field 'commitKind' is 'MERGE'"},
      {'"version" : 3', '"version" : 4', "field 'version' is 4"},
      {'"totalRecordCount" : %d+', '"totalRecordCount" : -3', "field 'totalRecordCount' is negative"},
      {'"schemaId" : 0', '"schemaId" : 7', "field 'schemaId' names schema 7, which does not exist"},
      {'"timeMillis" : %d+', '"timeMillis" : -1', "field 'timeMillis' is negative (-1)"},
    }) do
      with_copy(function(path)
        set_field(path, "snapshot/snapshot-2", case[1], case[2])
        refused_by_every_operation(path, "snapshot/snapshot-2", "snapshot/snapshot-2: " .. case[3])
      end)
    end
  end)

  it("a schema naming a field twice is refused with the file and the name", function()
    with_copy(function(path)
      local json = H.read_file(path .. "/schema/schema-0")
      local first = assert(json:match('"name" : "([^"]+)"'))
      local second = assert(select(2, json:match('"name" : "([^"]+)".-"name" : "([^"]+)"')))
      local n
      json, n = json:gsub('"name" : "' .. second:gsub("%p", "%%%0") .. '"', '"name" : "' .. first .. '"', 1)
      assert.equals(1, n)
      H.write_file(path .. "/schema/schema-0", json)
      local t, msg, code = paimon.open(path)
      assert.is_nil(t)
      assert.equals("corrupt", code)
      assert.matches("schema/schema-0: field 'fields' names '" .. first .. "' twice", msg, 1, true)
      local _, err, rc = H.script("verify.lua", {path})
      assert.equals(1, rc)
      assert.matches("schema-0", err, 1, true)
    end)
  end)

  -- issue 22 item 4: a planted hint or metadata file made write, expire and
  -- orphan cleaning read forever (a symlink to /dev/zero, a FIFO nobody
  -- writes) or allocate what its size said (a sparse 16 GiB snapshot).
  it("a hint or metadata file that is no regular file or too large is refused promptly, naming it", function()
    local dir = H.tmpdir()
    local tp = dir .. "/t"
    local input = dir .. "/rows.jsonl"
    assert.equals(0, select(3, H.script("create_table.lua", {tp, "--field", "id:BIGINT"})))
    H.write_file(input, '{"id": 1}\n')
    for _ = 1, 2 do assert.equals(0, select(3, H.script("write.lua", {tp, "--input", input}))) end
    local function refused(what, msg, scripts)
      local all = {
        write = {"write.lua", tp, "--input", input},
        expire = {"expire.lua", tp, "--retain-min", "1", "--older-than", "0s"},
        orphans = {"remove_orphan_files.lua", tp, "--older-than", "0s", "--allow-young-cutoff"},
      }
      for _, name in ipairs(scripts) do
        -- the guard: the old code never ended here
        local parts = {"timeout", "30", H.sh_quote(H.cli)}
        for _, a in ipairs(all[name]) do parts[#parts + 1] = H.sh_quote(a) end
        local _, err, rc = H.run(table.concat(parts, " "))
        assert.equals(1, rc, what .. ", " .. name .. ": " .. err)
        assert.matches(msg, err, 1, true)
      end
    end
    local latest, earliest = tp .. "/snapshot/LATEST", tp .. "/snapshot/EARLIEST"
    os.remove(latest)
    assert.equals(0, select(3, H.run("ln -s /dev/zero " .. H.sh_quote(latest))))
    refused("LATEST -> /dev/zero", "snapshot/LATEST: not a regular file (a character device)",
            {"write", "expire", "orphans"})
    os.remove(latest)
    os.remove(earliest)
    assert.equals(0, select(3, H.run("mkfifo " .. H.sh_quote(earliest))))
    refused("EARLIEST a FIFO", "snapshot/EARLIEST: not a regular file (a FIFO)", {"expire"})
    os.remove(earliest)
    assert.equals(0, select(3, H.run("truncate -s 16G " .. H.sh_quote(tp .. "/snapshot/snapshot-2"))))
    refused("a sparse 16 GiB snapshot",
            "snapshot/snapshot-2 is 17179869184 bytes, more than the 16 MiB allowed for metadata",
            {"write", "expire", "orphans"})
    H.rmdir(dir)
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
