/* Protection: what every root that stays needs, and what a dropped source
 * frees (pm_protect.h has the rule). Expiration, tag, branch, changelog and
 * rollback deletion all plan through here; the walk of branches, snapshots,
 * tags and manifests is pm_refs's. */
#include "pm_protect.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pm_avro.h"
#include "pm_exec.h"
#include "pm_names.h"
#include "pm_refs.h"

/* ---- protection sets (the walk is pm_refs's) ---------------------------------- */

struct pm_protect {
    paimon_table *t;      /* the branch being walked */
    pm_pathset *paths;    /* full paths of data / changelog / extra files still used (compact: pm_names.h) */
    pm_set *names;        /* keys (pm_name_key) of the names of manifest lists, manifests, index
                             manifests, index files, statistics: name_add / name_has */
    pm_set *lists_done;   /* manifest lists already read into names */
    pm_set *live_done;    /* "base\0delta" pairs whose live set is in paths */
    int threads;          /* manifest reads in parallel */
    pm_set *skip;         /* the `by` names ("tag t of branch b", "changelog 5 of branch b") of sources going */
    const char *own;      /* the branch things go from */
    int whole;            /* ... entirely */
    int64_t drop_above;   /* its tags and changelogs above this id go too: they protect nothing */
    const char *refusing; /* error prefix */
    int64_t chains;       /* chain starts whose live set was read (tests) */
};
typedef struct pm_protect protect;

/* The compact key of a file name in p->names (NULL-safe). */
static int name_add(pm_set *s, const char *name, pm_err *e) {
    if (!name) return PAIMON_OK;
    uint8_t kb[PM_NAME_KEY_MAX];
    size_t kl;
    const void *k = pm_name_key(name, strlen(name), kb, &kl);
    return pm_set_add(s, k, kl) < 0 ? pm_nomem(e) : PAIMON_OK;
}

static int name_has(const pm_set *s, const char *name) {
    uint8_t kb[PM_NAME_KEY_MAX];
    size_t kl;
    const void *k = pm_name_key(name, strlen(name), kb, &kl);
    return pm_set_contains(s, k, kl);
}

static int set_add_str(pm_set *s, const char *v, pm_err *e) {
    if (v && pm_set_add(s, v, strlen(v)) < 0) return pm_nomem(e);
    return PAIMON_OK;
}

static int protect_init(protect *p, paimon_table *t, const pm_protect_spec *sp, pm_err *e) {
    *p = (protect){t, pm_pathset_new(), pm_set_new(), pm_set_new(), pm_set_new(), sp->threads, pm_set_new(),
                   sp->branch ? sp->branch : t->branch, sp->whole_branch, sp->refs_above,
                   sp->refusing ? sp->refusing : "refusing", 0};
    if (!p->paths || !p->names || !p->lists_done || !p->live_done || !p->skip) return pm_nomem(e);
    pm_buf by = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < sp->n_tags; i++) {
        by.len = 0;
        if (pm_buf_printf(&by, "tag %s of branch %s", sp->tags[i], p->own) || pm_set_add(p->skip, by.data, by.len) < 0)
            rc = pm_nomem(e);
    }
    for (size_t i = 0; !rc && i < sp->n_changelogs; i++) {
        by.len = 0;
        if (pm_buf_printf(&by, "changelog %lld of branch %s", (long long)sp->changelogs[i], p->own) ||
            pm_set_add(p->skip, by.data, by.len) < 0)
            rc = pm_nomem(e);
    }
    pm_buf_free(&by);
    return rc;
}

static void protect_clear(protect *p) {
    pm_pathset_free(p->paths);
    pm_set_free(p->names);
    pm_set_free(p->lists_done);
    pm_set_free(p->live_done);
    pm_set_free(p->skip);
}

/* A used entry: the full paths of its data file and extra files, into
 * p->paths, or as records for it when read on a worker. */
static int protect_entry(void *ud, const pm_manifest_entry *m, const char *manifest, pm_buf *out, pm_buf *scratch,
                         pm_err *e) {
    protect *p = ud;
    pm_buf *b = &scratch[0], *x = &scratch[1];
    (void)manifest;
    int rc = pm_data_file_full_path(p->t, m, b, e);
    if (rc) return rc;
    if (out ? pm_refs_record(out, b->data, b->len) : pm_pathset_add(p->paths, b->data, b->len) < 0) return pm_nomem(e);
    for (size_t i = 0; i < m->file.extra_files.n; i++) {
        if ((rc = pm_extra_file_path((char *)b->data, m->file.extra_files.v[i], p->t->root, x, e))) return rc;
        if (out ? pm_refs_record(out, x->data, x->len) : pm_pathset_add(p->paths, x->data, x->len) < 0) return pm_nomem(e);
    }
    return PAIMON_OK;
}

static int protect_record(void *ud, const void *rec, size_t len, pm_err *e) {
    return pm_pathset_add(((protect *)ud)->paths, rec, len) < 0 ? pm_nomem(e) : PAIMON_OK;
}

/* A retained manifest list just read: its name and its manifests' names are
 * protected, and protect_name need not read it again. */
static int note_list(protect *p, const char *list, const pm_mfile *v, size_t n, pm_err *e) {
    if (!list || pm_set_contains(p->lists_done, list, strlen(list))) return PAIMON_OK;
    int rc = name_add(p->names, list, e);
    for (size_t k = 0; !rc && k < n; k++) rc = name_add(p->names, v[k].name, e);
    return rc ? rc : set_add_str(p->lists_done, list, e);
}

/* The manifest names of a list, for pm_refs_live / pm_refs_adds. */
static const char **mfile_names(const pm_mfile *v, size_t n) {
    const char **names = malloc((n ? n : 1) * sizeof *names);
    for (size_t i = 0; names && i < n; i++) names[i] = v[i].name;
    return names;
}

static int protect_index_file(void *ud, const pm_index_entry *ie, pm_err *e) {
    return name_add(((protect *)ud)->names, ie->file_name, e);
}

