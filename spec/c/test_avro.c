/* Avro container reader/writer: fixtures cross-checked against python3-avro,
 * writer round trips for every codec, corruption and mutation tests. */
#include "test.h"
#include "pm_avro.h"
#include "pm_avro_codec.h"

#include <glob.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define PYTHON "/usr/bin/python3"
#define DUMP_PY "spec/support/avro_dump.py"

/* ---- helpers -------------------------------------------------------------- */

static int read_file(const char *path, pm_buf *out) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint8_t tmp[65536];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) pm_buf_append(out, tmp, n);
    fclose(f);
    return 0;
}

static int write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, n, f);
    fclose(f);
    return w == n ? 0 : -1;
}

static void put_hex(pm_buf *b, const uint8_t *p, size_t n) {
    static const char hx[] = "0123456789abcdef";
    pm_buf_reserve(b, n * 2);
    for (size_t i = 0; i < n; i++) {
        b->data[b->len++] = (uint8_t)hx[p[i] >> 4];
        b->data[b->len++] = (uint8_t)hx[p[i] & 15];
    }
}

static void put_double_hex(pm_buf *b, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(u >> (8 * i));
    pm_buf_putc(b, 'd');
    put_hex(b, le, 8);
}

/* Canonical text of a value, schema driven (see spec/support/avro_dump.py). */
static void canon(pm_buf *b, const pm_avro_schema *s, const pm_avro_value *v) {
    if (s->type == PM_AVRO_UNION) s = s->branches[v->branch];
    switch (s->type) {
    case PM_AVRO_NULL: pm_buf_putc(b, 'n'); break;
    case PM_AVRO_BOOLEAN: pm_buf_putc(b, v->u.boolean ? 't' : 'f'); break;
    case PM_AVRO_INT: pm_buf_printf(b, "i%d", (int)v->u.i); break;
    case PM_AVRO_LONG: pm_buf_printf(b, "i%lld", (long long)v->u.l); break;
    case PM_AVRO_FLOAT: put_double_hex(b, (double)v->u.f); break;
    case PM_AVRO_DOUBLE: put_double_hex(b, v->u.d); break;
    case PM_AVRO_STRING: pm_buf_putc(b, 's'); put_hex(b, v->u.bytes.ptr, v->u.bytes.len); break;
    case PM_AVRO_BYTES:
    case PM_AVRO_FIXED: pm_buf_putc(b, 'x'); put_hex(b, v->u.bytes.ptr, v->u.bytes.len); break;
    case PM_AVRO_ENUM: {
        const char *sym = s->symbols[v->u.i];
        pm_buf_putc(b, 's');
        put_hex(b, (const uint8_t *)sym, strlen(sym));
        break;
    }
    case PM_AVRO_RECORD:
        pm_buf_putc(b, '{');
        for (size_t i = 0; i < s->n_fields; i++) {
            if (i) pm_buf_putc(b, ',');
            put_hex(b, (const uint8_t *)s->fields[i].name, strlen(s->fields[i].name));
            pm_buf_putc(b, '=');
            canon(b, s->fields[i].type, &v->u.list.items[i]);
        }
        pm_buf_putc(b, '}');
        break;
    case PM_AVRO_ARRAY:
        pm_buf_putc(b, '[');
        for (size_t i = 0; i < v->u.list.n; i++) {
            if (i) pm_buf_putc(b, ',');
            canon(b, s->items, &v->u.list.items[i]);
        }
        pm_buf_putc(b, ']');
        break;
    case PM_AVRO_MAP:
        pm_buf_putc(b, '{');
        for (size_t i = 0; i < v->u.map.n; i++) {
            if (i) pm_buf_putc(b, ',');
            put_hex(b, v->u.map.keys[i].u.bytes.ptr, v->u.map.keys[i].u.bytes.len);
            pm_buf_putc(b, '=');
            canon(b, s->items, &v->u.map.values[i]);
        }
        pm_buf_putc(b, '}');
        break;
    default: pm_buf_putc(b, '?'); break;
    }
}

/* Decoded values must be self-consistent: type/schema/branch agree. */
static int consistent(const pm_avro_schema *s, const pm_avro_value *v) {
    if (s->type == PM_AVRO_UNION) {
        if (v->branch < 0 || (size_t)v->branch >= s->n_branches) return 0;
        s = s->branches[v->branch];
    } else if (v->branch != -1) {
        return 0;
    }
    if (v->type != s->type || v->schema->type != s->type) return 0;
    switch (s->type) {
    case PM_AVRO_RECORD:
        if (v->u.list.n != s->n_fields) return 0;
        for (size_t i = 0; i < s->n_fields; i++)
            if (!consistent(s->fields[i].type, &v->u.list.items[i])) return 0;
        return 1;
    case PM_AVRO_ARRAY:
        for (size_t i = 0; i < v->u.list.n; i++)
            if (!consistent(s->items, &v->u.list.items[i])) return 0;
        return 1;
    case PM_AVRO_MAP:
        for (size_t i = 0; i < v->u.map.n; i++)
            if (!consistent(s->items, &v->u.map.values[i])) return 0;
        return 1;
    default: return 1;
    }
}

/* Python dump output, split into sections. */
typedef struct py_file {
    char *path;
    char *error;        /* NULL when readable */
    long count;
    char *codec;
    char **lines;
    size_t n_lines;
} py_file;

typedef struct py_dump {
    pm_buf raw;
    py_file *files;
    size_t n;
} py_dump;

static int run_python(char **paths, size_t n, py_dump *out) {
    memset(out, 0, sizeof *out);
    pm_buf cmd = {0};
    pm_buf_printf(&cmd, "%s %s", PYTHON, DUMP_PY);
    for (size_t i = 0; i < n; i++) pm_buf_printf(&cmd, " '%s'", paths[i]);
    pm_buf_cstr(&cmd);
    FILE *p = popen((char *)cmd.data, "r");
    pm_buf_free(&cmd);
    if (!p) return -1;
    char tmp[65536];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, p)) > 0) pm_buf_append(&out->raw, tmp, k);
    int st = pclose(p);
    if (st != 0) return -1;
    pm_buf_cstr(&out->raw);
    out->files = calloc(n ? n : 1, sizeof *out->files);
    char *s = (char *)out->raw.data, *end = s + out->raw.len;
    py_file *cur = NULL;
    size_t cap = 0;
    while (s && s < end) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        if (!strncmp(s, "== ", 3)) {
            if (out->n == n) break;
            cur = &out->files[out->n++];
            cur->path = s + 3;
            cur->count = -1;
            cap = 0;
        } else if (cur && !strncmp(s, "error ", 6)) {
            cur->error = s + 6;
        } else if (cur && !strncmp(s, "count ", 6)) {
            cur->count = atol(s + 6);
        } else if (cur && !strncmp(s, "codec ", 6)) {
            cur->codec = s + 6;
        } else if (cur) {
            if (cur->n_lines == cap) {
                cap = cap ? cap * 2 : 16;
                cur->lines = realloc(cur->lines, cap * sizeof *cur->lines);
            }
            cur->lines[cur->n_lines++] = s;
        }
        s = nl ? nl + 1 : NULL;
    }
    return 0;
}

static void py_dump_free(py_dump *d) {
    for (size_t i = 0; i < d->n; i++) free(d->files[i].lines);
    free(d->files);
    pm_buf_free(&d->raw);
}

static const py_file *py_find(const py_dump *d, const char *path) {
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->files[i].path, path)) return &d->files[i];
    return NULL;
}

/* _FILE_NAME of a manifest list / index manifest record, or of the _FILE
 * record of a manifest entry. */
static int file_name_of(const pm_avro_value *rec, const uint8_t **p, size_t *n) {
    if (rec->type != PM_AVRO_RECORD) return 0;
    int i = pm_avro_field_index(rec->schema, "_FILE_NAME");
    if (i >= 0 && rec->u.list.items[i].type == PM_AVRO_STRING) {
        *p = rec->u.list.items[i].u.bytes.ptr;
        *n = rec->u.list.items[i].u.bytes.len;
        return 1;
    }
    i = pm_avro_field_index(rec->schema, "_FILE");
    if (i >= 0) return file_name_of(&rec->u.list.items[i], p, n);
    return 0;
}

/* Decode every record; returns PAIMON_DONE on success or the error code. */
static int decode_all(const uint8_t *data, size_t len, const char *name, long *count, pm_err *e) {
    pm_avro_reader *r = NULL;
    *count = 0;
    int rc = pm_avro_reader_open(data, len, name, &r, e);
    if (rc) return rc;
    const pm_avro_value *v;
    while ((rc = pm_avro_reader_next(r, &v, e)) == PAIMON_OK) (*count)++;
    pm_avro_reader_close(r);
    return rc;
}

static int contains(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* ---- 1. fixtures ------------------------------------------------------------ */

static int is_manifest_name(const char *path) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return !strncmp(b, "manifest-", 9) || !strncmp(b, "index-manifest-", 15);
}

/* The file again with every odd-numbered field of its top-level record and
 * every even-numbered field of each nested record skipped: the kept fields
 * must print exactly what python3-avro printed for the whole record minus
 * the skipped ones, skipped fields come back as PM_AVRO_SKIPPED, and the
 * record count is the same (a wrong skip would misalign every later
 * record). Returns 1 if the file had a record schema to project. */
static void canon_projected(pm_buf *b, const pm_avro_schema *s, const pm_avro_value *v, int *skipped) {
    if (v->branch == PM_AVRO_SKIPPED) { (*skipped)++; pm_buf_append(b, "~", 1); return; }
    if (v->type != PM_AVRO_RECORD) { canon(b, v->schema ? v->schema : s, v); return; }
    const pm_avro_schema *rs = v->schema;
    pm_buf_putc(b, '{');
    for (size_t i = 0; i < v->u.list.n; i++) {
        if (i) pm_buf_putc(b, ',');
        put_hex(b, (const uint8_t *)rs->fields[i].name, strlen(rs->fields[i].name));
        pm_buf_putc(b, '=');
        canon_projected(b, rs->fields[i].type, &v->u.list.items[i], skipped);
    }
    pm_buf_putc(b, '}');
}

/* The python line with the fields at the skipped positions replaced by "~"
 * (the same walk over our full decode, which equals python's). */
static void canon_masked(pm_buf *b, const pm_avro_value *v, const pm_avro_schema *const *recs, const uint64_t *masks,
                         size_t nr) {
    if (v->type != PM_AVRO_RECORD) { canon(b, v->schema, v); return; }
    const pm_avro_schema *rs = v->schema;
    uint64_t mask = 0;
    for (size_t k = 0; k < nr; k++) if (recs[k] == rs) mask = masks[k];
    pm_buf_putc(b, '{');
    for (size_t i = 0; i < v->u.list.n; i++) {
        if (i) pm_buf_putc(b, ',');
        put_hex(b, (const uint8_t *)rs->fields[i].name, strlen(rs->fields[i].name));
        pm_buf_putc(b, '=');
        if (i < 64 && (mask >> i & 1)) pm_buf_append(b, "~", 1);
        else canon_masked(b, &v->u.list.items[i], recs, masks, nr);
    }
    pm_buf_putc(b, '}');
}

static void collect_records(const pm_avro_schema *s, const pm_avro_schema **v, size_t *n, int depth) {
    if (!s || depth > 6 || s->is_ref) return;
    if (s->type == PM_AVRO_RECORD) {
        for (size_t k = 0; k < *n; k++) if (v[k] == s) return;
        if (*n < PM_AVRO_SKIP_MAX) v[(*n)++] = s;
        for (size_t i = 0; i < s->n_fields; i++) collect_records(s->fields[i].type, v, n, depth + 1);
    } else if (s->type == PM_AVRO_UNION) {
        for (size_t i = 0; i < s->n_branches; i++) collect_records(s->branches[i], v, n, depth + 1);
    }
    /* records inside arrays and maps are left whole: canon() prints those */
}

/* A reader returning some blocks only, against a plain read: the records
 * of block i (0-based) for i % mod == rem come back from `mine` exactly, in
 * order, and then both end cleanly. *blocks: blocks of the file; *excluded:
 * some block with records was not expected from mine. Returns the records
 * compared. */
typedef struct block_count { long calls; int alternate; } block_count;
static int count_blocks(void *ud, const uint8_t *data, size_t len) {
    (void)data;
    (void)len;
    block_count *c = ud;
    return c->alternate ? (int)(c->calls++ % 2) : (c->calls++, 1);
}

