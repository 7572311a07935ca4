-- ALTER TABLE (alter_table.lua, t:alter_table; Java's SchemaManager.commitChanges)
-- and reads that follow schema evolution by field id (Java's SchemaEvolutionUtil).
local H = require "helper"
local paimon = require "paimon"
local cjson = require "cjson"

local PK_FIXTURE = "cpp-parquet-pk_table_with_alter_table"
local BRANCH_FIXTURE = "cpp-parquet-append_table_with_append_pt_branch"

local function alter(path, ...)
  return H.script("alter_table.lua", {path, ...})
end

local function without_time(text)
  return (text:gsub('\n  "timeMillis" : %d+', ""))
end

local function schema_file(path, id)
  return H.read_file(path .. "/schema/schema-" .. id)
end

local function rows(path)
  local out, err, code = H.script("read.lua", {path})
  assert(code == 0, err)
  local v = {}
  for line in out:gmatch("[^\n]+") do v[#v + 1] = cjson.decode(line) end
  table.sort(v, function(a, b) return a.id < b.id end)
  return v
end

local function new_table(dir, ...)
  local path = dir .. "/t"
  local _, err, code = H.script("create_table.lua", {path, ...})
  assert(code == 0, err)
  return path
end

local function write(path, line)
  local f = os.tmpname()
  H.write_file(f, line .. "\n")
  local _, err, code = H.script("write.lua", {path, "--input", f})
  os.remove(f)
  assert(code == 0, err)
end

describe("alter_table against Java-written schemas", function()
  it("the changes behind pk_table_with_alter_table's schema-1 give Java's schema-1", function()
    local path, dir = H.copy_table(H.fixture(PK_FIXTURE))
    local java = schema_file(path, 1)
    os.remove(path .. "/schema/schema-1")
    local t = assert(paimon.open(path))
    local r = assert(t:alter_table({
      {kind = "dropColumn", column = "a"},
      {kind = "dropColumn", column = "c"},
      {kind = "renameColumn", column = "b", new_name = "c"},
      {kind = "renameColumn", column = "d", new_name = "a"},
      {kind = "addColumn", column = "d", type = "INT", comment = ""},
      {kind = "addColumn", column = "e", type = "INT"},
      {kind = "renameColumn", column = "key2", new_name = "key_2"},   -- Java renames primary keys
      {kind = "updateColumnPosition", column = "key1", first = true},
      {kind = "updateColumnPosition", column = "k", after = "key1"},
      {kind = "updateColumnPosition", column = "key_2", after = "k"},
      {kind = "updateColumnPosition", column = "c", after = "key_2"},
      {kind = "updateColumnPosition", column = "d", after = "c"},
      {kind = "updateColumnPosition", column = "a", after = "d"},
      {kind = "updateColumnPosition", column = "key0", after = "a"},
    }))
    t:close()
    assert.are.equal(1, r.schema_id)
    assert.are.equal(without_time(java), without_time(schema_file(path, 1)))
    assert.are.equal(r.schema, schema_file(path, 1))
    H.rmdir(dir)
  end)

  it("setOption and addColumn give append_pt_branch's schema-1 and schema-2 (options in Java's order)", function()
    local path, dir = H.copy_table(H.fixture(BRANCH_FIXTURE))
    local java1, java2 = schema_file(path, 1), schema_file(path, 2)
    os.remove(path .. "/schema/schema-2")
    os.remove(path .. "/schema/schema-1")
    local _, err, code = alter(path, "set", "scan.fallback-branch=test")
    assert.are.equal(0, code, err)
    assert.are.equal(without_time(java1), without_time(schema_file(path, 1)))
    _, err, code = alter(path, "add-column", "value2:INT")
    assert.are.equal(0, code, err)
    assert.are.equal(without_time(java2), without_time(schema_file(path, 2)))
    H.rmdir(dir)
  end)
end)

describe("alter_table.lua subcommands", function()
  local dir, path
  before_each(function()
    dir = H.tmpdir()
    path = new_table(dir, "--field", "id:BIGINT NOT NULL", "--field", "a:INT", "--field", "b:STRING",
                     "--field", "dt:STRING", "--partition", "dt")
  end)
  after_each(function() H.rmdir(dir) end)

  local function latest()
    return cjson.decode(schema_file(path, H.run("ls " .. path .. "/schema | sed 's/schema-//' | sort -n | tail -1")
                                             :match("%d+")))
  end
  local function names(s)
    local v = {}
    for i, f in ipairs(s.fields) do v[i] = f.name .. "#" .. string.format("%d", f.id) end
    return table.concat(v, " ")
  end

  it("set, reset and comment", function()
    local _, err, code = alter(path, "set", "snapshot.num-retained.max=5", "snapshot.num-retained.min=1", "a.b=c")
    assert.are.equal(0, code, err)
    local s = latest()
    assert.are.equal(1, s.id)
    assert.are.equal("5", s.options["snapshot.num-retained.max"])
    _, err, code = alter(path, "reset", "a.b")
    assert.are.equal(0, code, err)
    assert.is_nil(latest().options["a.b"])
    _, err, code = alter(path, "comment", "hello")
    assert.are.equal(0, code, err)
    assert.are.equal("hello", latest().comment)
    -- the table's maintenance sees the option at once
    local t = assert(paimon.open(path))
    assert.are.equal("5", t:option("snapshot.num-retained.max"))
    t:close()
  end)

  it("add-column at the end, --first, --after with --comment; ids from highestFieldId, never reused", function()
    assert.are.equal(0, select(3, alter(path, "add-column", "c:DOUBLE")))
    assert.are.equal(0, select(3, alter(path, "add-column", "z:INT", "--first")))
    assert.are.equal(0, select(3, alter(path, "add-column", "m:STRING", "--after", "a", "--comment", "note")))
    local s = latest()
    assert.are.equal("z#5 id#0 a#1 m#6 b#2 dt#3 c#4", names(s))
    assert.are.equal("note", s.fields[4].description)
    assert.are.equal(6, s.highestFieldId)
    assert.are.equal(0, select(3, alter(path, "drop-column", "m")))
    assert.are.equal(0, select(3, alter(path, "add-column", "m:STRING")))
    s = latest()
    assert.are.equal("z#5 id#0 a#1 b#2 dt#3 c#4 m#7", names(s))
    assert.are.equal(7, s.highestFieldId)
  end)

  it("rename-column, drop-column, alter-column --type / --nullable / --not-null / --comment / --after", function()
    assert.are.equal(0, select(3, alter(path, "rename-column", "b", "bee")))
    assert.are.equal(0, select(3, alter(path, "drop-column", "a")))
    assert.are.equal(0, select(3, alter(path, "add-column", "n:INT")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "n", "--type", "BIGINT", "--comment", "big")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "n", "--after", "id")))
    local s = latest()
    assert.are.equal("id#0 n#4 bee#2 dt#3", names(s))
    assert.are.equal("BIGINT", s.fields[2].type)
    assert.are.equal("big", s.fields[2].description)
    assert.are.equal(0, select(3, alter(path, "alter-column", "id", "--nullable")))
    assert.are.equal("BIGINT", latest().fields[1].type)
    local _, err, code = alter(path, "alter-column", "n", "--not-null")
    assert.are.equal(2, code)
    assert.matches("Cannot update column type from nullable to non nullable for n", err, 1, true)
  end)

  it("--json: a refusal is one {error, code} object, exit 2", function()
    local out, err, code = alter(path, "drop-column", "dt", "--json")
    assert.are.equal(2, code, err)
    local obj = cjson.decode(out)
    assert.are.equal("misuse", obj.code)
    assert.are.equal("Cannot drop partition key or primary key: [dt]", obj.error)
  end)

  it("--dry-run prints the new schema and writes nothing; --json gives the schema object", function()
    local out, err, code = alter(path, "add-column", "c:INT", "--dry-run", "--json")
    assert.are.equal(0, code, err)
    local r = cjson.decode(out)
    assert.are.equal(1, r.schema_id)
    assert.is_true(r.dry_run)
    assert.are.equal("c", r.schema.fields[5].name)
    assert.is_false(H.exists(path .. "/schema/schema-1"))
  end)

  -- each refusal: Java's message, exit 2, no schema file written
  local refusals = {
    {{"drop-column", "dt"}, "Cannot drop partition key or primary key: [dt]"},
    {{"rename-column", "dt", "day"}, "Cannot rename partition column: [dt]"},
    {{"alter-column", "dt", "--type", "INT"}, "Cannot update partition column: [dt]"},
    {{"alter-column", "a", "--type", "ARRAY<INT>"},
     "Column type a[INT] cannot be converted to ARRAY<INT> without loosing information."},
    {{"alter-column", "b", "--type", "BOOLEAN NOT NULL"},
     "Cannot update column type from nullable to non nullable for b."},
    {{"drop-column", "nope"}, "Column nope does not exist in the t table."},
    {{"rename-column", "a", "b"}, "Column b already exists in the t table."},
    {{"add-column", "a:INT"}, "Column a already exists in the t table."},
    {{"add-column", "x:INT NOT NULL"}, "Column x cannot specify NOT NULL in the t table."},
    {{"alter-column", "nope", "--first"}, "Field name not found: nope"},
    {{"set", "path=/x"}, "Change path is not supported yet."},
  }
  for _, c in ipairs(refusals) do
    it("refuses " .. table.concat(c[1], " "), function()
      local args = {table.unpack(c[1])}
      local _, err, code = alter(path, table.unpack(args))
      assert.are.equal(2, code, err)
      assert.matches(c[2], err, 1, true)
      assert.is_false(H.exists(path .. "/schema/schema-1"))
    end)
  end

  it("once the table has a snapshot: immutable options and bucket -1 are refused with Java's messages", function()
    write(path, '{"id": 1, "a": 1, "b": "x", "dt": "d"}')
    for _, c in ipairs({{"merge-engine=partial-update", "Change 'merge-engine' is not supported yet."},
                        {"bucket-key=a", "Change 'bucket-key' is not supported yet."},
                        {"bucket=4", "Cannot change bucket when it is -1."}}) do
      local _, err, code = alter(path, "set", c[1])
      assert.are.equal(2, code, err)
      assert.matches(c[2], err, 1, true)
    end
    local _, err, code = alter(path, "reset", "bucket")
    assert.are.equal(2, code)
    assert.matches("Cannot reset bucket.", err, 1, true)
    assert.is_false(H.exists(path .. "/schema/schema-1"))
    -- an empty table takes them (Java checks options only with snapshots)
    local dir2 = H.tmpdir()
    local p2 = new_table(dir2, "--field", "a:INT")
    assert.are.equal(0, select(3, alter(p2, "set", "merge-engine=partial-update")))
    H.rmdir(dir2)
  end)

  it("an option set by alter_table drives the next expiration", function()
    for i = 1, 4 do write(path, '{"id": ' .. i .. ', "a": 1, "b": "x", "dt": "d"}') end
    assert.are.equal(0, select(3, alter(path, "set", "snapshot.num-retained.max=2", "snapshot.num-retained.min=1")))
    local _, err, code = H.script("expire.lua", {path})
    assert.are.equal(0, code, err)
    local ids = {}
    for _, s in ipairs(H.inspect_json(path, "snapshots")) do ids[#ids + 1] = s.snapshot_id end
    assert.are.same({3, 4}, ids)
  end)

  it("alter_table set snapshot.num-retained.max=2, then maintain.lua keeps 2 (the issue's case)", function()
    assert.are.equal(0, select(3, alter(path, "set", "write-only=true")))      -- writes leave the upkeep to us
    for i = 1, 5 do write(path, '{"id": ' .. i .. ', "a": 1, "b": "x", "dt": "d"}') end
    assert.are.equal(5, #H.inspect_json(path, "snapshots"))
    assert.are.equal(0, select(3, alter(path, "set", "snapshot.num-retained.max=2", "snapshot.num-retained.min=1")))
    local _, err, code = H.script("maintain.lua", {path})
    assert.are.equal(0, code, err)
    local ids = {}
    for _, s in ipairs(H.inspect_json(path, "snapshots")) do ids[#ids + 1] = s.snapshot_id end
    assert.are.same({4, 5}, ids)
  end)

  it("--branch alters the branch's schema only", function()
    write(path, '{"id": 1, "a": 1, "b": "x", "dt": "d"}')
    assert.are.equal(0, select(3, H.script("branch.lua", {path, "create", "dev"})))
    local _, err, code = alter(path, "add-column", "c:INT", "--branch", "dev")
    assert.are.equal(0, code, err)
    assert.is_true(H.exists(path .. "/branch/branch-dev/schema/schema-1"))
    assert.is_false(H.exists(path .. "/schema/schema-1"))
  end)
end)

describe("alter_table on a primary-key table", function()
  it("refuses to drop, retype or make nullable a primary key; renames it as Java does", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "k:INT", "--field", "dt:STRING", "--field", "v:STRING",
                           "--partition", "dt", "--primary-key", "dt", "--primary-key", "k",
                           "--option", "bucket=2")
    for _, c in ipairs({{{"drop-column", "k"}, "Cannot drop partition key or primary key: [k]"},
                        {{"alter-column", "k", "--type", "BIGINT"}, "Cannot update primary key"},
                        {{"alter-column", "k", "--nullable"}, "Cannot change nullability of primary key"}}) do
      local _, err, code = alter(path, table.unpack(c[1]))
      assert.are.equal(2, code, err)
      assert.matches(c[2], err, 1, true)
    end
    assert.is_false(H.exists(path .. "/schema/schema-1"))
    assert.are.equal(0, select(3, alter(path, "rename-column", "k", "id")))
    local s = cjson.decode(schema_file(path, 1))
    assert.are.same({"dt", "id"}, s.primaryKeys)
    assert.are.equal("INT NOT NULL", s.fields[1].type)
    H.rmdir(dir)
  end)
end)

describe("alter_table on a URI table", function()
  it("takes --option FileIO options (a pmtest:// table, the object-store path)", function()
    local dir = H.tmpdir()
    assert(H.run("mkdir " .. H.sh_quote(dir .. "/bk")))
    local path = dir .. "/bk/t"
    local _, err, rc = H.script("create_table.lua", {path, "--field", "a:INT"})
    assert.are.equal(0, rc, err)
    _, err, rc = alter("pmtest://bk/t", "add-column", "b:STRING", "--option", "pmtest.root=" .. dir)
    assert.are.equal(0, rc, err)
    assert.are.equal("b", cjson.decode(schema_file(path, 1)).fields[2].name)
    _, err, rc = alter("pmtest://bk/t", "drop-column", "nope", "--option", "pmtest.root=" .. dir)
    assert.are.equal(2, rc, err)
    H.rmdir(dir)
  end)
end)

describe("alter_table concurrency", function()
  it("two processes adding columns at once: every change lands once, ids unique, schemas contiguous", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "a:INT")
    local cmds = {}
    for p = 1, 2 do
      local parts = {}
      for i = 1, 8 do
        parts[#parts + 1] = H.sh_quote(H.cli) .. " alter_table.lua " .. H.sh_quote(path) ..
                            " add-column p" .. p .. "c" .. i .. ":INT >/dev/null || echo FAIL"
      end
      cmds[p] = "(" .. table.concat(parts, "; ") .. ")"
    end
    local out = H.run(cmds[1] .. " & " .. cmds[2] .. " & wait")
    assert.are.equal("", out)
    local ls = H.run("ls " .. path .. "/schema | wc -l")
    assert.are.equal(17, tonumber(ls))
    local s = cjson.decode(schema_file(path, 16))
    assert.are.equal(17, #s.fields)
    assert.are.equal(16, s.highestFieldId)
    local seen = {}
    for _, f in ipairs(s.fields) do
      assert.is_nil(seen[f.id])
      seen[f.id] = true
    end
    H.rmdir(dir)
  end)

  it("a schema written by someone else first: the change goes on top of it", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "a:INT", "--field", "b:INT")
    -- another writer's schema-1 (dropped b) is already there
    local s1 = schema_file(path, 0):gsub(', {\n    "id" : 1,\n    "name" : "b",\n    "type" : "INT"\n  }', "")
                                     :gsub('"id" : 0,\n  "fields"', '"id" : 1,\n  "fields"')
    H.write_file(path .. "/schema/schema-1", s1)
    local _, err, code = alter(path, "add-column", "c:INT")
    assert.are.equal(0, code, err)
    local s = cjson.decode(schema_file(path, 2))
    assert.are.equal(2, #s.fields)
    assert.are.equal("c", s.fields[2].name)
    assert.are.equal(2, s.fields[2].id)
    _, err, code = alter(path, "rename-column", "b", "bb")
    assert.are.equal(2, code)
    assert.matches("Column b does not exist", err, 1, true)
    H.rmdir(dir)
  end)
end)

describe("reads follow schema evolution by field id", function()
  it("rows written before and after add / rename / drop / re-add of a name", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "id:BIGINT NOT NULL", "--field", "a:INT", "--field", "b:STRING",
                           "--field", "dt:STRING", "--partition", "dt")
    write(path, '{"id": 1, "a": 10, "b": "x", "dt": "d1"}')
    assert.are.equal(0, select(3, alter(path, "rename-column", "b", "bee")))
    assert.are.equal(0, select(3, alter(path, "drop-column", "a")))
    assert.are.equal(0, select(3, alter(path, "add-column", "a:BIGINT")))   -- a new column, id 4
    assert.are.equal(0, select(3, alter(path, "add-column", "c:DOUBLE")))
    write(path, '{"id": 2, "a": 20, "bee": "y", "c": 1.5, "dt": "d1"}')
    local r = rows(path)
    assert.are.same({id = 1, bee = "x", dt = "d1", a = cjson.null, c = cjson.null}, r[1])
    assert.are.same({id = 2, bee = "y", dt = "d1", a = 20, c = 1.5}, r[2])
    -- the write after the alters carries the new schema id
    local files = H.inspect_json(path, "files")
    local ids = {}
    for _, f in ipairs(files) do ids[#ids + 1] = f.schema_id end
    table.sort(ids)
    assert.are.same({0, 4}, ids)
    H.rmdir(dir)
  end)

  it("type changes are cast on read as Java casts; a cast it cannot do fails naming the column", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "id:INT", "--field", "x:INT", "--field", "y:INT",
                           "--field", "z:DECIMAL(5, 2)", "--field", "f:FLOAT", "--field", "s:STRING")
    write(path, '{"id": 1, "x": 2147483647, "y": 7, "z": "1.25", "f": 1.5, "s": "2024-01-02"}')
    assert.are.equal(0, select(3, alter(path, "alter-column", "x", "--type", "BIGINT")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "y", "--type", "STRING")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "z", "--type", "DECIMAL(10, 4)")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "f", "--type", "DOUBLE")))
    write(path, '{"id": 2, "x": 9007199254740991, "y": "eight", "z": "2.5", "f": 0.25}')
    local r = rows(path)
    assert.are.same({id = 1, x = 2147483647, y = "7", z = "1.2500", f = 1.5, s = "2024-01-02"}, r[1])
    assert.are.same({id = 2, x = 9007199254740991, y = "eight", z = "2.5000", f = 0.25, s = cjson.null}, r[2])
    assert.are.equal(0, select(3, alter(path, "alter-column", "s", "--type", "DATE")))   -- Java allows it
    local _, err, code = H.script("read.lua", {path})
    assert.are.equal(1, code)
    assert.matches("column 's': written as STRING under schema-0, the table now has DATE", err, 1, true)
    H.rmdir(dir)
  end)
end)

