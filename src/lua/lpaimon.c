/* paimon.core: Lua userdata over the C core.
 * Conventions (Lua's own): misuse raises; I/O and format failures return
 * nil, message, code; iterators raise on failure mid-way (a silent stop
 * would look like the end of the data). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "lpaimon.h"
#include "pm_tags.h"

#include "pm_datafile.h"


const char *lp_code_name(int code) { return pm_code_name(code); }

/* nil, message, code-name */
int lp_push_fail(lua_State *L, int code, const pm_err *e) {
    if (code == PAIMON_MISUSE) return luaL_error(L, "%s", e->msg);   /* misuse raises */
    lp_pushfail(L);
    lua_pushstring(L, e->msg[0] ? e->msg : paimon_errstr(code));
    lua_pushstring(L, lp_code_name(code));
    return 3;
}

int lp_raise(lua_State *L, const pm_err *e) {
    return luaL_error(L, "%s", e->msg);
}

/* ---- helpers to build tables --------------------------------------------- */

void lp_set_str(lua_State *L, const char *k, const char *v) {
    if (!v) return;
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}
void lp_set_lstr(lua_State *L, const char *k, const void *p, size_t n) {
    lua_pushlstring(L, (const char *)p, n);
    lua_setfield(L, -2, k);
}
void lp_set_int(lua_State *L, const char *k, int64_t v) {
    lp_pushint64(L, v);
    lua_setfield(L, -2, k);
}
void lp_set_opt(lua_State *L, const char *k, pm_opt_i64 v) {
    if (v.has) lp_set_int(L, k, v.v);
}
void lp_set_opt32(lua_State *L, const char *k, pm_opt_i32 v) {
    if (v.has) lp_set_int(L, k, v.v);
}
void lp_set_bool(lua_State *L, const char *k, int v) {
    lua_pushboolean(L, v);
    lua_setfield(L, -2, k);
}
void lp_push_strs(lua_State *L, pm_strs s) {
    lua_createtable(L, (int)s.n, 0);
    for (size_t i = 0; i < s.n; i++) {
        lua_pushstring(L, s.v[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
}
void lp_push_cstrv(lua_State *L, char **v, size_t n) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, v[i]);
        lua_rawseti(L, -2, (int)i + 1);
    }
}

/* ---- Table ------------------------------------------------------------- */


/* ---- option tables ------------------------------------------------------ */

/* Whether key is in the list: a NULL-ended C array, or else the Lua array
 * at list_idx (paimon.core.check_options). */
static int known_key(lua_State *L, const char *key, const char *const *known, int list_idx) {
    if (known) {
        for (size_t k = 0; known[k]; k++) if (!strcmp(key, known[k])) return 1;
        return 0;
    }
    size_t n = lp_rawlen(L, list_idx);
    for (size_t k = 1; k <= n; k++) {
        lua_rawgeti(L, list_idx, (int)k);
        int same = lua_type(L, -1) == LUA_TSTRING && !strcmp(key, lua_tostring(L, -1));
        lua_pop(L, 1);
        if (same) return 1;
    }
    return 0;
}

static void check_option_keys(lua_State *L, int idx, const char *what, const char *const *known, int list_idx) {
    if (lua_type(L, idx) != LUA_TTABLE) return;
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            const char *shown = lp_tolstring(L, -1, NULL);
            luaL_error(L, "%s: option names must be strings, got %s", what, shown);
        }
        const char *key = lua_tostring(L, -1);
        if (known_key(L, key, known, list_idx)) continue;
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        size_t n = known ? 0 : lp_rawlen(L, list_idx);
        for (size_t k = 0; known ? known[k] != NULL : k < n; k++) {
            if (k) luaL_addstring(&b, ", ");
            if (known) luaL_addstring(&b, known[k]);
            else { lua_rawgeti(L, list_idx, (int)k + 1); luaL_addvalue(&b); }
        }
        if (known ? !known[0] : n == 0) luaL_addstring(&b, "none");
        luaL_pushresult(&b);
        luaL_error(L, "%s: unknown option '%s' (known: %s)", what, key, lua_tostring(L, -1));
    }
}

void lp_check_options(lua_State *L, int idx, const char *what, const char *const *known) {
    check_option_keys(L, idx, what, known, 0);
}

/* paimon.core.check_options(opts, what, {known names}): the same check for
 * the methods written in Lua (t:expire_partitions). */
static int l_check_options(lua_State *L) {
    const char *what = luaL_checkstring(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    if (!lua_isnoneornil(L, 1)) luaL_checktype(L, 1, LUA_TTABLE);
    check_option_keys(L, 1, what, NULL, 3);
    return 0;
}

paimon_table *lp_check_table(lua_State *L, int i) {
    lp_table *ud = luaL_checkudata(L, i, TABLE_MT);
    if (!ud->t) luaL_error(L, "attempt to use a closed paimon.Table");
    return ud->t;
}

/* A number as text that reads back as the same number: integers in
 * decimal, floats in the shortest %g form that round-trips. */
static const char *exact_number(lua_State *L, int idx, char *buf, size_t len) {
    int64_t x = 0;
    if (lp_isinteger(L, idx) && lp_toint64(L, idx, &x)) {
        snprintf(buf, len, "%lld", (long long)x);
        return buf;
    }
    double d = lua_tonumber(L, idx);
    if (d != d || d - d != 0) return NULL;   /* NaN, infinities: no exact text */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, d);
        if (strtod(buf, NULL) == d) break;
    }
    return buf;
}

const char *const *lp_fileio_options(lua_State *L, int idx, const char *what) {
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    lua_getfield(L, idx, "options");
    if (lua_isnil(L, -1)) return NULL;   /* the nil stays pushed */
    if (!lua_istable(L, -1)) luaL_error(L, "%s: options must be a table {key = value}", what);
    int src = lua_gettop(L);
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, src)) { n++; lua_pop(L, 1); }
    /* the array, its strings anchored in the userdata's user value */
    const char **v = lp_newuserdata(L, (2 * n + 1) * sizeof *v);
    int ud = lua_gettop(L);
    lua_createtable(L, (int)(2 * n), 0);
    int anchor = ud + 1;
    size_t k = 0;
    lua_pushnil(L);
    while (k < n && lua_next(L, src)) {
        if (lua_type(L, -2) != LUA_TSTRING) luaL_error(L, "%s: option names must be strings", what);
        const char *key = lua_tostring(L, -2);
        char num[64];
        const char *val = NULL;
        switch (lua_type(L, -1)) {
        case LUA_TSTRING: val = lua_tostring(L, -1); break;
        case LUA_TBOOLEAN: val = lua_toboolean(L, -1) ? "true" : "false"; break;
        case LUA_TNUMBER:
            val = exact_number(L, -1, num, sizeof num);
            if (!val) luaL_error(L, "%s: options['%s'] must be a finite number", what, key);
            break;
        default:
            luaL_error(L, "%s: options['%s'] must be a string, number or boolean, got %s", what, key,
                       luaL_typename(L, -1));
        }
        lua_pushvalue(L, -2);
        lua_rawseti(L, anchor, (int)(2 * k + 1));
        lua_pushstring(L, val);
        lua_rawseti(L, anchor, (int)(2 * k + 2));
        lua_rawgeti(L, anchor, (int)(2 * k + 1));
        v[2 * k] = lua_tostring(L, -1);
        lua_rawgeti(L, anchor, (int)(2 * k + 2));
        v[2 * k + 1] = lua_tostring(L, -1);
        lua_pop(L, 3);   /* the two copies and the value */
        k++;
    }
    v[2 * k] = NULL;
    lp_setowner(L, ud, anchor);
    lua_settop(L, ud);
    lua_replace(L, src);   /* the userdata in the options table's place */
    return v;
}

