/* References (see pm_refs.h): branches, tags, long-lived changelogs, what
 * a snapshot names, and the live set, defined once. */
#include "pm_refs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_avro.h"
#include "pm_exec.h"


/* ---- branches ---------------------------------------------------------------- */

void pm_refs_close_branches(paimon_table **v, size_t n) {
    if (!v) return;
    for (size_t i = 0; i < n; i++) pm_table_free_shared(v[i]);
    free(v);
}

int pm_refs_open_branches(paimon_table *t, paimon_table ***out, size_t *nout, pm_err *e) {
    char **names = NULL;
    size_t nb = 0;
    *out = NULL;
    *nout = 0;
    int rc = pm_branch_list(t->io, t->root, &names, &nb, e);
    if (rc) { pm_err_prefix(e, "cannot list branches"); return rc; }
    paimon_table **v = calloc(nb + 1, sizeof *v);
    size_t n = 0;
    if (!v) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i <= nb; i++) {
        const char *b = i == 0 ? "main" : names[i - 1];
        if ((rc = pm_table_open_shared(t, b, &v[n], e))) pm_err_prefix(e, "cannot open branch '%s'", b);
        else n++;
    }
    pm_strv_free(names, nb);
    if (rc) { pm_refs_close_branches(v, n); return rc; }
    *out = v;
    *nout = n;
    return PAIMON_OK;
}

void pm_refs_snapshots_free(pm_snapshot **v, size_t n) {
    for (size_t i = 0; i < n; i++) pm_snapshot_free(v[i]);
    free(v);
}

int pm_refs_snapshots(paimon_table *bt, int64_t from, pm_snapshot ***out, size_t *nout, pm_err *e) {
    int64_t *ids = NULL;
    size_t n = 0;
    *out = NULL;
    *nout = 0;
    int rc = pm_snapshot_list_ids(bt->io, bt->branch_root, &ids, &n, e);
    if (rc) return rc;
    pm_snapshot **v = calloc(n ? n : 1, sizeof *v);
    if (!v) { free(ids); return pm_nomem(e); }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < from) continue;
        rc = pm_snapshot_read_known(bt->io, bt->branch_root, bt->schemas_known, ids[i], &v[k], e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = 0; continue; }   /* expired meanwhile */
        if (rc) {
            pm_err_prefix(e, "cannot read snapshot %lld of branch %s", (long long)ids[i], bt->branch);
            break;
        }
        k++;
    }
    free(ids);
    if (rc) { pm_refs_snapshots_free(v, k); return rc; }
    *out = v;
    *nout = k;
    return PAIMON_OK;
}

/* Snapshot reads on the thread pool: one request each on an object store,
 * so a thousand are a thousand round trips unless several are in flight. */
typedef struct id_reads {
    paimon_table *bt;
    int64_t from;
    const int64_t *ids;          /* the ids to read (NULL: from + i) */
    pm_snapshot **v;
    pthread_mutex_t mu;
    int64_t bad_id;              /* lowest id failing other than NOTFOUND */
    int bad_rc;
    pm_err bad;                  /* its error */
} id_reads;

static void read_one_id(void *ctx, size_t i) {
    id_reads *r = ctx;
    pm_err e;
    int64_t id = r->ids ? r->ids[i] : r->from + (int64_t)i;
    int rc = pm_snapshot_read_known(r->bt->io, r->bt->branch_root, r->bt->schemas_known, id, &r->v[i], &e);
    if (rc == PAIMON_OK) return;
    r->v[i] = NULL;
    if (rc == PAIMON_NOTFOUND) return;
    pthread_mutex_lock(&r->mu);
    if (!r->bad_rc || id < r->bad_id) { r->bad_id = id; r->bad_rc = rc; r->bad = e; }
    pthread_mutex_unlock(&r->mu);
}

/* The snapshots of ids (or from + i) into v[0..n) (NULL: missing), read
 * `threads` at a time; any error other than a missing id fails, the
 * lowest id's (then every slot is NULL). */
