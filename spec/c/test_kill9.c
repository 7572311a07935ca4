/* kill -9 loops for the lifecycle operations (issue 15): tag delete,
 * rollback (destructive and as latest), branch delete, branch
 * fast-forward, changelog expiration and snapshot expiration. Each round
 * copies a template table (a Java-written fixture with tags, a branch, a
 * consumer or long-lived changelogs), forks a child that runs the
 * operation through the core API (every other round behind the fault
 * FileIO with a per-I/O delay, so the kill lands mid-operation), SIGKILLs
 * it after a random delay (seeded, printed) and asserts:
 *  - the table opens, its latest snapshot reads, and verify finds nothing
 *    missing, unreadable or of the wrong size for any snapshot, tag,
 *    branch or changelog (snapshot expiration: for the snapshots it keeps,
 *    from the consumer's next snapshot on; the ones it expires lose files
 *    before their snapshot file goes, as in Java);
 *  - re-running the operation to completion succeeds and leaves the tree
 *    of an uninterrupted run (cksum of every file, temp files of killed
 *    atomic writes aside); tag and branch deletion may leave data files
 *    and manifests only they held (orphan cleaning cannot tell them from
 *    files still in use once the tag or branch is gone, docs/maintenance.md),
 *    never metadata. Rollback as latest: the retry runs only when the
 *    killed run did not publish; then exactly one new snapshot reads as
 *    the target and no file of the template changed.
 * Concurrent writers (every operation but rollback as latest): a writer
 * process commits in a loop during the (killed) operation; every commit it
 * reported is then in the latest snapshot, except, for rollback and
 * fast-forward, a prefix of its commits that the operation legitimately
 * replaced (both remove snapshots by design; a commit after a replaced one
 * is never lost).
 * Rounds per operation: PAIMON_KILL9_ITERS (default 6); seed:
 * PAIMON_KILL9_SEED; PAIMON_KILL9_ONLY=substring picks tests by name. */
#include "test.h"
#include "pm_branches.h"
#include "pm_changelog.h"
#include "pm_consumers.h"
#include "pm_orphan.h"
#include "pm_rollback.h"
#include "pm_tags.h"
#include "pm_verify.h"

#include <dirent.h>
#include <signal.h>
#include <time.h>

#define FIX "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"
#define CL_FIX "cpp-parquet-pk_table_scan_and_read_dv/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv"

static char prefix[64];
static unsigned seed;
static int iters = 6;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* ---- trees ------------------------------------------------------------------ */

/* A killed atomic write leaves its temp file ".<name>.<uuid>.tmp". */
static int is_temp(const char *name) {
    size_t n = strlen(name);
    return name[0] == '.' && n > 5 && !strcmp(name + n - 4, ".tmp");
}

