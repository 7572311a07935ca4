/* paimon.core, tags (the operations layer's create_tag, delete_tags,
 * rename_tag, expire_tags):
 *   t:create_tag(name, opts)        opts: snapshot, timestamp (epoch ms),
 *                                   watermark, time_retained ("1d"), dry_run, now
 *   t:replace_tag(name, opts)       opts: snapshot (else the latest),
 *                                   time_retained, dry_run, now (Java replace_tag)
 *   t:delete_tags({names}, opts)    opts: threads, dry_run, progress
 *   t:rename_tag(old, new)
 *   t:expire_tags(opts)             opts: older_than, num_retained_max,
 *                                   threads, dry_run, now, progress, policy
 *                                   (asked by paimon.tag_expire), exact (the
 *                                   names a policy chose)
 *   t:auto_tags(opts)               opts: dry_run, now_ms (or now), threads,
 *                                   progress: Java's TagAutoCreation by the
 *                                   table's tag.* options
 * Each returns the result table, or nil, message, code; misuse raises. */
#include "lpaimon.h"

/* The strings of the list at idx (kept alive by it) into a userdata block
 * left on the stack. */
static const char **names_of(lua_State *L, int idx, const char *what, size_t *n) {
    luaL_checktype(L, idx, LUA_TTABLE);
    *n = lp_rawlen(L, idx);
    const char **v = lua_newuserdata(L, (*n ? *n : 1) * sizeof *v);
    for (size_t i = 0; i < *n; i++) {
        lua_rawgeti(L, idx, (int)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "%s: tag names must be strings (item %d)", what, (int)i + 1);
        v[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    return v;
}

static int run_with(lua_State *L, paimon_table *t, pm_op_args *args, pm_op_hooks *hooks, int opts_idx) {
    lp_progress pr;
    lp_opt_progress(L, opts_idx, &pr, &hooks->progress, &hooks->progress_ud);
    return lp_op_run(L, t, args, hooks, &pr);
}

static int create_or_replace(lua_State *L, const char *op) {
    paimon_table *t = lp_check_table(L, 1);
    const char *name = luaL_checkstring(L, 2);
    lua_settop(L, 3);
    pm_op_args args;
    lp_op_options(L, 3, op, &args);
    pm_op_hooks hooks = {0};
    hooks.tags = &name;
    hooks.n_tags = 1;
    hooks.has_tags = 1;
    return lp_op_run(L, t, &args, &hooks, NULL);
}

static int tbl_create_tag(lua_State *L) { return create_or_replace(L, "create_tag"); }
static int tbl_replace_tag(lua_State *L) { return create_or_replace(L, "replace_tag"); }

static int tbl_delete_tags(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 3);
    size_t n;
    const char **names = names_of(L, 2, "delete_tags", &n);
    pm_op_args args;
    lp_op_options(L, 3, "delete_tags", &args);
    pm_op_hooks hooks = {0};
    hooks.tags = names;
    hooks.n_tags = n;
    hooks.has_tags = 1;
    return run_with(L, t, &args, &hooks, 3);
}

static int tbl_rename_tag(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    const char *from = luaL_checkstring(L, 2);
    const char *to = luaL_checkstring(L, 3);
    lua_settop(L, 4);   /* {dry_run = true} */
    pm_op_args args;
    lp_op_options(L, 4, "rename_tag", &args);
    pm_op_hooks hooks = {0};
    hooks.tags = &from;
    hooks.n_tags = 1;
    hooks.has_tags = 1;
    hooks.new_name = to;
    return lp_op_run(L, t, &args, &hooks, NULL);
}

/* With a policy: the runner paimon.tag_expire.run asks it, then calls this
 * method again with its choice as `exact`. */
static int expire_with_policy(lua_State *L) {
    lua_settop(L, 2);
    lua_getglobal(L, "require");
    lua_pushstring(L, "paimon.tag_expire");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "run");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 3);
    return 3;
}

static int tbl_expire_tags(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "expire_tags", &args);   /* checks every name first */
    pm_op_hooks hooks = {0};
    if (!lua_isnil(L, 2)) {
        lua_getfield(L, 2, "policy");
        int has_policy = !lua_isnil(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, 2, "exact");
        int has_exact = !lua_isnil(L, -1);
        if (has_policy && has_exact) luaL_error(L, "expire_tags: options 'policy' and 'exact' exclude each other");
        if (has_policy) return expire_with_policy(L);
        if (has_exact) {
            hooks.tags = names_of(L, lua_gettop(L), "expire_tags: exact", &hooks.n_tags);
            hooks.has_tags = 1;
        }
    }
    return run_with(L, t, &args, &hooks, 2);
}

static int tbl_auto_tags(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "auto_tags", &args);
    pm_op_hooks hooks = {0};
    return run_with(L, t, &args, &hooks, 2);
}

static const luaL_Reg tag_methods[] = {
    {"create_tag", tbl_create_tag},
    {"delete_tags", tbl_delete_tags},
    {"rename_tag", tbl_rename_tag},
    {"replace_tag", tbl_replace_tag},
    {"expire_tags", tbl_expire_tags},
    {"auto_tags", tbl_auto_tags},
    {NULL, NULL},
};

void lp_open_tags(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, tag_methods);
}
