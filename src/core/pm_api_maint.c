/* The public C API (paimon.h) of the maintenance operations: options as
 * key/value text (the command-line flags' names), results as one JSON
 * object with the keys of the Lua binding's result tables, read whole
 * (paimon_result_json) or by dotted path (paimon_result_int / _str). */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pm_expire.h"
#include "pm_meta.h"
#include "pm_orphan.h"
#include "pm_partition_ops.h"
#include "pm_verify.h"

/* ---- options ---------------------------------------------------------- */

typedef struct opt_kv { char *key, *value; } opt_kv;

struct paimon_options {
    opt_kv *v;
    size_t n, cap;
};

/* Keys that may be given more than once (each value is kept, in order). */
static int is_multi_key(const char *key) { return !strcmp(key, "partition"); }

paimon_options *paimon_options_new(void) { return calloc(1, sizeof(paimon_options)); }

void paimon_options_free(paimon_options *o) {
    if (!o) return;
    for (size_t i = 0; i < o->n; i++) { free(o->v[i].key); free(o->v[i].value); }
    free(o->v);
    free(o);
}

int paimon_options_set(paimon_options *o, const char *key, const char *value) {
    if (!o || !key || !*key || !value) return PAIMON_MISUSE;
    if (!is_multi_key(key))
        for (size_t i = 0; i < o->n; i++)
            if (!strcmp(o->v[i].key, key)) {
                char *nv = pm_strdup(value);
                if (!nv) return PAIMON_NOMEM;
                free(o->v[i].value);
                o->v[i].value = nv;
                return PAIMON_OK;
            }
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 8;
        opt_kv *nv = realloc(o->v, cap * sizeof *nv);
        if (!nv) return PAIMON_NOMEM;
        o->v = nv;
        o->cap = cap;
    }
    opt_kv kv = {pm_strdup(key), pm_strdup(value)};
    if (!kv.key || !kv.value) { free(kv.key); free(kv.value); return PAIMON_NOMEM; }
    o->v[o->n++] = kv;
    return PAIMON_OK;
}

/* Every key given must be one the operation knows: a misspelt option must
 * not silently fall back to a default (a default that deletes more). */
static int check_keys(const paimon_options *o, const char *op, const char *const *known, pm_err *e) {
    if (!o) return PAIMON_OK;
    for (size_t i = 0; i < o->n; i++) {
        int ok = 0;
        for (size_t k = 0; known[k] && !ok; k++) ok = !strcmp(o->v[i].key, known[k]);
        if (ok) continue;
        char list[512];
        size_t len = 0;
        list[0] = '\0';
        for (size_t k = 0; known[k]; k++) {
            int w = snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", known[k]);
            if (w < 0 || (size_t)w >= sizeof list - len) break;
            len += (size_t)w;
        }
        return pm_fail(e, PAIMON_MISUSE, "%s: unknown option '%s' (known: %s)", op, o->v[i].key, list);
    }
    return PAIMON_OK;
}

static const char *opt_get(const paimon_options *o, const char *key) {
    if (!o) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->v[i].key, key)) return o->v[i].value;
    return NULL;
}

/* The decimal integer of key, if given, into *dst (unchanged otherwise),
 * within [lo, hi]; a result code. */
static int set_i64(const paimon_options *o, const char *key, int64_t lo, int64_t hi, int64_t *dst, pm_err *e) {
    const char *s = opt_get(o, key);
    if (!s) return PAIMON_OK;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || (s[0] == '+' || s[0] == ' '))
        return pm_fail(e, PAIMON_MISUSE, "option '%s' must be an integer, got '%s'", key, s);
    if (v < lo || v > hi)
        return pm_fail(e, PAIMON_MISUSE, "option '%s' must be between %lld and %lld, got %lld", key, (long long)lo,
                       (long long)hi, v);
    *dst = v;
    return PAIMON_OK;
}

static int set_int(const paimon_options *o, const char *key, int lo, int hi, int *dst, pm_err *e) {
    int64_t v = *dst;
    int rc = set_i64(o, key, lo, hi, &v, e);
    *dst = (int)v;
    return rc;
}

/* "true" or "false", if given, into *dst. */
static int set_bool(const paimon_options *o, const char *key, int *dst, pm_err *e) {
    const char *s = opt_get(o, key);
    if (!s) return PAIMON_OK;
    if (!strcmp(s, "true")) *dst = 1;
    else if (!strcmp(s, "false")) *dst = 0;
    else return pm_fail(e, PAIMON_MISUSE, "option '%s' must be true or false, got '%s'", key, s);
    return PAIMON_OK;
}