static void walk_tree(const char *dir, const char *rel, pm_strv *lines, int *temps) {
    char path[1200];
    snprintf(path, sizeof path, "%s%s%s", dir, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char r[1200], p[1400];
        snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", de->d_name);
        snprintf(p, sizeof p, "%s/%s", dir, r);
        struct stat st;
        if (lstat(p, &st)) continue;
        if (S_ISDIR(st.st_mode)) { walk_tree(dir, r, lines, temps); continue; }
        if (is_temp(de->d_name)) { (*temps)++; continue; }
        uint64_t h = 14695981039346656037ULL;   /* FNV-1a of the content */
        FILE *f = fopen(p, "rb");
        int c;
        while (f && (c = getc(f)) != EOF) h = (h ^ (uint64_t)c) * 1099511628211ULL;
        if (f) fclose(f);
        char line[1400];
        snprintf(line, sizeof line, "%016llx %lld %s", (unsigned long long)h, (long long)st.st_size, r);
        pm_strv_push(lines, line);
    }
    if (d) closedir(d);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "\n"-framed sorted lines "hash size path" of every file below dir, temp
 * files of killed writes counted in *temps (may be NULL) and left out. */
static char *tree(const char *dir, int *temps) {
    pm_strv v = {0};
    int t = 0;
    walk_tree(dir, "", &v, &t);
    if (temps) *temps += t;
    if (v.n) qsort(v.v, v.n, sizeof *v.v, cmp_str);
    pm_buf b = {0};
    pm_buf_append(&b, "\n", 1);
    for (size_t i = 0; i < v.n; i++) pm_buf_printf(&b, "%s\n", v.v[i]);
    pm_buf_cstr(&b);
    pm_strv_clear(&v);
    return (char *)b.data;
}

static int has_line(const char *framed, const char *line) {
    char x[1410];
    snprintf(x, sizeof x, "\n%s\n", line);
    return strstr(framed, x) != NULL;
}

/* Metadata: what readers go by. A leftover there is never acceptable. */
static int is_metadata(const char *path) {
    static const char *dirs[] = {"snapshot", "tag", "changelog", "schema", "consumer", "branch"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char x[32];
        snprintf(x, sizeof x, "/%s/", dirs[i]);
        if (!strncmp(path, x + 1, strlen(x + 1)) || strstr(path, x)) return 1;
    }
    return 0;
}

/* got holds every line of want; a line only in got is, when leftovers are
 * allowed, a data file or manifest of the template unchanged (counted). */
static int tree_matches(const char *got, const char *want, const char *tmpl, int leftovers_ok, int *leftovers,
                        char *why, size_t wl) {
    for (int pass = 0; pass < 2; pass++) {
        const char *a = pass ? got : want, *b = pass ? want : got;
        for (const char *l = a + 1; *l;) {
            const char *nl = strchr(l, '\n');
            char line[1400];
            snprintf(line, sizeof line, "%.*s", (int)(nl - l), l);
            l = nl + 1;
            if (has_line(b, line)) continue;
            const char *path = strchr(strchr(line, ' ') + 1, ' ') + 1;
            if (!pass) { snprintf(why, wl, "lost or changed: %.900s", line); return 0; }
            if (!leftovers_ok || is_metadata(path) || !has_line(tmpl, line)) {
                snprintf(why, wl, "stray: %.900s", line);
                return 0;
            }
            (*leftovers)++;
        }
    }
    return 1;
}

/* ---- readable and whole ----------------------------------------------------- */

/* Snapshot id of main: its lists, manifests and live data files exist
 * (data files with the recorded size). */
static int snapshot_whole(paimon_table *t, int64_t id, char *why, size_t wl) {
    pm_err e;
    pm_snapshot *s = NULL;
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) {
        snprintf(why, wl, "snapshot %lld: %s", (long long)id, e.msg);
        return 0;
    }
    int ok = 1;
    const char *lists[2] = {s->base_manifest_list, s->delta_manifest_list};
    for (int l = 0; l < 2 && ok; l++) {
        pm_mfile *v = NULL;
        size_t n = 0;
        if (pm_read_manifest_list(t, lists[l], &v, &n, &e)) {
            snprintf(why, wl, "snapshot %lld: %s", (long long)id, e.msg);
            ok = 0;
        }
        pm_mfiles_free(v, n);
    }
    pm_scan *sc = NULL;
    const pm_manifest_entry *m;
    pm_buf p = {0};
    int rc = ok ? pm_scan_open(t, s, NULL, &sc, &e) : PAIMON_OK;
    if (ok && rc == PAIMON_OK) {
        while (ok && (rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) {
            struct stat st;
            if (pm_data_file_full_path(t, m, &p, &e) || stat((char *)p.data, &st) || st.st_size != m->file.file_size) {
                snprintf(why, wl, "snapshot %lld: data file %s missing or of the wrong size", (long long)id,
                         m->file.file_name);
                ok = 0;
            }
        }
        pm_scan_close(sc);
    }
    if (ok && rc != PAIMON_DONE) {
        snprintf(why, wl, "snapshot %lld: scan: %s", (long long)id, e.msg);
        ok = 0;
    }
    pm_buf_free(&p);
    pm_snapshot_free(s);
    return ok;
}

/* The table opens, its latest snapshot is whole, and verify (every
 * snapshot, or with keep_from the latest of each branch, tags and
 * changelogs, and main's snapshots >= keep_from) finds no problem. */
static int readable(const char *table, int64_t keep_from, char *why, size_t wl) {
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(table, NULL, &t, &e)) { snprintf(why, wl, "open: %s", e.msg); return 0; }
    int64_t latest = tu_latest_id(t);
    int ok = latest > 0 && snapshot_whole(t, latest, why, wl);
    if (latest <= 0) snprintf(why, wl, "no latest snapshot");
    pm_verify_opts vo = {keep_from == 0, 1, NULL, NULL};
    pm_verify_result vr;
    if (ok && pm_verify(t, &vo, &vr, &e)) {
        snprintf(why, wl, "verify: %s", e.msg);
        ok = 0;
    } else if (ok) {
        if (vr.n_missing || vr.n_unreadable || vr.n_wrong_size) {
            const pm_clean_item *x = vr.n_missing ? vr.missing : vr.n_unreadable ? vr.unreadable : vr.wrong_size;
            snprintf(why, wl, "verify: %s: %s", x->path, x->msg ? x->msg : "");
            ok = 0;
        }
        pm_verify_result_free(&vr);
    }
    for (int64_t id = keep_from; ok && keep_from > 0 && id <= latest; id++) ok = snapshot_whole(t, id, why, wl);
    pm_table_free(t);
    return ok;
}

