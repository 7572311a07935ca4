-- Upkeep's Lua steps. The upkeep itself (Java's TableCommitImpl.expire:
-- consumers, snapshots, changelogs, partitions, automatic tags, tag expiry)
-- is the C core's (src/core/pm_upkeep.c), run after every commit of c:commit()
-- and by t:upkeep() (maintain.lua). The core asks hook(t)(step, info) first
-- for each step; this module answers for the steps that live in Lua:
--
--   expire_partitions  always: lua/paimon/partition_expire.lua, Java's rules,
--                      or the table's partition policy
--   expire_snapshots   with a snapshot policy: lua/paimon/expire.lua
--   expire_tags        with a tag policy: lua/paimon/tag_expire.lua
--
-- and returns false for the others (the core runs its own). info: {dry_run,
-- threads, now (epoch ms), schema_id, options}: the options of the latest
-- schema, read by the core at this run (the Table object may predate them),
-- which is why every option is handed to the runners explicitly here.
--
-- A policy is named by a table option (so every writer honours it), or for
-- one run by the caller (maintain.lua --policy KIND=FILE):
--   paimon-lua.policy.expire             snapshot expiration (kind expire)
--   paimon-lua.policy.partition-expire   partition expiration (kind partition_expire)
--   paimon-lua.policy.tag-expire         tag expiration (kind tag_expire)
-- Java Paimon keeps options it does not know, so the names do no harm there.
local core = require "paimon.core"

local M = {}

M.POLICY_OPTIONS = {
  expire = "paimon-lua.policy.expire",
  partition_expire = "paimon-lua.policy.partition-expire",
  tag_expire = "paimon-lua.policy.tag-expire",
}

local function option(info, key)
  local v = info.options[key]
  if v == nil then v = core.defaults[key] end
  return v
end

local function int_option(info, key)
  local v = option(info, key)
  if v == nil then return nil end
  local n = tonumber(v)
  if not n or n ~= math.floor(n) then error("table option " .. key .. ": not an integer: " .. tostring(v), 0) end
  return n
end

local function duration_option(info, key)
  local v = option(info, key)
  if v == nil then return nil end
  local ms, err = core.parse_duration_ms(tostring(v))
  if not ms then error("table option " .. key .. ": " .. tostring(err), 0) end
  return ms
end

local function policy_of(info, overrides, kind)
  if overrides and overrides[kind] ~= nil then return overrides[kind] end
  return info.options[M.POLICY_OPTIONS[kind]]
end

local steps = {}

function steps.expire_partitions(t, info, overrides)
  local o = {
    expiration_time = duration_option(info, "partition.expiration-time"),
    strategy = option(info, "partition.expiration-strategy"),
    timestamp_formatter = info.options["partition.timestamp-formatter"],
    timestamp_pattern = info.options["partition.timestamp-pattern"],
    max_expires = int_option(info, "partition.expiration-max-num"),
    dry_run = info.dry_run,
    policy = policy_of(info, overrides, "partition_expire"),
  }
  return require("paimon.partition_expire").run(t, o)
end

function steps.expire_snapshots(t, info, overrides)
  local policy = policy_of(info, overrides, "expire")
  if policy == nil then return false end
  local o = {
    retain_min = int_option(info, "snapshot.num-retained.min"),
    retain_max = int_option(info, "snapshot.num-retained.max"),
    older_than = info.now - duration_option(info, "snapshot.time-retained"),
    threads = info.threads, dry_run = info.dry_run, now = info.now, policy = policy,
  }
  local limit = int_option(info, "snapshot.expire.limit")
  if limit and limit < 1 then return false end   -- Java's kill switch: the core's step expires nothing
  o.max_deletes = limit
  local r, msg, code = require("paimon.expire").run(t, o)
  if not r then return nil, msg, code end
  return r
end

function steps.expire_tags(t, info, overrides)
  local policy = policy_of(info, overrides, "tag_expire")
  if policy == nil then return false end
  return require("paimon.tag_expire").run(t, {policy = policy, dry_run = info.dry_run, now = info.now,
                                               num_retained_max = 2147483647, threads = info.threads})
end

-- hook(t [, overrides]) -> function(step, info): overrides = {expire = p,
-- partition_expire = p, tag_expire = p}, policies for this run (any shape
-- paimon.policy_loader takes) over the table's options.
function M.hook(t, overrides)
  if overrides ~= nil then
    if type(overrides) ~= "table" then error("upkeep: policies must be a table, got " .. type(overrides), 2) end
    for k in pairs(overrides) do
      if not M.POLICY_OPTIONS[k] then
        error("upkeep: unknown policy kind '" .. tostring(k) .. "' (known: " .. table.concat(M.policy_kinds(), ", ") .. ")", 2)
      end
    end
  end
  return function(step, info)
    local f = steps[step]
    if not f then return false end
    local ok, r, msg, code = pcall(f, t, info, overrides)
    if not ok then return nil, tostring(r), "error" end
    return r, msg, code
  end
end

-- ---- reporting --------------------------------------------------------------

