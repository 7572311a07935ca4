/* Orphan-scan benchmark (bench/run.sh bench_orphan).
 *
 *   bench_orphan TABLE [--threads 4] [--reps 5]
 *
 * pm_remove_orphan_files as a dry run with the cut-off "now": lists every
 * candidate directory (stat'ing each file for its age), reads the used set
 * of every snapshot, plans nothing on a clean table. Timed --reps times.
 * Prints "RESULT listed=.. used=.. planned=.. best_s=.. median_s=..".
 *
 *   bench_orphan TABLE --floor [--threads 4] [--reps 5]
 *
 * The physical floor of the same scan: walk the whole tree with readdir
 * (names only, like `find -type f`), then open, read and close every file
 * the used set is built from (snapshot/, tag/, changelog/ and manifest/ of
 * the table and of every branch), --threads at a time, no decoding.
 * Prints "RESULT files=.. read=.. bytes=.. best_s=.. median_s=..". */
#define _GNU_SOURCE
#include "pm_exec.h"
#include "pm_orphan.h"

#include <dirent.h>
#include <fcntl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static void read_file(void *ctx, size_t i) {
    floor_ctx *f = ctx;
    char buf[65536];
    int fd = open(f->read[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t r;
    int64_t n = 0;
    while ((r = read(fd, buf, sizeof buf)) > 0) n += r;
    close(fd);
    __atomic_fetch_add(&f->bytes, n, __ATOMIC_RELAXED);
}

static int run_floor(const char *table, int threads, int reps) {
    double *tv = calloc((size_t)reps, sizeof *tv);
    floor_ctx f;
    for (int r = 0; r < reps; r++) {
        memset(&f, 0, sizeof f);
        double t0 = now_s();
        walk(&f, table, 0);
        pm_err e;
        if (pm_exec_run(threads, f.n_read, read_file, &f, "reading", NULL, NULL, &e)) {
            fprintf(stderr, "bench_orphan: %s\n", e.msg);
            return 1;
        }
        tv[r] = now_s() - t0;
        for (size_t i = 0; i < f.n_read; i++) free(f.read[i]);
        free(f.read);
    }
    qsort(tv, (size_t)reps, sizeof *tv, cmp_d);
    printf("RESULT files=%lld read=%zu bytes=%lld best_s=%.6f median_s=%.6f\n", (long long)f.files, f.n_read,
           (long long)f.bytes, tv[0], tv[reps / 2]);
    free(tv);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_orphan TABLE [--threads N] [--reps N]\n");
        return 2;
    }
    int threads = 4, reps = 5, floor = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--floor")) floor = 1;
        else { fprintf(stderr, "bench_orphan: unknown option %s\n", argv[i]); return 2; }
    }
    if (reps < 1 || reps > 100) return 2;
    if (floor) return run_floor(argv[1], threads, reps);
    double *tv = calloc((size_t)reps, sizeof *tv);
    int64_t listed = 0, used = 0, planned = 0;
    for (int r = 0; r < reps; r++) {
        paimon_table *t;
        pm_err e;
        double t0 = now_s();
        if (pm_table_open(argv[1], NULL, &t, &e)) { fprintf(stderr, "bench_orphan: %s\n", e.msg); return 1; }
        pm_orphan_opts o;
        memset(&o, 0, sizeof o);
        o.has_older_than = 1;
        o.older_than_ms = pm_now_millis();
        o.threads = threads;
        o.dry_run = 1;
        pm_orphan_result res;
        if (pm_remove_orphan_files(t, &o, &res, &e)) { fprintf(stderr, "bench_orphan: %s\n", e.msg); return 1; }
        tv[r] = now_s() - t0;
        listed = res.listed;
        used = res.used;
        planned = 0;
        for (int k = 0; k < PM_K__N; k++) planned += res.clean.count[k];
        pm_clean_result_free(&res.clean);
        pm_table_free(t);
    }
    qsort(tv, (size_t)reps, sizeof *tv, cmp_d);
    printf("RESULT listed=%lld used=%lld planned=%lld best_s=%.6f median_s=%.6f\n", (long long)listed,
           (long long)used, (long long)planned, tv[0], tv[reps / 2]);
    free(tv);
    return 0;
}
