-- resty.paimon: Paimon table metadata, maintenance and append-only writes
-- for OpenResty without blocking the nginx worker. Every call that touches
-- the file system runs in an nginx thread pool through
-- ngx.run_worker_thread; the job runs in the thread's own Lua VM, requires
-- "paimon" there and hands back plain tables only (strings, numbers,
-- booleans, tables: what may cross between the VMs).
--
--   thread_pool paimon threads=4;                 # nginx.conf, main context
--   local paimon = require "resty.paimon"
--   local snaps, err = paimon.snapshots("/wh/demo.db/orders")
--   local p = paimon.new{ pool = "paimon", warehouse = "/wh" }
--   local path, err = p:table_path("demo", "orders")
--   local id, info = p:commit_rows(path, { { order_id = 1, dt = "2026-11-29" } })
--   local s3 = paimon.new{ warehouse = "s3://lake/wh",     -- object stores: FileIO options
--                          options = { ["s3.endpoint"] = "http://127.0.0.1:7480",
--                                      ["s3.path.style.access"] = "true" } }
-- Every function also takes opts.options (the call's win over new{}'s);
-- credentials are best left to the environment (AWS_ACCESS_KEY_ID, ...).
--
-- Failures return nil, err, code (err a string; code the core's name:
-- "notfound" for a missing table or snapshot, "conflict", "unsupported",
-- "io", ...; "invalid" for rows that cannot be written; "misuse" when the
-- core refused an option inside the job). Wrong argument types raise in the
-- caller. Integers beyond 2^53 (e.g. commit_identifier 9223372036854775807)
-- are decimal strings under LuaJIT; _M.to_json prints them as JSON numbers.
--
-- This module is the caller API; the jobs are lua/resty/paimon/jobs.lua, and
-- policies, durations, JSON and base64 are the paimon modules' (one loader:
-- paimon.policy_loader; one runner: paimon.expire, paimon.partition_expire).
local _M = { _VERSION = "0.1.0" }
local mt = { __index = _M }

local type, pairs, ipairs, tostring, pcall, require, setmetatable, error, next =
      type, pairs, ipairs, tostring, pcall, require, setmetatable, error, next
local concat, sort = table.concat, table.sort
local find, dump = string.find, string.dump
local floor = math.floor
local os_time = os.time
local debug_getinfo = debug and debug.getinfo

-- The worker-side jobs (lua/resty/paimon/jobs.lua); plain() is shared.
local jobs = require "resty.paimon.jobs"
local plain = jobs.plain

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
  changelogs = {"changelog_id", "schema_id", "commit_user", "commit_identifier", "commit_kind", "commit_time",
                "changelog_manifest_list", "delta_manifest_list", "changelog_record_count", "delta_record_count"},
}
_M.COLUMNS = COLUMNS


_M.plain = plain

-- base64 for BINARY/VARBINARY/BYTES values given as JSON text (commit_rows)
_M.unbase64 = function(s) return require("paimon.base64").decode(s) end

-- Entry point called by ngx.run_worker_thread(pool, "resty.paimon", "job", ...).
function _M.job(name, ...)
  return jobs.run(name, ...)
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
  if not ok then return nil, "worker thread: " .. tostring(res), "error" end
  return res, err, code
end

local function check_path(path, fname)
  if type(path) ~= "string" or path == "" then
    error("bad argument #1 to '" .. fname .. "' (table path string expected, got " .. type(path) .. ")", 3)
  end
end

-- The options each function takes: any other key raises (a misspelt
-- dry_run must not run a real deletion; the C API and the Table methods
-- refuse unknown keys the same way).
local function set(list)
  local s = {}
  for _, k in ipairs(list) do s[k] = true end
  return s
