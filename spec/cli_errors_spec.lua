-- Exit codes, messages and output a script can trust (issue 12, item 6).
local H = require "helper"
local cli = require "paimon.cli"
local cjson = H.cjson

local COMPLEX = "cpp-parquet-append_complex_data"

-- A fresh Avro table p STRING partitioned with the rows x, null, "" and a
-- non-ASCII value; returns the table path and its temp dir.
local function small_table()
  local dir = H.tmpdir()
  local tp = dir .. "/t"
  local _, err, rc = H.paimon_lua({"create_table.lua", tp, "--field", "id:INT", "--field", "p:STRING",
                                   "--partition", "p", "--option", "file.format=avro"})
  assert(rc == 0, err)
  local input = dir .. "/rows.jsonl"
  H.write_file(input, '{"id":1,"p":"x"}\n{"id":2,"p":null}\n{"id":3,"p":""}\n{"id":4,"p":"ü日本"}\n')
  _, err, rc = H.paimon_lua({"write.lua", tp, "--input", input})
  assert(rc == 0, err)
  return tp, dir
end

local function lines(out)
  local t = {}
  for l in out:gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

describe("paimon-lua exit codes", function()
  it("a missing script is a usage error (2), a syntax error a failure (1), never 3 or 6", function()
    local _, err, rc = H.paimon_lua({"/nonexistent/missing.lua"})
    assert.equals(2, rc)
    assert.matches("missing.lua", err, 1, true)
    _, _, rc = H.paimon_lua({"no_such_script.lua"})
    assert.equals(2, rc)
    local dir = H.tmpdir()
    H.write_file(dir .. "/syntax.lua", "x = = 1\n")
    _, err, rc = H.paimon_lua({dir .. "/syntax.lua"})
    assert.equals(1, rc)
    assert.matches("syntax.lua:1:", err, 1, true)
    H.write_file(dir .. "/boom.lua", "local t = nil\nreturn t.x\n")
    _, _, rc = H.paimon_lua({dir .. "/boom.lua"})
    assert.equals(1, rc)
    H.rmdir(dir)
  end)

  it("errors a script raises reach the user without a Lua position; bugs say internal error", function()
    local dir = H.tmpdir()
    local head = 'local cli = require "paimon.cli"\nlocal spec = {name = "x.lua", usage = "usage: x", flags = {}}\n'
    H.write_file(dir .. "/raise.lua", head .. 'return cli.run(spec, function() error("the table is gone") end, {...})\n')
    H.write_file(dir .. "/bug.lua", head .. 'return cli.run(spec, function() local t; return t.x end, {...})\n')
    local _, err, rc = H.paimon_lua({dir .. "/raise.lua"})
    assert.equals(1, rc)
    assert.equals("x.lua: the table is gone\n", err)
    _, err, rc = H.paimon_lua({dir .. "/bug.lua"})
    assert.equals(1, rc)
    assert.matches("^x%.lua: internal error: .*bug%.lua:3: attempt to index", err)
    H.rmdir(dir)
  end)

  it("the same mistake has the same exit code and message in every script", function()
    local tp, dir = small_table()
    for _, c in ipairs{{"read.lua", tp, "--partition", "foo=1"}, {"drop_partition.lua", tp, "--partition", "foo=1"}} do
      local _, err, rc = H.paimon_lua(c)
      assert.equals(2, rc, c[1] .. ": " .. err)
      assert.matches("--partition foo=1: 'foo' is not a partition column (partition columns: p)", err, 1, true)
      assert.is_nil(err:find("%.lua:%d+:"), err)
    end
    H.rmdir(dir)
  end)

  it("negative ids and limits and flags that do not apply to a view are usage errors", function()
    local path = H.fixture(COMPLEX)
    local cases = {
      {{"read.lua", path, "--limit", "-1"}, "--limit must be at least 0"},
      {{"read.lua", path, "--snapshot", "-1"}, "--snapshot must be at least 1"},
      {{"inspect.lua", path, "files", "--snapshot", "-1"}, "--snapshot must be at least 1"},
      {{"inspect.lua", path, "snapshots", "--snapshot", "2"}, "--snapshot does not apply to the snapshots view"},
      {{"inspect.lua", path, "tags", "--tag", "t"}, "--tag does not apply to the tags view"},
    }
    for _, c in ipairs(cases) do
      local out, err, rc = H.paimon_lua(c[1])
      assert.equals(2, rc, table.concat(c[1], " ") .. ": " .. err)
      assert.matches(c[2], err, 1, true)
      assert.equals("", out)
    end
    local out, err, rc = H.paimon_lua({"read.lua", path, "--limit", "0"})
    assert.equals(0, rc, err)
    assert.equals("", out)
  end)
end)

