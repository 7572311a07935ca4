/* Create table + Avro data-file writer/reader: schema JSON, Avro schema
 * text, value statistics (decoded with pm_binrow_decode), rolling,
 * sequence numbers, refusals. */
#include "test.h"
#include "pm_create.h"
#include "pm_datafile.h"

#include <stdint.h>
#include <unistd.h>

static char tmpdir[256];

static void mk_tmp(void) {
    strcpy(tmpdir, "/tmp/pm_test_datafile.XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); exit(1); }
}

static void rm_tmp(void) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmpdir);
}

/* A schema from (name, type) pairs; options as key, value pairs. */
static pm_schema *make_schema(const char *const *cols, size_t n, const char *const *opts, size_t nopt,
                              const char *part, const char *pk) {
    pm_schema *s = calloc(1, sizeof *s);
    s->fields = calloc(n, sizeof *s->fields);
    s->n_fields = n;
    for (size_t i = 0; i < n; i++) {
        pm_err e;
        s->fields[i].name = pm_strdup(cols[2 * i]);
        if (pm_type_parse_sql(cols[2 * i + 1], &s->fields[i].type, &e)) {
            fprintf(stderr, "type %s: %s\n", cols[2 * i + 1], e.msg);
            exit(1);
        }
    }
    s->options = calloc(nopt ? nopt : 1, sizeof *s->options);
    for (size_t i = 0; i < nopt; i++) {
        s->options[i].key = pm_strdup(opts[2 * i]);
        s->options[i].value = pm_strdup(opts[2 * i + 1]);
    }
    s->n_options = nopt;
    if (part) {
        s->partition_keys = calloc(1, sizeof(char *));
        s->partition_keys[0] = pm_strdup(part);
        s->n_partition_keys = 1;
    }
    if (pk) {
        s->primary_keys = calloc(1, sizeof(char *));
        s->primary_keys[0] = pm_strdup(pk);
        s->n_primary_keys = 1;
    }
    return s;
}

static paimon_table *create_open(const char *name, pm_schema *s) {
    char path[400];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    pm_err e;
    int rc = pm_create_table(path, s, &e);
    pm_schema_free(s);
    if (rc) { fprintf(stderr, "create %s: %s\n", path, e.msg); return NULL; }
    paimon_table *t;
    if (pm_table_open(path, NULL, &t, &e)) { fprintf(stderr, "open: %s\n", e.msg); return NULL; }
    return t;
}

TEST(type_parse_composite) {
    const char *in[] = {"INT", "ARRAY<STRING NOT NULL>", "MAP<STRING, ROW<a INT, `b c` DECIMAL(5, 2)>> NOT NULL",
                        "ROW<x TIMESTAMP(6), y ARRAY<BIGINT>>", "VARCHAR(10)"};
    const char *out[] = {"INT", "ARRAY<STRING NOT NULL>", "MAP<STRING, ROW<`a` INT, `b c` DECIMAL(5, 2)>> NOT NULL",
                         "ROW<`x` TIMESTAMP(6), `y` ARRAY<BIGINT>>", "VARCHAR(10)"};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        pm_type *t = NULL;
        pm_err e;
        CHECK_EQ_INT(pm_type_parse_sql(in[i], &t, &e), PAIMON_OK);
        if (!t) continue;
        pm_buf b = {0};
        CHECK_EQ_INT(pm_type_to_sql(t, &b), PAIMON_OK);
        pm_buf_cstr(&b);
        CHECK_EQ_STR((char *)b.data, out[i]);
        pm_buf_free(&b);
        pm_type_free(t);
    }
    pm_type *t = NULL;
    pm_err e;
    CHECK(pm_type_parse_sql("ARRAY<INT", &t, &e) != PAIMON_OK);
    CHECK(pm_type_parse_sql("MAP<INT>", &t, &e) != PAIMON_OK);
    CHECK(pm_type_parse_sql("INT NOT", &t, &e) != PAIMON_OK);
}

