/* paimon.core, partition drop and expiry:
 *   t:partition_entries([snapshot_id])   live partitions with counts
 *   t:drop_partitions(specs [, opts])    OVERWRITE snapshot of DELETE entries
 *   t:expire_partitions([opts])          paimon.partition_expire.run
 *   paimon.core.wall_clock_ms()          local wall clock as epoch millis
 *   paimon.core.parse_duration_ms(text)  Paimon's duration syntax ("7 d", "1h")
 * (the clock Paimon uses for _CREATION_TIME and partition times). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lpaimon.h"
#include "pm_partition_ops.h"

static int l_wall_clock_ms(lua_State *L) {
    lp_pushint64(L, pm_local_now_millis());
    return 1;
}

/* paimon.core.parse_duration_ms("7 d") -> millis | nil, message (Paimon's
 * TimeUtils.parseDuration) */
static int l_parse_duration_ms(lua_State *L) {
    pm_err e = {0};
    int64_t ms = 0;
    int rc = pm_parse_duration_ms(luaL_checkstring(L, 1), &ms, &e);
    if (rc) {
        lp_pushfail(L);
        lua_pushstring(L, e.msg[0] ? e.msg : "invalid duration");
        return 2;
    }
    lp_pushint64(L, ms);
    return 1;
}

/* ---- partition specs --------------------------------------------------------- */

typedef struct specs {
    pm_partition_filter *v;
    size_t n;
    pm_bytes *exact;
    size_t n_exact;
} specs;

static void specs_free(specs *s) {
    for (size_t i = 0; i < s->n; i++) lp_partition_filter_free(&s->v[i]);
    free(s->v);
    for (size_t i = 0; i < s->n_exact; i++) free((void *)s->exact[i].ptr);
    free(s->exact);
    memset(s, 0, sizeof *s);
}

/* The spec {col = value} at idx appended to s. Returns NULL or an error text. */
static const char *spec_from_table(lua_State *L, int idx, specs *s) {
    pm_partition_filter *nv = realloc(s->v, (s->n + 1) * sizeof *nv);
    if (!nv) return "out of memory";
    s->v = nv;
    pm_partition_filter *f = &s->v[s->n++];
    memset(f, 0, sizeof *f);
    const char *err = lp_partition_filter_from_table(L, idx, f);
    if (err) return err;
    if (f->n == 0) return "an empty partition spec would drop every partition";
    return NULL;
}

/* specs: {col = v} or an array of them. */
static void check_specs(lua_State *L, int idx, specs *s) {
    if (lua_isnoneornil(L, idx)) return;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_rawgeti(L, idx, 1);
    int is_list = !lua_isnil(L, -1);
    lua_pop(L, 1);
    const char *err = NULL;
    if (!is_list) {
        if (lua_next(L, (lua_pushnil(L), idx))) {
            lua_pop(L, 2);
            err = spec_from_table(L, idx, s);
        }
    } else {
        size_t n = lp_rawlen(L, idx);
        for (size_t i = 1; i <= n && !err; i++) {
            lua_rawgeti(L, idx, (int)i);
            if (!lua_istable(L, -1)) err = "each partition spec must be a table {column = value}";
            else err = spec_from_table(L, lua_gettop(L), s);
            lua_pop(L, 1);
        }
    }
    if (err) {
        specs_free(s);
        luaL_argerror(L, idx, err);
    }
}

/* opts.exact: array of BinaryRow byte strings (entry.binary_row). */
static int check_exact(lua_State *L, int opts, specs *s) {
    int given = 0;
    lua_getfield(L, opts, "exact");
    if (lua_istable(L, -1)) {
        given = 1;
        size_t n = lp_rawlen(L, -1);
        s->exact = calloc(n ? n : 1, sizeof *s->exact);
        for (size_t i = 1; s->exact && i <= n; i++) {
            lua_rawgeti(L, -1, (int)i);
            size_t len;
            const char *b = lua_tolstring(L, -1, &len);
            if (b) {
                uint8_t *p = malloc(len ? len : 1);
                if (p) {
                    if (len) memcpy(p, b, len);
                    s->exact[s->n_exact++] = (pm_bytes){p, len};
                }
            }
            lua_pop(L, 1);
        }
    } else if (!lua_isnil(L, -1)) {
        specs_free(s);
        luaL_argerror(L, opts, "exact must be an array of partition byte strings");
    }
    lua_pop(L, 1);
    return given;
}

