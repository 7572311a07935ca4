/* Fault injection into pm_commit: for every k, the k-th I/O operation of a
 * commit fails (before doing anything; after doing the write; or as a crash
 * where every later operation fails too). Afterwards either the commit
 * happened completely, or the table reads exactly as before and no file of
 * the failed attempt remains (only an uncertain snapshot write may leave
 * manifests behind, and its retry must resolve the commit). Runs on temp
 * copies of a Java-written table. */
#include "test.h"
#include "pm_commit.h"
#include "pm_fileio_fault.h"

#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define COMPLEX "cpp-parquet-append_complex_data/append_complex_data.db/append_complex_data"

/* ---- temp copies and directory state ------------------------------------- */

typedef struct tdir { char dir[256]; char pristine[300]; char work[300]; } tdir;

static int tdir_make(tdir *d) {
    /* tmpfs when available: hundreds of commits, fsync is free there */
    snprintf(d->dir, sizeof d->dir, "%s/pm_test_faults.XXXXXX", tu_tmp_base());
    if (!mkdtemp(d->dir)) return -1;
    snprintf(d->pristine, sizeof d->pristine, "%s/pristine", d->dir);
    snprintf(d->work, sizeof d->work, "%s/work", d->dir);
    return tu_cp_fixture(COMPLEX, d->pristine);
}

static int full_reset(tdir *d) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -R '%s' '%s'", d->work, d->pristine, d->work);
    return tu_sh(cmd);
}

static int slurp(const char *path, pm_buf *out) {
    out->len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char chunk[8192];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) pm_buf_append(out, chunk, k);
    fclose(f);
    return 0;
}

static char *listing(const char *dir);
static int has_line(const char *text, const char *name);

/* Bring work/ back to the pristine state cheaply (a commit only adds files
 * to manifest/ and snapshot/ and replaces the hints): remove what is new,
 * restore files that differ. Falls back to a full copy. */
static int tdir_reset(tdir *d) {
    struct stat st;
    if (stat(d->work, &st) != 0) return full_reset(d);
    const char *subs[] = {"", "/manifest", "/snapshot", "/schema"};
    int rc = 0;
    pm_buf a = {0}, b = {0};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0] && !rc; i++) {
        char pd[700], wd[700];
        snprintf(pd, sizeof pd, "%s%s", d->pristine, subs[i]);
        snprintf(wd, sizeof wd, "%s%s", d->work, subs[i]);
        char *pl = listing(pd), *wl = listing(wd);
        for (char *l = strtok(wl, "\n"); l && !rc; l = strtok(NULL, "\n")) {
            char wp[900];
            snprintf(wp, sizeof wp, "%s/%s", wd, l);
            if (!has_line(pl, l)) {
                if (unlink(wp) != 0) rc = -1;   /* a new directory: full reset */
                continue;
            }
            if (i == 0) continue;           /* top-level entries: directories */
            char pp[900];
            snprintf(pp, sizeof pp, "%s/%s", pd, l);
            if (slurp(pp, &a) || slurp(wp, &b)) { rc = -1; break; }
            if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len))) {
                FILE *f = fopen(wp, "wb");
                if (!f || fwrite(a.data, 1, a.len, f) != a.len) rc = -1;
                if (f && fclose(f) != 0) rc = -1;
            }
        }
        /* everything of the pristine copy is still there */
        char *wl2 = listing(wd);
        char *plc = pm_strdup(pl);
        for (char *l = strtok(plc, "\n"); l && !rc; l = strtok(NULL, "\n"))
            if (!has_line(wl2, l)) rc = -1;
        free(plc);
        free(wl2);
        free(pl);
        free(wl);
    }
    pm_buf_free(&a);
    pm_buf_free(&b);
    return rc ? full_reset(d) : 0;
}