static long compare_blocks(const pm_buf *b, const char *path, pm_avro_reader *mine, unsigned mod, unsigned rem,
                           long *blocks, int *excluded) {
    pm_err e = {0};
    pm_avro_reader *all = NULL;
    if (pm_avro_reader_open(b->data, b->len, path, &all, &e)) { CHECK(!"reopen failed"); return 0; }
    block_count ca = {0, 0};   /* pass-through: tells which block each record is in */
    pm_avro_reader_block_filter(all, count_blocks, &ca);
    const pm_avro_value *va, *vm;
    pm_buf want = {0}, got = {0};
    long compared = 0;
    int ra, ok = 1;
    while (ok && (ra = pm_avro_reader_next(all, &va, &e)) == PAIMON_OK) {
        if ((unsigned long)(ca.calls - 1) % mod != rem) { *excluded = 1; continue; }
        int rm = pm_avro_reader_next(mine, &vm, &e);
        CHECK_EQ_INT(rm, PAIMON_OK);
        if (rm) { fprintf(stderr, "  %s: read of some blocks: %s\n", path, e.msg); ok = 0; break; }
        want.len = got.len = 0;
        canon(&want, pm_avro_reader_schema(all), va);
        canon(&got, pm_avro_reader_schema(mine), vm);
        pm_buf_cstr(&want);
        pm_buf_cstr(&got);
        if (strcmp((char *)want.data, (char *)got.data)) { CHECK(!"record of some blocks differs"); ok = 0; }
        compared++;
    }
    if (ok) {
        CHECK_EQ_INT(ra, PAIMON_DONE);
        CHECK_EQ_INT(pm_avro_reader_next(mine, &vm, &e), PAIMON_DONE);
    }
    *blocks = ca.calls;
    pm_buf_free(&want);
    pm_buf_free(&got);
    pm_avro_reader_close(all);
    return compared;
}

/* Block filter: every other block refused (walked, not returned). 1 when
 * the file has a refused block with records (the check covered something). */
static int check_block_filter(const pm_buf *b, const char *path) {
    pm_err e = {0};
    pm_avro_reader *filt = NULL;
    if (pm_avro_reader_open(b->data, b->len, path, &filt, &e)) { CHECK(!"reopen failed"); return 0; }
    block_count cf = {0, 1};   /* refuses blocks 0, 2, 4, ... */
    pm_avro_reader_block_filter(filt, count_blocks, &cf);
    long blocks = 0;
    int excluded = 0;
    compare_blocks(b, path, filt, 2, 1, &blocks, &excluded);
    CHECK_EQ_INT(blocks, cf.calls);
    pm_avro_reader_close(filt);
    return excluded;
}

/* Block sharing: the readers of parts 0..parts-1 together return every
 * record once, each exactly those of its blocks, in order. */
static void check_block_share(const pm_buf *b, const char *path, unsigned parts) {
    long total = 0, blocks = 0;
    int excluded = 0;
    for (unsigned p = 0; p < parts; p++) {
        pm_err e = {0};
        pm_avro_reader *mine = NULL;
        if (pm_avro_reader_open(b->data, b->len, path, &mine, &e)) { CHECK(!"reopen failed"); return; }
        pm_avro_reader_block_share(mine, p, parts);
        total += compare_blocks(b, path, mine, parts, p, &blocks, &excluded);
        pm_avro_reader_close(mine);
    }
    long n = 0;
    pm_err e = {0};
    CHECK_EQ_INT(decode_all(b->data, b->len, path, &n, &e), PAIMON_DONE);
    CHECK_EQ_INT(total, n);
}

static int check_projection(const pm_buf *b, const char *path, const py_file *pf) {
    pm_err e = {0};
    pm_avro_reader *full = NULL, *proj = NULL;
    if (pm_avro_reader_open(b->data, b->len, path, &full, &e) || pm_avro_reader_open(b->data, b->len, path, &proj, &e)) {
        CHECK(!"reopen failed");
        pm_avro_reader_close(full);
        return 0;
    }
    const pm_avro_schema *top = pm_avro_unwrap_nullable(pm_avro_reader_schema(proj));
    /* the same records of both readers' (separately parsed) schemas, in the same order */
    const pm_avro_schema *recs[PM_AVRO_SKIP_MAX], *frecs[PM_AVRO_SKIP_MAX];
    uint64_t masks[PM_AVRO_SKIP_MAX];
    size_t nr = 0, nf = 0;
    collect_records(top, recs, &nr, 0);
    collect_records(pm_avro_unwrap_nullable(pm_avro_reader_schema(full)), frecs, &nf, 0);
    CHECK_EQ_INT(nr, nf);
    for (size_t k = 0; k < nr; k++) {
        masks[k] = recs[k] == top ? 0xAAAAAAAAAAAAAAAAull : 0x5555555555555555ull;   /* odd / even fields */
        CHECK_EQ_INT(pm_avro_reader_skip_fields(proj, recs[k], masks[k]), 0);
    }
    const pm_avro_value *fv, *pv;
    int rf, rp, skipped = 0;
    long cnt = 0;
    pm_buf want = {0}, got = {0};
    while ((rf = pm_avro_reader_next(full, &fv, &e)) == PAIMON_OK) {
        rp = pm_avro_reader_next(proj, &pv, &e);
        CHECK_EQ_INT(rp, PAIMON_OK);
        if (rp) { fprintf(stderr, "  %s: projected read failed: %s\n", path, e.msg); break; }
        want.len = got.len = 0;
        canon_masked(&want, fv, frecs, masks, nf < nr ? nf : nr);
        canon_projected(&got, pm_avro_reader_schema(proj), pv, &skipped);
        pm_buf_cstr(&want);
        pm_buf_cstr(&got);
        if (strcmp((char *)want.data, (char *)got.data)) {
            fprintf(stderr, "  %s record %ld projected differs:\n   want: %.300s\n   got:  %.300s\n", path, cnt,
                    (char *)want.data, (char *)got.data);
            CHECK(!"projected record differs");
            break;
        }
        cnt++;
    }
    if (rf == PAIMON_DONE) CHECK_EQ_INT(pm_avro_reader_next(proj, &pv, &e), PAIMON_DONE);
    CHECK_EQ_INT(cnt, pf->count);
    if (cnt > 0 && nr > 0 && top && top->type == PM_AVRO_RECORD && top->n_fields > 1) CHECK(skipped > 0);
    pm_buf_free(&want);
    pm_buf_free(&got);
    pm_avro_reader_close(full);
    pm_avro_reader_close(proj);
    return nr > 0;
}

TEST(test_fixtures_match_python) {
    char pat[3][1024];
    snprintf(pat[0], sizeof pat[0], "%s/paimon-java/*/*/*/manifest/*", fixtures_dir());
    snprintf(pat[1], sizeof pat[1], "%s/paimon-java-compat/paimon-cpp-avro-manifest/manifest/*", fixtures_dir());
    snprintf(pat[2], sizeof pat[2], "%s/paimon-java-compat/paimon-rust-spec-fixtures/manifest/*", fixtures_dir());
    char **paths = NULL;
    size_t n = 0, n_orc = 0;
    glob_t g[3];
    for (int k = 0; k < 3; k++) {
        memset(&g[k], 0, sizeof g[k]);
        glob(pat[k], 0, NULL, &g[k]);
        paths = realloc(paths, (n + g[k].gl_pathc + 1) * sizeof *paths);
        for (size_t i = 0; i < g[k].gl_pathc; i++) {
            char *p = g[k].gl_pathv[i];
            if (k == 0 && !is_manifest_name(p)) continue;
            if (k == 0 && strstr(p, "/cpp-parquet-append_10-orc-manifests/")) {
                /* ORC manifests: must fail cleanly as "not Avro". */
                pm_buf b = {0};
                pm_err e = {0};
                long cnt;
                CHECK(read_file(p, &b) == 0);
                int rc = decode_all(b.data, b.len, p, &cnt, &e);
                CHECK_EQ_INT(rc, PAIMON_CORRUPT);
                CHECK(contains(e.msg, "bad magic"));
                CHECK(contains(e.msg, p));
                pm_buf_free(&b);
                n_orc++;
                continue;
            }
            paths[n++] = p;
        }
    }
    CHECK(n >= 120);
    CHECK(n_orc >= 3);

    py_dump py;
    int prc = run_python(paths, n, &py);
    CHECK_EQ_INT(prc, 0);
    CHECK_EQ_INT(py.n, n);

    size_t total = 0, name_checks = 0, snappy_files = 0, union_files = 0, empty_files = 0, projected_files = 0,
           filtered_files = 0;
    for (size_t i = 0; i < n && prc == 0; i++) {
        const py_file *pf = py_find(&py, paths[i]);
        CHECK(pf != NULL);
        if (!pf) continue;
        if (pf->error) {
            fprintf(stderr, "  python could not read %s: %s\n", paths[i], pf->error);
            CHECK(pf->error == NULL);
            continue;
        }
        pm_buf b = {0};
        pm_err e = {0};
        CHECK(read_file(paths[i], &b) == 0);
        pm_avro_reader *r = NULL;
        int rc = pm_avro_reader_open(b.data, b.len, paths[i], &r, &e);
        CHECK_EQ_INT(rc, PAIMON_OK);
        if (rc) { fprintf(stderr, "  %s\n", e.msg); pm_buf_free(&b); continue; }
        CHECK_EQ_STR(pm_avro_reader_codec(r), pf->codec);
        if (!strcmp(pm_avro_reader_codec(r), "snappy")) snappy_files++;
        const pm_avro_schema *s = pm_avro_reader_schema(r);
        if (s->type == PM_AVRO_UNION) union_files++;
        const pm_avro_value *v;
        long cnt = 0;
        pm_buf line = {0};
        while ((rc = pm_avro_reader_next(r, &v, &e)) == PAIMON_OK) {
            CHECK(consistent(s, v));
            line.len = 0;
            canon(&line, s, v);
            pm_buf_cstr(&line);
            if ((size_t)cnt < pf->n_lines) {
                if (strcmp((char *)line.data, pf->lines[cnt])) {
                    fprintf(stderr, "  %s record %ld differs:\n   C:  %.300s\n   py: %.300s\n", paths[i], cnt,
                            (char *)line.data, pf->lines[cnt]);
                    CHECK(!"record differs from python");
                }
                const uint8_t *fp;
                size_t fl;
                if (file_name_of(v, &fp, &fl)) {
                    pm_buf needle = {0};
                    pm_buf_append(&needle, "5f46494c455f4e414d45=s", 22);   /* _FILE_NAME=s */
                    put_hex(&needle, fp, fl);
                    pm_buf_cstr(&needle);
                    CHECK(contains(pf->lines[cnt], (char *)needle.data));
                    pm_buf_free(&needle);
                    name_checks++;
                }
            }
            cnt++;
        }
        CHECK_EQ_INT(rc, PAIMON_DONE);
        if (rc != PAIMON_DONE) fprintf(stderr, "  %s\n", e.msg);
        CHECK_EQ_INT(cnt, pf->count);
        if (cnt == 0) empty_files++;
        total += (size_t)cnt;
        pm_buf_free(&line);
        pm_avro_reader_close(r);
        if (check_projection(&b, paths[i], pf)) projected_files++;
        if (check_block_filter(&b, paths[i])) filtered_files++;
        pm_buf_free(&b);
    }
    printf("# %zu fixture files, %zu records, %zu _FILE_NAME checks, %zu snappy, %zu union-schema, %zu empty\n",
           n, total, name_checks, snappy_files, union_files, empty_files);
    CHECK(name_checks > 100);
    CHECK(projected_files >= n - empty_files);
    printf("# %zu files re-read with every other field skipped (pm_avro_reader_skip_fields)\n", projected_files);
    printf("# %zu files re-read with every other block refused (pm_avro_reader_block_filter)\n", filtered_files);
    CHECK(filtered_files >= n - empty_files);
    CHECK(snappy_files >= 1);
    CHECK(union_files >= 1);
    CHECK(empty_files >= 1);
    py_dump_free(&py);
    for (int k = 0; k < 3; k++) globfree(&g[k]);
    free(paths);
}

