/* Rollback (Java FileStoreTable.rollbackTo + RollbackHelper.cleanLargerThan,
 * the rollback_to / rollback_to_timestamp procedures) and its
 * non-destructive variant (rollback_to_as_latest,
 * FileStoreCommitImpl.rollbackToAsLatest). The target is a snapshot id, a
 * tag, or a timestamp (the latest snapshot at or before it, Java's
 * SnapshotManager.earlierOrEqualTimeMills).
 *
 * Destructive rollback: everything is read and planned first. By default
 * only metadata goes, as Java since 1.2.0 (RollbackHelper.cleanLargerThan,
 * apache/paimon#5712): the snapshot, tag and long-lived changelog files
 * above the target; their data files, manifests, manifest lists, index
 * files and statistics stay for orphan cleaning (data cannot come back).
 * With purge_files (the old behaviour), those files are deleted too, but
 * only when nothing retained (snapshots up to the target, the tags and
 * changelogs that stay, every other branch) needs them (pm_protect, the
 * walk expiration uses). The rule against racing writers: right before
 * the first deletion LATEST must still be the snapshot we planned from and
 * tags/branches unchanged; snapshot files go newest first, each after
 * checking that no snapshot above the planned latest appeared; after the
 * last one no snapshot above the target may exist. Any of these failing
 * is PAIMON_CONFLICT before a single data file or manifest is deleted, so
 * the table stays readable (at worst with snapshots above the target gone
 * and the writer's snapshot on top). Only then: LATEST hint, tag files,
 * changelog files, data files, manifests, manifest lists. A crash anywhere
 * leaves a readable table; files a crash left behind are orphans for
 * orphan cleaning. A tag whose snapshot expired is first written back as
 * snapshot-<id> (no-replace), then the others go and EARLIEST moves to it.
 *
 * As latest: a new snapshot latest+1 (OVERWRITE, through pm_commit with
 * expect_latest: a writer that commits first makes it PAIMON_CONFLICT)
 * whose live files and index files are the target's; nothing is deleted.
 * A target given by id or timestamp is first tagged
 * rollback-to-as-latest-<id>-<uuid> (no time retained), as Java's
 * RollbackToAsLatestProcedure does; the tag is removed again only when the
 * commit conflicted and no snapshot of ours landed. */
#ifndef PM_ROLLBACK_H
#define PM_ROLLBACK_H

#include "pm_deleter.h"
#include "pm_table.h"

typedef struct pm_rollback_opts {
    int64_t to_snapshot;          /* > 0: this snapshot id */
    const char *to_tag;           /* else this tag */
    int has_timestamp;            /* else the latest snapshot with timeMillis <= to_timestamp_ms */
    int64_t to_timestamp_ms;
    int has_watermark;            /* else the snapshot Java's earlierOrEqualWatermark finds */
    int64_t to_watermark;
    int as_latest;
    int purge_files;              /* destructive: also delete the files only the removed roots used */
    int dry_run;
    int threads;
    const char *commit_user;      /* as latest; NULL: "rollback-to-as-latest-<uuid>" */
    pm_progress_fn progress;
    void *progress_ud;
} pm_rollback_opts;

typedef struct pm_rollback_result {
    pm_clean_result clean;        /* purge_files: data files, manifests, lists (a plan in a dry run) */
    int64_t target;               /* the snapshot id rolled back to */
    int64_t previous_latest;
    int64_t new_latest;           /* target, or the as-latest snapshot (dry run: what it would be) */
    int recreated;                /* the tag's expired snapshot was (would be) written back */
    int64_t *snapshots; size_t n_snapshots;       /* snapshot files removed, newest first */
    char **tags; size_t n_tags;                   /* tag files removed */
    int64_t *changelogs; size_t n_changelogs;     /* long-lived changelog files removed */
    int64_t unreadable;           /* manifests of removed snapshots that could not be read: their files stay */
    int64_t consumers_ahead;      /* consumers whose nextSnapshot is above target + 1 (left as Java does) */
    int64_t added, deleted;       /* as latest: data-file entries of the new snapshot */
    int64_t index_added, index_deleted;
    char *protection_tag;         /* as latest to a snapshot id or a timestamp: the tag made on the target */
} pm_rollback_result;

void pm_rollback_result_free(pm_rollback_result *r);

int pm_rollback(paimon_table *t, const pm_rollback_opts *o, pm_rollback_result *r, pm_err *e);

/* Purge: empty the whole table, keeping its schemas (Java 1.2+'s
 * FileStoreTable.purgeFiles, the purge_files procedure, which drops every
 * branch, tag and consumer, truncates, deletes changelog/, expires all
 * snapshots but the truncating one and cleans orphans with the cut-off
 * now). Here as one plan, made first and listed by a dry run: every file
 * of branch/, tag/, consumer/, changelog/, the snapshot files, and every
 * file of manifest/, index/, statistics/ and the bucket directories.
 * Then: a new snapshot latest+1 (OVERWRITE, through pm_commit with
 * expect_latest: a writer that commits first makes it PAIMON_CONFLICT,
 * nothing deleted) deletes every live file and index file, its base
 * manifests rewritten in full so that it names no old manifest; the tag,
 * branch and consumer names must be unchanged (else PAIMON_CONFLICT);
 * EARLIEST moves to it; the planned metadata files go, then every planned
 * file that nothing left (the new snapshot) needs, by pm_protect. What the
 * new snapshot keeps naming stays (the latest's statistics file, carried
 * as Java's commit carries it; its index manifest when it had no index
 * file): left out of the plan. Only main: every branch goes. Nothing
 * outside the table directory. */
typedef struct pm_purge_opts {
    int threads;
    int dry_run;
    const char *commit_user;      /* NULL: "purge-files-<uuid>" */
    pm_progress_fn progress;
    void *progress_ud;
} pm_purge_opts;

typedef struct pm_purge_result {
    pm_clean_result clean;        /* every file deleted (a plan in a dry run), roots as "snapshot" */
    int64_t previous_latest;      /* 0: the table had no snapshot */
    int64_t new_latest;           /* the truncating snapshot (dry run: what it would be); 0: none */
    int64_t truncated;            /* data-file entries it deletes */
    int64_t index_truncated;
    pm_strv branches, tags, consumers;
    size_t n_snapshots, n_changelogs;   /* snapshot and long-lived changelog files removed */
} pm_purge_result;

void pm_purge_result_free(pm_purge_result *r);
int pm_purge_files(paimon_table *t, const pm_purge_opts *o, pm_purge_result *r, pm_err *e);

#endif
