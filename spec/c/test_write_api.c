/* Writing through the public C API (paimon.h): the type rules of
 * paimon_writer_set (each type, range errors quoting the input, NULL on
 * NOT NULL columns, composite shapes) with the binding's messages, a
 * create + write + commit round trip read back through paimon.h and
 * cross-checked with python3-avro, abort (no snapshot, files gone), the
 * empty-commit rule and filter_committed. */
#include "test.h"

#include <paimon.h>
#include <unistd.h>

#define TMP_PREFIX "/tmp/pm_test_write_api."

enum { C_ID, C_B, C_TI, C_SI, C_I, C_F, C_D, C_DEC, C_WDEC, C_S, C_BIN, C_DT, C_TM, C_TS, C_ARR, C_MAP, C_ROW, N_COLS };

static const paimon_column COLS[N_COLS] = {
    {"id", "BIGINT NOT NULL", NULL}, {"b", "BOOLEAN", NULL}, {"ti", "TINYINT", NULL}, {"si", "SMALLINT", NULL},
    {"i", "INT", NULL}, {"f", "FLOAT", NULL}, {"d", "DOUBLE", NULL}, {"dec", "DECIMAL(10, 2)", NULL},
    {"wdec", "DECIMAL(38, 10)", NULL}, {"s", "STRING", "a string"}, {"bin", "BYTES", NULL}, {"dt", "DATE", NULL},
    {"tm", "TIME", NULL}, {"ts", "TIMESTAMP(3)", NULL}, {"arr", "ARRAY<INT>", NULL},
    {"m", "MAP<STRING, INT>", NULL}, {"r", "ROW<a INT, b STRING NOT NULL>", NULL}};

/* A new table "t" under a fresh temp dir (*dir: free and remove). */
static paimon_table *new_table(char **dir, const char *const *pkeys, size_t n_pkeys) {
    *dir = tu_make_tmpdir(TMP_PREFIX);
    if (!*dir) return NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/t", *dir);
    static const char *const options[] = {"file.format", "avro", "bucket", "-1"};
    paimon_table_spec spec = {COLS, N_COLS, pkeys, n_pkeys, NULL, 0, options, 2, "made by test_write_api"};
    paimon_table *t = NULL;
    char *err = NULL;
    int rc = paimon_table_create(path, &spec, &t, &err);
    if (rc) fprintf(stderr, "  create %s: %s\n", path, err ? err : "?");
    paimon_free(err);
    return t;
}

static void drop(paimon_table *t, char *dir) {
    paimon_table_close(t);
    if (dir) tu_rm_rf(dir);
    free(dir);
}

/* paimon_writer_set refuses v for column col with PAIMON_MISUSE and a
 * message containing want. */
static int refused(paimon_writer *w, paimon_table *t, size_t col, paimon_value v, const char *want) {
    int rc = paimon_writer_set(w, col, &v);
    const char *msg = paimon_table_errmsg(t);
    if (rc == PAIMON_MISUSE && strstr(msg, want)) return 1;
    fprintf(stderr, "  column %zu: rc %d, message \"%s\", wanted \"%s\"\n", col, rc, msg, want);
    return 0;
}