TEST(create_schema_json) {
    const char *cols[] = {"a", "INT", "b", "ROW<x INT, y STRING>", "c", "MAP<STRING, ROW<z INT>>", "k", "BIGINT"};
    const char *opts[] = {"file.format", "avro", "manifest.format", "avro", "bucket", "3"};
    pm_schema *s = make_schema(cols, 4, opts, 3, NULL, "k");
    s->time_millis = 1720496663041;
    pm_err e;
    char path[400];
    snprintf(path, sizeof path, "%s/created", tmpdir);
    CHECK_EQ_INT(pm_create_table(path, s, &e), PAIMON_OK);
    /* ids depth-first, PK NOT NULL, Java HashMap option order */
    CHECK_EQ_INT(s->fields[0].id, 0);
    CHECK_EQ_INT(s->fields[1].id, 1);
    CHECK_EQ_INT(s->fields[1].type->fields[0].id, 2);
    CHECK_EQ_INT(s->fields[1].type->fields[1].id, 3);
    CHECK_EQ_INT(s->fields[2].id, 4);
    CHECK_EQ_INT(s->fields[2].type->value->fields[0].id, 5);
    CHECK_EQ_INT(s->fields[3].id, 6);
    CHECK_EQ_INT(s->highest_field_id, 6);
    CHECK_EQ_INT(s->fields[3].type->nullable, 0);
    CHECK_EQ_STR(s->options[0].key, "bucket");
    CHECK_EQ_STR(s->options[1].key, "manifest.format");
    CHECK_EQ_STR(s->options[2].key, "file.format");
    /* the file parses back and re-serializes byte-identically */
    pm_fileio *io = pm_fileio_local();
    pm_buf file = {0}, again = {0};
    char sp[500];
    snprintf(sp, sizeof sp, "%s/schema/schema-0", path);
    CHECK_EQ_INT(pm_io_read_all(io, sp, &file, &e), PAIMON_OK);
    pm_schema *p = NULL;
    CHECK_EQ_INT(pm_schema_parse((char *)file.data, file.len, sp, &p, &e), PAIMON_OK);
    if (p) {
        CHECK_EQ_INT(pm_schema_to_json(p, &again), PAIMON_OK);
        CHECK(again.len == file.len && !memcmp(again.data, file.data, file.len));
        CHECK_EQ_INT(p->version, 3);
        CHECK_EQ_INT(p->time_millis, 1720496663041);
        CHECK_EQ_STR(p->primary_keys[0], "k");
    }
    CHECK(file.len > 0 && file.data[file.len - 1] == '}');
    pm_schema_free(p);
    pm_buf_free(&file);
    pm_buf_free(&again);
    pm_fileio_destroy(io);
    pm_schema_free(s);
    /* a second create fails with EXISTS */
    const char *c2[] = {"a", "INT"};
    s = make_schema(c2, 1, NULL, 0, NULL, NULL);
    CHECK_EQ_INT(pm_create_table(path, s, &e), PAIMON_EXISTS);
    pm_schema_free(s);
    /* validation */
    const char *c3[] = {"a", "INT", "a", "INT"};
    s = make_schema(c3, 2, NULL, 0, NULL, NULL);
    CHECK_EQ_INT(pm_create_normalize(s, &e), PAIMON_MISUSE);
    pm_schema_free(s);
    const char *c4[] = {"a", "INT", "b", "INT"};
    s = make_schema(c4, 2, NULL, 0, "a", "b");
    CHECK_EQ_INT(pm_create_normalize(s, &e), PAIMON_MISUSE);   /* PK must include partition key */
    pm_schema_free(s);
    s = make_schema(c4, 2, NULL, 0, "zz", NULL);
    CHECK_EQ_INT(pm_create_normalize(s, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "zz") != NULL);
    pm_schema_free(s);
    const char *o5[] = {"bucket", "0"};
    s = make_schema(c4, 2, o5, 1, NULL, NULL);
    CHECK_EQ_INT(pm_create_normalize(s, &e), PAIMON_MISUSE);
    pm_schema_free(s);
}

