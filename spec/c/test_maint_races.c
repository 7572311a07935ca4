/* Maintenance racing with writers (forked processes committing through
 * pm_commit into a table built here; /dev/shm when available).
 *
 * (a) Orphan removal while a writer commits: the table starts with 40
 *     commits whose files are all backdated by an hour, plus planted
 *     orphans (old ones in bucket and manifest directories, young ones);
 *     a child commits new data files in a loop while the parent runs
 *     pm_remove_orphan_files repeatedly (cut-off now - 2 s; every other
 *     run a dry run) and plants more old orphans. Every file that
 *     disappeared during a run, and every path a dry run planned, must be a
 *     planted old orphan whose mtime was before that run's cut-off; after
 *     the child stops, every file of every snapshot exists (pyref over all
 *     snapshots), the young orphans survive and a final run removes the
 *     remaining old orphans.
 * (b) Expiration while two writers commit (appends and compactions, their
 *     own files only): the parent expires repeatedly with retain-min 2.
 *     Afterwards no commit was lost: every commit a writer saw succeed is
 *     either a live snapshot with its user and identifier or below
 *     EARLIEST; every file a writer added and never compacted away is live
 *     in the latest snapshot and exists; snapshots are continuous; pyref
 *     reads every remaining snapshot and all its files exist. */
#define _XOPEN_SOURCE 700
#include "test.h"
#include "pm_commit.h"
#include "pm_expire.h"
#include "pm_orphan.h"
#include "pm_set.h"
#include "pm_verify.h"

#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SCHEMA \
    "{\n  \"version\" : 3,\n  \"id\" : 0,\n  \"fields\" : [ {\n    \"id\" : 0,\n    \"name\" : \"id\",\n" \
    "    \"type\" : \"INT\"\n  }, {\n    \"id\" : 1,\n    \"name\" : \"dt\",\n    \"type\" : \"STRING\"\n  } ],\n" \
    "  \"highestFieldId\" : 1,\n  \"partitionKeys\" : [ \"dt\" ],\n  \"primaryKeys\" : [ ],\n" \
    "  \"options\" : {\n    \"bucket\" : \"-1\",\n    \"file.format\" : \"parquet\",\n" \
    "    \"commit.min-retry-wait\" : \"1 ms\",\n    \"commit.max-retry-wait\" : \"20 ms\",\n" \
    "    \"commit.max-retries\" : \"100\"\n  },\n" \
    "  \"timeMillis\" : 1764000000000\n}"

enum { N_PARTS = 3 };

/* pyref's references of every snapshot (see test_maint_scale.c): one
 * "ref<TAB>table-relative path" line each. */
static const char *PYCHECK =
    "import argparse, functools, os, sys\n"
    "sys.path.insert(0, sys.argv[2])\n"
    "import pyref\n"
    "pyref.read_avro = functools.lru_cache(maxsize=None)(pyref.read_avro)\n"
    "table = sys.argv[1]\n"
    "out = sys.stdout\n"
    "main = pyref.Table(table)\n"
    "for s in pyref.view_snapshots(main, None):\n"
    "    sid = s['snapshot_id']\n"
    "    a = argparse.Namespace(snapshot=sid, tag=None, branch=None)\n"
    "    out.write('s:%d\\tsnapshot/snapshot-%d\\n' % (sid, sid))\n"
    "    for r in pyref.view_files(main, a):\n"
    "        out.write('s:%d\\t%s\\n' % (sid, r['file_path']))\n"
    "    for m in pyref.view_manifests(main, a):\n"
    "        out.write('s:%d\\tmanifest/%s\\n' % (sid, m['file_name']))\n"
    "    for k in ('base_manifest_list', 'delta_manifest_list'):\n"
    "        out.write('s:%d\\tmanifest/%s\\n' % (sid, s[k]))\n";

/* ---- the table ------------------------------------------------------------------------ */

typedef struct world { char dir[128], table[200], script[200]; } world;

static int world_open(world *w) {
    memset(w, 0, sizeof *w);
    const char *base = tu_tmp_base();
    snprintf(w->dir, sizeof w->dir, "%s/pm_test_mraces.XXXXXX", base);
    if (!mkdtemp(w->dir)) return -1;
    snprintf(w->table, sizeof w->table, "%s/t", w->dir);
    snprintf(w->script, sizeof w->script, "%s/check.py", w->dir);
    char p[400];
    snprintf(p, sizeof p, "%s/schema", w->table);
    if (mkdir(w->table, 0755) || mkdir(p, 0755)) return -1;
    snprintf(p, sizeof p, "%s/schema/schema-0", w->table);
    if (tu_write_file(p, SCHEMA, strlen(SCHEMA))) return -1;
    for (int i = 0; i < N_PARTS; i++) {
        snprintf(p, sizeof p, "%s/dt=p%d", w->table, i);
        mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/dt=p%d/bucket-0", w->table, i);
        mkdir(p, 0755);
    }
    return tu_write_file(w->script, PYCHECK, strlen(PYCHECK));
}

static void world_close(world *w) {
    if (!getenv("KEEP") && strstr(w->dir, "/pm_test_mraces.")) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
        tu_sh(cmd);
    }
}

typedef struct tfile { pm_manifest_entry m; pm_buf part, empty; char name[96]; int p; int live; } tfile;

