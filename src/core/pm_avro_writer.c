/* Avro object container writer (in memory) and binary encoding. */
#include "pm_avro.h"
#include "pm_avro_codec.h"

#include <stdlib.h>
#include <string.h>

#define SYNC_INTERVAL 64000   /* Java DataFileConstants.DEFAULT_SYNC_INTERVAL */
#define ENCODE_MAX_DEPTH 512

struct pm_avro_writer {
    int codec, level;
    uint8_t sync[16];
    pm_buf file;        /* header + finished blocks */
    pm_buf datum;       /* uncompressed records of the current block */
    pm_buf packed;      /* compressed block scratch */
    int64_t count;      /* records in `datum` */
    pm_avro_codec_ctx cctx;
};

/* ---- primitives ---------------------------------------------------------- */

int pm_avro_put_long(pm_buf *b, int64_t v) {
    if (pm_buf_reserve(b, 10)) return PAIMON_NOMEM;
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    uint8_t *p = b->data + b->len;
    while (u >= 0x80) {
        *p++ = (uint8_t)(u | 0x80);
        u >>= 7;
    }
    *p++ = (uint8_t)u;
    b->len = (size_t)(p - b->data);
    return PAIMON_OK;
}

int pm_avro_put_int(pm_buf *b, int32_t v) { return pm_avro_put_long(b, v); }

int pm_avro_put_bool(pm_buf *b, int v) { return pm_buf_putc(b, v ? 1 : 0); }

int pm_avro_put_float(pm_buf *b, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    return pm_buf_append(b, le, 4);
}

int pm_avro_put_double(pm_buf *b, double v) {
    uint64_t u;
    memcpy(&u, &v, 8);
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(u >> (8 * i));
    return pm_buf_append(b, le, 8);
}

int pm_avro_put_bytes(pm_buf *b, const void *p, size_t n) {
    if (n > INT64_MAX) return PAIMON_MISUSE;
    if (pm_avro_put_long(b, (int64_t)n)) return PAIMON_NOMEM;
    return pm_buf_append(b, p, n);
}

int pm_avro_put_string(pm_buf *b, const char *s) {
    return pm_avro_put_bytes(b, s, s ? strlen(s) : 0);
}

/* ---- generic encoding ------------------------------------------------------ */

static const char *const type_names[] = {
    "null", "boolean", "int", "long", "float", "double", "bytes", "string",
    "record", "enum", "array", "map", "union", "fixed"
};

static const char *tname(pm_avro_type t) {
    return (unsigned)t < sizeof type_names / sizeof type_names[0] ? type_names[t] : "?";
}

