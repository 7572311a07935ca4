/* Index-file changes in commits (pm_commit_with_index): the new index
 * manifest is the latest one combined with the changes (Java
 * IndexManifestFileHandler, paimon-format.md §7.5), checked record by record
 * with python3-avro (spec/support/index_manifest_check.py); conflicts; the
 * index manifest of a failed attempt is removed. Temp copies of Java-written
 * tables. */
#include "test.h"
#include "pm_commit.h"
#include "pm_fileio_fault.h"
#include "pm_partition_ops.h"

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define DV "cpp-parquet-pk_table_scan_and_read_dv/pk_table_scan_and_read_dv.db/pk_table_scan_and_read_dv"
#define UNAWARE "cpp-parquet-append_table_with_append_pt_branch/append_table_with_append_pt_branch.db/" \
                "append_table_with_append_pt_branch"
#define BTREE "cpp-parquet-append_with_btree_with_partition/append_with_btree_with_partition.db/" \
              "append_with_btree_with_partition"

/* ---- temp copies, shell ------------------------------------------------------ */

typedef tu_copy tcopy;

#define TMP_PREFIX "/tmp/pm_test_commit_index."

static int copy_fixture(tcopy *c, const char *rel) { return tu_copy_make(c, TMP_PREFIX, rel); }

static void remove_copy(tcopy *c) { tu_copy_remove(c, TMP_PREFIX); }

/* A temp copy of the fixture rel, opened (tu_copy_open): NULL when it fails. */
static paimon_table *open_fixture_copy(tcopy *c, const char *rel) { return tu_copy_open(c, TMP_PREFIX, rel); }

/* Sorted listing of TABLE/manifest (hidden files too). */
static char *manifest_listing(const tcopy *c) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -A '%s/manifest' | sort", c->table);
    return tu_sh_out(cmd, NULL);
}

/* index_manifest_check.py diff TABLE OLD NEW changes...: exit status; the
 * added records (canonical JSON lines) in *out when out != NULL. */
static int py_diff_to(const tcopy *c, int64_t old_id, int64_t new_id, const char *changes, char **out,
                      int quiet) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/index_manifest_check.py diff '%s' %lld %lld %s%s",
             c->table, (long long)old_id, (long long)new_id, changes, quiet ? " 2>/dev/null" : "");
    int st = -1;
    char *o = tu_sh_out(cmd, &st);
    if (out) *out = o;
    else free(o);
    return st;
}

static int py_diff(const tcopy *c, int64_t old_id, int64_t new_id, const char *changes, char **out) {
    return py_diff_to(c, old_id, new_id, changes, out, 0);
}

static paimon_table *open_copy(const tcopy *c) { return tu_open_table(c->table); }

/* Index manifest file name of snapshot id (malloc'd; NULL if none). */
static char *index_manifest_of(paimon_table *t, int64_t id) {
    pm_snapshot *s = tu_read_snap(t, id);
    char *n = s && s->index_manifest ? pm_strdup(s->index_manifest) : NULL;
    pm_snapshot_free(s);
    return n;
}

static char *commit_kind_of(paimon_table *t, int64_t id) {
    pm_snapshot *s = tu_read_snap(t, id);
    char *n = s && s->commit_kind ? pm_strdup(s->commit_kind) : NULL;
    pm_snapshot_free(s);
    return n;
}

/* Partition bytes and a live data file name of partition `path` ("f1=20/")
 * in the latest snapshot. */
static int live_file_in(paimon_table *t, const char *path, pm_buf *part, char *name, size_t name_len) {
    pm_snapshot *s = tu_read_snap(t, tu_latest_id(t));
    if (!s) return -1;
    pm_scan *sc;
    pm_err e;
    int found = -1;
    if (pm_scan_open(t, s, NULL, &sc, &e)) { pm_snapshot_free(s); return -1; }
    const pm_manifest_entry *m;
    pm_buf p = {0};
    while (found < 0 && pm_scan_next(sc, &m, &e) == PAIMON_OK) {
        p.len = 0;
        if (pm_table_partition_path(t, m->partition, &p, &e)) break;
        if (!strcmp((char *)p.data, path)) {
            part->len = 0;
            pm_buf_append(part, m->partition.ptr, m->partition.len);
            snprintf(name, name_len, "%s", m->file.file_name);
            found = 0;
        }
    }
    pm_buf_free(&p);
    pm_scan_close(sc);
    pm_snapshot_free(s);
    return found;
}

