/* table_info: the public C API without Lua. Opens a Paimon table, prints its
 * latest snapshot and the live data files of that snapshot.
 *
 *   cc table_info.c $(pkg-config --cflags --libs paimon) -o table_info
 *   ./table_info /warehouse/demo.db/orders
 *   ./table_info s3://lake/wh/demo.db/orders --option s3.endpoint=http://127.0.0.1:7480 \
 *                --option s3.path.style.access=true
 *
 * --option KEY=VALUE (repeatable; the value may hold '='): a FileIO option
 * for the table's URI (paimon_table_open_v2); credentials are best left to
 * the environment (AWS_ACCESS_KEY_ID, ...).
 *
 * Output (tab-separated, one record per line):
 *   table       PATH
 *   snapshot    ID  COMMIT_KIND  TOTAL_RECORDS  COMMIT_TIME_MILLIS
 *   file        PARTITION  BUCKET  FILE_PATH  RECORDS  BYTES  LEVEL
 *   files       COUNT  RECORDS
 * Exit status: 0 done, 1 failed (message on stderr), 2 usage. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "paimon.h"

static int fail(const char *what, int rc, const char *msg) {
    fprintf(stderr, "table_info: %s: %s (%s)\n", what, msg ? msg : "", paimon_errstr(rc));
    return 1;
}

#define USAGE "usage: table_info TABLE_PATH_OR_URI [--option KEY=VALUE ...]\n"
#define MAX_OPTIONS 64

int main(int argc, char **argv) {
    const char *table = NULL;
    const char *options[2 * MAX_OPTIONS + 1];
    size_t n_opt = 0;   /* strings in options */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--option")) {
            /* the value is never echoed: it may be a credential */
            const char *kv = i + 1 < argc ? argv[++i] : NULL;
            const char *eq = kv ? strchr(kv, '=') : NULL;
            if (!eq || eq == kv || n_opt == 2 * MAX_OPTIONS) {
                fprintf(stderr, "table_info: --option needs KEY=VALUE (a non-empty key, then '=')\n" USAGE);
                return 2;
            }
            argv[i][eq - kv] = '\0';   /* KEY and VALUE in place */
            options[n_opt++] = kv;
            options[n_opt++] = eq + 1;
        } else if (!table && argv[i][0] != '-') {
            table = argv[i];
        } else {
            fprintf(stderr, "table_info: unexpected argument\n" USAGE);
            return 2;
        }
    }
    if (!table) {
        fputs(USAGE, stderr);
        return 2;
    }
    options[n_opt] = NULL;
    paimon_table *t = NULL;
    char *err = NULL;
    int rc = paimon_table_open_v2(table, NULL, options, &t, &err);
    if (rc != PAIMON_OK) {
        int code = fail("open", rc, err);
        paimon_free(err);
        return code;
    }
    printf("table\t%s\n", paimon_table_path(t));

    int64_t id;
    rc = paimon_latest_snapshot_id(t, &id);
    if (rc == PAIMON_NOTFOUND) {             /* a table without commits yet */
        printf("files\t0\t0\n");
        paimon_table_close(t);
        return 0;
    }
    if (rc != PAIMON_OK) {
        int code = fail("latest snapshot", rc, paimon_table_errmsg(t));
        paimon_table_close(t);
        return code;
    }

    paimon_snapshot *s = NULL;
    paimon_file_iter *it = NULL;
    int status = 0;
    if ((rc = paimon_snapshot_load(t, id, &s)) != PAIMON_OK) {
        status = fail("snapshot", rc, paimon_table_errmsg(t));
        goto done;
    }
    printf("snapshot\t%" PRId64 "\t%s\t%" PRId64 "\t%" PRId64 "\n", paimon_snapshot_id(s),
           paimon_snapshot_commit_kind(s), paimon_snapshot_total_record_count(s),
           paimon_snapshot_time_millis(s));

    if ((rc = paimon_file_iter_open(t, s, &it)) != PAIMON_OK) {
        status = fail("files", rc, paimon_table_errmsg(t));
        goto done;
    }
    int64_t n = 0, records = 0;
    paimon_file_info f;
    while ((rc = paimon_file_iter_next(it, &f)) == PAIMON_OK) {
        printf("file\t%s\t%" PRId32 "\t%s\t%" PRId64 "\t%" PRId64 "\t%" PRId32 "\n", f.partition,
               f.bucket, f.file_path, f.record_count, f.file_size, f.level);
        n++;
        records += f.record_count;
    }
    if (rc != PAIMON_DONE) {
        status = fail("files", rc, paimon_table_errmsg(t));
        goto done;
    }
    printf("files\t%" PRId64 "\t%" PRId64 "\n", n, records);

done:
    paimon_file_iter_close(it);
    paimon_snapshot_free(s);
    paimon_table_close(t);
    return status;
}
