/* Decoding and encoding of manifest lists, manifests and index manifests.
 * Fields are resolved by name against each file's writer schema (computed
 * once per file), so files of every Paimon version read the same way. */
#include "pm_manifest.h"
#include "pm_avro.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- field maps ------------------------------------------------------- */

enum { E_VERSION, E_KIND, E_PARTITION, E_BUCKET, E_TOTAL_BUCKETS, E_FILE, E_N };
static const char *const entry_names[E_N] = {
    "_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE"};

enum { F_FILE_NAME, F_FILE_SIZE, F_ROW_COUNT, F_MIN_KEY, F_MAX_KEY, F_KEY_STATS,
       F_VALUE_STATS, F_MIN_SEQ, F_MAX_SEQ, F_SCHEMA_ID, F_LEVEL, F_EXTRA_FILES,
       F_CREATION_TIME, F_DELETE_ROW_COUNT, F_EMBEDDED_INDEX, F_FILE_SOURCE,
       F_VALUE_STATS_COLS, F_EXTERNAL_PATH, F_FIRST_ROW_ID, F_WRITE_COLS,
       F_WRITE_COLS_SEQ, F_N };
static const char *const file_names[F_N] = {
    "_FILE_NAME", "_FILE_SIZE", "_ROW_COUNT", "_MIN_KEY", "_MAX_KEY", "_KEY_STATS",
    "_VALUE_STATS", "_MIN_SEQUENCE_NUMBER", "_MAX_SEQUENCE_NUMBER", "_SCHEMA_ID",
    "_LEVEL", "_EXTRA_FILES", "_CREATION_TIME", "_DELETE_ROW_COUNT",
    "_EMBEDDED_FILE_INDEX", "_FILE_SOURCE", "_VALUE_STATS_COLS", "_EXTERNAL_PATH",
    "_FIRST_ROW_ID", "_WRITE_COLS", "_WRITE_COLS_SEQUENCES"};

enum { S_MIN, S_MAX, S_NULLS, S_N };
static const char *const stats_names[S_N] = {"_MIN_VALUES", "_MAX_VALUES", "_NULL_COUNTS"};

enum { M_VERSION, M_FILE_NAME, M_FILE_SIZE, M_ADDED, M_DELETED, M_PSTATS, M_SCHEMA_ID,
       M_MIN_BUCKET, M_MAX_BUCKET, M_MIN_LEVEL, M_MAX_LEVEL, M_MIN_ROW_ID, M_MAX_ROW_ID, M_N };
static const char *const meta_names[M_N] = {
    "_VERSION", "_FILE_NAME", "_FILE_SIZE", "_NUM_ADDED_FILES", "_NUM_DELETED_FILES",
    "_PARTITION_STATS", "_SCHEMA_ID", "_MIN_BUCKET", "_MAX_BUCKET", "_MIN_LEVEL",
    "_MAX_LEVEL", "_MIN_ROW_ID", "_MAX_ROW_ID"};

enum { I_VERSION, I_KIND, I_PARTITION, I_BUCKET, I_INDEX_TYPE, I_FILE_NAME, I_FILE_SIZE,
       I_ROW_COUNT, I_DV_RANGES, I_EXTERNAL_PATH, I_GLOBAL_INDEX, I_N };
static const char *const index_names[I_N] = {
    "_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_INDEX_TYPE", "_FILE_NAME",
    "_FILE_SIZE", "_ROW_COUNT", "_DELETIONS_VECTORS_RANGES", "_EXTERNAL_PATH",
    "_GLOBAL_INDEX"};

enum { D_F0, D_F1, D_F2, D_CARD, D_N };
static const char *const dv_names[D_N] = {"f0", "f1", "f2", "_CARDINALITY"};

enum { G_START, G_END, G_FIELD, G_EXTRA, G_META, G_SOURCE, G_N };
static const char *const global_names[G_N] = {
    "_ROW_RANGE_START", "_ROW_RANGE_END", "_INDEX_FIELD_ID", "_EXTRA_FIELD_IDS",
    "_INDEX_META", "_SOURCE_META"};

struct pm_manifest_reader {
    pm_manifest_kind kind;
    char *display;
    pm_buf owned;                 /* file bytes when we read them */
    pm_avro_reader *avro;
    pm_arena *arena;              /* per-record allocations */
    int64_t record_no;
    int names_only;               /* pm_manifest_names_only */
    int stats_only;               /* pm_manifest_stats_only */
    int top[16];                  /* top-level field map (any record kind) */
    int file[F_N];
    int key_stats[S_N], value_stats[S_N], part_stats[S_N];
    int dv[D_N], global[G_N];
    /* What empty arrays point to: most entries have several, and an
     * arena slot each cost more than the rest of the array's decoding. */
    const char *no_strs[1];
    int64_t no_longs[2];
    union {
        pm_manifest_entry entry;
        pm_manifest_meta meta;
        pm_index_entry index;
    } rec;
};

static const pm_avro_schema *record_of(const pm_avro_schema *s) {
    if (!s) return NULL;
    s = pm_avro_unwrap_nullable(s);
    return s && s->type == PM_AVRO_RECORD ? s : NULL;
}

static void map_fields(const pm_avro_schema *rec, const char *const *names, int n, int *idx) {
    for (int i = 0; i < n; i++) idx[i] = rec ? pm_avro_field_index(rec, names[i]) : -1;
}

static const pm_avro_schema *field_schema(const pm_avro_schema *rec, int idx) {
    return (rec && idx >= 0) ? rec->fields[idx].type : NULL;
}

/* Item schema of an array field, looking through ["null", array]. */
static const pm_avro_schema *array_items(const pm_avro_schema *s) {
    s = s ? pm_avro_unwrap_nullable(s) : NULL;
    return s && s->type == PM_AVRO_ARRAY ? s->items : NULL;
}

static int build_maps(pm_manifest_reader *r, pm_err *e) {
    const pm_avro_schema *top = record_of(pm_avro_reader_schema(r->avro));
    if (!top)
        return pm_fail(e, PAIMON_CORRUPT, "%s: writer schema is not a record", r->display);
    switch (r->kind) {
    case PM_MANIFEST_FILE: {
        map_fields(top, entry_names, E_N, r->top);
        const pm_avro_schema *f = record_of(field_schema(top, r->top[E_FILE]));
        if (!f) return pm_fail(e, PAIMON_CORRUPT, "%s: not a manifest file (no _FILE record in schema)", r->display);
        map_fields(f, file_names, F_N, r->file);
        map_fields(record_of(field_schema(f, r->file[F_KEY_STATS])), stats_names, S_N, r->key_stats);
        map_fields(record_of(field_schema(f, r->file[F_VALUE_STATS])), stats_names, S_N, r->value_stats);
        break;
    }
    case PM_MANIFEST_LIST:
        map_fields(top, meta_names, M_N, r->top);
        map_fields(record_of(field_schema(top, r->top[M_PSTATS])), stats_names, S_N, r->part_stats);
        break;
    case PM_INDEX_MANIFEST: {
        map_fields(top, index_names, I_N, r->top);
        const pm_avro_schema *dvs = array_items(field_schema(top, r->top[I_DV_RANGES]));
        map_fields(record_of(dvs), dv_names, D_N, r->dv);
        map_fields(record_of(field_schema(top, r->top[I_GLOBAL_INDEX])), global_names, G_N, r->global);
        break;
    }
    }
    return PAIMON_OK;
}

