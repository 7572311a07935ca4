/* paimon.core, orphan-file cleaning:
 *   t:remove_orphan_files(opts) -> result table, or nil, message, code
 * opts: older_than (epoch ms or a duration such as "1d": now minus it;
 * default now - 1 day, never in the future, at least the core's floor (1 h)
 * before now unless allow_young_cutoff), threads, dry_run, now (epoch ms),
 * progress = function(phase, done, total). Unknown options raise. */
#include <string.h>

#include "lpaimon.h"
#include "pm_orphan.h"


static int tbl_remove_orphan_files(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"older_than", "threads", "now", "dry_run", "allow_young_cutoff", "progress", NULL};
    lp_check_options(L, 2, "remove_orphan_files", known);
    pm_orphan_opts o;
    memset(&o, 0, sizeof o);
    int64_t v;
    if (lp_opt_int(L, 2, "now", &v)) o.now_ms = v;
    if (lp_opt_cutoff(L, 2, "older_than", o.now_ms ? o.now_ms : pm_now_millis(), &v)) { o.has_older_than = 1; o.older_than_ms = v; }
    if (lp_opt_int(L, 2, "threads", &v)) { if (v < 1 || v > 256) luaL_error(L, "threads must be between 1 and 256"); o.threads = (int)v; }
    o.dry_run = lp_opt_bool(L, 2, "dry_run");
    o.allow_young_cutoff = lp_opt_bool(L, 2, "allow_young_cutoff");
    lp_progress pr;
    lp_opt_progress(L, 2, &pr, &o.progress, &o.progress_ud);
    pm_orphan_result res;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_remove_orphan_files(t, &o, &res, &e);
    lp_progress_release(&pr);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_push_clean_result(L, &res.clean);
    lp_set_int(L, "older_than", res.older_than_ms);
    lp_set_int(L, "cutoff_floor", res.cutoff_floor_ms);
    lp_set_bool(L, "floor_overridden", res.floor_overridden);
    lp_set_int(L, "listed", res.listed);
    lp_set_int(L, "used", res.used);
    lp_set_int(L, "candidates", res.candidates);
    lp_set_int(L, "recent", res.recent);
    lp_set_int(L, "manifests_read", res.manifests_read);
    lp_set_int(L, "manifests_skipped", res.manifests_skipped);
    pm_clean_result_free(&res.clean);
    return 1;
}

static const luaL_Reg orphan_methods[] = {
    {"remove_orphan_files", tbl_remove_orphan_files},
    {NULL, NULL},
};

void lp_open_orphan(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, orphan_methods);
}
