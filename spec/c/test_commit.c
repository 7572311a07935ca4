/* Commit side: pm_commit on temp copies of a Java-written append table. */
#include "test.h"
#include "pm_commit.h"
#include "pm_commit_internal.h"
#include "pm_write.h"

#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define COMPLEX "cpp-parquet-append_complex_data/append_complex_data.db/append_complex_data"

#define UNPART "cpp-avro-append_with_multiple_map/append_with_multiple_map.db/append_with_multiple_map"
#define BRANCHED "cpp-parquet-append_table_with_append_pt_branch/append_table_with_append_pt_branch.db/" \
                 "append_table_with_append_pt_branch"

static const char *fixture_rel = COMPLEX;

static char *fixture_path(void) {
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/paimon-java/%s", fixtures_dir(), fixture_rel);
    return buf;
}

/* ---- temp copies ---------------------------------------------------------- */

typedef tu_copy tcopy;

#define TMP_PREFIX "/tmp/pm_test_commit."

static int copy_fixture_of(tcopy *c, const char *rel) { return tu_copy_make(c, TMP_PREFIX, rel); }

static int copy_fixture(tcopy *c) { return copy_fixture_of(c, COMPLEX); }

static void remove_copy(tcopy *c) { tu_copy_remove(c, TMP_PREFIX); }

/* A temp copy of the fixture rel, opened (tu_copy_open): NULL when it fails. */
static paimon_table *open_fixture_copy(tcopy *c, const char *rel) { return tu_copy_open(c, TMP_PREFIX, rel); }

/* Sorted listing of a directory as one "\n"-joined string. */
static char *listing(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | sort", dir);
    return tu_sh_out(cmd, NULL);
}

/* Live file names of a snapshot as "\n"-separated, each line "name\n". */
static int live_names(paimon_table *t, int64_t id, pm_buf *out, int64_t *rows) {
    out->len = 0;
    if (rows) *rows = 0;
    pm_snapshot *s = tu_read_snap(t, id);
    if (!s) return -1;
    pm_scan *sc;
    pm_err e;
    int n = 0, rc = pm_scan_open(t, s, NULL, &sc, &e);
    if (rc) { pm_snapshot_free(s); return -1; }
    const pm_manifest_entry *m;
    while ((rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) {
        pm_buf_printf(out, "%s\n", m->file.file_name);
        if (rows) *rows += m->file.row_count;
        n++;
    }
    pm_scan_close(sc);
    pm_snapshot_free(s);
    pm_buf_cstr(out);
    if (rc != PAIMON_DONE) { fprintf(stderr, "  scan: %s\n", e.msg); return -1; }
    return n;
}

static int has_line(const pm_buf *b, const char *name) {
    if (!b->data) return 0;
    char pat[300];
    snprintf(pat, sizeof pat, "%s\n", name);
    const char *p = (const char *)b->data;
    size_t l = strlen(pat);
    while ((p = strstr(p, pat)) != NULL) {
        if (p == (const char *)b->data || p[-1] == '\n') return 1;
        p += l;
    }
    return 0;
}

/* ---- entries ---------------------------------------------------------- */

/* An ADD entry for a fake data file created now. */
static void tentry_init(tentry *x, const uint8_t *part, size_t plen, int bucket, const char *name, int64_t rows) {
    tentry_init_at(x, part, plen, bucket, name, rows, pm_now_millis());
}

/* Partition bytes of a live file of the latest snapshot whose partition path
 * is `path` (e.g. "f1=10/"). */
static int partition_bytes(paimon_table *t, const char *path, pm_buf *out) {
    pm_snapshot *s = tu_read_snap(t, tu_latest_id(t));
    if (!s) return -1;
    pm_scan *sc;
    pm_err e;
    int found = -1;
    if (pm_scan_open(t, s, NULL, &sc, &e)) { pm_snapshot_free(s); return -1; }
    const pm_manifest_entry *m;
    pm_buf p = {0};
    while (found < 0 && pm_scan_next(sc, &m, &e) == PAIMON_OK) {
        p.len = 0;
        if (pm_table_partition_path(t, m->partition, &p, &e)) break;
        if (!strcmp((char *)p.data, path)) {
            out->len = 0;
            pm_buf_append(out, m->partition.ptr, m->partition.len);
            found = 0;
        }
    }
    pm_buf_free(&p);
    pm_scan_close(sc);
    pm_snapshot_free(s);
    return found;
}

static paimon_table *open_copy(const tcopy *c) { return tu_open_table(c->table); }

static void opts_for(paimon_table *t, pm_commit_opts *o, const char *user) {
    pm_commit_opts_from_table(t, o);
    o->commit_user = user;
}

/* Every file in manifest/ that is not in `before` is referenced by snapshot `id`. */
static int new_manifest_files_referenced(paimon_table *t, const char *before, int64_t id, int *n_new) {
    char dir[600];
    snprintf(dir, sizeof dir, "%s/manifest", t->root);
    char *after = listing(dir);
    pm_snapshot *s = tu_read_snap(t, id);
    if (!after || !s) { free(after); pm_snapshot_free(s); return -1; }
    pm_buf refs = {0};
    pm_buf_printf(&refs, "%s\n%s\n", s->base_manifest_list, s->delta_manifest_list);
    pm_mfile *v = NULL;
    size_t n = 0;
    pm_err e;
    int bad = 0;
    if (pm_read_manifest_list(t, s->base_manifest_list, &v, &n, &e) ||
        pm_read_manifest_list(t, s->delta_manifest_list, &v, &n, &e)) bad = 1;
    for (size_t i = 0; i < n; i++) pm_buf_printf(&refs, "%s\n", v[i].name);
    pm_buf_cstr(&refs);
    pm_mfiles_free(v, n);
    *n_new = 0;
    pm_buf bb = {0};
    pm_buf_printf(&bb, "%s", before);
    pm_buf_cstr(&bb);
    for (char *line = strtok(after, "\n"); line; line = strtok(NULL, "\n")) {
        if (has_line(&bb, line)) continue;
        (*n_new)++;
        if (!has_line(&refs, line)) { fprintf(stderr, "  orphan: %s\n", line); bad = 1; }
    }
    pm_buf_free(&bb);
    pm_buf_free(&refs);
    pm_snapshot_free(s);
    free(after);
    return bad ? -1 : 0;
}


/* Independent check of the written Avro records with python3-avro:
 *   verbatim: base list of NEW == base + delta lists of OLD (fields we add are null)
 *   merged:   entries of the manifests in NEW's base list == live ADD entries of OLD */
static const char *CHECK_PY =
    "import json, sys, warnings\n"
    "warnings.simplefilter('ignore')\n"
    "import avro.datafile, avro.io\n"
    "t, old, new, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]\n"
    "def recs(n):\n"
    "    with open(t + '/manifest/' + n, 'rb') as f:\n"
    "        return list(avro.datafile.DataFileReader(f, avro.io.DatumReader()))\n"
    "def snap(i): return json.load(open(t + '/snapshot/snapshot-' + i))\n"
    "def same(a, b):\n"
    "    if isinstance(a, dict):\n"
    "        return isinstance(b, dict) and all(same(v, b.get(k)) for k, v in a.items()) and \\\n"
    "            all(v is None for k, v in b.items() if k not in a)\n"
    "    return a == b\n"
    "so, sn = snap(old), snap(new)\n"
    "olds = recs(so['baseManifestList']) + recs(so['deltaManifestList'])\n"
    "news = recs(sn['baseManifestList'])\n"
    "if mode == 'verbatim':\n"
    "    ok = len(olds) == len(news) and all(same(a, b) for a, b in zip(olds, news))\n"
    "else:\n"
    "    ents = [e for m in olds for e in recs(m['_FILE_NAME'])]\n"
    "    ident = lambda e: (e['_PARTITION'], e['_BUCKET'], e['_FILE']['_LEVEL'], e['_FILE']['_FILE_NAME'])\n"
    "    dels = set(ident(e) for e in ents if e['_KIND'] == 1)\n"
    "    live = [e for e in ents if e['_KIND'] == 0 and ident(e) not in dels]\n"
    "    got = [e for m in news for e in recs(m['_FILE_NAME'])]\n"
    "    ok = len(live) == len(got) and all(same(a, b) for a, b in zip(live, got))\n"
    "print('same' if ok else 'DIFFERENT')\n";

static int py_check(const char *table, int64_t old_id, int64_t new_id, const char *mode) {
    char script[600];
    snprintf(script, sizeof script, "%s/../check.py", table);
    FILE *f = fopen(script, "w");
    if (!f) return -1;
    fputs(CHECK_PY, f);
    fclose(f);
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' %lld %lld %s 2>&1", script, table, (long long)old_id,
             (long long)new_id, mode);
    int st = -1;
    char *out = tu_sh_out(cmd, &st);
    int ok = st == 0 && out && !strcmp(out, "same\n");
    if (!ok) fprintf(stderr, "  py_check %s: %s\n", mode, out ? out : "");
    free(out);
    return ok ? 0 : -1;
}

/* ---- tests -------------------------------------------------------------- */

