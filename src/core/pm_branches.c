/* Branches (pm_branches.h): Java's FileSystemBranchManager on our FileIO,
 * deletion through pm_protect (the one rule of what stays needed). */
#include "pm_branches.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_protect.h"
#include "pm_refs.h"
#include "pm_tags.h"

int pm_branch_name_check(const char *name, pm_err *e) {
    int rc = pm_tag_name_check("branch", name, e);
    if (rc) {
        /* Java's words for a blank name */
        if (name && !strstr(e->msg, "file name")) return pm_fail(e, PAIMON_MISUSE, "Branch name '%s' is blank.", name);
        return rc;
    }
    if (!strcmp(name, "main"))
        return pm_fail(e, PAIMON_MISUSE, "Branch name 'main' is the default branch and cannot be used.");
    const char *p = name;
    while (*p >= '0' && *p <= '9') p++;
    if (!*p) return pm_fail(e, PAIMON_MISUSE, "Branch name cannot be pure numeric string but is '%s'.", name);
    return PAIMON_OK;
}

static int branch_root(const paimon_table *t, const char *name, pm_buf *out, pm_err *e) {
    out->len = 0;
    return pm_buf_printf(out, "%s/branch/branch-%s", t->root, name) || pm_buf_cstr(out) ? pm_nomem(e) : PAIMON_OK;
}

/* <broot>/<dir>/<dir>-<suffix> */
static int meta_file(const char *broot, const char *dir, const char *suffix, pm_buf *out, pm_err *e) {
    out->len = 0;
    return pm_buf_printf(out, "%s/%s/%s-%s", broot, dir, dir, suffix) || pm_buf_cstr(out) ? pm_nomem(e) : PAIMON_OK;
}

static int meta_file_id(const char *broot, const char *dir, int64_t id, pm_buf *out, pm_err *e) {
    char s[24];
    snprintf(s, sizeof s, "%lld", (long long)id);
    return meta_file(broot, dir, s, out, e);
}

static int read_file(pm_fileio *io, const char *path, pm_buf *out, pm_err *e) {
    out->len = 0;
    return pm_io_read_meta(io, path, PM_META_MAX, out, e);
}

static int branch_exists(paimon_table *t, const char *broot, int *ex, pm_err *e) {
    return pm_io_exists(t->io, broot, ex, e);
}

/* ---- create ------------------------------------------------------------------- */

/* One file to write: its path and bytes (owned). */
typedef struct wfile { char *path; pm_buf bytes; } wfile;

static void wfiles_free(wfile *v, size_t n) {
    for (size_t i = 0; i < n; i++) { free(v[i].path); pm_buf_free(&v[i].bytes); }
    free(v);
}

static int wfile_push(wfile **v, size_t *n, const char *path, const void *p, size_t len, pm_err *e) {
    wfile *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) return pm_nomem(e);
    *v = nv;
    wfile *w = &nv[*n];
    memset(w, 0, sizeof *w);
    if (!(w->path = pm_strdup(path)) || pm_buf_append(&w->bytes, p, len)) {
        free(w->path);
        pm_buf_free(&w->bytes);
        return pm_nomem(e);
    }
    (*n)++;
    return PAIMON_OK;
}

/* Schemas 0..upto of t's branch that exist, as Java's copySchemasToBranch. */
static int plan_schemas(paimon_table *t, const char *broot, int64_t upto, wfile **v, size_t *n, pm_err *e) {
    int64_t *ids = NULL;
    size_t ni = 0;
    pm_buf src = {0}, dst = {0}, bytes = {0};
    int rc = pm_schema_list_ids(t->io, t->branch_root, &ids, &ni, e);
    for (size_t i = 0; !rc && i < ni && ids[i] <= upto; i++) {
        if (ids[i] < 0) continue;
        if (!(rc = meta_file_id(t->branch_root, "schema", ids[i], &src, e)) &&
            !(rc = meta_file_id(broot, "schema", ids[i], &dst, e)) && !(rc = read_file(t->io, (char *)src.data, &bytes, e)))
            rc = wfile_push(v, n, (char *)dst.data, bytes.data, bytes.len, e);
    }
    free(ids);
    pm_buf_free(&src);
    pm_buf_free(&dst);
    pm_buf_free(&bytes);
    return rc;
}

/* The tag file, and the snapshot file: main's bytes, or (the snapshot has
 * expired and the tag kept it) the tag's snapshot as Java's
 * Tag.trimToSnapshot().toJson(). */
static int plan_from_tag(paimon_table *t, const char *broot, const char *tag, pm_snapshot **s, wfile **v, size_t *n,
                         pm_err *e) {
    pm_buf src = {0}, dst = {0}, bytes = {0};
    int rc = meta_file(t->branch_root, "tag", tag, &src, e);
    if (!rc) {
        rc = read_file(t->io, (char *)src.data, &bytes, e);
        if (rc == PAIMON_NOTFOUND) rc = pm_fail(e, PAIMON_NOTFOUND, "Tag name '%s' not exists (%s).", tag, (char *)src.data);
    }
    if (!rc) rc = pm_snapshot_parse((const char *)bytes.data, bytes.len, (char *)src.data, s, e);
    if (!rc && !(rc = meta_file(broot, "tag", tag, &dst, e)))
        rc = wfile_push(v, n, (char *)dst.data, bytes.data, bytes.len, e);
    if (!rc && !(rc = meta_file_id(t->branch_root, "snapshot", (*s)->id, &src, e))) {
        rc = read_file(t->io, (char *)src.data, &bytes, e);
        if (rc == PAIMON_NOTFOUND) {
            pm_err_clear(e);
            rc = pm_tag_to_json(*s, -1, 0, &bytes) ? pm_nomem(e) : PAIMON_OK;
        }
    }
    if (!rc && !(rc = meta_file_id(broot, "snapshot", (*s)->id, &dst, e)))
        rc = wfile_push(v, n, (char *)dst.data, bytes.data, bytes.len, e);
    pm_buf_free(&src);
    pm_buf_free(&dst);
    pm_buf_free(&bytes);
    return rc;
}

