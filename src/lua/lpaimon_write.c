/* paimon.core, write side: table creation, writers, commits and reading
 * rows back (snapshot:read). Messages between write and commit are plain
 * Lua tables shaped like the read side's entries. See docs/writing.md. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lpaimon.h"
#include "pm_commit.h"
#include "pm_create.h"
#include "pm_datafile.h"
#include "pm_deleter.h"
#include "pm_read.h"
#include "pm_write.h"

#define WRITE_MT "paimon.Write"
#define COMMIT_MT "paimon.Commit"
#define ROWS_MT "paimon.RowIterator"

static int absidx(lua_State *L, int i) {
    return (i > 0 || i <= LUA_REGISTRYINDEX) ? i : lua_gettop(L) + i + 1;
}

static int is_null_value(lua_State *L, int i) {
    return lua_isnoneornil(L, i) || (lua_type(L, i) == LUA_TLIGHTUSERDATA && !lua_touserdata(L, i));
}

/* Push the owner (uservalue 1) of the userdata at idx. */
static void push_owner(lua_State *L, int idx) {
    lp_getowner(L, idx);
}

/* ---- Lua values -> paimon_value ----------------------------------------------
 * Only the mapping lives here; the type rules and their messages are the
 * core's (pm_value.c), shared with paimon.h. Tables are read as the
 * column's type shapes them: ARRAY items 1..#t, MAP pairs in table.sort
 * order of the keys, ROW pairs; a table where an atomic value is expected
 * is "table". */

static void *arena_alloc_checked(lua_State *L, pm_arena *a, size_t n) {
    void *p = pm_arena_alloc(a, n ? n : 1);
    if (!p) luaL_error(L, "out of memory");
    memset(p, 0, n ? n : 1);
    return p;
}

/* Keys of the table at i, sorted (table.sort), as an array at the stack top. */
static void sorted_keys(lua_State *L, int i, const char *col) {
    lua_newtable(L);
    int k = 0;
    lua_pushnil(L);
    while (lua_next(L, i)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, ++k);
    }
    lua_getglobal(L, "table");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "sort");
        lua_pushvalue(L, -3);
        if (lua_pcall(L, 1, 0, 0) != 0) luaL_error(L, "column '%s': map keys of mixed types cannot be ordered", col);
    }
    lua_pop(L, 1);
}

static void to_value(lua_State *L, int i, const pm_type *ty, pm_arena *a, paimon_value *v, const char *col, int depth);

static void table_to_value(lua_State *L, int i, const pm_type *ty, pm_arena *a, paimon_value *v, const char *col, int depth) {
    if (depth > 64) luaL_error(L, "column '%s': value nested too deeply", col);
    luaL_checkstack(L, 10, "nested value");
    if (ty->root == PM_T_ARRAY) {
        size_t n = lp_rawlen(L, i);
        paimon_value *items = arena_alloc_checked(L, a, n * sizeof *items);
        for (size_t k = 0; k < n; k++) {
            lua_rawgeti(L, i, (int)k + 1);
            to_value(L, -1, ty->element, a, &items[k], col, depth + 1);
            lua_pop(L, 1);
        }
        *v = paimon_array(items, n);
        return;
    }
    size_t n = 0;
    if (ty->root == PM_T_ROW) {
        lua_pushnil(L);
        while (lua_next(L, i)) { n++; lua_pop(L, 1); }
    } else {
        sorted_keys(L, i, col);
        n = lp_rawlen(L, -1);
    }
    paimon_value *keys = arena_alloc_checked(L, a, n * sizeof *keys);
    paimon_value *vals = arena_alloc_checked(L, a, n * sizeof *vals);
    if (ty->root == PM_T_ROW) {
        size_t k = 0;
        lua_pushnil(L);
        while (lua_next(L, i)) {
            if (k == n) { lua_pop(L, 2); break; }   /* grown meanwhile: the core sees the pairs counted */
            const pm_type *ft = NULL;   /* a name the type lacks: the core refuses it */
            if (lua_type(L, -2) == LUA_TSTRING)
                for (size_t f = 0; f < ty->n_fields && !ft; f++)
                    if (!strcmp(ty->fields[f].name, lua_tostring(L, -2))) ft = ty->fields[f].type;
            to_value(L, -2, NULL, a, &keys[k], col, depth + 1);
            to_value(L, -1, ft, a, &vals[k], col, depth + 1);
            k++;
            lua_pop(L, 1);
        }
    } else {
        pm_type counts;   /* a MULTISET counts each element: MAP<T, INT> */
        memset(&counts, 0, sizeof counts);
        counts.root = PM_T_INT;
        counts.nullable = 1;
        const pm_type *vt = ty->root == PM_T_MAP ? ty->value : &counts;
        int kidx = lua_gettop(L);
        for (size_t k = 0; k < n; k++) {
            lua_rawgeti(L, kidx, (int)k + 1);
            to_value(L, -1, ty->element, a, &keys[k], col, depth + 1);
            lua_gettable(L, i);
            to_value(L, -1, vt, a, &vals[k], col, depth + 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);   /* the keys (each still referenced by the table) */
    }
    *v = paimon_map(keys, vals, n);
}

/* Lua value at i -> value v for a column of type ty (NULL: any atomic).
 * Strings are not copied: the value must stay referenced while v is used.
 * a (may be NULL for atomic types) holds the items of tables. */
static void to_value(lua_State *L, int i, const pm_type *ty, pm_arena *a, paimon_value *v, const char *col, int depth) {
    i = absidx(L, i);
    memset(v, 0, sizeof *v);
    if (is_null_value(L, i)) { v->kind = PAIMON_VALUE_NULL; return; }
    switch (lua_type(L, i)) {
    case LUA_TBOOLEAN:
        *v = paimon_bool(lua_toboolean(L, i));
        return;
    case LUA_TNUMBER:
        if (lp_is_lua_integer(L, i)) { *v = paimon_int((int64_t)lua_tointeger(L, i)); return; }
        *v = paimon_double((double)lua_tonumber(L, i));
#if LUA_VERSION_NUM == 501
        /* no integer subtype: integral doubles below 2^53 are exact
         * integers; larger ones keep LuaJIT's rendering in messages */
        if (fabs(v->v.d) < 9007199254740992.0 && v->v.d == floor(v->v.d)) *v = paimon_int((int64_t)v->v.d);
        else if (a && lp_num_is_int64(v->v.d)) {
            size_t len;
            const char *s = lp_tolstring(L, i, &len);
            v->text = pm_arena_strndup(a, s, len);
            lua_pop(L, 1);
        }
#endif
        return;
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, i, &len);
        *v = paimon_bytes(s, len);
        return;
    }
    case LUA_TTABLE:
        if (ty && a && pm_type_is_composite(ty)) { table_to_value(L, i, ty, a, v, col, depth); return; }
        /* fall through */
    default:
        v->kind = PAIMON_VALUE_OTHER;
        v->text = luaL_typename(L, i);   /* a static string */
        return;
    }
}