/* Copies of the index entries of snapshot id (into arena). */
static size_t read_index(paimon_table *t, int64_t id, pm_arena *a, pm_index_entry *out, size_t max) {
    char *name = index_manifest_of(t, id);
    if (!name) return 0;
    pm_manifest_reader *r;
    pm_err e;
    size_t n = 0;
    if (pm_table_open_manifest(t, name, PM_INDEX_MANIFEST, &r, &e) == PAIMON_OK) {
        const pm_index_entry *x;
        while (n < max && pm_manifest_next_index(r, &x, &e) == PAIMON_OK)
            if (pm_index_entry_copy(a, x, &out[n]) == 0) n++;
        pm_manifest_close(r);
    }
    free(name);
    return n;
}

/* ---- index entries ------------------------------------------------------------ */

typedef struct tix {
    pm_index_entry x;
    pm_buf part;
    char name[128], type[64], data_file[160];
    pm_dv_range dv;
} tix;

static void tix_init(tix *ix, int kind, const pm_buf *part, int bucket, const char *type, const char *name,
                     const char *data_file) {
    memset(ix, 0, sizeof *ix);
    pm_buf_append(&ix->part, part->data, part->len);
    snprintf(ix->name, sizeof ix->name, "%s", name);
    snprintf(ix->type, sizeof ix->type, "%s", type);
    ix->x.version = 1;
    ix->x.kind = kind;
    ix->x.partition = (pm_bytes){ix->part.data, ix->part.len};
    ix->x.bucket = bucket;
    ix->x.index_type = ix->type;
    ix->x.file_name = ix->name;
    ix->x.file_size = 31;
    ix->x.row_count = data_file ? 1 : 0;
    if (data_file) {
        snprintf(ix->data_file, sizeof ix->data_file, "%s", data_file);
        ix->dv = (pm_dv_range){ix->data_file, 1, 22, {1, 1}};
        ix->x.has_dv_ranges = 1;
        ix->x.n_dv_ranges = 1;
        ix->x.dv_ranges = &ix->dv;
    }
}

static void tix_free(tix *ix) { pm_buf_free(&ix->part); }

static void opts_for(paimon_table *t, pm_commit_opts *o) {
    pm_commit_opts_from_table(t, o);
    o->commit_user = "test-commit-index";
    o->min_retry_wait_ms = 1;
    o->max_retry_wait_ms = 2;
}

/* ---- tests ----------------------------------------------------------------------- */

/* Bucketed deletion vectors: ADD a DV file for a new bucket, then DELETE it
 * again; the index manifest goes 2 -> 3 -> 2 records, data unchanged. */
