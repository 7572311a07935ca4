/* paimon.core, maintenance: snapshot expiration.
 *   t:expire_range(opts)      -> the range Java's rules would expire (for policies)
 *   t:expire_snapshots(opts)  -> result table, or nil, message, code
 * opts: retain_min, retain_max, older_than (epoch ms, or a duration such as
 * "1h": now minus it), max_deletes, keep_from (exclusive end chosen by a
 * policy; `until` is its old name), threads, dry_run, now (epoch ms),
 * clean_empty_directories (default: the table option, false),
 * progress = function(phase, done, total), and for expire_snapshots
 * policy = function(snapshots, ctx), {expire = function} or a policy file
 * (as expire.lua --policy). Unknown options raise. */
#include <stdlib.h>
#include <string.h>

#include "lpaimon.h"
#include "pm_expire.h"
#include "pm_meta.h"


void lp_progress_cb(void *ud, const char *phase, size_t done, size_t total) {
    lp_progress *p = ud;
    lua_State *L = p->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref);
    lua_pushstring(L, phase);
    lua_pushinteger(L, (lua_Integer)done);
    lua_pushinteger(L, (lua_Integer)total);
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) lua_pop(L, 1);   /* a broken progress callback never stops a cleanup */
}

void lp_opt_progress(lua_State *L, int idx, lp_progress *pr, pm_progress_fn *fn, void **ud) {
    pr->L = L;
    pr->ref = LUA_NOREF;
    if (lua_isnoneornil(L, idx)) return;
    lua_getfield(L, idx, "progress");
    if (lua_isfunction(L, -1)) {
        pr->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        *fn = lp_progress_cb;
        *ud = pr;
        return;
    }
    if (!lua_isnil(L, -1)) luaL_error(L, "option 'progress' must be a function");
    lua_pop(L, 1);
}

void lp_progress_release(lp_progress *pr) {
    if (pr->ref != LUA_NOREF) luaL_unref(pr->L, LUA_REGISTRYINDEX, pr->ref);
    pr->ref = LUA_NOREF;
}

/* Integer field k of the options table at idx; 1 if present. */
int lp_opt_int(lua_State *L, int idx, const char *k, int64_t *out) {
    if (lua_isnoneornil(L, idx)) return 0;
    lua_getfield(L, idx, k);
    if (lua_isnil(L, -1)) { lua_pop(L, 1); return 0; }
    if (!lp_toint64(L, -1, out)) luaL_error(L, "option '%s' must be an integer", k);
    lua_pop(L, 1);
    return 1;
}

int lp_opt_bool(lua_State *L, int idx, const char *k) {
    if (lua_isnoneornil(L, idx)) return 0;
    lua_getfield(L, idx, k);
    int v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

/* Cut-off option k: epoch milliseconds, or a duration text as the CLI's
 * --older-than takes it ("90s", "30 min", "1h", "7d"; Paimon's syntax,
 * pm_parse_duration_ms) meaning now minus it. 1 if present. */
int lp_opt_cutoff(lua_State *L, int idx, const char *k, int64_t now, int64_t *out) {
    if (lua_isnoneornil(L, idx)) return 0;
    lua_getfield(L, idx, k);
    if (lua_isnil(L, -1)) { lua_pop(L, 1); return 0; }
    if (lua_type(L, -1) == LUA_TSTRING) {
        pm_err e;
        pm_err_clear(&e);
        int64_t ms = 0;
        if (pm_parse_duration_ms(lua_tostring(L, -1), &ms, &e))
            luaL_error(L, "option '%s': %s (a duration such as 90s, 30m, 1h, 7d, or epoch milliseconds)", k, e.msg);
        *out = now - ms;
    } else if (!lp_toint64(L, -1, out)) {
        luaL_error(L, "option '%s' must be epoch milliseconds or a duration such as \"1h\", got %s", k, lp_tolstring(L, -1, NULL));
    }
    lua_pop(L, 1);
    return 1;
}

static void push_items(lua_State *L, const char *k, const pm_clean_item *v, size_t n, int with_size) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 4);
        lp_set_str(L, "path", v[i].path);
        lp_set_str(L, "kind", pm_file_kind_names[v[i].kind]);
        if (with_size) lp_set_int(L, "size", v[i].size);
        lp_set_str(L, "message", v[i].msg);
        lua_rawseti(L, -2, (int)i + 1);
    }
    lua_setfield(L, -2, k);
}

