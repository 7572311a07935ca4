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
#include "pm_exec.h"

#define WRITE_MT "paimon.Write"
#define COMMIT_MT "paimon.Commit"
#define ROWS_MT "paimon.RowIterator"

__extension__ typedef __int128 lw_i128;
__extension__ typedef unsigned __int128 lw_u128;

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

/* ---- text -> values ---------------------------------------------------------- */

static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int days_in_month(int64_t y, int m) {
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return dm[m - 1];
}

static int read_digits(const char **p, int min, int max, int64_t *out) {
    int n = 0;
    int64_t v = 0;
    while (n < max && isdigit((unsigned char)**p)) { v = v * 10 + (**p - '0'); (*p)++; n++; }
    *out = v;
    return n >= min;
}

/* yyyy-MM-dd -> days; p advanced past it. */
static int parse_date_part(const char **p, int64_t *days) {
    int64_t y, m, d;
    int neg = 0;
    if (**p == '-' || **p == '+') { neg = **p == '-'; (*p)++; }
    if (!read_digits(p, 1, 9, &y) || **p != '-') return 0;
    (*p)++;
    if (!read_digits(p, 1, 2, &m) || **p != '-') return 0;
    (*p)++;
    if (!read_digits(p, 1, 2, &d)) return 0;
    if (neg) y = -y;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, (int)m)) return 0;
    *days = days_from_civil(y, (int)m, (int)d);
    return 1;
}

/* HH:mm[:ss[.fffffffff]] -> millis of day + nanos of milli. */
static int parse_time_part(const char **p, int64_t *ms, int32_t *nom, int precision) {
    int64_t h, mi, s = 0, frac = 0;
    int nd = 0;
    if (!read_digits(p, 1, 2, &h) || **p != ':') return 0;
    (*p)++;
    if (!read_digits(p, 2, 2, &mi)) return 0;
    if (**p == ':') {
        (*p)++;
        if (!read_digits(p, 2, 2, &s)) return 0;
        if (**p == '.') {
            (*p)++;
            while (isdigit((unsigned char)**p)) {
                if (nd < 9) { frac = frac * 10 + (**p - '0'); nd++; }
                (*p)++;
            }
            if (!nd) return 0;
        }
    }
    if (h > 23 || mi > 59 || s > 59) return 0;
    for (int i = nd; i < 9; i++) frac *= 10;          /* nanos of second */
    int64_t keep = 1;
    for (int i = precision; i < 9; i++) keep *= 10;
    frac -= frac % keep;                               /* truncate to the type's precision */
    *ms = ((h * 60 + mi) * 60 + s) * 1000 + frac / 1000000;
    *nom = (int32_t)(frac % 1000000);
    return 1;
}

/* Decimal text -> unscaled value at `scale`. */
static const char *parse_decimal(const char *s, int precision, int scale, lw_i128 *out) {
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    int neg = 0;
    if (*p == '-' || *p == '+') { neg = *p == '-'; p++; }
    lw_i128 v = 0;
    int digits = 0, frac = 0, seen_dot = 0, any = 0;
    for (;; p++) {
        if (*p == '.' && !seen_dot) { seen_dot = 1; continue; }
        if (!isdigit((unsigned char)*p)) break;
        any = 1;
        if (seen_dot) {
            if (frac >= scale) { if (*p != '0') return "has more fractional digits than the scale"; continue; }
            frac++;
        }
        if (v || *p != '0') digits++;
        if (digits > 38) return "has too many digits";
        v = v * 10 + (*p - '0');
    }
    while (isspace((unsigned char)*p)) p++;
    if (!any || *p) return "is not a decimal number";
    for (; frac < scale; frac++) v *= 10;
    lw_i128 lim = 1;
    for (int i = 0; i < precision; i++) lim *= 10;
    if (v >= lim) return "does not fit the precision";
    *out = neg ? -v : v;
    return NULL;
}

/* The core takes a wide decimal as big-endian two's complement of any
 * length up to 16 bytes (and writes Java's minimal form itself). */
static size_t unscaled_be(lw_i128 v, uint8_t out[16]) {
    lw_u128 u = (lw_u128)v;
    for (int i = 15; i >= 0; i--) { out[i] = (uint8_t)u; u >>= 8; }
    return 16;
}