/* One metadata file a snapshot names: its name, and a list's manifests or
 * an index manifest's index files (each list read once). */
static int protect_name(void *ud, pm_refs_name_kind kind, const char *name, int64_t size, pm_err *e) {
    protect *p = ud;
    (void)size;
    int rc = name_add(p->names, name, e);
    if (rc || kind == PM_REFS_STATISTICS || pm_set_contains(p->lists_done, name, strlen(name))) return rc;
    if (kind == PM_REFS_INDEX_MANIFEST) {
        rc = pm_refs_index_files(p->t, name, protect_index_file, p, e);
    } else {
        pm_mfile *v = NULL;
        size_t n = 0;
        rc = pm_read_manifest_list(p->t, name, &v, &n, e);
        for (size_t k = 0; !rc && k < n; k++) rc = name_add(p->names, v[k].name, e);
        pm_mfiles_free(v, n);
    }
    return rc ? rc : set_add_str(p->lists_done, name, e);
}

static int protect_meta(const pm_snapshot *s, protect *p, pm_err *e) {
    return pm_refs_snapshot_names(s, protect_name, p, e);
}

/* The base then delta manifest list of s, in one vector (n_base: how many
 * are the base's). */
static int read_lists(protect *p, const pm_snapshot *s, pm_mfile **v, size_t *n, size_t *n_base, pm_err *e) {
    *v = NULL;
    *n = 0;
    int rc = PAIMON_OK;
    if (s->base_manifest_list) rc = pm_read_manifest_list(p->t, s->base_manifest_list, v, n, e);
    *n_base = *n;
    if (!rc && s->delta_manifest_list) rc = pm_read_manifest_list(p->t, s->delta_manifest_list, v, n, e);
    if (!rc) rc = note_list(p, s->base_manifest_list, *v, *n_base, e);
    if (!rc) rc = note_list(p, s->delta_manifest_list, *v + *n_base, *n - *n_base, e);
    return rc;
}

/* Live files of a snapshot whose lists are v (pm_refs_live's rule), manifests
 * read in parallel; each base + delta pair once. */
static int live_of(const pm_snapshot *s, const pm_mfile *v, size_t n, protect *p, pm_err *e) {
    pm_buf key = {0};
    if (pm_buf_printf(&key, "%s", s->base_manifest_list ? s->base_manifest_list : "") || pm_buf_putc(&key, 0) ||
        pm_buf_printf(&key, "%s", s->delta_manifest_list ? s->delta_manifest_list : ""))
        return pm_nomem(e);
    int rc = PAIMON_OK;
    if (!pm_set_contains(p->live_done, key.data, key.len)) {
        const char **names = mfile_names(v, n);
        pm_refs_entry_visitor ev = {protect_entry, protect_record, NULL, p};
        rc = names ? pm_refs_live(p->t, names, n, p->threads, PM_REFS_REFUSE, &ev, e) : pm_nomem(e);
        if (!rc && pm_set_add(p->live_done, key.data, key.len) < 0) rc = pm_nomem(e);
        free(names);
        p->chains++;
    }
    pm_buf_free(&key);
    return rc;
}

static int protect_live(const pm_snapshot *s, protect *p, pm_err *e) {
    pm_mfile *v;
    size_t n, n_base;
    int rc = read_lists(p, s, &v, &n, &n_base, e);
    if (!rc) rc = live_of(s, v, n, p, e);
    pm_mfiles_free(v, n);
    return rc;
}

/* ADD entries of the manifests v into p->paths. */
static int adds_of(const pm_mfile *v, size_t n, protect *p, pm_err *e) {
    const char **names = mfile_names(v, n);
    pm_refs_entry_visitor ev = {protect_entry, NULL, NULL, p};
    int rc = names ? pm_refs_adds(p->t, names, n, PM_REFS_REFUSE, &ev, e) : pm_nomem(e);
    free(names);
    return rc;
}

/* ADD entries of every manifest of a retained list into p->paths. A
 * long-lived changelog's list that is gone (gone_ok) protects nothing:
 * Java deletes the base and delta lists of changelogs with a changelog
 * producer, and the base list of the others, when it moves a snapshot to
 * changelog/; any other read error refuses the run. */
static int protect_list_adds(const char *list, int gone_ok, protect *p, pm_err *e) {
    pm_mfile *v = NULL;
    size_t n = 0;
    int rc = pm_read_manifest_list(p->t, list, &v, &n, e);
    if (rc == PAIMON_NOTFOUND && gone_ok) { pm_err_clear(e); pm_mfiles_free(v, n); return PAIMON_OK; }
    if (!rc) rc = note_list(p, list, v, n, e);
    if (!rc) rc = adds_of(v, n, p, e);
    pm_mfiles_free(v, n);
    return rc;
}

/* Whether snapshot s (its base list: b[0..nb)) is its parent's (base +
 * delta: a[0..na)) merged, as every commit writes it: the manifests merged
 * away and the ones new in s carry the same net file count (a merge
 * cancels ADD/DELETE pairs, never changes the count), nothing is new
 * unless something went, the new ones carry the UUID of s's own lists
 * (one commit wrote them), and the record counts add up. Anything else
 * (a fast-forward's first copied snapshot, a base written by hand) starts
 * a new chain: a false "no" only costs reading a live set. */