/* The cut-off: older-than (a duration: now minus it) or older-than-ms
 * (epoch milliseconds), not both. */
static int opt_cutoff(const paimon_options *o, int64_t now, int *has, int64_t *cutoff, pm_err *e) {
    const char *d = opt_get(o, "older-than");
    int64_t abs_ms = 0;
    int rc = set_i64(o, "older-than-ms", 0, INT64_MAX, &abs_ms, e);
    if (rc) return rc;
    if (opt_get(o, "older-than-ms")) {
        if (d) return pm_fail(e, PAIMON_MISUSE, "options 'older-than' and 'older-than-ms' exclude each other");
        *has = 1;
        *cutoff = abs_ms;
        return PAIMON_OK;
    }
    if (!d) return PAIMON_OK;
    int64_t ms;
    rc = pm_parse_duration_ms(d, &ms, e);
    if (rc) {
        pm_err_prefix(e, "option 'older-than'");
        return rc;
    }
    *has = 1;
    *cutoff = now - ms;
    return PAIMON_OK;
}

/* ---- results ---------------------------------------------------------- */

struct paimon_result {
    json_t *obj;
    char *text;
};

static int nomem(pm_err *e) { return pm_fail(e, PAIMON_NOMEM, "out of memory"); }

/* json_object_set_new and friends fail only for out of memory; one flag
 * per result collects that instead of a check per call. */
typedef struct jb { json_t *o; int oom; } jb;

static void j_set(jb *b, json_t *obj, const char *k, json_t *v) {
    if (!v || json_object_set_new(obj, k, v)) b->oom = 1;
}
static void j_int(jb *b, json_t *obj, const char *k, int64_t v) { j_set(b, obj, k, json_integer((json_int_t)v)); }
static void j_str(jb *b, json_t *obj, const char *k, const char *v) { if (v) j_set(b, obj, k, json_string(v)); }
static void j_push(jb *b, json_t *arr, json_t *v) { if (!v || json_array_append_new(arr, v)) b->oom = 1; }

static json_t *j_items(jb *b, const pm_clean_item *v, size_t n, int with_size, const char *(*kind_name)(int)) {
    json_t *a = json_array();
    if (!a) { b->oom = 1; return NULL; }
    for (size_t i = 0; i < n; i++) {
        json_t *it = json_object();
        if (!it) { b->oom = 1; break; }
        j_str(b, it, "path", v[i].path);
        j_str(b, it, "kind", kind_name(v[i].kind));
        if (with_size) j_int(b, it, "size", v[i].size);
        j_str(b, it, "message", v[i].msg);
        j_push(b, a, it);
    }
    return a;
}

static const char *clean_kind_name(int k) { return k >= 0 && k < PM_K__N ? pm_file_kind_names[k] : "unknown"; }

/* The keys of the Lua binding's lp_push_clean_result. */
static void j_clean(jb *b, const pm_clean_result *r) {
    json_t *del = json_object(), *bytes = json_object();
    int64_t files = 0, total = 0;
    if (!del || !bytes) b->oom = 1;
    for (int k = 0; k < PM_K__N && del && bytes; k++) {
        j_int(b, del, pm_file_kind_names[k], r->count[k]);
        j_int(b, bytes, pm_file_kind_names[k], r->bytes[k]);
        files += r->count[k];
        total += r->bytes[k];
    }
    j_set(b, b->o, "deleted", del);
    j_set(b, b->o, "bytes", bytes);
    j_int(b, b->o, "files", files);
    j_int(b, b->o, "total_bytes", total);
    j_int(b, b->o, "directories", r->dirs_removed);
    j_int(b, b->o, "missing", r->missing);
    j_int(b, b->o, "protected", r->protected_files);
    j_set(b, b->o, "dry_run", json_boolean(r->dry_run));
    if (r->dry_run) j_set(b, b->o, "paths", j_items(b, r->paths, r->n_paths, 1, clean_kind_name));
    j_set(b, b->o, "failures", j_items(b, r->failures, r->n_failures, 0, clean_kind_name));
    j_set(b, b->o, "skipped", j_items(b, r->skipped, r->n_skipped, 0, clean_kind_name));
    j_int(b, b->o, "duration_ms", r->duration_ms);
}

static int result_new(jb *b, pm_err *e) {
    b->oom = 0;
    if (!(b->o = json_object())) return nomem(e);
    return PAIMON_OK;
}

