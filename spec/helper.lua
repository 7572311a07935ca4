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

return H