/* Lua value at i -> exact int64: 0 ok, 1 not an integer, 2 outside the
 * int64 range, 3 a float of 2^53 or more (JSON decoders and arithmetic may
 * already have rounded it: such values come as integers or decimal text). */
enum { INT_OK, INT_NOT_INTEGER, INT_RANGE, INT_INEXACT };
static int lua_int64_status(lua_State *L, int i, int64_t *out) {
    if (lua_type(L, i) == LUA_TSTRING) {
        int rc = lp_decimal_int64(lua_tostring(L, i), out);
        return rc == 0 ? INT_OK : rc == 2 ? INT_RANGE : INT_NOT_INTEGER;
    }
    if (lua_type(L, i) != LUA_TNUMBER) return INT_NOT_INTEGER;
    if (lp_is_lua_integer(L, i)) { *out = (int64_t)lua_tointeger(L, i); return INT_OK; }
    lua_Number n = lua_tonumber(L, i);
    if (n != floor(n)) return INT_NOT_INTEGER;   /* NaN too */
    if (n >= 9223372036854775808.0 || n < -9223372036854775808.0) return INT_RANGE;
    if (fabs(n) >= 9007199254740992.0) return INT_INEXACT;
    *out = (int64_t)n;
    return INT_OK;
}

static int lua_int64(lua_State *L, int i, int64_t *out) {
    return lua_int64_status(L, i, out) == INT_OK;
}

/* Lua value at i -> datum of type ty. dec: 16-byte buffer for big decimals.
 * Raises with a message naming the column on a bad value. */
