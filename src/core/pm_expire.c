/* Snapshot expiration: Java's range rule and deletion steps (§8.1), with
 * protection sets computed before anything is deleted. */
#include "pm_expire.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pm_avro.h"
#include "pm_consumers.h"
#include "pm_exec.h"
#include "pm_changelog.h"
#include "pm_names.h"
#include "pm_refs.h"


/* ---- small helpers -------------------------------------------------------- */

static int snapshot_path(const char *broot, int64_t id, pm_buf *out) {
    out->len = 0;
    return pm_buf_printf(out, "%s/snapshot/snapshot-%lld", broot, (long long)id);
}

static int snap_exists(paimon_table *t, int64_t id, int *ex, pm_err *e) {
    pm_buf p = {0};
    if (snapshot_path(t->branch_root, id, &p)) return pm_nomem(e);
    int rc = pm_io_exists(t->io, (char *)p.data, ex, e);
    pm_buf_free(&p);
    return rc;
}

static int int_option(const paimon_table *t, const char *key, const char *dflt, int64_t lo, int64_t *out,
                      pm_err *e) {
    const char *v = pm_schema_option(t->schema, key);
    if (!v) v = dflt ? dflt : pm_schema_option_or_default(t->schema, key);
    if (!v) return pm_fail(e, PAIMON_CORRUPT, "%s: option %s has no value", t->root, key);
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (*end == ' ') end++;
    if (errno || end == v || *end || x < lo || x > INT32_MAX)
        return pm_fail(e, PAIMON_CORRUPT, "%s: table option %s='%s' is not an integer >= %lld", t->root, key, v,
                       (long long)lo);
    *out = x;
    return PAIMON_OK;
}

static int duration_option(const paimon_table *t, const char *key, int64_t *ms, int *has, pm_err *e) {
    const char *v = pm_schema_option(t->schema, key);
    *has = v != NULL;
    if (!v) v = pm_schema_option_or_default(t->schema, key);
    if (!v) { *ms = 0; return PAIMON_OK; }
    int rc = pm_parse_duration_ms(v, ms, e);
    if (rc) pm_err_prefix(e, "%s: table option %s", t->root, key);
    return rc;
}

/* Java isChangelogDecoupled: any changelog.* retention above the snapshot's. */
static int changelog_decoupled(const paimon_table *t, char *why, size_t wl, pm_err *e) {
    static const char *pairs[][2] = {
        {"changelog.num-retained.min", "snapshot.num-retained.min"},
        {"changelog.num-retained.max", "snapshot.num-retained.max"},
    };
    for (size_t i = 0; i < 2; i++) {
        if (!pm_schema_option(t->schema, pairs[i][0])) continue;
        int64_t c, s;
        int rc = int_option(t, pairs[i][0], NULL, 0, &c, e);
        if (!rc) rc = int_option(t, pairs[i][1], NULL, 0, &s, e);
        if (rc) return -rc;
        if (c > s) {
            snprintf(why, wl, "%s=%lld is larger than %s=%lld (decoupled changelog lifecycle)", pairs[i][0],
                     (long long)c, pairs[i][1], (long long)s);
            return 1;
        }
    }
    if (pm_schema_option(t->schema, "changelog.time-retained")) {
        int64_t c, s;
        int h, rc = duration_option(t, "changelog.time-retained", &c, &h, e);
        if (!rc) rc = duration_option(t, "snapshot.time-retained", &s, &h, e);
        if (rc) return -rc;
        if (c > s) {
            snprintf(why, wl, "changelog.time-retained is longer than snapshot.time-retained (decoupled changelog lifecycle)");
            return 1;
        }
    }
    return 0;
}

static int clean_dirs_wanted(paimon_table *t, const pm_expire_opts *o) {
    if (o->clean_empty_dirs) return o->clean_empty_dirs > 0;
    const char *v = pm_schema_option(t->schema, "snapshot.clean-empty-directories");
    if (!v) v = pm_schema_option(t->schema, "snapshot.expire.clean-empty-directories");   /* Java's fallback key */
    return v && !strcasecmp(v, "true");
}

/* ---- range ----------------------------------------------------------------- */

/* Retention limits and the cut-off: the caller's options over the table's
 * (Java's defaults), checked. */
static int resolve_limits(paimon_table *t, const pm_expire_opts *o, pm_expire_range *r, pm_err *e) {
    int64_t v;
    int rc;
    if (o->retain_min > 0) r->retain_min = o->retain_min;
    else if ((rc = int_option(t, "snapshot.num-retained.min", NULL, 1, &v, e))) return rc;
    else r->retain_min = (int)v;
    if (o->retain_max > 0) r->retain_max = o->retain_max;
    else if ((rc = int_option(t, "snapshot.num-retained.max", NULL, 1, &v, e))) return rc;
    else r->retain_max = (int)v;
    /* The table's snapshot.expire.limit (Java's default 50, as t:option
     * reports it); Java takes 0 or less to mean: expire nothing. */
    if (o->max_deletes > 0) r->max_deletes = o->max_deletes;
    else if ((rc = int_option(t, "snapshot.expire.limit", NULL, INT32_MIN, &v, e))) return rc;
    else r->max_deletes = v < 0 ? 0 : (int)v;
    if (o->retain_min < 0 || o->retain_max < 0 || o->max_deletes < 0)
        return pm_fail(e, PAIMON_MISUSE, "retain-min, retain-max and max-deletes must be at least 1");
    if (r->retain_max < r->retain_min)
        return pm_fail(e, PAIMON_MISUSE, "retain-max (%d) must be at least retain-min (%d)", r->retain_max,
                       r->retain_min);
    if (o->has_older_than) {
        r->older_than_ms = o->older_than_ms;
    } else {
        int has;
        if ((rc = duration_option(t, "snapshot.time-retained", &v, &has, e))) return rc;
        r->older_than_ms = r->now_ms - v;
    }
    /* never in the future, also by the real clock (a caller's `now` must
     * not let one through) */
    int64_t clock = pm_now_millis();
    if (r->older_than_ms > r->now_ms || r->older_than_ms > clock)
        return pm_fail(e, PAIMON_MISUSE, "older-than cut-off %lld is in the future (now %lld)",
                       (long long)r->older_than_ms, (long long)(r->now_ms < clock ? r->now_ms : clock));
    return PAIMON_OK;
}

/* Java ConsumerManager.expire (run before expiration by
 * TableCommitImpl): a consumer whose file was not modified for
 * consumer.expiration-time is gone and protects nothing. A real run has
 * removed such files already; a dry run leaves them out the same way. */
static int consumer_is_expired(paimon_table *t, const pm_expire_range *r, const char *id, int *expired,
                               pm_err *e) {
    *expired = 0;
    if (!r->consumer_cutoff_ms) return PAIMON_OK;
    pm_buf p = {0};
    pm_stat st = {0};
    if (pm_buf_printf(&p, "%s/consumer/consumer-%s", t->branch_root, id)) return pm_nomem(e);
    int rc = pm_io_stat(t->io, (char *)p.data, &st, e);
    pm_buf_free(&p);
    if (!rc) *expired = st.mtime_ms < r->consumer_cutoff_ms;
    return rc;
}

/* The smallest nextSnapshot of the branch's consumers into r; any
 * unreadable consumer file refuses the run. */
