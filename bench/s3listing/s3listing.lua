-- A listing proxy for the S3 memory benchmark (bench/s3_listing_memory.sh):
-- forwards every request to the S3 server unchanged, except ListObjectsV2
-- of the configured prefix (no delimiter), which it answers itself: the
-- store's real keys of that page merged with N synthetic data-file keys
--   PREFIX dt=dPP/bucket-0/data-00000000-0000-4000-8000-<i as 12 hex>-0.parquet
-- in byte order, formatted as RGW formats a page. RGW's continuation token
-- is the last key of the page (a start-after marker), so each of our pages
-- is one real request forwarded with the client's own signature, and the
-- token we hand out is the last key we returned: RGW accepts it as is.
-- HEADs of synthetic keys are answered too. Deletes are refused: the
-- synthetic keys must never reach the store as deletions.
local M = {}

local dict = ngx.shared.s3listing
local PARTS = 100
local ETAG = "&quot;d41d8cd98f00b204e9800998ecf8427e&quot;"

local function cfg()
  return dict:get("prefix"), dict:get("n") or 0, dict:get("age") or 0
end

-- the i-th synthetic key (0-based); increasing with i
local function synth_key(prefix, n, i)
  local per = math.ceil(n / PARTS)
  return string.format("%sdt=d%02d/bucket-0/data-00000000-0000-4000-8000-%012x-0.parquet", prefix,
                       math.floor(i / per), i)
end

-- the first synthetic index whose key sorts after `after` (n if none)
local function first_after(prefix, n, after)
  if not after then return 0 end
  local lo, hi = 0, n
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if synth_key(prefix, n, mid) > after then hi = mid else lo = mid + 1 end
  end
  return lo
end

local function xml_error(status, code, message)
  ngx.req.discard_body()
  ngx.status = status
  ngx.header["Content-Type"] = "application/xml"
  ngx.print('<?xml version="1.0" encoding="UTF-8"?><Error><Code>', code, '</Code><Message>', message,
            '</Message><RequestId>s3listing</RequestId></Error>')
  return ngx.exit(ngx.HTTP_OK)
end

