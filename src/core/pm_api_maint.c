/* The public C API (paimon.h) of the maintenance operations, a thin face
 * over the operations layer (pm_ops): options as key/value text (the
 * command-line flags' names), the layer's result tree rendered as one JSON
 * object, streamed (paimon_result_write_json), read whole
 * (paimon_result_json) or by dotted path (paimon_result_int / _str). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_deleter.h"
#include "pm_json.h"
#include "pm_meta.h"
#include "pm_ops.h"

/* ---- options ---------------------------------------------------------- */

typedef struct opt_kv { char *key, *value; } opt_kv;

struct paimon_options {
    opt_kv *v;
    size_t n, cap;
};

/* Keys that may be given more than once (each value is kept, in order). */
static int is_multi_key(const char *key) { return !strcmp(key, "partition") || !strcmp(key, "tag"); }

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

/* ---- results ---------------------------------------------------------- */

/* The layer's tree. A dry run's plan stays whole in it (keep_plan): its
 * rows are made one at a time, for JSON output and for lookups, so a
 * result does not grow with the plan unless paimon_result_json is asked
 * for the whole text. */
struct paimon_result {
    pm_result *tree;
    char *text;          /* paimon_result_json: made on its first call */
    pm_result *row;      /* scratch: the plan row being written or looked up */
    pm_buf tmp;          /* scratch: its path */
    pm_arena *kept;      /* strings paimon_result_str returned from plan rows */
};

int pm_api_result_wrap(pm_result *tree, paimon_result **out, pm_err *e) {
    paimon_result *r = calloc(1, sizeof *r);
    if (!r) {
        pm_result_free(tree);
        return pm_nomem(e);
    }
    r->tree = tree;
    *out = r;
    return PAIMON_OK;
}

void paimon_result_free(paimon_result *r) {
    if (!r) return;
    pm_result_free(r->tree);
    free(r->text);
    pm_result_free(r->row);
    pm_buf_free(&r->tmp);
    pm_arena_free(r->kept);
    free(r);
}

/* Row i of the plan, made in the scratch result (valid until the next
 * row); NULL: out of memory. */
static const pm_rv *plan_row(paimon_result *r, size_t i) {
    if (!r->row && !(r->row = pm_result_new())) return NULL;
    pm_result_reset(r->row);
    return pm_op_plan_row(r->row, pm_rv_list(r->row, r->row->root, "paths"), r->tree->plan, i, &r->tmp);
}

/* ---- results as JSON: jansson's compact form, which this face printed
 * before it streamed (held to jansson by spec/c/test_capi.c): keys in
 * insertion order (one given twice: its first place, its last value),
 * byte strings left out, control characters as \u00XX (upper-case hex),
 * everything else raw; a string that is not UTF-8 has no JSON form. */

#define JSON_FLUSH_AT (64 * 1024)

typedef struct json_out {
    paimon_result *r;
    int (*write)(void *ud, const char *p, size_t n);
    void *ud;
    pm_buf b;
    int rc;              /* the first failure; nothing more is written */
} json_out;

static void out_mem(json_out *o, const void *p, size_t n) {
    if (!o->rc && pm_buf_append(&o->b, p, n)) o->rc = PAIMON_NOMEM;
}

/* Hand the text so far to the writer once there is enough (or always: force). */
static void out_flush(json_out *o, int force) {
    if (o->rc || !o->b.len || (!force && o->b.len < JSON_FLUSH_AT)) return;
    if (o->write(o->ud, (const char *)o->b.data, o->b.len)) o->rc = PAIMON_IO;
    o->b.len = 0;
}

static void out_string(json_out *o, const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)s, *end = p + n, *raw = p;
    out_mem(o, "\"", 1);
    while (p < end) {
        unsigned c = *p;
        size_t len = c < 0x80 ? 1 : pm_utf8_len(p, end);
        if (!len) { if (!o->rc) o->rc = PAIMON_CORRUPT; return; }
        if (c >= 0x20 && c != '"' && c != '\\') { p += len; continue; }
        out_mem(o, raw, (size_t)(p - raw));
        char esc[7] = {'\\', (char)c, 0};
        switch (c) {
        case '"': case '\\': break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default: memcpy(esc + 1, "u00", 3); esc[4] = hex[c >> 4]; esc[5] = hex[c & 15];
        }
        out_mem(o, esc, strlen(esc));
        raw = ++p;
    }
    out_mem(o, raw, (size_t)(end - raw));
    out_mem(o, "\"", 1);
}