/* ---- the operations ----------------------------------------------------------- */

static int orphan_clean(paimon_table *t, pm_err *e) {
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.threads = 2;
    /* twice: the first round removes stray manifests, the second the data
     * files only they named */
    for (int round = 0; round < 2; round++) {
        pm_orphan_result r;
        int rc = pm_remove_orphan_files(t, &oo, &r, e);
        if (rc) return rc;
        pm_clean_result_free(&r.clean);
    }
    return PAIMON_OK;
}

/* Snapshot expiration with everything older than now expirable, keeping
 * the retain_min latest (and whatever is protected). */
static int expire_keeping(paimon_table *t, int retain_min, pm_err *e) {
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = retain_min;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 100;
    o.threads = 2;
    pm_expire_result r;
    int rc = pm_expire_snapshots(t, &o, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

static int expire_all_but_latest(paimon_table *t, pm_err *e) { return expire_keeping(t, 1, e); }

static int tag_create_on_1(paimon_table *t, pm_err *e) {
    pm_tag_create_opts co = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    pm_tag_created c;
    return pm_tag_create(t, "t1", &co, &c, e);
}

static int delete_t1(paimon_table *t, pm_err *e) {
    const char *names[] = {"t1"};
    pm_tag_delete_opts o = {2, 0, NULL, NULL};
    pm_tag_delete_result r;
    int rc = pm_tags_delete(t, names, 1, &o, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

static int delete_t1_retry(paimon_table *t, pm_err *e) {
    pm_snapshot *s = NULL;
    int rc = pm_tag_read(t->io, t->branch_root, "t1", &s, e);
    pm_snapshot_free(s);
    if (rc == PAIMON_OK) rc = delete_t1(t, e);
    else if (rc == PAIMON_NOTFOUND) rc = PAIMON_OK;
    return rc ? rc : orphan_clean(t, e);
}

/* Tag t1 on snapshot 1, every snapshot of main but the latest expired: t1
 * alone holds some files (as in test_tags.c). */
static int make_tagged(paimon_table *t, pm_err *e) {
    int rc = tag_create_on_1(t, e);
    return rc ? rc : expire_all_but_latest(t, e);
}

static int rollback_2(paimon_table *t, int as_latest, pm_err *e) {
    pm_rollback_opts o;
    memset(&o, 0, sizeof o);
    o.to_snapshot = 2;
    o.as_latest = as_latest;
    o.purge_files = !as_latest;    /* the deletion of files is what a kill must not break */
    o.threads = 2;
    pm_rollback_result r;
    int rc = pm_rollback(t, &o, &r, e);
    if (!rc) pm_rollback_result_free(&r);
    return rc;
}

static int rollback_op(paimon_table *t, pm_err *e) { return rollback_2(t, 0, e); }
static int rollback_retry(paimon_table *t, pm_err *e) {
    int rc = rollback_2(t, 0, e);
    return rc ? rc : orphan_clean(t, e);
}
static int as_latest_op(paimon_table *t, pm_err *e) { return rollback_2(t, 1, e); }
/* Only when the killed run did not publish (the fixture's latest is 5). */
static int as_latest_retry(paimon_table *t, pm_err *e) { return tu_latest_id(t) == 5 ? rollback_2(t, 1, e) : 0; }

/* Tag t1 on snapshot 1, branch b1 from it, main expired but its latest,
 * t1 deleted: b1 alone holds some files (as in test_branches.c). */
static int make_b1(paimon_table *t, pm_err *e) {
    pm_branch_created bc;
    int rc = tag_create_on_1(t, e);
    if (!rc) rc = pm_branch_create(t, "b1", "t1", 0, &bc, e);
    if (!rc) rc = expire_all_but_latest(t, e);
    return rc ? rc : delete_t1(t, e);
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
    if (!rc && ex) rc = delete_b1(t, e);
    return rc ? rc : orphan_clean(t, e);
}

static int fast_forward(paimon_table *t, pm_err *e) {
    pm_branch_ff_result r;
    memset(&r, 0, sizeof r);
    int rc = pm_branch_fast_forward(t, "fallback", 0, &r, e);
    pm_branch_ff_result_free(&r);   /* the plan's paths */
    return rc;
}

/* Consumer c1 at snapshot 3: expiration keeps 3..5 (and what the tag and
 * the branch need). */
static int make_consumer(paimon_table *t, pm_err *e) { return pm_consumer_reset(t, "c1", 3, e); }

static int expire_snaps(paimon_table *t, pm_err *e) { return expire_keeping(t, 2, e); }

static int expire_cls(paimon_table *t, pm_err *e) {
    pm_changelog_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 3;
    o.threads = 2;
    pm_changelog_expire_result r;
    int rc = pm_expire_changelogs(t, &o, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

/* The changelog files go first: what a killed run had not deleted yet of
 * the changelogs it removed is left to orphan cleaning. */
static int expire_cls_retry(paimon_table *t, pm_err *e) {
    int rc = expire_cls(t, e);
    return rc ? rc : orphan_clean(t, e);
}

/* Changelogs: a producer, decoupled retention and a changelog per snapshot
 * (as in test_changelog.c); with `moved`, snapshots 1-4 expired into
 * changelog/ already (retain-min 2). */
static int make_changelogs(const char *table, int moved, pm_err *e) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "sed -i 's/\"options\" : {/\"options\" : {\\n    \"changelog-producer\" : \"input\",\\n    "
             "\"changelog.num-retained.max\" : \"100\",\\n    \"snapshot.num-retained.max\" : \"3\",/' "
             "'%s/schema/schema-0'",
             table);
    if (tu_sh(cmd)) return pm_fail(e, PAIMON_IO, "sed failed");
    paimon_table *t = NULL;
    int rc = pm_table_open(table, NULL, &t, e);
    for (int64_t id = 1; !rc && id <= 6; id++) rc = tu_add_changelog(table, t, id, e);
    if (!rc && moved) rc = expire_snaps(t, e);
    pm_table_free(t);
    return rc;
}

typedef struct k9_op {
    const char *name;
    const char *fixture;
    int changelogs;                              /* 1: with changelogs, 2: moved to changelog/ */
    int (*make)(paimon_table *t, pm_err *e);     /* the template's state (NULL: the fixture) */
    int (*run)(paimon_table *t, pm_err *e);      /* what the child runs */
    int (*retry)(paimon_table *t, pm_err *e);    /* finishes it after a kill */
    int64_t keep_from;                           /* see readable() */
    int leftovers_ok;
    int as_latest;
} k9_op;

static const k9_op ops[] = {
    {"tag delete", FIX, 0, make_tagged, delete_t1, delete_t1_retry, 0, 1, 0},
    {"rollback", FIX, 0, NULL, rollback_op, rollback_retry, 0, 0, 0},
    {"rollback as latest", FIX, 0, NULL, as_latest_op, as_latest_retry, 0, 0, 1},
    {"branch delete", FIX, 0, make_b1, delete_b1, delete_b1_retry, 0, 1, 0},
    {"branch fast-forward", FIX, 0, NULL, fast_forward, fast_forward, 0, 0, 0},
    {"changelog expiration", CL_FIX, 2, NULL, expire_cls, expire_cls_retry, 0, 0, 0},
    {"snapshot expiration", FIX, 0, make_consumer, expire_all_but_latest, expire_all_but_latest, 3, 0, 0},
    {"decoupled snapshot expiration", CL_FIX, 1, NULL, expire_snaps, expire_snaps, 5, 0, 0},
};

/* ---- copies ------------------------------------------------------------------- */

/* The template of op in dir/tmpl (files dated two days back, so orphan
 * cleaning may take what a killed run left): 0 or -1. */
static int make_template(const k9_op *op, const char *dir, char *tmpl, size_t tl) {
    snprintf(tmpl, tl, "%s/tmpl", dir);
    if (tu_cp_fixture(op->fixture, tmpl)) return -1;
    pm_err e;
    int rc = op->changelogs ? make_changelogs(tmpl, op->changelogs == 2, &e) : PAIMON_OK;
    if (!rc && op->make) {
        paimon_table *t = NULL;
        rc = pm_table_open(tmpl, NULL, &t, &e);
        if (!rc) rc = op->make(t, &e);
        pm_table_free(t);
    }
    if (rc) fprintf(stderr, "  %s: template: %s\n", op->name, e.msg);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "find '%s' -exec touch -h -d '2 days ago' {} +", tmpl);
    return rc || tu_sh(cmd) ? -1 : 0;
}

static int copy_of(const char *tmpl, const char *to) {
    char cmd[700];
    tu_rm_rf(to);
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", tmpl, to);
    return tu_sh(cmd);
}

/* ---- the child ------------------------------------------------------------------ */

/* How a child runs: at full speed, or behind the fault FileIO sleeping
 * before every I/O operation, or before every mutation only (the kill then
 * lands between two mutations about evenly). */
enum { FULL_SPEED, SLOW_ALL, SLOW_MUTATIONS, N_SPEEDS };
static const char *const speed_names[N_SPEEDS] = {"", ", every I/O slowed", ", mutations slowed"};
#define DELAY_US 150            /* every I/O */
#define MUTATION_DELAY_US 2000  /* mutations only: they dominate the run */
#define MUTATIONS (PM_FAULT_WRITE | PM_FAULT_CREATE | PM_FAULT_REMOVE | PM_FAULT_MKDIRS)

/* Fork a child that runs fn on table at that speed; it exits 0 when fn
 * succeeds, 5 on PAIMON_CONFLICT, else 3. */
static pid_t spawn(const char *table, int (*fn)(paimon_table *, pm_err *), int speed) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid != 0) return pid;
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(table, NULL, &t, &e)) _exit(2);
    if (speed != FULL_SPEED) {
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, 0, 0);
        if (speed == SLOW_ALL) pm_fileio_fault_set_delay(t->io, PM_FAULT_ALL, DELAY_US);
        else pm_fileio_fault_set_delay(t->io, MUTATIONS, MUTATION_DELAY_US);
    }
    int rc = fn(t, &e);
    if (rc && rc != PAIMON_CONFLICT) fprintf(stderr, "  child: %s\n", e.msg);
    _exit(rc == PAIMON_CONFLICT ? 5 : rc ? 3 : 0);
}

