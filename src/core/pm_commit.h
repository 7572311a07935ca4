/* Commit: publish ADD/DELETE manifest entries as a new snapshot (Java
 * FileStoreCommitImpl, 2.0): conflict detection, manifest minor merge, base
 * and delta manifest lists, atomic no-replace snapshot creation with
 * retries, LATEST hint. See paimon-format.md §7. */
#ifndef PM_COMMIT_H
#define PM_COMMIT_H

#include "pm_common.h"
#include "pm_manifest.h"
#include "pm_table.h"

typedef struct pm_commit_opts {
    const char *commit_user;           /* required */
    int64_t identifier;                /* INT64_MAX for batch */
    const char *kind;                  /* "APPEND", "OVERWRITE", "COMPACT" */
    int max_retries;                   /* commit.max-retries (10) */
    int64_t min_retry_wait_ms;         /* commit.min-retry-wait (10 ms) */
    int64_t max_retry_wait_ms;         /* commit.max-retry-wait (10 s) */
    const char *codec;                 /* Avro codec of new manifests ("zstandard") */
    int level;                         /* codec level (1) */
    int64_t manifest_target_size;      /* manifest.target-file-size (8 MB) */
    int64_t full_compaction_threshold; /* manifest.full-compaction-threshold-size (16 MB) */
    int merge_min_count;               /* manifest.merge-min-count (30) */
    int merge_decode_only;             /* manifest.merge-optimize.enabled = false: merging decodes and
                                          encodes every entry (Java's legacy merger) instead of
                                          copying the Avro blocks of manifests it keeps whole */
    int64_t expect_latest;             /* > 0: commit only on top of this snapshot; any other
                                          latest is PAIMON_CONFLICT, never retried (a commit
                                          computed against that snapshot, e.g. rollback as latest) */
} pm_commit_opts;

/* Defaults, overridden by the table's options. commit_user stays NULL. */
void pm_commit_opts_from_table(const paimon_table *t, pm_commit_opts *o);

/* Commit the entries (ADD/DELETE ManifestEntry records, in chronological
 * order) as one new snapshot; *snapshot_id receives its id. Conflict
 * detection runs when an entry is a DELETE or kind != APPEND; a conflict
 * returns PAIMON_CONFLICT without retrying. Losing the race for the snapshot
 * id retries (up to max_retries, then PAIMON_CONFLICT). An uncertain
 * snapshot write (an error other than "exists", and the file is not ours) is
 * retried too: the retry first looks among the snapshots after the latest
 * the failed attempt saw for one with the same (commit_user, identifier,
 * kind) and then reports that one (a commit never happens twice). Files
 * written by a failed attempt are removed, except after an uncertain
 * snapshot write. New and merged manifests roll at manifest_target_size
 * (checked every 1000 entries, like Java's RollingFileWriter, and after
 * every Avro block a merge copies as it is, like Java's ManifestAvroWriter). */
int pm_commit(paimon_table *t, const pm_manifest_entry *entries, size_t n, const pm_commit_opts *o,
              int64_t *snapshot_id, pm_err *e);

/* Which ADD entries' files a snapshot from `from_id` on adds (its delta or
 * changelog manifests): found[i] = 1, else 0. Before deleting the files of
 * a commit that failed: a snapshot write with an unknown outcome may have
 * landed. Any unreadable snapshot, list or manifest of that range is an
 * error (nothing can be known to be unused); a snapshot that vanished
 * meanwhile (expired) is skipped. */
int pm_commit_find_added(paimon_table *t, int64_t from_id, const pm_manifest_entry *entries, size_t n,
                         uint8_t *found, pm_err *e);

/* pm_commit plus index-file changes (IndexManifestEntry ADD/DELETE records:
 * deletion vectors, HASH index, global indexes). Without index entries this
 * is pm_commit (the snapshot reuses the latest indexManifest). With them,
 * every attempt reads the latest snapshot's index manifest, combines it
 * with the changes like Java's IndexManifestFileHandler (paimon-format.md
 * §7.5: grouped by index type; DELETION_VECTORS of bucket-unaware tables
 * keyed by file name, sequentially, no data file with two DVs;
 * DELETION_VECTORS of bucketed tables and HASH keyed by (partition,
 * bucket, type), DELETEs first, then ADDs overwrite; other types keyed by
 * file name, DELETEs first, then ADDs checked for overlapping row ranges)
 * and writes the complete result (ADD entries only) as a new
 * manifest/index-manifest-<uuid>-<n>, named by the new snapshot; it is one
 * of the attempt's files (removed when the attempt fails or loses the
 * race). Conflicts (PAIMON_CONFLICT, not retried): an index DELETE that is
 * not in the latest index manifest (same type, file name, partition and
 * bucket), an ADD of a name-keyed index file already listed, a second DV
 * for a data file. An APPEND carrying DELETE entries (data or index) or
 * deletion-vector index files becomes OVERWRITE with conflict detection
 * (Java containsFileDeletionOrDeletionVectors). */
int pm_commit_with_index(paimon_table *t, const pm_manifest_entry *entries, size_t n,
                         const pm_index_entry *index_entries, size_t n_index, const pm_commit_opts *o,
                         int64_t *snapshot_id, pm_err *e);


/* Java filterCommitted: the newest snapshot committed by commit_user
 * (scanning back from the latest until a snapshot is missing); *identifier
 * = its commitIdentifier, or INT64_MIN if there is none. */
int pm_commit_last_identifier(paimon_table *t, const char *commit_user, int64_t *identifier, pm_err *e);

/* The same, plus *snapshot_id = that snapshot's id (0 if there is none):
 * what a retry reports as its landed commit. */
int pm_commit_last_of_user(paimon_table *t, const char *commit_user, int64_t *identifier, int64_t *snapshot_id,
                           pm_err *e);

#endif
