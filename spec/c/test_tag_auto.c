/* Automatic tag creation (pm_tag_auto.c) against Java's rules:
 *  - TagAutoCreation.run / tryToCreateTags (apache/paimon
 *    paimon-core/.../tag/TagAutoCreation.java): progress from the latest
 *    automatic tag, the first tag at once for the previous period, later
 *    ones when time - tag.creation-delay reaches the end of the next
 *    period, one tag per snapshot, createTag(..., ignoreIfExists = true),
 *    then the oldest automatic tags over tag.num-retained-max;
 *  - TagPeriodHandler (names, formatters, STRICT dates, two-hours always
 *    yyyy-MM-dd HH, creation-period-duration yyyyMMddHHmm, normalize);
 *  - TagTimeExtractor (watermark: none or Long.MIN_VALUE, no tag; zones);
 *  - TagBatchCreation (batch-write-yyyy-MM-dd of the latest snapshot);
 *  - CoreOptions tag.* (enum values, validateDelay).
 * Hand-built snapshots (copies of a Java-written one with chosen
 * timeMillis / watermark) on a copy of the Java fixture; TZ=UTC. */
#include "test.h"
#include "pm_meta.h"
#include "pm_tag_auto.h"
#include "pm_tags.h"

#include <paimon.h>
#include <time.h>

#define FIX "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"
#define TMP_PREFIX "/tmp/pm_test_tag_auto."
#define NO_WM INT64_MAX   /* a snapshot without watermark */

static int64_t utc(int y, int mo, int d, int h, int mi) {
    return pm_days_from_civil(y, mo, d) * 86400000LL + h * 3600000LL + mi * 60000LL;
}

/* Snapshot id with time and watermark: a copy of the latest there is. */
static int put_snapshot(const char *table, int64_t id, int64_t time_ms, int64_t wm) {
    paimon_table *t = tu_open_table(table);
    if (!t) return -1;
    pm_snapshot *s = tu_read_snap(t, tu_latest_id(t));
    pm_buf json = {0}, path = {0};
    int rc = -1;
    if (s) {
        s->id = id;
        s->time_millis = time_ms;
        s->watermark.has = wm != NO_WM;
        s->watermark.v = wm;
        pm_err e;
        if (!pm_snapshot_to_json(s, &json) && !pm_buf_printf(&path, "%s/snapshot/snapshot-%lld", table, (long long)id))
            rc = tu_write_file((char *)path.data, json.data, json.len) ||
                 pm_hint_write(t->io, t->branch_root, "LATEST", id, &e) ? -1 : 0;
    }
    pm_snapshot_free(s);
    pm_buf_free(&json);
    pm_buf_free(&path);
    pm_table_free(t);
    return rc;
}

/* The fixture with its snapshots replaced by n hand-built ones (ids 1..n)
 * and the table options `opts` ("k" : "v" lines) added to its schema. */
static int make_table(tu_copy *d, const char *opts, const int64_t *times, const int64_t *wms, int n) {
    if (tu_copy_make(d, TMP_PREFIX, FIX)) return -1;
    char cmd[1200];
    /* keep snapshot-5 as the model until the new ones are written */
    snprintf(cmd, sizeof cmd, "cd '%s/snapshot' && rm -f EARLIEST LATEST snapshot-1 snapshot-2 snapshot-3 snapshot-4",
             d->table);
    if (tu_sh(cmd)) return -1;
    /* from the highest id down: snapshot-5 is the model until it is replaced */
    for (int i = n; i >= 1; i--)
        if (put_snapshot(d->table, i, times[i - 1], wms ? wms[i - 1] : NO_WM)) return -1;
    if (n < 5) {
        snprintf(cmd, sizeof cmd, "rm -f '%s/snapshot/snapshot-5'", d->table);
        if (tu_sh(cmd)) return -1;
    }
    paimon_table *t = tu_open_table(d->table);
    pm_err e;
    if (!t || pm_hint_write(t->io, t->branch_root, "EARLIEST", 1, &e) ||
        pm_hint_write(t->io, t->branch_root, "LATEST", n, &e))
        return -1;
    pm_table_free(t);
    /* the options: after the schema's '"options" : {' line */
    snprintf(cmd, sizeof cmd, "sed -i 's|^  \"options\" : {$|&\\n%s|' '%s/schema/schema-0'", opts, d->table);
    return tu_sh(cmd);
}

