/* Writing manifests for a commit: owned ManifestFileMeta records, the
 * manifest file builder (entries + partition stats), the rolling writer
 * that starts a new file at manifest.target-file-size (Java
 * RollingFileWriter), manifest lists. */
#include "pm_commit_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- datum comparison (partition stats) --------------------------------- */

static int cmp_bytes(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
    size_t l = al < bl ? al : bl;
    int c = l ? memcmp(a, b, l) : 0;
    if (c) return c < 0 ? -1 : 1;
    return al < bl ? -1 : al > bl;
}

/* Big-endian two's complement integers of any length. */
static int cmp_bigint(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
    int an = al && (a[0] & 0x80), bn = bl && (b[0] & 0x80);
    if (an != bn) return an ? -1 : 1;
    size_t l = al > bl ? al : bl;
    for (size_t i = 0; i < l; i++) {
        uint8_t x = i < l - al ? (an ? 0xff : 0) : a[i - (l - al)];
        uint8_t y = i < l - bl ? (bn ? 0xff : 0) : b[i - (l - bl)];
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

#define CMP3(x, y) ((x) < (y) ? -1 : (x) > (y))

int pm_stats_cmp_datum(const pm_type *ty, const pm_datum *a, const pm_datum *b) {
    switch (ty->root) {
    case PM_T_FLOAT: return CMP3(a->v.f, b->v.f);
    case PM_T_DOUBLE: return CMP3(a->v.d, b->v.d);
    case PM_T_DECIMAL:
        if (ty->precision <= 18) return CMP3(a->v.i, b->v.i);
        return cmp_bigint(a->v.bin.ptr, a->v.bin.len, b->v.bin.ptr, b->v.bin.len);
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY:
        return cmp_bytes(a->v.bin.ptr, a->v.bin.len, b->v.bin.ptr, b->v.bin.len);
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ:
        if (a->v.ts.millis != b->v.ts.millis) return CMP3(a->v.ts.millis, b->v.ts.millis);
        return CMP3(a->v.ts.nanos_of_milli, b->v.ts.nanos_of_milli);
    case PM_T_BOOLEAN: case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT:
    case PM_T_DATE: case PM_T_TIME:
        return CMP3(a->v.i, b->v.i);
    default:
        return 0;   /* not a valid partition type */
    }
}

/* ---- owned ManifestFileMeta --------------------------------------------- */

void pm_own_meta_free(pm_own_meta *o) {
    free(o->name);
    pm_buf_free(&o->pmin);
    pm_buf_free(&o->pmax);
    free(o->nc);
    free(o->ncn);
    memset(o, 0, sizeof *o);
}

void pm_own_metas_free(pm_own_meta *v, size_t n) {
    for (size_t i = 0; i < n; i++) pm_own_meta_free(&v[i]);
    free(v);
}

/* Point m's borrowed fields at the owned storage. */
void pm_own_meta_fix(pm_own_meta *o) {
    o->m.file_name = o->name;
    o->m.partition_stats.min_values = (pm_bytes){o->pmin.data ? o->pmin.data : (const uint8_t *)"", o->pmin.len};
    o->m.partition_stats.max_values = (pm_bytes){o->pmax.data ? o->pmax.data : (const uint8_t *)"", o->pmax.len};
    o->m.partition_stats.null_counts = o->nc;
    o->m.partition_stats.null_count_is_null = o->ncn;
}

int pm_own_meta_copy(pm_own_meta *o, const pm_manifest_meta *m) {
    memset(o, 0, sizeof *o);
    o->m = *m;
    const pm_stats *st = &m->partition_stats;
    size_t k = st->n_null_counts;
    o->name = pm_strdup(m->file_name ? m->file_name : "");
    int rc = !o->name;
    rc |= pm_buf_append(&o->pmin, st->min_values.ptr, st->min_values.len);
    rc |= pm_buf_append(&o->pmax, st->max_values.ptr, st->max_values.len);
    if (k) {
        o->nc = calloc(k, sizeof *o->nc);
        o->ncn = calloc(k, 1);
        if (!o->nc || !o->ncn) rc = 1;
        else {
            if (st->null_counts) memcpy(o->nc, st->null_counts, k * sizeof *o->nc);
            if (st->null_count_is_null) memcpy(o->ncn, st->null_count_is_null, k);
        }
    }
    pm_own_meta_fix(o);
    if (rc) { pm_own_meta_free(o); return PAIMON_NOMEM; }
    return PAIMON_OK;
}

int pm_own_metas_push(pm_own_meta **v, size_t *n, size_t *cap, pm_own_meta **slot) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        pm_own_meta *nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return PAIMON_NOMEM;
        *v = nv;
        *cap = nc;
    }
    *slot = &(*v)[(*n)++];
    memset(*slot, 0, sizeof **slot);
    return PAIMON_OK;
}

