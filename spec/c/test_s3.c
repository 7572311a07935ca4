/* The S3 FileIO against a real S3 server (Ceph RGW started by
 * scripts/run-tests.sh; coordinates from AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, PAIMON_S3_BUCKET),
 * plus a tiny scripted HTTP server in this process for retries, dropped
 * connections, refused conditional writes and a non-S3 endpoint. Without
 * the server's variables the suite fails: it must never pass unrun. */
#include "test.h"
#include "pm_fileio.h"
#include "pm_s3.h"
#include "s3_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

static const char *bucket;
static char prefix[128];   /* a fresh key prefix per run */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* s3://bucket/<prefix>/<rel> */
static char *uri(const char *rel) {
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "s3://%s/%s/%s", bucket, prefix, rel);
    return b;
}

static pm_fileio *open_io(const char *const *options) {
    pm_fileio *io = NULL;
    pm_err e;
    char u[512];
    snprintf(u, sizeof u, "s3://%s/%s", bucket, prefix);
    int rc = pm_fileio_open(u, options, &io, &e);
    if (rc) fprintf(stderr, "  open: %s\n", e.msg);
    return io;
}

static int put(pm_fileio *io, const char *rel, const char *text) {
    pm_err e;
    int rc = pm_io_write_atomic(io, uri(rel), text, strlen(text), &e);
    if (rc) fprintf(stderr, "  put %s: %s\n", rel, e.msg);
    return rc;
}

static char *get(pm_fileio *io, const char *u, int *rc_out) {
    pm_buf b = {0};
    pm_err e;
    int rc = pm_io_read_all(io, u, &b, &e);
    if (rc_out) *rc_out = rc;
    if (rc) { pm_buf_free(&b); return NULL; }
    pm_buf_cstr(&b);
    return b.data ? (char *)b.data : pm_strdup("");
}

/* ---- against RGW ------------------------------------------------------- */

