/* Tests for pm_types.c, pm_binrow.c and pm_partition.c: type strings,
 * BinaryRow encode/decode (incl. Java-written rows from the fixtures and
 * corrupted input) and partition path rendering. */
#include "test.h"
#include "pm_types.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

__extension__ typedef __int128 i128;

/* ---- helpers ------------------------------------------------------------ */

static pm_type *T(const char *s) {
    pm_type *t = NULL;
    pm_err e = {0};
    if (pm_type_parse_atomic(s, &t, &e) != PAIMON_OK) {
        fprintf(stderr, "  cannot parse %s: %s\n", s, e.msg);
        return NULL;
    }
    return t;
}

static void free_types(pm_type **t, size_t n) {
    for (size_t i = 0; i < n; i++) pm_type_free(t[i]);
}

static pm_datum D_NULL(void) { pm_datum d; memset(&d, 0, sizeof d); d.is_null = 1; return d; }
static pm_datum D_I(int64_t v) { pm_datum d; memset(&d, 0, sizeof d); d.v.i = v; return d; }
static pm_datum D_F(float v) { pm_datum d; memset(&d, 0, sizeof d); d.v.f = v; return d; }
static pm_datum D_D(double v) { pm_datum d; memset(&d, 0, sizeof d); d.v.d = v; return d; }
static pm_datum D_S(const char *s) {
    pm_datum d; memset(&d, 0, sizeof d);
    d.v.bin.ptr = (const uint8_t *)s; d.v.bin.len = strlen(s); return d;
}
static pm_datum D_B(const void *p, size_t n) {
    pm_datum d; memset(&d, 0, sizeof d);
    d.v.bin.ptr = p; d.v.bin.len = n; return d;
}
static pm_datum D_TS(int64_t ms, int32_t nanos) {
    pm_datum d; memset(&d, 0, sizeof d);
    d.v.ts.millis = ms; d.v.ts.nanos_of_milli = nanos; return d;
}

/* Minimal big-endian two's complement bytes of v (BigInteger.toByteArray). */
static size_t i128_bytes(i128 v, uint8_t out[16]) {
    uint8_t full[16];
    __extension__ unsigned __int128 u = (unsigned __int128)v;
    for (int i = 15; i >= 0; i--) { full[i] = (uint8_t)u; u >>= 8; }
    size_t s = 0;
    while (s < 15 && ((full[s] == 0 && !(full[s + 1] & 0x80)) || (full[s] == 0xff && (full[s + 1] & 0x80))))
        s++;
    memcpy(out, full + s, 16 - s);
    return 16 - s;
}

/* Render a datum into a static NUL-terminated string. */
static const char *render(const pm_type *t, pm_datum d, int legacy) {
    static char buf[8][256];
    static int slot;
    char *b = buf[slot++ & 7];
    pm_buf o = {0};
    int rc = pm_datum_to_string(t, &d, legacy, &o);
    if (rc) snprintf(b, 256, "<rc=%d>", rc);
    else snprintf(b, 256, "%.*s", (int)o.len, o.data ? (const char *)o.data : "");
    pm_buf_free(&o);
    return b;
}

static const char *render_s(const char *type, pm_datum d, int legacy) {
    pm_type *t = T(type);
    const char *r = t ? render(t, d, legacy) : "<bad type>";
    pm_type_free(t);
    return r;
}

static const char *jdouble(double v) { return render_s("DOUBLE", D_D(v), 1); }
static const char *jfloat(float v) { return render_s("FLOAT", D_F(v), 1); }

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static size_t unhex(const char *h, uint8_t *out, size_t cap) {
    size_t n = 0;
    while (h[0] && h[1] && n < cap) {
        int a = hexval(h[0]), b = hexval(h[1]);
        if (a < 0 || b < 0) break;
        out[n++] = (uint8_t)(a * 16 + b);
        h += 2;
    }
    return n;
}

/* ---- §5.2 worked example -------------------------------------------------- */

TEST(worked_example) {
    pm_type *t[2] = {T("STRING"), T("INT")};
    pm_datum v[2] = {D_S("2024-01-01"), D_I(5)};
    static const uint8_t want[44] = {
        0x00, 0x00, 0x00, 0x02,
        0, 0, 0, 0, 0, 0, 0, 0,
        0x0A, 0, 0, 0, 0x18, 0, 0, 0,
        0x05, 0, 0, 0, 0, 0, 0, 0,
        0x32, 0x30, 0x32, 0x34, 0x2D, 0x30, 0x31, 0x2D, 0x30, 0x31, 0, 0, 0, 0, 0, 0};
    pm_buf b = {0};
    pm_err e = {0};
    CHECK_EQ_INT(pm_binrow_encode(t, 2, v, &b, &e), PAIMON_OK);
    CHECK_EQ_INT(b.len, 44);
    CHECK(b.len == 44 && memcmp(b.data, want, 44) == 0);
    CHECK_EQ_INT(pm_binrow_arity(b.data, b.len), 2);

    pm_datum d[2];
    CHECK_EQ_INT(pm_binrow_decode(b.data, b.len, t, 2, d, &e), PAIMON_OK);
    CHECK(!d[0].is_null && d[0].v.bin.len == 10 && memcmp(d[0].v.bin.ptr, "2024-01-01", 10) == 0);
    CHECK(!d[1].is_null && d[1].v.i == 5);

    pm_buf p = {0};
    const char *keys[2] = {"dt", "hr"};
    CHECK_EQ_INT(pm_partition_path(keys, t, 2, d, NULL, 1, &p), PAIMON_OK);
    pm_buf_cstr(&p);
    CHECK_EQ_STR((char *)p.data, "dt=2024-01-01/hr=5/");
    pm_buf_free(&p);

    /* dt = "a": inline */
    b.len = 0;
    v[0] = D_S("a");
    CHECK_EQ_INT(pm_binrow_encode(t, 2, v, &b, &e), PAIMON_OK);
    CHECK_EQ_INT(b.len, 4 + 24);
    static const uint8_t slot_a[8] = {0x61, 0, 0, 0, 0, 0, 0, 0x81};
    CHECK(b.len == 28 && memcmp(b.data + 12, slot_a, 8) == 0);
    CHECK_EQ_INT(pm_binrow_decode(b.data, b.len, t, 2, d, &e), PAIMON_OK);
    CHECK(d[0].v.bin.len == 1 && d[0].v.bin.ptr[0] == 'a');

    /* empty row */
    b.len = 0;
    CHECK_EQ_INT(pm_binrow_encode(NULL, 0, NULL, &b, &e), PAIMON_OK);
    static const uint8_t empty[12] = {0};
    CHECK(b.len == 12 && memcmp(b.data, empty, 12) == 0);
    CHECK_EQ_INT(pm_binrow_decode(b.data, b.len, NULL, 0, NULL, &e), PAIMON_OK);
    pm_buf_free(&b);
    free_types(t, 2);
}

/* ---- round trips ---------------------------------------------------------- */

#define NT 32
static const char *rt_types[NT] = {
    "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE",
    "DECIMAL(10, 2)", "DECIMAL(18, 0)", "DECIMAL(38, 10)", "DECIMAL(20, 0)",
    "CHAR(3)", "VARCHAR(20)", "STRING", "STRING", "STRING",
    "BINARY(4)", "BYTES", "BYTES",
    "DATE", "TIME", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)",
    "TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(9) WITH LOCAL TIME ZONE",
    "DECIMAL(38, 0)", "DECIMAL(19, 3)", "BOOLEAN", "TIMESTAMP(0)", "INT NOT NULL",
    "STRING NOT NULL"};

