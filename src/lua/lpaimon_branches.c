/* paimon.core, branches (the operations layer's branches, create_branch,
 * delete_branch, fast_forward; Java's FileSystemBranchManager):
 *   t:branches()                    the names (Java's branches())
 *   t:branches{details = true}      {name, create_time, earliest_snapshot,
 *                                   latest_snapshot, tags} per branch
 *   t:create_branch(name, opts)     opts: from_tag, dry_run
 *   t:delete_branch(name, opts)     opts: threads, dry_run, progress
 *   t:fast_forward(name, opts)      opts: dry_run (into t's branch)
 *   t:rename_branch(old, new, opts) opts: dry_run (never replaces a branch)
 * Each returns the result table, or nil, message, code; misuse raises. */
#include <string.h>

#include "lpaimon.h"

/* opts.details of t:branches (the only option). */
static int want_details(lua_State *L, int idx) {
    if (lua_isnoneornil(L, idx)) return 0;
    luaL_checktype(L, idx, LUA_TTABLE);
    int details = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING || strcmp(lua_tostring(L, -2), "details"))
            luaL_error(L, "branches: unknown option '%s' (known: details)",
                       lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : luaL_typename(L, -2));
        if (!lua_isboolean(L, -1)) luaL_error(L, "details must be a boolean, got %s", luaL_typename(L, -1));
        details = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    return details;
}

static int tbl_branches(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 3);
    if (want_details(L, 2)) {
        pm_op_args args;
        lp_op_options(L, 3, "branches", &args);
        int n = lp_op_run(L, t, &args, NULL, NULL);
        if (n == 1 && lua_istable(L, -1)) lua_getfield(L, -1, "branches");
        return n;
    }
    char **names = NULL;
    size_t n = 0;
    pm_err e = {0};
    int rc = pm_branch_list(t->io, t->root, &names, &n, &e);
    if (rc == PAIMON_NOTFOUND) { rc = 0; n = 0; }
    if (rc) return lp_push_fail(L, rc, &e);
    lp_push_cstrv(L, names, n);
    pm_strv_free(names, n);
    return 1;
}

/* t:<op>(name, opts): the name as the hook, opts through the layer. */
static int branch_op(lua_State *L, const char *op) {
    paimon_table *t = lp_check_table(L, 1);
    const char *name = luaL_checkstring(L, 2);
    lua_settop(L, 3);
    pm_op_args args;
    lp_op_options(L, 3, op, &args);
    pm_op_hooks hooks = {0};
    hooks.branch_name = name;
    lp_progress pr;
    lp_opt_progress(L, 3, &pr, &hooks.progress, &hooks.progress_ud);
    return lp_op_run(L, t, &args, &hooks, &pr);
}

static int tbl_rename_branch(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    const char *from = luaL_checkstring(L, 2);
    const char *to = luaL_checkstring(L, 3);
    lua_settop(L, 4);
    pm_op_args args;
    lp_op_options(L, 4, "rename_branch", &args);
    pm_op_hooks hooks = {0};
    hooks.branch_name = from;
    hooks.new_name = to;
    return lp_op_run(L, t, &args, &hooks, NULL);
}

static int tbl_create_branch(lua_State *L) { return branch_op(L, "create_branch"); }
static int tbl_delete_branch(lua_State *L) { return branch_op(L, "delete_branch"); }
static int tbl_fast_forward(lua_State *L) { return branch_op(L, "fast_forward"); }

static const luaL_Reg branch_methods[] = {
    {"branches", tbl_branches},
    {"create_branch", tbl_create_branch},
    {"delete_branch", tbl_delete_branch},
    {"fast_forward", tbl_fast_forward},
    {"rename_branch", tbl_rename_branch},
    {NULL, NULL},
};

void lp_open_branches(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, branch_methods);
}
