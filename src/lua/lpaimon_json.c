/* JSON encoding of Lua values in C, for output that streams row by row
 * (inspect views, maintenance --json plans): the rules of lua/paimon/json.lua
 * (exact 64-bit integers, shortest round-trip doubles, NaN/inf as null, the
 * `order` keys first in every object and the rest sorted, an empty table is
 * [] only with the array metatable), held to it by spec/json_spec.lua. The
 * Lua encoder stays for resty.paimon's caller VM, which never loads the
 * core; this one is about 20x faster and builds no intermediate strings.
 *
 *   paimon.core.json_encode(value [, order [, array_mt]]) -> string
 *   paimon.core.json_write(file, value [, order [, array_mt]]) -> true | nil, message, code
 *
 * json_write writes the same bytes through file:write (any object with a
 * write method) in pieces of about 64 KiB, cut only after a whole row of a
 * paimon.PathList: a dry run's planned paths left in the C result
 * (option paths_handle of the maintenance methods), encoded straight from
 * it as an array of {kind, message, path, size} objects, so the Lua side
 * never holds the plan. If encoding raises after output began, the writer
 * closes what it had opened (the array, the object) and ends the line
 * before the error goes on, as cli.json_rows does: the output stays JSON
 * lines, the exit code says it failed.
 */
#include <math.h>
#include <string.h>

#include "lpaimon.h"

#define MAX_DEPTH 64

#define JSONBUF_MT "paimon.JsonBuffer"
#define PATHLIST_MT "paimon.PathList"
#define FLUSH_AT (64 * 1024)

/* A dry run's plan left in the C result: the list node and the result
 * that owns it (freed by __gc / __close). cursor makes list[i] in
 * ascending order cost O(1) per item on the linked list. */
typedef struct path_list {
    pm_result *res;
    const pm_rv *list;
    const pm_rv *cursor;
    size_t cursor_i;     /* 1-based index of cursor; 0: none */
    /* the plan kept whole (res->plan): each row built on demand in a
     * scratch result, the node put_clean would have made */
    pm_result *scratch;
    pm_buf tmp;
} path_list;

static size_t path_list_len(const path_list *pl) { return pl->res->plan ? pm_plan_count(pl->res->plan) : pl->list->n; }

/* Row i (0-based) of a kept plan; raises out of memory. */
static const pm_rv *plan_row(lua_State *L, path_list *pl, size_t i) {
    if (!pl->scratch && !(pl->scratch = pm_result_new())) luaL_error(L, "out of memory");
    pm_result_reset(pl->scratch);
    const pm_rv *row = pm_op_plan_row(pl->scratch, pm_rv_list(pl->scratch, pl->scratch->root, "paths"),
                                      pl->res->plan, i, &pl->tmp);
    if (!row) luaL_error(L, "out of memory");
    return row;
}

typedef struct enc {
    lua_State *L;
    pm_buf *b;       /* in a userdata with __gc: freed even when encoding raises */
    int order;      /* stack index of the order list, 0 if none */
    int array_mt;   /* stack index of the array metatable, 0 if none */
    int sink;       /* json_write: stack index of the file, 0 for json_encode */
    int write_failed;   /* json_write: file:write said no; nothing more is written */
    char write_msg[256];
    /* the containers open at the current point, and those open where the
     * last flush ended: what closes the flushed text if encoding fails */
    char open[MAX_DEPTH + 2];
    int n_open;
    char flushed_open[MAX_DEPTH + 2];
    int n_flushed_open;
    int flushed;        /* bytes went to the file already */
} enc;

static void add_mem(enc *x, const char *s, size_t n) {
    if (pm_buf_append(x->b, s, n)) luaL_error(x->L, "out of memory encoding JSON");
}
static void add_str(enc *x, const char *s) { add_mem(x, s, strlen(s)); }
static void add_char(enc *x, char c) { add_mem(x, &c, 1); }