/* A new data file "data-<tag>-<n>-<uuid>.parquet" in partition p, on disk. */
static int new_file(paimon_table *t, const char *table, tfile *x, const char *tag, long n, int p) {
    memset(x, 0, sizeof *x);
    pm_err e;
    char dt[16];
    snprintf(dt, sizeof dt, "p%d", p);
    pm_datum v;
    memset(&v, 0, sizeof v);
    v.v.bin.ptr = (const uint8_t *)dt;
    v.v.bin.len = strlen(dt);
    pm_binrow_encode(t->part_types, 1, &v, &x->part, &e);
    pm_binrow_encode(NULL, 0, NULL, &x->empty, &e);
    char uuid[37];
    pm_uuid4(uuid);
    snprintf(x->name, sizeof x->name, "data-%s-%ld-%.8s.parquet", tag, n, uuid);
    x->p = p;
    x->live = 1;
    char path[600];
    snprintf(path, sizeof path, "%s/dt=%s/bucket-0/%s", table, dt, x->name);
    if (tu_write_file(path, x->name, strlen(x->name))) return -1;
    tu_fake_add(&x->m, (pm_bytes){x->part.data, x->part.len}, (pm_bytes){x->empty.data, x->empty.len}, 0, -1,
                x->name, (int64_t)strlen(x->name), 3, 1764000000000LL);
    return 0;
}

static void tfile_free(tfile *x) {
    pm_buf_free(&x->part);
    pm_buf_free(&x->empty);
}

/* ---- a writer process ---------------------------------------------------------------- */

/* A stalling writer: every stall_every-th snapshot creation sleeps
 * stall_ms first, after the commit has read the latest snapshot and
 * written its manifests (a slow writer, a GC pause). Meanwhile the other
 * writer commits and the expiration may remove the snapshot it built on. */
static const pm_fileio_ops *stall_inner;
static pm_fileio_ops stall_ops;
static int stall_every, stall_ms, stall_count;

static int stall_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    if (strstr(path, "/snapshot/snapshot-") && ++stall_count % stall_every == 0) usleep((useconds_t)stall_ms * 1000);
    return stall_inner->create_no_replace(io, path, p, n, e);
}

static void stall_install(paimon_table *t, int every, int ms) {
    stall_inner = t->io->ops;
    stall_ops = *stall_inner;
    stall_ops.create_no_replace = stall_create;
    t->io->ops = &stall_ops;
    stall_every = every;
    stall_ms = ms;
}

/* Commits until the deadline (wall ms) or max_commits: two new files per
 * commit; with compact_every > 0 every compact_every-th commit deletes two
 * of its own live files and adds one (COMPACT). Appends one line per
 * outcome to log: "C <id> <identifier> +<name>... -<name>..." or
 * "F <identifier> <message>". A failed commit is retried with the same
 * entries after filterCommitted (pm_commit_last_identifier) says it did
 * not happen. Exit status 0, or 1 when it could not commit at all. */
static int writer(const char *table, const char *user, const char *log, int64_t deadline, int max_commits,
                  int compact_every, int pause_ms, int stall_every_n) {
    paimon_table *t;
    pm_err e;
    if (pm_table_open(table, NULL, &t, &e)) return 1;
    if (stall_every_n > 0) stall_install(t, stall_every_n, 30);
    FILE *lf = fopen(log, "w");
    if (!lf) return 1;
    setvbuf(lf, NULL, _IOLBF, 0);
    enum { MAXF = 4096 };
    tfile *f = calloc(MAXF, sizeof *f);
    size_t nf = 0;
    int64_t ident = 0;
    int ok = 0;
    while (pm_now_millis() < deadline && ident < max_commits && nf + 3 < MAXF) {
        ident++;
        pm_manifest_entry v[4];
        size_t nv = 0;
        const char *kind = "APPEND";
        size_t first_new = nf;
        int del[2] = {-1, -1}, nd = 0;
        if (compact_every > 0 && ident % compact_every == 0) {
            for (size_t i = 0; i < nf && nd < 2; i++)
                if (f[i].live) { del[nd++] = (int)i; v[nv] = f[i].m; v[nv++].kind = PM_FILE_DELETE; }
            kind = "COMPACT";
            if (new_file(t, table, &f[nf], user, (long)nf, (int)(ident % N_PARTS))) break;
            v[nv++] = f[nf++].m;
        } else {
            for (int j = 0; j < 2; j++) {
                if (new_file(t, table, &f[nf], user, (long)nf, (int)((ident + j) % N_PARTS))) break;
                v[nv++] = f[nf++].m;
            }
        }
        pm_commit_opts o;
        pm_commit_opts_from_table(t, &o);
        o.commit_user = user;
        o.identifier = ident;
        o.kind = kind;
        int64_t id = 0;
        int rc = -1;
        for (int attempt = 0; attempt < 50; attempt++) {
            rc = pm_commit(t, v, nv, &o, &id, &e);
            if (rc == PAIMON_OK) break;
            fprintf(lf, "F %lld %s\n", (long long)ident, e.msg);
            int64_t last = INT64_MIN;
            pm_err e2;
            if (pm_commit_last_identifier(t, user, &last, &e2) == PAIMON_OK && last >= ident) {
                fprintf(lf, "F %lld committed after all\n", (long long)ident);
                rc = PAIMON_OK;
                id = -1;
                break;
            }
            usleep(1000);
        }
        if (rc != PAIMON_OK) break;
        ok++;
        fprintf(lf, "C %lld %lld", (long long)id, (long long)ident);
        for (size_t i = first_new; i < nf; i++) fprintf(lf, " +%s", f[i].name);
        for (int i = 0; i < nd; i++) { fprintf(lf, " -%s", f[del[i]].name); f[del[i]].live = 0; }
        fputc('\n', lf);
        /* bursts of 4 commits pause_ms apart, then a longer pause: an orphan
         * run that overlaps a commit stops with a conflict, one in a pause
         * completes */
        if (pause_ms) usleep((useconds_t)(ident % 4 == 0 ? pause_ms * 12 : pause_ms) * 1000);
    }
    fclose(lf);
    for (size_t i = 0; i < nf; i++) tfile_free(&f[i]);
    free(f);
    pm_table_free(t);
    return ok > 0 ? 0 : 1;
}

