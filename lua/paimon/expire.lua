-- Snapshot expiration with a policy: "ask the policy, then expire", the one
-- runner behind t:expire_snapshots{policy = ...}, expire.lua --policy and
-- resty.paimon's expire(). Without a policy the core applies Java's rule
-- itself (lua/paimon/policy/expire.lua is that rule as a policy to copy).
local core = require "paimon.core"
local loader = require "paimon.policy_loader"

local M = {}

local floor = math.floor
local function toint(x)
  x = tonumber(x)
  if x and x == floor(x) and x > -2^63 and x < 2^63 then return x end
  return nil
end

-- Turn a policy answer into an exclusive end id: a number, {keep_from = id}
-- (["until"] = id, its old name: `until` is a Lua keyword) or {keep = {ids}}
-- (only the prefix below the first kept snapshot can go).
function M.answer_end(answer, ctx)
  if answer == nil then return ctx.earliest end
  if type(answer) == "number" then
    local u = toint(answer)
    if not u then error("policy returned a non-integer id", 0) end
    return u
  end
  if type(answer) ~= "table" then error("policy returned a " .. type(answer) .. ", expected a table or an id", 0) end
  local keep_from = answer.keep_from
  if keep_from == nil then keep_from = answer["until"] end
  if keep_from ~= nil then
    local u = toint(keep_from)
    if not u then error("policy returned a non-integer 'keep_from'", 0) end
    return u
  end
  if answer.keep then
    local first = ctx.hard_end
    for _, id in ipairs(answer.keep) do
      if toint(id) and id >= ctx.earliest and id < first then first = id end
    end
    return first
  end
  error("policy must return {keep_from = id}, {keep = {ids}} or an id", 0)
end

local function record(s)
  return {id = s.id, time_millis = s.time_millis, commit_kind = s.commit_kind,
          total_record_count = s.total_record_count}
end

-- A snapshot the policy cannot expire: {id = id}, its other fields read on
-- first use (a snapshot gone meanwhile raises, and the policy fails).
local function lazy_record(t, id)
  return setmetatable({id = id}, {__index = function(r, k)
    if k ~= "time_millis" and k ~= "commit_kind" and k ~= "total_record_count" then return nil end
    local s, msg = t:snapshot(id)
    if not s then error("snapshot " .. tostring(id) .. ": " .. tostring(msg or "gone"), 0) end
    local full = record(s)
    setmetatable(r, nil)
    for key, v in pairs(full) do rawset(r, key, v) end
    return full[k]
  end})
end

-- Ask a policy (any shape paimon.policy_loader takes) where to stop: it
-- sees the snapshots of `range` (Table:expire_range) and the resolved
-- options. Returns the exclusive end id and the policy's reason (or nil);
-- raises "policy failed: ..." or an answer_end error.
function M.ask(t, range, policy)
  policy = loader.get(policy, "expire")
  if range.latest <= 0 then return range.earliest, nil end
  local snapshots = {}
  -- Read what a policy decides on: the snapshots it may expire and the
  -- first it must keep, [earliest, hard_end]. The later ones (they cannot
  -- expire) are records that read their snapshot file only when a field
  -- other than id is asked for: a policy that looks only at the range
  -- costs the range, whatever the length of the history. One listing gives
  -- the ids that exist.
  local ids, msg, code = t:snapshot_ids()
  if not ids then error("cannot list the snapshots: " .. tostring(msg) .. " (" .. tostring(code) .. ")", 0) end
  for _, id in ipairs(ids) do
    if id >= range.earliest and id <= range.latest then
      if id <= range.hard_end then
        local s = t:snapshot(id)
        if s then snapshots[#snapshots + 1] = record(s) end
      else
        snapshots[#snapshots + 1] = lazy_record(t, id)
      end
    end
  end
  local ctx = {earliest = range.earliest, latest = range.latest, retain_min = range.retain_min,
               retain_max = range.retain_max, max_deletes = range.max_deletes, older_than = range.older_than,
               now = range.now, consumer_min = range.consumer_min, hard_end = range.hard_end,
               java_end = range["end"]}
  local ok, answer = pcall(policy, snapshots, ctx)
  if not ok then error("policy failed: " .. tostring(answer), 0) end
  return M.answer_end(answer, ctx), type(answer) == "table" and answer.reason or nil
end

-- run(t, opts) -> result, keep_from | nil, message, code, policy_failed.
-- opts: those of t:expire_snapshots, with `policy` (required here). One
-- clock for the policy and the run; the core still caps the policy's end.
-- Misuse (a bad policy, policy with keep_from) raises; a policy that
-- raised, or gave an answer that is no end, is nil, message, "error", true.
function M.run(t, opts)
  local policy = loader.get(opts.policy, "expire")
  if opts.keep_from ~= nil or opts["until"] ~= nil then
    error("expire_snapshots: options 'policy' and 'keep_from' exclude each other", 0)
  end
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.policy = nil
  if o.now == nil then o.now = core.now_ms() end
  local range, msg, code = t:expire_range(o)
  if not range then return nil, msg, code end
  local ok, stop, reason = pcall(M.ask, t, range, policy)
  if not ok then return nil, tostring(stop), "error", true end
  o.keep_from = stop < 1 and 1 or stop
  local r
  r, msg, code = t:expire_snapshots(o)
  if not r then return nil, msg, code end
  -- a policy's reason names what stopped it
  if r.capped_by == "policy" and type(reason) == "string" then r.capped_by = reason end
  return r, o.keep_from
end

return M
