-- verify.lua / t:verify: the read-only check that every file readers need
-- is there with its recorded size. On every Java fixture the files it
-- checks are counted against the independent python3-avro walk
-- (spec/support/refs.py): all snapshots, or the latest per branch plus the
-- tags; damage of each kind is reported with the file's path; expiration
-- leaves a table that still verifies.
local H = require "helper"
local paimon = require "paimon"

local ORC = "cpp-parquet-append_10-orc-manifests"
local PK = "cpp-parquet-pk_table_scan_and_read_dv"

local function verify_cli(args) return H.script("verify.lua", args) end

local function count(set)
  local n = 0
  for _ in pairs(set) do n = n + 1 end
  return n
end

-- refs limited to each branch's latest snapshot (and every tag)
local function latest_only(refs)
  local out = {}
  for name, b in pairs(refs) do
    local latest
    for id in pairs(b.snapshots) do
      if not latest or tonumber(id) > tonumber(latest) then latest = id end
    end
    out[name] = {snapshots = latest and {[latest] = b.snapshots[latest]} or {}, tags = b.tags}
  end
  return out
end

-- what refs names but the disk lacks (a fixture's external files live
-- outside it)
local function absent(set)
  local out = {}
  for p in pairs(set) do if not H.exists(p) then out[p] = true end end
  return out
end

local function path_set(items)
  local s = {}
  for _, it in ipairs(items) do s[it.path] = true end
  return s
end

-- schema files readers of the main branch's latest snapshot and its tags
-- need (the snapshot's and every live data file's schema id), from
-- pyref.py; nil when the table has branches (not covered here)
local function latest_schemas(copy, refs)
  for name in pairs(refs) do if name ~= "main" then return nil end end
  local ids = {}
  local function of(extra, snapshot_json)
    if snapshot_json then ids[H.cjson.decode(snapshot_json).schemaId] = true end
    for _, f in ipairs(H.pyref_json(copy, "files", extra)) do ids[f.schema_id] = true end
  end
  local latest = H.read_file(copy .. "/snapshot/LATEST")
  if latest then of({}, H.read_file(copy .. "/snapshot/snapshot-" .. latest)) end
  for tag in pairs(refs.main.tags) do of({"--tag", tag}, H.read_file(copy .. "/tag/tag-" .. tag)) end
  return count(ids)
end

local check_unlocked
-- /tmp/external (the external-paths fixture) is also written by
-- expire_spec: check under the same lock
local function check_against_refs(copy, extra)
  H.with_lock("tmp-external", function() check_unlocked(copy, extra) end)
end

