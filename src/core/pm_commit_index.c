/* Index manifest of a commit: the latest index manifest combined with the
 * commit's index-file changes (Java IndexManifestFileHandler,
 * paimon-format.md §7.5). */
#include "pm_commit_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- index manifest (IndexManifestFileHandler, paimon-format.md §7.5) ------ */

#define IX_HASH "HASH"

/* Java BucketMode.BUCKET_UNAWARE: no primary key and bucket = -1. */
static int bucket_unaware(const paimon_table *t) {
    if (!t->schema || t->schema->n_primary_keys) return 0;
    const char *b = pm_schema_option_or_default(t->schema, "bucket");
    return !b || atoi(b) == -1;
}

/* 1: entries of this index type are keyed by file name (GlobalCombiner,
 * GlobalIndexCombiner); 0: by (partition, bucket, type) (BucketedCombiner). */
static int ix_by_name(int unaware, const char *type) {
    if (!strcmp(type, PM_IX_DV)) return unaware;
    return strcmp(type, IX_HASH) != 0;
}

/* Combine key of an entry (type first: the groups never mix). */
static int ix_key(const pm_index_entry *x, int by_name, pm_buf *k) {
    k->len = 0;
    int rc = pm_buf_append(k, x->index_type, strlen(x->index_type) + 1);
    if (by_name) return rc | pm_buf_append(k, x->file_name, strlen(x->file_name));
    uint8_t b[4] = {(uint8_t)((uint32_t)x->bucket >> 24), (uint8_t)((uint32_t)x->bucket >> 16),
                    (uint8_t)((uint32_t)x->bucket >> 8), (uint8_t)x->bucket};
    rc |= pm_buf_append(k, b, 4);
    return rc | pm_buf_append(k, x->partition.ptr, x->partition.len);
}

/* Exact identity (type, file name, bucket, partition): what a DELETE must match. */
static int ix_exact(const pm_index_entry *x, pm_buf *k) {
    k->len = 0;
    int rc = pm_buf_append(k, x->index_type, strlen(x->index_type) + 1);
    rc |= pm_buf_append(k, x->file_name, strlen(x->file_name) + 1);
    uint8_t b[4] = {(uint8_t)((uint32_t)x->bucket >> 24), (uint8_t)((uint32_t)x->bucket >> 16),
                    (uint8_t)((uint32_t)x->bucket >> 8), (uint8_t)x->bucket};
    rc |= pm_buf_append(k, b, 4);
    return rc | pm_buf_append(k, x->partition.ptr, x->partition.len);
}

/* "TYPE index file X in partition P bucket B" (NUL-terminated in out). */
static void describe_index(paimon_table *t, const pm_index_entry *x, pm_buf *out) {
    pm_buf p = {0};
    pm_err e2;
    out->len = 0;
    if (t->n_part == 0) pm_buf_printf(&p, "(unpartitioned)");
    else if (pm_table_partition_path(t, x->partition, &p, &e2) == PAIMON_OK && p.len && p.data[p.len - 1] == '/')
        p.len--;
    pm_buf_cstr(&p);
    pm_buf_printf(out, "%s index file %s in partition %s bucket %d", x->index_type, x->file_name,
                  p.data ? (const char *)p.data : "?", (int)x->bucket);
    pm_buf_cstr(out);
    pm_buf_free(&p);
}

static int ix_conflict(paimon_table *t, const pm_index_entry *x, const pm_snapshot *latest, const char *what,
                       pm_err *e) {
    pm_buf d = {0};
    describe_index(t, x, &d);
    int rc;
    if (latest && latest->index_manifest)
        rc = pm_fail(e, PAIMON_CONFLICT, "commit conflict in %s: %s %s (index manifest %s of snapshot %lld)",
                     t->root, d.data ? (char *)d.data : "?", what, latest->index_manifest, (long long)latest->id);
    else if (latest)
        rc = pm_fail(e, PAIMON_CONFLICT, "commit conflict in %s: %s %s (snapshot %lld has no index manifest)",
                     t->root, d.data ? (char *)d.data : "?", what, (long long)latest->id);
    else
        rc = pm_fail(e, PAIMON_CONFLICT, "commit conflict in %s: %s %s (the table has no snapshot)", t->root,
                     d.data ? (char *)d.data : "?", what);
    pm_buf_free(&d);
    return rc;
}

