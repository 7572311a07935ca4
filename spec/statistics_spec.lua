-- Statistics files (snapshot.statistics, statistics/stat-*; paimon-format.md
-- §2, §8.1) through verify, expiration and orphan cleaning. No Java
-- fixture has one, so a table written here gets them the way Java's
-- ANALYZE leaves them: the snapshot JSON names a file in statistics/, a
-- later snapshot inherits the name or names a new one. What each operation
-- must keep or delete is taken from the independent python3-avro walk
-- (spec/support/refs.py), which lists statistics files per snapshot.
local H = require "helper"
local paimon = require "paimon"

-- snapshot id -> statistics file name it gets
local STATS = {[1] = "stat-a-0", [2] = "stat-a-0", [3] = "stat-c-0", [4] = "stat-b-0"}

-- A table of 4 append snapshots whose JSON names the STATS files, those
-- files, and stat-d-0 that nothing names.
local function table_with_stats()
  local dir = H.tmpdir()
  local path = dir .. "/t"
  local _, err, rc = H.script("create_table.lua", {path, "--field", "id:BIGINT", "--field", "dt:STRING",
                                                   "--partition", "dt", "--option", "bucket=-1",
                                                   "--option", "file.format=avro"})
  assert(rc == 0, err)
  for i = 1, 4 do
    H.write_file(dir .. "/rows.jsonl", string.format('{"id":%d,"dt":"d%d"}\n', i, i % 2))
    _, err, rc = H.script("write.lua", {path, "--input", dir .. "/rows.jsonl"})
    assert(rc == 0, err)
  end
  assert(H.run("mkdir -p " .. H.sh_quote(path .. "/statistics")))
  for id, name in pairs(STATS) do
    local f = path .. "/snapshot/snapshot-" .. id
    local json = H.read_file(f)
    assert(not json:find('"statistics"', 1, true))
    -- Java writes the field after the others it has; the reader takes any order
    H.write_file(f, (json:gsub("\n}%s*$", ',\n  "statistics" : "' .. name .. '"\n}')))
    H.write_file(path .. "/statistics/" .. name, '{"snapshotId":' .. id .. ',"schemaId":0,"mergedRecordCount":1}')
  end
  H.write_file(path .. "/statistics/stat-d-0", "{}")
  H.run("touch -d '2 days ago' " .. H.sh_quote(path) .. "/statistics/*")
  return path, dir
end

-- statistics files refs.py finds for the given snapshots of main
local function refs_stats(path, ids)
  local r = H.refs(path)
  local set = {}
  for _, id in ipairs(ids) do
    for _, p in ipairs(r.main.snapshots[tostring(id)] or {}) do
      if p:match("^statistics/") then set[p] = true end
    end
  end
  return set
end

local function stats_on_disk(path) return H.file_set(path .. "/statistics") end

describe("statistics files", function()
  it("the independent walk sees them as the snapshots name them", function()
    local path, dir = table_with_stats()
    assert.same({["statistics/stat-a-0"] = true}, refs_stats(path, {1}))
    assert.same({["statistics/stat-a-0"] = true, ["statistics/stat-c-0"] = true, ["statistics/stat-b-0"] = true},
                refs_stats(path, {1, 2, 3, 4}))
    local t = assert(paimon.open(path))
    assert.equals("stat-c-0", assert(t:snapshot(3)).statistics)
    t:close()
    H.rmdir(dir)
  end)

  it("verify checks each distinct one and reports a missing one with the snapshot that needs it", function()
    local path, dir = table_with_stats()
    local t = assert(paimon.open(path))
    local r = assert(t:verify{all_snapshots = true})
    assert.is_true(r.ok)
    assert.equals(3, r.checked.statistics)
    r = assert(t:verify{})
    assert.equals(1, r.checked.statistics)   -- the latest snapshot's only
    os.remove(path .. "/statistics/stat-c-0")
    r = assert(t:verify{all_snapshots = true})
    assert.is_false(r.ok)
    assert.equals(1, #r.missing)
    assert.equals(path .. "/statistics/stat-c-0", r.missing[1].path)
    assert.equals("statistics", r.missing[1].kind)
    assert.matches("snapshot 3", r.missing[1].message, 1, true)
    assert.is_true(assert(t:verify{}).ok)    -- the latest snapshot does not need it
    t:close()
    H.rmdir(dir)
  end)

  it("expiration deletes those only expired snapshots name, keeps the retained one's", function()
    local path, dir = table_with_stats()
    local keep = refs_stats(path, {4})
    local out, err, rc = H.script("expire.lua", {path, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    assert.equals(3, r.expired)
    assert.equals(2, r.deleted.statistics)   -- stat-a-0 (snapshots 1, 2) and stat-c-0
    local left = stats_on_disk(path)
    for p in pairs(keep) do assert.is_true(left[p:sub(#"statistics/" + 1)], "retained statistics deleted: " .. p) end
    assert.same({["stat-b-0"] = true, ["stat-d-0"] = true}, left)   -- stat-d-0 is nobody's: orphan cleaning's job
    H.rmdir(dir)
  end)

  it("expiration keeps a statistics file the end snapshot inherited", function()
    local path, dir = table_with_stats()
    -- snapshot 3 (the new earliest) inherits stat-a-0 instead of stat-c-0
    local f = path .. "/snapshot/snapshot-3"
    H.write_file(f, (H.read_file(f):gsub("stat%-c%-0", "stat-a-0")))
    local out, err, rc = H.script("expire.lua", {path, "--retain-min", "2", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    assert.equals(2, r.expired)
    assert.equals(0, r.deleted.statistics)
    assert.is_true(H.exists(path .. "/statistics/stat-a-0"))
    H.rmdir(dir)
  end)

  it("orphan cleaning removes the one nothing names, never a named one", function()
    local path, dir = table_with_stats()
    local named = refs_stats(path, {1, 2, 3, 4})
    local out, err, rc = H.script("remove_orphan_files.lua", {path, "--older-than", "1d", "--json"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    assert.equals(1, r.deleted.statistics)
    local left = stats_on_disk(path)
    assert.is_nil(left["stat-d-0"])
    for p in pairs(named) do assert.is_true(left[p:sub(#"statistics/" + 1)], "named statistics deleted: " .. p) end
    H.rmdir(dir)
  end)
end)
