/* ALTER TABLE in the core (pm_alter): the retry when another writer took
 * schema-(N+1) first (the change re-applied on top of it, or refused as a
 * conflict when it no longer applies), the cast rules of DataTypeCasts +
 * CastExecutors, and the option order Java's HashMap copies leave. */
#include "test.h"

#include "pm_alter.h"
#include "pm_create.h"
#include "pm_fileio.h"

#define TMP_PREFIX "/tmp/pm_test_alter."

/* A FileIO whose first create_no_replace of a schema file finds another
 * writer's schema there (written just before, through the real FileIO). */
static const pm_fileio_ops *real_ops;
static pm_fileio_ops racing_ops;
static const char *competitor;     /* the other writer's schema JSON */
static int raced;

static int racing_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    if (!raced && strstr(path, "/schema/schema-")) {
        raced = 1;
        int rc = real_ops->create_no_replace(io, path, competitor, strlen(competitor), e);
        if (rc) return rc;
    }
    return real_ops->create_no_replace(io, path, p, n, e);
}

static paimon_table *new_table(char **dir) {
    *dir = tu_make_tmpdir(TMP_PREFIX);
    char path[512];
    snprintf(path, sizeof path, "%s/t", *dir);
    pm_schema *s = calloc(1, sizeof *s);
    pm_err e = {0};
    s->n_fields = 2;
    s->fields = calloc(2, sizeof *s->fields);
    s->fields[0].name = pm_strdup("a");
    s->fields[1].name = pm_strdup("b");
    pm_type_parse_sql("INT", &s->fields[0].type, &e);
    pm_type_parse_sql("STRING", &s->fields[1].type, &e);
    int rc = pm_create_table(path, s, &e);
    pm_schema_free(s);
    paimon_table *t = NULL;
    if (!rc) rc = pm_table_open(path, NULL, &t, &e);
    if (rc) fprintf(stderr, "  %s\n", e.msg);
    return t;
}

/* schema-1 as another writer would have made it: b dropped */
static char *schema1_without_b(paimon_table *t) {
    pm_schema_change drop = {PM_ALTER_DROP_COLUMN, "b", NULL, NULL, NULL, 0, 0};
    pm_schema *s = NULL;
    pm_err e = {0};
    if (pm_alter_apply(t->schema, &drop, 1, 0, &s, &e)) return NULL;
    pm_buf b = {0};
    pm_schema_to_json(s, &b);
    pm_buf_cstr(&b);
    pm_schema_free(s);
    return (char *)b.data;
}

static void race(paimon_table *t, char *json) {
    real_ops = t->io->ops;
    racing_ops = *real_ops;
    racing_ops.create_no_replace = racing_create;
    t->io->ops = &racing_ops;
    competitor = json;
    raced = 0;
}

TEST(test_concurrent_alter_reapplies) {
    char *dir;
    paimon_table *t = new_table(&dir);
    CHECK(t != NULL);
    if (!t) return;
    char *json = schema1_without_b(t);
    race(t, json);
    pm_schema_change add = {PM_ALTER_ADD_COLUMN, "c", "BIGINT", NULL, NULL, 0, 0};
    pm_schema *s = NULL;
    pm_err e = {0};
    CHECK_EQ_INT(pm_alter_table(t, &add, 1, 0, &s, &e), PAIMON_OK);
    CHECK_EQ_INT(raced, 1);
    if (s) {
        CHECK_EQ_INT(s->id, 2);                 /* on top of the other writer's schema-1 */
        CHECK_EQ_INT(s->n_fields, 2);           /* a, c: b stays dropped */
        CHECK_EQ_STR(s->fields[1].name, "c");
        CHECK_EQ_INT(s->fields[1].id, 2);
        CHECK_EQ_INT(s->highest_field_id, 2);
        CHECK_EQ_INT(t->schema->id, 2);         /* the handle took it */
    }
    pm_schema_free(s);
    t->io->ops = real_ops;
    free(json);
    pm_table_free(t);
    tu_rm_rf(dir);
    free(dir);
}

