/* paimon.core, long-lived changelogs (decoupled changelog lifecycle):
 *   t:changelogs()            the changelog/changelog-<id> of the table's
 *                             branch, ascending: a list of snapshot objects
 *   t:expire_changelogs(opts) opts: retain_min, retain_max, older_than,
 *                             max_deletes, threads, dry_run, now, progress
 *                             (Java's ExpireChangelogImpl; pm_changelog.h)
 * Each returns its result, or nil, message, code; misuse raises. */
#include "lpaimon.h"

static int tbl_changelogs(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    int64_t *ids = NULL;
    size_t n = 0;
    pm_err e = {0};
    int rc = pm_changelog_list_ids(t->io, t->branch_root, &ids, &n, &e);
    if (rc == PAIMON_NOTFOUND) { rc = 0; n = 0; }
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        pm_snapshot *s;
        if ((rc = pm_changelog_read(t->io, t->branch_root, ids[i], &s, &e))) { free(ids); return lp_push_fail(L, rc, &e); }
        lp_push_snap(L, 1, s, NULL);
        lua_rawseti(L, -2, (int)i + 1);
    }
    free(ids);
    return 1;
}

static int tbl_expire_changelogs(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_op_args args;
    lp_op_options(L, 2, "expire_changelogs", &args);
    pm_op_hooks hooks = {0};
    lp_progress pr;
    lp_opt_progress(L, 2, &pr, &hooks.progress, &hooks.progress_ud);
    return lp_op_run(L, t, &args, &hooks, &pr);
}

static const luaL_Reg changelog_methods[] = {
    {"changelogs", tbl_changelogs},
    {"expire_changelogs", tbl_expire_changelogs},
    {NULL, NULL},
};

void lp_open_changelogs(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, changelog_methods);
}
