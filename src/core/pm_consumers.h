/* Streaming consumers (Java ConsumerManager): consumer/consumer-<id> files
 * {"nextSnapshot" : N} of a branch. List them, reset one (written
 * atomically, Jackson's layout byte for byte), delete one, and expire the
 * ones whose file was not modified for consumer.expiration-time
 * (ConsumerManager.expire: mtime before now - expiration). No Lua here. */
#ifndef PM_CONSUMERS_H
#define PM_CONSUMERS_H

#include "pm_table.h"

typedef struct pm_consumer_info {
    char *id;
    int64_t next_snapshot;
    int64_t mtime_ms;
} pm_consumer_info;

void pm_consumer_infos_free(pm_consumer_info *v, size_t n);

/* Every consumer of t's branch, sorted by id; an unreadable consumer file
 * is an error naming it (a consumer that vanished meanwhile is left out). */
int pm_consumers_list(paimon_table *t, pm_consumer_info **out, size_t *n, pm_err *e);

/* Java Consumer.toJson: "{\n  \"nextSnapshot\" : N\n}". */
int pm_consumer_to_json(int64_t next_snapshot, pm_buf *out);

/* Write consumer id at next_snapshot (>= 1) atomically (replacing it).
 * PAIMON_MISUSE for a bad id or position. */
int pm_consumer_reset(paimon_table *t, const char *id, int64_t next_snapshot, pm_err *e);

/* Remove consumer id; PAIMON_NOTFOUND when there is none. */
int pm_consumer_delete(paimon_table *t, const char *id, pm_err *e);

/* The table's consumer.expiration-time in ms into *ms; *has = 0 when the
 * option is not set (consumers never expire). */
int pm_consumer_expiration(const paimon_table *t, int64_t *ms, int *has, pm_err *e);

typedef struct pm_consumer_expire_result {
    int64_t cutoff_ms;            /* files modified before this expire */
    pm_consumer_info *expired;    /* removed (dry run: would be) */
    size_t n_expired;
    int64_t kept;
} pm_consumer_expire_result;
void pm_consumer_expire_result_free(pm_consumer_expire_result *r);

/* Remove (dry run: list) the consumers whose file was modified before
 * now_ms - expiration_ms. expiration_ms < 0: the table's
 * consumer.expiration-time (PAIMON_MISUSE when it has none). */
int pm_consumers_expire(paimon_table *t, int64_t expiration_ms, int64_t now_ms, int dry_run,
                        pm_consumer_expire_result *r, pm_err *e);

typedef struct pm_consumer_clear_result {
    char **cleared;               /* ids removed (dry run: that would be), sorted */
    size_t n_cleared;
    int64_t kept;
} pm_consumer_clear_result;
void pm_consumer_clear_result_free(pm_consumer_clear_result *r);

/* Java ConsumerManager.clearConsumers: remove (dry run: list) every
 * consumer whose id matches `include` as a whole and does not match
 * `exclude` as a whole. NULL or blank include: every consumer; NULL or
 * blank exclude: none excluded. The patterns are POSIX extended regular
 * expressions (glibc's, close to Java's for the usual cases: `.*`, `a|b`,
 * `[0-9]+`); one that does not compile is PAIMON_MISUSE naming it. The
 * files are not read (Java does not either), so an unreadable consumer
 * can be cleared. */
int pm_consumers_clear(paimon_table *t, const char *include, const char *exclude, int dry_run,
                       pm_consumer_clear_result *r, pm_err *e);

#endif
