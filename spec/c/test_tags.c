/* Tags in the C core (pm_tags.c): the Java tag file byte for byte, create
 * without replacing, and fault injection into tag deletion: for every k the
 * k-th I/O operation fails (once, or as a crash), and then
 *  - the table is still readable: verify finds no missing or unreadable
 *    file for any snapshot, tag or branch (the tag file goes first, so a
 *    tag never points at deleted files);
 *  - a re-run (delete the tag if it is still there, then orphan cleaning)
 *    leaves every file an undisturbed run keeps, unchanged, and nothing
 *    else but files the deletion planned (only the tag held them): once
 *    the tag file is gone, a file whose ADD and DELETE entries a retained
 *    manifest still holds is not an orphan to orphan cleaning, so an
 *    interrupted deletion can leave such files behind (docs/maintenance.md).
 * On a copy of the Java-written fixture with a tag and a branch. */
#include "test.h"
#include "pm_expire.h"
#include "pm_fileio_fault.h"
#include "pm_orphan.h"
#include "pm_tags.h"
#include "pm_verify.h"

#include <paimon.h>

#define FIX "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"
#define TMP_PREFIX "/tmp/pm_test_tags."

/* The fixture with tag t1 on snapshot 1, then every snapshot but the latest
 * expired: t1 alone holds some files. Every file is dated two days back, so
 * orphan cleaning may take what a failed deletion left. */
static int make_tagged(tu_copy *d, const char *fixture) {
    if (tu_copy_make(d, TMP_PREFIX, fixture)) return -1;
    paimon_table *t;
    pm_err e;
    if (pm_table_open(d->table, NULL, &t, &e)) return -1;
    pm_tag_create_opts co = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    pm_tag_created c;
    int rc = pm_tag_create(t, "t1", &co, &c, &e);
    pm_expire_opts xo;
    memset(&xo, 0, sizeof xo);
    xo.retain_min = 1;
    xo.has_older_than = 1;
    xo.older_than_ms = pm_now_millis();
    xo.max_deletes = 100;
    pm_expire_result xr;
    if (!rc && !(rc = pm_expire_snapshots(t, &xo, &xr, &e))) pm_clean_result_free(&xr.clean);
    if (rc) fprintf(stderr, "  make_tagged: %s\n", e.msg);
    pm_table_free(t);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "find '%s' -exec touch -h -d '2 days ago' {} +", d->table);
    return rc || tu_sh(cmd) ? -1 : 0;
}

static void remove_copy(tu_copy *d) { tu_copy_remove(d, TMP_PREFIX); }
static char *tree_of(const char *dir) { return tu_tree(dir, 0); }

/* Delete t1 if it is still there, then clean orphans (what an interrupted
 * deletion left: the tag file is gone by then). */
static int delete_then_clean(paimon_table *t, pm_err *e) {
    pm_snapshot *s = NULL;
    int rc = pm_tag_read(t->io, t->branch_root, "t1", &s, e);
    pm_snapshot_free(s);
    if (rc == PAIMON_OK) {
        const char *names[] = {"t1"};
        pm_tag_delete_opts o = {1, 0, NULL, NULL};
        pm_tag_delete_result r;
        if ((rc = pm_tags_delete(t, names, 1, &o, &r, e))) return rc;
        pm_clean_result_free(&r.clean);
    } else if (rc != PAIMON_NOTFOUND) {
        return rc;
    }
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.threads = 1;
    /* twice: orphan cleaning keeps a data file whose name a stray manifest
     * still holds (a commit in flight could be using it); the first round
     * removes the stray manifests, the second the files */
    for (int round = 0; round < 2; round++) {
        pm_orphan_result orr;
        if ((rc = pm_remove_orphan_files(t, &oo, &orr, e))) return rc;
        pm_clean_result_free(&orr.clean);
    }
    return PAIMON_OK;
}

/* Nothing any snapshot, tag or branch needs is missing or unreadable. */
static int readable(paimon_table *t, char *why, size_t wl) {
    pm_verify_opts vo = {1, 1, NULL, NULL};
    pm_verify_result vr;
    pm_err e;
    if (pm_verify(t, &vo, &vr, &e)) { snprintf(why, wl, "verify failed: %s", e.msg); return 0; }
    int ok = vr.n_missing == 0 && vr.n_unreadable == 0;
    if (!ok)
        snprintf(why, wl, "%s %s", vr.n_missing ? "missing" : "unreadable",
                 vr.n_missing ? vr.missing[0].path : vr.unreadable[0].path);
    pm_verify_result_free(&vr);
    return ok;
}

