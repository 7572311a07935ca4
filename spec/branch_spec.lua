-- Branches through every Lua face: t:branches / create_branch /
-- delete_branch / fast_forward, branch.lua and resty.paimon, on copies of
-- the Java-written fixture with a tag and a branch (branch-fallback, made by
-- Java's FileSystemBranchManager.createBranch(name, tag) from tag
-- fallback-base, snapshot 2). Semantics checked against Java's
-- FileSystemBranchManager: createBranch(name, tag) copies the tag, its
-- snapshot and schemas 0..its schema id; createBranch(name) the schemas
-- only; fastForward deletes main's snapshots and tags from the branch's
-- earliest snapshot on and copies the branch's snapshots, schemas and tags
-- (data files are left: Java leaves them to orphan cleaning); dropBranch
-- removes the directory; we also delete the files only the branch held,
-- checked with the independent reader (spec/support/refs.py).
local H = require "helper"
local paimon = require "paimon"
local cjson = require "cjson"

local FIX = "cpp-parquet-pk_btree_partitioned_e2e"

local function copy()
  local path, dir = H.copy_table(H.fixture(FIX))
  return path, dir, assert(paimon.open(path))
end

local function exists(p) local f = io.open(p, "rb"); if f then f:close() end; return f ~= nil end

local function script(args)
  local out, err, rc = H.script("branch.lua", args)
  return out, err, rc
end

-- Main keeps only its latest snapshot and loses its tag: snapshot 2's files
-- that main no longer needs are then held by branch-fallback alone.
local function only_the_branch_holds_snapshot_2(t)
  assert(t:expire_snapshots{retain_min = 1, older_than = require("paimon.core").now_ms(), max_deletes = 100})
  assert(t:delete_tags({"fallback-base"}))
end

