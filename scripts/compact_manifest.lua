-- compact_manifest.lua TABLE [--commit-user U] [--branch NAME] [--json]
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
  flags = {commit_user = "string", branch = "string", json = "boolean"},
  usage = [[
usage: paimon-lua compact_manifest.lua TABLE [--commit-user USER] [--branch NAME] [--json]
  Merges the manifests of the latest snapshot (full compaction, threshold 1 byte,
  min count 1) into a new COMPACT snapshot. Does nothing when the latest snapshot
  has at most one manifest without deletions.
exit codes: 0 ok, 1 failed, 2 usage, 3 conflict]],
}

local function main(opts, pos)
  local t, msg = paimon.open(pos[1], {branch = opts.branch})
  if not t then error(msg, 0) end
  local s, smsg, code = t:latest_snapshot()
  if not s and code ~= "notfound" then error(smsg, 0) end
  local manifests, deletes = 0, 0
  if s then
    for _, kind in ipairs({"base", "delta"}) do
      local it, err = s:manifests(kind)
      if not it then error(err, 0) end
      for m in it do
        manifests = manifests + 1
        deletes = deletes + m.num_deleted_files
      end
    end
  end
  local id, committed = nil, false
  if manifests > 1 or deletes > 0 then
    local c = t:new_commit{commit_user = opts.commit_user, policy = policy.compact_all}
    local r, rmsg, rcode = c:commit({}, {kind = "COMPACT"})
    if not r then
      if rcode == "conflict" then io.stderr:write("compact_manifest.lua: ", rmsg, "\n"); return cli.EXIT_CONFLICT end
      error(rmsg, 0)
    end
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