static int l_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    const char *branch = NULL;
    const char *const *options = NULL;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        static const char *const known[] = {"branch", "options", NULL};
        lp_check_options(L, 2, "paimon.open", known);
        lua_getfield(L, 2, "branch");
        if (!lua_isnil(L, -1)) {
            if (lua_type(L, -1) != LUA_TSTRING) return luaL_argerror(L, 2, "branch must be a string");
            branch = lua_tostring(L, -1);
        }
        options = lp_fileio_options(L, 2, "paimon.open");
    }
    lp_table *ud = lp_newuserdata(L, sizeof *ud);
    ud->t = NULL;
    luaL_setmetatable(L, TABLE_MT);
    pm_err e = {0};
    int rc = pm_table_open_opts(path, branch, options, &ud->t, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    return 1;
}

static int tbl_close(lua_State *L) {
    lp_table *ud = luaL_checkudata(L, 1, TABLE_MT);
    pm_table_free(ud->t);
    ud->t = NULL;
    return 0;
}

static int tbl_tostring(lua_State *L) {
    lp_table *ud = luaL_checkudata(L, 1, TABLE_MT);
    if (!ud->t) lua_pushstring(L, "paimon.Table (closed)");
    else if (strcmp(ud->t->branch, "main")) lua_pushfstring(L, "paimon.Table (%s, branch %s)", ud->t->root, ud->t->branch);
    else lua_pushfstring(L, "paimon.Table (%s)", ud->t->root);
    return 1;
}

static int tbl_path(lua_State *L) { lua_pushstring(L, lp_check_table(L, 1)->root); return 1; }
static int tbl_branch(lua_State *L) { lua_pushstring(L, lp_check_table(L, 1)->branch); return 1; }

static void push_type(lua_State *L, const pm_type *ty) {
    pm_buf b = {0};
    if (pm_type_to_sql(ty, &b) == PAIMON_OK) lua_pushlstring(L, (const char *)b.data, b.len);
    else lua_pushstring(L, pm_type_root_name(ty->root));
    pm_buf_free(&b);
}

void lp_push_schema(lua_State *L, const pm_schema *s) {
    lua_createtable(L, 0, 10);
    lp_set_int(L, "id", s->id);
    lp_set_int(L, "version", s->version);
    lua_createtable(L, (int)s->n_fields, 0);
    for (size_t i = 0; i < s->n_fields; i++) {
        const pm_data_field *f = &s->fields[i];
        lua_createtable(L, 0, 5);
        lp_set_int(L, "id", f->id);
        lp_set_str(L, "name", f->name);
        push_type(L, f->type);
        lua_setfield(L, -2, "type");
        lp_set_bool(L, "nullable", f->type->nullable);
        lp_set_str(L, "description", f->description);
        lp_set_str(L, "default_value", f->default_value);
        lua_rawseti(L, -2, (int)i + 1);
    }
    lua_setfield(L, -2, "fields");
    lp_set_int(L, "highest_field_id", s->highest_field_id);
    lp_push_cstrv(L, s->partition_keys, s->n_partition_keys);
    lua_setfield(L, -2, "partition_keys");
    lp_push_cstrv(L, s->primary_keys, s->n_primary_keys);
    lua_setfield(L, -2, "primary_keys");
    lua_createtable(L, 0, (int)s->n_options);
    for (size_t i = 0; i < s->n_options; i++) lp_set_str(L, s->options[i].key, s->options[i].value);
    lua_setfield(L, -2, "options");
    lp_set_str(L, "comment", s->comment);
    lp_set_int(L, "time_millis", s->time_millis);
}