/* The later sibling with v's key, if any (a key given twice). */
static const pm_rv *same_key(const pm_rv *from, const pm_rv *stop, const pm_rv *v) {
    const pm_rv *hit = NULL;
    for (const pm_rv *c = from; c != stop; c = c->next)
        if (c != v && c->type != PM_RV_BYTES && !strcmp(c->key, v->key)) hit = c;
    return hit;
}

static void out_value(json_out *o, const pm_rv *v) {
    char num[24];
    size_t k = 0;
    switch (v->type) {
    case PM_RV_INT:
        snprintf(num, sizeof num, "%lld", (long long)v->i);
        out_mem(o, num, strlen(num));
        return;
    case PM_RV_BOOL: out_mem(o, v->i ? "true" : "false", v->i ? 4 : 5); return;
    case PM_RV_STR: out_string(o, v->s, v->len); return;
    case PM_RV_BYTES: return;
    case PM_RV_LIST:
        out_mem(o, "[", 1);
        if (v == o->r->tree->plan_list)
            for (size_t i = 0, n = pm_plan_count(o->r->tree->plan); i < n && !o->rc; i++) {
                const pm_rv *row = plan_row(o->r, i);
                if (!row) { o->rc = PAIMON_NOMEM; break; }
                if (k++) out_mem(o, ",", 1);
                out_value(o, row);
                out_flush(o, 0);
            }
        for (const pm_rv *c = v->first; c; c = c->next) {
            if (c->type == PM_RV_BYTES) continue;
            if (k++) out_mem(o, ",", 1);
            out_value(o, c);
            out_flush(o, 0);
        }
        out_mem(o, "]", 1);
        return;
    case PM_RV_OBJ:
        out_mem(o, "{", 1);
        for (const pm_rv *c = v->first; c; c = c->next) {
            if (c->type == PM_RV_BYTES || same_key(v->first, c, c)) continue;   /* placed already */
            const pm_rv *last = same_key(c->next, NULL, c);
            if (k++) out_mem(o, ",", 1);
            out_string(o, c->key, strlen(c->key));
            out_mem(o, ":", 1);
            out_value(o, last ? last : c);
        }
        out_mem(o, "}", 1);
        return;
    }
}

int paimon_result_write_json(const paimon_result *cr, int (*write)(void *ud, const char *p, size_t n), void *ud) {
    if (!cr || !write) return PAIMON_MISUSE;
    json_out o = {(paimon_result *)cr, write, ud, {0}, 0};   /* rows use the result's scratch */
    out_value(&o, cr->tree->root);
    out_flush(&o, 1);
    pm_buf_free(&o.b);
    return o.rc;
}

static int append_text(void *ud, const char *p, size_t n) { return pm_buf_append(ud, p, n); }

const char *paimon_result_json(const paimon_result *cr) {
    paimon_result *r = (paimon_result *)cr;   /* the text is a cache */
    if (!r || r->text) return r ? r->text : NULL;
    pm_buf b = {0};
    if (paimon_result_write_json(r, append_text, &b) || pm_buf_cstr(&b)) {
        pm_buf_free(&b);
        return NULL;
    }
    r->text = (char *)b.data;
    return r->text;
}

/* ---- results by path ---------------------------------------------------- */

/* "i[.rest]" under the plan's list: row i of the plan, then the list's own
 * nodes; the index rules of pm_rv_path. *in_row: v is in the scratch row. */
static const pm_rv *plan_lookup(paimon_result *r, const char *path, int *in_row) {
    const pm_rv *list = r->tree->plan_list;
    char part[256];
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path), count = pm_plan_count(r->tree->plan);
    if (n == 0 || n >= sizeof part) return NULL;
    memcpy(part, path, n);
    part[n] = '\0';
    char *end;
    unsigned long i = strtoul(part, &end, 10);
    if (*end || part[0] < '0' || part[0] > '9') return NULL;
    const pm_rv *v = NULL;
    if (i < count) {
        v = plan_row(r, i);
        *in_row = 1;
    } else {
        v = list->first;
        for (unsigned long k = count; v && k < i; k++) v = v->next;
    }
    if (!v || !dot) return v;
    return pm_rv_path(v, dot + 1);
}

/* "a.b.c" in the tree or in a row of the plan ("paths.3.path"); byte
 * strings are not in the JSON, so not here. */
static const pm_rv *lookup(paimon_result *r, const char *path, int *in_row) {
    *in_row = 0;
    if (!r || !path) return NULL;
    const pm_rv *list = r->tree->plan_list, *v;
    size_t kl = list ? strlen(list->key) : 0;
    if (list && !strncmp(path, list->key, kl) && path[kl] == '.') v = plan_lookup(r, path + kl + 1, in_row);
    else v = pm_rv_path(r->tree->root, path);
    return v && v->type != PM_RV_BYTES ? v : NULL;
}