static int mkdirs_of(pm_fileio *io, const char *path, pm_err *e) {
    const char *slash = strrchr(path, '/');
    if (!slash) return PAIMON_OK;
    char *dir = pm_strndup(path, (size_t)(slash - path));
    if (!dir) return pm_nomem(e);
    int rc = pm_io_mkdirs(io, dir, e);
    free(dir);
    return rc;
}

int pm_branch_create(paimon_table *t, const char *name, const char *from_tag, int dry_run, pm_branch_created *out,
                     pm_err *e) {
    memset(out, 0, sizeof *out);
    int rc = pm_branch_name_check(name, e);
    if (rc) return rc;
    if (from_tag && (rc = pm_tag_name_check("tag", from_tag, e))) return rc;
    pm_buf broot = {0};
    wfile *files = NULL;
    size_t nf = 0;
    pm_snapshot *s = NULL;
    int ex = 0;
    if (!(rc = branch_root(t, name, &broot, e)) && !(rc = branch_exists(t, (char *)broot.data, &ex, e)) && ex)
        rc = pm_fail(e, PAIMON_EXISTS, "Branch name '%s' already exists (%s).", name, (char *)broot.data);
    if (!rc && from_tag) rc = plan_from_tag(t, (char *)broot.data, from_tag, &s, &files, &nf, e);
    int64_t upto = s ? s->schema_id : t->schema->id;
    size_t n_tagged = nf;
    if (!rc) rc = plan_schemas(t, (char *)broot.data, upto, &files, &nf, e);
    if (!rc) {
        out->snapshot_id = s ? s->id : 0;
        out->schema_id = upto;
        out->n_files = nf;
        snprintf(out->path, sizeof out->path, "%s", (char *)broot.data);
    }
    /* schemas first, then tag, then snapshot: every prefix of the writes is
     * a readable (empty or tagged) branch; no file is ever replaced */
    for (size_t k = 0; !rc && !dry_run && k < nf; k++) {
        wfile *w = &files[k < nf - n_tagged ? n_tagged + k : k - (nf - n_tagged)];
        if (!(rc = mkdirs_of(t->io, w->path, e)))
            rc = pm_io_create_no_replace(t->io, w->path, w->bytes.data, w->bytes.len, e);
        if (rc == PAIMON_EXISTS) pm_err_prefix(e, "Branch name '%s' already exists", name);
        else if (rc) pm_err_prefix(e, "creating branch '%s' (%zu of %zu files written; delete it and retry)", name, k, nf);
    }
    pm_snapshot_free(s);
    wfiles_free(files, nf);
    pm_buf_free(&broot);
    return rc;
}

/* ---- delete ------------------------------------------------------------------- */

typedef struct tree_files { pm_strv first, last; const char *broot; pm_buf path; } tree_files;

/* Files that make the branch reference data (snapshots, hints, tags,
 * changelogs) go first; schemas, consumers and anything else last. */
static int collect_file(void *ud, const char *rel, const pm_stat *st, pm_err *e) {
    tree_files *c = ud;
    (void)st;
    c->path.len = 0;
    if (pm_buf_printf(&c->path, "%s/%s", c->broot, rel) || pm_buf_cstr(&c->path)) return pm_nomem(e);
    int first = !strncmp(rel, "snapshot/", 9) || !strncmp(rel, "tag/", 4) || !strncmp(rel, "changelog/", 10);
    return pm_strv_push(first ? &c->first : &c->last, (char *)c->path.data) ? pm_nomem(e) : PAIMON_OK;
}

/* Local file systems: the branch's directories, deepest first, once they
 * are empty (a file that appeared meanwhile keeps its directory). */
int pm_branches_remove_empty_dirs(paimon_table *t, const char *rel, pm_err *e) {
    pm_buf dir = {0}, sub = {0};
    pm_dirent *ents = NULL;
    size_t n = 0;
    int rc = pm_buf_printf(&dir, "%s/%s", t->root, rel) || pm_buf_cstr(&dir) ? pm_nomem(e) : PAIMON_OK;
    if (!rc) rc = pm_io_list(t->io, (char *)dir.data, &ents, &n, e);
    for (size_t i = 0; !rc && i < n; i++) {
        if (!ents[i].is_dir) continue;
        sub.len = 0;
        if (pm_buf_printf(&sub, "%s/%s", rel, ents[i].name) || pm_buf_cstr(&sub)) rc = pm_nomem(e);
        else rc = pm_branches_remove_empty_dirs(t, (char *)sub.data, e);
    }
    pm_stat st;
    if (!rc) rc = pm_io_remove_within(t->io, t->root, rel, PM_RM_EMPTY_DIR, &st, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
    pm_dirents_free(ents, n);
    pm_buf_free(&dir);
    pm_buf_free(&sub);
    return rc;
}

static int run_deleter(pm_deleter *d, paimon_table *t, const pm_clean_opts *co, const char *phase,
                       pm_clean_result *r, pm_err *e) {
    int rc = pm_deleter_run(d, t->io, t->root, co, phase, r, e);
    if (!rc && !co->dry_run && r->n_failures)
        rc = pm_fail(e, PAIMON_IO, "%s: %zu file(s) could not be deleted (first: %s: %s); run the deletion again",
                     t->root, r->n_failures, r->failures[0].path, r->failures[0].msg);
    return rc;
}

static int add_all(pm_deleter *d, const pm_strv *v, pm_err *e) {
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < v->n; i++) rc = pm_deleter_add(d, v->v[i], pm_meta_kind(v->v[i]), e);
    return rc;
}

/* Whether the branch has schema files (a branch without any, left by a
 * crash while deleting its last files, holds nothing). */
static int has_schema(paimon_table *t, const char *broot, int *has, pm_err *e) {
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = pm_schema_list_ids(t->io, broot, &ids, &n, e);
    free(ids);
    *has = n > 0;
    return rc;
}

typedef struct branch_tags { pm_protect *x; pm_protect_plan *pl; } branch_tags;

static int branch_tag_cand(void *ud, paimon_table *bt, pm_refs_source src, const char *by, const pm_snapshot *s,
                           pm_err *e) {
    branch_tags *c = ud;
    (void)by;
    return src == PM_REFS_TAG ? pm_protect_plan_dropped(c->x, bt, s, PM_PROTECT_LIVE, 1, c->pl, e) : PAIMON_OK;
}