static int encode(pm_buf *b, const pm_avro_schema *s, const pm_avro_value *v, int depth, pm_err *e) {
    if (depth > ENCODE_MAX_DEPTH)
        return pm_fail(e, PAIMON_MISUSE, "avro encode: value nested deeper than %d", ENCODE_MAX_DEPTH);
    if (s->type == PM_AVRO_UNION) {
        if (v->branch < 0 || (size_t)v->branch >= s->n_branches)
            return pm_fail(e, PAIMON_MISUSE, "avro encode: union branch %d out of range (%zu branches)",
                           v->branch, s->n_branches);
        if (pm_avro_put_long(b, v->branch)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        s = s->branches[v->branch];
        if (s->type == PM_AVRO_UNION) return pm_fail(e, PAIMON_MISUSE, "avro encode: union inside a union");
    }
    if (v->type != s->type)
        return pm_fail(e, PAIMON_MISUSE, "avro encode: value of type %s for schema type %s",
                       tname(v->type), tname(s->type));
    int rc = PAIMON_OK;
    switch (s->type) {
    case PM_AVRO_NULL: break;
    case PM_AVRO_BOOLEAN: rc = pm_avro_put_bool(b, v->u.boolean); break;
    case PM_AVRO_INT: rc = pm_avro_put_int(b, v->u.i); break;
    case PM_AVRO_LONG: rc = pm_avro_put_long(b, v->u.l); break;
    case PM_AVRO_FLOAT: rc = pm_avro_put_float(b, v->u.f); break;
    case PM_AVRO_DOUBLE: rc = pm_avro_put_double(b, v->u.d); break;
    case PM_AVRO_BYTES:
    case PM_AVRO_STRING:
        if (!v->u.bytes.ptr && v->u.bytes.len)
            return pm_fail(e, PAIMON_MISUSE, "avro encode: %s without data", tname(s->type));
        rc = pm_avro_put_bytes(b, v->u.bytes.ptr, v->u.bytes.len);
        break;
    case PM_AVRO_FIXED:
        if (v->u.bytes.len != s->fixed_size || (!v->u.bytes.ptr && v->u.bytes.len))
            return pm_fail(e, PAIMON_MISUSE, "avro encode: fixed '%s' needs %zu bytes, got %zu",
                           s->name ? s->name : "?", s->fixed_size, v->u.bytes.len);
        rc = pm_buf_append(b, v->u.bytes.ptr, v->u.bytes.len);
        break;
    case PM_AVRO_ENUM:
        if (v->u.i < 0 || (size_t)v->u.i >= s->n_symbols)
            return pm_fail(e, PAIMON_MISUSE, "avro encode: enum '%s' index %d out of range",
                           s->name ? s->name : "?", v->u.i);
        rc = pm_avro_put_int(b, v->u.i);
        break;
    case PM_AVRO_RECORD:
        if (v->u.list.n != s->n_fields)
            return pm_fail(e, PAIMON_MISUSE, "avro encode: record '%s' has %zu fields, value has %zu",
                           s->name ? s->name : "?", s->n_fields, v->u.list.n);
        for (size_t i = 0; i < s->n_fields; i++) {
            rc = encode(b, s->fields[i].type, &v->u.list.items[i], depth + 1, e);
            if (rc) {
                pm_err_prefix(e, "field '%s'", s->fields[i].name);
                return rc;
            }
        }
        return PAIMON_OK;
    case PM_AVRO_ARRAY:
    case PM_AVRO_MAP: {
        int is_map = s->type == PM_AVRO_MAP;
        size_t n = is_map ? v->u.map.n : v->u.list.n;
        if (n) {
            if (pm_avro_put_long(b, (int64_t)n)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
            for (size_t i = 0; i < n; i++) {
                if (is_map) {
                    const pm_avro_value *k = &v->u.map.keys[i];
                    if ((k->type != PM_AVRO_STRING && k->type != PM_AVRO_BYTES) || (!k->u.bytes.ptr && k->u.bytes.len))
                        return pm_fail(e, PAIMON_MISUSE, "avro encode: map key %zu is not a string", i);
                    if (pm_avro_put_bytes(b, k->u.bytes.ptr, k->u.bytes.len))
                        return pm_fail(e, PAIMON_NOMEM, "out of memory");
                }
                rc = encode(b, s->items, is_map ? &v->u.map.values[i] : &v->u.list.items[i], depth + 1, e);
                if (rc) return rc;
            }
        }
        rc = pm_avro_put_long(b, 0);
        break;
    }
    default:
        return pm_fail(e, PAIMON_MISUSE, "avro encode: bad schema type %d", (int)s->type);
    }
    if (rc == PAIMON_NOMEM) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if (rc) return pm_fail(e, rc, "avro encode: %s value too large", tname(s->type));
    return PAIMON_OK;
}

int pm_avro_encode_value(pm_buf *b, const pm_avro_schema *s, const pm_avro_value *v, pm_err *e) {
    if (!s || !v) return pm_fail(e, PAIMON_MISUSE, "avro encode: NULL schema or value");
    size_t mark = b->len;
    int rc = encode(b, s, v, 0, e);
    if (rc) b->len = mark;
    return rc;
}

/* ---- container writer ------------------------------------------------------ */

static int hexval(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

static void uuid_bytes(uint8_t out[16]) {
    char u[37];
    pm_uuid4(u);
    int o = 0;
    for (int i = 0; u[i] && u[i + 1] && o < 16;) {
        if (u[i] == '-') { i++; continue; }
        out[o++] = (uint8_t)(hexval(u[i]) << 4 | hexval(u[i + 1]));
        i += 2;
    }
}

/* 16 random bytes: a v4 UUID (urandom), with the version/variant bytes
 * re-randomised from a second one. */
static void random_sync(uint8_t sync[16]) {
    uint8_t other[16];
    uuid_bytes(sync);
    uuid_bytes(other);
    sync[6] ^= other[0];
    sync[8] ^= other[1];
}

int pm_avro_writer_open(const char *schema_json, const char *codec, int level,
                        pm_avro_writer **out, pm_err *e) {
    *out = NULL;
    if (!schema_json || !codec) return pm_fail(e, PAIMON_MISUSE, "avro writer: NULL schema or codec");
    int id = pm_avro_codec_lookup(codec, strlen(codec));
    if (id < 0) return pm_fail(e, PAIMON_UNSUPPORTED, "avro writer: unsupported Avro codec '%s'", codec);
    pm_avro_schema *check = NULL;
    int rc = pm_avro_schema_parse(schema_json, strlen(schema_json), &check, e);
    if (rc) {
        if (rc == PAIMON_CORRUPT) e->code = rc = PAIMON_MISUSE;
        pm_err_prefix(e, "avro writer: invalid schema");
        return rc;
    }
    pm_avro_schema_free(check);
    pm_avro_writer *w = calloc(1, sizeof *w);
    if (!w) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    w->codec = id;
    w->level = level;
    random_sync(w->sync);
    pm_buf *f = &w->file;
    if (pm_buf_append(f, "Obj\x01", 4) || pm_avro_put_long(f, 2) ||
        pm_avro_put_string(f, "avro.schema") || pm_avro_put_string(f, schema_json) ||
        pm_avro_put_string(f, "avro.codec") || pm_avro_put_string(f, codec) ||
        pm_avro_put_long(f, 0) || pm_buf_append(f, w->sync, 16)) {
        pm_avro_writer_abort(w);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    *out = w;
    return PAIMON_OK;
}

pm_buf *pm_avro_writer_datum_buf(pm_avro_writer *w) { return &w->datum; }

static int flush_block(pm_avro_writer *w, pm_err *e) {
    if (w->count == 0) return PAIMON_OK;
    w->packed.len = 0;
    int rc = pm_avro_compress(&w->cctx, w->codec, w->level, w->datum.data, w->datum.len, &w->packed, e);
    if (rc) {
        pm_err_prefix(e, "avro writer");
        return rc;
    }
    if (pm_avro_put_long(&w->file, w->count) || pm_avro_put_long(&w->file, (int64_t)w->packed.len) ||
        pm_buf_append(&w->file, w->packed.data, w->packed.len) || pm_buf_append(&w->file, w->sync, 16))
        return pm_fail(e, PAIMON_NOMEM, "avro writer: out of memory");
    w->datum.len = 0;
    w->count = 0;
    return PAIMON_OK;
}

int pm_avro_writer_end_datum(pm_avro_writer *w, pm_err *e) {
    w->count++;
    if (w->datum.len >= SYNC_INTERVAL) return flush_block(w, e);
    return PAIMON_OK;
}

int pm_avro_writer_finish(pm_avro_writer *w, pm_buf *file_out, pm_err *e) {
    int rc = flush_block(w, e);
    if (rc == PAIMON_OK) {
        *file_out = w->file;
        memset(&w->file, 0, sizeof w->file);
    }
    pm_avro_writer_abort(w);
    return rc;
}

int pm_avro_writer_append_block(pm_avro_writer *w, const char *codec, int64_t count, const uint8_t *raw,
                                size_t raw_len, pm_err *e) {
    if (!codec || pm_avro_codec_lookup(codec, strlen(codec)) != w->codec)
        return pm_fail(e, PAIMON_MISUSE, "avro writer: cannot copy a block compressed with '%s' into a %s file",
                       codec ? codec : "?", pm_avro_codec_name(w->codec));
    if (count <= 0 || raw_len > INT64_MAX || (!raw && raw_len))
        return pm_fail(e, PAIMON_MISUSE, "avro writer: bad block to copy (%lld records, %zu bytes)",
                       (long long)count, raw_len);
    int rc = flush_block(w, e);   /* records before the copy stay before it */
    if (rc) return rc;
    if (pm_avro_put_long(&w->file, count) || pm_avro_put_long(&w->file, (int64_t)raw_len) ||
        pm_buf_append(&w->file, raw, raw_len) || pm_buf_append(&w->file, w->sync, 16))
        return pm_fail(e, PAIMON_NOMEM, "avro writer: out of memory");
    return PAIMON_OK;
}

int pm_avro_writer_flush(pm_avro_writer *w, pm_err *e) { return flush_block(w, e); }

int64_t pm_avro_writer_bytes(const pm_avro_writer *w) { return w ? (int64_t)w->file.len : 0; }

void pm_avro_writer_abort(pm_avro_writer *w) {
    if (!w) return;
    pm_buf_free(&w->file);
    pm_buf_free(&w->datum);
    pm_buf_free(&w->packed);
    pm_avro_codec_done(&w->cctx);
    free(w);
}
