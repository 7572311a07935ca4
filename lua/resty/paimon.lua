-- resty.paimon: Paimon table metadata for OpenResty without blocking the
-- nginx worker. Every call that touches the file system runs in an nginx
-- thread pool through ngx.run_worker_thread; the job runs in the thread's own
-- Lua VM, requires "paimon" there and hands back plain tables only (strings,
-- numbers, booleans, tables: what may cross between the VMs).
--
--   thread_pool paimon threads=4;                 # nginx.conf, main context
--   local paimon = require "resty.paimon"
--   local snaps, err = paimon.snapshots("/wh/demo.db/orders")
--   local p = paimon.new{ pool = "paimon", warehouse = "/wh" }
--   local path, err = p:table_path("demo", "orders")
--
-- Failures return nil, err (err a string; a missing table or snapshot gives
-- err_code "notfound" as third value). Misuse raises. Integers beyond 2^53
-- (e.g. commit_identifier 9223372036854775807) are decimal strings under
-- LuaJIT; _M.to_json prints them as JSON numbers again.
local _M = { _VERSION = "0.1.0" }
local mt = { __index = _M }

local type, pairs, ipairs, tostring, pcall, require, setmetatable, error, next =
      type, pairs, ipairs, tostring, pcall, require, setmetatable, error, next
local concat, sort = table.concat, table.sort
local format, byte, find = string.format, string.byte, string.find
local floor, huge = math.floor, math.huge

local MODULE = "resty.paimon"
local DEFAULT_POOL = "paimon"

-- Columns (and their order) as `paimon-lua inspect.lua TABLE VIEW --json`.
local COLUMNS = {
  snapshots = {"snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind",
               "commit_time", "base_manifest_list", "delta_manifest_list", "changelog_manifest_list",
               "total_record_count", "delta_record_count", "changelog_record_count", "watermark"},
  files = {"partition", "bucket", "file_path", "file_name", "file_format", "schema_id", "level",
           "record_count", "file_size_in_bytes", "min_sequence_number", "max_sequence_number",
           "creation_time"},
}
_M.COLUMNS = COLUMNS

-- ---------------------------------------------------------------------------
-- Jobs: these run inside the worker thread (their own Lua VM).
-- ---------------------------------------------------------------------------
local jobs = {}

local function is_null(v)
  return type(v) == "userdata"       -- paimon.null (a NULL light userdata)
end

-- A deep copy that keeps only what may cross VMs (SQL NULL → absent).
local function plain(v, depth)
  local t = type(v)
  if t == "string" or t == "number" or t == "boolean" then return v end
  if t ~= "table" or (depth or 0) > 8 then return nil end
  local out = {}
  for k, x in pairs(v) do
    local tk = type(k)
    if tk == "string" or tk == "number" then out[k] = plain(x, (depth or 0) + 1) end
  end
  return out
end
_M.plain = plain

local function snapshot_row(s)
  local function opt(x) if is_null(x) then return nil end return x end
  return {
    snapshot_id = s.id, schema_id = s.schema_id, commit_user = s.commit_user,
    commit_identifier = s.commit_identifier, commit_kind = s.commit_kind,
    commit_time = s.time_millis, base_manifest_list = s.base_manifest_list,
    delta_manifest_list = s.delta_manifest_list,
    changelog_manifest_list = opt(s.changelog_manifest_list),
    total_record_count = s.total_record_count, delta_record_count = s.delta_record_count,
    changelog_record_count = opt(s.changelog_record_count), watermark = opt(s.watermark),
  }
end

local function open_table(path, opts)
  local paimon = require "paimon"
  return paimon.open(path, opts and opts.branch and { branch = opts.branch } or nil)
end

