-- tag.lua TABLE create NAME [--snapshot ID | --timestamp T | --watermark W] [--time-retained D]
-- tag.lua TABLE replace NAME [--snapshot ID] [--time-retained D]
-- tag.lua TABLE delete NAME... | rename OLD NEW | list | expire | auto
--   [--branch B] [--dry-run] [--json] (expire: [--older-than T]
--   [--num-retained-max N] [--policy FILE.lua])
-- Tags as Java Paimon's TagManager manages them (docs/maintenance.md, Tags).
local cli = require "paimon.cli"
local maint = require "paimon.maint"
local loader = require "paimon.policy_loader"

local spec = {
  name = "tag.lua",
  positional = {"TABLE", "COMMAND"},
  varargs = true,
  flags = {force = "boolean", snapshot = "integer", timestamp = "string", watermark = "integer", time_retained = "string",
           branch = "string",
           older_than = "string", num_retained_max = "integer", policy = "string", threads = "integer",
           dry_run = "boolean", json = "boolean"},
  usage = [[
usage: paimon-lua tag.lua TABLE COMMAND [args] [options]
  create NAME        tag a snapshot: --snapshot ID, --timestamp T (the latest snapshot
                     committed at or before T) or the latest; --time-retained D (1d, 12h)
                     lets tag expiration remove it after D; --watermark W: the earliest
                     snapshot (or tag) whose watermark is >= W (Java's
                     create_tag_from_watermark)
  replace NAME       point an existing tag at --snapshot ID or the latest (Java's
                     replace_tag; what only the old snapshot held is left to orphan cleaning)
  delete NAME...     delete tags and the files only they held; --force: only the tag files,
                     nothing read (an unreadable tag; what it held is left to orphan cleaning)
  rename OLD NEW     rename a tag (never replaces one)
  list               name, snapshot id, commit time, create time, time retained
  expire             delete the tags whose time retained has passed (Java's TagTimeExpire),
                     --older-than T (tags created before T), --num-retained-max N (also
                     the automatic tags above N, when tag.automatic-creation is on; the
                     table's tag.num-retained-max is auto's, as in Java), --policy FILE.lua
  auto               create the tags Java's automatic creation would (the table's
                     tag.automatic-creation, tag.creation-period, tag.creation-delay,
                     tag.period-formatter, tag.default-time-retained): one per finished
                     period, never replacing a tag; then remove the oldest automatic tags
                     over tag.num-retained-max
  --branch B         the tags of branch B instead of main
  --threads N        delete with N threads (default 4)
  --dry-run          print the plan, change nothing
  --json             print one JSON object
exit codes: 0 done, 1 failed, 2 usage, 3 conflict (the tag exists, or tags changed meanwhile)]],
}

local ARGS = {create = 1, replace = 1, delete = -1, rename = 2, list = 0, expire = 0, auto = 0}

local function print_result(opts, title, r)
  if opts.json then maint.print_json(r) else maint.print_human(title, r) end
end

local function names_of(items)
  local v = {}
  for i, x in ipairs(items) do v[i] = type(x) == "table" and x.tag or x end
  return table.concat(v, ", ")
end