static int result_finish(jb *b, paimon_result **out, pm_err *e) {
    paimon_result *r = NULL;
    if (!b->oom) r = calloc(1, sizeof *r);
    if (r) r->text = json_dumps(b->o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!r || !r->text) {
        free(r);
        json_decref(b->o);
        return nomem(e);
    }
    r->obj = b->o;
    *out = r;
    return PAIMON_OK;
}

const char *paimon_result_json(const paimon_result *r) { return r ? r->text : NULL; }

void paimon_result_free(paimon_result *r) {
    if (!r) return;
    json_decref(r->obj);
    free(r->text);
    free(r);
}

/* "a.b.c": objects by key, arrays by a decimal index. */
static json_t *lookup(const paimon_result *r, const char *path) {
    if (!r || !path) return NULL;
    json_t *cur = r->obj;
    char part[256];
    const char *p = path;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0 || n >= sizeof part) return NULL;
        memcpy(part, p, n);
        part[n] = '\0';
        if (json_is_object(cur)) cur = json_object_get(cur, part);
        else if (json_is_array(cur)) {
            char *end;
            unsigned long i = strtoul(part, &end, 10);
            if (*end || part[0] < '0' || part[0] > '9') return NULL;
            cur = json_array_get(cur, i);
        } else return NULL;
        if (!cur || !dot) return cur;
        p = dot + 1;
    }
}

int paimon_result_int(const paimon_result *r, const char *path, int64_t *out) {
    json_t *v = lookup(r, path);
    if (!v) return PAIMON_NOTFOUND;
    if (json_is_integer(v)) *out = (int64_t)json_integer_value(v);
    else if (json_is_boolean(v)) *out = json_is_true(v);
    else if (json_is_array(v)) *out = (int64_t)json_array_size(v);
    else return PAIMON_MISUSE;
    return PAIMON_OK;
}

