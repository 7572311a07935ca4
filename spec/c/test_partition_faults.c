/* Fault injection into drop partition (pm_drop_partitions): for every k,
 * the k-th I/O operation of the drop fails (before doing anything; after
 * doing a mutation; or as a crash where every later operation fails too),
 * then the drop is run again without faults. Afterwards:
 *  - the re-run succeeded and the partition was dropped exactly once: one
 *    new OVERWRITE snapshot, whose live files are the old ones minus the
 *    partition's (checked in C and, once per mode, with pyref);
 *  - nothing retained is lost: every file of the table before the drop is
 *    still there, byte for byte (only the LATEST/EARLIEST hints may change;
 *    mark-delete removes no data file);
 *  - nothing is left behind: every new file is the new snapshot or a
 *    manifest / list it references, except after a crash or an uncertain
 *    snapshot write (the failed run could not know or could not clean up);
 *    then an orphan clean removes exactly those strays and the table stays
 *    complete.
 * Two tables built here with pm_commit (default merge options; and
 * manifest.merge-min-count = 2, so the drop commit also merges manifests).
 * Runs on /dev/shm when available. */
#define _XOPEN_SOURCE 700
#include "test.h"
#include "pm_commit.h"
#include "pm_fileio_fault.h"
#include "pm_orphan.h"
#include "pm_partition_ops.h"

#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SCHEMA_FMT \
    "{\n  \"version\" : 3,\n  \"id\" : 0,\n  \"fields\" : [ {\n    \"id\" : 0,\n    \"name\" : \"id\",\n" \
    "    \"type\" : \"INT\"\n  }, {\n    \"id\" : 1,\n    \"name\" : \"dt\",\n    \"type\" : \"STRING\"\n  } ],\n" \
    "  \"highestFieldId\" : 1,\n  \"partitionKeys\" : [ \"dt\" ],\n  \"primaryKeys\" : [ ],\n" \
    "  \"options\" : {\n    \"bucket\" : \"-1\",\n    \"file.format\" : \"parquet\"%s\n  },\n" \
    "  \"timeMillis\" : 1764000000000\n}"

static long strays_runs;   /* runs that left strays (crash, uncertain snapshot write) */

/* ---- the directory tree: "relpath size hash" lines, sorted ------------------------ */

typedef struct lines { char **v; size_t n, cap; } lines;
static lines *walk_out;
static size_t walk_prefix;

static uint64_t fnv_file(const char *path, int64_t *size) {
    uint64_t h = 1469598103934665603ULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char buf[8192];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < k; i++) { h ^= buf[i]; h *= 1099511628211ULL; }
        *size += (int64_t)k;
    }
    fclose(f);
    return h;
}