/* Lua value at i -> exact int64 (pm_value_int64's rule): 1 if it is one. */
static int lua_int64(lua_State *L, int i, int64_t *out) {
    paimon_value v;
    to_value(L, i, NULL, NULL, &v, "", 0);
    return pm_value_int64(&v, out) == PM_INT_OK;
}

/* Lua value at i -> datum of the atomic type ty; raises with the core's
 * message naming the column on a bad value. */
static void to_datum(lua_State *L, int i, const pm_type *ty, const char *col, pm_datum *d, uint8_t *dec) {
    paimon_value v;
    to_value(L, i, ty, NULL, &v, col, 0);
    pm_err e = {0};
    if (pm_value_to_datum(&v, ty, col, d, dec, &e)) lp_raise(L, &e);
}
/* ---- values -> Lua --------------------------------------------------------------- */

static void push_atomic(lua_State *L, const pm_type *ty, const pm_datum *d) {
    if (d->is_null) { lua_pushlightuserdata(L, NULL); return; }
    switch (ty->root) {
    case PM_T_BOOLEAN: lua_pushboolean(L, d->v.i != 0); return;
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT: lp_pushint64(L, d->v.i); return;
    case PM_T_FLOAT: lua_pushnumber(L, d->v.f); return;
    case PM_T_DOUBLE: lua_pushnumber(L, d->v.d); return;
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY: case PM_T_BLOB:
        lua_pushlstring(L, (const char *)d->v.bin.ptr, d->v.bin.len); return;
    default: {
        pm_buf b = {0};
        if (pm_datum_to_string(ty, d, 0, &b) == PAIMON_OK) lua_pushlstring(L, (const char *)b.data, b.len);
        else lua_pushnil(L);
        pm_buf_free(&b);
    }
    }
}

static void push_value(lua_State *L, const pm_type *ty, const pm_avro_value *v, const char *col, int depth);

static void push_composite(lua_State *L, const pm_type *ty, const pm_avro_value *v, const char *col, int depth) {
    if (depth > 64) luaL_error(L, "column '%s': value nested too deeply", col);
    luaL_checkstack(L, 6, "nested value");
    switch (ty->root) {
    case PM_T_ARRAY:
        if (v->type != PM_AVRO_ARRAY) luaL_error(L, "column '%s': expected an Avro array", col);
        lua_createtable(L, (int)v->u.list.n, 0);
        for (size_t k = 0; k < v->u.list.n; k++) {
            push_value(L, ty->element, &v->u.list.items[k], col, depth + 1);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        return;
    case PM_T_MAP: case PM_T_MULTISET: {
        pm_type ival = {0};
        ival.root = PM_T_INT;
        ival.nullable = 1;
        const pm_type *vt = ty->root == PM_T_MAP ? ty->value : &ival;
        lua_newtable(L);
        if (v->type == PM_AVRO_MAP) {
            for (size_t k = 0; k < v->u.map.n; k++) {
                lua_pushlstring(L, (const char *)v->u.map.keys[k].u.bytes.ptr, v->u.map.keys[k].u.bytes.len);
                push_value(L, vt, &v->u.map.values[k], col, depth + 1);
                lua_rawset(L, -3);
            }
        } else if (v->type == PM_AVRO_ARRAY) {
            for (size_t k = 0; k < v->u.list.n; k++) {
                const pm_avro_value *kv = &v->u.list.items[k];
                if (kv->type != PM_AVRO_RECORD || kv->u.list.n < 2) luaL_error(L, "column '%s': bad map entry", col);
                int ki = pm_avro_field_index(kv->schema, "key"), vi = pm_avro_field_index(kv->schema, "value");
                if (ki < 0 || vi < 0) luaL_error(L, "column '%s': map entry without key/value", col);
                push_value(L, ty->element, &kv->u.list.items[ki], col, depth + 1);
                if (lua_isnil(L, -1) || is_null_value(L, -1)) { lua_pop(L, 1); continue; }
                push_value(L, vt, &kv->u.list.items[vi], col, depth + 1);
                lua_rawset(L, -3);
            }
        } else luaL_error(L, "column '%s': expected an Avro map", col);
        return;
    }
    case PM_T_ROW:
        if (v->type != PM_AVRO_RECORD) luaL_error(L, "column '%s': expected an Avro record", col);
        lua_createtable(L, 0, (int)ty->n_fields);
        for (size_t k = 0; k < ty->n_fields; k++) {
            int fi = pm_avro_field_index(v->schema, ty->fields[k].name);
            const pm_avro_value *fv = fi >= 0 && (size_t)fi < v->u.list.n ? &v->u.list.items[fi] : NULL;
            push_value(L, ty->fields[k].type, fv, col, depth + 1);
            lua_setfield(L, -2, ty->fields[k].name);
        }
        return;
    default:
        lua_pushnil(L);
    }
}

static void push_value(lua_State *L, const pm_type *ty, const pm_avro_value *v, const char *col, int depth) {
    if (!v || v->type == PM_AVRO_NULL) { lua_pushlightuserdata(L, NULL); return; }
    if (ty->root == PM_T_ARRAY || ty->root == PM_T_MAP || ty->root == PM_T_MULTISET || ty->root == PM_T_ROW) {
        push_composite(L, ty, v, col, depth);
        return;
    }
    pm_datum d;
    pm_err e = {0};
    if (pm_datafile_to_datum(ty, v, col, &d, &e)) lp_raise(L, &e);
    push_atomic(L, ty, &d);
}

/* ---- create_table ------------------------------------------------------------------ */

static int arena_gc(lua_State *L) {
    pm_arena **a = lua_touserdata(L, 1);
    pm_arena_free(*a);
    *a = NULL;
    return 0;
}

/* An arena owned by a userdata pushed on the stack (freed by its __gc,
 * also when an error is raised). */
static pm_arena *push_arena(lua_State *L) {
    pm_arena **a = lp_newuserdata(L, sizeof *a);
    *a = NULL;
    lua_newtable(L);
    lua_pushcfunction(L, arena_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    *a = pm_arena_new(16384);
    if (!*a) luaL_error(L, "out of memory");
    return *a;
}

/* An array of strings at the stack top -> v (in a; the strings stay
 * referenced by the spec). */
static size_t string_list(lua_State *L, pm_arena *a, const char *what, const char *const **v) {
    if (lua_isnil(L, -1)) return 0;
    if (!lua_istable(L, -1)) luaL_error(L, "spec.%s must be an array of column names", what);
    size_t n = lp_rawlen(L, -1);
    const char **out = arena_alloc_checked(L, a, n * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, -1, (int)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "spec.%s[%d] must be a string", what, (int)i + 1);
        out[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    *v = out;
    return n;
}

/* spec.options -> key, value pairs (numbers and booleans as text). */
static size_t option_list(lua_State *L, pm_arena *a, int idx, const char *const **v) {
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) { n++; lua_pop(L, 1); }
    const char **out = arena_alloc_checked(L, a, 2 * n * sizeof *out);
    size_t k = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING) luaL_argerror(L, 2, "spec.options keys must be strings");
        if (k == n) { lua_pop(L, 2); break; }
        const char *val = "";
        char num[64];
        if (lua_type(L, -1) == LUA_TBOOLEAN) val = lua_toboolean(L, -1) ? "true" : "false";
        else if (lua_type(L, -1) == LUA_TNUMBER && lp_isinteger(L, -1)) {
            int64_t x = 0;
            lp_toint64(L, -1, &x);
            snprintf(num, sizeof num, "%lld", (long long)x);
            val = num;
        } else if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) val = lua_tostring(L, -1);
        else luaL_error(L, "spec.options['%s'] must be a string, number or boolean", lua_tostring(L, -2));
        out[2 * k] = lua_tostring(L, -2);
        out[2 * k + 1] = pm_arena_strndup(a, val, strlen(val));   /* a number's text is not referenced */
        if (!out[2 * k + 1]) luaL_error(L, "out of memory");
        k++;
        lua_pop(L, 1);
    }
    *v = out;
    return k;
}