/* Required fields: Java calls non-null getters on these. */
static int require(const pm_manifest_reader *r, const int *idx, const char *const *names,
                   const int *req, int nreq, const char *where, pm_err *e) {
    for (int i = 0; i < nreq; i++)
        if (idx[req[i]] < 0)
            return pm_fail(e, PAIMON_CORRUPT, "%s: %s schema lacks required field %s",
                           r->display, where, names[req[i]]);
    return PAIMON_OK;
}

static int check_required(const pm_manifest_reader *r, pm_err *e) {
    switch (r->kind) {
    case PM_MANIFEST_FILE: {
        static const int top_req[] = {E_KIND, E_PARTITION, E_BUCKET, E_FILE};
        static const int file_req[] = {F_FILE_NAME, F_FILE_SIZE, F_ROW_COUNT, F_SCHEMA_ID, F_LEVEL};
        int rc = require(r, r->top, entry_names, top_req, 4, "manifest entry", e);
        return rc ? rc : require(r, r->file, file_names, file_req, 5, "data file", e);
    }
    case PM_MANIFEST_LIST: {
        static const int req[] = {M_FILE_NAME, M_FILE_SIZE, M_ADDED, M_DELETED, M_SCHEMA_ID};
        return require(r, r->top, meta_names, req, 5, "manifest list", e);
    }
    case PM_INDEX_MANIFEST: {
        static const int req[] = {I_KIND, I_PARTITION, I_BUCKET, I_INDEX_TYPE, I_FILE_NAME, I_FILE_SIZE};
        return require(r, r->top, index_names, req, 6, "index manifest", e);
    }
    }
    return PAIMON_OK;
}

static int open_common(pm_manifest_reader *r, const uint8_t *data, size_t len, pm_err *e) {
    int rc = pm_avro_reader_open(data, len, r->display, &r->avro, e);
    if (rc) return rc;
    r->arena = pm_arena_new(8192);
    if (!r->arena) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    rc = build_maps(r, e);
    return rc ? rc : check_required(r, e);
}

int pm_manifest_open_bytes(const uint8_t *data, size_t len, const char *display,
                           pm_manifest_kind kind, pm_manifest_reader **out, pm_err *e) {
    *out = NULL;
    pm_manifest_reader *r = calloc(1, sizeof *r);
    if (!r) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    r->kind = kind;
    r->display = pm_strdup(display ? display : "(manifest)");
    int rc = open_common(r, data, len, e);
    if (rc) { pm_manifest_close(r); return rc; }
    *out = r;
    return PAIMON_OK;
}

int pm_manifest_open(pm_fileio *io, const char *path, const char *display,
                     pm_manifest_kind kind, pm_manifest_reader **out, pm_err *e) {
    return pm_manifest_open_sized(io, path, display, -1, kind, out, e);
}

int pm_manifest_open_sized(pm_fileio *io, const char *path, const char *display, int64_t size,
                           pm_manifest_kind kind, pm_manifest_reader **out, pm_err *e) {
    *out = NULL;
    pm_manifest_reader *r = calloc(1, sizeof *r);
    if (!r) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    r->kind = kind;
    r->display = pm_strdup(display ? display : path);
    int rc = pm_io_read_sized(io, path, size, &r->owned, e);
    if (!rc) rc = open_common(r, r->owned.data ? r->owned.data : (const uint8_t *)"", r->owned.len, e);
    if (rc) { pm_manifest_close(r); return rc; }
    *out = r;
    return PAIMON_OK;
}

void pm_manifest_close(pm_manifest_reader *r) {
    if (!r) return;
    pm_avro_reader_close(r->avro);
    pm_arena_free(r->arena);
    pm_buf_free(&r->owned);
    free(r->display);
    free(r);
}

const char *pm_manifest_codec(const pm_manifest_reader *r) {
    return pm_avro_reader_codec(r->avro);
}

uint64_t pm_manifest_block(const pm_manifest_reader *r, int64_t *count, const uint8_t **raw, size_t *raw_len) {
    return pm_avro_reader_block(r->avro, count, raw, raw_len);
}

int pm_manifest_next_stored(pm_manifest_reader *r, int64_t *count, const uint8_t **raw, size_t *raw_len, pm_err *e) {
    if (r->kind != PM_MANIFEST_FILE || r->record_no)
        return pm_fail(e, PAIMON_MISUSE, "%s: not a manifest read block by block", r->display);
    return pm_avro_reader_next_stored(r->avro, count, raw, raw_len, e);
}

/* Our manifest writer schema, parsed once (kept for the process). */
static pm_avro_schema *entry_schema;
static pthread_once_t entry_schema_once = PTHREAD_ONCE_INIT;

static void parse_entry_schema(void) {
    pm_err e;
    if (pm_avro_schema_parse(PM_SCHEMA_MANIFEST_FILE, strlen(PM_SCHEMA_MANIFEST_FILE), &entry_schema, &e))
        entry_schema = NULL;   /* out of memory: nothing is copied */
}

int pm_manifest_blocks_copyable(const pm_manifest_reader *r, const char *codec) {
    if (r->kind != PM_MANIFEST_FILE || r->names_only || r->stats_only || !codec) return 0;
    const char *mine = pm_avro_reader_codec(r->avro);
    if (!mine || strcmp(mine, codec)) return 0;
    pthread_once(&entry_schema_once, parse_entry_schema);
    return pm_avro_schema_same_layout(pm_avro_reader_schema(r->avro), entry_schema);
}

/* ---- value access ----------------------------------------------------- */

typedef struct ctx {
    pm_manifest_reader *r;
    pm_err *e;
    const char *field;            /* for messages */
} ctx;

/* The getters run ~35 times per manifest entry: inlined, they cost a
 * few instructions each instead of a call (0.4 G of a 300k-entry read). */
#if defined(__GNUC__)
#define GETTER static inline __attribute__((always_inline))
#else
#define GETTER static inline
#endif

/* A record's fields, its type checked once rather than per field. A
 * non-record has no fields, so every lookup in it finds nothing. */
typedef struct fields {
    const pm_avro_value *at;
    size_t n;
} fields;

GETTER fields fields_of(const pm_avro_value *rec) {
    fields fs = {NULL, 0};
    if (rec && rec->type == PM_AVRO_RECORD) {
        fs.at = rec->u.list.items;
        fs.n = rec->u.list.n;
    }
    return fs;
}

/* Field idx, NULL when absent from the schema (idx < 0 wraps) or null. */
GETTER const pm_avro_value *get(fields fs, int idx) {
    if ((size_t)idx >= fs.n) return NULL;
    const pm_avro_value *v = &fs.at[idx];
    return v->type == PM_AVRO_NULL ? NULL : v;
}

/* Failures are rare: kept out of line so that the getters below inline
 * into the record decoders (they were a tenth of a manifest read). */
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int bad(ctx *c, const char *field, const char *what) {
    return pm_fail(c->e, PAIMON_CORRUPT, "%s: record %lld: field %s %s", c->r->display,
                   (long long)c->r->record_no, field, what);
}

GETTER int want_long(ctx *c, fields rec, int idx, const char *name, int64_t *out) {
    const pm_avro_value *v = get(rec, idx);
    if (!v) return bad(c, name, "is missing or null");
    if (v->type == PM_AVRO_LONG) *out = v->u.l;
    else if (v->type == PM_AVRO_INT) *out = v->u.i;
    else return bad(c, name, "is not an integer");
    return PAIMON_OK;
}

