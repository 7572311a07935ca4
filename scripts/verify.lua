-- verify.lua TABLE [--all-snapshots] [--threads N] [--json]
-- Read-only check that every file the table's readers need is there, with
-- the size its manifest records: the latest snapshot of each branch and
-- every tag (--all-snapshots: every snapshot). Nothing is written.
local paimon = require "paimon"
local cli = require "paimon.cli"
local maint = require "paimon.maint"
local json = require "paimon.json"

local spec = {
  name = "verify.lua",
  positional = {"TABLE"},
  flags = {all_snapshots = "boolean", threads = "integer", json = "boolean"},
  usage = [[
usage: paimon-lua verify.lua TABLE [options]
  --all-snapshots  check every snapshot of every branch, not only the latest ones
  --threads N      stat with N threads (default 4)
  --json           print one JSON object
exit codes: 0 the table is whole, 1 problems found (or the check failed), 2 usage]],
}

local PROBLEMS = {"missing", "wrong_size", "unreadable"}

local function main(opts, pos)
  if opts.threads and opts.threads < 1 then cli.usage_error("--threads must be at least 1") end
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r
  r, msg, code = maint.call(t.verify, t, {all_snapshots = opts.all_snapshots, threads = opts.threads or 4,
                                          progress = maint.progress_fn(true)})
  t:close()
  if not r then cli.fail(msg, code) end
  if opts.json then
    for _, k in ipairs(PROBLEMS) do r[k] = json.array(r[k]) end
    io.stdout:write(json.encode(r, {"ok", "branches", "snapshots", "tags", "changelogs", "files", "checked",
                                    "not_checked", "missing", "wrong_size", "unreadable", "duration_ms"}), "\n")
  else
    io.stdout:write(string.format("checked %d snapshot(s), %d tag(s) and %d long-lived changelog(s) of %d branch(es): "
                                  .. "%d file(s)\n", r.snapshots, r.tags, r.changelogs, r.branches, r.files))
    local rows = {}
    for _, k in ipairs(maint.KINDS) do
      if (r.checked[k] or 0) > 0 then rows[#rows + 1] = {kind = k, files = r.checked[k]} end
    end
    if r.checked.schemas > 0 then rows[#rows + 1] = {kind = "schemas", files = r.checked.schemas} end
    if r.not_checked > 0 then
      io.stdout:write(r.not_checked, " file(s) on remote file systems (external paths) not checked\n")
    end
    if #rows > 0 then cli.print_table(rows, {"kind", "files"}) end
    for _, k in ipairs(PROBLEMS) do
      for _, p in ipairs(r[k]) do
        io.stdout:write(k:gsub("_", " "), ": ", p.path, " (", p.kind, "): ", p.message or "", "\n")
      end
    end
    io.stdout:write(r.ok and "the table is whole\n" or "PROBLEMS FOUND\n")
  end
  return r.ok and cli.EXIT_OK or cli.EXIT_FAILED
end

return cli.run(spec, main, {...})
