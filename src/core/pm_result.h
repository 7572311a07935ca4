/* The result of an operation as a small tree of named values (integers,
 * booleans, strings, byte strings, lists, objects), built once by the
 * operations layer (pm_ops) and walked generically by each face: paimon.h
 * renders it as JSON, the Lua binding as Lua tables. Nodes live in the
 * result's arena; a failed allocation sets `oom` and later calls do
 * nothing, so builders check once at the end (pm_result_check). */
#ifndef PM_RESULT_H
#define PM_RESULT_H

#include "pm_common.h"

typedef enum pm_rv_type {
    PM_RV_INT,
    PM_RV_BOOL,
    PM_RV_STR,
    PM_RV_BYTES,      /* binary (a BinaryRow): no JSON form, paimon.h leaves it out */
    PM_RV_LIST,
    PM_RV_OBJ
} pm_rv_type;

typedef struct pm_rv {
    pm_rv_type type;
    const char *key;              /* name in the parent object; NULL in a list */
    int64_t i;                    /* INT, BOOL (0 / 1) */
    const char *s;                /* STR (NUL-ended), BYTES */
    size_t len;                   /* STR, BYTES */
    struct pm_rv *first, *last;   /* LIST, OBJ: children in order */
    struct pm_rv *next;           /* next sibling */
    size_t n;                     /* LIST, OBJ: children */
} pm_rv;

typedef struct pm_result {
    pm_arena *arena;
    pm_rv *root;                  /* an object */
    int oom;
    /* A face that streams a dry run's plan asks for it whole (keep_plan):
     * then the root's "paths" is an empty list and plan holds the files
     * (pm_op_plan_row makes each one's node), owned by the result. */
    int keep_plan;
    struct pm_plan *plan;
    const pm_rv *plan_list;       /* the "paths" list the plan's rows belong to (before its own nodes) */
} pm_result;

pm_result *pm_result_new(void);                       /* NULL: out of memory */
void pm_result_free(pm_result *r);                    /* NULL-safe */
/* An empty root again (the plan stays): a scratch result reused row by row. */
void pm_result_reset(pm_result *r);
/* PAIMON_NOMEM (message set) if any builder call ran out of memory. */
int pm_result_check(const pm_result *r, pm_err *e);

/* Builders: a child of parent (an object: under key; a list: key NULL).
 * Return the new node (NULL after out of memory). */
pm_rv *pm_rv_obj(pm_result *r, pm_rv *parent, const char *key);
pm_rv *pm_rv_list(pm_result *r, pm_rv *parent, const char *key);
void pm_rv_int(pm_result *r, pm_rv *parent, const char *key, int64_t v);
void pm_rv_bool(pm_result *r, pm_rv *parent, const char *key, int v);
void pm_rv_str(pm_result *r, pm_rv *parent, const char *key, const char *v);   /* NULL v: nothing */
void pm_rv_bytes(pm_result *r, pm_rv *parent, const char *key, const void *p, size_t n);

/* A deep copy of v under parent (an object: under key, NULL for v's own). */
void pm_rv_copy(pm_result *r, pm_rv *parent, const char *key, const pm_rv *v);

/* Child of an object by key; NULL if absent or obj is not an object. */
const pm_rv *pm_rv_get(const pm_rv *obj, const char *key);
/* A node by dotted path ("deleted.data", "range.0"): objects by key, lists
 * by a decimal index. NULL if absent. */
const pm_rv *pm_rv_path(const pm_rv *root, const char *path);

/* The short name of a PAIMON_* code, as results and the Lua binding give it
 * ("io", "corrupt", "conflict", ...; "error" for the others). */
const char *pm_code_name(int code);

#endif