static pid_t spawn_writer(const char *table, const char *user, const char *log, int64_t deadline, int max_commits,
                          int compact_every, int pause_ms, int stall_every_n) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(writer(table, user, log, deadline, max_commits, compact_every, pause_ms, stall_every_n));
    return pid;
}

static int child_done(pid_t pid, int *status) {
    int st;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) { *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128; return 1; }
    return r < 0;
}

/* ---- checks ------------------------------------------------------------------------------ */

/* pyref's references of every snapshot; -1 when it fails. */
static int reference(const world *w, tu_strset *refs, tu_strset *labels) {
    char cmd[800];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' spec/support 2>&1", w->script, w->table);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[1024];
    int bad = 0;
    size_t n = 0;
    while (fgets(line, sizeof line, p)) {
        size_t l = strlen(line);
        if (l && line[l - 1] == '\n') line[--l] = '\0';
        char *tab = strchr(line, '\t');
        if (!tab) { fprintf(stderr, "  pyref: %s\n", line); bad = 1; continue; }
        *tab = '\0';
        if (labels) tu_ss_add(labels, line);
        tu_ss_add(refs, tab + 1);
        n++;
    }
    int st = pclose(p);
    return bad || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || n == 0 ? -1 : 0;
}

static int rel_exists(const world *w, const char *rel) {
    char p[600];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", w->table, rel);
    return stat(p, &st) == 0;
}

/* Every path pyref finds referenced exists; returns the number missing
 * (-1 when the reader fails). */
static long check_all_referenced(const world *w, tu_strset *refs, const char *ctx) {
    if (reference(w, refs, NULL)) { fprintf(stderr, "  %s: pyref failed on the table\n", ctx); return -1; }
    long missing = 0;
    for (size_t i = 0; i < refs->n; i++)
        if (!rel_exists(w, refs->v[i])) {
            if (missing++ < 10) fprintf(stderr, "  %s: referenced %s is missing\n", ctx, refs->v[i]);
        }
    return missing;
}

/* Table-relative file paths with their mtimes (ms). */
typedef struct fent { char *rel; int64_t mtime; } fent;
static fent *walk_v;
static size_t walk_n, walk_cap, walk_prefix;

static int walk_fn(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)ftw;
    if (flag != FTW_F) return 0;
    if (walk_n == walk_cap) {
        walk_cap = walk_cap ? walk_cap * 2 : 512;
        walk_v = realloc(walk_v, walk_cap * sizeof *walk_v);
    }
    walk_v[walk_n].rel = pm_strdup(path + walk_prefix);
    walk_v[walk_n++].mtime = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
    return 0;
}

static void walk(const char *dir) {
    walk_n = 0;
    walk_prefix = strlen(dir) + 1;
    nftw(dir, walk_fn, 16, FTW_PHYS);
}

static void walk_free(void) {
    for (size_t i = 0; i < walk_n; i++) free(walk_v[i].rel);
    free(walk_v);
    walk_v = NULL;
    walk_n = walk_cap = 0;
}

static void backdate(const char *path, int64_t ms_ago) {
    struct timeval tv[2];
    int64_t t = pm_now_millis() - ms_ago;
    tv[0].tv_sec = tv[1].tv_sec = (time_t)(t / 1000);
    tv[0].tv_usec = tv[1].tv_usec = (suseconds_t)(t % 1000) * 1000;
    utimes(path, tv);
}

/* Plant an orphan: rel path under the table; old ones backdated an hour. */
static void plant(const world *w, tu_strset *set, const char *rel, int old) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", w->table, rel);
    if (tu_write_file(p, "orphan", 6)) return;
    if (old) backdate(p, 3600 * 1000);
    tu_ss_add(set, rel);
}

static int build(paimon_table *t, const char *table, int commits, const char *user) {
    pm_err e;
    for (int i = 1; i <= commits; i++) {
        tfile x[2];
        for (int j = 0; j < 2; j++)
            if (new_file(t, table, &x[j], user, i * 2 + j, (i + j) % N_PARTS)) return -1;
        pm_manifest_entry v[2] = {x[0].m, x[1].m};
        pm_commit_opts o;
        pm_commit_opts_from_table(t, &o);
        o.commit_user = user;
        o.identifier = i;
        int64_t id;
        int rc = pm_commit(t, v, 2, &o, &id, &e);
        tfile_free(&x[0]);
        tfile_free(&x[1]);
        if (rc) { fprintf(stderr, "  build: %s\n", e.msg); return -1; }
    }
    return 0;
}

/* ---- (a) orphan removal while a writer commits ----------------------------------------- */