void lp_push_clean_result(lua_State *L, const pm_clean_result *r) {
    lua_createtable(L, 0, 12);
    int64_t files = 0, bytes = 0;
    lua_createtable(L, 0, PM_K__N);
    for (int k = 0; k < PM_K__N; k++) { lp_set_int(L, pm_file_kind_names[k], r->count[k]); files += r->count[k]; }
    lua_setfield(L, -2, "deleted");
    lua_createtable(L, 0, PM_K__N);
    for (int k = 0; k < PM_K__N; k++) { lp_set_int(L, pm_file_kind_names[k], r->bytes[k]); bytes += r->bytes[k]; }
    lua_setfield(L, -2, "bytes");
    lp_set_int(L, "files", files);
    lp_set_int(L, "total_bytes", bytes);
    lp_set_int(L, "directories", r->dirs_removed);
    lp_set_int(L, "missing", r->missing);
    lp_set_int(L, "protected", r->protected_files);
    lp_set_bool(L, "dry_run", r->dry_run);
    if (r->dry_run) push_items(L, "paths", r->paths, r->n_paths, 1);
    push_items(L, "failures", r->failures, r->n_failures, 0);
    push_items(L, "skipped", r->skipped, r->n_skipped, 0);
    lp_set_int(L, "duration_ms", r->duration_ms);
}

static const char *const expire_range_opts[] = {"retain_min", "retain_max", "older_than", "max_deletes", "keep_from",
                                               "until", "threads", "now", "dry_run", "clean_empty_directories",
                                               "progress", NULL};
static const char *const expire_opts[] = {"retain_min", "retain_max", "older_than", "max_deletes", "keep_from",
                                         "until", "threads", "now", "dry_run", "clean_empty_directories",
                                         "progress", "policy", NULL};

/* Everything but `progress` and `policy` (they run Lua code: read last). */
static void read_expire_opts(lua_State *L, int idx, pm_expire_opts *o, const char *what, const char *const *known) {
    memset(o, 0, sizeof *o);
    if (!lua_isnoneornil(L, idx)) luaL_checktype(L, idx, LUA_TTABLE);
    lp_check_options(L, idx, what, known);
    int64_t v;
    if (lp_opt_int(L, idx, "retain_min", &v)) { if (v < 1 || v > INT32_MAX) luaL_error(L, "retain_min must be between 1 and 2147483647"); o->retain_min = (int)v; }
    if (lp_opt_int(L, idx, "retain_max", &v)) { if (v < 1 || v > INT32_MAX) luaL_error(L, "retain_max must be between 1 and 2147483647"); o->retain_max = (int)v; }
    if (lp_opt_int(L, idx, "max_deletes", &v)) { if (v < 1 || v > INT32_MAX) luaL_error(L, "max_deletes must be between 1 and 2147483647"); o->max_deletes = (int)v; }
    if (lp_opt_int(L, idx, "now", &v)) o->now_ms = v;
    if (lp_opt_cutoff(L, idx, "older_than", o->now_ms ? o->now_ms : pm_now_millis(), &v)) { o->has_older_than = 1; o->older_than_ms = v; }
    /* keep_from: the policy answer's name; until: its old name (a Lua keyword) */
    int64_t keep_from = 0, until = 0;
    int has_keep_from = lp_opt_int(L, idx, "keep_from", &keep_from), has_until = lp_opt_int(L, idx, "until", &until);
    if (has_keep_from && has_until && keep_from != until) luaL_error(L, "%s: keep_from and until (its old name) differ", what);
    if (has_until) keep_from = until;
    if (has_keep_from || has_until) { if (keep_from < 1) luaL_error(L, "keep_from must be a snapshot id"); o->until = keep_from; }
    if (lp_opt_int(L, idx, "threads", &v)) { if (v < 1 || v > 256) luaL_error(L, "threads must be between 1 and 256"); o->threads = (int)v; }
    o->dry_run = lp_opt_bool(L, idx, "dry_run");
    if (!lua_isnoneornil(L, idx)) {
        lua_getfield(L, idx, "clean_empty_directories");
        if (!lua_isnil(L, -1) && !lua_isboolean(L, -1)) luaL_error(L, "clean_empty_directories must be a boolean");
        if (!lua_isnil(L, -1)) o->clean_empty_dirs = lua_toboolean(L, -1) ? 1 : -1;
        lua_pop(L, 1);
    }
}

