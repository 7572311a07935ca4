-- Table URIs and FileIO options through every Lua face: paimon.open /
-- paimon.create_table {options = ...}, `--option KEY=VALUE` on every script
-- (lua/paimon/cli.lua), resty.paimon. The pmtest:// FileIO serves the
-- directory its option pmtest.root names, so a table opens only when the
-- options reached the FileIO; S3CR3T values stand for credentials and must
-- never be echoed.
local H = require "helper"
local paimon = require "paimon"
local json = require "cjson"

local BRANCHED = "cpp-parquet-append_table_with_append_pt_branch"
local SECRET = "S3CR3T-7d1e"

-- dir/bk/t: a copy of the fixture, as pmtest://bk/t with pmtest.root = dir
local function uri_copy(fixture)
  local dir = H.tmpdir()
  local _, err, code = H.run("mkdir " .. H.sh_quote(dir .. "/bk") .. " && cp -R " ..
                             H.sh_quote(H.fixture(fixture)) .. " " .. H.sh_quote(dir .. "/bk/t"))
  assert(code == 0, err)
  return dir
end

local function no_secret(...)
  for i = 1, select("#", ...) do
    local s = select(i, ...)
    if type(s) == "string" then assert.is_nil(s:find(SECRET, 1, true), "the secret was echoed: " .. s) end
  end
end