static int datum_eq(const pm_type *t, const pm_datum *a, const pm_datum *b) {
    if (a->is_null || b->is_null) return a->is_null == b->is_null;
    switch (t->root) {
    case PM_T_FLOAT: return memcmp(&a->v.f, &b->v.f, 4) == 0;
    case PM_T_DOUBLE: return memcmp(&a->v.d, &b->v.d, 8) == 0;
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ:
        return a->v.ts.millis == b->v.ts.millis &&
               (t->precision <= 3 || a->v.ts.nanos_of_milli == b->v.ts.nanos_of_milli);
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY:
        return a->v.bin.len == b->v.bin.len &&
               (a->v.bin.len == 0 || memcmp(a->v.bin.ptr, b->v.bin.ptr, a->v.bin.len) == 0);
    case PM_T_DECIMAL:
        if (t->precision <= 18) return a->v.i == b->v.i;
        return a->v.bin.len == b->v.bin.len && memcmp(a->v.bin.ptr, b->v.bin.ptr, a->v.bin.len) == 0;
    case PM_T_ARRAY: case PM_T_MAP: case PM_T_MULTISET: case PM_T_ROW: case PM_T_VARIANT:
    case PM_T_BLOB: case PM_T_VECTOR:
        return a->v.bin.len == b->v.bin.len &&
               (a->v.bin.len == 0 || memcmp(a->v.bin.ptr, b->v.bin.ptr, a->v.bin.len) == 0);
    default: return a->v.i == b->v.i;
    }
}

static void roundtrip(pm_type **t, size_t n, const pm_datum *v, const char *what) {
    pm_buf b = {0}, b2 = {0};
    pm_err e = {0};
    pm_datum *d = calloc(n ? n : 1, sizeof *d);
    int rc = pm_binrow_encode(t, n, v, &b, &e);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (rc) { fprintf(stderr, "  %s: %s\n", what, e.msg); goto out; }
    CHECK_EQ_INT(b.len % 8, 4);          /* row length is a multiple of 8 */
    rc = pm_binrow_decode(b.data, b.len, t, n, d, &e);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (rc) { fprintf(stderr, "  %s: %s\n", what, e.msg); goto out; }
    for (size_t i = 0; i < n; i++) {
        if (!datum_eq(t[i], &v[i], &d[i])) {
            fprintf(stderr, "  %s: field %zu (%s) differs after round trip\n", what, i,
                    pm_type_root_name(t[i]->root));
            CHECK(0);
        }
    }
    CHECK_EQ_INT(pm_binrow_encode(t, n, d, &b2, &e), PAIMON_OK);
    CHECK(b.len == b2.len && memcmp(b.data, b2.data, b.len) == 0);
out:
    free(d);
    pm_buf_free(&b);
    pm_buf_free(&b2);
}

TEST(roundtrip_all_types) {
    pm_type *t[NT];
    for (int i = 0; i < NT; i++) { t[i] = T(rt_types[i]); CHECK(t[i] != NULL); }
    uint8_t big1[16], big2[16], big3[16], big4[16];
    i128 v38 = 1;
    for (int i = 0; i < 38; i++) v38 *= 10;
    v38 -= 1;                                           /* 38 nines */
    size_t n1 = i128_bytes(-v38, big1);
    size_t n2 = i128_bytes(0, big2);
    size_t n3 = i128_bytes((i128)123456789012345678LL * 1000 + 5, big3);
    size_t n4 = i128_bytes(-1, big4);
    static const uint8_t bin4[4] = {0xde, 0xad, 0xbe, 0xef};
    static const uint8_t bin9[9] = {0, 1, 2, 3, 4, 5, 6, 7, 0xff};
    pm_datum v[NT] = {
        D_I(1), D_I(-128), D_I(-32768), D_I(INT32_MIN), D_I(INT64_MIN), D_F(-1.5f), D_D(3.141592653589793),
        D_I(-12345), D_I(999999999999999999LL), D_B(big1, n1), D_B(big2, n2),
        D_S("ab "), D_S("1234567"), D_S("12345678"), D_S(""), D_S("a longer string with \xc3\xa9"),
        D_B(bin4, 4), D_B(bin9, 9), D_B(bin9, 0),
        D_I(19723), D_I(86399999), D_TS(1704164645123LL, 0), D_TS(-1, 999000), D_TS(1704164645123LL, 456789),
        D_TS(0, 0), D_TS(INT64_MIN, 999999),
        D_B(big3, n3), D_B(big4, n4), D_I(0), D_TS(-62135596800000LL, 0), D_I(7), D_S("x")};
    roundtrip(t, NT, v, "values");

    /* all nulls */
    pm_datum nulls[NT];
    for (int i = 0; i < NT; i++) nulls[i] = D_NULL();
    roundtrip(t, NT, nulls, "nulls");

    /* alternating */
    pm_datum alt[NT];
    for (int i = 0; i < NT; i++) alt[i] = (i % 2) ? D_NULL() : v[i];
    roundtrip(t, NT, alt, "alternating");
    for (int i = 0; i < NT; i++) alt[i] = (i % 2) ? v[i] : D_NULL();
    roundtrip(t, NT, alt, "alternating2");
    free_types(t, NT);
}

TEST(layout_details) {
    pm_err e = {0};
    pm_buf b = {0};
    /* DECIMAL(20, 0) null reserves 16 zero bytes, slot = offset << 32 */
    pm_type *t1[1] = {T("DECIMAL(20, 0)")};
    pm_datum n1[1] = {D_NULL()};
    CHECK_EQ_INT(pm_binrow_encode(t1, 1, n1, &b, &e), PAIMON_OK);
    CHECK_EQ_INT(b.len, 4 + 8 + 8 + 16);
    static const uint8_t dnull[36] = {0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0,
                                      0, 0, 0, 0, 16, 0, 0, 0};
    CHECK(b.len == 36 && memcmp(b.data, dnull, 36) == 0);
    /* value 1 -> byte 0x01, length 1 */
    b.len = 0;
    uint8_t one = 1;
    pm_datum v1[1] = {D_B(&one, 1)};
    CHECK_EQ_INT(pm_binrow_encode(t1, 1, v1, &b, &e), PAIMON_OK);
    static const uint8_t done[36] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                                     1, 0, 0, 0, 16, 0, 0, 0, 1};
    CHECK(b.len == 36 && memcmp(b.data, done, 36) == 0);
    /* non-minimal input bytes are normalised (00 00 01 -> 01; ff ff 80 -> 80) */
    b.len = 0;
    static const uint8_t nonmin[3] = {0, 0, 1};
    v1[0] = D_B(nonmin, 3);
    CHECK_EQ_INT(pm_binrow_encode(t1, 1, v1, &b, &e), PAIMON_OK);
    CHECK(b.len == 36 && memcmp(b.data, done, 36) == 0);
    b.len = 0;
    static const uint8_t toobig[17] = {1};
    v1[0] = D_B(toobig, 17);
    CHECK_EQ_INT(pm_binrow_encode(t1, 1, v1, &b, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(b.len, 0);                  /* nothing appended on failure */
    pm_type_free(t1[0]);

    /* TIMESTAMP(6) null: 8 reserved bytes; value: millis in var part, nanos in slot */
    pm_type *t2[1] = {T("TIMESTAMP(6)")};
    pm_datum n2[1] = {D_NULL()};
    b.len = 0;
    CHECK_EQ_INT(pm_binrow_encode(t2, 1, n2, &b, &e), PAIMON_OK);
    static const uint8_t tnull[28] = {0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 0};
    CHECK(b.len == 28 && memcmp(b.data, tnull, 28) == 0);
    b.len = 0;
    pm_datum tv[1] = {D_TS(1000, 1000)};
    CHECK_EQ_INT(pm_binrow_encode(t2, 1, tv, &b, &e), PAIMON_OK);
    static const uint8_t tval[28] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                                     0xe8, 0x03, 0, 0, 16, 0, 0, 0, 0xe8, 0x03};
    CHECK(b.len == 28 && memcmp(b.data, tval, 28) == 0);
    b.len = 0;
    tv[0] = D_TS(0, 1000000);
    CHECK_EQ_INT(pm_binrow_encode(t2, 1, tv, &b, &e), PAIMON_MISUSE);
    pm_type_free(t2[0]);

    /* compact nulls: null bit + zero slot; out of range ints rejected */
    pm_type *t3[2] = {T("INT"), T("TINYINT")};
    pm_datum v3[2] = {D_NULL(), D_I(-1)};
    b.len = 0;
    CHECK_EQ_INT(pm_binrow_encode(t3, 2, v3, &b, &e), PAIMON_OK);
    static const uint8_t cnull[28] = {0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0, 0,
                                      0, 0, 0, 0, 0, 0, 0, 0, 0xff};
    CHECK(b.len == 28 && memcmp(b.data, cnull, 28) == 0);
    v3[1] = D_I(128);
    b.len = 0;
    CHECK_EQ_INT(pm_binrow_encode(t3, 2, v3, &b, &e), PAIMON_MISUSE);
    free_types(t3, 2);

    /* 8-byte string goes to the var part, exactly 8 bytes, no extra padding */
    pm_type *t4[1] = {T("STRING")};
    pm_datum v4[1] = {D_S("12345678")};
    b.len = 0;
    CHECK_EQ_INT(pm_binrow_encode(t4, 1, v4, &b, &e), PAIMON_OK);
    static const uint8_t s8[28] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
                                   8, 0, 0, 0, 16, 0, 0, 0, '1', '2', '3', '4', '5', '6', '7', '8'};
    CHECK(b.len == 28 && memcmp(b.data, s8, 28) == 0);
    pm_type_free(t4[0]);
    pm_buf_free(&b);
}