/* What deleting branch `name` frees: the live files, changelog files and
 * metadata files of its snapshots and tags that nothing of main and the
 * other branches needs (pm_protect). An unreadable file of any of them, or
 * of a snapshot or tag of the branch going away, refuses. */
static int plan_branch_deletion(paimon_table *t, const char *name, int threads, pm_protect_plan *pl, pm_err *e) {
    pm_protect *x = NULL;
    paimon_table *victim = NULL;
    pm_snapshot **v = NULL;
    size_t k = 0;
    pm_protect_spec sp = {.branch = name, .whole_branch = 1, .refs_above = INT64_MAX,
                          .refusing = "refusing to delete branch", .threads = threads};
    int rc = pm_protect_build(t, &sp, &x, e);
    if (!rc && (rc = pm_table_open_shared(t, name, &victim, e))) pm_err_prefix(e, "refusing to delete branch '%s'", name);
    if (!rc) rc = pm_refs_snapshots(victim, INT64_MIN, &v, &k, e);
    /* the first snapshot's (and after a gap the next one's) whole live set,
     * then each delta's additions: every file a snapshot of the branch
     * holds is one of them (a file only a non-derived snapshot brought back
     * stays, for orphan cleaning) */
    for (size_t i = 0; !rc && i < k; i++)
        if ((rc = pm_protect_plan_dropped(x, victim, v[i],
                                          i == 0 || v[i]->id != v[i - 1]->id + 1 ? PM_PROTECT_LIVE
                                                                                  : PM_PROTECT_DELTA_ADDS,
                                          1, pl, e)))
            pm_err_prefix(e, "refusing to delete branch '%s': cannot read what snapshot %lld holds", name,
                          (long long)v[i]->id);
    if (!rc) {
        branch_tags c = {x, pl};
        pm_refs_visitor tv = {PM_REFS_REFUSE, "refusing to delete branch", {0, PAIMON_CORRUPT, 0}, branch_tag_cand,
                              NULL, &c};
        rc = pm_refs_tags(victim, &tv, e);
    }
    pm_refs_snapshots_free(v, k);
    if (victim) pm_table_free_shared(victim);
    pm_protect_free(x);
    return rc;
}

int pm_branch_delete(paimon_table *t, const char *name, const pm_branch_delete_opts *o, pm_branch_delete_result *r,
                     pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(r, 0, sizeof *r);
    r->clean.dry_run = o->dry_run;
    int rc = pm_branch_name_check(name, e);
    if (!rc) rc = pm_table_check_manifest_format(t, e);
    if (rc) return rc;
    pm_buf broot = {0}, fp0 = {0}, fp1 = {0};
    tree_files tf;
    memset(&tf, 0, sizeof tf);
    pm_deleter *first = pm_deleter_new(), *data = pm_deleter_new(), *manifests = pm_deleter_new(),
               *lists = pm_deleter_new(), *last = pm_deleter_new();
    if (!first || !data || !manifests || !lists || !last) rc = pm_nomem(e);
    int ex = 0, schemas = 0;
    if (!rc && !(rc = branch_root(t, name, &broot, e)) && !(rc = branch_exists(t, (char *)broot.data, &ex, e)) && !ex)
        rc = pm_fail(e, PAIMON_NOTFOUND, "Branch name '%s' doesn't exist (%s).", name, (char *)broot.data);
    tf.broot = (char *)broot.data;
    if (!rc) rc = pm_io_list_tree(t->io, (char *)broot.data, collect_file, &tf, e);
    if (!rc) rc = has_schema(t, (char *)broot.data, &schemas, e);
    if (!rc && !schemas && tf.first.n)
        rc = pm_fail(e, PAIMON_CORRUPT, "%s: branch '%s' has snapshot or tag files but no schema; refusing to delete",
                     (char *)broot.data, name);
    if (!rc) rc = pm_refs_fingerprint(t, &fp0, e);
    if (!rc && schemas)
    {
        pm_protect_plan pl = {data, manifests, lists, 0, 0};
        rc = plan_branch_deletion(t, name, o->threads, &pl, e);
        r->clean.protected_files = pl.protected_files;
    }
    if (!rc && (rc = pm_refs_fingerprint(t, &fp1, e)) == PAIMON_OK &&
        !pm_buf_eq(&fp0, &fp1))
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: tags, branches or consumers changed while planning the branch deletion; nothing deleted, run again",
                     t->root);
    if (!rc) rc = add_all(first, &tf.first, e);
    if (!rc) rc = add_all(last, &tf.last, e);
    pm_clean_opts co = {o->threads, o->dry_run, 1, o->progress, o->progress_ud, 0};
    /* what references files first, then the files, then the rest of the
     * directory: a crash leaves orphans, never a reference to a deleted file */
    pm_deleter *phases[5] = {first, data, manifests, lists, last};
    static const char *const phase_names[5] = {"branch snapshots and tags", "data files", "manifests",
                                               "manifest lists", "branch directory"};
    for (int ph = 0; !rc && ph < 5; ph++) {
        if ((rc = run_deleter(phases[ph], t, &co, phase_names[ph], &r->clean, e)))
            pm_err_prefix(e, "deleting branch '%s' (%s)", name, phase_names[ph]);
    }
    if (!rc) r->n_branch_files = tf.first.n + tf.last.n;
    if (!rc && !o->dry_run && !pm_io_has(t->io, PM_IO_VIRTUAL_DIRS)) {
        pm_buf rel = {0};
        if (pm_buf_printf(&rel, "branch/branch-%s", name) || pm_buf_cstr(&rel)) rc = pm_nomem(e);
        else rc = pm_branches_remove_empty_dirs(t, (char *)rel.data, e);
        if (rc == PAIMON_EXISTS) pm_err_prefix(e, "branch '%s': files appeared in its directory while deleting it", name);
        pm_buf_free(&rel);
    }
    pm_strv_clear(&tf.first);
    pm_strv_clear(&tf.last);
    pm_buf_free(&tf.path);
    pm_deleter_free(first);
    pm_deleter_free(data);
    pm_deleter_free(manifests);
    pm_deleter_free(lists);
    pm_deleter_free(last);
    pm_buf_free(&broot);
    pm_buf_free(&fp0);
    pm_buf_free(&fp1);
    r->clean.duration_ms = pm_now_millis() - t0;
    if (rc) pm_clean_result_free(&r->clean);
    return rc;
}

