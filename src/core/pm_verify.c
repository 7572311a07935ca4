/* Read-only table check (see pm_verify.h): collect every file the chosen
 * snapshots and tags need, each once, with the size recorded for it and
 * the first thing found needing it; then stat them on the thread pool. */
#include "pm_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pm_refs.h"
#include "pm_set.h"


const char *pm_verify_kind_name(int kind) {
    return kind >= 0 && kind < PM_K__N ? pm_file_kind_names[kind] : "files";
}

typedef struct need {
    char *path;
    int kind;
    int64_t size;        /* recorded size, -1 if none */
    char *by;            /* what needs it: "snapshot 7 of branch main", "tag t1" */
    int status;          /* 0 fine, 1 missing, 2 wrong size, 3 cannot stat */
    int64_t actual;
    char *msg;
} need;

typedef struct walk {
    pm_set *seen;        /* paths already in v */
    need *v;
    size_t n, cap;
    pm_verify_result *r;
    pm_fileio *io;
} walk;

static int want(walk *w, const char *path, int kind, int64_t size, const char *by, pm_err *e) {
    int added = pm_set_add(w->seen, path, strlen(path));
    if (added < 0) return pm_nomem(e);
    if (!added) return PAIMON_OK;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        need *nv = realloc(w->v, cap * sizeof *nv);
        if (!nv) return pm_nomem(e);
        w->v = nv;
        w->cap = cap;
    }
    need *x = &w->v[w->n];
    memset(x, 0, sizeof *x);
    x->path = pm_strdup(path);
    x->by = pm_strdup(by);
    x->kind = kind;
    x->size = size;
    if (!x->path || !x->by) { free(x->path); free(x->by); return pm_nomem(e); }
    w->n++;
    return PAIMON_OK;
}

/* A file that could not be read: a problem to report, not an error (only
 * out of memory stops the walk). */
static int unreadable(walk *w, const char *path, int kind, const char *by, const pm_err *why, pm_err *e) {
    char msg[1500];
    snprintf(msg, sizeof msg, "%s (needed by %s)", why->msg, by);
    return pm_clean_result_add(&w->r->unreadable, &w->r->n_unreadable, path, kind, 0, msg) ? pm_nomem(e) : PAIMON_OK;
}

/* A manifest (by name) that cannot be read, or names an invalid file:
 * reported by its path; out of memory stops the walk. */
static int manifest_problem(walk *w, paimon_table *bt, const char *name, const char *by, const pm_err *why,
                            pm_err *e) {
    if (why->code == PAIMON_NOMEM) return pm_nomem(e);
    char path[1200];
    snprintf(path, sizeof path, "%s/manifest/%s", bt->root, name);
    return unreadable(w, path, PM_K_MANIFEST, by, why, e);
}

/* schema/schema-<id> of branch bt (readers need the schema of the snapshot
 * and of every data file, for schema evolution). */
static int want_schema(walk *w, paimon_table *bt, int64_t id, const char *by, pm_buf *b, pm_err *e) {
    b->len = 0;
    if (pm_buf_printf(b, "%s/schema/schema-%lld", bt->branch_root, (long long)id)) return pm_nomem(e);
    return want(w, (char *)b->data, PM_VERIFY_SCHEMA, -1, by, e);
}

/* <table>/<sub>/<name>; an invalid name is reported (*ok = 0), not opened. */
static int want_meta(walk *w, paimon_table *t, const char *sub, const char *name, int kind, int64_t size,
                     const char *by, pm_buf *b, int *ok, pm_err *e) {
    pm_err why;
    *ok = 0;
    int rc = pm_table_meta_path(t, sub, name, b, &why);
    if (rc == PAIMON_NOMEM) { *e = why; return rc; }
    if (rc) return unreadable(w, name, kind, by, &why, e);
    *ok = 1;
    return want(w, (char *)b->data, kind, size, by, e);
}