TEST(orphan_removal_while_a_writer_commits) {
    world w;
    if (world_open(&w)) { CHECK(!"world"); world_close(&w); return; }
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(w.table, NULL, &t, &e), PAIMON_OK);
    if (!t) { world_close(&w); return; }
    CHECK(build(t, w.table, 40, "seed") == 0);
    /* everything so far is an hour old: orphan candidates by age */
    walk(w.table);
    for (size_t i = 0; i < walk_n; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", w.table, walk_v[i].rel);
        backdate(p, 3600 * 1000);
    }
    walk_free();
    tu_strset old_orphans = {0}, young = {0};
    char rel[300];
    int planted = 0;
    for (; planted < 6; planted++) {
        snprintf(rel, sizeof rel, "dt=p%d/bucket-0/data-orphan-old-%d.parquet", planted % N_PARTS, planted);
        plant(&w, &old_orphans, rel, 1);
    }
    plant(&w, &old_orphans, "manifest/manifest-orphan-old-0", 1);
    plant(&w, &old_orphans, "manifest/manifest-list-orphan-old-0", 1);

    char log[300];
    snprintf(log, sizeof log, "%s/writer.log", w.dir);
    pid_t pid = spawn_writer(w.table, "writer", log, pm_now_millis() + 3000, 100000, 0, 20, 0);
    CHECK(pid > 0);
    int status = -1, runs = 0, ok_runs = 0, dry_runs = 0, conflicts = 0, bad = 0;
    int64_t deleted_total = 0, quiet_runs = 0;
    tu_strset deleted = {0};
    int writer_done = pid <= 0;
    while (bad < 5) {
        /* runs overlap the writer's commits; one that overlaps a commit
         * stops with a conflict. On a loaded machine (sanitizers, parallel
         * tests) every run may overlap one: then up to 3 more real runs
         * after the writer stopped, so the deleting path is checked too. */
        if (!writer_done && child_done(pid, &status)) writer_done = 1;
        if (writer_done && (ok_runs > 0 || quiet_runs++ >= 3)) break;
        /* more old orphans for this run */
        snprintf(rel, sizeof rel, "dt=p%d/bucket-0/data-orphan-old-%d.parquet", planted % N_PARTS, planted);
        plant(&w, &old_orphans, rel, 1);
        planted++;
        walk(w.table);                     /* the state before the run, with mtimes */
        pm_orphan_opts o;
        memset(&o, 0, sizeof o);
        o.has_older_than = 1;
        o.older_than_ms = pm_now_millis() - 2000;
        o.allow_young_cutoff = 1;   /* below the 1 h floor on purpose */
        o.threads = 2;
        o.dry_run = !writer_done && runs % 2;
        pm_orphan_result r;
        int rc = pm_remove_orphan_files(t, &o, &r, &e);
        runs++;
        if (rc == PAIMON_CONFLICT) conflicts++;
        else if (rc != PAIMON_OK) { fprintf(stderr, "  orphan run %d: %s\n", runs, e.msg); bad++; }
        if (rc == PAIMON_OK) {
            if (o.dry_run) {
                dry_runs++;
                for (size_t i = 0; i < r.clean.n_paths; i++) {
                    const char *p = tu_plan_path(&r.clean, i, NULL);
                    const char *rp = strncmp(p, w.table, strlen(w.table)) ? p : p + strlen(w.table) + 1;
                    if (!tu_ss_has(&old_orphans, rp)) { fprintf(stderr, "  dry run %d plans %s\n", runs, rp); bad++; }
                }
            } else {
                ok_runs++;
                for (int k = 0; k < PM_K__N; k++) deleted_total += r.clean.count[k];
            }
            pm_clean_result_free(&r.clean);
        }
        /* whatever vanished was a planted old orphan, older than the cut-off
         * (nobody else deletes: one writer, no conflicts, no expiration) */
        for (size_t i = 0; i < walk_n; i++) {
            if (rel_exists(&w, walk_v[i].rel)) continue;
            const char *rp = walk_v[i].rel;
            if (rp[0] == '.' || strstr(rp, "/.")) continue;     /* a writer's temp file, renamed */
            if (!tu_ss_has(&old_orphans, rp) || walk_v[i].mtime >= o.older_than_ms) {
                fprintf(stderr, "  run %d deleted %s (mtime %lld, cut-off %lld)\n", runs, rp,
                        (long long)walk_v[i].mtime, (long long)o.older_than_ms);
                bad++;
            }
            tu_ss_add(&deleted, rp);
        }
        walk_free();
    }
    if (pid > 0 && status < 0) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
    CHECK_EQ_INT(status, 0);
    CHECK_EQ_INT(bad, 0);
    printf("# orphan runs during commits: %d (%d real ok, %d dry ok, %d conflicts), %lld files deleted\n", runs, ok_runs,
           dry_runs, conflicts, (long long)deleted_total);
    CHECK(ok_runs > 0 && deleted_total > 0);
    /* after the writer stopped: every file of every snapshot exists */
    tu_strset refs = {0};
    CHECK_EQ_INT(check_all_referenced(&w, &refs, "orphan race"), 0);
    for (size_t i = 0; i < deleted.n; i++)
        if (tu_ss_has(&refs, deleted.v[i])) { fprintf(stderr, "  deleted %s is referenced\n", deleted.v[i]); CHECK(0); }
    /* the writer's commits are all there */
    FILE *lf = fopen(log, "r");
    char line[4096];
    int commits = 0;
    while (lf && fgets(line, sizeof line, lf))
        if (line[0] == 'C') {
            commits++;
            for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n"))
                if (tok[0] == '+') {
                    int found = 0;
                    for (int p = 0; p < N_PARTS && !found; p++) {
                        snprintf(rel, sizeof rel, "dt=p%d/bucket-0/%s", p, tok + 1);
                        found = tu_ss_has(&refs, rel) && rel_exists(&w, rel);
                    }
                    if (!found) { fprintf(stderr, "  committed %s lost\n", tok + 1); CHECK(0); }
                }
        }
    if (lf) fclose(lf);
    printf("# writer committed %d snapshots meanwhile\n", commits);
    CHECK(commits > 10);
    /* a last run without the writer: the old orphans go, young ones stay */
    plant(&w, &young, "dt=p0/bucket-0/data-orphan-young-0.parquet", 0);
    plant(&w, &young, "manifest/manifest-orphan-young-0", 0);
    pm_orphan_opts o;
    memset(&o, 0, sizeof o);
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis() - 2000;
    o.allow_young_cutoff = 1;   /* below the 1 h floor on purpose */
    pm_orphan_result r;
    CHECK_EQ_INT(pm_remove_orphan_files(t, &o, &r, &e), PAIMON_OK);
    pm_clean_result_free(&r.clean);
    for (size_t i = 0; i < old_orphans.n; i++)
        if (rel_exists(&w, old_orphans.v[i])) { fprintf(stderr, "  %s survived\n", old_orphans.v[i]); CHECK(0); }
    for (size_t i = 0; i < young.n; i++) CHECK(rel_exists(&w, young.v[i]));
    tu_ss_free(&refs);
    CHECK_EQ_INT(check_all_referenced(&w, &refs, "after the last orphan run"), 0);
    tu_ss_free(&refs);
    tu_ss_free(&deleted);
    tu_ss_free(&old_orphans);
    tu_ss_free(&young);
    pm_table_free(t);
    world_close(&w);
}