/* ---- rename ------------------------------------------------------------------- */

void pm_branch_renamed_free(pm_branch_renamed *r) { pm_strv_clear(&r->moved); }

/* One file of the branch: its path relative to the branch directory, its
 * bytes and what the listing said of it. */
typedef struct rn_file { char *rel; pm_buf bytes; pm_stat st; int rank; } rn_file;
typedef struct rn_list { rn_file *v; size_t n; } rn_list;

static void rn_list_free(rn_list *l) {
    for (size_t i = 0; i < l->n; i++) { free(l->v[i].rel); pm_buf_free(&l->v[i].bytes); }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* Write order: schemas, then consumers, tags and changelogs, then the
 * snapshots, then their hints. */
static int rn_rank(const char *rel) {
    if (!strncmp(rel, "schema/", 7)) return 0;
    if (!strncmp(rel, "snapshot/", 9))
        return !strcmp(rel, "snapshot/EARLIEST") || !strcmp(rel, "snapshot/LATEST") ? 3 : 2;
    return 1;
}

static int rn_collect(void *ud, const char *rel, const pm_stat *st, pm_err *e) {
    rn_list *l = ud;
    rn_file *nv = realloc(l->v, (l->n + 1) * sizeof *nv);
    if (!nv) return pm_nomem(e);
    l->v = nv;
    rn_file *f = &nv[l->n];
    memset(f, 0, sizeof *f);
    if (!(f->rel = pm_strdup(rel))) return pm_nomem(e);
    f->st = *st;
    f->rank = rn_rank(rel);
    l->n++;
    return PAIMON_OK;
}

static int rn_cmp(const void *a, const void *b) {
    const rn_file *x = a, *y = b;
    if (x->rank != y->rank) return x->rank - y->rank;
    return strcmp(x->rel, y->rel);
}

/* The same files with the same sizes and modification times. */
static int rn_same(const rn_list *a, const rn_list *b) {
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].rel, b->v[i].rel) || a->v[i].st.size != b->v[i].st.size ||
            a->v[i].st.mtime_ms != b->v[i].st.mtime_ms)
            return 0;
    return 1;
}

static int rn_list_tree(paimon_table *t, const char *root, rn_list *l, pm_err *e) {
    int rc = pm_io_list_tree(t->io, root, rn_collect, l, e);
    if (!rc) qsort(l->v, l->n, sizeof *l->v, rn_cmp);
    return rc;
}

/* Remove the files of list l under root (already gone is fine): schemas
 * (last) or everything else (first), so every moment leaves a readable
 * branch or none; then, on a local file system, the directory rel once
 * empty. Only the first `n` files of l (those written, for a copy). */
static int rn_remove(paimon_table *t, const char *root, const char *rel, const rn_list *l, size_t n, int schemas,
                     pm_err *e) {
    pm_buf p = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        const rn_file *f = &l->v[i];
        if ((f->rank == 0) != schemas) continue;
        p.len = 0;
        if (pm_buf_printf(&p, "%s/%s", root, f->rel) || pm_buf_cstr(&p)) { rc = pm_nomem(e); break; }
        rc = pm_io_remove(t->io, (char *)p.data, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
    }
    pm_buf_free(&p);
    if (!rc && rel && !pm_io_has(t->io, PM_IO_VIRTUAL_DIRS)) rc = pm_branches_remove_empty_dirs(t, rel, e);
    return rc;
}

/* Snapshots, hints, tags, changelogs and consumers, then the schemas. */
static int rn_remove_all(paimon_table *t, const char *root, const char *name, const rn_list *l, size_t n, pm_err *e) {
    pm_buf rel = {0};
    int rc = pm_buf_printf(&rel, "branch/branch-%s", name) || pm_buf_cstr(&rel) ? pm_nomem(e) : PAIMON_OK;
    if (!rc) rc = rn_remove(t, root, NULL, l, n, 0, e);
    if (!rc) rc = rn_remove(t, root, (char *)rel.data, l, n, 1, e);
    pm_buf_free(&rel);
    return rc;
}

/* A branch directory that holds no file is no branch (pm_branches_list):
 * a crash before the first copy landed leaves one. */
static int rn_count(void *ud, const char *rel, const pm_stat *st, pm_err *e) {
    (void)rel;
    (void)st;
    (void)e;
    (*(size_t *)ud)++;
    return PAIMON_OK;
}