static const char *STAT_COLS[] = {"i", "INT", "l", "BIGINT NOT NULL", "s", "STRING", "d", "DOUBLE",
                                  "b", "BOOLEAN", "m", "DECIMAL(10, 2)", "dt", "DATE", "ts", "TIMESTAMP(3)",
                                  "bin", "BYTES"};
static const char *AVRO_OPTS[] = {"file.format", "avro", "bucket", "-1"};

TEST(avro_schema_text) {
    pm_schema *s = make_schema(STAT_COLS, 9, NULL, 0, NULL, NULL);
    pm_buf b = {0};
    pm_err e;
    CHECK_EQ_INT(pm_datafile_avro_schema(s->fields, s->n_fields, &b, &e), PAIMON_OK);
    CHECK_EQ_STR((char *)b.data,
                 "{\"type\":\"record\",\"name\":\"record\",\"namespace\":\"org.apache.paimon.avro.generated\",\"fields\":["
                 "{\"name\":\"i\",\"type\":[\"null\",\"int\"],\"default\":null},"
                 "{\"name\":\"l\",\"type\":\"long\"},"
                 "{\"name\":\"s\",\"type\":[\"null\",\"string\"],\"default\":null},"
                 "{\"name\":\"d\",\"type\":[\"null\",\"double\"],\"default\":null},"
                 "{\"name\":\"b\",\"type\":[\"null\",\"boolean\"],\"default\":null},"
                 "{\"name\":\"m\",\"type\":[\"null\",{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":10,\"scale\":2}],\"default\":null},"
                 "{\"name\":\"dt\",\"type\":[\"null\",{\"type\":\"int\",\"logicalType\":\"date\"}],\"default\":null},"
                 "{\"name\":\"ts\",\"type\":[\"null\",{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}],\"default\":null},"
                 "{\"name\":\"bin\",\"type\":[\"null\",\"bytes\"],\"default\":null}]}");
    pm_buf_free(&b);
    pm_schema_free(s);
}

static pm_datum I(int64_t v) { pm_datum d; memset(&d, 0, sizeof d); d.v.i = v; return d; }
static pm_datum N(void) { pm_datum d; memset(&d, 0, sizeof d); d.is_null = 1; return d; }
static pm_datum S(const char *s) { pm_datum d; memset(&d, 0, sizeof d); d.v.bin.ptr = (const uint8_t *)s; d.v.bin.len = strlen(s); return d; }
static pm_datum D(double v) { pm_datum d; memset(&d, 0, sizeof d); d.v.d = v; return d; }
static pm_datum T(int64_t ms) { pm_datum d; memset(&d, 0, sizeof d); d.v.ts.millis = ms; return d; }

static int bin_eq(const pm_datum *d, const char *s) {
    return !d->is_null && d->v.bin.len == strlen(s) && !memcmp(d->v.bin.ptr, s, d->v.bin.len);
}

