/* BinaryRow encode/decode, byte-compatible with Java Paimon's BinaryRowWriter
 * (AbstractBinaryWriter) and BinaryRow, wrapped as SerializationUtils does:
 * [arity int32 big-endian][row]. Inside the row every value is little-endian
 * regardless of the host. */
#include "pm_types.h"

#include <string.h>

#define MAX_INLINE 7            /* BinarySection.MAX_FIX_PART_DATA_SIZE */

static uint64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static void wr64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) { p[i] = (uint8_t)v; v >>= 8; }
}

static size_t bitset_width(size_t arity) {
    return ((arity + 63 + 8) / 64) * 8;
}

/* Storage class of a field inside the row. */
typedef enum {
    K_FIXED1, K_FIXED2, K_FIXED4, K_FIXED8, K_FLOAT, K_DOUBLE,
    K_BYTES,        /* CHAR/VARCHAR/BINARY/VARBINARY/BLOB: inline when <= 7 bytes */
    K_DEC_BIG,      /* DECIMAL precision > 18 */
    K_TS_BIG,       /* TIMESTAMP(_LTZ) precision > 3 */
    K_VAR           /* ARRAY/MAP/MULTISET/ROW/VARIANT/VECTOR: raw var-part chunk */
} field_kind;

static field_kind kind_of(const pm_type *t) {
    switch (t->root) {
    case PM_T_BOOLEAN: case PM_T_TINYINT: return K_FIXED1;
    case PM_T_SMALLINT: return K_FIXED2;
    case PM_T_INT: case PM_T_DATE: case PM_T_TIME: return K_FIXED4;
    case PM_T_BIGINT: return K_FIXED8;
    case PM_T_FLOAT: return K_FLOAT;
    case PM_T_DOUBLE: return K_DOUBLE;
    case PM_T_DECIMAL: return t->precision <= 18 ? K_FIXED8 : K_DEC_BIG;
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ: return t->precision <= 3 ? K_FIXED8 : K_TS_BIG;
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY: case PM_T_BLOB:
        return K_BYTES;
    default: return K_VAR;
    }
}

int32_t pm_binrow_arity(const uint8_t *ser, size_t len) {
    if (!ser || len < 4) return -1;
    return (int32_t)(((uint32_t)ser[0] << 24) | ((uint32_t)ser[1] << 16) |
                     ((uint32_t)ser[2] << 8) | (uint32_t)ser[3]);
}

/* Locate a (offset << 32 | len) var-part chunk and check it lies inside the
 * variable part of the row. */
static int var_chunk(const uint8_t *row, size_t rlen, size_t fixed, uint64_t slot, size_t i,
                     const char *what, const uint8_t **ptr, size_t *len, pm_err *e) {
    uint64_t off = slot >> 32, n = slot & 0xffffffffu;
    if (off < fixed || off > rlen || n > rlen - off)
        return pm_fail(e, PAIMON_CORRUPT,
                       "BinaryRow field %zu (%s): offset %llu length %llu outside the variable "
                       "part [%zu, %zu)", i, what, (unsigned long long)off,
                       (unsigned long long)n, fixed, rlen);
    *ptr = row + off;
    *len = (size_t)n;
    return PAIMON_OK;
}

/* One non-null field i of type t from its 8-byte slot (fixed part at
 * row + w, variable part up to rlen). */