TEST(commit_add_new_file) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf before = {0}, after = {0}, part = {0};
    int64_t rows0 = 0, rows1 = 0;
    int n0 = live_names(t, 4, &before, &rows0);
    CHECK_EQ_INT(n0, 3);
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-commit-test-0.parquet", 7);
    pm_commit_opts o;
    opts_for(t, &o, "test-user");
    CHECK_EQ_STR(o.codec, "zstandard");
    CHECK_EQ_INT(o.max_retries, 10);
    pm_err e = {0};
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 5);
    CHECK_EQ_INT(tu_latest_id(t), 5);
    int64_t hint = 0;
    CHECK_EQ_INT(pm_hint_read(t->io, t->branch_root, "LATEST", &hint, &e), PAIMON_OK);
    CHECK_EQ_INT(hint, 5);
    int n1 = live_names(t, 5, &after, &rows1);
    CHECK_EQ_INT(n1, 4);
    CHECK(has_line(&after, "data-commit-test-0.parquet"));
    for (char *l = strtok((char *)before.data, "\n"); l; l = strtok(NULL, "\n")) CHECK(has_line(&after, l));
    CHECK_EQ_INT(rows1, rows0 + 7);
    pm_snapshot *s = tu_read_snap(t, 5);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_INT(s->version, 3);
        CHECK(s->uuid && strlen(s->uuid) == 36);
        CHECK_EQ_INT(s->total_record_count.v, 8 + 7);
        CHECK_EQ_INT(s->delta_record_count.v, 7);
        CHECK_EQ_STR(s->commit_user, "test-user");
        CHECK_EQ_STR(s->commit_kind, "APPEND");
        CHECK(s->commit_identifier == INT64_MAX);
        CHECK_EQ_INT(s->schema_id, 0);
        /* sizes are exact */
        char path[800];
        struct stat st;
        snprintf(path, sizeof path, "%s/manifest/%s", c.table, s->base_manifest_list);
        CHECK(stat(path, &st) == 0 && st.st_size == s->base_manifest_list_size.v);
        snprintf(path, sizeof path, "%s/manifest/%s", c.table, s->delta_manifest_list);
        CHECK(stat(path, &st) == 0 && st.st_size == s->delta_manifest_list_size.v);
        /* delta list: one manifest, exact size, stats */
        pm_mfile *v = NULL;
        size_t n = 0;
        CHECK_EQ_INT(pm_read_manifest_list(t, s->delta_manifest_list, &v, &n, &e), PAIMON_OK);
        CHECK_EQ_INT(n, 1);
        if (n == 1) {
            snprintf(path, sizeof path, "%s/manifest/%s", c.table, v[0].name);
            CHECK(stat(path, &st) == 0 && st.st_size == v[0].size);
            CHECK_EQ_INT(v[0].added, 1);
            CHECK_EQ_INT(v[0].deleted, 0);
            CHECK(v[0].pmin_len == part.len && !memcmp(v[0].pmin, part.data, part.len));
            CHECK(v[0].pmax_len == part.len && !memcmp(v[0].pmax, part.data, part.len));
            char cmd[1200];
            snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/manifest_compare.py names '%s' 2>&1", path);
            int st2 = -1;
            char *out = tu_sh_out(cmd, &st2);
            CHECK_EQ_INT(st2, 0);
            CHECK(out && strstr(out, "data-commit-test-0.parquet"));
            free(out);
        }
        pm_mfiles_free(v, n);
        /* base list = the 4 manifests of snapshot 4 (base + delta), verbatim */
        v = NULL;
        n = 0;
        CHECK_EQ_INT(pm_read_manifest_list(t, s->base_manifest_list, &v, &n, &e), PAIMON_OK);
        pm_snapshot *s4 = tu_read_snap(t, 4);
        pm_mfile *w = NULL;
        size_t nw = 0;
        if (s4) {
            pm_read_manifest_list(t, s4->base_manifest_list, &w, &nw, &e);
            pm_read_manifest_list(t, s4->delta_manifest_list, &w, &nw, &e);
        }
        CHECK_EQ_INT(n, nw);
        for (size_t i = 0; i < n && i < nw; i++) {
            CHECK_EQ_STR(v[i].name, w[i].name);
            CHECK_EQ_INT(v[i].size, w[i].size);
            CHECK_EQ_INT(v[i].added, w[i].added);
            CHECK_EQ_INT(v[i].deleted, w[i].deleted);
        }
        pm_mfiles_free(v, n);
        pm_mfiles_free(w, nw);
        pm_snapshot_free(s4);
        pm_snapshot_free(s);
    }
    CHECK(py_check(c.table, 4, 5, "verbatim") == 0);
    /* the fixture's files are unchanged in the copy (LATEST is rewritten) */
    {
        char cmd[2400];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && find . -type f ! -path ./snapshot/LATEST ! -exec cmp -s {} '%s'/{} \\; -print",
                 fixture_path(), c.table);
        int st2 = -1;
        char *out = tu_sh_out(cmd, &st2);
        CHECK_EQ_INT(st2, 0);
        CHECK(out && !*out);
        if (out && *out) fprintf(stderr, "  changed: %s\n", out);
        free(out);
    }
    /* independent reader */
    {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --snapshot 5 2>&1", c.table);
        int st2 = -1;
        char *out = tu_sh_out(cmd, &st2);
        CHECK_EQ_INT(st2, 0);
        CHECK(out && strstr(out, "data-commit-test-0.parquet"));
        if (st2) fprintf(stderr, "  pyref: %s\n", out ? out : "");
        free(out);
    }
    tentry_free(&x);
    pm_buf_free(&before);
    pm_buf_free(&after);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* Find a live entry of the latest snapshot (kept open in *sc). */
static const pm_manifest_entry *first_live(paimon_table *t, pm_snapshot **s, pm_scan **sc) {
    pm_err e;
    *s = tu_read_snap(t, tu_latest_id(t));
    if (!*s || pm_scan_open(t, *s, NULL, sc, &e)) return NULL;
    const pm_manifest_entry *m;
    return pm_scan_next(*sc, &m, &e) == PAIMON_OK ? m : NULL;
}

TEST(commit_delete_live_file) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_snapshot *s4;
    pm_scan *sc = NULL;
    const pm_manifest_entry *live = first_live(t, &s4, &sc);
    CHECK(live != NULL);
    if (live) {
        pm_manifest_entry del = *live;
        del.kind = PM_FILE_DELETE;
        char name[200];
        snprintf(name, sizeof name, "%s", live->file.file_name);
        int64_t rows = live->file.row_count;
        pm_commit_opts o;
        opts_for(t, &o, "deleter");
        pm_err e = {0};
        int64_t id = 0;
        int rc = tu_commit(t, &del, 1, &o, &id, &e);
        if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
        CHECK_EQ_INT(rc, PAIMON_OK);
        CHECK_EQ_INT(id, 5);
        pm_scan_close(sc);
        sc = NULL;
        pm_buf names = {0};
        int64_t total = 0;
        CHECK_EQ_INT(live_names(t, 5, &names, &total), 2);
        CHECK(!has_line(&names, name));
        pm_snapshot *s5 = tu_read_snap(t, 5);
        CHECK(s5 != NULL);
        if (s5) {
            CHECK_EQ_INT(s5->total_record_count.v, 8 - rows);
            CHECK_EQ_INT(s5->delta_record_count.v, -rows);
            CHECK_EQ_INT(total, 8 - rows);
            CHECK_EQ_STR(s5->commit_kind, "OVERWRITE");   /* Java promotes appends with deletes */
            pm_mfile *v = NULL;
            size_t n = 0;
            CHECK_EQ_INT(pm_read_manifest_list(t, s5->delta_manifest_list, &v, &n, &e), PAIMON_OK);
            CHECK(n == 1 && v[0].added == 0 && v[0].deleted == 1);
            pm_mfiles_free(v, n);
        }
        pm_snapshot_free(s5);
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --snapshot 5 2>&1", c.table);
        int st = -1;
        char *out = tu_sh_out(cmd, &st);
        CHECK_EQ_INT(st, 0);
        CHECK(out && !strstr(out, name));
        free(out);
        pm_buf_free(&names);
    }
    pm_scan_close(sc);
    pm_snapshot_free(s4);
    pm_table_free(t);
    remove_copy(&c);
}

TEST(commit_delete_non_live_conflicts) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    char mdir[600], sdir[600];
    snprintf(mdir, sizeof mdir, "%s/manifest", c.table);
    snprintf(sdir, sizeof sdir, "%s/snapshot", c.table);
    char *m0 = listing(mdir), *s0 = listing(sdir);
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=20/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 1, "data-not-there.parquet", 3);
    x.m.kind = PM_FILE_DELETE;
    pm_commit_opts o;
    opts_for(t, &o, "u");
    pm_err e = {0};
    int64_t id = 0;
    CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "data-not-there.parquet") && strstr(e.msg, "f1=20") && strstr(e.msg, "not live in snapshot 4"));
    CHECK_EQ_INT(tu_latest_id(t), 4);
    /* a file deleted by the fixture's compaction (level 0 in f1=10) is not live either */
    pm_snapshot *s4 = tu_read_snap(t, 4);
    if (s4) {
        pm_mfile *v = NULL;
        size_t n = 0;
        pm_read_manifest_list(t, s4->delta_manifest_list, &v, &n, &e);
        int tested = 0;
        for (size_t i = 0; i < n && !tested; i++) {
            if (!v[i].deleted) continue;
            pm_manifest_reader *r;
            if (pm_table_open_manifest(t, v[i].name, PM_MANIFEST_FILE, &r, &e)) continue;
            const pm_manifest_entry *m;
            while (!tested && pm_manifest_next_entry(r, &m, &e) == PAIMON_OK) {
                if (m->kind != PM_FILE_DELETE) continue;
                pm_manifest_entry d = *m;
                CHECK_EQ_INT(tu_commit(t, &d, 1, &o, &id, &e), PAIMON_CONFLICT);
                CHECK(strstr(e.msg, "not live"));
                tested = 1;
            }
            pm_manifest_close(r);
        }
        CHECK(tested);
        pm_mfiles_free(v, n);
    }
    pm_snapshot_free(s4);
    /* two ADDs of the same file in one commit */
    tentry y[2];
    tentry_init(&y[0], part.data, part.len, 1, "data-twice.parquet", 1);
    tentry_init(&y[1], part.data, part.len, 1, "data-twice.parquet", 1);
    pm_manifest_entry two[2] = {y[0].m, y[1].m};
    o.kind = "COMPACT";
    CHECK_EQ_INT(tu_commit(t, two, 2, &o, &id, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "added twice"));
    /* ADD of a file that is already live (conflict check on for COMPACT) */
    pm_snapshot *s;
    pm_scan *sc = NULL;
    const pm_manifest_entry *live = first_live(t, &s, &sc);
    if (live) {
        pm_manifest_entry again = *live;
        CHECK_EQ_INT(tu_commit(t, &again, 1, &o, &id, &e), PAIMON_CONFLICT);
        CHECK(strstr(e.msg, "already live"));
    }
    pm_scan_close(sc);
    pm_snapshot_free(s);
    /* COMPACT changing the total buckets of a partition */
    tentry z;
    tentry_init(&z, part.data, part.len, 3, "data-four-buckets.parquet", 1);
    z.m.total_buckets = 4;
    CHECK_EQ_INT(tu_commit(t, &z.m, 1, &o, &id, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "total buckets") && strstr(e.msg, "from 2 to 4"));
    if (!strstr(e.msg, "from 2 to 4")) fprintf(stderr, "  msg: %s\n", e.msg);
    tentry_free(&z);
    CHECK_EQ_INT(tu_latest_id(t), 4);
    char *m1 = listing(mdir), *s1 = listing(sdir);
    CHECK(m0 && m1 && !strcmp(m0, m1));
    CHECK(s0 && s1 && !strcmp(s0, s1));
    free(m0); free(m1); free(s0); free(s1);
    tentry_free(&x);
    tentry_free(&y[0]);
    tentry_free(&y[1]);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* ---- a FileIO that simulates a racing writer ------------------------------ */

static const pm_fileio_ops *race_orig;
static pm_fileio_ops race_ops;
static int race_count;          /* how many times to pre-create the target */
static int race_fired;
static char *race_content;      /* snapshot JSON to plant (id patched in) */
static int uncertain_mode;      /* 1: create then report IO error; 2: report IO error only;
                                   3: IO error only where the racer's snapshot was planted */

static int race_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    if (strstr(path, "/snapshot/snapshot-")) {
        int planted = race_fired < race_count;
        if (planted) {
            race_fired++;
            pm_err e2;
            /* the racer's snapshot carries the id of its file name */
            pm_snapshot *s = NULL;
            pm_buf b = {0};
            if (pm_snapshot_parse(race_content, strlen(race_content), path, &s, &e2) == PAIMON_OK) {
                s->id = strtoll(strrchr(path, '-') + 1, NULL, 10);
                pm_snapshot_to_json(s, &b);
            }
            race_orig->create_no_replace(io, path, b.data ? (const char *)b.data : race_content,
                                         b.data ? b.len : strlen(race_content), &e2);
            pm_buf_free(&b);
            pm_snapshot_free(s);
        }
        if (uncertain_mode == 1) {
            int rc = race_orig->create_no_replace(io, path, p, n, e);
            if (rc) return rc;
            return pm_fail(e, PAIMON_IO, "%s: simulated I/O error after the write", path);
        }
        if (uncertain_mode == 2 || (uncertain_mode == 3 && planted))
            return pm_fail(e, PAIMON_IO, "%s: simulated I/O error", path);
    }
    return race_orig->create_no_replace(io, path, p, n, e);
}

static void race_install(paimon_table *t, const char *table_dir, int count, int mode) {
    char path[600];
    snprintf(path, sizeof path, "%s/snapshot/snapshot-4", table_dir);
    pm_buf b = {0};
    pm_err e;
    pm_io_read_all(t->io, path, &b, &e);
    pm_buf_cstr(&b);
    free(race_content);
    race_content = b.data ? (char *)b.data : pm_strdup("{}");
    race_orig = t->io->ops;
    race_ops = *race_orig;
    race_ops.create_no_replace = race_create;
    t->io->ops = &race_ops;
    race_count = count;
    race_fired = 0;
    uncertain_mode = mode;
}

