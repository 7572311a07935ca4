-- inspect.lua TABLE VIEW [--snapshot ID] [--tag NAME] [--branch NAME] [--json]
-- Read-only views of a Paimon table, with the columns of Paimon's system
-- tables in snake case.
local paimon = require "paimon"
local cli = require "paimon.cli"
local json = require "paimon.json"

local VIEWS = {
  snapshots = {"snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind",
               "commit_time", "base_manifest_list", "delta_manifest_list", "changelog_manifest_list",
               "total_record_count", "delta_record_count", "changelog_record_count", "watermark"},
  schemas = {"schema_id", "fields", "partition_keys", "primary_keys", "options", "comment", "update_time"},
  options = {"key", "value"},
  files = {"partition", "bucket", "file_path", "file_name", "file_format", "schema_id", "level",
           "record_count", "file_size_in_bytes", "null_value_counts", "min_value_stats", "max_value_stats",
           "min_sequence_number", "max_sequence_number", "creation_time"},
  manifests = {"file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id"},
  partitions = {"partition", "record_count", "file_size_in_bytes", "file_count", "last_update_time"},
  tags = {"tag_name", "snapshot_id", "schema_id", "commit_time", "record_count", "create_time", "time_retained",
          "error"},
  branches = {"branch_name"},
  consumers = {"consumer_id", "next_snapshot_id"},
  changelogs = {"changelog_id", "schema_id", "commit_user", "commit_identifier", "commit_kind", "commit_time",
                "changelog_manifest_list", "delta_manifest_list", "changelog_record_count", "delta_record_count"},
}
local VIEW_NAMES = {"snapshots", "schemas", "options", "files", "manifests", "partitions", "tags", "branches", "consumers",
                    "changelogs"}

local spec = {
  name = "inspect.lua",
  positional = {"TABLE", "VIEW"},
  flags = {json = "boolean", snapshot = "integer", tag = "string", branch = "string"},
  min = {snapshot = 1},
  usage = [[
usage: paimon-lua inspect.lua TABLE VIEW [--snapshot ID | --tag NAME] [--branch NAME] [--json]
VIEW: ]] .. table.concat(VIEW_NAMES, ", ") .. [[

  --snapshot ID   files/manifests/partitions of this snapshot (default: latest)
  --tag NAME      ... of this tag's snapshot
  --branch NAME   read branch NAME instead of main
  --json          print one JSON array of row objects (times as epoch milliseconds),
                  written row by row as read (files: in scan order)
Without --json: times in ISO 8601 (local time), durations with units.
exit codes: 0 ok, 1 failed, 2 usage]],
}

local check = cli.check

-- The views that show one snapshot (the others ignore --snapshot / --tag,
-- so those flags are refused there rather than silently dropped).
local SNAPSHOT_VIEWS = {files = true, manifests = true, partitions = true}

local function pick_snapshot(t, opts)
  if opts.tag then return check(t:tag(opts.tag)) end
  if opts.snapshot then return check(t:snapshot(opts.snapshot)) end
  local s, msg, code = t:latest_snapshot()
  if not s and code == "notfound" then return nil end
  return check(s, msg, code)
end

local function file_format(name)
  return name:match("%.([%w]+)$") or ""
end

-- Every builder calls emit(row) once per row as it reads it: --json writes
-- each row out at once (memory does not grow with the table); the human
-- table collects them (it needs every row for its column widths).
local function live_files(t, opts, emit)
  local s = pick_snapshot(t, opts)
  if not s then return end
  -- value stats as Java's Files table shows them: over the latest schema,
  -- matched by field id through the schema each file was written under
  for f in check(s:files{stats = true}) do
    emit {
      partition = f.partition, partition_path = f.partition_path, bucket = f.bucket,
      file_path = f.file_path, file_name = f.file.file_name,
      file_format = file_format(f.file.file_name), schema_id = f.file.schema_id,
      level = f.file.level, record_count = f.file.row_count,
      file_size_in_bytes = f.file.file_size, null_value_counts = f.stats.null_value_counts,
      min_value_stats = f.stats.min_value_stats, max_value_stats = f.stats.max_value_stats,
      min_sequence_number = f.file.min_sequence_number,
      max_sequence_number = f.file.max_sequence_number, creation_time = f.file.creation_time,
    }
  end
end

local builders = {}
local HUMAN

function builders.snapshots(t, _, emit)
  for s in check(t:snapshots()) do
    emit {
      snapshot_id = s.id, schema_id = s.schema_id, commit_user = s.commit_user,
      commit_identifier = s.commit_identifier, commit_kind = s.commit_kind,
      commit_time = s.time_millis, base_manifest_list = s.base_manifest_list,
      delta_manifest_list = s.delta_manifest_list,
      changelog_manifest_list = s.changelog_manifest_list or json.null,
      total_record_count = s.total_record_count, delta_record_count = s.delta_record_count,
      changelog_record_count = s.changelog_record_count or json.null,
      watermark = s.watermark or json.null,
    }
  end
end

