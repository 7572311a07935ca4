-- compact_manifest.lua TABLE [--commit-user U] [--branch NAME] [--dry-run] [--json]
-- Java's compact_manifest procedure: merge all manifests of the latest
-- snapshot into as few files as the target size allows, committed as a
-- COMPACT snapshot with an empty delta.
local paimon = require "paimon"
local cli = require "paimon.cli"
local json = require "paimon.json"
local policy = require "paimon.policy.manifest_merge"

local spec = {
  name = "compact_manifest.lua",
  positional = {"TABLE"},
  flags = {commit_user = "string", branch = "string", json = "boolean", dry_run = "boolean"},
  usage = [[
usage: paimon-lua compact_manifest.lua TABLE [--commit-user USER] [--branch NAME] [--dry-run] [--json]
  Merges the manifests of the latest snapshot (full compaction, threshold 1 byte,
  min count 1) into a new COMPACT snapshot. Does nothing when the latest snapshot
  has at most one manifest without deletions.
  --dry-run   list the manifests that would be merged, commit nothing
exit codes: 0 ok, 1 failed, 2 usage, 3 conflict]],
}

local function main(opts, pos)
  local t = cli.check(cli.open(pos[1], opts))
  local s, smsg, code = t:latest_snapshot()
  if not s and code ~= "notfound" then cli.fail(smsg, code) end
  local manifests, deletes, list = 0, 0, json.array()
  if s then
    for _, kind in ipairs({"base", "delta"}) do
      for m in cli.check(s:manifests(kind)) do
        manifests = manifests + 1
        deletes = deletes + m.num_deleted_files
        list[#list + 1] = {file_name = m.file_name, file_size = m.file_size, list = kind,
                           num_added_files = m.num_added_files, num_deleted_files = m.num_deleted_files}
      end
    end
  end
  local would = manifests > 1 or deletes > 0
  if opts.dry_run then
    if opts.json then
      cli.print_json({dry_run = true, would_compact = would, snapshot_id = s and s.id or json.null,
                      manifests_before = manifests, manifests = would and list or json.array()},
                     {"dry_run", "would_compact", "snapshot_id", "manifests_before", "manifests",
                      "file_name", "list", "file_size", "num_added_files", "num_deleted_files"})
    elseif would then
      io.stdout:write(string.format("would merge %d manifests of snapshot %d (%d deleted entries):\n",
                                    manifests, s.id, deletes))
      cli.print_table(list, {"list", "file_name", "file_size", "num_added_files", "num_deleted_files"})
    else
      io.stdout:write("nothing to compact\n")
    end
    t:close()
    return cli.EXIT_OK
  end
  local id, committed = nil, false
  if would then
    local c = t:new_commit{commit_user = opts.commit_user, policy = policy.compact_all}
    local r, rmsg, rcode = c:commit({}, {kind = "COMPACT"})
    if not r then cli.fail(rmsg, rcode) end
    id, committed = r, true
  end
  if opts.json then
    cli.print_json({snapshot_id = committed and id or json.null, manifests_before = manifests},
                   {"snapshot_id", "manifests_before"})
  elseif committed then
    io.stdout:write(string.format("committed snapshot %d (%d manifests merged)\n", id, manifests))
  else
    io.stdout:write("nothing to compact\n")
  end
  t:close()
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