TEST(test_reader_accessors) {
    char path[1024];
    snprintf(path, sizeof path, "%s/paimon-java-compat/paimon-cpp-avro-manifest/manifest/avro_manifest_09", fixtures_dir());
    pm_buf b = {0};
    pm_err e = {0};
    CHECK(read_file(path, &b) == 0);
    pm_avro_reader *r = NULL;
    CHECK_EQ_INT(pm_avro_reader_open(b.data, b.len, path, &r, &e), PAIMON_OK);
    if (!r) { pm_buf_free(&b); return; }
    size_t n = 0;
    const uint8_t *m = pm_avro_reader_meta(r, "avro.codec", &n);
    CHECK(m && n == 9 && !memcmp(m, "zstandard", 9));
    CHECK(pm_avro_reader_meta(r, "avro.schema", &n) != NULL && n > 100);
    CHECK(pm_avro_reader_meta(r, "nope", &n) == NULL);
    const pm_avro_schema *s = pm_avro_reader_schema(r);
    CHECK_EQ_INT(s->type, PM_AVRO_UNION);
    const pm_avro_schema *rec = pm_avro_unwrap_nullable(s);
    CHECK_EQ_INT(rec->type, PM_AVRO_RECORD);
    CHECK_EQ_STR(rec->name, "org.apache.paimon.avro.generated.record");
    CHECK_EQ_INT(pm_avro_field_index(s, "_VERSION"), 0);
    CHECK_EQ_INT(pm_avro_field_index(s, "_KIND"), 1);
    CHECK_EQ_INT(pm_avro_field_index(s, "nope"), -1);
    const pm_avro_value *v;
    CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_OK);
    CHECK_EQ_INT(v->type, PM_AVRO_RECORD);
    CHECK_EQ_INT(v->branch, 1);
    CHECK(v->schema == rec);
    CHECK_EQ_INT(v->u.list.items[0].type, PM_AVRO_INT);
    CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_DONE);
    CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_DONE);
    pm_avro_reader_close(r);
    pm_buf_free(&b);
    pm_avro_reader_close(NULL);
    pm_avro_writer_abort(NULL);
    pm_avro_schema_free(NULL);
}

/* ---- schemas ---------------------------------------------------------------- */

TEST(test_schema_parse) {
    pm_err e = {0};
    pm_avro_schema *s = NULL;
    const char *j = "{\"type\":\"record\",\"name\":\"Node\",\"namespace\":\"a.b\",\"fields\":["
                    "{\"name\":\"v\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
                    "{\"name\":\"next\",\"type\":[\"null\",\"Node\"]},"
                    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\",\"Y\"]}},"
                    "{\"name\":\"e2\",\"type\":\"a.b.E\"},"
                    "{\"name\":\"f\",\"type\":{\"type\":\"fixed\",\"name\":\"c.F\",\"size\":3}},"
                    "{\"name\":\"f2\",\"type\":\"c.F\"},"
                    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":{\"type\":\"array\",\"items\":\"E\"}}}]}";
    CHECK_EQ_INT(pm_avro_schema_parse(j, strlen(j), &s, &e), PAIMON_OK);
    if (!s) return;
    CHECK_EQ_STR(s->name, "a.b.Node");
    CHECK_EQ_INT(s->n_fields, 7);
    CHECK_EQ_STR(s->fields[0].type->logical_type, "timestamp-millis");
    const pm_avro_schema *nx = s->fields[1].type;
    CHECK_EQ_INT(nx->type, PM_AVRO_UNION);
    CHECK_EQ_INT(nx->branches[1]->type, PM_AVRO_RECORD);
    CHECK(nx->branches[1]->is_ref);
    CHECK_EQ_INT(nx->branches[1]->n_fields, 7);   /* recursive ref completed */
    CHECK(pm_avro_unwrap_nullable(nx) == nx->branches[1]);
    CHECK_EQ_STR(s->fields[2].type->name, "a.b.E");
    CHECK_EQ_INT(s->fields[3].type->type, PM_AVRO_ENUM);
    CHECK_EQ_INT(s->fields[3].type->n_symbols, 2);
    CHECK_EQ_STR(s->fields[4].type->name, "c.F");
    CHECK_EQ_INT(s->fields[5].type->fixed_size, 3);
    CHECK_EQ_INT(s->fields[6].type->items->items->type, PM_AVRO_ENUM);
    pm_avro_schema_free(s);

    /* Recursive data: a linked list decodes, and absurd nesting fails. */
    pm_avro_writer *w = NULL;
    const char *lj = "{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":\"v\",\"type\":\"int\"},"
                     "{\"name\":\"next\",\"type\":[\"null\",\"L\"]}]}";
    for (int depth = 10; depth <= 100000; depth *= 100) {
        CHECK_EQ_INT(pm_avro_writer_open(lj, "null", 0, &w, &e), PAIMON_OK);
        pm_buf *d = pm_avro_writer_datum_buf(w);
        for (int i = 0; i < depth; i++) { pm_avro_put_int(d, i); pm_avro_put_long(d, i + 1 < depth ? 1 : 0); }
        CHECK_EQ_INT(pm_avro_writer_end_datum(w, &e), PAIMON_OK);
        pm_buf f = {0};
        CHECK_EQ_INT(pm_avro_writer_finish(w, &f, &e), PAIMON_OK);
        long cnt;
        int rc = decode_all(f.data, f.len, "list.avro", &cnt, &e);
        if (depth == 10) CHECK_EQ_INT(rc, PAIMON_DONE);
        else { CHECK_EQ_INT(rc, PAIMON_CORRUPT); CHECK(contains(e.msg, "nested deeper")); }
        pm_buf_free(&f);
    }

    static const char *bad[] = {
        "", "{", "[]", "42", "{\"type\":\"nope\"}", "{\"name\":\"x\"}", "\"Unknown\"",
        "{\"type\":\"record\",\"name\":\"R\"}",
        "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\"}]}",
        "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"R2\"}]}",
        "{\"type\":\"array\"}", "{\"type\":\"map\",\"items\":\"int\"}",
        "{\"type\":\"fixed\",\"name\":\"F\",\"size\":-1}", "{\"type\":\"fixed\",\"name\":\"F\"}",
        "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[1]}",
        "[\"int\",[\"null\",\"int\"]]",
        "[{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[]},{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[]}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = NULL;
        int rc = pm_avro_schema_parse(bad[i], strlen(bad[i]), &s, &e);
        if (rc != PAIMON_CORRUPT) fprintf(stderr, "  schema %s accepted\n", bad[i]);
        CHECK_EQ_INT(rc, PAIMON_CORRUPT);
        CHECK(s == NULL);
    }
    /* Depth limit. */
    pm_buf deep = {0};
    for (int i = 0; i < 200; i++) pm_buf_printf(&deep, "{\"type\":\"array\",\"items\":");
    pm_buf_printf(&deep, "\"int\"");
    for (int i = 0; i < 200; i++) pm_buf_putc(&deep, '}');
    s = NULL;
    CHECK_EQ_INT(pm_avro_schema_parse((char *)deep.data, deep.len, &s, &e), PAIMON_CORRUPT);
    CHECK(contains(e.msg, "deeper"));
    pm_buf_free(&deep);
}

/* ---- 2. writer round trips -------------------------------------------------- */

static const char *ROW_SCHEMA =
    "{\"type\":\"record\",\"name\":\"Row\",\"namespace\":\"test.ns\",\"fields\":["
    "{\"name\":\"id\",\"type\":\"long\"},"
    "{\"name\":\"i\",\"type\":\"int\"},"
    "{\"name\":\"name\",\"type\":\"string\"},"
    "{\"name\":\"opt\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"ts\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
    "{\"name\":\"day\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"
    "{\"name\":\"dec\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":10,\"scale\":2}},"
    "{\"name\":\"flag\",\"type\":\"boolean\"},"
    "{\"name\":\"f\",\"type\":\"float\"},"
    "{\"name\":\"d\",\"type\":\"double\"},"
    "{\"name\":\"raw\",\"type\":\"bytes\"},"
    "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
    "{\"name\":\"nums\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"long\"]}},"
    "{\"name\":\"props\",\"type\":{\"type\":\"map\",\"values\":\"string\"}},"
    "{\"name\":\"color\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"RED\",\"GREEN\",\"BLUE\"]}},"
    "{\"name\":\"md5\",\"type\":{\"type\":\"fixed\",\"name\":\"Sig\",\"size\":4}},"
    "{\"name\":\"inner\",\"type\":{\"type\":\"record\",\"name\":\"Inner\",\"fields\":["
    "  {\"name\":\"a\",\"type\":\"int\"},{\"name\":\"b\",\"type\":[\"null\",\"long\"]},"
    "  {\"name\":\"c\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\"}]}]}},"
    "{\"name\":\"inner_opt\",\"type\":[\"null\",\"Inner\"]},"
    "{\"name\":\"color2\",\"type\":\"test.ns.Color\"},"
    "{\"name\":\"sig2\",\"type\":[\"Sig\",\"null\"]}"
    "]}";

static pm_avro_value V(pm_avro_type t) {
    pm_avro_value v;
    memset(&v, 0, sizeof v);
    v.type = t;
    v.branch = -1;
    return v;
}
static pm_avro_value VL(int64_t x) { pm_avro_value v = V(PM_AVRO_LONG); v.u.l = x; return v; }
static pm_avro_value VI(int32_t x) { pm_avro_value v = V(PM_AVRO_INT); v.u.i = x; return v; }
static pm_avro_value VS(pm_arena *a, const char *s) {
    pm_avro_value v = V(PM_AVRO_STRING);
    v.u.bytes.ptr = (const uint8_t *)pm_arena_strndup(a, s, strlen(s));
    v.u.bytes.len = strlen(s);
    return v;
}
static pm_avro_value VB(pm_arena *a, const uint8_t *p, size_t n, pm_avro_type t) {
    pm_avro_value v = V(t);
    uint8_t *c = pm_arena_alloc(a, n + 1);
    if (n) memcpy(c, p, n);
    v.u.bytes.ptr = c;
    v.u.bytes.len = n;
    return v;
}
static pm_avro_value BR(pm_avro_value v, int branch) { v.branch = branch; return v; }
static pm_avro_value *VA(pm_arena *a, size_t n) { return pm_arena_alloc(a, (n ? n : 1) * sizeof(pm_avro_value)); }

static pm_avro_value make_row(pm_arena *a, int i) {
    pm_avro_value *f = VA(a, 20);
    char s[128];
    f[0] = VL((int64_t)i * 1000003 - 500000000000LL + (i == 7 ? INT64_MAX / 2 : 0));
    f[1] = VI(i == 3 ? INT32_MIN : i == 4 ? INT32_MAX : i * 7919 - 100000);
    int k = snprintf(s, sizeof s, "name-%d-", i);
    for (int j = 0; j < i % 50; j++) s[k++] = (char)('a' + j % 26);
    s[k] = '\0';
    f[2] = VS(a, s);
    if (i % 3 == 0) f[3] = BR(V(PM_AVRO_NULL), 0);
    else { snprintf(s, sizeof s, "opt%d", i); f[3] = BR(VS(a, s), 1); }
    f[4] = VL(1700000000000LL + i);
    f[5] = VI(19000 + i);
    uint8_t dec[2] = {(uint8_t)(i >> 8), (uint8_t)i};
    f[6] = VB(a, dec, 2, PM_AVRO_BYTES);
    f[7] = V(PM_AVRO_BOOLEAN); f[7].u.boolean = i & 1;
    f[8] = V(PM_AVRO_FLOAT); f[8].u.f = (float)i * 0.37f - 3.0f;
    f[9] = V(PM_AVRO_DOUBLE); f[9].u.d = i / 3.0 - 1e300 * (i == 5);
    uint8_t raw[17];
    for (int j = 0; j < 17; j++) raw[j] = (uint8_t)(i * 31 + j * 7);
    f[10] = VB(a, raw, (size_t)(i % 17), PM_AVRO_BYTES);
    size_t nt = (size_t)(i % 4);
    f[11] = V(PM_AVRO_ARRAY);
    f[11].u.list.items = VA(a, nt);
    f[11].u.list.n = nt;
    for (size_t j = 0; j < nt; j++) { snprintf(s, sizeof s, "tag%zu", j); f[11].u.list.items[j] = VS(a, s); }
    size_t nn = (size_t)(i % 5);
    f[12] = V(PM_AVRO_ARRAY);
    f[12].u.list.items = VA(a, nn);
    f[12].u.list.n = nn;
    for (size_t j = 0; j < nn; j++)
        f[12].u.list.items[j] = j % 2 ? BR(VL((int64_t)j * i - 7), 1) : BR(V(PM_AVRO_NULL), 0);
    size_t np = (size_t)(i % 3);
    f[13] = V(PM_AVRO_MAP);
    f[13].u.map.keys = VA(a, np);
    f[13].u.map.values = VA(a, np);
    f[13].u.map.n = np;
    for (size_t j = 0; j < np; j++) {
        snprintf(s, sizeof s, "k%zu", j);
        f[13].u.map.keys[j] = VS(a, s);
        snprintf(s, sizeof s, "v%zu-%d", j, i);
        f[13].u.map.values[j] = VS(a, s);
    }
    f[14] = V(PM_AVRO_ENUM); f[14].u.i = i % 3;
    uint8_t sig[4] = {(uint8_t)i, (uint8_t)(i >> 8), 0xAB, 0xCD};
    f[15] = VB(a, sig, 4, PM_AVRO_FIXED);
    pm_avro_value *in = VA(a, 3);
    in[0] = VI(-i);
    in[1] = i % 2 ? BR(VL(i * 11LL), 1) : BR(V(PM_AVRO_NULL), 0);
    if (i % 4 == 0) in[2] = BR(V(PM_AVRO_NULL), 0);
    else {
        pm_avro_value arr = V(PM_AVRO_ARRAY);
        arr.u.list.n = (size_t)(i % 4);
        arr.u.list.items = VA(a, arr.u.list.n);
        for (size_t j = 0; j < arr.u.list.n; j++) arr.u.list.items[j] = VI((int32_t)j - i);
        in[2] = BR(arr, 1);
    }
    f[16] = V(PM_AVRO_RECORD);
    f[16].u.list.items = in;
    f[16].u.list.n = 3;
    if (i % 5 == 0) f[17] = BR(V(PM_AVRO_NULL), 0);
    else f[17] = BR(f[16], 1);
    f[18] = V(PM_AVRO_ENUM); f[18].u.i = (i + 1) % 3;
    f[19] = i % 2 ? BR(f[15], 0) : BR(V(PM_AVRO_NULL), 1);
    pm_avro_value row = V(PM_AVRO_RECORD);
    row.u.list.items = f;
    row.u.list.n = 20;
    return row;
}

