/* Internal to the commit modules: the attempt and the files it writes,
 * owned manifest metas, the manifest builder and rolling writer
 * (pm_manifest_rolling.c), the manifest merger (pm_manifest_merge.c),
 * conflict detection and the identifier map (pm_commit_conflict.c), the
 * index-manifest combine (pm_commit_index.c). pm_commit.c runs the
 * protocol on top of them. */
#ifndef PM_COMMIT_INTERNAL_H
#define PM_COMMIT_INTERNAL_H

#include "pm_avro.h"
#include "pm_commit.h"
#include "pm_set.h"

#define PM_IX_DV "DELETION_VECTORS"

/* ---- one commit attempt ---------------------------------------------------- */

/* The outcome of one commit attempt: the one place where the protocol is
 * three-valued (issue 22). Only PM_ATTEMPT_FAILED, proven that nothing of
 * the attempt is visible (it failed before its snapshot write, or the
 * snapshot id holds another writer's readable snapshot, or ours was taken
 * back), lets the attempt delete the files it wrote. Anything not proven
 * is PM_ATTEMPT_UNCERTAIN: a snapshot of ours may exist, and every file it
 * may reference stays. */
typedef enum pm_attempt_outcome {
    PM_ATTEMPT_FAILED = 0,
    PM_ATTEMPT_COMMITTED,
    PM_ATTEMPT_UNCERTAIN
} pm_attempt_outcome;

typedef struct pm_attempt {
    paimon_table *t;
    const pm_commit_opts *o;
    char uuid[37];
    int n_manifest, n_list, n_index;
    pm_strv written;                   /* full paths of the files it wrote */
    /* Set while an uncertain attempt is unresolved (its snapshot may or may
     * not have been created): later attempts first look for it among the
     * snapshots after `scan_from` (Java tryCommitOnce, retryResult); it is
     * resolved as failed once every id up to `uncertain_top` reads as
     * another writer's snapshot. uncertain_id: the snapshot id of the last
     * uncertain write (for the message). */
    int uncertain;
    int64_t scan_from, uncertain_top, uncertain_id;
    int write_hint;                    /* success: write LATEST */
} pm_attempt;

enum { PM_MF_MANIFEST = 0, PM_MF_LIST = 1, PM_MF_INDEX = 2 };

/* Write a new file in manifest/ named <prefix>-<uuid>-<n> (prefix by kind:
 * manifest, manifest-list, index-manifest), recorded as the attempt's;
 * *name malloc'd. */
int pm_attempt_write_file(pm_attempt *a, int kind, const pm_buf *bytes, char **name, pm_err *e);

/* ---- owned ManifestFileMeta (pm_manifest_rolling.c) ------------------------ */

typedef struct pm_own_meta {
    pm_manifest_meta m;   /* pointers into the fields below */
    char *name;
    pm_buf pmin, pmax;
    int64_t *nc;
    uint8_t *ncn;
} pm_own_meta;

void pm_own_meta_free(pm_own_meta *o);
void pm_own_metas_free(pm_own_meta *v, size_t n);
/* Point m's borrowed fields at the owned storage. */
void pm_own_meta_fix(pm_own_meta *o);
int pm_own_meta_copy(pm_own_meta *o, const pm_manifest_meta *m);      /* PAIMON_OK / PAIMON_NOMEM */
/* A zeroed new element at the end of *v (grown as needed): *slot. */
int pm_own_metas_push(pm_own_meta **v, size_t *n, size_t *cap, pm_own_meta **slot);
/* Append a copy of every ManifestFileMeta of manifest list `list`. */
int pm_own_metas_read(paimon_table *t, const char *list, pm_own_meta **v, size_t *n, size_t *cap, pm_err *e);

/* Order of two partition values of type ty (stats min/max). */
int pm_stats_cmp_datum(const pm_type *ty, const pm_datum *a, const pm_datum *b);

/* ---- manifest file builder and rolling writer (pm_manifest_rolling.c) ------ */

