-- Default tag-expiration policy: Java Paimon's rule, as the core computes it
-- (TagTimeExpire: a tag whose tagCreateTime + tagTimeRetained has passed, or
-- created before older_than; TagAutoCreation: above tag.num-retained-max
-- auto-tagged snapshots, the oldest auto tags).
--
-- A policy is function(tags, ctx) -> {names} | {expire = {names}} | nil
--   tags: every tag of the branch, by snapshot id: {name, snapshot_id,
--         commit_time, create_time (epoch ms, absent for tags without
--         retention), time_retained_ms (or nil), auto (named like an
--         automatic tag), java_expires, reason}
--   ctx: now (epoch ms), older_than, num_retained_max, java (the names Java
--        would expire: what this policy returns)
-- The core deletes the chosen tags and only the files nothing else (another
-- tag, a snapshot, a branch, a consumer, a changelog) still needs.
return function(tags, ctx)
  return ctx.java
end
