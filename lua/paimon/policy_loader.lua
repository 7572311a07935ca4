-- The one policy loader. Every face (the scripts' --policy, the Table
-- methods' policy option, resty.paimon) turns what it was given into a
-- function here, so a policy means the same everywhere. The contract is in
-- docs/maintenance.md, "Policies".
local M = {}

-- The kinds of policy: the field a table may hold it in, and its shape.
M.KINDS = {
  expire = {field = "expire", shape = "function(snapshots, ctx)"},
  partition_expire = {field = "expired", shape = "function(partition, ctx)"},
  manifest_merge = {field = "manifest_merge", shape = "function(options)"},
  tag_expire = {field = "expire_tags", shape = "function(tags, ctx)"},
}

local function readable(p)
  local f = io.open(p, "r")
  if f then f:close() end
  return f ~= nil
end

-- The bundled policies beside this module, for a stock lua5.4, LuaJIT or
-- OpenResty (only paimon-lua sets paimon.policies_dir): an installed tree
-- keeps them in DATADIR/paimon-lua/policies next to DATADIR/lua/5.x, a
-- source tree in examples/policies next to lua/.
local function bundled_dirs()
  local src = debug.getinfo(1, "S").source
  local dir = src:sub(1, 1) == "@" and src:sub(2):match("^(.*)/paimon/[^/]*$")
  if not dir then return {} end
  local share, root = dir:match("^(.*)/lua/5%.%d$"), dir:match("^(.*)/lua$")
  local out = {}
  if share then out[#out + 1] = share .. "/paimon-lua/policies" end
  if root then out[#out + 1] = root .. "/examples/policies" end
  return out
end

-- Where a policy named by a string is: the name itself when it is a path
-- (has a "/") or a readable file, else the first of the PAIMON_POLICY_PATH
-- directories (colon-separated) and the bundled policies folder (paimon-lua
-- sets paimon.policies_dir: examples/policies in a source tree, or
-- PREFIX/share/paimon-lua/policies when installed; elsewhere the folder is
-- found beside this module) that holds it; else the name unchanged (loading
-- it then fails naming it).
function M.find(name)
  if name:find("/", 1, true) or readable(name) then return name end
  local dirs = {}
  for d in (os.getenv("PAIMON_POLICY_PATH") or ""):gmatch("[^:]+") do dirs[#dirs + 1] = d end
  local ok, paimon = pcall(require, "paimon")
  if ok and type(paimon) == "table" and paimon.policies_dir then dirs[#dirs + 1] = paimon.policies_dir end
  for _, d in ipairs(bundled_dirs()) do dirs[#dirs + 1] = d end
  for _, d in ipairs(dirs) do
    if readable(d .. "/" .. name) then return d .. "/" .. name end
  end
  return name
end

local function unwrap(v, kind)
  if type(v) == "table" and type(v[kind.field]) == "function" then return v[kind.field] end
  return v
end

-- load(policy, kind) -> function | nil, message, code. policy: a function,
-- a table holding one under the kind's field ({expire = f}, {expired = f},
-- {manifest_merge = f}), or a file (path or bare name, see find) returning
-- either. code: "misuse" when it is not such a policy, "error" when the
-- file raised while loading.
function M.load(policy, kind)
  local k = M.KINDS[kind]
  if not k then error("unknown policy kind '" .. tostring(kind) .. "'", 2) end
  local pol = policy
  if type(policy) == "string" then
    local file = M.find(policy)
    local chunk, err = loadfile(file)
    if not chunk then return nil, "cannot load policy " .. file .. ": " .. tostring(err), "misuse" end
    local ok, res = pcall(chunk)
    if not ok then return nil, "policy " .. file .. " failed: " .. tostring(res), "error" end
    pol = unwrap(res, k)
    if type(pol) ~= "function" then
      return nil, "policy " .. file .. " must return a " .. k.shape .. " or {" .. k.field .. " = function}", "misuse"
    end
    return pol
  end
  pol = unwrap(pol, k)
  if type(pol) ~= "function" then
    return nil, "policy must be a " .. k.shape .. ", a table {" .. k.field .. " = function} or a policy file, got " ..
                type(policy), "misuse"
  end
  return pol
end

-- get(policy, kind) -> function; raises load's message (misuse).
function M.get(policy, kind)
  local f, msg = M.load(policy, kind)
  if not f then error(msg, 0) end
  return f
end

return M