static int rn_has_files(paimon_table *t, const char *root, int *has, pm_err *e) {
    int ex = 0;
    size_t n = 0;
    *has = 0;
    int rc = branch_exists(t, root, &ex, e);
    if (!rc && ex) rc = pm_io_list_tree(t->io, root, rn_count, &n, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
    *has = n > 0;
    return rc;
}

static int rn_check(paimon_table *t, const char *from, const char *to, pm_err *e) {
    /* Java's order and words */
    if (from && !strcmp(from, "main")) return pm_fail(e, PAIMON_MISUSE, "Cannot rename the main branch.");
    int rc = pm_tag_name_check("branch", from, e);
    if (!rc && !strcmp(from, t->branch))
        rc = pm_fail(e, PAIMON_MISUSE, "rename_branch: '%s' is the branch this table is opened on", from);
    return rc ? rc : pm_tag_name_check("branch", to, e);
}

int pm_branch_rename(paimon_table *t, const char *from, const char *to, int dry_run, pm_branch_renamed *r, pm_err *e) {
    memset(r, 0, sizeof *r);
    int rc = rn_check(t, from, to, e);
    if (rc) return rc;
    pm_buf src = {0}, dst = {0}, p = {0};
    rn_list files = {0}, again = {0};
    int ex = 0;
    if (!(rc = branch_root(t, from, &src, e)) && !(rc = branch_exists(t, (char *)src.data, &ex, e)) && !ex)
        rc = pm_fail(e, PAIMON_NOTFOUND, "Branch name '%s' doesn't exist (%s).", from, (char *)src.data);
    if (!rc && !(rc = branch_root(t, to, &dst, e)) && !(rc = rn_has_files(t, (char *)dst.data, &ex, e)) && ex)
        rc = pm_fail(e, PAIMON_EXISTS, "Branch name '%s' already exists (%s).", to, (char *)dst.data);
    if (!rc) rc = pm_branch_name_check(to, e);
    if (!rc) rc = rn_list_tree(t, (char *)src.data, &files, e);
    if (!rc && files.n == 0)   /* an empty directory is no branch (pm_branches_list) */
        rc = pm_fail(e, PAIMON_NOTFOUND, "Branch name '%s' doesn't exist (%s holds no file).", from, (char *)src.data);
    for (size_t i = 0; !rc && i < files.n; i++) {
        p.len = 0;
        if (pm_buf_printf(&p, "%s/%s", (char *)src.data, files.v[i].rel) || pm_buf_cstr(&p)) { rc = pm_nomem(e); break; }
        if ((rc = pm_io_read_meta(t->io, (char *)p.data, PM_META_MAX, &files.v[i].bytes, e))) {
            pm_err_prefix(e, "refusing to rename branch '%s'; nothing changed", from);
            break;
        }
        p.len = 0;
        if (pm_buf_printf(&p, "%s/%s", (char *)dst.data, files.v[i].rel) || pm_buf_cstr(&p) ||
            pm_strv_push(&r->moved, (char *)p.data))
            rc = pm_nomem(e);
    }
    if (!rc) {
        r->n_files = files.n;
        snprintf(r->path, sizeof r->path, "%s", (char *)dst.data);
    }
    size_t written = 0;
    for (size_t i = 0; !rc && !dry_run && i < files.n; i++) {
        const char *path = r->moved.v[i];
        if (!(rc = mkdirs_of(t->io, path, e)))
            rc = pm_io_create_no_replace(t->io, path, files.v[i].bytes.data, files.v[i].bytes.len, e);
        if (!rc) { written++; continue; }
        if (rc == PAIMON_EXISTS) {
            /* someone else's branch: ours are not told apart from theirs, leave it */
            pm_err_prefix(e, "Branch name '%s' appeared while renaming '%s' to it; '%s' is unchanged", to, from, from);
            break;
        }
        pm_err_prefix(e, "renaming branch '%s' to '%s' (%zu of %zu files copied; '%s' is unchanged)", from, to, written,
                      files.n, from);
        pm_err keep = *e;   /* the copies go again, best effort: the error stays the copy's */
        if (rn_remove_all(t, (char *)dst.data, to, &files, written, e) == PAIMON_OK) *e = keep;
        else {
            *e = keep;
            pm_err_prefix(e, "(the partial copy '%s' is left: delete that branch)", to);
        }
    }
    if (!rc && !dry_run) rc = rn_list_tree(t, (char *)src.data, &again, e);
    if (!rc && !dry_run && !rn_same(&files, &again)) {
        if (!(rc = rn_remove_all(t, (char *)dst.data, to, &files, files.n, e)))
            rc = pm_fail(e, PAIMON_CONFLICT, "branch '%s' changed while renaming it (a commit or tag meanwhile); "
                         "nothing renamed, run again", from);
        else pm_err_prefix(e, "branch '%s' changed while renaming it; removing the copies under '%s'", from, to);
    }
    if (!rc && !dry_run && (rc = rn_remove_all(t, (char *)src.data, from, &files, files.n, e)))
        pm_err_prefix(e, "branch '%s' was copied to '%s' but its old files could not all be removed "
                      "(delete branch '%s')", from, to, from);
    rn_list_free(&files);
    rn_list_free(&again);
    pm_buf_free(&src);
    pm_buf_free(&dst);
    pm_buf_free(&p);
    if (rc) pm_branch_renamed_free(r);
    return rc;
}

/* ---- fast-forward ---------------------------------------------------------------- */

typedef struct ff_plan {
    wfile *schemas, *tags, *snaps;       /* the branch's files, as they go to t's branch */
    size_t n_schemas, n_tags, n_snaps;
    pm_strv del_tags, del_snaps, del_schemas;   /* t's files that go (snapshots descending) */
    int64_t *del_schema_ids;
} ff_plan;

static void ff_plan_free(ff_plan *p) {
    wfiles_free(p->schemas, p->n_schemas);
    wfiles_free(p->tags, p->n_tags);
    wfiles_free(p->snaps, p->n_snaps);
    pm_strv_clear(&p->del_tags);
    pm_strv_clear(&p->del_snaps);
    pm_strv_clear(&p->del_schemas);
    free(p->del_schema_ids);
}

/* Every file of the branch's dir `sub` ("snapshot", "schema", "tag"):
 * read and parsed (an unreadable one refuses), destined for t's branch. */
static int read_branch_dir(paimon_table *t, const char *broot, const char *sub, wfile **v, size_t *n, pm_err *e) {
    char **names = NULL;
    int64_t *ids = NULL;
    size_t nn = 0;
    int rc;
    if (!strcmp(sub, "snapshot")) rc = pm_snapshot_list_ids(t->io, broot, &ids, &nn, e);
    else if (!strcmp(sub, "schema")) rc = pm_schema_list_ids(t->io, broot, &ids, &nn, e);
    else rc = pm_tag_list(t->io, broot, &names, &nn, e);
    pm_buf src = {0}, dst = {0}, bytes = {0};
    char idtext[24];
    for (size_t i = 0; !rc && i < nn; i++) {
        const char *suffix = names ? names[i] : idtext;
        if (!names) snprintf(idtext, sizeof idtext, "%lld", (long long)ids[i]);
        if ((rc = meta_file(broot, sub, suffix, &src, e)) || (rc = meta_file(t->branch_root, sub, suffix, &dst, e)) ||
            (rc = read_file(t->io, (char *)src.data, &bytes, e)))
            break;
        if (!strcmp(sub, "schema")) {
            pm_schema *sc = NULL;
            rc = pm_schema_parse((const char *)bytes.data, bytes.len, (char *)src.data, &sc, e);
            pm_schema_free(sc);
        } else {
            pm_snapshot *s = NULL;
            rc = pm_snapshot_parse((const char *)bytes.data, bytes.len, (char *)src.data, &s, e);
            pm_snapshot_free(s);
        }
        if (!rc) rc = wfile_push(v, n, (char *)dst.data, bytes.data, bytes.len, e);
    }
    free(ids);
    pm_strv_free(names, nn);
    pm_buf_free(&src);
    pm_buf_free(&dst);
    pm_buf_free(&bytes);
    return rc;
}

static const wfile *find_wfile(const wfile *v, size_t n, const char *path) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].path, path)) return &v[i];
    return NULL;
}