static void tdir_remove(tdir *d) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    if (strstr(d->dir, "/pm_test_faults.")) tu_sh(cmd);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted names in a directory, "\n"-joined (hidden files included). */
static char *listing(const char *dir) {
    DIR *dp = opendir(dir);
    if (!dp) return pm_strdup("");
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof *v);
        }
        v[n++] = pm_strdup(de->d_name);
    }
    closedir(dp);
    qsort(v, n, sizeof *v, cmp_str);
    pm_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        pm_buf_printf(&b, "%s\n", v[i]);
        free(v[i]);
    }
    free(v);
    pm_buf_cstr(&b);
    return b.data ? (char *)b.data : pm_strdup("");
}

static char *sub_listing(const char *table, const char *sub) {
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", table, sub);
    return listing(dir);
}

static int has_line(const char *text, const char *name) {
    size_t l = strlen(name);
    for (const char *p = text; (p = strstr(p, name)) != NULL; p += l)
        if ((p == text || p[-1] == '\n') && p[l] == '\n') return 1;
    return 0;
}

/* Live file names of snapshot id, sorted and "\n"-joined; NULL on error. */
static char *live_set(paimon_table *t, int64_t id) {
    pm_snapshot *s = NULL;
    pm_err e;
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) return NULL;
    pm_scan *sc;
    if (pm_scan_open(t, s, NULL, &sc, &e)) { pm_snapshot_free(s); return NULL; }
    char **v = NULL;
    size_t n = 0, cap = 0;
    const pm_manifest_entry *m;
    int rc;
    while ((rc = pm_scan_next(sc, &m, &e)) == PAIMON_OK) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            v = realloc(v, cap * sizeof *v);
        }
        v[n++] = pm_strdup(m->file.file_name);
    }
    pm_scan_close(sc);
    pm_snapshot_free(s);
    qsort(v, n, sizeof *v, cmp_str);
    pm_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        pm_buf_printf(&b, "%s\n", v[i]);
        free(v[i]);
    }
    free(v);
    pm_buf_cstr(&b);
    if (rc != PAIMON_DONE) { pm_buf_free(&b); return NULL; }
    return b.data ? (char *)b.data : pm_strdup("");
}

static int file_exists(const char *table, const char *name) {
    char p[800];
    struct stat st;
    snprintf(p, sizeof p, "%s/manifest/%s", table, name);
    return stat(p, &st) == 0;
}

/* Every file snapshot `id` needs exists; its names (lists + manifests) are
 * appended to refs. 0 if fine. */
static int snapshot_complete(paimon_table *t, int64_t id, pm_buf *refs) {
    pm_snapshot *s = NULL;
    pm_err e;
    if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) {
        fprintf(stderr, "  snapshot %lld: %s\n", (long long)id, e.msg);
        return -1;
    }
    int bad = 0;
    const char *lists[2] = {s->base_manifest_list, s->delta_manifest_list};
    for (int i = 0; i < 2; i++) {
        if (!lists[i] || !file_exists(t->root, lists[i])) {
            fprintf(stderr, "  snapshot %lld: missing list %s\n", (long long)id, lists[i] ? lists[i] : "(null)");
            bad = 1;
            continue;
        }
        if (refs) pm_buf_printf(refs, "%s\n", lists[i]);
        pm_mfile *v = NULL;
        size_t n = 0;
        if (pm_read_manifest_list(t, lists[i], &v, &n, &e)) { bad = 1; continue; }
        for (size_t j = 0; j < n; j++) {
            if (refs) pm_buf_printf(refs, "%s\n", v[j].name);
            if (!file_exists(t->root, v[j].name)) {
                fprintf(stderr, "  snapshot %lld: missing manifest %s\n", (long long)id, v[j].name);
                bad = 1;
            }
        }
        pm_mfiles_free(v, n);
    }
    pm_snapshot_free(s);
    if (!bad) {
        char *live = live_set(t, id);
        if (!live) { fprintf(stderr, "  snapshot %lld: scan failed\n", (long long)id); bad = 1; }
        free(live);
    }
    if (refs) pm_buf_cstr(refs);
    return bad ? -1 : 0;
}