TEST(index_add_then_delete) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, DV);
    if (!t) return;
    int64_t base = tu_latest_id(t);
    CHECK_EQ_INT(base, 6);
    char *old_ix = index_manifest_of(t, base);
    CHECK(old_ix != NULL);
    pm_buf part = {0};
    char data[160] = "";
    CHECK(live_file_in(t, "f1=20/", &part, data, sizeof data) == 0);
    tix add;
    tix_init(&add, PM_FILE_ADD, &part, 0, "DELETION_VECTORS", "index-test-add-0", data);
    pm_commit_opts o;
    opts_for(t, &o);
    pm_err e;
    int64_t id = 0;
    int rc = tu_commit_with_index(t, NULL, 0, &add.x, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, base + 1);
    char *kind = commit_kind_of(t, id);
    CHECK_EQ_STR(kind, "OVERWRITE");   /* Java: an append with deletion vectors */
    free(kind);
    char *new_ix = index_manifest_of(t, id);
    CHECK(new_ix && old_ix && strcmp(new_ix, old_ix) != 0);
    CHECK(new_ix && !strncmp(new_ix, "index-manifest-", 15));
    char *added = NULL;
    CHECK_EQ_INT(py_diff(&c, base, id, "+index-test-add-0", &added), 0);
    /* the record python read carries what we committed */
    char want[400];
    snprintf(want, sizeof want, "\"f0\": \"%s\"", data);
    CHECK(added && strstr(added, want) != NULL);
    CHECK(added && strstr(added, "\"_BUCKET\": 0") != NULL);
    CHECK(added && strstr(added, "\"_INDEX_TYPE\": \"DELETION_VECTORS\"") != NULL);
    free(added);
    /* a diff that claims something else fails (the check can fail) */
    CHECK(py_diff_to(&c, base, id, "", NULL, 1) != 0);

    /* DELETE it again: back to the records of the base snapshot */
    tix del = add;
    del.x.kind = PM_FILE_DELETE;
    int64_t id2 = 0;
    rc = tu_commit_with_index(t, NULL, 0, &del.x, 1, &o, &id2, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id2, base + 2);
    kind = commit_kind_of(t, id2);
    CHECK_EQ_STR(kind, "OVERWRITE");
    free(kind);
    CHECK_EQ_INT(py_diff(&c, id, id2, "-index-test-add-0", NULL), 0);
    CHECK_EQ_INT(py_diff(&c, base, id2, "", NULL), 0);
    char *ix2 = index_manifest_of(t, id2);
    CHECK(ix2 && new_ix && strcmp(ix2, new_ix) != 0);
    free(ix2);

    /* a commit without index changes reuses the latest index manifest */
    pm_snapshot *s = tu_read_snap(t, id2);
    int64_t id3 = 0;
    rc = tu_commit(t, NULL, 0, &o, &id3, &e);
    CHECK_EQ_INT(rc, PAIMON_OK);
    char *ix3 = index_manifest_of(t, id3);
    CHECK(s && ix3 && s->index_manifest && !strcmp(ix3, s->index_manifest));
    free(ix3);
    pm_snapshot_free(s);

    free(new_ix);
    free(old_ix);
    tix_free(&add);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* Bucketed: (partition, bucket, type) is the key. DELETE old + ADD new
 * replaces; an ADD alone for an occupied bucket overwrites (Java
 * BucketedCombiner). */
TEST(index_bucketed_replace) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, DV);
    if (!t) return;
    pm_arena *a = pm_arena_new(4096);
    pm_index_entry cur[8];
    size_t n = read_index(t, 6, a, cur, 8);
    CHECK_EQ_INT(n, 2);
    if (n != 2) { pm_arena_free(a); pm_table_free(t); remove_copy(&c); return; }
    /* cur[0]: f1=10 bucket 1, cur[1]: f1=10 bucket 0 (fixture order) */
    const pm_index_entry *b0 = cur[0].bucket == 0 ? &cur[0] : &cur[1];
    const pm_index_entry *b1 = cur[0].bucket == 0 ? &cur[1] : &cur[0];
    pm_buf part = {0};
    pm_buf_append(&part, b0->partition.ptr, b0->partition.len);
    pm_index_entry v[2];
    v[0] = *b0;
    v[0].kind = PM_FILE_DELETE;
    tix nw;
    tix_init(&nw, PM_FILE_ADD, &part, 0, "DELETION_VECTORS", "index-test-replace-0",
             b0->dv_ranges ? b0->dv_ranges[0].data_file : "x");
    v[1] = nw.x;
    pm_commit_opts o;
    opts_for(t, &o);
    pm_err e;
    int64_t id = 0;
    int rc = tu_commit_with_index(t, NULL, 0, v, 2, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    char ch[300];
    snprintf(ch, sizeof ch, "-%s +index-test-replace-0", b0->file_name);
    CHECK_EQ_INT(py_diff(&c, 6, id, ch, NULL), 0);

    /* ADD alone into bucket 1: overwrites the bucket's entry */
    tix ov;
    tix_init(&ov, PM_FILE_ADD, &part, 1, "DELETION_VECTORS", "index-test-overwrite-1",
             b1->dv_ranges ? b1->dv_ranges[0].data_file : "x");
    int64_t id2 = 0;
    rc = tu_commit_with_index(t, NULL, 0, &ov.x, 1, &o, &id2, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    snprintf(ch, sizeof ch, "-%s +index-test-overwrite-1", b1->file_name);
    CHECK_EQ_INT(py_diff(&c, id, id2, ch, NULL), 0);

    tix_free(&nw);
    tix_free(&ov);
    pm_buf_free(&part);
    pm_arena_free(a);
    pm_table_free(t);
    remove_copy(&c);
}

/* A DELETE of an index file the latest index manifest does not list is a
 * conflict; nothing is written. */
TEST(index_delete_unknown_conflicts) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, DV);
    if (!t) return;
    pm_arena *a = pm_arena_new(4096);
    pm_index_entry cur[8];
    size_t n = read_index(t, 6, a, cur, 8);
    CHECK_EQ_INT(n, 2);
    char *before = manifest_listing(&c);
    pm_buf part = {0};
    pm_buf_append(&part, cur[0].partition.ptr, cur[0].partition.len);
    tix bad;
    tix_init(&bad, PM_FILE_DELETE, &part, cur[0].bucket, "DELETION_VECTORS", "index-nope-0", NULL);
    pm_commit_opts o;
    opts_for(t, &o);
    pm_err e;
    int64_t id = 0;
    int rc = tu_commit_with_index(t, NULL, 0, &bad.x, 1, &o, &id, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "index-nope-0") != NULL);
    CHECK(strstr(e.msg, "not in the index manifest") != NULL);
    /* the right file name in the wrong bucket does not match either */
    pm_index_entry wrong = cur[0];
    wrong.kind = PM_FILE_DELETE;
    wrong.bucket = cur[0].bucket + 7;
    rc = tu_commit_with_index(t, NULL, 0, &wrong, 1, &o, &id, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    /* a DELETE of a listed file next to the bad one: still refused as a whole */
    pm_index_entry both[2] = {cur[0], bad.x};
    both[0].kind = PM_FILE_DELETE;
    rc = tu_commit_with_index(t, NULL, 0, both, 2, &o, &id, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK_EQ_INT(tu_latest_id(t), 6);
    char *after = manifest_listing(&c);
    CHECK(before && after && !strcmp(before, after));
    free(before);
    free(after);
    tix_free(&bad);
    pm_buf_free(&part);
    pm_arena_free(a);
    pm_table_free(t);
    remove_copy(&c);
}

/* ---- failed attempts ------------------------------------------------------------ */

static const pm_fileio_ops *hook_orig;
static pm_fileio_ops hook_ops;
static int hook_lists_fail;     /* writes of manifest lists fail */
static int hook_snapshots_taken;

static int hook_write(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    if (hook_lists_fail && strstr(path, "/manifest/manifest-list-"))
        return pm_fail(e, PAIMON_IO, "%s: simulated write failure", path);
    return hook_orig->write_atomic(io, path, p, n, e);
}

static int hook_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    if (hook_snapshots_taken && strstr(path, "/snapshot/snapshot-"))
        return pm_fail(e, PAIMON_EXISTS, "%s: already exists (simulated concurrent commit)", path);
    return hook_orig->create_no_replace(io, path, p, n, e);
}

