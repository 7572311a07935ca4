/* Metadata JSON (snapshot, tag, schema, consumer), hint rules, snapshot
 * manager listing, option defaults, duration / memory-size parsing. */
#include "test.h"
#include "pm_meta.h"

#include <dirent.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---------------------------------------------------------- */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    size_t k;
    while (buf && (k = fread(buf + n, 1, cap - n, f)) > 0) {
        n += k;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

static void write_text(const char *dir, const char *name, const char *text) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) { perror(p); return; }
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

static char *make_tmpdir(void) { return tu_make_tmpdir("/tmp/pm_test_meta."); }

static char *jdir(const char *a, const char *b) { return pm_path_join(a, b); }

/* A fresh table root with snapshot files for the given ids (trivial content). */
static char *table_with_snapshots(const int64_t *ids, size_t n) {
    char *root = make_tmpdir();
    char *sd = jdir(root, "snapshot");
    mkdir(sd, 0777);
    for (size_t i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "snapshot-%lld", (long long)ids[i]);
        write_text(sd, name, "{}");
    }
    free(sd);
    return root;
}

static void set_hint(const char *root, const char *which, const char *text) {
    char *sd = jdir(root, "snapshot");
    mkdir(sd, 0777);
    write_text(sd, which, text);
    free(sd);
}

/* ---- fixture walk ----------------------------------------------------- */

typedef struct walk_stats {
    int snapshots, tags, schemas, failures;
} walk_stats;

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static void check_roundtrip_file(const char *path, const char *dirname, const char *name,
                                 walk_stats *ws) {
    int is_snap = !strcmp(dirname, "snapshot") && starts(name, "snapshot-");
    int is_tag = !strcmp(dirname, "tag") && starts(name, "tag-");
    int is_changelog = !strcmp(dirname, "changelog") && starts(name, "changelog-");
    int is_schema = !strcmp(dirname, "schema") && starts(name, "schema-");
    if (!is_snap && !is_tag && !is_schema && !is_changelog) return;
    size_t len;
    char *text = read_file(path, &len);
    CHECK(text != NULL);
    if (!text) return;
    pm_buf out = {0};
    pm_err e;
    pm_err_clear(&e);
    int rc;
    if (is_schema) {
        pm_schema *s = NULL;
        rc = pm_schema_parse(text, len, path, &s, &e);
        if (rc == PAIMON_OK) rc = pm_schema_to_json(s, &out);
        pm_schema_free(s);
        ws->schemas++;
    } else {
        pm_snapshot *s = NULL;
        rc = pm_snapshot_parse(text, len, path, &s, &e);
        if (rc == PAIMON_OK) rc = pm_snapshot_to_json(s, &out);
        pm_snapshot_free(s);
        if (is_tag) ws->tags++;
        else ws->snapshots++;
    }
    if (rc != PAIMON_OK) {
        fprintf(stderr, "    %s: rc=%d %s\n", path, rc, e.msg);
        ws->failures++;
    } else if (out.len != len || memcmp(out.data, text, len) != 0) {
        pm_buf_cstr(&out);
        fprintf(stderr, "    round trip differs for %s\n--- got ---\n%s\n--- want ---\n%s\n", path,
                (char *)out.data, text);
        ws->failures++;
    }
    pm_buf_free(&out);
    free(text);
}

static void walk(const char *dir, const char *dirname, walk_stats *ws) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) walk(p, de->d_name, ws);
        else if (S_ISREG(st.st_mode)) check_roundtrip_file(p, dirname, de->d_name, ws);
    }
    closedir(d);
}

TEST(fixture_roundtrip_byte_identical) {
    char root[1024];
    snprintf(root, sizeof root, "%s/paimon-java", fixtures_dir());
    walk_stats ws = {0, 0, 0, 0};
    walk(root, "", &ws);
    printf("#   round-tripped %d snapshots, %d tags, %d schemas\n", ws.snapshots, ws.tags, ws.schemas);
    CHECK(ws.snapshots >= 40);
    CHECK(ws.tags >= 2);
    CHECK(ws.schemas >= 17);
    CHECK_EQ_INT(ws.failures, 0);
}

/* ---- snapshot JSON ---------------------------------------------------- */

static const char *FULL_SNAPSHOT =
    "{\n"
    "  \"version\" : 3,\n"
    "  \"uuid\" : \"0d7c1111-2222-4333-8444-555566667777\",\n"
    "  \"id\" : 7,\n"
    "  \"schemaId\" : 2,\n"
    "  \"baseManifestList\" : \"manifest-list-a-0\",\n"
    "  \"baseManifestListSize\" : 884,\n"
    "  \"deltaManifestList\" : \"manifest-list-a-1\",\n"
    "  \"deltaManifestListSize\" : 1012,\n"
    "  \"changelogManifestList\" : \"manifest-list-a-2\",\n"
    "  \"changelogManifestListSize\" : 77,\n"
    "  \"indexManifest\" : \"index-manifest-b-0\",\n"
    "  \"commitUser\" : \"user \\\"q\\\" \\\\ \\n\\t\\r\\b\\f\\u0001\\u001F \xc3\xa9\",\n"
    "  \"writerVersion\" : \"java-2.1-SNAPSHOT-abc\",\n"
    "  \"commitIdentifier\" : 9223372036854775807,\n"
    "  \"commitKind\" : \"OVERWRITE\",\n"
    "  \"timeMillis\" : 1720000000000,\n"
    "  \"logOffsets\" : {\n"
    "    \"0\" : 5,\n"
    "    \"3\" : -1\n"
    "  },\n"
    "  \"totalRecordCount\" : 10,\n"
    "  \"deltaRecordCount\" : -2,\n"
    "  \"changelogRecordCount\" : 3,\n"
    "  \"watermark\" : -9223372036854775808,\n"
    "  \"statistics\" : \"stat-c-0\",\n"
    "  \"properties\" : {\n"
    "    \"k1\" : \"v1\",\n"
    "    \"a\" : \"\"\n"
    "  },\n"
    "  \"nextRowId\" : 42,\n"
    "  \"operation\" : \"DELETE\",\n"
    "  \"tagCreateTime\" : [ 2024, 1, 2, 3, 4, 5, 6000 ],\n"
    "  \"tagTimeRetained\" : 86400.000000000\n"
    "}";

TEST(snapshot_all_fields_roundtrip) {
    pm_snapshot *s = NULL;
    pm_err e;
    int rc = pm_snapshot_parse(FULL_SNAPSHOT, strlen(FULL_SNAPSHOT), "tag/tag-full", &s, &e);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (rc) { fprintf(stderr, "%s\n", e.msg); return; }
    CHECK_EQ_INT(s->version, 3);
    CHECK_EQ_INT(s->id, 7);
    CHECK_EQ_INT(s->schema_id, 2);
    CHECK(s->commit_identifier == INT64_MAX);
    CHECK(s->watermark.has && s->watermark.v == INT64_MIN);
    CHECK_EQ_STR(s->commit_kind, "OVERWRITE");
    CHECK_EQ_STR(s->commit_user, "user \"q\" \\ \n\t\r\b\f\x01\x1f \xc3\xa9");
    CHECK(s->has_log_offsets && s->n_log_offsets == 2);
    if (s->n_log_offsets == 2) {
        CHECK_EQ_INT(s->log_offsets[1].bucket, 3);
        CHECK_EQ_INT(s->log_offsets[1].offset, -1);
    }
    CHECK(s->has_properties && s->n_properties == 2);
    CHECK_EQ_STR(s->properties[0].key, "k1");
    CHECK(s->next_row_id.has && s->next_row_id.v == 42);
    CHECK_EQ_STR(s->tag_create_time, "[ 2024, 1, 2, 3, 4, 5, 6000 ]");
    CHECK_EQ_STR(s->tag_time_retained, "86400.000000000");
    CHECK(s->delta_record_count.has && s->delta_record_count.v == -2);
    pm_buf out = {0};
    CHECK_EQ_INT(pm_snapshot_to_json(s, &out), PAIMON_OK);
    pm_buf_cstr(&out);
    CHECK_EQ_STR((char *)out.data, FULL_SNAPSHOT);
    pm_buf_free(&out);
    pm_snapshot_free(s);
}

