-- maintain.lua TABLE [--branch B] [--dry-run] [--json] [--threads N] [--policy KIND=FILE ...]
-- Runs once the upkeep every commit of ours (and of Java's writers) runs
-- afterwards, by the table's options: expire consumers, snapshots,
-- changelogs and partitions, create automatic tags, expire tags. For tables
-- whose writer does not (write-only=true, or a writer of another kind).
-- The same code path as the commits' (src/core/pm_upkeep.c, docs/maintenance.md
-- "Upkeep after every commit").
local cli = require "paimon.cli"
local core = require "paimon.core"
local upkeep = require "paimon.upkeep"

local spec = {
  name = "maintain.lua",
  positional = {"TABLE"},
  flags = {branch = "string", dry_run = "boolean", json = "boolean", threads = "integer", policy = "string"},
  multi = {policy = true},
  min = {threads = 1},
  usage = [[
usage: paimon-lua maintain.lua TABLE [--branch B] [--dry-run] [--json] [--threads N]
                 [--policy KIND=FILE ...]
  Runs the upkeep a commit runs afterwards, once, by the table's options as of
  its latest schema (Java's TableCommitImpl; write-only=true does not stop it here):
    expire_consumers   consumer.expiration-time
    expire_snapshots   snapshot.num-retained.min/max, snapshot.time-retained,
                       snapshot.expire.limit
    expire_changelogs  changelog.* (a decoupled changelog lifecycle)
    expire_partitions  partition.expiration-time (checked whatever
                       partition.expiration-check-interval says)
    auto_tags          tag.automatic-creation and the tag.* options
    expire_tags        tag.time-expire-enabled (tagCreateTime + tagTimeRetained)
  --branch B          branch B instead of main
  --dry-run           what each operation would do; nothing changes
  --json              one JSON object: each operation's result under "steps"
  --threads N         parallel deletes (default 4)
  --policy KIND=FILE  a policy for this run (kinds: expire, partition_expire,
                      tag_expire), over the table options paimon-lua.policy.*
An operation that fails is reported and the next one still runs.
exit codes: 0 done, 1 an operation failed, 2 usage]],
}

local function main(opts, pos)
  local policies
  for _, p in ipairs(opts.policy or {}) do
    local kind, file = p:match("^([%w_]+)=(.+)$")
    if not kind or not upkeep.POLICY_OPTIONS[kind] then
      cli.usage_error("--policy expects KIND=FILE with KIND one of " .. table.concat(upkeep.policy_kinds(), ", ") ..
                      ", got '" .. p .. "'")
    end
    policies = policies or {}
    policies[kind] = file
  end
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r = upkeep.maintain(t, {dry_run = opts.dry_run, threads = opts.threads, policies = policies,
                                branch = opts.branch})
  t:close()
  if opts.json then
    io.stdout:setvbuf("full")
    local ok, m, c = core.json_write(io.stdout, upkeep.json_ready(r), upkeep.JSON_ORDER, require("paimon.json").array_mt)
    if not ok then cli.fail(m, c) end
    io.stdout:write("\n")
    io.stdout:flush()
  else
    upkeep.print_human(r)
  end
  if (r.errors or 0) > 0 then return cli.EXIT_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
