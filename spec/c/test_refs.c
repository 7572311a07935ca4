/* The reference walker (pm_refs) on Java-written tables: the live set is
 * ADD minus DELETE whatever the order of the manifests and whether read
 * inline or on workers, and agrees with the read path's scan; an
 * unreadable manifest or tag stops a REFUSE walk with an error naming it
 * and is handed once to a REPORT walk, which goes on with the rest. */
#include "test.h"
#include "test_util.h"
#include "pm_refs.h"

#define COMPLEX "cpp-parquet-append_complex_data/append_complex_data.db/append_complex_data"
#define TAGGED "cpp-parquet-pk_btree_partitioned_e2e/pk_btree_partitioned_e2e.db/pk_btree_partitioned_e2e"
#define PREFIX "/tmp/pm_test_refs."

static const char *fixture_path(const char *rel) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/paimon-java/%s", fixtures_dir(), rel);
    return buf;
}

typedef struct seen {
    tu_strset names;         /* live data file names */
    int n_live;
    int n_unreadable;
    char unreadable[256];    /* the last manifest reported */
} seen;

static int on_entry(void *ud, const pm_manifest_entry *m, const char *manifest, pm_buf *out, pm_buf *scratch,
                    pm_err *e) {
    seen *s = ud;
    (void)manifest;
    (void)scratch;
    (void)e;
    if (out) return pm_refs_record(out, m->file.file_name, strlen(m->file.file_name) + 1);
    tu_ss_add(&s->names, m->file.file_name);
    s->n_live++;
    return PAIMON_OK;
}

static int on_record(void *ud, const void *rec, size_t len, pm_err *e) {
    seen *s = ud;
    (void)len;
    (void)e;
    tu_ss_add(&s->names, rec);
    s->n_live++;
    return PAIMON_OK;
}

static int on_unreadable(void *ud, const char *manifest, int code, const pm_err *why, pm_err *e) {
    seen *s = ud;
    (void)code;
    (void)why;
    (void)e;
    s->n_unreadable++;
    snprintf(s->unreadable, sizeof s->unreadable, "%s", manifest);
    return PAIMON_OK;
}

/* The manifests of snapshot id's base + delta lists (names in *v). */
static const char **manifests_of(paimon_table *t, int64_t id, pm_mfile **v, size_t *n) {
    pm_err e;
    pm_snapshot *s = tu_read_snap(t, id);
    *v = NULL;
    *n = 0;
    if (!s) return NULL;
    int rc = pm_read_manifest_list(t, s->base_manifest_list, v, n, &e);
    if (!rc) rc = pm_read_manifest_list(t, s->delta_manifest_list, v, n, &e);
    pm_snapshot_free(s);
    CHECK_EQ_INT(rc, PAIMON_OK);
    const char **names = calloc(*n + 1, sizeof *names);
    for (size_t i = 0; names && i < *n; i++) names[i] = (*v)[i].name;
    return names;
}

/* The read path's live files of snapshot id. */
static int scan_names(paimon_table *t, int64_t id, tu_strset *out) {
    pm_err e;
    pm_snapshot *s = tu_read_snap(t, id);
    pm_scan *sc = NULL;
    int n = 0, rc = s ? pm_scan_open(t, s, NULL, &sc, &e) : PAIMON_IO;
    const pm_manifest_entry *m;
    while (!rc && (rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) { tu_ss_add(out, m->file.file_name); n++; }
    CHECK_EQ_INT(rc, PAIMON_DONE);
    pm_scan_close(sc);
    pm_snapshot_free(s);
    return n;
}

TEST(live_set_is_add_minus_delete_in_any_order) {
    paimon_table *t = tu_open_table(fixture_path(COMPLEX));
    CHECK(t != NULL);
    if (!t) return;
    pm_mfile *v;
    size_t n;
    const char **names = manifests_of(t, 4, &v, &n);   /* a COMPACT: DELETEs of files added before */
    CHECK(names != NULL && n >= 2);
    tu_strset want = {0};
    int n_want = scan_names(t, 4, &want);
    CHECK_EQ_INT(n_want, 3);
    for (int order = 0; names && order < 2; order++) {
        if (order) /* DELETEs before the ADDs they cancel */
            for (size_t i = 0; i < n / 2; i++) { const char *x = names[i]; names[i] = names[n - 1 - i]; names[n - 1 - i] = x; }
        for (int threads = 1; threads <= 2; threads++) {
            seen s = {{0}, 0, 0, ""};
            pm_refs_entry_visitor ev = {on_entry, on_record, on_unreadable, &s};
            pm_err e;
            CHECK_EQ_INT(pm_refs_live(t, names, n, threads, PM_REFS_REFUSE, &ev, &e), PAIMON_OK);
            CHECK_EQ_INT(s.n_live, n_want);
            for (size_t i = 0; i < want.n; i++) CHECK(tu_ss_has(&s.names, want.v[i]));
            tu_ss_free(&s.names);
        }
    }
    tu_ss_free(&want);
    free(names);
    pm_mfiles_free(v, n);
    pm_table_free(t);
}

TEST(unreadable_manifest_refused_or_reported_once) {
    tu_copy c;
    paimon_table *t = tu_copy_open(&c, PREFIX, COMPLEX);
    if (!t) return;
    pm_mfile *v;
    size_t n;
    const char **names = manifests_of(t, 4, &v, &n);
    CHECK(names != NULL && n >= 2);
    /* the last manifest cut short: it opens, then fails mid-read */
    char path[1024];
    snprintf(path, sizeof path, "%s/manifest/%s", c.table, names[n - 1]);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size > 64);
    CHECK(truncate(path, st.st_size - 16) == 0);
    seen s = {{0}, 0, 0, ""};
    pm_refs_entry_visitor ev = {on_entry, on_record, on_unreadable, &s};
    pm_err e;
    int rc = pm_refs_live(t, names, n, 1, PM_REFS_REFUSE, &ev, &e);
    CHECK(rc != PAIMON_OK);
    CHECK(strstr(e.msg, names[n - 1]) != NULL);
    CHECK_EQ_INT(s.n_unreadable, 0);
    tu_ss_free(&s.names);
    /* what the readable manifests alone give */
    seen rest = {{0}, 0, 0, ""};
    ev.ud = &rest;
    CHECK_EQ_INT(pm_refs_live(t, names, n - 1, 1, PM_REFS_REFUSE, &ev, &e), PAIMON_OK);
    for (int threads = 1; threads <= 2; threads++) {
        seen r = {{0}, 0, 0, ""};
        ev.ud = &r;
        CHECK_EQ_INT(pm_refs_live(t, names, n, threads, PM_REFS_REPORT, &ev, &e), PAIMON_OK);
        CHECK_EQ_INT(r.n_unreadable, 1);      /* once, though both passes read it */
        CHECK_EQ_STR(r.unreadable, names[n - 1]);
        CHECK_EQ_INT(r.n_live, rest.n_live);   /* the others' live files still come */
        for (size_t i = 0; i < rest.names.n; i++) CHECK(tu_ss_has(&r.names, rest.names.v[i]));
        tu_ss_free(&r.names);
    }
    CHECK(rest.n_live > 0);
    tu_ss_free(&rest.names);
    free(names);
    pm_mfiles_free(v, n);
    pm_table_free(t);
    tu_copy_remove(&c, PREFIX);
}

