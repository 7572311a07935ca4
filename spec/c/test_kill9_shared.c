/* kill -9 at every file-system call (issue 22): expiration of main and of
 * the branch, tag delete, branch delete, fast-forward and destructive
 * rollback, on a table with two branches that share snapshots, built as
 * spec/protect_spec.lua builds it (through the C API here):
 *  - "shared": 2 commits on main, tag t1 on 2, branch b1 from t1, 5
 *    commits on b1 (3-7), main fast-forwarded to b1, 1 commit on main (8):
 *    main's 2-7 are b1's snapshots, their manifest lists shared;
 *  - "dropped": 2 commits, t1 on 2, b1 from t1, partition p=1 dropped on
 *    both branches, 3 commits on each, t1 deleted on both: a data file of
 *    snapshot 2 is deleted by both branches' own drop snapshots.
 * (Rollback: of main, and of b1, to 3.) For each operation an undisturbed run on a copy of its template counts
 * its I/O operations (the fault FileIO counts them) and must leave the
 * table whole; then for every k (PAIMON_KILL9_STEP: every k-th; the
 * sanitizer pass samples as the fault sweeps do) a forked child runs the
 * operation on a fresh copy and SIGKILLs itself right before its k-th I/O
 * operation, and in a second pass right after it. The parent then checks
 * that the table is whole, re-runs the operation to completion and checks
 * again.
 * Whole, by a check that shares no code with the core: spec/support/
 * oracle.py (every file any retained snapshot, tag, consumer or long-lived
 * changelog of any branch needs exists; exit 1 when something is missing)
 * when it is there, else spec/support/refs.py (every file any snapshot or
 * tag of any branch names exists). PAIMON_KILL9_ORACLE=path picks another
 * oracle.py. The verdict is cached by the content of the tree (kills
 * between two mutations leave the same files).
 * PAIMON_KILL9_ONLY=substring picks tests by name. Run from the
 * repository root (the oracle is found under spec/support). */
#include "test.h"
#include "paimon.h"
#include "pm_branches.h"
#include "pm_partition_ops.h"
#include "pm_rollback.h"
#include "pm_tags.h"

#include <signal.h>
#include <time.h>

static char prefix[64];
static long step;                    /* 0: every k (sampled in the sanitizer pass) */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- building the templates ---------------------------------------------------- */

static int n_rows;

/* One APPEND commit of a row (id, p) on branch (NULL: main). */
static int write_row(const char *table, const char *branch, int p) {
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(table, branch, &t, &e)) {
        fprintf(stderr, "  open %s: %s\n", table, e.msg);
        return -1;
    }
    paimon_writer *w = NULL;
    paimon_messages *m = NULL;
    paimon_commit *c = NULL;
    paimon_value row[2] = {paimon_int(++n_rows), paimon_int(p)};
    int64_t id = 0;
    int created = 0;
    int rc = paimon_writer_open(t, &w);
    if (!rc) rc = paimon_writer_write(w, row, 2);
    if (!rc) rc = paimon_writer_prepare_commit(w, &m);
    if (!rc) rc = paimon_commit_open(t, NULL, &c);
    if (!rc) rc = paimon_commit_commit(c, m, INT64_MAX, NULL, &id, &created);
    if (rc || !created) fprintf(stderr, "  write p=%d on %s: %s\n", p, branch ? branch : "main", paimon_table_errmsg(t));
    paimon_commit_close(c);
    paimon_messages_free(m);
    paimon_writer_close(w);
    paimon_table_close(t);
    return rc || !created ? -1 : 0;
}

static int on_branch(const char *table, const char *branch, int (*fn)(paimon_table *, pm_err *)) {
    paimon_table *t = NULL;
    pm_err e;
    int rc = pm_table_open(table, branch, &t, &e);
    if (!rc) rc = fn(t, &e);
    if (rc) fprintf(stderr, "  on %s of %s: %s\n", branch ? branch : "main", table, e.msg);
    pm_table_free(t);
    return rc ? -1 : 0;
}

static int tag_t1(paimon_table *t, pm_err *e) {
    pm_tag_create_opts o;
    memset(&o, 0, sizeof o);
    pm_tag_created c;
    return pm_tag_create(t, "t1", &o, &c, e);
}

