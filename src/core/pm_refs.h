/* References: the one definition of "every file a retained snapshot, tag,
 * branch or long-lived changelog still needs". Expiration (protection
 * sets), orphan cleaning (used names) and verify (wanted files) walk the
 * same sources with it and keep only what they need through visitors:
 *
 *   branches (pm_refs_open_branches)
 *     -> snapshots, tags (pm_refs_tags), long-lived changelogs
 *        (pm_refs_changelogs)
 *     -> what a snapshot names itself (pm_refs_snapshot_names): its manifest
 *        lists, index manifest, statistics, schema
 *     -> manifests (pm_read_manifest_list) -> data files: the live set
 *        (pm_refs_live) or a list's additions (pm_refs_adds)
 *     -> index files of an index manifest (pm_refs_index_files)
 *
 * An unreadable file follows the caller's rule: PM_REFS_REFUSE stops with
 * the error (expiration and orphan cleaning must fail closed: a file they
 * cannot read may protect files); PM_REFS_REPORT hands it to the visitor's
 * `unreadable` and goes on with the rest (verify). Out of memory always
 * stops. No Lua here. */
#ifndef PM_REFS_H
#define PM_REFS_H

#include "pm_deleter.h"
#include "pm_table.h"

typedef enum pm_refs_rule { PM_REFS_REFUSE, PM_REFS_REPORT } pm_refs_rule;

/* ---- branches ---------------------------------------------------------------- */

/* Every branch of t's table sharing t's FileIO: out[0] is main, then the
 * branches in listing order. Free with pm_refs_close_branches. */
int pm_refs_open_branches(paimon_table *t, paimon_table ***out, size_t *n, pm_err *e);
void pm_refs_close_branches(paimon_table **v, size_t n);

/* Snapshots of branch bt with id >= from, ascending; one that vanishes
 * between listing and reading (expired meanwhile) is left out, any other
 * read error fails. Free with pm_refs_snapshots_free. */
int pm_refs_snapshots(paimon_table *bt, int64_t from, pm_snapshot ***out, size_t *n, pm_err *e);
void pm_refs_snapshots_free(pm_snapshot **v, size_t n);

/* The same for the ids [from, to] only, read by id without listing the
 * snapshot directory (a missing id is a gap, left out): what expiration
 * reads, whatever the length of the history. Read `threads` at a time
 * (each is a request on an object store); any error other than a missing
 * id fails, the lowest id's. */
int pm_refs_snapshots_between(paimon_table *bt, int64_t from, int64_t to, int threads, pm_snapshot ***out, size_t *n,
                              pm_err *e);
/* The snapshots [from, to] into v[0 .. to - from] (NULL: missing), read
 * `threads` at a time; errors as pm_refs_snapshots_between (then every
 * slot is NULL). */
int pm_refs_read_ids(paimon_table *bt, int64_t from, int64_t to, int threads, pm_snapshot **v, pm_err *e);

/* THE WALK of a branch's snapshots: those of branch bt with ids in [from,
 * to], ascending, `window` (0: 256) at a time read on `threads` workers and
 * handed to fn, which must not keep them. listed: the ids come from listing
 * the snapshot directory (one listed but gone when read, expired
 * meanwhile, is left out); else every id of [from, to] is read by id, a
 * missing one a gap, without a listing. Any other read error fails. Memory
 * holds one window, whatever the length of the history. */
typedef int (*pm_refs_window_fn)(void *ud, pm_snapshot *const *v, size_t n, pm_err *e);
int pm_refs_walk_snapshots(paimon_table *bt, int64_t from, int64_t to, int listed, int threads, size_t window,
                           pm_refs_window_fn fn, void *ud, pm_err *e);

/* ---- tags and long-lived changelogs ---------------------------------------- */

typedef enum pm_refs_source { PM_REFS_SNAPSHOT, PM_REFS_TAG, PM_REFS_CHANGELOG, PM_REFS__N } pm_refs_source;

