-- create_table.lua TABLE --field name:TYPE ... [--partition K] [--primary-key K]
--                  [--option K=V] [--comment TEXT] [--spec FILE.json] [--json]
-- Creates a Paimon table: writes TABLE/schema/schema-0 as Java does, never
-- replacing an existing table.
local paimon = require "paimon"
local cli = require "paimon.cli"
local json = require "paimon.json"
local cjson = require "cjson"

local create_table = paimon.create_table or require("paimon.core").create_table

local spec = {
  name = "create_table.lua",
  positional = {"TABLE"},
  flags = {field = "string", partition = "string", primary_key = "string",
           comment = "string", spec = "string", json = "boolean"},
  multi = {field = true, partition = true, primary_key = true},
  usage = [[
usage: paimon-lua create_table.lua TABLE --field NAME:TYPE ... [--partition KEY ...]
                  [--primary-key KEY ...] [--option KEY=VALUE ...] [--comment TEXT]
                  [--spec FILE.json] [--json]
  --field NAME:TYPE    a column, e.g. --field id:'BIGINT NOT NULL' --field 'price:DECIMAL(10, 2)'
                       (types as Paimon writes them; ARRAY<T>, MAP<K, V>, ROW<a T, ...> too)
  --partition KEY      a partition key (repeat for more, in order)
  --primary-key KEY    a primary-key column (repeat for more)
  --option KEY=VALUE   a table option, e.g. --option bucket=-1; file.format defaults to avro
                       (what write.lua writes; Paimon's own default would be parquet).
                       Also handed to the FileIO of TABLE's URI; its own keys (s3.endpoint,
                       ...) and credentials (secret, password, token, access-key, session
                       in the key) go to the FileIO only, never into the schema
  --comment TEXT       the table comment
  --spec FILE.json     read {"fields": [{"name", "type"}], "partition_keys", "primary_keys",
                       "options", "comment"} from a JSON file (flags add to it)
  --json               print the created schema as JSON
exit codes: 0 created, 1 failed (invalid schema, I/O), 2 usage, 3 the table already exists]],
}

local function read_spec(file)
  local f, err = io.open(file, "rb")
  if not f then cli.usage_error("cannot read --spec " .. file .. ": " .. tostring(err)) end
  local text = f:read("a")
  f:close()
  local ok, s = pcall(cjson.decode, text)
  if not ok or type(s) ~= "table" then cli.usage_error("--spec " .. file .. " is not a JSON object") end
  return {
    fields = s.fields or {},
    partition_keys = s.partition_keys or s.partitionKeys or {},
    primary_keys = s.primary_keys or s.primaryKeys or {},
    options = s.options or {},
    comment = s.comment ~= cjson.null and s.comment or nil,
  }
end

local function main(opts, pos)
  local s = opts.spec and read_spec(opts.spec) or {fields = {}, partition_keys = {}, primary_keys = {}, options = {}}
  for _, f in ipairs(opts.field or {}) do
    local name, ty = f:match("^([^:]+):(.+)$")
    if not name then cli.usage_error("--field expects NAME:TYPE, got '" .. f .. "'") end
    s.fields[#s.fields + 1] = {name = name, type = ty}
  end
  for _, k in ipairs(opts.partition or {}) do s.partition_keys[#s.partition_keys + 1] = k end
  for _, k in ipairs(opts.primary_key or {}) do s.primary_keys[#s.primary_keys + 1] = k end
  local core = require "paimon.core"
  for k, v in pairs(opts.options or {}) do
    if not (core.fileio_option_known(pos[1], k) or core.option_is_secret(k)) then s.options[k] = v end
  end
  if opts.comment then s.comment = opts.comment end
  if #s.fields == 0 then cli.usage_error("no columns: give --field NAME:TYPE or --spec FILE") end
  -- Paimon's default is parquet, which write.lua cannot write: a table made
  -- here gets what paimon-lua writes unless the caller chose a format
  local defaulted_format = s.options["file.format"] == nil
  if defaulted_format then s.options["file.format"] = "avro" end
  local t = cli.check(create_table(pos[1], s, {options = opts.options}))
  local sc = t:schema()
  if opts.json then
    local fields = json.array()
    for i, f in ipairs(sc.fields) do fields[i] = {id = f.id, name = f.name, type = f.type} end
    cli.print_json({path = t:path(), schema_id = sc.id, fields = fields,
                    partition_keys = json.array(sc.partition_keys), primary_keys = json.array(sc.primary_keys),
                    options = sc.options, comment = sc.comment or json.null},
                   {"path", "schema_id", "fields", "partition_keys", "primary_keys", "options", "comment"})
  else
    io.stdout:write("created ", t:path(), " (", #sc.fields, " columns)\n")
    if defaulted_format then
      io.stdout:write("file.format=avro (no --option file.format given; paimon-lua writes Avro data files only)\n")
    end
  end
  t:close()
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