GETTER int want_int(ctx *c, fields rec, int idx, const char *name, int32_t *out) {
    int64_t x = 0;
    int rc = want_long(c, rec, idx, name, &x);
    if (rc) return rc;
    if (x < INT32_MIN || x > INT32_MAX) return bad(c, name, "is out of int range");
    *out = (int32_t)x;
    return PAIMON_OK;
}

GETTER int opt_long(ctx *c, fields rec, int idx, const char *name, pm_opt_i64 *out) {
    out->has = 0;
    out->v = 0;
    if (!get(rec, idx)) return PAIMON_OK;
    out->has = 1;
    return want_long(c, rec, idx, name, &out->v);
}

GETTER int opt_int(ctx *c, fields rec, int idx, const char *name, pm_opt_i32 *out) {
    out->has = 0;
    out->v = 0;
    if (!get(rec, idx)) return PAIMON_OK;
    out->has = 1;
    return want_int(c, rec, idx, name, &out->v);
}

static int str_of(ctx *c, const pm_avro_value *v, const char *name, const char **out) {
    if (v->type != PM_AVRO_STRING && v->type != PM_AVRO_BYTES) return bad(c, name, "is not a string");
    if (memchr(v->u.bytes.ptr, 0, v->u.bytes.len)) return bad(c, name, "contains a NUL byte");
    char *s = pm_arena_strndup(c->r->arena, (const char *)v->u.bytes.ptr, v->u.bytes.len);
    if (!s) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
    *out = s;
    return PAIMON_OK;
}

static int want_str(ctx *c, fields rec, int idx, const char *name, const char **out) {
    const pm_avro_value *v = get(rec, idx);
    if (!v) return bad(c, name, "is missing or null");
    return str_of(c, v, name, out);
}

static int opt_str(ctx *c, fields rec, int idx, const char *name, const char **out) {
    const pm_avro_value *v = get(rec, idx);
    *out = NULL;
    return v ? str_of(c, v, name, out) : PAIMON_OK;
}

GETTER int bytes_of(ctx *c, const pm_avro_value *v, const char *name, pm_bytes *out) {
    if (v->type != PM_AVRO_BYTES && v->type != PM_AVRO_STRING && v->type != PM_AVRO_FIXED)
        return bad(c, name, "is not bytes");
    out->ptr = v->u.bytes.ptr;
    out->len = v->u.bytes.len;
    return PAIMON_OK;
}

GETTER int want_bytes(ctx *c, fields rec, int idx, const char *name, pm_bytes *out) {
    const pm_avro_value *v = get(rec, idx);
    if (!v) return bad(c, name, "is missing or null");
    return bytes_of(c, v, name, out);
}

GETTER int opt_bytes(ctx *c, fields rec, int idx, const char *name, int *has, pm_bytes *out) {
    const pm_avro_value *v = get(rec, idx);
    *has = v != NULL;
    out->ptr = NULL;
    out->len = 0;
    return v ? bytes_of(c, v, name, out) : PAIMON_OK;
}

static int strs_of(ctx *c, const pm_avro_value *v, const char *name, pm_strs *out) {
    size_t n = v->u.list.n;
    const char **arr = pm_arena_alloc(c->r->arena, n * sizeof *arr);
    if (!arr) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const pm_avro_value *it = &v->u.list.items[i];
        if (it->type == PM_AVRO_NULL) return bad(c, name, "has a null element");
        int rc = str_of(c, it, name, &arr[i]);
        if (rc) return rc;
    }
    out->n = n;
    out->v = arr;
    return PAIMON_OK;
}

/* Inline for the usual null or empty array; strs_of copies the rest. */
GETTER int opt_strs(ctx *c, fields rec, int idx, const char *name, int *has, pm_strs *out) {
    const pm_avro_value *v = get(rec, idx);
    out->n = 0;
    out->v = NULL;
    if (has) *has = v != NULL;
    if (!v) return PAIMON_OK;
    if (v->type != PM_AVRO_ARRAY) return bad(c, name, "is not an array");
    if (v->u.list.n) return strs_of(c, v, name, out);
    out->v = c->r->no_strs;
    return PAIMON_OK;
}

static int opt_longs(ctx *c, fields rec, int idx, const char *name, int *has,
                     size_t *n_out, int64_t **out, uint8_t **nulls_out) {
    const pm_avro_value *v = get(rec, idx);
    *has = v != NULL;
    *n_out = 0;
    *out = NULL;
    if (nulls_out) *nulls_out = NULL;
    if (!v) return PAIMON_OK;
    if (v->type != PM_AVRO_ARRAY) return bad(c, name, "is not an array");
    size_t n = v->u.list.n;
    int64_t *arr = n ? pm_arena_alloc(c->r->arena, n * (sizeof *arr + 1))   /* and the null flags */
                     : c->r->no_longs;
    if (!arr) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
    uint8_t *nulls = (uint8_t *)(arr + (n ? n : 1));
    const pm_avro_value *items = v->u.list.items;
    for (size_t i = 0; i < n; i++) {
        const pm_avro_value *it = &items[i];
        nulls[i] = 0;
        if (it->type == PM_AVRO_LONG) {      /* the usual case first */
            arr[i] = it->u.l;
        } else if (it->type == PM_AVRO_INT) {
            arr[i] = it->u.i;
        } else if (it->type == PM_AVRO_NULL) {
            if (!nulls_out) return bad(c, name, "has a null element");
            arr[i] = 0;
            nulls[i] = 1;
        } else {
            return bad(c, name, "has a non-integer element");
        }
    }
    *n_out = n;
    *out = arr;
    if (nulls_out) *nulls_out = nulls;
    return PAIMON_OK;
}

GETTER int stats_of(ctx *c, fields rec, int idx, const char *name, const int *map,
                    pm_stats *st) {
    memset(st, 0, sizeof *st);
    const pm_avro_value *v = get(rec, idx);
    if (!v) return bad(c, name, "is missing or null");
    if (v->type != PM_AVRO_RECORD) return bad(c, name, "is not a record");
    fields sf = fields_of(v);
    int rc = want_bytes(c, sf, map[S_MIN], "_MIN_VALUES", &st->min_values);
    if (!rc) rc = want_bytes(c, sf, map[S_MAX], "_MAX_VALUES", &st->max_values);
    if (!rc) rc = opt_longs(c, sf, map[S_NULLS], "_NULL_COUNTS", &st->has_null_counts,
                            &st->n_null_counts, &st->null_counts, &st->null_count_is_null);
    return rc;
}

/* ---- record decoders --------------------------------------------------- */

static int next_value(pm_manifest_reader *r, pm_manifest_kind want, const pm_avro_value **v, pm_err *e) {
    if (r->kind != want)
        return pm_fail(e, PAIMON_MISUSE, "%s: reader opened for another record kind", r->display);
    pm_arena_reset(r->arena);
    int rc = pm_avro_reader_next(r->avro, v, e);
    if (rc == PAIMON_OK) {
        r->record_no++;
        if ((*v)->type != PM_AVRO_RECORD)
            return pm_fail(e, PAIMON_CORRUPT, "%s: record %lld is null", r->display, (long long)r->record_no);
    }
    return rc;
}