describe("timestamps after an alter", function()
  it("precision changes truncate toward zero as Java's DateTimeUtils.truncate; DATE to TIMESTAMP is midnight", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "id:INT", "--field", "a:TIMESTAMP(6)", "--field", "b:TIMESTAMP(3)",
                           "--field", "d:DATE", "--field", "c:TIMESTAMP(6)")
    write(path, '{"id": 1, "a": "2024-01-02 03:04:05.123456", "b": "1969-12-31 23:59:59.999", ' ..
                '"d": "2024-03-05", "c": "2024-01-02 03:04:05.123456"}')
    assert.are.equal(0, select(3, alter(path, "alter-column", "a", "--type", "TIMESTAMP(3)")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "b", "--type", "TIMESTAMP(0)")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "d", "--type", "TIMESTAMP(3)")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "c", "--type", "TIMESTAMP(9)")))
    assert.are.same({{id = 1, a = "2024-01-02 03:04:05.123", b = "1970-01-01 00:00:00",
                      d = "2024-03-05 00:00:00.000", c = "2024-01-02 03:04:05.123456000"}}, rows(path))
    H.rmdir(dir)
  end)
end)

describe("t:alter_table (Lua API)", function()
  it("the handle takes the new schema: t:schema() and new writers follow it", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "id:INT", "--field", "a:STRING")
    local t = assert(paimon.open(path))
    local r = assert(t:alter_table({{kind = "addColumn", column = "b", type = "BIGINT"},
                                    {kind = "renameColumn", column = "a", new_name = "aa"}}))
    assert.are.equal(1, r.schema_id)
    assert.is_false(r.dry_run)
    local s = t:schema()
    assert.are.equal(1, s.id)
    assert.are.equal("aa", s.fields[2].name)
    local w = assert(t:new_write{})
    w:write{id = 1, aa = "x", b = 2}
    local msgs = assert(w:prepare_commit())
    assert.are.equal(1, msgs[1].file.schema_id)
    assert(t:new_commit{}:commit(msgs))
    local got = {}
    for row in t:latest_snapshot():read{} do got[#got + 1] = row end
    assert.are.same({{id = 1, aa = "x", b = 2}}, got)
    -- misuse and refusals raise; an unknown kind names Java's kinds
    assert.has_error(function() t:alter_table({{kind = "dropColumn", column = "nope"}}) end,
                     "Column nope does not exist in the t table.")
    assert.has_error(function() t:alter_table({{kind = "addIndex"}}) end)
    t:close()
    H.rmdir(dir)
  end)
end)

