/* Orphan-scan benchmark (bench/run.sh bench_orphan).
 *
 *   bench_orphan TABLE [--threads 4] [--reps 5]
 *
 * pm_remove_orphan_files as a dry run with the cut-off "now": lists every
 * candidate directory (stat'ing each file for its age), reads the used set
 * of every snapshot, plans nothing on a clean table. Timed --reps times.
 * Prints "RESULT candidates=.. used=.. planned=.. best_s=.. median_s=..". */
#define _GNU_SOURCE
#include "pm_orphan.h"

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

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_orphan TABLE [--threads N] [--reps N]\n");
        return 2;
    }
    int threads = 4, reps = 5;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else { fprintf(stderr, "bench_orphan: unknown option %s\n", argv[i]); return 2; }
    }
    if (reps < 1 || reps > 100) return 2;
    double *tv = calloc((size_t)reps, sizeof *tv);
    int64_t candidates = 0, used = 0, planned = 0;
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
        candidates = res.candidates;
        used = res.used;
        planned = 0;
        for (int k = 0; k < PM_K__N; k++) planned += res.clean.count[k];
        pm_clean_result_free(&res.clean);
        pm_table_free(t);
    }
    qsort(tv, (size_t)reps, sizeof *tv, cmp_d);
    printf("RESULT candidates=%lld used=%lld planned=%lld best_s=%.6f median_s=%.6f\n", (long long)candidates,
           (long long)used, (long long)planned, tv[0], tv[reps / 2]);
    free(tv);
    return 0;
}