describe("branches (Lua methods)", function()
  it("lists names, and details with details = true", function()
    local _, dir, t = copy()
    assert.are.same({"fallback"}, assert(t:branches()))
    local d = assert(t:branches{details = true})
    assert.are.equal(1, #d)
    assert.are.equal("fallback", d[1].name)
    assert.are.equal(2, d[1].earliest_snapshot)
    assert.are.equal(2, d[1].latest_snapshot)
    assert.are.equal(1, d[1].tags)
    assert.is_true(d[1].create_time > 0)
    assert.has_error(function() t:branches{detail = true} end, "branches: unknown option 'detail' (known: details)")
    H.rmdir(dir)
  end)

  it("creates from a tag as Java's createBranch(name, tag): the fixture's branch byte for byte", function()
    local path, dir, t = copy()
    local bdir = path .. "/branch/branch-fallback"
    local want = H.fingerprint(bdir)
    H.run("rm -rf " .. H.sh_quote(bdir))
    local plan = assert(t:create_branch("fallback", {from_tag = "fallback-base", dry_run = true}))
    assert.is_true(plan.dry_run)
    assert.is_false(exists(bdir .. "/snapshot/snapshot-2"))
    local r = assert(t:create_branch("fallback", {from_tag = "fallback-base"}))
    assert.are.equal(2, r.snapshot_id)
    assert.are.equal(plan.files, r.files)
    assert.are.equal(want, H.fingerprint(bdir))
    -- a second create never replaces: "exists"
    local ok, msg, code = t:create_branch("fallback", {from_tag = "fallback-base"})
    assert.is_nil(ok)
    assert.are.equal("exists", code)
    assert.truthy(msg:find("already exists", 1, true))
    -- without a tag: the schemas only (Java's createBranch(name))
    r = assert(t:create_branch("empty"))
    assert.are.equal(0, r.snapshot_id)
    assert.is_true(exists(path .. "/branch/branch-empty/schema/schema-0"))
    assert.is_false(H.is_dir(path .. "/branch/branch-empty/snapshot"))
    -- Java's validateBranch: main, blank and numeric names are misuse
    for _, bad in ipairs{"main", " ", "123", "a/b"} do
      assert.has_error(function() t:create_branch(bad) end)
    end
    ok, msg, code = t:create_branch("x", {from_tag = "nope"})
    assert.is_nil(ok)
    assert.are.equal("notfound", code)
    assert.truthy(msg:find("nope", 1, true))
    assert.has_error(function() t:create_branch("x", {fromtag = "fallback-base"}) end)
    H.rmdir(dir)
  end)

  it("fast-forwards main as Java's fastForward; the dry run plans it and changes nothing", function()
    local path, dir, t = copy()
    local fp = H.fingerprint(path)
    local plan = assert(t:fast_forward("fallback", {dry_run = true}))
    assert.are.equal(fp, H.fingerprint(path))
    assert.are.equal("main", plan.into)
    assert.are.same({snapshots = 4, tags = 1, schemas = 0}, plan.dropped)
    assert.are.same({path .. "/tag/tag-fallback-base", path .. "/snapshot/snapshot-5", path .. "/snapshot/snapshot-4",
                     path .. "/snapshot/snapshot-3", path .. "/snapshot/snapshot-2"}, plan.dropped_paths)
    assert.are.same({path .. "/schema/schema-0", path .. "/tag/tag-fallback-base", path .. "/snapshot/snapshot-2"},
                    plan.taken_paths)
    local r = assert(t:fast_forward("fallback"))
    assert.is_false(r.dry_run)
    assert.are.same({1, 2}, t:snapshot_ids())
    assert.are.equal(H.read_file(path .. "/branch/branch-fallback/snapshot/snapshot-2"),
                     H.read_file(path .. "/snapshot/snapshot-2"))
    assert.are.equal("2", H.read_file(path .. "/snapshot/LATEST"))
    assert.is_true(assert(t:verify()).ok)
    -- Java's checks: not main, not a missing branch
    assert.has_error(function() t:fast_forward("main") end)
    local ok, _, code = t:fast_forward("nope")
    assert.is_nil(ok)
    assert.are.equal("notfound", code)
    H.rmdir(dir)
  end)

  it("refuses to delete the branch the table is opened on", function()
    local path, dir = copy()
    local b = assert(paimon.open(path, {branch = "fallback"}))
    assert.has_error(function() b:delete_branch("fallback") end)
    assert.is_true(exists(path .. "/branch/branch-fallback/snapshot/snapshot-2"))
    H.rmdir(dir)
  end)
end)

describe("branch.lua", function()
  it("creates, refuses a second create with exit 3, lists as one JSON object, usage errors exit 2", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    local out, err, rc = script({path, "create", "dev", "--from-tag", "fallback-base"})
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("created branch dev from tag fallback-base (snapshot 2)", 1, true), out)
    _, err, rc = script({path, "create", "dev"})
    assert.are.equal(3, rc, err)
    assert.truthy(err:find("already exists", 1, true), err)
    out, err, rc = script({path, "create", "dev", "--json"})
    assert.are.equal(3, rc, err)
    assert.are.equal("exists", cjson.decode(out).code)    -- the same code as create_table's
    out, err, rc = script({path, "list", "--json"})
    assert.are.equal(0, rc, err)
    local l = cjson.decode(out)
    assert.are.equal(2, l.count)
    local names = {}
    for _, b in ipairs(l.branches) do names[b.name] = b end
    assert.are.equal(2, names.dev.latest_snapshot)
    assert.are.equal(1, names.fallback.tags)
    out, err, rc = script({path, "list"})
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("branch_name", 1, true) and out:find("dev", 1, true), out)
    for _, bad in ipairs{{path, "frob"}, {path, "create"}, {path, "delete"}, {path, "list", "x"},
                         {path, "delete", "dev", "--from-tag", "t"}, {path, "list", "--dry-run"},
                         {path, "create", "main"}, {path, "fast-forward", "main"}} do
      _, err, rc = script(bad)
      assert.are.equal(2, rc, table.concat(bad, " ") .. ": " .. err)
    end
    _, err, rc = script({path, "delete", "nope"})
    assert.are.equal(1, rc, err)
    assert.truthy(err:find("nope", 1, true), err)
    assert.is_true(exists(path .. "/branch/branch-dev/snapshot/snapshot-2"))
    H.rmdir(dir)
  end)

  it("delete: the dry run lists the files that would go; only what the branch alone held goes", function()
    local path, dir, t = copy()
    only_the_branch_holds_snapshot_2(t)
    local refs = H.refs(path)
    local main_needs = H.used_paths({main = refs.main}, path)
    local before = H.used_paths(refs, path)
    local fp = H.fingerprint(path)
    local out, err, rc = script({path, "delete", "fallback", "--dry-run", "--json"})
    assert.are.equal(0, rc, err)
    assert.are.equal(fp, H.fingerprint(path))
    local plan = cjson.decode(out)
    assert.are.same({"fallback"}, plan.branches)
    local planned = {}
    for _, p in ipairs(plan.paths) do planned[p.path] = true end
    assert.is_true(planned[path .. "/branch/branch-fallback/snapshot/snapshot-2"])
    out, err, rc = script({path, "delete", "fallback", "--json"})
    assert.are.equal(0, rc, err)
    local r = cjson.decode(out)
    assert.are.equal(plan.files, r.files)
    assert.is_false(H.is_dir(path .. "/branch/branch-fallback"))
    -- every file main still needs survives, including those it shared with the branch
    local shared, gone = 0, 0
    for p in pairs(main_needs) do
      assert.is_true(exists(p), p .. " is needed by main")
      if before[p] then shared = shared + 1 end
    end
    assert.is_true(shared > 0)
    for p in pairs(before) do
      if not main_needs[p] then
        assert.is_false(exists(p), p .. " only the branch held")
        assert.is_true(planned[p], p .. " not in the plan")
        gone = gone + 1
      end
    end
    assert.is_true(gone > 0)
    assert.is_true(assert(t:verify()).ok)
    H.rmdir(dir)
  end)

  it("delete fails closed (exit 1, nothing changed) when a manifest list main needs is unreadable", function()
    local path, dir, t = copy()
    only_the_branch_holds_snapshot_2(t)
    local ids = t:snapshot_ids()
    local latest = t:snapshot(ids[#ids])
    H.write_file(path .. "/manifest/" .. latest.base_manifest_list, "garbage")
    local fp = H.fingerprint(path)
    local _, err, rc = script({path, "delete", "fallback"})
    assert.are.equal(1, rc, err)
    assert.truthy(err:find(latest.base_manifest_list, 1, true), err)
    assert.are.equal(fp, H.fingerprint(path))
    H.rmdir(dir)
  end)

  it("fast-forward: the dry run prints the plan and changes nothing; the run gives main the branch", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    local fp = H.fingerprint(path)
    local out, err, rc = script({path, "fast-forward", "fallback", "--dry-run"})
    assert.are.equal(0, rc, err)
    assert.are.equal(fp, H.fingerprint(path))
    assert.truthy(out:find("would drop: 4 snapshot(s), 1 tag(s), 0 schema(s)", 1, true), out)
    assert.truthy(out:find("drop  " .. path .. "/snapshot/snapshot-5", 1, true), out)
    assert.truthy(out:find("take  " .. path .. "/snapshot/snapshot-2", 1, true), out)
    out, err, rc = script({path, "fast-forward", "fallback", "--json"})
    assert.are.equal(0, rc, err)
    local r = cjson.decode(out)
    assert.are.equal(2, r.latest)
    assert.is_false(exists(path .. "/snapshot/snapshot-3"))
    assert.are.equal("2", H.read_file(path .. "/snapshot/LATEST"))
    H.rmdir(dir)
  end)

  it("takes --option FileIO options (a pmtest:// table)", function()
    local dir = H.tmpdir()
    assert(H.run("mkdir " .. H.sh_quote(dir .. "/bk") .. " && cp -R " .. H.sh_quote(H.fixture(FIX)) .. " " ..
                 H.sh_quote(dir .. "/bk/t")))
    local _, err, rc = script({"pmtest://bk/t", "create", "u", "--option", "pmtest.root=" .. dir})
    assert.are.equal(0, rc, err)
    assert.is_true(exists(dir .. "/bk/t/branch/branch-u/schema/schema-0"))
    local out
    out, err, rc = script({"pmtest://bk/t", "list", "--json", "--option", "pmtest.root=" .. dir})
    assert.are.equal(0, rc, err)
    assert.are.equal(2, cjson.decode(out).count)
    _, err, rc = script({"pmtest://bk/t", "delete", "u", "--option", "pmtest.root=" .. dir})
    assert.are.equal(0, rc, err)
    assert.is_false(exists(dir .. "/bk/t/branch/branch-u/schema/schema-0"))
    _, _, rc = script({"pmtest://bk/t", "list"})
    assert.are_not.equal(0, rc)
    H.rmdir(dir)
  end)
end)

describe("resty.paimon branches (inline)", function()
  it("lists, creates, plans a delete and a fast-forward, refuses unknown options", function()
    local rp = require "resty.paimon"
    local path, dir = H.copy_table(H.fixture(FIX))
    assert.are.same({"fallback"}, assert(rp.branches(path)))
    assert.are.equal(2, assert(rp.branches(path, {details = true}))[1].latest_snapshot)
    assert.are.equal(2, assert(rp.create_branch(path, "r1", {from_tag = "fallback-base"})).snapshot_id)
    local ok, _, code = rp.create_branch(path, "r1")
    assert.is_nil(ok)
    assert.are.equal("exists", code)
    local fp = H.fingerprint(path)
    assert.are.equal(3, assert(rp.delete_branch(path, "r1", {dry_run = true})).branch_files)
    assert.are.equal(4, assert(rp.fast_forward(path, "r1", {dry_run = true})).dropped.snapshots)
    assert.are.equal(fp, H.fingerprint(path))
    assert.has_error(function() rp.delete_branch(path, "r1", {dryrun = true}) end)
    assert.has_error(function() rp.create_branch(path, 7) end)
    assert(rp.delete_branch(path, "r1"))
    assert.is_false(H.is_dir(path .. "/branch/branch-r1"))
    H.rmdir(dir)
  end)
end)
