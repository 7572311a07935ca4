-- The fault-injecting S3 proxy's handler (runs in nginx; docs/testing-s3.md).
-- State lives in the shared dict `s3proxy`: the plan (a Lua table literal),
-- the request count "n", one match count per rule and a log line per request.
local M = {}

local dict = ngx.shared.s3proxy
local FAULTS = { ["500"] = true, ["503"] = true, ["404"] = true, drop_before = true, drop_after = true,
                 stall = true, stall_drop = true, stall_after = true }

local cached_plan, cached_version

-- The plan source -> rules, in an empty environment (data only).
local function compile(src)
  local f, err = loadstring(src, "=plan")
  if not f then return nil, err end
  setfenv(f, {})
  local ok, rules = pcall(f)
  if not ok then return nil, rules end
  if type(rules) ~= "table" then return nil, "the plan must return a table of rules" end
  for i, r in ipairs(rules) do
    if type(r) ~= "table" then return nil, "rule " .. i .. " is not a table" end
    r.fault = tostring(r.fault)
    if not FAULTS[r.fault] then return nil, "rule " .. i .. ": unknown fault " .. tostring(r.fault) end
    if type(r.k) ~= "number" or r.k < 1 or r.k % 1 ~= 0 then
      return nil, "rule " .. i .. ": k must be an integer >= 1"
    end
    if r.times ~= nil and (type(r.times) ~= "number" or r.times < 1) then
      return nil, "rule " .. i .. ": times must be >= 1"
    end
    if r.method ~= nil and type(r.method) ~= "string" then return nil, "rule " .. i .. ": method must be a string" end
    if r.uri ~= nil and (type(r.uri) ~= "string" or not pcall(string.find, "", r.uri)) then
      return nil, "rule " .. i .. ": uri must be a Lua pattern"
    end
    if r.fault:match("^stall") and (type(r.ms) ~= "number" or r.ms < 0) then
      return nil, "rule " .. i .. ": a stall needs ms"
    end
  end
  return rules
end

local function plan()
  local v = dict:get("version") or 0
  if v ~= cached_version then
    cached_plan = compile(dict:get("plan") or "return {}") or {}
    cached_version = v
  end
  return cached_plan
end

local function s3_error(status, code, message)
  ngx.req.discard_body()
  ngx.status = status
  ngx.header["Content-Type"] = "application/xml"
  ngx.header["x-amz-request-id"] = "s3proxy-" .. (dict:get("n") or 0)
  ngx.print('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>', code, '</Code><Message>', message,
            '</Message><Resource>', (ngx.var.uri:gsub("&", "&amp;"):gsub("<", "&lt;")),
            '</Resource><RequestId>s3proxy</RequestId></Error>')
  return ngx.exit(ngx.HTTP_OK)
end

-- The request through the upstream as a subrequest (body included); returns its response.
local function forward_captured()
  ngx.req.read_body()
  local method = ngx["HTTP_" .. ngx.req.get_method()]
  return ngx.location.capture("/__s3proxy_forward", {
    method = method, always_forward_body = true, vars = { s3proxy_uri = ngx.var.request_uri } })
end

local function answer(res)
  ngx.status = res.status
  for k, v in pairs(res.header) do ngx.header[k] = v end
  if res.body and res.body ~= "" then ngx.print(res.body) end
  return ngx.exit(ngx.HTTP_OK)
end

-- The fault of the first rule whose match count is in [k, k + times).
local function pick(method, uri)
  local fault
  for i, r in ipairs(plan()) do
    if (not r.method or r.method == method) and (not r.uri or uri:find(r.uri)) then
      local c = dict:incr("rule:" .. i, 1, 0)
      if not fault and c >= r.k and c < r.k + (r.times or 1) then fault = r end
    end
  end
  return fault
end

function M.access()
  local method, uri = ngx.req.get_method(), ngx.var.request_uri
  local n = dict:incr("n", 1, 0)
  local r = pick(method, uri)
  dict:set("log:" .. n, method .. " " .. (r and r.fault or "-") .. " " .. uri)
  if not r then return end
  local f = r.fault
  if f == "500" then
    return s3_error(500, "InternalError", "We encountered an internal error. Please try again. (s3proxy)")
  elseif f == "503" then
    return s3_error(503, "SlowDown", "Please reduce your request rate. (s3proxy)")
  elseif f == "404" then
    -- a store (or a cache in front of it) without read-after-write on this key
    return s3_error(404, "NoSuchKey", "The specified key does not exist. (s3proxy)")
  elseif f == "drop_before" then
    return ngx.exit(444)
  elseif f == "stall" then
    ngx.sleep(r.ms / 1000)
    return                                   -- then forwarded as usual
  elseif f == "stall_drop" then
    ngx.sleep(r.ms / 1000)
    return ngx.exit(444)
  end
  local res = forward_captured()
  dict:set("log:" .. n, method .. " " .. f .. ":" .. res.status .. " " .. uri)
  if f == "drop_after" then return ngx.exit(444) end
  ngx.sleep(r.ms / 1000)                     -- stall_after
  return answer(res)
end

local function reply(status, body)
  ngx.status = status
  ngx.header["Content-Type"] = "text/plain"
  ngx.print(body)
  return ngx.exit(ngx.HTTP_OK)
end

-- POST /__proxy/plan (body: "return { rules }"; resets counts and log),
-- GET /__proxy/log ("N METHOD FAULT URI" lines), POST /__proxy/reset.
function M.control()
  local what, method = ngx.var.uri:match("^/__proxy/(%w+)$"), ngx.req.get_method()
  if what == "plan" and method == "POST" then
    ngx.req.read_body()
    local src = ngx.req.get_body_data() or "return {}"
    local ok, err = compile(src)
    if not ok then return reply(400, "bad plan: " .. tostring(err) .. "\n") end
    local v = (dict:get("version") or 0) + 1
    dict:flush_all()
    dict:set("plan", src)
    dict:set("version", v)
    return reply(200, "ok\n")
  elseif what == "reset" and method == "POST" then
    local v = (dict:get("version") or 0) + 1
    dict:flush_all()
    dict:set("version", v)
    return reply(200, "ok\n")
  elseif what == "log" and method == "GET" then
    local n = dict:get("n") or 0
    local out = {}
    for i = 1, n do out[#out + 1] = i .. " " .. (dict:get("log:" .. i) or "? ? ?") end
    out[#out + 1] = ""
    return reply(200, table.concat(out, "\n"))
  end
  return reply(404, "unknown control request\n")
end

return M