typedef struct pm_refs_visitor {
    pm_refs_rule rule;
    /* REFUSE: the error is prefixed "<refusing>: cannot read tag t of
     * branch b (<path>)" (or changelog ...); a NOTFOUND under a source
     * becomes notfound_as[source] (0: stays NOTFOUND) */
    const char *refusing;
    int notfound_as[PM_REFS__N];
    /* a tag or changelog that was read; `by` names it ("tag t1 of branch
     * main"). Its errors follow the rule above (prefixed, mapped). */
    int (*snapshot)(void *ud, paimon_table *bt, pm_refs_source src, const char *by, const pm_snapshot *s,
                    pm_err *e);
    /* REPORT: a tag or changelog file that cannot be read */
    int (*unreadable)(void *ud, pm_refs_source src, const char *path, const char *by, const pm_err *why, pm_err *e);
    void *ud;
} pm_refs_visitor;

/* Every tag of branch bt (listing failures always fail). */
int pm_refs_tags(paimon_table *bt, const pm_refs_visitor *v, pm_err *e);
/* Every long-lived changelog (changelog/changelog-<id>, written while the
 * changelog lifecycle is or was decoupled) of branch bt. */
int pm_refs_changelogs(paimon_table *bt, const pm_refs_visitor *v, pm_err *e);

/* Tags of bt's branch (names, sizes, modification times), branches and
 * consumers that exist now, as one string: compared right before deleting,
 * so one created, removed or replaced while planning is a conflict. */
int pm_refs_fingerprint(paimon_table *bt, pm_buf *out, pm_err *e);

/* ---- what a snapshot names itself -------------------------------------------- */

typedef enum pm_refs_name_kind {
    PM_REFS_BASE_LIST, PM_REFS_DELTA_LIST, PM_REFS_CHANGELOG_LIST, PM_REFS_INDEX_MANIFEST, PM_REFS_STATISTICS
} pm_refs_name_kind;

/* fn(ud, kind, name, recorded size or -1) for each metadata file s names,
 * in the order above (absent ones skipped). Stops at fn's first error. */
typedef int (*pm_refs_name_fn)(void *ud, pm_refs_name_kind kind, const char *name, int64_t size, pm_err *e);
int pm_refs_snapshot_names(const pm_snapshot *s, pm_refs_name_fn fn, void *ud, pm_err *e);

/* ---- manifests -> data files -------------------------------------------------- */

typedef struct pm_refs_entry_visitor {
    /* each data-file entry kept; `manifest` names the manifest it came
     * from. In pm_refs_live with threads > 1 this runs on a worker thread
     * and may only append records to `out` (the
     * task's buffer, see pm_refs_record); otherwise on the calling thread
     * with out == NULL. scratch: two buffers of the calling task, kept
     * across its entries (for paths). */
    int (*entry)(void *ud, const pm_manifest_entry *m, const char *manifest, pm_buf *out, pm_buf *scratch,
                 pm_err *e);
    /* pm_refs_live with threads > 1: each record entry() appended, on the
     * calling thread, in manifest order */
    int (*record)(void *ud, const void *rec, size_t len, pm_err *e);
    /* REPORT: a manifest that cannot be opened or read to its end (what was
     * read of it still counts); code is the failure's */
    int (*unreadable)(void *ud, const char *manifest, int code, const pm_err *why, pm_err *e);
    void *ud;
} pm_refs_entry_visitor;

/* Append one record for the calling thread's `record` callback. */
int pm_refs_record(pm_buf *out, const void *rec, size_t len);

/* The live set of a snapshot whose base + delta lists name `manifests`:
 * see the rule in pm_refs.c (one definition). Manifests are read on up to
 * `threads` workers. */
int pm_refs_live(paimon_table *t, const char *const *manifests, size_t n, int threads, pm_refs_rule rule,
                 const pm_refs_entry_visitor *v, pm_err *e);

/* Every ADD entry of `manifests`, read in order on the calling thread (a
 * delta's or a changelog list's additions: nothing cancels them). */
int pm_refs_adds(paimon_table *t, const char *const *manifests, size_t n, pm_refs_rule rule,
                 const pm_refs_entry_visitor *v, pm_err *e);

/* fn(ud, entry) for every entry of index manifest `name`. */
typedef int (*pm_refs_index_fn)(void *ud, const pm_index_entry *ie, pm_err *e);
int pm_refs_index_files(paimon_table *t, const char *name, pm_refs_index_fn fn, void *ud, pm_err *e);

#endif
