-- Automatic tag creation: t:auto_tags, tag.lua TABLE auto, resty.paimon's
-- auto_tags, on copies of the Java-written fixture with the table options
-- set in its schema and its snapshots' timeMillis set by hand. Java's rules
-- (apache/paimon TagAutoCreation.tryToCreateTags, TagPeriodHandler,
-- CoreOptions tag.*) are held in detail by spec/c/test_tag_auto.c.
local H = require "helper"
local paimon = require "paimon"

local FIX = "cpp-parquet-pk_btree_partitioned_e2e"

local function utc(y, mo, d, h)
  -- days from civil (proleptic Gregorian), as the core's pm_days_from_civil
  local yy = mo <= 2 and y - 1 or y
  local era = math.floor(yy / 400)
  local yoe = yy - era * 400
  local mp = mo > 2 and mo - 3 or mo + 9
  local doy = math.floor((153 * mp + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return ((era * 146097 + doe - 719468) * 24 + h) * 3600000
end

-- Snapshots 1-5 at 01-01 10:00, 01-01 23:00, 01-02 00:30, 01-02 12:00,
-- 01-05 01:00 (UTC); the options added to the schema.
local TIMES = {utc(2024, 1, 1, 10), utc(2024, 1, 1, 23), utc(2024, 1, 2, 0) + 1800000, utc(2024, 1, 2, 12),
               utc(2024, 1, 5, 1)}

local function set_time(path, id, ms)
  H.run("sed -i 's/\"timeMillis\" : [0-9]*/\"timeMillis\" : " .. string.format("%d", ms) .. "/' " ..
        H.sh_quote(path .. "/snapshot/snapshot-" .. id))
end

local function table_with(options)
  local path, dir = H.copy_table(H.fixture(FIX))
  for id, ms in ipairs(TIMES) do set_time(path, id, ms) end
  local lines = {}
  for k, v in pairs(options) do lines[#lines + 1] = string.format('"%s" : "%s",', k, v) end
  H.run("sed -i 's/\"options\" : {/\"options\" : { " .. table.concat(lines, " ") .. "/' " ..
        H.sh_quote(path .. "/schema/schema-0"))
  return path, dir
end

local DAILY = {["tag.automatic-creation"] = "process-time", ["sink.process-time-zone"] = "UTC"}

local function names(list)
  local v = {}
  for i, x in ipairs(list) do v[i] = x.tag end
  return v
end

describe("t:auto_tags", function()
  it("creates one tag per finished day, idempotently, with the default time retained", function()
    local o = {["tag.default-time-retained"] = "2 d"}
    for k, v in pairs(DAILY) do o[k] = v end
    local path, dir = table_with(o)
    local t = assert(paimon.open(path))
    local r = assert(t:auto_tags{dry_run = true, now_ms = utc(2024, 2, 1, 0)})
    assert.are.same({"2023-12-31", "2024-01-01", "2024-01-04"}, names(r.created))
    assert.is_false(H.exists(path .. "/tag/tag-2024-01-01"))
    r = assert(t:auto_tags{now_ms = utc(2024, 2, 1, 0)})
    assert.are.equal("process-time", r.mode)
    assert.are.same({"2023-12-31", "2024-01-01", "2024-01-04"}, names(r.created))
    assert.are.same({1, 3, 5}, {r.created[1].snapshot_id, r.created[2].snapshot_id, r.created[3].snapshot_id})
    local tag = H.read_file(path .. "/tag/tag-2024-01-01")
    assert.truthy(tag:find('"tagTimeRetained" : 172800.000000000', 1, true), tag)
    assert.truthy(tag:find('"tagCreateTime" : [ 2024, ', 1, true), tag)   -- now_ms, local wall clock
    r = assert(t:auto_tags{})
    assert.are.same({}, r.created)
    assert.are.same({}, r.expired)
    assert.has_error(function() t:auto_tags{frob = 1} end)
    H.rmdir(dir)
  end)

  it("returns nil, message naming the option for a value Java refuses", function()
    local path, dir = table_with{["tag.automatic-creation"] = "sometimes"}
    local t = assert(paimon.open(path))
    local r, msg, code = t:auto_tags{}
    assert.is_nil(r)
    assert.truthy(msg:find("tag.automatic-creation", 1, true), msg)
    assert.are.equal("corrupt", code)
    H.rmdir(dir)
  end)
end)

describe("tag.lua auto", function()
  it("prints the exact tags, --json, --dry-run, exit codes", function()
    local o = {["tag.num-retained-max"] = "2"}
    for k, v in pairs(DAILY) do o[k] = v end
    local path, dir = table_with(o)
    local out, err, rc = H.script("tag.lua", {path, "auto", "--dry-run", "--json"})
    assert.are.equal(0, rc, err)
    local r = H.decode(out)
    assert.is_true(r.dry_run)
    assert.are.same({"2024-01-01", "2024-01-04"}, names(r.created))   -- 2023-12-31 would go at once
    assert.are.equal(1, r.skipped_over_max)
    assert.is_false(H.exists(path .. "/tag/tag-2024-01-04"))
    out, err, rc = H.script("tag.lua", {path, "auto"})
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("created 2 tag(s): 2024-01-01, 2024-01-04", 1, true), out)
    assert.is_true(H.exists(path .. "/tag/tag-2024-01-04"))
    out, err, rc = H.script("tag.lua", {path, "auto", "--json"})
    assert.are.equal(0, rc, err)
    assert.are.same({}, H.decode(out).created)
    -- a later day: one more tag, the oldest automatic one goes (not fallback-base)
    H.run("cp " .. H.sh_quote(path .. "/snapshot/snapshot-5") .. " " .. H.sh_quote(path .. "/snapshot/snapshot-6"))
    H.run("sed -i 's/\"id\" : 5,/\"id\" : 6,/' " .. H.sh_quote(path .. "/snapshot/snapshot-6"))
    set_time(path, 6, utc(2024, 1, 6, 0))
    out, err, rc = H.script("tag.lua", {path, "auto", "--json"})
    assert.are.equal(0, rc, err)
    r = H.decode(out)
    assert.are.same({"2024-01-05"}, names(r.created))
    assert.are.same({"2024-01-01"}, r.expired)
    assert.is_false(H.exists(path .. "/tag/tag-2024-01-01"))
    assert.is_true(H.exists(path .. "/tag/tag-fallback-base"))
    _, _, rc = H.script("tag.lua", {path, "auto", "extra"})
    assert.are.equal(2, rc)
    H.rmdir(dir)
  end)

  it("fails with exit 1 naming the option; does nothing when automatic creation is off", function()
    local path, dir = table_with{["tag.automatic-creation"] = "process-time", ["tag.creation-period"] = "weekly"}
    local before = H.fingerprint(path)
    local _, err, rc = H.script("tag.lua", {path, "auto"})
    assert.are.equal(1, rc)
    assert.truthy(err:find("tag.creation-period='weekly'", 1, true), err)
    assert.are.equal(before, H.fingerprint(path))
    H.rmdir(dir)
    path, dir = H.copy_table(H.fixture(FIX))
    local out
    out, err, rc = H.script("tag.lua", {path, "auto"})
    assert.are.equal(0, rc, err)
    assert.truthy(out:find("automatic tag creation is off", 1, true), out)
    H.rmdir(dir)
  end)
end)

describe("resty.paimon auto_tags (inline)", function()
  it("creates the tags and refuses unknown options", function()
    local rp = require "resty.paimon"
    local path, dir = table_with(DAILY)
    local r = assert(rp.auto_tags(path, {dry_run = true}))
    assert.are.same({"2023-12-31", "2024-01-01", "2024-01-04"}, names(r.created))
    r = assert(rp.auto_tags(path))
    assert.are.equal(3, #r.created)
    assert.are.equal(0, #assert(rp.auto_tags(path)).created)
    assert.has_error(function() rp.auto_tags(path, {snap = 1}) end)
    H.rmdir(dir)
  end)
end)