static int tbl_schema(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    if (lua_isnoneornil(L, 2)) { lp_push_schema(L, t->schema); return 1; }
    int64_t id;
    if (!lp_toint64(L, 2, &id)) return luaL_argerror(L, 2, "schema id must be an integer");
    pm_schema *s;
    pm_err e = {0};
    int rc = pm_schema_read(t->io, t->branch_root, id, &s, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_push_schema(L, s);
    pm_schema_free(s);
    return 1;
}

static int tbl_schemas(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    int64_t *ids = NULL;
    size_t n = 0;
    pm_err e = {0};
    int rc = pm_schema_list_ids(t->io, t->branch_root, &ids, &n, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        pm_schema *s;
        rc = pm_schema_read(t->io, t->branch_root, ids[i], &s, &e);
        if (rc) { free(ids); return lp_push_fail(L, rc, &e); }
        lp_push_schema(L, s);
        pm_schema_free(s);
        lua_rawseti(L, -2, (int)i + 1);
    }
    free(ids);
    return 1;
}

/* options() -> the table's own options; options(true) -> with defaults
 * filled in for every option we know. */
static int tbl_options(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    int with_defaults = lua_toboolean(L, 2);
    lua_newtable(L);
    if (with_defaults)
        for (const pm_kv *d = pm_option_defaults; d->key; d++) lp_set_str(L, d->key, d->value);
    for (size_t i = 0; i < t->schema->n_options; i++) lp_set_str(L, t->schema->options[i].key, t->schema->options[i].value);
    return 1;
}

static int tbl_option(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    const char *v = pm_schema_option_or_default(t->schema, luaL_checkstring(L, 2));
    if (v) lua_pushstring(L, v);
    else lua_pushnil(L);
    return 1;
}

/* ---- Snapshot ------------------------------------------------------------- */


lp_snap *lp_check_snap(lua_State *L, int i) {
    lp_snap *ud = luaL_checkudata(L, i, SNAP_MT);
    if (!ud->s) luaL_error(L, "attempt to use a closed paimon.Snapshot");
    if (!ud->owner->t) luaL_error(L, "the paimon.Table of this snapshot is closed");
    return ud;
}

/* Push a Snapshot userdata taking ownership of s; table userdata at tidx. */
void lp_push_snap(lua_State *L, int tidx, pm_snapshot *s, const char *tag) {
    tidx = tidx < 0 ? lua_gettop(L) + tidx + 1 : tidx;
    lp_snap *ud = lp_newuserdata(L, sizeof *ud);
    ud->s = s;
    ud->owner = lua_touserdata(L, tidx);
    ud->tag = tag ? pm_strdup(tag) : NULL;
    luaL_setmetatable(L, SNAP_MT);
    lp_setowner(L, -1, tidx);
}

static int load_snapshot(lua_State *L, int64_t id) {
    paimon_table *t = lp_check_table(L, 1);
    pm_snapshot *s;
    pm_err e = {0};
    int rc = pm_snapshot_read(t->io, t->branch_root, id, &s, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_push_snap(L, 1, s, NULL);
    return 1;
}

static int tbl_snapshot(lua_State *L) {
    lp_check_table(L, 1);
    int64_t id;
    if (!lp_toint64(L, 2, &id)) return luaL_argerror(L, 2, "snapshot id must be an integer");
    return load_snapshot(L, id);
}

static int tbl_latest(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    int64_t id;
    pm_err e = {0};
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &id, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    return load_snapshot(L, id);
}

static int tbl_earliest(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    int64_t id;
    pm_err e = {0};
    int rc = pm_snapshot_earliest_id(t->io, t->branch_root, &id, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    return load_snapshot(L, id);
}

static int tbl_snapshot_ids(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    int64_t *ids = NULL;
    size_t n = 0;
    pm_err e = {0};
    int rc = pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, &e);
    if (rc == PAIMON_NOTFOUND) { rc = 0; n = 0; }
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) { lp_pushint64(L, ids[i]); lua_rawseti(L, -2, (int)i + 1); }
    free(ids);
    return 1;
}

/* snapshots(): iterator over the existing snapshots in id order. */
static int snapshots_iter(lua_State *L) {
    /* upvalues: table, ids array, position */
    lua_Integer pos = lua_tointeger(L, lua_upvalueindex(3)) + 1;
    lua_rawgeti(L, lua_upvalueindex(2), (int)pos);
    if (lua_isnil(L, -1)) return 1;
    int64_t id = 0;
    lp_toint64(L, -1, &id);
    lua_pushinteger(L, pos);
    lua_replace(L, lua_upvalueindex(3));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_replace(L, 1);
    lua_settop(L, 1);
    paimon_table *t = lp_check_table(L, 1);
    pm_snapshot *s;
    pm_err e = {0};
    int rc = pm_snapshot_read(t->io, t->branch_root, id, &s, &e);
    if (rc == PAIMON_NOTFOUND) {
        /* expired while we iterate: skip it, like Java's snapshot iterators */
        lua_pushinteger(L, pos);
        return snapshots_iter(L);
    }
    if (rc) return lp_raise(L, &e);
    lp_push_snap(L, 1, s, NULL);
    return 1;
}

static int tbl_snapshots(lua_State *L) {
    lp_check_table(L, 1);
    lua_settop(L, 1);
    int n = tbl_snapshot_ids(L);
    if (n != 1) return n;
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, snapshots_iter, 3);
    return 1;
}

static int tbl_tags(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    char **names = NULL;
    size_t n = 0;
    pm_err e = {0};
    int rc = pm_tag_list(t->io, t->branch_root, &names, &n, &e);
    if (rc == PAIMON_NOTFOUND) { rc = 0; n = 0; }
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        pm_snapshot *s;
        rc = pm_tag_read(t->io, t->branch_root, names[i], &s, &e);
        if (rc == PAIMON_NOMEM) { pm_strv_free(names, n); return lp_push_fail(L, rc, &e); }
        if (rc) {   /* one unreadable tag is a row that says so, not the end of the listing */
            lua_createtable(L, 0, 2);
            lp_set_str(L, "name", names[i]);
            lp_set_str(L, "error", e.msg);
            lua_rawseti(L, -2, (int)i + 1);
            pm_err_clear(&e);
            continue;
        }
        lua_createtable(L, 0, 6);
        lp_set_str(L, "name", names[i]);
        lp_set_int(L, "snapshot_id", s->id);
        lp_set_int(L, "schema_id", s->schema_id);
        lp_set_int(L, "commit_time", s->time_millis);
        lp_set_opt(L, "record_count", s->total_record_count);
        /* epoch ms and ms, as every time and duration here (issue 24);
         * Java's forms (a LocalDateTime array, decimal seconds) stay in
         * the tag file */
        int64_t ct = 0, tr = 0;
        int has = pm_tag_times(s, &ct, &tr);
        if (has & 1) lp_set_int(L, "create_time", ct);
        if (has & 2) lp_set_int(L, "time_retained", tr);
        lp_push_snap(L, 1, s, names[i]);
        lua_setfield(L, -2, "snapshot");
        lua_rawseti(L, -2, (int)i + 1);
    }
    pm_strv_free(names, n);
    return 1;
}

static int tbl_tag(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    const char *name = luaL_checkstring(L, 2);
    pm_snapshot *s;
    pm_err e = {0};
    int rc = pm_tag_read(t->io, t->branch_root, name, &s, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_push_snap(L, 1, s, name);
    return 1;
}

static int tbl_consumers(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    char **ids = NULL;
    size_t n = 0;
    pm_err e = {0};
    int rc = pm_consumer_list(t->io, t->branch_root, &ids, &n, &e);
    if (rc == PAIMON_NOTFOUND) { rc = 0; n = 0; }
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        pm_consumer c;
        rc = pm_consumer_read(t->io, t->branch_root, ids[i], &c, &e);
        if (rc) { pm_strv_free(ids, n); return lp_push_fail(L, rc, &e); }
        /* when it was last updated: what consumer.expiration-time looks at */
        pm_buf path = {0};
        pm_stat st = {0};
        if (pm_buf_printf(&path, "%s/consumer/consumer-%s", t->branch_root, ids[i]) ||
            pm_io_stat(t->io, (char *)path.data, &st, &e) != PAIMON_OK)
            st.mtime_ms = 0;
        pm_buf_free(&path);
        lua_createtable(L, 0, 3);
        lp_set_str(L, "consumer_id", ids[i]);
        lp_set_int(L, "next_snapshot", c.next_snapshot);
        lp_set_int(L, "mtime", st.mtime_ms);
        lua_rawseti(L, -2, (int)i + 1);
    }
    pm_strv_free(ids, n);
    return 1;
}

/* ---- Snapshot fields ------------------------------------------------------ */

