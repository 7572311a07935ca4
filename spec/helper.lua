-- Shared helpers for the busted specs: paths, fixtures, temp copies,
-- running the CLI and the independent python3-avro reader.
local H = {}

local function script_dir()
  local src = debug.getinfo(1, "S").source:sub(2)
  return src:match("(.*/)") or "./"
end

H.root = (os.getenv("PWD") or ".")
H.build = os.getenv("PAIMON_BUILD") or (H.root .. "/build")
H.fixtures = os.getenv("PAIMON_FIXTURES") or (H.root .. "/spec/fixtures")
H.cli = H.build .. "/paimon-lua"
H.spec_dir = script_dir()

function H.sh_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Run a shell command; returns stdout, stderr, exit code.
-- The exit code also goes through a file: LuaJIT's pipe close returns no
-- status (Lua 5.1 semantics), so specs run unchanged under both.
function H.run(cmd)
  local errf, codef = os.tmpname(), os.tmpname()
  local p = io.popen(cmd .. " 2>" .. errf .. "\necho $? >" .. codef, "r")
  local out = p:read("*a")
  p:close()
  local f = io.open(errf, "r")
  local err = f and f:read("*a") or ""
  if f then f:close() end
  f = io.open(codef, "r")
  local code = f and tonumber(f:read("*l"))
  if f then f:close() end
  os.remove(errf)
  os.remove(codef)
  return out, err, code or 1
end

