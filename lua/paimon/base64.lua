-- Base64 (RFC 4648, with padding) for BINARY/VARBINARY/BYTES values in JSON:
-- read.lua prints them, write.lua and resty.paimon's commit_rows read them.
-- Plain arithmetic, so it runs on Lua 5.4 and LuaJIT alike.
local M = {}

local floor, char, concat = math.floor, string.char, table.concat
local ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local INDEX = {}
for i = 1, 64 do INDEX[ALPHABET:sub(i, i)] = i - 1 end

local function digit(n) return ALPHABET:sub(n + 1, n + 1) end

function M.encode(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    out[#out + 1] = digit(floor(n / 262144)) .. digit(floor(n / 4096) % 64) ..
                    (b and digit(floor(n / 64) % 64) or "=") .. (c and digit(n % 64) or "=")
  end
  return concat(out)
end

-- decode(text) -> bytes, or nil when the text is not base64 (white space
-- is ignored; padding only at the end).
function M.decode(s)
  s = s:gsub("%s", "")
  if #s % 4 ~= 0 or s:find("[^%w%+/=]") or s:find("=[^=]") then return nil end
  local out = {}
  for i = 1, #s, 4 do
    local a, b = INDEX[s:sub(i, i)], INDEX[s:sub(i + 1, i + 1)]
    local c, d = INDEX[s:sub(i + 2, i + 2)], INDEX[s:sub(i + 3, i + 3)]
    if not (a and b) or (d and not c) then return nil end
    local n = a * 262144 + b * 4096 + (c or 0) * 64 + (d or 0)
    out[#out + 1] = char(floor(n / 65536) % 256)
    if c then out[#out + 1] = char(floor(n / 256) % 256) end
    if d then out[#out + 1] = char(n % 256) end
  end
  return concat(out)
end

return M