-- long-lived changelogs (changelog/changelog-<id>, decoupled lifecycle)
function builders.changelogs(t, _, emit)
  for _, s in ipairs(check(t:changelogs())) do
    emit {
      changelog_id = s.id, schema_id = s.schema_id, commit_user = s.commit_user,
      commit_identifier = s.commit_identifier, commit_kind = s.commit_kind, commit_time = s.time_millis,
      changelog_manifest_list = s.changelog_manifest_list or json.null,
      delta_manifest_list = s.delta_manifest_list,
      changelog_record_count = s.changelog_record_count or json.null, delta_record_count = s.delta_record_count,
    }
  end
end

function builders.schemas(t, _, emit)
  for _, s in ipairs(check(t:schemas())) do
    local fields = json.array()
    for i, f in ipairs(s.fields) do fields[i] = {id = f.id, name = f.name, type = f.type} end
    emit {
      schema_id = s.id, fields = fields, partition_keys = json.array(s.partition_keys),
      primary_keys = json.array(s.primary_keys), options = s.options,
      comment = s.comment or json.null, update_time = s.time_millis,
    }
  end
end

function builders.options(t, _, emit)
  local keys = {}
  local options = t:options()
  for k in pairs(options) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do emit {key = k, value = options[k]} end
end

builders.files = live_files

function builders.manifests(t, opts, emit)
  local s = pick_snapshot(t, opts)
  if not s then return end
  for _, kind in ipairs({"base", "delta"}) do
    for m in check(s:manifests(kind)) do
      emit {file_name = m.file_name, file_size = m.file_size,
                         num_added_files = m.num_added_files, num_deleted_files = m.num_deleted_files,
                         schema_id = m.schema_id}
    end
  end
end

-- One row per partition, folded as the files stream by: memory grows with
-- the partitions, not the files.
function builders.partitions(t, opts, emit)
  local by_path, rows = {}, {}
  live_files(t, opts, function(f)
    -- null and "" share the __DEFAULT_PARTITION__ directory but are two partitions
    local key = f.partition_path .. "\0" .. cli.cell(f.partition)
    local p = by_path[key]
    if not p then
      p = {partition = f.partition, partition_path = f.partition_path, sort_key = key, record_count = 0,
           file_size_in_bytes = 0, file_count = 0, last_update_time = json.null}
      by_path[key] = p
      rows[#rows + 1] = p
    end
    p.record_count = p.record_count + f.record_count
    p.file_size_in_bytes = p.file_size_in_bytes + f.file_size_in_bytes
    p.file_count = p.file_count + 1
    if f.creation_time and (p.last_update_time == json.null or f.creation_time > p.last_update_time) then
      p.last_update_time = f.creation_time
    end
  end)
  table.sort(rows, function(a, b) return a.sort_key < b.sort_key end)
  for _, r in ipairs(rows) do
    r.partition_path, r.sort_key = nil, nil
    emit(r)
  end
end

function builders.tags(t, _, emit)
  for _, tag in ipairs(check(t:tags())) do
    emit {tag_name = tag.name, snapshot_id = tag.snapshot_id or json.null, schema_id = tag.schema_id or json.null,
                       commit_time = tag.commit_time or json.null, record_count = tag.record_count or json.null,
                       create_time = tag.create_time or json.null,
                       time_retained = tag.time_retained or json.null,
                       error = tag.error or json.null}   -- an unreadable tag: why (tag.lua delete --force)
  end
end

function builders.branches(t, _, emit)
  for _, b in ipairs(check(t:branches())) do emit {branch_name = b} end
end

function builders.consumers(t, _, emit)
  for _, c in ipairs(check(t:consumers())) do
    emit {consumer_id = c.consumer_id, next_snapshot_id = c.next_snapshot}
  end
end

-- Human renderings of the columns that are times or durations (--json:
-- every time epoch milliseconds, every duration milliseconds).
local function schema_fields(fields)
  local parts = {}
  for i, f in ipairs(fields) do parts[i] = f.name .. " " .. f.type end
  return table.concat(parts, ", ")
end


HUMAN = {
  commit_time = cli.iso_time, update_time = cli.iso_time,
  creation_time = cli.wall_time, last_update_time = cli.wall_time,   -- local wall clock, as Paimon stores it
  create_time = cli.iso_time, time_retained = cli.duration, fields = schema_fields,
}

local function main(opts, pos)
  local path, view = pos[1], pos[2]
  local columns = VIEWS[view]
  if not columns then cli.usage_error("unknown view '" .. view .. "'") end
  if opts.snapshot and opts.tag then cli.usage_error("--snapshot and --tag exclude each other") end
  if not SNAPSHOT_VIEWS[view] and (opts.snapshot or opts.tag) then
    cli.usage_error((opts.snapshot and "--snapshot" or "--tag") .. " does not apply to the " .. view ..
                    " view (only to files, manifests and partitions)")
  end
  local t = check(cli.open(path, opts))
  if opts.json then
    local out = cli.json_rows(columns)
    builders[view](t, opts, function(r)
      r.partition_path = nil
      out:row(r)
    end)
    out:close()
  else
    local rows = {}
    builders[view](t, opts, function(r) rows[#rows + 1] = r end)
    -- the human table of files reads best by path; --json keeps scan order
    if view == "files" then table.sort(rows, function(a, b) return a.file_path < b.file_path end) end
    for _, r in ipairs(rows) do r.partition_path = nil end
    cli.print_table(rows, columns, HUMAN)
  end
  t:close()
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
