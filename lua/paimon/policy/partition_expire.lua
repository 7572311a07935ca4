-- Default partition-expiration policy: Java Paimon's rules (NormalPartitionExpire,
-- PartitionValuesTimeExpireStrategy, PartitionUpdateTimeExpireStrategy,
-- PartitionTimeExtractor; paimon-format.md §8.4) and the time parsing they
-- use. The runner (t:expire_partitions, expire_partitions.lua) is
-- lua/paimon/partition_expire.lua; policies are described in
-- docs/maintenance.md, "Policies".
--
-- The decision is a predicate an operator can replace (--policy FILE.lua):
--   expired(p, ctx) -> true | false | nil, reason     (nil: unparseable, never expired)
-- p   = {partition = {col = value}, values = {Java toString of each value, in key
--        order}, path = "dt=2026-01-01/", file_count, record_count,
--        file_size_in_bytes, last_file_creation_time (local wall clock millis),
--        binary_row (the serialized partition)}
-- ctx = {strategy, now, expire_before (= now - expiration_ms), expiration_ms,
--        formatter, pattern, keys, parse = function(text) -> millis | nil, err,
--        default = M.expired}
-- All times are local wall-clock millis (LocalDateTime as if UTC), the clock
-- Paimon stores in _CREATION_TIME and compares partition values against.
local core = require "paimon.core"

local M = {}

local null = core.null
local floor = math.floor

-- Lua 5.4 and LuaJIT alike: no //, math.tointeger or math.type here.
local function toint(v)
  local n = tonumber(v)
  if not n or n ~= floor(n) then return nil end
  return math.tointeger and math.tointeger(n) or n
end
M.toint = toint

-- ---- dates --------------------------------------------------------------------

-- days since 1970-01-01 of a proleptic Gregorian date (UTC arithmetic)
local function days_from_civil(y, m, d)
  y = m <= 2 and y - 1 or y
  local era = floor((y >= 0 and y or y - 399) / 400)
  local yoe = y - era * 400
  local doy = floor((153 * (m + (m > 2 and -3 or 9)) + 2) / 5) + d - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end
M.days_from_civil = days_from_civil

local function is_leap(y) return y % 4 == 0 and (y % 100 ~= 0 or y % 400 == 0) end

-- java.time resolution (ResolverStyle.SMART): month 1..12, day 1..31 clamped to
-- the month's last day, hour 0..23 (24:00:00 = next midnight), minute and
-- second 0..59. f: {year, month, day, hour, minute, second, nano}.
-- need_time: LocalDateTime.parse (a time is required) vs LocalDate.parse.
local function resolve(f, text)
  if not f.year or not f.month or not f.day then return nil, "no complete date in '" .. text .. "'" end
  if f.month < 1 or f.month > 12 then return nil, "invalid month " .. f.month .. " in '" .. text .. "'" end
  if f.day < 1 or f.day > 31 then return nil, "invalid day " .. f.day .. " in '" .. text .. "'" end
  if f.year < -999999999 or f.year > 999999999 then return nil, "invalid year in '" .. text .. "'" end
  local dim = ({31, is_leap(f.year) and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31})[f.month]
  local day = math.min(f.day, dim)
  local h, mi, s, nano = f.hour, f.minute, f.second, f.nano
  if h == nil then
    if mi or s or nano then return nil, "a time without hours in '" .. text .. "'" end
    h, mi, s, nano = 0, 0, 0, 0
  else
    if mi == nil and (s or nano) then return nil, "seconds without minutes in '" .. text .. "'" end
    mi, s, nano = mi or 0, s or 0, nano or 0
  end
  local extra_day = 0
  if h == 24 and mi == 0 and s == 0 and nano == 0 then h, extra_day = 0, 1 end
  if h < 0 or h > 23 or mi < 0 or mi > 59 or s < 0 or s > 59 then
    return nil, "invalid time in '" .. text .. "'"
  end
  local days = days_from_civil(f.year, f.month, day) + extra_day
  return ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + floor(nano / 1000000)
end

-- Default parser (PartitionTimeExtractor TIMESTAMP_FORMATTER, then
-- DATE_FORMATTER): yyyy-M-d[ H:m:s[.fraction]] with 1..10 year digits,
-- 1..2 digits for the rest, 1..9 fraction digits.
function M.parse_default(text)
  if type(text) ~= "string" then return nil, "not a string" end
  local y, mo, d, rest = text:match("^(%d+)%-(%d+)%-(%d+)(.*)$")
  if not y or #y > 10 or #mo > 2 or #d > 2 then
    return nil, "'" .. text .. "' does not match yyyy-M-d[ H:m:s[.S]]"
  end
  local f = {year = tonumber(y), month = tonumber(mo), day = tonumber(d)}
  if rest ~= "" then
    local h, mi, s, tail = rest:match("^ (%d+):(%d+):(%d+)(.*)$")
    if not h or #h > 2 or #mi > 2 or #s > 2 then
      return nil, "'" .. text .. "' does not match yyyy-M-d[ H:m:s[.S]]"
    end
    f.hour, f.minute, f.second = tonumber(h), tonumber(mi), tonumber(s)
    if tail ~= "" then
      local frac = tail:match("^%.(%d+)$")
      if not frac or #frac > 9 then return nil, "'" .. text .. "' does not match yyyy-M-d[ H:m:s[.S]]" end
      f.nano = toint(((frac .. "000000000"):sub(1, 9)))
    end
  end
  return resolve(f, text)
end

-- Java DateTimeFormatter.ofPattern subset: y/u (year), M, d, H, m, s (1 or 2
-- letters; 2 = exactly two digits), yy (2000-2099), yyyy (4 digits), S..S
-- (fraction, exactly that many digits), 'quoted' literals and any non-letter
-- literal. Anything else (text months, am/pm, zones, week fields) is refused.
local FIELD = {y = "year", u = "year", M = "month", d = "day", H = "hour", m = "minute", s = "second"}

