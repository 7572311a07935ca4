/* Snapshot expiration in C, on temp copies of Java-written tables:
 *  - path safety: crafted manifest entries naming "../x", an absolute name,
 *    an extra file "../x", an _EXTERNAL_PATH outside the table, and a
 *    symlinked bucket directory pointing outside: a sentinel outside the
 *    table always survives;
 *  - fault injection: for every k, the k-th I/O operation fails (once, or as
 *    a crash where every later one fails too); a re-run without faults then
 *    leaves exactly the tree of an undisturbed run (nothing retained lost,
 *    nothing left behind);
 *  - dry run changes nothing; parallel and inline deletes agree. */
#include "test.h"
#include "pm_avro.h"
#include "pm_expire.h"
#include "pm_fileio_fault.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PK "cpp-parquet-pk_table_scan_and_read_dv/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv"
#define TAGGED "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"

/* ---- temp dirs ------------------------------------------------------------- */

typedef tu_copy tdir;

#define TMP_PREFIX "/tmp/pm_test_expire."

/* A copy of the fixture at d->table and an empty directory d->outside. */
static int tdir_make(tdir *d, const char *fixture) {
    if (tu_copy_make(d, TMP_PREFIX, fixture)) return -1;
    return mkdir(d->outside, 0777) == 0 ? 0 : -1;
}

static void tdir_remove(tdir *d) { tu_copy_remove(d, TMP_PREFIX); }

/* "checksum size path" lines for every file below dir (symlinks followed). */
static char *tree(const char *dir) { return tu_tree(dir, 1); }

static int expire_all(paimon_table *t, int threads, int dry_run, pm_expire_result *res, pm_err *e) {
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = 1000;
    o.threads = threads;
    o.dry_run = dry_run;
    return pm_expire_snapshots(t, &o, res, e);
}

/* ---- crafting a snapshot ---------------------------------------------------- */

typedef void (*entry_edit)(pm_manifest_entry *m, const tdir *d, void *scratch);

/* Append snapshot latest+1 whose base = base+delta of the latest and whose
 * delta holds one DELETE entry: a copy of the first entry of the latest
 * snapshot's base manifests, changed by `edit`. */
static int craft_snapshot2(const tdir *d, entry_edit edit, int seq, int with_changelog);
static int craft_snapshot(const tdir *d, entry_edit edit) { return craft_snapshot2(d, edit, 0, 0); }

static int write_manifest(const tdir *d, const char *name, const pm_manifest_entry *m, int64_t *size, pm_err *e) {
    pm_avro_writer *w;
    pm_buf file = {0};
    char path[600];
    int rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_FILE, "null", 0, &w, e);
    if (!rc) rc = pm_manifest_write_entry(w, m, e);
    if (!rc) rc = pm_avro_writer_finish(w, &file, e);
    else pm_avro_writer_abort(w);
    snprintf(path, sizeof path, "%s/manifest/%s", d->table, name);
    if (!rc) rc = tu_write_file(path, file.data, file.len);
    *size = (int64_t)file.len;
    pm_buf_free(&file);
    return rc;
}

static int write_list(const tdir *d, const char *name, const pm_manifest_meta *tmpl, const char *mname,
                      int64_t msize, int added, pm_err *e) {
    pm_avro_writer *w;
    pm_buf file = {0};
    char path[600];
    int rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_LIST, "null", 0, &w, e);
    if (!rc) {
        pm_manifest_meta x = *tmpl;
        x.file_name = mname;
        x.file_size = msize;
        x.num_added_files = added;
        x.num_deleted_files = !added;
        rc = pm_manifest_write_meta(w, &x, e);
    }
    if (!rc) rc = pm_avro_writer_finish(w, &file, e);
    else pm_avro_writer_abort(w);
    snprintf(path, sizeof path, "%s/manifest/%s", d->table, name);
    if (!rc) rc = tu_write_file(path, file.data, file.len);
    pm_buf_free(&file);
    return rc;
}