void pm_ixset_free(pm_ixset *s) {
    free(s->v);
    free(s->alive);
    memset(s, 0, sizeof *s);
}

static int ixset_push(pm_ixset *s, const pm_index_entry *x) {
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 32;
        const pm_index_entry **nv = realloc(s->v, nc * sizeof *nv);
        if (!nv) return -1;
        s->v = nv;
        uint8_t *na = realloc(s->alive, nc);
        if (!na) return -1;
        s->alive = na;
        s->cap = nc;
    }
    s->v[s->n] = x;
    s->alive[s->n] = 1;
    s->n++;
    return 0;
}

/* Java GlobalIndexCombiner.validateRetainedIndexFiles: an added global
 * index file must not overlap a retained one of the same type and field. */
static int ix_global_overlap(const pm_index_entry *r, const pm_index_entry *x) {
    if (!r->has_global_index || !x->has_global_index) return 0;
    const struct pm_global_index *a = &r->global_index, *b = &x->global_index;
    if (a->index_field_id != b->index_field_id) return 0;
    int same_extra = a->has_extra_field_ids == b->has_extra_field_ids && a->n_extra_field_ids == b->n_extra_field_ids &&
                     (!a->n_extra_field_ids ||
                      !memcmp(a->extra_field_ids, b->extra_field_ids, a->n_extra_field_ids * sizeof(int32_t)));
    int intersect = a->row_range_start <= b->row_range_end && b->row_range_start <= a->row_range_end;
    return !same_extra || intersect;
}

/* State of one combine: the result set, its keys (combine key -> index in
 * out), the exact identities of the previous entries, and the data files
 * that have a deletion vector (bucket-unaware tables). */
typedef struct ix_combine {
    paimon_table *t;
    const pm_snapshot *latest;
    int unaware;
    pm_ixset *out;
    pm_idmap keys, exact;
    pm_set *dvfiles;
    pm_buf k;
} ix_combine;

/* A conflict whose message is built with printf (fallback if OOM). */
static int ix_conflict_fmt(const ix_combine *c, const pm_index_entry *x, const char *fallback, pm_err *e,
                           const char *fmt, ...) PM_PRINTF(5, 6);
static int ix_conflict_fmt(const ix_combine *c, const pm_index_entry *x, const char *fallback, pm_err *e,
                           const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ix_conflict(c->t, x, c->latest, len < 0 ? fallback : msg, e);
}

