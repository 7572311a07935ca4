-- resty.paimon outside nginx (its jobs run inline when ngx is absent), under
-- Lua 5.4 and LuaJIT alike. The real nginx is scripts/nginx-test.sh.
local H = require "helper"

local SAMPLE = H.root .. "/examples/sample/warehouse/demo.db/orders"

describe("resty.paimon", function()
  local rp

  lazy_setup(function()
    local before = {}
    for k in pairs(_G) do before[k] = true end
    package.loaded["resty.paimon"] = nil
    rp = require "resty.paimon"
    for k in pairs(_G) do
      assert(before[k], "resty.paimon created the global " .. tostring(k))
    end
  end)

  it("has the OpenResty module shape", function()
    assert.is_string(rp._VERSION)
    assert.is_function(rp.new)
    assert.is_function(rp.job)
    local p = rp.new{ pool = "io", warehouse = "/wh" }
    assert.equals("io", p.pool)
    assert.equals(rp.snapshots, p.snapshots)
    for _, f in ipairs{ "commit_rows", "drop_partitions", "expire_partitions", "remove_orphan_files", "expire" } do
      assert.is_function(rp[f], f)
      assert.equals(rp[f], p[f])
    end
  end)

  it("maps db/table names inside the warehouse and refuses anything else", function()
    assert.equals("/wh/demo.db/orders", rp.table_path("/wh", "demo", "orders"))
    assert.equals("/wh/demo.db/orders", rp.table_path("/wh/", "demo", "orders"))
    assert.equals("/wh/d_1.db/t-2.x", rp.new{ warehouse = "/wh" }:table_path("d_1", "t-2.x"))
    for _, bad in ipairs{ "..", ".", "", "a/b", "../x", ".hidden", "a b", "a%2Fb", "a\0b", "a\\b",
                          "~", string.rep("x", 256), "é" } do
      local path, err = rp.table_path("/wh", bad, "orders")
      assert.is_nil(path, bad)
      assert.matches("invalid database name", err)
      path, err = rp.table_path("/wh", "demo", bad)
      assert.is_nil(path, bad)
      assert.matches("invalid table name", err)
    end
    assert.is_nil(rp.table_path("/wh", 42, "orders"))
    assert.has_error(function() rp.table_path(nil, "a", "b") end)
  end)

  it("snapshots() gives the rows of inspect.lua snapshots --json, 64-bit exact", function()
    local rows = assert(rp.snapshots(SAMPLE))
    assert.equals(5, #rows)
    local out, err, code = H.paimon_lua({"inspect.lua", SAMPLE, "snapshots", "--json"})
    assert.equals(0, code, err)
    assert.equals((out:gsub("%s+$", "")), rp.to_json(rows, rp.COLUMNS.snapshots))
    assert.matches('"commit_identifier":9223372036854775807', rp.to_json(rows, rp.COLUMNS.snapshots))
  end)

  it("latest() gives the latest snapshot row", function()
    local row = assert(rp.latest(SAMPLE))
    assert.equals(5, row.snapshot_id)
    assert.equals("APPEND", row.commit_kind)
    local all = assert(rp.snapshots(SAMPLE))
    assert.equals(rp.to_json(all[5], rp.COLUMNS.snapshots), rp.to_json(row, rp.COLUMNS.snapshots))
  end)

  it("files() gives the live files of inspect.lua files --json", function()
    local rows = assert(rp.files(SAMPLE))
    local out, err, code = H.paimon_lua({"inspect.lua", SAMPLE, "files", "--json"})
    assert.equals(0, code, err)
    local want = H.cjson.decode(out)
    -- inspect --json streams files in scan order; files() sorts by path
    table.sort(want, function(a, b) return a.file_path < b.file_path end)
    assert.equals(#want, #rows)
    for i, w in ipairs(want) do
      assert.equals(w.file_path, rows[i].file_path)
      assert.equals(w.record_count, rows[i].record_count)
      assert.equals(w.file_size_in_bytes, rows[i].file_size_in_bytes)
      assert.same(w.partition, rows[i].partition)
    end
    local some = assert(rp.files(SAMPLE, { partition = { dt = "2026-11-03" } }))
    assert.is_true(#some >= 1 and #some < #rows)
    for _, f in ipairs(some) do assert.equals("2026-11-03", f.partition.dt) end
    assert.equals(2, #assert(rp.files(SAMPLE, { limit = 2 })))
    assert.equals(#rows, #assert(rp.files(SAMPLE, { snapshot = 5 })))
  end)

  it("returns nil, err, code for a missing table; raises on misuse", function()
    local rows, err, code = rp.snapshots(H.root .. "/no/such/table")
    assert.is_nil(rows)
    assert.is_string(err)
    assert.equals("notfound", code)
    local row, _, code2 = rp.latest(H.root .. "/no/such/table")
    assert.is_nil(row)
    assert.equals("notfound", code2)
    assert.has_error(function() rp.snapshots() end)
    assert.has_error(function() rp.latest(42) end)
    assert.has_error(function() rp.new("x") end)
    local r, e = rp.job("nope")
    assert.is_nil(r)
    assert.matches("unknown job", e)
  end)

  it("returns plain data only (what may cross Lua VMs)", function()
    local function check(v, depth)
      local t = type(v)
      assert.is_true(t == "string" or t == "number" or t == "boolean" or t == "table", t)
      if t == "table" then
        for k, x in pairs(v) do
          assert.is_true(type(k) == "string" or type(k) == "number")
          check(x, depth + 1)
        end
      end
    end
    check(assert(rp.snapshots(SAMPLE)), 0)
    check(assert(rp.files(SAMPLE)), 0)
    check(rp.plain({ a = require("paimon").null, b = { 1, print } }), 0)
  end)

  it("expire() runs Table:expire_snapshots with a policy, or reports the latest", function()
    local t, dir = H.copy_table(SAMPLE)
    local report = assert(rp.expire(t, { retain_min = 3, retain_max = 3 }))
    assert.equals(5, report.latest_snapshot_id)
    if report.expired then
      assert.equals(2, report.expired.expired)
      local ids = {}
      for _, s in ipairs(assert(rp.snapshots(t))) do ids[#ids + 1] = s.snapshot_id end
      assert.same({3, 4, 5}, ids)
    else
      assert.matches("unavailable", report.expire)
    end
    local nope, err = rp.expire(t, { retain_min = 0 })
    if report.expired then
      assert.is_nil(nope)
      assert.matches("retain_min", err)
    end
    H.rmdir(dir)
  end)

  -- the rows of a table copy's latest snapshot, by order_id
  local function read_rows(path, partition, key)
    key = key or "order_id"
    local t = assert(require("paimon").open(path))
    local out = {}
    for row in assert(t:latest_snapshot()):read(partition and { partition = partition } or nil) do
      out[#out + 1] = row
    end
    t:close()
    table.sort(out, function(a, b) return a[key] < b[key] end)
    return out
  end

  local function total_records(path)
    return assert(rp.latest(path)).total_record_count
  end

  it("commit_rows() appends rows as one commit and returns the snapshot id", function()
    local t, dir = H.copy_table(SAMPLE)
    local before = total_records(t)
    local id, info = rp.commit_rows(t, {
      { order_id = 101, customer = "ada", amount = "12.50", dt = "2026-11-30" },
      { order_id = 102, customer = require("paimon").null, amount = 3, dt = "2026-11-30" },
    }, { commit_user = "resty-spec" })
    assert.equals(6, id, info)
    -- the upkeep the commit ran afterwards (docs/maintenance.md): nothing due on the sample
    assert.equals(0, info.upkeep.errors)
    assert.is_false(info.upkeep.write_only)
    assert.equals("expire_snapshots", info.upkeep.steps[5].operation)
    info.upkeep = nil
    assert.same({ snapshot_id = 6, rows = 2, files = 1, committed = true }, info)
    local latest = assert(rp.latest(t))
    assert.equals(6, latest.snapshot_id)
    assert.equals("APPEND", latest.commit_kind)
    assert.equals("resty-spec", latest.commit_user)
    assert.equals(before + 2, latest.total_record_count)
    local rows = read_rows(t, { dt = "2026-11-30" })
    assert.equals(2, #rows)
    assert.equals("ada", rows[1].customer)
    assert.equals("12.50", rows[1].amount)
    assert.equals(require("paimon").null, rows[2].customer)
    assert.equals("3.00", rows[2].amount)
    -- the new file shows in files(), as inspect.lua files --json sees it
    local out, err, code = H.paimon_lua({"inspect.lua", t, "files", "--json"})
    assert.equals(0, code, err)
    assert.equals(#H.cjson.decode(out), #assert(rp.files(t)))
    -- JSON text, decoded in the job
    id, info = rp.commit_rows(t, '[{"order_id":103,"customer":null,"dt":"2026-11-30"},' ..
                                 '{"order_id":104,"amount":"0.01","dt":"2026-12-01"}]')
    assert.equals(7, id, info)
    assert.equals(2, info.rows)
    assert.equals(2, info.files)                 -- one file per partition
    assert.equals(before + 4, total_records(t))
    -- nothing to commit: the latest id, committed = false, no snapshot
    id, info = rp.commit_rows(t, {})
    assert.equals(7, id)
    assert.is_false(info.committed)
    id, info = rp.commit_rows(t, "[]")
    assert.equals(7, id)
    assert.equals(7, assert(rp.latest(t)).snapshot_id)
    H.rmdir(dir)
  end)

  local function data_files(path)
    return (H.run("find " .. H.sh_quote(path) .. " -name 'data-*' | wc -l"))
  end

  it("commit_rows() with commit_user and identifier: a retry of a landed commit commits nothing", function()
    local t, dir = H.copy_table(SAMPLE)
    local rows = '[{"order_id":301,"customer":"eve","dt":"2026-12-02"}]'
    local opts = { commit_user = "loader", identifier = 9 }
    local id, info = rp.commit_rows(t, rows, opts)
    assert.equals(6, id, info)
    assert.is_true(info.committed)
    local files = data_files(t)
    local total = total_records(t)
    id, info = rp.commit_rows(t, rows, opts)
    assert.equals(6, id, info)
    assert.same({ snapshot_id = 6, rows = 0, files = 0, committed = false, already_committed = true }, info)
    assert.equals(6, assert(rp.latest(t)).snapshot_id)
    assert.equals(total, total_records(t))
    assert.equals(files, data_files(t))
    -- the identifier as a decimal string (64-bit under LuaJIT), the next one commits
    id, info = rp.commit_rows(t, rows, { commit_user = "loader", identifier = "10" })
    assert.equals(7, id, info)
    assert.is_true(info.committed)
    -- another commit user with the same identifier: a commit of its own
    id = rp.commit_rows(t, rows, { commit_user = "other", identifier = 9 })
    assert.equals(8, id)
    H.rmdir(dir)
  end)

  it("commit_rows() refuses bad rows with nil, err, 'invalid' and commits nothing", function()
    local t, dir = H.copy_table(SAMPLE)
    for _, bad in ipairs{
      { { order_id = 1, nope = 2 }, "nope" },
      { { { customer = "no id", dt = "x" } }, "order_id" },
      { { { order_id = "x" } }, "order_id" },
      { { 1, 2 }, "row object" },
      { { { 1, 2 } }, "row object" },
      { "not json", "JSON array" },
      { '{"order_id":1}', "JSON array" },
      { '[{"order_id":1', "not valid JSON" },
      { '[{"order_id":1,"dt":"a"},{"order_id":null}]', "row 2" },
      -- POST /rows numbers: exact or refused (never clamped, hex or exponent)
      { '[{"order_id":"9223372036854775808","dt":"a"}]', "'9223372036854775808' is out of range" },
      { '[{"order_id":"0x10","dt":"a"}]', "got '0x10'" },
      { '[{"order_id":"1e3","dt":"a"}]', "got '1e3'" },
      { '[{"order_id":9007199254740993,"dt":"a"}]', "may have been rounded" },
      { '[{"order_id":1.5,"dt":"a"}]', "got 1.5" },
    } do
      local rows = bad[1]
      if type(rows) == "table" and rows.order_id then rows = { rows } end
      local id, err, code = rp.commit_rows(t, rows)
      assert.is_nil(id)
      assert.equals("invalid", code, err)
      assert.matches(bad[2], err, 1, true)
    end
    assert.equals(5, assert(rp.latest(t)).snapshot_id)
    -- no data file was left behind by the refused writes
    assert.equals(data_files(SAMPLE), data_files(t))
    local id, err, code = rp.commit_rows(t .. "-missing", { { order_id = 1 } })
    assert.is_nil(id)
    assert.equals("notfound", code, err)
    assert.has_error(function() rp.commit_rows(t, 42) end)
    assert.has_error(function() rp.commit_rows(nil, {}) end)
    assert.has_error(function() rp.commit_rows(t, {}, "x") end)
    H.rmdir(dir)
  end)

  it("refuses unknown options in every function, naming them, before any job runs", function()
    local t, dir = H.copy_table(SAMPLE)
    local before = H.fingerprint(t)
    local now = os.time() * 1000
    local p = rp.new{ pool = "paimon" }
    for _, c in ipairs{
      { function() return rp.expire(t, { retain_min = 1, older_than = now, dryrun = true }) end, "dryrun", "dry_run" },
      { function() return p:expire(t, { retain_min = 1, dryrun = true }) end, "dryrun", "dry_run" },
      { function() return rp.remove_orphan_files(t, { older_than = "1d", dryrun = true }) end, "dryrun", "dry_run" },
      { function() return rp.drop_partitions(t, { dt = "2026-11-01" }, { dryrun = true }) end, "dryrun", "dry_run" },
      { function() return rp.expire_partitions(t, { expiration_time = "1d", dryrun = true }) end, "dryrun",
        "dry_run" },
      { function() return rp.verify(t, { all_snapshot = true }) end, "all_snapshot", "all_snapshots" },
      { function() return rp.snapshots(t, { brnch = "dev" }) end, "brnch", "branch" },
      { function() return rp.latest(t, { brnch = "dev" }) end, "brnch", "branch" },
      { function() return p:files(t, { limt = 1 }) end, "limt", "limit" },
      { function() return rp.commit_rows(t, { { order_id = 1, dt = "x" } }, { commituser = "x" }) end,
        "commituser", "commit_user" },
      { function() return rp.new{ pol = "paimon" } end, "pol", "pool" },
    } do
      local ok, err = pcall(c[1])
      assert.is_false(ok, "accepted " .. c[2])
      assert.matches("unknown option '" .. c[2] .. "' (known: ", err, 1, true)
      assert.matches(c[3], err, 1, true)
    end
    assert.equals(before, H.fingerprint(t))
    -- keep_from, the policy answer's name, passes through; until still does
    local r = assert(rp.expire(t, { retain_min = 1, older_than = now, keep_from = 2, dry_run = true }))
    assert.equals(1, r.expired.expired)
    r = assert(rp.expire(t, { retain_min = 1, older_than = now, dry_run = true,
                              policy = function(_, ctx) return { keep_from = ctx.earliest + 1 } end }))
    assert.equals(2, r.policy_until)
    assert.equals(1, r.expired.expired)
    H.rmdir(dir)
  end)

  it("commit_rows() says 'unsupported' for a table it cannot write", function()
    local dir = H.tmpdir()
    local path = dir .. "/w/db.db/pq"
    local create = require("paimon").create_table or require("paimon.core").create_table
    assert(create(path, { fields = { { name = "id", type = "BIGINT" } },
                          options = { ["file.format"] = "parquet", bucket = -1 } }))
    local id, err, code = rp.commit_rows(path, { { id = 1 } })
    assert.is_nil(id)
    assert.equals("unsupported", code, err)
    H.rmdir(dir)
  end)

  it("commit_rows() decodes BINARY columns of JSON text from base64", function()
    local dir = H.tmpdir()
    local path = dir .. "/w/db.db/bin"
    local create = require("paimon").create_table or require("paimon.core").create_table
    assert(create(path, { fields = { { name = "id", type = "BIGINT" }, { name = "b", type = "BYTES" } },
                          options = { ["file.format"] = "avro", bucket = -1 } }))
    assert(rp.commit_rows(path, '[{"id":1,"b":"AAEC/w=="},{"id":2,"b":"aGk="}]'))
    local rows = read_rows(path, nil, "id")
    assert.equals("\0\1\2\255", rows[1].b)
    assert.equals("hi", rows[2].b)
    local id, err, code = rp.commit_rows(path, '[{"id":3,"b":"not base64!"}]')
    assert.is_nil(id)
    assert.equals("invalid", code, err)
    assert.equals("hi", rp.unbase64("aGk="))
    H.rmdir(dir)
  end)

  it("drop_partitions() drops with one OVERWRITE snapshot; a dry run changes nothing", function()
    local t, dir = H.copy_table(SAMPLE)
    local before = total_records(t)
    local r = assert(rp.drop_partitions(t, { dt = "2026-11-02" }, { dry_run = true }))
    assert.is_true(r.dry_run)
    assert.equals(3, r.files)
    assert.equals(9, r.rows)
    assert.is_nil(r.snapshot_id)
    assert.is_nil(r.partitions[1].binary_row)
    assert.equals("dt=2026-11-02/", r.partitions[1].path)
    assert.equals(5, assert(rp.latest(t)).snapshot_id)
    r = assert(rp.drop_partitions(t, { { dt = "2026-11-02" } }, { commit_user = "dropper" }))
    assert.equals(6, r.snapshot_id)
    local latest = assert(rp.latest(t))
    assert.equals("OVERWRITE", latest.commit_kind)
    assert.equals("dropper", latest.commit_user)
    assert.equals(before - 9, latest.total_record_count)
    for _, f in ipairs(assert(rp.files(t))) do assert.not_equals("2026-11-02", f.partition.dt) end
    -- python3-avro agrees on the live files
    local out, err, code = H.pyref(t, "files")
    assert.equals(0, code, err)
    assert.equals(#H.cjson.decode(out), #assert(rp.files(t)))
    -- nothing matches: no snapshot
    r = assert(rp.drop_partitions(t, { dt = "1999-01-01" }))
    assert.is_nil(r.snapshot_id)
    assert.equals(0, r.files)
    -- an unknown column is refused by the core: nil, err, "misuse"
    local nope, e2, c2 = rp.drop_partitions(t, { nope = "x" })
    assert.is_nil(nope)
    assert.equals("misuse", c2)
    assert.matches("nope", e2)
    assert.not_matches("%.lua:%d+:", e2)
    assert.has_error(function() rp.drop_partitions(t, "dt=x") end)
    H.rmdir(dir)
  end)

  it("expire_partitions() passes options and policies (function, {expired = f}, file)", function()
    local t, dir = H.copy_table(SAMPLE)
    local r = assert(rp.expire_partitions(t, { expiration_time = "1d", dry_run = true }))
    assert.equals(2, r.candidates)           -- both live partitions are days old
    assert.is_nil(r.snapshot_id)
    r = assert(rp.expire_partitions(t, { expiration_time = "1d", dry_run = true, max_expires = 1 }))
    assert.equals(1, #r.partitions)
    assert.equals("dt=2026-11-02/", r.partitions[1].path)
    r = assert(rp.expire_partitions(t, { expiration_time = "1d", dry_run = true,
                                         policy = function(p) return p.partition.dt == "2026-11-03" end }))
    assert.equals(1, #r.partitions)
    assert.equals("dt=2026-11-03/", r.partitions[1].path)
    r = assert(rp.expire_partitions(t, { expiration_time = "1d", dry_run = true,
                                         policy = { expired = function() return false end } }))
    assert.equals(0, #r.partitions)
    local pol = dir .. "/keep_03.lua"
    H.write_file(pol, 'return function(p, ctx) if p.partition.dt == "2026-11-03" then return false end ' ..
                      'return ctx.default(p, ctx) end')
    r = assert(rp.expire_partitions(t, { expiration_time = "1d", policy = pol }))
    assert.equals(6, r.snapshot_id)
    assert.equals(1, #r.partitions)
    assert.equals("dt=2026-11-02/", r.partitions[1].path)
    assert.equals("OVERWRITE", assert(rp.latest(t)).commit_kind)
    local nope, err, code = rp.expire_partitions(t, { expiration_time = "soon" })
    assert.is_nil(nope)
    assert.equals("misuse", code, err)
    assert.has_error(function() rp.expire_partitions(t, { policy = 42 }) end)
    H.rmdir(dir)
  end)

  it("remove_orphan_files(): dry run lists an old orphan, the cut-off is honoured, never in the future", function()
    local t, dir = H.copy_table(SAMPLE)
    local rel = "dt=2026-11-03/bucket-0/data-0a0a0a0a-1b1b-4c4c-8d8d-2e2e2e2e2e2e-0.avro"
    H.write_file(t .. "/" .. rel, "orphan")
    H.run("touch -d '2 days ago' " .. H.sh_quote(t .. "/" .. rel))
    local r = assert(rp.remove_orphan_files(t, { dry_run = true }))
    assert.is_true(r.dry_run)
    assert.equals(1, r.files)
    assert.equals(t .. "/" .. rel, r.paths[1].path)
    assert.equals("data_files", r.paths[1].kind)
    assert.equals(t, r.table)
    assert.is_true(io.open(t .. "/" .. rel) ~= nil)
    local now = require("paimon.core").now_ms()
    assert.is_true(math.abs(r.older_than - (now - 86400000)) < 60000)   -- the core's default: 1 day
    -- older cut-offs leave it out: epoch ms or a duration
    r = assert(rp.remove_orphan_files(t, { dry_run = true, older_than_ms = now - 3 * 86400000 }))
    assert.equals(0, r.files)
    r = assert(rp.remove_orphan_files(t, { dry_run = true, older_than = "3d" }))
    assert.equals(0, r.files)
    r = assert(rp.remove_orphan_files(t, { dry_run = true, older_than = "36h" }))
    assert.equals(1, r.files)
    -- a cut-off in the future or a bad one raises
    assert.has_error(function() rp.remove_orphan_files(t, { older_than_ms = now + 3600000 }) end)
    assert.has_error(function() rp.remove_orphan_files(t, { older_than = "soon" }) end)
    assert.has_error(function() rp.remove_orphan_files(t, { older_than_ms = 1.5 }) end)
    -- for real: only the orphan goes
    r = assert(rp.remove_orphan_files(t))
    assert.equals(1, r.files)
    assert.equals(1, r.deleted.data_files)
    assert.is_nil(io.open(t .. "/" .. rel))
    assert.equals(5, #assert(rp.files(t)))
    local nope, _, code = rp.remove_orphan_files(t .. "-missing")
    assert.is_nil(nope)
    assert.equals("notfound", code)
    H.rmdir(dir)
  end)

  it("verify() checks the table read-only and reports a missing file", function()
    local t, dir = H.copy_table(SAMPLE)
    local r = assert(rp.verify(t))
    assert.is_true(r.ok)
    assert.equals(t, r.table)
    assert.is_true(r.files > 0)
    local all = assert(rp.verify(t, { all_snapshots = true, threads = 2 }))
    assert.is_true(all.snapshots > r.snapshots)
    local files = assert(rp.files(t))
    os.remove(t .. "/" .. files[1].file_path)
    r = assert(rp.verify(t))
    assert.is_false(r.ok)
    assert.equals(1, #r.missing)
    assert.equals(t .. "/" .. files[1].file_path, r.missing[1].path)
    assert.has_error(function() rp.verify(t, 1) end)
    H.rmdir(dir)
  end)

  it("relative_paths() takes the server's table path out of a verify result", function()
    local t, dir = H.copy_table(SAMPLE)
    local files = assert(rp.files(t))
    os.remove(t .. "/" .. files[1].file_path)
    local r = assert(rp.verify(t))
    assert.equals(1, #r.missing)
    local rel = rp.relative_paths(r, t)
    assert.is_nil(rel.table)
    assert.equals(files[1].file_path, rel.missing[1].path)
    assert.equals(r.missing[1].kind, rel.missing[1].kind)
    assert.equals(r.ok, rel.ok)
    assert.same(r.checked, rel.checked)
    -- no string anywhere in the answer names the server's directories
    local function walk(v)
      if type(v) == "string" then
        assert.is_nil(v:find(dir, 1, true), v)
      elseif type(v) == "table" then
        for k, x in pairs(v) do walk(k); walk(x) end
      end
    end
    walk(H.cjson.decode(rp.to_json(rel)))
    assert.is_truthy(rp.to_json(r):find(dir, 1, true))     -- the plain result still has them
    -- a mention of the table itself becomes TABLE; a sibling that starts alike stays
    assert.same({ m = "cannot read TABLE: gone", s = t .. "-old/x", p = "a/b" },
                rp.relative_paths({ m = "cannot read " .. t .. ": gone", s = t .. "-old/x", p = t .. "/a/b" }, t))
    assert.has_error(function() rp.relative_paths(nil, t) end)
    H.rmdir(dir)
  end)

  it("expire() passes retain_min, older_than, max_deletes, dry_run and a policy function or file", function()
    local t, dir = H.copy_table(SAMPLE)
    -- older_than = 1 ms after the epoch: no snapshot is that old
    local r = assert(rp.expire(t, { retain_min = 1, older_than = 1 }))
    assert.equals(0, r.expired.expired)
    assert.equals("time-retained", r.expired.capped_by)
    -- max_deletes = 1, dry run: would expire snapshot 1 only, deletes nothing
    r = assert(rp.expire(t, { retain_min = 1, max_deletes = 1, dry_run = true }))
    assert.equals(1, r.expired.expired)
    assert.is_true(r.expired.dry_run)
    assert.equals(5, #assert(rp.snapshots(t)))
    -- a policy function chooses the end (the consumer still caps at 3)
    r = assert(rp.expire(t, { retain_min = 1, dry_run = true,
                              policy = function(snaps, ctx) return { ["until"] = ctx.earliest + 1, reason = "mine" } end }))
    assert.equals(1, r.expired.expired)
    assert.equals("mine", r.expired.capped_by)
    assert.equals(2, r.policy_until)
    -- a policy file, for real
    local pol = dir .. "/keep_from_2.lua"
    H.write_file(pol, "return function(snapshots, ctx) return { keep = { 2 } } end")
    r = assert(rp.expire(t, { retain_min = 1, policy = pol }))
    assert.equals(1, r.expired.expired)
    local ids = {}
    for _, s in ipairs(assert(rp.snapshots(t))) do ids[#ids + 1] = s.snapshot_id end
    assert.same({ 2, 3, 4, 5 }, ids)
    -- a policy that raises or a missing file: nil, err
    local nope, err = rp.expire(t, { retain_min = 1, policy = function() error("boom") end })
    assert.is_nil(nope)
    assert.matches("boom", err)
    nope, err = rp.expire(t, { policy = dir .. "/missing.lua" })
    assert.is_nil(nope)
    assert.matches("missing.lua", err)
    assert.has_error(function() rp.expire(t, { older_than = require("paimon.core").now_ms() + 3600000 }) end)
    assert.has_error(function() rp.expire(t, { policy = 42 }) end)
    -- clean_empty_directories reaches the core, which wants a boolean
    local ok, res, err2 = pcall(rp.expire, t, { clean_empty_directories = "yes", dry_run = true })
    assert.truthy((not ok and tostring(res):match("clean_empty_directories must be a boolean")) or
                  (ok and res == nil and tostring(err2):match("clean_empty_directories must be a boolean")))
    r = assert(rp.expire(t, { retain_min = 1, dry_run = true, clean_empty_directories = true }))
    assert.equals(0, r.expired.directories)
    H.rmdir(dir)
  end)

  -- The snapshot lifecycle calls (issue 15): the Table methods' results
  -- through the jobs, the same option checks as the tag calls.
  it("rollback(): dry run, as latest with Java's protection tag, to a tag, destructive, misuse", function()
    local t, dir = H.copy_table(SAMPLE)
    local before = H.tree(t)
    local plan = assert(rp.rollback(t, { to_snapshot = 3, dry_run = true }))
    assert.same({ 5, 4 }, plan.snapshots)
    assert.equals(before, H.tree(t))
    -- lists print as lists even when empty (no tag, no changelog above 3)
    assert.matches('"changelogs":[],', rp.to_json(plan), 1, true)
    assert.matches('"tags":[],', rp.to_json(plan), 1, true)
    local want = {}
    for i, f in ipairs(assert(rp.files(t, { snapshot = 3 }))) do want[i] = f.file_path end
    local r = assert(rp.rollback(t, { to_snapshot = 3, as_latest = true }))
    assert.is_true(r.as_latest)
    assert.equals(5, r.previous_latest)
    assert.equals(6, r.latest)
    assert.matches("^rollback%-to%-as%-latest%-3%-", r.protection_tag)
    local got = {}
    for i, f in ipairs(assert(rp.files(t))) do got[i] = f.file_path end
    assert.same(want, got)
    local names = {}
    for _, x in ipairs(assert(rp.tags(t))) do names[#names + 1] = x.name end
    table.sort(names)
    assert.same({ "nightly", r.protection_tag }, names)
    -- to a tag, as latest: no protection tag (the tag holds the files)
    r = assert(rp.rollback(t, { to_tag = "nightly", as_latest = true }))
    assert.equals(2, r.target)
    assert.equals(7, r.latest)
    assert.is_nil(r.protection_tag)
    -- to a timestamp (epoch ms): the latest snapshot at or before it
    assert.equals(3, assert(rp.rollback(t, { to_timestamp = 1795987108203 + 1, dry_run = true })).target)
    -- destructive: snapshot 7 goes; by default only metadata (Java 1.2+),
    -- purge_files plans the files too
    assert.is_true(assert(rp.rollback(t, { to_snapshot = 6, purge_files = true, dry_run = true })).purge_files)
    r = assert(rp.rollback(t, { to_snapshot = 6 }))
    assert.is_false(r.purge_files)
    assert.same({ 7 }, r.snapshots)
    assert.equals(6, assert(rp.latest(t)).snapshot_id)
    -- misuse raises in the caller; what the core refuses is nil, err, "misuse"
    assert.has_error(function() rp.rollback(t) end)
    local ok, err = pcall(rp.rollback, t, { to_snapshot = 1, aslatest = true })
    assert.is_false(ok)
    assert.matches("unknown option 'aslatest'", err, 1, true)
    local res, e2, code = rp.rollback(t, {})
    assert.is_nil(res)
    assert.equals("misuse", code)
    assert.matches("exactly one", e2, 1, true)
    res, e2, code = rp.rollback(t, { to_snapshot = 99 })
    assert.is_nil(res)
    assert.equals("notfound", code)
    res, e2, code = rp.rollback(dir .. "/nosuch", { to_snapshot = 1 })
    assert.is_nil(res)
    assert.equals("notfound", code)
    H.rmdir(dir)
  end)

  it("consumers(), reset_consumer(), delete_consumer(), expire_consumers()", function()
    local t, dir = H.copy_table(SAMPLE)
    local list = assert(rp.consumers(t))
    assert.equals(1, #list)
    assert.equals("dashboard", list[1].consumer_id)
    assert.equals(3, list[1].next_snapshot)
    assert.is_number(list[1].mtime)
    local p = rp.new{ pool = "paimon" }
    local r = assert(p:reset_consumer(t, "job1", 4))
    assert.same({ id = "job1", next_snapshot = 4, dry_run = false }, r)
    assert.equals('{\n  "nextSnapshot" : 4\n}', H.read_file(t .. "/consumer/consumer-job1"))
    assert.equals(4, assert(rp.reset_consumer(t, "job1", 5)).previous)
    -- a method call's options arrive (the fifth argument)
    local ok, err = pcall(p.reset_consumer, p, t, "job1", 5, { brnch = "x" })
    assert.is_false(ok)
    assert.matches("unknown option 'brnch'", err, 1, true)
    assert.same({ id = "job1", deleted = true, dry_run = false }, assert(rp.delete_consumer(t, "job1")))
    local res, e2, code = rp.delete_consumer(t, "job1")
    assert.is_nil(res)
    assert.equals("notfound", code)
    assert.matches("job1", e2, 1, true)
    res, e2, code = rp.reset_consumer(t, "../x", 2)
    assert.is_nil(res)
    assert.equals("misuse", code)
    assert.has_error(function() rp.reset_consumer(t, "job1", "3") end)
    assert.has_error(function() rp.reset_consumer(t, "job1", 3.5) end)
    assert.has_error(function() rp.delete_consumer(t, 42) end)
    ok, err = pcall(rp.expire_consumers, t, { expiration = "2d", dryrun = true })
    assert.is_false(ok)
    assert.matches("dry_run", err, 1, true)
    -- a dead consumer: not updated for 3 days
    os.execute("touch -d '3 days ago' " .. H.sh_quote(t .. "/consumer/consumer-dashboard"))
    r = assert(rp.expire_consumers(t, { expiration = "2d", dry_run = true }))
    assert.equals(1, r.count)
    assert.equals("dashboard", r.expired[1].id)
    assert.is_true(H.exists(t .. "/consumer/consumer-dashboard"))
    r = assert(rp.expire_consumers(t, { expiration = "2d" }))
    assert.equals(1, r.count)
    assert.is_false(H.exists(t .. "/consumer/consumer-dashboard"))
    assert.same({}, assert(rp.consumers(t)))
    H.rmdir(dir)
  end)

  it("changelogs() gives the rows of inspect.lua changelogs --json; expire_changelogs() expires them", function()
    local copy, dir = H.copy_table(H.fixture("cpp-parquet-pk_table_scan_and_read_dv"))
    local sp = copy .. "/schema/schema-0"
    H.write_file(sp, (H.read_file(sp):gsub('"options" : {', '"options" : {\n    "changelog.num-retained.min" : "100",', 1)))
    local _, eerr, erc = H.script("expire.lua", { copy, "--retain-min", "1", "--older-than", "0s" })
    assert.equals(0, erc, eerr)
    local rows = assert(rp.changelogs(copy))
    assert.equals(5, #rows)
    local out, err, code = H.paimon_lua({ "inspect.lua", copy, "changelogs", "--json" })
    assert.equals(0, code, err)
    assert.equals((out:gsub("%s+$", "")), rp.to_json(rows, rp.COLUMNS.changelogs))
    assert.has_error(function() rp.expire_changelogs(copy, { retain_mn = 3 }) end)
    local before = H.tree(copy)
    local r = assert(rp.expire_changelogs(copy, { retain_min = 3, older_than = "0s", dry_run = true }))
    assert.equals(3, r.expired)
    assert.equals(before, H.tree(copy))
    r = assert(rp.expire_changelogs(copy, { retain_min = 3, older_than = "0s" }))
    assert.equals(3, r.expired)
    assert.same({ 1, 3 }, r.range)
    assert.equals(2, #assert(rp.changelogs(copy)))
    assert.same({}, assert(rp.changelogs(SAMPLE)))
    H.rmdir(dir)
  end)

  it("rename_tag() as a method receives its options", function()
    local t, dir = H.copy_table(SAMPLE)
    local p = rp.new{}
    local ok, err = pcall(p.rename_tag, p, t, "nightly", "n2", { brnch = "x" })
    assert.is_false(ok)
    assert.matches("unknown option 'brnch'", err, 1, true)
    assert.is_true(H.exists(t .. "/tag/tag-nightly"))
    H.rmdir(dir)
  end)

  describe("through a simulated worker thread", function()
    -- ngx.run_worker_thread stand-in: arguments and results must be plain
    -- data (what may cross between Lua VMs), copied across.
    local crossed
    local function check_plain(v, seen)
      local t = type(v)
      if t == "nil" or t == "string" or t == "number" or t == "boolean" then return end
      assert(t == "table", "a " .. t .. " cannot cross into the worker thread")
      for k, x in pairs(v) do
        assert(type(k) == "string" or type(k) == "number", "key of type " .. type(k))
        check_plain(x)
      end
    end
    local function deep_copy(v)
      if type(v) ~= "table" then return v end
      local out = {}
      for k, x in pairs(v) do out[k] = deep_copy(x) end
      return out
    end

    before_each(function()
      crossed = {}
      _G.ngx = {
        now = function() return require("paimon.core").now_ms() / 1000 end,
        run_worker_thread = function(pool, module, func, ...)
          local n, args = select("#", ...), { ... }
          for i = 1, n do check_plain(args[i]); args[i] = deep_copy(args[i]) end
          crossed[#crossed + 1] = { pool = pool, module = module, func = func, args = args }
          local res = { require(module)[func]((table.unpack or unpack)(args, 1, n)) }
          for i = 1, 3 do check_plain(res[i]) end
          return true, deep_copy(res[1]), deep_copy(res[2]), res[3]
        end,
      }
    end)
    after_each(function() _G.ngx = nil end)

    it("runs every new function as a job in the pool, with plain data", function()
      local t, dir = H.copy_table(SAMPLE)
      local p = rp.new{ pool = "maint" }
      local id = assert(p:commit_rows(t, { { order_id = 7, dt = "2026-11-30" } }))
      assert.equals(6, id)
      assert.same({ "maint", "resty.paimon", "job", "commit_rows" },
                  { crossed[1].pool, crossed[1].module, crossed[1].func, crossed[1].args[1] })
      assert(p:drop_partitions(t, { dt = "2026-11-30" }, { dry_run = true }))
      assert(p:expire_partitions(t, { expiration_time = "1d", dry_run = true }))
      assert(p:remove_orphan_files(t, { dry_run = true, older_than = "1h" }))
      assert(p:expire(t, { retain_min = 1, dry_run = true }))
      local names = {}
      for i, c in ipairs(crossed) do names[i] = c.args[1] end
      assert.same({ "commit_rows", "drop_partitions", "expire_partitions", "remove_orphan_files", "expire" }, names)
      H.rmdir(dir)
    end)

    it("runs the lifecycle functions as jobs in the pool, with plain data", function()
      local t, dir = H.copy_table(SAMPLE)
      local p = rp.new{ pool = "maint" }
      assert(p:rollback(t, { to_snapshot = 3, as_latest = true }))
      assert(p:consumers(t))
      assert(p:reset_consumer(t, "job1", 4))
      assert(p:delete_consumer(t, "job1"))
      assert(p:expire_consumers(t, { expiration = "7d", dry_run = true }))
      assert(p:changelogs(t))
      local r, err = p:expire_changelogs(t, { retain_min = 1, dry_run = true })
      assert(r, err)
      local names = {}
      for i, c in ipairs(crossed) do
        names[i] = c.args[1]
        assert.equals("maint", c.pool)
      end
      assert.same({ "rollback", "consumers", "reset_consumer", "delete_consumer", "expire_consumers", "changelogs",
                    "expire_changelogs" }, names)
      H.rmdir(dir)
    end)

    it("sends a policy function as bytecode; refuses one with upvalues", function()
      local t, dir = H.copy_table(SAMPLE)
      local r = assert(rp.expire(t, { retain_min = 1, dry_run = true,
                                      policy = function(snaps, ctx) return { ["until"] = ctx.earliest + 1 } end }))
      assert.equals(1, r.expired.expired)
      local sent = crossed[1].args[4]
      assert.is_string(sent.bytecode)
      r = assert(rp.expire_partitions(t, { expiration_time = "1d", dry_run = true,
                                           policy = { expired = function(p) return p.path == "dt=2026-11-03/" end } }))
      assert.equals(1, #r.partitions)
      assert.equals("dt=2026-11-03/", r.partitions[1].path)
      local keep = "dt=2026-11-03/"
      assert.has_error(function()
        rp.expire_partitions(t, { policy = function(p) return p.path ~= keep end })
      end, nil)
      local ok, err = pcall(rp.expire, t, { policy = function() return keep end })
      assert.is_false(ok)
      assert.matches("upvalues", err)
      -- a policy file name crosses as is
      local pol = dir .. "/p.lua"
      H.write_file(pol, "return function(s, ctx) return ctx.earliest end")
      r = assert(rp.expire(t, { retain_min = 1, dry_run = true, policy = pol }))
      assert.equals(0, r.expired.expired)
      H.rmdir(dir)
    end)
  end)

  it("to_json prints integers exactly and escapes strings", function()
    assert.equals('{"a":1,"b":"x\\"y\\n"}', rp.to_json{ a = 1, b = 'x"y\n' })
    assert.equals('[1,2.5,true]', rp.to_json{ 1, 2.5, true })
    assert.equals('[]', rp.to_json{})
    assert.equals('{"snapshot_id":9223372036854775807,"commit_user":"9"}',
                  rp.to_json({ snapshot_id = "9223372036854775807", commit_user = "9" },
                             { "snapshot_id", "commit_user" }))
    assert.equals('{"snapshot_id":1795987228203}', rp.to_json{ snapshot_id = 1795987228203 })
    assert.equals('{"failures":[],"files":0,"paths":[]}', rp.to_json{ failures = {}, paths = {}, files = 0 })
    assert.equals(172800000, rp.parse_duration_ms("2d"))
    assert.equals(90000, rp.parse_duration_ms("90 s"))
    assert.equals(15, rp.parse_duration_ms("15"))
    assert.is_nil(rp.parse_duration_ms("soon"))
    assert.is_nil(rp.parse_duration_ms("-1d"))
    -- one encoder (paimon.json) under to_json
    assert.equals('{"a":1,"f":null}', require("paimon.json").encode_with({ a = 1, f = print }, { lenient = true }))
    assert.equals('[{"snapshot_id":7,"commit_user":null,"x":{"y":"12"}}]',
                  rp.to_json({ { snapshot_id = "7", x = { y = "12" } } }, { "snapshot_id", "commit_user" }))
  end)
end)
