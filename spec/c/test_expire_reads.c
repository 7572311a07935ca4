/* What snapshot expiration reads: the snapshots being expired, every
 * retained snapshot's own lists and delta (pm_protect's chains, issue 22),
 * one live set per chain, tags, branches and consumers. A FileIO in front
 * of the local one counts every read by kind; the same expiration (5
 * snapshots) over tables of 20 and of 200 snapshots differs by exactly the
 * 180 extra retained snapshots' files, each manifest read with the run's
 * Avro schema cache bound. And the protection the retained history gives
 * holds: a data file a later commit re-added is kept. */
#include "test.h"
#include "pm_avro.h"
#include "pm_commit.h"
#include "pm_expire.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a FileIO counting reads ----------------------------------------------------- */

enum { R_SNAPSHOT, R_MANIFEST, R_OTHER, R_LIST, R_UNCACHED, R__ };

typedef struct count_io {
    pm_fileio io;
    pm_fileio *inner;
    long n[R__];   /* __atomic: manifests are read on the thread pool */
} count_io;

#define CIO(io) ((count_io *)(io))

static void bump(pm_fileio *io, int k) { __atomic_add_fetch(&CIO(io)->n[k], 1, __ATOMIC_RELAXED); }

static int c_read_all(pm_fileio *io, const char *p, pm_buf *o, pm_err *e) {
    bump(io, strstr(p, "/snapshot/snapshot-") ? R_SNAPSHOT : strstr(p, "/manifest/") ? R_MANIFEST : R_OTHER);
    /* a manifest or list opened with no schema cache bound parses its schema again */
    if (strstr(p, "/manifest/") && !pm_avro_schema_cache_bound()) bump(io, R_UNCACHED);
    return pm_io_read_all(CIO(io)->inner, p, o, e);
}
static int c_list(pm_fileio *io, const char *p, pm_dirent **o, size_t *n, pm_err *e) {
    bump(io, R_LIST);
    return pm_io_list(CIO(io)->inner, p, o, n, e);
}
static int c_stat(pm_fileio *io, const char *p, pm_stat *s, pm_err *e) { return pm_io_stat(CIO(io)->inner, p, s, e); }
static int c_exists(pm_fileio *io, const char *p, int *x, pm_err *e) { return pm_io_exists(CIO(io)->inner, p, x, e); }
static int c_write(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    return pm_io_write_atomic(CIO(io)->inner, p, d, n, e);
}
static int c_create(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    return pm_io_create_no_replace(CIO(io)->inner, p, d, n, e);
}
static int c_remove(pm_fileio *io, const char *p, pm_err *e) { return pm_io_remove(CIO(io)->inner, p, e); }
static int c_remove_within(pm_fileio *io, const char *root, const char *rel, int flags, pm_stat *st, pm_err *e) {
    return pm_io_remove_within(CIO(io)->inner, root, rel, flags, st, e);
}
static int c_mkdirs(pm_fileio *io, const char *p, pm_err *e) { return pm_io_mkdirs(CIO(io)->inner, p, e); }
static void c_destroy(pm_fileio *io) { (void)io; }

static const pm_fileio_ops count_ops = {"file", c_read_all, c_list, c_stat, c_exists, c_write, c_create, c_remove,
                                        c_remove_within, c_mkdirs, c_destroy, 0, NULL, NULL};

static void count_install(count_io *c, paimon_table *t) {
    memset(c, 0, sizeof *c);
    c->io.ops = &count_ops;
    c->inner = t->io;
    t->io = &c->io;
}
static void count_uninstall(count_io *c, paimon_table *t) { t->io = c->inner; }

/* ---- a table of n snapshots ------------------------------------------------------- */

static const char *SCHEMA =
    "{\n  \"version\" : 3,\n  \"id\" : 0,\n  \"fields\" : [ {\n    \"id\" : 0,\n    \"name\" : \"id\",\n"
    "    \"type\" : \"INT\"\n  } ],\n  \"highestFieldId\" : 0,\n  \"partitionKeys\" : [ ],\n"
    "  \"primaryKeys\" : [ ],\n  \"options\" : {\n    \"bucket\" : \"-1\",\n    \"file.format\" : \"parquet\"\n"
    "  },\n  \"timeMillis\" : 1764000000000\n}";

