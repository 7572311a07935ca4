/* Long-lived changelogs (pm_changelog.h): Java's ChangelogManager files
 * and ExpireChangelogImpl's range, with pm_protect (the one rule of what stays needed). */
#include "pm_changelog.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_protect.h"
#include "pm_refs.h"

int pm_changelog_to_json(const pm_snapshot *s, pm_buf *out) {
    pm_snapshot copy = *s;
    copy.explicit_nulls = 0;
    copy.has_log_offsets = 0;
    copy.n_log_offsets = 0;
    copy.tag_create_time = copy.tag_time_retained = NULL;
    out->len = 0;
    return pm_snapshot_to_json(&copy, out);
}

static int changelog_path(const char *branch_root, const char *name, pm_buf *out) {
    out->len = 0;
    return pm_buf_printf(out, "%s/changelog/%s", branch_root, name) || pm_buf_cstr(out);
}

int pm_changelog_hint_write(pm_fileio *io, const char *branch_root, const char *which, int64_t id, pm_err *e) {
    pm_buf path = {0};
    char text[32];
    int n = snprintf(text, sizeof text, "%lld", (long long)id);
    int rc = changelog_path(branch_root, which, &path) ? pm_nomem(e) : pm_io_write_atomic(io, (char *)path.data, text, (size_t)n, e);
    pm_buf_free(&path);
    return rc;
}

/* changelog-<id> with these bytes: created, already there identical, or
 * replaced. A different one is a changelog of history a fast-forward
 * replaced (main's snapshot N expired into changelog-N, then the branch's
 * snapshot N came in): Java's commitChangelog overwrites it, and so do we.
 * Its files were protected while it stood; this run's plan was made with
 * it as a root, so nothing it alone held goes before the next run, when
 * they are orphans of history that no longer exists. */
static int write_one(paimon_table *t, const pm_snapshot *s, pm_buf *json, pm_buf *path, pm_err *e) {
    char name[40];
    snprintf(name, sizeof name, "changelog-%lld", (long long)s->id);
    if (changelog_path(t->branch_root, name, path) || pm_changelog_to_json(s, json)) return pm_nomem(e);
    int rc = pm_io_create_no_replace(t->io, (char *)path->data, json->data, json->len, e);
    if (rc != PAIMON_EXISTS) return rc;
    pm_err_clear(e);
    pm_buf have = {0};
    rc = pm_io_read_meta(t->io, (char *)path->data, PM_META_MAX, &have, e);
    if (!rc && (have.len != json->len || memcmp(have.data, json->data, json->len)))
        rc = pm_io_write_atomic(t->io, (char *)path->data, json->data, json->len, e);
    pm_buf_free(&have);
    return rc;
}

int pm_changelog_write_moved(paimon_table *t, pm_snapshot *const *v, size_t n, pm_err *e) {
    pm_buf json = {0}, path = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < n; i++) rc = write_one(t, v[i], &json, &path, e);
    if (!rc && n) rc = pm_changelog_hint_write(t->io, t->branch_root, "LATEST", v[n - 1]->id, e);
    pm_buf_free(&json);
    pm_buf_free(&path);
    return rc;
}

/* ---- range (ExpireChangelogImpl.expire) ------------------------------------- */

/* Integer option `key`, else `fallback` (Java's changelog* getters), else
 * the fallback's default. */
static int int_opt(const paimon_table *t, const char *key, const char *fallback, int64_t lo, int64_t *out, pm_err *e) {
    const char *used = key, *v = pm_schema_option(t->schema, key);
    if (!v) { used = fallback; v = pm_schema_option_or_default(t->schema, fallback); }
    if (!v) return pm_fail(e, PAIMON_CORRUPT, "%s: option %s has no value", t->root, used);
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > INT32_MAX)
        return pm_fail(e, PAIMON_CORRUPT, "%s: table option %s='%s' is not an integer >= %lld", t->root, used, v,
                       (long long)lo);
    *out = x;
    return PAIMON_OK;
}

static int duration_opt(const paimon_table *t, const char *key, const char *fallback, int64_t *ms, pm_err *e) {
    const char *used = key, *v = pm_schema_option(t->schema, key);
    if (!v) { used = fallback; v = pm_schema_option_or_default(t->schema, fallback); }
    *ms = 0;
    if (!v) return PAIMON_OK;
    int rc = pm_parse_duration_ms(v, ms, e);
    if (rc) pm_err_prefix(e, "%s: table option %s", t->root, used);
    return rc;
}

