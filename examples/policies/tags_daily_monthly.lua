-- Example tag-expiration policy: daily tags (named YYYY-MM-DD) are kept for
-- 30 days after their commit, monthly tags (YYYY-MM, or a daily tag of the
-- first of a month) forever; every other tag follows Java's rule.
--   paimon-lua tag.lua TABLE expire --policy tags_daily_monthly.lua
local DAY = 24 * 3600 * 1000

return function(tags, ctx)
  local java = {}
  for _, n in ipairs(ctx.java) do java[n] = true end
  local out = {}
  for _, t in ipairs(tags) do
    local y, m, d = t.name:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
    local monthly = t.name:match("^%d%d%d%d%-%d%d$") or (d == "01")
    if monthly then
      -- kept forever
    elseif y then
      if t.commit_time < ctx.now - 30 * DAY then out[#out + 1] = t.name end
    elseif java[t.name] then
      out[#out + 1] = t.name
    end
  end
  return out
end