/* The files a dry run plans to delete (full paths, one per line). */
static char *planned_paths(void) {
    tu_copy d;
    if (make_tagged(&d, FIX)) return NULL;
    paimon_table *t;
    pm_err e;
    pm_buf out = {0};
    if (pm_table_open(d.table, NULL, &t, &e) == 0) {
        const char *names[] = {"t1"};
        pm_tag_delete_opts o = {1, 1, NULL, NULL};
        pm_tag_delete_result r;
        if (pm_tags_delete(t, names, 1, &o, &r, &e) == 0) {
            for (size_t i = 0; i < r.clean.n_paths; i++)
                pm_buf_printf(&out, "%s\n", tu_plan_path(&r.clean, i, NULL) + strlen(d.table) + 1);
            pm_clean_result_free(&r.clean);
        }
        pm_table_free(t);
    }
    remove_copy(&d);
    pm_buf_cstr(&out);
    return (char *)out.data;
}

/* Every line of want is in got (nothing kept was lost or changed); a line
 * only in got is a file the plan would have deleted (only t1 held it). */
static int tree_ok(const char *got, const char *want, const char *plan, char *why, size_t wl) {
    for (const char *l = want; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
        char line[1200];
        snprintf(line, sizeof line, "%.*s", (int)n, l);
        if (!strstr(got, line)) { snprintf(why, wl, "lost or changed: %.600s", line); return 0; }
        l += n;
    }
    for (const char *l = got; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
        char line[1200], path[1000];
        snprintf(line, sizeof line, "%.*s", (int)n, l);
        const char *rel = strstr(line, " ./");
        snprintf(path, sizeof path, "%.900s", rel ? rel + 3 : line);
        if (!strstr(want, line) && !strstr(plan, path)) { snprintf(why, wl, "stray: %.600s", line); return 0; }
        l += n;
    }
    return 1;
}

static void sweep(int crash) {
    tu_sweep s = {make_tagged, remove_copy, tree_of, delete_then_clean, 10, "tree differs"};
    long ops = 0;
    char *want = tu_sweep_clean_run(&s, FIX, &ops);
    CHECK(want != NULL);
    CHECK(ops > 10);
    char *plan = planned_paths();
    CHECK(plan != NULL && *plan);
    if (!want || !plan) return;
    int bad = 0;
    for (long k = 1; k <= ops && bad < 3; k++) {
        if (!tu_sweep_point(k, ops)) continue;
        tu_copy d;
        if (make_tagged(&d, FIX)) { CHECK(0); break; }
        paimon_table *t;
        pm_err e;
        CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
        const char *names[] = {"t1"};
        pm_tag_delete_opts o = {1, 0, NULL, NULL};
        pm_tag_delete_result r;
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, k, crash);
        if (pm_tags_delete(t, names, 1, &o, &r, &e) == PAIMON_OK) pm_clean_result_free(&r.clean);
        t->io = pm_fileio_fault_release(t->io);
        char why[1200];
        if (!readable(t, why, sizeof why)) {
            fprintf(stderr, "  fault at op %ld (crash %d): table not readable: %s\n", k, crash, why);
            bad++;
        }
        if (delete_then_clean(t, &e)) {
            fprintf(stderr, "  fault at op %ld (crash %d): re-run failed: %s\n", k, crash, e.msg);
            bad++;
        }
        pm_table_free(t);
        char *got = tree_of(d.table);
        if (!tree_ok(got, want, plan, why, sizeof why)) {
            fprintf(stderr, "  fault at op %ld (crash %d): %s\n", k, crash, why);
            bad++;
        }
        free(got);
        remove_copy(&d);
    }
    CHECK_EQ_INT(bad, 0);
    free(want);
    free(plan);
}

TEST(tag_delete_fault_at_every_operation) { sweep(0); }
TEST(tag_delete_crash_at_every_operation) { sweep(1); }

/* Java's tag file: the fixture's tag-fallback-base (snapshot 2, written by
 * Java's TagManager.createTag without retention) again, byte for byte; a
 * second create of the same name is PAIMON_EXISTS and changes nothing. */