int paimon_result_int(const paimon_result *cr, const char *path, int64_t *out) {
    paimon_result *r = (paimon_result *)cr;   /* rows are made in its scratch */
    int in_row;
    const pm_rv *v = lookup(r, path, &in_row);
    if (!v) return PAIMON_NOTFOUND;
    if (v->type == PM_RV_INT || v->type == PM_RV_BOOL) *out = v->i;
    else if (v->type == PM_RV_LIST)   /* lists hold no byte strings */
        *out = (int64_t)(v->n + (v == r->tree->plan_list ? pm_plan_count(r->tree->plan) : 0));
    else return PAIMON_MISUSE;
    return PAIMON_OK;
}

const char *paimon_result_str(const paimon_result *cr, const char *path) {
    paimon_result *r = (paimon_result *)cr;
    int in_row;
    const pm_rv *v = lookup(r, path, &in_row);
    if (!v || v->type != PM_RV_STR) return NULL;
    if (!in_row) return v->s;
    /* valid until paimon_result_free, as the tree's strings are */
    if (!r->kept && !(r->kept = pm_arena_new(4096))) return NULL;
    return pm_arena_strndup(r->kept, v->s, v->len);
}

/* ---- operations ------------------------------------------------------- */

/* Operation `name` through the operations layer: the options as text under
 * the flags' names, no hooks (progress, policies and Lua specs are the
 * binding's). */
static int run_op(paimon_table *t, const char *name, const paimon_options *o, paimon_result **out) {
    if (!t) return PAIMON_MISUSE;
    pm_err *e = &t->err;
    pm_err_clear(e);
    if (!out) return pm_fail(e, PAIMON_MISUSE, "result pointer is NULL");
    *out = NULL;
    size_t n = o ? o->n : 0;
    pm_opt_in *in = calloc(n ? n : 1, sizeof *in);
    if (!in) return pm_nomem(e);
    for (size_t i = 0; i < n; i++) in[i] = (pm_opt_in){o->v[i].key, PM_OV_TEXT, o->v[i].value, 0, NULL};
    pm_op_args args;
    pm_result *tree = NULL;
    int rc = pm_op_parse(pm_op_find(name), PM_FACE_C, in, n, &args, e);
    /* a dry run's plan stays whole in the result: rows are made as they are written */
    args.has[PM_O_PATHS_HANDLE] = 1;
    args.v[PM_O_PATHS_HANDLE] = 1;
    if (!rc) rc = pm_op_run(t, &args, NULL, &tree, e);
    free(in);
    if (rc) return rc;
    return pm_api_result_wrap(tree, out, e);
}

int paimon_expire_snapshots(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "expire_snapshots", o, out);
}

int paimon_remove_orphan_files(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "remove_orphan_files", o, out);
}

int paimon_verify(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "verify", o, out);
}

int paimon_drop_partitions(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "drop_partitions", o, out);
}

int paimon_create_tag(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "create_tag", o, out);
}

int paimon_delete_tags(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "delete_tags", o, out);
}

int paimon_rename_tag(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "rename_tag", o, out);
}

int paimon_expire_tags(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "expire_tags", o, out);
}

int paimon_auto_tags(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "auto_tags", o, out);
}

int paimon_rollback(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "rollback", o, out);
}

int paimon_purge_files(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "purge_files", o, out);
}

int paimon_consumers(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "consumers", o, out);
}

int paimon_reset_consumer(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "reset_consumer", o, out);
}

int paimon_delete_consumer(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "delete_consumer", o, out);
}

int paimon_expire_consumers(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "expire_consumers", o, out);
}

int paimon_expire_changelogs(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "expire_changelogs", o, out);
}

int paimon_branches(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "branches", o, out);
}

int paimon_create_branch(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "create_branch", o, out);
}

int paimon_delete_branch(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "delete_branch", o, out);
}

int paimon_fast_forward(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "fast_forward", o, out);
}

int paimon_upkeep(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "upkeep", o, out);
}

int paimon_expire_partitions(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "expire_partitions", o, out);
}

int paimon_mark_partition_done(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "mark_partition_done", o, out);
}

int paimon_replace_tag(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "replace_tag", o, out);
}

int paimon_clear_consumers(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "clear_consumers", o, out);
}

int paimon_rename_branch(paimon_table *t, const paimon_options *o, paimon_result **out) {
    return run_op(t, "rename_branch", o, out);
}