static void to_datum(lua_State *L, int i, const pm_type *ty, const char *col, pm_datum *d, uint8_t *dec) {
    memset(d, 0, sizeof *d);
    i = absidx(L, i);
    if (is_null_value(L, i)) {
        if (!ty->nullable) luaL_error(L, "column '%s' is NOT NULL but the value is null", col);
        d->is_null = 1;
        return;
    }
    int t = lua_type(L, i);
    switch (ty->root) {
    case PM_T_BOOLEAN:
        if (t != LUA_TBOOLEAN) luaL_error(L, "column '%s' (BOOLEAN): expected a boolean, got %s", col, luaL_typename(L, i));
        d->v.i = lua_toboolean(L, i);
        return;
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT: {
        int64_t v = 0;
        int st = lua_int64_status(L, i, &v);
        int64_t lo = ty->root == PM_T_TINYINT ? -128 : ty->root == PM_T_SMALLINT ? -32768 : ty->root == PM_T_INT ? INT32_MIN : INT64_MIN;
        int64_t hi = ty->root == PM_T_TINYINT ? 127 : ty->root == PM_T_SMALLINT ? 32767 : ty->root == PM_T_INT ? INT32_MAX : INT64_MAX;
        if (st == INT_OK && v >= lo && v <= hi) { d->v.i = v; return; }
        /* the input as given, never a converted or clamped value */
        const char *shown = t == LUA_TSTRING ? lua_pushfstring(L, "'%s'", lua_tostring(L, i))
                          : t == LUA_TNUMBER ? lp_tolstring(L, i, NULL) : luaL_typename(L, i);
        const char *name = pm_type_root_name(ty->root);
        if (st == INT_NOT_INTEGER)
            luaL_error(L, "column '%s' (%s): expected an integer (a number or decimal digits), got %s", col, name, shown);
        if (st == INT_INEXACT)
            luaL_error(L, "column '%s' (%s): %s is a float of 2^53 or more and may have been rounded; give an integer or decimal text", col, name, shown);
        char range[64];   /* lua_pushfstring has no %lld */
        snprintf(range, sizeof range, "[%lld, %lld]", (long long)lo, (long long)hi);
        luaL_error(L, "column '%s' (%s): %s is out of range %s", col, name, shown, range);
        return;
    }
    case PM_T_FLOAT: case PM_T_DOUBLE: {
        lua_Number n = 0;
        if (t == LUA_TNUMBER) n = lua_tonumber(L, i);
        else if (t == LUA_TSTRING) {
            const char *s = lua_tostring(L, i);
            if (!strcmp(s, "NaN")) n = (lua_Number)NAN;
            else if (!strcmp(s, "Infinity")) n = (lua_Number)HUGE_VAL;
            else if (!strcmp(s, "-Infinity")) n = -(lua_Number)HUGE_VAL;
            else { char *end; n = strtod(s, &end); if (end == s || *end) luaL_error(L, "column '%s': '%s' is not a number", col, s); }
        } else luaL_error(L, "column '%s' (%s): expected a number, got %s", col, pm_type_root_name(ty->root), luaL_typename(L, i));
        if (ty->root == PM_T_FLOAT) d->v.f = (float)n; else d->v.d = (double)n;
        return;
    }
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY: case PM_T_BLOB: {
        if (t != LUA_TSTRING) luaL_error(L, "column '%s' (%s): expected a string, got %s", col, pm_type_root_name(ty->root), luaL_typename(L, i));
        size_t len;
        d->v.bin.ptr = (const uint8_t *)lua_tolstring(L, i, &len);
        d->v.bin.len = len;
        return;
    }
    case PM_T_DECIMAL: {
        lw_i128 v;
        const char *err;
        char buf[64];
        if (t == LUA_TSTRING) err = parse_decimal(lua_tostring(L, i), ty->precision, ty->scale, &v);
        else if (t == LUA_TNUMBER) {
            if (lp_isinteger(L, i)) snprintf(buf, sizeof buf, "%lld", (long long)lua_tointeger(L, i));
            else snprintf(buf, sizeof buf, "%.*f", (int)ty->scale, (double)lua_tonumber(L, i));
            err = parse_decimal(buf, ty->precision, ty->scale, &v);
        } else err = "is not a number or decimal string";
        if (err) luaL_error(L, "column '%s' (DECIMAL(%d, %d)): value %s", col, (int)ty->precision, (int)ty->scale, err);
        if (ty->precision <= 18) d->v.i = (int64_t)v;
        else { d->v.bin.len = unscaled_be(v, dec); d->v.bin.ptr = dec; }
        return;
    }
    case PM_T_DATE: {
        int64_t v;
        if (t == LUA_TSTRING) {
            const char *p = lua_tostring(L, i);
            if (!parse_date_part(&p, &v) || *p) luaL_error(L, "column '%s' (DATE): '%s' is not a date (yyyy-MM-dd)", col, lua_tostring(L, i));
        } else if (!lua_int64(L, i, &v)) luaL_error(L, "column '%s' (DATE): expected 'yyyy-MM-dd' or days since 1970-01-01", col);
        if (v < INT32_MIN || v > INT32_MAX) luaL_error(L, "column '%s' (DATE): out of range", col);
        d->v.i = v;
        return;
    }
    case PM_T_TIME: {
        int64_t v;
        if (t == LUA_TSTRING) {
            const char *p = lua_tostring(L, i);
            int32_t nom;
            if (!parse_time_part(&p, &v, &nom, ty->precision) || *p) luaL_error(L, "column '%s' (TIME): '%s' is not a time (HH:mm:ss[.fff])", col, lua_tostring(L, i));
        } else if (!lua_int64(L, i, &v)) luaL_error(L, "column '%s' (TIME): expected 'HH:mm:ss[.fff]' or millis of the day", col);
        if (v < 0 || v >= 86400000) luaL_error(L, "column '%s' (TIME): out of range", col);
        d->v.i = v;
        return;
    }
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ: {
        if (t == LUA_TSTRING) {
            const char *s = lua_tostring(L, i), *p = s;
            int64_t days, ms = 0;
            int32_t nom = 0;
            int ok = parse_date_part(&p, &days);
            if (ok && (*p == ' ' || *p == 'T')) { p++; ok = parse_time_part(&p, &ms, &nom, ty->precision); }
            if (!ok || *p) luaL_error(L, "column '%s' (TIMESTAMP): '%s' is not a timestamp (yyyy-MM-dd HH:mm:ss[.fffffffff])", col, s);
            d->v.ts.millis = days * 86400000 + ms;
            d->v.ts.nanos_of_milli = nom;
        } else {
            int64_t v;
            if (!lua_int64(L, i, &v)) luaL_error(L, "column '%s' (TIMESTAMP): expected a timestamp string or epoch millis", col);
            d->v.ts.millis = v;
        }
        return;
    }
    default:
        luaL_error(L, "column '%s': writing %s values is not supported", col, pm_type_root_name(ty->root));
    }
}

