/* Snapshot-expiration benchmark helpers (bench/run.sh bench_expire, and the
 * table for bench_orphan).
 *
 *   bench_expire build TABLE [--snapshots 1000] [--files 20] [--partitions 10] [--append] [--earliest-hint]
 *                            [--manifests-only] [--resume]
 *       An append table (dt STRING, bucket -1) of --snapshots snapshots made
 *       with pm_commit: commit 1 adds --files data files; every later commit
 *       deletes the files the previous one added and adds --files new ones
 *       (compaction-like: DELETE + ADD), partition = commit % --partitions.
 *       With --append every commit only adds (the files accumulate).
 *       Data files are real small files written to disk, or through the
 *       table's FileIO when TABLE is a URI (s3://...: the table is built on
 *       the store by committing there). Default manifest options (minor
 *       merges at 30 manifests). --latency FILE: "SNAPSHOT MS" per commit,
 *       the time of the pm_commit call alone. --earliest-hint writes
 *       snapshot/EARLIEST after the first commit (as a table that was
 *       expired once has): without it every commit lists snapshot/ to find
 *       the earliest, and building 100,000 snapshots is quadratic.
 *       --manifests-only keeps the metadata (schema, manifests, lists,
 *       snapshots) but no data files: each commit's files exist only while
 *       pm_commit checks them before publishing and are removed right
 *       after. For tables only read through their metadata (inspect's files
 *       view and pyref never open a data file), where a million real files
 *       would cost gigabytes of /dev/shm. Expiration and orphan cleaning
 *       need the data files: never run them on such a table. Local only.
 *       --resume continues a compaction-like table this command built (and
 *       was stopped) from its latest snapshot up to --snapshots.
 *   bench_expire expire TABLE [--dry-run] [--list FILE] [--threads 4] [--limit N]
 *       pm_expire_snapshots with retain-min 1, cut-off now, no expire limit:
 *       everything but the latest snapshot expires (--limit N: the N
 *       earliest only, the rest retained: the scale curve's "expire 10"). With --list the paths
 *       a dry run plans are written to FILE, one per line (for xargs rm).
 *       Prints "RESULT expired=.. files=.. bytes=.. seconds=.." (the time of
 *       the pm_expire_snapshots call alone).
 *   bench_expire capi TABLE --json FILE [--whole] [--threads 4]
 *       The same dry run through the public C API (paimon_expire_snapshots,
 *       retain-min 1, cut-off now, max-deletes 2147483647), its result
 *       written as JSON to FILE with paimon_result_write_json (--whole:
 *       fputs of paimon_result_json): the peak RSS of a C caller. */
#define _GNU_SOURCE
#include "pm_commit.h"
#include "pm_expire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const pm_err *e) {
    fprintf(stderr, "bench_expire: %s: %s\n", what, e ? e->msg : strerror(errno));
    exit(1);
}

static const char *SCHEMA =
    "{\n  \"version\" : 3,\n  \"id\" : 0,\n  \"fields\" : [ {\n    \"id\" : 0,\n    \"name\" : \"id\",\n"
    "    \"type\" : \"INT\"\n  }, {\n    \"id\" : 1,\n    \"name\" : \"dt\",\n    \"type\" : \"STRING\"\n  } ],\n"
    "  \"highestFieldId\" : 1,\n  \"partitionKeys\" : [ \"dt\" ],\n  \"primaryKeys\" : [ ],\n"
    "  \"options\" : {\n    \"bucket\" : \"-1\",\n    \"file.format\" : \"parquet\"\n  },\n"
    "  \"timeMillis\" : 1764000000000\n}";

/* Local trees are written with stdio (fast on /dev/shm); other URIs through
 * the FileIO (one PUT per file on S3). */
static pm_fileio *build_io;
/* 0 with --manifests-only: data files are removed once committed */
static int keep_data_files = 1;

static void write_file(const char *path, const void *p, size_t n) {
    if (build_io) {
        pm_err e;
        if (pm_io_write_atomic(build_io, path, p, n, &e)) die(path, &e);
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) die(path, NULL);
}

typedef struct bfile { pm_manifest_entry m; pm_buf part; char name[96]; int part_no; } bfile;

