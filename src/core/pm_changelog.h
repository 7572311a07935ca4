/* Long-lived changelogs (decoupled changelog lifecycle): the files
 * snapshot expiration writes (Java ExpireSnapshotsImpl.commitChangelog,
 * ChangelogManager) and their own expiration (Java ExpireChangelogImpl +
 * ChangelogDeletion), deleting only what nothing retained needs
 * (pm_protect). No Lua here. */
#ifndef PM_CHANGELOG_H
#define PM_CHANGELOG_H

#include "pm_deleter.h"
#include "pm_table.h"

/* Java's Changelog JSON (new Changelog(snapshot).toJson()): the snapshot's
 * fields in Snapshot's layout; null fields left out and no logOffsets, as
 * Java 2.0 writes them. */
int pm_changelog_to_json(const pm_snapshot *s, pm_buf *out);

/* <branch_root>/changelog/<which> ("EARLIEST" / "LATEST"), as Java's
 * commitLongLivedChangelog{Earliest,Latest}Hint. */
int pm_changelog_hint_write(pm_fileio *io, const char *branch_root, const char *which, int64_t id, pm_err *e);

/* Write changelog/changelog-<id> for each of the n snapshots without
 * replacing (a file already there with the same bytes, from an
 * interrupted run, is accepted; other bytes: PAIMON_CONFLICT), then the
 * LATEST hint of changelog/. */
int pm_changelog_write_moved(paimon_table *t, pm_snapshot *const *v, size_t n, pm_err *e);

typedef struct pm_changelog_expire_opts {
    int retain_min;               /* <= 0: changelog.num-retained.min, else snapshot.num-retained.min */
    int retain_max;               /* <= 0: changelog.num-retained.max, else snapshot.num-retained.max */
    int has_older_than;
    int64_t older_than_ms;        /* else now - changelog.time-retained (else snapshot.time-retained) */
    int max_deletes;              /* <= 0: snapshot.expire.limit (Java's changelogMaxDeletes) */
    int threads;
    int dry_run;
    int64_t now_ms;               /* 0: the clock */
    pm_progress_fn progress;
    void *progress_ud;
} pm_changelog_expire_opts;

typedef struct pm_changelog_range {
    int64_t earliest_snapshot, latest_snapshot;     /* 0: no snapshot */
    int64_t earliest, latest;                       /* changelog ids; 0: none */
    int retain_min, retain_max, max_deletes;
    int64_t older_than_ms, now_ms;
    int64_t n_consumers, consumer_min;
    int64_t begin, end;                             /* [begin, end) expires */
    const char *capped_by;  /* "retain-min", "consumer", "expire-limit", "latest-changelog", "time-retained", "none" */
} pm_changelog_range;

typedef struct pm_changelog_expire_result {
    pm_clean_result clean;
    pm_changelog_range range;
    int64_t expired;              /* changelog files deleted (dry run: that would be) */
} pm_changelog_expire_result;

/* Java's ExpireChangelogImpl.expire range over changelog/ of t's branch,
 * then: plan (fail closed), check that no tag, branch or consumer changed
 * (PAIMON_CONFLICT), write the EARLIEST hint of changelog/ (the end
 * changelog, which stays), delete the changelog files ascending (a crash
 * leaves orphans, never a changelog naming deleted files), then their
 * data files, manifests and manifest lists.
 * Free with pm_clean_result_free(&r->clean). */
int pm_expire_changelogs(paimon_table *t, const pm_changelog_expire_opts *o, pm_changelog_expire_result *r,
                         pm_err *e);

#endif
