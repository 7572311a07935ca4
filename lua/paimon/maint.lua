-- Shared helpers of the destructive scripts (expire.lua,
-- remove_orphan_files.lua): durations and timestamps, progress on
-- stderr, the human and --json result printers and exit codes.
local core = require "paimon.core"
local cli = require "paimon.cli"
local json = require "paimon.json"

local M = {}

-- Portable between Lua 5.4 and LuaJIT (OpenResty): floor division and
-- integer checks through these helpers.
local floor = math.floor
local function toint(x)
  x = tonumber(x)
  if x and x == floor(x) and x > -2^63 and x < 2^63 then return x end
  return nil
end
M.toint = toint

-- "90s", "30m", "30 min", "1h", "7d", "100ms" -> milliseconds, or nil:
-- Paimon's duration syntax (paimon.duration, held to the core's parser).
M.parse_duration = require("paimon.duration").parse_ms

local days_from_civil = require("paimon.policy.partition_expire").days_from_civil

-- Timestamp "2026-11-29 10:00:00", "2026-11-29T10:00:00[.123][Z|+01:00]" or
-- "2026-11-29" -> epoch milliseconds. Without a zone: local time.
function M.parse_timestamp(s)
  if type(s) ~= "string" then return nil end
  local y, mo, d, rest = s:match("^%s*(%d%d%d%d)%-(%d%d)%-(%d%d)(.-)%s*$")
  if not y then return nil end
  local h, mi, sec, frac, zone = 0, 0, 0, "", ""
  if rest ~= "" then
    local hh, mm, tail = rest:match("^[T ](%d%d):(%d%d)(.*)$")
    if not hh then return nil end
    h, mi = tonumber(hh), tonumber(mm)
    local ss, tail2 = tail:match("^:(%d%d)(.*)$")
    if ss then sec, tail = tonumber(ss), tail2 end
    local fr, tail3 = tail:match("^%.(%d+)(.*)$")
    if fr then frac, tail = fr, tail3 end
    zone = tail
  end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  if mo < 1 or mo > 12 or d < 1 or h > 23 or mi > 59 or sec > 59 then return nil end
  -- no silent normalisation (os.time would turn Feb 31 into Mar 2/3)
  local leap = (y % 4 == 0 and y % 100 ~= 0) or y % 400 == 0
  local mdays = {31, leap and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
  if d > mdays[mo] then return nil end
  local ms = frac ~= "" and toint((frac .. "00"):sub(1, 3)) or 0
  if zone == "" then
    local t = os.time{year = y, month = mo, day = d, hour = h, min = mi, sec = sec, isdst = nil}
    if not t then return nil end
    return t * 1000 + ms
  end
  local off
  if zone == "Z" or zone == "z" then off = 0
  else
    local sign, oh, om = zone:match("^([+-])(%d%d):?(%d%d)$")
    if not sign then return nil end
    off = (tonumber(oh) * 60 + tonumber(om)) * 60 * (sign == "-" and -1 or 1)
  end
  local secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off
  return secs * 1000 + ms
end

-- --older-than value: a duration (now minus it) or a timestamp.
-- A number without a unit is not read as a guess (issue 24: "--older-than 7"
-- was 7 ms): a cut-off needs a duration with its unit or a time; flag names
-- the flag for the message; epoch (--timestamp: Java takes epoch ms there)
-- reads a bare number as epoch milliseconds instead.
function M.parse_cutoff(s, now_ms, flag, epoch)
  flag = flag or "--older-than"
  if type(s) == "string" and s:match("^%s*%d+%s*$") then
    if epoch then return math.tointeger(tonumber(s)) end
    cli.usage_error(flag .. " " .. s .. ": a number without a unit is ambiguous; give a duration with its unit " ..
                    "(" .. s .. "d, " .. s .. "h, " .. s .. "min, " .. s .. "ms) or a time (2026-11-29 10:00:00, ISO 8601)")
  end
  local d = M.parse_duration(s)
  if d then return now_ms - d end
  local t = M.parse_timestamp(s)
  if t then return t end
  cli.usage_error(flag .. " expects a duration (90s, 30m, 1h, 7d) or a timestamp " ..
                  "(2026-11-29 10:00:00 or ISO 8601), got '" .. tostring(s) .. "'")
end

-- A duration flag (--expiration, --time-retained): a unit is required.
function M.parse_cli_duration(s, flag)
  if type(s) == "string" and s:match("^%s*%d+%s*$") then
    cli.usage_error(flag .. " " .. s .. ": a number without a unit is ambiguous; give the unit (" .. s .. "d, " ..
                    s .. "h, " .. s .. "min, " .. s .. "s, " .. s .. "ms)")
  end
  local d = M.parse_duration(s)
  if not d then cli.usage_error(flag .. " expects a duration (90s, 30m, 1h, 7d), got '" .. tostring(s) .. "'") end
  return d
end

function M.now_ms()
  if core.now_ms then return core.now_ms() end
  return os.time() * 1000
end

-- The retention flags expire.lua and expire_changelogs.lua share: counts
-- at least 1, retain-max not below retain-min, --older-than not in the
-- future. Returns now and the cut-off (nil without --older-than).
function M.retention_args(opts)
  for _, k in ipairs{"retain_min", "retain_max", "max_deletes", "threads"} do
    if opts[k] and opts[k] < 1 then cli.usage_error("--" .. k:gsub("_", "-") .. " must be at least 1") end
  end
  if opts.retain_min and opts.retain_max and opts.retain_max < opts.retain_min then
    cli.usage_error("--retain-max must be at least --retain-min")
  end
  local now = M.now_ms()
  local older_than
  if opts.older_than then
    older_than = M.parse_cutoff(opts.older_than, now)
    if older_than > now then cli.usage_error("--older-than " .. opts.older_than .. " is in the future") end
  end
  return now, older_than
end

-- Policies: one loader (paimon.policy_loader) and one expiration runner
-- (paimon.expire); these names stay for callers of the old ones.
M.policy_file = require("paimon.policy_loader").find
M.policy_end = require("paimon.expire").answer_end
M.policy_stop = require("paimon.expire").ask

-- Whether stderr is a terminal (progress and hints go there only then).
function M.stderr_is_tty()
  local r = os.execute("[ -t 2 ]")
  return r == true or r == 0
end

-- Progress on stderr when stderr is a terminal.
function M.progress_fn(enabled)
  if not enabled or not M.stderr_is_tty() then return nil end
  return function(phase, done, total)
    io.stderr:write(string.format("\r%-16s %d/%d", phase, done, total))
    if done == total then io.stderr:write("\n") end
    io.stderr:flush()
  end
end

local KINDS = {"data_files", "changelog_files", "manifests", "manifest_lists", "index_manifests",
               "index_files", "statistics", "snapshots", "temp_files", "other_files",
               "tags", "schemas", "hints", "changelogs", "consumers"}
M.KINDS = KINDS

local function human_bytes(n)
  if n < 1024 then return n .. " B" end
  local units = {"KiB", "MiB", "GiB", "TiB"}
  local v, i = n / 1024, 1
  while v >= 1024 and i < #units do v = v / 1024; i = i + 1 end
  return string.format("%.1f %s", v, units[i])
end
M.human_bytes = human_bytes

-- Table rows (path, files, rows, bytes) of a partition operation's result.
function M.partition_rows(r)
  local rows = {}
  for i, p in ipairs(r.partitions) do
    rows[i] = {partition = p.partition, path = p.path, files = p.file_count, rows = p.record_count,
               bytes = p.file_size_in_bytes}
  end
  return rows
end

-- Exit code for a core failure code name (the mapping of cli.lua).
M.exit_code = cli.exit_code

-- Call a core method. The core raises only for misuse (bad arguments, a
-- cut-off in the future): that is a usage error (exit code 2).
M.call = cli.usage_call

local JSON_ORDER = {"expired", "range", "dry_run", "deleted", "bytes", "files", "total_bytes", "directories", "missing",
                    "protected", "skipped", "failures", "paths", "duration_ms"}

-- One JSON object on stdout (out: another file, for tests), keys in
-- JSON_ORDER first. A dry run's paths may be a paimon.PathList (option
-- paths_handle): the C writer (paimon.core.json_write) streams them from
-- the core's result, so the plan is never a Lua table; a Lua list gives
-- the same bytes. If writing fails midway, the object is closed where it
-- stopped and the error goes on to cli.run, which adds {"error", "code"}.
function M.print_json(obj, out)
  out = out or io.stdout
  local function arr(t) return json.array(t or {}) end
  obj.failures = arr(obj.failures)
  obj.skipped = arr(obj.skipped)
  if type(obj.paths) == "table" then obj.paths = arr(obj.paths) end
  if out == io.stdout then out:setvbuf("full") end
  local ok, msg, code = core.json_write(out, obj, JSON_ORDER, json.array_mt)
  if not ok then cli.fail(msg, code) end
  out:write("\n")
  out:flush()
