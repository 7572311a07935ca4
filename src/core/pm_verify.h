/* Read-only table check: every file that the latest snapshot of each
 * branch and every tag (or every snapshot) needs is there, with the size
 * its manifest records. Nothing is written or deleted. No Lua here. */
#ifndef PM_VERIFY_H
#define PM_VERIFY_H

#include "pm_deleter.h"
#include "pm_table.h"

/* Kind of schema files in a verify result (verify only: no cleanup deletes
 * them); named by pm_verify_kind_name. */
#define PM_VERIFY_SCHEMA PM_K_SCHEMA
const char *pm_verify_kind_name(int kind);

typedef struct pm_verify_opts {
    int all_snapshots;          /* every snapshot of every branch, not only the latest */
    int threads;                /* stat parallelism (<= 1: inline) */
    pm_progress_fn progress;
    void *progress_ud;
} pm_verify_opts;

typedef struct pm_verify_result {
    int64_t branches, snapshots, tags, changelogs;   /* what was checked */
    int64_t checked[PM_K__N];            /* distinct files checked, per kind (schemas: PM_VERIFY_SCHEMA); snapshots:
                                            the snapshot, tag and changelog files read */
    int64_t not_checked;                 /* files on another file system than the table's (external paths) */
    /* problems; msg names what needs the file; size: the recorded size
     * (missing, -1 if none), the size on disk (wrong_size), 0 (unreadable) */
    pm_clean_item *missing; size_t n_missing;
    pm_clean_item *wrong_size; size_t n_wrong_size;  /* size: on disk; msg: the size expected */
    pm_clean_item *unreadable; size_t n_unreadable;  /* snapshots, tags, lists, manifests that cannot be read */
    int64_t duration_ms;
} pm_verify_result;

/* Walk the snapshots (latest per branch, or all), tags and their manifest
 * lists, manifests, index manifests, statistics and live data, changelog,
 * extra and index files, and the schema files of the snapshots and of
 * their data files, and the files long-lived changelogs add; stat each
 * distinct file once, in parallel. A manifest or list that cannot be read
 * is reported and the rest still checked.
 * Problems are reported in r, not as errors: PAIMON_OK with an empty
 * r->missing / wrong_size / unreadable means the table is whole. Errors
 * only when the check itself cannot run (no schema, non-Avro manifests,
 * branches or tags that cannot be listed, out of memory). Free with
 * pm_verify_result_free. */
int pm_verify(paimon_table *t, const pm_verify_opts *o, pm_verify_result *r, pm_err *e);
void pm_verify_result_free(pm_verify_result *r);

#endif