/* paimon.create_table(path, spec [, {options = FileIO options}]) -> Table | nil, msg, code */
static int l_create_table(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    const char *const *io_options = NULL;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        static const char *const known3[] = {"options", NULL};
        lp_check_options(L, 3, "paimon.create_table", known3);
    }
    lua_settop(L, 3);
    if (!lua_isnil(L, 3)) io_options = lp_fileio_options(L, 3, "paimon.create_table");
    else lua_pushnil(L);
    lua_replace(L, 3);   /* what keeps io_options alive, at 3 */
    static const char *const known[] = {"fields", "partition_keys", "primary_keys", "options", "comment", NULL};
    static const char *const field_keys[] = {"name", "type", "description", "comment", NULL};
    lp_check_options(L, 2, "paimon.create_table", known);
    pm_arena *a = push_arena(L);
    int arena_idx = lua_gettop(L);
    paimon_table_spec spec;
    memset(&spec, 0, sizeof spec);
    lua_getfield(L, 2, "fields");
    if (!lua_istable(L, -1)) return luaL_argerror(L, 2, "spec.fields must be an array of {name = ..., type = ...}");
    size_t nf = lp_rawlen(L, -1);
    paimon_column *cols = arena_alloc_checked(L, a, nf * sizeof *cols);
    for (size_t i = 0; i < nf; i++) {   /* the strings stay referenced by the spec */
        lua_rawgeti(L, -1, (int)i + 1);
        if (!lua_istable(L, -1)) return luaL_error(L, "spec.fields[%d] must be a table {name = ..., type = ...}", (int)i + 1);
        lp_check_options(L, -1, "paimon.create_table: spec.fields[i]", field_keys);
        lua_getfield(L, -1, "name");
        lua_getfield(L, -2, "type");
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "spec.fields[%d] needs string name and type", (int)i + 1);
        cols[i].name = lua_tostring(L, -2);
        cols[i].type = lua_tostring(L, -1);
        lua_pop(L, 2);
        lua_getfield(L, -1, "description");
        if (lua_isnil(L, -1)) { lua_pop(L, 1); lua_getfield(L, -1, "comment"); }
        if (lua_type(L, -1) == LUA_TSTRING) cols[i].description = lua_tostring(L, -1);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    spec.columns = cols;
    spec.n_columns = nf;
    lua_getfield(L, 2, "partition_keys");
    spec.n_partition_keys = string_list(L, a, "partition_keys", &spec.partition_keys);
    lua_pop(L, 1);
    lua_getfield(L, 2, "primary_keys");
    spec.n_primary_keys = string_list(L, a, "primary_keys", &spec.primary_keys);
    lua_pop(L, 1);
    lua_getfield(L, 2, "options");
    if (!lua_isnil(L, -1)) {
        if (!lua_istable(L, -1)) return luaL_argerror(L, 2, "spec.options must be a table {key = value}");
        spec.n_options = option_list(L, a, lua_gettop(L), &spec.options);
    }
    lua_pop(L, 1);
    lua_getfield(L, 2, "comment");
    if (lua_type(L, -1) == LUA_TSTRING) spec.comment = lua_tostring(L, -1);
    lua_pop(L, 1);
    pm_err e = {0};
    int rc = pm_create_from_spec(path, &spec, io_options, &e);
    lua_settop(L, arena_idx);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_table *ud = lp_newuserdata(L, sizeof *ud);
    ud->t = NULL;
    luaL_setmetatable(L, TABLE_MT);
    rc = pm_table_open_opts(path, NULL, io_options, &ud->t, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    return 1;
}

