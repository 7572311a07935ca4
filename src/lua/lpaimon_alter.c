/* paimon.core, ALTER TABLE (pm_alter, Java's SchemaManager.commitChanges):
 *   t:alter_table({change, ...}, {dry_run = false})
 *     -> {schema_id = N, dry_run = bool, schema = <schema-N JSON text>}
 * or nil, message, code ("conflict" when a concurrent alter made the change
 * inapplicable). A change is a table {kind = K, ...} with K one of Java's
 * SchemaChange kinds:
 *   setOption {key, value}            removeOption {key}
 *   updateComment {comment}           addColumn {column, type, comment, after | first}
 *   renameColumn {column, new_name}   dropColumn {column}
 *   updateColumnType {column, type}   updateColumnNullability {column, nullable}
 *   updateColumnComment {column, comment}  updateColumnPosition {column, after | first}
 * A refused change (Java's message) raises, as misuse does. The handle takes
 * the new schema: t:schema() and new writers follow it. */
#include "lpaimon.h"

#include "pm_alter.h"

static const char *opt_str(lua_State *L, int idx, const char *k) {
    lua_getfield(L, idx, k);
    const char *s = NULL;
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER)
            luaL_error(L, "alter_table: change field '%s' must be a string", k);
        s = lua_tostring(L, -1);
    }
    lua_pop(L, 1);       /* the string stays alive in the change table */
    return s;
}

static int opt_bool(lua_State *L, int idx, const char *k) {
    lua_getfield(L, idx, k);
    int b = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return b;
}

static pm_alter_kind kind_of(lua_State *L, const char *k) {
    static const char *const names[] = {"setOption", "removeOption", "updateComment", "addColumn",
                                        "renameColumn", "dropColumn", "updateColumnType",
                                        "updateColumnNullability", "updateColumnComment",
                                        "updateColumnPosition", NULL};
    for (int i = 0; names[i]; i++) if (!strcmp(names[i], k)) return (pm_alter_kind)i;
    luaL_error(L, "alter_table: unknown change kind '%s' (Java's SchemaChange kinds: setOption, removeOption, "
               "updateComment, addColumn, renameColumn, dropColumn, updateColumnType, updateColumnNullability, "
               "updateColumnComment, updateColumnPosition)", k);
    return PM_ALTER_SET_OPTION;
}

static int tbl_alter_table(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    int dry_run = 0;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        static const char *const known[] = {"dry_run", NULL};
        lp_check_options(L, 3, "alter_table", known);
        dry_run = opt_bool(L, 3, "dry_run");
    }
    size_t n = (size_t)lp_rawlen(L, 2);
    if (!n) return luaL_error(L, "alter_table: no changes");
    pm_schema_change *c = lua_newuserdata(L, n * sizeof *c);   /* collected with the call */
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        int idx = lua_gettop(L);
        if (!lua_istable(L, idx)) return luaL_error(L, "alter_table: change %d is not a table", (int)i + 1);
        static const char *const known[] = {"kind", "key", "value", "comment", "column", "type", "new_name",
                                            "after", "first", "nullable", NULL};
        lp_check_options(L, idx, "alter_table change", known);
        const char *k = opt_str(L, idx, "kind");
        if (!k) return luaL_error(L, "alter_table: change %d has no kind", (int)i + 1);
        memset(&c[i], 0, sizeof c[i]);
        c[i].kind = kind_of(L, k);
        switch (c[i].kind) {
        case PM_ALTER_SET_OPTION: case PM_ALTER_REMOVE_OPTION:
            c[i].name = opt_str(L, idx, "key");
            c[i].value = opt_str(L, idx, "value");
            break;
        case PM_ALTER_UPDATE_COMMENT:
            c[i].value = opt_str(L, idx, "comment");
            break;
        case PM_ALTER_RENAME_COLUMN:
            c[i].name = opt_str(L, idx, "column");
            c[i].value = opt_str(L, idx, "new_name");
            break;
        default:
            c[i].name = opt_str(L, idx, "column");
            c[i].value = opt_str(L, idx, "type");
            c[i].comment = opt_str(L, idx, "comment");
            c[i].after = opt_str(L, idx, "after");
            c[i].first = opt_bool(L, idx, "first");
            c[i].nullable = opt_bool(L, idx, "nullable");
        }
        /* the change table stays referenced by argument 2, its strings with it */
        lua_pop(L, 1);
    }
    pm_err e;
    pm_err_clear(&e);
    pm_schema *s = NULL;
    int rc = pm_alter_table(t, c, n, dry_run, &s, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    pm_buf json = {0};
    if (pm_schema_to_json(s, &json)) { pm_schema_free(s); pm_buf_free(&json); return luaL_error(L, "out of memory"); }
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)s->id);
    lua_setfield(L, -2, "schema_id");
    lua_pushboolean(L, dry_run);
    lua_setfield(L, -2, "dry_run");
    lua_pushlstring(L, (const char *)json.data, json.len);
    lua_setfield(L, -2, "schema");
    pm_buf_free(&json);
    pm_schema_free(s);
    return 1;
}

static const luaL_Reg alter_methods[] = {
    {"alter_table", tbl_alter_table},
    {NULL, NULL},
};

void lp_open_alter(lua_State *L, int module_idx) {
    (void)module_idx;
    lp_add_table_methods(L, alter_methods);
}