static void hook_install(paimon_table *t, int lists_fail, int snapshots_taken) {
    hook_orig = t->io->ops;
    hook_ops = *hook_orig;
    hook_ops.write_atomic = hook_write;
    hook_ops.create_no_replace = hook_create;
    hook_lists_fail = lists_fail;
    hook_snapshots_taken = snapshots_taken;
    t->io->ops = &hook_ops;
}

static void hook_remove(paimon_table *t) { t->io->ops = hook_orig; }

/* The index manifest of an attempt that fails (a later write fails; the
 * snapshot id is always taken) is removed with the attempt's other files;
 * then the commit goes through. Also every single write failing in turn
 * (fault FileIO): afterwards manifest/ is exactly as before. */
TEST(index_failed_attempt_removed) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, DV);
    if (!t) return;
    char *before = manifest_listing(&c);
    pm_buf part = {0};
    char data[160] = "";
    CHECK(live_file_in(t, "f1=20/", &part, data, sizeof data) == 0);
    tix add;
    tix_init(&add, PM_FILE_ADD, &part, 0, "DELETION_VECTORS", "index-test-fail-0", data);
    pm_commit_opts o;
    opts_for(t, &o);
    pm_err e;
    int64_t id = 0;

    /* 1. the manifest list write after the index manifest fails */
    hook_install(t, 1, 0);
    int rc = tu_commit_with_index(t, NULL, 0, &add.x, 1, &o, &id, &e);
    hook_remove(t);
    CHECK_EQ_INT(rc, PAIMON_IO);
    char *after = manifest_listing(&c);
    CHECK(before && after && !strcmp(before, after));
    if (after && before && strcmp(before, after)) fprintf(stderr, "  left: %s\n", after);
    free(after);

    /* 2. every attempt loses the race for the snapshot id */
    o.max_retries = 2;
    hook_install(t, 0, 1);
    rc = tu_commit_with_index(t, NULL, 0, &add.x, 1, &o, &id, &e);
    hook_remove(t);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    after = manifest_listing(&c);
    CHECK(before && after && !strcmp(before, after));
    free(after);
    CHECK_EQ_INT(tu_latest_id(t), 6);

    /* 3. the k-th write fails, for every k until the commit succeeds */
    int succeeded = 0, failures = 0;
    for (long k = 1; k < 20 && !succeeded; k++) {
        pm_fileio *orig = t->io;
        t->io = pm_fileio_fault_new(orig, PM_FAULT_WRITE, k, 0);
        rc = tu_commit_with_index(t, NULL, 0, &add.x, 1, &o, &id, &e);
        t->io = pm_fileio_fault_release(t->io);
        if (rc == PAIMON_OK) { succeeded = 1; break; }
        failures++;
        CHECK_EQ_INT(rc, PAIMON_IO);
        after = manifest_listing(&c);
        CHECK(before && after && !strcmp(before, after));
        free(after);
        CHECK_EQ_INT(tu_latest_id(t), 6);
    }
    CHECK(succeeded);
    CHECK(failures >= 2);   /* index manifest, base list, ... */
    CHECK_EQ_INT(id, 7);
    CHECK_EQ_INT(py_diff(&c, 6, 7, "+index-test-fail-0", NULL), 0);
    free(before);
    tix_free(&add);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* Deletion vectors of a bucket-unaware table are keyed by file name: an
 * ADD of a listed name, or a second DV for a data file, is a conflict;
 * DELETE then ADD in one commit moves a data file's DV. */