/* Previous entries (ADDs only) of the latest index manifest, copied. */
static int read_previous(ix_combine *c, pm_arena *arena, pm_err *e) {
    const pm_snapshot *latest = c->latest;
    if (!latest || !latest->index_manifest) return PAIMON_OK;
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(c->t, latest->index_manifest, PM_INDEX_MANIFEST, &r, e);
    if (rc) return rc;
    const pm_index_entry *x;
    while ((rc = pm_manifest_next_index(r, &x, e)) == PAIMON_OK) {
        if (x->kind != PM_FILE_ADD || !x->index_type || !x->file_name) {
            rc = pm_fail(e, PAIMON_CORRUPT, "%s/manifest/%s: index manifest entry %zu (%s) is not an ADD entry",
                         c->t->root, latest->index_manifest, c->out->n, x->file_name ? x->file_name : "?");
            break;
        }
        pm_index_entry *copy = pm_arena_alloc(arena, sizeof *copy);
        if (!copy || pm_index_entry_copy(arena, x, copy) || ixset_push(c->out, copy)) { rc = pm_nomem(e); break; }
    }
    pm_manifest_close(r);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

/* Set the entry at out index i as the one of its combine key (a previous
 * holder of the key is dropped) or add the key. 0 or -1 (OOM). */
static int ix_take_key(ix_combine *c, size_t i) {
    long s = pm_idmap_find(&c->keys, c->k.data, c->k.len);
    if (s < 0) return pm_idmap_put(&c->keys, c->k.data, c->k.len, (int64_t)i, 0);
    c->out->alive[c->keys.val[s]] = 0;
    c->keys.val[s] = (int64_t)i;
    return 0;
}

/* Key the previous entries (Java's map keeps the later one of a key). */
static int index_previous(ix_combine *c, pm_err *e) {
    for (size_t i = 0; i < c->out->n_prev; i++) {
        const pm_index_entry *x = c->out->v[i];
        int by_name = ix_by_name(c->unaware, x->index_type);
        if (ix_key(x, by_name, &c->k) || ix_take_key(c, i) || ix_exact(x, &c->k)) return pm_nomem(e);
        if (pm_idmap_find(&c->exact, c->k.data, c->k.len) < 0 &&
            pm_idmap_put(&c->exact, c->k.data, c->k.len, (int64_t)i, 0))
            return pm_nomem(e);
        if (by_name && !strcmp(x->index_type, PM_IX_DV))
            for (size_t j = 0; j < x->n_dv_ranges; j++)
                if (x->dv_ranges[j].data_file &&
                    pm_set_add(c->dvfiles, x->dv_ranges[j].data_file, strlen(x->dv_ranges[j].data_file)) < 0)
                    return pm_nomem(e);
    }
    return PAIMON_OK;
}

/* Every DELETE names an index file of the latest index manifest. */
static int check_deletes_known(ix_combine *c, const pm_index_entry *ix, size_t n_ix, pm_err *e) {
    for (size_t i = 0; i < n_ix; i++) {
        if (ix[i].kind != PM_FILE_DELETE) continue;
        if (ix_exact(&ix[i], &c->k)) return pm_nomem(e);
        if (pm_idmap_find(&c->exact, c->k.data, c->k.len) < 0)
            return ix_conflict(c->t, &ix[i], c->latest, "is not in the index manifest of the latest snapshot", e);
    }
    return PAIMON_OK;
}

/* A deletion vector file of a bucket-unaware table added: no data file
 * gets a second one. */
static int add_unaware_dv(ix_combine *c, const pm_index_entry *x, long s, pm_err *e) {
    if (s >= 0) return ix_conflict(c->t, x, c->latest, "is already added", e);
    for (size_t j = 0; j < x->n_dv_ranges; j++) {
        const char *df = x->dv_ranges[j].data_file;
        if (!df) continue;
        int added = pm_set_add(c->dvfiles, df, strlen(df));
        if (added < 0) return pm_nomem(e);
        if (!added)
            return ix_conflict_fmt(c, x, "adds a second deletion vector", e,
                                   "adds a deletion vector for data file %s, which already has one", df);
    }
    if (ixset_push(c->out, x) || pm_idmap_put(&c->keys, c->k.data, c->k.len, (int64_t)(c->out->n - 1), 0))
        return pm_nomem(e);
    return PAIMON_OK;
}

/* A deletion vector file of a bucket-unaware table deleted: each of its
 * data files had one. */
static int delete_unaware_dv(ix_combine *c, const pm_index_entry *x, long s, pm_err *e) {
    if (s < 0) return ix_conflict(c->t, x, c->latest, "is deleted twice in this commit", e);
    for (size_t j = 0; j < x->n_dv_ranges; j++) {
        const char *df = x->dv_ranges[j].data_file;
        if (df && !pm_set_remove(c->dvfiles, df, strlen(df)))
            return ix_conflict_fmt(c, x, "deletes a missing deletion vector", e,
                                   "deletes the deletion vector of data file %s, which has none", df);
    }
    c->out->alive[c->keys.val[s]] = 0;
    pm_idmap_del(&c->keys, c->k.data, c->k.len, s);
    return PAIMON_OK;
}

/* Deletion vectors of bucket-unaware tables: in commit order. */
static int apply_unaware_dvs(ix_combine *c, const pm_index_entry *ix, size_t n_ix, pm_err *e) {
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n_ix && c->unaware && !rc; i++) {
        const pm_index_entry *x = &ix[i];
        if (strcmp(x->index_type, PM_IX_DV)) continue;
        if (ix_key(x, 1, &c->k)) return pm_nomem(e);
        long s = pm_idmap_find(&c->keys, c->k.data, c->k.len);
        rc = x->kind == PM_FILE_ADD ? add_unaware_dv(c, x, s, e) : delete_unaware_dv(c, x, s, e);
    }
    return rc;
}