static void remove_copy(tu_copy *d) { tu_copy_remove(d, TMP_PREFIX); }
static char *tree_of(const char *dir) { return tu_tree(dir, 0); }

/* "name@snapshot,..." of the branch's tags in name order. */
static char *tags_of(const char *table) {
    paimon_table *t = tu_open_table(table);
    pm_buf out = {0};
    char **names = NULL;
    size_t n = 0;
    pm_err e;
    if (t && !pm_tag_list(t->io, t->branch_root, &names, &n, &e))
        for (size_t i = 0; i < n; i++) {
            pm_snapshot *s = NULL;
            if (pm_tag_read(t->io, t->branch_root, names[i], &s, &e)) continue;
            pm_buf_printf(&out, "%s%s@%lld", out.len ? "," : "", names[i], (long long)s->id);
            pm_snapshot_free(s);
        }
    pm_strv_free(names, n);
    pm_table_free(t);
    pm_buf_cstr(&out);
    return (char *)out.data;
}

#define CHECK_TAGS(table, want) do { char *_s = tags_of(table); CHECK_EQ_STR(_s, want); free(_s); } while (0)

static int run_auto(const char *table, int dry_run, pm_tag_auto_result *r, pm_err *e) {
    paimon_table *t = tu_open_table(table);
    if (!t) return pm_fail(e, PAIMON_IO, "cannot open %s", table);
    pm_tag_auto_opts o;
    memset(&o, 0, sizeof o);
    o.dry_run = dry_run;
    o.threads = 1;
    o.now_local_ms = utc(2024, 2, 1, 12, 0);
    int rc = pm_tags_auto(t, &o, r, e);
    pm_table_free(t);
    return rc;
}

/* Run once; the tags created, "name@id,...". */
static char *auto_created(const char *table, int *rc_out) {
    pm_tag_auto_result r;
    pm_err e;
    pm_buf out = {0};
    int rc = run_auto(table, 0, &r, &e);
    if (rc) fprintf(stderr, "  auto: %s\n", e.msg);
    for (size_t i = 0; !rc && i < r.n_created; i++)
        pm_buf_printf(&out, "%s%s@%lld", out.len ? "," : "", r.created[i].name, (long long)r.created[i].snapshot_id);
    if (!rc) pm_tag_auto_result_free(&r);
    if (rc_out) *rc_out = rc;
    pm_buf_cstr(&out);
    return (char *)out.data;
}

#define DAILY "    \"tag.automatic-creation\" : \"process-time\","

/* The days of TagAutoCreation's first example: 01-01 10:00 (the first tag
 * at once: the day before), 01-01 23:00 (day not over), 01-02 00:30 (01-01
 * is over), 01-02 12:00, 01-05 01:00 (the latest finished day only). */
static const int64_t *days(void) {
    static int64_t v[5];
    v[0] = utc(2024, 1, 1, 10, 0);
    v[1] = utc(2024, 1, 1, 23, 0);
    v[2] = utc(2024, 1, 2, 0, 30);
    v[3] = utc(2024, 1, 2, 12, 0);
    v[4] = utc(2024, 1, 5, 1, 0);
    return v;
}

