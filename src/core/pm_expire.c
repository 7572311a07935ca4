/* Snapshot expiration: Java's range rule and deletion steps (§8.1), with
 * pm_protect deciding what stays needed before anything is deleted. */
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
#include "pm_protect.h"
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
int pm_changelog_decoupled(const paimon_table *t, char *why, size_t wl, pm_err *e) {
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
        int d = pm_changelog_decoupled(t, why, sizeof why, e);
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
    int rc = pm_refs_read_ids(t, from, to, k > 1 ? threads : 1, c->v + c->n, e);
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
    /* windows read in parallel, growing from one snapshot: the upkeep after
     * a commit mostly finds the first one young and stops there */
    int64_t max_window = threads > 1 ? 16 * (int64_t)threads : 1, window = 1;
    for (int64_t id = min; id < r->hard_end; id++) {
        int64_t next = id + 1;
        if (c->n == 0 || next >= c->from + (int64_t)c->n) {
            int64_t to = next + window - 1 < r->hard_end ? next + window - 1 : r->hard_end;
            int rc = snap_cache_read(t, c, next, to, threads, e);
            if (rc) return rc;
            window = window * 4 < max_window ? window * 4 : max_window;
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
    int rc = pm_refs_fingerprint(t, &fp1, e);
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
/* An interruption (paimon_interrupt) stops the data, manifest and list
 * phases between batches; the snapshot files of the range still go, in
 * order, and EARLIEST moves: every snapshot left is whole, and what the
 * expired ones alone used and was not deleted is left to orphan cleaning.
 * (Stopping with the range's snapshots kept would leave them unreadable.) */
static int delete_in_order(paimon_table *t, const pm_expire_opts *o, pm_protect_plan *pl, pm_deleter *snaps_del,
                           pm_clean_result *clean, int64_t *data_left, pm_err *e) {
    pm_clean_opts co = {o->threads, o->dry_run, 0, o->progress, o->progress_ud, 1};
    pm_clean_opts seq = co;
    seq.threads = 1;
    seq.stop_on_failure = 1;
    seq.interruptible = 0;
    pm_deleter *phases[4] = {pl->data, pl->meta_a, pl->meta_b, snaps_del};
    static const char *const names[4] = {"data files", "manifests", "manifest lists", "snapshots"};
    for (int ph = 0; ph < 4; ph++) {
        if (ph < 3 && clean->not_attempted) {   /* interrupted: straight to the snapshot files */
            clean->not_attempted += (int64_t)pm_deleter_count(phases[ph]);
            continue;
        }
        size_t skipped_before = clean->n_skipped;
        int rc = pm_deleter_run(phases[ph], t->io, t->root, ph == 3 ? &seq : &co, names[ph], clean, e);
        if (rc) return rc;
        if (ph == 0) *data_left = clean->not_attempted;
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
    const pm_protect *p;
    pm_protect_read *d;
    pm_avro_schema_cache *sc;  /* the caller's, bound on the workers too */
} plan_batch;

static void read_for_plan_task(void *ctx, size_t i) {
    plan_batch *b = ctx;
    pm_avro_schema_cache *prev = pm_avro_schema_cache_bound();
    if (b->sc) pm_avro_schema_cache_bind(b->sc);
    pm_protect_read_for_plan(b->t, b->s[i], b->p, b->s[i]->id > b->begin, i < b->first_exp_end,
                             pm_protect_read_at(b->d, i));
    if (b->sc) pm_avro_schema_cache_bind(prev);
}

/* The data files deleted in (begin, end] (plan_data) and the metadata
 * files of the n_exp expiring snapshots (plan_meta; other deleters, so
 * interleaving the two keeps each deleter's order). */
static int plan_range(paimon_table *t, pm_snapshot **all, size_t n_all, size_t n_exp, int64_t begin,
                      const pm_protect *p, int threads, pm_protect_plan *pl, pm_err *e) {
    pm_protect_read *d = pm_protect_read_new(PLAN_WINDOW);
    if (!d) return pm_nomem(e);
    int rc = PAIMON_OK;
    for (size_t at = 0; !rc && at < n_all; at += PLAN_WINDOW) {
        size_t k = n_all - at < PLAN_WINDOW ? n_all - at : PLAN_WINDOW;
        pm_protect_read_clear(d, PLAN_WINDOW);
        plan_batch b = {t, all + at, n_exp > at ? n_exp - at : 0, begin, p, d, pm_avro_schema_cache_bound()};
        rc = pm_exec_run(threads, k, read_for_plan_task, &b, "read snapshots' manifests", NULL, NULL, e);
        for (size_t i = 0; !rc && i < k; i++) {
            const pm_snapshot *s = all[at + i];
            if (s->id > begin) rc = pm_protect_plan_delta_read(s, pm_protect_read_at(d, i), p, pl, e);
            if (!rc && at + i < n_exp) rc = pm_protect_plan_meta_read(t, s, pm_protect_read_at(d, i), p, pl, e);
        }
    }
    pm_protect_read_free(d, PLAN_WINDOW);
    return rc;
}

/* What every root that stays needs (pm_protect: the retained snapshots
 * [end, latest] of this branch, its tags and changelogs but the expiring
 * snapshots' own changelog files, every other branch), then what the
 * expired range frees: data files deleted in (begin, end], the expired
 * changelogs, metadata and snapshot files. all: the existing snapshots of
 * [begin, end], the expired ones first; later: those of (end, latest]. */
static int protect_and_plan(paimon_table *t, const pm_expire_opts *o, pm_snapshot **all, size_t n_all, size_t n_exp,
                            int64_t latest, int64_t begin, int64_t end, int decoupled, pm_protect_plan *pl,
                            pm_deleter *snaps_del, pm_err *e) {
    pm_snapshot **exp = all;
    if (n_all == n_exp || all[n_exp]->id != end)
        return pm_fail(e, PAIMON_CORRUPT, "%s: snapshot %lld (the new earliest) is missing; refusing to expire",
                       t->branch_root, (long long)end);
    int64_t *moved = calloc(n_exp ? n_exp : 1, sizeof *moved);
    pm_protect *x = NULL;
    int rc = moved ? PAIMON_OK : pm_nomem(e);
    if (!rc) {
        for (size_t i = 0; i < n_exp; i++) moved[i] = exp[i]->id;
        /* decoupled: changelog-<id> of a snapshot still expiring was written
         * by an interrupted run; the snapshot itself protects what Java keeps
         * for it (pm_protect_add_moved_changelogs) */
        pm_protect_spec sp = {.kept_first = all[n_exp], .kept_from = end + 1, .kept_to = latest, .refs_above = INT64_MAX,
                              .changelogs = decoupled ? moved : NULL, .n_changelogs = decoupled ? n_exp : 0,
                              .refusing = "refusing to expire", .threads = o->threads};
        rc = pm_protect_build(t, &sp, &x, e);
    }
    if (!rc && decoupled) rc = pm_protect_add_moved_changelogs(x, t, exp, n_exp, e);
    if (!rc) rc = plan_range(t, all, n_all, n_exp, begin, x, o->threads, pl, e);
    for (size_t i = 0; !rc && !decoupled && i < n_exp; i++)   /* decoupled: they stay with changelog-<id> */
        if (exp[i]->changelog_manifest_list) rc = pm_protect_plan_changelog(t, exp[i], x, pl, e);
    if (!rc) rc = plan_snapshot_files(t, exp, n_exp, snaps_del, e);
    pm_protect_free(x);
    free(moved);
    return rc;
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

static int expire_snapshots(paimon_table *t, const pm_expire_opts *o, pm_expire_result *res, pm_err *e);

/* A real run is interruptible from its start: a signal while planning
 * (nothing changed yet) stops it before the first deletion. */
int pm_expire_snapshots(paimon_table *t, const pm_expire_opts *o, pm_expire_result *res, pm_err *e) {
    if (o->dry_run) return expire_snapshots(t, o, res, e);
    pm_interrupt_enter();
    int rc = expire_snapshots(t, o, res, e);
    pm_interrupt_leave();
    return rc;
}

static int expire_snapshots(paimon_table *t, const pm_expire_opts *o, pm_expire_result *res, pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(res, 0, sizeof *res);
    res->clean.dry_run = o->dry_run;
    int rc = pm_table_check_manifest_format(t, e);
    if (rc) return rc;
    char why[400];
    /* decoupled (Java ExpireConfig.isChangelogDecoupled): each expired
     * snapshot moves to changelog/changelog-<id> with what it reads */
    int dec = pm_changelog_decoupled(t, why, sizeof why, e);
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
    pm_protect_plan pl = {pm_deleter_new(), pm_deleter_new(), pm_deleter_new(), 0, 0};
    pm_deleter *snaps_del = pm_deleter_new();
    pm_snapshot **all = NULL;               /* [begin, end]: expired ones first */
    size_t n_all = 0, n_exp = 0;
    if (!pl.data || !pl.meta_a || !pl.meta_b || !snaps_del) rc = pm_nomem(e);
    if (!rc) rc = pm_refs_fingerprint(t, &fp0, e);
    if (!rc && (rc = read_range(t, begin, end, o->threads, &cache, &all, &n_all, e)))
        pm_err_prefix(e, "refusing to expire");
    snap_cache_free(&cache);
    while (!rc && n_exp < n_all && all[n_exp]->id < end) n_exp++;
    if (!rc) rc = protect_and_plan(t, o, all, n_all, n_exp, r->latest, begin, end, dec, &pl, snaps_del, e);
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
    if (!rc && !o->dry_run && pm_interrupted())
        rc = pm_fail(e, PAIMON_INTERRUPT, "%s: interrupted before anything was deleted: no snapshot expired; run again",
                     t->root);
    int64_t data_left = 0;
    if (!rc) rc = delete_in_order(t, o, &pl, snaps_del, &res->clean, &data_left, e);
    if (!rc && !o->dry_run) rc = pm_hint_write(t->io, t->branch_root, "EARLIEST", end, e);
    /* the data files left stay named by the retained snapshots' manifests
     * (as DELETE entries) until those are merged; the manifests and lists
     * left are orphans at once */
    if (!rc && res->clean.not_attempted)
        rc = pm_fail(e, PAIMON_INTERRUPT, "%s: interrupted: snapshots [%lld, %lld) expired (%lld), every snapshot left "
                     "is whole; not deleted: %lld manifest(s) and list(s) (remove_orphan_files.lua removes them) and "
                     "%lld data file(s) (orphans once the manifests naming them are merged)", t->root,
                     (long long)begin, (long long)end, (long long)(end - begin),
                     (long long)(res->clean.not_attempted - data_left), (long long)data_left);
    /* last, after EARLIEST: the bucket and partition directories emptied,
     * if asked for (Java: snapshot.clean-empty-directories, default false) */
    if (!rc && clean_dirs_wanted(t, o))
        pm_deleter_clean_dirs(pl.data, t->io, t->root, t->schema->n_partition_keys, &res->clean);
    pm_refs_snapshots_free(all, n_all);
    pm_buf_free(&fp0);
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

