/* libFuzzer harness: Avro object container reader (pm_avro.h).
 *
 * Input = a whole container file (seeds: every manifest-family file of the
 * fixtures). The harness opens it, iterates all records touching every
 * decoded byte, re-encodes each record with pm_avro_encode_value and checks
 * that the re-encoded stream is a fixed point: writing the records into a
 * fresh container (codec null) and reading that back yields the same number
 * of records with byte-identical encodings.
 *
 * Inputs not starting with the Avro magic are parsed as schema JSON
 * (pm_avro_schema_parse), which fuzzes the schema parser directly. */
#include <stdint.h>
#include <stddef.h>

#include "pm_avro.h"
#include "fuzz_common.h"

#define MAX_RECORDS 20000   /* bounds zero-width records (schema "null") */
#define MAX_DEPTH 64

static void touch_value(const pm_avro_value *v, int depth) {
    size_t i;
    if (!v || depth > MAX_DEPTH) return;
    fuzz_sink += (unsigned)v->type + (unsigned)v->branch;
    switch (v->type) {
    case PM_AVRO_BOOLEAN: fuzz_sink += (unsigned)v->u.boolean; break;
    case PM_AVRO_INT: case PM_AVRO_ENUM: fuzz_sink += (unsigned)v->u.i; break;
    case PM_AVRO_LONG: fuzz_sink += (unsigned)v->u.l; break;
    case PM_AVRO_FLOAT: fuzz_sink += (unsigned)(v->u.f == v->u.f); break;
    case PM_AVRO_DOUBLE: fuzz_sink += (unsigned)(v->u.d == v->u.d); break;
    case PM_AVRO_BYTES: case PM_AVRO_STRING: case PM_AVRO_FIXED:
        fuzz_touch(v->u.bytes.ptr, v->u.bytes.len);
        break;
    case PM_AVRO_RECORD: case PM_AVRO_ARRAY:
        for (i = 0; i < v->u.list.n; i++) touch_value(&v->u.list.items[i], depth + 1);
        break;
    case PM_AVRO_MAP:
        for (i = 0; i < v->u.map.n; i++) {
            touch_value(&v->u.map.keys[i], depth + 1);
            touch_value(&v->u.map.values[i], depth + 1);
        }
        break;
    default: break;
    }
}

static void fuzz_schema_json(const uint8_t *data, size_t size) {
    pm_err e;
    pm_avro_schema *s = NULL;
    char *json = fuzz_dup(data, size, 0);
    fuzz_err_init(&e);
    if (pm_avro_schema_parse(json, size, &s, &e) == PAIMON_OK && s) {
        const pm_avro_schema *u = pm_avro_unwrap_nullable(s);
        (void)pm_avro_field_index(s, "_FILE");
        (void)pm_avro_field_index(u, "_VERSION");
        if (u && u->type == PM_AVRO_RECORD && u->n_fields > 0)
            fuzz_touch(u->fields[0].name, strlen(u->fields[0].name));
    } else {
        fuzz_check_err(&e);
    }
    pm_avro_schema_free(s);
    free(json);
}

/* Read all records of a container; if `enc` is non-NULL, append each
 * record's encoding to it, and if `w` is non-NULL also write each record
 * into that writer. Returns the record count or -1 on a read error. */