static int read_snapshots(paimon_table *bt, int64_t from, const int64_t *ids, size_t n, int threads,
                          pm_snapshot **v, pm_err *e) {
    memset(v, 0, n * sizeof *v);
    id_reads r = {bt, from, ids, v, PTHREAD_MUTEX_INITIALIZER, 0, 0, {0}};
    int rc = pm_exec_run(threads, n, read_one_id, &r, "read snapshots", NULL, NULL, e);
    pthread_mutex_destroy(&r.mu);
    if (!rc && r.bad_rc) {
        *e = r.bad;
        rc = r.bad_rc;
        pm_err_prefix(e, "cannot read snapshot %lld of branch %s", (long long)r.bad_id, bt->branch);
    }
    if (rc)
        for (size_t i = 0; i < n; i++) { pm_snapshot_free(v[i]); v[i] = NULL; }
    return rc;
}

int pm_refs_read_ids(paimon_table *bt, int64_t from, int64_t to, int threads, pm_snapshot **v, pm_err *e) {
    return to < from ? PAIMON_OK : read_snapshots(bt, from, NULL, (size_t)(to - from + 1), threads, v, e);
}

int pm_refs_snapshots_between(paimon_table *bt, int64_t from, int64_t to, int threads, pm_snapshot ***out,
                              size_t *nout, pm_err *e) {
    *out = NULL;
    *nout = 0;
    if (to < from) return PAIMON_OK;
    size_t n = (size_t)(to - from + 1), k = 0;
    pm_snapshot **v = calloc(n, sizeof *v);
    if (!v) return pm_nomem(e);
    int rc = pm_refs_read_ids(bt, from, to, threads, v, e);
    if (rc) { free(v); return rc; }
    for (size_t i = 0; i < n; i++)   /* in order; a gap (or expired meanwhile) is left out */
        if (v[i]) v[k++] = v[i];
    *out = v;
    *nout = k;
    return PAIMON_OK;
}

int pm_refs_walk_snapshots(paimon_table *bt, int64_t from, int64_t to, int listed, int threads, size_t window,
                           pm_refs_window_fn fn, void *ud, pm_err *e) {
    int64_t *ids = NULL;
    size_t n_ids = 0, at = 0;
    if (!window) window = 256;
    int rc = PAIMON_OK;
    if (listed) {
        if ((rc = pm_snapshot_list_ids(bt->io, bt->branch_root, &ids, &n_ids, e))) return rc;
        while (at < n_ids && ids[at] < from) at++;
    } else if (to < from) {
        return PAIMON_OK;
    }
    pm_snapshot **v = calloc(window, sizeof *v);
    if (!v) rc = pm_nomem(e);
    int64_t next = from;
    while (!rc) {
        size_t k = 0, got = 0;
        if (listed) {
            while (at + k < n_ids && k < window && ids[at + k] <= to) k++;
            if (!k) break;
            rc = read_snapshots(bt, 0, ids + at, k, threads, v, e);
            at += k;
        } else {
            if (next > to) break;
            k = (uint64_t)(to - next) + 1 < window ? (size_t)(to - next) + 1 : window;
            rc = pm_refs_read_ids(bt, next, next + (int64_t)k - 1, threads, v, e);
            next += (int64_t)k;
        }
        for (size_t i = 0; !rc && i < k; i++)   /* in order; a gap (or expired meanwhile) is left out */
            if (v[i]) v[got++] = v[i];
        if (!rc && got) rc = fn(ud, v, got, e);
        for (size_t i = 0; i < got; i++) { pm_snapshot_free(v[i]); v[i] = NULL; }
    }
    free(v);
    free(ids);
    return rc;
}

/* ---- tags and long-lived changelogs ---------------------------------------- */