describe("paimon.open with FileIO options", function()
  local dir
  before_each(function() dir = uri_copy(BRANCHED) end)
  after_each(function() H.rmdir(dir) end)

  it("opens a URI table whose FileIO the options configure, every branch through it", function()
    local opts = {["pmtest.root"] = dir, ["pmtest.secret-key"] = SECRET}
    local t = assert(paimon.open("pmtest://bk/t", {options = opts}))
    assert.equals("pmtest://bk/t", t:path())
    local l = assert(paimon.open(dir .. "/bk/t"))
    local function ids(tbl)
      local out = {}
      for s in assert(tbl:snapshots()) do out[#out + 1] = s.id .. " " .. s.base_manifest_list end
      return out
    end
    assert.same(ids(l), ids(t))
    local v = assert(t:verify())
    assert.is_true(v.ok)
    assert.equals(0, v.not_checked)
    local b = assert(paimon.open("pmtest://bk/t", {branch = "test", options = opts}))
    assert.equals("test", b:branch())
    no_secret(tostring(t), tostring(b), json.encode(v))
    t:close(); b:close(); l:close()
  end)

  it("does not reach the table without them", function()
    local ok, err = pcall(paimon.open, "pmtest://bk/t")
    assert.is_false(ok)
    assert.matches("pmtest.root", err, 1, true)
  end)

  it("refuses a misspelt key of the FileIO by name, never showing the value", function()
    local ok, err = pcall(paimon.open, "pmtest://bk/t", {options = {["pmtest.root"] = dir, ["pmtest.secret-kye"] = SECRET}})
    assert.is_false(ok)
    assert.matches("pmtest.secret-kye", err, 1, true)
    no_secret(err)
    -- another FileIO's keys are table options here: allowed
    local t = assert(paimon.open("pmtest://bk/t", {options = {["pmtest.root"] = dir, ["s3.endpiont"] = "x", bucket = "-1"}}))
    t:close()
  end)

  it("takes strings, numbers and booleans; anything else raises naming the key", function()
    for _, bad in ipairs{{}, function() end, 0 / 0, math.huge} do
      local ok, err = pcall(paimon.open, "pmtest://bk/t", {options = {["pmtest.root"] = dir, ["s3.secret-key"] = bad}})
      assert.is_false(ok)
      assert.matches("options['s3.secret-key']", err, 1, true)
    end
    local ok, err = pcall(paimon.open, "pmtest://bk/t", {options = {[1] = SECRET}})
    assert.is_false(ok)
    assert.matches("option names must be strings", err, 1, true)
    no_secret(err)
    ok, err = pcall(paimon.open, "pmtest://bk/t", {options = SECRET})
    assert.is_false(ok)
    no_secret(err)
  end)

  it("converts numbers and booleans exactly", function()
    -- relative roots named by the converted value, seen from a temp cwd
    local names = {"3", "0.1", "9007199254740992", "0.3333333333333333", "0.30000000000000004", "true", "-0.5"}
    for _, n in ipairs(names) do
      local _, err, code = H.run("mkdir -p " .. H.sh_quote(dir .. "/" .. n) .. " && cp -R " ..
                                 H.sh_quote(dir .. "/bk") .. " " .. H.sh_quote(dir .. "/" .. n .. "/bk"))
      assert(code == 0, err)
    end
    local script = dir .. "/conv.lua"
    H.write_file(script, [[
local paimon = require "paimon"
for _, v in ipairs{3, 0.1, 2^53, 1/3, 0.1 + 0.2, true, -0.5} do
  local t = paimon.open("pmtest://bk/t", {options = {["pmtest.root"] = v}})
  io.write(t and "ok " or "fail ", tostring(v), "\n")
end]])
    local out, err, code = H.run("cd " .. H.sh_quote(dir) .. " && " .. H.sh_quote(H.cli) .. " " .. H.sh_quote(script))
    assert.equals(0, code, err)
    assert.is_nil(out:find("fail", 1, true), out)
    local n = 0
    for _ in out:gmatch("ok ") do n = n + 1 end
    assert.equals(7, n, out)
  end)

  it("paimon.create_table hands its options to the FileIO, not to the schema", function()
    local opts = {options = {["pmtest.root"] = dir, ["pmtest.secret-key"] = SECRET}}
    local t = assert(paimon.create_table("pmtest://bk/new", {fields = {{name = "id", type = "BIGINT"}},
                                                             options = {["file.format"] = "avro"}}, opts))
    assert.equals("pmtest://bk/new", t:path())
    t:close()
    local schema = H.read_file(dir .. "/bk/new/schema/schema-0")
    assert.truthy(schema:find("file.format", 1, true))
    assert.is_nil(schema:find("pmtest", 1, true))
    no_secret(schema)
    local ok, err = pcall(paimon.create_table, "pmtest://bk/x", {fields = {{name = "id", type = "BIGINT"}}},
                          {options = opts.options, branch = "b"})
    assert.is_false(ok)
    assert.matches("unknown option 'branch'", err, 1, true)
  end)
end)

describe("--option KEY=VALUE on every script", function()
  -- every script in scripts/, listed, so a new one cannot be left out
  local SCRIPTS = {}
  for name in io.popen("ls " .. H.sh_quote(H.root .. "/scripts")):lines() do
    if name:match("%.lua$") then SCRIPTS[#SCRIPTS + 1] = name end
  end
  table.sort(SCRIPTS)
  local dir
  before_each(function() dir = uri_copy(BRANCHED) end)
  after_each(function() H.rmdir(dir) end)

  it("is in every script's --help", function()
    for _, s in ipairs(SCRIPTS) do
      local out, _, code = H.script(s, {"--help"})
      assert.equals(0, code, s)
      assert.truthy(out:find("--option KEY=VALUE", 1, true), s)
    end
  end)

  it("refuses bad forms with exit 2 in every script, never echoing what was given", function()
    for _, s in ipairs(SCRIPTS) do
      for _, bad in ipairs{{"--option"}, {"--option", "=" .. SECRET}, {"--option", SECRET},
                           {"--option==" .. SECRET}, {"--option", "k=1", "--option", "k=" .. SECRET}} do
        local args = {"pmtest://bk/t"}
        if s == "inspect.lua" then args[2] = "snapshots" end
        for _, a in ipairs(bad) do args[#args + 1] = a end
        local out, err, code = H.script(s, args)
        assert.equals(2, code, s .. " " .. table.concat(bad, " ") .. ": " .. err)
        assert.truthy(err:find("--option", 1, true), err)
        no_secret(out, err)
      end
    end
    -- an unknown flag with a value: the value is not shown either
    local out, err, code = H.script("verify.lua", {"pmtest://bk/t", "--s3.secret-key=" .. SECRET})
    assert.equals(2, code)
    assert.truthy(err:find("unknown option --s3.secret-key", 1, true), err)
    no_secret(out, err)
  end)

  -- issue 22 item 5: /proc/PID/cmdline shows every argument to every local
  -- user; a credential given there draws a warning naming the key (never
  -- the value) and pointing to the environment or a profile.
  it("warns in every script when --option carries a credential", function()
    for _, s in ipairs(SCRIPTS) do
      local args = {"pmtest://bk/t", "--option", "pmtest.secret-key=" .. SECRET, "--option",
                    "s3.endpoint=http://ep-user:" .. SECRET .. "@127.0.0.1:9"}
      if s == "inspect.lua" then table.insert(args, 2, "snapshots") end
      local out, err = H.script(s, args)
      assert.truthy(err:find(s .. ": warning: --option pmtest.secret-key puts a credential on the command line", 1,
                             true), s .. ": " .. err)
      assert.truthy(err:find("--option s3.endpoint puts a credential on the command line", 1, true), s .. ": " .. err)
      assert.truthy(err:find("AWS_SECRET_ACCESS_KEY", 1, true), err)
      no_secret(out, err)
      -- no warning without one
      local _, err2 = H.script(s, {"pmtest://bk/t", "--option", "pmtest.root=" .. dir, "--option",
                                   "s3.endpoint=http://127.0.0.1:9"})
      assert.is_nil(err2:find("puts a credential", 1, true), s .. ": " .. err2)
    end
  end)

  it("reaches the FileIO in every script (a misspelt key: exit 2, by name)", function()
    local function run(s, args, want)
      local all = {}
      for _, a in ipairs(args) do all[#all + 1] = a end
      for _, a in ipairs{"--option", "pmtest.root=" .. dir, "--option", "pmtest.secret-key=" .. SECRET .. "=x"} do
        all[#all + 1] = a
      end
      local out, err, code = H.script(s, all)
      assert.equals(want or 0, code, s .. ": " .. err .. out)
      no_secret(out, err)
      return out, err
    end
    local T = "pmtest://bk/t"
    local out = run("inspect.lua", {T, "snapshots", "--json"})
    local local_out = H.script("inspect.lua", {dir .. "/bk/t", "snapshots", "--json"})
    assert.same(json.decode(local_out), json.decode(out))
    run("inspect.lua", {T, "options", "--json"})
    run("verify.lua", {T, "--json"})
    run("remove_orphan_files.lua", {T, "--dry-run", "--json"})
    run("expire.lua", {T, "--retain-min", "1", "--dry-run", "--json"})
    run("expire_partitions.lua", {T, "--expiration-time", "36500d", "--dry-run", "--json"})
    run("drop_partition.lua", {T, "--partition", "pt=1", "--dry-run", "--json"})
    run("compact_manifest.lua", {T, "--dry-run", "--json"})
    -- the lifecycle scripts (they once opened the table without --option)
    run("tag.lua", {T, "list", "--json"})
    run("tag.lua", {T, "create", "via-option", "--snapshot", "1", "--dry-run", "--json"})
    run("branch.lua", {T, "list", "--json"})
    run("consumer.lua", {T, "list", "--json"})
    run("rollback.lua", {T, "--to-snapshot", "1", "--dry-run", "--json"})
    run("expire_changelogs.lua", {T, "--dry-run", "--json"})
    out = run("create_table.lua", {"pmtest://bk/new", "--field", "id:BIGINT", "--option", "bucket=-1", "--json"})
    local created = json.decode(out)
    assert.equals("pmtest://bk/new", created.path)
    assert.equals("-1", created.options.bucket)
    assert.is_nil(created.options["pmtest.root"])
    assert.is_nil(created.options["pmtest.secret-key"])
    no_secret(H.read_file(dir .. "/bk/new/schema/schema-0"))
    H.write_file(dir .. "/rows.jsonl", '{"id": 7}\n{"id": 8}\n')
    run("write.lua", {"pmtest://bk/new", "--input", dir .. "/rows.jsonl", "--json"})
    out = run("read.lua", {"pmtest://bk/new"})
    assert.equals('{"id":7}\n{"id":8}\n', out)
    local o2, e2, c2 = H.script("inspect.lua", {T, "snapshots", "--json", "--option", "pmtest.root=" .. dir,
                                               "--option", "pmtest.secret-kye=" .. SECRET})
    assert.equals(2, c2)
    assert.truthy(e2:find("pmtest.secret-kye", 1, true), e2)
    no_secret(o2, e2)
  end)
end)

describe("resty.paimon with FileIO options", function()
  local resty = require "resty.paimon"
  local dir
  before_each(function() dir = uri_copy(BRANCHED) end)
  after_each(function() H.rmdir(dir) end)

  it("takes options per call and from new{}", function()
    local opts = {["pmtest.root"] = dir, ["pmtest.secret-key"] = SECRET}
    local rows = assert(resty.snapshots("pmtest://bk/t", {options = opts}))
    local local_rows = assert(resty.snapshots(dir .. "/bk/t"))
    assert.same(local_rows, rows)
    local p = resty.new{warehouse = "pmtest://wh", options = opts}
    local v = assert(p:verify("pmtest://bk/t"))
    assert.is_true(v.ok)
    local r = assert(p:remove_orphan_files("pmtest://bk/t", {dry_run = true}))
    assert.equals("pmtest://bk/t", r.table)
    assert.truthy(p:latest("pmtest://bk/t"))
    assert.truthy(p:files("pmtest://bk/t"))
    assert.truthy(p:expire("pmtest://bk/t", {dry_run = true, retain_min = 1}))
    assert.truthy(p:drop_partitions("pmtest://bk/t", {pt = 1}, {dry_run = true}))
    -- the tag functions take new{}'s options too
    assert.truthy(p:tags("pmtest://bk/t"))
    assert.truthy(p:create_tag("pmtest://bk/t", "via-options", {dry_run = true}))
    assert.truthy(p:expire_tags("pmtest://bk/t", {dry_run = true}))
    no_secret(resty.to_json(rows), resty.to_json(v), resty.to_json(r))
    -- without options the table is not reachable
    local none, err, code = resty.snapshots("pmtest://bk/t")
    assert.is_nil(none)
    assert.equals("misuse", code)
    assert.matches("pmtest.root", err, 1, true)
  end)

  it("refuses a misspelt key and bad values without showing them", function()
    local res, err, code = resty.verify("pmtest://bk/t", {options = {["pmtest.root"] = dir, ["pmtest.secret-kye"] = SECRET}})
    assert.is_nil(res)
    assert.equals("misuse", code)
    assert.matches("pmtest.secret-kye", err, 1, true)
    no_secret(err)
    local ok, e2 = pcall(resty.snapshots, "pmtest://bk/t", {options = {["s3.secret-key"] = {SECRET}}})
    assert.is_false(ok)
    assert.matches("options['s3.secret-key']", e2, 1, true)
    no_secret(e2)
    ok, e2 = pcall(resty.new, {options = SECRET})
    assert.is_false(ok)
    no_secret(e2)
  end)
end)