/* A data or changelog file (+ its extra files and schema): paths on
 * another file system than the table's (s3:// external paths of a local
 * table, ...) are counted, not checked; a bad name or partition
 * is reported against the manifest that names it. */
static int want_data(walk *w, paimon_table *bt, const pm_manifest_entry *m, int kind, const char *manifest,
                     const char *by, pm_buf *b, pm_buf *x, pm_err *e) {
    pm_err why;
    int rc = pm_data_file_full_path(bt, m, b, &why);
    if (rc) return manifest_problem(w, bt, manifest, by, &why, e);
    if (!pm_uri_same_fileio(bt->root, (char *)b->data)) { w->r->not_checked++; return PAIMON_OK; }
    if ((rc = want(w, (char *)b->data, kind, m->file.file_size, by, e))) return rc;
    if ((rc = want_schema(w, bt, m->file.schema_id, by, x, e))) return rc;
    for (size_t k = 0; k < m->file.extra_files.n; k++) {
        rc = pm_extra_file_path((char *)b->data, m->file.extra_files.v[k], bt->root, x, &why);
        rc = rc ? manifest_problem(w, bt, manifest, by, &why, e) : want(w, (char *)x->data, kind, -1, by, e);
        if (rc) return rc;
    }
    return PAIMON_OK;
}

/* A manifest list and the manifests it names (appended to *v); *ok = 0 if
 * it cannot be read (reported). */
static int want_list(walk *w, paimon_table *t, const char *list, int64_t size, const char *by, pm_mfile **v,
                     size_t *n, int *ok, pm_err *e) {
    pm_buf b = {0};
    int rc = want_meta(w, t, "manifest", list, PM_K_MANIFEST_LIST, size, by, &b, ok, e);
    if (!rc && *ok) {
        pm_err why;
        size_t before = *n;
        int lr = pm_read_manifest_list(t, list, v, n, &why);
        *ok = lr == PAIMON_OK;
        if (lr == PAIMON_NOMEM) { *e = why; rc = lr; }
        else if (lr && lr != PAIMON_NOTFOUND) rc = unreadable(w, (char *)b.data, PM_K_MANIFEST_LIST, by, &why, e);
        /* (a missing list is reported by the stat) */
        for (size_t k = before; !rc && k < *n; k++) {
            int mok;
            rc = want_meta(w, t, "manifest", (*v)[k].name, PM_K_MANIFEST, (*v)[k].size, by, &b, &mok, e);
            if (!rc && !mok) (*v)[k].added = (*v)[k].deleted = -1;   /* not to be opened */
        }
    }
    pm_buf_free(&b);
    return rc;
}

/* What a manifest entry visitor of pm_refs needs here. */
typedef struct want_ctx {
    walk *w;
    paimon_table *bt;
    const char *by;
    int kind;            /* PM_K_DATA (live files) or PM_K_CHANGELOG */
} want_ctx;

static int want_entry(void *ud, const pm_manifest_entry *m, const char *manifest, pm_buf *out, pm_buf *scratch,
                      pm_err *e) {
    want_ctx *c = ud;
    (void)out;
    return want_data(c->w, c->bt, m, c->kind, manifest, c->by, &scratch[0], &scratch[1], e);
}

/* A manifest that cannot be read is reported; a missing one is left to
 * the stat of its path (it is wanted already). */
static int want_unreadable(void *ud, const char *manifest, int code, const pm_err *why, pm_err *e) {
    want_ctx *c = ud;
    return code == PAIMON_NOTFOUND ? PAIMON_OK : manifest_problem(c->w, c->bt, manifest, c->by, why, e);
}

/* Names of the manifests of v that can be opened (an invalid name is
 * reported already: added < 0). */
static const char **openable(const pm_mfile *v, size_t n, size_t *k) {
    const char **names = malloc((n ? n : 1) * sizeof *names);
    *k = 0;
    for (size_t i = 0; names && i < n; i++)
        if (v[i].added >= 0) names[(*k)++] = v[i].name;
    return names;
}

