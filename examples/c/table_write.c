/* table_write: create a table, write rows and commit them through the
 * public C API alone (paimon.h, no Lua), then list what the new snapshot
 * holds.
 *
 *   table_write TABLE [ROWS]
 *
 * TABLE must not exist yet; ROWS (default 4) orders are written to the
 * partitions dt=2026-01-01 and dt=2026-01-02. Output (tab-separated):
 *
 *   snapshot  ID  RECORDS
 *   file      PARTITION  PATH  RECORDS
 *
 * Exit codes: 0 committed, 1 failed, 2 usage. */
#include <paimon.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, paimon_table *t, int rc) {
    fprintf(stderr, "table_write: %s: %s (%s)\n", what, paimon_table_errmsg(t), paimon_errstr(rc));
    return 1;
}

/* Write `rows` orders; the messages describe the new data files. */
static int write_orders(paimon_table *t, long rows, paimon_messages **msgs) {
    paimon_writer *w = NULL;
    int rc = paimon_writer_open(t, &w);
    if (rc) return fail("opening a writer", t, rc);
    for (long k = 0; k < rows && !rc; k++) {
        char amount[32];
        snprintf(amount, sizeof amount, "%ld.%02ld", 10 + k, k % 100);   /* decimals as text: exact */
        paimon_value tags[2] = {paimon_str("web"), paimon_str(k % 2 ? "repeat" : "new")};
        paimon_value row[4] = {
            paimon_int(1000 + k),                             /* order_id BIGINT NOT NULL */
            paimon_str(k % 2 ? "2026-01-02" : "2026-01-01"),  /* dt STRING (partition key) */
            paimon_str(amount),                               /* amount DECIMAL(10, 2) */
            paimon_array(tags, 2),                            /* tags ARRAY<STRING> */
        };
        rc = paimon_writer_write(w, row, 4);
    }
    if (rc) { fail("writing a row", t, rc); paimon_writer_close(w); return 1; }
    rc = paimon_writer_prepare_commit(w, msgs);
    paimon_writer_close(w);
    return rc ? fail("closing the data files", t, rc) : 0;
}

static int list_snapshot(paimon_table *t, int64_t id) {
    paimon_snapshot *s = NULL;
    paimon_file_iter *it = NULL;
    paimon_file_info f;
    int rc = paimon_snapshot_load(t, id, &s);
    if (rc) return fail("reading the snapshot", t, rc);
    printf("snapshot\t%lld\t%lld\n", (long long)id, (long long)paimon_snapshot_total_record_count(s));
    if ((rc = paimon_file_iter_open(t, s, &it))) { paimon_snapshot_free(s); return fail("listing files", t, rc); }
    while ((rc = paimon_file_iter_next(it, &f)) == PAIMON_OK)
        printf("file\t%s\t%s\t%lld\n", f.partition, f.file_path, (long long)f.record_count);
    paimon_file_iter_close(it);
    paimon_snapshot_free(s);
    return rc == PAIMON_DONE ? 0 : fail("listing files", t, rc);
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3 || argv[1][0] == '-') {
        fputs("usage: table_write TABLE [ROWS]\n", argc > 1 && argv[1][1] == 'h' ? stdout : stderr);
        return argc > 1 && argv[1][1] == 'h' ? 0 : 2;
    }
    long rows = argc == 3 ? strtol(argv[2], NULL, 10) : 4;
    if (rows < 0) { fputs("table_write: ROWS must be 0 or more\n", stderr); return 2; }

    static const paimon_column columns[] = {
        {"order_id", "BIGINT NOT NULL", "the order"},
        {"dt", "STRING", "day of the order"},
        {"amount", "DECIMAL(10, 2)", NULL},
        {"tags", "ARRAY<STRING>", NULL},
    };
    static const char *const partition_keys[] = {"dt"};
    static const char *const options[] = {"file.format", "avro", "bucket", "-1"};
    paimon_table_spec spec = {columns, 4, partition_keys, 1, NULL, 0, options, 2, "written by table_write"};
    paimon_table *t = NULL;
    char *err = NULL;
    int rc = paimon_table_create(argv[1], &spec, &t, &err);
    if (rc) {
        fprintf(stderr, "table_write: %s\n", err ? err : paimon_errstr(rc));
        paimon_free(err);
        return 1;
    }

    paimon_messages *msgs = NULL;
    paimon_commit *c = NULL;
    int64_t id = 0;
    int created = 0, status = write_orders(t, rows, &msgs);
    if (!status && (rc = paimon_commit_open(t, NULL, &c))) status = fail("starting the commit", t, rc);
    if (!status && (rc = paimon_commit_commit(c, msgs, INT64_MAX, NULL, &id, &created))) {
        status = fail("committing", t, rc);
        if (rc != PAIMON_UNCERTAIN) paimon_commit_abort(c, msgs, NULL, NULL);   /* unknown outcome: keep the files */
    }
    if (!status && !created) printf("nothing to commit\n");
    else if (!status) status = list_snapshot(t, id);
    paimon_commit_close(c);
    paimon_messages_free(msgs);
    paimon_table_close(t);
    return status;
}