/* Schema ids t's snapshots and tags below `below` and its long-lived
 * changelogs (fast-forward keeps them all) use: they stay. */
static int used_schemas(paimon_table *t, int64_t below, pm_set *used, pm_err *e) {
    pm_snapshot **v = NULL;
    size_t n = 0;
    char key[24];
    int rc = pm_refs_snapshots(t, INT64_MIN, &v, &n, e);
    for (size_t i = 0; !rc && i < n && v[i]->id < below; i++) {
        snprintf(key, sizeof key, "%lld", (long long)v[i]->schema_id);
        if (pm_set_add(used, key, strlen(key)) < 0) rc = pm_nomem(e);
    }
    pm_refs_snapshots_free(v, n);
    char **names = NULL;
    size_t nn = 0;
    if (!rc) rc = pm_tag_list(t->io, t->branch_root, &names, &nn, e);
    for (size_t i = 0; !rc && i < nn; i++) {
        pm_snapshot *s = NULL;
        if ((rc = pm_tag_read(t->io, t->branch_root, names[i], &s, e))) break;
        snprintf(key, sizeof key, "%lld", (long long)s->schema_id);
        if (s->id < below && pm_set_add(used, key, strlen(key)) < 0) rc = pm_nomem(e);
        pm_snapshot_free(s);
    }
    pm_strv_free(names, nn);
    int64_t *cids = NULL;
    size_t nc = 0;
    if (!rc) rc = pm_changelog_list_ids(t->io, t->branch_root, &cids, &nc, e);
    for (size_t i = 0; !rc && i < nc; i++) {
        pm_snapshot *s = NULL;
        if ((rc = pm_changelog_read(t->io, t->branch_root, cids[i], &s, e))) break;
        snprintf(key, sizeof key, "%lld", (long long)s->schema_id);
        if (pm_set_add(used, key, strlen(key)) < 0) rc = pm_nomem(e);
        pm_snapshot_free(s);
    }
    free(cids);
    return rc;
}

/* t's files that go: tags of snapshots >= earliest, snapshots >= earliest
 * (descending), schemas >= the earliest's schema id that the branch does
 * not have. A schema t keeps using may neither go nor change. */
static int plan_ff_deletions(paimon_table *t, int64_t earliest, int64_t schema_id, ff_plan *p, pm_err *e) {
    char **names = NULL;
    int64_t *ids = NULL;
    size_t n = 0;
    pm_buf path = {0};
    int rc = pm_tag_list(t->io, t->branch_root, &names, &n, e);
    for (size_t i = 0; !rc && i < n; i++) {
        pm_snapshot *s = NULL;
        if ((rc = pm_tag_read(t->io, t->branch_root, names[i], &s, e))) {
            pm_err_prefix(e, "refusing to fast-forward: cannot read tag '%s'", names[i]);
            break;
        }
        if (s->id >= earliest && !(rc = meta_file(t->branch_root, "tag", names[i], &path, e)) &&
            pm_strv_push(&p->del_tags, (char *)path.data))
            rc = pm_nomem(e);
        pm_snapshot_free(s);
    }
    pm_strv_free(names, n);
    if (!rc) rc = pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, e);
    for (size_t i = n; !rc && i-- > 0;)
        if (ids[i] >= earliest && !(rc = meta_file_id(t->branch_root, "snapshot", ids[i], &path, e)) &&
            pm_strv_push(&p->del_snaps, (char *)path.data))
            rc = pm_nomem(e);
    free(ids);
    ids = NULL;
    n = 0;
    pm_set *used = pm_set_new();
    int used_read = 0;
    pm_buf bytes = {0};
    if (!rc && !used) rc = pm_nomem(e);
    if (!rc) rc = pm_schema_list_ids(t->io, t->branch_root, &ids, &n, e);
    for (size_t i = 0; !rc && i < n; i++) {
        if (ids[i] < 0) continue;
        const wfile *b;
        if ((rc = meta_file_id(t->branch_root, "schema", ids[i], &path, e))) break;
        if ((b = find_wfile(p->schemas, p->n_schemas, (char *)path.data))) {
            if ((rc = read_file(t->io, (char *)path.data, &bytes, e))) break;
            if (bytes.len == b->bytes.len && !memcmp(bytes.data, b->bytes.data, bytes.len)) continue;
        } else if (ids[i] < schema_id) {
            continue;   /* Java keeps the schemas before the branch's earliest one */
        }
        /* this schema goes or changes: nothing that stays may use it */
        if (!used_read && !(rc = used_schemas(t, earliest, used, e))) used_read = 1;
        char key[24];
        snprintf(key, sizeof key, "%lld", (long long)ids[i]);
        if (!rc && pm_set_contains(used, key, strlen(key)))
            rc = pm_fail(e, PAIMON_UNSUPPORTED, "%s: schema %lld differs on branch or is missing there, and %s's snapshots or tags before %lld or its long-lived changelogs still use it; refusing to fast-forward",
                         t->branch_root, (long long)ids[i], t->branch, (long long)earliest);
        if (rc || (rc = meta_file_id(t->branch_root, "schema", ids[i], &path, e))) break;
        if (!find_wfile(p->schemas, p->n_schemas, (char *)path.data) && pm_strv_push(&p->del_schemas, (char *)path.data))
            rc = pm_nomem(e);
    }
    free(ids);
    pm_set_free(used);
    pm_buf_free(&bytes);
    pm_buf_free(&path);
    return rc;
}

