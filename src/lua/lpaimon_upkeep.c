/* paimon.core, upkeep (pm_upkeep.h): the commit's upkeep and maintain.lua.
 *   t:upkeep({dry_run, threads, now}, policies) -> result (maintain.lua's run)
 * c:commit() runs it after each commit (lp_upkeep_after_commit). The steps
 * the core leaves to Lua (partition expiration, named policies) are asked
 * of paimon.upkeep's hook(t): a function(step, info) returning a result
 * table (done), false (the core's own step) or nil, message, code. */
#include <string.h>

#include "lpaimon.h"
#include "pm_json.h"
#include "pm_upkeep.h"

typedef struct hook_ud {
    lua_State *L;
    int fn;                       /* stack index of the hook function, 0: none */
} hook_ud;

static int code_of(const char *name) {
    for (int c = PAIMON_ERROR; c <= PAIMON_UNCERTAIN; c++)
        if (name && !strcmp(pm_code_name(c), name)) return c;
    return PAIMON_ERROR;
}

static void to_rv(lua_State *L, int idx, pm_result *r, pm_rv *parent, const char *key, int depth);

/* The string-keyed fields of the table at idx under obj, keys sorted (a
 * stable order). */
static void fill_obj(lua_State *L, int idx, pm_result *r, pm_rv *obj, int depth) {
    lua_newtable(L);
    int keys = lua_gettop(L), nk = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) {
            lua_pushvalue(L, -1);
            lua_rawseti(L, keys, ++nk);
        }
    }
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_pushvalue(L, keys);
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    for (int k = 1; k <= nk && obj; k++) {
        lua_rawgeti(L, keys, k);
        lua_pushvalue(L, -1);
        lua_rawget(L, idx);
        to_rv(L, -1, r, obj, lua_tostring(L, -2), depth + 1);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
}

/* A Lua value (a result table's) as a node under parent. Tables with a
 * positive length are lists, others objects; functions, userdata and
 * paimon.null are left out. */
static void to_rv(lua_State *L, int idx, pm_result *r, pm_rv *parent, const char *key, int depth) {
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    int64_t i;
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: pm_rv_bool(r, parent, key, lua_toboolean(L, idx)); return;
    case LUA_TNUMBER:
        if (lp_toint64(L, idx, &i)) pm_rv_int(r, parent, key, i);
        else pm_rv_str(r, parent, key, lua_tostring(L, idx));
        return;
    case LUA_TSTRING: pm_rv_str(r, parent, key, lua_tostring(L, idx)); return;
    case LUA_TTABLE: {
        if (depth > 16) return;
        size_t n = lp_rawlen(L, idx);
        if (n == 0) {
            fill_obj(L, idx, r, pm_rv_obj(r, parent, key), depth);
            return;
        }
        pm_rv *l = pm_rv_list(r, parent, key);
        for (size_t k = 1; k <= n && l; k++) {
            lua_rawgeti(L, idx, (int)k);
            to_rv(L, -1, r, l, NULL, depth + 1);
            lua_pop(L, 1);
        }
        return;
    }
    default: return;
    }
}