function jobs.snapshots(path, opts)
  local t, err, code = open_table(path, opts)
  if not t then return nil, err, code end
  local rows = {}
  local it, e2, c2 = t:snapshots()
  if not it then t:close(); return nil, e2, c2 end
  for s in it do rows[#rows + 1] = snapshot_row(s) end
  t:close()
  return rows
end

function jobs.latest(path, opts)
  local t, err, code = open_table(path, opts)
  if not t then return nil, err, code end
  local s, e2, c2 = t:latest_snapshot()
  local row = s and snapshot_row(s)
  t:close()
  if not row then return nil, e2, c2 end
  return row
end

function jobs.files(path, opts)
  local t, err, code = open_table(path, opts)
  if not t then return nil, err, code end
  local s, e2, c2
  if opts and opts.snapshot then s, e2, c2 = t:snapshot(opts.snapshot)
  elseif opts and opts.tag then s, e2, c2 = t:tag(opts.tag)
  else s, e2, c2 = t:latest_snapshot() end
  if not s then t:close(); return nil, e2, c2 end
  local it, e3, c3 = s:files(opts and opts.partition and { partition = opts.partition } or nil)
  if not it then t:close(); return nil, e3, c3 end
  local rows, limit = {}, opts and opts.limit
  for f in it do
    local file = f.file
    rows[#rows + 1] = {
      partition = plain(f.partition), partition_path = f.partition_path, bucket = f.bucket,
      file_path = f.file_path, file_name = file.file_name,
      file_format = file.file_name:match("%.(%w+)$") or "", schema_id = file.schema_id,
      level = file.level, record_count = file.row_count, file_size_in_bytes = file.file_size,
      min_sequence_number = file.min_sequence_number,
      max_sequence_number = file.max_sequence_number, creation_time = file.creation_time,
    }
    if limit and #rows >= limit then break end
  end
  t:close()
  sort(rows, function(a, b) return a.file_path < b.file_path end)
  return rows
end

-- One maintenance step: Table:expire_snapshots(policy) when the binding has
-- it, else just a report of the latest snapshot. Always returns a table.
function jobs.expire(path, policy)
  local t, err, code = open_table(path, nil)
  if not t then return nil, err, code end
  local report = { table = path }
  local s = t:latest_snapshot()
  report.latest_snapshot_id = s and s.id or nil
  if t.expire_snapshots then
    local ok, res, e2, c2 = pcall(t.expire_snapshots, t, policy)
    if not ok then t:close(); return nil, "expire_snapshots raised: " .. tostring(res) end
    if res == nil then t:close(); return nil, e2, c2 end
    report.expired = plain(res)
  else
    report.expire = "unavailable (Table:expire_snapshots not in this build)"
  end
  t:close()
  return report
end

-- Entry point called by ngx.run_worker_thread(pool, "resty.paimon", "job", ...).
function _M.job(name, ...)
  local fn = jobs[name]
  if not fn then return nil, "unknown job " .. tostring(name) end
  local ok, res, err, code = pcall(fn, ...)
  if not ok then return nil, tostring(res) end
  return res, err, code
end

-- ---------------------------------------------------------------------------
-- Caller side (nginx worker: content/access/rewrite handlers and timers).
-- ---------------------------------------------------------------------------
local function run(pool, name, ...)
  local ngx = ngx
  if not (ngx and ngx.run_worker_thread) then
    -- outside nginx (busted, scripts): run inline
    return _M.job(name, ...)
  end
  local ok, res, err, code = ngx.run_worker_thread(pool or DEFAULT_POOL, MODULE, "job", name, ...)
  if not ok then return nil, "worker thread: " .. tostring(res) end
  return res, err, code
end

local function check_path(path, fname)
  if type(path) ~= "string" or path == "" then
    error("bad argument #1 to '" .. fname .. "' (table path string expected, got " .. type(path) .. ")", 3)
  end
end

local function pool_of(self, opts)
  return (opts and opts.pool) or (type(self) == "table" and self.pool) or DEFAULT_POOL
end

-- snapshots(table_path [, opts]) → array of snapshot rows, or nil, err
-- opts: { pool = name, branch = name }
function _M.snapshots(a, b, c)
  local self, path, opts = nil, a, b
  if type(a) == "table" then self, path, opts = a, b, c end
  check_path(path, "snapshots")
  return run(pool_of(self, opts), "snapshots", path, plain(opts))
end

-- latest(table_path [, opts]) → the latest snapshot row, or nil, err
function _M.latest(a, b, c)
  local self, path, opts = nil, a, b
  if type(a) == "table" then self, path, opts = a, b, c end
  check_path(path, "latest")
  return run(pool_of(self, opts), "latest", path, plain(opts))
end

-- files(table_path [, opts]) → live data files of the latest (or
-- opts.snapshot / opts.tag) snapshot, sorted by file_path, or nil, err.
-- opts: { pool, branch, snapshot, tag, partition = {col = value}, limit }
function _M.files(a, b, c)
  local self, path, opts = nil, a, b
  if type(a) == "table" then self, path, opts = a, b, c end
  check_path(path, "files")
  return run(pool_of(self, opts), "files", path, plain(opts))
end

-- expire(table_path, policy [, opts]) → report table, or nil, err.
-- policy goes unchanged to Table:expire_snapshots (plain data only).
function _M.expire(a, b, c, d)
  local self, path, policy, opts = nil, a, b, c
  if type(a) == "table" then self, path, policy, opts = a, b, c, d end
  check_path(path, "expire")
  return run(pool_of(self, opts), "expire", path, plain(policy))
end

-- A database or table name is one plain path component.
local function valid_name(s)
  return type(s) == "string" and #s > 0 and #s <= 255 and not find(s, "^%.")
         and not find(s, "[^%w_%-%.]") and true or false
end
_M.valid_name = valid_name

-- table_path(warehouse, db, table) → "warehouse/db.db/table", or nil, err
-- when a name is not a plain component ("..", "/", "%", NUL, ...).
function _M.table_path(a, b, c)
  local warehouse, db, tbl = a, b, c
  if type(a) == "table" then warehouse, db, tbl = a.warehouse, b, c end
  if type(warehouse) ~= "string" or warehouse == "" then
    error("bad argument #1 to 'table_path' (warehouse path expected)", 2)
  end
  if not valid_name(db) then return nil, "invalid database name" end
  if not valid_name(tbl) then return nil, "invalid table name" end
  return (warehouse:gsub("/+$", "")) .. "/" .. db .. ".db/" .. tbl
end

-- new{ pool = "paimon", warehouse = "/path" } → object with the same
-- methods (p:snapshots(path), p:table_path(db, table), ...).
function _M.new(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #1 to 'new' (table expected, got " .. type(opts) .. ")", 2)
  end
  opts = opts or {}
  return setmetatable({ pool = opts.pool or DEFAULT_POOL, warehouse = opts.warehouse }, mt)
end

-- ---------------------------------------------------------------------------
-- JSON with exact integers: integral numbers print as integers and decimal
-- strings in integer columns (int64 beyond 2^53 under LuaJIT) as numbers.
-- ---------------------------------------------------------------------------
local INT_COLUMNS = {
  snapshot_id = true, schema_id = true, commit_identifier = true, commit_time = true,
  total_record_count = true, delta_record_count = true, changelog_record_count = true,
  watermark = true, bucket = true, level = true, record_count = true,
  file_size_in_bytes = true, min_sequence_number = true, max_sequence_number = true,
  creation_time = true, latest_snapshot_id = true,
}

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f',
                  ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local function enc_string(s)
  return '"' .. s:gsub('[%c"\\]', function(ch)
    return escapes[ch] or format("\\u%04x", byte(ch))
  end) .. '"'
end

local encode
local function enc_number(v)
  if v ~= v or v == huge or v == -huge then return "null" end
  if v == floor(v) and v > -2^63 and v < 2^63 then return format("%d", v) end
  return format("%.17g", v)
end

local function is_array(t)
  local n = #t
  if n == 0 then return false end
  for k in pairs(t) do
    if type(k) ~= "number" or k < 1 or k > n or k ~= floor(k) then return false end
  end
  return true
end

encode = function(v, key, order)
  local t = type(v)
  if v == nil then return "null"
  elseif t == "boolean" then return tostring(v)
  elseif t == "number" then return enc_number(v)
  elseif t == "string" then
    if INT_COLUMNS[key] and find(v, "^%-?%d+$") and #v <= 20 then return v end
    return enc_string(v)
  elseif t == "table" then
    if is_array(v) then
      local parts = {}
      for i = 1, #v do parts[i] = encode(v[i], nil, order) end
      return "[" .. concat(parts, ",") .. "]"
    end
    local keys, seen = {}, {}
    for _, k in ipairs(order or {}) do keys[#keys + 1] = k; seen[k] = true end
    local rest = {}
    for k in pairs(v) do
      if not seen[k] and type(k) == "string" then rest[#rest + 1] = k end
    end
    sort(rest)
    for _, k in ipairs(rest) do keys[#keys + 1] = k end
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = enc_string(k) .. ":" .. encode(v[k], k) end
    return "{" .. concat(parts, ",") .. "}"
  end
  return "null"     -- userdata (paimon.null, ngx.null), functions
end

-- to_json(value [, columns]): columns (e.g. _M.COLUMNS.snapshots) come
-- first in every object, always present (null when absent), as in
-- inspect.lua --json; other keys follow sorted.
function _M.to_json(v, columns)
  if type(v) == "table" and #v == 0 and next(v) == nil then return "[]" end
  return encode(v, nil, columns)
end

return _M
