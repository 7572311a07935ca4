-- resty.paimon outside nginx (its jobs run inline when ngx is absent), under
-- Lua 5.4 and LuaJIT alike. The real nginx is scripts/nginx-test.sh.
local H = require "helper"

local SAMPLE = H.root .. "/examples/sample/warehouse/demo.db/orders"

describe("resty.paimon", function()
  local rp

  lazy_setup(function()
    local before = {}
    for k in pairs(_G) do before[k] = true end
    package.loaded["resty.paimon"] = nil
    rp = require "resty.paimon"
    for k in pairs(_G) do
      assert(before[k], "resty.paimon created the global " .. tostring(k))
    end
  end)

  it("has the OpenResty module shape", function()
    assert.is_string(rp._VERSION)
    assert.is_function(rp.new)
    assert.is_function(rp.job)
    local p = rp.new{ pool = "io", warehouse = "/wh" }
    assert.equals("io", p.pool)
    assert.equals(rp.snapshots, p.snapshots)
  end)

  it("maps db/table names inside the warehouse and refuses anything else", function()
    assert.equals("/wh/demo.db/orders", rp.table_path("/wh", "demo", "orders"))
    assert.equals("/wh/demo.db/orders", rp.table_path("/wh/", "demo", "orders"))
    assert.equals("/wh/d_1.db/t-2.x", rp.new{ warehouse = "/wh" }:table_path("d_1", "t-2.x"))
    for _, bad in ipairs{ "..", ".", "", "a/b", "../x", ".hidden", "a b", "a%2Fb", "a\0b", "a\\b",
                          "~", string.rep("x", 256), "é" } do
      local path, err = rp.table_path("/wh", bad, "orders")
      assert.is_nil(path, bad)
      assert.matches("invalid database name", err)
      path, err = rp.table_path("/wh", "demo", bad)
      assert.is_nil(path, bad)
      assert.matches("invalid table name", err)
    end
    assert.is_nil(rp.table_path("/wh", 42, "orders"))
    assert.has_error(function() rp.table_path(nil, "a", "b") end)
  end)

  it("snapshots() gives the rows of inspect.lua snapshots --json, 64-bit exact", function()
    local rows = assert(rp.snapshots(SAMPLE))
    assert.equals(5, #rows)
    local out, err, code = H.paimon_lua({"inspect.lua", SAMPLE, "snapshots", "--json"})
    assert.equals(0, code, err)
    assert.equals((out:gsub("%s+$", "")), rp.to_json(rows, rp.COLUMNS.snapshots))
    assert.matches('"commit_identifier":9223372036854775807', rp.to_json(rows, rp.COLUMNS.snapshots))
  end)

  it("latest() gives the latest snapshot row", function()
    local row = assert(rp.latest(SAMPLE))
    assert.equals(5, row.snapshot_id)
    assert.equals("APPEND", row.commit_kind)
    local all = assert(rp.snapshots(SAMPLE))
    assert.equals(rp.to_json(all[5], rp.COLUMNS.snapshots), rp.to_json(row, rp.COLUMNS.snapshots))
  end)

  it("files() gives the live files of inspect.lua files --json", function()
    local rows = assert(rp.files(SAMPLE))
    local out, err, code = H.paimon_lua({"inspect.lua", SAMPLE, "files", "--json"})
    assert.equals(0, code, err)
    local want = H.cjson.decode(out)
    assert.equals(#want, #rows)
    for i, w in ipairs(want) do
      assert.equals(w.file_path, rows[i].file_path)
      assert.equals(w.record_count, rows[i].record_count)
      assert.equals(w.file_size_in_bytes, rows[i].file_size_in_bytes)
      assert.same(w.partition, rows[i].partition)
    end
    local some = assert(rp.files(SAMPLE, { partition = { dt = "2026-11-03" } }))
    assert.is_true(#some >= 1 and #some < #rows)
    for _, f in ipairs(some) do assert.equals("2026-11-03", f.partition.dt) end
    assert.equals(2, #assert(rp.files(SAMPLE, { limit = 2 })))
    assert.equals(#rows, #assert(rp.files(SAMPLE, { snapshot = 5 })))
  end)

  it("returns nil, err, code for a missing table; raises on misuse", function()
    local rows, err, code = rp.snapshots(H.root .. "/no/such/table")
    assert.is_nil(rows)
    assert.is_string(err)
    assert.equals("notfound", code)
    local row, _, code2 = rp.latest(H.root .. "/no/such/table")
    assert.is_nil(row)
    assert.equals("notfound", code2)
    assert.has_error(function() rp.snapshots() end)
    assert.has_error(function() rp.latest(42) end)
    assert.has_error(function() rp.new("x") end)
    local r, e = rp.job("nope")
    assert.is_nil(r)
    assert.matches("unknown job", e)
  end)

  it("returns plain data only (what may cross Lua VMs)", function()
    local function check(v, depth)
      local t = type(v)
      assert.is_true(t == "string" or t == "number" or t == "boolean" or t == "table", t)
      if t == "table" then
        for k, x in pairs(v) do
          assert.is_true(type(k) == "string" or type(k) == "number")
          check(x, depth + 1)
        end
      end
    end
    check(assert(rp.snapshots(SAMPLE)), 0)
    check(assert(rp.files(SAMPLE)), 0)
    check(rp.plain({ a = require("paimon").null, b = { 1, print } }), 0)
  end)

  it("expire() runs Table:expire_snapshots with a policy, or reports the latest", function()
    local t, dir = H.copy_table(SAMPLE)
    local report = assert(rp.expire(t, { retain_min = 3, retain_max = 3 }))
    assert.equals(5, report.latest_snapshot_id)
    if report.expired then
      assert.equals(2, report.expired.expired)
      local ids = {}
      for _, s in ipairs(assert(rp.snapshots(t))) do ids[#ids + 1] = s.snapshot_id end
      assert.same({3, 4, 5}, ids)
    else
      assert.matches("unavailable", report.expire)
    end
    local nope, err = rp.expire(t, { retain_min = 0 })
    if report.expired then
      assert.is_nil(nope)
      assert.matches("retain_min", err)
    end
    H.rmdir(dir)
  end)

  it("to_json prints integers exactly and escapes strings", function()
    assert.equals('{"a":1,"b":"x\\"y\\n"}', rp.to_json{ a = 1, b = 'x"y\n' })
    assert.equals('[1,2.5,true]', rp.to_json{ 1, 2.5, true })
    assert.equals('[]', rp.to_json{})
    assert.equals('{"snapshot_id":9223372036854775807,"commit_user":"9"}',
                  rp.to_json({ snapshot_id = "9223372036854775807", commit_user = "9" },
                             { "snapshot_id", "commit_user" }))
    assert.equals('{"snapshot_id":1795987228203}', rp.to_json{ snapshot_id = 1795987228203 })
  end)
end)