static int l_memory_size(lua_State *L) {
    const char *s = luaL_checkstring(L, 1);
    int64_t b;
    pm_err e = {0};
    if (pm_parse_memory_size(s, &b, &e)) { lp_pushfail(L); lua_pushstring(L, e.msg); return 2; }
    lp_pushint64(L, b);
    return 1;
}

/* ---- Write ------------------------------------------------------------------------- */

typedef struct lp_write {
    paimon_writer *w;
    lp_table *owner;
    pm_arena *items;            /* items of the row's composite values */
} lp_write;

static void write_release(lp_write *w) {
    if (w->w && (!w->owner || !w->owner->t)) pm_writer_detach(w->w);   /* table closed first */
    pm_writer_free(w->w);       /* deletes files not handed out by prepare_commit */
    w->w = NULL;
    pm_arena_free(w->items);
    w->items = NULL;
}

static int write_gc(lua_State *L) {
    write_release(luaL_checkudata(L, 1, WRITE_MT));
    return 0;
}

static lp_write *check_write(lua_State *L) {
    lp_write *w = luaL_checkudata(L, 1, WRITE_MT);
    if (!w->w) luaL_error(L, "attempt to use a closed paimon.Write");
    if (!w->owner->t) luaL_error(L, "the paimon.Table of this writer is closed");
    return w;
}

static int write_tostring(lua_State *L) {
    lp_write *w = luaL_checkudata(L, 1, WRITE_MT);
    if (!w->w) lua_pushstring(L, "paimon.Write (closed)");
    else lua_pushfstring(L, "paimon.Write (%d rows)", (int)w->w->rows);
    return 1;
}