TEST(wide_rows) {
    static const size_t arities[] = {56, 57, 120, 121, 200};
    static const size_t widths[] = {8, 16, 16, 24, 32};
    for (size_t k = 0; k < sizeof arities / sizeof *arities; k++) {
        size_t n = arities[k];
        pm_type **t = calloc(n, sizeof *t);
        pm_datum *v = calloc(n, sizeof *v);
        for (size_t i = 0; i < n; i++) {
            t[i] = T(i % 3 == 0 ? "STRING" : i % 3 == 1 ? "BIGINT" : "TIMESTAMP(9)");
            if (i % 5 == 0) v[i] = D_NULL();
            else if (i % 3 == 0) v[i] = D_S(i % 2 ? "short" : "longer than seven");
            else if (i % 3 == 1) v[i] = D_I((int64_t)i * 1000003);
            else v[i] = D_TS((int64_t)i * 86400000, (int32_t)i);
        }
        roundtrip(t, n, v, "wide");
        pm_buf b = {0};
        pm_err e = {0};
        CHECK_EQ_INT(pm_binrow_encode(t, n, v, &b, &e), PAIMON_OK);
        /* field 0 is null and a STRING: its slot is at 4 + W and is zero; the
         * null bit of the last field lives inside the W-byte bitset */
        size_t w = widths[k];
        CHECK(b.len >= 4 + w + 8 * n);
        CHECK(b.data[4 + 1] & 1);               /* field 0 null -> bit 8 */
        size_t last = n - 1, bit = last + 8;
        CHECK((bit >> 3) < w);
        CHECK_EQ_INT(!!(b.data[4 + (bit >> 3)] & (1u << (bit & 7))), last % 5 == 0);
        /* header byte zero; bits past the arity zero */
        CHECK_EQ_INT(b.data[4], 0);
        for (size_t j = n + 8; j < w * 8; j++) CHECK(!(b.data[4 + (j >> 3)] & (1u << (j & 7))));
        pm_buf_free(&b);
        free_types(t, n);
        free(t);
        free(v);
    }
}

/* ---- corruption -------------------------------------------------------- */

static int decode_copy(const uint8_t *p, size_t n, pm_type **t, size_t nt, pm_err *e) {
    uint8_t *c = malloc(n ? n : 1);          /* exact-size heap copy: ASan sees over-reads */
    if (n) memcpy(c, p, n);
    pm_datum d[NT + 4];
    int rc = pm_binrow_decode(c, n, t, nt, d, e);
    /* touch every returned var-part byte */
    if (rc == PAIMON_OK) {
        unsigned s = 0;
        for (size_t i = 0; i < nt; i++) {
            if (d[i].is_null) continue;
            pm_type_root r = t[i]->root;
            if (r == PM_T_CHAR || r == PM_T_VARCHAR || r == PM_T_BINARY || r == PM_T_VARBINARY ||
                (r == PM_T_DECIMAL && t[i]->precision > 18))
                for (size_t j = 0; j < d[i].v.bin.len; j++) s += d[i].v.bin.ptr[j];
            pm_buf o = {0};
            pm_datum_to_string(t[i], &d[i], 1, &o);
            pm_datum_to_string(t[i], &d[i], 0, &o);
            pm_buf_free(&o);
        }
        (void)s;
    }
    free(c);
    return rc;
}

TEST(corrupt_rows) {
    pm_type *t[NT];
    for (int i = 0; i < NT; i++) t[i] = T(rt_types[i]);
    uint8_t big[16];
    size_t nb = i128_bytes((i128)-987654321987654321LL * 1000, big);
    pm_datum v[NT];
    for (int i = 0; i < NT; i++) v[i] = D_I(i);
    v[5] = D_F(2.5f); v[6] = D_D(-0.25);
    v[9] = D_B(big, nb); v[10] = D_B(big, nb); v[26] = D_B(big, nb); v[27] = D_B(big, nb);
    v[11] = D_S("abc"); v[12] = D_S("0123456789"); v[13] = D_S("x"); v[14] = D_S("");
    v[15] = D_S("another long string"); v[16] = D_S("bin!"); v[17] = D_S("binary data > 7");
    v[18] = D_S("b");
    v[21] = D_TS(5, 0); v[22] = D_TS(6, 7); v[23] = D_TS(-8, 999999); v[24] = D_TS(9, 0);
    v[25] = D_TS(10, 11); v[29] = D_TS(12, 0); v[31] = D_S("not null");
    v[0] = D_I(1); v[28] = D_I(0);
    pm_buf b = {0};
    pm_err e = {0};
    CHECK_EQ_INT(pm_binrow_encode(t, NT, v, &b, &e), PAIMON_OK);
    size_t fixed = 4 + 8 + 8 * NT;

    /* truncation at every length */
    int bad_rc = 0, too_lenient = 0;
    for (size_t len = 0; len < b.len; len++) {
        int rc = decode_copy(b.data, len, t, NT, &e);
        if (rc != PAIMON_OK && rc != PAIMON_CORRUPT) bad_rc++;
        if (len < fixed && rc != PAIMON_CORRUPT) too_lenient++;
    }
    CHECK_EQ_INT(bad_rc, 0);
    CHECK_EQ_INT(too_lenient, 0);
    /* cutting into the last string's data (not just padding) is corrupt */
    CHECK_EQ_INT(decode_copy(b.data, b.len - 24, t, NT, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "outside") != NULL);

    /* every single-bit flip: OK or CORRUPT, never a crash */
    bad_rc = 0;
    uint8_t *m = malloc(b.len);
    for (size_t i = 0; i < b.len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(m, b.data, b.len);
            m[i] ^= (uint8_t)(1u << bit);
            int rc = decode_copy(m, b.len, t, NT, &e);
            if (rc != PAIMON_OK && rc != PAIMON_CORRUPT) bad_rc++;
        }
    }
    CHECK_EQ_INT(bad_rc, 0);

    /* random byte storms over the slots */
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (int iter = 0; iter < 20000; iter++) {
        memcpy(m, b.data, b.len);
        int k = 1 + iter % 6;
        for (int j = 0; j < k; j++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            m[4 + x % (b.len - 4)] = (uint8_t)(x >> 32);
        }
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        size_t len = (iter % 3 == 0) ? (size_t)(x % (b.len + 1)) : b.len;
        int rc = decode_copy(m, len, t, NT, &e);
        if (rc != PAIMON_OK && rc != PAIMON_CORRUPT) bad_rc++;
    }
    CHECK_EQ_INT(bad_rc, 0);

    /* targeted structural errors */
