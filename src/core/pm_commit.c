/* Commit: ManifestEntry records -> manifest file + manifest lists + a new
 * snapshot, created atomically without replacing (Java FileStoreCommitImpl
 * 2.0, paimon-format.md §7). */
#include "pm_commit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pm_avro.h"
#include "pm_expire.h"

/* ---- options ------------------------------------------------------------ */

static void opt_int(const paimon_table *t, const char *key, int *out) {
    const char *v = t && t->schema ? pm_schema_option(t->schema, key) : NULL;
    if (!v) return;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    while (*end == ' ') end++;
    if (!errno && end != v && !*end && x >= 0 && x <= 0x7fffffffL) *out = (int)x;
}

static void opt_duration(const paimon_table *t, const char *key, int64_t *out) {
    const char *v = t && t->schema ? pm_schema_option(t->schema, key) : NULL;
    pm_err e;
    int64_t ms;
    if (v && pm_parse_duration_ms(v, &ms, &e) == PAIMON_OK && ms >= 0) *out = ms;
}

static void opt_size(const paimon_table *t, const char *key, int64_t *out) {
    const char *v = t && t->schema ? pm_schema_option(t->schema, key) : NULL;
    pm_err e;
    int64_t b;
    if (v && pm_parse_memory_size(v, &b, &e) == PAIMON_OK && b > 0) *out = b;
}

void pm_commit_opts_from_table(const paimon_table *t, pm_commit_opts *o) {
    memset(o, 0, sizeof *o);
    o->identifier = INT64_MAX;
    o->kind = "APPEND";
    o->max_retries = 10;
    o->min_retry_wait_ms = 10;
    o->max_retry_wait_ms = 10000;
    o->codec = "zstandard";
    o->level = 1;
    o->manifest_target_size = 8LL << 20;
    o->full_compaction_threshold = 16LL << 20;
    o->merge_min_count = 30;
    if (!t || !t->schema) return;
    opt_int(t, "commit.max-retries", &o->max_retries);
    opt_duration(t, "commit.min-retry-wait", &o->min_retry_wait_ms);
    opt_duration(t, "commit.max-retry-wait", &o->max_retry_wait_ms);
    o->codec = pm_manifest_codec_for(pm_schema_option(t->schema, "manifest.compression"),
                                     pm_schema_option(t->schema, "avro.codec"));
    opt_size(t, "manifest.target-file-size", &o->manifest_target_size);
    opt_size(t, "manifest.full-compaction-threshold-size", &o->full_compaction_threshold);
    opt_int(t, "manifest.merge-min-count", &o->merge_min_count);
}

/* ---- identifier map (ordered semantics via stored sequence numbers) ----- */

typedef struct idslot {
    uint8_t *key;
    size_t len;
    uint64_t h;
    int64_t val;      /* entry index / sequence number of the put */
    int kind;         /* PM_FILE_ADD / PM_FILE_DELETE */
    int state;        /* 0 empty, 1 used, 2 deleted */
} idslot;

typedef struct idmap {
    idslot *s;
    size_t cap, used, n;   /* used counts tombstones too */
} idmap;

static uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= p[i]; h *= 1099511628211ULL; }
    return h;
}

static void idmap_free(idmap *m) {
    for (size_t i = 0; i < m->cap; i++) if (m->s[i].state == 1) free(m->s[i].key);
    free(m->s);
    memset(m, 0, sizeof *m);
}

static idslot *idmap_find(const idmap *m, const void *key, size_t len) {
    if (!m->cap) return NULL;
    uint64_t h = fnv1a(key, len);
    for (size_t i = (size_t)h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        idslot *s = &m->s[i];
        if (s->state == 0) return NULL;
        if (s->state == 1 && s->h == h && s->len == len && !memcmp(s->key, key, len)) return s;
    }
}

static int idmap_grow(idmap *m) {
    size_t nc = m->cap ? m->cap * 2 : 64;
    while (m->n * 2 >= nc) nc *= 2;
    idslot *ns = calloc(nc, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->s[i].state != 1) continue;
        size_t j = (size_t)m->s[i].h & (nc - 1);
        while (ns[j].state) j = (j + 1) & (nc - 1);
        ns[j] = m->s[i];
    }
    free(m->s);
    m->s = ns;
    m->cap = nc;
    m->used = m->n;
    return 0;
}

/* Insert a key known to be absent. 0 or -1 (OOM). */
static int idmap_put(idmap *m, const void *key, size_t len, int64_t val, int kind) {
    if ((m->used + 1) * 2 > m->cap && idmap_grow(m)) return -1;
    uint64_t h = fnv1a(key, len);
    size_t i = (size_t)h & (m->cap - 1);
    while (m->s[i].state == 1) i = (i + 1) & (m->cap - 1);
    uint8_t *k = malloc(len ? len : 1);
    if (!k) return -1;
    if (len) memcpy(k, key, len);
    if (m->s[i].state == 0) m->used++;
    m->s[i] = (idslot){k, len, h, val, kind, 1};
    m->n++;
    return 0;
}

static void idmap_del(idmap *m, idslot *s) {
    free(s->key);
    s->key = NULL;
    s->state = 2;
    m->n--;
}

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

static int cmp_datum(const pm_type *ty, const pm_datum *a, const pm_datum *b) {
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

typedef struct own_meta {
    pm_manifest_meta m;   /* pointers into the fields below */
    char *name;
    pm_buf pmin, pmax;
    int64_t *nc;
    uint8_t *ncn;
} own_meta;

static void own_meta_free(own_meta *o) {
    free(o->name);
    pm_buf_free(&o->pmin);
    pm_buf_free(&o->pmax);
    free(o->nc);
    free(o->ncn);
    memset(o, 0, sizeof *o);
}

static void own_metas_free(own_meta *v, size_t n) {
    for (size_t i = 0; i < n; i++) own_meta_free(&v[i]);
    free(v);
}

/* Point m's borrowed fields at the owned storage. */
static void own_meta_fix(own_meta *o) {
    o->m.file_name = o->name;
    o->m.partition_stats.min_values = (pm_bytes){o->pmin.data ? o->pmin.data : (const uint8_t *)"", o->pmin.len};
    o->m.partition_stats.max_values = (pm_bytes){o->pmax.data ? o->pmax.data : (const uint8_t *)"", o->pmax.len};
    o->m.partition_stats.null_counts = o->nc;
    o->m.partition_stats.null_count_is_null = o->ncn;
}

static int own_meta_copy(own_meta *o, const pm_manifest_meta *m) {
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
    own_meta_fix(o);
    if (rc) { own_meta_free(o); return PAIMON_NOMEM; }
    return PAIMON_OK;
}

static int metas_push(own_meta **v, size_t *n, size_t *cap, own_meta **slot) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        own_meta *nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return PAIMON_NOMEM;
        *v = nv;
        *cap = nc;
    }
    *slot = &(*v)[(*n)++];
    memset(*slot, 0, sizeof **slot);
    return PAIMON_OK;
}

