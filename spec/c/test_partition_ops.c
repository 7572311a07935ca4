/* Partition entries, drop partitions (mark-delete OVERWRITE commits,
 * retries on conflicts) and partition expiration through the CLI, on tables
 * built here by committing ADD entries of fake data files with pm_commit. */
#include "test.h"
#include "pm_commit.h"
#include "pm_partition_ops.h"
#include "pm_partition_expire.h"
#include "paimon.h"

#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ----------------------------------------------------------------- */

typedef struct ttable { char dir[256]; char path[300]; paimon_table *t; } ttable;

static const char *SCHEMA_ONE =
    "{\n  \"version\" : 3,\n  \"id\" : 0,\n  \"fields\" : [ {\n    \"id\" : 0,\n    \"name\" : \"id\",\n"
    "    \"type\" : \"INT\"\n  }, {\n    \"id\" : 1,\n    \"name\" : \"dt\",\n    \"type\" : \"STRING\"\n  } ],\n"
    "  \"highestFieldId\" : 1,\n  \"partitionKeys\" : [ \"dt\" ],\n  \"primaryKeys\" : [ ],\n"
    "  \"options\" : {\n    \"bucket\" : \"-1\",\n    \"file.format\" : \"parquet\"\n  },\n"
    "  \"timeMillis\" : 1764000000000\n}";

static const char *SCHEMA_TWO =
    "{\n  \"version\" : 3,\n  \"id\" : 0,\n  \"fields\" : [ {\n    \"id\" : 0,\n    \"name\" : \"id\",\n"
    "    \"type\" : \"INT\"\n  }, {\n    \"id\" : 1,\n    \"name\" : \"dt\",\n    \"type\" : \"STRING\"\n  }, {\n"
    "    \"id\" : 2,\n    \"name\" : \"hr\",\n    \"type\" : \"INT\"\n  } ],\n"
    "  \"highestFieldId\" : 2,\n  \"partitionKeys\" : [ \"dt\", \"hr\" ],\n  \"primaryKeys\" : [ ],\n"
    "  \"options\" : {\n    \"bucket\" : \"-1\",\n    \"file.format\" : \"parquet\"\n  },\n"
    "  \"timeMillis\" : 1764000000000\n}";

static int make_table(ttable *x, const char *schema) {
    memset(x, 0, sizeof *x);
    strcpy(x->dir, "/tmp/pm_test_partops.XXXXXX");
    if (!mkdtemp(x->dir)) return -1;
    snprintf(x->path, sizeof x->path, "%s/t", x->dir);
    char p[400];
    snprintf(p, sizeof p, "%s/schema", x->path);
    if (mkdir(x->path, 0755) || mkdir(p, 0755)) return -1;
    snprintf(p, sizeof p, "%s/schema/schema-0", x->path);
    FILE *f = fopen(p, "w");
    if (!f) return -1;
    fputs(schema, f);
    fclose(f);
    pm_err e;
    if (pm_table_open(x->path, NULL, &x->t, &e)) { fprintf(stderr, "  open: %s\n", e.msg); return -1; }
    return 0;
}

static void drop_table(ttable *x) {
    pm_table_free(x->t);
    x->t = NULL;
    if (!strncmp(x->dir, "/tmp/pm_test_partops.", 21)) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", x->dir);
        if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", x->dir);
    }
}

/* make_table, CHECKed: -1 (the table dropped again) when it has no table. */
static int begin_table(ttable *x, const char *schema) {
    CHECK(make_table(x, schema) == 0);
    if (!x->t) { drop_table(x); return -1; }
    return 0;
}

/* An ADD entry of a fake data file (a tentry, test_util.h); partition values
 * as text ("dt" or "dt|hr" for the two-key table; hr is an INT). */
static void tentry_init(tentry *x, paimon_table *t, const char *values, const char *name, int64_t rows,
                        int64_t ctime) {
    memset(x, 0, sizeof *x);
    pm_err e;
    pm_datum v[2];
    memset(v, 0, sizeof v);
    char dt[64];
    snprintf(dt, sizeof dt, "%s", values);
    char *bar = strchr(dt, '|');
    if (bar) *bar = '\0';
    v[0].v.bin.ptr = (const uint8_t *)dt;
    v[0].v.bin.len = strlen(dt);
    v[0].is_null = !strcmp(dt, "NULL");
    if (t->n_part > 1) v[1].v.i = bar ? atoi(bar + 1) : 0;
    pm_binrow_encode(t->part_types, t->n_part, v, &x->part, &e);
    pm_binrow_encode(NULL, 0, NULL, &x->empty, &e);
    snprintf(x->name, sizeof x->name, "%s", name);
    tu_fake_add(&x->m, (pm_bytes){x->part.data, x->part.len}, (pm_bytes){x->empty.data, x->empty.len}, 0, -1,
                x->name, 1000 + rows, rows, ctime);
}