typedef struct pm_mbuild {
    pm_attempt *a;
    pm_avro_writer *w;
    size_t n;
    int64_t added, deleted, schema_id;
    int32_t min_b, max_b, min_l, max_l;
    int row_ok;
    int64_t min_row, max_row;
    size_t np;
    pm_buf pmin, pmax, lastp;
    int lastp_valid;
    int64_t *nulls;
    uint8_t *last_null;
    pm_datum *vals, *mins, *maxs;
} pm_mbuild;

int pm_mbuild_open(pm_mbuild *b, pm_attempt *a, pm_err *e);
void pm_mbuild_free(pm_mbuild *b);
/* Fold an entry's partition into the builder's partition stats. */
int pm_mbuild_partition(pm_mbuild *b, const pm_manifest_entry *m, pm_err *e);

typedef struct pm_mroll {
    pm_attempt *a;
    pm_mbuild mb;
    int open;
    int64_t records;
    pm_own_meta **out;       /* finished files are appended here */
    size_t *n_out, *cap;
} pm_mroll;

void pm_mroll_init(pm_mroll *r, pm_attempt *a, pm_own_meta **out, size_t *n_out, size_t *cap);
/* Add an entry; rolls to a new file at manifest.target-file-size. */
int pm_mroll_add(pm_mroll *r, const pm_manifest_entry *m, pm_err *e);
/* Add every entry of manifest `in` (opened, nothing read yet) by copying
 * its blocks as they are: each block is decoded with every check first and
 * its entries fold into the file's stats exactly as pm_mroll_add would;
 * after each block the size is checked (Java's rule for copied blocks).
 * Only for a file pm_manifest_blocks_copyable accepts with the commit's
 * codec. refuse_deletes: a DELETE entry is PAIMON_CORRUPT (the caller
 * copies on the list's word that there is none). *n_entries: entries read. */
int pm_mroll_copy(pm_mroll *r, pm_manifest_reader *in, const char *display, int refuse_deletes, int64_t *n_entries,
                  pm_err *e);
/* Copy manifest `in` (opened, nothing read yet) block by block without
 * decoding a record: `meta`, its manifest list record, stands for its
 * entries in the file's stats (the same values pm_mroll_add would fold).
 * Each block's framing is checked (pm_manifest_next_stored) and the blocks'
 * record counts must add up to the record's added + deleted files, else
 * PAIMON_CORRUPT naming the manifest, nothing copied. *copied = 0 with
 * nothing copied (the caller walks the manifest instead) when the record's
 * stats have a shape we do not fold, or the file would roll to a new one
 * inside this manifest. The caller vouches for the DELETE count. */
int pm_mroll_copy_stored(pm_mroll *r, pm_manifest_reader *in, const pm_manifest_meta *meta, const char *display,
                         int *copied, pm_err *e);
int pm_mroll_finish(pm_mroll *r, pm_err *e);
void pm_mroll_abort(pm_mroll *r);

/* Write a manifest list with the given records. */
int pm_write_manifest_list(pm_attempt *a, const pm_own_meta *v, size_t n, char **name, int64_t *size, pm_err *e);

/* ---- identifier map and conflicts (pm_commit_conflict.c) ------------------- */

/* Byte-string keys -> (val, kind), a pm_set with side arrays by ordinal.
 * Zero-initialise; entries are ordinals o < pm_idmap_ordinals(m) with
 * live[o]. */
typedef struct pm_idmap {
    pm_set *keys;         /* NULL until the first put */
    int64_t *val;         /* entry index / sequence number of the put */
    int *kind;            /* PM_FILE_ADD / PM_FILE_DELETE (or the caller's mark) */
    uint8_t *live;
    size_t cap;           /* room in the side arrays */
    size_t n;             /* live keys */
} pm_idmap;

