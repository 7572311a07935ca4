/* What maintenance (expiration, orphan cleaning, the deleter) protects at
 * the edges, each on a temp copy of a Java-written table:
 *  - expiration keeps what a long-lived changelog (changelog/changelog-<id>)
 *    of the branch or of another branch still reads;
 *  - orphan cleaning accepts a long-lived changelog whose base / delta
 *    list or index manifest Java already deleted (and still keeps what its
 *    remaining lists name);
 *  - a consumer at nextSnapshot 0 caps the range (it was overwritten by
 *    the next consumer read);
 *  - a tag replaced under the same name, or a consumer moved back below
 *    the new earliest, while the expiration plans: conflict, nothing gone;
 *  - a cut-off in the future is refused by the real clock even when the
 *    caller passes a future `now`;
 *  - a gap (snapshots deleted by hand) right at the end of the range no
 *    longer stalls every run; one below the end strands nothing under it;
 *  - the deleter's stop-on-failure mode also stops after a path that is a
 *    directory (the snapshot phase must never leave a gap). */
#include "test.h"
#include "pm_expire.h"
#include "pm_orphan.h"
#include "pm_verify.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define PK "cpp-parquet-pk_table_scan_and_read_dv/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv"
#define RT "cpp-parquet-append_table_row_tracking_with_compact/append_table_row_tracking_with_compact.db/append_table_row_tracking_with_compact"
#include "pm_fileio.h"

#define TAGGED "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"

typedef tu_copy tdir;

#define TMP_PREFIX "/tmp/pm_test_review."

static int tdir_make(tdir *d, const char *fixture) { return tu_copy_make(d, TMP_PREFIX, fixture); }

static void tdir_remove(tdir *d) { tu_copy_remove(d, TMP_PREFIX); }

static int expire_all(paimon_table *t, pm_expire_result *res, pm_err *e) {
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 1000;
    o.threads = 2;
    return pm_expire_snapshots(t, &o, res, e);
}

/* Full paths of the files added by the delta manifests of snapshot id of
 * branch root br (read before anything is expired), "\n"-separated. */
static char *delta_adds(paimon_table *t, const char *br, int64_t id) {
    pm_err e;
    pm_snapshot *s = NULL;
    pm_buf out = {0}, b = {0};
    if (pm_snapshot_read(t->io, br, id, &s, &e)) return NULL;
    pm_mfile *v = NULL;
    size_t n = 0;
    int rc = pm_read_manifest_list(t, s->delta_manifest_list, &v, &n, &e);
    for (size_t i = 0; !rc && i < n; i++) {
        pm_manifest_reader *r;
        if ((rc = pm_table_open_manifest(t, v[i].name, PM_MANIFEST_FILE, &r, &e))) break;
        const pm_manifest_entry *m;
        while ((rc = pm_manifest_next_entry(r, &m, &e)) == PAIMON_OK) {
            if (m->kind != PM_FILE_ADD) continue;
            if ((rc = pm_data_file_full_path(t, m, &b, &e))) break;
            pm_buf_printf(&out, "%s\n", (char *)b.data);
        }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    pm_mfiles_free(v, n);
    pm_snapshot_free(s);
    pm_buf_free(&b);
    pm_buf_cstr(&out);
    if (rc) { pm_buf_free(&out); return NULL; }
    return (char *)out.data;
}

/* How many of the "\n"-separated paths exist. */
static int count_existing(const char *paths, int *total) {
    int n = 0;
    *total = 0;
    char line[1024];
    for (const char *p = paths; *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l < sizeof line) {
            memcpy(line, p, l);
            line[l] = 0;
            (*total)++;
            n += tu_file_exists(line);
        }
        p += l + (nl != NULL);
    }
    return n;
}

/* ---- expiration: long-lived changelogs protect their files ------------------------ */

/* Snapshot 1 of the row-tracking fixture is an APPEND whose files a later
 * COMPACT deletes. As changelog-1 (the file Java writes when it moves an
 * expired snapshot to changelog/) streaming readers still read them. */
