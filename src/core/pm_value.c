/* paimon_value -> Paimon values and composite Avro encoding (pm_value.h).
 * The messages are the Lua binding's since its first release: specs and
 * operators match on them, so they change only together with the specs. */
#include "pm_value.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_avro.h"
#include "pm_datafile.h"

__extension__ typedef __int128 pv_i128;
__extension__ typedef unsigned __int128 pv_u128;

#define MAX_DEPTH 64

/* ---- text of a value ------------------------------------------------------- */

/* A NUL-terminated copy of a string value (parsers stop at the first NUL,
 * as they did on Lua strings). */
typedef struct { char small[128]; char *heap; } cstr_tmp;

static const char *cstr_of(const paimon_value *v, cstr_tmp *t) {
    size_t n = v->v.str.len;
    char *p = t->small;
    t->heap = NULL;
    if (n >= sizeof t->small) {
        if (!(p = t->heap = malloc(n + 1))) return NULL;
    }
    if (n) memcpy(p, v->v.str.ptr, n);
    p[n] = '\0';
    return p;
}

static void cstr_done(cstr_tmp *t) { free(t->heap); }

/* Value kinds named as Lua names its types (the binding's messages). */
static const char *kind_name(const paimon_value *v) {
    switch (v->kind) {
    case PAIMON_VALUE_NULL: return "nil";
    case PAIMON_VALUE_BOOL: return "boolean";
    case PAIMON_VALUE_INT: case PAIMON_VALUE_DOUBLE: return "number";
    case PAIMON_VALUE_STRING: return "string";
    case PAIMON_VALUE_ARRAY: case PAIMON_VALUE_MAP: return "table";
    default: return v->text ? v->text : "userdata";
    }
}

/* A number as Lua 5.4 prints it ("%.14g", ".0" added to integral floats). */
static void render_double(double d, char *buf, size_t n) {
    for (int p = 1; p <= 17; p++) {   /* the shortest text that reads back */
        snprintf(buf, n, "%.*g", p, d);
        if (strtod(buf, NULL) == d || !isfinite(d)) break;
    }
    if (buf[strspn(buf, "-0123456789")] == '\0' && strlen(buf) + 3 <= n) strcat(buf, ".0");
}

/* The input as given, for messages: quoted text, the number, or its kind. */
static const char *shown(const paimon_value *v, char *buf, size_t n) {
    if (v->kind == PAIMON_VALUE_STRING) {
        snprintf(buf, n, "'%.*s'", (int)(v->v.str.len > 900 ? 900 : v->v.str.len), v->v.str.ptr);
    } else if (v->kind == PAIMON_VALUE_INT || v->kind == PAIMON_VALUE_DOUBLE) {
        if (v->text) snprintf(buf, n, "%s", v->text);
        else if (v->kind == PAIMON_VALUE_INT) snprintf(buf, n, "%lld", (long long)v->v.i);
        else render_double(v->v.d, buf, n);
    } else {
        snprintf(buf, n, "%s", kind_name(v));
    }
    return buf;
}

/* ---- integers --------------------------------------------------------------- */

int pm_value_int64(const paimon_value *v, int64_t *out) {
    switch (v->kind) {
    case PAIMON_VALUE_STRING: {
        cstr_tmp t;
        const char *s = cstr_of(v, &t);
        if (!s) return PM_INT_NOT_INTEGER;
        int rc = pm_decimal_int64(s, out);
        cstr_done(&t);
        return rc == 0 ? PM_INT_OK : rc == 2 ? PM_INT_RANGE : PM_INT_NOT_INTEGER;
    }
    case PAIMON_VALUE_INT:
        *out = v->v.i;
        return PM_INT_OK;
    case PAIMON_VALUE_DOUBLE: {
        double n = v->v.d;
        if (n != floor(n)) return PM_INT_NOT_INTEGER;   /* NaN too */
        if (n >= 9223372036854775808.0 || n < -9223372036854775808.0) return PM_INT_RANGE;
        if (fabs(n) >= 9007199254740992.0) return PM_INT_INEXACT;
        *out = (int64_t)n;
        return PM_INT_OK;
    }
    default:
        return PM_INT_NOT_INTEGER;
    }
}