TEST(snapshot_int64_extremes) {
    const char *js = "{\"id\":1,\"schemaId\":0,\"baseManifestList\":\"b\",\"deltaManifestList\":\"d\","
                     "\"commitUser\":\"u\",\"commitIdentifier\":9223372036854775807,"
                     "\"commitKind\":\"APPEND\",\"timeMillis\":9223372036854775807,"
                     "\"watermark\":-9223372036854775808,\"totalRecordCount\":9223372036854775807}";
    pm_snapshot *s = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_snapshot_parse(js, strlen(js), "snapshot-1", &s, &e), PAIMON_OK);
    if (!s) return;
    CHECK(s->commit_identifier == INT64_MAX);
    CHECK(s->time_millis == INT64_MAX);   /* a negative one is refused (snapshot_values_java_refuses) */
    CHECK(s->watermark.has && s->watermark.v == INT64_MIN);
    CHECK(s->total_record_count.v == INT64_MAX);
    CHECK_EQ_INT(s->version, 1);   /* missing version -> 1 */
    pm_buf out = {0};
    pm_snapshot_to_json(s, &out);
    pm_buf_cstr(&out);
    CHECK(strstr((char *)out.data, "\"commitIdentifier\" : 9223372036854775807,\n") != NULL);
    CHECK(strstr((char *)out.data, "\"totalRecordCount\" : 9223372036854775807,\n") != NULL);
    CHECK(strstr((char *)out.data, "\"watermark\" : -9223372036854775808\n}") != NULL);
    CHECK(strstr((char *)out.data, "\"timeMillis\" : 9223372036854775807,\n") != NULL);
    /* the output re-parses to the same values */
    pm_snapshot *s2 = NULL;
    CHECK_EQ_INT(pm_snapshot_parse((char *)out.data, out.len, "again", &s2, &e), PAIMON_OK);
    if (s2) {
        CHECK(s2->commit_identifier == INT64_MAX);
        CHECK(s2->watermark.v == INT64_MIN);
    }
    pm_snapshot_free(s2);
    pm_buf_free(&out);
    pm_snapshot_free(s);
    /* beyond int64 -> corrupt */
    const char *big = "{\"id\":99999999999999999999}";
    CHECK_EQ_INT(pm_snapshot_parse(big, strlen(big), "snapshot-9", &s, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "snapshot-9") != NULL);
}

TEST(snapshot_nulls_and_unknown_keys) {
    const char *js = "{\"version\":3,\"id\":4,\"schemaId\":0,\"baseManifestList\":\"b\","
                     "\"deltaManifestList\":\"d\",\"changelogManifestList\":null,"
                     "\"indexManifest\":null,\"commitUser\":\"u\",\"commitIdentifier\":1,"
                     "\"commitKind\":\"COMPACT\",\"timeMillis\":5,\"watermark\":null,"
                     "\"someFutureField\":{\"x\":[1,2]},\"properties\":null,\"totalRecordCount\":0}";
    pm_snapshot *s = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_snapshot_parse(js, strlen(js), "snapshot-4", &s, &e), PAIMON_OK);
    if (!s) return;
    CHECK(s->changelog_manifest_list == NULL);
    CHECK(s->index_manifest == NULL);
    CHECK(!s->watermark.has);
    CHECK(!s->has_properties);
    CHECK(!s->has_log_offsets);
    pm_buf out = {0};
    pm_snapshot_to_json(s, &out);
    pm_buf_cstr(&out);
    const char *want =
        "{\n  \"version\" : 3,\n  \"id\" : 4,\n  \"schemaId\" : 0,\n  \"baseManifestList\" : \"b\",\n"
        "  \"deltaManifestList\" : \"d\",\n  \"changelogManifestList\" : null,\n"
        "  \"indexManifest\" : null,\n  \"commitUser\" : \"u\",\n  \"commitIdentifier\" : 1,\n"
        "  \"commitKind\" : \"COMPACT\",\n  \"timeMillis\" : 5,\n  \"totalRecordCount\" : 0,\n"
        "  \"watermark\" : null,\n  \"properties\" : null\n}";
    CHECK_EQ_STR((char *)out.data, want);
    pm_buf_free(&out);
    /* a snapshot built in C (explicit_nulls = 0) omits absent values */
    s->explicit_nulls = 0;
    s->has_log_offsets = 1;
    pm_snapshot_to_json(s, &out);
    pm_buf_cstr(&out);
    CHECK(strstr((char *)out.data, "null") == NULL);
    CHECK(strstr((char *)out.data, "\"logOffsets\" : { },\n") != NULL);
    pm_buf_free(&out);
    pm_snapshot_free(s);
}

static void expect_corrupt(const char *js, size_t len, const char *fname, const char *needle) {
    pm_snapshot *s = (pm_snapshot *)1;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_snapshot_parse(js, len, fname, &s, &e);
    CHECK_EQ_INT(rc, PAIMON_CORRUPT);
    CHECK(s == NULL);
    CHECK(strstr(e.msg, fname) != NULL);
    if (needle && !strstr(e.msg, needle)) {
        fprintf(stderr, "    message '%s' lacks '%s'\n", e.msg, needle);
        CHECK(0);
    }
    if (rc == PAIMON_OK) pm_snapshot_free(s);
}

TEST(snapshot_bad_input) {
    const char *ok = "{\"id\":3,\"schemaId\":0,\"baseManifestList\":\"b\",\"deltaManifestList\":\"d\","
                     "\"commitUser\":\"u\",\"commitIdentifier\":1,\"timeMillis\":5}";
    expect_corrupt(ok, strlen(ok), "snapshot/snapshot-3", "missing required field 'commitKind'");
    const char *bad = "{\"id\":3, \"schemaId\":0,,}";
    expect_corrupt(bad, strlen(bad), "snapshot/snapshot-3", "line 1");
    expect_corrupt("", 0, "snapshot/snapshot-4", NULL);
    expect_corrupt("[1,2]", 5, "snapshot/snapshot-5", NULL);
    expect_corrupt(FULL_SNAPSHOT, strlen(FULL_SNAPSHOT) / 2, "snapshot/snapshot-6", NULL);
    const char *wrong = "{\"id\":\"3\",\"schemaId\":0,\"baseManifestList\":\"b\",\"deltaManifestList\":\"d\","
                        "\"commitUser\":\"u\",\"commitIdentifier\":1,\"commitKind\":\"APPEND\",\"timeMillis\":5}";
    expect_corrupt(wrong, strlen(wrong), "snapshot/snapshot-7", "'id'");
    const char *wrong2 = "{\"id\":3,\"schemaId\":0,\"baseManifestList\":\"b\",\"deltaManifestList\":\"d\","
                         "\"commitUser\":\"u\",\"commitIdentifier\":1,\"commitKind\":\"APPEND\",\"timeMillis\":5,"
                         "\"watermark\":\"x\"}";
    expect_corrupt(wrong2, strlen(wrong2), "snapshot/snapshot-8", "'watermark'");
    const char *wrong3 = "{\"id\":3,\"schemaId\":0,\"baseManifestList\":7,\"deltaManifestList\":\"d\","
                         "\"commitUser\":\"u\",\"commitIdentifier\":1,\"commitKind\":\"APPEND\",\"timeMillis\":5}";
    expect_corrupt(wrong3, strlen(wrong3), "snapshot/snapshot-9", "'baseManifestList'");
    const char *nullreq = "{\"id\":3,\"schemaId\":0,\"baseManifestList\":\"b\",\"deltaManifestList\":\"d\","
                          "\"commitUser\":null,\"commitIdentifier\":1,\"commitKind\":\"APPEND\",\"timeMillis\":5}";
    expect_corrupt(nullreq, strlen(nullreq), "snapshot/snapshot-10", "'commitUser'");
    const char *props = "{\"id\":3,\"schemaId\":0,\"baseManifestList\":\"b\",\"deltaManifestList\":\"d\","
                        "\"commitUser\":\"u\",\"commitIdentifier\":1,\"commitKind\":\"APPEND\",\"timeMillis\":5,"
                        "\"properties\":{\"a\":1}}";
    expect_corrupt(props, strlen(props), "snapshot/snapshot-11", "'properties'");
    const char *real = "{\"id\":3.5,\"schemaId\":0}";
    expect_corrupt(real, strlen(real), "snapshot/snapshot-12", "'id'");
}

