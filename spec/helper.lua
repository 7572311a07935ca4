-- Shared helpers for the busted specs: paths, fixtures, temp copies,
-- running the CLI and the independent python3-avro reader.
local H = {}

local function script_dir()
  local src = debug.getinfo(1, "S").source:sub(2)
  return src:match("(.*/)") or "./"
end

H.root = (os.getenv("PWD") or ".")
H.build = os.getenv("PAIMON_BUILD") or (H.root .. "/build")
H.fixtures = os.getenv("PAIMON_FIXTURES") or (H.root .. "/../shared/fixtures")
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

-- The independent reader: /usr/bin/python3 with python3-avro + zstandard.
function H.pyref(table_path, view, extra)
  local cmd = "/usr/bin/python3 " .. H.sh_quote(H.spec_dir .. "support/pyref.py") .. " " ..
              H.sh_quote(table_path) .. " " .. view
  for _, a in ipairs(extra or {}) do cmd = cmd .. " " .. H.sh_quote(a) end
  local out, err, code = H.run(cmd)
  return out, err, code
end

H.cjson = require "cjson"

return H