/* One tag or changelog: read (by `read`), visited, failures by the rule. */
static int visit_source(paimon_table *bt, const pm_refs_visitor *v, pm_refs_source src, int rc, pm_snapshot *s,
                        const char *by, const char *path, pm_err *e) {
    if (rc == PAIMON_OK) {
        rc = v->snapshot ? v->snapshot(v->ud, bt, src, by, s, e) : PAIMON_OK;
        if (rc == PAIMON_OK || rc == PAIMON_NOMEM) return rc;
    } else if (rc == PAIMON_NOMEM) {
        return rc;
    } else if (v->rule == PM_REFS_REPORT) {
        pm_err why = *e;
        pm_err_clear(e);
        return v->unreadable ? v->unreadable(v->ud, src, path, by, &why, e) : PAIMON_OK;
    }
    pm_err_prefix(e, "%s: cannot read %s (%s)", v->refusing ? v->refusing : "refusing", by, path);
    if (rc == PAIMON_NOTFOUND && v->notfound_as[src]) rc = v->notfound_as[src];
    return rc;
}

int pm_refs_tags(paimon_table *bt, const pm_refs_visitor *v, pm_err *e) {
    char **names = NULL;
    size_t n = 0;
    int rc = pm_tag_list(bt->io, bt->branch_root, &names, &n, e);
    if (rc) {
        if (v->rule == PM_REFS_REFUSE && v->refusing) pm_err_prefix(e, "%s: cannot list the tags of branch %s", v->refusing, bt->branch);
        else pm_err_prefix(e, "cannot list the tags of branch %s", bt->branch);
        return rc;
    }
    pm_buf by = {0}, path = {0};
    for (size_t i = 0; i < n && !rc; i++) {
        by.len = path.len = 0;
        if (pm_buf_printf(&by, "tag %s of branch %s", names[i], bt->branch) ||
            pm_buf_printf(&path, "%s/tag/tag-%s", bt->branch_root, names[i])) { rc = pm_nomem(e); break; }
        pm_snapshot *s = NULL;
        rc = pm_tag_read_known(bt->io, bt->branch_root, bt->schemas_known, names[i], &s, e);
        int unreadable = rc == PAIMON_CORRUPT;
        rc = visit_source(bt, v, PM_REFS_TAG, rc, s, (char *)by.data, (char *)path.data, e);
        /* the way out: the tag file alone goes, what it held to orphan cleaning */
        if (rc && unreadable && v->rule == PM_REFS_REFUSE)
            pm_err_suffix(e, " (if the tag cannot be repaired: tag.lua TABLE delete %s --force%s%s removes the tag file "
                          "alone)", names[i], strcmp(bt->branch, "main") ? " --branch " : "",
                          strcmp(bt->branch, "main") ? bt->branch : "");
        pm_snapshot_free(s);
    }
    pm_buf_free(&by);
    pm_buf_free(&path);
    pm_strv_free(names, n);
    return rc;
}

int pm_refs_changelogs(paimon_table *bt, const pm_refs_visitor *v, pm_err *e) {
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = pm_changelog_list_ids(bt->io, bt->branch_root, &ids, &n, e);
    if (rc) {
        if (v->rule == PM_REFS_REFUSE && v->refusing) pm_err_prefix(e, "%s: cannot list the changelogs of branch %s", v->refusing, bt->branch);
        else pm_err_prefix(e, "cannot list the changelogs of branch %s", bt->branch);
        return rc;
    }
    pm_buf by = {0}, path = {0};
    for (size_t i = 0; i < n && !rc; i++) {
        by.len = path.len = 0;
        if (pm_buf_printf(&by, "changelog %lld of branch %s", (long long)ids[i], bt->branch) ||
            pm_buf_printf(&path, "%s/changelog/changelog-%lld", bt->branch_root, (long long)ids[i])) {
            rc = pm_nomem(e);
            break;
        }
        pm_snapshot *s = NULL;
        rc = pm_changelog_read_known(bt->io, bt->branch_root, bt->schemas_known, ids[i], &s, e);
        rc = visit_source(bt, v, PM_REFS_CHANGELOG, rc, s, (char *)by.data, (char *)path.data, e);
        pm_snapshot_free(s);
    }
    pm_buf_free(&by);
    pm_buf_free(&path);
    free(ids);
    return rc;
}