/* ---- results ----------------------------------------------------------------- */

/* "partition" ({column = typed value}) and "values" (Java's toString of
 * each, in key order: values-time input) of BinaryRow part, set on the
 * table at tidx. */
static int set_partition_values(lua_State *L, const paimon_table *t, const uint8_t *part, size_t len, int tidx,
                                pm_err *e) {
    tidx = tidx < 0 ? lua_gettop(L) + tidx + 1 : tidx;
    int rc = lp_push_partition(L, t, (pm_bytes){part, len}, e);
    if (rc) return rc;
    lua_setfield(L, tidx, "partition");
    pm_datum vals[32];
    if (t->n_part > 32) return pm_fail(e, PAIMON_UNSUPPORTED, "more than 32 partition keys");
    if ((rc = pm_table_partition_decode(t, (pm_bytes){part, len}, vals, e))) return rc;
    lua_createtable(L, (int)t->n_part, 0);
    pm_buf b = {0};
    for (size_t i = 0; i < t->n_part; i++) {
        if (vals[i].is_null) lua_pushlightuserdata(L, NULL);
        else {
            b.len = 0;
            if (pm_datum_to_string(t->part_types[i], &vals[i], 1, &b)) { pm_buf_free(&b); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
            lua_pushlstring(L, b.data ? (const char *)b.data : "", b.len);
        }
        lua_rawseti(L, -2, (int)i + 1);
    }
    pm_buf_free(&b);
    lua_setfield(L, tidx, "values");
    return PAIMON_OK;
}

static int push_stat(lua_State *L, const paimon_table *t, const pm_part_stat *x, pm_err *e) {
    lua_createtable(L, 0, 10);
    int rc = set_partition_values(L, t, x->part, x->part_len, -1, e);
    if (rc) return rc;
    lp_set_str(L, "path", x->path);
    lp_set_lstr(L, "binary_row", x->part, x->part_len);
    lp_set_int(L, "file_count", x->file_count);
    lp_set_int(L, "record_count", x->record_count);
    lp_set_int(L, "file_size_in_bytes", x->file_size);
    if (x->has_creation_time) lp_set_int(L, "last_file_creation_time", x->last_creation_time);
    return PAIMON_OK;
}

/* t:partition_entries([snapshot_id]) -> array, snapshot_id | nil, msg, code */
static int tbl_partition_entries(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    pm_err e = {0};
    pm_snapshot *s = NULL;
    int rc;
    if (lua_isnoneornil(L, 2)) {
        int64_t id = 0;
        rc = pm_snapshot_latest_id(t->io, t->branch_root, &id, &e);
        if (rc == PAIMON_NOTFOUND) {
            lua_newtable(L);
            lua_pushnil(L);
            return 2;
        }
        if (!rc) rc = pm_snapshot_read(t->io, t->branch_root, id, &s, &e);
    } else {
        rc = pm_snapshot_read(t->io, t->branch_root, (int64_t)luaL_checknumber(L, 2), &s, &e);
    }
    if (rc) return lp_push_fail(L, rc, &e);
    pm_part_stat *v = NULL;
    size_t n = 0;
    rc = pm_partition_entries(t, s, NULL, &v, &n, &e);
    int64_t sid = s->id;
    pm_snapshot_free(s);
    if (rc) return lp_push_fail(L, rc, &e);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n && !rc; i++) {
        rc = push_stat(L, t, &v[i], &e);
        if (!rc) lua_rawseti(L, -2, (int)i + 1);
    }
    pm_part_stats_free(v, n);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_pushint64(L, sid);
    return 2;
}

typedef struct retry_ud { lua_State *L; int fn; } retry_ud;

static void on_retry(void *ud, int attempt, const pm_err *why) {
    retry_ud *r = ud;
    if (!r->fn) return;
    lua_pushvalue(r->L, r->fn);
    lua_pushinteger(r->L, attempt);
    lua_pushstring(r->L, why->msg);
    if (lua_pcall(r->L, 2, 0, 0)) lua_pop(r->L, 1);
}