/* Seconds an undisturbed run of op takes in a child (-1: it failed). */
static double timed_run(const char *tmpl, const char *table, const k9_op *op, int speed) {
    if (copy_of(tmpl, table)) return -1;
    double t0 = now_s();
    pid_t pid = spawn(table, op->run, speed);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? now_s() - t0 : -1;
}

/* The end state: an undisturbed run, then its retry. */
static char *reference(const char *tmpl, const char *table, const k9_op *op) {
    if (copy_of(tmpl, table)) return NULL;
    paimon_table *t = tu_open_table(table);
    pm_err e;
    int rc = t ? op->run(t, &e) : -1;
    if (!rc) rc = op->retry(t, &e);
    if (rc) fprintf(stderr, "  %s: undisturbed run: %s\n", op->name, rc > 0 ? e.msg : "");
    pm_table_free(t);
    return rc ? NULL : tree(table, NULL);
}

/* Sorted live file names of main's snapshot id, framed. */
static char *live_names(const char *table, int64_t id) {
    paimon_table *t = tu_open_table(table);
    pm_snapshot *s = t ? tu_read_snap(t, id) : NULL;
    pm_scan *sc;
    pm_err e;
    pm_strv v = {0};
    char *out = NULL;
    if (s && pm_scan_open(t, s, NULL, &sc, &e) == 0) {
        const pm_manifest_entry *m;
        int rc;
        while ((rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) pm_strv_push(&v, m->file.file_name);
        pm_scan_close(sc);
        if (rc == PAIMON_DONE) {
            if (v.n) qsort(v.v, v.n, sizeof *v.v, cmp_str);
            pm_buf b = {0};
            pm_buf_append(&b, "\n", 1);
            for (size_t i = 0; i < v.n; i++) pm_buf_printf(&b, "%s\n", v.v[i]);
            pm_buf_cstr(&b);
            out = (char *)b.data;
        }
    }
    pm_strv_clear(&v);
    pm_snapshot_free(s);
    pm_table_free(t);
    return out;
}

/* As latest: snapshot 6 is the latest and reads as snapshot 2; every file
 * of the template but the LATEST hint is there unchanged. */
static int as_latest_done(const char *table, const char *tmpl_tree, char *why, size_t wl) {
    paimon_table *t = tu_open_table(table);
    int64_t latest = t ? tu_latest_id(t) : -1;
    pm_table_free(t);
    char *a = live_names(table, 2), *b = live_names(table, latest);
    int ok = latest == 6 && a && b && !strcmp(a, b);
    if (!ok) snprintf(why, wl, "latest %lld does not read as snapshot 2", (long long)latest);
    free(a);
    free(b);
    char *got = tree(table, NULL);
    for (const char *l = tmpl_tree + 1; ok && *l;) {
        const char *nl = strchr(l, '\n');
        char line[1400];
        snprintf(line, sizeof line, "%.*s", (int)(nl - l), l);
        l = nl + 1;
        if (!strstr(line, " snapshot/LATEST") && !has_line(got, line)) {
            snprintf(why, wl, "lost or changed: %.900s", line);
            ok = 0;
        }
    }
    free(got);
    return ok;
}

/* ---- the loop ---------------------------------------------------------------------- */

static void kill_loop(const k9_op *op) {
    char *dir = tu_make_tmpdir(prefix);
    char tmpl[300], table[300];
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(table, sizeof table, "%s/t", dir);
    CHECK(make_template(op, dir, tmpl, sizeof tmpl) == 0);
    char *tmpl_tree = tree(tmpl, NULL);
    char *want = op->as_latest ? NULL : reference(tmpl, table, op);
    CHECK(op->as_latest || want != NULL);
    /* how long an undisturbed run takes at each speed */
    double took[N_SPEEDS];
    int timed = 1;
    for (int sp = 0; sp < N_SPEEDS; sp++) timed &= (took[sp] = timed_run(tmpl, table, op, sp)) > 0;
    CHECK(timed);
    srand(seed);
    int bad = 0, finished = 0, leftovers = 0, temps = 0;
    double start = now_s();
    for (int i = 0; i < iters && bad < 3 && timed && (want || op->as_latest); i++) {
        if (copy_of(tmpl, table)) { CHECK(0); break; }
        int speed = i % N_SPEEDS;
        long wait_us = (long)(took[speed] * 1.1e6 * (rand() / ((double)RAND_MAX + 1)));
        pid_t pid = spawn(table, op->run, speed);
        sleep_us(wait_us);
        kill(pid, SIGKILL);
        int st = 0;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st)) {
            finished++;
            if (WEXITSTATUS(st)) { fprintf(stderr, "  %s round %d: the run failed\n", op->name, i); bad++; }
        }
        char why[1200];
        if (!readable(table, op->keep_from, why, sizeof why)) {
            fprintf(stderr, "  %s round %d (seed %u, kill after %ld us%s): not readable: %s\n", op->name, i, seed,
                    wait_us, speed_names[speed], why);
            bad++;
        }
        paimon_table *t = tu_open_table(table);
        pm_err e;
        int rc = t ? op->retry(t, &e) : -1;
        pm_table_free(t);
        if (rc) {
            fprintf(stderr, "  %s round %d (seed %u, kill after %ld us%s): retry failed: %s\n", op->name, i, seed,
                    wait_us, speed_names[speed], rc > 0 ? e.msg : "open");
            bad++;
        }
        int ok = readable(table, op->keep_from, why, sizeof why);
        if (ok && op->as_latest) {
            ok = as_latest_done(table, tmpl_tree, why, sizeof why);
        } else if (ok) {
            char *got = tree(table, &temps);
            ok = tree_matches(got, want, tmpl_tree, op->leftovers_ok, &leftovers, why, sizeof why);
            free(got);
        }
        if (!ok) {
            fprintf(stderr, "  %s round %d (seed %u, kill after %ld us%s): after the retry: %s\n", op->name, i, seed,
                    wait_us, speed_names[speed], why);
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    printf("# %s: %d kills in %.1f s (seed %u; undisturbed %.1f ms, slowed %.1f / %.1f ms), %d finished first, "
           "%d leftover files, %d temp files\n",
           op->name, iters, now_s() - start, seed, took[0] * 1e3, took[1] * 1e3, took[2] * 1e3, finished,
           leftovers, temps);
    free(tmpl_tree);
    free(want);
    tu_rm_rf(dir);
    free(dir);
}

/* ---- concurrent writers --------------------------------------------------------------- */

typedef struct k9_commit { int64_t snapshot; int32_t seq; } k9_commit;

static void writer_name(char *out, size_t n, int round, int seq) {
    snprintf(out, n, "data-writer-%d-%d.parquet", round, seq);
}

/* The writer: commit one new data file (of the size its entry records) at
 * a time, 2-10 ms apart, forever, reporting each successful commit on fd. */
static void writer_loop(const char *table, int round, int fd) {
    paimon_table *t = tu_open_table(table);
    if (!t) _exit(2);
    pm_err e;
    pm_snapshot *s = tu_read_snap(t, tu_latest_id(t));
    pm_scan *sc;
    const pm_manifest_entry *m;
    pm_buf part = {0};
    int bucket = 0;
    if (!s || pm_scan_open(t, s, NULL, &sc, &e) || pm_scan_next(sc, &m, &e) != PAIMON_OK) _exit(2);
    pm_buf_append(&part, m->partition.ptr, m->partition.len);
    bucket = m->bucket;
    pm_scan_close(sc);
    pm_snapshot_free(s);
    static char bytes[1234];
    for (int32_t seq = 0;; seq++) {
        char name[96];
        writer_name(name, sizeof name, round, seq);
        tentry x;
        tentry_init_at(&x, part.data, part.len, bucket, name, 1, pm_now_millis());
        pm_commit_opts co;
        pm_commit_opts_from_table(t, &co);
        co.commit_user = "writer";
        co.identifier = seq;
        pm_buf p = {0};
        int64_t id = 0;
        if (pm_data_file_full_path(t, &x.m, &p, &e) == 0) tu_write_file((char *)p.data, bytes, sizeof bytes);
        pm_buf_free(&p);
        if (tu_commit(t, &x.m, 1, &co, &id, &e) == 0) {
            k9_commit c = {id, seq};
            if (write(fd, &c, sizeof c) != (ssize_t)sizeof c) _exit(4);
        }
        tentry_free(&x);
        sleep_us(2000 + rand() % 8000);   /* gaps in which an operation can also win */
    }
}

/* The writer's commits c_1..c_n: with prefix_ok (rollback), a prefix of
 * them may be gone from the latest snapshot (rolled back), the rest must
 * be there; else every one must be there. */
static int writer_commits_kept(const char *table, int round, const k9_commit *v, size_t n, int prefix_ok,
                               size_t *rolled_back, char *why, size_t wl) {
    paimon_table *t = tu_open_table(table);
    int64_t latest = t ? tu_latest_id(t) : -1;
    pm_table_free(t);
    char *live = live_names(table, latest);
    if (!live) { snprintf(why, wl, "latest %lld does not read", (long long)latest); return 0; }
    size_t gone = 0;
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        char name[96];
        writer_name(name, sizeof name, round, v[i].seq);
        if (has_line(live, name)) continue;
        if (prefix_ok && gone == i) { gone++; continue; }
        snprintf(why, wl, "commit %d of the writer (snapshot %lld) lost: latest %lld", v[i].seq,
                 (long long)v[i].snapshot, (long long)latest);
        ok = 0;
    }
    *rolled_back += gone;
    free(live);
    return ok;
}

