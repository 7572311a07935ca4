/* The public C API (paimon.h) of the maintenance operations, a thin face
 * over the operations layer (pm_ops): options as key/value text (the
 * command-line flags' names), the layer's result tree rendered as one JSON
 * object, read whole (paimon_result_json) or by dotted path
 * (paimon_result_int / _str). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

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

/* The layer's tree (looked up by path) and its JSON text. */
struct paimon_result {
    pm_result *tree;
    char *text;
};


/* The tree as JSON; NULL for out of memory. Byte strings have no JSON
 * form and are left out. */
static json_t *to_json(const pm_rv *v) {
    json_t *j = NULL;
    switch (v->type) {
    case PM_RV_INT: return json_integer((json_int_t)v->i);
    case PM_RV_BOOL: return json_boolean(v->i);
    case PM_RV_STR: return json_stringn(v->s, v->len);
    case PM_RV_BYTES: return NULL;
    case PM_RV_LIST:
        if (!(j = json_array())) return NULL;
        for (const pm_rv *c = v->first; c; c = c->next) {
            if (c->type == PM_RV_BYTES) continue;
            if (json_array_append_new(j, to_json(c))) { json_decref(j); return NULL; }
        }
        return j;
    case PM_RV_OBJ:
        if (!(j = json_object())) return NULL;
        for (const pm_rv *c = v->first; c; c = c->next) {
            if (c->type == PM_RV_BYTES) continue;
            if (json_object_set_new(j, c->key, to_json(c))) { json_decref(j); return NULL; }
        }
        return j;
    }
    return NULL;
}

static int result_finish(pm_result *tree, paimon_result **out, pm_err *e) {
    json_t *obj = to_json(tree->root);
    paimon_result *r = obj ? calloc(1, sizeof *r) : NULL;
    if (r) r->text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(obj);
    if (!r || !r->text) {
        free(r);
        pm_result_free(tree);
        return pm_nomem(e);
    }
    r->tree = tree;
    *out = r;
    return PAIMON_OK;
}

const char *paimon_result_json(const paimon_result *r) { return r ? r->text : NULL; }

void paimon_result_free(paimon_result *r) {
    if (!r) return;
    pm_result_free(r->tree);
    free(r->text);
    free(r);
}

/* "a.b.c" in the tree; byte strings are not in the JSON, so not here. */
static const pm_rv *lookup(const paimon_result *r, const char *path) {
    const pm_rv *v = r ? pm_rv_path(r->tree->root, path) : NULL;
    return v && v->type != PM_RV_BYTES ? v : NULL;
}

int paimon_result_int(const paimon_result *r, const char *path, int64_t *out) {
    const pm_rv *v = lookup(r, path);
    if (!v) return PAIMON_NOTFOUND;
    if (v->type == PM_RV_INT || v->type == PM_RV_BOOL) *out = v->i;
    else if (v->type == PM_RV_LIST) *out = (int64_t)v->n;   /* lists hold no byte strings */
    else return PAIMON_MISUSE;
    return PAIMON_OK;
}

const char *paimon_result_str(const paimon_result *r, const char *path) {
    const pm_rv *v = lookup(r, path);
    return v && v->type == PM_RV_STR ? v->s : NULL;
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
    if (!rc) rc = pm_op_run(t, &args, NULL, &tree, e);
    free(in);
    if (rc) return rc;
    return result_finish(tree, out, e);
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
