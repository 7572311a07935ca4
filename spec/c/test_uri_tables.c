/* Tables named by URI (s3://, s3a://) with FileIO options: the options
 * reach the FileIO once and every handle derived from the table uses it;
 * the table keeps its URI; nothing above the FileIO takes a local path for
 * granted (verify, the commit's existence check, orphan cleaning's local
 * fast path). The S3 FileIO is replaced by a stand-in that records what
 * it was handed and serves a local directory (pm_fileio_mapped_new), so
 * these keep holding whatever S3 client is built in. */
#include "test.h"

#include "pm_datafile.h"
#include "pm_orphan.h"
#include "pm_verify.h"

#include <time.h>
#include <utime.h>

#define BRANCHED "cpp-parquet-append_table_with_append_pt_branch/append_table_with_append_pt_branch.db/" \
                 "append_table_with_append_pt_branch"
#define BITMAP "cpp-parquet-append_with_bitmap/append_with_bitmap.db/append_with_bitmap"
#define TMP_PREFIX "/tmp/pm_test_uri."

/* ---- the S3 stand-in ------------------------------------------------------------ */

static int s3_calls;
static char s3_base[200];          /* what "<scheme>://" stands for */
static char s3_options[600];       /* the last options, "k=v;" */

static int standin_s3_open(const char *uri, const char *const *options, pm_fileio **out, pm_err *e) {
    s3_calls++;
    s3_options[0] = '\0';
    for (size_t i = 0; options && options[i]; i += 2)
        snprintf(s3_options + strlen(s3_options), sizeof s3_options - strlen(s3_options), "%s=%s;", options[i],
                 options[i + 1]);
    char prefix[16];
    const char *colon = strchr(uri, ':');
    snprintf(prefix, sizeof prefix, "%.*s://", colon ? (int)(colon - uri) : 0, uri);
    *out = pm_fileio_mapped_new(prefix, s3_base);
    return *out ? PAIMON_OK : pm_nomem(e);
}

static const char *const OPTS[] = {"s3.endpoint", "http://127.0.0.1:7480", "s3.secret-key", "S3CR3T", NULL};

/* c holds a copy of fixture at c->dir/bk/t, served as <scheme>://bk/t. */
static paimon_table *open_as_uri(tu_copy *c, const char *fixture, const char *scheme) {
    snprintf(c->dir, sizeof c->dir, "%sXXXXXX", TMP_PREFIX);
    if (!mkdtemp(c->dir)) return NULL;
    snprintf(c->table, sizeof c->table, "%s/bk", c->dir);
    mkdir(c->table, 0755);
    snprintf(c->table, sizeof c->table, "%s/bk/t", c->dir);
    if (tu_cp_fixture(fixture, c->table)) return NULL;
    snprintf(s3_base, sizeof s3_base, "%s", c->dir);
    char uri[64];
    snprintf(uri, sizeof uri, "%s://bk/t", scheme);
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open_opts(uri, NULL, OPTS, &t, &e)) fprintf(stderr, "  open %s: %s\n", uri, e.msg);
    return t;
}

TEST(uri_table_keeps_its_uri_and_its_fileio_for_every_branch) {
    pm_fileio_opener old = pm_fileio_set_s3_opener(standin_s3_open);
    s3_calls = 0;
    tu_copy c;
    paimon_table *t = open_as_uri(&c, BRANCHED, "s3a");
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_STR(t->root, "s3a://bk/t");
        CHECK_EQ_INT(s3_calls, 1);
        CHECK_EQ_STR(s3_options, "s3.endpoint=http://127.0.0.1:7480;s3.secret-key=S3CR3T;");
        paimon_table *bt = NULL;
        pm_err e;
        CHECK_EQ_INT(pm_table_open_shared(t, "test", &bt, &e), PAIMON_OK);
        if (bt) {
            CHECK(bt->io == t->io);
            CHECK_EQ_STR(bt->branch_root, "s3a://bk/t/branch/branch-test");
            CHECK(bt->io_options && !strcmp(bt->io_options[0], "s3.endpoint") && !strcmp(bt->io_options[3], "S3CR3T"));
        }
        pm_table_free_shared(bt);
        /* verify visits every branch, and checks the files (they are on the table's FileIO) */
        pm_verify_opts vo = {0};
        vo.threads = 2;
        pm_verify_result vr;
        CHECK_EQ_INT(pm_verify(t, &vo, &vr, &e), PAIMON_OK);
        CHECK(vr.branches >= 2);
        CHECK_EQ_INT(vr.not_checked, 0);
        CHECK(vr.checked[PM_K_DATA] > 0);
        pm_verify_result_free(&vr);
        CHECK_EQ_INT(s3_calls, 1);   /* no second FileIO (a second one would lack the options) */
        pm_table_free(t);
    }
    tu_copy_remove(&c, TMP_PREFIX);
    pm_fileio_set_s3_opener(old);
}