end

-- Human output of a cleanup result.
function M.print_human(title, r)
  local out = io.stdout
  out:write(title, "\n")
  local verb = r.dry_run and "would delete" or "deleted"
  local rows = {}
  for _, k in ipairs(KINDS) do
    if (r.deleted[k] or 0) > 0 then
      rows[#rows + 1] = {kind = k, files = r.deleted[k], bytes = human_bytes(r.bytes[k])}
    end
  end
  if #rows > 0 then
    out:write(verb, ":\n")
    cli.print_table(rows, {"kind", "files", "bytes"})
  else
    out:write("nothing to delete\n")
  end
  if (r.directories or 0) > 0 then out:write("removed ", r.directories, " empty data director", r.directories == 1 and "y" or "ies", "\n") end
  if (r.missing or 0) > 0 then out:write(r.missing, " file(s) were already gone\n") end
  if (r.protected or 0) > 0 then out:write(r.protected, " candidate file(s) kept: still used by a retained snapshot, tag or branch\n") end
  for _, s in ipairs(r.skipped or {}) do
    out:write("skipped ", s.path, ": ", s.message or "", "\n")
  end
  for _, f in ipairs(r.failures or {}) do
    io.stderr:write("failed to delete ", f.path, ": ", f.message or "", "\n")
  end
  if r.dry_run and r.paths then
    out:write("plan:\n")
    for _, p in ipairs(r.paths) do out:write("  ", p.kind, "  ", p.path, "\n") end
  end
  out:write(string.format("done in %d ms\n", r.duration_ms or 0))
end

-- "k=v,k2=v2" -> {k = "v", k2 = "v2"}. A comma belongs to the value unless a
-- partition column name and "=" follow it (values may contain commas).
local function parse_spec(text, keys, string_key)
  local is_key = {}
  for _, k in ipairs(keys) do is_key[k] = true end
  local out, order = {}, {}
  local cur
  for piece in (text .. ","):gmatch("(.-),") do
    local k, v = piece:match("^([^=]+)=(.*)$")
    if k and (is_key[k] or not cur) then
      if out[k] ~= nil then cli.usage_error("--partition " .. text .. ": column '" .. k .. "' given twice") end
      cur = k
      out[k] = v
      order[#order + 1] = k
    elseif cur then
      out[cur] = out[cur] .. "," .. piece
    else
      cli.usage_error("--partition expects k=v[,k2=v2], got '" .. text .. "'")
    end
  end
  for _, k in ipairs(order) do
    if k == "" or k:match("^%s") or k:match("%s$") then
      cli.usage_error("--partition " .. text .. ": empty or blank column name")
    end
    cli.check_partition_column("--partition " .. text, k, keys)
    -- k= is the empty string, a value only CHAR/VARCHAR columns have (null is
    -- the default partition name, as in Java)
    if out[k] == "" and not string_key[k] then
      cli.usage_error("--partition " .. text .. ": no value for '" .. k .. "' (empty means the empty string, " ..
                      "which this column cannot hold; __DEFAULT_PARTITION__ selects null)")
    end
  end
  if #order == 0 then cli.usage_error("--partition expects k=v[,k2=v2], got '" .. text .. "'") end
  return out
end

-- The --partition texts of drop_partition.lua and mark_partition_done.lua
-- as specs {column = value} of table t (usage errors name the text).
function M.partition_specs(t, texts)
  local keys = t:schema().partition_keys
  local string_key = {}
  for _, f in ipairs(t:schema().fields) do
    local ty = f.type:upper()
    string_key[f.name] = ty:match("^STRING") or ty:match("^VARCHAR") or ty:match("^CHAR") or nil
  end
  local specs = {}
  for i, s in ipairs(texts) do specs[i] = parse_spec(s, keys, string_key) end
  return specs
end

return M