static size_t count_occurrences(const uint8_t *h, size_t hn, const uint8_t *n, size_t nn) {
    size_t c = 0;
    for (size_t i = 0; i + nn <= hn; i++)
        if (!memcmp(h + i, n, nn)) c++;
    return c;
}

static void round_trip(const char *codec, int level, int nrec) {
    pm_err e = {0};
    pm_avro_schema *s = NULL;
    CHECK_EQ_INT(pm_avro_schema_parse(ROW_SCHEMA, strlen(ROW_SCHEMA), &s, &e), PAIMON_OK);
    if (!s) { fprintf(stderr, "  %s\n", e.msg); return; }
    pm_avro_writer *w = NULL;
    CHECK_EQ_INT(pm_avro_writer_open(ROW_SCHEMA, codec, level, &w, &e), PAIMON_OK);
    if (!w) { pm_avro_schema_free(s); return; }
    pm_arena *a = pm_arena_new(0);
    char **expect = calloc((size_t)nrec + 1, sizeof *expect);
    pm_buf line = {0};
    for (int i = 0; i < nrec; i++) {
        pm_arena_reset(a);
        pm_avro_value row = make_row(a, i);
        int rc = pm_avro_encode_value(pm_avro_writer_datum_buf(w), s, &row, &e);
        CHECK_EQ_INT(rc, PAIMON_OK);
        if (rc) { fprintf(stderr, "  encode: %s\n", e.msg); break; }
        CHECK_EQ_INT(pm_avro_writer_end_datum(w, &e), PAIMON_OK);
        line.len = 0;
        canon(&line, s, &row);
        pm_buf_cstr(&line);
        expect[i] = pm_strdup((char *)line.data);
    }
    pm_buf file = {0};
    CHECK_EQ_INT(pm_avro_writer_finish(w, &file, &e), PAIMON_OK);
    if (nrec > 2000) {   /* several blocks: the sync marker appears >= 4 times */
        size_t syncs = count_occurrences(file.data, file.len, file.data + file.len - 16, 16);
        CHECK(syncs >= 4);
    }

    /* Our reader. */
    pm_avro_reader *r = NULL;
    CHECK_EQ_INT(pm_avro_reader_open(file.data, file.len, "roundtrip.avro", &r, &e), PAIMON_OK);
    if (r) {
        CHECK_EQ_STR(pm_avro_reader_codec(r), codec);
        const pm_avro_value *v;
        int cnt = 0, rc;
        while ((rc = pm_avro_reader_next(r, &v, &e)) == PAIMON_OK) {
            line.len = 0;
            canon(&line, pm_avro_reader_schema(r), v);
            pm_buf_cstr(&line);
            if (cnt < nrec && strcmp((char *)line.data, expect[cnt])) {
                fprintf(stderr, "  %s record %d differs\n   got: %.200s\n   exp: %.200s\n", codec, cnt,
                        (char *)line.data, expect[cnt]);
                CHECK(!"round trip differs");
            }
            CHECK(consistent(pm_avro_reader_schema(r), v));
            cnt++;
        }
        CHECK_EQ_INT(rc, PAIMON_DONE);
        if (rc != PAIMON_DONE) fprintf(stderr, "  %s\n", e.msg);
        CHECK_EQ_INT(cnt, nrec);
        pm_avro_reader_close(r);
    }

    /* python3-avro. */
    char path[] = "/tmp/pm_avro_rt_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        CHECK(write_file(path, file.data, file.len) == 0);
        char *paths[1] = {path};
        py_dump py;
        CHECK_EQ_INT(run_python(paths, 1, &py), 0);
        CHECK_EQ_INT(py.n, 1);
        if (py.n == 1) {
            const py_file *pf = &py.files[0];
            if (pf->error) fprintf(stderr, "  python: %s\n", pf->error);
            CHECK(pf->error == NULL);
            CHECK_EQ_INT(pf->count, nrec);
            CHECK_EQ_STR(pf->codec, codec);
            size_t bad = 0;
            for (size_t i = 0; i < pf->n_lines && i < (size_t)nrec; i++)
                if (strcmp(pf->lines[i], expect[i])) {
                    if (!bad++) fprintf(stderr, "  python record %zu differs\n   py:  %.200s\n   exp: %.200s\n", i,
                                        pf->lines[i], expect[i]);
                }
            CHECK_EQ_INT(bad, 0);
        }
        py_dump_free(&py);
        unlink(path);
    }
    for (int i = 0; i < nrec; i++) free(expect[i]);
    free(expect);
    pm_buf_free(&line);
    pm_buf_free(&file);
    pm_arena_free(a);
    pm_avro_schema_free(s);
}

TEST(test_roundtrip_null) { round_trip("null", 0, 3000); }
TEST(test_roundtrip_deflate) { round_trip("deflate", 6, 3000); }
TEST(test_roundtrip_snappy) { round_trip("snappy", 0, 3000); }
TEST(test_roundtrip_zstandard) { round_trip("zstandard", 1, 3000); }
TEST(test_roundtrip_zstandard_small) { round_trip("zstandard", 3, 5); }
TEST(test_roundtrip_empty) { round_trip("zstandard", 1, 0); }

TEST(test_reencode_identical) {
    /* Decode a real manifest and re-encode every record: identical bytes. */
    char path[1024];
    snprintf(path, sizeof path, "%s/paimon-java-compat/paimon-cpp-avro-manifest/manifest/manifest", fixtures_dir());
    pm_buf b = {0};
    pm_err e = {0};
    CHECK(read_file(path, &b) == 0);
    pm_avro_reader *r = NULL;
    CHECK_EQ_INT(pm_avro_reader_open(b.data, b.len, path, &r, &e), PAIMON_OK);
    if (!r) { pm_buf_free(&b); return; }
    size_t sl;
    const uint8_t *sj = pm_avro_reader_meta(r, "avro.schema", &sl);
    char *schema = pm_strndup((const char *)sj, sl);
    pm_avro_writer *w = NULL;
    CHECK_EQ_INT(pm_avro_writer_open(schema, "null", 0, &w, &e), PAIMON_OK);
    const pm_avro_value *v;
    int n = 0;
    while (pm_avro_reader_next(r, &v, &e) == PAIMON_OK) {
        CHECK_EQ_INT(pm_avro_encode_value(pm_avro_writer_datum_buf(w), pm_avro_reader_schema(r), v, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_avro_writer_end_datum(w, &e), PAIMON_OK);
        n++;
    }
    CHECK_EQ_INT(n, 30);
    pm_buf out = {0};
    CHECK_EQ_INT(pm_avro_writer_finish(w, &out, &e), PAIMON_OK);
    pm_avro_reader_close(r);
    r = NULL;
    CHECK_EQ_INT(pm_avro_reader_open(out.data, out.len, "reencoded", &r, &e), PAIMON_OK);
    CHECK_EQ_STR(pm_avro_reader_codec(r), "null");
    pm_avro_reader_close(r);
    /* With the null codec the last block's payload (just before the final
     * sync) is the raw datum bytes; the original single zstd block,
     * decompressed by libzstd directly, must be identical. */
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    uint8_t *plain = malloc(1 << 20);
    const uint8_t *sync = b.data + b.len - 16;
    size_t hdr = 0;
    for (size_t i = 4; i + 16 <= b.len; i++)
        if (!memcmp(b.data + i, sync, 16)) { hdr = i + 16; break; }
    CHECK(hdr > 0);
    const uint8_t *p = b.data + hdr;
    int64_t cnt = 0, size = 0;
    /* two small varints */
    uint64_t u = 0; int sh = 0;
    while (*p & 0x80) { u |= (uint64_t)(*p++ & 0x7f) << sh; sh += 7; }
    u |= (uint64_t)*p++ << sh; cnt = (int64_t)(u >> 1);
    u = 0; sh = 0;
    while (*p & 0x80) { u |= (uint64_t)(*p++ & 0x7f) << sh; sh += 7; }
    u |= (uint64_t)*p++ << sh; size = (int64_t)(u >> 1);
    CHECK_EQ_INT(cnt, 30);
    ZSTD_inBuffer in = {p, (size_t)size, 0};
    ZSTD_outBuffer ob = {plain, 1 << 20, 0};
    size_t zr = ZSTD_decompressStream(dctx, &ob, &in);
    CHECK(!ZSTD_isError(zr) && zr == 0);
    CHECK(ob.pos > 0 && out.len > ob.pos + 16);
    if (out.len > ob.pos + 16)
        CHECK(!memcmp(out.data + out.len - 16 - ob.pos, plain, ob.pos));
    ZSTD_freeDCtx(dctx);
    free(plain);
    free(schema);
    pm_buf_free(&out);
    pm_buf_free(&b);
}

TEST(test_encode_errors) {
    pm_err e = {0};
    pm_avro_schema *s = NULL;
    const char *j = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":[\"null\",\"int\"]},"
                    "{\"name\":\"b\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}}]}";
    CHECK_EQ_INT(pm_avro_schema_parse(j, strlen(j), &s, &e), PAIMON_OK);
    if (!s) return;
    pm_avro_value f[2] = {VI(5), V(PM_AVRO_ENUM)};
    pm_avro_value rec = V(PM_AVRO_RECORD);
    rec.u.list.items = f;
    rec.u.list.n = 2;
    pm_buf b = {0};
    CHECK_EQ_INT(pm_avro_encode_value(&b, s, &rec, &e), PAIMON_MISUSE);   /* branch -1 */
    CHECK_EQ_INT(b.len, 0);
    f[0].branch = 0;
    CHECK_EQ_INT(pm_avro_encode_value(&b, s, &rec, &e), PAIMON_MISUSE);   /* int in null branch */
    f[0].branch = 1;
    CHECK_EQ_INT(pm_avro_encode_value(&b, s, &rec, &e), PAIMON_OK);
    CHECK_EQ_INT(b.len, 3);
    f[1].u.i = 1;
    CHECK_EQ_INT(pm_avro_encode_value(&b, s, &rec, &e), PAIMON_MISUSE);   /* enum range */
    CHECK_EQ_INT(b.len, 3);
    rec.u.list.n = 1;
    CHECK_EQ_INT(pm_avro_encode_value(&b, s, &rec, &e), PAIMON_MISUSE);
    pm_buf_free(&b);
    /* primitives */
    pm_avro_put_long(&b, 0); pm_avro_put_long(&b, -1); pm_avro_put_long(&b, 1);
    pm_avro_put_long(&b, INT64_MIN); pm_avro_put_long(&b, INT64_MAX);
    static const uint8_t want[] = {0, 1, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
                                   0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK_EQ_INT(b.len, sizeof want);
    CHECK(b.len == sizeof want && !memcmp(b.data, want, sizeof want));
    pm_buf_free(&b);
    pm_avro_schema_free(s);
    pm_avro_writer *w = NULL;
    CHECK_EQ_INT(pm_avro_writer_open("\"long\"", "lz4", 1, &w, &e), PAIMON_UNSUPPORTED);
    CHECK(contains(e.msg, "lz4"));
    CHECK_EQ_INT(pm_avro_writer_open("{bad", "null", 1, &w, &e), PAIMON_MISUSE);
    CHECK(w == NULL);
}

/* ---- 3. corruption ------------------------------------------------------------ */

static const uint8_t SYNC[16] = "0123456789abcdef";

static void hdr(pm_buf *f, const char *schema, const char *codec) {
    pm_buf_append(f, "Obj\x01", 4);
    pm_avro_put_long(f, codec ? 2 : 1);
    if (schema) { pm_avro_put_string(f, "avro.schema"); pm_avro_put_string(f, schema); }
    else { pm_avro_put_string(f, "other"); pm_avro_put_string(f, "x"); }
    if (codec) { pm_avro_put_string(f, "avro.codec"); pm_avro_put_string(f, codec); }
    pm_avro_put_long(f, 0);
    pm_buf_append(f, SYNC, 16);
}

static void blk(pm_buf *f, int64_t count, const void *data, size_t n) {
    pm_avro_put_long(f, count);
    pm_avro_put_long(f, (int64_t)n);
    pm_buf_append(f, data, n);
    pm_buf_append(f, SYNC, 16);
}

/* Expect an error with `code` whose message names the file and contains
 * `needle` (if not NULL). */
static void expect_err(const pm_buf *f, int code, const char *needle, const char *what) {
    pm_err e = {0};
    long cnt;
    int rc = decode_all(f->data, f->len, "dir/bad-file-0", &cnt, &e);
    if (rc != code || !contains(e.msg, "dir/bad-file-0") || (needle && !contains(e.msg, needle)))
        fprintf(stderr, "  case %s: rc=%d msg=%s\n", what, rc, e.msg);
    CHECK_EQ_INT(rc, code);
    CHECK(contains(e.msg, "dir/bad-file-0"));
    if (needle) CHECK(contains(e.msg, needle));
}

/* decode_all with field mask `skip` on the top-level record. */
static int decode_skipping_named(const uint8_t *data, size_t len, const char *name, uint64_t skip, long *count,
                                 pm_err *e) {
    pm_avro_reader *r;
    *count = 0;
    int rc = pm_avro_reader_open(data, len, name, &r, e);
    if (rc) return rc;
    const pm_avro_schema *top = pm_avro_unwrap_nullable(pm_avro_reader_schema(r));
    if (pm_avro_reader_skip_fields(r, top, skip)) { pm_avro_reader_close(r); return -1; }
    const pm_avro_value *v;
    while ((rc = pm_avro_reader_next(r, &v, e)) == PAIMON_OK) (*count)++;
    pm_avro_reader_close(r);
    return rc;
}

static int decode_skipping(const pm_buf *f, uint64_t skip, long *count, pm_err *e) {
    return decode_skipping_named(f->data, f->len, "dir/bad-file-0", skip, count, e);
}

/* A skipped field is walked with the decoder's checks: corrupt data in it
 * fails the same way (never read past the block, never loop on a huge
 * count of empty items), and a valid one leaves the next field intact. */
TEST(test_skipped_fields_are_checked) {
    const char *rs = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
                     "{\"name\":\"s\",\"type\":\"string\"},"
                     "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"null\"}},"
                     "{\"name\":\"u\",\"type\":[\"null\",\"long\"]},"
                     "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\"}},"
                     "{\"name\":\"k\",\"type\":\"long\"}]}";
    pm_buf f = {0}, d = {0};
    pm_err e = {0};
    long cnt;
    /* valid: "abc", [null x3], 7, {"x": 1.0}, 42 */
    pm_avro_put_string(&d, "abc");
    pm_avro_put_long(&d, 3); pm_avro_put_long(&d, 0);
    pm_avro_put_long(&d, 1); pm_avro_put_long(&d, 7);
    pm_avro_put_long(&d, 1); pm_avro_put_string(&d, "x"); pm_avro_put_double(&d, 1.0); pm_avro_put_long(&d, 0);
    pm_avro_put_long(&d, 42);
    hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len);
    {
        pm_avro_reader *r;
        CHECK_EQ_INT(pm_avro_reader_open(f.data, f.len, "ok", &r, &e), PAIMON_OK);
        if (!r) { fprintf(stderr, "  %s\n", e.msg); return; }
        CHECK_EQ_INT(pm_avro_reader_skip_fields(r, pm_avro_reader_schema(r), 0xF), 0);   /* all but k */
        const pm_avro_value *v;
        CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_OK);
        for (int i = 0; i < 4; i++) CHECK_EQ_INT(v->u.list.items[i].branch, PM_AVRO_SKIPPED);
        CHECK_EQ_INT(v->u.list.items[4].type, PM_AVRO_LONG);
        CHECK_EQ_INT(v->u.list.items[4].u.l, 42);
        CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_DONE);
        /* not a record of this reader's schema: refused */
        CHECK_EQ_INT(pm_avro_reader_skip_fields(r, pm_avro_reader_schema(r)->fields[0].type, 1), -1);
        pm_avro_reader_close(r);
    }
    /* string length past the block, inside the skipped field s */
    d.len = 0; pm_avro_put_long(&d, 1000); pm_buf_append(&d, "abc", 3);
    f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len);
    CHECK_EQ_INT(decode_skipping(&f, 0xF, &cnt, &e), PAIMON_CORRUPT);
    CHECK(contains(e.msg, "string length 1000 exceeds remaining") && contains(e.msg, "dir/bad-file-0"));
    /* 2^40 nulls in the skipped array a: refused, not walked */
    d.len = 0; pm_avro_put_string(&d, "abc"); pm_avro_put_long(&d, (int64_t)1 << 40); pm_avro_put_long(&d, 0);
    f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len);
    CHECK_EQ_INT(decode_skipping(&f, 0xF, &cnt, &e), PAIMON_CORRUPT);
    CHECK(contains(e.msg, "exceeds the limit"));
    /* union branch out of range in the skipped field u */
    d.len = 0; pm_avro_put_string(&d, "abc"); pm_avro_put_long(&d, 0); pm_avro_put_long(&d, 5);
    f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len);
    CHECK_EQ_INT(decode_skipping(&f, 0xF, &cnt, &e), PAIMON_CORRUPT);
    CHECK(contains(e.msg, "union branch 5 out of range"));
    /* a map entry cut short in the skipped map m (key, then 2 of a double's 8 bytes) */
    d.len = 0; pm_avro_put_string(&d, "abc"); pm_avro_put_long(&d, 0); pm_avro_put_long(&d, 0);
    pm_avro_put_long(&d, 1); pm_avro_put_string(&d, "x"); pm_buf_append(&d, "\x01\x02", 2);
    f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len);
    CHECK_EQ_INT(decode_skipping(&f, 0xF, &cnt, &e), PAIMON_CORRUPT);
    CHECK(contains(e.msg, "map block count 1 too large"));
    /* the same bytes decoded whole fail alike */
    CHECK_EQ_INT(decode_skipping(&f, 0, &cnt, &e), PAIMON_CORRUPT);
    CHECK(contains(e.msg, "map block count 1 too large"));
    pm_buf_free(&f);
    pm_buf_free(&d);
}

