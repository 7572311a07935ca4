/* Commit benchmarks (bench/run.sh bench_commit).
 *
 *   bench_commit --schema SCHEMA_FILE --workdir DIR [--snapshots 1000]
 *                [--merge-manifests 200] [--merge-entries 500] [--reps 5]
 *
 * 1. Commit latency while an empty table (schema/schema-0 copied from
 *    SCHEMA_FILE, partitioned) grows to --snapshots snapshots: one ADD entry
 *    per commit, default options (minor merges at 30 manifests). Each commit
 *    is timed; the same files (captured byte for byte by a FileIO wrapper) are
 *    then written again with plain POSIX calls exactly as the local FileIO
 *    does (temp file, write, fsync, close, link+unlink or rename, fsync of the
 *    directory) into a scratch directory: the physical floor of that commit.
 *    Output: "ROW|range|commits|median ms|p99 ms|CPU median ms|floor median|floor p99|bytes|files".
 * 2. Manifest-merge throughput: --merge-manifests commits of --merge-entries
 *    ADD entries each (merging off) leave that many small manifests; then one
 *    commit with manifest.full-compaction-threshold-size = 1 byte rewrites
 *    them (full compaction, 8 MB rolling target). Timed --reps times (the
 *    result snapshot is removed between reps). Floor: POSIX read of the input
 *    manifests + writing the produced files as above. --merge-decode-only 1:
 *    the merge decodes and encodes every entry (manifest.merge-optimize.enabled
 *    = false) instead of copying the Avro blocks of the manifests it keeps whole.
 *    Output: "RESULT merge_entries=.. merge_best_s=.. ..." */
#define _GNU_SOURCE
#include "pm_commit.h"
#include "pm_expire.h"

#include <errno.h>
#include <fcntl.h>
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

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const pm_err *e) {
    fprintf(stderr, "bench_commit: %s: %s\n", what, e ? e->msg : strerror(errno));
    exit(1);
}

/* ---- capturing FileIO ---------------------------------------------------- */

typedef struct capture {
    int create;          /* create_no_replace (link) vs write_atomic (rename) */
    char *name;          /* base name */
    pm_buf bytes;
} capture;

static capture caps[4096];
static size_t n_caps;
static int capturing;
static const pm_fileio_ops *inner_ops;
static pm_fileio_ops cap_ops;

static void cap_add(int create, const char *path, const void *p, size_t n) {
    if (!capturing || n_caps == sizeof caps / sizeof caps[0]) return;
    const char *slash = strrchr(path, '/');
    capture *c = &caps[n_caps++];
    c->create = create;
    c->name = strdup(slash ? slash + 1 : path);
    memset(&c->bytes, 0, sizeof c->bytes);
    pm_buf_append(&c->bytes, p, n);
}

static void caps_clear(void) {
    for (size_t i = 0; i < n_caps; i++) {
        free(caps[i].name);
        pm_buf_free(&caps[i].bytes);
    }
    n_caps = 0;
}

static int cap_write(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    int rc = inner_ops->write_atomic(io, path, p, n, e);
    if (!rc) cap_add(0, path, p, n);
    return rc;
}

static int cap_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    int rc = inner_ops->create_no_replace(io, path, p, n, e);
    if (!rc) cap_add(1, path, p, n);
    return rc;
}

static void capture_install(paimon_table *t) {
    inner_ops = t->io->ops;
    cap_ops = *inner_ops;
    cap_ops.write_atomic = cap_write;
    cap_ops.create_no_replace = cap_create;
    t->io->ops = &cap_ops;
}

/* ---- the physical floor ---------------------------------------------------- */

