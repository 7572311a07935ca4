-- mark_partition_done.lua TABLE --partition k=v[,k2=v2] ... [--dry-run] [--json]
-- Java Paimon's mark_partition_done: tell downstream readers that partitions
-- are complete, by the table's partition.mark-done-action. success-file (the
-- default) writes <table>/<partition>/_SUCCESS as Java's SuccessFile JSON;
-- the metastore actions are not supported (exit 2). See
-- docs/maintenance.md "Mark partitions done".
local cli = require "paimon.cli"
local maint = require "paimon.maint"
local json = require "paimon.json"

local spec = {
  name = "mark_partition_done.lua",
  positional = {"TABLE"},
  flags = {partition = "string", dry_run = "boolean", json = "boolean"},
  multi = {partition = true},
  usage = [[
usage: paimon-lua mark_partition_done.lua TABLE --partition k=v[,k2=v2] ... [options]
  --partition SPEC   partition to mark done: its leading partition columns (dt=2026-11-01
                     or dt=2026-11-01,hr=10), values as in the partition path; repeat
                     for several
  --dry-run          print what would be written, change nothing
  --json             print one JSON object
By the table's partition.mark-done-action: success-file (Java's default) writes
_SUCCESS ({"creationTime", "modificationTime"}; an existing one keeps its
creationTime); done-partition, mark-event, http-report and custom need a metastore,
an HTTP server or a Java class and are refused (exit 2).
exit codes: 0 done, 1 failed, 2 usage or unsupported action]],
}

local function main(opts, pos)
  if not opts.partition or #opts.partition == 0 then cli.usage_error("missing --partition k=v") end
  local t = cli.check(cli.open(pos[1], opts))
  if #t:schema().partition_keys == 0 then cli.usage_error(t:path() .. ": the table is not partitioned") end
  local specs = maint.partition_specs(t, opts.partition)
  local r, msg, code = maint.call(t.mark_partition_done, t, specs, {dry_run = opts.dry_run or false})
  t:close()
  -- an action this implementation cannot perform is the caller's choice to fix: usage (2)
  if not r then cli.fail(msg, code == "unsupported" and "usage" or code) end
  if opts.json then
    r.partitions = json.array(r.partitions)
    io.stdout:write(json.encode(r), "\n")
    return cli.EXIT_OK
  end
  local verb = r.dry_run and "would mark" or "marked"
  for _, p in ipairs(r.partitions) do
    print(string.format("%s %s done: %s (%s)", verb, p.partition, p.path,
                        p.created and "new" or ("created " .. cli.iso_time(p.creation_time))))
  end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