static int to_integer(const paimon_value *v, const pm_type *ty, const char *col, pm_datum *d, pm_err *e) {
    int64_t x = 0;
    int st = pm_value_int64(v, &x);
    pm_type_root r = ty->root;
    int64_t lo = r == PM_T_TINYINT ? -128 : r == PM_T_SMALLINT ? -32768 : r == PM_T_INT ? INT32_MIN : INT64_MIN;
    int64_t hi = r == PM_T_TINYINT ? 127 : r == PM_T_SMALLINT ? 32767 : r == PM_T_INT ? INT32_MAX : INT64_MAX;
    if (st == PM_INT_OK && x >= lo && x <= hi) { d->v.i = x; return PAIMON_OK; }
    char buf[960];
    const char *in = shown(v, buf, sizeof buf);   /* the input as given, never a converted or clamped value */
    const char *name = pm_type_root_name(r);
    if (st == PM_INT_NOT_INTEGER)
        return pm_fail(e, PAIMON_MISUSE, "column '%s' (%s): expected an integer (a number or decimal digits), got %s", col, name, in);
    if (st == PM_INT_INEXACT)
        return pm_fail(e, PAIMON_MISUSE, "column '%s' (%s): %s is a float of 2^53 or more and may have been rounded; give an integer or decimal text", col, name, in);
    return pm_fail(e, PAIMON_MISUSE, "column '%s' (%s): %s is out of range [%lld, %lld]", col, name, in, (long long)lo, (long long)hi);
}

/* ---- dates, times, decimals ------------------------------------------------- */

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

/* Decimal text -> unscaled value at `scale`; NULL or what is wrong. */
static const char *parse_decimal(const char *s, int precision, int scale, pv_i128 *out) {
    const char *p = s;
    while (isspace((unsigned char)*p)) p++;
    int neg = 0;
    if (*p == '-' || *p == '+') { neg = *p == '-'; p++; }
    pv_i128 v = 0;
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
    pv_i128 lim = 1;
    for (int i = 0; i < precision; i++) lim *= 10;
    if (v >= lim) return "does not fit the precision";
    *out = neg ? -v : v;
    return NULL;
}

/* A double -> the decimal text it was written as: the shortest digits
 * that read back as the same double, without an exponent. That is the
 * text of every number of at most 15 significant digits (2.675, not the
 * binary neighbour 2.67499999...); a double needing 16 or 17 digits may
 * not be what was written, so it is refused (NULL). buf: 400 bytes. */
static const char *double_decimal_text(double d, char *buf) {
    if (!isfinite(d)) return NULL;
    char e[40];
    int p = 1;
    for (; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, d);
        if (strtod(e, NULL) == d) break;
    }
    if (p > 15) return NULL;
    /* e: [-]D.DDDe[+-]XX -> plain digits with the point placed */
    const char *q = e;
    char digits[20], *o = buf;
    int nd = 0;
    if (*q == '-') { *o++ = '-'; q++; }
    for (; *q && *q != 'e'; q++) if (isdigit((unsigned char)*q)) digits[nd++] = *q;
    int exp10 = atoi(q + 1), point = exp10 + 1;   /* digits before the point */
    if (point > 360 || point < -360) return NULL;   /* never: doubles end at 1e308 and 5e-324 */
    if (point <= 0) {
        *o++ = '0'; *o++ = '.';
        for (int i = 0; i < -point; i++) *o++ = '0';
        for (int i = 0; i < nd; i++) *o++ = digits[i];
    } else {
        for (int i = 0; i < point || i < nd; i++) {
            if (i == point) *o++ = '.';
            *o++ = i < nd ? digits[i] : '0';
        }
    }
    *o = '\0';
    return buf;
}

static int to_decimal(const paimon_value *v, const pm_type *ty, const char *col, pm_datum *d, uint8_t dec[16], pm_err *e) {
    pv_i128 x = 0;
    const char *err;
    char buf[400], what[960];
    if (v->kind == PAIMON_VALUE_STRING) {
        cstr_tmp t;
        const char *s = cstr_of(v, &t);
        if (!s) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        err = parse_decimal(s, ty->precision, ty->scale, &x);
        cstr_done(&t);
    } else if (v->kind == PAIMON_VALUE_INT) {
        snprintf(buf, sizeof buf, "%lld", (long long)v->v.i);
        err = parse_decimal(buf, ty->precision, ty->scale, &x);
    } else if (v->kind == PAIMON_VALUE_DOUBLE) {
        /* never rounded to the scale: the number's text, exactly */
        if (v->text) err = parse_decimal(v->text, ty->precision, ty->scale, &x);
        else if (double_decimal_text(v->v.d, buf)) err = parse_decimal(buf, ty->precision, ty->scale, &x);
        else if (!isfinite(v->v.d)) err = "is not a finite number";
        else err = "has more than 15 significant digits as a number: give it as a string (\"12.34\") to keep it exact";
    } else {
        err = "is not a number or decimal string";
    }
    if (err) return pm_fail(e, PAIMON_MISUSE, "column '%s' (DECIMAL(%d, %d)): value %s %s", col, (int)ty->precision,
                            (int)ty->scale, shown(v, what, sizeof what), err);
    if (ty->precision <= 18) { d->v.i = (int64_t)x; return PAIMON_OK; }
    /* the core takes a wide decimal as big-endian two's complement (and
     * writes Java's minimal form itself) */
    pv_u128 u = (pv_u128)x;
    for (int i = 15; i >= 0; i--) { dec[i] = (uint8_t)u; u >>= 8; }
    d->v.bin.ptr = dec;
    d->v.bin.len = 16;
    return PAIMON_OK;
}