TEST(test_corrupt_files) {
    const char *rs = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"s\",\"type\":\"string\"},"
                     "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"long\"}}]}";
    pm_buf f = {0};
    uint8_t rec[] = {6, 'a', 'b', 'c', 2, 4, 0};   /* "abc", [2] */

    /* a valid baseline */
    hdr(&f, rs, "null"); blk(&f, 1, rec, sizeof rec); blk(&f, 1, rec, sizeof rec);
    { pm_err e = {0}; long c; CHECK_EQ_INT(decode_all(f.data, f.len, "ok", &c, &e), PAIMON_DONE); CHECK_EQ_INT(c, 2); }
    pm_buf good = {0};
    pm_buf_append(&good, f.data, f.len);

    /* bad magic */
    f.data[0] = 'X';
    expect_err(&f, PAIMON_CORRUPT, "not an Avro object container file (bad magic)", "magic");
    f.len = 3;
    expect_err(&f, PAIMON_CORRUPT, "bad magic", "short");
    f.len = 0;
    expect_err(&f, PAIMON_CORRUPT, "bad magic", "empty");
    /* truncated header (every length inside the header) */
    size_t hlen = 0;
    { pm_buf h = {0}; hdr(&h, rs, "null"); hlen = h.len; pm_buf_free(&h); }
    for (size_t n = 4; n < hlen; n++) {
        pm_buf t = {0};
        pm_buf_append(&t, good.data, n);
        expect_err(&t, PAIMON_CORRUPT, "truncated header", "truncated header");
        pm_buf_free(&t);
    }
    /* truncated block (every length past the header, except whole blocks) */
    size_t blen = (good.len - hlen) / 2;
    for (size_t n = hlen + 1; n < good.len; n++) {
        if (n == hlen + blen) continue;
        pm_buf t = {0};
        pm_buf_append(&t, good.data, n);
        expect_err(&t, PAIMON_CORRUPT, NULL, "truncated block");
        pm_buf_free(&t);
    }
    /* wrong sync */
    f.len = 0; pm_buf_append(&f, good.data, good.len);
    f.data[f.len - 1] ^= 1;
    expect_err(&f, PAIMON_CORRUPT, "sync marker mismatch after block 2", "sync");
    /* block byte size past EOF */
    f.len = 0; hdr(&f, rs, "null");
    pm_avro_put_long(&f, 1); pm_avro_put_long(&f, 999999); pm_buf_append(&f, rec, sizeof rec);
    expect_err(&f, PAIMON_CORRUPT, "block 1: byte size 999999 past end of file", "size past eof");
    /* negative block count / size */
    f.len = 0; hdr(&f, rs, "null");
    pm_avro_put_long(&f, -1); pm_avro_put_long(&f, 7); pm_buf_append(&f, rec, sizeof rec); pm_buf_append(&f, SYNC, 16);
    expect_err(&f, PAIMON_CORRUPT, "negative object count", "neg count");
    f.len = 0; hdr(&f, rs, "null");
    pm_avro_put_long(&f, 1); pm_avro_put_long(&f, -7); pm_buf_append(&f, rec, sizeof rec); pm_buf_append(&f, SYNC, 16);
    expect_err(&f, PAIMON_CORRUPT, "negative byte size", "neg size");
    /* huge block count */
    f.len = 0; hdr(&f, rs, "null"); blk(&f, (int64_t)1 << 60, rec, sizeof rec);
    expect_err(&f, PAIMON_CORRUPT, "exceeds block size", "huge block count");
    /* negative string length */
    { uint8_t d[] = {9, 'a', 'b', 'c', 0}; f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d, sizeof d);
      expect_err(&f, PAIMON_CORRUPT, "string length -5", "neg string"); }
    /* huge string length 2^62 */
    { pm_buf d = {0}; pm_avro_put_long(&d, (int64_t)1 << 62); pm_buf_append(&d, "abc", 3); pm_avro_put_long(&d, 0);
      f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      expect_err(&f, PAIMON_CORRUPT, "exceeds remaining", "huge string"); }
    /* huge array count 2^60, positive and negative (with byte size) */
    { pm_buf d = {0}; pm_avro_put_string(&d, "x"); pm_avro_put_long(&d, (int64_t)1 << 60); pm_avro_put_long(&d, 2);
      pm_avro_put_long(&d, 0);
      f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      expect_err(&f, PAIMON_CORRUPT, "array block count", "huge array"); }
    { pm_buf d = {0}; pm_avro_put_string(&d, "x"); pm_avro_put_long(&d, -((int64_t)1 << 60)); pm_avro_put_long(&d, 1);
      pm_avro_put_long(&d, 2); pm_avro_put_long(&d, 0);
      f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      expect_err(&f, PAIMON_CORRUPT, "array block count", "huge neg array"); }
    { pm_buf d = {0}; pm_avro_put_string(&d, "x"); pm_avro_put_long(&d, -1); pm_avro_put_long(&d, 1000);
      pm_avro_put_long(&d, 2); pm_avro_put_long(&d, 0);
      f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      expect_err(&f, PAIMON_CORRUPT, "byte size 1000", "array byte size"); }
    { pm_buf d = {0}; pm_avro_put_string(&d, "x"); pm_avro_put_long(&d, INT64_MIN);
      f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      expect_err(&f, PAIMON_CORRUPT, "array", "INT64_MIN array"); }
    /* array of nulls with a huge count is bounded */
    { const char *ns = "{\"type\":\"array\",\"items\":\"null\"}";
      pm_buf d = {0}; pm_avro_put_long(&d, (int64_t)1 << 40); pm_avro_put_long(&d, 0);
      f.len = 0; hdr(&f, ns, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      expect_err(&f, PAIMON_CORRUPT, "array block count", "null array");
      d.len = 0; pm_avro_put_long(&d, 1000); pm_avro_put_long(&d, 0);
      f.len = 0; hdr(&f, ns, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      pm_err e = {0}; long c; CHECK_EQ_INT(decode_all(f.data, f.len, "nulls", &c, &e), PAIMON_DONE); }
    /* nested arrays of nulls cannot blow up memory */
    { const char *ns = "{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":\"null\"}}";
      pm_buf d = {0}; pm_avro_put_long(&d, 1000);
      for (int i = 0; i < 1000; i++) { pm_avro_put_long(&d, 1000000); pm_avro_put_long(&d, 0); }
      pm_avro_put_long(&d, 0);
      f.len = 0; hdr(&f, ns, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      expect_err(&f, PAIMON_CORRUPT, "values", "nested null arrays"); }
    /* top-level schema that encodes in zero bytes: record count bounded */
    { f.len = 0; hdr(&f, "\"null\"", "null");
      for (int i = 0; i < 20; i++) blk(&f, 1000000, "", 0);
      expect_err(&f, PAIMON_CORRUPT, "too many empty records", "empty records"); }
    /* varint too long */
    { uint8_t d[12]; memset(d, 0xff, 11); d[11] = 0;
      f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d, sizeof d);
      expect_err(&f, PAIMON_CORRUPT, "varint longer than 10 bytes", "varint"); }
    { uint8_t d[12]; memset(d, 0xff, 11); d[11] = 0;
      f.len = 0; hdr(&f, rs, "null"); pm_buf_append(&f, d, 12); pm_avro_put_long(&f, 0); pm_buf_append(&f, SYNC, 16);
      expect_err(&f, PAIMON_CORRUPT, "block 1: truncated block header", "block varint"); }
    /* int out of range, bad enum, bad union branch, bad boolean */
    { const char *is = "\"int\""; pm_buf d = {0}; pm_avro_put_long(&d, (int64_t)1 << 40);
      f.len = 0; hdr(&f, is, "null"); blk(&f, 1, d.data, d.len); pm_buf_free(&d);
      expect_err(&f, PAIMON_CORRUPT, "out of range", "int range"); }
    { const char *es = "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}"; uint8_t d[] = {4};
      f.len = 0; hdr(&f, es, "null"); blk(&f, 1, d, 1);
      expect_err(&f, PAIMON_CORRUPT, "enum index 2", "enum"); }
    { const char *us = "[\"null\",\"int\"]"; uint8_t d[] = {4};
      f.len = 0; hdr(&f, us, "null"); blk(&f, 1, d, 1);
      expect_err(&f, PAIMON_CORRUPT, "union branch 2", "union"); }
    { uint8_t d[] = {3};
      f.len = 0; hdr(&f, "[\"null\",\"int\"]", "null"); blk(&f, 1, d, 1);
      expect_err(&f, PAIMON_CORRUPT, "union branch -2", "neg union"); }
    { uint8_t d[] = {2};
      f.len = 0; hdr(&f, "\"boolean\"", "null"); blk(&f, 1, d, 1);
      expect_err(&f, PAIMON_CORRUPT, "boolean", "bool"); }
    /* trailing bytes in a block */
    { uint8_t d[] = {6, 'a', 'b', 'c', 0, 0};
      f.len = 0; hdr(&f, rs, "null"); blk(&f, 1, d, sizeof d);
      expect_err(&f, PAIMON_CORRUPT, "1 trailing bytes", "trailing"); }
    /* codecs */
    { uint8_t junk[] = {0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4, 5, 6, 7, 8};
      f.len = 0; hdr(&f, rs, "zstandard"); blk(&f, 1, junk, sizeof junk);
      expect_err(&f, PAIMON_CORRUPT, "block 1 (zstandard): bad zstandard data", "zstd junk");
      f.len = 0; hdr(&f, rs, "zstandard"); blk(&f, 1, junk, 4);
      expect_err(&f, PAIMON_CORRUPT, "zstandard", "zstd truncated");
      f.len = 0; hdr(&f, rs, "zstandard"); blk(&f, 1, "abcdefgh", 8);
      expect_err(&f, PAIMON_CORRUPT, "bad zstandard data", "zstd no magic");
      f.len = 0; hdr(&f, rs, "deflate"); blk(&f, 1, "\xff\xff\xff\xff", 4);
      expect_err(&f, PAIMON_CORRUPT, "deflate", "deflate junk");
      f.len = 0; hdr(&f, rs, "snappy"); blk(&f, 1, "\xff\xff\xff\xff\xff\x0f\x01\x02\x03\x04", 10);
      expect_err(&f, PAIMON_CORRUPT, "snappy", "snappy junk");
      f.len = 0; hdr(&f, rs, "snappy"); blk(&f, 1, "ab", 2);
      expect_err(&f, PAIMON_CORRUPT, "snappy", "snappy short"); }
    /* snappy length header claiming ~1 GiB from a few bytes */
    { f.len = 0; hdr(&f, rs, "snappy"); blk(&f, 1, "\xff\xff\xff\xff\x03\x00\x01\x02\x03\x04", 10);
      expect_err(&f, PAIMON_CORRUPT, "snappy block claims", "snappy bomb"); }
    /* truncated zstd / deflate streams from a real writer */
    static const char *const codecs[] = {"zstandard", "deflate", "snappy"};
    for (int c = 0; c < 3; c++) {
        pm_err e = {0};
        pm_avro_writer *w = NULL;
        CHECK_EQ_INT(pm_avro_writer_open(rs, codecs[c], 1, &w, &e), PAIMON_OK);
        for (int i = 0; i < 200; i++) {
            pm_buf_append(pm_avro_writer_datum_buf(w), rec, sizeof rec);
            pm_avro_writer_end_datum(w, &e);
        }
        pm_buf out = {0};
        CHECK_EQ_INT(pm_avro_writer_finish(w, &out, &e), PAIMON_OK);
        long cnt;
        CHECK_EQ_INT(decode_all(out.data, out.len, "w", &cnt, &e), PAIMON_DONE);
        CHECK_EQ_INT(cnt, 200);
        /* Rewrite the block with its payload cut short by 2 bytes. */
        const uint8_t *sync = out.data + out.len - 16;
        size_t h = 0;
        for (size_t i = 4; i + 16 <= out.len; i++) if (!memcmp(out.data + i, sync, 16)) { h = i + 16; break; }
        const uint8_t *p = out.data + h;
        int64_t n1 = 0, n2 = 0; uint64_t u = 0; int sh = 0;
        while (*p & 0x80) { u |= (uint64_t)(*p++ & 0x7f) << sh; sh += 7; } u |= (uint64_t)*p++ << sh; n1 = (int64_t)(u >> 1);
        u = 0; sh = 0;
        while (*p & 0x80) { u |= (uint64_t)(*p++ & 0x7f) << sh; sh += 7; } u |= (uint64_t)*p++ << sh; n2 = (int64_t)(u >> 1);
        pm_buf t = {0};
        pm_buf_append(&t, out.data, h);
        pm_avro_put_long(&t, n1);
        if (c == 2) {   /* snappy: flip a CRC byte instead */
            pm_avro_put_long(&t, n2);
            pm_buf_append(&t, p, (size_t)n2);
            t.data[t.len - 1] ^= 0x55;
        } else {
            pm_avro_put_long(&t, n2 - 2);
            pm_buf_append(&t, p, (size_t)n2 - 2);
        }
        pm_buf_append(&t, sync, 16);
        expect_err(&t, PAIMON_CORRUPT, c == 2 ? "snappy CRC-32 mismatch" : "truncated", codecs[c]);
        pm_buf_free(&t);
        pm_buf_free(&out);
    }
    /* metadata problems */
    f.len = 0; hdr(&f, "{not json", "null");
    expect_err(&f, PAIMON_CORRUPT, "invalid avro.schema: invalid schema JSON", "bad json");
    f.len = 0; hdr(&f, "{\"type\":\"wat\"}", "null");
    expect_err(&f, PAIMON_CORRUPT, "unknown type 'wat'", "bad schema");
    f.len = 0; hdr(&f, NULL, "null");
    expect_err(&f, PAIMON_CORRUPT, "metadata has no avro.schema", "no schema");
    f.len = 0; hdr(&f, rs, "xz");
    expect_err(&f, PAIMON_UNSUPPORTED, "unsupported Avro codec 'xz'", "xz");
    f.len = 0; hdr(&f, rs, "bzip2");
    expect_err(&f, PAIMON_UNSUPPORTED, "bzip2", "bzip2");
    f.len = 0; pm_buf_append(&f, "Obj\x01", 4); pm_avro_put_long(&f, (int64_t)1 << 60);
    expect_err(&f, PAIMON_CORRUPT, "metadata count", "meta count");
    f.len = 0; pm_buf_append(&f, "Obj\x01", 4); pm_avro_put_long(&f, 1); pm_avro_put_long(&f, (int64_t)1 << 61);
    expect_err(&f, PAIMON_CORRUPT, "key length", "meta key");
    f.len = 0; pm_buf_append(&f, "Obj\x01", 4); pm_avro_put_long(&f, -1); pm_avro_put_long(&f, 5);
    pm_avro_put_string(&f, "avro.schema"); pm_avro_put_string(&f, "\"int\""); pm_avro_put_long(&f, 0);
    pm_buf_append(&f, SYNC, 16); blk(&f, 1, "\x02", 1);
    { pm_err e = {0}; long c; CHECK_EQ_INT(decode_all(f.data, f.len, "negmeta", &c, &e), PAIMON_DONE); CHECK_EQ_INT(c, 1); }
    /* absent avro.codec means null */
    f.len = 0; pm_buf_append(&f, "Obj\x01", 4); pm_avro_put_long(&f, 1);
    pm_avro_put_string(&f, "avro.schema"); pm_avro_put_string(&f, "\"long\""); pm_avro_put_long(&f, 0);
    pm_buf_append(&f, SYNC, 16); blk(&f, 2, "\x02\x03", 2);
    { pm_err e = {0}; pm_avro_reader *r = NULL;
      CHECK_EQ_INT(pm_avro_reader_open(f.data, f.len, "nocodec", &r, &e), PAIMON_OK);
      if (r) {
          CHECK_EQ_STR(pm_avro_reader_codec(r), "null");
          const pm_avro_value *v;
          CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_OK);
          CHECK_EQ_INT(v->u.l, 1);
          CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_OK);
          CHECK_EQ_INT(v->u.l, -2);
          CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_DONE);
          pm_avro_reader_close(r);
      } }
    pm_buf_free(&good);
    pm_buf_free(&f);
}

