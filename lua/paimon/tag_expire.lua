-- Tag expiration with a policy: "ask the policy, then delete", the runner
-- behind t:expire_tags{policy = ...}, tag.lua expire --policy and
-- resty.paimon's expire_tags(). Without a policy the core applies Java's
-- rule itself (lua/paimon/policy/tag_expire.lua is that rule as a policy).
local core = require "paimon.core"
local loader = require "paimon.policy_loader"

local M = {}

-- Turn a policy answer into a list of tag names: {names}, {expire = {names}}
-- or nil (nothing).
function M.answer_names(answer, known)
  if answer == nil then return {} end
  if type(answer) ~= "table" then error("policy returned a " .. type(answer) .. ", expected a list of tag names", 0) end
  local list = answer.expire or answer
  local out, seen = {}, {}
  for i, name in ipairs(list) do
    if type(name) ~= "string" then error("policy returned a non-string tag name (item " .. i .. ")", 0) end
    if not known[name] then error("policy returned tag '" .. name .. "', which is not a tag of the table", 0) end
    if not seen[name] then out[#out + 1] = name; seen[name] = true end
  end
  return out
end

-- run(t, opts) -> result | nil, message, code. The candidates with Java's
-- verdict come from a dry run of t:expire_tags; the policy sees them and
-- ctx {now, older_than, num_retained_max, java = {names Java expires}}.
function M.run(t, opts)
  local policy = loader.get(opts.policy, "tag_expire")
  local o = {}
  for k, v in pairs(opts) do o[k] = v end
  o.policy = nil
  if o.now == nil then o.now = core.now_ms() end
  local plan_opts = {now = o.now, older_than = o.older_than, num_retained_max = o.num_retained_max, dry_run = true}
  local plan, msg, code = t:expire_tags(plan_opts)
  if not plan then return nil, msg, code end
  local known, java = {}, {}
  for _, c in ipairs(plan.candidates) do
    known[c.name] = true
    if c.java_expires then java[#java + 1] = c.name end
  end
  local ctx = {now = o.now, older_than = o.older_than, num_retained_max = o.num_retained_max, java = java}
  local ok, answer = pcall(policy, plan.candidates, ctx)
  if not ok then return nil, "policy failed: " .. tostring(answer), "error" end
  local ok2, names = pcall(M.answer_names, answer, known)
  if not ok2 then return nil, tostring(names), "error" end
  o.exact = names
  return t:expire_tags(o)
end

return M