/* ---- what a snapshot names itself -------------------------------------------- */

int pm_refs_snapshot_names(const pm_snapshot *s, pm_refs_name_fn fn, void *ud, pm_err *e) {
    const struct { pm_refs_name_kind kind; const char *name; pm_opt_i64 size; } v[] = {
        {PM_REFS_BASE_LIST, s->base_manifest_list, s->base_manifest_list_size},
        {PM_REFS_DELTA_LIST, s->delta_manifest_list, s->delta_manifest_list_size},
        {PM_REFS_CHANGELOG_LIST, s->changelog_manifest_list, s->changelog_manifest_list_size},
        {PM_REFS_INDEX_MANIFEST, s->index_manifest, {0, 0}},
        {PM_REFS_STATISTICS, s->statistics, {0, 0}},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (!v[i].name) continue;
        int rc = fn(ud, v[i].kind, v[i].name, v[i].size.has ? v[i].size.v : -1, e);
        if (rc) return rc;
    }
    return PAIMON_OK;
}

/* ---- manifests -> data files -------------------------------------------------- */

int pm_refs_record(pm_buf *out, const void *rec, size_t len) {
    uint32_t l = (uint32_t)len;
    return pm_buf_append(out, &l, 4) || pm_buf_append(out, rec, len) ? PAIMON_NOMEM : PAIMON_OK;
}

/* A manifest that could not be read to its end: REFUSE fails with it,
 * REPORT hands it to the visitor. */
static int manifest_failed(pm_refs_rule rule, const pm_refs_entry_visitor *v, const char *name, int code,
                           const pm_err *why, pm_err *e) {
    if (code == PAIMON_NOMEM || rule == PM_REFS_REFUSE) { *e = *why; return code; }
    return v->unreadable ? v->unreadable(v->ud, name, code, why, e) : PAIMON_OK;
}

/* THE LIVE-SET RULE (the only place it is written down): a data file is
 * live in a snapshot when some manifest of its base or delta list ADDs it
 * and no manifest of either DELETEs the same file identifier (Java's
 * FileEntry.Identifier: partition, bucket, level, name, extra files,
 * embedded index, external path). Every manifest is read for DELETEs: the
 * per-manifest delete counts in the manifest list are not trusted (a
 * wrong count must not make a deleted file look live to a reader of the
 * set, nor a live one deleted to maintenance). A DELETE cancels an ADD
 * wherever either stands in the lists. Read in two passes (the DELETE
 * identifiers of all manifests, then their ADDs not deleted), so memory
 * holds the deletions and the caller's records, never every entry.
 * (pm_scan_open, the read path, keeps an optimisation of its own: it
 * skips manifests whose list entry counts no deletion; see pm_table.c.) */
typedef struct live_task {
    const char *name;
    pm_buf out;          /* records: DELETE identifiers (pass 1), the visitor's (pass 2) */
    pm_buf scratch[2];   /* the visitor's */
    int rc;              /* reading */
    int cb_rc;           /* the visitor's entry callback (always fatal) */
    int opened;          /* the last pass opened it */
    int failed;          /* pass 1 could not read it: 1 not opened, 2 not to its end (REPORT: reported) */
    pm_err err;
} live_task;

typedef struct live_ctx {
    paimon_table *t;
    live_task *tasks;
    const pm_set *deleted;   /* pass 2 only (read-only there) */
    const pm_refs_entry_visitor *v;
    int pass;
    int threads;
    pm_avro_schema_cache *sc;   /* the caller's, bound on the workers too */
} live_ctx;