static int remove_hint(paimon_table *t, const char *which, pm_err *e) {
    pm_buf path = {0};
    int rc = pm_buf_printf(&path, "%s/snapshot/%s", t->branch_root, which) || pm_buf_cstr(&path) ? pm_nomem(e) : 0;
    if (!rc) rc = pm_io_remove(t->io, (char *)path.data, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
    pm_buf_free(&path);
    return rc;
}

static int remove_all(paimon_table *t, const pm_strv *v, const char *what, pm_clean_result *clean, pm_err *e) {
    for (size_t i = 0; i < v->n; i++) {
        int rc = pm_clean_remove_one(t->io, v->v[i], pm_meta_kind(v->v[i]), clean, e);
        if (rc) { pm_err_prefix(e, "fast-forward: removing %s (run it again to finish)", what); return rc; }
    }
    return PAIMON_OK;
}

/* t's snapshots >= earliest, oldest first, listed again until none is
 * left. Oldest first: until the last one goes, t's latest stays what it
 * was, so a writer keeps committing on top of all its own commits (a
 * killed run leaves no later commit on a base without an earlier one). A
 * writer that committed after a listing, its base still there, goes with
 * the next round (its commit is one of those the fast-forward replaces);
 * one whose base went first takes its snapshot back (pm_commit). */
static int remove_snapshots_from(paimon_table *t, int64_t earliest, pm_clean_result *clean, pm_err *e) {
    pm_buf path = {0};
    int rc = PAIMON_OK;
    for (int round = 0; !rc; round++) {
        int64_t *ids = NULL;
        size_t n = 0, gone = 0;
        if ((rc = pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, e))) break;
        for (size_t i = 0; !rc && i < n; i++) {
            if (ids[i] < earliest) continue;
            gone++;
            rc = meta_file_id(t->branch_root, "snapshot", ids[i], &path, e);
            if (!rc) rc = pm_clean_remove_one(t->io, (char *)path.data, PM_K_SNAPSHOT, clean, e);
            if (rc) pm_err_prefix(e, "fast-forward: removing snapshots (run it again to finish)");
        }
        free(ids);
        if (!rc && !gone) break;
        if (!rc && round == 100)
            rc = pm_fail(e, PAIMON_CONFLICT, "%s: snapshots keep appearing on %s while fast-forwarding (a writer "
                         "meanwhile); stop it and run again", t->branch_root, t->branch);
    }
    pm_buf_free(&path);
    return rc;
}

/* Write the branch's files over t's (schemas and tags replace: Java's
 * copyFiles with overwrite; identical bytes are left alone). */
/* dropped (dry run): files the real run removes first, so it writes them
 * whatever they hold now */
static int write_all(paimon_table *t, const wfile *v, size_t n, int no_replace, int dry_run, const pm_strv *dropped,
                     size_t *count, pm_err *e) {
    pm_buf cur = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        int goes = 0;
        for (size_t k = 0; dropped && k < dropped->n && !goes; k++) goes = !strcmp(dropped->v[k], v[i].path);
        if (!no_replace && !goes) {
            int r = read_file(t->io, v[i].path, &cur, e);
            if (r == PAIMON_NOTFOUND) pm_err_clear(e);
            else if (r) { rc = r; break; }
            else if (cur.len == v[i].bytes.len && !memcmp(cur.data, v[i].bytes.data, cur.len)) continue;
        }
        if (dry_run) { (*count)++; continue; }   /* counted as the real run counts it */
        if ((rc = mkdirs_of(t->io, v[i].path, e))) break;
        rc = no_replace ? pm_io_create_no_replace(t->io, v[i].path, v[i].bytes.data, v[i].bytes.len, e)
                        : pm_io_write_atomic(t->io, v[i].path, v[i].bytes.data, v[i].bytes.len, e);
        if (rc == PAIMON_EXISTS)
            rc = pm_fail(e, PAIMON_CONFLICT, "%s appeared while fast-forwarding (a commit meanwhile); run it again",
                         v[i].path);
        else if (rc) pm_err_prefix(e, "fast-forward: writing %s (run it again to finish)", v[i].path);
        else (*count)++;
    }
    pm_buf_free(&cur);
    return rc;
}

void pm_branch_ff_result_free(pm_branch_ff_result *r) {
    pm_strv_clear(&r->dropped);
    pm_strv_clear(&r->taken);
    pm_clean_result_free(&r->clean);
}

/* The plan as paths: what t loses, then what it takes from the branch. */
static int ff_plan_paths(const ff_plan *p, pm_branch_ff_result *r, pm_err *e) {
    const pm_strv *drops[3] = {&p->del_tags, &p->del_snaps, &p->del_schemas};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < drops[k]->n; i++)
            if (pm_strv_push(&r->dropped, drops[k]->v[i])) return pm_nomem(e);
    const wfile *takes[3] = {p->schemas, p->tags, p->snaps};
    size_t n_takes[3] = {p->n_schemas, p->n_tags, p->n_snaps};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < n_takes[k]; i++)
            if (pm_strv_push(&r->taken, takes[k][i].path)) return pm_nomem(e);
    return PAIMON_OK;
}