GETTER int check_version(ctx *c, fields rec, int idx, int32_t expect, int32_t *out) {
    *out = expect;
    if (idx < 0) return PAIMON_OK;          /* very old files had no _VERSION */
    int rc = want_int(c, rec, idx, "_VERSION", out);
    if (rc) return rc;
    if (*out != expect)
        return pm_fail(c->e, PAIMON_UNSUPPORTED, "%s: record %lld: unsupported _VERSION %d (expected %d)%s",
                       c->r->display, (long long)c->r->record_no, (int)*out, (int)expect,
                       *out == 1 && expect == 2 ? "; the table was written by a Paimon version older than 0.4 and must be recreated" : "");
    return PAIMON_OK;
}

static int check_kind(ctx *c, int32_t kind) {
    if (kind != PM_FILE_ADD && kind != PM_FILE_DELETE)
        return bad(c, "_KIND", "is neither ADD (0) nor DELETE (1)");
    return PAIMON_OK;
}

/* Every field of rec but the kept ones (bit i = field i). */
static uint64_t skip_all_but(const pm_avro_schema *rec, const int *keep, int n_keep) {
    uint64_t m = rec->n_fields >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << rec->n_fields) - 1);
    for (int i = 0; i < n_keep; i++)
        if (keep[i] >= 0 && keep[i] < 64) m &= ~((uint64_t)1 << keep[i]);
    return m;
}

void pm_manifest_block_share(pm_manifest_reader *r, unsigned part, unsigned parts) {
    pm_avro_reader_block_share(r->avro, part, parts);
}

void pm_manifest_block_filter(pm_manifest_reader *r, int (*fn)(void *ud, const uint8_t *data, size_t len), void *ud) {
    pm_avro_reader_block_filter(r->avro, fn, ud);
}

int pm_manifest_names_only(pm_manifest_reader *r) {
    const pm_avro_schema *top = record_of(pm_avro_reader_schema(r->avro));
    if (!top || r->record_no) return -1;
    switch (r->kind) {
    case PM_MANIFEST_FILE: {
        const pm_avro_schema *f = record_of(field_schema(top, r->top[E_FILE]));
        int keep_top[] = {r->top[E_VERSION], r->top[E_KIND], r->top[E_FILE]};
        int keep_file[] = {r->file[F_FILE_NAME], r->file[F_EXTRA_FILES], r->file[F_EXTERNAL_PATH]};
        if (!f || pm_avro_reader_skip_fields(r->avro, top, skip_all_but(top, keep_top, 3)) ||
            pm_avro_reader_skip_fields(r->avro, f, skip_all_but(f, keep_file, 3)))
            return -1;
        break;
    }
    case PM_MANIFEST_LIST: {
        int keep[] = {r->top[M_VERSION], r->top[M_FILE_NAME], r->top[M_FILE_SIZE]};
        if (pm_avro_reader_skip_fields(r->avro, top, skip_all_but(top, keep, 3))) return -1;
        break;
    }
    default:
        return -1;
    }
    r->names_only = 1;
    return 0;
}

int pm_manifest_stats_only(pm_manifest_reader *r) {
    const pm_avro_schema *top = record_of(pm_avro_reader_schema(r->avro));
    if (!top || r->record_no || r->kind != PM_MANIFEST_FILE || r->names_only) return -1;
    const pm_avro_schema *f = record_of(field_schema(top, r->top[E_FILE]));
    int keep_top[] = {r->top[E_VERSION], r->top[E_KIND], r->top[E_PARTITION], r->top[E_BUCKET], r->top[E_FILE]};
    int keep_file[] = {r->file[F_FILE_NAME], r->file[F_ROW_COUNT], r->file[F_SCHEMA_ID], r->file[F_LEVEL],
                       r->file[F_FIRST_ROW_ID]};
    if (!f || pm_avro_reader_skip_fields(r->avro, top, skip_all_but(top, keep_top, 5)) ||
        pm_avro_reader_skip_fields(r->avro, f, skip_all_but(f, keep_file, 5)))
        return -1;
    r->stats_only = 1;
    return 0;
}

int pm_manifest_next_entry(pm_manifest_reader *r, const pm_manifest_entry **out, pm_err *e) {
    const pm_avro_value *v;
    int rc = next_value(r, PM_MANIFEST_FILE, &v, e);
    if (rc) return rc;
    ctx c = {r, e, NULL};
    pm_manifest_entry *m = &r->rec.entry;
    memset(m, 0, sizeof *m);
    const fields top = fields_of(v);
    if ((rc = check_version(&c, top, r->top[E_VERSION], 2, &m->version))) return rc;
    if ((rc = want_int(&c, top, r->top[E_KIND], "_KIND", &m->kind))) return rc;
    if ((rc = check_kind(&c, m->kind))) return rc;
    if (r->names_only) {
        const pm_avro_value *f = get(top, r->top[E_FILE]);
        if (!f || f->type != PM_AVRO_RECORD) return bad(&c, "_FILE", "is missing or not a record");
        pm_data_file *d = &m->file;
        const fields file = fields_of(f);
        if ((rc = want_str(&c, file, r->file[F_FILE_NAME], "_FILE_NAME", &d->file_name))) return rc;
        if ((rc = opt_strs(&c, file, r->file[F_EXTRA_FILES], "_EXTRA_FILES", NULL, &d->extra_files))) return rc;
        if ((rc = opt_str(&c, file, r->file[F_EXTERNAL_PATH], "_EXTERNAL_PATH", &d->external_path))) return rc;
        *out = m;
        return PAIMON_OK;
    }
    if ((rc = want_bytes(&c, top, r->top[E_PARTITION], "_PARTITION", &m->partition))) return rc;
    if ((rc = want_int(&c, top, r->top[E_BUCKET], "_BUCKET", &m->bucket))) return rc;
    if (r->stats_only) {
        const pm_avro_value *f = get(top, r->top[E_FILE]);
        if (!f || f->type != PM_AVRO_RECORD) return bad(&c, "_FILE", "is missing or not a record");
        pm_data_file *d = &m->file;
        const fields file = fields_of(f);
        const int *x = r->file;
        if ((rc = want_str(&c, file, x[F_FILE_NAME], "_FILE_NAME", &d->file_name))) return rc;
        if ((rc = want_long(&c, file, x[F_ROW_COUNT], "_ROW_COUNT", &d->row_count))) return rc;
        if ((rc = want_long(&c, file, x[F_SCHEMA_ID], "_SCHEMA_ID", &d->schema_id))) return rc;
        if ((rc = want_int(&c, file, x[F_LEVEL], "_LEVEL", &d->level))) return rc;
        if ((rc = opt_long(&c, file, x[F_FIRST_ROW_ID], "_FIRST_ROW_ID", &d->first_row_id))) return rc;
        *out = m;
        return PAIMON_OK;
    }
    m->total_buckets = -1;
    if (r->top[E_TOTAL_BUCKETS] >= 0 &&
        (rc = want_int(&c, top, r->top[E_TOTAL_BUCKETS], "_TOTAL_BUCKETS", &m->total_buckets))) return rc;
    const pm_avro_value *f = get(top, r->top[E_FILE]);
    if (!f || f->type != PM_AVRO_RECORD) return bad(&c, "_FILE", "is missing or not a record");
    pm_data_file *d = &m->file;
    const fields file = fields_of(f);
    const int *x = r->file;
    if ((rc = want_str(&c, file, x[F_FILE_NAME], "_FILE_NAME", &d->file_name))) return rc;
    if ((rc = want_long(&c, file, x[F_FILE_SIZE], "_FILE_SIZE", &d->file_size))) return rc;
    if ((rc = want_long(&c, file, x[F_ROW_COUNT], "_ROW_COUNT", &d->row_count))) return rc;
    if ((rc = want_bytes(&c, file, x[F_MIN_KEY], "_MIN_KEY", &d->min_key))) return rc;
    if ((rc = want_bytes(&c, file, x[F_MAX_KEY], "_MAX_KEY", &d->max_key))) return rc;
    if ((rc = stats_of(&c, file, x[F_KEY_STATS], "_KEY_STATS", r->key_stats, &d->key_stats))) return rc;
    if ((rc = stats_of(&c, file, x[F_VALUE_STATS], "_VALUE_STATS", r->value_stats, &d->value_stats))) return rc;
    if ((rc = want_long(&c, file, x[F_MIN_SEQ], "_MIN_SEQUENCE_NUMBER", &d->min_sequence_number))) return rc;
    if ((rc = want_long(&c, file, x[F_MAX_SEQ], "_MAX_SEQUENCE_NUMBER", &d->max_sequence_number))) return rc;
    if ((rc = want_long(&c, file, x[F_SCHEMA_ID], "_SCHEMA_ID", &d->schema_id))) return rc;
    if ((rc = want_int(&c, file, x[F_LEVEL], "_LEVEL", &d->level))) return rc;
    if ((rc = opt_strs(&c, file, x[F_EXTRA_FILES], "_EXTRA_FILES", NULL, &d->extra_files))) return rc;
    if ((rc = opt_long(&c, file, x[F_CREATION_TIME], "_CREATION_TIME", &d->creation_time))) return rc;
    if ((rc = opt_long(&c, file, x[F_DELETE_ROW_COUNT], "_DELETE_ROW_COUNT", &d->delete_row_count))) return rc;
    if ((rc = opt_bytes(&c, file, x[F_EMBEDDED_INDEX], "_EMBEDDED_FILE_INDEX", &d->has_embedded_index, &d->embedded_index))) return rc;
    if ((rc = opt_int(&c, file, x[F_FILE_SOURCE], "_FILE_SOURCE", &d->file_source))) return rc;
    if ((rc = opt_strs(&c, file, x[F_VALUE_STATS_COLS], "_VALUE_STATS_COLS", &d->has_value_stats_cols, &d->value_stats_cols))) return rc;
    if ((rc = opt_str(&c, file, x[F_EXTERNAL_PATH], "_EXTERNAL_PATH", &d->external_path))) return rc;
    if ((rc = opt_long(&c, file, x[F_FIRST_ROW_ID], "_FIRST_ROW_ID", &d->first_row_id))) return rc;
    if ((rc = opt_strs(&c, file, x[F_WRITE_COLS], "_WRITE_COLS", &d->has_write_cols, &d->write_cols))) return rc;
    if ((rc = opt_longs(&c, file, x[F_WRITE_COLS_SEQ], "_WRITE_COLS_SEQUENCES", &d->has_write_cols_sequences,
                        &d->n_write_cols_sequences, &d->write_cols_sequences, NULL))) return rc;
    *out = m;
    return PAIMON_OK;
}

