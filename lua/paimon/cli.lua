-- Shared plumbing of the command-line scripts: argument parsing, exit
-- codes, tables and JSON on stdout, messages on stderr.
local json = require "paimon.json"

local M = {}
local open_rows   -- the JSON row stream being written (M.json_rows), if any

local unpack = table.unpack or unpack          -- LuaJIT has no table.unpack/pack
local function pack(...) return {n = select("#", ...), ...} end

M.EXIT_OK, M.EXIT_FAILED, M.EXIT_USAGE, M.EXIT_CONFLICT = 0, 1, 2, 3
-- stopped by Ctrl-C / SIGTERM at a consistent point (the shell's 128 + SIGINT)
M.EXIT_INTERRUPTED = 130

-- Errors the scripts raise on purpose: a usage error (exit 2) or a failure
-- with the core's code name (exit by M.exit_code). Tables, so no Lua
-- "file:line:" position reaches the user.
local Usage = {}
Usage.__index = Usage
Usage.__tostring = function(u) return u.msg end

local Failure = {}
Failure.__index = Failure
Failure.__tostring = function(f) return f.msg end

function M.usage_error(msg) error(setmetatable({msg = msg}, Usage), 0) end

-- The one mapping from a core code name to an exit code: conflict and
-- "exists" (a table, tag or branch that is already there: one code in every
-- script, issue 24) 3,
-- misuse/usage 2, anything else (io, corrupt, notfound, unsupported, ...) 1.
-- "uncertain" (a commit or a no-replace write whose outcome is unknown: it
-- may have landed, every file is kept; docs/s3.md "Commit outcomes") is 1
-- too, never 3: a conflict says nothing was published, uncertain cannot.
function M.exit_code(code)
  if code == "conflict" or code == "exists" then return M.EXIT_CONFLICT end
  if code == "misuse" or code == "usage" then return M.EXIT_USAGE end
  if code == "interrupted" then return M.EXIT_INTERRUPTED end
  return M.EXIT_FAILED
end

-- Fail with a message and the core's code name (after nil, msg, code).
function M.fail(msg, code)
  error(setmetatable({msg = tostring(msg), code = code or "error"}, Failure), 0)
end

-- v, ... or fail with msg and code: check(t:snapshot(id)).
function M.check(v, msg, code, ...)
  if v == nil then M.fail(msg, code) end
  return v, msg, code, ...
end

-- A message without the "file.lua:12: " positions Lua put in front of it.
function M.strip_where(msg)
  msg = tostring(msg)
  while true do
    local rest = msg:match("^[^%s:]+%.lua:%d+: (.*)$") or msg:match("^%[string \"[^\"]*\"%]:%d+: (.*)$")
    if not rest then return msg end
    msg = rest
  end
end

-- Call f(...) whose arguments come from the command line: what the binding
-- raises (misuse: an unknown partition column, a bad value) is a usage error.
function M.usage_call(f, ...)
  local res = pack(pcall(f, ...))
  if not res[1] then
    local e = res[2]
    if getmetatable(e) == Usage or getmetatable(e) == Failure then error(e, 0) end
    M.usage_error(M.strip_where(e))
  end
  return unpack(res, 2, res.n)
end

-- --option KEY=VALUE, which every script takes: FileIO options for the
-- table's URI (s3.endpoint, ...), collected into opts.options. The value
-- may hold '='; values are never echoed (they may be credentials).
M.OPTION_HELP = [[
  --option KEY=VALUE  a FileIO option for TABLE's URI, repeatable (Paimon's names:
                   s3.endpoint, s3.region, s3.path.style.access, ...); credentials are
                   best left to the environment (AWS_ACCESS_KEY_ID, ...) or ~/.aws]]

local function add_option(opts, arg)
  if arg == nil then M.usage_error("option --option needs KEY=VALUE") end
  local k, v = arg:match("^([^=]*)=(.*)$")
  if not k then M.usage_error("option --option needs KEY=VALUE (the argument has no '=')") end
  if k == "" then M.usage_error("option --option needs KEY=VALUE (the key is empty)") end
  opts.options = opts.options or {}
  if opts.options[k] ~= nil then M.usage_error("option --option " .. k .. " is given twice") end
  opts.options[k] = v
end

