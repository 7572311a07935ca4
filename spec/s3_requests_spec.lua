-- Requests a commit sends to S3, counted by the S3 FileIO's own trace
-- (PAIMON_S3_TRACE, docs/s3.md): a commit reads the latest snapshot's
-- manifest lists and manifests once each (the conflict check and the new
-- base list share them) and checks no schema file per commit (the schema
-- listing it reads anyway says which exist). issue 14, requests per commit.
local H = require "helper"
local describe_s3 = H.s3_describe(describe, pending)

local PK_TAG_BRANCH = "cpp-parquet-pk_btree_partitioned_e2e"
local AVRO = "cpp-avro-append_with_multiple_map"

-- Runs SCRIPT ARGS on the S3 copy with the trace on: exit code, the
-- trace's lines as { method, key } (query strings kept in key).
local function traced(dir, script, args)
  local trace = dir .. "/trace-" .. tostring(math.random(1e9))
  local parts = {"PAIMON_S3_TRACE=" .. H.sh_quote(trace), H.sh_quote(H.cli), H.sh_quote(script)}
  for _, a in ipairs(args) do parts[#parts + 1] = H.sh_quote(a) end
  local out, err, code = H.run(table.concat(parts, " "))
  assert.equals(0, code, script .. ": " .. err .. out)
  local lines = {}
  for line in io.lines(trace) do
    local method, key = line:match("^(%u+) (%S+) ")
    lines[#lines + 1] = { method = method, key = key }
  end
  return lines, out
end

-- The commit's requests: from the last read of the LATEST hint before the
-- new snapshot's PUT up to the PUT of the LATEST hint after it; what
-- follows is the upkeep after the commit (upkeep_part).
local function commit_bounds(lines)
  local put = #lines
  for i, l in ipairs(lines) do
    if l.method == "PUT" and l.key:match("/snapshot/snapshot%-%d+$") then put = i end
  end
  local from, to = 1, #lines
  for i = 1, put do
    if lines[i].method == "GET" and lines[i].key:match("/snapshot/LATEST$") then from = i end
  end
  for i = put + 1, #lines do
    if lines[i].method == "PUT" and lines[i].key:match("/snapshot/LATEST$") then to = i; break end
  end
  return from, to
end

local function commit_part(lines)
  local from, to = commit_bounds(lines)
  return {table.unpack(lines, from, to)}
end

local function upkeep_part(lines)
  local _, to = commit_bounds(lines)
  return {table.unpack(lines, to + 1)}
end

-- requests of the upkeep after a commit with nothing to do
local UPKEEP_BUDGET = 20   -- 13 measured (issue 23)

-- Each file under manifest/ whose key matches `pattern` GET at most once,
-- no schema HEAD.
local function reads_once(lines, what, pattern)
  local seen = {}
  for _, l in ipairs(commit_part(lines)) do
    if l.method == "GET" and l.key:match(pattern) then
      assert.is_nil(seen[l.key], what .. ": read twice: " .. l.key)
      seen[l.key] = true
    end
    assert.is_false(l.method == "HEAD" and l.key:match("/schema/schema%-") ~= nil, what .. ": " .. l.key)
  end
  return seen
end

describe_s3("S3 requests per commit", function()
  it("write.lua: the latest's lists read once, no schema HEAD, within the request budget", function()
    local loc, dir = H.copy_table(H.fixture(AVRO))
    local uri = H.s3_put_table(loc)
    local rows = (H.script("read.lua", {loc, "--limit", "1"}))
    H.write_file(dir .. "/rows.jsonl", rows)
    local lines = traced(dir, "write.lua", {uri, "--input", dir .. "/rows.jsonl"})
    local seen = reads_once(lines, "write.lua", "/manifest/")
    local lists = 0
    for k in pairs(seen) do if k:match("/manifest%-list%-") then lists = lists + 1 end end
    assert.equals(2, lists)   -- the latest's base and delta lists
    -- the commit: LATEST with its two checks (4), the schema listing, the
    -- latest snapshot, its 2 lists, 3 PUTs of the new manifest and lists,
    -- 4 HEADs of the new files, the snapshot, the base check, LATEST (19
    -- before: a HEAD of the latest's schema file)
    local n = #commit_part(lines)
    assert.is_true(n <= 18, tostring(n))
    -- the upkeep after it (docs/maintenance.md), nothing due: the schema
    -- listing and file, the hints, tags, consumers, a few snapshots; it
    -- deletes nothing and writes nothing
    local up = upkeep_part(lines)
    for _, l in ipairs(up) do
      assert.is_true(l.method == "GET" or l.method == "HEAD", l.method .. " " .. l.key)
    end
    assert.is_true(#up <= UPKEEP_BUDGET, tostring(#up))
    H.rmdir(dir)
  end)

  -- (its manifests are read again by the full merge an OVERWRITE may run)
  it("drop_partition.lua (an OVERWRITE with the conflict check): the latest's lists read once", function()
    local loc, dir = H.copy_table(H.fixture(PK_TAG_BRANCH))
    local uri = H.s3_put_table(loc)
    local lines = traced(dir, "drop_partition.lua", {uri, "--partition", "pt=1", "--json"})
    local seen, n = reads_once(lines, "drop_partition.lua", "/manifest%-list%-"), 0
    for _ in pairs(seen) do n = n + 1 end
    assert.equals(2, n)   -- the latest's base and delta lists
    H.rmdir(dir)
  end)
end)

-- An orphan dry run plans the keys its one listing gave, with the listed
-- sizes: no HEAD per orphan (issue 16: 1M orphans were 1M HEADs).
describe_s3("S3 requests of an orphan dry run", function()
  it("remove_orphan_files.lua --dry-run: no HEAD of a listed orphan, the listed sizes", function()
    local loc, dir = H.copy_table(H.fixture(PK_TAG_BRANCH))
    local N, sizes = 24, {}
    for i = 1, N do
      local rel = (i % 2 == 0 and "pt=1/bucket-0/data-orphan-%d.parquet" or "manifest/manifest-orphan-%d"):format(i)
      H.write_file(loc .. "/" .. rel, ("orphan "):rep(i))
      sizes[rel] = 7 * i
    end
    local uri = H.s3_put_table(loc)
    H.run("sleep 2")
    local lines, out = traced(dir, "remove_orphan_files.lua",
                              {uri, "--older-than", "1s", "--allow-young-cutoff", "--dry-run", "--json"})
    for _, l in ipairs(lines) do
      assert.is_false(l.method == "HEAD" and l.key:match("orphan") ~= nil, "HEAD of a listed orphan: " .. l.key)
      assert.is_false(l.method == "DELETE" or (l.method == "POST" and l.key:match("delete") ~= nil), l.key)
    end
    local r = H.cjson.decode(out)
    local planned = {}
    for _, x in ipairs(r.paths) do
      local rel = x.path:match("/(pt=1/bucket%-0/[^/]+)$") or x.path:match("/(manifest/[^/]+)$")
      if rel then planned[rel] = x.size end
    end
    for rel, size in pairs(sizes) do assert.equals(size, planned[rel], rel) end
    -- nothing deleted: every orphan is still there
    local left = {}
    for _, o in ipairs(H.s3_ls(uri)) do left[o.path] = o.size end
    for rel, size in pairs(sizes) do assert.equals(size, left[rel], rel) end
    H.rmdir(dir)
  end)
end)

-- An expiration dry run asks of every planned key whether it exists and how
-- big it is: a catch-up plans hundreds of thousands. Keys of one directory
-- are found in a listing of it (one request per 1000 keys), not a HEAD each
-- (issue 16); the plan is the one the local dry run makes, with the sizes
-- the store lists, and a planned key that is gone counts as missing.
describe_s3("S3 requests of an expiration dry run", function()
  it("expire.lua --dry-run: planned keys found by listing their directories, the local plan", function()
    local core = require "paimon.core"
    local paimon = require "paimon"
    local create_table = paimon.create_table or core.create_table
    local dir = H.tmpdir()
    local loc = dir .. "/t"
    local t = assert(create_table(loc, {fields = {{name = "id", type = "BIGINT"}},
                                        options = {["file.format"] = "avro", bucket = -1}}))
    local N = 40
    for i = 1, N do
      local w = assert(t:new_write{})
      w:write{id = i}
      local msgs = assert(w:prepare_commit())
      w:close()
      assert(t:new_commit{commit_user = "dry"}:commit(msgs))
    end
    t:close()
    local uri = H.s3_put_table(loc)
    local args = {"--retain-min", "1", "--older-than", "0s", "--max-deletes", "1000", "--dry-run", "--json"}
    local function plan(where)
      local a = {where}
      for _, x in ipairs(args) do a[#a + 1] = x end
      local out, err, code = H.script("expire.lua", a)
      assert.equals(0, code, err)
      local r = H.cjson.decode(out)
      local paths = {}
      for _, x in ipairs(r.paths) do paths[#paths + 1] = x.path:sub(#where + 2) .. " " .. x.size end
      table.sort(paths)
      return r, paths
    end
    -- one planned list of each side gone: missing, not planned, on both
    local lr, lpaths = plan(loc)
    assert.equals(N - 1, lr.expired)
    local gone
    for _, x in ipairs(lr.paths) do
      local rel = x.path:sub(#loc + 2)
      if not gone and rel:match("^manifest/manifest%-list%-") then gone = rel end
    end
    assert.truthy(gone)
    os.remove(loc .. "/" .. gone)
    local bucket, prefix = H.s3_split(uri)
    H.rclone({"deletefile", "pms3:" .. bucket .. "/" .. prefix .. "/" .. gone})
    lr, lpaths = plan(loc)
    assert.equals(1, lr.missing)
    local trace_args = {uri}
    for _, x in ipairs(args) do trace_args[#trace_args + 1] = x end
    local lines, out = traced(dir, "expire.lua", trace_args)
    local sr = H.cjson.decode(out)
    local spaths = {}
    for _, x in ipairs(sr.paths) do spaths[#spaths + 1] = x.path:sub(#uri + 2) .. " " .. x.size end
    table.sort(spaths)
    assert.same(lpaths, spaths)
    assert.equals(1, sr.missing)
    assert.same(lr.deleted, sr.deleted)
    assert.same(lr.bytes, sr.bytes)
    -- the store's own sizes (rclone's listing) for every planned key
    local listed = {}
    for _, o in ipairs(H.s3_ls(uri)) do listed[o.path] = o.size end
    for _, x in ipairs(sr.paths) do assert.equals(listed[x.path:sub(#uri + 2)], x.size, x.path) end
    assert.is_true(#sr.paths >= 3 * (N - 2), tostring(#sr.paths))
    local heads, lists, planned = 0, 0, {}
    for _, x in ipairs(sr.paths) do planned[x.path] = true end
    for _, l in ipairs(lines) do
      -- the hints' checks (LATEST, EARLIEST and their neighbours) are HEADs
      -- of snapshot files too: only the planned keys count
      if l.method == "HEAD" and planned[l.key] then heads = heads + 1 end
      if l.method == "GET" and l.key:match("list%-type=2") then lists = lists + 1 end
    end
    -- before: a HEAD per planned key (more than 110 here)
    assert.is_true(heads <= 2, "HEADs of planned keys: " .. heads)
    assert.is_true(lists >= 2, "listings: " .. lists)
    H.rmdir(dir)
  end)
end)
