/* Orphan file cleaning in C, on temp copies of Java-written tables: the
 * fixture's known orphans go and nothing else; a cut-off in the future is
 * refused; an empty used set with data files present aborts; a dry run
 * changes nothing; fault injection at every I/O operation (once, or as a
 * crash) followed by a clean re-run leaves exactly the tree of an
 * undisturbed run. */
#include "test.h"
#include "pm_fileio_fault.h"
#include "pm_orphan.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BITMAP "cpp-parquet-append_with_bitmap/append_with_bitmap.db/append_with_bitmap"
#define TAGGED "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"

typedef tu_copy tdir;

#define TMP_PREFIX "/tmp/pm_test_orphan."

static int tdir_make(tdir *d, const char *fixture) {
    int rc = tu_copy_make(d, TMP_PREFIX, fixture);
    usleep(20000);    /* every copied file is now older than "now" */
    return rc;
}

static void tdir_remove(tdir *d) { tu_copy_remove(d, TMP_PREFIX); }

static char *tree(const char *dir) { return tu_tree(dir, 0); }

/* Options for a clean with the cut-off `age_ms` before now. */
static pm_orphan_opts opts_older(int64_t age_ms, int threads, int dry_run) {
    pm_orphan_opts o;
    memset(&o, 0, sizeof o);
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis() - age_ms;
    o.allow_young_cutoff = 1;   /* below the 1 h floor on purpose */
    o.threads = threads;
    o.dry_run = dry_run;
    return o;
}

static int clean_older(paimon_table *t, int64_t age_ms, int threads, int dry_run, pm_orphan_result *r, pm_err *e) {
    pm_orphan_opts o = opts_older(age_ms, threads, dry_run);
    return pm_remove_orphan_files(t, &o, r, e);
}

static int clean(paimon_table *t, int threads, int dry_run, pm_orphan_result *r, pm_err *e) {
    return clean_older(t, 0, threads, dry_run, r, e);
}

