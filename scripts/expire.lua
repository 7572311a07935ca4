-- expire.lua TABLE [--retain-min N] [--retain-max N] [--older-than T]
--   [--max-deletes N] [--branch B] [--policy FILE.lua] [--threads N]
--   [--clean-empty-directories] [--dry-run] [--json]
-- Expire old snapshots and delete the files only they used (Java Paimon's
-- rules; see docs/maintenance.md).
local paimon = require "paimon"
local cli = require "paimon.cli"
local maint = require "paimon.maint"
local loader = require "paimon.policy_loader"
local expire = require "paimon.expire"

local spec = {
  name = "expire.lua",
  positional = {"TABLE"},
  flags = {retain_min = "integer", retain_max = "integer", older_than = "string", max_deletes = "integer",
           branch = "string", policy = "string", threads = "integer", dry_run = "boolean", json = "boolean",
           clean_empty_directories = "boolean"},
  usage = [[
usage: paimon-lua expire.lua TABLE [options]
  --retain-min N     keep at least N snapshots (snapshot.num-retained.min, default 10, >= 1)
  --retain-max N     keep at most N snapshots (snapshot.num-retained.max, default 2147483647)
  --older-than T     expire snapshots whose successor is older than T: a duration
                     (90s, 30m, 1h, 7d: now minus it) or a timestamp (2026-11-29 10:00:00,
                     local time, or ISO 8601); default now - snapshot.time-retained (1 h)
  --max-deletes N    expire at most N snapshots in this run (snapshot.expire.limit, default 50)
  --branch B         expire branch B instead of main
  --policy FILE.lua  a policy function(snapshots, ctx) choosing what to keep
                     (a path or a name found in PAIMON_POLICY_PATH or the bundled
                     policies; default: Java's rule, as lua/paimon/policy/expire.lua)
  --threads N        delete with N threads (default 4)
  --clean-empty-directories
                     then remove the bucket and partition directories left empty
                     (snapshot.clean-empty-directories, default false)
  --dry-run          print the plan, change nothing
  --json             print one JSON object
exit codes: 0 done, 1 failed, 2 usage, 3 conflict, 130 interrupted (Ctrl-C or SIGTERM: stopped
            at a consistent point, every snapshot left whole; run again)]],
}

local function main(opts, pos)
  local now, older_than = maint.retention_args(opts)
  -- a policy that cannot be loaded is a usage error, before the table opens
  local policy, msg, code
  if opts.policy then
    policy, msg, code = loader.load(opts.policy, "expire")
    if not policy then
      if code == "error" then cli.fail(msg, code) end
      cli.usage_error(msg)
    end
  end
  local t
  t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local run = {retain_min = opts.retain_min, retain_max = opts.retain_max, max_deletes = opts.max_deletes,
               older_than = older_than, now = now, threads = opts.threads or 4, dry_run = opts.dry_run,
               progress = maint.progress_fn(true), paths_handle = opts.json or nil}
  if opts.clean_empty_directories then run.clean_empty_directories = true end
  -- without --policy the core applies Java's rule; with one, the runner
  -- asks it first (paimon.expire)
  local r
  if policy then
    run.policy = policy
    r, msg, code = maint.call(expire.run, t, run)
  else
    r, msg, code = maint.call(t.expire_snapshots, t, run)
  end
  t:close()
  if not r then cli.fail(msg, code) end
  if opts.json then
    maint.print_json(r)
  else
    local title
    if r.expired > 0 then
      title = string.format("%s %d snapshot(s): %d..%d (stopped by %s)", r.dry_run and "would expire" or "expired",
                            r.expired, r.range[1], r.range[2], r.capped_by)
    elseif r.plan.latest == 0 then
      title = "no snapshot to expire: the table has no snapshot"
    else
      title = string.format("no snapshot to expire (stopped by %s)", r.capped_by)
    end
    maint.print_human(title, r)
  end
  if r.refused then io.stderr:write("expire.lua: ", r.refused, "\n"); return cli.EXIT_FAILED end
  if #r.failures > 0 then return cli.EXIT_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
