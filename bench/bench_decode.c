/* bench_decode: manifest decode throughput of pm_avro_reader.
 *
 *   bench_decode FILE [--reps N] [--raw-bytes N] [--records | --floor]
 *
 * The file is read into memory once (not timed). Each repetition opens a
 * pm_avro_reader over the buffer, iterates every record and walks every
 * decoded field (scalars summed, bytes/strings length + first and last
 * byte), then closes the reader. Prints per-repetition times and a final
 * machine-readable line:
 *
 *   RESULT entries=N reps=R best_s=.. median_s=.. entries_per_s=.. \
 *          file_mb_s=.. raw_mb_s=.. checksum=..
 *
 * entries_per_s / *_mb_s use the best repetition; file MB/s counts the
 * compressed file bytes, raw MB/s the uncompressed block payload bytes
 * (--raw-bytes, e.g. from gen_manifest.py's .meta.json; 0 if unknown).
 * MB = 10^6 bytes.
 *
 * --floor times the physical floor of any decoder: walk the container's
 * blocks and zstd-decompress each (streaming, as the frames carry no content
 * size) without decoding a record. Written here from the Avro spec, not
 * with the core's reader, so it shares none of the code it measures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zstd.h>

#include "pm_avro.h"
#include "pm_manifest.h"

static uint64_t walk(const pm_avro_value *v) {
    uint64_t h = (uint64_t)v->type * 31u + (uint64_t)(v->branch + 1);
    size_t i;
    switch (v->type) {
    case PM_AVRO_NULL: break;
    case PM_AVRO_BOOLEAN: h += (uint64_t)v->u.boolean; break;
    case PM_AVRO_INT: case PM_AVRO_ENUM: h += (uint64_t)(uint32_t)v->u.i; break;
    case PM_AVRO_LONG: h += (uint64_t)v->u.l; break;
    case PM_AVRO_FLOAT: h += (uint64_t)(int64_t)v->u.f; break;
    case PM_AVRO_DOUBLE: h += (uint64_t)(int64_t)v->u.d; break;
    case PM_AVRO_BYTES: case PM_AVRO_STRING: case PM_AVRO_FIXED:
        h += v->u.bytes.len;
        if (v->u.bytes.len)
            h += (uint64_t)v->u.bytes.ptr[0] * 7u + v->u.bytes.ptr[v->u.bytes.len - 1];
        break;
    case PM_AVRO_RECORD: case PM_AVRO_ARRAY:
        for (i = 0; i < v->u.list.n; i++) h = h * 1099511628211ull + walk(&v->u.list.items[i]);
        break;
    case PM_AVRO_MAP:
        for (i = 0; i < v->u.map.n; i++)
            h = h * 1099511628211ull + walk(&v->u.map.keys[i]) + walk(&v->u.map.values[i]);
        break;
    default: break;
    }
    return h;
}

/* Avro zig-zag varint at *p (< end); -1 on a truncated or overlong one. */
static int read_long(const uint8_t **p, const uint8_t *end, int64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return 0;
        }
    }
    return -1;
}

/* The floor: header (magic, metadata map, sync), then per block: count,
 * size, the zstd frame(s) decompressed into a reused buffer, sync. Returns
 * the record count (the blocks' counts) or -1; *raw: uncompressed bytes. */