-- The result ready for the JSON encoder: every empty table is an empty
-- list (the result's objects always have fields; its lists may be empty).
function M.json_ready(v)
  if type(v) ~= "table" then return v end
  if next(v) == nil then return require("paimon.json").array(v) end
  for k, x in pairs(v) do v[k] = M.json_ready(x) end
  return v
end

local function count(v) return type(v) == "table" and #v or 0 end

-- What a done step did, in a few words ("expired 3 snapshots, 12 files").
function M.describe(step)
  local r = step.result or {}
  local parts = {}
  local function add(fmt, n) if type(n) == "number" and n > 0 then parts[#parts + 1] = string.format(fmt, n) end end
  local op = step.operation
  if op == "expire_consumers" then add("%d consumers expired", r.count)
  elseif op == "expire_snapshots" then add("%d snapshots expired", r.expired)
  elseif op == "expire_changelogs" then add("%d changelogs expired", r.expired)
  elseif op == "expire_partitions" then add("%d partitions dropped", count(r.partitions))
  elseif op == "auto_tags" then add("%d tags created", count(r.created)); add("%d tags expired", r.deleted_tags)
  elseif op == "expire_tags" then add("%d tags expired", r.deleted_tags)
  end
  if op ~= "expire_partitions" then add("%d files deleted", r.files) end
  if #parts == 0 then return "nothing to do" end
  return table.concat(parts, ", ")
end

-- Lines for people: one per step (skipped steps only when verbose).
function M.lines(res, verbose)
  local out = {}
  if res.error then out[#out + 1] = "upkeep failed: " .. tostring(res.error) end
  if res.write_only then out[#out + 1] = "write-only=true: nothing to do" end
  for _, s in ipairs(res.steps or {}) do
    if s.status == "failed" then
      out[#out + 1] = string.format("%-18s failed: %s (%s)", s.operation, tostring(s.error), tostring(s.code))
    elseif s.status == "done" then
      out[#out + 1] = string.format("%-18s %s", s.operation, M.describe(s))
    elseif verbose then
      out[#out + 1] = string.format("%-18s skipped: %s", s.operation, tostring(s.reason))
    end
  end
  return out
end

-- After a commit (write.lua): a line on stderr when upkeep removed something
-- or failed; silent otherwise.
function M.report_after_commit(res, out, prefix)
  if type(res) ~= "table" then return end
  out = out or io.stderr
  prefix = prefix or "upkeep: "
  local acted = (res.errors or 0) > 0
  for _, s in ipairs(res.steps or {}) do
    if s.status == "done" and M.describe(s) ~= "nothing to do" then acted = true end
  end
  if not acted then return end
  for _, l in ipairs(M.lines(res, false)) do
    if not l:match("nothing to do$") then out:write(prefix, l, "\n") end
  end
end

-- ---- maintain: one table ------------------------------------------------------

-- The keys of a result, in the order --json writes them.
M.JSON_ORDER = {"table", "branch", "schema_id", "dry_run", "write_only", "reason", "steps", "expired_snapshots",
                "deleted_files", "errors", "error", "code", "duration_ms"}

-- maintain(t, opts) -> result: the commit's upkeep, once, on the open Table
-- t (maintain.lua; issue 25's warehouse run calls it per table). opts:
-- dry_run, threads, now, policies = {expire = p, partition_expire = p,
-- tag_expire = p}. The result never raises for a failed step: it is in
-- result.steps and counted in result.errors. Misuse raises.
function M.maintain(t, opts)
  opts = opts or {}
  local r, msg, code = t:upkeep({dry_run = opts.dry_run, threads = opts.threads, now = opts.now}, opts.policies)
  if not r then
    return {table = t:path(), branch = opts.branch or "main", dry_run = opts.dry_run and true or false,
            steps = {}, errors = 1, error = msg, code = code, expired_snapshots = 0, deleted_files = 0}
  end
  return r
end

-- Human output of one table's run: a line per operation.
function M.print_human(res, out)
  out = out or io.stdout
  out:write(string.format("%s%s (branch %s)%s\n", res.dry_run and "dry run: " or "", tostring(res.table),
                          tostring(res.branch), res.schema_id and (", schema " .. res.schema_id) or ""))
  if res.error then out:write("  failed: ", tostring(res.error), "\n") end
  if res.write_only then out:write("  write-only=true: the table's writers do no upkeep; maintain runs it\n") end
  for _, s in ipairs(res.steps or {}) do
    if s.status == "done" then
      out:write(string.format("  %-18s %s%s\n", s.operation, res.dry_run and "would be: " or "", M.describe(s)))
    elseif s.status == "failed" then
      out:write(string.format("  %-18s FAILED (%s): %s\n", s.operation, tostring(s.code), tostring(s.error)))
    else
      out:write(string.format("  %-18s skipped: %s\n", s.operation, tostring(s.reason)))
    end
  end
  out:write(string.format("%d snapshot(s) %s, %d file(s) %s, %d error(s), %d ms\n", res.expired_snapshots or 0,
                          res.dry_run and "would expire" or "expired", res.deleted_files or 0,
                          res.dry_run and "would be deleted" or "deleted", res.errors or 0, res.duration_ms or 0))
end

-- The kinds a caller may name a policy for (maintain.lua --policy KIND=FILE).
function M.policy_kinds()
  local out = {}
  for k in pairs(M.POLICY_OPTIONS) do out[#out + 1] = k end
  table.sort(out)
  return out
end

return M