/* Other groups, DELETEs first: drop the entry of each deleted key. */
static int apply_deletes(ix_combine *c, const pm_index_entry *ix, size_t n_ix, pm_err *e) {
    for (size_t i = 0; i < n_ix; i++) {
        const pm_index_entry *x = &ix[i];
        if (x->kind != PM_FILE_DELETE || (c->unaware && !strcmp(x->index_type, PM_IX_DV))) continue;
        if (ix_key(x, ix_by_name(c->unaware, x->index_type), &c->k)) return pm_nomem(e);
        long s = pm_idmap_find(&c->keys, c->k.data, c->k.len);
        if (s >= 0) {
            c->out->alive[c->keys.val[s]] = 0;
            pm_idmap_del(&c->keys, c->k.data, c->k.len, s);
        }
    }
    return PAIMON_OK;
}

/* An added global index file overlapping a retained one is a conflict. */
static int check_global_overlap(ix_combine *c, const pm_index_entry *x, pm_err *e) {
    const pm_ixset *out = c->out;
    for (size_t j = 0; j < out->n_prev; j++) {
        const pm_index_entry *r = out->v[j];
        if (!out->alive[j] || strcmp(r->index_type, x->index_type) || !ix_global_overlap(r, x)) continue;
        return ix_conflict_fmt(c, x, "overlaps a retained global index", e,
                               "overlaps the row range [%lld, %lld] of index field %d of the retained file %s",
                               (long long)r->global_index.row_range_start, (long long)r->global_index.row_range_end,
                               (int)r->global_index.index_field_id, r->file_name);
    }
    return PAIMON_OK;
}

/* Other groups, then the ADDs: each overwrites the entry of its key. */
static int apply_adds(ix_combine *c, const pm_index_entry *ix, size_t n_ix, pm_err *e) {
    for (size_t i = 0; i < n_ix; i++) {
        const pm_index_entry *x = &ix[i];
        if (x->kind != PM_FILE_ADD || (c->unaware && !strcmp(x->index_type, PM_IX_DV))) continue;
        int by_name = ix_by_name(c->unaware, x->index_type);
        int rc = by_name && x->has_global_index ? check_global_overlap(c, x, e) : PAIMON_OK;
        if (rc) return rc;
        if (ix_key(x, by_name, &c->k) || ixset_push(c->out, x) || ix_take_key(c, c->out->n - 1))
            return pm_nomem(e);
    }
    return PAIMON_OK;
}

int pm_combine_index(paimon_table *t, const pm_snapshot *latest, const pm_index_entry *ix, size_t n_ix,
                     pm_arena *arena, pm_ixset *out, pm_err *e) {
    ix_combine c;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    c.t = t;
    c.latest = latest;
    c.unaware = bucket_unaware(t);
    c.out = out;
    int rc = (c.dvfiles = pm_set_new()) ? PAIMON_OK : pm_nomem(e);
    if (!rc) rc = read_previous(&c, arena, e);
    out->n_prev = out->n;
    if (!rc) rc = index_previous(&c, e);
    if (!rc) rc = check_deletes_known(&c, ix, n_ix, e);
    if (!rc) rc = apply_unaware_dvs(&c, ix, n_ix, e);
    if (!rc) rc = apply_deletes(&c, ix, n_ix, e);
    if (!rc) rc = apply_adds(&c, ix, n_ix, e);
    pm_idmap_free(&c.keys);
    pm_idmap_free(&c.exact);
    pm_set_free(c.dvfiles);
    pm_buf_free(&c.k);
    if (rc) pm_ixset_free(out);
    return rc;
}

/* Write the combined set as a new index manifest of this attempt. */
int pm_write_index_manifest(pm_attempt *a, const pm_ixset *s, char **name, pm_err *e) {
    pm_avro_writer *w;
    int rc = pm_avro_writer_open(PM_SCHEMA_INDEX_MANIFEST, a->o->codec, a->o->level, &w, e);
    if (rc) return rc;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->alive[i]) continue;
        pm_index_entry x = *s->v[i];
        x.version = 1;
        x.kind = PM_FILE_ADD;
        if ((rc = pm_manifest_write_index(w, &x, e))) { pm_avro_writer_abort(w); return rc; }
    }
    pm_buf bytes = {0};
    if ((rc = pm_avro_writer_finish(w, &bytes, e))) return rc;
    rc = pm_attempt_write_file(a, PM_MF_INDEX, &bytes, name, e);
    pm_buf_free(&bytes);
    return rc;
}