end
-- Every function (and new) also takes `options`: the FileIO options of
-- the table's URI ({["s3.endpoint"] = ..., ...}), as paimon.open does.
local KNOWN = {
  snapshots = set{ "pool", "branch", "options" },
  latest = set{ "pool", "branch", "options" },
  files = set{ "pool", "branch", "snapshot", "tag", "partition", "limit", "options" },
  expire = set{ "retain_min", "retain_max", "older_than", "max_deletes", "dry_run", "threads", "keep_from", "until",
                "now", "clean_empty_directories", "branch", "pool", "policy", "options" },
  verify = set{ "all_snapshots", "threads", "pool", "options" },
  remove_orphan_files = set{ "dry_run", "older_than_ms", "older_than", "threads", "now", "allow_young_cutoff", "pool",
                             "options" },
  drop_partitions = set{ "dry_run", "max_attempts", "commit_user", "branch", "pool", "options" },
  expire_partitions = set{ "expiration_time", "strategy", "timestamp_formatter", "timestamp_pattern", "max_expires",
                           "dry_run", "now", "max_attempts", "branch", "pool", "policy", "options" },
  commit_rows = set{ "commit_user", "identifier", "branch", "pool", "options" },
  tags = set{ "branch", "pool", "options" },
  create_tag = set{ "snapshot", "timestamp", "watermark", "time_retained", "dry_run", "branch", "pool", "options" },
  replace_tag = set{ "snapshot", "time_retained", "dry_run", "branch", "pool", "options" },
  delete_tags = set{ "dry_run", "threads", "branch", "pool", "options" },
  rename_tag = set{ "branch", "pool", "options" },
  expire_tags = set{ "older_than", "num_retained_max", "dry_run", "threads", "now", "branch", "pool", "policy",
                     "options" },
  branches = set{ "details", "pool", "options" },
  create_branch = set{ "from_tag", "dry_run", "pool", "options" },
  delete_branch = set{ "dry_run", "threads", "pool", "options" },
  fast_forward = set{ "dry_run", "branch", "pool", "options" },
  rename_branch = set{ "dry_run", "pool", "options" },
  rollback = set{ "to_snapshot", "to_tag", "to_timestamp", "to_watermark", "as_latest", "purge_files", "dry_run",
                  "threads", "branch", "pool", "options" },
  consumers = set{ "branch", "pool", "options" },
  reset_consumer = set{ "branch", "pool", "options" },
  delete_consumer = set{ "branch", "pool", "options" },
  expire_consumers = set{ "expiration", "dry_run", "now", "branch", "pool", "options" },
  clear_consumers = set{ "include", "exclude", "dry_run", "branch", "pool", "options" },
  mark_partition_done = set{ "dry_run", "pool", "options" },
  changelogs = set{ "branch", "pool", "options" },
  expire_changelogs = set{ "retain_min", "retain_max", "older_than", "max_deletes", "dry_run", "threads", "now",
                           "branch", "pool", "options" },
  auto_tags = set{ "dry_run", "threads", "now_ms", "branch", "pool", "options" },
  alter_table = set{ "dry_run", "branch", "pool", "options" },
  new = set{ "pool", "warehouse", "options" },
}

-- FileIO options: string keys; strings, numbers or booleans (the value is
-- never shown: it may be a credential).
local function check_fileio_options(o, fname, level)
  if o == nil then return end
  if type(o) ~= "table" then
    error("bad argument to '" .. fname .. "' (options: a table {key = value} expected, got " .. type(o) .. ")",
          level + 1)
  end
  for k, v in pairs(o) do
    local tv = type(v)
    if type(k) ~= "string" then
      error("bad argument to '" .. fname .. "' (options: keys must be strings)", level + 1)
    end
    if tv ~= "string" and tv ~= "number" and tv ~= "boolean" then
      error("bad argument to '" .. fname .. "' (options['" .. k .. "'] must be a string, number or boolean, got " ..
            tv .. ")", level + 1)
    end
  end
end