/* A snapshot's fields as Lua sees them: one table serves s.<field> (one
 * value pushed per access, as inspect reads a dozen fields of each of
 * 100,000 snapshots) and s:fields() (all of them). */
typedef enum { SF_STR, SF_INT, SF_INT32, SF_OPT, SF_LOG_OFFSETS, SF_PROPERTIES } snap_field_kind;
static const struct snap_field {
    const char *name;
    snap_field_kind kind;
    size_t offset;
} snap_fields_def[] = {
    {"version", SF_INT32, offsetof(pm_snapshot, version)},
    {"uuid", SF_STR, offsetof(pm_snapshot, uuid)},
    {"id", SF_INT, offsetof(pm_snapshot, id)},
    {"schema_id", SF_INT, offsetof(pm_snapshot, schema_id)},
    {"base_manifest_list", SF_STR, offsetof(pm_snapshot, base_manifest_list)},
    {"base_manifest_list_size", SF_OPT, offsetof(pm_snapshot, base_manifest_list_size)},
    {"delta_manifest_list", SF_STR, offsetof(pm_snapshot, delta_manifest_list)},
    {"delta_manifest_list_size", SF_OPT, offsetof(pm_snapshot, delta_manifest_list_size)},
    {"changelog_manifest_list", SF_STR, offsetof(pm_snapshot, changelog_manifest_list)},
    {"changelog_manifest_list_size", SF_OPT, offsetof(pm_snapshot, changelog_manifest_list_size)},
    {"index_manifest", SF_STR, offsetof(pm_snapshot, index_manifest)},
    {"commit_user", SF_STR, offsetof(pm_snapshot, commit_user)},
    {"writer_version", SF_STR, offsetof(pm_snapshot, writer_version)},
    {"commit_identifier", SF_INT, offsetof(pm_snapshot, commit_identifier)},
    {"commit_kind", SF_STR, offsetof(pm_snapshot, commit_kind)},
    {"time_millis", SF_INT, offsetof(pm_snapshot, time_millis)},
    {"log_offsets", SF_LOG_OFFSETS, 0},
    {"total_record_count", SF_OPT, offsetof(pm_snapshot, total_record_count)},
    {"delta_record_count", SF_OPT, offsetof(pm_snapshot, delta_record_count)},
    {"changelog_record_count", SF_OPT, offsetof(pm_snapshot, changelog_record_count)},
    {"watermark", SF_OPT, offsetof(pm_snapshot, watermark)},
    {"statistics", SF_STR, offsetof(pm_snapshot, statistics)},
    {"properties", SF_PROPERTIES, 0},
    {"next_row_id", SF_OPT, offsetof(pm_snapshot, next_row_id)},
    {"operation", SF_STR, offsetof(pm_snapshot, operation)},
};

/* Push field f of s; 0 (nothing pushed) when the snapshot does not have it. */
static int push_snapshot_field(lua_State *L, const pm_snapshot *s, const struct snap_field *f) {
    const char *base = (const char *)s + f->offset;
    switch (f->kind) {
    case SF_STR: {
        const char *v = *(char *const *)(const void *)base;
        if (!v) return 0;
        lua_pushstring(L, v);
        return 1;
    }
    case SF_INT: lp_pushint64(L, *(const int64_t *)(const void *)base); return 1;
    case SF_INT32: lp_pushint64(L, *(const int32_t *)(const void *)base); return 1;
    case SF_OPT: {
        const pm_opt_i64 *v = (const pm_opt_i64 *)(const void *)base;
        if (!v->has) return 0;
        lp_pushint64(L, v->v);
        return 1;
    }
    case SF_LOG_OFFSETS:
        if (!s->has_log_offsets) return 0;
        lua_createtable(L, 0, (int)s->n_log_offsets);
        for (size_t i = 0; i < s->n_log_offsets; i++) {
            lp_pushint64(L, s->log_offsets[i].offset);
            lua_rawseti(L, -2, s->log_offsets[i].bucket);
        }
        return 1;
    case SF_PROPERTIES:
        if (!s->has_properties) return 0;
        lua_createtable(L, 0, (int)s->n_properties);
        for (size_t i = 0; i < s->n_properties; i++) lp_set_str(L, s->properties[i].key, s->properties[i].value);
        return 1;
    }
    return 0;
}

static void push_snapshot_fields(lua_State *L, const pm_snapshot *s) {
    lua_createtable(L, 0, 28);
    for (size_t i = 0; i < sizeof snap_fields_def / sizeof snap_fields_def[0]; i++)
        if (push_snapshot_field(L, s, &snap_fields_def[i])) lua_setfield(L, -2, snap_fields_def[i].name);
}

static int snap_fields(lua_State *L) {
    lp_snap *ud = lp_check_snap(L, 1);
    push_snapshot_fields(L, ud->s);
    if (ud->tag) lp_set_str(L, "tag", ud->tag);
    return 1;
}

static int snap_close(lua_State *L) {
    lp_snap *ud = luaL_checkudata(L, 1, SNAP_MT);
    pm_snapshot_free(ud->s);
    ud->s = NULL;
    free(ud->tag);
    ud->tag = NULL;
    return 0;
}

static int snap_tostring(lua_State *L) {
    lp_snap *ud = luaL_checkudata(L, 1, SNAP_MT);
    if (!ud->s) lua_pushstring(L, "paimon.Snapshot (closed)");
    else {
        char buf[64];
        snprintf(buf, sizeof buf, "%lld", (long long)ud->s->id);
        lua_pushfstring(L, "paimon.Snapshot %s (%s)", buf, ud->s->commit_kind);
    }
    return 1;
}

static int snap_to_json(lua_State *L) {
    lp_snap *ud = lp_check_snap(L, 1);
    pm_buf b = {0};
    int rc = pm_snapshot_to_json(ud->s, &b);
    if (rc) { pm_buf_free(&b); return luaL_error(L, "out of memory"); }
    lua_pushlstring(L, (const char *)b.data, b.len);
    pm_buf_free(&b);
    return 1;
}

/* ---- iterators ----------------------------------------------------------------- */

/* ---- partition filters from Lua ------------------------------------------------- */

void lp_partition_filter_free(pm_partition_filter *f) {
    for (size_t i = 0; i < f->n; i++) {
        free((char *)f->keys[i]);
        free((char *)f->values[i]);
    }
    free((void *)f->keys);
    free((void *)f->values);
    f->keys = f->values = NULL;
    f->n = 0;
}