static void fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* Write the captured files into dir like the local FileIO; seconds. */
static double replay(const char *dir, size_t *bytes) {
    double t0 = now_s();
    *bytes = 0;
    for (size_t i = 0; i < n_caps; i++) {
        char tmp[1024], fin[1024];
        snprintf(tmp, sizeof tmp, "%s/.%s.%zu.tmp", dir, caps[i].name, i);
        snprintf(fin, sizeof fin, "%s/%s", dir, caps[i].name);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0) die(tmp, NULL);
        size_t off = 0;
        while (off < caps[i].bytes.len) {
            ssize_t w = write(fd, caps[i].bytes.data + off, caps[i].bytes.len - off);
            if (w < 0) die("write", NULL);
            off += (size_t)w;
        }
        if (fsync(fd) != 0 || close(fd) != 0) die("fsync", NULL);
        if (caps[i].create) {
            if (link(tmp, fin) != 0) die("link", NULL);
            unlink(tmp);
        } else if (rename(tmp, fin) != 0) {
            die("rename", NULL);
        }
        fsync_dir(dir);
        *bytes += caps[i].bytes.len;
    }
    return now_s() - t0;
}

/* ---- helpers ----------------------------------------------------------------- */

static void mkdir_p(const char *p) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", p);
    if (system(cmd) != 0) die(p, NULL);
}

static void rm_rf(const char *p) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    if (system(cmd) != 0) die(p, NULL);
}

/* An empty table at dir with the given schema file as schema/schema-0. */
static paimon_table *empty_table(const char *dir, const char *schema_file) {
    char cmd[2400];
    rm_rf(dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/schema' && cp '%s' '%s/schema/schema-0'", dir, schema_file, dir);
    if (system(cmd) != 0) die(cmd, NULL);
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(dir, NULL, &t, &e)) die("open table", &e);
    if (t->n_part < 1) {
        fprintf(stderr, "bench_commit: the schema must be partitioned\n");
        exit(1);
    }
    return t;
}

typedef struct entry {
    pm_manifest_entry m;
    pm_buf part, empty;
    char name[96];
} entry;

/* Creates the (empty) data file of x: the committer checks that every
 * file it publishes exists. Outside the timed part. */
static void touch_data_file(paimon_table *t, const pm_manifest_entry *m) {
    pm_buf p = {0};
    pm_err e;
    if (pm_data_file_full_path(t, m, &p, &e)) die("data file path", &e);
    char *path = (char *)p.data;
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0 && errno == ENOENT) {
        char *slash = strrchr(path, '/');
        *slash = '\0';
        mkdir_p(path);
        *slash = '/';
        fd = open(path, O_WRONLY | O_CREAT, 0644);
    }
    if (fd < 0) die(path, NULL);
    close(fd);
    pm_buf_free(&p);
}

/* An ADD entry for a fake data file (created empty) in partition value
 * `pv` of the first partition field (other fields null). */
static void entry_init(entry *x, paimon_table *t, int64_t pv, const char *name) {
    memset(x, 0, sizeof *x);
    pm_err e;
    pm_datum vals[8];
    memset(vals, 0, sizeof vals);
    for (size_t i = 0; i < t->n_part && i < 8; i++) vals[i].is_null = i > 0;
    vals[0].v.i = pv;
    if (pm_binrow_encode(t->part_types, t->n_part < 8 ? t->n_part : 8, vals, &x->part, &e)) die("partition", &e);
    pm_binrow_encode(NULL, 0, NULL, &x->empty, &e);
    snprintf(x->name, sizeof x->name, "%s", name);
    pm_bytes empty = {x->empty.data, x->empty.len};
    x->m.version = 2;
    x->m.kind = PM_FILE_ADD;
    x->m.partition = (pm_bytes){x->part.data, x->part.len};
    x->m.bucket = (int32_t)(pv & 1);
    x->m.total_buckets = 2;
    pm_data_file *f = &x->m.file;
    f->file_name = x->name;
    f->file_size = 4096;
    f->row_count = 100;
    f->min_key = f->max_key = empty;
    f->key_stats.min_values = f->key_stats.max_values = empty;
    f->key_stats.has_null_counts = 1;
    f->value_stats.min_values = f->value_stats.max_values = empty;
    f->value_stats.has_null_counts = 1;
    f->has_value_stats_cols = 1;
    f->max_sequence_number = 99;
    f->creation_time = (pm_opt_i64){1, 1700000000000LL};
    f->delete_row_count = (pm_opt_i64){1, 0};
    f->file_source = (pm_opt_i32){1, 0};
    touch_data_file(t, &x->m);
}