/* ---- composite Lua values -> Avro binary ---------------------------------------- */

static int is_composite(const pm_type *t) {
    return t->root == PM_T_ARRAY || t->root == PM_T_MAP || t->root == PM_T_MULTISET || t->root == PM_T_ROW;
}

static void put_long_checked(lua_State *L, pm_buf *b, int64_t v) {
    if (pm_avro_put_long(b, v)) luaL_error(L, "out of memory");
}

static void encode_any(lua_State *L, int i, const pm_type *ty, const char *col, pm_buf *b, int depth);

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

/* The non-null Avro encoding of a composite value at i. */
static void encode_composite(lua_State *L, int i, const pm_type *ty, const char *col, pm_buf *b, int depth) {
    i = absidx(L, i);
    if (depth > 64) luaL_error(L, "column '%s': value nested too deeply", col);
    luaL_checkstack(L, 10, "nested value");
    if (!lua_istable(L, i))
        luaL_error(L, "column '%s' (%s): expected a table, got %s", col, pm_type_root_name(ty->root), luaL_typename(L, i));
    switch (ty->root) {
    case PM_T_ARRAY: {
        size_t n = lp_rawlen(L, i);
        if (n) {
            put_long_checked(L, b, (int64_t)n);
            for (size_t k = 1; k <= n; k++) {
                lua_rawgeti(L, i, (int)k);
                encode_any(L, -1, ty->element, col, b, depth + 1);
                lua_pop(L, 1);
            }
        }
        put_long_checked(L, b, 0);
        return;
    }
    case PM_T_MAP: case PM_T_MULTISET: {
        pm_type ival;
        memset(&ival, 0, sizeof ival);
        ival.root = PM_T_INT;
        ival.nullable = 1;
        const pm_type *kt = ty->element, *vt = ty->root == PM_T_MAP ? ty->value : &ival;
        int string_keys = kt->root == PM_T_CHAR || kt->root == PM_T_VARCHAR;
        sorted_keys(L, i, col);
        int keys = lua_gettop(L);
        size_t n = lp_rawlen(L, keys);
        if (n) {
            put_long_checked(L, b, (int64_t)n);
            for (size_t k = 1; k <= n; k++) {
                lua_rawgeti(L, keys, (int)k);
                if (string_keys) {
                    if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "column '%s': map keys must be strings", col);
                    size_t len;
                    const char *ks = lua_tolstring(L, -1, &len);
                    if (pm_avro_put_bytes(b, ks, len)) luaL_error(L, "out of memory");
                } else {
                    encode_any(L, -1, kt, col, b, depth + 1);
                }
                lua_gettable(L, i);
                encode_any(L, -1, vt, col, b, depth + 1);
                lua_pop(L, 1);
            }
        }
        put_long_checked(L, b, 0);
        lua_pop(L, 1);
        return;
    }
    case PM_T_ROW: {
        for (size_t k = 0; k < ty->n_fields; k++) {
            lua_getfield(L, i, ty->fields[k].name);
            encode_any(L, -1, ty->fields[k].type, col, b, depth + 1);
            lua_pop(L, 1);
        }
        lua_pushnil(L);
        while (lua_next(L, i)) {
            int known = 0;
            if (lua_type(L, -2) == LUA_TSTRING)
                for (size_t k = 0; k < ty->n_fields && !known; k++) known = !strcmp(ty->fields[k].name, lua_tostring(L, -2));
            if (!known) luaL_error(L, "column '%s': the ROW value has a field that the type does not have", col);
            lua_pop(L, 1);
        }
        return;
    }
    default:
        luaL_error(L, "column '%s': not a composite type", col);
    }
}

