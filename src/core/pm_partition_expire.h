/* Partition expiration for paimon.h (paimon_expire_partitions): Java's
 * NormalPartitionExpire with PartitionValuesTimeExpireStrategy /
 * PartitionUpdateTimeExpireStrategy and PartitionTimeExtractor, the same
 * rule as the Lua default policy lua/paimon/policy/partition_expire.lua
 * (held to it by spec/procs_spec.lua), then pm_drop_partitions of the
 * chosen ones (one OVERWRITE snapshot). The Lua face keeps its runner
 * (policies are Lua functions). No Lua here. */
#ifndef PM_PARTITION_EXPIRE_H
#define PM_PARTITION_EXPIRE_H

#include "pm_partition_ops.h"

typedef struct pm_part_expire_opts {
    int has_expiration;
    int64_t expiration_ms;           /* else partition.expiration-time (none: PAIMON_MISUSE) */
    const char *strategy;            /* NULL: partition.expiration-strategy */
    const char *formatter;           /* NULL: partition.timestamp-formatter */
    const char *pattern;             /* NULL: partition.timestamp-pattern */
    int max_expires;                 /* <= 0: partition.expiration-max-num */
    int64_t now_local_ms;            /* 0: the local wall clock */
    pm_drop_opts drop;               /* dry_run, max_attempts, commit_user */
} pm_part_expire_opts;

/* A partition the rule could not decide (never expired). */
typedef struct pm_part_unparseable {
    char *path;
    char *reason;
} pm_part_unparseable;

typedef struct pm_part_expire_result {
    pm_drop_result drop;
    const char *strategy;            /* points into the schema or the options */
    int64_t expiration_ms, now, expire_before;
    int max_expires;
    size_t checked, candidates;
    int limited;
    int64_t scanned_snapshot_id;     /* 0: no snapshot */
    pm_part_unparseable *unparseable;
    size_t n_unparseable;
} pm_part_expire_result;
void pm_part_expire_result_free(pm_part_expire_result *r);

/* Wall-clock millis (local, as UTC) of a partition time text: Java's
 * LocalDateTime.parse, else LocalDate.parse at midnight, with the
 * DateTimeFormatter pattern `formatter` (the supported subset: y u M d H m
 * s S, quoted and other literals) or, NULL, the default yyyy-MM-dd[
 * HH:mm:ss[.S]]. PAIMON_MISUSE for a formatter outside the subset;
 * PAIMON_CORRUPT (why in e) for a text that does not parse. */
int pm_partition_time_parse(const char *text, const char *formatter, int64_t *ms, pm_err *e);

/* Expire the partitions of t's latest snapshot that the rule chooses. */
int pm_expire_partitions(paimon_table *t, const pm_part_expire_opts *o, pm_part_expire_result *r, pm_err *e);

#endif