int pm_manifest_next_meta(pm_manifest_reader *r, const pm_manifest_meta **out, pm_err *e) {
    const pm_avro_value *v;
    int rc = next_value(r, PM_MANIFEST_LIST, &v, e);
    if (rc) return rc;
    ctx c = {r, e, NULL};
    pm_manifest_meta *m = &r->rec.meta;
    memset(m, 0, sizeof *m);
    const fields top = fields_of(v);
    const int *x = r->top;
    if ((rc = check_version(&c, top, x[M_VERSION], 2, &m->version))) return rc;
    if ((rc = want_str(&c, top, x[M_FILE_NAME], "_FILE_NAME", &m->file_name))) return rc;
    if ((rc = want_long(&c, top, x[M_FILE_SIZE], "_FILE_SIZE", &m->file_size))) return rc;
    if (r->names_only) { *out = m; return PAIMON_OK; }
    if ((rc = want_long(&c, top, x[M_ADDED], "_NUM_ADDED_FILES", &m->num_added_files))) return rc;
    if ((rc = want_long(&c, top, x[M_DELETED], "_NUM_DELETED_FILES", &m->num_deleted_files))) return rc;
    if (x[M_PSTATS] >= 0 &&
        (rc = stats_of(&c, top, x[M_PSTATS], "_PARTITION_STATS", r->part_stats, &m->partition_stats))) return rc;
    if ((rc = want_long(&c, top, x[M_SCHEMA_ID], "_SCHEMA_ID", &m->schema_id))) return rc;
    if ((rc = opt_int(&c, top, x[M_MIN_BUCKET], "_MIN_BUCKET", &m->min_bucket))) return rc;
    if ((rc = opt_int(&c, top, x[M_MAX_BUCKET], "_MAX_BUCKET", &m->max_bucket))) return rc;
    if ((rc = opt_int(&c, top, x[M_MIN_LEVEL], "_MIN_LEVEL", &m->min_level))) return rc;
    if ((rc = opt_int(&c, top, x[M_MAX_LEVEL], "_MAX_LEVEL", &m->max_level))) return rc;
    if ((rc = opt_long(&c, top, x[M_MIN_ROW_ID], "_MIN_ROW_ID", &m->min_row_id))) return rc;
    if ((rc = opt_long(&c, top, x[M_MAX_ROW_ID], "_MAX_ROW_ID", &m->max_row_id))) return rc;
    m->row_ids_known = x[M_MIN_ROW_ID] >= 0 && x[M_MAX_ROW_ID] >= 0;
    if (m->num_added_files < 0 || m->num_deleted_files < 0 || m->file_size < 0)
        return bad(&c, "_NUM_ADDED_FILES/_NUM_DELETED_FILES/_FILE_SIZE", "is negative");
    *out = m;
    return PAIMON_OK;
}

