/* Helpers shared by the C tests (included from test.h, so a change here
 * rebuilds every test): shell commands and their output, temp copies of the
 * Java-written fixtures, file-tree listings, small file I/O, fake ADD
 * entries, snapshot lookups, string sets, changelog lists added to a
 * fixture and the fault sweep of the maintenance tests.
 * Everything is static inline and prefixed tu_: each test is one
 * translation unit and uses what it needs. */
#ifndef PM_TEST_UTIL_H
#define PM_TEST_UTIL_H
#include "pm_avro.h"
#include "pm_commit.h"
#include "pm_expire.h"
#include "pm_fileio_fault.h"
#include "pm_set.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- shell -------------------------------------------------------------------- */

/* Runs a shell command: 0 when it exits 0, else -1. */
static inline int tu_sh(const char *cmd) { return system(cmd) == 0 ? 0 : -1; }

/* stdout of a shell command (malloc'd, NUL-terminated; NULL if it cannot be
 * started); *status = exit status when status != NULL. */
static inline char *tu_sh_out(const char *cmd, int *status) {
    FILE *p = popen(cmd, "r");
    if (!p) return NULL;
    pm_buf b = {0};
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, p)) > 0) pm_buf_append(&b, chunk, k);
    int st = pclose(p);
    if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    pm_buf_cstr(&b);
    return b.data ? (char *)b.data : pm_strdup("");
}

/* "checksum size path" lines for every file below dir, sorted by path
 * (symlinks followed when follow_links); "" when it cannot run. */
static inline char *tu_tree(const char *dir, int follow_links) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd '%s' && find %s. -type f -exec cksum {} + | LC_ALL=C sort -k3", dir,
             follow_links ? "-L " : "");
    char *s = tu_sh_out(cmd, NULL);
    return s ? s : pm_strdup("");
}

/* CHECKs that the tree of dir (by `tree`, e.g. tu_tree) is still `before`;
 * frees before. */
static inline void tu_check_tree_same(char *(*tree)(const char *dir), const char *dir, char *before) {
    char *after = tree(dir);
    CHECK_EQ_STR(after, before);
    free(before);
    free(after);
}

/* ---- temp directories ---------------------------------------------------------- */

/* /dev/shm when it is a writable directory (fsync is free there), else /tmp. */
static inline const char *tu_tmp_base(void) {
    struct stat st;
    return stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

/* cp -R of the fixture PAIMON_FIXTURES/paimon-java/<rel> to dest: 0 or -1. */
static inline int tu_cp_fixture(const char *rel, const char *dest) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp -R '%s/paimon-java/%s' '%s'", fixtures_dir(), rel, dest);
    return tu_sh(cmd);
}

/* A temp directory `dir` (from the template prefix + "XXXXXX", e.g.
 * "/tmp/pm_test_orphan.") holding a copy of the fixture
 * PAIMON_FIXTURES/paimon-java/<rel> at `table` = dir/t; `outside` = dir/outside
 * (not created). */
typedef struct tu_copy { char dir[128]; char table[200]; char outside[200]; } tu_copy;

static inline int tu_copy_make(tu_copy *c, const char *prefix, const char *rel) {
    snprintf(c->dir, sizeof c->dir, "%sXXXXXX", prefix);
    if (!mkdtemp(c->dir)) return -1;
    snprintf(c->table, sizeof c->table, "%s/t", c->dir);
    snprintf(c->outside, sizeof c->outside, "%s/outside", c->dir);
    return tu_cp_fixture(rel, c->table);
}

/* rm -rf of c->dir, only when it starts with prefix. */
static inline void tu_copy_remove(const tu_copy *c, const char *prefix) {
    char cmd[300];
    if (strncmp(c->dir, prefix, strlen(prefix))) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (tu_sh(cmd)) fprintf(stderr, "cannot remove %s\n", c->dir);
}

/* A fresh empty directory from the template prefix + "XXXXXX" (malloc'd). */
static inline char *tu_make_tmpdir(const char *prefix) {
    char tmpl[256];
    snprintf(tmpl, sizeof tmpl, "%sXXXXXX", prefix);
    char *d = mkdtemp(tmpl);
    return d ? pm_strdup(d) : NULL;
}