static void race_remove(paimon_table *t) {
    t->io->ops = race_orig;
    free(race_content);
    race_content = NULL;
}

TEST(commit_retries_when_id_taken) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    char mdir[600];
    snprintf(mdir, sizeof mdir, "%s/manifest", c.table);
    char *m0 = listing(mdir);
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-race.parquet", 2);
    pm_commit_opts o;
    opts_for(t, &o, "racer");
    race_install(t, c.table, 1, 0);
    pm_err e = {0};
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    race_remove(t);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(race_fired, 1);
    CHECK_EQ_INT(id, 6);
    CHECK_EQ_INT(tu_latest_id(t), 6);
    pm_buf names = {0};
    CHECK_EQ_INT(live_names(t, 6, &names, NULL), 4);
    CHECK(has_line(&names, "data-race.parquet"));
    int n_new = -1;
    CHECK(new_manifest_files_referenced(t, m0, 6, &n_new) == 0);
    CHECK_EQ_INT(n_new, 3);    /* base list, delta manifest, delta list */
    pm_buf_free(&names);
    free(m0);

    /* always losing: gives up after max_retries, leaves no files */
    m0 = listing(mdir);
    o.max_retries = 2;
    o.min_retry_wait_ms = 1;
    race_install(t, c.table, 1000, 0);
    rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    race_remove(t);
    CHECK_EQ_INT(rc, PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "gave up after 2 retries"));
    CHECK_EQ_INT(race_fired, 3);
    char *m1 = listing(mdir);
    CHECK(m0 && m1 && !strcmp(m0, m1));
    free(m0);
    free(m1);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* A snapshot write that failed with an error the FileIO cannot qualify,
 * whose id then reads as another writer's snapshot: proven failed (a
 * no-replace write cannot have replaced it), so a lost race: the attempt's
 * files go and the retry lands on top (issue 22: only a proven failure
 * cleans up, and a proven one does). Before, they stayed as orphans. */
TEST(commit_unknown_write_under_anothers_snapshot_is_a_lost_race) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    char mdir[600];
    snprintf(mdir, sizeof mdir, "%s/manifest", c.table);
    char *m0 = listing(mdir);
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-proven.parquet", 2);
    pm_commit_opts o;
    opts_for(t, &o, "proven");
    o.min_retry_wait_ms = 1;
    race_install(t, c.table, 1, 3);
    pm_err e = {0};
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    race_remove(t);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(race_fired, 1);
    CHECK_EQ_INT(id, 6);
    int n_new = -1;
    CHECK(new_manifest_files_referenced(t, m0, 6, &n_new) == 0);   /* no leftover of the failed attempt */
    CHECK_EQ_INT(n_new, 3);
    free(m0);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

TEST(commit_uncertain_failure) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    char mdir[600];
    snprintf(mdir, sizeof mdir, "%s/manifest", c.table);
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-uncertain.parquet", 2);
    pm_commit_opts o;
    opts_for(t, &o, "u");
    /* the snapshot was written but the call reported an error: success */
    race_install(t, c.table, 0, 1);
    pm_err e = {0};
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    race_remove(t);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 5);
    /* never written and always an error the FileIO cannot qualify: retried,
     * and the commit cannot prove that nothing landed (the snapshot read
     * back missing proves nothing on a store without read-after-write):
     * uncertain (issue 22), naming the snapshot; files kept */
    char *m0 = listing(mdir);
    o.max_retries = 2;
    o.min_retry_wait_ms = 1;
    race_install(t, c.table, 0, 2);
    tentry_free(&x);
    tentry_init(&x, part.data, part.len, 0, "data-uncertain-2.parquet", 2);
    rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    race_remove(t);
    CHECK_EQ_INT(rc, PAIMON_UNCERTAIN);
    CHECK(strstr(e.msg, "simulated") && strstr(e.msg, "gave up after 2 retries"));
    CHECK(strstr(e.msg, "commit outcome uncertain: snapshot 6 (") && strstr(e.msg, "/snapshot/snapshot-6)"));
    CHECK_EQ_INT(tu_latest_id(t), 5);
    char *m1 = listing(mdir);
    CHECK(m0 && m1 && strlen(m1) > strlen(m0));
    free(m0);
    free(m1);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* Interposes libc's fsync for the statically linked core: while set, an
 * fsync of a directory fails with EIO (a failing disk). */
static int fail_dir_fsync;

int fsync(int fd) {
    struct stat st;
    if (fail_dir_fsync && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}

/* Interposes link(2) likewise: 1 makes the link and then reports EIO (an
 * NFS server whose reply was lost), 2 reports EIO without linking. */
static int link_eio;

int link(const char *from, const char *to) {
    if (link_eio == 2) {
        errno = EIO;
        return -1;
    }
    int r = (int)syscall(SYS_linkat, AT_FDCWD, from, AT_FDCWD, to, 0);
    if (r == 0 && link_eio == 1) {
        errno = EIO;
        return -1;
    }
    return r;
}

/* Issue 22 on the local file system: a link that reports an error after
 * linking is settled by looking: our temp file at the path -> created (it
 * was PAIMON_IO, a failure over a file that exists); no file -> a plain
 * failure. A commit through it lands once. */
TEST(create_link_error_is_settled_by_looking) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_err e = {0};
    char probe[600], probe2[600];
    snprintf(probe, sizeof probe, "%s/probe", c.table);
    snprintf(probe2, sizeof probe2, "%s/probe2", c.table);
    link_eio = 1;
    int rc = pm_io_create_no_replace(t->io, probe, "x", 1, &e);
    link_eio = 0;
    if (rc) fprintf(stderr, "  create: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK(tu_file_exists(probe));
    link_eio = 2;
    rc = pm_io_create_no_replace(t->io, probe2, "x", 1, &e);
    link_eio = 0;
    CHECK_EQ_INT(rc, PAIMON_IO);
    CHECK(strstr(e.msg, "probe2") != NULL);
    CHECK(!tu_file_exists(probe2));
    unlink(probe);

    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-linked.parquet", 2);
    pm_commit_opts o;
    opts_for(t, &o, "linked");
    int64_t id = 0;
    link_eio = 1;
    rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    link_eio = 0;
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 5);
    CHECK_EQ_INT(tu_latest_id(t), 5);
    pm_snapshot *s5 = tu_read_snap(t, 5);
    CHECK(s5 && !strcmp(s5->commit_user, "linked"));
    pm_snapshot_free(s5);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* issue 12: the snapshot is linked but the sync of snapshot/ fails. It was
 * ignored (exit 0); now it is an uncertain outcome: its own code and a
 * message naming the snapshot, the snapshot and its manifests kept, and no
 * retry (which would commit the same files twice). */
TEST(commit_directory_sync_failure_is_uncertain) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_err e = {0};
    /* the FileIO: in place, but uncertain */
    char probe[600];
    snprintf(probe, sizeof probe, "%s/probe", c.table);
    fail_dir_fsync = 1;
    int rc = pm_io_create_no_replace(t->io, probe, "x", 1, &e);
    fail_dir_fsync = 0;
    CHECK_EQ_INT(rc, PAIMON_UNCERTAIN);
    CHECK(strstr(e.msg, "probe was created, but syncing its directory") != NULL);
    CHECK(tu_file_exists(probe));
    unlink(probe);
    CHECK_EQ_STR(paimon_errstr(PAIMON_UNCERTAIN), "outcome unknown");

    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-unsynced.parquet", 2);
    pm_commit_opts o;
    opts_for(t, &o, "u");
    int64_t id = 0;
    fail_dir_fsync = 1;
    rc = tu_commit(t, &x.m, 1, &o, &id, &e);      /* the data file exists */
    fail_dir_fsync = 0;
    CHECK_EQ_INT(rc, PAIMON_UNCERTAIN);
    CHECK(strstr(e.msg, "commit outcome uncertain: snapshot 5 (") != NULL);
    CHECK(strstr(e.msg, "snapshot/snapshot-5 was created, but syncing its directory") != NULL);
    CHECK_EQ_INT(id, 0);
    CHECK_EQ_INT(tu_latest_id(t), 5);             /* in place, not retried as 6 */
    pm_buf names = {0};
    CHECK_EQ_INT(live_names(t, 5, &names, NULL), 4);   /* its manifests kept */
    CHECK(has_line(&names, "data-unsynced.parquet"));
    pm_buf_free(&names);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* NP processes x NC commits: exactly NP*NC new snapshots with contiguous
 * ids, every committed file live, every (user, identifier) exactly once. */
static void concurrent_commits(int NP, int NC) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=20/", &part) == 0);
    pid_t pids[8];
    fflush(stdout);
    fflush(stderr);
    for (int p = 0; p < NP; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            paimon_table *ct = open_copy(&c);
            if (!ct) _exit(2);
            char user[32];
            snprintf(user, sizeof user, "proc-%d", p);
            pm_commit_opts o;
            opts_for(ct, &o, user);
            o.max_retries = 1000;
            o.min_retry_wait_ms = 1;
            o.max_retry_wait_ms = 50;
            for (int i = 0; i < NC; i++) {
                char name[64];
                snprintf(name, sizeof name, "data-fork-%d-%d.parquet", p, i);
                tentry x;
                tentry_init(&x, part.data, part.len, i % 2, name, 1);
                o.identifier = i + 1;
                pm_err e;
                int64_t id;
                int rc = tu_commit(ct, &x.m, 1, &o, &id, &e);
                tentry_free(&x);
                if (rc) { fprintf(stderr, "  proc %d commit %d: %s\n", p, i, e.msg); _exit(1); }
            }
            pm_table_free(ct);
            _exit(0);
        }
    }
    for (int p = 0; p < NP; p++) {
        int st = -1;
        CHECK(pids[p] > 0 && waitpid(pids[p], &st, 0) == pids[p]);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    int64_t *ids = NULL;
    size_t n = 0;
    pm_err e;
    CHECK_EQ_INT(pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 4 + NP * NC);
    for (size_t i = 0; i < n; i++) CHECK_EQ_INT(ids[i], (int64_t)i + 1);
    free(ids);
    CHECK_EQ_INT(tu_latest_id(t), 4 + NP * NC);
    pm_buf names = {0};
    int64_t rows = 0;
    CHECK_EQ_INT(live_names(t, 4 + NP * NC, &names, &rows), 3 + NP * NC);
    for (int p = 0; p < NP; p++)
        for (int i = 0; i < NC; i++) {
            char name[64];
            snprintf(name, sizeof name, "data-fork-%d-%d.parquet", p, i);
            CHECK(has_line(&names, name));
        }
    CHECK_EQ_INT(rows, 8 + NP * NC);
    pm_snapshot *s = tu_read_snap(t, 4 + NP * NC);
    CHECK(s && s->total_record_count.v == 8 + NP * NC);
    pm_snapshot_free(s);
    /* each (user, identifier) committed exactly once, each snapshot adds one file */
    int seen[8][64];
    memset(seen, 0, sizeof seen);
    for (int64_t id = 5; id <= 4 + NP * NC; id++) {
        pm_snapshot *si = tu_read_snap(t, id);
        int p = -1;
        if (si && si->commit_user && sscanf(si->commit_user, "proc-%d", &p) == 1 && p >= 0 && p < NP &&
            si->commit_identifier >= 1 && si->commit_identifier <= NC)
            seen[p][si->commit_identifier - 1]++;
        else
            CHECK(!"unexpected snapshot");
        CHECK(si && si->delta_record_count.v == 1);
        pm_snapshot_free(si);
    }
    for (int p = 0; p < NP; p++)
        for (int i = 0; i < NC; i++) CHECK_EQ_INT(seen[p][i], 1);
    /* every commit of a process found its identifier */
    for (int p = 0; p < NP; p++) {
        char user[32];
        snprintf(user, sizeof user, "proc-%d", p);
        int64_t ident = 0;
        CHECK_EQ_INT(pm_commit_last_identifier(t, user, &ident, &e), PAIMON_OK);
        CHECK_EQ_INT(ident, NC);
    }
    pm_buf_free(&names);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

TEST(commit_concurrent_processes) { concurrent_commits(4, 10); }

TEST(commit_concurrent_processes_4x50) { concurrent_commits(4, 50); }


/* Two processes delete the same live file: exactly one wins, the other sees
 * the conflict on its retry (or its first attempt). */
TEST(commit_concurrent_deletes_conflict) {
    tcopy c;
    CHECK(copy_fixture(&c) == 0);
    enum { NP = 4 };
    pid_t pids[NP];
    /* The file is chosen before forking: a child started after the winner
     * committed would otherwise pick (and delete) another file. */
    paimon_table *pt = open_copy(&c);
    pm_snapshot *ps = NULL;
    pm_scan *psc = NULL;
    const pm_manifest_entry *live = pt ? first_live(pt, &ps, &psc) : NULL;
    CHECK(live != NULL);
    fflush(stdout);
    fflush(stderr);
    for (int p = 0; p < NP; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            paimon_table *ct = open_copy(&c);
            if (!ct || !live) _exit(2);
            pm_snapshot *s = NULL;
            pm_scan *sc = NULL;
            pm_manifest_entry del = *live;
            del.kind = PM_FILE_DELETE;
            char user[32];
            snprintf(user, sizeof user, "del-%d", p);
            pm_commit_opts o;
            opts_for(ct, &o, user);
            o.max_retries = 100;
            pm_err e;
            int64_t id;
            int rc = tu_commit(ct, &del, 1, &o, &id, &e);
            pm_scan_close(sc);
            pm_snapshot_free(s);
            pm_table_free(ct);
            _exit(rc == PAIMON_OK ? 0 : rc == PAIMON_CONFLICT ? 10 : 1);
        }
    }
    int ok = 0, conflict = 0;
    for (int p = 0; p < NP; p++) {
        int st = -1;
        CHECK(pids[p] > 0 && waitpid(pids[p], &st, 0) == pids[p]);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) ok++;
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 10) conflict++;
    }
    pm_scan_close(psc);
    pm_snapshot_free(ps);
    pm_table_free(pt);
    CHECK_EQ_INT(ok, 1);
    CHECK_EQ_INT(conflict, NP - 1);
    paimon_table *t = open_copy(&c);
    CHECK(t != NULL);
    if (t) {
        CHECK_EQ_INT(tu_latest_id(t), 5);
        pm_buf names = {0};
        CHECK_EQ_INT(live_names(t, 5, &names, NULL), 2);
        pm_buf_free(&names);
        pm_table_free(t);
    }
    remove_copy(&c);
}

