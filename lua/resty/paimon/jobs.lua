-- resty.paimon's worker-side jobs: each runs inside an nginx worker thread
-- (its own Lua VM, through ngx.run_worker_thread(pool, "resty.paimon",
-- "job", name, ...)), or inline outside nginx, requires "paimon" there and
-- hands back plain tables only (what may cross between the VMs). The caller
-- API is lua/resty/paimon.lua.
local type, pairs, ipairs, tostring, pcall, require, error, next =
      type, pairs, ipairs, tostring, pcall, require, error, next
local load = load
local sort = table.sort
local format, find = string.format, string.find
local floor = math.floor

local base64 = require "paimon.base64"

local _M = {}
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

-- opts.branch, and opts.options: the FileIO options (s3.endpoint, ...).
-- A raise (options the core refuses) becomes nil, message, "misuse".
local function open_table(path, opts)
  local paimon = require "paimon"
  local ok, t, err, code = pcall(paimon.open, path, opts and { branch = opts.branch, options = opts.options } or nil)
  if not ok then return nil, (tostring(t):gsub("^[^:\n]*%.lua:%d+: ", "")), "misuse" end
  return t, err, code
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

-- Runs fn(t, ...) on the opened table and always closes it. A raise inside
-- (the core raises for options it refuses) becomes nil, message, "misuse".
local function with_table(path, opts, fn, ...)
  local t, err, code = open_table(path, opts)
  if not t then return nil, err, code end
  local ok, res, e2, c2 = pcall(fn, t, ...)
  t:close()
  if not ok then return nil, (tostring(res):gsub("^[^:\n]*%.lua:%d+: ", "")), "misuse" end
  return res, e2, c2
end

-- A policy as it arrived in the thread: a function (inline mode), a file
-- name (loaded here), or { bytecode = string.dump(f) } (crossed the VMs).
local function thread_policy(p)
  if type(p) == "table" and type(p.bytecode) == "string" then
    local f, err = load(p.bytecode, "=policy", "b")
    if not f then error("cannot load the policy function: " .. tostring(err), 0) end
    return f
  end
  return p
end

-- The expire policy file or function → function(snapshots, ctx)
local EXPIRE_OPTS = { "retain_min", "retain_max", "older_than", "max_deletes", "dry_run", "threads",
                      "keep_from", "until", "now", "clean_empty_directories" }

-- Table:expire_snapshots with the options; with a policy, through the one
-- runner that asks it first (paimon.expire, as expire.lua and the method).
local function expire_on(t, path, opts, policy)
  local report = { table = path }
  local s = t:latest_snapshot()
  report.latest_snapshot_id = s and s.id or nil
  if not t.expire_snapshots then
    report.expire = "unavailable (Table:expire_snapshots not in this build)"
    return report
  end
  local run = {}
  for _, k in ipairs(EXPIRE_OPTS) do run[k] = opts[k] end
  local res, err, code
  if policy ~= nil then
    -- the policy chooses the end: an end given as well is left out
    run.keep_from, run["until"] = nil, nil
    run.policy = thread_policy(policy)
    res, err, code = require("paimon.expire").run(t, run)
    if res == nil then return nil, err, code end
    report.policy_until = err
  else
    res, err, code = t:expire_snapshots(run)
    if res == nil then return nil, err, code end
  end
  report.expired = plain(res)
  return report
end

-- expire(path, opts, policy) → { table, latest_snapshot_id, expired = result }
function jobs.expire(path, opts, policy)
  opts = opts or {}
  return with_table(path, opts, expire_on, path, opts, policy)
end

function jobs.remove_orphan_files(path, opts)
  opts = opts or {}
  return with_table(path, { options = opts.options }, function(t)
    local res, err, code = t:remove_orphan_files{ older_than = opts.older_than, dry_run = opts.dry_run,
                                                  threads = opts.threads, now = opts.now,
                                                  allow_young_cutoff = opts.allow_young_cutoff }
    if res == nil then return nil, err, code end
    res.table = path
    return plain(res)
  end)
end

function jobs.verify(path, opts)
  opts = opts or {}
  return with_table(path, { options = opts.options }, function(t)
    local res, err, code = t:verify{ all_snapshots = opts.all_snapshots, threads = opts.threads }
    if res == nil then return nil, err, code end
    res.table = path
    return plain(res)
  end)
end

-- Partition results without the serialized BinaryRow (binary bytes that
-- to_json cannot print); SQL NULL values are left out by plain().
local function partition_result(res)
  for _, p in ipairs(res.partitions or {}) do p.binary_row = nil end
  return plain(res)
end

function jobs.drop_partitions(path, specs, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    local res, err, code = t:drop_partitions(specs, { dry_run = opts.dry_run, max_attempts = opts.max_attempts,
                                                      commit_user = opts.commit_user })
    if res == nil then return nil, err, code end
    return partition_result(res)
  end)
end

function jobs.tags(path, opts)
  return with_table(path, opts, function(t)
    local res, err, code = t:tags()
    if res == nil then return nil, err, code end
    for _, x in ipairs(res) do x.snapshot = nil end
    return plain(res)
  end)
end