/* The live data files of base + delta (pm_refs_live's rule; a manifest
 * that cannot be read is reported, the others still count). */
static int want_live(walk *w, paimon_table *bt, const pm_mfile *v, size_t n, const char *by, pm_err *e) {
    size_t k;
    const char **names = openable(v, n, &k);
    if (!names) return pm_nomem(e);
    want_ctx c = {w, bt, by, PM_K_DATA};
    pm_refs_entry_visitor ev = {want_entry, NULL, want_unreadable, &c};
    int rc = pm_refs_live(bt, names, k, 1, PM_REFS_REPORT, &ev, e);
    free(names);
    return rc;
}

/* Files the ADD entries of a manifest list name (kind: PM_K_CHANGELOG for
 * a changelog list, PM_K_DATA for a long-lived changelog's delta). */
static int want_adds(walk *w, paimon_table *bt, const char *list, int64_t size, const char *by, int kind,
                     pm_err *e) {
    pm_mfile *v = NULL;
    size_t n = 0, k = 0;
    int ok;
    int rc = want_list(w, bt, list, size, by, &v, &n, &ok, e);
    const char **names = !rc && ok ? openable(v, n, &k) : NULL;
    if (!rc && ok && !names) rc = pm_nomem(e);
    want_ctx c = {w, bt, by, kind};
    pm_refs_entry_visitor ev = {want_entry, NULL, want_unreadable, &c};
    if (!rc && ok) rc = pm_refs_adds(bt, names, k, PM_REFS_REPORT, &ev, e);
    free(names);
    pm_mfiles_free(v, n);
    return rc;
}

/* The index files an index manifest adds (Java writes only ADDs; a DELETE
 * needs nothing). */
typedef struct index_ctx {
    walk *w;
    paimon_table *bt;
    const char *by, *path;   /* path: of the index manifest */
    pm_buf x;
} index_ctx;

static int want_index_file(void *ud, const pm_index_entry *ie, pm_err *e) {
    index_ctx *c = ud;
    if (ie->kind != PM_FILE_ADD) return PAIMON_OK;
    pm_err xe;
    int xr = pm_index_file_path(c->bt, ie, &c->x, &xe);
    if (xr == PAIMON_NOMEM) { *e = xe; return xr; }
    if (xr) return unreadable(c->w, c->path, PM_K_INDEX_MANIFEST, c->by, &xe, e);
    if (!pm_uri_same_fileio(c->bt->root, (char *)c->x.data)) { c->w->r->not_checked++; return PAIMON_OK; }
    return want(c->w, (char *)c->x.data, PM_K_INDEX, ie->file_size, c->by, e);
}

/* Everything snapshot (or tag) s of branch bt needs, in the order
 * pm_refs_snapshot_names gives its files (the live set once base and
 * delta are known). */
typedef struct snap_ctx {
    walk *w;
    paimon_table *bt;
    const char *by;
    pm_mfile *v;         /* the manifests of base + delta */
    size_t n;
    int live_done;
    pm_buf b;
} snap_ctx;

static int want_live_once(snap_ctx *c, pm_err *e) {
    if (c->live_done) return PAIMON_OK;
    c->live_done = 1;
    return want_live(c->w, c->bt, c->v, c->n, c->by, e);
}