const char *paimon_result_str(const paimon_result *r, const char *path) {
    json_t *v = lookup(r, path);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* ---- operations ------------------------------------------------------- */

/* Arguments and option names of operation `op` (known: its keys). */
static int begin(paimon_table *t, paimon_result **out, const paimon_options *o, const char *op,
                 const char *const *known) {
    if (!t) return PAIMON_MISUSE;
    pm_err_clear(&t->err);
    if (!out) return pm_fail(&t->err, PAIMON_MISUSE, "result pointer is NULL");
    *out = NULL;
    return check_keys(o, op, known, &t->err);
}

static int expire_opts(const paimon_options *o, pm_expire_opts *x, pm_err *e) {
    int rc;
    memset(x, 0, sizeof *x);
    x->threads = 4;
    int ced = -2;
    if ((rc = set_int(o, "retain-min", 1, INT32_MAX, &x->retain_min, e)) ||
        (rc = set_int(o, "retain-max", 1, INT32_MAX, &x->retain_max, e)) ||
        (rc = set_int(o, "max-deletes", 1, INT32_MAX, &x->max_deletes, e)) ||
        (rc = set_i64(o, "until", 1, INT64_MAX, &x->until, e)) ||
        (rc = set_int(o, "threads", 1, 256, &x->threads, e)) ||
        (rc = set_i64(o, "now-ms", 1, INT64_MAX, &x->now_ms, e)) ||
        (rc = set_bool(o, "dry-run", &x->dry_run, e)) ||
        (rc = set_bool(o, "clean-empty-directories", &ced, e)))
        return rc;
    if (ced != -2) x->clean_empty_dirs = ced ? 1 : -1;
    return opt_cutoff(o, x->now_ms > 0 ? x->now_ms : pm_now_millis(), &x->has_older_than, &x->older_than_ms, e);
}

int paimon_expire_snapshots(paimon_table *t, const paimon_options *o, paimon_result **out) {
    static const char *const known[] = {"retain-min", "retain-max", "older-than", "older-than-ms", "max-deletes",
                                        "until", "threads", "dry-run", "clean-empty-directories", "now-ms", NULL};
    int rc = begin(t, out, o, "expire_snapshots", known);
    if (rc) return rc;
    pm_expire_opts x;
    if ((rc = expire_opts(o, &x, &t->err))) return rc;
    pm_expire_result res;
    if ((rc = pm_expire_snapshots(t, &x, &res, &t->err))) return rc;
    jb b;
    if ((rc = result_new(&b, &t->err))) { pm_clean_result_free(&res.clean); return rc; }
    j_clean(&b, &res.clean);
    j_int(&b, b.o, "expired", res.expired);
    if (res.expired > 0) {
        json_t *range = json_pack("[II]", (json_int_t)res.range.begin, (json_int_t)(res.range.end - 1));
        j_set(&b, b.o, "range", range);
    }
    const pm_expire_range *g = &res.range;
    json_t *plan = json_object();
    if (plan) {
        j_int(&b, plan, "earliest", g->earliest);
        j_int(&b, plan, "latest", g->latest);
        j_int(&b, plan, "retain_min", g->retain_min);
        j_int(&b, plan, "retain_max", g->retain_max);
        j_int(&b, plan, "max_deletes", g->max_deletes);
        j_int(&b, plan, "older_than", g->older_than_ms);
        j_int(&b, plan, "now", g->now_ms);
        if (g->n_consumers > 0) j_int(&b, plan, "consumer_min", g->consumer_min);
        j_int(&b, plan, "hard_end", g->hard_end);
        j_int(&b, plan, "begin", g->begin);
        j_int(&b, plan, "end", g->end);
        j_str(&b, plan, "capped_by", g->capped_by);
    }
    j_set(&b, b.o, "plan", plan);
    j_str(&b, b.o, "capped_by", g->capped_by);
    if (res.refused[0]) j_str(&b, b.o, "refused", res.refused);
    pm_clean_result_free(&res.clean);
    return result_finish(&b, out, &t->err);
}

int paimon_remove_orphan_files(paimon_table *t, const paimon_options *o, paimon_result **out) {
    static const char *const known[] = {"older-than", "older-than-ms", "threads", "dry-run", "now-ms",
                                        "allow-young-cutoff", NULL};
    int rc = begin(t, out, o, "remove_orphan_files", known);
    if (rc) return rc;
    pm_err *e = &t->err;
    pm_orphan_opts x;
    memset(&x, 0, sizeof x);
    x.threads = 4;
    if ((rc = set_int(o, "threads", 1, 256, &x.threads, e)) || (rc = set_i64(o, "now-ms", 1, INT64_MAX, &x.now_ms, e)) ||
        (rc = set_bool(o, "dry-run", &x.dry_run, e)) || (rc = set_bool(o, "allow-young-cutoff", &x.allow_young_cutoff, e)))
        return rc;
    if ((rc = opt_cutoff(o, x.now_ms > 0 ? x.now_ms : pm_now_millis(), &x.has_older_than, &x.older_than_ms, e)))
        return rc;
    pm_orphan_result res;
    if ((rc = pm_remove_orphan_files(t, &x, &res, e))) return rc;
    jb b;
    if ((rc = result_new(&b, e))) { pm_clean_result_free(&res.clean); return rc; }
    j_clean(&b, &res.clean);
    j_int(&b, b.o, "older_than", res.older_than_ms);
    j_int(&b, b.o, "cutoff_floor", res.cutoff_floor_ms);
    j_set(&b, b.o, "floor_overridden", json_boolean(res.floor_overridden));
    j_int(&b, b.o, "listed", res.listed);
    j_int(&b, b.o, "used", res.used);
    j_int(&b, b.o, "candidates", res.candidates);
    j_int(&b, b.o, "recent", res.recent);
    j_int(&b, b.o, "manifests_read", res.manifests_read);
    j_int(&b, b.o, "manifests_skipped", res.manifests_skipped);
    pm_clean_result_free(&res.clean);
    return result_finish(&b, out, e);
}

int paimon_verify(paimon_table *t, const paimon_options *o, paimon_result **out) {
    static const char *const known[] = {"all-snapshots", "threads", NULL};
    int rc = begin(t, out, o, "verify", known);
    if (rc) return rc;
    pm_err *e = &t->err;
    pm_verify_opts x;
    memset(&x, 0, sizeof x);
    x.threads = 4;
    if ((rc = set_int(o, "threads", 1, 256, &x.threads, e)) || (rc = set_bool(o, "all-snapshots", &x.all_snapshots, e)))
        return rc;
    pm_verify_result res;
    if ((rc = pm_verify(t, &x, &res, e))) return rc;
    jb b;
    if ((rc = result_new(&b, e))) { pm_verify_result_free(&res); return rc; }
    j_set(&b, b.o, "ok", json_boolean(res.n_missing == 0 && res.n_wrong_size == 0 && res.n_unreadable == 0));
    j_int(&b, b.o, "branches", res.branches);
    j_int(&b, b.o, "snapshots", res.snapshots);
    j_int(&b, b.o, "tags", res.tags);
    j_int(&b, b.o, "changelogs", res.changelogs);
    j_int(&b, b.o, "not_checked", res.not_checked);
    json_t *checked = json_object();
    int64_t files = 0;
    for (int k = 0; k <= PM_VERIFY_SCHEMA && checked; k++) {
        j_int(&b, checked, pm_verify_kind_name(k), res.checked[k]);
        files += res.checked[k];
    }
    j_set(&b, b.o, "checked", checked);
    j_int(&b, b.o, "files", files);
    j_set(&b, b.o, "missing", j_items(&b, res.missing, res.n_missing, 1, pm_verify_kind_name));
    j_set(&b, b.o, "wrong_size", j_items(&b, res.wrong_size, res.n_wrong_size, 1, pm_verify_kind_name));
    j_set(&b, b.o, "unreadable", j_items(&b, res.unreadable, res.n_unreadable, 1, pm_verify_kind_name));
    j_int(&b, b.o, "duration_ms", res.duration_ms);
    pm_verify_result_free(&res);
    return result_finish(&b, out, e);
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

int paimon_drop_partitions(paimon_table *t, const paimon_options *o, paimon_result **out) {
    static const char *const known[] = {"partition", "max-attempts", "commit-user", "dry-run", NULL};
    int rc = begin(t, out, o, "drop_partitions", known);
    if (rc) return rc;
    pm_err *e = &t->err;
    pm_drop_opts x;
    memset(&x, 0, sizeof x);
    x.max_attempts = 3;
    if ((rc = set_int(o, "max-attempts", 1, 100, &x.max_attempts, e)) || (rc = set_bool(o, "dry-run", &x.dry_run, e)))
        return rc;
    x.commit_user = opt_get(o, "commit-user");
    if (t->n_part == 0) return pm_fail(e, PAIMON_MISUSE, "%s is not partitioned: no partition to drop", t->root);
    size_t n_specs = 0;
    for (size_t i = 0; o && i < o->n; i++) n_specs += !strcmp(o->v[i].key, "partition");
    if (!n_specs) return pm_fail(e, PAIMON_MISUSE, "drop_partitions: no 'partition' option (k=v[,k2=v2])");
    pm_partition_filter *f = calloc(n_specs, sizeof *f);
    char **texts = calloc(n_specs, sizeof *texts);
    const char **kv = calloc(2 * n_specs * t->n_part, sizeof *kv);
    int64_t t0 = pm_now_millis();
    if (!f || !texts || !kv) rc = nomem(e);
    for (size_t i = 0, s = 0; !rc && i < o->n; i++) {
        if (strcmp(o->v[i].key, "partition")) continue;
        if (!(texts[s] = pm_strdup(o->v[i].value))) { rc = nomem(e); break; }
        f[s].keys = kv + 2 * s * t->n_part;
        f[s].values = f[s].keys + t->n_part;
        rc = parse_spec(t, texts[s], (const char **)f[s].keys, (const char **)f[s].values, &f[s].n, e);
        s++;
    }
    pm_drop_result r;
    memset(&r, 0, sizeof r);
    if (!rc) {
        pm_part_select sel = {n_specs, f, 0, NULL, 0};
        rc = pm_drop_partitions(t, &sel, &x, &r, e);
    }
    jb b;
    if (!rc) rc = result_new(&b, e);
    if (!rc) {
        j_str(&b, b.o, "table", t->root);
        j_set(&b, b.o, "dry_run", json_boolean(x.dry_run));
        if (r.snapshot_id) j_int(&b, b.o, "snapshot_id", r.snapshot_id);
        if (r.base_snapshot_id) j_int(&b, b.o, "base_snapshot_id", r.base_snapshot_id);
        j_int(&b, b.o, "attempts", r.attempts);
        j_int(&b, b.o, "commits", r.commits);
        j_int(&b, b.o, "files", r.files);
        j_int(&b, b.o, "rows", r.rows);
        j_int(&b, b.o, "index_files", r.index_files);
        j_int(&b, b.o, "bytes", r.bytes);
        json_t *parts = json_array();
        if (!parts) b.oom = 1;
        for (size_t i = 0; parts && i < r.n_parts; i++) {
            json_t *p = json_object();
            if (!p) { b.oom = 1; break; }
            j_str(&b, p, "path", r.parts[i].path);
            j_int(&b, p, "files", r.parts[i].file_count);
            j_int(&b, p, "rows", r.parts[i].record_count);
            j_int(&b, p, "bytes", r.parts[i].file_size);
            j_push(&b, parts, p);
        }
        j_set(&b, b.o, "partitions", parts);
        j_int(&b, b.o, "duration_ms", pm_now_millis() - t0);
        rc = result_finish(&b, out, e);
    }
    pm_drop_result_free(&r);
    for (size_t i = 0; texts && i < n_specs; i++) free(texts[i]);
    free(texts);
    free(kv);
    free(f);
    return rc;
}