static void live_one(void *ctx, size_t i) {
    live_ctx *x = ctx;
    live_task *tk = &x->tasks[i];
    tk->out.len = 0;
    tk->rc = tk->cb_rc = tk->opened = 0;
    if (x->pass == 2 && tk->failed == 1) return;   /* never opened: nothing to add */
    pm_avro_schema_cache *prev = pm_avro_schema_cache_bound();
    if (x->sc) pm_avro_schema_cache_bind(x->sc);
    pm_manifest_reader *r;
    tk->rc = pm_table_open_manifest(x->t, tk->name, PM_MANIFEST_FILE, &r, &tk->err);
    if (x->sc) pm_avro_schema_cache_bind(prev);
    if (tk->rc) return;
    tk->opened = 1;
    pm_buf id = {0};
    const pm_manifest_entry *m;
    int rc;
    while ((rc = pm_manifest_next_entry(r, &m, &tk->err)) == PAIMON_OK) {
        if (x->pass == 1) {
            if (m->kind != PM_FILE_DELETE) continue;
            if (pm_file_identifier(m, &id) || pm_refs_record(&tk->out, id.data, id.len)) { rc = pm_nomem(&tk->err); break; }
            continue;
        }
        if (m->kind != PM_FILE_ADD) continue;
        if (pm_file_identifier(m, &id)) { rc = pm_nomem(&tk->err); break; }
        if (pm_set_contains(x->deleted, id.data, id.len)) continue;
        if ((tk->cb_rc = x->v->entry(x->v->ud, m, tk->name, x->threads > 1 ? &tk->out : NULL, tk->scratch,
                                   &tk->err))) break;
    }
    pm_manifest_close(r);
    pm_buf_free(&id);
    tk->rc = rc == PAIMON_DONE || tk->cb_rc ? PAIMON_OK : rc;
}

/* One pass over every manifest; records merged in manifest order. */
static int live_pass(live_ctx *x, size_t n, pm_refs_rule rule, pm_set *deleted, pm_err *e) {
    int rc = pm_exec_run(x->threads, n, live_one, x, "reading manifests", NULL, NULL, e);
    for (size_t i = 0; !rc && i < n; i++) {
        live_task *tk = &x->tasks[i];
        if (tk->cb_rc) { *e = tk->err; return tk->cb_rc; }
        /* a failure pass 1 saw is reported once; out of memory always stops */
        if (tk->rc && (tk->rc == PAIMON_NOMEM || !(x->pass == 2 && tk->failed))) {
            if (x->pass == 1) tk->failed = tk->opened ? 2 : 1;
            if ((rc = manifest_failed(rule, x->v, tk->name, tk->rc, &tk->err, e))) return rc;
        }
        for (size_t off = 0; off + 4 <= tk->out.len;) {
            uint32_t l;
            memcpy(&l, tk->out.data + off, 4);
            const uint8_t *rec = tk->out.data + off + 4;
            if (x->pass == 1) rc = pm_set_add(deleted, rec, l) < 0 ? pm_nomem(e) : PAIMON_OK;
            else rc = x->v->record ? x->v->record(x->v->ud, rec, l, e) : PAIMON_OK;
            if (rc) return rc;
            off += 4 + l;
        }
    }
    return rc;
}

int pm_refs_live(paimon_table *t, const char *const *manifests, size_t n, int threads, pm_refs_rule rule,
                 const pm_refs_entry_visitor *v, pm_err *e) {
    pm_set *deleted = pm_set_new();
    live_task *tasks = calloc(n ? n : 1, sizeof *tasks);
    int rc = deleted && tasks ? PAIMON_OK : pm_nomem(e);
    for (size_t i = 0; !rc && i < n; i++) tasks[i].name = manifests[i];
    live_ctx x = {t, tasks, deleted, v, 1, threads, pm_avro_schema_cache_bound()};
    if (!rc) rc = live_pass(&x, n, rule, deleted, e);
    x.pass = 2;
    if (!rc) rc = live_pass(&x, n, rule, NULL, e);
    for (size_t i = 0; tasks && i < n; i++) {
        pm_buf_free(&tasks[i].out);
        pm_buf_free(&tasks[i].scratch[0]);
        pm_buf_free(&tasks[i].scratch[1]);
    }
    free(tasks);
    pm_set_free(deleted);
    return rc;
}

