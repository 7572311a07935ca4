/* paimon.core, read-only table check:
 *   t:verify(opts) -> result table, or nil, message, code
 * opts: all_snapshots (every snapshot, not only each branch's latest),
 * threads, progress = function(phase, done, total).
 * result: ok, branches, snapshots, tags, changelogs, checked = {<kind> = n},
 * files, not_checked (remote files),
 * missing / wrong_size / unreadable = {{path, kind, size, message}},
 * duration_ms. */
#include <string.h>

#include "lpaimon.h"
#include "pm_verify.h"

static void push_problems(lua_State *L, const char *k, const pm_clean_item *v, size_t n) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 4);
        lp_set_str(L, "path", v[i].path);
        lp_set_str(L, "kind", pm_verify_kind_name(v[i].kind));
        lp_set_int(L, "size", v[i].size);
        lp_set_str(L, "message", v[i].msg);
        lua_rawseti(L, -2, (int)i + 1);
    }
    lua_setfield(L, -2, k);
}

static int tbl_verify(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"all_snapshots", "threads", "progress", NULL};
    lp_check_options(L, 2, "verify", known);
    pm_verify_opts o;
    memset(&o, 0, sizeof o);
    int64_t v;
    if (lp_opt_int(L, 2, "threads", &v)) { if (v < 1 || v > 256) luaL_error(L, "threads must be between 1 and 256"); o.threads = (int)v; }
    o.all_snapshots = lp_opt_bool(L, 2, "all_snapshots");
    lp_progress pr;
    lp_opt_progress(L, 2, &pr, &o.progress, &o.progress_ud);
    pm_verify_result res;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_verify(t, &o, &res, &e);
    lp_progress_release(&pr);
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, 0, 10);
    lp_set_bool(L, "ok", res.n_missing == 0 && res.n_wrong_size == 0 && res.n_unreadable == 0);
    lp_set_int(L, "branches", res.branches);
    lp_set_int(L, "snapshots", res.snapshots);
    lp_set_int(L, "tags", res.tags);
    lp_set_int(L, "changelogs", res.changelogs);
    lp_set_int(L, "not_checked", res.not_checked);
    int64_t files = 0;
    lua_createtable(L, 0, PM_K__N + 1);
    for (int k = 0; k <= PM_VERIFY_SCHEMA; k++) { lp_set_int(L, pm_verify_kind_name(k), res.checked[k]); files += res.checked[k]; }
    lua_setfield(L, -2, "checked");
    lp_set_int(L, "files", files);
    push_problems(L, "missing", res.missing, res.n_missing);
    push_problems(L, "wrong_size", res.wrong_size, res.n_wrong_size);
    push_problems(L, "unreadable", res.unreadable, res.n_unreadable);
    lp_set_int(L, "duration_ms", res.duration_ms);
    pm_verify_result_free(&res);
    return 1;
}

static const luaL_Reg verify_methods[] = {
    {"verify", tbl_verify},
    {NULL, NULL},
};

void lp_open_verify(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, verify_methods);
}