TEST(commit_last_identifier) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_err e;
    int64_t ident = 0;
    CHECK_EQ_INT(pm_commit_last_identifier(t, "d6fa8cca-d72a-461c-8e5d-8786c0243850", &ident, &e), PAIMON_OK);
    CHECK_EQ_INT(ident, 3);
    CHECK_EQ_INT(pm_commit_last_identifier(t, "nobody", &ident, &e), PAIMON_OK);
    CHECK(ident == INT64_MIN);
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    const char *users[3] = {"u1", "u2", "u1"};
    int64_t idents[3] = {42, 7, 43};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "data-ident-%d.parquet", i);
        tentry x;
        tentry_init(&x, part.data, part.len, 0, name, 1);
        pm_commit_opts o;
        opts_for(t, &o, users[i]);
        o.identifier = idents[i];
        int64_t id;
        CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_OK);
        tentry_free(&x);
    }
    CHECK_EQ_INT(pm_commit_last_identifier(t, "u1", &ident, &e), PAIMON_OK);
    CHECK_EQ_INT(ident, 43);
    CHECK_EQ_INT(pm_commit_last_identifier(t, "u2", &ident, &e), PAIMON_OK);
    CHECK_EQ_INT(ident, 7);
    CHECK_EQ_INT(pm_commit_last_identifier(t, "d6fa8cca-d72a-461c-8e5d-8786c0243850", &ident, &e), PAIMON_OK);
    CHECK_EQ_INT(ident, 3);
    /* the scan stops at a missing snapshot */
    char path[600];
    snprintf(path, sizeof path, "%s/snapshot/snapshot-6", c.table);
    CHECK(unlink(path) == 0);
    CHECK_EQ_INT(pm_commit_last_identifier(t, "u2", &ident, &e), PAIMON_OK);
    CHECK(ident == INT64_MIN);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

TEST(commit_partition_stats_span) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf p10 = {0}, p20 = {0};
    CHECK(partition_bytes(t, "f1=20/", &p20) == 0);
    CHECK(partition_bytes(t, "f1=10/", &p10) == 0);
    tentry x[3];
    tentry_init(&x[0], p20.data, p20.len, 1, "data-span-0.parquet", 1);
    tentry_init(&x[1], p10.data, p10.len, 0, "data-span-1.parquet", 2);
    tentry_init(&x[2], p20.data, p20.len, 0, "data-span-2.parquet", 3);
    x[1].m.file.level = 0;
    pm_manifest_entry ents[3] = {x[0].m, x[1].m, x[2].m};
    pm_commit_opts o;
    opts_for(t, &o, "span");
    pm_err e = {0};
    int64_t id = 0;
    CHECK_EQ_INT(tu_commit(t, ents, 3, &o, &id, &e), PAIMON_OK);
    pm_snapshot *s = tu_read_snap(t, id);
    CHECK(s != NULL);
    if (s) {
        pm_mfile *v = NULL;
        size_t n = 0;
        CHECK_EQ_INT(pm_read_manifest_list(t, s->delta_manifest_list, &v, &n, &e), PAIMON_OK);
        CHECK_EQ_INT(n, 1);
        if (n == 1) {
            CHECK(v[0].pmin_len == p10.len && !memcmp(v[0].pmin, p10.data, p10.len));
            CHECK(v[0].pmax_len == p20.len && !memcmp(v[0].pmax, p20.data, p20.len));
            CHECK_EQ_INT(v[0].added, 3);
            /* full record: buckets, levels, null counts */
            pm_manifest_reader *r;
            CHECK_EQ_INT(pm_table_open_manifest(t, s->delta_manifest_list, PM_MANIFEST_LIST, &r, &e), PAIMON_OK);
            const pm_manifest_meta *m;
            CHECK_EQ_INT(pm_manifest_next_meta(r, &m, &e), PAIMON_OK);
            CHECK(m->min_bucket.has && m->min_bucket.v == 0 && m->max_bucket.has && m->max_bucket.v == 1);
            CHECK(m->min_level.has && m->min_level.v == 0 && m->max_level.has && m->max_level.v == 0);
            CHECK(!m->min_row_id.has && !m->max_row_id.has);
            CHECK(m->partition_stats.n_null_counts == 1 && m->partition_stats.null_counts[0] == 0);
            CHECK_EQ_INT(m->schema_id, 0);
            pm_manifest_close(r);
        }
        pm_mfiles_free(v, n);
        CHECK_EQ_INT(s->delta_record_count.v, 6);
    }
    pm_snapshot_free(s);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --snapshot %lld 2>&1", c.table,
             (long long)id);
    int st = -1;
    char *out = tu_sh_out(cmd, &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "data-span-0.parquet") && strstr(out, "data-span-1.parquet") &&
          strstr(out, "data-span-2.parquet"));
    free(out);
    for (int i = 0; i < 3; i++) tentry_free(&x[i]);
    pm_buf_free(&p10);
    pm_buf_free(&p20);
    pm_table_free(t);
    remove_copy(&c);
}

/* Partition bytes of f1 = v (COMPLEX is partitioned by the INT f1). */
static int int_partition(paimon_table *t, int64_t v, pm_buf *out) {
    pm_datum d;
    memset(&d, 0, sizeof d);
    d.v.i = v;
    pm_err e;
    out->len = 0;
    return pm_binrow_encode(t->part_types, 1, &d, out, &e);
}

/* The conflict check reads only the manifests whose partition stats may
 * hold a partition the commit changes (Java's
 * readAllEntriesFromChangedPartitions), once each, and still finds every
 * conflict there; a partition whose files disagree on the total buckets
 * (a rescale by overwrite) takes the exact scan. */