static int derived_from(pm_opt_i64 parent_total, const pm_mfile *a, size_t na, const pm_snapshot *s,
                        const pm_mfile *b, size_t nb, int *yes, pm_err *e) {
    *yes = 0;
    if (parent_total.has && s->total_record_count.has && s->delta_record_count.has &&
        s->total_record_count.v != parent_total.v + s->delta_record_count.v)
        return PAIMON_OK;
    pm_set *sa = pm_set_new(), *sb = pm_set_new();
    int rc = sa && sb ? PAIMON_OK : pm_nomem(e);
    for (size_t i = 0; !rc && i < na; i++) rc = name_add(sa, a[i].name, e);
    for (size_t i = 0; !rc && i < nb; i++) rc = name_add(sb, b[i].name, e);
    int64_t gone = 0, fresh = 0;
    size_t n_gone = 0, n_fresh = 0;
    for (size_t i = 0; !rc && i < na; i++)
        if (!name_has(sb, a[i].name)) { gone += a[i].added - a[i].deleted; n_gone++; }
    /* the new ones are the merge's output, written by s's commit: Java and
     * we name every file of one commit with one UUID (manifest-<uuid>-<n>,
     * manifest-list-<uuid>-<n>) */
    const char *lu = s->base_manifest_list;
    int same_writer = !strncmp(lu, "manifest-list-", 14) && strlen(lu) >= 14 + 36;
    for (size_t i = 0; !rc && i < nb; i++)
        if (!name_has(sa, b[i].name)) {
            fresh += b[i].added - b[i].deleted;
            n_fresh++;
            const char *mu = b[i].name;
            if (!same_writer || strncmp(mu, "manifest-", 9) || strlen(mu) < 9 + 36 || memcmp(mu + 9, lu + 14, 36))
                same_writer = 0;
        }
    if (!rc) *yes = gone == fresh && (n_gone == 0) == (n_fresh == 0) && same_writer;
    pm_set_free(sa);
    pm_set_free(sb);
    return rc;
}

/* What the chain walk reads of one snapshot, on a worker (each list and
 * manifest is a request on an object store): its base ++ delta lists and
 * the paths its delta ADDs (records, pm_refs_record). */
typedef struct chain_read {
    pm_mfile *v;
    size_t nv, n_base;
    pm_buf adds;
    int rc;
    pm_err err;
} chain_read;

typedef struct chain_batch {
    paimon_table *bt;
    pm_snapshot *const *s;
    chain_read *r;
    pm_avro_schema_cache *sc;   /* the caller's, bound on the workers too */
} chain_batch;

typedef struct chain_adds { paimon_table *bt; pm_buf *out; } chain_adds;

static int chain_add_entry(void *ud, const pm_manifest_entry *m, const char *manifest, pm_buf *out, pm_buf *scratch,
                           pm_err *e) {
    chain_adds *c = ud;
    pm_buf *b = &scratch[0], *x = &scratch[1];
    (void)manifest;
    (void)out;
    int rc = pm_data_file_full_path(c->bt, m, b, e);
    if (rc) return rc;
    if (pm_refs_record(c->out, b->data, b->len)) return pm_nomem(e);
    for (size_t i = 0; i < m->file.extra_files.n; i++) {
        if ((rc = pm_extra_file_path((char *)b->data, m->file.extra_files.v[i], c->bt->root, x, e))) return rc;
        if (pm_refs_record(c->out, x->data, x->len)) return pm_nomem(e);
    }
    return PAIMON_OK;
}

static void chain_read_task(void *ctx, size_t i) {
    chain_batch *b = ctx;
    chain_read *r = &b->r[i];
    const pm_snapshot *s = b->s[i];
    pm_avro_schema_cache *prev = pm_avro_schema_cache_bound();
    if (b->sc) pm_avro_schema_cache_bind(b->sc);
    if (s->base_manifest_list) r->rc = pm_read_manifest_list(b->bt, s->base_manifest_list, &r->v, &r->nv, &r->err);
    r->n_base = r->nv;
    if (!r->rc && s->delta_manifest_list)
        r->rc = pm_read_manifest_list(b->bt, s->delta_manifest_list, &r->v, &r->nv, &r->err);
    const char **names = r->rc ? NULL : mfile_names(r->v + r->n_base, r->nv - r->n_base);
    if (!r->rc && !names) r->rc = pm_nomem(&r->err);
    chain_adds ca = {b->bt, &r->adds};
    pm_refs_entry_visitor ev = {chain_add_entry, NULL, NULL, &ca};
    if (!r->rc) r->rc = pm_refs_adds(b->bt, names, r->nv - r->n_base, PM_REFS_REFUSE, &ev, &r->err);
    free(names);
    if (b->sc) pm_avro_schema_cache_bind(prev);
}

static void chain_read_clear(chain_read *r) {
    pm_mfiles_free(r->v, r->nv);
    pm_buf_free(&r->adds);
    memset(r, 0, sizeof *r);
}

/* Records (pm_refs_record) into p->paths. */
static int add_records(protect *p, const pm_buf *recs, pm_err *e) {
    size_t at = 0;
    while (at + 4 <= recs->len) {
        uint32_t l;
        memcpy(&l, recs->data + at, 4);
        if (pm_pathset_add(p->paths, recs->data + at + 4, l) < 0) return pm_nomem(e);
        at += 4 + (size_t)l;
    }
    return PAIMON_OK;
}

#define CHAIN_WINDOW 64

/* Which other branches hold the same snapshot: per branch, its snapshots'
 * ids and a hash of their lists' names, ascending (NULL with one branch:
 * nothing is shared). */
typedef struct sig_key { int64_t id; uint64_t h; } sig_key;
typedef struct sigs {
    sig_key **k;
    size_t *n;
    size_t nb;
} sigs;

static uint64_t lists_hash(const pm_snapshot *s) {
    uint64_t h = 0;
    if (s->delta_manifest_list) h = pm_hash_bytes(s->delta_manifest_list, strlen(s->delta_manifest_list));
    if (s->base_manifest_list) h = h * 31 + pm_hash_bytes(s->base_manifest_list, strlen(s->base_manifest_list));
    return h ? h : 1;   /* 0: no delta list, shares nothing */
}

static uint64_t sig_of(const sigs *g, size_t self, const pm_snapshot *s) {
    uint64_t sig = 0, h = lists_hash(s);
    for (size_t j = 0; g->k && j < g->nb; j++) {
        if (j == self || !s->delta_manifest_list) continue;
        size_t lo = 0, hi = g->n[j];
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->k[j][mid].id < s->id) lo = mid + 1;
            else hi = mid;
        }
        if (lo < g->n[j] && g->k[j][lo].id == s->id && g->k[j][lo].h == h)
            sig += (uint64_t)(j + 1) * 0x9E3779B97F4A7C15ull;
    }
    return sig;
}