/* '[' / '{' with the matching close remembered (for closing after a failure). */
static void open_container(enc *x, char c) {
    add_char(x, c);
    if (x->n_open < (int)sizeof x->open) x->open[x->n_open++] = c == '[' ? ']' : '}';
}
static void close_container(enc *x) {
    if (x->n_open > 0) add_char(x, x->open[--x->n_open]);
}

/* file:write(s) at the sink; a failure (nil, message) is remembered and
 * stops the output. Raises only what write itself raises. */
static void sink_write(enc *x, const char *s, size_t n) {
    lua_State *L = x->L;
    if (x->write_failed) return;
    luaL_checkstack(L, 4, "JSON writing");
    lua_getfield(L, x->sink, "write");
    lua_pushvalue(L, x->sink);
    lua_pushlstring(L, s, n);
    lua_call(L, 2, 2);
    if (lua_isnil(L, -2)) {
        x->write_failed = 1;
        snprintf(x->write_msg, sizeof x->write_msg, "writing JSON: %s",
                 lua_isstring(L, -1) ? lua_tostring(L, -1) : "write failed");
    }
    lua_pop(L, 2);
}

/* json_write, at a point where the text so far ends after a whole row:
 * hand it to the file once there is enough of it (or always: force). */
static void flush_at_row(enc *x, int force) {
    if (!x->sink || (!force && x->b->len < FLUSH_AT)) return;
    sink_write(x, x->b->len ? (const char *)x->b->data : "", x->b->len);
    x->b->len = 0;
    x->flushed = 1;
    memcpy(x->flushed_open, x->open, (size_t)x->n_open);
    x->n_flushed_open = x->n_open;
}

static void put_string(enc *x, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    add_char(x, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default: break;
        }
        if (esc) {
            add_str(x, esc);
        } else if (c < 0x20 || c == 0x7f) {   /* %c in Lua patterns: iscntrl */
            char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            add_str(x, u);
        } else {
            add_char(x, (char)c);
        }
    }
    add_char(x, '"');
}

/* The shortest of %.15g..%.17g that reads back as the same double. */
static void put_double(enc *x, double d) {
    char s[40];
    if (d != d || isinf(d)) { add_str(x, "null"); return; }
    if (d == floor(d) && d > -9223372036854775808.0 && d < 9223372036854775808.0) {
        snprintf(s, sizeof s, "%lld", (long long)d);
    } else {
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(s, sizeof s, "%.*g", prec, d);
            if (strtod(s, NULL) == d) break;
        }
    }
    add_str(x, s);
}

static void put_number(enc *x, int idx) {
    if (lp_is_lua_integer(x->L, idx)) {
        int64_t v = 0;
        lp_toint64(x->L, idx, &v);
        char s[24];
        snprintf(s, sizeof s, "%lld", (long long)v);
        add_str(x, s);
    } else {
        put_double(x, (double)lua_tonumber(x->L, idx));
    }
}

static void put_value(enc *x, int idx, int depth);
static void put_path_list(enc *x, path_list *pl, int depth);

/* Array: #t > 0 and every key an integer 1..#t; an empty table only with
 * the array metatable. */
static int is_array(enc *x, int idx) {
    lua_State *L = x->L;
    size_t n = lp_rawlen(L, idx);
    if (n == 0) {
        if (!x->array_mt || !lua_getmetatable(L, idx)) return 0;
        int same = lua_rawequal(L, -1, x->array_mt);
        lua_pop(L, 1);
        lua_pushnil(L);
        if (lua_next(L, idx)) { lua_pop(L, 2); return 0; }
        return same;
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int64_t k;
        if (lua_type(L, -1) != LUA_TNUMBER || !lp_toint64(L, -1, &k) || k < 1 || (uint64_t)k > n) {
            lua_pop(L, 1);
            return 0;
        }
    }
    return 1;
}

static int key_cmp(const void *a, const void *b) {
    const char *const *x = a, *const *y = b;
    return strcmp(*x, *y);
}

/* Object: the order keys present first, then the others sorted by their
 * string form. Keys must be strings or numbers. */