static int craft_snapshot2(const tdir *d, entry_edit edit, int seq, int with_changelog) {
    pm_err e;
    paimon_table *t;
    if (pm_table_open(d->table, NULL, &t, &e)) return -1;
    int64_t latest;
    pm_snapshot *s = NULL;
    int rc = pm_snapshot_latest_id(t->io, t->root, &latest, &e);
    if (!rc) rc = pm_snapshot_read(t->io, t->root, latest, &s, &e);
    pm_avro_writer *w = NULL;
    pm_buf file = {0};
    char path[600], mname[100], lname[100], bname[100];
    snprintf(mname, sizeof mname, "manifest-crafted%02d-0000-0000-0000-000000000000-0", seq);
    snprintf(lname, sizeof lname, "manifest-list-crafted%02d-0000-0000-0000-000000000000-0", seq);
    snprintf(bname, sizeof bname, "manifest-list-crafted%02d-0000-0000-0000-000000000000-1", seq);
    char cmname[100], clname[100];
    snprintf(cmname, sizeof cmname, "manifest-crafted%02d-0000-0000-0000-000000000000-9", seq);
    snprintf(clname, sizeof clname, "manifest-list-crafted%02d-0000-0000-0000-000000000000-9", seq);
    /* the manifest with the crafted DELETE */
    pm_mfile *mv = NULL;
    size_t mn = 0;
    if (!rc) rc = pm_read_manifest_list(t, s->base_manifest_list, &mv, &mn, &e);
    pm_manifest_reader *r = NULL;
    if (!rc) rc = pm_table_open_manifest(t, mv[0].name, PM_MANIFEST_FILE, &r, &e);
    const pm_manifest_entry *m0;
    if (!rc) rc = pm_manifest_next_entry(r, &m0, &e);
    if (!rc) rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_FILE, "null", 0, &w, &e);
    if (!rc) {
        pm_manifest_entry m = *m0;
        char scratch[600];
        m.kind = PM_FILE_DELETE;
        edit(&m, d, scratch);
        rc = pm_manifest_write_entry(w, &m, &e);
    }
    int64_t cmsize = 0;
    if (!rc && with_changelog) {
        /* a changelog manifest adding changelog-crafted-N.parquet next to the entry's data file */
        pm_manifest_entry c = *m0;
        char cname[100];
        snprintf(cname, sizeof cname, "changelog-crafted-%02d.parquet", seq);
        c.file.file_name = cname;
        c.file.extra_files.n = 0;
        rc = write_manifest(d, cmname, &c, &cmsize, &e);
        pm_buf rel = {0};
        if (!rc) rc = pm_table_file_path(t, &c, &rel, &e);
        snprintf(path, sizeof path, "%s/%s", d->table, rel.data ? (char *)rel.data : "");
        if (!rc) rc = tu_write_file(path, "changelog", 9);
        pm_buf_free(&rel);
    }
    pm_manifest_close(r);
    if (!rc) { rc = pm_avro_writer_finish(w, &file, &e); w = NULL; }
    snprintf(path, sizeof path, "%s/manifest/%s", d->table, mname);
    if (!rc) rc = tu_write_file(path, file.data, file.len);
    int64_t msize = (int64_t)file.len;
    pm_buf_free(&file);
    /* delta list: one meta (a copy of an existing one, renamed) */
    pm_manifest_reader *lr = NULL;
    char lpath[600];
    snprintf(lpath, sizeof lpath, "%s/manifest/%s", d->table, s ? s->base_manifest_list : "");
    if (!rc) rc = pm_manifest_open(t->io, lpath, lpath, PM_MANIFEST_LIST, &lr, &e);
    const pm_manifest_meta *mm;
    if (!rc) rc = pm_manifest_next_meta(lr, &mm, &e);
    if (!rc) rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_LIST, "null", 0, &w, &e);
    if (!rc) {
        pm_manifest_meta x = *mm;
        x.file_name = mname;
        x.file_size = msize;
        x.num_added_files = 0;
        x.num_deleted_files = 1;
        rc = pm_manifest_write_meta(w, &x, &e);
    }
    if (!rc && with_changelog) rc = write_list(d, clname, mm, cmname, cmsize, 1, &e);
    pm_manifest_close(lr);
    if (!rc) { rc = pm_avro_writer_finish(w, &file, &e); w = NULL; }
    snprintf(path, sizeof path, "%s/manifest/%s", d->table, lname);
    if (!rc) rc = tu_write_file(path, file.data, file.len);
    pm_buf_free(&file);
    /* base list: base + delta of the latest snapshot */
    if (!rc) rc = pm_avro_writer_open(PM_SCHEMA_MANIFEST_LIST, "null", 0, &w, &e);
    const char *lists[2] = {s ? s->base_manifest_list : NULL, s ? s->delta_manifest_list : NULL};
    for (int i = 0; i < 2 && !rc; i++) {
        snprintf(lpath, sizeof lpath, "%s/manifest/%s", d->table, lists[i]);
        rc = pm_manifest_open(t->io, lpath, lpath, PM_MANIFEST_LIST, &lr, &e);
        while (!rc && (rc = pm_manifest_next_meta(lr, &mm, &e)) == PAIMON_OK) rc = pm_manifest_write_meta(w, mm, &e);
        if (rc == PAIMON_DONE) rc = 0;
        pm_manifest_close(lr);
    }
    if (!rc) { rc = pm_avro_writer_finish(w, &file, &e); w = NULL; }
    snprintf(path, sizeof path, "%s/manifest/%s", d->table, bname);
    if (!rc) rc = tu_write_file(path, file.data, file.len);
    pm_buf_free(&file);
    pm_avro_writer_abort(w);
    /* the snapshot */
    if (!rc) {
        free(s->base_manifest_list);
        free(s->delta_manifest_list);
        s->base_manifest_list = pm_strdup(bname);
        s->delta_manifest_list = pm_strdup(lname);
        s->base_manifest_list_size.has = s->delta_manifest_list_size.has = 0;
        free(s->changelog_manifest_list);
        s->changelog_manifest_list = with_changelog ? pm_strdup(clname) : NULL;
        s->changelog_manifest_list_size.has = 0;
        s->id = latest + 1;
        s->time_millis = pm_now_millis() - 1000;
        s->explicit_nulls = 0;
        pm_buf j = {0};
        rc = pm_snapshot_to_json(s, &j);
        snprintf(path, sizeof path, "%s/snapshot/snapshot-%lld", d->table, (long long)(latest + 1));
        if (!rc) rc = tu_write_file(path, j.data, j.len);
        pm_buf_free(&j);
        if (!rc) rc = pm_hint_write(t->io, t->root, "LATEST", latest + 1, &e);
    }
    if (rc) fprintf(stderr, "  craft_snapshot: %s\n", e.msg);
    pm_mfiles_free(mv, mn);
    pm_snapshot_free(s);
    pm_table_free(t);
    return rc ? -1 : 0;
}

