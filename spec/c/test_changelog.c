/* Decoupled changelog lifecycle (pm_changelog.c, the decoupled path of
 * pm_expire.c), on temp copies of a Java-written PK table to which each
 * snapshot gets a changelog manifest list adding one changelog file (as a
 * changelog-producer table has):
 *  - snapshot expiration writes changelog/changelog-<id>, byte for byte
 *    what Java 2.0's Changelog(snapshot).toJson() writes (derived from the
 *    snapshot file's text: null fields and logOffsets left out), keeps the
 *    changelog files and lists, and the LATEST hint of changelog/;
 *  - without a producer it keeps the base and delta lists and what the
 *    deltas add (Java's SnapshotDeletion with changelogDecoupled);
 *  - changelog expiration (ExpireChangelogImpl's rule) deletes exactly the
 *    files only the expired changelogs held, and the EARLIEST hint;
 *  - orphan cleaning and verify keep and check what changelogs read;
 *  - a fault at every I/O operation of both leaves the table readable,
 *    and a re-run (+ orphan cleaning) ends where an undisturbed run does. */
#include "test.h"
#include "pm_avro.h"
#include "pm_changelog.h"
#include "pm_expire.h"
#include "pm_fileio_fault.h"
#include "pm_orphan.h"
#include "pm_verify.h"

#include <sys/stat.h>
#include <unistd.h>

#define FIX "cpp-parquet-pk_table_scan_and_read_dv/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv"
#define TMP_PREFIX "/tmp/pm_test_changelog."

static int with_changelogs = 1;

/* The fixture with decoupled retention (changelog.num-retained.max above
 * the snapshot's), a producer and a changelog per snapshot (or neither);
 * files dated two days back for orphan cleaning. */
static int make_table_fresh(tu_copy *d, const char *fixture) {
    if (tu_copy_make(d, TMP_PREFIX, fixture)) return -1;
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "sed -i 's/\"options\" : {/\"options\" : {\\n    %s\"changelog.num-retained.max\" : \"100\",\\n    \"snapshot.num-retained.max\" : \"3\",/' '%s/schema/schema-0'",
             with_changelogs ? "\"changelog-producer\" : \"input\",\\n    " : "", d->table);
    if (tu_sh(cmd)) return -1;
    paimon_table *t;
    pm_err e;
    if (pm_table_open(d->table, NULL, &t, &e)) return -1;
    int rc = 0;
    for (int64_t id = 1; with_changelogs && !rc && id <= 6; id++) rc = tu_add_changelog(d->table, t, id, &e);
    if (rc) fprintf(stderr, "  make_table: %s\n", e.msg);
    pm_table_free(t);
    snprintf(cmd, sizeof cmd, "find '%s' -exec touch -h -d '2 days ago' {} +", d->table);
    return rc || tu_sh(cmd) ? -1 : 0;
}

static void remove_copy(tu_copy *d) { tu_copy_remove(d, TMP_PREFIX); }

/* Avro files carry a random sync marker: the tables of one kind are
 * copies of one built table, so runs compare byte for byte. */
static tu_copy templates[2];
static int have_template[2];

static int make_table(tu_copy *d, const char *fixture) {
    int k = with_changelogs;
    if (!have_template[k]) {
        tu_copy fresh;
        if (make_table_fresh(&fresh, fixture)) return -1;
        templates[k] = fresh;
        have_template[k] = 1;
    }
    snprintf(d->dir, sizeof d->dir, "%sXXXXXX", TMP_PREFIX);
    if (!mkdtemp(d->dir)) return -1;
    snprintf(d->table, sizeof d->table, "%s/t", d->dir);
    snprintf(d->outside, sizeof d->outside, "%s/outside", d->dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s'", templates[k].table, d->table);
    return tu_sh(cmd);
}
static char *tree_of(const char *dir) { return tu_tree(dir, 0); }

/* Snapshots 1-4 of 6 expire (retain-min 2). */
static int expire_snaps(paimon_table *t, pm_expire_result *res, pm_err *e) {
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 2;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 100;
    o.threads = 1;
    return pm_expire_snapshots(t, &o, res, e);
}

/* Changelogs by ExpireChangelogImpl's rule with changelog retain-min 3:
 * [1, 4) of changelogs 1-4 (never the latest changelog). */
static int expire_cls(paimon_table *t, int dry_run, pm_changelog_expire_result *res, pm_err *e) {
    pm_changelog_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 3;
    o.threads = 1;
    o.dry_run = dry_run;
    return pm_expire_changelogs(t, &o, res, e);
}

static int orphan_clean(paimon_table *t, pm_err *e) {
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.threads = 1;
    for (int round = 0; round < 2; round++) {
        pm_orphan_result orr;
        int rc = pm_remove_orphan_files(t, &oo, &orr, e);
        if (rc) return rc;
        pm_clean_result_free(&orr.clean);
    }
    return PAIMON_OK;
}

/* Nothing the latest snapshot (every snapshot: all), a tag or a changelog
 * needs is missing or unreadable. */
static int readable_of(paimon_table *t, int all, char *why, size_t wl) {
    pm_verify_opts vo = {all, 1, NULL, NULL};
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

static int readable(paimon_table *t, char *why, size_t wl) { return readable_of(t, 1, why, wl); }

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    pm_buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) pm_buf_append(&b, chunk, n);
    fclose(f);
    pm_buf_cstr(&b);
    return (char *)b.data;
}

