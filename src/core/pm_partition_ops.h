/* Partition maintenance: live partition entries (Java PartitionEntry) and
 * drop partitions (Java FileStoreCommit.dropPartitions: mark-delete, an
 * OVERWRITE snapshot of DELETE entries, recomputed from the latest snapshot
 * on every attempt). Nothing is deleted from storage; the files go away
 * when snapshot expiration reaches the new snapshot. paimon-format.md §7.8,
 * §8.4. */
#ifndef PM_PARTITION_OPS_H
#define PM_PARTITION_OPS_H

#include "pm_common.h"
#include "pm_table.h"

/* Which partitions: a partition is selected when it matches any spec
 * (equality on some partition columns, values matched by rendered text, see
 * pm_partition_matches) or equals any of the exact BinaryRow byte strings. */
typedef struct pm_part_select {
    size_t n_specs;
    const pm_partition_filter *specs;
    size_t n_exact;
    const pm_bytes *exact;
    int all;                         /* every partition (listing) */
} pm_part_select;

/* Aggregates of the live files of one partition. */
typedef struct pm_part_stat {
    uint8_t *part;                   /* serialized BinaryRow */
    size_t part_len;
    char *path;                      /* "k=v/k2=v2/" as Java renders it */
    int64_t file_count, record_count, file_size;
    int has_creation_time;
    int64_t last_creation_time;      /* max _CREATION_TIME (local wall clock millis) */
} pm_part_stat;

void pm_part_stats_free(pm_part_stat *v, size_t n);

/* Check every spec's column names (PAIMON_MISUSE naming the column). */
int pm_part_select_check(const paimon_table *t, const pm_part_select *sel, pm_err *e);
/* 1 selected, 0 not, <0 error (code negated). */
int pm_part_selected(const paimon_table *t, const pm_part_select *sel, pm_bytes part, pm_err *e);

/* Live partitions of snapshot s that sel selects (all when sel is NULL),
 * sorted by path. */
int pm_partition_entries(paimon_table *t, const pm_snapshot *s, const pm_part_select *sel,
                         pm_part_stat **out, size_t *n, pm_err *e);

typedef struct pm_drop_opts {
    const char *commit_user;         /* NULL: "paimon-lua-drop-<uuid>" */
    int max_attempts;                /* scan + commit attempts (<= 0: 3) */
    int64_t retry_wait_ms;           /* first wait between attempts, doubled (<= 0: 10) */
    int dry_run;                     /* plan only */
    /* called after each failed attempt (may be NULL) */
    void (*on_retry)(void *ud, int attempt, const pm_err *why);
    void *ud;
} pm_drop_opts;

typedef struct pm_drop_result {
    int64_t base_snapshot_id;        /* snapshot the (last) plan was computed from; 0 none */
    int64_t snapshot_id;             /* committed snapshot; 0 if none */
    int attempts;
    int commits;                     /* snapshots created (2 when concurrent appends had to be chased) */
    pm_part_stat *parts;             /* dropped partitions, sorted by path */
    size_t n_parts;
    int64_t files, rows, bytes;
    int64_t index_files;             /* index manifest entries dropped (DELETE entries committed) */
    char *refused;                   /* dry run: why the real run would refuse (malloc'd); NULL today */
} pm_drop_result;

void pm_drop_result_free(pm_drop_result *r);

/* Drop the selected partitions. Every attempt reads the latest snapshot,
 * scans it, and commits DELETE copies of the live files of the selected
 * partitions, plus DELETE copies of the index manifest entries (deletion
 * vectors, HASH index, global indexes) of those partitions, as one
 * OVERWRITE snapshot through pm_commit_with_index (no snapshot when
 * nothing matches). A conflict (a file or index file deleted or replaced
 * concurrently, the snapshot id taken) re-scans and retries; after
 * max_attempts: PAIMON_CONFLICT. If the commit landed on a newer snapshot
 * than the one scanned and files or index files added in between remain
 * in the dropped partitions, another attempt deletes them too. */
int pm_drop_partitions(paimon_table *t, const pm_part_select *sel, const pm_drop_opts *o,
                       pm_drop_result *r, pm_err *e);

/* ---- mark partitions done (Java's mark_partition_done) ---------------------- */

/* One partition marked: its directory ("k=v/k2=v2/", Java's
 * PartitionPathUtils.generatePartitionPath), its _SUCCESS file and the
 * SuccessFile fields written. */
typedef struct pm_mark_done_item {
    char *partition;
    char *path;
    int created;                     /* 0: the file existed; creationTime kept */
    int64_t creation_time, modification_time;
} pm_mark_done_item;

typedef struct pm_mark_done_result {
    pm_mark_done_item *items;
    size_t n;
    char *actions;                   /* partition.mark-done-action as read */
} pm_mark_done_result;
void pm_mark_done_result_free(pm_mark_done_result *r);

/* Java's MarkPartitionDoneProcedure with the table's
 * partition.mark-done-action (default success-file): success-file writes
 * <table>/<partition>/_SUCCESS as Java's SuccessFile JSON
 * ({"creationTime", "modificationTime"}, Jackson's layout), keeping the
 * creationTime of one that exists. done-partition, mark-event, http-report
 * and custom need a metastore, an HTTP endpoint or a Java class:
 * PAIMON_UNSUPPORTED naming the action, before anything is written; a value
 * outside Java's enum is PAIMON_MISUSE. Each spec names partition columns
 * (values checked against their types, as drop_partitions checks them) and
 * must give a leading run of them (a, or a and b, not b alone: the
 * directory would hold no partition). Every existing _SUCCESS file is read
 * first (an unreadable one fails the run, naming it), then each is written
 * atomically. now_ms 0: the clock. */
int pm_mark_partitions_done(paimon_table *t, const pm_partition_filter *specs, size_t n, int64_t now_ms, int dry_run,
                            pm_mark_done_result *r, pm_err *e);

#endif
