-- Issue 22: what a retained snapshot, tag or branch needs is never deleted,
-- across branches that share snapshots (branch from a tag, fast-forward)
-- and files that come back (rollback --as-latest). Each case is driven
-- through the scripts exactly as an operator would, then checked with the
-- independent reader (spec/support/refs.py, python3-avro: no code shared
-- with the core): every file any snapshot or tag of any branch names
-- exists, and every retained snapshot of every branch reads.
local H = require "helper"
local cjson = require "cjson"

local function run(script, args, want)
  local out, err, rc = H.script(script, args)
  if want ~= false then
    assert(rc == (want or 0), script .. " " .. table.concat(args, " ") .. " exited " .. rc .. ":\n" .. err .. out)
  end
  return out, err, rc
end

local function new_table()
  local dir = H.tmpdir()
  local path = dir .. "/db.db/t"
  run("create_table.lua", {path, "--field", "id:INT", "--field", "p:INT", "--partition", "p"})
  return path, dir
end

local n_rows = 0
-- one APPEND commit of a row in partition p (main, or branch b)
local function write(path, p, branch)
  n_rows = n_rows + 1
  local f = os.tmpname()
  H.write_file(f, cjson.encode({id = n_rows, p = p}) .. "\n")
  local args = {path, "--input", f}
  if branch then args[#args + 1] = "--branch"; args[#args + 1] = branch end
  run("write.lua", args)
  os.remove(f)
end

local function branches(path)
  local out = run("branch.lua", {path, "list", "--json"})
  local names = {"main"}
  for _, b in ipairs(cjson.decode(out).branches or {}) do names[#names + 1] = b.name or b end
  return names
end

local function snapshot_ids(path, branch)
  local dir = path .. (branch == "main" and "" or "/branch/branch-" .. branch) .. "/snapshot"
  local ids = {}
  local p = io.popen("ls " .. H.sh_quote(dir) .. " 2>/dev/null")
  for name in p:lines() do
    local id = name:match("^snapshot%-(%d+)$")
    if id then ids[#ids + 1] = tonumber(id) end
  end
  p:close()
  table.sort(ids)
  return ids
end

-- The table is whole: every file the independent reader says any snapshot
-- or tag of any branch names exists, and every snapshot of every branch
-- reads through read.lua.
local function assert_whole(path, when)
  local missing = {}
  for f in pairs(H.used_paths(H.refs(path), path, true)) do
    if not H.exists(f) then missing[#missing + 1] = f:sub(#path + 2) end
  end
  table.sort(missing)
  assert(#missing == 0, when .. ": needed files are gone:\n  " .. table.concat(missing, "\n  "))
  for _, b in ipairs(branches(path)) do
    for _, id in ipairs(snapshot_ids(path, b)) do
      local _, err, rc = H.script("read.lua", {path, "--branch", b, "--snapshot", tostring(id)})
      assert(rc == 0, when .. ": read.lua --branch " .. b .. " --snapshot " .. id .. " failed: " .. err)
    end
  end
end

local EXPIRE_ALL = {"--retain-min", "1", "--older-than", "1ms", "--max-deletes", "1000"}

local function expire(path, branch)
  local args = {path}
  for _, a in ipairs(EXPIRE_ALL) do args[#args + 1] = a end
  if branch then args[#args + 1] = "--branch"; args[#args + 1] = branch end
  return run("expire.lua", args)
end

-- tag t1 on main's snapshot 2, branch b1 from it, 5 commits on b1 (b1's
-- snapshots 3-7), main fast-forwarded to b1 (main's 2-7 are b1's), then
-- one commit on main (8): main and b1 share snapshots 2-7.
local function shared_by_fast_forward()
  local path, dir = new_table()
  write(path, 1)
  write(path, 2)
  run("tag.lua", {path, "create", "t1"})
  run("branch.lua", {path, "create", "b1", "--from-tag", "t1"})
  for i = 1, 5 do write(path, i % 3, "b1") end
  run("branch.lua", {path, "fast-forward", "b1"})
  write(path, 1)
  assert_whole(path, "after the fast-forward")
  return path, dir
end

describe("protection across branches and rollbacks (issue 22)", function()
  it("expiring main keeps the snapshots it shares with a branch after a fast-forward", function()
    local path, dir = shared_by_fast_forward()
    expire(path)
    assert_whole(path, "after expire.lua (main)")
    -- orphan cleaning and branch delete still work on the table
    run("remove_orphan_files.lua", {path, "--older-than", "1ms", "--allow-young-cutoff", "--dry-run"})
    run("branch.lua", {path, "delete", "b1"})
    assert_whole(path, "after branch delete")
    H.rmdir(dir)
  end)

  it("expiring the branch keeps what main's shared snapshots need", function()
    local path, dir = shared_by_fast_forward()
    expire(path, "b1")
    assert_whole(path, "after expire.lua --branch b1")
    H.rmdir(dir)
  end)

  it("a rollback --purge-files of main keeps what the branch's shared snapshots need", function()
    local path, dir = shared_by_fast_forward()
    run("rollback.lua", {path, "--to-snapshot", "3", "--purge-files"})
    assert_whole(path, "after rollback.lua --to-snapshot 3")
    H.rmdir(dir)
  end)

  it("expiring a branch keeps a data file main's retained snapshot reads (no fast-forward)", function()
    local path, dir = new_table()
    write(path, 1)
    write(path, 2)
    run("tag.lua", {path, "create", "t1"})
    run("branch.lua", {path, "create", "b1", "--from-tag", "t1"})
    run("drop_partition.lua", {path, "--partition", "p=1"})
    run("drop_partition.lua", {path, "--partition", "p=1", "--branch", "b1"})
    for i = 1, 3 do write(path, i, nil); write(path, i, "b1") end
    run("tag.lua", {path, "delete", "t1"})
    run("tag.lua", {path, "delete", "t1", "--branch", "b1"})
    assert_whole(path, "before expiring")
    expire(path, "b1")
    assert_whole(path, "after expire.lua --branch b1")
    expire(path)
    assert_whole(path, "after expire.lua (main)")
    H.rmdir(dir)
  end)

  it("a file rollback --as-latest re-added stays while a retained snapshot reads it", function()
    local path, dir = new_table()
    write(path, 1)                                             -- 1
    write(path, 2)                                             -- 2: F in p=2
    run("drop_partition.lua", {path, "--partition", "p=2"})    -- 3: F deleted
    run("rollback.lua", {path, "--to-snapshot", "2", "--as-latest"})   -- 4: F back
    run("drop_partition.lua", {path, "--partition", "p=2"})    -- 5: F deleted again
    write(path, 3)                                             -- 6
    os.execute("sleep 1.2")
    run("tag.lua", {path, "expire", "--older-than", "1s"})     -- the rollback's tag goes
    assert.are.same({}, cjson.decode((run("tag.lua", {path, "list", "--json"}))).tags or {})
    run("expire.lua", {path, "--retain-min", "4", "--older-than", "1ms"})
    assert.are.same({3, 4, 5, 6}, snapshot_ids(path, "main"))
    assert_whole(path, "after expire.lua --retain-min 4")
    H.rmdir(dir)
  end)
end)

describe("a fast-forward's first copied snapshot starts a chain (issue 22)", function()
  -- b1 forks at main's 2 and expires its early snapshots (its earliest, 6,
  -- still holds p=2's file F); main drops p=2 (3), writes 4 and 5, expires
  -- to 4, then is fast-forwarded: main's 6 is b1's copy and reads F again,
  -- which no snapshot of main from 4 on added. Once b1 and the tags are
  -- gone only main's 6 and 7 hold F: the copy must start a chain.
  it("deleting the source branch keeps the files the copies read", function()
    local path, dir = new_table()
    write(path, 1)
    write(path, 2)
    run("tag.lua", {path, "create", "t1"})
    run("branch.lua", {path, "create", "b1", "--from-tag", "t1"})
    for _ = 1, 4 do write(path, 3, "b1") end                  -- b1: 3..6
    run("expire.lua", {path, "--branch", "b1", "--retain-min", "1", "--older-than", "1ms"})
    run("drop_partition.lua", {path, "--partition", "p=2"})   -- main 3
    write(path, 1)                                             -- main 4
    write(path, 1)                                             -- main 5
    run("tag.lua", {path, "delete", "t1"})
    run("expire.lua", {path, "--retain-min", "2", "--older-than", "1ms"})
    assert.are.same({4, 5}, snapshot_ids(path, "main"))
    run("branch.lua", {path, "fast-forward", "b1"})
    assert.are.same({4, 5, 6}, snapshot_ids(path, "main"))
    write(path, 1)                                             -- main 7
    local tags = cjson.decode((run("tag.lua", {path, "list", "--json"}))).tags or {}
    for _, t in ipairs(tags) do run("tag.lua", {path, "delete", t.name or t.tag_name}) end
    assert_whole(path, "after the fast-forward")
    run("branch.lua", {path, "delete", "b1"})
    assert_whole(path, "after branch delete")
    run("expire.lua", {path, "--retain-min", "2", "--older-than", "1ms"})
    assert_whole(path, "after expire.lua")
    H.rmdir(dir)
  end)
end)