TEST(test_decompress_limit) {
    /* 1 MiB of zeros compresses to almost nothing; a 100000-byte limit
     * must stop every codec without producing more. */
    size_t n = 1 << 20;
    uint8_t *zeros = calloc(1, n);
    static const int ids[] = {PM_AVRO_CODEC_NULL, PM_AVRO_CODEC_DEFLATE, PM_AVRO_CODEC_SNAPPY, PM_AVRO_CODEC_ZSTD};
    for (int i = 0; i < 4; i++) {
        pm_avro_codec_ctx c = {0};
        pm_err e = {0};
        pm_buf z = {0}, out = {0};
        CHECK_EQ_INT(pm_avro_compress(&c, ids[i], 1, zeros, n, &z, &e), PAIMON_OK);
        if (ids[i] != PM_AVRO_CODEC_NULL) CHECK(z.len < n / 10);
        CHECK_EQ_INT(pm_avro_decompress(&c, ids[i], z.data, z.len, n, &out, &e), PAIMON_OK);
        CHECK_EQ_INT(out.len, n);
        CHECK(out.len == n && !memcmp(out.data, zeros, n));
        int rc = pm_avro_decompress(&c, ids[i], z.data, z.len, 100000, &out, &e);
        CHECK_EQ_INT(rc, PAIMON_CORRUPT);
        CHECK(out.len <= 100000);
        pm_buf_free(&z);
        pm_buf_free(&out);
        pm_avro_codec_done(&c);
    }
    free(zeros);
}

/* ---- decompression bombs ---------------------------------------------------- */

/* kB of /proc/self/status line `key` (VmRSS, VmHWM), -1 if unknown. */
static long proc_status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') { v = atol(line + kl + 1); break; }
    fclose(f);
    return v;
}

typedef struct bomb_job { const pm_buf *file; char name[64]; int rc; pm_err err; } bomb_job;

static void *bomb_thread(void *p) {
    bomb_job *j = p;
    long n;
    pm_err_clear(&j->err);
    j->rc = decode_all(j->file->data, j->file->len, j->name, &n, &j->err);
    return NULL;
}

/* issue 12: a 133 KB manifest inflated to the 1 GiB block cap before it was
 * refused (about 1 GB of RSS per thread). A one-block zstandard manifest of
 * a few KB that inflates to 96 MiB, read by 8 threads at once: every read
 * is refused naming the file, and the peak memory of all of them stays
 * within the process-wide budget (plus 1 MiB per thread, plus slack), not
 * 8 x 96 MiB. */