static long floor_pass(const uint8_t *data, size_t len, ZSTD_DCtx *dctx, uint8_t *out, size_t cap,
                       double *raw, uint64_t *h) {
    const uint8_t *p = data, *end = data + len;
    int64_t n, k;
    long entries = 0;
    if (len < 4 || memcmp(p, "Obj\1", 4)) return -1;
    p += 4;
    for (;;) {   /* metadata map: blocks of key/value pairs */
        if (read_long(&p, end, &n)) return -1;
        if (!n) break;
        if (n < 0) { n = -n; if (read_long(&p, end, &k)) return -1; }
        for (int64_t i = 0; i < 2 * n; i++) {
            if (read_long(&p, end, &k) || k < 0 || k > end - p) return -1;
            p += k;
        }
    }
    if (end - p < 16) return -1;
    const uint8_t *sync = p;
    p += 16;
    *raw = 0;
    while (p < end) {
        if (read_long(&p, end, &n) || read_long(&p, end, &k) || n < 0 || k < 0 || k > end - p) return -1;
        ZSTD_inBuffer in = {p, (size_t)k, 0};
        ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
        while (in.pos < in.size) {
            ZSTD_outBuffer o = {out, cap, 0};
            size_t r = ZSTD_decompressStream(dctx, &o, &in);
            if (ZSTD_isError(r)) return -1;
            *raw += (double)o.pos;
            if (o.pos) *h = *h * 31u + o.pos + out[0];
            if (!r && in.pos < in.size) ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);   /* next frame */
        }
        p += k;
        if (end - p < 16 || memcmp(p, sync, 16)) return -1;
        p += 16;
        entries += (long)n;
    }
    return entries;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;
    if (!f) { perror(path); return NULL; }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        perror(path); fclose(f); return NULL;
    }
    buf = malloc((size_t)n ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        perror(path); fclose(f); free(buf); return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int reps = 5, i, records = 0, floor_only = 0;
    double raw_bytes = 0, *times;
    uint8_t *data;
    size_t len;
    long entries = -1;
    uint64_t checksum = 0;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--records")) records = 1;
        else if (!strcmp(argv[i], "--floor")) floor_only = 1;
        else if (!strcmp(argv[i], "--raw-bytes") && i + 1 < argc) raw_bytes = atof(argv[++i]);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s FILE [--reps N] [--raw-bytes N] [--records | --floor]\n", argv[0]);
            return 2;
        } else path = argv[i];
    }
    if (!path || reps < 1) {
        fprintf(stderr, "usage: %s FILE [--reps N] [--raw-bytes N] [--records | --floor]\n", argv[0]);
        return 2;
    }
    if (!(data = read_file(path, &len))) return 1;
    times = calloc((size_t)reps, sizeof *times);
    if (!times) return 1;

    for (i = 0; i < reps; i++) {
        pm_avro_reader *r = NULL;
        pm_err e;
        const pm_avro_value *v;
        long n = 0;
        int rc;
        uint64_t h = 0;
        double t0 = now_s();

        memset(&e, 0, sizeof e);
        if (floor_only) {
            static uint8_t out[1 << 17];   /* ZSTD_DStreamOutSize() is 128 KiB */
            static ZSTD_DCtx *dctx;
            double raw;
            if (!dctx && !(dctx = ZSTD_createDCtx())) return 1;
            n = floor_pass(data, len, dctx, out, sizeof out, &raw, &h);
            if (n < 0) {
                fprintf(stderr, "bench_decode: %s: not a zstandard Avro container this floor can walk\n", path);
                return 1;
            }
            if (raw_bytes <= 0) raw_bytes = raw;
            rc = PAIMON_DONE;
            goto timed;
        }
        if (records) {
            /* full ManifestEntry/DataFileMeta records, as scans use them */
            pm_manifest_reader *mr = NULL;
            const pm_manifest_entry *me;
            if (pm_manifest_open_bytes(data, len, path, PM_MANIFEST_FILE, &mr, &e) != PAIMON_OK) {
                fprintf(stderr, "bench_decode: open: %s\n", e.msg);
                return 1;
            }
            while ((rc = pm_manifest_next_entry(mr, &me, &e)) == PAIMON_OK) {
                h = h * 31u + (uint64_t)me->file.file_size + (uint64_t)me->file.row_count +
                    strlen(me->file.file_name) + me->partition.len + me->file.value_stats.n_null_counts;
                n++;
            }
            pm_manifest_close(mr);
            goto timed;
        }
        if (pm_avro_reader_open(data, len, path, &r, &e) != PAIMON_OK) {
            fprintf(stderr, "bench_decode: open: %s\n", e.msg);
            return 1;
        }
        while ((rc = pm_avro_reader_next(r, &v, &e)) == PAIMON_OK) {
            h = h * 31u + walk(v);
            n++;
        }
        pm_avro_reader_close(r);
    timed:
        times[i] = now_s() - t0;
        if (rc != PAIMON_DONE) {
            fprintf(stderr, "bench_decode: record %ld: %s\n", n, e.msg);
            return 1;
        }
        if (entries >= 0 && (n != entries || h != checksum)) {
            fprintf(stderr, "bench_decode: repetitions disagree\n");
            return 1;
        }
        entries = n;
        checksum = h;
        fprintf(stderr, "  rep %d: %.4f s (%.0f entries/s)\n", i + 1, times[i], (double)n / times[i]);
    }
    qsort(times, (size_t)reps, sizeof *times, cmp_double);
    {
        double best = times[0], median = times[reps / 2];
        if (reps % 2 == 0) median = (times[reps / 2 - 1] + times[reps / 2]) / 2;
        printf("RESULT entries=%ld reps=%d best_s=%.6f median_s=%.6f entries_per_s=%.0f "
               "file_mb_s=%.1f raw_mb_s=%.1f checksum=%016llx\n",
               entries, reps, best, median, (double)entries / best,
               (double)len / 1e6 / best, raw_bytes / 1e6 / best,
               (unsigned long long)checksum);
    }
    free(times);
    free(data);
    return 0;
}
