/* paimon.core, maintenance: snapshot expiration.
 *   t:expire_range(opts)      -> the range Java's rules would expire (for policies)
 *   t:expire_snapshots(opts)  -> result table, or nil, message, code
 * opts: retain_min, retain_max, older_than (epoch ms, or a duration such as
 * "1h": now minus it), max_deletes, keep_from (exclusive end chosen by a
 * policy; `until` is its old name), threads, dry_run, now (epoch ms),
 * clean_empty_directories (default: the table option, false),
 * progress = function(phase, done, total), paths_handle (a dry run's paths
 * stay in C: a paimon.PathList, lpaimon_json.c), and for expire_snapshots
 * policy = function(snapshots, ctx), {expire = function} or a policy file
 * (as expire.lua --policy). Unknown options raise. */
#include <stdlib.h>
#include <string.h>

#include "lpaimon.h"
#include "pm_meta.h"


void lp_progress_cb(void *ud, const char *phase, size_t done, size_t total) {
    lp_progress *p = ud;
    lua_State *L = p->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref);
    lua_pushstring(L, phase);
    lua_pushinteger(L, (lua_Integer)done);
    lua_pushinteger(L, (lua_Integer)total);
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) lua_pop(L, 1);   /* a broken progress callback never stops a cleanup */
}

void lp_opt_progress(lua_State *L, int idx, lp_progress *pr, pm_progress_fn *fn, void **ud) {
    pr->L = L;
    pr->ref = LUA_NOREF;
    if (lua_isnoneornil(L, idx)) return;
    lua_getfield(L, idx, "progress");
    if (lua_isfunction(L, -1)) {
        pr->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        *fn = lp_progress_cb;
        *ud = pr;
        return;
    }
    if (!lua_isnil(L, -1)) luaL_error(L, "option 'progress' must be a function");
    lua_pop(L, 1);
}

void lp_progress_release(lp_progress *pr) {
    if (pr->ref != LUA_NOREF) luaL_unref(pr->L, LUA_REGISTRYINDEX, pr->ref);
    pr->ref = LUA_NOREF;
}

/* ---- the operations layer's face in Lua --------------------------------- */

/* The layer's kind of the value at the stack top (its integer in *i). */
static pm_opt_kind value_kind(lua_State *L, int64_t *i) {
    switch (lua_type(L, -1)) {
    case LUA_TBOOLEAN: *i = lua_toboolean(L, -1); return PM_OV_BOOL;
    case LUA_TSTRING: return PM_OV_TEXT;
    case LUA_TNUMBER: return lp_toint64(L, -1, i) ? PM_OV_INT : PM_OV_OTHER;
    default: return PM_OV_OTHER;
    }
}

void lp_op_options(lua_State *L, int idx, const char *what, pm_op_args *args) {
    if (!lua_isnoneornil(L, idx)) luaL_checktype(L, idx, LUA_TTABLE);
    int given = !lua_isnoneornil(L, idx);
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    /* first pass: names are strings; how much to copy */
    size_t n = 0, bytes = 0;
    if (given) {
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            if (lua_type(L, -2) != LUA_TSTRING) {
                lua_pop(L, 1);
                luaL_error(L, "%s: option names must be strings, got %s", what, lp_tolstring(L, -1, NULL));
            }
            bytes += lp_rawlen(L, -2) + 1;
            if (lua_type(L, -1) == LUA_TSTRING) bytes += lp_rawlen(L, -1) + 1;
            lua_pop(L, 1);
            n++;
        }
    }
    /* second pass: one block holds the pairs and the copied strings */
    pm_opt_in *in = lua_newuserdata(L, n * sizeof *in + bytes + 1);
    char *text = (char *)(in + n);
    size_t i = 0;
    if (given) {
        lua_pushnil(L);
        while (i < n && lua_next(L, idx)) {
            pm_opt_in *o = &in[i++];
            memset(o, 0, sizeof *o);
            size_t len;
            const char *k = lua_tolstring(L, -2, &len);   /* a string key: no conversion in place */
            memcpy(text, k, len + 1);
            o->key = text;
            text += len + 1;
            o->kind = value_kind(L, &o->i);
            if (o->kind == PM_OV_TEXT) {
                const char *v = lua_tolstring(L, -1, &len);
                memcpy(text, v, len + 1);
                o->text = text;
                text += len + 1;
            } else if (o->kind == PM_OV_OTHER) {
                o->type_name = luaL_typename(L, -1);
            }
            lua_pop(L, 1);
        }
        if (i == n && n) lua_pop(L, 1);   /* the key lua_next left */
    }
    pm_err e;
    pm_err_clear(&e);
    if (pm_op_parse(pm_op_find(what), PM_FACE_LUA, in, i, args, &e)) luaL_error(L, "%s", e.msg);
}

