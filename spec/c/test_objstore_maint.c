/* Maintenance on an object store, without one: a counting FileIO over the
 * local one that says it has virtual directories and no local path, and
 * has list_tree and remove_batch (as the S3 FileIO has). Orphan cleaning on
 * it plans and removes what it does on the local FileIO from one listing,
 * with no stat (a dry run asks nothing more about the keys listed); the
 * deleter sends batches of at most 1000, reports failed
 * items and whole failed batches, and stops after a failure when asked;
 * expiration deletes through batches with the local results; reading many
 * snapshots checks each schema file once; the orphan scan's reads run as
 * many at once as the store serves, and one failing among them refuses
 * the run. The request counts of each run
 * are printed (the requests-per-operation table). */
#include "test.h"
#include "pm_orphan.h"
#include "pm_refs.h"

#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define BITMAP "cpp-parquet-append_with_bitmap/append_with_bitmap.db/append_with_bitmap"
#define TAGGED "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"
#define ALTERED "cpp-parquet-pk_table_with_alter_table/pk_table_with_alter_table.db/pk_table_with_alter_table"
#define TMP_PREFIX "/tmp/pm_test_objstore."

/* ---- the counting "object store" ------------------------------------------------ */

enum { N_READ, N_LIST, N_STAT, N_EXISTS, N_WRITE, N_REMOVE, N_REMOVE_WITHIN, N_LIST_TREE, N_BATCH, N_BATCH_ITEMS,
       N_SCHEMA_EXISTS, N__ };
static const char *const op_names[N__] = {"read", "list", "stat", "exists", "write", "remove", "remove_within",
                                          "list_tree", "remove_batch", "batch_items", "schema_exists"};

typedef struct os_io {
    pm_fileio io;
    pm_fileio *inner;
    long n[N__];           /* __atomic */
    long max_batch;        /* __atomic */
    const char *fail_item; /* remove_batch: an item whose name ends so fails */
    int fail_batch;        /* remove_batch: the whole request fails */
    long read_delay_us;    /* each read waits this long (a round trip) */
    long in_flight, max_in_flight;   /* __atomic: reads under way, and their most at once */
    const char *fail_read; /* reads of paths holding this fail ... */
    long fail_read_at;     /* ... from the fail_read_at-th on (1-based) */
    long fail_read_seen;   /* __atomic */
} os_io;

#define OS(io) ((os_io *)(io))
static void count(pm_fileio *io, int k) { __atomic_add_fetch(&OS(io)->n[k], 1, __ATOMIC_RELAXED); }

/* A read: counted, its overlap with other reads measured, delayed and
 * failed as the test asks. */