/* The ADD entry of data file `name` in partition d<p> (what make_file wrote) */
static void describe_file(paimon_table *t, bfile *x, int p, const char *name, int64_t len, const pm_buf *empty) {
    memset(x, 0, sizeof *x);
    pm_err e;
    char dt[16];
    snprintf(dt, sizeof dt, "d%02d", p);
    x->part_no = p;
    pm_datum v;
    memset(&v, 0, sizeof v);
    v.v.bin.ptr = (const uint8_t *)dt;
    v.v.bin.len = strlen(dt);
    if (pm_binrow_encode(t->part_types, 1, &v, &x->part, &e)) die("binrow", &e);
    snprintf(x->name, sizeof x->name, "%s", name);
    pm_bytes em = {empty->data, empty->len};
    x->m.version = 2;
    x->m.kind = PM_FILE_ADD;
    x->m.partition = (pm_bytes){x->part.data, x->part.len};
    x->m.total_buckets = -1;
    pm_data_file *f = &x->m.file;
    f->file_name = x->name;
    f->file_size = len;
    f->row_count = 100;
    f->min_key = f->max_key = em;
    f->key_stats.min_values = f->key_stats.max_values = em;
    f->key_stats.has_null_counts = 1;
    f->value_stats.min_values = f->value_stats.max_values = em;
    f->value_stats.has_null_counts = 1;
    f->has_value_stats_cols = 1;
    f->max_sequence_number = 99;
    f->creation_time = (pm_opt_i64){1, 1764000000000LL};
    f->delete_row_count = (pm_opt_i64){1, 0};
    f->file_source = (pm_opt_i32){1, 0};
}

static void make_file(paimon_table *t, const char *table, bfile *x, int p, long seq, const pm_buf *empty) {
    char name[96], path[700], body[256], uuid[37];
    pm_uuid4(uuid);
    snprintf(name, sizeof name, "data-%s-%ld.parquet", uuid, seq);
    snprintf(path, sizeof path, "%s/dt=d%02d/bucket-0/%s", table, p, name);
    int len = snprintf(body, sizeof body, "PAR1 %s PAR1\n", name);
    write_file(path, body, (size_t)len);
    describe_file(t, x, p, name, len, empty);
}

/* --resume: the files the latest snapshot's commit added (the live set of a
 * compaction-like table), as that commit described them; returns its id */
static int64_t resume_from_latest(paimon_table *t, bfile *prev, int files, int parts, const pm_buf *empty) {
    pm_err e;
    int64_t latest;
    pm_snapshot *snap;
    pm_scan *sc;
    const pm_manifest_entry *en;
    int n = 0;
    if (pm_snapshot_latest_id(t->io, t->branch_root, &latest, &e)) die("latest snapshot", &e);
    if (pm_snapshot_read(t->io, t->branch_root, latest, &snap, &e)) die("latest snapshot", &e);
    if (pm_scan_open(t, snap, NULL, &sc, &e)) die("scan", &e);
    int rc, extra = 0;
    while ((rc = pm_scan_next(sc, &en, &e)) == PAIMON_OK) {
        if (n == files) { extra = 1; break; }
        describe_file(t, &prev[n++], (int)(latest % parts), en->file.file_name, en->file.file_size, empty);
    }
    if (rc != PAIMON_OK && rc != PAIMON_DONE) die("scan", &e);
    pm_scan_close(sc);
    pm_snapshot_free(snap);
    if (n != files || extra) {
        fprintf(stderr, "bench_expire: --resume: the latest snapshot is not one of a --files %d compaction-like table\n", files);
        exit(1);
    }
    return latest;
}

/* --manifests-only: the committed files go again (the manifests keep them) */
static void remove_data_files(const char *table, const bfile *x, int n) {
    char path[700];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/dt=d%02d/bucket-0/%s", table, x[i].part_no, x[i].name);
        if (unlink(path)) die(path, NULL);
    }
}