TEST(test_type_rules_and_messages) {
    char *dir;
    paimon_table *t = new_table(&dir, NULL, 0);
    CHECK(t != NULL);
    if (!t) return;
    paimon_writer *w = NULL;
    CHECK_EQ_INT(paimon_writer_open(t, &w), PAIMON_OK);
    if (!w) { drop(t, dir); return; }
    /* integers: exact, range checked, the input quoted as given */
    CHECK(refused(w, t, C_TI, paimon_int(128), "column 'ti' (TINYINT): 128 is out of range [-128, 127]"));
    CHECK(refused(w, t, C_SI, paimon_str("32768"), "column 'si' (SMALLINT): '32768' is out of range [-32768, 32767]"));
    CHECK(refused(w, t, C_I, paimon_str("2147483648"), "'2147483648' is out of range [-2147483648, 2147483647]"));
    CHECK(refused(w, t, C_ID, paimon_str("9223372036854775808"), "'9223372036854775808' is out of range"));
    CHECK(refused(w, t, C_ID, paimon_str("0x10"), "expected an integer (a number or decimal digits), got '0x10'"));
    CHECK(refused(w, t, C_ID, paimon_str("1e3"), "got '1e3'"));
    CHECK(refused(w, t, C_I, paimon_double(1.5), "expected an integer (a number or decimal digits), got 1.5"));
    CHECK(refused(w, t, C_ID, paimon_double(9007199254740992.0), "may have been rounded"));
    CHECK(refused(w, t, C_ID, paimon_double(9223372036854775808.0), "is out of range"));
    CHECK(refused(w, t, C_ID, paimon_bool(1), "expected an integer (a number or decimal digits), got boolean"));
    /* NULL on a NOT NULL column, at the top and nested */
    CHECK(refused(w, t, C_ID, paimon_null(), "column 'id' is NOT NULL but the value is null"));
    paimon_value rk[2] = {paimon_str("a"), paimon_str("b")}, rv[2] = {paimon_int(1), paimon_null()};
    CHECK(refused(w, t, C_ROW, paimon_map(rk, rv, 2), "column 'r' is NOT NULL but the value is null"));
    /* the other atomic types */
    CHECK(refused(w, t, C_B, paimon_int(1), "column 'b' (BOOLEAN): expected a boolean, got number"));
    CHECK(refused(w, t, C_F, paimon_str("one"), "column 'f': 'one' is not a number"));
    CHECK(refused(w, t, C_D, paimon_bool(0), "column 'd' (DOUBLE): expected a number, got boolean"));
    CHECK(refused(w, t, C_DEC, paimon_str("1.234"), "column 'dec' (DECIMAL(10, 2)): value '1.234' has more fractional digits than the scale"));
    /* a double is its shortest text, never rounded to the scale (2.675 stored 2.67) */
    CHECK(refused(w, t, C_DEC, paimon_double(2.675), "column 'dec' (DECIMAL(10, 2)): value 2.675 has more fractional digits than the scale"));
    CHECK(refused(w, t, C_DEC, paimon_double(1.005), "value 1.005 has more fractional digits than the scale"));
    CHECK(refused(w, t, C_WDEC, paimon_double(0.1 + 0.2), "value 0.30000000000000004 has more than 15 significant digits"));
    CHECK(refused(w, t, C_DEC, paimon_double(1e300), "value 1e+300 has too many digits"));
    CHECK(refused(w, t, C_DEC, paimon_str("123456789"), "value '123456789' does not fit the precision"));
    CHECK(refused(w, t, C_S, paimon_int(5), "column 's' (VARCHAR): expected a string, got number"));
    CHECK(refused(w, t, C_DT, paimon_str("2024-02-30"), "column 'dt' (DATE): '2024-02-30' is not a date (yyyy-MM-dd)"));
    CHECK(refused(w, t, C_TM, paimon_int(86400000), "column 'tm' (TIME): out of range"));
    CHECK(refused(w, t, C_TS, paimon_str("2024-01-01 25:00:00"), "is not a timestamp"));
    /* composite shapes */
    CHECK(refused(w, t, C_ARR, paimon_int(3), "column 'arr' (ARRAY): expected a table, got number"));
    paimon_value items[2] = {paimon_int(1), paimon_str("2147483648")};
    CHECK(refused(w, t, C_ARR, paimon_array(items, 2), "'2147483648' is out of range"));
    paimon_value mk[1] = {paimon_int(1)}, mv[1] = {paimon_int(1)};
    CHECK(refused(w, t, C_MAP, paimon_map(mk, mv, 1), "column 'm': map keys must be strings"));
    paimon_value xk[2] = {paimon_str("b"), paimon_str("zz")}, xv[2] = {paimon_str("x"), paimon_int(1)};
    CHECK(refused(w, t, C_ROW, paimon_map(xk, xv, 2), "the ROW value has a field that the type does not have"));
    CHECK(refused(w, t, C_ARR, paimon_map(mk, mv, 1), "expected an array value, got a map"));
    /* bad calls */
    paimon_value one = paimon_int(1);
    CHECK_EQ_INT(paimon_writer_set(w, N_COLS, &one), PAIMON_MISUSE);
    CHECK_EQ_INT(paimon_writer_write(w, &one, 1), PAIMON_MISUSE);
    CHECK(strstr(paimon_table_errmsg(t), "a row of 1 values for a table of 17 columns") != NULL);
    /* an unset NOT NULL column: the row is refused, nothing written */
    CHECK_EQ_INT(paimon_writer_set(w, C_S, &(paimon_value){PAIMON_VALUE_STRING, NULL, {.str = {"x", 1}}}), PAIMON_OK);
    CHECK_EQ_INT(paimon_writer_write_row(w), PAIMON_MISUSE);
    CHECK(strstr(paimon_table_errmsg(t), "column 'id' is NOT NULL") != NULL);
    CHECK_EQ_INT(paimon_writer_rows(w), 0);
    paimon_writer_close(w);
    drop(t, dir);
}