static void put_object(enc *x, int idx, int depth) {
    lua_State *L = x->L;
    int first = 1;
    open_container(x, '{');
    /* seen: order keys already written (a set table at the top) */
    lua_newtable(L);
    int seen = lua_gettop(L);
    if (x->order) {
        size_t n = lp_rawlen(L, x->order);
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, x->order, (int)i);
            if (lua_type(L, -1) != LUA_TSTRING) { lua_pop(L, 1); continue; }
            lua_pushvalue(L, -1);
            lua_rawget(L, idx);
            if (lua_isnil(L, -1)) { lua_pop(L, 2); continue; }
            if (!first) add_char(x, ',');
            first = 0;
            size_t kl;
            const char *k = lua_tolstring(L, -2, &kl);
            lua_pushvalue(L, -2);
            lua_pushboolean(L, 1);
            lua_rawset(L, seen);
            put_string(x, k, kl);
            add_char(x, ':');
            put_value(x, lua_gettop(L), depth + 1);
            lua_pop(L, 2);
        }
    }
    /* the rest: collect (key string, key value) pairs into a table */
    lua_newtable(L);
    int keys = lua_gettop(L);
    size_t nk = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        int kt = lua_type(L, -1);
        if (kt != LUA_TSTRING && kt != LUA_TNUMBER) luaL_error(L, "cannot encode a %s key as JSON", luaL_typename(L, -1));
        lua_pushvalue(L, -1);
        lua_rawget(L, seen);
        int was_seen = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (was_seen) continue;
        lua_pushvalue(L, -1);
        lua_rawseti(L, keys, (int)++nk);
    }
    if (nk) {
        const char **names = lua_newuserdata(L, nk * sizeof *names);
        /* string forms, kept alive in a parallel table */
        lua_createtable(L, (int)nk, 0);
        int strs = lua_gettop(L);
        for (size_t i = 1; i <= nk; i++) {
            lua_rawgeti(L, keys, (int)i);
            lp_tolstring(L, -1, NULL);
            lua_rawseti(L, strs, (int)i);
            lua_pop(L, 1);
            lua_rawgeti(L, strs, (int)i);
            names[i - 1] = lua_tostring(L, -1);
            lua_pop(L, 1);
        }
        /* sort by name, then find each name's key value (map name -> key) */
        lua_createtable(L, 0, (int)nk);
        int by_name = lua_gettop(L);
        for (size_t i = 1; i <= nk; i++) {
            lua_rawgeti(L, strs, (int)i);
            lua_rawgeti(L, keys, (int)i);
            lua_rawset(L, by_name);
        }
        qsort(names, nk, sizeof *names, key_cmp);
        for (size_t i = 0; i < nk; i++) {
            if (!first) add_char(x, ',');
            first = 0;
            put_string(x, names[i], strlen(names[i]));
            add_char(x, ':');
            lua_getfield(L, by_name, names[i]);
            lua_rawget(L, idx);
            put_value(x, lua_gettop(L), depth + 1);
            lua_pop(L, 1);
        }
        lua_pop(L, 3);
    }
    lua_pop(L, 2);   /* keys, seen */
    close_container(x);
}

static void put_value(enc *x, int idx, int depth) {
    lua_State *L = x->L;
    if (depth > MAX_DEPTH) luaL_error(L, "cannot encode as JSON: nested deeper than %d levels", MAX_DEPTH);
    luaL_checkstack(L, 8, "JSON encoding");
    switch (lua_type(L, idx)) {
    case LUA_TNIL: add_str(x, "null"); break;
    case LUA_TBOOLEAN: add_str(x, lua_toboolean(L, idx) ? "true" : "false"); break;
    case LUA_TNUMBER: put_number(x, idx); break;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        put_string(x, s, n);
        break;
    }
    case LUA_TLIGHTUSERDATA:
        if (!lua_touserdata(L, idx)) { add_str(x, "null"); break; }   /* paimon.null */
        luaL_error(L, "cannot encode a userdata value as JSON");
        break;
    case LUA_TUSERDATA: {
        path_list *pl = luaL_testudata(L, idx, PATHLIST_MT);
        if (!pl) luaL_error(L, "cannot encode a userdata value as JSON");
        put_path_list(x, pl, depth);
        break;
    }
    case LUA_TTABLE:
        if (is_array(x, idx)) {
            size_t n = lp_rawlen(L, idx);
            open_container(x, '[');
            for (size_t i = 1; i <= n; i++) {
                if (i > 1) add_char(x, ',');
                lua_rawgeti(L, idx, (int)i);
                put_value(x, lua_gettop(L), depth + 1);
                lua_pop(L, 1);
            }
            close_container(x);
        } else {
            put_object(x, idx, depth);
        }
        break;
    default:
        luaL_error(L, "cannot encode a %s value as JSON", luaL_typename(L, idx));
    }
}