TEST(commit_conflict_check_reads_changed_partitions_only) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_commit_opts o;
    opts_for(t, &o, "pruner");
    o.merge_min_count = 1000;          /* one manifest per commit stays */
    pm_err e = {0};
    int64_t id = 0;
    pm_buf part = {0};
    tentry x[12];
    for (int i = 0; i < 12; i++) {
        char name[64];
        snprintf(name, sizeof name, "data-prune-%d.parquet", i);
        CHECK(int_partition(t, 100 + i, &part) == 0);
        tentry_init(&x[i], part.data, part.len, 0, name, 1);
        CHECK_EQ_INT(tu_commit(t, &x[i].m, 1, &o, &id, &e), PAIMON_OK);
    }
    pm_snapshot *s = tu_read_snap(t, id);
    size_t n_manifests = 0;
    if (s) {
        pm_mfile *v = NULL;
        size_t n = 0;
        CHECK_EQ_INT(pm_read_manifest_list(t, s->base_manifest_list, &v, &n, &e), PAIMON_OK);
        n_manifests = n;
        pm_mfiles_free(v, n);
    }
    pm_snapshot_free(s);
    CHECK(n_manifests >= 12);
    /* deleting the file of f1=105 reads its manifest and the fixture's
     * (whose stats span f1 10..20 cannot hold 105: pruned too) */
    pm_manifest_entry del = x[5].m;
    del.kind = PM_FILE_DELETE;
    int64_t before = pm_conflict_manifests_read();
    int rc = tu_commit(t, &del, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    int64_t read = pm_conflict_manifests_read() - before;
    if (read != 1) fprintf(stderr, "  conflict check read %lld of %zu manifests\n", (long long)read, n_manifests);
    CHECK_EQ_INT(read, 1);
    /* conflicts inside the changed partition are still found */
    CHECK_EQ_INT(tu_commit(t, &del, 1, &o, &id, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "data-prune-5.parquet") && strstr(e.msg, "not live in snapshot"));
    pm_manifest_entry again = x[7].m;
    o.kind = "COMPACT";
    CHECK_EQ_INT(tu_commit(t, &again, 1, &o, &id, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "data-prune-7.parquet") && strstr(e.msg, "already live"));
    tentry z;
    tentry_init(&z, x[7].m.partition.ptr, x[7].m.partition.len, 3, "data-prune-4b.parquet", 1);
    z.m.total_buckets = 4;
    CHECK_EQ_INT(tu_commit(t, &z.m, 1, &o, &id, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "total buckets") && strstr(e.msg, "from 2 to 4"));
    /* rescale f1=107 to 4 buckets by overwrite: its manifests now carry
     * both 2 and 4; a 4-bucket commit there passes, a 2-bucket one not,
     * and the exact scan decided it */
    o.kind = "OVERWRITE";
    pm_manifest_entry ow[2] = {x[7].m, z.m};
    ow[0].kind = PM_FILE_DELETE;
    rc = tu_commit(t, ow, 2, &o, &id, &e);
    if (rc) fprintf(stderr, "  overwrite: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    o.kind = "COMPACT";                 /* APPEND of adds only checks nothing (Java) */
    tentry w4, w2;
    tentry_init(&w4, z.m.partition.ptr, z.m.partition.len, 1, "data-prune-4c.parquet", 1);
    w4.m.total_buckets = 4;
    rc = tu_commit(t, &w4.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  4-bucket append: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    tentry_init(&w2, z.m.partition.ptr, z.m.partition.len, 1, "data-prune-2c.parquet", 1);
    CHECK_EQ_INT(tu_commit(t, &w2.m, 1, &o, &id, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "total buckets") && strstr(e.msg, "from 4 to 2"));
    CHECK(pm_conflict_exact_scans() >= 2);
    tentry_free(&w4);
    tentry_free(&w2);
    tentry_free(&z);
    for (int i = 0; i < 12; i++) tentry_free(&x[i]);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* Full compaction leaves a manifest untouched only when its partition
 * stats rule out every deleted partition. Deleting files of f1 = NULL and
 * f1 = 5 together: a manifest holding only f1 = NULL files may hold one of
 * them, so it is rewritten and the deleted file stays deleted. */
TEST(commit_full_compaction_null_and_value_partitions) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf pnull = {0}, p5 = {0}, p7 = {0}, names = {0};
    pm_datum d;
    memset(&d, 0, sizeof d);
    pm_err e = {0};
    d.is_null = 1;
    CHECK(pm_binrow_encode(t->part_types, 1, &d, &pnull, &e) == PAIMON_OK);
    CHECK(int_partition(t, 5, &p5) == 0);
    CHECK(int_partition(t, 7, &p7) == 0);
    tentry x, y, z;
    tentry_init(&x, pnull.data, pnull.len, 0, "data-null-x.parquet", 1);
    tentry_init(&y, p5.data, p5.len, 0, "data-five-y.parquet", 1);
    tentry_init(&z, p7.data, p7.len, 0, "data-seven-z.parquet", 1);
    pm_commit_opts o;
    opts_for(t, &o, "nulls");
    o.merge_min_count = 1000;
    int64_t id = 0;
    CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_OK);
    pm_snapshot *sx = tu_read_snap(t, id);
    pm_mfile *v = NULL;
    size_t n = 0;
    CHECK(sx && pm_read_manifest_list(t, sx->delta_manifest_list, &v, &n, &e) == PAIMON_OK && n == 1);
    int64_t x_manifest_size = n == 1 ? v[0].size : 1;
    pm_mfiles_free(v, n);
    pm_snapshot_free(sx);
    CHECK_EQ_INT(tu_commit(t, &y.m, 1, &o, &id, &e), PAIMON_OK);
    pm_manifest_entry dels[2] = {x.m, y.m};
    dels[0].kind = dels[1].kind = PM_FILE_DELETE;
    int rc = tu_commit(t, dels, 2, &o, &id, &e);
    if (rc) fprintf(stderr, "  delete: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    /* full compaction; the f1 = NULL manifest is not "must change" */
    o.manifest_target_size = x_manifest_size;
    o.full_compaction_threshold = 1;
    rc = tu_commit(t, &z.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  compaction: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK(live_names(t, id, &names, NULL) > 0);
    CHECK(has_line(&names, "data-seven-z.parquet"));
    CHECK(!has_line(&names, "data-null-x.parquet"));
    CHECK(!has_line(&names, "data-five-y.parquet"));
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --snapshot %lld 2>&1", c.table,
             (long long)id);
    int st = -1;
    char *out = tu_sh_out(cmd, &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "data-seven-z.parquet") && !strstr(out, "data-null-x.parquet"));
    free(out);
    tentry_free(&x);
    tentry_free(&y);
    tentry_free(&z);
    pm_buf_free(&pnull);
    pm_buf_free(&p5);
    pm_buf_free(&p7);
    pm_buf_free(&names);
    pm_table_free(t);
    remove_copy(&c);
}

TEST(commit_merges_small_manifests) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf before = {0}, after = {0}, part = {0};
    CHECK_EQ_INT(live_names(t, 4, &before, NULL), 3);
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-merge.parquet", 5);
    pm_commit_opts o;
    opts_for(t, &o, "merger");
    o.merge_min_count = 2;     /* the 4 small manifests of snapshot 4 are merged */
    pm_err e = {0};
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    pm_snapshot *s = tu_read_snap(t, id);
    CHECK(s != NULL);
    if (s) {
        pm_mfile *v = NULL;
        size_t n = 0;
        CHECK_EQ_INT(pm_read_manifest_list(t, s->base_manifest_list, &v, &n, &e), PAIMON_OK);
        CHECK_EQ_INT(n, 1);
        /* compaction DELETEs cancel their ADDs: only live files remain */
        if (n == 1) {
            CHECK_EQ_INT(v[0].added, 3);
            CHECK_EQ_INT(v[0].deleted, 0);
        }
        pm_mfiles_free(v, n);
        CHECK_EQ_INT(s->total_record_count.v, 8 + 5);
    }
    pm_snapshot_free(s);
    CHECK_EQ_INT(live_names(t, id, &after, NULL), 4);
    for (char *l = strtok((char *)before.data, "\n"); l; l = strtok(NULL, "\n")) CHECK(has_line(&after, l));
    CHECK(has_line(&after, "data-merge.parquet"));
    CHECK(py_check(c.table, 4, id, "merged") == 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --snapshot %lld 2>&1", c.table,
             (long long)id);
    int st = -1;
    char *out = tu_sh_out(cmd, &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "data-merge.parquet"));
    free(out);
    /* a later default commit keeps the merged manifest */
    tentry y;
    tentry_init(&y, part.data, part.len, 1, "data-merge-2.parquet", 1);
    opts_for(t, &o, "merger");
    CHECK_EQ_INT(tu_commit(t, &y.m, 1, &o, &id, &e), PAIMON_OK);
    CHECK_EQ_INT(live_names(t, id, &after, NULL), 5);
    tentry_free(&y);
    tentry_free(&x);
    pm_buf_free(&before);
    pm_buf_free(&after);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}


TEST(commit_full_compaction) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf p10 = {0}, p20 = {0}, names = {0};
    CHECK(partition_bytes(t, "f1=20/", &p20) == 0);
    CHECK(partition_bytes(t, "f1=10/", &p10) == 0);
    tentry x, y;
    tentry_init(&x, p20.data, p20.len, 1, "data-full-0.parquet", 2);
    tentry_init(&y, p10.data, p10.len, 0, "data-full-1.parquet", 3);
    pm_commit_opts o;
    opts_for(t, &o, "full");
    pm_err e = {0};
    int64_t id = 0;
    CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_OK);
    pm_snapshot *s5 = tu_read_snap(t, 5);
    pm_mfile *v = NULL;
    size_t n = 0;
    CHECK(s5 && pm_read_manifest_list(t, s5->delta_manifest_list, &v, &n, &e) == PAIMON_OK && n == 1);
    if (s5 && n == 1) {
        /* the f1=20 manifest of snapshot 5 is not "must change" (size >= target) and
         * cannot hold the deleted f1=10 files: kept; the 4 Java manifests are rewritten */
        char *m5 = pm_strdup(v[0].name);
        o.manifest_target_size = v[0].size;
        o.full_compaction_threshold = 1;
        int rc = tu_commit(t, &y.m, 1, &o, &id, &e);
        if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
        CHECK_EQ_INT(rc, PAIMON_OK);
        CHECK_EQ_INT(id, 6);
        pm_snapshot *s6 = tu_read_snap(t, 6);
        pm_mfile *w = NULL;
        size_t nw = 0;
        CHECK(s6 && pm_read_manifest_list(t, s6->base_manifest_list, &w, &nw, &e) == PAIMON_OK);
        CHECK_EQ_INT(nw, 2);
        if (nw == 2) {
            CHECK_EQ_STR(w[0].name, m5);
            CHECK(strstr(w[1].name, "manifest-") == w[1].name && strcmp(w[1].name, m5));
            CHECK_EQ_INT(w[1].added, 3);
            CHECK_EQ_INT(w[1].deleted, 0);
        }
        pm_mfiles_free(w, nw);
        pm_snapshot_free(s6);
        free(m5);
        CHECK_EQ_INT(live_names(t, 6, &names, NULL), 5);
        CHECK(has_line(&names, "data-full-0.parquet") && has_line(&names, "data-full-1.parquet"));
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --snapshot 6 2>&1", c.table);
        int st = -1;
        char *out = tu_sh_out(cmd, &st);
        CHECK_EQ_INT(st, 0);
        CHECK(out && strstr(out, "data-full-0.parquet") && strstr(out, "data-full-1.parquet") &&
              strstr(out, "data-f8754699-0c43-4e53-be00-7e8af1754913-0.parquet"));
        free(out);
    }
    pm_mfiles_free(v, n);
    pm_snapshot_free(s5);
    tentry_free(&x);
    tentry_free(&y);
    pm_buf_free(&p10);
    pm_buf_free(&p20);
    pm_buf_free(&names);
    pm_table_free(t);
    remove_copy(&c);
}


static int first_partition(paimon_table *t, pm_buf *out) {
    pm_snapshot *s;
    pm_scan *sc = NULL;
    const pm_manifest_entry *m = first_live(t, &s, &sc);
    int rc = -1;
    if (m) {
        out->len = 0;
        pm_buf_append(out, m->partition.ptr, m->partition.len);
        rc = 0;
    }
    pm_scan_close(sc);
    pm_snapshot_free(s);
    return rc;
}

