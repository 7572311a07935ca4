-- Orphan file cleaning on temp copies of every Java fixture: exactly the
-- files the fixture's SOURCE.md lists as referenced by nothing are removed,
-- everything a snapshot, tag or branch uses (walked with the independent
-- python3-avro reader) stays. Plus Java's safety rules: no future cut-off,
-- abort when the used set cannot be built, only Paimon's own directories and
-- names, nothing outside the table directory, dry runs.
local H = require "helper"
local paimon = require "paimon"
local maint = require "paimon.maint"

local ORC = "cpp-parquet-append_10-orc-manifests"

local REFS_PY = [==[
import json, os, sys
sys.path.insert(0, sys.argv[1])
import pyref

table = sys.argv[2].rstrip("/")

def rel(p):
    if p.startswith("file:") or p.startswith("FILE:"):
        p = p[5:]
        while p.startswith("//"): p = p[1:]
    return p

def data_path(tbl, e, info):
    keys, types, dname, legacy = info
    f = e["_FILE"]
    ext = f.get("_EXTERNAL_PATH")
    if ext is not None:
        return rel(ext)
    vals = pyref.decode_binrow(bytes(e["_PARTITION"]), types, "partition")
    pp = pyref.partition_path(keys, types, vals, dname, legacy)
    b = e["_BUCKET"]
    bd = "bucket-postpone" if b == -2 else "bucket-%d" % b
    pdir = tbl.options.get("data-file.path-directory")
    p = pp + bd + "/" + f["_FILE_NAME"]
    if pdir: p = pdir.strip("/") + "/" + p
    return p

def snap_refs(tbl, snap):
    info = tbl.partition_info()
    out = set()
    for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
        n = snap.get(key)
        if n:
            out.add("manifest/" + n)
            for m in pyref.read_avro(tbl.manifest_path(n)):
                out.add("manifest/" + m["_FILE_NAME"])
    for e in tbl.live_files(snap):
        p = data_path(tbl, e, info)
        out.add(p)
        d = p.rsplit("/", 1)[0]
        for x in e["_FILE"].get("_EXTRA_FILES") or []:
            out.add(d + "/" + x)
    n = snap.get("changelogManifestList")
    if n:
        for m in pyref.read_avro(tbl.manifest_path(n)):
            for e in pyref.read_avro(tbl.manifest_path(m["_FILE_NAME"])):
                if e["_KIND"] == 0:
                    out.add(data_path(tbl, e, info))
    im = snap.get("indexManifest")
    if im:
        out.add("manifest/" + im)
        in_data = str(tbl.options.get("index-file-in-data-file-dir", "false")).lower() == "true"
        for e in pyref.read_avro(tbl.manifest_path(im)):
            ext = e.get("_EXTERNAL_PATH")
            if ext:
                out.add(rel(ext))
            elif in_data:
                keys, types, dname, legacy = info
                vals = pyref.decode_binrow(bytes(e["_PARTITION"]), types, "partition")
                pp = pyref.partition_path(keys, types, vals, dname, legacy)
                out.add(pp + "bucket-%d/" % e["_BUCKET"] + e["_FILE_NAME"])
            else:
                out.add("index/" + e["_FILE_NAME"])
    if snap.get("statistics"):
        out.add("statistics/" + snap["statistics"])
    return sorted(out)

def branch_refs(branch):
    tbl = pyref.Table(table, branch)
    res = {"snapshots": {}, "tags": {}}
    files = pyref.snapshot_files(tbl.broot)
    for sid in sorted(files):
        s = pyref.read_json(os.path.join(tbl.broot, "snapshot", files[sid]))
        res["snapshots"][str(sid)] = snap_refs(tbl, s)
    tdir = os.path.join(tbl.broot, "tag")
    if os.path.isdir(tdir):
        for n in sorted(os.listdir(tdir)):
            if n.startswith("tag-"):
                res["tags"][n[4:]] = snap_refs(tbl, pyref.read_json(os.path.join(tdir, n)))
    return res

out = {"main": branch_refs(None)}
bdir = os.path.join(table, "branch")
if os.path.isdir(bdir):
    for n in sorted(os.listdir(bdir)):
        if n.startswith("branch-"):
            out[n[7:]] = branch_refs(n[7:])
json.dump(out, sys.stdout)
]==]

local function refs(table_path)
  local refs_script = os.tmpname()
  H.write_file(refs_script, REFS_PY)
  local out, err, code = H.run("/usr/bin/python3 " .. H.sh_quote(refs_script) .. " " ..
                               H.sh_quote(H.spec_dir .. "support") .. " " .. H.sh_quote(table_path))
  os.remove(refs_script)
  assert(code == 0, "refs.py failed: " .. err)
  return H.cjson.decode(out)
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

