-- Parity: every face of paimon-lua gives the same results on an S3 copy of a
-- Java-written fixture (the real Ceph RGW of make test) as on a local copy of
-- the same bytes: the scripts' --json (table path/URI normalized, clocks
-- dropped), the Lua API, paimon.h, resty.paimon; and the table left behind,
-- downloaded and read by the independent python3-avro reader (pyref.py).
-- Bad input (credentials, bucket, URI, endpoint) fails clearly and writes
-- nothing. docs/testing-s3.md; issue 14 "Parity" and "Bad input".
local H = require "helper"
local describe_s3 = H.s3_describe(describe, pending)

-- Tables covering the fixture kinds: partitioned PK with tags, a branch,
-- index manifests and unreferenced files; PK with DV and external paths;
-- append with a branch; partitioned append; PK with DV; Avro data.
local PK_TAG_BRANCH = "cpp-parquet-pk_btree_partitioned_e2e"
local PK_EXTERNAL = "cpp-parquet-pk_dv_index_in_data_with_external"
local APPEND_BRANCH = "cpp-parquet-append_table_with_append_pt_branch"
local APPEND_PART = "cpp-parquet-append_complex_data"
local PK_DV = "cpp-parquet-pk_table_scan_and_read_dv"
local AVRO = "cpp-avro-append_with_multiple_map"
local ALL = {PK_TAG_BRANCH, PK_EXTERNAL, APPEND_BRANCH, APPEND_PART, PK_DV, AVRO}

local function pattern_escape(s) return (s:gsub("%p", "%%%0")) end

-- A local copy and an S3 copy (uploaded from that local copy, so the same
-- bytes) of a fixture: { loc = path, uri = "s3://...", dir = temp dir }.
local function pair(name)
  local loc, dir = H.copy_table(H.fixture(name))
  return { loc = loc, uri = H.s3_put_table(loc), dir = dir, name = name }
end

-- Keys whose values are clocks of the run, not results.
local CLOCKS = { duration_ms = true, now = true, older_than = true, expire_before = true }

-- Decoded --json with the table's location replaced by "TABLE", clock
-- values dropped and path lists sorted (deletes run in parallel).
local function normalized(text, where)
  local t = text
  for _, w in ipairs(where) do t = t:gsub(pattern_escape(w), "TABLE") end
  -- epoch milliseconds inside messages (cut-offs) are clocks too
  t = t:gsub('"[^"]*"', function(str) return (str:gsub("%d%d%d%d%d%d%d%d%d%d%d%d%d", "MILLIS")) end)
  local v = H.decode(t)
  local function walk(x)
    if type(x) ~= "table" then return x end
    for k, val in pairs(x) do
      if CLOCKS[k] then x[k] = nil else walk(val) end
    end
    if #x > 0 and type(x[1]) == "table" and x[1].path then
      table.sort(x, function(a, b) return a.path < b.path end)
    elseif #x > 0 and type(x[1]) == "string" then
      table.sort(x)
    end
    return x
  end
  return walk(v)
end

-- Runs SCRIPT on the local and the S3 copy with the same arguments; both
-- must exit with rc (false: with the same code); returns both outputs normalized, and the raw stderr.
local function s3_sizes(uri)
  local m = {}
  for _, o in ipairs(H.s3_ls(uri)) do m[o.key] = o.size end
  return m
end

local function both(p, script, args, rc)
  local function run(where)
    local a = {where}
    for _, x in ipairs(args) do a[#a + 1] = x end
    return H.script(script, a)
  end
  local lo, le, lc = run(p.loc)
  -- what the S3 run deleted, with the store's own sizes (rclone's listing)
  local dry = false
  for _, x in ipairs(args) do dry = dry or x == "--dry-run" end
  local before = not dry and s3_sizes(p.uri)
  local so, se, sc = run(p.uri)
  p.gone = nil
  if before then
    local after = s3_sizes(p.uri)
    p.gone = {}
    for k, n in pairs(before) do
      if not after[k] then p.gone[k] = n end
    end
  end
  if rc == false then rc = lc end
  assert.equals(rc or 0, lc, script .. " local: " .. le .. lo:sub(1, 300))
  assert.equals(rc or 0, sc, script .. " S3: " .. se .. so:sub(1, 300))
  -- a failure may still print its JSON (verify.lua), a refusal nothing
  if lo:match("^%s*$") and so:match("^%s*$") then return nil, nil, le, se end
  return normalized(lo, {p.loc}), normalized(so, {p.uri, (p.uri:gsub("^s3://", "s3a://"))}), le, se