static void changelog_protects(int in_branch) {
    tdir d;
    CHECK(tdir_make(&d, RT) == 0);
    char cmd[1400];
    if (in_branch) {
        /* a branch whose snapshot 1 moved to changelog/; its snapshot 4 (the
         * COMPACT) no longer has those files */
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && mkdir -p branch/branch-b/snapshot branch/branch-b/changelog branch/branch-b/schema && "
                 "cp schema/schema-0 branch/branch-b/schema/ && cp snapshot/snapshot-1 branch/branch-b/changelog/changelog-1 && "
                 "cp snapshot/snapshot-4 branch/branch-b/snapshot/snapshot-4 && "
                 "printf 4 > branch/branch-b/snapshot/EARLIEST && printf 4 > branch/branch-b/snapshot/LATEST",
                 d.table);
    } else {
        snprintf(cmd, sizeof cmd, "cd '%s' && mkdir -p changelog && cp snapshot/snapshot-1 changelog/changelog-1",
                 d.table);
    }
    CHECK(tu_sh(cmd) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    char *adds = delta_adds(t, t->root, 1);
    CHECK(adds != NULL);
    int total = 0;
    CHECK_EQ_INT(count_existing(adds ? adds : "", &total), total);
    CHECK(total > 0);
    pm_expire_result r;
    int rc = expire_all(t, &r, &e);
    if (rc) fprintf(stderr, "  expire: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) {
        CHECK_EQ_INT(r.expired, 3);
        CHECK(r.clean.protected_files > 0);
        pm_clean_result_free(&r.clean);
    }
    /* every file changelog-1 reads is still there, and its delta list */
    int left = count_existing(adds ? adds : "", &total);
    CHECK_EQ_INT(left, total);
    pm_snapshot *s1 = NULL;
    char cl[400];
    snprintf(cl, sizeof cl, "%s/%schangelog/changelog-1", d.table, in_branch ? "branch/branch-b/" : "");
    {
        pm_buf b = {0};
        CHECK_EQ_INT(pm_io_read_all(t->io, cl, &b, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_snapshot_parse((char *)b.data, b.len, cl, &s1, &e), PAIMON_OK);
        pm_buf_free(&b);
    }
    if (s1) {
        char *lp = pm_table_manifest_path(t, s1->delta_manifest_list);
        CHECK(lp && tu_file_exists(lp));
        free(lp);
        pm_snapshot_free(s1);
    }
    free(adds);
    pm_table_free(t);
    tdir_remove(&d);
}

/* Without the changelog the same run deletes those files: the test above
 * is meaningful. */
TEST(without_a_changelog_the_files_go) {
    tdir d;
    CHECK(tdir_make(&d, RT) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    char *adds = delta_adds(t, t->root, 1);
    CHECK(adds != NULL);
    pm_expire_result r;
    CHECK_EQ_INT(expire_all(t, &r, &e), PAIMON_OK);
    pm_clean_result_free(&r.clean);
    int total = 0;
    CHECK(count_existing(adds ? adds : "", &total) < total);
    free(adds);
    pm_table_free(t);
    tdir_remove(&d);
}

TEST(expire_keeps_what_a_long_lived_changelog_reads) { changelog_protects(0); }
TEST(expire_keeps_what_a_branch_changelog_reads) { changelog_protects(1); }

TEST(expire_refuses_a_corrupt_changelog) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd '%s' && mkdir -p changelog && printf '{bad' > changelog/changelog-1", d.table);
    CHECK(tu_sh(cmd) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result r;
    int rc = expire_all(t, &r, &e);
    CHECK(rc != PAIMON_OK);
    if (rc) CHECK(strstr(e.msg, "changelog-1") != NULL);
    else pm_clean_result_free(&r.clean);
    char p[400];
    snprintf(p, sizeof p, "%s/snapshot/snapshot-1", d.table);
    CHECK(tu_file_exists(p));
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- expiration range: a consumer at nextSnapshot 0 ------------------------------- */

TEST(a_consumer_at_zero_stops_everything) {
    tdir d;
    CHECK(tdir_make(&d, RT) == 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p consumer && printf '{\"nextSnapshot\" : 0}' > consumer/consumer-a && "
             "printf '{\"nextSnapshot\" : 4}' > consumer/consumer-b && grep -q nextSnapshot consumer/consumer-a",
             d.table);
    CHECK(tu_sh(cmd) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 100;
    pm_expire_range r;
    int rc0 = pm_expire_compute_range(t, &o, &r, &e);
    if (rc0) fprintf(stderr, "  range: %s\n", e.msg);
    CHECK_EQ_INT(rc0, PAIMON_OK);
    CHECK_EQ_INT(r.consumer_min, 0);
    CHECK_EQ_INT(r.hard_end, r.earliest);
    CHECK_EQ_INT(r.end, r.earliest);
    CHECK_EQ_STR(r.capped_by, "consumer");
    pm_expire_result res;
    CHECK_EQ_INT(pm_expire_snapshots(t, &o, &res, &e), PAIMON_OK);
    CHECK_EQ_INT(res.expired, 0);
    pm_clean_result_free(&res.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- refs changed while planning: a replaced tag, a consumer moved back -------------- */

/* FileIO wrapper running a shell command at the second listing of tag/
 * (while the expiration plans: after its first fingerprint). */
typedef struct hook_io { pm_fileio io; pm_fileio *inner; int tag_lists; char cmd[900]; } hook_io;
static pm_fileio_ops hook_ops;

static int hook_list(pm_fileio *io, const char *p, pm_dirent **o, size_t *n, pm_err *e) {
    hook_io *h = (hook_io *)io;
    size_t l = strlen(p);
    if (l >= 4 && !strcmp(p + l - 4, "/tag") && ++h->tag_lists == 2) tu_sh(h->cmd);
    return pm_io_list(h->inner, p, o, n, e);
}
static int hook_read(pm_fileio *io, const char *p, pm_buf *o, pm_err *e) { return pm_io_read_all(((hook_io *)io)->inner, p, o, e); }
static int hook_stat(pm_fileio *io, const char *p, pm_stat *s, pm_err *e) { return pm_io_stat(((hook_io *)io)->inner, p, s, e); }
static int hook_exists(pm_fileio *io, const char *p, int *x, pm_err *e) { return pm_io_exists(((hook_io *)io)->inner, p, x, e); }
static int hook_write(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) { return pm_io_write_atomic(((hook_io *)io)->inner, p, d, n, e); }
static int hook_create(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) { return pm_io_create_no_replace(((hook_io *)io)->inner, p, d, n, e); }
static int hook_remove(pm_fileio *io, const char *p, pm_err *e) { return pm_io_remove(((hook_io *)io)->inner, p, e); }
static int hook_remove_within(pm_fileio *io, const char *r, const char *p, int dry, pm_stat *s, pm_err *e) { return pm_io_remove_within(((hook_io *)io)->inner, r, p, dry, s, e); }
static int hook_mkdirs(pm_fileio *io, const char *p, pm_err *e) { return pm_io_mkdirs(((hook_io *)io)->inner, p, e); }
static void hook_destroy(pm_fileio *io) { pm_fileio_destroy(((hook_io *)io)->inner); free(io); }

/* Expire everything while `during` runs mid-planning: a conflict, and no
 * data file, manifest or snapshot is gone. */
static void changed_while_planning(const char *setup, const char *during, const char *want_msg) {
    tdir d;
    CHECK(tdir_make(&d, TAGGED) == 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s", d.table, setup);
    CHECK(tu_sh(cmd) == 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && find . -type f ! -path './tag/*' ! -path './consumer/*' | sort", d.table);
    FILE *f = popen(cmd, "r");
    char before[20000] = "", after[20000] = "";
    if (f) { size_t k = fread(before, 1, sizeof before - 1, f); before[k] = 0; pclose(f); }
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    hook_ops = (pm_fileio_ops){"file", hook_read, hook_list, hook_stat, hook_exists, hook_write, hook_create,
                               hook_remove, hook_remove_within, hook_mkdirs, hook_destroy, PM_IO_LOCAL, NULL, NULL};
    hook_io *h = calloc(1, sizeof *h);
    h->io.ops = &hook_ops;
    h->inner = t->io;
    snprintf(h->cmd, sizeof h->cmd, "cd '%s' && sleep 0.05 && %s", d.table, during);
    t->io = &h->io;
    pm_expire_result res;
    int rc = expire_all(t, &res, &e);
    if (rc) fprintf(stderr, "  # %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    if (rc) CHECK(strstr(e.msg, want_msg) != NULL);
    else pm_clean_result_free(&res.clean);
    CHECK(h->tag_lists >= 2);
    f = popen(cmd, "r");
    if (f) { size_t k = fread(after, 1, sizeof after - 1, f); after[k] = 0; pclose(f); }
    CHECK_EQ_STR(after, before);
    pm_table_free(t);
    tdir_remove(&d);
}

TEST(a_tag_replaced_while_planning_aborts) {
    changed_while_planning("true", "cp snapshot/snapshot-1 tag/tag-fallback-base", "changed");
}

TEST(a_consumer_moved_back_while_planning_aborts) {
    changed_while_planning("mkdir -p consumer && printf '{\"nextSnapshot\" : 5}' > consumer/consumer-r",
                           "printf '{\"nextSnapshot\" : 1}' > consumer/consumer-r", "consumer 'r' moved");
}

/* ---- a cut-off in the future, with a caller's `now` in the future too --------------- */

TEST(future_cutoff_refused_by_the_real_clock) {
    tdir d;
    CHECK(tdir_make(&d, RT) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    int64_t later = pm_now_millis() + 3600000;
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.has_older_than = 1;
    oo.older_than_ms = later;
    oo.now_ms = later;
    oo.dry_run = 1;
    pm_orphan_result orr;
    int rc = pm_remove_orphan_files(t, &oo, &orr, &e);
    CHECK_EQ_INT(rc, PAIMON_MISUSE);
    if (!rc) pm_clean_result_free(&orr.clean);
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    o.older_than_ms = later;
    o.now_ms = later;
    o.dry_run = 1;
    pm_expire_result er;
    rc = pm_expire_snapshots(t, &o, &er, &e);
    CHECK_EQ_INT(rc, PAIMON_MISUSE);
    if (!rc) pm_clean_result_free(&er.clean);
    /* the default cut-off (now - snapshot.time-retained) with a future now */
    o.has_older_than = 0;
    o.now_ms = later + 7200000;
    rc = pm_expire_snapshots(t, &o, &er, &e);
    CHECK_EQ_INT(rc, PAIMON_MISUSE);
    if (!rc) pm_clean_result_free(&er.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- a gap at the end of the range ------------------------------------------------- */

/* Snapshot 3 of 4 deleted by hand; the expire limit (2) ends the range at
 * the gap: snapshots 1 and 2 expire, 4 becomes the earliest (the run used
 * to refuse forever: "snapshot 3 (the new earliest) is missing"). */
TEST(a_gap_at_the_end_of_the_range_does_not_stall) {
    tdir d;
    CHECK(tdir_make(&d, RT) == 0);
    char p3[300], p1[300], p2[300], p4[300];
    snprintf(p1, sizeof p1, "%s/snapshot/snapshot-1", d.table);
    snprintf(p2, sizeof p2, "%s/snapshot/snapshot-2", d.table);
    snprintf(p3, sizeof p3, "%s/snapshot/snapshot-3", d.table);
    snprintf(p4, sizeof p4, "%s/snapshot/snapshot-4", d.table);
    CHECK(unlink(p3) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    char *live4 = NULL;
    {
        /* files of snapshot 4 (all its base + delta adds minus deletes are a
         * subset of what scanning reports; checked through the scan API) */
        pm_snapshot *s4 = NULL;
        CHECK_EQ_INT(pm_snapshot_read(t->io, t->root, 4, &s4, &e), PAIMON_OK);
        pm_scan *sc = NULL;
        pm_buf out = {0}, b = {0};
        if (s4 && pm_scan_open(t, s4, NULL, &sc, &e) == PAIMON_OK) {
            const pm_manifest_entry *m;
            while (pm_scan_next(sc, &m, &e) == PAIMON_OK)
                if (pm_data_file_full_path(t, m, &b, &e) == PAIMON_OK) pm_buf_printf(&out, "%s\n", (char *)b.data);
            pm_scan_close(sc);
        }
        pm_buf_free(&b);
        pm_snapshot_free(s4);
        pm_buf_cstr(&out);
        live4 = (char *)out.data;
    }
    CHECK(live4 != NULL && *live4);
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 2;
    pm_expire_result r;
    int rc = pm_expire_snapshots(t, &o, &r, &e);
    if (rc) fprintf(stderr, "  # %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) {
        CHECK_EQ_INT(r.range.begin, 1);
        CHECK_EQ_INT(r.range.end, 4);
        pm_clean_result_free(&r.clean);
    }
    CHECK(!tu_file_exists(p1));
    CHECK(!tu_file_exists(p2));
    CHECK(tu_file_exists(p4));
    int total = 0;
    CHECK_EQ_INT(count_existing(live4 ? live4 : "", &total), total);
    int64_t earliest = 0;
    CHECK_EQ_INT(pm_snapshot_earliest_id(t->io, t->root, &earliest, &e), PAIMON_OK);
    CHECK_EQ_INT(earliest, 4);
    free(live4);
    pm_table_free(t);
    tdir_remove(&d);
}

/* Snapshot 2 of 4 lost in the middle (issue 12): every existing snapshot
 * below the end expires, as Java 2.0 does (begin stays at the earliest).
 * Starting above the gap left snapshot 1 and its manifest lists stranded
 * under EARLIEST while the later deltas deleted its data files, and
 * `verify --all-snapshots` then reported it broken. */
TEST(a_gap_below_the_end_strands_nothing) {
    tdir d;
    CHECK(tdir_make(&d, RT) == 0);
    char p[4][300];
    for (int i = 0; i < 4; i++) snprintf(p[i], sizeof p[i], "%s/snapshot/snapshot-%d", d.table, i + 1);
    CHECK(unlink(p[1]) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    char *live4 = delta_adds(t, t->root, 4);   /* not all of 4's files; its whole scan is checked by verify below */
    pm_snapshot *s1 = NULL;
    CHECK_EQ_INT(pm_snapshot_read(t->io, t->root, 1, &s1, &e), PAIMON_OK);
    char l1[2][600];
    snprintf(l1[0], sizeof l1[0], "%s/manifest/%s", d.table, s1 ? s1->base_manifest_list : "?");
    snprintf(l1[1], sizeof l1[1], "%s/manifest/%s", d.table, s1 ? s1->delta_manifest_list : "?");
    pm_snapshot_free(s1);
    CHECK(tu_file_exists(l1[0]) && tu_file_exists(l1[1]));
    pm_expire_result r;
    int rc = expire_all(t, &r, &e);
    if (rc) fprintf(stderr, "  # %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) {
        CHECK_EQ_INT(r.range.begin, 1);
        CHECK_EQ_INT(r.range.end, 4);
        pm_clean_result_free(&r.clean);
    }
    CHECK(!tu_file_exists(p[0]));      /* below the gap: expired too */
    CHECK(!tu_file_exists(p[2]));
    CHECK(tu_file_exists(p[3]));
    CHECK(!tu_file_exists(l1[0]));     /* and its manifest lists with it */
    CHECK(!tu_file_exists(l1[1]));
    int64_t earliest = 0;
    CHECK_EQ_INT(pm_snapshot_earliest_id(t->io, t->root, &earliest, &e), PAIMON_OK);
    CHECK_EQ_INT(earliest, 4);
    int total = 0;
    CHECK_EQ_INT(count_existing(live4 ? live4 : "", &total), total);
    /* every snapshot left is whole */
    pm_verify_opts vo;
    memset(&vo, 0, sizeof vo);
    vo.all_snapshots = 1;
    pm_verify_result vr;
    CHECK_EQ_INT(pm_verify(t, &vo, &vr, &e), PAIMON_OK);
    CHECK_EQ_INT(vr.snapshots, 1);
    CHECK_EQ_INT(vr.n_missing, 0);
    CHECK_EQ_INT(vr.n_unreadable, 0);
    pm_verify_result_free(&vr);
    free(live4);
    pm_table_free(t);
    tdir_remove(&d);
}

/* A consumer waiting at the missing snapshot 3 caps the range there: 1 and
 * 2 expire, no conflict (it reads nothing we delete). */
TEST(a_consumer_at_a_gap_is_no_conflict) {
    tdir d;
    CHECK(tdir_make(&d, RT) == 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm snapshot/snapshot-3 && mkdir -p consumer && printf '{\"nextSnapshot\" : 3}' > consumer/consumer-c",
             d.table);
    CHECK(tu_sh(cmd) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result r;
    int rc = expire_all(t, &r, &e);
    if (rc) fprintf(stderr, "  # %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) {
        CHECK_EQ_INT(r.range.end, 4);
        CHECK_EQ_STR(r.range.capped_by, "consumer");
        pm_clean_result_free(&r.clean);
    }
    char p2[300], p4[300];
    snprintf(p2, sizeof p2, "%s/snapshot/snapshot-2", d.table);
    snprintf(p4, sizeof p4, "%s/snapshot/snapshot-4", d.table);
    CHECK(!tu_file_exists(p2));
    CHECK(tu_file_exists(p4));
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- orphan cleaning: changelogs whose lists Java already deleted ------------------- */

static int orphan_clean(paimon_table *t, int dry_run, pm_orphan_result *r, pm_err *e) {
    pm_orphan_opts o;
    memset(&o, 0, sizeof o);
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.allow_young_cutoff = 1;   /* below the 1 h floor on purpose */
    o.threads = 2;
    o.dry_run = dry_run;
    return pm_remove_orphan_files(t, &o, r, e);
}

/* changelog-1 naming a base list, an index manifest and statistics that
 * are gone (Java deletes them when it moves an APPEND snapshot without a
 * changelog producer to changelog/), and the real delta list. */
TEST(orphan_accepts_a_changelog_whose_base_list_is_gone) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p changelog && "
             "sed -e 's/\"baseManifestList\" : \"[^\"]*\"/\"baseManifestList\" : \"manifest-list-gone-0\"/' "
             "-e 's/\"commitKind\"/\"indexManifest\" : \"index-manifest-gone-0\",\\n  \"commitKind\"/' "
             "snapshot/snapshot-1 > changelog/changelog-1 && grep -q manifest-list-gone-0 changelog/changelog-1 && "
             "grep -q index-manifest-gone-0 changelog/changelog-1 && sleep 1",
             d.table);
    CHECK(tu_sh(cmd) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_orphan_result r;
    int rc = orphan_clean(t, 1, &r, &e);
    if (rc) fprintf(stderr, "  orphan: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) {
        /* the fixture has no unreferenced file: nothing to delete */
        CHECK_EQ_INT(r.clean.n_paths, 0);
        pm_clean_result_free(&r.clean);
    }
    /* a missing changelog manifest list (the one readers read) still refuses */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && sed -i -e 's/\"deltaManifestList\" : \"[^\"]*\"/\"deltaManifestList\" : \"manifest-list-gone-1\"/' "
             "-e 's/\"changelogManifestList\" : null/\"changelogManifestList\" : \"manifest-list-gone-2\"/' "
             "changelog/changelog-1 && grep -q manifest-list-gone-2 changelog/changelog-1",
             d.table);
    CHECK(tu_sh(cmd) == 0);
    rc = orphan_clean(t, 1, &r, &e);
    CHECK(rc != PAIMON_OK);
    if (rc) CHECK(strstr(e.msg, "manifest-list-gone-2") != NULL);
    else pm_clean_result_free(&r.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- deleter: stop on failure includes directories --------------------------------- */

TEST(stop_on_failure_stops_after_a_directory) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/snapshot/snapshot-1", d.table);
    snprintf(b, sizeof b, "%s/snapshot/snapshot-2", d.table);
    CHECK(unlink(a) == 0 && mkdir(a, 0755) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_deleter *del = pm_deleter_new();
    CHECK_EQ_INT(pm_deleter_add(del, a, PM_K_SNAPSHOT, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_deleter_add(del, b, PM_K_SNAPSHOT, &e), PAIMON_OK);
    pm_clean_opts co = {1, 0, 1, NULL, NULL, 0};
    pm_clean_result r;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(pm_deleter_run(del, t->io, t->root, &co, "snapshots", &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.n_failures, 1);
    CHECK(tu_file_exists(a));
    CHECK(tu_file_exists(b));        /* never attempted after the failure: no gap */
    CHECK_EQ_INT(r.count[PM_K_SNAPSHOT], 0);
    pm_clean_result_free(&r);
    pm_deleter_free(del);
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- deleter: empty directories ------------------------------------------------- */

/* Files deleted now and files already gone (a run that crashed after
 * deleting them) both lead to their emptied bucket directory and its empty
 * k=v parents; never in a dry run, never a directory with anything left,
 * never a parent that is no partition directory. */
TEST(clean_dirs_after_deleting) {
    char *dir = tu_make_tmpdir("/tmp/pm_test_dirs.");
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p t/dt=a/hr=1/bucket-0 t/dt=a/hr=2/bucket-0 t/dt=b/hr=1/bucket-0 t/data/bucket-3 "
             "t/dt=c/hr=1/bucket-0 && printf 1 > t/dt=a/hr=1/bucket-0/data-1 && printf 1 > t/dt=b/hr=1/bucket-0/data-2 "
             "&& printf 1 > t/dt=b/hr=1/bucket-0/keep && printf 1 > t/data/bucket-3/data-3", dir);
    CHECK(tu_sh(cmd) == 0);
    char root[600], p1[700], p2[700], p3[700], gone[700];
    snprintf(root, sizeof root, "%s/t", dir);
    snprintf(p1, sizeof p1, "%s/dt=a/hr=1/bucket-0/data-1", root);
    snprintf(p2, sizeof p2, "%s/dt=b/hr=1/bucket-0/data-2", root);
    snprintf(p3, sizeof p3, "%s/data/bucket-3/data-3", root);
    snprintf(gone, sizeof gone, "%s/dt=a/hr=2/bucket-0/data-9", root);   /* already gone */
    pm_fileio *io = pm_fileio_local();
    pm_err e;
    for (int dry = 1; dry >= 0; dry--) {
        pm_deleter *del = pm_deleter_new();
        CHECK_EQ_INT(pm_deleter_add(del, p1, PM_K_DATA, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_deleter_add(del, p2, PM_K_DATA, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_deleter_add(del, p3, PM_K_DATA, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_deleter_add(del, gone, PM_K_DATA, &e), PAIMON_OK);
        pm_clean_opts co = {2, dry, 0, NULL, NULL, 0};
        pm_clean_result r;
        memset(&r, 0, sizeof r);
        CHECK_EQ_INT(pm_deleter_run(del, io, root, &co, "data files", &r, &e), PAIMON_OK);
        pm_deleter_clean_dirs(del, io, root, 2, &r);
        if (dry) {
            CHECK_EQ_INT(r.dirs_removed, 0);
            snprintf(cmd, sizeof cmd, "test -d '%s/dt=a/hr=2/bucket-0'", root);   /* empty, but a dry run */
            CHECK(tu_sh(cmd) == 0);
        } else {
            /* dt=a/hr=1/bucket-0, dt=a/hr=1, dt=a/hr=2/bucket-0, dt=a/hr=2, dt=a; data/bucket-3 (not data/) */
            CHECK_EQ_INT(r.dirs_removed, 6);
            snprintf(cmd, sizeof cmd, "cd '%s' && test ! -e dt=a && test -f dt=b/hr=1/bucket-0/keep && "
                     "test -d dt=c/hr=1/bucket-0 && test -d data && test ! -e data/bucket-3", root);
            CHECK(tu_sh(cmd) == 0);
        }
        pm_clean_result_free(&r);
        pm_deleter_free(del);
    }
    pm_fileio_destroy(io);
    tu_rm_rf(dir);
    free(dir);
}

int main(void) {
    RUN(without_a_changelog_the_files_go);
    RUN(expire_keeps_what_a_long_lived_changelog_reads);
    RUN(expire_keeps_what_a_branch_changelog_reads);
    RUN(expire_refuses_a_corrupt_changelog);
    RUN(a_consumer_at_zero_stops_everything);
    RUN(a_tag_replaced_while_planning_aborts);
    RUN(a_consumer_moved_back_while_planning_aborts);
    RUN(future_cutoff_refused_by_the_real_clock);
    RUN(a_gap_at_the_end_of_the_range_does_not_stall);
    RUN(a_gap_below_the_end_strands_nothing);
    RUN(a_consumer_at_a_gap_is_no_conflict);
    RUN(orphan_accepts_a_changelog_whose_base_list_is_gone);
    RUN(stop_on_failure_stops_after_a_directory);
    RUN(clean_dirs_after_deleting);
    return TEST_SUMMARY();
}
