/* Rollback (pm_rollback) under faults and racing writers, on copies of the
 * Java-written table with a tag and a branch:
 *  - a fault at every I/O operation of a rollback to snapshot 2 (once, or
 *    as a crash where every later operation fails too): afterwards every
 *    retained snapshot, tag and branch is complete (verify, all snapshots),
 *    the latest is 5, 2 or one in between (snapshot files go newest first);
 *    a re-run then finishes: the table reads as snapshot 2 did;
 *  - a writer committing at every I/O operation of the rollback: the
 *    rollback wins or fails with PAIMON_CONFLICT, the writer's snapshot (if
 *    it stays) is complete, and everything retained is complete;
 *  - rollback as latest racing a writer: PAIMON_CONFLICT, nothing
 *    published (pm_commit_opts.expect_latest), its protection tag removed.
 * The sweeps and races run the rollback with purge_files (the deletion of
 * data files and manifests is where the danger is); the default, metadata
 * only (Java 1.2+), has its own crash sweep that also checks that no file
 * but snapshot and tag files ever goes. */
#define _XOPEN_SOURCE 700
#include "test.h"
#include "pm_fileio_fault.h"
#include "pm_rollback.h"
#include "pm_verify.h"

#include <stdlib.h>

#define FIXTURE "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"

static char prefix[64];

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted live file names of snapshot id (0: the latest), joined; NULL on error. */
static char *live_names(const char *table, int64_t id) {
    paimon_table *t = tu_open_table(table);
    if (!t) return NULL;
    pm_err e;
    if (!id) id = tu_latest_id(t);
    pm_snapshot *s = NULL;
    char *out = NULL;
    pm_strv names = {0};
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e) == 0) {
        pm_scan *sc;
        if (pm_scan_open(t, s, NULL, &sc, &e) == 0) {
            const pm_manifest_entry *m;
            int rc;
            while ((rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) pm_strv_push(&names, m->file.file_name);
            pm_scan_close(sc);
            if (rc == PAIMON_DONE) {
                if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_str);   /* v is NULL when empty */
                pm_buf b = {0};
                for (size_t i = 0; i < names.n; i++) pm_buf_printf(&b, "%s\n", names.v[i]);
                pm_buf_cstr(&b);
                out = b.data ? (char *)b.data : pm_strdup("");
            }
        }
    }
    pm_strv_clear(&names);
    pm_snapshot_free(s);
    pm_table_free(t);
    return out;
}

/* Everything every snapshot, tag and branch needs exists and reads. */
static int complete(const char *table) {
    paimon_table *t = tu_open_table(table);
    if (!t) return 0;
    pm_verify_opts o = {1, 1, NULL, NULL};
    pm_verify_result r;
    pm_err e;
    int ok = pm_verify(t, &o, &r, &e) == 0;
    if (!ok) {
        fprintf(stderr, "  verify failed: %s\n", e.msg);
    } else {
        if (r.n_missing || r.n_unreadable || r.n_wrong_size) {
            fprintf(stderr, "  incomplete: %zu missing (first %s), %zu unreadable\n", r.n_missing,
                    r.n_missing ? r.missing[0].path : "-", r.n_unreadable);
            ok = 0;
        }
        pm_verify_result_free(&r);
    }
    pm_table_free(t);
    return ok;
}

static int purge = 1;      /* rollback_to: purge_files */

static int rollback_to(paimon_table *t, int64_t id, pm_err *e) {
    pm_rollback_opts o;
    memset(&o, 0, sizeof o);
    o.to_snapshot = id;
    o.purge_files = purge;
    o.threads = 1;
    pm_rollback_result r;
    int rc = pm_rollback(t, &o, &r, e);
    if (!rc) pm_rollback_result_free(&r);
    return rc;
}

/* A failed read fails the planning before anything changed; a crash at a
 * read leaves the state of a crash at the next mutation. So: a single
 * fault at every operation of any kind, a crash at every mutation (and
 * the existence checks of the deletion phase). */
/* "cksum size path" lines of every file but snapshot/ and tag/ files (what
 * a metadata-only rollback may remove), sorted. */
static char *files_but_meta(const char *dir) {
    char cmd[700];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && find . -type f ! -path './snapshot/*' ! -path './tag/*' -exec cksum {} + | LC_ALL=C sort -k3",
             dir);
    char *s = tu_sh_out(cmd, NULL);
    return s ? s : pm_strdup("");
}