static int64_t wall_now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    time_t s = tv.tv_sec;
    struct tm lt;
    int64_t off = localtime_r(&s, &lt) ? (int64_t)lt.tm_gmtoff : 0;
    return ((int64_t)tv.tv_sec + off) * 1000 + tv.tv_usec / 1000;
}

/* Commit ADD entries: values[i] / names[i] / rows / creation times. */
static int commit_adds(paimon_table *t, size_t n, const char *const *values, const char *const *names,
                       const int64_t *ctimes, int64_t *id) {
    tentry *x = calloc(n, sizeof *x);
    pm_manifest_entry *m = calloc(n, sizeof *m);
    for (size_t i = 0; i < n; i++) {
        tentry_init(&x[i], t, values[i], names[i], (int64_t)(i + 1), ctimes ? ctimes[i] : wall_now());
        m[i] = x[i].m;
    }
    pm_commit_opts o;
    pm_commit_opts_from_table(t, &o);
    o.commit_user = "builder";
    pm_err e = {0};
    int rc = tu_commit(t, m, n, &o, id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    for (size_t i = 0; i < n; i++) tentry_free(&x[i]);
    free(x);
    free(m);
    return rc;
}

/* "path name\n" lines of the live files of a snapshot, sorted by scan order. */
static int live(paimon_table *t, int64_t id, pm_buf *out) {
    out->len = 0;
    pm_snapshot *s = NULL;
    pm_err e;
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) return -1;
    pm_scan *sc;
    int n = 0;
    if (pm_scan_open(t, s, NULL, &sc, &e)) { pm_snapshot_free(s); return -1; }
    const pm_manifest_entry *m;
    pm_buf p = {0};
    int rc;
    while ((rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) {
        p.len = 0;
        pm_table_file_path(t, m, &p, &e);
        pm_buf_printf(out, "%s\n", (char *)p.data);
        n++;
    }
    pm_buf_free(&p);
    pm_scan_close(sc);
    pm_snapshot_free(s);
    pm_buf_cstr(out);
    return rc == PAIMON_DONE ? n : -1;
}

static const char *snap_kind(paimon_table *t, int64_t id, char *buf, size_t cap) {
    pm_snapshot *s = NULL;
    pm_err e;
    buf[0] = '\0';
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e) == PAIMON_OK) snprintf(buf, cap, "%s", s->commit_kind);
    pm_snapshot_free(s);
    return buf;
}

static pm_part_select spec1(pm_partition_filter *f, const char **k, const char **v, size_t n) {
    f->n = n;
    f->keys = k;
    f->values = v;
    pm_part_select s = {1, f, 0, NULL, 0};
    return s;
}

static const char *const VALS3[] = {"2026-01-01", "2026-01-01", "2026-11-28", "bogus"};
static const char *const NAMES3[] = {"data-a-0.parquet", "data-a-1.parquet", "data-b-0.parquet", "data-c-0.parquet"};

/* ---- tests -------------------------------------------------------------------- */

