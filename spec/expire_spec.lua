-- Snapshot expiration: every Java-written fixture expired down to its latest
-- snapshot on a temp copy, checked with the independent python3-avro reader
-- (spec/support/pyref.py): what retained snapshots, tags and branches use
-- still exists, what only expired snapshots used is gone. Plus safety
-- (consumers, corrupt tags/consumers, files outside the table), dry runs,
-- policies, the CLI and the option parsers.
local H = require "helper"
local paimon = require "paimon"
local maint = require "paimon.maint"

local ORC = "cpp-parquet-append_10-orc-manifests"

local function inside(root, p) return p:sub(1, #root + 1) == root .. "/" or p:sub(1, 1) ~= "/" end

local function read_hint(root, which)
  local f = io.open(root .. "/snapshot/" .. which, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function expire_cli(args) return H.script("expire.lua", args) end

-- A table with a decoupled changelog lifecycle (issue 15): a dry run
-- shows the plan (5 snapshots) and changes nothing; a real run expires them
-- as Java's ExpireSnapshotsImpl does, writing changelog/changelog-1..5.
local function moves_to_changelog(copy)
  local before = H.tree(copy)
  local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--dry-run"})
  assert.equals(0, rc, err)
  assert.matches("would expire 5", out, 1, true)
  assert.equals(before, H.tree(copy))
  out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
  assert.equals(0, rc, err)
  local r = H.cjson.decode(out)
  assert.equals(5, r.expired)
  assert.equals(5, r.changelogs)
  for id = 1, 5 do
    assert.is_false(H.exists(copy .. "/snapshot/snapshot-" .. id))
    assert.is_true(H.exists(copy .. "/changelog/changelog-" .. id))
  end
  assert.equals("5", H.read_file(copy .. "/changelog/LATEST"))
end

describe("expire.lua on every Java fixture", function()
  for _, fx in ipairs(H.fixture_tables()) do
    if fx.name == ORC then
      it("refuses " .. fx.name .. " (ORC manifests) and changes nothing", function()
        local copy, dir = H.copy_table(fx.path)
        H.refuses_unchanged(copy, expire_cli, {copy, "--retain-min", "1", "--older-than", "0s"}, 1, "manifest.format")
        H.rmdir(dir)
      end)
    else
      it("expires " .. fx.name .. " down to its latest snapshot, keeping what is still used", function()
        local copy, dir = H.copy_table(fx.path)
        local before = H.refs(copy)
        local ids = {}
        for id in pairs(before.main.snapshots) do ids[#ids + 1] = tonumber(id) end
        table.sort(ids)
        local latest = ids[#ids]
        local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s",
                                         "--max-deletes", "1000", "--json"})
        assert.equals(0, rc, err)
        local res = H.cjson.decode(out)
        assert.equals(#ids - 1, res.expired)
        local after = H.refs(copy)
        -- only the latest snapshot is left; EARLIEST points at it
        local left = {}
        for id in pairs(after.main.snapshots) do left[#left + 1] = tonumber(id) end
        assert.same({latest}, left)
        for _, id in ipairs(ids) do
          assert.equals(id == latest, H.exists(copy .. "/snapshot/snapshot-" .. id))
        end
        if #ids > 1 then assert.equals(tostring(latest), read_hint(copy, "EARLIEST")) end
        -- every file a retained snapshot, tag or branch uses exists
        local retained = H.used_paths(after, copy)
        local n_checked = 0
        for p in pairs(retained) do
          if inside(copy, p) then
            assert.is_true(H.exists(p), "retained file deleted: " .. p)
            n_checked = n_checked + 1
          end
        end
        assert.is_true(n_checked > 0)
        -- every file only expired snapshots used is gone
        local all_before = H.used_paths(before, copy)
        local gone = 0
        for p in pairs(all_before) do
          if not retained[p] and inside(copy, p) then
            assert.is_false(H.exists(p), "file used only by expired snapshots survived: " .. p)
            gone = gone + 1
          end
        end
        local deleted = 0
        for k, n in pairs(res.deleted) do if k ~= "snapshots" then deleted = deleted + n end end
        assert.equals(gone, deleted)
        H.rmdir(dir)
      end)
    end
  end
end)

local PK = "cpp-parquet-pk_table_scan_and_read_dv"        -- 6 snapshots, deletion vectors
local TAGGED = "cpp-parquet-pk_btree_partitioned_e2e"       -- tag + branch
local EXTERNAL = "cpp-parquet-pk_dv_index_in_data_with_external"

describe("expiration safety", function()
  it("a dry run changes nothing and prints the plan", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    local before = H.tree(copy)
    local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    assert.equals(before, H.tree(copy))
    local res = H.cjson.decode(out)
    assert.is_true(res.dry_run)
    assert.equals(4, res.expired)
    assert.is_true(#res.paths > 0)
    for _, p in ipairs(res.paths) do assert.is_true(H.exists(p.path), p.path) end
    -- the same plan is what a real run deletes
    local out2, err2, rc2 = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc2, err2)
    local real = H.cjson.decode(out2)
    assert.same(res.deleted, real.deleted)
    for _, p in ipairs(res.paths) do assert.is_false(H.exists(p.path), p.path) end
    -- human dry run
    H.rmdir(dir)
    copy, dir = H.copy_table(H.fixture(PK))
    before = H.tree(copy)
    out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--dry-run"})
    assert.equals(0, rc, err)
    assert.matches("would expire 5 snapshot", out, 1, true)
    assert.matches("snapshot/snapshot-1", out, 1, true)
    assert.equals(before, H.tree(copy))
    H.rmdir(dir)
  end)

  -- issue 22 item 5: EARLIEST=3 while snapshots 1 and 2 exist left them
  -- behind for good (expiration began at the hint).
  it("a stale EARLIEST above existing snapshots: expiration takes those below it too", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    H.write_file(copy .. "/snapshot/EARLIEST", "3")
    local before = H.tree(copy)
    local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local res = H.cjson.decode(out)
    assert.equals(5, res.expired)
    assert.same({1, 5}, res.range)
    local planned = {}
    for _, p in ipairs(res.paths) do planned[p.path] = true end
    assert.is_true(planned[copy .. "/snapshot/snapshot-1"])
    assert.is_true(planned[copy .. "/snapshot/snapshot-2"])
    out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--dry-run"})
    assert.equals(0, rc, err)
    assert.matches("would expire 5 snapshot(s): 1..5", out, 1, true)
    assert.equals(before, H.tree(copy))
    out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    assert.equals(5, H.cjson.decode(out).expired)
    for id = 1, 5 do assert.is_false(H.exists(copy .. "/snapshot/snapshot-" .. id), "snapshot-" .. id) end
    assert.equals("6", read_hint(copy, "EARLIEST"))
    assert.equals(6, assert(paimon.open(copy)):earliest_snapshot().id)
    H.rmdir(dir)
  end)

  it("consumers cap the range", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    H.write_file(copy .. "/consumer/consumer-reader", '{\n  "nextSnapshot" : 3\n}')
    local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local res = H.cjson.decode(out)
    assert.equals(2, res.expired)
    assert.equals("consumer", res.capped_by)
    assert.is_true(H.exists(copy .. "/snapshot/snapshot-3"))
    assert.is_false(H.exists(copy .. "/snapshot/snapshot-2"))
    assert.equals("3", read_hint(copy, "EARLIEST"))
    -- what snapshot 3.. use is intact
    local after = H.refs(copy)
    for p in pairs(H.used_paths(after, copy)) do assert.is_true(H.exists(p), p) end
    H.rmdir(dir)
  end)

  it("a consumer at nextSnapshot 0 stops everything and policies see it", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    -- "a" is read first: a later consumer must not replace its 0
    H.write_file(copy .. "/consumer/consumer-a", '{\n  "nextSnapshot" : 0\n}')
    H.write_file(copy .. "/consumer/consumer-b", '{\n  "nextSnapshot" : 4\n}')
    local t = assert(paimon.open(copy))
    local range = assert(t:expire_range{retain_min = 1, older_than = maint.now_ms()})
    assert.equals(0, range.consumer_min)
    assert.equals(range.earliest, range.hard_end)
    assert.equals("consumer", range.capped_by)
    t:close()
    local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    assert.equals(0, H.cjson.decode(out).expired)
    assert.is_true(H.exists(copy .. "/snapshot/snapshot-1"))
    H.rmdir(dir)
  end)

  it("refuses when a consumer file is corrupt, naming it, and deletes nothing", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    H.write_file(copy .. "/consumer/consumer-broken", '{"nextSnap')
    H.refuses_unchanged(copy, expire_cli, {copy, "--retain-min", "1", "--older-than", "0s"}, 1, "consumer-broken")
    H.rmdir(dir)
  end)

  it("refuses when the snapshot files resolve outside the table directory, and deletes nothing", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local outside = dir .. "/outside-snapshot"
    assert(os.rename(copy .. "/snapshot", outside))
    assert(os.execute("ln -s " .. H.sh_quote(outside) .. " " .. H.sh_quote(copy .. "/snapshot")))
    local out_before = H.tree(outside)
    H.refuses_unchanged(copy, expire_cli, {copy, "--retain-min", "1", "--older-than", "0s"}, 1,
                        "outside the table directory")
    assert.equals(out_before, H.tree(outside))
    H.rmdir(dir)
  end)

  it("refuses when the snapshot directory is a symlink, even one inside the table, and deletes nothing", function()
    -- the deleter never goes through a symlink: planning must refuse before
    -- any manifest goes, or snapshots would be left pointing at nothing
    local copy, dir = H.copy_table(H.fixture(PK))
    assert(os.rename(copy .. "/snapshot", copy .. "/snapdir"))
    assert(os.execute("ln -s snapdir " .. H.sh_quote(copy .. "/snapshot")))
    H.refuses_unchanged(copy, expire_cli, {copy, "--retain-min", "1", "--older-than", "0s"}, 1, "symlink")
    H.rmdir(dir)
  end)

  it("refuses when a tag file is corrupt, naming it, and deletes nothing", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    H.write_file(copy .. "/tag/tag-fallback-base", '{ "id" : 1, "schemaId" ')
    local before = H.tree(copy)
    local t = assert(paimon.open(copy))
    local r, msg, code = t:expire_snapshots{retain_min = 1, older_than = maint.now_ms(), max_deletes = 100}
    t:close()
    assert.is_nil(r)
    assert.matches("tag-fallback-base", msg, 1, true)
    assert.equals("corrupt", code)
    assert.equals(before, H.tree(copy))
    H.rmdir(dir)
  end)

  it("refuses when a tag's manifest is missing (cannot build its protection)", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    local tag = H.cjson.decode(H.read_file(copy .. "/tag/tag-fallback-base"))
    os.remove(copy .. "/manifest/" .. tag.baseManifestList)
    H.refuses_unchanged(copy, expire_cli, {copy, "--retain-min", "1", "--older-than", "0s"}, 1, "fallback-base")
    H.rmdir(dir)
  end)

  it("never deletes external files outside the table directory", function()
    H.with_lock("tmp-external", function()
    local copy, dir = H.copy_table(H.fixture(EXTERNAL))
    -- the fixture's external paths point at /tmp/external/...: put a sentinel there
    local ext = "/tmp/external/f1=10/bucket-1"
    local created = not H.exists("/tmp/external")
    local sentinels = {}
    if created then
      finally(function() os.execute("rm -rf /tmp/external") end)
      os.execute("mkdir -p " .. H.sh_quote(ext) .. " " .. H.sh_quote("/tmp/external/f1=20/bucket-0") .. " " ..
                 H.sh_quote("/tmp/external/f1=10/bucket-0") .. " " .. H.sh_quote("/tmp/external/f1=20/bucket-1"))
      local r = H.refs(copy)
      for _, b in pairs(r) do for _, paths in pairs(b.snapshots) do for _, p in ipairs(paths) do
        if p:sub(1, 14) == "/tmp/external/" then sentinels[p] = true end
      end end end
      for p in pairs(sentinels) do
        os.execute("mkdir -p " .. H.sh_quote(p:match("(.*)/")))
        H.write_file(p, "sentinel")
      end
    end
    local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local res = H.cjson.decode(out)
    assert.is_true(#res.skipped > 0)
    for _, s in ipairs(res.skipped) do assert.matches("table directory", s.message or "", 1, true) end
    if created then
      assert.is_true(next(sentinels) ~= nil)
      for p in pairs(sentinels) do assert.is_true(H.exists(p), "external file deleted: " .. p) end
      os.execute("rm -rf /tmp/external")
    end
    H.rmdir(dir)
    end)
  end)

  it("a decoupled changelog lifecycle moves expired snapshots to changelog/; a dry run prints the plan", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local sp = copy .. "/schema/schema-0"
    local s = H.read_file(sp)
    s = s:gsub('"options" : {', '"options" : {\n    "changelog.num-retained.min" : "100",', 1)
    H.write_file(sp, s)
    moves_to_changelog(copy)
    H.rmdir(dir)
  end)

  it("re-running after everything expired is a no-op; a missing EARLIEST is rewritten", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local _, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s"})
    assert.equals(0, rc, err)
    os.remove(copy .. "/snapshot/EARLIEST")
    local before = H.tree(copy)
    local out
    out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    assert.equals(0, H.cjson.decode(out).expired)
    assert.equals("6", read_hint(copy, "EARLIEST"))
    H.rmdir(dir)
  end)

  it("finishes a half-done expiration (a crash in the manifest phase)", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local full, fdir = H.copy_table(H.fixture(PK))
    local _, err, rc = expire_cli({full, "--retain-min", "1", "--older-than", "0s"})
    assert.equals(0, rc, err)
    -- the state a crash leaves: data files and index files gone, half of the lists gone
    local out
    out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local n = 0
    for _, p in ipairs(H.cjson.decode(out).paths) do
      if p.kind ~= "snapshots" and p.kind ~= "manifest_lists" then os.remove(p.path) end
      if p.kind == "manifest_lists" then
        n = n + 1
        if n % 2 == 0 then os.remove(p.path) end
      end
    end
    assert.is_true(n > 1)
    _, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s"})
    assert.equals(0, rc, err)
    assert.equals(H.tree(full), H.tree(copy))
    H.rmdir(dir)
    H.rmdir(fdir)
  end)
end)

describe("expiration limits and policies", function()
  it("follows retain-min, max-deletes and the time rule", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local out, err, rc = expire_cli({copy, "--retain-min", "4", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(2, r.expired)
    assert.same({1, 2}, r.range)
    assert.equals("retain-min", r.capped_by)
    out, err, rc = expire_cli({copy, "--retain-min", "1", "--max-deletes", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    r = H.cjson.decode(out)
    assert.equals(1, r.expired)
    assert.same({3, 3}, r.range)
    assert.equals("expire-limit", r.capped_by)
    -- snapshots written in 2025 are older than any cut-off after them, younger than one before
    out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "2000-01-01 00:00:00", "--json"})
    assert.equals(0, rc, err)
    r = H.cjson.decode(out)
    assert.equals(0, r.expired)
    assert.equals("time-retained", r.capped_by)
    -- defaults: retain-min 10 keeps everything
    out, err, rc = expire_cli({copy, "--json"})
    assert.equals(0, rc, err)
    assert.equals(0, H.cjson.decode(out).expired)
    H.rmdir(dir)
  end)

  it("the default Lua policy agrees with the core's built-in Java rule", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local t = assert(paimon.open(copy))
    local policy = require "paimon.policy.expire"
    local s1 = assert(t:snapshot(3))
    for _, cut in ipairs{s1.time_millis - 1, s1.time_millis, s1.time_millis + 1, maint.now_ms()} do
      for _, rmin in ipairs{1, 2, 5, 10} do
        local opts = {retain_min = rmin, older_than = cut, now = maint.now_ms()}
        local range = assert(t:expire_range(opts))
        local snaps = {}
        for id = range.earliest, range.latest do
          local s = t:snapshot(id)
          snaps[#snaps + 1] = {id = s.id, time_millis = s.time_millis}
        end
        local ctx = {earliest = range.earliest, latest = range.latest, retain_min = range.retain_min,
                     retain_max = range.retain_max, older_than = range.older_than, hard_end = range.hard_end}
        local e = maint.policy_end(policy(snaps, ctx), ctx)
        assert.equals(range["end"], math.min(e, range.hard_end), "cut " .. cut .. " retain_min " .. rmin)
      end
    end
    t:close()
    H.rmdir(dir)
  end)

  it("runs a policy file; only a prefix expires and the core caps it", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local pol = dir .. "/keep4.lua"
    -- keep snapshot 4 and everything after; ask for 1..3 to go
    H.write_file(pol, "return function(snaps, ctx) return {keep = {4, 5, 6}} end")
    local out, err, rc = expire_cli({copy, "--retain-min", "1", "--policy", pol, "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.same({1, 3}, r.range)
    assert.equals("4", read_hint(copy, "EARLIEST"))
    -- a greedy policy cannot remove the latest snapshot or go past retain-min
    H.write_file(pol, "return function(snaps, ctx) return {['until'] = 1000} end")
    out, err, rc = expire_cli({copy, "--retain-min", "2", "--policy", pol, "--json"})
    assert.equals(0, rc, err)
    r = H.cjson.decode(out)
    assert.same({4, 4}, r.range)
    assert.is_true(H.exists(copy .. "/snapshot/snapshot-5"))
    assert.is_true(H.exists(copy .. "/snapshot/snapshot-6"))
    H.write_file(pol, "return 42")
    local _
    _, err, rc = expire_cli({copy, "--policy", pol})
    assert.equals(2, rc)
    assert.matches("must return a function", err, 1, true)
    H.rmdir(dir)
  end)

  -- The example policies' choices on snapshots with known commit times: the
  -- six snapshots' timeMillis are rewritten (noon UTC, so the local day is
  -- the same in any zone within 12 hours of UTC).
  local function with_times(copy, times)
    for id, ms in ipairs(times) do
      local f = copy .. "/snapshot/snapshot-" .. id
      local text, n = H.read_file(f):gsub('"timeMillis" : %d+', '"timeMillis" : ' .. ms)
      assert.equals(1, n, f)
      H.write_file(f, text)
    end
  end
  local NOON, HOUR, DAY = 1764590400000, 3600000, 86400000   -- 2025-12-01T12:00Z

  it("finds a bundled policy by its name from any directory", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    with_times(copy, {NOON, NOON + 1, NOON + 2, NOON + DAY, NOON + DAY + 1, NOON + 2 * DAY})
    local function cmd(env)
      return "cd " .. H.sh_quote(dir) .. " && " .. (env or "") .. H.sh_quote(H.cli) .. " expire.lua "
             .. H.sh_quote(copy) .. " --retain-min 1 --older-than 0s --dry-run --json --policy "
    end
    local out, err, rc = H.run(cmd() .. "keep_daily.lua")
    assert.equals(0, rc, err)
    assert.same({1, 2}, H.cjson.decode(out).range)
    -- PAIMON_POLICY_PATH is searched first
    os.execute("mkdir -p " .. H.sh_quote(dir .. "/pol"))
    H.write_file(dir .. "/pol/keep_daily.lua", "return function() return {keep = {4}} end")
    out, err, rc = H.run(cmd("PAIMON_POLICY_PATH=" .. H.sh_quote(dir .. "/pol") .. " ") .. "keep_daily.lua")
    assert.equals(0, rc, err)
    assert.same({1, 3}, H.cjson.decode(out).range)
    _, err, rc = H.run(cmd() .. "no_such_policy.lua")
    assert.equals(2, rc)
    assert.matches("no_such_policy.lua", err, 1, true)
    H.rmdir(dir)
  end)

  it("one loader: every face takes every policy shape and finds a policy by name", function()
    local loader = require "paimon.policy_loader"
    local copy, dir = H.copy_table(H.fixture(PK))
    with_times(copy, {NOON, NOON + 1, NOON + 2, NOON + DAY, NOON + DAY + 1, NOON + 2 * DAY})
    -- a file returning {expire = f}: the script took only a function before
    local pol = dir .. "/tabled.lua"
    H.write_file(pol, "return {expire = function(snaps, ctx) return {keep_from = ctx.earliest + 2} end}")
    local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--dry-run", "--json",
                                     "--policy", pol})
    assert.equals(0, rc, err)
    assert.same({1, 2}, H.cjson.decode(out).range)
    -- the Table method finds a bare name in the bundled folder as the script does
    local t = assert(paimon.open(copy))
    local saved = paimon.policies_dir
    paimon.policies_dir = H.root .. "/examples/policies"
    local ok, r = pcall(t.expire_snapshots, t, {retain_min = 1, older_than = maint.now_ms(), dry_run = true,
                                                policy = "keep_daily.lua"})
    paimon.policies_dir = saved
    assert.is_true(ok, tostring(r))
    assert.same({1, 2}, r.range)
    t:close()
    -- from a stock interpreter (no paimon.policies_dir, as lua5.4, LuaJIT
    -- or OpenResty load the module) the bundled folder is found beside the
    -- module (issue 24: "cannot load policy")
    t = assert(paimon.open(copy))
    saved = paimon.policies_dir
    paimon.policies_dir = nil
    ok, r = pcall(t.expire_snapshots, t, {retain_min = 1, older_than = maint.now_ms(), dry_run = true,
                                          policy = "keep_daily.lua"})
    paimon.policies_dir = saved
    assert.is_true(ok, tostring(r))
    assert.same({1, 2}, r.range)
    t:close()
    -- the loader's answers for what is not a policy
    local f, msg, code = loader.load(42, "expire")
    assert.is_nil(f)
    assert.equals("misuse", code)
    assert.matches("function(snapshots, ctx)", msg, 1, true)
    f, msg, code = loader.load(dir .. "/missing.lua", "partition_expire")
    assert.is_nil(f)
    assert.equals("misuse", code)
    assert.matches("missing.lua", msg, 1, true)
    H.write_file(pol, "error('broken', 0)")
    f, msg, code = loader.load(pol, "expire")
    assert.is_nil(f)
    assert.equals("error", code)
    assert.equals("policy " .. pol .. " failed: broken", msg)
    assert.is_function(loader.get({manifest_merge = print}, "manifest_merge"))
    H.rmdir(dir)
  end)

  it("runs the example policies and expires exactly what they choose", function()
    local cases = {
      -- last of each day kept (3, 5, 6): expiration stops at 3
      {"keep_daily.lua", {NOON, NOON + 1, NOON + 2, NOON + DAY, NOON + DAY + 1, NOON + 2 * DAY}, {1, 2}},
      -- newest 2 of each hour kept (4, 5 of the first hour; 6): stops at 4
      {"keep_per_hour.lua", {NOON, NOON + 1, NOON + 2, NOON + 3, NOON + 4, NOON + HOUR}, {1, 3}},
      -- one snapshot per day: all kept but retain-min decides nothing; stops at 1
      {"keep_daily.lua", {NOON, NOON + DAY, NOON + 2 * DAY, NOON + 3 * DAY, NOON + 4 * DAY, NOON + 5 * DAY}, nil},
    }
    for _, case in ipairs(cases) do
      local p, times, range = case[1], case[2], case[3]
      local copy, dir = H.copy_table(H.fixture(PK))
      with_times(copy, times)
      local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--dry-run",
                                       "--policy", H.root .. "/examples/policies/" .. p, "--json"})
      assert.equals(0, rc, p .. ": " .. err)
      local r = H.cjson.decode(out)
      assert.equals(range and range[2] - range[1] + 1 or 0, r.expired, p)
      if range then assert.same(range, r.range, p) else assert.is_nil(r.range, p) end
      H.rmdir(dir)
    end
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

describe("snapshot.expire.limit and consumer.changelog-only as Java reads them", function()
  it("expiration's default limit is the one t:option reports (Java's 50)", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local t = assert(paimon.open(copy))
    local range = assert(t:expire_range{retain_min = 1, older_than = maint.now_ms()})
    assert.equals(tonumber(t:option("snapshot.expire.limit")), range.max_deletes)
    assert.equals(50, range.max_deletes)
    t:close()
    H.rmdir(dir)
  end)

  for _, limit in ipairs{"0", "-3"} do
    it("snapshot.expire.limit=" .. limit .. " expires nothing (Java's min(end, earliest + limit))", function()
      local copy, dir = H.copy_table(H.fixture(PK))
      with_options(copy, {{"snapshot.expire.limit", limit}})
      local before = H.tree(copy)
      local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
      assert.equals(0, rc, err)
      local r = H.cjson.decode(out)
      assert.equals(0, r.expired)
      assert.equals("expire-limit", r.capped_by)
      assert.equals(before, H.tree(copy))
      -- an explicit --max-deletes still overrides the table's option
      out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--max-deletes", "2", "--json"})
      assert.equals(0, rc, err)
      assert.equals(2, H.cjson.decode(out).expired)
      H.rmdir(dir)
    end)
  end

  it("consumer.changelog-only without a decoupled changelog: consumers still protect snapshots", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    with_options(copy, {{"consumer.changelog-only", "true"}})
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    H.write_file(copy .. "/consumer/consumer-reader", '{\n  "nextSnapshot" : 3\n}')
    local out, err, rc = expire_cli({copy, "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(2, r.expired)
    assert.equals("consumer", r.capped_by)
    assert.is_true(H.exists(copy .. "/snapshot/snapshot-3"))
    H.rmdir(dir)
  end)

  it("consumer.changelog-only with a decoupled changelog: consumers do not cap snapshot expiration", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    with_options(copy, {{"consumer.changelog-only", "true"}, {"changelog.num-retained.min", "100"}})
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/consumer"))
    H.write_file(copy .. "/consumer/consumer-reader", '{\n  "nextSnapshot" : 3\n}')
    local t = assert(paimon.open(copy))
    local range = assert(t:expire_range{retain_min = 1, older_than = maint.now_ms()})
    assert.equals("retain-min", range.capped_by)
    t:close()
    moves_to_changelog(copy)
    H.rmdir(dir)
  end)
end)

describe("Table:expire_snapshots", function()
  it("returns the result table and reports progress", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local t = assert(paimon.open(copy))
    local phases = {}
    local r = assert(t:expire_snapshots{retain_min = 2, older_than = maint.now_ms(), threads = 3, dry_run = true,
                                        progress = function(phase, done, total) phases[phase] = total end})
    assert.equals(4, r.expired)
    assert.same({1, 4}, r.range)
    assert.is_true(r.dry_run)
    assert.equals(4, r.deleted.snapshots)
    assert.is_true(r.bytes.snapshots > 0)
    assert.equals(#r.paths, r.files)
    assert.same({}, r.failures)
    assert.is_number(r.duration_ms)
    assert.equals(4, phases.snapshots)
    r = assert(t:expire_snapshots{retain_min = 2, older_than = maint.now_ms()})
    assert.equals(4, r.expired)
    assert.is_nil(r.paths)
    assert.equals(5, t:earliest_snapshot().id)
    -- nothing left to do
    r = assert(t:expire_snapshots{retain_min = 2, older_than = maint.now_ms()})
    assert.equals(0, r.expired)
    assert.is_nil(r.range)
    -- misuse raises
    assert.has_error(function() t:expire_snapshots{retain_min = 0} end)
    assert.has_error(function() t:expire_snapshots{older_than = maint.now_ms() + 3600000} end)
    assert.has_error(function() t:expire_snapshots{threads = "many"} end)
    t:close()
    H.rmdir(dir)
  end)

  -- the policy example of docs/maintenance.md, as printed there
  local function documented_policy()
    local doc = H.read_file(H.root .. "/docs/maintenance.md")
    local code = doc:match("### Policies.-```lua\n(.-)```")
    assert(code, "no lua example under ### Policies")
    local chunk = assert(load(code, "=maintenance.md"))
    return chunk(), code
  end

  it("honours a policy (function, {expire = f}, file) as expire.lua --policy does", function()
    local copy, dir = H.copy_table(H.fixture(PK))
    local t = assert(paimon.open(copy))
    local base = {retain_min = 2, older_than = maint.now_ms(), dry_run = true}
    local function with(extra)
      local o = {}
      for k, v in pairs(base) do o[k] = v end
      for k, v in pairs(extra) do o[k] = v end
      return o
    end
    assert.equals(4, assert(t:expire_snapshots(with{})).expired)   -- Java's rule alone
    local seen
    local mine = function(snaps, ctx)
      seen = {n = #snaps, earliest = ctx.earliest, latest = ctx.latest, hard_end = ctx.hard_end}
      return {keep_from = ctx.earliest + 1, reason = "mine"}
    end
    local r = assert(t:expire_snapshots(with{policy = mine}))
    assert.equals(1, r.expired)
    assert.same({1, 1}, r.range)
    assert.equals("mine", r.capped_by)
    assert.same({n = 6, earliest = 1, latest = 6, hard_end = 5}, seen)
    r = assert(t:expire_snapshots(with{policy = {expire = mine}}))
    assert.equals(1, r.expired)
    -- the old answer name still works
    r = assert(t:expire_snapshots(with{policy = function(_, ctx) return {["until"] = ctx.earliest + 2} end}))
    assert.equals(2, r.expired)
    -- the documented example compiles and runs, from a file too
    local pol, code = documented_policy()
    r = assert(t:expire_snapshots(with{policy = pol}))
    assert.equals(3, r.expired)                                         -- keeps 4, 5, 6
    assert.equals("keep-last-3", r.capped_by)
    local file = dir .. "/keep_last_3.lua"
    H.write_file(file, code)
    assert.equals(3, assert(t:expire_snapshots(with{policy = file})).expired)
    local out, err, rc = expire_cli({copy, "--retain-min", "2", "--policy", file, "--dry-run", "--json"})
    assert.equals(0, rc, err)
    assert.equals(3, H.decode(out).expired)
    -- a greedy policy is still capped by the core (retain_min)
    r = assert(t:expire_snapshots(with{policy = function() return {keep_from = 1000} end}))
    assert.equals(4, r.expired)
    -- misuse raises
    assert.has_error(function() t:expire_snapshots(with{policy = 42}) end)
    assert.has_error(function() t:expire_snapshots(with{policy = mine, keep_from = 3}) end)
    local ok, perr = pcall(t.expire_snapshots, t, with{policy = function() error("boom", 0) end})
    assert.is_false(ok)
    assert.equals("policy failed: boom", perr)
    assert.has_error(function() t:expire_snapshots(with{policy = dir .. "/missing.lua"}) end)
    -- for real: the policy's choice is what goes
    r = assert(t:expire_snapshots{retain_min = 2, older_than = maint.now_ms(),
                                  policy = function(_, ctx) return {keep_from = ctx.earliest + 2} end})
    assert.equals(2, r.expired)
    assert.equals(3, t:earliest_snapshot().id)
    t:close()
    H.rmdir(dir)
  end)
end)

describe("expire.lua command line", function()
  it("prints help and rejects bad arguments with exit code 2", function()
    local out, _, rc = expire_cli({"--help"})
    assert.equals(0, rc)
    assert.matches("--retain-min", out, 1, true)
    local copy, dir = H.copy_table(H.fixture(PK))
    local before = H.tree(copy)
    for _, args in ipairs{{"--retain-min", "0"}, {"--older-than", "2999-01-01 00:00:00"}, {"--older-than", "soon"},
                          {"--retain-min", "5", "--retain-max", "2"}, {"--bogus"}, {"--threads", "0"}} do
      local all = {copy}
      for _, a in ipairs(args) do all[#all + 1] = a end
      local _, err
      _, err, rc = expire_cli(all)
      assert.equals(2, rc, table.concat(args, " ") .. ": " .. err)
    end
    assert.equals(before, H.tree(copy))
    local _, err
    _, err, rc = expire_cli({dir .. "/nope"})
    assert.equals(1, rc)
    assert.matches("nope", err, 1, true)
    H.rmdir(dir)
  end)

  it("expires a branch", function()
    local copy, dir = H.copy_table(H.fixture("cpp-parquet-append_table_with_append_pt_branch"))
    local before = H.refs(copy)
    local out, err, rc = expire_cli({copy, "--branch", "test", "--retain-min", "1", "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local after = H.refs(copy)
    assert.same(before.main, after.main)
    for p in pairs(H.used_paths(after, copy)) do assert.is_true(H.exists(p), p) end
    local n = 0
    for _ in pairs(after.test.snapshots) do n = n + 1 end
    assert.equals(1, n)
    -- the branch had 2 snapshots; retain-min 1 expires the older one
    assert.equals(1, H.cjson.decode(out).expired)
    H.rmdir(dir)
  end)
end)

describe("paimon.maint parsers", function()
  it("parses durations", function()
    assert.equals(90000, maint.parse_duration("90s"))
    assert.equals(1800000, maint.parse_duration("30m"))
    assert.equals(1800000, maint.parse_duration("30 min"))
    assert.equals(3600000, maint.parse_duration("1h"))
    assert.equals(7 * 86400000, maint.parse_duration("7d"))
    assert.equals(0, maint.parse_duration("0s"))
    assert.equals(100, maint.parse_duration("100ms"))
    assert.is_nil(maint.parse_duration("7x"))
    -- one parser: the core's (Java's TimeUtils syntax), everywhere
    local core = require "paimon.core"
    for _, d in ipairs{"30 secs", "2 minutes", "1500 micros", "3 DAYS", "15", "7x", "30 mins", "-1h", " 5 \194\181s ",
                       "20000000000000000ns", "0007 d", "1 h x", "90sec", "1e3ms"} do
      local want = core.parse_duration_ms(d)
      assert.equals(want, maint.parse_duration(d), d)
      assert.equals(want, require("resty.paimon").parse_duration_ms(d), d)
    end
    assert.is_nil(maint.parse_duration("-1h"))
    -- a huge duration never wraps around into a small (or negative) one
    assert.is_nil(maint.parse_duration("9000000000000000000d"))
    assert.is_nil(maint.parse_duration("106751991167301d"))
    assert.equals(104249991 * 86400000, maint.parse_duration("104249991d"))
  end)

  it("parses timestamps (local time without a zone)", function()
    assert.equals(0, maint.parse_timestamp("1970-01-01T00:00:00Z"))
    assert.equals(1704067200000, maint.parse_timestamp("2024-01-01T00:00:00Z"))
    assert.equals(1704067200123, maint.parse_timestamp("2024-01-01T00:00:00.123Z"))
    assert.equals(1704067200000 - 3600000, maint.parse_timestamp("2024-01-01T00:00:00+01:00"))
    local lt = os.time{year = 2024, month = 1, day = 2, hour = 3, min = 4, sec = 5} * 1000
    assert.equals(lt, maint.parse_timestamp("2024-01-02 03:04:05"))
    assert.equals(lt, maint.parse_timestamp("2024-01-02T03:04:05"))
    assert.is_nil(maint.parse_timestamp("2024-13-01 00:00:00"))
    -- impossible dates and times are refused, not normalised
    assert.is_nil(maint.parse_timestamp("2026-02-31 00:00:00"))
    assert.is_nil(maint.parse_timestamp("2026-02-29T00:00:00Z"))
    assert.is_nil(maint.parse_timestamp("2026-04-31"))
    assert.is_nil(maint.parse_timestamp("2026-01-01 10:00:60"))
    assert.equals(1709164800000, maint.parse_timestamp("2024-02-29T00:00:00Z"))
    assert.is_nil(maint.parse_timestamp("yesterday"))
  end)
end)

describe("empty data directories (Java's cleanEmptyDataDirectory)", function()
  local core = require "paimon.core"
  local create_table = paimon.create_table or core.create_table

  local is_dir = H.is_dir

  -- two partition levels, three partitions with one data file each
  local function make(path)
    local t = assert(create_table(path, {fields = {{name = "id", type = "BIGINT"}, {name = "dt", type = "STRING"},
                                                   {name = "hr", type = "INT"}},
                                         partition_keys = {"dt", "hr"}, options = {["file.format"] = "avro", bucket = -1}}))
    for i, p in ipairs({{"a", 1}, {"a", 2}, {"b", 1}}) do
      local w = assert(t:new_write{})
      w:write{id = i, dt = p[1], hr = p[2]}
      local msgs = assert(w:prepare_commit())
      w:close()
      assert(t:new_commit{commit_user = "dirs"}:commit(msgs))
    end
    return t
  end

  local function expire_all(t, dry, clean)
    os.execute("sleep 0.05")
    return assert(t:expire_snapshots{retain_min = 1, older_than = core.now_ms(), max_deletes = 1000, dry_run = dry,
                                     clean_empty_directories = clean})
  end

  it("expiration leaves them by default (snapshot.clean-empty-directories is false)", function()
    local dir = H.tmpdir()
    local path = dir .. "/t"
    local t = make(path)
    assert(t:drop_partitions({dt = "a"}))
    local r = expire_all(t)
    assert.equals(2, r.deleted.data_files)
    assert.equals(0, r.directories)
    assert.is_true(is_dir(path .. "/dt=a/hr=1/bucket-0"))
    -- the table option turns it on (expire.lua reads it through the core)
    H.run("sed -i 's/\"options\" : {/\"options\" : {\"snapshot.clean-empty-directories\" : \"true\", /' " ..
          H.sh_quote(path .. "/schema/schema-0"))
    assert.truthy(H.read_file(path .. "/schema/schema-0"):match('"snapshot.clean%-empty%-directories" : "true"'))
    assert(paimon.open(path):drop_partitions({dt = "b"}))
    local out, err, rc = H.script("expire.lua", {path, "--retain-min", "1", "--older-than", "1ms", "--json"})
    assert.equals(0, rc, err)
    assert.equals(3, H.cjson.decode(out).directories)
    assert.is_false(is_dir(path .. "/dt=b"))
    assert.is_true(is_dir(path .. "/dt=a/hr=1/bucket-0"))   -- emptied by an earlier run: left as it was
    H.rmdir(dir)
  end)

  it("expiration removes the bucket and partition directories it emptied, nothing else", function()
    local dir = H.tmpdir()
    local path = dir .. "/t"
    local t = make(path)
    assert(t:drop_partitions({dt = "a", hr = 1}))
    assert.equals(0, expire_all(t, true, true).directories)
    assert.is_true(is_dir(path .. "/dt=a/hr=1/bucket-0"))
    local r = expire_all(t, false, true)
    assert.equals(1, r.deleted.data_files)
    assert.equals(2, r.directories)
    assert.is_false(is_dir(path .. "/dt=a/hr=1"))
    assert.is_true(is_dir(path .. "/dt=a/hr=2/bucket-0"))     -- still has its file
    assert.is_true(is_dir(path .. "/dt=b/hr=1/bucket-0"))
    -- the last partition under dt=a: its directory goes too, the table directory stays
    assert(t:drop_partitions({dt = "a"}))
    local out, err, rc = H.script("expire.lua", {path, "--retain-min", "1", "--older-than", "1ms", "--json",
                                                 "--clean-empty-directories"})
    assert.equals(0, rc, err)
    assert.equals(3, H.cjson.decode(out).directories)
    assert.is_false(is_dir(path .. "/dt=a"))
    assert.is_true(is_dir(path .. "/dt=b/hr=1/bucket-0"))
    assert.is_true(is_dir(path .. "/snapshot"))
    assert.equals(1, #H.pyref_json(path, "files"))
    H.rmdir(dir)
  end)

  it("orphan cleaning removes the directories it emptied; a directory with anything else in it stays", function()
    local dir = H.tmpdir()
    local path = dir .. "/t"
    make(path)
    local orphan = "data-11111111-2222-3333-4444-555555555555-0.avro"
    H.run("mkdir -p " .. H.sh_quote(path .. "/dt=z/hr=9/bucket-0") .. " " .. H.sh_quote(path .. "/dt=y/hr=1/bucket-0"))
    H.write_file(path .. "/dt=z/hr=9/bucket-0/" .. orphan, "x")
    H.write_file(path .. "/dt=y/hr=1/bucket-0/" .. orphan, "x")
    H.write_file(path .. "/dt=y/hr=1/bucket-0/notes.txt", "not Paimon's: never deleted")
    H.run("touch -d '2 days ago' " .. H.sh_quote(path .. "/dt=z/hr=9/bucket-0/" .. orphan) .. " " ..
          H.sh_quote(path .. "/dt=y/hr=1/bucket-0/" .. orphan))
    local out, err, rc = H.script("remove_orphan_files.lua", {path, "--dry-run", "--json"})
    assert.equals(0, rc, err)
    assert.equals(0, H.cjson.decode(out).directories)
    assert.is_true(is_dir(path .. "/dt=z/hr=9/bucket-0"))
    out, err, rc = H.script("remove_orphan_files.lua", {path, "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(2, r.deleted.data_files)
    assert.equals(3, r.directories)
    assert.is_false(is_dir(path .. "/dt=z"))
    assert.is_true(H.exists(path .. "/dt=y/hr=1/bucket-0/notes.txt"))
    for _, p in ipairs({{"a", 1}, {"a", 2}, {"b", 1}}) do
      assert.is_true(is_dir(path .. "/dt=" .. p[1] .. "/hr=" .. p[2] .. "/bucket-0"))
    end
    -- the human report says so
    H.run("mkdir -p " .. H.sh_quote(path .. "/dt=x/hr=1/bucket-0"))
    H.write_file(path .. "/dt=x/hr=1/bucket-0/" .. orphan, "x")
    H.run("touch -d '2 days ago' " .. H.sh_quote(path .. "/dt=x/hr=1/bucket-0/" .. orphan))
    out, err, rc = H.script("remove_orphan_files.lua", {path})
    assert.equals(0, rc, err)
    assert.truthy(out:match("removed 3 empty data directories"), out)
    assert.is_false(is_dir(path .. "/dt=x"))
    H.rmdir(dir)
  end)
end)

describe("what a policy makes expiration read", function()
  it("reads the snapshots a policy may expire, the later ones only when asked", function()
    local runner = require "paimon.expire"
    local copy, dir = H.copy_table(H.fixture(PK))
    local t = assert(paimon.open(copy))
    -- counts the snapshot files the runner reads through the table
    local reads = {}
    local counted = setmetatable({}, {__index = function(_, k)
      if k == "snapshot" then
        return function(_, id) reads[#reads + 1] = id; return t:snapshot(id) end
      end
      return function(_, ...) return t[k](t, ...) end
    end})
    local range = assert(t:expire_range{retain_min = 1, max_deletes = 2, older_than = maint.now_ms()})
    assert.same({1, 6, 3}, {range.earliest, range.latest, range.hard_end})
    local seen
    local stop = runner.ask(counted, range, function(snaps, ctx)
      seen = {n = #snaps, first = snaps[1].id, last = snaps[#snaps].id, t2 = snaps[2].time_millis}
      return {keep_from = ctx.hard_end}
    end)
    assert.equals(3, stop)
    -- every existing snapshot is there, but only [earliest, hard_end] was read
    assert.same({n = 6, first = 1, last = 6, t2 = t:snapshot(2).time_millis}, seen)
    assert.same({1, 2, 3}, reads)
    -- a later snapshot's fields are read on first use, once, and are the file's
    local latest
    runner.ask(counted, range, function(snaps)
      latest = {snaps[6].time_millis, snaps[6].commit_kind, snaps[6].time_millis}
      return 1
    end)
    local s6 = t:snapshot(6)
    assert.same({s6.time_millis, s6.commit_kind, s6.time_millis}, latest)
    assert.same({1, 2, 3, 1, 2, 3, 6}, reads)
    t:close()
    H.rmdir(dir)
  end)
end)
