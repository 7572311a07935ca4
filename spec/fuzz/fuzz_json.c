/* libFuzzer harness: table metadata JSON (pm_meta.h).
 *
 * Every input is offered to the snapshot, schema and consumer parsers (seeds:
 * the fixtures' snapshot, tag and schema files). On success the snapshot and
 * schema are serialized again and the result must be a fixed point:
 * parse(to_json(x)) succeeds and serializes to the same bytes. The duration
 * and memory-size option parsers get the input as a C string. */
#include <stdint.h>
#include <stddef.h>

#include "pm_meta.h"
#include "fuzz_common.h"
#include "../c/json_canon.h"

/* pm_json reads every input as jansson (json_loadb, no flags) does: both
 * accept or both reject, and what they accept is the same document. */
static void fuzz_against_jansson(const char *json, size_t len) {
    json_error_t je;
    json_t *j = json_loadb(json, len, 0, &je);
    pm_json_doc *d = NULL;
    pm_json_error pe;
    int rc = pm_json_parse(json, len, &d, &pe);
    /* jansson's lexer drops a NUL byte right after a number or literal;
     * pm_json refuses it (spec/c/test_json.c) */
    if (j && rc && memchr(json, 0, len)) { json_decref(j); return; }
    if (!j != (rc != 0))
        FUZZ_FAIL("jansson %s (%s), pm_json %s (%s)", j ? "accepts" : "rejects", j ? "" : je.text,
                  rc ? "rejects" : "accepts", rc ? pe.text : "");
    if (j) {
        pm_buf a = {0}, b = {0};
        canon_jansson(&a, j);
        canon_ours(&b, pm_json_root(d));
        if (a.len != b.len || memcmp(a.data, b.data, a.len))
            FUZZ_FAIL("jansson and pm_json read different values:\n%.*s\n%.*s", (int)a.len, (char *)a.data, (int)b.len,
                      (char *)b.data);
        pm_buf_free(&a);
        pm_buf_free(&b);
    }
    json_decref(j);
    pm_json_doc_free(d);
}

static void fuzz_snapshot(const char *json, size_t len) {
    pm_err e;
    pm_snapshot *s = NULL, *s2 = NULL;
    pm_buf b1 = {0}, b2 = {0};

    fuzz_err_init(&e);
    if (pm_snapshot_parse(json, len, "snapshot-fuzz", &s, &e) != PAIMON_OK) {
        fuzz_check_err(&e);
        return;
    }
    if (!s) FUZZ_FAIL("pm_snapshot_parse returned OK without a snapshot");
    fuzz_touch(s->base_manifest_list, s->base_manifest_list ? strlen(s->base_manifest_list) : 0);
    fuzz_touch(s->commit_user, s->commit_user ? strlen(s->commit_user) : 0);
    fuzz_touch(s->commit_kind, s->commit_kind ? strlen(s->commit_kind) : 0);
    if (s->n_properties) fuzz_touch(s->properties, s->n_properties * sizeof *s->properties);
    if (s->n_log_offsets) fuzz_touch(s->log_offsets, s->n_log_offsets * sizeof *s->log_offsets);
    if (pm_snapshot_to_json(s, &b1) != PAIMON_OK) {
        /* serialization may legitimately fail only for lack of memory */
        goto out;
    }
#ifndef PM_FUZZ_NO_ROUNDTRIP
    fuzz_err_init(&e);
    if (pm_snapshot_parse((const char *)b1.data, b1.len, "snapshot-fuzz2", &s2, &e) != PAIMON_OK)
        FUZZ_FAIL("snapshot JSON written by pm_snapshot_to_json does not parse: %s\n%.*s",
                  e.msg, (int)b1.len, (const char *)b1.data);
    if (pm_snapshot_to_json(s2, &b2) != PAIMON_OK) FUZZ_FAIL("second pm_snapshot_to_json failed");
    if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0)
        FUZZ_FAIL("snapshot JSON is not a fixed point:\n--- first\n%.*s\n--- second\n%.*s",
                  (int)b1.len, (const char *)b1.data, (int)b2.len, (const char *)b2.data);
#endif
out:
    pm_buf_free(&b1);
    pm_buf_free(&b2);
    pm_snapshot_free(s);
    pm_snapshot_free(s2);
}

static void fuzz_schema(const char *json, size_t len) {
    pm_err e;
    pm_schema *s = NULL, *s2 = NULL;
    pm_buf b1 = {0}, b2 = {0};
    size_t i;

    fuzz_err_init(&e);
    if (pm_schema_parse(json, len, "schema-fuzz", &s, &e) != PAIMON_OK) {
        fuzz_check_err(&e);
        return;
    }
    if (!s) FUZZ_FAIL("pm_schema_parse returned OK without a schema");
    for (i = 0; i < s->n_fields; i++) {
        pm_buf t = {0};
        fuzz_touch(s->fields[i].name, s->fields[i].name ? strlen(s->fields[i].name) : 0);
        if (s->fields[i].type) (void)pm_type_to_sql(s->fields[i].type, &t);
        pm_buf_free(&t);
        if (s->fields[i].name) (void)pm_schema_field(s, s->fields[i].name);
    }
    for (i = 0; i < s->n_partition_keys; i++) (void)pm_schema_field(s, s->partition_keys[i]);
    (void)pm_schema_option(s, "bucket");
    (void)pm_schema_option_or_default(s, "bucket");
    (void)pm_schema_option_or_default(s, "partition.default-name");
    (void)pm_schema_option_or_default(s, "no.such.option");
    if (pm_schema_to_json(s, &b1) != PAIMON_OK) goto out;
#ifndef PM_FUZZ_NO_ROUNDTRIP
    fuzz_err_init(&e);
    if (pm_schema_parse((const char *)b1.data, b1.len, "schema-fuzz2", &s2, &e) != PAIMON_OK)
        FUZZ_FAIL("schema JSON written by pm_schema_to_json does not parse: %s\n%.*s",
                  e.msg, (int)b1.len, (const char *)b1.data);
    if (pm_schema_to_json(s2, &b2) != PAIMON_OK) FUZZ_FAIL("second pm_schema_to_json failed");
    if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0)
        FUZZ_FAIL("schema JSON is not a fixed point:\n--- first\n%.*s\n--- second\n%.*s",
                  (int)b1.len, (const char *)b1.data, (int)b2.len, (const char *)b2.data);
#endif
out:
    pm_buf_free(&b1);
    pm_buf_free(&b2);
    pm_schema_free(s);
    pm_schema_free(s2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    pm_err e;
    pm_consumer c;
    char *json = fuzz_dup(data, size, 0);     /* exactly `size` bytes, no NUL */
    char *cstr;
    int64_t v;

    fuzz_against_jansson(json, size);
    fuzz_snapshot(json, size);
    fuzz_schema(json, size);
    fuzz_err_init(&e);
    memset(&c, 0, sizeof c);
    if (pm_consumer_parse(json, size, "consumer-fuzz", &c, &e) != PAIMON_OK) fuzz_check_err(&e);
    free(json);

    if (size <= 256) {
        cstr = fuzz_dup(data, size, 1);
        fuzz_err_init(&e);
        if (pm_parse_duration_ms(cstr, &v, &e) != PAIMON_OK) fuzz_check_err(&e);
        fuzz_err_init(&e);
        if (pm_parse_memory_size(cstr, &v, &e) != PAIMON_OK) fuzz_check_err(&e);
        free(cstr);
    }
    return 0;
}