/* Orphan cleaning through s3:// finds what it finds on the local copy. */
TEST(orphan_cleaning_through_a_uri_matches_the_local_copy) {
    pm_fileio_opener old = pm_fileio_set_s3_opener(standin_s3_open);
    tu_copy cu, cl;
    paimon_table *tu = open_as_uri(&cu, BRANCHED, "s3");
    paimon_table *tl = tu_copy_open(&cl, TMP_PREFIX, BRANCHED);
    CHECK(tu && tl);
    if (tu && tl) {
        const char *dirs[] = {cu.table, cl.table};
        for (int i = 0; i < 2; i++) {   /* a stray two days old in both */
            char p[400];
            snprintf(p, sizeof p, "%s/pt=1/bucket-0/data-stray.parquet", dirs[i]);
            CHECK(tu_write_file(p, "x", 1) == 0);
            struct utimbuf ut = {time(NULL) - 2 * 86400, time(NULL) - 2 * 86400};
            CHECK(utime(p, &ut) == 0);
        }
        pm_orphan_opts o = {0};
        o.threads = 2;
        pm_orphan_result ru, rl;
        pm_err e;
        CHECK_EQ_INT(pm_remove_orphan_files(tu, &o, &ru, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_remove_orphan_files(tl, &o, &rl, &e), PAIMON_OK);
        CHECK_EQ_INT(ru.listed, rl.listed);
        CHECK_EQ_INT(ru.used, rl.used);
        CHECK_EQ_INT(ru.candidates, rl.candidates);
        CHECK_EQ_INT(ru.clean.count[PM_K_DATA], 1);
        CHECK_EQ_INT(rl.clean.count[PM_K_DATA], 1);
        pm_clean_result_free(&ru.clean);
        pm_clean_result_free(&rl.clean);
        char p[400];
        snprintf(p, sizeof p, "%s/pt=1/bucket-0/data-stray.parquet", cu.table);
        CHECK(!tu_file_exists(p));
    }
    pm_table_free(tu);
    pm_table_free(tl);
    tu_copy_remove(&cu, TMP_PREFIX);
    tu_copy_remove(&cl, TMP_PREFIX);
    pm_fileio_set_s3_opener(old);
}

/* The commit's last check (every new file still exists) runs on s3:// too. */
TEST(commit_on_a_uri_table_refuses_a_missing_data_file) {
    pm_fileio_opener old = pm_fileio_set_s3_opener(standin_s3_open);
    tu_copy c;
    paimon_table *t = open_as_uri(&c, BITMAP, "s3");
    CHECK(t != NULL);
    if (t) {
        int64_t before = tu_latest_id(t);
        tentry x;
        tentry_init_at(&x, NULL, 0, 0, "data-never-written.parquet", 3, 0);
        x.m.partition = (pm_bytes){x.empty.data, x.empty.len};
        pm_commit_opts o;
        pm_commit_opts_from_table(t, &o);
        o.commit_user = "u";
        pm_err e;
        int64_t id = 0;
        CHECK_EQ_INT(pm_commit(t, &x.m, 1, &o, &id, &e), PAIMON_CONFLICT);
        CHECK(strstr(e.msg, "data-never-written.parquet") != NULL);
        CHECK_EQ_INT(tu_latest_id(t), before);
        tentry_free(&x);
        pm_table_free(t);
    }
    tu_copy_remove(&c, TMP_PREFIX);
    pm_fileio_set_s3_opener(old);
}

/* ---- orphan cleaning's direct system calls follow PM_IO_LOCAL ----------------------- */

static long lists;
static pm_fileio_ops counting_ops;
static const pm_fileio_ops *inner_ops;

static int counting_list(pm_fileio *io, const char *dir, pm_dirent **out, size_t *n, pm_err *e) {
    __atomic_add_fetch(&lists, 1, __ATOMIC_RELAXED);
    return inner_ops->list(io, dir, out, n, e);
}

static long orphan_lists_with_caps(const char *table, unsigned caps) {
    paimon_table *t = tu_open_table(table);
    if (!t) return -1;
    inner_ops = t->io->ops;
    counting_ops = *inner_ops;
    counting_ops.list = counting_list;
    counting_ops.caps = caps;
    counting_ops.destroy = inner_ops->destroy;
    t->io->ops = &counting_ops;
    lists = 0;
    pm_orphan_opts o = {0};
    o.dry_run = 1;
    pm_orphan_result r;
    pm_err e;
    long n = pm_remove_orphan_files(t, &o, &r, &e) ? -1 : lists;
    if (n >= 0) pm_clean_result_free(&r.clean);
    t->io->ops = inner_ops;
    pm_table_free(t);
    return n;
}

TEST(orphan_listing_takes_the_local_fast_path_by_capability) {
    tu_copy c;
    CHECK(tu_copy_make(&c, TMP_PREFIX, BRANCHED) == 0);
    long local = orphan_lists_with_caps(c.table, PM_IO_LOCAL);
    long remote = orphan_lists_with_caps(c.table, 0);
    CHECK(local >= 0 && remote >= 0);
    /* the local FileIO's capability, not its identity, picks readdir */
    CHECK(local < remote);
    /* the fault wrapper is not local: every listing goes through it (a
     * fault-injection test must not be bypassed by readdir) */
    paimon_table *t = tu_open_table(c.table);
    if (t) {
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_LIST, 0, 0);
        CHECK(!pm_io_has(t->io, PM_IO_LOCAL));
        pm_orphan_opts o = {0};
        o.dry_run = 1;
        pm_orphan_result r;
        pm_err e;
        CHECK_EQ_INT(pm_remove_orphan_files(t, &o, &r, &e), PAIMON_OK);
        pm_clean_result_free(&r.clean);
        CHECK_EQ_INT(pm_fileio_fault_count(t->io), remote);
        pm_table_free(t);
    }
    tu_copy_remove(&c, TMP_PREFIX);
}

