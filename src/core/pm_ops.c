/* The operations layer (pm_ops.h): one option table, one parser, and for
 * each maintenance operation a run function that fills the core's options
 * from the parsed ones and builds the one result tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pm_branches.h"
#include "pm_consumers.h"
#include "pm_changelog.h"
#include "pm_expire.h"
#include "pm_meta.h"
#include "pm_ops.h"
#include "pm_orphan.h"
#include "pm_partition_expire.h"
#include "pm_tag_auto.h"
#include "pm_tags.h"
#include "pm_rollback.h"
#include "pm_upkeep.h"
#include "pm_verify.h"

/* ---- options ---------------------------------------------------------- */

typedef enum opt_type {
    T_INT,        /* integer in [lo, hi] */
    T_BOOL,
    T_TEXT,
    T_CUTOFF,     /* a duration text (now minus it) or epoch ms (a Lua integer) */
    T_FACE        /* given by a face in its own terms (pm_op_hooks): only the name is checked */
} opt_type;

typedef struct opt_def {
    const char *key;              /* paimon.h / command-line name; NULL: Lua only */
    const char *lua_key;          /* Lua name; NULL: paimon.h only */
    opt_type type;
    int64_t lo, hi;
    int has_default;
    int64_t dflt;
} opt_def;

static const opt_def defs[PM_O__N] = {
    [PM_O_RETAIN_MIN] = {"retain-min", "retain_min", T_INT, 1, INT32_MAX, 0, 0},
    [PM_O_RETAIN_MAX] = {"retain-max", "retain_max", T_INT, 1, INT32_MAX, 0, 0},
    [PM_O_OLDER_THAN] = {"older-than", "older_than", T_CUTOFF, 0, 0, 0, 0},
    [PM_O_OLDER_THAN_MS] = {"older-than-ms", NULL, T_INT, 0, INT64_MAX, 0, 0},
    [PM_O_MAX_DELETES] = {"max-deletes", "max_deletes", T_INT, 1, INT32_MAX, 0, 0},
    /* the policy answer's name; Lua also takes `until`, its old name */
    [PM_O_KEEP_FROM] = {"until", "keep_from", T_INT, 1, INT64_MAX, 0, 0},
    [PM_O_UNTIL_ALIAS] = {NULL, "until", T_INT, 1, INT64_MAX, 0, 0},
    [PM_O_THREADS] = {"threads", "threads", T_INT, 1, 256, 1, 4},
    [PM_O_NOW] = {"now-ms", "now", T_INT, 1, INT64_MAX, 0, 0},
    [PM_O_DRY_RUN] = {"dry-run", "dry_run", T_BOOL, 0, 0, 0, 0},
    [PM_O_CLEAN_EMPTY_DIRS] = {"clean-empty-directories", "clean_empty_directories", T_BOOL, 0, 0, 0, 0},
    [PM_O_ALLOW_YOUNG_CUTOFF] = {"allow-young-cutoff", "allow_young_cutoff", T_BOOL, 0, 0, 0, 0},
    [PM_O_ALL_SNAPSHOTS] = {"all-snapshots", "all_snapshots", T_BOOL, 0, 0, 0, 0},
    [PM_O_PARTITION] = {"partition", NULL, T_TEXT, 0, 0, 0, 0},   /* Lua: the specs argument */
    [PM_O_MAX_ATTEMPTS] = {"max-attempts", "max_attempts", T_INT, 1, 100, 1, 3},
    [PM_O_COMMIT_USER] = {"commit-user", "commit_user", T_TEXT, 0, 0, 0, 0},
    [PM_O_PROGRESS] = {NULL, "progress", T_FACE, 0, 0, 0, 0},
    [PM_O_POLICY] = {NULL, "policy", T_FACE, 0, 0, 0, 0},
    [PM_O_EXACT] = {NULL, "exact", T_FACE, 0, 0, 0, 0},
    [PM_O_ON_RETRY] = {NULL, "on_retry", T_FACE, 0, 0, 0, 0},
    /* tag names: Lua gives them as the methods' arguments (pm_op_hooks) */
    [PM_O_TAG] = {"tag", NULL, T_TEXT, 0, 0, 0, 0},
    [PM_O_NEW_NAME] = {"new-name", NULL, T_TEXT, 0, 0, 0, 0},
    [PM_O_SNAPSHOT] = {"snapshot", "snapshot", T_INT, 1, INT64_MAX, 0, 0},
    [PM_O_TIMESTAMP] = {"timestamp-ms", "timestamp", T_INT, 0, INT64_MAX, 0, 0},
    [PM_O_TIME_RETAINED] = {"time-retained", "time_retained", T_TEXT, 0, 0, 0, 0},
    [PM_O_NUM_RETAINED_MAX] = {"num-retained-max", "num_retained_max", T_INT, 1, INT32_MAX, 0, 0},
    [PM_O_TO_SNAPSHOT] = {"to-snapshot", "to_snapshot", T_INT, 1, INT64_MAX, 0, 0},
    [PM_O_TO_TAG] = {"to-tag", "to_tag", T_TEXT, 0, 0, 0, 0},
    [PM_O_TO_TIMESTAMP] = {"to-timestamp", "to_timestamp", T_INT, 0, INT64_MAX, 0, 0},
    [PM_O_AS_LATEST] = {"as-latest", "as_latest", T_BOOL, 0, 0, 0, 0},
    [PM_O_TO_WATERMARK] = {"to-watermark", "to_watermark", T_INT, INT64_MIN, INT64_MAX, 0, 0},
    [PM_O_PURGE_FILES] = {"purge-files", "purge_files", T_BOOL, 0, 0, 0, 0},
    [PM_O_CONSUMER_ID] = {"id", "id", T_TEXT, 0, 0, 0, 0},
    [PM_O_NEXT_SNAPSHOT] = {"next-snapshot", "next_snapshot", T_INT, 1, INT64_MAX, 0, 0},
    [PM_O_EXPIRATION] = {"expiration", "expiration", T_TEXT, 0, 0, 0, 0},   /* a duration: "7d" */
    /* the branch operated on: Lua gives it as the methods' argument (pm_op_hooks) */
    [PM_O_BRANCH_NAME] = {"branch", NULL, T_TEXT, 0, 0, 0, 0},
    [PM_O_FROM_TAG] = {"from-tag", "from_tag", T_TEXT, 0, 0, 0, 0},
    /* t:auto_tags{now_ms = ...}: Lua's other name of `now` */
    [PM_O_NOW_MS_ALIAS] = {NULL, "now_ms", T_INT, 1, INT64_MAX, 0, 0},
    /* Lua: a dry run's `paths` stay in the C result (a paimon.PathList the
     * JSON writer streams) instead of one Lua table per planned file */
    [PM_O_PATHS_HANDLE] = {NULL, "paths_handle", T_BOOL, 0, 0, 0, 0},
    /* create_tag_from_watermark: any long, Long.MIN_VALUE included */
    [PM_O_WATERMARK] = {"watermark", "watermark", T_INT, INT64_MIN, INT64_MAX, 0, 0},
    /* clear_consumers: Java regular expressions matched against the whole id */
    [PM_O_INCLUDE] = {"include", "include", T_TEXT, 0, 0, 0, 0},
    [PM_O_EXCLUDE] = {"exclude", "exclude", T_TEXT, 0, 0, 0, 0},
    /* expire_partitions (paimon.h; the Lua face is paimon.partition_expire) */
    [PM_O_EXPIRATION_TIME] = {"expiration-time", "expiration_time", T_TEXT, 0, 0, 0, 0},
    [PM_O_STRATEGY] = {"strategy", "strategy", T_TEXT, 0, 0, 0, 0},
    [PM_O_TS_FORMATTER] = {"timestamp-formatter", "timestamp_formatter", T_TEXT, 0, 0, 0, 0},
    [PM_O_TS_PATTERN] = {"timestamp-pattern", "timestamp_pattern", T_TEXT, 0, 0, 0, 0},
    [PM_O_MAX_EXPIRES] = {"max-expires", "max_expires", T_INT, 1, INT32_MAX, 0, 0},
    /* delete_tags: remove the tag files only, read nothing (an unreadable tag) */
    [PM_O_FORCE] = {"force", "force", T_BOOL, 0, 0, 0, 0},
};

const char *pm_op_key(pm_opt_id id, pm_face face) {
    if ((int)id < 0 || id >= PM_O__N) return NULL;
    return face == PM_FACE_LUA ? defs[id].lua_key : defs[id].key;
}

typedef int (*op_run_fn)(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e);

struct pm_op {
    const char *name;
    const pm_opt_id *opts;        /* ended by PM_O__N, in the order the known list names them */
    op_run_fn run;
};


/* Id of the face's option `key` for op; -1 if op does not know it. */
static int find_opt(const pm_op *op, pm_face face, const char *key) {
    for (const pm_opt_id *id = op->opts; *id != PM_O__N; id++) {
        const char *k = pm_op_key(*id, face);
        if (k && !strcmp(k, key)) return (int)*id;
    }
    return -1;
}

static int unknown_option(const pm_op *op, pm_face face, const char *key, pm_err *e) {
    char list[512];
    size_t len = 0;
    list[0] = '\0';
    for (const pm_opt_id *id = op->opts; *id != PM_O__N; id++) {
        const char *k = pm_op_key(*id, face);
        if (!k) continue;
        int w = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", k);
        if (w < 0 || (size_t)w >= sizeof list - len) break;
        len += (size_t)w;
    }
    return pm_fail(e, PAIMON_MISUSE, "%s: unknown option '%s' (known: %s)", op->name, key, list);
}

/* A decimal integer, whole text, no sign but '-', no blanks. */
static int parse_decimal(const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || s[0] == '+' || s[0] == ' ') return 0;
    *out = v;
    return 1;
}