/* Append every ManifestFileMeta of a manifest list (full records). */
int pm_own_metas_read(paimon_table *t, const char *list, pm_own_meta **v, size_t *n, size_t *cap, pm_err *e) {
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(t, list, PM_MANIFEST_LIST, &r, e);
    if (rc) return rc;
    const pm_manifest_meta *m;
    while ((rc = pm_manifest_next_meta(r, &m, e)) == PAIMON_OK) {
        pm_own_meta *slot;
        if (pm_own_metas_push(v, n, cap, &slot) || pm_own_meta_copy(slot, m)) {
            if (*n && (*v)[*n - 1].name == NULL) (*n)--;
            rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
            break;
        }
    }
    pm_manifest_close(r);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

/* ---- manifest file builder ---------------------------------------------- */

void pm_mbuild_free(pm_mbuild *b) {
    pm_avro_writer_abort(b->w);
    b->w = NULL;
    pm_buf_free(&b->pmin);
    pm_buf_free(&b->pmax);
    pm_buf_free(&b->lastp);
    free(b->nulls);
    free(b->last_null);
    free(b->vals);
    free(b->mins);
    free(b->maxs);
    memset(b, 0, sizeof *b);
}

int pm_mbuild_open(pm_mbuild *b, pm_attempt *a, pm_err *e) {
    memset(b, 0, sizeof *b);
    b->a = a;
    b->row_ok = 1;
    b->np = a->t->n_part;
    size_t k = b->np ? b->np : 1;
    b->nulls = calloc(k, sizeof *b->nulls);
    b->last_null = calloc(k, 1);
    b->vals = calloc(k, sizeof *b->vals);
    b->mins = calloc(k, sizeof *b->mins);
    b->maxs = calloc(k, sizeof *b->maxs);
    if (!b->nulls || !b->last_null || !b->vals || !b->mins || !b->maxs) {
        pm_mbuild_free(b);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    int rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_FILE, a->o->codec, a->o->level, &b->w, e);
    if (rc) pm_mbuild_free(b);
    return rc;
}

static int encode_row(pm_mbuild *b, const pm_datum *v, pm_buf *dst, pm_err *e) {
    pm_buf tmp = {0};
    int rc = pm_binrow_encode(b->a->t->part_types, b->np, v, &tmp, e);
    if (rc) { pm_buf_free(&tmp); return rc; }
    pm_buf_free(dst);
    *dst = tmp;
    return PAIMON_OK;
}

/* Fold per-field bounds lo/hi (one entry's values: lo == hi; a manifest's
 * stats: its min/max row) into the builder's partition min/max rows; nulls
 * never become a bound once the builder holds one. */
static int fold_bounds(pm_mbuild *b, const pm_datum *lo, const pm_datum *hi, pm_err *e) {
    size_t np = b->np;
    pm_type *const *ty = b->a->t->part_types;
    int rc, chmin = 0, chmax = 0;
    if (b->n == 0) {
        for (size_t i = 0; i < np; i++) b->mins[i] = lo[i], b->maxs[i] = hi[i];
        chmin = chmax = 1;
    } else {
        if ((rc = pm_binrow_decode(b->pmin.data, b->pmin.len, ty, np, b->mins, e)) ||
            (rc = pm_binrow_decode(b->pmax.data, b->pmax.len, ty, np, b->maxs, e)))
            return rc;
        for (size_t i = 0; i < np; i++) {
            if (!lo[i].is_null && (b->mins[i].is_null || pm_stats_cmp_datum(ty[i], &lo[i], &b->mins[i]) < 0)) {
                b->mins[i] = lo[i];
                chmin = 1;
            }
            if (!hi[i].is_null && (b->maxs[i].is_null || pm_stats_cmp_datum(ty[i], &hi[i], &b->maxs[i]) > 0)) {
                b->maxs[i] = hi[i];
                chmax = 1;
            }
        }
    }
    if (chmin && (rc = encode_row(b, b->mins, &b->pmin, e))) return rc;
    if (chmax && (rc = encode_row(b, b->maxs, &b->pmax, e))) return rc;
    return PAIMON_OK;
}

int pm_mbuild_partition(pm_mbuild *b, const pm_manifest_entry *m, pm_err *e) {
    size_t np = b->np;
    if (np == 0) return PAIMON_OK;
    if (b->lastp_valid && b->lastp.len == m->partition.len &&
        !memcmp(b->lastp.data, m->partition.ptr, m->partition.len)) {
        for (size_t i = 0; i < np; i++) b->nulls[i] += b->last_null[i];
        return PAIMON_OK;
    }
    paimon_table *t = b->a->t;
    int rc = pm_table_partition_decode(t, m->partition, b->vals, e);
    if (rc) {
        pm_err_prefix(e, "partition of data file %s", m->file.file_name);
        return rc;
    }
    if ((rc = fold_bounds(b, b->vals, b->vals, e))) return rc;
    for (size_t i = 0; i < np; i++) {
        b->last_null[i] = (uint8_t)(b->vals[i].is_null != 0);
        b->nulls[i] += b->last_null[i];
    }
    b->lastp.len = 0;
    if (pm_buf_append(&b->lastp, m->partition.ptr, m->partition.len)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    b->lastp_valid = 1;
    return PAIMON_OK;
}

/* Fold an entry into the file's stats; `write`: encode it too (else its
 * bytes come in a block copied as it is). */
static int mb_add(pm_mbuild *b, const pm_manifest_entry *m, int write, pm_err *e) {
    int rc = pm_mbuild_partition(b, m, e);
    if (rc) return rc;
    if (write && (rc = pm_manifest_write_entry(b->w, m, e))) return rc;
    if (m->kind == PM_FILE_ADD) b->added++;
    else b->deleted++;
    const pm_data_file *d = &m->file;
    if (b->n == 0 || d->schema_id > b->schema_id) b->schema_id = d->schema_id;
    if (b->n == 0 || m->bucket < b->min_b) b->min_b = m->bucket;
    if (b->n == 0 || m->bucket > b->max_b) b->max_b = m->bucket;
    if (b->n == 0 || d->level < b->min_l) b->min_l = d->level;
    if (b->n == 0 || d->level > b->max_l) b->max_l = d->level;
    if (!d->first_row_id.has) b->row_ok = 0;
    else if (b->row_ok) {
        int64_t lo = d->first_row_id.v, hi = d->first_row_id.v + d->row_count - 1;
        if (b->n == 0 || lo < b->min_row) b->min_row = lo;
        if (b->n == 0 || hi > b->max_row) b->max_row = hi;
    }
    b->n++;
    return PAIMON_OK;
}

/* Partition stats fold for up to this many fields (more: walk). */
#define FOLD_MAX_FIELDS 16

/* 1 when manifest list record m describes its entries completely enough to
 * stand for them in the builder (what mb_add would fold from each). */
static int mb_meta_usable(const pm_mbuild *b, const pm_manifest_meta *m) {
    if (m->num_added_files + m->num_deleted_files == 0) return 1;
    if (!m->min_bucket.has || !m->max_bucket.has || !m->min_level.has || !m->max_level.has) return 0;   /* <= 1.0 */
    if (m->min_row_id.has != m->max_row_id.has || (!m->min_row_id.has && !m->row_ids_known)) return 0;
    if (b->np == 0) return 1;
    const pm_stats *st = &m->partition_stats;
    if (b->np > FOLD_MAX_FIELDS || !st->has_null_counts || st->n_null_counts != b->np || !st->null_counts) return 0;
    for (size_t i = 0; i < b->np; i++)
        if (st->null_count_is_null && st->null_count_is_null[i]) return 0;
    pm_datum v[FOLD_MAX_FIELDS];
    pm_err e;
    pm_type *const *ty = b->a->t->part_types;
    return !pm_binrow_decode(st->min_values.ptr, st->min_values.len, ty, b->np, v, &e) &&
           !pm_binrow_decode(st->max_values.ptr, st->max_values.len, ty, b->np, v, &e);
}

/* The partition part of mb_fold_meta: per field the typed min/max (nulls
 * aside) and the null counts summed, as pm_mbuild_partition per entry. */
static int mb_fold_partitions(pm_mbuild *b, const pm_stats *st, pm_err *e) {
    size_t np = b->np;
    pm_type *const *ty = b->a->t->part_types;
    pm_datum fmin[FOLD_MAX_FIELDS], fmax[FOLD_MAX_FIELDS];
    int rc;
    if ((rc = pm_binrow_decode(st->min_values.ptr, st->min_values.len, ty, np, fmin, e)) ||
        (rc = pm_binrow_decode(st->max_values.ptr, st->max_values.len, ty, np, fmax, e)))
        return rc;
    if ((rc = fold_bounds(b, fmin, fmax, e))) return rc;
    for (size_t i = 0; i < np; i++) b->nulls[i] += st->null_counts[i];
    b->lastp_valid = 0;   /* the next entry compares against the folded stats */
    return PAIMON_OK;
}

/* Fold a whole manifest's entries into the file's stats from its manifest
 * list record alone (mb_meta_usable said yes): the same sums, minima and
 * maxima mb_add computes entry by entry. */
static int mb_fold_meta(pm_mbuild *b, const pm_manifest_meta *m, pm_err *e) {
    int64_t n = m->num_added_files + m->num_deleted_files;
    if (n == 0) return PAIMON_OK;
    int rc;
    if (b->np && (rc = mb_fold_partitions(b, &m->partition_stats, e))) return rc;
    b->added += m->num_added_files;
    b->deleted += m->num_deleted_files;
    if (b->n == 0 || m->schema_id > b->schema_id) b->schema_id = m->schema_id;
    if (b->n == 0 || m->min_bucket.v < b->min_b) b->min_b = m->min_bucket.v;
    if (b->n == 0 || m->max_bucket.v > b->max_b) b->max_b = m->max_bucket.v;
    if (b->n == 0 || m->min_level.v < b->min_l) b->min_l = m->min_level.v;
    if (b->n == 0 || m->max_level.v > b->max_l) b->max_l = m->max_level.v;
    if (!m->min_row_id.has) b->row_ok = 0;
    else if (b->row_ok) {
        if (b->n == 0 || m->min_row_id.v < b->min_row) b->min_row = m->min_row_id.v;
        if (b->n == 0 || m->max_row_id.v > b->max_row) b->max_row = m->max_row_id.v;
    }
    b->n += (size_t)n;
    return PAIMON_OK;
}

/* Write the file and describe it in *out. Frees the builder. */
static int mb_finish(pm_mbuild *b, pm_own_meta *out, pm_err *e) {
    memset(out, 0, sizeof *out);
    int rc = PAIMON_OK;
    if (b->np == 0 || b->n == 0) {
        for (size_t i = 0; i < b->np; i++) b->mins[i].is_null = 1;
        if ((rc = encode_row(b, b->mins, &b->pmin, e)) || (rc = encode_row(b, b->mins, &b->pmax, e))) {
            pm_mbuild_free(b);
            return rc;
        }
    }
    pm_buf bytes = {0};
    pm_avro_writer *w = b->w;
    b->w = NULL;
    rc = pm_avro_writer_finish(w, &bytes, e);
    char *name = NULL;
    if (!rc) rc = pm_attempt_write_file(b->a, PM_MF_MANIFEST, &bytes, &name, e);
    if (rc) { pm_buf_free(&bytes); pm_mbuild_free(b); return rc; }
    out->name = name;
    out->pmin = b->pmin;
    out->pmax = b->pmax;
    memset(&b->pmin, 0, sizeof b->pmin);
    memset(&b->pmax, 0, sizeof b->pmax);
    out->nc = b->nulls;
    b->nulls = NULL;
    out->ncn = NULL;
    pm_manifest_meta *m = &out->m;
    m->version = 2;
    m->file_size = (int64_t)bytes.len;
    m->num_added_files = b->added;
    m->num_deleted_files = b->deleted;
    m->partition_stats.has_null_counts = 1;
    m->partition_stats.n_null_counts = b->np;
    m->row_ids_known = 1;
    m->schema_id = b->n ? b->schema_id : (b->a->t->schema ? b->a->t->schema->id : 0);
    if (b->n) {
        m->min_bucket = (pm_opt_i32){1, b->min_b};
        m->max_bucket = (pm_opt_i32){1, b->max_b};
        m->min_level = (pm_opt_i32){1, b->min_l};
        m->max_level = (pm_opt_i32){1, b->max_l};
        if (b->row_ok) {
            m->min_row_id = (pm_opt_i64){1, b->min_row};
            m->max_row_id = (pm_opt_i64){1, b->max_row};
        }
    }
    pm_own_meta_fix(out);
    pm_buf_free(&bytes);
    pm_mbuild_free(b);
    return PAIMON_OK;
}

/* Write a manifest list with the given records. */
int pm_write_manifest_list(pm_attempt *a, const pm_own_meta *v, size_t n, char **name, int64_t *size, pm_err *e) {
    pm_avro_writer *w;
    int rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_LIST, a->o->codec, a->o->level, &w, e);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = pm_manifest_write_meta(w, &v[i].m, e))) { pm_avro_writer_abort(w); return rc; }
    pm_buf bytes = {0};
    if ((rc = pm_avro_writer_finish(w, &bytes, e))) return rc;
    rc = pm_attempt_write_file(a, PM_MF_LIST, &bytes, name, e);
    *size = (int64_t)bytes.len;
    pm_buf_free(&bytes);
    return rc;
}