int pm_branch_fast_forward(paimon_table *t, const char *name, int dry_run, pm_branch_ff_result *r, pm_err *e) {
    memset(r, 0, sizeof *r);
    r->dry_run = dry_run;
    if (name && !strcmp(name, "main"))
        return pm_fail(e, PAIMON_MISUSE, "Branch name 'main' do not use in fast-forward.");
    int rc = pm_branch_name_check(name, e);
    if (rc) return rc;
    if (!strcmp(name, t->branch))
        return pm_fail(e, PAIMON_MISUSE, "Fast-forward from the current branch '%s' is not allowed.", name);
    pm_buf broot = {0};
    ff_plan p;
    memset(&p, 0, sizeof p);
    int ex = 0;
    if (!(rc = branch_root(t, name, &broot, e)) && !(rc = branch_exists(t, (char *)broot.data, &ex, e)) && !ex)
        rc = pm_fail(e, PAIMON_NOTFOUND, "Branch name '%s' doesn't exist (%s).", name, (char *)broot.data);
    int64_t earliest = 0, latest = 0;
    if (!rc) {
        rc = pm_snapshot_earliest_id(t->io, (char *)broot.data, &earliest, e);
        if (rc == PAIMON_NOTFOUND)
            rc = pm_fail(e, PAIMON_NOTFOUND, "Cannot fast forward branch %s, because it does not have snapshot.", name);
    }
    pm_snapshot *first = NULL;
    if (!rc) rc = pm_snapshot_read(t->io, (char *)broot.data, earliest, &first, e);
    if (!rc) {
        r->earliest_id = earliest;
        r->earliest_schema_id = first->schema_id;
    }
    /* everything read first: nothing changes unless all of it is readable */
    if (!rc) rc = read_branch_dir(t, (char *)broot.data, "schema", &p.schemas, &p.n_schemas, e);
    if (!rc) rc = read_branch_dir(t, (char *)broot.data, "tag", &p.tags, &p.n_tags, e);
    if (!rc) rc = read_branch_dir(t, (char *)broot.data, "snapshot", &p.snaps, &p.n_snaps, e);
    if (!rc) rc = pm_snapshot_latest_id(t->io, (char *)broot.data, &latest, e);
    if (rc) pm_err_prefix(e, "refusing to fast-forward to branch '%s'", name);
    if (!rc) rc = plan_ff_deletions(t, earliest, first ? first->schema_id : 0, &p, e);
    if (!rc) {
        r->latest_id = latest;
        r->deleted_snapshots = p.del_snaps.n;
        r->deleted_tags = p.del_tags.n;
        r->deleted_schemas = p.del_schemas.n;
        rc = ff_plan_paths(&p, r, e);
    }
    r->clean.dry_run = dry_run;
    if (!rc && dry_run) {
        /* what the real run would remove (its plan) and take: a schema or
         * tag that is already there byte for byte is left alone by both */
        pm_deleter *d = pm_deleter_new();
        if (!d) rc = pm_nomem(e);
        for (size_t i = 0; !rc && i < r->dropped.n; i++) rc = pm_deleter_add(d, r->dropped.v[i], pm_meta_kind(r->dropped.v[i]), e);
        pm_clean_opts co = {1, 1, 0, NULL, NULL, 0};
        if (!rc) rc = pm_deleter_run(d, t->io, t->root, &co, "fast-forward", &r->clean, e);
        pm_deleter_free(d);
        r->copied_snapshots = p.n_snaps;
        if (!rc) rc = write_all(t, p.schemas, p.n_schemas, 0, 1, &r->dropped, &r->copied_schemas, e);
        if (!rc) rc = write_all(t, p.tags, p.n_tags, 0, 1, &r->dropped, &r->copied_tags, e);
    }
    if (!rc && !dry_run) {
        /* order: no snapshot or tag ever names a missing schema; until the
         * branch's snapshots are in, t reads as its snapshots before `earliest` */
        rc = remove_hint(t, "LATEST", e);
        if (!rc) rc = remove_all(t, &p.del_tags, "tags", &r->clean, e);
        if (!rc) rc = remove_snapshots_from(t, earliest, &r->clean, e);
        if (!rc) rc = remove_all(t, &p.del_schemas, "schemas", &r->clean, e);
        if (!rc) rc = write_all(t, p.schemas, p.n_schemas, 0, 0, NULL, &r->copied_schemas, e);
        if (!rc) rc = write_all(t, p.tags, p.n_tags, 0, 0, NULL, &r->copied_tags, e);
        if (!rc) rc = write_all(t, p.snaps, p.n_snaps, 1, 0, NULL, &r->copied_snapshots, e);
        int64_t new_earliest = 0;
        if (!rc) rc = pm_snapshot_earliest_id(t->io, t->branch_root, &new_earliest, e);
        if (!rc) rc = pm_hint_write(t->io, t->branch_root, "EARLIEST", new_earliest, e);
        if (!rc) rc = pm_hint_write(t->io, t->branch_root, "LATEST", latest, e);
    }
    pm_snapshot_free(first);
    ff_plan_free(&p);
    pm_buf_free(&broot);
    if (rc) pm_branch_ff_result_free(r);
    return rc;
}

/* ---- list --------------------------------------------------------------------- */

void pm_branch_infos_free(pm_branch_info *v, size_t n) {
    for (size_t i = 0; v && i < n; i++) free(v[i].name);
    free(v);
}

static int oldest_file(void *ud, const char *rel, const pm_stat *st, pm_err *e) {
    int64_t *oldest = ud;
    (void)rel;
    (void)e;
    if (st->mtime_ms > 0 && (*oldest == 0 || st->mtime_ms < *oldest)) *oldest = st->mtime_ms;
    return 0;
}

static int cmp_info(const void *a, const void *b) {
    const pm_branch_info *x = a, *y = b;
    if (x->create_time != y->create_time) return x->create_time < y->create_time ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int branch_info(paimon_table *t, const char *name, pm_branch_info *x, pm_err *e) {
    pm_buf broot = {0};
    pm_stat st = {0};
    char **tags = NULL;
    int rc = branch_root(t, name, &broot, e);
    if (!rc) rc = pm_io_stat(t->io, (char *)broot.data, &st, e);
    x->create_time = st.mtime_ms;
    /* object stores: a directory has no time of its own */
    if (!rc && x->create_time <= 0) rc = pm_io_list_tree(t->io, (char *)broot.data, oldest_file, &x->create_time, e);
    if (!rc) {
        rc = pm_snapshot_earliest_id(t->io, (char *)broot.data, &x->earliest_snapshot, e);
        if (!rc) rc = pm_snapshot_latest_id(t->io, (char *)broot.data, &x->latest_snapshot, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; x->earliest_snapshot = x->latest_snapshot = 0; }
    }
    if (!rc) rc = pm_tag_list(t->io, (char *)broot.data, &tags, &x->n_tags, e);
    pm_strv_free(tags, x->n_tags);
    pm_buf_free(&broot);
    return rc;
}

int pm_branches_list(paimon_table *t, pm_branch_info **out, size_t *n, pm_err *e) {
    *out = NULL;
    *n = 0;
    char **names = NULL;
    size_t nn = 0;
    int rc = pm_branch_list(t->io, t->root, &names, &nn, e);
    pm_branch_info *v = rc ? NULL : calloc(nn ? nn : 1, sizeof *v);
    if (!rc && !v) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < nn; i++) {
        v[i].name = names[i];
        names[i] = NULL;
        rc = branch_info(t, v[i].name, &v[i], e);
    }
    pm_strv_free(names, nn);
    if (rc) { pm_branch_infos_free(v, nn); return rc; }
    qsort(v, nn, sizeof *v, cmp_info);
    *out = v;
    *n = nn;
    return PAIMON_OK;
}