static int parse_one(const pm_opt_in *in, pm_opt_id id, pm_op_args *a, pm_err *e) {
    const opt_def *d = &defs[id];
    const char *name = in->key;
    switch (d->type) {
    case T_FACE:
        break;
    case T_INT: {
        int64_t v = 0;
        if (in->kind == PM_OV_INT) v = in->i;
        else if (in->kind == PM_OV_TEXT) {
            if (!parse_decimal(in->text, &v))
                return pm_fail(e, PAIMON_MISUSE, "option '%s' must be an integer, got '%s'", name, in->text);
        } else
            return pm_fail(e, PAIMON_MISUSE, "option '%s' must be an integer, got %s", name,
                           in->kind == PM_OV_BOOL ? "boolean" : in->type_name);
        if (v < d->lo || v > d->hi)
            return pm_fail(e, PAIMON_MISUSE, "option '%s' must be between %lld and %lld, got %lld", name,
                           (long long)d->lo, (long long)d->hi, (long long)v);
        a->v[id] = v;
        break;
    }
    case T_BOOL:
        if (in->kind == PM_OV_BOOL) a->v[id] = in->i ? 1 : 0;
        else if (a->face == PM_FACE_C && !strcmp(in->text, "true")) a->v[id] = 1;
        else if (a->face == PM_FACE_C && !strcmp(in->text, "false")) a->v[id] = 0;
        else if (a->face == PM_FACE_C)
            return pm_fail(e, PAIMON_MISUSE, "option '%s' must be true or false, got '%s'", name, in->text);
        else   /* typed values: a Lua string "false" is no boolean (it must not turn into a real run) */
            return pm_fail(e, PAIMON_MISUSE, "%s must be a boolean, got %s", name,
                           in->kind == PM_OV_INT ? "number" : in->kind == PM_OV_TEXT ? "string" : in->type_name);
        break;
    case T_TEXT:
        if (in->kind != PM_OV_TEXT) return pm_fail(e, PAIMON_MISUSE, "option '%s' must be a string", name);
        a->text[id] = in->text;
        break;
    case T_CUTOFF:
        if (in->kind == PM_OV_TEXT) a->text[id] = in->text;       /* resolved once `now` is known */
        else if (in->kind == PM_OV_INT) a->v[id] = in->i;
        else
            return pm_fail(e, PAIMON_MISUSE, "option '%s' must be epoch milliseconds or a duration such as \"1h\", got %s",
                           name, in->kind == PM_OV_BOOL ? "boolean" : in->type_name);
        break;
    }
    a->has[id] = 1;
    return PAIMON_OK;
}

/* older-than as a duration: now minus it. */
static int resolve_cutoff(pm_op_args *a, pm_err *e) {
    const char *name = pm_op_key(PM_O_OLDER_THAN, a->face);
    if (a->has[PM_O_OLDER_THAN] && a->has[PM_O_OLDER_THAN_MS])
        return pm_fail(e, PAIMON_MISUSE, "options 'older-than' and 'older-than-ms' exclude each other");
    if (a->has[PM_O_OLDER_THAN_MS]) {
        a->has[PM_O_OLDER_THAN] = 1;
        a->v[PM_O_OLDER_THAN] = a->v[PM_O_OLDER_THAN_MS];
        return PAIMON_OK;
    }
    if (!a->has[PM_O_OLDER_THAN] || !a->text[PM_O_OLDER_THAN]) return PAIMON_OK;
    int64_t ms = 0, now = a->has[PM_O_NOW] ? a->v[PM_O_NOW] : pm_now_millis();
    if (pm_parse_duration_ms(a->text[PM_O_OLDER_THAN], &ms, e)) {
        char why[sizeof e->msg];
        snprintf(why, sizeof why, "%s", e->msg);
        /* Lua also takes epoch milliseconds under this name */
        return pm_fail(e, PAIMON_MISUSE, "option '%s': %s%s", name, why,
                       a->face == PM_FACE_LUA ? " (a duration such as 90s, 30m, 1h, 7d, or epoch milliseconds)" : "");
    }
    a->v[PM_O_OLDER_THAN] = now - ms;
    return PAIMON_OK;
}

int pm_op_parse(const pm_op *op, pm_face face, const pm_opt_in *in, size_t n, pm_op_args *a, pm_err *e) {
    memset(a, 0, sizeof *a);
    a->op = op;
    a->face = face;
    a->in = in;
    a->n_in = n;
    int ids[64];
    if (n > sizeof ids / sizeof ids[0]) return pm_fail(e, PAIMON_MISUSE, "%s: too many options (%zu)", op->name, n);
    /* every name first: an unknown one is reported before any value */
    for (size_t i = 0; i < n; i++)
        if ((ids[i] = find_opt(op, face, in[i].key)) < 0) return unknown_option(op, face, in[i].key, e);
    int rc;
    for (size_t i = 0; i < n; i++)
        if ((rc = parse_one(&in[i], (pm_opt_id)ids[i], a, e))) return rc;
    for (const pm_opt_id *id = op->opts; *id != PM_O__N; id++)
        if (!a->has[*id] && defs[*id].has_default) {
            a->has[*id] = 1;
            a->v[*id] = defs[*id].dflt;
        }
    if (a->has[PM_O_UNTIL_ALIAS]) {
        if (a->has[PM_O_KEEP_FROM] && a->v[PM_O_KEEP_FROM] != a->v[PM_O_UNTIL_ALIAS])
            return pm_fail(e, PAIMON_MISUSE, "%s: keep_from and until (its old name) differ", op->name);
        a->has[PM_O_KEEP_FROM] = 1;
        a->v[PM_O_KEEP_FROM] = a->v[PM_O_UNTIL_ALIAS];
    }
    if (a->has[PM_O_NOW_MS_ALIAS]) {
        if (a->has[PM_O_NOW] && a->v[PM_O_NOW] != a->v[PM_O_NOW_MS_ALIAS])
            return pm_fail(e, PAIMON_MISUSE, "%s: now and now_ms differ", op->name);
        a->has[PM_O_NOW] = 1;
        a->v[PM_O_NOW] = a->v[PM_O_NOW_MS_ALIAS];
    }
    return resolve_cutoff(a, e);
}

/* ---- results ---------------------------------------------------------- */

static const char *clean_kind_name(int k) { return k >= 0 && k < PM_K__N ? pm_file_kind_names[k] : "unknown"; }

static pm_rv *put_item(pm_result *r, pm_rv *list, const char *path, const char *kind, int with_size, int64_t size,
                       const char *msg) {
    pm_rv *it = pm_rv_obj(r, list, NULL);
    pm_rv_str(r, it, "path", path);
    pm_rv_str(r, it, "kind", kind);
    if (with_size) pm_rv_int(r, it, "size", size);
    pm_rv_str(r, it, "message", msg);
    return it;
}

static void put_items(pm_result *r, pm_rv *obj, const char *key, const pm_clean_item *v, size_t n, int with_size,
                      const char *(*kind_name)(int)) {
    pm_rv *list = pm_rv_list(r, obj, key);
    for (size_t i = 0; i < n && list; i++) put_item(r, list, v[i].path, kind_name(v[i].kind), with_size, v[i].size, v[i].msg);
}

pm_rv *pm_op_plan_row(pm_result *r, pm_rv *list, const pm_plan *p, size_t i, pm_buf *tmp) {
    int kind;
    int64_t size;
    const char *path = pm_plan_path(p, i, tmp, &kind, &size);
    if (!path) { r->oom = 1; return NULL; }
    pm_rv *row = put_item(r, list, path, clean_kind_name(kind), 1, size, NULL);
    return r->oom ? NULL : row;   /* a row missing a field is no row */
}

/* What a cleanup deleted (or would): per kind, totals, problems. A dry
 * run's plan at the root goes to the result whole when the face streams
 * it (keep_plan), else one node per path. */
static void put_clean(pm_result *r, pm_rv *o, pm_clean_result *c) {
    pm_rv *del = pm_rv_obj(r, o, "deleted"), *bytes = pm_rv_obj(r, o, "bytes");
    int64_t files = 0, total = 0;
    for (int k = 0; k < PM_K__N; k++) {
        pm_rv_int(r, del, pm_file_kind_names[k], c->count[k]);
        pm_rv_int(r, bytes, pm_file_kind_names[k], c->bytes[k]);
        files += c->count[k];
        total += c->bytes[k];
    }
    pm_rv_int(r, o, "files", files);
    pm_rv_int(r, o, "total_bytes", total);
    pm_rv_int(r, o, "directories", c->dirs_removed);
    pm_rv_int(r, o, "missing", c->missing);
    pm_rv_int(r, o, "protected", c->protected_files);
    pm_rv_bool(r, o, "dry_run", c->dry_run);
    if (c->dry_run) {
        pm_rv *list = pm_rv_list(r, o, "paths");
        if (r->keep_plan && o == r->root && !r->plan) {
            r->plan = c->plan;
            r->plan_list = list;
            c->plan = NULL;
        } else {
            pm_buf tmp = {0};
            for (size_t i = 0; i < pm_plan_count(c->plan) && list; i++) pm_op_plan_row(r, list, c->plan, i, &tmp);
            pm_buf_free(&tmp);
        }
    }
    put_items(r, o, "failures", c->failures, c->n_failures, 0, clean_kind_name);
    put_items(r, o, "skipped", c->skipped, c->n_skipped, 0, clean_kind_name);
    pm_rv_int(r, o, "duration_ms", c->duration_ms);
}

/* The expiration plan (t:expire_range, a result's "plan"). */
static void put_range(pm_result *r, pm_rv *o, const pm_expire_range *g) {
    pm_rv_int(r, o, "earliest", g->earliest);
    pm_rv_int(r, o, "latest", g->latest);
    pm_rv_int(r, o, "retain_min", g->retain_min);
    pm_rv_int(r, o, "retain_max", g->retain_max);
    pm_rv_int(r, o, "max_deletes", g->max_deletes);
    pm_rv_int(r, o, "older_than", g->older_than_ms);
    pm_rv_int(r, o, "now", g->now_ms);
    if (g->n_consumers > 0) pm_rv_int(r, o, "consumer_min", g->consumer_min);   /* 0 is a real position */
    pm_rv_int(r, o, "hard_end", g->hard_end);
    pm_rv_int(r, o, "begin", g->begin);
    pm_rv_int(r, o, "end", g->end);
    pm_rv_str(r, o, "capped_by", g->capped_by);
}

static void put_paths(pm_result *res, pm_rv *o, const char *key, const pm_strv *v);

/* ---- operations ------------------------------------------------------- */

static const pm_op_hooks no_hooks;

static void expire_opts_from(const pm_op_args *a, const pm_op_hooks *h, pm_expire_opts *x) {
    memset(x, 0, sizeof *x);
    if (a->has[PM_O_RETAIN_MIN]) x->retain_min = (int)a->v[PM_O_RETAIN_MIN];
    if (a->has[PM_O_RETAIN_MAX]) x->retain_max = (int)a->v[PM_O_RETAIN_MAX];
    if (a->has[PM_O_MAX_DELETES]) x->max_deletes = (int)a->v[PM_O_MAX_DELETES];
    if (a->has[PM_O_KEEP_FROM]) x->until = a->v[PM_O_KEEP_FROM];
    x->threads = (int)a->v[PM_O_THREADS];
    if (a->has[PM_O_NOW]) x->now_ms = a->v[PM_O_NOW];
    x->dry_run = (int)a->v[PM_O_DRY_RUN];
    if (a->has[PM_O_CLEAN_EMPTY_DIRS]) x->clean_empty_dirs = a->v[PM_O_CLEAN_EMPTY_DIRS] ? 1 : -1;
    x->has_older_than = a->has[PM_O_OLDER_THAN];
    x->older_than_ms = a->v[PM_O_OLDER_THAN];
    x->progress = h->progress;
    x->progress_ud = h->progress_ud;
}

