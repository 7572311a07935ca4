/* Upkeep: what Java's TableCommitImpl.maintain runs after every commit
 * (unless write-only=true), as one code path for every writer of ours and
 * for maintain.lua. Driven only by the table's options, read from the
 * branch's latest schema at each run (a table handle opened afresh on the
 * same FileIO), in Java's order (apache/paimon master, 2026):
 *
 *   auto_tags          tag.automatic-creation process-time / watermark
 *                      (TagAutoCreation, with its tag.num-retained-max)
 *   expire_tags        tag.time-expire-enabled (TagTimeExpire)
 *   expire_partitions  partition.expiration-time, at most once per
 *                      partition.expiration-check-interval (PartitionExpire)
 *   expire_consumers   consumer.expiration-time (ConsumerManager.expire)
 *   expire_snapshots   snapshot.num-retained.min/max, snapshot.time-retained,
 *                      snapshot.expire.limit (ExpireSnapshotsImpl); not for
 *                      bucket = -2 (postpone), as Java
 *   expire_changelogs  with a decoupled changelog lifecycle (ExpireChangelogImpl)
 *
 * Each step runs the existing operation (pm_ops) with no options but the
 * run's (dry-run, threads, now-ms): the operation falls back on the
 * table's options, as the scripts without flags do. A step that fails is
 * recorded and the next one still runs; nothing here undoes a commit. */
#ifndef PM_UPKEEP_H
#define PM_UPKEEP_H

#include "pm_result.h"
#include "pm_table.h"

/* A step hook's answer meaning "run the core's own step". */
#define PM_UPKEEP_DEFAULT (-1)

typedef struct pm_upkeep_step {
    const char *name;             /* "expire_partitions", ... */
    paimon_table *t;              /* the table as of its latest schema */
    int dry_run;
    int threads;
    int64_t now_ms;
} pm_upkeep_step;

typedef struct pm_upkeep_opts {
    int dry_run;
    int threads;                  /* <= 0: 4 */
    int64_t now_ms;               /* 0: the clock */
    /* maintain.lua: a one-shot run checks partitions whatever the interval */
    int force_partition_check;
    /* maintain: runs for a write-only table too (that is what it is for) */
    int ignore_write_only;
    /* the committer's PartitionExpire.lastCheck (epoch ms; Java starts it at
     * the committer's creation), updated when partitions were checked
     * without error; NULL: none kept (only a zero interval, end-input or
     * force check partitions) */
    int64_t *partition_last_check_ms;
    int64_t commit_identifier;    /* the commit's identifier (INT64_MAX: a batch commit); 0: none */
    /* A face's own step (the Lua binding: partition expiration, named
     * policies). Fills node with the step's result and returns PAIMON_OK,
     * an error code (e set), or PM_UPKEEP_DEFAULT. NULL: the core's. */
    int (*step)(void *ud, const pm_upkeep_step *s, pm_result *r, pm_rv *node, pm_err *e);
    void *step_ud;
} pm_upkeep_opts;

/* Run the upkeep of t's branch. *out is the result:
 *   {table, branch, schema_id, dry_run, write_only,
 *    steps: [{operation, status: "done" | "skipped" | "failed",
 *             reason (skipped), error + code (failed), result (done)}],
 *    expired_snapshots, deleted_files, errors, duration_ms}
 * Returns PAIMON_OK whenever the result could be made (a failed step is
 * "failed" in it and counted in errors), else NOMEM / MISUSE. */
int pm_upkeep_run(paimon_table *t, const pm_upkeep_opts *o, pm_result **out, pm_err *e);

/* The table's write-only option (of t's schema as loaded). */
int pm_upkeep_write_only(const paimon_table *t);

#endif