static void entry_free(entry *x) {
    pm_buf_free(&x->part);
    pm_buf_free(&x->empty);
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of v[0..n) (sorted copy). */
static double pct(const double *v, size_t n, double p) {
    double *s = malloc(n * sizeof *s);
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_d);
    size_t k = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (k < 1) k = 1;
    if (k > n) k = n;
    double r = s[k - 1];
    free(s);
    return r;
}

/* ---- 1. latency as the table grows ------------------------------------------- */

static void bench_growth(const char *work, const char *schema, int n) {
    char dir[1024], phys[1024];
    snprintf(dir, sizeof dir, "%s/grow", work);
    snprintf(phys, sizeof phys, "%s/grow-phys", work);
    paimon_table *t = empty_table(dir, schema);
    rm_rf(phys);
    mkdir_p(phys);
    capture_install(t);
    double *lat = calloc((size_t)n, sizeof *lat), *flo = calloc((size_t)n, sizeof *flo);
    double *byt = calloc((size_t)n, sizeof *byt), *files = calloc((size_t)n, sizeof *files);
    double *cpu = calloc((size_t)n, sizeof *cpu);
    pm_commit_opts o;
    pm_commit_opts_from_table(t, &o);
    o.commit_user = "bench";
    for (int i = 0; i < n; i++) {
        entry x;
        char name[96];
        snprintf(name, sizeof name, "data-bench-%06d.parquet", i);
        entry_init(&x, t, i % 4, name);
        pm_err e;
        int64_t id;
        o.identifier = i;
        caps_clear();
        capturing = 1;
        double c0 = cpu_s(), t0 = now_s();
        if (pm_commit(t, &x.m, 1, &o, &id, &e)) die("commit", &e);
        lat[i] = now_s() - t0;
        cpu[i] = cpu_s() - c0;
        capturing = 0;
        if (id != i + 1) { fprintf(stderr, "bench_commit: unexpected id %lld\n", (long long)id); exit(1); }
        size_t b;
        flo[i] = replay(phys, &b);
        byt[i] = (double)b;
        files[i] = (double)n_caps;
        entry_free(&x);
        if ((i + 1) % 100 == 0) fprintf(stderr, "bench_commit: %d snapshots\n", i + 1);
    }
    caps_clear();
    int cuts[] = {0, 100, 250, 500, 750, 1000};
    for (size_t c = 0; c + 1 < sizeof cuts / sizeof cuts[0]; c++) {
        int lo = cuts[c], hi = cuts[c + 1] < n ? cuts[c + 1] : n;
        if (lo >= hi) break;
        size_t k = (size_t)(hi - lo);
        double sb = 0, sf = 0;
        for (int i = lo; i < hi; i++) { sb += byt[i]; sf += files[i]; }
        printf("ROW|%d-%d|%zu|%.2f|%.2f|%.3f|%.2f|%.2f|%.0f|%.1f\n", lo + 1, hi, k, pct(lat + lo, k, 50) * 1e3,
               pct(lat + lo, k, 99) * 1e3, pct(cpu + lo, k, 50) * 1e3, pct(flo + lo, k, 50) * 1e3,
               pct(flo + lo, k, 99) * 1e3, sb / (double)k, sf / (double)k);
    }
    double sb = 0;
    for (int i = 0; i < n; i++) sb += byt[i];
    printf("ROW|all %d|%d|%.2f|%.2f|%.3f|%.2f|%.2f|%.0f|-\n", n, n, pct(lat, (size_t)n, 50) * 1e3,
           pct(lat, (size_t)n, 99) * 1e3, pct(cpu, (size_t)n, 50) * 1e3, pct(flo, (size_t)n, 50) * 1e3,
           pct(flo, (size_t)n, 99) * 1e3, sb / n);
    printf("RESULT growth_commits=%d growth_median_ms=%.2f growth_p99_ms=%.2f growth_cpu_median_ms=%.3f "
           "floor_median_ms=%.2f\n", n, pct(lat, (size_t)n, 50) * 1e3, pct(lat, (size_t)n, 99) * 1e3,
           pct(cpu, (size_t)n, 50) * 1e3, pct(flo, (size_t)n, 50) * 1e3);
    free(lat);
    free(flo);
    free(byt);
    free(files);
    free(cpu);
    pm_table_free(t);
    rm_rf(phys);
}

