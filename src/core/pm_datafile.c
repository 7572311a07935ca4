/* Avro data files of append-only tables (Java AvroFileFormat,
 * AvroSchemaConverter, FieldWriterFactory, RollingFileWriter,
 * TruncateSimpleColStatsCollector). */
#include "pm_datafile.h"
#include "pm_set.h"
#include "pm_value.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

__extension__ typedef __int128 df_i128;
__extension__ typedef unsigned __int128 df_u128;

static const uint8_t EMPTY_ROW[12] = {0};

/* ---- Avro schema text ------------------------------------------------------ */

/* Avro names: [A-Za-z_][A-Za-z0-9_]* (Java's SchemaBuilder rejects others). */
static int valid_avro_name(const char *s) {
    if (!s || !*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (const char *p = s + 1; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
    return 1;
}

typedef struct schema_ctx {
    pm_buf *b;
    pm_err *e;
    const char *col;             /* top-level column, for messages */
    char **names;                /* record names defined so far */
    size_t n_names, cap_names;
} schema_ctx;

static int type_text(schema_ctx *c, const pm_type *t, const char *row_name, int depth);

/* A record: row_name is the full name below the generated namespace. */
static int record_text(schema_ctx *c, const char *row_name, const pm_data_field *fields, size_t n,
                       const char *const *fixed_names, const pm_type *const *fixed_types, int depth) {
    pm_buf *b = c->b;
    for (size_t i = 0; i < c->n_names; i++)        /* Avro prints a repeated named type by name */
        if (!strcmp(c->names[i], row_name)) return pm_buf_printf(b, "\"%s\"", row_name) ? PAIMON_NOMEM : PAIMON_OK;
    if (c->n_names == c->cap_names) {
        size_t nc = c->cap_names ? c->cap_names * 2 : 8;
        char **nn = realloc(c->names, nc * sizeof *nn);
        if (!nn) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
        c->names = nn;
        c->cap_names = nc;
    }
    if (!(c->names[c->n_names] = pm_strdup(row_name))) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
    c->n_names++;
    int rc;
    if (depth == 0)
        rc = pm_buf_printf(b, "{\"type\":\"record\",\"name\":\"%s\",\"namespace\":\"org.apache.paimon.avro.generated\",\"fields\":[", row_name);
    else
        rc = pm_buf_printf(b, "{\"type\":\"record\",\"name\":\"%s\",\"fields\":[", row_name);
    if (rc) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *fname = fields ? fields[i].name : fixed_names[i];
        const pm_type *ft = fields ? fields[i].type : fixed_types[i];
        if (depth == 0) c->col = fname;     /* before the check: its message names the column */
        if (!valid_avro_name(fname))
            return pm_fail(c->e, PAIMON_UNSUPPORTED, "column '%s': '%s' is not a valid Avro name "
                           "([A-Za-z_][A-Za-z0-9_]*); Java cannot write it to Avro either", c->col, fname);
        size_t nl = strlen(row_name) + strlen(fname) + 2;
        char *child = malloc(nl);
        if (!child) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
        snprintf(child, nl, "%s_%s", row_name, fname);
        rc = pm_buf_printf(b, "%s{\"name\":\"%s\",\"type\":", i ? "," : "", fname);
        if (!rc) rc = type_text(c, ft, child, depth + 1);
        free(child);
        if (rc) return rc == PAIMON_NOMEM ? pm_fail(c->e, rc, "out of memory") : rc;
        /* nullable fields default to null; a map entry's key never has a default */
        int is_key = !fields && i == 0;
        if (ft->nullable && !is_key) rc = pm_buf_printf(b, ",\"default\":null");
        if (rc || pm_buf_putc(b, '}')) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
    }
    return pm_buf_printf(b, "]}") ? pm_fail(c->e, PAIMON_NOMEM, "out of memory") : PAIMON_OK;
}

static int is_string_type(const pm_type *t) { return t->root == PM_T_CHAR || t->root == PM_T_VARCHAR; }

/* Java AvroSchemaConverter.convertToSchema(type, rowName). */
static int type_text(schema_ctx *c, const pm_type *t, const char *row_name, int depth) {
    pm_buf *b = c->b;
    if (depth > 64) return pm_fail(c->e, PAIMON_UNSUPPORTED, "column '%s': type nested too deeply", c->col);
    int rc = PAIMON_OK;
    if (t->nullable && pm_buf_printf(b, "[\"null\",")) return PAIMON_NOMEM;
    switch (t->root) {
    case PM_T_BOOLEAN: rc = pm_buf_printf(b, "\"boolean\""); break;
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: rc = pm_buf_printf(b, "\"int\""); break;
    case PM_T_BIGINT: rc = pm_buf_printf(b, "\"long\""); break;
    case PM_T_FLOAT: rc = pm_buf_printf(b, "\"float\""); break;
    case PM_T_DOUBLE: rc = pm_buf_printf(b, "\"double\""); break;
    case PM_T_CHAR: case PM_T_VARCHAR: rc = pm_buf_printf(b, "\"string\""); break;
    case PM_T_BINARY: case PM_T_VARBINARY: case PM_T_BLOB: rc = pm_buf_printf(b, "\"bytes\""); break;
    case PM_T_DATE: rc = pm_buf_printf(b, "{\"type\":\"int\",\"logicalType\":\"date\"}"); break;
    case PM_T_TIME:
        if (t->precision > 3)
            return pm_fail(c->e, PAIMON_UNSUPPORTED, "column '%s': Avro does not support TIME(%d) (precision <= 3 only)",
                           c->col, (int)t->precision);
        rc = pm_buf_printf(b, "{\"type\":\"int\",\"logicalType\":\"time-millis\"}");
        break;
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ: {
        if (t->precision > 6)
            return pm_fail(c->e, PAIMON_UNSUPPORTED, "column '%s': Avro does not support TIMESTAMP(%d) (precision <= 6 only)",
                           c->col, (int)t->precision);
        const char *lt = t->root == PM_T_TIMESTAMP ? (t->precision <= 3 ? "timestamp-millis" : "timestamp-micros")
                                                   : (t->precision <= 3 ? "local-timestamp-millis" : "local-timestamp-micros");
        rc = pm_buf_printf(b, "{\"type\":\"long\",\"logicalType\":\"%s\"}", lt);
        break;
    }
    case PM_T_DECIMAL:
        rc = pm_buf_printf(b, "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":%d,\"scale\":%d}",
                           (int)t->precision, (int)t->scale);
        break;
    case PM_T_ARRAY:
        if ((rc = pm_buf_printf(b, "{\"type\":\"array\",\"items\":"))) break;
        if ((rc = type_text(c, t->element, row_name, depth + 1))) return rc;
        rc = pm_buf_putc(b, '}');
        break;
    case PM_T_MAP: case PM_T_MULTISET: {
        pm_type ival;
        memset(&ival, 0, sizeof ival);
        ival.root = PM_T_INT;
        ival.nullable = 1;      /* MULTISET counts: Java's new IntType(), nullable */
        const pm_type *kt = t->element, *vt = t->root == PM_T_MAP ? t->value : &ival;
        if (is_string_type(kt)) {
            if ((rc = pm_buf_printf(b, "{\"type\":\"map\",\"values\":"))) break;
            if ((rc = type_text(c, vt, row_name, depth + 1))) return rc;
            rc = pm_buf_putc(b, '}');
        } else {
            static const char *const kv_names[2] = {"key", "value"};
            const pm_type *kv_types[2] = {kt, vt};
            if ((rc = pm_buf_printf(b, "{\"type\":\"array\",\"items\":"))) break;
            if ((rc = record_text(c, row_name, NULL, 2, kv_names, kv_types, depth + 1))) return rc;
            rc = pm_buf_printf(b, ",\"logicalType\":\"map\"}");
        }
        break;
    }
    case PM_T_ROW:
        if ((rc = record_text(c, row_name, t->fields, t->n_fields, NULL, NULL, depth + 1))) return rc;
        break;
    default:
        return pm_fail(c->e, PAIMON_UNSUPPORTED, "column '%s': writing %s values to Avro is not supported",
                       c->col, pm_type_root_name(t->root));
    }
    if (!rc && t->nullable) rc = pm_buf_putc(b, ']');
    return rc ? pm_fail(c->e, PAIMON_NOMEM, "out of memory") : PAIMON_OK;
}

int pm_datafile_avro_schema(const pm_data_field *fields, size_t n, pm_buf *out, pm_err *e) {
    schema_ctx c = {out, e, "", NULL, 0, 0};
    int rc = record_text(&c, "record", fields, n, NULL, NULL, 0);
    for (size_t i = 0; i < c.n_names; i++) free(c.names[i]);
    free(c.names);
    if (rc) return rc;
    return pm_buf_cstr(out) ? pm_fail(e, PAIMON_NOMEM, "out of memory") : PAIMON_OK;
}

int pm_datafile_codec(const pm_schema *s, const char **codec, int *level, pm_err *e) {
    *level = 1;
    const char *lv = pm_schema_option_or_default(s, "file.compression.zstd-level");
    if (lv) {
        char *end;
        long x = strtol(lv, &end, 10);
        if (end != lv && !*end) *level = (int)x;
    }
    const char *c = pm_schema_option(s, "avro.codec");
    const char *which = "avro.codec";
    if (!c) { c = pm_schema_option_or_default(s, "file.compression"); which = "file.compression"; }
    if (!c) c = "zstd";
    if (!strcasecmp(c, "zstd") || !strcasecmp(c, "zstandard")) *codec = "zstandard";
    else if (!strcasecmp(c, "none") || !strcasecmp(c, "null") || !strcasecmp(c, "uncompressed")) *codec = "null";
    else if (!strcasecmp(c, "snappy")) *codec = "snappy";
    else if (!strcasecmp(c, "deflate")) *codec = "deflate";
    else
        return pm_fail(e, PAIMON_UNSUPPORTED,
                       "the table sets %s=%s; paimon-lua writes Avro data files with zstd, snappy, deflate or none",
                       which, c);
    /* Avro's deflate level defaults to 6 (CodecFactory.DEFAULT_DEFLATE_LEVEL is -1 = zlib's 6) */
    if (!strcmp(*codec, "deflate")) *level = 6;
    return PAIMON_OK;
}

/* ---- options ---------------------------------------------------------------- */

int pm_stats_mode(const pm_schema *s, const char *field, int *mode, int *trunc_len, pm_err *e) {
    char key[600];
    snprintf(key, sizeof key, "fields.%s.stats-mode", field);
    const char *v = pm_schema_option(s, key);
    const char *which = key;
    if (!v) { v = pm_schema_option_or_default(s, "metadata.stats-mode"); which = "metadata.stats-mode"; }
    if (!v) v = "truncate(16)";
    *trunc_len = 0;
    if (!strcasecmp(v, "none")) *mode = PM_STATS_NONE;
    else if (!strcasecmp(v, "counts")) *mode = PM_STATS_COUNTS;
    else if (!strcasecmp(v, "full")) *mode = PM_STATS_FULL;
    else if (!strncasecmp(v, "truncate(", 9)) {
        char *end;
        long n = strtol(v + 9, &end, 10);
        if (end == v + 9 || strcmp(end, ")") || n <= 0 || n > 1000000)
            return pm_fail(e, PAIMON_UNSUPPORTED, "option %s=%s: expected truncate(N) with N > 0", which, v);
        *mode = PM_STATS_TRUNCATE;
        *trunc_len = (int)n;
    } else {
        return pm_fail(e, PAIMON_UNSUPPORTED, "option %s=%s: expected none, counts, full or truncate(N)", which, v);
    }
    return PAIMON_OK;
}

static int is_true(const char *v) { return v && !strcasecmp(v, "true"); }

int pm_append_check(const paimon_table *t, pm_err *e) {
    const pm_schema *s = t->schema;
    const char *fmt = pm_schema_option_or_default(s, "file.format");
    if (!fmt || strcasecmp(fmt, "avro"))
        return pm_fail(e, PAIMON_UNSUPPORTED,
                       "%s: the table sets file.format=%s; paimon-lua writes only Avro data files (file.format=avro)",
                       t->root, fmt ? fmt : "parquet");
    if (s->n_primary_keys)
        return pm_fail(e, PAIMON_UNSUPPORTED,
                       "%s: primary-key table (primary key %s...): paimon-lua writes only append-only tables",
                       t->root, s->primary_keys[0]);
    const char *b = pm_schema_option_or_default(s, "bucket");
    if (!b || strcmp(b, "-1"))
        return pm_fail(e, PAIMON_UNSUPPORTED,
                       "%s: the table sets bucket=%s; paimon-lua writes only bucket-unaware append tables "
                       "(bucket=-1): fixed-bucket assignment (Java's Murmur3 hash of the bucket key) is "
                       "not verified against Java",
                       t->root, b ? b : "?");
    if (is_true(pm_schema_option(s, "row-tracking.enabled")) || is_true(pm_schema_option(s, "data-evolution.enabled")))
        return pm_fail(e, PAIMON_UNSUPPORTED,
                       "%s: the table sets row-tracking.enabled/data-evolution.enabled; paimon-lua does not "
                       "assign row ids", t->root);
    if (pm_schema_option(s, "data-file.external-paths"))
        return pm_fail(e, PAIMON_UNSUPPORTED,
                       "%s: the table sets data-file.external-paths; paimon-lua writes data files only "
                       "inside the table directory", t->root);
    pm_buf tmp = {0};
    int rc = pm_datafile_avro_schema(s->fields, s->n_fields, &tmp, e);
    pm_buf_free(&tmp);
    if (rc) { pm_err_prefix(e, "%s", t->root); return rc; }
    const char *codec;
    int level;
    if ((rc = pm_datafile_codec(s, &codec, &level, e))) return rc;
    for (size_t i = 0; i < s->n_fields; i++) {
        int mode, tl;
        if ((rc = pm_stats_mode(s, s->fields[i].name, &mode, &tl, e))) return rc;
    }
    return PAIMON_OK;
}

/* ---- value statistics (Java's SimpleColStatsCollector semantics) ------------ */

typedef struct colstat {
    int mode, trunc;
    int comparable;
    int has_min, has_max, failed;
    int64_t nulls;
    pm_datum min, max;
    pm_buf minb, maxb;
} colstat;

static int comparable_type(const pm_type *t) {
    switch (t->root) {
    case PM_T_BOOLEAN: case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT:
    case PM_T_FLOAT: case PM_T_DOUBLE: case PM_T_DECIMAL: case PM_T_CHAR: case PM_T_VARCHAR:
    case PM_T_DATE: case PM_T_TIME: case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ:
        return 1;
    default:
        return 0;   /* byte[] and composite values are not Comparable in Java */
    }
}

static df_i128 big_from_bytes(const uint8_t *p, size_t n) {
    if (!n) return 0;
    df_u128 u = (p[0] & 0x80) ? ~(df_u128)0 : 0;
    for (size_t i = 0; i < n; i++) u = (u << 8) | p[i];
    return (df_i128)u;
}

static int32_t fbits(float f) {
    if (f != f) return 0x7fc00000;
    int32_t x;
    memcpy(&x, &f, 4);
    return x;
}
static int64_t dbits(double d) {
    if (d != d) return INT64_C(0x7ff8000000000000);
    int64_t x;
    memcpy(&x, &d, 8);
    return x;
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

static int cmp_datum(const pm_type *t, const pm_datum *a, const pm_datum *b) {
    switch (t->root) {
    case PM_T_FLOAT:
        if (a->v.f < b->v.f) return -1;
        if (a->v.f > b->v.f) return 1;
        return CMP(fbits(a->v.f), fbits(b->v.f));
    case PM_T_DOUBLE:
        if (a->v.d < b->v.d) return -1;
        if (a->v.d > b->v.d) return 1;
        return CMP(dbits(a->v.d), dbits(b->v.d));
    case PM_T_DECIMAL:
        if (t->precision <= 18) return CMP(a->v.i, b->v.i);
        {
            df_i128 x = big_from_bytes(a->v.bin.ptr, a->v.bin.len), y = big_from_bytes(b->v.bin.ptr, b->v.bin.len);
            return CMP(x, y);
        }
    case PM_T_CHAR: case PM_T_VARCHAR: {
        size_t n = a->v.bin.len < b->v.bin.len ? a->v.bin.len : b->v.bin.len;
        int c = n ? memcmp(a->v.bin.ptr, b->v.bin.ptr, n) : 0;
        if (c) return c < 0 ? -1 : 1;
        return CMP(a->v.bin.len, b->v.bin.len);
    }
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ:
        if (a->v.ts.millis != b->v.ts.millis) return CMP(a->v.ts.millis, b->v.ts.millis);
        return CMP(a->v.ts.nanos_of_milli, b->v.ts.nanos_of_milli);
    default:
        return CMP(a->v.i, b->v.i);
    }
}

/* Byte length of the first `chars` code points (BinaryString.substring). */
static size_t utf8_prefix(const uint8_t *p, size_t n, int chars, int *count) {
    size_t i = 0;
    int c = 0;
    while (i < n && c < chars) {
        uint8_t b = p[i];
        size_t l = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
        i += l;
        c++;
    }
    if (i > n) i = n;
    if (count) *count = c;
    return i;
}

static size_t utf8_put(uint8_t *o, uint32_t cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) { o[0] = '?'; return 1; }   /* lone surrogate: Java encodes '?' */
    if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { o[0] = (uint8_t)(0xC0 | (cp >> 6)); o[1] = (uint8_t)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12)); o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18)); o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