int pm_manifest_next_index(pm_manifest_reader *r, const pm_index_entry **out, pm_err *e) {
    const pm_avro_value *v;
    int rc = next_value(r, PM_INDEX_MANIFEST, &v, e);
    if (rc) return rc;
    ctx c = {r, e, NULL};
    pm_index_entry *m = &r->rec.index;
    memset(m, 0, sizeof *m);
    const fields top = fields_of(v);
    const int *x = r->top;
    if ((rc = check_version(&c, top, x[I_VERSION], 1, &m->version))) return rc;
    if ((rc = want_int(&c, top, x[I_KIND], "_KIND", &m->kind))) return rc;
    if ((rc = check_kind(&c, m->kind))) return rc;
    if ((rc = want_bytes(&c, top, x[I_PARTITION], "_PARTITION", &m->partition))) return rc;
    if ((rc = want_int(&c, top, x[I_BUCKET], "_BUCKET", &m->bucket))) return rc;
    if ((rc = want_str(&c, top, x[I_INDEX_TYPE], "_INDEX_TYPE", &m->index_type))) return rc;
    if ((rc = want_str(&c, top, x[I_FILE_NAME], "_FILE_NAME", &m->file_name))) return rc;
    if ((rc = want_long(&c, top, x[I_FILE_SIZE], "_FILE_SIZE", &m->file_size))) return rc;
    if (x[I_ROW_COUNT] >= 0 && (rc = want_long(&c, top, x[I_ROW_COUNT], "_ROW_COUNT", &m->row_count))) return rc;
    const pm_avro_value *dv = get(top, x[I_DV_RANGES]);
    if (dv) {
        if (dv->type != PM_AVRO_ARRAY) return bad(&c, "_DELETIONS_VECTORS_RANGES", "is not an array");
        m->has_dv_ranges = 1;
        m->n_dv_ranges = dv->u.list.n;
        m->dv_ranges = pm_arena_alloc(r->arena, (m->n_dv_ranges ? m->n_dv_ranges : 1) * sizeof *m->dv_ranges);
        if (!m->dv_ranges) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        for (size_t i = 0; i < m->n_dv_ranges; i++) {
            const pm_avro_value *it = &dv->u.list.items[i];
            pm_dv_range *d = &m->dv_ranges[i];
            if (it->type != PM_AVRO_RECORD) return bad(&c, "_DELETIONS_VECTORS_RANGES", "has a null element");
            const fields dvf = fields_of(it);
            if ((rc = want_str(&c, dvf, r->dv[D_F0], "f0", &d->data_file))) return rc;
            if ((rc = want_int(&c, dvf, r->dv[D_F1], "f1", &d->offset))) return rc;
            if ((rc = want_int(&c, dvf, r->dv[D_F2], "f2", &d->length))) return rc;
            if ((rc = opt_long(&c, dvf, r->dv[D_CARD], "_CARDINALITY", &d->cardinality))) return rc;
        }
    }
    if ((rc = opt_str(&c, top, x[I_EXTERNAL_PATH], "_EXTERNAL_PATH", &m->external_path))) return rc;
    const pm_avro_value *g = get(top, x[I_GLOBAL_INDEX]);
    if (g) {
        if (g->type != PM_AVRO_RECORD) return bad(&c, "_GLOBAL_INDEX", "is not a record");
        m->has_global_index = 1;
        const fields gf = fields_of(g);
        const int *y = r->global;
        if ((rc = want_long(&c, gf, y[G_START], "_ROW_RANGE_START", &m->global_index.row_range_start))) return rc;
        if ((rc = want_long(&c, gf, y[G_END], "_ROW_RANGE_END", &m->global_index.row_range_end))) return rc;
        if ((rc = want_int(&c, gf, y[G_FIELD], "_INDEX_FIELD_ID", &m->global_index.index_field_id))) return rc;
        int64_t *ids = NULL;
        size_t n = 0;
        if ((rc = opt_longs(&c, gf, y[G_EXTRA], "_EXTRA_FIELD_IDS", &m->global_index.has_extra_field_ids,
                            &n, &ids, NULL))) return rc;
        if (n) {
            m->global_index.extra_field_ids = pm_arena_alloc(r->arena, n * sizeof(int32_t));
            if (!m->global_index.extra_field_ids) return pm_fail(e, PAIMON_NOMEM, "out of memory");
            for (size_t i = 0; i < n; i++) m->global_index.extra_field_ids[i] = (int32_t)ids[i];
        }
        m->global_index.n_extra_field_ids = n;
        if ((rc = opt_bytes(&c, gf, y[G_META], "_INDEX_META", &m->global_index.has_index_meta, &m->global_index.index_meta))) return rc;
        if ((rc = opt_bytes(&c, gf, y[G_SOURCE], "_SOURCE_META", &m->global_index.has_source_meta, &m->global_index.source_meta))) return rc;
    }
    *out = m;
    return PAIMON_OK;
}

/* ---- deep copies ------------------------------------------------------------ */

static int copy_bytes(pm_arena *a, pm_bytes *b) {
    if (!b->ptr) return 0;
    uint8_t *p = pm_arena_alloc(a, b->len ? b->len : 1);
    if (!p) return -1;
    if (b->len) memcpy(p, b->ptr, b->len);
    b->ptr = p;
    return 0;
}

static int copy_str(pm_arena *a, const char **s) {
    if (!*s) return 0;
    char *p = pm_arena_strndup(a, *s, strlen(*s));
    if (!p) return -1;
    *s = p;
    return 0;
}

static int copy_strs(pm_arena *a, pm_strs *s) {
    if (!s->v) return 0;
    const char **v = pm_arena_alloc(a, (s->n ? s->n : 1) * sizeof *v);
    if (!v) return -1;
    for (size_t i = 0; i < s->n; i++) {
        v[i] = s->v[i];
        if (copy_str(a, &v[i])) return -1;
    }
    s->v = v;
    return 0;
}

static void *copy_array(pm_arena *a, const void *src, size_t n, size_t size) {
    void *p = pm_arena_alloc(a, n ? n * size : 1);
    if (p && n) memcpy(p, src, n * size);
    return p;
}

static int copy_stats(pm_arena *a, pm_stats *st) {
    if (copy_bytes(a, &st->min_values) || copy_bytes(a, &st->max_values)) return -1;
    size_t n = st->n_null_counts;
    if (st->null_counts && !(st->null_counts = copy_array(a, st->null_counts, n, sizeof *st->null_counts)))
        return -1;
    if (st->null_count_is_null && !(st->null_count_is_null = copy_array(a, st->null_count_is_null, n, 1)))
        return -1;
    return 0;
}

int pm_manifest_entry_copy(pm_arena *a, const pm_manifest_entry *src, pm_manifest_entry *dst) {
    *dst = *src;
    pm_data_file *f = &dst->file;
    if (copy_bytes(a, &dst->partition) || copy_str(a, &f->file_name) || copy_bytes(a, &f->min_key) ||
        copy_bytes(a, &f->max_key) || copy_stats(a, &f->key_stats) || copy_stats(a, &f->value_stats) ||
        copy_strs(a, &f->extra_files) || copy_bytes(a, &f->embedded_index) || copy_strs(a, &f->value_stats_cols) ||
        copy_str(a, &f->external_path) || copy_strs(a, &f->write_cols))
        return -1;
    if (f->write_cols_sequences &&
        !(f->write_cols_sequences = copy_array(a, f->write_cols_sequences, f->n_write_cols_sequences,
                                               sizeof *f->write_cols_sequences)))
        return -1;
    return 0;
}

int pm_index_entry_copy(pm_arena *a, const pm_index_entry *src, pm_index_entry *dst) {
    *dst = *src;
    if (copy_bytes(a, &dst->partition) || copy_str(a, &dst->index_type) || copy_str(a, &dst->file_name) ||
        copy_str(a, &dst->external_path))
        return -1;
    if (src->dv_ranges) {
        pm_dv_range *v = copy_array(a, src->dv_ranges, src->n_dv_ranges, sizeof *v);
        if (!v) return -1;
        for (size_t i = 0; i < src->n_dv_ranges; i++)
            if (copy_str(a, &v[i].data_file)) return -1;
        dst->dv_ranges = v;
    }
    struct pm_global_index *g = &dst->global_index;
    if (g->extra_field_ids &&
        !(g->extra_field_ids = copy_array(a, g->extra_field_ids, g->n_extra_field_ids, sizeof *g->extra_field_ids)))
        return -1;
    if (copy_bytes(a, &g->index_meta) || copy_bytes(a, &g->source_meta)) return -1;
    return 0;
}

/* ---- encoders (Java 2.0 schemas, byte-exact schema text) --------------- */

#define STATS_FIELDS(rec) \
    "{\"type\":\"record\",\"name\":\"" rec "\",\"fields\":[{\"name\":\"_MIN_VALUES\",\"type\":\"bytes\"}," \
    "{\"name\":\"_MAX_VALUES\",\"type\":\"bytes\"},{\"name\":\"_NULL_COUNTS\",\"type\":[\"null\"," \
    "{\"type\":\"array\",\"items\":[\"null\",\"long\"]}],\"default\":null}]}"