static long read_all(const uint8_t *data, size_t size, pm_buf *enc, pm_buf *lens,
                     pm_avro_writer *w, int must_succeed) {
    pm_err e;
    pm_avro_reader *r = NULL;
    const pm_avro_schema *s;
    long n = 0;
    int rc;

    fuzz_err_init(&e);
    rc = pm_avro_reader_open(data, size, "fuzz.avro", &r, &e);
    if (rc != PAIMON_OK) {
        fuzz_check_err(&e);
        if (must_succeed) FUZZ_FAIL("re-encoded container does not open: %s", e.msg);
        return -1;
    }
    s = pm_avro_reader_schema(r);
    (void)pm_avro_reader_codec(r);
    {
        size_t ml = 0;
        const uint8_t *m = pm_avro_reader_meta(r, "avro.schema", &ml);
        fuzz_touch(m, ml);
        m = pm_avro_reader_meta(r, "avro.codec", &ml);
        fuzz_touch(m, ml);
    }
    for (;;) {
        const pm_avro_value *v = NULL;
        size_t before;
        if (n >= MAX_RECORDS) break;
        fuzz_err_init(&e);
        rc = pm_avro_reader_next(r, &v, &e);
        if (rc == PAIMON_DONE) break;
        if (rc != PAIMON_OK) {
            fuzz_check_err(&e);
            if (must_succeed) FUZZ_FAIL("re-encoded container fails at record %ld: %s", n, e.msg);
            break;
        }
        touch_value(v, 0);
        n++;
        if (!enc) continue;
        before = enc->len;
        fuzz_err_init(&e);
        if (pm_avro_encode_value(enc, s, v, &e) != PAIMON_OK) {
            fuzz_check_err(&e);
            /* a decoded value must always be encodable with its own schema */
            FUZZ_FAIL("pm_avro_encode_value failed on a decoded record: %s", e.msg);
        }
        {
            uint64_t l = (uint64_t)(enc->len - before);
            if (pm_buf_append(lens, &l, sizeof l) != PAIMON_OK) abort();
        }
        if (w) {
            pm_buf *db = pm_avro_writer_datum_buf(w);
            if (pm_buf_append(db, enc->data + before, enc->len - before) != PAIMON_OK) abort();
            fuzz_err_init(&e);
            if (pm_avro_writer_end_datum(w, &e) != PAIMON_OK)
                FUZZ_FAIL("pm_avro_writer_end_datum: %s", e.msg);
        }
    }
    pm_avro_reader_close(r);
    return n;
}

/* Records read to the end (-1 on an error), with `skip` as the field mask
 * of the top-level record (pm_avro_reader_skip_fields). */
static long count_records(const uint8_t *data, size_t size, uint64_t skip) {
    pm_err e;
    pm_avro_reader *r = NULL;
    const pm_avro_value *v;
    long n = 0;
    int rc;
    fuzz_err_init(&e);
    if (pm_avro_reader_open(data, size, "fuzz.avro", &r, &e) != PAIMON_OK) { fuzz_check_err(&e); return -1; }
    if (skip) {
        const pm_avro_schema *top = pm_avro_unwrap_nullable(pm_avro_reader_schema(r));
        if (top && top->type == PM_AVRO_RECORD) (void)pm_avro_reader_skip_fields(r, top, skip);
    }
    while (n < MAX_RECORDS) {
        fuzz_err_init(&e);
        rc = pm_avro_reader_next(r, &v, &e);
        if (rc == PAIMON_DONE) break;
        if (rc != PAIMON_OK) { fuzz_check_err(&e); n = -1; break; }
        touch_value(v, 0);
        n++;
    }
    pm_avro_reader_close(r);
    return n;
}

/* The compiled walks and decode against the generic ones
 * (pm_avro_reader_compile_walks): with every block refused by a filter
 * (mode 0: whole records walked), with every other field skipped (1) and
 * with records decoded whole (2), the same records and the same end,
 * message and all. */
static int refuse_all(void *ud, const uint8_t *d, size_t n) { (void)ud; (void)d; (void)n; return 0; }

static void walk_end(const uint8_t *data, size_t size, int compiled, int mode, long *n, int *rc, char *msg,
                     size_t cap) {
    pm_err e;
    pm_avro_reader *r = NULL;
    const pm_avro_value *v;
    *n = 0;
    msg[0] = '\0';
    fuzz_err_init(&e);
    *rc = pm_avro_reader_open(data, size, "fuzz.avro", &r, &e);
    if (*rc != PAIMON_OK) return;
    pm_avro_reader_compile_walks(r, compiled);
    if (mode == 1) {
        const pm_avro_schema *top = pm_avro_unwrap_nullable(pm_avro_reader_schema(r));
        if (top && top->type == PM_AVRO_RECORD) (void)pm_avro_reader_skip_fields(r, top, 0xAAAAAAAAAAAAAAAAull);
    } else if (mode == 0) {
        pm_avro_reader_block_filter(r, refuse_all, NULL);
    }
    while (*n < MAX_RECORDS && (*rc = pm_avro_reader_next(r, &v, &e)) == PAIMON_OK) (*n)++;
    if (*rc != PAIMON_OK && *rc != PAIMON_DONE) snprintf(msg, cap, "%s", e.msg);
    pm_avro_reader_close(r);
}