static int resolve(paimon_table *t, const pm_changelog_expire_opts *o, pm_changelog_range *r, pm_err *e) {
    int64_t v;
    int rc;
    if (o->retain_min < 0 || o->retain_max < 0 || o->max_deletes < 0)
        return pm_fail(e, PAIMON_MISUSE, "retain-min, retain-max and max-deletes must be at least 1");
    if (o->retain_min > 0) r->retain_min = o->retain_min;
    else if ((rc = int_opt(t, "changelog.num-retained.min", "snapshot.num-retained.min", 1, &v, e))) return rc;
    else r->retain_min = (int)v;
    if (o->retain_max > 0) r->retain_max = o->retain_max;
    else if ((rc = int_opt(t, "changelog.num-retained.max", "snapshot.num-retained.max", 1, &v, e))) return rc;
    else r->retain_max = (int)v;
    if (o->max_deletes > 0) r->max_deletes = o->max_deletes;
    else if ((rc = int_opt(t, "snapshot.expire.limit", "snapshot.expire.limit", INT32_MIN, &v, e))) return rc;
    else r->max_deletes = v < 0 ? 0 : (int)v;
    if (r->retain_max < r->retain_min)   /* Java's checkArgument */
        return pm_fail(e, PAIMON_MISUSE, "retain-max (%d) must be at least retain-min (%d)", r->retain_max,
                       r->retain_min);
    if (o->has_older_than) {
        r->older_than_ms = o->older_than_ms;
    } else {
        if ((rc = duration_opt(t, "changelog.time-retained", "snapshot.time-retained", &v, e))) return rc;
        r->older_than_ms = r->now_ms - v;
    }
    int64_t clock = pm_now_millis();
    if (r->older_than_ms > r->now_ms || r->older_than_ms > clock)
        return pm_fail(e, PAIMON_MISUSE, "older-than cut-off %lld is in the future", (long long)r->older_than_ms);
    return PAIMON_OK;
}

static int read_consumer_min(paimon_table *t, pm_changelog_range *r, pm_err *e) {
    char **ids = NULL;
    size_t n = 0;
    int rc = pm_consumer_list(t->io, t->branch_root, &ids, &n, e);
    for (size_t i = 0; !rc && i < n; i++) {
        pm_consumer c;
        if ((rc = pm_consumer_read(t->io, t->branch_root, ids[i], &c, e))) {
            pm_err_prefix(e, "refusing to expire changelogs: cannot read consumer '%s'", ids[i]);
            if (rc == PAIMON_NOTFOUND) rc = PAIMON_CONFLICT;
        } else if (i == 0 || c.next_snapshot < r->consumer_min) {
            r->consumer_min = c.next_snapshot;
        }
    }
    if (!rc) r->n_consumers = (int64_t)n;
    pm_strv_free(ids, n);
    return rc;
}

/* Time of changelog id; *found 0 when it is gone. */
static int changelog_time(paimon_table *t, int64_t id, int64_t *tm, int *found, pm_err *e) {
    pm_snapshot *s = NULL;
    int rc = pm_changelog_read_known(t->io, t->branch_root, t->schemas_known, id, &s, e);
    *found = rc == PAIMON_OK;
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (!rc) *tm = s->time_millis;
    pm_snapshot_free(s);
    return rc;
}

static int compute_range(paimon_table *t, const pm_changelog_expire_opts *o, pm_changelog_range *r, const int64_t *ids,
                         size_t n_ids, pm_err *e) {
    memset(r, 0, sizeof *r);
    r->capped_by = "none";
    r->now_ms = o->now_ms > 0 ? o->now_ms : pm_now_millis();
    int rc = resolve(t, o, r, e);
    if (rc) return rc;
    rc = pm_snapshot_latest_id(t->io, t->branch_root, &r->latest_snapshot, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); r->latest_snapshot = 0; return PAIMON_OK; }
    if (rc || (rc = pm_snapshot_earliest_id(t->io, t->branch_root, &r->earliest_snapshot, e))) return rc;
    if (n_ids == 0) return PAIMON_OK;
    r->earliest = ids[0];
    r->latest = ids[n_ids - 1];
    r->begin = r->end = r->earliest;
    if ((rc = read_consumer_min(t, r, e))) return rc;
    int64_t min = r->latest_snapshot - r->retain_max + 1;
    if (min < r->earliest) min = r->earliest;
    int64_t max_excl = r->latest_snapshot - r->retain_min + 1;
    r->capped_by = "retain-min";
    if (r->n_consumers > 0 && r->consumer_min < max_excl) { max_excl = r->consumer_min; r->capped_by = "consumer"; }
    if (r->earliest + r->max_deletes < max_excl) { max_excl = r->earliest + r->max_deletes; r->capped_by = "expire-limit"; }
    /* only what changelog/ holds, never the latest changelog */
    if (r->latest < max_excl) { max_excl = r->latest; r->capped_by = "latest-changelog"; }
    if (max_excl <= r->earliest) return PAIMON_OK;
    int64_t end = max_excl;
    /* Java's time rule: stop at the first changelog from `min` on that is
     * not older than the cut-off (the changelog itself, unlike snapshots) */
    for (int64_t id = min; id <= max_excl; id++) {
        int64_t tm = 0;
        int found;
        if ((rc = changelog_time(t, id, &tm, &found, e))) return rc;
        if (found && r->older_than_ms <= tm) { end = id; r->capped_by = "time-retained"; break; }
    }
    r->end = end;
    return PAIMON_OK;
}