/* A writer commits in a loop while op runs (killed slowed or at full
 * speed, or left to finish); then the writer is killed too and the writer's reported commits are checked; the
 * retry then finishes op and the table verifies. */
static void writer_loop_test(const k9_op *op, int prefix_ok) {
    char *dir = tu_make_tmpdir(prefix);
    char tmpl[300], table[300];
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(table, sizeof table, "%s/t", dir);
    CHECK(make_template(op, dir, tmpl, sizeof tmpl) == 0);
    double t_slow = timed_run(tmpl, table, op, SLOW_MUTATIONS);
    CHECK(t_slow > 0);
    srand(seed);
    int bad = 0, conflicts = 0;
    size_t commits = 0, rolled_back = 0;
    double start = now_s();
    for (int i = 0; i < iters && bad < 3 && t_slow > 0; i++) {
        if (copy_of(tmpl, table)) { CHECK(0); break; }
        int fds[2];
        CHECK(pipe(fds) == 0);
        fflush(stdout);
        fflush(stderr);
        pid_t w = fork();
        if (w == 0) {
            close(fds[0]);
            writer_loop(table, i, fds[1]);
        }
        close(fds[1]);
        k9_commit v[4096];
        size_t n = 0;
        /* the writer is under way before the operation starts */
        if (read(fds[0], &v[0], sizeof v[0]) == (ssize_t)sizeof v[0]) n = 1;
        /* rounds: killed while slowed, killed at full speed, left to finish */
        int mode = i % 3;
        long wait_us = (long)(t_slow * 1.1e6 * (rand() / ((double)RAND_MAX + 1)));
        if (mode == 1) wait_us /= 4;
        pid_t pid = spawn(table, op->run, mode == 0 ? SLOW_MUTATIONS : FULL_SPEED);
        if (mode < 2) {
            sleep_us(wait_us);
            kill(pid, SIGKILL);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 5) conflicts++;   /* lost the race to the writer */
        if (WIFEXITED(st) && WEXITSTATUS(st) != 5 && WEXITSTATUS(st)) {
            fprintf(stderr, "  %s with a writer, round %d: the run failed\n", op->name, i);
            bad++;
        }
        sleep_us(5000);
        kill(w, SIGKILL);
        waitpid(w, NULL, 0);
        ssize_t k;
        while (n < sizeof v / sizeof *v && (k = read(fds[0], &v[n], sizeof v[n])) == (ssize_t)sizeof v[n]) n++;
        close(fds[0]);
        commits += n;
        char why[1200];
        if (!n || !readable(table, op->keep_from, why, sizeof why) ||
            !writer_commits_kept(table, i, v, n, prefix_ok, &rolled_back, why, sizeof why)) {
            fprintf(stderr, "  %s with a writer, round %d (seed %u, kill after %ld us): %s\n", op->name, i, seed,
                    wait_us, n ? why : "the writer committed nothing");
            bad++;
        }
        paimon_table *t = tu_open_table(table);
        pm_err e;
        int rc = t ? op->retry(t, &e) : -1;
        pm_table_free(t);
        if (rc || !readable(table, op->keep_from, why, sizeof why)) {
            fprintf(stderr, "  %s with a writer, round %d (seed %u): after the retry: %s\n", op->name, i, seed,
                    rc ? (rc > 0 ? e.msg : "open") : why);
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    printf("# %s with a writer: %d kills in %.1f s (seed %u), %zu writer commits, %zu rolled back, "
           "%d runs lost the race\n",
           op->name, iters, now_s() - start, seed, commits, rolled_back, conflicts);
    tu_rm_rf(dir);
    free(dir);
}

TEST(tag_delete_survives_kill9) { kill_loop(&ops[0]); }
TEST(rollback_survives_kill9) { kill_loop(&ops[1]); }
TEST(rollback_as_latest_survives_kill9) { kill_loop(&ops[2]); }
TEST(branch_delete_survives_kill9) { kill_loop(&ops[3]); }
TEST(branch_fast_forward_survives_kill9) { kill_loop(&ops[4]); }
TEST(changelog_expiration_survives_kill9) { kill_loop(&ops[5]); }
TEST(snapshot_expiration_survives_kill9) { kill_loop(&ops[6]); }
TEST(decoupled_snapshot_expiration_survives_kill9) { kill_loop(&ops[7]); }
TEST(tag_delete_with_a_writer_loses_nothing) { writer_loop_test(&ops[0], 0); }
TEST(rollback_with_a_writer_loses_only_what_it_rolls_back) { writer_loop_test(&ops[1], 1); }
TEST(branch_delete_with_a_writer_loses_nothing) { writer_loop_test(&ops[3], 0); }
TEST(fast_forward_with_a_writer_loses_only_what_it_replaces) { writer_loop_test(&ops[4], 1); }
TEST(snapshot_expiration_with_a_writer_loses_nothing) { writer_loop_test(&ops[6], 0); }
TEST(changelog_expiration_with_a_writer_loses_nothing) { writer_loop_test(&ops[5], 0); }

/* PAIMON_KILL9_ONLY=substring runs only the tests whose name holds it (long runs). */
static int selected(const char *name) {
    const char *only = getenv("PAIMON_KILL9_ONLY");
    return !only || strstr(name, only) != NULL;
}
#define RUN_IF(name) do { if (selected(#name)) RUN(name); } while (0)

int main(void) {
    snprintf(prefix, sizeof prefix, "%s/pm_test_kill9.", tu_tmp_base());
    const char *s = getenv("PAIMON_KILL9_SEED"), *n = getenv("PAIMON_KILL9_ITERS");
    seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)getpid();
    if (n && atoi(n) > 0) iters = atoi(n);
    printf("# seed %u (PAIMON_KILL9_SEED), %d rounds per operation (PAIMON_KILL9_ITERS)\n", seed, iters);
    RUN_IF(tag_delete_survives_kill9);
    RUN_IF(rollback_survives_kill9);
    RUN_IF(rollback_as_latest_survives_kill9);
    RUN_IF(branch_delete_survives_kill9);
    RUN_IF(branch_fast_forward_survives_kill9);
    RUN_IF(changelog_expiration_survives_kill9);
    RUN_IF(snapshot_expiration_survives_kill9);
    RUN_IF(decoupled_snapshot_expiration_survives_kill9);
    RUN_IF(tag_delete_with_a_writer_loses_nothing);
    RUN_IF(rollback_with_a_writer_loses_only_what_it_rolls_back);
    RUN_IF(branch_delete_with_a_writer_loses_nothing);
    RUN_IF(fast_forward_with_a_writer_loses_only_what_it_replaces);
    RUN_IF(snapshot_expiration_with_a_writer_loses_nothing);
    RUN_IF(changelog_expiration_with_a_writer_loses_nothing);
    return TEST_SUMMARY();
}
