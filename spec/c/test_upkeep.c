/* Upkeep after every commit through the public C API: paimon_commit_commit
 * runs the table's upkeep (Java's TableCommitImpl) and keeps its result
 * (paimon_commit_upkeep); write-only=true turns it off; a failed step is
 * reported and never fails the commit; paimon_upkeep is the one-shot run
 * (maintain.lua), also on write-only tables; a dry run changes nothing.
 * The Lua side (write.lua, c:commit, maintain.lua): spec/upkeep_spec.lua. */
#include "test.h"

#include <paimon.h>

#define TMP_PREFIX "/tmp/pm_test_upkeep."

static const paimon_column COLS[] = {{"id", "BIGINT", NULL}, {"dt", "STRING", NULL}};

/* A table "t" in a fresh temp dir with the options (key, value, ..., NULL). */
static paimon_table *new_table(char **dir, const char *const *options, int partitioned) {
    *dir = tu_make_tmpdir(TMP_PREFIX);
    if (!*dir) return NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/t", *dir);
    const char *opts[32];
    size_t n = 0;
    opts[n++] = "file.format";
    opts[n++] = "avro";
    for (size_t i = 0; options && options[i] && n < 30; i++) opts[n++] = options[i];
    static const char *const pkeys[] = {"dt"};
    paimon_table_spec spec = {COLS, 2, partitioned ? pkeys : NULL, partitioned ? 1 : 0, NULL, 0, opts, n / 2, NULL};
    paimon_table *t = NULL;
    char *err = NULL;
    int rc = paimon_table_create(path, &spec, &t, &err);
    if (rc) fprintf(stderr, "  create %s: %s\n", path, err ? err : "?");
    paimon_free(err);
    return t;
}

static void drop(paimon_table *t, char *dir) {
    paimon_table_close(t);
    if (dir) tu_rm_rf(dir);
    free(dir);
}

/* One row (id, dt), committed by c; PAIMON_OK or the commit's code. */
static int commit_row(paimon_table *t, paimon_commit *c, int64_t id, const char *dt) {
    paimon_writer *w = NULL;
    paimon_messages *m = NULL;
    paimon_value row[2] = {paimon_int(id), paimon_str(dt)};
    int rc = paimon_writer_open(t, &w);
    if (!rc) rc = paimon_writer_write(w, row, 2);
    if (!rc) rc = paimon_writer_prepare_commit(w, &m);
    int64_t sid = 0;
    int created = 0;
    if (!rc) rc = paimon_commit_commit(c, m, INT64_MAX, NULL, &sid, &created);
    if (rc) fprintf(stderr, "  commit: %s\n", paimon_table_errmsg(t));
    paimon_messages_free(m);
    paimon_writer_close(w);
    return rc;
}

static int64_t count_snapshots(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/t/snapshot | grep -c '^snapshot-'", dir);
    int st;
    char *out = tu_sh_out(cmd, &st);
    int64_t n = out ? atoll(out) : -1;
    free(out);
    return n;
}

static int64_t earliest(paimon_table *t) {
    int64_t id = 0;
    paimon_earliest_snapshot_id(t, &id);
    return id;
}

static int64_t res_int(const paimon_result *r, const char *path) {
    int64_t v = -1;
    if (!r || paimon_result_int(r, path, &v)) return -1;
    return v;
}

static char *tree_nofollow(const char *dir) { return tu_tree(dir, 0); }

static const char *const RETAIN_5[] = {"snapshot.num-retained.max", "5", "snapshot.num-retained.min", "1", NULL};

TEST(test_commit_runs_upkeep) {
    char *dir;
    paimon_table *t = new_table(&dir, RETAIN_5, 0);
    CHECK(t != NULL);
    if (!t) { free(dir); return; }
    paimon_commit *c = NULL;
    CHECK_EQ_INT(paimon_commit_open(t, NULL, &c), PAIMON_OK);
    CHECK(paimon_commit_upkeep(c) == NULL);
    for (int i = 1; i <= 12; i++) {
        CHECK_EQ_INT(commit_row(t, c, i, "a"), PAIMON_OK);
        const paimon_result *u = paimon_commit_upkeep(c);
        CHECK(u != NULL);
        CHECK_EQ_INT(res_int(u, "errors"), 0);
        CHECK_EQ_INT(res_int(u, "write_only"), 0);
        CHECK_EQ_INT(res_int(u, "expired_snapshots"), i > 5 ? 1 : 0);
        CHECK_EQ_STR(paimon_result_str(u, "steps.4.operation"), "expire_snapshots");
        CHECK_EQ_STR(paimon_result_str(u, "steps.4.status"), "done");
    }
    CHECK_EQ_INT(count_snapshots(dir), 5);
    CHECK_EQ_INT(earliest(t), 8);
    paimon_commit_close(c);
    drop(t, dir);
}