/* ---- expire ------------------------------------------------------------------- */

static int fingerprint_same(paimon_table *t, const pm_buf *fp0, pm_err *e) {
    pm_buf fp1 = {0};
    int rc = pm_refs_fingerprint(t, &fp1, e);
    if (!rc && !pm_buf_eq(fp0, &fp1))
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: tags, branches or consumers changed while planning the changelog expiration; nothing deleted, run again",
                     t->root);
    pm_buf_free(&fp1);
    return rc;
}

/* The changelogs in [begin, end) that exist, read; the end one must exist
 * (Java skips the run otherwise: its files protect the next ones). */
static int read_expiring(paimon_table *t, const pm_changelog_range *r, const int64_t *ids, size_t n_ids,
                         pm_snapshot ***out, size_t *n, pm_err *e) {
    int ex = 0;
    pm_buf path = {0};
    char name[40];
    snprintf(name, sizeof name, "changelog-%lld", (long long)r->end);
    int rc = changelog_path(t->branch_root, name, &path) ? pm_nomem(e) : pm_io_exists(t->io, (char *)path.data, &ex, e);
    pm_buf_free(&path);
    if (rc) return rc;
    if (!ex) return pm_fail(e, PAIMON_CONFLICT, "%s: changelog %lld (the new earliest) is missing; nothing expired",
                            t->branch_root, (long long)r->end);
    *out = calloc(n_ids ? n_ids : 1, sizeof **out);
    if (!*out) return pm_nomem(e);
    for (size_t i = 0; i < n_ids && ids[i] < r->end; i++) {
        if (ids[i] < r->begin) continue;
        if ((rc = pm_changelog_read_known(t->io, t->branch_root, t->schemas_known, ids[i], &(*out)[*n], e))) {
            pm_err_prefix(e, "refusing to expire changelogs");
            return rc == PAIMON_NOTFOUND ? PAIMON_CONFLICT : rc;
        }
        (*n)++;
    }
    return PAIMON_OK;
}

/* The changelog files first, ascending, stopping at the first failure (no
 * gap below a changelog that stays). */
static int delete_changelog_files(paimon_table *t, pm_snapshot **v, size_t n, const pm_changelog_expire_opts *o,
                                  int64_t *done, pm_clean_result *clean, pm_err *e) {
    pm_buf path = {0};
    char name[40];
    int rc = PAIMON_OK;
    /* accounted as "changelogs"; a dry run plans them */
    pm_deleter *plan = o->dry_run ? pm_deleter_new() : NULL;
    if (o->dry_run && !plan) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < n; i++) {
        snprintf(name, sizeof name, "changelog-%lld", (long long)v[i]->id);
        if (changelog_path(t->branch_root, name, &path)) { rc = pm_nomem(e); break; }
        if (o->dry_run) rc = pm_deleter_add(plan, (char *)path.data, PM_K_CHANGELOG_META, e);
        else if ((rc = pm_clean_remove_one(t->io, (char *)path.data, PM_K_CHANGELOG_META, clean, e))) {
            pm_err_prefix(e, "deleting changelog %lld (%zu of %zu changelog files removed, no data file deleted)",
                          (long long)v[i]->id, i, n);
            break;
        }
        (*done)++;
    }
    pm_clean_opts co = {1, 1, 0, NULL, NULL, 0};
    if (!rc && plan) rc = pm_deleter_run(plan, t->io, t->root, &co, "changelogs", clean, e);
    pm_deleter_free(plan);
    pm_buf_free(&path);
    return rc;
}

/* What deleting the n long-lived changelogs frees (Java ChangelogDeletion):
 * with a changelog list, the files it adds and its manifests; without, the
 * files its delta deleted and its delta and base lists. Index manifests and
 * statistics were snapshot expiration's. Everything else stays
 * (pm_protect); an unreadable file of any of it refuses. */