/* DATE / TIME / TIMESTAMP from text; 0 if it does not parse. */
static int parse_temporal(const paimon_value *v, const pm_type *ty, pm_datum *d, int *ok, pm_err *e) {
    cstr_tmp t;
    const char *s = cstr_of(v, &t), *p = s;
    if (!s) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int64_t x = 0, ms = 0;
    int32_t nom = 0;
    if (ty->root == PM_T_DATE) {
        *ok = parse_date_part(&p, &x) && !*p;
        d->v.i = x;
    } else if (ty->root == PM_T_TIME) {
        *ok = parse_time_part(&p, &x, &nom, ty->precision) && !*p;
        d->v.i = x;
    } else {
        *ok = parse_date_part(&p, &x);
        if (*ok && (*p == ' ' || *p == 'T')) { p++; *ok = parse_time_part(&p, &ms, &nom, ty->precision); }
        *ok = *ok && !*p;
        d->v.ts.millis = x * 86400000 + ms;
        d->v.ts.nanos_of_milli = nom;
    }
    cstr_done(&t);
    return PAIMON_OK;
}

static int to_temporal(const paimon_value *v, const pm_type *ty, const char *col, pm_datum *d, pm_err *e) {
    char buf[960];
    int64_t x = 0;
    if (v->kind == PAIMON_VALUE_STRING) {
        int ok = 0, rc = parse_temporal(v, ty, d, &ok, e);
        if (rc) return rc;
        if (!ok) {
            shown(v, buf, sizeof buf);
            if (ty->root == PM_T_DATE) return pm_fail(e, PAIMON_MISUSE, "column '%s' (DATE): %s is not a date (yyyy-MM-dd)", col, buf);
            if (ty->root == PM_T_TIME) return pm_fail(e, PAIMON_MISUSE, "column '%s' (TIME): %s is not a time (HH:mm:ss[.fff])", col, buf);
            return pm_fail(e, PAIMON_MISUSE, "column '%s' (TIMESTAMP): %s is not a timestamp (yyyy-MM-dd HH:mm:ss[.fffffffff])", col, buf);
        }
        if (ty->root != PM_T_DATE && ty->root != PM_T_TIME) return PAIMON_OK;
        x = d->v.i;
    } else if (pm_value_int64(v, &x) != PM_INT_OK) {
        if (ty->root == PM_T_DATE) return pm_fail(e, PAIMON_MISUSE, "column '%s' (DATE): expected 'yyyy-MM-dd' or days since 1970-01-01", col);
        if (ty->root == PM_T_TIME) return pm_fail(e, PAIMON_MISUSE, "column '%s' (TIME): expected 'HH:mm:ss[.fff]' or millis of the day", col);
        return pm_fail(e, PAIMON_MISUSE, "column '%s' (TIMESTAMP): expected a timestamp string or epoch millis", col);
    } else if (ty->root != PM_T_DATE && ty->root != PM_T_TIME) {
        d->v.ts.millis = x;
        return PAIMON_OK;
    }
    if (ty->root == PM_T_DATE && (x < INT32_MIN || x > INT32_MAX)) return pm_fail(e, PAIMON_MISUSE, "column '%s' (DATE): out of range", col);
    if (ty->root == PM_T_TIME && (x < 0 || x >= 86400000)) return pm_fail(e, PAIMON_MISUSE, "column '%s' (TIME): out of range", col);
    d->v.i = x;
    return PAIMON_OK;
}