static int tag_t2_on_4(paimon_table *t, pm_err *e) {
    pm_tag_create_opts o;
    memset(&o, 0, sizeof o);
    o.has_snapshot = 1;
    o.snapshot_id = 4;
    pm_tag_created c;
    return pm_tag_create(t, "t2", &o, &c, e);
}

static int branch_b1(paimon_table *t, pm_err *e) {
    pm_branch_created c;
    return pm_branch_create(t, "b1", "t1", 0, &c, e);
}

static int drop_p1(paimon_table *t, pm_err *e) {
    const char *keys[] = {"p"}, *vals[] = {"1"};
    pm_partition_filter f = {1, keys, vals};
    pm_part_select sel;
    memset(&sel, 0, sizeof sel);
    sel.n_specs = 1;
    sel.specs = &f;
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    pm_drop_result r;
    memset(&r, 0, sizeof r);
    int rc = pm_drop_partitions(t, &sel, &o, &r, e);
    if (!rc && !r.snapshot_id) rc = pm_fail(e, PAIMON_IO, "drop p=1: nothing dropped");
    pm_drop_result_free(&r);
    return rc;
}

/* The table of protect_spec.lua: id INT, p INT, partitioned by p. */
static int create_table(const char *table) {
    static const paimon_column cols[] = {{"id", "INT", NULL}, {"p", "INT", NULL}};
    static const char *const parts[] = {"p"};
    static const char *const options[] = {"file.format", "avro"};
    paimon_table_spec spec = {cols, 2, parts, 1, NULL, 0, options, 1, NULL};
    paimon_table *t = NULL;
    char *err = NULL;
    int rc = paimon_table_create(table, &spec, &t, &err);
    if (rc) fprintf(stderr, "  create %s: %s\n", table, err ? err : "?");
    paimon_free(err);
    paimon_table_close(t);
    return rc ? -1 : 0;
}

/* ---- the operations --------------------------------------------------------------- */