/* Removes path and everything below it (symlinks are not followed). */
static inline void tu_rm_rf(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char p[1024];
            if (snprintf(p, sizeof p, "%s/%s", path, de->d_name) >= (int)sizeof p) continue;   /* cannot name it */
            tu_rm_rf(p);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* ---- files ---------------------------------------------------------------------- */

/* Path i of a dry run's plan (and its kind, if asked): a string that lives
 * until the 8th call after this one (two plans compared side by side). */
static inline const char *tu_plan_path(const pm_clean_result *r, size_t i, int *kind) {
    static pm_buf ring[8];
    static unsigned next;
    pm_buf *b = &ring[next++ % 8];
    const char *p = pm_plan_path(r->plan, i, b, kind, NULL);
    return p ? p : "(no such path)";
}

static inline int tu_file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* Writes n bytes to path (replacing it): 0, or -1 when opening, writing or
 * closing fails. */
static inline int tu_write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* ---- tables and snapshots -------------------------------------------------------- */

static inline paimon_table *tu_open_table(const char *path) {
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(path, NULL, &t, &e)) { fprintf(stderr, "  open: %s\n", e.msg); return NULL; }
    return t;
}

/* tu_copy_make and tu_open_table of its copy, both CHECKed: the table, or
 * NULL (and the copy removed). */
static inline paimon_table *tu_copy_open(tu_copy *c, const char *prefix, const char *rel) {
    CHECK(tu_copy_make(c, prefix, rel) == 0);
    paimon_table *t = tu_open_table(c->table);
    CHECK(t != NULL);
    if (!t) tu_copy_remove(c, prefix);
    return t;
}

/* Latest snapshot id of the table's branch, -1 on error. */
static inline int64_t tu_latest_id(paimon_table *t) {
    int64_t id = -1;
    pm_err e;
    if (pm_snapshot_latest_id(t->io, t->branch_root, &id, &e)) return -1;
    return id;
}

static inline pm_snapshot *tu_read_snap(paimon_table *t, int64_t id) {
    pm_snapshot *s = NULL;
    pm_err e;
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) {
        fprintf(stderr, "  read snapshot %lld: %s\n", (long long)id, e.msg);
        return NULL;
    }
    return s;
}

/* ---- fake data files ---------------------------------------------------------------- */

/* Fills *m (zeroed first) as an ADD entry for a fake data file of `rows`
 * rows with "unknown" stats: `empty` is an encoded empty row (min/max keys
 * and values), value stats columns [] (none), sequence numbers 0..rows-1. */
static inline void tu_fake_add(pm_manifest_entry *m, pm_bytes partition, pm_bytes empty, int bucket,
                               int total_buckets, const char *name, int64_t size, int64_t rows,
                               int64_t creation_time) {
    memset(m, 0, sizeof *m);
    m->version = 2;
    m->kind = PM_FILE_ADD;
    m->partition = partition;
    m->bucket = bucket;
    m->total_buckets = total_buckets;
    pm_data_file *f = &m->file;
    f->file_name = name;
    f->file_size = size;
    f->row_count = rows;
    f->min_key = f->max_key = empty;
    f->key_stats.min_values = f->key_stats.max_values = empty;
    f->key_stats.has_null_counts = 1;
    f->value_stats.min_values = f->value_stats.max_values = empty;
    f->value_stats.has_null_counts = 1;
    f->has_value_stats_cols = 1;          /* [] = no column stats */
    f->max_sequence_number = rows - 1;
    f->creation_time = (pm_opt_i64){1, creation_time};
    f->delete_row_count = (pm_opt_i64){1, 0};
    f->file_source = (pm_opt_i32){1, 0};
}

/* Creates (empty, with its directories) every file an ADD entry or index
 * ADD entry names that is not there yet, straight on the local file system
 * (never through t->io: fault-injection counts stay as they were). The
 * committer refuses to publish a snapshot naming a file that does not
 * exist, so fake entries need their files. 0, or -1. */
