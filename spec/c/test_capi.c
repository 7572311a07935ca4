/* The maintenance part of the public C API (paimon.h): options (replace,
 * repeat, unknown keys, malformed values), result accessors by dotted
 * path, errors on the table handle, NULL handling; and the operations on
 * a temp copy of a Java-written table, checked with the public read API
 * (snapshot ids, the live files). Whole-fixture comparisons with the Lua
 * methods are in spec/capi_spec.lua. */
#include "test.h"

#include <jansson.h>
#include <paimon.h>

#define BITMAP "cpp-parquet-append_with_bitmap/append_with_bitmap.db/append_with_bitmap"
#define PARTED "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"
#define TMP_PREFIX "/tmp/pm_test_capi."

static char *tree_of(const char *dir) { return tu_tree(dir, 0); }

static paimon_table *open_copy(tu_copy *c, const char *fixture) {
    if (tu_copy_make(c, TMP_PREFIX, fixture)) return NULL;
    usleep(20000);   /* every copied file is older than "now" */
    paimon_table *t = NULL;
    char *err = NULL;
    if (paimon_table_open(c->table, NULL, &t, &err)) {
        fprintf(stderr, "open %s: %s\n", c->table, err ? err : "?");
        paimon_free(err);
        return NULL;
    }
    return t;
}

static paimon_options *opts(const char *const *kv) {
    paimon_options *o = paimon_options_new();
    for (size_t i = 0; o && kv[i]; i += 2)
        if (paimon_options_set(o, kv[i], kv[i + 1])) { paimon_options_free(o); return NULL; }
    return o;
}

/* Count of live data files of the latest snapshot whose partition path starts with prefix. */
static long live_files(paimon_table *t, const char *prefix) {
    int64_t id;
    if (paimon_latest_snapshot_id(t, &id)) return -1;
    paimon_snapshot *s;
    if (paimon_snapshot_load(t, id, &s)) return -1;
    paimon_file_iter *it;
    if (paimon_file_iter_open(t, s, &it)) { paimon_snapshot_free(s); return -1; }
    paimon_file_info fi;
    long n = 0;
    int rc;
    while ((rc = paimon_file_iter_next(it, &fi)) == PAIMON_OK)
        if (!strncmp(fi.partition, prefix, strlen(prefix))) n++;
    paimon_file_iter_close(it);
    paimon_snapshot_free(s);
    return rc == PAIMON_DONE ? n : -1;
}

/* A paimon_result_write_json writer gathering what it is given; from call
 * fail_at on (-1: never) it refuses. */
typedef struct sink {
    pm_buf b;
    int calls, fail_at;
} sink;

static int sink_write(void *ud, const char *p, size_t n) {
    sink *s = ud;
    if (s->fail_at >= 0 && s->calls >= s->fail_at) return -1;
    s->calls++;
    return pm_buf_append(&s->b, p, n);
}

/* The streamed bytes are paimon_result_json's, and those are jansson's
 * compact rendering of themselves (what this face printed before it
 * streamed: key order, escapes, no key twice). Returns the pieces written. */
static int check_json_forms(const paimon_result *r) {
    sink s = {{0}, 0, -1};
    CHECK_EQ_INT(paimon_result_write_json(r, sink_write, &s), PAIMON_OK);
    const char *json = paimon_result_json(r);
    CHECK(json != NULL && json == paimon_result_json(r));   /* made once */
    CHECK(json && s.b.len == strlen(json) && !memcmp(s.b.data, json, s.b.len));
    json_error_t je;
    json_t *j = json ? json_loads(json, JSON_REJECT_DUPLICATES, &je) : NULL;
    char *again = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    CHECK(again && json && !strcmp(again, json));
    free(again);
    json_decref(j);
    pm_buf_free(&s.b);
    return s.calls;
}