/* The chain walk's state across windows: the parent of the next snapshot. */
typedef struct chain_state {
    protect *p;
    const sigs *g;
    size_t self;         /* this branch's index in g */
    int has_prev;
    int64_t prev_id;
    pm_opt_i64 prev_total;
    uint64_t prev_sig;
    pm_mfile *pv;        /* the parent's base + delta */
    size_t pn;
    chain_read *rd;      /* CHAIN_WINDOW */
} chain_state;

/* One window s[0..n) of a branch's retained history, ascending (THE RULE
 * in pm_protect.h): each chain start's live set, every later delta's and
 * every changelog list's ADDs, every metadata name. Lists and deltas are
 * read on the thread pool, then walked in order. */
static int chain_window(void *ud, pm_snapshot *const *s, size_t n, pm_err *e) {
    chain_state *c = ud;
    protect *p = c->p;
    int rc = PAIMON_OK;
    for (size_t at = 0; !rc && at < n; at += CHAIN_WINDOW) {
        size_t k = n - at < CHAIN_WINDOW ? n - at : CHAIN_WINDOW;
        chain_batch b = {p->t, s + at, c->rd, pm_avro_schema_cache_bound()};
        /* an object store's reads wait on round trips: more at once than threads */
        rc = pm_exec_run(pm_io_read_threads(p->t->io, p->threads), k, chain_read_task, &b,
                         "read retained snapshots' lists", NULL, NULL, e);
        for (size_t j = 0; !rc && j < k; j++) {
            const pm_snapshot *si = s[at + j];
            chain_read *r = &c->rd[j];
            uint64_t sig = sig_of(c->g, c->self, si);
            if (r->rc) { rc = r->rc; *e = r->err; }
            if (!rc) rc = note_list(p, si->base_manifest_list, r->v, r->n_base, e);
            if (!rc) rc = note_list(p, si->delta_manifest_list, r->v + r->n_base, r->nv - r->n_base, e);
            int derived = 0;
            if (!rc && c->has_prev && si->id == c->prev_id + 1 && sig == c->prev_sig && si->base_manifest_list)
                rc = derived_from(c->prev_total, c->pv, c->pn, si, r->v, r->n_base, &derived, e);
            if (!rc) rc = derived ? add_records(p, &r->adds, e) : live_of(si, r->v, r->nv, p, e);
            if (!rc && si->changelog_manifest_list) rc = protect_list_adds(si->changelog_manifest_list, 0, p, e);
            if (!rc) rc = protect_meta(si, p, e);
            if (rc) {
                pm_err_prefix(e, "%s: cannot read %s snapshot %lld (it protects files)", p->refusing, p->t->branch,
                              (long long)si->id);
                break;
            }
            pm_mfiles_free(c->pv, c->pn);
            c->pv = r->v;
            c->pn = r->nv;
            r->v = NULL;
            r->nv = 0;
            c->has_prev = 1;
            c->prev_id = si->id;
            c->prev_total = si->total_record_count;
            c->prev_sig = sig;
        }
        for (size_t j = 0; j < k; j++) chain_read_clear(&c->rd[j]);
    }
    return rc;
}

/* Pass 1 (two branches or more): each branch's (id, lists hash). */
static int sig_window(void *ud, pm_snapshot *const *s, size_t n, pm_err *e) {
    sigs *g = ud;
    size_t j = g->nb - 1;   /* the branch being read is the last one added */
    sig_key *nk = realloc(g->k[j], (g->n[j] + n) * sizeof *nk);
    if (!nk) return pm_nomem(e);
    g->k[j] = nk;
    for (size_t i = 0; i < n; i++) nk[g->n[j]++] = (sig_key){s[i]->id, lists_hash(s[i])};
    return PAIMON_OK;
}

/* A long-lived changelog's base list: its name, and its manifests while it
 * exists (Java keeps it without a changelog producer until
 * ChangelogDeletion cleans it; orphan cleaning reads it then). */
static int protect_base_of_changelog(const char *list, protect *p, pm_err *e) {
    if (!list) return PAIMON_OK;
    int rc = protect_name(p, PM_REFS_BASE_LIST, list, -1, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = name_add(p->names, list, e); }
    return rc;
}

/* A tag: its live set, its changelog's additions, its metadata. A
 * long-lived changelog: the files its delta and changelog lists add (if
 * the lists still exist) and the names of every metadata file it names
 * (base list, index manifest and statistics are not read: Java may have
 * deleted them). Those going protect nothing. */
static int protect_source(void *ud, paimon_table *bt, pm_refs_source src, const char *by, const pm_snapshot *s,
                          pm_err *e) {
    protect *p = ud;
    int rc;
    if (by && pm_set_contains(p->skip, by, strlen(by))) return PAIMON_OK;
    if (!strcmp(bt->branch, p->own) && (p->whole || s->id > p->drop_above)) return PAIMON_OK;
    if (src == PM_REFS_TAG) {
        rc = protect_live(s, p, e);
        if (!rc && s->changelog_manifest_list) rc = protect_list_adds(s->changelog_manifest_list, 0, p, e);
        return rc ? rc : protect_meta(s, p, e);
    }
    rc = protect_base_of_changelog(s->base_manifest_list, p, e);
    if (!rc) rc = name_add(p->names, s->index_manifest, e);
    if (!rc) rc = name_add(p->names, s->statistics, e);
    if (!rc && s->delta_manifest_list) rc = protect_list_adds(s->delta_manifest_list, 1, p, e);
    if (!rc && s->changelog_manifest_list) rc = protect_list_adds(s->changelog_manifest_list, 1, p, e);
    return rc;
}

/* Tags and long-lived changelogs of branch p->t. A tag that cannot be
 * read is corruption; a changelog gone meanwhile was expired: conflict. */
