-- compact_manifest.lua: --dry-run lists what would be merged and changes
-- nothing; the real run commits a COMPACT snapshot whose live files are the
-- same, checked by the independent python3-avro reader.
local H = require "helper"

local COMPLEX = "cpp-parquet-append_complex_data"

local function files_of(path)
  local names = {}
  for _, f in ipairs(H.pyref_json(path, "files")) do names[#names + 1] = f.file_path end
  table.sort(names)
  return names
end

describe("compact_manifest.lua", function()
  it("--dry-run lists the manifests and changes nothing", function()
    local copy, dir = H.copy_table(H.fixture(COMPLEX))
    local before = H.fingerprint(copy)
    local out, err, rc = H.paimon_lua({"compact_manifest.lua", copy, "--dry-run", "--json"})
    assert.equals(0, rc, err)
    local plan = H.cjson.decode(out)
    assert.is_true(plan.would_compact)
    local py = H.cjson.decode((H.pyref(copy, "manifests")))
    assert.equals(#py, #plan.manifests)
    for i, m in ipairs(py) do assert.equals(m.file_name, plan.manifests[i].file_name) end
    assert.equals(before, H.fingerprint(copy))
    H.rmdir(dir)
  end)

  it("commits a COMPACT snapshot with the same live files", function()
    local copy, dir = H.copy_table(H.fixture(COMPLEX))
    local files_before = files_of(copy)
    local out, err, rc = H.paimon_lua({"compact_manifest.lua", copy, "--json"})
    assert.equals(0, rc, err)
    local r = H.cjson.decode(out)
    assert.equals(5, r.snapshot_id)
    local snaps = H.cjson.decode((H.pyref(copy, "snapshots")))
    assert.equals("COMPACT", snaps[#snaps].commit_kind)
    assert.same(files_before, files_of(copy))
    local mans = H.cjson.decode((H.pyref(copy, "manifests")))
    assert.equals(1, #mans)
    assert.equals(0, mans[1].num_deleted_files)
    -- nothing left to do afterwards
    out, err, rc = H.paimon_lua({"compact_manifest.lua", copy})
    assert.equals(0, rc, err)
    assert.matches("nothing to compact", out, 1, true)
    H.rmdir(dir)
  end)
end)