static int walk_fn(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    if (flag != FTW_F) return 0;
    int64_t size;
    uint64_t h = fnv_file(path, &size);
    char line[800];
    snprintf(line, sizeof line, "%s %lld %016llx", path + walk_prefix, (long long)size, (unsigned long long)h);
    if (walk_out->n == walk_out->cap) {
        walk_out->cap = walk_out->cap ? walk_out->cap * 2 : 128;
        walk_out->v = realloc(walk_out->v, walk_out->cap * sizeof *walk_out->v);
    }
    walk_out->v[walk_out->n++] = pm_strdup(line);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void tree(const char *dir, lines *out) {
    memset(out, 0, sizeof *out);
    walk_out = out;
    walk_prefix = strlen(dir) + 1;
    nftw(dir, walk_fn, 16, FTW_PHYS);
    qsort(out->v, out->n, sizeof *out->v, cmp_str);
}

static void lines_free(lines *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int lines_has(const lines *l, const char *s) {
    return l->n && bsearch(&s, l->v, l->n, sizeof *l->v, cmp_str) != NULL;
}

/* the path part of a tree line */
static void line_path(const char *line, char *out, size_t cap) {
    const char *sp = strchr(line, ' ');
    size_t n = sp ? (size_t)(sp - line) : strlen(line);
    if (n >= cap) n = cap - 1;
    memcpy(out, line, n);
    out[n] = '\0';
}

/* ---- building the pristine table ------------------------------------------------- */

typedef struct tfile { pm_manifest_entry m; pm_buf part, empty; char name[96]; int p; } tfile;

typedef struct world {
    char dir[128], pristine[200], work[200];
    tfile f[64];
    size_t nf;
    int64_t latest;
} world;

static int add_file(world *w, paimon_table *t, int p) {
    tfile *x = &w->f[w->nf++];
    memset(x, 0, sizeof *x);
    pm_err e;
    char dt[16];
    snprintf(dt, sizeof dt, "p%d", p);
    pm_datum v;
    memset(&v, 0, sizeof v);
    v.v.bin.ptr = (const uint8_t *)dt;
    v.v.bin.len = strlen(dt);
    pm_binrow_encode(t->part_types, 1, &v, &x->part, &e);
    pm_binrow_encode(NULL, 0, NULL, &x->empty, &e);
    snprintf(x->name, sizeof x->name, "data-0000000%d-0000-0000-0000-%012zu-0.parquet", p, w->nf);
    x->p = p;
    char path[600];
    snprintf(path, sizeof path, "%s/dt=%s", w->pristine, dt);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/dt=%s/bucket-0", w->pristine, dt);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/dt=%s/bucket-0/%s", w->pristine, dt, x->name);
    if (tu_write_file(path, x->name, strlen(x->name))) return -1;
    tu_fake_add(&x->m, (pm_bytes){x->part.data, x->part.len}, (pm_bytes){x->empty.data, x->empty.len}, 0, -1,
                x->name, (int64_t)strlen(x->name), 5, 1764000000000LL);
    return 0;
}

static int world_open(world *w, const char *extra_options) {
    memset(w, 0, sizeof *w);
    const char *base = tu_tmp_base();
    snprintf(w->dir, sizeof w->dir, "%s/pm_test_pfaults.XXXXXX", base);
    if (!mkdtemp(w->dir)) return -1;
    snprintf(w->pristine, sizeof w->pristine, "%s/pristine", w->dir);
    snprintf(w->work, sizeof w->work, "%s/work", w->dir);
    char p[400], schema[2048];
    snprintf(p, sizeof p, "%s/schema", w->pristine);
    if (mkdir(w->pristine, 0755) || mkdir(p, 0755)) return -1;
    snprintf(p, sizeof p, "%s/schema/schema-0", w->pristine);
    int n = snprintf(schema, sizeof schema, SCHEMA_FMT, extra_options);
    if (tu_write_file(p, schema, (size_t)n)) return -1;
    paimon_table *t;
    pm_err e;
    if (pm_table_open(w->pristine, NULL, &t, &e)) return -1;
    int rc = 0;
    /* 5 snapshots: appends into p0..p2, a compaction of p1 (DELETE 2 + ADD 1) */
    for (int i = 1; i <= 5 && !rc; i++) {
        pm_manifest_entry v[8];
        size_t nv = 0;
        if (i == 4) {
            for (size_t j = 0; j < w->nf && nv < 2; j++)
                if (w->f[j].p == 1) { v[nv] = w->f[j].m; v[nv++].kind = PM_FILE_DELETE; }
            if (add_file(w, t, 1)) rc = -1;
            v[nv++] = w->f[w->nf - 1].m;
        } else {
            for (int p2 = 0; p2 < 3 && !rc; p2++) {
                if (add_file(w, t, p2)) rc = -1;
                v[nv++] = w->f[w->nf - 1].m;
            }
        }
        pm_commit_opts o;
        pm_commit_opts_from_table(t, &o);
        o.commit_user = "builder";
        o.identifier = i;
        o.kind = i == 4 ? "COMPACT" : "APPEND";
        if (!rc && tu_commit(t, v, nv, &o, &w->latest, &e)) { fprintf(stderr, "  build: %s\n", e.msg); rc = -1; }
    }
    pm_table_free(t);
    return rc;
}

static void world_close(world *w) {
    for (size_t i = 0; i < w->nf; i++) { pm_buf_free(&w->f[i].part); pm_buf_free(&w->f[i].empty); }
    if (strstr(w->dir, "/pm_test_pfaults.")) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
        tu_sh(cmd);
    }
}

static int reset(world *w) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -a '%s' '%s'", w->work, w->pristine, w->work);
    return tu_sh(cmd);
}