static int os_read_all(pm_fileio *io, const char *p, pm_buf *o, pm_err *e) {
    os_io *s = OS(io);
    count(io, N_READ);
    long now = __atomic_add_fetch(&s->in_flight, 1, __ATOMIC_ACQ_REL);
    long prev = __atomic_load_n(&s->max_in_flight, __ATOMIC_RELAXED);
    while (now > prev && !__atomic_compare_exchange_n(&s->max_in_flight, &prev, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    if (s->read_delay_us) usleep((useconds_t)s->read_delay_us);
    int rc;
    if (s->fail_read && strstr(p, s->fail_read) &&
        __atomic_add_fetch(&s->fail_read_seen, 1, __ATOMIC_ACQ_REL) >= s->fail_read_at) {
        /* fail while others are under way: wait (at most 2 s) until more
         * than 4 reads overlap, whatever the machine's scheduling */
        for (int waited = 0; waited < 2000 && __atomic_load_n(&s->in_flight, __ATOMIC_ACQUIRE) <= 4; waited++)
            usleep(1000);
        rc = pm_fail(e, PAIMON_IO, "%s: GET failed: HTTP 500 InternalError", p);
    } else {
        rc = pm_io_read_all(s->inner, p, o, e);
    }
    __atomic_sub_fetch(&s->in_flight, 1, __ATOMIC_ACQ_REL);
    return rc;
}
static int os_list(pm_fileio *io, const char *p, pm_dirent **o, size_t *n, pm_err *e) { count(io, N_LIST); return pm_io_list(OS(io)->inner, p, o, n, e); }
/* Counts stats of files only: a table or branch handle checks its root
 * directory once on open (branch handles share the table's FileIO); what
 * must not happen is a HEAD per object. */
static int os_stat(pm_fileio *io, const char *p, pm_stat *s, pm_err *e) {
    int rc = pm_io_stat(OS(io)->inner, p, s, e);
    if (rc || !s->is_dir) count(io, N_STAT);
    return rc;
}
static int os_exists(pm_fileio *io, const char *p, int *x, pm_err *e) {
    count(io, N_EXISTS);
    if (strstr(p, "/schema/schema-")) count(io, N_SCHEMA_EXISTS);
    return pm_io_exists(OS(io)->inner, p, x, e);
}
static int os_write(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) { count(io, N_WRITE); return pm_io_write_atomic(OS(io)->inner, p, d, n, e); }
static int os_create(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) { count(io, N_WRITE); return pm_io_create_no_replace(OS(io)->inner, p, d, n, e); }
static int os_remove(pm_fileio *io, const char *p, pm_err *e) { count(io, N_REMOVE); return pm_io_remove(OS(io)->inner, p, e); }
static int os_remove_within(pm_fileio *io, const char *root, const char *rel, int flags, pm_stat *st, pm_err *e) {
    count(io, N_REMOVE_WITHIN);
    return pm_io_remove_within(OS(io)->inner, root, rel, flags, st, e);
}
static int os_mkdirs(pm_fileio *io, const char *p, pm_err *e) { (void)io; (void)p; (void)e; return PAIMON_OK; }
static void os_destroy(pm_fileio *io) { (void)io; }
/* One listing request (the local walk under it is not counted: S3 lists
 * with sizes and ages, no HEAD); empty directories stand for S3's marker
 * objects. */
static int os_list_tree(pm_fileio *io, const char *dir, pm_tree_cb cb, void *ud, pm_err *e) {
    count(io, N_LIST_TREE);
    return pm_io_list_tree_dirs(OS(io)->inner, dir, cb, ud, e);
}
static int os_remove_batch(pm_fileio *io, const char *root, const char *const *rels, size_t n, int flags, pm_stat *sts,
                           int *rcs, char **msgs, pm_err *e) {
    os_io *o = OS(io);
    count(io, N_BATCH);
    __atomic_add_fetch(&o->n[N_BATCH_ITEMS], (long)n, __ATOMIC_RELAXED);
    long prev = __atomic_load_n(&o->max_batch, __ATOMIC_RELAXED);
    while ((long)n > prev && !__atomic_compare_exchange_n(&o->max_batch, &prev, (long)n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    if (o->fail_batch) return pm_fail(e, PAIMON_IO, "DeleteObjects %s: HTTP 503 SlowDown", root);
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(rels[i]), fl = o->fail_item ? strlen(o->fail_item) : 0;
        if (fl && l >= fl && !strcmp(rels[i] + l - fl, o->fail_item)) {
            sts[i] = (pm_stat){-1, 0, 0};
            rcs[i] = PAIMON_IO;
            msgs[i] = pm_strdup("AccessDenied: Access Denied");
            continue;
        }
        pm_err ie;
        sts[i] = (pm_stat){0};
        rcs[i] = pm_io_remove_within(o->inner, root, rels[i], flags, &sts[i], &ie);
        msgs[i] = rcs[i] ? pm_strdup(ie.msg) : NULL;
    }
    return PAIMON_OK;
}

static const pm_fileio_ops os_ops = {"s3", os_read_all, os_list, os_stat, os_exists, os_write, os_create, os_remove,
                                     os_remove_within, os_mkdirs, os_destroy, PM_IO_VIRTUAL_DIRS, os_list_tree,
                                     os_remove_batch};

/* Puts the store in front of t->io (t keeps owning the local FileIO). */
static void os_install(os_io *o, paimon_table *t) {
    memset(o, 0, sizeof *o);
    o->io.ops = &os_ops;
    o->inner = t->io;
    t->io = &o->io;
}
static void os_uninstall(os_io *o, paimon_table *t) { t->io = o->inner; }
static void os_reset(os_io *o) { memset(o->n, 0, sizeof o->n); o->max_batch = 0; }

static void os_print(const char *what, const os_io *o) {
    printf("# requests, %s:", what);
    for (int k = 0; k < N__; k++) if (o->n[k]) printf(" %s=%ld", op_names[k], o->n[k]);
    printf("\n");
}

/* ---- helpers ------------------------------------------------------------------- */

static char *tree_files(const char *dir) { return tu_tree(dir, 0); }

static int make_copy(tu_copy *c, const char *fixture) { return tu_copy_make(c, TMP_PREFIX, fixture); }

/* A file of a few bytes at table/rel, `age_s` seconds old. */
static int plant(const char *table, const char *rel, int age_s) {
    char p[600], cmd[800];
    snprintf(p, sizeof p, "%s/%s", table, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", p);
    if (tu_sh(cmd) || tu_write_file(p, "orphan", 6)) return -1;
    struct timeval tv[2];
    gettimeofday(&tv[0], NULL);
    tv[0].tv_sec -= age_s;
    tv[1] = tv[0];
    return utimes(p, tv);
}

/* The plan or failures, relative to root, sorted, one per line. */
static char *items_text(const pm_clean_item *v, size_t n, const char *root) {
    pm_strv s = {0};
    size_t rl = strlen(root);
    for (size_t i = 0; i < n; i++) {
        char line[700];
        snprintf(line, sizeof line, "%s %s %s", pm_file_kind_names[v[i].kind],
                 strncmp(v[i].path, root, rl) ? v[i].path : v[i].path + rl, v[i].msg ? v[i].msg : "");
        pm_strv_push(&s, line);
    }
    for (size_t i = 1; i < s.n; i++)   /* insertion sort: a handful of lines */
        for (size_t k = i; k > 0 && strcmp(s.v[k - 1], s.v[k]) > 0; k--) { char *x = s.v[k]; s.v[k] = s.v[k - 1]; s.v[k - 1] = x; }
    pm_buf b = {0};
    for (size_t i = 0; i < s.n; i++) { pm_buf_append(&b, s.v[i], strlen(s.v[i])); pm_buf_append(&b, "\n", 1); }
    pm_strv_clear(&s);
    pm_buf_cstr(&b);
    return b.data ? (char *)b.data : pm_strdup("");
}

/* items_text of a dry run's plan. */
static char *plan_text(const pm_clean_result *r, const char *root) {
    pm_clean_item *v = calloc(r->n_paths ? r->n_paths : 1, sizeof *v);
    for (size_t i = 0; v && i < r->n_paths; i++) v[i].path = pm_strdup(tu_plan_path(r, i, &v[i].kind));
    char *s = items_text(v, v ? r->n_paths : 0, root);
    for (size_t i = 0; v && i < r->n_paths; i++) free(v[i].path);
    free(v);
    return s;
}

static int64_t total(const pm_clean_result *r) {
    int64_t n = 0;
    for (int k = 0; k < PM_K__N; k++) n += r->count[k];
    return n;
}

static pm_orphan_opts orphan_opts(int dry_run) {
    pm_orphan_opts o;
    memset(&o, 0, sizeof o);
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis() - 3600 * 1000;
    o.threads = 2;
    o.dry_run = dry_run;
    return o;
}

/* Orphans of every kind where the walk looks, young ones, and files of
 * Paimon's shapes where it does not look (never candidates). */
static int plant_orphans(const char *table, int partitioned) {
    const char *b = partitioned ? "pt=1/bucket-1" : "bucket-0";
    char rel[300];
    int rc = 0;
    snprintf(rel, sizeof rel, "%s/data-00000000-0000-0000-0000-000000000001-0.parquet", b);
    rc |= plant(table, rel, 7200);
    snprintf(rel, sizeof rel, "%s/data-00000000-0000-0000-0000-000000000002-0.parquet", b);
    rc |= plant(table, rel, 60);                                  /* young: kept */
    snprintf(rel, sizeof rel, "%s/sub/data-00000000-0000-0000-0000-000000000003-0.parquet", b);
    rc |= plant(table, rel, 7200);                                /* below a bucket dir: not walked */
    rc |= plant(table, "manifest/manifest-00000000-0000-0000-0000-000000000004-0", 7200);
    rc |= plant(table, "manifest/manifest-list-00000000-0000-0000-0000-000000000005-0", 7200);
    rc |= plant(table, "manifest/other-file", 7200);              /* not a Paimon name: goes too */
    rc |= plant(table, "index/index-00000000-0000-0000-0000-000000000006-0", 7200);
    rc |= plant(table, "statistics/stat-00000000-0000-0000-0000-000000000007-0", 7200);
    rc |= plant(table, "snapshot/.snapshot-9.00000000-0000-0000-0000-000000000008.tmp", 7200);
    rc |= plant(table, "schema/data-00000000-0000-0000-0000-000000000009-0.parquet", 7200);
    rc |= plant(table, "bucket-x/data-00000000-0000-0000-0000-000000000010-0.parquet", 7200);
    rc |= plant(table, "data-00000000-0000-0000-0000-000000000011-0.parquet", 7200);   /* in the table dir itself */
    if (partitioned) {
        rc |= plant(table, "bucket-0/data-00000000-0000-0000-0000-000000000012-0.parquet", 7200);   /* wrong depth */
        rc |= plant(table, "pt=1/x=1/bucket-0/data-00000000-0000-0000-0000-000000000013-0.parquet", 7200);
        rc |= plant(table, "pt=3/bucket-7/data-00000000-0000-0000-0000-000000000015-0.parquet", 7200);   /* a new bucket */
        rc |= plant(table, "branch/branch-fallback/snapshot/.snapshot-9.00000000-0000-0000-0000-000000000016.tmp", 7200);
        rc |= plant(table, "branch/branch-fallback/changelog/changelog-3.tmp", 7200);
        rc |= plant(table, "other=1/bucket-0/data-00000000-0000-0000-0000-000000000014-0.parquet", 7200);
    }
    return rc;
}

/* ---- orphan cleaning ------------------------------------------------------------ */

static void orphan_parity(const char *fixture, int partitioned) {
    tu_copy a, b;
    CHECK(make_copy(&a, fixture) == 0 && make_copy(&b, fixture) == 0);
    CHECK(plant_orphans(a.table, partitioned) == 0 && plant_orphans(b.table, partitioned) == 0);
    paimon_table *ta = tu_open_table(a.table), *tb = tu_open_table(b.table);
    CHECK(ta && tb);
    if (!ta || !tb) return;
    os_io o;
    os_install(&o, tb);
    pm_err e;
    for (int dry = 1; dry >= 0; dry--) {
        pm_orphan_opts oo = orphan_opts(dry);
        pm_orphan_result ra, rb;
        CHECK_EQ_INT(pm_remove_orphan_files(ta, &oo, &ra, &e), PAIMON_OK);
        os_reset(&o);
        int rc = pm_remove_orphan_files(tb, &oo, &rb, &e);
        CHECK_EQ_INT(rc, PAIMON_OK);
        if (rc) { fprintf(stderr, "  %s\n", e.msg); break; }
        os_print(dry ? "orphan dry run" : "orphan run", &o);
        CHECK_EQ_INT(o.n[N_LIST_TREE], 1);        /* the table, listed once */
        CHECK_EQ_INT(o.n[N_STAT], 0);             /* ages from the listing */
        CHECK_EQ_INT(o.n[N_REMOVE_WITHIN], 0);    /* deletes in batches */
        CHECK_EQ_INT(rb.listed, ra.listed);
        CHECK_EQ_INT(rb.used, ra.used);
        CHECK_EQ_INT(rb.recent, ra.recent);
        CHECK(ra.recent >= 1);
        for (int k = 0; k < PM_K__N; k++) CHECK_EQ_INT(rb.clean.count[k], ra.clean.count[k]);
        /* the sizes the listing gave: what the local deleter's fstatat says */
        for (int k = 0; k < PM_K__N; k++) CHECK_EQ_INT(rb.clean.bytes[k], ra.clean.bytes[k]);
        if (dry) CHECK_EQ_INT(o.n[N_BATCH_ITEMS], 0);   /* no HEAD per listed orphan */
        CHECK_EQ_INT(total(&ra.clean), partitioned ? 10 : 7);   /* manifest/other-file too (Java's rule) */
        char *pa = plan_text(&ra.clean, a.table);
        char *pb = plan_text(&rb.clean, b.table);
        CHECK_EQ_STR(pb, pa);
        free(pa);
        free(pb);
        if (!dry) {
            CHECK(o.n[N_BATCH] >= 1);
            CHECK_EQ_INT(rb.clean.dirs_removed, 0);   /* virtual directories: nothing to remove */
        }
        pm_clean_result_free(&ra.clean);
        pm_clean_result_free(&rb.clean);
    }
    /* the same files are left (empty directories aside) */
    tu_check_tree_same(tree_files, b.table, tu_tree(a.table, 0));
    os_uninstall(&o, tb);
    pm_table_free(ta);
    pm_table_free(tb);
    tu_copy_remove(&a, TMP_PREFIX);
    tu_copy_remove(&b, TMP_PREFIX);
}

TEST(orphan_one_listing_same_plan_unpartitioned) { orphan_parity(BITMAP, 0); }
TEST(orphan_one_listing_same_plan_partitioned) { orphan_parity(TAGGED, 1); }

/* A listing that fails refuses the run: nothing deleted. */
static int fail_tree(pm_fileio *io, const char *dir, pm_tree_cb cb, void *ud, pm_err *e) {
    (void)io; (void)cb; (void)ud;
    return pm_fail(e, PAIMON_IO, "ListObjectsV2 %s: HTTP 500 InternalError", dir);
}

TEST(orphan_listing_failure_refuses) {
    tu_copy a;
    CHECK(make_copy(&a, BITMAP) == 0);
    CHECK(plant_orphans(a.table, 0) == 0);
    paimon_table *t = tu_open_table(a.table);
    CHECK(t != NULL);
    if (!t) return;
    char *before = tu_tree(a.table, 0);
    os_io o;
    os_install(&o, t);
    pm_fileio_ops ops = os_ops;
    ops.list_tree = fail_tree;
    o.io.ops = &ops;
    pm_orphan_opts oo = orphan_opts(0);
    pm_orphan_result r;
    pm_err e;
    CHECK_EQ_INT(pm_remove_orphan_files(t, &oo, &r, &e), PAIMON_IO);
    CHECK(strstr(e.msg, "refusing to clean") && strstr(e.msg, "InternalError"));
    CHECK_EQ_INT(o.n[N_BATCH], 0);
    tu_check_tree_same(tree_files, a.table, before);
    os_uninstall(&o, t);
    pm_table_free(t);
    tu_copy_remove(&a, TMP_PREFIX);
}

/* An object store's reads wait on round trips: the orphan scan runs as many
 * at once as the store says it serves (parallel_requests, S3's
 * s3.max-connections), not just its 2 threads; a store that says nothing
 * (the local file system) keeps the threads' bound. */
TEST(orphan_reads_use_the_store_parallelism) {
    tu_copy a;
    CHECK(make_copy(&a, ALTERED) == 0);
    paimon_table *t = tu_open_table(a.table);
    CHECK(t != NULL);
    if (!t) return;
    os_io o;
    os_install(&o, t);
    o.read_delay_us = 20000;
    pm_err e;
    int want[2] = {16, 0};
    for (int i = 0; i < 2; i++) {
        o.io.parallel_requests = want[i];
        o.max_in_flight = 0;
        pm_orphan_opts oo = orphan_opts(1);   /* 2 threads */
        pm_orphan_result r;
        int rc = pm_remove_orphan_files(t, &oo, &r, &e);
        CHECK_EQ_INT(rc, PAIMON_OK);
        if (rc) { fprintf(stderr, "  %s\n", e.msg); break; }
        printf("# parallel_requests %d: at most %ld reads at once\n", want[i], o.max_in_flight);
        if (want[i]) CHECK(o.max_in_flight > 4);
        else CHECK(o.max_in_flight <= oo.threads);
        pm_clean_result_free(&r.clean);
    }
    os_uninstall(&o, t);
    pm_table_free(t);
    tu_copy_remove(&a, TMP_PREFIX);
}

/* With 16 reads in flight, one that fails (a snapshot, a manifest list or a
 * manifest: the 2nd of its kind, others still under way) refuses the run
 * before anything is deleted: the planted orphans are all still there. */
TEST(orphan_read_error_in_flight_refuses) {
    static const char *const kinds[] = {"/snapshot/snapshot-", "/manifest/manifest-list-", "/manifest/manifest-"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        tu_copy a;
        CHECK(make_copy(&a, ALTERED) == 0);
        CHECK(plant_orphans(a.table, 0) == 0);
        paimon_table *t = tu_open_table(a.table);
        CHECK(t != NULL);
        if (!t) return;
        char *before = tu_tree(a.table, 0);
        os_io o;
        os_install(&o, t);
        o.io.parallel_requests = 16;
        o.read_delay_us = 20000;
        o.fail_read = kinds[k];
        o.fail_read_at = 2;
        pm_orphan_opts oo = orphan_opts(0);
        pm_orphan_result r;
        pm_err e;
        int rc = pm_remove_orphan_files(t, &oo, &r, &e);
        CHECK_EQ_INT(rc, PAIMON_IO);
        if (rc == PAIMON_OK) pm_clean_result_free(&r.clean);
        else CHECK(strstr(e.msg, "refusing to clean") && strstr(e.msg, "InternalError"));
        CHECK(o.max_in_flight > 4);
        CHECK_EQ_INT(o.n[N_BATCH], 0);
        CHECK_EQ_INT(o.n[N_REMOVE], 0);
        tu_check_tree_same(tree_files, a.table, before);
        os_uninstall(&o, t);
        pm_table_free(t);
        tu_copy_remove(&a, TMP_PREFIX);
    }
}

/* ---- the deleter ------------------------------------------------------------------- */

/* n files f-0000.. in dir/t/bucket-0, added to a deleter (and one path outside). */
static pm_deleter *many_files(const char *dir, int n) {
    char p[400];
    snprintf(p, sizeof p, "%s/t/bucket-0", dir);
    char cmd[500];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    if (tu_sh(cmd)) return NULL;
    pm_deleter *d = pm_deleter_new();
    pm_err e;
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/t/bucket-0/data-%05d", dir, i);
        if (tu_write_file(p, "x", 1) || pm_deleter_add(d, p, PM_K_DATA, &e)) { pm_deleter_free(d); return NULL; }
    }
    snprintf(p, sizeof p, "%s/outside-file", dir);
    if (tu_write_file(p, "x", 1) || pm_deleter_add(d, p, PM_K_DATA, &e)) { pm_deleter_free(d); return NULL; }
    return d;
}

TEST(deleter_batches_of_at_most_1000) {
    char *dir = tu_make_tmpdir(TMP_PREFIX);
    pm_deleter *d = many_files(dir, 2500);
    CHECK(d != NULL);
    if (!d) return;
    os_io o;
    memset(&o, 0, sizeof o);
    o.io.ops = &os_ops;
    o.inner = pm_fileio_local();
    char root[300];
    snprintf(root, sizeof root, "%s/t", dir);
    pm_clean_opts co = {4, 0, 0, NULL, NULL, 0};
    pm_clean_result r;
    memset(&r, 0, sizeof r);
    pm_err e;
    CHECK_EQ_INT(pm_deleter_run(d, &o.io, root, &co, "deleting", &r, &e), PAIMON_OK);
    os_print("deleting 2500 files", &o);
    CHECK_EQ_INT(o.n[N_BATCH], 3);
    CHECK(o.max_batch <= 1000);
    CHECK_EQ_INT(o.n[N_BATCH_ITEMS], 2500);   /* the outside path never reached the store */
    CHECK_EQ_INT(o.n[N_REMOVE_WITHIN], 0);
    CHECK_EQ_INT(r.count[PM_K_DATA], 2500);
    CHECK_EQ_INT(r.bytes[PM_K_DATA], 2500);
    CHECK_EQ_INT(r.n_skipped, 1);
    CHECK_EQ_INT(r.n_failures, 0);
    char p[400];
    snprintf(p, sizeof p, "%s/outside-file", dir);
    CHECK(tu_file_exists(p));
    snprintf(p, sizeof p, "%s/t/bucket-0/data-01234", dir);
    CHECK(!tu_file_exists(p));
    /* virtual directories: the emptied bucket directory is not removed */
    pm_deleter_clean_dirs(d, &o.io, root, 0, &r);
    CHECK_EQ_INT(r.dirs_removed, 0);
    snprintf(p, sizeof p, "%s/t/bucket-0", dir);
    CHECK(tu_file_exists(p));
    CHECK_EQ_INT(o.n[N_REMOVE_WITHIN], 0);
    pm_clean_result_free(&r);
    pm_deleter_free(d);
    pm_fileio_destroy(o.inner);
    tu_rm_rf(dir);
    free(dir);
}

TEST(deleter_reports_failed_items_and_batches) {
    char *dir = tu_make_tmpdir(TMP_PREFIX);
    char root[300];
    snprintf(root, sizeof root, "%s/t", dir);
    os_io o;
    memset(&o, 0, sizeof o);
    o.io.ops = &os_ops;
    o.inner = pm_fileio_local();
    pm_err e;
    /* one item refused by the store: reported with its message, the rest deleted */
    pm_deleter *d = many_files(dir, 10);
    CHECK(d != NULL);
    if (!d) return;
    o.fail_item = "data-00003";
    pm_clean_opts co = {2, 0, 0, NULL, NULL, 0};
    pm_clean_result r;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(pm_deleter_run(d, &o.io, root, &co, "deleting", &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.count[PM_K_DATA], 9);
    CHECK_EQ_INT(r.n_failures, 1);
    CHECK(r.n_failures == 1 && strstr(r.failures[0].path, "data-00003") && !strcmp(r.failures[0].msg, "AccessDenied: Access Denied"));
    pm_clean_result_free(&r);
    pm_deleter_free(d);
    /* the whole request fails: every item is a failure, none counted as deleted */
    d = many_files(dir, 10);
    o.fail_item = NULL;
    o.fail_batch = 1;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(pm_deleter_run(d, &o.io, root, &co, "deleting", &r, &e), PAIMON_OK);
    CHECK_EQ_INT(total(&r), 0);
    CHECK_EQ_INT(r.n_failures, 10);
    CHECK(r.n_failures == 10 && strstr(r.failures[0].msg, "SlowDown"));
    char p[400];
    snprintf(p, sizeof p, "%s/t/bucket-0/data-00005", dir);
    CHECK(tu_file_exists(p));
    pm_clean_result_free(&r);
    pm_deleter_free(d);
    /* stop on failure, one thread: the batch after a failed one is not sent */
    d = many_files(dir, 1500);
    os_reset(&o);
    pm_clean_opts stop = {1, 0, 1, NULL, NULL, 0};
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(pm_deleter_run(d, &o.io, root, &stop, "deleting", &r, &e), PAIMON_OK);
    CHECK_EQ_INT(o.n[N_BATCH], 1);
    CHECK_EQ_INT(r.n_failures, 750);
    CHECK_EQ_INT(total(&r), 0);
    snprintf(p, sizeof p, "%s/t/bucket-0/data-01499", dir);
    CHECK(tu_file_exists(p));
    pm_clean_result_free(&r);
    pm_deleter_free(d);
    pm_fileio_destroy(o.inner);
    tu_rm_rf(dir);
    free(dir);
}

/* ---- expiration ------------------------------------------------------------------ */

static int expire(paimon_table *t, int dry_run, pm_expire_result *res, pm_err *e) {
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 1000;
    o.threads = 2;
    o.dry_run = dry_run;
    return pm_expire_snapshots(t, &o, res, e);
}

TEST(expire_deletes_through_batches_as_locally) {
    tu_copy a, b;
    CHECK(make_copy(&a, ALTERED) == 0 && make_copy(&b, ALTERED) == 0);
    paimon_table *ta = tu_open_table(a.table), *tb = tu_open_table(b.table);
    CHECK(ta && tb);
    if (!ta || !tb) return;
    os_io o;
    os_install(&o, tb);
    pm_err e;
    for (int dry = 1; dry >= 0; dry--) {
        pm_expire_result ra, rb;
        memset(&ra, 0, sizeof ra);
        memset(&rb, 0, sizeof rb);
        CHECK_EQ_INT(expire(ta, dry, &ra, &e), PAIMON_OK);
        os_reset(&o);
        CHECK_EQ_INT(expire(tb, dry, &rb, &e), PAIMON_OK);
        os_print(dry ? "expire dry run" : "expire run", &o);
        if (!dry) printf("# expired %lld snapshots, %lld files\n", (long long)rb.expired, (long long)total(&rb.clean));
        CHECK_EQ_INT(rb.expired, ra.expired);
        CHECK(ra.expired >= 2);
        for (int k = 0; k < PM_K__N; k++) {
            CHECK_EQ_INT(rb.clean.count[k], ra.clean.count[k]);
            CHECK_EQ_INT(rb.clean.bytes[k], ra.clean.bytes[k]);
        }
        char *pa = plan_text(&ra.clean, a.table);
        char *pb = plan_text(&rb.clean, b.table);
        CHECK_EQ_STR(pb, pa);
        free(pa);
        free(pb);
        CHECK_EQ_INT(o.n[N_STAT], 0);
        if (!dry) {
            CHECK(o.n[N_BATCH] >= 1);
            CHECK(o.max_batch <= 1000);
            CHECK_EQ_INT(o.n[N_BATCH_ITEMS], total(&rb.clean) + rb.clean.missing);
        }
        pm_clean_result_free(&ra.clean);
        pm_clean_result_free(&rb.clean);
    }
    tu_check_tree_same(tree_files, b.table, tu_tree(a.table, 0));
    os_uninstall(&o, tb);
    pm_table_free(ta);
    pm_table_free(tb);
    tu_copy_remove(&a, TMP_PREFIX);
    tu_copy_remove(&b, TMP_PREFIX);
}

/* ---- the schema check ------------------------------------------------------------ */

/* 6 snapshots over schemas 0 and 1: one check per schema id per handle. */
TEST(schema_checked_once_per_id) {
    tu_copy a;
    CHECK(make_copy(&a, ALTERED) == 0);
    paimon_table *t = tu_open_table(a.table);
    CHECK(t != NULL);
    if (!t) return;
    os_io o;
    os_install(&o, t);
    pm_snapshot **v;
    size_t n;
    pm_err e;
    CHECK_EQ_INT(pm_refs_snapshots(t, 0, &v, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 6);
    int64_t ids[8];
    size_t n_ids = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < n_ids && ids[k] != v[i]->schema_id) k++;
        if (k == n_ids && n_ids < 8) ids[n_ids++] = v[i]->schema_id;
    }
    CHECK_EQ_INT(n_ids, 2);
    CHECK_EQ_INT(o.n[N_SCHEMA_EXISTS], 2);
    pm_refs_snapshots_free(v, n);
    /* the same handle again: known already */
    CHECK_EQ_INT(pm_refs_snapshots(t, 0, &v, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(o.n[N_SCHEMA_EXISTS], 2);
    pm_refs_snapshots_free(v, n);
    /* a missing schema is still found, and not remembered */
    char p[400];
    snprintf(p, sizeof p, "%s/schema/schema-0", a.table);
    paimon_table *t2 = tu_open_table(a.table);
    CHECK(t2 && unlink(p) == 0);
    if (t2) {
        CHECK_EQ_INT(pm_refs_snapshots(t2, 0, &v, &n, &e), PAIMON_CORRUPT);
        CHECK(strstr(e.msg, "schema 0") != NULL);
        CHECK_EQ_INT(pm_refs_snapshots(t2, 0, &v, &n, &e), PAIMON_CORRUPT);
        pm_table_free(t2);
    }
    os_uninstall(&o, t);
    pm_table_free(t);
    tu_copy_remove(&a, TMP_PREFIX);
}

int main(void) {
    RUN(orphan_one_listing_same_plan_unpartitioned);
    RUN(orphan_one_listing_same_plan_partitioned);
    RUN(orphan_listing_failure_refuses);
    RUN(orphan_reads_use_the_store_parallelism);
    RUN(orphan_read_error_in_flight_refuses);
    RUN(deleter_batches_of_at_most_1000);
    RUN(deleter_reports_failed_items_and_batches);
    RUN(expire_deletes_through_batches_as_locally);
    RUN(schema_checked_once_per_id);
    return TEST_SUMMARY();
}