/* ---- rolling manifest writer (Java RollingFileWriter) ------------------- */

/* Java checks the written size every CHECK_ROLLING_RECORD_CNT records
 * (counted over all files of the writer). */
#define ROLL_CHECK_RECORDS 1000

void pm_mroll_init(pm_mroll *r, pm_attempt *a, pm_own_meta **out, size_t *n_out, size_t *cap) {
    memset(r, 0, sizeof *r);
    r->a = a;
    r->out = out;
    r->n_out = n_out;
    r->cap = cap;
}

static int mr_close_current(pm_mroll *r, pm_err *e) {
    if (!r->open) return PAIMON_OK;
    r->open = 0;
    if (r->mb.n == 0) {
        pm_mbuild_free(&r->mb);
        return PAIMON_OK;
    }
    pm_own_meta *slot;
    if (pm_own_metas_push(r->out, r->n_out, r->cap, &slot)) {
        pm_mbuild_free(&r->mb);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    int rc = mb_finish(&r->mb, slot, e);
    if (rc) (*r->n_out)--;
    return rc;
}

/* Add an entry; rolls to a new file once the current one (header + flushed
 * blocks) reached manifest.target-file-size. */
int pm_mroll_add(pm_mroll *r, const pm_manifest_entry *m, pm_err *e) {
    int rc;
    if (!r->open) {
        if ((rc = pm_mbuild_open(&r->mb, r->a, e))) return rc;
        r->open = 1;
    }
    if ((rc = mb_add(&r->mb, m, 1, e))) return rc;
    r->records++;
    if (r->records % ROLL_CHECK_RECORDS == 0 && pm_avro_writer_bytes(r->mb.w) >= r->a->o->manifest_target_size)
        return mr_close_current(r, e);
    return PAIMON_OK;
}

/* Append a block whose `seen` entries were folded into the current file
 * already; Java checks the size after every copied block. */
static int mr_copy_block(pm_mroll *r, const char *display, uint64_t no, int64_t count, const uint8_t *raw,
                         size_t raw_len, int64_t seen, pm_err *e) {
    if (seen != count)
        return pm_fail(e, PAIMON_CORRUPT, "%s: block %llu: %lld records read of %lld", display,
                       (unsigned long long)no, (long long)seen, (long long)count);
    int rc = pm_avro_writer_append_block(r->mb.w, r->a->o->codec, count, raw, raw_len, e);
    if (rc) {
        pm_err_prefix(e, "%s: block %llu", display, (unsigned long long)no);
        return rc;
    }
    r->records += count;
    if (pm_avro_writer_bytes(r->mb.w) >= r->a->o->manifest_target_size) return mr_close_current(r, e);
    return PAIMON_OK;
}

int pm_mroll_copy(pm_mroll *r, pm_manifest_reader *in, const char *display, int refuse_deletes, int64_t *n_entries,
                  pm_err *e) {
    *n_entries = 0;
    if (!pm_manifest_blocks_copyable(in, r->a->o->codec))
        return pm_fail(e, PAIMON_MISUSE, "%s: blocks cannot be copied (schema or codec differs)", display);
    /* the other fields (stats, keys) are walked with every check, not built */
    if (pm_manifest_stats_only(in)) return pm_fail(e, PAIMON_MISUSE, "%s: cannot project for a copy", display);
    uint64_t cur_no = 0;
    int64_t cur_count = 0, seen = 0;
    const uint8_t *cur_raw = NULL;
    size_t cur_len = 0;
    const pm_manifest_entry *m;
    int rc;
    while ((rc = pm_manifest_next_entry(in, &m, e)) == PAIMON_OK) {
        int64_t count;
        const uint8_t *raw;
        size_t len;
        uint64_t no = pm_manifest_block(in, &count, &raw, &len);
        if (no != cur_no) {   /* the block before was read to its end with every check */
            if (cur_no && (rc = mr_copy_block(r, display, cur_no, cur_count, cur_raw, cur_len, seen, e))) return rc;
            cur_no = no, cur_count = count, cur_raw = raw, cur_len = len, seen = 0;
        }
        if (refuse_deletes && m->kind != PM_FILE_ADD)
            return pm_fail(e, PAIMON_CORRUPT, "%s: entry %lld deletes %s, but its manifest list record counts no "
                           "deleted files", display, (long long)*n_entries, m->file.file_name);
        if (!r->open) {
            if ((rc = pm_mbuild_open(&r->mb, r->a, e))) return rc;
            r->open = 1;
        }
        if ((rc = mb_add(&r->mb, m, 0, e))) return rc;
        seen++;
        (*n_entries)++;
    }
    if (rc != PAIMON_DONE) return rc;
    return cur_no ? mr_copy_block(r, display, cur_no, cur_count, cur_raw, cur_len, seen, e) : PAIMON_OK;
}

/* Bytes a copied block adds to the file: its header, itself, the sync. */
static int64_t framed_size(int64_t count, size_t len) {
    int64_t n = (int64_t)len + 16;
    uint64_t z[2] = {(uint64_t)count << 1, (uint64_t)len << 1};   /* zigzag of non-negative values */
    for (int k = 0; k < 2; k++) {
        do { n++; z[k] >>= 7; } while (z[k]);
    }
    return n;
}

typedef struct stored_block { int64_t count; const uint8_t *raw; size_t len; } stored_block;

/* Every block of `in` as stored, its framing checked; their record counts
 * must add up to what the manifest list record says. */
static int read_stored_blocks(pm_manifest_reader *in, const pm_manifest_meta *meta, const char *display,
                              stored_block **out, size_t *n_out, pm_err *e) {
    stored_block *v = NULL;
    size_t n = 0, cap = 0;
    int64_t total = 0, want = meta->num_added_files + meta->num_deleted_files;
    int rc;
    stored_block b;
    while ((rc = pm_manifest_next_stored(in, &b.count, &b.raw, &b.len, e)) == PAIMON_OK) {
        if (b.count == 0) continue;   /* an empty block: nothing to copy */
        total += b.count;
        if (total > want) break;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            stored_block *nv = realloc(v, nc * sizeof *nv);
            if (!nv) { free(v); return pm_nomem(e); }
            v = nv;
            cap = nc;
        }
        v[n++] = b;
    }
    if (rc != PAIMON_DONE && rc != PAIMON_OK) { free(v); return rc; }
    if (total != want) {
        free(v);
        return pm_fail(e, PAIMON_CORRUPT, "%s: its blocks hold %s%lld records, its manifest list record counts %lld "
                       "(%lld added + %lld deleted)", display, rc == PAIMON_OK ? "more than " : "", (long long)total,
                       (long long)want, (long long)meta->num_added_files, (long long)meta->num_deleted_files);
    }
    *out = v;
    *n_out = n;
    return PAIMON_OK;
}