/* t:new_write{} -> Write | nil, msg, code */
static int tbl_new_write(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {NULL};
    lp_check_options(L, 2, "new_write", known);
    lp_write *w = lp_newuserdata(L, sizeof *w);
    memset(w, 0, sizeof *w);
    w->owner = lua_touserdata(L, 1);
    luaL_setmetatable(L, WRITE_MT);
    lp_setowner(L, -1, 1);
    pm_err e = {0};
    int rc = pm_writer_open(t, &w->w, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    w->items = pm_arena_new(16384);
    if (!w->items) { write_release(w); return luaL_error(L, "out of memory"); }
    return 1;
}

/* w:write(row): row = {column = value, ...}; bad rows raise. */
static int write_write(lua_State *L) {
    lp_write *w = check_write(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    const pm_schema *s = pm_append_writer_schema(w->w->w);    /* the writer's, even after an alter */
    size_t n = w->w->n;
    luaL_checkstack(L, (int)n + 8, "too many columns");
    pm_arena_reset(w->items);
    pm_err e = {0};
    for (size_t i = 0; i < n; i++) {
        lua_getfield(L, 2, s->fields[i].name);
        /* kept on the stack: the row may point into it */
        paimon_value v;
        to_value(L, -1, s->fields[i].type, w->items, &v, s->fields[i].name, 0);
        if (pm_writer_set(w->w, i, &v, &e)) { pm_writer_clear_row(w->w); return lp_raise(L, &e); }
    }
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        int known = 0;
        if (lua_type(L, -2) == LUA_TSTRING) known = pm_schema_field(s, lua_tostring(L, -2)) != NULL;
        if (!known) {
            pm_writer_clear_row(w->w);
            lua_pushvalue(L, -2);
            return luaL_error(L, "row has a value for '%s', which is not a column of the table", lp_tolstring(L, -1, NULL));
        }
        lua_pop(L, 1);
    }
    int rc = pm_writer_write_row(w->w, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lua_pushboolean(L, 1);
    return 1;
}

static void push_message(lua_State *L, const paimon_table *t, const pm_manifest_entry *m) {
    lua_createtable(L, 0, 8);
    lp_set_str(L, "kind", m->kind == PM_FILE_ADD ? "ADD" : "DELETE");
    pm_err e = {0};
    if (lp_push_partition(L, t, m->partition, &e)) lp_raise(L, &e);
    lua_setfield(L, -2, "partition");
    lp_set_lstr(L, "partition_bytes", m->partition.ptr, m->partition.len);
    pm_buf b = {0};
    if (pm_table_partition_path(t, m->partition, &b, &e) == PAIMON_OK) lp_set_lstr(L, "partition_path", b.data, b.len);
    if (pm_table_file_path(t, m, &b, &e) == PAIMON_OK) lp_set_str(L, "file_path", (const char *)b.data);
    pm_buf_free(&b);
    lp_set_int(L, "bucket", m->bucket);
    lp_set_int(L, "total_buckets", m->total_buckets);
    lp_push_data_file(L, &m->file);
    lua_setfield(L, -2, "file");
}

/* w:prepare_commit() -> array of commit messages (closes the open files) */
static int write_prepare(lua_State *L) {
    lp_write *w = check_write(L);
    const pm_manifest_entry *ents;
    size_t n;
    pm_err e = {0};
    int rc = pm_append_writer_prepare(w->w->w, &ents, &n, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        push_message(L, w->owner->t, &ents[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
    return 1;
}

static int write_close(lua_State *L) {
    write_release(luaL_checkudata(L, 1, WRITE_MT));
    return 0;
}

/* ---- messages -> entries ------------------------------------------------------------- */

typedef struct { pm_arena *a; lua_State *L; const char *where; } conv;

static void *conv_alloc(conv *c, size_t n) {
    void *p = pm_arena_alloc(c->a, n ? n : 1);
    if (!p) luaL_error(c->L, "out of memory");
    memset(p, 0, n ? n : 1);
    return p;
}

static int get_int_field(lua_State *L, int t, const char *k, int64_t *v, int required, const char *where) {
    lua_getfield(L, t, k);
    int ok = 0;
    if (lua_isnil(L, -1) || is_null_value(L, -1)) {
        if (required) luaL_error(L, "%s: missing field '%s'", where, k);
    } else if (!lua_int64(L, -1, v)) {
        luaL_error(L, "%s: field '%s' must be an integer", where, k);
    } else ok = 1;
    lua_pop(L, 1);
    return ok;
}

static pm_bytes get_bytes_field(lua_State *L, int t, const char *k, int *present) {
    pm_bytes b = {NULL, 0};
    lua_getfield(L, t, k);   /* the string stays referenced by the table */
    *present = lua_type(L, -1) == LUA_TSTRING;
    if (*present) {
        size_t n;
        b.ptr = (const uint8_t *)lua_tolstring(L, -1, &n);
        b.len = n;
    }
    lua_pop(L, 1);
    return b;
}

static const char *get_str_field(lua_State *L, int t, const char *k) {
    lua_getfield(L, t, k);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1);
    return s;
}

static int get_strs_field(conv *c, int t, const char *k, pm_strs *out) {
    lua_State *L = c->L;
    lua_getfield(L, t, k);
    if (!lua_istable(L, -1)) { lua_pop(L, 1); out->n = 0; out->v = NULL; return 0; }
    size_t n = lp_rawlen(L, -1);
    const char **v = conv_alloc(c, n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, -1, (int)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "%s: %s[%d] must be a string", c->where, k, (int)i + 1);
        v[i] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    out->n = n;
    out->v = v;
    return 1;
}

static void get_stats(conv *c, int t, const char *k, pm_stats *st) {
    lua_State *L = c->L;
    static const uint8_t empty[12] = {0};
    lua_getfield(L, t, k);
    if (!lua_istable(L, -1)) {
        st->min_values.ptr = st->max_values.ptr = empty;
        st->min_values.len = st->max_values.len = 12;
        st->has_null_counts = 1;
        lua_pop(L, 1);
        return;
    }
    int s = lua_gettop(L), present;
    st->min_values = get_bytes_field(L, s, "min_values", &present);
    if (!present) { st->min_values.ptr = empty; st->min_values.len = 12; }
    st->max_values = get_bytes_field(L, s, "max_values", &present);
    if (!present) { st->max_values.ptr = empty; st->max_values.len = 12; }
    lua_getfield(L, s, "null_counts");
    st->has_null_counts = 1;
    if (lua_istable(L, -1)) {
        size_t n = lp_rawlen(L, -1);
        st->n_null_counts = n;
        st->null_counts = conv_alloc(c, n * sizeof(int64_t));
        st->null_count_is_null = conv_alloc(c, n);
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, -1, (int)i + 1);
            if (is_null_value(L, -1)) st->null_count_is_null[i] = 1;
            else if (!lua_int64(L, -1, &st->null_counts[i])) luaL_error(L, "%s: %s.null_counts[%d] must be an integer", c->where, k, (int)i + 1);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 2);
}

/* Message table at idx -> entry. */
static void entry_from_lua(conv *c, paimon_table *t, int idx, pm_manifest_entry *m) {
    lua_State *L = c->L;
    idx = absidx(L, idx);
    if (!lua_istable(L, idx)) luaL_error(L, "%s: a commit message must be a table", c->where);
    memset(m, 0, sizeof *m);
    m->version = 2;
    const char *kind = get_str_field(L, idx, "kind");
    if (!kind || !strcmp(kind, "ADD")) m->kind = PM_FILE_ADD;
    else if (!strcmp(kind, "DELETE")) m->kind = PM_FILE_DELETE;
    else luaL_error(L, "%s: kind must be 'ADD' or 'DELETE', got '%s'", c->where, kind);
    int present;
    m->partition = get_bytes_field(L, idx, "partition_bytes", &present);
    if (!present) {
        lua_getfield(L, idx, "partition");
        int pi = lua_gettop(L);
        if (t->n_part && !lua_istable(L, pi)) luaL_error(L, "%s: needs partition_bytes or a partition table", c->where);
        pm_datum *vals = conv_alloc(c, t->n_part * sizeof *vals);
        uint8_t *decs = conv_alloc(c, t->n_part * 16);
        for (size_t k = 0; k < t->n_part; k++) {
            lua_getfield(L, pi, t->part_keys[k]);
            if (lua_isnil(L, -1)) luaL_error(L, "%s: partition has no value for '%s'", c->where, t->part_keys[k]);
            to_datum(L, -1, t->part_types[k], t->part_keys[k], &vals[k], decs + 16 * k);
            /* string stays referenced by the partition table */
            lua_pop(L, 1);
        }
        pm_buf b = {0};
        pm_err e = {0};
        if (pm_binrow_encode(t->part_types, t->n_part, vals, &b, &e)) { pm_buf_free(&b); lp_raise(L, &e); }
        uint8_t *pb = conv_alloc(c, b.len);
        memcpy(pb, b.data, b.len);
        m->partition.ptr = pb;
        m->partition.len = b.len;
        pm_buf_free(&b);
        lua_pop(L, 1);
    }
    int64_t v = 0;
    if (get_int_field(L, idx, "bucket", &v, 0, c->where)) m->bucket = (int32_t)v;
    const char *b = pm_schema_option_or_default(t->schema, "bucket");
    m->total_buckets = b ? (int32_t)strtol(b, NULL, 10) : -1;
    if (get_int_field(L, idx, "total_buckets", &v, 0, c->where)) m->total_buckets = (int32_t)v;
    lua_getfield(L, idx, "file");
    if (!lua_istable(L, -1)) luaL_error(L, "%s: missing the file table", c->where);
    int f = lua_gettop(L);
    pm_data_file *d = &m->file;
    d->file_name = get_str_field(L, f, "file_name");
    if (!d->file_name) luaL_error(L, "%s: file.file_name is missing", c->where);
    get_int_field(L, f, "file_size", &d->file_size, 1, c->where);
    get_int_field(L, f, "row_count", &d->row_count, 1, c->where);
    static const uint8_t empty[12] = {0};
    d->min_key = get_bytes_field(L, f, "min_key", &present);
    if (!present) { d->min_key.ptr = empty; d->min_key.len = 12; }
    d->max_key = get_bytes_field(L, f, "max_key", &present);
    if (!present) { d->max_key.ptr = empty; d->max_key.len = 12; }
    get_stats(c, f, "key_stats", &d->key_stats);
    get_stats(c, f, "value_stats", &d->value_stats);
    get_int_field(L, f, "min_sequence_number", &d->min_sequence_number, 0, c->where);
    get_int_field(L, f, "max_sequence_number", &d->max_sequence_number, 0, c->where);
    d->schema_id = t->schema->id;
    get_int_field(L, f, "schema_id", &d->schema_id, 0, c->where);
    if (get_int_field(L, f, "level", &v, 0, c->where)) d->level = (int32_t)v;
    get_strs_field(c, f, "extra_files", &d->extra_files);
    if (get_int_field(L, f, "creation_time", &v, 0, c->where)) d->creation_time = (pm_opt_i64){1, v};
    if (get_int_field(L, f, "delete_row_count", &v, 0, c->where)) d->delete_row_count = (pm_opt_i64){1, v};
    d->embedded_index = get_bytes_field(L, f, "embedded_file_index", &d->has_embedded_index);
    if (get_int_field(L, f, "file_source", &v, 0, c->where)) d->file_source = (pm_opt_i32){1, (int32_t)v};
    d->has_value_stats_cols = get_strs_field(c, f, "value_stats_cols", &d->value_stats_cols);
    d->external_path = get_str_field(L, f, "external_path");
    if (get_int_field(L, f, "first_row_id", &v, 0, c->where)) d->first_row_id = (pm_opt_i64){1, v};
    d->has_write_cols = get_strs_field(c, f, "write_cols", &d->write_cols);
    lua_getfield(L, f, "write_cols_sequences");
    if (lua_istable(L, -1)) {
        size_t n = lp_rawlen(L, -1);
        d->has_write_cols_sequences = 1;
        d->n_write_cols_sequences = n;
        d->write_cols_sequences = conv_alloc(c, n * sizeof(int64_t));
        for (size_t i = 0; i < n; i++) {
            lua_rawgeti(L, -1, (int)i + 1);
            if (!lua_int64(L, -1, &d->write_cols_sequences[i])) luaL_error(L, "%s: write_cols_sequences must hold integers", c->where);
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 2);
}

/* ---- Commit ------------------------------------------------------------------------------ */

typedef struct lp_commit {
    pm_commit_opts o;
    char *user;
    lp_table *owner;
    int closed;
    pm_commit_history h;   /* where abort looks; whether a commit ended uncertain */
    int64_t partition_last_check;   /* Java's PartitionExpire.lastCheck: the commit's creation */
} lp_commit;

static int commit_gc(lua_State *L) {
    lp_commit *c = luaL_checkudata(L, 1, COMMIT_MT);
    free(c->user);
    c->user = NULL;
    c->closed = 1;
    return 0;
}

static lp_commit *check_commit(lua_State *L) {
    lp_commit *c = luaL_checkudata(L, 1, COMMIT_MT);
    if (c->closed) luaL_error(L, "attempt to use a closed paimon.Commit");
    if (!c->owner->t) luaL_error(L, "the paimon.Table of this commit is closed");
    return c;
}

static int commit_tostring(lua_State *L) {
    lp_commit *c = luaL_checkudata(L, 1, COMMIT_MT);
    if (c->closed) lua_pushstring(L, "paimon.Commit (closed)");
    else lua_pushfstring(L, "paimon.Commit (%s)", c->user);
    return 1;
}

/* Apply the manifest-merge policy: a function(options) returning
 * {target_file_size, full_compaction_threshold, merge_min_count}. */
static void apply_policy(lua_State *L, int fn, paimon_table *t, pm_commit_opts *o) {
    lua_pushvalue(L, fn);
    lua_newtable(L);
    for (const pm_kv *d = pm_option_defaults; d->key; d++) lp_set_str(L, d->key, d->value);
    for (size_t i = 0; i < t->schema->n_options; i++) lp_set_str(L, t->schema->options[i].key, t->schema->options[i].value);
    lua_call(L, 1, 1);
    if (!lua_istable(L, -1)) luaL_error(L, "the manifest merge policy must return a table");
    int64_t v;
    int r = lua_gettop(L);
    if (get_int_field(L, r, "target_file_size", &v, 0, "policy") && v > 0) o->manifest_target_size = v;
    if (get_int_field(L, r, "full_compaction_threshold", &v, 0, "policy") && v > 0) o->full_compaction_threshold = v;
    if (get_int_field(L, r, "merge_min_count", &v, 0, "policy") && v > 0 && v <= 0x7fffffff) o->merge_min_count = (int)v;
    lua_pop(L, 1);
}

/* t:new_commit{commit_user = ..., policy = "file.lua" | function} -> Commit */
static int tbl_new_commit(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    const char *user = NULL;
    int has_opts = !lua_isnoneornil(L, 2);
    if (has_opts) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const known[] = {"commit_user", "policy", NULL};
        lp_check_options(L, 2, "new_commit", known);
        lua_getfield(L, 2, "commit_user");
        if (!lua_isnil(L, -1)) {
            if (lua_type(L, -1) != LUA_TSTRING || !*lua_tostring(L, -1)) return luaL_argerror(L, 2, "commit_user must be a non-empty string");
            user = lua_tostring(L, -1);
        }
    }
    lua_settop(L, 2);
    pm_commit_opts o;
    pm_commit_opts_from_table(t, &o);
    /* policy */
    int fn = 0;
    if (has_opts) {
        lua_getfield(L, 2, "policy");
        if (!lua_isnil(L, -1)) {
            /* any shape the one policy loader takes; it raises for others */
            int policy = lua_gettop(L);
            lua_getglobal(L, "require");
            lua_pushstring(L, "paimon.policy_loader");
            lua_call(L, 1, 1);
            lua_getfield(L, -1, "get");
            lua_pushvalue(L, policy);
            lua_pushstring(L, "manifest_merge");
            lua_call(L, 2, 1);
            fn = lua_gettop(L);
        }
    }
    if (!fn) {
        lua_getglobal(L, "require");
        lua_pushstring(L, "paimon.policy.manifest_merge");
        if (lua_isfunction(L, -2) && lua_pcall(L, 1, 1, 0) == 0) {
            if (lua_istable(L, -1)) lua_getfield(L, -1, "manifest_merge");
            if (lua_isfunction(L, -1)) fn = lua_gettop(L);
        }
    }
    if (fn) apply_policy(L, fn, t, &o);
    lua_settop(L, 2);
    lp_commit *c = lp_newuserdata(L, sizeof *c);
    memset(c, 0, sizeof *c);
    c->owner = lua_touserdata(L, 1);
    luaL_setmetatable(L, COMMIT_MT);
    lp_setowner(L, -1, 1);
    char uuid[37];
    if (!user) { pm_uuid4(uuid); user = uuid; }
    c->user = pm_strdup(user);
    if (!c->user) { c->closed = 1; return luaL_error(L, "out of memory"); }
    c->o = o;
    c->o.commit_user = c->user;
    c->partition_last_check = pm_now_millis();
    return 1;
}

static int commit_user(lua_State *L) {
    lp_commit *c = check_commit(L);
    lua_pushstring(L, c->user);
    return 1;
}

static int commit_options(lua_State *L) {
    lp_commit *c = check_commit(L);
    lua_createtable(L, 0, 8);
    lp_set_str(L, "commit_user", c->user);
    lp_set_int(L, "max_retries", c->o.max_retries);
    lp_set_str(L, "codec", c->o.codec);
    lp_set_int(L, "manifest_target_size", c->o.manifest_target_size);
    lp_set_int(L, "full_compaction_threshold", c->o.full_compaction_threshold);
    lp_set_int(L, "merge_min_count", c->o.merge_min_count);
    return 1;
}

/* c:commit(messages [, {identifier = n, kind = "APPEND", force = false}])
 * -> snapshot_id, true, upkeep | latest_id, false (empty, skipped), upkeep | nil, msg, code
 * (upkeep: the result of the upkeep run after it, pm_upkeep.h) */
static int commit_commit(lua_State *L) {
    lp_commit *c = check_commit(L);
    paimon_table *t = c->owner->t;
    luaL_checktype(L, 2, LUA_TTABLE);
    pm_commit_opts o = c->o;
    int force = 0;
    if (!lua_isnoneornil(L, 3)) {
        luaL_checktype(L, 3, LUA_TTABLE);
        static const char *const known[] = {"identifier", "kind", "force", "full_compaction_threshold", "merge_min_count", NULL};
        lp_check_options(L, 3, "commit", known);
        int64_t id;
        lua_getfield(L, 3, "identifier");
        if (!lua_isnil(L, -1)) {
            if (!lua_int64(L, -1, &id)) return luaL_argerror(L, 3, "identifier must be an integer");
            o.identifier = id;
        }
        lua_pop(L, 1);
        lua_getfield(L, 3, "kind");
        if (!lua_isnil(L, -1)) {
            if (lua_type(L, -1) != LUA_TSTRING) return luaL_argerror(L, 3, "kind must be a string");
            o.kind = lua_tostring(L, -1);   /* the opts table keeps it alive */
        }
        lua_pop(L, 1);
        lua_getfield(L, 3, "force");
        force = lua_toboolean(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, 3, "full_compaction_threshold");
        if (lua_int64(L, -1, &id) && id > 0) o.full_compaction_threshold = id;
        lua_pop(L, 1);
        lua_getfield(L, 3, "merge_min_count");
        if (lua_int64(L, -1, &id) && id > 0 && id <= 0x7fffffff) o.merge_min_count = (int)id;
        lua_pop(L, 1);
    }
    size_t n = lp_rawlen(L, 2);
    conv cv = {push_arena(L), L, "commit message"};
    pm_manifest_entry *ents = conv_alloc(&cv, n * sizeof *ents);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)i + 1);
        entry_from_lua(&cv, t, -1, &ents[i]);
        lua_pop(L, 1);
    }
    int64_t id = 0;
    int created = 0;
    pm_err e = {0};
    int rc = pm_write_commit(t, ents, n, &o, force, &c->h, &id, &created, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_pushint64(L, id);
    lua_pushboolean(L, created);
    /* Java's TableCommitImpl: upkeep after every commit (write-only=true:
     * none); its failure is in the result, never the commit's */
    lp_getowner(L, 1);
    lp_upkeep_after_commit(L, -1, t, &c->partition_last_check, o.identifier);
    lua_remove(L, -2);
    return 3;
}

/* c:filter_committed(identifiers) -> the identifiers not committed yet,
 * plus (when this commit user has a snapshot) the id and the identifier of
 * its newest one: where a retry's landed commit is */
static int commit_filter(lua_State *L) {
    lp_commit *c = check_commit(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int64_t last, last_snapshot;
    pm_err e = {0};
    int rc = pm_commit_last_of_user(c->owner->t, c->user, &last, &last_snapshot, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    size_t n = lp_rawlen(L, 2);
    lua_createtable(L, (int)n, 0);
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)i + 1);
        int64_t id;
        int is_msg = lua_istable(L, -1);
        if (is_msg) {
            lua_getfield(L, -1, "identifier");
            if (!lua_int64(L, -1, &id)) return luaL_argerror(L, 2, "each element needs an integer identifier");
            lua_pop(L, 1);
        } else if (!lua_int64(L, -1, &id)) {
            return luaL_argerror(L, 2, "identifiers must be integers");
        }
        if (id > last) lua_rawseti(L, -2, ++k);
        else lua_pop(L, 1);
    }
    if (!last_snapshot) return 1;
    lp_pushint64(L, last_snapshot);
    lp_pushint64(L, last);
    return 3;
}