TEST(index_unaware_dv_by_name) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, UNAWARE);
    if (!t) return;
    int64_t base = tu_latest_id(t);
    pm_buf part = {0};
    char data[160] = "";
    pm_buf p = {0};
    /* any partition with a live file */
    pm_snapshot *s = tu_read_snap(t, base);
    pm_scan *sc;
    pm_err e;
    const pm_manifest_entry *m;
    if (s && pm_scan_open(t, s, NULL, &sc, &e) == PAIMON_OK) {
        if (pm_scan_next(sc, &m, &e) == PAIMON_OK) {
            pm_buf_append(&part, m->partition.ptr, m->partition.len);
            snprintf(data, sizeof data, "%s", m->file.file_name);
        }
        pm_scan_close(sc);
    }
    pm_snapshot_free(s);
    pm_buf_free(&p);
    CHECK(part.len > 0);
    tix a1, a2, a3;
    tix_init(&a1, PM_FILE_ADD, &part, 0, "DELETION_VECTORS", "index-unaware-1", data);
    tix_init(&a2, PM_FILE_ADD, &part, 0, "DELETION_VECTORS", "index-unaware-2", data);
    tix_init(&a3, PM_FILE_ADD, &part, 0, "DELETION_VECTORS", "index-unaware-3", data);
    pm_commit_opts o;
    opts_for(t, &o);
    int64_t id = 0;
    int rc = tu_commit_with_index(t, NULL, 0, &a1.x, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    int64_t id1 = id;
    /* the same name again */
    rc = tu_commit_with_index(t, NULL, 0, &a1.x, 1, &o, &id, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "already added") != NULL);
    /* a second DV for the same data file */
    rc = tu_commit_with_index(t, NULL, 0, &a2.x, 1, &o, &id, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK(strstr(e.msg, data) != NULL);
    CHECK_EQ_INT(tu_latest_id(t), id1);
    /* DELETE 1 then ADD 3 for the same data file: fine */
    pm_index_entry v[2] = {a1.x, a3.x};
    v[0].kind = PM_FILE_DELETE;
    rc = tu_commit_with_index(t, NULL, 0, v, 2, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(py_diff(&c, id1, id, "-index-unaware-1 +index-unaware-3", NULL), 0);
    /* ADD 2 before DELETE 3 in one commit: sequential, so a conflict */
    pm_index_entry w[2] = {a2.x, a3.x};
    w[1].kind = PM_FILE_DELETE;
    rc = tu_commit_with_index(t, NULL, 0, w, 2, &o, &id, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    tix_free(&a1);
    tix_free(&a2);
    tix_free(&a3);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* Global (btree) indexes are keyed by file name; an added file may not
 * overlap the row range of a retained one for the same field (Java
 * GlobalIndexCombiner). The fixture has two files per (field, row range). */
TEST(index_global_overlap) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, BTREE);
    if (!t) return;
    int64_t base = tu_latest_id(t);
    pm_arena *a = pm_arena_new(1 << 14);
    pm_index_entry cur[64];
    size_t n = read_index(t, base, a, cur, 64);
    CHECK(n > 1 && cur[0].has_global_index);
    if (n < 2 || !cur[0].has_global_index) { pm_arena_free(a); pm_table_free(t); remove_copy(&c); return; }
    /* the files with cur[0]'s field and row range */
    pm_index_entry same[8];
    size_t n_same = 0;
    for (size_t i = 0; i < n && n_same < 8; i++)
        if (cur[i].has_global_index && cur[i].global_index.index_field_id == cur[0].global_index.index_field_id &&
            cur[i].global_index.row_range_start == cur[0].global_index.row_range_start)
            same[n_same++] = cur[i];
    CHECK(n_same >= 2);
    pm_index_entry nx = cur[0];
    nx.file_name = "btree-global-index-test.index";
    pm_commit_opts o;
    opts_for(t, &o);
    pm_err e;
    int64_t id = 0;
    int rc = tu_commit_with_index(t, NULL, 0, &nx, 1, &o, &id, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "overlaps the row range") != NULL);
    /* deleting only one of the overlapping files is not enough */
    pm_index_entry v[9];
    v[0] = same[0];
    v[0].kind = PM_FILE_DELETE;
    v[1] = nx;
    rc = tu_commit_with_index(t, NULL, 0, v, 2, &o, &id, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK_EQ_INT(tu_latest_id(t), base);
    /* replacing all of them (DELETEs + ADD) is fine */
    pm_buf ch = {0};
    for (size_t i = 0; i < n_same; i++) {
        v[i] = same[i];
        v[i].kind = PM_FILE_DELETE;
        pm_buf_printf(&ch, "-%s ", same[i].file_name);
    }
    v[n_same] = nx;
    pm_buf_printf(&ch, "+btree-global-index-test.index");
    pm_buf_cstr(&ch);
    rc = tu_commit_with_index(t, NULL, 0, v, n_same + 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    if (!rc) {
        char *kind = commit_kind_of(t, id);
        CHECK_EQ_STR(kind, "OVERWRITE");
        free(kind);
        CHECK_EQ_INT(py_diff(&c, base, id, (char *)ch.data, NULL), 0);
    }
    pm_buf_free(&ch);
    pm_arena_free(a);
    pm_table_free(t);
    remove_copy(&c);
}

TEST(index_misuse) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, DV);
    if (!t) return;
    pm_buf part = {0};
    char data[160] = "";
    CHECK(live_file_in(t, "f1=20/", &part, data, sizeof data) == 0);
    tix x;
    tix_init(&x, PM_FILE_ADD, &part, 0, "DELETION_VECTORS", "index-misuse-0", data);
    pm_commit_opts o;
    opts_for(t, &o);
    pm_err e;
    int64_t id;
    pm_index_entry b = x.x;
    b.kind = 7;
    CHECK_EQ_INT(tu_commit_with_index(t, NULL, 0, &b, 1, &o, &id, &e), PAIMON_MISUSE);
    b = x.x;
    b.index_type = "";
    CHECK_EQ_INT(tu_commit_with_index(t, NULL, 0, &b, 1, &o, &id, &e), PAIMON_MISUSE);
    b = x.x;
    b.file_name = "../index-x";
    CHECK_EQ_INT(tu_commit_with_index(t, NULL, 0, &b, 1, &o, &id, &e), PAIMON_MISUSE);
    pm_buf empty = {0};
    pm_binrow_encode(NULL, 0, NULL, &empty, &e);
    b = x.x;
    b.partition = (pm_bytes){empty.data, empty.len};
    CHECK_EQ_INT(tu_commit_with_index(t, NULL, 0, &b, 1, &o, &id, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(tu_commit_with_index(t, NULL, 0, NULL, 1, &o, &id, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(tu_latest_id(t), 6);
    pm_buf_free(&empty);
    tix_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* ---- drop partitions -------------------------------------------------------------- */

/* A concurrent writer that replaces the deletion-vector file of (f1=10,
 * bucket 0) right when the drop's commit reads the latest snapshot: the
 * drop's index DELETE no longer matches (conflict), the drop re-plans and
 * deletes the new DV file instead. */
static const pm_fileio_ops *dhook_orig;
static pm_fileio_ops dhook_ops;
static const char *dhook_table;
static int dhook_reads, dhook_fired;

static void replace_dv(void) {
    paimon_table *o = NULL;
    pm_err e;
    if (pm_table_open(dhook_table, NULL, &o, &e)) return;
    pm_arena *a = pm_arena_new(4096);
    pm_index_entry cur[8];
    size_t n = read_index(o, tu_latest_id(o), a, cur, 8);
    for (size_t i = 0; i < n; i++) {
        if (cur[i].bucket != 0) continue;
        pm_index_entry v[2] = {cur[i], cur[i]};
        v[0].kind = PM_FILE_DELETE;
        v[1].file_name = "index-concurrent-0";
        pm_commit_opts co;
        pm_commit_opts_from_table(o, &co);
        co.commit_user = "concurrent-writer";
        int64_t id;
        if (tu_commit_with_index(o, NULL, 0, v, 2, &co, &id, &e) == PAIMON_OK) dhook_fired++;
        else fprintf(stderr, "  concurrent commit: %s\n", e.msg);
        break;
    }
    pm_arena_free(a);
    pm_table_free(o);
}

static int dhook_read(pm_fileio *io, const char *path, pm_buf *out, pm_err *e) {
    size_t l = strlen(path);
    if (l >= 16 && !strcmp(path + l - 16, "/snapshot/LATEST") && ++dhook_reads == 2 && !dhook_fired) replace_dv();
    return dhook_orig->read_all(io, path, out, e);
}

TEST(drop_retries_after_concurrent_dv_change) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, DV);
    if (!t) return;
    const char *k[] = {"f1"}, *v[] = {"10"};
    pm_partition_filter f = {1, k, v};
    pm_part_select sel = {1, &f, 0, NULL, 0};
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    pm_drop_result r;
    pm_err e = {0};
    /* dry run: the plan names both DV files, nothing is written */
    char *before = manifest_listing(&c);
    o.dry_run = 1;
    CHECK_EQ_INT(pm_drop_partitions(t, &sel, &o, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.index_files, 2);
    CHECK(r.refused == NULL);
    CHECK_EQ_INT(r.snapshot_id, 0);
    pm_drop_result_free(&r);
    char *after = manifest_listing(&c);
    CHECK(before && after && !strcmp(before, after));
    free(after);
    free(before);
    o.dry_run = 0;

    dhook_orig = t->io->ops;
    dhook_ops = *dhook_orig;
    dhook_ops.read_all = dhook_read;
    dhook_table = c.table;
    dhook_reads = dhook_fired = 0;
    t->io->ops = &dhook_ops;
    int rc = pm_drop_partitions(t, &sel, &o, &r, &e);
    t->io->ops = dhook_orig;
    if (rc) fprintf(stderr, "  drop: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(dhook_fired, 1);
    CHECK_EQ_INT(r.attempts, 2);             /* the index DELETE conflicted once */
    CHECK_EQ_INT(r.snapshot_id, 8);          /* 7 is the concurrent DV change */
    CHECK_EQ_INT(r.index_files, 2);
    CHECK_EQ_INT(r.commits, 1);
    pm_drop_result_free(&r);
    char *kind = commit_kind_of(t, 8);
    CHECK_EQ_STR(kind, "OVERWRITE");
    free(kind);
    /* 7 = 6 with bucket 0's file replaced; 8 = empty */
    pm_arena *a = pm_arena_new(4096);
    pm_index_entry cur[8];
    size_t n6 = read_index(t, 6, a, cur, 8);
    const char *b0 = NULL, *b1 = NULL;
    for (size_t i = 0; i < n6; i++) {
        if (cur[i].bucket == 0) b0 = cur[i].file_name;
        else b1 = cur[i].file_name;
    }
    CHECK(b0 && b1);
    char ch[300];
    snprintf(ch, sizeof ch, "-%s +index-concurrent-0", b0 ? b0 : "?");
    CHECK_EQ_INT(py_diff(&c, 6, 7, ch, NULL), 0);
    snprintf(ch, sizeof ch, "-index-concurrent-0 -%s", b1 ? b1 : "?");
    CHECK_EQ_INT(py_diff(&c, 7, 8, ch, NULL), 0);
    pm_arena_free(a);
    pm_table_free(t);
    remove_copy(&c);
}

/* Every single I/O operation of a drop (reads, listings, writes, removes)
 * fails in turn: a failed drop leaves manifest/ exactly as before (its
 * index manifest included) and no snapshot; the drop run again lands one
 * OVERWRITE snapshot whose index manifest is the old one minus f1=10's. */
TEST(drop_faults_leave_no_index_manifest) {
    tcopy c;
    CHECK(copy_fixture(&c, DV) == 0);
    char pristine[400];
    snprintf(pristine, sizeof pristine, "%s/pristine", c.dir);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp -R '%s' '%s'", c.table, pristine);
    CHECK(system(cmd) == 0);
    const char *k[] = {"f1"}, *v[] = {"10"};
    pm_partition_filter f = {1, k, v};
    pm_part_select sel = {1, &f, 0, NULL, 0};
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    o.max_attempts = 1;
    o.retry_wait_ms = 1;
    unsigned kinds = PM_FAULT_READ | PM_FAULT_LIST | PM_FAULT_STAT | PM_FAULT_EXISTS | PM_FAULT_WRITE |
                     PM_FAULT_REMOVE;
    char *before = manifest_listing(&c);
    int failed = 0, done = 0, committed = 0;
    for (long at = 1; at < 400 && !done; at++) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -R '%s' '%s'", c.table, pristine, c.table);
        if (system(cmd) != 0) { CHECK(0); break; }
        paimon_table *t = open_copy(&c);
        if (!t) { CHECK(0); break; }
        pm_fileio *orig = t->io;
        t->io = pm_fileio_fault_new(orig, kinds, at, 0);
        pm_drop_result r;
        pm_err e = {0};
        int rc = pm_drop_partitions(t, &sel, &o, &r, &e);
        long ops = pm_fileio_fault_count(t->io);
        t->io = pm_fileio_fault_release(t->io);
        pm_drop_result_free(&r);
        if (ops < at) done = 1;                 /* the fault never fired */
        if (rc != PAIMON_OK) {
            failed++;
            int64_t lid = tu_latest_id(t);
            char *after = manifest_listing(&c);
            if (lid != 6) committed++;
            if (lid == 6) {
                CHECK(before && after && !strcmp(before, after));
                if (before && after && strcmp(before, after))
                    fprintf(stderr, "  fault at op %ld (%s) left:\n%s\n", at, e.msg, after);
            }
            free(after);
            /* run it again without faults */
            rc = pm_drop_partitions(t, &sel, &o, &r, &e);
            pm_drop_result_free(&r);
            if (rc) fprintf(stderr, "  re-run after fault at op %ld: %s\n", at, e.msg);
        }
        CHECK_EQ_INT(rc, PAIMON_OK);
        CHECK_EQ_INT(tu_latest_id(t), 7);
        if (at == 1 || done) {
            pm_arena *a = pm_arena_new(4096);
            pm_index_entry cur[8];
            size_t n6 = read_index(t, 6, a, cur, 8);
            CHECK_EQ_INT(n6, 2);
            char ch[300];
            snprintf(ch, sizeof ch, "-%s -%s", n6 > 0 ? cur[0].file_name : "?", n6 > 1 ? cur[1].file_name : "?");
            CHECK_EQ_INT(py_diff(&c, 6, 7, ch, NULL), 0);
            pm_arena_free(a);
        } else {
            pm_arena *a = pm_arena_new(4096);
            pm_index_entry cur[8];
            CHECK_EQ_INT(read_index(t, 7, a, cur, 8), 0);
            char *ix = index_manifest_of(t, 7);
            CHECK(ix != NULL);
            free(ix);
            pm_arena_free(a);
        }
        pm_table_free(t);
    }
    CHECK(done);
    CHECK(failed > 5);
    printf("# drop with index files: %d failed drops (%d after their snapshot was created); every other one "
           "left manifest/ as before\n", failed, committed);
    free(before);
    remove_copy(&c);
}

int main(void) {
    RUN(index_add_then_delete);
    RUN(index_bucketed_replace);
    RUN(index_delete_unknown_conflicts);
    RUN(index_failed_attempt_removed);
    RUN(index_unaware_dv_by_name);
    RUN(index_global_overlap);
    RUN(index_misuse);
    RUN(drop_retries_after_concurrent_dv_change);
    RUN(drop_faults_leave_no_index_manifest);
    return TEST_SUMMARY();
}