/* A snapshot with `extra` spliced in before the closing brace. */
static char *snapshot_with(const char *kind, const char *extra) {
    pm_buf b = {0};
    pm_buf_printf(&b, "{\"id\":3,\"schemaId\":0,\"baseManifestList\":\"b\",\"deltaManifestList\":\"d\","
                      "\"commitUser\":\"u\",\"commitIdentifier\":1,\"commitKind\":\"%s\",\"timeMillis\":5%s}",
                  kind, extra);
    pm_buf_cstr(&b);
    return (char *)b.data;
}

/* Values Java refuses or never writes: each names the file and the field. */
TEST(snapshot_values_java_refuses) {
    char *js = snapshot_with("FOO", "");
    expect_corrupt(js, strlen(js), "snapshot/snapshot-3", "field 'commitKind' is 'FOO'");
    free(js);
    js = snapshot_with("append", "");   /* Java's enum is case-sensitive */
    expect_corrupt(js, strlen(js), "snapshot/snapshot-3", "'commitKind'");
    free(js);
    js = snapshot_with("APPEND", ",\"totalRecordCount\":-1");
    expect_corrupt(js, strlen(js), "snapshot/snapshot-3", "field 'totalRecordCount' is negative");
    free(js);
    js = snapshot_with("APPEND", ",\"changelogRecordCount\":-7");
    expect_corrupt(js, strlen(js), "snapshot/snapshot-3", "field 'changelogRecordCount' is negative");
    free(js);
    js = snapshot_with("APPEND", ",\"version\":0");
    expect_corrupt(js, strlen(js), "snapshot/snapshot-3", "field 'version' is 0");
    free(js);
    {   /* no clock gives a time before 1970; Java writes System.currentTimeMillis() */
        static const char neg[] = "{\"id\":3,\"schemaId\":0,\"baseManifestList\":\"b\",\"deltaManifestList\":\"d\","
                                  "\"commitUser\":\"u\",\"commitIdentifier\":1,\"commitKind\":\"APPEND\",\"timeMillis\":-1}";
        expect_corrupt(neg, strlen(neg), "snapshot/snapshot-3", "snapshot/snapshot-3: field 'timeMillis' is negative (-1)");
    }
    js = snapshot_with("APPEND", ",\"version\":0");
    expect_corrupt(js, strlen(js), "snapshot/snapshot-3", "field 'version' is 0");
    free(js);
    /* a version newer than Java's CURRENT_VERSION: unsupported, not corrupt */
    js = snapshot_with("APPEND", ",\"version\":4");
    pm_snapshot *s = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_snapshot_parse(js, strlen(js), "snapshot/snapshot-3", &s, &e), PAIMON_UNSUPPORTED);
    CHECK(s == NULL);
    CHECK(strstr(e.msg, "snapshot/snapshot-3: field 'version' is 4") != NULL);
    free(js);
    /* what Java writes is accepted: every kind, versions 1 to 3, a negative
     * delta (an OVERWRITE removing rows) */
    static const char *kinds[] = {"APPEND", "COMPACT", "OVERWRITE", "ANALYZE"};
    for (int i = 0; i < 4; i++) {
        char extra[80];
        snprintf(extra, sizeof extra, ",\"version\":%d,\"deltaRecordCount\":-5,\"totalRecordCount\":0", 1 + i % 3);
        js = snapshot_with(kinds[i], extra);
        CHECK_EQ_INT(pm_snapshot_parse(js, strlen(js), "snapshot/snapshot-3", &s, &e), PAIMON_OK);
        if (s) {
            CHECK_EQ_STR(s->commit_kind, kinds[i]);
            CHECK_EQ_INT(s->delta_record_count.v, -5);
        }
        pm_snapshot_free(s);
        free(js);
    }
}

TEST(snapshot_read_from_files) {
    char *root = make_tmpdir();
    char *sd = jdir(root, "snapshot");
    mkdir(sd, 0777);
    char *schd = jdir(root, "schema");
    mkdir(schd, 0777);
    write_text(schd, "schema-2", "{}");   /* FULL_SNAPSHOT's schemaId: only its existence is checked */
    write_text(sd, "snapshot-7", FULL_SNAPSHOT);
    write_text(sd, "snapshot-2", "{\"id\": 2,");
    write_text(sd, "snapshot-3", "");
    pm_fileio *io = pm_fileio_local();
    pm_snapshot *s = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_snapshot_read(io, root, 7, &s, &e), PAIMON_OK);
    if (s) CHECK_EQ_INT(s->id, 7);
    pm_snapshot_free(s);
    /* the same file under another id contradicts itself (issue 12: a
     * snapshot-1 with id -5, a snapshot-5 with id 17) */
    write_text(sd, "snapshot-1", FULL_SNAPSHOT);
    s = (pm_snapshot *)1;
    CHECK_EQ_INT(pm_snapshot_read(io, root, 1, &s, &e), PAIMON_CORRUPT);
    CHECK(s == NULL);
    CHECK(strstr(e.msg, "snapshot/snapshot-1: field 'id' is 7 but the file name says 1") != NULL);
    char *cd = jdir(root, "changelog");
    mkdir(cd, 0777);
    write_text(cd, "changelog-6", FULL_SNAPSHOT);
    CHECK_EQ_INT(pm_changelog_read(io, root, 6, &s, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "changelog/changelog-6: field 'id' is 7") != NULL);
    write_text(cd, "changelog-7", FULL_SNAPSHOT);
    CHECK_EQ_INT(pm_changelog_read(io, root, 7, &s, &e), PAIMON_OK);
    pm_snapshot_free(s);
    /* a schemaId naming a schema file that does not exist: snapshot,
     * changelog and tag alike */
    char *td = jdir(root, "tag");
    mkdir(td, 0777);
    write_text(td, "tag-t", FULL_SNAPSHOT);
    CHECK_EQ_INT(pm_tag_read(io, root, "t", &s, &e), PAIMON_OK);
    pm_snapshot_free(s);
    char *sp = jdir(schd, "schema-2");
    CHECK(unlink(sp) == 0);
    CHECK_EQ_INT(pm_snapshot_read(io, root, 7, &s, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "snapshot/snapshot-7: field 'schemaId' names schema 2, which does not exist") != NULL);
    CHECK_EQ_INT(pm_changelog_read(io, root, 7, &s, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "changelog/changelog-7: field 'schemaId'") != NULL);
    s = (pm_snapshot *)1;
    CHECK_EQ_INT(pm_tag_read(io, root, "t", &s, &e), PAIMON_CORRUPT);
    CHECK(s == NULL);
    CHECK(strstr(e.msg, "tag/tag-t: field 'schemaId' names schema 2") != NULL);
    free(sp);
    free(cd);
    free(td);
    free(schd);
    CHECK_EQ_INT(pm_snapshot_read(io, root, 2, &s, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "snapshot/snapshot-2") != NULL);
    CHECK_EQ_INT(pm_snapshot_read(io, root, 3, &s, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "snapshot/snapshot-3") != NULL);
    CHECK_EQ_INT(pm_snapshot_read(io, root, 5, &s, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "snapshot 5 not found") != NULL);
    CHECK(strstr(e.msg, "snapshot/snapshot-5") != NULL);
    pm_fileio_destroy(io);
    free(sd);
    tu_rm_rf(root);
    free(root);
}

/* ---- schema JSON ------------------------------------------------------ */

