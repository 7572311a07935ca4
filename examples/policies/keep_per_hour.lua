-- Example expiration policy: keep at most N snapshots per hour (N from the
-- environment variable KEEP_PER_HOUR, default 2): in every hour bucket the
-- newest N snapshots are kept, older ones in that hour may expire.
--
-- Only a contiguous prefix can expire: expiration stops at the first kept
-- snapshot. The C core still applies retain-min, consumers and the expire
-- limit, and protects files of tags and branches.
-- Use:  paimon-lua expire.lua TABLE --policy examples/policies/keep_per_hour.lua
local N = math.floor(tonumber(os.getenv("KEEP_PER_HOUR") or "2") or 2)
return function(snapshots, ctx)
  local per_hour, keep = {}, {}
  for i = #snapshots, 1, -1 do              -- newest first
    local s = snapshots[i]
    local hour = math.floor(s.time_millis / 3600000)
    per_hour[hour] = (per_hour[hour] or 0) + 1
    if per_hour[hour] <= N then keep[#keep + 1] = s.id end
  end
  return {keep = keep}
end
