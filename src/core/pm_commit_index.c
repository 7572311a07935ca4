/* Index manifest of a commit: the latest index manifest combined with the
 * commit's index-file changes (Java IndexManifestFileHandler,
 * paimon-format.md §7.5). */
#include "pm_commit_internal.h"

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

/* Previous index manifest + changes -> out (see pm_commit_with_index). */
int pm_combine_index(paimon_table *t, const pm_snapshot *latest, const pm_index_entry *ix, size_t n_ix,
                         pm_arena *arena, pm_ixset *out, pm_err *e) {
    pm_idmap keys = {0}, exact = {0};
    pm_set *dvfiles = NULL;
    pm_buf k = {0};
    int unaware = bucket_unaware(t);
    int rc = PAIMON_OK;
    memset(out, 0, sizeof *out);
#define IX_OOM() do { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto out; } while (0)
    if (!(dvfiles = pm_set_new())) IX_OOM();
    if (latest && latest->index_manifest) {
        pm_manifest_reader *r;
        if ((rc = pm_table_open_manifest(t, latest->index_manifest, PM_INDEX_MANIFEST, &r, e))) goto out;
        const pm_index_entry *x;
        while ((rc = pm_manifest_next_index(r, &x, e)) == PAIMON_OK) {
            if (x->kind != PM_FILE_ADD || !x->index_type || !x->file_name) {
                rc = pm_fail(e, PAIMON_CORRUPT, "%s/manifest/%s: index manifest entry %zu (%s) is not an ADD entry",
                             t->root, latest->index_manifest, out->n, x->file_name ? x->file_name : "?");
                break;
            }
            pm_index_entry *c = pm_arena_alloc(arena, sizeof *c);
            if (!c || pm_index_entry_copy(arena, x, c) || ixset_push(out, c)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
        }
        pm_manifest_close(r);
        if (rc != PAIMON_DONE) goto out;
        rc = PAIMON_OK;
    }
    out->n_prev = out->n;
    for (size_t i = 0; i < out->n_prev; i++) {
        const pm_index_entry *x = out->v[i];
        int by_name = ix_by_name(unaware, x->index_type);
        if (ix_key(x, by_name, &k)) IX_OOM();
        long s = pm_idmap_find(&keys, k.data, k.len);
        if (s >= 0) {                  /* Java's map keeps the later one */
            out->alive[keys.val[s]] = 0;
            keys.val[s] = (int64_t)i;
        } else if (pm_idmap_put(&keys, k.data, k.len, (int64_t)i, 0)) IX_OOM();
        if (ix_exact(x, &k)) IX_OOM();
        if (pm_idmap_find(&exact, k.data, k.len) < 0 && pm_idmap_put(&exact, k.data, k.len, (int64_t)i, 0)) IX_OOM();
        if (by_name && !strcmp(x->index_type, PM_IX_DV))
            for (size_t j = 0; j < x->n_dv_ranges; j++)
                if (x->dv_ranges[j].data_file &&
                    pm_set_add(dvfiles, x->dv_ranges[j].data_file, strlen(x->dv_ranges[j].data_file)) < 0)
                    IX_OOM();
    }
    /* Every DELETE names an index file of the latest index manifest. */
    for (size_t i = 0; i < n_ix; i++) {
        if (ix[i].kind != PM_FILE_DELETE) continue;
        if (ix_exact(&ix[i], &k)) IX_OOM();
        if (pm_idmap_find(&exact, k.data, k.len) < 0) {
            rc = ix_conflict(t, &ix[i], latest, "is not in the index manifest of the latest snapshot", e);
            goto out;
        }
    }
    /* Deletion vectors of bucket-unaware tables: in commit order. */
    for (size_t i = 0; i < n_ix && unaware; i++) {
        const pm_index_entry *x = &ix[i];
        if (strcmp(x->index_type, PM_IX_DV)) continue;
        if (ix_key(x, 1, &k)) IX_OOM();
        long s = pm_idmap_find(&keys, k.data, k.len);
        if (x->kind == PM_FILE_ADD) {
            if (s >= 0) { rc = ix_conflict(t, x, latest, "is already added", e); goto out; }
            for (size_t j = 0; j < x->n_dv_ranges; j++) {
                const char *df = x->dv_ranges[j].data_file;
                if (!df) continue;
                int added = pm_set_add(dvfiles, df, strlen(df));
                if (added < 0) IX_OOM();
                if (!added) {
                    pm_buf msg = {0};
                    pm_buf_printf(&msg, "adds a deletion vector for data file %s, which already has one", df);
                    pm_buf_cstr(&msg);
                    rc = ix_conflict(t, x, latest, msg.data ? (char *)msg.data : "adds a second deletion vector", e);
                    pm_buf_free(&msg);
                    goto out;
                }
            }
            if (ixset_push(out, x) || pm_idmap_put(&keys, k.data, k.len, (int64_t)(out->n - 1), 0)) IX_OOM();
        } else {
            if (s < 0) { rc = ix_conflict(t, x, latest, "is deleted twice in this commit", e); goto out; }
            for (size_t j = 0; j < x->n_dv_ranges; j++) {
                const char *df = x->dv_ranges[j].data_file;
                if (df && !pm_set_remove(dvfiles, df, strlen(df))) {
                    pm_buf msg = {0};
                    pm_buf_printf(&msg, "deletes the deletion vector of data file %s, which has none", df);
                    pm_buf_cstr(&msg);
                    rc = ix_conflict(t, x, latest, msg.data ? (char *)msg.data : "deletes a missing deletion vector", e);
                    pm_buf_free(&msg);
                    goto out;
                }
            }
            out->alive[keys.val[s]] = 0;
            pm_idmap_del(&keys, k.data, k.len, s);
        }
    }
    /* Other groups: every DELETE first, then the ADDs overwrite. */
    for (size_t i = 0; i < n_ix; i++) {
        const pm_index_entry *x = &ix[i];
        if (x->kind != PM_FILE_DELETE || (unaware && !strcmp(x->index_type, PM_IX_DV))) continue;
        if (ix_key(x, ix_by_name(unaware, x->index_type), &k)) IX_OOM();
        long s = pm_idmap_find(&keys, k.data, k.len);
        if (s >= 0) {
            out->alive[keys.val[s]] = 0;
            pm_idmap_del(&keys, k.data, k.len, s);
        }
    }
    for (size_t i = 0; i < n_ix; i++) {
        const pm_index_entry *x = &ix[i];
        if (x->kind != PM_FILE_ADD || (unaware && !strcmp(x->index_type, PM_IX_DV))) continue;
        int by_name = ix_by_name(unaware, x->index_type);
        if (by_name && x->has_global_index) {
            for (size_t j = 0; j < out->n_prev; j++) {
                const pm_index_entry *r = out->v[j];
                if (!out->alive[j] || strcmp(r->index_type, x->index_type) || !ix_global_overlap(r, x)) continue;
                pm_buf msg = {0};
                pm_buf_printf(&msg, "overlaps the row range [%lld, %lld] of index field %d of the retained file %s",
                              (long long)r->global_index.row_range_start, (long long)r->global_index.row_range_end,
                              (int)r->global_index.index_field_id, r->file_name);
                pm_buf_cstr(&msg);
                rc = ix_conflict(t, x, latest, msg.data ? (char *)msg.data : "overlaps a retained global index", e);
                pm_buf_free(&msg);
                goto out;
            }
        }
        if (ix_key(x, by_name, &k)) IX_OOM();
        if (ixset_push(out, x)) IX_OOM();
        long s = pm_idmap_find(&keys, k.data, k.len);
        if (s >= 0) {
            out->alive[keys.val[s]] = 0;
            keys.val[s] = (int64_t)(out->n - 1);
        } else if (pm_idmap_put(&keys, k.data, k.len, (int64_t)(out->n - 1), 0)) IX_OOM();
    }
#undef IX_OOM
out:
    pm_idmap_free(&keys);
    pm_idmap_free(&exact);
    pm_set_free(dvfiles);
    pm_buf_free(&k);
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