#define SLOT(i) (m + 4 + 8 + 8 * (i))
    memcpy(m, b.data, b.len);
    m[3] = NT - 1;                                             /* arity mismatch */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "arity") != NULL);
    memcpy(m, b.data, b.len);
    m[0] = 0x80;                                               /* negative arity */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    memcpy(m, b.data, b.len);
    SLOT(12)[7] = 0x88;                                        /* inline length 8 */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "inline") != NULL);
    memcpy(m, b.data, b.len);
    SLOT(12)[4] = 8; SLOT(12)[5] = 0; SLOT(12)[6] = 0; SLOT(12)[7] = 0;  /* offset into the fixed part */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    memcpy(m, b.data, b.len);
    SLOT(12)[0] = 0xff; SLOT(12)[1] = 0xff;                    /* length past the end */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    memcpy(m, b.data, b.len);
    SLOT(12)[6] = 0x7f;                                        /* huge offset */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    memcpy(m, b.data, b.len);
    SLOT(9)[0] = 17;                                           /* decimal of 17 bytes */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    memcpy(m, b.data, b.len);
    SLOT(9)[0] = 0;                                            /* decimal of 0 bytes */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    memcpy(m, b.data, b.len);
    SLOT(22)[0] = 0x40; SLOT(22)[1] = 0x42; SLOT(22)[2] = 0x0f; SLOT(22)[3] = 0;  /* nanos 1000000 */
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "nano") != NULL);
    memcpy(m, b.data, b.len);
    SLOT(22)[4] = (uint8_t)(b.len - 4 - 4);                    /* millis straddle the end */
    SLOT(22)[5] = (uint8_t)((b.len - 8) >> 8);
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_CORRUPT);
    /* null field's garbage slot is ignored (Java never reads it) */
    memcpy(m, b.data, b.len);
    m[4 + ((12 + 8) >> 3)] |= (uint8_t)(1u << ((12 + 8) & 7));
    SLOT(12)[6] = 0x7f;
    CHECK_EQ_INT(decode_copy(m, b.len, t, NT, &e), PAIMON_OK);
#undef SLOT
    CHECK_EQ_INT(decode_copy(b.data, 3, t, NT, &e), PAIMON_CORRUPT);
    CHECK_EQ_INT(pm_binrow_arity(b.data, 3), -1);
    CHECK_EQ_INT(decode_copy(b.data, b.len, t, NT, &e), PAIMON_OK);
    free(m);
    pm_buf_free(&b);
    free_types(t, NT);
}

/* ---- Java-written rows from the fixtures ---------------------------------- */

/* Prints one line per BinaryRow found in the fixtures' manifests:
 *   P <table> <keys,> <types|> <hex> <bucket> <file> <external>   (_PARTITION)
 *   R <table> <column> <types|> <hex>                           (keys, stats)
 * Manifests are shared between branches, so a file's schema id is looked up
 * in every branch and the schema whose stats arity fits is used. */
static const char *py_script =
    "import sys, os, json, glob\n"
    "import avro.datafile, avro.io\n"
    "root = sys.argv[1]\n"
    "SYS = {'_ROW_ID': 'BIGINT', '_SEQUENCE_NUMBER': 'BIGINT', '_VALUE_KIND': 'TINYINT'}\n"
    "def tstr(t):\n"
    "    return t if isinstance(t, str) else '@' + t['type'].split()[0]\n"
    "def arity(b):\n"
    "    return int.from_bytes(b[:4], 'big')\n"
    "for tdir in sorted(glob.glob(os.path.join(root, 'paimon-java', '*', '*.db', '*'))):\n"
    "    if not os.path.isdir(os.path.join(tdir, 'schema')): continue\n"
    "    schemas = {}\n"
    "    for sp in sorted(glob.glob(os.path.join(tdir, 'schema', 'schema-*'))) + \\\n"
    "              sorted(glob.glob(os.path.join(tdir, 'branch', '*', 'schema', 'schema-*'))):\n"
    "        d = json.load(open(sp)); schemas.setdefault(d['id'], []).append(d)\n"
    "    for mp in sorted(glob.glob(os.path.join(tdir, 'manifest', 'manifest-*'))):\n"
    "        if os.path.basename(mp).startswith('manifest-list-'): continue\n"
    "        try:\n"
    "            recs = list(avro.datafile.DataFileReader(open(mp, 'rb'), avro.io.DatumReader()))\n"
    "        except Exception:\n"
    "            continue\n"
    "        for r in recs:\n"
    "            f = r['_FILE']\n"
    "            for sc in schemas[f['_SCHEMA_ID']]:\n"
    "                ft = {x['name']: tstr(x['type']) for x in sc['fields']}\n"
    "                ft.update(SYS)\n"
    "                vc = f.get('_VALUE_STATS_COLS')\n"
    "                if vc is None: vc = f.get('_WRITE_COLS')\n"
    "                if vc is None: vc = [x['name'] for x in sc['fields']]\n"
    "                if len(vc) == arity(f['_VALUE_STATS']['_MIN_VALUES']): break\n"
    "            pk = sc['partitionKeys']\n"
    "            keys = [k for k in sc['primaryKeys'] if k not in pk]\n"
    "            ext = 1 if f.get('_EXTERNAL_PATH') else 0\n"
    "            print('P', tdir, ','.join(pk), '|'.join(ft[k] for k in pk), r['_PARTITION'].hex(),\n"
    "                  r['_BUCKET'], f['_FILE_NAME'], ext, sep='\\t')\n"
    "            kt = '|'.join(ft[k] for k in keys)\n"
    "            for col in ('_MIN_KEY', '_MAX_KEY'):\n"
    "                print('R', tdir, col, kt, f[col].hex(), sep='\\t')\n"
    "            for st, cols in (('_KEY_STATS', keys), ('_VALUE_STATS', vc)):\n"
    "                tt = '|'.join(ft[k] for k in cols)\n"
    "                for col in ('_MIN_VALUES', '_MAX_VALUES'):\n"
    "                    print('R', tdir, st + '.' + col, tt, f[st][col].hex(), sep='\\t')\n";

/* Split s at sep in place; returns the number of parts (<= max). */
static int split(char *s, char sep, char **parts, int max) {
    int n = 0;
    if (!*s) return 0;
    parts[n++] = s;
    for (; *s && n < max; s++)
        if (*s == sep) { *s = '\0'; parts[n++] = s + 1; }
    return n;
}

static int parse_type_list(char *s, pm_type **t, int max) {
    char *parts[64];
    int n = split(s, '|', parts, 64);
    if (n > max) return -1;
    for (int i = 0; i < n; i++) {
        if (parts[i][0] == '@') {      /* composite column (stats are null) */
            pm_type_root r = !strcmp(parts[i], "@ARRAY") ? PM_T_ARRAY : !strcmp(parts[i], "@MAP")
                           ? PM_T_MAP : !strcmp(parts[i], "@MULTISET") ? PM_T_MULTISET : PM_T_ROW;
            t[i] = pm_type_new(r, 1);
        } else {
            t[i] = T(parts[i]);
        }
        if (!t[i]) { free_types(t, (size_t)i); return -1; }
    }
    return n;
}

typedef struct { char table[512]; char path[256]; } seen_part;