/* Row k of the round trip: every type, NULLs in odd rows. */
static void fill_row(paimon_value *row, int k, paimon_value *items, paimon_value *mk, paimon_value *mv,
                     paimon_value *rk, paimon_value *rv) {
    for (int c = 0; c < N_COLS; c++) row[c] = paimon_null();
    row[C_ID] = paimon_int(100 + k);
    if (k % 2) return;
    static const char bin[3] = {0, 1, 2};
    row[C_B] = paimon_bool(k == 0);
    row[C_TI] = paimon_str("-128");
    row[C_SI] = paimon_int(32767);
    row[C_I] = paimon_double(7.0);
    row[C_F] = paimon_double(1.5);
    row[C_D] = paimon_str("-Infinity");
    row[C_DEC] = paimon_str("12.5");
    row[C_WDEC] = paimon_str("-1234567890123456789012345678.0123456789");
    row[C_S] = paimon_str("héllo");
    row[C_BIN] = paimon_bytes(bin, 3);
    row[C_DT] = paimon_str("2024-01-31");
    row[C_TM] = paimon_str("12:30:00.250");
    row[C_TS] = paimon_str("2024-01-31 12:30:00.123");
    items[0] = paimon_int(1);
    items[1] = paimon_null();
    items[2] = paimon_str("3");
    row[C_ARR] = paimon_array(items, 3);
    mk[0] = paimon_str("k");
    mv[0] = paimon_int(9);
    row[C_MAP] = paimon_map(mk, mv, 1);
    rk[0] = paimon_str("b");
    rv[0] = paimon_str("inner");
    row[C_ROW] = paimon_map(rk, rv, 1);   /* field a not given: NULL */
}

static int write_rows(paimon_table *t, int n, paimon_messages **msgs) {
    paimon_writer *w = NULL;
    int rc = paimon_writer_open(t, &w);
    for (int k = 0; k < n && !rc; k++) {
        paimon_value row[N_COLS], items[3], mk[1], mv[1], rk[1], rv[1];
        fill_row(row, k, items, mk, mv, rk, rv);
        rc = paimon_writer_write(w, row, N_COLS);
    }
    if (!rc) rc = paimon_writer_prepare_commit(w, msgs);
    if (rc) fprintf(stderr, "  write: %s\n", paimon_table_errmsg(t));
    paimon_writer_close(w);
    return rc;
}

static const char PY_ROWS[] =
    "import sys, json, warnings, decimal, datetime\n"
    "warnings.simplefilter('ignore')\n"
    "import avro.datafile, avro.io\n"
    "def norm(v):\n"
    "    if isinstance(v, dict): return {k: norm(x) for k, x in v.items()}\n"
    "    if isinstance(v, list): return [norm(x) for x in v]\n"
    "    if isinstance(v, bytes): return v.hex()\n"
    "    if isinstance(v, (decimal.Decimal, datetime.date, datetime.time, datetime.datetime)): return str(v)\n"
    "    if isinstance(v, float) and v != v: return 'NaN'\n"
    "    return v\n"
    "rows = []\n"
    "for p in sys.argv[1:]:\n"
    "    with open(p, 'rb') as f:\n"
    "        rows += [norm(r) for r in avro.datafile.DataFileReader(f, avro.io.DatumReader())]\n"
    "rows.sort(key=lambda r: r['id'])\n"
    "for r in rows: print(json.dumps(r, sort_keys=True, ensure_ascii=False))\n";

