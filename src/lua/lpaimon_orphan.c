/* paimon.core, orphan-file cleaning:
 *   t:remove_orphan_files(opts) -> result table, or nil, message, code
 * opts: older_than (epoch ms or a duration such as "1d": now minus it;
 * default now - 1 day, never in the future, at least the core's floor (1 h)
 * before now unless allow_young_cutoff), threads, dry_run, now (epoch ms),
 * progress = function(phase, done, total). Unknown options raise. The
 * operations layer (pm_ops) parses the options and builds the result. */
#include "lpaimon.h"

static int tbl_remove_orphan_files(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "remove_orphan_files", &args);
    lp_progress pr;
    pm_op_hooks hooks = {0};
    lp_opt_progress(L, 2, &pr, &hooks.progress, &hooks.progress_ud);
    return lp_op_run(L, t, &args, &hooks, &pr);
}

static const luaL_Reg orphan_methods[] = {
    {"remove_orphan_files", tbl_remove_orphan_files},
    {NULL, NULL},
};

void lp_open_orphan(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, orphan_methods);
}
