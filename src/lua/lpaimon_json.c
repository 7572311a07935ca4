/* JSON encoding of Lua values in C, for output that streams row by row
 * (inspect views, maintenance --json plans): the rules of lua/paimon/json.lua
 * (exact 64-bit integers, shortest round-trip doubles, NaN/inf as null, the
 * `order` keys first in every object and the rest sorted, an empty table is
 * [] only with the array metatable), held to it by spec/json_spec.lua. The
 * Lua encoder stays for resty.paimon's caller VM, which never loads the
 * core; this one is about 20x faster and builds no intermediate strings.
 *
 *   paimon.core.json_encode(value [, order [, array_mt]]) -> string
 */
#include <math.h>
#include <string.h>

#include "lpaimon.h"

#define MAX_DEPTH 64

#define JSONBUF_MT "paimon.JsonBuffer"

typedef struct enc {
    lua_State *L;
    pm_buf *b;       /* in a userdata with __gc: freed even when encoding raises */
    int order;      /* stack index of the order list, 0 if none */
    int array_mt;   /* stack index of the array metatable, 0 if none */
} enc;

static void add_mem(enc *x, const char *s, size_t n) {
    if (pm_buf_append(x->b, s, n)) luaL_error(x->L, "out of memory encoding JSON");
}
static void add_str(enc *x, const char *s) { add_mem(x, s, strlen(s)); }
static void add_char(enc *x, char c) { add_mem(x, &c, 1); }

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
    add_char(x, '{');
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
    add_char(x, '}');
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
    case LUA_TTABLE:
        if (is_array(x, idx)) {
            size_t n = lp_rawlen(L, idx);
            add_char(x, '[');
            for (size_t i = 1; i <= n; i++) {
                if (i > 1) add_char(x, ',');
                lua_rawgeti(L, idx, (int)i);
                put_value(x, lua_gettop(L), depth + 1);
                lua_pop(L, 1);
            }
            add_char(x, ']');
        } else {
            put_object(x, idx, depth);
        }
        break;
    default:
        luaL_error(L, "cannot encode a %s value as JSON", luaL_typename(L, idx));
    }
}

static int jsonbuf_gc(lua_State *L) {
    pm_buf_free(luaL_checkudata(L, 1, JSONBUF_MT));
    return 0;
}

static int l_json_encode(lua_State *L) {
    enc x;
    x.L = L;
    lua_settop(L, 3);
    x.order = lua_isnil(L, 2) ? 0 : (luaL_checktype(L, 2, LUA_TTABLE), 2);
    x.array_mt = lua_isnil(L, 3) ? 0 : (luaL_checktype(L, 3, LUA_TTABLE), 3);
    x.b = lua_newuserdata(L, sizeof *x.b);
    memset(x.b, 0, sizeof *x.b);
    luaL_getmetatable(L, JSONBUF_MT);
    lua_setmetatable(L, -2);
    put_value(&x, 1, 0);
    lua_pushlstring(L, x.b->len ? (const char *)x.b->data : "", x.b->len);
    pm_buf_free(x.b);
    return 1;
}

void lp_open_json(lua_State *L, int module_idx) {
    luaL_newmetatable(L, JSONBUF_MT);
    lua_pushcfunction(L, jsonbuf_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_json_encode);
    lua_setfield(L, module_idx, "json_encode");
}
