-- Orphan cleaning reads manifests in two rounds (docs/maintenance.md,
-- step 4): those of each branch's latest snapshot and the tags first; the
-- ones only older snapshots name are read only while some listed file is
-- not yet known to be in use. Tables written here (write.lua, then
-- compact_manifest.lua, so that older snapshots name manifests the latest
-- one no longer does); what must stay is taken from the independent
-- python3-avro walk (spec/support/refs.py).
local H = require "helper"
local paimon = require "paimon"

local unpack = table.unpack or unpack   -- LuaJIT

local function sh(args)
  local out, err, rc = H.script(args[1], {unpack(args, 2)})
  assert(rc == 0, err)
  return out
end

-- 3 appends (partitions d0, d1), optionally drops (drop: a partition or a
-- list of them), then a manifest compaction: snapshots 1-3 (4) name small
-- manifests, the latest only the merged one. Files two days old unless
-- young.
local function build(drop, young)
  local dir = H.tmpdir()
  local path = dir .. "/t"
  sh{"create_table.lua", path, "--field", "id:BIGINT", "--field", "dt:STRING", "--partition", "dt",
     "--option", "bucket=-1", "--option", "file.format=avro"}
  for i = 1, 3 do
    H.write_file(dir .. "/rows.jsonl", string.format('{"id":%d,"dt":"d0"}\n{"id":%d,"dt":"d1"}\n', i, i + 10))
    sh{"write.lua", path, "--input", dir .. "/rows.jsonl"}
  end
  if drop then
    local args = {"drop_partition.lua", path}
    for _, p in ipairs(type(drop) == "table" and drop or {"d0"}) do
      args[#args + 1] = "--partition"
      args[#args + 1] = "dt=" .. p
    end
    sh(args)
  end
  sh{"compact_manifest.lua", path}
  -- everything is older than the cut-offs used below
  if not young then H.run("find " .. H.sh_quote(path) .. " -type f -exec touch -d '2 days ago' {} +") end
  return path, dir
end

local function orphans(path, args)
  local all = {path, "--json"}
  for _, a in ipairs(args or {}) do all[#all + 1] = a end
  local out, err, rc = H.script("remove_orphan_files.lua", all)
  return rc == 0 and H.decode(out) or nil, err, rc
end

-- manifests the latest snapshot names (base + delta), and all of them
local function manifests(path)
  local t = assert(paimon.open(path))
  local s = assert(t:latest_snapshot())
  local latest = {}
  for _, kind in ipairs{"base", "delta"} do
    for m in assert(s:manifests(kind)) do latest[m.file_name] = true end
  end
  t:close()
  local all = {}
  for name in pairs(H.file_set(path .. "/manifest")) do
    if name:match("^manifest%-") and not name:match("^manifest%-list%-") then all[name] = true end
  end
  return latest, all
end

local function used_all_exist(path)
  for p in pairs(H.used_paths(H.refs(path), path, true)) do assert.is_true(H.exists(p), "used file deleted: " .. p) end
end

-- manifest files only older snapshots name, and the data file names each
-- one's entries carry
local function older_only(path)
  local latest, all = manifests(path)
  local t = assert(paimon.open(path))
  local s = assert(t:snapshot(1))
  local out = {}
  for name in pairs(all) do
    if not latest[name] then
      local names = {}
      for en in assert(s:entries(name)) do names[en.file.file_name] = true end
      out[name] = names
    end
  end
  t:close()
  return out
end

local function damage(path, manifest)
  local _, err, rc = H.support_py("truncate_blocks.py", {path .. "/manifest/" .. manifest})
  assert.equals(0, rc, err)
  H.run("touch -d '2 days ago' " .. H.sh_quote(path .. "/manifest/" .. manifest))
end

-- an unreferenced data file two days old
local function old_file(p)
  H.write_file(p, "x")
  H.run("touch -d '2 days ago' " .. H.sh_quote(p))
end

-- remove_orphan_files.lua --older-than 1d exits 1 naming msg and changes nothing
local function refuses(path, msg)
  H.refuses_unchanged(path, function(args) return H.script("remove_orphan_files.lua", args) end,
                      {path, "--older-than", "1d"}, 1, msg)
end

describe("orphan cleaning's manifest rounds", function()
  it("skips the manifests only older snapshots name when every listed file is in use", function()
    local path, dir = build(false)
    local latest, all = manifests(path)
    local n_older_only = 0
    for name in pairs(all) do if not latest[name] then n_older_only = n_older_only + 1 end end
    assert.is_true(n_older_only >= 3, "the compaction left older-only manifests")
    local before = H.tree(path)
    local r = assert(orphans(path, {"--older-than", "1d", "--dry-run"}))
    assert.equals(n_older_only, r.manifests_skipped)
    assert.equals(r.listed, r.used)
    assert.equals(0, r.files)
    r = assert(orphans(path, {"--older-than", "1d"}))
    assert.equals(0, r.files)
    assert.equals(before, H.tree(path))
    used_all_exist(path)
    -- a file being written now (younger than the cut-off) is kept whatever
    -- any manifest says: still no need for the older manifests
    local young = path .. "/dt=d1/bucket-0/data-11111111-1111-1111-1111-111111111111-0.avro"
    H.write_file(young, "x")
    r = assert(orphans(path, {"--older-than", "1d"}))
    assert.equals(n_older_only, r.manifests_skipped)
    assert.equals(1, r.candidates)
    assert.equals(1, r.recent)
    assert.equals(0, r.files)
    assert.is_true(H.exists(young))
    -- once it is old, it can only go after every manifest has been read
    H.run("touch -d '2 days ago' " .. H.sh_quote(young))
    r = assert(orphans(path, {"--older-than", "1d"}))
    assert.equals(0, r.manifests_skipped)
    assert.equals(1, r.files)
    assert.is_false(H.exists(young))
    used_all_exist(path)
    H.rmdir(dir)
  end)

  it("reads them when a file only older snapshots name would otherwise look unused", function()
    -- d0's files were dropped, and the compaction left them out of the merged
    -- manifest: only the manifests of snapshots 1-4 name them
    local path, dir = build(true)
    local t = assert(paimon.open(path))
    local live = {}
    for f in assert(assert(t:latest_snapshot()):files()) do live[f.file.file_name] = true end
    t:close()
    local d0 = H.file_set(path .. "/dt=d0/bucket-0")
    local n_d0 = 0
    for name in pairs(d0) do assert.is_nil(live[name]); n_d0 = n_d0 + 1 end
    assert.equals(3, n_d0)
    local r = assert(orphans(path, {"--older-than", "1d"}))
    assert.equals(0, r.manifests_skipped)
    assert.equals(0, r.files)
    assert.same(d0, H.file_set(path .. "/dt=d0/bucket-0"))
    used_all_exist(path)
    H.rmdir(dir)
  end)

  it("reads them when the latest snapshot names no data file at all (the empty-used-set check sees everything)",
     function()
    -- both partitions dropped and compacted away, the files still young:
    -- nothing is deletable, yet only the older manifests name data files
    local path, dir = build({"d0", "d1"}, true)
    local before = H.tree(path)
    local r, err, rc = orphans(path, {"--older-than", "1d"})
    assert.equals(0, rc, err)
    assert.equals(0, r.manifests_skipped)
    assert.equals(r.listed, r.used)
    assert.equals(0, r.files)
    assert.equals(before, H.tree(path))
    H.rmdir(dir)
  end)

  it("a manifest only older snapshots name that is missing refuses the run, as reading it would", function()
    local path, dir = build(false)
    local victim = next(older_only(path))
    os.remove(path .. "/manifest/" .. victim)
    refuses(path, victim)
    H.rmdir(dir)
  end)

  it("with few files unknown, a damaged block that does not hold their names still refuses the run", function()
    -- names are looked up only in blocks holding an unknown file's name, but
    -- every block is still walked with every check: garbled bytes could hide
    -- a name (zstd frames as Java writes them carry no checksum)
    local path, dir = build(false)
    local victim = next(older_only(path))
    damage(path, victim)
    old_file(path .. "/dt=d1/bucket-0/data-22222222-2222-2222-2222-222222222222-0.avro")
    refuses(path, victim)
    H.rmdir(dir)
  end)

  it("with few files unknown, the orphan goes and everything used stays (names looked up in the right blocks)",
     function()
    local path, dir = build(true)
    -- d0's 3 files are named only by older manifests; one more, old, by none
    local orphan = path .. "/dt=d1/bucket-0/data-22222222-2222-2222-2222-222222222222-0.avro"
    old_file(orphan)
    local d0 = H.file_set(path .. "/dt=d0/bucket-0")
    local r, err, rc = orphans(path, {"--older-than", "1d"})
    assert.equals(0, rc, err)
    assert.equals(0, r.manifests_skipped)
    assert.equals(1, r.files)
    assert.is_false(H.exists(orphan))
    assert.same(d0, H.file_set(path .. "/dt=d0/bucket-0"))
    used_all_exist(path)
    H.rmdir(dir)
  end)

  it("a damaged block holding an unknown file's name is decoded, and refuses the run", function()
    -- d0's files: named only by older manifests, old, so unknown after the first round
    local path, dir = build(true)
    local d0 = H.file_set(path .. "/dt=d0/bucket-0")
    local victim
    for name, names in pairs(older_only(path)) do
      for f in pairs(names) do if d0[f] then victim = name end end
    end
    assert.truthy(victim)
    damage(path, victim)
    refuses(path, victim)
    H.rmdir(dir)
  end)

  it("an unreadable manifest of an older snapshot: skipped while nothing is unused, refused once something is",
     function()
    local path, dir = build(false)
    local victim = next(older_only(path))
    assert.truthy(victim)
    local vpath = path .. "/manifest/" .. victim
    H.write_file(vpath, H.read_file(vpath):sub(1, 40))   -- truncated: not readable
    H.run("touch -d '2 days ago' " .. H.sh_quote(vpath))
    -- every listed file is in use: the truncated manifest could protect
    -- nothing more, the run deletes nothing and succeeds
    local before = H.tree(path)
    local r = assert(orphans(path, {"--older-than", "1d"}))
    assert.equals(0, r.files)
    assert.is_true(r.manifests_skipped > 0)
    assert.equals(before, H.tree(path))
    -- an old unreferenced data file: now the older manifests must be read,
    -- and the truncated one refuses the run before anything is deleted
    old_file(path .. "/dt=d1/bucket-0/data-00000000-0000-0000-0000-000000000000-0.avro")
    refuses(path, victim)
    H.rmdir(dir)
  end)
end)