TEST(commit_unpartitioned_table) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, UNPART);
    if (!t) return;
    CHECK_EQ_INT(t->n_part, 0);
    pm_buf part = {0};
    CHECK(first_partition(t, &part) == 0);
    CHECK_EQ_INT(part.len, 12);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-unpart.parquet", 4);
    x.m.total_buckets = -1;
    pm_commit_opts o;
    opts_for(t, &o, "u");
    pm_err e = {0};
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 2);
    pm_snapshot *s1 = tu_read_snap(t, 1), *s2 = tu_read_snap(t, 2);
    CHECK(s1 && s2);
    if (s1 && s2) {
        CHECK_EQ_INT(s2->total_record_count.v, s1->total_record_count.v + 4);
        /* partition stats equal Java's for an unpartitioned manifest */
        pm_manifest_reader *r1, *r2;
        const pm_manifest_meta *m;
        CHECK_EQ_INT(pm_table_open_manifest(t, s1->delta_manifest_list, PM_MANIFEST_LIST, &r1, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_table_open_manifest(t, s2->delta_manifest_list, PM_MANIFEST_LIST, &r2, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_manifest_next_meta(r1, &m, &e), PAIMON_OK);
        pm_buf jmin = {0}, jmax = {0};
        pm_buf_append(&jmin, m->partition_stats.min_values.ptr, m->partition_stats.min_values.len);
        pm_buf_append(&jmax, m->partition_stats.max_values.ptr, m->partition_stats.max_values.len);
        size_t jn = m->partition_stats.n_null_counts;
        CHECK_EQ_INT(pm_manifest_next_meta(r2, &m, &e), PAIMON_OK);
        CHECK(m->partition_stats.min_values.len == jmin.len &&
              !memcmp(m->partition_stats.min_values.ptr, jmin.data, jmin.len));
        CHECK(m->partition_stats.max_values.len == jmax.len &&
              !memcmp(m->partition_stats.max_values.ptr, jmax.data, jmax.len));
        CHECK_EQ_INT(m->partition_stats.n_null_counts, jn);
        pm_buf_free(&jmin);
        pm_buf_free(&jmax);
        pm_manifest_close(r1);
        pm_manifest_close(r2);
    }
    pm_snapshot_free(s1);
    pm_snapshot_free(s2);
    CHECK(py_check(c.table, 1, 2, "verbatim") == 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --snapshot 2 2>&1", c.table);
    int st = -1;
    char *out = tu_sh_out(cmd, &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "data-unpart.parquet"));
    free(out);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

TEST(commit_on_branch) {
    tcopy c;
    CHECK(copy_fixture_of(&c, BRANCHED) == 0);
    paimon_table *t = NULL;
    pm_err e = {0};
    CHECK_EQ_INT(pm_table_open(c.table, "test", &t, &e), PAIMON_OK);
    if (!t) { remove_copy(&c); return; }
    char sdir[600];
    snprintf(sdir, sizeof sdir, "%s/snapshot", c.table);
    char *main0 = listing(sdir);
    int64_t lid = tu_latest_id(t);
    CHECK(lid >= 1);
    pm_buf part = {0};
    CHECK(first_partition(t, &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-branch.parquet", 1);
    x.m.total_buckets = -1;
    pm_commit_opts o;
    opts_for(t, &o, "b");
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, lid + 1);
    char path[700];
    snprintf(path, sizeof path, "%s/branch/branch-test/snapshot/snapshot-%lld", c.table, (long long)id);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    char *main1 = listing(sdir);
    CHECK(main0 && main1 && !strcmp(main0, main1));
    pm_snapshot *s = tu_read_snap(t, id);
    int64_t *sids = NULL;
    size_t ns = 0;
    CHECK_EQ_INT(pm_schema_list_ids(t->io, t->branch_root, &sids, &ns, &e), PAIMON_OK);
    CHECK(s && ns && s->schema_id == sids[ns - 1]);
    free(sids);
    pm_snapshot_free(s);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --branch test --snapshot %lld 2>&1",
             c.table, (long long)id);
    int rs = -1;
    char *out = tu_sh_out(cmd, &rs);
    CHECK_EQ_INT(rs, 0);
    CHECK(out && strstr(out, "data-branch.parquet"));
    free(out);
    free(main0);
    free(main1);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* indexManifest, watermark, statistics and nextRowId come from the latest snapshot */
TEST(commit_copies_snapshot_fields) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_snapshot *s4 = tu_read_snap(t, 4);
    CHECK(s4 != NULL);
    if (s4) {
        s4->index_manifest = pm_strdup("index-manifest-abc-0");
        s4->statistics = pm_strdup("stat-abc-0");
        s4->watermark = (pm_opt_i64){1, INT64_MIN};
        s4->next_row_id = (pm_opt_i64){1, 77};
        pm_buf j = {0};
        pm_err e;
        char path[600];
        snprintf(path, sizeof path, "%s/snapshot/snapshot-4", c.table);
        CHECK(pm_snapshot_to_json(s4, &j) == 0);
        CHECK_EQ_INT(pm_io_write_atomic(t->io, path, j.data, j.len, &e), PAIMON_OK);
        pm_buf_free(&j);
        pm_snapshot_free(s4);
    }
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-fields.parquet", 1);
    pm_commit_opts o;
    opts_for(t, &o, "f");
    o.identifier = 5;
    pm_err e = {0};
    int64_t id = 0;
    CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_OK);
    pm_snapshot *s = tu_read_snap(t, id);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_STR(s->index_manifest, "index-manifest-abc-0");
        CHECK_EQ_STR(s->statistics, "stat-abc-0");
        CHECK(s->watermark.has && s->watermark.v == INT64_MIN);
        CHECK(s->next_row_id.has && s->next_row_id.v == 77);
        CHECK_EQ_INT(s->commit_identifier, 5);
        CHECK(!s->changelog_manifest_list && !s->has_properties && !s->operation);
    }
    pm_snapshot_free(s);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}


TEST(commit_first_snapshot) {
    tcopy c;
    CHECK(copy_fixture(&c) == 0);
    /* a table with only its schema */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir '%s/e' && cp -R '%s/schema' '%s/e/'", c.dir, c.table, c.dir);
    CHECK(system(cmd) == 0);
    pm_buf part = {0};
    paimon_table *src = open_copy(&c);
    CHECK(src && partition_bytes(src, "f1=10/", &part) == 0);
    pm_table_free(src);
    char tdir[400];
    snprintf(tdir, sizeof tdir, "%s/e", c.dir);
    paimon_table *t = NULL;
    pm_err e = {0};
    CHECK_EQ_INT(pm_table_open(tdir, NULL, &t, &e), PAIMON_OK);
    if (!t) { pm_buf_free(&part); remove_copy(&c); return; }
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-first.parquet", 3);
    pm_commit_opts o;
    opts_for(t, &o, "first");
    /* deleting from an empty table */
    x.m.kind = PM_FILE_DELETE;
    int64_t id = 0;
    CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_CONFLICT);
    CHECK(strstr(e.msg, "no snapshot"));
    /* wrong partition arity */
    x.m.kind = PM_FILE_ADD;
    pm_bytes saved = x.m.partition;
    x.m.partition = (pm_bytes){x.empty.data, x.empty.len};
    CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_MISUSE);
    x.m.partition = saved;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 1);
    pm_snapshot *s = tu_read_snap(t, 1);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_INT(s->total_record_count.v, 3);
        CHECK_EQ_INT(s->delta_record_count.v, 3);
        pm_mfile *v = NULL;
        size_t n = 0;
        CHECK_EQ_INT(pm_read_manifest_list(t, s->base_manifest_list, &v, &n, &e), PAIMON_OK);
        CHECK_EQ_INT(n, 0);   /* an empty base list file */
        pm_mfiles_free(v, n);
    }
    pm_snapshot_free(s);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files 2>&1", tdir);
    int st = -1;
    char *out = tu_sh_out(cmd, &st);
    CHECK_EQ_INT(st, 0);
    CHECK(out && strstr(out, "data-first.parquet"));
    free(out);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}


TEST(commit_options_from_table) {
    tcopy c;
    CHECK(copy_fixture(&c) == 0);
    char cmd[1600];
    snprintf(cmd, sizeof cmd,
             "sed -i 's|\"bucket\" : \"2\",|\"bucket\" : \"2\", \"commit.max-retries\" : \"3\", "
             "\"commit.min-retry-wait\" : \"5 ms\", \"commit.max-retry-wait\" : \"2 s\", "
             "\"manifest.target-file-size\" : \"2 mb\", \"manifest.full-compaction-threshold-size\" : \"3mb\", "
             "\"manifest.merge-min-count\" : \"7\", \"manifest.compression\" : \"none\",|' '%s/schema/schema-0'",
             c.table);
    CHECK(system(cmd) == 0);
    paimon_table *t = open_copy(&c);
    CHECK(t != NULL);
    if (!t) { remove_copy(&c); return; }
    pm_commit_opts o;
    pm_commit_opts_from_table(t, &o);
    CHECK(o.commit_user == NULL);
    CHECK(o.identifier == INT64_MAX);
    CHECK_EQ_STR(o.kind, "APPEND");
    CHECK_EQ_INT(o.max_retries, 3);
    CHECK_EQ_INT(o.min_retry_wait_ms, 5);
    CHECK_EQ_INT(o.max_retry_wait_ms, 2000);
    CHECK_EQ_INT(o.manifest_target_size, 2 << 20);
    CHECK_EQ_INT(o.full_compaction_threshold, 3 << 20);
    CHECK_EQ_INT(o.merge_min_count, 7);
    CHECK_EQ_STR(o.codec, "null");
    pm_commit_opts_from_table(NULL, &o);
    CHECK_EQ_INT(o.max_retries, 10);
    CHECK_EQ_INT(o.min_retry_wait_ms, 10);
    CHECK_EQ_INT(o.max_retry_wait_ms, 10000);
    CHECK_EQ_INT(o.manifest_target_size, 8 << 20);
    CHECK_EQ_INT(o.full_compaction_threshold, 16 << 20);
    CHECK_EQ_INT(o.merge_min_count, 30);
    CHECK_EQ_STR(o.codec, "zstandard");
    CHECK_EQ_INT(o.level, 1);
    /* manifests are written with the table's codec */
    pm_commit_opts_from_table(t, &o);
    o.commit_user = "codec";
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-codec.parquet", 1);
    pm_err e = {0};
    int64_t id = 0;
    CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_OK);
    pm_snapshot *s = tu_read_snap(t, id);
    if (s) {
        pm_manifest_reader *r;
        CHECK_EQ_INT(pm_table_open_manifest(t, s->delta_manifest_list, PM_MANIFEST_LIST, &r, &e), PAIMON_OK);
        CHECK_EQ_STR(pm_manifest_codec(r), "null");
        pm_manifest_close(r);
    }
    pm_snapshot_free(s);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