TEST(java_fixture_rows) {
    char script[] = "/tmp/pm_test_binrow_XXXXXX";
    int fd = mkstemp(script);
    CHECK(fd >= 0);
    if (fd < 0) return;
    FILE *sf = fdopen(fd, "w");
    fputs(py_script, sf);
    fclose(sf);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s '%s' 2>&1", script, fixtures_dir());
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p) { unlink(script); return; }

    static char line[1 << 16];
    static seen_part seen[256];
    int nseen = 0;
    int n_part = 0, n_rows = 0, n_files_checked = 0, n_fail = 0, n_typed = 0;
    while (fgets(line, sizeof line, p)) {
        size_t l = strlen(line);
        if (l && line[l - 1] == '\n') line[--l] = '\0';
        char *f[9];
        int nf = split(line, '\t', f, 9);
        if (nf < 5 || (f[0][0] != 'P' && f[0][0] != 'R')) {
            fprintf(stderr, "  python: %s\n", line);
            n_fail++;
            continue;
        }
        static uint8_t bytes[1 << 15];
        size_t nbytes = unhex(f[4], bytes, sizeof bytes);
        pm_type *types[64];
        char typelist[4096];
        snprintf(typelist, sizeof typelist, "%s", f[3]);
        int nt = parse_type_list(typelist, types, 64);
        if (nt < 0) { n_fail++; continue; }
        pm_datum d[64];
        pm_err e = {0};
        int rc = pm_binrow_decode(bytes, nbytes, types, (size_t)nt, d, &e);
        if (rc) {
            fprintf(stderr, "  %s %s [%s]: %s\n", f[1], f[2], f[3], e.msg);
            n_fail++;
            free_types(types, (size_t)nt);
            continue;
        }
        if (nt > 2) n_typed++;
        pm_buf re = {0};
        rc = pm_binrow_encode(types, (size_t)nt, d, &re, &e);
        if (rc || re.len != nbytes || memcmp(re.data, bytes, nbytes) != 0) {
            fprintf(stderr, "  %s %s [%s]: re-encoding differs\n", f[1], f[2], f[3]);
            n_fail++;
        }
        pm_buf_free(&re);
        if (f[0][0] == 'P' && nf >= 8) {
            n_part++;
            char keybuf[512];
            snprintf(keybuf, sizeof keybuf, "%s", f[2]);
            char *keys[64];
            int nk = split(keybuf, ',', keys, 64);
            pm_buf path = {0};
            if (nk != nt || pm_partition_path((const char *const *)keys, types, (size_t)nt, d, NULL,
                                              1, &path)) {
                n_fail++;
            } else {
                pm_buf_cstr(&path);
                const char *ps = path.data ? (const char *)path.data : "";
                if (!strcmp(f[7], "0")) {   /* the data file must exist at <table>/<path>bucket-N/ */
                    char fp[2048];
                    struct stat st;
                    snprintf(fp, sizeof fp, "%s/%sbucket-%s/%s", f[1], ps, f[5], f[6]);
                    if (stat(fp, &st) != 0) {
                        fprintf(stderr, "  missing data file %s\n", fp);
                        n_fail++;
                    }
                    n_files_checked++;
                }
                int found = 0;
                for (int i = 0; i < nseen; i++)
                    if (!strcmp(seen[i].table, f[1]) && !strcmp(seen[i].path, ps)) found = 1;
                if (!found && nseen < 256) {
                    snprintf(seen[nseen].table, sizeof seen[nseen].table, "%s", f[1]);
                    snprintf(seen[nseen].path, sizeof seen[nseen].path, "%s", ps);
                    nseen++;
                }
            }
            pm_buf_free(&path);
        } else {
            n_rows++;
        }
        free_types(types, (size_t)nt);
    }
    int st = pclose(p);
    unlink(script);
    CHECK_EQ_INT(st, 0);
    CHECK_EQ_INT(n_fail, 0);
    CHECK(n_part >= 50);
    CHECK(n_rows >= 300);
    CHECK(n_typed >= 20);
    CHECK(n_files_checked >= 40);
    printf("# fixtures: %d partitions, %d other rows, %d data files located\n", n_part, n_rows,
           n_files_checked);

    /* the rendered partitions of each table are exactly its partition directories */
    int complex_seen = 0, alter_seen = 0;
    for (int i = 0; i < nseen; i++) {
        if (strstr(seen[i].table, "/append_complex_data")) {
            complex_seen++;
            CHECK(!strcmp(seen[i].path, "f1=10/") || !strcmp(seen[i].path, "f1=20/"));
        }
        if (strstr(seen[i].table, "/pk_table_with_alter_table")) {
            alter_seen++;
            CHECK(!strcmp(seen[i].path, "key0=0/key1=1/") || !strcmp(seen[i].path, "key0=1/key1=1/"));
        }
    }
    CHECK_EQ_INT(complex_seen, 2);
    CHECK_EQ_INT(alter_seen, 2);
    /* every first-level k=v directory of a table was rendered by some entry */
    for (int i = 0; i < nseen; i++) {
        if (i && !strcmp(seen[i].table, seen[i - 1].table)) continue;
        DIR *dir = opendir(seen[i].table);
        if (!dir) continue;
        struct dirent *de;
        while ((de = readdir(dir))) {
            if (!strchr(de->d_name, '=')) continue;
            size_t dl = strlen(de->d_name);
            int ok = 0;
            for (int j = 0; j < nseen; j++)
                if (!strcmp(seen[j].table, seen[i].table) && !strncmp(seen[j].path, de->d_name, dl) &&
                    seen[j].path[dl] == '/')
                    ok = 1;
            if (!ok) fprintf(stderr, "  %s/%s not rendered by any entry\n", seen[i].table, de->d_name);
            CHECK(ok);
        }
        closedir(dir);
    }
}

/* ---- type strings -------------------------------------------------------- */

static void type_rt(const char *in, const char *want) {
    pm_type *t = NULL;
    pm_err e = {0};
    int rc = pm_type_parse_atomic(in, &t, &e);
    if (rc) {
        fprintf(stderr, "  parse \"%s\": %s\n", in, e.msg);
        CHECK_EQ_INT(rc, PAIMON_OK);
        return;
    }
    pm_buf b = {0};
    CHECK_EQ_INT(pm_type_to_sql(t, &b), PAIMON_OK);
    pm_buf_cstr(&b);
    CHECK_EQ_STR((const char *)b.data, want);
    /* printing is a fixed point (composite SQL like ARRAY<..> is not an atomic string) */
    pm_type *t2 = NULL;
    if (strncmp((const char *)b.data, "ARRAY<", 6))
        CHECK_EQ_INT(pm_type_parse_atomic((const char *)b.data, &t2, &e), PAIMON_OK);
    pm_buf b2 = {0};
    if (t2) {
        CHECK_EQ_INT(pm_type_to_sql(t2, &b2), PAIMON_OK);
        pm_buf_cstr(&b2);
        CHECK_EQ_STR((const char *)b2.data, want);
        CHECK_EQ_INT(t2->root, t->root);
        CHECK_EQ_INT(t2->nullable, t->nullable);
    }
    pm_type *c = pm_type_clone(t);
    pm_buf b3 = {0};
    CHECK(c && pm_type_to_sql(c, &b3) == PAIMON_OK);
    pm_buf_cstr(&b3);
    CHECK_EQ_STR((const char *)b3.data, want);
    pm_buf_free(&b);
    pm_buf_free(&b2);
    pm_buf_free(&b3);
    pm_type_free(t);
    pm_type_free(t2);
    pm_type_free(c);
}

