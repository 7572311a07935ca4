-- The S3 test harness itself: the throwaway Ceph RGW that make test starts
-- (scripts/s3-server.sh), the rclone helpers of spec/helper.lua and the
-- fault-injecting nginx proxy (spec/support/s3proxy). docs/testing-s3.md.
local H = require "helper"
local describe_s3 = H.s3_describe(describe, pending)

-- A SigV4-signed request with curl. opts: method, body (string), headers
-- (list), max_time (s). Returns HTTP status (number, 0 when none), body,
-- curl's exit code (52: empty reply, 28: timeout).
local function s3curl(endpoint, key, opts)
  opts = opts or {}
  local c = H.s3()
  local bodyf, outf = os.tmpname(), os.tmpname()
  local cmd = {"curl -sS -o", H.sh_quote(outf), "-w '%{http_code}'", "--max-time", tostring(opts.max_time or 10),
               "--aws-sigv4", H.sh_quote("aws:amz:" .. c.region .. ":s3"),
               "--user \"$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY\"",
               "-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD'", "-X", opts.method or "GET"}
  if opts.method == "HEAD" then cmd[#cmd + 1] = "-I" end
  for _, h in ipairs(opts.headers or {}) do cmd[#cmd + 1] = "-H " .. H.sh_quote(h) end
  if opts.body then
    H.write_file(bodyf, opts.body)
    cmd[#cmd + 1] = "--data-binary @" .. H.sh_quote(bodyf)
  end
  cmd[#cmd + 1] = H.sh_quote(endpoint .. "/" .. c.bucket .. "/" .. key)
  local status, _, code = H.run(table.concat(cmd, " "))
  local body = H.read_file(outf)
  os.remove(bodyf)
  os.remove(outf)
  return tonumber(status) or 0, body, code
end

local function unique(what)
  local f = assert(io.open("/dev/urandom", "rb"))
  local b = f:read(6)
  f:close()
  return "harness-" .. what .. "-" .. b:gsub(".", function(ch) return string.format("%02x", ch:byte()) end)
end

local SAMPLE = H.root .. "/examples/sample/warehouse/demo.db/orders"

describe_s3("the S3 test server (Ceph RGW)", function()
  it("is configured by make test and answers signed requests", function()
    local c = H.s3()
    assert.matches("^http://127%.0%.0%.1:%d+$", c.endpoint)
    assert.is_true(#c.bucket > 0)
    local status, body = s3curl(c.endpoint, "?list-type=2&max-keys=1")
    assert.equals(200, status, body)
    assert.matches("<ListBucketResult", body, 1, true)
    -- the same request unsigned is refused: the server checks signatures
    local out = H.run("curl -s -o /dev/null -w '%{http_code}' " .. H.sh_quote(c.endpoint .. "/" .. c.bucket .. "/?list-type=2"))
    assert.equals("403", out)
  end)

  it("round-trips a table through rclone with identical bytes and sizes", function()
    local copy, dir = H.copy_table(SAMPLE)
    local uri = H.s3_put_table(copy)
    assert.matches("^s3://" .. H.s3().bucket:gsub("%-", "%%-") .. "/spec%-%x+/t$", uri)
    local local_set, n = H.file_set(copy)
    local listed = H.s3_ls(uri)
    assert.equals(n, #listed)
    for _, o in ipairs(listed) do
      assert.is_true(local_set[o.path], o.path)
      local f = assert(io.open(copy .. "/" .. o.path, "rb"))
      assert.equals(f:seek("end"), o.size, o.path)
      f:close()
      assert.equals(uri:match("^s3://[^/]+/(.*)$") .. "/" .. o.path, o.key)
    end
    H.s3_get_table(uri, dir .. "/back")
    assert.equals(H.fingerprint(copy), H.fingerprint(dir .. "/back"))
    -- and an independent reader sees the same table in the download
    assert.same(H.pyref_json(copy, "snapshots"), H.pyref_json(dir .. "/back", "snapshots"))
    H.rmdir(dir)
  end)

  it("lists nothing under an unused prefix and refuses a non-s3 URI", function()
    assert.same({}, H.s3_ls("s3://" .. H.s3().bucket .. "/" .. unique("none")))
    assert.has_error(function() H.s3_ls("/tmp/x") end)
  end)

  it("creates a key once with If-None-Match: * (200, then 412, body kept)", function()
    local c = H.s3()
    local key = unique("inm") .. "/snapshot-1"
    local s1, b1 = s3curl(c.endpoint, key, { method = "PUT", body = "first", headers = {"If-None-Match: *"} })
    assert.equals(200, s1, b1)
    local s2, b2 = s3curl(c.endpoint, key, { method = "PUT", body = "second", headers = {"If-None-Match: *"} })
    assert.equals(412, s2)
    assert.matches("PreconditionFailed", b2, 1, true)
    local s3, b3 = s3curl(c.endpoint, key)
    assert.equals(200, s3)
    assert.equals("first", b3)
  end)
end)

describe_s3("the fault-injecting S3 proxy", function()
  local c, url

  lazy_setup(function()
    c = H.s3()
    url = H.s3_proxy_start()
  end)
  lazy_teardown(function() H.s3_proxy_stop() end)

  it("forwards signed requests untouched: the same answers as the server", function()
    H.s3_proxy_plan({})
    local base = unique("fwd")
    local keys = {base .. "/plain", base .. "/with%20space", base .. "/a%2Bplus", base .. "/sub/dir/x.avro",
                  base .. "/%E2%82%AC-euro"}
    for i, k in ipairs(keys) do
      local s, b = s3curl(url, k, { method = "PUT", body = "v" .. i .. string.rep("x", i * 1000) })
      assert.equals(200, s, k .. ": " .. b)
    end
    local direct = H.s3_ls("s3://" .. c.bucket .. "/" .. base)
    assert.equals(#keys, #direct)
    local total = 0
    for _, o in ipairs(direct) do total = total + o.size end
    assert.equals(#keys * 2 + 1000 * #keys * (#keys + 1) / 2, total)
    for i, k in ipairs(keys) do
      local s1, b1 = s3curl(url, k)
      local s2, b2 = s3curl(c.endpoint, k)
      assert.equals(200, s1, k)
      assert.equals(s2, s1)
      assert.equals(b2, b1)
      assert.equals("v" .. i .. string.rep("x", i * 1000), b1)
    end
    -- a 3 MB body (curl sends Expect: 100-continue) arrives byte for byte
    local f = assert(io.open("/dev/urandom", "rb"))
    local big = f:read(3 * 1024 * 1024)
    f:close()
    local sb, bb = s3curl(url, base .. "/big", { method = "PUT", body = big })
    assert.equals(200, sb, bb)
    local sg, got = s3curl(c.endpoint, base .. "/big")
    assert.equals(200, sg)
    assert.is_true(got == big, "the 3 MB body changed on its way through the proxy")
    -- a listing with an encoded, sorted query and If-None-Match through the proxy
    local q = "?list-type=2&max-keys=2&prefix=" .. base .. "%2Fsub%2F"
    local s1, b1 = s3curl(url, q)
    local s2, b2 = s3curl(c.endpoint, q)
    assert.equals(200, s1, b1)
    assert.equals(s2, s1)
    assert.equals(b2:gsub("<RequestId>.-</RequestId>", ""), b1:gsub("<RequestId>.-</RequestId>", ""))
    assert.matches("/sub/dir/x.avro</Key>", b1, 1, true)
    assert.equals(412, (s3curl(url, keys[1], { method = "PUT", body = "again", headers = {"If-None-Match: *"} })))
    local log = H.s3_proxy_log()
    assert.equals(#keys * 2 + 3, #log)
    for i, e in ipairs(log) do
      assert.equals(i, e.n)
      assert.equals("-", e.fault)
    end
    assert.equals("PUT", log[1].method)
    assert.equals("/" .. c.bucket .. "/" .. keys[1], log[1].uri)
    assert.equals("/" .. c.bucket .. "/" .. q, log[#log - 1].uri)
  end)

  -- three PUTs of new keys through the proxy with the fault at k; returns the
  -- statuses and curl codes, and whether each key exists on the server after
  local function three_puts(fault, max_time)
    local base = unique(fault)
    local got = {}
    for i = 1, 3 do
      local s, b, code = s3curl(url, base .. "/" .. i, { method = "PUT", body = "body" .. i, max_time = max_time })
      got[i] = { status = s, body = b, code = code }
    end
    if max_time then H.run("sleep 0.6") end   -- let a stalled request finish
    for i = 1, 3 do
      got[i].stored = s3curl(c.endpoint, base .. "/" .. i) == 200
    end
    return got
  end

  it("answers the k-th request with 500 or 503 SlowDown and an S3 error body", function()
    for _, f in ipairs{ {"500", 500, "InternalError"}, {"503", 503, "SlowDown"} } do
      for k = 1, 3 do
        H.s3_proxy_plan({ { k = k, fault = f[1] } })
        local got = three_puts(f[1])
        for i = 1, 3 do
          if i == k then
            assert.equals(f[2], got[i].status)
            assert.matches("<Code>" .. f[3] .. "</Code>", got[i].body, 1, true)
            assert.is_false(got[i].stored)
          else
            assert.equals(200, got[i].status, got[i].body)
            assert.is_true(got[i].stored)
          end
        end
        local log = H.s3_proxy_log()
        assert.equals(3, #log)
        for i = 1, 3 do assert.equals(i == k and f[1] or "-", log[i].fault) end
      end
    end
  end)

  it("drops the connection before forwarding (nothing stored) or after (stored)", function()
    H.s3_proxy_plan({ { k = 2, fault = "drop_before" } })
    local got = three_puts("drop_before")
    assert.equals(52, got[2].code)                 -- empty reply from server
    assert.is_false(got[2].stored)
    assert.is_true(got[1].stored and got[3].stored)
    H.s3_proxy_plan({ { k = 2, fault = "drop_after" } })
    got = three_puts("drop_after")
    assert.equals(52, got[2].code)
    assert.is_true(got[2].stored)
    assert.is_true(got[1].stored and got[3].stored)
    assert.equals(200, got[3].status)
    assert.equals("drop_after:200", H.s3_proxy_log()[2].fault)
  end)

  it("stalls past a client timeout, then forwards, drops or answers late", function()
    -- stall, then forward: a patient client gets the answer after the stall
    H.s3_proxy_plan({ { k = 1, fault = "stall", ms = 700 } })
    local t0 = os.time()
    local s = s3curl(url, "?list-type=2&max-keys=1", { max_time = 5 })
    assert.equals(200, s)
    assert.is_true(os.time() - t0 <= 3)
    H.s3_proxy_plan({ { k = 1, fault = "stall", ms = 1500 } })
    local _, _, code = s3curl(url, "?list-type=2&max-keys=1", { max_time = 0.5 })
    assert.equals(28, code)                        -- the client timed out
    -- stall then drop: the client times out, nothing stored
    H.s3_proxy_plan({ { k = 2, fault = "stall_drop", ms = 1000 } })
    local got = three_puts("stall_drop", 0.5)
    assert.equals(28, got[2].code)
    H.run("sleep 0.5")
    assert.is_false(s3curl(c.endpoint, H.s3_proxy_log()[2].uri:match("^/[^/]+/(.*)$")) == 200)
    assert.is_true(got[1].stored and got[3].stored)
    -- forward, then stall the answer: the client times out, the key is stored
    H.s3_proxy_plan({ { k = 2, fault = "stall_after", ms = 1000 } })
    got = three_puts("stall_after", 0.5)
    assert.equals(28, got[2].code)
    assert.is_true(got[2].stored)
    assert.is_true(got[1].stored and got[3].stored)
  end)

  it("counts only the requests a rule's method and uri pattern match", function()
    local base = unique("match")
    H.s3_proxy_plan({ { k = 2, method = "PUT", uri = "/snapshot%-", fault = "500" } })
    local seq = { {"GET", "?list-type=2&max-keys=1"}, {"PUT", base .. "/snapshot/snapshot-1"},
                  {"PUT", base .. "/manifest/m-1"}, {"GET", base .. "/snapshot/snapshot-1"},
                  {"PUT", base .. "/snapshot/snapshot-2"}, {"PUT", base .. "/snapshot/snapshot-3"} }
    local statuses = {}
    for i, r in ipairs(seq) do
      statuses[i] = s3curl(url, r[2], { method = r[1], body = r[1] == "PUT" and "x" or nil })
    end
    assert.same({200, 200, 200, 200, 500, 200}, statuses)
    local faults = {}
    for i, e in ipairs(H.s3_proxy_log()) do faults[i] = e.fault end
    assert.same({"-", "-", "-", "-", "500", "-"}, faults)
    -- times = 2: two consecutive matching requests
    H.s3_proxy_plan({ { k = 1, times = 2, method = "GET", fault = "503" } })
    assert.equals(503, (s3curl(url, base .. "/manifest/m-1")))
    assert.equals(503, (s3curl(url, base .. "/manifest/m-1")))
    assert.equals(200, (s3curl(url, base .. "/manifest/m-1")))
  end)

  it("lets a test sweep k over every request of an operation", function()
    local base = unique("sweep")
    -- the operation: write a file, create its marker once, list
    local function operation()
      local a = s3curl(url, base .. "/data", { method = "PUT", body = "d" })
      local b = s3curl(url, base .. "/marker", { method = "PUT", body = "m", headers = {"If-None-Match: *"} })
      local l = s3curl(url, "?list-type=2&max-keys=1")
      return { a, b, l }
    end
    H.s3_proxy_plan({})
    assert.same({200, 200, 200}, operation())
    local n = #H.s3_proxy_log()
    assert.equals(3, n)
    for k = 1, n do
      s3curl(c.endpoint, base .. "/marker", { method = "DELETE" })
      H.s3_proxy_plan({ { k = k, fault = "503" } })
      local got = operation()
      for i = 1, n do assert.equals(i == k and 503 or 200, got[i]) end
    end
  end)

  it("refuses a plan it does not understand", function()
    for _, bad in ipairs{ { { k = 1, fault = "explode" } }, { { k = 0, fault = "500" } },
                          { { fault = "500" } }, { { k = 1, fault = "stall" } } } do
      assert.has_error(function() H.s3_proxy_plan(bad) end)
    end
    assert.has_error(function() H.s3_proxy_plan("return os.exit()") end)
    assert.has_error(function() H.s3_proxy_plan("not lua") end)
  end)
end)