const char *lp_partition_filter_from_table(lua_State *L, int idx, pm_partition_filter *f) {
    idx = idx < 0 ? lua_gettop(L) + idx + 1 : idx;
    size_t cap = f->n;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING) { lua_pop(L, 2); return "partition keys must be column names"; }
        if (f->n == cap) {
            cap = cap ? cap * 2 : 4;
            const char **k = realloc((void *)f->keys, cap * sizeof *k);
            if (k) f->keys = k;
            const char **v = realloc((void *)f->values, cap * sizeof *v);
            if (v) f->values = v;
            if (!k || !v) { lua_pop(L, 2); return "out of memory"; }
        }
        char nb[32];
        const char *val;
        int64_t iv;
        int t = lua_type(L, -1);
        if (t == LUA_TLIGHTUSERDATA && !lua_touserdata(L, -1)) val = NULL;   /* paimon.null */
        else if (t == LUA_TBOOLEAN) val = lua_toboolean(L, -1) ? "true" : "false";
        else if (t == LUA_TNUMBER && lp_toint64(L, -1, &iv)) {                /* 10.0 matches f1=10 */
            snprintf(nb, sizeof nb, "%lld", (long long)iv);
            val = nb;
        } else if (t == LUA_TSTRING) {
            val = lua_tostring(L, -1);
        } else if (t == LUA_TNUMBER) {
            lua_pushvalue(L, -1);               /* convert a copy: lua_next needs the key untouched */
            snprintf(nb, sizeof nb, "%s", lua_tostring(L, -1));
            lua_pop(L, 1);
            val = nb;
        } else {
            lua_pop(L, 2);
            return "partition values must be strings, numbers, booleans or paimon.null";
        }
        f->keys[f->n] = pm_strdup(lua_tostring(L, -2));
        f->values[f->n] = val ? pm_strdup(val) : NULL;
        f->n++;
        lua_pop(L, 1);
    }
    return NULL;
}

void lp_opt_partition_filter(lua_State *L, int opts_idx, pm_partition_filter *f) {
    memset(f, 0, sizeof *f);
    if (lua_isnoneornil(L, opts_idx)) return;
    luaL_checktype(L, opts_idx, LUA_TTABLE);
    lua_getfield(L, opts_idx, "partition");
    if (!lua_isnil(L, -1)) {
        luaL_argcheck(L, lua_type(L, -1) == LUA_TTABLE, opts_idx, "partition must be a table {column = value}");
        const char *err = lp_partition_filter_from_table(L, -1, f);
        if (err) {
            lp_partition_filter_free(f);
            luaL_argerror(L, opts_idx, err);
        }
    }
    lua_pop(L, 1);
}

typedef enum { IT_META, IT_ENTRY, IT_INDEX, IT_SCAN } iter_kind;

typedef struct lp_iter {
    iter_kind kind;
    pm_manifest_reader *r;
    pm_scan *scan;
    lp_table *owner;
    pm_partition_filter filter;   /* owned strings */
    pm_buf path;
    int stats;                    /* files{stats = true}: add the evolved value stats */
} lp_iter;

static void iter_release(lp_iter *it) {
    pm_manifest_close(it->r);
    it->r = NULL;
    pm_scan_close(it->scan);
    it->scan = NULL;
    lp_partition_filter_free(&it->filter);
    pm_buf_free(&it->path);
}

static int iter_gc(lua_State *L) {
    iter_release(luaL_checkudata(L, 1, ITER_MT));
    return 0;
}

static lp_iter *new_iter(lua_State *L, iter_kind kind, int tidx) {
    tidx = tidx < 0 ? lua_gettop(L) + tidx + 1 : tidx;
    lp_iter *it = lp_newuserdata(L, sizeof *it);
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->owner = lua_touserdata(L, tidx);
    luaL_setmetatable(L, ITER_MT);
    lp_setowner(L, -1, tidx);
    return it;
}

void lp_push_stats(lua_State *L, const pm_stats *st) {
    lua_createtable(L, 0, 3);
    lp_set_lstr(L, "min_values", st->min_values.ptr, st->min_values.len);
    lp_set_lstr(L, "max_values", st->max_values.ptr, st->max_values.len);
    if (st->has_null_counts) {
        lua_createtable(L, (int)st->n_null_counts, 0);
        for (size_t i = 0; i < st->n_null_counts; i++) {
            if (st->null_count_is_null && st->null_count_is_null[i]) lua_pushlightuserdata(L, NULL);
            else lp_pushint64(L, st->null_counts[i]);
            lua_rawseti(L, -2, (int)i + 1);
        }
        lua_setfield(L, -2, "null_counts");
    }
}

void lp_push_datum(lua_State *L, const pm_type *ty, const pm_datum *d) {
    if (d->is_null) { lua_pushlightuserdata(L, NULL); return; }
    switch (ty->root) {
    case PM_T_BOOLEAN: lua_pushboolean(L, d->v.i != 0); return;
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT:
    case PM_T_DATE: case PM_T_TIME:
        lp_pushint64(L, d->v.i); return;
    case PM_T_FLOAT: lua_pushnumber(L, d->v.f); return;
    case PM_T_DOUBLE: lua_pushnumber(L, d->v.d); return;
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY:
        lua_pushlstring(L, (const char *)d->v.bin.ptr, d->v.bin.len); return;
    default: {
        pm_buf b = {0};
        if (pm_datum_to_string(ty, d, 1, &b) == PAIMON_OK) lua_pushlstring(L, (const char *)b.data, b.len);
        else lua_pushnil(L);
        pm_buf_free(&b);
    }
    }
}

/* partition table {col = value}; null values are paimon.null. */
int lp_push_partition(lua_State *L, const paimon_table *t, pm_bytes part, pm_err *e) {
    pm_datum stackv[32];
    if (t->n_part > 32) return pm_fail(e, PAIMON_UNSUPPORTED, "more than 32 partition keys");
    int rc = pm_table_partition_decode(t, part, stackv, e);
    if (rc) return rc;
    lua_createtable(L, 0, (int)t->n_part);
    for (size_t i = 0; i < t->n_part; i++) {
        lp_push_datum(L, t->part_types[i], &stackv[i]);
        lua_setfield(L, -2, t->part_keys[i]);
    }
    return PAIMON_OK;
}

