/* Orphan-scan benchmark (bench/run.sh bench_orphan).
 *
 *   bench_orphan TABLE [--threads 4] [--reps 5] [--older-than SECONDS] [--option KEY=VALUE]...
 *
 * pm_remove_orphan_files as a dry run with the cut-off "now" (--older-than:
 * now minus SECONDS, so younger files are kept): lists every
 * candidate directory (names only), reads the used set of every snapshot,
 * stats the files nobody uses (none on a clean table), plans nothing.
 * --option: FileIO options for the table (s3.max-connections=16, ...).
 * Timed --reps times. Prints "RESULT listed=.. used=.. planned=.. manifests_read=..
 * manifests_skipped=.. best_s=..
 * median_s=.. cpu_s=.." (cpu_s: the least CPU time, user + system of all
 * threads, of one run).
 *
 *   bench_orphan TABLE --floor [--threads 4] [--reps 5]
 *
 * The physical floor of the same scan: walk the whole tree with readdir
 * (names only, like `find -type f`), then open, read and close every file
 * the used set is built from (snapshot/, tag/, changelog/ and manifest/ of
 * the table and of every branch), --threads at a time, no decoding.
 * Prints "RESULT files=.. read=.. bytes=.. best_s=.. median_s=..".
 *
 *   bench_orphan TABLE --floor-parse [--threads 4] [--reps 5]
 *
 * The same, and each file also goes through the third-party work the scan
 * cannot avoid: JSON files (snapshots, tags, hints) through the JSON
 * parser the scan uses (pm_json_parse, nothing filled in), Avro files'
 * blocks through zstd decompression (a minimal container walk; no Avro
 * decoding, no bookkeeping). */
#define _GNU_SOURCE
#include "pm_exec.h"
#include "pm_orphan.h"

#include <dirent.h>
#include <fcntl.h>
#include <zstd.h>

#include "pm_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the whole process (every thread), user + system */
static double cpu_s(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
           (double)u.ru_stime.tv_usec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- floor ---------------------------------------------------------------- */

typedef struct floor_ctx {
    char **read;          /* metadata files to read */
    size_t n_read, cap_read;
    int64_t files, bytes; /* __atomic for bytes */
} floor_ctx;

static int is_meta_dir(const char *name) {
    return !strcmp(name, "snapshot") || !strcmp(name, "tag") || !strcmp(name, "changelog") ||
           !strcmp(name, "manifest");
}

/* readdir walk; files under metadata directories are queued for reading */
static void walk(floor_ctx *f, const char *dir, int meta) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2]))) continue;
        size_t l = strlen(dir) + strlen(nm) + 2;
        char *p = malloc(l);
        snprintf(p, l, "%s/%s", dir, nm);
        if (de->d_type == DT_DIR) {
            walk(f, p, is_meta_dir(nm));
            free(p);
            continue;
        }
        f->files++;
        if (!meta) { free(p); continue; }
        if (f->n_read == f->cap_read) {
            f->cap_read = f->cap_read ? f->cap_read * 2 : 1024;
            f->read = realloc(f->read, f->cap_read * sizeof *f->read);
        }
        f->read[f->n_read++] = p;
    }
    closedir(d);
}

static int parse_too;     /* --floor-parse */

static int vlong(const uint8_t **p, const uint8_t *end, int64_t *out) {
    uint64_t u = 0;
    for (int s = 0; *p < end && s < 64; s += 7) {
        uint8_t b = *(*p)++;
        u |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) { *out = (int64_t)((u >> 1) ^ (~(u & 1) + 1)); return 0; }
    }
    return -1;
}

/* zstd-decompress every block of an Avro container (output discarded) */
static void decompress_avro(const uint8_t *d, size_t n) {
    static __thread ZSTD_DCtx *dc;
    static __thread uint8_t out[1 << 17];
    const uint8_t *p = d + 4, *end = d + n;
    int zstd = 0;
    int64_t c, len;
    if (n < 4 || memcmp(d, "Obj\x01", 4)) return;
    while (!vlong(&p, end, &c) && c != 0) {          /* metadata map */
        if (c < 0) { c = -c; if (vlong(&p, end, &len)) return; }
        for (int64_t i = 0; i < c; i++) {
            int64_t kl, vl;
            if (vlong(&p, end, &kl) || kl < 0 || kl > end - p) return;
            const uint8_t *k = p;
            p += kl;
            if (vlong(&p, end, &vl) || vl < 0 || vl > end - p) return;
            if (kl == 10 && !memcmp(k, "avro.codec", 10) && vl == 9 && !memcmp(p, "zstandard", 9)) zstd = 1;
            p += vl;
        }
    }
    p += 16;                                           /* sync */
    if (!zstd) return;
    if (!dc && !(dc = ZSTD_createDCtx())) return;
    while (p < end) {
        if (vlong(&p, end, &c) || vlong(&p, end, &len) || len < 0 || len > end - p) return;
        ZSTD_DCtx_reset(dc, ZSTD_reset_session_only);
        ZSTD_inBuffer in = {p, (size_t)len, 0};
        for (;;) {
            ZSTD_outBuffer o = {out, sizeof out, 0};
            size_t r = ZSTD_decompressStream(dc, &o, &in);
            if (ZSTD_isError(r) || (r == 0 && in.pos == in.size) || (o.pos < o.size && in.pos == in.size)) break;
        }
        p += len + 16;
    }
}