static void edit_dotdot(pm_manifest_entry *m, const tdir *d, void *scratch) {
    (void)d;
    strcpy(scratch, "../../outside/sentinel");
    m->file.file_name = scratch;
}

static void edit_absolute(pm_manifest_entry *m, const tdir *d, void *scratch) {
    snprintf(scratch, 600, "%s/sentinel", d->outside);
    m->file.file_name = scratch;
}

static const char *extra_v[1];
static void edit_extra(pm_manifest_entry *m, const tdir *d, void *scratch) {
    (void)d;
    strcpy(scratch, "../../../outside/sentinel");
    extra_v[0] = scratch;
    m->file.extra_files.n = 1;
    m->file.extra_files.v = extra_v;
}

static void edit_external(pm_manifest_entry *m, const tdir *d, void *scratch) {
    snprintf(scratch, 600, "file:%s/sentinel", d->outside);
    m->file.external_path = scratch;
}

static void edit_external_dotdot(pm_manifest_entry *m, const tdir *d, void *scratch) {
    snprintf(scratch, 600, "%s/../outside/sentinel", d->table);
    m->file.external_path = scratch;
}

static void edit_external_inside(pm_manifest_entry *m, const tdir *d, void *scratch) {
    snprintf(scratch, 600, "file:%s/ext-data-file.parquet", d->table);
    m->file.external_path = scratch;
}

