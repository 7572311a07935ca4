/* paimon_interrupt (SIGINT/SIGTERM in paimon-lua) in the middle of a
 * deletion phase (issue 24, defect 8): deletions slowed down by the fault
 * FileIO so that the interruption lands while the data files go.
 * Expiration stops the data phase between deletions, still removes the
 * range's snapshot files and moves EARLIEST: every snapshot left reads
 * whole; the manifests and lists left are exactly what orphan cleaning
 * then takes (the data files left stay named in retained manifests).
 * Orphan cleaning stops between deletions; a re-run finishes. */
#include "test.h"
#include "test_util.h"
#include "pm_expire.h"
#include "pm_fileio_fault.h"
#include "pm_orphan.h"
#include "pm_verify.h"

#define TMP_PREFIX "/tmp/pm_test_interrupt."
#define N 400   /* data files the expiration deletes */

/* dir/t: snapshot 1 adds N files (partitions a=x/b=1..N), snapshot 2 drops
 * them all, snapshot 3 adds one more; built through paimon-lua. */
static int build(const char *dir) {
    char script[600], cmd[1600];
    snprintf(script, sizeof script, "%s/build.lua", dir);
    char lua[1200];
    snprintf(lua, sizeof lua,
             "local paimon = require 'paimon'\n"
             "local t = assert(paimon.create_table(arg[1], {fields = {{name = 'a', type = 'STRING'},\n"
             "  {name = 'b', type = 'INT'}, {name = 'v', type = 'INT'}}, partition_keys = {'a', 'b'}, options = {['file.format'] = 'avro'}}))\n"
             "local function commit(rows)\n"
             "  local w = assert(t:new_write{})\n"
             "  for _, r in ipairs(rows) do w:write(r) end\n"
             "  assert(t:new_commit{commit_user = 'u'}:commit(assert(w:prepare_commit())))\n"
             "  w:close()\n"
             "end\n"
             "local rows = {}\n"
             "for i = 1, %d do rows[i] = {a = 'x', b = i, v = i} end\n"
             "commit(rows)\n"
             "assert(t:drop_partitions({{a = 'x'}}))\n"
             "commit({{a = 'y', b = 0, v = 0}})\n", N);
    if (tu_write_file(script, lua, strlen(lua))) return -1;
    const char *b = getenv("PAIMON_BUILD");
    snprintf(cmd, sizeof cmd, "'%s/paimon-lua' '%s' '%s/t'", b ? b : "build", script, dir);
    return tu_sh(cmd);
}

static long count_files(const char *dir, const char *name_glob) {
    char cmd[800];
    snprintf(cmd, sizeof cmd, "find '%s/t' -type f -name '%s' | wc -l", dir, name_glob);
    int st;
    char *out = tu_sh_out(cmd, &st);
    long n = out ? atol(out) : -1;
    free(out);
    return n;
}

typedef struct interrupter { const char *phase; int fired; } interrupter;

/* progress (every 100 ms at most): interrupt once the phase has begun */
static void interrupt_in_phase(void *ud, const char *phase, size_t done, size_t total) {
    interrupter *x = ud;
    if (!x->fired && strcmp(phase, x->phase) == 0 && done > 0 && done < total) {
        x->fired = 1;
        paimon_interrupt();
    }
}

static void check_whole(paimon_table *t) {
    pm_verify_opts vo;
    memset(&vo, 0, sizeof vo);
    vo.all_snapshots = 1;
    pm_verify_result vr;
    pm_err e;
    CHECK_EQ_INT(pm_verify(t, &vo, &vr, &e), PAIMON_OK);
    CHECK_EQ_INT(vr.n_missing, 0);
    CHECK_EQ_INT(vr.n_unreadable, 0);
    pm_verify_result_free(&vr);
}