TEST(entries_and_drop) {
    ttable x;
    if (begin_table(&x, SCHEMA_ONE)) return;
    int64_t id = 0;
    CHECK_EQ_INT(commit_adds(x.t, 4, VALS3, NAMES3, NULL, &id), PAIMON_OK);
    pm_snapshot *s = NULL;
    pm_err e = {0};
    CHECK_EQ_INT(pm_snapshot_read(x.t->io, x.t->branch_root, id, &s, &e), PAIMON_OK);
    pm_part_stat *v = NULL;
    size_t n = 0;
    CHECK_EQ_INT(pm_partition_entries(x.t, s, NULL, &v, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 3);
    if (n == 3) {
        CHECK_EQ_STR(v[0].path, "dt=2026-01-01/");
        CHECK_EQ_INT(v[0].file_count, 2);
        CHECK_EQ_INT(v[0].record_count, 3);
        CHECK_EQ_INT(v[0].file_size, 2003);
        CHECK_EQ_STR(v[1].path, "dt=2026-11-28/");
        CHECK_EQ_STR(v[2].path, "dt=bogus/");
        CHECK(v[2].has_creation_time);
    }
    pm_part_stats_free(v, n);
    pm_snapshot_free(s);

    /* dry run: plan, nothing written */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd '%s' && find . -type f | sort | xargs md5sum", x.path);
    char *before = tu_sh_out(cmd, NULL);
    pm_partition_filter f;
    const char *k[] = {"dt"}, *val[] = {"2026-01-01"};
    pm_part_select sel = spec1(&f, k, val, 1);
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    o.dry_run = 1;
    pm_drop_result r;
    CHECK_EQ_INT(pm_drop_partitions(x.t, &sel, &o, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.files, 2);
    CHECK_EQ_INT(r.rows, 3);
    CHECK_EQ_INT(r.snapshot_id, 0);
    CHECK_EQ_INT(r.base_snapshot_id, id);
    CHECK_EQ_INT(r.n_parts, 1);
    pm_drop_result_free(&r);
    char *after = tu_sh_out(cmd, NULL);
    CHECK(before && after && !strcmp(before, after));
    free(after);

    /* the real drop: one OVERWRITE snapshot, the other partitions stay */
    o.dry_run = 0;
    CHECK_EQ_INT(pm_drop_partitions(x.t, &sel, &o, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.snapshot_id, id + 1);
    CHECK_EQ_INT(r.files, 2);
    CHECK_EQ_INT(r.attempts, 1);
    pm_drop_result_free(&r);
    char kind[32];
    CHECK_EQ_STR(snap_kind(x.t, id + 1, kind, sizeof kind), "OVERWRITE");
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, id + 1, &names), 2);
    CHECK(names.data && !strstr((char *)names.data, "dt=2026-01-01/"));
    CHECK(names.data && strstr((char *)names.data, "dt=bogus/bucket-0/data-c-0.parquet"));
    /* the independent reader agrees */
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files 2>&1", x.path);
    int st = -1;
    char *py = tu_sh_out(cmd, &st);
    CHECK_EQ_INT(st, 0);
    CHECK(py && !strstr(py, "data-a-0") && !strstr(py, "data-a-1") && strstr(py, "data-b-0") && strstr(py, "data-c-0"));
    free(py);

    /* again: nothing matches, no snapshot */
    CHECK_EQ_INT(pm_drop_partitions(x.t, &sel, &o, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.files, 0);
    CHECK_EQ_INT(r.snapshot_id, 0);
    pm_drop_result_free(&r);
    CHECK_EQ_INT(tu_latest_id(x.t), id + 1);

    /* exact bytes + a spec in one snapshot */
    tentry te;
    tentry_init(&te, x.t, "bogus", "x", 1, 0);
    pm_bytes exact = {te.part.data, te.part.len};
    const char *val2[] = {"2026-11-28"};
    f.values = val2;
    pm_part_select sel2 = {1, &f, 1, &exact, 0};
    CHECK_EQ_INT(pm_drop_partitions(x.t, &sel2, &o, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.files, 2);
    CHECK_EQ_INT(r.n_parts, 2);
    CHECK_EQ_INT(r.snapshot_id, id + 2);
    pm_drop_result_free(&r);
    CHECK_EQ_INT(live(x.t, id + 2, &names), 0);
    tentry_free(&te);

    /* misuse: unknown column, empty spec */
    const char *bad[] = {"nope"};
    f.keys = bad;
    CHECK_EQ_INT(pm_drop_partitions(x.t, &sel, &o, &r, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "'nope'") != NULL);
    f.n = 0;
    CHECK_EQ_INT(pm_drop_partitions(x.t, &sel, &o, &r, &e), PAIMON_MISUSE);
    pm_buf_free(&names);
    free(before);
    drop_table(&x);
}

TEST(drop_partial_spec_two_keys) {
    ttable x;
    if (begin_table(&x, SCHEMA_TWO)) return;
    static const char *const vals[] = {"2026-01-01|1", "2026-01-01|2", "2026-01-02|1", "2026-01-02|2"};
    static const char *const nm[] = {"data-11.parquet", "data-12.parquet", "data-21.parquet", "data-22.parquet"};
    int64_t id = 0;
    CHECK_EQ_INT(commit_adds(x.t, 4, vals, nm, NULL, &id), PAIMON_OK);
    pm_partition_filter f;
    const char *k[] = {"hr"}, *v[] = {"1"};
    pm_part_select sel = spec1(&f, k, v, 1);
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    pm_drop_result r;
    pm_err e = {0};
    CHECK_EQ_INT(pm_drop_partitions(x.t, &sel, &o, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.files, 2);
    CHECK_EQ_INT(r.n_parts, 2);
    if (r.n_parts == 2) {
        CHECK_EQ_STR(r.parts[0].path, "dt=2026-01-01/hr=1/");
        CHECK_EQ_STR(r.parts[1].path, "dt=2026-01-02/hr=1/");
    }
    pm_drop_result_free(&r);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, tu_latest_id(x.t), &names), 2);
    CHECK(names.data && strstr((char *)names.data, "data-12") && strstr((char *)names.data, "data-22"));
    pm_buf_free(&names);
    drop_table(&x);
}

/* ---- concurrency: a FileIO that lets another writer commit first ------------- */

static const pm_fileio_ops *orig_ops;
static pm_fileio_ops hook_ops;
static const char *hook_table;
static int hook_mode;        /* 1: delete a file before our first snapshot; 2: always append first;
                                3: append into the dropped partition before pm_commit reads LATEST */
static int hook_fired, latest_reads;

static int concurrent_commit(int mode) {
    paimon_table *o = NULL;
    pm_err e;
    if (pm_table_open(hook_table, NULL, &o, &e)) return -1;
    int rc;
    int64_t id;
    if (mode == 1) {
        /* delete data-a-0 of dt=2026-01-01 (the ADD entry repeated as DELETE) */
        tentry d;
        tentry_init(&d, o, "2026-01-01", "data-a-0.parquet", 1, 0);
        /* the same identifier as the builder's entry: identical partition, bucket, level, name */
        d.m.kind = PM_FILE_DELETE;
        pm_commit_opts co;
        pm_commit_opts_from_table(o, &co);
        co.commit_user = "other";
        rc = tu_commit(o, &d.m, 1, &co, &id, &e);
        if (rc) fprintf(stderr, "  concurrent delete: %s\n", e.msg);
        tentry_free(&d);
    } else {
        char name[64];
        snprintf(name, sizeof name, "data-late-%d.parquet", hook_fired);
        const char *vals[] = {mode == 3 ? "2026-01-01" : "2026-11-28"};
        const char *names[] = {name};
        rc = commit_adds(o, 1, vals, names, NULL, &id);
    }
    pm_table_free(o);
    return rc;
}

static int hook_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    if (strstr(path, "/snapshot/snapshot-") && (hook_mode == 2 || (hook_mode == 1 && !hook_fired))) {
        hook_fired++;
        concurrent_commit(hook_mode);
    }
    return orig_ops->create_no_replace(io, path, p, n, e);
}

static int hook_read(pm_fileio *io, const char *path, pm_buf *out, pm_err *e) {
    size_t l = strlen(path);
    if (hook_mode == 3 && l >= 16 && !strcmp(path + l - 16, "/snapshot/LATEST")) {
        /* read 1: the drop's attempt; read 2: pm_commit's own latest */
        if (++latest_reads == 2 && !hook_fired) {
            hook_fired++;
            concurrent_commit(3);
        }
    }
    return orig_ops->read_all(io, path, out, e);
}

static void hook_install(paimon_table *t, const char *table, int mode) {
    orig_ops = t->io->ops;
    hook_ops = *orig_ops;
    hook_ops.create_no_replace = hook_create;
    hook_ops.read_all = hook_read;
    t->io->ops = &hook_ops;
    hook_table = table;
    hook_mode = mode;
    hook_fired = latest_reads = 0;
}

static void hook_remove(paimon_table *t) { t->io->ops = orig_ops; }

/* Commits the VALS3 entries (snapshot *id), then drops dt=2026-01-01 with
 * the hook of `mode` installed: pm_drop_partitions' code. */
static int drop_hooked(ttable *x, int64_t *id, int mode, pm_drop_opts *o, pm_drop_result *r, pm_err *e) {
    CHECK_EQ_INT(commit_adds(x->t, 4, VALS3, NAMES3, NULL, id), PAIMON_OK);
    pm_partition_filter f;
    const char *k[] = {"dt"}, *v[] = {"2026-01-01"};
    pm_part_select sel = spec1(&f, k, v, 1);
    hook_install(x->t, x->path, mode);
    int rc = pm_drop_partitions(x->t, &sel, o, r, e);
    hook_remove(x->t);
    return rc;
}

TEST(drop_retries_after_concurrent_delete) {
    ttable x;
    if (begin_table(&x, SCHEMA_ONE)) return;
    int64_t id = 0;
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    pm_drop_result r;
    pm_err e = {0};
    int rc = drop_hooked(&x, &id, 1, &o, &r, &e);
    if (rc) fprintf(stderr, "  drop: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(hook_fired, 1);
    CHECK_EQ_INT(r.attempts, 2);            /* the first attempt lost: re-scanned */
    CHECK_EQ_INT(r.files, 1);               /* only data-a-1 was still live */
    CHECK_EQ_INT(r.snapshot_id, id + 2);    /* id + 1 is the concurrent delete */
    pm_drop_result_free(&r);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, id + 2, &names), 2);
    CHECK(names.data && !strstr((char *)names.data, "2026-01-01"));
    pm_buf_free(&names);
    drop_table(&x);
}