TEST(test_write_only_then_paimon_upkeep) {
    static const char *const opts[] = {"snapshot.num-retained.max", "5", "snapshot.num-retained.min", "1",
                                       "write-only", "true", NULL};
    char *dir;
    paimon_table *t = new_table(&dir, opts, 0);
    CHECK(t != NULL);
    if (!t) { free(dir); return; }
    paimon_commit *c = NULL;
    CHECK_EQ_INT(paimon_commit_open(t, NULL, &c), PAIMON_OK);
    for (int i = 1; i <= 12; i++) CHECK_EQ_INT(commit_row(t, c, i, "a"), PAIMON_OK);
    const paimon_result *u = paimon_commit_upkeep(c);
    CHECK_EQ_INT(res_int(u, "write_only"), 1);
    CHECK_EQ_INT(res_int(u, "steps"), 0);
    CHECK_EQ_INT(count_snapshots(dir), 12);
    /* a dry run changes nothing */
    char *before = tu_tree(dir, 0);
    paimon_options *o = paimon_options_new();
    paimon_options_set(o, "dry-run", "true");
    paimon_result *r = NULL;
    CHECK_EQ_INT(paimon_upkeep(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(res_int(r, "dry_run"), 1);
    CHECK_EQ_INT(res_int(r, "expired_snapshots"), 7);
    tu_check_tree_same(tree_nofollow, dir, before);
    paimon_result_free(r);
    paimon_options_free(o);
    /* the one-shot run ignores write-only: that is what it is for */
    r = NULL;
    CHECK_EQ_INT(paimon_upkeep(t, NULL, &r), PAIMON_OK);
    CHECK_EQ_INT(res_int(r, "errors"), 0);
    CHECK_EQ_INT(res_int(r, "expired_snapshots"), 7);
    CHECK(paimon_result_json(r) != NULL);
    paimon_result_free(r);
    CHECK_EQ_INT(count_snapshots(dir), 5);
    /* unknown options are misuse, as for every operation */
    o = paimon_options_new();
    paimon_options_set(o, "dryrun", "true");
    r = NULL;
    CHECK_EQ_INT(paimon_upkeep(t, o, &r), PAIMON_MISUSE);
    CHECK(r == NULL);
    paimon_options_free(o);
    paimon_commit_close(c);
    drop(t, dir);
}

/* A failed step (an unreadable consumer file) is reported; the commit
 * stands; the next commit's upkeep tries again. */
TEST(test_failure_never_fails_the_commit) {
    static const char *const opts[] = {"snapshot.num-retained.max", "2", "snapshot.num-retained.min", "1",
                                       "consumer.expiration-time", "1 d", NULL};
    char *dir;
    paimon_table *t = new_table(&dir, opts, 0);
    CHECK(t != NULL);
    if (!t) { free(dir); return; }
    paimon_commit *c = NULL;
    CHECK_EQ_INT(paimon_commit_open(t, NULL, &c), PAIMON_OK);
    CHECK_EQ_INT(commit_row(t, c, 1, "a"), PAIMON_OK);
    char p[600];
    snprintf(p, sizeof p, "mkdir -p %s/t/consumer && printf '{ broken' > %s/t/consumer/consumer-job", dir, dir);
    CHECK(tu_sh(p) == 0);
    for (int i = 2; i <= 4; i++) {
        CHECK_EQ_INT(commit_row(t, c, i, "a"), PAIMON_OK);
        const paimon_result *u = paimon_commit_upkeep(c);
        CHECK(res_int(u, "errors") >= 1);
        CHECK_EQ_STR(paimon_result_str(u, "steps.3.status"), "failed");
        const char *msg = paimon_result_str(u, "steps.3.error");
        CHECK(msg && strstr(msg, "consumer-job"));
    }
    CHECK_EQ_INT(count_snapshots(dir), 4);
    int64_t latest = 0;
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &latest), PAIMON_OK);
    CHECK_EQ_INT(latest, 4);
    snprintf(p, sizeof p, "printf '{\\n  \"nextSnapshot\" : 4\\n}' > %s/t/consumer/consumer-job", dir);
    CHECK(tu_sh(p) == 0);
    CHECK_EQ_INT(commit_row(t, c, 5, "a"), PAIMON_OK);
    CHECK_EQ_INT(res_int(paimon_commit_upkeep(c), "errors"), 0);
    CHECK_EQ_INT(count_snapshots(dir), 2);   /* 4 (the consumer's) and 5 */
    paimon_commit_close(c);
    drop(t, dir);
}

/* Partition expiration from C: the Lua runner's rule in C
 * (paimon_expire_partitions); a commit into a partition older than
 * partition.expiration-time drops it with a second (OVERWRITE) snapshot,
 * as Java's TableCommitImpl; only checked once the interval allows. */
TEST(test_partition_step_reported_from_c) {
    static const char *const lazy[] = {"partition.expiration-time", "1 d", NULL};
    static const char *const eager[] = {"partition.expiration-time", "1 d", "partition.expiration-check-interval",
                                        "0 s", NULL};
    for (int k = 0; k < 2; k++) {
        char *dir;
        paimon_table *t = new_table(&dir, k ? eager : lazy, 1);
        CHECK(t != NULL);
        if (!t) { free(dir); return; }
        paimon_commit *c = NULL;
        CHECK_EQ_INT(paimon_commit_open(t, NULL, &c), PAIMON_OK);
        CHECK_EQ_INT(commit_row(t, c, 1, "2020-01-01"), PAIMON_OK);
        const paimon_result *u = paimon_commit_upkeep(c);
        CHECK_EQ_STR(paimon_result_str(u, "steps.2.operation"), "expire_partitions");
        CHECK_EQ_STR(paimon_result_str(u, "steps.2.status"), k ? "done" : "skipped");
        if (k) CHECK_EQ_INT(res_int(u, "steps.2.result.candidates"), 1);
        CHECK_EQ_INT(res_int(u, "errors"), 0);
        CHECK_EQ_INT(count_snapshots(dir), k ? 2 : 1);
        paimon_commit_close(c);
        drop(t, dir);
    }
}

int main(void) {
    RUN(test_commit_runs_upkeep);
    RUN(test_write_only_then_paimon_upkeep);
    RUN(test_failure_never_fails_the_commit);
    RUN(test_partition_step_reported_from_c);
    return TEST_SUMMARY();
}