static int want_name(void *ud, pm_refs_name_kind kind, const char *name, int64_t size, pm_err *e) {
    snap_ctx *c = ud;
    int ok, rc;
    if (kind == PM_REFS_BASE_LIST || kind == PM_REFS_DELTA_LIST)
        return want_list(c->w, c->bt, name, size, c->by, &c->v, &c->n, &ok, e);
    if ((rc = want_live_once(c, e))) return rc;   /* what could be read (a broken list is reported) */
    if (kind == PM_REFS_CHANGELOG_LIST) return want_adds(c->w, c->bt, name, size, c->by, PM_K_CHANGELOG, e);
    if (kind == PM_REFS_STATISTICS) return want_meta(c->w, c->bt, "statistics", name, PM_K_STATISTICS, -1, c->by, &c->b, &ok, e);
    /* the index manifest and its files */
    if ((rc = want_meta(c->w, c->bt, "manifest", name, PM_K_INDEX_MANIFEST, -1, c->by, &c->b, &ok, e)) || !ok) return rc;
    index_ctx ic = {c->w, c->bt, c->by, (char *)c->b.data, {0}};
    pm_err why;
    int mr = pm_refs_index_files(c->bt, name, want_index_file, &ic, &why);
    pm_buf_free(&ic.x);
    if (mr == PAIMON_NOMEM) { *e = why; return mr; }
    if (mr && mr != PAIMON_NOTFOUND) return unreadable(c->w, (char *)c->b.data, PM_K_INDEX_MANIFEST, c->by, &why, e);
    return PAIMON_OK;
}

static int want_snapshot(walk *w, paimon_table *bt, const pm_snapshot *s, const char *by, pm_err *e) {
    snap_ctx c = {w, bt, by, NULL, 0, 0, {0}};
    int rc = want_schema(w, bt, s->schema_id, by, &c.b, e);
    if (!rc) rc = pm_refs_snapshot_names(s, want_name, &c, e);
    if (!rc) rc = want_live_once(&c, e);
    pm_mfiles_free(c.v, c.n);
    pm_buf_free(&c.b);
    return rc;
}

/* A long-lived changelog's delta list while it exists, in a table without
 * a changelog producer (Java keeps the list then, and streaming readers
 * read the changes from it; with a producer they read the changelog list
 * and Java deletes the delta): the data files it adds. */
static int want_changelog_delta(walk *w, paimon_table *bt, const pm_snapshot *s, const char *by, pm_err *e) {
    const char *producer = pm_schema_option_or_default(bt->schema, "changelog-producer");
    if (producer && strcasecmp(producer, "none") != 0) return PAIMON_OK;
    pm_buf b = {0};
    int ex = 0;
    int rc = pm_table_meta_path(bt, "manifest", s->delta_manifest_list, &b, e);
    if (!rc) rc = pm_io_exists(bt->io, (char *)b.data, &ex, e);
    pm_buf_free(&b);
    if (rc || !ex) return rc;
    return want_adds(w, bt, s->delta_manifest_list,
                     s->delta_manifest_list_size.has ? s->delta_manifest_list_size.v : -1, by, PM_K_DATA, e);
}

/* Tags (all they need) and long-lived changelogs (the files their
 * changelog lists add, and their delta's additions while the delta list
 * exists: streaming readers read them; their base and delta lists may be
 * gone already, as Java deletes them). */
static int want_source(void *ud, paimon_table *bt, pm_refs_source src, const char *by, const pm_snapshot *s,
                       pm_err *e) {
    walk *w = ud;
    w->r->checked[PM_K_SNAPSHOT]++;
    if (src == PM_REFS_TAG) { w->r->tags++; return want_snapshot(w, bt, s, by, e); }
    w->r->changelogs++;
    int rc = s->changelog_manifest_list
                 ? want_adds(w, bt, s->changelog_manifest_list,
                             s->changelog_manifest_list_size.has ? s->changelog_manifest_list_size.v : -1, by,
                             PM_K_CHANGELOG, e)
                 : PAIMON_OK;
    return !rc && s->delta_manifest_list ? want_changelog_delta(w, bt, s, by, e) : rc;
}

static int source_unreadable(void *ud, pm_refs_source src, const char *path, const char *by, const pm_err *why,
                             pm_err *e) {
    walk *w = ud;
    if (src == PM_REFS_TAG) w->r->tags++;
    return unreadable(w, path, PM_K_SNAPSHOT, by, why, e);
}