-- opts (a table or nil) checked against KNOWN[fname]; level: the caller's.
local function check_keys(opts, fname, argn, level)
  if opts == nil then return end
  if type(opts) ~= "table" then
    error("bad argument #" .. argn .. " to '" .. fname .. "' (table expected, got " .. type(opts) .. ")", level + 1)
  end
  check_fileio_options(opts.options, fname, level + 1)
  local known = KNOWN[fname]
  for k in pairs(opts) do
    if not known[k] then
      local names = {}
      for n in pairs(known) do names[#names + 1] = n end
      sort(names)
      error("bad argument #" .. argn .. " to '" .. fname .. "' (" .. fname .. ": unknown option '" .. tostring(k) ..
            "' (known: " .. concat(names, ", ") .. "))", level + 1)
    end
  end
end

local function pool_of(self, opts)
  return (opts and opts.pool) or (type(self) == "table" and self.pool) or DEFAULT_POOL
end

-- The job's copy of opts with the FileIO options: the call's, else the
-- object's (new{options = ...}).
local function job_opts(self, opts)
  local o = plain(opts) or {}
  if o.options == nil and type(self) == "table" and self.options then o.options = plain(self.options) end
  return o
end

-- snapshots(table_path [, opts]) → array of snapshot rows, or nil, err
-- opts: { pool = name, branch = name }
function _M.snapshots(a, b, c)
  local self, path, opts = nil, a, b
  if type(a) == "table" then self, path, opts = a, b, c end
  check_path(path, "snapshots")
  check_keys(opts, "snapshots", self and 3 or 2, 2)
  return run(pool_of(self, opts), "snapshots", path, job_opts(self, opts))
end

-- latest(table_path [, opts]) → the latest snapshot row, or nil, err
function _M.latest(a, b, c)
  local self, path, opts = nil, a, b
  if type(a) == "table" then self, path, opts = a, b, c end
  check_path(path, "latest")
  check_keys(opts, "latest", self and 3 or 2, 2)
  return run(pool_of(self, opts), "latest", path, job_opts(self, opts))
end

-- files(table_path [, opts]) → live data files of the latest (or
-- opts.snapshot / opts.tag) snapshot, sorted by file_path, or nil, err.
-- opts: { pool, branch, snapshot, tag, partition = {col = value}, limit }
function _M.files(a, b, c)
  local self, path, opts = nil, a, b
  if type(a) == "table" then self, path, opts = a, b, c end
  check_path(path, "files")
  check_keys(opts, "files", self and 3 or 2, 2)
  return run(pool_of(self, opts), "files", path, job_opts(self, opts))
end

-- The clock, epoch ms (ngx.now() in nginx: cached per event-loop turn).
local function now_ms()
  local ngx = ngx
  if ngx and ngx.now then return floor(ngx.now() * 1000) end
  return os_time() * 1000
end

-- "90s", "30m", "30 min", "12h", "7d", "100ms"; a bare number is ms
-- (Paimon's syntax) → milliseconds, or nil: paimon.duration (plain Lua:
-- this caller VM never loads paimon.core).
local parse_duration_ms = require("paimon.duration").parse_ms
_M.parse_duration_ms = parse_duration_ms

-- A cut-off option: epoch ms, or a duration text meaning now minus it.
-- Never in the future (1 s of slack for the coarse clock outside nginx;
-- the core checks again against its own clock).
local function cutoff(v, name, fname)
  if v == nil then return nil end
  if type(v) == "string" then
    local d = parse_duration_ms(v)
    if not d then
      error("bad argument to '" .. fname .. "' (" .. name .. ": a duration such as 90s, 30m, 1h, 7d " ..
            "or epoch milliseconds expected, got '" .. v .. "')", 3)
    end
    return now_ms() - d
  end
  if type(v) ~= "number" or v ~= floor(v) then
    error("bad argument to '" .. fname .. "' (" .. name .. ": epoch milliseconds expected, got " ..
          tostring(v) .. ")", 3)
  end
  if v > now_ms() + 1000 then
    error("bad argument to '" .. fname .. "' (" .. name .. " is in the future)", 3)
  end
  return v
end

local function check_opts(opts, fname, argn)
  check_keys(opts, fname, argn, 3)
  return opts or {}
end

-- A policy for the worker thread: a file name stays a file name; a function
-- runs as is inline, and crosses into the thread's VM as its bytecode
-- (string.dump), so it must not have upvalues (it sees the thread VM's
-- globals, e.g. require). {expired = f} (partition policies) is unwrapped.
local function policy_arg(pol, fname)
  if pol == nil or type(pol) == "string" then return pol end
  if type(pol) == "table" and type(pol.expired) == "function" then pol = pol.expired end
  if type(pol) == "table" and type(pol.expire_tags) == "function" then pol = pol.expire_tags end
  if type(pol) ~= "function" then
    error("bad argument to '" .. fname .. "' (policy: a function or a file name expected, got " ..
          type(pol) .. ")", 3)
  end
  local ngx = ngx
  if not (ngx and ngx.run_worker_thread) then return pol end       -- inline: same VM
  local info = debug_getinfo and debug_getinfo(pol, "u")
  if info and (info.nups or 0) > 0 then
    error("bad argument to '" .. fname .. "' (policy: a function with upvalues cannot cross into " ..
          "the worker thread; use one without upvalues or a policy file)", 3)
  end
  local ok, code = pcall(dump, pol)
  if not ok then
    error("bad argument to '" .. fname .. "' (policy: cannot serialize the function: " ..
          tostring(code) .. ")", 3)
  end
  return { bytecode = code }
end

-- Method or function call: (self, path, x, y, z) or (path, x, y, z).
local function args(a, b, c, d, e)
  if type(a) == "table" then return a, b, c, d, e end
  return nil, a, b, c, d
end

-- expire(table_path [, opts]) → { table, latest_snapshot_id, expired =
-- <Table:expire_snapshots result> }, or nil, err, code.
-- opts: retain_min, retain_max, older_than (epoch ms or a duration: now
-- minus it), max_deletes, dry_run, threads, until, now,
-- clean_empty_directories (boolean; default: the table option), branch, pool,
-- policy (function(snapshots, ctx) or a policy file, as expire.lua --policy).
function _M.expire(...)
  local self, path, opts, extra = args(...)
  check_path(path, "expire")
  opts = check_opts(opts, "expire", 2)
  local o = job_opts(self, opts)
  o.policy = nil
  o.older_than = cutoff(opts.older_than, "older_than", "expire")
  return run(pool_of(self, extra or opts), "expire", path, o, policy_arg(opts.policy, "expire"))
end

-- verify(table_path [, opts]) → the Table:verify result (ok, files,
-- checked, missing, wrong_size, unreadable, ...) plus table, or nil, err,
-- code. Read-only. opts: all_snapshots, threads, pool.
function _M.verify(...)
  local self, path, opts = args(...)
  check_path(path, "verify")
  opts = check_opts(opts, "verify", 2)
  local o = { all_snapshots = opts.all_snapshots and true or nil, threads = opts.threads,
              options = job_opts(self, opts).options }
  return run(pool_of(self, opts), "verify", path, o)
end

-- remove_orphan_files(table_path [, opts]) → the Table:remove_orphan_files
-- result (deleted, paths (dry run), candidates, used, older_than, ...) plus
-- table, or nil, err, code. opts: dry_run, older_than_ms (or older_than:
-- epoch ms or a duration; default the core's, now - 1 day; never in the
-- future; less than 1 h ago only with allow_young_cutoff = true, recorded
-- as floor_overridden in the result), threads, pool.
function _M.remove_orphan_files(...)
  local self, path, opts = args(...)
  check_path(path, "remove_orphan_files")
  opts = check_opts(opts, "remove_orphan_files", 2)
  local older = opts.older_than_ms
  if older == nil then older = opts.older_than end
  local o = { dry_run = opts.dry_run and true or nil, threads = opts.threads, now = opts.now,
              allow_young_cutoff = opts.allow_young_cutoff and true or nil,
              older_than = cutoff(older, "older_than_ms", "remove_orphan_files"),
              options = job_opts(self, opts).options }
  return run(pool_of(self, opts), "remove_orphan_files", path, o)
end

-- drop_partitions(table_path, specs [, opts]) → the Table:drop_partitions
-- result (snapshot_id, files, rows, bytes, partitions, ...), or nil, err,
-- code. specs: {col = value} or an array of them. opts: dry_run,
-- max_attempts, commit_user, branch, pool.
function _M.drop_partitions(...)
  local self, path, specs, opts = args(...)
  check_path(path, "drop_partitions")
  if type(specs) ~= "table" then
    error("bad argument #2 to 'drop_partitions' (partition spec table expected, got " .. type(specs) .. ")", 2)
  end
  opts = check_opts(opts, "drop_partitions", 3)
  return run(pool_of(self, opts), "drop_partitions", path, plain(specs), job_opts(self, opts))
end

-- expire_partitions(table_path [, opts]) → the Table:expire_partitions
-- result, or nil, err, code. opts: expiration_time ("7d" or ms),
-- strategy, timestamp_formatter, timestamp_pattern, max_expires, dry_run,
-- now, max_attempts, branch, pool, policy (function(p, ctx),
-- {expired = f} or a policy file).
function _M.expire_partitions(...)
  local self, path, opts = args(...)
  check_path(path, "expire_partitions")
  opts = check_opts(opts, "expire_partitions", 2)
  local o = job_opts(self, opts)
  o.policy = nil
  return run(pool_of(self, opts), "expire_partitions", path, o,
             policy_arg(opts.policy, "expire_partitions"))
end

-- Tags (Table:tags / create_tag / delete_tags / rename_tag / expire_tags):
-- tags(table_path [, opts]) → {{name, snapshot_id, commit_time, create_time,
-- time_retained}, ...}; create_tag(table_path, name [, opts]) (snapshot,
-- timestamp, time_retained, dry_run; an existing tag is nil, err,
-- "exists"); delete_tags(table_path, {names} [, opts]) (dry_run, threads:
-- the files only those tags held go too); rename_tag(table_path, old, new);
-- expire_tags(table_path [, opts]) (older_than, num_retained_max, dry_run,
-- threads, now, policy); auto_tags(table_path [, opts]) (dry_run, threads,
-- now_ms: Java's automatic tag creation by the table's tag.* options; a
-- table without tag.automatic-creation: mode "none", nothing done). opts
-- also take branch, pool and options.
local function check_name(v, fname, argn)
  if type(v) ~= "string" then
    error("bad argument #" .. argn .. " to '" .. fname .. "' (tag name expected, got " .. type(v) .. ")", 3)
  end
end

function _M.tags(...)
  local self, path, opts = args(...)
  check_path(path, "tags")
  opts = check_opts(opts, "tags", 2)
  return run(pool_of(self, opts), "tags", path, job_opts(self, opts))
end

function _M.create_tag(...)
  local self, path, name, opts = args(...)
  check_path(path, "create_tag")
  check_name(name, "create_tag", 2)
  opts = check_opts(opts, "create_tag", 3)
  return run(pool_of(self, opts), "create_tag", path, name, job_opts(self, opts))
end

-- replace_tag(table_path, name [, opts]) (snapshot, else the latest;
-- time_retained, dry_run: Java's replace_tag, the tag must exist);
-- create_tag also takes watermark (Java's create_tag_from_watermark).
function _M.replace_tag(...)
  local self, path, name, opts = args(...)
  check_path(path, "replace_tag")
  check_name(name, "replace_tag", 2)
  opts = check_opts(opts, "replace_tag", 3)
  return run(pool_of(self, opts), "replace_tag", path, name, job_opts(self, opts))
end

function _M.delete_tags(...)
  local self, path, names, opts = args(...)
  check_path(path, "delete_tags")
  if type(names) ~= "table" then
    error("bad argument #2 to 'delete_tags' (array of tag names expected, got " .. type(names) .. ")", 2)
  end
  opts = check_opts(opts, "delete_tags", 3)
  return run(pool_of(self, opts), "delete_tags", path, plain(names), job_opts(self, opts))
end

function _M.rename_tag(...)
  local self, path, from, to, opts = args(...)
  check_path(path, "rename_tag")
  check_name(from, "rename_tag", 2)
  check_name(to, "rename_tag", 3)
  opts = check_opts(opts, "rename_tag", 4)
  return run(pool_of(self, opts), "rename_tag", path, from, to, job_opts(self, opts))
end

function _M.expire_tags(...)
  local self, path, opts = args(...)
  check_path(path, "expire_tags")
  opts = check_opts(opts, "expire_tags", 2)
  local o = job_opts(self, opts)
  o.policy = nil
  return run(pool_of(self, opts), "expire_tags", path, o, policy_arg(opts.policy, "expire_tags"))
end

-- Branches (Table:branches / create_branch / delete_branch / fast_forward;
-- Java's FileSystemBranchManager): branches(table_path [, opts]) → the
-- names, or with details = true {{name, create_time, earliest_snapshot,
-- latest_snapshot, tags}, ...}; create_branch(table_path, name [, opts])
-- (from_tag, dry_run; an existing branch is nil, err, "exists");
-- delete_branch(table_path, name [, opts]) (dry_run, threads: the files
-- only the branch held go too, never what main, tags or other branches
-- need); fast_forward(table_path, name [, opts]) (dry_run; into opts.branch,
-- default main). opts also take pool and options.
local function check_branch_name(v, fname)
  if type(v) ~= "string" then
    error("bad argument #2 to '" .. fname .. "' (branch name expected, got " .. type(v) .. ")", 3)
  end
end

function _M.branches(...)
  local self, path, opts = args(...)
  check_path(path, "branches")
  opts = check_opts(opts, "branches", 2)
  return run(pool_of(self, opts), "branches", path, job_opts(self, opts))
end

function _M.create_branch(...)
  local self, path, name, opts = args(...)
  check_path(path, "create_branch")
  check_branch_name(name, "create_branch")
  opts = check_opts(opts, "create_branch", 3)
  return run(pool_of(self, opts), "create_branch", path, name, job_opts(self, opts))
end

function _M.delete_branch(...)
  local self, path, name, opts = args(...)
  check_path(path, "delete_branch")
  check_branch_name(name, "delete_branch")
  opts = check_opts(opts, "delete_branch", 3)
  return run(pool_of(self, opts), "delete_branch", path, name, job_opts(self, opts))
end

function _M.fast_forward(...)
  local self, path, name, opts = args(...)
  check_path(path, "fast_forward")
  check_branch_name(name, "fast_forward")
  opts = check_opts(opts, "fast_forward", 3)
  return run(pool_of(self, opts), "fast_forward", path, name, job_opts(self, opts))
end

-- rename_branch(table_path, old, new [, opts]) (dry_run: Java's
-- rename_branch, never replaces a branch; an existing one is nil, err, "exists").
function _M.rename_branch(...)
  local self, path, from, to, opts = args(...)
  check_path(path, "rename_branch")
  check_branch_name(from, "rename_branch")
  if type(to) ~= "string" then
    error("bad argument #3 to 'rename_branch' (branch name expected, got " .. type(to) .. ")", 2)
  end
  opts = check_opts(opts, "rename_branch", 4)
  return run(pool_of(self, opts), "rename_branch", path, from, to, job_opts(self, opts))
end

-- Rollback (Table:rollback): rollback(table_path, opts) with exactly one
-- of to_snapshot, to_tag, to_timestamp (epoch ms), to_watermark; as_latest
-- (a new latest snapshot with the target's content, nothing deleted; a target
-- given by id or timestamp gets Java's protection tag, result protection_tag),
-- purge_files (destructive: also delete the files only the removed roots
-- used; without it only metadata goes, as Java 1.2+), dry_run, threads → the Table:rollback result; a writer that committed meanwhile is
-- nil, err, "conflict".
function _M.rollback(...)
  local self, path, opts = args(...)
  check_path(path, "rollback")
  if type(opts) ~= "table" then
    error("bad argument #2 to 'rollback' (table with to_snapshot, to_tag, to_timestamp or to_watermark expected, got " ..
          type(opts) .. ")", 2)
  end
  opts = check_opts(opts, "rollback", 2)
  return run(pool_of(self, opts), "rollback", path, job_opts(self, opts))
end

-- Consumers (Table:consumers / reset_consumer / delete_consumer /
-- expire_consumers, Java's ConsumerManager): consumers(table_path [, opts])
-- → {{consumer_id, next_snapshot, mtime}, ...}; reset_consumer(table_path,
-- id, next_snapshot [, opts]) → {id, next_snapshot, previous};
-- delete_consumer(table_path, id [, opts]) → {id, deleted} (a missing one is
-- nil, err, "notfound"); expire_consumers(table_path [, opts]) (expiration
-- "7d", default the table's consumer.expiration-time; dry_run, now) →
-- {expired, count, kept, cutoff, dry_run}. opts also take branch, pool and
-- options.
local function check_consumer_id(v, fname)
  if type(v) ~= "string" then
    error("bad argument #2 to '" .. fname .. "' (consumer id expected, got " .. type(v) .. ")", 3)
  end
end

function _M.consumers(...)
  local self, path, opts = args(...)
  check_path(path, "consumers")
  opts = check_opts(opts, "consumers", 2)
  return run(pool_of(self, opts), "consumers", path, job_opts(self, opts))
end

function _M.reset_consumer(...)
  local self, path, id, next_snapshot, opts = args(...)
  check_path(path, "reset_consumer")
  check_consumer_id(id, "reset_consumer")
  if type(next_snapshot) ~= "number" or next_snapshot ~= floor(next_snapshot) then
    error("bad argument #3 to 'reset_consumer' (next snapshot id (an integer) expected, got " ..
          type(next_snapshot) .. ")", 2)
  end
  opts = check_opts(opts, "reset_consumer", 4)
  return run(pool_of(self, opts), "reset_consumer", path, id, next_snapshot, job_opts(self, opts))
end

function _M.delete_consumer(...)
  local self, path, id, opts = args(...)
  check_path(path, "delete_consumer")
  check_consumer_id(id, "delete_consumer")
  opts = check_opts(opts, "delete_consumer", 3)
  return run(pool_of(self, opts), "delete_consumer", path, id, job_opts(self, opts))
end

-- clear_consumers(table_path [, opts]) (include, exclude: regular
-- expressions matched against the whole id; dry_run) → {cleared, count, kept}.
function _M.clear_consumers(...)
  local self, path, opts = args(...)
  check_path(path, "clear_consumers")
  opts = check_opts(opts, "clear_consumers", 2)
  return run(pool_of(self, opts), "clear_consumers", path, job_opts(self, opts))
end

-- mark_partition_done(table_path, specs [, opts]) (specs: {col = v} or an
-- array of them; dry_run): Java's mark_partition_done, success-file only.
function _M.mark_partition_done(...)
  local self, path, specs, opts = args(...)
  check_path(path, "mark_partition_done")
  if type(specs) ~= "table" then
    error("bad argument #2 to 'mark_partition_done' (partition spec table expected, got " .. type(specs) .. ")", 2)
  end
  opts = check_opts(opts, "mark_partition_done", 3)
  return run(pool_of(self, opts), "mark_partition_done", path, plain(specs), job_opts(self, opts))
end

function _M.expire_consumers(...)
  local self, path, opts = args(...)
  check_path(path, "expire_consumers")
  opts = check_opts(opts, "expire_consumers", 2)
  return run(pool_of(self, opts), "expire_consumers", path, job_opts(self, opts))
end

-- Long-lived changelogs (Table:changelogs / expire_changelogs, Java's
-- ExpireChangelogImpl): changelogs(table_path [, opts]) → the rows of
-- `inspect.lua TABLE changelogs --json` (_M.COLUMNS.changelogs);
-- expire_changelogs(table_path [, opts]) (retain_min, retain_max,
-- older_than, max_deletes, dry_run, threads, now) → the Table method's
-- result. opts also take branch, pool and options.
function _M.changelogs(...)
  local self, path, opts = args(...)
  check_path(path, "changelogs")
  opts = check_opts(opts, "changelogs", 2)
  return run(pool_of(self, opts), "changelogs", path, job_opts(self, opts))
end

function _M.expire_changelogs(...)
  local self, path, opts = args(...)
  check_path(path, "expire_changelogs")
  opts = check_opts(opts, "expire_changelogs", 2)
  return run(pool_of(self, opts), "expire_changelogs", path, job_opts(self, opts))
end

function _M.auto_tags(...)
  local self, path, opts = args(...)
  check_path(path, "auto_tags")
  opts = check_opts(opts, "auto_tags", 2)
  return run(pool_of(self, opts), "auto_tags", path, job_opts(self, opts))
end

-- commit_rows(table_path, rows [, opts]) → snapshot_id, { snapshot_id,
-- rows, files, committed, upkeep }, or nil, err, code. upkeep: the result
-- of the table's upkeep after the commit (as write.lua's: expire_snapshots
-- ... auto_tags, expire_tags by the table's options; none with
-- write-only=true); a failure there is in upkeep.errors / upkeep.steps,
-- never the commit's. Appends the rows as one
-- commit (new_write → write → prepare_commit → new_commit → commit) to an
-- append-only Avro table. rows: an array of {column = value} (SQL NULL:
-- leave the column out), or the text of a JSON array of objects, decoded in
-- the worker thread (BINARY columns base64, as write.lua). No rows: nothing
-- is committed, the latest snapshot id comes back with committed = false.
-- opts: commit_user, identifier, branch, pool. With both commit_user and
-- identifier a retry is safe: when that commit landed already (Java's
-- filterCommitted) nothing is written and the answer is { snapshot_id = N,
-- rows = 0, files = 0, committed = false, already_committed = true }.
function _M.commit_rows(...)
  local self, path, rows, opts = args(...)
  check_path(path, "commit_rows")
  if type(rows) ~= "table" and type(rows) ~= "string" then
    error("bad argument #2 to 'commit_rows' (array of rows or JSON text expected, got " .. type(rows) .. ")", 2)
  end
  opts = check_opts(opts, "commit_rows", 3)
  if type(rows) == "table" then rows = plain(rows) end
  return run(pool_of(self, opts), "commit_rows", path, rows, job_opts(self, opts))
end

-- ALTER TABLE (Table:alter_table, docs/alter.md): alter_table(table_path,
-- changes, opts) with changes an array of Java's SchemaChange kinds as the
-- Lua API takes them ({kind = "addColumn", column = "c", type = "INT"}, ...);
-- opts: dry_run, branch → {schema_id, dry_run, schema = <schema JSON text>}.
-- A change Java refuses is nil, its message, "misuse"; a concurrent alter
-- that made it inapplicable is "conflict".
function _M.alter_table(...)
  local self, path, changes, opts = args(...)
  check_path(path, "alter_table")
  if type(changes) ~= "table" then
    error("bad argument #2 to 'alter_table' (array of schema changes expected, got " .. type(changes) .. ")", 2)
  end
  opts = check_opts(opts, "alter_table", 3)
  return run(pool_of(self, opts), "alter_table", path, plain(changes), job_opts(self, opts))
end

-- relative_paths(result, table_path) → a copy of a result (e.g. verify's)
-- without the server's table path: "<table_path>/x" becomes "x" and any
-- other mention of table_path "TABLE", in every string, keys included; the
-- result's own `table` field is left out. For answers that must not show
-- server paths (the nginx example's handlers).
local function relative_paths(v, root, depth)
  depth = depth or 0
  if type(v) == "string" then
    local out, i = {}, 1
    while true do
      local a, b = find(v, root, i, true)
      if not a then break end
      local nxt = v:sub(b + 1, b + 1)
      if nxt == "/" then                      -- inside the table: relative
        out[#out + 1] = v:sub(i, a - 1)
        b = b + 1
      elseif find(nxt, "^[%w_%-%.]$") then     -- another name that starts alike
        out[#out + 1] = v:sub(i, b)
      else
        out[#out + 1] = v:sub(i, a - 1) .. "TABLE"
      end
      i = b + 1
    end
    out[#out + 1] = v:sub(i)
    return concat(out)
  end
  if type(v) ~= "table" or depth > 32 then return v end
  local r = {}
  for k, x in pairs(v) do
    if not (depth == 0 and k == "table") then
      r[relative_paths(k, root, depth + 1)] = relative_paths(x, root, depth + 1)
    end
  end
  return r
end

function _M.relative_paths(res, path)
  if type(res) ~= "table" then error("bad argument #1 to 'relative_paths' (table expected)", 2) end
  check_path(path, "relative_paths")
  return relative_paths(res, (path:gsub("/+$", "")))
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

-- new{ pool = "paimon", warehouse = "/path" or "s3://bucket/wh", options =
-- { ["s3.endpoint"] = ..., ... } } → object with the same methods
-- (p:snapshots(path), p:table_path(db, table), ...); options are the
-- FileIO options of every call that gives none of its own.
function _M.new(opts)
  check_keys(opts, "new", 1, 2)
  opts = opts or {}
  return setmetatable({ pool = opts.pool or DEFAULT_POOL, warehouse = opts.warehouse,
                        options = plain(opts.options) }, mt)
end


-- ---------------------------------------------------------------------------
-- JSON with exact integers (paimon.json): integral numbers print as integers
-- and decimal strings in integer columns (int64 beyond 2^53 under LuaJIT)
-- as numbers.
-- ---------------------------------------------------------------------------
local INT_COLUMNS = {
  snapshot_id = true, schema_id = true, commit_identifier = true, commit_time = true,
  total_record_count = true, delta_record_count = true, changelog_record_count = true,
  watermark = true, bucket = true, level = true, record_count = true,
  file_size_in_bytes = true, min_sequence_number = true, max_sequence_number = true,
  creation_time = true, latest_snapshot_id = true, changelog_id = true,
}

-- keys whose value is always a JSON array, even when empty
local ARRAY_KEYS = {
  failures = true, skipped = true, paths = true, partitions = true, partition_keys = true,
  values = true, orphans = true, range = true, missing = true, wrong_size = true, unreadable = true,
  tags = true, snapshots = true, changelogs = true, consumers = true, expired = true, candidates = true,
}

-- to_json(value [, columns]): columns (e.g. _M.COLUMNS.snapshots) come
-- first in every row (the value itself or an array's elements), always
-- present (null when absent), as in inspect.lua --json; other keys follow
-- sorted. Values JSON has no place for (functions, userdata) print null.
function _M.to_json(v, columns)
  if type(v) == "table" and #v == 0 and next(v) == nil then return "[]" end
  return require("paimon.json").encode_with(v, { order = columns, columns = true, int_keys = INT_COLUMNS,
                                                 array_keys = ARRAY_KEYS, lenient = true })
end

return _M