static inline int tu_touch_adds(const paimon_table *t, const pm_manifest_entry *v, size_t n,
                                const pm_index_entry *ix, size_t n_ix) {
    pm_buf p = {0};
    pm_err e;
    int rc = 0;
    if ((n && !v) || (n_ix && !ix)) return 0;   /* misuse: pm_commit says so */
    for (size_t i = 0; i < n + n_ix && !rc; i++) {
        if (i < n ? v[i].kind != PM_FILE_ADD : ix[i - n].kind != PM_FILE_ADD) continue;
        if (i < n ? pm_data_file_full_path(t, &v[i], &p, &e) : pm_index_file_path(t, &ix[i - n], &p, &e)) continue;
        char *path = (char *)p.data;
        if (strstr(path, "://") || tu_file_exists(path)) continue;
        for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {   /* mkdir -p of the directory */
            *s = '\0';
            mkdir(path, 0755);
            *s = '/';
        }
        rc = tu_write_file(path, "", 0);
    }
    pm_buf_free(&p);
    return rc;
}

/* pm_commit / pm_commit_with_index of fake entries: their files created
 * first (tu_touch_adds). */
static inline int tu_commit_with_index(paimon_table *t, const pm_manifest_entry *v, size_t n,
                                       const pm_index_entry *ix, size_t n_ix, const pm_commit_opts *o, int64_t *id,
                                       pm_err *e) {
    if (t && tu_touch_adds(t, v, n, ix, n_ix)) return pm_fail(e, PAIMON_IO, "test: cannot create the entries' files");
    return pm_commit_with_index(t, v, n, ix, n_ix, o, id, e);
}

static inline int tu_commit(paimon_table *t, const pm_manifest_entry *v, size_t n, const pm_commit_opts *o,
                            int64_t *id, pm_err *e) {
    return tu_commit_with_index(t, v, n, NULL, 0, o, id, e);
}

/* An ADD entry that owns its partition bytes, empty row and name: bucket
 * of 2 buckets, 1234 bytes. */
typedef struct tentry {
    pm_manifest_entry m;
    pm_buf part, empty;
    char name[160];
} tentry;

static inline void tentry_init_at(tentry *x, const uint8_t *part, size_t plen, int bucket, const char *name,
                                  int64_t rows, int64_t creation_time) {
    memset(x, 0, sizeof *x);
    pm_err e;
    pm_buf_append(&x->part, part, plen);
    pm_binrow_encode(NULL, 0, NULL, &x->empty, &e);
    snprintf(x->name, sizeof x->name, "%s", name);
    tu_fake_add(&x->m, (pm_bytes){x->part.data, x->part.len}, (pm_bytes){x->empty.data, x->empty.len}, bucket, 2,
                x->name, 1234, rows, creation_time);
}

static inline void tentry_free(tentry *x) {
    pm_buf_free(&x->part);
    pm_buf_free(&x->empty);
}

/* ---- string sets ------------------------------------------------------------------- */

/* A set of strings that keeps the order of first insertion (v[0..n)). */
typedef struct tu_strset { pm_set *set; char **v; size_t n, cap; } tu_strset;

static inline void tu_ss_add(tu_strset *s, const char *str) {
    if (!s->set) s->set = pm_set_new();
    if (pm_set_add(s->set, str, strlen(str)) != 1) return;
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = pm_strdup(str);
}

static inline int tu_ss_has(const tu_strset *s, const char *str) {
    return s->set && pm_set_contains(s->set, str, strlen(str));
}

static inline void tu_ss_free(tu_strset *s) {
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    pm_set_free(s->set);
    memset(s, 0, sizeof *s);
}

/* ---- changelogs ------------------------------------------------------------------- */

/* One Avro record (a manifest entry, else a manifest-list meta) as a whole
 * file at path; *size = its length when size != NULL. */