function check_unlocked(copy, extra)
  local refs = H.refs(copy)
  for _, mode in ipairs({{all = true, used = H.used_paths(refs, copy)},
                         {all = false, used = H.used_paths(latest_only(refs), copy)}}) do
    local args = {copy, "--json"}
    if mode.all then args[#args + 1] = "--all-snapshots" end
    for _, a in ipairs(extra or {}) do args[#args + 1] = a end
    local out, err, rc = verify_cli(args)
    local r = H.decode(out)
    assert.equals(count(mode.used), r.files - r.checked.schemas - r.checked.snapshots,
                  "files checked (all snapshots: " .. tostring(mode.all) .. ")")
    assert.is_true(r.checked.schemas >= 1)
    if not mode.all then
      local want_schemas = latest_schemas(copy, refs)
      if want_schemas then assert.equals(want_schemas, r.checked.schemas, "schema files checked") end
    end
    local want_missing = absent(mode.used)
    assert.same(want_missing, path_set(r.missing))
    assert.same({}, r.wrong_size)
    assert.same({}, r.unreadable)
    assert.equals(next(want_missing) == nil, r.ok)
    assert.equals(r.ok and 0 or 1, rc, err)
  end
end

describe("verify.lua on every Java fixture", function()
  for _, fx in ipairs(H.fixture_tables()) do
    if fx.name == ORC then
      it("refuses " .. fx.name .. " (ORC manifests), naming the option", function()
        local _, err, rc = verify_cli({fx.path})
        assert.equals(1, rc)
        assert.matches("manifest.format", err, 1, true)
      end)
    else
      it("checks exactly the files the independent reader finds in " .. fx.name .. ", before and after expiring",
         function()
        local copy, dir = H.copy_table(fx.path)
        check_against_refs(copy)
        local _, err, rc = H.script("expire.lua", {copy, "--retain-min", "1", "--older-than", "0s",
                                                   "--max-deletes", "1000"})
        assert.equals(0, rc, err)
        check_against_refs(copy, {"--threads", "1"})
        H.rmdir(dir)
      end)
    end
  end
end)

describe("verify.lua reports damage", function()
  local copy, dir, refs
  before_each(function()
    copy, dir = H.copy_table(H.fixture(PK))
    refs = H.refs(copy)
  end)
  after_each(function() H.rmdir(dir) end)

  local function latest_paths(pattern)
    local set = H.used_paths(latest_only(refs), copy)
    local out = {}
    for p in pairs(set) do if p:match(pattern) then out[#out + 1] = p end end
    table.sort(out)
    return out
  end

  local function run(args)
    local out, err, rc = verify_cli(args)
    assert.equals(1, rc, err)
    return H.decode(out)
  end

  it("a missing data file, a data file of the wrong size", function()
    local data = latest_paths("/data%-[^/]*$")
    assert.is_true(#data >= 2)
    os.remove(data[1])
    local f = assert(io.open(data[2], "ab"))
    f:write("x")
    f:close()
    local r = run({copy, "--json"})
    assert.is_false(r.ok)
    assert.equals(1, #r.missing)
    assert.equals(data[1], r.missing[1].path)
    assert.equals("data_files", r.missing[1].kind)
    assert.matches("snapshot %d+ of branch main", r.missing[1].message)
    assert.equals(1, #r.wrong_size)
    assert.equals(data[2], r.wrong_size[1].path)
    assert.matches("bytes on disk, %d+ recorded", r.wrong_size[1].message)
    -- the human report names them too
    local out = verify_cli({copy})
    assert.truthy(out:find(data[1], 1, true))
    assert.truthy(out:find("PROBLEMS FOUND", 1, true))
  end)

  it("a corrupt manifest list, a missing manifest", function()
    local lists = latest_paths("/manifest/manifest%-list%-[^/]*$")
    local manifests = latest_paths("/manifest/manifest%-[^l][^/]*$")
    assert.is_true(#lists >= 1 and #manifests >= 1)
    os.remove(manifests[#manifests])
    local r = run({copy, "--json"})
    assert.is_true(path_set(r.missing)[manifests[#manifests]], "missing manifest not reported")
    assert.equals("manifests", r.missing[1].kind)
    H.write_file(lists[1], "Obj\1 not really")
    r = run({copy, "--json"})
    assert.is_true(path_set(r.unreadable)[lists[1]], "corrupt list not reported")
    assert.matches("needed by snapshot", r.unreadable[1].message)
  end)

  it("a missing schema file an old data file still needs", function()
    -- this fixture was altered: schema-1 is the latest, one live data file
    -- was written with schema-0 (pyref says so)
    local c2, d2 = H.copy_table(H.fixture("cpp-parquet-pk_table_with_alter_table"))
    local old = 0
    for _, f in ipairs(H.pyref_json(c2, "files")) do
      if f.schema_id == 0 then old = old + 1 end
    end
    assert.is_true(old > 0)
    os.remove(c2 .. "/schema/schema-0")
    local r = run({c2, "--json"})
    assert.same({[c2 .. "/schema/schema-0"] = true}, path_set(r.missing))
    assert.equals("schemas", r.missing[1].kind)
    H.rmdir(d2)
  end)

  it("a missing manifest and a missing data file of another manifest: both, and the rest is still checked", function()
    local manifests = latest_paths("/manifest/manifest%-[^l][^/]*$")
    assert.is_true(#manifests >= 2)
    -- a data file the independent reader places in another manifest than the one removed
    local gone_manifest = manifests[1]
    local data = latest_paths("/data%-[^/]*$")
    os.remove(gone_manifest)
    local r = run({copy, "--json"})
    local n_data = r.checked.data_files
    assert.is_true(n_data > 0, "no data file checked once a manifest is missing")
    assert.same({}, r.unreadable)
    -- remove one of the data files still checked: it is reported too
    local still = {}
    for _, p in ipairs(data) do if H.exists(p) then still[#still + 1] = p end end
    local victim
    for _, p in ipairs(still) do
      os.rename(p, p .. ".x")
      local r2 = run({copy, "--json"})
      if path_set(r2.missing)[p] then victim = p end
      os.rename(p .. ".x", p)
      if victim then break end
    end
    assert.is_not_nil(victim, "no data file of the other manifests was checked")
    assert.is_true(path_set(r.missing)[gone_manifest])
  end)

  it("a corrupt manifest is reported by its path; the other manifests' files are still checked", function()
    local manifests = latest_paths("/manifest/manifest%-[^l][^/]*$")
    local whole = H.decode((verify_cli({copy, "--json"})))
    H.write_file(manifests[1], "Obj\1 garbage")
    local r = run({copy, "--json"})
    assert.is_true(path_set(r.unreadable)[manifests[1]], "corrupt manifest not reported by its path")
    assert.is_true(r.checked.data_files > 0 and r.checked.data_files < whole.checked.data_files)
  end)

  it("files a long-lived changelog adds are needed too", function()
    local latest = H.used_paths(latest_only(refs), copy)
    -- a snapshot whose delta adds a data file the latest no longer uses
    -- (in the live set of N, not of N - 1, not of the latest)
    local function data_set(id)
      local set = {}
      for _, p in ipairs(refs.main.snapshots[tostring(id)] or {}) do
        if p:match("/data%-[^/]*$") then set[copy .. "/" .. p] = true end
      end
      return set
    end
    local id, added
    for n = 2, 100 do
      if not refs.main.snapshots[tostring(n)] then break end
      local prev = data_set(n - 1)
      for p in pairs(data_set(n)) do
        if not prev[p] and not latest[p] then id, added = n, p end
      end
      if id then break end
    end
    assert.is_not_nil(id)
    -- changelog/changelog-<id>: snapshot <id> whose changelog list is its delta list
    local json = H.read_file(copy .. "/snapshot/snapshot-" .. id)
    local delta = H.cjson.decode(json).deltaManifestList
    json = json:gsub('"changelogManifestList" : null', '"changelogManifestList" : "' .. delta .. '"')
    assert.truthy(json:find('"changelogManifestList" : "' .. delta, 1, true))
    os.execute("mkdir -p " .. H.sh_quote(copy .. "/changelog"))
    H.write_file(copy .. "/changelog/changelog-" .. id, json)
    local whole = H.decode((verify_cli({copy, "--json"})))
    assert.is_true(whole.ok)
    assert.equals(1, whole.changelogs)
    os.remove(added)
    local r = run({copy, "--json"})
    local msg
    for _, m in ipairs(r.missing) do if m.path == added then msg = m.message end end
    assert.is_not_nil(msg, "a file the changelog adds was not checked")
    assert.matches("changelog " .. id .. " of branch main", msg)
  end)

  it("--all-snapshots finds a file only an older snapshot needs", function()
    local all = H.used_paths(refs, copy)
    local latest = H.used_paths(latest_only(refs), copy)
    local older_only
    for p in pairs(all) do
      if not latest[p] and p:match("/data%-[^/]*$") then older_only = p; break end
    end
    assert.is_not_nil(older_only)
    os.remove(older_only)
    local out, err, rc = verify_cli({copy, "--json"})
    assert.equals(0, rc, err)
    assert.is_true(H.decode(out).ok)
    local r = run({copy, "--json", "--all-snapshots"})
    assert.same({[older_only] = true}, path_set(r.missing))
  end)
end)

describe("Table:verify", function()
  it("returns the result table; misuse raises", function()
    local t = assert(paimon.open(H.fixture(PK)))
    local seen = {}
    local r = assert(t:verify{threads = 2, progress = function(phase) seen[phase] = true end})
    assert.is_true(r.ok)
    assert.equals(1, r.branches)
    assert.equals(1, r.snapshots)
    assert.is_true(r.checked.data_files > 0 and r.checked.manifests > 0)
    assert.is_true(seen["checking files"])
    assert.has_error(function() t:verify{threads = 0} end)
    assert.has_error(function() t:verify{progress = 1} end)
    assert.has_error(function() t:verify(1) end)
    t:close()
    -- the check itself cannot run: nil, message, code
    local copy, dir = H.copy_table(H.fixture(PK))
    H.write_file(copy .. "/tag", "not a directory")
    t = assert(paimon.open(copy))
    local nope, msg, code = t:verify()
    assert.is_nil(nope)
    assert.matches("tag", msg)
    assert.is_string(code)
    t:close()
    H.rmdir(dir)
  end)

  it("verify.lua rejects bad arguments with exit code 2", function()
    local _, _, rc = verify_cli({})
    assert.equals(2, rc)
    _, _, rc = verify_cli({H.fixture(PK), "--threads", "0"})
    assert.equals(2, rc)
    _, _, rc = verify_cli({H.fixture(PK), "--bogus"})
    assert.equals(2, rc)
  end)
end)
