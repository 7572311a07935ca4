-- The two JSON encoders: paimon.json (Lua, for resty.paimon's caller VM)
-- and paimon.core.json_encode (C, for output streamed row by row). Same
-- rules, so the same bytes for every value; both checked against cjson's
-- decoding too. Runs on Lua 5.4 and LuaJIT (whose numbers are all doubles).
local core = require("paimon.core")
local json = require("paimon.json")
local cjson = require("cjson")

local function c_encode(v, order) return core.json_encode(v, order, json.array_mt) end

describe("paimon.core.json_encode", function()
  it("writes what paimon.json writes for hand-picked values", function()
    local cases = {
      {1, 2, 3}, {}, json.array{}, json.array{1}, {a = json.array{}},
      {b = 1, a = "x\n\"\1\127\\/\t\b\f\r", [3] = 4},
      {x = 0.1, y = 1e300, z = -0.0, w = 0 / 0, inf = math.huge, ninf = -math.huge, k = 1.5, t = 1 / 3},
      {i = math.maxinteger or 2 ^ 62, m = math.mininteger or -2 ^ 62, j = 2 ^ 53, neg = -7},
      {core.null, true, false}, {[1] = 1, [3] = 3}, {[1.5] = "f"},
      {row = {z = 1, a = {z = 2, a = 3}}}, "caf\195\169", 42, 2.5, true, core.null,
    }
    for _, v in ipairs(cases) do
      assert.are.equal(json.encode_lua(v), c_encode(v))
      assert.are.equal(json.encode_lua(v, {"z", "row", "missing"}), c_encode(v, {"z", "row", "missing"}))
    end
  end)

  it("writes what paimon.json writes for 2000 random rows", function()
    local rnd = math.random
    math.randomseed(20261202)
    local keys = {"snapshot_id", "file_name", "a", "b", "z", "partition", "x y", "\"q\""}
    local function value(depth)
      local k = rnd(depth > 2 and 6 or 8)
      if k == 1 then return rnd(-1000, 1000) * math.floor(2 ^ rnd(0, 52))
      elseif k == 2 then return (rnd() - 0.5) * 10 ^ rnd(-20, 20)
      elseif k == 3 then
        local t = {}
        for i = 1, rnd(0, 12) do t[i] = string.char(rnd(0, 255)) end
        return table.concat(t)
      elseif k == 4 then return rnd(2) == 1
      elseif k == 5 then return core.null
      elseif k == 6 then return rnd(-2 ^ 31, 2 ^ 31)
      elseif k == 7 then
        local t = json.array{}
        for i = 1, rnd(0, 4) do t[i] = value(depth + 1) end
        return t
      else
        local t = {}
        for _ = 1, rnd(0, 5) do t[keys[rnd(#keys)]] = value(depth + 1) end
        return t
      end
    end
    for _ = 1, 2000 do
      local row = {}
      for _ = 1, rnd(1, 8) do row[keys[rnd(#keys)]] = value(0) end
      local c = c_encode(row, {"snapshot_id", "file_name"})
      local l = json.encode_lua(row, {"snapshot_id", "file_name"})
      if jit and c ~= l then
        -- LuaJIT formats %.16g itself and rounds an exact half up where C
        -- rounds it to even: other digits, the same double
        assert.are.same(cjson.decode(l), cjson.decode(c))
      else
        assert.are.equal(l, c)
      end
      assert.is_table(cjson.decode(c))
    end
  end)

  it("keeps 64-bit integers exact and doubles shortest", function()
    if math.maxinteger then   -- Lua 5.4 integers
      assert.are.equal('[9223372036854775807,-9223372036854775808]',
                       c_encode(json.array{math.maxinteger, math.mininteger}))
    end
    assert.are.equal('[0.1,1e+300,null,123456789012,-2.5e-05]',
                     c_encode(json.array{0.1, 1e300, 0 / 0, 123456789012, -0.000025}))
  end)

  it("is what paimon.json.encode uses once the core is loaded", function()
    local v = {x = 0.1, a = json.array{}, n = core.null}
    assert.are.equal(c_encode(v, {"x"}), json.encode(v, {"x"}))
    local encode = core.json_encode
    core.json_encode = function() return "from C" end
    local ok, got = pcall(json.encode, v)
    core.json_encode = encode
    assert.is_true(ok)
    assert.are.equal("from C", got)
    assert.are.equal('{"a":[],"n":null,"x":0.1}', json.encode_lua(v))
  end)

  it("raises on values JSON cannot hold, without leaking", function()
    assert.has_error(function() c_encode({f = print}) end, "cannot encode a function value as JSON")
    assert.has_error(function() c_encode({[{}] = 1}) end, "cannot encode a table key as JSON")
    local deep = {}
    local t = deep
    for _ = 1, 100 do t.x = {}; t = t.x end
    assert.has_error(function() c_encode(deep) end)
    local cyc = {}
    cyc.self = cyc
    assert.has_error(function() c_encode(cyc) end)
  end)
end)
