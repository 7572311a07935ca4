-- Rollback (Java RollbackHelper.cleanLargerThan, FileStoreTable.rollbackTo,
-- the rollback_to / rollback_to_timestamp / rollback_to_as_latest
-- procedures) and consumers (ConsumerManager) on temp copies of the
-- Java-written fixtures, checked with the independent reader
-- spec/support/pyref.py: afterwards the table reads exactly as the target
-- did, what stays is complete (verify, every branch and tag), a dry run's
-- plan is the real run's deletions.
local H = require "helper"
local paimon = require "paimon"
local maint = require "paimon.maint"

local ORC = "cpp-parquet-append_10-orc-manifests"
local PK = "cpp-parquet-pk_btree_partitioned_e2e"     -- 5 snapshots, tag fallback-base at 2, branch fallback

local function files_view(copy, extra)
  local v = H.pyref_json(copy, "files", extra)
  local out = {}
  for _, f in ipairs(v) do
    out[#out + 1] = string.format("%s|%d|%d|%s|%d", f.file_path, f.bucket, f.level, f.file_name, f.record_count)
  end
  table.sort(out)
  return table.concat(out, "\n")
end

local function snapshot_ids(copy)
  local ids = {}
  for _, s in ipairs(H.pyref_json(copy, "snapshots")) do ids[#ids + 1] = maint.toint(s.snapshot_id) end
  table.sort(ids)
  return ids
end

-- The file names in the table's tag/ directory, sorted.
local function tag_files(copy)
  local v = {}
  for name in pairs(H.file_set(copy .. "/tag")) do v[#v + 1] = name end
  table.sort(v)
  return v
end

local function hint(copy, which) return H.read_file(copy .. "/snapshot/" .. which) end

local function missing_set(copy)
  local t = assert(paimon.open(copy))
  local v = assert(t:verify{all_snapshots = true})
  t:close()
  local set = {}
  for _, m in ipairs(v.missing) do set[m.path] = true end
  assert.equals(0, #v.wrong_size + #v.unreadable)
  return set
end

-- Everything every retained snapshot, tag and branch needs exists (besides
-- files already missing before: one fixture's external data path is not
-- on this machine).
local function verify_ok(copy, missing_before)
  for p in pairs(missing_set(copy)) do
    assert.is_true(missing_before and missing_before[p] or false, "missing after the rollback: " .. p)
  end
end

local function rollback_cli(args) return H.script("rollback.lua", args) end
local function consumer_cli(args) return H.script("consumer.lua", args) end

-- Every file path the dry run planned, as a sorted list.
local function plan_paths(r)
  local v = {}
  for _, p in ipairs(r.paths) do v[#v + 1] = p.kind .. " " .. p.path end
  table.sort(v)
  return table.concat(v, "\n")
end

local function removed_files(before, after)
  local gone = {}
  for line in before:gmatch("[^\n]+") do
    local path = line:match("^(%S+)")
    if not after:find(path, 1, true) then gone[#gone + 1] = path end
  end
  return gone
end

describe("rollback to a snapshot on every Java fixture", function()
  for _, fx in ipairs(H.fixture_tables()) do
    if fx.name ~= ORC then
      it(fx.name .. ": --purge-files reads as the target, later snapshots gone, dry run = real run", function()
        local copy, dir = H.copy_table(fx.path)
        local ids = snapshot_ids(copy)
        assert.is_true(#ids >= 1)
        if #ids < 2 then H.rmdir(dir) return end
        local target = ids[#ids - 1]
        local want = files_view(copy, {"--snapshot", string.format("%d", target)})
        local before = H.tree(copy)
        local missing = missing_set(copy)
        local t = assert(paimon.open(copy))
        -- --purge-files: the files only the removed snapshot used go too
        local plan = assert(t:rollback{to_snapshot = target, dry_run = true, purge_files = true})
        assert.equals(before, H.tree(copy))    -- a dry run changes nothing
        local r = assert(t:rollback{to_snapshot = target, purge_files = true})
        t:close()
        assert.equals(target, r.latest)
        assert.same({ids[#ids]}, r.snapshots)
        assert.same(plan.snapshots, r.snapshots)
        assert.same(plan.deleted, r.deleted)
        -- the files the plan named are exactly those gone (besides the snapshot file)
        local after = H.tree(copy)
        local planned = {}
        for _, p in ipairs(plan.paths) do planned[p.path] = true; assert.is_false(H.exists(p.path), p.path) end
        assert.equals(want, files_view(copy))
        local kept = {}
        for i = 1, #ids - 1 do kept[i] = ids[i] end
        assert.same(kept, snapshot_ids(copy))
        assert.equals(string.format("%d", target), hint(copy, "LATEST"))
        assert.is_false(H.exists(copy .. string.format("/snapshot/snapshot-%d", ids[#ids])))
        assert.is_true(#removed_files(before, after) >= #plan.paths)
        verify_ok(copy, missing)
        H.rmdir(dir)
      end)

      it(fx.name .. ": --as-latest to the earliest snapshot reads as it and deletes nothing", function()
        local copy, dir = H.copy_table(fx.path)
        local ids = snapshot_ids(copy)
        local want = files_view(copy, {"--snapshot", string.format("%d", ids[1])})
        local before = H.file_set(copy)
        local missing = missing_set(copy)
        local t = assert(paimon.open(copy))
        if next(missing) then
          -- files the target needs are gone (an external path not on this
          -- machine): the commit refuses, nothing is published
          local tree = H.tree(copy)
          local r, msg = t:rollback{to_snapshot = ids[1], as_latest = true}
          t:close()
          assert.is_nil(r)
          assert.matches("is missing", msg, 1, true)
          assert.equals(tree, H.tree(copy))
          H.rmdir(dir)
          return
        end
        local r = assert(t:rollback{to_snapshot = ids[1], as_latest = true})
        t:close()
        assert.equals(ids[#ids] + 1, r.latest)
        assert.equals(want, files_view(copy))
        for p in pairs(before) do assert.is_true(H.exists(p) or H.exists(copy .. "/" .. p), p) end
        verify_ok(copy, missing)
        H.rmdir(dir)
      end)
    end
  end
end)

describe("rollback on the tagged and branched fixture", function()
  it("--purge-files to snapshot 1: tags above go, the branch keeps every file it needs", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    -- a second tag above the target (Java writes the snapshot JSON + tag fields)
    H.write_file(copy .. "/tag/tag-t4", H.read_file(copy .. "/snapshot/snapshot-4"))
    local want = files_view(copy, {"--snapshot", "1"})
    local branch_before = files_view(copy, {"--branch", "fallback"})
    local out, err, rc = rollback_cli({copy, "--to-snapshot", "1", "--purge-files", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.same({5, 4, 3, 2}, r.snapshots)
    table.sort(r.tags)
    assert.same({"fallback-base", "t4"}, r.tags)
    assert.is_false(H.exists(copy .. "/tag/tag-t4"))
    assert.is_false(H.exists(copy .. "/tag/tag-fallback-base"))
    assert.equals(want, files_view(copy))
    assert.equals(branch_before, files_view(copy, {"--branch", "fallback"}))
    assert.is_true(r.protected > 0)    -- the branch's files were candidates and stayed
    verify_ok(copy)
    H.rmdir(dir)
  end)

  it("to a tag: the tag stays, the table reads as it", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local want = files_view(copy, {"--tag", "fallback-base"})
    local out, err, rc = rollback_cli({copy, "--to-tag", "fallback-base", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(2, r.target)
    assert.is_false(r.recreated)
    assert.is_true(H.exists(copy .. "/tag/tag-fallback-base"))
    assert.equals(want, files_view(copy))
    assert.same({1, 2}, snapshot_ids(copy))
    verify_ok(copy)
    H.rmdir(dir)
  end)

  it("to a tag whose snapshot expired: the snapshot is written back as Java does", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local snap2 = H.read_file(copy .. "/snapshot/snapshot-2")
    local want = files_view(copy, {"--tag", "fallback-base"})
    -- snapshots 1 and 2 expired (their files stay: the tag and snapshot 3 use them)
    os.remove(copy .. "/snapshot/snapshot-1")
    os.remove(copy .. "/snapshot/snapshot-2")
    H.write_file(copy .. "/snapshot/EARLIEST", "3")
    local t = assert(paimon.open(copy))
    local plan = assert(t:rollback{to_tag = "fallback-base", dry_run = true})
    assert.is_true(plan.recreated)
    assert.is_false(H.exists(copy .. "/snapshot/snapshot-2"))
    local r = assert(t:rollback{to_tag = "fallback-base"})
    t:close()
    assert.is_true(r.recreated)
    assert.same({5, 4, 3}, r.snapshots)
    assert.same(plan.deleted, r.deleted)
    -- Tag.trimToSnapshot: byte for byte the snapshot Java wrote
    assert.equals(snap2, H.read_file(copy .. "/snapshot/snapshot-2"))
    assert.equals("2", hint(copy, "EARLIEST"))
    assert.equals("2", hint(copy, "LATEST"))
    assert.same({2}, snapshot_ids(copy))
    assert.equals(want, files_view(copy))
    verify_ok(copy)
    H.rmdir(dir)
  end)

  it("to a timestamp: the latest snapshot at or before it", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local snaps = H.pyref_json(copy, "snapshots")
    table.sort(snaps, function(a, b) return a.snapshot_id < b.snapshot_id end)
    local ts = maint.toint(snaps[3].commit_time)
    local want = files_view(copy, {"--snapshot", "3"})
    -- one millisecond before snapshot 4 still means snapshot 3
    local t4 = maint.toint(snaps[4].commit_time)
    local out, err, rc = rollback_cli({copy, "--to-timestamp", string.format("%d", t4 - 1), "--dry-run", "--json"})
    assert.equals(0, rc, err)
    assert.equals(3, H.cjson.decode(out).target)
    out, err, rc = rollback_cli({copy, "--to-timestamp", string.format("%d", ts), "--json"})
    assert.equals(0, rc, err)
    assert.equals(3, H.cjson.decode(out).target)
    assert.equals(want, files_view(copy))
    -- before the first snapshot: nothing to roll back to
    out, err, rc = rollback_cli({copy, "--to-timestamp", "1000"})
    assert.equals(1, rc)
    assert.matches("no snapshot at or before", err, 1, true)
    H.rmdir(dir)
  end)

  it("--as-latest: snapshot latest+1 with the target's content, nothing deleted", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local want = files_view(copy, {"--snapshot", "2"})
    local before = H.file_set(copy)
    local out, err, rc = rollback_cli({copy, "--to-snapshot", "2", "--as-latest", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(6, r.latest)
    assert.equals(5, r.previous_latest)
    assert.same({1, 2, 3, 4, 5, 6}, snapshot_ids(copy))
    assert.equals(want, files_view(copy))
    assert.equals(want, files_view(copy, {"--snapshot", "6"}))
    for p in pairs(before) do assert.is_true(H.exists(p) or H.exists(copy .. "/" .. p), p) end
    local s6 = H.decode(H.read_file(copy .. "/snapshot/snapshot-6"))
    assert.equals("OVERWRITE", s6.commitKind)
    verify_ok(copy)
    H.rmdir(dir)
  end)

  -- Java's RollbackToAsLatestProcedure: a target given by id is first
  -- tagged rollback-to-as-latest-<id>-<uuid> (no time retained), the
  -- commit user is rollback-to-as-latest-<uuid>; a tag target gets none.
  it("--as-latest to a snapshot id or a timestamp leaves Java's protection tag; to a tag none", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local snap2 = H.read_file(copy .. "/snapshot/snapshot-2")
    local dry = assert(H.cjson.decode((rollback_cli({copy, "--to-snapshot", "2", "--as-latest", "--dry-run", "--json"}))))
    assert.is_nil(dry.protection_tag)
    assert.same({"tag-fallback-base"}, tag_files(copy))
    local out, err, rc = rollback_cli({copy, "--to-snapshot", "2", "--as-latest", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.matches("^rollback%-to%-as%-latest%-2%-%x+%-%x+%-%x+%-%x+%-%x+$", r.protection_tag)
    assert.same({"tag-fallback-base", "tag-" .. r.protection_tag}, tag_files(copy))
    -- the target's snapshot JSON as Java's TagManager.createTag writes it without time retained
    assert.equals(snap2, H.read_file(copy .. "/tag/tag-" .. r.protection_tag))
    local s6 = H.decode(H.read_file(copy .. "/snapshot/snapshot-6"))
    assert.matches("^rollback%-to%-as%-latest%-", s6.commitUser)
    -- a timestamp target is a target by id too
    local s3 = H.decode(H.read_file(copy .. "/snapshot/snapshot-3"))
    r = H.cjson.decode((rollback_cli({copy, "--to-timestamp", string.format("%d", s3.timeMillis), "--as-latest", "--json"})))
    assert.equals(3, r.target)
    assert.matches("^rollback%-to%-as%-latest%-3%-", r.protection_tag)
    -- a tag target: the tag itself protects, no new tag
    r = H.cjson.decode((rollback_cli({copy, "--to-tag", "fallback-base", "--as-latest", "--json"})))
    assert.equals(8, r.latest)
    assert.is_nil(r.protection_tag)
    assert.equals(3, #tag_files(copy))
    verify_ok(copy)
    H.rmdir(dir)
  end)

  it("refuses bad targets with a clear error and changes nothing", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local before = H.tree(copy)
    local _, err, rc = rollback_cli({copy, "--to-snapshot", "9"})
    assert.equals(1, rc)
    assert.matches("snapshot 9 to roll back to does not exist", err, 1, true)
    _, err, rc = rollback_cli({copy, "--to-tag", "nope"})
    assert.equals(1, rc)
    assert.matches("tag 'nope' not found", err, 1, true)
    _, err, rc = rollback_cli({copy, "--to-snapshot", "2", "--to-tag", "fallback-base"})
    assert.equals(2, rc)
    _, err, rc = rollback_cli({copy})
    assert.equals(2, rc)
    -- an unreadable tag may protect files: refuse
    H.write_file(copy .. "/tag/tag-broken", "{not json")
    _, err, rc = rollback_cli({copy, "--to-snapshot", "4"})
    assert.equals(1, rc)
    assert.matches("tag 'broken'", err, 1, true)
    os.remove(copy .. "/tag/tag-broken")
    assert.equals(before, H.tree(copy))
    local t = assert(paimon.open(copy))
    assert.has_error(function() t:rollback{to_snapshot = 2, bogus = 1} end)
    assert.has_error(function() t:rollback{} end)
    t:close()
    H.rmdir(dir)
  end)

  it("counts consumers that read past the target (left as Java leaves them)", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local t = assert(paimon.open(copy))
    assert(t:reset_consumer("late", 5))
    assert(t:reset_consumer("early", 2))
    local r = assert(t:rollback{to_snapshot = 3})
    assert.equals(1, r.consumers_ahead)
    t:close()
    H.rmdir(dir)
  end)
end)

-- Table options added to schema-0 of a temp copy ({{key, value}, ...}).
local function with_options(copy, kv)
  local sp = copy .. "/schema/schema-0"
  local s = H.read_file(sp)
  for _, p in ipairs(kv) do
    s = s:gsub('"options" : {', '"options" : {\n    "' .. p[1] .. '" : "' .. p[2] .. '",', 1)
  end
  H.write_file(sp, s)
end

describe("consumers", function()
  it("reset writes Java's JSON, list shows it, delete removes it", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local out, err, rc = consumer_cli({copy, "reset", "job1", "--next-snapshot", "3"})
    assert.equals(0, rc, err)
    assert.equals('{\n  "nextSnapshot" : 3\n}', H.read_file(copy .. "/consumer/consumer-job1"))
    out, err, rc = consumer_cli({copy, "reset", "job1", "--next-snapshot", "4", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(3, r.previous)
    out, err, rc = consumer_cli({copy, "list", "--json"})
    assert.equals(0, rc, err)
    r = H.cjson.decode(out)
    assert.equals(1, r.count)
    assert.equals("job1", r.consumers[1].id)
    assert.equals(4, r.consumers[1].next_snapshot)
    out, err, rc = consumer_cli({copy, "delete", "job1"})
    assert.equals(0, rc, err)
    assert.is_false(H.exists(copy .. "/consumer/consumer-job1"))
    out, err, rc = consumer_cli({copy, "delete", "job1"})
    assert.equals(1, rc)
    assert.matches("consumer 'job1' not found", err, 1, true)
    _, _, rc = consumer_cli({copy, "reset", "job1"})
    assert.equals(2, rc)
    _, _, rc = consumer_cli({copy, "reset", "../x", "--next-snapshot", "2"})
    assert.equals(2, rc)
    _, _, rc = consumer_cli({copy, "frob"})
    assert.equals(2, rc)
    H.rmdir(dir)
  end)

  -- issue 22 item 5: a consumer id holding a newline was accepted, from the
  -- command line and from a file name.
  it("a consumer id with a control character is refused, naming the id or the file", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local out, err, rc = consumer_cli({copy, "reset", "job\n1", "--next-snapshot", "3"})
    assert.equals(2, rc, out)
    assert.matches("invalid consumer id 'job\\x0a1'", err, 1, true)
    assert.is_false(H.exists(copy .. "/consumer"))
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    H.write_file(copy .. "/consumer/consumer-job\nx", '{\n  "nextSnapshot" : 2\n}')
    local file = copy .. "/consumer/consumer-job\\x0ax: the consumer id in the file name holds a control character"
    for _, args in ipairs({{copy, "list"}, {copy, "expire", "--expiration", "1d"}}) do
      out, err, rc = consumer_cli(args)
      assert.equals(1, rc, out)
      assert.matches(file, err, 1, true)
    end
    out, err, rc = H.script("expire.lua", {copy, "--retain-min", "1", "--older-than", "0s"})
    assert.equals(1, rc, out)
    assert.matches(file, err, 1, true)
    assert.is_true(H.exists(copy .. "/snapshot/snapshot-1"))
    H.rmdir(dir)
  end)

  it("expire removes consumers not updated for the expiration (ConsumerManager.expire)", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local t = assert(paimon.open(copy))
    assert(t:reset_consumer("dead", 2))
    assert(t:reset_consumer("live", 3))
    os.execute("touch -d '3 days ago' " .. H.sh_quote(copy .. "/consumer/consumer-dead"))
    local r = assert(t:expire_consumers{expiration = "2d", dry_run = true})
    assert.equals(1, r.count)
    assert.equals("dead", r.expired[1].id)
    assert.is_true(H.exists(copy .. "/consumer/consumer-dead"))
    r = assert(t:expire_consumers{expiration = "2d"})
    assert.equals(1, r.count)
    assert.equals(1, r.kept)
    assert.is_false(H.exists(copy .. "/consumer/consumer-dead"))
    assert.is_true(H.exists(copy .. "/consumer/consumer-live"))
    -- without an expiration and without the table option: a usage error
    assert.has_error(function() t:expire_consumers{} end)
    t:close()
    H.rmdir(dir)
  end)

  it("snapshot expiration expires dead consumers first (consumer.expiration-time)", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    with_options(copy, {{"consumer.expiration-time", "1 d"}})
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    H.write_file(copy .. "/consumer/consumer-dead", '{\n  "nextSnapshot" : 2\n}')
    os.execute("touch -d '3 days ago' " .. H.sh_quote(copy .. "/consumer/consumer-dead"))
    local t = assert(paimon.open(copy))
    -- the plan already leaves the dead consumer out
    local range = assert(t:expire_range{retain_min = 1, older_than = maint.now_ms()})
    assert.equals("retain-min", range.capped_by)
    local r = assert(t:expire_snapshots{retain_min = 1, older_than = maint.now_ms()})
    assert.equals(4, r.expired)
    assert.equals(1, r.consumers_expired)
    assert.is_false(H.exists(copy .. "/consumer/consumer-dead"))
    t:close()
    H.rmdir(dir)
  end)

  it("a consumer updated within consumer.expiration-time still protects", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    with_options(copy, {{"consumer.expiration-time", "1 d"}})
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    H.write_file(copy .. "/consumer/consumer-live", '{\n  "nextSnapshot" : 3\n}')
    local t = assert(paimon.open(copy))
    local r = assert(t:expire_snapshots{retain_min = 1, older_than = maint.now_ms()})
    assert.equals(2, r.expired)
    assert.equals("consumer", r.capped_by)
    assert.equals(0, r.consumers_expired)
    assert.is_true(H.exists(copy .. "/consumer/consumer-live"))
    t:close()
    H.rmdir(dir)
  end)
end)

-- issue 23: a destructive rollback deletes only metadata (snapshots, tags,
-- long-lived changelogs above the target), as Java does since 1.2.0
-- (apache/paimon#5712, RollbackHelper.cleanLargerThan); the files only they
-- used are left for orphan cleaning. --purge-files keeps the old way.
describe("rollback modes (issue 23)", function()
  -- relative paths in a but not in b, sorted
  local function minus(a, b)
    local v = {}
    for p in pairs(a) do if not b[p] then v[#v + 1] = p end end
    table.sort(v)
    return v
  end
  local function is_meta(p)
    return p:match("^snapshot/snapshot%-%d+$") or p:match("^tag/tag%-") or p:match("^changelog/changelog%-%d+$")
  end
  local function split(paths)
    local meta, files = {}, {}
    for _, p in ipairs(paths) do
      if is_meta(p) then meta[#meta + 1] = p else files[#files + 1] = p end
    end
    return meta, files
  end
  local function rel(copy, p) return p:sub(1, #copy + 1) == copy .. "/" and p:sub(#copy + 2) or p end
  local function orphan_cli(copy, extra)
    local args = {copy, "--older-than", "0s", "--allow-young-cutoff", "--json"}
    for _, a in ipairs(extra or {}) do args[#args + 1] = a end
    local out, err, rc = H.script("remove_orphan_files.lua", args)
    assert.equals(0, rc, err)
    return H.decode(out)
  end
  -- the fixture with a second tag above the target and the files aged
  local function prepared()
    local copy, dir = H.copy_table(H.fixture(PK))
    H.write_file(copy .. "/tag/tag-t4", H.read_file(copy .. "/snapshot/snapshot-4"))
    os.execute("find " .. H.sh_quote(copy) .. " -type f -exec touch -d '2 days ago' {} +")
    return copy, dir
  end
  local META = {"snapshot/snapshot-2", "snapshot/snapshot-3", "snapshot/snapshot-4", "snapshot/snapshot-5",
                "tag/tag-fallback-base", "tag/tag-t4"}

  it("by default deletes no data, manifest or index file; orphan cleaning then removes them", function()
    -- what the old behaviour deleted: the reference
    local pcopy, pdir = prepared()
    local pbefore = H.file_set(pcopy)
    local out, err, rc = rollback_cli({pcopy, "--to-snapshot", "1", "--purge-files", "--json"})
    assert.equals(0, rc, err)
    local _, purged = split(minus(pbefore, H.file_set(pcopy)))
    assert.is_true(#purged > 0)
    -- orphans the fixture had before any rollback
    local ocopy, odir = prepared()
    local pre = {}
    for _, p in ipairs(orphan_cli(ocopy, {"--dry-run"}).paths) do pre[rel(ocopy, p.path)] = true end

    local copy, dir = prepared()
    local want = files_view(copy, {"--snapshot", "1"})
    local before = H.file_set(copy)
    out, err, rc = rollback_cli({copy, "--to-snapshot", "1", "--json"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    assert.is_false(r.purge_files)
    -- only the metadata goes, accounted by kind (issue 24: the dry run and
    -- the result count the snapshot and tag files too)
    assert.equals(#META, r.files)
    assert.equals(4, r.deleted.snapshots)
    assert.equals(2, r.deleted.tags)
    assert.same({5, 4, 3, 2}, r.snapshots)
    local gone = minus(before, H.file_set(copy))
    assert.same(META, gone)                              -- metadata only
    assert.equals("1", hint(copy, "LATEST"))
    assert.equals(want, files_view(copy))
    verify_ok(copy)
    -- orphan cleaning removes exactly what the rollback left behind
    local o = orphan_cli(copy)
    local removed = {}
    for _, p in ipairs(minus(before, H.file_set(copy))) do
      if not is_meta(p) then removed[#removed + 1] = p end
    end
    local expect = {}
    for _, p in ipairs(purged) do expect[#expect + 1] = p end
    for p in pairs(pre) do expect[#expect + 1] = p end
    table.sort(expect)
    assert.same(expect, removed)
    assert.equals(#removed, o.files)
    assert.equals(want, files_view(copy))
    verify_ok(copy)
    H.rmdir(dir); H.rmdir(pdir); H.rmdir(odir)
  end)

  it("--purge-files deletes the files only the removed roots used; the dry run lists them path by path", function()
    local copy, dir = prepared()
    local before = H.file_set(copy)
    local out, err, rc = rollback_cli({copy, "--to-snapshot", "1", "--purge-files", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local plan = H.decode(out)
    assert.is_true(plan.purge_files)
    assert.is_true(plan.dry_run)
    assert.same({}, minus(before, H.file_set(copy)))
    local planned_all = {}
    for _, p in ipairs(plan.paths) do planned_all[#planned_all + 1] = rel(copy, p.path) end
    table.sort(planned_all)
    local planned_meta, planned = split(planned_all)
    assert.same(META, planned_meta)          -- the dry run lists the metadata it removes too
    assert.is_true(#planned > 0)
    out, err, rc = rollback_cli({copy, "--to-snapshot", "1", "--purge-files", "--json"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    assert.is_true(r.purge_files)
    local meta, files = split(minus(before, H.file_set(copy)))
    assert.same(META, meta)
    assert.same(planned, files)
    assert.equals(#files + #meta, r.files)
    verify_ok(copy)
    H.rmdir(dir)
  end)

  it("says which mode ran; the plain mode points at remove_orphan_files.lua", function()
    local copy, dir = prepared()
    local out, err, rc = rollback_cli({copy, "--to-snapshot", "3", "--dry-run"})
    assert.equals(0, rc, err)
    assert.matches("metadata only", out, 1, true)
    assert.matches("remove_orphan_files.lua", out, 1, true)
    out, err, rc = rollback_cli({copy, "--to-snapshot", "3", "--dry-run", "--purge-files"})
    assert.equals(0, rc, err)
    assert.matches("--purge-files", out, 1, true)
    assert.not_matches("remove_orphan_files", out, 1, true)
    -- the Lua API and paimon.h name it too
    local t = assert(paimon.open(copy))
    assert.is_true(assert(t:rollback{to_snapshot = 3, dry_run = true, purge_files = true}).purge_files)
    assert.is_false(assert(t:rollback{to_snapshot = 3, dry_run = true}).purge_files)
    assert.has_error(function() t:rollback{to_snapshot = 3, purge_files = "yes"} end)
    t:close()
    H.rmdir(dir)
  end)
end)

-- Java's rollback_to_watermark (RollbackToWatermarkProcedure): the target is
-- SnapshotManager.earlierOrEqualWatermark(W), a binary search over the
-- snapshots from the first with a watermark (absent or Long.MIN_VALUE: none)
-- that stops at an exact match; then rollbackTo(id).
describe("rollback to a watermark (issue 23)", function()
  -- the fixture's snapshots with watermarks ({[id] = W | false})
  local function with_watermarks(marks)
    local copy, dir = H.copy_table(H.fixture(PK))
    for id, w in pairs(marks) do
      local p = copy .. "/snapshot/snapshot-" .. id
      local s = H.read_file(p)
      if w then s = s:gsub('("timeMillis" : %d+,)', '%1\n  "watermark" : ' .. w .. ',', 1) end
      H.write_file(p, s)
    end
    return copy, dir
  end
  local function target_of(copy, w)
    local out, err, rc = rollback_cli({copy, "--to-watermark", tostring(w), "--dry-run", "--json"})
    if rc ~= 0 then return nil, err, rc end
    return H.decode(out).target
  end

  it("finds the snapshot Java's earlierOrEqualWatermark finds, then rolls back to it", function()
    local copy, dir = with_watermarks({[2] = 100, [3] = 200, [4] = 200, [5] = 300})
    assert.equals(4, target_of(copy, 250))
    assert.equals(4, target_of(copy, 299))
    assert.equals(5, target_of(copy, 300))
    assert.equals(5, target_of(copy, 9000))
    assert.equals(2, target_of(copy, 100))
    assert.equals(2, target_of(copy, 150))
    -- two snapshots with the watermark: Java's search stops at the first it meets (3)
    assert.equals(3, target_of(copy, 200))
    -- below the first watermark (snapshot 1 has none): nothing to roll back to
    local _, err, rc = target_of(copy, 99)
    assert.equals(1, rc)
    assert.matches("no snapshot with a watermark at or before 99", err, 1, true)
    -- the real run: metadata only, the table reads as snapshot 4
    local want = files_view(copy, {"--snapshot", "4"})
    local out
    out, err, rc = rollback_cli({copy, "--to-watermark", "250", "--json"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    assert.equals(4, r.target)
    assert.same({5}, r.snapshots)
    assert.same({1, 2, 3, 4}, snapshot_ids(copy))
    assert.equals(want, files_view(copy))
    verify_ok(copy)
    H.rmdir(dir)
  end)

  it("a snapshot without a watermark (Long.MIN_VALUE) is never the target", function()
    local copy, dir = with_watermarks({[2] = 100, [3] = 200, [4] = "-9223372036854775808", [5] = 300})
    assert.equals(3, target_of(copy, 250))
    -- no watermark anywhere: Java's null, here a clear error
    local plain, pdir = H.copy_table(H.fixture(PK))
    local _, err, rc = target_of(plain, 1000)
    assert.equals(1, rc)
    assert.matches("no snapshot with a watermark at or before 1000", err, 1, true)
    -- the Lua API: to_watermark, exclusive with the other targets
    local t = assert(paimon.open(copy))
    assert.equals(3, assert(t:rollback{to_watermark = 250, dry_run = true}).target)
    assert.has_error(function() t:rollback{to_watermark = 250, to_snapshot = 2, dry_run = true} end,
                     "rollback: give exactly one of 'to_snapshot', 'to_tag', 'to_timestamp' or 'to_watermark'")
    local r
    -- as latest works from a watermark too (a protection tag, as for an id)
    r = assert(t:rollback{to_watermark = 150, as_latest = true})
    assert.equals(2, r.target)
    assert.equals(6, r.latest)
    assert.matches("^rollback%-to%-as%-latest%-2%-", r.protection_tag)
    t:close()
    _, _, rc = rollback_cli({copy, "--to-watermark", "x"})
    assert.equals(2, rc)
    _, _, rc = rollback_cli({copy, "--to-watermark", "5", "--to-snapshot", "2"})
    assert.equals(2, rc)
    H.rmdir(dir); H.rmdir(pdir)
  end)
end)