TEST(expiration_stops_between_data_files) {
    char *dir = tu_make_tmpdir(TMP_PREFIX);
    CHECK(dir && build(dir) == 0);
    if (!dir) return;
    char path[600];
    snprintf(path, sizeof path, "%s/t", dir);
    paimon_table *t = tu_open_table(path);
    CHECK(t != NULL);
    if (!t) { tu_rm_rf(dir); free(dir); return; }
    CHECK_EQ_INT(count_files(dir, "data-*"), N + 1);
    /* 2 ms a deletion, one file a task: the data phase takes ~0.4 s */
    t->io = pm_fileio_fault_new(t->io, PM_FAULT_REMOVE, 0, 0);
    pm_fileio_fault_set_delay(t->io, PM_FAULT_REMOVE, 2000);
    interrupter x = {"data files", 0};
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    usleep(5000);
    o.older_than_ms = pm_now_millis();
    o.threads = 2;
    o.progress = interrupt_in_phase;
    o.progress_ud = &x;
    pm_expire_result r;
    pm_err e;
    CHECK(!paimon_interruptible());
    int rc = pm_expire_snapshots(t, &o, &r, &e);
    CHECK(!paimon_interruptible());
    t->io = pm_fileio_fault_release(t->io);
    CHECK(x.fired);
    CHECK_EQ_INT(rc, PAIMON_INTERRUPT);
    printf("# %s\n", e.msg);
    CHECK(strstr(e.msg, "interrupted: snapshots [1, 3) expired (2), every snapshot left is whole; not deleted: ") != NULL);
    const char *n = strstr(e.msg, "not deleted: ");
    long meta_left = n ? atol(n + 13) : -1;
    n = strstr(e.msg, "removes them) and ");
    long msg_data_left = n ? atol(n + 18) : -1;
    long data_left = count_files(dir, "data-*") - 1;
    CHECK(data_left > 0 && data_left < N);               /* stopped in the middle of the data phase */
    CHECK_EQ_INT(msg_data_left, data_left);
    CHECK(meta_left > 0);                                /* and the manifests and lists after it */
    snprintf(path, sizeof path, "%s/t/snapshot/snapshot-1", dir);
    CHECK(!tu_file_exists(path));
    snprintf(path, sizeof path, "%s/t/snapshot/snapshot-2", dir);
    CHECK(!tu_file_exists(path));
    check_whole(t);
    /* orphan cleaning takes the manifests and lists left; the data files
     * stay named (DELETE entries) in snapshot 3's base manifests */
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.has_older_than = 1;
    oo.older_than_ms = pm_now_millis();
    oo.allow_young_cutoff = 1;
    oo.threads = 2;
    pm_orphan_result orr;
    CHECK_EQ_INT(pm_remove_orphan_files(t, &oo, &orr, &e), PAIMON_OK);
    int64_t gone = 0;
    for (int k = 0; k < PM_K__N; k++) gone += orr.clean.count[k];
    CHECK_EQ_INT(gone, meta_left);
    CHECK_EQ_INT(orr.clean.count[PM_K_DATA], 0);
    pm_clean_result_free(&orr.clean);
    check_whole(t);
    /* the flag ended with the interrupted run */
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    CHECK_EQ_INT(pm_expire_snapshots(t, &o, &r, &e), PAIMON_OK);
    pm_clean_result_free(&r.clean);
    pm_table_free(t);
    tu_rm_rf(dir);
    free(dir);
}

TEST(orphan_cleaning_stops_between_deletions) {
    char *dir = tu_make_tmpdir(TMP_PREFIX);
    CHECK(dir && build(dir) == 0);
    if (!dir) return;
    char path[600], cmd[900];
    snprintf(cmd, sizeof cmd, "cd '%s/t/a=y/b=0/bucket-0' && seq 1 %d | sed 's/^/data-orphan-/; s/$/.avro/' | "
             "xargs touch -d '2 days ago'", dir, N);
    CHECK(tu_sh(cmd) == 0);
    snprintf(path, sizeof path, "%s/t", dir);
    paimon_table *t = tu_open_table(path);
    CHECK(t != NULL);
    if (!t) { tu_rm_rf(dir); free(dir); return; }
    t->io = pm_fileio_fault_new(t->io, PM_FAULT_REMOVE, 0, 0);
    pm_fileio_fault_set_delay(t->io, PM_FAULT_REMOVE, 2000);
    interrupter x = {"deleting", 0};
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.threads = 2;
    oo.progress = interrupt_in_phase;
    oo.progress_ud = &x;
    pm_orphan_result orr;
    pm_err e;
    int rc = pm_remove_orphan_files(t, &oo, &orr, &e);
    t->io = pm_fileio_fault_release(t->io);
    CHECK(x.fired);
    CHECK_EQ_INT(rc, PAIMON_INTERRUPT);
    printf("# %s\n", e.msg);
    const char *m = strstr(e.msg, "interrupted: ");
    long done = m ? atol(m + 13) : -1, all = -1;
    const char *of = strstr(e.msg, " of ");
    if (of) all = atol(of + 4);
    CHECK_EQ_INT(all, N);
    CHECK(done > 0 && done < N);
    CHECK(strstr(e.msg, "orphan file(s) deleted; run again to finish") != NULL);
    CHECK_EQ_INT(count_files(dir, "data-orphan-*"), N - done);
    check_whole(t);
    memset(&oo, 0, sizeof oo);
    oo.threads = 2;
    CHECK_EQ_INT(pm_remove_orphan_files(t, &oo, &orr, &e), PAIMON_OK);
    CHECK_EQ_INT(orr.clean.count[PM_K_DATA], N - done);
    pm_clean_result_free(&orr.clean);
    CHECK_EQ_INT(count_files(dir, "data-orphan-*"), 0);
    check_whole(t);
    pm_table_free(t);
    tu_rm_rf(dir);
    free(dir);
}

int main(void) {
    RUN(expiration_stops_between_data_files);
    RUN(orphan_cleaning_stops_between_deletions);
    return TEST_SUMMARY();
}
