-- rollback.lua TABLE --to-snapshot ID | --to-tag NAME | --to-timestamp T | --to-watermark W
--   [--as-latest | --purge-files] [--branch B] [--threads N] [--dry-run] [--json]
-- Roll the table back to a snapshot, a tag, a point in time or a watermark
-- (Java Paimon's rollback_to procedures; see docs/maintenance.md "Rollback").
local cli = require "paimon.cli"
local maint = require "paimon.maint"

local spec = {
  name = "rollback.lua",
  positional = {"TABLE"},
  flags = {to_snapshot = "integer", to_tag = "string", to_timestamp = "string", to_watermark = "integer",
           as_latest = "boolean", purge_files = "boolean", branch = "string", threads = "integer",
           dry_run = "boolean", json = "boolean"},
  min = {to_snapshot = 1, threads = 1},
  usage = [[
usage: paimon-lua rollback.lua TABLE (--to-snapshot ID | --to-tag NAME | --to-timestamp T | --to-watermark W) [options]
  --to-snapshot ID   roll back to snapshot ID
  --to-tag NAME      roll back to tag NAME (its snapshot is written back if it expired)
  --to-timestamp T   roll back to the latest snapshot committed at or before T: epoch
                     milliseconds or a timestamp (2026-11-29 10:00:00, local time, or ISO 8601)
  --to-watermark W   roll back to the snapshot with watermark at or before W (Java's
                     rollback_to_watermark; W as the snapshots record it, usually epoch ms)
  --as-latest        do not delete anything: commit a new latest snapshot whose content is
                     the target's (Java's rollback_to_as_latest; the recovery to try first)
  --purge-files      also delete the data files, manifests, manifest lists, index files and
                     statistics that only the removed snapshots, tags and changelogs used
                     (they cannot come back; the dry run lists them path by path)
  --branch B         roll back branch B instead of main
  --threads N        delete with N threads (default 4)
  --dry-run          print the plan, change nothing
  --json             print one JSON object
Without --as-latest the snapshots, tags and long-lived changelogs above the target
are removed. Only those metadata files go, as in Java Paimon 1.2+: the data files,
manifests and index files they alone used stay until remove_orphan_files.lua
deletes them (until then, a mistaken rollback can still be repaired by hand).
With --purge-files they are deleted now (the behaviour before Java 1.2).
exit codes: 0 done, 1 failed, 2 usage, 3 conflict (a writer committed meanwhile)]],
}

local function main(opts, pos)
  local given = (opts.to_snapshot and 1 or 0) + (opts.to_tag and 1 or 0) + (opts.to_timestamp and 1 or 0)
                + (opts.to_watermark and 1 or 0)
  if given ~= 1 then cli.usage_error("give exactly one of --to-snapshot, --to-tag, --to-timestamp, --to-watermark") end
  if opts.as_latest and opts.purge_files then cli.usage_error("--as-latest deletes nothing: --purge-files does not go with it") end
  local ts
  if opts.to_timestamp then
    ts = math.tointeger(tonumber(opts.to_timestamp)) or maint.parse_timestamp(opts.to_timestamp)
    if not ts then
      cli.usage_error("--to-timestamp expects epoch milliseconds or a timestamp (2026-11-29 10:00:00 or ISO 8601), got '"
                      .. opts.to_timestamp .. "'")
    end
  end
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r
  r, msg, code = maint.call(t.rollback, t, {to_snapshot = opts.to_snapshot, to_tag = opts.to_tag, to_timestamp = ts,
                                            to_watermark = opts.to_watermark,
                                            as_latest = opts.as_latest or false,
                                            purge_files = opts.purge_files or false, dry_run = opts.dry_run or false,
                                            threads = opts.threads or 4, progress = maint.progress_fn(true),
                                            paths_handle = opts.json or nil})
  t:close()
  if not r then cli.fail(msg, code) end
  if opts.json then
    local json = require "paimon.json"
    for _, k in ipairs{"snapshots", "tags", "changelogs"} do if r[k] then r[k] = json.array(r[k]) end end
    maint.print_json(r)
  elseif r.as_latest then
    io.stdout:write(string.format("%s snapshot %d as the new latest snapshot %d (content of snapshot %d: %d file(s) back, %d removed from view); nothing deleted\n",
                                  r.dry_run and "would commit" or "committed", r.latest, r.latest, r.target,
                                  r.added, r.removed))
    if r.protection_tag then
      io.stdout:write("protection tag ", r.protection_tag, " holds snapshot ", r.target, "'s files (Java's rule)\n")
    end
  else
    local title = string.format("%s back to snapshot %d (was %d): %d snapshot(s), %d tag(s), %d changelog(s) removed%s",
                                r.dry_run and "would roll" or "rolled", r.target, r.previous_latest, #r.snapshots,
                                #r.tags, #r.changelogs, r.recreated and "; the tag's snapshot written back" or "")
    if r.purge_files then
      maint.print_human(title .. "\nmode: --purge-files (data files, manifests and index files only they used go too)", r)
    else
      io.stdout:write(title, "\n",
        "mode: metadata only (as Java Paimon 1.2+): the data files, manifests, manifest lists and index\n",
        "files only the removed snapshots, tags and changelogs used are left in place; delete them with\n",
        "remove_orphan_files.lua (or roll back with --purge-files to delete them now)\n")
    end
    if r.consumers_ahead > 0 then
      io.stderr:write("rollback.lua: ", r.consumers_ahead,
                      " consumer(s) read past the target; reset them with consumer.lua\n")
    end
  end
  if r.failures and #r.failures > 0 then return cli.EXIT_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