local function used_paths(r, root)
  local set = {}
  for _, b in pairs(r) do
    for _, group in ipairs{b.snapshots, b.tags} do
      for _, paths in pairs(group) do
        for _, p in ipairs(paths) do
          if p:sub(1, 1) ~= "/" then set[root .. "/" .. p] = true end
        end
      end
    end
  end
  return set
end

local function tree(dir)
  local out = H.run("cd " .. H.sh_quote(dir) .. " && find . -type f -o -type l | sort | " ..
                    "while read f; do printf '%s ' \"$f\"; cksum < \"$f\"; done")
  return out
end

local function files(dir)
  local out = H.run("cd " .. H.sh_quote(dir) .. " && find . -type f | sort")
  local set = {}
  for l in out:gmatch("[^\n]+") do set[l:sub(3)] = true end
  return set
end

-- The fixture's "files present but referenced by nothing" list.
local function source_orphans(fixture_table)
  local src = H.read_file(fixture_table:match("(.*)/[^/]+/[^/]+$") .. "/SOURCE.md")
  local line = src:match("candidate orphans%): ([^\n]*)")
  local set = {}
  if line and line ~= "none" then
    for p in line:gmatch("'([^']+)'") do set[p] = true end
  end
  return set
end

local function orphan_cli(args)
  local all = {"remove_orphan_files.lua"}
  for _, a in ipairs(args) do all[#all + 1] = a end
  return H.paimon_lua(all)
end

describe("remove_orphan_files.lua on every Java fixture", function()
  for _, fx in ipairs(H.fixture_tables()) do
    if fx.name == ORC then
      it("refuses " .. fx.name .. " (ORC manifests) and changes nothing", function()
        local copy, dir = H.copy_table(fx.path)
        local before = tree(copy)
        local _, err, rc = orphan_cli({copy, "--older-than", "0s"})
        assert.equals(1, rc)
        assert.matches("manifest.format", err, 1, true)
        assert.equals(before, tree(copy))
        H.rmdir(dir)
      end)
    else
      it("removes exactly the unreferenced files of " .. fx.name, function()
        local copy, dir = H.copy_table(fx.path)
        local expected = source_orphans(fx.path)
        local before = files(copy)
        local used = used_paths(refs(copy), copy)
        local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--json"})
        assert.equals(0, rc, err)
        local res = H.cjson.decode(out)
        local after = files(copy)
        local removed = {}
        for p in pairs(before) do if not after[p] then removed[p] = true end end
        assert.same(expected, removed)
        local n = 0
        for _, c in pairs(res.deleted) do n = n + c end
        for _ in pairs(expected) do n = n - 1 end
        assert.equals(0, n)
        for p in pairs(used) do assert.is_true(exists(p), "used file deleted: " .. p) end
        -- non-Paimon files (README, commit_messages-*) are never touched
        for p in pairs(before) do
          if not p:match("/") or p:match("commit_messages") then assert.is_true(after[p], p) end
        end
        H.rmdir(dir)
      end)
    end
  end
end)

local BITMAP = "cpp-parquet-append_with_bitmap"     -- 4 orphan files
local TAGGED = "cpp-parquet-pk_btree_partitioned_e2e"

describe("orphan cleaning safety", function()
  it("rejects a cut-off in the future", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local before = tree(copy)
    local _, err, rc = orphan_cli({copy, "--older-than", "2999-01-01 00:00:00"})
    assert.equals(2, rc)
    assert.matches("future", err, 1, true)
    local t = assert(paimon.open(copy))
    assert.has_error(function() t:remove_orphan_files{older_than = maint.now_ms() + 60000} end)
    t:close()
    assert.equals(before, tree(copy))
    H.rmdir(dir)
  end)

  it("keeps young files: the default cut-off is one day", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local before = tree(copy)
    local out, err, rc = orphan_cli({copy, "--json"})
    assert.equals(0, rc, err)
    assert.equals(0, H.cjson.decode(out).files)
    assert.equals(before, tree(copy))
    -- once they are two days old they go
    H.run("find " .. H.sh_quote(copy) .. " -type f -exec touch -d '2 days ago' {} +")
    out, err, rc = orphan_cli({copy, "--json"})
    assert.equals(0, rc, err)
    assert.equals(4, H.cjson.decode(out).files)
    H.rmdir(dir)
  end)

  it("a dry run changes nothing and lists the plan", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local before = tree(copy)
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(4, #r.paths)
    assert.equals(before, tree(copy))
    out, err, rc = orphan_cli({copy, "--older-than", "0s", "--dry-run"})
    assert.equals(0, rc, err)
    assert.matches("manifest-53092f56", out, 1, true)
    assert.equals(before, tree(copy))
    H.rmdir(dir)
  end)

  it("aborts when a tag cannot be read, naming it, and deletes nothing", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    H.write_file(copy .. "/tag/tag-fallback-base", "{ broken")
    local before = tree(copy)
    local _, err, rc = orphan_cli({copy, "--older-than", "0s"})
    assert.equals(1, rc)
    assert.matches("tag-fallback-base", err, 1, true)
    assert.equals(before, tree(copy))
    H.rmdir(dir)
  end)

  it("aborts when a manifest of the used set is missing, and deletes nothing", function()
    local copy, dir = H.copy_table(H.fixture(TAGGED))
    local r = refs(copy)
    -- remove one manifest the branch uses
    local victim
    for _, paths in pairs(r.fallback.snapshots) do
      for _, p in ipairs(paths) do if p:match("^manifest/manifest%-[0-9a-f]") then victim = p end end
    end
    assert.is_not_nil(victim)
    os.remove(copy .. "/" .. victim)
    local before = tree(copy)
    local _, err, rc = orphan_cli({copy, "--older-than", "0s"})
    assert.is_true(rc == 1 or rc == 3)
    assert.matches(victim:match("[^/]+$"), err, 1, true)
    assert.equals(before, tree(copy))
    H.rmdir(dir)
  end)

  it("aborts when no snapshot uses any file while data files exist", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    H.run("rm -f " .. H.sh_quote(copy) .. "/snapshot/*")
    local before = tree(copy)
    local _, err, rc = orphan_cli({copy, "--older-than", "0s"})
    assert.equals(3, rc)
    assert.matches("no snapshot", err, 1, true)
    assert.equals(before, tree(copy))
    H.rmdir(dir)
  end)

  it("removes old temp files in snapshot/ but nothing it does not know", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local tmp = copy .. "/snapshot/.snapshot-2.0f6c3c5e-2c55-4f8b-9a55-7d1f3e3a9b1c.tmp"
    H.write_file(tmp, "partial")
    H.write_file(copy .. "/manifest/notes.txt", "keep me")
    H.write_file(copy .. "/bucket-0/random.bin", "keep me")
    H.write_file(copy .. "/schema/.schema-1.x.tmp", "keep me")
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(1, r.deleted.temp_files)
    assert.is_false(exists(tmp))
    assert.is_true(exists(copy .. "/manifest/notes.txt"))
    assert.is_true(exists(copy .. "/bucket-0/random.bin"))
    assert.is_true(exists(copy .. "/schema/.schema-1.x.tmp"))
    H.rmdir(dir)
  end)

  it("never deletes through a symlinked bucket directory pointing outside", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local outside = H.tmpdir()
    local sentinel = outside .. "/data-11111111-2222-3333-4444-555555555555-0.parquet"
    H.write_file(sentinel, "sentinel")
    H.run("touch -d '2 days ago' " .. H.sh_quote(sentinel))
    assert(os.execute("ln -s " .. H.sh_quote(outside) .. " " .. H.sh_quote(copy .. "/bucket-7")))
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.is_true(exists(sentinel))
    assert.equals(1, #r.skipped)
    assert.matches("outside", r.skipped[1].message, 1, true)
    assert.equals(4, r.files)
    H.rmdir(outside)
    H.rmdir(dir)
  end)

  it("keeps files only a branch uses", function()
    local copy, dir = H.copy_table(H.fixture("cpp-parquet-append_table_with_append_pt_branch"))
    local used = used_paths(refs(copy), copy)
    local out, err, rc = orphan_cli({copy, "--older-than", "0s", "--json", "--threads", "8"})
    assert.equals(0, rc, err)
    assert.equals(0, H.cjson.decode(out).files)
    for p in pairs(used) do assert.is_true(exists(p), p) end
    H.rmdir(dir)
  end)

  it("has a Lua API with the same result shape", function()
    local copy, dir = H.copy_table(H.fixture(BITMAP))
    local t = assert(paimon.open(copy))
    local phases = {}
    -- the copy's files were written just now: let the clock pass their mtimes
    -- so a cut-off of "now" really is after them
    os.execute("sleep 0.05")
    local r = assert(t:remove_orphan_files{older_than = maint.now_ms(), threads = 2,
                                           progress = function(phase) phases[phase] = true end})
    t:close()
    assert.equals(4, r.files)
    assert.equals(1, r.deleted.data_files)
    assert.equals(1, r.deleted.manifests)
    assert.equals(2, r.deleted.manifest_lists)
    assert.is_true(r.bytes.data_files > 0)
    assert.same({}, r.failures)
    assert.is_true(phases.deleting)
    H.rmdir(dir)
  end)
end)
