-- read.lua TABLE [--snapshot ID | --tag NAME] [--partition K=V ...] [--branch NAME] [--limit N]
-- Prints the rows of a snapshot as JSON lines, as Java's batch read returns them
-- (primary-key tables merged by key, deletion vectors applied).
local paimon = require "paimon"
local cli = require "paimon.cli"
local json = require "paimon.json"

local spec = {
  name = "read.lua",
  positional = {"TABLE"},
  flags = {snapshot = "integer", tag = "string", partition = "string", branch = "string", limit = "integer"},
  multi = {partition = true},
  min = {snapshot = 1, limit = 0},
  usage = [[
usage: paimon-lua read.lua TABLE [--snapshot ID | --tag NAME] [--partition KEY=VALUE ...]
                [--branch NAME] [--limit N]
  One JSON object per row, columns in schema order (64-bit integers exact).
  NULL is null; DECIMAL a string ("12.34"); DATE "yyyy-MM-dd"; TIME "HH:mm:ss[.fff]";
  TIMESTAMP "yyyy-MM-dd HH:mm:ss[.fff]"; BINARY/BYTES base64; ARRAY/MAP/ROW nested JSON.
  Reads Avro data files only (file.format=avro); other formats fail.
  Rows as Java's batch read returns them: deletion vectors applied;
  primary-key tables merged by key per bucket (merge-engine deduplicate or
  first-row; level-0 files unseen with deletion vectors or first-row, as in
  Java); partial-update, aggregation and sequence.field are refused (exit 1).
  Memory: the live-file list, then one bucket's distinct keys at a time.
  See docs/writing.md "Primary-key tables and deletion vectors".
exit codes: 0 ok, 1 failed, 2 usage]],
}

local base64 = require("paimon.base64").encode

-- shortest text that reads back as the same double
local function number_text(v)
  if math.type(v) == "integer" then return string.format("%d", v) end
  if v ~= v or v == math.huge or v == -math.huge then return "null" end
  for p = 15, 17 do
    local s = string.format("%." .. p .. "g", v)
    if tonumber(s) == v then
      if not s:find("[%.eEn]") then s = s .. ".0" end
      return s
    end
  end
end

-- A value as JSON with every double in number_text's form, nested ones
-- (ARRAY, MAP, ROW) too: json.encode prints them with %.17g
-- (20.199999999999999). Arrays and objects are told apart as json.encode
-- does (keys 1..n: an array), object keys sorted.
local function value_text(v)
  if v == nil or v == paimon.null then return "null" end
  if type(v) == "number" then return number_text(v) end
  if type(v) ~= "table" then return json.encode(v) end
  local n, parts = #v, {}
  local is_array = n > 0
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > n then is_array = false; break end
  end
  if is_array then
    for i = 1, n do parts[i] = value_text(v[i]) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = {}
  for k, x in pairs(v) do keys[#keys + 1] = {type(k) == "number" and number_text(k) or tostring(k), x} end
  table.sort(keys, function(a, b) return a[1] < b[1] end)
  for i, kx in ipairs(keys) do parts[i] = json.encode(kx[1]) .. ":" .. value_text(kx[2]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local check = cli.check

local function main(opts, pos)
  if opts.snapshot and opts.tag then cli.usage_error("--snapshot and --tag exclude each other") end
  local t = check(cli.open(pos[1], opts))
  local partition
  for _, kv in ipairs(opts.partition or {}) do
    local k, v = kv:match("^([^=]+)=(.*)$")
    if not k then cli.usage_error("--partition expects KEY=VALUE, got '" .. kv .. "'") end
    cli.check_partition_column("--partition " .. kv, k, t:schema().partition_keys)
    partition = partition or {}
    partition[k] = v
  end
  local s
  if opts.tag then s = check(t:tag(opts.tag))
  elseif opts.snapshot then s = check(t:snapshot(opts.snapshot))
  else
    local msg, code
    s, msg, code = t:latest_snapshot()
    if not s and code ~= "notfound" then cli.fail(msg, code) end
  end
  if not s or opts.limit == 0 then t:close(); return cli.EXIT_OK end
  local fields = t:schema().fields
  local binary, maps = {}, {}
  for _, f in ipairs(fields) do
    local ty = f.type:upper()
    binary[f.name] = ty:match("^BINARY") or ty:match("^VARBINARY") or ty:match("^BYTES") or ty:match("^BLOB")
    maps[f.name] = ty:match("^MAP") or ty:match("^MULTISET")
  end
  local n = 0
  for row in check(cli.usage_call(s.read, s, {partition = partition})) do
    if opts.limit and n >= opts.limit then break end
    local parts = {}
    for i, f in ipairs(fields) do
      local v = row[f.name]
      local text
      if v == nil or v == paimon.null then text = "null"
      elseif type(v) == "number" then text = number_text(v)
      elseif type(v) == "string" and binary[f.name] then text = json.encode(base64(v))
      elseif type(v) == "table" and maps[f.name] then
        local obj = {}                     -- a JSON object even for integer keys
        for k, x in pairs(v) do obj[type(k) == "number" and number_text(k) or tostring(k)] = x end
        text = next(obj) == nil and "{}" or value_text(obj)
      else text = value_text(v) end
      parts[i] = json.encode(f.name) .. ":" .. text
    end
    io.stdout:write("{", table.concat(parts, ","), "}\n")
    n = n + 1
  end
  t:close()
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