void lp_push_data_file(lua_State *L, const pm_data_file *d) {
    lua_createtable(L, 0, 24);
    lp_set_str(L, "file_name", d->file_name);
    lp_set_int(L, "file_size", d->file_size);
    lp_set_int(L, "row_count", d->row_count);
    lp_set_lstr(L, "min_key", d->min_key.ptr, d->min_key.len);
    lp_set_lstr(L, "max_key", d->max_key.ptr, d->max_key.len);
    lp_push_stats(L, &d->key_stats);
    lua_setfield(L, -2, "key_stats");
    lp_push_stats(L, &d->value_stats);
    lua_setfield(L, -2, "value_stats");
    lp_set_int(L, "min_sequence_number", d->min_sequence_number);
    lp_set_int(L, "max_sequence_number", d->max_sequence_number);
    lp_set_int(L, "schema_id", d->schema_id);
    lp_set_int(L, "level", d->level);
    lp_push_strs(L, d->extra_files);
    lua_setfield(L, -2, "extra_files");
    lp_set_opt(L, "creation_time", d->creation_time);
    lp_set_opt(L, "delete_row_count", d->delete_row_count);
    if (d->has_embedded_index) lp_set_lstr(L, "embedded_file_index", d->embedded_index.ptr, d->embedded_index.len);
    lp_set_opt32(L, "file_source", d->file_source);
    if (d->has_value_stats_cols) { lp_push_strs(L, d->value_stats_cols); lua_setfield(L, -2, "value_stats_cols"); }
    lp_set_str(L, "external_path", d->external_path);
    lp_set_opt(L, "first_row_id", d->first_row_id);
    if (d->has_write_cols) { lp_push_strs(L, d->write_cols); lua_setfield(L, -2, "write_cols"); }
    if (d->has_write_cols_sequences) {
        lua_createtable(L, (int)d->n_write_cols_sequences, 0);
        for (size_t i = 0; i < d->n_write_cols_sequences; i++) {
            lp_pushint64(L, d->write_cols_sequences[i]);
            lua_rawseti(L, -2, (int)i + 1);
        }
        lua_setfield(L, -2, "write_cols_sequences");
    }
}

static int push_entry(lua_State *L, lp_iter *it, const pm_manifest_entry *m, pm_err *e) {
    const paimon_table *t = it->owner->t;
    lua_createtable(L, 0, 8);
    lp_set_str(L, "kind", m->kind == PM_FILE_ADD ? "ADD" : "DELETE");
    int rc = lp_push_partition(L, t, m->partition, e);
    if (rc) return rc;
    lua_setfield(L, -2, "partition");
    it->path.len = 0;
    if ((rc = pm_table_partition_path(t, m->partition, &it->path, e))) return rc;
    lp_set_lstr(L, "partition_path", it->path.data, it->path.len);
    lp_set_int(L, "bucket", m->bucket);
    lp_set_int(L, "total_buckets", m->total_buckets);
    if ((rc = pm_table_file_path(t, m, &it->path, e))) return rc;
    lp_set_lstr(L, "file_path", it->path.data, it->path.len);
    lp_push_data_file(L, &m->file);
    lua_setfield(L, -2, "file");
    return PAIMON_OK;
}

static int push_meta(lua_State *L, const paimon_table *t, const pm_manifest_meta *m, pm_err *e) {
    (void)t; (void)e;
    lua_createtable(L, 0, 13);
    lp_set_str(L, "file_name", m->file_name);
    lp_set_int(L, "file_size", m->file_size);
    lp_set_int(L, "num_added_files", m->num_added_files);
    lp_set_int(L, "num_deleted_files", m->num_deleted_files);
    lp_push_stats(L, &m->partition_stats);
    lua_setfield(L, -2, "partition_stats");
    lp_set_int(L, "schema_id", m->schema_id);
    lp_set_opt32(L, "min_bucket", m->min_bucket);
    lp_set_opt32(L, "max_bucket", m->max_bucket);
    lp_set_opt32(L, "min_level", m->min_level);
    lp_set_opt32(L, "max_level", m->max_level);
    lp_set_opt(L, "min_row_id", m->min_row_id);
    lp_set_opt(L, "max_row_id", m->max_row_id);
    return PAIMON_OK;
}

static int push_index(lua_State *L, const paimon_table *t, const pm_index_entry *m, pm_err *e) {
    lua_createtable(L, 0, 12);
    lp_set_str(L, "kind", m->kind == PM_FILE_ADD ? "ADD" : "DELETE");
    int rc = lp_push_partition(L, t, m->partition, e);
    if (rc) return rc;
    lua_setfield(L, -2, "partition");
    lp_set_int(L, "bucket", m->bucket);
    lp_set_str(L, "index_type", m->index_type);
    lp_set_str(L, "file_name", m->file_name);
    lp_set_int(L, "file_size", m->file_size);
    lp_set_int(L, "row_count", m->row_count);
    if (m->has_dv_ranges) {
        lua_createtable(L, (int)m->n_dv_ranges, 0);
        for (size_t i = 0; i < m->n_dv_ranges; i++) {
            lua_createtable(L, 0, 4);
            lp_set_str(L, "data_file", m->dv_ranges[i].data_file);
            lp_set_int(L, "offset", m->dv_ranges[i].offset);
            lp_set_int(L, "length", m->dv_ranges[i].length);
            lp_set_opt(L, "cardinality", m->dv_ranges[i].cardinality);
            lua_rawseti(L, -2, (int)i + 1);
        }
        lua_setfield(L, -2, "deletion_vectors_ranges");
    }
    lp_set_str(L, "external_path", m->external_path);
    if (m->has_global_index) {
        const struct pm_global_index *g = &m->global_index;
        lua_createtable(L, 0, 6);
        lp_set_int(L, "row_range_start", g->row_range_start);
        lp_set_int(L, "row_range_end", g->row_range_end);
        lp_set_int(L, "index_field_id", g->index_field_id);
        if (g->has_extra_field_ids) {
            lua_createtable(L, (int)g->n_extra_field_ids, 0);
            for (size_t i = 0; i < g->n_extra_field_ids; i++) {
                lua_pushinteger(L, g->extra_field_ids[i]);
                lua_rawseti(L, -2, (int)i + 1);
            }
            lua_setfield(L, -2, "extra_field_ids");
        }
        if (g->has_index_meta) lp_set_lstr(L, "index_meta", g->index_meta.ptr, g->index_meta.len);
        if (g->has_source_meta) lp_set_lstr(L, "source_meta", g->source_meta.ptr, g->source_meta.len);
        lua_setfield(L, -2, "global_index");
    }
    return PAIMON_OK;
}

/* A stats value as the read side shows it: numbers, booleans, strings, the
 * rest as Java's CAST(... AS STRING). */
static void push_stat_value(lua_State *L, const pm_type *ty, const pm_datum *d) {
    switch (ty->root) {
    case PM_T_BOOLEAN: case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT:
    case PM_T_FLOAT: case PM_T_DOUBLE: case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY:
        lp_push_datum(L, ty, d);
        return;
    default: {
        pm_buf b = {0};
        if (pm_datum_to_string(ty, d, 0, &b) == PAIMON_OK) lua_pushlstring(L, (const char *)b.data, b.len);
        else lua_pushlightuserdata(L, NULL);
        pm_buf_free(&b);
    }
    }
}