/* ---- the recording fault FileIO (as in test_commit_faults.c) -------------------- */

enum { MODE_BEFORE, MODE_AFTER, MODE_CRASH };
static const char *mode_name[] = {"before", "after", "crash"};

typedef struct rec_io {
    pm_fileio io;
    pm_fileio *inner;      /* pm_fileio_fault over the table's FileIO */
    int mode;
    long k, mutations;
    int hit, hit_snapshot;
    char path[600];
} rec_io;

static pm_fileio_ops rec_ops;
#define R(io) ((rec_io *)(io))

static void rec_note(rec_io *r, const char *path, int rc, const pm_err *e, int create) {
    if (rc == PAIMON_OK || r->hit || !strstr(e->msg, "injected fault")) return;
    r->hit = 1;
    r->hit_snapshot = create && strstr(path, "/snapshot/snapshot-") != NULL;
    snprintf(r->path, sizeof r->path, "%s", path);
}

static int rec_after(rec_io *r, const char *path, int create, int rc, pm_err *e) {
    if (rc != PAIMON_OK || r->mode != MODE_AFTER || r->hit) return rc;
    if (++r->mutations != r->k) return rc;
    r->hit = 1;
    r->hit_snapshot = create && strstr(path, "/snapshot/snapshot-") != NULL;
    snprintf(r->path, sizeof r->path, "%s", path);
    return pm_fail(e, PAIMON_IO, "%s: injected fault after the operation", path);
}

static int r_read_all(pm_fileio *io, const char *p, pm_buf *o, pm_err *e) {
    int rc = pm_io_read_all(R(io)->inner, p, o, e);
    rec_note(R(io), p, rc, e, 0);
    return rc;
}
static int r_list(pm_fileio *io, const char *p, pm_dirent **o, size_t *n, pm_err *e) {
    int rc = pm_io_list(R(io)->inner, p, o, n, e);
    rec_note(R(io), p, rc, e, 0);
    return rc;
}
static int r_stat(pm_fileio *io, const char *p, pm_stat *s, pm_err *e) {
    int rc = pm_io_stat(R(io)->inner, p, s, e);
    rec_note(R(io), p, rc, e, 0);
    return rc;
}
static int r_exists(pm_fileio *io, const char *p, int *x, pm_err *e) {
    int rc = pm_io_exists(R(io)->inner, p, x, e);
    rec_note(R(io), p, rc, e, 0);
    return rc;
}
static int r_write(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    int rc = pm_io_write_atomic(R(io)->inner, p, d, n, e);
    rec_note(R(io), p, rc, e, 0);
    return rec_after(R(io), p, 0, rc, e);
}
static int r_create(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    int rc = pm_io_create_no_replace(R(io)->inner, p, d, n, e);
    rec_note(R(io), p, rc, e, 1);
    return rec_after(R(io), p, 1, rc, e);
}
static int r_remove(pm_fileio *io, const char *p, pm_err *e) {
    int rc = pm_io_remove(R(io)->inner, p, e);
    rec_note(R(io), p, rc, e, 0);
    return rec_after(R(io), p, 0, rc, e);
}
static int r_remove_within(pm_fileio *io, const char *root, const char *rel, int flags, pm_stat *st, pm_err *e) {
    int rc = pm_io_remove_within(R(io)->inner, root, rel, flags, st, e);
    char p[600];
    snprintf(p, sizeof p, "%s/%s", pm_local_path(root), rel);
    rec_note(R(io), p, rc, e, 0);
    return flags & PM_RM_DRY_RUN ? rc : rec_after(R(io), p, 0, rc, e);
}
static int r_mkdirs(pm_fileio *io, const char *p, pm_err *e) {
    int rc = pm_io_mkdirs(R(io)->inner, p, e);
    rec_note(R(io), p, rc, e, 0);
    return rec_after(R(io), p, 0, rc, e);
}
static void r_destroy(pm_fileio *io) { (void)io; }