static int protect_tags_changelogs(protect *p, pm_err *e) {
    pm_refs_visitor v = {PM_REFS_REFUSE, p->refusing, {0, PAIMON_CORRUPT, PAIMON_CONFLICT}, protect_source, NULL, p};
    int rc = pm_refs_tags(p->t, &v, e);
    return rc ? rc : pm_refs_changelogs(p->t, &v, e);
}

/* The retained snapshots of branch bt (index self): the own branch's as
 * the spec gives them, every other branch's all (listed), through fn. */
static int walk_branch(paimon_table *bt, const pm_protect_spec *sp, const protect *p, pm_refs_window_fn fn, void *ud,
                       pm_err *e) {
    int threads = pm_io_read_threads(bt->io, p->threads);
    if (strcmp(bt->branch, p->own)) return pm_refs_walk_snapshots(bt, INT64_MIN, INT64_MAX, 1, threads, 0, fn, ud, e);
    if (p->whole) return PAIMON_OK;
    if (sp->kept) {
        int rc = PAIMON_OK;
        for (size_t at = 0; !rc && at < sp->n_kept; at += 256)
            rc = fn(ud, sp->kept + at, sp->n_kept - at < 256 ? sp->n_kept - at : 256, e);
        return rc;
    }
    if (sp->kept_all) return pm_refs_walk_snapshots(bt, INT64_MIN, INT64_MAX, 1, threads, 0, fn, ud, e);
    int rc = sp->kept_first ? fn(ud, &sp->kept_first, 1, e) : PAIMON_OK;
    return rc ? rc : pm_refs_walk_snapshots(bt, sp->kept_from, sp->kept_to, 0, threads, 0, fn, ud, e);
}

/* Every root of every branch: retained snapshots by chains, tags,
 * long-lived changelogs. Memory: one window of snapshots, the sets, and
 * with two branches or more 16 bytes per snapshot to see which they share. */
static int protect_roots(paimon_table *t, const pm_protect_spec *sp, protect *p, pm_err *e) {
    paimon_table **bts = NULL;
    size_t nb = 0;
    int rc = pm_refs_open_branches(t, &bts, &nb, e);
    if (rc) { pm_err_prefix(e, "%s (a branch may use files)", p->refusing); return rc; }
    sigs g = {NULL, NULL, 0};
    if (nb > 1) {
        g.k = calloc(nb, sizeof *g.k);
        g.n = calloc(nb, sizeof *g.n);
        if (!g.k || !g.n) rc = pm_nomem(e);
        for (size_t i = 0; !rc && i < nb; i++) {
            g.nb = i + 1;
            if ((rc = walk_branch(bts[i], sp, p, sig_window, &g, e)))
                pm_err_prefix(e, "%s: cannot read the snapshots of branch %s (they may use files)", p->refusing,
                              bts[i]->branch);
        }
        g.nb = nb;
    }
    chain_read *rd = rc ? NULL : calloc(CHAIN_WINDOW, sizeof *rd);
    if (!rc && !rd) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < nb; i++) {
        chain_state c = {p, &g, i, 0, 0, {0, 0}, 0, NULL, 0, rd};
        p->t = bts[i];
        rc = walk_branch(bts[i], sp, p, chain_window, &c, e);
        if (rc && !strstr(e->msg, "it protects files"))
            pm_err_prefix(e, "%s: cannot read the snapshots of branch %s (they may use files)", p->refusing,
                          bts[i]->branch);
        pm_mfiles_free(c.pv, c.pn);
        if (!rc) rc = protect_tags_changelogs(p, e);
    }
    free(rd);
    for (size_t i = 0; g.k && i < nb; i++) free(g.k[i]);
    free(g.k);
    free(g.n);
    p->t = t;
    pm_refs_close_branches(bts, nb);
    return rc;
}

int pm_protect_build(paimon_table *t, const pm_protect_spec *sp, pm_protect **out, pm_err *e) {
    *out = NULL;
    protect *p = calloc(1, sizeof *p);
    if (!p) return pm_nomem(e);
    /* every list and manifest shares a handful of writer schemas: parse
     * each once (unless the caller already does) */
    pm_avro_schema_cache *sc = NULL, *prev = pm_avro_schema_cache_bound();
    if (!prev && (sc = pm_avro_schema_cache_new())) pm_avro_schema_cache_bind(sc);
    int rc = protect_init(p, t, sp, e);
    if (!rc) rc = protect_roots(t, sp, p, e);
    if (sc) { pm_avro_schema_cache_bind(NULL); pm_avro_schema_cache_free(sc); }
    if (rc) { pm_protect_free(p); return rc; }
    *out = p;
    return PAIMON_OK;
}

void pm_protect_free(pm_protect *p) {
    if (!p) return;
    protect_clear(p);
    free(p);
}

int pm_protect_has_path(const pm_protect *p, const char *path, size_t len) {
    return pm_pathset_contains(p->paths, path, len);
}

int pm_protect_has_name(const pm_protect *p, const char *name) {
    return name && name_has(p->names, name);
}

int64_t pm_protect_chains(const pm_protect *p) { return p->chains; }

/* Expiring snapshots that become changelog/changelog-<id> (decoupled
 * lifecycle) keep what Java's SnapshotDeletion keeps for them: the files
 * and manifests of their changelog lists (deleteChangelog false); without
 * a changelog producer also their base and delta lists with every
 * manifest (deleteDataManifestLists false) and the files their deltas
 * add (Java skips APPEND files deleted in deltas; ours are exactly the
 * additions a changelog reads). Index manifests and statistics go as
 * Java's planManifestsCleaner deletes them. */
