/* The deleter shared by snapshot expiration, orphan cleaning and aborted
 * writes: a batch of paths checked to lie inside the table directory,
 * stat'ed for their size, then removed in parallel on the executor (or only
 * listed in a dry run); the kinds and result lists of a cleanup. No Lua
 * here. */
#ifndef PM_DELETER_H
#define PM_DELETER_H

#include "pm_exec.h"
#include "pm_fileio.h"

/* Kinds of files a cleanup deletes; names are the result-table keys. */
typedef enum pm_file_kind {
    PM_K_DATA, PM_K_CHANGELOG, PM_K_MANIFEST, PM_K_MANIFEST_LIST, PM_K_INDEX_MANIFEST,
    PM_K_INDEX, PM_K_STATISTICS, PM_K_SNAPSHOT, PM_K_TEMP,
    PM_K_OTHER,   /* orphan cleaning: any other file in a directory of Paimon files (Java's rule) */
    /* metadata files that operations remove by name (rollback, branch and
     * tag deletion, purge): what each is, never lumped in with snapshots */
    PM_K_TAG, PM_K_SCHEMA, PM_K_HINT, PM_K_CHANGELOG_META, PM_K_CONSUMER,
    PM_K__N
} pm_file_kind;
extern const char *const pm_file_kind_names[PM_K__N];

typedef struct pm_clean_item {
    char *path;
    int kind;
    int64_t size;
    char *msg;          /* failure / skip reason */
} pm_clean_item;

/* A dry run's plan: the files it would delete, in order, as the deleters
 * stored them (compactly, ~40 bytes a path: a catch-up expiration plans
 * millions). */
typedef struct pm_plan pm_plan;
size_t pm_plan_count(const pm_plan *p);                 /* NULL-safe: 0 */
/* The i-th planned path as a C string in out (overwritten; the pointer
 * stays valid until out changes), its kind and size (either may be NULL);
 * NULL when i is out of range or out of memory. */
const char *pm_plan_path(const pm_plan *p, size_t i, pm_buf *out, int *kind, int64_t *size);
void pm_plan_free(pm_plan *p);                          /* NULL-safe */

/* Outcome of a cleanup. count/bytes are confirmed deletions (dry run:
 * planned deletions of files that exist). */
typedef struct pm_clean_result {
    int dry_run;
    int64_t count[PM_K__N], bytes[PM_K__N];
    int64_t missing;                 /* already gone (not an error) */
    int64_t dirs_removed;            /* empty bucket / partition directories removed afterwards */
    int64_t protected_files;         /* candidates kept because something still uses them */
    int64_t not_attempted;           /* left undeleted: an interruption (interruptible runs) */
    pm_plan *plan; size_t n_paths;               /* dry run: the plan (pm_plan_path) and its size */
    pm_clean_item *failures; size_t n_failures;  /* could not delete */
    pm_clean_item *skipped; size_t n_skipped;    /* refused: outside the table directory */
    int64_t duration_ms;
} pm_clean_result;
void pm_clean_result_free(pm_clean_result *r);   /* frees the lists, keeps the struct */
int pm_clean_result_add(pm_clean_item **v, size_t *n, const char *path, int kind, int64_t size,
                        const char *msg);
/* The kind of a metadata file by its place: .../snapshot/snapshot-N
 * PM_K_SNAPSHOT, .../snapshot|changelog/EARLIEST|LATEST PM_K_HINT,
 * .../schema/schema-N PM_K_SCHEMA, .../tag/tag-X PM_K_TAG,
 * .../changelog/changelog-N PM_K_CHANGELOG_META, .../consumer/consumer-X
 * PM_K_CONSUMER; anything else PM_K_OTHER. */
int pm_meta_kind(const char *path);
/* Removes one file that an operation removes in its own order (snapshot
 * files newest first, ...) and accounts it in r like a deleter would: its
 * size (a stat first), count[kind]; missing: r->missing, PAIMON_OK. */