/* c:abort(messages) -> removed, kept | nil, msg, code: delete the data
 * files the ADD messages name, except those a snapshot adds (a commit
 * whose snapshot write had an unknown outcome may have landed; snapshots
 * from before this object's first commit, or all if it has none, are
 * checked). After a commit of this object ended "uncertain" nothing is
 * deleted (every file counts as kept). Deletion goes through the cleanup
 * deleter (inside the table directory only). */
static int commit_abort(lua_State *L) {
    lp_commit *c = check_commit(L);
    paimon_table *t = c->owner->t;
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = lp_rawlen(L, 2);
    conv cv = {push_arena(L), L, "commit message"};
    pm_manifest_entry *ents = conv_alloc(&cv, n * sizeof *ents);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)i + 1);
        entry_from_lua(&cv, t, -1, &ents[i]);
        lua_pop(L, 1);
    }
    int64_t removed = 0, kept = 0;
    pm_err e = {0};
    int rc = pm_write_abort(t, &c->h, ents, n, &removed, &kept, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_pushint64(L, removed);
    lua_pushinteger(L, (lua_Integer)kept);
    return 2;
}

/* ---- snapshot:read ------------------------------------------------------------------------ */

typedef struct lp_rows {
    lp_table *owner;
    pm_read *rd;
    const pm_schema *schema;    /* the table's when the iteration began (an alter leaves it allocated) */
    pm_partition_filter filter;
    size_t n;
    pm_datum *vals;
    const pm_avro_value **raw;
    int with_file;
} lp_rows;

