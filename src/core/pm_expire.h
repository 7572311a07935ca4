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

/* Java's ExpireConfig.isChangelogDecoupled by t's options: 1 (why says
 * which option), 0, or a negated error code (an unparsable option). */
int pm_changelog_decoupled(const paimon_table *t, char *why, size_t wl, pm_err *e);

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

#endif