/* {null_value_counts, min_value_stats, max_value_stats} by the latest
 * schema's column names (Java's Files system table; pm_value_stats_evolve) */
static int push_stats_evolved(lua_State *L, paimon_table *t, const pm_data_file *f, pm_err *e) {
    size_t n = t->schema->n_fields;
    pm_datum *mins = calloc(n ? n : 1, sizeof *mins), *maxs = calloc(n ? n : 1, sizeof *maxs);
    int64_t *nulls = calloc(n ? n : 1, sizeof *nulls);
    pm_buf *scratch = calloc(2 * (n ? n : 1), sizeof *scratch);
    int rc = !mins || !maxs || !nulls || !scratch ? pm_fail(e, PAIMON_NOMEM, "out of memory")
                                                   : pm_value_stats_evolve(t, f, mins, maxs, nulls, scratch, e);
    if (!rc) {
        const pm_schema *s = t->schema;
        lua_createtable(L, 0, 3);
        lua_createtable(L, 0, (int)n);
        for (size_t i = 0; i < n; i++) {
            if (nulls[i] < 0) lua_pushlightuserdata(L, NULL); else lp_pushint64(L, nulls[i]);
            lua_setfield(L, -2, s->fields[i].name);
        }
        lua_setfield(L, -2, "null_value_counts");
        for (int k = 0; k < 2; k++) {
            const pm_datum *v = k ? maxs : mins;
            lua_createtable(L, 0, (int)n);
            for (size_t i = 0; i < n; i++) {
                if (v[i].is_null) lua_pushlightuserdata(L, NULL); else push_stat_value(L, s->fields[i].type, &v[i]);
                lua_setfield(L, -2, s->fields[i].name);
            }
            lua_setfield(L, -2, k ? "max_value_stats" : "min_value_stats");
        }
    }
    if (scratch) for (size_t i = 0; i < 2 * n; i++) pm_buf_free(&scratch[i]);
    free(scratch);
    free(mins);
    free(maxs);
    free(nulls);
    return rc;
}

static int iter_next(lua_State *L) {
    lp_iter *it = luaL_checkudata(L, lua_upvalueindex(1), ITER_MT);
    if (!it->r && !it->scan) return 0;
    if (!it->owner->t) return luaL_error(L, "the paimon.Table of this iterator is closed");
    pm_err e = {0};
    int rc;
    switch (it->kind) {
    case IT_META: {
        const pm_manifest_meta *m;
        rc = pm_manifest_next_meta(it->r, &m, &e);
        if (!rc) rc = push_meta(L, it->owner->t, m, &e);
        break;
    }
    case IT_ENTRY: {
        const pm_manifest_entry *m;
        rc = pm_manifest_next_entry(it->r, &m, &e);
        if (!rc) rc = push_entry(L, it, m, &e);
        break;
    }
    case IT_INDEX: {
        const pm_index_entry *m;
        rc = pm_manifest_next_index(it->r, &m, &e);
        if (!rc) rc = push_index(L, it->owner->t, m, &e);
        break;
    }
    default: {
        const pm_manifest_entry *m;
        rc = pm_scan_next(it->scan, &m, &e);
        if (!rc) rc = push_entry(L, it, m, &e);
        if (!rc && it->stats && (rc = push_stats_evolved(L, it->owner->t, &m->file, &e)) == PAIMON_OK)
            lua_setfield(L, -2, "stats");
    }
    }
    if (rc == PAIMON_DONE) { iter_release(it); return 0; }
    if (rc) { iter_release(it); return lp_raise(L, &e); }
    return 1;
}

/* Return the iterator function; with Lua 5.4 also the to-be-closed value so
 * `break` releases the reader at once. */
static int push_iter_fn(lua_State *L) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, iter_next, 1);
    lua_insert(L, -2);          /* fn, ud */
    lua_pushnil(L);             /* fn, ud, nil */
    lua_insert(L, -2);          /* fn, nil, ud */
    lua_pushnil(L);
    lua_insert(L, -2);          /* fn, nil, nil, ud */
    return 4;
}

static int open_list_iter(lua_State *L, lp_snap *ud, const char *list_name, pm_manifest_kind kind, iter_kind ik) {
    if (!list_name) { /* absent list (e.g. no changelog): an empty iteration */
        new_iter(L, ik, 1);
        return push_iter_fn(L);
    }
    pm_err e = {0};
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(ud->owner->t, list_name, kind, &r, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_iter *it = new_iter(L, ik, 1);
    it->r = r;
    return push_iter_fn(L);
}

/* manifests(kind): kind "base" | "delta" | "changelog" (default: base then
 * delta is not one file, so kind is required except via helpers). */
static int snap_manifests(lua_State *L) {
    lp_snap *ud = lp_check_snap(L, 1);
    static const char *const kinds[] = {"base", "delta", "changelog", NULL};
    int k = luaL_checkoption(L, 2, NULL, kinds);
    const char *list = k == 0 ? ud->s->base_manifest_list : k == 1 ? ud->s->delta_manifest_list
                                                                  : ud->s->changelog_manifest_list;
    /* iterator owner is the table: stack slot 1 is the snapshot; use its owner */
    lua_settop(L, 1);
    lp_getowner(L, 1);
    lua_replace(L, 1);          /* slot 1 = table userdata */
    return open_list_iter(L, ud, list, PM_MANIFEST_LIST, IT_META);
}

static int snap_index_entries(lua_State *L) {
    lp_snap *ud = lp_check_snap(L, 1);
    lua_settop(L, 1);
    lp_getowner(L, 1);
    lua_replace(L, 1);
    return open_list_iter(L, ud, ud->s->index_manifest, PM_INDEX_MANIFEST, IT_INDEX);
}

/* entries(manifest_file_name): the raw entries of one manifest file. */
static int snap_entries(lua_State *L) {
    lp_snap *ud = lp_check_snap(L, 1);
    const char *name = luaL_checkstring(L, 2);
    lua_settop(L, 1);
    lp_getowner(L, 1);
    lua_replace(L, 1);
    return open_list_iter(L, ud, name, PM_MANIFEST_FILE, IT_ENTRY);
}

/* files{partition = {k = v, ...}}: the live data files. */
static int snap_files(lua_State *L) {
    lp_snap *ud = lp_check_snap(L, 1);
    pm_partition_filter f;
    static const char *const known[] = {"partition", "stats", NULL};
    lp_check_options(L, 2, "files", known);
    int stats = 0;
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "stats");
        stats = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    lp_opt_partition_filter(L, 2, &f);
    lua_settop(L, 1);
    lp_getowner(L, 1);
    lua_replace(L, 1);
    lp_iter *it = new_iter(L, IT_SCAN, 1);
    it->filter = f;
    it->stats = stats;
    pm_err e = {0};
    int rc = pm_scan_open(ud->owner->t, ud->s, &it->filter, &it->scan, &e);
    if (rc) { iter_release(it); return lp_push_fail(L, rc, &e); }
    return push_iter_fn(L);
}