static void faults_install(paimon_table *t, rec_io *r, int mode, long k) {
    rec_ops = (pm_fileio_ops){t->io->ops->scheme, r_read_all, r_list, r_stat, r_exists, r_write,
                              r_create, r_remove, r_remove_within, r_mkdirs, r_destroy, t->io->ops->caps, NULL, NULL};
    memset(r, 0, sizeof *r);
    r->io.ops = &rec_ops;
    r->mode = mode;
    r->k = k;
    r->inner = pm_fileio_fault_new(t->io, PM_FAULT_ALL, mode == MODE_AFTER ? 0 : k, mode == MODE_CRASH);
    t->io = &r->io;
}

static void faults_remove(paimon_table *t, rec_io *r) { t->io = pm_fileio_fault_release(r->inner); }

/* ---- checks ------------------------------------------------------------------------ */

/* Live "dt/name" lines of snapshot id (sorted), or NULL. */
static int live_of(paimon_table *t, int64_t id, lines *out) {
    memset(out, 0, sizeof *out);
    pm_snapshot *s = NULL;
    pm_err e;
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) return -1;
    pm_scan *sc;
    if (pm_scan_open(t, s, NULL, &sc, &e)) { pm_snapshot_free(s); return -1; }
    const pm_manifest_entry *m;
    pm_buf p = {0};
    int rc;
    while ((rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) {
        p.len = 0;
        pm_table_file_path(t, m, &p, &e);
        pm_buf_cstr(&p);
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 64;
            out->v = realloc(out->v, out->cap * sizeof *out->v);
        }
        out->v[out->n++] = pm_strdup((char *)p.data);
    }
    pm_buf_free(&p);
    pm_scan_close(sc);
    pm_snapshot_free(s);
    if (out->n) qsort(out->v, out->n, sizeof *out->v, cmp_str);
    return rc == PAIMON_DONE ? 0 : -1;
}

/* Table-relative paths snapshot id needs: its file, its lists, their manifests. */
static int refs_of(paimon_table *t, int64_t id, lines *out) {
    memset(out, 0, sizeof *out);
    pm_snapshot *s = NULL;
    pm_err e;
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) return -1;
    char buf[400];
    out->cap = 64;
    out->v = malloc(out->cap * sizeof *out->v);
    snprintf(buf, sizeof buf, "snapshot/snapshot-%lld", (long long)id);
    out->v[out->n++] = pm_strdup(buf);
    const char *lists[2] = {s->base_manifest_list, s->delta_manifest_list};
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++) {
        snprintf(buf, sizeof buf, "manifest/%s", lists[i]);
        out->v[out->n++] = pm_strdup(buf);
        pm_mfile *v = NULL;
        size_t n = 0;
        if ((rc = pm_read_manifest_list(t, lists[i], &v, &n, &e))) break;
        for (size_t j = 0; j < n; j++) {
            if (out->n == out->cap) {
                out->cap *= 2;
                out->v = realloc(out->v, out->cap * sizeof *out->v);
            }
            snprintf(buf, sizeof buf, "manifest/%s", v[j].name);
            out->v[out->n++] = pm_strdup(buf);
        }
        pm_mfiles_free(v, n);
    }
    pm_snapshot_free(s);
    qsort(out->v, out->n, sizeof *out->v, cmp_str);
    return rc ? -1 : 0;
}

static int drop_p1(paimon_table *t, pm_drop_result *r, pm_err *e) {
    const char *keys[] = {"dt"}, *vals[] = {"p1"};
    pm_partition_filter f = {1, keys, vals};
    pm_part_select sel = {1, &f, 0, NULL, 0};
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    o.retry_wait_ms = 1;
    return pm_drop_partitions(t, &sel, &o, r, e);
}

