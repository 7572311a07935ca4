-- consumer.lua TABLE list | reset ID --next-snapshot N | delete ID | expire
--   [--expiration D] | clear [--include REGEX] [--exclude REGEX]
--   [--branch B] [--dry-run] [--json]
-- Streaming consumers of a table (Java ConsumerManager; see
-- docs/maintenance.md "Consumers").
local cli = require "paimon.cli"
local maint = require "paimon.maint"

local spec = {
  name = "consumer.lua",
  positional = {"TABLE", "COMMAND"},
  optional = {"ID"},
  flags = {next_snapshot = "integer", expiration = "string", branch = "string", dry_run = "boolean",
           json = "boolean", include = "string", exclude = "string"},
  min = {next_snapshot = 1},
  usage = [[
usage: paimon-lua consumer.lua TABLE COMMAND [ID] [options]
  list                          the consumers: id, next snapshot, last modified
  reset ID --next-snapshot N    move consumer ID to snapshot N (created if missing)
  delete ID                     remove consumer ID
  expire [--expiration D]       remove the consumers not updated for D (default the
                                table's consumer.expiration-time), as Java does before
                                snapshot expiration
  clear [--include RE] [--exclude RE]
                                remove the consumers whose id matches RE as a whole
                                (default: every one) and not the --exclude RE (Java's
                                clear_consumers; POSIX extended regular expressions)
  --branch B                    consumers of branch B
  --dry-run                     reset, delete, expire, clear: print what would change, change nothing
  --json                        print one JSON object
exit codes: 0 done, 1 failed, 2 usage, 3 conflict]],
}

local function main(opts, pos)
  local cmd, id = pos[2], pos[3]
  local needs_id = cmd == "reset" or cmd == "delete"
  if cmd ~= "list" and cmd ~= "expire" and cmd ~= "clear" and not needs_id then
    cli.usage_error("unknown command '" .. cmd .. "' (list, reset, delete, expire, clear)")
  end
  if cmd ~= "clear" and (opts.include or opts.exclude) then cli.usage_error("--include and --exclude go with clear") end
  if needs_id and not id then cli.usage_error(cmd .. " needs a consumer ID") end
  if not needs_id and id then cli.usage_error("unexpected argument '" .. id .. "'") end
  if cmd == "reset" and not opts.next_snapshot then cli.usage_error("reset needs --next-snapshot N") end
  if cmd ~= "reset" and opts.next_snapshot then cli.usage_error("--next-snapshot goes with reset") end
  if cmd ~= "expire" and opts.expiration then cli.usage_error("--expiration goes with expire") end
  if cmd == "list" and opts.dry_run then cli.usage_error("list has no --dry-run") end
  if opts.expiration then maint.parse_cli_duration(opts.expiration, "--expiration") end
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r
  if cmd == "list" then
    local list
    list, msg, code = maint.call(t.consumers, t)
    if list then
      r = {consumers = {}, count = #list}
      for i, c in ipairs(list) do
        r.consumers[i] = {id = c.consumer_id, next_snapshot = c.next_snapshot, mtime = c.mtime}
      end
    end
  elseif cmd == "reset" then
    r, msg, code = maint.call(t.reset_consumer, t, id, opts.next_snapshot, {dry_run = opts.dry_run or false})
  elseif cmd == "delete" then
    r, msg, code = maint.call(t.delete_consumer, t, id, {dry_run = opts.dry_run or false})
  elseif cmd == "clear" then
    r, msg, code = maint.call(t.clear_consumers, t, {include = opts.include, exclude = opts.exclude,
                                                     dry_run = opts.dry_run or false})
  else
    r, msg, code = maint.call(t.expire_consumers, t, {expiration = opts.expiration, dry_run = opts.dry_run or false})
  end
  t:close()
  if not r then cli.fail(msg, code) end
  if opts.json then
    local json = require "paimon.json"
    if r.consumers then r.consumers = json.array(r.consumers) end
    if r.expired then r.expired = json.array(r.expired) end
    if r.cleared then r.cleared = json.array(r.cleared) end
    io.stdout:write(json.encode(r), "\n")
    return cli.EXIT_OK
  end
  local out = io.stdout
  if cmd == "list" then
    local rows = {}
    for _, c in ipairs(r.consumers) do
      rows[#rows + 1] = {id = c.id, next_snapshot = c.next_snapshot, modified = cli.iso_time(c.mtime)}
    end
    if #rows == 0 then out:write("no consumers\n") else cli.print_table(rows, {"id", "next_snapshot", "modified"}) end
  elseif cmd == "reset" then
    out:write(string.format("consumer %s %s snapshot %d%s\n", r.id, r.dry_run and "would be at" or "now at",
                            r.next_snapshot, r.previous and (" (was " .. r.previous .. ")") or " (new)"))
  elseif cmd == "delete" then
    out:write("consumer ", r.id, r.dry_run and " would be deleted\n" or " deleted\n")
  elseif cmd == "clear" then
    out:write(string.format("%s %d consumer(s); %d kept\n", r.dry_run and "would clear" or "cleared", r.count, r.kept))
    for _, id in ipairs(r.cleared) do out:write("  ", id, "\n") end
  else
    out:write(string.format("%s %d consumer(s) not updated since %s; %d kept\n",
                            r.dry_run and "would expire" or "expired", r.count, cli.iso_time(r.cutoff), r.kept))
    for _, c in ipairs(r.expired) do out:write("  ", c.id, "  next snapshot ", c.next_snapshot, "\n") end
  end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
