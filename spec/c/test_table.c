/* Table handle, public C API and scan pruning on Java-written fixtures. */
#include "test.h"
#include "pm_table.h"

static char *fixture(const char *rel) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/paimon-java/%s", fixtures_dir(), rel);
    return buf;
}
#define COMPLEX "cpp-parquet-append_complex_data/append_complex_data.db/append_complex_data"

TEST(public_api_lists_live_files) {
    paimon_table *t = NULL;
    char *err = NULL;
    CHECK_EQ_INT(paimon_table_open(fixture(COMPLEX), NULL, &t, &err), PAIMON_OK);
    int64_t latest = 0, earliest = 0;
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &latest), PAIMON_OK);
    CHECK_EQ_INT(paimon_earliest_snapshot_id(t, &earliest), PAIMON_OK);
    CHECK_EQ_INT(latest, 4);
    CHECK_EQ_INT(earliest, 1);
    paimon_snapshot *s = NULL;
    CHECK_EQ_INT(paimon_snapshot_load(t, latest, &s), PAIMON_OK);
    CHECK_EQ_STR(paimon_snapshot_commit_kind(s), "COMPACT");
    paimon_file_iter *it = NULL;
    CHECK_EQ_INT(paimon_file_iter_open(t, s, &it), PAIMON_OK);
    paimon_file_info fi;
    int n = 0, rc;
    int64_t rows = 0;
    while ((rc = paimon_file_iter_next(it, &fi)) == PAIMON_OK) {
        n++;
        rows += fi.record_count;
        CHECK(!strncmp(fi.file_path, fi.partition, strlen(fi.partition)));
    }
    CHECK_EQ_INT(rc, PAIMON_DONE);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(rows, paimon_snapshot_total_record_count(s));
    paimon_file_iter_close(it);
    paimon_snapshot_free(s);
    s = NULL;
    CHECK_EQ_INT(paimon_snapshot_load(t, 99, &s), PAIMON_NOTFOUND);
    CHECK(strstr(paimon_table_errmsg(t), "99") != NULL);
    paimon_snapshot_free(s);
    paimon_table_close(t);
    CHECK_EQ_INT(paimon_table_open("/nonexistent/x", NULL, &t, &err), PAIMON_NOTFOUND);
    CHECK(err && strstr(err, "/nonexistent/x"));
    paimon_free(err);
}

static int scan_count(paimon_table *t, const pm_snapshot *s, const char *key, const char *val, size_t *pruned) {
    const char *keys[1] = {key}, *vals[1] = {val};
    pm_partition_filter f = {key ? 1 : 0, keys, vals};
    pm_scan *sc;
    pm_err e = {0};
    if (pm_scan_open(t, s, &f, &sc, &e)) return -1;
    const pm_manifest_entry *m;
    int n = 0;
    while (pm_scan_next(sc, &m, &e) == PAIMON_OK) n++;
    *pruned = pm_scan_manifests_pruned(sc);
    pm_scan_close(sc);
    return n;
}

TEST(partition_stats_prune_manifests) {
    paimon_table *t;
    pm_err e = {0};
    CHECK_EQ_INT(pm_table_open(fixture(COMPLEX), NULL, &t, &e), PAIMON_OK);
    pm_snapshot *s;
    CHECK_EQ_INT(pm_snapshot_read(t->io, t->branch_root, 3, &s, &e), PAIMON_OK);
    size_t pruned = 0;
    int all = scan_count(t, s, NULL, NULL, &pruned);
    CHECK_EQ_INT(pruned, 0);
    int ten = scan_count(t, s, "f1", "10", &pruned);
    int twenty = scan_count(t, s, "f1", "20", &pruned);
    CHECK_EQ_INT(all, ten + twenty);
    CHECK(ten > 0 && twenty > 0);
    int none = scan_count(t, s, "f1", "99", &pruned);
    CHECK_EQ_INT(none, 0);
    CHECK(pruned >= 3);              /* every manifest skipped by its stats */
    const char *k[1] = {"nope"}, *v[1] = {"1"};
    pm_partition_filter bad = {1, k, v};
    pm_scan *sc;
    CHECK_EQ_INT(pm_scan_open(t, s, &bad, &sc, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "nope") != NULL);
    pm_snapshot_free(s);
    pm_table_free(t);
}

TEST(unknown_scheme_and_bad_branch) {
    paimon_table *t;
    pm_err e = {0};
    CHECK_EQ_INT(pm_table_open("oss://b/w/db.db/t", NULL, &t, &e), PAIMON_UNSUPPORTED);
    CHECK_EQ_INT(pm_table_open(fixture(COMPLEX), "../x", &t, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(pm_table_open(fixture(COMPLEX), "nope", &t, &e), PAIMON_NOTFOUND);
}

int main(void) {
    RUN(public_api_lists_live_files);
    RUN(partition_stats_prune_manifests);
    RUN(unknown_scheme_and_bad_branch);
    return TEST_SUMMARY();
}