function jobs.create_tag(path, name, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:create_tag(name, { snapshot = opts.snapshot, timestamp = opts.timestamp, watermark = opts.watermark,
                                time_retained = opts.time_retained, dry_run = opts.dry_run })
  end)
end

function jobs.replace_tag(path, name, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:replace_tag(name, { snapshot = opts.snapshot, time_retained = opts.time_retained,
                                 dry_run = opts.dry_run })
  end)
end

function jobs.delete_tags(path, names, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:delete_tags(names, { dry_run = opts.dry_run, threads = opts.threads })
  end)
end

function jobs.rename_tag(path, from, to, opts)
  return with_table(path, opts, function(t) return t:rename_tag(from, to) end)
end

function jobs.expire_tags(path, opts, policy)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:expire_tags{ older_than = opts.older_than, num_retained_max = opts.num_retained_max,
                          dry_run = opts.dry_run, threads = opts.threads, now = opts.now,
                          policy = thread_policy(policy) }
  end)
end

function jobs.branches(path, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    local res, err, code = t:branches(opts.details and { details = true } or nil)
    if res == nil then return nil, err, code end
    return plain(res)
  end)
end

function jobs.rollback(path, opts)
  return with_table(path, opts, function(t)
    return t:rollback{ to_snapshot = opts.to_snapshot, to_tag = opts.to_tag, to_timestamp = opts.to_timestamp,
                       to_watermark = opts.to_watermark, as_latest = opts.as_latest,
                       purge_files = opts.purge_files, dry_run = opts.dry_run, threads = opts.threads }
  end)
end

function jobs.consumers(path, opts)
  return with_table(path, opts, function(t)
    local res, err, code = t:consumers()
    if res == nil then return nil, err, code end
    return plain(res)
  end)
end

function jobs.create_branch(path, name, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:create_branch(name, { from_tag = opts.from_tag, dry_run = opts.dry_run })
  end)
end

function jobs.delete_branch(path, name, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:delete_branch(name, { dry_run = opts.dry_run, threads = opts.threads })
  end)
end

function jobs.fast_forward(path, name, opts)
  opts = opts or {}
  return with_table(path, opts, function(t) return t:fast_forward(name, { dry_run = opts.dry_run }) end)
end

function jobs.rename_branch(path, from, to, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    local res, err, code = t:rename_branch(from, to, { dry_run = opts.dry_run })
    if res == nil then return nil, err, code end
    return plain(res)
  end)
end

function jobs.clear_consumers(path, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    local res, err, code = t:clear_consumers{ include = opts.include, exclude = opts.exclude, dry_run = opts.dry_run }
    if res == nil then return nil, err, code end
    return plain(res)
  end)
end

function jobs.mark_partition_done(path, specs, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    local res, err, code = t:mark_partition_done(specs, { dry_run = opts.dry_run })
    if res == nil then return nil, err, code end
    return plain(res)
  end)
end

function jobs.reset_consumer(path, id, next_snapshot, opts)
  return with_table(path, opts, function(t) return t:reset_consumer(id, next_snapshot) end)
end

function jobs.delete_consumer(path, id, opts)
  return with_table(path, opts, function(t) return t:delete_consumer(id) end)
end

function jobs.expire_consumers(path, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:expire_consumers{ expiration = opts.expiration, dry_run = opts.dry_run, now = opts.now }
  end)
end

-- The rows of `inspect.lua TABLE changelogs --json`.
function jobs.changelogs(path, opts)
  return with_table(path, opts, function(t)
    local res, err, code = t:changelogs()
    if res == nil then return nil, err, code end
    local function opt(x) if is_null(x) then return nil end return x end
    local rows = {}
    for i, s in ipairs(res) do
      rows[i] = {
        changelog_id = s.id, schema_id = s.schema_id, commit_user = s.commit_user,
        commit_identifier = s.commit_identifier, commit_kind = s.commit_kind, commit_time = s.time_millis,
        changelog_manifest_list = opt(s.changelog_manifest_list), delta_manifest_list = s.delta_manifest_list,
        changelog_record_count = opt(s.changelog_record_count), delta_record_count = s.delta_record_count,
      }
    end
    return rows
  end)
end

function jobs.expire_changelogs(path, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:expire_changelogs{ retain_min = opts.retain_min, retain_max = opts.retain_max,
                                older_than = opts.older_than, max_deletes = opts.max_deletes,
                                dry_run = opts.dry_run, threads = opts.threads, now = opts.now }
  end)
end

function jobs.auto_tags(path, opts)
  opts = opts or {}
  return with_table(path, opts, function(t)
    return t:auto_tags{ dry_run = opts.dry_run, threads = opts.threads, now_ms = opts.now_ms }
  end)
end

local EXPIRE_PARTITION_OPTS = { "expiration_time", "strategy", "timestamp_formatter", "timestamp_pattern",
                                "max_expires", "dry_run", "now", "max_attempts" }

function jobs.expire_partitions(path, opts, policy)
  opts = opts or {}
  return with_table(path, opts, function(t)
    local o = {}
    for _, k in ipairs(EXPIRE_PARTITION_OPTS) do o[k] = opts[k] end
    o.policy = thread_policy(policy)
    local res, err, code = t:expire_partitions(o)
    if res == nil then return nil, err, code end
    return partition_result(res)
  end)
