-- remove_orphan_files.lua TABLE [--older-than T] [--allow-young-cutoff] [--threads N] [--dry-run] [--json]
-- Delete Paimon files that no snapshot, tag, branch or changelog uses and
-- that are older than the cut-off (Java Paimon's rules; docs/maintenance.md).
local paimon = require "paimon"
local cli = require "paimon.cli"
local maint = require "paimon.maint"

local spec = {
  name = "remove_orphan_files.lua",
  positional = {"TABLE"},
  flags = {older_than = "string", allow_young_cutoff = "boolean", threads = "integer", dry_run = "boolean",
           json = "boolean"},
  usage = [[
usage: paimon-lua remove_orphan_files.lua TABLE [options]
  --older-than T   only files last modified before T: a duration (90s, 30m, 1h, 7d: now
                   minus it) or a timestamp (2026-11-29 10:00:00, local time, or ISO 8601);
                   default 1d; never in the future; less than 1h ago is refused (files of
                   commits still in flight would be deleted)
  --allow-young-cutoff  accept a cut-off less than 1h ago (the result records it:
                   floor_overridden); commits in flight may then fail
  --threads N      list, read and delete with N threads (default 4)
  --dry-run        print the plan, change nothing
  --json           print one JSON object
exit codes: 0 done, 1 failed, 2 usage, 3 conflict, 130 interrupted (Ctrl-C or SIGTERM: stopped
            between deletions; run again to finish)]],
}

local function main(opts, pos)
  if opts.threads and opts.threads < 1 then cli.usage_error("--threads must be at least 1") end
  local now = maint.now_ms()
  local older_than = maint.parse_cutoff(opts.older_than or "1d", now)
  if older_than > now then
    cli.usage_error("--older-than " .. opts.older_than .. " is in the future: files being written would be deleted")
  end
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r
  r, msg, code = maint.call(t.remove_orphan_files, t, {older_than = older_than, now = now,
                           threads = opts.threads or 4, dry_run = opts.dry_run,
                           allow_young_cutoff = opts.allow_young_cutoff,
                           progress = maint.progress_fn(true), paths_handle = opts.json or nil})
  t:close()
  if not r then cli.fail(msg, code) end
  if r.floor_overridden then
    io.stderr:write(string.format("remove_orphan_files.lua: warning: cut-off younger than the %d-minute safety "
                                  .. "floor (--allow-young-cutoff): files of commits in flight may have been "
                                  .. "deleted (a paimon-lua commit then fails; other writers may publish a "
                                  .. "snapshot naming them)\n", math.floor(r.cutoff_floor / 60000)))
  end
  if opts.json then
    maint.print_json(r)
  else
    local title = string.format("%d Paimon file(s) listed, %d in use, %d unused: %d older than the cut-off, "
                                .. "%d kept as recent", r.listed, r.used, r.candidates, r.candidates - r.recent, r.recent)
    if (r.manifests_skipped or 0) > 0 then
      title = title .. string.format("\n%d of %d manifests read: the others only older snapshots name, and no "
                                     .. "file they could protect would be deleted", r.manifests_read,
                                     r.manifests_read + r.manifests_skipped)
    end
    maint.print_human(title, r)
  end
  if #r.failures > 0 then return cli.EXIT_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