-- A credential in --option is readable by every local user while the script
-- runs (/proc/PID/cmdline, ps) and stays in shell history: one warning per
-- such key on stderr, naming the key, never the value (docs/s3.md). The
-- credential keys are the core's (paimon.core.option_is_secret); an
-- endpoint "scheme://user:password@host" carries one too.
local function warn_credentials(spec, options)
  if not options then return end
  local core = require "paimon.core"
  local keys = {}
  for k, v in pairs(options) do
    if core.option_is_secret(k) or (k:match("endpoint$") and v:match("^%a[%w+.-]*://[^/?#]*@")) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    io.stderr:write(spec.name, ": warning: --option ", k, " puts a credential on the command line, where any ",
                    "local user can read it (/proc/PID/cmdline, ps) and shell history keeps it; give it through ",
                    "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) or a ~/.aws ",
                    "profile (AWS_PROFILE) instead\n")
  end
end

-- Java's procedure argument names (Flink/Spark CALL sys.X(...)), accepted as
-- the flag of ours that means the same: each maps to the first of its
-- candidates the script has (underscores already read as dashes, so
-- --older_than, --retain_max ... need nothing here).
M.JAVA_ALIASES = {
  snapshot_id = {"to_snapshot", "snapshot"},        -- rollback_to, create_tag
  tag = {"to_tag", "from_tag"},                     -- rollback_to, create_branch
  timestamp = {"to_timestamp"},                     -- rollback_to_timestamp
  watermark = {"to_watermark"},                     -- rollback_to_watermark
  next_snapshot_id = {"next_snapshot"},             -- reset_consumer
  expire_strategy = {"strategy"},                   -- expire_partitions
  parallelism = {"threads"},                        -- remove_orphan_files
}

-- spec = { name = "inspect.lua", usage = "...", positional = {"TABLE", "VIEW"}, optional = {"ID"},
--          flags = { json = "boolean", snapshot = "integer", branch = "string" },
--          multi = { partition = true }, min = { snapshot = 1 } }
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
    elseif a == "--option" then
      i = i + 1
      add_option(opts, argv[i])
    elseif a:sub(1, 9) == "--option=" then
      add_option(opts, a:sub(10))
    elseif a:sub(1, 2) == "--" then
      local name, value = a:match("^%-%-([%w%-_]+)=(.*)$")
      name = name or a:sub(3):match("^[^=]*")   -- never echo what follows '='
      local key = name:gsub("%-", "_")
      local kind = spec.flags[key]
      for _, k in ipairs(not kind and M.JAVA_ALIASES[key] or {}) do
        if spec.flags[k] then key, kind = k, spec.flags[k]; break end
      end
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
          -- decimal digits only: "1e3", "0x10" and " 5" are not what was meant
          local n = value:match("^%-?%d+$") and math.tointeger(tonumber(value))
          if not n then M.usage_error("option --" .. name .. " expects an integer, got '" .. value .. "'") end
          local min = spec.min and spec.min[key]
          if min and n < min then
            M.usage_error("option --" .. name .. " must be at least " .. min .. ", got " .. value)
          end
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
  warn_credentials(spec, opts.options)
  local need = spec.positional or {}
  if #pos < #need then M.usage_error("missing " .. need[#pos + 1]) end
  local most = #need + #(spec.optional or {})   -- optional positionals follow the required ones
  if #pos > most and not spec.varargs then M.usage_error("unexpected argument '" .. pos[most + 1] .. "'") end
  return opts, pos
end

