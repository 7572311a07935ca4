/* Manifest merge of a commit's base list (Java ManifestFileMerger): full
 * compaction when the changed manifests reach the threshold, else minor
 * compaction of consecutive small manifests. */
#include "pm_commit_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- manifest merge (ManifestFileMerger minor compaction) ----------------- */

static int for_each_entry(paimon_table *t, const pm_own_meta *v, size_t n,
                          int (*fn)(void *ctx, const pm_manifest_entry *m, pm_err *e), void *ctx, pm_err *e) {
    for (size_t i = 0; i < n; i++) {
        pm_manifest_reader *r;
        int rc = pm_table_open_manifest(t, v[i].m.file_name, PM_MANIFEST_FILE, &r, e);
        if (rc) return rc;
        const pm_manifest_entry *m;
        while ((rc = pm_manifest_next_entry(r, &m, e)) == PAIMON_OK)
            if ((rc = fn(ctx, m, e))) break;
        pm_manifest_close(r);
        if (rc != PAIMON_DONE) return rc;
    }
    return PAIMON_OK;
}

typedef struct merge_ctx {
    paimon_table *t;
    pm_idmap map;
    pm_buf key;
    int64_t seq;
    pm_mroll *mr;
} merge_ctx;

static int merge_pass1(void *p, const pm_manifest_entry *m, pm_err *e) {
    merge_ctx *c = p;
    if (pm_file_identifier(m, &c->key)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    long s = pm_idmap_find(&c->map, c->key.data, c->key.len);
    int64_t seq = c->seq++;
    if (m->kind == PM_FILE_ADD) {
        if (s >= 0) {
            pm_buf d = {0};
            pm_commit_describe_file(c->t, m, &d);
            int rc = pm_fail(e, PAIMON_CORRUPT, "%s: trying to add %s which is already added",
                             c->t->root, d.data ? (char *)d.data : "?");
            pm_buf_free(&d);
            return rc;
        }
    } else if (s >= 0) {
        pm_idmap_del(&c->map, c->key.data, c->key.len, s);
        return PAIMON_OK;
    }
    if (pm_idmap_put(&c->map, c->key.data, c->key.len, seq, m->kind)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

static int merge_pass2(void *p, const pm_manifest_entry *m, pm_err *e) {
    merge_ctx *c = p;
    if (pm_file_identifier(m, &c->key)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    long s = pm_idmap_find(&c->map, c->key.data, c->key.len);
    int64_t seq = c->seq++;
    if (s >= 0 && c->map.val[s] == seq) return pm_mroll_add(c->mr, m, e);
    return PAIMON_OK;
}

/* Append a copy of m to *out. */
static int keep_meta(pm_own_meta **out, size_t *n_out, size_t *cap, const pm_own_meta *m, pm_err *e) {
    pm_own_meta *slot;
    if (pm_own_metas_push(out, n_out, cap, &slot) || pm_own_meta_copy(slot, &m->m)) {
        if (*n_out && !(*out)[*n_out - 1].name) (*n_out)--;
        return pm_nomem(e);
    }
    return PAIMON_OK;
}

/* Counts the test suite reads: manifests whose blocks were copied as they
 * are (decode-free ones among them), and manifests a merge decoded and
 * encoded again. */
static int64_t blocks_copied_manifests, decoded_manifests, decode_free_manifests;
void pm_merge_copy_counts(int64_t *copied, int64_t *decoded) {
    *copied = blocks_copied_manifests;
    *decoded = decoded_manifests;
}
void pm_merge_decode_free_count(int64_t *decode_free) { *decode_free = decode_free_manifests; }

/* Copy the blocks of manifest f when they read as ours (else *copied = 0
 * and nothing happened); *n: its entries. decode_free: nothing can cancel
 * or drop an entry of f, so its list record may stand for its entries
 * (pm_mroll_copy_stored); else, or when the record cannot, every record
 * is walked for the output's stats. */
static int try_copy(paimon_table *t, pm_mroll *mr, const pm_own_meta *f, int refuse_deletes, int decode_free,
                    int *copied, int64_t *n, pm_err *e) {
    *copied = 0;
    if (mr->a->o->merge_decode_only) return PAIMON_OK;
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(t, f->m.file_name, PM_MANIFEST_FILE, &r, e);
    if (rc) return rc;
    if (decode_free && pm_manifest_blocks_copyable(r, mr->a->o->codec)) {
        int stored = 0;
        rc = pm_mroll_copy_stored(mr, r, &f->m, f->m.file_name, &stored, e);
        int64_t cnt;
        const uint8_t *raw;
        size_t len;
        if (rc || stored) {
            if (!rc) {
                *copied = 1;
                *n = f->m.num_added_files + f->m.num_deleted_files;
                __atomic_add_fetch(&blocks_copied_manifests, 1, __ATOMIC_RELAXED);
                __atomic_add_fetch(&decode_free_manifests, 1, __ATOMIC_RELAXED);
            }
            pm_manifest_close(r);
            return rc;
        }
        if (pm_manifest_block(r, &cnt, &raw, &len)) {   /* blocks passed: read it again to walk it */
            pm_manifest_close(r);
            if ((rc = pm_table_open_manifest(t, f->m.file_name, PM_MANIFEST_FILE, &r, e))) return rc;
        }
    }
    if (pm_manifest_blocks_copyable(r, mr->a->o->codec)) {
        *copied = 1;
        rc = pm_mroll_copy(mr, r, f->m.file_name, refuse_deletes, n, e);
        if (!rc) __atomic_add_fetch(&blocks_copied_manifests, 1, __ATOMIC_RELAXED);
    }
    pm_manifest_close(r);
    return rc;
}

/* Manifest i of a group covers entries [first[i], first[i + 1]) in the
 * order of pass 1; whole[i] = 1 when all of them survive the merge. */
static int mark_whole(const merge_ctx *c, const int64_t *first, size_t n, uint8_t *whole) {
    int64_t *left = malloc((n ? n : 1) * sizeof *left);
    if (!left) return PAIMON_NOMEM;
    for (size_t i = 0; i < n; i++) left[i] = first[i + 1] - first[i];
    for (size_t o = 0; o < pm_idmap_ordinals(&c->map); o++) {
        if (!c->map.live[o]) continue;
        size_t lo = 0, hi = n;          /* last i with first[i] <= val */
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (first[mid] <= c->map.val[o]) lo = mid; else hi = mid;
        }
        left[lo]--;
    }
    for (size_t i = 0; i < n; i++) whole[i] = first[i + 1] > first[i] && left[i] == 0;
    free(left);
    return PAIMON_OK;
}

/* Pass 2: the survivors in input order; a manifest all of whose entries
 * survive has its blocks copied when they read as ours (Java's
 * ManifestFileBlockMerger), the others are decoded and encoded again. */
static int merge_write(pm_attempt *a, merge_ctx *c, const pm_own_meta *g, size_t n, const int64_t *first,
                       const uint8_t *whole, pm_err *e) {
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        int copied = 0;
        int64_t got = 0;
        c->seq = first[i];
        if (whole[i] && (rc = try_copy(a->t, c->mr, &g[i], 0, 0, &copied, &got, e))) break;
        if (copied) {
            if (got != first[i + 1] - first[i])
                rc = pm_fail(e, PAIMON_CORRUPT, "%s: %lld entries, %lld when read before", g[i].m.file_name,
                             (long long)got, (long long)(first[i + 1] - first[i]));
            continue;
        }
        __atomic_add_fetch(&decoded_manifests, 1, __ATOMIC_RELAXED);
        rc = for_each_entry(a->t, &g[i], 1, merge_pass2, c, e);
        if (!rc && c->seq != first[i + 1])
            rc = pm_fail(e, PAIMON_CORRUPT, "%s: %lld entries, %lld when read before", g[i].m.file_name,
                         (long long)(c->seq - first[i]), (long long)(first[i + 1] - first[i]));
    }
    return rc;
}

static int add_counted_add(void *p, const pm_manifest_entry *m, pm_err *e) {
    pm_mroll *mr = p;
    if (m->kind != PM_FILE_ADD)
        return pm_fail(e, PAIMON_CORRUPT, "entry deletes %s, but its manifest list record counts no deleted files",
                       m->file.file_name);
    return pm_mroll_add(mr, m, e);
}

/* A group none of whose list records counts a deleted file: nothing can
 * cancel, every entry survives in input order, so pass 1 is skipped and
 * each manifest is copied decode-free where its record allows (walked or
 * decoded otherwise). A DELETE entry found on the way is refused: the
 * list said there was none. */
static int merge_adds_only(pm_attempt *a, const pm_own_meta *g, size_t n, pm_own_meta **out, size_t *n_out,
                           size_t *cap, pm_err *e) {
    pm_mroll r;
    pm_mroll_init(&r, a, out, n_out, cap);
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        int copied = 0;
        int64_t got = 0;
        if ((rc = try_copy(a->t, &r, &g[i], 1, 1, &copied, &got, e)) || copied) continue;
        __atomic_add_fetch(&decoded_manifests, 1, __ATOMIC_RELAXED);
        rc = for_each_entry(a->t, &g[i], 1, add_counted_add, &r, e);
        if (rc) pm_err_prefix(e, "%s", g[i].m.file_name);
    }
    if (!rc) rc = pm_mroll_finish(&r, e);
    else pm_mroll_abort(&r);
    return rc;
}

/* Merge a group of manifests into new file(s) appended to out. */
static int merge_group(pm_attempt *a, const pm_own_meta *g, size_t n, pm_own_meta **out, size_t *n_out, size_t *cap,
                       pm_err *e) {
    if (n == 1) return keep_meta(out, n_out, cap, &g[0], e);
    int any_deleted = 0;
    for (size_t i = 0; i < n; i++) any_deleted |= g[i].m.num_deleted_files > 0;
    if (!any_deleted && !a->o->merge_decode_only) return merge_adds_only(a, g, n, out, n_out, cap, e);
    merge_ctx c;
    memset(&c, 0, sizeof c);
    c.t = a->t;
    int64_t *first = malloc((n + 1) * sizeof *first);
    uint8_t *whole = malloc(n);
    int rc = first && whole ? PAIMON_OK : pm_nomem(e);
    for (size_t i = 0; i < n && !rc; i++) {
        first[i] = c.seq;
        rc = for_each_entry(a->t, &g[i], 1, merge_pass1, &c, e);
    }
    if (!rc) {
        first[n] = c.seq;
        if (mark_whole(&c, first, n, whole)) rc = pm_nomem(e);
    }
    if (!rc && c.map.n) {
        pm_mroll r;
        pm_mroll_init(&r, a, out, n_out, cap);
        c.mr = &r;
        rc = merge_write(a, &c, g, n, first, whole, e);
        if (!rc) rc = pm_mroll_finish(&r, e);
        else pm_mroll_abort(&r);
    }
    pm_idmap_free(&c.map);
    pm_buf_free(&c.key);
    free(first);
    free(whole);
    return rc;
}

static int merge_minor(pm_attempt *a, const pm_own_meta *in, size_t n, pm_own_meta **out, size_t *n_out, pm_err *e) {
    size_t cap = 0;
    *out = NULL;
    *n_out = 0;
    int rc = PAIMON_OK;
    size_t start = 0;
    int64_t total = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        total += in[i].m.file_size;
        if (total >= a->o->manifest_target_size) {
            rc = merge_group(a, in + start, i + 1 - start, out, n_out, &cap, e);
            start = i + 1;
            total = 0;
        }
    }
    if (!rc && start < n) {
        size_t rest = n - start;
        if ((int64_t)rest >= (int64_t)(a->o->merge_min_count > 0 ? a->o->merge_min_count : 1))
            rc = merge_group(a, in + start, rest, out, n_out, &cap, e);
        else
            for (size_t i = start; i < n && !rc; i++) rc = merge_group(a, in + i, 1, out, n_out, &cap, e);
    }
    if (rc) {
        pm_own_metas_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return rc;
}


/* ---- manifest merge: full compaction (ManifestFileMerger.tryFullCompaction) */

static int must_change(const pm_attempt *a, const pm_own_meta *m) {
    return m->m.num_deleted_files > 0 || m->m.file_size < a->o->manifest_target_size;
}

typedef struct full_ctx {
    paimon_table *t;
    pm_set *dels, *parts;
    pm_mbuild *pstats;          /* partition stats of the deleted files (no writer) */
    pm_mroll *mr;               /* output */
    pm_buf key;
    int require;
    /* the deleted files' partitions (mark_untouched) */
    int no_deletes;
    pm_part_span span;
} full_ctx;

static int full_collect_deletes(void *p, const pm_manifest_entry *m, pm_err *e) {
    full_ctx *c = p;
    if (m->kind != PM_FILE_DELETE) return PAIMON_OK;
    if (pm_file_identifier(m, &c->key) || pm_set_add(c->dels, c->key.data, c->key.len) < 0)
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int added = pm_set_add(c->parts, m->partition.ptr, m->partition.len);
    if (added < 0) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if (added) {
        int rc = pm_mbuild_partition(c->pstats, m, e);
        if (rc) return rc;
        c->pstats->n++;
    }
    return PAIMON_OK;
}

static int full_check(void *p, const pm_manifest_entry *m, pm_err *e) {
    full_ctx *c = p;
    if (m->kind == PM_FILE_DELETE) return PAIMON_OK;
    if (pm_file_identifier(m, &c->key)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if (pm_set_contains(c->dels, c->key.data, c->key.len)) {
        c->require = 1;
        return PAIMON_DONE;   /* stop early */
    }
    return PAIMON_OK;
}

static int full_write(void *p, const pm_manifest_entry *m, pm_err *e) {
    full_ctx *c = p;
    if (m->kind == PM_FILE_DELETE) return PAIMON_OK;
    if (pm_file_identifier(m, &c->key)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if (pm_set_contains(c->dels, c->key.data, c->key.len)) return PAIMON_OK;
    return pm_mroll_add(c->mr, m, e);
}

/* Java tryFullCompaction runs once the manifests that must change (with
 * deletes, or under the target size) add up to the threshold. */
static int full_compaction_due(const pm_attempt *a, const pm_own_meta *in, size_t n) {
    int64_t delta_size = 0;
    for (size_t i = 0; i < n; i++)
        if (must_change(a, &in[i])) delta_size += in[i].m.file_size;
    int64_t trigger = a->o->full_compaction_threshold > 0 ? a->o->full_compaction_threshold : 1;
    return delta_size >= trigger;
}

/* The deleted files' identifiers and their partitions' stats (c->pstats,
 * a builder without writer). */
static int collect_deleted(full_ctx *c, pm_attempt *a, const pm_own_meta *in, size_t n, pm_err *e) {
    int rc = pm_mbuild_open(c->pstats, a, e);
    if (rc) return rc;
    pm_avro_writer_abort(c->pstats->w);
    c->pstats->w = NULL;
    for (size_t i = 0; i < n && !rc; i++)
        if (in[i].m.num_deleted_files > 0) rc = for_each_entry(c->t, &in[i], 1, full_collect_deletes, c, e);
    return rc;
}

/* keep[i] = 1 for the manifests left untouched up front (nothing to change
 * and no deleted partition in them); *to_merge counts the others. */
static int mark_untouched(full_ctx *c, pm_attempt *a, const pm_own_meta *in, size_t n, uint8_t *keep,
                          size_t *to_merge, pm_err *e) {
    c->no_deletes = pm_set_size(c->dels) == 0;
    int rc;
    if (!c->no_deletes && (rc = pm_part_span_of_builder(c->pstats, &c->span, e))) return rc;
    *to_merge = 0;
    for (size_t i = 0; i < n; i++) {
        if (!must_change(a, &in[i]) && (c->no_deletes || !pm_part_span_may_hold(c->t, &c->span, &in[i].m)))
            keep[i] = 1;
        else
            (*to_merge)++;
    }
    return PAIMON_OK;
}

/* One manifest that may change: rewritten without the deleted files if it
 * must change or holds one of them, else kept as it is. Rewritten with
 * nothing to drop (no DELETE entry, none of the deleted files), its blocks
 * are copied when they read as ours; decode-free when its list record
 * alone shows that: no DELETE counted and no deleted file (none at all, or
 * its partition stats exclude every deleted partition). */
static int rewrite_or_keep(full_ctx *c, pm_attempt *a, const pm_own_meta *f, pm_own_meta **out, size_t *n_out,
                           size_t *cap, pm_err *e) {
    int rc = PAIMON_OK;
    int must = must_change(a, f), adds_only = f->m.num_deleted_files == 0;
    int clear = adds_only && (c->no_deletes || !pm_part_span_may_hold(c->t, &c->span, &f->m));
    c->require = 0;   /* set by full_check: f holds a deleted file */
    if (!clear && (!must || (adds_only && pm_set_size(c->dels) > 0))) {
        rc = for_each_entry(c->t, f, 1, full_check, c, e);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    if (rc) return rc;
    if (!must && !c->require) return keep_meta(out, n_out, cap, f, e);
    if (adds_only && !c->require) {
        int copied = 0;
        int64_t got = 0;
        rc = try_copy(c->t, c->mr, f, 1, clear, &copied, &got, e);
        if (rc || copied) return rc;
    }
    __atomic_add_fetch(&decoded_manifests, 1, __ATOMIC_RELAXED);
    return for_each_entry(c->t, f, 1, full_write, c, e);
}

/* Kept manifests first, then the rewritten ones (Java's order). */
static int rewrite_changed(full_ctx *c, pm_attempt *a, const pm_own_meta *in, size_t n, const uint8_t *keep,
                           pm_own_meta **out, size_t *n_out, pm_err *e) {
    size_t cap = 0;
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n && !rc; i++)
        if (keep[i]) rc = keep_meta(out, n_out, &cap, &in[i], e);
    if (rc) return rc;
    pm_own_meta *rolled = NULL;
    size_t n_rolled = 0, cap_rolled = 0;
    pm_mroll roll;
    pm_mroll_init(&roll, a, &rolled, &n_rolled, &cap_rolled);
    c->mr = &roll;
    for (size_t i = 0; i < n && !rc; i++)
        if (!keep[i]) rc = rewrite_or_keep(c, a, &in[i], out, n_out, &cap, e);
    if (rc) pm_mroll_abort(&roll);
    else rc = pm_mroll_finish(&roll, e);
    for (size_t i = 0; i < n_rolled && !rc; i++) {
        pm_own_meta *slot;
        if (pm_own_metas_push(out, n_out, &cap, &slot)) { rc = pm_nomem(e); break; }
        *slot = rolled[i];
        memset(&rolled[i], 0, sizeof rolled[i]);
    }
    pm_own_metas_free(rolled, n_rolled);
    return rc;
}

/* Sets *done = 1 and fills *out when a full compaction happened. */
static int merge_full(pm_attempt *a, const pm_own_meta *in, size_t n, pm_own_meta **out, size_t *n_out, int *done,
                      pm_err *e) {
    *done = 0;
    if (!full_compaction_due(a, in, n)) return PAIMON_OK;
    full_ctx c;
    memset(&c, 0, sizeof c);
    c.t = a->t;
    pm_mbuild pstats;
    memset(&pstats, 0, sizeof pstats);
    c.pstats = &pstats;
    uint8_t *keep = calloc(n ? n : 1, 1);     /* 1: left untouched up front */
    c.dels = pm_set_new();
    c.parts = pm_set_new();
    size_t to_merge = 0;
    int rc = keep && c.dels && c.parts ? PAIMON_OK : pm_nomem(e);
    if (!rc) rc = collect_deleted(&c, a, in, n, e);
    if (!rc) rc = mark_untouched(&c, a, in, n, keep, &to_merge, e);
    /* one manifest or none to merge: fall back to minor compaction */
    if (!rc && to_merge > 1 && !(rc = rewrite_changed(&c, a, in, n, keep, out, n_out, e))) *done = 1;
    pm_mbuild_free(&pstats);
    pm_set_free(c.dels);
    pm_set_free(c.parts);
    pm_buf_free(&c.key);
    free(keep);
    if (rc || !*done) {
        pm_own_metas_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return rc;
}

/* ManifestFileMerger.merge: full compaction if triggered, else minor. */
int pm_merge_manifests(pm_attempt *a, const pm_own_meta *in, size_t n, pm_own_meta **out, size_t *n_out, pm_err *e) {
    *out = NULL;
    *n_out = 0;
    int done = 0;
    int rc = merge_full(a, in, n, out, n_out, &done, e);
    if (rc || done) return rc;
    return merge_minor(a, in, n, out, n_out, e);
}