local function print_auto(opts, r)
  if opts.json then return maint.print_json(r) end
  if r.mode == "none" then
    print("automatic tag creation is off (tag.automatic-creation is none): nothing to do")
    return
  end
  local would = r.dry_run and "would " or ""
  print(string.format("%s: %s%s %d tag(s)%s", r.mode, would, r.dry_run and "create" or "created", #r.created,
                      #r.created > 0 and ": " .. names_of(r.created) or ""))
  if #r.existing > 0 then print("already tagged (left alone): " .. names_of(r.existing)) end
  if #r.expired > 0 or r.skipped_over_max > 0 then
    maint.print_human(string.format("tag.num-retained-max: %s%s %d tag(s)%s", would, r.dry_run and "expire" or "expired",
                                    #r.expired, #r.expired > 0 and ": " .. names_of(r.expired) or ""), r)
  end
end

local function main(opts, pos)
  local cmd = pos[2]
  local want = ARGS[cmd]
  if not want then cli.usage_error("unknown command '" .. cmd .. "' (create, replace, delete, rename, list, expire, auto)") end
  local args = {table.unpack(pos, 3)}
  if want >= 0 and #args ~= want then cli.usage_error(cmd .. " takes " .. want .. " argument(s)") end
  if want < 0 and #args == 0 then cli.usage_error("delete needs at least one tag name") end
  local now = maint.now_ms()
  local policy, msg, code
  if opts.policy then
    policy, msg, code = loader.load(opts.policy, "tag_expire")
    if not policy then if code == "error" then cli.fail(msg, code) end cli.usage_error(msg) end
  end
  if opts.force and cmd ~= "delete" then cli.usage_error("--force goes with delete") end
  local t
  t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r
  if cmd == "replace" and (opts.timestamp or opts.watermark) then
    cli.usage_error("replace takes --snapshot ID or nothing (the latest), as Java's replace_tag")
  end
  if cmd == "create" or cmd == "replace" then
    local o = {snapshot = opts.snapshot, time_retained = opts.time_retained, dry_run = opts.dry_run}
    if opts.timestamp then o.timestamp = maint.parse_cutoff(opts.timestamp, now, "--timestamp", true) end
    if opts.time_retained then maint.parse_cli_duration(opts.time_retained, "--time-retained") end
    o.watermark = opts.watermark
    r, msg, code = maint.call(cmd == "create" and t.create_tag or t.replace_tag, t, args[1], o)
    if r and opts.json then maint.print_json(r)
    elseif r and cmd == "replace" then
      print(string.format("%s tag %s: snapshot %d (was %d)", r.dry_run and "would replace" or "replaced", r.tag,
                          r.snapshot_id, r.previous_snapshot_id))
    elseif r then print(string.format("%s tag %s of snapshot %d%s", r.dry_run and "would create" or "created", r.tag,
                                      r.snapshot_id, r.watermark and (" (watermark " .. r.watermark .. ")") or "")) end
  elseif cmd == "delete" then
    r, msg, code = maint.call(t.delete_tags, t, args, {dry_run = opts.dry_run, force = opts.force or false,
                                                        threads = opts.threads or 4,
                                                        progress = maint.progress_fn(true),
                                                        paths_handle = opts.json or nil})
    if r then print_result(opts, string.format("%s %d tag(s)", opts.dry_run and "would delete" or "deleted", #r.tags), r) end
  elseif cmd == "rename" then
    r, msg, code = maint.call(t.rename_tag, t, args[1], args[2], {dry_run = opts.dry_run or false})
    if r then
      if opts.json then maint.print_json(r)
      else print((r.dry_run and "would rename tag " or "renamed tag ") .. r.from .. " to " .. r.to) end
    end
  elseif cmd == "list" then
    r, msg, code = t:tags()
    if r then
      local rows = {}
      for _, x in ipairs(r) do
        rows[#rows + 1] = {tag_name = x.name, snapshot_id = x.snapshot_id, commit_time = x.commit_time,
                           create_time = x.create_time, time_retained = x.time_retained, error = x.error}
      end
      local cols = {"tag_name", "snapshot_id", "commit_time", "create_time", "time_retained", "error"}
      if not opts.json then   -- people read ISO 8601 and units; --json keeps epoch ms and ms
        for _, row in ipairs(rows) do
          if row.commit_time then row.commit_time = cli.iso_time(row.commit_time) end
          if row.create_time then row.create_time = cli.iso_time(row.create_time) end
          if row.time_retained then row.time_retained = cli.duration(row.time_retained) end
        end
      end
      if opts.json then cli.print_json(rows, cols) else cli.print_table(rows, cols) end
    end
  elseif cmd == "auto" then
    r, msg, code = maint.call(t.auto_tags, t, {dry_run = opts.dry_run, threads = opts.threads or 4,
                                               progress = maint.progress_fn(true), paths_handle = opts.json or nil})
    if r then print_auto(opts, r) end
  else
    local o = {now = now, num_retained_max = opts.num_retained_max, dry_run = opts.dry_run,
               threads = opts.threads or 4, policy = policy, progress = maint.progress_fn(true),
               paths_handle = opts.json or nil}
    if opts.older_than then o.older_than = maint.parse_cutoff(opts.older_than, now) end
    r, msg, code = maint.call(t.expire_tags, t, o)
    if r then print_result(opts, string.format("%s %d tag(s)%s", opts.dry_run and "would expire" or "expired",
                                               #r.tags, #r.tags > 0 and ": " .. table.concat(r.tags, ", ") or ""), r) end
  end
  t:close()
  -- an existing tag is a conflict (exit 3), as a lost commit race is
  if not r then cli.fail(msg, code) end
  if r.failures and #r.failures > 0 then return cli.EXIT_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