/* A value (with the union branch when ty is nullable). */
static void encode_any(lua_State *L, int i, const pm_type *ty, const char *col, pm_buf *b, int depth) {
    i = absidx(L, i);
    if (is_composite(ty)) {
        if (is_null_value(L, i)) {
            if (!ty->nullable) luaL_error(L, "column '%s': a NOT NULL %s value is null", col, pm_type_root_name(ty->root));
            put_long_checked(L, b, 0);
            return;
        }
        if (ty->nullable) put_long_checked(L, b, 1);
        encode_composite(L, i, ty, col, b, depth);
        return;
    }
    pm_datum d;
    uint8_t dec[16];
    to_datum(L, i, ty, col, &d, dec);
    pm_err e = {0};
    if (pm_datafile_encode_value(b, ty, &d, col, &e)) luaL_error(L, "%s", e.msg);
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

static char *dup_checked(lua_State *L, const char *s) {
    char *r = pm_strdup(s);
    if (!r) luaL_error(L, "out of memory");
    return r;
}

/* Read an array of strings at the stack top into v (malloc'd). */
static size_t string_list(lua_State *L, const char *what, char ***v, pm_schema *s) {
    (void)s;
    if (lua_isnil(L, -1)) return 0;
    if (!lua_istable(L, -1)) luaL_error(L, "spec.%s must be an array of column names", what);
    size_t n = lp_rawlen(L, -1);
    *v = calloc(n ? n : 1, sizeof **v);
    if (!*v) luaL_error(L, "out of memory");
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, -1, (int)i + 1);
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "spec.%s[%d] must be a string", what, (int)i + 1);
        (*v)[i] = dup_checked(L, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    return n;
}

typedef struct { pm_schema *s; } schema_box;

static int box_gc(lua_State *L) {
    schema_box *b = lua_touserdata(L, 1);
    pm_schema_free(b->s);
    b->s = NULL;
    return 0;
}