static void read_file(void *ctx, size_t i) {
    floor_ctx *f = ctx;
    int fd = open(f->read[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    size_t cap = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
    uint8_t *buf = malloc(cap);
    ssize_t r;
    size_t n = 0;
    while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
        n += (size_t)r;
        if (n == cap) { uint8_t *nb = realloc(buf, cap *= 2); if (!nb) break; buf = nb; }
    }
    close(fd);
    if (parse_too && buf) {
        if (strstr(f->read[i], "/manifest/")) {
            decompress_avro(buf, n);
        } else {
            pm_json_doc *d = NULL;
            pm_json_error je;
            (void)pm_json_parse((const char *)buf, n, &d, &je);
            pm_json_doc_free(d);
        }
    }
    free(buf);
    __atomic_fetch_add(&f->bytes, (int64_t)n, __ATOMIC_RELAXED);
}

static int run_floor(const char *table, int threads, int reps) {
    double *tv = calloc((size_t)reps, sizeof *tv);
    floor_ctx f;
    double cpu_best = 1e9;
    for (int r = 0; r < reps; r++) {
        memset(&f, 0, sizeof f);
        double c0 = cpu_s();
        double t0 = now_s();
        walk(&f, table, 0);
        pm_err e;
        if (pm_exec_run(threads, f.n_read, read_file, &f, "reading", NULL, NULL, &e)) {
            fprintf(stderr, "bench_orphan: %s\n", e.msg);
            return 1;
        }
        tv[r] = now_s() - t0;
        if (cpu_s() - c0 < cpu_best) cpu_best = cpu_s() - c0;
        for (size_t i = 0; i < f.n_read; i++) free(f.read[i]);
        free(f.read);
    }
    qsort(tv, (size_t)reps, sizeof *tv, cmp_d);
    printf("RESULT files=%lld read=%zu bytes=%lld best_s=%.6f median_s=%.6f cpu_s=%.6f\n", (long long)f.files,
           f.n_read, (long long)f.bytes, tv[0], tv[reps / 2], cpu_best);
    free(tv);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_orphan TABLE [--threads N] [--reps N] [--older-than SECONDS] "
                        "[--option KEY=VALUE]...\n");
        return 2;
    }
    int threads = 4, reps = 5, floor = 0;
    int64_t older_than_s = 0;   /* the cut-off's age: 0 = now */
    const char *opts[2 * 16 + 1] = {NULL};   /* FileIO options: key, value, ..., NULL */
    char optbuf[16][256];
    int n_opts = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--option") && i + 1 < argc && n_opts < 16) {
            snprintf(optbuf[n_opts], sizeof optbuf[n_opts], "%s", argv[++i]);
            char *eq = strchr(optbuf[n_opts], '=');
            if (!eq) { fprintf(stderr, "bench_orphan: --option %s: no '='\n", argv[i]); return 2; }
            *eq = '\0';
            opts[2 * n_opts] = optbuf[n_opts];
            opts[2 * n_opts + 1] = eq + 1;
            n_opts++;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--older-than") && i + 1 < argc) older_than_s = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--floor")) floor = 1;
        else if (!strcmp(argv[i], "--floor-parse")) floor = parse_too = 1;
        else { fprintf(stderr, "bench_orphan: unknown option %s\n", argv[i]); return 2; }
    }
    if (reps < 1 || reps > 100 || older_than_s < 0) return 2;
    if (floor) return run_floor(argv[1], threads, reps);
    double *tv = calloc((size_t)reps, sizeof *tv);
    int64_t listed = 0, used = 0, planned = 0, mread = 0, mskipped = 0;
    double cpu_best = 1e9;
    for (int r = 0; r < reps; r++) {
        paimon_table *t;
        pm_err e;
        double c0 = cpu_s();
        double t0 = now_s();
        if (pm_table_open_opts(argv[1], NULL, n_opts ? opts : NULL, &t, &e)) {
            fprintf(stderr, "bench_orphan: %s\n", e.msg);
            return 1;
        }
        pm_orphan_opts o;
        memset(&o, 0, sizeof o);
        o.has_older_than = 1;
        o.older_than_ms = pm_now_millis() - older_than_s * 1000;
        o.allow_young_cutoff = 1;   /* below the 1 h floor on purpose */
        o.threads = threads;
        o.dry_run = 1;
        pm_orphan_result res;
        if (pm_remove_orphan_files(t, &o, &res, &e)) { fprintf(stderr, "bench_orphan: %s\n", e.msg); return 1; }
        tv[r] = now_s() - t0;
        if (cpu_s() - c0 < cpu_best) cpu_best = cpu_s() - c0;
        listed = res.listed;
        used = res.used;
        mread = res.manifests_read;
        mskipped = res.manifests_skipped;
        planned = 0;
        for (int k = 0; k < PM_K__N; k++) planned += res.clean.count[k];
        pm_clean_result_free(&res.clean);
        pm_table_free(t);
    }
    qsort(tv, (size_t)reps, sizeof *tv, cmp_d);
    printf("RESULT listed=%lld used=%lld planned=%lld manifests_read=%lld manifests_skipped=%lld best_s=%.6f "
           "median_s=%.6f cpu_s=%.6f\n", (long long)listed, (long long)used, (long long)planned, (long long)mread,
           (long long)mskipped, tv[0], tv[reps / 2], cpu_best);
    free(tv);
    return 0;
}