/* A crafted entry never makes expiration touch anything outside the table:
 * either the run is refused (corrupt names) or the path is skipped. */
static void check_crafted(entry_edit edit, int expect_rc, const char *what) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    char sentinel[300];
    snprintf(sentinel, sizeof sentinel, "%s/sentinel", d.outside);
    CHECK(tu_write_file(sentinel, "keep", 4) == 0);
    CHECK(craft_snapshot(&d, edit) == 0);
    char *before = tree(d.table);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result res;
    int rc = expire_all(t, 4, 0, &res, &e);
    if (rc != expect_rc) fprintf(stderr, "  %s: rc %d: %s\n", what, rc, e.msg);
    CHECK_EQ_INT(rc, expect_rc);
    CHECK(tu_file_exists(sentinel));
    if (rc) {
        char *after = tree(d.table);
        CHECK_EQ_STR(after, before);           /* refused: nothing deleted */
        free(after);
        CHECK(strstr(e.msg, "invalid") != NULL);
    } else {
        CHECK_EQ_INT(res.clean.n_skipped, 1);
        if (res.clean.n_skipped) CHECK(strstr(res.clean.skipped[0].path, "sentinel") != NULL);
        CHECK_EQ_INT(res.expired, 6);
        pm_clean_result_free(&res.clean);
    }
    free(before);
    pm_table_free(t);
    tdir_remove(&d);
}

TEST(crafted_dotdot_name_is_refused) { check_crafted(edit_dotdot, PAIMON_CORRUPT, "dotdot"); }
TEST(crafted_absolute_name_is_refused) { check_crafted(edit_absolute, PAIMON_CORRUPT, "absolute"); }
TEST(crafted_extra_file_is_refused) { check_crafted(edit_extra, PAIMON_CORRUPT, "extra"); }
TEST(external_path_outside_is_skipped) { check_crafted(edit_external, PAIMON_OK, "external"); }
TEST(external_path_with_dotdot_is_skipped) { check_crafted(edit_external_dotdot, PAIMON_OK, "external .."); }