TEST(test_zstd_bomb_is_refused_within_the_budget) {
    enum { THREADS = 8 };
    size_t mib = (size_t)1 << 20;
    uint8_t *zeros = calloc(1, mib);
    pm_avro_codec_ctx c = {0};
    pm_err e = {0};
    pm_buf frame = {0}, payload = {0}, file = {0};
    CHECK(zeros != NULL);
    if (!zeros) return;
    CHECK_EQ_INT(pm_avro_compress(&c, PM_AVRO_CODEC_ZSTD, 19, zeros, mib, &frame, &e), PAIMON_OK);
    pm_avro_codec_done(&c);
    free(zeros);
    for (int i = 0; i < 96; i++) pm_buf_append(&payload, frame.data, frame.len);   /* 96 frames, one block */
    hdr(&file, "\"long\"", "zstandard");
    blk(&file, 1, payload.data, payload.len);
    printf("# bomb: %zu bytes inflating to %zu MiB\n", file.len, (size_t)96);
    CHECK(file.len < 64 * 1024);

    /* VmHWM from here on (writing 5 to clear_refs resets it, Linux >= 4.0) */
    FILE *cr = fopen("/proc/self/clear_refs", "w");
    int can_measure = cr && fputs("5", cr) >= 0;
    if (cr && fclose(cr) != 0) can_measure = 0;
    long rss0 = proc_status_kb("VmRSS");
    bomb_job jobs[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i].file = &file;
        snprintf(jobs[i].name, sizeof jobs[i].name, "manifest/manifest-bomb-%d", i);
        CHECK(pthread_create(&th[i], NULL, bomb_thread, &jobs[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    long hwm = proc_status_kb("VmHWM");
    for (int i = 0; i < THREADS; i++) {
        CHECK_EQ_INT(jobs[i].rc, PAIMON_CORRUPT);
        CHECK(contains(jobs[i].err.msg, jobs[i].name));
        CHECK(contains(jobs[i].err.msg, "block 1 (zstandard)"));
        if (!contains(jobs[i].err.msg, "larger than 67108864 bytes") && !contains(jobs[i].err.msg, "process-wide limit")) {
            fprintf(stderr, "    unexpected message: %s\n", jobs[i].err.msg);
            CHECK(0);
        }
    }
    CHECK_EQ_INT(pm_avro_inflated_bytes(), 0);   /* every reader gave its share back */
    if (can_measure && rss0 > 0 && hwm > 0) {
        long grown_mib = (hwm - rss0) / 1024;
        printf("# peak growth with %d bomb readers: %ld MiB (budget %zu MiB)\n", THREADS, grown_mib,
               (size_t)(PM_AVRO_INFLATE_BUDGET >> 20));
        CHECK(grown_mib < (long)(PM_AVRO_INFLATE_BUDGET >> 20) + THREADS + 64);
    } else {
        printf("# peak memory not measurable here (no /proc/self/clear_refs)\n");
    }
    pm_buf_free(&frame);
    pm_buf_free(&payload);
    pm_buf_free(&file);
}

/* Truncate / flip / randomly mutate real files: never crash or leak. */
/* The records of the Avro file b (which opens) written again with `codec`
 * into *out, under the file's own schema text. */
static void reencode(const pm_buf *b, const char *path, const char *codec, int level, pm_buf *out) {
    pm_err e = {0};
    pm_avro_reader *r = NULL;
    if (pm_avro_reader_open(b->data, b->len, path, &r, &e)) { CHECK(!"reopen failed"); return; }
    size_t sl;
    const uint8_t *sj = pm_avro_reader_meta(r, "avro.schema", &sl);
    char *schema = pm_strndup((const char *)sj, sl);
    pm_avro_writer *w = NULL;
    CHECK_EQ_INT(pm_avro_writer_open(schema, codec, level, &w, &e), PAIMON_OK);
    const pm_avro_value *v;
    while (pm_avro_reader_next(r, &v, &e) == PAIMON_OK) {
        pm_avro_encode_value(pm_avro_writer_datum_buf(w), pm_avro_reader_schema(r), v, &e);
        pm_avro_writer_end_datum(w, &e);
    }
    CHECK_EQ_INT(pm_avro_writer_finish(w, out, &e), PAIMON_OK);
    free(schema);
    pm_avro_reader_close(r);
}

static unsigned long mutate_file(const pm_buf *orig, const char *label) {
    pm_buf t = {0};
    unsigned long runs = 0;
    pm_err e = {0};
    long cnt;
    for (size_t n = 0; n <= orig->len; n++) {
        t.len = 0;
        pm_buf_append(&t, orig->data, n);
        int rc = decode_all(t.data, t.len, label, &cnt, &e);
        if (rc != PAIMON_DONE) CHECK(e.msg[0] && contains(e.msg, label));
        runs++;
    }
    static const uint8_t xors[] = {0x01, 0x80, 0xff, 0x40};
    for (size_t pos = 0; pos < orig->len; pos++) {
        t.len = 0;
        pm_buf_append(&t, orig->data, orig->len);
        t.data[pos] ^= xors[pos % sizeof xors];
        int rc = decode_all(t.data, t.len, label, &cnt, &e);
        if (rc != PAIMON_DONE) CHECK(contains(e.msg, label));
        /* and with every other field skipped (no value built for them) */
        rc = decode_skipping_named(t.data, t.len, label, 0xAAAAAAAAAAAAAAAAull, &cnt, &e);
        if (rc != PAIMON_DONE && rc != -1) CHECK(contains(e.msg, label));
        runs += 2;
    }
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int it = 0; it < 2000; it++) {
        t.len = 0;
        pm_buf_append(&t, orig->data, orig->len);
        int muts = 1 + it % 8;
        for (int m = 0; m < muts; m++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            size_t pos = (size_t)(x % t.len);
            t.data[pos] = (uint8_t)(x >> 32);
        }
        decode_all(t.data, t.len, label, &cnt, &e);
        runs++;
    }
    pm_buf_free(&t);
    return runs;
}

TEST(test_mutations_never_crash) {
    const char *files[] = {
        "paimon-java-compat/paimon-cpp-avro-manifest/manifest/manifest",
        "paimon-java-compat/paimon-rust-spec-fixtures/manifest/manifest-8ded1f09-fcda-489e-9167-582ac0f9f846-0",
        "paimon-java-compat/paimon-cpp-avro-manifest/manifest/avro_manifest_list_09",
    };
    unsigned long runs = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", fixtures_dir(), files[i]);
        pm_buf b = {0};
        CHECK(read_file(path, &b) == 0);
        if (b.len) runs += mutate_file(&b, files[i]);
        /* the same records with the null and deflate codecs (no checksum
         * shields the decoder from flipped bytes) */
        pm_err e = {0};
        pm_avro_reader *r = NULL;
        if (b.len && pm_avro_reader_open(b.data, b.len, path, &r, &e) == PAIMON_OK) {
            static const char *const cs[] = {"null", "deflate"};
            for (int c = 0; c < 2; c++) {
                pm_buf out = {0};
                reencode(&b, path, cs[c], 6, &out);
                runs += mutate_file(&out, cs[c]);
                pm_buf_free(&out);
            }
            pm_avro_reader_close(r);
        }
        pm_buf_free(&b);
    }
    printf("# %lu mutated decodes\n", runs);
    CHECK(runs > 20000);
}

/* ---- compiled walks ------------------------------------------------------------ */

/* One read of a file with the walks and the decode compiled (`compiled` 1)
 * or left to the generic code (0): every block refused by a filter (mode 0:
 * whole records walked), every record decoded with the odd fields of the
 * top record and the even fields of nested ones skipped (1: runs of
 * skipped fields), or every record decoded whole (2). *out: the records
 * printed, then the result code and message. */
static int refuse_all(void *ud, const uint8_t *data, size_t len) { (void)ud; (void)data; (void)len; return 0; }

static void walk_once(const pm_buf *f, int compiled, int mode, pm_buf *out) {
    pm_err e = {0};
    pm_avro_reader *r = NULL;
    out->len = 0;
    int rc = pm_avro_reader_open(f->data, f->len, "walked", &r, &e);
    if (rc == PAIMON_OK) {
        pm_avro_reader_compile_walks(r, compiled);
        if (mode == 1) {
            const pm_avro_schema *top = pm_avro_unwrap_nullable(pm_avro_reader_schema(r));
            const pm_avro_schema *recs[PM_AVRO_SKIP_MAX];
            size_t nr = 0;
            collect_records(top, recs, &nr, 0);
            for (size_t k = 0; k < nr; k++)
                pm_avro_reader_skip_fields(r, recs[k], recs[k] == top ? 0xAAAAAAAAAAAAAAAAull : 0x5555555555555555ull);
        } else if (mode == 0) {
            pm_avro_reader_block_filter(r, refuse_all, NULL);
        }
        const pm_avro_value *v;
        int skipped = 0;
        while ((rc = pm_avro_reader_next(r, &v, &e)) == PAIMON_OK) {
            canon_projected(out, pm_avro_reader_schema(r), v, &skipped);
            pm_buf_putc(out, '\n');
        }
        pm_avro_reader_close(r);
    }
    pm_buf_printf(out, "rc=%d %s", rc, rc == PAIMON_DONE ? "" : e.msg);
    pm_buf_cstr(out);
}

/* Both ways read f alike; 1 if they did. */
static int walks_agree(const pm_buf *f, const char *label) {
    pm_buf a = {0}, b = {0};
    int same = 1;
    static const char *const modes[] = {"blocks passed over", "projected", "decoded whole"};
    for (int mode = 0; mode < 3 && same; mode++) {
        walk_once(f, 0, mode, &a);
        walk_once(f, 1, mode, &b);
        if (strcmp((char *)a.data, (char *)b.data)) {
            const char *ta = strrchr((char *)a.data, '\n'), *tb = strrchr((char *)b.data, '\n');
            fprintf(stderr, "  %s (%s): generic walk ended \"%.200s\", compiled \"%.200s\"\n", label,
                    modes[mode], ta ? ta + 1 : (char *)a.data, tb ? tb + 1 : (char *)b.data);
            same = 0;
        }
    }
    pm_buf_free(&a);
    pm_buf_free(&b);
    return same;
}

/* f, then every truncation and many byte changes of it: *runs compared,
 * *failed of them ending in an error; 1 if all agreed. */
static int walks_agree_mutated(const pm_buf *f, const char *label, unsigned long *runs, unsigned long *failed) {
    pm_buf t = {0};
    int ok = walks_agree(f, label);
    (*runs)++;
    uint64_t x = 0x2545F4914F6CDD1DULL;
    /* sampled sweeps (the sanitizer pass): every third, both kinds in turn */
    for (size_t it = 0; ok && it < 3000 + f->len; it += tu_sweep_sampled() ? 3 : 1) {
        t.len = 0;
        if (it < f->len) {   /* cut short, or one byte flipped */
            pm_buf_append(&t, f->data, it % 2 ? it : f->len);
            if (!(it % 2)) t.data[it] ^= (uint8_t)(1u << (it / 2 % 8));
        } else {             /* a few bytes set anywhere past the header */
            pm_buf_append(&t, f->data, f->len);
            for (int m = 0; m < 1 + (int)(it % 4); m++) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                t.data[f->len / 4 + (size_t)(x % (f->len - f->len / 4))] = (uint8_t)(x >> 40);
            }
        }
        ok = walks_agree(&t, label);
        pm_err e = {0};
        long cnt;
        if (decode_all(t.data, t.len, label, &cnt, &e) != PAIMON_DONE) (*failed)++;
        (*runs)++;
    }
    pm_buf_free(&t);
    return ok;
}

/* A file of `schema` (null codec) with records from fill(), in blocks of 7. */
typedef void (*fill_fn)(pm_buf *d, int i);
static void build_file(pm_buf *f, const char *schema, int n, fill_fn fill) {
    pm_buf d = {0};
    f->len = 0;
    hdr(f, schema, "null");
    for (int i = 0; i < n; i += 7) {
        d.len = 0;
        int k = 0;
        for (; k < 7 && i + k < n; k++) fill(&d, i + k);
        blk(f, k, d.data, d.len);
    }
    pm_buf_free(&d);
}