/* paimon.create_table(path, spec) -> Table | nil, msg, code */
static int l_create_table(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"fields", "partition_keys", "primary_keys", "options", "comment", NULL};
    static const char *const field_keys[] = {"name", "type", "description", "comment", NULL};
    lp_check_options(L, 2, "paimon.create_table", known);
    /* a box so a raised error frees the partly built schema */
    schema_box *box = lp_newuserdata(L, sizeof *box);
    box->s = NULL;
    lua_newtable(L);
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    int boxi = lua_gettop(L);
    pm_schema *s = calloc(1, sizeof *s);
    if (!s) return luaL_error(L, "out of memory");
    box->s = s;
    lua_getfield(L, 2, "fields");
    if (!lua_istable(L, -1)) return luaL_argerror(L, 2, "spec.fields must be an array of {name = ..., type = ...}");
    size_t nf = lp_rawlen(L, -1);
    s->fields = calloc(nf ? nf : 1, sizeof *s->fields);
    if (!s->fields) return luaL_error(L, "out of memory");
    for (size_t i = 0; i < nf; i++) {
        lua_rawgeti(L, -1, (int)i + 1);
        if (!lua_istable(L, -1)) return luaL_error(L, "spec.fields[%d] must be a table {name = ..., type = ...}", (int)i + 1);
        lp_check_options(L, -1, "paimon.create_table: spec.fields[i]", field_keys);
        lua_getfield(L, -1, "name");
        lua_getfield(L, -2, "type");
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "spec.fields[%d] needs string name and type", (int)i + 1);
        pm_data_field *f = &s->fields[i];
        f->name = dup_checked(L, lua_tostring(L, -2));
        s->n_fields = i + 1;
        pm_err e = {0};
        if (pm_type_parse_sql(lua_tostring(L, -1), &f->type, &e))
            return luaL_error(L, "spec.fields[%d] ('%s'): %s", (int)i + 1, f->name, e.msg);
        lua_pop(L, 2);
        lua_getfield(L, -1, "description");
        if (lua_isnil(L, -1)) { lua_pop(L, 1); lua_getfield(L, -1, "comment"); }
        if (lua_type(L, -1) == LUA_TSTRING) f->description = dup_checked(L, lua_tostring(L, -1));
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    lua_getfield(L, 2, "partition_keys");
    s->n_partition_keys = string_list(L, "partition_keys", &s->partition_keys, s);
    lua_pop(L, 1);
    lua_getfield(L, 2, "primary_keys");
    s->n_primary_keys = string_list(L, "primary_keys", &s->primary_keys, s);
    lua_pop(L, 1);
    lua_getfield(L, 2, "options");
    if (!lua_isnil(L, -1)) {
        if (!lua_istable(L, -1)) return luaL_argerror(L, 2, "spec.options must be a table {key = value}");
        size_t cap = 0;
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            if (lua_type(L, -2) != LUA_TSTRING) return luaL_argerror(L, 2, "spec.options keys must be strings");
            if (s->n_options == cap) {
                cap = cap ? cap * 2 : 8;
                pm_kv *nk = realloc(s->options, cap * sizeof *nk);
                if (!nk) return luaL_error(L, "out of memory");
                s->options = nk;
            }
            const char *v;
            char num[64];
            if (lua_type(L, -1) == LUA_TBOOLEAN) v = lua_toboolean(L, -1) ? "true" : "false";
            else if (lua_type(L, -1) == LUA_TNUMBER && lp_isinteger(L, -1)) {
                int64_t x = 0;
                lp_toint64(L, -1, &x);
                snprintf(num, sizeof num, "%lld", (long long)x);
                v = num;
            } else if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) v = lua_tostring(L, -1);
            else return luaL_error(L, "spec.options['%s'] must be a string, number or boolean", lua_tostring(L, -2));
            s->options[s->n_options].key = dup_checked(L, lua_tostring(L, -2));
            s->options[s->n_options].value = NULL;
            s->n_options++;
            s->options[s->n_options - 1].value = dup_checked(L, v);
            lua_pop(L, 1);
        }
        /* deterministic input order before Java's HashMap order is applied */
        for (size_t i = 1; i < s->n_options; i++)
            for (size_t j = i; j > 0 && strcmp(s->options[j - 1].key, s->options[j].key) > 0; j--) {
                pm_kv tmp = s->options[j];
                s->options[j] = s->options[j - 1];
                s->options[j - 1] = tmp;
            }
    }
    lua_pop(L, 1);
    lua_getfield(L, 2, "comment");
    if (lua_type(L, -1) == LUA_TSTRING) s->comment = dup_checked(L, lua_tostring(L, -1));
    lua_pop(L, 1);
    pm_err e = {0};
    int rc = pm_create_table(path, s, &e);
    pm_schema_free(s);
    box->s = NULL;
    lua_settop(L, boxi);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_table *ud = lp_newuserdata(L, sizeof *ud);
    ud->t = NULL;
    luaL_setmetatable(L, TABLE_MT);
    rc = pm_table_open(path, NULL, &ud->t, &e);
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
    pm_append_writer *w;
    lp_table *owner;
    size_t n;
    pm_datum *row;
    uint8_t (*dec)[16];
    pm_buf *cbuf;               /* Avro encoding of composite columns */
    int64_t rows;
} lp_write;

