/* libFuzzer harness: BinaryRow decoding and value rendering (pm_types.h).
 *
 * Input layout:
 *   byte 0, bit 7 set:  the rest is an atomic type string for
 *                       pm_type_parse_atomic (to_sql must round-trip).
 *   otherwise:          n = byte0 & 0x3f types, bit 6 = overwrite the row's
 *                       arity prefix with n (reaches the field decoders more
 *                       often); bytes 1..n pick each type from TYPES[];
 *                       the rest is the serialized row ([arity BE][row]).
 * A decoded row is rendered with pm_datum_to_string (legacy and CAST
 * style) and pm_partition_path, re-encoded with pm_binrow_encode, and the
 * canonical bytes must be a fixed point of decode+encode. */
#include <stdint.h>
#include <stddef.h>

#include "pm_types.h"
#include "fuzz_common.h"

static const char *const TYPES[] = {
    "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE",
    "STRING", "VARCHAR(5)", "CHAR(3)", "BYTES", "BINARY(4)", "VARBINARY(20)",
    "DATE", "TIME", "TIME(3)",
    "TIMESTAMP(0)", "TIMESTAMP(3)", "TIMESTAMP(6)", "TIMESTAMP(9)", "TIMESTAMP",
    "TIMESTAMP(3) WITH LOCAL TIME ZONE", "TIMESTAMP(6) WITH LOCAL TIME ZONE",
    "DECIMAL(1, 0)", "DECIMAL(10, 2)", "DECIMAL(18, 4)", "DECIMAL(19, 2)",
    "DECIMAL(23, 5)", "DECIMAL(38, 10)", "DECIMAL(38, 0)",
    "INT NOT NULL", "STRING NOT NULL", "BIGINT NOT NULL", "DATE NOT NULL",
};
#define N_TYPES (sizeof TYPES / sizeof TYPES[0])
#define MAX_FIELDS 64

static pm_type *g_types[N_TYPES];

static void init_types(void) {
    static int done;
    size_t i;
    pm_err e;
    if (done) return;
    for (i = 0; i < N_TYPES; i++) {
        fuzz_err_init(&e);
        if (pm_type_parse_atomic(TYPES[i], &g_types[i], &e) != PAIMON_OK || !g_types[i]) {
            fprintf(stderr, "fuzz_binrow: cannot parse type %s: %s\n", TYPES[i], e.msg);
            abort();
        }
    }
    done = 1;
}

static void fuzz_type_string(const uint8_t *data, size_t size) {
    pm_err e;
    pm_type *t = NULL, *t2 = NULL;
    pm_buf b1 = {0}, b2 = {0};
    char *s = fuzz_dup(data, size, 1);

    fuzz_err_init(&e);
    if (pm_type_parse_atomic(s, &t, &e) != PAIMON_OK) {
        fuzz_check_err(&e);
        goto out;
    }
    (void)pm_type_root_name(t->root);
    t2 = pm_type_clone(t);
    pm_type_free(t2);
    t2 = NULL;
    if (pm_type_to_sql(t, &b1) != PAIMON_OK || pm_buf_cstr(&b1) != PAIMON_OK) goto out;
#ifndef PM_FUZZ_NO_ROUNDTRIP
    fuzz_err_init(&e);
    if (pm_type_parse_atomic((const char *)b1.data, &t2, &e) != PAIMON_OK)
        FUZZ_FAIL("type SQL %s (from \"%s\") does not parse: %s", (const char *)b1.data, s, e.msg);
    if (pm_type_to_sql(t2, &b2) != PAIMON_OK) FUZZ_FAIL("second pm_type_to_sql failed");
    if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0)
        FUZZ_FAIL("type SQL not a fixed point: \"%.*s\" vs \"%.*s\"",
                  (int)b1.len, (const char *)b1.data, (int)b2.len, (const char *)b2.data);
#endif
out:
    pm_buf_free(&b1);
    pm_buf_free(&b2);
    pm_type_free(t);
    pm_type_free(t2);
    free(s);
}

