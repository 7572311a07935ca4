/* Read-only table check (see pm_verify.h): collect every file the chosen
 * snapshots and tags need, each once, with the size recorded for it and
 * the first thing found needing it; then stat them on the thread pool. */
#include "pm_verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_expire.h"
#include "pm_set.h"

static int nomem(pm_err *e) { return pm_fail(e, PAIMON_NOMEM, "out of memory"); }

const char *pm_verify_kind_name(int kind) {
    return kind == PM_VERIFY_SCHEMA ? "schemas" : kind >= 0 && kind < PM_K__N ? pm_file_kind_names[kind] : "files";
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
    if (added < 0) return nomem(e);
    if (!added) return PAIMON_OK;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        need *nv = realloc(w->v, cap * sizeof *nv);
        if (!nv) return nomem(e);
        w->v = nv;
        w->cap = cap;
    }
    need *x = &w->v[w->n];
    memset(x, 0, sizeof *x);
    x->path = pm_strdup(path);
    x->by = pm_strdup(by);
    x->kind = kind;
    x->size = size;
    if (!x->path || !x->by) { free(x->path); free(x->by); return nomem(e); }
    w->n++;
    return PAIMON_OK;
}

/* A file that could not be read: a problem to report, not an error (only
 * out of memory stops the walk). */
static int unreadable(walk *w, const char *path, int kind, const char *by, const pm_err *why, pm_err *e) {
    char msg[1500];
    snprintf(msg, sizeof msg, "%s (needed by %s)", why->msg, by);
    return pm_clean_result_add(&w->r->unreadable, &w->r->n_unreadable, path, kind, 0, msg) ? nomem(e) : PAIMON_OK;
}

/* A manifest (by name) that cannot be read, or names an invalid file:
 * reported by its path; out of memory stops the walk. */
static int manifest_problem(walk *w, paimon_table *bt, const char *name, const char *by, const pm_err *why,
                            pm_err *e) {
    if (why->code == PAIMON_NOMEM) return nomem(e);
    char path[1200];
    snprintf(path, sizeof path, "%s/manifest/%s", bt->root, name);
    return unreadable(w, path, PM_K_MANIFEST, by, why, e);
}

/* Open manifest m of a list for its entries; *r = NULL when it cannot be
 * (an invalid name or a missing file, reported elsewhere; another failure,
 * reported here). */
static int open_entries(walk *w, paimon_table *bt, const pm_mfile *m, const char *by, pm_manifest_reader **r,
                        pm_err *e) {
    *r = NULL;
    if (m->added < 0) return PAIMON_OK;                       /* an invalid name, reported */
    pm_err why;
    int rc = pm_table_open_manifest(bt, m->name, PM_MANIFEST_FILE, r, &why);
    if (rc == PAIMON_OK) return PAIMON_OK;
    *r = NULL;
    return rc == PAIMON_NOTFOUND ? PAIMON_OK : manifest_problem(w, bt, m->name, by, &why, e);   /* missing: the stat */
}

/* schema/schema-<id> of branch bt (readers need the schema of the snapshot
 * and of every data file, for schema evolution). */