TEST(options_replace_repeat_and_reject_null) {
    paimon_options *o = paimon_options_new();
    CHECK(o != NULL);
    CHECK_EQ_INT(paimon_options_set(o, "retain-min", "5"), PAIMON_OK);
    CHECK_EQ_INT(paimon_options_set(o, "retain-min", "bad"), PAIMON_OK);   /* replaces: checked when used */
    CHECK_EQ_INT(paimon_options_set(o, NULL, "1"), PAIMON_MISUSE);
    CHECK_EQ_INT(paimon_options_set(o, "", "1"), PAIMON_MISUSE);
    CHECK_EQ_INT(paimon_options_set(o, "threads", NULL), PAIMON_MISUSE);
    CHECK_EQ_INT(paimon_options_set(NULL, "threads", "1"), PAIMON_MISUSE);
    tu_copy c;
    paimon_table *t = open_copy(&c, BITMAP);
    CHECK(t != NULL);
    if (!t) { paimon_options_free(o); return; }
    char *before = tu_tree(c.table, 0);
    paimon_result *r = (paimon_result *)1;
    /* the replacing value is the one used */
    CHECK_EQ_INT(paimon_expire_snapshots(t, o, &r), PAIMON_MISUSE);
    CHECK(r == NULL);
    CHECK(strstr(paimon_table_errmsg(t), "option 'retain-min' must be an integer, got 'bad'") != NULL);
    CHECK_EQ_INT(paimon_expire_snapshots(t, o, NULL), PAIMON_MISUSE);
    CHECK_EQ_INT(paimon_expire_snapshots(NULL, o, &r), PAIMON_MISUSE);
    paimon_options_free(o);
    paimon_options_free(NULL);
    paimon_result_free(NULL);
    CHECK(paimon_result_json(NULL) == NULL);
    tu_check_tree_same(tree_of, c.table, before);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

TEST(unknown_and_malformed_options_refuse_before_anything) {
    tu_copy c;
    paimon_table *t = open_copy(&c, BITMAP);
    CHECK(t != NULL);
    if (!t) return;
    char *before = tu_tree(c.table, 0);
    static const struct { int (*op)(paimon_table *, const paimon_options *, paimon_result **); const char *kv[5];
                          const char *msg; } cases[] = {
        {paimon_expire_snapshots, {"retain_min", "1", NULL}, "unknown option 'retain_min'"},
        {paimon_expire_snapshots, {"retain-max", "-3", NULL}, "option 'retain-max' must be between 1"},
        {paimon_expire_snapshots, {"until", "+4", NULL}, "option 'until' must be an integer"},
        {paimon_expire_snapshots, {"clean-empty-directories", "1", NULL}, "must be true or false"},
        {paimon_expire_snapshots, {"older-than", "soon", NULL}, "option 'older-than'"},
        {paimon_remove_orphan_files, {"threads", "257", NULL}, "option 'threads' must be between 1 and 256"},
        {paimon_remove_orphan_files, {"older-than", "1h", "older-than-ms", "1"}, "exclude each other"},
        {paimon_verify, {"all_snapshots", "true", NULL}, "verify: unknown option 'all_snapshots'"},
        {paimon_drop_partitions, {"max-attempts", "0", NULL}, "option 'max-attempts' must be between 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        paimon_options *o = opts(cases[i].kv);
        paimon_result *r = NULL;
        int rc = cases[i].op(t, o, &r);
        CHECK_EQ_INT(rc, PAIMON_MISUSE);
        CHECK(r == NULL);
        if (!strstr(paimon_table_errmsg(t), cases[i].msg)) {
            fprintf(stderr, "  case %zu: '%s' lacks '%s'\n", i, paimon_table_errmsg(t), cases[i].msg);
            CHECK(0);
        }
        paimon_options_free(o);
    }
    /* the bitmap table is not partitioned */
    paimon_options *o = opts((const char *const[]){"partition", "a=1", NULL});
    paimon_result *r = NULL;
    CHECK_EQ_INT(paimon_drop_partitions(t, o, &r), PAIMON_MISUSE);
    CHECK(strstr(paimon_table_errmsg(t), "is not partitioned") != NULL);
    paimon_options_free(o);
    tu_check_tree_same(tree_of, c.table, before);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

TEST(expire_result_by_path_and_the_table_after) {
    tu_copy c;
    paimon_table *t = open_copy(&c, PARTED);
    CHECK(t != NULL);
    if (!t) return;
    int64_t earliest, latest;
    CHECK_EQ_INT(paimon_earliest_snapshot_id(t, &earliest), PAIMON_OK);
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &latest), PAIMON_OK);
    CHECK(latest > earliest);
    long live_before = live_files(t, "");
    /* a dry run: the plan, nothing changed */
    char *before = tu_tree(c.table, 0);
    paimon_options *o = opts((const char *const[]){"retain-min", "1", "older-than", "0 s", "max-deletes", "1000",
                                                   "dry-run", "true", NULL});
    paimon_result *r = NULL;
    CHECK_EQ_INT(paimon_expire_snapshots(t, o, &r), PAIMON_OK);
    tu_check_tree_same(tree_of, c.table, before);
    int64_t v = -1, files = -1, paths = -1;
    CHECK_EQ_INT(paimon_result_int(r, "expired", &v), PAIMON_OK);
    CHECK_EQ_INT(v, latest - earliest);
    CHECK_EQ_INT(paimon_result_int(r, "dry_run", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 1);
    CHECK_EQ_INT(paimon_result_int(r, "range.0", &v), PAIMON_OK);
    CHECK_EQ_INT(v, earliest);
    CHECK_EQ_INT(paimon_result_int(r, "range.1", &v), PAIMON_OK);
    CHECK_EQ_INT(v, latest - 1);
    CHECK_EQ_INT(paimon_result_int(r, "range.2", &v), PAIMON_NOTFOUND);
    CHECK_EQ_INT(paimon_result_int(r, "plan.end", &v), PAIMON_OK);
    CHECK_EQ_INT(v, latest);
    CHECK_EQ_INT(paimon_result_int(r, "deleted.snapshots", &v), PAIMON_OK);
    CHECK_EQ_INT(v, latest - earliest);
    CHECK_EQ_INT(paimon_result_int(r, "files", &files), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "paths", &paths), PAIMON_OK);   /* an array: its length */
    CHECK_EQ_INT(paths, files);
    CHECK(files > latest - earliest);
    CHECK_EQ_STR(paimon_result_str(r, "capped_by"), "retain-min");
    CHECK_EQ_STR(paimon_result_str(r, "paths.0.kind"), "data_files");
    CHECK(paimon_result_str(r, "expired") == NULL);
    CHECK_EQ_INT(paimon_result_int(r, "capped_by", &v), PAIMON_MISUSE);   /* a string */
    CHECK_EQ_INT(paimon_result_int(r, "nope", &v), PAIMON_NOTFOUND);
    CHECK_EQ_INT(paimon_result_int(r, "deleted..data_files", &v), PAIMON_NOTFOUND);
    CHECK_EQ_INT(paimon_result_int(r, "paths.x", &v), PAIMON_NOTFOUND);
    CHECK_EQ_INT(paimon_result_int(r, "", &v), PAIMON_NOTFOUND);
    const char *json = paimon_result_json(r);
    CHECK(json && json[0] == '{' && strstr(json, "\"expired\":") && strstr(json, "\"plan\":{"));
    check_json_forms(r);
    paimon_result_free(r);
    /* for real: only the latest snapshot is left, its live files unchanged */
    paimon_options_set(o, "dry-run", "false");
    CHECK_EQ_INT(paimon_expire_snapshots(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "expired", &v), PAIMON_OK);
    CHECK_EQ_INT(v, latest - earliest);
    CHECK_EQ_INT(paimon_result_int(r, "files", &v), PAIMON_OK);
    CHECK_EQ_INT(v, files);
    CHECK_EQ_INT(paimon_result_int(r, "failures", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 0);
    check_json_forms(r);
    paimon_result_free(r);
    CHECK_EQ_INT(paimon_earliest_snapshot_id(t, &v), PAIMON_OK);
    CHECK_EQ_INT(v, latest);
    CHECK_EQ_INT(live_files(t, ""), live_before);
    /* verify: the table is whole */
    CHECK_EQ_INT(paimon_verify(t, NULL, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "ok", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 1);
    paimon_result_free(r);
    paimon_options_free(o);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

TEST(drop_marks_the_partition_deleted) {
    tu_copy c;
    paimon_table *t = open_copy(&c, PARTED);
    CHECK(t != NULL);
    if (!t) return;
    long pt1 = live_files(t, "pt=1/"), pt2 = live_files(t, "pt=2/");
    CHECK(pt1 > 0 && pt2 > 0);
    paimon_options *o = opts((const char *const[]){"partition", "pt=1", NULL});
    paimon_result *r = NULL;
    CHECK_EQ_INT(paimon_drop_partitions(t, o, &r), PAIMON_OK);
    int64_t v = -1, sid = -1;
    CHECK_EQ_INT(paimon_result_int(r, "files", &v), PAIMON_OK);
    CHECK_EQ_INT(v, pt1);
    CHECK_EQ_INT(paimon_result_int(r, "partitions", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 1);
    CHECK_EQ_STR(paimon_result_str(r, "partitions.0.path"), "pt=1/");
    CHECK_EQ_INT(paimon_result_int(r, "snapshot_id", &sid), PAIMON_OK);
    paimon_result_free(r);
    int64_t latest;
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &latest), PAIMON_OK);
    CHECK_EQ_INT(latest, sid);
    CHECK_EQ_INT(live_files(t, "pt=1/"), 0);
    CHECK_EQ_INT(live_files(t, "pt=2/"), pt2);
    /* nothing left to drop: no snapshot */
    CHECK_EQ_INT(paimon_drop_partitions(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "files", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 0);
    CHECK_EQ_INT(paimon_result_int(r, "snapshot_id", &v), PAIMON_NOTFOUND);
    paimon_result_free(r);
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &v), PAIMON_OK);
    CHECK_EQ_INT(v, sid);
    paimon_options_free(o);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

TEST(orphans_dry_run_lists_and_real_run_removes) {
    tu_copy c;
    paimon_table *t = open_copy(&c, BITMAP);
    CHECK(t != NULL);
    if (!t) return;
    char *before = tu_tree(c.table, 0);
    paimon_options *o = opts((const char *const[]){"older-than", "0ms", "dry-run", "true", "allow-young-cutoff", "true",
                                                  NULL});
    paimon_result *r = NULL;
    CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_OK);
    tu_check_tree_same(tree_of, c.table, before);
    int64_t planned = -1, v = -1;
    CHECK_EQ_INT(paimon_result_int(r, "files", &planned), PAIMON_OK);
    CHECK(planned > 0);   /* the fixture ships unreferenced files */
    char first[512];
    snprintf(first, sizeof first, "%s", paimon_result_str(r, "paths.0.path") ? paimon_result_str(r, "paths.0.path") : "");
    CHECK(tu_file_exists(first));
    paimon_result_free(r);
    /* a cut-off in the future is refused */
    paimon_options *f = opts((const char *const[]){"older-than-ms", "99999999999999", NULL});
    CHECK_EQ_INT(paimon_remove_orphan_files(t, f, &r), PAIMON_MISUSE);
    CHECK(strstr(paimon_table_errmsg(t), "in the future") != NULL);
    paimon_options_free(f);
    paimon_options_set(o, "dry-run", "false");
    CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "files", &v), PAIMON_OK);
    CHECK_EQ_INT(v, planned);
    CHECK_EQ_INT(paimon_result_int(r, "paths", &v), PAIMON_NOTFOUND);   /* listed in dry runs only */
    paimon_result_free(r);
    CHECK(!tu_file_exists(first));
    CHECK_EQ_INT(paimon_verify(t, NULL, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "ok", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 1);
    paimon_result_free(r);
    paimon_options_free(o);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

/* paimon_rollback (issue 23): by default only metadata goes (Java 1.2+),
 * "purge-files" plans and deletes the files too, "to-watermark" is Java's
 * rollback_to_watermark (the fixture's snapshots carry none). */
TEST(rollback_modes_and_watermark_through_the_c_api) {
    tu_copy c;
    paimon_table *t = open_copy(&c, PARTED);
    CHECK(t != NULL);
    if (!t) return;
    paimon_result *r = NULL;
    int64_t v = -1;
    paimon_options *o = opts((const char *const[]){"to-snapshot", "3", "dry-run", "true", "purge-files", "true", NULL});
    CHECK_EQ_INT(paimon_rollback(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "purge_files", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 1);
    CHECK_EQ_INT(paimon_result_int(r, "files", &v), PAIMON_OK);
    CHECK(v > 0);
    paimon_result_free(r);
    paimon_options_free(o);
    /* as-latest deletes nothing: purge-files does not go with it */
    o = opts((const char *const[]){"to-snapshot", "3", "as-latest", "true", "purge-files", "true", NULL});
    CHECK_EQ_INT(paimon_rollback(t, o, &r), PAIMON_MISUSE);
    CHECK(strstr(paimon_table_errmsg(t), "purge-files") != NULL);
    paimon_options_free(o);
    o = opts((const char *const[]){"to-watermark", "1000", NULL});
    CHECK_EQ_INT(paimon_rollback(t, o, &r), PAIMON_NOTFOUND);
    CHECK(strstr(paimon_table_errmsg(t), "no snapshot with a watermark at or before 1000") != NULL);
    paimon_options_free(o);
    o = opts((const char *const[]){"to-watermark", "-x", NULL});
    CHECK_EQ_INT(paimon_rollback(t, o, &r), PAIMON_MISUSE);
    paimon_options_free(o);
    /* the real run: nothing but snapshot and tag files goes */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd '%s' && find . -type f ! -path './snapshot/snapshot-*' ! -path './tag/*' | sort",
             c.table);
    char *before = tu_sh_out(cmd, NULL);
    o = opts((const char *const[]){"to-snapshot", "3", NULL});
    CHECK_EQ_INT(paimon_rollback(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "purge_files", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 0);
    /* only metadata goes, accounted by kind */
    static const char *const kept[] = {"deleted.data_files", "deleted.manifests", "deleted.manifest_lists",
                                       "deleted.index_files", "deleted.index_manifests"};
    for (size_t k = 0; k < sizeof kept / sizeof *kept; k++) {
        CHECK_EQ_INT(paimon_result_int(r, kept[k], &v), PAIMON_OK);
        CHECK_EQ_INT(v, 0);
    }
    int64_t n_snap = 0, n_tags = 0, files = 0;
    CHECK_EQ_INT(paimon_result_int(r, "deleted.snapshots", &n_snap), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "deleted.tags", &n_tags), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "files", &files), PAIMON_OK);
    CHECK(n_snap > 0);
    CHECK_EQ_INT(files, n_snap + n_tags);
    CHECK_EQ_INT(paimon_result_int(r, "snapshots.0", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 5);
    paimon_result_free(r);
    paimon_options_free(o);
    char *after = tu_sh_out(cmd, NULL);
    CHECK_EQ_STR(after, before);
    free(before);
    free(after);
    int64_t latest = 0;
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &latest), PAIMON_OK);
    CHECK_EQ_INT(latest, 3);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

/* paimon_purge_files (issue 23, Java's purge_files): the dry run changes
 * nothing and plans what the real run deletes; afterwards one snapshot
 * that reads empty. */
TEST(purge_files_through_the_c_api) {
    tu_copy c;
    paimon_table *t = open_copy(&c, PARTED);
    CHECK(t != NULL);
    if (!t) return;
    char *before = tu_tree(c.table, 0);
    paimon_options *o = opts((const char *const[]){"dry-run", "true", NULL});
    paimon_result *r = NULL;
    int64_t planned = -1, v = -1;
    CHECK_EQ_INT(paimon_purge_files(t, o, &r), PAIMON_OK);
    tu_check_tree_same(tree_of, c.table, before);
    CHECK_EQ_INT(paimon_result_int(r, "files", &planned), PAIMON_OK);
    CHECK(planned > 0);
    CHECK_EQ_INT(paimon_result_int(r, "latest", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 6);
    CHECK(paimon_result_str(r, "branches.0") && !strcmp(paimon_result_str(r, "branches.0"), "fallback"));
    paimon_result_free(r);
    paimon_options_set(o, "dry-run", "false");
    CHECK_EQ_INT(paimon_purge_files(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "files", &v), PAIMON_OK);
    CHECK_EQ_INT(v, planned);
    paimon_result_free(r);
    paimon_options_free(o);
    o = opts((const char *const[]){"bogus", "1", NULL});
    CHECK_EQ_INT(paimon_purge_files(t, o, &r), PAIMON_MISUSE);
    paimon_options_free(o);
    int64_t latest = 0;
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &latest), PAIMON_OK);
    CHECK_EQ_INT(latest, 6);
    CHECK_EQ_INT(live_files(t, ""), 0);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

/* A dry run's plan stays compact in the result: paimon_result_write_json
 * streams it in pieces, a row is found by path as in the JSON, names that
 * need escapes come out as jansson wrote them, a writer's refusal stops
 * the output (PAIMON_IO) and a name that is not UTF-8 has no JSON form. */
TEST(json_streams_a_large_plan_and_rows_by_path) {
    tu_copy c;
    paimon_table *t = open_copy(&c, BITMAP);
    CHECK(t != NULL);
    if (!t) return;
    paimon_options *o = opts((const char *const[]){"older-than", "0ms", "dry-run", "true", "allow-young-cutoff", "true",
                                                  NULL});
    paimon_result *r = NULL;
    CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_OK);
    char dir[512], name[1024];
    snprintf(dir, sizeof dir, "%s", paimon_result_str(r, "paths.0.path") ? paimon_result_str(r, "paths.0.path") : "");
    paimon_result_free(r);
    char *slash = strrchr(dir, '/');
    CHECK(slash != NULL);
    if (!slash) goto out;
    *slash = '\0';
    if (!strncmp(dir, "file:", 5)) memmove(dir, dir + 5, strlen(dir + 5) + 1);
    for (int i = 0; i < 1500; i++) {   /* about 300 KiB of JSON: several pieces */
        snprintf(name, sizeof name, "%s/manifest-orphan-%04d-%0120d", dir, i, 0);
        CHECK_EQ_INT(tu_write_file(name, "x", 1), 0);
    }
    snprintf(name, sizeof name, "%s/manifest-odd \"q\" \\b\x1f\t \xc3\xa9", dir);
    CHECK_EQ_INT(tu_write_file(name, "x", 1), 0);
    usleep(20000);
    CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_OK);
    int64_t files = -1, n = -1, v = -1;
    CHECK_EQ_INT(paimon_result_int(r, "files", &files), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "paths", &n), PAIMON_OK);
    CHECK(files > 1500);
    CHECK_EQ_INT(n, files);
    CHECK(check_json_forms(r) > 2);
    const char *json = paimon_result_json(r);
    CHECK(json && strstr(json, "manifest-odd \\\"q\\\" \\\\b\\u001F\\t \xc3\xa9\""));
    /* every row by path is the JSON's row */
    json_error_t je;
    json_t *j = json ? json_loads(json, 0, &je) : NULL, *paths = json_object_get(j, "paths");
    CHECK_EQ_INT(json_array_size(paths), files);
    for (size_t i = 0; i < json_array_size(paths); i++) {
        json_t *row = json_array_get(paths, i);
        char key[64];
        snprintf(key, sizeof key, "paths.%zu.path", i);
        CHECK_EQ_STR(paimon_result_str(r, key), json_string_value(json_object_get(row, "path")));
        snprintf(key, sizeof key, "paths.%zu.kind", i);
        CHECK_EQ_STR(paimon_result_str(r, key), json_string_value(json_object_get(row, "kind")));
        snprintf(key, sizeof key, "paths.%zu.size", i);
        CHECK_EQ_INT(paimon_result_int(r, key, &v), PAIMON_OK);
        CHECK_EQ_INT(v, json_integer_value(json_object_get(row, "size")));
    }
    json_decref(j);
    /* a row's string stays valid after other rows are looked up */
    const char *p0 = paimon_result_str(r, "paths.0.path");
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", p0 ? p0 : "");
    CHECK_EQ_STR(paimon_result_str(r, "paths.01.path"), paimon_result_str(r, "paths.1.path"));
    CHECK_EQ_STR(p0, copy);
    CHECK(paimon_result_str(r, "paths.0.message") == NULL);
    CHECK(paimon_result_str(r, "paths.0.") == NULL);
    CHECK(paimon_result_str(r, "paths.-1.path") == NULL);
    CHECK_EQ_INT(paimon_result_int(r, "paths.0", &v), PAIMON_MISUSE);   /* an object */
    CHECK_EQ_INT(paimon_result_int(r, "paths.0.path", &v), PAIMON_MISUSE);
    snprintf(name, sizeof name, "paths.%lld.path", (long long)files);
    CHECK(paimon_result_str(r, name) == NULL);
    CHECK_EQ_INT(paimon_result_int(r, name, &v), PAIMON_NOTFOUND);
    /* the writer says no: it is not called again, PAIMON_IO */
    for (int fail_at = 0; fail_at < 3; fail_at++) {
        sink s = {{0}, 0, fail_at};
        CHECK_EQ_INT(paimon_result_write_json(r, sink_write, &s), PAIMON_IO);
        CHECK_EQ_INT(s.calls, fail_at);
        CHECK(json && s.b.len < strlen(json) && (!s.b.len || !memcmp(s.b.data, json, s.b.len)));
        CHECK(fail_at == 0 || s.b.len > 0);
        pm_buf_free(&s.b);
    }
    CHECK_EQ_INT(paimon_result_write_json(NULL, sink_write, NULL), PAIMON_MISUSE);
    CHECK_EQ_INT(paimon_result_write_json(r, NULL, NULL), PAIMON_MISUSE);
    paimon_result_free(r);
    /* a file name that is not UTF-8: the result is there, its JSON is not */
    snprintf(name, sizeof name, "%s/manifest-bad-\xff", dir);
    CHECK_EQ_INT(tu_write_file(name, "x", 1), 0);
    usleep(20000);
    CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "files", &v), PAIMON_OK);
    CHECK_EQ_INT(v, files + 1);
    sink s = {{0}, 0, -1};
    CHECK_EQ_INT(paimon_result_write_json(r, sink_write, &s), PAIMON_CORRUPT);
    CHECK(paimon_result_json(r) == NULL);
    pm_buf_free(&s.b);
    paimon_result_free(r);
