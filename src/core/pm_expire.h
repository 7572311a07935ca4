/* Snapshot expiration (Java ExpireSnapshotsImpl + SnapshotDeletion, 2.0;
 * paimon-format.md §8.1) with fail-closed protection: files used by any
 * retained snapshot, tag, long-lived changelog (changelog/changelog-<id>)
 * or other branch are never deleted; consumers cap the range; the latest
 * snapshot always stays; nothing outside the table directory is touched.
 * All reads happen before the first deletion; a tag, branch or consumer
 * created, removed or replaced meanwhile, or a consumer moved back below
 * the new earliest, aborts with PAIMON_CONFLICT. A cut-off in the future
 * (also by the real clock, whatever now_ms says) is PAIMON_MISUSE. */
#ifndef PM_EXPIRE_H
#define PM_EXPIRE_H

#include "pm_deleter.h"
#include "pm_table.h"

typedef struct pm_expire_opts {
    int retain_min;               /* <= 0: snapshot.num-retained.min (10) */
    int retain_max;               /* <= 0: snapshot.num-retained.max (int32 max) */
    int has_older_than;
    int64_t older_than_ms;        /* cut-off (epoch ms); else now - snapshot.time-retained */
    int max_deletes;              /* <= 0: snapshot.expire.limit (50; 0 or less: none) */
    int64_t until;                /* > 0: the policy's exclusive end (still capped, see below) */
    int threads;                  /* delete parallelism (<= 1: inline) */
    int dry_run;
    int clean_empty_dirs;         /* > 0 yes, < 0 no, 0: snapshot.clean-empty-directories (false) */
    int64_t now_ms;               /* 0: the clock */
    pm_progress_fn progress;
    void *progress_ud;
} pm_expire_opts;

typedef struct pm_expire_range {
    int64_t earliest, latest;     /* 0 when the branch has no snapshot */
    int retain_min, retain_max, max_deletes;
    int64_t older_than_ms, now_ms;
    int64_t consumer_min;         /* smallest consumer nextSnapshot (valid when n_consumers > 0) */
    int64_t n_consumers;          /* consumer files read */
    int consumers_changelog_only; /* consumer.changelog-only in force: consumers do not cap */
    int64_t consumer_cutoff_ms;   /* consumer.expiration-time set: files modified before this are
                                     expired consumers and left out (0: none) */
    int64_t consumers_expired;    /* consumer files left out for that */
    int64_t hard_end;             /* no policy can expire this id or later */
    int64_t begin, end;           /* [begin, end) expires; end <= begin: nothing */
    const char *capped_by;        /* rule that set end: "retain-min", "consumer", "expire-limit",
                                     "time-retained", "policy", "none" */
} pm_expire_range;

/* The range Java would expire (or the policy's `until`, capped by
 * retain-min, consumers and the expire limit). Reads hints, consumers and
 * the snapshots it needs; an unreadable consumer file is an error. */
int pm_expire_compute_range(paimon_table *t, const pm_expire_opts *o, pm_expire_range *r, pm_err *e);

typedef struct pm_expire_result {
    pm_clean_result clean;
    pm_expire_range range;
    int64_t expired;              /* snapshots expired (dry run: that would expire) */
    int64_t consumers_expired;    /* consumer files removed first (consumer.expiration-time) */
    char refused[512];            /* dry run on a table a real run refuses: why */
    int64_t changelogs;           /* decoupled lifecycle: changelog/changelog-<id> written (dry run: would be) */
} pm_expire_result;

/* Expire snapshots of t's branch. Deletion order: data files (+ extra
 * files), changelog files, manifests / index files / statistics, manifest
 * lists / index manifests, snapshot files (ascending), EARLIEST. A re-run
 * after a crash anywhere finishes the job. With a decoupled changelog
 * lifecycle (changelog.* retention above the snapshot's) each expired
 * snapshot is first written to changelog/changelog-<id> (Java's
 * ExpireSnapshotsImpl) and keeps what it reads (pm_changelog.h). Tables
 * with non-Avro manifests: PAIMON_UNSUPPORTED. Free with
 * pm_clean_result_free(&res->clean). */
int pm_expire_snapshots(paimon_table *t, const pm_expire_opts *o, pm_expire_result *res, pm_err *e);

/* Tags, branches and consumers that exist now (names; tags with size and
 * modification time), compared right before deleting: one created,
 * removed or replaced while planning is a conflict. */
int pm_expire_refs_fingerprint(paimon_table *t, pm_buf *out, pm_err *e);

/* Tag deletion (pm_tags.c) with the protection sets of expiration: what
 * deleting the n tags (read, with their names) frees. Kept: every
 * snapshot of t's branch, every other tag, the long-lived changelogs and
 * every other branch; an unreadable file of any of them, or of a tag
 * going away, refuses. Data / changelog files go to `data`, manifests,
 * index files and statistics to `manifests`, manifest lists and index
 * manifests to `lists`; kept candidates are counted in *protected_files. */
int pm_expire_plan_tag_deletion(paimon_table *t, pm_snapshot *const *tags, const char *const *names, size_t n,
                                int threads, pm_deleter *data, pm_deleter *manifests, pm_deleter *lists,
                                int64_t *protected_files, pm_err *e);

/* ---- what everything retained needs (shared with rollback) ------------------- */

/* The protection expiration computes, for another cleanup: the files and
 * metadata names `kept` (the branch's snapshots that stay, ascending), its
 * tags and long-lived changelogs up to id drop_above, and every other
 * branch need. Unreadable retained files refuse (fail closed). */
typedef struct pm_protect pm_protect;
int pm_protect_build(paimon_table *t, pm_snapshot **kept, size_t n_kept, int64_t drop_above, int threads,
                     pm_protect **out, pm_err *e);
int pm_protect_has_path(const pm_protect *x, const char *path);
/* Plan the files of a snapshot, tag or changelog s that goes: the data
 * files it adds (by_live: its whole live set; else its delta's additions)
 * and its changelog files into `data`, its manifests, index files and
 * statistics into meta_a, its manifest lists and index manifest into
 * meta_b; each only if nothing retained needs it. A list or manifest of s
 * that cannot be read counts in *unreadable (its files stay). */
int pm_protect_plan_dropped(pm_protect *x, const pm_snapshot *s, int by_live, pm_deleter *data, pm_deleter *meta_a,
                            pm_deleter *meta_b, int64_t *protected_files, int64_t *unreadable, pm_err *e);
void pm_protect_free(pm_protect *x);


/* Changelog expiration (pm_changelog.c): what deleting the n long-lived
 * changelogs frees (Java ChangelogDeletion), kept: every snapshot, tag
 * and other changelog of t's branch and every other branch; an
 * unreadable file of any of them refuses. Sinks as above. */
int pm_expire_plan_changelog_deletion(paimon_table *t, pm_snapshot *const *cls, size_t n, int threads,
                                      pm_deleter *data, pm_deleter *manifests, pm_deleter *lists,
                                      int64_t *protected_files, pm_err *e);

/* Branch deletion (pm_branches.c): what deleting branch `name` of t's
 * table frees. Kept: every snapshot, tag and long-lived changelog of main
 * and of every other branch; an unreadable file of any of them, or of a
 * snapshot or tag of the branch going away, refuses. Candidates: the live
 * files, changelog files and metadata files of the branch's snapshots and
 * tags, into data / manifests / lists as in tag deletion. */
int pm_expire_plan_branch_deletion(paimon_table *t, const char *name, int threads, pm_deleter *data,
                                   pm_deleter *manifests, pm_deleter *lists, int64_t *protected_files, pm_err *e);

#endif