TEST(tag_file_is_javas_and_never_replaced) {
    tu_copy d;
    CHECK_EQ_INT(tu_copy_make(&d, TMP_PREFIX, FIX), 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_tag_create_opts co = {1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    pm_tag_created c;
    CHECK_EQ_INT(pm_tag_create(t, "again", &co, &c, &e), PAIMON_OK);
    pm_buf want = {0}, got = {0};
    char p[400];
    snprintf(p, sizeof p, "%s/tag/tag-fallback-base", d.table);
    CHECK_EQ_INT(pm_io_read_all(t->io, p, &want, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_io_read_all(t->io, c.path, &got, &e), PAIMON_OK);
    CHECK(want.len == got.len && memcmp(want.data, got.data, want.len) == 0);
    co.snapshot_id = 3;
    CHECK_EQ_INT(pm_tag_create(t, "again", &co, &c, &e), PAIMON_EXISTS);
    got.len = 0;
    CHECK_EQ_INT(pm_io_read_all(t->io, c.path[0] ? c.path : p, &got, &e), PAIMON_OK);
    snprintf(p, sizeof p, "%s/tag/tag-again", d.table);
    got.len = 0;
    CHECK_EQ_INT(pm_io_read_all(t->io, p, &got, &e), PAIMON_OK);
    CHECK(want.len == got.len && memcmp(want.data, got.data, want.len) == 0);
    /* with a retention: Jackson's LocalDateTime array and Duration */
    pm_snapshot *s = tu_read_snap(t, 2);
    CHECK(s != NULL);
    pm_buf j = {0};
    /* 2026-01-02 03:04:05.123 local */
    CHECK_EQ_INT(pm_tag_to_json(s, 86400000, 1767323045123LL, &j), PAIMON_OK);
    CHECK(pm_buf_cstr(&j) == 0);
    CHECK(strstr((char *)j.data, "\"tagCreateTime\" : [ 2026, 1, 2, 3, 4, 5, 123000000 ],\n"
                                 "  \"tagTimeRetained\" : 86400.000000000\n}") != NULL);
    j.len = 0;
    /* whole minutes: second and nano left out, as Jackson does */
    CHECK_EQ_INT(pm_tag_to_json(s, 1500, 1767323040000LL, &j), PAIMON_OK);
    CHECK(pm_buf_cstr(&j) == 0);
    CHECK(strstr((char *)j.data, "\"tagCreateTime\" : [ 2026, 1, 2, 3, 4 ],\n  \"tagTimeRetained\" : 1.500000000\n}") !=
          NULL);
    pm_snapshot_free(s);
    pm_buf_free(&j);
    pm_buf_free(&want);
    pm_buf_free(&got);
    pm_table_free(t);
    tu_copy_remove(&d, TMP_PREFIX);
}

/* paimon.h: the operations with text options, results as JSON; "tag"
 * repeats for delete-tags; an existing tag is PAIMON_EXISTS. */
TEST(paimon_h_tag_operations) {
    tu_copy d;
    CHECK_EQ_INT(tu_copy_make(&d, TMP_PREFIX, FIX), 0);
    paimon_table *t = NULL;
    CHECK_EQ_INT(paimon_table_open(d.table, NULL, &t, NULL), PAIMON_OK);
    paimon_options *o = paimon_options_new();
    paimon_result *r = NULL;
    int64_t v = 0;
    paimon_options_set(o, "tag", "c1");
    paimon_options_set(o, "snapshot", "1");
    CHECK_EQ_INT(paimon_create_tag(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "snapshot_id", &v), PAIMON_OK);
    CHECK(v == 1);
    paimon_result_free(r);
    CHECK_EQ_INT(paimon_create_tag(t, o, &r), PAIMON_EXISTS);
    CHECK(r == NULL && strstr(paimon_table_errmsg(t), "already exists") != NULL);
    paimon_options_free(o);
    o = paimon_options_new();
    paimon_options_set(o, "tag", "c1");
    paimon_options_set(o, "new-name", "c2");
    CHECK_EQ_INT(paimon_rename_tag(t, o, &r), PAIMON_OK);
    CHECK(strcmp(paimon_result_str(r, "to"), "c2") == 0);
    paimon_result_free(r);
    paimon_options_free(o);
    o = paimon_options_new();
    paimon_options_set(o, "tag", "c2");
    paimon_options_set(o, "tag", "fallback-base");
    paimon_options_set(o, "dry-run", "true");
    CHECK_EQ_INT(paimon_delete_tags(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "tags", &v), PAIMON_OK);
    CHECK(v == 2);
    paimon_result_free(r);
    paimon_options_set(o, "dryrun", "true");
    CHECK_EQ_INT(paimon_delete_tags(t, o, &r), PAIMON_MISUSE);
    paimon_options_free(o);
    o = paimon_options_new();
    paimon_options_set(o, "dry-run", "true");
    CHECK_EQ_INT(paimon_expire_tags(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "candidates", &v), PAIMON_OK);
    CHECK(v == 2);
    paimon_result_free(r);
    paimon_options_free(o);
    paimon_table_close(t);
    tu_copy_remove(&d, TMP_PREFIX);
}

int main(void) {
    RUN(paimon_h_tag_operations);
    RUN(tag_file_is_javas_and_never_replaced);
    RUN(tag_delete_fault_at_every_operation);
    RUN(tag_delete_crash_at_every_operation);
    return TEST_SUMMARY();
}