TEST(test_process_time_daily_across_boundaries) {
    tu_copy d;
    CHECK(make_table(&d, DAILY, days(), NULL, 5) == 0);
    int rc;
    char *c = auto_created(d.table, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(c, "2023-12-31@1,2024-01-01@3,2024-01-04@5");
    free(c);
    CHECK_TAGS(d.table, "2023-12-31@1,2024-01-01@3,2024-01-04@5,fallback-base@2");
    /* idempotent: a second run creates nothing and fails on nothing */
    c = auto_created(d.table, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(c, "");
    free(c);
    /* a later snapshot past 01-06 00:00 tags 01-05, once */
    CHECK(put_snapshot(d.table, 6, utc(2024, 1, 6, 0, 0), NO_WM) == 0);
    c = auto_created(d.table, &rc);
    CHECK_EQ_STR(c, "2024-01-05@6");
    free(c);
    c = auto_created(d.table, &rc);
    CHECK_EQ_STR(c, "");
    free(c);
    remove_copy(&d);
}

/* tag.automatic-completion: the period after the last tag, not the latest
 * finished one (TagAutoCreation: thisTag = nextTag). */
TEST(test_automatic_completion) {
    tu_copy d;
    CHECK(make_table(&d, DAILY "\\n    \"tag.automatic-completion\" : \"true\",", days(), NULL, 5) == 0);
    int rc;
    char *c = auto_created(d.table, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(c, "2023-12-31@1,2024-01-01@3,2024-01-02@5");
    free(c);
    remove_copy(&d);
}

/* No tag-time-retained: the tag file is the snapshot's JSON byte for byte
 * (TagManager: "do not write the tagCreatorTime field"); with
 * tag.default-time-retained, Tag.fromSnapshotAndTagTtl. */
TEST(test_tag_file_content) {
    tu_copy d;
    CHECK(make_table(&d, DAILY, days(), NULL, 5) == 0);
    int rc;
    free(auto_created(d.table, &rc));
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/snapshot/snapshot-3", d.table);
    snprintf(b, sizeof b, "%s/tag/tag-2024-01-01", d.table);
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
    CHECK(tu_sh(cmd) == 0);
    remove_copy(&d);

    CHECK(make_table(&d, DAILY "\\n    \"tag.default-time-retained\" : \"1 d\",", days(), NULL, 5) == 0);
    free(auto_created(d.table, &rc));
    CHECK_EQ_INT(rc, 0);
    paimon_table *t = tu_open_table(d.table);
    pm_snapshot *s = tu_read_snap(t, 3);
    pm_buf want = {0}, got = {0};
    pm_err e;
    CHECK(pm_tag_to_json(s, 86400000, utc(2024, 2, 1, 12, 0), &want) == 0);
    snprintf(b, sizeof b, "%s/tag/tag-2024-01-01", d.table);
    CHECK(pm_io_read_all(t->io, b, &got, &e) == 0);
    CHECK(got.len == want.len && !memcmp(got.data, want.data, got.len));
    pm_buf_cstr(&got);
    CHECK(strstr((char *)got.data, "\"tagTimeRetained\" : 86400.000000000") != NULL);
    pm_buf_free(&want);
    pm_buf_free(&got);
    pm_snapshot_free(s);
    pm_table_free(t);
    remove_copy(&d);
}

TEST(test_delay_not_yet_passed) {
    tu_copy d;
    int64_t times[3] = {utc(2024, 1, 1, 10, 0), utc(2024, 1, 2, 0, 30), utc(2024, 1, 2, 1, 0)};
    CHECK(make_table(&d, DAILY "\\n    \"tag.creation-delay\" : \"1 h\",", times, NULL, 2) == 0);
    int rc;
    char *c = auto_created(d.table, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(c, "2023-12-31@1");   /* 00:30 - 1 h is still 01-01: no tag for 01-01 yet */
    free(c);
    CHECK(put_snapshot(d.table, 3, times[2], NO_WM) == 0);
    c = auto_created(d.table, &rc);
    CHECK_EQ_STR(c, "2024-01-01@3");   /* 01:00 - 1 h reaches 01-02 00:00 */
    free(c);
    remove_copy(&d);
    /* validateDelay: the delay must be shorter than the period */
    CHECK(make_table(&d, DAILY "\\n    \"tag.creation-delay\" : \"1 d\",", times, NULL, 2) == 0);
    pm_tag_auto_result r;
    pm_err e;
    CHECK_EQ_INT(run_auto(d.table, 0, &r, &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "tag.creation-delay") != NULL);
    remove_copy(&d);
}

/* A period whose tag the operator already made: no second tag, no error. */
TEST(test_already_tagged_period) {
    tu_copy d;
    CHECK(make_table(&d, DAILY, days(), NULL, 5) == 0);
    paimon_table *t = tu_open_table(d.table);
    pm_tag_create_opts co = {1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    pm_tag_created cr;
    pm_err e;
    CHECK(pm_tag_create(t, "2024-01-01", &co, &cr, &e) == 0);
    pm_table_free(t);
    int rc;
    char *c = auto_created(d.table, &rc);
    CHECK_EQ_INT(rc, 0);
    /* progress restarts after the latest automatic tag (snapshot 2): 01-04 only */
    CHECK_EQ_STR(c, "2024-01-04@5");
    free(c);
    CHECK_TAGS(d.table, "2024-01-01@2,2024-01-04@5,fallback-base@2");
    remove_copy(&d);
}

TEST(test_dry_run_writes_nothing) {
    tu_copy d;
    CHECK(make_table(&d, DAILY, days(), NULL, 5) == 0);
    char *before = tree_of(d.table);
    pm_tag_auto_result r;
    pm_err e;
    CHECK_EQ_INT(run_auto(d.table, 1, &r, &e), 0);
    CHECK_EQ_INT(r.n_created, 3);
    pm_tag_auto_result_free(&r);
    tu_check_tree_same(tree_of, d.table, before);
    remove_copy(&d);
}

TEST(test_period_names_and_formatters) {
    struct { const char *period, *fmt, *duration, *name; } cases[] = {
        {"daily", "with_dashes", NULL, "2024-03-07"},
        {"daily", "without_dashes", NULL, "20240307"},
        {"daily", "without_dashes_and_spaces", NULL, "20240307"},
        {"hourly", "with_dashes", NULL, "2024-03-07 15"},
        {"hourly", "without_dashes", NULL, "20240307 15"},
        {"hourly", "without_dashes_and_spaces", NULL, "2024030715"},
        {"two-hours", "without_dashes", NULL, "2024-03-07 14"},   /* the formatter is ignored */
        {"daily", "with_dashes", "30 min", "202403071530"},        /* creation-period-duration wins */
    };
    int64_t when = utc(2024, 3, 7, 15, 40);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_copy d;
        char opts[400];
        snprintf(opts, sizeof opts,
                 "    \"tag.automatic-creation\" : \"PROCESS-TIME\",\\n    \"tag.creation-period\" : \"%s\",\\n"
                 "    \"tag.period-formatter\" : \"%s\",%s%s%s",
                 cases[i].period, cases[i].fmt, cases[i].duration ? "\\n    \"tag.creation-period-duration\" : \"" : "",
                 cases[i].duration ? cases[i].duration : "", cases[i].duration ? "\"," : "");
        int64_t t2[2] = {when, when};
        CHECK(make_table(&d, opts, t2, NULL, 1) == 0);
        paimon_table *t = tu_open_table(d.table);
        pm_tag_period p;
        pm_err e;
        CHECK(t && pm_tag_period_read(t, &p, &e) == 0);
        /* the first tag: the period before the snapshot's */
        char name[64];
        int64_t start = (when / p.period_ms) * p.period_ms;
        CHECK(pm_tag_period_name(&p, start, name, sizeof name) == 0);
        CHECK_EQ_STR(name, cases[i].name);
        int64_t back;
        CHECK(pm_tag_period_parse(&p, name, &back) == 1 && back == start);
        pm_table_free(t);
        int rc;
        char *c = auto_created(d.table, &rc);
        char want[80];
        CHECK(pm_tag_period_name(&p, start - p.period_ms, name, sizeof name) == 0);
        snprintf(want, sizeof want, "%s@1", name);
        CHECK_EQ_STR(c, want);
        free(c);
        remove_copy(&d);
    }
    /* STRICT dates; DailyTagPeriodHandler reads up to the first ' ' */
    pm_tag_period day = {86400000LL, PM_TL_DAY, 1}, hour = {3600000LL, PM_TL_HOUR, 0};
    int64_t v;
    CHECK(pm_tag_period_parse(&day, "2024-02-29", &v) == 1);
    CHECK(pm_tag_period_parse(&day, "2023-02-29", &v) == 0);
    CHECK(pm_tag_period_parse(&day, "2024-13-01", &v) == 0);
    CHECK(pm_tag_period_parse(&day, "2024-01-01 anything", &v) == 1 && v == utc(2024, 1, 1, 0, 0));
    CHECK(pm_tag_period_parse(&day, "t1", &v) == 0);
    CHECK(pm_tag_period_parse(&hour, "2024-01-01 24", &v) == 0);
    CHECK(pm_tag_period_parse(&hour, "2024-01-01 7", &v) == 0);
}

/* WatermarkExtractor: a snapshot without watermark (or Long.MIN_VALUE)
 * gives no time and no tag; sink.watermark-time-zone shifts the day. */
TEST(test_watermark_mode) {
    tu_copy d;
    int64_t times[4] = {utc(2024, 1, 9, 0, 0), utc(2024, 1, 9, 1, 0), utc(2024, 1, 9, 2, 0), utc(2024, 1, 9, 3, 0)};
    int64_t wms[4] = {INT64_MIN, utc(2024, 1, 1, 10, 0), NO_WM, utc(2024, 1, 2, 0, 0)};
    CHECK(make_table(&d, "    \"tag.automatic-creation\" : \"watermark\",", times, wms, 4) == 0);
    int rc;
    char *c = auto_created(d.table, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(c, "2023-12-31@2,2024-01-01@4");
    free(c);
    remove_copy(&d);
    /* +08:00: the watermark 01-01 20:00 UTC is 01-02 04:00 there */
    int64_t wms2[4] = {NO_WM, utc(2024, 1, 1, 20, 0), NO_WM, NO_WM};
    CHECK(make_table(&d, "    \"tag.automatic-creation\" : \"watermark\",\\n    \"sink.watermark-time-zone\" : \"GMT+08:00\",",
                     times, wms2, 4) == 0);
    c = auto_created(d.table, &rc);
    CHECK_EQ_STR(c, "2024-01-01@2");
    free(c);
    remove_copy(&d);
}

/* tag.num-retained-max: the oldest automatic tags go (a period that would
 * go at once is never written); a manual tag never counts. */
TEST(test_num_retained_max) {
    tu_copy d;
    CHECK(make_table(&d, DAILY "\\n    \"tag.num-retained-max\" : \"2\",", days(), NULL, 5) == 0);
    pm_tag_auto_result r;
    pm_err e;
    CHECK_EQ_INT(run_auto(d.table, 0, &r, &e), 0);
    CHECK_EQ_INT(r.n_created, 2);
    CHECK_EQ_INT(r.n_skipped, 1);
    CHECK_EQ_INT(r.n_expired, 0);
    pm_tag_auto_result_free(&r);
    CHECK_TAGS(d.table, "2024-01-01@3,2024-01-04@5,fallback-base@2");
    CHECK(put_snapshot(d.table, 6, utc(2024, 1, 6, 0, 0), NO_WM) == 0);
    CHECK_EQ_INT(run_auto(d.table, 0, &r, &e), 0);
    CHECK_EQ_INT(r.n_created, 1);
    CHECK_EQ_INT(r.n_expired, 1);
    CHECK_EQ_STR(r.n_expired ? r.expired[0] : NULL, "2024-01-01");
    CHECK_EQ_INT(r.deletion.n_tags, 1);
    pm_tag_auto_result_free(&r);
    CHECK_TAGS(d.table, "2024-01-04@5,2024-01-05@6,fallback-base@2");
    remove_copy(&d);
}

/* TagBatchCreation: batch-write-<day of the latest snapshot>; never
 * replaced (Java replaces it), so a second run of the day keeps it. */
TEST(test_batch_mode) {
    tu_copy d;
    CHECK(make_table(&d, "    \"tag.automatic-creation\" : \"batch\",", days(), NULL, 5) == 0);
    int rc;
    char *c = auto_created(d.table, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(c, "batch-write-2024-01-05@5");
    free(c);
    CHECK(put_snapshot(d.table, 6, utc(2024, 1, 5, 9, 0), NO_WM) == 0);
    c = auto_created(d.table, &rc);
    CHECK_EQ_STR(c, "");
    free(c);
    CHECK_TAGS(d.table, "batch-write-2024-01-05@5,fallback-base@2");
    remove_copy(&d);
}

TEST(test_bad_options_fail_naming_them) {
    struct { const char *opts, *word; int code; } cases[] = {
        {"    \"tag.automatic-creation\" : \"sometimes\",", "tag.automatic-creation", PAIMON_CORRUPT},
        {DAILY "\\n    \"tag.creation-period\" : \"weekly\",", "tag.creation-period", PAIMON_CORRUPT},
        {DAILY "\\n    \"tag.period-formatter\" : \"iso\",", "tag.period-formatter", PAIMON_CORRUPT},
        {DAILY "\\n    \"tag.num-retained-max\" : \"-1\",", "tag.num-retained-max", PAIMON_CORRUPT},
        {DAILY "\\n    \"tag.default-time-retained\" : \"soon\",", "tag.default-time-retained", PAIMON_CORRUPT},
        {DAILY "\\n    \"sink.process-time-zone\" : \"America/New_York\",", "sink.process-time-zone",
         PAIMON_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tu_copy d;
        CHECK(make_table(&d, cases[i].opts, days(), NULL, 5) == 0);
        char *before = tree_of(d.table);
        pm_tag_auto_result r;
        pm_err e;
        CHECK_EQ_INT(run_auto(d.table, 0, &r, &e), cases[i].code);
        if (!strstr(e.msg, cases[i].word)) fprintf(stderr, "  message: %s\n", e.msg);
        CHECK(strstr(e.msg, cases[i].word) != NULL);
        tu_check_tree_same(tree_of, d.table, before);
        remove_copy(&d);
    }
    /* unset: no automatic creation, nothing done */
    tu_copy d;
    CHECK(make_table(&d, "", days(), NULL, 5) == 0);
    pm_tag_auto_result r;
    pm_err e;
    CHECK_EQ_INT(run_auto(d.table, 0, &r, &e), 0);
    CHECK_EQ_INT(r.mode, PM_TAG_AUTO_NONE);
    CHECK_EQ_INT(r.n_created, 0);
    pm_tag_auto_result_free(&r);
    remove_copy(&d);
    /* none: the period options are not read (Java builds no period handler) */
    CHECK(make_table(&d, "    \"tag.automatic-creation\" : \"none\",\\n    \"tag.creation-period\" : \"weekly\",\\n    "
                         "\"tag.creation-delay\" : \"soon\",", days(), NULL, 5) == 0);
    char *before = tree_of(d.table);
    CHECK_EQ_INT(run_auto(d.table, 0, &r, &e), 0);
    CHECK_EQ_INT(r.mode, PM_TAG_AUTO_NONE);
    CHECK_EQ_INT(r.n_created, 0);
    tu_check_tree_same(tree_of, d.table, before);
    pm_tag_auto_result_free(&r);
    remove_copy(&d);
}

/* Tag expiration's automatic tags are TagPeriodHandler.isAutoTag's: a
 * two-hours period names tags yyyy-MM-dd HH whatever the formatter, and a
 * date that does not exist is no automatic tag. */
TEST(test_expire_tags_knows_auto_tags_as_java) {
    tu_copy d;
    CHECK(make_table(&d, DAILY "\\n    \"tag.creation-period\" : \"two-hours\",\\n    \"tag.period-formatter\" : \"without_dashes\",",
                     days(), NULL, 5) == 0);
    paimon_table *t = tu_open_table(d.table);
    pm_err e;
    const char *names[] = {"2024-01-01 10", "2024-01-01 12", "20240101 14", "2023-02-29 10"};
    for (int i = 0; i < 4; i++) {
        pm_tag_create_opts co = {1, i + 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        pm_tag_created cr;
        CHECK(pm_tag_create(t, names[i], &co, &cr, &e) == 0);
    }
    pm_tag_expire_opts xo = {utc(2024, 2, 1, 0, 0), 0, 0, 1};
    pm_tag_state *v = NULL;
    size_t n = 0;
    CHECK(pm_tags_expire_states(t, &xo, &v, &n, &e) == 0);
    pm_buf out = {0};
    for (size_t i = 0; i < n; i++)
        pm_buf_printf(&out, "%s%s:%d:%s", out.len ? "," : "", v[i].name, v[i].auto_tag,
                      v[i].expire_reason ? v[i].expire_reason : "-");
    pm_buf_cstr(&out);
    CHECK_EQ_STR((char *)out.data, "2024-01-01 10:1:num-retained-max,2024-01-01 12:1:-,fallback-base:0:-,"
                                   "20240101 14:0:-,2023-02-29 10:0:-");
    pm_buf_free(&out);
    pm_tag_states_free(v, n);
    pm_table_free(t);
    remove_copy(&d);
}

/* paimon.h: the operation through the public API, its JSON result. */
TEST(test_capi_auto_tags) {
    tu_copy d;
    CHECK(make_table(&d, DAILY, days(), NULL, 5) == 0);
    paimon_table *t = NULL;
    char *err = NULL;
    CHECK(paimon_table_open(d.table, NULL, &t, &err) == 0);
    paimon_free(err);
    paimon_options *o = paimon_options_new();
    paimon_options_set(o, "dry-run", "true");
    paimon_result *r = NULL;
    CHECK(paimon_auto_tags(t, o, &r) == 0);
    CHECK_EQ_STR(paimon_result_str(r, "mode"), "process-time");
    CHECK_EQ_STR(paimon_result_str(r, "created.2.tag"), "2024-01-04");
    int64_t v = 0;
    CHECK(paimon_result_int(r, "created.2.snapshot_id", &v) == 0 && v == 5);
    CHECK(paimon_result_json(r) && strstr(paimon_result_json(r), "\"dry_run\":true"));
    paimon_result_free(r);
    CHECK_TAGS(d.table, "fallback-base@2");   /* a dry run */
    paimon_options_set(o, "retain-min", "1");
    CHECK(paimon_auto_tags(t, o, &r) == PAIMON_MISUSE);
    paimon_options_free(o);
    paimon_table_close(t);
    remove_copy(&d);
}

int main(void) {
    setenv("TZ", "UTC", 1);
    tzset();
    RUN(test_process_time_daily_across_boundaries);
    RUN(test_automatic_completion);
    RUN(test_tag_file_content);
    RUN(test_delay_not_yet_passed);
    RUN(test_already_tagged_period);
    RUN(test_dry_run_writes_nothing);
    RUN(test_period_names_and_formatters);
    RUN(test_watermark_mode);
    RUN(test_num_retained_max);
    RUN(test_batch_mode);
    RUN(test_bad_options_fail_naming_them);
    RUN(test_expire_tags_knows_auto_tags_as_java);
    RUN(test_capi_auto_tags);
    return TEST_SUMMARY();
}