static uint32_t utf8_get(const uint8_t *p, size_t n, size_t *len) {
    uint8_t b = p[0];
    if (b < 0x80 || n < 2) { *len = 1; return b; }
    if ((b >> 5) == 6) { *len = 2; return ((uint32_t)(b & 0x1F) << 6) | (p[1] & 0x3F); }
    if ((b >> 4) == 14 && n >= 3) {
        *len = 3;
        return ((uint32_t)(b & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    }
    if ((b >> 3) == 30 && n >= 4) {
        *len = 4;
        return ((uint32_t)(b & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) | ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
    }
    *len = 1;
    return b;
}

/* Store value bytes as the column's min or max (copy). */
static int stat_store(const pm_type *t, pm_datum *dst, pm_buf *store, const pm_datum *src,
                      const uint8_t *bytes, size_t n) {
    *dst = *src;
    int var = t->root == PM_T_CHAR || t->root == PM_T_VARCHAR || (t->root == PM_T_DECIMAL && t->precision > 18);
    if (!var) return PAIMON_OK;
    store->len = 0;
    if (n && pm_buf_append(store, bytes, n)) return PAIMON_NOMEM;
    dst->v.bin.ptr = store->data;
    dst->v.bin.len = n;
    return PAIMON_OK;
}

static int stat_collect(colstat *c, const pm_type *t, const pm_datum *d) {
    if (d->is_null) { c->nulls++; return PAIMON_OK; }
    if (c->mode == PM_STATS_NONE || c->mode == PM_STATS_COUNTS || !c->comparable) return PAIMON_OK;
    int is_str = t->root == PM_T_CHAR || t->root == PM_T_VARCHAR;
    int trunc = c->mode == PM_STATS_TRUNCATE && is_str;
    if (!c->has_min || cmp_datum(t, d, &c->min) < 0) {
        size_t n = d->v.bin.len;
        if (trunc) n = utf8_prefix(d->v.bin.ptr, d->v.bin.len, c->trunc, NULL);
        if (stat_store(t, &c->min, &c->minb, d, d->v.bin.ptr, n)) return PAIMON_NOMEM;
        c->has_min = 1;
    }
    if (!c->has_max || cmp_datum(t, d, &c->max) > 0) {
        if (!trunc) {
            if (stat_store(t, &c->max, &c->maxb, d, d->v.bin.ptr, d->v.bin.len)) return PAIMON_NOMEM;
            c->has_max = 1;
        } else {
            int chars;
            size_t n = utf8_prefix(d->v.bin.ptr, d->v.bin.len, c->trunc, &chars);
            if (n == d->v.bin.len) {
                if (stat_store(t, &c->max, &c->maxb, d, d->v.bin.ptr, n)) return PAIMON_NOMEM;
                c->has_max = 1;
            } else {
                /* offsets of the code points in the truncated prefix */
                size_t offs[64], *o = offs;
                if ((size_t)chars > 64 && !(o = malloc((size_t)chars * sizeof *o))) return PAIMON_NOMEM;
                size_t pos = 0;
                for (int k = 0; k < chars; k++) {
                    size_t l;
                    o[k] = pos;
                    utf8_get(d->v.bin.ptr + pos, n - pos, &l);
                    pos += l;
                }
                int done = 0;
                for (int k = chars - 1; k >= 0 && !done; k--) {
                    size_t l;
                    uint32_t cp = utf8_get(d->v.bin.ptr + o[k], n - o[k], &l) + 1;
                    if (cp <= 0x10FFFF) {
                        uint8_t tail[4];
                        size_t tl = utf8_put(tail, cp);
                        pm_buf tmp = {0};
                        if (pm_buf_append(&tmp, d->v.bin.ptr, o[k]) || pm_buf_append(&tmp, tail, tl)) {
                            pm_buf_free(&tmp);
                            if (o != offs) free(o);
                            return PAIMON_NOMEM;
                        }
                        int rc = stat_store(t, &c->max, &c->maxb, d, tmp.data, tmp.len);
                        pm_buf_free(&tmp);
                        if (rc) { if (o != offs) free(o); return rc; }
                        c->has_max = 1;
                        done = 1;
                    }
                }
                if (o != offs) free(o);
                if (!done) c->failed = 1;
            }
        }
    }
    return PAIMON_OK;
}

static void stat_reset(colstat *c) {
    c->has_min = c->has_max = c->failed = 0;
    c->nulls = 0;
}

/* ---- writer ------------------------------------------------------------------- */

typedef struct pwriter {
    uint8_t *part;
    size_t part_len;
    char uuid[37];
    int64_t file_counter;
    int64_t seq;
    pm_avro_writer *aw;
    char *cur_name;
    int64_t cur_rows, cur_bytes, cur_min_seq;
} pwriter;

typedef struct done_file {
    pm_manifest_entry m;
    char *path;          /* full path, for discard */
    int handed_out;
} done_file;

struct pm_append_writer {
    paimon_table *t;
    const pm_schema *schema;  /* t's schema when opened (an alter on t leaves it allocated) */
    char *schema_json;
    const char *codec;
    int level;
    int64_t target_size;
    const char *prefix;
    size_t n;                 /* fields */
    pm_type **types;
    size_t *part_idx;
    int *modes, *truncs;
    pwriter **pw;             /* one per partition */
    colstat **pw_stats;       /* stats of each partition writer's open file */
    size_t n_pw, cap_pw;
    pm_set *parts;            /* partition bytes; ordinal = index in pw */
    done_file *done;
    size_t n_done, cap_done;
    pm_manifest_entry *out;   /* handed out by prepare */
    size_t n_out;
    pm_datum *pvals;
    pm_buf scratch, enc;
    int broken;
};

static void done_free(done_file *d) {
    free((void *)d->m.partition.ptr);
    free((char *)d->m.file.file_name);
    free((void *)d->m.file.value_stats.min_values.ptr);
    free((void *)d->m.file.value_stats.max_values.ptr);
    free(d->m.file.value_stats.null_counts);
    free(d->m.file.value_stats.null_count_is_null);
    free(d->path);
    memset(d, 0, sizeof *d);
}

static void pwriter_free(pwriter *p) {
    if (!p) return;
    free(p->part);
    pm_avro_writer_abort(p->aw);
    free(p->cur_name);
    free(p);
}

static void stats_free(colstat *c, size_t n) {
    if (!c) return;
    for (size_t i = 0; i < n; i++) { pm_buf_free(&c[i].minb); pm_buf_free(&c[i].maxb); }
    free(c);
}

void pm_append_writer_free(pm_append_writer *w) {
    if (!w) return;
    pm_err e;
    pm_append_writer_discard(w, &e);
    for (size_t i = 0; i < w->n_pw; i++) { pwriter_free(w->pw[i]); stats_free(w->pw_stats[i], w->n); }
    free(w->pw);
    free(w->pw_stats);
    pm_set_free(w->parts);
    for (size_t i = 0; i < w->n_done; i++) done_free(&w->done[i]);
    free(w->done);
    free(w->out);
    free(w->schema_json);
    free(w->types);
    free(w->part_idx);
    free(w->modes);
    free(w->truncs);
    free(w->pvals);
    pm_buf_free(&w->scratch);
    pm_buf_free(&w->enc);
    free(w);
}

int pm_append_writer_open(paimon_table *t, pm_append_writer **out, pm_err *e) {
    *out = NULL;
    int rc = pm_append_check(t, e);
    if (rc) return rc;
    const pm_schema *s = t->schema;
    pm_append_writer *w = calloc(1, sizeof *w);
    if (!w) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    w->t = t;
    w->schema = s;
    w->n = s->n_fields;
    size_t nn = w->n ? w->n : 1;
    w->types = calloc(nn, sizeof *w->types);
    w->modes = calloc(nn, sizeof *w->modes);
    w->truncs = calloc(nn, sizeof *w->truncs);
    w->part_idx = calloc(t->n_part ? t->n_part : 1, sizeof *w->part_idx);
    w->pvals = calloc(t->n_part ? t->n_part : 1, sizeof *w->pvals);
    if (!w->types || !w->modes || !w->truncs || !w->part_idx || !w->pvals) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto fail; }
    for (size_t i = 0; i < w->n; i++) {
        w->types[i] = s->fields[i].type;
        if ((rc = pm_stats_mode(s, s->fields[i].name, &w->modes[i], &w->truncs[i], e))) goto fail;
    }
    for (size_t k = 0; k < t->n_part; k++) {
        size_t i = 0;
        while (i < w->n && strcmp(s->fields[i].name, t->part_keys[k])) i++;
        if (i == w->n) { rc = pm_fail(e, PAIMON_CORRUPT, "partition key '%s' is not a column", t->part_keys[k]); goto fail; }
        w->part_idx[k] = i;
    }
    pm_buf sj = {0};
    if ((rc = pm_datafile_avro_schema(s->fields, s->n_fields, &sj, e))) { pm_buf_free(&sj); goto fail; }
    w->schema_json = (char *)sj.data;
    if ((rc = pm_datafile_codec(s, &w->codec, &w->level, e))) goto fail;
    const char *ts = pm_schema_option_or_default(s, "target-file-size");
    w->target_size = 256LL << 20;
    if (ts) {
        int64_t b;
        if (pm_parse_memory_size(ts, &b, e) != PAIMON_OK || b <= 0) {
            rc = pm_fail(e, PAIMON_UNSUPPORTED, "option target-file-size=%s is not a memory size", ts);
            goto fail;
        }
        w->target_size = b;
    }
    w->prefix = pm_schema_option_or_default(s, "data-file.prefix");
    if (!w->prefix) w->prefix = "data-";
    if (strchr(w->prefix, '/')) { rc = pm_fail(e, PAIMON_UNSUPPORTED, "option data-file.prefix=%s contains '/'", w->prefix); goto fail; }
    *out = w;
    return PAIMON_OK;
fail:
    pm_append_writer_free(w);
    return rc;
}

/* The partition writer for serialized partition bytes (created on demand). */
static int get_pwriter(pm_append_writer *w, const uint8_t *part, size_t len, size_t *idx, pm_err *e) {
    if (!w->parts && !(w->parts = pm_set_new())) return pm_nomem(e);
    long known = pm_set_ordinal(w->parts, part, len);
    if (known >= 0) { *idx = (size_t)known; return PAIMON_OK; }
    if (w->n_pw == w->cap_pw) {
        size_t nc = w->cap_pw ? w->cap_pw * 2 : 8;
        pwriter **np = realloc(w->pw, nc * sizeof *np);
        if (!np) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        w->pw = np;
        colstat **ns = realloc(w->pw_stats, nc * sizeof *ns);
        if (!ns) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        w->pw_stats = ns;
        w->cap_pw = nc;
    }
    pwriter *p = calloc(1, sizeof *p);
    colstat *cs = calloc(w->n ? w->n : 1, sizeof *cs);
    if (!p || !cs || !(p->part = malloc(len ? len : 1))) {
        free(p ? p->part : NULL); free(p); free(cs);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    memcpy(p->part, part, len);
    p->part_len = len;
    pm_uuid4(p->uuid);
    for (size_t i = 0; i < w->n; i++) {
        cs[i].mode = w->modes[i];
        cs[i].trunc = w->truncs[i];
        cs[i].comparable = comparable_type(w->types[i]);
    }
    w->pw[w->n_pw] = p;
    w->pw_stats[w->n_pw] = cs;
    w->n_pw++;
    /* ordinal n_pw - 1: the writer just appended. After an earlier failed
     * add the ordinals lag behind pw: never map a partition to another's
     * writer, refuse every new partition instead. */
    if (pm_set_add_ordinal(w->parts, part, len, NULL) != (long)(w->n_pw - 1)) {
        pm_set_remove(w->parts, part, len);
        return pm_nomem(e);
    }
    *idx = w->n_pw - 1;
    return PAIMON_OK;
}

/* BigInteger.toByteArray of an unscaled value (points into buf). */
static const uint8_t *unscaled_bytes(df_i128 v, uint8_t buf[16], size_t *n) {
    df_u128 u = (df_u128)v;
    for (int i = 15; i >= 0; i--) { buf[i] = (uint8_t)u; u >>= 8; }
    const uint8_t *p;
    pm_twos_complement_minimal(buf, 16, &p, n);
    return p;
}

static df_i128 pow10_i128(int p) {
    df_i128 r = 1;
    for (int i = 0; i < p; i++) r *= 10;
    return r;
}

int pm_datafile_encode_value(pm_buf *b, const pm_type *t, const pm_datum *d, const char *col, pm_err *e) {
    int rc;
    if (t->nullable) {
        if ((rc = pm_avro_put_long(b, d->is_null ? 0 : 1))) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        if (d->is_null) return PAIMON_OK;
    } else if (d->is_null) {
        return pm_fail(e, PAIMON_MISUSE, "column '%s' is NOT NULL but the row has no value for it", col);
    }
    switch (t->root) {
    case PM_T_BOOLEAN: rc = pm_avro_put_bool(b, d->v.i != 0); break;
    case PM_T_TINYINT:
        if (d->v.i < -128 || d->v.i > 127) return pm_fail(e, PAIMON_MISUSE, "column '%s': %lld is out of range for TINYINT", col, (long long)d->v.i);
        rc = pm_avro_put_int(b, (int32_t)d->v.i);
        break;
    case PM_T_SMALLINT:
        if (d->v.i < -32768 || d->v.i > 32767) return pm_fail(e, PAIMON_MISUSE, "column '%s': %lld is out of range for SMALLINT", col, (long long)d->v.i);
        rc = pm_avro_put_int(b, (int32_t)d->v.i);
        break;
    case PM_T_INT: case PM_T_DATE: case PM_T_TIME:
        if (d->v.i < INT32_MIN || d->v.i > INT32_MAX) return pm_fail(e, PAIMON_MISUSE, "column '%s': %lld is out of range for %s", col, (long long)d->v.i, pm_type_root_name(t->root));
        if (t->root == PM_T_TIME && (d->v.i < 0 || d->v.i >= 86400000)) return pm_fail(e, PAIMON_MISUSE, "column '%s': time of day %lld ms out of range", col, (long long)d->v.i);
        rc = pm_avro_put_int(b, (int32_t)d->v.i);
        break;
    case PM_T_BIGINT: rc = pm_avro_put_long(b, d->v.i); break;
    case PM_T_FLOAT: rc = pm_avro_put_float(b, d->v.f); break;
    case PM_T_DOUBLE: rc = pm_avro_put_double(b, d->v.d); break;
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY: case PM_T_BLOB:
        if (d->v.bin.len && !d->v.bin.ptr) return pm_fail(e, PAIMON_MISUSE, "column '%s': NULL data pointer", col);
        rc = pm_avro_put_bytes(b, d->v.bin.ptr, d->v.bin.len);
        break;
    case PM_T_DECIMAL: {
        df_i128 v;
        if (t->precision <= 18) v = d->v.i;
        else {
            if (d->v.bin.len > 16 || (d->v.bin.len && !d->v.bin.ptr)) return pm_fail(e, PAIMON_MISUSE, "column '%s': bad decimal bytes", col);
            v = big_from_bytes(d->v.bin.ptr, d->v.bin.len);
        }
        df_i128 lim = pow10_i128(t->precision);
        if (v >= lim || v <= -lim)
            return pm_fail(e, PAIMON_MISUSE, "column '%s': value does not fit DECIMAL(%d, %d)", col, (int)t->precision, (int)t->scale);
        uint8_t buf[16];
        size_t n;
        const uint8_t *bytes = unscaled_bytes(v, buf, &n);
        rc = pm_avro_put_bytes(b, bytes, n);
        break;
    }
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ:
        if (d->v.ts.nanos_of_milli < 0 || d->v.ts.nanos_of_milli > 999999) return pm_fail(e, PAIMON_MISUSE, "column '%s': bad nanos", col);
        if (t->precision <= 3) rc = pm_avro_put_long(b, d->v.ts.millis);
        else rc = pm_avro_put_long(b, d->v.ts.millis * 1000 + d->v.ts.nanos_of_milli / 1000);
        break;
    case PM_T_ARRAY: case PM_T_MAP: case PM_T_MULTISET: case PM_T_ROW:
        /* composite values arrive Avro-encoded (see pm_datafile.h) */
        if (d->v.bin.len && !d->v.bin.ptr) return pm_fail(e, PAIMON_MISUSE, "column '%s': NULL data pointer", col);
        rc = pm_buf_append(b, d->v.bin.ptr, d->v.bin.len);
        break;
    default:
        return pm_fail(e, PAIMON_UNSUPPORTED, "column '%s': type %s cannot be written", col, pm_type_root_name(t->root));
    }
    return rc ? pm_fail(e, PAIMON_NOMEM, "out of memory") : PAIMON_OK;
}

/* Close the open file of partition writer i: write it, record the entry. */
static int close_file(pm_append_writer *w, size_t i, pm_err *e) {
    pwriter *p = w->pw[i];
    colstat *cs = w->pw_stats[i];
    if (!p->aw) return PAIMON_OK;
    paimon_table *t = w->t;
    pm_buf bytes = {0};
    pm_avro_writer *aw = p->aw;
    p->aw = NULL;
    int rc = pm_avro_writer_finish(aw, &bytes, e);
    if (rc) return rc;
    if (w->n_done == w->cap_done) {
        size_t nc = w->cap_done ? w->cap_done * 2 : 8;
        done_file *nd = realloc(w->done, nc * sizeof *nd);
        if (!nd) { pm_buf_free(&bytes); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
        w->done = nd;
        w->cap_done = nc;
    }
    done_file *df = &w->done[w->n_done];
    memset(df, 0, sizeof *df);
    pm_manifest_entry *m = &df->m;
    m->version = 2;
    m->kind = PM_FILE_ADD;
    uint8_t *pb = malloc(p->part_len ? p->part_len : 1);
    if (!pb) { pm_buf_free(&bytes); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    memcpy(pb, p->part, p->part_len);
    m->partition.ptr = pb;
    m->partition.len = p->part_len;
    m->bucket = 0;
    m->total_buckets = -1;
    pm_data_file *f = &m->file;
    f->file_name = p->cur_name;
    p->cur_name = NULL;
    f->file_size = (int64_t)bytes.len;
    f->row_count = p->cur_rows;
    f->min_key.ptr = EMPTY_ROW; f->min_key.len = 12;
    f->max_key.ptr = EMPTY_ROW; f->max_key.len = 12;
    f->key_stats.min_values.ptr = EMPTY_ROW; f->key_stats.min_values.len = 12;
    f->key_stats.max_values.ptr = EMPTY_ROW; f->key_stats.max_values.len = 12;
    f->key_stats.has_null_counts = 1;
    f->min_sequence_number = p->cur_min_seq;
    f->max_sequence_number = p->cur_min_seq + p->cur_rows - 1;
    f->schema_id = w->schema->id;
    f->level = 0;
    f->creation_time = (pm_opt_i64){1, pm_local_now_millis()};
    f->delete_row_count = (pm_opt_i64){1, 0};
    f->file_source = (pm_opt_i32){1, 0};
    w->n_done++;   /* from here on done_free cleans up */
    /* value stats */
    size_t n = w->n;
    pm_datum *mins = calloc(n ? n : 1, sizeof *mins), *maxs = calloc(n ? n : 1, sizeof *maxs);
    f->value_stats.null_counts = calloc(n ? n : 1, sizeof(int64_t));
    f->value_stats.null_count_is_null = calloc(n ? n : 1, 1);
    if (!mins || !maxs || !f->value_stats.null_counts || !f->value_stats.null_count_is_null) {
        free(mins); free(maxs); pm_buf_free(&bytes);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    f->value_stats.has_null_counts = 1;
    f->value_stats.n_null_counts = n;
    for (size_t k = 0; k < n; k++) {
        colstat *c = &cs[k];
        int have = c->mode != PM_STATS_NONE && c->mode != PM_STATS_COUNTS && c->comparable && !c->failed;
        if (have && c->has_min) mins[k] = c->min; else mins[k].is_null = 1;
        if (have && c->has_max) maxs[k] = c->max; else maxs[k].is_null = 1;
        if (c->mode == PM_STATS_NONE) f->value_stats.null_count_is_null[k] = 1;
        else f->value_stats.null_counts[k] = c->nulls;
    }
    pm_buf mb = {0}, xb = {0};
    rc = pm_binrow_encode(w->types, n, mins, &mb, e);
    if (!rc) rc = pm_binrow_encode(w->types, n, maxs, &xb, e);
    free(mins);
    free(maxs);
    if (rc) { pm_buf_free(&mb); pm_buf_free(&xb); pm_buf_free(&bytes); return rc; }
    f->value_stats.min_values.ptr = mb.data; f->value_stats.min_values.len = mb.len;
    f->value_stats.max_values.ptr = xb.data; f->value_stats.max_values.len = xb.len;
    for (size_t k = 0; k < n; k++) stat_reset(&cs[k]);
    /* write the file */
    pm_buf rel = {0};
    rc = pm_table_file_path(t, m, &rel, e);
    if (!rc) {
        df->path = pm_path_join(t->root, (const char *)rel.data);
        if (!df->path) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    pm_buf_free(&rel);
    if (!rc) rc = pm_io_create_no_replace(t->io, df->path, bytes.data, bytes.len, e);
    pm_buf_free(&bytes);
    if (rc) {
        pm_err_prefix(e, "writing data file");
        free(df->path);
        df->path = NULL;        /* nothing to delete */
        done_free(df);
        w->n_done--;
        return rc;
    }
    return PAIMON_OK;
}

static int open_file(pm_append_writer *w, pwriter *p, pm_err *e) {
    char name[600];
    snprintf(name, sizeof name, "%s%s-%lld.avro", w->prefix, p->uuid, (long long)p->file_counter++);
    p->cur_name = pm_strdup(name);
    if (!p->cur_name) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = pm_avro_writer_open(w->schema_json, w->codec, w->level, &p->aw, e);
    if (rc) return rc;
    p->cur_rows = 0;
    p->cur_bytes = 0;
    p->cur_min_seq = p->seq;
    return PAIMON_OK;
}

const pm_schema *pm_append_writer_schema(const pm_append_writer *w) { return w->schema; }

int pm_append_writer_write(pm_append_writer *w, const pm_datum *row, pm_err *e) {
    if (w->broken) return pm_fail(e, PAIMON_MISUSE, "the writer failed earlier and cannot be used");
    paimon_table *t = w->t;
    const pm_schema *s = w->schema;
    /* encode the row first so a bad value leaves no trace */
    w->enc.len = 0;
    for (size_t i = 0; i < w->n; i++) {
        int rc = pm_datafile_encode_value(&w->enc, w->types[i], &row[i], s->fields[i].name, e);
        if (rc) return rc;   /* bad value: the writer stays usable */
    }
    for (size_t k = 0; k < t->n_part; k++) w->pvals[k] = row[w->part_idx[k]];
    w->scratch.len = 0;
    int rc = pm_binrow_encode(t->part_types, t->n_part, w->pvals, &w->scratch, e);
    if (rc) return rc;
    size_t idx = 0;
    if ((rc = get_pwriter(w, w->scratch.data, w->scratch.len, &idx, e))) goto broken;
    pwriter *p = w->pw[idx];
    if (!p->aw && (rc = open_file(w, p, e))) goto broken;
    pm_buf *db = pm_avro_writer_datum_buf(p->aw);
    if (pm_buf_append(db, w->enc.data, w->enc.len)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto broken; }
    if ((rc = pm_avro_writer_end_datum(p->aw, e))) goto broken;
    colstat *cs = w->pw_stats[idx];
    for (size_t i = 0; i < w->n; i++)
        if (stat_collect(&cs[i], w->types[i], &row[i])) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto broken; }
    p->cur_rows++;
    p->seq++;
    p->cur_bytes += (int64_t)w->enc.len;
    /* RollingFileWriter: roll once the file reaches target-file-size
     * (estimated by the encoded, uncompressed row bytes) */
    if (p->cur_bytes >= w->target_size && (rc = close_file(w, idx, e))) goto broken;
    return PAIMON_OK;
broken:
    w->broken = 1;
    return rc;
}

int pm_append_writer_prepare(pm_append_writer *w, const pm_manifest_entry **entries, size_t *n, pm_err *e) {
    *entries = NULL;
    *n = 0;
    if (w->broken) return pm_fail(e, PAIMON_MISUSE, "the writer failed earlier and cannot be used");
    for (size_t i = 0; i < w->n_pw; i++) {
        int rc = close_file(w, i, e);
        if (rc) { w->broken = 1; return rc; }
    }
    /* drop entries handed out before, hand out the new ones */
    size_t keep = 0;
    for (size_t i = 0; i < w->n_done; i++) {
        if (w->done[i].handed_out) done_free(&w->done[i]);
        else w->done[keep++] = w->done[i];
    }
    w->n_done = keep;
    free(w->out);
    w->out = calloc(keep ? keep : 1, sizeof *w->out);
    if (!w->out) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < keep; i++) {
        w->out[i] = w->done[i].m;
        w->done[i].handed_out = 1;
    }
    w->n_out = keep;
    *entries = w->out;
    *n = keep;
    return PAIMON_OK;
}

size_t pm_append_writer_pending_files(const pm_append_writer *w) {
    size_t n = 0;
    for (size_t i = 0; i < w->n_done; i++) if (!w->done[i].handed_out) n++;
    for (size_t i = 0; i < w->n_pw; i++) if (w->pw[i]->aw) n++;
    return n;
}

void pm_append_writer_detach(pm_append_writer *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n_done; i++) w->done[i].handed_out = 1;
    for (size_t i = 0; i < w->n_pw; i++) {
        pm_avro_writer_abort(w->pw[i]->aw);
        w->pw[i]->aw = NULL;
    }
    w->broken = 1;
}

int pm_append_writer_discard(pm_append_writer *w, pm_err *e) {
    int first = PAIMON_OK;
    for (size_t i = 0; i < w->n_pw; i++) {
        pwriter *p = w->pw[i];
        pm_avro_writer_abort(p->aw);
        p->aw = NULL;
        free(p->cur_name);
        p->cur_name = NULL;
        for (size_t k = 0; k < w->n; k++) stat_reset(&w->pw_stats[i][k]);
    }
    size_t keep = 0;
    for (size_t i = 0; i < w->n_done; i++) {
        done_file *d = &w->done[i];
        if (d->handed_out) { w->done[keep++] = *d; continue; }
        if (d->path) {
            pm_err e2;
            int rc = pm_io_remove(w->t->io, d->path, &e2);
            if (rc && rc != PAIMON_NOTFOUND && !first) { first = rc; *e = e2; }
        }
        done_free(d);
    }
    w->n_done = keep;
    return first;
}

/* ---- reader ------------------------------------------------------------------- */

struct pm_datafile_reader {
    pm_buf data;
    pm_avro_reader *r;
    size_t n;
    const pm_data_field *fields;
    int *map;
    char *display;
    const pm_type **ftype;      /* per field: the type the file was written with, when it differs */
    pm_buf *scratch;            /* per field: text of a cast to a string type */
    int64_t file_schema;
};

void pm_datafile_reader_close(pm_datafile_reader *r) {
    if (!r) return;
    pm_avro_reader_close(r->r);
    pm_buf_free(&r->data);
    free(r->map);
    free(r->display);
    free(r->ftype);
    if (r->scratch) for (size_t i = 0; i < r->n; i++) pm_buf_free(&r->scratch[i]);
    free(r->scratch);
    free(r);
}

static int reader_open(pm_fileio *io, const char *path, const char *display, const pm_data_field *fields,
                       const char *const *names, size_t n, pm_datafile_reader **out, pm_err *e);

int pm_datafile_reader_open_names(pm_fileio *io, const char *path, const char *display, const pm_data_field *fields,
                                  const char *const *names, size_t n, pm_datafile_reader **out, pm_err *e) {
    return reader_open(io, path, display, fields, names, n, out, e);
}

int pm_datafile_reader_open_path(pm_fileio *io, const char *path, const char *display,
                                 const pm_data_field *fields, size_t n, pm_datafile_reader **out,
                                 pm_err *e) {
    return reader_open(io, path, display, fields, NULL, n, out, e);
}

/* names[i]: the Avro field holding fields[i] (NULL: not in the file); names NULL: fields' names */
static int reader_open(pm_fileio *io, const char *path, const char *display, const pm_data_field *fields,
                       const char *const *names, size_t n, pm_datafile_reader **out, pm_err *e) {
    *out = NULL;
    pm_datafile_reader *r = calloc(1, sizeof *r);
    if (!r) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    r->display = pm_strdup(display ? display : path);
    r->n = n;
    r->fields = fields;
    r->map = calloc(n ? n : 1, sizeof *r->map);
    int rc;
    if (!r->display || !r->map) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto fail; }
    if ((rc = pm_io_read_all(io, path, &r->data, e))) goto fail;
    if (r->data.len < 4 || memcmp(r->data.data, "Obj\x01", 4)) {
        const char *ext = strrchr(r->display, '.');
        rc = pm_fail(e, PAIMON_UNSUPPORTED, "%s: not an Avro data file (%s); paimon-lua reads only Avro data files",
                     r->display, ext ? ext + 1 : "unknown format");
        goto fail;
    }
    if ((rc = pm_avro_reader_open(r->data.data, r->data.len, r->display, &r->r, e))) goto fail;
    const pm_avro_schema *ws = pm_avro_unwrap_nullable(pm_avro_reader_schema(r->r));
    if (ws->type != PM_AVRO_RECORD) { rc = pm_fail(e, PAIMON_CORRUPT, "%s: the writer schema is not a record", r->display); goto fail; }
    for (size_t i = 0; i < n; i++) {
        const char *nm = names ? names[i] : fields[i].name;
        r->map[i] = nm ? pm_avro_field_index(ws, nm) : -1;
    }
    *out = r;
    return PAIMON_OK;
fail:
    pm_datafile_reader_close(r);
    return rc;
}

int pm_datafile_reader_has(const pm_datafile_reader *r, size_t i) {
    return i < r->n && r->map[i] >= 0;
}

static int type_same(const pm_type *a, const pm_type *b, int top) {
    if (!a || !b) return a == b;
    if (a->root != b->root || (!top && a->nullable != b->nullable) || a->precision != b->precision ||
        a->scale != b->scale || a->length != b->length || a->n_fields != b->n_fields)
        return 0;
    if (!type_same(a->element, b->element, 0) || !type_same(a->value, b->value, 0)) return 0;
    for (size_t i = 0; i < a->n_fields; i++)
        if (a->fields[i].id != b->fields[i].id || strcmp(a->fields[i].name, b->fields[i].name) ||
            !type_same(a->fields[i].type, b->fields[i].type, 0))
            return 0;
    return 1;
}

/* Java's SchemaEvolutionUtil: the table's fields found in the file's schema by
 * field id (renamed columns under their old name, added ones absent, dropped
 * ones never asked for); a differing type is cast on read. */
int pm_datafile_reader_open_evolved(paimon_table *t, int64_t schema_id, const char *full, const char *display,
                                    const pm_data_field *fields, size_t n, pm_datafile_reader **out, pm_err *e) {
    *out = NULL;
    const pm_schema *fs;
    int rc = pm_table_file_schema(t, schema_id, &fs, e);
    if (rc) { pm_err_prefix(e, "data file %s", display ? display : full); return rc; }
    const char **names = calloc(n ? n : 1, sizeof *names);
    const pm_type **ft = calloc(n ? n : 1, sizeof *ft);
    if (!names || !ft) { free(names); free(ft); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    int casts = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < fs->n_fields; k++)
            if (fs->fields[k].id == fields[i].id) {
                names[i] = fs->fields[k].name;
                if (!type_same(fs->fields[k].type, fields[i].type, 1)) { ft[i] = fs->fields[k].type; casts = 1; }
                break;
            }
    }
    rc = reader_open(t->io, full, display, fields, names, n, out, e);
    free(names);
    if (!rc && casts) {
        (*out)->ftype = ft;
        (*out)->file_schema = fs->id;
        if (!((*out)->scratch = calloc(n, sizeof *(*out)->scratch))) {
            pm_datafile_reader_close(*out);
            *out = NULL;
            return pm_fail(e, PAIMON_NOMEM, "out of memory");
        }
        ft = NULL;
    }
    free(ft);
    return rc;
}

int pm_datafile_reader_open(paimon_table *t, const pm_manifest_entry *m,
                            const pm_data_field *fields, size_t n, pm_datafile_reader **out,
                            pm_err *e) {
    *out = NULL;
    pm_buf rel = {0}, full = {0};
    int rc = pm_table_file_path(t, m, &rel, e);
    if (!rc) rc = pm_data_file_full_path(t, m, &full, e);
    if (!rc) rc = pm_table_reachable(t, (const char *)full.data, e);
    if (!rc) rc = pm_datafile_reader_open_evolved(t, m->file.schema_id, (const char *)full.data,
                                                  (const char *)rel.data, fields, n, out, e);
    pm_buf_free(&full);
    pm_buf_free(&rel);
    return rc;
}

static int bad_type(const char *col, const pm_avro_value *v, const pm_type *ty, pm_err *e) {
    static const char *const names[] = {"null", "boolean", "int", "long", "float", "double", "bytes",
                                        "string", "record", "enum", "array", "map", "union", "fixed"};
    return pm_fail(e, PAIMON_CORRUPT, "column '%s': the file holds Avro %s where the table has %s", col,
                   (unsigned)v->type < 14 ? names[v->type] : "?", pm_type_root_name(ty->root));
}

static int64_t fdiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

int pm_datafile_to_datum(const pm_type *ty, const pm_avro_value *v, const char *col, pm_datum *d,
                         pm_err *e) {
    memset(d, 0, sizeof *d);
    if (!v || v->type == PM_AVRO_NULL) { d->is_null = 1; return PAIMON_OK; }
    const char *lt = v->schema ? v->schema->logical_type : NULL;
    int64_t iv = 0;
    int is_int = 0;
    if (v->type == PM_AVRO_INT) { iv = v->u.i; is_int = 1; }
    else if (v->type == PM_AVRO_LONG) { iv = v->u.l; is_int = 1; }
    switch (ty->root) {
    case PM_T_BOOLEAN:
        if (v->type != PM_AVRO_BOOLEAN) return bad_type(col, v, ty, e);
        d->v.i = v->u.boolean != 0;
        return PAIMON_OK;
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT: case PM_T_DATE:
        if (!is_int) return bad_type(col, v, ty, e);
        d->v.i = iv;
        return PAIMON_OK;
    case PM_T_TIME:
        if (!is_int) return bad_type(col, v, ty, e);
        d->v.i = (v->type == PM_AVRO_LONG && lt && !strcmp(lt, "time-micros")) ? iv / 1000 : iv;
        return PAIMON_OK;
    case PM_T_FLOAT: case PM_T_DOUBLE: {
        double x;
        if (v->type == PM_AVRO_FLOAT) x = v->u.f;
        else if (v->type == PM_AVRO_DOUBLE) x = v->u.d;
        else if (is_int) x = (double)iv;
        else return bad_type(col, v, ty, e);
        if (ty->root == PM_T_FLOAT) d->v.f = v->type == PM_AVRO_FLOAT ? v->u.f : (float)x;
        else d->v.d = v->type == PM_AVRO_FLOAT ? (double)v->u.f : x;
        return PAIMON_OK;
    }
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY: case PM_T_BLOB:
        if (v->type != PM_AVRO_STRING && v->type != PM_AVRO_BYTES && v->type != PM_AVRO_FIXED) return bad_type(col, v, ty, e);
        d->v.bin.ptr = v->u.bytes.ptr;
        d->v.bin.len = v->u.bytes.len;
        return PAIMON_OK;
    case PM_T_DECIMAL:
        if (v->type == PM_AVRO_BYTES || v->type == PM_AVRO_FIXED) {
            if (v->u.bytes.len > 16) return pm_fail(e, PAIMON_CORRUPT, "column '%s': decimal of %zu bytes", col, v->u.bytes.len);
            if (ty->precision > 18) {
                d->v.bin.ptr = v->u.bytes.ptr;
                d->v.bin.len = v->u.bytes.len;
            } else {
                df_i128 x = big_from_bytes(v->u.bytes.ptr, v->u.bytes.len);
                if (x > INT64_MAX || x < INT64_MIN) return pm_fail(e, PAIMON_CORRUPT, "column '%s': decimal out of range", col);
                d->v.i = (int64_t)x;
            }
            return PAIMON_OK;
        }
        return bad_type(col, v, ty, e);
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ:
        if (!is_int) return bad_type(col, v, ty, e);
        if (lt && strstr(lt, "micros")) {
            d->v.ts.millis = fdiv(iv, 1000);
            d->v.ts.nanos_of_milli = (int32_t)((iv - d->v.ts.millis * 1000) * 1000);
        } else if (lt && strstr(lt, "nanos")) {
            d->v.ts.millis = fdiv(iv, 1000000);
            d->v.ts.nanos_of_milli = (int32_t)(iv - d->v.ts.millis * 1000000);
        } else {
            d->v.ts.millis = iv;
        }
        return PAIMON_OK;
    default:
        return PAIMON_OK;    /* composite: only the raw Avro value */
    }
}

/* ---- casts on read (Java's CastExecutors for the changes an alter allows) ---- */

static int is_intnum(pm_type_root r) { return r == PM_T_TINYINT || r == PM_T_SMALLINT || r == PM_T_INT || r == PM_T_BIGINT; }
static int is_string(pm_type_root r) { return r == PM_T_CHAR || r == PM_T_VARCHAR; }

/* Java's (long) / (int) of a double: NaN -> 0, saturating */
static int64_t java_d2l(double x) {
    if (x != x) return 0;
    if (x >= 9223372036854775807.0) return INT64_MAX;
    if (x <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x;
}
static int64_t java_d2i(double x) {
    if (x != x) return 0;
    if (x >= 2147483647.0) return INT32_MAX;
    if (x <= -2147483648.0) return INT32_MIN;
    return (int32_t)x;
}

/* Number.byteValue() ... longValue(): the two's complement narrowing */
static int64_t narrow(int64_t v, pm_type_root r) {
    switch (r) {
    case PM_T_TINYINT: return (int8_t)(uint8_t)(uint64_t)v;
    case PM_T_SMALLINT: return (int16_t)(uint16_t)(uint64_t)v;
    case PM_T_INT: return (int32_t)(uint32_t)(uint64_t)v;
    default: return v;
    }
}

static int unsupported_cast(const pm_type *src, const pm_type *dst, const char *col, int64_t sid, pm_err *e) {
    pm_buf a = {0}, b = {0};
    pm_type_to_sql(src, &a);
    pm_type_to_sql(dst, &b);
    pm_buf_cstr(&a);
    pm_buf_cstr(&b);
    int rc = pm_fail(e, PAIMON_UNSUPPORTED, "column '%s': written as %s under schema-%lld, the table now has %s; "
                     "paimon-lua cannot cast that on read", col, a.data ? (char *)a.data : "?", (long long)sid,
                     b.data ? (char *)b.data : "?");
    pm_buf_free(&a);
    pm_buf_free(&b);
    return rc;
}

static int64_t pow10_(int k) { int64_t p = 1; while (k-- > 0) p *= 10; return p; }

static int cast_datum(const pm_type *src, const pm_type *dst, pm_datum *d, pm_buf *scratch, const char *col,
                      int64_t sid, pm_err *e) {
    pm_type_root s = src->root, t = dst->root;
    if (d->is_null) return PAIMON_OK;
    if (is_intnum(s) && is_intnum(t)) { d->v.i = narrow(d->v.i, t); return PAIMON_OK; }
    if (is_intnum(s) && t == PM_T_FLOAT) { d->v.f = (float)d->v.i; return PAIMON_OK; }
    if (is_intnum(s) && t == PM_T_DOUBLE) { d->v.d = (double)d->v.i; return PAIMON_OK; }
    if (s == PM_T_FLOAT && t == PM_T_DOUBLE) { d->v.d = (double)d->v.f; return PAIMON_OK; }
    if (s == PM_T_DOUBLE && t == PM_T_FLOAT) { d->v.f = (float)d->v.d; return PAIMON_OK; }
    if ((s == PM_T_FLOAT || s == PM_T_DOUBLE) && is_intnum(t)) {
        double x = s == PM_T_FLOAT ? (double)d->v.f : d->v.d;
        d->v.i = t == PM_T_BIGINT ? java_d2l(x) : narrow(java_d2i(x), t);
        return PAIMON_OK;
    }
    if (is_string(s) && is_string(t) && (t == PM_T_VARCHAR && dst->length >= src->length)) return PAIMON_OK;
    if (s == PM_T_DECIMAL && t == PM_T_DECIMAL && src->precision <= 18 && dst->precision <= 18 &&
        dst->scale >= src->scale) {
        int64_t f = pow10_(dst->scale - src->scale), lim = pow10_(dst->precision);
        if (d->v.i > INT64_MAX / f || d->v.i < INT64_MIN / f || d->v.i * f >= lim || d->v.i * f <= -lim) {
            d->is_null = 1;      /* Java: a decimal that does not fit the precision is null */
            return PAIMON_OK;
        }
        d->v.i *= f;
        return PAIMON_OK;
    }
    if (s == t && (s == PM_T_TIMESTAMP || s == PM_T_TIMESTAMP_LTZ)) {
        /* Java's DateTimeUtils.truncate: zero the digits past the new precision (toward zero) */
        if (dst->precision >= src->precision) return PAIMON_OK;
        if (dst->precision <= 3) {
            int64_t f = pow10_(3 - dst->precision);
            d->v.ts.millis = d->v.ts.millis / f * f;
            d->v.ts.nanos_of_milli = 0;
        } else {
            int32_t f = (int32_t)pow10_(9 - dst->precision);
            d->v.ts.nanos_of_milli = d->v.ts.nanos_of_milli / f * f;
        }
        return PAIMON_OK;
    }
    if (s == PM_T_DATE && t == PM_T_TIMESTAMP) {      /* midnight of the day, no time zone */
        d->v.ts.millis = d->v.i * 86400000LL;
        d->v.ts.nanos_of_milli = 0;
        return PAIMON_OK;
    }
    if (t == PM_T_VARCHAR && dst->length == 0x7fffffff &&
        (is_intnum(s) || s == PM_T_BOOLEAN || s == PM_T_DECIMAL || s == PM_T_DATE)) {
        scratch->len = 0;
        if (pm_datum_to_string(src, d, 0, scratch)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        d->v.bin.ptr = scratch->data;
        d->v.bin.len = scratch->len;
        return PAIMON_OK;
    }
    return unsupported_cast(src, dst, col, sid, e);
}

/* Java's SimpleStatsEvolution over the table's latest schema. */
int pm_value_stats_evolve(paimon_table *t, const pm_data_file *f, pm_datum *mins, pm_datum *maxs, int64_t *nulls,
                          pm_buf *scratch, pm_err *e) {
    size_t n = t->schema->n_fields;
    for (size_t i = 0; i < n; i++) {
        memset(&mins[i], 0, sizeof *mins);
        memset(&maxs[i], 0, sizeof *maxs);
        mins[i].is_null = maxs[i].is_null = 1;
        nulls[i] = -1;
    }
    const pm_schema *fs;
    int rc = pm_table_file_schema(t, f->schema_id, &fs, e);
    if (rc) { pm_err_prefix(e, "data file %s", f->file_name ? f->file_name : "?"); return rc; }
    /* the stats' columns: _VALUE_STATS_COLS (names in the file's schema) or all of them */
    size_t nc = f->has_value_stats_cols ? f->value_stats_cols.n : fs->n_fields;
    const pm_data_field **cols = calloc(nc ? nc : 1, sizeof *cols);
    pm_type **types = calloc(nc ? nc : 1, sizeof *types);
    pm_datum *dmin = calloc(nc ? nc : 1, sizeof *dmin), *dmax = calloc(nc ? nc : 1, sizeof *dmax);
    if (!cols || !types || !dmin || !dmax) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto done; }
    for (size_t k = 0; k < nc; k++) {
        cols[k] = f->has_value_stats_cols ? pm_schema_field(fs, f->value_stats_cols.v[k]) : &fs->fields[k];
        if (!cols[k]) {
            rc = pm_fail(e, PAIMON_CORRUPT, "data file %s: stats column '%s' is not in schema-%lld",
                         f->file_name ? f->file_name : "?", f->value_stats_cols.v[k], (long long)fs->id);
            goto done;
        }
        types[k] = cols[k]->type;
    }
    const pm_stats *st = &f->value_stats;
    /* an empty row (no min/max collected) decodes to nothing */
    int have_min = nc && pm_binrow_arity(st->min_values.ptr, st->min_values.len) == (int32_t)nc;
    int have_max = nc && pm_binrow_arity(st->max_values.ptr, st->max_values.len) == (int32_t)nc;
    if (have_min && (rc = pm_binrow_decode(st->min_values.ptr, st->min_values.len, types, nc, dmin, e))) goto bad;
    if (have_max && (rc = pm_binrow_decode(st->max_values.ptr, st->max_values.len, types, nc, dmax, e))) goto bad;
    for (size_t i = 0; i < n; i++) {
        const pm_data_field *tf = &t->schema->fields[i];
        size_t k = 0;
        while (k < nc && cols[k]->id != tf->id) k++;
        if (k == nc) continue;                      /* added later, or not collected */
        if (st->has_null_counts && k < st->n_null_counts && !(st->null_count_is_null && st->null_count_is_null[k]))
            nulls[i] = st->null_counts[k];
        if (pm_type_is_composite(tf->type) || pm_type_is_composite(cols[k]->type)) continue;
        pm_err ce;
        if (have_min) {
            mins[i] = dmin[k];
            if (!type_same(cols[k]->type, tf->type, 1) &&
                cast_datum(cols[k]->type, tf->type, &mins[i], &scratch[2 * i], tf->name, fs->id, &ce))
                mins[i].is_null = 1;                /* a cast we cannot do: unknown */
        }
        if (have_max) {
            maxs[i] = dmax[k];
            if (!type_same(cols[k]->type, tf->type, 1) &&
                cast_datum(cols[k]->type, tf->type, &maxs[i], &scratch[2 * i + 1], tf->name, fs->id, &ce))
                maxs[i].is_null = 1;
        }
    }
    goto done;
bad:
    pm_err_prefix(e, "data file %s: value stats", f->file_name ? f->file_name : "?");
done:
    free(cols);
    free(types);
    free(dmin);
    free(dmax);
    return rc;
}

int pm_datafile_reader_next(pm_datafile_reader *r, pm_datum *vals, const pm_avro_value **raw, pm_err *e) {
    const pm_avro_value *rec;
    int rc = pm_avro_reader_next(r->r, &rec, e);
    if (rc) return rc;
    if (rec->type != PM_AVRO_RECORD) return pm_fail(e, PAIMON_CORRUPT, "%s: a row is not a record", r->display);
    for (size_t i = 0; i < r->n; i++) {
        const pm_avro_value *v = NULL;
        if (r->map[i] >= 0 && (size_t)r->map[i] < rec->u.list.n) v = &rec->u.list.items[r->map[i]];
        if (v && v->type == PM_AVRO_NULL) v = NULL;
        if (raw) raw[i] = v;
        const pm_type *ft = r->ftype ? r->ftype[i] : NULL;
        if ((rc = pm_datafile_to_datum(ft ? ft : r->fields[i].type, v, r->fields[i].name, &vals[i], e)) ||
            (ft && v && (rc = cast_datum(ft, r->fields[i].type, &vals[i], &r->scratch[i], r->fields[i].name,
                                         r->file_schema, e)))) {
            pm_err_prefix(e, "%s", r->display);
            return rc;
        }
    }
    return PAIMON_OK;
}