/* The result tree at v as Lua values: objects and lists as tables,
 * integers exact, byte strings as strings. */
void lp_push_result(lua_State *L, const pm_rv *v) {
    switch (v->type) {
    case PM_RV_INT: lp_pushint64(L, v->i); break;
    case PM_RV_BOOL: lua_pushboolean(L, (int)v->i); break;
    case PM_RV_STR:
    case PM_RV_BYTES: lua_pushlstring(L, v->s, v->len); break;
    case PM_RV_LIST: {
        lua_createtable(L, (int)v->n, 0);
        int k = 1;
        for (const pm_rv *c = v->first; c; c = c->next) {
            lp_push_result(L, c);
            lua_rawseti(L, -2, k++);
        }
        break;
    }
    case PM_RV_OBJ:
        lua_createtable(L, 0, (int)v->n);
        for (const pm_rv *c = v->first; c; c = c->next) {
            lp_push_result(L, c);
            lua_setfield(L, -2, c->key);
        }
        break;
    }
}

/* Run the parsed operation on t and push its result (or nil, message,
 * code; misuse raises); pr (may be NULL) is released first. */
int lp_op_run(lua_State *L, paimon_table *t, const pm_op_args *args, const pm_op_hooks *hooks, lp_progress *pr) {
    pm_result *res = NULL;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_op_run(t, args, hooks, &res, &e);
    if (pr) lp_progress_release(pr);   /* before a misuse raises */
    if (rc) return lp_push_fail(L, rc, &e);
    if (args->has[PM_O_PATHS_HANDLE] && args->v[PM_O_PATHS_HANDLE]) {
        lp_push_result_keeping_paths(L, res);
        return 1;
    }
    lp_push_result(L, res->root);
    pm_result_free(res);
    return 1;
}

static int tbl_expire_range(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "expire_range", &args);
    lp_progress pr;
    pm_op_hooks hooks = {0};
    lp_opt_progress(L, 2, &pr, &hooks.progress, &hooks.progress_ud);
    lp_progress_release(&pr);   /* checked only: computing the range reports none */
    hooks.progress = NULL;
    return lp_op_run(L, t, &args, &hooks, NULL);
}

/* With a policy, the runner paimon.expire.run asks it and then calls this
 * method again with the end it chose (one runner for every face). A policy
 * that failed raises here, as it always did for this method. */
static int expire_with_policy(lua_State *L) {
    lua_settop(L, 2);
    lua_getglobal(L, "require");
    lua_pushstring(L, "paimon.expire");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "run");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 4);
    if (!lua_isnil(L, -4)) { lua_pop(L, 3); return 1; }
    if (lua_toboolean(L, -1)) { lua_pop(L, 2); return lua_error(L); }
    lua_pop(L, 1);
    return 3;
}

static int tbl_expire_snapshots(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "expire_snapshots", &args);
    pm_op_hooks hooks = {0};
    if (!lua_isnil(L, 2)) {
        lua_getfield(L, 2, "policy");
        int has_policy = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (has_policy) return expire_with_policy(L);
    }
    lp_progress pr;
    lp_opt_progress(L, 2, &pr, &hooks.progress, &hooks.progress_ud);
    return lp_op_run(L, t, &args, &hooks, &pr);
}

/* paimon.core.now_ms(): the clock in epoch milliseconds (os.time has seconds). */
static int core_now_ms(lua_State *L) {
    lp_pushint64(L, pm_now_millis());
    return 1;
}

static const luaL_Reg maint_methods[] = {
    {"expire_range", tbl_expire_range},
    {"expire_snapshots", tbl_expire_snapshots},
    {NULL, NULL},
};

void lp_open_maint(lua_State *L, int module_idx) {
    lp_add_table_methods(L, maint_methods);
    lua_pushcfunction(L, core_now_ms);
    lua_setfield(L, module_idx, "now_ms");
}