static int to_floating(const paimon_value *v, const pm_type *ty, const char *col, pm_datum *d, pm_err *e) {
    double n = 0;
    char buf[960];
    if (v->kind == PAIMON_VALUE_DOUBLE) n = v->v.d;
    else if (v->kind == PAIMON_VALUE_INT) n = (double)v->v.i;
    else if (v->kind == PAIMON_VALUE_STRING) {
        cstr_tmp t;
        const char *s = cstr_of(v, &t);
        if (!s) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        int bad = 0;
        if (!strcmp(s, "NaN")) n = NAN;
        else if (!strcmp(s, "Infinity")) n = HUGE_VAL;
        else if (!strcmp(s, "-Infinity")) n = -HUGE_VAL;
        else { char *end; n = strtod(s, &end); bad = end == s || *end; }
        cstr_done(&t);
        if (bad) return pm_fail(e, PAIMON_MISUSE, "column '%s': %s is not a number", col, shown(v, buf, sizeof buf));
    } else {
        return pm_fail(e, PAIMON_MISUSE, "column '%s' (%s): expected a number, got %s", col, pm_type_root_name(ty->root), kind_name(v));
    }
    if (ty->root == PM_T_FLOAT) d->v.f = (float)n;
    else d->v.d = n;
    return PAIMON_OK;
}

int pm_value_to_datum(const paimon_value *v, const pm_type *ty, const char *col, pm_datum *d, uint8_t dec[16], pm_err *e) {
    memset(d, 0, sizeof *d);
    if (v->kind == PAIMON_VALUE_NULL) {
        if (!ty->nullable) return pm_fail(e, PAIMON_MISUSE, "column '%s' is NOT NULL but the value is null", col);
        d->is_null = 1;
        return PAIMON_OK;
    }
    switch (ty->root) {
    case PM_T_BOOLEAN:
        if (v->kind != PAIMON_VALUE_BOOL) return pm_fail(e, PAIMON_MISUSE, "column '%s' (BOOLEAN): expected a boolean, got %s", col, kind_name(v));
        d->v.i = v->v.b != 0;
        return PAIMON_OK;
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT:
        return to_integer(v, ty, col, d, e);
    case PM_T_FLOAT: case PM_T_DOUBLE:
        return to_floating(v, ty, col, d, e);
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY: case PM_T_BLOB:
        if (v->kind != PAIMON_VALUE_STRING) return pm_fail(e, PAIMON_MISUSE, "column '%s' (%s): expected a string, got %s", col, pm_type_root_name(ty->root), kind_name(v));
        if (v->v.str.len && !v->v.str.ptr) return pm_fail(e, PAIMON_MISUSE, "column '%s': NULL data pointer", col);
        d->v.bin.ptr = (const uint8_t *)v->v.str.ptr;
        d->v.bin.len = v->v.str.len;
        return PAIMON_OK;
    case PM_T_DECIMAL:
        return to_decimal(v, ty, col, d, dec, e);
    case PM_T_DATE: case PM_T_TIME: case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ:
        return to_temporal(v, ty, col, d, e);
    default:
        return pm_fail(e, PAIMON_UNSUPPORTED, "column '%s': writing %s values is not supported", col, pm_type_root_name(ty->root));
    }
}

/* ---- composite values -> Avro binary --------------------------------------- */

int pm_type_is_composite(const pm_type *t) {
    return t->root == PM_T_ARRAY || t->root == PM_T_MAP || t->root == PM_T_MULTISET || t->root == PM_T_ROW;
}

static int put_long(pm_buf *b, int64_t v, pm_err *e) {
    return pm_avro_put_long(b, v) ? pm_fail(e, PAIMON_NOMEM, "out of memory") : PAIMON_OK;
}

static int encode_composite(pm_buf *b, const paimon_value *v, const pm_type *ty, const char *col, int depth, pm_err *e);

/* A value with the union branch when ty is nullable. */
static int encode_any(pm_buf *b, const paimon_value *v, const pm_type *ty, const char *col, int depth, pm_err *e) {
    if (pm_type_is_composite(ty)) {
        if (v->kind == PAIMON_VALUE_NULL) {
            if (!ty->nullable) return pm_fail(e, PAIMON_MISUSE, "column '%s': a NOT NULL %s value is null", col, pm_type_root_name(ty->root));
            return put_long(b, 0, e);
        }
        int rc = ty->nullable ? put_long(b, 1, e) : PAIMON_OK;
        return rc ? rc : encode_composite(b, v, ty, col, depth, e);
    }
    pm_datum d;
    uint8_t dec[16];
    int rc = pm_value_to_datum(v, ty, col, &d, dec, e);
    return rc ? rc : pm_datafile_encode_value(b, ty, &d, col, e);
}