static int expire_all(paimon_table *t, pm_err *e) {
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 1000;
    o.threads = 2;
    pm_expire_result r;
    int rc = pm_expire_snapshots(t, &o, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

static int delete_t1(paimon_table *t, pm_err *e) {
    const char *names[] = {"t1"};
    pm_tag_delete_opts o = {2, 0, NULL, NULL};
    pm_tag_delete_result r;
    int rc = pm_tags_delete(t, names, 1, &o, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

/* After a kill: deletes t1 when it is still there. */
static int delete_t1_retry(paimon_table *t, pm_err *e) {
    pm_snapshot *s = NULL;
    int rc = pm_tag_read(t->io, t->branch_root, "t1", &s, e);
    pm_snapshot_free(s);
    return rc == PAIMON_NOTFOUND ? PAIMON_OK : rc ? rc : delete_t1(t, e);
}

static int delete_t2(paimon_table *t, pm_err *e) {
    const char *names[] = {"t2"};
    pm_tag_delete_opts o = {2, 0, NULL, NULL};
    pm_tag_delete_result r;
    int rc = pm_tags_delete(t, names, 1, &o, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

static int delete_t2_retry(paimon_table *t, pm_err *e) {
    pm_snapshot *s = NULL;
    int rc = pm_tag_read(t->io, t->branch_root, "t2", &s, e);
    pm_snapshot_free(s);
    return rc == PAIMON_NOTFOUND ? PAIMON_OK : rc ? rc : delete_t2(t, e);
}

static int delete_b1(paimon_table *t, pm_err *e) {
    pm_branch_delete_opts o = {2, 0, NULL, NULL};
    pm_branch_delete_result r;
    int rc = pm_branch_delete(t, "b1", &o, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

static int delete_b1_retry(paimon_table *t, pm_err *e) {
    char dir[800];
    int ex = 0;
    snprintf(dir, sizeof dir, "%s/branch/branch-b1", t->root);
    int rc = pm_io_exists(t->io, dir, &ex, e);
    return rc ? rc : ex ? delete_b1(t, e) : PAIMON_OK;
}

static int fast_forward_b1(paimon_table *t, pm_err *e) {
    pm_branch_ff_result r;
    memset(&r, 0, sizeof r);
    int rc = pm_branch_fast_forward(t, "b1", 0, &r, e);
    pm_branch_ff_result_free(&r);
    return rc;
}

static int rollback_to_3(paimon_table *t, pm_err *e) {
    pm_rollback_opts o;
    memset(&o, 0, sizeof o);
    o.to_snapshot = 3;
    o.purge_files = 1;             /* the deletion of files is what a kill must not break */
    o.threads = 2;
    pm_rollback_result r;
    int rc = pm_rollback(t, &o, &r, e);
    if (!rc) pm_rollback_result_free(&r);
    return rc;
}

/* ---- templates ---------------------------------------------------------------------- */

static int make_shared(const char *table) {
    int rc = create_table(table);
    if (!rc) rc = write_row(table, NULL, 1);
    if (!rc) rc = write_row(table, NULL, 2);
    if (!rc) rc = on_branch(table, NULL, tag_t1);
    if (!rc) rc = on_branch(table, NULL, branch_b1);
    for (int i = 1; i <= 5 && !rc; i++) rc = write_row(table, "b1", i % 3);
    if (!rc) rc = on_branch(table, NULL, fast_forward_b1);
    return rc ? rc : write_row(table, NULL, 1);
}

static int make_dropped(const char *table) {
    int rc = create_table(table);
    if (!rc) rc = write_row(table, NULL, 1);
    if (!rc) rc = write_row(table, NULL, 2);
    if (!rc) rc = on_branch(table, NULL, tag_t1);
    if (!rc) rc = on_branch(table, NULL, branch_b1);
    if (!rc) rc = on_branch(table, NULL, drop_p1);
    if (!rc) rc = on_branch(table, "b1", drop_p1);
    for (int i = 1; i <= 3 && !rc; i++) {
        rc = write_row(table, NULL, i);
        if (!rc) rc = write_row(table, "b1", i);
    }
    if (!rc) rc = on_branch(table, NULL, delete_t1);
    return rc ? rc : on_branch(table, "b1", delete_t1);
}

/* The shared table, then main expired (main keeps its 8 only: t1 and b1
 * hold the rest). */
static int make_shared_main_expired(const char *table) {
    int rc = make_shared(table);
    return rc ? rc : on_branch(table, NULL, expire_all);
}

static int make_shared_b1_expired(const char *table) {
    int rc = make_shared(table);
    return rc ? rc : on_branch(table, "b1", expire_all);
}

/* The shared table with tag t2 on the shared snapshot 4 in both branches,
 * both branches expired: main's t2 and b1's t2 name the same lists. */
static int make_shared_t2_twice(const char *table) {
    int rc = make_shared(table);
    if (!rc) rc = on_branch(table, NULL, tag_t2_on_4);
    if (!rc) rc = on_branch(table, "b1", tag_t2_on_4);
    if (!rc) rc = on_branch(table, NULL, expire_all);
    return rc ? rc : on_branch(table, "b1", expire_all);
}

/* The shared table with tag t2 on main's snapshot 4 only, both branches
 * expired: t2 alone holds snapshot 4's lists. */
static int make_shared_t2_main(const char *table) {
    int rc = make_shared(table);
    if (!rc) rc = on_branch(table, NULL, tag_t2_on_4);
    if (!rc) rc = on_branch(table, NULL, expire_all);
    return rc ? rc : on_branch(table, "b1", expire_all);
}

/* The shared table, then one more commit on b1: b1 (2-8) and main (2-8)
 * differ at 8. */
static int make_shared_b1_ahead(const char *table) {
    int rc = make_shared(table);
    return rc ? rc : write_row(table, "b1", 2);
}

typedef struct k9s_op {
    const char *name;
    int (*make)(const char *table);
    const char *branch;                              /* the branch the operation runs on (NULL: main) */
    int (*run)(paimon_table *t, pm_err *e);
    int (*retry)(paimon_table *t, pm_err *e);       /* finishes it after a kill */
    int expires;                                     /* snapshot expiration (see kill_sweep) */
} k9s_op;

static const k9s_op ops[] = {
    {"expire main", make_shared, NULL, expire_all, expire_all, 1},
    {"expire b1", make_shared, "b1", expire_all, expire_all, 1},
    {"tag delete (main's t2, b1's copy stays)", make_shared_t2_twice, NULL, delete_t2, delete_t2_retry, 0},
    {"tag delete (main's t2 alone)", make_shared_t2_main, NULL, delete_t2, delete_t2_retry, 0},
    {"tag delete (b1's t1, main's 2 stays)", make_shared_b1_expired, "b1", delete_t1, delete_t1_retry, 0},
    {"branch delete", make_shared_main_expired, NULL, delete_b1, delete_b1_retry, 0},
    {"fast-forward", make_shared_b1_ahead, NULL, fast_forward_b1, fast_forward_b1, 0},
    {"rollback main to 3", make_shared, NULL, rollback_to_3, rollback_to_3, 0},
    {"rollback b1 to 3", make_shared, "b1", rollback_to_3, rollback_to_3, 0},
    {"expire b1 (dropped partition)", make_dropped, "b1", expire_all, expire_all, 1},
    {"expire main (dropped partition)", make_dropped, NULL, expire_all, expire_all, 1},
};

/* ---- whole: the independent oracle ------------------------------------------------------ */

/* A killed atomic write leaves its temp file ".<name>.<uuid>.tmp". */
static int is_temp(const char *name) {
    size_t n = strlen(name);
    return name[0] == '.' && n > 5 && !strcmp(name + n - 4, ".tmp");
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
    return h;
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

/* Order-free digest of the files below dir (path and content; temp files
 * of killed writes left out): two sums of per-file hashes. */
static void digest(const char *dir, const char *rel, uint64_t d[2]) {
    char path[1200];
    snprintf(path, sizeof path, "%s%s%s", dir, *rel ? "/" : "", rel);
    DIR *dh = opendir(path);
    struct dirent *de;
    while (dh && (de = readdir(dh))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || is_temp(de->d_name)) continue;
        char r[1200], p[1400];
        snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        snprintf(p, sizeof p, "%s/%s", dir, r);
        struct stat st;
        if (lstat(p, &st)) continue;
        uint64_t h = fnv(14695981039346656037ULL, r, strlen(r) + 1);
        if (S_ISDIR(st.st_mode)) {
            digest(dir, r, d);
        } else {
            FILE *f = fopen(p, "rb");
            char buf[8192];
            size_t k;
            while (f && (k = fread(buf, 1, sizeof buf, f)) > 0) h = fnv(h, buf, k);
            if (f) fclose(f);
        }
        d[0] += mix(h);
        d[1] += mix(h ^ 0x9e3779b97f4a7c15ULL);
    }
    if (dh) closedir(dh);
}

typedef struct verdict { uint64_t d[2]; int whole; char *why; } verdict;
static verdict *seen;
static size_t n_seen, cap_seen;
static long oracle_runs;

static const char *oracle_path(void) {
    const char *o = getenv("PAIMON_KILL9_ORACLE");
    if (o && *o) return o;
    return tu_file_exists("spec/support/oracle.py") ? "spec/support/oracle.py" : NULL;
}

/* refs.py run in-process by a small driver: every path any snapshot or tag
 * of any branch names that does not exist, "branch snapshot|tag id: path". */
static const char REFS_CHECK[] =
    "import io, json, os, runpy, sys\n"
    "t = sys.argv[1]\n"
    "sys.argv = ['spec/support/refs.py', t]\n"
    "out, sys.stdout = sys.stdout, io.StringIO()\n"
    "runpy.run_path('spec/support/refs.py', run_name='__main__')\n"
    "r, sys.stdout = json.loads(sys.stdout.getvalue()), out\n"
    "bad = sorted('%s %s %s: %s' % (b, k[:-1], i, f) for b, v in r.items() for k in ('snapshots', 'tags')\n"
    "             for i, fs in v[k].items() for f in fs if not os.path.exists(os.path.join(t, f)))\n"
    "print('\\n'.join(bad))\n"
    "sys.exit(1 if bad else 0)\n";

/* The text of a file ("" when it cannot be read; malloc'd). */
static char *read_text(const char *path) {
    pm_buf b = {0};
    FILE *f = fopen(path, "rb");
    char chunk[4096];
    size_t k;
    while (f && (k = fread(chunk, 1, sizeof chunk, f)) > 0) pm_buf_append(&b, chunk, k);
    if (f) fclose(f);
    pm_buf_cstr(&b);
    return b.data ? (char *)b.data : pm_strdup("");
}

/* 1 when the oracle calls the table whole; else 0 and *why (malloc'd). */
static int run_oracle(const char *table, char **why) {
    char cmd[2400], out[600], err[600];
    snprintf(out, sizeof out, "%s.oracle.out", table);
    snprintf(err, sizeof err, "%s.oracle.err", table);
    const char *o = oracle_path();
    if (o) {
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' >'%s' 2>'%s'", o, table, out, err);
    } else {
        char drv[600];
        snprintf(drv, sizeof drv, "%s.refs_check.py", table);
        if (!tu_file_exists(drv) && tu_write_file(drv, REFS_CHECK, strlen(REFS_CHECK))) {
            *why = pm_strdup("cannot write the refs.py driver");
            return 0;
        }
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' >'%s' 2>'%s'", drv, table, out, err);
    }
    oracle_runs++;
    int st = system(cmd);
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!ok) {
        /* what it said: with oracle.py the "missing" part of its JSON */
        const char *src = out;
        char *s = read_text(out);
        if (!*s) { free(s); src = err; s = read_text(err); }
        const char *m = o ? strstr(s, "\"missing\"") : NULL;
        if (!m && src == err) {   /* a traceback: its last line */
            size_t l = strlen(s);
            while (l && s[l - 1] == '\n') s[--l] = '\0';
            const char *nl = strrchr(s, '\n');
            m = nl ? nl + 1 : s;
        }
        char msg[800];
        snprintf(msg, sizeof msg, "%s (exit %d): %.600s", o ? o : "refs.py", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                 m ? m : s);
        for (char *c = msg; *c; c++)
            if (*c == '\n') *c = ' ';
        *why = pm_strdup(msg);
        free(s);
    }
    unlink(out);
    unlink(err);
    return ok;
}

static int copy_of(const char *tmpl, const char *to) {
    char cmd[700];
    tu_rm_rf(to);
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", tmpl, to);
    return tu_sh(cmd);
}

/* The oracle's verdict on table (cached by its content). keep_from > 0: a
 * killed expiration of `branch` (NULL: main) deletes the files of the
 * snapshots it expires before their snapshot files, as Java does; those
 * snapshots, below keep_from, are left out (the check runs on a copy
 * without their snapshot files); everything else of every branch must be
 * whole. */
static int whole(const char *table, const char *branch, int64_t keep_from, const char **why) {
    uint64_t d[2] = {0, 0};
    digest(table, "", d);
    d[0] += mix((uint64_t)keep_from + 1);
    for (size_t i = 0; i < n_seen; i++)
        if (seen[i].d[0] == d[0] && seen[i].d[1] == d[1]) { *why = seen[i].why ? seen[i].why : ""; return seen[i].whole; }
    if (n_seen == cap_seen) {
        cap_seen = cap_seen ? 2 * cap_seen : 64;
        seen = realloc(seen, cap_seen * sizeof *seen);
    }
    verdict *v = &seen[n_seen++];
    v->d[0] = d[0];
    v->d[1] = d[1];
    v->why = NULL;
    char copy[400];
    const char *check = table;
    if (keep_from > 0) {
        snprintf(copy, sizeof copy, "%s.check", table);
        if (copy_of(table, copy)) {
            v->whole = 0;
            v->why = pm_strdup("cannot copy the table");
            *why = v->why;
            return 0;
        }
        for (int64_t id = 1; id < keep_from; id++) {
            char p[600];
            snprintf(p, sizeof p, "%s%s%s/snapshot/snapshot-%lld", copy, branch ? "/branch/branch-" : "",
                     branch ? branch : "", (long long)id);
            unlink(p);
        }
        check = copy;
    }
    v->whole = run_oracle(check, &v->why);
    if (check != table) tu_rm_rf(copy);
    *why = v->why ? v->why : "";
    return v->whole;
}

static void forget_verdicts(void) {
    for (size_t i = 0; i < n_seen; i++) free(seen[i].why);
    free(seen);
    seen = NULL;
    n_seen = cap_seen = 0;
}

/* ---- the sweep ------------------------------------------------------------------------ */

/* Runs op on table behind the fault FileIO, counting its I/O operations
 * (*n_io; may be NULL): the operation's result. */
static int run_counted(const k9s_op *op, const char *table, long *n_io, pm_err *e) {
    paimon_table *t = NULL;
    int rc = pm_table_open(table, op->branch, &t, e);
    if (rc) return rc;
    t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, 0, 0);
    rc = op->run(t, e);
    if (n_io) *n_io = pm_fileio_fault_count(t->io);
    pm_table_free(t);
    return rc;
}

/* A child that runs op on table and SIGKILLs itself at its k-th I/O
 * operation (before it, or after it): the wait status. */
static int killed_run(const k9s_op *op, const char *table, long k, int after) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        paimon_table *t = NULL;
        pm_err e;
        if (pm_table_open(table, op->branch, &t, &e)) _exit(2);
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, 0, 0);
        pm_fileio_fault_set_kill(t->io, k, after);
        int rc = op->run(t, &e);
        if (rc) fprintf(stderr, "  child: %s\n", e.msg);
        _exit(rc ? 3 : 0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
    return st;
}

static int selected(const char *name) {
    const char *only = getenv("PAIMON_KILL9_ONLY");
    return !only || strstr(name, only) != NULL;
}

static int sweep_point(long k, long n) { return step > 0 ? (k - 1) % step == 0 || k == n : tu_sweep_point(k, n); }

static void kill_sweep(const k9s_op *op) {
    char *dir = tu_make_tmpdir(prefix);
    CHECK(dir != NULL);
    if (!dir) return;
    char tmpl[300], table[300];
    snprintf(tmpl, sizeof tmpl, "%s/tmpl", dir);
    snprintf(table, sizeof table, "%s/t", dir);
    double start = now_s();
    n_rows = 0;
    int made = op->make(tmpl) == 0;
    CHECK(made);
    const char *why = "";
    int tmpl_whole = made && whole(tmpl, NULL, 0, &why);
    /* expiration keeps the branch's latest (retain-min 1): a kill may leave
     * the ones below it half deleted, never anything else */
    int64_t keep_from = 0;
    if (tmpl_whole && op->expires) {
        paimon_table *t = NULL;
        pm_err oe;
        if (pm_table_open(tmpl, op->branch, &t, &oe) == 0) keep_from = tu_latest_id(t);
        pm_table_free(t);
        CHECK(keep_from > 1);
    }
    if (made && !tmpl_whole) fprintf(stderr, "  %s: the template is not whole: %s\n", op->name, why);
    CHECK(tmpl_whole);
    /* the undisturbed run: its I/O count, and it leaves the table whole */
    long n = 0;
    pm_err e;
    int ran = tmpl_whole && copy_of(tmpl, table) == 0 && run_counted(op, table, &n, &e) == PAIMON_OK;
    if (tmpl_whole && !ran) fprintf(stderr, "  %s: the undisturbed run failed: %s\n", op->name, e.msg);
    CHECK(ran);
    int clean_whole = ran && whole(table, NULL, 0, &why);
    if (ran && !clean_whole) fprintf(stderr, "  %s: not whole after an undisturbed run: %s\n", op->name, why);
    CHECK(clean_whole);
    CHECK(!ran || n > 10);
    int bad = 0, kills = 0, finished = 0;
    for (int after = 0; after < 2 && clean_whole; after++) {
        for (long k = 1; k <= n && bad < 3; k++) {
            if (!sweep_point(k, n)) continue;
            if (copy_of(tmpl, table)) { CHECK(0); bad = 3; break; }
            int st = killed_run(op, table, k, after);
            const char *at = after ? "after" : "before";
            if (st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
                kills++;
            } else if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
                finished++;   /* parallel reads: this run did fewer operations */
            } else {
                fprintf(stderr, "  %s, kill %s I/O operation %ld of %ld: the run failed (status %d)\n", op->name,
                        at, k, n, st);
                bad++;
            }
            if (!whole(table, op->branch, keep_from, &why)) {
                fprintf(stderr, "  %s, kill %s I/O operation %ld of %ld: not whole%s: %s\n", op->name, at, k, n,
                        keep_from ? " (the snapshots it was expiring left out)" : "", why);
                bad++;
            }
            paimon_table *t = NULL;
            int rc = pm_table_open(table, op->branch, &t, &e);
            if (!rc) rc = op->retry(t, &e);
            pm_table_free(t);
            if (rc) {
                fprintf(stderr, "  %s, kill %s I/O operation %ld of %ld: the re-run failed: %s\n", op->name, at, k,
                        n, e.msg);
                bad++;
            } else if (!whole(table, NULL, 0, &why)) {
                fprintf(stderr, "  %s, kill %s I/O operation %ld of %ld: not whole after the re-run: %s\n",
                        op->name, at, k, n, why);
                bad++;
            }
        }
    }
    CHECK_EQ_INT(bad, 0);
    printf("# %s: %ld I/O operations, %d kills (%d runs finished first), %zu distinct trees, %ld oracle runs, "
           "%.1f s\n",
           op->name, n, kills, finished, n_seen, oracle_runs, now_s() - start);
    forget_verdicts();
    oracle_runs = 0;
    tu_rm_rf(dir);
    free(dir);
}

/* PAIMON_KILL9_ONLY=substring runs only the tests whose name holds it. */
#define RUN_IF(name) do { if (selected(#name)) RUN(name); } while (0)

static void sweep_named(const char *name) {
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(ops[i].name, name)) { kill_sweep(&ops[i]); return; }
    CHECK(!"no such operation");
}

TEST(expire_main_survives_kill9_at_every_io) { sweep_named("expire main"); }
TEST(expire_branch_survives_kill9_at_every_io) { sweep_named("expire b1"); }
TEST(tag_delete_with_a_copy_survives_kill9_at_every_io) { sweep_named("tag delete (main's t2, b1's copy stays)"); }
TEST(tag_delete_alone_survives_kill9_at_every_io) { sweep_named("tag delete (main's t2 alone)"); }
TEST(tag_delete_branch_survives_kill9_at_every_io) { sweep_named("tag delete (b1's t1, main's 2 stays)"); }
TEST(branch_delete_survives_kill9_at_every_io) { sweep_named("branch delete"); }
TEST(fast_forward_survives_kill9_at_every_io) { sweep_named("fast-forward"); }
TEST(rollback_survives_kill9_at_every_io) { sweep_named("rollback main to 3"); }
TEST(rollback_branch_survives_kill9_at_every_io) { sweep_named("rollback b1 to 3"); }
TEST(expire_branch_dropped_survives_kill9_at_every_io) { sweep_named("expire b1 (dropped partition)"); }
TEST(expire_main_dropped_survives_kill9_at_every_io) { sweep_named("expire main (dropped partition)"); }

int main(void) {
    snprintf(prefix, sizeof prefix, "%s/pm_test_kill9s.", tu_tmp_base());
    const char *s = getenv("PAIMON_KILL9_STEP");
    step = s && atol(s) > 0 ? atol(s) : 0;
    const char *o = oracle_path();
    printf("# oracle: %s; kill points: %s\n", o ? o : "spec/support/refs.py (every named file exists)",
           step ? "every PAIMON_KILL9_STEP-th" : tu_sweep_sampled() ? "sampled (PAIMON_FAULT_SWEEP)" : "every one");
    RUN_IF(expire_main_survives_kill9_at_every_io);
    RUN_IF(expire_branch_survives_kill9_at_every_io);
    RUN_IF(tag_delete_with_a_copy_survives_kill9_at_every_io);
    RUN_IF(tag_delete_alone_survives_kill9_at_every_io);
    RUN_IF(tag_delete_branch_survives_kill9_at_every_io);
    RUN_IF(branch_delete_survives_kill9_at_every_io);
    RUN_IF(fast_forward_survives_kill9_at_every_io);
    RUN_IF(rollback_survives_kill9_at_every_io);
    RUN_IF(rollback_branch_survives_kill9_at_every_io);
    RUN_IF(expire_branch_dropped_survives_kill9_at_every_io);
    RUN_IF(expire_main_dropped_survives_kill9_at_every_io);
    return TEST_SUMMARY();
}