describe("writers and row iterators opened before an alter on the same handle", function()
  it("keep the schema they started with", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "id:INT", "--field", "a:STRING", "--field", "b:STRING")
    local t = assert(paimon.open(path))
    local w = assert(t:new_write{})
    w:write{id = 1, a = "x", b = "y"}
    assert(t:alter_table({{kind = "dropColumn", column = "b"}, {kind = "dropColumn", column = "a"}}))
    w:write{id = 2, a = "x2", b = "y2"}                   -- still the three columns of schema 0
    local msgs = assert(w:prepare_commit())
    assert.are.equal(0, msgs[1].file.schema_id)
    assert(t:new_commit{}:commit(msgs))
    local w2 = assert(t:new_write{})
    w2:write{id = 3}
    assert.has_error(function() w2:write{id = 4, a = "gone"} end)
    assert(t:new_commit{}:commit(assert(w2:prepare_commit())))
    local seen = {}
    for row in t:latest_snapshot():read{} do
      seen[#seen + 1] = row.id
      if #seen == 1 then assert(t:alter_table({{kind = "addColumn", column = "z", type = "INT"}})) end
      assert.is_nil(row.z)                                  -- the iteration keeps its schema
    end
    table.sort(seen)
    assert.are.same({1, 2, 3}, seen)
    t:close()
    H.rmdir(dir)
  end)
end)

