-- Partition expiration, the runner behind t:expire_partitions(opts),
-- expire_partitions.lua and resty.paimon's expire_partitions(): resolve the
-- options (flags over table options over Java's defaults), ask the policy
-- (default: lua/paimon/policy/partition_expire.lua, Java's rules) about
-- every partition of the latest snapshot, then drop the chosen ones with
-- one OVERWRITE snapshot (t:drop_partitions).
local core = require "paimon.core"
local loader = require "paimon.policy_loader"
local rules = require "paimon.policy.partition_expire"

local M = {}

local null = core.null
local floor = math.floor
local toint = rules.toint

M.STRATEGIES = {["values-time"] = true, ["update-time"] = true}

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
  o.strategy = opts.strategy or t:option("partition.expiration-strategy")
  if not M.STRATEGIES[o.strategy] and not opts.policy then
    error("unknown partition expiration strategy '" .. tostring(o.strategy) .. "' (values-time or update-time)", 0)
  end
  o.formatter = opts.timestamp_formatter or t:option("partition.timestamp-formatter")
  o.pattern = opts.timestamp_pattern or t:option("partition.timestamp-pattern")
  if o.formatter then
    local ok, err = rules.compile_formatter(o.formatter)
    if not ok then error(err, 0) end
  end
  local max = opts.max_expires
  if max == nil then
    local v = t:option("partition.expiration-max-num")
    max = toint((v))
    if not max then error("partition.expiration-max-num: not an integer: " .. tostring(v), 0) end
  end
  if type(max) ~= "number" or max ~= floor(max) or max < 1 then error("max_expires must be a positive integer", 0) end
  o.max_expires = max
  o.now = opts.now or core.wall_clock_ms()
  return o
end

-- t:expire_partitions(opts) -> result | nil, msg, code
-- opts: expiration_time ("7d" or millis), strategy, timestamp_formatter,
-- timestamp_pattern, max_expires, policy (any shape paimon.policy_loader
-- takes), dry_run, now (wall millis, for tests), max_attempts, on_retry,
-- on_unparseable = function(p, reason), commit_user. Unknown options raise.
M.OPTIONS = {"expiration_time", "strategy", "timestamp_formatter", "timestamp_pattern", "max_expires", "policy",
             "dry_run", "now", "max_attempts", "on_retry", "on_unparseable", "commit_user"}

-- Java: sorted by the values joined with ",", limited to max-num
local function sort_key(p, nkeys)
  local v = {}
  for i = 1, nkeys do
    local x = p.values[i]
    v[i] = (x == nil or x == null) and "null" or x
  end
  return table.concat(v, ",")
end

function M.run(t, opts)
  opts = opts or {}
  core.check_options(opts, "expire_partitions", M.OPTIONS)
  local started = core.wall_clock_ms()
  local o = M.resolve_options(t, opts)
  local pred = rules.expired
  if opts.policy ~= nil then pred = loader.get(opts.policy, "partition_expire") end
  local keys = t:schema().partition_keys
  if #keys == 0 then return nil, t:path() .. ": the table is not partitioned", "unsupported" end
  local parts, sid, code = t:partition_entries()
  if not parts then return nil, sid, code end
  local ctx = {strategy = o.strategy, now = o.now, expiration_ms = o.expiration_ms,
               expire_before = o.now - o.expiration_ms, formatter = o.formatter, pattern = o.pattern,
               keys = keys, default = rules.expired, parse = rules.parser(o.formatter)}
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
  table.sort(expired, function(a, b)
    local ka, kb = sort_key(a, #keys), sort_key(b, #keys)
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
