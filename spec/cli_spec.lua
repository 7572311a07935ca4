-- paimon-lua and inspect.lua as an operator runs them.
local H = require "helper"

local COMPLEX = "cpp-parquet-append_complex_data"
local VIEWS = {"snapshots", "schemas", "options", "files", "manifests", "partitions", "tags", "branches", "consumers"}

describe("paimon-lua", function()
  it("prints its version and help", function()
    local out, _, rc = H.paimon_lua({"--version"})
    assert.equals(0, rc)
    assert.matches("^paimon%-lua %d+%.%d+%.%d+", out)
    out, _, rc = H.paimon_lua({"--help"})
    assert.equals(0, rc)
    assert.matches("inspect.lua", out, 1, true)
  end)

  it("has paimon and cjson preloaded", function()
    local out, err, rc = H.paimon_lua({"-e", "print(package.loaded.paimon ~= nil, package.loaded.cjson ~= nil)"})
    assert.equals(0, rc, err)
    assert.equals("true\ttrue\n", out)
  end)

  it("finds bundled scripts from any directory", function()
    local out, err, rc = H.run("cd / && " .. H.sh_quote(H.cli) .. " inspect.lua " ..
                               H.sh_quote(H.fixture(COMPLEX)) .. " snapshots --json")
    assert.equals(0, rc, err)
    assert.matches("^%[", out)
  end)

  it("prefers a script in the current directory", function()
    local dir = H.tmpdir()
    H.write_file(dir .. "/inspect.lua", "print('local copy') return 0")
    local out, _, rc = H.run("cd " .. H.sh_quote(dir) .. " && " .. H.sh_quote(H.cli) .. " inspect.lua")
    assert.equals(0, rc)
    assert.equals("local copy\n", out)
    H.rmdir(dir)
  end)

  it("reports a script error with exit code 1", function()
    local _, err, rc = H.paimon_lua({"-e", "error('boom')"})
    assert.equals(1, rc)
    assert.matches("boom", err)
    _, err, rc = H.paimon_lua({"--bogus"})
    assert.equals(2, rc)
  end)
end)

describe("inspect.lua", function()
  local path = H.fixture(COMPLEX)

  it("--help exits 0 and lists the views", function()
    local out, _, rc = H.paimon_lua({"inspect.lua", "--help"})
    assert.equals(0, rc)
    for _, v in ipairs(VIEWS) do assert.matches(v, out, 1, true) end
  end)

  it("usage errors exit 2", function()
    for _, args in ipairs({{}, {path}, {path, "nope"}, {path, "files", "--snapshot", "x"},
                           {path, "files", "--what"}, {path, "files", "extra"}}) do
      local a = {"inspect.lua"}
      for _, x in ipairs(args) do a[#a + 1] = x end
      local _, err, rc = H.paimon_lua(a)
      assert.equals(2, rc, table.concat(a, " ") .. ": " .. err)
      -- the message and where the help is, two lines, not the whole help
      assert.matches("^inspect%.lua: [^\n]+\nsee: paimon%-lua inspect%.lua %-%-help\n$", err)
    end
  end)

  it("a missing table exits 1 naming the path", function()
    local _, err, rc = H.paimon_lua({"inspect.lua", "/nonexistent/t", "snapshots"})
    assert.equals(1, rc)
    assert.matches("/nonexistent/t", err, 1, true)
  end)

  it("--json prints exactly one JSON array for every view", function()
    for _, v in ipairs(VIEWS) do
      local out, err, rc = H.paimon_lua({"inspect.lua", path, v, "--json"})
      assert.equals(0, rc, err)
      local ok, rows = pcall(H.cjson.decode, out)
      assert.is_true(ok, v .. ": " .. out)
      assert.equals("table", type(rows))
      assert.matches("^%[.*%]\n$", out)
    end
  end)

  it("keeps 64-bit identifiers exact in JSON", function()
    local t = H.fixture("cpp-parquet-pk_table_scan_and_read_dv")
    local out = H.paimon_lua({"inspect.lua", t, "snapshots", "--json"})
    local raw = H.read_file(t .. "/snapshot/snapshot-1"):match('"commitIdentifier" : (%-?%d+)')
    assert.matches('"commit_identifier":' .. raw .. "[,}]", out)
  end)

  it("prints a readable table by default", function()
    local out, _, rc = H.paimon_lua({"inspect.lua", path, "files"})
    assert.equals(0, rc)
    assert.matches("^partition%s+bucket%s+file_path", out)
    assert.matches("f1=10", out, 1, true)
  end)

  it("reads branches with --branch", function()
    local t = H.fixture("cpp-parquet-append_table_with_append_pt_branch")
    local out, err, rc = H.paimon_lua({"inspect.lua", t, "branches", "--json"})
    assert.equals(0, rc, err)
    local b = H.cjson.decode(out)[1].branch_name
    out, err, rc = H.paimon_lua({"inspect.lua", t, "snapshots", "--branch", b, "--json"})
    assert.equals(0, rc, err)
    _, err, rc = H.paimon_lua({"inspect.lua", t, "snapshots", "--branch", "nope"})
    assert.equals(1, rc)
    assert.matches("nope", err, 1, true)
  end)
end)

-- Issue 24: Java's procedure argument names work as the same flags.
describe("Java's argument names", function()
  it("are the flags they mean: the same output as ours", function()
    local path, dir = H.copy_table(H.fixture("cpp-parquet-append_table_with_append_pt_branch"))
    local pairs_ = {
      {{"rollback.lua", path, "--snapshot_id", "1", "--dry-run", "--json"},
       {"rollback.lua", path, "--to-snapshot", "1", "--dry-run", "--json"}},
      {{"expire.lua", path, "--retain_min", "1", "--older_than", "1ms", "--max_deletes", "5", "--dry_run", "--json"},
       {"expire.lua", path, "--retain-min", "1", "--older-than", "1ms", "--max-deletes", "5", "--dry-run", "--json"}},
      {{"remove_orphan_files.lua", path, "--parallelism", "2", "--older_than", "2d", "--dry-run", "--json"},
       {"remove_orphan_files.lua", path, "--threads", "2", "--older-than", "2d", "--dry-run", "--json"}},
      {{"branch.lua", path, "create", "b2", "--tag", "nope", "--dry-run", "--json"},
       {"branch.lua", path, "create", "b2", "--from-tag", "nope", "--dry-run", "--json"}},
    }
    -- times (epoch ms) and durations differ between two runs
    local function strip(out) return (out:gsub('"duration_ms":%d+', ""):gsub(":%d%d%d%d%d%d%d%d%d%d%d%d%d", ":T")) end
    for _, p in ipairs(pairs_) do
      local o1, e1, r1 = H.paimon_lua(p[1])
      local o2, e2, r2 = H.paimon_lua(p[2])
      assert.equals(r2, r1, table.concat(p[1], " ") .. ": " .. e1)
      assert.equals(strip(o2), strip(o1))
    end
    -- a name that means nothing here is still refused
    local _, err, rc = H.paimon_lua({"expire.lua", path, "--snapshot_id", "1"})
    assert.equals(2, rc)
    assert.matches("unknown option --snapshot_id", err, 1, true)
    H.rmdir(dir)
  end)
end)