describe("resty.paimon alter_table (inline)", function()
  it("alters, dry-runs, answers refusals as misuse and refuses unknown options", function()
    local rp = require "resty.paimon"
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "id:INT", "--field", "dt:STRING", "--partition", "dt")
    local r = assert(rp.alter_table(path, {{kind = "addColumn", column = "c", type = "INT"}}, {dry_run = true}))
    assert.are.equal(1, r.schema_id)
    assert.is_false(H.exists(path .. "/schema/schema-1"))
    r = assert(rp.alter_table(path, {{kind = "setOption", key = "k", value = "v"}}))
    assert.is_true(H.exists(path .. "/schema/schema-1"))
    local ok, msg, code = rp.alter_table(path, {{kind = "dropColumn", column = "dt"}})
    assert.is_nil(ok)
    assert.are.equal("misuse", code)
    assert.matches("Cannot drop partition key or primary key: [dt]", msg, 1, true)
    assert.has_error(function() rp.alter_table(path, {}, {dryrun = true}) end)
    H.rmdir(dir)
  end)
end)

describe("inspect files: value stats over the latest schema (Java's Files table)", function()
  local STATS = {"null_value_counts", "min_value_stats", "max_value_stats"}

  local function by_path(rows)
    local m = {}
    for _, r in ipairs(rows) do
      local v = {}
      for _, k in ipairs(STATS) do v[k] = r[k] end
      m[r.file_path] = v
    end
    return m
  end

  local function same_as_pyref(path)
    local ours = by_path(H.inspect_json(path, "files"))
    local theirs = by_path(H.pyref_json(path, "files"))
    assert.are.same(theirs, ours)
    return ours
  end

  it("match the independent reader on every Java fixture with Avro manifests", function()
    local n = 0
    for _, f in ipairs(H.fixture_tables()) do
      if not f.name:match("orc%-manifests") then
        same_as_pyref(f.path)
        n = n + 1
      end
    end
    assert.is_true(n >= 10)
  end)

  it("pk_table_with_alter_table: files of schema-0 show the renamed columns, the added ones unknown", function()
    local stats = same_as_pyref(H.fixture(PK_FIXTURE))
    local old = 0
    for _, s in pairs(stats) do
      if s.min_value_stats.d == cjson.null and s.null_value_counts.d == cjson.null then
        old = old + 1
        -- written when a was b (id 4 -> renamed c) and d (id 6 -> renamed a)
        assert.is_number(s.min_value_stats.a)
        assert.is_number(s.min_value_stats.c)
      end
    end
    assert.is_true(old > 0)
  end)

  it("a table altered between writes: dropped, renamed, re-added columns", function()
    local dir = H.tmpdir()
    local path = new_table(dir, "--field", "id:BIGINT NOT NULL", "--field", "a:INT", "--field", "b:STRING")
    write(path, '{"id": 1, "a": 10, "b": "x"}')
    assert.are.equal(0, select(3, alter(path, "rename-column", "b", "bee")))
    assert.are.equal(0, select(3, alter(path, "drop-column", "a")))
    assert.are.equal(0, select(3, alter(path, "add-column", "a:INT")))
    write(path, '{"id": 2, "a": 20, "bee": "y"}')
    local rows = H.inspect_json(path, "files")
    table.sort(rows, function(p, q) return p.schema_id < q.schema_id end)
    assert.are.same({id = 1, bee = "x", a = cjson.null}, rows[1].min_value_stats)
    assert.are.same({id = 0, bee = 0, a = cjson.null}, rows[1].null_value_counts)
    assert.are.same({id = 2, bee = "y", a = 20}, rows[2].max_value_stats)
    same_as_pyref(path)
    H.rmdir(dir)
  end)
end)