function H.paimon_lua(args)
  local parts = {H.sh_quote(H.cli)}
  for _, a in ipairs(args) do parts[#parts + 1] = H.sh_quote(a) end
  return H.run(table.concat(parts, " "))
end

-- paimon-lua SCRIPT ARGS...: H.script("expire.lua", {path, "--json"})
function H.script(script, args)
  local all = {script}
  for _, a in ipairs(args) do all[#all + 1] = a end
  return H.paimon_lua(all)
end

-- Java-written fixture tables: { name = ..., path = ... }
function H.fixture_tables()
  local out = {}
  local p = io.popen("ls -d " .. H.sh_quote(H.fixtures) .. "/paimon-java/*/*.db/* 2>/dev/null")
  for line in p:lines() do
    local name = line:match("paimon%-java/([^/]+)/")
    out[#out + 1] = {name = name, path = line}
  end
  p:close()
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

function H.fixture(name)
  for _, f in ipairs(H.fixture_tables()) do
    if f.name == name then return f.path end
  end
  error("no fixture " .. name)
end

function H.tmpdir()
  local out = H.run("mktemp -d /tmp/paimon-spec.XXXXXX")
  return (out:gsub("%s+$", ""))
end

-- Copy a fixture table to a temp dir; returns the copy's table path.
function H.copy_table(path)
  local dir = H.tmpdir()
  local _, err, code = H.run("cp -R " .. H.sh_quote(path) .. " " .. H.sh_quote(dir .. "/t"))
  assert(code == 0, err)
  return dir .. "/t", dir
end

function H.rmdir(dir)
  assert(dir:match("^/tmp/paimon%-spec%."), "refusing to remove " .. dir)
  H.run("rm -rf " .. H.sh_quote(dir))
end

function H.write_file(path, content)
  local f = assert(io.open(path, "wb"))
  f:write(content)
  f:close()
end

function H.read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- (os.execute: true under Lua 5.4, 0 under LuaJIT)
function H.is_dir(path)
  local r = os.execute("test -d " .. H.sh_quote(path))
  return r == true or r == 0
end

-- Runs fn() holding a machine-wide lock named `name` (a directory made
-- with mkdir, atomic): for tests that touch a fixed path outside their temp
-- dir (the external-paths fixture names /tmp/external), which the Lua 5.4
-- and LuaJIT passes, or two checkouts, would otherwise race on. A lock
-- older than 10 minutes is a crashed run's and is taken over.
function H.with_lock(name, fn)
  local dir = "/tmp/paimon-test-lock." .. name
  for _ = 1, 6000 do
    local r = os.execute("mkdir " .. H.sh_quote(dir) .. " 2>/dev/null")
    if r == true or r == 0 then break end   -- (true under Lua 5.4, 0 under LuaJIT)
    os.execute("find " .. H.sh_quote(dir) .. " -maxdepth 0 -mmin +10 -exec rmdir {} + 2>/dev/null; sleep 0.1")
  end
  local ok, err = pcall(fn)
  os.execute("rmdir " .. H.sh_quote(dir) .. " 2>/dev/null")
  if not ok then error(err, 0) end
end

function H.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

-- "relative path size checksum" (cksum) of every file and link below dir
function H.tree(dir)
  local out = H.run("cd " .. H.sh_quote(dir) .. " && find . -type f -o -type l | sort | " ..
                    "while read f; do printf '%s ' \"$f\"; cksum < \"$f\"; done")
  return out
end

-- Runs a CLI wrapper `run(args)` on the table copy and asserts that it exits
-- with code rc, names msg (plain text) on stderr and leaves the copy's tree
-- (H.tree) as it was; returns that tree.
function H.refuses_unchanged(copy, run, args, rc, msg)
  local assert = require "luassert"
  local before = H.tree(copy)
  local _, err, got = run(args)
  assert.equals(rc, got)
  assert.matches(msg, err, 1, true)
  assert.equals(before, H.tree(copy))
  return before
end

-- md5 of every file under dir, sorted: a byte-exact picture of the table
function H.fingerprint(dir)
  local out = H.run("cd " .. H.sh_quote(dir) .. " && find . -type f | sort | xargs md5sum")
  return out
end

-- The files below dir that `find . FIND_ARGS` lists (default "-type f"), as
-- a set of paths relative to dir; also their count.
function H.file_set(dir, find_args)
  local out = H.run("cd " .. H.sh_quote(dir) .. " && find . " .. (find_args or "-type f") .. " | sort")
  local set, n = {}, 0
  for line in out:gmatch("[^\n]+") do set[line:sub(3)] = true; n = n + 1 end
  return set, n
end

-- Decoded JSON; a readable error when out is not JSON.
function H.decode(out)
  local ok, v = pcall(H.cjson.decode, out)
  assert(ok, "not JSON: " .. tostring(out):sub(1, 300))
  return v
end

-- inspect.lua PATH VIEW --json EXTRA...: decoded rows and the raw JSON text.
function H.inspect_json(path, view, extra)
  local args = {"inspect.lua", path, view, "--json"}
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  local out, err, code = H.paimon_lua(args)
  assert(code == 0, "inspect.lua " .. view .. " failed: " .. err)
  return H.decode(out), out
end

H.cjson = require "cjson"

-- /usr/bin/python3 (Debian's, with python3-avro + zstandard) running
-- spec/support/SCRIPT with args; returns stdout, stderr, exit code.
function H.support_py(script, args)
  local cmd = "/usr/bin/python3 " .. H.sh_quote(H.spec_dir .. "support/" .. script)
  for _, a in ipairs(args) do cmd = cmd .. " " .. H.sh_quote(a) end
  return H.run(cmd)
end

-- The independent reader spec/support/pyref.py; returns stdout, stderr, code.
function H.pyref(table_path, view, extra)
  local args = {table_path, view}
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  return H.support_py("pyref.py", args)
end

-- pyref.py's JSON for a view, decoded; asserts that it exits 0.
function H.pyref_json(table_path, view, extra)
  local out, err, code = H.pyref(table_path, view, extra)
  assert(code == 0, "pyref " .. view .. " failed: " .. err)
  return H.decode(out)
end

-- spec/support/refs.py (pyref-based walk): every file each snapshot and tag
-- of every branch references,
-- {branch = {snapshots = {id = {paths}}, tags = {name = {paths}}}}.
function H.refs(table_path)
  local out, err, code = H.support_py("refs.py", {table_path})
  assert(code == 0, "refs.py failed: " .. err)
  return H.cjson.decode(out)
end

-- The set of files a refs walk names: relative paths joined to root;
-- absolute (external) paths as they are, or left out with relative_only.
function H.used_paths(r, root, relative_only)
  local set = {}
  for _, b in pairs(r) do
    for _, group in ipairs{b.snapshots, b.tags} do
      for _, paths in pairs(group) do
        for _, p in ipairs(paths) do
          if p:sub(1, 1) ~= "/" then
            set[root .. "/" .. p] = true
          elseif not relative_only then
            set[p] = true
          end
        end
      end
    end
  end
  return set
end

-- ---- S3 (scripts/s3-server.sh; docs/testing-s3.md) ---------------------------
-- make test starts a throwaway Ceph RGW and exports its env; PAIMON_S3_TESTS=0
-- (developers only) turns the S3 specs into pending ones.

function H.s3_off()
  return os.getenv("PAIMON_S3_TESTS") == "0"
end

-- describe() for S3 specs, made from busted's describe and pending (spec
-- globals a module cannot see): the block, or one pending test when S3 is off.
--   local describe_s3 = H.s3_describe(describe, pending)
function H.s3_describe(describe, pending)
  return function(name, block)
    if H.s3_off() then
      describe(name, function() pending("PAIMON_S3_TESTS=0: S3 tests skipped") end)
    else
      describe(name, block)
    end
  end
end

-- { endpoint, bucket, access_key, secret_key, region } from the env of
-- scripts/s3-server.sh; raises when it is not set.
function H.s3()
  local c = { endpoint = os.getenv("AWS_ENDPOINT_URL"), bucket = os.getenv("PAIMON_S3_BUCKET"),
              access_key = os.getenv("AWS_ACCESS_KEY_ID"), secret_key = os.getenv("AWS_SECRET_ACCESS_KEY"),
              region = os.getenv("AWS_REGION") or "us-east-1" }
  for _, k in ipairs{"endpoint", "bucket", "access_key", "secret_key"} do
    if not c[k] or c[k] == "" then
      error("no S3 test server: " .. k .. " not set (make test starts one; by hand: " ..
            "sh scripts/s3-server.sh start DIR && . DIR/env)", 2)
    end
  end
  return c
end

-- "s3://bucket/key/prefix" -> bucket, prefix (no leading or trailing "/")
function H.s3_split(uri)
  local bucket, prefix = tostring(uri):match("^s3a?://([^/]+)/?(.*)$")
  if not bucket then error("not an s3:// URI: " .. tostring(uri), 2) end
  return bucket, (prefix:gsub("/+$", ""))
end

-- rclone (an independent S3 client) on the test server, configured through
-- RCLONE_CONFIG_PMS3_* only: no config file, the keys never on a command line.
-- Returns stdout; raises with rclone's stderr on failure.
function H.rclone(args)
  local c = H.s3()
  local env = "RCLONE_CONFIG_PMS3_TYPE=s3 RCLONE_CONFIG_PMS3_PROVIDER=Ceph " ..
              "RCLONE_CONFIG_PMS3_ACCESS_KEY_ID=\"$AWS_ACCESS_KEY_ID\" " ..
              "RCLONE_CONFIG_PMS3_SECRET_ACCESS_KEY=\"$AWS_SECRET_ACCESS_KEY\" " ..
              "RCLONE_CONFIG_PMS3_ENDPOINT=" .. H.sh_quote(c.endpoint) .. " " ..
              "RCLONE_CONFIG_PMS3_REGION=" .. H.sh_quote(c.region) .. " " ..
              "RCLONE_CONFIG_PMS3_NO_CHECK_BUCKET=true "
  local parts = {"env -u AWS_CA_BUNDLE -u AWS_PROFILE", env, "timeout 300 rclone --config /dev/null --retries 1 --low-level-retries 2 --contimeout 5s --timeout 60s"}
  for _, a in ipairs(args) do parts[#parts + 1] = H.sh_quote(a) end
  local out, err, code = H.run(table.concat(parts, " "))
  if code ~= 0 then error("rclone " .. table.concat(args, " ") .. " failed (" .. code .. "): " .. err, 2) end
  return out
end

local function random_hex(n)
  local f = assert(io.open("/dev/urandom", "rb"))
  local bytes = f:read(n)
  f:close()
  return (bytes:gsub(".", function(ch) return string.format("%02x", ch:byte()) end))
end

-- Uploads the local table directory to a fresh prefix of the test bucket;
-- returns its URI "s3://bucket/spec-<random>/<directory name>".
-- PUTs the empty directory marker object "<key>/" of an s3:// URI, as
-- Hadoop's S3A writes for an empty directory (rclone writes none), with
-- curl's SigV4 ('=' sent as %3D, which curl's signing needs); raises on failure.
function H.s3_put_marker(uri)
  local c = H.s3()
  local rest = assert(tostring(uri):match("^s3a?://(.+)$"), "not an s3:// URI")
  local _, err, code = H.run("curl -sS -f --aws-sigv4 " .. H.sh_quote("aws:amz:" .. c.region .. ":s3")
    .. " --user \"$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY\" -X PUT -H 'x-amz-content-sha256: "
    .. "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' --data-binary '' "
    .. H.sh_quote(c.endpoint .. "/" .. rest:gsub("/+$", ""):gsub("=", "%%3D") .. "/"))
  if code ~= 0 then error("PUT marker " .. uri .. " failed: " .. err, 2) end
end

function H.s3_put_table(local_dir)
  local c = H.s3()
  local name = local_dir:gsub("/+$", ""):match("([^/]+)$")
  local key = "spec-" .. random_hex(8) .. "/" .. name
  H.rclone({"copy", local_dir, "pms3:" .. c.bucket .. "/" .. key})
  return "s3://" .. c.bucket .. "/" .. key
end

-- Downloads every object under the URI's prefix into local_dir.
function H.s3_get_table(uri, local_dir)
  local bucket, prefix = H.s3_split(uri)
  H.rclone({"copy", "pms3:" .. bucket .. "/" .. prefix, local_dir})
  return local_dir
end

-- The objects under the URI's prefix: a list of { key = full key, path =
-- key below the prefix, size = bytes }, sorted by key.
function H.s3_ls(uri)
  local bucket, prefix = H.s3_split(uri)
  local out = H.rclone({"lsf", "-R", "--files-only", "--format", "sp", "--separator", " ",
                        "pms3:" .. bucket .. "/" .. prefix})
  local list = {}
  for size, path in out:gmatch("(%d+) ([^\n]+)") do
    list[#list + 1] = { key = (prefix ~= "" and prefix .. "/" or "") .. path, path = path, size = tonumber(size) }
  end
  table.sort(list, function(a, b) return a.key < b.key end)
  return list
end

-- The fault-injecting proxy (docs/testing-s3.md): a real nginx
-- between client and RGW. H.s3_proxy_start(plan) -> its endpoint URL.
local proxy

local function proxy_control(method, what, body)
  local cmd = "curl -sS --max-time 10 -w '\\n%{http_code}' -X " .. method
  if body then
    local f = os.tmpname()
    H.write_file(f, body)
    cmd = cmd .. " --data-binary @" .. H.sh_quote(f)
    local out = H.run(cmd .. " " .. H.sh_quote(proxy.url .. "/__proxy/" .. what))
    os.remove(f)
    return out:match("^(.-)\n?(%d+)$")
  end
  local out = H.run(cmd .. " " .. H.sh_quote(proxy.url .. "/__proxy/" .. what))
  return out:match("^(.-)\n?(%d+)$")
end

-- A plan is a list of rules { k = N, fault = F, method = "PUT", uri = PATTERN,
-- times = 1, ms = STALL_MS } (or its Lua source text); a new plan resets the
-- request count and the log.
function H.s3_proxy_plan(plan)
  assert(proxy, "the S3 proxy is not running (H.s3_proxy_start)")
  local src = plan
  if type(plan) == "table" then
    local rules = {}
    for _, r in ipairs(plan) do
      local fields = {}
      for k, v in pairs(r) do
        fields[#fields + 1] = k .. "=" .. (type(v) == "string" and string.format("%q", v) or tostring(v))
      end
      table.sort(fields)
      rules[#rules + 1] = "{" .. table.concat(fields, ", ") .. "}"
    end
    src = "return {" .. table.concat(rules, ", ") .. "}"
  end
  local body, status = proxy_control("POST", "plan", src or "return {}")
  if status ~= "200" then error("s3proxy refused the plan: " .. tostring(body), 2) end
end

function H.s3_proxy_start(plan)
  if proxy then H.s3_proxy_stop() end
  local c = H.s3()
  local dir = H.tmpdir()
  local upstream = c.endpoint:match("^https?://([^/]+)")
  local out, err, code = H.run("sh " .. H.sh_quote(H.spec_dir .. "support/s3proxy/s3proxy.sh") ..
                               " start " .. H.sh_quote(dir .. "/proxy") .. " " .. H.sh_quote(upstream))
  if code ~= 0 then
    H.rmdir(dir)
    error("s3proxy did not start: " .. err, 2)
  end
  proxy = { dir = dir, url = (out:gsub("%s+$", "")) }
  if plan then H.s3_proxy_plan(plan) end
  return proxy.url
end

function H.s3_proxy_stop()
  if not proxy then return end
  H.run("sh " .. H.sh_quote(H.spec_dir .. "support/s3proxy/s3proxy.sh") .. " stop " .. H.sh_quote(proxy.dir .. "/proxy"))
  H.rmdir(proxy.dir)
  proxy = nil
end

-- Every request the proxy has seen since its plan: a list of { n, method,
-- fault ("-" when forwarded untouched; "drop_after:200" when forwarded, the
-- server answered 200 and the connection was dropped), uri }.
function H.s3_proxy_log()
  assert(proxy, "the S3 proxy is not running (H.s3_proxy_start)")
  local body, status = proxy_control("GET", "log")
  assert(status == "200", "s3proxy log: " .. tostring(body))
  local list = {}
  for n, method, fault, uri in body:gmatch("(%d+) (%S+) (%S+) ([^\n]*)") do
    list[#list + 1] = { n = tonumber(n), method = method, fault = fault, uri = uri }
  end
  return list
end

return H