TEST(test_round_trip_commit_read_back) {
    char *dir;
    paimon_table *t = new_table(&dir, NULL, 0);
    CHECK(t != NULL);
    if (!t) return;
    paimon_messages *msgs = NULL;
    CHECK_EQ_INT(write_rows(t, 3, &msgs), PAIMON_OK);
    CHECK_EQ_INT(paimon_messages_count(msgs), 1);
    CHECK_EQ_INT(paimon_messages_row_count(msgs), 3);
    paimon_commit *c = NULL;
    CHECK_EQ_INT(paimon_commit_open(t, "writer-1", &c), PAIMON_OK);
    CHECK_EQ_STR(paimon_commit_user(c), "writer-1");
    int64_t id = -1;
    int created = -1;
    CHECK_EQ_INT(paimon_commit_commit(c, msgs, 7, NULL, &id, &created), PAIMON_OK);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(created, 1);
    /* read back through paimon.h */
    paimon_snapshot *s = NULL;
    CHECK_EQ_INT(paimon_snapshot_load(t, 1, &s), PAIMON_OK);
    if (s) {
        CHECK_EQ_INT(paimon_snapshot_total_record_count(s), 3);
        CHECK_EQ_STR(paimon_snapshot_commit_kind(s), "APPEND");
        paimon_file_iter *it = NULL;
        paimon_file_info fi;
        CHECK_EQ_INT(paimon_file_iter_open(t, s, &it), PAIMON_OK);
        CHECK_EQ_INT(paimon_file_iter_next(it, &fi), PAIMON_OK);
        CHECK_EQ_STR(fi.file_path, paimon_messages_file_path(msgs, 0));
        CHECK_EQ_INT(fi.record_count, 3);
        CHECK_EQ_INT(paimon_file_iter_next(it, &fi), PAIMON_DONE);
        paimon_file_iter_close(it);
        paimon_snapshot_free(s);
    }
    /* python3-avro reads the same values */
    char script[600], cmd[2048];
    snprintf(script, sizeof script, "%s/rows.py", dir);
    CHECK_EQ_INT(tu_write_file(script, PY_ROWS, sizeof PY_ROWS - 1), 0);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s/t/%s' 2>&1", script, dir, paimon_messages_file_path(msgs, 0));
    int st = 0;
    char *out = tu_sh_out(cmd, &st);
    CHECK_EQ_INT(st, 0);
    static const char *const want[] = {
        "{\"arr\": [1, null, 3], \"b\": true, \"bin\": \"000102\", \"d\": -Infinity, \"dec\": \"12.50\", "
        "\"dt\": \"2024-01-31\", \"f\": 1.5, \"i\": 7, \"id\": 100, \"m\": {\"k\": 9}, \"r\": {\"a\": null, \"b\": \"inner\"}, "
        "\"s\": \"héllo\", \"si\": 32767, \"ti\": -128, \"tm\": \"12:30:00\", "   /* TIME is TIME(0): the fraction is cut */
        "\"ts\": \"2024-01-31 12:30:00.123000+00:00\", \"wdec\": \"-1234567890123456789012345678.0123456789\"}\n"
        "{\"arr\": null, \"b\": null, \"bin\": null, \"d\": null, \"dec\": null, \"dt\": null, \"f\": null, \"i\": null, "
        "\"id\": 101, \"m\": null, \"r\": null, \"s\": null, \"si\": null, \"ti\": null, \"tm\": null, \"ts\": null, \"wdec\": null}\n"
        "{\"arr\": [1, null, 3], \"b\": false, ",
        "\"id\": 102, "};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        int found = out && strstr(out, want[k]) != NULL;
        if (!found) fprintf(stderr, "  python3-avro rows lack: %s\n  got: %s\n", want[k], out ? out : "(none)");
        CHECK(found);
    }
    free(out);
    /* the same user sees identifier 7 committed */
    int64_t ids[3] = {6, 7, 8};
    uint8_t done[3] = {9, 9, 9};
    paimon_commit *c2 = NULL;
    CHECK_EQ_INT(paimon_commit_open(t, "writer-1", &c2), PAIMON_OK);
    CHECK_EQ_INT(paimon_commit_filter_committed(c2, ids, 3, done), PAIMON_OK);
    CHECK(done[0] == 1 && done[1] == 1 && done[2] == 0);
    paimon_commit_close(c2);
    CHECK_EQ_INT(paimon_commit_open(t, "someone-else", &c2), PAIMON_OK);
    CHECK_EQ_INT(paimon_commit_filter_committed(c2, ids, 3, done), PAIMON_OK);
    CHECK(done[0] == 0 && done[1] == 0 && done[2] == 0);
    paimon_commit_close(c2);
    paimon_commit_close(c);
    paimon_messages_free(msgs);
    drop(t, dir);
}