/* Java 2.0's Changelog JSON of a snapshot file's text: its fields in the
 * same layout without "logOffsets" and without null fields. */
static char *java_changelog_of(const char *snapshot_text) {
    pm_buf out = {0};
    for (const char *l = snapshot_text; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
        int drop = (strstr(l, "\"logOffsets\"") && strstr(l, "\"logOffsets\"") < l + n) ||
                   (strstr(l, " : null") && strstr(l, " : null") < l + n);
        if (!drop) pm_buf_append(&out, l, n);
        l += n;
    }
    pm_buf_cstr(&out);
    return (char *)out.data;
}

static int exists_rel(const tu_copy *d, const char *rel) {
    char p[700];
    snprintf(p, sizeof p, "%s/%s", d->table, rel);
    return tu_file_exists(p);
}

static char *find_rel(const tu_copy *d, const char *name) {
    char cmd[700];
    int st;
    snprintf(cmd, sizeof cmd, "cd '%s' && find . -name '%s' | head -1 | tr -d '\\n'", d->table, name);
    return tu_sh_out(cmd, &st);
}

TEST(decoupled_expiration_writes_javas_changelogs) {
    with_changelogs = 1;
    tu_copy d;
    CHECK_EQ_INT(make_table(&d, FIX), 0);
    char *want[5] = {0};
    for (int id = 1; id <= 4; id++) {
        char p[700];
        snprintf(p, sizeof p, "%s/snapshot/snapshot-%d", d.table, id);
        char *text = slurp(p);
        CHECK(text && strstr(text, "manifest-list-cl-"));
        want[id] = text ? java_changelog_of(text) : NULL;
        free(text);
    }
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result res;
    int rc = expire_snaps(t, &res, &e);
    if (rc) fprintf(stderr, "  %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) {
        CHECK_EQ_INT(res.expired, 4);
        CHECK_EQ_INT(res.changelogs, 4);
        pm_clean_result_free(&res.clean);
    }
    for (int id = 1; id <= 4; id++) {
        char p[700], rel[80];
        snprintf(p, sizeof p, "%s/changelog/changelog-%d", d.table, id);
        char *got = slurp(p);
        CHECK(got && want[id] && !strcmp(got, want[id]));
        if (got && want[id] && strcmp(got, want[id])) fprintf(stderr, "--- got\n%s--- want\n%s", got, want[id]);
        free(got);
        snprintf(rel, sizeof rel, "snapshot/snapshot-%d", id);
        CHECK(!exists_rel(&d, rel));
        snprintf(rel, sizeof rel, "manifest/manifest-list-cl-%d", id);
        CHECK(exists_rel(&d, rel));
        snprintf(rel, sizeof rel, "manifest/manifest-cl-%d", id);
        CHECK(exists_rel(&d, rel));
        snprintf(rel, sizeof rel, "changelog-cl-%d.parquet", id);
        char *f = find_rel(&d, rel);
        CHECK(f && *f);
        free(f);
        free(want[id]);
    }
    char p[700];
    snprintf(p, sizeof p, "%s/changelog/LATEST", d.table);
    char *hint = slurp(p);
    CHECK(hint && !strcmp(hint, "4"));
    free(hint);
    CHECK(!exists_rel(&d, "changelog/changelog-5"));
    char why[1200];
    CHECK(readable(t, why, sizeof why));
    /* a second run writes nothing new and keeps the changelogs */
    if (expire_snaps(t, &res, &e) == 0) pm_clean_result_free(&res.clean);
    CHECK(exists_rel(&d, "changelog/changelog-4"));
    /* orphan cleaning keeps everything the changelogs read */
    CHECK_EQ_INT(orphan_clean(t, &e), PAIMON_OK);
    CHECK(exists_rel(&d, "manifest/manifest-list-cl-1") && exists_rel(&d, "manifest/manifest-cl-1"));
    char *f = find_rel(&d, "changelog-cl-1.parquet");
    CHECK(f && *f);
    free(f);
    CHECK(readable(t, why, sizeof why));
    pm_table_free(t);
    remove_copy(&d);
}