int pm_refs_adds(paimon_table *t, const char *const *manifests, size_t n, pm_refs_rule rule,
                 const pm_refs_entry_visitor *v, pm_err *e) {
    int rc = PAIMON_OK;
    pm_buf scratch[2] = {{0}, {0}};
    for (size_t i = 0; !rc && i < n; i++) {
        pm_manifest_reader *r;
        pm_err why;
        int mr = pm_table_open_manifest(t, manifests[i], PM_MANIFEST_FILE, &r, &why);
        if (mr) { rc = manifest_failed(rule, v, manifests[i], mr, &why, e); continue; }
        const pm_manifest_entry *m;
        while (!rc && (mr = pm_manifest_next_entry(r, &m, &why)) == PAIMON_OK)
            if (m->kind == PM_FILE_ADD) rc = v->entry(v->ud, m, manifests[i], NULL, scratch, e);
        pm_manifest_close(r);
        if (!rc && mr != PAIMON_DONE) rc = manifest_failed(rule, v, manifests[i], mr, &why, e);
    }
    pm_buf_free(&scratch[0]);
    pm_buf_free(&scratch[1]);
    return rc;
}

int pm_refs_index_files(paimon_table *t, const char *name, pm_refs_index_fn fn, void *ud, pm_err *e) {
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(t, name, PM_INDEX_MANIFEST, &r, e);
    if (rc) return rc;
    const pm_index_entry *ie;
    while ((rc = pm_manifest_next_index(r, &ie, e)) == PAIMON_OK)
        if ((rc = fn(ud, ie, e))) break;
    pm_manifest_close(r);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}
int pm_refs_fingerprint(paimon_table *t, pm_buf *out, pm_err *e) {
    char **v = NULL;
    size_t n = 0;
    out->len = 0;
    int rc = pm_tag_list(t->io, t->branch_root, &v, &n, e);
    /* a tag replaced under the same name (replace_tag) changes size or mtime */
    pm_buf tp = {0};
    for (size_t i = 0; !rc && i < n; i++) {
        pm_stat st = {0};
        tp.len = 0;
        if (pm_buf_printf(&tp, "%s/tag/tag-%s", t->branch_root, v[i])) { rc = pm_nomem(e); break; }
        int sr = pm_io_stat(t->io, (char *)tp.data, &st, e);
        if (sr == PAIMON_NOTFOUND) { pm_err_clear(e); st.size = -1; }
        else if (sr) { rc = sr; break; }
        rc = pm_buf_printf(out, "t:%s %lld %lld\n", v[i], (long long)st.size, (long long)st.mtime_ms) ? pm_nomem(e) : 0;
    }
    pm_buf_free(&tp);
    pm_strv_free(v, n);
    v = NULL;
    n = 0;
    if (!rc) rc = pm_branch_list(t->io, t->root, &v, &n, e);
    for (size_t i = 0; !rc && i < n; i++) rc = pm_buf_printf(out, "b:%s\n", v[i]) ? pm_nomem(e) : 0;
    pm_strv_free(v, n);
    v = NULL;
    n = 0;
    if (!rc) rc = pm_consumer_list(t->io, t->branch_root, &v, &n, e);
    for (size_t i = 0; !rc && i < n; i++) rc = pm_buf_printf(out, "c:%s\n", v[i]) ? pm_nomem(e) : 0;
    pm_strv_free(v, n);
    if (!rc && pm_buf_cstr(out)) rc = pm_nomem(e);
    return rc;
}
