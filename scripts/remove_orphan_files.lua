-- remove_orphan_files.lua PATH [--database GLOB] [--table GLOB] [--older-than T] [--allow-young-cutoff]
--                         [--threads N] [--dry-run] [--json]
-- Delete files that no snapshot, tag, branch or changelog uses and that are
-- older than the cut-off in a table's own folders, then directories left
-- empty (Java Paimon's rules; docs/maintenance.md). PATH is a table, a
-- database directory (NAME.db) or a warehouse: every table there (matching
-- the globs) is cleaned in turn, as Java's remove_orphan_files('db.*').
local paimon = require "paimon"
local cli = require "paimon.cli"
local maint = require "paimon.maint"

-- a run over several tables where some failed (usage errors stay 2)
local EXIT_SOME_FAILED = 4

local spec = {
  name = "remove_orphan_files.lua",
  positional = {"PATH"},
  flags = {older_than = "string", allow_young_cutoff = "boolean", threads = "integer", dry_run = "boolean",
           json = "boolean", database = "string", table = "string"},
  usage = [[
usage: paimon-lua remove_orphan_files.lua PATH [options]
  PATH             a table, a database directory (NAME.db) or a warehouse (Java's
                   catalog layout WAREHOUSE/NAME.db/TABLE/): every table found is
                   cleaned in turn; one table's failure does not stop the others
  --database GLOB  only databases whose name (without .db) matches (shell glob)
  --table GLOB     only tables whose name matches (shell glob)
  --older-than T   only files last modified before T: a duration (90s, 30m, 1h, 7d: now
                   minus it) or a timestamp (2026-11-29 10:00:00, local time, or ISO 8601);
                   default 1d; never in the future; less than 1h ago is refused (files of
                   commits still in flight would be deleted)
  --allow-young-cutoff  accept a cut-off less than 1h ago (the result records it:
                   floor_overridden); commits in flight may then fail
  --threads N      list, read and delete with N threads (default 4)
  --dry-run        print the plan, change nothing
  --json           print one JSON object (several tables: one line per table, then a
                   summary line)
exit codes: 0 done, 1 failed, 2 usage, 3 conflict, 4 some of several tables failed,
            130 interrupted (Ctrl-C or SIGTERM: stopped between deletions; run again)]],
}

local function warn_floor(r)
  if r.floor_overridden then
    io.stderr:write(string.format("remove_orphan_files.lua: warning: cut-off younger than the %d-minute safety "
                                  .. "floor (--allow-young-cutoff): files of commits in flight may have been "
                                  .. "deleted (a paimon-lua commit then fails; other writers may publish a "
                                  .. "snapshot naming them)\n", math.floor(r.cutoff_floor / 60000)))
  end
end

local function print_result(r)
  local title = string.format("%d file(s) listed, %d in use, %d unused: %d older than the cut-off, "
                              .. "%d kept as recent", r.listed, r.used, r.candidates, r.candidates - r.recent, r.recent)
  if (r.manifests_skipped or 0) > 0 then
    title = title .. string.format("\n%d of %d manifests read: the others only older snapshots name, and no "
                                   .. "file they could protect would be deleted", r.manifests_read,
                                   r.manifests_read + r.manifests_skipped)
  end
  maint.print_human(title, r)
end

-- One table: the result, or nil, message, code (a misuse raises).
local function clean(path, opts, args)
  local t, msg, code = paimon.open(path, {options = opts.options})
  if not t then return nil, msg, code end
  local r
  r, msg, code = maint.call(t.remove_orphan_files, t, args)
  t:close()
  return r, msg, code
end

local function main(opts, pos)
  if opts.threads and opts.threads < 1 then cli.usage_error("--threads must be at least 1") end
  local now = maint.now_ms()
  local older_than = maint.parse_cutoff(opts.older_than or "1d", now)
  if older_than > now then
    cli.usage_error("--older-than " .. opts.older_than .. " is in the future: files being written would be deleted")
  end
  local args = {older_than = older_than, now = now, threads = opts.threads or 4, dry_run = opts.dry_run,
                allow_young_cutoff = opts.allow_young_cutoff, progress = maint.progress_fn(true),
                paths_handle = opts.json or nil}
  local tables, kind = paimon.list_tables(pos[1], {database = opts.database, table = opts.table,
                                                   options = opts.options})
  local patterns = opts.database or opts.table
  -- a single table as before (and a path that is not a warehouse either:
  -- opening it says what is wrong with it)
  if not tables or (kind == "table" and not patterns) or (kind == "warehouse" and #tables == 0 and not patterns) then
    local t, msg, code = cli.open(pos[1], opts)
    if not t then cli.fail(msg, code) end
    local r
    r, msg, code = maint.call(t.remove_orphan_files, t, args)
    t:close()
    if not r then cli.fail(msg, code) end
    warn_floor(r)
    if opts.json then maint.print_json(r) else print_result(r) end
    if #r.failures > 0 then return cli.EXIT_FAILED end
    return cli.EXIT_OK
  end
  if #tables == 0 then
    cli.fail(string.format("%s (a %s): no table matches --database %s --table %s", pos[1], kind,
                           opts.database or "*", opts.table or "*"), "notfound")
  end
  local sum = {summary = true, kind = kind, tables = #tables, ok = 0, failed = 0, files = 0, total_bytes = 0,
               directories = 0, failed_tables = {}}
  for _, tb in ipairs(tables) do
    local name = (tb.database ~= "" and tb.database .. "." or "") .. tb.table
    local r, msg, code = clean(tb.path, opts, args)
    local failed = not r or #r.failures > 0
    if r then
      warn_floor(r)
      sum.files = sum.files + r.files
      sum.total_bytes = sum.total_bytes + r.total_bytes
      sum.directories = sum.directories + (r.directories or 0)
    end
    if failed then
      sum.failed = sum.failed + 1
      sum.failed_tables[#sum.failed_tables + 1] = tb.path
    else
      sum.ok = sum.ok + 1
    end
    if opts.json then
      if r then
        r.database, r.table, r.path, r.ok = tb.database, tb.table, tb.path, not failed
        maint.print_json(r)
      else
        io.stdout:write(require("paimon.json").encode({database = tb.database, table = tb.table, path = tb.path,
                                                        ok = false, error = msg, code = code}), "\n")
      end
    else
      io.stdout:write("== ", name, " (", tb.path, ")\n")
      if r then print_result(r) else io.stdout:write("FAILED: ", tostring(msg), "\n") end
    end
    if not r then io.stderr:write("remove_orphan_files.lua: ", tb.path, ": ", tostring(msg), "\n") end
  end
  if opts.json then
    local json = require "paimon.json"
    sum.failed_tables = json.array(sum.failed_tables)
    io.stdout:write(json.encode(sum), "\n")
  else
    io.stdout:write(string.format("%d table(s): %d cleaned, %d failed; %s %d file(s), %d bytes, %d empty "
                                  .. "director%s\n", sum.tables, sum.ok, sum.failed,
                                  opts.dry_run and "would delete" or "deleted", sum.files, sum.total_bytes,
                                  sum.directories, sum.directories == 1 and "y" or "ies"))
  end
  io.stdout:flush()
  if sum.failed > 0 then return EXIT_SOME_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