typedef struct table {
    char dir[128], path[200];
    paimon_table *t;
    pm_buf empty;
    int64_t commits;
} table;

static int table_open(table *x) {
    memset(x, 0, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "%s/pm_test_expreads.XXXXXX", tu_tmp_base());
    if (!mkdtemp(x->dir)) return -1;
    char p[300];
    snprintf(x->path, sizeof x->path, "%s/t", x->dir);
    snprintf(p, sizeof p, "%s/schema", x->path);
    if (mkdir(x->path, 0755) || mkdir(p, 0755)) return -1;
    snprintf(p, sizeof p, "%s/schema/schema-0", x->path);
    if (tu_write_file(p, SCHEMA, strlen(SCHEMA))) return -1;
    pm_err e;
    pm_binrow_encode(NULL, 0, NULL, &x->empty, &e);
    return pm_table_open(x->path, NULL, &x->t, &e) ? -1 : 0;
}

static void table_close(table *x) {
    pm_table_free(x->t);
    pm_buf_free(&x->empty);
    if (strstr(x->dir, "/pm_test_expreads.")) tu_rm_rf(x->dir);
}

static void entry(table *x, pm_manifest_entry *m, const char *name, int kind) {
    pm_bytes em = {x->empty.data, x->empty.len};
    tu_fake_add(m, em, em, 0, -1, name, 100, 10, 1764000000000LL);
    m->kind = kind;
}

static int commit_full(table *x, const pm_manifest_entry *v, size_t n, const char *kind, int full) {
    pm_commit_opts o;
    pm_commit_opts_from_table(x->t, &o);
    if (full) o.full_compaction_threshold = 1;
    o.commit_user = "reads";
    o.identifier = x->commits + 1;
    o.kind = kind;
    pm_err e;
    int64_t id = 0;
    if (tu_commit(x->t, v, n, &o, &id, &e)) { fprintf(stderr, "  commit: %s\n", e.msg); return -1; }
    x->commits = id;
    return 0;
}

static int commit(table *x, const pm_manifest_entry *v, size_t n, const char *kind) {
    return commit_full(x, v, n, kind, 0);
}

/* n snapshots: the first adds 2 files, every later one deletes the 2 the
 * previous one added and adds 2 new (a compaction-like history); the last
 * one merges the manifests fully, so the latest's lists have the same
 * shape whatever n. */
static int table_build(table *x, int n) {
    char names[4][64];
    for (int s = 0; s < n; s++) {
        pm_manifest_entry v[4];
        size_t k = 0;
        for (int i = 0; s > 0 && i < 2; i++) entry(x, &v[k++], names[(s - 1) % 2 * 2 + i], PM_FILE_DELETE);
        for (int i = 0; i < 2; i++) {
            char *nm = names[s % 2 * 2 + i];
            snprintf(nm, 64, "data-%08d-0000-0000-0000-%012d-0.parquet", s, i);
            entry(x, &v[k++], nm, PM_FILE_ADD);
        }
        if (commit_full(x, v, k, s ? "COMPACT" : "APPEND", s == n - 1)) return -1;
    }
    return 0;
}

/* Dry run expiring the 5 earliest snapshots, counted. */
static int expire5(table *x, count_io *c, pm_expire_result *r) {
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.max_deletes = 5;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.dry_run = 1;
    o.threads = 2;
    pm_err e;
    count_install(c, x->t);
    int rc = pm_expire_snapshots(x->t, &o, r, &e);
    count_uninstall(c, x->t);
    if (rc) fprintf(stderr, "  expire: %s\n", e.msg);
    return rc;
}

/* ---- tests ---------------------------------------------------------------------------- */

