-- Partition expiration: Java Paimon's rules (NormalPartitionExpire,
-- PartitionValuesTimeExpireStrategy, PartitionUpdateTimeExpireStrategy,
-- PartitionTimeExtractor; paimon-format.md §8.4) and the runner behind
-- t:expire_partitions(opts) and scripts/expire_partitions.lua.
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

-- ---- the runner ----------------------------------------------------------------

M.STRATEGIES = {["values-time"] = true, ["update-time"] = true}

local function load_policy(policy)
  if policy == nil then return M.expired end
  if type(policy) == "function" then return policy end
  if type(policy) == "table" and type(policy.expired) == "function" then return policy.expired end
  if type(policy) == "string" then
    local chunk, err = loadfile(policy)
    if not chunk then error("cannot load policy " .. policy .. ": " .. err, 0) end
    local ok, pol = pcall(chunk)
    if not ok then error("policy " .. policy .. " failed: " .. tostring(pol), 0) end
    if type(pol) == "table" and type(pol.expired) == "function" then pol = pol.expired end
    if type(pol) ~= "function" then
      error("policy " .. policy .. " must return a function(partition, ctx) or {expired = function}", 0)
    end
    return pol
  end
  error("policy must be a function, a table with expired or a file name", 0)
end

-- Resolved options (flags over table options over Java's defaults); raises
-- with a message on invalid values.
function M.resolve_options(t, opts)
  opts = opts or {}
  local o = {}
  local exp = opts.expiration_time
  local src = "expiration_time"
  if exp == nil then exp, src = t:option("partition.expiration-time"), "partition.expiration-time" end
  if exp == nil then
    error("no expiration time: pass --expiration-time (expiration_time) or set partition.expiration-time", 0)
  end
  if type(exp) == "number" then o.expiration_ms = exp
  else
    local ms, err = core.parse_duration_ms(tostring(exp))
    if not ms then error(src .. ": " .. err, 0) end
    o.expiration_ms = ms
  end
  if o.expiration_ms < 0 then error(src .. " must not be negative", 0) end
  o.strategy = opts.strategy or t:option("partition.expiration-strategy") or "values-time"
  if not M.STRATEGIES[o.strategy] and not opts.policy then
    error("unknown partition expiration strategy '" .. tostring(o.strategy) .. "' (values-time or update-time)", 0)
  end
  o.formatter = opts.timestamp_formatter or t:option("partition.timestamp-formatter")
  o.pattern = opts.timestamp_pattern or t:option("partition.timestamp-pattern")
  if o.formatter then
    local ok, err = M.compile_formatter(o.formatter)
    if not ok then error(err, 0) end
  end
  local max = opts.max_expires
  if max == nil then
    local v = t:option("partition.expiration-max-num") or "100"
    max = toint((v))
    if not max then error("partition.expiration-max-num: not an integer: " .. v, 0) end
  end
  if type(max) ~= "number" or max ~= floor(max) or max < 1 then error("max_expires must be a positive integer", 0) end
  o.max_expires = max
  o.now = opts.now or core.wall_clock_ms()
  return o
end

-- t:expire_partitions(opts) -> result | nil, msg, code
-- opts: expiration_time ("7d" or millis), strategy, timestamp_formatter,
-- timestamp_pattern, max_expires, policy (function, {expired = f} or file),
-- dry_run, now (wall millis, for tests), max_attempts, on_retry,
-- on_unparseable = function(p, reason), commit_user. Unknown options raise.
M.OPTIONS = {"expiration_time", "strategy", "timestamp_formatter", "timestamp_pattern", "max_expires", "policy",
             "dry_run", "now", "max_attempts", "on_retry", "on_unparseable", "commit_user"}

function M.run(t, opts)
  opts = opts or {}
  core.check_options(opts, "expire_partitions", M.OPTIONS)
  local started = core.wall_clock_ms()
  local o = M.resolve_options(t, opts)
  local pred = load_policy(opts.policy)
  local keys = t:schema().partition_keys
  if #keys == 0 then return nil, t:path() .. ": the table is not partitioned", "unsupported" end
  local parts, sid, code = t:partition_entries()
  if not parts then return nil, sid, code end
  local ctx = {strategy = o.strategy, now = o.now, expiration_ms = o.expiration_ms,
               expire_before = o.now - o.expiration_ms, formatter = o.formatter, pattern = o.pattern,
               keys = keys, default = M.expired}
  local compiled = o.formatter and M.compile_formatter(o.formatter)
  ctx.parse = function(text)
    if compiled then return parse_with(compiled, text, o.formatter) end
    return M.parse_default(text)
  end
  local expired, failures = {}, {}
  for _, p in ipairs(parts) do
    local ok, res, reason = pcall(pred, p, ctx)
    if not ok then
      return nil, "partition expiration policy failed on " .. p.path .. ": " .. tostring(res), "error"
    end
    if res == true then
      expired[#expired + 1] = p
    elseif res == nil then
      local f = {kind = "unparseable", path = p.path, partition = p.partition,
                 reason = reason or "the policy gave no answer"}
      failures[#failures + 1] = f
      if opts.on_unparseable then opts.on_unparseable(p, f.reason) end
    end
  end
  -- Java: sorted by the values joined with ",", limited to max-num
  local function sort_key(p)
    local v = {}
    for i = 1, #keys do
      local x = p.values[i]
      v[i] = (x == nil or x == null) and "null" or x
    end
    return table.concat(v, ",")
  end
  table.sort(expired, function(a, b)
    local ka, kb = sort_key(a), sort_key(b)
    if ka ~= kb then return ka < kb end
    return a.path < b.path
  end)
  local candidates = #expired
  local chosen = {}
  for i = 1, math.min(#expired, o.max_expires) do chosen[i] = expired[i].binary_row end
  local r, msg
  r, msg, code = t:drop_partitions(nil, {exact = chosen, dry_run = opts.dry_run,
                                         max_attempts = opts.max_attempts, on_retry = opts.on_retry,
                                         commit_user = opts.commit_user})
  if not r then return nil, msg, code end
  r.dry_run = opts.dry_run and true or false
  r.strategy = o.strategy
  r.expiration_ms = o.expiration_ms
  r.now = o.now
  r.expire_before = ctx.expire_before
  r.max_expires = o.max_expires
  r.checked = #parts
  r.candidates = candidates
  r.limited = candidates > o.max_expires
  r.scanned_snapshot_id = sid
  for _, f in ipairs(failures) do r.failures[#r.failures + 1] = f end
  r.unparseable = #failures
  r.duration_ms = core.wall_clock_ms() - started
  return r
end

return M
