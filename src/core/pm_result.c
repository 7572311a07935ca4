/* The operations' result tree (pm_result.h). */
#include <stdlib.h>
#include <string.h>

#include "pm_result.h"

#include "pm_deleter.h"

pm_result *pm_result_new(void) {
    pm_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->arena = pm_arena_new(4096);
    if (r->arena) r->root = pm_arena_alloc(r->arena, sizeof *r->root);
    if (!r->root) { pm_result_free(r); return NULL; }
    memset(r->root, 0, sizeof *r->root);
    r->root->type = PM_RV_OBJ;
    return r;
}

void pm_result_free(pm_result *r) {
    if (!r) return;
    pm_plan_free(r->plan);
    pm_arena_free(r->arena);
    free(r);
}

void pm_result_reset(pm_result *r) {
    r->oom = 0;
    r->plan_list = NULL;   /* a node of the arena */
    pm_arena_reset(r->arena);
    r->root = pm_arena_alloc(r->arena, sizeof *r->root);   /* the first chunk is kept: it fits */
    if (!r->root) { r->oom = 1; return; }
    memset(r->root, 0, sizeof *r->root);
    r->root->type = PM_RV_OBJ;
}

int pm_result_check(const pm_result *r, pm_err *e) {
    if (!r || r->oom) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

/* A node of type t appended to parent (an object or a list). */
static pm_rv *add(pm_result *r, pm_rv *parent, const char *key, pm_rv_type t) {
    if (r->oom || !parent) return NULL;
    pm_rv *v = pm_arena_alloc(r->arena, sizeof *v);
    const char *k = key ? pm_arena_strndup(r->arena, key, strlen(key)) : NULL;
    if (!v || (key && !k)) { r->oom = 1; return NULL; }
    memset(v, 0, sizeof *v);
    v->type = t;
    v->key = parent->type == PM_RV_OBJ ? k : NULL;
    if (parent->last) parent->last->next = v;
    else parent->first = v;
    parent->last = v;
    parent->n++;
    return v;
}

pm_rv *pm_rv_obj(pm_result *r, pm_rv *parent, const char *key) { return add(r, parent, key, PM_RV_OBJ); }
pm_rv *pm_rv_list(pm_result *r, pm_rv *parent, const char *key) { return add(r, parent, key, PM_RV_LIST); }

void pm_rv_int(pm_result *r, pm_rv *parent, const char *key, int64_t v) {
    pm_rv *n = add(r, parent, key, PM_RV_INT);
    if (n) n->i = v;
}

void pm_rv_bool(pm_result *r, pm_rv *parent, const char *key, int v) {
    pm_rv *n = add(r, parent, key, PM_RV_BOOL);
    if (n) n->i = v ? 1 : 0;
}

static void add_bytes(pm_result *r, pm_rv *parent, const char *key, pm_rv_type t, const void *p, size_t len) {
    pm_rv *n = add(r, parent, key, t);
    if (!n) return;
    char *s = pm_arena_strndup(r->arena, len ? p : "", len);   /* NUL-ended, also for bytes */
    if (!s) { r->oom = 1; return; }
    n->s = s;
    n->len = len;
}

void pm_rv_str(pm_result *r, pm_rv *parent, const char *key, const char *v) {
    if (v) add_bytes(r, parent, key, PM_RV_STR, v, strlen(v));
}

void pm_rv_bytes(pm_result *r, pm_rv *parent, const char *key, const void *p, size_t n) {
    add_bytes(r, parent, key, PM_RV_BYTES, p, n);
}

const pm_rv *pm_rv_get(const pm_rv *obj, const char *key) {
    if (!obj || obj->type != PM_RV_OBJ) return NULL;
    for (const pm_rv *c = obj->first; c; c = c->next)
        if (!strcmp(c->key, key)) return c;
    return NULL;
}

const pm_rv *pm_rv_path(const pm_rv *root, const char *path) {
    if (!root || !path) return NULL;
    const pm_rv *cur = root;
    char part[256];
    const char *p = path;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0 || n >= sizeof part) return NULL;
        memcpy(part, p, n);
        part[n] = '\0';
        if (cur->type == PM_RV_OBJ) cur = pm_rv_get(cur, part);
        else if (cur->type == PM_RV_LIST) {
            char *end;
            unsigned long i = strtoul(part, &end, 10);
            if (*end || part[0] < '0' || part[0] > '9') return NULL;
            const pm_rv *c = cur->first;
            for (unsigned long k = 0; c && k < i; k++) c = c->next;
            cur = c;
        } else return NULL;
        if (!cur || !dot) return cur;
        p = dot + 1;
    }
}

/* A deep copy of v (and its children) under parent, key given (NULL: v's). */
void pm_rv_copy(pm_result *r, pm_rv *parent, const char *key, const pm_rv *v) {
    if (!v || r->oom) return;
    if (!key) key = v->key;
    switch (v->type) {
    case PM_RV_INT: pm_rv_int(r, parent, key, v->i); return;
    case PM_RV_BOOL: pm_rv_bool(r, parent, key, (int)v->i); return;
    case PM_RV_STR: add_bytes(r, parent, key, PM_RV_STR, v->s, v->len); return;
    case PM_RV_BYTES: add_bytes(r, parent, key, PM_RV_BYTES, v->s, v->len); return;
    case PM_RV_LIST:
    case PM_RV_OBJ: {
        pm_rv *c = add(r, parent, key, v->type);
        for (const pm_rv *k = v->first; k && c; k = k->next) pm_rv_copy(r, c, NULL, k);
        return;
    }
    }
}

const char *pm_code_name(int code) {
    switch (code) {
    case PAIMON_IO: return "io";
    case PAIMON_CORRUPT: return "corrupt";
    case PAIMON_NOTFOUND: return "notfound";
    case PAIMON_EXISTS: return "exists";
    case PAIMON_UNSUPPORTED: return "unsupported";
    case PAIMON_CONFLICT: return "conflict";
    case PAIMON_MISUSE: return "misuse";
    case PAIMON_NOMEM: return "nomem";
    case PAIMON_UNCERTAIN: return "uncertain";
    case PAIMON_INTERRUPT: return "interrupted";
    default: return "error";
    }
}