const char PM_SCHEMA_MANIFEST_LIST[] =
    "{\"type\":\"record\",\"name\":\"record\",\"namespace\":\"org.apache.paimon.avro.generated\",\"fields\":["
    "{\"name\":\"_VERSION\",\"type\":\"int\"},{\"name\":\"_FILE_NAME\",\"type\":\"string\"},"
    "{\"name\":\"_FILE_SIZE\",\"type\":\"long\"},{\"name\":\"_NUM_ADDED_FILES\",\"type\":\"long\"},"
    "{\"name\":\"_NUM_DELETED_FILES\",\"type\":\"long\"},{\"name\":\"_PARTITION_STATS\",\"type\":"
    STATS_FIELDS("record__PARTITION_STATS") "},"
    "{\"name\":\"_SCHEMA_ID\",\"type\":\"long\"},"
    "{\"name\":\"_MIN_BUCKET\",\"type\":[\"null\",\"int\"],\"default\":null},"
    "{\"name\":\"_MAX_BUCKET\",\"type\":[\"null\",\"int\"],\"default\":null},"
    "{\"name\":\"_MIN_LEVEL\",\"type\":[\"null\",\"int\"],\"default\":null},"
    "{\"name\":\"_MAX_LEVEL\",\"type\":[\"null\",\"int\"],\"default\":null},"
    "{\"name\":\"_MIN_ROW_ID\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"_MAX_ROW_ID\",\"type\":[\"null\",\"long\"],\"default\":null}]}";

const char PM_SCHEMA_MANIFEST_FILE[] =
    "{\"type\":\"record\",\"name\":\"record\",\"namespace\":\"org.apache.paimon.avro.generated\",\"fields\":["
    "{\"name\":\"_VERSION\",\"type\":\"int\"},{\"name\":\"_KIND\",\"type\":\"int\"},"
    "{\"name\":\"_PARTITION\",\"type\":\"bytes\"},{\"name\":\"_BUCKET\",\"type\":\"int\"},"
    "{\"name\":\"_TOTAL_BUCKETS\",\"type\":\"int\"},{\"name\":\"_FILE\",\"type\":{\"type\":\"record\","
    "\"name\":\"record__FILE\",\"fields\":[{\"name\":\"_FILE_NAME\",\"type\":\"string\"},"
    "{\"name\":\"_FILE_SIZE\",\"type\":\"long\"},{\"name\":\"_ROW_COUNT\",\"type\":\"long\"},"
    "{\"name\":\"_MIN_KEY\",\"type\":\"bytes\"},{\"name\":\"_MAX_KEY\",\"type\":\"bytes\"},"
    "{\"name\":\"_KEY_STATS\",\"type\":" STATS_FIELDS("record__FILE__KEY_STATS") "},"
    "{\"name\":\"_VALUE_STATS\",\"type\":" STATS_FIELDS("record__FILE__VALUE_STATS") "},"
    "{\"name\":\"_MIN_SEQUENCE_NUMBER\",\"type\":\"long\"},{\"name\":\"_MAX_SEQUENCE_NUMBER\",\"type\":\"long\"},"
    "{\"name\":\"_SCHEMA_ID\",\"type\":\"long\"},{\"name\":\"_LEVEL\",\"type\":\"int\"},"
    "{\"name\":\"_EXTRA_FILES\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
    "{\"name\":\"_CREATION_TIME\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}],\"default\":null},"
    "{\"name\":\"_DELETE_ROW_COUNT\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"_EMBEDDED_FILE_INDEX\",\"type\":[\"null\",\"bytes\"],\"default\":null},"
    "{\"name\":\"_FILE_SOURCE\",\"type\":[\"null\",\"int\"],\"default\":null},"
    "{\"name\":\"_VALUE_STATS_COLS\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"string\"}],\"default\":null},"
    "{\"name\":\"_EXTERNAL_PATH\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"_FIRST_ROW_ID\",\"type\":[\"null\",\"long\"],\"default\":null},"
    "{\"name\":\"_WRITE_COLS\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"string\"}],\"default\":null}]}}]}";

const char PM_SCHEMA_INDEX_MANIFEST[] =
    "{\"type\":\"record\",\"name\":\"record\",\"namespace\":\"org.apache.paimon.avro.generated\",\"fields\":["
    "{\"name\":\"_VERSION\",\"type\":\"int\"},{\"name\":\"_KIND\",\"type\":\"int\"},"
    "{\"name\":\"_PARTITION\",\"type\":\"bytes\"},{\"name\":\"_BUCKET\",\"type\":\"int\"},"
    "{\"name\":\"_INDEX_TYPE\",\"type\":\"string\"},{\"name\":\"_FILE_NAME\",\"type\":\"string\"},"
    "{\"name\":\"_FILE_SIZE\",\"type\":\"long\"},{\"name\":\"_ROW_COUNT\",\"type\":\"long\"},"
    "{\"name\":\"_DELETIONS_VECTORS_RANGES\",\"type\":[\"null\",{\"type\":\"array\",\"items\":[\"null\","
    "{\"type\":\"record\",\"name\":\"record__DELETIONS_VECTORS_RANGES\",\"fields\":[{\"name\":\"f0\",\"type\":\"string\"},"
    "{\"name\":\"f1\",\"type\":\"int\"},{\"name\":\"f2\",\"type\":\"int\"},"
    "{\"name\":\"_CARDINALITY\",\"type\":[\"null\",\"long\"],\"default\":null}]}]}],\"default\":null},"
    "{\"name\":\"_EXTERNAL_PATH\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"_GLOBAL_INDEX\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"record__GLOBAL_INDEX\",\"fields\":["
    "{\"name\":\"_ROW_RANGE_START\",\"type\":\"long\"},{\"name\":\"_ROW_RANGE_END\",\"type\":\"long\"},"
    "{\"name\":\"_INDEX_FIELD_ID\",\"type\":\"int\"},"
    "{\"name\":\"_EXTRA_FIELD_IDS\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\"}],\"default\":null},"
    "{\"name\":\"_INDEX_META\",\"type\":[\"null\",\"bytes\"],\"default\":null},"
    "{\"name\":\"_SOURCE_META\",\"type\":[\"null\",\"bytes\"],\"default\":null}]}],\"default\":null}]}";

/* All pm_avro_put_* return 0 or PAIMON_NOMEM; OR-ing keeps encoders short. */
static int put_opt_long(pm_buf *b, int has, int64_t v) {
    return has ? (pm_avro_put_long(b, 1) | pm_avro_put_long(b, v)) : pm_avro_put_long(b, 0);
}
static int put_opt_bytes(pm_buf *b, int has, pm_bytes v) {
    return has ? (pm_avro_put_long(b, 1) | pm_avro_put_bytes(b, v.ptr, v.len)) : pm_avro_put_long(b, 0);
}
static int put_opt_str(pm_buf *b, const char *s) {
    return s ? (pm_avro_put_long(b, 1) | pm_avro_put_string(b, s)) : pm_avro_put_long(b, 0);
}
static int put_strs(pm_buf *b, pm_strs s) {
    int rc = 0;
    if (s.n) {
        rc |= pm_avro_put_long(b, (int64_t)s.n);
        for (size_t i = 0; i < s.n; i++) rc |= pm_avro_put_string(b, s.v[i]);
    }
    return rc | pm_avro_put_long(b, 0);
}
static int put_opt_strs(pm_buf *b, int has, pm_strs s) {
    return has ? (pm_avro_put_long(b, 1) | put_strs(b, s)) : pm_avro_put_long(b, 0);
}
static int put_stats(pm_buf *b, const pm_stats *st) {
    int rc = pm_avro_put_bytes(b, st->min_values.ptr, st->min_values.len);
    rc |= pm_avro_put_bytes(b, st->max_values.ptr, st->max_values.len);
    /* Java always writes the array (getArray has no null check). */
    rc |= pm_avro_put_long(b, 1);
    if (st->n_null_counts) {
        rc |= pm_avro_put_long(b, (int64_t)st->n_null_counts);
        for (size_t i = 0; i < st->n_null_counts; i++) {
            int isnull = st->null_count_is_null && st->null_count_is_null[i];
            rc |= put_opt_long(b, !isnull, st->null_counts ? st->null_counts[i] : 0);
        }
    }
    return rc | pm_avro_put_long(b, 0);
}