static void write_release(lp_write *w) {
    if (w->w && (!w->owner || !w->owner->t)) pm_append_writer_detach(w->w);   /* table closed first */
    pm_append_writer_free(w->w);     /* deletes files not handed out by prepare_commit */
    w->w = NULL;
    if (w->cbuf) for (size_t i = 0; i < w->n; i++) pm_buf_free(&w->cbuf[i]);
    free(w->cbuf);
    free(w->row);
    free(w->dec);
    w->row = NULL;
    w->dec = NULL;
    w->cbuf = NULL;
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
    else lua_pushfstring(L, "paimon.Write (%d rows)", (int)w->rows);
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
    int rc = pm_append_writer_open(t, &w->w, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    w->n = t->schema->n_fields;
    w->row = calloc(w->n ? w->n : 1, sizeof *w->row);
    w->dec = calloc(w->n ? w->n : 1, sizeof *w->dec);
    w->cbuf = calloc(w->n ? w->n : 1, sizeof *w->cbuf);
    if (!w->row || !w->dec || !w->cbuf) { write_release(w); return luaL_error(L, "out of memory"); }
    return 1;
}

/* w:write(row): row = {column = value, ...}; bad rows raise. */
static int write_write(lua_State *L) {
    lp_write *w = check_write(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    const pm_schema *s = w->owner->t->schema;
    luaL_checkstack(L, (int)w->n + 8, "too many columns");
    size_t found = 0;
    for (size_t i = 0; i < w->n; i++) {
        lua_getfield(L, 2, s->fields[i].name);
        if (!lua_isnil(L, -1)) found++;
        const pm_type *ty = s->fields[i].type;
        if (is_composite(ty)) {
            memset(&w->row[i], 0, sizeof w->row[i]);
            if (is_null_value(L, -1)) {
                if (!ty->nullable) return luaL_error(L, "column '%s' is NOT NULL but the value is null", s->fields[i].name);
                w->row[i].is_null = 1;
            } else {
                w->cbuf[i].len = 0;
                encode_composite(L, -1, ty, s->fields[i].name, &w->cbuf[i], 0);
                w->row[i].v.bin.ptr = w->cbuf[i].data;
                w->row[i].v.bin.len = w->cbuf[i].len;
            }
            continue;
        }
        to_datum(L, -1, ty, s->fields[i].name, &w->row[i], w->dec[i]);
        /* keep the value on the stack: the datum may point into it */
    }
    size_t total = 0;
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        total++;
        int known = 0;
        if (lua_type(L, -2) == LUA_TSTRING) known = pm_schema_field(s, lua_tostring(L, -2)) != NULL;
        if (!known) {
            lua_pushvalue(L, -2);
            return luaL_error(L, "row has a value for '%s', which is not a column of the table", lp_tolstring(L, -1, NULL));
        }
        lua_pop(L, 1);
    }
    (void)found;
    pm_err e = {0};
    int rc = pm_append_writer_write(w->w, w->row, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    w->rows++;
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
    int rc = pm_append_writer_prepare(w->w, &ents, &n, &e);
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
    int64_t first_seen;   /* latest snapshot id before this object's first commit + 1 (0: none yet) */
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

static int arena_gc(lua_State *L) {
    pm_arena **a = lua_touserdata(L, 1);
    pm_arena_free(*a);
    *a = NULL;
    return 0;
}

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

/* c:commit(messages [, {identifier = n, kind = "APPEND", force = false}])
 * -> snapshot_id, true | latest_id, false (empty, skipped) | nil, msg, code */
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
    if (n == 0 && !force && !(o.kind && !strcmp(o.kind, "COMPACT"))) {
        /* Java batch commits ignore empty commits */
        int64_t id = 0;
        pm_err e = {0};
        int rc = pm_snapshot_latest_id(t->io, t->branch_root, &id, &e);
        if (rc == PAIMON_NOTFOUND) id = 0;
        else if (rc) return lp_push_fail(L, rc, &e);
        lp_pushint64(L, id);
        lua_pushboolean(L, 0);
        return 2;
    }
    conv cv = {push_arena(L), L, "commit message"};
    pm_manifest_entry *ents = conv_alloc(&cv, n * sizeof *ents);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)i + 1);
        entry_from_lua(&cv, t, -1, &ents[i]);
        lua_pop(L, 1);
    }
    int64_t id = 0;
    pm_err e = {0};
    if (!c->first_seen) {   /* where c:abort starts looking for snapshots of this object */
        int64_t latest = 0;
        pm_err e2;
        if (pm_snapshot_latest_id(t->io, t->branch_root, &latest, &e2) != PAIMON_OK) latest = 0;
        c->first_seen = latest + 1;
    }
    int rc = pm_commit(t, ents, n, &o, &id, &e);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_pushint64(L, id);
    lua_pushboolean(L, 1);
    return 2;
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
 * checked). Deletion goes through the cleanup deleter (inside the table
 * directory only). */