static void rows_release(lp_rows *r) {
    pm_read_close(r->rd);
    r->rd = NULL;
    lp_partition_filter_free(&r->filter);
    free(r->vals);
    free(r->raw);
    r->vals = NULL;
    r->raw = NULL;
}

static int rows_gc(lua_State *L) {
    rows_release(luaL_checkudata(L, 1, ROWS_MT));
    return 0;
}

static int rows_next(lua_State *L) {
    lp_rows *r = luaL_checkudata(L, lua_upvalueindex(1), ROWS_MT);
    if (!r->rd) return 0;
    paimon_table *t = r->owner->t;
    if (!t) return luaL_error(L, "the paimon.Table of this iterator is closed");
    pm_err e = {0};
    const char *file = NULL;
    int rc = pm_read_next(r->rd, r->vals, r->raw, &file, &e);
    if (rc == PAIMON_DONE) { rows_release(r); return 0; }
    if (rc) { rows_release(r); return lp_raise(L, &e); }
    const pm_schema *s = r->schema;
    lua_createtable(L, 0, (int)r->n);
    for (size_t i = 0; i < r->n; i++) {
        const pm_type *ty = s->fields[i].type;
        if (ty->root == PM_T_ARRAY || ty->root == PM_T_MAP || ty->root == PM_T_MULTISET || ty->root == PM_T_ROW)
            push_value(L, ty, r->raw[i], s->fields[i].name, 0);
        else
            push_atomic(L, ty, &r->vals[i]);
        lua_setfield(L, -2, s->fields[i].name);
    }
    if (r->with_file) {
        lua_pushstring(L, file ? file : "");
        return 2;
    }
    return 1;
}