static int want_schema(walk *w, paimon_table *bt, int64_t id, const char *by, pm_buf *b, pm_err *e) {
    b->len = 0;
    if (pm_buf_printf(b, "%s/schema/schema-%lld", bt->branch_root, (long long)id)) return nomem(e);
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

/* A data or changelog file (+ its extra files and schema): remote paths
 * (s3://, oss://, ...) are counted, not checked; a bad name or partition
 * is reported against the manifest that names it. */
static int want_data(walk *w, paimon_table *bt, const pm_manifest_entry *m, int kind, const char *manifest,
                     const char *by, pm_buf *b, pm_buf *x, pm_err *e) {
    pm_err why;
    int rc = pm_data_file_full_path(bt, m, b, &why);
    if (rc) return manifest_problem(w, bt, manifest, by, &why, e);
    if (strstr((char *)b->data, "://")) { w->r->not_checked++; return PAIMON_OK; }
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
static int want_list(walk *w, paimon_table *t, const char *list, pm_opt_i64 size, const char *by, pm_mfile **v,
                     size_t *n, int *ok, pm_err *e) {
    pm_buf b = {0};
    int rc = want_meta(w, t, "manifest", list, PM_K_MANIFEST_LIST, size.has ? size.v : -1, by, &b, ok, e);
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

/* An ADD entry kept until the DELETEs of every manifest are known. */
typedef struct add_rec {
    pm_manifest_entry m;     /* deep copy (arena) */
    size_t manifest;         /* index in the list vector */
} add_rec;

/* Live data files of base + delta: every readable manifest read once (one
 * that cannot be read is reported, the others still count), DELETE
 * identifiers cancel ADDs, as Paimon merges entries. */
static int want_live(walk *w, paimon_table *bt, const pm_mfile *v, size_t n, const char *by, pm_err *e) {
    pm_set *deleted = pm_set_new();
    pm_arena *ar = pm_arena_new(1 << 16);
    add_rec *adds = NULL;
    size_t na = 0, cap = 0;
    pm_buf key = {0}, b = {0}, x = {0};
    int rc = deleted && ar ? PAIMON_OK : nomem(e);
    for (size_t i = 0; !rc && i < n; i++) {
        pm_manifest_reader *r;
        if ((rc = open_entries(w, bt, &v[i], by, &r, e)) || !r) continue;
        pm_err why;
        int mr = PAIMON_DONE;
        const pm_manifest_entry *m;
        while (!rc && (mr = pm_manifest_next_entry(r, &m, &why)) == PAIMON_OK) {
            if (pm_file_identifier(m, &key)) { rc = nomem(e); break; }
            if (m->kind == PM_FILE_DELETE) {
                if (pm_set_add(deleted, key.data, key.len) < 0) rc = nomem(e);
                continue;
            }
            if (na == cap) {
                cap = cap ? cap * 2 : 256;
                add_rec *nv = realloc(adds, cap * sizeof *nv);
                if (!nv) { rc = nomem(e); break; }
                adds = nv;
            }
            /* the entry dies with the block: a deep copy into the arena */
            adds[na].manifest = i;
            if (pm_manifest_entry_copy(ar, m, &adds[na].m)) { rc = nomem(e); break; }
            na++;
        }
        pm_manifest_close(r);
        if (!rc && mr != PAIMON_DONE) rc = manifest_problem(w, bt, v[i].name, by, &why, e);
    }
    for (size_t i = 0; !rc && i < na; i++) {
        if (pm_file_identifier(&adds[i].m, &key)) { rc = nomem(e); break; }
        if (pm_set_contains(deleted, key.data, key.len)) continue;
        rc = want_data(w, bt, &adds[i].m, PM_K_DATA, v[adds[i].manifest].name, by, &b, &x, e);
    }
    free(adds);
    pm_arena_free(ar);
    pm_set_free(deleted);
    pm_buf_free(&key);
    pm_buf_free(&b);
    pm_buf_free(&x);
    return rc;
}

/* Files the ADD entries of a changelog manifest list name. */
static int want_changelog(walk *w, paimon_table *bt, const char *list, pm_opt_i64 size, const char *by, pm_err *e) {
    pm_mfile *v = NULL;
    size_t n = 0;
    int ok;
    pm_buf b = {0}, x = {0};
    int rc = want_list(w, bt, list, size, by, &v, &n, &ok, e);
    for (size_t i = 0; !rc && ok && i < n; i++) {
        pm_manifest_reader *r;
        if ((rc = open_entries(w, bt, &v[i], by, &r, e)) || !r) continue;
        pm_err why;
        int mr = PAIMON_DONE;
        const pm_manifest_entry *m;
        while (!rc && (mr = pm_manifest_next_entry(r, &m, &why)) == PAIMON_OK)
            if (m->kind == PM_FILE_ADD) rc = want_data(w, bt, m, PM_K_CHANGELOG, v[i].name, by, &b, &x, e);
        pm_manifest_close(r);
        if (!rc && mr != PAIMON_DONE) rc = manifest_problem(w, bt, v[i].name, by, &why, e);
    }
    pm_mfiles_free(v, n);
    pm_buf_free(&b);
    pm_buf_free(&x);
    return rc;
}

/* Everything snapshot (or tag) s of branch bt needs. */
static int want_snapshot(walk *w, paimon_table *bt, const pm_snapshot *s, const char *by, pm_err *e) {
    pm_mfile *v = NULL;
    size_t n = 0;
    int ok_base = 1, ok_delta = 1, ok, rc;
    pm_buf b = {0}, x = {0};
    pm_err why;
    rc = want_schema(w, bt, s->schema_id, by, &b, e);
    if (!rc && s->base_manifest_list)
        rc = want_list(w, bt, s->base_manifest_list, s->base_manifest_list_size, by, &v, &n, &ok_base, e);
    if (!rc && s->delta_manifest_list)
        rc = want_list(w, bt, s->delta_manifest_list, s->delta_manifest_list_size, by, &v, &n, &ok_delta, e);
    /* the live files of what could be read (a broken list is reported) */
    if (!rc) rc = want_live(w, bt, v, n, by, e);
    pm_mfiles_free(v, n);
    if (!rc && s->changelog_manifest_list)
        rc = want_changelog(w, bt, s->changelog_manifest_list, s->changelog_manifest_list_size, by, e);
    /* index manifest and its files */
    if (!rc && s->index_manifest) {
        rc = want_meta(w, bt, "manifest", s->index_manifest, PM_K_INDEX_MANIFEST, -1, by, &b, &ok, e);
        pm_manifest_reader *r;
        int mr = rc || !ok ? PAIMON_NOTFOUND : pm_table_open_manifest(bt, s->index_manifest, PM_INDEX_MANIFEST, &r, &why);
        if (mr == PAIMON_OK) {
            const pm_index_entry *ie;
            while (!rc && (mr = pm_manifest_next_index(r, &ie, &why)) == PAIMON_OK) {
                if (ie->kind != PM_FILE_ADD) continue;   /* Java writes only ADDs; a DELETE needs nothing */
                pm_err xe;
                int xr = pm_index_file_path(bt, ie, &x, &xe);
                if (xr == PAIMON_NOMEM) { *e = xe; rc = xr; break; }
                if (xr) rc = unreadable(w, (char *)b.data, PM_K_INDEX_MANIFEST, by, &xe, e);
                else if (strstr((char *)x.data, "://")) w->r->not_checked++;
                else rc = want(w, (char *)x.data, PM_K_INDEX, ie->file_size, by, e);
            }
            pm_manifest_close(r);
            if (!rc && mr != PAIMON_DONE)
                rc = mr == PAIMON_NOMEM ? nomem(e) : unreadable(w, (char *)b.data, PM_K_INDEX_MANIFEST, by, &why, e);
        } else if (!rc && mr != PAIMON_NOTFOUND) {
            rc = mr == PAIMON_NOMEM ? nomem(e) : unreadable(w, (char *)b.data, PM_K_INDEX_MANIFEST, by, &why, e);
        }
    }
    if (!rc && s->statistics) rc = want_meta(w, bt, "statistics", s->statistics, PM_K_STATISTICS, -1, by, &b, &ok, e);
    pm_buf_free(&b);
    pm_buf_free(&x);
    return rc;
}

/* The chosen snapshots and every tag of one branch. */
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
        else if (!rc && !(ids = malloc(sizeof *ids))) rc = nomem(e);
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
        if (sr == PAIMON_NOMEM) rc = nomem(e);
        else if (sr) {
            sp.len = 0;
            rc = pm_buf_printf(&sp, "%s/snapshot/snapshot-%lld", bt->branch_root, (long long)ids[i])
                     ? nomem(e) : unreadable(w, (char *)sp.data, PM_K_SNAPSHOT, by, &why, e);
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
            else if (sr == PAIMON_NOMEM) rc = nomem(e);
            else if (sr) {
                snprintf(by, sizeof by, "snapshot %lld of branch %s", (long long)ids[i], bt->branch);
                sp.len = 0;
                rc = pm_buf_printf(&sp, "%s/snapshot/snapshot-%lld", bt->branch_root, (long long)ids[i])
                         ? nomem(e) : unreadable(w, (char *)sp.data, PM_K_SNAPSHOT, by, &why, e);
            }
        }
        free(ids);
    }
    pm_buf_free(&sp);
    if (rc) return rc;
    char **tags = NULL;
    size_t nt = 0;
    if ((rc = pm_tag_list(bt->io, bt->branch_root, &tags, &nt, e))) {
        pm_err_prefix(e, "cannot list the tags of branch %s", bt->branch);
        return rc;
    }
    for (size_t i = 0; !rc && i < nt; i++) {
        snprintf(by, sizeof by, "tag %s of branch %s", tags[i], bt->branch);
        pm_snapshot *s = NULL;
        pm_err why;
        int sr = pm_tag_read(bt->io, bt->branch_root, tags[i], &s, &why);
        w->r->tags++;
        if (sr == PAIMON_NOMEM) rc = nomem(e);
        else if (sr) {
            pm_buf tp = {0};
            rc = pm_buf_printf(&tp, "%s/tag/tag-%s", bt->branch_root, tags[i])
                     ? nomem(e) : unreadable(w, (char *)tp.data, PM_K_SNAPSHOT, by, &why, e);
            pm_buf_free(&tp);
        } else {
            w->r->checked[PM_K_SNAPSHOT]++;
            rc = want_snapshot(w, bt, s, by, e);
        }
        pm_snapshot_free(s);
    }
    pm_strv_free(tags, nt);
    if (rc) return rc;
    /* long-lived changelogs (changelog/changelog-<id>, decoupled lifecycle):
     * streaming readers read the files their changelog lists add (their
     * base and delta lists may be gone already, as Java deletes them) */
    int64_t *cids = NULL;
    size_t nc = 0;
    if ((rc = pm_changelog_list_ids(bt->io, bt->branch_root, &cids, &nc, e))) {
        pm_err_prefix(e, "cannot list the changelogs of branch %s", bt->branch);
        return rc;
    }
    for (size_t i = 0; !rc && i < nc; i++) {
        snprintf(by, sizeof by, "changelog %lld of branch %s", (long long)cids[i], bt->branch);
        pm_snapshot *s = NULL;
        pm_err why;
        int sr = pm_changelog_read(bt->io, bt->branch_root, cids[i], &s, &why);
        if (sr == PAIMON_NOMEM) rc = nomem(e);
        else if (sr) {
            pm_buf cp = {0};
            rc = pm_buf_printf(&cp, "%s/changelog/changelog-%lld", bt->branch_root, (long long)cids[i])
                     ? nomem(e) : unreadable(w, (char *)cp.data, PM_K_SNAPSHOT, by, &why, e);
            pm_buf_free(&cp);
        } else {
            w->r->checked[PM_K_SNAPSHOT]++;
            w->r->changelogs++;
            if (s->changelog_manifest_list)
                rc = want_changelog(w, bt, s->changelog_manifest_list, s->changelog_manifest_list_size, by, e);
        }
        pm_snapshot_free(s);
    }
    free(cids);
    return rc;
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
    int rc = w.seen ? PAIMON_OK : nomem(e);
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
            if (pm_clean_result_add(&r->missing, &r->n_missing, x->path, x->kind, x->size, msg)) rc = nomem(e);
            break;
        case 2:
            snprintf(msg, sizeof msg, "%lld bytes on disk, %lld recorded (needed by %s)", (long long)x->actual,
                     (long long)x->size, x->by);
            if (pm_clean_result_add(&r->wrong_size, &r->n_wrong_size, x->path, x->kind, x->actual, msg)) rc = nomem(e);
            break;
        case 3:
            snprintf(msg, sizeof msg, "%s (needed by %s)", x->msg ? x->msg : "cannot stat", x->by);
            if (pm_clean_result_add(&r->unreadable, &r->n_unreadable, x->path, x->kind, 0, msg)) rc = nomem(e);
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