static int cmd_build(const char *table, int snapshots, int files, int parts, int append, int hint,
                     const char *latency, int resume) {
    char p[600];
    pm_err e;
    if (!keep_data_files && strstr(table, "://")) {
        fprintf(stderr, "bench_expire: --manifests-only builds local tables only\n");
        return 2;
    }
    if (strstr(table, "://")) {
        if (pm_fileio_open(table, NULL, &build_io, &e)) die(table, &e);
        if (pm_io_has(build_io, PM_IO_LOCAL)) { pm_fileio_destroy(build_io); build_io = NULL; }
    }
    FILE *lat = latency ? fopen(latency, "w") : NULL;
    if (latency && !lat) die(latency, NULL);
    if (build_io) {
        /* an object store: no directories to make */
    } else if (mkdir(table, 0755) && errno != EEXIST) die(table, NULL);
    snprintf(p, sizeof p, "%s/schema", table);
    if (!build_io && mkdir(p, 0755) && errno != EEXIST) die(p, NULL);
    snprintf(p, sizeof p, "%s/schema/schema-0", table);
    if (!resume) write_file(p, SCHEMA, strlen(SCHEMA));
    for (int i = 0; i < parts; i++) {
        if (build_io) break;
        snprintf(p, sizeof p, "%s/dt=d%02d", table, i);
        mkdir(p, 0755);
        snprintf(p, sizeof p, "%s/dt=d%02d/bucket-0", table, i);
        mkdir(p, 0755);
    }
    paimon_table *t;
    if (pm_table_open(table, NULL, &t, &e)) die("open", &e);
    pm_buf empty = {0};
    pm_binrow_encode(NULL, 0, NULL, &empty, &e);
    bfile *prev = calloc((size_t)files, sizeof *prev), *cur = calloc((size_t)files, sizeof *cur);
    pm_manifest_entry *v = calloc((size_t)files * 2, sizeof *v);
    long seq = 0;
    int first = 1;
    if (resume) {
        if (append || build_io) { fprintf(stderr, "bench_expire: --resume: local compaction-like tables only\n"); return 2; }
        first = (int)resume_from_latest(t, prev, files, parts, &empty) + 1;
        seq = (long)(first - 1) * files;
    }
    double t0 = now_s();
    for (int s = first; s <= snapshots; s++) {
        size_t n = 0;
        if (s > 1 && !append)
            for (int i = 0; i < files; i++) { v[n] = prev[i].m; v[n++].kind = PM_FILE_DELETE; }
        for (int i = 0; i < files; i++) {
            make_file(t, table, &cur[i], s % parts, seq++, &empty);
            v[n++] = cur[i].m;
        }
        pm_commit_opts o;
        pm_commit_opts_from_table(t, &o);
        o.commit_user = "bench";
        o.identifier = s;
        o.kind = s > 1 && !append ? "COMPACT" : "APPEND";
        int64_t id;
        double c0 = now_s();
        if (pm_commit(t, v, n, &o, &id, &e)) die("commit", &e);
        if (s == 1 && hint && pm_hint_write(t->io, t->branch_root, "EARLIEST", 1, &e)) die("EARLIEST", &e);
        if (lat) fprintf(lat, "%d %.3f\n", s, (now_s() - c0) * 1e3);
        if (!keep_data_files) remove_data_files(table, cur, files);
        for (int i = 0; i < files; i++) pm_buf_free(&prev[i].part);
        bfile *tmp = prev;
        prev = cur;
        cur = tmp;
        if (s % 100 == 0) fprintf(stderr, "bench_expire: built %d snapshots (%.1f s)\n", s, now_s() - t0);
    }
    for (int i = 0; i < files; i++) pm_buf_free(&prev[i].part);
    free(prev);
    free(cur);
    free(v);
    pm_buf_free(&empty);
    pm_table_free(t);
    pm_fileio_destroy(build_io);
    if (lat && fclose(lat)) die(latency, NULL);
    printf("RESULT snapshots=%d data_files=%ld build_s=%.3f\n", snapshots, seq, now_s() - t0);
    return 0;
}

static int write_file_json(void *ud, const char *p, size_t n) { return fwrite(p, 1, n, ud) == n ? 0 : -1; }