static int read_consumers(paimon_table *t, pm_expire_range *r, pm_err *e) {
    char **ids = NULL;
    size_t n = 0;
    int rc = pm_consumer_list(t->io, t->branch_root, &ids, &n, e);
    if (rc) return rc;
    int64_t counted = 0;
    for (size_t i = 0; i < n; i++) {
        pm_consumer c;
        int expired = 0;
        rc = pm_consumer_read(t->io, t->branch_root, ids[i], &c, e);
        if (!rc) rc = consumer_is_expired(t, r, ids[i], &expired, e);
        if (rc) {
            pm_err_prefix(e, "refusing to expire: cannot read consumer '%s' (it may protect snapshots)", ids[i]);
            pm_strv_free(ids, n);
            return rc == PAIMON_NOTFOUND ? PAIMON_CONFLICT : rc;
        }
        if (expired) { r->consumers_expired++; continue; }
        /* the first consumer sets the minimum whatever its value (a
         * nextSnapshot of 0 must not be overwritten by the next consumer) */
        if (counted++ == 0 || c.next_snapshot < r->consumer_min) r->consumer_min = c.next_snapshot;
    }
    r->n_consumers = counted;
    pm_strv_free(ids, n);
    return PAIMON_OK;
}

/* The exclusive end nothing may pass (r->hard_end): retain-min, consumers,
 * the expire limit, never the latest. */
static int cap_hard_end(paimon_table *t, pm_expire_range *r, pm_err *e) {
    int64_t earliest = r->earliest, latest = r->latest;
    int64_t max_excl = latest - r->retain_min + 1;
    r->capped_by = "retain-min";
    /* Java's consumer.changelog-only holds only with a decoupled changelog
     * lifecycle (consumers then cap changelog expiration instead). */
    const char *co = pm_schema_option(t->schema, "consumer.changelog-only");
    if (r->n_consumers > 0 && co && !strcasecmp(co, "true")) {
        char why[256];
        int d = changelog_decoupled(t, why, sizeof why, e);
        if (d < 0) return -d;
        r->consumers_changelog_only = d;
    }
    if (r->n_consumers > 0 && !r->consumers_changelog_only && r->consumer_min < max_excl) {
        max_excl = r->consumer_min;
        r->capped_by = "consumer";
    }
    if (earliest + r->max_deletes < max_excl) { max_excl = earliest + r->max_deletes; r->capped_by = "expire-limit"; }
    if (max_excl > latest) max_excl = latest;            /* never the latest */
    if (max_excl < earliest) max_excl = earliest;
    r->hard_end = max_excl;
    return PAIMON_OK;
}

/* Snapshots read while computing the range, kept for the plan (snapshot
 * files never change): v[i] is id from + i, NULL where none exists. */
typedef struct snap_cache { int64_t from; size_t n; pm_snapshot **v; } snap_cache;

static void snap_cache_free(snap_cache *c) {
    for (size_t i = 0; i < c->n; i++) pm_snapshot_free(c->v[i]);
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* Snapshots [from, to] appended to c (contiguous with what it holds), read
 * on the thread pool. A read error other than "missing" re-reads them one
 * by one up to the first failure, so only the snapshot the time rule
 * really reaches can fail the run. */
static int snap_cache_read(paimon_table *t, snap_cache *c, int64_t from, int64_t to, int threads, pm_err *e) {
    size_t k = (size_t)(to - from + 1);
    pm_snapshot **nv = realloc(c->v, (c->n + k) * sizeof *nv);
    if (!nv) return pm_nomem(e);
    if (c->n == 0) c->from = from;
    c->v = nv;
    int rc = pm_refs_read_ids(t, from, to, threads, c->v + c->n, e);
    if (rc == PAIMON_NOMEM) return rc;
    if (rc) {
        pm_err_clear(e);
        rc = pm_refs_read_ids(t, from, from, 1, c->v + c->n, e);
        if (rc) return rc;
        k = 1;
    }
    c->n += k;
    return PAIMON_OK;
}

/* Java's time rule above retain-max: the end stops at the first snapshot
 * (from the retain-max bound on) whose successor is not older than the
 * cut-off. Each successor is read once, without an existence check first
 * (a HEAD and a GET per snapshot on an object store), several at a time;
 * a missing one (a gap) is skipped. */
static int time_end(paimon_table *t, pm_expire_range *r, int threads, snap_cache *c, int64_t *end, pm_err *e) {
    int64_t min = r->latest - r->retain_max + 1;
    if (min < r->earliest) min = r->earliest;
    int64_t window = threads > 1 ? 16 * (int64_t)threads : 1;
    for (int64_t id = min; id < r->hard_end; id++) {
        int64_t next = id + 1;
        if (c->n == 0 || next >= c->from + (int64_t)c->n) {
            int64_t to = next + window - 1 < r->hard_end ? next + window - 1 : r->hard_end;
            int rc = snap_cache_read(t, c, next, to, threads, e);
            if (rc) return rc;
        }
        const pm_snapshot *s = c->v[next - c->from];
        if (s && s->time_millis >= r->older_than_ms) { *end = id; r->capped_by = "time-retained"; break; }
    }
    return PAIMON_OK;
}

/* A gap at `end` (snapshots deleted by hand): the first existing snapshot
 * above it becomes the new earliest. The ids in between exist nowhere, so
 * the same snapshot files expire and none at or above the computed end;
 * Java throws here and every later run stalls on the gap
 * (apache/paimon#4743). The latest always exists. */
static int step_over_gap_at_end(paimon_table *t, pm_expire_range *r, pm_err *e) {
    if (r->end <= r->begin) return PAIMON_OK;
    for (;;) {
        int ex, rc;
        if ((rc = snap_exists(t, r->end, &ex, e))) return rc;
        if (ex || r->end >= r->latest) return PAIMON_OK;
        r->end++;
    }
}

static int compute_range(paimon_table *t, const pm_expire_opts *o, pm_expire_range *r, snap_cache *c, pm_err *e) {
    memset(r, 0, sizeof *r);
    r->capped_by = "none";
    r->now_ms = o->now_ms > 0 ? o->now_ms : pm_now_millis();
    int rc = resolve_limits(t, o, r, e);
    if (rc) return rc;
    int64_t exp_ms;
    int has_exp;
    if ((rc = pm_consumer_expiration(t, &exp_ms, &has_exp, e))) return rc;
    if (has_exp) r->consumer_cutoff_ms = r->now_ms - exp_ms;
    rc = pm_snapshot_latest_id(t->io, t->branch_root, &r->latest, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); r->latest = 0; return PAIMON_OK; }
    if (rc) return rc;
    if ((rc = pm_snapshot_earliest_id(t->io, t->branch_root, &r->earliest, e))) return rc;
    if ((rc = read_consumers(t, r, e)) || (rc = cap_hard_end(t, r, e))) return rc;
    /* begin stays at earliest even across a gap (a snapshot file lost in
     * the middle): every existing snapshot in [earliest, end) expires, as in
     * Java 2.0's ExpireSnapshotsImpl. Starting above the gap left the
     * snapshots below it stranded under EARLIEST, their data files deleted
     * by the later deltas while their files and manifest lists stayed. */
    r->begin = r->earliest;
    int64_t end = r->hard_end;
    if (o->until > 0) {
        if (o->until < end) { end = o->until; r->capped_by = "policy"; }
    } else if ((rc = time_end(t, r, o->threads, c, &end, e))) {
        return rc;
    }
    r->end = end < r->earliest ? r->earliest : end;
    return step_over_gap_at_end(t, r, e);
}

int pm_expire_compute_range(paimon_table *t, const pm_expire_opts *o, pm_expire_range *r, pm_err *e) {
    snap_cache c = {0};
    int rc = compute_range(t, o, r, &c, e);
    snap_cache_free(&c);
    return rc;
}

/* ---- protection sets (the walk is pm_refs's) ---------------------------------- */