static void fault_sweep(unsigned kinds, int crash, long stride) {
    tu_copy d;
    CHECK(tu_copy_make(&d, prefix, FIXTURE) == 0);
    char *others = purge ? NULL : files_but_meta(d.table);
    char *want = live_names(d.table, 2);
    CHECK(want != NULL && *want);
    paimon_table *t = tu_open_table(d.table);
    pm_err e;
    t->io = pm_fileio_fault_new(t->io, kinds, 0, 0);
    CHECK_EQ_INT(rollback_to(t, 2, &e), PAIMON_OK);
    long ops = pm_fileio_fault_count(t->io);
    pm_table_free(t);
    tu_copy_remove(&d, prefix);
    CHECK(ops > (purge ? 10 : 3));
    int bad = 0;
    {
        for (long k = 1; k <= ops && bad < 3; k += stride) {
            if (tu_copy_make(&d, prefix, FIXTURE)) { CHECK(0); break; }
            t = tu_open_table(d.table);
            t->io = pm_fileio_fault_new(t->io, kinds, k, crash);
            rollback_to(t, 2, &e);
            pm_table_free(t);
            /* readable, nothing retained lost, and either before or after */
            t = tu_open_table(d.table);
            int64_t latest = t ? tu_latest_id(t) : -1;
            pm_table_free(t);
            /* a snapshot file that could not be removed stops the rollback
             * on the way down: a complete snapshot in between is the latest */
            if (!complete(d.table) || latest < 2 || latest > 5) {
                fprintf(stderr, "  fault at op %ld (crash %d): latest %lld\n", k, crash, (long long)latest);
                bad++;
            }
            char *now = others ? files_but_meta(d.table) : NULL;
            if (now && strcmp(now, others)) {
                fprintf(stderr, "  fault at op %ld (crash %d): a file other than metadata changed\n", k, crash);
                bad++;
            }
            free(now);
            /* the re-run finishes the rollback */
            t = tu_open_table(d.table);
            int rc = rollback_to(t, 2, &e);
            pm_table_free(t);
            char *got = live_names(d.table, 0);
            if (rc || !got || strcmp(got, want) || !complete(d.table)) {
                fprintf(stderr, "  fault at op %ld (crash %d): re-run rc %d (%s)\n", k, crash, rc, rc ? e.msg : "");
                bad++;
            }
            free(got);
            now = others ? files_but_meta(d.table) : NULL;
            if (now && strcmp(now, others)) {
                fprintf(stderr, "  fault at op %ld (crash %d): the re-run removed a file other than metadata\n", k,
                        crash);
                bad++;
            }
            free(now);
            tu_copy_remove(&d, prefix);
        }
    }
    CHECK_EQ_INT(bad, 0);
    free(want);
    free(others);
}

TEST(rollback_survives_a_fault_at_every_io_operation) { fault_sweep(PM_FAULT_ALL, 0, 1); }

TEST(rollback_survives_a_crash_at_every_mutation) {
    fault_sweep(PM_FAULT_WRITE | PM_FAULT_CREATE | PM_FAULT_REMOVE | PM_FAULT_MKDIRS, 1, 1);
}

/* The default (Java 1.2+): only snapshot and tag files go, crash or not. */
TEST(metadata_only_rollback_survives_a_crash_at_every_mutation_and_keeps_every_file) {
    purge = 0;
    fault_sweep(PM_FAULT_WRITE | PM_FAULT_CREATE | PM_FAULT_REMOVE | PM_FAULT_MKDIRS, 1, 1);
    purge = 1;
}

/* purge_files (pm_purge_files) crashed at every mutation: the table stays
 * complete (every snapshot, tag and branch left reads whole), and running
 * it again finishes: one snapshot, no live file. */
static int purge_table(paimon_table *t, pm_err *e) {
    pm_purge_opts o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    pm_purge_result r;
    int rc = pm_purge_files(t, &o, &r, e);
    if (!rc) pm_purge_result_free(&r);
    return rc;
}