-- A --partition column the table does not have: the same usage error (exit
-- 2) in every script. what names the flag and its text.
function M.check_partition_column(what, column, keys)
  for _, k in ipairs(keys) do if k == column then return end end
  M.usage_error(what .. ": '" .. column .. "' is not a partition column (partition columns: " ..
                (#keys > 0 and table.concat(keys, ", ") or "none, the table is not partitioned") .. ")")
end

-- Whether argv asks for --json (also when the arguments do not parse).
local function wants_json(spec, argv)
  if not (spec.flags and spec.flags.json) then return false end
  for _, a in ipairs(argv) do
    if a == "--" then return false end
    if a == "--json" then return true end
  end
  return false
end

-- Classify what was raised: our own errors keep their code; an error raised
-- by a C function (error(), assert(), the binding) is deliberate and loses
-- its position; one raised by the Lua VM itself (indexing nil, ...) is a bug
-- in the script: "internal error" with its position, and a traceback when
-- PAIMON_LUA_TRACEBACK is set.
local function classify(e)
  local mt = getmetatable(e)
  if mt == Usage then return e end
  if mt == Failure then return e end
  local raiser = debug.getinfo(2, "S")
  if type(e) == "string" and raiser and raiser.what ~= "C" then
    local msg = "internal error: " .. e
    if os.getenv("PAIMON_LUA_TRACEBACK") then msg = debug.traceback(msg, 2) end
    return {msg = msg, code = "internal"}
  end
  return {msg = M.strip_where(e), code = "error"}
end

-- Run main(opts, pos) -> exit code. Every error ends here: usage errors exit
-- 2 (the message and "see: paimon-lua NAME --help" on stderr), failures exit by M.exit_code, with the
-- message on stderr; with --json also one {"error", "code"} object on stdout,
-- so automation never parses an empty string.
-- paimon.open(path, {branch = opts.branch, options = opts.options}): the
-- table of a script, with the --option FileIO options.
function M.open(path, opts)
  return M.usage_call(require("paimon").open, path, {branch = opts.branch, options = opts.options})
end

-- The usage text with the --option line every script takes.
local function usage_of(spec)
  if spec.usage:find("--option", 1, true) then return spec.usage end
  local head, tail = spec.usage:match("^(.-)\n(exit codes:.*)$")
  if head then return head .. "\n" .. M.OPTION_HELP .. "\n" .. tail end
  return spec.usage .. "\n" .. M.OPTION_HELP
end

function M.run(spec, main, argv)
  spec.usage = usage_of(spec)
  local ok, res = xpcall(function()
    local opts, pos = M.parse(argv, spec)
    if opts.help then
      io.stdout:write(spec.usage, "\n")
      return M.EXIT_OK
    end
    return main(opts, pos)
  end, classify)
  if ok then return res or M.EXIT_OK end
  local code, rc
  if getmetatable(res) == Usage then
    code, rc = "usage", M.EXIT_USAGE
    -- one line and where the help is (issue 24: not the whole help)
    io.stderr:write(spec.name, ": ", res.msg, "\n", "see: paimon-lua ", spec.name, " --help\n")
  else
    code, rc = res.code, M.exit_code(res.code)
    io.stderr:write(spec.name, ": ", res.msg, "\n")
  end
  if wants_json(spec, argv) then
    if open_rows and open_rows.started() then open_rows.close() end
    io.stdout:write(json.encode({error = res.msg, code = code}, {"error", "code"}), "\n")
  end
  return rc
end

function M.print_json(rows, order)
  io.stdout:write(json.encode(rows, order), "\n")
end

-- A JSON array written to stdout one row at a time, each row encoded in C
-- (paimon.core.json_encode: paimon.json's rules) as it arrives, so memory
-- does not grow with the rows. out:row(r) ... out:close(); the bytes are
-- those of print_json(json.array(rows), order). A failure after the first
-- row closes the array (run does it) before the {"error"} line: the output
-- is then two JSON documents, one per line, and the exit code says which.
function M.json_rows(order)
  local encode = require("paimon.core").json_encode
  local array_mt, out, sep = json.array_mt, io.stdout, "["
  out:setvbuf("full")
  local stream = {
    row = function(_, r)
      out:write(sep, encode(r, order, array_mt))
      sep = ","
    end,
    close = function()
      open_rows = nil
      out:write(sep == "[" and "[]\n" or "]\n")
      out:flush()
    end,
    started = function() return sep ~= "[" end,
  }
  open_rows = stream
  return stream
end

-- A value inside a table cell (partition values, options): null and the
-- empty string must not look alike (they are different partitions).
local function inner(v)
  if v == json.null then return "null" end
  if v == "" or v == "null" then return '"' .. v .. '"' end
  return nil
end

local function cell(v, nested)
  if v == nil or v == json.null then return nested and "null" or "" end
  if type(v) == "table" then
    if #v > 0 or next(v) == nil then
      local parts = {}
      for i = 1, #v do parts[i] = cell(v[i], true) end
      if #parts > 0 then return table.concat(parts, ",") end
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. (inner(v[k]) or cell(v[k], true)) end
    return table.concat(parts, ",")
  end
  if nested and v == "" then return '""' end
  return tostring(v)
end
M.cell = cell

-- Columns a terminal gives s: one per UTF-8 code point, two for East Asian
-- wide ones, none for combining marks (Lua 5.1/LuaJIT have no utf8 library).
local function is_wide(cp)
  return (cp >= 0x1100 and cp <= 0x115F) or (cp >= 0x2E80 and cp <= 0xA4CF and cp ~= 0x303F) or
         (cp >= 0xAC00 and cp <= 0xD7A3) or (cp >= 0xF900 and cp <= 0xFAFF) or (cp >= 0xFE30 and cp <= 0xFE4F) or
         (cp >= 0xFF00 and cp <= 0xFF60) or (cp >= 0xFFE0 and cp <= 0xFFE6) or (cp >= 0x1F300 and cp <= 0x1F64F) or
         (cp >= 0x1F900 and cp <= 0x1F9FF) or (cp >= 0x20000 and cp <= 0x3FFFD)
end

function M.display_width(s)
  local w, i, n = 0, 1, #s
  while i <= n do
    local b = s:byte(i)
    local len, cp = 1, b
    if b >= 0xF0 and b < 0xF8 then len, cp = 4, b - 0xF0
    elseif b >= 0xE0 then len, cp = 3, b - 0xE0
    elseif b >= 0xC0 then len, cp = 2, b - 0xC0 end
    if len > 1 then
      for j = i + 1, i + len - 1 do
        local c = s:byte(j)
        if not c or c < 0x80 or c > 0xBF then len = j - i; cp = nil; break end
        cp = cp * 64 + (c - 0x80)
      end
    end
    if cp and len > 1 and ((cp >= 0x0300 and cp <= 0x036F) or cp == 0x200B) then
      -- combining mark, zero-width space: no column
    elseif cp and is_wide(cp) then w = w + 2
    else w = w + 1 end
    i = i + len
  end
  return w
end

local floor = math.floor

local function split_ms(ms)
  ms = tonumber(ms)
  local secs = floor(ms / 1000)
  return secs, ms - secs * 1000
end

-- Epoch milliseconds -> ISO 8601 local time with its offset,
-- 2026-11-02T10:15:00.123+01:00.
function M.iso_time(ms)
  if type(ms) ~= "number" then return ms end
  local secs, frac = split_ms(ms)
  local zone = os.date("%z", secs)
  zone = zone:match("^[+-]%d%d%d%d$") and zone:sub(1, 3) .. ":" .. zone:sub(4) or ""
  return os.date("%Y-%m-%dT%H:%M:%S", secs) .. string.format(".%03d", frac) .. zone
end

-- Epoch milliseconds of a local wall clock (Paimon's _CREATION_TIME: the
-- local date and time written as if UTC) -> ISO 8601 local time, no offset.
function M.wall_time(ms)
  if type(ms) ~= "number" then return ms end
  local secs, frac = split_ms(ms)
  return os.date("!%Y-%m-%dT%H:%M:%S", secs) .. string.format(".%03d", frac)
end

-- Milliseconds -> "1d 2h 3m 4s 5ms" (zero units left out; "0ms").
function M.duration(ms)
  if type(ms) ~= "number" then return ms end
  local sign = ms < 0 and "-" or ""
  ms = math.abs(ms)
  local parts = {}
  for _, u in ipairs{{"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1}} do
    local n = floor(ms / u[2])
    if n > 0 then parts[#parts + 1] = string.format("%d%s", n, u[1]) end
    ms = ms - n * u[2]
  end
  if #parts == 0 then return "0ms" end
  return sign .. table.concat(parts, " ")
end

-- Plain aligned table with a header row; format[column](value) renders a
-- column for people (times, durations) where given.
function M.print_table(rows, columns, format)
  local widths, cells = {}, {}
  for c, name in ipairs(columns) do widths[c] = M.display_width(name) end
  for r, row in ipairs(rows) do
    cells[r] = {}
    for c, name in ipairs(columns) do
      local v = row[name]
      local f = format and format[name]
      if f and v ~= nil and v ~= json.null then v = f(v) end
      local s = cell(v)
      local w = M.display_width(s)
      cells[r][c] = {s, w}
      if w > widths[c] then widths[c] = w end
    end
  end
  local function line(vals)
    local parts = {}
    for c, v in ipairs(vals) do
      parts[c] = c == #vals and v[1] or v[1] .. string.rep(" ", widths[c] - v[2])
    end
    io.stdout:write(table.concat(parts, "  "), "\n")
  end
  local header = {}
  for c, name in ipairs(columns) do header[c] = {name, widths[c] and M.display_width(name)} end
  line(header)
  for r = 1, #rows do line(cells[r]) end
  if #rows == 0 then io.stdout:write("(no rows)\n") end
end

return M