static int plan_changelog_deletion(paimon_table *t, pm_snapshot *const *cls, size_t n, int threads,
                                   pm_protect_plan *pl, pm_err *e) {
    pm_protect *x = NULL;
    int64_t *ids = calloc(n ? n : 1, sizeof *ids);
    int rc = ids ? PAIMON_OK : pm_nomem(e);
    for (size_t i = 0; i < n && ids; i++) ids[i] = cls[i]->id;
    pm_protect_spec sp = {.kept_all = 1, .refs_above = INT64_MAX, .changelogs = ids, .n_changelogs = n,
                          .refusing = "refusing to expire changelogs", .threads = threads};
    if (!rc) rc = pm_protect_build(t, &sp, &x, e);
    for (size_t i = 0; !rc && i < n; i++) {
        pm_snapshot c = *cls[i];
        pm_protect_files files = PM_PROTECT_DELTA_DELETES;
        c.index_manifest = c.statistics = NULL;
        if (c.changelog_manifest_list) {
            c.base_manifest_list = c.delta_manifest_list = NULL;
            files = PM_PROTECT_NO_DATA;
        }
        if ((rc = pm_protect_plan_dropped(x, t, &c, files, 1, pl, e)))
            pm_err_prefix(e, "refusing to expire changelog %lld: cannot read what it holds", (long long)cls[i]->id);
    }
    pm_protect_free(x);
    free(ids);
    return rc;
}

int pm_expire_changelogs(paimon_table *t, const pm_changelog_expire_opts *o, pm_changelog_expire_result *r,
                         pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(r, 0, sizeof *r);
    r->clean.dry_run = o->dry_run;
    int64_t *ids = NULL;
    size_t n_ids = 0, n = 0;
    pm_snapshot **cls = NULL;
    pm_buf fp0 = {0};
    pm_deleter *data = pm_deleter_new(), *manifests = pm_deleter_new(), *lists = pm_deleter_new();
    int rc = pm_table_check_manifest_format(t, e);
    if (!rc && (!data || !manifests || !lists)) rc = pm_nomem(e);
    if (!rc && (rc = pm_changelog_list_ids(t->io, t->branch_root, &ids, &n_ids, e)))
        pm_err_prefix(e, "cannot list the changelogs of branch %s", t->branch);
    if (!rc) rc = compute_range(t, o, &r->range, ids, n_ids, e);
    int work = !rc && r->range.end > r->range.begin;
    if (work) rc = pm_refs_fingerprint(t, &fp0, e);
    if (work && !rc) rc = read_expiring(t, &r->range, ids, n_ids, &cls, &n, e);
    pm_protect_plan pl = {data, manifests, lists, 0, 0};
    if (work && !rc) rc = plan_changelog_deletion(t, cls, n, o->threads, &pl, e);
    r->clean.protected_files = pl.protected_files;
    if (work && !rc) rc = fingerprint_same(t, &fp0, e);
    /* the EARLIEST hint first (it names the end changelog, which stays): a
     * run stopped anywhere later leaves it right, and a re-run that finds
     * nothing left to expire has no hint to repair */
    if (work && !rc && !o->dry_run) rc = pm_changelog_hint_write(t->io, t->branch_root, "EARLIEST", r->range.end, e);
    if (work && !rc) rc = delete_changelog_files(t, cls, n, o, &r->expired, &r->clean, e);
    pm_clean_opts co = {o->threads, o->dry_run, 0, o->progress, o->progress_ud, 0};
    pm_deleter *phases[3] = {data, manifests, lists};
    static const char *const phase_names[3] = {"data files", "manifests", "manifest lists"};
    for (int ph = 0; work && !rc && ph < 3; ph++) {
        if ((rc = pm_deleter_run(phases[ph], t->io, t->root, &co, phase_names[ph], &r->clean, e))) break;
        if (!o->dry_run && r->clean.n_failures)
            rc = pm_fail(e, PAIMON_IO, "%s: %zu file(s) could not be deleted (first: %s: %s); the changelogs are gone, orphan cleaning removes the rest",
                         t->root, r->clean.n_failures, r->clean.failures[0].path, r->clean.failures[0].msg);
    }
    for (size_t i = 0; cls && i < n; i++) pm_snapshot_free(cls[i]);
    free(cls);
    free(ids);
    pm_buf_free(&fp0);
    pm_deleter_free(data);
    pm_deleter_free(manifests);
    pm_deleter_free(lists);
    r->clean.duration_ms = pm_now_millis() - t0;
    if (rc) pm_clean_result_free(&r->clean);
    return rc;
}