TEST(test_uri_without_bucket_or_key) {
    pm_fileio *io = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_fileio_open("s3://", NULL, &io, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "needs a bucket") != NULL);
    CHECK_EQ_INT(pm_fileio_open("s3a:///key", NULL, &io, &e), PAIMON_MISUSE);
    io = open_io(NULL);
    CHECK(io != NULL);
    if (!io) return;
    char u[300];
    snprintf(u, sizeof u, "s3://%s", bucket);
    pm_buf b = {0};
    CHECK_EQ_INT(pm_io_read_all(io, u, &b, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "not an object key") != NULL);
    CHECK_EQ_INT(pm_io_write_atomic(io, u, "x", 1, &e), PAIMON_MISUSE);
    snprintf(u, sizeof u, "s3://%s/dir/", bucket);
    CHECK_EQ_INT(pm_io_create_no_replace(io, u, "x", 1, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(pm_io_read_all(io, "s3://other-bucket/k", &b, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "bucket differs") != NULL);
    pm_fileio_destroy(io);
}

TEST(test_put_get_stat_exists) {
    pm_fileio *io = open_io(NULL);
    if (!io) { CHECK(0); return; }
    CHECK(pm_io_has(io, PM_IO_VIRTUAL_DIRS));
    CHECK(!pm_io_has(io, PM_IO_LOCAL));
    int64_t t0 = pm_now_millis();
    CHECK_EQ_INT(put(io, "a/b/file 1+&.json", "{\"x\": 1}"), PAIMON_OK);
    int rc;
    char *s = get(io, uri("a/b/file 1+&.json"), &rc);
    CHECK_EQ_STR(s, "{\"x\": 1}");
    free(s);
    pm_stat st;
    pm_err e;
    CHECK_EQ_INT(pm_io_stat(io, uri("a/b/file 1+&.json"), &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.size, 8);
    CHECK_EQ_INT(st.is_dir, 0);
    CHECK(st.mtime_ms > t0 - 60000 && st.mtime_ms < t0 + 60000);
    CHECK_EQ_INT(pm_io_stat(io, uri("a/b"), &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.is_dir, 1);
    CHECK_EQ_INT(pm_io_stat(io, uri("a/"), &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.is_dir, 1);
    int ex = -1;
    CHECK_EQ_INT(pm_io_exists(io, uri("a"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    CHECK_EQ_INT(pm_io_exists(io, uri("a/b/file 1+&.json"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    CHECK_EQ_INT(pm_io_exists(io, uri("a/b/nope"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 0);
    CHECK_EQ_INT(pm_io_exists(io, uri("a/b/file"), &ex, &e), PAIMON_OK);   /* a prefix of a name is nothing */
    CHECK_EQ_INT(ex, 0);
    CHECK_EQ_INT(pm_io_stat(io, uri("missing"), &st, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "missing") != NULL);
    s = get(io, uri("missing"), &rc);
    CHECK(s == NULL);
    CHECK_EQ_INT(rc, PAIMON_NOTFOUND);
    /* a failed read leaves the caller's buffer as it was */
    pm_buf b = {0};
    pm_buf_append(&b, "keep", 4);
    CHECK_EQ_INT(pm_io_read_all(io, uri("missing"), &b, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "404") != NULL && strstr(e.msg, "NoSuchKey") != NULL);
    CHECK_EQ_INT(b.len, 4);
    pm_buf_free(&b);
    CHECK_EQ_INT(pm_io_mkdirs(io, uri("new/dir"), &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_exists(io, uri("new/dir"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 0);   /* virtual: nothing was written */
    /* an empty object and an overwrite */
    CHECK_EQ_INT(put(io, "empty", ""), PAIMON_OK);
    s = get(io, uri("empty"), &rc);
    CHECK_EQ_STR(s, "");
    free(s);
    CHECK_EQ_INT(put(io, "empty", "now full"), PAIMON_OK);
    s = get(io, uri("empty"), &rc);
    CHECK_EQ_STR(s, "now full");
    free(s);
    /* a body past curl's Expect: 100-continue threshold, through both PUTs */
    size_t big_n = 3u << 20;
    char *big = malloc(big_n);
    for (size_t i = 0; i < big_n; i++) big[i] = (char)('a' + i % 26);
    CHECK_EQ_INT(pm_io_write_atomic(io, uri("big"), big, big_n, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_create_no_replace(io, uri("big2"), big, big_n, &e), PAIMON_OK);
    for (int k = 0; k < 2; k++) {
        pm_buf bb = {0};
        CHECK_EQ_INT(pm_io_read_all(io, uri(k ? "big2" : "big"), &bb, &e), PAIMON_OK);
        CHECK(bb.len == big_n && memcmp(bb.data, big, big_n) == 0);
        pm_buf_free(&bb);
    }
    free(big);
    pm_fileio_destroy(io);
}

TEST(test_list_sorted_with_dirs) {
    pm_fileio *io = open_io(NULL);
    if (!io) { CHECK(0); return; }
    const char *keys[] = {"l/snapshot/snapshot-2", "l/snapshot/LATEST", "l/snapshot/sub/x", "l/snapshot/snapshot-10",
                          "l/snapshot/EARLIEST", "l/snapshot/sub/y/z", "l/snapshotter"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) CHECK_EQ_INT(put(io, keys[i], keys[i]), PAIMON_OK);
    pm_dirent *d = NULL;
    size_t n = 0;
    pm_err e;
    CHECK_EQ_INT(pm_io_list(io, uri("l/snapshot"), &d, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 5);
    const char *want[] = {"EARLIEST", "LATEST", "snapshot-10", "snapshot-2", "sub"};
    for (size_t i = 0; i < n && i < 5; i++) {
        CHECK_EQ_STR(d[i].name, want[i]);
        CHECK_EQ_INT(d[i].is_dir, i == 4);
    }
    pm_dirents_free(d, n);
    CHECK_EQ_INT(pm_io_list(io, uri("l/snapshot/"), &d, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 5);
    pm_dirents_free(d, n);
    CHECK_EQ_INT(pm_io_list(io, uri("l/nothing"), &d, &n, &e), PAIMON_NOTFOUND);
    CHECK(strstr(e.msg, "l/nothing") != NULL);
    pm_fileio_destroy(io);
}

typedef struct tree_acc {
    size_t n;
    int64_t bytes;
    int stop_after;
    int sorted_ok;
    char last[256];
} tree_acc;

static int tree_cb(void *ctx, const char *rel, const pm_stat *st, pm_err *e) {
    tree_acc *t = ctx;
    t->n++;
    t->bytes += st->size;
    if (st->mtime_ms <= 0 || st->is_dir) t->sorted_ok = 0;
    snprintf(t->last, sizeof t->last, "%s", rel);
    if (t->stop_after && (int)t->n == t->stop_after) return pm_fail(e, PAIMON_CONFLICT, "stopped at %s", rel);
    return 0;
}

typedef struct put_job { pm_fileio *io; int from, to; int fails; } put_job;

static void *put_range(void *arg) {
    put_job *j = arg;
    for (int i = j->from; i < j->to; i++) {
        char rel[64], body[32];
        snprintf(rel, sizeof rel, "many/d%d/f-%05d", i % 3, i);
        snprintf(body, sizeof body, "%d", i);
        if (put(j->io, rel, body)) j->fails++;
    }
    return NULL;
}

/* Listing, list_tree and DeleteObjects across more than one page/batch. */
TEST(test_many_keys_list_tree_and_batch_delete) {
    const char *env = getenv("PAIMON_S3_MANY");
    int many = env ? atoi(env) : 1100;
    if (many < 1001) many = 1001;
    pm_fileio *io = open_io(NULL);
    if (!io) { CHECK(0); return; }
    double t = now_s();
    put_job jobs[2] = {{io, 0, many / 2, 0}, {io, many / 2, many, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, put_range, &jobs[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK_EQ_INT(jobs[0].fails + jobs[1].fails, 0);
    double t_put = now_s() - t;
    pm_dirent *d = NULL;
    size_t n = 0;
    pm_err e;
    CHECK_EQ_INT(pm_io_list(io, uri("many/d0"), &d, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, (size_t)(many + 2) / 3);
    for (size_t i = 1; i < n; i++) CHECK(strcmp(d[i - 1].name, d[i].name) < 0);
    pm_dirents_free(d, n);
    t = now_s();
    tree_acc acc = {0, 0, 0, 1, ""};
    CHECK_EQ_INT(pm_io_list_tree(io, uri("many"), tree_cb, &acc, &e), PAIMON_OK);
    double t_list = now_s() - t;
    CHECK_EQ_INT(acc.n, many);
    CHECK(acc.sorted_ok);
    int64_t want_bytes = 0;
    for (int i = 0; i < many; i++) { char b[32]; want_bytes += snprintf(b, sizeof b, "%d", i); }
    CHECK_EQ_INT(acc.bytes, want_bytes);
    CHECK(strncmp(acc.last, "d2/f-", 5) == 0);
    /* the callback stops the walk with its own code and message */
    tree_acc stop = {0, 0, 1005, 1, ""};
    CHECK_EQ_INT(pm_io_list_tree(io, uri("many"), tree_cb, &stop, &e), PAIMON_CONFLICT);
    CHECK_EQ_INT(stop.n, 1005);
    CHECK(strstr(e.msg, "stopped at") != NULL);
    /* a missing directory lists nothing */
    tree_acc none = {0, 0, 0, 1, ""};
    CHECK_EQ_INT(pm_io_list_tree(io, uri("no-such-dir"), tree_cb, &none, &e), PAIMON_OK);
    CHECK_EQ_INT(none.n, 0);

    /* batch delete: every key plus one outside the prefix, which stays */
    CHECK_EQ_INT(put(io, "outside-many", "keep"), PAIMON_OK);
    size_t nb = (size_t)many + 1;
    char **rels = calloc(nb, sizeof *rels);
    pm_stat *sts = calloc(nb, sizeof *sts);
    int *rcs = calloc(nb, sizeof *rcs);
    char **msgs = calloc(nb, sizeof *msgs);
    for (int i = 0; i < many; i++) {
        rels[i] = malloc(64);
        snprintf(rels[i], 64, "d%d/f-%05d", i % 3, i);
    }
    rels[many] = pm_strdup("../outside-many");
    t = now_s();
    CHECK_EQ_INT(pm_io_remove_batch(io, uri("many"), (const char *const *)rels, nb, 0, sts, rcs, msgs, &e), PAIMON_OK);
    double t_del = now_s() - t;
    int ok = 0;
    for (int i = 0; i < many; i++) ok += rcs[i] == PAIMON_OK;
    CHECK_EQ_INT(ok, many);
    CHECK_EQ_INT(rcs[many], PM_IO_OUTSIDE);
    CHECK(msgs[many] && strstr(msgs[many], "..") != NULL);
    for (size_t i = 0; i < nb; i++) { free(rels[i]); free(msgs[i]); }
    free(rels); free(sts); free(rcs); free(msgs);
    tree_acc after = {0, 0, 0, 1, ""};
    CHECK_EQ_INT(pm_io_list_tree(io, uri("many"), tree_cb, &after, &e), PAIMON_OK);
    CHECK_EQ_INT(after.n, 0);
    int rc;
    char *s = get(io, uri("outside-many"), &rc);
    CHECK_EQ_STR(s, "keep");
    free(s);
    printf("# %d keys: PUT %.2f s (2 threads, keep-alive), list_tree %.2f s, DeleteObjects %.2f s\n", many, t_put,
           t_list, t_del);
    pm_fileio_destroy(io);
}

TEST(test_create_no_replace) {
    pm_fileio *io = open_io(NULL);
    if (!io) { CHECK(0); return; }
    pm_err e;
    CHECK_EQ_INT(pm_io_create_no_replace(io, uri("snap/snapshot-1"), "first", 5, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_create_no_replace(io, uri("snap/snapshot-1"), "second", 6, &e), PAIMON_EXISTS);
    CHECK(strstr(e.msg, "snapshot-1") != NULL && strstr(e.msg, "already exists") != NULL);
    int rc;
    char *s = get(io, uri("snap/snapshot-1"), &rc);
    CHECK_EQ_STR(s, "first");
    free(s);
    pm_fileio_destroy(io);
}

typedef struct race { pm_fileio *io; int round; int id; int rc; } race;
static pthread_barrier_t race_bar;

static void *race_one(void *arg) {
    race *r = arg;
    char body[32], rel[64];
    snprintf(body, sizeof body, "writer-%d", r->id);
    snprintf(rel, sizeof rel, "race/snapshot-%d", r->round);
    pm_err e;
    pthread_barrier_wait(&race_bar);
    r->rc = pm_io_create_no_replace(r->io, uri(rel), body, strlen(body), &e);
    if (r->rc != PAIMON_OK && r->rc != PAIMON_EXISTS) fprintf(stderr, "  race: %s\n", e.msg);
    return NULL;
}

/* Four writers per key, 10 keys: exactly one wins each, and the stored body
 * is the winner's. */
TEST(test_create_no_replace_race) {
    pm_fileio *io = open_io(NULL);
    if (!io) { CHECK(0); return; }
    enum { W = 4, ROUNDS = 10 };
    for (int round = 0; round < ROUNDS; round++) {
        race r[W];
        pthread_t th[W];
        pthread_barrier_init(&race_bar, NULL, W);
        for (int i = 0; i < W; i++) {
            r[i] = (race){io, round, i, -1};
            pthread_create(&th[i], NULL, race_one, &r[i]);
        }
        int wins = 0, exists = 0, winner = -1;
        for (int i = 0; i < W; i++) {
            pthread_join(th[i], NULL);
            if (r[i].rc == PAIMON_OK) { wins++; winner = i; }
            if (r[i].rc == PAIMON_EXISTS) exists++;
        }
        pthread_barrier_destroy(&race_bar);
        CHECK_EQ_INT(wins, 1);
        CHECK_EQ_INT(exists, W - 1);
        char rel[64], want[32];
        snprintf(rel, sizeof rel, "race/snapshot-%d", round);
        snprintf(want, sizeof want, "writer-%d", winner);
        int rc;
        char *s = get(io, uri(rel), &rc);
        CHECK_EQ_STR(s, want);
        free(s);
    }
    pm_fileio_destroy(io);
}

TEST(test_remove_and_remove_within) {
    pm_fileio *io = open_io(NULL);
    if (!io) { CHECK(0); return; }
    pm_err e;
    pm_stat st;
    CHECK_EQ_INT(put(io, "t/data/f1", "12345"), PAIMON_OK);
    CHECK_EQ_INT(put(io, "t/data/f2", "12"), PAIMON_OK);
    CHECK_EQ_INT(put(io, "t-sibling/f", "sibling"), PAIMON_OK);
    CHECK_EQ_INT(put(io, "other", "other"), PAIMON_OK);
    /* lexical rules: nothing outside the prefix, nothing sent */
    const char *bad[] = {"../other", "data/../../other", "./data/f1", "data//f1", "/data/f1", "", "data/f1/..",
                         "../t-sibling/f"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(pm_io_remove_within(io, uri("t"), bad[i], 0, &st, &e), PM_IO_OUTSIDE);
        CHECK(strstr(e.msg, uri("t")) != NULL);
    }
    int ex;
    CHECK_EQ_INT(pm_io_exists(io, uri("other"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    CHECK_EQ_INT(pm_io_exists(io, uri("t-sibling/f"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    /* dry run: the size, nothing removed */
    CHECK_EQ_INT(pm_io_remove_within(io, uri("t"), "data/f1", PM_RM_DRY_RUN, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.size, 5);
    CHECK(st.mtime_ms > 0);
    CHECK_EQ_INT(pm_io_exists(io, uri("t/data/f1"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("t/"), "data/f1", 0, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(st.size, 5);
    CHECK_EQ_INT(pm_io_exists(io, uri("t/data/f1"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 0);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("t"), "data/f1", 0, &st, &e), PAIMON_NOTFOUND);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("t"), "data/f1", PM_RM_DRY_RUN, &st, &e), PAIMON_NOTFOUND);
    /* a directory with keys under it is not empty (and has no marker to remove) */
    CHECK_EQ_INT(pm_io_remove_within(io, uri("t"), "data", PM_RM_EMPTY_DIR, &st, &e), PAIMON_EXISTS);
    CHECK(strstr(e.msg, "not an empty directory") != NULL);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("t"), "nodir", PM_RM_EMPTY_DIR, &st, &e), PAIMON_NOTFOUND);
    CHECK_EQ_INT(pm_io_exists(io, uri("t/data/f2"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    /* a directory is never removed as a key */
    CHECK_EQ_INT(pm_io_remove_within(io, uri("t"), "data", 0, &st, &e), PAIMON_NOTFOUND);
    CHECK_EQ_INT(pm_io_exists(io, uri("t/data/f2"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    /* plain remove */
    CHECK_EQ_INT(pm_io_remove(io, uri("t/data/f2"), &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_exists(io, uri("t/data/f2"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 0);
    /* batch dry run: sizes by HEAD, a missing key NOTFOUND */
    CHECK_EQ_INT(put(io, "t/a", "abc"), PAIMON_OK);
    const char *rels[] = {"a", "missing", "../other"};
    pm_stat sts[3];
    int rcs[3];
    char *msgs[3];
    CHECK_EQ_INT(pm_io_remove_batch(io, uri("t"), rels, 3, PM_RM_DRY_RUN, sts, rcs, msgs, &e), PAIMON_OK);
    CHECK_EQ_INT(rcs[0], PAIMON_OK);
    CHECK_EQ_INT(sts[0].size, 3);
    CHECK_EQ_INT(rcs[1], PAIMON_NOTFOUND);
    CHECK(msgs[1] && strstr(msgs[1], "missing") != NULL);
    CHECK_EQ_INT(rcs[2], PM_IO_OUTSIDE);
    for (int i = 0; i < 3; i++) free(msgs[i]);
    CHECK_EQ_INT(pm_io_exists(io, uri("t/a"), &ex, &e), PAIMON_OK);
    CHECK_EQ_INT(ex, 1);
    pm_fileio_destroy(io);
}

/* Directory marker objects ("dir/", Hadoop S3A's empty directories):
 * list_tree_dirs reports them, list_tree does not; remove_within with
 * PM_RM_EMPTY_DIR deletes a marker nothing else lies under, refuses one
 * with keys under it, and finds nothing where there is no marker. */
typedef struct seen { char text[2048]; } seen;
static int seen_cb(void *ctx, const char *rel, const pm_stat *st, pm_err *e) {
    (void)e;
    seen *s = ctx;
    size_t l = strlen(s->text);
    snprintf(s->text + l, sizeof s->text - l, "%s%s;", rel, st->is_dir ? "/" : "");
    return 0;
}

TEST(test_directory_markers) {
    pm_fileio *io = open_io(NULL);
    if (!io) { CHECK(0); return; }
    pm_err e;
    pm_stat st;
    CHECK_EQ_INT(tu_s3_put_marker(uri("m/a")), 0);
    CHECK_EQ_INT(tu_s3_put_marker(uri("m/b")), 0);
    CHECK_EQ_INT(tu_s3_put_marker(uri("m/c/d")), 0);
    CHECK_EQ_INT(put(io, "m/b/x", "x"), PAIMON_OK);
    seen all = {""}, files = {""};
    CHECK_EQ_INT(pm_io_list_tree_dirs(io, uri("m"), seen_cb, &all, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_list_tree(io, uri("m"), seen_cb, &files, &e), PAIMON_OK);
    CHECK_EQ_STR(all.text, "a/;b/;b/x;c/d/;");
    CHECK_EQ_STR(files.text, "b/x;");
    CHECK_EQ_INT(pm_io_remove_within(io, uri("m"), "b", PM_RM_EMPTY_DIR, &st, &e), PAIMON_EXISTS);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("m"), "c", PM_RM_EMPTY_DIR, &st, &e), PAIMON_EXISTS);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("m"), "a", PM_RM_EMPTY_DIR | PM_RM_DRY_RUN, &st, &e), PAIMON_OK);
    CHECK(st.is_dir && st.mtime_ms > 0);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("m"), "a", PM_RM_EMPTY_DIR, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("m"), "a", PM_RM_EMPTY_DIR, &st, &e), PAIMON_NOTFOUND);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("m"), "c/d", PM_RM_EMPTY_DIR, &st, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_remove_within(io, uri("m"), "../m/b", PM_RM_EMPTY_DIR, &st, &e), PM_IO_OUTSIDE);
    seen after = {""};
    CHECK_EQ_INT(pm_io_list_tree_dirs(io, uri("m"), seen_cb, &after, &e), PAIMON_OK);
    CHECK_EQ_STR(after.text, "b/;b/x;");
    pm_fileio_destroy(io);
}

/* Every message an operation gives with wrong credentials: 403, the key,
 * the S3 code, and never the key id, secret or token. */
#define AK "AKIDMARKER4711XYZ"
#define SK "SECRETMARKER0815abcdef"
#define TK "TOKENMARKER1234567"
static void check_no_secret(const char *msg) {
    CHECK(strstr(msg, AK) == NULL);
    CHECK(strstr(msg, SK) == NULL);
    CHECK(strstr(msg, TK) == NULL);
}

TEST(test_wrong_credentials) {
    const char *opts[] = {"s3.access-key", AK, "s3.secret-key", SK, "s3.session.token", TK, "s3.max-retries", "0", NULL};
    pm_fileio *io = open_io(opts);
    if (!io) { CHECK(0); return; }
    pm_err e;
    pm_buf b = {0};
    pm_stat st;
    pm_dirent *d;
    size_t n;
    int ex;
    CHECK_EQ_INT(pm_io_read_all(io, uri("x"), &b, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "HTTP 403") != NULL && strstr(e.msg, "/x") != NULL);
    check_no_secret(e.msg);
    CHECK_EQ_INT(pm_io_write_atomic(io, uri("x"), "x", 1, &e), PAIMON_IO);
    check_no_secret(e.msg);
    CHECK(strstr(e.msg, "403") != NULL);
    CHECK(pm_io_create_no_replace(io, uri("x"), "x", 1, &e) != PAIMON_OK);
    check_no_secret(e.msg);
    CHECK(pm_io_stat(io, uri("x"), &st, &e) != PAIMON_OK);
    check_no_secret(e.msg);
    CHECK(pm_io_exists(io, uri("x"), &ex, &e) != PAIMON_OK);
    check_no_secret(e.msg);
    CHECK(pm_io_list(io, uri("x"), &d, &n, &e) != PAIMON_OK);
    check_no_secret(e.msg);
    CHECK(strstr(e.msg, "403") != NULL);
    CHECK(pm_io_remove(io, uri("x"), &e) != PAIMON_OK);
    check_no_secret(e.msg);
    const char *rels[] = {"x"};
    int rcs[1];
    char *msgs[1];
    CHECK_EQ_INT(pm_io_remove_batch(io, uri(""), rels, 1, 0, &st, rcs, msgs, &e), PAIMON_OK);
    CHECK(rcs[0] != PAIMON_OK);
    CHECK(msgs[0] && strstr(msgs[0], "403") != NULL);
    if (msgs[0]) check_no_secret(msgs[0]);
    free(msgs[0]);
    pm_fileio_destroy(io);
}

TEST(test_missing_bucket) {
    pm_fileio *io = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_fileio_open("s3://no-such-bucket-paimon/t", NULL, &io, &e), PAIMON_OK);
    if (!io) return;
    pm_buf b = {0};
    CHECK(pm_io_read_all(io, "s3://no-such-bucket-paimon/t/x", &b, &e) != PAIMON_OK);
    CHECK(strstr(e.msg, "NoSuchBucket") != NULL);
    pm_dirent *d;
    size_t n;
    CHECK_EQ_INT(pm_io_list(io, "s3://no-such-bucket-paimon/t", &d, &n, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "NoSuchBucket") != NULL);
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://no-such-bucket-paimon/t/s", "x", 1, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "NoSuchBucket") != NULL);
    pm_fileio_destroy(io);
}

/* ---- a scripted HTTP server for faults -------------------------------- */

typedef struct fake {
    int fd, port;
    pthread_t th;
    const char *const *script;   /* one answer per request: see fake_answer */
    int served;                  /* requests seen */
    char methods[64];            /* first letter of each request's method */
    char last_req[8192];
    int stalled[8], nstalled;    /* connections left unanswered ("stall") */
    int conns;                   /* connections accepted */
} fake;

static int read_request(int c, char *buf, size_t cap) {
    size_t len = 0;
    for (;;) {
        buf[len] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end) {
            const char *cl = strstr(buf, "Content-Length: ");
            size_t want = (size_t)(end + 4 - buf) + (cl && cl < end ? (size_t)atol(cl + 16) : 0);
            if (len >= want) return (int)len;
        }
        if (len + 1 >= cap) return -1;
        ssize_t k = recv(c, buf + len, cap - 1 - len, 0);
        if (k <= 0) return -1;
        len += (size_t)k;
    }
}

/* "huge N": 200 announcing a body of N bytes, then 64 KiB of it and the
 * connection closed; "stream N": 200 without Content-Length, N bytes, closed. */
static void fake_big(int c, const char *a) {
    char head[256], zeros[4096];
    int announced = a[0] == 'h';
    long long n = atoll(strchr(a, ' ') + 1);
    if (announced) snprintf(head, sizeof head, "HTTP/1.1 200 X\r\nContent-Length: %lld\r\n\r\n", n);
    else snprintf(head, sizeof head, "HTTP/1.1 200 X\r\nConnection: close\r\n\r\n");
    if (send(c, head, strlen(head), MSG_NOSIGNAL) < 0) return;
    memset(zeros, '0', sizeof zeros);
    long long left = announced && n > 65536 ? 65536 : n;
    for (size_t k; left > 0; left -= (long long)k) {
        k = left < (long long)sizeof zeros ? (size_t)left : sizeof zeros;
        if (send(c, zeros, k, MSG_NOSIGNAL) < 0) return;
    }
}

/* Answers: "reset" (drop the connection), "html", "huge N", "stream N" (fake_big; the connection is then closed),
 * or "CODE[ S3CODE[ BODY]]". */
static void fake_answer(int c, const char *a) {
    char out[2048], body[1024] = "";
    int code = atoi(a);
    const char *sp = strchr(a, ' ');
    const char *ctype = "application/xml";
    if (strcmp(a, "html") == 0) {
        code = 200;
        ctype = "text/html";
        snprintf(body, sizeof body, "<html><body><h1>Welcome</h1><p>not S3<br></p></body></html>");
    } else if (code >= 300 && sp) {
        snprintf(body, sizeof body, "<?xml version=\"1.0\"?><Error><Code>%.*s</Code><Message>%s</Message></Error>",
                 (int)strcspn(sp + 1, " "), sp + 1, strchr(sp + 1, ' ') ? strchr(sp + 1, ' ') + 1 : "");
    } else if (sp) {
        snprintf(body, sizeof body, "%s", sp + 1);
    }
    snprintf(out, sizeof out, "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %zu\r\nx-amz-request-id: t\r\n\r\n%s",
             code, ctype, strlen(body), body);
    if (send(c, out, strlen(out), MSG_NOSIGNAL) < 0) return;
}

static void *fake_main(void *arg) {
    fake *f = arg;
    for (;;) {
        int c = accept(f->fd, NULL, NULL);
        if (c < 0) return NULL;
        f->conns++;
        char req[8192];
        while (read_request(c, req, sizeof req) > 0) {
            const char *a = f->script[f->served] ? f->script[f->served] : "500 NoScript";
            if (f->served < 63) f->methods[f->served] = req[0];
            snprintf(f->last_req, sizeof f->last_req, "%s", req);
            f->served++;
            if (strcmp(a, "stall") == 0 && f->nstalled < 8) {   /* never answered: the client times out */
                f->stalled[f->nstalled++] = c;
                c = -1;
                break;
            }
            if (strcmp(a, "reset") == 0) {
                struct linger lg = {1, 0};   /* RST, as a dropped connection */
                setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
                break;
            }
            if (strncmp(a, "huge ", 5) == 0 || strncmp(a, "stream ", 7) == 0) {
                fake_big(c, a);
                break;
            }
            fake_answer(c, a);
            if (!f->script[f->served - 1]) break;
        }
        if (c >= 0) close(c);
    }
}

static int fake_start(fake *f, const char *const *script) {
    memset(f, 0, sizeof *f);
    f->script = script;
    f->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (bind(f->fd, (struct sockaddr *)&a, sizeof a) || listen(f->fd, 8) ||
        getsockname(f->fd, (struct sockaddr *)&a, &al))
        return -1;
    f->port = ntohs(a.sin_port);
    return pthread_create(&f->th, NULL, fake_main, f);
}

static void fake_stop(fake *f) {
    shutdown(f->fd, SHUT_RDWR);
    close(f->fd);
    pthread_join(f->th, NULL);
    for (int i = 0; i < f->nstalled; i++) close(f->stalled[i]);
}

/* A FileIO on the fake server (bucket "fb"), fast retries, short timeouts. */
static pm_fileio *fake_io(const fake *f, const char *retries) {
    static char ep[64];
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d", f->port);
    const char *opts[] = {"s3.endpoint", ep, "s3.access-key", AK, "s3.secret-key", SK, "s3.session.token", TK,
                          "s3.retry-base", "1 ms", "s3.max-retries", retries, "s3.request-timeout", "300 ms", NULL};
    pm_fileio *io = NULL;
    pm_err e;
    if (pm_fileio_open("s3://fb/t", opts, &io, &e)) fprintf(stderr, "  fake open: %s\n", e.msg);
    return io;
}

TEST(test_retry_503_then_200) {
    const char *script[] = {"503 SlowDown Please reduce your request rate.", "500 InternalError oops", "200 hello", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    int rc;
    char *s = get(io, "s3://fb/t/k", &rc);
    CHECK_EQ_STR(s, "hello");
    free(s);
    CHECK_EQ_INT(f.served, 3);
    /* the signed request carries the payload hash and the token */
    CHECK(strstr(f.last_req, "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb924") != NULL);
    CHECK(strstr(f.last_req, "Authorization: AWS4-HMAC-SHA256") != NULL);
    CHECK(strstr(f.last_req, "GET /fb/t/k ") != NULL);   /* path style on an IP endpoint */
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* Requests reuse one keep-alive connection. */
TEST(test_keep_alive) {
    const char *script[] = {"200 a", "200 b", "200 c", "200 d", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "0");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    for (int i = 0; i < 3; i++) {
        int rc;
        free(get(io, "s3://fb/t/k", &rc));
        CHECK_EQ_INT(rc, PAIMON_OK);
    }
    CHECK_EQ_INT(pm_io_write_atomic(io, "s3://fb/t/k", "x", 1, &e), PAIMON_OK);
    CHECK_EQ_INT(f.served, 4);
    CHECK_EQ_INT(f.conns, 1);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

TEST(test_retry_after_reset_and_give_up) {
    const char *script[] = {"reset", "200 after reset", "503 SlowDown a", "503 SlowDown b", "503 SlowDown c", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "2");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    int rc;
    char *s = get(io, "s3://fb/t/k", &rc);
    CHECK_EQ_STR(s, "after reset");
    free(s);
    pm_buf b = {0};
    pm_err e;
    CHECK_EQ_INT(pm_io_read_all(io, "s3://fb/t/k2", &b, &e), PAIMON_IO);
    CHECK_EQ_INT(f.served, 5);   /* 1 + 2 retries */
    CHECK(strstr(e.msg, "s3://fb/t/k2") != NULL && strstr(e.msg, "HTTP 503 SlowDown: c") != NULL);
    check_no_secret(e.msg);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

TEST(test_no_retry_of_4xx) {
    const char *script[] = {"403 AccessDenied nope", "200 never", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_buf b = {0};
    pm_err e;
    CHECK_EQ_INT(pm_io_read_all(io, "s3://fb/t/k", &b, &e), PAIMON_IO);
    CHECK_EQ_INT(f.served, 1);
    CHECK(strstr(e.msg, "HTTP 403 AccessDenied: nope") != NULL);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* A metadata object over the cap is refused on its Content-Length before
 * its body is read, and not retried; a body without one is cut at the cap
 * (issue 22 item 4). */
TEST(test_read_meta_capped) {
    const char *script[] = {"huge 17179869184", "stream 1000", "200 12", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_buf b = {0};
    pm_err e;
    CHECK_EQ_INT(pm_io_read_meta(io, "s3://fb/t/snapshot/snapshot-2", PM_META_MAX, &b, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "s3://fb/t/snapshot/snapshot-2 is 17179869184 bytes, more than the 16 MiB allowed for "
                        "metadata") != NULL);
    CHECK_EQ_INT(f.served, 1);
    CHECK_EQ_INT(b.len, 0);
    CHECK_EQ_INT(pm_io_read_meta(io, "s3://fb/t/snapshot/LATEST", PM_HINT_MAX, &b, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "s3://fb/t/snapshot/LATEST is more than the 64 bytes allowed for metadata") != NULL);
    CHECK_EQ_INT(f.served, 2);
    CHECK_EQ_INT(pm_io_read_meta(io, "s3://fb/t/snapshot/LATEST", PM_HINT_MAX, &b, &e), PAIMON_OK);
    CHECK(b.len == 2 && memcmp(b.data, "12", 2) == 0 && b.read_max == 0);
    pm_buf_free(&b);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* Dropped after the body went out: read back, our bytes -> created. */
TEST(test_create_unknown_outcome_resolved_by_read_back) {
    const char *mine[] = {"reset", "200 snapshot-body", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, mine), 0);
    pm_fileio *io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-3", "snapshot-body", 13, &e), PAIMON_OK);
    CHECK_EQ_INT(f.served, 2);
    CHECK(f.methods[0] == 'P' && f.methods[1] == 'G');   /* PUT, then GET; no second PUT */
    CHECK(strstr(f.last_req, "GET /fb/t/snapshot-3") != NULL);
    pm_fileio_destroy(io);
    fake_stop(&f);

    const char *theirs[] = {"reset", "200 another writer", NULL};
    CHECK_EQ_INT(fake_start(&f, theirs), 0);
    io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-3", "snapshot-body", 13, &e), PAIMON_EXISTS);
    CHECK_EQ_INT(f.served, 2);
    pm_fileio_destroy(io);
    fake_stop(&f);

    /* not there: the conditional PUT again (it cannot overwrite); its 412
     * is then checked too, since the first PUT may have landed late */
    const char *absent[] = {"reset", "404 NoSuchKey", "412 PreconditionFailed x", "200 snapshot-body", NULL};
    CHECK_EQ_INT(fake_start(&f, absent), 0);
    io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-3", "snapshot-body", 13, &e), PAIMON_OK);
    CHECK_EQ_INT(f.served, 4);
    CHECK(strncmp(f.methods, "PGPG", 4) == 0);
    pm_fileio_destroy(io);
    fake_stop(&f);

    /* unreadable afterwards: uncertain, never success */
    const char *unknown[] = {"reset", "403 AccessDenied no reads", NULL};
    CHECK_EQ_INT(fake_start(&f, unknown), 0);
    io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-3", "snapshot-body", 13, &e), PAIMON_UNCERTAIN);
    CHECK(strstr(e.msg, "unknown") != NULL && strstr(e.msg, "403") != NULL);
    check_no_secret(e.msg);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* Issue 22: a 412 whose key then reads as missing contradicts itself (a
 * store or cache without read-after-write on the key): the PUT may have
 * been applied. UNCERTAIN naming the key, never EXISTS (before: EXISTS,
 * and the commit deleted the manifests under its own snapshot). Once a
 * PUT may have been applied, a later definite refusal is UNCERTAIN too. */
TEST(test_create_412_then_404_is_uncertain) {
    const char *first[] = {"412 PreconditionFailed x", "404 NoSuchKey", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, first), 0);
    pm_fileio *io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-3", "snapshot-body", 13, &e), PAIMON_UNCERTAIN);
    CHECK_EQ_INT(f.served, 2);
    CHECK(strstr(e.msg, "s3://fb/t/snapshot-3: outcome uncertain") != NULL && strstr(e.msg, "412") != NULL &&
          strstr(e.msg, "404") != NULL);
    check_no_secret(e.msg);
    pm_fileio_destroy(io);
    fake_stop(&f);

    /* dropped after the body went out, missing, then 412, missing again */
    const char *again[] = {"reset", "404 NoSuchKey", "412 PreconditionFailed x", "404 NoSuchKey", NULL};
    CHECK_EQ_INT(fake_start(&f, again), 0);
    io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-3", "snapshot-body", 13, &e), PAIMON_UNCERTAIN);
    CHECK_EQ_INT(f.served, 4);
    CHECK(strncmp(f.methods, "PGPG", 4) == 0);
    pm_fileio_destroy(io);
    fake_stop(&f);

    /* dropped, missing, then a definite 403: the first PUT may have landed */
    const char *refused[] = {"reset", "404 NoSuchKey", "403 AccessDenied no", NULL};
    CHECK_EQ_INT(fake_start(&f, refused), 0);
    io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-3", "snapshot-body", 13, &e), PAIMON_UNCERTAIN);
    CHECK(strstr(e.msg, "outcome uncertain") != NULL && strstr(e.msg, "403") != NULL);
    pm_fileio_destroy(io);
    fake_stop(&f);

    /* a definite 403 on the first PUT: nothing applied, a plain failure */
    const char *denied[] = {"403 AccessDenied no", NULL};
    CHECK_EQ_INT(fake_start(&f, denied), 0);
    io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-3", "snapshot-body", 13, &e), PAIMON_IO);
    CHECK_EQ_INT(f.served, 1);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* A request that stalls past the timeout: a GET is retried; a conditional
 * PUT is resolved by reading back, and a stalled read-back is uncertain. */
TEST(test_timeouts) {
    const char *script[] = {"stall", "200 late but fine", "stall", "200 body", "stall", "stall", "stall", "stall", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "1");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    int rc;
    char *s = get(io, "s3://fb/t/k", &rc);
    CHECK_EQ_STR(s, "late but fine");
    free(s);
    pm_err e;
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-9", "body", 4, &e), PAIMON_OK);
    CHECK(strncmp(f.methods + 2, "PG", 2) == 0);
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-10", "body", 4, &e), PAIMON_UNCERTAIN);
    CHECK(strstr(e.msg, "snapshot-10") != NULL && strstr(e.msg, "unknown") != NULL);
    check_no_secret(e.msg);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* DeleteObjects: per-key errors land on their items only; the request is
 * POST ?delete= with Content-MD5 and Quiet mode, keys XML-escaped. */
TEST(test_delete_objects_per_key_errors) {
    const char *script[] = {"200 <?xml version=\"1.0\"?><DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                            "<Error><Key>t/b&amp;c</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
                            "</DeleteResult>",
                            "500 InternalError x", "500 InternalError y", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "1");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    const char *rels[] = {"a", "b&c", "d/e", "../x"};
    pm_stat sts[4];
    int rcs[4];
    char *msgs[4];
    CHECK_EQ_INT(pm_io_remove_batch(io, "s3://fb/t", rels, 4, 0, sts, rcs, msgs, &e), PAIMON_OK);
    CHECK_EQ_INT(rcs[0], PAIMON_OK);
    CHECK_EQ_INT(rcs[1], PAIMON_IO);
    CHECK(msgs[1] && strstr(msgs[1], "s3://fb/t/b&c") && strstr(msgs[1], "AccessDenied: Access Denied"));
    CHECK_EQ_INT(rcs[2], PAIMON_OK);
    CHECK_EQ_INT(sts[2].size, -1);
    CHECK_EQ_INT(rcs[3], PM_IO_OUTSIDE);
    CHECK_EQ_INT(f.served, 1);
    CHECK(strstr(f.last_req, "POST /fb/?delete= ") != NULL);
    CHECK(strstr(f.last_req, "Content-MD5: ") != NULL);
    CHECK(strstr(f.last_req, "<Quiet>true</Quiet><Object><Key>t/a</Key></Object><Object><Key>t/b&amp;c</Key>") != NULL);
    CHECK(strstr(f.last_req, "x-amz-content-sha256: ") != NULL && strstr(f.last_req, "UNSIGNED") == NULL);
    for (int i = 0; i < 4; i++) free(msgs[i]);
    /* a batch that fails as a whole: every key in it gets the error */
    const char *two[] = {"a", "b"};
    CHECK_EQ_INT(pm_io_remove_batch(io, "s3://fb/t", two, 2, 0, sts, rcs, msgs, &e), PAIMON_OK);
    CHECK_EQ_INT(rcs[0], PAIMON_IO);
    CHECK_EQ_INT(rcs[1], PAIMON_IO);
    CHECK(msgs[0] && strstr(msgs[0], "HTTP 500 InternalError: y") != NULL);
    check_no_secret(msgs[0]);
    for (int i = 0; i < 2; i++) free(msgs[i]);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* AWS's 409 for a conditional write racing another: not applied, retried. */
TEST(test_create_conflict_409_retried) {
    const char *script[] = {"409 ConditionalRequestConflict try again", "200", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-5", "x", 1, &e), PAIMON_OK);
    CHECK_EQ_INT(f.served, 2);
    CHECK(strncmp(f.methods, "PP", 2) == 0);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* Without a trustworthy age an object is an error, never "age 0" (which
 * an orphan cut-off would take for ancient). */
TEST(test_missing_last_modified_is_an_error) {
    const char *script[] = {"200 <ListBucketResult><Contents><Key>t/x/a</Key><Size>1</Size></Contents></ListBucketResult>",
                            "200", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "0");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    tree_acc acc = {0, 0, 0, 1, ""};
    CHECK_EQ_INT(pm_io_list_tree(io, "s3://fb/t/x", tree_cb, &acc, &e), PAIMON_IO);
    CHECK_EQ_INT(acc.n, 0);
    CHECK(strstr(e.msg, "LastModified") != NULL);
    pm_stat st;
    CHECK_EQ_INT(pm_io_stat(io, "s3://fb/t/x/a", &st, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "Last-Modified") != NULL);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

TEST(test_create_refused_without_conditional_writes) {
    const char *s501[] = {"501 NotImplemented A header you provided implies functionality that is not implemented", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, s501), 0);
    pm_fileio *io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-1", "x", 1, &e), PAIMON_UNSUPPORTED);
    CHECK_EQ_INT(f.served, 1);   /* no fallback request */
    CHECK(strstr(e.msg, "does not support conditional writes") != NULL && strstr(e.msg, "501") != NULL);
    CHECK(strstr(f.last_req, "If-None-Match: *") != NULL);
    pm_fileio_destroy(io);
    fake_stop(&f);
    const char *s400[] = {"400 InvalidArgument If-None-Match is not supported", NULL};
    CHECK_EQ_INT(fake_start(&f, s400), 0);
    io = fake_io(&f, "3");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    CHECK_EQ_INT(pm_io_create_no_replace(io, "s3://fb/t/snapshot-1", "x", 1, &e), PAIMON_UNSUPPORTED);
    CHECK_EQ_INT(f.served, 1);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

TEST(test_endpoint_not_s3) {
    const char *script[] = {"html", "html", "html", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "0");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    pm_dirent *d;
    size_t n;
    CHECK_EQ_INT(pm_io_list(io, "s3://fb/t/snapshot", &d, &n, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "s3://fb/t/snapshot") != NULL && strstr(e.msg, "S3") != NULL);
    tree_acc acc = {0, 0, 0, 1, ""};
    CHECK_EQ_INT(pm_io_list_tree(io, "s3://fb/t", tree_cb, &acc, &e), PAIMON_IO);
    CHECK_EQ_INT(acc.n, 0);
    pm_fileio_destroy(io);
    fake_stop(&f);
    /* nobody listening: an error naming the endpoint, after the retries */
    io = fake_io(&f, "1");
    if (!io) { CHECK(0); return; }
    pm_buf b = {0};
    CHECK_EQ_INT(pm_io_read_all(io, "s3://fb/t/k", &b, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "no answer") != NULL && strstr(e.msg, "2 attempt") != NULL);
    check_no_secret(e.msg);
    pm_fileio_destroy(io);
}

/* An endpoint given with user:password@ is never printed with them (issue
 * 22): the non-S3 answer, the status without an S3 error, no answer. */
static void check_endpoint_redacted(const char *msg, int port) {
    char shown[64];
    snprintf(shown, sizeof shown, "http://***@127.0.0.1:%d", port);
    if (!strstr(msg, shown) || strstr(msg, "p4ssw0rd") || strstr(msg, "ep-user")) {
        fprintf(stderr, "    message '%s' shows the endpoint's credentials or lacks '%s'\n", msg, shown);
        CHECK(0);
    }
}

TEST(test_endpoint_credentials_redacted) {
    const char *script[] = {"200 <html><body>x</body></html>", "418", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    char ep[96];
    snprintf(ep, sizeof ep, "http://ep-user:p4ssw0rd@127.0.0.1:%d", f.port);
    const char *opts[] = {"s3.endpoint", ep, "s3.path.style.access", "true", "s3.access-key", AK, "s3.secret-key", SK,
                          "s3.retry-base", "1 ms", "s3.max-retries", "0", "s3.request-timeout", "300 ms", NULL};
    pm_fileio *io = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_fileio_open("s3://fb/t", opts, &io, &e), PAIMON_OK);
    if (!io) { fake_stop(&f); return; }
    pm_dirent *d;
    size_t n;
    CHECK_EQ_INT(pm_io_list(io, "s3://fb/t/snapshot", &d, &n, &e), PAIMON_IO);
    check_endpoint_redacted(e.msg, f.port);
    pm_buf b = {0};
    CHECK_EQ_INT(pm_io_read_all(io, "s3://fb/t/k", &b, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "HTTP 418") != NULL);
    check_endpoint_redacted(e.msg, f.port);
    pm_fileio_destroy(io);   /* its kept-alive connection first: the server waits on it */
    fake_stop(&f);
    io = NULL;
    CHECK_EQ_INT(pm_fileio_open("s3://fb/t", opts, &io, &e), PAIMON_OK);
    if (!io) return;
    CHECK_EQ_INT(pm_io_read_all(io, "s3://fb/t/k", &b, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "no answer") != NULL);
    check_endpoint_redacted(e.msg, f.port);
    pm_buf_free(&b);
    pm_fileio_destroy(io);
}

TEST(test_bad_xml_is_an_error) {
    const char *script[] = {"200 <ListBucketResult><Contents><Key>t/x/a</Key></Contents>", "200 <ListBucketResult><Contents><Key>a&bogus;</Key></Contents></ListBucketResult>",
                            "200 <ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", NULL};
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    pm_fileio *io = fake_io(&f, "0");
    if (!io) { CHECK(0); fake_stop(&f); return; }
    pm_err e;
    pm_dirent *d;
    size_t n;
    tree_acc acc = {0, 0, 0, 1, ""};
    CHECK_EQ_INT(pm_io_list_tree(io, "s3://fb/t/x", tree_cb, &acc, &e), PAIMON_IO);
    CHECK_EQ_INT(acc.n, 0);   /* nothing from a page that is not whole */
    CHECK(strstr(e.msg, "unclosed") != NULL && strstr(e.msg, "s3://fb/t/x") != NULL);
    CHECK_EQ_INT(pm_io_list(io, "s3://fb/t/x", &d, &n, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "entity") != NULL);
    CHECK_EQ_INT(pm_io_list(io, "s3://fb/t/x", &d, &n, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "NextContinuationToken") != NULL);
    pm_fileio_destroy(io);
    fake_stop(&f);
}

/* PAIMON_S3_TRACE: one line per attempt (retries included) with method, key,
 * status and attempt, and nothing of the credentials; an unwritable trace path
 * fails the open, naming the variable. */
TEST(test_request_trace) {
    const char *script[] = {"503 SlowDown slow", "200 hello", "200", NULL};
    char *dir = tu_make_tmpdir("/tmp/pm-s3trace-");
    if (!dir) { CHECK(0); return; }
    char path[300], bad[300];
    snprintf(path, sizeof path, "%s/trace.txt", dir);
    snprintf(bad, sizeof bad, "%s/missing/trace.txt", dir);
    fake f;
    CHECK_EQ_INT(fake_start(&f, script), 0);
    setenv("PAIMON_S3_TRACE", path, 1);
    pm_fileio *io = fake_io(&f, "2");
    unsetenv("PAIMON_S3_TRACE");
    if (!io) { CHECK(0); fake_stop(&f); tu_rm_rf(dir); free(dir); return; }
    int rc;
    char *s = get(io, "s3://fb/t/k 1", &rc);
    CHECK_EQ_STR(s, "hello");
    free(s);
    pm_err e;
    CHECK_EQ_INT(pm_io_write_atomic(io, "s3://fb/t/k2", "x", 1, &e), PAIMON_OK);
    pm_fileio_destroy(io);
    fake_stop(&f);
    FILE *t = fopen(path, "r");
    char text[2048] = "";
    size_t n = t ? fread(text, 1, sizeof text - 1, t) : 0;
    if (t) fclose(t);
    text[n] = '\0';
    CHECK(strncmp(text, "GET s3://fb/t/k%201 503 1 ", 26) == 0);
    CHECK(strstr(text, "\nGET s3://fb/t/k%201 200 2 ") != NULL);
    CHECK(strstr(text, "\nPUT s3://fb/t/k2 200 1 ") != NULL);
    int lines = 0;
    for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++) lines++;
    CHECK_EQ_INT(lines, 3);
    check_no_secret(text);

    setenv("PAIMON_S3_TRACE", bad, 1);
    pm_fileio *io2 = NULL;
    const char *opts[] = {"s3.endpoint", "http://127.0.0.1:9", NULL};
    CHECK_EQ_INT(pm_fileio_open("s3://fb/t", opts, &io2, &e), PAIMON_IO);
    unsetenv("PAIMON_S3_TRACE");
    CHECK(io2 == NULL);
    CHECK(strstr(e.msg, "PAIMON_S3_TRACE=") != NULL && strstr(e.msg, "missing/trace.txt") != NULL);
    if (io2) pm_fileio_destroy(io2);
    tu_rm_rf(dir);
    free(dir);
}

/* Makes the bucket if the server script did not. */
static int ensure_bucket(void) {
    pm_s3_config c;
    pm_err e;
    if (pm_s3_config_load(&c, bucket, NULL, &e)) { fprintf(stderr, "%s\n", e.msg); return -1; }
    pm_s3 *s3;
    if (pm_s3_new(&c, bucket, &s3, &e)) { pm_s3_config_free(&c); return -1; }
    pm_s3_req r = {"PUT", "", NULL, NULL, 0, NULL, NULL, 0, NULL};
    pm_s3_resp resp;
    int rc = pm_s3_request(s3, &r, &resp, &e);
    if (rc) fprintf(stderr, "# cannot reach the S3 server: %s\n", e.msg);
    else if (resp.status != 200 && resp.status != 409)
        fprintf(stderr, "# cannot create bucket %s: HTTP %ld %s\n", bucket, resp.status, resp.s3_code), rc = -1;
    pm_s3_free(s3);
    return rc;
}

int main(void) {
    bucket = getenv("PAIMON_S3_BUCKET");
    if (!bucket || !getenv("AWS_ACCESS_KEY_ID") || !getenv("AWS_SECRET_ACCESS_KEY") || !getenv("AWS_ENDPOINT_URL")) {
        printf("not ok - s3_server_running: the S3 test server is not running (AWS_ACCESS_KEY_ID, "
               "AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, PAIMON_S3_BUCKET unset; scripts/s3-server.sh starts it)\n");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    snprintf(prefix, sizeof prefix, "test-s3-%ld-%d", (long)time(NULL), (int)getpid());
    if (ensure_bucket()) {
        printf("not ok - s3_server_running: the S3 test server at %s does not answer\n0 passed, 1 failed\n",
               getenv("AWS_ENDPOINT_URL"));
        return 1;
    }
    RUN(test_uri_without_bucket_or_key);
    RUN(test_put_get_stat_exists);
    RUN(test_list_sorted_with_dirs);
    RUN(test_many_keys_list_tree_and_batch_delete);
    RUN(test_create_no_replace);
    RUN(test_create_no_replace_race);
    RUN(test_remove_and_remove_within);
    RUN(test_directory_markers);
    RUN(test_wrong_credentials);
    RUN(test_missing_bucket);
    RUN(test_retry_503_then_200);
    RUN(test_keep_alive);
    RUN(test_retry_after_reset_and_give_up);
    RUN(test_no_retry_of_4xx);
    RUN(test_read_meta_capped);
    RUN(test_create_unknown_outcome_resolved_by_read_back);
    RUN(test_create_412_then_404_is_uncertain);
    RUN(test_timeouts);
    RUN(test_delete_objects_per_key_errors);
    RUN(test_create_conflict_409_retried);
    RUN(test_missing_last_modified_is_an_error);
    RUN(test_create_refused_without_conditional_writes);
    RUN(test_endpoint_not_s3);
    RUN(test_endpoint_credentials_redacted);
    RUN(test_bad_xml_is_an_error);
    RUN(test_request_trace);
    return TEST_SUMMARY();
}