TEST(test_abort_leaves_no_snapshot) {
    char *dir;
    paimon_table *t = new_table(&dir, NULL, 0);
    CHECK(t != NULL);
    if (!t) return;
    paimon_messages *msgs = NULL;
    CHECK_EQ_INT(write_rows(t, 2, &msgs), PAIMON_OK);
    char file[1024];
    snprintf(file, sizeof file, "%s/t/%s", dir, paimon_messages_file_path(msgs, 0) ? paimon_messages_file_path(msgs, 0) : "?");
    CHECK(tu_file_exists(file));
    paimon_commit *c = NULL;
    CHECK_EQ_INT(paimon_commit_open(t, NULL, &c), PAIMON_OK);
    CHECK(c && strlen(paimon_commit_user(c)) == 36);   /* a random UUID */
    int64_t removed = -1, kept = -1;
    CHECK_EQ_INT(paimon_commit_abort(c, msgs, &removed, &kept), PAIMON_OK);
    CHECK_EQ_INT(removed, 1);
    CHECK_EQ_INT(kept, 0);
    CHECK(!tu_file_exists(file));
    int64_t id;
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &id), PAIMON_NOTFOUND);
    paimon_commit_close(c);
    paimon_messages_free(msgs);
    drop(t, dir);
}

TEST(test_abort_keeps_committed_files) {
    char *dir;
    paimon_table *t = new_table(&dir, NULL, 0);
    CHECK(t != NULL);
    if (!t) return;
    paimon_messages *msgs = NULL;
    CHECK_EQ_INT(write_rows(t, 2, &msgs), PAIMON_OK);
    paimon_commit *c = NULL;
    int64_t id = 0, removed = -1, kept = -1;
    int created = 0;
    CHECK_EQ_INT(paimon_commit_open(t, NULL, &c), PAIMON_OK);
    CHECK_EQ_INT(paimon_commit_commit(c, msgs, INT64_MAX, "APPEND", &id, &created), PAIMON_OK);
    /* an abort after an outcome the caller did not see: the snapshot adds the file */
    CHECK_EQ_INT(paimon_commit_abort(c, msgs, &removed, &kept), PAIMON_OK);
    CHECK_EQ_INT(removed, 0);
    CHECK_EQ_INT(kept, 1);
    char file[1024];
    snprintf(file, sizeof file, "%s/t/%s", dir, paimon_messages_file_path(msgs, 0));
    CHECK(tu_file_exists(file));
    paimon_commit_close(c);
    paimon_messages_free(msgs);
    drop(t, dir);
}

TEST(test_empty_commit_creates_nothing) {
    char *dir;
    paimon_table *t = new_table(&dir, NULL, 0);
    CHECK(t != NULL);
    if (!t) return;
    paimon_messages *msgs = NULL;
    CHECK_EQ_INT(write_rows(t, 0, &msgs), PAIMON_OK);
    CHECK_EQ_INT(paimon_messages_count(msgs), 0);
    paimon_commit *c = NULL;
    int64_t id = -1;
    int created = -1;
    CHECK_EQ_INT(paimon_commit_open(t, "u", &c), PAIMON_OK);
    CHECK_EQ_INT(paimon_commit_commit(c, msgs, 1, NULL, &id, &created), PAIMON_OK);
    CHECK_EQ_INT(created, 0);
    CHECK_EQ_INT(id, 0);
    CHECK_EQ_INT(paimon_latest_snapshot_id(t, &id), PAIMON_NOTFOUND);
    paimon_commit_close(c);
    paimon_messages_free(msgs);
    drop(t, dir);
}

TEST(test_create_errors) {
    char *dir = tu_make_tmpdir(TMP_PREFIX), path[512], *err = NULL;
    CHECK(dir != NULL);
    if (!dir) return;
    snprintf(path, sizeof path, "%s/t", dir);
    paimon_table *t = NULL;
    paimon_column bad[2] = {{"a", "INT", NULL}, {"x", "NOT A TYPE", NULL}};
    paimon_table_spec spec = {bad, 2, NULL, 0, NULL, 0, NULL, 0, NULL};
    CHECK_EQ_INT(paimon_table_create(path, &spec, &t, &err), PAIMON_MISUSE);
    CHECK(t == NULL && err && strstr(err, "spec.fields[2] ('x'): ") != NULL);
    paimon_free(err);
    const char *const pk[] = {"nope"};
    paimon_table_spec spec2 = {bad, 1, pk, 1, NULL, 0, NULL, 0, NULL};
    CHECK_EQ_INT(paimon_table_create(path, &spec2, &t, &err), PAIMON_MISUSE);
    CHECK(err && strstr(err, "nope") != NULL);
    paimon_free(err);
    spec2.n_partition_keys = 0;
    CHECK_EQ_INT(paimon_table_create(path, &spec2, &t, NULL), PAIMON_OK);
    paimon_table_close(t);
    t = NULL;
    CHECK_EQ_INT(paimon_table_create(path, &spec2, &t, &err), PAIMON_EXISTS);
    CHECK(err && strstr(err, "already exists") != NULL);
    paimon_free(err);
    CHECK_EQ_INT(paimon_table_create(path, NULL, &t, NULL), PAIMON_MISUSE);
    tu_rm_rf(dir);
    free(dir);
}

