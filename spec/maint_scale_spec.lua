-- Maintenance through the Lua API and the scripts on a table written here
-- with the Write/Commit API (real Avro data files): 80 snapshots of appends,
-- partition rewrites (DELETE entries from snapshot:files() + new files, as
-- OVERWRITE), a tag, a partition dropped with drop_partition.lua; then
-- t:expire_snapshots and expire.lua with different settings. After every
-- run the latest snapshot and the tag read back completely (rows through
-- snapshot:read, files through pyref); at the end the data files on disk
-- are exactly those of the latest snapshot and the tag (pyref), and
-- remove_orphan_files.lua finds nothing left behind.
local H = require "helper"
local paimon = require "paimon"
local core = require "paimon.core"
local cjson = H.cjson
local create_table = paimon.create_table or core.create_table

local N = 80

local function pyref_files(path, extra)
  local set, n = {}, 0
  for _, f in ipairs(H.pyref_json(path, "files", extra)) do set[f.file_path] = true; n = n + 1 end
  return set, n
end

local function count_rows(s)
  local n = 0
  for _ in assert(s:read()) do n = n + 1 end
  return n
end

local function data_files_on_disk(path) return H.file_set(path, "-path './dt=*/bucket-0/*' -type f") end

describe("maintenance at scale through Lua and the scripts", function()
  local dir, path, t
  local rows = {}        -- live rows per partition
  local id = 0
  local tag_rows

  local function total()
    local n = 0
    for _, v in pairs(rows) do n = n + v end
    return n
  end

  local function append(p, k)
    local w = assert(t:new_write{})
    for j = 1, k do w:write{id = id * 10 + j, dt = p} end
    local msgs = assert(w:prepare_commit())
    w:close()
    return msgs
  end

  local function check_readable(what)
    local latest = assert(t:latest_snapshot())
    assert.equals(total(), count_rows(latest), what .. ": rows of the latest snapshot")
    for _, extra in ipairs({{}, {"--tag", "keep"}}) do
      local set = pyref_files(path, extra)
      for f in pairs(set) do
        assert.is_true(H.read_file(path .. "/" .. f) ~= nil, what .. ": " .. f .. " missing")
      end
    end
    assert.equals(tag_rows, count_rows(assert(t:tag("keep"))), what .. ": rows of the tag")
  end

  setup(function()
    dir = H.tmpdir()
    path = dir .. "/db.db/t"
    t = assert(create_table(path, {fields = {{name = "id", type = "BIGINT"}, {name = "dt", type = "STRING"}},
                                   partition_keys = {"dt"}, options = {["file.format"] = "avro", bucket = -1}}))
    for i = 1, N do
      local p = "d" .. (i % 4)
      local c = t:new_commit{commit_user = "scale"}
      id = i
      if i % 10 == 0 then
        -- rewrite partition p: its live files as DELETE + one new file
        local msgs = {}
        for f in assert(assert(t:latest_snapshot()):files()) do
          if f.partition.dt == p then f.kind = "DELETE"; msgs[#msgs + 1] = f end
        end
        for _, m in ipairs(append(p, 1)) do msgs[#msgs + 1] = m end
        assert(c:commit(msgs, {kind = "OVERWRITE"}))
        rows[p] = 1
      else
        assert(c:commit(append(p, 3)))
        rows[p] = (rows[p] or 0) + 3
      end
      if i == 12 then
        -- tag "keep": a copy of snapshot 12's JSON
        os.execute("mkdir -p " .. H.sh_quote(path .. "/tag"))
        H.write_file(path .. "/tag/tag-keep", H.read_file(path .. "/snapshot/snapshot-12"))
        tag_rows = total()
      end
    end
  end)

  teardown(function() if dir then H.rmdir(dir) end end)

  it("expires in several runs and keeps everything retained", function()
    assert.equals(N, assert(t:latest_snapshot()).id)
    check_readable("before")
    -- 1: Lua, retain-min 60
    os.execute("sleep 0.05")
    local r = assert(t:expire_snapshots{retain_min = 60, older_than = core.now_ms(), max_deletes = 1000})
    assert.equals(20, r.expired)
    assert.equals("retain-min", r.capped_by)
    assert.is_true(r.deleted.data_files > 0)
    check_readable("retain-min 60")
    -- 2: expire.lua, retain-min 30, an expire limit of 25
    local out, err, code = H.paimon_lua({"expire.lua", path, "--retain-min", "30", "--older-than", "1ms",
                                         "--max-deletes", "25", "--json"})
    assert.equals(0, code, err)
    local j = cjson.decode(out)
    assert.equals(25, j.expired)
    assert.equals("expire-limit", j.capped_by)
    check_readable("expire.lua")
    -- 3: drop partition d1 (mark-delete), two more appends, expire all but the latest
    out, err, code = H.paimon_lua({"drop_partition.lua", path, "--partition", "dt=d1", "--json"})
    assert.equals(0, code, err)
    assert.equals(N + 1, cjson.decode(out).snapshot_id)
    rows.d1 = nil
    for k = 1, 2 do
      id = N + 1 + k
      assert(t:new_commit{commit_user = "scale"}:commit(append("d2", 2)))
      rows.d2 = rows.d2 + 2
    end
    -- the last commits may share this millisecond: let the clock pass them so
    -- "older than now" covers every snapshot but the latest
    os.execute("sleep 0.05")
    r = assert(t:expire_snapshots{retain_min = 1, older_than = core.now_ms(), max_deletes = 1000})
    assert.equals(N + 3 - 45 - 1, r.expired)
    check_readable("retain-min 1")
    assert.equals(tostring(N + 3), H.read_file(path .. "/snapshot/EARLIEST"))
    -- the data files on disk are exactly those of the latest snapshot and the tag
    local want = pyref_files(path, {})
    for f in pairs(pyref_files(path, {"--tag", "keep"})) do want[f] = true end
    local have = data_files_on_disk(path)
    for f in pairs(want) do assert.is_true(have[f], f .. " missing") end
    for f in pairs(have) do assert.is_true(want[f], f .. " should have been deleted") end
    -- nothing left behind for the orphan cleaner
    out, err, code = H.paimon_lua({"remove_orphan_files.lua", path, "--older-than", "1ms", "--allow-young-cutoff",
                                  "--dry-run", "--json"})
    assert.equals(0, code, err)
    j = cjson.decode(out)
    assert.equals(0, j.files)
    assert.is_true(j.listed > 0)
    assert.equals(j.listed, j.used)
  end)
end)