TEST(write_stats_and_read_back) {
    paimon_table *t = create_open("stats", make_schema(STAT_COLS, 9, AVRO_OPTS, 2, NULL, NULL));
    CHECK(t != NULL);
    if (!t) return;
    pm_append_writer *w;
    pm_err e;
    CHECK_EQ_INT(pm_append_writer_open(t, &w, &e), PAIMON_OK);
    pm_datum rows[4][9] = {
        {I(5), I(100), S("banana"), D(2.5), I(1), I(1234), I(19724), T(1704164645678), S("\x01\x02")},
        {N(), I(-7), S("apple-pie-with-cream-and-more"), D(-1.0), I(0), I(-1), I(0), T(-1), N()},
        {I(-3), I(7), N(), N(), N(), N(), N(), N(), N()},
        {I(42), I(0), S("zzzzzzzzzzzzzzzzzzzz"), D(9.75), I(1), I(99999), I(-365), T(0), S("x")},
    };
    for (int r = 0; r < 4; r++) CHECK_EQ_INT(pm_append_writer_write(w, rows[r], &e), PAIMON_OK);
    /* NOT NULL column with a null value: refused, writer still usable */
    pm_datum bad[9];
    memcpy(bad, rows[0], sizeof bad);
    bad[1] = N();
    CHECK_EQ_INT(pm_append_writer_write(w, bad, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "'l'") != NULL);
    const pm_manifest_entry *ents;
    size_t n;
    CHECK_EQ_INT(pm_append_writer_prepare(w, &ents, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 1);
    if (n != 1) { pm_append_writer_free(w); pm_table_free(t); return; }
    const pm_data_file *f = &ents[0].file;
    CHECK_EQ_INT(f->row_count, 4);
    CHECK_EQ_INT(f->min_sequence_number, 0);
    CHECK_EQ_INT(f->max_sequence_number, 3);
    CHECK_EQ_INT(f->level, 0);
    CHECK_EQ_INT(ents[0].bucket, 0);
    CHECK_EQ_INT(ents[0].total_buckets, -1);
    CHECK_EQ_INT(ents[0].partition.len, 12);
    CHECK_EQ_INT(f->min_key.len, 12);
    CHECK_EQ_INT(f->key_stats.n_null_counts, 0);
    CHECK(f->key_stats.has_null_counts);
    CHECK(!f->has_value_stats_cols);
    CHECK(f->file_source.has && f->file_source.v == 0);
    CHECK(f->delete_row_count.has && f->delete_row_count.v == 0);
    CHECK(f->creation_time.has);
    CHECK(strncmp(f->file_name, "data-", 5) == 0 && strstr(f->file_name, "-0.avro") != NULL);
    pm_datum mn[9], mx[9];
    pm_type *types[9];
    for (int i = 0; i < 9; i++) types[i] = t->schema->fields[i].type;
    CHECK_EQ_INT(pm_binrow_decode(f->value_stats.min_values.ptr, f->value_stats.min_values.len, types, 9, mn, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_binrow_decode(f->value_stats.max_values.ptr, f->value_stats.max_values.len, types, 9, mx, &e), PAIMON_OK);
    CHECK_EQ_INT(mn[0].v.i, -3);  CHECK_EQ_INT(mx[0].v.i, 42);
    CHECK_EQ_INT(mn[1].v.i, -7);  CHECK_EQ_INT(mx[1].v.i, 100);
    /* truncate(16): min truncated, max truncated with the last char incremented */
    CHECK(bin_eq(&mn[2], "apple-pie-with-c"));
    CHECK(bin_eq(&mx[2], "zzzzzzzzzzzzzzz{"));
    CHECK(mn[3].v.d == -1.0);     CHECK(mx[3].v.d == 9.75);
    CHECK_EQ_INT(mn[4].v.i, 0);   CHECK_EQ_INT(mx[4].v.i, 1);
    CHECK_EQ_INT(mn[5].v.i, -1);  CHECK_EQ_INT(mx[5].v.i, 99999);
    CHECK_EQ_INT(mn[6].v.i, -365); CHECK_EQ_INT(mx[6].v.i, 19724);
    CHECK_EQ_INT(mn[7].v.ts.millis, -1); CHECK_EQ_INT(mx[7].v.ts.millis, 1704164645678);
    CHECK(mn[8].is_null && mx[8].is_null);     /* byte[] is not Comparable in Java: no min/max */
    int64_t want_nulls[9] = {1, 0, 1, 1, 1, 1, 1, 1, 2};
    CHECK_EQ_INT(f->value_stats.n_null_counts, 9);
    for (int i = 0; i < 9 && f->value_stats.n_null_counts == 9; i++) {
        CHECK(!f->value_stats.null_count_is_null[i]);
        CHECK_EQ_INT(f->value_stats.null_counts[i], want_nulls[i]);
    }
    /* read back */
    pm_datafile_reader *r;
    CHECK_EQ_INT(pm_datafile_reader_open(t, &ents[0], t->schema->fields, 9, &r, &e), PAIMON_OK);
    pm_datum got[9];
    int k = 0;
    int rc;
    while ((rc = pm_datafile_reader_next(r, got, NULL, &e)) == PAIMON_OK) {
        CHECK(k < 4);
        if (k >= 4) break;
        for (int i = 0; i < 9; i++) {
            CHECK_EQ_INT(got[i].is_null, rows[k][i].is_null);
            if (got[i].is_null) continue;
            if (i == 2 || i == 8) CHECK(got[i].v.bin.len == rows[k][i].v.bin.len && !memcmp(got[i].v.bin.ptr, rows[k][i].v.bin.ptr, got[i].v.bin.len));
            else if (i == 3) CHECK(got[i].v.d == rows[k][i].v.d);
            else if (i == 7) CHECK_EQ_INT(got[i].v.ts.millis, rows[k][i].v.ts.millis);
            else CHECK_EQ_INT(got[i].v.i, rows[k][i].v.i);
        }
        k++;
    }
    CHECK_EQ_INT(rc, PAIMON_DONE);
    CHECK_EQ_INT(k, 4);
    pm_datafile_reader_close(r);
    /* the file on disk has the recorded size */
    pm_buf rel = {0};
    CHECK_EQ_INT(pm_table_file_path(t, &ents[0], &rel, &e), PAIMON_OK);
    char full[600];
    snprintf(full, sizeof full, "%s/%s", t->root, (char *)rel.data);
    pm_stat st;
    CHECK_EQ_INT(pm_io_stat(t->io, full, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.size, f->file_size);
    pm_buf_free(&rel);
    pm_append_writer_free(w);
    pm_table_free(t);
}

TEST(stats_modes) {
    const char *cols[] = {"s", "STRING", "n", "INT", "f", "STRING"};
    const char *opts[] = {"file.format", "avro", "metadata.stats-mode", "full", "fields.n.stats-mode", "counts",
                          "fields.f.stats-mode", "none"};
    paimon_table *t = create_open("modes", make_schema(cols, 3, opts, 4, NULL, NULL));
    CHECK(t != NULL);
    if (!t) return;
    pm_append_writer *w;
    pm_err e;
    CHECK_EQ_INT(pm_append_writer_open(t, &w, &e), PAIMON_OK);
    pm_datum r1[3] = {S("a-very-long-string-not-truncated"), I(1), S("x")};
    pm_datum r2[3] = {N(), N(), N()};
    CHECK_EQ_INT(pm_append_writer_write(w, r1, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_append_writer_write(w, r2, &e), PAIMON_OK);
    const pm_manifest_entry *ents;
    size_t n;
    CHECK_EQ_INT(pm_append_writer_prepare(w, &ents, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 1);
    if (n == 1) {
        pm_type *types[3] = {t->schema->fields[0].type, t->schema->fields[1].type, t->schema->fields[2].type};
        pm_datum mn[3], mx[3];
        const pm_stats *vs = &ents[0].file.value_stats;
        CHECK_EQ_INT(pm_binrow_decode(vs->min_values.ptr, vs->min_values.len, types, 3, mn, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_binrow_decode(vs->max_values.ptr, vs->max_values.len, types, 3, mx, &e), PAIMON_OK);
        CHECK(bin_eq(&mn[0], "a-very-long-string-not-truncated"));
        CHECK(bin_eq(&mx[0], "a-very-long-string-not-truncated"));
        CHECK(mn[1].is_null && mx[1].is_null);
        CHECK_EQ_INT(vs->null_counts[1], 1);
        CHECK(!vs->null_count_is_null[1]);
        CHECK(mn[2].is_null && mx[2].is_null && vs->null_count_is_null[2]);
    }
    pm_append_writer_free(w);
    pm_table_free(t);
}

TEST(rolling_and_partitions) {
    const char *cols[] = {"p", "STRING", "v", "STRING"};
    const char *opts[] = {"file.format", "avro", "target-file-size", "100 b", "file.compression", "none"};
    paimon_table *t = create_open("roll", make_schema(cols, 2, opts, 3, "p", NULL));
    CHECK(t != NULL);
    if (!t) return;
    pm_append_writer *w;
    pm_err e;
    CHECK_EQ_INT(pm_append_writer_open(t, &w, &e), PAIMON_OK);
    char big[60];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = 0;
    for (int i = 0; i < 7; i++) {
        pm_datum r[2] = {S(i % 2 ? "odd" : "even"), S(big)};
        CHECK_EQ_INT(pm_append_writer_write(w, r, &e), PAIMON_OK);
    }
    CHECK(pm_append_writer_pending_files(w) >= 2);
    const pm_manifest_entry *ents;
    size_t n;
    CHECK_EQ_INT(pm_append_writer_prepare(w, &ents, &n, &e), PAIMON_OK);
    /* ~62 bytes per row, target 100 bytes: files of 2 rows; even: 4 rows, odd: 3 rows */
    CHECK_EQ_INT(n, 4);
    int64_t rows = 0, next_even = 0, next_odd = 0;
    for (size_t i = 0; i < n; i++) {
        rows += ents[i].file.row_count;
        pm_buf path = {0};
        CHECK_EQ_INT(pm_table_file_path(t, &ents[i], &path, &e), PAIMON_OK);
        int even = strncmp((char *)path.data, "p=even/bucket-0/data-", 21) == 0;
        CHECK(even || strncmp((char *)path.data, "p=odd/bucket-0/data-", 20) == 0);
        int64_t *next = even ? &next_even : &next_odd;
        CHECK_EQ_INT(ents[i].file.min_sequence_number, *next);
        *next = ents[i].file.max_sequence_number + 1;
        pm_buf_free(&path);
    }
    CHECK_EQ_INT(rows, 7);
    CHECK_EQ_INT(next_even, 4);
    CHECK_EQ_INT(next_odd, 3);
    /* prepare again: nothing new */
    CHECK_EQ_INT(pm_append_writer_prepare(w, &ents, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 0);
    /* discard removes files not handed out */
    pm_datum r[2] = {S("third"), S("x")};
    CHECK_EQ_INT(pm_append_writer_write(w, r, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_append_writer_pending_files(w), 1);
    CHECK_EQ_INT(pm_append_writer_discard(w, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_append_writer_pending_files(w), 0);
    pm_append_writer_free(w);
    pm_table_free(t);
}

TEST(refuses_unsupported_tables) {
    const char *cols[] = {"a", "INT", "b", "STRING"};
    pm_err e;
    pm_append_writer *w = NULL;
    const char *o1[] = {"file.format", "avro", "bucket", "2", "bucket-key", "a"};
    paimon_table *t = create_open("bucketed", make_schema(cols, 2, o1, 3, NULL, NULL));
    if (t) {
        CHECK_EQ_INT(pm_append_writer_open(t, &w, &e), PAIMON_UNSUPPORTED);
        CHECK(strstr(e.msg, "bucket=2") != NULL);
        pm_table_free(t);
    }
    const char *o2[] = {"file.format", "avro"};
    t = create_open("pk", make_schema(cols, 2, o2, 1, NULL, "a"));
    if (t) {
        CHECK_EQ_INT(pm_append_writer_open(t, &w, &e), PAIMON_UNSUPPORTED);
        CHECK(strstr(e.msg, "primary-key") != NULL);
        pm_table_free(t);
    }
    t = create_open("parquet", make_schema(cols, 2, NULL, 0, NULL, NULL));
    if (t) {
        CHECK_EQ_INT(pm_append_writer_open(t, &w, &e), PAIMON_UNSUPPORTED);
        CHECK(strstr(e.msg, "file.format") != NULL);
        pm_table_free(t);
    }
    const char *cols3[] = {"a", "INT", "m-x", "MAP<STRING, INT>"};
    t = create_open("badname", make_schema(cols3, 2, o2, 1, NULL, NULL));
    if (t) {
        CHECK_EQ_INT(pm_append_writer_open(t, &w, &e), PAIMON_UNSUPPORTED);
        CHECK(strstr(e.msg, "'m-x'") != NULL);
        pm_table_free(t);
    }
    const char *cols4[] = {"a", "INT", "ts", "TIMESTAMP(9)"};
    t = create_open("ts9", make_schema(cols4, 2, o2, 1, NULL, NULL));
    if (t) {
        CHECK_EQ_INT(pm_append_writer_open(t, &w, &e), PAIMON_UNSUPPORTED);
        CHECK(strstr(e.msg, "'ts'") != NULL);
        pm_table_free(t);
    }
}

TEST(reads_java_avro_data_file) {
    char path[600];
    snprintf(path, sizeof path, "%s/paimon-java/cpp-avro-append_with_multiple_map/append_with_multiple_map.db/"
             "append_with_multiple_map", fixtures_dir());
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(path, NULL, &t, &e), PAIMON_OK);
    if (!t) return;
    pm_snapshot *s;
    CHECK_EQ_INT(pm_snapshot_read(t->io, t->branch_root, 1, &s, &e), PAIMON_OK);
    pm_scan *sc;
    CHECK_EQ_INT(pm_scan_open(t, s, NULL, &sc, &e), PAIMON_OK);
    const pm_manifest_entry *m;
    CHECK_EQ_INT(pm_scan_next(sc, &m, &e), PAIMON_OK);
    pm_datafile_reader *r;
    CHECK_EQ_INT(pm_datafile_reader_open(t, m, t->schema->fields, t->schema->n_fields, &r, &e), PAIMON_OK);
    /* our Avro schema for the table is byte-identical to the one Java wrote */
    {
        pm_buf file = {0}, ours = {0}, rel = {0};
        CHECK_EQ_INT(pm_table_file_path(t, m, &rel, &e), PAIMON_OK);
        char full[800];
        snprintf(full, sizeof full, "%s/%s", t->root, (char *)rel.data);
        CHECK_EQ_INT(pm_io_read_all(t->io, full, &file, &e), PAIMON_OK);
        pm_avro_reader *ar;
        CHECK_EQ_INT(pm_avro_reader_open(file.data, file.len, full, &ar, &e), PAIMON_OK);
        size_t sl = 0;
        const uint8_t *sj = pm_avro_reader_meta(ar, "avro.schema", &sl);
        CHECK_EQ_INT(pm_datafile_avro_schema(t->schema->fields, t->schema->n_fields, &ours, &e), PAIMON_OK);
        CHECK(sj && ours.len == sl && !memcmp(ours.data, sj, sl));
        if (!(sj && ours.len == sl && !memcmp(ours.data, sj, sl)))
            fprintf(stderr, "  ours: %s\n  java: %.*s\n", (char *)ours.data, (int)sl, (const char *)sj);
        pm_avro_reader_close(ar);
        pm_buf_free(&file);
        pm_buf_free(&ours);
        pm_buf_free(&rel);
    }
    pm_datum vals[8];
    const pm_avro_value *raw[8];
    CHECK_EQ_INT(pm_datafile_reader_next(r, vals, raw, &e), PAIMON_OK);
    CHECK(raw[2] && raw[2]->type == PM_AVRO_MAP && raw[2]->u.map.n == 2);
    CHECK(raw[0] && raw[0]->type == PM_AVRO_ARRAY && raw[0]->u.list.n == 2);
    CHECK_EQ_INT(pm_datafile_reader_next(r, vals, raw, &e), PAIMON_DONE);
    pm_datafile_reader_close(r);
    pm_scan_close(sc);
    pm_snapshot_free(s);
    pm_table_free(t);
}

int main(void) {
    mk_tmp();
    RUN(type_parse_composite);
    RUN(create_schema_json);
    RUN(avro_schema_text);
    RUN(write_stats_and_read_back);
    RUN(stats_modes);
    RUN(rolling_and_partitions);
    RUN(refuses_unsupported_tables);
    RUN(reads_java_avro_data_file);
    rm_tmp();
    return TEST_SUMMARY();
}