TEST(drop_conflict_exhausted) {
    ttable x;
    if (begin_table(&x, SCHEMA_ONE)) return;
    int64_t id = 0;
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    o.max_attempts = 3;
    o.retry_wait_ms = 1;
    pm_drop_result r;
    pm_err e = {0};
    int rc = drop_hooked(&x, &id, 2, &o, &r, &e);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "after 3 attempts") != NULL);
    CHECK_EQ_INT(hook_fired, 3);
    pm_drop_result_free(&r);
    /* consistent: the three concurrent appends, no drop */
    CHECK_EQ_INT(tu_latest_id(x.t), id + 3);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, id + 3, &names), 7);
    CHECK(names.data && strstr((char *)names.data, "data-a-0"));
    pm_buf_free(&names);
    drop_table(&x);
}

TEST(drop_chases_concurrent_append) {
    ttable x;
    if (begin_table(&x, SCHEMA_ONE)) return;
    int64_t id = 0;
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    pm_drop_result r;
    pm_err e = {0};
    int rc = drop_hooked(&x, &id, 3, &o, &r, &e);
    if (rc) fprintf(stderr, "  drop: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(hook_fired, 1);
    CHECK_EQ_INT(r.commits, 2);             /* the late file needed a second snapshot */
    CHECK_EQ_INT(r.files, 3);
    CHECK_EQ_INT(r.snapshot_id, id + 3);
    pm_drop_result_free(&r);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, tu_latest_id(x.t), &names), 2);
    CHECK(names.data && !strstr((char *)names.data, "2026-01-01"));
    pm_buf_free(&names);
    drop_table(&x);
}

