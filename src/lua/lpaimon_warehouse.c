/* paimon.core, table discovery (pm_warehouse):
 *   paimon.list_tables(uri[, {database = GLOB, table = GLOB, options = {...}}])
 *     -> array of {database =, table =, path =}, kind ("table", "database",
 *        "warehouse"); or nil, message, code
 * uri: a table, a database directory (<name>.db) or a warehouse, in Java
 * Paimon's filesystem catalog layout. */
#include "lpaimon.h"
#include "pm_warehouse.h"

static int l_list_tables(lua_State *L) {
    const char *uri = luaL_checkstring(L, 1);
    const char *dbp = NULL, *tp = NULL;
    const char *const *options = NULL;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const known[] = {"database", "table", "options", NULL};
        lp_check_options(L, 2, "paimon.list_tables", known);
        lua_getfield(L, 2, "database");
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING) return luaL_argerror(L, 2, "database must be a string");
        dbp = lua_tostring(L, -1);
        lua_getfield(L, 2, "table");
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING) return luaL_argerror(L, 2, "table must be a string");
        tp = lua_tostring(L, -1);
        options = lp_fileio_options(L, 2, "paimon.list_tables");
    }
    pm_err e = {0};
    pm_fileio *io = NULL;
    pm_table_ref *v = NULL;
    size_t n = 0;
    pm_wh_kind kind = PM_WH_WAREHOUSE;
    int rc = pm_fileio_open(uri, options, &io, &e);
    if (!rc) rc = pm_warehouse_tables(io, uri, dbp, tp, &v, &n, &kind, &e);
    pm_fileio_destroy(io);
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 3);
        lua_pushstring(L, v[i].database);
        lua_setfield(L, -2, "database");
        lua_pushstring(L, v[i].table);
        lua_setfield(L, -2, "table");
        lua_pushstring(L, v[i].path);
        lua_setfield(L, -2, "path");
        lua_rawseti(L, -2, (int)i + 1);
    }
    pm_table_refs_free(v, n);
    lua_pushstring(L, pm_wh_kind_name(kind));
    return 2;
}

static const luaL_Reg warehouse_funcs[] = {
    {"list_tables", l_list_tables},
    {NULL, NULL},
};

void lp_open_warehouse(lua_State *L, int module_idx) {
    lua_pushvalue(L, module_idx);
    lp_setfuncs(L, warehouse_funcs);
    lua_pop(L, 1);
}