/* ---- result nodes, encoded as their Lua tables would be -------------- */

/* A result node with the bytes lp_push_result's table would get from
 * put_value: integers through the same push (LuaJIT: strings beyond 2^53),
 * an empty list is an empty table ({}), object keys by the same order
 * rule (the order keys first, then the others sorted). */
static void put_rv(enc *x, const pm_rv *v, int depth) {
    lua_State *L = x->L;
    if (depth > MAX_DEPTH) luaL_error(L, "cannot encode as JSON: nested deeper than %d levels", MAX_DEPTH);
    luaL_checkstack(L, 8, "JSON encoding");
    switch (v->type) {
    case PM_RV_INT:
        lp_pushint64(L, v->i);
        put_value(x, lua_gettop(L), depth);
        lua_pop(L, 1);
        return;
    case PM_RV_BOOL: add_str(x, v->i ? "true" : "false"); return;
    case PM_RV_STR:
    case PM_RV_BYTES: put_string(x, v->s, v->len); return;
    case PM_RV_LIST:
        if (!v->n) { add_str(x, "{}"); return; }
        open_container(x, '[');
        for (const pm_rv *c = v->first; c; c = c->next) {
            if (c != v->first) add_char(x, ',');
            put_rv(x, c, depth + 1);
        }
        close_container(x);
        return;
    case PM_RV_OBJ: break;
    }
    if (!v->n) { add_str(x, "{}"); return; }
    /* children in writing order: a scratch block on the stack (freed by GC) */
    const pm_rv **kids = lua_newuserdata(L, v->n * sizeof *kids);
    size_t nk = 0, n_first = 0;
    unsigned char *done = lua_newuserdata(L, v->n);
    memset(done, 0, v->n);
    if (x->order) {
        size_t n = lp_rawlen(L, x->order);
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, x->order, (int)i);
            const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
            size_t j = 0, hit = v->n;
            for (const pm_rv *c = v->first; k && c; c = c->next, j++)
                if (!done[j] && !strcmp(c->key, k)) hit = j;
            lua_pop(L, 1);
            if (hit == v->n) continue;
            done[hit] = 1;
            const pm_rv *c = v->first;
            for (j = 0; j < hit; j++) c = c->next;
            kids[nk++] = c;
        }
    }
    n_first = nk;
    size_t j = 0;
    for (const pm_rv *c = v->first; c; c = c->next, j++)
        if (!done[j]) kids[nk++] = c;
    /* the rest by key (insertion sort: objects of a result are small) */
    for (size_t a = n_first + 1; a < nk; a++) {
        const pm_rv *k = kids[a];
        size_t b = a;
        while (b > n_first && strcmp(kids[b - 1]->key, k->key) > 0) { kids[b] = kids[b - 1]; b--; }
        kids[b] = k;
    }
    open_container(x, '{');
    for (size_t i = 0; i < nk; i++) {
        if (i) add_char(x, ',');
        put_string(x, kids[i]->key, strlen(kids[i]->key));
        add_char(x, ':');
        put_rv(x, kids[i], depth + 1);
    }
    close_container(x);
    lua_pop(L, 2);
}

/* A PathList is always an array (empty: []), as maint.print_json marks a
 * Lua list of paths. json_write may flush after each row. */