/* The chosen snapshots, every tag and every long-lived changelog of one
 * branch. */
static int want_branch(walk *w, paimon_table *bt, const pm_verify_opts *o, pm_err *e) {

    char by[400];
    int64_t *ids = NULL;
    size_t n = 0;
    int rc;
    if (o->all_snapshots) {
        rc = pm_snapshot_list_ids(bt->io, bt->branch_root, &ids, &n, e);
    } else {
        int64_t latest = 0;
        rc = pm_snapshot_latest_id(bt->io, bt->branch_root, &latest, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
        else if (!rc && !(ids = malloc(sizeof *ids))) rc = pm_nomem(e);
        else if (!rc) ids[n++] = latest;
    }
    if (rc) { pm_err_prefix(e, "cannot verify branch %s", bt->branch); free(ids); return rc; }
    pm_buf sp = {0};
    for (size_t i = 0; !rc && i < n; i++) {
        snprintf(by, sizeof by, "snapshot %lld of branch %s", (long long)ids[i], bt->branch);
        pm_snapshot *s = NULL;
        pm_err why;
        int sr = pm_snapshot_read(bt->io, bt->branch_root, ids[i], &s, &why);
        w->r->snapshots++;
        if (sr == PAIMON_NOMEM) rc = pm_nomem(e);
        else if (sr) {
            sp.len = 0;
            rc = pm_buf_printf(&sp, "%s/snapshot/snapshot-%lld", bt->branch_root, (long long)ids[i])
                     ? pm_nomem(e) : unreadable(w, (char *)sp.data, PM_K_SNAPSHOT, by, &why, e);
        } else {
            w->r->checked[PM_K_SNAPSHOT]++;
            rc = want_snapshot(w, bt, s, by, e);
        }
        pm_snapshot_free(s);
    }
    int64_t walked = !o->all_snapshots && n ? ids[0] : -1;   /* the latest */
    free(ids);
    ids = NULL;
    n = 0;
    /* without --all-snapshots the other snapshot files are read, not
     * walked: one that contradicts itself (an "id" other than its name,
     * values Java refuses, a missing schema) misleads every maintenance run */
    if (!rc && !o->all_snapshots) {
        if ((rc = pm_snapshot_list_ids(bt->io, bt->branch_root, &ids, &n, e)))
            pm_err_prefix(e, "cannot verify branch %s", bt->branch);
        for (size_t i = 0; !rc && i < n; i++) {
            if (ids[i] == walked) continue;
            pm_snapshot *s = NULL;
            pm_err why;
            int sr = pm_snapshot_read(bt->io, bt->branch_root, ids[i], &s, &why);
            pm_snapshot_free(s);
            if (sr == PAIMON_NOTFOUND) continue;                /* expired meanwhile */
            if (sr == PAIMON_OK) w->r->checked[PM_K_SNAPSHOT]++;
            else if (sr == PAIMON_NOMEM) rc = pm_nomem(e);
            else if (sr) {
                snprintf(by, sizeof by, "snapshot %lld of branch %s", (long long)ids[i], bt->branch);
                sp.len = 0;
                rc = pm_buf_printf(&sp, "%s/snapshot/snapshot-%lld", bt->branch_root, (long long)ids[i])
                         ? pm_nomem(e) : unreadable(w, (char *)sp.data, PM_K_SNAPSHOT, by, &why, e);
            }
        }
        free(ids);
    }
    pm_buf_free(&sp);
    if (rc) return rc;
    pm_refs_visitor v = {PM_REFS_REPORT, NULL, {0, 0, 0}, want_source, source_unreadable, w};
    rc = pm_refs_tags(bt, &v, e);
    return rc ? rc : pm_refs_changelogs(bt, &v, e);
}

static void stat_one(void *ctx, size_t i) {
    walk *w = ctx;
    need *x = &w->v[i];
    pm_stat st;
    pm_err e;
    int rc = pm_io_stat(w->io, x->path, &st, &e);
    if (rc == PAIMON_NOTFOUND) { x->status = 1; return; }
    if (rc) { x->status = 3; x->msg = pm_strdup(e.msg); return; }
    if (st.is_dir) { x->status = 3; x->msg = pm_strdup("is a directory"); return; }
    x->actual = st.size;
    if (x->size >= 0 && st.size != x->size) x->status = 2;
}

int pm_verify(paimon_table *t, const pm_verify_opts *o, pm_verify_result *r, pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(r, 0, sizeof *r);
    walk w = {pm_set_new(), NULL, 0, 0, r, t->io};
    paimon_table *main_t = NULL;
    char **bnames = NULL;
    size_t nb = 0;
    int rc = w.seen ? PAIMON_OK : pm_nomem(e);
    if (!rc) rc = pm_table_open_shared(t, "main", &main_t, e);
    if (!rc) rc = pm_table_check_manifest_format(main_t, e);
    if (!rc) rc = pm_branch_list(t->io, t->root, &bnames, &nb, e);
    if (!rc) { r->branches++; rc = want_branch(&w, main_t, o, e); }
    for (size_t i = 0; !rc && i < nb; i++) {
        paimon_table *bt;
        if ((rc = pm_table_open_shared(t, bnames[i], &bt, e))) {
            pm_err_prefix(e, "cannot verify branch '%s'", bnames[i]);
            break;
        }
        r->branches++;
        rc = pm_table_check_manifest_format(bt, e);
        if (!rc) rc = want_branch(&w, bt, o, e);
        pm_table_free_shared(bt);
    }
    if (!rc) rc = pm_exec_run(o->threads, w.n, stat_one, &w, "checking files", o->progress, o->progress_ud, e);
    for (size_t i = 0; !rc && i < w.n; i++) {
        need *x = &w.v[i];
        r->checked[x->kind]++;
        char msg[1500];
        switch (x->status) {
        case 1:
            snprintf(msg, sizeof msg, "missing; needed by %s", x->by);
            if (pm_clean_result_add(&r->missing, &r->n_missing, x->path, x->kind, x->size, msg)) rc = pm_nomem(e);
            break;
        case 2:
            snprintf(msg, sizeof msg, "%lld bytes on disk, %lld recorded (needed by %s)", (long long)x->actual,
                     (long long)x->size, x->by);
            if (pm_clean_result_add(&r->wrong_size, &r->n_wrong_size, x->path, x->kind, x->actual, msg)) rc = pm_nomem(e);
            break;
        case 3:
            snprintf(msg, sizeof msg, "%s (needed by %s)", x->msg ? x->msg : "cannot stat", x->by);
            if (pm_clean_result_add(&r->unreadable, &r->n_unreadable, x->path, x->kind, 0, msg)) rc = pm_nomem(e);
            break;
        default:
            break;
        }
    }
    for (size_t i = 0; i < w.n; i++) { free(w.v[i].path); free(w.v[i].by); free(w.v[i].msg); }
    free(w.v);
    pm_set_free(w.seen);
    pm_strv_free(bnames, nb);
    pm_table_free_shared(main_t);
    r->duration_ms = pm_now_millis() - t0;
    if (rc) pm_verify_result_free(r);
    return rc;
}

static void items_free(pm_clean_item *v, size_t n) {
    for (size_t i = 0; i < n; i++) { free(v[i].path); free(v[i].msg); }
    free(v);
}

void pm_verify_result_free(pm_verify_result *r) {
    items_free(r->missing, r->n_missing);
    items_free(r->wrong_size, r->n_wrong_size);
    items_free(r->unreadable, r->n_unreadable);
    r->missing = r->wrong_size = r->unreadable = NULL;
    r->n_missing = r->n_wrong_size = r->n_unreadable = 0;
}