TEST(type_strings) {
    type_rt("BOOLEAN", "BOOLEAN");
    type_rt("TINYINT", "TINYINT");
    type_rt("SMALLINT NOT NULL", "SMALLINT NOT NULL");
    type_rt("INT", "INT");
    type_rt("INTEGER", "INT");
    type_rt("int not null", "INT NOT NULL");
    type_rt("  Integer   NOT\tNULL  ", "INT NOT NULL");
    type_rt("INT NULL", "INT");
    type_rt("BIGINT", "BIGINT");
    type_rt("FLOAT", "FLOAT");
    type_rt("DOUBLE", "DOUBLE");
    type_rt("DOUBLE PRECISION", "DOUBLE");
    type_rt("double precision not null", "DOUBLE NOT NULL");
    type_rt("DECIMAL", "DECIMAL(10, 0)");
    type_rt("DECIMAL(5)", "DECIMAL(5, 0)");
    type_rt("DECIMAL(10, 2)", "DECIMAL(10, 2)");
    type_rt("DECIMAL(38,18) NOT NULL", "DECIMAL(38, 18) NOT NULL");
    type_rt("NUMERIC(12, 3)", "DECIMAL(12, 3)");
    type_rt("DEC(4,1)", "DECIMAL(4, 1)");
    type_rt("dec", "DECIMAL(10, 0)");
    type_rt("CHAR", "CHAR(1)");
    type_rt("CHAR(10)", "CHAR(10)");
    type_rt("VARCHAR(100)", "VARCHAR(100)");
    type_rt("VARCHAR", "VARCHAR(1)");
    type_rt("STRING", "STRING");
    type_rt("VARCHAR(2147483647)", "STRING");
    type_rt("string NOT NULL", "STRING NOT NULL");
    type_rt("BINARY(16)", "BINARY(16)");
    type_rt("BINARY", "BINARY(1)");
    type_rt("VARBINARY(8)", "VARBINARY(8)");
    type_rt("BYTES", "BYTES");
    type_rt("VARBINARY(2147483647) NOT NULL", "BYTES NOT NULL");
    type_rt("DATE", "DATE");
    type_rt("TIME", "TIME(0)");
    type_rt("TIME(3)", "TIME(3)");
    type_rt("TIME(3) WITHOUT TIME ZONE", "TIME(3)");
    type_rt("TIMESTAMP", "TIMESTAMP(6)");
    type_rt("TIMESTAMP(3)", "TIMESTAMP(3)");
    type_rt("TIMESTAMP(9) NOT NULL", "TIMESTAMP(9) NOT NULL");
    type_rt("TIMESTAMP WITHOUT TIME ZONE", "TIMESTAMP(6)");
    type_rt("TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP(6) WITH LOCAL TIME ZONE");
    type_rt("TIMESTAMP WITH LOCAL TIME ZONE", "TIMESTAMP(6) WITH LOCAL TIME ZONE");
    type_rt("timestamp(3) with local time zone not null", "TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL");
    type_rt("TIMESTAMP_LTZ", "TIMESTAMP(6) WITH LOCAL TIME ZONE");
    type_rt("TIMESTAMP_LTZ(3)", "TIMESTAMP(3) WITH LOCAL TIME ZONE");
    type_rt("VARIANT", "VARIANT");
    type_rt("BLOB NOT NULL", "BLOB NOT NULL");
    type_rt("INT ARRAY", "ARRAY<INT>");
    type_rt("INT NOT NULL ARRAY NOT NULL", "ARRAY<INT NOT NULL> NOT NULL");
    type_rt("VECTOR<FLOAT, 3>", "VECTOR<FLOAT, 3>");

    pm_type *t = NULL;
    CHECK(pm_type_parse_atomic("TIMESTAMP(3)", &t, NULL) == PAIMON_OK && t &&
          t->root == PM_T_TIMESTAMP && t->precision == 3 && t->nullable);
    pm_type_free(t);
    CHECK(pm_type_parse_atomic("DECIMAL(23, 5) NOT NULL", &t, NULL) == PAIMON_OK && t &&
          t->root == PM_T_DECIMAL && t->precision == 23 && t->scale == 5 && !t->nullable);
    pm_type_free(t);
    CHECK(pm_type_parse_atomic("STRING", &t, NULL) == PAIMON_OK && t && t->root == PM_T_VARCHAR &&
          t->length == 2147483647);
    pm_type_free(t);

    static const char *bad[] = {
        "", "   ", "INTEGERS", "INT NOT", "INT NOT NUL", "DECIMAL(", "DECIMAL(10,", "DECIMAL(0, 0)",
        "DECIMAL(39, 0)", "DECIMAL(5, 6)", "VARCHAR(0)", "VARCHAR(2147483648)", "CHAR(-1)",
        "TIMESTAMP(10)", "TIME(10)", "TIMESTAMP WITH TIME ZONE", "INT INT", "INT,", "ARRAY<INT>",
        "MAP<INT, INT>", "ROW<a INT>", "`INT`", "'x'", "INT.x", "VECTOR<STRING, 3>", "VECTOR<INT, 0>",
        "TIMESTAMP_LTZ(3) WITH LOCAL TIME ZONE", "DOUBLE PRECISION PRECISION", "NOT NULL", "NULL"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pm_err e = {0};
        t = (pm_type *)1;
        int rc = pm_type_parse_atomic(bad[i], &t, &e);
        if (rc != PAIMON_CORRUPT) fprintf(stderr, "  accepted bad type \"%s\"\n", bad[i]);
        CHECK_EQ_INT(rc, PAIMON_CORRUPT);
        CHECK(t == NULL);
        CHECK(e.msg[0] != '\0');
    }
    CHECK_EQ_INT(pm_type_parse_atomic(NULL, &t, NULL), PAIMON_MISUSE);
}

TEST(composite_sql) {
    pm_type *arr = pm_type_new(PM_T_ARRAY, 1);
    arr->element = pm_type_new(PM_T_INT, 1);
    pm_type *map = pm_type_new(PM_T_MAP, 0);
    map->element = T("STRING");
    map->value = T("INT NOT NULL");
    pm_type *row = pm_type_new(PM_T_ROW, 1);
    row->n_fields = 3;
    row->fields = calloc(3, sizeof *row->fields);
    row->fields[0].name = pm_strdup("a");
    row->fields[0].type = pm_type_new(PM_T_INT, 1);
    row->fields[1].name = pm_strdup("b`c");
    row->fields[1].type = T("STRING");
    row->fields[1].description = pm_strdup("it's");
    row->fields[2].name = pm_strdup("m");
    row->fields[2].type = map;
    pm_type *ms = pm_type_new(PM_T_MULTISET, 1);
    ms->element = pm_type_clone(arr);

    pm_buf b = {0};
    CHECK_EQ_INT(pm_type_to_sql(arr, &b), PAIMON_OK); pm_buf_cstr(&b);
    CHECK_EQ_STR((char *)b.data, "ARRAY<INT>");
    b.len = 0;
    CHECK_EQ_INT(pm_type_to_sql(map, &b), PAIMON_OK); pm_buf_cstr(&b);
    CHECK_EQ_STR((char *)b.data, "MAP<STRING, INT NOT NULL> NOT NULL");
    b.len = 0;
    CHECK_EQ_INT(pm_type_to_sql(row, &b), PAIMON_OK); pm_buf_cstr(&b);
    CHECK_EQ_STR((char *)b.data,
                 "ROW<`a` INT, `b``c` STRING COMMENT 'it''s', `m` MAP<STRING, INT NOT NULL> NOT NULL>");
    b.len = 0;
    CHECK_EQ_INT(pm_type_to_sql(ms, &b), PAIMON_OK); pm_buf_cstr(&b);
    CHECK_EQ_STR((char *)b.data, "MULTISET<ARRAY<INT>>");
    pm_type *rc = pm_type_clone(row);
    b.len = 0;
    CHECK(rc && pm_type_to_sql(rc, &b) == PAIMON_OK); pm_buf_cstr(&b);
    CHECK_EQ_STR((char *)b.data,
                 "ROW<`a` INT, `b``c` STRING COMMENT 'it''s', `m` MAP<STRING, INT NOT NULL> NOT NULL>");
    CHECK_EQ_STR(pm_type_root_name(PM_T_TIMESTAMP_LTZ), "TIMESTAMP_LTZ");
    CHECK_EQ_STR(pm_type_root_name(PM_T_INT), "INT");

    /* a complex column stored in a row: raw var-part chunk round trip */
    static const uint8_t raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    pm_type *tt[2] = {arr, T("INT")};
    pm_datum v[2] = {D_B(raw, 12), D_I(3)};
    roundtrip(tt, 2, v, "complex");
    CHECK_EQ_STR(render(arr, v[0], 1), "<rc=6>");
    pm_type_free(tt[1]);

    pm_buf_free(&b);
    pm_type_free(arr);
    pm_type_free(row);
    pm_type_free(ms);
    pm_type_free(rc);
    pm_type_free(NULL);
}

/* ---- value rendering ---------------------------------------------------- */