/* Exactly the 12 files only changelogs 1-3 held go: their JSON, changelog
 * files, manifests and lists; changelog 4 and everything else stays. */
TEST(changelog_expiration_deletes_exactly_what_only_they_held) {
    with_changelogs = 1;
    tu_copy d;
    CHECK_EQ_INT(make_table(&d, FIX), 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result res;
    CHECK_EQ_INT(expire_snaps(t, &res, &e), PAIMON_OK);
    pm_clean_result_free(&res.clean);
    char *before = tree_of(d.table);
    pm_changelog_expire_result cr;
    CHECK_EQ_INT(expire_cls(t, 1, &cr, &e), PAIMON_OK);   /* dry run: a plan, nothing deleted */
    CHECK_EQ_INT(cr.expired, 3);
    CHECK_EQ_INT(cr.range.begin, 1);
    CHECK_EQ_INT(cr.range.end, 4);
    pm_clean_result_free(&cr.clean);
    char *same = tree_of(d.table);
    CHECK(!strcmp(before, same));
    free(same);
    int rc = expire_cls(t, 0, &cr, &e);
    if (rc) fprintf(stderr, "  %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) { CHECK_EQ_INT(cr.expired, 3); pm_clean_result_free(&cr.clean); }
    char *after = tree_of(d.table);
    int gone = 0, bad = 0;
    for (const char *l = before; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
        char line[1200];
        snprintf(line, sizeof line, "%.*s", (int)n, l);
        if (!strstr(after, line)) {
            int ok = 0;
            for (int id = 1; id <= 3; id++) {
                char a[80], b[80], c[80], x[80];
                snprintf(a, sizeof a, "/changelog-%d\n", id);
                snprintf(b, sizeof b, "/changelog-cl-%d.parquet\n", id);
                snprintf(c, sizeof c, "/manifest-cl-%d\n", id);
                snprintf(x, sizeof x, "/manifest-list-cl-%d\n", id);
                ok |= strstr(line, a) || strstr(line, b) || strstr(line, c) || strstr(line, x);
            }
            if (ok) gone++;
            else if (!strstr(line, "/changelog/EARLIEST")) { fprintf(stderr, "  unexpected loss: %s", line); bad++; }
        }
        l += n;
    }
    CHECK_EQ_INT(gone, 12);
    CHECK_EQ_INT(bad, 0);
    char p[700];
    snprintf(p, sizeof p, "%s/changelog/EARLIEST", d.table);
    char *hint = slurp(p);
    CHECK(hint && !strcmp(hint, "4"));
    free(hint);
    char why[1200];
    CHECK(readable(t, why, sizeof why));
    free(before);
    free(after);
    pm_table_free(t);
    remove_copy(&d);
}

/* No producer: the expired snapshots' base and delta lists stay (Java's
 * deleteDataManifestLists false) and with them what the deltas add;
 * orphan cleaning keeps them, verify finds nothing missing. */
TEST(without_producer_lists_and_delta_files_stay) {
    with_changelogs = 0;
    tu_copy d;
    CHECK_EQ_INT(make_table(&d, FIX), 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_snapshot *s[5] = {0};
    for (int id = 1; id <= 4; id++) CHECK_EQ_INT(pm_snapshot_read(t->io, t->root, id, &s[id], &e), PAIMON_OK);
    pm_expire_result res;
    int rc = expire_snaps(t, &res, &e);
    if (rc) fprintf(stderr, "  %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) pm_clean_result_free(&res.clean);
    CHECK_EQ_INT(orphan_clean(t, &e), PAIMON_OK);
    for (int id = 1; id <= 4; id++) {
        char rel[200];
        snprintf(rel, sizeof rel, "changelog/changelog-%d", id);
        CHECK(exists_rel(&d, rel));
        if (!s[id]) continue;
        snprintf(rel, sizeof rel, "manifest/%s", s[id]->base_manifest_list);
        CHECK(exists_rel(&d, rel));
        snprintf(rel, sizeof rel, "manifest/%s", s[id]->delta_manifest_list);
        CHECK(exists_rel(&d, rel));
        /* every file its delta adds */
        pm_mfile *v = NULL;
        size_t n = 0;
        CHECK_EQ_INT(pm_read_manifest_list(t, s[id]->delta_manifest_list, &v, &n, &e), PAIMON_OK);
        for (size_t k = 0; k < n; k++) {
            pm_manifest_reader *r;
            CHECK_EQ_INT(pm_table_open_manifest(t, v[k].name, PM_MANIFEST_FILE, &r, &e), PAIMON_OK);
            const pm_manifest_entry *m;
            pm_buf b = {0};
            while (pm_manifest_next_entry(r, &m, &e) == PAIMON_OK) {
                if (m->kind != PM_FILE_ADD) continue;
                CHECK_EQ_INT(pm_data_file_full_path(t, m, &b, &e), PAIMON_OK);
                CHECK(tu_file_exists((char *)b.data));
            }
            pm_buf_free(&b);
            pm_manifest_close(r);
        }
        pm_mfiles_free(v, n);
        pm_snapshot_free(s[id]);
    }
    char why[1200];
    CHECK(readable(t, why, sizeof why));
    /* their own expiration then goes through ChangelogDeletion's delta rule */
    pm_changelog_expire_result cr;
    rc = expire_cls(t, 0, &cr, &e);
    if (rc) fprintf(stderr, "  %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) pm_clean_result_free(&cr.clean);
    CHECK(!exists_rel(&d, "changelog/changelog-1") && exists_rel(&d, "changelog/changelog-4"));
    CHECK(readable(t, why, sizeof why));
    CHECK_EQ_INT(orphan_clean(t, &e), PAIMON_OK);
    CHECK(readable(t, why, sizeof why));
    pm_table_free(t);
    remove_copy(&d);
}

/* ---- fault sweeps ----------------------------------------------------------------- */

static int op_expire_snaps(paimon_table *t, pm_err *e) {
    pm_expire_result res;
    int rc = expire_snaps(t, &res, e);
    if (!rc) pm_clean_result_free(&res.clean);
    return rc;
}

/* The decoupled table with snapshots 1-4 already moved to changelog/. */
static int make_moved(tu_copy *d, const char *fixture) {
    if (make_table(d, fixture)) return -1;
    paimon_table *t;
    pm_err e;
    if (pm_table_open(d->table, NULL, &t, &e)) return -1;
    int rc = op_expire_snaps(t, &e);
    pm_table_free(t);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "find '%s' -exec touch -h -d '2 days ago' {} +", d->table);
    return rc || tu_sh(cmd) ? -1 : 0;
}

/* Changelog expiration, then orphan cleaning (what an interrupted run
 * left once its changelog files were gone). */
static int op_expire_cls(paimon_table *t, pm_err *e) {
    pm_changelog_expire_result cr;
    int rc = expire_cls(t, 0, &cr, e);
    if (rc) return rc;
    pm_clean_result_free(&cr.clean);
    return orphan_clean(t, e);
}

/* all: verify every snapshot after the fault; snapshot expiration deletes
 * what the snapshots it expires read before their files go (Java's
 * order), so there only the latest, the tags and the changelogs count. */
static void sweep(int (*make)(tu_copy *, const char *), int (*op)(paimon_table *, pm_err *), int all, int crash) {
    with_changelogs = 1;
    tu_sweep s = {make, remove_copy, tree_of, op, 10, "tree differs"};
    long ops = 0;
    char *want = tu_sweep_clean_run(&s, FIX, &ops);
    CHECK(want != NULL);
    CHECK(ops > 10);
    if (!want) return;
    int bad = 0;
    for (long k = 1; k <= ops && bad < 3; k++) {
        if (!tu_sweep_point(k, ops)) continue;
        tu_copy d;
        if (make(&d, FIX)) { CHECK(0); break; }
        paimon_table *t;
        pm_err e;
        CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, k, crash);
        op(t, &e);
        t->io = pm_fileio_fault_release(t->io);
        char why[1200];
        if (!readable_of(t, all, why, sizeof why)) {
            fprintf(stderr, "  fault at op %ld (crash %d): table not readable: %s\n", k, crash, why);
            bad++;
        }
        if (op(t, &e)) {
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

TEST(decoupled_expire_fault_at_every_operation) { sweep(make_table, op_expire_snaps, 0, 0); }
TEST(decoupled_expire_crash_at_every_operation) { sweep(make_table, op_expire_snaps, 0, 1); }
TEST(changelog_expire_fault_at_every_operation) { sweep(make_moved, op_expire_cls, 1, 0); }
TEST(changelog_expire_crash_at_every_operation) { sweep(make_moved, op_expire_cls, 1, 1); }

int main(void) {
    RUN(decoupled_expiration_writes_javas_changelogs);
    RUN(changelog_expiration_deletes_exactly_what_only_they_held);
    RUN(without_producer_lists_and_delta_files_stay);
    RUN(decoupled_expire_fault_at_every_operation);
    RUN(decoupled_expire_crash_at_every_operation);
    RUN(changelog_expire_fault_at_every_operation);
    RUN(changelog_expire_crash_at_every_operation);
    for (int k = 0; k < 2; k++)
        if (have_template[k]) remove_copy(&templates[k]);
    return TEST_SUMMARY();
}