static inline int tu_write_avro_file(const char *path, const char *schema, const void *rec, int is_entry, int64_t *size, pm_err *e) {
    pm_avro_writer *w;
    pm_buf file = {0};
    int rc = pm_avro_writer_open(schema, "null", 0, &w, e);
    if (!rc) rc = is_entry ? pm_manifest_write_entry(w, rec, e) : pm_manifest_write_meta(w, rec, e);
    if (!rc) rc = pm_avro_writer_finish(w, &file, e);
    else pm_avro_writer_abort(w);
    if (!rc) rc = tu_write_file(path, file.data, file.len);
    if (size) *size = (int64_t)file.len;
    pm_buf_free(&file);
    return rc;
}

/* Snapshot id gets changelog list "manifest-list-cl-<id>" naming manifest
 * "manifest-cl-<id>" that adds changelog-cl-<id>.parquet (a copy of the
 * table's first entry, renamed): its file text is edited, not rewritten,
 * so what Java wrote stays. */
static inline int tu_add_changelog(const char *table, paimon_table *t, int64_t id, pm_err *e) {
    pm_snapshot *s = NULL, *latest = NULL;
    int64_t lid;
    int rc = pm_snapshot_read(t->io, t->root, id, &s, e);
    if (!rc) rc = pm_snapshot_latest_id(t->io, t->root, &lid, e);
    if (!rc) rc = pm_snapshot_read(t->io, t->root, lid, &latest, e);
    pm_mfile *mv = NULL;
    size_t mn = 0;
    if (!rc) rc = pm_read_manifest_list(t, latest->base_manifest_list, &mv, &mn, e);
    pm_manifest_reader *r = NULL;
    if (!rc) rc = pm_table_open_manifest(t, mv[0].name, PM_MANIFEST_FILE, &r, e);
    const pm_manifest_entry *m0;
    if (!rc) rc = pm_manifest_next_entry(r, &m0, e);
    char cname[64], mname[64], lname[64], path[700];
    snprintf(cname, sizeof cname, "changelog-cl-%lld.parquet", (long long)id);
    snprintf(mname, sizeof mname, "manifest-cl-%lld", (long long)id);
    snprintf(lname, sizeof lname, "manifest-list-cl-%lld", (long long)id);
    int64_t msize = 0;
    if (!rc) {
        pm_manifest_entry c = *m0;
        c.kind = PM_FILE_ADD;
        c.file.file_name = cname;
        c.file.extra_files.n = 0;
        snprintf(path, sizeof path, "%s/manifest/%s", table, mname);
        rc = tu_write_avro_file(path, PM_SCHEMA_MANIFEST_FILE, &c, 1, &msize, e);
        pm_buf rel = {0};
        if (!rc) rc = pm_table_file_path(t, &c, &rel, e);
        snprintf(path, sizeof path, "%s/%s", table, rel.data ? (char *)rel.data : "");
        /* of the size the entry records: verify checks it */
        char *bytes = calloc(1, c.file.file_size > 9 ? (size_t)c.file.file_size : 9);
        if (bytes) memcpy(bytes, "changelog", 9);
        if (!rc) rc = bytes ? tu_write_file(path, bytes, c.file.file_size > 9 ? (size_t)c.file.file_size : 9) : -1;
        free(bytes);
        pm_buf_free(&rel);
    }
    pm_manifest_close(r);
    pm_manifest_reader *lr = NULL;
    char lpath[700];
    snprintf(lpath, sizeof lpath, "%s/manifest/%s", table, latest ? latest->base_manifest_list : "");
    if (!rc) rc = pm_manifest_open(t->io, lpath, lpath, PM_MANIFEST_LIST, &lr, e);
    const pm_manifest_meta *mm;
    if (!rc) rc = pm_manifest_next_meta(lr, &mm, e);
    if (!rc) {
        pm_manifest_meta x = *mm;
        x.file_name = mname;
        x.file_size = msize;
        x.num_added_files = 1;
        x.num_deleted_files = 0;
        snprintf(path, sizeof path, "%s/manifest/%s", table, lname);
        rc = tu_write_avro_file(path, PM_SCHEMA_MANIFEST_LIST, &x, 0, NULL, e);
    }
    pm_manifest_close(lr);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "sed -i 's/\"changelogManifestList\" : null/\"changelogManifestList\" : \"%s\"/' '%s/snapshot/snapshot-%lld'",
             lname, table, (long long)id);
    if (!rc && tu_sh(cmd)) rc = pm_fail(e, PAIMON_IO, "sed failed");
    pm_mfiles_free(mv, mn);
    pm_snapshot_free(s);
    pm_snapshot_free(latest);
    return rc;
}