static int run_expire_range(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    pm_expire_opts x;
    expire_opts_from(a, h, &x);
    pm_expire_range g;
    int rc = pm_expire_compute_range(t, &x, &g, e);
    if (rc) return rc;
    put_range(res, res->root, &g);
    return PAIMON_OK;
}

static int run_expire_snapshots(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                                pm_err *e) {
    pm_expire_opts x;
    expire_opts_from(a, h, &x);
    pm_expire_result er;
    int rc = pm_expire_snapshots(t, &x, &er, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    put_clean(res, o, &er.clean);
    pm_rv_int(res, o, "expired", er.expired);
    pm_rv_int(res, o, "consumers_expired", er.consumers_expired);
    if (er.changelogs > 0) pm_rv_int(res, o, "changelogs", er.changelogs);   /* moved to changelog/ */
    if (er.expired > 0) {
        pm_rv *range = pm_rv_list(res, o, "range");
        pm_rv_int(res, range, NULL, er.range.begin);
        pm_rv_int(res, range, NULL, er.range.end - 1);
    }
    put_range(res, pm_rv_obj(res, o, "plan"), &er.range);
    pm_rv_str(res, o, "capped_by", er.range.capped_by);
    if (er.refused[0]) pm_rv_str(res, o, "refused", er.refused);
    pm_clean_result_free(&er.clean);
    return PAIMON_OK;
}

static int run_remove_orphan_files(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                                   pm_err *e) {
    pm_orphan_opts x;
    memset(&x, 0, sizeof x);
    x.has_older_than = a->has[PM_O_OLDER_THAN];
    x.older_than_ms = a->v[PM_O_OLDER_THAN];
    x.allow_young_cutoff = (int)a->v[PM_O_ALLOW_YOUNG_CUTOFF];
    x.threads = (int)a->v[PM_O_THREADS];
    x.dry_run = (int)a->v[PM_O_DRY_RUN];
    if (a->has[PM_O_NOW]) x.now_ms = a->v[PM_O_NOW];
    x.progress = h->progress;
    x.progress_ud = h->progress_ud;
    pm_orphan_result orr;
    int rc = pm_remove_orphan_files(t, &x, &orr, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    put_clean(res, o, &orr.clean);
    pm_rv_int(res, o, "older_than", orr.older_than_ms);
    pm_rv_int(res, o, "cutoff_floor", orr.cutoff_floor_ms);
    pm_rv_bool(res, o, "floor_overridden", orr.floor_overridden);
    pm_rv_int(res, o, "listed", orr.listed);
    pm_rv_int(res, o, "used", orr.used);
    pm_rv_int(res, o, "candidates", orr.candidates);
    pm_rv_int(res, o, "recent", orr.recent);
    pm_rv_int(res, o, "manifests_read", orr.manifests_read);
    pm_rv_int(res, o, "manifests_skipped", orr.manifests_skipped);
    pm_clean_result_free(&orr.clean);
    return PAIMON_OK;
}

static int run_verify(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    pm_verify_opts x;
    memset(&x, 0, sizeof x);
    x.all_snapshots = (int)a->v[PM_O_ALL_SNAPSHOTS];
    x.threads = (int)a->v[PM_O_THREADS];
    x.progress = h->progress;
    x.progress_ud = h->progress_ud;
    pm_verify_result vr;
    int rc = pm_verify(t, &x, &vr, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    pm_rv_bool(res, o, "ok", vr.n_missing == 0 && vr.n_wrong_size == 0 && vr.n_unreadable == 0);
    pm_rv_int(res, o, "branches", vr.branches);
    pm_rv_int(res, o, "snapshots", vr.snapshots);
    pm_rv_int(res, o, "tags", vr.tags);
    pm_rv_int(res, o, "changelogs", vr.changelogs);
    pm_rv_int(res, o, "not_checked", vr.not_checked);
    pm_rv *checked = pm_rv_obj(res, o, "checked");
    int64_t files = 0;
    for (int k = 0; k < PM_K__N; k++) {
        pm_rv_int(res, checked, pm_verify_kind_name(k), vr.checked[k]);
        files += vr.checked[k];
    }
    pm_rv_int(res, o, "files", files);
    put_items(res, o, "missing", vr.missing, vr.n_missing, 1, pm_verify_kind_name);
    put_items(res, o, "wrong_size", vr.wrong_size, vr.n_wrong_size, 1, pm_verify_kind_name);
    put_items(res, o, "unreadable", vr.unreadable, vr.n_unreadable, 1, pm_verify_kind_name);
    pm_rv_int(res, o, "duration_ms", vr.duration_ms);
    pm_verify_result_free(&vr);
    return PAIMON_OK;
}

/* "k=v,k2=v2" into a filter over t's partition columns. A comma belongs to
 * the value unless a partition column name and '=' follow it (values may
 * contain commas), as drop_partition.lua reads --partition. Keys and
 * values point into `text`, which is modified. */
static int parse_spec(const paimon_table *t, char *text, const char **keys, const char **vals, size_t *n,
                      pm_err *e) {
    char shown[256];
    snprintf(shown, sizeof shown, "%s", text);
    *n = 0;
    char *p = text;
    for (;;) {
        char *eq = strchr(p, '=');
        if (!eq) return pm_fail(e, PAIMON_MISUSE, "partition '%s': expected k=v[,k2=v2]", shown);
        size_t kl = (size_t)(eq - p);
        int known = -1;
        for (size_t i = 0; i < t->n_part; i++)
            if (strlen(t->part_keys[i]) == kl && !strncmp(p, t->part_keys[i], kl)) known = (int)i;
        if (known < 0) {
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(kl < 120 ? kl : 120), p);
            return pm_fail(e, PAIMON_MISUSE, "partition '%s': '%s' is not a partition column of %s", shown, key,
                           t->root);
        }
        for (size_t i = 0; i < *n; i++)
            if (!strcmp(keys[i], t->part_keys[known]))
                return pm_fail(e, PAIMON_MISUSE, "partition '%s': column '%s' given twice", shown, keys[i]);
        *eq = '\0';
        char *v = eq + 1;
        /* the value runs to the next ",<partition column>=" */
        char *end = v;
        for (;;) {
            char *c = strchr(end, ',');
            if (!c) { end = v + strlen(v); break; }
            int starts_key = 0;
            for (size_t i = 0; i < t->n_part && !starts_key; i++) {
                size_t l = strlen(t->part_keys[i]);
                starts_key = !strncmp(c + 1, t->part_keys[i], l) && c[1 + l] == '=';
            }
            if (starts_key) { end = c; break; }
            end = c + 1;
        }
        int last = *end == '\0';
        *end = '\0';
        if (!*v) return pm_fail(e, PAIMON_MISUSE, "partition '%s': no value for '%s'", shown, t->part_keys[known]);
        keys[*n] = t->part_keys[known];
        vals[*n] = v;
        (*n)++;
        if (last) break;
        p = end + 1;
    }
    return PAIMON_OK;
}

/* The selection of the 'partition' options (k=v text). */
typedef struct text_select {
    pm_partition_filter *f;
    char **texts;
    const char **kv;
    size_t n;
} text_select;

static void text_select_free(text_select *s) {
    for (size_t i = 0; s->texts && i < s->n; i++) free(s->texts[i]);
    free(s->texts);
    free(s->kv);
    free(s->f);
}

static int text_select_parse(const paimon_table *t, const pm_op_args *a, text_select *s, pm_err *e) {
    memset(s, 0, sizeof *s);
    int drop = !strcmp(a->op->name, "drop_partitions");
    if (t->n_part == 0)
        return pm_fail(e, PAIMON_MISUSE, "%s is not partitioned: no partition to %s", t->root, drop ? "drop" : "mark done");
    for (size_t i = 0; i < a->n_in; i++) s->n += find_opt(a->op, a->face, a->in[i].key) == PM_O_PARTITION;
    if (!s->n) return pm_fail(e, PAIMON_MISUSE, "%s: no 'partition' option (k=v[,k2=v2])", a->op->name);
    s->f = calloc(s->n, sizeof *s->f);
    s->texts = calloc(s->n, sizeof *s->texts);
    s->kv = calloc(2 * s->n * t->n_part, sizeof *s->kv);
    if (!s->f || !s->texts || !s->kv) return pm_nomem(e);
    int rc = PAIMON_OK;
    for (size_t i = 0, k = 0; !rc && i < a->n_in; i++) {
        if (find_opt(a->op, a->face, a->in[i].key) != PM_O_PARTITION) continue;
        if (!(s->texts[k] = pm_strdup(a->in[i].text))) return pm_nomem(e);
        s->f[k].keys = s->kv + 2 * k * t->n_part;
        s->f[k].values = s->f[k].keys + t->n_part;
        rc = parse_spec(t, s->texts[k], (const char **)s->f[k].keys, (const char **)s->f[k].values, &s->f[k].n, e);
        k++;
    }
    return rc;
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pm_rv *put_drop(pm_result *res, const paimon_table *t, int dry_run, const pm_drop_result *r, int64_t t0) {
    pm_rv *o = res->root;
    pm_rv_str(res, o, "table", t->root);
    pm_rv_bool(res, o, "dry_run", dry_run);
    if (r->snapshot_id) pm_rv_int(res, o, "snapshot_id", r->snapshot_id);
    if (r->base_snapshot_id) pm_rv_int(res, o, "base_snapshot_id", r->base_snapshot_id);
    pm_rv_int(res, o, "attempts", r->attempts);
    pm_rv_int(res, o, "commits", r->commits);
    pm_rv_int(res, o, "files", r->files);
    pm_rv_int(res, o, "rows", r->rows);
    pm_rv_int(res, o, "index_files", r->index_files);
    pm_rv_int(res, o, "bytes", r->bytes);
    pm_rv *keys = pm_rv_list(res, o, "partition_keys");
    for (size_t i = 0; i < t->n_part; i++) pm_rv_str(res, keys, NULL, t->part_keys[i]);
    pm_rv *parts = pm_rv_list(res, o, "partitions");
    for (size_t i = 0; i < r->n_parts && parts; i++) {
        const pm_part_stat *x = &r->parts[i];
        pm_rv *p = pm_rv_obj(res, parts, NULL);
        pm_rv_str(res, p, "path", x->path);
        pm_rv_bytes(res, p, "binary_row", x->part, x->part_len);
        pm_rv_int(res, p, "file_count", x->file_count);
        pm_rv_int(res, p, "record_count", x->record_count);
        pm_rv_int(res, p, "file_size_in_bytes", x->file_size);
        if (x->has_creation_time) pm_rv_int(res, p, "last_file_creation_time", x->last_creation_time);
        /* the script's JSON names, for the same result everywhere */
        pm_rv_int(res, p, "files", x->file_count);
        pm_rv_int(res, p, "rows", x->record_count);
        pm_rv_int(res, p, "bytes", x->file_size);
    }
    pm_rv *failures = pm_rv_list(res, o, "failures");
    if (r->refused) {
        pm_rv *f = pm_rv_obj(res, failures, NULL);
        pm_rv_str(res, f, "kind", "refused");
        pm_rv_str(res, f, "reason", r->refused);
    }
    pm_rv_str(res, o, "refused", r->refused);
    pm_rv_int(res, o, "duration_ms", mono_ms() - t0);
    return failures;
}

static int run_drop_partitions(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                               pm_err *e) {
    int64_t t0 = mono_ms();
    pm_drop_opts x;
    memset(&x, 0, sizeof x);
    x.max_attempts = (int)a->v[PM_O_MAX_ATTEMPTS];
    x.dry_run = (int)a->v[PM_O_DRY_RUN];
    x.commit_user = a->text[PM_O_COMMIT_USER];
    x.on_retry = h->on_retry;
    x.ud = h->retry_ud;
    text_select ts;
    memset(&ts, 0, sizeof ts);
    pm_part_select sel;
    int rc = PAIMON_OK;
    if (h->select) sel = *h->select;
    else if (!(rc = text_select_parse(t, a, &ts, e))) sel = (pm_part_select){ts.n, ts.f, 0, NULL, 0};
    pm_drop_result r;
    memset(&r, 0, sizeof r);
    /* an empty exact list (a policy chose nothing): an empty result */
    int nothing = h->select && sel.n_specs == 0 && sel.n_exact == 0 && sel.all == 0 && a->has[PM_O_EXACT];
    if (!rc && !nothing) rc = pm_drop_partitions(t, &sel, &x, &r, e);
    if (!rc) put_drop(res, t, x.dry_run, &r, t0);
    pm_drop_result_free(&r);
    text_select_free(&ts);
    return rc;
}

/* Java expire_partitions (NormalPartitionExpire; the Lua face runs
 * paimon.partition_expire, which a Lua policy can replace). */
static int run_expire_partitions(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                                 pm_err *e) {
    int64_t t0 = mono_ms();
    pm_part_expire_opts x;
    memset(&x, 0, sizeof x);
    if (a->text[PM_O_EXPIRATION_TIME]) {
        x.has_expiration = 1;
        if (pm_parse_duration_ms(a->text[PM_O_EXPIRATION_TIME], &x.expiration_ms, e)) {
            pm_err_prefix(e, "option '%s'", pm_op_key(PM_O_EXPIRATION_TIME, a->face));
            return PAIMON_MISUSE;
        }
    }
    x.strategy = a->text[PM_O_STRATEGY];
    x.formatter = a->text[PM_O_TS_FORMATTER];
    x.pattern = a->text[PM_O_TS_PATTERN];
    x.max_expires = a->has[PM_O_MAX_EXPIRES] ? (int)a->v[PM_O_MAX_EXPIRES] : 0;
    if (a->has[PM_O_NOW]) x.now_local_ms = a->v[PM_O_NOW];
    x.drop.dry_run = (int)a->v[PM_O_DRY_RUN];
    x.drop.max_attempts = (int)a->v[PM_O_MAX_ATTEMPTS];
    x.drop.commit_user = a->text[PM_O_COMMIT_USER];
    x.drop.on_retry = h->on_retry;
    x.drop.ud = h->retry_ud;
    pm_part_expire_result r;
    int rc = pm_expire_partitions(t, &x, &r, e);
    if (rc) return rc;
    pm_rv *failures = put_drop(res, t, x.drop.dry_run, &r.drop, t0);
    for (size_t i = 0; i < r.n_unparseable && failures; i++) {
        pm_rv *f = pm_rv_obj(res, failures, NULL);
        pm_rv_str(res, f, "kind", "unparseable");
        pm_rv_str(res, f, "path", r.unparseable[i].path);
        pm_rv_str(res, f, "reason", r.unparseable[i].reason);
    }
    pm_rv *o = res->root;
    pm_rv_str(res, o, "strategy", r.strategy);
    pm_rv_int(res, o, "expiration_ms", r.expiration_ms);
    pm_rv_int(res, o, "now", r.now);
    pm_rv_int(res, o, "expire_before", r.expire_before);
    pm_rv_int(res, o, "max_expires", r.max_expires);
    pm_rv_int(res, o, "checked", (int64_t)r.checked);
    pm_rv_int(res, o, "candidates", (int64_t)r.candidates);
    pm_rv_bool(res, o, "limited", r.limited);
    if (r.scanned_snapshot_id) pm_rv_int(res, o, "scanned_snapshot_id", r.scanned_snapshot_id);
    pm_rv_int(res, o, "unparseable", (int64_t)r.n_unparseable);
    pm_part_expire_result_free(&r);
    return PAIMON_OK;
}

/* Java mark_partition_done by partition.mark-done-action (success-file). */
static int run_mark_partition_done(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                                   pm_err *e) {
    text_select ts;
    memset(&ts, 0, sizeof ts);
    const pm_partition_filter *specs = NULL;
    size_t n = 0;
    int rc = PAIMON_OK;
    if (h->select) { specs = h->select->specs; n = h->select->n_specs; }
    else if (!(rc = text_select_parse(t, a, &ts, e))) { specs = ts.f; n = ts.n; }
    int dry_run = (int)a->v[PM_O_DRY_RUN];
    pm_mark_done_result r;
    memset(&r, 0, sizeof r);
    if (!rc) rc = pm_mark_partitions_done(t, specs, n, a->has[PM_O_NOW] ? a->v[PM_O_NOW] : 0, dry_run, &r, e);
    if (!rc) {
        pm_rv *o = res->root;
        pm_rv_str(res, o, "table", t->root);
        pm_rv_str(res, o, "action", r.actions);
        pm_rv_bool(res, o, "dry_run", dry_run);
        pm_rv *l = pm_rv_list(res, o, "partitions");
        for (size_t i = 0; i < r.n && l; i++) {
            pm_rv *it = pm_rv_obj(res, l, NULL);
            pm_rv_str(res, it, "partition", r.items[i].partition);
            pm_rv_str(res, it, "path", r.items[i].path);
            pm_rv_bool(res, it, "created", r.items[i].created);
            pm_rv_int(res, it, "creation_time", r.items[i].creation_time);
            pm_rv_int(res, it, "modification_time", r.items[i].modification_time);
        }
        pm_rv_int(res, o, "count", (int64_t)r.n);
    }
    pm_mark_done_result_free(&r);
    text_select_free(&ts);
    return rc;
}

/* ---- tags ------------------------------------------------------------- */

/* The tag names: the face's arguments (hooks) or the 'tag' options. */
static int tag_names(const pm_op_args *a, const pm_op_hooks *h, const char ***out, size_t *n, pm_err *e) {
    *out = NULL;
    *n = 0;
    if (h->has_tags) {
        *out = malloc((h->n_tags ? h->n_tags : 1) * sizeof **out);
        if (!*out) return pm_nomem(e);
        for (size_t i = 0; i < h->n_tags; i++) (*out)[i] = h->tags[i];
        *n = h->n_tags;
        return PAIMON_OK;
    }
    *out = malloc((a->n_in ? a->n_in : 1) * sizeof **out);
    if (!*out) return pm_nomem(e);
    for (size_t i = 0; i < a->n_in; i++)
        if (find_opt(a->op, a->face, a->in[i].key) == PM_O_TAG) (*out)[(*n)++] = a->in[i].text;
    return PAIMON_OK;
}

static int one_tag_name(const pm_op_args *a, const pm_op_hooks *h, const char **name, pm_err *e) {
    const char **v;
    size_t n;
    int rc = tag_names(a, h, &v, &n, e);
    if (rc) return rc;
    *name = n == 1 ? v[0] : NULL;
    free(v);
    if (n != 1) return pm_fail(e, PAIMON_MISUSE, "%s: give exactly one tag name, got %zu", a->op->name, n);
    return PAIMON_OK;
}

static int create_or_replace_tag(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, int replace,
                                 pm_result *res, pm_err *e) {
    const char *name;
    int rc = one_tag_name(a, h, &name, e);
    if (rc) return rc;
    pm_tag_create_opts x;
    memset(&x, 0, sizeof x);
    x.has_snapshot = a->has[PM_O_SNAPSHOT];
    x.snapshot_id = a->v[PM_O_SNAPSHOT];
    x.has_timestamp = a->has[PM_O_TIMESTAMP];
    x.timestamp_ms = a->v[PM_O_TIMESTAMP];
    x.has_watermark = a->has[PM_O_WATERMARK];
    x.watermark = a->v[PM_O_WATERMARK];
    x.replace = replace;
    x.dry_run = (int)a->v[PM_O_DRY_RUN];
    if (a->has[PM_O_NOW]) x.now_local_ms = pm_tag_local_ms(a->v[PM_O_NOW]);
    if (a->has[PM_O_TIME_RETAINED]) {
        x.has_time_retained = 1;
        if ((rc = pm_parse_duration_ms(a->text[PM_O_TIME_RETAINED], &x.time_retained_ms, e))) {
            pm_err_prefix(e, "option '%s'", pm_op_key(PM_O_TIME_RETAINED, a->face));
            return PAIMON_MISUSE;
        }
    }
    pm_tag_created c;
    if ((rc = pm_tag_create(t, name, &x, &c, e))) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "tag", name);
    pm_rv_str(res, o, "branch", t->branch);
    pm_rv_int(res, o, "snapshot_id", c.snapshot_id);
    pm_rv_int(res, o, "commit_time", c.commit_time);
    if (c.has_watermark) pm_rv_int(res, o, "watermark", c.watermark);
    if (replace) pm_rv_int(res, o, "previous_snapshot_id", c.previous_snapshot_id);
    pm_rv_bool(res, o, "replaced", replace);
    if (x.has_time_retained) pm_rv_int(res, o, "time_retained_ms", x.time_retained_ms);
    pm_rv_str(res, o, "path", c.path);
    pm_rv_bool(res, o, "dry_run", x.dry_run);
    return PAIMON_OK;
}

static int run_create_tag(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    return create_or_replace_tag(t, a, h, 0, res, e);
}

/* Java replace_tag (TagManager.replaceTag): the tag's file is rewritten;
 * the files only its old snapshot held stay for orphan cleaning. */
static int run_replace_tag(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    return create_or_replace_tag(t, a, h, 1, res, e);
}

static int run_rename_tag(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    const char *from, *to = h->new_name ? h->new_name : a->text[PM_O_NEW_NAME];
    int rc = one_tag_name(a, h, &from, e);
    if (rc) return rc;
    if (!to) return pm_fail(e, PAIMON_MISUSE, "rename_tag: no new name ('new-name')");
    int dry = (int)a->v[PM_O_DRY_RUN];
    if ((rc = dry ? pm_tag_rename_check(t, from, to, e) : pm_tag_rename(t, from, to, e))) return rc;
    pm_rv_bool(res, res->root, "dry_run", dry);
    pm_rv_str(res, res->root, "from", from);
    pm_rv_str(res, res->root, "to", to);
    pm_rv_str(res, res->root, "branch", t->branch);
    return PAIMON_OK;
}

static int delete_and_put(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, const char **names, size_t n,
                          pm_result *res, pm_err *e) {
    pm_tag_delete_opts x = {(int)a->v[PM_O_THREADS], (int)a->v[PM_O_DRY_RUN], h->progress, h->progress_ud};
    pm_tag_delete_result r;
    int rc = pm_tags_delete(t, names, n, &x, &r, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    pm_rv *list = pm_rv_list(res, o, "tags");
    for (size_t i = 0; i < n; i++) pm_rv_str(res, list, NULL, names[i]);
    pm_rv_int(res, o, "deleted_tags", (int64_t)r.n_tags);
    put_clean(res, o, &r.clean);
    pm_clean_result_free(&r.clean);
    return PAIMON_OK;
}

/* delete_tags with force: only the tag files go, none is read (the way out
 * of an unreadable tag, which otherwise blocks every deletion); what they
 * alone held is left to orphan cleaning. A dry run plans the files. */
static int force_delete_tags(paimon_table *t, const pm_op_args *a, const char **names, size_t n, pm_result *res,
                             pm_err *e) {
    int dry = (int)a->v[PM_O_DRY_RUN];
    pm_clean_result c;
    memset(&c, 0, sizeof c);
    c.dry_run = dry;
    pm_deleter *d = pm_deleter_new();
    pm_buf p = {0};
    int rc = d ? PAIMON_OK : pm_nomem(e);
    for (size_t i = 0; !rc && i < n; i++) {
        rc = pm_tag_name_check("tag", names[i], e);
        p.len = 0;
        if (!rc && (pm_buf_printf(&p, "%s/tag/tag-%s", t->branch_root, names[i]) || pm_buf_cstr(&p))) rc = pm_nomem(e);
        int ex = 0;
        if (!rc) rc = pm_io_exists(t->io, (char *)p.data, &ex, e);
        if (!rc && !ex) rc = pm_fail(e, PAIMON_NOTFOUND, "tag '%s' doesn't exist (%s)", names[i], (char *)p.data);
        if (!rc) rc = dry ? pm_deleter_add(d, (char *)p.data, PM_K_TAG, e)
                          : pm_clean_remove_one(t->io, (char *)p.data, PM_K_TAG, &c, e);
    }
    pm_clean_opts co = {1, 1, 0, NULL, NULL, 0};
    if (!rc && dry) rc = pm_deleter_run(d, t->io, t->root, &co, "tags", &c, e);
    pm_deleter_free(d);
    pm_buf_free(&p);
    if (!rc) {
        pm_rv *o = res->root;
        pm_rv *list = pm_rv_list(res, o, "tags");
        for (size_t i = 0; i < n; i++) pm_rv_str(res, list, NULL, names[i]);
        pm_rv_int(res, o, "deleted_tags", dry ? 0 : (int64_t)n);
        pm_rv_bool(res, o, "forced", 1);
        put_clean(res, o, &c);
    }
    pm_clean_result_free(&c);
    return rc;
}

static int run_delete_tags(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    const char **names;
    size_t n;
    int rc = tag_names(a, h, &names, &n, e);
    if (!rc && n == 0) rc = pm_fail(e, PAIMON_MISUSE, "delete_tags: no tag name given");
    if (!rc && a->v[PM_O_FORCE]) rc = force_delete_tags(t, a, names, n, res, e);
    else if (!rc) rc = delete_and_put(t, a, h, names, n, res, e);
    free(names);
    return rc;
}

#define epoch_of_local pm_tag_epoch_of_local

/* Java's verdict per tag (TagTimeExpire, tag.num-retained-max), then the
 * deletion of those tags, or of the policy's choice (hooks). */
static int run_expire_tags(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    pm_tag_expire_opts x;
    memset(&x, 0, sizeof x);
    if (a->has[PM_O_NOW]) x.now_local_ms = pm_tag_local_ms(a->v[PM_O_NOW]);
    x.has_older_than = a->has[PM_O_OLDER_THAN];
    x.older_than_ms = a->v[PM_O_OLDER_THAN];
    x.num_retained_max = a->has[PM_O_NUM_RETAINED_MAX] ? (int)a->v[PM_O_NUM_RETAINED_MAX] : -1;
    pm_tag_state *v = NULL;
    size_t n = 0;
    int rc = pm_tags_expire_states(t, &x, &v, &n, e);
    if (rc) return rc;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    size_t k = 0;
    if (!names) rc = pm_nomem(e);
    if (!rc && h->has_tags) {
        for (size_t i = 0; i < h->n_tags; i++) names[k++] = h->tags[i];
        if (h->n_tags > n) rc = pm_fail(e, PAIMON_MISUSE, "expire_tags: the policy chose more tags than exist");
    } else if (!rc) {
        for (size_t i = 0; i < n; i++)
            if (v[i].expire_reason) names[k++] = v[i].name;
    }
    pm_rv *tags = pm_rv_list(res, res->root, "candidates");
    for (size_t i = 0; !rc && i < n && tags; i++) {
        pm_rv *it = pm_rv_obj(res, tags, NULL);
        pm_rv_str(res, it, "name", v[i].name);
        pm_rv_int(res, it, "snapshot_id", v[i].snapshot_id);
        pm_rv_int(res, it, "commit_time", v[i].commit_time);
        /* tagCreateTime is local wall clock (Java's LocalDateTime): shown as epoch ms */
        if (v[i].has_create_time) pm_rv_int(res, it, "create_time", epoch_of_local(v[i].create_time));
        if (v[i].has_time_retained) pm_rv_int(res, it, "time_retained_ms", v[i].time_retained_ms);
        pm_rv_bool(res, it, "auto", v[i].auto_tag);
        pm_rv_bool(res, it, "java_expires", v[i].expire_reason != NULL);
        pm_rv_str(res, it, "reason", v[i].expire_reason);
    }
    if (!rc && k > 0) rc = delete_and_put(t, a, h, names, k, res, e);
    if (!rc && k == 0) {
        pm_rv_list(res, res->root, "tags");
        pm_rv_int(res, res->root, "deleted_tags", 0);
        pm_clean_result none;
        memset(&none, 0, sizeof none);
        none.dry_run = (int)a->v[PM_O_DRY_RUN];
        put_clean(res, res->root, &none);
    }
    free(names);
    pm_tag_states_free(v, n);
    return rc;
}

static void put_auto_items(pm_result *res, const char *key, const pm_tag_auto_item *v, size_t n) {
    pm_rv *list = pm_rv_list(res, res->root, key);
    for (size_t i = 0; i < n && list; i++) {
        pm_rv *it = pm_rv_obj(res, list, NULL);
        pm_rv_str(res, it, "tag", v[i].name);
        pm_rv_int(res, it, "snapshot_id", v[i].snapshot_id);
        pm_rv_int(res, it, "commit_time", v[i].commit_time);
    }
}

/* TagAutoCreation / TagBatchCreation by the table's tag.* options: the
 * tags created, the periods whose name was taken, the automatic tags
 * removed over tag.num-retained-max (and their files, as delete_tags). */
static int run_auto_tags(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    pm_tag_auto_opts x;
    memset(&x, 0, sizeof x);
    x.dry_run = (int)a->v[PM_O_DRY_RUN];
    x.threads = (int)a->v[PM_O_THREADS];
    if (a->has[PM_O_NOW]) x.now_local_ms = pm_tag_local_ms(a->v[PM_O_NOW]);
    x.progress = h->progress;
    x.progress_ud = h->progress_ud;
    pm_tag_auto_result r;
    int rc = pm_tags_auto(t, &x, &r, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "mode", pm_tag_auto_mode_name(r.mode));
    pm_rv_str(res, o, "branch", t->branch);
    put_auto_items(res, "created", r.created, r.n_created);
    put_auto_items(res, "existing", r.existing, r.n_existing);
    pm_rv *list = pm_rv_list(res, o, "expired");
    for (size_t i = 0; i < r.n_expired && list; i++) pm_rv_str(res, list, NULL, r.expired[i]);
    pm_rv_int(res, o, "skipped_over_max", (int64_t)r.n_skipped);
    pm_rv_int(res, o, "deleted_tags", (int64_t)r.deletion.n_tags);
    r.deletion.clean.dry_run = x.dry_run;
    put_clean(res, o, &r.deletion.clean);
    pm_tag_auto_result_free(&r);
    return PAIMON_OK;
}

/* ---- rollback and consumers ------------------------------------------------ */

static int run_rollback(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    pm_rollback_opts x;
    memset(&x, 0, sizeof x);
    if (a->has[PM_O_TO_SNAPSHOT]) x.to_snapshot = a->v[PM_O_TO_SNAPSHOT];
    x.to_tag = a->text[PM_O_TO_TAG];
    x.has_timestamp = a->has[PM_O_TO_TIMESTAMP];
    x.to_timestamp_ms = a->v[PM_O_TO_TIMESTAMP];
    x.has_watermark = a->has[PM_O_TO_WATERMARK];
    x.to_watermark = a->v[PM_O_TO_WATERMARK];
    if (a->has[PM_O_TO_SNAPSHOT] + (x.to_tag != NULL) + x.has_timestamp + x.has_watermark != 1)
        return pm_fail(e, PAIMON_MISUSE, "rollback: give exactly one of '%s', '%s', '%s' or '%s'",
                       pm_op_key(PM_O_TO_SNAPSHOT, a->face), pm_op_key(PM_O_TO_TAG, a->face),
                       pm_op_key(PM_O_TO_TIMESTAMP, a->face), pm_op_key(PM_O_TO_WATERMARK, a->face));
    x.as_latest = (int)a->v[PM_O_AS_LATEST];
    x.purge_files = (int)a->v[PM_O_PURGE_FILES];
    if (x.as_latest && x.purge_files)
        return pm_fail(e, PAIMON_MISUSE, "rollback: '%s' deletes nothing; '%s' does not go with it",
                       pm_op_key(PM_O_AS_LATEST, a->face), pm_op_key(PM_O_PURGE_FILES, a->face));
    x.dry_run = (int)a->v[PM_O_DRY_RUN];
    x.threads = (int)a->v[PM_O_THREADS];
    x.commit_user = a->text[PM_O_COMMIT_USER];
    x.progress = h->progress;
    x.progress_ud = h->progress_ud;
    pm_rollback_result rr;
    int rc = pm_rollback(t, &x, &rr, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "table", t->root);
    pm_rv_bool(res, o, "as_latest", x.as_latest);
    pm_rv_int(res, o, "target", rr.target);
    pm_rv_int(res, o, "previous_latest", rr.previous_latest);
    pm_rv_int(res, o, "latest", rr.new_latest);
    if (x.as_latest) {
        pm_rv_bool(res, o, "dry_run", x.dry_run);
        pm_rv_int(res, o, "added", rr.added);
        pm_rv_int(res, o, "removed", rr.deleted);
        pm_rv_int(res, o, "index_added", rr.index_added);
        pm_rv_int(res, o, "index_removed", rr.index_deleted);
        if (rr.protection_tag) pm_rv_str(res, o, "protection_tag", rr.protection_tag);
        pm_rv_int(res, o, "files", 0);
    } else {
        /* metadata only (Java 1.2+) or with the files (purge-files) */
        pm_rv_bool(res, o, "purge_files", x.purge_files);
        put_clean(res, o, &rr.clean);
        pm_rv_bool(res, o, "recreated", rr.recreated);
        pm_rv *l = pm_rv_list(res, o, "snapshots");
        for (size_t i = 0; i < rr.n_snapshots; i++) pm_rv_int(res, l, NULL, rr.snapshots[i]);
        l = pm_rv_list(res, o, "tags");
        for (size_t i = 0; i < rr.n_tags; i++) pm_rv_str(res, l, NULL, rr.tags[i]);
        l = pm_rv_list(res, o, "changelogs");
        for (size_t i = 0; i < rr.n_changelogs; i++) pm_rv_int(res, l, NULL, rr.changelogs[i]);
        pm_rv_int(res, o, "unreadable", rr.unreadable);
        pm_rv_int(res, o, "consumers_ahead", rr.consumers_ahead);
    }
    pm_rollback_result_free(&rr);
    return PAIMON_OK;
}

/* Java's purge_files (pm_purge_files). */
static int run_purge_files(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    pm_purge_opts x = {(int)a->v[PM_O_THREADS], (int)a->v[PM_O_DRY_RUN], a->text[PM_O_COMMIT_USER], h->progress,
                       h->progress_ud};
    pm_purge_result pr;
    int rc = pm_purge_files(t, &x, &pr, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "table", t->root);
    pm_rv_int(res, o, "previous_latest", pr.previous_latest);
    pm_rv_int(res, o, "latest", pr.new_latest);
    pm_rv_int(res, o, "truncated", pr.truncated);
    pm_rv_int(res, o, "index_truncated", pr.index_truncated);
    put_paths(res, o, "branches", &pr.branches);
    put_paths(res, o, "tags", &pr.tags);
    put_paths(res, o, "consumers", &pr.consumers);
    pm_rv_int(res, o, "snapshots", (int64_t)pr.n_snapshots);
    pm_rv_int(res, o, "changelogs", (int64_t)pr.n_changelogs);
    put_clean(res, o, &pr.clean);
    pm_purge_result_free(&pr);
    return PAIMON_OK;
}

static void put_consumer(pm_result *res, pm_rv *list, const pm_consumer_info *c) {
    pm_rv *it = pm_rv_obj(res, list, NULL);
    pm_rv_str(res, it, "id", c->id);
    pm_rv_int(res, it, "next_snapshot", c->next_snapshot);
    pm_rv_int(res, it, "mtime", c->mtime_ms);
}

static int run_consumers(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    (void)a;
    (void)h;
    pm_consumer_info *v = NULL;
    size_t n = 0;
    int rc = pm_consumers_list(t, &v, &n, e);
    if (rc) return rc;
    pm_rv *l = pm_rv_list(res, res->root, "consumers");
    for (size_t i = 0; i < n; i++) put_consumer(res, l, &v[i]);
    pm_rv_int(res, res->root, "count", (int64_t)n);
    pm_consumer_infos_free(v, n);
    return PAIMON_OK;
}

static int need_id(const pm_op_args *a, pm_err *e) {
    if (!a->text[PM_O_CONSUMER_ID])
        return pm_fail(e, PAIMON_MISUSE, "%s: option '%s' (the consumer id) is required", a->op->name,
                       pm_op_key(PM_O_CONSUMER_ID, a->face));
    return PAIMON_OK;
}

static int run_reset_consumer(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                              pm_err *e) {
    (void)h;
    int rc = need_id(a, e);
    if (rc) return rc;
    if (!a->has[PM_O_NEXT_SNAPSHOT])
        return pm_fail(e, PAIMON_MISUSE, "reset_consumer: option '%s' is required", pm_op_key(PM_O_NEXT_SNAPSHOT, a->face));
    const char *id = a->text[PM_O_CONSUMER_ID];
    /* a snapshot that exists (or a long-lived changelog of it), or the one
     * after the latest (a consumer waiting for the next commit): never an
     * id a consumer could not start from (issue 24) */
    int64_t want = a->v[PM_O_NEXT_SNAPSHOT], earliest = 0, latest = 0;
    rc = pm_snapshot_latest_id(t->io, t->branch_root, &latest, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; latest = 0; earliest = 1; }
    else if (!rc) rc = pm_snapshot_earliest_id(t->io, t->branch_root, &earliest, e);
    if (rc) return rc;
    if (want > latest + 1)
        return pm_fail(e, PAIMON_MISUSE, "reset_consumer: snapshot %lld is past the latest snapshot %lld (at most %lld: "
                       "the next one)", (long long)want, (long long)latest, (long long)latest + 1);
    if (want < earliest) {
        pm_buf p = {0};
        int ex = 0;
        if (pm_buf_printf(&p, "%s/changelog/changelog-%lld", t->branch_root, (long long)want) || pm_buf_cstr(&p))
            rc = pm_nomem(e);
        else rc = pm_io_exists(t->io, (char *)p.data, &ex, e);
        pm_buf_free(&p);
        if (rc) return rc;
        if (!ex)
            return pm_fail(e, PAIMON_MISUSE, "reset_consumer: snapshot %lld no longer exists (the earliest is %lld, "
                           "and no changelog of it is kept)", (long long)want, (long long)earliest);
    }
    pm_consumer before;
    int had = pm_consumer_read(t->io, t->branch_root, id, &before, e);
    if (had == PAIMON_NOTFOUND) pm_err_clear(e);
    else if (had == PAIMON_MISUSE) return had;
    /* an unreadable old file is replaced: reset is how an operator repairs it */
    else if (had) pm_err_clear(e);
    int dry = (int)a->v[PM_O_DRY_RUN];
    if (dry && a->v[PM_O_NEXT_SNAPSHOT] < 1)
        return pm_fail(e, PAIMON_MISUSE, "consumer '%s': next snapshot must be at least 1, got %lld", id,
                       (long long)a->v[PM_O_NEXT_SNAPSHOT]);
    if (!dry && (rc = pm_consumer_reset(t, id, a->v[PM_O_NEXT_SNAPSHOT], e))) return rc;
    pm_rv_bool(res, res->root, "dry_run", dry);
    pm_rv_str(res, res->root, "id", id);
    pm_rv_int(res, res->root, "next_snapshot", a->v[PM_O_NEXT_SNAPSHOT]);
    if (had == PAIMON_OK) pm_rv_int(res, res->root, "previous", before.next_snapshot);
    return PAIMON_OK;
}

static int run_delete_consumer(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                               pm_err *e) {
    (void)h;
    int rc = need_id(a, e);
    int dry = (int)a->v[PM_O_DRY_RUN];
    if (!rc && dry) {   /* the same check as the real run: the consumer must be there */
        pm_consumer c;
        rc = pm_consumer_read(t->io, t->branch_root, a->text[PM_O_CONSUMER_ID], &c, e);
        if (rc == PAIMON_CORRUPT) { pm_err_clear(e); rc = PAIMON_OK; }   /* an unreadable one is deleted too */
        else if (rc == PAIMON_NOTFOUND)
            rc = pm_fail(e, PAIMON_NOTFOUND, "consumer '%s' not found", a->text[PM_O_CONSUMER_ID]);
    } else if (!rc) {
        rc = pm_consumer_delete(t, a->text[PM_O_CONSUMER_ID], e);
    }
    if (rc) return rc;
    pm_rv_bool(res, res->root, "dry_run", dry);
    pm_rv_str(res, res->root, "id", a->text[PM_O_CONSUMER_ID]);
    pm_rv_bool(res, res->root, "deleted", !dry);
    return PAIMON_OK;
}

static int run_expire_consumers(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                                pm_err *e) {
    (void)h;
    int64_t ms = -1;
    const char *d = a->text[PM_O_EXPIRATION];
    if (d && pm_parse_duration_ms(d, &ms, e)) {
        char why[sizeof e->msg];
        snprintf(why, sizeof why, "%s", e->msg);
        return pm_fail(e, PAIMON_MISUSE, "option '%s': %s", pm_op_key(PM_O_EXPIRATION, a->face), why);
    }
    pm_consumer_expire_result cr;
    int rc = pm_consumers_expire(t, ms, a->has[PM_O_NOW] ? a->v[PM_O_NOW] : 0, (int)a->v[PM_O_DRY_RUN], &cr, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    pm_rv_bool(res, o, "dry_run", (int)a->v[PM_O_DRY_RUN]);
    pm_rv_int(res, o, "cutoff", cr.cutoff_ms);
    pm_rv *l = pm_rv_list(res, o, "expired");
    for (size_t i = 0; i < cr.n_expired; i++) put_consumer(res, l, &cr.expired[i]);
    pm_rv_int(res, o, "count", (int64_t)cr.n_expired);
    pm_rv_int(res, o, "kept", cr.kept);
    pm_consumer_expire_result_free(&cr);
    return PAIMON_OK;
}

/* Java clear_consumers (ConsumerManager.clearConsumers). */
static int run_clear_consumers(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                               pm_err *e) {
    (void)h;
    int dry_run = (int)a->v[PM_O_DRY_RUN];
    pm_consumer_clear_result cr;
    int rc = pm_consumers_clear(t, a->text[PM_O_INCLUDE], a->text[PM_O_EXCLUDE], dry_run, &cr, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "branch", t->branch);
    pm_rv_str(res, o, "include", a->text[PM_O_INCLUDE]);
    pm_rv_str(res, o, "exclude", a->text[PM_O_EXCLUDE]);
    pm_rv_bool(res, o, "dry_run", dry_run);
    pm_rv *l = pm_rv_list(res, o, "cleared");
    for (size_t i = 0; i < cr.n_cleared && l; i++) pm_rv_str(res, l, NULL, cr.cleared[i]);
    pm_rv_int(res, o, "count", (int64_t)cr.n_cleared);
    pm_rv_int(res, o, "kept", cr.kept);
    pm_consumer_clear_result_free(&cr);
    return PAIMON_OK;
}

/* Changelog expiration (ExpireChangelogImpl's rule, pm_changelog.h). */
static int run_expire_changelogs(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res,
                                 pm_err *e) {
    pm_changelog_expire_opts x;
    memset(&x, 0, sizeof x);
    if (a->has[PM_O_RETAIN_MIN]) x.retain_min = (int)a->v[PM_O_RETAIN_MIN];
    if (a->has[PM_O_RETAIN_MAX]) x.retain_max = (int)a->v[PM_O_RETAIN_MAX];
    if (a->has[PM_O_MAX_DELETES]) x.max_deletes = (int)a->v[PM_O_MAX_DELETES];
    x.has_older_than = a->has[PM_O_OLDER_THAN];
    x.older_than_ms = a->v[PM_O_OLDER_THAN];
    x.threads = (int)a->v[PM_O_THREADS];
    if (a->has[PM_O_NOW]) x.now_ms = a->v[PM_O_NOW];
    x.dry_run = (int)a->v[PM_O_DRY_RUN];
    x.progress = h->progress;
    x.progress_ud = h->progress_ud;
    pm_changelog_expire_result cr;
    int rc = pm_expire_changelogs(t, &x, &cr, e);
    if (rc) return rc;
    pm_rv *o = res->root;
    const pm_changelog_range *g = &cr.range;
    put_clean(res, o, &cr.clean);
    pm_rv_int(res, o, "expired", cr.expired);
    if (cr.expired > 0) {
        pm_rv *range = pm_rv_list(res, o, "range");
        pm_rv_int(res, range, NULL, g->begin);
        pm_rv_int(res, range, NULL, g->end - 1);
    }
    pm_rv *plan = pm_rv_obj(res, o, "plan");
    pm_rv_int(res, plan, "earliest", g->earliest);
    pm_rv_int(res, plan, "latest", g->latest);
    pm_rv_int(res, plan, "earliest_snapshot", g->earliest_snapshot);
    pm_rv_int(res, plan, "latest_snapshot", g->latest_snapshot);
    pm_rv_int(res, plan, "retain_min", g->retain_min);
    pm_rv_int(res, plan, "retain_max", g->retain_max);
    pm_rv_int(res, plan, "max_deletes", g->max_deletes);
    pm_rv_int(res, plan, "older_than", g->older_than_ms);
    pm_rv_int(res, plan, "now", g->now_ms);
    if (g->n_consumers > 0) pm_rv_int(res, plan, "consumer_min", g->consumer_min);
    pm_rv_int(res, plan, "begin", g->begin);
    pm_rv_int(res, plan, "end", g->end);
    pm_rv_str(res, plan, "capped_by", g->capped_by);
    pm_rv_str(res, o, "capped_by", g->capped_by);
    pm_clean_result_free(&cr.clean);
    return PAIMON_OK;
}

/* ---- branches (Java's FileSystemBranchManager, pm_branches.h) ------------ */

static int branch_name_of(const pm_op_args *a, const pm_op_hooks *h, const char **name, pm_err *e) {
    *name = h->branch_name ? h->branch_name : a->text[PM_O_BRANCH_NAME];
    if (!*name)
        return pm_fail(e, PAIMON_MISUSE, "%s: no branch name ('%s')", a->op->name,
                       a->face == PM_FACE_LUA ? "the first argument" : "branch");
    return PAIMON_OK;
}

static void put_paths(pm_result *res, pm_rv *o, const char *key, const pm_strv *v) {
    pm_rv *l = pm_rv_list(res, o, key);
    for (size_t i = 0; i < v->n && l; i++) pm_rv_str(res, l, NULL, v->v[i]);
}

static int run_branches(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    (void)a;
    (void)h;
    pm_branch_info *v = NULL;
    size_t n = 0;
    int rc = pm_branches_list(t, &v, &n, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }   /* no branch directory: none */
    if (rc) return rc;
    pm_rv *l = pm_rv_list(res, res->root, "branches");
    for (size_t i = 0; i < n && l; i++) {
        pm_rv *it = pm_rv_obj(res, l, NULL);
        pm_rv_str(res, it, "name", v[i].name);
        pm_rv_int(res, it, "create_time", v[i].create_time);
        /* 0: the branch has no snapshot (created without a tag) */
        pm_rv_int(res, it, "earliest_snapshot", v[i].earliest_snapshot);
        pm_rv_int(res, it, "latest_snapshot", v[i].latest_snapshot);
        pm_rv_int(res, it, "tags", (int64_t)v[i].n_tags);
    }
    pm_rv_int(res, res->root, "count", (int64_t)n);
    pm_branch_infos_free(v, n);
    return PAIMON_OK;
}

static int run_create_branch(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    const char *name;
    int rc = branch_name_of(a, h, &name, e);
    if (rc) return rc;
    const char *from_tag = a->text[PM_O_FROM_TAG];
    int dry_run = (int)a->v[PM_O_DRY_RUN];
    pm_branch_created c;
    if ((rc = pm_branch_create(t, name, from_tag, dry_run, &c, e))) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "branch", name);
    pm_rv_str(res, o, "from_tag", from_tag);
    pm_rv_int(res, o, "snapshot_id", c.snapshot_id);
    pm_rv_int(res, o, "schema_id", c.schema_id);
    pm_rv_int(res, o, "files", (int64_t)c.n_files);
    pm_rv_str(res, o, "path", c.path);
    pm_rv_bool(res, o, "dry_run", dry_run);
    return PAIMON_OK;
}

static int run_delete_branch(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    const char *name;
    int rc = branch_name_of(a, h, &name, e);
    if (rc) return rc;
    /* its own files would go while this handle reads them */
    if (!strcmp(name, t->branch))
        return pm_fail(e, PAIMON_MISUSE, "delete_branch: '%s' is the branch this table is opened on", name);
    pm_branch_delete_opts x = {(int)a->v[PM_O_THREADS], (int)a->v[PM_O_DRY_RUN], h->progress, h->progress_ud};
    pm_branch_delete_result r;
    if ((rc = pm_branch_delete(t, name, &x, &r, e))) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "branch", name);
    pm_rv_int(res, o, "branch_files", (int64_t)r.n_branch_files);
    put_clean(res, o, &r.clean);
    pm_clean_result_free(&r.clean);
    return PAIMON_OK;
}

/* Java rename_branch (FileSystemBranchManager.renameBranch). */
static int run_rename_branch(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    const char *from, *to = h->new_name ? h->new_name : a->text[PM_O_NEW_NAME];
    int rc = branch_name_of(a, h, &from, e);
    if (rc) return rc;
    if (!to)
        return pm_fail(e, PAIMON_MISUSE, "rename_branch: no new name (%s)",
                       a->face == PM_FACE_LUA ? "the second argument" : "'new-name'");
    int dry_run = (int)a->v[PM_O_DRY_RUN];
    pm_branch_renamed r;
    if ((rc = pm_branch_rename(t, from, to, dry_run, &r, e))) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "from", from);
    pm_rv_str(res, o, "to", to);
    pm_rv_bool(res, o, "dry_run", dry_run);
    pm_rv_int(res, o, "files", (int64_t)r.n_files);
    pm_rv_str(res, o, "path", r.path);
    put_paths(res, o, "moved_paths", &r.moved);
    pm_branch_renamed_free(&r);
    return PAIMON_OK;
}

static int run_fast_forward(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    const char *name;
    int rc = branch_name_of(a, h, &name, e);
    if (rc) return rc;
    pm_branch_ff_result r;
    if ((rc = pm_branch_fast_forward(t, name, (int)a->v[PM_O_DRY_RUN], &r, e))) return rc;
    pm_rv *o = res->root;
    pm_rv_str(res, o, "branch", name);
    pm_rv_str(res, o, "into", t->branch);
    pm_rv_bool(res, o, "dry_run", r.dry_run);
    pm_rv_int(res, o, "earliest", r.earliest_id);
    pm_rv_int(res, o, "earliest_schema_id", r.earliest_schema_id);
    pm_rv_int(res, o, "latest", r.latest_id);
    pm_rv *d = pm_rv_obj(res, o, "dropped");
    pm_rv_int(res, d, "snapshots", (int64_t)r.deleted_snapshots);
    pm_rv_int(res, d, "schemas", (int64_t)r.deleted_schemas);
    pm_rv_int(res, d, "tags", (int64_t)r.deleted_tags);
    pm_rv *c = pm_rv_obj(res, o, "taken");
    pm_rv_int(res, c, "snapshots", (int64_t)r.copied_snapshots);
    pm_rv_int(res, c, "schemas", (int64_t)r.copied_schemas);
    pm_rv_int(res, c, "tags", (int64_t)r.copied_tags);
    put_paths(res, o, "dropped_paths", &r.dropped);
    put_paths(res, o, "taken_paths", &r.taken);
    put_clean(res, o, &r.clean);
    pm_branch_ff_result_free(&r);
    return PAIMON_OK;
}

/* ---- upkeep (pm_upkeep.h) ------------------------------------------------ */

/* maintain.lua / paimon_upkeep: one run of the commit's upkeep, partitions
 * checked whatever the interval (a one-shot run has no last check), also
 * on a write-only table (whose writers leave it to this). */
static int run_upkeep(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result *res, pm_err *e) {
    pm_upkeep_opts x;
    memset(&x, 0, sizeof x);
    x.dry_run = (int)a->v[PM_O_DRY_RUN];
    x.threads = (int)a->v[PM_O_THREADS];
    if (a->has[PM_O_NOW]) x.now_ms = a->v[PM_O_NOW];
    x.force_partition_check = 1;
    x.ignore_write_only = 1;
    x.step = h->upkeep_step;
    x.step_ud = h->upkeep_ud;
    pm_result *r = NULL;
    int rc = pm_upkeep_run(t, &x, &r, e);
    if (rc) return rc;
    for (const pm_rv *c = r->root->first; c; c = c->next) pm_rv_copy(res, res->root, NULL, c);
    pm_result_free(r);
    return PAIMON_OK;
}

/* ---- the table of operations ------------------------------------------ */

static const pm_opt_id expire_range_opts[] = {
    PM_O_RETAIN_MIN, PM_O_RETAIN_MAX, PM_O_OLDER_THAN, PM_O_OLDER_THAN_MS, PM_O_MAX_DELETES, PM_O_KEEP_FROM,
    PM_O_UNTIL_ALIAS, PM_O_THREADS, PM_O_DRY_RUN, PM_O_CLEAN_EMPTY_DIRS, PM_O_NOW, PM_O_PROGRESS,
    PM_O_PATHS_HANDLE, PM_O__N};   /* the policy runner hands expire_snapshots' options to both */
static const pm_opt_id expire_opts[] = {
    PM_O_RETAIN_MIN, PM_O_RETAIN_MAX, PM_O_OLDER_THAN, PM_O_OLDER_THAN_MS, PM_O_MAX_DELETES, PM_O_KEEP_FROM,
    PM_O_UNTIL_ALIAS, PM_O_THREADS, PM_O_DRY_RUN, PM_O_CLEAN_EMPTY_DIRS, PM_O_NOW, PM_O_PROGRESS, PM_O_POLICY,
    PM_O_PATHS_HANDLE, PM_O__N};
static const pm_opt_id orphan_opts[] = {PM_O_OLDER_THAN, PM_O_OLDER_THAN_MS, PM_O_THREADS, PM_O_DRY_RUN, PM_O_NOW,
                                        PM_O_ALLOW_YOUNG_CUTOFF, PM_O_PROGRESS, PM_O_PATHS_HANDLE, PM_O__N};
static const pm_opt_id verify_opts[] = {PM_O_ALL_SNAPSHOTS, PM_O_THREADS, PM_O_PROGRESS, PM_O__N};
static const pm_opt_id drop_opts[] = {PM_O_PARTITION, PM_O_MAX_ATTEMPTS, PM_O_COMMIT_USER, PM_O_DRY_RUN,
                                      PM_O_EXACT, PM_O_ON_RETRY, PM_O__N};

static const pm_opt_id expire_partitions_opts[] = {PM_O_EXPIRATION_TIME, PM_O_STRATEGY, PM_O_TS_FORMATTER,
                                                   PM_O_TS_PATTERN, PM_O_MAX_EXPIRES, PM_O_DRY_RUN, PM_O_NOW,
                                                   PM_O_MAX_ATTEMPTS, PM_O_COMMIT_USER, PM_O__N};
static const pm_opt_id mark_done_opts[] = {PM_O_PARTITION, PM_O_DRY_RUN, PM_O_NOW, PM_O__N};
static const pm_opt_id create_tag_opts[] = {PM_O_TAG, PM_O_SNAPSHOT, PM_O_TIMESTAMP, PM_O_WATERMARK,
                                            PM_O_TIME_RETAINED, PM_O_DRY_RUN, PM_O_NOW, PM_O__N};
static const pm_opt_id replace_tag_opts[] = {PM_O_TAG, PM_O_SNAPSHOT, PM_O_TIME_RETAINED, PM_O_DRY_RUN, PM_O_NOW,
                                             PM_O__N};
static const pm_opt_id delete_tags_opts[] = {PM_O_TAG, PM_O_THREADS, PM_O_DRY_RUN, PM_O_FORCE, PM_O_PROGRESS, PM_O_PATHS_HANDLE,
                                             PM_O__N};
static const pm_opt_id rename_tag_opts[] = {PM_O_TAG, PM_O_NEW_NAME, PM_O_DRY_RUN, PM_O__N};
static const pm_opt_id expire_tags_opts[] = {PM_O_OLDER_THAN, PM_O_OLDER_THAN_MS, PM_O_NUM_RETAINED_MAX, PM_O_THREADS,
                                             PM_O_DRY_RUN, PM_O_NOW, PM_O_PROGRESS, PM_O_POLICY, PM_O_EXACT,
                                             PM_O_PATHS_HANDLE, PM_O__N};
static const pm_opt_id auto_tags_opts[] = {PM_O_DRY_RUN, PM_O_NOW, PM_O_NOW_MS_ALIAS, PM_O_THREADS, PM_O_PROGRESS,
                                           PM_O_PATHS_HANDLE, PM_O__N};
static const pm_opt_id rollback_opts[] = {PM_O_TO_SNAPSHOT, PM_O_TO_TAG, PM_O_TO_TIMESTAMP, PM_O_TO_WATERMARK,
                                          PM_O_AS_LATEST, PM_O_PURGE_FILES, PM_O_DRY_RUN, PM_O_THREADS, PM_O_COMMIT_USER, PM_O_PROGRESS,
                                          PM_O_PATHS_HANDLE, PM_O__N};
static const pm_opt_id purge_files_opts[] = {PM_O_DRY_RUN, PM_O_THREADS, PM_O_COMMIT_USER, PM_O_PROGRESS,
                                             PM_O_PATHS_HANDLE, PM_O__N};
static const pm_opt_id consumers_opts[] = {PM_O__N};
static const pm_opt_id reset_consumer_opts[] = {PM_O_CONSUMER_ID, PM_O_NEXT_SNAPSHOT, PM_O_DRY_RUN, PM_O__N};
static const pm_opt_id delete_consumer_opts[] = {PM_O_CONSUMER_ID, PM_O_DRY_RUN, PM_O__N};
static const pm_opt_id expire_consumers_opts[] = {PM_O_EXPIRATION, PM_O_DRY_RUN, PM_O_NOW, PM_O__N};
static const pm_opt_id clear_consumers_opts[] = {PM_O_INCLUDE, PM_O_EXCLUDE, PM_O_DRY_RUN, PM_O__N};

static const pm_opt_id expire_changelogs_opts[] = {
    PM_O_RETAIN_MIN, PM_O_RETAIN_MAX, PM_O_OLDER_THAN, PM_O_OLDER_THAN_MS, PM_O_MAX_DELETES, PM_O_THREADS,
    PM_O_DRY_RUN, PM_O_NOW, PM_O_PROGRESS, PM_O_PATHS_HANDLE, PM_O__N};

static const pm_opt_id branches_opts[] = {PM_O__N};
static const pm_opt_id create_branch_opts[] = {PM_O_BRANCH_NAME, PM_O_FROM_TAG, PM_O_DRY_RUN, PM_O__N};
static const pm_opt_id delete_branch_opts[] = {PM_O_BRANCH_NAME, PM_O_THREADS, PM_O_DRY_RUN, PM_O_PROGRESS,
                                               PM_O_PATHS_HANDLE, PM_O__N};
static const pm_opt_id fast_forward_opts[] = {PM_O_BRANCH_NAME, PM_O_DRY_RUN, PM_O__N};
static const pm_opt_id rename_branch_opts[] = {PM_O_BRANCH_NAME, PM_O_NEW_NAME, PM_O_DRY_RUN, PM_O__N};

static const pm_opt_id upkeep_opts[] = {PM_O_DRY_RUN, PM_O_THREADS, PM_O_NOW, PM_O__N};

static const pm_op ops[] = {
    {"expire_range", expire_range_opts, run_expire_range},
    {"expire_snapshots", expire_opts, run_expire_snapshots},
    {"remove_orphan_files", orphan_opts, run_remove_orphan_files},
    {"verify", verify_opts, run_verify},
    {"drop_partitions", drop_opts, run_drop_partitions},
    {"expire_partitions", expire_partitions_opts, run_expire_partitions},
    {"mark_partition_done", mark_done_opts, run_mark_partition_done},
    {"create_tag", create_tag_opts, run_create_tag},
    {"delete_tags", delete_tags_opts, run_delete_tags},
    {"rename_tag", rename_tag_opts, run_rename_tag},
    {"replace_tag", replace_tag_opts, run_replace_tag},
    {"expire_tags", expire_tags_opts, run_expire_tags},
    {"auto_tags", auto_tags_opts, run_auto_tags},
    {"rollback", rollback_opts, run_rollback},
    {"purge_files", purge_files_opts, run_purge_files},
    {"consumers", consumers_opts, run_consumers},
    {"reset_consumer", reset_consumer_opts, run_reset_consumer},
    {"delete_consumer", delete_consumer_opts, run_delete_consumer},
    {"expire_consumers", expire_consumers_opts, run_expire_consumers},
    {"clear_consumers", clear_consumers_opts, run_clear_consumers},
    {"expire_changelogs", expire_changelogs_opts, run_expire_changelogs},
    {"branches", branches_opts, run_branches},
    {"create_branch", create_branch_opts, run_create_branch},
    {"delete_branch", delete_branch_opts, run_delete_branch},
    {"fast_forward", fast_forward_opts, run_fast_forward},
    {"upkeep", upkeep_opts, run_upkeep},
    {"rename_branch", rename_branch_opts, run_rename_branch},
};

const pm_op *pm_op_find(const char *name) {
    for (size_t i = 0; name && i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, name)) return &ops[i];
    return NULL;
}

const char *pm_op_name(const pm_op *op) { return op ? op->name : NULL; }

int pm_op_run(paimon_table *t, const pm_op_args *a, const pm_op_hooks *h, pm_result **out, pm_err *e) {
    *out = NULL;
    pm_result *res = pm_result_new();
    if (!res) return pm_nomem(e);
    res->keep_plan = a->has[PM_O_PATHS_HANDLE] && a->v[PM_O_PATHS_HANDLE];
    int rc = a->op->run(t, a, h ? h : &no_hooks, res, e);
    if (!rc) rc = pm_result_check(res, e);
    if (rc) pm_result_free(res);
    else *out = res;
    return rc;
}