static int commit_abort(lua_State *L) {
    lp_commit *c = check_commit(L);
    paimon_table *t = c->owner->t;
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = lp_rawlen(L, 2);
    conv cv = {push_arena(L), L, "commit message"};
    pm_manifest_entry *ents = conv_alloc(&cv, (n ? n : 1) * sizeof *ents);
    uint8_t *found = conv_alloc(&cv, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (int)i + 1);
        entry_from_lua(&cv, t, -1, &ents[i]);
        lua_pop(L, 1);
    }
    pm_err e = {0};
    int rc = pm_commit_find_added(t, c->first_seen ? c->first_seen : 1, ents, n, found, &e);
    if (rc) {
        pm_err_prefix(&e, "abort: deleting nothing");
        return lp_push_fail(L, rc, &e);
    }
    pm_deleter *del = pm_deleter_new();
    if (!del) return luaL_error(L, "out of memory");
    int kept = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (ents[i].kind != PM_FILE_ADD || ents[i].file.external_path) continue;
        if (found[i]) { kept++; continue; }
        pm_buf rel = {0};
        if (pm_table_file_path(t, &ents[i], &rel, &e) == PAIMON_OK) {
            char *full = pm_path_join(t->root, (const char *)rel.data);
            rc = full ? pm_deleter_add(del, full, PM_K_DATA, &e) : pm_fail(&e, PAIMON_NOMEM, "out of memory");
            free(full);
        }
        pm_buf_free(&rel);
    }
    pm_clean_result res;
    memset(&res, 0, sizeof res);
    pm_clean_opts co = {1, 0, 0, NULL, NULL};
    if (!rc) rc = pm_deleter_run(del, t->io, t->root, &co, "aborting", &res, &e);
    pm_deleter_free(del);
    int64_t removed = res.count[PM_K_DATA];
    pm_clean_result_free(&res);
    if (rc) return lp_push_fail(L, rc, &e);
    lp_pushint64(L, removed);
    lua_pushinteger(L, kept);
    return 2;
}

/* ---- snapshot:read ------------------------------------------------------------------------ */

typedef struct lp_rows {
    lp_table *owner;
    pm_scan *scan;
    pm_datafile_reader *rd;
    pm_partition_filter filter;
    size_t n;
    pm_datum *vals;
    const pm_avro_value **raw;
    int with_file;
    char *cur_file;
} lp_rows;

static void rows_release(lp_rows *r) {
    pm_datafile_reader_close(r->rd);
    r->rd = NULL;
    pm_scan_close(r->scan);
    r->scan = NULL;
    lp_partition_filter_free(&r->filter);
    free(r->vals);
    free(r->raw);
    free(r->cur_file);
    r->vals = NULL;
    r->raw = NULL;
    r->cur_file = NULL;
}

static int rows_gc(lua_State *L) {
    rows_release(luaL_checkudata(L, 1, ROWS_MT));
    return 0;
}

static int rows_next(lua_State *L) {
    lp_rows *r = luaL_checkudata(L, lua_upvalueindex(1), ROWS_MT);
    if (!r->scan) return 0;
    paimon_table *t = r->owner->t;
    if (!t) return luaL_error(L, "the paimon.Table of this iterator is closed");
    pm_err e = {0};
    for (;;) {
        if (!r->rd) {
            const pm_manifest_entry *m;
            int rc = pm_scan_next(r->scan, &m, &e);
            if (rc == PAIMON_DONE) { rows_release(r); return 0; }
            if (rc) { rows_release(r); return lp_raise(L, &e); }
            rc = pm_datafile_reader_open(t, m, t->schema->fields, r->n, &r->rd, &e);
            if (rc) { rows_release(r); return lp_raise(L, &e); }
            free(r->cur_file);
            pm_buf b = {0};
            r->cur_file = pm_table_file_path(t, m, &b, &e) == PAIMON_OK ? pm_strdup((const char *)b.data) : NULL;
            pm_buf_free(&b);
        }
        int rc = pm_datafile_reader_next(r->rd, r->vals, r->raw, &e);
        if (rc == PAIMON_DONE) { pm_datafile_reader_close(r->rd); r->rd = NULL; continue; }
        if (rc) { rows_release(r); return lp_raise(L, &e); }
        break;
    }
    const pm_schema *s = t->schema;
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
        lua_pushstring(L, r->cur_file ? r->cur_file : "");
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
    r->n = t->schema->n_fields;
    r->vals = calloc(r->n ? r->n : 1, sizeof *r->vals);
    r->raw = calloc(r->n ? r->n : 1, sizeof *r->raw);
    if (!r->vals || !r->raw) { rows_release(r); return luaL_error(L, "out of memory"); }
    pm_err e = {0};
    int rc = pm_scan_open(t, ud->s, &r->filter, &r->scan, &e);
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