/* One run with the fault at k; 1 when the fault was not hit (done). */
static int run_one(world *w, int mode, long k, const lines *pristine, const lines *want_live, int pyref) {
    char ctx[200];
    snprintf(ctx, sizeof ctx, "%s k=%ld", mode_name[mode], k);
    if (reset(w)) { CHECK(!"reset"); return 1; }
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(w->work, NULL, &t, &e)) { CHECK(!"open"); return 1; }
    rec_io r;
    faults_install(t, &r, mode, k);
    pm_drop_result dr;
    int rc1 = drop_p1(t, &dr, &e);
    if (rc1 == PAIMON_OK) pm_drop_result_free(&dr);
    faults_remove(t, &r);
    pm_table_free(t);
    if (rc1 != PAIMON_OK && !r.hit) {
        fprintf(stderr, "  %s: failed without a fault: %s\n", ctx, e.msg);
        CHECK(0);
    }

    int ok = 1;
    /* the re-run, no faults */
    if (pm_table_open(w->work, NULL, &t, &e)) { CHECK(!"reopen"); return 1; }
    int rc2 = drop_p1(t, &dr, &e);
    if (rc2) { fprintf(stderr, "  %s: re-run failed: %s\n", ctx, e.msg); ok = 0; }
    else pm_drop_result_free(&dr);
    int64_t latest = -1;
    pm_snapshot_latest_id(t->io, t->branch_root, &latest, &e);
    /* dropped exactly once */
    char kind[32] = "";
    pm_snapshot *s = NULL;
    if (pm_snapshot_read(t->io, t->branch_root, w->latest + 1, &s, &e) == 0) snprintf(kind, sizeof kind, "%s", s->commit_kind);
    pm_snapshot_free(s);
    if (latest != w->latest + 1 || strcmp(kind, "OVERWRITE")) {
        fprintf(stderr, "  %s: latest %lld (%s), want %lld OVERWRITE\n", ctx, (long long)latest, kind,
                (long long)w->latest + 1);
        ok = 0;
    }
    lines live = {0}, refs = {0};
    if (ok && live_of(t, latest, &live)) { fprintf(stderr, "  %s: scan failed\n", ctx); ok = 0; }
    if (ok && live.n != want_live->n) ok = 0;
    for (size_t i = 0; ok && i < live.n; i++)
        if (strcmp(live.v[i], want_live->v[i])) ok = 0;
    if (!ok && !rc2) fprintf(stderr, "  %s: wrong live set (%zu files, want %zu)\n", ctx, live.n, want_live->n);
    if (ok && refs_of(t, latest, &refs)) { fprintf(stderr, "  %s: cannot read the new snapshot\n", ctx); ok = 0; }

    /* nothing retained lost; nothing left behind */
    lines now;
    tree(w->work, &now);
    char path[700];
    for (size_t i = 0; i < pristine->n; i++) {
        if (lines_has(&now, pristine->v[i])) continue;
        line_path(pristine->v[i], path, sizeof path);
        if (!strcmp(path, "snapshot/LATEST") || !strcmp(path, "snapshot/EARLIEST")) continue;
        fprintf(stderr, "  %s: %s lost or changed (fault at %s)\n", ctx, pristine->v[i], r.hit ? r.path : "-");
        ok = 0;
    }
    size_t strays = 0;
    int strays_allowed = mode == MODE_CRASH || r.hit_snapshot;
    for (size_t i = 0; i < now.n; i++) {
        if (lines_has(pristine, now.v[i])) continue;
        line_path(now.v[i], path, sizeof path);
        if (!strcmp(path, "snapshot/LATEST") || !strcmp(path, "snapshot/EARLIEST")) continue;
        const char *pp = path;
        if (lines_has(&refs, pp)) continue;
        strays++;
        if (!strays_allowed) {
            fprintf(stderr, "  %s: stray %s (fault at %s)\n", ctx, path, r.hit ? r.path : "-");
            ok = 0;
        }
    }
    lines_free(&now);
    if (strays && strays_allowed && ok) {
        /* the backstop: an orphan clean removes exactly the strays */
        strays_runs++;
        usleep(2000);
        pm_orphan_opts oo;
        memset(&oo, 0, sizeof oo);
        oo.has_older_than = 1;
        oo.older_than_ms = pm_now_millis();
        oo.allow_young_cutoff = 1;   /* below the 1 h floor on purpose */
        pm_orphan_result orr;
        if (pm_remove_orphan_files(t, &oo, &orr, &e)) { fprintf(stderr, "  %s: orphan clean: %s\n", ctx, e.msg); ok = 0; }
        else {
            int64_t n = 0;
            for (int kk = 0; kk < PM_K__N; kk++) n += orr.clean.count[kk];
            if (n != (int64_t)strays) { fprintf(stderr, "  %s: orphan clean removed %lld of %zu strays\n", ctx, (long long)n, strays); ok = 0; }
            pm_clean_result_free(&orr.clean);
            lines after;
            tree(w->work, &after);
            for (size_t i = 0; i < after.n; i++) {
                line_path(after.v[i], path, sizeof path);
                const char *pp = path;
                if (!lines_has(&refs, pp) && !lines_has(pristine, after.v[i]) && strcmp(path, "snapshot/LATEST") &&
                    strcmp(path, "snapshot/EARLIEST")) {
                    fprintf(stderr, "  %s: %s survived the orphan clean\n", ctx, path);
                    ok = 0;
                }
            }
            lines_free(&after);
        }
    }
    if (ok && pyref) {
        /* the independent reader agrees about the latest snapshot */
        char cmd[600];
        snprintf(cmd, sizeof cmd, "/usr/bin/python3 spec/support/pyref.py '%s' files", w->work);
        FILE *p = popen(cmd, "r");
        pm_buf b = {0};
        char chunk[4096];
        size_t nr;
        while (p && (nr = fread(chunk, 1, sizeof chunk, p)) > 0) pm_buf_append(&b, chunk, nr);
        int st = p ? pclose(p) : -1;
        pm_buf_cstr(&b);
        const char *text = b.data ? (const char *)b.data : "";
        size_t found = 0;
        for (size_t i = 0; i < want_live->n; i++) {
            char q[400];
            snprintf(q, sizeof q, "\"file_path\": \"%s\"", want_live->v[i]);
            found += strstr(text, q) != NULL;
        }
        if (st != 0 || found != want_live->n || strstr(text, "dt=p1/") || strstr(text, "\"p1\"")) {
            fprintf(stderr, "  %s: pyref disagrees (status %d, %zu of %zu files)\n", ctx, st, found, want_live->n);
            ok = 0;
        }
        pm_buf_free(&b);
    }
    lines_free(&live);
    lines_free(&refs);
    pm_table_free(t);
    if (!ok) {
        fprintf(stderr, "  FAILED %s (first run rc %d, fault at %s)\n", ctx, rc1, r.hit ? r.path : "-");
        CHECK(ok);
    }
    return !r.hit;
}

