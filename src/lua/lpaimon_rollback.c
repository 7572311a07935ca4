/* paimon.core, rollback and consumers (the operations layer, pm_ops, parses
 * the options and builds the results):
 *   t:rollback{to_snapshot = N | to_tag = "t" | to_timestamp = ms | to_watermark = W,
 *              as_latest, purge_files, dry_run, threads, commit_user, progress}
 *   t:purge_files{dry_run, threads, commit_user, progress}
 * (t:consumers(), the list, is the read side's: lpaimon.c)
 *   t:reset_consumer(id, n)       -> {id, next_snapshot, previous}
 *   t:delete_consumer(id)         -> {id, deleted}
 *   t:expire_consumers{expiration = "7d", dry_run, now}
 *   t:clear_consumers{include = "job-.*", exclude = "keep", dry_run}
 * Each returns its result table, or nil, message, code. */
#include "lpaimon.h"

static int tbl_rollback(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "rollback", &args);
    lp_progress pr;
    pm_op_hooks hooks = {0};
    lp_opt_progress(L, 2, &pr, &hooks.progress, &hooks.progress_ud);
    return lp_op_run(L, t, &args, &hooks, &pr);
}

/* t:purge_files{dry_run, threads, commit_user, progress} (Java's purge_files). */
static int tbl_purge_files(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "purge_files", &args);
    lp_progress pr;
    pm_op_hooks hooks = {0};
    lp_opt_progress(L, 2, &pr, &hooks.progress, &hooks.progress_ud);
    return lp_op_run(L, t, &args, &hooks, &pr);
}

/* Positional arguments as the layer's pairs (id, then an optional integer). */
static int consumer_op(lua_State *L, const char *op, int with_next) {
    paimon_table *t = lp_check_table(L, 1);
    const char *id = luaL_checkstring(L, 2);
    pm_opt_in in[3] = {{"id", PM_OV_TEXT, id, 0, NULL}, {"next_snapshot", PM_OV_INT, NULL, 0, NULL}};
    if (with_next && !lp_toint64(L, 3, &in[1].i)) luaL_argerror(L, 3, "next snapshot must be an integer");
    /* an options table last: {dry_run = true} */
    int oi = with_next ? 4 : 3, n = with_next ? 2 : 1;
    if (!lua_isnoneornil(L, oi)) {
        luaL_checktype(L, oi, LUA_TTABLE);
        lua_getfield(L, oi, "dry_run");
        if (!lua_isnil(L, -1)) {
            if (!lua_isboolean(L, -1)) luaL_argerror(L, oi, "option 'dry_run' must be a boolean");
            in[n] = (pm_opt_in){"dry_run", PM_OV_BOOL, NULL, lua_toboolean(L, -1), NULL};
            n++;
        }
        lua_pop(L, 1);
    }
    pm_op_args args;
    pm_err e;
    pm_err_clear(&e);
    if (pm_op_parse(pm_op_find(op), PM_FACE_LUA, in, n, &args, &e)) return luaL_error(L, "%s", e.msg);
    return lp_op_run(L, t, &args, NULL, NULL);
}

static int tbl_reset_consumer(lua_State *L) { return consumer_op(L, "reset_consumer", 1); }
static int tbl_delete_consumer(lua_State *L) { return consumer_op(L, "delete_consumer", 0); }

static int tbl_expire_consumers(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "expire_consumers", &args);
    return lp_op_run(L, t, &args, NULL, NULL);
}

static int tbl_clear_consumers(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "clear_consumers", &args);
    return lp_op_run(L, t, &args, NULL, NULL);
}

static const luaL_Reg rollback_methods[] = {
    {"rollback", tbl_rollback},
    {"purge_files", tbl_purge_files},
    {"reset_consumer", tbl_reset_consumer},
    {"delete_consumer", tbl_delete_consumer},
    {"expire_consumers", tbl_expire_consumers},
    {"clear_consumers", tbl_clear_consumers},
    {NULL, NULL},
};

void lp_open_rollback(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, rollback_methods);
}