int pm_mroll_copy_stored(pm_mroll *r, pm_manifest_reader *in, const pm_manifest_meta *meta, const char *display,
                         int *copied, pm_err *e) {
    *copied = 0;
    if (!pm_manifest_blocks_copyable(in, r->a->o->codec))
        return pm_fail(e, PAIMON_MISUSE, "%s: blocks cannot be copied (schema or codec differs)", display);
    /* only codecs whose stored blocks can be checked without inflating
     * them (zstandard frames, snappy's length header); null and deflate
     * blocks are walked, so garbled records are still refused there */
    const char *codec = r->a->o->codec;
    if (strcmp(codec, "zstandard") && strcmp(codec, "snappy")) return PAIMON_OK;
    int rc;
    if (!r->open) {
        if ((rc = pm_mbuild_open(&r->mb, r->a, e))) return rc;
        r->open = 1;
    }
    if (!mb_meta_usable(&r->mb, meta)) return PAIMON_OK;
    stored_block *v = NULL;
    size_t n = 0;
    if ((rc = read_stored_blocks(in, meta, display, &v, &n, e))) return rc;
    /* the records buffered before stay before the copy (as
     * pm_avro_writer_append_block would flush them) */
    if ((rc = pm_avro_writer_flush(r->mb.w, e))) { free(v); return rc; }
    /* Java checks the size after every copied block: a file rolling before
     * the last one would split this manifest's entries over two files,
     * whose stats the list record cannot give: walk it instead */
    int64_t bytes = pm_avro_writer_bytes(r->mb.w);
    for (size_t i = 0; i + 1 < n; i++)
        if ((bytes += framed_size(v[i].count, v[i].len)) >= r->a->o->manifest_target_size) { free(v); return PAIMON_OK; }
    for (size_t i = 0; i < n && !rc; i++) {
        rc = pm_avro_writer_append_block(r->mb.w, r->a->o->codec, v[i].count, v[i].raw, v[i].len, e);
        if (rc) pm_err_prefix(e, "%s: block %zu", display, i + 1);
        else r->records += v[i].count;
    }
    free(v);
    if (!rc) rc = mb_fold_meta(&r->mb, meta, e);
    if (rc) return rc;
    *copied = 1;
    if (n && pm_avro_writer_bytes(r->mb.w) >= r->a->o->manifest_target_size) return mr_close_current(r, e);
    return PAIMON_OK;
}

int pm_mroll_finish(pm_mroll *r, pm_err *e) { return mr_close_current(r, e); }

void pm_mroll_abort(pm_mroll *r) {
    if (r->open) pm_mbuild_free(&r->mb);
    r->open = 0;
}