local function listing(prefix, n, age)
  local args = ngx.req.get_uri_args()
  local token = args["continuation-token"]
  local max_keys = tonumber(args["max-keys"]) or 1000
  if max_keys > 1000 then max_keys = 1000 end
  -- the real keys after the token: the client's signed request, forwarded
  local res = ngx.location.capture("/__s3listing_forward", { vars = { s3listing_uri = ngx.var.request_uri } })
  if res.status ~= 200 then
    ngx.status = res.status
    for k, v in pairs(res.header) do ngx.header[k] = v end
    ngx.print(res.body or "")
    return ngx.exit(ngx.HTTP_OK)
  end
  local body = res.body
  local real = {}
  for c in body:gmatch("<Contents>(.-)</Contents>") do
    local k = c:match("<Key>(.-)</Key>")
    if not k then return xml_error(500, "InternalError", "s3listing: a real entry without a Key") end
    real[#real + 1] = { k, c }
  end
  local real_more = body:match("<IsTruncated>(%a+)</IsTruncated>") == "true"
  local lm = os.date("!%Y-%m-%dT%H:%M:%S.000Z", ngx.time() - age)
  local si = first_after(prefix, n, token)
  local ri, out, count, last = 1, {}, 0, nil
  local sk = si < n and synth_key(prefix, n, si) or nil
  while count < max_keys and (sk or real[ri]) do
    if real[ri] and (not sk or real[ri][1] < sk) then
      out[#out + 1] = "<Contents>" .. real[ri][2] .. "</Contents>"
      last = real[ri][1]
      ri = ri + 1
    else
      out[#out + 1] = "<Contents><Key>" .. sk .. "</Key><LastModified>" .. lm .. "</LastModified><ETag>" .. ETAG ..
                      "</ETag><Size>64</Size><StorageClass>STANDARD</StorageClass><Type>Normal</Type></Contents>"
      last = sk
      si = si + 1
      sk = si < n and synth_key(prefix, n, si) or nil
    end
    count = count + 1
  end
  local truncated = sk ~= nil or real[ri] ~= nil or real_more
  if args["max-keys"] == nil then   -- a full listing's page, not an existence probe (max-keys=1)
    dict:incr("pages", 1, 0)
    dict:incr("synth_listed", si - first_after(prefix, n, token), 0)
  end
  ngx.status = 200
  ngx.header["Content-Type"] = "application/xml"
  ngx.header["x-amz-request-id"] = "s3listing-" .. (dict:get("pages") or 0)
  local bucket = ngx.var.uri:match("^/([^/]+)/?$")
  ngx.print('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
            "<Name>", bucket, "</Name><Prefix>", prefix, "</Prefix><MaxKeys>", max_keys, "</MaxKeys><IsTruncated>",
            truncated and "true" or "false", "</IsTruncated>", table.concat(out),
            token and ("<ContinuationToken>" .. token .. "</ContinuationToken>") or "",
            truncated and ("<NextContinuationToken>" .. last .. "</NextContinuationToken>") or "",
            "<KeyCount>", count, "</KeyCount></ListBucketResult>")
  return ngx.exit(ngx.HTTP_OK)
end

-- HEAD of a synthetic key (a dry run on S3 HEADs each planned file for its
-- size): answered here, as RGW would for a 64-byte object
local function head(prefix, n, age)
  local key = ngx.var.uri:match("^/[^/]+/(.+)$")
  local hex = key and key:match("^.*/data%-00000000%-0000%-4000%-8000%-(%x+)%-0%.parquet$")
  local i = hex and tonumber(hex, 16)
  if not i or i >= n or synth_key(prefix, n, i) ~= key then return end
  dict:incr("heads", 1, 0)
  ngx.status = 200
  ngx.header["Content-Length"] = 64
  ngx.header["Content-Type"] = "binary/octet-stream"
  ngx.header["Last-Modified"] = ngx.http_time(ngx.time() - age)
  ngx.header["ETag"] = '"d41d8cd98f00b204e9800998ecf8427e"'
  ngx.header["Accept-Ranges"] = "bytes"
  return ngx.exit(ngx.HTTP_OK)
end

function M.access()
  local method = ngx.req.get_method()
  local args = ngx.req.get_uri_args()
  if method == "POST" and args.delete ~= nil or method == "DELETE" then
    return xml_error(403, "AccessDenied", "s3listing: deletes are refused (a benchmark proxy)")
  end
  local prefix, n, age = cfg()
  if prefix and method == "HEAD" then return head(prefix, n, age) end
  -- path-style bucket listing: GET /BUCKET?list-type=2&prefix=PREFIX, no delimiter
  if prefix and method == "GET" and ngx.var.uri:match("^/[^/]+/?$") and args["list-type"] == "2" and
     args.prefix == prefix and args.delimiter == nil and args["start-after"] == nil then
    return listing(prefix, n, age)
  end
end

-- POST /__s3listing/config?prefix=P&n=N&age=SECONDS (resets the counters),
-- GET /__s3listing/stats ("pages=.. synth_listed=.. heads=..": the pages of
-- full listings of the prefix served, the synthetic keys on them, the HEADs
-- of synthetic keys answered).
function M.control()
  local what, method = ngx.var.uri:match("^/__s3listing/(%w+)$"), ngx.req.get_method()
  local args = ngx.req.get_uri_args()
  ngx.header["Content-Type"] = "text/plain"
  if what == "config" and method == "POST" then
    local n, age = tonumber(args.n), tonumber(args.age or "0")
    if type(args.prefix) ~= "string" or args.prefix == "" or args.prefix:sub(-1) ~= "/" or not n or n < 0 or
       n % 1 ~= 0 or not age or age < 0 then
      ngx.status = 400
      ngx.print("bad config: prefix (ending in /), n >= 0, age >= 0 seconds\n")
      return ngx.exit(ngx.HTTP_OK)
    end
    dict:flush_all()
    dict:set("prefix", args.prefix)
    dict:set("n", n)
    dict:set("age", age)
    ngx.print("ok\n")
  elseif what == "stats" and method == "GET" then
    ngx.print("pages=", dict:get("pages") or 0, " synth_listed=", dict:get("synth_listed") or 0, " heads=",
              dict:get("heads") or 0, "\n")
  else
    ngx.status = 404
    ngx.print("unknown control request\n")
  end
  return ngx.exit(ngx.HTTP_OK)
end

return M
