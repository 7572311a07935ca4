-- Maintenance --json plans written from C (paimon.core.json_write over a
-- paimon.PathList, option paths_handle): the same bytes as the Lua list
-- encoded by the pure-Lua encoder (the output before), written in pieces
-- without the plan ever being a Lua table, and still JSON lines when
-- writing fails midway. Runs on Lua 5.4 and LuaJIT.
local H = require "helper"
local paimon = require "paimon"
local core = require "paimon.core"
local json = require "paimon.json"
local cli = require "paimon.cli"
local maint = require "paimon.maint"

local BITMAP = "cpp-parquet-append_with_bitmap"
local ORC = "cpp-parquet-append_10-orc-manifests"

-- The key order maint.print_json has always used.
local ORDER = {"expired", "range", "dry_run", "deleted", "bytes", "files", "total_bytes", "directories", "missing",
               "protected", "skipped", "failures", "paths", "duration_ms"}

-- What print_json wrote before: the result as Lua lists, pure-Lua encoded.
local function lua_text(r)
  r.failures = json.array(r.failures)
  r.skipped = json.array(r.skipped)
  if r.paths then r.paths = json.array(r.paths) end
  return json.encode_lua(r, ORDER) .. "\n"
end

-- A file object collecting what is written; fail_at: the write call that
-- raises (nil: none).
local function sink(fail_at)
  local s = {parts = {}, calls = 0}
  function s:write(...)
    self.calls = self.calls + 1
    if self.calls == fail_at then error("disk full (test)", 0) end
    for _, x in ipairs{...} do self.parts[#self.parts + 1] = tostring(x) end
    return self
  end
  function s.flush() return true end
  function s.setvbuf() return true end
  function s:text() return table.concat(self.parts) end
  return s
end

local function print_json_text(r)
  local out = sink()
  maint.print_json(r, out)
  return out:text(), out
end

-- n old orphan data files in bucket-0 of the table at copy.
local function add_orphans(copy, n)
  local names = {}
  for i = 1, n do
    names[i] = string.format("data-%08x-0000-4000-8000-%012x-0.parquet", i, i)
  end
  local dir = copy .. "/bucket-0"
  local _, err, code = H.run("cd " .. H.sh_quote(dir) .. " && touch -d '2 days ago' " .. table.concat(names, " "))
  assert(code == 0, err)
end

-- The dry runs of every operation whose --json prints a plan.
local function plans(t, now)
  return {
    expire = function(extra)
      local o = {retain_min = 1, older_than = now, now = now, dry_run = true}
      for k, v in pairs(extra) do o[k] = v end
      return t:expire_snapshots(o)
    end,
    orphans = function(extra)
      local o = {older_than = now, now = now, allow_young_cutoff = true, dry_run = true}
      for k, v in pairs(extra) do o[k] = v end
      return t:remove_orphan_files(o)
    end,
    changelogs = function(extra)
      local o = {retain_min = 1, older_than = now, now = now, dry_run = true}
      for k, v in pairs(extra) do o[k] = v end
      return t:expire_changelogs(o)
    end,
  }
end

describe("dry-run plans written from C", function()
  it("are byte for byte the Lua encoder's text of the Lua lists, on every Java fixture", function()
    local planned = 0
    for _, fx in ipairs(H.fixture_tables()) do
      if fx.name ~= ORC then
        local copy, dir = H.copy_table(fx.path)
        local t = assert(paimon.open(copy))
        local now = core.now_ms()
        for name, run in pairs(plans(t, now)) do
          local lists = assert(run{})
          local handle = assert(run{paths_handle = true})
          assert.equals("userdata", type(handle.paths), name)
          assert.equals(#lists.paths, #handle.paths)
          planned = planned + #lists.paths
          handle.duration_ms = lists.duration_ms   -- two runs: the only value that differs
          local want = lua_text(lists)
          local got = print_json_text(handle)
          assert.equals(want, got, fx.name .. " " .. name)
          assert.same(H.cjson.decode(want), H.cjson.decode(got))
        end
        t:close()
        H.rmdir(dir)
      end
    end
    assert.is_true(planned > 0)
  end)

  it("stream a large plan in pieces, never holding it as Lua tables", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    add_orphans(copy, 2000)
    local t = assert(paimon.open(copy))
    local run = plans(t, core.now_ms()).orphans
    collectgarbage()
    collectgarbage()
    local base = collectgarbage("count")
    local lists = assert(run{})
    local lists_kb = collectgarbage("count") - base
    local handle = assert(run{paths_handle = true})
    local handle_kb = collectgarbage("count") - base - lists_kb
    assert.equals(2004, #lists.paths)
    assert.equals(2004, #handle.paths)
    -- the Lua lists cost about 2000 tables; the handle a few result fields
    assert.is_true(lists_kb > 200, lists_kb)
    assert.is_true(handle_kb < lists_kb / 10, handle_kb .. " KiB vs " .. lists_kb)
    -- the items read through the handle are the list's items
    for i = 1, #lists.paths, 97 do assert.same(lists.paths[i], handle.paths[i]) end
    assert.same(lists.paths[2004], handle.paths[2004])
    assert.same(lists.paths[1], handle.paths[1])
    assert.is_nil(handle.paths[0])
    assert.is_nil(handle.paths[2005])
    assert.is_nil(handle.paths.path)
    assert.matches("paimon.PathList (2004 paths)", tostring(handle.paths), 1, true)
    handle.duration_ms = lists.duration_ms
    local text, out = print_json_text(handle)
    assert.equals(lua_text(lists), text)
    -- several pieces of at most 64 KiB and a row (then the newline)
    assert.is_true(#out.parts >= 4, #out.parts)
    for i = 1, #out.parts - 2 do assert.is_true(#out.parts[i] <= 64 * 1024 + 512, #out.parts[i]) end
    t:close()
    H.rmdir(dir)
  end)

  it("an error midway still gives JSON lines: the object closed where it stopped, then the error", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    add_orphans(copy, 2000)
    local spec = {name = "plan_test.lua", positional = {"TABLE"}, flags = {json = "boolean"},
                  usage = "usage: plan_test.lua TABLE [--json]"}
    local out = sink(2)   -- the second piece fails
    local real_stdout, real_stderr = io.stdout, io.stderr
    local rc
    local ok, err = pcall(function()
      io.stdout, io.stderr = out, sink()
      rc = cli.run(spec, function(_, pos)
        local t = assert(paimon.open(pos[1]))
        local r = assert(plans(t, core.now_ms()).orphans{paths_handle = true})
        t:close()
        maint.print_json(r)
        return cli.EXIT_OK
      end, {copy, "--json"})
    end)
    io.stdout, io.stderr = real_stdout, real_stderr
    assert.is_true(ok, err)
    assert.equals(cli.EXIT_FAILED, rc)
    local lines = {}
    for line in out:text():gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.equals(2, #lines)
    local first = H.decode(lines[1])
    assert.is_true(first.dry_run)
    assert.is_true(#first.paths > 0 and #first.paths < 2004, #first.paths)
    local second = H.decode(lines[2])
    assert.matches("disk full (test)", second.error, 1, true)
    assert.equals("error", second.code)
    H.rmdir(dir)
  end)

  it("a file that refuses the write is an io failure, not a crash", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local t = assert(paimon.open(copy))
    local r = assert(plans(t, core.now_ms()).orphans{paths_handle = true})
    t:close()
    local refusing = {write = function() return nil, "No space left on device" end}
    local ok, msg, code = core.json_write(refusing, r, ORDER, json.array_mt)
    assert.is_nil(ok)
    assert.matches("writing JSON: No space left on device", msg, 1, true)
    assert.equals("io", code)
    assert.has_error(function() core.json_write(nil, r) end)
    assert.has_error(function() core.json_write(5, r) end)
    local ok2, err = pcall(core.json_write, 5, r)
    assert.is_false(ok2)
    assert.matches("a file (an object with a write method) expected", err, 1, true)
    H.rmdir(dir)
  end)

  it("paths_handle is a boolean option of the planning methods", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local t = assert(paimon.open(copy))
    assert.has_error(function() t:remove_orphan_files{dry_run = true, paths_handle = "yes"} end,
                     "paths_handle must be a boolean, got string")
    -- without a plan (not a dry run) there is nothing to keep: a plain result
    local r = assert(t:expire_snapshots{retain_min = 1, older_than = core.now_ms(), paths_handle = true})
    assert.is_nil(r.paths)
    t:close()
    H.rmdir(dir)
  end)
end)