typedef struct protect {
    paimon_table *t;      /* the branch being walked */
    pm_pathset *paths;    /* full paths of data / changelog / extra files still used (compact: pm_names.h) */
    pm_set *names;        /* keys (pm_name_key) of the names of manifest lists, manifests, index
                             manifests, index files, statistics: name_add / name_has */
    pm_set *lists_done;   /* manifest lists already read into names */
    pm_set *live_done;    /* "base\0delta" pairs whose live set is in paths */
    int threads;          /* manifest reads in parallel */
    pm_set *skip;         /* tag deletion: the `by` names ("tag t of branch b") of the tags going away */
    const char *own;      /* the branch being cleaned */
    int64_t drop_above;   /* its tags and changelogs above this id go too: they protect nothing */
} protect;

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

/* Empty sets; `skip` only for tag and changelog deletion. */
static int protect_init(protect *p, paimon_table *t, int threads, int with_skip, const char *own, int64_t drop_above,
                        pm_err *e) {
    *p = (protect){t, pm_pathset_new(), pm_set_new(), pm_set_new(), pm_set_new(), threads,
                   with_skip ? pm_set_new() : NULL, own, drop_above};
    if (!p->paths || !p->names || !p->lists_done || !p->live_done || (with_skip && !p->skip)) return pm_nomem(e);
    return PAIMON_OK;
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
 * protected, and protect_meta need not read it again. */
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

/* Live files of a snapshot into p->paths (pm_refs_live's rule), manifests
 * read in parallel; each base + delta pair once. */
static int protect_live(const pm_snapshot *s, protect *p, pm_err *e) {
    pm_buf key = {0};
    if (pm_buf_printf(&key, "%s", s->base_manifest_list ? s->base_manifest_list : "") || pm_buf_putc(&key, 0) ||
        pm_buf_printf(&key, "%s", s->delta_manifest_list ? s->delta_manifest_list : ""))
        return pm_nomem(e);
    if (pm_set_contains(p->live_done, key.data, key.len)) { pm_buf_free(&key); return PAIMON_OK; }
    pm_mfile *v = NULL;
    size_t n = 0;
    int rc = PAIMON_OK;
    if (s->base_manifest_list) rc = pm_read_manifest_list(p->t, s->base_manifest_list, &v, &n, e);
    size_t n_base = n;
    if (!rc && s->delta_manifest_list) rc = pm_read_manifest_list(p->t, s->delta_manifest_list, &v, &n, e);
    if (!rc) rc = note_list(p, s->base_manifest_list, v, n_base, e);
    if (!rc) rc = note_list(p, s->delta_manifest_list, v + n_base, n - n_base, e);
    const char **names = rc ? NULL : mfile_names(v, n);
    if (!rc && !names) rc = pm_nomem(e);
    pm_refs_entry_visitor ev = {protect_entry, protect_record, NULL, p};
    if (!rc) rc = pm_refs_live(p->t, names, n, p->threads, PM_REFS_REFUSE, &ev, e);
    if (!rc && pm_set_add(p->live_done, key.data, key.len) < 0) rc = pm_nomem(e);
    free(names);
    pm_buf_free(&key);
    pm_mfiles_free(v, n);
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
    const char **names = rc ? NULL : mfile_names(v, n);
    if (!rc && !names) rc = pm_nomem(e);
    pm_refs_entry_visitor ev = {protect_entry, NULL, NULL, p};
    if (!rc) rc = pm_refs_adds(p->t, names, n, PM_REFS_REFUSE, &ev, e);
    free(names);
    pm_mfiles_free(v, n);
    return rc;
}

/* One retained snapshot: its live set (base + delta lists, every
 * manifest), its changelog's additions and every metadata file it names. */
static int protect_snapshot(const pm_snapshot *s, protect *p, pm_err *e) {
    int rc = protect_live(s, p, e);
    if (!rc && s->changelog_manifest_list) rc = protect_list_adds(s->changelog_manifest_list, 0, p, e);
    if (!rc) rc = protect_meta(s, p, e);
    if (rc)
        pm_err_prefix(e, "refusing to expire: cannot read %s snapshot %lld (it protects files)", p->t->branch,
                      (long long)s->id);
    return rc;
}

/* What the latest snapshot adds to the first retained one's: the
 * manifests of its lists the first one does not name were written since
 * (deltas of later snapshots, merges of them); their ADDs, less the
 * DELETEs among those same manifests, are files a later commit added and
 * the latest still holds. A re-added name stays protected even while an
 * older manifest still carries its first DELETE (Java's reader merges in
 * order: it reads the file as live). Then the names it uses. */
static int protect_latest(const pm_snapshot *s, protect *p, pm_err *e) {
    pm_mfile *v = NULL;
    size_t n = 0;
    int rc = PAIMON_OK;
    if (s->base_manifest_list) rc = pm_read_manifest_list(p->t, s->base_manifest_list, &v, &n, e);
    size_t n_base = n;
    if (!rc && s->delta_manifest_list) rc = pm_read_manifest_list(p->t, s->delta_manifest_list, &v, &n, e);
    const char **fresh = rc ? NULL : malloc((n ? n : 1) * sizeof *fresh);
    if (!rc && !fresh) rc = pm_nomem(e);
    size_t n_fresh = 0;
    for (size_t i = 0; !rc && i < n; i++)
        if (!name_has(p->names, v[i].name)) fresh[n_fresh++] = v[i].name;
    if (!rc) rc = note_list(p, s->base_manifest_list, v, n_base, e);
    if (!rc) rc = note_list(p, s->delta_manifest_list, v + n_base, n - n_base, e);
    pm_refs_entry_visitor ev = {protect_entry, protect_record, NULL, p};
    if (!rc) rc = pm_refs_live(p->t, fresh, n_fresh, p->threads, PM_REFS_REFUSE, &ev, e);
    if (!rc && s->changelog_manifest_list) rc = protect_list_adds(s->changelog_manifest_list, 0, p, e);
    if (!rc) rc = protect_meta(s, p, e);
    if (rc)
        pm_err_prefix(e, "refusing to expire: cannot read %s snapshot %lld (it protects files)", p->t->branch,
                      (long long)s->id);
    free(fresh);
    pm_mfiles_free(v, n);
    return rc;
}

/* The retained history of a branch, read at its two ends only: the first
 * retained snapshot and the latest (THE RETAINED-HISTORY RULE, written down
 * in docs/maintenance.md "What expiration reads"). A file or metadata file
 * a snapshot between them needs is in the first one's live set, or was
 * added by a later delta: a fresh name no candidate can carry (Paimon
 * writes every file under a new UUID name; a level upgrade re-adds a name
 * in the same delta that deletes it, which plan_data keeps), or a
 * re-added one, which protect_latest finds while the latest holds it. */
static int protect_ends(const pm_snapshot *first, const pm_snapshot *last, protect *p, pm_err *e) {
    int rc = protect_snapshot(first, p, e);
    if (!rc && last && last->id != first->id) rc = protect_latest(last, p, e);
    return rc;
}

/* Every snapshot of a chain, one by one (tag deletion: a rare operation,
 * so it keeps the full walk rather than expiration's two ends). */
static int protect_chain(pm_snapshot **s, size_t n, protect *p, pm_err *e) {
    int rc;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || s[i]->id != s[i - 1]->id + 1) rc = protect_live(s[i], p, e);
        else rc = s[i]->delta_manifest_list ? protect_list_adds(s[i]->delta_manifest_list, 0, p, e) : 0;
        if (!rc && s[i]->changelog_manifest_list) rc = protect_list_adds(s[i]->changelog_manifest_list, 0, p, e);
        if (!rc) rc = protect_meta(s[i], p, e);
        if (rc) {
            pm_err_prefix(e, "cannot read %s snapshot %lld (it protects files)", p->t->branch, (long long)s[i]->id);
            return rc;
        }
    }
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
 * deleted them). */
