-- One writer of spec/s3_faults_spec.lua's concurrency tests, run as
--   paimon-lua s3_commit_driver.lua URI ENDPOINT USER FIRST COUNT [BARRIER]
-- Commits COUNT single-row APPEND snapshots (identifiers FIRST ..
-- FIRST+COUNT-1, commit user USER) in one process, one table handle.
-- With BARRIER (a file path): every commit is prepared (data files written)
-- first, then the driver waits until BARRIER exists and commits, so that
-- writers started together race for the same snapshot id.
-- Prints one line per commit: "IDENTIFIER ok SNAPSHOT_ID" or
-- "IDENTIFIER fail CODE MESSAGE" (an acknowledged commit is an "ok" line).
local paimon = require "paimon"

local uri, endpoint, user, first, count, barrier = ...
first, count = math.tointeger(tonumber(first)), math.tointeger(tonumber(count))
assert(uri and endpoint and user and first and count, "usage: URI ENDPOINT USER FIRST COUNT [BARRIER]")

local t = assert(paimon.open(uri, {options = {["s3.endpoint"] = endpoint, ["s3.path.style.access"] = "true",
                                              ["s3.retry-base"] = "20 ms"}}))
local c = t:new_commit{commit_user = user}

local function prepare(i)
  local w = assert(t:new_write{})
  w:write({id = i, writer = user})
  local msgs = assert(w:prepare_commit())
  w:close()
  return msgs
end

local function commit(identifier, msgs)
  local id, committed_or_msg, code = c:commit(msgs, {identifier = identifier})
  if id then
    io.stdout:write(string.format("%d ok %d\n", identifier, id))
  else
    c:abort(msgs)
    io.stdout:write(string.format("%d fail %s %s\n", identifier, tostring(code),
                                  tostring(committed_or_msg):gsub("\n", " ")))
  end
  io.stdout:flush()
end

if barrier then
  local prepared = {}
  for i = first, first + count - 1 do prepared[i] = prepare(i) end
  local deadline = os.time() + 30
  local f = io.open(barrier, "r")
  while not f do
    assert(os.time() < deadline, "barrier " .. barrier .. " never appeared")
    os.execute("sleep 0.02")
    f = io.open(barrier, "r")
  end
  f:close()
  for i = first, first + count - 1 do commit(i, prepared[i]) end
else
  for i = first, first + count - 1 do commit(i, prepare(i)) end
end
t:close()
