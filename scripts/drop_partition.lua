-- drop_partition.lua TABLE --partition k=v[,k2=v2] ... [--branch B] [--dry-run] [--json]
-- Drop partitions the way Java Paimon does (mark-delete): one OVERWRITE
-- snapshot whose delta marks every live data file of the partitions DELETE.
-- No file is removed here; snapshot expiration removes them later.
-- See docs/partitions.md.
local paimon = require "paimon"
local cli = require "paimon.cli"
local maint = require "paimon.maint"
local json = require "paimon.json"

local spec = {
  name = "drop_partition.lua",
  positional = {"TABLE"},
  flags = {partition = "string", branch = "string", max_attempts = "integer", dry_run = "boolean",
           json = "boolean"},
  multi = {partition = true},
  usage = [[
usage: paimon-lua drop_partition.lua TABLE --partition k=v[,k2=v2] ... [options]
  --partition SPEC   partition to drop: all partition columns (exact) or some of
                     them (every partition matching); values as in the partition
                     path (e.g. dt=2026-11-01,hr=10; __DEFAULT_PARTITION__ = null,
                     k= the empty string, a different partition in the same directory).
                     Repeat to drop several partitions in one snapshot.
  --branch B         drop on branch B instead of main
  --max-attempts N   scan + commit attempts on conflicts (default 3)
  --dry-run          print the plan, change nothing
  --json             print one JSON object
exit codes: 0 done, 1 failed, 2 usage, 3 conflict]],
}

local is_tty, human_bytes, partition_rows = maint.stderr_is_tty, maint.human_bytes, maint.partition_rows

local function print_result(r, as_json)
  if as_json then
    local obj = {table = r.table, dry_run = r.dry_run, snapshot_id = r.snapshot_id or json.null,
                 base_snapshot_id = r.base_snapshot_id or json.null, partitions = json.array(partition_rows(r)),
                 files = r.files, rows = r.rows, bytes = r.bytes, index_files = r.index_files or 0,
                 failures = json.array(r.failures),
                 attempts = r.attempts, commits = r.commits, duration_ms = r.duration_ms}
    io.stdout:write(json.encode(obj, {"table", "dry_run", "snapshot_id", "base_snapshot_id", "files", "rows",
                                      "bytes", "index_files", "partitions", "path", "partition", "failures", "attempts",
                                      "commits", "duration_ms"}), "\n")
    return
  end
  local out = io.stdout
  out:write("drop partitions of ", r.table, r.dry_run and " (dry run)" or "", "\n")
  if #r.partitions > 0 then
    cli.print_table(partition_rows(r), {"partition", "path", "files", "rows", "bytes"})
  end
  local what = string.format("%d partition(s): %d file(s), %d rows, %s", #r.partitions, r.files, r.rows,
                             human_bytes(r.bytes))
  if (r.index_files or 0) > 0 then what = what .. string.format(", %d index file(s)", r.index_files) end
  if r.files == 0 then
    out:write("nothing to drop: no live file in the given partitions",
              r.base_snapshot_id and (" (snapshot " .. r.base_snapshot_id .. ")") or "", "\n")
  elseif r.dry_run then
    out:write("would drop ", what, " with one OVERWRITE snapshot on top of snapshot ", r.base_snapshot_id, "\n")
  else
    out:write("dropped ", what, ": OVERWRITE snapshot ", r.snapshot_id,
              r.commits > 1 and (" (" .. r.commits .. " commits)") or "", "\n")
    out:write("the data files stay until snapshot expiration removes them\n")
  end
  out:write(string.format("done in %d ms\n", r.duration_ms or 0))
end

local function main(opts, pos)
  if not opts.partition or #opts.partition == 0 then cli.usage_error("missing --partition k=v") end
  if opts.max_attempts and opts.max_attempts < 1 then cli.usage_error("--max-attempts must be at least 1") end
  local t = cli.check(cli.open(pos[1], opts))
  if #t:schema().partition_keys == 0 then cli.fail(t:path() .. ": the table is not partitioned", "unsupported") end
  local specs = maint.partition_specs(t, opts.partition)
  local tty = not opts.json and is_tty()
  if tty then io.stderr:write("scanning the latest snapshot...\n") end
  local r, m2, c2 = cli.usage_call(t.drop_partitions, t, specs, {
    dry_run = opts.dry_run, max_attempts = opts.max_attempts,
    on_retry = function(attempt, why)
      io.stderr:write("drop_partition.lua: attempt ", attempt, " conflicted, retrying: ", why, "\n")
    end})
  if not r then
    t:close()
    cli.fail(m2, c2)
  end
  print_result(r, opts.json)
  t:close()
  if r.refused then
    io.stderr:write("drop_partition.lua: ", r.refused, "\n")
    return cli.EXIT_FAILED
  end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