/* ---- fault sweeps of the maintenance operations ------------------------------------- */

/* A maintenance operation under test on a temp copy of a fixture. */
typedef struct tu_sweep {
    int (*make)(tu_copy *d, const char *fixture);   /* the temp copy */
    void (*remove)(tu_copy *d);
    char *(*tree)(const char *dir);                  /* the state compared */
    int (*op)(paimon_table *t, pm_err *e);          /* runs it (and frees its result) */
    long min_ops;                                    /* an undisturbed run does more I/O operations */
    const char *differs;                             /* message when a tree differs */
} tu_sweep;

/* PAIMON_FAULT_SWEEP=sample (make test's sanitizer pass, several times
 * slower): a sweep of n fault points runs the first and last 16 and about
 * 48 evenly spread between; otherwise (the plain pass) every point. */
static inline int tu_sweep_sampled(void) {
    const char *s = getenv("PAIMON_FAULT_SWEEP");
    return s && !strcmp(s, "sample");
}

static inline int tu_sweep_point(long k, long n) {
    if (!tu_sweep_sampled() || n <= 80 || k <= 16 || k > n - 16) return 1;
    return k % ((n - 32) / 48 + 1) == 0;
}

/* The next k of a sweep whose length is known only at its end (the run
 * the fault no longer hits): geometric steps from 16 on when sampled. */
static inline long tu_sweep_next(long k) { return tu_sweep_sampled() && k >= 16 ? k + k / 16 : k + 1; }

/* Tree after an undisturbed run on a copy of the fixture, and its op count. */
static inline char *tu_sweep_clean_run(const tu_sweep *s, const char *fixture, long *ops) {
    tu_copy d;
    if (s->make(&d, fixture)) return NULL;
    paimon_table *t;
    pm_err e;
    char *res = NULL;
    if (pm_table_open(d.table, NULL, &t, &e) == 0) {
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, 0, 0);
        if (s->op(t, &e) == 0) {
            *ops = pm_fileio_fault_count(t->io);
            res = s->tree(d.table);
        }
        pm_table_free(t);
    }
    s->remove(&d);
    return res;
}

/* For every k, the k-th I/O operation fails (once, or as a crash when every
 * later one fails too); a re-run without faults then leaves exactly the
 * tree of an undisturbed run. */
static inline void tu_fault_sweep(const tu_sweep *s, const char *fixture, int crash) {
    long ops = 0;
    char *want = tu_sweep_clean_run(s, fixture, &ops);
    CHECK(want != NULL);
    CHECK(ops > s->min_ops);
    if (!want) return;
    int bad = 0;
    for (long k = 1; k <= ops && bad < 3; k++) {
        if (!tu_sweep_point(k, ops)) continue;
        tu_copy d;
        if (s->make(&d, fixture)) { CHECK(0); break; }
        paimon_table *t;
        pm_err e;
        CHECK_EQ_INT(pm_table_open(d.table, NULL, &t, &e), PAIMON_OK);
        t->io = pm_fileio_fault_new(t->io, PM_FAULT_ALL, k, crash);
        s->op(t, &e);
        t->io = pm_fileio_fault_release(t->io);
        /* the re-run without faults finishes the job */
        if (s->op(t, &e)) {
            fprintf(stderr, "  fault at op %ld (crash %d): re-run failed: %s\n", k, crash, e.msg);
            bad++;
        }
        pm_table_free(t);
        char *got = s->tree(d.table);
        if (strcmp(got, want)) {
            fprintf(stderr, "  fault at op %ld (crash %d): %s\n--- got\n%s--- want\n%s", k, crash, s->differs, got,
                    want);
            bad++;
        }
        free(got);
        s->remove(&d);
    }
    CHECK_EQ_INT(bad, 0);
    free(want);
}
#endif
