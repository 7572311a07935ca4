-- purge_files.lua TABLE (--dry-run | --yes) [--threads N] [--json]
-- Empty the whole table, keeping its schemas (Java Paimon's purge_files;
-- see docs/maintenance.md "Purge files").
local cli = require "paimon.cli"
local maint = require "paimon.maint"

local spec = {
  name = "purge_files.lua",
  positional = {"TABLE"},
  flags = {dry_run = "boolean", yes = "boolean", threads = "integer", json = "boolean", branch = "string"},
  min = {threads = 1},
  usage = [[
usage: paimon-lua purge_files.lua TABLE (--dry-run | --yes) [options]
  WARNING: the table becomes EMPTY and its data cannot come back. Every branch,
  every tag, every consumer, every snapshot and long-lived changelog goes, then
  every data file, manifest, index file and statistics file nothing needs any more.
  What stays: the schemas (schema/) and one new snapshot that reads empty, so
  writers can go on. Stop the table's writers and readers first.
  --dry-run          list what would be deleted, path by path; change nothing (do this first)
  --yes              really purge (required without --dry-run)
  --threads N        delete with N threads (default 4)
  --json             print one JSON object
As Java's purge_files (FileStoreTable.purgeFiles, Paimon 1.2+): the whole table, so
not with --branch. Files outside the table directory (external data paths) stay.
exit codes: 0 done, 1 failed, 2 usage, 3 conflict (a writer committed meanwhile)]],
}

local function main(opts, pos)
  if opts.branch then
    cli.usage_error("purge_files empties the whole table and drops every branch: no --branch")
  end
  if not opts.dry_run and not opts.yes then
    cli.usage_error("purge_files deletes every file of the table but its schemas: run it with --dry-run "
                    .. "first, then with --yes")
  end
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r
  r, msg, code = maint.call(t.purge_files, t, {dry_run = opts.dry_run or false, threads = opts.threads or 4,
                                               progress = maint.progress_fn(true), paths_handle = opts.json or nil})
  t:close()
  if not r then cli.fail(msg, code) end
  if opts.json then
    local json = require "paimon.json"
    for _, k in ipairs{"branches", "tags", "consumers"} do r[k] = json.array(r[k]) end
    maint.print_json(r)
  else
    local title = string.format(
      "%s: %d branch(es), %d tag(s), %d consumer(s), %d snapshot(s), %d changelog(s) %s; %s",
      r.dry_run and "WOULD EMPTY THE TABLE" or "table emptied", #r.branches, #r.tags, #r.consumers, r.snapshots,
      r.changelogs, r.dry_run and "would go" or "removed",
      r.latest > 0 and string.format("%s snapshot %d (%d file(s) out of view) %s, reading empty",
                                     r.dry_run and "a new" or "the new", r.latest, r.truncated,
                                     r.dry_run and "would stay" or "stays")
                   or "no snapshot")
    maint.print_human(title, r)
    if r.dry_run then io.stdout:write("nothing changed; run with --yes to purge (the data cannot come back)\n") end
  end
  if r.failures and #r.failures > 0 then return cli.EXIT_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
