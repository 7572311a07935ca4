-- expire_changelogs.lua TABLE [--retain-min N] [--retain-max N] [--older-than T]
--   [--max-deletes N] [--branch B] [--threads N] [--dry-run] [--json]
-- Expire the long-lived changelogs (changelog/changelog-<id>, written by
-- snapshot expiration when changelog.* retention is longer than the
-- snapshots') by Java Paimon's ExpireChangelogImpl rule, deleting the files
-- only they held (docs/maintenance.md, Changelogs).
local cli = require "paimon.cli"
local maint = require "paimon.maint"

local spec = {
  name = "expire_changelogs.lua",
  positional = {"TABLE"},
  flags = {retain_min = "integer", retain_max = "integer", older_than = "string", max_deletes = "integer",
           branch = "string", threads = "integer", dry_run = "boolean", json = "boolean"},
  usage = [[
usage: paimon-lua expire_changelogs.lua TABLE [options]
  --retain-min N     keep the changelogs of the last N snapshot ids (changelog.num-retained.min,
                     else snapshot.num-retained.min)
  --retain-max N     keep at most N (changelog.num-retained.max, else snapshot.num-retained.max)
  --older-than T     expire changelogs older than T: a duration (7d: now minus it) or a
                     timestamp; default now - changelog.time-retained (else snapshot.time-retained)
  --max-deletes N    expire at most N changelogs in this run (snapshot.expire.limit, default 50)
  --branch B         branch B instead of main
  --threads N        delete with N threads (default 4)
  --dry-run          print the plan, change nothing
  --json             print one JSON object
The latest changelog always stays; consumers cap the range.
exit codes: 0 done, 1 failed, 2 usage, 3 conflict]],
}

local function main(opts, pos)
  local now, older_than = maint.retention_args(opts)
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r
  r, msg, code = maint.call(t.expire_changelogs, t, {
    retain_min = opts.retain_min, retain_max = opts.retain_max, max_deletes = opts.max_deletes,
    older_than = older_than, now = now, threads = opts.threads or 4, dry_run = opts.dry_run,
    progress = maint.progress_fn(true), paths_handle = opts.json or nil})
  t:close()
  if not r then cli.fail(msg, code) end
  if opts.json then
    maint.print_json(r)
  else
    local title
    if r.expired > 0 then
      title = string.format("%s %d changelog(s): %d..%d (stopped by %s)", r.dry_run and "would expire" or "expired",
                            r.expired, r.range[1], r.range[2], r.capped_by)
    elseif r.plan.latest == 0 then
      title = "no changelog to expire: the table has no long-lived changelog"
    else
      title = string.format("no changelog to expire (stopped by %s)", r.capped_by)
    end
    maint.print_human(title, r)
  end
  if #r.failures > 0 then return cli.EXIT_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