out:
    paimon_options_free(o);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

/* The core's floor holds for every face: a cut-off less than 1 h ago is
 * refused (dry runs too) unless allow-young-cutoff=true, and the result
 * records the override. */
TEST(orphans_refuse_a_cutoff_below_the_floor_unless_allowed) {
    tu_copy c;
    paimon_table *t = open_copy(&c, BITMAP);
    CHECK(t != NULL);
    if (!t) return;
    char *before = tu_tree(c.table, 0);
    const char *const young[][7] = {
        {"older-than", "59m", NULL},
        {"older-than", "0s", "dry-run", "true", NULL},
        {"older-than", "3s", "allow-young-cutoff", "false", NULL},
    };
    paimon_result *r = NULL;
    for (size_t i = 0; i < sizeof young / sizeof young[0]; i++) {
        paimon_options *o = opts(young[i]);
        CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_MISUSE);
        CHECK(r == NULL);
        CHECK(strstr(paimon_table_errmsg(t), "younger than the safety floor (60 minutes") != NULL);
        CHECK(strstr(paimon_table_errmsg(t), "allow-young-cutoff") != NULL);
        CHECK(strstr(paimon_table_errmsg(t), c.table) != NULL);
        paimon_options_free(o);
    }
    tu_check_tree_same(tree_of, c.table, before);
    /* at the floor, and the default (1 day): no override */
    const char *const fine[][5] = {{"older-than", "1h", "dry-run", "true", NULL}, {"dry-run", "true", NULL}};
    int64_t v = -1;
    for (size_t i = 0; i < 2; i++) {
        paimon_options *o = opts(fine[i]);
        CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_OK);
        CHECK_EQ_INT(paimon_result_int(r, "floor_overridden", &v), PAIMON_OK);
        CHECK_EQ_INT(v, 0);
        CHECK_EQ_INT(paimon_result_int(r, "cutoff_floor", &v), PAIMON_OK);
        CHECK_EQ_INT(v, 3600000);
        paimon_result_free(r);
        paimon_options_free(o);
    }
    /* overridden: it runs, and says so */
    paimon_options *o = opts((const char *const[]){"older-than", "0s", "allow-young-cutoff", "true", NULL});
    CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "floor_overridden", &v), PAIMON_OK);
    CHECK_EQ_INT(v, 1);
    CHECK_EQ_INT(paimon_result_int(r, "files", &v), PAIMON_OK);
    CHECK(v > 0);   /* the fixture ships unreferenced files */
    paimon_result_free(r);
    paimon_options_free(o);
    paimon_table_close(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

/* ---- URIs and FileIO options (paimon_table_open_v2 / _create_v2) --------------------
 * The S3 FileIO is replaced by a stand-in that records what it is handed
 * and serves a local directory, so this holds whatever client is built in. */

static int s3_calls;
static char s3_base[200], s3_options[600];

static int standin_s3_open(const char *uri, const char *const *options, pm_fileio **out, pm_err *e) {
    (void)uri;
    s3_calls++;
    s3_options[0] = '\0';
    for (size_t i = 0; options && options[i]; i += 2)
        snprintf(s3_options + strlen(s3_options), sizeof s3_options - strlen(s3_options), "%s=%s;", options[i],
                 options[i + 1]);
    *out = pm_fileio_mapped_new("s3://", s3_base);
    return *out ? PAIMON_OK : pm_nomem(e);
}

TEST(open_v2_and_create_v2_hand_options_to_the_fileio) {
    pm_fileio_opener old = pm_fileio_set_s3_opener(standin_s3_open);
    tu_copy c;
    snprintf(c.dir, sizeof c.dir, "%sXXXXXX", TMP_PREFIX);
    CHECK(mkdtemp(c.dir) != NULL);
    snprintf(s3_base, sizeof s3_base, "%s", c.dir);
    snprintf(c.table, sizeof c.table, "%s/bk", c.dir);
    mkdir(c.table, 0755);
    snprintf(c.table, sizeof c.table, "%s/bk/t", c.dir);
    CHECK(tu_cp_fixture(BITMAP, c.table) == 0);
    const char *options[] = {"s3.endpoint", "http://127.0.0.1:7480", "s3.access-key", "AK",
                             "s3.secret-key", "S3CR3T-C", NULL};
    s3_calls = 0;
    paimon_table *t = NULL;
    char *err = NULL;
    CHECK_EQ_INT(paimon_table_open_v2("s3://bk/t", NULL, options, &t, &err), PAIMON_OK);
    CHECK(err == NULL);
    CHECK_EQ_INT(s3_calls, 1);
    CHECK_EQ_STR(s3_options, "s3.endpoint=http://127.0.0.1:7480;s3.access-key=AK;s3.secret-key=S3CR3T-C;");
    if (t) {
        CHECK_EQ_STR(paimon_table_path(t), "s3://bk/t");
        int64_t id = 0;
        CHECK_EQ_INT(paimon_latest_snapshot_id(t, &id), PAIMON_OK);
        CHECK(id > 0);
        /* maintenance runs on the table's FileIO: no second one opened */
        paimon_result *r = NULL;
        CHECK_EQ_INT(paimon_verify(t, NULL, &r), PAIMON_OK);
        int64_t ok = 0, not_checked = -1;
        CHECK_EQ_INT(paimon_result_int(r, "ok", &ok), PAIMON_OK);
        CHECK(ok == 1);
        CHECK_EQ_INT(paimon_result_int(r, "not_checked", &not_checked), PAIMON_OK);
        CHECK_EQ_INT(not_checked, 0);
        CHECK(r && !strstr(paimon_result_json(r), "S3CR3T"));
        paimon_result_free(r);
        paimon_options *o = paimon_options_new();
        paimon_options_set(o, "dry-run", "true");
        CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_OK);
        CHECK(r && !strstr(paimon_result_json(r), "S3CR3T"));
        paimon_result_free(r);
        /* FileIO options are not operation options */
        paimon_options_set(o, "s3.secret-key", "S3CR3T-C");
        CHECK_EQ_INT(paimon_remove_orphan_files(t, o, &r), PAIMON_MISUSE);
        CHECK(!strstr(paimon_table_errmsg(t), "S3CR3T"));
        paimon_options_free(o);
        CHECK_EQ_INT(s3_calls, 1);
        paimon_table_close(t);
    }
    /* a misspelt S3 option: refused by name, the value never shown */
    const char *misspelt[] = {"s3.secret-key", "S3CR3T-C", "s3.endpoit", "http://x", NULL};
    CHECK_EQ_INT(paimon_table_open_v2("s3://bk/t", NULL, misspelt, &t, &err), PAIMON_MISUSE);
    CHECK(t == NULL && err && strstr(err, "s3.endpoit") && !strstr(err, "S3CR3T"));
    paimon_free(err);
    /* create: the options reach the FileIO, not the schema */
    paimon_column cols[] = {{"id", "BIGINT", NULL}};
    const char *table_opts[] = {"file.format", "avro"};
    paimon_table_spec spec = {cols, 1, NULL, 0, NULL, 0, table_opts, 1, NULL};
    s3_calls = 0;
    CHECK_EQ_INT(paimon_table_create_v2("s3://bk/new", &spec, options, &t, &err), PAIMON_OK);
    CHECK(t != NULL && err == NULL);
    CHECK_EQ_INT(s3_calls, 2);   /* create, then open */
    CHECK_EQ_STR(s3_options, "s3.endpoint=http://127.0.0.1:7480;s3.access-key=AK;s3.secret-key=S3CR3T-C;");
    CHECK_EQ_STR(paimon_table_path(t), "s3://bk/new");
    paimon_table_close(t);
    char schema[300];
    snprintf(schema, sizeof schema, "%s/bk/new/schema/schema-0", c.dir);
    pm_buf b = {0};
    pm_err e;
    pm_fileio *lio = pm_fileio_local();
    CHECK_EQ_INT(pm_io_read_all(lio, schema, &b, &e), PAIMON_OK);
    CHECK(pm_buf_cstr(&b) == 0 && strstr((char *)b.data, "file.format") && !strstr((char *)b.data, "S3CR3T") &&
          !strstr((char *)b.data, "s3.endpoint"));
    pm_buf_free(&b);
    pm_fileio_destroy(lio);
    tu_copy_remove(&c, TMP_PREFIX);
    pm_fileio_set_s3_opener(old);
}