static int decode_field(const uint8_t *row, size_t rlen, size_t w, size_t fixed, size_t i, const pm_type *t,
                        pm_datum *d, pm_err *e) {
    const uint8_t *s = row + w + 8 * i;
    uint64_t slot = rd64(s);
    switch (kind_of(t)) {
    case K_FIXED1:
        d->v.i = t->root == PM_T_BOOLEAN ? (s[0] != 0) : (int64_t)(int8_t)s[0];
        break;
    case K_FIXED2:
        d->v.i = (int16_t)(uint16_t)(s[0] | (s[1] << 8));
        break;
    case K_FIXED4:
        d->v.i = (int32_t)(uint32_t)slot;
        break;
    case K_FIXED8:
        if (t->root == PM_T_TIMESTAMP || t->root == PM_T_TIMESTAMP_LTZ) {
            d->v.ts.millis = (int64_t)slot;
            d->v.ts.nanos_of_milli = 0;
        } else {
            d->v.i = (int64_t)slot;
        }
        break;
    case K_FLOAT: {
        uint32_t u = (uint32_t)slot;
        memcpy(&d->v.f, &u, 4);
        break;
    }
    case K_DOUBLE:
        memcpy(&d->v.d, &slot, 8);
        break;
    case K_BYTES:
        if (slot >> 63) {
            size_t l = (size_t)((slot >> 56) & 0x7f);
            if (l > MAX_INLINE)
                return pm_fail(e, PAIMON_CORRUPT,
                               "BinaryRow field %zu (%s): inline length %zu exceeds 7", i,
                               pm_type_root_name(t->root), l);
            d->v.bin.ptr = s;
            d->v.bin.len = l;
        } else {
            int rc = var_chunk(row, rlen, fixed, slot, i, pm_type_root_name(t->root),
                               &d->v.bin.ptr, &d->v.bin.len, e);
            if (rc) return rc;
        }
        break;
    case K_DEC_BIG: {
        int rc = var_chunk(row, rlen, fixed, slot, i, "DECIMAL", &d->v.bin.ptr, &d->v.bin.len, e);
        if (rc) return rc;
        if (d->v.bin.len < 1 || d->v.bin.len > 16)
            return pm_fail(e, PAIMON_CORRUPT,
                           "BinaryRow field %zu (DECIMAL(%d, %d)): unscaled value of %zu bytes "
                           "(must be 1..16)", i, (int)t->precision, (int)t->scale,
                           d->v.bin.len);
        break;
    }
    case K_TS_BIG: {
        uint64_t off = slot >> 32;
        uint32_t nanos = (uint32_t)slot;
        if (off < fixed || off > rlen || rlen - off < 8)
            return pm_fail(e, PAIMON_CORRUPT,
                           "BinaryRow field %zu (%s(%d)): millis offset %llu outside the "
                           "variable part [%zu, %zu)", i, pm_type_root_name(t->root),
                           (int)t->precision, (unsigned long long)off, fixed, rlen);
        if (nanos > 999999)
            return pm_fail(e, PAIMON_CORRUPT,
                           "BinaryRow field %zu (%s(%d)): nano-of-millisecond %lu out of range",
                           i, pm_type_root_name(t->root), (int)t->precision,
                           (unsigned long)nanos);
        d->v.ts.millis = (int64_t)rd64(row + off);
        d->v.ts.nanos_of_milli = (int32_t)nanos;
        break;
    }
    case K_VAR: {
        int rc = var_chunk(row, rlen, fixed, slot, i, pm_type_root_name(t->root),
                           &d->v.bin.ptr, &d->v.bin.len, e);
        if (rc) return rc;
        break;
    }
    }
    return PAIMON_OK;
}

int pm_binrow_decode(const uint8_t *ser, size_t len, pm_type *const *types, size_t n,
                     pm_datum *out, pm_err *e) {
    if ((!ser && len) || (n && (!types || !out)))
        return pm_fail(e, PAIMON_MISUSE, "pm_binrow_decode: NULL argument");
    if (len < 4)
        return pm_fail(e, PAIMON_CORRUPT, "BinaryRow: %zu bytes, shorter than the 4-byte arity", len);
    int32_t arity = pm_binrow_arity(ser, len);
    if (arity < 0 || (size_t)arity != n)
        return pm_fail(e, PAIMON_CORRUPT, "BinaryRow: arity %ld does not match the %zu expected fields",
                       (long)arity, n);
    const uint8_t *row = ser + 4;
    size_t rlen = len - 4;
    size_t w = bitset_width(n);
    size_t fixed = w + 8 * n;
    if (rlen < fixed)
        return pm_fail(e, PAIMON_CORRUPT,
                       "BinaryRow: row of %zu bytes is shorter than its fixed part (%zu bytes for "
                       "arity %zu)", rlen, fixed, n);
    for (size_t i = 0; i < n; i++) {
        const pm_type *t = types[i];
        pm_datum *d = &out[i];
        memset(d, 0, sizeof *d);
        if (!t) return pm_fail(e, PAIMON_MISUSE, "pm_binrow_decode: type %zu is NULL", i);
        size_t bit = i + 8;
        if (row[bit >> 3] & (1u << (bit & 7))) {
            d->is_null = 1;
            continue;
        }
        int rc = decode_field(row, rlen, w, fixed, i, t, d, e);
        if (rc) return rc;
    }
    return PAIMON_OK;
}

/* ---- encoding ----------------------------------------------------------- */

/* Append `n` bytes (zero-padded to a multiple of 8) to the variable part;
 * returns the chunk offset relative to the row start via *off. */