static int finish_datum(struct pm_avro_writer *w, int rc, pm_err *e) {
    if (rc) return pm_fail(e, PAIMON_NOMEM, "out of memory encoding a manifest record");
    return pm_avro_writer_end_datum(w, e);
}

int pm_manifest_write_meta(struct pm_avro_writer *w, const pm_manifest_meta *m, pm_err *e) {
    pm_buf *b = pm_avro_writer_datum_buf(w);
    int rc = pm_avro_put_int(b, 2);
    rc |= pm_avro_put_string(b, m->file_name);
    rc |= pm_avro_put_long(b, m->file_size);
    rc |= pm_avro_put_long(b, m->num_added_files);
    rc |= pm_avro_put_long(b, m->num_deleted_files);
    rc |= put_stats(b, &m->partition_stats);
    rc |= pm_avro_put_long(b, m->schema_id);
    rc |= put_opt_long(b, m->min_bucket.has, m->min_bucket.v);
    rc |= put_opt_long(b, m->max_bucket.has, m->max_bucket.v);
    rc |= put_opt_long(b, m->min_level.has, m->min_level.v);
    rc |= put_opt_long(b, m->max_level.has, m->max_level.v);
    rc |= put_opt_long(b, m->min_row_id.has, m->min_row_id.v);
    rc |= put_opt_long(b, m->max_row_id.has, m->max_row_id.v);
    return finish_datum(w, rc, e);
}

int pm_manifest_write_entry(struct pm_avro_writer *w, const pm_manifest_entry *m, pm_err *e) {
    pm_buf *b = pm_avro_writer_datum_buf(w);
    const pm_data_file *d = &m->file;
    int rc = pm_avro_put_int(b, 2);
    rc |= pm_avro_put_int(b, m->kind);
    rc |= pm_avro_put_bytes(b, m->partition.ptr, m->partition.len);
    rc |= pm_avro_put_int(b, m->bucket);
    rc |= pm_avro_put_int(b, m->total_buckets);
    rc |= pm_avro_put_string(b, d->file_name);
    rc |= pm_avro_put_long(b, d->file_size);
    rc |= pm_avro_put_long(b, d->row_count);
    rc |= pm_avro_put_bytes(b, d->min_key.ptr, d->min_key.len);
    rc |= pm_avro_put_bytes(b, d->max_key.ptr, d->max_key.len);
    rc |= put_stats(b, &d->key_stats);
    rc |= put_stats(b, &d->value_stats);
    rc |= pm_avro_put_long(b, d->min_sequence_number);
    rc |= pm_avro_put_long(b, d->max_sequence_number);
    rc |= pm_avro_put_long(b, d->schema_id);
    rc |= pm_avro_put_int(b, d->level);
    rc |= put_strs(b, d->extra_files);
    rc |= put_opt_long(b, d->creation_time.has, d->creation_time.v);
    rc |= put_opt_long(b, d->delete_row_count.has, d->delete_row_count.v);
    rc |= put_opt_bytes(b, d->has_embedded_index, d->embedded_index);
    rc |= put_opt_long(b, d->file_source.has, d->file_source.v);
    rc |= put_opt_strs(b, d->has_value_stats_cols, d->value_stats_cols);
    rc |= put_opt_str(b, d->external_path);
    rc |= put_opt_long(b, d->first_row_id.has, d->first_row_id.v);
    rc |= put_opt_strs(b, d->has_write_cols, d->write_cols);
    return finish_datum(w, rc, e);
}

int pm_manifest_write_index(struct pm_avro_writer *w, const pm_index_entry *m, pm_err *e) {
    pm_buf *b = pm_avro_writer_datum_buf(w);
    int rc = pm_avro_put_int(b, 1);
    rc |= pm_avro_put_int(b, m->kind);
    rc |= pm_avro_put_bytes(b, m->partition.ptr, m->partition.len);
    rc |= pm_avro_put_int(b, m->bucket);
    rc |= pm_avro_put_string(b, m->index_type);
    rc |= pm_avro_put_string(b, m->file_name);
    rc |= pm_avro_put_long(b, m->file_size);
    rc |= pm_avro_put_long(b, m->row_count);
    if (m->has_dv_ranges) {
        rc |= pm_avro_put_long(b, 1);
        if (m->n_dv_ranges) {
            rc |= pm_avro_put_long(b, (int64_t)m->n_dv_ranges);
            for (size_t i = 0; i < m->n_dv_ranges; i++) {
                const pm_dv_range *d = &m->dv_ranges[i];
                rc |= pm_avro_put_long(b, 1);      /* non-null union branch */
                rc |= pm_avro_put_string(b, d->data_file);
                rc |= pm_avro_put_int(b, d->offset);
                rc |= pm_avro_put_int(b, d->length);
                rc |= put_opt_long(b, d->cardinality.has, d->cardinality.v);
            }
        }
        rc |= pm_avro_put_long(b, 0);
    } else {
        rc |= pm_avro_put_long(b, 0);
    }
    rc |= put_opt_str(b, m->external_path);
    if (m->has_global_index) {
        const struct pm_global_index *g = &m->global_index;
        rc |= pm_avro_put_long(b, 1);
        rc |= pm_avro_put_long(b, g->row_range_start);
        rc |= pm_avro_put_long(b, g->row_range_end);
        rc |= pm_avro_put_int(b, g->index_field_id);
        if (g->has_extra_field_ids) {
            rc |= pm_avro_put_long(b, 1);
            if (g->n_extra_field_ids) {
                rc |= pm_avro_put_long(b, (int64_t)g->n_extra_field_ids);
                for (size_t i = 0; i < g->n_extra_field_ids; i++) rc |= pm_avro_put_int(b, g->extra_field_ids[i]);
            }
            rc |= pm_avro_put_long(b, 0);
        } else {
            rc |= pm_avro_put_long(b, 0);
        }
        rc |= put_opt_bytes(b, g->has_index_meta, g->index_meta);
        rc |= put_opt_bytes(b, g->has_source_meta, g->source_meta);
    } else {
        rc |= pm_avro_put_long(b, 0);
    }
    return finish_datum(w, rc, e);
}

const char *pm_manifest_codec_for(const char *manifest_compression, const char *avro_codec) {
    const char *c = avro_codec && *avro_codec ? avro_codec : manifest_compression;
    if (!c || !*c || !strcmp(c, "zstd") || !strcmp(c, "zstandard")) return "zstandard";
    if (!strcmp(c, "none") || !strcmp(c, "null")) return "null";
    return c;
}