static const char *SCHEMA_COMPOSITE =
    "{\n"
    "  \"version\" : 3,\n"
    "  \"id\" : 4,\n"
    "  \"fields\" : [ {\n"
    "    \"id\" : 0,\n"
    "    \"name\" : \"k\",\n"
    "    \"type\" : \"BIGINT NOT NULL\",\n"
    "    \"description\" : \"the \\\"key\\\"\"\n"
    "  }, {\n"
    "    \"id\" : 1,\n"
    "    \"name\" : \"v\",\n"
    "    \"type\" : {\n"
    "      \"type\" : \"VECTOR NOT NULL\",\n"
    "      \"element\" : \"FLOAT\",\n"
    "      \"length\" : 3\n"
    "    },\n"
    "    \"defaultValue\" : \"1\"\n"
    "  }, {\n"
    "    \"id\" : 2,\n"
    "    \"name\" : \"m\",\n"
    "    \"type\" : {\n"
    "      \"type\" : \"MULTISET\",\n"
    "      \"element\" : {\n"
    "        \"type\" : \"ARRAY NOT NULL\",\n"
    "        \"element\" : \"STRING\"\n"
    "      }\n"
    "    }\n"
    "  }, {\n"
    "    \"id\" : 3,\n"
    "    \"name\" : \"r\",\n"
    "    \"type\" : {\n"
    "      \"type\" : \"ROW NOT NULL\",\n"
    "      \"fields\" : [ {\n"
    "        \"id\" : 4,\n"
    "        \"name\" : \"x\",\n"
    "        \"type\" : \"DECIMAL(10, 2)\"\n"
    "      }, {\n"
    "        \"id\" : 5,\n"
    "        \"name\" : \"empty\",\n"
    "        \"type\" : {\n"
    "          \"type\" : \"ROW\",\n"
    "          \"fields\" : [ ]\n"
    "        }\n"
    "      } ]\n"
    "    }\n"
    "  } ],\n"
    "  \"highestFieldId\" : 5,\n"
    "  \"partitionKeys\" : [ \"k\", \"m\" ],\n"
    "  \"primaryKeys\" : [ \"k\" ],\n"
    "  \"options\" : { },\n"
    "  \"comment\" : \"\",\n"
    "  \"timeMillis\" : 1720496663041\n"
    "}";

TEST(schema_composite_roundtrip) {
    pm_schema *s = NULL;
    pm_err e;
    int rc = pm_schema_parse(SCHEMA_COMPOSITE, strlen(SCHEMA_COMPOSITE), "schema-4", &s, &e);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (rc) { fprintf(stderr, "    %s\n", e.msg); return; }
    CHECK_EQ_INT(s->n_fields, 4);
    CHECK_EQ_INT(s->fields[0].type->root, PM_T_BIGINT);
    CHECK_EQ_INT(s->fields[0].type->nullable, 0);
    CHECK_EQ_STR(s->fields[0].description, "the \"key\"");
    CHECK_EQ_INT(s->fields[1].type->root, PM_T_VECTOR);
    CHECK_EQ_INT(s->fields[1].type->length, 3);
    CHECK_EQ_INT(s->fields[1].type->nullable, 0);
    CHECK_EQ_STR(s->fields[1].default_value, "1");
    CHECK_EQ_INT(s->fields[2].type->root, PM_T_MULTISET);
    CHECK_EQ_INT(s->fields[2].type->element->root, PM_T_ARRAY);
    CHECK_EQ_INT(s->fields[3].type->root, PM_T_ROW);
    CHECK_EQ_INT(s->fields[3].type->n_fields, 2);
    CHECK_EQ_INT(s->fields[3].type->fields[0].id, 4);
    CHECK_EQ_INT(s->n_options, 0);
    CHECK_EQ_STR(s->comment, "");
    CHECK(pm_schema_field(s, "r") == &s->fields[3]);
    CHECK(pm_schema_field(s, "nope") == NULL);
    CHECK_EQ_INT(s->n_partition_keys, 2);
    CHECK_EQ_STR(s->primary_keys[0], "k");
    pm_buf out = {0};
    CHECK_EQ_INT(pm_schema_to_json(s, &out), PAIMON_OK);
    pm_buf_cstr(&out);
    CHECK_EQ_STR((char *)out.data, SCHEMA_COMPOSITE);
    pm_buf_free(&out);
    /* target-file-size default depends on the primary key */
    CHECK_EQ_STR(pm_schema_option_or_default(s, "target-file-size"), "128 mb");
    pm_schema_free(s);
}

TEST(schema_compat_defaults) {
    const char *v1 = "{\"id\":0,\"fields\":[],\"highestFieldId\":-1,\"partitionKeys\":[],"
                     "\"primaryKeys\":[],\"options\":{\"a\":\"b\"}}";
    pm_schema *s = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_schema_parse(v1, strlen(v1), "schema-0", &s, &e), PAIMON_OK);
    if (s) {
        CHECK_EQ_INT(s->version, 1);
        CHECK_EQ_INT(s->n_options, 3);
        CHECK_EQ_STR(s->options[0].key, "a");
        CHECK_EQ_STR(s->options[1].key, "bucket");
        CHECK_EQ_STR(s->options[1].value, "1");
        CHECK_EQ_STR(s->options[2].key, "file.format");
        CHECK_EQ_STR(s->options[2].value, "orc");
        CHECK_EQ_INT(s->time_millis, 0);
        CHECK(s->comment == NULL);
        CHECK_EQ_STR(pm_schema_option_or_default(s, "bucket"), "1");
    }
    pm_schema_free(s);
    const char *v2 = "{\"version\":2,\"id\":1,\"fields\":[],\"highestFieldId\":-1,\"partitionKeys\":[],"
                     "\"primaryKeys\":[],\"options\":{\"bucket\":\"4\"},\"timeMillis\":7}";
    CHECK_EQ_INT(pm_schema_parse(v2, strlen(v2), "schema-1", &s, &e), PAIMON_OK);
    if (s) {
        CHECK_EQ_INT(s->n_options, 2);
        CHECK_EQ_STR(pm_schema_option(s, "bucket"), "4");
        CHECK_EQ_STR(pm_schema_option(s, "file.format"), "orc");
    }
    pm_schema_free(s);
    const char *v3 = "{\"version\":3,\"id\":1,\"fields\":[],\"highestFieldId\":-1,\"partitionKeys\":[],"
                     "\"primaryKeys\":[],\"options\":{}}";
    CHECK_EQ_INT(pm_schema_parse(v3, strlen(v3), "schema-1", &s, &e), PAIMON_OK);
    if (s) {
        CHECK_EQ_INT(s->n_options, 0);
        CHECK(pm_schema_option(s, "bucket") == NULL);
        CHECK_EQ_STR(pm_schema_option_or_default(s, "bucket"), "-1");
        CHECK_EQ_STR(pm_schema_option_or_default(s, "file.format"), "parquet");
        CHECK_EQ_STR(pm_schema_option_or_default(s, "target-file-size"), "256 mb");
        pm_buf out = {0};
        pm_schema_to_json(s, &out);
        pm_buf_cstr(&out);
        CHECK_EQ_STR((char *)out.data,
                     "{\n  \"version\" : 3,\n  \"id\" : 1,\n  \"fields\" : [ ],\n"
                     "  \"highestFieldId\" : -1,\n  \"partitionKeys\" : [ ],\n"
                     "  \"primaryKeys\" : [ ],\n  \"options\" : { },\n  \"timeMillis\" : 0\n}");
        pm_buf_free(&out);
    }
    pm_schema_free(s);
}

static void expect_schema_corrupt(const char *js, const char *fname, const char *needle) {
    pm_schema *s = NULL;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_schema_parse(js, strlen(js), fname, &s, &e);
    CHECK(rc != PAIMON_OK);
    CHECK(s == NULL);
    CHECK(strstr(e.msg, fname) != NULL);
    if (needle && !strstr(e.msg, needle)) {
        fprintf(stderr, "    message '%s' lacks '%s'\n", e.msg, needle);
        CHECK(0);
    }
}

