-- Shared plumbing of the command-line scripts: argument parsing, exit
-- codes, tables and JSON on stdout, messages on stderr.
local json = require "paimon.json"

local M = {}

M.EXIT_OK, M.EXIT_FAILED, M.EXIT_USAGE, M.EXIT_CONFLICT = 0, 1, 2, 3

local Usage = {}
Usage.__index = Usage
Usage.__tostring = function(u) return u.msg end

function M.usage_error(msg) error(setmetatable({msg = msg}, Usage), 0) end

-- spec = { name = "inspect.lua", usage = "...", positional = {"TABLE", "VIEW"},
--          flags = { json = "boolean", snapshot = "integer", branch = "string" },
--          multi = { partition = true } }
function M.parse(argv, spec)
  local opts, pos = {}, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "-h" or a == "--help" then
      opts.help = true
    elseif a == "--" then
      for j = i + 1, #argv do pos[#pos + 1] = argv[j] end
      break
    elseif a:sub(1, 2) == "--" then
      local name, value = a:match("^%-%-([%w%-_]+)=(.*)$")
      name = name or a:sub(3)
      local key = name:gsub("%-", "_")
      local kind = spec.flags[key]
      if not kind then M.usage_error("unknown option --" .. name) end
      if kind == "boolean" then
        if value then M.usage_error("option --" .. name .. " takes no value") end
        opts[key] = true
      else
        if not value then
          i = i + 1
          value = argv[i]
          if value == nil then M.usage_error("option --" .. name .. " needs a value") end
        end
        if kind == "integer" then
          local n = math.tointeger(tonumber(value))
          if not n then M.usage_error("option --" .. name .. " expects an integer, got '" .. value .. "'") end
          value = n
        end
        if spec.multi and spec.multi[key] then
          opts[key] = opts[key] or {}
          table.insert(opts[key], value)
        else
          opts[key] = value
        end
      end
    elseif a:sub(1, 1) == "-" and #a > 1 then
      M.usage_error("unknown option " .. a)
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  if opts.help then return opts, pos end
  local need = spec.positional or {}
  if #pos < #need then M.usage_error("missing " .. need[#pos + 1]) end
  if #pos > #need then M.usage_error("unexpected argument '" .. pos[#need + 1] .. "'") end
  return opts, pos
end

-- Run main(argv) -> exit code, turning usage errors into exit code 2 and
-- other errors into exit code 1 with the message on stderr.
function M.run(spec, main, argv)
  local ok, res = pcall(function()
    local opts, pos = M.parse(argv, spec)
    if opts.help then
      io.stdout:write(spec.usage, "\n")
      return M.EXIT_OK
    end
    return main(opts, pos)
  end)
  if ok then return res or M.EXIT_OK end
  if getmetatable(res) == Usage then
    io.stderr:write(spec.name, ": ", res.msg, "\n", spec.usage, "\n")
    return M.EXIT_USAGE
  end
  io.stderr:write(spec.name, ": ", tostring(res), "\n")
  return M.EXIT_FAILED
end

-- Fail with a message (exit code 1, or `code`), used after nil, msg, code.
function M.fail(msg, code)
  error(msg, 0)
end

function M.print_json(rows, order)
  io.stdout:write(json.encode(rows, order), "\n")
end

local function cell(v)
  if v == nil or v == json.null then return "" end
  if type(v) == "table" then
    if #v > 0 or next(v) == nil then
      local parts = {}
      for i = 1, #v do parts[i] = cell(v[i]) end
      if #parts > 0 then return table.concat(parts, ",") end
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. cell(v[k]) end
    return table.concat(parts, ",")
  end
  return tostring(v)
end
M.cell = cell

-- Plain aligned table with a header row.
function M.print_table(rows, columns)
  local widths, cells = {}, {}
  for c, name in ipairs(columns) do widths[c] = #name end
  for r, row in ipairs(rows) do
    cells[r] = {}
    for c, name in ipairs(columns) do
      local s = cell(row[name])
      cells[r][c] = s
      if #s > widths[c] then widths[c] = #s end
    end
  end
  local function line(vals)
    local parts = {}
    for c, v in ipairs(vals) do
      parts[c] = c == #vals and v or v .. string.rep(" ", widths[c] - #v)
    end
    io.stdout:write(table.concat(parts, "  "), "\n")
  end
  line(columns)
  for r = 1, #rows do line(cells[r]) end
  if #rows == 0 then io.stdout:write("(no rows)\n") end
end

return M