end

-- DeleteObjects does not say how big a deleted object was (docs/s3.md,
-- remove_batch: sizes -1), so a real (not dry) deletion on S3 counts the
-- size the metadata recorded, or 0 bytes where none is recorded (snapshot
-- files, orphans) while the local FileIO stat'ed the file; the counts, paths and
-- everything else must match. Dry runs find each key's size (listing or HEAD): bytes match there.
-- Manifest lists are written again by every commit, and compress to a few
-- bytes more or less each time: after commits on both sides the two tables'
-- lists differ in size, so the S3 count is checked against the sizes the
-- store lists for the lists it deleted (gone: key -> size, when known).
-- Empty directories removed locally (orphan cleaning) do not exist on S3.
local function sizes_unknown_on_s3(l, s, gone)
  if type(s) ~= "table" or s.dry_run ~= false or type(s.bytes) ~= "table" then return end
  local sum, lists = 0, nil
  if gone and s.bytes.manifest_lists then
    lists = 0
    for k, n in pairs(gone) do
      if k:match("/manifest/manifest%-list%-[^/]*$") then lists = lists + n end
    end
    assert.equals(lists, s.bytes.manifest_lists, "manifest list bytes against the store's sizes")
    s.bytes.manifest_lists = nil
  end
  for k, n in pairs(s.bytes) do
    assert.is_true(n == 0 or n == l.bytes[k], k .. ": S3 " .. tostring(n) .. ", local " .. tostring(l.bytes[k]))
    sum = sum + n
    s.bytes[k] = l.bytes[k]
  end
  -- the total is what the kinds counted: all of the local one's, or part
  if lists then
    assert.equals(s.total_bytes, sum + lists)
    assert.is_true(sum <= l.total_bytes - l.bytes.manifest_lists)
    s.bytes.manifest_lists = l.bytes.manifest_lists
  else
    assert.is_true(s.total_bytes == sum and s.total_bytes <= l.total_bytes)
  end
  s.total_bytes = l.total_bytes
  -- directories are virtual: nothing to remove once their files are gone
  if s.directories then
    assert.equals(0, s.directories)
    s.directories = l.directories
  end
end

local function same_json(p, script, args, rc)
  local l, s, le, se = both(p, script, args, rc)
  sizes_unknown_on_s3(l, s, p.gone)
  assert.same(l, s)
  return l, le, se
end

-- pyref views with what two separate commits cannot share (uuids in file
-- names, commit users, clocks) replaced.
local UUID = "%x%x%x%x%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%-%x%x%x%x%x%x%x%x%x%x%x%x"
local TIMES = { commit_time = true, time_millis = true, creation_time = true, timeMillis = true,
                update_time = true, last_update_time = true, commit_user = true, commitUser = true }
local function unstamped(v)
  if type(v) == "string" then return (v:gsub(UUID, "UUID")) end
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do
    if not TIMES[k] then out[k] = unstamped(x) end
  end
  if #out > 0 and type(out[1]) == "table" then
    table.sort(out, function(a, b) return H.cjson.encode(a) < H.cjson.encode(b) end)
  end
  return out
end

local VIEWS = {"snapshots", "schemas", "options", "files", "manifests", "partitions"}