TEST(purge_survives_a_crash_at_every_mutation) {
    unsigned kinds = PM_FAULT_WRITE | PM_FAULT_CREATE | PM_FAULT_REMOVE | PM_FAULT_MKDIRS;
    tu_copy d;
    CHECK(tu_copy_make(&d, prefix, FIXTURE) == 0);
    paimon_table *t = tu_open_table(d.table);
    pm_err e;
    t->io = pm_fileio_fault_new(t->io, kinds, 0, 0);
    CHECK_EQ_INT(purge_table(t, &e), PAIMON_OK);
    long ops = pm_fileio_fault_count(t->io);
    pm_table_free(t);
    tu_copy_remove(&d, prefix);
    CHECK(ops > 20);
    int bad = 0;
    for (long k = 1; k <= ops && bad < 3; k = tu_sweep_next(k)) {
        if (tu_copy_make(&d, prefix, FIXTURE)) { CHECK(0); break; }
        t = tu_open_table(d.table);
        t->io = pm_fileio_fault_new(t->io, kinds, k, 1);
        purge_table(t, &e);
        pm_table_free(t);
        if (!complete(d.table)) {
            fprintf(stderr, "  purge crashed at op %ld: the table is not complete\n", k);
            bad++;
        }
        t = tu_open_table(d.table);
        int rc = t ? purge_table(t, &e) : -1;
        pm_table_free(t);
        char *got = live_names(d.table, 0);
        if (rc || !got || *got || !complete(d.table)) {
            fprintf(stderr, "  purge crashed at op %ld: re-run rc %d (%s), live files: %s\n", k, rc, rc ? e.msg : "",
                    got ? got : "?");
            bad++;
        }
        free(got);
        tu_copy_remove(&d, prefix);
    }
    CHECK_EQ_INT(bad, 0);
}

/* ---- a writer committing in the middle of an operation -------------------------- */

static const pm_fileio_ops *hook_inner;
static pm_fileio_ops hook_ops;
static long hook_at, hook_count;
static const char *hook_table;
static int64_t writer_id;      /* the writer's snapshot, 0: none */
static char writer_file[512];

/* One commit of one new (empty) data file in the partition and bucket of
 * the latest snapshot's first live file, through a handle of its own. */
static void writer_commit(void) {
    paimon_table *w = tu_open_table(hook_table);
    if (!w) return;
    pm_err e;
    pm_snapshot *s = tu_read_snap(w, tu_latest_id(w));
    pm_scan *sc;
    const pm_manifest_entry *m;
    if (s && pm_scan_open(w, s, NULL, &sc, &e) == 0) {
        if (pm_scan_next(sc, &m, &e) == PAIMON_OK) {
            tentry x;
            tentry_init_at(&x, m->partition.ptr, m->partition.len, m->bucket, "data-writer-0.parquet", 1,
                           pm_now_millis());
            x.m.total_buckets = m->total_buckets;
            pm_commit_opts co;
            pm_commit_opts_from_table(w, &co);
            co.commit_user = "racing-writer";
            int64_t id = 0;
            pm_buf p0 = {0};
            if (pm_data_file_full_path(w, &x.m, &p0, &e) == 0) {
                static char bytes[1234];
                tu_write_file((char *)p0.data, bytes, sizeof bytes);   /* the size the entry records */
            }
            pm_buf_free(&p0);
            if (tu_commit(w, &x.m, 1, &co, &id, &e) == 0) {
                writer_id = id;
                pm_buf p = {0};
                pm_data_file_full_path(w, &x.m, &p, &e);
                snprintf(writer_file, sizeof writer_file, "%s", (char *)p.data);
                pm_buf_free(&p);
            }
            tentry_free(&x);
        }
        pm_scan_close(sc);
    }
    pm_snapshot_free(s);
    pm_table_free(w);
}

static void tick(void) {
    if (++hook_count == hook_at) writer_commit();
}

/* Reads of the planning phase are not counted: a writer committing at any
 * of them is a writer committing before the first check (exists), which
 * the sweep covers. */
static int h_exists(pm_fileio *io, const char *p, int *x, pm_err *e) { tick(); return hook_inner->exists(io, p, x, e); }
static int h_write(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) { tick(); return hook_inner->write_atomic(io, p, d, n, e); }
static int h_create(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) { tick(); return hook_inner->create_no_replace(io, p, d, n, e); }
static int h_remove(pm_fileio *io, const char *p, pm_err *e) { tick(); return hook_inner->remove(io, p, e); }
static int h_remove_within(pm_fileio *io, const char *r, const char *rel, int f, pm_stat *s, pm_err *e) { tick(); return hook_inner->remove_within(io, r, rel, f, s, e); }