TEST(commit_misuse) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_commit_opts o;
    pm_commit_opts_from_table(t, &o);
    pm_err e;
    int64_t id;
    CHECK_EQ_INT(tu_commit(t, NULL, 0, &o, &id, &e), PAIMON_MISUSE);   /* no commit user */
    o.commit_user = "u";
    o.kind = "ANALYZE";
    CHECK_EQ_INT(tu_commit(t, NULL, 0, &o, &id, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(tu_latest_id(t), 4);
    pm_table_free(t);
    remove_copy(&c);
}


/* manifest.target-file-size rolls new and merged manifests (checked every
 * 1000 records, like Java's RollingFileWriter), so a later minor compaction
 * keeps the full-size files instead of rewriting them again. */
static pm_manifest_entry *many_entries(const pm_buf *part, const char *prefix, int n, tentry **store) {
    *store = calloc((size_t)n, sizeof **store);
    pm_manifest_entry *v = calloc((size_t)n, sizeof *v);
    for (int i = 0; i < n; i++) {
        char name[96];
        snprintf(name, sizeof name, "data-%s-%05d.parquet", prefix, i);
        tentry_init(&(*store)[i], part->data, part->len, i % 2, name, 1);
        v[i] = (*store)[i].m;
    }
    return v;
}

static void many_free(tentry *store, pm_manifest_entry *v, int n) {
    for (int i = 0; i < n; i++) tentry_free(&store[i]);
    free(store);
    free(v);
}

static int list_of(paimon_table *t, int64_t id, int base, pm_mfile **v, size_t *n) {
    pm_snapshot *s = tu_read_snap(t, id);
    pm_err e;
    *v = NULL;
    *n = 0;
    int rc = s ? pm_read_manifest_list(t, base ? s->base_manifest_list : s->delta_manifest_list, v, n, &e) : -1;
    pm_snapshot_free(s);
    return rc;
}

TEST(commit_rolls_manifests) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf part = {0}, names = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    enum { N = 2500 };
    tentry *store;
    pm_manifest_entry *ents = many_entries(&part, "roll", N, &store);
    pm_commit_opts o;
    opts_for(t, &o, "roller");
    o.merge_decode_only = 1;   /* the decode path's rule: rolls every 1000 records */
    pm_err e = {0};
    int64_t id = 0;
    /* default target: one delta manifest */
    o.codec = "null";
    CHECK_EQ_INT(tu_commit(t, ents, 1200, &o, &id, &e), PAIMON_OK);
    pm_mfile *v = NULL;
    size_t n = 0;
    CHECK(list_of(t, id, 0, &v, &n) == 0);
    CHECK_EQ_INT(n, 1);
    int64_t big = n ? v[0].size : 0;
    pm_mfiles_free(v, n);
    /* a tiny target: the delta rolls every 1000 records */
    o.codec = "zstandard";
    o.manifest_target_size = 1;
    int rc = tu_commit(t, ents + 1200, N - 1200, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK(list_of(t, id, 0, &v, &n) == 0);
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK_EQ_INT(v[0].added, 1000);
        CHECK_EQ_INT(v[1].added, N - 1200 - 1000);
        for (size_t i = 0; i < n; i++) {
            char path[800];
            struct stat st;
            snprintf(path, sizeof path, "%s/manifest/%s", c.table, v[i].name);
            CHECK(stat(path, &st) == 0 && st.st_size == v[i].size);
        }
    }
    pm_mfiles_free(v, n);
    CHECK_EQ_INT(live_names(t, id, &names, NULL), 3 + N);
    /* Minor compaction, uncompressed manifests so that sizes follow the
     * entry counts, target = a third of the 1200-entry manifest: the 4 small
     * Java manifests and that one are merged and rolled at 1000 records */
    o.codec = "null";
    o.manifest_target_size = big / 3;
    o.merge_min_count = 2;
    tentry one;
    tentry_init(&one, part.data, part.len, 0, "data-roll-extra-0.parquet", 1);
    rc = tu_commit(t, &one.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK(list_of(t, id, 1, &v, &n) == 0);
    CHECK(n >= 3);
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += v[i].added;
        CHECK_EQ_INT(v[i].deleted, 0);
    }
    CHECK_EQ_INT(total, 3 + N);
    char *first = NULL;
    if (n) {
        CHECK_EQ_INT(v[0].added, 1000);
        CHECK(v[0].size >= o.manifest_target_size);
        first = pm_strdup(v[0].name);
    }
    pm_mfiles_free(v, n);
    CHECK(py_check(c.table, id - 1, id, "merged") == 0);
    /* the next merge keeps that full-size rolled file */
    tentry_free(&one);
    tentry_init(&one, part.data, part.len, 0, "data-roll-extra-1.parquet", 1);
    CHECK_EQ_INT(tu_commit(t, &one.m, 1, &o, &id, &e), PAIMON_OK);
    CHECK(list_of(t, id, 1, &v, &n) == 0);
    CHECK(n >= 2 && first && !strcmp(v[0].name, first));
    total = 0;
    for (size_t i = 0; i < n; i++) total += v[i].added;
    CHECK_EQ_INT(total, 3 + N + 1);
    free(first);
    pm_mfiles_free(v, n);
    CHECK_EQ_INT(live_names(t, id, &names, NULL), 3 + N + 2);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files --snapshot %lld 2>&1 | grep -c '\"file_name\": \"data-roll-'",
             c.table, (long long)id);
    char *out = tu_sh_out(cmd, NULL);
    CHECK(out && atoi(out) == N + 2);
    free(out);
    tentry_free(&one);
    many_free(store, ents, N);
    pm_buf_free(&part);
    pm_buf_free(&names);
    pm_table_free(t);
    remove_copy(&c);
}


/* Full compaction writes its output through the rolling writer too. */
TEST(commit_full_compaction_rolls) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf part = {0}, names = {0};
    CHECK(partition_bytes(t, "f1=20/", &part) == 0);
    enum { B = 6, PER = 400 };
    tentry *store;
    pm_manifest_entry *ents = many_entries(&part, "fullroll", B * PER, &store);
    pm_commit_opts o;
    opts_for(t, &o, "fullroll");
    o.merge_decode_only = 1;   /* the decode path's rule: rolls every 1000 records */
    o.codec = "null";
    o.merge_min_count = 1000;   /* no merging while the manifests pile up */
    pm_err e = {0};
    int64_t id = 0;
    for (int b = 0; b < B; b++) CHECK_EQ_INT(tu_commit(t, ents + b * PER, PER, &o, &id, &e), PAIMON_OK);
    pm_mfile *v = NULL;
    size_t n = 0;
    CHECK(list_of(t, id, 1, &v, &n) == 0);
    CHECK_EQ_INT(n, 4 + B - 1);
    for (size_t i = 0; i < n; i++) CHECK(v[i].size < 100000);
    pm_mfiles_free(v, n);
    /* every manifest is below the 100 kB target: all rewritten, rolled */
    o.manifest_target_size = 100000;
    o.full_compaction_threshold = 1;
    tentry one;
    tentry_init(&one, part.data, part.len, 0, "data-fullroll-extra.parquet", 1);
    int rc = tu_commit(t, &one.m, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK(list_of(t, id, 1, &v, &n) == 0);
    CHECK_EQ_INT(n, 3);
    if (n == 3) {
        CHECK_EQ_INT(v[0].added, 1000);
        CHECK_EQ_INT(v[1].added, 1000);
        CHECK_EQ_INT(v[2].added, 3 + B * PER - 2000);
        for (size_t i = 0; i < n; i++) {
            CHECK_EQ_INT(v[i].deleted, 0);
            CHECK(strstr(v[i].name, "manifest-") == v[i].name);
        }
    }
    pm_mfiles_free(v, n);
    CHECK(py_check(c.table, id - 1, id, "merged") == 0);
    CHECK_EQ_INT(live_names(t, id, &names, NULL), 3 + B * PER + 1);
    tentry_free(&one);
    many_free(store, ents, B * PER);
    pm_buf_free(&part);
    pm_buf_free(&names);
    pm_table_free(t);
    remove_copy(&c);
}

/* A snapshot write that fails without writing is retried and commits once;
 * one that wrote the snapshot but reported an error (and whose check read
 * failed too) is found by the retry: no second snapshot. */
static int flaky_left;          /* snapshot creates still to fail */
static int flaky_write;         /* 1: write the snapshot before failing */
static int flaky_reads;         /* snapshot reads still to fail after a failed create */

static int flaky_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    if (strstr(path, "/snapshot/snapshot-") && flaky_left > 0) {
        flaky_left--;
        if (flaky_write) race_orig->create_no_replace(io, path, p, n, e);
        return pm_fail(e, PAIMON_IO, "%s: simulated uncertain failure", path);
    }
    return race_orig->create_no_replace(io, path, p, n, e);
}

static int flaky_read(pm_fileio *io, const char *path, pm_buf *out, pm_err *e) {
    if (strstr(path, "/snapshot/snapshot-") && flaky_reads > 0 && flaky_left == 0) {
        flaky_reads--;
        return pm_fail(e, PAIMON_IO, "%s: simulated read failure", path);
    }
    return race_orig->read_all(io, path, out, e);
}

TEST(commit_uncertain_retry_is_idempotent) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    char sdir[600];
    snprintf(sdir, sizeof sdir, "%s/snapshot", c.table);
    pm_buf part = {0}, names = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    pm_commit_opts o;
    opts_for(t, &o, "flaky");
    o.min_retry_wait_ms = 1;
    o.identifier = 9;
    race_orig = t->io->ops;
    race_ops = *race_orig;
    race_ops.create_no_replace = flaky_create;
    race_ops.read_all = flaky_read;
    /* not written: the retry commits it (snapshot 5), exactly once */
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-flaky-0.parquet", 2);
    flaky_left = 2;
    flaky_write = 0;
    flaky_reads = 0;
    t->io->ops = &race_ops;
    pm_err e = {0};
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    t->io->ops = race_orig;
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 5);
    CHECK_EQ_INT(tu_latest_id(t), 5);
    /* written, reported as failed, and the check read failed: the retry
     * finds snapshot 6 by (commitUser, commitIdentifier, commitKind) */
    tentry_free(&x);
    tentry_init(&x, part.data, part.len, 0, "data-flaky-1.parquet", 3);
    flaky_left = 1;
    flaky_write = 1;
    flaky_reads = 1;
    o.identifier = 10;
    t->io->ops = &race_ops;
    rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    t->io->ops = race_orig;
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 6);
    CHECK_EQ_INT(flaky_reads, 0);
    CHECK_EQ_INT(tu_latest_id(t), 6);
    int64_t *ids = NULL;
    size_t n = 0;
    CHECK_EQ_INT(pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, &e), PAIMON_OK);
    CHECK_EQ_INT(n, 6);
    free(ids);
    CHECK_EQ_INT(live_names(t, 6, &names, NULL), 5);
    CHECK(has_line(&names, "data-flaky-0.parquet") && has_line(&names, "data-flaky-1.parquet"));
    pm_snapshot *s = tu_read_snap(t, 6);
    CHECK(s && s->commit_identifier == 10 && !strcmp(s->commit_user, "flaky"));
    pm_snapshot_free(s);
    /* a same-identifier snapshot of another kind is not taken for ours */
    tentry_free(&x);
    tentry_init(&x, part.data, part.len, 0, "data-flaky-2.parquet", 1);
    flaky_left = 1;
    flaky_write = 0;
    flaky_reads = 0;
    o.kind = "COMPACT";
    t->io->ops = &race_ops;
    rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    t->io->ops = race_orig;
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 7);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_buf_free(&names);
    pm_table_free(t);
    remove_copy(&c);
}


/* Issue 22 at the commit level: the snapshot write landed but reported an
 * error, and the snapshot then reads and checks as missing for a while (a
 * store without read-after-write on the key). Every later attempt finds the
 * id taken. Before: the lost races ended the commit as PAIMON_CONFLICT
 * ("snapshot ids were taken by concurrent commits", exit 3), and abort,
 * which could not see the snapshot either, deleted its data file. Now the
 * unresolved first attempt makes the end PAIMON_UNCERTAIN naming snapshot
 * 5, abort deletes nothing, and once the key reads, snapshot 5 is whole. */
static int hidden_id;           /* snapshot id that reads and checks as missing (0: none) */

static int is_hidden(const char *path) {
    char tail[64];
    snprintf(tail, sizeof tail, "/snapshot/snapshot-%d", hidden_id);
    size_t l = strlen(path), k = strlen(tail);
    return hidden_id && l >= k && !strcmp(path + l - k, tail);
}

static int hide_read(pm_fileio *io, const char *path, pm_buf *out, pm_err *e) {
    if (is_hidden(path)) return pm_fail(e, PAIMON_NOTFOUND, "%s: simulated 404", path);
    return race_orig->read_all(io, path, out, e);
}

static int hide_exists(pm_fileio *io, const char *path, int *ex, pm_err *e) {
    if (is_hidden(path)) { *ex = 0; return PAIMON_OK; }
    return race_orig->exists(io, path, ex, e);
}