static void sweep(const char *options, const char *label) {
    world w;
    if (world_open(&w, options)) { CHECK(!"world"); world_close(&w); return; }
    lines pristine, want_live = {0};
    tree(w.pristine, &pristine);
    paimon_table *t;
    pm_err e;
    CHECK_EQ_INT(pm_table_open(w.pristine, NULL, &t, &e), PAIMON_OK);
    lines all = {0};
    CHECK(live_of(t, w.latest, &all) == 0);
    for (size_t i = 0; i < all.n; i++)
        if (strncmp(all.v[i], "dt=p1/", 6)) {
            if (want_live.n == want_live.cap) {
                want_live.cap = want_live.cap ? want_live.cap * 2 : 32;
                want_live.v = realloc(want_live.v, want_live.cap * sizeof *want_live.v);
            }
            want_live.v[want_live.n++] = pm_strdup(all.v[i]);
        }
    CHECK(all.n > want_live.n && want_live.n > 0);
    lines_free(&all);
    pm_table_free(t);
    for (int mode = MODE_BEFORE; mode <= MODE_CRASH; mode++) {
        long k;
        for (k = 1; k < 2000; k++) {
            int pyref = k == 1 || k % 7 == 0;
            if (run_one(&w, mode, k, &pristine, &want_live, pyref)) break;
            if (t_cur_failed) break;
        }
        printf("# %s %s: %ld runs (%ld left strays that an orphan clean removed)\n", label, mode_name[mode], k, strays_runs);
        strays_runs = 0;
        CHECK(k > 5);
    }
    lines_free(&pristine);
    lines_free(&want_live);
    world_close(&w);
}

TEST(drop_faults_default_options) { sweep("", "default"); }
TEST(drop_faults_with_manifest_merge) { sweep(",\n    \"manifest.merge-min-count\" : \"2\"", "merge-min-count 2"); }

int main(void) {
    RUN(drop_faults_default_options);
    RUN(drop_faults_with_manifest_merge);
    return TEST_SUMMARY();
}