static void render_all(pm_type *const *types, size_t n, const pm_datum *vals) {
    static const char *const keys[MAX_FIELDS] = {
        "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12",
        "k13", "k14", "k15", "k16", "k17", "k18", "k19", "k20", "k21", "k22", "k23", "k24",
        "k25", "k26", "k27", "k28", "k29", "k30", "k31", "k32", "k33", "k34", "k35", "k36",
        "k37", "k38", "k39", "k40", "k41", "k42", "k43", "k44", "k45", "k46", "k47", "k48",
        "k49", "k50", "k51", "k52", "k53", "k54", "k55", "k56", "k57", "k58", "k59", "k60",
        "k61", "k62", "k63"};
    pm_buf b = {0}, esc = {0}, unesc = {0};
    size_t i;
    int legacy;
    for (i = 0; i < n; i++) {
        for (legacy = 0; legacy <= 1; legacy++) {
            b.len = 0;
            if (pm_datum_to_string(types[i], &vals[i], legacy, &b) == PAIMON_OK && b.len) {
                fuzz_touch(b.data, b.len);
#ifndef PM_FUZZ_NO_ROUNDTRIP
                esc.len = unesc.len = 0;
                if (pm_escape_path_name((const char *)b.data, b.len, &esc) == PAIMON_OK &&
                    pm_unescape_path_name((const char *)esc.data, esc.len, &unesc) == PAIMON_OK &&
                    (unesc.len != b.len || memcmp(unesc.data, b.data, b.len) != 0))
                    FUZZ_FAIL("unescape(escape(s)) != s for \"%.*s\"", (int)b.len, (const char *)b.data);
#endif
            }
        }
    }
    for (legacy = 0; legacy <= 1; legacy++) {
        b.len = 0;
        if (pm_partition_path(keys, types, n, vals, "__DEFAULT_PARTITION__", legacy, &b) == PAIMON_OK)
            fuzz_touch(b.data, b.len);
    }
    pm_buf_free(&b);
    pm_buf_free(&esc);
    pm_buf_free(&unesc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pm_type *types[MAX_FIELDS];
    pm_datum vals[MAX_FIELDS], vals2[MAX_FIELDS];
    pm_buf enc1 = {0}, enc2 = {0};
    size_t n, i, rowlen;
    uint8_t *row;
    pm_err e;
    int force_arity;

    if (size < 1) return 0;
    if (data[0] & 0x80) {
        fuzz_type_string(data + 1, size - 1);
        return 0;
    }
    init_types();
    n = data[0] & 0x3f;
    force_arity = (data[0] & 0x40) != 0;
    if (size < 1 + n) return 0;
    for (i = 0; i < n; i++) types[i] = g_types[data[1 + i] % N_TYPES];
    rowlen = size - 1 - n;
    row = (uint8_t *)fuzz_dup(data + 1 + n, rowlen, 0);
    if (force_arity && rowlen >= 4) {
        row[0] = (uint8_t)(n >> 24); row[1] = (uint8_t)(n >> 16);
        row[2] = (uint8_t)(n >> 8); row[3] = (uint8_t)n;
    }
    (void)pm_binrow_arity(row, rowlen);
    memset(vals, 0, sizeof vals);
    fuzz_err_init(&e);
    if (pm_binrow_decode(row, rowlen, types, n, vals, &e) != PAIMON_OK) {
        fuzz_check_err(&e);
        goto out;
    }
    for (i = 0; i < n; i++)
        if (!vals[i].is_null &&
            (types[i]->root == PM_T_CHAR || types[i]->root == PM_T_VARCHAR ||
             types[i]->root == PM_T_BINARY || types[i]->root == PM_T_VARBINARY ||
             (types[i]->root == PM_T_DECIMAL && types[i]->precision > 18)))
            fuzz_touch(vals[i].v.bin.ptr, vals[i].v.bin.len);
    render_all(types, n, vals);

    fuzz_err_init(&e);
    if (pm_binrow_encode(types, n, vals, &enc1, &e) != PAIMON_OK) {
        fuzz_check_err(&e);
        goto out;     /* e.g. a decimal too large for its precision */
    }
#ifndef PM_FUZZ_NO_ROUNDTRIP
    memset(vals2, 0, sizeof vals2);
    fuzz_err_init(&e);
    if (pm_binrow_decode(enc1.data, enc1.len, types, n, vals2, &e) != PAIMON_OK)
        FUZZ_FAIL("row written by pm_binrow_encode does not decode: %s", e.msg);
    fuzz_err_init(&e);
    if (pm_binrow_encode(types, n, vals2, &enc2, &e) != PAIMON_OK)
        FUZZ_FAIL("re-encoding a canonical row failed: %s", e.msg);
    if (enc1.len != enc2.len || memcmp(enc1.data, enc2.data, enc1.len) != 0)
        FUZZ_FAIL("canonical BinaryRow bytes are not a fixed point (%zu vs %zu bytes)",
                  enc1.len, enc2.len);
#else
    (void)vals2; (void)enc2;
#endif
out:
    pm_buf_free(&enc1);
    pm_buf_free(&enc2);
    free(row);
    return 0;
}
