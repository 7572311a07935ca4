-- The Lua API follows Lua's own conventions: metatables with __name,
-- __gc, __close, __tostring; misuse raises; I/O and format failures return
-- nil, message, code.
local H = require "helper"
local paimon = require "paimon"

local COMPLEX = "cpp-parquet-append_complex_data"
local BRANCHED = "cpp-parquet-append_table_with_append_pt_branch"

describe("paimon Lua API", function()
  it("opens a table and exposes schema, options and snapshots", function()
    local t = assert(paimon.open(H.fixture(COMPLEX)))
    assert.equals("paimon.Table", getmetatable(t).__name)
    assert.matches("^paimon.Table %(", tostring(t))
    local s = t:schema()
    assert.equals(0, s.id)
    assert.same({"f1"}, s.partition_keys)
    assert.equals("f1", s.fields[1].name)
    assert.equals("INT", s.fields[1].type)
    assert.equals("DECIMAL(23, 5)", s.fields[5].type)
    assert.equals("2", t:options().bucket)
    assert.equals("avro", t:option("manifest.format"))
    assert.equals("zstd", t:option("manifest.compression"))   -- a default
    assert.is_nil(t:options()["manifest.compression"])
    assert.same({1, 2, 3, 4}, t:snapshot_ids())
    local latest = assert(t:latest_snapshot())
    assert.equals(4, latest.id)
    assert.equals("COMPACT", latest.commit_kind)
    assert.equals(8, latest.total_record_count)
    assert.equals(1, assert(t:earliest_snapshot()).id)
    assert.equals("paimon.Snapshot", getmetatable(latest).__name)
    assert.equals("paimon.Snapshot 4 (COMPACT)", tostring(latest))
    local n = 0
    for s2 in t:snapshots() do n = n + 1; assert.equals(n, s2.id) end
    assert.equals(4, n)
    t:close()
  end)

  it("exposes every snapshot field in snake case", function()
    local t = assert(paimon.open(H.fixture(COMPLEX)))
    local f = assert(t:snapshot(2)):fields()
    for _, k in ipairs({"version", "id", "schema_id", "base_manifest_list", "delta_manifest_list",
                        "commit_user", "commit_identifier", "commit_kind", "time_millis",
                        "total_record_count", "delta_record_count"}) do
      assert.is_not_nil(f[k], k)
    end
    assert.equals(3, f.version)
    assert.equals(f.base_manifest_list, t:snapshot(2).base_manifest_list)
    t:close()
  end)

  it("reads each snapshot field on its own, as the file and fields() have it", function()
    local cjson = require "cjson"
    local names = {"version", "uuid", "id", "schema_id", "base_manifest_list", "base_manifest_list_size",
                   "delta_manifest_list", "delta_manifest_list_size", "changelog_manifest_list",
                   "changelog_manifest_list_size", "index_manifest", "commit_user", "writer_version",
                   "commit_identifier", "commit_kind", "time_millis", "log_offsets", "total_record_count",
                   "delta_record_count", "changelog_record_count", "watermark", "statistics", "properties",
                   "next_row_id", "operation"}
    local json_key = {id = "id", schema_id = "schemaId", base_manifest_list = "baseManifestList",
                      delta_manifest_list = "deltaManifestList", index_manifest = "indexManifest",
                      commit_user = "commitUser", commit_identifier = "commitIdentifier",
                      commit_kind = "commitKind", time_millis = "timeMillis",
                      total_record_count = "totalRecordCount", delta_record_count = "deltaRecordCount"}
    local checked, offsets = 0, 0
    for _, name in ipairs({COMPLEX, BRANCHED, "cpp-parquet-append_10-orc-manifests",
                           "cpp-parquet-pk_dv_index_in_data_with_external"}) do
      local path = H.fixture(name)
      local t = assert(paimon.open(path))
      for s in t:snapshots() do
        local f = s:fields()
        for _, k in ipairs(names) do
          if type(f[k]) == "table" then
            assert.same(f[k], s[k], k)
          else
            assert.equals(f[k], s[k], k)
          end
        end
        for k in pairs(f) do assert.is_not_nil(s[k], k) end
        local j = cjson.decode(H.read_file(path .. "/snapshot/snapshot-" .. s.id))
        for k, jk in pairs(json_key) do
          -- (cjson reads integers beyond 2^53 as doubles: those are not comparable)
          local v = j[jk]
          if v ~= nil and v ~= cjson.null and (type(v) ~= "number" or (v > -2^53 and v < 2^53)) then
            assert.equals(v, s[k], k)
          end
        end
        if type(j.logOffsets) == "table" then   -- Java <= 1.3 writes it (empty in these fixtures)
          assert.same({}, s.log_offsets)
          offsets = offsets + 1
        end
        assert.is_nil(s.no_such_field)
        assert.is_nil(s.tag)
        checked = checked + 1
      end
      t:close()
    end
    assert.is_true(checked >= 8)
    assert.is_true(offsets >= 1)
    local t = assert(paimon.open(H.fixture("cpp-parquet-pk_btree_partitioned_e2e")))
    local tagged = assert(t:tag("fallback-base"))
    assert.equals("fallback-base", tagged.tag)
    assert.equals("fallback-base", tagged:fields().tag)
    assert.is_not_nil(tagged.id)
    t:close()
  end)

  it("serializes a snapshot back to Java's exact JSON", function()
    local path = H.fixture(COMPLEX)
    local t = assert(paimon.open(path))
    for s in t:snapshots() do
      assert.equals(H.read_file(path .. "/snapshot/snapshot-" .. s.id), s:to_json())
    end
    t:close()
  end)

  it("iterates manifests, entries and live files with a partition filter", function()
    local t = assert(paimon.open(H.fixture(COMPLEX)))
    local s = assert(t:latest_snapshot())
    local metas = paimon.collect(s:manifests("base"))
    assert.is_true(#metas >= 1)
    local adds, deletes = 0, 0
    for _, m in ipairs(metas) do
      adds, deletes = adds + m.num_added_files, deletes + m.num_deleted_files
      local n_add, n_del = 0, 0
      for e in s:entries(m.file_name) do
        if e.kind == "ADD" then n_add = n_add + 1 else n_del = n_del + 1 end
        assert.is_string(e.file.file_name)
        assert.is_table(e.partition)
      end
      assert.equals(m.num_added_files, n_add)
      assert.equals(m.num_deleted_files, n_del)
    end
    local all = paimon.collect(s:files())
    local only10 = paimon.collect(s:files{partition = {f1 = 10}})
    local only20 = paimon.collect(s:files{partition = {f1 = "20"}})
    assert.equals(#all, #only10 + #only20)
    assert.is_true(#only10 >= 1 and #only20 >= 1)
    for _, f in ipairs(only10) do assert.equals(10, f.partition.f1) end
    assert.equals(0, #paimon.collect(s:files{partition = {f1 = 99}}))
    t:close()
  end)

  it("raises on misuse", function()
    local t = assert(paimon.open(H.fixture(COMPLEX)))
    assert.has_error(function() t:snapshot("x") end)
    assert.has_error(function() t.snapshot(42, 1) end)
    assert.has_error(function() paimon.open() end)
    local s = assert(t:latest_snapshot())
    assert.has_error(function() s:manifests("sideways") end)
    assert.has_error(function() s:files{partition = {nope = 1}} end) -- returns nil? see below
  end)

  it("returns nil, message, code for missing things", function()
    local t = assert(paimon.open(H.fixture(COMPLEX)))
    local s, msg, code = t:snapshot(99)
    assert.is_nil(s)
    assert.matches("99", msg)
    assert.equals("notfound", code)
    local x, m2, c2 = paimon.open("/nonexistent/table")
    assert.is_nil(x)
    assert.matches("/nonexistent/table", m2, 1, true)
    assert.equals("notfound", c2)
    local y, m3, c3 = paimon.open(H.fixture(COMPLEX), {branch = "nope"})
    assert.is_nil(y)
    assert.matches("nope", m3)
    assert.equals("notfound", c3)
    local tg, m4 = t:tag("nope")
    assert.is_nil(tg)
    assert.matches("nope", m4)
    local z, m5, c5 = paimon.open("oss://bucket/wh/db.db/t")
    assert.is_nil(z)
    assert.matches("oss", m5)
    assert.equals("unsupported", c5)
    -- s3:// has a FileIO now: a table that is not there is an I/O error naming it
    local z3, m6, c6 = paimon.open("s3://no-such-bucket-paimon/wh/db.db/t")
    assert.is_nil(z3)
    assert.matches("s3://no-such-bucket-paimon/wh/db.db/t", m6, 1, true)
    assert.is_string(c6)
  end)

  it("closes userdata once and refuses use after close", function()
    local t = assert(paimon.open(H.fixture(COMPLEX)))
    local s = assert(t:latest_snapshot())
    t:close()
    t:close()
    assert.has_error(function() t:latest_snapshot() end, "attempt to use a closed paimon.Table")
    assert.has_error(function() s:files() end)
    assert.equals("paimon.Table (closed)", tostring(t))
    -- `<close>` is Lua 5.4 syntax: compiled from a string so this file also
    -- loads under LuaJIT, where __close is called by hand instead.
    if _VERSION == "Lua 5.4" then
      local chunk = assert(load([[
        local paimon, path = ...
        local t2 <close> = assert(paimon.open(path))
        assert(t2:latest_snapshot())
        return t2]]))
      assert.equals("paimon.Table (closed)", tostring(chunk(paimon, H.fixture(COMPLEX))))
    else
      local t2 = assert(paimon.open(H.fixture(COMPLEX)))
      assert.is_not_nil(t2:latest_snapshot())
      getmetatable(t2).__close(t2)
      assert.equals("paimon.Table (closed)", tostring(t2))
    end
  end)

  it("reads branches, tags and consumers", function()
    local path = H.fixture(BRANCHED)
    local t = assert(paimon.open(path))
    local branches = assert(t:branches())
    assert.is_true(#branches >= 1)
    local b = assert(paimon.open(path, {branch = branches[1]}))
    assert.equals(branches[1], b:branch())
    assert.is_not_nil(b:latest_snapshot())
    assert.same({}, assert(t:consumers()))
    for _, tag in ipairs(assert(t:tags())) do
      assert.is_string(tag.name)
      assert.equals(tag.snapshot_id, tag.snapshot.id)
    end
    t:close(); b:close()
  end)

  it("reads index manifests", function()
    local path = H.fixture("cpp-parquet-pk_table_scan_and_read_dv")
    local t = assert(paimon.open(path))
    local found = 0
    for s in t:snapshots() do
      if s.index_manifest then
        for e in assert(s:index_entries()) do
          found = found + 1
          assert.equals("DELETION_VECTORS", e.index_type)
          assert.is_table(e.deletion_vectors_ranges)
        end
      end
    end
    assert.is_true(found > 0)
    t:close()
  end)
end)

describe("options the Lua API does not know", function()
  local SAMPLE = H.root .. "/examples/sample/warehouse/demo.db/orders"

  local function refuses(fn, typo, known)
    local ok, err = pcall(fn)
    assert.is_false(ok, "accepted " .. typo)
    err = tostring(err)
    assert.matches("unknown option '" .. typo .. "' (known: ", err, 1, true)
    assert.matches(known, err, 1, true)
  end

  it("raise in every method, naming the key and the known ones, before anything changes", function()
    local copy, dir = H.copy_table(SAMPLE)
    local before = H.fingerprint(copy)
    refuses(function() paimon.open(copy, {brnch = "dev"}) end, "brnch", "branch")
    local t = assert(paimon.open(copy))
    local now = require("paimon.core").now_ms()
    -- the issue's case: a typo of dry_run must not run a real expiration
    refuses(function() t:expire_snapshots{retain_min = 1, dryrun = true} end, "dryrun", "dry_run")
    refuses(function() t:expire_range{retain = 1} end, "retain", "retain_min")
    refuses(function() t:remove_orphan_files{older_than = now, dryrun = true} end, "dryrun", "dry_run")
    refuses(function() t:verify{all_snapshot = true} end, "all_snapshot", "all_snapshots")
    refuses(function() t:drop_partitions({dt = "2026-11-01"}, {dryrun = true}) end, "dryrun", "dry_run")
    refuses(function() t:expire_partitions{expiration_time = "1d", dryrun = true} end, "dryrun", "dry_run")
    refuses(function() t:new_write{target_file_size = 1} end, "target_file_size", "(known: none)")
    refuses(function() t:new_commit{user = "x"} end, "user", "commit_user")
    local c = assert(t:new_commit{})
    refuses(function() c:commit({}, {identifer = 1}) end, "identifer", "identifier")
    local s = assert(t:latest_snapshot())
    refuses(function() s:files{partitions = {dt = "2026-11-01"}} end, "partitions", "partition")
    refuses(function() s:read{with_files = true} end, "with_files", "with_file")
    local ok, err = pcall(t.expire_snapshots, t, {1})
    assert.is_false(ok)
    assert.matches("expire_snapshots: option names must be strings, got 1", tostring(err), 1, true)
    t:close()
    assert.equals(before, H.fingerprint(copy))
    local create = paimon.create_table
    refuses(function() create(dir .. "/new", {fields = {{name = "a", type = "INT"}}, partitionkeys = {"a"}}) end,
            "partitionkeys", "partition_keys")
    refuses(function() create(dir .. "/new", {fields = {{name = "a", type = "INT", nullable = false}}}) end,
            "nullable", "type")
    assert.is_false(H.exists(dir .. "/new"))
    H.rmdir(dir)
  end)

  it("check values with the one option table: paimon.h's ranges and messages under the Lua names", function()
    local copy, dir = H.copy_table(SAMPLE)
    local before = H.fingerprint(copy)
    local t = assert(paimon.open(copy))
    local function raises(fn, msg)
      local ok, err = pcall(fn)
      assert.is_false(ok, msg)
      assert.matches(msg, tostring(err), 1, true)
    end
    raises(function() t:expire_snapshots{retain_min = 0} end,
           "option 'retain_min' must be between 1 and 2147483647, got 0")
    raises(function() t:expire_range{keep_from = 0} end, "option 'keep_from' must be between 1 and")
    -- a string "false" is no boolean: it must not turn a dry run into a real one
    raises(function() t:expire_snapshots{retain_min = 1, dry_run = "false"} end,
           "dry_run must be a boolean, got string")
    raises(function() t:remove_orphan_files{dry_run = 1} end, "dry_run must be a boolean, got number")
    raises(function() t:verify{all_snapshots = "yes"} end, "all_snapshots must be a boolean, got string")
    raises(function() t:expire_snapshots{clean_empty_directories = "yes"} end,
           "clean_empty_directories must be a boolean")
    raises(function() t:drop_partitions({dt = "2026-11-01"}, {max_attempts = 0}) end,
           "option 'max_attempts' must be between 1 and 100, got 0")
    raises(function() t:drop_partitions({dt = "2026-11-01"}, {max_attempts = "x"}) end,
           "option 'max_attempts' must be an integer")
    raises(function() t:drop_partitions({dt = "2026-11-01"}, {commit_user = 1}) end,
           "option 'commit_user' must be a string")
    t:close()
    assert.equals(before, H.fingerprint(copy))
    H.rmdir(dir)
  end)

  it("older_than takes the CLI's durations", function()
    local copy, dir = H.copy_table(SAMPLE)
    local t = assert(paimon.open(copy))
    local now = require("paimon.core").now_ms()
    local r = assert(t:expire_snapshots{retain_min = 1, older_than = "1h", now = now, dry_run = true})
    assert.equals(now - 3600000, r.plan.older_than)
    r = assert(t:expire_range{older_than = "30 min", now = now})
    assert.equals(now - 1800000, r.older_than)
    r = assert(t:remove_orphan_files{older_than = "2d", now = now, dry_run = true})
    assert.equals(now - 172800000, r.older_than)
    r = assert(t:remove_orphan_files{older_than = now - 90000, now = now, dry_run = true,   -- epoch ms still work
                                     allow_young_cutoff = true})
    assert.equals(now - 90000, r.older_than)
    for _, bad in ipairs{"soon", "-1d", "1 fortnight", ""} do
      local ok, err = pcall(t.expire_snapshots, t, {older_than = bad, dry_run = true})
      assert.is_false(ok, bad)
      assert.matches("option 'older_than'", tostring(err), 1, true)
    end
    assert.has_error(function() t:remove_orphan_files{older_than = true} end)
    t:close()
    H.rmdir(dir)
  end)
end)