static void compare_walks(const uint8_t *data, size_t size) {
    static const char *const modes[] = {"blocks passed over", "projected", "decoded whole"};
    for (int mode = 0; mode < 3; mode++) {
        long n0, n1;
        int rc0, rc1;
        char m0[512], m1[512];
        walk_end(data, size, 0, mode, &n0, &rc0, m0, sizeof m0);
        walk_end(data, size, 1, mode, &n1, &rc1, m1, sizeof m1);
        if (n0 != n1 || rc0 != rc1 || strcmp(m0, m1))
            FUZZ_FAIL("compiled walk (%s) differs: generic %ld records rc %d \"%s\", compiled %ld rc %d \"%s\"",
                      modes[mode], n0, rc0, m0, n1, rc1, m1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pm_buf enc1 = {0}, lens1 = {0}, enc2 = {0}, lens2 = {0}, file = {0};
    pm_avro_writer *w = NULL;
    pm_avro_reader *r = NULL;
    pm_err e;
    long n1, n2;
    char *schema_json = NULL;
    size_t ml = 0;
    const uint8_t *m;

    if (size < 4 || memcmp(data, "Obj\x01", 4) != 0) {
        fuzz_schema_json(data, size);
        return 0;
    }
    /* skipping fields walks them with the same checks: whatever reads whole
     * reads with every other field skipped, record for record */
    compare_walks(data, size);
    n1 = count_records(data, size, 0);
    if (n1 >= 0 && n1 < MAX_RECORDS) {
        n2 = count_records(data, size, 0xAAAAAAAAAAAAAAAAull);
        if (n2 != n1) FUZZ_FAIL("projection: %ld records read whole, %ld with fields skipped", n1, n2);
    }
#ifdef PM_FUZZ_NO_ROUNDTRIP
    (void)w; (void)r; (void)m; (void)ml; (void)n2; (void)file; (void)schema_json;
    n1 = read_all(data, size, &enc1, &lens1, NULL, 0);
    (void)n1;
#else
    /* The writer gets the file's own schema text (avro.schema verbatim), so
     * the re-encoded file is decoded with the same schema. */
    fuzz_err_init(&e);
    if (pm_avro_reader_open(data, size, "fuzz.avro", &r, &e) != PAIMON_OK) {
        fuzz_check_err(&e);
        return 0;
    }
    m = pm_avro_reader_meta(r, "avro.schema", &ml);
    if (m) schema_json = fuzz_dup(m, ml, 1);
    pm_avro_reader_close(r);
    if (!schema_json || strlen(schema_json) != ml) {   /* embedded NUL: no round trip */
        read_all(data, size, &enc1, &lens1, NULL, 0);
        goto out;
    }
    fuzz_err_init(&e);
    if (pm_avro_writer_open(schema_json, "null", 0, &w, &e) != PAIMON_OK) {
        fuzz_check_err(&e);
        w = NULL;
        read_all(data, size, &enc1, &lens1, NULL, 0);
        goto out;
    }
    n1 = read_all(data, size, &enc1, &lens1, w, 0);
    if (n1 < 0) {
        pm_avro_writer_abort(w);
        goto out;
    }
    fuzz_err_init(&e);
    if (pm_avro_writer_finish(w, &file, &e) != PAIMON_OK)
        FUZZ_FAIL("pm_avro_writer_finish failed: %s", e.msg);
    n2 = read_all(file.data, file.len, &enc2, &lens2, NULL, 1);
    if (n2 != n1)
        FUZZ_FAIL("round trip: %ld records read, %ld after re-encoding", n1, n2);
    if (enc1.len != enc2.len || lens1.len != lens2.len ||
        (enc1.len && memcmp(enc1.data, enc2.data, enc1.len) != 0) ||
        (lens1.len && memcmp(lens1.data, lens2.data, lens1.len) != 0))
        FUZZ_FAIL("round trip: re-encoded records differ (%zu vs %zu bytes)", enc1.len, enc2.len);
out:
#endif
    pm_buf_free(&enc1);
    pm_buf_free(&lens1);
    pm_buf_free(&enc2);
    pm_buf_free(&lens2);
    pm_buf_free(&file);
    free(schema_json);
    return 0;
}
