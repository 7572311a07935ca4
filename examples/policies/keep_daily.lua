-- Example expiration policy: keep the last snapshot of every day (local
-- time) and every snapshot newer than the cut-off (--older-than, or the
-- table's snapshot.time-retained); the others may expire.
--
-- Only a contiguous prefix of snapshots can expire (Paimon snapshots form a
-- chain), so "keep" means: expiration stops at the first kept snapshot.
-- Use:  paimon-lua expire.lua TABLE --policy examples/policies/keep_daily.lua
return function(snapshots, ctx)
  local keep, last_of_day = {}, {}
  for _, s in ipairs(snapshots) do
    local day = os.date("%Y-%m-%d", math.floor(s.time_millis / 1000))
    last_of_day[day] = s.id                 -- ascending: the last one wins
  end
  for _, id in pairs(last_of_day) do keep[#keep + 1] = id end
  for _, s in ipairs(snapshots) do
    if s.time_millis >= ctx.older_than then keep[#keep + 1] = s.id end
  end
  return {keep = keep}
end
