-- JSON encoding with exact 64-bit integers (lua-cjson 2.1 prints integers
-- as doubles and loses ids like 9223372036854775807) and stable key order.
local M = {}

local null = require("paimon.core").null
M.null = null

local escapes = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}

local function encode_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function is_array(t)
  local n = #t
  if n == 0 then return next(t) == nil and getmetatable(t) == M.array_mt end
  for k in pairs(t) do
    if type(k) ~= "number" or k < 1 or k > n or math.floor(k) ~= k then return false end
  end
  return true
end

M.array_mt = {}
-- Mark an (possibly empty) table as a JSON array.
function M.array(t) return setmetatable(t or {}, M.array_mt) end

local encode

local function encode_number(v)
  if math.type and math.type(v) == "integer" then return string.format("%d", v) end
  if v ~= v or v == math.huge or v == -math.huge then return "null" end
  if v == math.floor(v) and math.abs(v) < 2^53 then return string.format("%d", v) end
  return string.format("%.17g", v)
end

encode = function(v, order, indent, level)
  local t = type(v)
  if v == nil or v == null then return "null"
  elseif t == "boolean" then return tostring(v)
  elseif t == "number" then return encode_number(v)
  elseif t == "string" then return encode_string(v)
  elseif t == "table" then
    local nl, pad, pad_in = "", "", ""
    if indent then
      nl = "\n"; pad = string.rep(indent, level); pad_in = string.rep(indent, level + 1)
    end
    local parts = {}
    if is_array(v) then
      for i = 1, #v do parts[i] = pad_in .. encode(v[i], order, indent, level + 1) end
      if #parts == 0 then return "[]" end
      return "[" .. nl .. table.concat(parts, "," .. nl) .. nl .. pad .. "]"
    end
    local keys, seen = {}, {}
    for _, k in ipairs(order or {}) do
      if v[k] ~= nil then keys[#keys + 1] = k; seen[k] = true end
    end
    local rest = {}
    for k in pairs(v) do
      if not seen[k] then rest[#rest + 1] = tostring(k) end
    end
    table.sort(rest)
    for _, k in ipairs(rest) do keys[#keys + 1] = k end
    for i, k in ipairs(keys) do
      local val = v[k]
      if val == nil then val = v[tonumber(k)] end
      parts[i] = pad_in .. encode_string(k) .. (indent and ": " or ":") .. encode(val, order, indent, level + 1)
    end
    if #parts == 0 then return "{}" end
    return "{" .. nl .. table.concat(parts, "," .. nl) .. nl .. pad .. "}"
  else
    error("cannot encode a " .. t .. " value as JSON", 2)
  end
end

-- encode(value [, key_order [, indent]]): key_order lists keys that come
-- first in every object (the rest follow sorted).
function M.encode(v, order, indent)
  return encode(v, order, indent, 0)
end

return M