/* ---- (b) expiration while writers commit ---------------------------------------------- */

typedef struct wlog { int64_t id, ident; } wlog;

TEST(expiration_while_writers_commit) {
    world w;
    if (world_open(&w)) { CHECK(!"world"); world_close(&w); return; }
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(w.table, NULL, &t, &e), PAIMON_OK);
    if (!t) { world_close(&w); return; }
    CHECK(build(t, w.table, 10, "seed") == 0);
    const char *users[2] = {"w1", "w2"};
    char logs[2][300];
    pid_t pids[2];
    int64_t deadline = pm_now_millis() + 2500;
    for (int i = 0; i < 2; i++) {
        snprintf(logs[i], sizeof logs[i], "%s/%s.log", w.dir, users[i]);
        pids[i] = spawn_writer(w.table, users[i], logs[i], deadline, 100000, i == 0 ? 5 : 7, 0, i == 1 ? 10 : 0);
        CHECK(pids[i] > 0);
    }
    int status[2] = {-1, -1}, live = 2, runs = 0, bad = 0;
    int64_t expired = 0, data_deleted = 0;
    while (live > 0 && bad < 5) {
        pm_expire_opts o;
        memset(&o, 0, sizeof o);
        o.retain_min = 2;
        o.has_older_than = 1;
        o.older_than_ms = pm_now_millis();
        o.max_deletes = 1000;
        o.threads = 2;
        pm_expire_result r;
        int rc = pm_expire_snapshots(t, &o, &r, &e);
        runs++;
        if (rc) { fprintf(stderr, "  expire run %d: %s\n", runs, e.msg); bad++; }
        else {
            expired += r.expired;
            data_deleted += r.clean.count[PM_K_DATA];
            if (r.clean.n_failures) { fprintf(stderr, "  expire run %d: %zu failures\n", runs, r.clean.n_failures); bad++; }
            pm_clean_result_free(&r.clean);
        }
        live = 0;
        for (int i = 0; i < 2; i++)
            if (status[i] < 0 && !child_done(pids[i], &status[i])) live++;
        usleep(2000);
    }
    for (int i = 0; i < 2; i++)
        if (status[i] < 0) {
            int st;
            while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR) {}
            status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(status[0], 0);
    CHECK_EQ_INT(status[1], 0);
    /* one more expiration, alone */
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 2;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 100000;
    pm_expire_result r;
    CHECK_EQ_INT(pm_expire_snapshots(t, &o, &r, &e), PAIMON_OK);
    expired += r.expired;
    data_deleted += r.clean.count[PM_K_DATA];
    pm_clean_result_free(&r.clean);
    printf("# %d expirations during commits: %lld snapshots expired, %lld data files deleted\n", runs,
           (long long)expired, (long long)data_deleted);
    CHECK(expired > 20 && data_deleted > 0);

    int64_t earliest = 0, latest = 0;
    CHECK_EQ_INT(pm_snapshot_earliest_id(t->io, t->root, &earliest, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_snapshot_latest_id(t->io, t->root, &latest, &e), PAIMON_OK);
    CHECK(latest - earliest + 1 == 2);
    /* continuity, and every remaining snapshot fully readable with its files */
    tu_strset refs = {0}, labels = {0};
    CHECK_EQ_INT(check_all_referenced(&w, &refs, "expire race"), 0);
    tu_ss_free(&refs);
    CHECK(reference(&w, &refs, &labels) == 0);
    for (int64_t id = earliest; id <= latest; id++) {
        char l[64];
        snprintf(l, sizeof l, "s:%lld", (long long)id);
        if (!tu_ss_has(&labels, l)) { fprintf(stderr, "  snapshot %lld missing\n", (long long)id); CHECK(0); }
    }
    /* live files of the latest snapshot (C scan) */
    tu_strset livef = {0};
    pm_snapshot *s = NULL;
    CHECK_EQ_INT(pm_snapshot_read(t->io, t->root, latest, &s, &e), PAIMON_OK);
    pm_scan *sc;
    if (s && pm_scan_open(t, s, NULL, &sc, &e) == 0) {
        const pm_manifest_entry *m;
        while (pm_scan_next(sc, &m, &e) == PAIMON_OK) tu_ss_add(&livef, m->file.file_name);
        pm_scan_close(sc);
    }
    pm_snapshot_free(s);
    /* no commit lost */
    int64_t commits = 0, failures = 0;
    tu_strset ids = {0};
    for (int i = 0; i < 2; i++) {
        FILE *lf = fopen(logs[i], "r");
        CHECK(lf != NULL);
        static char line[8192];
        tu_strset added = {0}, removed = {0};
        while (lf && fgets(line, sizeof line, lf)) {
            if (line[0] == 'F') { failures++; continue; }
            if (line[0] != 'C') continue;
            commits++;
            long long id = 0, ident = 0;
            sscanf(line + 2, "%lld %lld", &id, &ident);
            if (id > 0) {
                char key[32];
                snprintf(key, sizeof key, "%lld", id);
                if (tu_ss_has(&ids, key)) { fprintf(stderr, "  snapshot %lld committed twice\n", id); CHECK(0); }
                tu_ss_add(&ids, key);
                if (id >= earliest) {
                    pm_snapshot *x = NULL;
                    if (pm_snapshot_read(t->io, t->root, id, &x, &e) || strcmp(x->commit_user, users[i]) ||
                        x->commit_identifier != ident) {
                        fprintf(stderr, "  %s's snapshot %lld (identifier %lld) is not there\n", users[i], id, ident);
                        CHECK(0);
                    }
                    pm_snapshot_free(x);
                }
            }
            for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
                if (tok[0] == '+') tu_ss_add(&added, tok + 1);
                if (tok[0] == '-') tu_ss_add(&removed, tok + 1);
            }
        }
        if (lf) fclose(lf);
        int lost = 0;
        for (size_t j = 0; j < added.n; j++) {
            if (tu_ss_has(&removed, added.v[j])) {
                if (tu_ss_has(&livef, added.v[j])) { fprintf(stderr, "  compacted %s still live\n", added.v[j]); lost++; }
                continue;
            }
            int exists = 0;
            for (int p = 0; p < N_PARTS && !exists; p++) {
                char rel[300];
                snprintf(rel, sizeof rel, "dt=p%d/bucket-0/%s", p, added.v[j]);
                exists = rel_exists(&w, rel);
            }
            if (!tu_ss_has(&livef, added.v[j]) || !exists) {
                if (lost < 10) fprintf(stderr, "  %s of %s lost (live %d, on disk %d)\n", added.v[j], users[i],
                                       tu_ss_has(&livef, added.v[j]), exists);
                lost++;
            }
        }
        CHECK_EQ_INT(lost, 0);
        CHECK(added.n > 10 && removed.n > 0);
        tu_ss_free(&added);
        tu_ss_free(&removed);
    }
    printf("# writers: %lld commits, %lld failed attempts retried; latest snapshot %lld\n", (long long)commits,
           (long long)failures, (long long)latest);
    CHECK(commits > 20);
    tu_ss_free(&ids);
    tu_ss_free(&livef);
    tu_ss_free(&refs);
    tu_ss_free(&labels);
    pm_table_free(t);
    world_close(&w);
}

