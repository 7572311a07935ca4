-- Manifest merge policy: the thresholds pm_commit uses when it merges the
-- manifests of the previous snapshot into the new base manifest list
-- (Java ManifestFileMerger, paimon-format.md §7.6).
--
-- A policy is a function(options) -> {target_file_size = bytes,
-- full_compaction_threshold = bytes, merge_min_count = n}; `options` holds
-- the table's options with Paimon's defaults filled in. Missing or invalid
-- results keep the table's values. Replace it per commit with
-- t:new_commit{policy = "my_policy.lua"} (a file returning such a function,
-- or a table with a manifest_merge function) or t:new_commit{policy = fn}.
local core = require "paimon.core"

local M = {}

-- A missing or invalid value falls back to Java's default as the core
-- defines it (paimon.core.defaults), never to a copy kept here.
local function size(options, key)
  local n = options[key] ~= nil and core.memory_size(options[key])
  if not n or n <= 0 then return core.memory_size(core.defaults[key]) end
  return n
end

local function count(options, key)
  local n = tonumber(options[key])
  if not n or n <= 0 or n ~= math.floor(n) then return tonumber(core.defaults[key]) end
  return n
end

function M.manifest_merge(options)
  return {
    target_file_size = size(options, "manifest.target-file-size"),
    full_compaction_threshold = size(options, "manifest.full-compaction-threshold-size"),
    merge_min_count = count(options, "manifest.merge-min-count"),
  }
end

-- Manual manifest compaction (Java's compact-manifest procedure): merge
-- everything, whatever the sizes.
function M.compact_all(options)
  local p = M.manifest_merge(options)
  p.full_compaction_threshold = 1
  p.merge_min_count = 1
  return p
end

return M
