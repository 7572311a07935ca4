-- alter_table.lua TABLE COMMAND args [options]: ALTER TABLE as Java Paimon's
-- SchemaManager.commitChanges (docs/alter.md). Writes schema/schema-(N+1)
-- without replacing; re-reads and re-applies when another alter won.
local cli = require "paimon.cli"
local json = require "paimon.json"

local spec = {
  name = "alter_table.lua",
  positional = {"TABLE", "COMMAND"},
  varargs = true,
  flags = {after = "string", first = "boolean", comment = "string", type = "string", nullable = "boolean",
           not_null = "boolean", branch = "string", dry_run = "boolean", json = "boolean"},
  usage = [[
usage: paimon-lua alter_table.lua TABLE COMMAND [args] [options]
  set KEY=VALUE...            set table options (Java's setOption)
  reset KEY...                remove table options (removeOption)
  add-column NAME:TYPE        add a column (addColumn; nullable types only), at the end or
                              --first / --after COL, with --comment C
  rename-column OLD NEW       rename a column (renameColumn; not a partition key)
  drop-column NAME            drop a column (dropColumn; not a partition or primary key)
  alter-column NAME           --type T (updateColumnType: Java's allowed casts), --nullable /
                              --not-null (updateColumnNullability), --comment C
                              (updateColumnComment), --first / --after COL
                              (updateColumnPosition); several at once apply in that order
  comment TEXT                the table comment (updateComment)
  --branch B                  alter branch B's schema instead of main's
  --dry-run                   print the new schema, write nothing
  --json                      print {"schema_id", "dry_run", "schema"} (the schema as written)
exit codes: 0 done, 1 failed, 2 usage or a change Java refuses (its message), 3 conflict (a
concurrent alter made the change inapplicable)]],
}

local ARGS = {set = -1, reset = -1, ["add-column"] = 1, ["rename-column"] = 2, ["drop-column"] = 1,
              ["alter-column"] = 1, comment = 1}

local function changes_of(opts, cmd, args)
  local c = {}
  local function only(...)
    local allowed = {}
    for _, f in ipairs({...}) do allowed[f] = true end
    for _, f in ipairs({"after", "first", "comment", "type", "nullable", "not_null"}) do
      if opts[f] ~= nil and not allowed[f] then
        cli.usage_error("--" .. f:gsub("_", "-") .. " does not apply to " .. cmd)
      end
    end
  end
  if opts.first and opts.after then cli.usage_error("give --first or --after, not both") end
  if opts.nullable and opts.not_null then cli.usage_error("give --nullable or --not-null, not both") end
  if cmd == "set" then
    only()
    for _, a in ipairs(args) do
      local k, v = a:match("^([^=]+)=(.*)$")
      if not k then cli.usage_error("set expects KEY=VALUE, got '" .. a .. "'") end
      c[#c + 1] = {kind = "setOption", key = k, value = v}
    end
  elseif cmd == "reset" then
    only()
    for _, k in ipairs(args) do c[#c + 1] = {kind = "removeOption", key = k} end
  elseif cmd == "add-column" then
    only("after", "first", "comment")
    local name, ty = args[1]:match("^([^:]+):(.+)$")
    if not name then cli.usage_error("add-column expects NAME:TYPE, got '" .. args[1] .. "'") end
    c[1] = {kind = "addColumn", column = name, type = ty, comment = opts.comment, after = opts.after,
            first = opts.first}
  elseif cmd == "rename-column" then
    only()
    c[1] = {kind = "renameColumn", column = args[1], new_name = args[2]}
  elseif cmd == "drop-column" then
    only()
    c[1] = {kind = "dropColumn", column = args[1]}
  elseif cmd == "comment" then
    only()
    c[1] = {kind = "updateComment", comment = args[1]}
  else
    local col = args[1]
    if opts.type then c[#c + 1] = {kind = "updateColumnType", column = col, type = opts.type} end
    if opts.nullable or opts.not_null then
      c[#c + 1] = {kind = "updateColumnNullability", column = col, nullable = opts.nullable == true}
    end
    if opts.comment then c[#c + 1] = {kind = "updateColumnComment", column = col, comment = opts.comment} end
    if opts.first or opts.after then
      c[#c + 1] = {kind = "updateColumnPosition", column = col, first = opts.first, after = opts.after}
    end
    if #c == 0 then cli.usage_error("alter-column needs --type, --nullable, --not-null, --comment, --first or --after") end
  end
  if #c == 0 then cli.usage_error(cmd .. " needs at least one argument") end
  return c
end

local function main(opts, pos)
  local cmd = pos[2]
  local want = ARGS[cmd]
  if not want then
    cli.usage_error("unknown command '" .. cmd .. "' (set, reset, add-column, rename-column, drop-column, " ..
                    "alter-column, comment)")
  end
  local args = {table.unpack(pos, 3)}
  if want >= 0 and #args ~= want then cli.usage_error(cmd .. " takes " .. want .. " argument(s)") end
  local changes = changes_of(opts, cmd, args)
  local t = cli.check(cli.open(pos[1], opts))
  local ok, r, msg, code = pcall(t.alter_table, t, changes, {dry_run = opts.dry_run})
  if not ok then cli.fail(cli.strip_where(r), "misuse") end     -- a change Java refuses: its message
  if not r then cli.fail(msg, code) end
  if opts.json then
    io.stdout:write('{"schema_id": ', json.encode(r.schema_id), ', "dry_run": ', tostring(r.dry_run),
                    ', "schema": ', r.schema, "}\n")
  elseif r.dry_run then
    io.stdout:write("would write schema-", r.schema_id, ":\n", r.schema, "\n")
  else
    io.stdout:write("wrote schema-", r.schema_id, "\n")
  end
  t:close()
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