/* ---- (c) orphan cleaning beside writers with commits in flight ------------------------- */

/* A writer whose commits are in flight for a while: each round writes two
 * data files, dates them back by backdate_ms (written that long before the
 * commit publishes them, e.g. a slow job or a commit under contention),
 * holds hold_ms and commits once. Log lines: "C <id> +<name> +<name>",
 * "M <message>" (refused: a file of the commit was deleted meanwhile),
 * "U <message>" (outcome uncertain: its temporary snapshot file was
 * deleted meanwhile, files kept), "F <code> <message>" (any other failure). Exit status 0, or 1 when it
 * could not run. */
static int inflight_writer(const char *table, const char *user, const char *log, int64_t deadline, int hold_ms,
                           int64_t backdate_ms) {
    paimon_table *t;
    pm_err e;
    if (pm_table_open(table, NULL, &t, &e)) return 1;
    FILE *lf = fopen(log, "w");
    if (!lf) return 1;
    setvbuf(lf, NULL, _IOLBF, 0);
    for (int64_t ident = 1; pm_now_millis() < deadline; ident++) {
        tfile f[2];
        pm_manifest_entry v[2];
        for (int j = 0; j < 2; j++) {
            if (new_file(t, table, &f[j], user, (long)(ident * 2 + j), (int)((ident + j) % N_PARTS))) {
                fclose(lf);
                return 1;
            }
            char p[600];
            snprintf(p, sizeof p, "%s/dt=p%d/bucket-0/%s", table, f[j].p, f[j].name);
            backdate(p, backdate_ms);
            v[j] = f[j].m;
        }
        /* hold_ms < 0: every other batch waits -hold_ms, the rest none */
        usleep((useconds_t)(hold_ms >= 0 ? hold_ms : ident % 2 ? -hold_ms : 0) * 1000);
        pm_commit_opts o;
        pm_commit_opts_from_table(t, &o);
        o.commit_user = user;
        o.identifier = ident;
        int64_t id = 0;
        int rc = pm_commit(t, v, 2, &o, &id, &e);
        if (rc == PAIMON_OK) fprintf(lf, "C %lld +%s +%s\n", (long long)id, f[0].name, f[1].name);
        else if (rc == PAIMON_CONFLICT && strstr(e.msg, "nothing published")) fprintf(lf, "M %s\n", e.msg);
        else if (rc == PAIMON_UNCERTAIN) fprintf(lf, "U %s\n", e.msg);
        else fprintf(lf, "F %d %s\n", rc, e.msg);
        tfile_free(&f[0]);
        tfile_free(&f[1]);
    }
    fclose(lf);
    pm_table_free(t);
    return 0;
}