TEST(removes_the_known_orphans) {
    tdir d;
    CHECK(tdir_make(&d, BITMAP) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_orphan_result r;
    CHECK_EQ_INT(clean(t, 4, 0, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.clean.count[PM_K_DATA], 1);
    CHECK_EQ_INT(r.clean.count[PM_K_MANIFEST], 1);
    CHECK_EQ_INT(r.clean.count[PM_K_MANIFEST_LIST], 2);
    char p[400];
    snprintf(p, sizeof p, "%s/bucket-0/data-5816f838-a213-4d34-89c3-2cab0fa8c0cb-0.parquet", d.table);
    CHECK(!tu_file_exists(p));
    snprintf(p, sizeof p, "%s/manifest/manifest-list-9661d22b-a0de-419b-8d2b-cae55816f507-1", d.table);
    CHECK(!tu_file_exists(p));
    pm_clean_result_free(&r.clean);
    /* a second run finds nothing */
    CHECK_EQ_INT(clean(t, 1, 0, &r, &e), PAIMON_OK);
    int64_t n = 0;
    for (int k = 0; k < PM_K__N; k++) n += r.clean.count[k];
    CHECK_EQ_INT(n, 0);
    pm_clean_result_free(&r.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

static void backdate(const char *path, int64_t seconds) {
    struct timespec ts[2];
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= (time_t)seconds;
    ts[1] = ts[0];
    CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

/* Ages are looked up only for files nobody uses, after the used set: with a
 * cut-off an hour ago and everything fresh, the fixture's 4 known orphans
 * are candidates kept as recent; once one of them (and a used data file,
 * and a stale temp file) is two hours old, exactly the old orphan and the
 * temp file go. A directory with a data file's name is never a candidate. */
TEST(age_is_checked_for_unused_files_only) {
    tdir d;
    CHECK(tdir_make(&d, BITMAP) == 0);
    char p[400], used_file[700], tmp[400];
    snprintf(p, sizeof p, "%s/bucket-0/data-dir-not-a-file.parquet", d.table);
    CHECK(mkdir(p, 0755) == 0);
    {   /* not empty: the empty-directory sweep leaves it (an empty one would go, as in Java) */
        char in[500];
        snprintf(in, sizeof in, "%s/keep", p);
        FILE *f = fopen(in, "w");
        CHECK(f != NULL);
        if (f) fclose(f);
    }
    backdate(p, 7200);
    snprintf(tmp, sizeof tmp, "%s/snapshot/.snapshot-9.0c8e3a1b-temp.tmp", d.table);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_orphan_result r;
    CHECK_EQ_INT(clean_older(t, 3600 * 1000, 3, 0, &r, &e), PAIMON_OK);
    int64_t n = 0;
    for (int k = 0; k < PM_K__N; k++) n += r.clean.count[k];
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(r.candidates, 5);                 /* 4 orphans + the temp file */
    CHECK_EQ_INT(r.recent, 5);
    CHECK_EQ_INT(r.used, r.listed - 5);
    CHECK_EQ_INT(r.used, 4);                     /* 1 data file, 1 manifest, 2 lists */
    int64_t listed = r.listed;
    pm_clean_result_free(&r.clean);

    snprintf(p, sizeof p, "%s/bucket-0/data-5816f838-a213-4d34-89c3-2cab0fa8c0cb-0.parquet", d.table);
    backdate(p, 7200);
    backdate(tmp, 7200);
    /* a used data file of the same bucket, just as old */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls '%s/bucket-0' | grep '^data-' | grep -v 5816f838 | head -1", d.table);
    FILE *ls = popen(cmd, "r");
    char name[256] = "";
    if (ls) { if (!fgets(name, sizeof name, ls)) name[0] = '\0'; pclose(ls); }
    name[strcspn(name, "\n")] = '\0';
    CHECK(name[0] != '\0');
    snprintf(used_file, sizeof used_file, "%s/bucket-0/%s", d.table, name);
    backdate(used_file, 7200);
    CHECK_EQ_INT(clean_older(t, 3600 * 1000, 3, 0, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.listed, listed);
    CHECK_EQ_INT(r.candidates, 5);
    CHECK_EQ_INT(r.recent, 3);
    CHECK_EQ_INT(r.clean.count[PM_K_DATA], 1);
    CHECK_EQ_INT(r.clean.count[PM_K_TEMP], 1);
    n = 0;
    for (int k = 0; k < PM_K__N; k++) n += r.clean.count[k];
    CHECK_EQ_INT(n, 2);
    CHECK(!tu_file_exists(p));
    CHECK(!tu_file_exists(tmp));
    CHECK(tu_file_exists(used_file));
    snprintf(p, sizeof p, "%s/bucket-0/data-dir-not-a-file.parquet", d.table);
    CHECK(tu_file_exists(p));
    pm_clean_result_free(&r.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

/* A commit that lands while the ages are checked (the last step before
 * deleting): the run is a conflict and deletes nothing. */
typedef struct commit_hook { const char *table; int fired; } commit_hook;

static void commit_during(void *ud, const char *phase, size_t done, size_t total) {
    commit_hook *h = ud;
    if (h->fired || strcmp(phase, "checking ages") || done != total) return;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cp '%s/snapshot/snapshot-1' '%s/snapshot/snapshot-2'", h->table, h->table);
    h->fired = tu_sh(cmd) == 0;
}

TEST(commit_while_cleaning_deletes_nothing) {
    tdir d;
    CHECK(tdir_make(&d, BITMAP) == 0);
    char *before = tree(d.table);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    commit_hook h = {d.table, 0};
    pm_orphan_opts o;
    memset(&o, 0, sizeof o);
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.allow_young_cutoff = 1;   /* below the 1 h floor on purpose */
    o.threads = 2;
    o.progress = commit_during;
    o.progress_ud = &h;
    pm_orphan_result r;
    CHECK_EQ_INT(pm_remove_orphan_files(t, &o, &r, &e), PAIMON_CONFLICT);
    CHECK(h.fired);
    CHECK(strstr(e.msg, "changed while cleaning") && strstr(e.msg, "nothing deleted"));
    /* every file is still there (plus the new snapshot) */
    char p[400];
    snprintf(p, sizeof p, "%s/snapshot/snapshot-2", d.table);
    CHECK(unlink(p) == 0);
    tu_check_tree_same(tree, d.table, before);
    pm_table_free(t);
    tdir_remove(&d);
}

TEST(future_cutoff_is_refused) {
    tdir d;
    CHECK(tdir_make(&d, BITMAP) == 0);
    char *before = tree(d.table);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_orphan_result r;
    CHECK_EQ_INT(clean_older(t, -60000, 1, 0, &r, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "future") != NULL);
    tu_check_tree_same(tree, d.table, before);
    pm_table_free(t);
    tdir_remove(&d);
}

TEST(empty_used_set_aborts) {
    tdir d;
    CHECK(tdir_make(&d, BITMAP) == 0);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/snapshot/*", d.table);
    CHECK(tu_sh(cmd) == 0);
    char *before = tree(d.table);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_orphan_result r;
    CHECK_EQ_INT(clean(t, 2, 0, &r, &e), PAIMON_CONFLICT);
    tu_check_tree_same(tree, d.table, before);
    pm_table_free(t);
    tdir_remove(&d);
}

TEST(dry_run_changes_nothing) {
    tdir d;
    CHECK(tdir_make(&d, TAGGED) == 0);
    char *before = tree(d.table);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_orphan_result r;
    CHECK_EQ_INT(clean(t, 4, 1, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.clean.n_paths, 2);
    tu_check_tree_same(tree, d.table, before);
    pm_clean_result_free(&r.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

/* Candidate names are kept packed (pm_names.h): the plan and the deletes
 * name every orphan with its exact bytes, canonical or a near miss of the
 * canonical shape (uppercase hex, leading zero, long counter, extra
 * suffix), and a near miss of a used file's name never protects it nor
 * gets the used file deleted. */
TEST(near_miss_names_round_trip) {
    tdir d;
    CHECK(tdir_make(&d, BITMAP) == 0);
    static const char *const planted[] = {
        "bucket-0/data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-7.parquet",
        "bucket-0/data-0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0-7.parquet",
        "bucket-0/data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-07.parquet",
        "bucket-0/data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-123456789012345678901.parquet",
        "bucket-0/data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-7.parquet.crc",
        "bucket-0/data-54B396B6-DF2D-4C6A-A0AE-B6A5AFB612D7-0.parquet",   /* the used file, uppercase */
        "bucket-0/data-54b396b6-df2d-4c6a-a0ae-b6a5afb612d7-00.parquet",  /* the used file, leading zero */
        "manifest/manifest-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0",
        "manifest/manifest-list-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-18446744073709551615",
    };
    enum { N = sizeof planted / sizeof *planted };
    char p[600];
    for (size_t i = 0; i < N; i++) {
        snprintf(p, sizeof p, "%s/%s", d.table, planted[i]);
        CHECK(tu_write_file(p, "x", 1) == 0);
        backdate(p, 7200);
    }
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_orphan_result r;
    CHECK_EQ_INT(clean_older(t, 3600 * 1000, 4, 1, &r, &e), PAIMON_OK);
    /* every planted path appears in the plan, byte for byte */
    for (size_t i = 0; i < N; i++) {
        snprintf(p, sizeof p, "%s/%s", d.table, planted[i]);
        int found = 0;
        for (size_t k = 0; k < r.clean.n_paths; k++) found += !strcmp(tu_plan_path(&r.clean, k, NULL), p);
        if (found != 1) fprintf(stderr, "# planned %d times: %s\n", found, p);
        CHECK_EQ_INT(found, 1);
    }
    pm_clean_result_free(&r.clean);
    CHECK_EQ_INT(clean_older(t, 3600 * 1000, 4, 0, &r, &e), PAIMON_OK);
    for (size_t i = 0; i < N; i++) {
        snprintf(p, sizeof p, "%s/%s", d.table, planted[i]);
        CHECK(!tu_file_exists(p));
    }
    snprintf(p, sizeof p, "%s/bucket-0/data-54b396b6-df2d-4c6a-a0ae-b6a5afb612d7-0.parquet", d.table);
    CHECK(tu_file_exists(p));
    pm_clean_result_free(&r.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

/* Manifests shared out by blocks among tasks (every manifest split as far
 * as the threads allow) plan exactly what one task per manifest plans; a
 * damaged manifest still refuses the run, whichever part meets the damage. */
static int clean_parts(paimon_table *t, int64_t part_bytes, int dry_run, pm_orphan_result *r, pm_err *e) {
    pm_orphan_opts o = opts_older(0, 4, dry_run);
    o.manifest_part_bytes = part_bytes;
    return pm_remove_orphan_files(t, &o, r, e);
}

static char *plan_of(const pm_orphan_result *r) {
    pm_buf b = {0};
    pm_buf_printf(&b, "listed %lld used %lld candidates %lld read %lld skipped %lld\n", (long long)r->listed,
                  (long long)r->used, (long long)r->candidates, (long long)r->manifests_read,
                  (long long)r->manifests_skipped);
    for (size_t i = 0; i < r->clean.n_paths; i++) pm_buf_printf(&b, "%s\n", tu_plan_path(&r->clean, i, NULL));
    pm_buf_cstr(&b);
    return (char *)b.data;
}

TEST(manifests_shared_by_parts_plan_the_same) {
    const char *fixtures[] = {BITMAP, TAGGED};
    for (int f = 0; f < 2; f++) {
        tdir d;
        CHECK(tdir_make(&d, fixtures[f]) == 0);
        paimon_table *t;
        pm_err e;
        CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
        pm_orphan_result whole, parts;
        CHECK_EQ_INT(clean_parts(t, 0, 1, &whole, &e), PAIMON_OK);
        CHECK_EQ_INT(clean_parts(t, 1, 1, &parts, &e), PAIMON_OK);   /* every manifest: 4 tasks */
        char *a = plan_of(&whole), *b = plan_of(&parts);
        CHECK_EQ_STR(a, b);
        CHECK(whole.clean.n_paths > 0);
        free(a);
        free(b);
        pm_clean_result_free(&whole.clean);
        pm_clean_result_free(&parts.clean);
        /* every manifest's records cut short inside a valid container (the
         * used ones too, spec/support/truncate_blocks.py): refused, nothing deleted */
        char cmd[700];
        snprintf(cmd, sizeof cmd,
                 "for f in $(ls '%s'/manifest/manifest-* | grep -v manifest-list); do "
                 "/usr/bin/python3 spec/support/truncate_blocks.py \"$f\" && touch -d '2 days ago' \"$f\" || exit 1; done",
                 d.table);
        CHECK(tu_sh(cmd) == 0);
        char *before = tree(d.table);
        pm_orphan_result r;
        CHECK(clean_parts(t, 1, 0, &r, &e) != PAIMON_OK);
        tu_check_tree_same(tree, d.table, before);
        pm_table_free(t);
        tdir_remove(&d);
    }
}

/* The clean under fault injection: frees its result. */
static int sweep_op(paimon_table *t, pm_err *e) {
    pm_orphan_result r;
    int rc = clean(t, 1, 0, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

static void fault_sweep(const char *fixture, int crash) {
    static const tu_sweep sweep = {tdir_make, tdir_remove, tree, sweep_op, 10, "tree differs"};
    tu_fault_sweep(&sweep, fixture, crash);
}

TEST(fault_at_every_operation) { fault_sweep(BITMAP, 0); }
TEST(crash_at_every_operation) { fault_sweep(TAGGED, 1); }

int main(void) {
    RUN(removes_the_known_orphans);
    RUN(age_is_checked_for_unused_files_only);
    RUN(commit_while_cleaning_deletes_nothing);
    RUN(future_cutoff_is_refused);
    RUN(empty_used_set_aborts);
    RUN(dry_run_changes_nothing);
    RUN(manifests_shared_by_parts_plan_the_same);
    RUN(near_miss_names_round_trip);
    RUN(fault_at_every_operation);
    RUN(crash_at_every_operation);
    return TEST_SUMMARY();
}