typedef struct tag_seen { int visited, unreadable; char path[1024]; } tag_seen;

static int tag_visit(void *ud, paimon_table *bt, pm_refs_source src, const char *by, const pm_snapshot *s,
                     pm_err *e) {
    (void)bt;
    (void)by;
    (void)s;
    (void)e;
    CHECK_EQ_INT(src, PM_REFS_TAG);
    ((tag_seen *)ud)->visited++;
    return PAIMON_OK;
}

static int tag_unreadable(void *ud, pm_refs_source src, const char *path, const char *by, const pm_err *why,
                          pm_err *e) {
    tag_seen *s = ud;
    (void)by;
    (void)why;
    (void)e;
    CHECK_EQ_INT(src, PM_REFS_TAG);
    s->unreadable++;
    snprintf(s->path, sizeof s->path, "%s", path);
    return PAIMON_OK;
}

TEST(unreadable_tag_refused_or_reported) {
    tu_copy c;
    paimon_table *t = tu_copy_open(&c, PREFIX, TAGGED);
    if (!t) return;
    tag_seen all = {0, 0, ""};
    pm_refs_visitor v = {PM_REFS_REFUSE, "refusing to test", {0, PAIMON_CORRUPT, 0}, tag_visit, tag_unreadable, &all};
    pm_err e;
    CHECK_EQ_INT(pm_refs_tags(t, &v, &e), PAIMON_OK);
    CHECK(all.visited >= 1);
    char **tags = NULL;
    size_t nt = 0;
    CHECK_EQ_INT(pm_tag_list(t->io, t->branch_root, &tags, &nt, &e), PAIMON_OK);
    CHECK(nt >= 1);
    if (nt < 1) { tu_copy_remove(&c, PREFIX); pm_table_free(t); return; }
    char path[1024];
    snprintf(path, sizeof path, "%s/tag/tag-%s", c.table, tags[0]);
    CHECK_EQ_INT(tu_write_file(path, "{", 1), 0);
    tag_seen r = {0, 0, ""};
    v.ud = &r;
    int rc = pm_refs_tags(t, &v, &e);
    CHECK(rc != PAIMON_OK);
    CHECK(strstr(e.msg, "refusing to test: cannot read tag ") != NULL);
    CHECK(strstr(e.msg, path) != NULL);
    CHECK_EQ_INT(r.unreadable, 0);
    tag_seen q = {0, 0, ""};
    v.rule = PM_REFS_REPORT;
    v.ud = &q;
    CHECK_EQ_INT(pm_refs_tags(t, &v, &e), PAIMON_OK);
    CHECK_EQ_INT(q.unreadable, 1);
    CHECK_EQ_STR(q.path, path);
    CHECK_EQ_INT(q.visited, all.visited - 1);
    pm_strv_free(tags, nt);
    pm_table_free(t);
    tu_copy_remove(&c, PREFIX);
}

int main(void) {
    RUN(live_set_is_add_minus_delete_in_any_order);
    RUN(unreadable_manifest_refused_or_reported_once);
    RUN(unreadable_tag_refused_or_reported);
    return TEST_SUMMARY();
}