static int hook_cb(void *ud, const pm_upkeep_step *s, pm_result *r, pm_rv *node, pm_err *e) {
    hook_ud *h = ud;
    lua_State *L = h->L;
    if (!h->fn) return PM_UPKEEP_DEFAULT;
    int top = lua_gettop(L);
    lua_pushvalue(L, h->fn);
    lua_pushstring(L, s->name);
    lua_createtable(L, 0, 6);
    lua_pushboolean(L, s->dry_run);
    lua_setfield(L, -2, "dry_run");
    lp_set_int(L, "threads", s->threads);
    lp_set_int(L, "now", s->now_ms);
    lp_set_int(L, "schema_id", s->t->schema->id);
    /* the options as of the latest schema (the Table object the hook holds
     * may have been opened before they changed) */
    lua_createtable(L, 0, (int)s->t->schema->n_options);
    for (size_t i = 0; i < s->t->schema->n_options; i++)
        lp_set_str(L, s->t->schema->options[i].key, s->t->schema->options[i].value);
    lua_setfield(L, -2, "options");
    int rc;
    if (lua_pcall(L, 2, 3, 0) != 0) {
        rc = pm_fail(e, PAIMON_ERROR, "%s: %s", s->name, lp_tolstring(L, -1, NULL));
    } else if (lua_type(L, -3) == LUA_TBOOLEAN && !lua_toboolean(L, -3)) {
        rc = PM_UPKEEP_DEFAULT;
    } else if (lua_istable(L, -3)) {
        fill_obj(L, lua_gettop(L) - 2, r, node, 0);
        rc = PAIMON_OK;
    } else {
        const char *msg = lua_tostring(L, top + 2);
        rc = pm_fail(e, code_of(lua_tostring(L, top + 3)), "%s", msg ? msg : "the upkeep hook failed");
        if (rc == PAIMON_OK) rc = PAIMON_ERROR;
    }
    lua_settop(L, top);
    return rc;
}

/* Push paimon.upkeep's hook for the Table at tidx, with the policies at
 * pidx (0: none); 0 when paimon.upkeep cannot be loaded: the core's steps
 * alone. */
static int push_hook(lua_State *L, int tidx, int pidx) {
    lua_getglobal(L, "require");
    lua_pushstring(L, "paimon.upkeep");
    if (lua_pcall(L, 1, 1, 0) != 0 || !lua_istable(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    lua_getfield(L, -1, "hook");
    lua_remove(L, -2);
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    lua_pushvalue(L, tidx);
    if (pidx) lua_pushvalue(L, pidx);
    else lua_pushnil(L);
    if (lua_pcall(L, 2, 1, 0) != 0) {
        /* a bad policies table (t:upkeep's misuse) raises; otherwise none */
        if (pidx) lua_error(L);
        lua_pop(L, 1);
        return 0;
    }
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return lua_gettop(L);
}

int lp_upkeep_after_commit(lua_State *L, int tidx, paimon_table *t, int64_t *last_check, int64_t identifier) {
    if (tidx < 0) tidx = lua_gettop(L) + tidx + 1;
    int top = lua_gettop(L);
    hook_ud h = {L, push_hook(L, tidx, 0)};
    pm_upkeep_opts o;
    memset(&o, 0, sizeof o);
    o.partition_last_check_ms = last_check;
    o.commit_identifier = identifier;
    o.step = hook_cb;
    o.step_ud = &h;
    pm_result *r = NULL;
    pm_err e = {0};
    int rc = pm_upkeep_run(t, &o, &r, &e);
    lua_settop(L, top);
    if (rc) {
        /* the result itself could not be made: still no failure of the commit */
        lua_createtable(L, 0, 3);
        lp_set_str(L, "error", e.msg);
        lp_set_str(L, "code", pm_code_name(rc));
        lp_set_int(L, "errors", 1);
        return 1;
    }
    lp_push_result(L, r->root);
    pm_result_free(r);
    return 1;
}

/* t:upkeep({dry_run, threads, now}, {expire = policy, partition_expire =
 * policy, tag_expire = policy}) */
static int tbl_upkeep(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 3);
    if (!lua_isnil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    pm_op_args args;
    lp_op_options(L, 2, "upkeep", &args);
    hook_ud h = {L, push_hook(L, 1, lua_isnil(L, 3) ? 0 : 3)};
    pm_op_hooks hooks = {0};
    hooks.upkeep_step = hook_cb;
    hooks.upkeep_ud = &h;
    return lp_op_run(L, t, &args, &hooks, NULL);
}

static const luaL_Reg upkeep_methods[] = {
    {"upkeep", tbl_upkeep},
    {NULL, NULL},
};

void lp_open_upkeep(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, upkeep_methods);
}