TEST(expire_reads_grow_only_by_each_retained_snapshots_lists) {
    table a, b;
    CHECK(table_open(&a) == 0 && table_open(&b) == 0);
    CHECK(table_build(&a, 20) == 0 && table_build(&b, 200) == 0);
    count_io ca, cb;
    pm_expire_result ra, rb;
    CHECK_EQ_INT(expire5(&a, &ca, &ra), PAIMON_OK);
    CHECK_EQ_INT(expire5(&b, &cb, &rb), PAIMON_OK);
    printf("# reads, 20 snapshots: snapshots=%ld manifests=%ld other=%ld lists=%ld\n", ca.n[R_SNAPSHOT],
           ca.n[R_MANIFEST], ca.n[R_OTHER], ca.n[R_LIST]);
    printf("# reads, 200 snapshots: snapshots=%ld manifests=%ld other=%ld lists=%ld\n", cb.n[R_SNAPSHOT],
           cb.n[R_MANIFEST], cb.n[R_OTHER], cb.n[R_LIST]);
    CHECK_EQ_INT(ra.expired, 5);
    CHECK_EQ_INT(rb.expired, 5);
    /* the same plan: 4 snapshots' deltas delete 2 files each (+ snapshot 6's) */
    CHECK_EQ_INT(ra.clean.count[PM_K_DATA], 10);
    CHECK_EQ_INT(rb.clean.count[PM_K_DATA], 10);
    CHECK_EQ_INT(ra.clean.count[PM_K_SNAPSHOT], 5);
    CHECK_EQ_INT(rb.clean.count[PM_K_SNAPSHOT], 5);
    /* every retained snapshot protects (pm_protect's chains: a file
     * re-added and dropped again between the new earliest and the latest
     * is needed too), but through its own lists and delta only: 180 more
     * retained snapshots cost 180 snapshot files and at most their base
     * list, delta list and delta manifest each; the one chain's live set
     * is read once, no directory is listed more. (Until issue 22 the run
     * read the two ends only, and lost such files.) */
    CHECK_EQ_INT(cb.n[R_SNAPSHOT] - ca.n[R_SNAPSHOT], 180);
    CHECK(cb.n[R_MANIFEST] - ca.n[R_MANIFEST] <= 3 * 180);
    CHECK_EQ_INT(cb.n[R_LIST], ca.n[R_LIST]);
    /* every manifest and list opened with the run's schema cache (on the
     * pool's workers too) */
    CHECK_EQ_INT(ca.n[R_UNCACHED], 0);
    CHECK_EQ_INT(cb.n[R_UNCACHED], 0);
    pm_clean_result_free(&ra.clean);
    pm_clean_result_free(&rb.clean);
    table_close(&a);
    table_close(&b);
}

/* Snapshot 2 deletes file A; snapshot 8 (the latest) adds the same file
 * again. Expiring [1, 5) would delete A (its DELETE is in snapshot 2's
 * delta): the latest snapshot's live set keeps it. */
TEST(a_file_a_later_commit_re_adds_is_kept) {
    table x;
    CHECK(table_open(&x) == 0);
    const char *A = "data-aaaaaaaa-0000-0000-0000-000000000000-0.parquet";
    pm_manifest_entry v[2];
    char nm[8][64];
    entry(&x, &v[0], A, PM_FILE_ADD);
    CHECK(commit(&x, v, 1, "APPEND") == 0);
    entry(&x, &v[0], A, PM_FILE_DELETE);
    snprintf(nm[0], 64, "data-bbbbbbbb-0000-0000-0000-000000000000-0.parquet");
    entry(&x, &v[1], nm[0], PM_FILE_ADD);
    CHECK(commit(&x, v, 2, "COMPACT") == 0);
    for (int i = 1; i < 7; i++) {
        snprintf(nm[i], 64, "data-cccccccc-0000-0000-0000-%012d-0.parquet", i);
        entry(&x, &v[0], nm[i], PM_FILE_ADD);
        CHECK(commit(&x, v, 1, "APPEND") == 0);
    }
    entry(&x, &v[0], A, PM_FILE_ADD);   /* A again, in the latest snapshot */
    CHECK(commit(&x, v, 1, "APPEND") == 0);
    CHECK_EQ_INT(x.commits, 9);
    char pa[400];
    snprintf(pa, sizeof pa, "%s/bucket-0/%s", x.path, A);
    CHECK(tu_file_exists(pa));

    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.max_deletes = 4;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    pm_expire_result r;
    pm_err e;
    CHECK_EQ_INT(pm_expire_snapshots(x.t, &o, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.expired, 4);
    CHECK_EQ_INT(r.clean.count[PM_K_DATA], 0);
    CHECK(r.clean.protected_files >= 1);
    CHECK(tu_file_exists(pa));   /* the latest snapshot reads it */
    pm_clean_result_free(&r.clean);
    table_close(&x);
}

int main(void) {
    RUN(expire_reads_grow_only_by_each_retained_snapshots_lists);
    RUN(a_file_a_later_commit_re_adds_is_kept);
    return TEST_SUMMARY();
}