/* ---- 2. manifest merge throughput ------------------------------------------------ */

static double read_all_posix(const char *path, size_t *len) {
    double t0 = now_s();
    int fd = open(path, O_RDONLY);
    if (fd < 0) die(path, NULL);
    char buf[1 << 16];
    ssize_t r;
    *len = 0;
    while ((r = read(fd, buf, sizeof buf)) > 0) *len += (size_t)r;
    close(fd);
    return now_s() - t0;
}

static void bench_merge(const char *work, const char *schema, int m, int per, int reps, int decode_only) {
    char dir[1024], phys[1024];
    snprintf(dir, sizeof dir, "%s/merge", work);
    snprintf(phys, sizeof phys, "%s/merge-phys", work);
    paimon_table *t = empty_table(dir, schema);
    pm_commit_opts o;
    pm_commit_opts_from_table(t, &o);
    o.commit_user = "bench-merge";
    o.merge_min_count = 1 << 30;
    o.full_compaction_threshold = INT64_MAX;
    entry *xs = calloc((size_t)per, sizeof *xs);
    pm_manifest_entry *v = calloc((size_t)per, sizeof *v);
    for (int c = 0; c < m; c++) {
        for (int i = 0; i < per; i++) {
            char name[96];
            snprintf(name, sizeof name, "data-merge-%04d-%05d.parquet", c, i);
            entry_init(&xs[i], t, (c * per + i) % 16, name);
            v[i] = xs[i].m;
        }
        pm_err e;
        int64_t id;
        o.identifier = c;
        if (pm_commit(t, v, (size_t)per, &o, &id, &e)) die("setup commit", &e);
        for (int i = 0; i < per; i++) entry_free(&xs[i]);
        if ((c + 1) % 50 == 0) fprintf(stderr, "bench_commit: merge setup %d/%d commits\n", c + 1, m);
    }
    free(xs);
    free(v);
    /* the input: all manifests of the latest snapshot */
    pm_err e;
    int64_t lid;
    pm_snapshot *s;
    if (pm_snapshot_latest_id(t->io, t->branch_root, &lid, &e) || pm_snapshot_read(t->io, t->branch_root, lid, &s, &e))
        die("latest", &e);
    pm_mfile *in = NULL;
    size_t n_in = 0;
    if (pm_read_manifest_list(t, s->base_manifest_list, &in, &n_in, &e) ||
        pm_read_manifest_list(t, s->delta_manifest_list, &in, &n_in, &e))
        die("lists", &e);
    pm_snapshot_free(s);
    int64_t in_entries = 0, in_bytes = 0;
    for (size_t i = 0; i < n_in; i++) { in_entries += in[i].added + in[i].deleted; in_bytes += in[i].size; }

    capture_install(t);
    o.full_compaction_threshold = 1;
    o.merge_min_count = 30;
    o.merge_decode_only = decode_only;
    double *times = calloc((size_t)reps, sizeof *times), *floors = calloc((size_t)reps, sizeof *floors);
    size_t out_files = 0, out_bytes = 0;
    int64_t out_entries = 0;
    for (int r = 0; r < reps; r++) {
        entry x;
        entry_init(&x, t, 0, "data-merge-trigger.parquet");
        caps_clear();
        capturing = 1;
        int64_t id;
        double t0 = now_s();
        if (pm_commit(t, &x.m, 1, &o, &id, &e)) die("merge commit", &e);
        times[r] = now_s() - t0;
        capturing = 0;
        entry_free(&x);
        /* check: the new base list holds the merged manifests, no DELETE */
        pm_snapshot *ns;
        if (pm_snapshot_read(t->io, t->branch_root, id, &ns, &e)) die("merged snapshot", &e);
        pm_mfile *outv = NULL;
        size_t n_out = 0;
        if (pm_read_manifest_list(t, ns->base_manifest_list, &outv, &n_out, &e)) die("merged list", &e);
        out_entries = 0;
        for (size_t i = 0; i < n_out; i++) out_entries += outv[i].added;
        out_files = n_out;
        pm_mfiles_free(outv, n_out);
        pm_snapshot_free(ns);
        if (out_entries != in_entries) {
            fprintf(stderr, "bench_commit: merged %lld entries, expected %lld\n", (long long)out_entries,
                    (long long)in_entries);
            exit(1);
        }
        /* floor: read the inputs, write the same output files */
        double f = 0;
        for (size_t i = 0; i < n_in; i++) {
            char p[1200];
            size_t len;
            snprintf(p, sizeof p, "%s/manifest/%s", dir, in[i].name);
            f += read_all_posix(p, &len);
        }
        rm_rf(phys);
        mkdir_p(phys);
        f += replay(phys, &out_bytes);
        floors[r] = f;
        /* back to the pre-merge state: drop the result snapshot */
        char sp[1200];
        snprintf(sp, sizeof sp, "%s/snapshot/snapshot-%lld", dir, (long long)id);
        if (unlink(sp) != 0) die(sp, NULL);
        if (pm_hint_write(t->io, t->branch_root, "LATEST", id - 1, &e)) die("hint", &e);
        fprintf(stderr, "bench_commit: merge rep %d: %.3f s\n", r + 1, times[r]);
    }
    caps_clear();
    printf("RESULT merge_manifests=%zu merge_entries=%lld merge_in_bytes=%lld merge_out_files=%zu merge_out_bytes=%zu "
           "merge_best_s=%.4f merge_median_s=%.4f merge_eps_best=%.0f merge_eps_median=%.0f floor_best_s=%.4f "
           "floor_median_s=%.4f\n",
           n_in, (long long)in_entries, (long long)in_bytes, out_files, out_bytes, pct(times, (size_t)reps, 0),
           pct(times, (size_t)reps, 50), (double)in_entries / pct(times, (size_t)reps, 0),
           (double)in_entries / pct(times, (size_t)reps, 50), pct(floors, (size_t)reps, 0),
           pct(floors, (size_t)reps, 50));
    free(times);
    free(floors);
    pm_mfiles_free(in, n_in);
    pm_table_free(t);
    rm_rf(phys);
}

int main(int argc, char **argv) {
    const char *schema = NULL, *work = NULL;
    int snaps = 1000, mm = 200, me = 500, reps = 5, decode_only = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "bench_commit: %s needs a value\n", a); return 2; }
        if (!strcmp(a, "--schema")) schema = v;
        else if (!strcmp(a, "--workdir")) work = v;
        else if (!strcmp(a, "--snapshots")) snaps = atoi(v);
        else if (!strcmp(a, "--merge-manifests")) mm = atoi(v);
        else if (!strcmp(a, "--merge-entries")) me = atoi(v);
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--merge-decode-only")) decode_only = atoi(v);
        else { fprintf(stderr, "bench_commit: unknown option %s\n", a); return 2; }
        i++;
    }
    if (!schema || !work || snaps < 1 || mm < 2 || me < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_commit --schema FILE --workdir DIR [--snapshots N] [--merge-manifests M] "
                        "[--merge-entries E] [--reps R] [--merge-decode-only 0|1]\n");
        return 2;
    }
    mkdir_p(work);
    if (snaps > 0) bench_growth(work, schema, snaps);
    bench_merge(work, schema, mm, me, reps, decode_only);
    return 0;
}