int pm_protect_add_moved_changelogs(pm_protect *p, paimon_table *t, pm_snapshot *const *exp, size_t n_exp,
                                    pm_err *e) {
    const char *producer = pm_schema_option_or_default(t->schema, "changelog-producer");
    int produce = producer && strcasecmp(producer, "none") != 0;
    int rc = PAIMON_OK;
    p->t = t;
    for (size_t i = 0; !rc && i < n_exp; i++) {
        const pm_snapshot *s = exp[i];
        if (s->changelog_manifest_list) rc = protect_list_adds(s->changelog_manifest_list, 0, p, e);
        if (!rc && !produce && s->base_manifest_list) rc = protect_name(p, PM_REFS_BASE_LIST, s->base_manifest_list, -1, e);
        if (!rc && !produce && s->delta_manifest_list) rc = protect_list_adds(s->delta_manifest_list, 0, p, e);
        if (rc) pm_err_prefix(e, "refusing to expire: cannot read snapshot %lld (its changelog keeps files)", (long long)s->id);
    }
    return rc;
}

/* ---- candidates ------------------------------------------------------------- */

typedef pm_protect_plan plan;

typedef struct op_rec { char *path; int64_t size; int del; size_t n_extra; char **extra; } op_rec;

static void ops_free(op_rec *v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(v[i].path);
        for (size_t k = 0; k < v[i].n_extra; k++) free(v[i].extra[k]);
        free(v[i].extra);
    }
    free(v);
}

/* What one snapshot's plan reads, read on the thread pool (each list and
 * manifest is a request on an object store), planned afterwards in
 * snapshot order. lists[0], lists[1]: its base and delta manifest lists
 * with their read results (rc -1: not read); ops: its delta's entries. */
struct pm_protect_read {
    pm_mfile *lists[2];
    size_t nlist[2];
    int list_rc[2];
    pm_err list_err[2];
    op_rec *ops;
    size_t nops;
    int delta_gone;      /* the delta list or one of its manifests is gone (an earlier run deleted it) */
    int rc;              /* reading the delta's manifests failed */
    pm_err err;
};
typedef struct pm_protect_read snap_read;

static void snap_read_clear(snap_read *d) {
    for (int i = 0; i < 2; i++) pm_mfiles_free(d->lists[i], d->nlist[i]);
    ops_free(d->ops, d->nops);
    memset(d, 0, sizeof *d);
    d->list_rc[0] = d->list_rc[1] = -1;
}

pm_protect_read *pm_protect_read_new(size_t n) {
    snap_read *d = calloc(n ? n : 1, sizeof *d);
    for (size_t i = 0; d && i < n; i++) d[i].list_rc[0] = d[i].list_rc[1] = -1;
    return d;
}

void pm_protect_read_clear(pm_protect_read *d, size_t n) {
    for (size_t i = 0; d && i < n; i++) snap_read_clear(&d[i]);
}

void pm_protect_read_free(pm_protect_read *d, size_t n) {
    pm_protect_read_clear(d, n);
    free(d);
}

pm_protect_read *pm_protect_read_at(pm_protect_read *d, size_t i) { return &d[i]; }