typedef struct race_stats {
    int runs, ok_runs, conflicts, bad_runs;
    int64_t deleted;
    int landed, refused, failed;          /* commits */
    int uncertain;                        /* commits whose temporary snapshot file a cleaner below the
                                             floor deleted (Java's rule: an old temp file is an orphan):
                                             the commit says "uncertain" and keeps every file */
    int window;                           /* landed commits whose files are gone (deleted between the
                                             committer's check and its snapshot link) */
    long missing, unreadable;             /* verify --all-snapshots afterwards */
    long stray;                           /* missing files no window commit's snapshot needs first */
    int64_t win_ids[64];                  /* the window commits' snapshots (this round) */
    int n_win_ids;
} race_stats;

/* One round on a fresh table: three writers for ms milliseconds
 * and orphan cleaning in a loop beside them, at cut-off now - age_ms
 * (allow_young_cutoff when below the floor); old orphans (2 h) are
 * planted before every run. Then every snapshot is verified. */
static void race_round(int64_t age_ms, int ms, race_stats *st) {
    world w;
    if (world_open(&w)) { CHECK(!"world"); world_close(&w); return; }
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(w.table, NULL, &t, &e), PAIMON_OK);
    if (!t) { world_close(&w); return; }
    CHECK(build(t, w.table, 5, "seed") == 0);
    enum { W = 3 };
    char logs[W][300];
    pid_t pids[W];
    int status[W], live = W;
    int64_t deadline = pm_now_millis() + ms;
    for (int i = 0; i < W; i++) {
        char user[16];
        snprintf(user, sizeof user, "w%d", i);
        snprintf(logs[i], sizeof logs[i], "%s/%s.log", w.dir, user);
        fflush(NULL);
        pids[i] = fork();
        /* w0 commits every other batch right away (those land) and pauses
         * 10 ms before the others (commits got fast enough that without a
         * pause nearly every cleaning run is a conflict and the race is
         * never seen); w1 and w2 hold theirs */
        if (pids[i] == 0) _exit(inflight_writer(w.table, user, logs[i], deadline, i ? 5 + 10 * i : -10,
                                                i ? 30 * 60 * 1000 : 0));
        CHECK(pids[i] > 0);
        status[i] = -1;
    }
    int planted = 0, quiet_run = 0;
    while (live > 0) {
        char rel[300];
        snprintf(rel, sizeof rel, "%s/dt=p%d/bucket-0/data-orphan-old-%d.parquet", w.table, planted % N_PARTS, planted);
        if (tu_write_file(rel, "orphan", 6) == 0) backdate(rel, 2 * 3600 * 1000);
        planted++;
        pm_orphan_opts o;
        memset(&o, 0, sizeof o);
        o.has_older_than = 1;
        o.older_than_ms = pm_now_millis() - age_ms;
        o.allow_young_cutoff = age_ms < PM_ORPHAN_CUTOFF_FLOOR_MS;
        o.threads = 2;
        pm_orphan_result r;
        int rc = pm_remove_orphan_files(t, &o, &r, &e);
        st->runs++;
        if (rc == PAIMON_OK) {
            st->ok_runs++;
            for (int k = 0; k < PM_K__N; k++) st->deleted += r.clean.count[k];
            if (r.floor_overridden != o.allow_young_cutoff) { fprintf(stderr, "  floor_overridden wrong\n"); st->bad_runs++; }
            pm_clean_result_free(&r.clean);
        } else if (rc == PAIMON_CONFLICT) {
            st->conflicts++;
        } else {
            if (st->bad_runs++ < 5) fprintf(stderr, "  orphan run %d: %s\n", st->runs, e.msg);
        }
        live = 0;
        for (int i = 0; i < W; i++)
            if (status[i] < 0 && !child_done(pids[i], &status[i])) live++;
        /* on a loaded machine every run may overlap a commit (a conflict):
         * then one more after the writers stopped, so cleaning is seen */
        if (live == 0 && st->ok_runs == 0 && !quiet_run) { quiet_run = 1; live = 1; }
    }
    for (int i = 0; i < W; i++) {
        CHECK_EQ_INT(status[i], 0);
        FILE *lf = fopen(logs[i], "r");
        char line[4096];
        while (lf && fgets(line, sizeof line, lf)) {
            if (line[0] == 'C') {
                st->landed++;
                int gone = 0;
                for (char *tok = strtok(line, " \n"); tok; tok = strtok(NULL, " \n")) {
                    if (tok[0] != '+') continue;
                    int found = 0;
                    for (int p = 0; p < N_PARTS && !found; p++) {
                        char rel[300];
                        snprintf(rel, sizeof rel, "dt=p%d/bucket-0/%s", p, tok + 1);
                        found = rel_exists(&w, rel);
                    }
                    gone |= !found;
                }
                st->window += gone;
                if (gone && st->n_win_ids < 64) st->win_ids[st->n_win_ids++] = strtoll(line + 2, NULL, 10);
            }
            else if (line[0] == 'M') st->refused++;
            else if (line[0] == 'U') st->uncertain++;
            else if (line[0] == 'F') { if (st->failed++ < 5) fprintf(stderr, "  commit failed: %s", line + 2); }
        }
        if (lf) fclose(lf);
    }
    pm_verify_opts vo;
    memset(&vo, 0, sizeof vo);
    vo.all_snapshots = 1;
    pm_verify_result vr;
    CHECK_EQ_INT(pm_verify(t, &vo, &vr, &e), PAIMON_OK);
    st->missing += (long)vr.n_missing;
    st->unreadable += (long)vr.n_unreadable;
    /* every missing file is one of a window commit: the first snapshot
     * that needs it is one whose files went while it was in flight */
    for (size_t i = 0; i < vr.n_missing; i++) {
        const char *by = vr.missing[i].msg ? strstr(vr.missing[i].msg, "needed by snapshot ") : NULL;
        int64_t id = by ? strtoll(by + 19, NULL, 10) : -1;
        int ours = 0;
        for (int k = 0; k < st->n_win_ids && !ours; k++) ours = st->win_ids[k] == id;
        if (!ours) { st->stray++; fprintf(stderr, "  stray missing: %s (%s)\n", vr.missing[i].path, vr.missing[i].msg); }
    }
    for (size_t i = 0; i < vr.n_missing && i < 5; i++) fprintf(stderr, "  missing: %s (%s)\n", vr.missing[i].path, vr.missing[i].msg);
    pm_verify_result_free(&vr);
    pm_table_free(t);
    world_close(&w);
}

