/* Orphan file cleaning (Java OrphanFilesClean / LocalOrphanFilesClean;
 * paimon-format.md §8.5) with Java's safety rules: only Paimon's own
 * directories and file-name patterns, candidates listed before the used set
 * is read (their ages are looked up afterwards, only for files nobody
 * uses), matching by file name, a cut-off that is not in the future, and
 * abort when the used set cannot be built completely (any unreadable
 * snapshot, tag, changelog or manifest list of any branch, any unreadable
 * manifest it reads) or is empty while data files exist. Manifests are read
 * in two rounds: those of each branch's latest snapshot and of the tags
 * (and every index manifest) first; the ones only older snapshots name
 * only if some listed file older than the cut-off is still not known to be
 * in use (otherwise every file is used or too young to delete: no manifest
 * could change what is deleted, so nothing it could protect is deleted
 * unread), or the first round names no data file while data files exist,
 * or one of them is missing from the listing (its read would fail). With at
 * most a few files still unknown, the second round looks names up only in
 * the blocks whose bytes contain one of theirs (no other block can name
 * them); the other blocks are still walked with every check. A long-lived
 * changelog's base / delta manifest list and index manifest are read only
 * if they exist (Java deletes them when it moves a snapshot to changelog/);
 * its changelog manifest list must be readable. The cut-off is checked
 * against the real clock too. */
#ifndef PM_ORPHAN_H
#define PM_ORPHAN_H

#include "pm_deleter.h"
#include "pm_table.h"

/* The youngest cut-off allowed without allow_young_cutoff: files of a
 * commit in flight (written, not yet in a snapshot) are protected only by
 * their age, and a commit under contention was measured at 12.6 s; an
 * hour leaves a wide margin (docs/maintenance.md). */
#define PM_ORPHAN_CUTOFF_FLOOR_MS 3600000LL

typedef struct pm_orphan_opts {
    int has_older_than;
    int64_t older_than_ms;        /* cut-off (epoch ms); default now - 1 day; must not be in the future,
                                     nor less than PM_ORPHAN_CUTOFF_FLOOR_MS before now */
    int allow_young_cutoff;       /* let a cut-off younger than the floor through (recorded in the result) */
    int threads;                  /* listing / reading / deleting parallelism */
    int dry_run;
    int64_t now_ms;               /* 0: the clock */
    int64_t manifest_part_bytes;  /* a manifest gets one reading task per this many bytes, at most
                                     one per thread (local FileIO only); 0: 64 KiB */
    pm_progress_fn progress;
    void *progress_ud;
} pm_orphan_opts;

typedef struct pm_orphan_result {
    pm_clean_result clean;
    int64_t older_than_ms;
    int64_t cutoff_floor_ms;      /* PM_ORPHAN_CUTOFF_FLOOR_MS */
    int floor_overridden;         /* the cut-off was younger than the floor (allow_young_cutoff) */
    int64_t listed;               /* Paimon files listed */
    int64_t used;                 /* listed files whose name is known to be in use (a young file only
                                     skipped manifests name counts as a candidate, kept as recent) */
    int64_t candidates;           /* listed files not known to be in use (then checked for age) */
    int64_t recent;               /* candidates kept: not older than the cut-off, gone, or a
                                     directory the listing could not tell from a file */
    int64_t manifests_read;       /* data manifests read (index manifests are always read) */
    int64_t manifests_skipped;    /* named only by older snapshots, not needed: every listed
                                     file was known to be in use or too young to delete */
} pm_orphan_result;

/* Clean the whole table directory of t (every branch). Free with
 * pm_clean_result_free(&res->clean). */
int pm_remove_orphan_files(paimon_table *t, const pm_orphan_opts *o, pm_orphan_result *res, pm_err *e);

#endif
