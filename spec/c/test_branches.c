/* Branches in the C core (pm_branches.c), checked against Java's
 * FileSystemBranchManager: createBranch from a tag writes the fixture's
 * Java-written branch again byte for byte; names Java refuses are refused;
 * an existing branch is never replaced; dropBranch frees exactly what only
 * the branch held (the same files tag deletion frees when the branch's tag
 * held them) and fails closed on an unreadable manifest; fastForward gives
 * main the branch's snapshots. Fault injection at every I/O operation of
 * delete and fast-forward: the table stays readable (verify) and a re-run
 * finishes the job. On copies of the Java-written fixture with a tag and a
 * branch. */
#include "test.h"
#include "pm_branches.h"
#include "pm_expire.h"
#include "pm_fileio_fault.h"
#include "pm_orphan.h"
#include "pm_tags.h"
#include "pm_verify.h"

#define FIX "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"
#define TMP_PREFIX "/tmp/pm_test_branches."

static void remove_copy(tu_copy *d) { tu_copy_remove(d, TMP_PREFIX); }
static char *tree_of(const char *dir) { return tu_tree(dir, 0); }

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

static char *read_text(const char *path) {
    pm_buf b = {0};
    pm_err e;
    pm_fileio *io = pm_fileio_local();
    int rc = pm_io_read_all(io, path, &b, &e);
    pm_fileio_destroy(io);
    if (rc || pm_buf_cstr(&b)) { pm_buf_free(&b); return NULL; }
    return (char *)b.data;
}

/* Java's createBranch(name, tag): the fixture's branch-fallback, made by
 * Java from tag fallback-base, again byte for byte (and no other file). */