/* Append every ManifestFileMeta of a manifest list (full records). */
static int read_metas(paimon_table *t, const char *list, own_meta **v, size_t *n, size_t *cap, pm_err *e) {
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(t, list, PM_MANIFEST_LIST, &r, e);
    if (rc) return rc;
    const pm_manifest_meta *m;
    while ((rc = pm_manifest_next_meta(r, &m, e)) == PAIMON_OK) {
        own_meta *slot;
        if (metas_push(v, n, cap, &slot) || own_meta_copy(slot, m)) {
            if (*n && (*v)[*n - 1].name == NULL) (*n)--;
            rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
            break;
        }
    }
    pm_manifest_close(r);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

/* ---- one commit attempt: written files ---------------------------------- */

typedef struct attempt {
    paimon_table *t;
    const pm_commit_opts *o;
    char uuid[37];
    int n_manifest, n_list, n_index;
    char **written;                    /* full paths */
    size_t n_written, cap_written;
    /* Set once an attempt failed uncertainly (the snapshot may or may not
     * have been created): later attempts first look for it among the
     * snapshots after `scan_from` (Java tryCommitOnce, retryResult). */
    int uncertain;
    int64_t scan_from;
    int last_uncertain;                /* the last attempt ended uncertainly */
    int write_hint;                    /* success: write LATEST */
} attempt;

static void attempt_forget(attempt *a) {
    for (size_t i = 0; i < a->n_written; i++) free(a->written[i]);
    free(a->written);
    a->written = NULL;
    a->n_written = a->cap_written = 0;
}

/* Delete every file this attempt wrote (or tried to write). A failed remove
 * is tried once more; after that it is ignored (an orphan at worst). */
static void attempt_cleanup(attempt *a) {
    for (size_t i = 0; i < a->n_written; i++) {
        pm_err e2;
        int rc = pm_io_remove(a->t->io, a->written[i], &e2);
        if (rc != PAIMON_OK && rc != PAIMON_NOTFOUND) pm_io_remove(a->t->io, a->written[i], &e2);
    }
    attempt_forget(a);
}

enum { MF_MANIFEST = 0, MF_LIST = 1, MF_INDEX = 2 };

/* Write a new file in manifest/ named <prefix>-<uuid>-<n> (prefix by kind:
 * manifest, manifest-list, index-manifest); *name malloc'd. */
static int write_manifest_file(attempt *a, int kind, const pm_buf *bytes, char **name, pm_err *e) {
    *name = NULL;
    char nm[128];
    if (kind == MF_LIST) snprintf(nm, sizeof nm, "manifest-list-%s-%d", a->uuid, a->n_list++);
    else if (kind == MF_INDEX) snprintf(nm, sizeof nm, "index-manifest-%s-%d", a->uuid, a->n_index++);
    else snprintf(nm, sizeof nm, "manifest-%s-%d", a->uuid, a->n_manifest++);
    if (a->n_written == a->cap_written) {
        size_t nc = a->cap_written ? a->cap_written * 2 : 8;
        char **nv = realloc(a->written, nc * sizeof *nv);
        if (!nv) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        a->written = nv;
        a->cap_written = nc;
    }
    char *path = pm_table_manifest_path(a->t, nm);
    *name = pm_strdup(nm);
    if (!path || !*name) {
        free(path);
        free(*name);
        *name = NULL;
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    /* Recorded before writing: a failed write may still have left the file
     * (the error can come after the rename), and cleanup must remove it. */
    a->written[a->n_written++] = path;
    int rc = pm_io_write_atomic(a->t->io, path, bytes->data ? bytes->data : (const uint8_t *)"", bytes->len, e);
    if (rc) {
        free(*name);
        *name = NULL;
        return rc;
    }
    return PAIMON_OK;
}

/* ---- manifest file builder ---------------------------------------------- */

typedef struct mbuild {
    attempt *a;
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
} mbuild;

static void mb_free(mbuild *b) {
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

static int mb_open(mbuild *b, attempt *a, pm_err *e) {
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
        mb_free(b);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    int rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_FILE, a->o->codec, a->o->level, &b->w, e);
    if (rc) mb_free(b);
    return rc;
}

static int encode_row(mbuild *b, const pm_datum *v, pm_buf *dst, pm_err *e) {
    pm_buf tmp = {0};
    int rc = pm_binrow_encode(b->a->t->part_types, b->np, v, &tmp, e);
    if (rc) { pm_buf_free(&tmp); return rc; }
    pm_buf_free(dst);
    *dst = tmp;
    return PAIMON_OK;
}

static int mb_partition(mbuild *b, const pm_manifest_entry *m, pm_err *e) {
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
    int chmin = 0, chmax = 0;
    if (b->n == 0) {
        for (size_t i = 0; i < np; i++) b->mins[i] = b->maxs[i] = b->vals[i];
        chmin = chmax = 1;
    } else {
        if ((rc = pm_binrow_decode(b->pmin.data, b->pmin.len, t->part_types, np, b->mins, e)) ||
            (rc = pm_binrow_decode(b->pmax.data, b->pmax.len, t->part_types, np, b->maxs, e)))
            return rc;
        for (size_t i = 0; i < np; i++) {
            const pm_datum *v = &b->vals[i];
            if (v->is_null) continue;
            if (b->mins[i].is_null || cmp_datum(t->part_types[i], v, &b->mins[i]) < 0) { b->mins[i] = *v; chmin = 1; }
            if (b->maxs[i].is_null || cmp_datum(t->part_types[i], v, &b->maxs[i]) > 0) { b->maxs[i] = *v; chmax = 1; }
        }
    }
    for (size_t i = 0; i < np; i++) {
        b->last_null[i] = (uint8_t)(b->vals[i].is_null != 0);
        b->nulls[i] += b->last_null[i];
    }
    if (chmin && (rc = encode_row(b, b->mins, &b->pmin, e))) return rc;
    if (chmax && (rc = encode_row(b, b->maxs, &b->pmax, e))) return rc;
    b->lastp.len = 0;
    if (pm_buf_append(&b->lastp, m->partition.ptr, m->partition.len)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    b->lastp_valid = 1;
    return PAIMON_OK;
}

static int mb_add(mbuild *b, const pm_manifest_entry *m, pm_err *e) {
    int rc = mb_partition(b, m, e);
    if (rc) return rc;
    if ((rc = pm_manifest_write_entry(b->w, m, e))) return rc;
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

/* Write the file and describe it in *out. Frees the builder. */
static int mb_finish(mbuild *b, own_meta *out, pm_err *e) {
    memset(out, 0, sizeof *out);
    int rc = PAIMON_OK;
    if (b->np == 0 || b->n == 0) {
        for (size_t i = 0; i < b->np; i++) b->mins[i].is_null = 1;
        if ((rc = encode_row(b, b->mins, &b->pmin, e)) || (rc = encode_row(b, b->mins, &b->pmax, e))) {
            mb_free(b);
            return rc;
        }
    }
    pm_buf bytes = {0};
    pm_avro_writer *w = b->w;
    b->w = NULL;
    rc = pm_avro_writer_finish(w, &bytes, e);
    char *name = NULL;
    if (!rc) rc = write_manifest_file(b->a, MF_MANIFEST, &bytes, &name, e);
    if (rc) { pm_buf_free(&bytes); mb_free(b); return rc; }
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
    own_meta_fix(out);
    pm_buf_free(&bytes);
    mb_free(b);
    return PAIMON_OK;
}

/* Write a manifest list with the given records. */
static int write_list(attempt *a, const own_meta *v, size_t n, char **name, int64_t *size, pm_err *e) {
    pm_avro_writer *w;
    int rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_LIST, a->o->codec, a->o->level, &w, e);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = pm_manifest_write_meta(w, &v[i].m, e))) { pm_avro_writer_abort(w); return rc; }
    pm_buf bytes = {0};
    if ((rc = pm_avro_writer_finish(w, &bytes, e))) return rc;
    rc = write_manifest_file(a, MF_LIST, &bytes, name, e);
    *size = (int64_t)bytes.len;
    pm_buf_free(&bytes);
    return rc;
}

/* ---- rolling manifest writer (Java RollingFileWriter) ------------------- */

/* Java checks the written size every CHECK_ROLLING_RECORD_CNT records
 * (counted over all files of the writer). */
#define ROLL_CHECK_RECORDS 1000

typedef struct mroll {
    attempt *a;
    mbuild mb;
    int open;
    int64_t records;
    own_meta **out;       /* finished files are appended here */
    size_t *n_out, *cap;
} mroll;

static void mr_init(mroll *r, attempt *a, own_meta **out, size_t *n_out, size_t *cap) {
    memset(r, 0, sizeof *r);
    r->a = a;
    r->out = out;
    r->n_out = n_out;
    r->cap = cap;
}

static int mr_close_current(mroll *r, pm_err *e) {
    if (!r->open) return PAIMON_OK;
    r->open = 0;
    if (r->mb.n == 0) {
        mb_free(&r->mb);
        return PAIMON_OK;
    }
    own_meta *slot;
    if (metas_push(r->out, r->n_out, r->cap, &slot)) {
        mb_free(&r->mb);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    int rc = mb_finish(&r->mb, slot, e);
    if (rc) (*r->n_out)--;
    return rc;
}

/* Add an entry; rolls to a new file once the current one (header + flushed
 * blocks) reached manifest.target-file-size. */
static int mr_add(mroll *r, const pm_manifest_entry *m, pm_err *e) {
    int rc;
    if (!r->open) {
        if ((rc = mb_open(&r->mb, r->a, e))) return rc;
        r->open = 1;
    }
    if ((rc = mb_add(&r->mb, m, e))) return rc;
    r->records++;
    if (r->records % ROLL_CHECK_RECORDS == 0 && pm_avro_writer_bytes(r->mb.w) >= r->a->o->manifest_target_size)
        return mr_close_current(r, e);
    return PAIMON_OK;
}

static int mr_finish(mroll *r, pm_err *e) { return mr_close_current(r, e); }

static void mr_abort(mroll *r) {
    if (r->open) mb_free(&r->mb);
    r->open = 0;
}

/* ---- messages ------------------------------------------------------------ */

/* "file X in partition P" into buf (NUL-terminated). */
static void describe_file(paimon_table *t, const pm_manifest_entry *m, pm_buf *out) {
    pm_buf p = {0};
    pm_err e2;
    out->len = 0;
    if (t->n_part == 0) pm_buf_printf(&p, "(unpartitioned)");
    else if (pm_table_partition_path(t, m->partition, &p, &e2) == PAIMON_OK && p.len && p.data[p.len - 1] == '/')
        p.len--;
    pm_buf_cstr(&p);
    pm_buf_printf(out, "file %s in partition %s bucket %d", m->file.file_name,
                  p.data ? (const char *)p.data : "?", (int)m->bucket);
    pm_buf_cstr(out);
    pm_buf_free(&p);
}

/* ---- manifest merge (ManifestFileMerger minor compaction) ----------------- */

static int for_each_entry(paimon_table *t, const own_meta *v, size_t n,
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
    idmap map;
    pm_buf key;
    int64_t seq;
    mroll *mr;
} merge_ctx;

static int merge_pass1(void *p, const pm_manifest_entry *m, pm_err *e) {
    merge_ctx *c = p;
    if (pm_file_identifier(m, &c->key)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    idslot *s = idmap_find(&c->map, c->key.data, c->key.len);
    int64_t seq = c->seq++;
    if (m->kind == PM_FILE_ADD) {
        if (s) {
            pm_buf d = {0};
            describe_file(c->t, m, &d);
            int rc = pm_fail(e, PAIMON_CORRUPT, "%s: trying to add %s which is already added",
                             c->t->root, d.data ? (char *)d.data : "?");
            pm_buf_free(&d);
            return rc;
        }
    } else if (s) {
        idmap_del(&c->map, s);
        return PAIMON_OK;
    }
    if (idmap_put(&c->map, c->key.data, c->key.len, seq, m->kind)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

static int merge_pass2(void *p, const pm_manifest_entry *m, pm_err *e) {
    merge_ctx *c = p;
    if (pm_file_identifier(m, &c->key)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    idslot *s = idmap_find(&c->map, c->key.data, c->key.len);
    int64_t seq = c->seq++;
    if (s && s->val == seq) return mr_add(c->mr, m, e);
    return PAIMON_OK;
}

/* Merge a group of manifests into new file(s) appended to out. */
static int merge_group(attempt *a, const own_meta *g, size_t n, own_meta **out, size_t *n_out, size_t *cap,
                       pm_err *e) {
    own_meta *slot;
    if (n == 1) {
        if (metas_push(out, n_out, cap, &slot) || own_meta_copy(slot, &g[0].m)) {
            if (*n_out && !(*out)[*n_out - 1].name) (*n_out)--;
            return pm_fail(e, PAIMON_NOMEM, "out of memory");
        }
        return PAIMON_OK;
    }
    merge_ctx c;
    memset(&c, 0, sizeof c);
    c.t = a->t;
    int rc = for_each_entry(a->t, g, n, merge_pass1, &c, e);
    if (!rc && c.map.n) {
        mroll r;
        mr_init(&r, a, out, n_out, cap);
        c.mr = &r;
        c.seq = 0;
        rc = for_each_entry(a->t, g, n, merge_pass2, &c, e);
        if (!rc) rc = mr_finish(&r, e);
        else mr_abort(&r);
    }
    idmap_free(&c.map);
    pm_buf_free(&c.key);
    return rc;
}

static int merge_minor(attempt *a, const own_meta *in, size_t n, own_meta **out, size_t *n_out, pm_err *e) {
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
        own_metas_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return rc;
}


/* ---- manifest merge: full compaction (ManifestFileMerger.tryFullCompaction) */

static int must_change(const attempt *a, const own_meta *m) {
    return m->m.num_deleted_files > 0 || m->m.file_size < a->o->manifest_target_size;
}

typedef struct full_ctx {
    paimon_table *t;
    pm_set *dels, *parts;
    mbuild *pstats;          /* partition stats of the deleted files (no writer) */
    mroll *mr;               /* output */
    pm_buf key;
    int require;
} full_ctx;

static int full_collect_deletes(void *p, const pm_manifest_entry *m, pm_err *e) {
    full_ctx *c = p;
    if (m->kind != PM_FILE_DELETE) return PAIMON_OK;
    if (pm_file_identifier(m, &c->key) || pm_set_add(c->dels, c->key.data, c->key.len) < 0)
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int added = pm_set_add(c->parts, m->partition.ptr, m->partition.len);
    if (added < 0) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if (added) {
        int rc = mb_partition(c->pstats, m, e);
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
    return mr_add(c->mr, m, e);
}

/* Java's MultiplePartitionPredicate over a manifest's partition stats: per
 * field, file.max >= min(deleted) and file.min <= max(deleted) (IS NULL when
 * the deleted partitions only have nulls there). Unknown stats -> 1. */
static int may_contain_deleted(full_ctx *c, const own_meta *f, const pm_datum *dmin, const pm_datum *dmax) {
    paimon_table *t = c->t;
    size_t np = t->n_part;
    if (np == 0) return 1;
    pm_datum fmin[16], fmax[16];
    if (np > 16) return 1;
    pm_err e2;
    const pm_stats *st = &f->m.partition_stats;
    if (pm_binrow_decode(st->min_values.ptr, st->min_values.len, t->part_types, np, fmin, &e2) ||
        pm_binrow_decode(st->max_values.ptr, st->max_values.len, t->part_types, np, fmax, &e2))
        return 1;
    int64_t rows = f->m.num_added_files + f->m.num_deleted_files;
    for (size_t i = 0; i < np; i++) {
        int has_nc = i < st->n_null_counts && !(st->null_count_is_null && st->null_count_is_null[i]);
        int64_t nc = has_nc ? st->null_counts[i] : 0;
        if (dmin[i].is_null) {                       /* IS NULL */
            if (has_nc && nc <= 0) return 0;
            continue;
        }
        int all_null = has_nc && nc == rows;
        if (!all_null && (fmin[i].is_null || fmax[i].is_null)) continue;   /* unknown */
        if (all_null) return 0;
        if (cmp_datum(t->part_types[i], &fmax[i], &dmin[i]) < 0) return 0;
        if (cmp_datum(t->part_types[i], &fmin[i], &dmax[i]) > 0) return 0;
    }
    return 1;
}

/* Sets *done = 1 and fills *out when a full compaction happened. */
static int merge_full(attempt *a, const own_meta *in, size_t n, own_meta **out, size_t *n_out, int *done,
                      pm_err *e) {
    *done = 0;
    int64_t delta_size = 0;
    for (size_t i = 0; i < n; i++)
        if (must_change(a, &in[i])) delta_size += in[i].m.file_size;
    int64_t trigger = a->o->full_compaction_threshold > 0 ? a->o->full_compaction_threshold : 1;
    if (delta_size < trigger) return PAIMON_OK;

    paimon_table *t = a->t;
    full_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    mbuild pstats;
    mroll roll;
    own_meta *rolled = NULL;
    size_t n_rolled = 0, cap_rolled = 0;
    int have_pstats = 0, have_roll = 0;
    uint8_t *keep = calloc(n ? n : 1, 1);     /* 1: left untouched up front */
    size_t cap = 0;
    pm_datum dmin[16], dmax[16];
    c.dels = pm_set_new();
    c.parts = pm_set_new();
    int rc = PAIMON_OK;
    if (!keep || !c.dels || !c.parts) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto out; }
    if ((rc = mb_open(&pstats, a, e))) goto out;
    have_pstats = 1;
    pm_avro_writer_abort(pstats.w);
    pstats.w = NULL;
    c.pstats = &pstats;
    for (size_t i = 0; i < n && !rc; i++)
        if (in[i].m.num_deleted_files > 0) rc = for_each_entry(t, &in[i], 1, full_collect_deletes, &c, e);
    if (rc) goto out;

    /* 2.2 skip files that cannot hold a deleted partition */
    size_t np = t->n_part;
    int pred_false = pm_set_size(c.dels) == 0;
    int pred_true = !pred_false && (np == 0 || np > 16);
    if (!pred_false && !pred_true) {
        if ((rc = pm_binrow_decode(pstats.pmin.data, pstats.pmin.len, t->part_types, np, dmin, e)) ||
            (rc = pm_binrow_decode(pstats.pmax.data, pstats.pmax.len, t->part_types, np, dmax, e)))
            goto out;
    }
    size_t to_merge = 0;
    for (size_t i = 0; i < n; i++) {
        if (!must_change(a, &in[i]) && !pred_true &&
            (pred_false || !may_contain_deleted(&c, &in[i], dmin, dmax)))
            keep[i] = 1;
        else
            to_merge++;
    }
    if (to_merge <= 1) goto out;   /* fall back to minor compaction */

    own_meta *slot;
    for (size_t i = 0; i < n && !rc; i++)
        if (keep[i]) {
            if (metas_push(out, n_out, &cap, &slot) || own_meta_copy(slot, &in[i].m)) {
                if (*n_out && !(*out)[*n_out - 1].name) (*n_out)--;
                rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
            }
        }
    if (rc) goto out;
    mr_init(&roll, a, &rolled, &n_rolled, &cap_rolled);
    have_roll = 1;
    c.mr = &roll;
    for (size_t i = 0; i < n && !rc; i++) {
        if (keep[i]) continue;
        c.require = must_change(a, &in[i]);
        if (!c.require) {
            rc = for_each_entry(t, &in[i], 1, full_check, &c, e);
            if (rc == PAIMON_DONE) rc = PAIMON_OK;
        }
        if (rc) break;
        if (c.require) {
            rc = for_each_entry(t, &in[i], 1, full_write, &c, e);
        } else if (metas_push(out, n_out, &cap, &slot) || own_meta_copy(slot, &in[i].m)) {
            if (*n_out && !(*out)[*n_out - 1].name) (*n_out)--;
            rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
        }
    }
    if (rc) goto out;
    have_roll = 0;
    if ((rc = mr_finish(&roll, e))) goto out;
    /* Java: the rewritten manifests come after the kept ones. */
    for (size_t i = 0; i < n_rolled && !rc; i++) {
        if (metas_push(out, n_out, &cap, &slot)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
        *slot = rolled[i];
        memset(&rolled[i], 0, sizeof rolled[i]);
    }
    if (rc) goto out;
    *done = 1;
out:
    if (have_roll) mr_abort(&roll);
    own_metas_free(rolled, n_rolled);
    if (have_pstats) mb_free(&pstats);
    pm_set_free(c.dels);
    pm_set_free(c.parts);
    pm_buf_free(&c.key);
    free(keep);
    if (rc || !*done) {
        own_metas_free(*out, *n_out);
        *out = NULL;
        *n_out = 0;
    }
    return rc;
}

/* ManifestFileMerger.merge: full compaction if triggered, else minor. */
static int merge_manifests(attempt *a, const own_meta *in, size_t n, own_meta **out, size_t *n_out, pm_err *e) {
    *out = NULL;
    *n_out = 0;
    int done = 0;
    int rc = merge_full(a, in, n, out, n_out, &done, e);
    if (rc || done) return rc;
    return merge_minor(a, in, n, out, n_out, e);
}

/* ---- conflict detection --------------------------------------------------- */

static int conflict_at(paimon_table *t, const pm_manifest_entry *m, pm_err *e, const char *fmt_tail,
                       long long snap) {
    pm_buf d = {0};
    describe_file(t, m, &d);
    int rc;
    if (snap > 0)
        rc = pm_fail(e, PAIMON_CONFLICT, "commit conflict in %s: %s %s %lld", t->root,
                     d.data ? (char *)d.data : "?", fmt_tail, snap);
    else
        rc = pm_fail(e, PAIMON_CONFLICT, "commit conflict in %s: %s %s", t->root,
                     d.data ? (char *)d.data : "?", fmt_tail);
    pm_buf_free(&d);
    return rc;
}

/* Total-bucket consistency (not for OVERWRITE): within a partition every
 * entry with _TOTAL_BUCKETS > 0 agrees. 0 if fine, else the conflict. */
static int check_buckets(paimon_table *t, idmap *tb, const pm_manifest_entry *m, pm_err *e) {
    if (m->total_buckets <= 0) return PAIMON_OK;
    idslot *s = idmap_find(tb, m->partition.ptr, m->partition.len);
    if (!s) {
        if (idmap_put(tb, m->partition.ptr, m->partition.len, m->total_buckets, 0))
            return pm_fail(e, PAIMON_NOMEM, "out of memory");
        return PAIMON_OK;
    }
    if (s->val == m->total_buckets) return PAIMON_OK;
    pm_buf d = {0};
    describe_file(t, m, &d);
    int rc = pm_fail(e, PAIMON_CONFLICT,
                     "commit conflict in %s: total buckets of the partition of %s changed from %lld to %d "
                     "without overwrite",
                     t->root, d.data ? (char *)d.data : "?", (long long)s->val, (int)m->total_buckets);
    pm_buf_free(&d);
    return rc;
}

/* Java ConflictDetection: the delta must merge on its own, base + delta
 * must merge leaving no DELETE (every deleted file live in latest, no added
 * file already live), and (unless overwriting) total buckets agree within
 * each changed partition. */
static int check_conflicts(paimon_table *t, const pm_snapshot *latest, const pm_manifest_entry *ents, size_t n,
                           int overwrite, pm_err *e) {
    idmap map = {0}, tb = {0};
    pm_set *touched = NULL;
    pm_buf key = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        if (pm_file_identifier(&ents[i], &key)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
        idslot *s = idmap_find(&map, key.data, key.len);
        if (ents[i].kind == PM_FILE_ADD) {
            if (s) {
                rc = conflict_at(t, &ents[i], e, s->kind == PM_FILE_ADD ? "is added twice in this commit"
                                                                        : "is deleted and added again in this commit", 0);
                break;
            }
        } else if (s) {
            idmap_del(&map, s);
            continue;
        }
        if (idmap_put(&map, key.data, key.len, (int64_t)i, ents[i].kind)) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    int buckets = !overwrite && n > 0;
    if (!rc && buckets) {
        touched = pm_set_new();
        if (!touched) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
        for (size_t i = 0; i < n && !rc; i++)
            if (pm_set_add(touched, ents[i].partition.ptr, ents[i].partition.len) < 0)
                rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    size_t deletes = 0;
    for (size_t i = 0; i < map.cap; i++) if (map.s[i].state == 1 && map.s[i].kind == PM_FILE_DELETE) deletes++;
    if (!rc && latest && (map.n || buckets)) {
        pm_scan *sc;
        if (!(rc = pm_scan_open(t, latest, NULL, &sc, e))) {
            const pm_manifest_entry *m;
            while ((rc = pm_scan_next(sc, &m, e)) == PAIMON_OK) {
                if (pm_file_identifier(m, &key)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
                idslot *s = idmap_find(&map, key.data, key.len);
                if (s && s->kind == PM_FILE_ADD) {
                    rc = conflict_at(t, &ents[s->val], e, "is already live in snapshot", (long long)latest->id);
                    break;
                }
                if (s && s->kind == PM_FILE_DELETE) {
                    s->kind = -1;   /* matched */
                    deletes--;
                    continue;       /* removed by this commit */
                }
                if (buckets && pm_set_contains(touched, m->partition.ptr, m->partition.len) &&
                    (rc = check_buckets(t, &tb, m, e)))
                    break;
            }
            pm_scan_close(sc);
            if (rc == PAIMON_DONE) rc = PAIMON_OK;
        }
    }
    /* Java order: live entries of the changed partitions, then the delta. */
    for (size_t i = 0; i < n && !rc && buckets; i++) rc = check_buckets(t, &tb, &ents[i], e);
    if (!rc && deletes) {
        /* Report the first unmatched DELETE in commit order. */
        size_t first = n;
        for (size_t i = 0; i < map.cap; i++)
            if (map.s[i].state == 1 && map.s[i].kind == PM_FILE_DELETE && (size_t)map.s[i].val < first)
                first = (size_t)map.s[i].val;
        if (latest) rc = conflict_at(t, &ents[first], e, "is not live in snapshot", (long long)latest->id);
        else rc = conflict_at(t, &ents[first], e, "is not live (the table has no snapshot)", 0);
    }
    idmap_free(&map);
    idmap_free(&tb);
    pm_set_free(touched);
    pm_buf_free(&key);
    return rc;
}

/* ---- index manifest (IndexManifestFileHandler, paimon-format.md §7.5) ------ */

#define IX_DV "DELETION_VECTORS"
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
    if (!strcmp(type, IX_DV)) return unaware;
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

/* The combined index file set: previous entries (arena copies) first, in
 * file order, then this commit's ADDs; alive[i] = 0 once removed. */
typedef struct ixset {
    const pm_index_entry **v;
    uint8_t *alive;
    size_t n, cap, n_prev;
} ixset;

static void ixset_free(ixset *s) {
    free(s->v);
    free(s->alive);
    memset(s, 0, sizeof *s);
}

static int ixset_push(ixset *s, const pm_index_entry *x) {
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
static int combine_index(paimon_table *t, const pm_snapshot *latest, const pm_index_entry *ix, size_t n_ix,
                         pm_arena *arena, ixset *out, pm_err *e) {
    idmap keys = {0}, exact = {0};
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
        idslot *s = idmap_find(&keys, k.data, k.len);
        if (s) {                       /* Java's map keeps the later one */
            out->alive[s->val] = 0;
            s->val = (int64_t)i;
        } else if (idmap_put(&keys, k.data, k.len, (int64_t)i, 0)) IX_OOM();
        if (ix_exact(x, &k)) IX_OOM();
        if (!idmap_find(&exact, k.data, k.len) && idmap_put(&exact, k.data, k.len, (int64_t)i, 0)) IX_OOM();
        if (by_name && !strcmp(x->index_type, IX_DV))
            for (size_t j = 0; j < x->n_dv_ranges; j++)
                if (x->dv_ranges[j].data_file &&
                    pm_set_add(dvfiles, x->dv_ranges[j].data_file, strlen(x->dv_ranges[j].data_file)) < 0)
                    IX_OOM();
    }
    /* Every DELETE names an index file of the latest index manifest. */
    for (size_t i = 0; i < n_ix; i++) {
        if (ix[i].kind != PM_FILE_DELETE) continue;
        if (ix_exact(&ix[i], &k)) IX_OOM();
        if (!idmap_find(&exact, k.data, k.len)) {
            rc = ix_conflict(t, &ix[i], latest, "is not in the index manifest of the latest snapshot", e);
            goto out;
        }
    }
    /* Deletion vectors of bucket-unaware tables: in commit order. */
    for (size_t i = 0; i < n_ix && unaware; i++) {
        const pm_index_entry *x = &ix[i];
        if (strcmp(x->index_type, IX_DV)) continue;
        if (ix_key(x, 1, &k)) IX_OOM();
        idslot *s = idmap_find(&keys, k.data, k.len);
        if (x->kind == PM_FILE_ADD) {
            if (s) { rc = ix_conflict(t, x, latest, "is already added", e); goto out; }
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
            if (ixset_push(out, x) || idmap_put(&keys, k.data, k.len, (int64_t)(out->n - 1), 0)) IX_OOM();
        } else {
            if (!s) { rc = ix_conflict(t, x, latest, "is deleted twice in this commit", e); goto out; }
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
            out->alive[s->val] = 0;
            idmap_del(&keys, s);
        }
    }
    /* Other groups: every DELETE first, then the ADDs overwrite. */
    for (size_t i = 0; i < n_ix; i++) {
        const pm_index_entry *x = &ix[i];
        if (x->kind != PM_FILE_DELETE || (unaware && !strcmp(x->index_type, IX_DV))) continue;
        if (ix_key(x, ix_by_name(unaware, x->index_type), &k)) IX_OOM();
        idslot *s = idmap_find(&keys, k.data, k.len);
        if (s) {
            out->alive[s->val] = 0;
            idmap_del(&keys, s);
        }
    }
    for (size_t i = 0; i < n_ix; i++) {
        const pm_index_entry *x = &ix[i];
        if (x->kind != PM_FILE_ADD || (unaware && !strcmp(x->index_type, IX_DV))) continue;
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
        idslot *s = idmap_find(&keys, k.data, k.len);
        if (s) {
            out->alive[s->val] = 0;
            s->val = (int64_t)(out->n - 1);
        } else if (idmap_put(&keys, k.data, k.len, (int64_t)(out->n - 1), 0)) IX_OOM();
    }
#undef IX_OOM
out:
    idmap_free(&keys);
    idmap_free(&exact);
    pm_set_free(dvfiles);
    pm_buf_free(&k);
    if (rc) ixset_free(out);
    return rc;
}

/* Write the combined set as a new index manifest of this attempt. */
static int write_index_manifest(attempt *a, const ixset *s, char **name, pm_err *e) {
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
    rc = write_manifest_file(a, MF_INDEX, &bytes, name, e);
    pm_buf_free(&bytes);
    return rc;
}

/* ---- one attempt ------------------------------------------------------------ */

static int total_from_scan(paimon_table *t, const pm_snapshot *s, int64_t *total, pm_err *e) {
    pm_scan *sc;
    int rc = pm_scan_open(t, s, NULL, &sc, e);
    if (rc) return rc;
    const pm_manifest_entry *m;
    *total = 0;
    while ((rc = pm_scan_next(sc, &m, e)) == PAIMON_OK) *total += m->file.row_count;
    pm_scan_close(sc);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

static char *snapshot_path(const paimon_table *t, int64_t id) {
    char rel[64];
    snprintf(rel, sizeof rel, "snapshot/snapshot-%lld", (long long)id);
    return pm_path_join(t->branch_root, rel);
}

/* One file the new snapshot references, checked right before publishing;
 * what: "data file", "manifest", ... for the message. Remote paths are not
 * checked (orphan cleaning never lists them). */
static int must_still_exist(paimon_table *t, const char *path, const char *what, pm_err *e) {
    if (strstr(path, "://")) return PAIMON_OK;
    int exists = 0;
    int rc = pm_io_exists(t->io, path, &exists, e);
    if (rc) {
        pm_err_prefix(e, "commit to %s aborted: cannot check that %s %s still exists", t->root, what, path);
        return rc;
    }
    if (!exists)
        return pm_fail(e, PAIMON_CONFLICT, "commit to %s aborted, nothing published: %s %s of this commit is "
                       "missing (deleted while the commit was in flight, e.g. by orphan cleaning with a young "
                       "cut-off)", t->root, what, path);
    return PAIMON_OK;
}

/* Every file the new snapshot newly references must still exist: a file of
 * a commit in flight is in no snapshot yet, so a concurrent orphan
 * cleaning (or a hand) may have deleted it, and publishing would break the
 * table for good; failing leaves it whole. One exists() per file: this
 * attempt's manifests, lists and index manifest, the data files it adds
 * with their extra files, and the index files it adds. What remains is a
 * deletion between this check and the snapshot link (docs/maintenance.md). */
static int check_new_files_exist(attempt *a, const pm_manifest_entry *ents, size_t n, const pm_index_entry *ix,
                                 size_t n_ix, pm_err *e) {
    paimon_table *t = a->t;
    pm_buf path = {0}, extra = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; i < a->n_written && !rc; i++) rc = must_still_exist(t, a->written[i], "metadata file", e);
    for (size_t i = 0; i < n && !rc; i++) {
        if (ents[i].kind != PM_FILE_ADD) continue;
        if ((rc = pm_data_file_full_path(t, &ents[i], &path, e)) ||
            (rc = must_still_exist(t, (char *)path.data, "data file", e)))
            break;
        for (size_t k = 0; k < ents[i].file.extra_files.n && !rc; k++)
            if (!(rc = pm_extra_file_path((char *)path.data, ents[i].file.extra_files.v[k], t->root, &extra, e)))
                rc = must_still_exist(t, (char *)extra.data, "extra file", e);
    }
    for (size_t i = 0; i < n_ix && !rc; i++) {
        if (ix[i].kind != PM_FILE_ADD) continue;
        if (!(rc = pm_index_file_path(t, &ix[i], &path, e))) rc = must_still_exist(t, (char *)path.data, "index file", e);
    }
    pm_buf_free(&path);
    pm_buf_free(&extra);
    return rc;
}

/* PAIMON_OK (committed, *out_id set), PAIMON_EXISTS (lost the race; this
 * attempt's files removed), or an error. */
static int try_commit_once(attempt *a, const pm_manifest_entry *ents, size_t n, const pm_index_entry *ix,
                           size_t n_ix, const char *kind, int need_check, int64_t *out_id, pm_err *e) {
    paimon_table *t = a->t;
    pm_snapshot *latest = NULL;
    own_meta *before = NULL, *after = NULL, *delta = NULL;
    size_t n_before = 0, cap_before = 0, n_after = 0, n_delta = 0, cap_delta = 0;
    char *base_name = NULL, *delta_name = NULL, *index_name = NULL, *path = NULL;
    pm_arena *ix_arena = NULL;
    ixset ixs;
    memset(&ixs, 0, sizeof ixs);
    int64_t base_size = 0, delta_size = 0;
    int64_t *sids = NULL;
    size_t n_sids = 0;
    pm_buf json = {0};
    int published = 0;

    pm_uuid4(a->uuid);
    a->n_manifest = a->n_list = a->n_index = 0;
    a->last_uncertain = 0;
    a->write_hint = 1;

    int64_t lid = 0;
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &lid, e);
    if (rc == PAIMON_NOTFOUND) { lid = 0; rc = PAIMON_OK; pm_err_clear(e); }
    if (rc) goto done;

    /* Retry after an uncertain failure: did that attempt commit after all? */
    if (a->uncertain) {
        for (int64_t i = a->scan_from + 1; i <= lid; i++) {
            pm_snapshot *got = NULL;
            rc = pm_snapshot_read(t->io, t->branch_root, i, &got, e);
            if (rc == PAIMON_NOTFOUND) { rc = PAIMON_OK; pm_err_clear(e); continue; }
            if (rc) goto done;
            int same = got->commit_user && !strcmp(got->commit_user, a->o->commit_user) &&
                       got->commit_identifier == a->o->identifier && got->commit_kind &&
                       !strcmp(got->commit_kind, kind);
            pm_snapshot_free(got);
            if (same) {
                *out_id = i;
                a->write_hint = i == lid;
                goto done;
            }
        }
    }
    if (lid > 0 && (rc = pm_snapshot_read(t->io, t->branch_root, lid, &latest, e))) goto done;
    int64_t id = lid + 1;

    if ((rc = pm_schema_list_ids(t->io, t->branch_root, &sids, &n_sids, e))) goto done;
    int64_t schema_id = n_sids ? sids[n_sids - 1] : (t->schema ? t->schema->id : 0);

    if (need_check && (rc = check_conflicts(t, latest, ents, n, !strcmp(kind, "OVERWRITE"), e))) goto done;

    /* Index changes: a new complete index manifest (step 9), combined and
     * checked before anything is written. */
    if (n_ix) {
        if (!(ix_arena = pm_arena_new(1 << 14))) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto done; }
        if ((rc = combine_index(t, latest, ix, n_ix, ix_arena, &ixs, e))) goto done;
        if ((rc = write_index_manifest(a, &ixs, &index_name, e))) goto done;
    }

    /* Base manifest list = merged manifests of latest. */
    if (latest) {
        if (latest->base_manifest_list &&
            (rc = read_metas(t, latest->base_manifest_list, &before, &n_before, &cap_before, e))) goto done;
        if (latest->delta_manifest_list &&
            (rc = read_metas(t, latest->delta_manifest_list, &before, &n_before, &cap_before, e))) goto done;
    }
    if ((rc = merge_manifests(a, before, n_before, &after, &n_after, e))) goto done;
    if ((rc = write_list(a, after, n_after, &base_name, &base_size, e))) goto done;

    /* Delta manifest + list. */
    int64_t delta_rows = 0;
    if (n) {
        mroll r;
        mr_init(&r, a, &delta, &n_delta, &cap_delta);
        for (size_t i = 0; i < n && !rc; i++) {
            rc = mr_add(&r, &ents[i], e);
            delta_rows += ents[i].kind == PM_FILE_ADD ? ents[i].file.row_count : -ents[i].file.row_count;
        }
        if (!rc) rc = mr_finish(&r, e);
        else mr_abort(&r);
        if (rc) goto done;
    }
    if ((rc = write_list(a, delta, n_delta, &delta_name, &delta_size, e))) goto done;

    int64_t prev_total = 0;
    if (latest) {
        if (latest->total_record_count.has) prev_total = latest->total_record_count.v;
        else if ((rc = total_from_scan(t, latest, &prev_total, e))) goto done;
    }

    char snap_uuid[37];
    pm_uuid4(snap_uuid);
    pm_snapshot s;
    memset(&s, 0, sizeof s);
    s.version = 3;
    s.uuid = snap_uuid;
    s.id = id;
    s.schema_id = schema_id;
    s.base_manifest_list = base_name;
    s.base_manifest_list_size = (pm_opt_i64){1, base_size};
    s.delta_manifest_list = delta_name;
    s.delta_manifest_list_size = (pm_opt_i64){1, delta_size};
    s.index_manifest = n_ix ? index_name : latest ? latest->index_manifest : NULL;
    s.commit_user = (char *)a->o->commit_user;
    s.commit_identifier = a->o->identifier;
    s.commit_kind = (char *)kind;
    s.time_millis = pm_now_millis();
    s.total_record_count = (pm_opt_i64){1, prev_total + delta_rows};
    s.delta_record_count = (pm_opt_i64){1, delta_rows};
    if (latest) s.watermark = latest->watermark;
    if (latest && latest->schema_id == schema_id) s.statistics = latest->statistics;
    s.next_row_id = (pm_opt_i64){1, latest && latest->next_row_id.has ? latest->next_row_id.v : 0};
    if (pm_snapshot_to_json(&s, &json)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto done; }

    path = snapshot_path(t, id);
    if (!path) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto done; }
    if ((rc = check_new_files_exist(a, ents, n, ix, n_ix, e))) goto done;
    rc = pm_io_create_no_replace(t->io, path, json.data, json.len, e);
    if ((rc == PAIMON_OK || rc == PAIMON_UNCERTAIN) && lid > 0) {
        /* The snapshot we built on must still exist. If an expiration
         * deleted it before our create, it also deleted this id (committed
         * by someone else; snapshot files go in ascending order) and kept
         * newer ones: we re-created an expired id below EARLIEST, a lost
         * commit, and our LATEST hint would send readers back to it. Then
         * a newer snapshot exists; take ours back and retry on the real
         * latest. (Without a newer snapshot we are the latest and an
         * expiration removed our base after we committed: keep it.) */
        char *base_path = snapshot_path(t, lid);
        int ex = 1;
        int64_t now_latest = 0;
        pm_err e2;
        if (base_path && pm_io_exists(t->io, base_path, &ex, &e2) == PAIMON_OK && !ex &&
            pm_snapshot_latest_id(t->io, t->branch_root, &now_latest, &e2) == PAIMON_OK && now_latest > id) {
            if (pm_io_remove(t->io, path, &e2) == PAIMON_OK)
                rc = pm_fail(e, PAIMON_EXISTS, "%s: snapshot %lld was expired while committing on top of it",
                             t->root, (long long)lid);
            else   /* our snapshot file stays: keep what it names */
                published = 1, rc = pm_fail(e, PAIMON_IO, "%s: snapshot %lld was expired while committing on top "
                                            "of it and %s cannot be removed: %s", t->root, (long long)lid, path, e2.msg);
        }
        free(base_path);
    }
    if (rc == PAIMON_OK) {
        published = 1;
    } else if (published) {
    } else if (rc == PAIMON_UNCERTAIN) {
        /* Our snapshot is in place and readers may already use it, but its
         * directory entry may not survive a crash: not a success, and no
         * retry either (that would commit the same changes twice). */
        published = 1;
        pm_err_prefix(e, "commit to %s: snapshot %lld is written but not known to be durable (its manifests are "
                      "kept; check that the snapshot exists before committing these changes again)",
                      t->root, (long long)id);
    } else if (rc != PAIMON_EXISTS) {
        /* Uncertain: the snapshot may have been created. Never delete. */
        pm_snapshot *got = NULL;
        pm_err e2;
        if (pm_snapshot_read(t->io, t->branch_root, id, &got, &e2) == PAIMON_OK && got->uuid &&
            !strcmp(got->uuid, snap_uuid)) {
            rc = PAIMON_OK;
            pm_err_clear(e);
        }
        pm_snapshot_free(got);
        published = 1;   /* keep files either way */
        if (rc) {
            a->last_uncertain = 1;
            if (!a->uncertain) {
                a->uncertain = 1;
                a->scan_from = lid;
            }
        }
    }
    if (rc == PAIMON_OK) *out_id = id;

done:
    /* A manifest or snapshot of our base vanished while we read it: if the
     * base snapshot itself is gone, an expiration overtook us. That is a
     * lost race (retry on the new latest), not corruption. */
    if (rc == PAIMON_NOTFOUND && !published && lid > 0) {
        char name[64];
        snprintf(name, sizeof name, "snapshot/snapshot-%lld", (long long)lid);
        char *sp = pm_path_join(t->branch_root, name);
        int exists = 1;
        pm_err ignored = {0};
        if (sp && pm_io_exists(t->io, sp, &exists, &ignored) == PAIMON_OK && !exists) rc = PAIMON_EXISTS;
        free(sp);
    }
    if (published) attempt_forget(a);
    else attempt_cleanup(a);
    pm_snapshot_free(latest);
    own_metas_free(before, n_before);
    own_metas_free(after, n_after);
    own_metas_free(delta, n_delta);
    free(base_name);
    free(delta_name);
    free(index_name);
    ixset_free(&ixs);
    pm_arena_free(ix_arena);
    free(path);
    free(sids);
    pm_buf_free(&json);
    return rc;
}

static void retry_sleep(const pm_commit_opts *o, int retry) {
    double w = (double)o->min_retry_wait_ms;
    for (int i = 0; i < retry && w < (double)o->max_retry_wait_ms; i++) w *= 2;
    int64_t ms = w > (double)o->max_retry_wait_ms ? o->max_retry_wait_ms : (int64_t)w;
    int64_t jmax = ms / 5;
    if (jmax < 1) jmax = 1;
    char u[37];
    pm_uuid4(u);
    unsigned long r = strtoul((char[9]){u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], 0}, NULL, 16);
    ms += (int64_t)(r % (unsigned long)jmax);
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int pm_commit(paimon_table *t, const pm_manifest_entry *entries, size_t n, const pm_commit_opts *o,
              int64_t *snapshot_id, pm_err *e) {
    return pm_commit_with_index(t, entries, n, NULL, 0, o, snapshot_id, e);
}

int pm_commit_with_index(paimon_table *t, const pm_manifest_entry *entries, size_t n,
                         const pm_index_entry *index_entries, size_t n_index, const pm_commit_opts *o,
                         int64_t *snapshot_id, pm_err *e) {
    if (!t || !o || (n && !entries) || (n_index && !index_entries))
        return pm_fail(e, PAIMON_MISUSE, "pm_commit: NULL argument");
    if (!o->commit_user || !*o->commit_user) return pm_fail(e, PAIMON_MISUSE, "commit: commit_user is required");
    const char *kind = o->kind ? o->kind : "APPEND";
    if (strcmp(kind, "APPEND") && strcmp(kind, "OVERWRITE") && strcmp(kind, "COMPACT"))
        return pm_fail(e, PAIMON_MISUSE, "commit: unknown commit kind '%s' (APPEND, OVERWRITE or COMPACT)", kind);
    if (!o->codec) return pm_fail(e, PAIMON_MISUSE, "commit: no manifest codec");
    int rc = pm_table_check_manifest_format(t, e);
    if (rc) return rc;
    int has_delete = 0;
    for (size_t i = 0; i < n; i++) {
        const pm_manifest_entry *m = &entries[i];
        if (m->kind != PM_FILE_ADD && m->kind != PM_FILE_DELETE)
            return pm_fail(e, PAIMON_MISUSE, "commit: entry %zu has invalid kind %d", i, (int)m->kind);
        if (!m->file.file_name || !*m->file.file_name || strchr(m->file.file_name, '/'))
            return pm_fail(e, PAIMON_MISUSE, "commit: entry %zu has an invalid file name", i);
        if (!m->partition.ptr || pm_binrow_arity(m->partition.ptr, m->partition.len) != (int32_t)t->n_part)
            return pm_fail(e, PAIMON_MISUSE,
                           "commit: entry %zu (%s) has partition bytes of the wrong arity (the table has %zu "
                           "partition fields)", i, m->file.file_name, t->n_part);
        if (m->kind == PM_FILE_DELETE) has_delete = 1;
    }
    for (size_t i = 0; i < n_index; i++) {
        const pm_index_entry *x = &index_entries[i];
        if (x->kind != PM_FILE_ADD && x->kind != PM_FILE_DELETE)
            return pm_fail(e, PAIMON_MISUSE, "commit: index entry %zu has invalid kind %d", i, (int)x->kind);
        if (!x->file_name || !*x->file_name || strchr(x->file_name, '/'))
            return pm_fail(e, PAIMON_MISUSE, "commit: index entry %zu has an invalid file name", i);
        if (!x->index_type || !*x->index_type)
            return pm_fail(e, PAIMON_MISUSE, "commit: index entry %zu (%s) has no index type", i, x->file_name);
        if (!x->partition.ptr || pm_binrow_arity(x->partition.ptr, x->partition.len) != (int32_t)t->n_part)
            return pm_fail(e, PAIMON_MISUSE,
                           "commit: index entry %zu (%s) has partition bytes of the wrong arity (the table has %zu "
                           "partition fields)", i, x->file_name, t->n_part);
        if (x->kind == PM_FILE_DELETE || !strcmp(x->index_type, IX_DV)) has_delete = 1;
    }
    /* Java 2.0 (containsFileDeletionOrDeletionVectors): an append carrying
     * deletions (data or index files) or deletion vectors becomes an
     * OVERWRITE commit with conflict detection. */
    if (has_delete && !strcmp(kind, "APPEND")) kind = "OVERWRITE";
    int need_check = has_delete || strcmp(kind, "APPEND") != 0;

    attempt a;
    memset(&a, 0, sizeof a);
    a.t = t;
    a.o = o;
    int64_t id = 0;
    for (int retry = 0;; retry++) {
        rc = try_commit_once(&a, entries, n, index_entries, n_index, kind, need_check, &id, e);
        if (rc == PAIMON_OK) break;
        /* Preparation failures and conflicts are final; a lost race and an
         * uncertain snapshot write are retried. */
        if (rc != PAIMON_EXISTS && !a.last_uncertain) break;
        if (retry >= o->max_retries) {
            if (rc == PAIMON_EXISTS)
                rc = pm_fail(e, PAIMON_CONFLICT,
                             "commit to %s gave up after %d retries: snapshot ids were taken by concurrent commits",
                             t->root, retry);
            else
                pm_err_prefix(e, "commit to %s gave up after %d retries; the outcome of the last snapshot write "
                              "is unknown (its manifests are kept)", t->root, retry);
            break;
        }
        retry_sleep(o, retry);
    }
    attempt_forget(&a);
    if (rc && a.uncertain && !a.last_uncertain)
        pm_err_prefix(e, "commit to %s: an earlier snapshot write failed with an unknown outcome (its manifests "
                      "are kept) and the retry failed", t->root);
    if (rc) return rc;
    if (snapshot_id) *snapshot_id = id;
    if (a.write_hint) {
        pm_err e2;
        pm_hint_write(t->io, t->branch_root, "LATEST", id, &e2);   /* advisory only */
    }
    return PAIMON_OK;
}

/* found[i] for the ADDs of one manifest list */
static int find_added_in_list(paimon_table *t, const char *list, pm_set *names, const pm_manifest_entry *entries,
                              size_t n, uint8_t *found, pm_err *e) {
    pm_mfile *mf = NULL;
    size_t nm = 0;
    int rc = pm_read_manifest_list(t, list, &mf, &nm, e);
    for (size_t i = 0; !rc && i < nm; i++) {
        pm_manifest_reader *r;
        if ((rc = pm_table_open_manifest(t, mf[i].name, PM_MANIFEST_FILE, &r, e))) break;
        pm_manifest_names_only(r);
        const pm_manifest_entry *m;
        while ((rc = pm_manifest_next_entry(r, &m, e)) == PAIMON_OK) {
            if (m->kind != PM_FILE_ADD || !pm_set_contains(names, m->file.file_name, strlen(m->file.file_name)))
                continue;
            for (size_t k = 0; k < n; k++)
                if (entries[k].file.file_name && !strcmp(entries[k].file.file_name, m->file.file_name)) found[k] = 1;
        }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    pm_mfiles_free(mf, nm);
    return rc;
}

int pm_commit_find_added(paimon_table *t, int64_t from_id, const pm_manifest_entry *entries, size_t n,
                         uint8_t *found, pm_err *e) {
    memset(found, 0, n);
    pm_set *names = pm_set_new();
    if (!names) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = PAIMON_OK;
    for (size_t k = 0; !rc && k < n; k++)
        if (entries[k].kind == PM_FILE_ADD && entries[k].file.file_name &&
            pm_set_add(names, entries[k].file.file_name, strlen(entries[k].file.file_name)) < 0)
            rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    int64_t latest = 0, earliest = 1;
    if (!rc) {
        rc = pm_snapshot_latest_id(t->io, t->branch_root, &latest, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; latest = 0; }
    }
    if (!rc && latest > 0) {
        pm_err e2;
        if (pm_snapshot_earliest_id(t->io, t->branch_root, &earliest, &e2) != PAIMON_OK) earliest = 1;
    }
    for (int64_t id = from_id > earliest ? from_id : earliest; !rc && id <= latest; id++) {
        pm_snapshot *s;
        rc = pm_snapshot_read(t->io, t->branch_root, id, &s, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; continue; }
        if (rc) break;
        const char *lists[2] = {s->delta_manifest_list, s->changelog_manifest_list};
        for (int i = 0; i < 2 && !rc; i++)
            if (lists[i]) rc = find_added_in_list(t, lists[i], names, entries, n, found, e);
        if (rc) pm_err_prefix(e, "cannot tell whether snapshot %lld added these files", (long long)id);
        pm_snapshot_free(s);
    }
    pm_set_free(names);
    return rc;
}

int pm_commit_last_identifier(paimon_table *t, const char *commit_user, int64_t *identifier, pm_err *e) {
    int64_t snapshot_id;
    return pm_commit_last_of_user(t, commit_user, identifier, &snapshot_id, e);
}

int pm_commit_last_of_user(paimon_table *t, const char *commit_user, int64_t *identifier, int64_t *snapshot_id,
                           pm_err *e) {
    *identifier = INT64_MIN;
    *snapshot_id = 0;
    if (!commit_user) return pm_fail(e, PAIMON_MISUSE, "commit_user is required");
    int64_t latest, earliest = 1;
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &latest, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (rc) return rc;
    pm_err e2;
    if (pm_snapshot_earliest_id(t->io, t->branch_root, &earliest, &e2) != PAIMON_OK) earliest = 1;
    for (int64_t id = latest; id >= earliest; id--) {
        pm_snapshot *s;
        rc = pm_snapshot_read(t->io, t->branch_root, id, &s, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
        if (rc) return rc;
        int match = s->commit_user && !strcmp(s->commit_user, commit_user);
        if (match) { *identifier = s->commit_identifier; *snapshot_id = id; }
        pm_snapshot_free(s);
        if (match) return PAIMON_OK;
    }
    return PAIMON_OK;
}