TEST(test_concurrent_alter_no_longer_applies) {
    char *dir;
    paimon_table *t = new_table(&dir);
    CHECK(t != NULL);
    if (!t) return;
    char *json = schema1_without_b(t);
    race(t, json);
    pm_schema_change ren = {PM_ALTER_RENAME_COLUMN, "b", "bee", NULL, NULL, 0, 0};
    pm_schema *s = NULL;
    pm_err e = {0};
    CHECK_EQ_INT(pm_alter_table(t, &ren, 1, 0, &s, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "schema-1 was written concurrently and the change no longer applies: "
                        "Column b does not exist in the t table.") != NULL);
    CHECK(s == NULL);
    char p[600];
    snprintf(p, sizeof p, "%s/t/schema/schema-2", dir);
    CHECK(!tu_file_exists(p));
    CHECK_EQ_INT(t->schema->id, 0);
    t->io->ops = real_ops;
    free(json);
    pm_table_free(t);
    tu_rm_rf(dir);
    free(dir);
}

static int cast_ok(const char *a, const char *b, int explicit_) {
    pm_type *x = NULL, *y = NULL;
    pm_err e = {0};
    pm_type_parse_sql(a, &x, &e);
    pm_type_parse_sql(b, &y, &e);
    int r = x && y && pm_alter_cast_allowed(x, y, explicit_);
    pm_type_free(x);
    pm_type_free(y);
    return r;
}

TEST(test_cast_rules) {
    CHECK(cast_ok("INT", "BIGINT", 0));
    CHECK(cast_ok("TINYINT", "DOUBLE", 0));
    CHECK(!cast_ok("BIGINT", "INT", 0));          /* narrowing: explicit only */
    CHECK(cast_ok("BIGINT", "INT", 1));
    CHECK(cast_ok("INT", "STRING", 1));
    CHECK(!cast_ok("INT", "STRING", 0));
    CHECK(cast_ok("STRING", "DATE", 1));
    CHECK(cast_ok("VARCHAR(10)", "VARCHAR(20)", 0));
    CHECK(cast_ok("DECIMAL(5, 2)", "DECIMAL(10, 4)", 0));
    CHECK(cast_ok("TIMESTAMP(3)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", 0));
    CHECK(!cast_ok("DATE", "DATE", 1));           /* no CastExecutors rule: Java refuses it too */
    CHECK(!cast_ok("DATE", "BOOLEAN", 1));
    CHECK(!cast_ok("INT", "ARRAY<INT>", 1));
    CHECK(!cast_ok("ARRAY<INT>", "ARRAY<BIGINT>", 1));
    CHECK(cast_ok("ARRAY<INT>", "STRING", 1));
    CHECK(!cast_ok("INT", "INT NOT NULL", 0));    /* nullable to NOT NULL needs explicit */
    CHECK(cast_ok("BOOLEAN", "INT", 1));
    CHECK(!cast_ok("BOOLEAN", "DATE", 1));
    CHECK(cast_ok("BYTES", "BINARY(4)", 1));
}

/* keys in the order Java's HashMap copy iterates them: a copy of a small map
 * has 8 buckets, not 16 (with 16, scan.fallback-branch would come second) */
TEST(test_hashmap_copy_order) {
    /* the Java fixture append_table_with_append_pt_branch: schema-0's three
     * options, then scan.fallback-branch put: Java wrote it last */
    const char *want[] = {"bucket", "manifest.format", "file.format", "scan.fallback-branch"};
    pm_kv kv[4] = {{(char *)"bucket", (char *)"-1"}, {(char *)"manifest.format", (char *)"avro"},
                   {(char *)"file.format", (char *)"parquet"}, {(char *)"scan.fallback-branch", (char *)"test"}};
    CHECK_EQ_INT(pm_java_hashmap_copy_order(kv, 4), PAIMON_OK);
    for (int i = 0; i < 4; i++) CHECK_EQ_STR(kv[i].key, want[i]);
    /* insertion order is not kept: by bucket first */
    pm_kv kv2[3] = {{(char *)"k", (char *)"1"}, {(char *)"snapshot.num-retained.max", (char *)"2"},
                    {(char *)"bucket", (char *)"3"}};
    CHECK_EQ_INT(pm_java_hashmap_copy_order(kv2, 3), PAIMON_OK);
    CHECK_EQ_STR(kv2[0].key, "bucket");
    CHECK_EQ_STR(kv2[1].key, "snapshot.num-retained.max");
    CHECK_EQ_STR(kv2[2].key, "k");
}

int main(void) {
    RUN(test_concurrent_alter_reapplies);
    RUN(test_concurrent_alter_no_longer_applies);
    RUN(test_cast_rules);
    RUN(test_hashmap_copy_order);
    return TEST_SUMMARY();
}
