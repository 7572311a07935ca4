-- Paimon's duration syntax (Java TimeUtils.parseDuration) in plain Lua, for
-- the places that must not load the C core (resty.paimon's caller side runs
-- in the nginx worker's own VM, where paimon.core is never loaded). It is
-- held to the core's parser (paimon.core.parse_duration_ms) by
-- spec/expire_spec.lua; maint.parse_duration and resty's parse_duration_ms
-- are this one.
local M = {}

local floor = math.floor

-- milliseconds per unit; micro- and nanoseconds divide (truncating, as Java)
local MUL = {
  d = 86400000, day = 86400000, days = 86400000,
  h = 3600000, hour = 3600000, hours = 3600000,
  min = 60000, m = 60000, minute = 60000, minutes = 60000,
  s = 1000, sec = 1000, secs = 1000, second = 1000, seconds = 1000,
  ms = 1, milli = 1, millis = 1, millisecond = 1, milliseconds = 1,
}
local DIV = {
  ["\194\181s"] = 1000, micro = 1000, micros = 1000, microsecond = 1000, microseconds = 1000,
  ns = 1000000, nano = 1000000, nanos = 1000000, nanosecond = 1000000, nanoseconds = 1000000,
}

-- "90s", "30 min", "1h", "7d", "100ms"; a bare number is milliseconds ->
-- milliseconds, or nil (not a duration, or beyond 2^53 ms: LuaJIT would lose
-- precision, and a huge duration must not turn into a small one).
function M.parse_ms(s)
  if type(s) ~= "string" then return nil end
  local num, unit = s:match("^%s*(%d+)%s*(.-)%s*$")
  if not num then return nil end
  num = num:gsub("^0+(%d)", "%1")
  if #num > 19 then return nil end
  local n = tonumber(num)
  unit = unit:lower()
  local v
  if unit == "" then v = n
  elseif MUL[unit] then
    -- checked before multiplying: Lua 5.4 integers would wrap around
    if n > 9007199254740991 / MUL[unit] then return nil end
    v = n * MUL[unit]
  elseif DIV[unit] then v = floor(n / DIV[unit])
  else return nil end
  if v > 9007199254740991 then return nil end
  return v
end

return M