static void hook_install(paimon_table *t, long at) {
    hook_inner = t->io->ops;
    hook_ops = *hook_inner;
    hook_ops.exists = h_exists;
    hook_ops.write_atomic = h_write;
    hook_ops.create_no_replace = h_create;
    hook_ops.remove = h_remove;
    hook_ops.remove_within = h_remove_within;
    hook_ops.list_tree = NULL;      /* the generic walks go through the hooked ops */
    hook_ops.remove_batch = NULL;
    t->io->ops = &hook_ops;
    hook_at = at;
    hook_count = 0;
    writer_id = 0;
    writer_file[0] = '\0';
}

TEST(rollback_racing_a_writer_wins_or_conflicts) {
    tu_copy d;
    CHECK(tu_copy_make(&d, prefix, FIXTURE) == 0);
    char *want = live_names(d.table, 2);
    paimon_table *t = tu_open_table(d.table);
    pm_err e;
    hook_install(t, 0);
    CHECK_EQ_INT(rollback_to(t, 2, &e), PAIMON_OK);
    long ops = hook_count;
    t->io->ops = hook_inner;
    pm_table_free(t);
    tu_copy_remove(&d, prefix);
    int bad = 0, conflicts = 0, wins = 0;
    for (long k = 1; k <= ops && bad < 3; k++) {
        if (!tu_sweep_point(k, ops)) continue;
        if (tu_copy_make(&d, prefix, FIXTURE)) { CHECK(0); break; }
        hook_table = d.table;
        t = tu_open_table(d.table);
        hook_install(t, k);
        int rc = rollback_to(t, 2, &e);
        t->io->ops = hook_inner;
        pm_table_free(t);
        t = tu_open_table(d.table);
        int64_t latest = tu_latest_id(t);
        pm_table_free(t);
        int ok = (rc == PAIMON_OK || rc == PAIMON_CONFLICT) && writer_id > 0 && complete(d.table);
        if (rc == PAIMON_CONFLICT) {
            conflicts++;
            /* the writer's snapshot is the latest and whole */
            ok = ok && latest == writer_id && tu_file_exists(writer_file);
        } else if (rc == PAIMON_OK) {
            wins++;
            /* the writer came first (its snapshot rolled back too) or after
             * the rollback, on top of snapshot 2 */
            char *at2 = live_names(d.table, 2);
            ok = ok && at2 && !strcmp(at2, want) && (latest == 2 || (latest == 3 && writer_id == 3 &&
                                                                     tu_file_exists(writer_file)));
            free(at2);
        }
        if (!ok) {
            fprintf(stderr, "  writer at op %ld: rc %d (%s), writer snapshot %lld, latest %lld\n", k, rc,
                    rc ? e.msg : "", (long long)writer_id, (long long)latest);
            bad++;
        }
        tu_copy_remove(&d, prefix);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(conflicts > 0);
    CHECK(wins > 0);
    free(want);
}

TEST(rollback_as_latest_loses_to_a_racing_writer_cleanly) {
    tu_copy d;
    CHECK(tu_copy_make(&d, prefix, FIXTURE) == 0);
    hook_table = d.table;
    paimon_table *t = tu_open_table(d.table);
    pm_err e;
    /* the writer commits at the first creation of a manifest (the rollback
     * read latest 5 before) */
    hook_install(t, 0);
    pm_rollback_opts o;
    memset(&o, 0, sizeof o);
    o.to_snapshot = 2;
    o.as_latest = 1;
    o.dry_run = 1;
    pm_rollback_result r;
    CHECK_EQ_INT(pm_rollback(t, &o, &r, &e), PAIMON_OK);
    long plan_ops = hook_count;
    pm_rollback_result_free(&r);
    t->io->ops = hook_inner;
    hook_install(t, plan_ops + 1);
    o.dry_run = 0;
    int rc = pm_rollback(t, &o, &r, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "another commit came first") != NULL);
    CHECK_EQ_INT((int)writer_id, 6);
    t->io->ops = hook_inner;
    CHECK_EQ_INT((int)tu_latest_id(t), 6);
    /* nothing of ours landed: the protection tag made before the commit
     * is gone again (Java RollbackToAsLatestProcedure deletes it then) */
    char **tags = NULL;
    size_t n_tags = 0;
    CHECK_EQ_INT(pm_tag_list(t->io, t->branch_root, &tags, &n_tags, &e), PAIMON_OK);
    CHECK_EQ_INT((int)n_tags, 1);
    if (n_tags == 1) CHECK_EQ_STR(tags[0], "fallback-base");
    pm_strv_free(tags, n_tags);
    pm_table_free(t);
    CHECK(complete(d.table));
    tu_copy_remove(&d, prefix);
}

