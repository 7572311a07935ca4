-- branch.lua TABLE create NAME [--from-tag T] | delete NAME... | fast-forward NAME
--   | rename OLD NEW | list
--   [--dry-run] [--json] [--threads N] [--option K=V]
-- Branches as Java Paimon's FileSystemBranchManager manages them
-- (docs/maintenance.md, Branches).
local cli = require "paimon.cli"
local maint = require "paimon.maint"
local json = require "paimon.json"

local spec = {
  name = "branch.lua",
  positional = {"TABLE", "COMMAND"},
  varargs = true,
  flags = {from_tag = "string", threads = "integer", dry_run = "boolean", json = "boolean"},
  min = {threads = 1},
  usage = [[
usage: paimon-lua branch.lua TABLE COMMAND [args] [options]
  create NAME        a branch with main's schemas; --from-tag T: also tag T and its
                     snapshot (Java's createBranch)
  delete NAME...     delete branches and the files only they held (never what main,
                     its tags or other branches need)
  fast-forward NAME  main takes the branch's snapshots, schemas and tags from the
                     branch's earliest snapshot on; main's later snapshots and tags go
                     (Java's fastForward; data files are left to orphan cleaning)
  rename OLD NEW     rename a branch (Java's rename_branch; never replaces a branch,
                     never main, not the branch opened with --branch)
  list               name, create time, earliest and latest snapshot, tags
  --from-tag T       create: branch from tag T
  --threads N        delete with N threads (default 4)
  --dry-run          print the plan, change nothing
  --json             print one JSON object
exit codes: 0 done, 1 failed, 2 usage, 3 conflict (the branch exists, or the table changed meanwhile)]],
}

local ARGS = {create = 1, delete = -1, ["fast-forward"] = 1, rename = 2, list = 0}

-- Results of several deletions as one: totals per kind, the lists joined.
local function merge(into, r)
  if not into then return r end
  for _, key in ipairs{"deleted", "bytes"} do
    for k, v in pairs(r[key]) do into[key][k] = (into[key][k] or 0) + v end
  end
  for _, key in ipairs{"files", "total_bytes", "directories", "missing", "protected", "branch_files", "duration_ms"} do
    into[key] = (into[key] or 0) + (r[key] or 0)
  end
  for _, key in ipairs{"paths", "failures", "skipped"} do
    if r[key] then
      into[key] = into[key] or {}
      for _, x in ipairs(r[key]) do into[key][#into[key] + 1] = x end
    end
  end
  return into
end

local function delete(t, names, opts)
  local total, done = nil, {}
  for _, name in ipairs(names) do
    -- one branch's plan can stay in C for --json; several are merged here
    local r, msg, code = maint.call(t.delete_branch, t, name, {dry_run = opts.dry_run or false,
                                                              threads = opts.threads or 4,
                                                              progress = maint.progress_fn(true),
                                                              paths_handle = (opts.json and #names == 1) or nil})
    if not r then
      if #done > 0 then msg = (opts.dry_run and "planned" or "deleted") .. " branch(es) " ..
                              table.concat(done, ", ") .. " before this failure: " .. msg end
      return nil, msg, code
    end
    done[#done + 1] = name
    total = merge(total, r)
  end
  total.branch = nil
  total.branches = json.array(done)
  return total
end

local function print_ff(r)
  local out = io.stdout
  out:write(string.format("%s %s to branch %s (its snapshots %d..%d)\n",
                          r.dry_run and "would fast-forward" or "fast-forwarded", r.into, r.branch, r.earliest,
                          r.latest))
  out:write(string.format("%s: %d snapshot(s), %d tag(s), %d schema(s)\n", r.dry_run and "would drop" or "dropped",
                          r.dropped.snapshots, r.dropped.tags, r.dropped.schemas))
  out:write(string.format("%s: %d snapshot(s), %d tag(s), %d schema(s)\n", r.dry_run and "would take" or "took",
                          r.taken.snapshots, r.taken.tags, r.taken.schemas))
  if r.dry_run then
    out:write("plan:\n")
    for _, p in ipairs(r.dropped_paths) do out:write("  drop  ", p, "\n") end
    for _, p in ipairs(r.taken_paths) do out:write("  take  ", p, "\n") end
  end
end

local function main(opts, pos)
  local cmd = pos[2]
  local want = ARGS[cmd]
  if not want then cli.usage_error("unknown command '" .. cmd .. "' (create, delete, fast-forward, rename, list)") end
  local args = {table.unpack(pos, 3)}
  if want >= 0 and #args ~= want then cli.usage_error(cmd .. " takes " .. want .. " argument(s)") end
  if want < 0 and #args == 0 then cli.usage_error("delete needs at least one branch name") end
  if opts.from_tag and cmd ~= "create" then cli.usage_error("--from-tag goes with create") end
  if opts.threads and cmd ~= "delete" then cli.usage_error("--threads goes with delete") end
  if opts.dry_run and cmd == "list" then cli.usage_error("list has no --dry-run") end
  local t, msg, code = cli.open(pos[1], opts)
  if not t then cli.fail(msg, code) end
  local r
  if cmd == "create" then
    r, msg, code = maint.call(t.create_branch, t, args[1], {from_tag = opts.from_tag, dry_run = opts.dry_run or false})
    if r and opts.json then io.stdout:write(json.encode(r), "\n")
    elseif r then
      print(string.format("%s branch %s%s (schemas 0..%d, %d file(s)) at %s", r.dry_run and "would create" or "created",
                          r.branch, r.from_tag and string.format(" from tag %s (snapshot %d)", r.from_tag,
                                                                 r.snapshot_id) or "",
                          r.schema_id, r.files, r.path))
    end
  elseif cmd == "delete" then
    r, msg, code = delete(t, args, opts)
    if r and opts.json then maint.print_json(r)
    elseif r then
      maint.print_human(string.format("%s %d branch(es): %s", opts.dry_run and "would delete" or "deleted",
                                      #r.branches, table.concat(r.branches, ", ")), r)
    end
  elseif cmd == "fast-forward" then
    r, msg, code = maint.call(t.fast_forward, t, args[1], {dry_run = opts.dry_run or false})
    if r and opts.json then
      r.dropped_paths = json.array(r.dropped_paths)
      r.taken_paths = json.array(r.taken_paths)
      io.stdout:write(json.encode(r), "\n")
    elseif r then print_ff(r) end
  elseif cmd == "rename" then
    r, msg, code = maint.call(t.rename_branch, t, args[1], args[2], {dry_run = opts.dry_run or false})
    if r and opts.json then
      r.moved_paths = json.array(r.moved_paths)
      io.stdout:write(json.encode(r), "\n")
    elseif r then
      print(string.format("%s branch %s to %s (%d file(s)) at %s", r.dry_run and "would rename" or "renamed", r.from,
                          r.to, r.files, r.path))
      if r.dry_run then for _, p in ipairs(r.moved_paths) do print("  " .. p) end end
    end
  else
    r, msg, code = maint.call(t.branches, t, {details = true})
    if r then
      if opts.json then
        io.stdout:write(json.encode({branches = json.array(r), count = #r}), "\n")
      elseif #r == 0 then print("no branches")
      else
        local rows = {}
        for _, b in ipairs(r) do
          rows[#rows + 1] = {branch_name = b.name, create_time = cli.iso_time(b.create_time),
                             earliest_snapshot = b.earliest_snapshot > 0 and b.earliest_snapshot or "-",
                             latest_snapshot = b.latest_snapshot > 0 and b.latest_snapshot or "-", tags = b.tags}
        end
        cli.print_table(rows, {"branch_name", "create_time", "earliest_snapshot", "latest_snapshot", "tags"})
      end
    end
  end
  t:close()
  -- an existing branch is a conflict (exit 3), as a lost commit race is
  if not r then cli.fail(msg, code) end
  if r.failures and #r.failures > 0 then return cli.EXIT_FAILED end
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
