-- JSON encoding with exact 64-bit integers (lua-cjson 2.1 prints integers
-- as doubles and loses ids like 9223372036854775807) and stable key order:
-- the one encoder of the scripts (encode) and of resty.paimon (encode_with).
local M = {}

-- paimon.null (cjson.null's value), from the core only when first needed:
-- resty.paimon's caller VM encodes with this module and never loads the core.
setmetatable(M, {__index = function(t, k)
  if k ~= "null" then return nil end
  local null = require("paimon.core").null
  rawset(t, "null", null)
  return null
end})

local type, pairs, ipairs, tostring, tonumber, next, getmetatable = type, pairs, ipairs, tostring, tonumber,
                                                                    next, getmetatable
local format, concat, sort, rep, floor, huge = string.format, table.concat, table.sort, string.rep, math.floor,
                                               math.huge

local escapes = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or format("\\u%04x", c:byte())
  end) .. '"'
end

M.array_mt = {}
-- Mark an (possibly empty) table as a JSON array.
function M.array(t) return setmetatable(t or {}, M.array_mt) end

local function is_array(t)
  local n = #t
  if n == 0 then return next(t) == nil and getmetatable(t) == M.array_mt end
  for k in pairs(t) do
    if type(k) ~= "number" or k < 1 or k > n or floor(k) ~= k then return false end
  end
  return true
end

-- Integers exactly (Lua 5.4 integers; integral doubles below 2^63, which is
-- what LuaJIT has); other numbers with the fewest digits (15 to 17) that
-- read back as the same double; NaN and infinities null. The C encoder
-- (paimon.core.json_encode, src/lua/lpaimon_json.c) follows the same rules.
local function encode_number(v)
  if math.type and math.type(v) == "integer" then return format("%d", v) end
  if v ~= v or v == huge or v == -huge then return "null" end
  if v == floor(v) and v > -2^63 and v < 2^63 then return format("%d", v) end
  local s = format("%.15g", v)
  if tonumber(s) ~= v then
    s = format("%.16g", v)
    if tonumber(s) ~= v then s = format("%.17g", v) end
  end
  return s
end

-- style: order (keys first in objects; the rest follow sorted), indent,
-- and for resty.paimon's rows: columns = true (order keys always present,
-- null when absent, in the top value and array elements only; only string
-- keys), int_keys (keys whose decimal-string values print as numbers: int64
-- beyond 2^53 under LuaJIT), array_keys (keys whose empty table prints []),
-- lenient = true (other values, e.g. functions, print null instead of
-- raising).
local encode

local function encode_object(v, style, level, row)
  local order, cols = style.order, style.columns
  local keys, seen = {}, {}
  if order and (row or not cols) then
    for _, k in ipairs(order) do
      if cols or v[k] ~= nil then keys[#keys + 1] = k; seen[k] = true end
    end
  end
  local rest = {}
  for k in pairs(v) do
    if not seen[k] and (not cols or type(k) == "string") then rest[#rest + 1] = tostring(k) end
  end
  sort(rest)
  for _, k in ipairs(rest) do keys[#keys + 1] = k end
  local indent = style.indent
  local nl, pad, pad_in, colon = "", "", "", ":"
  if indent then
    nl = "\n"; pad = rep(indent, level); pad_in = rep(indent, level + 1); colon = ": "
  end
  local parts = {}
  for i, k in ipairs(keys) do
    local val = v[k]
    if val == nil and not cols then val = v[tonumber(k)] end
    parts[i] = pad_in .. encode_string(k) .. colon .. encode(val, style, level + 1, k)
  end
  if #parts == 0 then return "{}" end
  return "{" .. nl .. concat(parts, "," .. nl) .. nl .. pad .. "}"
end

encode = function(v, style, level, key, row)
  local t = type(v)
  if v == nil then return "null"
  elseif t == "userdata" and (style.lenient or v == M.null) then return "null"
  elseif t == "boolean" then return tostring(v)
  elseif t == "number" then return encode_number(v)
  elseif t == "string" then
    local ik = style.int_keys
    if ik and ik[key] and v:find("^%-?%d+$") and #v <= 20 then return v end
    return encode_string(v)
  elseif t == "table" then
    local ak = style.array_keys
    if ak and ak[key] and next(v) == nil then return "[]" end
    if is_array(v) then
      local indent = style.indent
      local nl, pad, pad_in = "", "", ""
      if indent then nl = "\n"; pad = rep(indent, level); pad_in = rep(indent, level + 1) end
      local parts = {}
      for i = 1, #v do parts[i] = pad_in .. encode(v[i], style, level + 1, nil, row) end
      if #parts == 0 then return "[]" end
      return "[" .. nl .. concat(parts, "," .. nl) .. nl .. pad .. "]"
    end
    return encode_object(v, style, level, row)
  elseif style.lenient then
    return "null"
  end
  error("cannot encode a " .. t .. " value as JSON", 3)
end

-- encode(value [, key_order [, indent]]): key_order lists keys that come
-- first in every object (the rest follow sorted). Where the core is loaded
-- already (every script), unindented output is encoded by its C encoder
-- (paimon.core.json_encode: the same bytes, held by spec/json_spec.lua, at
-- a fraction of the time and garbage); resty.paimon's caller VM, which
-- never loads the core, keeps this one.
function M.encode(v, order, indent)
  if not indent then
    local core = package.loaded["paimon.core"]
    if core and core.json_encode then return core.json_encode(v, order, M.array_mt) end
  end
  return encode(v, {order = order, indent = indent}, 0, nil, true)
end

-- The Lua encoder itself, whatever is loaded (spec/json_spec.lua).
function M.encode_lua(v, order)
  return encode(v, {order = order}, 0, nil, true)
end

-- encode_with(value, style): the same encoder with a style table (above).
function M.encode_with(v, style)
  return encode(v, style, 0, nil, true)
end

return M
