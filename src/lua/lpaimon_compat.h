/* The only place that knows which Lua it is built for: Lua 5.4 or LuaJIT
 * 2.1 (Lua 5.1 ABI). Everything else in the binding calls these. */
#ifndef LPAIMON_COMPAT_H
#define LPAIMON_COMPAT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <lua.h>
#include <lauxlib.h>

#include "pm_common.h"

#if LUA_VERSION_NUM == 504
#define lp_newuserdata(L, sz) lua_newuserdatauv((L), (sz), 1)
#define lp_rawlen(L, i) lua_rawlen((L), (i))
/* Keep `owner` (at owner_idx) alive as long as the userdata at ud_idx. */
static inline void lp_setowner(lua_State *L, int ud_idx, int owner_idx) {
    ud_idx = lua_absindex(L, ud_idx);
    lua_pushvalue(L, owner_idx);
    lua_setiuservalue(L, ud_idx, 1);
}
/* Push the owner stored by lp_setowner (nil when none). */
static inline void lp_getowner(lua_State *L, int ud_idx) { lua_getiuservalue(L, ud_idx, 1); }
static inline void lp_pushint64(lua_State *L, int64_t v) { lua_pushinteger(L, (lua_Integer)v); }
static inline int lp_isinteger(lua_State *L, int i) { return lua_isinteger(L, i); }
/* A Lua integer (not a float): exact whatever its size. */
static inline int lp_is_lua_integer(lua_State *L, int i) { return lua_isinteger(L, i); }
static inline int lp_toint64(lua_State *L, int i, int64_t *out) {
    if (lua_type(L, i) == LUA_TSTRING) return pm_decimal_int64(lua_tostring(L, i), out) == 0;
    if (lua_type(L, i) != LUA_TNUMBER) return 0;
    int ok;
    lua_Integer v = lua_tointegerx(L, i, &ok);
    if (ok) *out = (int64_t)v;
    return ok;
}
#define lp_setfuncs(L, l) luaL_setfuncs((L), (l), 0)
#define lp_pushfail(L) luaL_pushfail(L)
#define lp_tolstring(L, i, len) luaL_tolstring((L), (i), (len))
#elif LUA_VERSION_NUM == 501
#include <stdlib.h>
#define lp_newuserdata(L, sz) lua_newuserdata((L), (sz))
#define lp_rawlen(L, i) lua_objlen((L), (i))
static inline void lp_setowner(lua_State *L, int ud_idx, int owner_idx) {
    if (ud_idx < 0) ud_idx = lua_gettop(L) + ud_idx + 1;
    if (owner_idx < 0) owner_idx = lua_gettop(L) + owner_idx + 1;
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, owner_idx);
    lua_rawseti(L, -2, 1);
    lua_setfenv(L, ud_idx);
}
static inline void lp_getowner(lua_State *L, int ud_idx) {
    lua_getfenv(L, ud_idx);
    if (lua_istable(L, -1)) lua_rawgeti(L, -1, 1);
    else lua_pushnil(L);
    lua_remove(L, -2);
}
/* Doubles convert to int64_t only inside the range (else the cast is UB). */
static inline int lp_num_is_int64(lua_Number n) {
    return n >= -9223372036854775808.0 && n < 9223372036854775808.0 && n == (lua_Number)(int64_t)n;
}
/* LuaJIT numbers are doubles: exact to 2^53; larger values become strings. */
static inline void lp_pushint64(lua_State *L, int64_t v) {
    if (v > -(INT64_C(1) << 53) && v < (INT64_C(1) << 53)) lua_pushnumber(L, (lua_Number)v);
    else { char b[24]; snprintf(b, sizeof b, "%lld", (long long)v); lua_pushstring(L, b); }
}
static inline int lp_isinteger(lua_State *L, int i) {
    if (lua_type(L, i) != LUA_TNUMBER) return 0;
    return lp_num_is_int64(lua_tonumber(L, i));
}
/* LuaJIT has no integer subtype: every number is a double. */
static inline int lp_is_lua_integer(lua_State *L, int i) { (void)L; (void)i; return 0; }
static inline int lp_toint64(lua_State *L, int i, int64_t *out) {
    if (lua_type(L, i) == LUA_TNUMBER) {
        lua_Number n = lua_tonumber(L, i);
        if (!lp_num_is_int64(n)) return 0;
        *out = (int64_t)n;
        return 1;
    }
    if (lua_type(L, i) == LUA_TSTRING) return pm_decimal_int64(lua_tostring(L, i), out) == 0;
    return 0;
}
#define lp_setfuncs(L, l) luaL_register((L), NULL, (l))
#define lp_pushfail(L) lua_pushnil(L)
/* luaL_tolstring of 5.2+: pushes the string form of any value. Integral
 * numbers print without exponent ("10", not "1e+15"), as 5.4 integers do. */
static inline const char *lp_tolstring(lua_State *L, int i, size_t *len) {
    if (i < 0 && i > LUA_REGISTRYINDEX) i = lua_gettop(L) + i + 1;
    if (luaL_callmeta(L, i, "__tostring")) {
        if (!lua_isstring(L, -1)) luaL_error(L, "'__tostring' must return a string");
    } else {
        switch (lua_type(L, i)) {
        case LUA_TNUMBER: {
            lua_Number n = lua_tonumber(L, i);
            if (lp_num_is_int64(n)) {
                char b[24];
                snprintf(b, sizeof b, "%lld", (long long)n);
                lua_pushstring(L, b);
            } else {
                lua_pushvalue(L, i);
                lua_tolstring(L, -1, NULL);   /* converts the copy in place */
            }
            break;
        }
        case LUA_TSTRING: lua_pushvalue(L, i); break;
        case LUA_TBOOLEAN: lua_pushstring(L, lua_toboolean(L, i) ? "true" : "false"); break;
        case LUA_TNIL: lua_pushliteral(L, "nil"); break;
        default:
            lua_pushfstring(L, "%s: %p", luaL_typename(L, i), lua_topointer(L, i));
            break;
        }
    }
    return lua_tolstring(L, -1, len);
}
#else
#error "paimon-lua builds for Lua 5.4 or LuaJIT 2.1 (Lua 5.1 ABI) only"
#endif

#endif