/* ---- external paths on another file system ------------------------------------------ */

TEST(external_path_on_another_file_system_is_refused_by_name) {
    tu_copy c;
    paimon_table *t = tu_copy_open(&c, TMP_PREFIX, BITMAP);
    if (!t) return;
    tentry x;
    tentry_init_at(&x, NULL, 0, 0, "data-ext.parquet", 3, 0);
    x.m.partition = (pm_bytes){x.empty.data, x.empty.len};
    x.m.file.external_path = "s3://other-bucket/ext/data-ext.parquet";
    pm_datafile_reader *r = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_datafile_reader_open(t, &x.m, NULL, 0, &r, &e), PAIMON_UNSUPPORTED);
    CHECK(strstr(e.msg, "s3://other-bucket/ext/data-ext.parquet") && strstr(e.msg, "another file system"));
    CHECK(r == NULL);
    /* the same file system: read (here: not there) */
    char ext[400];
    snprintf(ext, sizeof ext, "file:%s/data-ext.parquet", c.dir);
    x.m.file.external_path = ext;
    CHECK_EQ_INT(pm_datafile_reader_open(t, &x.m, NULL, 0, &r, &e), PAIMON_NOTFOUND);
    tentry_free(&x);
    pm_table_free(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

/* A URI naming a whole bucket is no table: refused before any FileIO opens
 * (a table there would share its prefix with everything in the bucket). */
TEST(uri_of_a_whole_bucket_is_refused_before_any_request) {
    pm_fileio_opener old = pm_fileio_set_s3_opener(standin_s3_open);
    snprintf(s3_base, sizeof s3_base, "/nonexistent");
    const char *roots[] = {"s3://bk", "s3://bk/", "s3a://bk//", "pmtest://bk", NULL};
    for (size_t i = 0; roots[i]; i++) {
        t_cur = roots[i];
        paimon_table *t = NULL;
        pm_err e;
        s3_calls = 0;
        CHECK_EQ_INT(pm_table_open_opts(roots[i], NULL, OPTS, &t, &e), PAIMON_MISUSE);
        CHECK(t == NULL && s3_calls == 0);
        CHECK(strstr(e.msg, roots[i]) && strstr(e.msg, "names a whole bucket"));
    }
    t_cur = "uri_of_a_whole_bucket_is_refused_before_any_request";
    CHECK(pm_uri_is_bucket_root("s3://bk"));
    CHECK(!pm_uri_is_bucket_root("s3://bk/t"));
    CHECK(!pm_uri_is_bucket_root("s3://bk//t/"));
    CHECK(!pm_uri_is_bucket_root("/"));
    CHECK(!pm_uri_is_bucket_root("file:///"));
    CHECK(!pm_uri_is_bucket_root("rel/t"));
    pm_fileio_set_s3_opener(old);
}

int main(void) {
    RUN(uri_table_keeps_its_uri_and_its_fileio_for_every_branch);
    RUN(orphan_cleaning_through_a_uri_matches_the_local_copy);
    RUN(commit_on_a_uri_table_refuses_a_missing_data_file);
    RUN(orphan_listing_takes_the_local_fast_path_by_capability);
    RUN(external_path_on_another_file_system_is_refused_by_name);
    RUN(uri_of_a_whole_bucket_is_refused_before_any_request);
    return TEST_SUMMARY();
}