/* Ordinal of a live key, or -1. */
long pm_idmap_find(const pm_idmap *m, const void *key, size_t len);
/* Insert a key known to be absent. 0 or -1 (OOM). */
int pm_idmap_put(pm_idmap *m, const void *key, size_t len, int64_t val, int kind);
/* Remove the key found at ordinal ord. */
void pm_idmap_del(pm_idmap *m, const void *key, size_t len, long ord);
size_t pm_idmap_ordinals(const pm_idmap *m);
void pm_idmap_free(pm_idmap *m);

/* "file X in partition P bucket B" into out (NUL-terminated). */
void pm_commit_describe_file(paimon_table *t, const pm_manifest_entry *m, pm_buf *out);

/* Per partition field over a set of partitions: whether a null and
 * whether a value occur, and the values' min/max (pointing into bytes the
 * caller keeps). usable = 0: any manifest may hold one of them
 * (unpartitioned, too many fields, undecodable). */
#define PM_SPAN_MAX_FIELDS 16
typedef struct pm_part_span {
    int usable;
    uint8_t has_null[PM_SPAN_MAX_FIELDS], has_value[PM_SPAN_MAX_FIELDS];
    pm_datum min[PM_SPAN_MAX_FIELDS], max[PM_SPAN_MAX_FIELDS];
} pm_part_span;
/* The span of the entries' partitions. */
void pm_part_span_of_entries(paimon_table *t, const pm_manifest_entry *ents, size_t n, pm_part_span *sp);
/* The span of the partitions a stats-only builder folded (pm_mbuild_partition). */
int pm_part_span_of_builder(const pm_mbuild *b, pm_part_span *sp, pm_err *e);
/* 0 only when manifest m's partition stats rule out every partition of the span. */
int pm_part_span_may_hold(paimon_table *t, const pm_part_span *sp, const pm_manifest_meta *m);

/* Java ConflictDetection of the entries against the latest snapshot
 * (NULL: none), whose base + delta manifests are metas[0..n_metas) (read
 * already); PAIMON_CONFLICT names the first offending file. */
int pm_check_conflicts(paimon_table *t, const pm_snapshot *latest, const pm_own_meta *metas, size_t n_metas,
                       const pm_manifest_entry *ents, size_t n, int overwrite, pm_err *e);
/* Manifests read by conflict checks so far in this process (tests). */
int64_t pm_conflict_manifests_read(void);
/* Conflict checks that took the exact scan (mixed total buckets; tests). */
int64_t pm_conflict_exact_scans(void);

/* ---- manifest merge (pm_manifest_merge.c) ---------------------------------- */

/* ManifestFileMerger.merge: full compaction if triggered, else minor. */
int pm_merge_manifests(pm_attempt *a, const pm_own_meta *in, size_t n, pm_own_meta **out, size_t *n_out, pm_err *e);
/* Since the process started: manifests merged by copying their blocks,
 * and manifests merged by decoding and encoding their entries (tests). */
void pm_merge_copy_counts(int64_t *copied, int64_t *decoded);
/* Since the process started: manifests copied decode-free, on their
 * manifest list record's word (counted among the copied ones too). */
void pm_merge_decode_free_count(int64_t *decode_free);

/* ---- index manifest (pm_commit_index.c) ------------------------------------ */

/* The combined index file set: previous entries (arena copies) first, in
 * file order, then this commit's ADDs; alive[i] = 0 once removed. */
typedef struct pm_ixset {
    const pm_index_entry **v;
    uint8_t *alive;
    size_t n, cap, n_prev;
} pm_ixset;

void pm_ixset_free(pm_ixset *s);
/* Previous index manifest + changes -> out (see pm_commit_with_index). */
int pm_combine_index(paimon_table *t, const pm_snapshot *latest, const pm_index_entry *ix, size_t n_ix,
                     pm_arena *arena, pm_ixset *out, pm_err *e);
/* Write the combined set as a new index manifest of this attempt. */
int pm_write_index_manifest(pm_attempt *a, const pm_ixset *s, char **name, pm_err *e);

#endif