/* paimon_list_tables: Java's catalog layout, globs, what the path is. */
typedef struct seen_tables { char names[8][128]; int n, stop_at; } seen_tables;

static int collect_table(void *ud, const char *database, const char *table, const char *uri) {
    seen_tables *s = ud;
    if (s->n < 8) snprintf(s->names[s->n], sizeof s->names[0], "%s.%s@%s", database, table, strrchr(uri, '/') + 1);
    s->n++;
    return s->n == s->stop_at ? 42 : 0;   /* a nonzero return stops the walk */
}

TEST(list_tables_of_a_warehouse_and_a_database) {
    tu_copy c;
    CHECK(tu_copy_make(&c, TMP_PREFIX, PARTED) == 0);
    char cmd[4096], w[300], db[320];
    snprintf(w, sizeof w, "%s/wh", c.dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/db1.db' '%s/db2.db/empty/schema' '%s/other' && cp -R '%s' '%s/db1.db/b' && "
             "cp -R '%s' '%s/db1.db/a' && cp -R '%s' '%s/db2.db/c' && ln -s '%s/db1.db/a' '%s/db2.db/link'",
             w, w, w, c.table, w, c.table, w, c.table, w, w, w);
    CHECK(tu_sh(cmd) == 0);
    seen_tables s = {0};
    const char *kind = NULL;
    char *err = NULL;
    CHECK_EQ_INT(paimon_list_tables(w, NULL, NULL, NULL, collect_table, &s, &kind, &err), PAIMON_OK);
    CHECK_EQ_STR(kind, "warehouse");
    CHECK_EQ_INT(s.n, 3);
    CHECK_EQ_STR(s.names[0], "db1.a@a");
    CHECK_EQ_STR(s.names[1], "db1.b@b");
    CHECK_EQ_STR(s.names[2], "db2.c@c");
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(paimon_list_tables(w, NULL, "db?", "[bc]", collect_table, &s, &kind, &err), PAIMON_OK);
    CHECK_EQ_INT(s.n, 2);
    snprintf(db, sizeof db, "%s/db1.db", w);
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(paimon_list_tables(db, NULL, NULL, NULL, collect_table, &s, &kind, &err), PAIMON_OK);
    CHECK_EQ_STR(kind, "database");
    CHECK_EQ_INT(s.n, 2);
    snprintf(db, sizeof db, "%s/db1.db/a", w);
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(paimon_list_tables(db, NULL, NULL, NULL, collect_table, &s, &kind, &err), PAIMON_OK);
    CHECK_EQ_STR(kind, "table");
    CHECK_EQ_INT(s.n, 1);
    snprintf(db, sizeof db, "%s/missing", w);
    CHECK(paimon_list_tables(db, NULL, NULL, NULL, collect_table, &s, &kind, &err) != PAIMON_OK);
    CHECK(err && strstr(err, "missing"));
    paimon_free(err);
    CHECK_EQ_INT(paimon_list_tables(NULL, NULL, NULL, NULL, collect_table, &s, &kind, NULL), PAIMON_MISUSE);
    memset(&s, 0, sizeof s);
    s.stop_at = 2;
    CHECK_EQ_INT(paimon_list_tables(w, NULL, NULL, NULL, collect_table, &s, &kind, NULL), 42);
    CHECK_EQ_INT(s.n, 2);
    tu_copy_remove(&c, TMP_PREFIX);
}

int main(void) {
    RUN(options_replace_repeat_and_reject_null);
    RUN(unknown_and_malformed_options_refuse_before_anything);
    RUN(expire_result_by_path_and_the_table_after);
    RUN(drop_marks_the_partition_deleted);
    RUN(orphans_dry_run_lists_and_real_run_removes);
    RUN(json_streams_a_large_plan_and_rows_by_path);
    RUN(rollback_modes_and_watermark_through_the_c_api);
    RUN(purge_files_through_the_c_api);
    RUN(orphans_refuse_a_cutoff_below_the_floor_unless_allowed);
    RUN(open_v2_and_create_v2_hand_options_to_the_fileio);
    RUN(list_tables_of_a_warehouse_and_a_database);
    return TEST_SUMMARY();
}