/* ---- a FileIO recording the faulted operation; "after" mode ---------------- */

enum { MODE_BEFORE, MODE_AFTER, MODE_CRASH };
static const char *mode_name[] = {"before", "after", "crash"};

typedef struct rec_io {
    pm_fileio io;
    pm_fileio *inner;     /* the shared fault wrapper */
    int mode;
    long k;               /* MODE_AFTER: fail the k-th mutating operation after doing it */
    long mutations;
    int hit;              /* a fault was injected */
    int hit_snapshot;     /* ... on the creation of a snapshot file */
    char path[600];
    /* race: before the first snapshot create, another writer takes the id */
    pm_fileio *base;      /* the table's own FileIO (no faults, not counted) */
    const char *race_json_of;   /* branch root to copy the latest snapshot from */
    int planted;
    char planted_name[64];
} rec_io;

static pm_fileio_ops rec_ops;

static void rec_note(rec_io *r, const char *path, int rc, const pm_err *e) {
    if (rc == PAIMON_OK || r->hit || !strstr(e->msg, "injected fault")) return;
    r->hit = 1;
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

#define R(io) ((rec_io *)(io))

static int r_read_all(pm_fileio *io, const char *p, pm_buf *o, pm_err *e) {
    int rc = pm_io_read_all(R(io)->inner, p, o, e);
    rec_note(R(io), p, rc, e);
    return rc;
}
static int r_list(pm_fileio *io, const char *p, pm_dirent **o, size_t *n, pm_err *e) {
    int rc = pm_io_list(R(io)->inner, p, o, n, e);
    rec_note(R(io), p, rc, e);
    return rc;
}
static int r_stat(pm_fileio *io, const char *p, pm_stat *s, pm_err *e) {
    int rc = pm_io_stat(R(io)->inner, p, s, e);
    rec_note(R(io), p, rc, e);
    return rc;
}
static int r_exists(pm_fileio *io, const char *p, int *x, pm_err *e) {
    int rc = pm_io_exists(R(io)->inner, p, x, e);
    rec_note(R(io), p, rc, e);
    return rc;
}
static int r_write(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    int rc = pm_io_write_atomic(R(io)->inner, p, d, n, e);
    rec_note(R(io), p, rc, e);
    return rec_after(R(io), p, 0, rc, e);
}
/* Another writer's snapshot at `path`: the latest one, re-identified. */
static void plant(rec_io *r, const char *path) {
    const char *slash = strrchr(path, '-');
    int64_t id = slash ? atoll(slash + 1) : 0;
    int64_t lid = 0;
    pm_snapshot *s = NULL;
    pm_err e;
    if (pm_snapshot_latest_id(r->base, r->race_json_of, &lid, &e) ||
        pm_snapshot_read(r->base, r->race_json_of, lid, &s, &e))
        return;
    char uuid[37];
    pm_uuid4(uuid);
    free(s->uuid);
    s->uuid = pm_strdup(uuid);
    free(s->commit_user);
    s->commit_user = pm_strdup("another-writer");
    s->id = id;
    pm_buf j = {0};
    if (!pm_snapshot_to_json(s, &j) && pm_io_create_no_replace(r->base, path, j.data, j.len, &e) == PAIMON_OK) {
        r->planted = 1;
        snprintf(r->planted_name, sizeof r->planted_name, "snapshot-%lld", (long long)id);
    }
    pm_buf_free(&j);
    pm_snapshot_free(s);
}

static int r_create(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    if (R(io)->race_json_of && !R(io)->planted && strstr(p, "/snapshot/snapshot-")) plant(R(io), p);
    int was = R(io)->hit;
    int rc = pm_io_create_no_replace(R(io)->inner, p, d, n, e);
    rec_note(R(io), p, rc, e);
    if (!was && R(io)->hit) R(io)->hit_snapshot = strstr(p, "/snapshot/snapshot-") != NULL;
    return rec_after(R(io), p, 1, rc, e);
}
static int r_remove(pm_fileio *io, const char *p, pm_err *e) {
    int rc = pm_io_remove(R(io)->inner, p, e);
    rec_note(R(io), p, rc, e);
    return rec_after(R(io), p, 0, rc, e);
}
static int r_remove_within(pm_fileio *io, const char *root, const char *rel, int flags, pm_stat *st, pm_err *e) {
    int rc = pm_io_remove_within(R(io)->inner, root, rel, flags, st, e);
    char p[600];
    snprintf(p, sizeof p, "%s/%s", pm_local_path(root), rel);
    rec_note(R(io), p, rc, e);
    return flags & PM_RM_DRY_RUN ? rc : rec_after(R(io), p, 0, rc, e);
}
static int r_mkdirs(pm_fileio *io, const char *p, pm_err *e) {
    int rc = pm_io_mkdirs(R(io)->inner, p, e);
    rec_note(R(io), p, rc, e);
    return rec_after(R(io), p, 0, rc, e);
}
static void r_destroy(pm_fileio *io) { (void)io; }

/* Put rec(fault(t->io)) in place. */
static void faults_install(paimon_table *t, rec_io *r, int mode, long k) {
    rec_ops = (pm_fileio_ops){t->io->ops->scheme, r_read_all, r_list, r_stat, r_exists, r_write,
                              r_create, r_remove, r_remove_within, r_mkdirs, r_destroy, t->io->ops->caps, NULL, NULL};
    memset(r, 0, sizeof *r);
    r->base = t->io;
    r->io.ops = &rec_ops;
    r->mode = mode;
    r->k = k;
    r->inner = pm_fileio_fault_new(t->io, PM_FAULT_ALL, mode == MODE_AFTER ? 0 : k, mode == MODE_CRASH);
    t->io = &r->io;
}

/* Restore t->io; *ops = operations counted by the fault wrapper. */
static void faults_remove(paimon_table *t, rec_io *r, long *ops) {
    *ops = pm_fileio_fault_count(r->inner);
    t->io = pm_fileio_fault_release(r->inner);
}

/* ---- entries --------------------------------------------------------------- */

/* An ADD entry for a fake data file with a fixed creation time. */
static void tentry_init(tentry *x, const uint8_t *part, size_t plen, int bucket, const char *name, int64_t rows) {
    tentry_init_at(x, part, plen, bucket, name, rows, 1700000000000LL);
}

/* ---- the scenario loop ------------------------------------------------------- */

typedef struct scenario {
    const char *name;
    pm_manifest_entry *ents;
    size_t n;
    const char *added;     /* a file name the commit adds (or NULL) */
    const char *deleted;   /* a file name the commit deletes (or NULL) */
    size_t live_delta;     /* expected change of the live count (+adds - deletes) */
    int full, minor, roll; /* option tweaks */
    int race;              /* another writer takes the first snapshot id we try */
} scenario;

static void scenario_opts(paimon_table *t, const scenario *sc, pm_commit_opts *o) {
    pm_commit_opts_from_table(t, o);
    o->commit_user = "faults";
    o->identifier = 77;
    o->min_retry_wait_ms = 1;
    o->max_retry_wait_ms = 4;
    o->max_retries = 3;
    if (sc->minor) o->merge_min_count = 2;
    if (sc->full) o->full_compaction_threshold = 1;
    if (sc->roll) o->manifest_target_size = 1;
}

/* One run with the fault at k. Returns 1 when the fault was not hit (the
 * loop is done), 0 otherwise; failures are CHECKed. */
static int run_one(tdir *d, const scenario *sc, int mode, long k, long *ops_out) {
    char ctx[160];
    snprintf(ctx, sizeof ctx, "%s/%s k=%ld", sc->name, mode_name[mode], k);
    if (tdir_reset(d)) { CHECK(!"reset"); return 1; }
    paimon_table *t = NULL;
    pm_err e;
    if (pm_table_open(d->work, NULL, &t, &e)) { CHECK(!"open"); return 1; }
    int64_t before_id = -1;
    pm_snapshot_latest_id(t->io, t->branch_root, &before_id, &e);
    char *before_live = live_set(t, before_id);
    char *before_m = sub_listing(d->work, "manifest"), *before_s = sub_listing(d->work, "snapshot");

    pm_commit_opts o;
    scenario_opts(t, sc, &o);
    rec_io r;
    faults_install(t, &r, mode, k);
    if (sc->race) r.race_json_of = t->branch_root;
    int64_t id = -1;
    int rc = tu_commit(t, sc->ents, sc->n, &o, &id, &e);
    long ops = 0;
    faults_remove(t, &r, &ops);
    if (ops_out) *ops_out = ops;
    pm_table_free(t);

    /* a fresh handle without faults */
    t = NULL;
    if (pm_table_open(d->work, NULL, &t, &e)) { CHECK(!"reopen"); return 1; }
    int64_t now_id = -1;
    pm_snapshot_latest_id(t->io, t->branch_root, &now_id, &e);
    int ok = 1;
    /* every snapshot is complete and scannable */
    for (int64_t i = 1; i <= now_id; i++)
        if (snapshot_complete(t, i, NULL)) ok = 0;
    char *after_m = sub_listing(d->work, "manifest"), *after_s = sub_listing(d->work, "snapshot");
    if (rc == PAIMON_OK) {
        pm_buf refs = {0};
        if (id != before_id + 1 + r.planted || now_id != id) {
            fprintf(stderr, "  %s: committed id %lld, latest %lld, before %lld\n", ctx, (long long)id,
                    (long long)now_id, (long long)before_id);
            ok = 0;
        } else if (snapshot_complete(t, id, &refs)) {
            ok = 0;
        } else {
            char *live = live_set(t, id);
            size_t nb = 0, na = 0;
            for (const char *p = before_live; p && *p; p++) nb += *p == '\n';
            for (const char *p = live; p && *p; p++) na += *p == '\n';
            if (!live || na != nb + sc->live_delta || (sc->added && !has_line(live, sc->added)) ||
                (sc->deleted && has_line(live, sc->deleted))) {
                fprintf(stderr, "  %s: wrong live set after the commit (%zu files, had %zu)\n", ctx, na, nb);
                ok = 0;
            }
            free(live);
            /* no leftovers, unless the snapshot write was uncertain */
            if (!r.hit_snapshot) {
                char *copy = pm_strdup(after_m);
                for (char *l = strtok(copy, "\n"); l; l = strtok(NULL, "\n")) {
                    if (has_line(before_m, l)) continue;
                    if (!has_line((const char *)refs.data, l)) {
                        fprintf(stderr, "  %s: leftover manifest/%s (fault at %s)\n", ctx, l, r.path);
                        ok = 0;
                    }
                }
                free(copy);
            }
            /* exactly one new snapshot file (+ LATEST) */
            char want[64];
            snprintf(want, sizeof want, "snapshot-%lld", (long long)id);
            if (!has_line(after_s, want)) ok = 0;
        }
        pm_buf_free(&refs);
    } else {
        /* the table reads as before */
        char *live = now_id == before_id + r.planted ? live_set(t, now_id) : NULL;
        if (now_id != before_id + r.planted || !live || !before_live || strcmp(live, before_live)) {
            fprintf(stderr, "  %s: failed commit (%s) changed the table: latest %lld -> %lld\n", ctx, e.msg,
                    (long long)before_id, (long long)now_id);
            ok = 0;
        }
        free(live);
        if (r.planted) {   /* the other writer's snapshot is expected */
            char line[80];
            snprintf(line, sizeof line, "%s\n", r.planted_name);
            char *at = strstr(after_s, line);
            if (at && (at == after_s || at[-1] == '\n')) memmove(at, at + strlen(line), strlen(at + strlen(line)) + 1);
        }
        if (strcmp(before_s, after_s)) {
            fprintf(stderr, "  %s: snapshot/ changed:\n%s---\n%s", ctx, before_s, after_s);
            ok = 0;
        }
        /* no file of the failed attempt remains; a crash cannot clean up and
         * an uncertain snapshot write keeps its manifests */
        if (mode != MODE_CRASH && !r.hit_snapshot && strcmp(before_m, after_m)) {
            fprintf(stderr, "  %s: manifest/ changed (fault at %s):\n%s---\n%s", ctx, r.path, before_m, after_m);
            ok = 0;
        }
        if (!r.hit) {
            fprintf(stderr, "  %s: failed without a fault: %s\n", ctx, e.msg);
            ok = 0;
        }
    }
    if (!ok) {
        fprintf(stderr, "  FAILED %s (rc %d, fault at %s)\n", ctx, rc, r.hit ? r.path : "-");
        CHECK(ok);
    }
    free(after_m);
    free(after_s);
    free(before_live);
    free(before_m);
    free(before_s);
    pm_table_free(t);
    return !r.hit;
}

/* k = 1, 2, ... until a run does not hit the fault (sampled: geometric
 * steps, then the last 16 operations of the run that no fault hit).
 * Returns the runs. */
static long run_all(tdir *d, const scenario *sc, int mode) {
    long runs = 0, last = 0;
    for (long k = 1; k < 10000; k = tu_sweep_next(k)) {
        long ops = 0;
        runs++;
        if (run_one(d, sc, mode, k, &ops)) {
            for (long j = ops - 15 > last + 1 ? ops - 15 : last + 1; j <= ops && !t_cur_failed; j++, runs++)
                run_one(d, sc, mode, j, NULL);
            break;
        }
        last = k;
        if (t_cur_failed) break;   /* one report is enough */
    }
    return runs;
}

/* ---- tests -------------------------------------------------------------- */

typedef struct world {
    tdir d;
    paimon_table *pristine;
    pm_buf p10, p20;
    pm_snapshot *s;
    pm_scan *sc;
    const pm_manifest_entry *live;   /* a live entry of the pristine table */
} world;

static int world_open(world *w) {
    memset(w, 0, sizeof *w);
    pm_err e;
    if (tdir_make(&w->d) || pm_table_open(w->d.pristine, NULL, &w->pristine, &e)) return -1;
    paimon_table *t = w->pristine;
    int64_t lid;
    if (pm_snapshot_latest_id(t->io, t->branch_root, &lid, &e) || pm_snapshot_read(t->io, t->branch_root, lid, &w->s, &e))
        return -1;
    pm_scan *sc;
    if (pm_scan_open(t, w->s, NULL, &sc, &e)) return -1;
    const pm_manifest_entry *m;
    pm_buf p = {0};
    while (pm_scan_next(sc, &m, &e) == PAIMON_OK) {
        p.len = 0;
        pm_table_partition_path(t, m->partition, &p, &e);
        pm_buf_cstr(&p);
        pm_buf *dst = !strcmp((char *)p.data, "f1=10/") ? &w->p10 : !strcmp((char *)p.data, "f1=20/") ? &w->p20 : NULL;
        if (dst && !dst->len) pm_buf_append(dst, m->partition.ptr, m->partition.len);
    }
    pm_buf_free(&p);
    pm_scan_close(sc);
    /* keep one scan open: its first entry is the file to delete */
    if (pm_scan_open(t, w->s, NULL, &w->sc, &e) || pm_scan_next(w->sc, &w->live, &e) != PAIMON_OK) return -1;
    return w->p10.len && w->p20.len ? 0 : -1;
}

static void world_close(world *w) {
    pm_scan_close(w->sc);
    pm_snapshot_free(w->s);
    pm_table_free(w->pristine);
    pm_buf_free(&w->p10);
    pm_buf_free(&w->p20);
    tdir_remove(&w->d);
}

static void all_modes(world *w, scenario *sc) {
    for (int mode = MODE_BEFORE; mode <= MODE_CRASH; mode++) {
        long runs = run_all(&w->d, sc, mode);
        CHECK(runs > 1);
        printf("# %s %s: %ld runs\n", sc->name, mode_name[mode], runs);
    }
}

/* world_open, CHECKed; -1 (everything closed again) when there is no live file. */
static int world_begin(world *w) {
    CHECK(world_open(w) == 0);
    if (!w->live) { world_close(w); return -1; }
    return 0;
}

/* A scenario that adds one file `name` of 3 rows to f1=20 (p20) or f1=10,
 * bucket `bucket`, with the option tweaks full/minor/race; in all modes. */
static void one_add(const char *label, int p20, int bucket, const char *name, int full, int minor, int race) {
    world w;
    if (world_begin(&w)) return;
    const pm_buf *p = p20 ? &w.p20 : &w.p10;
    tentry x;
    tentry_init(&x, p->data, p->len, bucket, name, 3);
    scenario sc = {label, &x.m, 1, name, NULL, 1, full, minor, 0, race};
    all_modes(&w, &sc);
    tentry_free(&x);
    world_close(&w);
}

TEST(faults_append) { one_add("append", 0, 0, "data-fault-append.parquet", 0, 0, 0); }

TEST(faults_append_minor_merge) { one_add("minor-merge", 1, 1, "data-fault-minor.parquet", 0, 1, 0); }

TEST(faults_full_compaction) { one_add("full-compaction", 0, 1, "data-fault-full.parquet", 1, 0, 0); }

TEST(faults_delete) {
    world w;
    if (world_begin(&w)) return;
    pm_manifest_entry del[2];
    del[0] = *w.live;
    del[0].kind = PM_FILE_DELETE;
    tentry x;
    tentry_init(&x, w.p20.data, w.p20.len, 0, "data-fault-replace.parquet", 1);
    del[1] = x.m;
    char name[200];
    snprintf(name, sizeof name, "%s", w.live->file.file_name);
    scenario sc = {"delete+add", del, 2, "data-fault-replace.parquet", name, 0, 0, 0, 0, 0};
    all_modes(&w, &sc);
    tentry_free(&x);
    world_close(&w);
}

/* Rolled delta manifests (3 files) merged with the base (min count 2). */
TEST(faults_rolling) {
    world w;
    if (world_begin(&w)) return;
    enum { N = 2100 };
    tentry *x = calloc(N, sizeof *x);
    pm_manifest_entry *v = calloc(N, sizeof *v);
    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof name, "data-fault-roll-%04d.parquet", i);
        tentry_init(&x[i], (i % 3 ? w.p10 : w.p20).data, (i % 3 ? w.p10 : w.p20).len, i % 2, name, 1);
        v[i] = x[i].m;
    }
    scenario sc = {"rolling", v, N, "data-fault-roll-2099.parquet", NULL, N, 0, 1, 1, 0};
    all_modes(&w, &sc);
    for (int i = 0; i < N; i++) tentry_free(&x[i]);
    free(x);
    free(v);
    world_close(&w);
}

/* Another writer commits first: our attempt loses the id (its files are
 * removed) and the retry commits on top of the other snapshot. */
TEST(faults_lost_race) { one_add("lost-race", 0, 0, "data-fault-race.parquet", 0, 1, 1); }

int main(void) {
    RUN(faults_append);
    RUN(faults_append_minor_merge);
    RUN(faults_full_compaction);
    RUN(faults_delete);
    RUN(faults_rolling);
    RUN(faults_lost_race);
    return TEST_SUMMARY();
}