/* A writer that read latest 5 publishes snapshot 6 only after a rollback
 * to 2 removed snapshots 3-5 and then their files (found by
 * spec/c/test_kill9.c: the writer's snapshot named manifests the rollback
 * had deleted). The writer must notice that its base was rolled back (a
 * snapshot below it is still there: not expiration, which removes
 * ascending), take its snapshot back and commit again on top of 2. */
static const pm_fileio_ops *late_inner;
static pm_fileio_ops late_ops;
static int late_fired;

static int late_create(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    if (!late_fired && strstr(p, "/snapshot/snapshot-")) {
        late_fired = 1;
        paimon_table *r = tu_open_table(hook_table);
        pm_err re;
        if (!r || rollback_to(r, 2, &re)) fprintf(stderr, "  rollback under the writer failed\n");
        pm_table_free(r);
    }
    return late_inner->create_no_replace(io, p, d, n, e);
}

TEST(writer_publishing_on_a_rolled_back_base_commits_again_on_the_target) {
    tu_copy d;
    CHECK(tu_copy_make(&d, prefix, FIXTURE) == 0);
    hook_table = d.table;
    paimon_table *w = tu_open_table(d.table);
    pm_err e;
    pm_snapshot *s = tu_read_snap(w, 5);
    pm_scan *sc;
    const pm_manifest_entry *m;
    CHECK(s && pm_scan_open(w, s, NULL, &sc, &e) == 0 && pm_scan_next(sc, &m, &e) == PAIMON_OK);
    tentry x;
    tentry_init_at(&x, m->partition.ptr, m->partition.len, m->bucket, "data-late-writer.parquet", 1, pm_now_millis());
    x.m.total_buckets = m->total_buckets;
    pm_scan_close(sc);
    pm_snapshot_free(s);
    pm_buf p = {0};
    static char bytes[1234];
    CHECK(pm_data_file_full_path(w, &x.m, &p, &e) == 0 && tu_write_file((char *)p.data, bytes, sizeof bytes) == 0);
    late_inner = w->io->ops;
    late_ops = *late_inner;
    late_ops.create_no_replace = late_create;
    w->io->ops = &late_ops;
    late_fired = 0;
    pm_commit_opts co;
    pm_commit_opts_from_table(w, &co);
    co.commit_user = "late-writer";
    int64_t id = 0;
    int rc = pm_commit(w, &x.m, 1, &co, &id, &e);
    if (rc) fprintf(stderr, "  %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK(late_fired);
    w->io->ops = late_inner;
    /* on top of the target, and nothing names what the rollback deleted */
    CHECK_EQ_INT(id, 3);
    CHECK_EQ_INT(tu_latest_id(w), 3);
    char snap6[600];
    snprintf(snap6, sizeof snap6, "%s/snapshot/snapshot-6", d.table);
    CHECK(!tu_file_exists(snap6));
    CHECK(complete(d.table));
    char *live = live_names(d.table, 0);
    CHECK(live && strstr(live, "data-late-writer.parquet\n"));
    free(live);
    pm_buf_free(&p);
    tentry_free(&x);
    pm_table_free(w);
    tu_copy_remove(&d, prefix);
}

int main(void) {
    snprintf(prefix, sizeof prefix, "%s/pm_test_rollback.", tu_tmp_base());
    RUN(rollback_survives_a_fault_at_every_io_operation);
    RUN(rollback_survives_a_crash_at_every_mutation);
    RUN(metadata_only_rollback_survives_a_crash_at_every_mutation_and_keeps_every_file);
    RUN(purge_survives_a_crash_at_every_mutation);
    RUN(rollback_racing_a_writer_wins_or_conflicts);
    RUN(rollback_as_latest_loses_to_a_racing_writer_cleanly);
    RUN(writer_publishing_on_a_rolled_back_base_commits_again_on_the_target);
    return TEST_SUMMARY();
}