static void put_path_list(enc *x, path_list *pl, int depth) {
    if (!pl->res) luaL_error(x->L, "cannot encode a closed paimon.PathList");
    open_container(x, '[');
    if (pl->res->plan) {
        for (size_t i = 0, n = pm_plan_count(pl->res->plan); i < n; i++) {
            if (i) add_char(x, ',');
            put_rv(x, plan_row(x->L, pl, i), depth + 1);
            flush_at_row(x, 0);
        }
    }
    for (const pm_rv *c = pl->list->first; c; c = c->next) {
        if (c != pl->list->first) add_char(x, ',');
        put_rv(x, c, depth + 1);
        flush_at_row(x, 0);
    }
    close_container(x);
}

static int jsonbuf_gc(lua_State *L) {
    pm_buf_free(luaL_checkudata(L, 1, JSONBUF_MT));
    return 0;
}

static pm_buf *new_buffer(lua_State *L) {
    pm_buf *b = lua_newuserdata(L, sizeof *b);
    memset(b, 0, sizeof *b);
    luaL_getmetatable(L, JSONBUF_MT);
    lua_setmetatable(L, -2);
    return b;
}

static int l_json_encode(lua_State *L) {
    enc x;
    memset(&x, 0, sizeof x);
    x.L = L;
    lua_settop(L, 3);
    x.order = lua_isnil(L, 2) ? 0 : (luaL_checktype(L, 2, LUA_TTABLE), 2);
    x.array_mt = lua_isnil(L, 3) ? 0 : (luaL_checktype(L, 3, LUA_TTABLE), 3);
    x.b = new_buffer(L);
    put_value(&x, 1, 0);
    lua_pushlstring(L, x.b->len ? (const char *)x.b->data : "", x.b->len);
    pm_buf_free(x.b);
    return 1;
}

/* json_write's encoding, run protected: enc (light userdata), file,
 * value, order, array_mt. */
static int write_protected(lua_State *L) {
    enc *x = lua_touserdata(L, 1);
    x->L = L;
    x->sink = 2;
    x->order = lua_isnil(L, 4) ? 0 : 4;
    x->array_mt = lua_isnil(L, 5) ? 0 : 5;
    put_value(x, 3, 0);
    flush_at_row(x, 1);
    return 0;
}

/* After a failure: close what the flushed text opened, end the line. */
static int write_closing(lua_State *L) {
    enc *x = lua_touserdata(L, 1);
    char close[MAX_DEPTH + 3];
    int n = 0;
    for (int i = x->n_flushed_open - 1; i >= 0; i--) close[n++] = x->flushed_open[i];
    close[n++] = '\n';
    x->L = L;
    x->sink = 2;
    sink_write(x, close, (size_t)n);
    return 0;
}