function M.compile_formatter(pattern)
  if type(pattern) ~= "string" or pattern == "" then return nil, "empty timestamp formatter" end
  local toks, i, n = {}, 1, #pattern
  while i <= n do
    local c = pattern:sub(i, i)
    if c == "'" then
      local j = pattern:find("'", i + 1, true)
      if not j then return nil, "unterminated quote in timestamp formatter '" .. pattern .. "'" end
      local lit = j == i + 1 and "'" or pattern:sub(i + 1, j - 1)
      toks[#toks + 1] = {lit = lit}
      i = j + 1
    elseif c:match("%a") then
      local j = i
      while j < n and pattern:sub(j + 1, j + 1) == c do j = j + 1 end
      local count = j - i + 1
      if c == "S" then
        toks[#toks + 1] = {field = "nano", min = count, max = count, fraction = true}
      elseif FIELD[c] then
        local tk = {field = FIELD[c]}
        if c == "y" or c == "u" then
          if count == 2 then tk.min, tk.max, tk.reduced = 2, 2, true
          elseif count >= 4 then tk.min, tk.max = count, count
          else tk.min, tk.max = count, 19 end
        elseif count == 1 then tk.min, tk.max = 1, 19
        elseif count == 2 then tk.min, tk.max = 2, 2
        else
          return nil, "unsupported pattern letters '" .. pattern:sub(i, j) .. "' in timestamp formatter '" ..
                      pattern .. "'"
        end
        toks[#toks + 1] = tk
      else
        return nil, "unsupported pattern letter '" .. c .. "' in timestamp formatter '" .. pattern .. "'"
      end
      i = j + 1
    else
      toks[#toks + 1] = {lit = c}
      i = i + 1
    end
  end
  -- adjacent value parsing: a variable-width number followed directly by
  -- fixed-width numbers leaves them their digits
  for k, tk in ipairs(toks) do
    if tk.field and tk.min ~= tk.max then
      local reserve = 0
      for q = k + 1, #toks do
        local nx = toks[q]
        if not nx.field or nx.min ~= nx.max then break end
        reserve = reserve + nx.min
      end
      tk.reserve = reserve
    end
  end
  return toks
end

local function parse_with(toks, text, pattern)
  local f, pos, n = {}, 1, #text
  for _, tk in ipairs(toks) do
    if tk.lit then
      if text:sub(pos, pos + #tk.lit - 1) ~= tk.lit then
        return nil, "'" .. text .. "' does not match '" .. pattern .. "'"
      end
      pos = pos + #tk.lit
    else
      local run = text:match("^%d+", pos) or ""
      local take = math.min(#run, tk.max)
      if tk.reserve then take = math.min(take, #run - tk.reserve) end
      if take < tk.min then return nil, "'" .. text .. "' does not match '" .. pattern .. "'" end
      local digits = run:sub(1, take)
      local v = toint((digits))
      if not v then return nil, "'" .. text .. "' does not match '" .. pattern .. "'" end
      if tk.fraction then v = toint(((digits .. "000000000"):sub(1, 9)))
      elseif tk.reduced then v = 2000 + v end
      if f[tk.field] ~= nil and f[tk.field] ~= v then
        return nil, "conflicting values in '" .. text .. "'"
      end
      f[tk.field] = v
      pos = pos + take
    end
  end
  if pos <= n then return nil, "'" .. text .. "' has unparsed text at position " .. (pos - 1) end
  return resolve(f, text)
end

-- parser(formatter) -> function(text) -> wall millis | nil, err: the
-- formatter compiled once (nil: the default parser), as ctx.parse.
function M.parser(formatter)
  if not formatter then return M.parse_default end
  local toks, err = M.compile_formatter(formatter)
  if not toks then return function() return nil, err end end
  return function(text) return parse_with(toks, text, formatter) end
end

-- parse(text, formatter) -> wall millis | nil, err. Java: LocalDateTime.parse,
-- else LocalDate.parse at midnight, with the formatter or the default.
function M.parse_time(text, formatter)
  if not formatter then return M.parse_default(text) end
  local toks, err = M.compile_formatter(formatter)
  if not toks then return nil, err end
  return parse_with(toks, text, formatter)
end

-- Java's Pattern.replaceAll("\\$" + key, value) over the keys in order.
function M.substitute(pattern, keys, values)
  local s = pattern
  for i, k in ipairs(keys) do
    local needle = "$" .. k
    if s:find(needle, 1, true) then
      local v = values[i]
      if v == nil or v == null then return nil, "partition value of '" .. k .. "' is null" end
      local out, from = {}, 1
      while true do
        local a, b = s:find(needle, from, true)
        if not a then break end
        out[#out + 1] = s:sub(from, a - 1)
        out[#out + 1] = v
        from = b + 1
      end
      out[#out + 1] = s:sub(from)
      s = table.concat(out)
    end
  end
  return s
end

-- The default predicate: Java's values-time and update-time strategies.
function M.expired(p, ctx)
  if ctx.strategy == "update-time" then
    local t = p.last_file_creation_time
    if t == nil then return nil, "no _CREATION_TIME on the partition's files" end
    return t < ctx.expire_before
  end
  local text, err
  if ctx.pattern then
    text, err = M.substitute(ctx.pattern, ctx.keys, p.values)
    if not text then return nil, err end
  else
    text = p.values[1]
    if text == nil or text == null then return nil, "partition value is null" end
  end
  local t
  t, err = ctx.parse(text)
  if not t then return nil, "cannot parse a time from " .. err end
  return ctx.expire_before > t
end

return M
