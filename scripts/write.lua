-- write.lua TABLE [--input ROWS.jsonl] [--commit-user U] [--identifier N] [--json]
-- Appends rows (one JSON object per line, column -> value) to an append-only
-- Avro table as one commit (one new snapshot).
local paimon = require "paimon"
local cli = require "paimon.cli"
local json = require "paimon.json"
local base64 = require "paimon.base64"
local cjson = require "cjson"

local spec = {
  name = "write.lua",
  positional = {"TABLE"},
  flags = {input = "string", commit_user = "string", identifier = "string", branch = "string", json = "boolean"},
  usage = [[
usage: paimon-lua write.lua TABLE [--input ROWS.jsonl] [--commit-user USER] [--identifier N]
                 [--branch NAME] [--json]
  Reads one JSON object per line (stdin by default), {"column": value, ...}, and
  commits all rows as one APPEND snapshot. Values: numbers, strings, true/false,
  null; DECIMAL as "12.34" or a number (its text, exact: never rounded);
  DATE "yyyy-MM-dd"; TIMESTAMP "yyyy-MM-dd HH:mm:ss[.fff]"; BINARY/BYTES
  base64 (top-level columns); ARRAY a JSON array, MAP/ROW a JSON object. Integers beyond 2^53 must be
  given as strings ("9223372036854775807"): the JSON decoder keeps doubles.
  After the commit the table's upkeep runs, as after a Java writer's commit (automatic
  tags, tag, partition, consumer, snapshot and changelog expiry by the table's options),
  unless write-only=true: what it removed or its failure is a line on stderr ("upkeep:
  ..."); it never fails the commit (docs/maintenance.md, "Upkeep after every commit").
  --input FILE       read the rows from FILE instead of stdin
  --commit-user U    commit user (default: a random UUID)
  --identifier N     commit identifier (default 9223372036854775807, Java batch)
                     With both --commit-user and --identifier a re-run is safe: a
                     commit of that user with this identifier (or a later one)
                     already in the table is reported, nothing is written again.
  --json             print {"snapshot_id", "rows", "files", "upkeep"} as JSON (a retry
                     that landed before: {"snapshot_id", "rows": 0, "files": 0,
                     "already_committed": true})
exit codes: 0 committed (or nothing to commit, or committed before), 1 failed or
            outcome uncertain (the message says "outcome uncertain": the snapshot may
            exist, every file is kept; re-run with the same --commit-user and
            --identifier to learn whether it landed), 2 usage, 3 conflict]],
}

local function unbase64(s, col)
  local raw = base64.decode(s)
  if not raw then cli.fail("column '" .. col .. "': not base64: " .. s, "input") end
  return raw
end

-- With a commit user and an identifier: Java's filterCommitted. Returns the
-- snapshot id of this user's newest commit when `identifier` is not newer
-- than it (the identifier landed already), else nil.
local function landed(c, identifier)
  local left, snapshot_id, last = c:filter_committed({identifier})
  if not left then cli.fail(snapshot_id, last) end
  if #left == 0 and snapshot_id then return snapshot_id, last end
  return nil
end

local function report_landed(opts, identifier, snapshot_id, last)
  if opts.json then
    cli.print_json({snapshot_id = snapshot_id, rows = 0, files = 0, already_committed = true},
                   {"snapshot_id", "rows", "files", "already_committed"})
  elseif last == identifier then
    io.stdout:write(string.format("already committed in snapshot %d (commit user %s, identifier %d); "
                                  .. "nothing written\n", snapshot_id, opts.commit_user, identifier))
  else
    io.stdout:write(string.format("already committed: commit user %s is at identifier %d (snapshot %d), past %d; "
                                  .. "nothing written\n", opts.commit_user, last, snapshot_id, identifier))
  end
  return cli.EXIT_OK
end

local function main(opts, pos)
  local t = cli.check(cli.open(pos[1], opts))
  local identifier
  if opts.identifier then
    identifier = math.tointeger(tonumber(opts.identifier))
    if not identifier then cli.usage_error("--identifier expects an integer") end
  end
  -- a retry (same user and identifier) whose commit landed writes nothing
  local retry = opts.commit_user and identifier
  local c = t:new_commit{commit_user = opts.commit_user}
  if retry then
    local sid, last = landed(c, identifier)
    if sid then t:close(); return report_landed(opts, identifier, sid, last) end
  end
  local binary = {}
  for _, f in ipairs(t:schema().fields) do
    local ty = f.type:upper()
    if ty:match("^BINARY") or ty:match("^VARBINARY") or ty:match("^BYTES") then binary[f.name] = true end
  end
  local input = io.stdin
  if opts.input then
    local err
    input, err = io.open(opts.input, "rb")
    if not input then cli.fail("cannot read " .. opts.input .. ": " .. tostring(err), "io") end
  end
  local w = cli.check(t:new_write{})
  local n, lineno = 0, 0
  for line in input:lines() do
    lineno = lineno + 1
    if line:match("%S") then
      -- say what is wrong: invalid JSON, or valid JSON that is not an object
      -- (cjson turns [1,2] into a table too)
      local ok, row = pcall(cjson.decode, line)
      if not ok then
        cli.fail(string.format("line %d: invalid JSON: %s", lineno, cli.strip_where(row)), "input")
      end
      if type(row) ~= "table" or not line:match("^%s*{") then
        local what = type(row) == "table" and "an array" or row == cjson.null and "null" or type(row)
        cli.fail(string.format("line %d: not a JSON object but %s", lineno, what), "input")
      end
      for col in pairs(binary) do
        if type(row[col]) == "string" then row[col] = unbase64(row[col], col) end
      end
      local wok, werr = pcall(w.write, w, row)
      if not wok then cli.fail(string.format("line %d: %s", lineno, cli.strip_where(werr)), "input") end
      n = n + 1
    end
  end
  if input ~= io.stdin then input:close() end
  local msgs = cli.check(w:prepare_commit())
  if retry then   -- again: a concurrent run of the same commit may have landed meanwhile
    local ok, sid, last = pcall(landed, c, identifier)
    if not ok then c:abort(msgs); error(sid, 0) end
    if sid then
      c:abort(msgs)
      w:close()
      t:close()
      return report_landed(opts, identifier, sid, last)
    end
  end
  local id, committed, code = c:commit(msgs, {identifier = identifier})
  if not id then
    -- an uncertain outcome keeps every file: its snapshot may exist
    if code ~= "uncertain" then c:abort(msgs) end
    cli.fail(committed, code)
  end
  w:close()
  -- the commit's upkeep (Java's TableCommitImpl): its failure never fails the commit
  local upkeep_result = code
  if not opts.json then require("paimon.upkeep").report_after_commit(upkeep_result, io.stderr) end
  if opts.json then
    cli.print_json({snapshot_id = committed and id or json.null, rows = n, files = #msgs,
                    upkeep = require("paimon.upkeep").json_ready(upkeep_result) or json.null},
                   {"snapshot_id", "rows", "files", "upkeep"})
  elseif committed then
    io.stdout:write(string.format("committed snapshot %d: %d rows in %d files\n", id, n, #msgs))
  else
    io.stdout:write("nothing to commit\n")
  end
  t:close()
  return cli.EXIT_OK
end

return cli.run(spec, main, {...})
