/* paimon.core, read-only table check:
 *   t:verify(opts) -> result table, or nil, message, code
 * opts: all_snapshots (every snapshot, not only each branch's latest),
 * threads, progress = function(phase, done, total).
 * result: ok, branches, snapshots, tags, changelogs, checked = {<kind> = n},
 * files, not_checked (remote files),
 * missing / wrong_size / unreadable = {{path, kind, size, message}},
 * duration_ms. The operations layer (pm_ops) parses the options and
 * builds the result. */
#include "lpaimon.h"

static int tbl_verify(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "verify", &args);
    lp_progress pr;
    pm_op_hooks hooks = {0};
    lp_opt_progress(L, 2, &pr, &hooks.progress, &hooks.progress_ud);
    return lp_op_run(L, t, &args, &hooks, &pr);
}

static const luaL_Reg verify_methods[] = {
    {"verify", tbl_verify},
    {NULL, NULL},
};

void lp_open_verify(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, verify_methods);
}