/* ---- expiration through the CLI ------------------------------------------------ */

static char *cli(const char *table, const char *args, int *status) {
    const char *b = getenv("PAIMON_BUILD");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s/paimon-lua' expire_partitions.lua '%s' %s 2>/dev/null", b ? b : "build", table, args);
    return tu_sh_out(cmd, status);
}

static void ymd(int64_t wall_ms, int dashes, char *out, size_t cap) {
    time_t s = (time_t)(wall_ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    snprintf(out, cap, dashes ? "%04d-%02d-%02d" : "%04d%02d%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

TEST(expire_values_time) {
    ttable x;
    if (begin_table(&x, SCHEMA_ONE)) return;
    char recent[32];
    ymd(wall_now() - 86400000LL, 1, recent, sizeof recent);   /* 2026-11-28 on 2026-11-29 */
    const char *vals[] = {"2026-01-01", "2026-01-01", recent, "bogus"};
    int64_t id = 0;
    CHECK_EQ_INT(commit_adds(x.t, 4, vals, NAMES3, NULL, &id), PAIMON_OK);
    int st = -1;
    char *out = cli(x.path, "--expiration-time 30d --dry-run --json", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "\"path\":\"dt=2026-01-01/\"") && strstr(out, "\"files\":2"));
    CHECK(out && strstr(out, "\"kind\":\"unparseable\"") && strstr(out, "dt=bogus/"));
    CHECK(out && strstr(out, "\"snapshot_id\":null"));
    free(out);
    CHECK_EQ_INT(tu_latest_id(x.t), id);
    out = cli(x.path, "--expiration-time 30d --json", &st);
    CHECK_EQ_INT(st, 0);
    char want[64];
    snprintf(want, sizeof want, "\"snapshot_id\":%lld", (long long)id + 1);
    CHECK(out && strstr(out, want) && strstr(out, "\"unparseable\":1") && strstr(out, "\"candidates\":1"));
    free(out);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, id + 1, &names), 2);
    CHECK(names.data && !strstr((char *)names.data, "2026-01-01") && strstr((char *)names.data, recent));
    /* decided from table state on every run: nothing more to expire */
    out = cli(x.path, "--expiration-time 30d --json", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "\"files\":0"));
    free(out);
    CHECK_EQ_INT(tu_latest_id(x.t), id + 1);
    /* the table option gives the default */
    out = cli(x.path, "--json", &st);
    CHECK_EQ_INT(st, 2);
    free(out);
    pm_buf_free(&names);
    drop_table(&x);
}

TEST(expire_formatter_and_max) {
    ttable x;
    if (begin_table(&x, SCHEMA_ONE)) return;
    char recent[32];
    ymd(wall_now() - 86400000LL, 0, recent, sizeof recent);
    const char *vals[] = {"20251201", "20260101", "20260201", recent, "2026-01-01"};
    const char *nm[] = {"d1.parquet", "d2.parquet", "d3.parquet", "d4.parquet", "d5.parquet"};
    int64_t id = 0;
    CHECK_EQ_INT(commit_adds(x.t, 5, vals, nm, NULL, &id), PAIMON_OK);
    int st = -1;
    char *out = cli(x.path, "--expiration-time 30d --timestamp-formatter yyyyMMdd --max-expires 2 --json", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "\"candidates\":3") && strstr(out, "\"limited\":true") && strstr(out, "\"files\":2"));
    CHECK(out && strstr(out, "dt=20251201/") && strstr(out, "dt=20260101/"));
    CHECK(out && strstr(out, "\"unparseable\":1"));   /* 2026-01-01 does not match yyyyMMdd */
    free(out);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, id + 1, &names), 3);
    CHECK(names.data && strstr((char *)names.data, "dt=20260201/") && !strstr((char *)names.data, "dt=20251201/"));
    /* a bad formatter is a usage error */
    out = cli(x.path, "--expiration-time 30d --timestamp-formatter 'yyyy-MMM-dd'", &st);
    CHECK_EQ_INT(st, 2);
    free(out);
    pm_buf_free(&names);
    drop_table(&x);
}

