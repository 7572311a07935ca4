-- expire_partitions.lua TABLE [--expiration-time 7d] [--strategy values-time|update-time]
--   [--timestamp-formatter F] [--timestamp-pattern P] [--max-expires N]
--   [--policy FILE.lua] [--branch B] [--dry-run] [--json]
-- Drop the partitions Java Paimon's partition expiration would drop
-- (values-time or update-time), decided from the table state on every run,
-- with one OVERWRITE snapshot. See docs/partitions.md.
local paimon = require "paimon"
local core = require "paimon.core"
local cli = require "paimon.cli"
local maint = require "paimon.maint"
local json = require "paimon.json"
local loader = require "paimon.policy_loader"
local runner = require "paimon.partition_expire"
local rules = require "paimon.policy.partition_expire"

local spec = {
  name = "expire_partitions.lua",
  positional = {"TABLE"},
  flags = {expiration_time = "string", strategy = "string", timestamp_formatter = "string",
           timestamp_pattern = "string", max_expires = "integer", policy = "string", branch = "string",
           max_attempts = "integer", dry_run = "boolean", json = "boolean"},
  usage = [==[
usage: paimon-lua expire_partitions.lua TABLE [options]
  --expiration-time D       expire partitions older than D (7d, 12 h, 30min; Paimon durations);
                            default: the table's partition.expiration-time
  --strategy S              values-time (the time in the partition values, default) or
                            update-time (the newest _CREATION_TIME of the partition's files);
                            default: partition.expiration-strategy
  --timestamp-formatter F   Java DateTimeFormatter pattern of the values (yyyyMMdd, yyyy-MM-dd,
                            yyyy-MM-dd HH:mm:ss, ...); default: partition.timestamp-formatter,
                            else yyyy-M-d[ H:m:s[.S]]
  --timestamp-pattern P     how to build the time text from several columns, e.g. '$dt $hour:00:00'
                            (default: partition.timestamp-pattern, else the first column's value)
  --max-expires N           drop at most N partitions (the first N in value order; default
                            partition.expiration-max-num, 100)
  --policy FILE.lua         a Lua file returning function(partition, ctx) -> true | false | nil, reason
                            (a path or a name found in PAIMON_POLICY_PATH or the bundled policies;
                            default: lua/paimon/policy/partition_expire.lua, Java's rules)
  --branch B                work on branch B instead of main
  --max-attempts N          scan + commit attempts on conflicts (default 3)
  --dry-run                 print the plan, change nothing
  --json                    print one JSON object
Partitions whose values cannot be parsed are reported and never expired.
exit codes: 0 done, 1 failed, 2 usage, 3 conflict]==],
}

local is_tty, human_bytes, partition_rows = maint.stderr_is_tty, maint.human_bytes, maint.partition_rows

local function print_result(r, as_json)
  if as_json then
    local failures = json.array()
    for i, f in ipairs(r.failures) do
      failures[i] = {kind = f.kind, path = f.path or json.null, partition = f.partition or json.null,
                     reason = f.reason}
    end
    local obj = {table = r.table, dry_run = r.dry_run, strategy = r.strategy, expiration_ms = r.expiration_ms,
                 now = r.now, expire_before = r.expire_before, checked = r.checked, candidates = r.candidates,
                 max_expires = r.max_expires, limited = r.limited, unparseable = r.unparseable,
                 snapshot_id = r.snapshot_id or json.null, base_snapshot_id = r.base_snapshot_id or json.null,
                 partitions = json.array(partition_rows(r)), files = r.files, rows = r.rows, bytes = r.bytes,
                 failures = failures, attempts = r.attempts, commits = r.commits, duration_ms = r.duration_ms}
    io.stdout:write(json.encode(obj, {"table", "dry_run", "snapshot_id", "base_snapshot_id", "strategy",
                                      "expiration_ms", "now", "expire_before", "checked", "candidates",
                                      "max_expires", "limited", "unparseable", "files", "rows", "bytes",
                                      "partitions", "kind", "path", "partition", "failures", "attempts",
                                      "commits", "duration_ms"}), "\n")
    return
  end
  local out = io.stdout
  out:write("expire partitions of ", r.table, r.dry_run and " (dry run)" or "", ": ", r.strategy,
            ", expiration ", r.expiration_ms, " ms\n")
  out:write(string.format("%d partition(s) checked, %d expired", r.checked, r.candidates))
  if r.limited then out:write(string.format(", limited to %d by max-expires", r.max_expires)) end
  out:write("\n")
  if #r.partitions > 0 then cli.print_table(partition_rows(r), {"path", "files", "rows", "bytes"}) end
  if r.unparseable > 0 then
    out:write(r.unparseable, " partition(s) not expired because their time cannot be determined:\n")
    for _, f in ipairs(r.failures) do
      if f.kind == "unparseable" then out:write("  ", f.path, "  ", f.reason, "\n") end
    end
  end
  local what = string.format("%d partition(s): %d file(s), %d rows, %s", #r.partitions, r.files, r.rows,
                             human_bytes(r.bytes))
  if r.files == 0 then
    out:write("nothing to drop\n")
  elseif r.dry_run then
    out:write("would drop ", what, " with one OVERWRITE snapshot on top of snapshot ", r.base_snapshot_id, "\n")
  else
    out:write("dropped ", what, ": OVERWRITE snapshot ", r.snapshot_id, "\n")
    out:write("the data files stay until snapshot expiration removes them\n")
  end
  out:write(string.format("done in %d ms\n", r.duration_ms or 0))
end

local function main(opts, pos)
  if opts.expiration_time then
    if opts.expiration_time:match("^%s*%d+%s*$") then
      cli.usage_error("--expiration-time " .. opts.expiration_time .. ": a number without a unit is ambiguous; " ..
                      "give the unit (" .. opts.expiration_time .. "d, " .. opts.expiration_time .. "h, ...)")
    end
    local ms, err = core.parse_duration_ms(opts.expiration_time)
    if not ms then cli.usage_error("--expiration-time: " .. err) end
  end
  if opts.strategy and not runner.STRATEGIES[opts.strategy] then
    cli.usage_error("--strategy must be values-time or update-time, got '" .. opts.strategy .. "'")
  end
  if opts.timestamp_formatter then
    local ok, err = rules.compile_formatter(opts.timestamp_formatter)
    if not ok then cli.usage_error("--timestamp-formatter: " .. err) end
  end
  if opts.max_expires and opts.max_expires < 1 then cli.usage_error("--max-expires must be at least 1") end
  if opts.max_attempts and opts.max_attempts < 1 then cli.usage_error("--max-attempts must be at least 1") end
  if opts.policy then
    opts.policy = loader.find(opts.policy)
    local f = io.open(opts.policy, "r")
    if not f then cli.usage_error("--policy: cannot open " .. opts.policy) end
    f:close()
  end
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  if not opts.expiration_time and not t:option("partition.expiration-time") then
    t:close()
    cli.usage_error("no expiration time: pass --expiration-time or set the table option partition.expiration-time")
  end
  local tty = not opts.json and is_tty()
  if tty then io.stderr:write("scanning the latest snapshot...\n") end
  local r
  r, msg, code = t:expire_partitions{
    expiration_time = opts.expiration_time, strategy = opts.strategy,
    timestamp_formatter = opts.timestamp_formatter, timestamp_pattern = opts.timestamp_pattern,
    max_expires = opts.max_expires, policy = opts.policy, dry_run = opts.dry_run,
    max_attempts = opts.max_attempts,
    on_unparseable = function(p, reason)
      io.stderr:write("expire_partitions.lua: not expiring ", p.path, ": ", reason, "\n")
    end,
    on_retry = function(attempt, why)
      io.stderr:write("expire_partitions.lua: attempt ", attempt, " conflicted, retrying: ", why, "\n")
    end}
  if not r then
    t:close()
    cli.fail(msg, code)
  end
  print_result(r, opts.json)
  t:close()
  if r.refused then
    io.stderr:write("expire_partitions.lua: ", r.refused, "\n")
    return cli.EXIT_FAILED
  end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