TEST(external_path_inside_is_deleted) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    char inside[300];
    snprintf(inside, sizeof inside, "%s/ext-data-file.parquet", d.table);
    CHECK(tu_write_file(inside, "x", 1) == 0);
    CHECK(craft_snapshot(&d, edit_external_inside) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result res;
    CHECK_EQ_INT(expire_all(t, 1, 0, &res, &e), PAIMON_OK);
    CHECK(!tu_file_exists(inside));
    CHECK_EQ_INT(res.clean.n_skipped, 0);
    pm_clean_result_free(&res.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

static void edit_missing(pm_manifest_entry *m, const tdir *d, void *scratch) {
    (void)d;
    strcpy(scratch, "data-00000000-0000-0000-0000-000000000000-0.parquet");
    m->file.file_name = scratch;
    m->file.extra_files.n = 0;
}

/* Changelog files added by an expiring snapshot go with it (changelog
 * lifecycle not decoupled), with their changelog manifest and list. */
TEST(changelog_files_of_expired_snapshots_are_deleted) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    CHECK(craft_snapshot2(&d, edit_missing, 1, 1) == 0);      /* snapshot 7, with a changelog */
    CHECK(craft_snapshot2(&d, edit_missing, 2, 0) == 0);      /* snapshot 8 */
    char cl[400], cm[400], cll[400];
    snprintf(cl, sizeof cl, "%s/f1=10/bucket-0/changelog-crafted-01.parquet", d.table);
    snprintf(cm, sizeof cm, "%s/manifest/manifest-crafted01-0000-0000-0000-000000000000-9", d.table);
    snprintf(cll, sizeof cll, "%s/manifest/manifest-list-crafted01-0000-0000-0000-000000000000-9", d.table);
    CHECK(tu_file_exists(cl) && tu_file_exists(cm) && tu_file_exists(cll));
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result res;
    int rc = expire_all(t, 2, 0, &res, &e);
    if (rc) fprintf(stderr, "  %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) {
        CHECK_EQ_INT(res.expired, 7);
        CHECK_EQ_INT(res.clean.count[PM_K_CHANGELOG], 1);
        pm_clean_result_free(&res.clean);
    }
    CHECK(!tu_file_exists(cl));
    CHECK(!tu_file_exists(cm));
    CHECK(!tu_file_exists(cll));
    pm_table_free(t);
    tdir_remove(&d);
}

/* A bucket directory that is a symlink to a directory outside the table:
 * its data files are skipped, the real files outside survive. */
TEST(symlinked_bucket_dir_is_never_followed) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    char cmd[1200], bucket[300];
    snprintf(bucket, sizeof bucket, "%s/f1=10/bucket-1", d.table);
    snprintf(cmd, sizeof cmd, "mv '%s' '%s/bucket-1' && ln -s '%s/bucket-1' '%s'", bucket, d.outside, d.outside, bucket);
    CHECK(tu_sh(cmd) == 0);
    char *outside_before = tree(d.outside);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result res;
    CHECK_EQ_INT(expire_all(t, 4, 0, &res, &e), PAIMON_OK);
    CHECK(res.clean.n_skipped > 0);
    for (size_t i = 0; i < res.clean.n_skipped; i++) CHECK(strstr(res.clean.skipped[i].path, "bucket-1") != NULL);
    char *outside_after = tree(d.outside);
    CHECK_EQ_STR(outside_after, outside_before);
    free(outside_before);
    free(outside_after);
    pm_clean_result_free(&res.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

TEST(path_inside_rules) {
    pm_fileio *io = pm_fileio_local();
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    char p[600], why[700];
    snprintf(p, sizeof p, "%s/snapshot/snapshot-1", d.table);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 1);
    snprintf(p, sizeof p, "file:%s/snapshot/snapshot-1", d.table);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 1);
    snprintf(p, sizeof p, "%s/../outside/x", d.table);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 0);
    snprintf(p, sizeof p, "%s/./snapshot/x", d.table);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 0);
    snprintf(p, sizeof p, "%s//snapshot", d.table);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 0);
    snprintf(p, sizeof p, "%s", d.table);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 0);
    snprintf(p, sizeof p, "%sx/snapshot", d.table);   /* sibling with the same prefix */
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 0);
    snprintf(p, sizeof p, "%s/sentinel", d.outside);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 0);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ln -s '%s' '%s/link'", d.outside, d.table);
    CHECK(tu_sh(cmd) == 0);
    snprintf(p, sizeof p, "%s/link/x", d.table);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), 0);
    snprintf(p, sizeof p, "%s/nodir/x", d.table);
    CHECK_EQ_INT(pm_path_inside(io, d.table, p, why, sizeof why), -1);
    pm_fileio_destroy(io);
    tdir_remove(&d);
}

/* ---- dry run, threads ----------------------------------------------------------- */

TEST(dry_run_changes_nothing_and_matches_the_real_run) {
    tdir d;
    CHECK(tdir_make(&d, TAGGED) == 0);
    char *before = tree(d.table);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    pm_expire_result dry, real;
    CHECK_EQ_INT(expire_all(t, 4, 1, &dry, &e), PAIMON_OK);
    char *after = tree(d.table);
    CHECK_EQ_STR(after, before);
    CHECK_EQ_INT(dry.expired, 4);
    CHECK(dry.clean.n_paths > 0);
    CHECK_EQ_INT(expire_all(t, 1, 0, &real, &e), PAIMON_OK);
    for (int k = 0; k < PM_K__N; k++) {
        CHECK_EQ_INT(dry.clean.count[k], real.clean.count[k]);
        CHECK_EQ_INT(dry.clean.bytes[k], real.clean.bytes[k]);
    }
    for (size_t i = 0; i < dry.clean.n_paths; i++) CHECK(!tu_file_exists(tu_plan_path(&dry.clean, i, NULL)));
    pm_clean_result_free(&dry.clean);
    pm_clean_result_free(&real.clean);
    free(before);
    free(after);
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- a tag created while planning -------------------------------------------------- */

typedef struct hook_io { pm_fileio io; pm_fileio *inner; int tag_lists; char table[200]; } hook_io;
static pm_fileio_ops hook_ops;

static int hook_list(pm_fileio *io, const char *p, pm_dirent **o, size_t *n, pm_err *e) {
    hook_io *h = (hook_io *)io;
    size_t l = strlen(p);
    if (l >= 4 && !strcmp(p + l - 4, "/tag") && ++h->tag_lists == 2) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "cp '%s/snapshot/snapshot-2' '%s/tag/tag-late'", h->table, h->table);
        tu_sh(cmd);
    }
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

