-- Upkeep after every commit (Java's TableCommitImpl) and maintain.lua:
-- write.lua, c:commit() and t:upkeep() run one code path
-- (src/core/pm_upkeep.c) driven by the table's options as of its latest
-- schema. Checked with the independent oracle (spec/support/oracle.py)
-- and verify.lua. The C API's side: spec/c/test_upkeep.c.
local H = require "helper"
local paimon = require "paimon"

local function create(dir, options, extra)
  local path = dir .. "/db.db/t"
  local args = {path, "--field", "id:INT", "--field", "v:STRING"}
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  for k, v in pairs(options or {}) do
    args[#args + 1] = "--option"
    args[#args + 1] = k .. "=" .. v
  end
  local out, err, code = H.script("create_table.lua", args)
  assert(code == 0, "create_table.lua: " .. err .. out)
  return path
end

-- write.lua with one row; returns stdout, stderr, code
local function write(path, row, args)
  local input = os.tmpname()
  H.write_file(input, (row or '{"id": 1, "v": "x"}') .. "\n")
  local a = {path, "--input", input}
  for _, x in ipairs(args or {}) do a[#a + 1] = x end
  local out, err, code = H.script("write.lua", a)
  os.remove(input)
  return out, err, code
end

local function snapshot_ids(path)
  local ids = {}
  local p = io.popen("ls " .. H.sh_quote(path .. "/snapshot"))
  for name in p:lines() do
    local id = name:match("^snapshot%-(%d+)$")
    if id then ids[#ids + 1] = tonumber(id) end
  end
  p:close()
  table.sort(ids)
  return ids
end

local function range(a, b)
  local v = {}
  for i = a, b do v[#v + 1] = i end
  return v
end

-- the oracle agrees (every file a retained root needs is there) and verify passes
local function whole(path)
  local out, err, code = H.support_py("oracle.py", {path})
  assert.are.equal(0, code, "oracle: " .. err .. out:sub(1, 400))
  out, err, code = H.script("verify.lua", {path})
  assert.are.equal(0, code, "verify.lua: " .. err .. out)
end

local function step(res, name)
  for _, s in ipairs(res.steps) do if s.operation == name then return s end end
  error("no step " .. name)
end

-- a new schema file with changed options (what ALTER TABLE SET writes)
local function set_options(path, options)
  local ids = {}
  for name in io.popen("ls " .. H.sh_quote(path .. "/schema")):lines() do
    local id = name:match("^schema%-(%d+)$")
    if id then ids[#ids + 1] = tonumber(id) end
  end
  table.sort(ids)
  local last = ids[#ids]
  local s = H.cjson.decode(H.read_file(path .. "/schema/schema-" .. last))
  s.id = last + 1
  for k, v in pairs(options) do s.options[k] = v end
  local json = require "paimon.json"
  s.partitionKeys = json.array(s.partitionKeys)
  s.primaryKeys = json.array(s.primaryKeys)
  H.write_file(path .. "/schema/schema-" .. (last + 1), json.encode(s))
end

describe("upkeep after every commit", function()
  local dir
  before_each(function() dir = H.tmpdir() end)
  after_each(function() H.rmdir(dir) end)

  it("write.lua keeps snapshot.num-retained.max snapshots and deletes what the expired ones held", function()
    local path = create(dir, {["snapshot.num-retained.max"] = "5", ["snapshot.num-retained.min"] = "1"})
    local lists = {}
    for i = 1, 12 do
      local out, err, code = write(path, string.format('{"id": %d, "v": "x"}', i))
      assert.are.equal(0, code, err)
      local snap = H.cjson.decode(H.read_file(path .. "/snapshot/snapshot-" .. snapshot_ids(path)[#snapshot_ids(path)]))
      lists[snap.id] = {snap.baseManifestList, snap.deltaManifestList}
      if i > 5 then assert.truthy(err:find("upkeep: expire_snapshots", 1, true), err) end
      assert.falsy(err:find("failed", 1, true), err)
    end
    assert.are.same(range(8, 12), snapshot_ids(path))
    assert.are.equal("8", H.read_file(path .. "/snapshot/EARLIEST"))
    for id = 1, 7 do
      for _, l in ipairs(lists[id]) do assert.is_false(H.exists(path .. "/manifest/" .. l), l) end
    end
    whole(path)
    -- every row is still there (append-only: the data files stay live)
    local out, err, code = H.script("read.lua", {path})
    assert.are.equal(0, code, err)
    local n = 0
    for _ in out:gmatch("[^\n]+") do n = n + 1 end
    assert.are.equal(12, n)
  end)

  it("a table made by create_table.lua with no options keeps Java's defaults (10 for 1 h)", function()
    local path = create(dir)
    for i = 1, 13 do assert.are.equal(0, select(3, write(path))) end
    assert.are.same(range(1, 13), snapshot_ids(path))   -- all younger than snapshot.time-retained
    local out, err, code = write(path, nil, {"--json"})
    assert.are.equal(0, code, err)
    local r = H.decode(out).upkeep
    assert.are.equal(0, r.errors)
    assert.are.equal("time-retained", step(r, "expire_snapshots").result.capped_by)
    assert.are.equal("skipped", step(r, "expire_partitions").status)
  end)

  it("does nothing with write-only=true; maintain.lua then expires", function()
    local path = create(dir, {["snapshot.num-retained.max"] = "5", ["snapshot.num-retained.min"] = "1",
                              ["write-only"] = "true"})
    for i = 1, 12 do assert.are.equal(0, select(3, write(path))) end
    local out, err, code = write(path, nil, {"--json"})
    assert.are.equal(0, code, err)
    local r = H.decode(out).upkeep
    assert.is_true(r.write_only)
    assert.are.same({}, r.steps)
    assert.are.same(range(1, 13), snapshot_ids(path))
    -- a dry run changes nothing and says what would go
    local before = H.fingerprint(path)
    out, err, code = H.script("maintain.lua", {path, "--dry-run", "--json"})
    assert.are.equal(0, code, err .. out)
    r = H.decode(out)
    assert.is_true(r.dry_run)
    assert.are.equal(8, step(r, "expire_snapshots").result.expired)
    assert.are.equal(before, H.fingerprint(path))
    out, err, code = H.script("maintain.lua", {path})
    assert.are.equal(0, code, err .. out)
    assert.truthy(out:find("expire_snapshots   8 snapshots expired", 1, true), out)
    assert.are.same(range(9, 13), snapshot_ids(path))
    whole(path)
  end)

  it("reads the options of the latest schema at every run", function()
    local path = create(dir, {["snapshot.num-retained.max"] = "5", ["snapshot.num-retained.min"] = "1",
                              ["write-only"] = "true"})
    for i = 1, 8 do assert.are.equal(0, select(3, write(path))) end
    set_options(path, {["snapshot.num-retained.max"] = "3"})
    local out, err, code = H.script("maintain.lua", {path, "--json"})
    assert.are.equal(0, code, err .. out)
    assert.are.equal(1, H.decode(out).schema_id)
    assert.are.same(range(6, 8), snapshot_ids(path))
    -- and a writer's next commit (its table opened before the change too)
    set_options(path, {["write-only"] = "false", ["snapshot.num-retained.max"] = "2"})
    local t = assert(paimon.open(path))
    set_options(path, {["snapshot.num-retained.max"] = "4"})   -- schema-3, after t was opened
    local w = assert(t:new_write{})
    w:write{id = 1, v = "y"}
    local c = t:new_commit{}
    local id, created, upkeep = c:commit(assert(w:prepare_commit()))
    assert.are.equal(9, id)
    assert.is_true(created)
    assert.are.equal(3, upkeep.schema_id)
    assert.are.same(range(6, 9), snapshot_ids(path))
    w:close()
    t:close()
    whole(path)
  end)

  it("reports a failed upkeep, keeps the commit, and tries again at the next one", function()
    local path = create(dir, {["snapshot.num-retained.max"] = "3", ["snapshot.num-retained.min"] = "1",
                              ["consumer.expiration-time"] = "1 d"})
    for i = 1, 3 do assert.are.equal(0, select(3, write(path))) end
    H.run("mkdir -p " .. H.sh_quote(path .. "/consumer"))
    H.write_file(path .. "/consumer/consumer-job1", "{ not json")
    local out, err, code = write(path)
    assert.are.equal(0, code, err)
    assert.truthy(out:find("committed snapshot 4", 1, true), out)
    assert.truthy(err:find("upkeep: expire_consumers", 1, true), err)
    assert.truthy(err:find("consumer-job1", 1, true), err)
    assert.are.same(range(1, 4), snapshot_ids(path))    -- nothing expired over an unreadable consumer
    out, err, code = write(path, nil, {"--json"})
    assert.are.equal(0, code, err)
    local r = H.decode(out)
    assert.are.equal(5, r.snapshot_id)
    assert.is_true(r.upkeep.errors >= 1)
    assert.are.equal("failed", step(r.upkeep, "expire_consumers").status)
    assert.are.equal("failed", step(r.upkeep, "expire_snapshots").status)
    -- repaired: the next commit's upkeep catches up
    H.write_file(path .. "/consumer/consumer-job1", '{\n  "nextSnapshot" : 4\n}')
    out, err, code = write(path)
    assert.are.equal(0, code, err)
    assert.are.same(range(4, 6), snapshot_ids(path))
    whole(path)
  end)

  it("creates automatic tags at commit time (tag.automatic-creation)", function()
    local path = create(dir, {["tag.automatic-creation"] = "process-time", ["sink.process-time-zone"] = "UTC",
                              ["tag.creation-period"] = "daily"})
    local out, err, code = write(path, nil, {"--json"})
    assert.are.equal(0, code, err)
    local r = H.decode(out).upkeep
    local s = step(r, "auto_tags")
    assert.are.equal("done", s.status)
    assert.are.equal(1, #s.result.created)
    local yesterday = os.date("!%Y-%m-%d", os.time() - 86400)
    assert.are.equal(yesterday, s.result.created[1].tag)
    assert.is_true(H.exists(path .. "/tag/tag-" .. yesterday))
    out, err, code = write(path, nil, {"--json"})
    assert.are.same({}, step(H.decode(out).upkeep, "auto_tags").result.created)
  end)

  it("expires tags by tagCreateTime + tagTimeRetained unless tag.time-expire-enabled=false", function()
    local path = create(dir, {["write-only"] = "true"})
    assert.are.equal(0, select(3, write(path)))
    local out, err, code = H.script("tag.lua", {path, "create", "short", "--time-retained", "1 ms"})
    assert.are.equal(0, code, err)
    H.run("sleep 0.05")
    set_options(path, {["tag.time-expire-enabled"] = "false"})
    out, err, code = H.script("maintain.lua", {path, "--json"})
    assert.are.equal(0, code, err)
    assert.are.equal("skipped", step(H.decode(out), "expire_tags").status)
    assert.is_true(H.exists(path .. "/tag/tag-short"))
    set_options(path, {["tag.time-expire-enabled"] = "true"})
    out, err, code = H.script("maintain.lua", {path, "--json"})
    assert.are.equal(0, code, err)
    assert.are.equal(1, step(H.decode(out), "expire_tags").result.deleted_tags)
    assert.is_false(H.exists(path .. "/tag/tag-short"))
  end)

  it("leaves tag.num-retained-max to automatic creation, as Java's expire_tags (TagTimeExpire alone)", function()
    local path = create(dir, {["write-only"] = "true", ["tag.automatic-creation"] = "process-time",
                              ["tag.num-retained-max"] = "1", ["sink.process-time-zone"] = "UTC"})
    for i = 1, 2 do assert.are.equal(0, select(3, write(path))) end
    for i, name in ipairs{"2020-01-01", "2020-01-02"} do
      assert.are.equal(0, select(3, H.script("tag.lua", {path, "create", name, "--snapshot", tostring(i)})))
    end
    local out, err, code = H.script("tag.lua", {path, "expire", "--json"})
    assert.are.equal(0, code, err)
    assert.are.same({}, H.decode(out).tags)
    assert.is_true(H.exists(path .. "/tag/tag-2020-01-01"))
    -- asked for, the count rule still applies
    out, err, code = H.script("tag.lua", {path, "expire", "--num-retained-max", "1", "--json"})
    assert.are.equal(0, code, err)
    assert.are.same({"2020-01-01"}, H.decode(out).tags)
  end)

  it("expires partitions at commit time once the check interval allows, and in maintain.lua", function()
    local path = create(dir, {["partition.expiration-time"] = "1 d", ["partition.timestamp-formatter"] = "yyyyMMdd"},
                        {"--field", "dt:STRING", "--partition", "dt"})
    -- the default interval (1 h) has not passed since the writer started: no check
    local out, err, code = write(path, '{"id": 1, "v": "x", "dt": "20200101"}', {"--json"})
    assert.are.equal(0, code, err)
    local s = step(H.decode(out).upkeep, "expire_partitions")
    assert.are.equal("skipped", s.status)
    assert.truthy(s.reason:find("expiration-check-interval", 1, true), s.reason)
    -- maintain checks whatever the interval
    out, err, code = H.script("maintain.lua", {path, "--json"})
    assert.are.equal(0, code, err .. out)
    s = step(H.decode(out), "expire_partitions")
    assert.are.equal("done", s.status)
    assert.are.equal("dt=20200101/", s.result.partitions[1].path)
    assert.are.equal(2, snapshot_ids(path)[2])   -- the OVERWRITE snapshot of the drop
    -- a zero interval checks at every commit
    set_options(path, {["partition.expiration-check-interval"] = "0 s"})
    out, err, code = write(path, '{"id": 2, "v": "x", "dt": "20200102"}', {"--json"})
    assert.are.equal(0, code, err)
    s = step(H.decode(out).upkeep, "expire_partitions")
    assert.are.equal("done", s.status)
    assert.are.equal("dt=20200102/", s.result.partitions[1].path)
    whole(path)
  end)

  it("asks a policy the table names (paimon-lua.policy.expire)", function()
    local policy = dir .. "/keep_last_2.lua"
    H.write_file(policy, "return function(s, ctx) return {keep_from = ctx.latest - 1, reason = 'last-2'} end\n")
    local path = create(dir, {["snapshot.num-retained.min"] = "1", ["paimon-lua.policy.expire"] = policy})
    for i = 1, 5 do assert.are.equal(0, select(3, write(path))) end
    assert.are.same(range(4, 5), snapshot_ids(path))
    local out, err, code = H.script("maintain.lua", {path, "--json", "--policy", "expire=" .. policy})
    assert.are.equal(0, code, err)
    assert.are.equal("last-2", step(H.decode(out), "expire_snapshots").result.capped_by)
    whole(path)
  end)
end)

describe("maintain.lua", function()
  it("prints one line per operation, refuses a bad --policy", function()
    local dir = H.tmpdir()
    local path = create(dir)
    assert.are.equal(0, select(3, write(path)))
    local out, err, code = H.script("maintain.lua", {path})
    assert.are.equal(0, code, err)
    for _, op in ipairs{"expire_consumers", "expire_snapshots", "expire_changelogs", "expire_partitions", "auto_tags",
                        "expire_tags"} do
      assert.truthy(out:find("  " .. op, 1, true), out)
    end
    out, err, code = H.script("maintain.lua", {path, "--policy", "nope=x.lua"})
    assert.are.equal(2, code)
    assert.truthy(err:find("--policy expects KIND=FILE", 1, true), err)
    -- t:upkeep: a misspelt option or policy kind raises, never runs
    local t = assert(paimon.open(path))
    assert.has_error(function() t:upkeep{dryrun = true} end)
    assert.has_error(function() t:upkeep({dry_run = true}, {expired = "x.lua"}) end)
    local r = assert(t:upkeep{dry_run = true})
    assert.is_true(r.dry_run)
    assert.are.equal(6, #r.steps)
    t:close()
    H.rmdir(dir)
  end)
end)