TEST(expire_update_time) {
    ttable x;
    if (begin_table(&x, SCHEMA_ONE)) return;
    int64_t now = wall_now();
    const char *vals[] = {"a", "a", "b", "c"};
    const char *nm[] = {"a0.parquet", "a1.parquet", "b0.parquet", "c0.parquet"};
    /* a: newest file 40 days old; b: 1 day old; c: 31 days old */
    const int64_t ct[] = {now - 50 * 86400000LL, now - 40 * 86400000LL, now - 86400000LL, now - 31 * 86400000LL};
    int64_t id = 0;
    CHECK_EQ_INT(commit_adds(x.t, 4, vals, nm, ct, &id), PAIMON_OK);
    int st = -1;
    char *out = cli(x.path, "--expiration-time 30d --strategy update-time --json", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "\"files\":3") && strstr(out, "dt=a/") && strstr(out, "dt=c/") && !strstr(out, "dt=b/"));
    free(out);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, id + 1, &names), 1);
    CHECK(names.data && strstr((char *)names.data, "b0.parquet"));
    pm_buf_free(&names);
    drop_table(&x);
}

TEST(null_partition_and_pattern) {
    ttable x;
    if (begin_table(&x, SCHEMA_TWO)) return;
    char recent[32];
    ymd(wall_now() - 86400000LL, 1, recent, sizeof recent);
    char r10[48];
    snprintf(r10, sizeof r10, "%s|10", recent);
    const char *vals[] = {"2026-01-01|10", r10, "NULL|3"};
    const char *nm[] = {"old.parquet", "new.parquet", "null.parquet"};
    int64_t id = 0;
    CHECK_EQ_INT(commit_adds(x.t, 3, vals, nm, NULL, &id), PAIMON_OK);
    /* values-time with a pattern over two columns; the null value is reported */
    int st = -1;
    char *out = cli(x.path, "--expiration-time 30d --timestamp-pattern '$dt $hr:00:00' --json", &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "\"candidates\":1") && strstr(out, "dt=2026-01-01/hr=10/"));
    CHECK(out && strstr(out, "\"unparseable\":1") && strstr(out, "is null"));
    free(out);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, id + 1, &names), 2);
    CHECK(names.data && !strstr((char *)names.data, "old.parquet"));
    /* the null partition is addressed by the default partition name */
    pm_partition_filter f;
    const char *k[] = {"dt"}, *v[] = {"__DEFAULT_PARTITION__"};
    pm_part_select sel = spec1(&f, k, v, 1);
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    pm_drop_result r;
    pm_err e = {0};
    CHECK_EQ_INT(pm_drop_partitions(x.t, &sel, &o, &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.files, 1);
    CHECK(r.n_parts == 1 && !strcmp(r.parts[0].path, "dt=__DEFAULT_PARTITION__/hr=3/"));
    pm_drop_result_free(&r);
    CHECK_EQ_INT(live(x.t, id + 2, &names), 1);
    CHECK(names.data && strstr((char *)names.data, "new.parquet"));
    pm_buf_free(&names);
    drop_table(&x);
}

/* ---- paimon_expire_partitions: the C face of the same rule --------------------- */

/* paimon_expire_partitions on table path with key=value options (NULL
 * ended): the result's JSON (malloc'd) or NULL, *rc the code. */
static char *capi(const char *path, const char *const *kv, int *rc) {
    paimon_table *t = NULL;
    char *err = NULL;
    *rc = paimon_table_open(path, NULL, &t, &err);
    if (*rc) { paimon_free(err); return NULL; }
    paimon_options *o = paimon_options_new();
    for (size_t i = 0; kv && kv[i]; i += 2) paimon_options_set(o, kv[i], kv[i + 1]);
    paimon_result *r = NULL;
    *rc = paimon_expire_partitions(t, o, &r);
    char *out = NULL;
    if (!*rc) {
        const char *j = paimon_result_json(r);
        out = j ? strdup(j) : NULL;
    }
    paimon_result_free(r);
    paimon_options_free(o);
    paimon_table_close(t);
    return out;
}

/* The integer after "key": in a JSON text; -1 if absent. */
static long long jint(const char *json, const char *key) {
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = json ? strstr(json, k) : NULL;
    if (!p) return -1;
    p += strlen(k);
    if (!strncmp(p, "true", 4)) return 1;
    if (!strncmp(p, "false", 5)) return 0;
    return strtoll(p, NULL, 10);
}

/* The Lua runner (expire_partitions.lua) and paimon_expire_partitions, both
 * dry runs with the same options: the same decision. */