static void push_range(lua_State *L, const pm_expire_range *r) {
    lua_createtable(L, 0, 14);
    lp_set_int(L, "earliest", r->earliest);
    lp_set_int(L, "latest", r->latest);
    lp_set_int(L, "retain_min", r->retain_min);
    lp_set_int(L, "retain_max", r->retain_max);
    lp_set_int(L, "max_deletes", r->max_deletes);
    lp_set_int(L, "older_than", r->older_than_ms);
    lp_set_int(L, "now", r->now_ms);
    if (r->n_consumers > 0) lp_set_int(L, "consumer_min", r->consumer_min);   /* 0 is a real position */
    lp_set_int(L, "hard_end", r->hard_end);
    lp_set_int(L, "begin", r->begin);
    lp_set_int(L, "end", r->end);
    lp_set_str(L, "capped_by", r->capped_by);
}

static int tbl_expire_range(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    pm_expire_opts o;
    read_expire_opts(L, 2, &o, "expire_range", expire_range_opts);
    lp_progress pr;
    lp_opt_progress(L, 2, &pr, &o.progress, &o.progress_ud);
    lp_progress_release(&pr);
    pm_expire_range r;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_expire_compute_range(t, &o, &r, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    push_range(L, &r);
    return 1;
}

/* With a policy, the runner paimon.expire.run asks it and then calls this
 * method again with the end it chose (one runner for every face). A policy
 * that failed raises here, as it always did for this method. */
static int expire_with_policy(lua_State *L) {
    lua_settop(L, 2);
    lua_getglobal(L, "require");
    lua_pushstring(L, "paimon.expire");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "run");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 4);
    if (!lua_isnil(L, -4)) { lua_pop(L, 3); return 1; }
    if (lua_toboolean(L, -1)) { lua_pop(L, 2); return lua_error(L); }
    lua_pop(L, 1);
    return 3;
}

static int tbl_expire_snapshots(lua_State *L) {
    paimon_table *t = lp_check_table(L, 1);
    lua_settop(L, 2);
    pm_expire_opts o;
    read_expire_opts(L, 2, &o, "expire_snapshots", expire_opts);
    if (!lua_isnil(L, 2)) {
        lua_getfield(L, 2, "policy");
        int has_policy = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (has_policy) return expire_with_policy(L);
    }
    lp_progress pr;
    lp_opt_progress(L, 2, &pr, &o.progress, &o.progress_ud);
    pm_expire_result res;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_expire_snapshots(t, &o, &res, &e);
    lp_progress_release(&pr);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_push_clean_result(L, &res.clean);
    lp_set_int(L, "expired", res.expired);
    if (res.expired > 0) {
        lua_createtable(L, 2, 0);
        lp_pushint64(L, res.range.begin);
        lua_rawseti(L, -2, 1);
        lp_pushint64(L, res.range.end - 1);
        lua_rawseti(L, -2, 2);
        lua_setfield(L, -2, "range");
    }
    push_range(L, &res.range);
    lua_setfield(L, -2, "plan");
    lp_set_str(L, "capped_by", res.range.capped_by);
    if (res.refused[0]) lp_set_str(L, "refused", res.refused);
    pm_clean_result_free(&res.clean);
    return 1;
}

/* paimon.core.now_ms(): the clock in epoch milliseconds (os.time has seconds). */
static int core_now_ms(lua_State *L) {
    lp_pushint64(L, pm_now_millis());
    return 1;
}

static const luaL_Reg maint_methods[] = {
    {"expire_range", tbl_expire_range},
    {"expire_snapshots", tbl_expire_snapshots},
    {NULL, NULL},
};

void lp_open_maint(lua_State *L, int module_idx) {
    lp_add_table_methods(L, maint_methods);
    lua_pushcfunction(L, core_now_ms);
    lua_setfield(L, module_idx, "now_ms");
}