TEST(java_double_to_string) {
    CHECK_EQ_STR(jdouble(1.0), "1.0");
    CHECK_EQ_STR(jdouble(0.1), "0.1");
    CHECK_EQ_STR(jdouble(100.0), "100.0");
    CHECK_EQ_STR(jdouble(1.0e7), "1.0E7");
    CHECK_EQ_STR(jdouble(1.0e-4), "1.0E-4");
    CHECK_EQ_STR(jdouble(0.001), "0.001");
    CHECK_EQ_STR(jdouble(123456.789), "123456.789");
    CHECK_EQ_STR(jdouble(1.23456789e8), "1.23456789E8");
    CHECK_EQ_STR(jdouble(-0.0), "-0.0");
    CHECK_EQ_STR(jdouble(0.0), "0.0");
    CHECK_EQ_STR(jdouble(NAN), "NaN");
    CHECK_EQ_STR(jdouble(INFINITY), "Infinity");
    CHECK_EQ_STR(jdouble(-INFINITY), "-Infinity");
    CHECK_EQ_STR(jdouble(4.9e-324), "4.9E-324");
    CHECK_EQ_STR(jdouble(DBL_MAX), "1.7976931348623157E308");
    CHECK_EQ_STR(jdouble(DBL_MIN), "2.2250738585072014E-308");
    CHECK_EQ_STR(jdouble(1.0e23), "1.0E23");
    CHECK_EQ_STR(jdouble(2.0e-3), "0.002");
    CHECK_EQ_STR(jdouble(9999999.0), "9999999.0");
    CHECK_EQ_STR(jdouble(-1.5), "-1.5");
    CHECK_EQ_STR(jdouble(1.0e10), "1.0E10");
    CHECK_EQ_STR(jdouble(1.234e-5), "1.234E-5");
    CHECK_EQ_STR(jdouble(0.1 + 0.2), "0.30000000000000004");
    CHECK_EQ_STR(jdouble(1.0 / 3), "0.3333333333333333");
    CHECK_EQ_STR(jdouble(12345678.9), "1.23456789E7");
    CHECK_EQ_STR(jdouble(5e-324 * 3), "1.5E-323");
    CHECK_EQ_STR(jdouble(9007199254740993.0), "9.007199254740992E15");
    CHECK_EQ_STR(jdouble(ldexp(1.0, -44)), "5.684341886080802E-14");   /* JDK 19+; older JDKs print 5.6843418860808015E-14 */

    CHECK_EQ_STR(jfloat(1.0f), "1.0");
    CHECK_EQ_STR(jfloat(0.1f), "0.1");
    CHECK_EQ_STR(jfloat(3.4028235e38f), "3.4028235E38");
    CHECK_EQ_STR(jfloat(1.4e-45f), "1.4E-45");
    CHECK_EQ_STR(jfloat(FLT_MIN), "1.1754944E-38");               /* JDK 19+ (older: 1.17549435E-38) */
    CHECK_EQ_STR(jfloat(1.0e10f), "1.0E10");
    CHECK_EQ_STR(jfloat(3.14f), "3.14");
    CHECK_EQ_STR(jfloat(1.1f), "1.1");
    CHECK_EQ_STR(jfloat(16777216.0f), "1.6777216E7");
    CHECK_EQ_STR(jfloat(0.001f), "0.001");
    CHECK_EQ_STR(jfloat(-0.0f), "-0.0");
    CHECK_EQ_STR(jfloat(NAN), "NaN");
    CHECK_EQ_STR(jfloat(-INFINITY), "-Infinity");
    CHECK_EQ_STR(jfloat(123456.79f), "123456.79");
    CHECK_EQ_STR(jfloat(1.0e-4f), "1.0E-4");
}

TEST(value_rendering) {
    /* decimals: BigDecimal.toPlainString */
    CHECK_EQ_STR(render_s("DECIMAL(10, 2)", D_I(5), 1), "0.05");
    CHECK_EQ_STR(render_s("DECIMAL(10, 2)", D_I(-150), 1), "-1.50");
    CHECK_EQ_STR(render_s("DECIMAL(10, 2)", D_I(0), 1), "0.00");
    CHECK_EQ_STR(render_s("DECIMAL(10, 2)", D_I(-5), 1), "-0.05");
    CHECK_EQ_STR(render_s("DECIMAL(10, 0)", D_I(12345), 1), "12345");
    CHECK_EQ_STR(render_s("DECIMAL(18, 18)", D_I(1), 1), "0.000000000000000001");
    CHECK_EQ_STR(render_s("DECIMAL(18, 3)", D_I(INT64_MIN), 1), "-9223372036854775.808");
    uint8_t b[16];
    i128 v38 = 1;
    for (int i = 0; i < 38; i++) v38 *= 10;
    v38 -= 1;
    size_t n = i128_bytes(v38, b);
    CHECK_EQ_STR(render_s("DECIMAL(38, 5)", D_B(b, n), 1), "999999999999999999999999999999999.99999");
    n = i128_bytes(-v38, b);
    CHECK_EQ_STR(render_s("DECIMAL(38, 0)", D_B(b, n), 1), "-99999999999999999999999999999999999999");
    n = i128_bytes(-42, b);
    CHECK_EQ_STR(render_s("DECIMAL(23, 5)", D_B(b, n), 1), "-0.00042");
    n = i128_bytes(0, b);
    CHECK_EQ_STR(render_s("DECIMAL(23, 5)", D_B(b, n), 1), "0.00000");
    /* the fixture's DECIMAL(23, 5) min value bytes ff 43 a1 58 */
    static const uint8_t fx[4] = {0xff, 0x43, 0xa1, 0x58};
    CHECK_EQ_STR(render_s("DECIMAL(23, 5)", D_B(fx, 4), 1), "-123.45000");

    /* integers, booleans */
    CHECK_EQ_STR(render_s("BOOLEAN", D_I(1), 1), "true");
    CHECK_EQ_STR(render_s("BOOLEAN", D_I(0), 0), "false");
    CHECK_EQ_STR(render_s("BIGINT", D_I(INT64_MIN), 1), "-9223372036854775808");
    CHECK_EQ_STR(render_s("TINYINT", D_I(-7), 0), "-7");

    /* DATE / TIME */
    CHECK_EQ_STR(render_s("DATE", D_I(19723), 1), "19723");
    CHECK_EQ_STR(render_s("DATE", D_I(19723), 0), "2024-01-01");
    CHECK_EQ_STR(render_s("DATE", D_I(-1), 0), "1969-12-31");
    CHECK_EQ_STR(render_s("DATE", D_I(-719528), 0), "0000-01-01");
    CHECK_EQ_STR(render_s("DATE", D_I(11016), 0), "2000-02-29");
    CHECK_EQ_STR(render_s("TIME", D_I(3723000), 1), "3723000");
    CHECK_EQ_STR(render_s("TIME", D_I(3723000), 0), "01:02:03");
    CHECK_EQ_STR(render_s("TIME(3)", D_I(3723450), 0), "01:02:03.45");
    CHECK_EQ_STR(render_s("TIME(3)", D_I(3723000), 0), "01:02:03.0");
    CHECK_EQ_STR(render_s("TIME", D_I(-1000), 0), "23:59:59");
    CHECK_EQ_STR(render_s("TIME", D_I(INT32_MIN), 0), "03:28:36");
    CHECK_EQ_STR(render_s("DATE", D_I((int64_t)INT32_MAX + 1), 0), "<rc=8>");
    CHECK_EQ_STR(render_s("TIMESTAMP(9)", D_TS(0, 1000000), 1), "<rc=8>");
    CHECK_EQ_STR(render_s("TIMESTAMP(9)", D_TS(INT64_MIN, 0), 1), "-292275055-05-16T16:47:04.192");
    CHECK_EQ_STR(render_s("TIMESTAMP(9)", D_TS(INT64_MAX, 999999), 1),
                 "+292278994-08-17T07:12:55.807999999");

    /* TIMESTAMP: LocalDateTime.toString (legacy) vs CAST AS STRING */
    int64_t base = 1704164645000LL;        /* 2024-01-02T03:04:05 */
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(base, 0), 1), "2024-01-02T03:04:05");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(base - 5000, 0), 1), "2024-01-02T03:04");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(base + 123, 0), 1), "2024-01-02T03:04:05.123");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(base + 100, 0), 1), "2024-01-02T03:04:05.100");
    CHECK_EQ_STR(render_s("TIMESTAMP(6)", D_TS(base + 123, 456000), 1), "2024-01-02T03:04:05.123456");
    CHECK_EQ_STR(render_s("TIMESTAMP(9)", D_TS(base + 123, 456789), 1), "2024-01-02T03:04:05.123456789");
    CHECK_EQ_STR(render_s("TIMESTAMP(9)", D_TS(base - 5000, 1), 1), "2024-01-02T03:04:00.000000001");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(-1, 0), 1), "1969-12-31T23:59:59.999");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(0, 0), 1), "1970-01-01T00:00");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(-62135596800000LL, 0), 1), "0001-01-01T00:00");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(-62167219200000LL - 86400000LL, 0), 1),
                 "-0001-12-31T00:00");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(253402300800000LL, 0), 1), "+10000-01-01T00:00");
    CHECK_EQ_STR(render_s("TIMESTAMP(3) WITH LOCAL TIME ZONE", D_TS(base, 0), 1), "2024-01-02T03:04:05");
    CHECK_EQ_STR(render_s("TIMESTAMP(0)", D_TS(base, 0), 0), "2024-01-02 03:04:05");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(base, 0), 0), "2024-01-02 03:04:05.000");
    CHECK_EQ_STR(render_s("TIMESTAMP(3)", D_TS(base + 120, 0), 0), "2024-01-02 03:04:05.120");
    CHECK_EQ_STR(render_s("TIMESTAMP(6)", D_TS(base + 123, 456000), 0), "2024-01-02 03:04:05.123456");
    CHECK_EQ_STR(render_s("TIMESTAMP(9)", D_TS(base + 120, 0), 0), "2024-01-02 03:04:05.120000000");
    CHECK_EQ_STR(render_s("TIMESTAMP(6)", D_TS(-1, 0), 0), "1969-12-31 23:59:59.999000");

    /* strings, binary */
    CHECK_EQ_STR(render_s("STRING", D_S("h\xc3\xa9"), 1), "h\xc3\xa9");
    static const uint8_t bin[3] = {0x00, 0xab, 0x7f};
    CHECK_EQ_STR(render_s("BYTES", D_B(bin, 3), 1), "00ab7f");
    CHECK_EQ_STR(render_s("BINARY(2)", D_S("hi"), 0), "hi");
    CHECK_EQ_STR(render_s("INT", D_NULL(), 1), "null");
}