/* The entries of the manifests of a delta list (v, n), in order, into d. */
static int read_delta_ops(const paimon_table *t, const pm_mfile *v, size_t n, snap_read *d, pm_err *e) {
    size_t cap = 0;
    int rc = PAIMON_OK;
    pm_buf b = {0}, x = {0};
    for (size_t i = 0; !rc && i < n; i++) {
        pm_manifest_reader *r;
        rc = pm_table_open_manifest_sized(t, v[i].name, v[i].size, PM_MANIFEST_FILE, &r, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = 0; d->delta_gone = 1; break; }
        if (rc) break;
        const pm_manifest_entry *m;
        while ((rc = pm_manifest_next_entry(r, &m, e)) == PAIMON_OK) {
            if ((rc = pm_data_file_full_path(t, m, &b, e))) break;
            if (d->nops == cap) {
                cap = cap ? cap * 2 : 64;
                op_rec *nv = realloc(d->ops, cap * sizeof *nv);
                if (!nv) { rc = pm_nomem(e); break; }
                d->ops = nv;
            }
            op_rec *o = &d->ops[d->nops++];
            memset(o, 0, sizeof *o);
            o->path = pm_strdup((char *)b.data);
            o->del = m->kind == PM_FILE_DELETE;
            o->size = m->file.file_size;
            if (!o->path) { rc = pm_nomem(e); break; }
            if (o->del && m->file.extra_files.n) {
                o->extra = calloc(m->file.extra_files.n, sizeof *o->extra);
                if (!o->extra) { rc = pm_nomem(e); break; }
                for (size_t k = 0; k < m->file.extra_files.n; k++) {
                    if ((rc = pm_extra_file_path(o->path, m->file.extra_files.v[k], t->root, &x, e))) break;
                    o->extra[o->n_extra] = pm_strdup((char *)x.data);
                    if (!o->extra[o->n_extra++]) { rc = pm_nomem(e); break; }
                }
                if (rc) break;
            }
        }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    pm_buf_free(&b);
    pm_buf_free(&x);
    return rc;
}

static void read_list(const paimon_table *t, const char *name, pm_opt_i64 size, snap_read *d, int i) {
    d->list_rc[i] = pm_read_manifest_list_sized(t, name, size.has ? size.v : -1, &d->lists[i], &d->nlist[i],
                                                &d->list_err[i]);
}

/* Reads for snapshot s: with `data`, its delta (plan_data); with `meta`,
 * the lists plan_meta reads (those nothing retained names). */
void pm_protect_read_for_plan(const paimon_table *t, const pm_snapshot *s, const pm_protect *p, int data, int meta,
                              snap_read *d) {
    const char *base = s->base_manifest_list, *delta = s->delta_manifest_list;
    if (meta && base && !name_has(p->names, base)) read_list(t, base, s->base_manifest_list_size, d, 0);
    if (delta && (data || (meta && !name_has(p->names, delta))))
        read_list(t, delta, s->delta_manifest_list_size, d, 1);
    if (!data) return;
    if (!delta || d->list_rc[1] == PAIMON_NOTFOUND) { d->delta_gone = 1; return; }
    if (d->list_rc[1] == PAIMON_OK) d->rc = read_delta_ops(t, d->lists[1], d->nlist[1], d, &d->err);
}

/* Data files deleted by a snapshot's delta, read into d (last operation on
 * a path wins: ADD then DELETE deletes, DELETE then ADD keeps). A delta
 * that is already gone (an earlier run deleted it) contributes nothing. */
int pm_protect_plan_delta_read(const pm_snapshot *s, const snap_read *d, const pm_protect *p, plan *pl, pm_err *e) {
    int rc = PAIMON_OK;
    if (d->list_rc[1] > 0 && d->list_rc[1] != PAIMON_NOTFOUND) { *e = d->list_err[1]; rc = d->list_rc[1]; }
    else if (d->rc) { *e = d->err; rc = d->rc; }
    if (!rc && !d->delta_gone) {
        pm_set *seen = pm_set_new();
        if (!seen) rc = pm_nomem(e);
        for (size_t i = d->nops; !rc && i-- > 0;) {
            const op_rec *o = &d->ops[i];
            int added = pm_set_add(seen, o->path, strlen(o->path));
            if (added < 0) { rc = pm_nomem(e); break; }
            if (!added || !o->del) continue;
            if (pm_pathset_contains(p->paths, o->path, strlen(o->path))) { pl->protected_files++; continue; }
            if ((rc = pm_deleter_add_sized(pl->data, o->path, PM_K_DATA, o->size, e))) break;
            for (size_t k = 0; !rc && k < o->n_extra; k++)
                if (!pm_pathset_contains(p->paths, o->extra[k], strlen(o->extra[k])))
                    rc = pm_deleter_add(pl->data, o->extra[k], PM_K_DATA, e);
        }
        pm_set_free(seen);
    }
    if (rc) pm_err_prefix(e, "snapshot %lld, delta manifest list %s", (long long)s->id, s->delta_manifest_list);
    return rc;
}

/* The same, reading on the calling thread (changelog deletion). */
static int plan_data(paimon_table *t, const pm_snapshot *s, const pm_protect *p, plan *pl, pm_err *e) {
    snap_read d;
    memset(&d, 0, sizeof d);
    d.list_rc[0] = d.list_rc[1] = -1;
    pm_protect_read_for_plan(t, s, p, 1, 0, &d);
    int rc = pm_protect_plan_delta_read(s, &d, p, pl, e);
    snap_read_clear(&d);
    return rc;
}

/* Changelog files added by an expiring snapshot. */
int pm_protect_plan_changelog(paimon_table *t, const pm_snapshot *s, const pm_protect *p, plan *pl, pm_err *e) {
    pm_mfile *v = NULL;
    size_t n = 0;
    int rc = pm_read_manifest_list(t, s->changelog_manifest_list, &v, &n, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    pm_buf b = {0}, x = {0};
    for (size_t i = 0; !rc && i < n; i++) {
        pm_manifest_reader *r;
        rc = pm_table_open_manifest(t, v[i].name, PM_MANIFEST_FILE, &r, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = 0; continue; }
        if (rc) break;
        const pm_manifest_entry *m;
        while ((rc = pm_manifest_next_entry(r, &m, e)) == PAIMON_OK) {
            if (m->kind != PM_FILE_ADD) continue;
            if ((rc = pm_data_file_full_path(t, m, &b, e))) break;
            if (pm_pathset_contains(p->paths, b.data, b.len)) { pl->protected_files++; continue; }
            if ((rc = pm_deleter_add_sized(pl->data, (char *)b.data, PM_K_CHANGELOG, m->file.file_size, e))) break;
            for (size_t k = 0; !rc && k < m->file.extra_files.n; k++) {
                if ((rc = pm_extra_file_path((char *)b.data, m->file.extra_files.v[k], t->root, &x, e))) break;
                if (!pm_pathset_contains(p->paths, x.data, x.len)) rc = pm_deleter_add(pl->data, (char *)x.data, PM_K_CHANGELOG, e);
            }
        }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    pm_buf_free(&b);
    pm_buf_free(&x);
    pm_mfiles_free(v, n);
    return rc;
}

/* size: what the metadata records (-1: nothing) */
static int add_meta_file(paimon_table *t, pm_deleter *d, const char *sub, const char *name, int kind, int64_t size,
                         pm_err *e) {
    pm_buf b = {0};
    int rc = pm_table_meta_path(t, sub, name, &b, e);
    if (!rc) rc = pm_deleter_add_sized(d, (char *)b.data, kind, size, e);
    pm_buf_free(&b);
    return rc;
}

/* Manifest lists, manifests, index manifest, index files and statistics
 * of an expiring snapshot that nothing retained uses. */
int pm_protect_plan_meta_read(paimon_table *t, const pm_snapshot *s, const snap_read *d, const pm_protect *p, plan *pl,
                              pm_err *e) {
    const char *lists[3] = {s->base_manifest_list, s->delta_manifest_list, s->changelog_manifest_list};
    const pm_opt_i64 sizes[3] = {s->base_manifest_list_size, s->delta_manifest_list_size,
                                 s->changelog_manifest_list_size};
    int rc;
    for (int i = 0; i < 3; i++) {
        const char *l = lists[i];
        if (!l || name_has(p->names, l)) continue;
        if ((rc = add_meta_file(t, pl->meta_b, "manifest", l, PM_K_MANIFEST_LIST, sizes[i].has ? sizes[i].v : -1, e)))
            return rc;
        pm_mfile *v = NULL;
        size_t n = 0;
        int own = !d || i == 2 || d->list_rc[i] < 0;   /* not read ahead: read now */
        if (own) {
            rc = pm_read_manifest_list(t, l, &v, &n, e);
        } else {
            rc = d->list_rc[i];
            if (rc) *e = d->list_err[i];
            v = d->lists[i];
            n = d->nlist[i];
        }
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = 0; }
        for (size_t k = 0; !rc && k < n; k++)
            if (!name_has(p->names, v[k].name))
                rc = add_meta_file(t, pl->meta_a, "manifest", v[k].name, PM_K_MANIFEST, v[k].size, e);
        if (own) pm_mfiles_free(v, n);
        if (rc) return rc;
    }
    const char *im = s->index_manifest;
    if (im && !name_has(p->names, im)) {
        if ((rc = add_meta_file(t, pl->meta_b, "manifest", im, PM_K_INDEX_MANIFEST, -1, e))) return rc;
        pm_manifest_reader *r;
        rc = pm_table_open_manifest(t, im, PM_INDEX_MANIFEST, &r, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = 0; r = NULL; }
        if (rc) return rc;
        if (r) {
            const pm_index_entry *ie;
            pm_buf b = {0};
            while ((rc = pm_manifest_next_index(r, &ie, e)) == PAIMON_OK) {
                if (!ie->file_name || name_has(p->names, ie->file_name)) continue;
                if ((rc = pm_index_file_path(t, ie, &b, e))) break;
                if ((rc = pm_deleter_add_sized(pl->meta_a, (char *)b.data, PM_K_INDEX, ie->file_size, e))) break;
            }
            pm_buf_free(&b);
            pm_manifest_close(r);
            if (rc != PAIMON_DONE) return rc;
        }
    }
    if (s->statistics && !name_has(p->names, s->statistics))
        if ((rc = add_meta_file(t, pl->meta_a, "statistics", s->statistics, PM_K_STATISTICS, -1, e))) return rc;
    return PAIMON_OK;
}

static int plan_meta(paimon_table *t, const pm_snapshot *s, const pm_protect *p, plan *pl, pm_err *e) {
    return pm_protect_plan_meta_read(t, s, NULL, p, pl, e);
}

/* Names of the tags, branches and consumers that exist now: compared right
 * before deleting, so one created while we planned aborts the run. */
/* ---- what a dropped source frees ---------------------------------------------- */

typedef struct drop_ctx {
    const pm_protect *p;
    paimon_table *bt;      /* the branch the source belongs to (paths) */
    plan *pl;
    int kind;
} drop_ctx;

/* A data file of a dropped source: into the deleter unless protected. */
static int drop_entry(void *ud, const pm_manifest_entry *m, const char *manifest, pm_buf *out, pm_buf *scratch,
                      pm_err *e) {
    drop_ctx *c = ud;
    (void)manifest;
    (void)out;
    pm_buf *b = &scratch[0], *x = &scratch[1];
    int rc = pm_data_file_full_path(c->bt, m, b, e);
    if (rc) return rc;
    if (pm_pathset_contains(c->p->paths, b->data, b->len)) { c->pl->protected_files++; return PAIMON_OK; }
    if ((rc = pm_deleter_add_sized(c->pl->data, (char *)b->data, c->kind, m->file.file_size, e))) return rc;
    for (size_t k = 0; !rc && k < m->file.extra_files.n; k++) {
        if ((rc = pm_extra_file_path((char *)b->data, m->file.extra_files.v[k], c->bt->root, x, e))) break;
        if (!pm_pathset_contains(c->p->paths, x->data, x->len)) rc = pm_deleter_add(c->pl->data, (char *)x->data, c->kind, e);
    }
    return rc;
}

/* A manifest of a dropped source that cannot be read (not strict): its
 * files are left (orphans for orphan cleaning), never guessed at. */
static int drop_unreadable(void *ud, const char *manifest, int code, const pm_err *why, pm_err *e) {
    (void)manifest;
    (void)code;
    (void)why;
    (void)e;
    ((drop_ctx *)ud)->pl->unreadable++;
    return PAIMON_OK;
}

/* The files of lists[0..n) (ADDs, or the live set of base + delta). */
static int drop_files_of(drop_ctx *c, const char *const *lists, size_t n_lists, int live, int strict, pm_err *e) {
    pm_mfile *v = NULL;
    size_t n = 0;
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < n_lists; i++) {
        if (!lists[i]) continue;
        rc = pm_read_manifest_list(c->bt, lists[i], &v, &n, e);
        if (rc && !strict) { pm_err_clear(e); c->pl->unreadable++; pm_mfiles_free(v, n); return PAIMON_OK; }
    }
    const char **names = rc ? NULL : mfile_names(v, n);
    if (!rc && !names) rc = pm_nomem(e);
    pm_refs_entry_visitor ev = {drop_entry, NULL, strict ? NULL : drop_unreadable, c};
    pm_refs_rule rule = strict ? PM_REFS_REFUSE : PM_REFS_REPORT;
    if (!rc) rc = live ? pm_refs_live(c->bt, names, n, 1, rule, &ev, e) : pm_refs_adds(c->bt, names, n, rule, &ev, e);
    free(names);
    pm_mfiles_free(v, n);
    return rc;
}

int pm_protect_plan_dropped(pm_protect *p, paimon_table *bt, const pm_snapshot *s, pm_protect_files files,
                            int strict, plan *pl, pm_err *e) {
    drop_ctx c = {p, bt, pl, PM_K_DATA};
    int rc = PAIMON_OK;
    if (files == PM_PROTECT_LIVE) {
        const char *lists[2] = {s->base_manifest_list, s->delta_manifest_list};
        rc = drop_files_of(&c, lists, 2, 1, strict, e);
    } else if (files == PM_PROTECT_DELTA_ADDS) {
        const char *lists[1] = {s->delta_manifest_list};
        rc = drop_files_of(&c, lists, 1, 0, strict, e);
    } else if (files == PM_PROTECT_DELTA_DELETES && s->delta_manifest_list) {
        rc = plan_data(bt, s, p, pl, e);
    }
    if (!rc && s->changelog_manifest_list) {
        if (strict) {
            rc = pm_protect_plan_changelog(bt, s, p, pl, e);
        } else {
            const char *lists[1] = {s->changelog_manifest_list};
            c.kind = PM_K_CHANGELOG;
            rc = drop_files_of(&c, lists, 1, 0, 0, e);
        }
    }
    if (!rc) rc = plan_meta(bt, s, p, pl, e);
    return rc;
}
