/* Protection: the one answer to "may this file go?". Every destructive
 * operation (snapshot expiration, tag deletion and expiry, branch deletion,
 * rollback, changelog expiration) builds one pm_protect from every root
 * that stays and deletes only candidates it does not hold:
 *
 *   - every retained snapshot of every branch (main included): the live
 *     files, changelog files and every metadata file it names;
 *   - every tag of every branch, every long-lived changelog
 *     (changelog/changelog-<id>) of every branch;
 *   - consumers pin snapshots (they cap what expiration may drop).
 *
 * The rule is exact, derived rather than read in full: a branch's retained
 * history is cut into chains. A chain starts at the first retained
 * snapshot, after a gap in the ids, where the snapshot's sharing with other
 * branches changes (fast-forward copies, branch heads), and wherever its
 * base manifest list cannot be shown to be its parent's base + delta merged
 * (the manifests merged away and the new ones must carry the same net file
 * count, the new ones must be named by s's own commit, and the record
 * counts must add up). A chain start's whole live set
 * is read; every later snapshot of the chain adds only its delta's ADDs
 * (a name re-added by rollback --as-latest is such an ADD) and its
 * changelog's ADDs. Metadata names come from every retained snapshot's own
 * lists. A file or list a root needs that cannot be read refuses the
 * operation (fail closed). The brute-force oracle in spec/support/oracle.py
 * checks this derivation after every step of random lifecycles. */
#ifndef PM_PROTECT_H
#define PM_PROTECT_H

#include "pm_deleter.h"
#include "pm_manifest.h"
#include "pm_table.h"

typedef struct pm_protect pm_protect;

/* What goes, of one branch (`branch`, NULL: t's). Everything else of every
 * branch is a root. */
typedef struct pm_protect_spec {
    const char *branch;
    int whole_branch;                   /* the branch goes entirely (branch deletion) */
    /* the branch's snapshots that stay (not whole_branch): kept[0..n_kept)
     * ascending if kept is not NULL; else all of them (kept_all, listed);
     * else kept_first (if not NULL: the caller read it) and those of
     * [kept_from, kept_to], read by id (none if from > to) */
    pm_snapshot *const *kept;
    size_t n_kept;
    int kept_all;
    pm_snapshot *kept_first;
    int64_t kept_from, kept_to;
    int64_t refs_above;                 /* its tags and long-lived changelogs with a higher id go (rollback);
                                           INT64_MAX: none */
    const char *const *tags;            /* its tags that go, by name */
    size_t n_tags;
    const int64_t *changelogs;          /* its long-lived changelogs that go, by id */
    size_t n_changelogs;
    const char *refusing;               /* error prefix: "refusing to expire", ... */
    int threads;                        /* manifest reads in parallel */
} pm_protect_spec;

int pm_protect_build(paimon_table *t, const pm_protect_spec *sp, pm_protect **out, pm_err *e);
void pm_protect_free(pm_protect *x);

/* A data, changelog or extra file (full path), or a metadata file name
 * (manifest list, manifest, index manifest, index file, statistics). */
int pm_protect_has_path(const pm_protect *x, const char *path, size_t len);
int pm_protect_has_name(const pm_protect *x, const char *name);
/* Files read to build it (tests count them). */
int64_t pm_protect_chains(const pm_protect *x);   /* chain starts whose live set was read */

/* Expiration with a decoupled changelog lifecycle: what Java keeps for the
 * snapshots that move to changelog/ (their changelog lists' files and
 * manifests; without a changelog producer also their base and delta lists
 * with every manifest and their deltas' additions). */
int pm_protect_add_moved_changelogs(pm_protect *x, paimon_table *t, pm_snapshot *const *moved, size_t n, pm_err *e);

/* ---- planning what a dropped source frees ------------------------------------ */

/* Deletion sinks: data and changelog files into `data`; manifests, index
 * files and statistics into meta_a; manifest lists and index manifests into
 * meta_b (deleted in that order). Candidates the protection keeps are
 * counted in protected_files; manifests that cannot be read (their files
 * stay) in unreadable. */
typedef struct pm_protect_plan {
    pm_deleter *data, *meta_a, *meta_b;
    int64_t protected_files;
    int64_t unreadable;
} pm_protect_plan;

/* What one dropped snapshot's plan reads, read on a worker (each list and
 * manifest is a request on an object store) and planned afterwards in
 * snapshot order. */
typedef struct pm_protect_read pm_protect_read;
pm_protect_read *pm_protect_read_new(size_t n);
void pm_protect_read_clear(pm_protect_read *d, size_t n);
void pm_protect_read_free(pm_protect_read *d, size_t n);
pm_protect_read *pm_protect_read_at(pm_protect_read *d, size_t i);
/* Reads for s: with `data`, its delta's entries; with `meta`, the lists
 * pm_protect_plan_meta_read will need (those nothing kept names). */
void pm_protect_read_for_plan(const paimon_table *t, const pm_snapshot *s, const pm_protect *x, int data, int meta,
                              pm_protect_read *d);
/* The data files s's delta deletes (last operation on a path wins: ADD
 * then DELETE deletes, DELETE then ADD keeps; a delta already gone
 * contributes nothing), from what d read. */
int pm_protect_plan_delta_read(const pm_snapshot *s, const pm_protect_read *d, const pm_protect *x,
                               pm_protect_plan *pl, pm_err *e);
/* s's manifest lists, manifests, index manifest, index files and
 * statistics that nothing kept names (d: what was read ahead, or NULL). */
int pm_protect_plan_meta_read(paimon_table *t, const pm_snapshot *s, const pm_protect_read *d, const pm_protect *x,
                              pm_protect_plan *pl, pm_err *e);
/* The changelog files s's changelog list adds. */
int pm_protect_plan_changelog(paimon_table *t, const pm_snapshot *s, const pm_protect *x, pm_protect_plan *pl,
                              pm_err *e);

/* A dropped snapshot, tag or changelog s of branch table bt: the data files
 * it holds (by_live: its whole live set; else its delta's deletions when
 * `delta_deletes`, else its delta's additions), its changelog files and its
 * metadata files, each only if nothing kept needs it. by_live with
 * `strict`: an unreadable list or manifest refuses (we could not know what
 * it held); otherwise it counts in pl->unreadable and its files stay. */
typedef enum pm_protect_files { PM_PROTECT_LIVE, PM_PROTECT_DELTA_ADDS, PM_PROTECT_DELTA_DELETES,
                                PM_PROTECT_NO_DATA } pm_protect_files;
int pm_protect_plan_dropped(pm_protect *x, paimon_table *bt, const pm_snapshot *s, pm_protect_files files,
                            int strict, pm_protect_plan *pl, pm_err *e);

#endif