static int is_string_type(const pm_type *t) { return t->root == PM_T_CHAR || t->root == PM_T_VARCHAR; }

static int name_is(const paimon_value *k, const char *name) {
    size_t n = strlen(name);
    return k->kind == PAIMON_VALUE_STRING && k->v.str.len == n && !memcmp(k->v.str.ptr, name, n);
}

static int encode_map(pm_buf *b, const paimon_value *v, const pm_type *ty, const char *col, int depth, pm_err *e) {
    pm_type counts;   /* a MULTISET counts each element: MAP<T, INT> */
    memset(&counts, 0, sizeof counts);
    counts.root = PM_T_INT;
    counts.nullable = 1;
    const pm_type *kt = ty->element, *vt = ty->root == PM_T_MAP ? ty->value : &counts;
    size_t n = v->v.map.n;
    int rc;
    if (n && (rc = put_long(b, (int64_t)n, e))) return rc;
    for (size_t k = 0; k < n; k++) {
        const paimon_value *key = &v->v.map.keys[k];
        if (is_string_type(kt)) {
            if (key->kind != PAIMON_VALUE_STRING) return pm_fail(e, PAIMON_MISUSE, "column '%s': map keys must be strings", col);
            if (pm_avro_put_bytes(b, key->v.str.ptr, key->v.str.len)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        } else if ((rc = encode_any(b, key, kt, col, depth + 1, e))) {
            return rc;
        }
        if ((rc = encode_any(b, &v->v.map.values[k], vt, col, depth + 1, e))) return rc;
    }
    return put_long(b, 0, e);
}

static int encode_row(pm_buf *b, const paimon_value *v, const pm_type *ty, const char *col, int depth, pm_err *e) {
    static const paimon_value null_value = {PAIMON_VALUE_NULL, NULL, {0}};
    for (size_t f = 0; f < ty->n_fields; f++) {
        const paimon_value *fv = &null_value;   /* a field not given is NULL */
        for (size_t k = 0; k < v->v.map.n; k++)
            if (name_is(&v->v.map.keys[k], ty->fields[f].name)) { fv = &v->v.map.values[k]; break; }
        int rc = encode_any(b, fv, ty->fields[f].type, col, depth + 1, e);
        if (rc) return rc;
    }
    for (size_t k = 0; k < v->v.map.n; k++) {
        int known = 0;
        for (size_t f = 0; f < ty->n_fields && !known; f++) known = name_is(&v->v.map.keys[k], ty->fields[f].name);
        if (!known) return pm_fail(e, PAIMON_MISUSE, "column '%s': the ROW value has a field that the type does not have", col);
    }
    return PAIMON_OK;
}

static int encode_composite(pm_buf *b, const paimon_value *v, const pm_type *ty, const char *col, int depth, pm_err *e) {
    if (depth > MAX_DEPTH) return pm_fail(e, PAIMON_MISUSE, "column '%s': value nested too deeply", col);
    if (v->kind != PAIMON_VALUE_ARRAY && v->kind != PAIMON_VALUE_MAP)
        return pm_fail(e, PAIMON_MISUSE, "column '%s' (%s): expected a table, got %s", col, pm_type_root_name(ty->root), kind_name(v));
    int want_array = ty->root == PM_T_ARRAY;
    if (want_array != (v->kind == PAIMON_VALUE_ARRAY))
        return pm_fail(e, PAIMON_MISUSE, "column '%s' (%s): expected %s value, got %s", col, pm_type_root_name(ty->root),
                       want_array ? "an array" : "a map", want_array ? "a map" : "an array");
    switch (ty->root) {
    case PM_T_ARRAY: {
        size_t n = v->v.array.n;
        int rc;
        if (n && (rc = put_long(b, (int64_t)n, e))) return rc;
        for (size_t k = 0; k < n; k++)
            if ((rc = encode_any(b, &v->v.array.items[k], ty->element, col, depth + 1, e))) return rc;
        return put_long(b, 0, e);
    }
    case PM_T_MAP: case PM_T_MULTISET:
        return encode_map(b, v, ty, col, depth, e);
    case PM_T_ROW:
        return encode_row(b, v, ty, col, depth, e);
    default:
        return pm_fail(e, PAIMON_MISUSE, "column '%s': not a composite type", col);
    }
}

int pm_value_encode_composite(pm_buf *b, const paimon_value *v, const pm_type *ty, const char *col, pm_err *e) {
    return encode_composite(b, v, ty, col, 0, e);
}