/* snapshot:read{partition = {k = v}, with_file = false} -> iterator over rows */
static int snap_read(lua_State *L) {
    lp_snap *ud = lp_check_snap(L, 1);
    paimon_table *t = ud->owner->t;
    int with_file = 0;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const known[] = {"partition", "with_file", NULL};
        lp_check_options(L, 2, "read", known);
        lua_getfield(L, 2, "with_file");
        with_file = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    pm_partition_filter f;
    lp_opt_partition_filter(L, 2, &f);
    lua_settop(L, 1);
    push_owner(L, 1);                   /* the table userdata */
    lp_rows *r = lp_newuserdata(L, sizeof *r);
    memset(r, 0, sizeof *r);
    r->owner = lua_touserdata(L, 2);
    r->filter = f;
    r->with_file = with_file;
    luaL_setmetatable(L, ROWS_MT);
    lp_setowner(L, -1, 2);
    r->schema = t->schema;
    r->n = t->schema->n_fields;
    r->vals = calloc(r->n ? r->n : 1, sizeof *r->vals);
    r->raw = calloc(r->n ? r->n : 1, sizeof *r->raw);
    if (!r->vals || !r->raw) { rows_release(r); return luaL_error(L, "out of memory"); }
    pm_err e = {0};
    int rc = pm_read_open(t, ud->s, &r->filter, &r->rd, &e);
    if (rc) { rows_release(r); return lp_push_fail(L, rc, &e); }
    /* iterator function, nil, nil, to-be-closed value */
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, rows_next, 1);
    lua_insert(L, -2);
    lua_pushnil(L);
    lua_insert(L, -2);
    lua_pushnil(L);
    lua_insert(L, -2);
    return 4;
}

/* ---- registration --------------------------------------------------------------------------- */

static const luaL_Reg write_methods[] = {
    {"write", write_write},
    {"prepare_commit", write_prepare},
    {"close", write_close},
    {NULL, NULL}};

static const luaL_Reg write_meta[] = {
    {"__gc", write_gc},
    {"__close", write_gc},
    {"__tostring", write_tostring},
    {NULL, NULL}};

static const luaL_Reg commit_methods[] = {
    {"commit", commit_commit},
    {"filter_committed", commit_filter},
    {"abort", commit_abort},
    {"commit_user", commit_user},
    {"options", commit_options},
    {"close", commit_gc},
    {NULL, NULL}};

static const luaL_Reg commit_meta[] = {
    {"__gc", commit_gc},
    {"__close", commit_gc},
    {"__tostring", commit_tostring},
    {NULL, NULL}};

static const luaL_Reg rows_meta[] = {
    {"__gc", rows_gc},
    {"__close", rows_gc},
    {NULL, NULL}};

static const luaL_Reg table_methods[] = {
    {"new_write", tbl_new_write},
    {"new_commit", tbl_new_commit},
    {NULL, NULL}};

static const luaL_Reg snapshot_methods[] = {
    {"read", snap_read},
    {NULL, NULL}};

static void new_type(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods) {
    luaL_newmetatable(L, name);
    lp_setfuncs(L, meta);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__name");
    if (methods) {
        lua_newtable(L);
        lp_setfuncs(L, methods);
        lua_setfield(L, -2, "__index");
    }
    lua_pop(L, 1);
}

void lp_open_write(lua_State *L, int module_idx) {
    new_type(L, WRITE_MT, write_meta, write_methods);
    new_type(L, COMMIT_MT, commit_meta, commit_methods);
    new_type(L, ROWS_MT, rows_meta, NULL);
    lp_add_table_methods(L, table_methods);
    lp_add_snapshot_methods(L, snapshot_methods);
    lua_pushcfunction(L, l_create_table);
    lua_setfield(L, module_idx, "create_table");
    lua_pushcfunction(L, l_memory_size);
    lua_setfield(L, module_idx, "memory_size");
}