static void same_plan(const char *path, const char *args, const char *const *kv) {
    int st = -1, rc = -1;
    char *lua = cli(path, args, &st);
    char *c = capi(path, kv, &rc);
    CHECK_EQ_INT(st, 0);
    CHECK_EQ_INT(rc, PAIMON_OK);
    static const char *const keys[] = {"checked", "candidates", "unparseable", "limited", "files", "rows",
                                       "max_expires", "expiration_ms"};
    for (size_t i = 0; lua && c && i < sizeof keys / sizeof *keys; i++) {
        if (jint(lua, keys[i]) != jint(c, keys[i]))
            fprintf(stderr, "  %s: lua %lld, C %lld\n", keys[i], jint(lua, keys[i]), jint(c, keys[i]));
        CHECK_EQ_INT(jint(lua, keys[i]), jint(c, keys[i]));
    }
    /* the same partitions in the same order */
    const char *a = lua ? strstr(lua, "\"partitions\":") : NULL, *b = c ? strstr(c, "\"partitions\":") : NULL;
    while (a && b) {
        a = strstr(a + 1, "\"path\":\"dt=");
        b = strstr(b + 1, "\"path\":\"dt=");
        if (!a || !b) break;
        const char *ea = strchr(a + 8, '"'), *eb = strchr(b + 8, '"');
        CHECK(ea && eb && ea - a == eb - b && !strncmp(a, b, (size_t)(ea - a)));
    }
    free(lua);
    free(c);
}

TEST(capi_expire_partitions) {
    ttable x;
    if (begin_table(&x, SCHEMA_ONE)) return;
    char recent[32];
    ymd(wall_now() - 86400000LL, 1, recent, sizeof recent);
    const char *vals[] = {"2026-01-01", "2026-01-01", recent, "bogus"};
    int64_t id = 0;
    CHECK_EQ_INT(commit_adds(x.t, 4, vals, NAMES3, NULL, &id), PAIMON_OK);
    static const char *const kv30[] = {"expiration-time", "30d", "dry-run", "true", NULL};
    same_plan(x.path, "--expiration-time 30d --dry-run --json", kv30);
    int rc = -1;
    /* a real run: one OVERWRITE snapshot without dt=2026-01-01 */
    static const char *const real[] = {"expiration-time", "30d", NULL};
    char *out = capi(x.path, real, &rc);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(jint(out, "snapshot_id"), id + 1);
    CHECK(out && strstr(out, "\"path\":\"dt=2026-01-01/\"") && strstr(out, "\"kind\":\"unparseable\""));
    CHECK(out && strstr(out, "dt=bogus/") && strstr(out, "cannot parse a time from 'bogus' does not match"));
    free(out);
    pm_buf names = {0};
    CHECK_EQ_INT(live(x.t, id + 1, &names), 2);
    CHECK(names.data && !strstr((char *)names.data, "2026-01-01") && strstr((char *)names.data, recent));
    out = capi(x.path, real, &rc);   /* decided again from the table: nothing left */
    CHECK_EQ_INT(jint(out, "files"), 0);
    CHECK_EQ_INT(jint(out, "snapshot_id"), -1);
    free(out);
    /* no expiration time and no partition.expiration-time; a bad formatter,
     * strategy or option: PAIMON_MISUSE, nothing committed */
    static const char *const none[] = {NULL};
    static const char *const badfmt[] = {"expiration-time", "1d", "timestamp-formatter", "yyyy-MMM-dd", NULL};
    static const char *const badstr[] = {"expiration-time", "1d", "strategy", "sometimes", NULL};
    static const char *const badmax[] = {"expiration-time", "1d", "max-expires", "0", NULL};
    static const char *const badexp[] = {"expiration-time", "soon", NULL};
    const char *const *bad[] = {none, badfmt, badstr, badmax, badexp};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        out = capi(x.path, bad[i], &rc);
        CHECK_EQ_INT(rc, PAIMON_MISUSE);
        free(out);
    }
    CHECK_EQ_INT(tu_latest_id(x.t), id + 1);
    pm_buf_free(&names);
    drop_table(&x);

    /* the formatter, max-expires, update-time and a pattern over two keys:
     * the C face decides as the Lua runner does */
    if (begin_table(&x, SCHEMA_ONE)) return;
    ymd(wall_now() - 86400000LL, 0, recent, sizeof recent);
    const char *v2[] = {"20251201", "20260101", "20260201", recent, "2026-01-01"};
    const char *nm2[] = {"d1.parquet", "d2.parquet", "d3.parquet", "d4.parquet", "d5.parquet"};
    int64_t now = wall_now();
    const int64_t ct[] = {now - 50 * 86400000LL, now - 40 * 86400000LL, now - 86400000LL, now - 31 * 86400000LL,
                          now - 2 * 86400000LL};
    CHECK_EQ_INT(commit_adds(x.t, 5, v2, nm2, ct, &id), PAIMON_OK);
    static const char *const kvf[] = {"expiration-time", "30d", "timestamp-formatter", "yyyyMMdd", "max-expires", "2",
                                      "dry-run", "true", NULL};
    same_plan(x.path, "--expiration-time 30d --timestamp-formatter yyyyMMdd --max-expires 2 --dry-run --json", kvf);
    static const char *const kvu[] = {"expiration-time", "30d", "strategy", "update-time", "dry-run", "true", NULL};
    same_plan(x.path, "--expiration-time 30d --strategy update-time --dry-run --json", kvu);
    static const char *const kvq[] = {"expiration-time", "30d", "timestamp-formatter", "yyyyMMdd HH",
                                      "timestamp-pattern", "$dt 00", "dry-run", "true", NULL};
    same_plan(x.path, "--expiration-time 30d --timestamp-formatter 'yyyyMMdd HH' --timestamp-pattern '$dt 00' "
              "--dry-run --json", kvq);
    drop_table(&x);

    if (begin_table(&x, SCHEMA_TWO)) return;
    ymd(wall_now() - 86400000LL, 1, recent, sizeof recent);
    char r10[48];
    snprintf(r10, sizeof r10, "%s|10", recent);
    const char *v3[] = {"2026-01-01|10", r10, "NULL|3"};
    const char *nm3[] = {"old.parquet", "new.parquet", "null.parquet"};
    CHECK_EQ_INT(commit_adds(x.t, 3, v3, nm3, NULL, &id), PAIMON_OK);
    static const char *const kvp[] = {"expiration-time", "30d", "timestamp-pattern", "$dt $hr:00:00", "dry-run",
                                      "true", NULL};
    same_plan(x.path, "--expiration-time 30d --timestamp-pattern '$dt $hr:00:00' --dry-run --json", kvp);
    drop_table(&x);
}