describe("--json failures", function()
  local function one_error_object(out, code)
    assert.equals(1, #lines(out), out)
    local obj = H.decode(out)
    assert.equals(code, obj.code)
    assert.equals("string", type(obj.error))
    assert.is_true(#obj.error > 0)
    return obj
  end

  it("every script prints exactly one {error, code} object on stdout", function()
    local copy, dir = H.copy_table(H.fixture(COMPLEX))
    local missing = "/nonexistent/t"
    local cases = {
      {"inspect.lua", missing, "snapshots"},
      {"write.lua", missing},
      {"compact_manifest.lua", missing},
      {"expire.lua", missing},
      {"remove_orphan_files.lua", missing},
      {"verify.lua", missing},
      {"drop_partition.lua", missing, "--partition", "a=1"},
      {"expire_partitions.lua", missing, "--expiration-time", "1d"},
      {"alter_table.lua", missing, "set", "a=b"},
    }
    for _, c in ipairs(cases) do
      c[#c + 1] = "--json"
      local out, err, rc = H.paimon_lua(c)
      assert.equals(1, rc, c[1] .. ": " .. err)
      local obj = one_error_object(out, "notfound")
      assert.matches(missing, obj.error, 1, true)
      assert.matches(missing, err, 1, true)             -- people still read stderr
      -- a usage error too
      out, err, rc = H.paimon_lua({c[1], missing, "--bogus", "--json"})
      assert.equals(2, rc, c[1] .. ": " .. err)
      assert.matches("unknown option --bogus", one_error_object(out, "usage").error, 1, true)
    end
    local out, err, rc = H.paimon_lua({"create_table.lua", copy, "--field", "a:INT", "--json"})
    assert.equals(3, rc, err)                     -- "already exists": 3 in every script
    assert.matches("already exists", one_error_object(out, "exists").error, 1, true)
    H.rmdir(dir)
  end)
end)

describe("write.lua input errors", function()
  it("say what is wrong with the line", function()
    local tp, dir = small_table()
    local cases = {
      {"[1,2]", "line 1: not a JSON object but an array"},
      {'{"id":1', "line 1: invalid JSON"},
      {'"x"', "line 1: not a JSON object but string"},
    }
    for _, c in ipairs(cases) do
      H.write_file(dir .. "/in.jsonl", c[1] .. "\n")
      local out, err, rc = H.paimon_lua({"write.lua", tp, "--input", dir .. "/in.jsonl", "--json"})
      assert.equals(1, rc, c[1])
      assert.matches("write.lua: " .. c[2], err, 1, true)
      assert.equals("input", H.decode(out).code)
    end
    local _, err, rc = H.paimon_lua({"create_table.lua", dir .. "/u", "--field", "x y:INT"})
    assert.equals(0, rc, err)
    H.write_file(dir .. "/in.jsonl", '{"x y": 1}\n')
    _, err, rc = H.paimon_lua({"write.lua", dir .. "/u", "--input", dir .. "/in.jsonl"})
    assert.equals(1, rc)
    assert.matches("column 'x y': 'x y' is not a valid Avro name", err, 1, true)
    H.rmdir(dir)
  end)
end)

describe("create_table.lua", function()
  it("defaults file.format to avro, which write.lua writes, and says so", function()
    local dir = H.tmpdir()
    local out, err, rc = H.paimon_lua({"create_table.lua", dir .. "/t", "--field", "a:INT"})
    assert.equals(0, rc, err)
    assert.matches("file.format=avro", out, 1, true)
    local opts = H.inspect_json(dir .. "/t", "options")
    assert.same({{key = "file.format", value = "avro"}}, opts)
    H.write_file(dir .. "/in.jsonl", '{"a": 1}\n')
    _, err, rc = H.paimon_lua({"write.lua", dir .. "/t", "--input", dir .. "/in.jsonl"})
    assert.equals(0, rc, err)
    -- a format given explicitly is kept
    out, err, rc = H.paimon_lua({"create_table.lua", dir .. "/p", "--field", "a:INT", "--option", "file.format=orc"})
    assert.equals(0, rc, err)
    assert.is_nil(out:find("file.format=avro", 1, true))
    assert.same({{key = "file.format", value = "orc"}}, H.inspect_json(dir .. "/p", "options"))
    H.rmdir(dir)
  end)
end)

describe("human output", function()
  it("times are ISO 8601 local time with offset, durations have units", function()
    assert.equals("1d 2h", cli.duration(93600000))
    assert.equals("1m 30s 5ms", cli.duration(90005))
    assert.equals("0ms", cli.duration(0))
    assert.equals("2026-11-02T10:15:00.123", cli.wall_time(1793614500123))
    local path = H.fixture(COMPLEX)
    local rows = H.inspect_json(path, "snapshots")
    local out, err, rc = H.run("TZ=Asia/Kolkata " .. H.sh_quote(H.cli) .. " inspect.lua " .. H.sh_quote(path) ..
                               " snapshots")
    assert.equals(0, rc, err)
    local ms = rows[1].commit_time
    local secs = math.floor(ms / 1000)
    local utc = os.date("!*t", secs + 19800)                -- +05:30
    local want = string.format("%04d-%02d-%02dT%02d:%02d:%02d.%03d+05:30", utc.year, utc.month, utc.day, utc.hour,
                               utc.min, utc.sec, ms - secs * 1000)
    assert.matches(want, out, 1, true)
    assert.is_nil(out:find(tostring(ms), 1, true))
  end)

  -- issue 24: --json gave Java's forms ("[ 2026, 11, 2, 10, 15 ]", "93600.000000000"); now every time is
  -- epoch ms and every duration ms in --json, ISO 8601 and units for people, in inspect and tag.lua list
  it("the tags view shows a tag's creation time and retention for people, --json in epoch ms and ms", function()
    local copy, dir = H.copy_table(H.fixture(COMPLEX))
    local snap = H.read_file(copy .. "/snapshot/snapshot-1"):gsub("%s*}%s*$", "")
    H.run("mkdir -p " .. H.sh_quote(copy .. "/tag"))
    H.write_file(copy .. "/tag/tag-keep", snap .. ',\n  "tagCreateTime" : [ 2026, 11, 2, 10, 15 ],\n' ..
                 '  "tagTimeRetained" : 93600.000000000\n}')
    local out, err, rc = H.paimon_lua({"inspect.lua", copy, "tags"})
    assert.equals(0, rc, err)
    assert.matches("keep%s+1%s+0%s+%S+%s+3%s+2026%-11%-02T10:15:00%.000[+-]%d%d:%d%d%s+1d 2h%s*\n", out)   -- an empty error column last
    -- tagCreateTime is Java's LocalDateTime: local wall clock, as os.time reads a date
    local created = os.time{year = 2026, month = 11, day = 2, hour = 10, min = 15, sec = 0} * 1000
    local rows = H.inspect_json(copy, "tags")
    assert.equals(93600000, rows[1].time_retained)
    assert.equals(created, rows[1].create_time)
    assert.equals("number", type(rows[1].commit_time))
    local list = H.decode((H.paimon_lua({"tag.lua", copy, "list", "--json"})))
    assert.equals(93600000, list[1].time_retained)
    assert.equals(created, list[1].create_time)
    out = H.paimon_lua({"tag.lua", copy, "list"})
    assert.matches("keep%s+1%s+%S+%s+2026%-11%-02T10:15:00%.000[+-]%d%d:%d%d%s+1d 2h%s*\n", out)   -- an empty error column last
    H.rmdir(dir)
  end)

  it("the schemas view lists fields as name TYPE", function()
    local tp, dir = small_table()
    local out, err, rc = H.paimon_lua({"inspect.lua", tp, "schemas"})
    assert.equals(0, rc, err)
    assert.matches("id INT, p STRING", out, 1, true)
    H.rmdir(dir)
  end)

  it("aligns columns by display width, not bytes", function()
    assert.equals(5, cli.display_width("ü日本"))
    assert.equals(2, cli.display_width("e\204\129x"))          -- e, a combining acute accent, x
    local tp, dir = small_table()
    local out, err, rc = H.paimon_lua({"inspect.lua", tp, "partitions"})
    assert.equals(0, rc, err)
    local starts = {}
    for _, l in ipairs(lines(out)) do
      local i = l:find("record_count", 1, true) or (l:find("%s%d+%s") + 1)   -- where column 2 starts
      starts[#starts + 1] = cli.display_width(l:sub(1, i - 1))
    end
    assert.equals(5, #starts)
    for i = 2, #starts do assert.equals(starts[1], starts[i], out) end
    H.rmdir(dir)
  end)
end)

describe("null and empty-string partitions", function()
  it("are two partitions in views, reads and drops", function()
    local tp, dir = small_table()
    local out, err, rc = H.paimon_lua({"inspect.lua", tp, "partitions"})
    assert.equals(0, rc, err)
    assert.matches('\np=""%s+1%s', out)
    assert.matches("\np=null%s+1%s", out)
    local rows = H.inspect_json(tp, "partitions")
    assert.equals(4, #rows)
    out, err, rc = H.paimon_lua({"read.lua", tp, "--partition", "p="})
    assert.equals(0, rc, err)
    assert.equals('{"id":3,"p":""}\n', out)
    out, err, rc = H.paimon_lua({"read.lua", tp, "--partition", "p=__DEFAULT_PARTITION__"})
    assert.equals(0, rc, err)
    assert.equals('{"id":2,"p":null}\n', out)
    -- drop the empty string: the null partition (same directory) stays
    out, err, rc = H.paimon_lua({"drop_partition.lua", tp, "--partition", "p=", "--json"})
    assert.equals(0, rc, err)
    local r = H.decode(out)
    assert.equals(1, r.files)
    assert.equals("", r.partitions[1].partition.p)
    out = H.paimon_lua({"read.lua", tp})
    local ids = {}
    for id in out:gmatch('"id":(%d+)') do ids[#ids + 1] = tonumber(id) end
    table.sort(ids)
    assert.same({1, 2, 4}, ids)
    out, err, rc = H.paimon_lua({"drop_partition.lua", tp, "--partition", "p=__DEFAULT_PARTITION__", "--json"})
    assert.equals(0, rc, err)
    r = H.decode(out)
    assert.equals(1, r.files)
    assert.equals(cjson.null, r.partitions[1].partition.p)
    out = H.paimon_lua({"read.lua", tp})
    assert.equals(2, #lines(out))
    H.rmdir(dir)
  end)
end)

-- Issue 24, defect 4: an endpoint that answers, but not as S3 (a web
-- server's HTML 200, a proxy's plain 404), read as "no such table directory".
describe("an endpoint that is not an S3 service", function()
  it("is named as such by every script, never a missing table", function()
    for _, mode in ipairs{"html200", "text404"} do
      local dir = H.tmpdir()
      local portfile = dir .. "/port"
      local pid = H.run(string.format("/usr/bin/python3 %s/support/not_s3.py %s %s >/dev/null 2>&1 & echo $!",
                                      H.sh_quote(H.spec_dir), mode, H.sh_quote(portfile))):match("%d+")
      local port
      for _ = 1, 100 do
        port = H.exists(portfile) and H.read_file(portfile)
        if port then break end
        os.execute("sleep 0.05")
      end
      assert(port, "the server did not start")
      local ep = "http://127.0.0.1:" .. port
      for _, args in ipairs{{"inspect.lua", "s3://b/db.db/t", "snapshots"}, {"expire.lua", "s3://b/db.db/t", "--dry-run"},
                            {"remove_orphan_files.lua", "s3://b/db.db/t", "--dry-run"}, {"read.lua", "s3://b/db.db/t"},
                            {"tag.lua", "s3://b/db.db/t", "list"}, {"verify.lua", "s3://b/db.db/t"}} do
        args[#args + 1] = "--option"
        args[#args + 1] = "s3.endpoint=" .. ep
        local _, err, rc = H.run("env AWS_ACCESS_KEY_ID=a AWS_SECRET_ACCESS_KEY=b " ..
                                 H.sh_quote(H.cli) .. " " .. table.concat((function()
                                   local q = {}
                                   for i, a in ipairs(args) do q[i] = H.sh_quote(a) end
                                   return q end)(), " "))
        assert.equals(1, rc, mode .. " " .. args[1] .. ": " .. err)
        assert.matches(ep .. " does not answer as an S3 service", err, 1, true)
        assert.is_nil(err:find("no such table", 1, true))
      end
      os.execute("kill " .. pid)
      H.rmdir(dir)
    end
  end)
end)

-- Issue 24: "--older-than 7" was 7 ms. A number without a unit is refused
-- wherever a duration or a cut-off is meant (exit 2, naming the flag).
describe("a number without a unit", function()
  it("is refused where a duration or a time is meant", function()
    local tp, dir = small_table()
    for _, args in ipairs{{"expire.lua", tp, "--older-than", "7"}, {"remove_orphan_files.lua", tp, "--older-than", "7"},
                          {"expire_changelogs.lua", tp, "--older-than", "7"}, {"tag.lua", tp, "expire", "--older-than", "7"},
                          {"tag.lua", tp, "create", "x", "--time-retained", "7"},
                          {"consumer.lua", tp, "expire", "--expiration", "7"},
                          {"expire_partitions.lua", tp, "--expiration-time", "7"}} do
      local fp = H.fingerprint(tp)
      local _, err, rc = H.paimon_lua(args)
      assert.equals(2, rc, table.concat(args, " ") .. ": " .. err)
      assert.matches(args[#args - 1] .. " 7: a number without a unit is ambiguous", err, 1, true)
      assert.equals(fp, H.fingerprint(tp))
    end
    -- with a unit it is read; --timestamp (Java: epoch ms) reads a bare number as epoch ms
    local _, err, rc = H.paimon_lua({"expire.lua", tp, "--older-than", "7d", "--dry-run"})
    assert.equals(0, rc, err)
    local out
    out, err, rc = H.paimon_lua({"tag.lua", tp, "create", "x", "--timestamp", "4102444800000", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    assert.equals(1, H.decode(out).snapshot_id)
    H.rmdir(dir)
  end)
end)

-- Issue 24: consumer reset accepted 999 past the latest, 1 below the
-- earliest and "1e3". A consumer starts from a snapshot that exists (or
-- a kept changelog of it) or from the next one.
describe("consumer reset", function()
  it("takes a snapshot a consumer can start from, as decimal digits", function()
    local tp, dir = small_table()   -- snapshot 1 only
    for _, n in ipairs{"999", "3", "1e3", "0x1", " 1"} do
      local _, err, rc = H.paimon_lua({"consumer.lua", tp, "reset", "c1", "--next-snapshot", n})
      assert.equals(2, rc, n .. ": " .. err)
      assert.is_false(H.exists(tp .. "/consumer/consumer-c1"), n)
    end
    local _, err = H.paimon_lua({"consumer.lua", tp, "reset", "c1", "--next-snapshot", "999"})
    assert.matches("snapshot 999 is past the latest snapshot 1 (at most 2: the next one)", err, 1, true)
    for _, n in ipairs{"1", "2"} do
      local _, err2, rc = H.paimon_lua({"consumer.lua", tp, "reset", "c1", "--next-snapshot", n})
      assert.equals(0, rc, n .. ": " .. err2)
    end
    -- below the earliest: gone, unless its changelog is kept
    H.write_file(dir .. "/more.jsonl", '{"id":5,"p":"x"}\n')
    local _, err4, rc4 = H.paimon_lua({"write.lua", tp, "--input", dir .. "/more.jsonl"})
    assert.equals(0, rc4, err4)
    H.write_file(tp .. "/snapshot/EARLIEST", "2")
    os.remove(tp .. "/snapshot/snapshot-1")
    local _, err3, rc3 = H.paimon_lua({"consumer.lua", tp, "reset", "c1", "--next-snapshot", "1"})
    assert.equals(2, rc3, err3)
    H.rmdir(dir)
  end)
end)