int pm_clean_remove_one(pm_fileio *io, const char *path, int kind, pm_clean_result *r, pm_err *e);

typedef struct pm_clean_opts {
    int threads;
    int dry_run;
    int stop_on_failure;     /* with threads <= 1: after a failure, attempt nothing more */
    pm_progress_fn progress;
    void *progress_ud;
    int interruptible;       /* after paimon_interrupt(), start no further batch (not_attempted) */
} pm_clean_opts;

/* 1 if `path` (full path or file: URI) lies strictly inside the table
 * directory `root` and the deleter could remove it: lexically (no "." /
 * ".." / empty component, prefix root + "/") and reached from root without
 * a symlink on the way (remove_within, as a dry run). 0 with the reason in
 * why otherwise; -1 when it does not exist (nothing to delete). */
int pm_path_inside(pm_fileio *io, const char *root, const char *path, char *why, size_t whylen);

/* One phase of deletions. Paths are deduplicated. */
typedef struct pm_deleter pm_deleter;
pm_deleter *pm_deleter_new(void);
int pm_deleter_add(pm_deleter *d, const char *path, int kind, pm_err *e);
/* The same with the size the metadata records (a manifest entry's
 * file_size, a list's size; -1: unknown): what a deletion counts in bytes
 * when the FileIO cannot say (S3's DeleteObjects returns no sizes). */
int pm_deleter_add_sized(pm_deleter *d, const char *path, int kind, int64_t size, pm_err *e);
/* The same for a file a listing of the store just gave, with its size: on
 * a FileIO with PM_IO_VIRTUAL_DIRS (no symlinks, no directories to pass) a
 * dry run plans it with that size and asks nothing more (no HEAD per
 * key); a deletion, and any dry run elsewhere, is as pm_deleter_add_sized. */
int pm_deleter_add_listed(pm_deleter *d, const char *path, int kind, int64_t size, pm_err *e);
int pm_deleter_contains(const pm_deleter *d, const char *path);
size_t pm_deleter_count(const pm_deleter *d);
/* Bytes the deleter's paths take (entries, item and index arrays,
 * directories; not the allocator's overhead): what keeps a plan of
 * millions of files small is checked against it. */
size_t pm_deleter_bytes(const pm_deleter *d);
/* Check, stat and delete (or only list, in a dry run) every path, through
 * pm_io_remove_batch: one item per task without a batch operation, else
 * batches of up to 1000 (locally 256, grouped by directory) run in
 * parallel (with stop_on_failure, a local batch stops after the item that
 * failed; a store's batch already sent is not cut short); results
 * are added to r. Files outside root, lexically or through a directory
 * that is a symlink (checked in the same step as the removal, see
 * remove_within), are never touched (r->skipped); a
 * missing file counts in r->missing; directories are never removed. Fails
 * only for out-of-memory; per-file errors go to r->failures. `phase` names
 * the step in progress reports. */
int pm_deleter_run(pm_deleter *d, pm_fileio *io, const char *root, const pm_clean_opts *o,
                   const char *phase, pm_clean_result *r, pm_err *e);
/* After pm_deleter_run (not a dry run): the bucket directories (bucket-*)
 * that held the files it deleted (or found already gone: a run that
 * crashed) are removed if they are empty now, then, level by level, up to
 * `partition_levels` parent partition directories (k=v) that became empty
 * — Java's cleanEmptyDataDirectory. Never the table directory or anything
 * outside it; a directory that is not empty, or cannot be removed, stays.
 * Counted in r->dirs_removed. Nothing on a FileIO with PM_IO_VIRTUAL_DIRS. */
void pm_deleter_clean_dirs(pm_deleter *d, pm_fileio *io, const char *root, size_t partition_levels,
                           pm_clean_result *r);
void pm_deleter_free(pm_deleter *d);

#endif