static int snap_index(lua_State *L) {
    lp_snap *ud = luaL_checkudata(L, 1, SNAP_MT);
    /* methods first */
    luaL_getmetatable(L, SNAP_MT);
    lua_getfield(L, -1, "__methods");
    lua_pushvalue(L, 2);
    lua_rawget(L, -2);
    if (!lua_isnil(L, -1)) return 1;
    lua_settop(L, 2);
    if (!ud->s) return luaL_error(L, "attempt to use a closed paimon.Snapshot");
    if (lua_type(L, 2) != LUA_TSTRING) return 0;
    const char *key = lua_tostring(L, 2);
    if (!strcmp(key, "tag")) {
        if (!ud->tag) return 0;
        lua_pushstring(L, ud->tag);
        return 1;
    }
    for (size_t i = 0; i < sizeof snap_fields_def / sizeof snap_fields_def[0]; i++)
        if (!strcmp(key, snap_fields_def[i].name)) return push_snapshot_field(L, ud->s, &snap_fields_def[i]);
    return 0;
}

static const luaL_Reg table_methods[] = {
    {"branch", tbl_branch},
    {"close", tbl_close},
    {"consumers", tbl_consumers},
    {"earliest_snapshot", tbl_earliest},
    {"latest_snapshot", tbl_latest},
    {"option", tbl_option},
    {"options", tbl_options},
    {"path", tbl_path},
    {"schema", tbl_schema},
    {"schemas", tbl_schemas},
    {"snapshot", tbl_snapshot},
    {"snapshot_ids", tbl_snapshot_ids},
    {"snapshots", tbl_snapshots},
    {"tag", tbl_tag},
    {"tags", tbl_tags},
    {NULL, NULL}};

static const luaL_Reg table_meta[] = {
    {"__gc", tbl_close},
    {"__close", tbl_close},
    {"__tostring", tbl_tostring},
    {NULL, NULL}};

static const luaL_Reg snap_methods[] = {
    {"close", snap_close},
    {"entries", snap_entries},
    {"fields", snap_fields},
    {"files", snap_files},
    {"index_entries", snap_index_entries},
    {"manifests", snap_manifests},
    {"to_json", snap_to_json},
    {NULL, NULL}};

static const luaL_Reg snap_meta[] = {
    {"__gc", snap_close},
    {"__close", snap_close},
    {"__tostring", snap_tostring},
    {"__index", snap_index},
    {NULL, NULL}};

static const luaL_Reg iter_meta[] = {
    {"__gc", iter_gc},
    {"__close", iter_gc},
    {NULL, NULL}};

static int l_version(lua_State *L) { lua_pushstring(L, PAIMON_VERSION); return 1; }

/* paimon.core.fileio_option_known(uri, key): whether the FileIO of uri's
 * scheme takes option key (create_table.lua keeps those out of the schema). */
static int l_fileio_option_known(lua_State *L) {
    lua_pushboolean(L, pm_fileio_option_known(luaL_checkstring(L, 1), luaL_checkstring(L, 2)));
    return 1;
}

/* paimon.core.option_is_secret(key): whether the value is a credential. */
static int l_option_is_secret(lua_State *L) {
    lua_pushboolean(L, pm_option_is_secret(luaL_checkstring(L, 1)));
    return 1;
}

/* paimon.interrupt(): asks the interruptible operation in progress
 * (expiration, orphan cleaning) to stop at its next consistent point. */
static int l_interrupt(lua_State *L) {
    (void)L;
    paimon_interrupt();
    return 0;
}

static const luaL_Reg core_funcs[] = {
    {"open", l_open},
    {"interrupt", l_interrupt},
    {"version", l_version},
    {"check_options", l_check_options},
    {"fileio_option_known", l_fileio_option_known},
    {"option_is_secret", l_option_is_secret},
    {NULL, NULL}};

static void new_type(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods, int methods_as_index) {
    luaL_newmetatable(L, name);
    lp_setfuncs(L, meta);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__name");        /* LuaJIT does not set it */
    if (methods) {
        lua_newtable(L);
        lp_setfuncs(L, methods);
        if (methods_as_index) lua_setfield(L, -2, "__index");
        else lua_setfield(L, -2, "__methods");
    }
    lua_pop(L, 1);
}

static void add_methods(lua_State *L, const char *mt, const char *field, const luaL_Reg *methods) {
    luaL_getmetatable(L, mt);
    lua_getfield(L, -1, field);
    lp_setfuncs(L, methods);
    lua_pop(L, 2);
}

void lp_add_table_methods(lua_State *L, const luaL_Reg *methods) {
    add_methods(L, TABLE_MT, "__index", methods);
}

void lp_add_snapshot_methods(lua_State *L, const luaL_Reg *methods) {
    add_methods(L, SNAP_MT, "__methods", methods);
}

int luaopen_paimon_core(lua_State *L);
__attribute__((visibility("default"))) int luaopen_paimon_core(lua_State *L) {
    new_type(L, TABLE_MT, table_meta, table_methods, 1);
    new_type(L, SNAP_MT, snap_meta, snap_methods, 0);
    new_type(L, ITER_MT, iter_meta, NULL, 0);
    lua_newtable(L);
    lp_setfuncs(L, core_funcs);
    lp_open_write(L, lua_gettop(L));
    lp_open_maint(L, lua_gettop(L));
    lp_open_orphan(L, lua_gettop(L));
    lp_open_upkeep(L, lua_gettop(L));
    lp_open_verify(L, lua_gettop(L));
    lp_open_rollback(L, lua_gettop(L));
    lp_open_partition(L, lua_gettop(L));
    lp_open_tags(L, lua_gettop(L));
    lp_open_branches(L, lua_gettop(L));
    lp_open_changelogs(L, lua_gettop(L));
    lp_open_json(L, lua_gettop(L));
    lp_open_warehouse(L, lua_gettop(L));
    lp_open_alter(L, lua_gettop(L));
    /* Java's option defaults as the core applies them (t:option falls back
     * to these): the Lua side reads them here instead of keeping a copy. */
    lua_newtable(L);
    for (const pm_kv *d = pm_option_defaults; d->key; d++) lp_set_str(L, d->key, d->value);
    lua_setfield(L, -2, "defaults");
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    lua_pushstring(L, PAIMON_VERSION);
    lua_setfield(L, -2, "_VERSION");
    return 1;
}
