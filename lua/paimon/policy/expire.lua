-- Default snapshot-expiration policy: Java Paimon's rule (ExpireSnapshotsImpl).
--
-- A policy is function(snapshots, ctx) -> {keep_from = id} | {keep = {ids}} | id
-- (keep_from: the first snapshot kept; ["until"] = id is its old name)
--   snapshots: the branch's existing snapshots, ascending:
--              {id, time_millis, commit_kind, total_record_count}; those
--              above hard_end read their file on first use of a field
--              other than id (this rule looks at [earliest, hard_end] only)
--   ctx: earliest, latest, retain_min, retain_max, max_deletes, older_than
--        (cut-off, epoch ms), now, consumer_min (or nil), hard_end (the
--        first id no policy may expire: retain-min, consumers and the expire
--        limit applied), java_end (what this default policy returns).
-- Only a contiguous prefix [earliest, keep_from) can expire; the C core caps
-- keep_from at hard_end, never deletes the latest snapshot and keeps every
-- file a retained snapshot, tag, branch or consumer still uses.
return function(snapshots, ctx)
  local by_id = {}
  for _, s in ipairs(snapshots) do by_id[s.id] = s end
  -- snapshots below `min` expire whatever their age (snapshot.num-retained.max)
  local min = math.max(ctx.latest - ctx.retain_max + 1, ctx.earliest)
  for id = min, ctx.hard_end - 1 do
    -- a snapshot expires only when its successor is older than the cut-off
    local nxt = by_id[id + 1]
    if nxt and nxt.time_millis >= ctx.older_than then
      return {keep_from = id, reason = "time-retained"}
    end
  end
  return {keep_from = ctx.hard_end, reason = "limits"}
end