/* Issue 12: writers' commits in flight (files written 30 min before they
 * are published) beside orphan cleaning in a loop. At the floor (cut-off
 * now - 1 h) nothing in flight is touched: every commit lands, old
 * orphans go, every snapshot is whole. At an overridden 0 s cut-off the
 * cleaner deletes files of commits in flight: those commits are refused
 * instead of landing. What is left is measured over ORPHAN_RACE_ROUNDS
 * rounds (default 3) of 1 s: a landed commit whose file the cleaner
 * deleted after the committer's check and before its link, the
 * cleaner's own last check (latest snapshot unchanged) having come just
 * before that link. It must stay far rarer than the refusals (without
 * the check every refusal would be a broken table). */
TEST(orphan_cleaning_beside_commits_in_flight) {
    race_stats fl;
    memset(&fl, 0, sizeof fl);
    race_round(PM_ORPHAN_CUTOFF_FLOOR_MS, 1500, &fl);
    printf("# at the floor: %d runs (%d ok, %d conflicts), %lld files deleted; commits: %d landed, %d refused, "
           "%d failed; missing %ld\n", fl.runs, fl.ok_runs, fl.conflicts, (long long)fl.deleted, fl.landed, fl.refused,
           fl.failed, fl.missing);
    CHECK_EQ_INT(fl.bad_runs, 0);
    CHECK(fl.ok_runs > 0 && fl.deleted > 0);       /* it did clean: the planted old orphans */
    CHECK(fl.landed > 20);
    CHECK_EQ_INT(fl.refused, 0);                   /* nothing in flight was deleted */
    CHECK_EQ_INT(fl.uncertain, 0);
    CHECK_EQ_INT(fl.failed, 0);
    CHECK_EQ_INT(fl.missing, 0);
    CHECK_EQ_INT(fl.unreadable, 0);

    const char *env = getenv("ORPHAN_RACE_ROUNDS");
    int rounds = env && atoi(env) > 0 ? atoi(env) : 3, broken = 0, bad_after_clean = 0, n_rounds = 0;
    race_stats ov;
    memset(&ov, 0, sizeof ov);
    /* at least `rounds`; more (up to 30) until 20 files in flight were
     * deleted: the window is a rare event (about one in 50 refusals seen
     * under ASan), so the ratio below is judged on enough refusals; a
     * sanitized or loaded run sees only 1 to 3 refusals a round */
    for (int i = 0; i < rounds || (ov.refused < 20 && i < 30); i++) {
        race_stats r;
        memset(&r, 0, sizeof r);
        race_round(0, 1000, &r);
        /* a table the window broke fails later commits and runs (what the
         * issue saw); in a whole one nothing else may go wrong */
        if (r.window || r.missing || r.unreadable) broken++;
        else bad_after_clean += r.bad_runs + r.failed;
        ov.runs += r.runs, ov.ok_runs += r.ok_runs, ov.conflicts += r.conflicts, ov.bad_runs += r.bad_runs;
        ov.deleted += r.deleted, ov.landed += r.landed, ov.refused += r.refused, ov.failed += r.failed;
        ov.window += r.window, ov.missing += r.missing, ov.unreadable += r.unreadable, ov.stray += r.stray;
        n_rounds++;
    }
    printf("# overridden 0 s cut-off, %d rounds: %d runs (%d ok, %d conflicts), %lld files deleted; commits: %d landed, "
           "%d refused (a file deleted in flight), %d failed; the window: %d landed commits lost files, broken tables "
           "%d of %d (missing %ld, unreadable %ld)\n",
           n_rounds, ov.runs, ov.ok_runs, ov.conflicts, (long long)ov.deleted, ov.landed, ov.refused, ov.failed, ov.window,
           broken, n_rounds, ov.missing, ov.unreadable);
    CHECK(ov.refused > 0);                         /* the race was real: in-flight files were deleted */
    CHECK(ov.landed > 0);
    CHECK(ov.window * 5 < ov.refused);             /* those commits failed instead of landing, but for the window
                                                      (without the committer's check every refusal would be one) */
    CHECK_EQ_INT(ov.stray, 0);                     /* every missing file is one of a window commit (its data */
    CHECK(ov.window > 0 || ov.missing == 0);       /* files, and its lists and manifests the same window took) */
    CHECK_EQ_INT(bad_after_clean, 0);
}

int main(void) {
    RUN(orphan_removal_while_a_writer_commits);
    RUN(expiration_while_writers_commit);
    RUN(orphan_cleaning_beside_commits_in_flight);
    return TEST_SUMMARY();
}