/* every kind of value the programs handle differently */
static const char *const ALL_KINDS =
    "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
    "{\"name\":\"b\",\"type\":\"boolean\"},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\",\"C\"]}},"
    "{\"name\":\"f\",\"type\":\"float\"},{\"name\":\"d\",\"type\":\"double\"},"
    "{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":3}},"
    "{\"name\":\"l1\",\"type\":\"long\"},{\"name\":\"l2\",\"type\":\"long\"},{\"name\":\"i1\",\"type\":\"int\"},"
    "{\"name\":\"s1\",\"type\":\"string\"},{\"name\":\"by\",\"type\":\"bytes\"},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":[\"null\",\"string\"]}},"
    "{\"name\":\"ar\",\"type\":{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"I\",\"fields\":["
    "{\"name\":\"i\",\"type\":\"int\"},{\"name\":\"s\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\"}]}]}}},"
    "{\"name\":\"u\",\"type\":[\"null\",\"I\"]},"
    "{\"name\":\"u3\",\"type\":[\"null\",\"long\",\"string\"]},"
    "{\"name\":\"ul\",\"type\":[\"long\",\"null\"]},"
    "{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"N\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"},"
    "{\"name\":\"bb\",\"type\":\"bytes\"},{\"name\":\"nn\",\"type\":[\"null\",\"N\"]}]}},"
    "{\"name\":\"list\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"long\"]}},"
    "{\"name\":\"ms\",\"type\":{\"type\":\"map\",\"values\":\"int\"}},"
    "{\"name\":\"tail\",\"type\":\"long\"}]}";

static void put_n(pm_buf *d, int depth, int i) {   /* N, nested depth more times */
    pm_avro_put_long(d, (int64_t)i * 1000003 - 77);
    pm_avro_put_bytes(d, "nn", (size_t)(i % 3));
    if (depth > 0) { pm_avro_put_long(d, 1); put_n(d, depth - 1, i); }
    else pm_avro_put_long(d, 0);
}

static void fill_all_kinds(pm_buf *d, int i) {
    pm_avro_put_bool(d, i & 1);
    pm_avro_put_long(d, i % 3);
    pm_avro_put_float(d, (float)i / 3);
    pm_avro_put_double(d, i * 1e10);
    pm_buf_append(d, "xyz", 3);
    pm_avro_put_long(d, (int64_t)((uint64_t)i << (i % 60)));   /* 1 to 10 bytes */
    pm_avro_put_long(d, -i);
    pm_avro_put_int(d, i * 40000);
    pm_avro_put_string(d, i % 2 ? "" : "some string");
    pm_avro_put_bytes(d, "\x00\x01\x02", (size_t)(i % 4));
    if (i % 3) {   /* a map in two blocks, the second with its byte size */
        pm_avro_put_long(d, 1); pm_avro_put_string(d, "k"); pm_avro_put_long(d, 1); pm_avro_put_string(d, "v");
        pm_avro_put_long(d, -1); pm_avro_put_long(d, 3); pm_avro_put_string(d, "q"); pm_avro_put_long(d, 0);
    }
    pm_avro_put_long(d, 0);
    for (int k = 0; k < i % 3; k++) {   /* the array, one item per block */
        pm_avro_put_long(d, 1);
        pm_avro_put_int(d, k);
        if (k % 2) { pm_avro_put_long(d, 1); pm_avro_put_long(d, 2); pm_avro_put_long(d, 5); pm_avro_put_long(d, 6); pm_avro_put_long(d, 0); }
        else pm_avro_put_long(d, 0);
    }
    pm_avro_put_long(d, 0);
    if (i % 2) { pm_avro_put_long(d, 1); pm_avro_put_int(d, i); pm_avro_put_long(d, 0); }
    else pm_avro_put_long(d, 0);
    pm_avro_put_long(d, i % 3);
    if (i % 3 == 1) pm_avro_put_long(d, i);
    else if (i % 3 == 2) pm_avro_put_string(d, "u3");
    if (i % 2) pm_avro_put_long(d, 1);
    else { pm_avro_put_long(d, 0); pm_avro_put_long(d, 12345); }
    put_n(d, i % 4 == 3 ? 20 : i % 4, i);   /* 20: past what the programs inline */
    pm_avro_put_long(d, 3);
    pm_avro_put_long(d, 0);
    pm_avro_put_long(d, 1); pm_avro_put_long(d, 99);
    pm_avro_put_long(d, 0);
    pm_avro_put_long(d, 0);
    pm_avro_put_long(d, 1); pm_avro_put_string(d, "a"); pm_avro_put_int(d, 1); pm_avro_put_long(d, 0);
    pm_avro_put_long(d, i);
}

/* A list nested deeper than the decoder allows: both ways refuse it. */
static void fill_deep(pm_buf *d, int i) { put_n(d, i ? 600 : 3, i); }
static const char *const DEEP = "{\"type\":\"record\",\"name\":\"N\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"},"
                                "{\"name\":\"bb\",\"type\":\"bytes\"},{\"name\":\"nn\",\"type\":[\"null\",\"N\"]}]}";

/* The compiled walks (skipped runs of fields, records of passed-over blocks)
 * against the generic walk, on Java-written manifests, manifest lists and
 * index manifests and on a schema with every kind of value: the same
 * records, the same end, the same message, for the files as they are and
 * for thousands of truncated and altered copies. */
TEST(test_compiled_walks_match_generic) {
    const char *files[] = {
        "paimon-java-compat/paimon-cpp-avro-manifest/manifest/manifest",
        "paimon-java-compat/paimon-rust-spec-fixtures/manifest/manifest-8ded1f09-fcda-489e-9167-582ac0f9f846-0",
        "paimon-java-compat/paimon-cpp-avro-manifest/manifest/avro_manifest_list_09",
    };
    unsigned long runs = 0, failed = 0;
    size_t files_done = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", fixtures_dir(), files[i]);
        pm_buf b = {0}, out = {0};
        CHECK(read_file(path, &b) == 0);
        pm_err e = {0};
        pm_avro_reader *r = NULL;
        if (!b.len || pm_avro_reader_open(b.data, b.len, path, &r, &e)) { pm_buf_free(&b); continue; }
        CHECK(walks_agree(&b, files[i]));   /* as Java wrote it (zstandard or snappy) */
        /* the same records in the null codec, where altered bytes reach the walk */
        reencode(&b, path, "null", 0, &out);
        CHECK(walks_agree_mutated(&out, files[i], &runs, &failed));
        files_done++;
        pm_avro_reader_close(r);
        pm_buf_free(&b);
        pm_buf_free(&out);
    }
    CHECK_EQ_INT(files_done, 3);
    pm_buf f = {0};
    build_file(&f, ALL_KINDS, 60, fill_all_kinds);
    {
        long cnt = 0;
        pm_err e = {0};
        CHECK_EQ_INT(decode_all(f.data, f.len, "all kinds", &cnt, &e), PAIMON_DONE);
        CHECK_EQ_INT(cnt, 60);
    }
    CHECK(walks_agree_mutated(&f, "all kinds", &runs, &failed));
    /* a small schema naming one record 8 times at each of 12 levels (null
     * leaves): what inlining would expand 8^12 times is not compiled, and
     * both ways refuse the record by its value budget (the compiler's op
     * and visit caps bound the work; tests do not time it, benchmarks do) */
    {
        pm_buf sc = {0};
        for (int lv = 0; lv < 12; lv++) {
            pm_buf_printf(&sc, "{\"type\":\"record\",\"name\":\"R%d\",\"fields\":[", lv);
            if (lv == 11) {
                for (int k = 0; k < 8; k++) pm_buf_printf(&sc, "%s{\"name\":\"f%d\",\"type\":\"null\"}", k ? "," : "", k);
            } else {
                pm_buf_printf(&sc, "{\"name\":\"f0\",\"type\":");
            }
        }
        for (int lv = 10; lv >= 0; lv--) {
            pm_buf_printf(&sc, "]}}");
            for (int k = 1; k < 8; k++) pm_buf_printf(&sc, ",{\"name\":\"f%d\",\"type\":\"R%d\"}", k, lv + 1);
        }
        pm_buf_printf(&sc, "]}");
        pm_buf_cstr(&sc);
        f.len = 0;
        hdr(&f, (char *)sc.data, "null");
        blk(&f, 40, "", 0);
        pm_buf o = {0};
        for (int mode = 0; mode < 3; mode += 2) {   /* passed over, decoded */
            walk_once(&f, 1, mode, &o);
            CHECK(contains((char *)o.data, "expands to more than"));
        }
        CHECK(walks_agree(&f, "exploding schema"));
        pm_buf_free(&o);
        pm_buf_free(&sc);
    }
    /* the same through recursion: three nullable fields of the record itself
     * (a review's reproducer: 11 s and 4 GB to compile before the cap) */
    {
        static const char *const rec3 = "{\"type\":\"record\",\"name\":\"R\",\"fields\":["
            "{\"name\":\"f0\",\"type\":[\"null\",\"R\"]},{\"name\":\"f1\",\"type\":[\"null\",\"R\"]},"
            "{\"name\":\"f2\",\"type\":[\"null\",\"R\"]},{\"name\":\"z\",\"type\":\"long\"}]}";
        pm_buf d = {0};
        f.len = 0;
        hdr(&f, rec3, "null");
        for (int i = 0; i < 64; i++) { pm_buf_append(&d, "\0\0\0", 3); pm_avro_put_long(&d, i); }
        blk(&f, 64, d.data, d.len);
        CHECK(walks_agree(&f, "recursive record"));
        pm_buf_free(&d);
    }
    build_file(&f, DEEP, 2, fill_deep);
    pm_buf out = {0};
    for (int mode = 0; mode < 3; mode += 2) {
        walk_once(&f, 1, mode, &out);
        CHECK(contains((char *)out.data, "nested deeper than"));
    }
    CHECK(walks_agree(&f, "deep"));
    pm_buf_free(&out);
    pm_buf_free(&f);
    printf("# %lu files compared both ways, %lu of them refused\n", runs, failed);
    CHECK(failed > runs / 4 && failed < runs);
}

/* ---- throughput ------------------------------------------------------------ */

TEST(test_throughput) {
    char path[1024];
    snprintf(path, sizeof path, "%s/paimon-java-compat/paimon-cpp-avro-manifest/manifest/manifest", fixtures_dir());
    pm_buf b = {0};
    pm_err e = {0};
    CHECK(read_file(path, &b) == 0);
    pm_avro_reader *r = NULL;
    CHECK_EQ_INT(pm_avro_reader_open(b.data, b.len, path, &r, &e), PAIMON_OK);
    if (!r) { pm_buf_free(&b); return; }
    size_t sl;
    const uint8_t *sj = pm_avro_reader_meta(r, "avro.schema", &sl);
    char *schema = pm_strndup((const char *)sj, sl);
    pm_avro_writer *w = NULL;
    CHECK_EQ_INT(pm_avro_writer_open(schema, "zstandard", 1, &w, &e), PAIMON_OK);
    /* 30 real manifest entries, repeated. */
    const int N = tu_sweep_sampled() ? 30000 : 300000;
    pm_buf recs[30];
    memset(recs, 0, sizeof recs);
    const pm_avro_value *v;
    int k = 0;
    while (k < 30 && pm_avro_reader_next(r, &v, &e) == PAIMON_OK)
        pm_avro_encode_value(&recs[k++], pm_avro_reader_schema(r), v, &e);
    CHECK_EQ_INT(k, 30);
    for (int i = 0; i < N && k; i++) {
        const pm_buf *src = &recs[i % k];
        pm_buf_append(pm_avro_writer_datum_buf(w), src->data, src->len);
        pm_avro_writer_end_datum(w, &e);
    }
    pm_buf out = {0};
    CHECK_EQ_INT(pm_avro_writer_finish(w, &out, &e), PAIMON_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long cnt = 0;
    CHECK_EQ_INT(decode_all(out.data, out.len, "bench", &cnt, &e), PAIMON_DONE);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK_EQ_INT(cnt, N);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("# decoded %ld manifest entries (%zu bytes zstd, %.1f bytes/record raw) in %.3f s: %.0f records/s\n",
           cnt, out.len, recs[0].len * 1.0, secs, secs > 0 ? (double)cnt / secs : 0.0);
    /* many blocks: every other one refused, the others' records as a plain read gives them */
    pm_buf ob = {out.data, out.len, out.cap, 0};
    CHECK(check_block_filter(&ob, "bench") == 1);
    check_block_share(&ob, "bench", 3);
    check_block_share(&ob, "bench", 1);
    for (int i = 0; i < 30; i++) pm_buf_free(&recs[i]);
    pm_buf_free(&out);
    free(schema);
    pm_avro_reader_close(r);
    pm_buf_free(&b);
}

int main(void) {
    RUN(test_fixtures_match_python);
    RUN(test_compiled_walks_match_generic);
    RUN(test_reader_accessors);
    RUN(test_schema_parse);
    RUN(test_roundtrip_null);
    RUN(test_roundtrip_deflate);
    RUN(test_roundtrip_snappy);
    RUN(test_roundtrip_zstandard);
    RUN(test_roundtrip_zstandard_small);
    RUN(test_roundtrip_empty);
    RUN(test_reencode_identical);
    RUN(test_encode_errors);
    RUN(test_corrupt_files);
    RUN(test_skipped_fields_are_checked);
    RUN(test_decompress_limit);
    RUN(test_zstd_bomb_is_refused_within_the_budget);
    RUN(test_mutations_never_crash);
    RUN(test_throughput);
    return TEST_SUMMARY();
}