TEST(tag_created_while_planning_aborts) {
    tdir d;
    CHECK(tdir_make(&d, TAGGED) == 0);
    char *before = tree(d.table);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    hook_ops = (pm_fileio_ops){"file", hook_read, hook_list, hook_stat, hook_exists, hook_write, hook_create,
                               hook_remove, hook_remove_within, hook_mkdirs, hook_destroy, PM_IO_LOCAL, NULL, NULL};
    hook_io *h = calloc(1, sizeof *h);
    h->io.ops = &hook_ops;
    h->inner = t->io;
    snprintf(h->table, sizeof h->table, "%s", d.table);
    t->io = &h->io;
    pm_expire_result res;
    CHECK_EQ_INT(expire_all(t, 2, 0, &res, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "changed") != NULL);
    CHECK(h->tag_lists >= 3);
    char late[300];
    snprintf(late, sizeof late, "%s/tag/tag-late", d.table);
    CHECK(tu_file_exists(late));
    unlink(late);
    tu_check_tree_same(tree, d.table, before);
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- reads in parallel, each once ---------------------------------------------------- */

/* Snapshot and manifest-list reads are slowed down (a round trip, as on an
 * object store); with 4 threads expiration must have several in flight: one
 * request at a time made expiring 1000 snapshots on S3 take thousands of
 * round trips in a row. Snapshot existence checks and reads are counted. */
static pthread_mutex_t slow_mu = PTHREAD_MUTEX_INITIALIZER;
/* [0] snapshot files, [1] manifest lists */
static int slow_in_flight[2], slow_max_in_flight[2], snap_reads, snap_exists_calls;

static int snapshot_kind(const char *p) {
    return strstr(p, "/snapshot/snapshot-") ? 0 : strstr(p, "/manifest/manifest-list-") ? 1 : -1;
}

static int slow_read(pm_fileio *io, const char *p, pm_buf *o, pm_err *e) {
    int kind = snapshot_kind(p);
    if (kind >= 0) {
        pthread_mutex_lock(&slow_mu);
        if (kind == 0) snap_reads++;
        if (++slow_in_flight[kind] > slow_max_in_flight[kind]) slow_max_in_flight[kind] = slow_in_flight[kind];
        pthread_mutex_unlock(&slow_mu);
        struct timespec d = {0, 20 * 1000000L};
        nanosleep(&d, NULL);
    }
    int rc = pm_io_read_all(((hook_io *)io)->inner, p, o, e);
    if (kind >= 0) {
        pthread_mutex_lock(&slow_mu);
        slow_in_flight[kind]--;
        pthread_mutex_unlock(&slow_mu);
    }
    return rc;
}

static int counting_exists(pm_fileio *io, const char *p, int *x, pm_err *e) {
    if (snapshot_kind(p) == 0) {
        pthread_mutex_lock(&slow_mu);
        snap_exists_calls++;
        pthread_mutex_unlock(&slow_mu);
    }
    return pm_io_exists(((hook_io *)io)->inner, p, x, e);
}

static void slow_hook(paimon_table *t) {
    hook_ops = (pm_fileio_ops){"file", slow_read, hook_list, hook_stat, counting_exists, hook_write, hook_create,
                               hook_remove, hook_remove_within, hook_mkdirs, hook_destroy, PM_IO_LOCAL, NULL, NULL};
    hook_io *h = calloc(1, sizeof *h);
    h->io.ops = &hook_ops;
    h->inner = t->io;
    h->tag_lists = 100;   /* hook_list's tag creation never fires */
    t->io = &h->io;
}

TEST(expiration_reads_snapshots_and_lists_in_parallel) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    slow_hook(t);
    slow_max_in_flight[0] = slow_max_in_flight[1] = 0;
    pm_expire_result dry;
    CHECK_EQ_INT(expire_all(t, 4, 1, &dry, &e), PAIMON_OK);
    CHECK_EQ_INT(dry.expired, 5);
    CHECK(slow_max_in_flight[0] >= 2);   /* the snapshots (time rule) */
    CHECK(slow_max_in_flight[1] >= 2);   /* the expiring snapshots' lists */
    /* the same plan as one read at a time */
    slow_max_in_flight[0] = slow_max_in_flight[1] = 0;
    pm_expire_result one;
    CHECK_EQ_INT(expire_all(t, 1, 1, &one, &e), PAIMON_OK);
    CHECK_EQ_INT(slow_max_in_flight[0], 1);
    CHECK_EQ_INT(slow_max_in_flight[1], 1);
    CHECK_EQ_INT(one.clean.n_paths, dry.clean.n_paths);
    for (size_t i = 0; i < dry.clean.n_paths && i < one.clean.n_paths; i++) {
        int dk = -1, ok = -2;
        CHECK_EQ_STR(tu_plan_path(&dry.clean, i, &dk), tu_plan_path(&one.clean, i, &ok));
        CHECK_EQ_INT(dk, ok);
    }
    pm_clean_result_free(&dry.clean);
    pm_clean_result_free(&one.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

/* The time rule reads each snapshot once, without an existence check
 * before it (a HEAD then a GET per snapshot on an object store), and the
 * plan reuses what it read: 6 snapshots, 5 expiring. */
TEST(expiration_reads_each_snapshot_once_without_existence_checks) {
    tdir d;
    CHECK(tdir_make(&d, PK) == 0);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
    slow_hook(t);
    snap_exists_calls = snap_reads = 0;
    pm_expire_result dry;
    CHECK_EQ_INT(expire_all(t, 1, 1, &dry, &e), PAIMON_OK);
    CHECK_EQ_INT(dry.expired, 5);
    /* the hints' checks and the end's gap check, not one per snapshot */
    CHECK(snap_exists_calls < 5);
    /* each of the 6 once (the latest for its protection) */
    CHECK_EQ_INT(snap_reads, 6);
    pm_clean_result_free(&dry.clean);
    pm_table_free(t);
    tdir_remove(&d);
}

/* ---- fault injection -------------------------------------------------------------- */

/* The expiration under fault injection: frees its result. */
static int sweep_op(paimon_table *t, pm_err *e) {
    pm_expire_result r;
    int rc = expire_all(t, 1, 0, &r, e);
    if (!rc) pm_clean_result_free(&r.clean);
    return rc;
}

static void fault_sweep(const char *fixture, int crash) {
    static const tu_sweep sweep = {tdir_make, tdir_remove, tree, sweep_op, 20, "tree differs from an undisturbed run"};
    tu_fault_sweep(&sweep, fixture, crash);
}

TEST(fault_at_every_operation_pk) { fault_sweep(PK, 0); }
TEST(crash_at_every_operation_pk) { fault_sweep(PK, 1); }
TEST(crash_at_every_operation_tag_and_branch) { fault_sweep(TAGGED, 1); }

int main(void) {
    RUN(expiration_reads_snapshots_and_lists_in_parallel);
    RUN(expiration_reads_each_snapshot_once_without_existence_checks);
    RUN(crafted_dotdot_name_is_refused);
    RUN(crafted_absolute_name_is_refused);
    RUN(crafted_extra_file_is_refused);
    RUN(external_path_outside_is_skipped);
    RUN(external_path_with_dotdot_is_skipped);
    RUN(external_path_inside_is_deleted);
    RUN(changelog_files_of_expired_snapshots_are_deleted);
    RUN(symlinked_bucket_dir_is_never_followed);
    RUN(path_inside_rules);
    RUN(dry_run_changes_nothing_and_matches_the_real_run);
    RUN(tag_created_while_planning_aborts);
    RUN(fault_at_every_operation_pk);
    RUN(crash_at_every_operation_pk);
    RUN(crash_at_every_operation_tag_and_branch);
    return TEST_SUMMARY();
}