static int protect_source(void *ud, paimon_table *bt, pm_refs_source src, const char *by, const pm_snapshot *s,
                          pm_err *e) {
    protect *p = ud;
    int rc;
    if (p->skip && by && pm_set_contains(p->skip, by, strlen(by))) return PAIMON_OK;
    if (p->own && s->id > p->drop_above && !strcmp(bt->branch, p->own)) return PAIMON_OK;
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
    pm_refs_visitor v = {PM_REFS_REFUSE, "refusing to expire", {0, PAIMON_CORRUPT, PAIMON_CONFLICT},
                         protect_source, NULL, p};
    int rc = pm_refs_tags(p->t, &v, e);
    return rc ? rc : pm_refs_changelogs(p->t, &v, e);
}

/* The first and the latest snapshot of branch bt (NULL, NULL: none). */
static int read_branch_ends(paimon_table *bt, pm_snapshot **first, pm_snapshot **last, pm_err *e) {
    int64_t lo, hi;
    *first = *last = NULL;
    int rc = pm_snapshot_latest_id(bt->io, bt->branch_root, &hi, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (!rc) rc = pm_snapshot_earliest_id(bt->io, bt->branch_root, &lo, e);
    if (!rc) rc = pm_snapshot_read_known(bt->io, bt->branch_root, bt->schemas_known, lo, first, e);
    if (!rc && hi != lo) rc = pm_snapshot_read_known(bt->io, bt->branch_root, bt->schemas_known, hi, last, e);
    if (rc) {
        pm_err_prefix(e, "cannot read the snapshots of branch %s", bt->branch);
        pm_snapshot_free(*first);
        *first = NULL;
    }
    return rc;
}

/* Everything used by other branches (their retained history by the rule
 * of protect_ends, their tags and changelogs). */
static int protect_other_branches(paimon_table *t, protect *p, pm_err *e) {
    paimon_table **bts = NULL;
    size_t nb = 0;
    int rc = pm_refs_open_branches(t, &bts, &nb, e);
    if (rc) pm_err_prefix(e, "refusing to expire (a branch may use files)");
    for (size_t i = 0; !rc && i < nb; i++) {
        if (!strcmp(bts[i]->branch, t->branch)) continue;
        pm_snapshot *first = NULL, *last = NULL;
        p->t = bts[i];
        rc = read_branch_ends(bts[i], &first, &last, e);
        if (rc) pm_err_prefix(e, "refusing to expire");
        if (!rc && first) rc = protect_ends(first, last, p, e);
        if (!rc) rc = protect_tags_changelogs(p, e);
        pm_snapshot_free(first);
        pm_snapshot_free(last);
    }
    p->t = t;
    pm_refs_close_branches(bts, nb);
    return rc;
}

/* Expiring snapshots that become changelog/changelog-<id> (decoupled
 * lifecycle) keep what Java's SnapshotDeletion keeps for them: the files
 * and manifests of their changelog lists (deleteChangelog false); without
 * a changelog producer also their base and delta lists with every
 * manifest (deleteDataManifestLists false) and the files their deltas
 * add (Java skips APPEND files deleted in deltas; ours are exactly the
 * additions a changelog reads). Index manifests and statistics go as
 * Java's planManifestsCleaner deletes them. */
static int protect_moved_changelogs(pm_snapshot **exp, size_t n_exp, protect *p, pm_err *e) {
    const char *producer = pm_schema_option_or_default(p->t->schema, "changelog-producer");
    int produce = producer && strcasecmp(producer, "none") != 0;
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < n_exp; i++) {
        const pm_snapshot *s = exp[i];
        if (s->changelog_manifest_list) rc = protect_list_adds(s->changelog_manifest_list, 0, p, e);
        if (!rc && !produce && s->base_manifest_list) rc = protect_name(p, PM_REFS_BASE_LIST, s->base_manifest_list, -1, e);
        if (!rc && !produce && s->delta_manifest_list) rc = protect_list_adds(s->delta_manifest_list, 0, p, e);
        if (rc) pm_err_prefix(e, "refusing to expire: cannot read snapshot %lld (its changelog keeps files)", (long long)s->id);
    }
    return rc;
}

/* changelog-<id> of a snapshot still expiring was written by an
 * interrupted run: the snapshot itself protects (protect_moved_changelogs)
 * what Java keeps for it, and the file is checked to be identical before
 * anything is deleted. */
static int skip_own_changelogs(paimon_table *t, pm_snapshot **exp, size_t n_exp, protect *p, pm_err *e) {
    pm_buf by = {0};
    int rc = (p->skip = pm_set_new()) ? PAIMON_OK : pm_nomem(e);
    for (size_t i = 0; !rc && i < n_exp; i++) {
        by.len = 0;
        if (pm_buf_printf(&by, "changelog %lld of branch %s", (long long)exp[i]->id, t->branch) ||
            pm_set_add(p->skip, by.data, by.len) < 0)
            rc = pm_nomem(e);
    }
    pm_buf_free(&by);
    return rc;
}

/* ---- candidates ------------------------------------------------------------- */

typedef struct plan {
    pm_deleter *data, *meta_a, *meta_b;
    int64_t protected_files;
} plan;

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
typedef struct snap_read {
    pm_mfile *lists[2];
    size_t nlist[2];
    int list_rc[2];
    pm_err list_err[2];
    op_rec *ops;
    size_t nops;
    int delta_gone;      /* the delta list or one of its manifests is gone (an earlier run deleted it) */
    int rc;              /* reading the delta's manifests failed */
    pm_err err;
} snap_read;

