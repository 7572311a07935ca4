-- Issue 24, defect 8: Ctrl-C (SIGINT) or SIGTERM during expire exited 130
-- with no message and left the range's snapshots unreadable until expire
-- ran again. An interruption now stops at the next consistent point: the
-- data/manifest phases stop between batches, the range's snapshot files
-- still go and EARLIEST moves (every snapshot left is whole); orphan
-- cleaning stops between deletions. Both say what was done ("interrupted").
local H = require "helper"
local paimon = require "paimon"

local N = 300   -- data files the expiration deletes

-- A table (a, b) whose snapshot 1 adds N files (one per b), snapshot 2
-- drops them all (a = 'x'), snapshot 3 adds one more: expiring 1 and 2
-- deletes N data files.
local function table_with_dropped_files()
  local dir = H.tmpdir()
  local t = assert(paimon.create_table(dir .. "/t", {
    fields = {{name = "a", type = "STRING"}, {name = "b", type = "INT"}, {name = "v", type = "INT"}},
    partition_keys = {"a", "b"}, options = {["file.format"] = "avro"}}))
  local function commit(rows)
    local w = assert(t:new_write{})
    for _, r in ipairs(rows) do w:write(r) end
    local msgs = assert(w:prepare_commit())
    assert(t:new_commit{commit_user = "u"}:commit(msgs))
    w:close()
  end
  local rows = {}
  for i = 1, N do rows[i] = {a = "x", b = i, v = i} end
  commit(rows)
  assert(t:drop_partitions({{a = "x"}}))
  commit({{a = "y", b = 0, v = 0}})
  return t, dir
end

local function count(dir, find_args)
  return select(2, H.file_set(dir .. "/t", find_args))
end

-- verify --all-snapshots: every snapshot left reads whole
local function whole(t)
  local r = assert(t:verify{all_snapshots = true})
  assert.equals(0, #r.missing)
  assert.equals(0, #r.unreadable)
end

describe("an interruption", function()
  -- threads = 1 and fast local deletes: the data phase reports progress
  -- once, at its end; the interruption then stops before the manifests
  it("stops expiration at a consistent point: the range's snapshots go, every snapshot left is whole", function()
    local t, dir = table_with_dropped_files()
    assert.equals(N + 1, count(dir, "-name 'data-*'"))
    local manifests = count(dir, "-name 'manifest-*'")
    local asked = false
    local r, msg, code = t:expire_snapshots{retain_min = 1, older_than = "0ms", threads = 1,
      progress = function(phase, done, total)
        if phase == "data files" and done == total and not asked then asked = true; paimon.interrupt() end
      end}
    assert.is_true(asked)
    assert.is_nil(r)
    assert.equals("interrupted", code)
    assert.matches("interrupted: snapshots %[1, 3%) expired %(2%), every snapshot left is whole; not deleted: %d+ " ..
                   "manifest%(s%) and list%(s%) %(remove_orphan_files.lua removes them%) and 0 data file%(s%)", msg)
    local left = tonumber(msg:match("not deleted: (%d+)"))
    assert.is_true(left > 0, msg)
    assert.equals(1, count(dir, "-name 'data-*'"))                  -- the data phase ran whole
    assert.equals(manifests, count(dir, "-name 'manifest-*'"))       -- the manifests' phases did not run
    assert.is_false(H.exists(dir .. "/t/snapshot/snapshot-1"))
    assert.is_false(H.exists(dir .. "/t/snapshot/snapshot-2"))
    assert.equals("3", H.read_file(dir .. "/t/snapshot/EARLIEST"))
    whole(t)
    -- what was left (manifests and lists) is orphan cleaning's, exactly
    local o = assert(t:remove_orphan_files{older_than = "0ms", allow_young_cutoff = true})
    assert.equals(left, o.deleted.manifests + o.deleted.manifest_lists)
    whole(t)
    -- outside an operation paimon.interrupt() does nothing: the next one runs whole
    paimon.interrupt()
    assert(t:expire_snapshots{retain_min = 1, older_than = "0ms"})
    t:close()
    H.rmdir(dir)
  end)

  it("from a real SIGTERM in paimon-lua: message, exit 130; outside such an operation it ends the process", function()
    local t, dir = table_with_dropped_files()
    t:close()
    -- the script signals its own process (sh's parent) when the data phase ends
    H.write_file(dir .. "/run.lua", [[
local paimon, cli = require "paimon", require "paimon.cli"
local t = assert(paimon.open(arg[1]))
local sent = false
local r, msg, code = t:expire_snapshots{retain_min = 1, older_than = "0ms", threads = 1,
  progress = function(phase, done, total)
    -- SIGTERM (the same handler as SIGINT): a test runner started in the
    -- background has SIGINT ignored, and an ignored signal stays ignored;
    -- io.popen, not os.execute: system() blocks signals in the caller
    if phase == "data files" and done == total and not sent then sent = true; io.popen("kill -TERM $PPID"):close() end
  end}
io.stderr:write(tostring(msg), "\n")
os.exit(r and 0 or cli.exit_code(code))
]])
    local _, err, rc = H.paimon_lua({dir .. "/run.lua", dir .. "/t"})
    assert.equals(130, rc, err)
    assert.matches("interrupted: stopping at the next consistent point", err, 1, true)
    assert.matches("interrupted: snapshots [1, 3) expired (2), every snapshot left is whole", err, 1, true)
    t = assert(paimon.open(dir .. "/t"))
    whole(t)
    t:close()
    -- no interruptible operation running: the signal ends the process at once
    H.write_file(dir .. "/plain.lua", 'io.popen("kill -TERM $PPID"):close()\nio.stderr:write("still running\\n")\nos.exit(0)\n')
    _, err, rc = H.paimon_lua({dir .. "/plain.lua"})
    assert.is_nil(err:find("still running", 1, true))
    assert.are_not.equals(0, rc)
    H.rmdir(dir)
  end)
end)
