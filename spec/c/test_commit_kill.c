/* kill -9 during commits: a child process commits in a loop (appends,
 * deletes, minor merges, full compactions, rolled manifests) and is killed
 * with SIGKILL at random moments. After every kill no snapshot references a
 * missing file, the latest snapshot by listing is readable (LATEST may lag)
 * and committing again works. Bounded by PM_KILL_SECONDS (default 8). */
#include "test.h"
#include "pm_commit.h"
#include "pm_set.h"

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COMPLEX "cpp-parquet-append_complex_data/append_complex_data.db/append_complex_data"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An ADD entry for a fake data file with a fixed creation time. */
static void tentry_init(tentry *x, const uint8_t *part, size_t plen, int bucket, const char *name, int64_t rows) {
    tentry_init_at(x, part, plen, bucket, name, rows, 1700000000000LL);
}

static int partition_of_first_live(const char *table, pm_buf *out) {
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(table, NULL, &t, &e)) return -1;
    int64_t lid;
    pm_snapshot *s = NULL;
    pm_scan *sc = NULL;
    const pm_manifest_entry *m;
    int rc = -1;
    if (!pm_snapshot_latest_id(t->io, t->branch_root, &lid, &e) && !pm_snapshot_read(t->io, t->branch_root, lid, &s, &e) &&
        !pm_scan_open(t, s, NULL, &sc, &e) && pm_scan_next(sc, &m, &e) == PAIMON_OK) {
        pm_buf_append(out, m->partition.ptr, m->partition.len);
        rc = 0;
    }
    pm_scan_close(sc);
    pm_snapshot_free(s);
    pm_table_free(t);
    return rc;
}

/* The child: commit forever. Every 4th commit also deletes the file of the
 * previous commit; option variety exercises merges and rolling. */
static void child_loop(const char *table, const pm_buf *part, int round) {
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(table, NULL, &t, &e)) _exit(2);
    char user[32];
    snprintf(user, sizeof user, "killed-%d", round);
    tentry prev;
    int have_prev = 0;
    for (int j = 0;; j++) {
        pm_commit_opts o;
        pm_commit_opts_from_table(t, &o);
        o.commit_user = user;
        o.identifier = j;
        switch (j % 5) {
        case 1: o.merge_min_count = 3; break;
        case 2: o.full_compaction_threshold = 1; break;
        case 3: o.manifest_target_size = 1; o.merge_min_count = 2; break;
        default: break;
        }
        char name[96];
        snprintf(name, sizeof name, "data-kill-%d-%d.parquet", round, j);
        tentry x;
        tentry_init(&x, part->data, part->len, j % 2, name, 1);
        pm_manifest_entry ents[2];
        size_t n = 0;
        if (have_prev && j % 4 == 3) {
            ents[n] = prev.m;
            ents[n++].kind = PM_FILE_DELETE;
        }
        ents[n++] = x.m;
        int64_t id;
        int rc = tu_commit(t, ents, n, &o, &id, &e);
        if (rc) _exit(3);
        if (have_prev) tentry_free(&prev);
        prev = x;
        prev.m.partition = (pm_bytes){prev.part.data, prev.part.len};
        prev.m.file.file_name = prev.name;
        have_prev = 1;
    }
}

/* Checks every snapshot; `scanned` = ids already fully scanned (only new ones
 * and the latest are scanned again). Returns the max id by listing, -1 if
 * something is wrong. */
static int64_t verify(const char *table, int64_t scanned_upto, int64_t *hint_out) {
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(table, NULL, &t, &e)) { fprintf(stderr, "  open: %s\n", e.msg); return -1; }
    int64_t *ids = NULL;
    size_t n = 0;
    int64_t result = -1;
    pm_set *ok_names = pm_set_new();
    if (pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, &e) || !n) {
        fprintf(stderr, "  list: %s\n", e.msg);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (ids[i] != (int64_t)i + 1) {
            fprintf(stderr, "  snapshot ids not contiguous at %lld\n", (long long)ids[i]);
            goto out;
        }
    int64_t max = ids[n - 1];
    int bad = 0;
    for (int64_t id = 1; id <= max && !bad; id++) {
        pm_snapshot *s = NULL;
        if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) {
            fprintf(stderr, "  snapshot %lld: %s\n", (long long)id, e.msg);
            bad = 1;
            break;
        }
        const char *lists[2] = {s->base_manifest_list, s->delta_manifest_list};
        for (int l = 0; l < 2 && !bad; l++) {
            pm_mfile *v = NULL;
            size_t nv = 0;
            if (!lists[l] || pm_read_manifest_list(t, lists[l], &v, &nv, &e)) {
                fprintf(stderr, "  snapshot %lld: list %s: %s\n", (long long)id, lists[l] ? lists[l] : "-", e.msg);
                bad = 1;
            }
            for (size_t k = 0; k < nv && !bad; k++) {
                if (pm_set_contains(ok_names, v[k].name, strlen(v[k].name))) continue;
                char p[900];
                struct stat st;
                snprintf(p, sizeof p, "%s/manifest/%s", table, v[k].name);
                if (stat(p, &st) != 0 || st.st_size != v[k].size) {
                    fprintf(stderr, "  snapshot %lld: manifest %s missing or wrong size\n", (long long)id, v[k].name);
                    bad = 1;
                }
                pm_set_add(ok_names, v[k].name, strlen(v[k].name));
            }
            pm_mfiles_free(v, nv);
        }
        if (!bad && (id > scanned_upto || id == max)) {
            pm_scan *sc;
            const pm_manifest_entry *m;
            int rc = pm_scan_open(t, s, NULL, &sc, &e);
            if (!rc) {
                while ((rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) {}
                pm_scan_close(sc);
            }
            if (rc != PAIMON_DONE) {
                fprintf(stderr, "  snapshot %lld: scan: %s\n", (long long)id, e.msg);
                bad = 1;
            }
        }
        pm_snapshot_free(s);
    }
    if (bad) goto out;
    int64_t hint = 0;
    if (pm_hint_read(t->io, t->branch_root, "LATEST", &hint, &e) == PAIMON_OK) {
        if (hint > max) { fprintf(stderr, "  LATEST %lld ahead of %lld\n", (long long)hint, (long long)max); goto out; }
    }
    int64_t lid = -1;
    if (pm_snapshot_latest_id(t->io, t->branch_root, &lid, &e) || lid != max) {
        fprintf(stderr, "  latest %lld, listing %lld\n", (long long)lid, (long long)max);
        goto out;
    }
    if (hint_out) *hint_out = hint;
    result = max;
out:
    pm_set_free(ok_names);
    free(ids);
    pm_table_free(t);
    return result;
}