end

-- base64 for BINARY/VARBINARY/BYTES values given as JSON text

-- rows: an array of {column = value} or the text of a JSON array of objects.
local function decode_rows(t, rows)
  if type(rows) ~= "string" then return rows end
  local ok, cjson = pcall(require, "cjson")
  if not ok then return nil, "cannot decode JSON rows: lua-cjson is not installed", "unsupported" end
  if not find(rows, "^%s*%[") then return nil, "a JSON array of row objects expected", "invalid" end
  local ok2, decoded = pcall(cjson.decode, rows)
  if not ok2 or type(decoded) ~= "table" then
    return nil, "not valid JSON: " .. tostring(decoded):gsub("^.-: ", ""), "invalid"
  end
  local binary = {}
  for _, f in ipairs(t:schema().fields) do
    local ty = f.type:upper()
    if find(ty, "^BINARY") or find(ty, "^VARBINARY") or find(ty, "^BYTES") then binary[f.name] = true end
  end
  for i, row in ipairs(decoded) do
    if type(row) == "table" then
      for col in pairs(binary) do
        if type(row[col]) == "string" then
          local raw = base64.decode(row[col])
          if not raw then return nil, format("row %d: column '%s': not base64", i, col), "invalid" end
          row[col] = raw
        end
      end
    end
  end
  return decoded
end

-- A retry (commit_user and identifier given) whose commit landed already
-- (Java's filterCommitted): the answer for it, else nil; nil, err, code on
-- failure.
local function landed_commit(c, identifier)
  local left, sid, err = c:filter_committed({ identifier })
  if not left then return nil, sid, err end
  if #left == 0 and sid then
    return { snapshot_id = sid, rows = 0, files = 0, committed = false, already_committed = true }
  end
  return false
end

-- new_write → write every row → prepare_commit → new_commit → commit (which
-- runs the table's upkeep afterwards, docs/maintenance.md).
-- Returns snapshot_id, { snapshot_id, rows, files, committed, upkeep }.
local function commit_rows_on(t, rows, opts)
  local decoded, derr, dcode = decode_rows(t, rows)
  if not decoded then return nil, derr, dcode end
  local n = #decoded
  for k in pairs(decoded) do
    if type(k) ~= "number" or k < 1 or k > n or k ~= floor(k) then
      return nil, "rows must be an array of row objects", "invalid"
    end
  end
  local c = t:new_commit{ commit_user = opts.commit_user }
  local retry = opts.commit_user ~= nil and opts.identifier ~= nil
  if retry then                    -- before writing anything
    local done, lerr, lcode = landed_commit(c, opts.identifier)
    if done then return done.snapshot_id, done end
    if done == nil then return nil, lerr, lcode end
  end
  local w, werr, wcode = t:new_write{}
  if not w then return nil, werr, wcode end
  for i = 1, n do
    local row = decoded[i]
    if type(row) ~= "table" or (row[1] ~= nil and next(row) ~= nil and #row > 0) then
      w:close()
      return nil, format("row %d: a row object {column: value} expected", i), "invalid"
    end
    local ok, err = pcall(w.write, w, row)
    if not ok then
      w:close()
      return nil, format("row %d: %s", i, tostring(err)), "invalid"
    end
  end
  local msgs, perr, pcode = w:prepare_commit()
  if not msgs then w:close(); return nil, perr, pcode end
  if retry then                    -- and again: a concurrent request may have landed it
    local done, lerr, lcode = landed_commit(c, opts.identifier)
    if done ~= false then
      c:abort(msgs)
      w:close()
      if done then return done.snapshot_id, done end
      return nil, lerr, lcode
    end
  end
  local id, committed, code = c:commit(msgs, { identifier = opts.identifier })
  if not id then
    -- an uncertain outcome keeps every file: its snapshot may exist
    if code ~= "uncertain" then c:abort(msgs) end
    w:close()
    return nil, committed, code
  end
  w:close()
  -- code: the upkeep c:commit ran afterwards (its failure is reported there,
  -- never the commit's)
  return id, { snapshot_id = id, rows = n, files = #msgs, committed = committed and true or false,
               upkeep = code }
end

function jobs.commit_rows(path, rows, opts)
  opts = opts or {}
  return with_table(path, opts, commit_rows_on, rows, opts)
end

function jobs.alter_table(path, changes, opts)
  opts = opts or {}
  return with_table(path, opts, function(t) return t:alter_table(changes, { dry_run = opts.dry_run }) end)
end

-- Entry point called by ngx.run_worker_thread(pool, "resty.paimon", "job", ...).

-- run(name, ...): the job `name` with its arguments, as nil, message, code
-- on failure (a raise inside becomes code "error").
function _M.run(name, ...)
  local fn = jobs[name]
  if not fn then return nil, "unknown job " .. tostring(name) end
  local ok, res, err, code = pcall(fn, ...)
  if not ok then return nil, tostring(res), "error" end
  return res, err, code
end

return _M