-- The S3 copy, downloaded, is the same table as the local copy for pyref:
-- the same snapshots/files/... on main and every branch, and (exact) the
-- same set of files unless commits wrote new uniquely named ones.
local function same_state(p, opts)
  opts = opts or {}
  local back = p.dir .. "/back-" .. tostring(math.random(1e9))
  H.s3_get_table(p.uri, back)
  local branches = {false}
  local bdir = io.popen("ls " .. H.sh_quote(p.loc .. "/branch") .. " 2>/dev/null")
  for b in bdir:lines() do branches[#branches + 1] = b:match("^branch%-(.+)$") end
  bdir:close()
  for _, b in ipairs(branches) do
    local extra = b and {"--branch", b} or {}
    for _, view in ipairs(VIEWS) do
      local lo, le, lc = H.pyref(p.loc, view, extra)
      local so, se, sc = H.pyref(back, view, extra)
      assert.equals(lc, sc, view .. ": " .. le .. se)
      if lc == 0 then
        local l = H.decode((lo:gsub(pattern_escape(p.loc), "TABLE")))
        local s = H.decode((so:gsub(pattern_escape(back), "TABLE")))
        if opts.committed then
          l, s = unstamped(l), unstamped(s)
          -- the new manifests hold other uuids and clocks: other compressed sizes
          if view == "manifests" then
            for _, m in ipairs(l) do m.file_size = nil end
            for _, m in ipairs(s) do m.file_size = nil end
          end
        end
        assert.same(l, s, view .. " " .. tostring(b))
      end
    end
  end
  if not opts.committed then
    assert.same(H.file_set(p.loc), H.file_set(back))
  end
  return back
end

-- The keys below the S3 copy as a sorted list of paths.
local function s3_paths(uri)
  local out = {}
  for _, o in ipairs(H.s3_ls(uri)) do out[#out + 1] = o.path end
  return out
end

describe_s3("S3 parity: reading", function()
  local VIEW_LIST = {"snapshots", "schemas", "options", "files", "manifests", "partitions", "tags",
                     "branches", "consumers"}

  it("inspect.lua gives the same views on s3:// and s3a:// as on a local copy", function()
    for _, name in ipairs(ALL) do
      local p = pair(name)
      local a = { uri = p.uri:gsub("^s3://", "s3a://"), loc = p.loc }
      for _, view in ipairs(VIEW_LIST) do
        local l = same_json(p, "inspect.lua", {view, "--json"})
        local lo, le, lc = H.script("inspect.lua", {a.uri, view, "--json"})
        assert.equals(0, lc, le)
        assert.same(l, normalized(lo, {a.uri}), name .. " s3a " .. view)
      end
      -- a tag's and an older snapshot's files, and a branch
      same_json(p, "inspect.lua", {"files", "--snapshot", "1", "--json"})
      if name == PK_TAG_BRANCH then
        same_json(p, "inspect.lua", {"files", "--tag", "fallback-base", "--json"})
        same_json(p, "inspect.lua", {"snapshots", "--branch", "fallback", "--json"})
      elseif name == APPEND_BRANCH then
        same_json(p, "inspect.lua", {"files", "--branch", "test", "--json"})
      end
      -- the plain-text views too, location aside
      local lt = H.script("inspect.lua", {p.loc, "files"})
      local st = H.script("inspect.lua", {p.uri, "files"})
      assert.equals((lt:gsub(pattern_escape(p.loc), "TABLE")), (st:gsub(pattern_escape(p.uri), "TABLE")))
      H.rmdir(p.dir)
    end
  end)

  it("read.lua gives the same rows", function()
    local p = pair(AVRO)
    local lo, le, lc = H.script("read.lua", {p.loc})
    local so, se, sc = H.script("read.lua", {p.uri})
    assert.equals(0, lc, le)
    assert.equals(0, sc, se)
    assert.is_true(#lo > 0)
    assert.equals(lo, so)
    H.rmdir(p.dir)
  end)

  it("the Lua API iterators give the same values", function()
    local paimon = require "paimon"
    -- every value the API gives for the table, the location replaced
    local function dump(where)
      local t = assert(paimon.open(where))
      local function plain(v)
        if type(v) == "string" then return (v:gsub(pattern_escape(where), "TABLE")) end
        if type(v) == "userdata" then return tostring(v) end
        if type(v) ~= "table" then return v end
        local o = {}
        for k, x in pairs(v) do o[k] = plain(x) end
        return o
      end
      local d = { snapshots = {}, tags = plain(assert(t:tags())), branches = plain(assert(t:branches())),
                  schemas = plain(assert(t:schemas())), options = plain(assert(t:options())),
                  consumers = plain(assert(t:consumers())), ids = plain(assert(t:snapshot_ids())) }
      for s in t:snapshots() do
        local e = { json = s:to_json(), files = {}, manifests = {}, entries = {}, index = {} }
        for f in assert(s:files()) do e.files[#e.files + 1] = plain(f) end
        for _, kind in ipairs{"base", "delta"} do
          for m in assert(s:manifests(kind)) do
            e.manifests[#e.manifests + 1] = plain(m)
            for en in assert(s:entries(m.file_name)) do e.entries[#e.entries + 1] = plain(en) end
          end
        end
        for ie in assert(s:index_entries()) do e.index[#e.index + 1] = plain(ie) end
        d.snapshots[#d.snapshots + 1] = e
      end
      t:close()
      return d
    end
    for _, name in ipairs{PK_TAG_BRANCH, PK_EXTERNAL, APPEND_BRANCH} do
      local p = pair(name)
      local l = dump(p.loc)
      assert.is_true(#l.snapshots > 0)
      assert.same(l, dump(p.uri))
      assert.same(l, dump((p.uri:gsub("^s3://", "s3a://"))))
      H.rmdir(p.dir)
    end
  end)

  it("paimon.h (examples/c/table_info) prints the same on an s3:// URI", function()
    local tool = H.build .. "/examples/table_info"
    for _, name in ipairs{PK_TAG_BRANCH, APPEND_PART} do
      local p = pair(name)
      local lo, le, lc = H.run(H.sh_quote(tool) .. " " .. H.sh_quote(p.loc))
      local so, se, sc = H.run(H.sh_quote(tool) .. " " .. H.sh_quote(p.uri))
      assert.equals(0, lc, le)
      assert.equals(0, sc, se)
      assert.matches("\nfiles\t", lo, 1, true)
      assert.equals((lo:gsub(pattern_escape(p.loc), "TABLE")), (so:gsub(pattern_escape(p.uri), "TABLE")))
      H.rmdir(p.dir)
    end
  end)
end)

describe_s3("S3 parity: commits", function()
  it("create_table.lua + write.lua on a new S3 table: pyref reads it back, no temp objects", function()
    local dir = H.tmpdir()
    local c = H.s3()
    local uri = H.s3_put_table(dir) .. "/db.db/orders"   -- a fresh, empty prefix
    local loc = dir .. "/orders"
    local spec = {"--field", "id:BIGINT NOT NULL", "--field", "name:STRING", "--field", "dt:STRING",
                  "--partition", "dt", "--option", "bucket=-1", "--json"}
    local p = { loc = loc, uri = uri, dir = dir }
    same_json(p, "create_table.lua", spec)
    H.write_file(dir .. "/rows.jsonl", '{"id": 1, "name": "a", "dt": "2026-11-01"}\n' ..
                 '{"id": 2, "name": null, "dt": "2026-11-02"}\n{"id": "9007199254740993", "name": "c", "dt": "2026-11-01"}\n')
    for _ = 1, 2 do
      local l, s = both(p, "write.lua", {"--input", dir .. "/rows.jsonl", "--json"})
      assert.same(l, s)
    end
    -- the same rows come back
    local lr = H.script("read.lua", {loc})
    local sr = H.script("read.lua", {uri})
    assert.equals(lr, sr)
    assert.matches("9007199254740993", sr, 1, true)
    same_state(p, { committed = true })
    for _, key in ipairs(s3_paths(uri)) do
      assert.is_nil(key:find("tmp", 1, true), key)
      assert.is_nil(key:find("^%."), key)
    end
    assert.is_true(c.bucket ~= nil)
    -- create again: refused on both, nothing changed on S3
    local before = H.s3_ls(uri)
    both(p, "create_table.lua", spec, 3)   -- already exists: 3 in every script
    assert.same(before, H.s3_ls(uri))
    H.rmdir(dir)
  end)

  it("write.lua appends to a fixture copy as it does locally", function()
    local p = pair(AVRO)
    local sample = H.decode("[" .. (H.script("read.lua", {p.loc, "--limit", "1"})):gsub("%s+$", "") .. "]")[1]
    H.write_file(p.dir .. "/rows.jsonl", H.cjson.encode(sample) .. "\n")
    local l, s = both(p, "write.lua", {"--input", p.dir .. "/rows.jsonl", "--json"})
    assert.same(l, s)
    assert.equals(2, s.snapshot_id)
    assert.equals(H.script("read.lua", {p.loc}), (H.script("read.lua", {p.uri})))
    same_state(p, { committed = true })
    H.rmdir(p.dir)
  end)
end)

describe_s3("S3 parity: maintenance", function()
  it("expire.lua with --retain-min/--retain-max: the same plan, result and table", function()
    for _, name in ipairs{PK_TAG_BRANCH, PK_DV, APPEND_PART} do
      local p = pair(name)
      same_json(p, "expire.lua", {"--retain-min", "2", "--retain-max", "2", "--dry-run", "--json"})
      assert.same(H.file_set(p.loc), (function()
        local s = {}
        for _, k in ipairs(s3_paths(p.uri)) do s[k] = true end
        return s
      end)())
      local r = same_json(p, "expire.lua", {"--retain-min", "2", "--retain-max", "2", "--json"})
      assert.is_true(r.expired > 0, name)
      same_state(p)
      H.rmdir(p.dir)
    end
  end)

  it("expire.lua on S3 reports the bytes the manifests record (DeleteObjects returns no sizes)", function()
    for _, name in ipairs{PK_TAG_BRANCH, PK_DV} do
      local p = pair(name)
      local l, s = both(p, "expire.lua", {"--retain-min", "1", "--retain-max", "1", "--json"})
      assert.is_false(s.dry_run)
      assert.is_true(l.deleted.data_files > 0, name)
      assert.equals(l.deleted.data_files, s.deleted.data_files)
      -- data files: their manifest entries' file_size; manifests: their
      -- list's file_size; lists: the snapshot's *ManifestListSize; the
      -- same bytes the local FileIO stat'ed (Java wrote these lists)
      for _, k in ipairs{"data_files", "changelog_files", "manifests", "manifest_lists", "index_files"} do
        assert.equals(l.bytes[k], s.bytes[k], name .. " " .. k)
      end
      assert.is_true(s.bytes.data_files > 0 and s.bytes.manifest_lists > 0, name)
      -- and the lists' bytes are the sizes the store lists for them
      local lists = 0
      for k, n in pairs(p.gone) do
        if k:match("/manifest/manifest%-list%-[^/]*$") then lists = lists + n end
      end
      assert.equals(lists, s.bytes.manifest_lists, name)
      -- snapshot files and statistics record no size: those stay unknown
      assert.is_true(s.total_bytes >= l.total_bytes - l.bytes.snapshots - l.bytes.statistics - l.bytes.index_manifests)
      H.rmdir(p.dir)
    end
  end)

  it("expire.lua with a policy: the same result and table", function()
    local p = pair(PK_DV)
    local r = same_json(p, "expire.lua", {"--retain-min", "1", "--policy",
                                          H.root .. "/examples/policies/keep_daily.lua", "--json"})
    assert.is_number(r.expired)
    same_state(p)
    H.rmdir(p.dir)
  end)

  it("drop_partition.lua and expire_partitions.lua: the same plan and table", function()
    local p = pair(PK_TAG_BRANCH)
    same_json(p, "drop_partition.lua", {"--partition", "pt=1", "--dry-run", "--json"})
    local r = same_json(p, "drop_partition.lua", {"--partition", "pt=1", "--json"})
    assert.equals(6, r.snapshot_id)
    same_state(p, { committed = true })
    same_json(p, "expire_partitions.lua", {"--expiration-time", "1d", "--strategy", "update-time",
                                           "--dry-run", "--json"})
    r = same_json(p, "expire_partitions.lua", {"--expiration-time", "1d", "--strategy", "update-time", "--json"})
    assert.equals(7, r.snapshot_id)
    same_state(p, { committed = true })
    -- then expiring the snapshots deletes the dropped files the same way
    r = same_json(p, "expire.lua", {"--retain-min", "1", "--retain-max", "1", "--json"})
    assert.is_true(r.deleted.data_files > 0)
    same_state(p, { committed = true })
    H.rmdir(p.dir)
  end)

  it("remove_orphan_files.lua: the same candidates and deletions; the 1 h floor refuses", function()
    for _, name in ipairs{PK_TAG_BRANCH, PK_EXTERNAL} do
      local p = pair(name)
      -- orphans planted on both sides: a data file, a manifest, a nested one
      local c = H.s3()
      local bucket, prefix = H.s3_split(p.uri)
      for _, rel in ipairs{"pt=1/bucket-0/data-orphan-1.parquet", "manifest/manifest-orphan-1",
                           "pt=9/bucket-3/data-orphan-2.orc"} do
        H.run("mkdir -p " .. H.sh_quote(p.loc .. "/" .. rel:match("^(.*)/")))
        H.write_file(p.loc .. "/" .. rel, "orphan " .. rel)
        H.rclone({"copyto", p.loc .. "/" .. rel, "pms3:" .. bucket .. "/" .. prefix .. "/" .. rel})
      end
      assert.equals(c.bucket, bucket)
      H.run("sleep 2")
      -- the floor: a cut-off younger than 1 h is refused without the flag
      local before = H.s3_ls(p.uri)
      local _, le, se = same_json(p, "remove_orphan_files.lua", {"--older-than", "1s", "--json"}, 2)
      assert.matches("younger than the safety floor (60 minutes before now", le .. se, 1, true)
      assert.same(before, H.s3_ls(p.uri))
      -- the default cut-off (1 d): nothing is old enough on either side
      local r = same_json(p, "remove_orphan_files.lua", {"--json"})
      assert.equals(0, r.files)
      local args = {"--older-than", "1s", "--allow-young-cutoff", "--json"}
      r = same_json(p, "remove_orphan_files.lua", {"--older-than", "1s", "--allow-young-cutoff", "--dry-run", "--json"})
      -- (in the external-path table pt is no partition column: only the manifest is listed)
      assert.is_true(r.files >= (name == PK_EXTERNAL and 1 or 3), name)
      local planned = {}
      for _, x in ipairs(r.paths) do planned[x.path] = true end
      assert.is_true(planned["TABLE/manifest/manifest-orphan-1"])
      assert.same(before, H.s3_ls(p.uri))
      r = same_json(p, "remove_orphan_files.lua", args)
      assert.is_true(r.files >= 1)
      assert.is_true(r.floor_overridden)
      same_state(p)
      -- a second run finds nothing
      r = same_json(p, "remove_orphan_files.lua", args)
      assert.equals(0, r.files)
      H.rmdir(p.dir)
    end
  end)

  it("remove_orphan_files.lua: junk files go, and empty directories (S3: marker objects) as locally", function()
    local p = pair(PK_TAG_BRANCH)
    local bucket, prefix = H.s3_split(p.uri)
    for _, rel in ipairs{"pt=1/bucket-0/junk.orc", "manifest/.manifest-x.tmp", "pt=1/stray.txt"} do
      H.write_file(p.loc .. "/" .. rel, "junk")
      H.rclone({"copyto", p.loc .. "/" .. rel, "pms3:" .. bucket .. "/" .. prefix .. "/" .. rel})
    end
    -- empty directories: a partition left empty, a junk one in a bucket; a
    -- marker beside files stays
    -- (0dir: its marker is listed before the bucket's files)
    for _, rel in ipairs{"pt=7", "pt=7/bucket-0", "pt=2/bucket-0/tmpdir", "pt=2/bucket-0/0dir"} do
      assert(os.execute("mkdir -p " .. H.sh_quote(p.loc .. "/" .. rel)))
      H.s3_put_marker(p.uri .. "/" .. rel)
    end
    H.s3_put_marker(p.uri .. "/pt=1/bucket-0")
    H.run("sleep 2")
    local l, s = both(p, "remove_orphan_files.lua", {"--older-than", "1s", "--allow-young-cutoff", "--json"})
    assert.equals(3, l.deleted.other_files + l.deleted.temp_files)
    assert.equals(3, s.deleted.other_files + s.deleted.temp_files)
    assert.equals(4, l.directories)
    assert.equals(4, s.directories)
    for _, k in ipairs(H.s3_ls(p.uri)) do
      assert.is_nil(k.path:match("junk") or k.path:match("stray") or k.path:match("%.manifest%-x"), k.path)
    end
    assert.is_false(H.is_dir(p.loc .. "/pt=7"))
    -- the markers are gone: a second run finds no directory to remove (the
    -- marker beside files was never one)
    l, s = both(p, "remove_orphan_files.lua", {"--older-than", "1s", "--allow-young-cutoff", "--json"})
    assert.equals(0, l.directories)
    assert.equals(0, s.directories)
    assert.equals(0, s.files)
    same_state(p)
    H.rmdir(p.dir)
  end)

  it("verify.lua: the same report, before and after a file goes missing", function()
    for _, name in ipairs{PK_TAG_BRANCH, APPEND_BRANCH, PK_DV} do
      local p = pair(name)
      local r = same_json(p, "verify.lua", {"--all-snapshots", "--json"}, false)
      assert.is_not_nil(r.ok)
      if name == PK_TAG_BRANCH then
        assert.is_true(r.ok)
        -- remove one live data file on both sides
        local files = H.decode((H.script("inspect.lua", {p.loc, "files", "--json"})))
        local rel = files[1].file_path
        assert.is_nil(rel:find("^/"))
        os.remove(p.loc .. "/" .. rel)
        local bucket, prefix = H.s3_split(p.uri)
        H.rclone({"deletefile", "pms3:" .. bucket .. "/" .. prefix .. "/" .. rel})
        r = same_json(p, "verify.lua", {"--json"}, 1)
      end
      H.rmdir(p.dir)
    end
  end)

  it("verify.lua: external paths on the local disk are not_checked for an S3 table, as documented", function()
    -- the fixture's data files are absolute FILE: paths of the machine that
    -- wrote it: a local copy reports them missing; an S3 table does not
    -- check files on another file system (docs/maintenance.md, verify)
    local p = pair(PK_EXTERNAL)
    local lo, _, lc = H.script("verify.lua", {p.loc, "--json"})
    local so, se, sc = H.script("verify.lua", {p.uri, "--json"})
    local l, s = H.decode(lo), H.decode(so)
    assert.equals(1, lc)
    assert.equals(0, sc, se)
    assert.is_true(#l.missing > 0)
    assert.equals(0, #s.missing)
    assert.equals(0, s.checked.data_files)
    assert.equals(#l.missing, s.not_checked)
    assert.equals(l.checked.manifests, s.checked.manifests)
    assert.equals(l.checked.manifest_lists, s.checked.manifest_lists)
    H.rmdir(p.dir)
  end)
end)

describe_s3("S3 parity: resty.paimon (jobs inline, outside nginx)", function()
  it("reads, verifies, plans expiry and orphans the same on an S3 URI", function()
    package.loaded["resty.paimon"] = nil
    local rp = require "resty.paimon"
    local p = pair(PK_TAG_BRANCH)
    local function call(f, where, opts)
      local r, err = rp[f](where, opts)
      assert.is_not_nil(r, f .. " " .. where .. ": " .. tostring(err))
      return normalized(rp.to_json(r), {where})
    end
    for _, f in ipairs{"snapshots", "latest", "files", "verify"} do
      assert.same(call(f, p.loc), call(f, p.uri), f)
    end
    local ex = {retain_min = 1, retain_max = 2, dry_run = true}
    assert.same(call("expire", p.loc, ex), call("expire", p.uri, ex))
    -- real expiry through resty, then the tables are the same for pyref
    ex.dry_run = nil
    local l, s = call("expire", p.loc, ex), call("expire", p.uri, ex)
    sizes_unknown_on_s3(l.expired, s.expired)
    assert.same(l, s)
    assert.is_true(l.expired.expired > 0)
    same_state(p)
    local orphans = {dry_run = true, older_than = 1000, allow_young_cutoff = true}
    assert.same(call("remove_orphan_files", p.loc, orphans), call("remove_orphan_files", p.uri, orphans))
    H.rmdir(p.dir)
  end)
end)

describe_s3("S3 bad input", function()
  local SECRET = "WrongSecretKey0123456789abcdefWrongSecret"

  -- SCRIPT with ARGS under extra environment assignments ENV ("K=V" list)
  local function script_env(env, script, args)
    local parts = {"env"}
    for _, kv in ipairs(env) do parts[#parts + 1] = H.sh_quote(kv) end
    parts[#parts + 1] = H.sh_quote(H.cli)
    parts[#parts + 1] = H.sh_quote(script)
    for _, a in ipairs(args) do parts[#parts + 1] = H.sh_quote(a) end
    return H.run("timeout 120 " .. table.concat(parts, " "))
  end

  -- Every script that reads or changes the table at uri, with extra args
  -- and env: each must exit with rc, say msg (plain) on stderr, never print
  -- the secret, and leave the objects under the fixture copy as they were.
  local RUNS = {
    {"inspect.lua", {"snapshots"}}, {"read.lua", {}}, {"verify.lua", {}},
    {"expire.lua", {"--retain-min", "1", "--retain-max", "1"}},
    {"remove_orphan_files.lua", {"--older-than", "1s", "--allow-young-cutoff"}},
    {"drop_partition.lua", {"--partition", "pt=1"}},
    {"expire_partitions.lua", {"--expiration-time", "1d", "--strategy", "update-time"}},
    {"compact_manifest.lua", {}}, {"write.lua", {"--input", "/dev/null"}},
  }
  local function refuses_all(p, uri, env, extra, rc, msg, create_uri)
    local before = H.s3_ls(p.uri)
    assert.is_true(#before > 0)
    for _, run in ipairs(RUNS) do
      local args = {uri}
      for _, a in ipairs(run[2]) do args[#args + 1] = a end
      for _, a in ipairs(extra) do args[#args + 1] = a end
      local out, err, code = script_env(env, run[1], args)
      assert.equals(rc, code, run[1] .. ": " .. err .. out)
      assert.matches(msg, err, 1, true)
      assert.matches("^" .. run[1]:gsub("%p", "%%%0") .. ": ", err)
      assert.is_nil((out .. err):find(SECRET, 1, true), run[1])
    end
    -- creating a table next to it writes nothing either
    -- (create_table.lua exits 1 for every refusal, a usage error included)
    local _, err, code = script_env(env, "create_table.lua", {create_uri or uri .. "-new", "--field", "a:INT",
                                                          (table.unpack or unpack)(extra)})
    assert.is_true(code == rc or code == 1, err)
    assert.matches(msg, err, 1, true)
    assert.is_nil(err:find(SECRET, 1, true))
    assert.same(before, H.s3_ls(p.uri))
    assert.same({}, H.s3_ls(p.uri .. "-new"))
  end

  it("wrong credentials (environment or options): HTTP 403 named, exit 1, nothing written", function()
    local p = pair(PK_TAG_BRANCH)
    refuses_all(p, p.uri, {"AWS_SECRET_ACCESS_KEY=" .. SECRET}, {}, 1, "HTTP 403")
    refuses_all(p, p.uri, {}, {"--option", "s3.access-key=" .. H.s3().access_key,
                               "--option", "s3.secret-key=" .. SECRET}, 1, "HTTP 403")
    refuses_all(p, p.uri, {"AWS_ACCESS_KEY_ID=AKIAPARITYWRONGKEY00"}, {}, 1, "HTTP 403")
    -- a HEAD's 403 has no body: the message says what it likely means
    local _, err = script_env({"AWS_SECRET_ACCESS_KEY=" .. SECRET}, "inspect.lua", {p.uri, "snapshots"})
    assert.matches("HEAD failed: HTTP 403 (access denied: wrong or missing credentials", err, 1, true)
    H.rmdir(p.dir)
  end)

  it("a missing bucket: NoSuchBucket named, exit 1", function()
    local p = pair(PK_TAG_BRANCH)
    local _, prefix = H.s3_split(p.uri)
    local uri = "s3://no-such-bucket-" .. tostring(os.time()) .. "/" .. prefix
    refuses_all(p, uri, {}, {}, 1, "NoSuchBucket")
    H.rmdir(p.dir)
  end)

  it("a URI without a key (s3://bucket): refused as usage, nothing written at the bucket root", function()
    local p = pair(PK_TAG_BRANCH)
    local c = H.s3()
    for _, uri in ipairs{"s3://" .. c.bucket, "s3://" .. c.bucket .. "/", "s3a://" .. c.bucket .. "//"} do
      refuses_all(p, uri, {}, {}, 2, "names a whole bucket", uri)
      local _, err, code = H.script("create_table.lua", {uri, "--field", "a:INT"})
      assert.is_true(code == 1 or code == 2, err)
      assert.matches(uri .. ": the URI names a whole bucket, no table", err, 1, true)
    end
    -- nothing at the bucket root
    local root = H.rclone({"lsf", "--files-only", "--max-depth", "1", "pms3:" .. c.bucket})
    assert.equals("", root)
    -- the Lua API: misuse raises, naming the URI
    local paimon = require "paimon"
    local ok, err = pcall(paimon.open, "s3://" .. c.bucket)
    assert.is_false(ok)
    assert.matches("names a whole bucket", err, 1, true)
    H.rmdir(p.dir)
  end)

  it("an endpoint that is not S3 (a web server answering HTML): named, exit 1", function()
    local p = pair(PK_TAG_BRANCH)
    local dir = H.tmpdir()
    local port_file = dir .. "/port"
    H.write_file(dir .. "/not_s3.py", [[
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def answer(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n: self.rfile.read(n)
        body = b"<html><body>Welcome</body></html>"
        self.send_response(200); self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body))); self.end_headers()
        if self.command != "HEAD": self.wfile.write(body)
    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = answer
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(]] .. string.format("%q", port_file) .. [[, "w") as f: f.write(str(s.server_address[1]))
s.serve_forever()
]])
    H.run("(/usr/bin/python3 " .. H.sh_quote(dir .. "/not_s3.py") .. " </dev/null >/dev/null 2>" .. H.sh_quote(dir .. "/err") .. " & echo $! > " ..
          H.sh_quote(dir .. "/pid") .. ")")
    local port
    for _ = 1, 50 do
      port = H.exists(port_file) and H.read_file(port_file):match("^%d+$") or nil
      if port then break end
      H.run("sleep 0.1")
    end
    local ok, err = pcall(function()
      assert.is_not_nil(port, "the HTML server did not start: " .. (H.exists(dir .. "/err") and H.read_file(dir .. "/err") or ""))
      local endpoint = "http://127.0.0.1:" .. port
      refuses_all(p, p.uri, {}, {"--option", "s3.endpoint=" .. endpoint}, 1, endpoint .. " does not answer as an S3 service")
    end)
    H.run("kill " .. H.read_file(dir .. "/pid"):match("%d+"))
    H.rmdir(dir)
    H.rmdir(p.dir)
    assert(ok, err)
  end)

  it("an unreachable endpoint: no answer named, exit 1, within seconds", function()
    local p = pair(PK_TAG_BRANCH)
    local t0 = os.time()
    refuses_all(p, p.uri, {}, {"--option", "s3.endpoint=http://127.0.0.1:1"}, 1, "no answer from http://127.0.0.1:1")
    assert.is_true(os.time() - t0 < 100)
    H.rmdir(p.dir)
  end)
end)