/* ---- escaping and partition paths ------------------------------------------ */

static const char *esc(const char *s) {
    static char out[4][256];
    static int k;
    char *o = out[k++ & 3];
    pm_buf b = {0};
    pm_escape_path_name(s, strlen(s), &b);
    snprintf(o, 256, "%.*s", (int)b.len, b.data ? (char *)b.data : "");
    pm_buf_free(&b);
    return o;
}

static const char *unesc(const char *s) {
    static char out[4][256];
    static int k;
    char *o = out[k++ & 3];
    pm_buf b = {0};
    pm_unescape_path_name(s, strlen(s), &b);
    snprintf(o, 256, "%.*s", (int)b.len, b.data ? (char *)b.data : "");
    pm_buf_free(&b);
    return o;
}

TEST(path_escaping) {
    CHECK_EQ_STR(esc("a/b"), "a%2Fb");
    CHECK_EQ_STR(esc("x=y"), "x%3Dy");
    CHECK_EQ_STR(esc("\xc3\xa9"), "\xc3\xa9");
    CHECK_EQ_STR(esc("a b"), "a b");
    CHECK_EQ_STR(esc("\"#%'*/:=?\\{}[]^"), "%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%7D%5B%5D%5E");
    CHECK_EQ_STR(esc("\x01\x1f\x7f~!@$&()+,;<>|`"), "%01%1F%7F~!@$&()+,;<>|`");
    CHECK_EQ_STR(esc("2024-01-02T03:04"), "2024-01-02T03%3A04");
    pm_buf b = {0};
    CHECK_EQ_INT(pm_escape_path_name("a\0b", 3, &b), PAIMON_OK);
    CHECK(b.len == 5 && memcmp(b.data, "a%00b", 5) == 0);
    pm_buf_free(&b);

    CHECK_EQ_STR(unesc("a%2Fb"), "a/b");
    CHECK_EQ_STR(unesc("x%3dy"), "x=y");
    CHECK_EQ_STR(unesc("100%"), "100%");
    CHECK_EQ_STR(unesc("%4"), "%4");
    CHECK_EQ_STR(unesc("%zz%41"), "%zzA");
    CHECK_EQ_STR(unesc("%C3%A9"), "\xc3\xa9");
    /* escape/unescape round trip over every byte */
    char all[256];
    for (int i = 1; i < 256; i++) all[i - 1] = (char)i;
    all[255] = '\0';
    CHECK_EQ_STR(unesc(esc("plain")), "plain");
    pm_buf e1 = {0}, e2 = {0};
    pm_escape_path_name(all, 255, &e1);
    pm_unescape_path_name((char *)e1.data, e1.len, &e2);
    CHECK(e2.len == 255 && memcmp(e2.data, all, 255) == 0);
    pm_buf_free(&e1);
    pm_buf_free(&e2);
}

static const char *ppath(const char *const *keys, pm_type **t, size_t n, const pm_datum *v,
                         const char *def, int legacy) {
    static char out[4][512];
    static int k;
    char *o = out[k++ & 3];
    pm_buf b = {0};
    int rc = pm_partition_path(keys, t, n, v, def, legacy, &b);
    if (rc) snprintf(o, 512, "<rc=%d>", rc);
    else snprintf(o, 512, "%.*s", (int)b.len, b.data ? (char *)b.data : "");
    pm_buf_free(&b);
    return o;
}

TEST(partition_paths) {
    const char *keys[4] = {"dt", "a/b", "d", "ts"};
    pm_type *t[4] = {T("STRING"), T("INT"), T("DATE"), T("TIMESTAMP(3)")};
    pm_datum v[4] = {D_S("a/b"), D_I(-3), D_I(19723), D_TS(1704164645000LL, 0)};
    CHECK_EQ_STR(ppath(keys, t, 4, v, NULL, 1), "dt=a%2Fb/a%2Fb=-3/d=19723/ts=2024-01-02T03%3A04%3A05/");
    CHECK_EQ_STR(ppath(keys, t, 4, v, NULL, 0),
                 "dt=a%2Fb/a%2Fb=-3/d=2024-01-01/ts=2024-01-02 03%3A04%3A05.000/");
    v[0] = D_S("x=y");
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt=x%3Dy/");
    v[0] = D_S("\xc3\xa9t\xc3\xa9");
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt=\xc3\xa9t\xc3\xa9/");
    v[0] = D_S("");
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt=__DEFAULT_PARTITION__/");
    v[0] = D_S("  \t\n");
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt=__DEFAULT_PARTITION__/");
    v[0] = D_S("\xe3\x80\x80");                /* U+3000 is Java whitespace */
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt=__DEFAULT_PARTITION__/");
    v[0] = D_S("\xc2\xa0");                    /* U+00A0 is not */
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt=\xc2\xa0/");
    v[0] = D_S("\xc0\xa0");                    /* overlong space: malformed, not blank */
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt=\xc0\xa0/");
    v[0] = D_S("\x01");                        /* U+0001: trim() would drop it, isWhitespace doesn't */
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt=%01/");
    v[0] = D_S(" x ");
    CHECK_EQ_STR(ppath(keys, t, 1, v, NULL, 1), "dt= x /");
    v[0] = D_NULL();
    v[1] = D_NULL();
    CHECK_EQ_STR(ppath(keys, t, 2, v, NULL, 1), "dt=__DEFAULT_PARTITION__/a%2Fb=__DEFAULT_PARTITION__/");
    CHECK_EQ_STR(ppath(keys, t, 2, v, "null:x", 1), "dt=null%3Ax/a%2Fb=null%3Ax/");
    CHECK_EQ_STR(ppath(keys, t, 0, v, NULL, 1), "");

    /* partition path straight from encoded bytes */
    pm_type *pt[2] = {T("INT"), T("STRING")};
    pm_datum pv[2] = {D_I(10), D_S("2024-01-01 00:00")};
    pm_buf b = {0};
    pm_err e = {0};
    CHECK_EQ_INT(pm_binrow_encode(pt, 2, pv, &b, &e), PAIMON_OK);
    pm_datum dv[2];
    CHECK_EQ_INT(pm_binrow_decode(b.data, b.len, pt, 2, dv, &e), PAIMON_OK);
    const char *k2[2] = {"f1", "s"};
    CHECK_EQ_STR(ppath(k2, pt, 2, dv, NULL, 1), "f1=10/s=2024-01-01 00%3A00/");
    pm_buf_free(&b);
    free_types(pt, 2);
    free_types(t, 4);
}

int main(void) {
    RUN(worked_example);
    RUN(roundtrip_all_types);
    RUN(layout_details);
    RUN(wide_rows);
    RUN(corrupt_rows);
    RUN(java_fixture_rows);
    RUN(type_strings);
    RUN(composite_sql);
    RUN(java_double_to_string);
    RUN(value_rendering);
    RUN(path_escaping);
    RUN(partition_paths);
    return TEST_SUMMARY();
}