static int cmd_expire(const char *table, int dry_run, const char *list, int threads, int limit) {
    paimon_table *t;
    pm_err e;
    if (pm_table_open(table, NULL, &t, &e)) die("open", &e);
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = 1;
    o.has_older_than = 1;
    o.older_than_ms = pm_now_millis();
    o.max_deletes = limit > 0 ? limit : 2147483647;
    o.threads = threads;
    o.dry_run = dry_run || list;
    pm_expire_result r;
    double t0 = now_s();
    if (pm_expire_snapshots(t, &o, &r, &e)) die("expire", &e);
    double secs = now_s() - t0;
    int64_t files = 0, bytes = 0;
    for (int k = 0; k < PM_K__N; k++) { files += r.clean.count[k]; bytes += r.clean.bytes[k]; }
    if (list) {
        FILE *f = fopen(list, "w");
        if (!f) die(list, NULL);
        pm_buf b = {0};
        for (size_t i = 0; i < r.clean.n_paths; i++) {
            const char *pth = pm_plan_path(r.clean.plan, i, &b, NULL, NULL);
            if (!pth) die("out of memory", NULL);
            if (!strncmp(pth, "file:", 5)) pth += 5;
            fprintf(f, "%s\n", pth);
        }
        pm_buf_free(&b);
        if (fclose(f)) die(list, NULL);
    }
    printf("RESULT expired=%lld files=%lld data_files=%lld manifests=%lld lists=%lld snapshot_files=%lld bytes=%lld "
           "failures=%zu seconds=%.6f\n",
           (long long)r.expired, (long long)files, (long long)r.clean.count[PM_K_DATA],
           (long long)r.clean.count[PM_K_MANIFEST], (long long)r.clean.count[PM_K_MANIFEST_LIST],
           (long long)r.clean.count[PM_K_SNAPSHOT], (long long)bytes, r.clean.n_failures, secs);
    pm_clean_result_free(&r.clean);
    pm_table_free(t);
    return 0;
}

static int cmd_capi(const char *table, const char *json, int whole, int threads) {
    char *err = NULL, now[24], th[16];
    paimon_table *t;
    if (!json) { fprintf(stderr, "bench_expire: capi needs --json FILE\n"); return 2; }
    if (paimon_table_open(table, NULL, &t, &err)) { fprintf(stderr, "bench_expire: open: %s\n", err); return 1; }
    snprintf(now, sizeof now, "%lld", (long long)pm_now_millis());
    snprintf(th, sizeof th, "%d", threads);
    paimon_options *o = paimon_options_new();
    const char *kv[] = {"retain-min", "1", "older-than-ms", now, "max-deletes", "2147483647", "threads", th,
                        "dry-run", "true"};
    for (size_t i = 0; o && i < sizeof kv / sizeof kv[0]; i += 2)
        if (paimon_options_set(o, kv[i], kv[i + 1])) die("options", NULL);
    paimon_result *r = NULL;
    double t0 = now_s();
    if (!o || paimon_expire_snapshots(t, o, &r)) {
        fprintf(stderr, "bench_expire: expire: %s\n", paimon_table_errmsg(t));
        return 1;
    }
    FILE *f = fopen(json, "w");
    if (!f) die(json, NULL);
    if (whole) {
        const char *text = paimon_result_json(r);
        if (!text || fputs(text, f) == EOF) die("json", NULL);
    } else if (paimon_result_write_json(r, write_file_json, f)) {
        die("json", NULL);
    }
    if (fclose(f)) die(json, NULL);
    int64_t files = 0;
    paimon_result_int(r, "files", &files);
    printf("RESULT files=%lld seconds=%.6f\n", (long long)files, now_s() - t0);
    paimon_result_free(r);
    paimon_options_free(o);
    paimon_table_close(t);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_expire build|expire TABLE [options]\n");
        return 2;
    }
    int snapshots = 1000, files = 20, parts = 10, dry = 0, threads = 4, append = 0, limit = 0, hint = 0, resume = 0;
    int whole = 0;
    const char *list = NULL, *latency = NULL, *json = NULL;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--snapshots") && i + 1 < argc) snapshots = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--files") && i + 1 < argc) files = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--partitions") && i + 1 < argc) parts = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--list") && i + 1 < argc) list = argv[++i];
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc) limit = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--latency") && i + 1 < argc) latency = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--whole")) whole = 1;
        else if (!strcmp(argv[i], "--dry-run")) dry = 1;
        else if (!strcmp(argv[i], "--append")) append = 1;
        else if (!strcmp(argv[i], "--earliest-hint")) hint = 1;
        else if (!strcmp(argv[i], "--manifests-only")) keep_data_files = 0;
        else if (!strcmp(argv[i], "--resume")) resume = 1;
        else { fprintf(stderr, "bench_expire: unknown option %s\n", argv[i]); return 2; }
    }
    if (snapshots < 2 || files < 1 || parts < 1 || parts > 99) return 2;
    if (!strcmp(argv[1], "build")) return cmd_build(argv[2], snapshots, files, parts, append, hint, latency, resume);
    if (!strcmp(argv[1], "expire")) return cmd_expire(argv[2], dry, list, threads, limit);
    if (!strcmp(argv[1], "capi")) return cmd_capi(argv[2], json, whole, threads);
    fprintf(stderr, "bench_expire: unknown command %s\n", argv[1]);
    return 2;
}