/* paimon_alter_table: a column added, a refusal with Java's message and
 * nothing written, and the handle's next write under the new schema id. */
TEST(test_alter_table_then_write) {
    char *dir;
    paimon_table *t = new_table(&dir, NULL, 0);
    CHECK(t != NULL);
    if (!t) return;
    paimon_schema_change bad[] = {{PAIMON_ALTER_DROP_COLUMN, "nope", NULL, NULL, NULL, 0, 0}};
    CHECK_EQ_INT(paimon_alter_table(t, bad, 1, 0, NULL, NULL), PAIMON_MISUSE);
    CHECK(strstr(paimon_table_errmsg(t), "Column nope does not exist in the t table.") != NULL);
    paimon_schema_change add[] = {{PAIMON_ALTER_ADD_COLUMN, "extra", "BIGINT", "added", "id", 0, 0},
                                  {PAIMON_ALTER_SET_OPTION, "snapshot.num-retained.max", "50", NULL, NULL, 0, 0}};
    int64_t id = -1;
    char *json = NULL;
    CHECK_EQ_INT(paimon_alter_table(t, add, 2, 1, &id, &json), PAIMON_OK);     /* dry run */
    CHECK_EQ_INT(id, 1);
    char path[600];
    snprintf(path, sizeof path, "%s/t/schema/schema-1", dir);
    CHECK(access(path, F_OK) != 0);
    paimon_free(json);
    json = NULL;
    CHECK_EQ_INT(paimon_alter_table(t, add, 2, 0, &id, &json), PAIMON_OK);
    CHECK_EQ_INT(id, 1);
    CHECK(json && strstr(json, "\"name\" : \"extra\",\n    \"type\" : \"BIGINT\",\n    \"description\" : \"added\"") != NULL);
    CHECK(json && strstr(json, "\"highestFieldId\" : 19") != NULL);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cat '%s'", path);
    int st = 0;
    char *file = tu_sh_out(cmd, &st);
    CHECK(file && json && !strcmp(file, json));
    free(file);
    paimon_free(json);
    /* the handle writes under schema 1: column 1 is the new one */
    paimon_writer *w = NULL;
    CHECK_EQ_INT(paimon_writer_open(t, &w), PAIMON_OK);
    paimon_value v = paimon_int(5);
    CHECK_EQ_INT(paimon_writer_set(w, 0, &v), PAIMON_OK);
    v = paimon_int(77);
    CHECK_EQ_INT(paimon_writer_set(w, 1, &v), PAIMON_OK);
    CHECK_EQ_INT(paimon_writer_write_row(w), PAIMON_OK);
    paimon_messages *msgs = NULL;
    CHECK_EQ_INT(paimon_writer_prepare_commit(w, &msgs), PAIMON_OK);
    paimon_commit *c = NULL;
    CHECK_EQ_INT(paimon_commit_open(t, "alter-test", &c), PAIMON_OK);
    int created = 0;
    int64_t sid = 0;
    CHECK_EQ_INT(paimon_commit_commit(c, msgs, 1, NULL, &sid, &created), PAIMON_OK);
    paimon_snapshot *s = NULL;
    CHECK_EQ_INT(paimon_snapshot_load(t, sid, &s), PAIMON_OK);
    if (s) {
        paimon_file_iter *it = NULL;
        paimon_file_info fi;
        CHECK_EQ_INT(paimon_file_iter_open(t, s, &it), PAIMON_OK);
        CHECK_EQ_INT(paimon_file_iter_next(it, &fi), PAIMON_OK);
        CHECK_EQ_INT(fi.schema_id, 1);
        paimon_file_iter_close(it);
        paimon_snapshot_free(s);
    }
    paimon_commit_close(c);
    paimon_messages_free(msgs);
    paimon_writer_close(w);
    drop(t, dir);
}

int main(void) {
    RUN(test_type_rules_and_messages);
    RUN(test_round_trip_commit_read_back);
    RUN(test_abort_leaves_no_snapshot);
    RUN(test_abort_keeps_committed_files);
    RUN(test_empty_commit_creates_nothing);
    RUN(test_create_errors);
    RUN(test_alter_table_then_write);
    return TEST_SUMMARY();
}