static int l_json_write(lua_State *L) {
    lua_settop(L, 4);
    if (lua_type(L, 1) != LUA_TUSERDATA && lua_type(L, 1) != LUA_TTABLE)
        luaL_argerror(L, 1, "a file (an object with a write method) expected");
    if (!lua_isnil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
    if (!lua_isnil(L, 4)) luaL_checktype(L, 4, LUA_TTABLE);
    enc x;
    memset(&x, 0, sizeof x);
    x.b = new_buffer(L);   /* index 5: freed by __gc whatever happens */
    lua_pushcfunction(L, write_protected);
    lua_pushlightuserdata(L, &x);
    for (int i = 1; i <= 4; i++) lua_pushvalue(L, i);
    if (lua_pcall(L, 5, 0, 0) != LUA_OK) {
        if (x.flushed && !x.write_failed) {
            lua_pushcfunction(L, write_closing);
            lua_pushlightuserdata(L, &x);
            lua_pushvalue(L, 1);
            if (lua_pcall(L, 2, 0, 0) != LUA_OK) lua_pop(L, 1);   /* best effort: the first error is the one */
        }
        pm_buf_free(x.b);
        return lua_error(L);
    }
    pm_buf_free(x.b);
    if (x.write_failed) {
        lp_pushfail(L);
        lua_pushstring(L, x.write_msg);
        lua_pushstring(L, lp_code_name(PAIMON_IO));
        return 3;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* ---- paimon.PathList ---------------------------------------------------- */

static path_list *check_path_list(lua_State *L) {
    path_list *pl = luaL_checkudata(L, 1, PATHLIST_MT);
    if (!pl->res) luaL_error(L, "paimon.PathList is closed");
    return pl;
}

static int pathlist_len(lua_State *L) {
    path_list *pl = check_path_list(L);
    lua_pushinteger(L, (lua_Integer)path_list_len(pl));
    return 1;
}

/* list[i]: the i-th planned file as the table lp_push_result makes;
 * nil outside 1..#list or for other keys. */
static int pathlist_index(lua_State *L) {
    path_list *pl = check_path_list(L);
    int64_t i;
    if (lua_type(L, 2) != LUA_TNUMBER || !lp_toint64(L, 2, &i) || i < 1 || (uint64_t)i > path_list_len(pl)) {
        lua_pushnil(L);
        return 1;
    }
    if (pl->res->plan) {
        lp_push_result(L, plan_row(L, pl, (size_t)i - 1));
        return 1;
    }
    if (!pl->cursor || pl->cursor_i > (size_t)i) { pl->cursor = pl->list->first; pl->cursor_i = 1; }
    while (pl->cursor_i < (size_t)i) { pl->cursor = pl->cursor->next; pl->cursor_i++; }
    lp_push_result(L, pl->cursor);
    return 1;
}

static int pathlist_close(lua_State *L) {
    path_list *pl = luaL_checkudata(L, 1, PATHLIST_MT);
    pm_result_free(pl->res);
    pm_result_free(pl->scratch);
    pm_buf_free(&pl->tmp);
    pl->res = pl->scratch = NULL;
    pl->list = pl->cursor = NULL;
    return 0;
}

static int pathlist_tostring(lua_State *L) {
    path_list *pl = luaL_checkudata(L, 1, PATHLIST_MT);
    if (pl->res) lua_pushfstring(L, "paimon.PathList (%d paths)", (int)path_list_len(pl));
    else lua_pushstring(L, "paimon.PathList (closed)");
    return 1;
}

void lp_push_result_keeping_paths(lua_State *L, pm_result *res) {
    const pm_rv *paths = pm_rv_get(res->root, "paths");
    if (!paths || paths->type != PM_RV_LIST) {
        lp_push_result(L, res->root);
        pm_result_free(res);
        return;
    }
    path_list *pl = lua_newuserdata(L, sizeof *pl);
    memset(pl, 0, sizeof *pl);
    pl->res = res;
    pl->list = paths;
    luaL_getmetatable(L, PATHLIST_MT);
    lua_setmetatable(L, -2);
    int ud = lua_gettop(L);
    lua_createtable(L, 0, (int)res->root->n);
    for (const pm_rv *c = res->root->first; c; c = c->next) {
        if (c == paths) lua_pushvalue(L, ud);
        else lp_push_result(L, c);
        lua_setfield(L, -2, c->key);
    }
    lua_remove(L, ud);
}

static const luaL_Reg pathlist_meta[] = {
    {"__len", pathlist_len},
    {"__index", pathlist_index},
    {"__gc", pathlist_close},
    {"__close", pathlist_close},
    {"__tostring", pathlist_tostring},
    {NULL, NULL}};

void lp_open_json(lua_State *L, int module_idx) {
    luaL_newmetatable(L, JSONBUF_MT);
    lua_pushcfunction(L, jsonbuf_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, PATHLIST_MT);
    lp_setfuncs(L, pathlist_meta);
    lua_pushstring(L, PATHLIST_MT);
    lua_setfield(L, -2, "__name");        /* LuaJIT does not set it */
    lua_pop(L, 1);
    lua_pushcfunction(L, l_json_encode);
    lua_setfield(L, module_idx, "json_encode");
    lua_pushcfunction(L, l_json_write);
    lua_setfield(L, module_idx, "json_write");
}