TEST(create_from_tag_is_javas_branch) {
    tu_copy d;
    CHECK_EQ_INT(tu_copy_make(&d, TMP_PREFIX, FIX), 0);
    char dir[600], cmd[1400];
    snprintf(dir, sizeof dir, "%s/branch/branch-fallback", d.table);
    char *want = tree_of(dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(tu_sh(cmd), 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_branch_created c;
    CHECK_EQ_INT(pm_branch_create(t, "fallback", "fallback-base", 1, &c, &e), PAIMON_OK);
    CHECK(!tu_file_exists(dir));                  /* a dry run writes nothing */
    CHECK_EQ_INT(pm_branch_create(t, "fallback", "fallback-base", 0, &c, &e), PAIMON_OK);
    CHECK(c.snapshot_id == 2 && c.n_files == 3);
    char *got = tree_of(dir);
    CHECK_EQ_STR(got, want);
    free(got);
    /* a second create is a conflict and replaces nothing */
    CHECK_EQ_INT(pm_branch_create(t, "fallback", NULL, 0, &c, &e), PAIMON_EXISTS);
    CHECK(strstr(e.msg, "already exists") != NULL);
    got = tree_of(dir);
    CHECK_EQ_STR(got, want);
    free(got);
    free(want);
    /* Java's validateBranch */
    CHECK_EQ_INT(pm_branch_create(t, "main", NULL, 0, &c, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "default branch") != NULL);
    CHECK_EQ_INT(pm_branch_create(t, "  ", NULL, 0, &c, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "is blank") != NULL);
    CHECK_EQ_INT(pm_branch_create(t, "123", NULL, 0, &c, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "pure numeric") != NULL);
    CHECK_EQ_INT(pm_branch_create(t, "a/b", NULL, 0, &c, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(pm_branch_create(t, "x", "no-such-tag", 0, &c, &e), PAIMON_NOTFOUND);
    /* empty branch: the schemas up to the latest */
    CHECK_EQ_INT(pm_branch_create(t, "empty", NULL, 0, &c, &e), PAIMON_OK);
    snprintf(dir, sizeof dir, "%s/branch/branch-empty/schema/schema-0", d.table);
    snprintf(cmd, sizeof cmd, "%s/schema/schema-0", d.table);
    char *a = read_text(dir), *b = read_text(cmd);
    CHECK(a && b && !strcmp(a, b));
    free(a);
    free(b);
    pm_branch_info *v = NULL;
    size_t n = 0;
    CHECK_EQ_INT(pm_branches_list(t, &v, &n, &e), PAIMON_OK);
    CHECK(n == 2);
    for (size_t i = 0; i < n; i++) {
        CHECK(v[i].create_time > 0);
        if (!strcmp(v[i].name, "fallback")) CHECK(v[i].latest_snapshot == 2 && v[i].n_tags == 1);
        else CHECK(!strcmp(v[i].name, "empty") && v[i].latest_snapshot == 0);
    }
    pm_branch_infos_free(v, n);
    pm_table_free(t);
    remove_copy(&d);
}

/* Tag t1 on snapshot 1, branch b1 from it, every snapshot of main but the
 * latest expired, tag t1 deleted (b1 keeps its files): b1 alone holds some
 * files. Every file is dated two days back, for orphan cleaning. With
 * keep_tag the tag stays (then the tag deletion plan is the reference). */
static int make_branch_state(tu_copy *d, const char *fixture, int keep_tag) {
    if (tu_copy_make(d, TMP_PREFIX, fixture)) return -1;
    paimon_table *t;
    pm_err e;
    if (pm_table_open(d->table, NULL, &t, &e)) return -1;
    pm_tag_create_opts co = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    pm_tag_created c;
    int rc = pm_tag_create(t, "t1", &co, &c, &e);
    pm_branch_created bc;
    if (!rc && !keep_tag) rc = pm_branch_create(t, "b1", "t1", 0, &bc, &e);
    pm_expire_opts xo;
    memset(&xo, 0, sizeof xo);
    xo.retain_min = 1;
    xo.has_older_than = 1;
    xo.older_than_ms = pm_now_millis();
    xo.max_deletes = 100;
    pm_expire_result xr;
    if (!rc && !(rc = pm_expire_snapshots(t, &xo, &xr, &e))) pm_clean_result_free(&xr.clean);
    if (!rc && !keep_tag) {
        const char *names[] = {"t1"};
        pm_tag_delete_opts o = {1, 0, NULL, NULL};
        pm_tag_delete_result r;
        if (!(rc = pm_tags_delete(t, names, 1, &o, &r, &e))) {
            if (r.clean.count[PM_K_DATA] != 0) rc = -1;   /* b1 protects them */
            pm_clean_result_free(&r.clean);
        }
    }
    if (rc) fprintf(stderr, "  make_branch_state: %s\n", e.msg);
    pm_table_free(t);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "find '%s' -exec touch -h -d '2 days ago' {} +", d->table);
    return rc || tu_sh(cmd) ? -1 : 0;
}

static int make_b1(tu_copy *d, const char *fixture) { return make_branch_state(d, fixture, 0); }

/* Sorted relative paths of a dry-run plan, without the branch's own files. */
static char *plan_lines(const pm_clean_result *r, const char *root) {
    pm_buf out = {0};
    for (size_t i = 0; i < r->n_paths; i++) {
        const char *rel = tu_plan_path(r, i, NULL) + strlen(root) + 1;
        /* the files the tag or branch held; not its own metadata (the tag
         * file, the branch's directory), which the plans list too */
        if (strncmp(rel, "branch/", 7) && strncmp(rel, "tag/", 4)) pm_buf_printf(&out, "%s\n", rel);
    }
    pm_buf_cstr(&out);
    char *s = out.data ? (char *)out.data : pm_strdup("");
    /* sort lines */
    size_t n = 0;
    for (char *p = s; *p; p++) n += *p == '\n';
    char **v = calloc(n ? n : 1, sizeof *v);
    size_t k = 0;
    for (char *p = strtok(s, "\n"); p && k < n; p = strtok(NULL, "\n")) v[k++] = p;
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) { char *x = v[j]; v[j] = v[j - 1]; v[j - 1] = x; }
    pm_buf sorted = {0};
    for (size_t i = 0; i < k; i++) pm_buf_printf(&sorted, "%s\n", v[i]);
    pm_buf_cstr(&sorted);
    free(v);
    free(s);
    return sorted.data ? (char *)sorted.data : pm_strdup("");
}

/* dropBranch frees what only b1 held: the files tag deletion frees when
 * tag t1 (the same snapshot) holds them instead; nothing main or the
 * Java-written branch needs goes (verify), and the directory is gone. */
TEST(delete_frees_only_what_the_branch_held) {
    tu_copy d;
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(make_branch_state(&d, FIX, 1), 0);
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    const char *names[] = {"t1"};
    pm_tag_delete_opts to = {1, 1, NULL, NULL};
    pm_tag_delete_result tr;
    CHECK_EQ_INT(pm_tags_delete(t, names, 1, &to, &tr, &e), PAIMON_OK);
    char *want = plan_lines(&tr.clean, d.table);
    CHECK(tr.clean.count[PM_K_DATA] > 0);
    pm_clean_result_free(&tr.clean);
    pm_table_free(t);
    remove_copy(&d);

    CHECK_EQ_INT(make_b1(&d, FIX), 0);
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_branch_delete_opts o = {1, 1, NULL, NULL};
    pm_branch_delete_result r;
    CHECK_EQ_INT(pm_branch_delete(t, "b1", &o, &r, &e), PAIMON_OK);
    char *got = plan_lines(&r.clean, d.table);
    CHECK_EQ_STR(got, want);
    CHECK(r.n_branch_files == 3);      /* tag, snapshot and schema of b1 */
    pm_clean_result_free(&r.clean);
    o.dry_run = 0;
    CHECK_EQ_INT(pm_branch_delete(t, "b1", &o, &r, &e), PAIMON_OK);
    CHECK(r.clean.count[PM_K_DATA] > 0 && r.clean.n_failures == 0);
    pm_clean_result_free(&r.clean);
    char dir[600], why[1200];
    snprintf(dir, sizeof dir, "%s/branch/branch-b1", d.table);
    CHECK(!tu_file_exists(dir));
    CHECK(readable(t, why, sizeof why));
    CHECK_EQ_INT(pm_branch_delete(t, "b1", &o, &r, &e), PAIMON_NOTFOUND);
    CHECK_EQ_INT(pm_branch_delete(t, "main", &o, &r, &e), PAIMON_MISUSE);
    free(got);
    free(want);
    pm_table_free(t);
    remove_copy(&d);
}

/* A manifest that protects files (main's latest snapshot reads it) is
 * unreadable: the deletion refuses and nothing is deleted. */
TEST(delete_fails_closed_on_unreadable_manifest) {
    tu_copy d;
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(make_b1(&d, FIX), 0);
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_snapshot *s = tu_read_snap(t, tu_latest_id(t));
    CHECK(s != NULL);
    pm_mfile *v = NULL;
    size_t n = 0;
    CHECK_EQ_INT(pm_read_manifest_list(t, s->base_manifest_list, &v, &n, &e), PAIMON_OK);
    CHECK(n > 0);
    char path[800];
    snprintf(path, sizeof path, "%s/manifest/%s", d.table, v[0].name);
    CHECK_EQ_INT(tu_write_file(path, "garbage", 7), 0);
    pm_mfiles_free(v, n);
    pm_snapshot_free(s);
    char *before = tree_of(d.table);
    pm_branch_delete_opts o = {1, 0, NULL, NULL};
    pm_branch_delete_result r;
    int rc = pm_branch_delete(t, "b1", &o, &r, &e);
    CHECK(rc != PAIMON_OK);
    CHECK(strstr(e.msg, "refusing") != NULL);
    tu_check_tree_same(tree_of, d.table, before);
    pm_table_free(t);
    remove_copy(&d);
}

/* Delete b1 if it is still there, then clean orphans twice (what an
 * interrupted deletion left once the branch's snapshots were gone). */
static int delete_then_clean(paimon_table *t, pm_err *e) {
    char dir[800];
    int ex = 0;
    snprintf(dir, sizeof dir, "%s/branch/branch-b1", t->root);
    int rc = pm_io_exists(t->io, dir, &ex, e);
    if (!rc && ex) {
        pm_branch_delete_opts o = {1, 0, NULL, NULL};
        pm_branch_delete_result r;
        if ((rc = pm_branch_delete(t, "b1", &o, &r, e))) return rc;
        pm_clean_result_free(&r.clean);
    }
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.threads = 1;
    for (int round = 0; !rc && round < 2; round++) {
        pm_orphan_result orr;
        if (!(rc = pm_remove_orphan_files(t, &oo, &orr, e))) pm_clean_result_free(&orr.clean);
    }
    return rc;
}

/* The files a dry-run deletion of b1 plans (relative paths, one a line). */
static char *planned_paths(void) {
    tu_copy d;
    if (make_b1(&d, FIX)) return NULL;
    paimon_table *t;
    pm_err e;
    pm_buf out = {0};
    if (pm_table_open(d.table, NULL, &t, &e) == 0) {
        pm_branch_delete_opts o = {1, 1, NULL, NULL};
        pm_branch_delete_result r;
        if (pm_branch_delete(t, "b1", &o, &r, &e) == 0) {
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
 * only in got is a file the plan would have deleted: once b1's snapshots
 * are gone, a file whose ADD and DELETE entries a retained manifest still
 * holds is not an orphan to orphan cleaning (as in tag deletion). */
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

static void delete_sweep(int crash) {
    tu_sweep s = {make_b1, remove_copy, tree_of, delete_then_clean, 10, "tree differs"};
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
        if (make_b1(&d, FIX)) { CHECK(0); break; }
        paimon_table *t;
        pm_err e;
        CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
        pm_branch_delete_opts o = {1, 0, NULL, NULL};
        pm_branch_delete_result r;
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, k, crash);
        if (pm_branch_delete(t, "b1", &o, &r, &e) == PAIMON_OK) pm_clean_result_free(&r.clean);
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

TEST(delete_fault_at_every_operation) { delete_sweep(0); }
TEST(delete_crash_at_every_operation) { delete_sweep(1); }

/* Java's fastForward to branch-fallback (snapshot 2 from tag
 * fallback-base): main keeps snapshot 1, takes the branch's snapshot 2,
 * schema and tag; main's snapshots 3..5 are gone; hints follow. */
TEST(fast_forward_takes_the_branch) {
    tu_copy d;
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(tu_copy_make(&d, TMP_PREFIX, FIX), 0);
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_branch_ff_result r;
    CHECK_EQ_INT(pm_branch_fast_forward(t, "main", 0, &r, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(pm_branch_fast_forward(t, "nope", 0, &r, &e), PAIMON_NOTFOUND);
    char *before = tree_of(d.table);
    CHECK_EQ_INT(pm_branch_fast_forward(t, "fallback", 1, &r, &e), PAIMON_OK);
    if (r.latest_id == 0) fprintf(stderr, "  %s\n", e.msg);
    CHECK(r.deleted_snapshots == 4 && r.deleted_tags == 1 && r.earliest_id == 2 && r.latest_id == 2);
    /* the plan as paths: main's tag and snapshots 5..2 go, the branch's schema, tag and snapshot come */
    CHECK(r.dropped.n == 5 && r.taken.n == 3);
    CHECK(r.dropped.n == 5 && strstr(r.dropped.v[0], "/tag/tag-fallback-base") &&
          strstr(r.dropped.v[1], "/snapshot/snapshot-5"));
    CHECK(r.taken.n == 3 && strstr(r.taken.v[2], "/snapshot/snapshot-2") && !strstr(r.taken.v[2], "/branch/"));
    pm_branch_ff_result_free(&r);
    tu_check_tree_same(tree_of, d.table, before);
    CHECK_EQ_INT(pm_branch_fast_forward(t, "fallback", 0, &r, &e), PAIMON_OK);
    pm_branch_ff_result_free(&r);
    int64_t *ids = NULL;
    size_t n = 0;
    CHECK_EQ_INT(pm_snapshot_list_ids(t->io, t->root, &ids, &n, &e), PAIMON_OK);
    CHECK(n == 2 && ids[0] == 1 && ids[1] == 2);
    free(ids);
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/snapshot/snapshot-2", d.table);
    snprintf(b, sizeof b, "%s/branch/branch-fallback/snapshot/snapshot-2", d.table);
    char *x = read_text(a), *y = read_text(b);
    CHECK(x && y && !strcmp(x, y));
    free(x);
    free(y);
    snprintf(a, sizeof a, "%s/snapshot/LATEST", d.table);
    x = read_text(a);
    CHECK(x && !strcmp(x, "2"));
    free(x);
    snprintf(a, sizeof a, "%s/snapshot/EARLIEST", d.table);
    x = read_text(a);
    CHECK(x && !strcmp(x, "1"));
    free(x);
    snprintf(a, sizeof a, "%s/tag/tag-fallback-base", d.table);
    CHECK(tu_file_exists(a));
    char why[1200];
    CHECK(readable(t, why, sizeof why));
    pm_table_free(t);
    remove_copy(&d);
}

static int fast_forward(paimon_table *t, pm_err *e) {
    pm_branch_ff_result r;
    int rc = pm_branch_fast_forward(t, "fallback", 0, &r, e);
    if (!rc) pm_branch_ff_result_free(&r);
    return rc;
}

static int plain_copy(tu_copy *d, const char *fixture) { return tu_copy_make(d, TMP_PREFIX, fixture); }

/* Every fault: readable right after, and a re-run gives the tree of an
 * undisturbed run. */
static void ff_sweep(int crash) {
    long ops = 0;
    tu_sweep s = {plain_copy, remove_copy, tree_of, fast_forward, 10, "tree differs"};
    char *want = tu_sweep_clean_run(&s, FIX, &ops);
    CHECK(want != NULL && ops > 10);
    if (!want) return;
    int bad = 0;
    for (long k = 1; k <= ops && bad < 3; k++) {
        if (!tu_sweep_point(k, ops)) continue;
        tu_copy d;
        if (plain_copy(&d, FIX)) { CHECK(0); break; }
        paimon_table *t;
        pm_err e;
        CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, k, crash);
        fast_forward(t, &e);
        t->io = pm_fileio_fault_release(t->io);
        char why[1200];
        if (!readable(t, why, sizeof why)) {
            fprintf(stderr, "  fault at op %ld (crash %d): table not readable: %s\n", k, crash, why);
            bad++;
        }
        if (fast_forward(t, &e)) {
            fprintf(stderr, "  fault at op %ld (crash %d): re-run failed: %s\n", k, crash, e.msg);
            bad++;
        }
        pm_table_free(t);
        char *got = tree_of(d.table);
        if (strcmp(got, want)) {
            fprintf(stderr, "  fault at op %ld (crash %d): tree differs\n--- got\n%s--- want\n%s", k, crash, got, want);
            bad++;
        }
        free(got);
        remove_copy(&d);
    }
    CHECK_EQ_INT(bad, 0);
    free(want);
}

TEST(fast_forward_fault_at_every_operation) { ff_sweep(0); }
TEST(fast_forward_crash_at_every_operation) { ff_sweep(1); }

/* paimon.h: the branch operations with text options ("branch" names the
 * branch), results as JSON; an existing branch is PAIMON_EXISTS, a dry run
 * changes nothing, an unknown option refuses before anything. */
/* ---- rename ------------------------------------------------------------------- */

static char *branch_tree(const char *table, const char *name) {
    char dir[400];
    snprintf(dir, sizeof dir, "%s/branch/branch-%s", table, name);
    return tu_file_exists(dir) ? tu_tree(dir, 0) : pm_strdup("");
}

/* A fault or a crash at every I/O operation of renaming fallback to fb:
 * the table reads whole right after (every branch), and one of the two
 * names holds the branch's files exactly as they were; when the old name
 * is left whole, the rename can be run again after removing the copy. */
static void rename_sweep(int crash) {
    long ops = 0;
    tu_copy d0;
    CHECK_EQ_INT(tu_copy_make(&d0, TMP_PREFIX, FIX), 0);
    char *orig = branch_tree(d0.table, "fallback");
    remove_copy(&d0);
    CHECK(orig && *orig);
    {
        tu_copy d;
        paimon_table *t;
        pm_err e;
        CHECK_EQ_INT(tu_copy_make(&d, TMP_PREFIX, FIX), 0);
        CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, 0, 0);
        pm_branch_renamed r;
        CHECK_EQ_INT(pm_branch_rename(t, "fallback", "fb", 0, &r, &e), PAIMON_OK);
        pm_branch_renamed_free(&r);
        ops = pm_fileio_fault_count(t->io);
        pm_table_free(t);
        char *fb = branch_tree(d.table, "fb");
        CHECK_EQ_STR(fb, orig);
        free(fb);
        remove_copy(&d);
    }
    CHECK(ops > 10);
    int bad = 0;
    for (long k = 1; k <= ops && bad < 3; k++) {
        if (!tu_sweep_point(k, ops)) continue;
        tu_copy d;
        if (tu_copy_make(&d, TMP_PREFIX, FIX)) { CHECK(0); break; }
        paimon_table *t;
        pm_err e;
        CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, k, crash);
        pm_branch_renamed r;
        if (pm_branch_rename(t, "fallback", "fb", 0, &r, &e) == PAIMON_OK) pm_branch_renamed_free(&r);
        t->io = pm_fileio_fault_release(t->io);
        char why[1200];
        if (!readable(t, why, sizeof why)) {
            fprintf(stderr, "  rename fault at op %ld (crash %d): table not readable: %s\n", k, crash, why);
            bad++;
        }
        char *old = branch_tree(d.table, "fallback"), *fb = branch_tree(d.table, "fb");
        if (strcmp(old, orig) && strcmp(fb, orig)) {
            fprintf(stderr, "  rename fault at op %ld (crash %d): neither name holds the branch\n--- old\n%s--- new\n%s", k,
                    crash, old, fb);
            bad++;
        }
        if (!strcmp(old, orig) && *fb) {   /* the documented recovery: delete the copy, rename again */
            pm_branch_delete_opts o = {1, 0, NULL, NULL};
            pm_branch_delete_result dr;
            if (pm_branch_delete(t, "fb", &o, &dr, &e) == PAIMON_OK) pm_clean_result_free(&dr.clean);
            else { fprintf(stderr, "  rename fault at op %ld: deleting the copy: %s\n", k, e.msg); bad++; }
        }
        if (!strcmp(old, orig)) {
            if (pm_branch_rename(t, "fallback", "fb", 0, &r, &e) == PAIMON_OK) pm_branch_renamed_free(&r);
            else { fprintf(stderr, "  rename fault at op %ld: re-run: %s\n", k, e.msg); bad++; }
            free(fb);
            fb = branch_tree(d.table, "fb");
            if (strcmp(fb, orig) || !readable(t, why, sizeof why)) { fprintf(stderr, "  rename fault at op %ld: after the re-run\n", k); bad++; }
        }
        free(old);
        free(fb);
        pm_table_free(t);
        remove_copy(&d);
    }
    CHECK_EQ_INT(bad, 0);
    free(orig);
}

TEST(rename_fault_at_every_operation) { rename_sweep(0); }
TEST(rename_crash_at_every_operation) { rename_sweep(1); }

/* A commit (here: a tag) on the old branch while its files are copied:
 * the copies go again, PAIMON_CONFLICT, the old branch keeps everything. */
static const pm_fileio_ops *rn_orig;
static pm_fileio_ops rn_hook;
static const char *rn_table;
static int rn_fired;

static int rn_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    if (!rn_fired && strstr(path, "/branch/branch-fb/")) {
        rn_fired = 1;
        char tag[600];
        snprintf(tag, sizeof tag, "%s/branch/branch-fallback/tag/tag-meanwhile", rn_table);
        char src[600];
        snprintf(src, sizeof src, "%s/branch/branch-fallback/tag/tag-fallback-base", rn_table);
        char *bytes = read_text(src);
        if (bytes) {
            int rc = rn_orig->create_no_replace(io, tag, bytes, strlen(bytes), e);
            free(bytes);
            if (rc) return rc;
        }
    }
    return rn_orig->create_no_replace(io, path, p, n, e);
}

TEST(rename_conflict_when_the_branch_changes) {
    tu_copy d;
    CHECK_EQ_INT(tu_copy_make(&d, TMP_PREFIX, FIX), 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    rn_orig = t->io->ops;
    rn_hook = *rn_orig;
    rn_hook.create_no_replace = rn_create;
    rn_table = d.table;
    rn_fired = 0;
    t->io->ops = &rn_hook;
    pm_branch_renamed r;
    CHECK_EQ_INT(pm_branch_rename(t, "fallback", "fb", 0, &r, &e), PAIMON_CONFLICT);
    t->io->ops = rn_orig;
    CHECK(rn_fired && strstr(e.msg, "changed while renaming") != NULL);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/branch/branch-fb", d.table);
    CHECK(!tu_file_exists(dir));
    snprintf(dir, sizeof dir, "%s/branch/branch-fallback/tag/tag-meanwhile", d.table);
    CHECK(tu_file_exists(dir));
    char why[1200];
    CHECK(readable(t, why, sizeof why));
    /* run again: the branch moves with the new tag */
    CHECK_EQ_INT(pm_branch_rename(t, "fallback", "fb", 0, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.n_files, 4);
    pm_branch_renamed_free(&r);
    pm_table_free(t);
    remove_copy(&d);
}

TEST(paimon_h_branch_operations) {
    tu_copy d;
    CHECK_EQ_INT(tu_copy_make(&d, TMP_PREFIX, FIX), 0);
    paimon_table *t = NULL;
    CHECK_EQ_INT(paimon_table_open(d.table, NULL, &t, NULL), PAIMON_OK);
    paimon_options *o = paimon_options_new();
    paimon_result *r = NULL;
    int64_t v = 0;
    CHECK_EQ_INT(paimon_branches(t, NULL, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "count", &v), PAIMON_OK);
    CHECK(v == 1 && strcmp(paimon_result_str(r, "branches.0.name"), "fallback") == 0);
    CHECK_EQ_INT(paimon_result_int(r, "branches.0.latest_snapshot", &v), PAIMON_OK);
    CHECK(v == 2);
    paimon_result_free(r);
    paimon_options_set(o, "branch", "dev");
    paimon_options_set(o, "from-tag", "fallback-base");
    CHECK_EQ_INT(paimon_create_branch(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "snapshot_id", &v), PAIMON_OK);
    CHECK(v == 2);
    paimon_result_free(r);
    CHECK_EQ_INT(paimon_create_branch(t, o, &r), PAIMON_EXISTS);
    CHECK(r == NULL && strstr(paimon_table_errmsg(t), "already exists") != NULL);
    paimon_options_free(o);
    char *before = tree_of(d.table);
    o = paimon_options_new();
    paimon_options_set(o, "branch", "dev");
    paimon_options_set(o, "dry-run", "true");
    CHECK_EQ_INT(paimon_fast_forward(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "dropped.snapshots", &v), PAIMON_OK);
    CHECK(v == 4);
    CHECK_EQ_INT(paimon_result_int(r, "taken_paths", &v), PAIMON_OK);
    CHECK(v == 3);
    paimon_result_free(r);
    CHECK_EQ_INT(paimon_delete_branch(t, o, &r), PAIMON_OK);
    CHECK_EQ_INT(paimon_result_int(r, "branch_files", &v), PAIMON_OK);
    CHECK(v == 3);
    CHECK(strstr(paimon_result_json(r), "branch-dev/snapshot/snapshot-2") != NULL);
    paimon_result_free(r);
    paimon_options_set(o, "dryrun", "true");
    CHECK_EQ_INT(paimon_delete_branch(t, o, &r), PAIMON_MISUSE);
    CHECK(strstr(paimon_table_errmsg(t), "unknown option 'dryrun'") != NULL);
    tu_check_tree_same(tree_of, d.table, before);
    paimon_options_free(o);
    o = paimon_options_new();
    paimon_options_set(o, "branch", "dev");
    CHECK_EQ_INT(paimon_delete_branch(t, o, &r), PAIMON_OK);
    paimon_result_free(r);
    char dir[700];
    snprintf(dir, sizeof dir, "%s/branch/branch-dev", d.table);
    CHECK(!tu_file_exists(dir));
    CHECK_EQ_INT(paimon_delete_branch(t, o, &r), PAIMON_NOTFOUND);
    paimon_options_free(o);
    CHECK_EQ_INT(paimon_delete_branch(t, NULL, &r), PAIMON_MISUSE);
    paimon_table_close(t);
    remove_copy(&d);
}

int main(void) {
    RUN(paimon_h_branch_operations);
    RUN(create_from_tag_is_javas_branch);
    RUN(delete_frees_only_what_the_branch_held);
    RUN(delete_fails_closed_on_unreadable_manifest);
    RUN(delete_fault_at_every_operation);
    RUN(delete_crash_at_every_operation);
    RUN(fast_forward_takes_the_branch);
    RUN(fast_forward_fault_at_every_operation);
    RUN(fast_forward_crash_at_every_operation);
    RUN(rename_fault_at_every_operation);
    RUN(rename_crash_at_every_operation);
    RUN(rename_conflict_when_the_branch_changes);
    return TEST_SUMMARY();
}
