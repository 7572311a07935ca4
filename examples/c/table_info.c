/* table_info: the public C API without Lua. Opens a Paimon table, prints its
 * latest snapshot and the live data files of that snapshot.
 *
 *   cc table_info.c $(pkg-config --cflags --libs paimon) -o table_info
 *   ./table_info /warehouse/demo.db/orders
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

int main(int argc, char **argv) {
    if (argc != 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc == 2 ? stdout : stderr, "usage: table_info TABLE_PATH\n");
        return argc == 2 ? 0 : 2;
    }
    paimon_table *t = NULL;
    char *err = NULL;
    int rc = paimon_table_open(argv[1], NULL, &t, &err);
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