describe("primary-key tables written by Java, read after an alter", function()
  local function read_all(path)
    local out, err, code = H.script("read.lua", {path})
    assert(code == 0, err)
    local v = {}
    for line in out:gmatch("[^\n]+") do v[#v + 1] = cjson.decode(line) end
    return v
  end
  local function canon(rows)        -- each row as "k=v,..." with sorted keys, the rows sorted
    local s = {}
    for i, r in ipairs(rows) do
      local keys = {}
      for k in pairs(r) do keys[#keys + 1] = k end
      table.sort(keys)
      for j, k in ipairs(keys) do keys[j] = k .. "=" .. cjson.encode(r[k]) end
      s[i] = table.concat(keys, ",")
    end
    table.sort(s)
    return s
  end

  it("a renamed primary key, a renamed and a dropped value column, an added one: the same merged rows", function()
    local path, dir = H.copy_table(H.fixture("cpp-avro-pk_table_scan_and_read_dv"))
    local before = read_all(path)
    assert.are.equal(0, select(3, alter(path, "rename-column", "f0", "name")))   -- a primary key (_KEY_f0 in files)
    assert.are.equal(0, select(3, alter(path, "rename-column", "f3", "score")))
    assert.are.equal(0, select(3, alter(path, "add-column", "note:STRING")))
    local want = {}
    for i, r in ipairs(before) do
      want[i] = {name = r.f0, f1 = r.f1, f2 = r.f2, score = r.f3, note = cjson.null}
    end
    assert.are.same(canon(want), canon(read_all(path)))
    assert.are.equal(0, select(3, alter(path, "drop-column", "score")))
    for _, r in ipairs(read_all(path)) do assert.is_nil(r.score) end
    H.rmdir(dir)
  end)

  it("a widened value column reads as the new type", function()
    local path, dir = H.copy_table(H.fixture("cpp-avro-pk_with_multiple_type"))
    local before = read_all(path)
    assert.are.equal(0, select(3, alter(path, "alter-column", "f3", "--type", "BIGINT")))
    assert.are.equal(0, select(3, alter(path, "alter-column", "f5", "--type", "DOUBLE")))
    local after = read_all(path)
    assert.are.same(canon(before), canon(after))
    H.rmdir(dir)
  end)
end)

-- Found by the lifecycle test: with changelog.num-retained.min=20, setting
-- snapshot.num-retained.max=17 made the changelog's max fall back to 17 <
-- 20, and every later upkeep failed. Java's SchemaValidation refuses such a
-- schema; so do alter_table and create_table now.
describe("retention options that contradict each other", function()
  it("are refused by alter_table and create_table, as Java's SchemaValidation", function()
    local dir = H.tmpdir()
    local tp = dir .. "/t"
    local _, err, rc = H.script("create_table.lua", {tp, "--field", "id:INT", "--option", "changelog.num-retained.min=20"})
    assert.equals(0, rc, err)
    local fp = H.fingerprint(tp)
    _, err, rc = H.script("alter_table.lua", {tp, "set", "snapshot.num-retained.max=17"})
    assert.equals(2, rc, err)
    assert.matches("changelog.num-retained.min should not be larger than changelog.num-retained.max (20 > 17: it " ..
                   "falls back to snapshot.num-retained.max)", err, 1, true)
    assert.equals(fp, H.fingerprint(tp))
    _, err, rc = H.script("alter_table.lua", {tp, "set", "snapshot.num-retained.max=25"})
    assert.equals(0, rc, err)
    _, err, rc = H.script("create_table.lua", {dir .. "/u", "--field", "id:INT", "--option",
                                               "snapshot.num-retained.min=5", "--option", "snapshot.num-retained.max=3"})
    assert.are_not.equal(0, rc)
    assert.matches("snapshot.num-retained.min should not be larger than snapshot.num-retained.max", err, 1, true)
    assert.is_false(H.exists(dir .. "/u/schema/schema-0"))
    H.rmdir(dir)
  end)
end)