/* Java's time parsing (DateTimeFormatter subset, SMART resolution), as the
 * Lua policy's: day clamped to the month, 24:00 the next midnight. */
TEST(partition_time_parse) {
    static const struct { const char *text, *fmt; long long ms; } ok[] = {
        {"2026-01-02", NULL, 1767312000000LL},
        {"2026-1-2 3:04:05", NULL, 1767323045000LL},
        {"2026-01-02 03:04:05.123456", NULL, 1767323045123LL},
        {"20260102", "yyyyMMdd", 1767312000000LL},
        {"2026-02-31", "yyyy-MM-dd", 1772236800000LL},   /* clamped: 2026-02-28 */
        {"260102 24", "yyMMdd HH", 1767398400000LL},     /* 24:00 = 2026-01-03 00:00 */
        {"2026/1/2 'T", "yyyy/M/d '''T'", 1767312000000LL},   /* '' is a quote, 'T' a literal */
        {"2026010203", "yyyyMMddHH", 1767322800000LL},
        {"1-2-2026", "d-M-yyyy", 1769904000000LL},      /* 2026-02-01 */
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        int64_t ms = 0;
        pm_err e = {0};
        int rc = pm_partition_time_parse(ok[i].text, ok[i].fmt, &ms, &e);
        if (rc) fprintf(stderr, "  %s / %s: %s\n", ok[i].text, ok[i].fmt ? ok[i].fmt : "default", e.msg);
        CHECK_EQ_INT(rc, PAIMON_OK);
        CHECK_EQ_INT(ms, ok[i].ms);
    }
    static const struct { const char *text, *fmt; int rc; } bad[] = {
        {"2026-13-01", NULL, PAIMON_CORRUPT}, {"2026-01-01 25:00:00", NULL, PAIMON_CORRUPT},
        {"2026-01-01x", NULL, PAIMON_CORRUPT}, {"20260101", "yyyy-MM-dd", PAIMON_CORRUPT},
        {"2026-01", "yyyy-MM", PAIMON_CORRUPT}, {"x", "yyyy-MMM-dd", PAIMON_MISUSE}, {"x", "'open", PAIMON_MISUSE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t ms = 0;
        pm_err e = {0};
        CHECK_EQ_INT(pm_partition_time_parse(bad[i].text, bad[i].fmt, &ms, &e), bad[i].rc);
    }
}

int main(void) {
    RUN(entries_and_drop);
    RUN(drop_partial_spec_two_keys);
    RUN(drop_retries_after_concurrent_delete);
    RUN(drop_conflict_exhausted);
    RUN(drop_chases_concurrent_append);
    RUN(expire_values_time);
    RUN(expire_formatter_and_max);
    RUN(expire_update_time);
    RUN(null_partition_and_pattern);
    RUN(capi_expire_partitions);
    RUN(partition_time_parse);
    return TEST_SUMMARY();
}
