-- Tags: create / rename / delete / expire (Java TagManager.createTag,
-- renameTag, deleteTag, TagTimeExpire; TagAutoCreation's
-- tag.num-retained-max) on copies of the Java-written fixture with a tag and
-- a branch; deletions checked with the independent reader (spec/support).
local H = require "helper"
local paimon = require "paimon"

local FIX = "cpp-parquet-pk_btree_partitioned_e2e"
local DAY = 86400000

local function copy()
  local path, dir = H.copy_table(H.fixture(FIX))
  return path, dir, assert(paimon.open(path))
end

local function exists(p) local f = io.open(p, "rb"); if f then f:close() end; return f ~= nil end

-- Expire every snapshot but the latest: what only tags hold stays for them.
local function expire_all(t)
  assert(t:expire_snapshots{retain_min = 1, older_than = require("paimon.core").now_ms(), max_deletes = 100})
end

describe("tags", function()
  it("writes the tag file byte for byte as Java (tag-fallback-base is snapshot 2, no retention)", function()
    local path, dir, t = copy()
    local r = assert(t:create_tag("again", {snapshot = 2}))
    assert.are.equal(2, r.snapshot_id)
    assert.are.equal(H.read_file(path .. "/tag/tag-fallback-base"), H.read_file(path .. "/tag/tag-again"))
    -- with a retention: Jackson's LocalDateTime array and Duration seconds
    local now = 1767323045123   -- 2026-01-02 03:04:05.123 UTC
    r = assert(t:create_tag("kept", {snapshot = 2, time_retained = "1d", now = now}))
    local text = H.read_file(path .. "/tag/tag-kept")
    local base = H.read_file(path .. "/tag/tag-fallback-base")
    assert.are.equal(base:sub(1, -3), text:sub(1, #base - 2))
    -- Java's LocalDateTime.now(): the local wall clock of that instant
    local l = os.date("*t", 1767323045)
    local want = string.format('"tagCreateTime" : [ %d, %d, %d, %d, %d, 5, 123000000 ],\n  "tagTimeRetained" : 86400.000000000\n}',
                               l.year, l.month, l.day, l.hour, l.min)
    assert.are.equal(want, text:sub(-#want))
    H.rmdir(dir)
  end)

  it("creates from a timestamp (the latest snapshot at or before it) and refuses a second create", function()
    local _, dir, t = copy()
    local s3 = t:snapshot(3)
    local r = assert(t:create_tag("ts", {timestamp = s3.time_millis}))
    assert.are.equal(3, r.snapshot_id)
    r = assert(t:create_tag("ts2", {timestamp = s3.time_millis - 1}))
    assert.are.equal(2, r.snapshot_id)
    local ok, msg, code = t:create_tag("ts", {snapshot = 1})
    assert.is_nil(ok)
    assert.are.equal("exists", code)
    assert.truthy(msg:find("already exists", 1, true))
    assert.are.equal(3, t:tag("ts").id)
    assert.has_error(function() t:create_tag("  ", {}) end)
    assert.has_error(function() t:create_tag("a/b", {}) end)
    H.rmdir(dir)
  end)

  it("renames without replacing", function()
    local path, dir, t = copy()
    local before = H.read_file(path .. "/tag/tag-fallback-base")
    assert(t:rename_tag("fallback-base", "base2"))
    assert.is_false(exists(path .. "/tag/tag-fallback-base"))
    assert.are.equal(before, H.read_file(path .. "/tag/tag-base2"))
    assert(t:create_tag("other", {snapshot = 1}))
    local ok, _, code = t:rename_tag("base2", "other")
    assert.is_nil(ok)
    assert.are.equal("exists", code)
    assert.is_true(exists(path .. "/tag/tag-base2"))
    H.rmdir(dir)
  end)

  it("deletes only what the tag alone held; the dry run plans the same", function()
    local path, dir, t = copy()
    assert(t:create_tag("t1", {snapshot = 1}))
    expire_all(t)
    local before = H.used_paths(H.refs(path), path)
    local plan = assert(t:delete_tags({"t1"}, {dry_run = true}))
    assert.is_true(exists(path .. "/tag/tag-t1"))
    local r = assert(t:delete_tags({"t1"}))
    assert.is_false(exists(path .. "/tag/tag-t1"))
    assert.is_true(r.files > 0)
    assert.are.equal(plan.files, r.files)
    local planned = {}
    for _, p in ipairs(plan.paths) do planned[p.path] = true end
    local after = H.used_paths(H.refs(path), path)
    for p in pairs(after) do assert.is_true(exists(p), p .. " is still needed") end
    local gone = 0
    for p in pairs(before) do
      if not after[p] and p:match("%.parquet$") then
        assert.is_false(exists(p), p .. " only t1 held")
        assert.is_true(planned[p], p .. " not in the plan")
        gone = gone + 1
      end
    end
    assert.is_true(gone > 0)
    assert.is_true(assert(t:verify()).ok)
    H.rmdir(dir)
  end)

  it("keeps what a snapshot, another tag of the same snapshot or a branch needs", function()
    local path, dir, t = copy()
    assert(t:create_tag("same", {snapshot = 2}))   -- fallback-base is snapshot 2 too
    local fp = H.fingerprint(path)
    local r = assert(t:delete_tags({"same"}))
    assert.are.equal(1, r.deleted.tags)         -- the tag file, and nothing it held
    assert.are.equal(1, r.files)
    expire_all(t)
    fp = H.fingerprint(path)
    r = assert(t:delete_tags({"fallback-base"}, {dry_run = true}))
    assert.are.equal(fp, H.fingerprint(path))
    -- tag "same" (snapshot 2) still holds every file of fallback-base:
    -- only its tag file is planned
    assert.are.equal(1, r.files)
    assert.are.equal(1, r.deleted.tags)
    H.rmdir(dir)
  end)

  it("fails closed when a manifest of a retained snapshot cannot be read", function()
    local path, dir, t = copy()
    assert(t:create_tag("t1", {snapshot = 1}))
    expire_all(t)
    local latest = t:snapshot(t:snapshot_ids()[#t:snapshot_ids()])
    H.write_file(path .. "/manifest/" .. latest.base_manifest_list, "garbage")
    local fp = H.fingerprint(path)
    local ok, msg = t:delete_tags({"t1"})
    assert.is_nil(ok)
    assert.truthy(msg:find(latest.base_manifest_list, 1, true), msg)
    assert.are.equal(fp, H.fingerprint(path))
    H.rmdir(dir)
  end)

  it("expires by time retained and by tag.num-retained-max (auto tags only)", function()
    local path, dir, t = copy()
    local now = require("paimon.core").now_ms()
    assert(t:create_tag("short", {snapshot = 3, time_retained = "1h", now = now - 2 * 3600000}))
    assert(t:create_tag("long", {snapshot = 3, time_retained = "7d", now = now - 2 * 3600000}))
    local r = assert(t:expire_tags{now = now})
    assert.are.same({"short"}, r.tags)
    assert.is_false(exists(path .. "/tag/tag-short"))
    assert.is_true(exists(path .. "/tag/tag-long"))
    assert.is_true(exists(path .. "/tag/tag-fallback-base"))   -- no retention: Java keeps it
    -- num-retained-max: only when automatic creation is on, only auto tags
    for i, name in ipairs{"2026-01-01", "2026-01-02", "2026-01-03"} do assert(t:create_tag(name, {snapshot = i + 2})) end
    r = assert(t:expire_tags{now = now, num_retained_max = 1, dry_run = true})
    assert.are.same({}, r.tags)
    H.run("sed -i 's/\"options\" : {/\"options\" : { \"tag.automatic-creation\" : \"process-time\",/' " ..
          H.sh_quote(path .. "/schema/schema-0"))
    t = assert(paimon.open(path))
    r = assert(t:expire_tags{now = now, num_retained_max = 1})
    assert.are.same({"2026-01-01", "2026-01-02"}, r.tags)
    assert.is_true(exists(path .. "/tag/tag-2026-01-03"))
    assert.is_true(exists(path .. "/tag/tag-long"))
    H.rmdir(dir)
  end)

  it("asks a policy: the default is Java's rule; the example keeps monthly tags", function()
    local path, dir, t = copy()
    local now = require("paimon.core").now_ms()
    assert(t:create_tag("short", {snapshot = 3, time_retained = "1h", now = now - 2 * 3600000}))
    local java = assert(t:expire_tags{now = now, dry_run = true})
    local pol = assert(t:expire_tags{now = now, dry_run = true, policy = H.root .. "/lua/paimon/policy/tag_expire.lua"})
    assert.are.same(java.tags, pol.tags)
    assert(t:create_tag("2020-01-01", {snapshot = 3}))
    assert(t:create_tag("2020-01-02", {snapshot = 4}))
    local r = assert(t:expire_tags{now = now, policy = H.root .. "/examples/policies/tags_daily_monthly.lua"})
    table.sort(r.tags)
    assert.are.same({"2020-01-02", "short"}, r.tags)
    assert.is_true(exists(path .. "/tag/tag-2020-01-01"))
    H.rmdir(dir)
  end)
end)

describe("tag.lua", function()
  it("creates, refuses a second create with exit 3, lists, deletes", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    local _, err, rc = H.script("tag.lua", {path, "create", "cli", "--snapshot", "1"})
    assert.are.equal(0, rc, err)
    _, err, rc = H.script("tag.lua", {path, "create", "cli"})
    assert.are.equal(3, rc, err)
    local out
    out, err, rc = H.script("tag.lua", {path, "list", "--json"})
    assert.are.equal(0, rc, err)
    assert.truthy(out:find('"cli"', 1, true))
    _, err, rc = H.script("tag.lua", {path, "delete", "cli", "--dry-run"})
    assert.are.equal(0, rc, err)
    assert.is_true(exists(path .. "/tag/tag-cli"))
    _, err, rc = H.script("tag.lua", {path, "delete", "cli"})
    assert.are.equal(0, rc, err)
    assert.is_false(exists(path .. "/tag/tag-cli"))
    _, _, rc = H.script("tag.lua", {path, "frob"})
    assert.are.equal(2, rc)
    H.rmdir(dir)
  end)
end)

describe("tag deletion without a branch", function()
  -- no branch shares the files here: only the latest snapshot and the other
  -- tag protect what the deleted tags held
  for _, fix in ipairs{"cpp-parquet-pk_table_scan_and_read_dv", "cpp-parquet-append_table_row_tracking_with_compact"} do
    it("keeps what the latest snapshot and another tag need (" .. fix .. ")", function()
      local path, dir = H.copy_table(H.fixture(fix))
      local t = assert(paimon.open(path))
      local ids = t:snapshot_ids()
      assert(t:create_tag("first", {snapshot = ids[1]}))
      assert(t:create_tag("second", {snapshot = ids[2]}))
      expire_all(t)
      local before = H.used_paths(H.refs(path), path)
      local r = assert(t:delete_tags({"first"}))
      local after = H.used_paths(H.refs(path), path)
      for p in pairs(after) do assert.is_true(exists(p), p .. " is still needed") end
      local gone = 0
      for p in pairs(before) do
        if not after[p] then gone = gone + 1 end
      end
      assert.are.equal(r.files - r.deleted.tags, gone)   -- the tag file is no used path
      assert.are.equal(1, r.deleted.tags)
      assert.is_true(assert(t:verify()).ok)
      H.rmdir(dir)
    end)
  end
end)

describe("resty.paimon tags (inline)", function()
  it("creates, lists, renames, plans a delete and an expiry, refuses unknown options", function()
    local rp = require "resty.paimon"
    local path, dir = H.copy_table(H.fixture(FIX))
    assert.are.equal(1, assert(rp.create_tag(path, "r1", {snapshot = 1})).snapshot_id)
    local names = {}
    for _, x in ipairs(assert(rp.tags(path))) do names[#names + 1] = x.name end
    assert.are.same({"fallback-base", "r1"}, names)
    assert.are.equal("r2", assert(rp.rename_tag(path, "r1", "r2")).to)
    assert.are.equal(1, assert(rp.delete_tags(path, {"r2"}, {dry_run = true})).deleted_tags)
    assert.is_true(exists(path .. "/tag/tag-r2"))
    local r = assert(rp.expire_tags(path, {dry_run = true, policy = function() return {"r2"} end}))
    assert.are.same({"r2"}, r.tags)
    assert.has_error(function() rp.create_tag(path, "x", {snap = 1}) end)
    local ok, _, code = rp.create_tag(path, "r2")
    assert.is_nil(ok)
    assert.are.equal("exists", code)
    H.rmdir(dir)
  end)
end)

-- Issue 24: one unreadable tag blocked everything. It is now a row with its
-- error in the listings; expiration and tag deletion refuse naming the way
-- out; `tag.lua T delete NAME --force` removes the tag file alone.
describe("an unreadable tag", function()
  it("is listed with its error, named by every refusal, and removed alone with --force", function()
    local path, dir = H.copy_table(H.fixture(FIX))
    H.write_file(path .. "/tag/tag-broken", "garbage")
    local rows = H.inspect_json(path, "tags")
    local broken, good = nil, 0
    for _, r in ipairs(rows) do
      if r.tag_name == "broken" then broken = r elseif r.error == H.cjson.null then good = good + 1 end
    end
    assert.truthy(broken)
    assert.matches("tag-broken: invalid JSON", broken.error, 1, true)
    assert.is_true(good > 0)
    local out, err, rc = H.paimon_lua({"tag.lua", path, "list", "--json"})
    assert.equals(0, rc, err)
    assert.matches('"error":"[^"]*tag%-broken: invalid JSON', out)
    local fp = H.fingerprint(path)
    _, err, rc = H.paimon_lua({"expire.lua", path, "--retain-min", "1", "--older-than", "1ms"})
    assert.equals(1, rc)
    assert.matches("tag.lua TABLE delete broken --force removes the tag file alone", err, 1, true)
    _, err, rc = H.paimon_lua({"tag.lua", path, "delete", "broken"})
    assert.equals(1, rc)
    assert.matches("--force removes the tag file alone", err, 1, true)
    assert.equals(fp, H.fingerprint(path))
    out, err, rc = H.paimon_lua({"tag.lua", path, "delete", "broken", "--force", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    assert.equals(1, H.decode(out).deleted.tags)
    assert.equals(fp, H.fingerprint(path))
    out, err, rc = H.paimon_lua({"tag.lua", path, "delete", "broken", "--force", "--json"})
    assert.equals(0, rc, err)
    assert.equals(1, H.decode(out).deleted.tags)
    assert.equals(1, H.decode(out).files)          -- the tag file alone
    assert.is_false(exists(path .. "/tag/tag-broken"))
    _, err, rc = H.paimon_lua({"expire.lua", path, "--retain-min", "1", "--older-than", "1ms"})
    assert.equals(0, rc, err)
    _, err, rc = H.paimon_lua({"tag.lua", path, "expire", "--force"})
    assert.equals(2, rc, err)                       -- --force goes with delete only
    H.rmdir(dir)
  end)
end)
