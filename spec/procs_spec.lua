-- Java's procedures replace_tag, create_tag_from_watermark, rename_branch
-- and clear_consumers (docs/maintenance.md, "Java procedures"), through
-- the Lua methods, the scripts and paimon.h (examples/c/table_maint), on
-- copies of the Java-written fixture with a tag and a branch.
local H = require "helper"
local paimon = require "paimon"

local FIX = "cpp-parquet-pk_btree_partitioned_e2e"
local MAINT = H.build .. "/examples/table_maint"

local function copy()
  local path, dir = H.copy_table(H.fixture(FIX))
  return path, dir, assert(paimon.open(path))
end

local function table_maint(op, path, kv)
  local parts = {H.sh_quote(MAINT), op, H.sh_quote(path)}
  for _, a in ipairs(kv or {}) do parts[#parts + 1] = H.sh_quote(a) end
  return H.run(table.concat(parts, " "))
end

-- The data, index and manifest files of the table (not its metadata).
local function data_files(path)
  local set = H.file_set(path)
  local out = {}
  for p in pairs(set) do
    if not p:match("^snapshot/") and not p:match("^tag/") and not p:match("^branch/") and not p:match("^consumer/")
       and not p:match("^schema/") then out[#out + 1] = p end
  end
  table.sort(out)
  return table.concat(out, "\n")
end

-- A snapshot or tag file with `"watermark" : W` added (Java writes it
-- after "statistics"/"commitKind"...; the parser takes any field order).
local function set_watermark(file, w)
  local text = H.read_file(file)
  text = text:gsub(',?\n  "watermark" : %-?%d+', "")
  if w then text = text:gsub("\n}%s*$", ',\n  "watermark" : ' .. w .. "\n}") end
  H.write_file(file, text)
end

describe("replace_tag (Java TagManager.replaceTag)", function()
  it("rewrites the tag as create_tag writes it, reports the old snapshot and deletes no file", function()
    local path, dir, t = copy()
    local before = data_files(path)
    local r = assert(t:replace_tag("fallback-base", {snapshot = 4}))
    assert.are.equal(4, r.snapshot_id)
    assert.are.equal(2, r.previous_snapshot_id)
    assert.is_true(r.replaced)
    assert(t:create_tag("fresh", {snapshot = 4}))
    assert.are.equal(H.read_file(path .. "/tag/tag-fresh"), H.read_file(path .. "/tag/tag-fallback-base"))
    -- what only snapshot 2's tag held is left for orphan cleaning, as Java leaves it
    assert.are.equal(before, data_files(path))
    -- no snapshot: the latest; a retention writes Java's Tag fields
    r = assert(t:replace_tag("fresh", {time_retained = "1d"}))
    assert.are.equal(5, r.snapshot_id)
    assert.matches('"tagTimeRetained" : 86400.000000000', H.read_file(path .. "/tag/tag-fresh"), 1, true)
    local out, err, code = H.script("verify.lua", {path, "--all-snapshots"})
    assert.are.equal(0, code, out .. err)
    t:close()
    H.rmdir(dir)
  end)

  it("refuses a tag that does not exist, and a dry run changes nothing", function()
    local path, dir, t = copy()
    local r, msg, code = t:replace_tag("nope", {snapshot = 2})
    assert.is_nil(r)
    assert.are.equal("notfound", code)
    assert.matches("tag 'nope' doesn't exist", msg, 1, true)
    assert.is_false(H.exists(path .. "/tag/tag-nope"))
    local tree = H.tree(path)
    r = assert(t:replace_tag("fallback-base", {snapshot = 5, dry_run = true}))
    assert.are.equal(5, r.snapshot_id)
    assert.are.equal(tree, H.tree(path))
    -- Java's replace_tag takes a snapshot id only
    assert.has_error(function() t:replace_tag("fallback-base", {timestamp = 1}) end)
    t:close()
    H.refuses_unchanged(path, function(a) return H.script("tag.lua", a) end,
                        {path, "replace", "fallback-base", "--watermark", "5"}, 2, "replace takes --snapshot")
    H.rmdir(dir)
  end)

  it("tag.lua replace and paimon_replace_tag do the same", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    local out, err, code = H.script("tag.lua", {path, "replace", "fallback-base", "--snapshot", "3", "--json"})
    assert.are.equal(0, code, err)
    local a = H.decode(out)
    local text = H.read_file(path .. "/tag/tag-fallback-base")
    local path2, dir2 = H.copy_table(H.fixture(FIX))
    out, err, code = table_maint("replace-tag", path2, {"tag=fallback-base", "snapshot=3"})
    assert.are.equal(0, code, err)
    local b = H.decode(out)
    assert.are.equal(text, H.read_file(path2 .. "/tag/tag-fallback-base"))
    assert.are.equal(a.previous_snapshot_id, b.previous_snapshot_id)
    assert.are.equal(3, b.snapshot_id)
    out, err, code = table_maint("replace-tag", path2, {"tag=missing"})
    assert.are.equal(1, code)
    assert.matches("tag 'missing' doesn't exist", err, 1, true)
    H.rmdir(dir)
    H.rmdir(dir2)
  end)
end)

describe("create_tag from a watermark (Java create_tag_from_watermark)", function()
  -- snapshots 1..5: none, Long.MIN_VALUE (also "none"), 100, none, 300
  local function watermarked()
    local path, dir = H.copy_table(H.fixture(FIX))
    local wm = {false, "-9223372036854775808", "100", false, "300"}
    for id = 1, 5 do set_watermark(path .. "/snapshot/snapshot-" .. id, wm[id] or nil) end
    return path, dir, assert(paimon.open(path))
  end

  it("takes the earliest snapshot whose watermark is >= W (SnapshotManager.laterOrEqualWatermark)", function()
    local _, dir, t = watermarked()
    local cases = {{50, 3}, {100, 3}, {101, 5}, {150, 5}, {300, 5}}
    for i, c in ipairs(cases) do
      local r = assert(t:create_tag("w" .. i, {watermark = c[1]}))
      assert.are.equal(c[2], r.snapshot_id, "watermark " .. c[1])
      assert.is_number(r.watermark)
    end
    local r, msg, code = t:create_tag("late", {watermark = 301})
    assert.is_nil(r)
    assert.are.equal("notfound", code)
    assert.matches("could not find any snapshot whose watermark is later than 301", msg, 1, true)
    t:close()
    H.rmdir(dir)
  end)

  it("prefers the first tag (by snapshot) whose watermark is >= W and below the snapshot's", function()
    local path, dir, t = watermarked()
    -- tag fallback-base holds snapshot 2: give its copy watermark 200
    set_watermark(path .. "/tag/tag-fallback-base", "200")
    local r = assert(t:create_tag("a", {watermark = 150}))
    assert.are.equal(2, r.snapshot_id)   -- the tag's 200 is below snapshot 5's 300
    assert.are.equal(200, r.watermark)
    r = assert(t:create_tag("b", {watermark = 250}))
    assert.are.equal(5, r.snapshot_id)   -- the tag's 200 is below W
    r = assert(t:create_tag("c", {watermark = 50}))
    assert.are.equal(3, r.snapshot_id)   -- the first tag >= W (200) is not below 100: the snapshot stays
    -- the tag file is the tag's snapshot JSON (Java's field order: watermark before nextRowId)
    local text = H.read_file(path .. "/tag/tag-a")
    assert.matches('"id" : 2,', text, 1, true)
    assert.matches('"watermark" : 200,\n  "nextRowId" : 0\n}$', text)
    t:close()
    H.rmdir(dir)
  end)

  it("tag.lua create --watermark and paimon_create_tag watermark=W agree; one selector at a time", function()
    local path, dir, t = watermarked()
    t:close()
    local out, err, code = H.script("tag.lua", {path, "create", "x", "--watermark", "120", "--json"})
    assert.are.equal(0, code, err)
    assert.are.equal(5, H.decode(out).snapshot_id)
    out, err, code = table_maint("create-tag", path, {"tag=y", "watermark=120"})
    assert.are.equal(0, code, err)
    assert.are.equal(5, H.decode(out).snapshot_id)
    assert.are.equal(H.read_file(path .. "/tag/tag-x"), H.read_file(path .. "/tag/tag-y"))
    _, err, code = table_maint("create-tag", path, {"tag=z", "watermark=120", "snapshot=1"})
    assert.are.equal(2, code)
    assert.matches("give one of a snapshot, a timestamp or a watermark", err, 1, true)
    H.rmdir(dir)
  end)
end)

describe("rename_branch (Java FileSystemBranchManager.renameBranch)", function()
  it("moves every file of the branch byte for byte; the old name is gone; data files untouched", function()
    local path, dir, t = copy()
    local old = path .. "/branch/branch-fallback"
    local files = {"schema/schema-0", "snapshot/snapshot-2", "tag/tag-fallback-base"}
    local bytes = {}
    for i, f in ipairs(files) do bytes[i] = H.read_file(old .. "/" .. f) end
    local before = data_files(path)
    local r = assert(t:rename_branch("fallback", "renamed"))
    assert.are.equal(3, r.files)
    for i, f in ipairs(files) do assert.are.equal(bytes[i], H.read_file(path .. "/branch/branch-renamed/" .. f)) end
    assert.is_false(H.is_dir(old))
    assert.are.same({"renamed"}, t:branches())
    assert.are.equal(before, data_files(path))
    local b = assert(paimon.open(path, {branch = "renamed"}))
    assert.are.equal(2, b:latest_snapshot().id)
    b:close()
    local out, err, code = H.script("verify.lua", {path, "--all-snapshots"})
    assert.are.equal(0, code, out .. err)
    t:close()
    H.rmdir(dir)
  end)

  it("refuses main, a missing branch, an existing target, a bad name; a dry run changes nothing", function()
    local path, dir, t = copy()
    assert(t:create_branch("other"))
    local tree = H.tree(path)
    assert.has_error(function() t:rename_branch("main", "x") end, "Cannot rename the main branch.")
    assert.has_error(function() t:rename_branch("fallback", "123") end)
    assert.has_error(function() t:rename_branch("fallback", "main") end)
    local r, msg, code = t:rename_branch("nope", "x")
    assert.is_nil(r)
    assert.are.equal("notfound", code)
    assert.matches("Branch name 'nope' doesn't exist", msg, 1, true)
    r, msg, code = t:rename_branch("fallback", "other")
    assert.is_nil(r)
    assert.are.equal("exists", code)
    assert.matches("Branch name 'other' already exists", msg, 1, true)
    r = assert(t:rename_branch("fallback", "x", {dry_run = true}))
    assert.are.equal(3, #r.moved_paths)
    assert.are.equal(tree, H.tree(path))
    t:close()
    -- the script: an existing target is a conflict (exit 3), as for create
    H.refuses_unchanged(path, function(a) return H.script("branch.lua", a) end, {path, "rename", "fallback", "other"},
                        3, "already exists")
    -- the branch the handle is opened on cannot be renamed under it
    local b = assert(paimon.open(path, {branch = "fallback"}))
    assert.has_error(function() b:rename_branch("fallback", "y") end)
    b:close()
    H.rmdir(dir)
  end)

  it("branch.lua rename and paimon_rename_branch leave the same tree", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    local _, err, code = H.script("branch.lua", {path, "rename", "fallback", "fb"})
    assert.are.equal(0, code, err)
    local path2, dir2 = H.copy_table(H.fixture(FIX))
    _, err, code = table_maint("rename-branch", path2, {"branch=fallback", "new-name=fb"})
    assert.are.equal(0, code, err)
    assert.are.equal(H.tree(path), H.tree(path2))
    H.rmdir(dir)
    H.rmdir(dir2)
  end)
end)

describe("clear_consumers (Java ConsumerManager.clearConsumers)", function()
  local IDS = {"job-1", "job-2", "keep-1", "other"}
  local function with_consumers()
    local path, dir, t = copy()
    for _, id in ipairs(IDS) do assert(t:reset_consumer(id, 3)) end
    return path, dir, t
  end
  local function ids(t)
    local v = {}
    for _, c in ipairs(assert(t:consumers())) do v[#v + 1] = c.consumer_id end
    table.sort(v)
    return v
  end

  it("matches include and exclude against the whole id; no include clears all", function()
    local _, dir, t = with_consumers()
    local r = assert(t:clear_consumers{include = "job-.*|keep-[0-9]+", exclude = "keep-1", dry_run = true})
    assert.are.same({"job-1", "job-2"}, r.cleared)
    assert.are.equal(2, r.kept)
    assert.are.same(IDS, ids(t))                      -- dry run
    r = assert(t:clear_consumers{include = "job"})    -- a whole-id match: "job" matches none
    assert.are.equal(0, r.count)
    r = assert(t:clear_consumers{include = "job-.", exclude = "  "})   -- blank exclude: none excluded
    assert.are.same({"job-1", "job-2"}, r.cleared)
    assert.are.same({"keep-1", "other"}, ids(t))
    r = assert(t:clear_consumers{exclude = "other"})
    assert.are.same({"keep-1"}, r.cleared)
    assert.are.same({"other"}, ids(t))
    assert.has_error(function() t:clear_consumers{include = "("} end)
    t:close()
    H.rmdir(dir)
  end)

  it("clears a consumer whose file cannot be read (Java does not read them either)", function()
    local path, dir, t = with_consumers()
    H.write_file(path .. "/consumer/consumer-job-1", "{ not json")
    local r = assert(t:clear_consumers{include = "job-1"})
    assert.are.same({"job-1"}, r.cleared)
    assert.is_false(H.exists(path .. "/consumer/consumer-job-1"))
    t:close()
    H.rmdir(dir)
  end)

  it("consumer.lua clear and paimon_clear_consumers agree", function()
    local path, dir, t = with_consumers()
    t:close()
    local out, err, code = H.script("consumer.lua", {path, "clear", "--include", "job-.*", "--json"})
    assert.are.equal(0, code, err)
    assert.are.same({"job-1", "job-2"}, H.decode(out).cleared)
    out, err, code = table_maint("clear-consumers", path, {"exclude=keep-.*"})
    assert.are.equal(0, code, err)
    assert.are.same({"other"}, H.decode(out).cleared)
    _, err, code = H.script("consumer.lua", {path, "list", "--include", "x"})
    assert.are.equal(2, code)
    assert.matches("--include and --exclude go with clear", err, 1, true)
    H.rmdir(dir)
  end)
end)

describe("mark_partition_done (Java's partition.mark-done-action)", function()
  local function with_action(path, action)
    local f = path .. "/schema/schema-0"
    local text = H.read_file(f):gsub('"options" : {', '"options" : {\n    "partition.mark-done-action" : "' .. action .. '",', 1)
    H.write_file(f, text)
  end

  it("success-file writes Java's SuccessFile JSON; marking again keeps creationTime", function()
    local path, dir, t = copy()
    local r = assert(t:mark_partition_done({{pt = 1}, {pt = 3}}, {now = 1000}))
    assert.are.equal("success-file", r.action)
    assert.are.equal(2, r.count)
    assert.are.equal("pt=1/", r.partitions[1].partition)
    assert.is_true(r.partitions[1].created)
    assert.are.equal('{\n  "creationTime" : 1000,\n  "modificationTime" : 1000\n}', H.read_file(path .. "/pt=1/_SUCCESS"))
    -- pt=3 holds no data: Java writes the directory and the file all the same
    assert.is_true(H.exists(path .. "/pt=3/_SUCCESS"))
    r = assert(t:mark_partition_done({pt = 1}, {now = 2500}))
    assert.is_false(r.partitions[1].created)
    assert.are.equal('{\n  "creationTime" : 1000,\n  "modificationTime" : 2500\n}', H.read_file(path .. "/pt=1/_SUCCESS"))
    -- a dry run writes nothing
    local tree = H.tree(path)
    r = assert(t:mark_partition_done({pt = 2}, {dry_run = true}))
    assert.are.equal(1, r.count)
    assert.are.equal(tree, H.tree(path))
    -- the table reads and verifies as before; orphan cleaning (Java lists bucket
    -- directories only) keeps _SUCCESS files
    os.execute("touch -d 2020-01-01 " .. H.sh_quote(path .. "/pt=1/_SUCCESS"))
    assert(t:remove_orphan_files{older_than = "1d"})
    assert.is_true(H.exists(path .. "/pt=1/_SUCCESS"))
    local out, err, code = H.script("verify.lua", {path, "--all-snapshots"})
    assert.are.equal(0, code, out .. err)
    t:close()
    H.rmdir(dir)
  end)

  it("checks values against the key types and refuses what is no partition, writing nothing", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    local run = function(a) return H.script("mark_partition_done.lua", a) end
    H.refuses_unchanged(path, run, {path, "--partition", "pt=x"}, 2, "'x' is not a value of partition key 'pt' (INT)")
    H.refuses_unchanged(path, run, {path, "--partition", "nope=1"}, 2, "'nope' is not a partition column")
    H.refuses_unchanged(path, run, {path}, 2, "missing --partition")
    -- an unreadable _SUCCESS fails naming it, before anything is written
    H.write_file(path .. "/pt=1/_SUCCESS", "garbage")
    H.refuses_unchanged(path, run, {path, "--partition", "pt=2", "--partition", "pt=1"}, 1, "pt=1/_SUCCESS: not a success file")
    H.rmdir(dir)
    -- two partition keys: rendered in key order; a later key alone is refused
    local two = "cpp-parquet-pk_table_with_alter_table"
    path, dir = H.copy_table(H.fixture(two))
    local t = assert(paimon.open(path))
    local keys = t:schema().partition_keys
    assert.are.same({"key0", "key1"}, keys)
    local r = assert(t:mark_partition_done({key1 = "1", key0 = "0"}, {dry_run = true}))
    assert.are.equal("key0=0/key1=1/", r.partitions[1].partition)
    r = assert(t:mark_partition_done({key0 = "0"}, {dry_run = true}))
    assert.are.equal("key0=0/", r.partitions[1].partition)
    -- misuse raises, as every Lua method's
    local ok, msg = pcall(t.mark_partition_done, t, {key1 = "1"})
    assert.is_false(ok)
    assert.matches("not 'key0'", msg, 1, true)
    t:close()
    H.rmdir(dir)
  end)

  it("done-partition, mark-event, http-report, custom: not supported (exit 2), nothing written", function()
    for _, action in ipairs{"done-partition", "mark-event", "success-file,http-report", "CUSTOM"} do
      local path, dir = H.copy_table(H.fixture(FIX))
      with_action(path, action)
      local want = action:lower():gsub("success%-file,", "")
      H.refuses_unchanged(path, function(a) return H.script("mark_partition_done.lua", a) end,
                          {path, "--partition", "pt=1"}, 2, "partition.mark-done-action '" .. want .. "' is not supported")
      H.rmdir(dir)
    end
    local path, dir = H.copy_table(H.fixture(FIX))
    with_action(path, "sucess-file")
    H.refuses_unchanged(path, function(a) return H.script("mark_partition_done.lua", a) end,
                        {path, "--partition", "pt=1"}, 2, "'sucess-file' is not one of success-file")
    H.rmdir(dir)
    -- success_file (Java's enum name) is success-file
    path, dir = H.copy_table(H.fixture(FIX))
    with_action(path, "SUCCESS_FILE")
    local _, err, code = H.script("mark_partition_done.lua", {path, "--partition", "pt=1"})
    assert.are.equal(0, code, err)
    H.rmdir(dir)
  end)

  it("mark_partition_done.lua and paimon_mark_partition_done write the same files", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    local out, err, code = H.script("mark_partition_done.lua", {path, "--partition", "pt=1", "--json"})
    assert.are.equal(0, code, err)
    local a = H.decode(out)
    local path2, dir2 = H.copy_table(H.fixture(FIX))
    out, err, code = table_maint("mark-done", path2, {"partition=pt=1"})
    assert.are.equal(0, code, err)
    local b = H.decode(out)
    assert.are.equal(a.partitions[1].partition, b.partitions[1].partition)
    assert.matches('^{\n  "creationTime" : %d+,\n  "modificationTime" : %d+\n}$', H.read_file(path2 .. "/pt=1/_SUCCESS"))
    H.rmdir(dir)
    H.rmdir(dir2)
  end)
end)

describe("resty.paimon (inline): the issue 23 procedures", function()
  it("replace_tag, create_tag watermark, rename_branch, clear_consumers, mark_partition_done", function()
    local rp = require "resty.paimon"
    local path, dir = H.copy_table(H.fixture(FIX))
    local r = assert(rp.replace_tag(path, "fallback-base", {snapshot = 3}))
    assert.are.equal(2, r.previous_snapshot_id)
    local _, _, code = rp.replace_tag(path, "missing")
    assert.are.equal("notfound", code)
    set_watermark(path .. "/snapshot/snapshot-5", "77")
    assert.are.equal(5, assert(rp.create_tag(path, "w", {watermark = 10})).snapshot_id)
    r = assert(rp.rename_branch(path, "fallback", "fb", {dry_run = true}))
    assert.are.equal(3, r.files)
    assert(rp.rename_branch(path, "fallback", "fb"))
    assert.are.same({"fb"}, assert(rp.branches(path)))
    assert(rp.reset_consumer(path, "c1", 3))
    assert(rp.reset_consumer(path, "c2", 3))
    r = assert(rp.clear_consumers(path, {include = "c.", exclude = "c2"}))
    assert.are.same({"c1"}, r.cleared)
    r = assert(rp.mark_partition_done(path, {{pt = 1}}, {dry_run = true}))
    assert.are.equal("pt=1/", r.partitions[1].partition)
    assert.is_false(H.exists(path .. "/pt=1/_SUCCESS"))
    assert(rp.mark_partition_done(path, {pt = 1}))
    assert.is_true(H.exists(path .. "/pt=1/_SUCCESS"))
    assert.has_error(function() rp.clear_consumers(path, {includ = "x"}) end)
    assert.has_error(function() rp.rename_branch(path, "fb", 7) end)
    H.rmdir(dir)
  end)
end)

describe("TagManager.validateNoAutoTag on create and replace", function()
  it("refuses an automatic tag name on a snapshot that already has an automatic tag", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    local f = path .. "/schema/schema-0"
    H.write_file(f, (H.read_file(f):gsub('"options" : {', '"options" : {\n    "tag.automatic-creation" : "process-time",', 1)))
    local t = assert(paimon.open(path))
    assert(t:create_tag("2024-01-01", {snapshot = 3}))
    assert(t:create_tag("manual", {snapshot = 3}))      -- not an automatic name: allowed
    local r, msg = t:create_tag("2024-01-02", {snapshot = 3})
    assert.is_nil(r)
    assert.matches("snapshot 3 is already auto-tagged with '2024-01-01'", msg, 1, true)
    -- Java counts the tag being replaced too
    r, msg = t:replace_tag("2024-01-01", {snapshot = 3})
    assert.is_nil(r)
    assert.matches("already auto-tagged", msg, 1, true)
    assert(t:replace_tag("2024-01-01", {snapshot = 4}))
    assert(t:create_tag("2024-01-02", {snapshot = 3}))
    t:close()
    H.rmdir(dir)
  end)
end)

describe("rename_branch through a URI FileIO (pmtest://, the object-store stand-in)", function()
  it("moves the branch with FileIO operations only", function()
    local dir = H.tmpdir()
    assert(H.run("mkdir " .. H.sh_quote(dir .. "/bk") .. " && cp -R " .. H.sh_quote(H.fixture(FIX)) .. " " ..
                 H.sh_quote(dir .. "/bk/t")))
    local before = H.tree(dir .. "/bk/t/branch/branch-fallback")
    local _, err, rc = H.script("branch.lua", {"pmtest://bk/t", "rename", "fallback", "moved", "--option",
                                               "pmtest.root=" .. dir})
    assert.are.equal(0, rc, err)
    assert.are.equal(before, H.tree(dir .. "/bk/t/branch/branch-moved"))
    assert.is_false(H.exists(dir .. "/bk/t/branch/branch-fallback/schema/schema-0"))
    local out
    out, err, rc = H.script("branch.lua", {"pmtest://bk/t", "list", "--json", "--option", "pmtest.root=" .. dir})
    assert.are.equal(0, rc, err)
    assert.are.equal("moved", H.decode(out).branches[1].name)
    H.rmdir(dir)
  end)
end)
