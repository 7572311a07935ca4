-- require "paimon": the C core (paimon.core) plus small Lua helpers.
local core = require "paimon.core"

local M = {
  _VERSION = core._VERSION,
  null = core.null,           -- same value as cjson.null: a NULL lightuserdata
  open = core.open,
  interrupt = core.interrupt, -- stop the expiration or orphan cleaning in progress at a consistent point
  create_table = core.create_table,
  version = core.version,
  list_tables = core.list_tables,   -- tables of a warehouse or database (pm_warehouse)
}

-- Collect an iterator's values into an array (for small results only).
function M.collect(iter, ...)
  local out = {}
  if iter == nil then return nil, ... end
  for v in iter, ... do out[#out + 1] = v end
  return out
end

return M