static void snap_read_clear(snap_read *d) {
    for (int i = 0; i < 2; i++) pm_mfiles_free(d->lists[i], d->nlist[i]);
    ops_free(d->ops, d->nops);
    memset(d, 0, sizeof *d);
    d->list_rc[0] = d->list_rc[1] = -1;
}

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
static void read_for_plan(const paimon_table *t, const pm_snapshot *s, const protect *p, int data, int meta,
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
static int plan_data_read(const pm_snapshot *s, const snap_read *d, const protect *p, plan *pl, pm_err *e) {
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
static int plan_data(paimon_table *t, const pm_snapshot *s, const protect *p, plan *pl, pm_err *e) {
    snap_read d;
    memset(&d, 0, sizeof d);
    d.list_rc[0] = d.list_rc[1] = -1;
    read_for_plan(t, s, p, 1, 0, &d);
    int rc = plan_data_read(s, &d, p, pl, e);
    snap_read_clear(&d);
    return rc;
}

/* Changelog files added by an expiring snapshot. */
static int plan_changelog(paimon_table *t, const pm_snapshot *s, const protect *p, plan *pl, pm_err *e) {
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
static int plan_meta_read(paimon_table *t, const pm_snapshot *s, const snap_read *d, const protect *p, plan *pl,
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

static int plan_meta(paimon_table *t, const pm_snapshot *s, const protect *p, plan *pl, pm_err *e) {
    return plan_meta_read(t, s, NULL, p, pl, e);
}

/* Names of the tags, branches and consumers that exist now: compared right
 * before deleting, so one created while we planned aborts the run. */
int pm_expire_refs_fingerprint(paimon_table *t, pm_buf *out, pm_err *e) {
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

/* ---- expire ------------------------------------------------------------------- */

/* Nothing to expire: Java writes a missing EARLIEST hint; we also repair
 * one that points below the real earliest (a crash right before the
 * write). Best effort. */
static void repair_earliest_hint(paimon_table *t, const pm_expire_range *r) {
    int64_t h;
    pm_err e2;
    int hr = pm_hint_read(t->io, t->branch_root, "EARLIEST", &h, &e2);
    if (hr == PAIMON_NOTFOUND || hr == PAIMON_CORRUPT || (hr == PAIMON_OK && h != r->earliest))
        pm_hint_write(t->io, t->branch_root, "EARLIEST", r->earliest, &e2);
}

/* The expired snapshots' own files, ascending. They must be deletable, or
 * their manifests would go and leave snapshots behind that point at
 * nothing. */
static int plan_snapshot_files(paimon_table *t, pm_snapshot **exp, size_t n_exp, pm_deleter *d, pm_err *e) {
    for (size_t i = 0; i < n_exp; i++) {
        pm_buf b = {0};
        if (snapshot_path(t->branch_root, exp[i]->id, &b)) return pm_nomem(e);
        char out_why[700];
        int rc = PAIMON_OK;
        if (i == 0 && pm_path_inside(t->io, t->root, (char *)b.data, out_why, sizeof out_why) == 0)
            rc = pm_fail(e, PAIMON_UNSUPPORTED, "%s: refusing to expire: snapshot file %s %s; nothing deleted", t->root,
                         (char *)b.data, out_why);
        if (!rc) rc = pm_deleter_add(d, (char *)b.data, PM_K_SNAPSHOT, e);
        pm_buf_free(&b);
        if (rc) return rc;
    }
    return PAIMON_OK;
}

/* Right before deleting: a tag, branch or consumer created while we
 * planned (fingerprint fp0 no longer matches), or a consumer moved back
 * (reset_consumer) to a snapshot we are about to delete, is a conflict. */
static int check_refs_unchanged(paimon_table *t, const pm_buf *fp0, const pm_expire_range *r, int64_t last_expired,
                                pm_err *e) {
    pm_buf fp1 = {0};
    int rc = pm_expire_refs_fingerprint(t, &fp1, e);
    if (!rc && !pm_buf_eq(fp0, &fp1))
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: tags, branches or consumers changed while planning the expiration; nothing deleted, run again",
                     t->root);
    pm_buf_free(&fp1);
    if (rc) return rc;
    char **ids = NULL;
    size_t nc = 0;
    if ((rc = pm_consumer_list(t->io, t->branch_root, &ids, &nc, e))) return rc;
    for (size_t i = 0; !rc && i < nc; i++) {
        pm_consumer c;
        int expired = 0;
        if ((rc = pm_consumer_read(t->io, t->branch_root, ids[i], &c, e)) ||
            (rc = consumer_is_expired(t, r, ids[i], &expired, e))) {
            pm_err_prefix(e, "refusing to expire: cannot read consumer '%s'", ids[i]);
            if (rc == PAIMON_NOTFOUND) rc = PAIMON_CONFLICT;
        } else if (!expired && last_expired > 0 && !r->consumers_changelog_only &&
                   c.next_snapshot <= last_expired) {   /* it would read one we delete */
            rc = pm_fail(e, PAIMON_CONFLICT,
                         "%s: consumer '%s' moved to snapshot %lld while planning the expiration of [%lld, %lld); nothing deleted, run again",
                         t->branch_root, ids[i], (long long)c.next_snapshot, (long long)r->begin, (long long)r->end);
        }
    }
    pm_strv_free(ids, nc);
    return rc;
}

/* The deletions, in Java's order: data files, manifests, manifest lists,
 * then the snapshot files one by one, ascending, so a crash leaves no gap.
 * A failure stops before the next phase (which would forget the file). */
static int delete_in_order(paimon_table *t, const pm_expire_opts *o, plan *pl, pm_deleter *snaps_del,
                           pm_clean_result *clean, pm_err *e) {
    pm_clean_opts co = {o->threads, o->dry_run, 0, o->progress, o->progress_ud};
    pm_clean_opts seq = co;
    seq.threads = 1;
    seq.stop_on_failure = 1;
    pm_deleter *phases[4] = {pl->data, pl->meta_a, pl->meta_b, snaps_del};
    static const char *const names[4] = {"data files", "manifests", "manifest lists", "snapshots"};
    for (int ph = 0; ph < 4; ph++) {
        size_t skipped_before = clean->n_skipped;
        int rc = pm_deleter_run(phases[ph], t->io, t->root, ph == 3 ? &seq : &co, names[ph], clean, e);
        if (rc) return rc;
        /* a snapshot file that cannot be deleted must not move EARLIEST */
        if (!o->dry_run && ph == 3 && clean->n_skipped > skipped_before)
            return pm_fail(e, PAIMON_IO, "%s: snapshot file %s was not deleted: %s; EARLIEST not moved", t->root,
                           clean->skipped[skipped_before].path, clean->skipped[skipped_before].msg);
        if (!o->dry_run && clean->n_failures)
            return pm_fail(e, PAIMON_IO, "%s: %zu file(s) could not be deleted (first: %s: %s); stopped after the %s, re-run to finish",
                           t->root, clean->n_failures, clean->failures[0].path, clean->failures[0].msg, names[ph]);
    }
    return PAIMON_OK;
}

/* Snapshots are read for the plan PLAN_WINDOW at a time on the thread
 * pool, then planned in snapshot order: the plan is the sequential one,
 * and memory holds one window's entries. */
#define PLAN_WINDOW 64

typedef struct plan_batch {
    const paimon_table *t;
    pm_snapshot **s;
    size_t first_exp_end;      /* s[i] with i < this expires (plan_meta) */
    int64_t begin;             /* deltas of ids above it are planned (plan_data) */
    const protect *p;
    snap_read *d;
    pm_avro_schema_cache *sc;  /* the caller's, bound on the workers too */
} plan_batch;

static void read_for_plan_task(void *ctx, size_t i) {
    plan_batch *b = ctx;
    pm_avro_schema_cache *prev = pm_avro_schema_cache_bound();
    if (b->sc) pm_avro_schema_cache_bind(b->sc);
    read_for_plan(b->t, b->s[i], b->p, b->s[i]->id > b->begin, i < b->first_exp_end, &b->d[i]);
    if (b->sc) pm_avro_schema_cache_bind(prev);
}

/* The data files deleted in (begin, end] (plan_data) and the metadata
 * files of the n_exp expiring snapshots (plan_meta; other deleters, so
 * interleaving the two keeps each deleter's order). */
static int plan_range(paimon_table *t, pm_snapshot **all, size_t n_all, size_t n_exp, int64_t begin,
                      const protect *p, plan *pl, pm_err *e) {
    snap_read *d = calloc(PLAN_WINDOW, sizeof *d);
    if (!d) return pm_nomem(e);
    int rc = PAIMON_OK;
    for (size_t at = 0; !rc && at < n_all; at += PLAN_WINDOW) {
        size_t k = n_all - at < PLAN_WINDOW ? n_all - at : PLAN_WINDOW;
        for (size_t i = 0; i < k; i++) snap_read_clear(&d[i]);
        plan_batch b = {t, all + at, n_exp > at ? n_exp - at : 0, begin, p, d, pm_avro_schema_cache_bound()};
        rc = pm_exec_run(p->threads, k, read_for_plan_task, &b, "read snapshots' manifests", NULL, NULL, e);
        for (size_t i = 0; !rc && i < k; i++) {
            const pm_snapshot *s = all[at + i];
            if (s->id > begin) rc = plan_data_read(s, &d[i], p, pl, e);
            if (!rc && at + i < n_exp) rc = plan_meta_read(t, s, &d[i], p, pl, e);
        }
        for (size_t i = 0; i < k; i++) snap_read_clear(&d[i]);
    }
    free(d);
    return rc;
}

/* What retained snapshots, tags, changelogs and other branches need, then
 * what the expired range frees: data files deleted in (begin, end], the
 * expired changelogs, metadata and snapshot files. all: the existing
 * snapshots of [begin, end], the expired ones first; last: the latest. */
static int protect_and_plan(paimon_table *t, pm_snapshot **all, size_t n_all, size_t n_exp, const pm_snapshot *last,
                            int64_t begin, int64_t end, int decoupled, protect *p, plan *pl, pm_deleter *snaps_del,
                            pm_err *e) {
    pm_snapshot **exp = all;
    int rc;
    if (n_all == n_exp || all[n_exp]->id != end)
        return pm_fail(e, PAIMON_CORRUPT, "%s: snapshot %lld (the new earliest) is missing; refusing to expire",
                       t->branch_root, (long long)end);
    if ((rc = protect_ends(all[n_exp], last, p, e)) || (rc = protect_tags_changelogs(p, e)) ||
        (rc = protect_other_branches(t, p, e)) || (decoupled && (rc = protect_moved_changelogs(exp, n_exp, p, e))))
        return rc;
    if ((rc = plan_range(t, all, n_all, n_exp, begin, p, pl, e))) return rc;
    for (size_t i = 0; !decoupled && i < n_exp; i++)   /* decoupled: they stay with changelog-<id> */
        if (exp[i]->changelog_manifest_list && (rc = plan_changelog(t, exp[i], p, pl, e))) return rc;
    return plan_snapshot_files(t, exp, n_exp, snaps_del, e);
}

/* The existing snapshots of [begin, end], ascending: those the time rule
 * read come from its cache (moved out of it), the rest are read on the
 * thread pool. */
static int read_range(paimon_table *t, int64_t begin, int64_t end, int threads, snap_cache *c, pm_snapshot ***out,
                      size_t *nout, pm_err *e) {
    size_t n = (size_t)(end - begin + 1), k = 0;
    pm_snapshot **v = calloc(n, sizeof *v);
    if (!v) return pm_nomem(e);
    int64_t lo = c->n ? c->from : end + 1, hi = c->n ? c->from + (int64_t)c->n - 1 : end;   /* cached ids */
    if (lo < begin) lo = begin;
    if (hi > end) hi = end;
    int rc = PAIMON_OK;
    if (lo > hi) {
        rc = pm_refs_read_ids(t, begin, end, threads, v, e);
    } else {
        for (int64_t id = lo; id <= hi; id++) { v[id - begin] = c->v[id - c->from]; c->v[id - c->from] = NULL; }
        if (begin < lo) rc = pm_refs_read_ids(t, begin, lo - 1, threads, v, e);
        if (!rc && hi < end) rc = pm_refs_read_ids(t, hi + 1, end, threads, v + (hi + 1 - begin), e);
    }
    if (rc) {
        pm_refs_snapshots_free(v, n);
        return rc;
    }
    for (size_t i = 0; i < n; i++)   /* a gap (or expired meanwhile) is left out */
        if (v[i]) v[k++] = v[i];
    *out = v;
    *nout = k;
    return PAIMON_OK;
}

static int expire_consumers_first(paimon_table *t, const pm_expire_opts *o, pm_expire_result *res, pm_err *e) {
    int64_t exp_ms;
    int has;
    int rc = pm_consumer_expiration(t, &exp_ms, &has, e);
    if (rc || !has) return rc;
    pm_consumer_expire_result cr;
    rc = pm_consumers_expire(t, exp_ms, o->now_ms, 0, &cr, e);
    if (rc) {
        pm_err_prefix(e, "refusing to expire: consumer expiration failed");
        return rc;
    }
    res->consumers_expired = (int64_t)cr.n_expired;
    pm_consumer_expire_result_free(&cr);
    return PAIMON_OK;
}

int pm_expire_snapshots(paimon_table *t, const pm_expire_opts *o, pm_expire_result *res, pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(res, 0, sizeof *res);
    res->clean.dry_run = o->dry_run;
    int rc = pm_table_check_manifest_format(t, e);
    if (rc) return rc;
    char why[400];
    /* decoupled (Java ExpireConfig.isChangelogDecoupled): each expired
     * snapshot moves to changelog/changelog-<id> with what it reads */
    int dec = changelog_decoupled(t, why, sizeof why, e);
    if (dec < 0) return -dec;
    pm_expire_range *r = &res->range;
    /* consumers first, as Java's TableCommitImpl: a dead job stops blocking
     * retention (a dry run only leaves them out of the range) */
    if (!o->dry_run && (rc = expire_consumers_first(t, o, res, e))) return rc;
    snap_cache cache = {0};
    if ((rc = compute_range(t, o, r, &cache, e))) { snap_cache_free(&cache); return rc; }
    int64_t begin = r->begin, end = r->end;
    if (r->latest == 0 || end <= begin) {
        snap_cache_free(&cache);
        if (r->latest && !o->dry_run) repair_earliest_hint(t, r);
        res->clean.duration_ms = pm_now_millis() - t0;
        return PAIMON_OK;
    }

    /* every manifest and list of a table shares a handful of writer
     * schemas: parse each once (it was half the instructions of a run) */
    pm_avro_schema_cache *sc = pm_avro_schema_cache_new(), *prev_sc = pm_avro_schema_cache_bound();
    if (sc) pm_avro_schema_cache_bind(sc);
    pm_buf fp0 = {0};
    protect p;
    plan pl = {pm_deleter_new(), pm_deleter_new(), pm_deleter_new(), 0};
    pm_deleter *snaps_del = pm_deleter_new();
    pm_snapshot **all = NULL;               /* [begin, end]: expired ones first */
    pm_snapshot *last = NULL;               /* the latest */
    size_t n_all = 0, n_exp = 0;
    rc = protect_init(&p, t, o->threads, 0, NULL, INT64_MAX, e);
    if (!rc && (!pl.data || !pl.meta_a || !pl.meta_b || !snaps_del)) rc = pm_nomem(e);
    if (!rc) rc = pm_expire_refs_fingerprint(t, &fp0, e);
    if (!rc && (rc = read_range(t, begin, end, o->threads, &cache, &all, &n_all, e)))
        pm_err_prefix(e, "refusing to expire");
    snap_cache_free(&cache);
    if (!rc && r->latest != end &&
        (rc = pm_snapshot_read_known(t->io, t->branch_root, t->schemas_known, r->latest, &last, e)))
        pm_err_prefix(e, "refusing to expire: cannot read the latest snapshot");
    while (!rc && n_exp < n_all && all[n_exp]->id < end) n_exp++;
    if (!rc && dec) rc = skip_own_changelogs(t, all, n_exp, &p, e);
    if (!rc) rc = protect_and_plan(t, all, n_all, n_exp, last, begin, end, dec, &p, &pl, snaps_del, e);
    if (!rc) {
        res->clean.protected_files = pl.protected_files;
        res->expired = end - begin;
        rc = check_refs_unchanged(t, &fp0, r, n_exp > 0 ? all[n_exp - 1]->id : 0, e);
    }
    /* the changelog files before anything is deleted (Java writes each right
     * before deleting its snapshot): a crash anywhere later leaves them
     * protecting what they read, and a re-run finds them identical */
    if (!rc && dec) {
        res->changelogs = (int64_t)n_exp;
        if (!o->dry_run) rc = pm_changelog_write_moved(t, all, n_exp, e);
    }
    if (!rc) rc = delete_in_order(t, o, &pl, snaps_del, &res->clean, e);
    if (!rc && !o->dry_run) rc = pm_hint_write(t->io, t->branch_root, "EARLIEST", end, e);
    /* last, after EARLIEST: the bucket and partition directories emptied,
     * if asked for (Java: snapshot.clean-empty-directories, default false) */
    if (!rc && clean_dirs_wanted(t, o))
        pm_deleter_clean_dirs(pl.data, t->io, t->root, t->schema->n_partition_keys, &res->clean);
    pm_refs_snapshots_free(all, n_all);
    pm_snapshot_free(last);
    pm_buf_free(&fp0);
    protect_clear(&p);
    pm_deleter_free(pl.data);
    pm_deleter_free(pl.meta_a);
    pm_deleter_free(pl.meta_b);
    pm_deleter_free(snaps_del);
    if (sc) pm_avro_schema_cache_bind(prev_sc);
    pm_avro_schema_cache_free(sc);
    res->clean.duration_ms = pm_now_millis() - t0;
    if (rc) pm_clean_result_free(&res->clean);
    return rc;
}

/* ---- tag deletion (pm_tags.c) ---------------------------------------------- */

typedef struct tag_cand { protect *p; plan *pl; } tag_cand;

/* A live file of a tag going away: a candidate unless something kept uses it. */
static int tag_data_entry(void *ud, const pm_manifest_entry *m, const char *manifest, pm_buf *out, pm_buf *scratch,
                          pm_err *e) {
    tag_cand *c = ud;
    pm_buf *b = &scratch[0], *x = &scratch[1];
    (void)manifest;
    (void)out;
    int rc = pm_data_file_full_path(c->p->t, m, b, e);
    if (rc) return rc;
    if (pm_pathset_contains(c->p->paths, b->data, b->len)) { c->pl->protected_files++; return PAIMON_OK; }
    if ((rc = pm_deleter_add_sized(c->pl->data, (char *)b->data, PM_K_DATA, m->file.file_size, e))) return rc;
    for (size_t i = 0; i < m->file.extra_files.n; i++) {
        if ((rc = pm_extra_file_path((char *)b->data, m->file.extra_files.v[i], c->p->t->root, x, e))) return rc;
        if (!pm_pathset_contains(c->p->paths, x->data, x->len) && (rc = pm_deleter_add(c->pl->data, (char *)x->data, PM_K_DATA, e)))
            return rc;
    }
    return PAIMON_OK;
}

/* The live set of tag s (read on the calling thread): an unreadable list or
 * manifest refuses, since we could not know what the tag held. */
static int plan_tag_data(paimon_table *t, const pm_snapshot *s, protect *p, plan *pl, pm_err *e) {
    pm_mfile *v = NULL;
    size_t n = 0;
    int rc = PAIMON_OK;
    if (s->base_manifest_list) rc = pm_read_manifest_list(t, s->base_manifest_list, &v, &n, e);
    if (!rc && s->delta_manifest_list) rc = pm_read_manifest_list(t, s->delta_manifest_list, &v, &n, e);
    const char **names = rc ? NULL : mfile_names(v, n);
    if (!rc && !names) rc = pm_nomem(e);
    tag_cand c = {p, pl};
    pm_refs_entry_visitor ev = {tag_data_entry, NULL, NULL, &c};
    if (!rc) rc = pm_refs_live(t, names, n, 1, PM_REFS_REFUSE, &ev, e);
    free(names);
    pm_mfiles_free(v, n);
    return rc;
}

/* ---- shared with rollback ------------------------------------------------------ */

struct pm_protect {
    protect p;
};

void pm_protect_free(pm_protect *x) {
    if (!x) return;
    protect_clear(&x->p);
    free(x);
}

int pm_protect_build(paimon_table *t, pm_snapshot **kept, size_t n_kept, int64_t drop_above, int threads,
                     pm_protect **out, pm_err *e) {
    *out = NULL;
    pm_protect *x = calloc(1, sizeof *x);
    if (!x) return pm_nomem(e);
    int rc = protect_init(&x->p, t, threads, 0, t->branch, drop_above, e);
    if (!rc) rc = protect_chain(kept, n_kept, &x->p, e);
    if (!rc) rc = protect_tags_changelogs(&x->p, e);
    if (!rc) rc = protect_other_branches(t, &x->p, e);
    if (rc) { pm_protect_free(x); return rc; }
    *out = x;
    return PAIMON_OK;
}

int pm_protect_has_path(const pm_protect *x, const char *path) {
    return pm_pathset_contains(x->p.paths, path, strlen(path));
}

/* A dropped source's data file: into the deleter unless protected. */
typedef struct drop_ctx {
    const pm_protect *x;
    pm_deleter *d;
    int kind;
    int64_t *protected_files;
    int64_t *unreadable;
} drop_ctx;

static int drop_entry(void *ud, const pm_manifest_entry *m, const char *manifest, pm_buf *out, pm_buf *scratch,
                      pm_err *e) {
    drop_ctx *c = ud;
    (void)manifest;
    (void)out;
    pm_buf *b = &scratch[0], *x = &scratch[1];
    paimon_table *t = c->x->p.t;
    int rc = pm_data_file_full_path(t, m, b, e);
    if (rc) return rc;
    if (pm_pathset_contains(c->x->p.paths, b->data, b->len)) { (*c->protected_files)++; return PAIMON_OK; }
    if ((rc = pm_deleter_add_sized(c->d, (char *)b->data, c->kind, m->file.file_size, e))) return rc;
    for (size_t k = 0; !rc && k < m->file.extra_files.n; k++) {
        if ((rc = pm_extra_file_path((char *)b->data, m->file.extra_files.v[k], t->root, x, e))) break;
        if (!pm_pathset_contains(c->x->p.paths, x->data, x->len)) rc = pm_deleter_add(c->d, (char *)x->data, c->kind, e);
    }
    return rc;
}

/* A manifest of a dropped source that cannot be read: its files are left
 * (orphans for orphan cleaning), never guessed at. */
static int drop_unreadable(void *ud, const char *manifest, int code, const pm_err *why, pm_err *e) {
    (void)manifest;
    (void)code;
    (void)why;
    (void)e;
    (*((drop_ctx *)ud)->unreadable)++;
    return PAIMON_OK;
}

/* The files of lists[0..n) (ADDs, or the live set of base + delta). */
static int drop_files_of(pm_protect *x, const char *const *lists, size_t n_lists, int live, drop_ctx *c,
                         pm_err *e) {
    paimon_table *t = x->p.t;
    pm_mfile *v = NULL;
    size_t n = 0;
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < n_lists; i++) {
        if (!lists[i]) continue;
        rc = pm_read_manifest_list(t, lists[i], &v, &n, e);
        if (rc) { pm_err_clear(e); rc = PAIMON_OK; (*c->unreadable)++; pm_mfiles_free(v, n); return PAIMON_OK; }
    }
    const char **names = mfile_names(v, n);
    if (!names) rc = pm_nomem(e);
    pm_refs_entry_visitor ev = {drop_entry, NULL, drop_unreadable, c};
    if (!rc) rc = live ? pm_refs_live(t, names, n, 1, PM_REFS_REPORT, &ev, e)
                       : pm_refs_adds(t, names, n, PM_REFS_REPORT, &ev, e);
    free(names);
    pm_mfiles_free(v, n);
    return rc;
}

/* Tag and changelog deletion: everything t's branch keeps but the sources
 * in p->skip (every snapshot, the other tags and long-lived changelogs) and
 * every other branch; an unreadable one refuses. */
static int protect_all_kept(paimon_table *t, protect *p, const char *what, pm_err *e) {
    pm_snapshot **all = NULL;
    size_t n_all = 0;
    int rc = pm_refs_snapshots(t, INT64_MIN, &all, &n_all, e);
    if (rc) pm_err_prefix(e, "%s", what);
    if (!rc) rc = protect_chain(all, n_all, p, e);
    if (!rc) rc = protect_tags_changelogs(p, e);
    if (!rc) rc = protect_other_branches(t, p, e);
    pm_refs_snapshots_free(all, n_all);
    return rc;
}

int pm_expire_plan_tag_deletion(paimon_table *t, pm_snapshot *const *tags, const char *const *names, size_t n,
                                int threads, pm_deleter *data, pm_deleter *manifests, pm_deleter *lists,
                                int64_t *protected_files, pm_err *e) {
    protect p;
    plan pl = {data, manifests, lists, 0};
    pm_buf by = {0};
    int rc = protect_init(&p, t, threads, 1, NULL, INT64_MAX, e);
    for (size_t i = 0; !rc && i < n; i++) {
        by.len = 0;
        if (pm_buf_printf(&by, "tag %s of branch %s", names[i], t->branch) || pm_set_add(p.skip, by.data, by.len) < 0)
            rc = pm_nomem(e);
    }
    if (!rc) rc = protect_all_kept(t, &p, "refusing to delete tags", e);
    for (size_t i = 0; !rc && i < n; i++) {
        rc = plan_tag_data(t, tags[i], &p, &pl, e);
        if (!rc && tags[i]->changelog_manifest_list) rc = plan_changelog(t, tags[i], &p, &pl, e);
        if (!rc) rc = plan_meta(t, tags[i], &p, &pl, e);
        if (rc) pm_err_prefix(e, "refusing to delete tag '%s': cannot read what it holds", names[i]);
    }
    *protected_files = pl.protected_files;
    pm_buf_free(&by);
    protect_clear(&p);
    return rc;
}

int pm_protect_plan_dropped(pm_protect *x, const pm_snapshot *s, int by_live, pm_deleter *data, pm_deleter *meta_a,
                            pm_deleter *meta_b, int64_t *protected_files, int64_t *unreadable, pm_err *e) {
    drop_ctx c = {x, data, PM_K_DATA, protected_files, unreadable};
    int rc;
    if (by_live) {
        const char *lists[2] = {s->base_manifest_list, s->delta_manifest_list};
        rc = drop_files_of(x, lists, 2, 1, &c, e);
    } else {
        const char *lists[1] = {s->delta_manifest_list};
        rc = drop_files_of(x, lists, 1, 0, &c, e);
    }
    if (!rc && s->changelog_manifest_list) {
        const char *lists[1] = {s->changelog_manifest_list};
        c.kind = PM_K_CHANGELOG;
        rc = drop_files_of(x, lists, 1, 0, &c, e);
    }
    plan pl = {data, meta_a, meta_b, 0};
    if (!rc) rc = plan_meta(x->p.t, s, &x->p, &pl, e);
    return rc;
}

/* ---- changelog expiration (pm_changelog.c) ---------------------------------- */

int pm_expire_plan_changelog_deletion(paimon_table *t, pm_snapshot *const *cls, size_t n, int threads,
                                      pm_deleter *data, pm_deleter *manifests, pm_deleter *lists,
                                      int64_t *protected_files, pm_err *e) {
    protect p;
    plan pl = {data, manifests, lists, 0};
    pm_buf by = {0};
    int rc = protect_init(&p, t, threads, 1, NULL, INT64_MAX, e);
    for (size_t i = 0; !rc && i < n; i++) {
        by.len = 0;
        if (pm_buf_printf(&by, "changelog %lld of branch %s", (long long)cls[i]->id, t->branch) ||
            pm_set_add(p.skip, by.data, by.len) < 0)
            rc = pm_nomem(e);
    }
    if (!rc) rc = protect_all_kept(t, &p, "refusing to expire changelogs", e);
    /* Java's ChangelogDeletion: with a changelog list, the files it adds
     * and its manifests; without, the files its delta deleted and its
     * delta and base lists. Index manifests and statistics were snapshot
     * expiration's. */
    for (size_t i = 0; !rc && i < n; i++) {
        pm_snapshot c = *cls[i];
        c.index_manifest = c.statistics = NULL;
        if (c.changelog_manifest_list) {
            c.base_manifest_list = c.delta_manifest_list = NULL;
            rc = plan_changelog(t, &c, &p, &pl, e);
        } else if (c.delta_manifest_list) {
            rc = plan_data(t, &c, &p, &pl, e);
        }
        if (!rc) rc = plan_meta(t, &c, &p, &pl, e);
        if (rc) pm_err_prefix(e, "refusing to expire changelog %lld: cannot read what it holds", (long long)cls[i]->id);
    }
    *protected_files = pl.protected_files;
    pm_buf_free(&by);
    protect_clear(&p);
    return rc;
}

/* ---- branch deletion (pm_branches.c) ------------------------------------------ */

/* Candidates of one snapshot or tag of the branch going away: its live
 * files, its changelog's additions and its metadata files. */
static int plan_branch_snapshot(paimon_table *bt, const pm_snapshot *s, protect *p, plan *pl, pm_err *e) {
    int rc = plan_tag_data(bt, s, p, pl, e);
    if (!rc && s->changelog_manifest_list) rc = plan_changelog(bt, s, p, pl, e);
    if (!rc) rc = plan_meta(bt, s, p, pl, e);
    return rc;
}

typedef struct branch_tags { protect *p; plan *pl; } branch_tags;

static int branch_tag_cand(void *ud, paimon_table *bt, pm_refs_source src, const char *by, const pm_snapshot *s,
                           pm_err *e) {
    branch_tags *c = ud;
    (void)by;
    return src == PM_REFS_TAG ? plan_branch_snapshot(bt, s, c->p, c->pl, e) : PAIMON_OK;
}

int pm_expire_plan_branch_deletion(paimon_table *t, const char *name, int threads, pm_deleter *data,
                                   pm_deleter *manifests, pm_deleter *lists, int64_t *protected_files, pm_err *e) {
    protect p;
    plan pl = {data, manifests, lists, 0};
    paimon_table **bts = NULL, *victim = NULL;
    size_t nb = 0;
    int rc = protect_init(&p, t, threads, 0, NULL, INT64_MAX, e);
    if (!rc && (rc = pm_refs_open_branches(t, &bts, &nb, e))) pm_err_prefix(e, "refusing to delete branch '%s'", name);
    /* everything kept: every snapshot, tag and long-lived changelog of the
     * other branches (main included) */
    for (size_t i = 0; !rc && i < nb; i++) {
        if (!strcmp(bts[i]->branch, name)) { victim = bts[i]; continue; }
        pm_snapshot **v = NULL;
        size_t k = 0;
        p.t = bts[i];
        rc = pm_refs_snapshots(bts[i], INT64_MIN, &v, &k, e);
        if (!rc) rc = protect_chain(v, k, &p, e);
        if (!rc) rc = protect_tags_changelogs(&p, e);
        if (rc) pm_err_prefix(e, "refusing to delete branch '%s'", name);
        pm_refs_snapshots_free(v, k);
    }
    if (!rc && !victim) rc = pm_fail(e, PAIMON_NOTFOUND, "%s: branch '%s' doesn't exist", t->root, name);
    /* what the branch's snapshots and tags hold; an unreadable one refuses */
    pm_snapshot **v = NULL;
    size_t k = 0;
    if (!rc) {
        p.t = victim;
        rc = pm_refs_snapshots(victim, INT64_MIN, &v, &k, e);
    }
    for (size_t i = 0; !rc && i < k; i++) {
        if ((rc = plan_branch_snapshot(victim, v[i], &p, &pl, e)))
            pm_err_prefix(e, "refusing to delete branch '%s': cannot read what snapshot %lld holds", name,
                          (long long)v[i]->id);
    }
    if (!rc) {
        branch_tags c = {&p, &pl};
        pm_refs_visitor tv = {PM_REFS_REFUSE, "refusing to delete branch", {0, PAIMON_CORRUPT, 0}, branch_tag_cand,
                              NULL, &c};
        rc = pm_refs_tags(victim, &tv, e);
    }
    *protected_files = pl.protected_files;
    pm_refs_snapshots_free(v, k);
    pm_refs_close_branches(bts, nb);
    protect_clear(&p);
    return rc;
}