TEST(schema_bad_input) {
    expect_schema_corrupt("{", "schema/schema-1", "line");
    expect_schema_corrupt("", "schema/schema-2", NULL);
    expect_schema_corrupt("{\"id\":0,\"fields\":[],\"partitionKeys\":[],\"primaryKeys\":[],\"options\":{}}",
                          "schema/schema-3", "'highestFieldId'");
    expect_schema_corrupt("{\"id\":0,\"fields\":[{\"id\":0,\"name\":\"a\",\"type\":{\"type\":\"FOO\"}}],"
                          "\"highestFieldId\":0,\"partitionKeys\":[],\"primaryKeys\":[],\"options\":{}}",
                          "schema/schema-4", "FOO");
    expect_schema_corrupt("{\"id\":0,\"fields\":[{\"id\":0,\"name\":\"a\",\"type\":{\"type\":\"MAP\",\"key\":\"INT\"}}],"
                          "\"highestFieldId\":0,\"partitionKeys\":[],\"primaryKeys\":[],\"options\":{}}",
                          "schema/schema-5", "MAP");
    expect_schema_corrupt("{\"id\":0,\"fields\":[{\"id\":0,\"name\":\"a\",\"type\":\"NOSUCHTYPE\"}],"
                          "\"highestFieldId\":0,\"partitionKeys\":[],\"primaryKeys\":[],\"options\":{}}",
                          "schema/schema-6", "'a'");
    expect_schema_corrupt("{\"id\":0,\"fields\":[],\"highestFieldId\":0,\"partitionKeys\":[1],"
                          "\"primaryKeys\":[],\"options\":{}}",
                          "schema/schema-7", "'partitionKeys'");
    expect_schema_corrupt("{\"id\":0,\"fields\":[],\"highestFieldId\":0,\"partitionKeys\":[],"
                          "\"primaryKeys\":[],\"options\":{\"a\":[1]}}",
                          "schema/schema-8", "'a'");
    /* duplicate field names (Java's RowType refuses them), at the top and
     * inside a ROW; names differing only in case are distinct, as in Java */
    expect_schema_corrupt("{\"id\":0,\"fields\":[{\"id\":0,\"name\":\"a\",\"type\":\"INT\"},"
                          "{\"id\":1,\"name\":\"a\",\"type\":\"STRING\"}],"
                          "\"highestFieldId\":1,\"partitionKeys\":[],\"primaryKeys\":[],\"options\":{}}",
                          "schema/schema-9", "field 'fields' names 'a' twice");
    expect_schema_corrupt("{\"id\":0,\"fields\":[{\"id\":0,\"name\":\"r\",\"type\":{\"type\":\"ROW\",\"fields\":["
                          "{\"id\":1,\"name\":\"x\",\"type\":\"INT\"},{\"id\":2,\"name\":\"x\",\"type\":\"INT\"}]}}],"
                          "\"highestFieldId\":2,\"partitionKeys\":[],\"primaryKeys\":[],\"options\":{}}",
                          "schema/schema-10", "'x' twice");
    const char *cased = "{\"id\":0,\"fields\":[{\"id\":0,\"name\":\"a\",\"type\":\"INT\"},"
                        "{\"id\":1,\"name\":\"A\",\"type\":\"INT\"}],"
                        "\"highestFieldId\":1,\"partitionKeys\":[],\"primaryKeys\":[],\"options\":{}}";
    pm_schema *s = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_schema_parse(cased, strlen(cased), "schema/schema-11", &s, &e), PAIMON_OK);
    if (s) CHECK_EQ_INT(s->n_fields, 2);
    pm_schema_free(s);
}