TEST(commit_uncertain_then_lost_races_stays_uncertain) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    pm_buf part = {0}, names = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    pm_commit_opts o;
    opts_for(t, &o, "unread");
    o.min_retry_wait_ms = 1;
    o.max_retries = 3;
    o.identifier = 7;
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-unread.parquet", 2);
    CHECK_EQ_INT(tu_touch_adds(t, &x.m, 1, NULL, 0), 0);
    pm_buf data = {0};
    pm_err e = {0};
    CHECK_EQ_INT(pm_data_file_full_path(t, &x.m, &data, &e), PAIMON_OK);
    race_orig = t->io->ops;
    race_ops = *race_orig;
    race_ops.create_no_replace = flaky_create;
    race_ops.read_all = hide_read;
    race_ops.exists = hide_exists;
    flaky_left = 1;
    flaky_write = 1;
    flaky_reads = 0;
    hidden_id = 5;
    t->io->ops = &race_ops;
    pm_commit_history h;
    memset(&h, 0, sizeof h);
    int64_t id = 0, removed = -1, kept = -1;
    int created = 0;
    int rc = pm_write_commit(t, &x.m, 1, &o, 0, &h, &id, &created, &e);
    CHECK_EQ_INT(rc, PAIMON_UNCERTAIN);
    if (rc != PAIMON_UNCERTAIN) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK(strstr(e.msg, "commit outcome uncertain: snapshot 5 (") && strstr(e.msg, "/snapshot/snapshot-5)"));
    CHECK(strstr(e.msg, "simulated uncertain failure") || strstr(e.msg, "gave up after 3 retries"));
    CHECK_EQ_INT(h.uncertain, 1);
    CHECK_EQ_INT(created, 0);
    /* the snapshot still reads as missing: abort keeps the data file */
    CHECK_EQ_INT(pm_write_abort(t, &h, &x.m, 1, &removed, &kept, &e), PAIMON_OK);
    CHECK_EQ_INT(removed, 0);
    CHECK_EQ_INT(kept, 1);
    t->io->ops = race_orig;
    hidden_id = 0;
    CHECK(tu_file_exists((char *)data.data));
    /* the key reads: snapshot 5 is ours, once, and whole */
    CHECK_EQ_INT(tu_latest_id(t), 5);
    pm_snapshot *s = tu_read_snap(t, 5);
    CHECK(s && s->commit_identifier == 7 && !strcmp(s->commit_user, "unread"));
    pm_snapshot_free(s);
    CHECK_EQ_INT(live_names(t, 5, &names, NULL), 4);
    CHECK(has_line(&names, "data-unread.parquet"));
    /* a retry of the same commit is recognized */
    int64_t last = 0, last_id = 0;
    CHECK_EQ_INT(pm_commit_last_of_user(t, "unread", &last, &last_id, &e), PAIMON_OK);
    CHECK_EQ_INT(last, 7);
    CHECK_EQ_INT(last_id, 5);
    pm_buf_free(&data);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_buf_free(&names);
    pm_table_free(t);
    remove_copy(&c);
}

/* ---- overtaken by expiration ------------------------------------------- */

/* While our commit reads its base (snapshot 4), another writer commits
 * snapshot 5 and an expiration deletes snapshot 4 and the lists only it
 * used. The read fails with NOTFOUND; the commit must treat that as a lost
 * race and land on top of snapshot 5. */
static const pm_fileio_ops *ovt_orig;
static pm_fileio_ops ovt_ops;
static int ovt_fired;
static char ovt_table[600];

static int ovt_read_all(pm_fileio *io, const char *path, pm_buf *out, pm_err *e) {
    if (!ovt_fired && strstr(path, "/manifest/manifest-list-")) {
        ovt_fired = 1;
        char src[700], dst[700], cmd[2200];
        snprintf(src, sizeof src, "%s/snapshot/snapshot-4", ovt_table);
        snprintf(dst, sizeof dst, "%s/snapshot/snapshot-5", ovt_table);
        /* snapshot 5 = snapshot 4's content under id 5 (same lists) */
        snprintf(cmd, sizeof cmd, "sed 's/\"id\" : 4,/\"id\" : 5,/' '%s' > '%s' && rm -f '%s'", src, dst, src);
        if (system(cmd) != 0) fprintf(stderr, "  overtaken: setup failed\n");
        return pm_fail(e, PAIMON_NOTFOUND, "%s: vanished (simulated expiration)", path);
    }
    return ovt_orig->read_all(io, path, out, e);
}

TEST(commit_overtaken_by_expiration_retries) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    snprintf(ovt_table, sizeof ovt_table, "%s", c.table);
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-overtaken.parquet", 2);
    pm_commit_opts o;
    opts_for(t, &o, "overtaken");
    o.min_retry_wait_ms = 1;
    ovt_orig = t->io->ops;
    ovt_ops = *ovt_orig;
    ovt_ops.read_all = ovt_read_all;
    ovt_fired = 0;
    t->io->ops = &ovt_ops;
    pm_err e = {0};
    int64_t id = 0;
    int rc = tu_commit(t, &x.m, 1, &o, &id, &e);
    t->io->ops = ovt_orig;
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(ovt_fired, 1);
    CHECK_EQ_INT(rc, PAIMON_OK);
    CHECK_EQ_INT(id, 6);
    pm_buf names = {0};
    CHECK_EQ_INT(live_names(t, 6, &names, NULL), 4);
    CHECK(has_line(&names, "data-overtaken.parquet"));
    pm_buf_free(&names);

    /* a manifest that is missing while its snapshot still exists is
     * corruption, not a race: reported, not retried */
    char lst[700], cmd[1600];
    pm_snapshot *s6 = tu_read_snap(t, 6);
    CHECK(s6 != NULL);
    if (s6) {
        snprintf(lst, sizeof lst, "%s/manifest/%s", c.table, s6->delta_manifest_list);
        snprintf(cmd, sizeof cmd, "rm -f '%s'", lst);
        CHECK(system(cmd) == 0);
        tentry y;
        tentry_init(&y, part.data, part.len, 0, "data-after.parquet", 1);
        rc = tu_commit(t, &y.m, 1, &o, &id, &e);
        CHECK_EQ_INT(rc, PAIMON_NOTFOUND);
        CHECK(strstr(e.msg, s6->delta_manifest_list) != NULL);
        CHECK_EQ_INT(tu_latest_id(t), 6);
        tentry_free(&y);
        pm_snapshot_free(s6);
    }
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* ---- files deleted while the commit is in flight ------------------------ */

/* A cleaner deleting a file of this commit before the snapshot is
 * published (orphan cleaning with a young cut-off): the commit must fail,
 * naming the file, publish nothing and leave manifest/ as it was. The
 * hook deletes, right after the commit wrote its delta manifest list, the
 * file gone_path (a data file), or with gone_path empty the manifest this
 * commit wrote just before that list. */
static const pm_fileio_ops *gone_orig;
static pm_fileio_ops gone_ops;
static char gone_path[700], gone_last_manifest[700];
static int gone_fired;

static int gone_write_atomic(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    int rc = gone_orig->write_atomic(io, path, p, n, e);
    if (rc) return rc;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!strncmp(base, "manifest-list-", 14)) {
        const char *victim = gone_path[0] ? gone_path : gone_last_manifest;
        if (victim[0] && unlink(victim) == 0) gone_fired++;
    } else if (!strncmp(base, "manifest-", 9)) {
        snprintf(gone_last_manifest, sizeof gone_last_manifest, "%s", path);
    }
    return rc;
}

TEST(commit_refuses_to_publish_a_deleted_file) {
    tcopy c;
    paimon_table *t = open_fixture_copy(&c, COMPLEX);
    if (!t) return;
    char mdir[600];
    snprintf(mdir, sizeof mdir, "%s/manifest", c.table);
    pm_buf part = {0};
    CHECK(partition_bytes(t, "f1=10/", &part) == 0);
    pm_commit_opts o;
    opts_for(t, &o, "in-flight");
    gone_orig = t->io->ops;
    gone_ops = *gone_orig;
    gone_ops.write_atomic = gone_write_atomic;
    for (int round = 0; round < 2; round++) {
        tentry x;
        char name[64];
        snprintf(name, sizeof name, "data-in-flight-%d.parquet", round);
        tentry_init(&x, part.data, part.len, 0, name, 2);
        CHECK(tu_touch_adds(t, &x.m, 1, NULL, 0) == 0);   /* written by the writer */
        snprintf(gone_path, sizeof gone_path, "%s/f1=10/bucket-0/%s", c.table, name);
        CHECK(tu_file_exists(gone_path));
        const char *what = "data file";
        if (round == 1) { gone_path[0] = '\0'; what = "metadata file"; }   /* our own manifest instead */
        gone_last_manifest[0] = '\0';
        gone_fired = 0;
        char *before = listing(mdir);
        t->io->ops = &gone_ops;
        pm_err e = {0};
        int64_t id = 0;
        int rc = pm_commit(t, &x.m, 1, &o, &id, &e);   /* not tu_commit: the file stays deleted */
        t->io->ops = gone_orig;
        CHECK_EQ_INT(gone_fired, 1);
        CHECK_EQ_INT(rc, PAIMON_CONFLICT);
        CHECK(strstr(e.msg, "nothing published") != NULL);
        CHECK(strstr(e.msg, what) != NULL);
        CHECK(strstr(e.msg, round == 0 ? name : strrchr(gone_last_manifest, '/') + 1) != NULL);
        CHECK_EQ_INT(tu_latest_id(t), 4);                  /* nothing published */
        char *after = listing(mdir);
        CHECK_EQ_STR(after, before);                        /* the attempt's metadata files removed */
        free(before);
        free(after);
        tentry_free(&x);
    }
    /* with the files in place the same commit goes through */
    tentry x;
    tentry_init(&x, part.data, part.len, 0, "data-in-flight-0.parquet", 2);
    pm_err e = {0};
    int64_t id = 0;
    CHECK_EQ_INT(tu_commit(t, &x.m, 1, &o, &id, &e), PAIMON_OK);
    CHECK_EQ_INT(id, 5);
    tentry_free(&x);
    pm_buf_free(&part);
    pm_table_free(t);
    remove_copy(&c);
}

/* The committer's defaults are pm_option_defaults' (Java's CoreOptions),
 * also for a table whose value does not parse. */
TEST(commit_defaults_come_from_the_option_table) {
    pm_commit_opts o;
    pm_commit_opts_from_table(NULL, &o);
    CHECK_EQ_INT(o.max_retries, 10);
    CHECK_EQ_INT(o.min_retry_wait_ms, 10);
    CHECK_EQ_INT(o.max_retry_wait_ms, 10000);
    CHECK_EQ_INT(o.manifest_target_size, 8LL << 20);
    CHECK_EQ_INT(o.full_compaction_threshold, 16LL << 20);
    CHECK_EQ_INT(o.merge_min_count, 30);
    CHECK_EQ_STR(pm_schema_option_or_default(NULL, "manifest.merge-min-count"), "30");
}

int main(void) {
    RUN(commit_defaults_come_from_the_option_table);
    RUN(commit_add_new_file);
    RUN(commit_delete_live_file);
    RUN(commit_delete_non_live_conflicts);
    RUN(commit_retries_when_id_taken);
    RUN(commit_unknown_write_under_anothers_snapshot_is_a_lost_race);
    RUN(commit_uncertain_failure);
    RUN(commit_directory_sync_failure_is_uncertain);
    RUN(create_link_error_is_settled_by_looking);
    RUN(commit_concurrent_processes);
    RUN(commit_concurrent_processes_4x50);
    RUN(commit_concurrent_deletes_conflict);
    RUN(commit_last_identifier);
    RUN(commit_partition_stats_span);
    RUN(commit_conflict_check_reads_changed_partitions_only);
    RUN(commit_merges_small_manifests);
    RUN(commit_full_compaction);
    RUN(commit_full_compaction_null_and_value_partitions);
    RUN(commit_unpartitioned_table);
    RUN(commit_on_branch);
    RUN(commit_copies_snapshot_fields);
    RUN(commit_first_snapshot);
    RUN(commit_options_from_table);
    RUN(commit_misuse);
    RUN(commit_rolls_manifests);
    RUN(commit_full_compaction_rolls);
    RUN(commit_uncertain_retry_is_idempotent);
    RUN(commit_uncertain_then_lost_races_stays_uncertain);
    RUN(commit_overtaken_by_expiration_retries);
    RUN(commit_refuses_to_publish_a_deleted_file);
    return TEST_SUMMARY();
}