static int put_var(pm_buf *out, size_t row_start, const uint8_t *p, size_t n, size_t reserve,
                   uint64_t *off, pm_err *e) {
    size_t rounded = (reserve + 7) & ~(size_t)7;
    if (rounded < reserve) return pm_fail(e, PAIMON_MISUSE, "BinaryRow: value too large");
    size_t o = out->len - row_start;
    if (o > 0x7fffffffu || rounded > 0x7fffffffu - o)
        return pm_fail(e, PAIMON_MISUSE, "BinaryRow: row exceeds 2 GiB");
    if (pm_buf_reserve(out, rounded)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    memset(out->data + out->len, 0, rounded);
    if (n) memcpy(out->data + out->len, p, n);
    out->len += rounded;
    *off = (uint64_t)o;
    return PAIMON_OK;
}

void pm_twos_complement_minimal(const uint8_t *p, size_t n, const uint8_t **mp, size_t *mn) {
    while (n > 1 && ((p[0] == 0x00 && !(p[1] & 0x80)) || (p[0] == 0xff && (p[1] & 0x80)))) {
        p++;
        n--;
    }
    *mp = p;
    *mn = n;
}

static int check_range(const pm_type *t, int64_t v, size_t i, pm_err *e) {
    int64_t lo, hi;
    switch (t->root) {
    case PM_T_TINYINT: lo = INT8_MIN; hi = INT8_MAX; break;
    case PM_T_SMALLINT: lo = INT16_MIN; hi = INT16_MAX; break;
    case PM_T_INT: case PM_T_DATE: case PM_T_TIME: lo = INT32_MIN; hi = INT32_MAX; break;
    default: return PAIMON_OK;
    }
    if (v < lo || v > hi)
        return pm_fail(e, PAIMON_MISUSE, "BinaryRow field %zu: value %lld out of range for %s", i,
                       (long long)v, pm_type_root_name(t->root));
    return PAIMON_OK;
}

static const uint8_t zero16[16];

/* Null field i: its null bit, and the zero bytes Java reserves for the
 * variable part of a big DECIMAL (16) or TIMESTAMP (8), offset kept. */
static int encode_null(pm_buf *out, size_t row_start, size_t i, field_kind k, uint64_t *slot, pm_err *e) {
    size_t bit = i + 8;
    uint64_t off = 0;
    int rc;
    *slot = 0;
    out->data[row_start + (bit >> 3)] |= (uint8_t)(1u << (bit & 7));
    if (k == K_DEC_BIG) {
        if ((rc = put_var(out, row_start, zero16, 0, 16, &off, e))) return rc;
        *slot = off << 32;
    } else if (k == K_TS_BIG) {
        if ((rc = put_var(out, row_start, zero16, 0, 8, &off, e))) return rc;
        *slot = off << 32;
    }
    return PAIMON_OK;
}

/* Non-null field i: the 8-byte slot, appending any variable part. */
static int encode_value(const pm_type *t, field_kind k, const pm_datum *d, pm_buf *out, size_t row_start,
                        size_t i, uint64_t *slot, pm_err *e) {
    uint64_t off = 0;
    int rc;
    *slot = 0;
    switch (k) {
    case K_FIXED1: case K_FIXED2: case K_FIXED4:
        if ((rc = check_range(t, d->v.i, i, e))) return rc;
        if (t->root == PM_T_BOOLEAN) *slot = d->v.i ? 1 : 0;
        else if (k == K_FIXED1) *slot = (uint8_t)d->v.i;
        else if (k == K_FIXED2) *slot = (uint16_t)d->v.i;
        else *slot = (uint32_t)d->v.i;
        break;
    case K_FIXED8:
        if (t->root == PM_T_TIMESTAMP || t->root == PM_T_TIMESTAMP_LTZ)
            *slot = (uint64_t)d->v.ts.millis;
        else
            *slot = (uint64_t)d->v.i;
        break;
    case K_FLOAT: {
        uint32_t u;
        memcpy(&u, &d->v.f, 4);
        *slot = u;
        break;
    }
    case K_DOUBLE:
        memcpy(slot, &d->v.d, 8);
        break;
    case K_BYTES:
        if (d->v.bin.len && !d->v.bin.ptr)
            return pm_fail(e, PAIMON_MISUSE, "BinaryRow field %zu: NULL data pointer", i);
        if (d->v.bin.len <= MAX_INLINE) {
            *slot = (uint64_t)(0x80u | d->v.bin.len) << 56;
            for (size_t j = 0; j < d->v.bin.len; j++)
                *slot |= (uint64_t)d->v.bin.ptr[j] << (8 * j);
        } else {
            if (d->v.bin.len > 0x7fffffffu)
                return pm_fail(e, PAIMON_MISUSE, "BinaryRow field %zu: value too large", i);
            if ((rc = put_var(out, row_start, d->v.bin.ptr, d->v.bin.len, d->v.bin.len, &off, e)))
                return rc;
            *slot = (off << 32) | d->v.bin.len;
        }
        break;
    case K_DEC_BIG: {
        const uint8_t *mp;
        size_t mn;
        if (d->v.bin.len && !d->v.bin.ptr)
            return pm_fail(e, PAIMON_MISUSE, "BinaryRow field %zu: NULL data pointer", i);
        if (d->v.bin.len == 0) { mp = zero16; mn = 1; }
        else pm_twos_complement_minimal(d->v.bin.ptr, d->v.bin.len, &mp, &mn);
        if (mn > 16)
            return pm_fail(e, PAIMON_MISUSE,
                           "BinaryRow field %zu: DECIMAL unscaled value needs %zu bytes (max 16)",
                           i, mn);
        if ((rc = put_var(out, row_start, mp, mn, 16, &off, e))) return rc;
        *slot = (off << 32) | mn;
        break;
    }
    case K_TS_BIG: {
        uint8_t ms[8];
        if (d->v.ts.nanos_of_milli < 0 || d->v.ts.nanos_of_milli > 999999)
            return pm_fail(e, PAIMON_MISUSE,
                           "BinaryRow field %zu: nano-of-millisecond %ld out of range", i,
                           (long)d->v.ts.nanos_of_milli);
        wr64(ms, (uint64_t)d->v.ts.millis);
        if ((rc = put_var(out, row_start, ms, 8, 8, &off, e))) return rc;
        *slot = (off << 32) | (uint32_t)d->v.ts.nanos_of_milli;
        break;
    }
    case K_VAR:
        if (d->v.bin.len && !d->v.bin.ptr)
            return pm_fail(e, PAIMON_MISUSE, "BinaryRow field %zu: NULL data pointer", i);
        if (d->v.bin.len > 0x7fffffffu)
            return pm_fail(e, PAIMON_MISUSE, "BinaryRow field %zu: value too large", i);
        if ((rc = put_var(out, row_start, d->v.bin.ptr, d->v.bin.len, d->v.bin.len, &off, e)))
            return rc;
        *slot = (off << 32) | d->v.bin.len;
        break;
    }
    return PAIMON_OK;
}

static int encode_fields(pm_type *const *types, size_t n, const pm_datum *vals, pm_buf *out,
                         size_t row_start, size_t w, pm_err *e) {
    for (size_t i = 0; i < n; i++) {
        const pm_type *t = types[i];
        const pm_datum *d = &vals[i];
        if (!t) return pm_fail(e, PAIMON_MISUSE, "pm_binrow_encode: type %zu is NULL", i);
        field_kind k = kind_of(t);
        size_t slot_pos = row_start + w + 8 * i;   /* index into out->data; re-derive after growth */
        uint64_t slot;
        int rc = d->is_null ? encode_null(out, row_start, i, k, &slot, e)
                            : encode_value(t, k, d, out, row_start, i, &slot, e);
        if (rc) return rc;
        wr64(out->data + slot_pos, slot);
    }
    return PAIMON_OK;
}

int pm_binrow_encode(pm_type *const *types, size_t n, const pm_datum *vals, pm_buf *out, pm_err *e) {
    if (!out || (n && (!types || !vals)))
        return pm_fail(e, PAIMON_MISUSE, "pm_binrow_encode: NULL argument");
    if (n > 0x7fffffffu / 16)
        return pm_fail(e, PAIMON_MISUSE, "pm_binrow_encode: arity %zu too large", n);
    size_t start = out->len;
    size_t w = bitset_width(n);
    size_t fixed = w + 8 * n;
    if (pm_buf_reserve(out, 4 + fixed)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    uint8_t *p = out->data + start;
    p[0] = (uint8_t)(n >> 24);
    p[1] = (uint8_t)(n >> 16);
    p[2] = (uint8_t)(n >> 8);
    p[3] = (uint8_t)n;
    memset(p + 4, 0, fixed);
    out->len = start + 4 + fixed;
    int rc = encode_fields(types, n, vals, out, start + 4, w, e);
    if (rc) out->len = start;
    return rc;
}