TEST(schema_read_and_list_fixture) {
    char root[1024];
    snprintf(root, sizeof root,
             "%s/paimon-java/cpp-parquet-append_table_with_append_pt_branch/"
             "append_table_with_append_pt_branch.db/append_table_with_append_pt_branch",
             fixtures_dir());
    pm_fileio *io = pm_fileio_local();
    int64_t *ids = NULL;
    size_t n = 0;
    pm_err e;
    CHECK_EQ_INT(pm_schema_list_ids(io, root, &ids, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 3);
    if (n == 3) CHECK(ids[0] == 0 && ids[1] == 1 && ids[2] == 2);
    free(ids);
    pm_schema *s = NULL;
    CHECK_EQ_INT(pm_schema_read(io, root, 1, &s, &e), PAIMON_OK);
    if (s) {
        CHECK_EQ_STR(pm_schema_option(s, "scan.fallback-branch"), "test");
        CHECK_EQ_INT(s->n_partition_keys, 1);
    }
    pm_schema_free(s);
    CHECK_EQ_INT(pm_schema_read(io, root, 9, &s, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "schema-9") != NULL);
    char **names = NULL;
    CHECK_EQ_INT(pm_branch_list(io, root, &names, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 1);
    if (n == 1) CHECK_EQ_STR(names[0], "test");
    pm_strv_free(names, n);
    char br[1200];
    snprintf(br, sizeof br, "%s/branch/branch-test", root);
    int64_t id = 0;
    CHECK_EQ_INT(pm_snapshot_latest_id(io, br, &id, &e), PAIMON_OK);
    CHECK_EQ_INT(id, 2);
    CHECK_EQ_INT(pm_schema_list_ids(io, br, &ids, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 2);
    free(ids);
    /* a table without tags / consumers */
    CHECK_EQ_INT(pm_tag_list(io, root, &names, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(pm_consumer_list(io, root, &names, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 0);
    pm_fileio_destroy(io);
}

TEST(tags_and_branch_fixture) {
    char root[1024];
    snprintf(root, sizeof root,
             "%s/paimon-java/cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/"
             "pk_btree_partitioned_e2e",
             fixtures_dir());
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char **names = NULL;
    size_t n = 0;
    CHECK_EQ_INT(pm_tag_list(io, root, &names, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 1);
    if (n == 1) CHECK_EQ_STR(names[0], "fallback-base");
    pm_strv_free(names, n);
    pm_snapshot *t = NULL;
    CHECK_EQ_INT(pm_tag_read(io, root, "fallback-base", &t, &e), PAIMON_OK);
    if (t) {
        CHECK_EQ_INT(t->id, 2);
        CHECK_EQ_STR(t->commit_kind, "COMPACT");
        CHECK(t->uuid != NULL);
    }
    pm_snapshot_free(t);
    CHECK_EQ_INT(pm_tag_read(io, root, "nope", &t, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "tag-nope") != NULL);
    CHECK_EQ_INT(pm_tag_read(io, root, "../x", &t, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(pm_branch_list(io, root, &names, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 1);
    if (n == 1) CHECK_EQ_STR(names[0], "fallback");
    pm_strv_free(names, n);
    /* the branch has only snapshot-2 and no hint files */
    char br[1200];
    snprintf(br, sizeof br, "%s/branch/branch-fallback", root);
    int64_t id = 0;
    CHECK_EQ_INT(pm_snapshot_latest_id(io, br, &id, &e), PAIMON_OK);
    CHECK_EQ_INT(id, 2);
    CHECK_EQ_INT(pm_snapshot_earliest_id(io, br, &id, &e), PAIMON_OK);
    CHECK_EQ_INT(id, 2);
    CHECK_EQ_INT(pm_tag_list(io, br, &names, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 1);
    pm_strv_free(names, n);
    /* main branch hints */
    CHECK_EQ_INT(pm_snapshot_latest_id(io, root, &id, &e), PAIMON_OK);
    CHECK_EQ_INT(id, 5);
    CHECK_EQ_INT(pm_snapshot_earliest_id(io, root, &id, &e), PAIMON_OK);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(pm_hint_read(io, root, "LATEST", &id, &e), PAIMON_OK);
    CHECK_EQ_INT(id, 5);
    int64_t *ids = NULL;
    CHECK_EQ_INT(pm_snapshot_list_ids(io, root, &ids, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 5);
    if (n == 5) CHECK(ids[0] == 1 && ids[4] == 5);
    free(ids);
    pm_fileio_destroy(io);
}

/* ---- consumers -------------------------------------------------------- */

TEST(consumers) {
    char *root = make_tmpdir();
    char *cd = jdir(root, "consumer");
    mkdir(cd, 0777);
    write_text(cd, "consumer-b", "{\n  \"nextSnapshot\" : 12\n}");
    write_text(cd, "consumer-a", "{\"nextSnapshot\": 9223372036854775807, \"other\": 1}");
    write_text(cd, "consumer-bad", "{\"next\": 3}");
    write_text(cd, "consumer-junk", "nextSnapshot=3");
    write_text(cd, ".consumer-c.tmp", "{}");
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    char **ids = NULL;
    size_t n = 0;
    CHECK_EQ_INT(pm_consumer_list(io, root, &ids, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 4);
    if (n == 4) {
        CHECK_EQ_STR(ids[0], "a");
        CHECK_EQ_STR(ids[1], "b");
    }
    pm_strv_free(ids, n);
    pm_consumer c = {0};
    CHECK_EQ_INT(pm_consumer_read(io, root, "b", &c, &e), PAIMON_OK);
    CHECK_EQ_INT(c.next_snapshot, 12);
    CHECK_EQ_INT(pm_consumer_read(io, root, "a", &c, &e), PAIMON_OK);
    CHECK(c.next_snapshot == INT64_MAX);
    CHECK_EQ_INT(pm_consumer_read(io, root, "bad", &c, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "consumer-bad") != NULL);
    CHECK(strstr(e.msg, "nextSnapshot") != NULL);
    CHECK_EQ_INT(pm_consumer_read(io, root, "junk", &c, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "consumer-junk") != NULL);
    CHECK_EQ_INT(pm_consumer_read(io, root, "zzz", &c, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "consumer-zzz") != NULL);
    /* a control character in an id: refused when given, and when a file
     * name holds it (issue 22), the file and the character named */
    CHECK_EQ_INT(pm_consumer_read(io, root, "b\n", &c, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "invalid consumer id 'b\\x0a'") != NULL);
    write_text(cd, "consumer-x\ny", "{\"nextSnapshot\": 3}");
    ids = NULL;
    CHECK_EQ_INT(pm_consumer_list(io, root, &ids, &n, &e), PAIMON_CORRUPT);
    CHECK(ids == NULL);
    CHECK(strstr(e.msg, "/consumer/consumer-x\\x0ay: the consumer id in the file name holds a control character") != NULL);
    pm_fileio_destroy(io);
    free(cd);
    tu_rm_rf(root);
    free(root);
}

/* ---- hint rules ------------------------------------------------------- */

static int64_t latest_of(const char *root, int *rc_out) {
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    int64_t id = -777;
    *rc_out = pm_snapshot_latest_id(io, root, &id, &e);
    pm_fileio_destroy(io);
    return id;
}

static int64_t earliest_of(const char *root, int *rc_out) {
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    int64_t id = -777;
    *rc_out = pm_snapshot_earliest_id(io, root, &id, &e);
    pm_fileio_destroy(io);
    return id;
}

TEST(hint_latest_correct_and_stale) {
    int64_t ids[] = {1, 2, 3, 4};
    char *root = table_with_snapshots(ids, 4);
    int rc;
    set_hint(root, "LATEST", "4");
    CHECK_EQ_INT(latest_of(root, &rc), 4);
    CHECK_EQ_INT(rc, PAIMON_OK);
    /* trusted when consistent, even though snapshot-4 is present: remove
     * snapshot-1 and 2 -> still 4 */
    set_hint(root, "LATEST", "2");   /* stale: snapshot-3 exists */
    CHECK_EQ_INT(latest_of(root, &rc), 4);
    set_hint(root, "LATEST", "3");   /* stale: snapshot-4 exists */
    CHECK_EQ_INT(latest_of(root, &rc), 4);
    set_hint(root, "LATEST", "9");   /* points to a missing snapshot */
    CHECK_EQ_INT(latest_of(root, &rc), 4);
    CHECK_EQ_INT(rc, PAIMON_OK);
    set_hint(root, "LATEST", "0");
    CHECK_EQ_INT(latest_of(root, &rc), 4);
    set_hint(root, "LATEST", "-3");
    CHECK_EQ_INT(latest_of(root, &rc), 4);
    tu_rm_rf(root);
    free(root);
}

TEST(hint_latest_trusted_without_listing) {
    /* A hint that is consistent wins over the listing: prove the hint is used
     * by making listing give a different answer (a far snapshot with a gap). */
    int64_t ids[] = {1, 2, 3, 10};
    char *root = table_with_snapshots(ids, 4);
    int rc;
    set_hint(root, "LATEST", "3");
    CHECK_EQ_INT(latest_of(root, &rc), 3);
    CHECK_EQ_INT(rc, PAIMON_OK);
    /* EARLIEST: trusted when the snapshot below it is missing (a gap here:
     * the listing would say 1); 3 exists below 4, so 4 is stale: listing */
    int64_t gap[] = {1, 3, 4, 10};
    char *root2 = table_with_snapshots(gap, 4);
    set_hint(root2, "EARLIEST", "3");
    CHECK_EQ_INT(earliest_of(root2, &rc), 3);
    CHECK_EQ_INT(rc, PAIMON_OK);
    set_hint(root2, "EARLIEST", "4");
    CHECK_EQ_INT(earliest_of(root2, &rc), 1);
    tu_rm_rf(root2);
    free(root2);
    tu_rm_rf(root);
    free(root);
}

TEST(hint_junk_falls_back_to_listing) {
    int64_t ids[] = {3, 4, 5};
    char *root = table_with_snapshots(ids, 3);
    const char *junk[] = {"junk", "5\n", " 5", "", "99999999999999999999", "4 ", "0x4", "4.0", "+",
                          "-", "--4"};
    pm_fileio *io = pm_fileio_local();
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        int rc;
        set_hint(root, "LATEST", junk[i]);
        set_hint(root, "EARLIEST", junk[i]);
        CHECK_EQ_INT(latest_of(root, &rc), 5);
        CHECK_EQ_INT(rc, PAIMON_OK);
        CHECK_EQ_INT(earliest_of(root, &rc), 3);
        CHECK_EQ_INT(rc, PAIMON_OK);
        int64_t h;
        pm_err e;
        CHECK_EQ_INT(pm_hint_read(io, root, "LATEST", &h, &e), PAIMON_CORRUPT);
        CHECK(strstr(e.msg, "snapshot/LATEST") != NULL);
    }
    /* "+4" is a valid Long.parseLong input */
    int64_t h = 0;
    pm_err e;
    set_hint(root, "LATEST", "+4");
    CHECK_EQ_INT(pm_hint_read(io, root, "LATEST", &h, &e), PAIMON_OK);
    CHECK_EQ_INT(h, 4);
    set_hint(root, "LATEST", "-9223372036854775808");
    CHECK_EQ_INT(pm_hint_read(io, root, "LATEST", &h, &e), PAIMON_OK);
    CHECK(h == INT64_MIN);
    set_hint(root, "LATEST", "9223372036854775808");
    CHECK_EQ_INT(pm_hint_read(io, root, "LATEST", &h, &e), PAIMON_CORRUPT);
    CHECK_EQ_INT(pm_hint_read(io, root, "NOPE", &h, &e), PAIMON_NOTFOUND);
    pm_fileio_destroy(io);
    tu_rm_rf(root);
    free(root);
}

TEST(hint_earliest_expired) {
    int64_t ids[] = {6, 7, 8};
    char *root = table_with_snapshots(ids, 3);
    int rc;
    set_hint(root, "EARLIEST", "1");   /* snapshot-1 was expired */
    CHECK_EQ_INT(earliest_of(root, &rc), 6);
    CHECK_EQ_INT(rc, PAIMON_OK);
    set_hint(root, "EARLIEST", "6");
    CHECK_EQ_INT(earliest_of(root, &rc), 6);
    /* above existing snapshots (issue 22): 6 is there, below 7 and 8 */
    set_hint(root, "EARLIEST", "7");
    CHECK_EQ_INT(earliest_of(root, &rc), 6);
    set_hint(root, "EARLIEST", "8");
    CHECK_EQ_INT(earliest_of(root, &rc), 6);
    /* no hints at all */
    char *p = pm_path_join(root, "snapshot/EARLIEST");
    unlink(p);
    free(p);
    CHECK_EQ_INT(earliest_of(root, &rc), 6);
    CHECK_EQ_INT(latest_of(root, &rc), 8);
    tu_rm_rf(root);
    free(root);
}

TEST(listing_gaps_and_non_numeric_names) {
    int64_t ids[] = {1, 2, 4};
    char *root = table_with_snapshots(ids, 3);
    char *sd = jdir(root, "snapshot");
    write_text(sd, "snapshot-1abc.tmp", "{}");
    write_text(sd, "snapshot-99abc", "{}");
    write_text(sd, ".snapshot-30.0d7c1111-2222-4333-8444-555566667777.tmp", "{}");
    write_text(sd, "snapshot-", "{}");
    write_text(sd, "snapshot- 50", "{}");
    write_text(sd, "snap-60", "{}");
    write_text(sd, "EARLIEST", "1");
    write_text(sd, "LATEST", "4");
    pm_fileio *io = pm_fileio_local();
    int64_t *v = NULL;
    size_t n = 0;
    pm_err e;
    CHECK_EQ_INT(pm_snapshot_list_ids(io, root, &v, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 3);
    if (n == 3) CHECK(v[0] == 1 && v[1] == 2 && v[2] == 4);
    free(v);
    int rc;
    CHECK_EQ_INT(latest_of(root, &rc), 4);
    write_text(sd, "LATEST", "2");   /* snapshot-3 missing (gap) -> hint 2 trusted, as Java */
    CHECK_EQ_INT(latest_of(root, &rc), 2);
    write_text(sd, "LATEST", "1");   /* snapshot-2 exists -> listing */
    CHECK_EQ_INT(latest_of(root, &rc), 4);
    pm_fileio_destroy(io);
    free(sd);
    tu_rm_rf(root);
    free(root);
}

TEST(no_snapshots_notfound) {
    char *root = make_tmpdir();
    int rc;
    latest_of(root, &rc);
    CHECK_EQ_INT(rc, PAIMON_NOTFOUND);
    earliest_of(root, &rc);
    CHECK_EQ_INT(rc, PAIMON_NOTFOUND);
    pm_fileio *io = pm_fileio_local();
    int64_t id;
    pm_err e;
    CHECK_EQ_INT(pm_snapshot_latest_id(io, root, &id, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "no snapshot in ") != NULL);
    CHECK(strstr(e.msg, "/snapshot") != NULL);
    int64_t *v = (int64_t *)1;
    size_t n = 9;
    CHECK_EQ_INT(pm_snapshot_list_ids(io, root, &v, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 0);
    CHECK(v == NULL);
    /* empty snapshot dir with only hints */
    set_hint(root, "LATEST", "3");
    set_hint(root, "EARLIEST", "1");
    CHECK_EQ_INT(pm_snapshot_latest_id(io, root, &id, &e), PAIMON_NOTFOUND);
    CHECK_EQ_INT(pm_snapshot_earliest_id(io, root, &id, &e), PAIMON_NOTFOUND);
    pm_fileio_destroy(io);
    tu_rm_rf(root);
    free(root);
}

TEST(hint_write) {
    char *root = make_tmpdir();
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    /* the snapshot dir does not exist yet: created like Java's LocalFileIO */
    CHECK_EQ_INT(pm_hint_write(io, root, "LATEST", 12, &e), PAIMON_OK);
    char *p = pm_path_join(root, "snapshot/LATEST");
    size_t len = 0;
    char *t = read_file(p, &len);
    CHECK(t && len == 2 && memcmp(t, "12", 2) == 0);
    free(t);
    CHECK_EQ_INT(pm_hint_write(io, root, "LATEST", 9223372036854775807LL, &e), PAIMON_OK);
    t = read_file(p, &len);
    CHECK(t && strcmp(t, "9223372036854775807") == 0);
    free(t);
    int64_t h = 0;
    CHECK_EQ_INT(pm_hint_read(io, root, "LATEST", &h, &e), PAIMON_OK);
    CHECK(h == INT64_MAX);
    /* no temp files left */
    char *sd = jdir(root, "snapshot");
    DIR *d = opendir(sd);
    int others = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) others++;
    if (d) closedir(d);
    CHECK_EQ_INT(others, 0);
    free(sd);
    free(p);
    pm_fileio_destroy(io);
    tu_rm_rf(root);
    free(root);
}

/* ---- hostile metadata (issue 22 item 4) -------------------------------- */

/* A read that never ends (a hint symlinked to /dev/zero, a FIFO nobody
 * writes) must not hang the suite: it fails it. */
static void on_alarm(int sig) {
    (void)sig;
    static const char m[] = "  FAIL hostile_metadata_refused: a metadata read did not finish in 20 s\n";
    if (write(2, m, sizeof m - 1) < 0) {}
    _exit(1);
}

static void expect_refused(int rc, const pm_err *e, const char *needle) {
    CHECK_EQ_INT(rc, PAIMON_CORRUPT);
    if (!strstr(e->msg, needle)) {
        fprintf(stderr, "    message '%s' lacks '%s'\n", e->msg, needle);
        CHECK(0);
    }
}

TEST(hostile_metadata_refused) {
    signal(SIGALRM, on_alarm);
    alarm(20);
    int64_t ids[] = {1, 2, 3};
    char *root = table_with_snapshots(ids, 3);
    char *sd = jdir(root, "snapshot"), *latest = jdir(sd, "LATEST"), *earliest = jdir(sd, "EARLIEST");
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    int64_t id = 0;
    /* hints: a symlink to /dev/zero, a FIFO, a regular file longer than any id */
    CHECK_EQ_INT(symlink("/dev/zero", latest), 0);
    expect_refused(pm_snapshot_latest_id(io, root, &id, &e), &e, "snapshot/LATEST: not a regular file");
    expect_refused(pm_hint_read(io, root, "LATEST", &id, &e), &e, "snapshot/LATEST: not a regular file");
    unlink(latest);
    CHECK_EQ_INT(mkfifo(earliest, 0600), 0);
    expect_refused(pm_snapshot_earliest_id(io, root, &id, &e), &e, "snapshot/EARLIEST: not a regular file (a FIFO)");
    unlink(earliest);
    char digits[200];
    memset(digits, '1', sizeof digits - 1);
    digits[sizeof digits - 1] = '\0';
    set_hint(root, "LATEST", digits);
    expect_refused(pm_snapshot_latest_id(io, root, &id, &e), &e,
                   "snapshot/LATEST is 199 bytes, more than the 64 bytes allowed for metadata");
    unlink(latest);
    CHECK_EQ_INT(pm_snapshot_latest_id(io, root, &id, &e), PAIMON_OK);   /* and without them: the listing */
    CHECK_EQ_INT(id, 3);
    /* a sparse 16 GiB snapshot and schema: refused by size, never read */
    char *s2 = jdir(sd, "snapshot-2"), *schd = jdir(root, "schema");
    mkdir(schd, 0777);
    char *sch0 = jdir(schd, "schema-0");
    CHECK_EQ_INT(truncate(s2, (off_t)16 << 30), 0);
    write_text(schd, "schema-0", "");
    CHECK_EQ_INT(truncate(sch0, (off_t)16 << 30), 0);
    pm_snapshot *s = NULL;
    expect_refused(pm_snapshot_read(io, root, 2, &s, &e), &e,
                   "snapshot/snapshot-2 is 17179869184 bytes, more than the 16 MiB allowed for metadata");
    CHECK(s == NULL);
    pm_schema *sc = NULL;
    expect_refused(pm_schema_read(io, root, 0, &sc, &e), &e,
                   "schema/schema-0 is 17179869184 bytes, more than the 16 MiB allowed for metadata");
    CHECK(sc == NULL);
    /* a tag that is a FIFO, a consumer symlinked to /dev/zero */
    char *td = jdir(root, "tag"), *cd = jdir(root, "consumer");
    mkdir(td, 0777);
    mkdir(cd, 0777);
    char *tag = jdir(td, "tag-t1"), *con = jdir(cd, "consumer-c1");
    CHECK_EQ_INT(mkfifo(tag, 0600), 0);
    CHECK_EQ_INT(symlink("/dev/zero", con), 0);
    expect_refused(pm_tag_read(io, root, "t1", &s, &e), &e, "tag/tag-t1: not a regular file (a FIFO)");
    pm_consumer c;
    expect_refused(pm_consumer_read(io, root, "c1", &c, &e), &e,
                   "consumer/consumer-c1: not a regular file (a character device)");
    /* a symlink to a regular file is read as that file */
    unlink(s2);
    write_text(root, "s2.json", "{}");
    char *target = jdir(root, "s2.json");
    CHECK_EQ_INT(symlink(target, s2), 0);
    pm_buf b = {0};
    CHECK_EQ_INT(pm_io_read_meta(io, s2, PM_META_MAX, &b, &e), PAIMON_OK);
    CHECK(b.len == 2 && memcmp(b.data, "{}", 2) == 0 && b.read_max == 0);
    pm_buf_free(&b);
    alarm(0);
    pm_fileio_destroy(io);
    free(target); free(tag); free(con); free(td); free(cd); free(s2); free(sch0); free(schd);
    free(latest); free(earliest); free(sd);
    tu_rm_rf(root);
    free(root);
}

/* ---- durations, memory sizes, defaults -------------------------------- */

static int64_t dur(const char *s, int *rc) {
    pm_err e;
    int64_t v = -1;
    *rc = pm_parse_duration_ms(s, &v, &e);
    return v;
}

TEST(duration_parsing) {
    int rc;
    CHECK_EQ_INT(dur("1 h", &rc), 3600000); CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(dur("30min", &rc), 1800000); CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(dur("10 s", &rc), 10000);
    CHECK_EQ_INT(dur("1d", &rc), 86400000);
    CHECK_EQ_INT(dur("2 days", &rc), 172800000);
    CHECK_EQ_INT(dur("100ms", &rc), 100);
    CHECK_EQ_INT(dur("100", &rc), 100); CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(dur("  7 \t MINUTES ", &rc), 420000); CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(dur("3 m", &rc), 180000);
    CHECK_EQ_INT(dur("1 Hour", &rc), 3600000);
    CHECK_EQ_INT(dur("2 hours", &rc), 7200000);
    CHECK_EQ_INT(dur("5 sec", &rc), 5000);
    CHECK_EQ_INT(dur("5 secs", &rc), 5000);
    CHECK_EQ_INT(dur("5 seconds", &rc), 5000);
    CHECK_EQ_INT(dur("5 millis", &rc), 5);
    CHECK_EQ_INT(dur("5 milliseconds", &rc), 5);
    CHECK_EQ_INT(dur("2500 \xc2\xb5s", &rc), 2); CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(dur("2500 micros", &rc), 2);
    CHECK_EQ_INT(dur("3000000 ns", &rc), 3);
    CHECK_EQ_INT(dur("3000000 nanos", &rc), 3);
    dur("", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    dur("   ", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    dur("h", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    dur("-1 s", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    dur("1 fortnight", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    dur("1.5 h", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    dur("99999999999999999999", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    dur("9223372036854775807 d", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    pm_err e;
    int64_t v;
    CHECK_EQ_INT(pm_parse_duration_ms("1 fortnight", &v, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "1 fortnight") != NULL);
}

static int64_t mem(const char *s, int *rc) {
    pm_err e;
    int64_t v = -1;
    *rc = pm_parse_memory_size(s, &v, &e);
    return v;
}

TEST(memory_size_parsing) {
    int rc;
    CHECK_EQ_INT(mem("8 mb", &rc), 8 * 1024 * 1024); CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(mem("16MB", &rc), 16 * 1024 * 1024);
    CHECK_EQ_INT(mem("1024", &rc), 1024);
    CHECK_EQ_INT(mem("1 kb", &rc), 1024);
    CHECK_EQ_INT(mem("3k", &rc), 3072);
    CHECK_EQ_INT(mem("2 kibibytes", &rc), 2048);
    CHECK_EQ_INT(mem("500 b", &rc), 500);
    CHECK_EQ_INT(mem("500 bytes", &rc), 500);
    CHECK_EQ_INT(mem("1 g", &rc), 1073741824LL);
    CHECK_EQ_INT(mem("2 GB", &rc), 2147483648LL);
    CHECK_EQ_INT(mem("1 t", &rc), 1099511627776LL);
    CHECK_EQ_INT(mem("1 tb", &rc), 1099511627776LL);
    CHECK_EQ_INT(mem("1 m", &rc), 1048576);
    CHECK_EQ_INT(mem(" 64 kb ", &rc), 65536); CHECK_EQ_INT(rc, 0);
    mem("", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    mem("mb", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    mem("1 pb", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    mem("1.5 mb", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
    mem("9999999999 tb", &rc); CHECK_EQ_INT(rc, PAIMON_MISUSE);
}

TEST(option_defaults_table) {
    struct { const char *k, *v; } want[] = {
        {"bucket", "-1"}, {"file.format", "parquet"}, {"manifest.format", "avro"},
        {"manifest.compression", "zstd"}, {"manifest.target-file-size", "8 mb"},
        {"manifest.full-compaction-threshold-size", "16 mb"}, {"manifest.merge-min-count", "30"},
        {"snapshot.num-retained.min", "10"}, {"snapshot.num-retained.max", "2147483647"},
        {"snapshot.time-retained", "1 h"}, {"snapshot.expire.limit", "50"},
        {"partition.default-name", "__DEFAULT_PARTITION__"}, {"partition.legacy-name", "true"},
        {"commit.max-retries", "10"}, {"commit.min-retry-wait", "10 ms"},
        {"commit.max-retry-wait", "10 s"}, {"target-file-size", "256 mb"},
        {"file.compression.zstd-level", "1"}, {"data-file.prefix", "data-"},
        {"changelog-file.prefix", "changelog-"}, {"partition.expiration-strategy", "values-time"},
        {"partition.expiration-max-num", "100"}, {"changelog-producer", "none"},
        {"deletion-vectors.enabled", "false"}, {"write-only", "false"},
        {"metadata.stats-mode", "truncate(16)"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *got = pm_schema_option_or_default(NULL, want[i].k);
        CHECK_EQ_STR(got, want[i].v);
        int found = 0;
        for (const pm_kv *kv = pm_option_defaults; kv->key; kv++)
            if (!strcmp(kv->key, want[i].k)) found = !strcmp(kv->value, want[i].v);
        CHECK(found);
    }
    CHECK(pm_schema_option_or_default(NULL, "no.such.option") == NULL);
    CHECK(pm_schema_option_or_default(NULL, "partition.expiration-time") == NULL);
    /* every default of a duration / memory option parses */
    int64_t v;
    pm_err e;
    CHECK_EQ_INT(pm_parse_duration_ms(pm_schema_option_or_default(NULL, "snapshot.time-retained"), &v, &e), 0);
    CHECK_EQ_INT(v, 3600000);
    CHECK_EQ_INT(pm_parse_duration_ms(pm_schema_option_or_default(NULL, "commit.max-retry-wait"), &v, &e), 0);
    CHECK_EQ_INT(v, 10000);
    CHECK_EQ_INT(pm_parse_memory_size(pm_schema_option_or_default(NULL, "manifest.target-file-size"), &v, &e), 0);
    CHECK_EQ_INT(v, 8 << 20);
    CHECK_EQ_INT(pm_parse_memory_size(pm_schema_option_or_default(NULL, "file-index.in-manifest-threshold"), &v, &e), 0);
    CHECK_EQ_INT(v, 500);
}

int main(void) {
    RUN(fixture_roundtrip_byte_identical);
    RUN(snapshot_all_fields_roundtrip);
    RUN(snapshot_int64_extremes);
    RUN(snapshot_nulls_and_unknown_keys);
    RUN(snapshot_bad_input);
    RUN(snapshot_values_java_refuses);
    RUN(snapshot_read_from_files);
    RUN(schema_composite_roundtrip);
    RUN(schema_compat_defaults);
    RUN(schema_bad_input);
    RUN(schema_read_and_list_fixture);
    RUN(tags_and_branch_fixture);
    RUN(consumers);
    RUN(hint_latest_correct_and_stale);
    RUN(hint_latest_trusted_without_listing);
    RUN(hint_junk_falls_back_to_listing);
    RUN(hint_earliest_expired);
    RUN(listing_gaps_and_non_numeric_names);
    RUN(no_snapshots_notfound);
    RUN(hint_write);
    RUN(hostile_metadata_refused);
    RUN(duration_parsing);
    RUN(memory_size_parsing);
    RUN(option_defaults_table);
    return TEST_SUMMARY();
}