TEST(commit_survives_kill9) {
    /* on disk: kills land in fsync waits too, and LATEST often lags */
    char dir[] = "/tmp/pm_test_kill.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char table[300], cmd[1600];
    snprintf(table, sizeof table, "%s/t", dir);
    snprintf(cmd, sizeof cmd, "cp -R '%s/paimon-java/%s' '%s'", fixtures_dir(), COMPLEX, table);
    CHECK(system(cmd) == 0);
    pm_buf part = {0};
    CHECK(partition_of_first_live(table, &part) == 0);
    const char *secs_env = getenv("PM_KILL_SECONDS");
    double budget = secs_env ? atof(secs_env) : 8.0;
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
    srand(seed);
    double start = now_s();
    int rounds = 0, lagging = 0;
    int64_t scanned = 0, last_max = 4, first_max = 4;
    paimon_table *t = NULL;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(table, NULL, &t, &e), PAIMON_OK);
    while (t && !t_cur_failed && now_s() - start < budget && rounds < 400) {
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) child_loop(table, &part, rounds);
        CHECK(pid > 0);
        if (pid <= 0) break;
        /* let it run 0..60 ms */
        struct timespec ts = {0, (long)(rand() % 60000) * 1000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int st = 0;
        waitpid(pid, &st, 0);
        if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)) {
            fprintf(stderr, "  child ended by itself: status %d\n", st);
            CHECK(!"child failed");
        }
        int64_t hint = 0;
        int64_t max = verify(table, scanned, &hint);
        CHECK(max >= last_max);
        if (max < 0) break;
        if (hint < max) lagging++;
        scanned = max;
        /* committing again works */
        char name[64];
        snprintf(name, sizeof name, "data-after-kill-%d.parquet", rounds);
        tentry x;
        tentry_init(&x, part.data, part.len, 0, name, 1);
        pm_commit_opts o;
        pm_commit_opts_from_table(t, &o);
        o.commit_user = "survivor";
        int64_t id = 0;
        int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
        if (rc) fprintf(stderr, "  commit after kill: %s\n", e.msg);
        CHECK_EQ_INT(rc, PAIMON_OK);
        CHECK_EQ_INT(id, max + 1);
        tentry_free(&x);
        last_max = id;
        rounds++;
    }
    int64_t final = verify(table, 0, NULL);
    CHECK(final == last_max);
    /* the survivor's files are all live */
    if (t && final > 0) {
        pm_snapshot *s = NULL;
        CHECK_EQ_INT(pm_snapshot_read(t->io, t->branch_root, final, &s, &e), PAIMON_OK);
        pm_scan *sc;
        int found = 0;
        if (s && !pm_scan_open(t, s, NULL, &sc, &e)) {
            const pm_manifest_entry *m;
            while (pm_scan_next(sc, &m, &e) == PAIMON_OK)
                if (!strncmp(m->file.file_name, "data-after-kill-", 16)) found++;
            pm_scan_close(sc);
        }
        CHECK_EQ_INT(found, rounds);
        pm_snapshot_free(s);
    }
    printf("# %d kills in %.1f s (seed %u), %lld snapshots, LATEST lagging after %d kills\n", rounds,
           now_s() - start, seed, (long long)(last_max - first_max), lagging);
    CHECK(rounds >= 10);
    pm_table_free(t);
    pm_buf_free(&part);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

int main(void) {
    RUN(commit_survives_kill9);
    return TEST_SUMMARY();
}