/* The Lua values of the layer's dropped partitions (the table at the
 * stack top): "partition" and "values" from each one's binary_row. */
static int decorate_partitions(lua_State *L, const paimon_table *t, pm_err *e) {
    lua_getfield(L, -1, "partitions");
    size_t n = lp_rawlen(L, -1);
    int rc = PAIMON_OK;
    for (size_t i = 1; i <= n && !rc; i++) {
        lua_rawgeti(L, -1, (int)i);
        lua_getfield(L, -1, "binary_row");
        size_t len;
        const char *row = lua_tolstring(L, -1, &len);
        rc = set_partition_values(L, t, (const uint8_t *)row, len, -2, e);
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    return rc;
}

/* t:drop_partitions(specs [, opts]) -> result | nil, msg, code
 * opts: dry_run, max_attempts, commit_user, exact (byte strings),
 *       on_retry = function(attempt, message). The operations layer
 * (pm_ops) parses the options, drops and builds the result; the Lua specs,
 * exact rows and on_retry come in as its hooks. */
static int tbl_drop_partitions(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 3);
    pm_op_args args;
    lp_op_options(L, 3, "drop_partitions", &args);
    specs s;
    memset(&s, 0, sizeof s);
    check_specs(L, 2, &s);
    pm_op_hooks hooks = {0};
    retry_ud ru = {L, 0};
    if (!lua_isnil(L, 3)) {
        check_exact(L, 3, &s);
        lua_getfield(L, 3, "on_retry");
        if (lua_isfunction(L, -1)) ru.fn = lua_gettop(L);
        hooks.on_retry = on_retry;
        hooks.retry_ud = &ru;
    }
    pm_part_select sel = {s.n, s.v, s.n_exact, s.exact, 0};
    hooks.select = &sel;
    pm_result *res = NULL;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_op_run(t, &args, &hooks, &res, &e);
    specs_free(&s);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_push_result(L, res->root);
    pm_result_free(res);
    if ((rc = decorate_partitions(L, t, &e))) return lp_push_fail(L, rc, &e);
    return 1;
}

/* t:mark_partition_done(specs [, opts]) -> result | nil, msg, code
 * specs: {col = v} or an array of them; opts: dry_run, now. */
static int tbl_mark_partition_done(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 3);
    pm_op_args args;
    lp_op_options(L, 3, "mark_partition_done", &args);
    specs s;
    memset(&s, 0, sizeof s);
    check_specs(L, 2, &s);
    pm_op_hooks hooks = {0};
    pm_part_select sel = {s.n, s.v, 0, NULL, 0};
    hooks.select = &sel;
    pm_result *res = NULL;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_op_run(t, &args, &hooks, &res, &e);
    specs_free(&s);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_push_result(L, res->root);
    pm_result_free(res);
    return 1;
}

/* t:expire_partitions([opts]) = require("paimon.partition_expire").run(t, opts) */
static int tbl_expire_partitions(lua_State *L) {
    lp_check_table(L, 1);
    lua_settop(L, 2);
    lua_getglobal(L, "require");
    lua_pushstring(L, "paimon.partition_expire");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "run");
    if (!lua_isfunction(L, -1)) return luaL_error(L, "paimon.partition_expire has no run function");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, LUA_MULTRET);
    return lua_gettop(L) - 3;
}

static const luaL_Reg methods[] = {
    {"drop_partitions", tbl_drop_partitions},
    {"expire_partitions", tbl_expire_partitions},
    {"mark_partition_done", tbl_mark_partition_done},
    {"partition_entries", tbl_partition_entries},
    {NULL, NULL}};

void lp_open_partition(lua_State *L, int module_idx) {
    lp_add_table_methods(L, methods);
    lua_pushcfunction(L, l_wall_clock_ms);
    lua_setfield(L, module_idx, "wall_clock_ms");
    lua_pushcfunction(L, l_parse_duration_ms);
    lua_setfield(L, module_idx, "parse_duration_ms");
}
