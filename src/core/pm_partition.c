/* Rendering BinaryRow values as Java does (toString of the internal value,
 * or CAST(... AS STRING)), Hive-style path escaping and partition paths
 * (PartitionPathUtils, InternalRowPartitionComputer). */
#include "pm_types.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef __int128 pm_i128;
__extension__ typedef unsigned __int128 pm_u128;

/* ---- Java Float.toString / Double.toString -------------------------------
 * JDK 19+ specification (Raffaello Giulietti's algorithm): the shortest
 * decimal that rounds to the value (closest to it among those), but when one
 * digit suffices, the closest of the 1- and 2-digit decimals (so the float
 * minimum prints as 1.4E-45, not 1.0E-45). Then plain notation for
 * 1e-3 <= |x| < 1e7 with at least one fraction digit, else d.dddE<exp>. */

static int round_trips(const char *s, double v, int is_float) {
    if (is_float) return strtof(s, NULL) == (float)v;
    return strtod(s, NULL) == v;
}

/* Parse "%.*e" output into digits (no '.') and decimal exponent. */
static void parse_sci(const char *s, char *dig, int *nd, int *exp10) {
    int n = 0;
    for (; *s && *s != 'e' && *s != 'E'; s++)
        if (*s >= '0' && *s <= '9') dig[n++] = *s;
    *exp10 = (*s == 'e' || *s == 'E') ? (int)strtol(s + 1, NULL, 10) : 0;
    *nd = n;
}

static void strip_zeros(char *dig, int *nd) {
    while (*nd > 1 && dig[*nd - 1] == '0') (*nd)--;
}

/* v finite, > 0. Digits d0 d1 ... (value = d0.d1d2... * 10^k). */
static void shortest_digits(double v, int is_float, char *dig, int *nd, int *k) {
    char buf[64], cand[64];
    int maxp = is_float ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        if (round_trips(buf, v, is_float)) {
            if (p == 1) {
                snprintf(cand, sizeof cand, "%.1e", v);
                if (round_trips(cand, v, is_float)) memcpy(buf, cand, sizeof buf);
            }
            parse_sci(buf, dig, nd, k);
            strip_zeros(dig, nd);
            return;
        }
        /* The correctly rounded p-digit decimal falls outside the rounding
         * interval; when the interval is asymmetric (powers of two) its
         * neighbour on the other side of v may still be inside. */
        int n, x;
        parse_sci(buf, dig, &n, &x);
        unsigned long long m = 0;
        for (int i = 0; i < n; i++) m = m * 10 + (unsigned)(dig[i] - '0');
        int e10 = x - (n - 1);
        for (int delta = 1; delta >= -1; delta -= 2) {
            unsigned long long m2 = delta > 0 ? m + 1 : m - 1;
            if (m2 == 0) continue;
            snprintf(cand, sizeof cand, "%llue%d", m2, e10);
            if (round_trips(cand, v, is_float)) {
                int len = snprintf(dig, 32, "%llu", m2);
                *nd = len;
                *k = e10 + len - 1;
                strip_zeros(dig, nd);
                return;
            }
        }
    }
    snprintf(buf, sizeof buf, "%.16e", v);
    parse_sci(buf, dig, nd, k);
    strip_zeros(dig, nd);
}

static int java_fp_to_string(double v, int is_float, pm_buf *out) {
    if (isnan(v)) return pm_buf_printf(out, "NaN");
    if (isinf(v)) return pm_buf_printf(out, v < 0 ? "-Infinity" : "Infinity");
    if (v == 0) return pm_buf_printf(out, signbit(v) ? "-0.0" : "0.0");
    char dig[40];
    int nd, k;
    int neg = v < 0;
    if (neg) v = -v;
    shortest_digits(v, is_float, dig, &nd, &k);
    pm_buf b = {0};
    int rc = PAIMON_OK;
    if (neg) rc |= pm_buf_putc(&b, '-');
    if (v >= 1e-3 && v < 1e7) {
        if (k >= 0) {
            for (int i = 0; i <= k; i++) rc |= pm_buf_putc(&b, (uint8_t)(i < nd ? dig[i] : '0'));
            rc |= pm_buf_putc(&b, '.');
            if (nd > k + 1) rc |= pm_buf_append(&b, dig + k + 1, (size_t)(nd - k - 1));
            else rc |= pm_buf_putc(&b, '0');
        } else {
            rc |= pm_buf_printf(&b, "0.");
            for (int i = 0; i < -k - 1; i++) rc |= pm_buf_putc(&b, '0');
            rc |= pm_buf_append(&b, dig, (size_t)nd);
        }
    } else {
        rc |= pm_buf_putc(&b, (uint8_t)dig[0]);
        rc |= pm_buf_putc(&b, '.');
        if (nd > 1) rc |= pm_buf_append(&b, dig + 1, (size_t)(nd - 1));
        else rc |= pm_buf_putc(&b, '0');
        rc |= pm_buf_printf(&b, "E%d", k);
    }
    if (!rc) rc = pm_buf_append(out, b.data, b.len);
    pm_buf_free(&b);
    return rc ? PAIMON_NOMEM : PAIMON_OK;
}

/* ---- DECIMAL (BigDecimal.toPlainString) ---------------------------------- */

static int decimal_to_string(pm_i128 v, int32_t scale, pm_buf *out) {
    char tmp[48];
    int n = 0;
    int neg = v < 0;
    pm_u128 u = neg ? (pm_u128)0 - (pm_u128)v : (pm_u128)v;
    do { tmp[n++] = (char)('0' + (int)(u % 10)); u /= 10; } while (u);
    /* tmp holds digits reversed */
    int rc = PAIMON_OK;
    if (neg) rc |= pm_buf_putc(out, '-');
    if (scale <= 0) {
        for (int i = n - 1; i >= 0; i--) rc |= pm_buf_putc(out, (uint8_t)tmp[i]);
        for (int32_t i = 0; i < -scale; i++) rc |= pm_buf_putc(out, '0');
    } else if (n > scale) {
        for (int i = n - 1; i >= scale; i--) rc |= pm_buf_putc(out, (uint8_t)tmp[i]);
        rc |= pm_buf_putc(out, '.');
        for (int i = scale - 1; i >= 0; i--) rc |= pm_buf_putc(out, (uint8_t)tmp[i]);
    } else {
        rc |= pm_buf_printf(out, "0.");
        for (int32_t i = 0; i < scale - n; i++) rc |= pm_buf_putc(out, '0');
        for (int i = n - 1; i >= 0; i--) rc |= pm_buf_putc(out, (uint8_t)tmp[i]);
    }
    return rc ? PAIMON_NOMEM : PAIMON_OK;
}

/* ---- dates and times ----------------------------------------------------- */

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* LocalDate.toString: yyyy-MM-dd, 4-digit zero padded year below 1000 in
 * magnitude (sign for negative), '+' for years above 9999. */
static int java_date(int64_t days, pm_buf *out) {
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int rc;
    if (y >= 0 && y <= 9999) rc = pm_buf_printf(out, "%04lld", (long long)y);
    else if (y < 0 && y > -1000) rc = pm_buf_printf(out, "-%04lld", (long long)-y);
    else if (y > 9999) rc = pm_buf_printf(out, "+%lld", (long long)y);
    else rc = pm_buf_printf(out, "%lld", (long long)y);
    if (!rc) rc = pm_buf_printf(out, "-%02d-%02d", m, d);
    return rc;
}

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

/* Timestamp millis + nano-of-milli as UTC wall clock. */
static void split_ts(int64_t millis, int32_t nanos_of_milli, int64_t *days, int *h, int *mi,
                     int *s, int32_t *nano) {
    *days = floor_div(millis, 86400000);
    int64_t ms = millis % 86400000;
    if (ms < 0) ms += 86400000;
    *h = (int)(ms / 3600000);
    *mi = (int)(ms / 60000 % 60);
    *s = (int)(ms / 1000 % 60);
    *nano = (int32_t)(ms % 1000) * 1000000 + nanos_of_milli;
}

/* LocalDateTime.toString */
static int java_ts_legacy(int64_t millis, int32_t nom, pm_buf *out) {
    int64_t days;
    int h, mi, s;
    int32_t nano;
    split_ts(millis, nom, &days, &h, &mi, &s, &nano);
    int rc = java_date(days, out);
    if (!rc) rc = pm_buf_printf(out, "T%02d:%02d", h, mi);
    if (!rc && (s > 0 || nano > 0)) {
        rc = pm_buf_printf(out, ":%02d", s);
        if (!rc && nano > 0) {
            if (nano % 1000000 == 0) rc = pm_buf_printf(out, ".%03ld", (long)(nano / 1000000));
            else if (nano % 1000 == 0) rc = pm_buf_printf(out, ".%06ld", (long)(nano / 1000));
            else rc = pm_buf_printf(out, ".%09ld", (long)nano);
        }
    }
    return rc;
}

/* DateTimeUtils.formatDate (CAST(DATE AS STRING)). */
static int cast_date(int64_t days, pm_buf *out) {
    return java_date(days, out);
}

/* DateTimeUtils.formatTimestamp(ts, precision): "yyyy-MM-dd HH:mm:ss" plus
 * the 9-digit nano fraction with trailing zeros dropped down to `precision`. */
static int cast_ts(int64_t millis, int32_t nom, int precision, pm_buf *out) {
    int64_t days;
    int h, mi, s;
    int32_t nano;
    split_ts(millis, nom, &days, &h, &mi, &s, &nano);
    int rc = cast_date(days, out);
    if (!rc) rc = pm_buf_printf(out, " %02d:%02d:%02d", h, mi, s);
    if (rc) return rc;
    char frac[16];
    snprintf(frac, sizeof frac, "%09ld", (long)nano);
    int len = 9;
    while (len > precision && len > 0 && frac[len - 1] == '0') len--;
    if (len > 0) {
        if ((rc = pm_buf_putc(out, '.'))) return rc;
        rc = pm_buf_append(out, frac, (size_t)len);
    }
    return rc;
}

/* DateTimeUtils.formatTimestampMillis(int time, precision) (CAST(TIME AS STRING)). */
static int cast_time(int64_t t, int precision, pm_buf *out) {
    if (t < 0) t = t % 86400000 + 86400000;   /* Java: while (time < 0) time += MILLIS_PER_DAY */
    int h = (int)(t / 3600000), mi = (int)(t % 3600000 / 60000), s = (int)(t % 60000 / 1000);
    int ms = (int)(t % 1000);
    int rc = pm_buf_printf(out, "%02d:%02d:%02d", h % 100, mi, s);
    if (!rc && precision > 0) {
        rc = pm_buf_putc(out, '.');
        while (!rc && precision > 0) {
            rc = pm_buf_putc(out, (uint8_t)('0' + ms / 100));
            ms = ms % 100 * 10;
            if (ms == 0) break;
            precision--;
        }
    }
    return rc;
}

/* ---- value rendering ---------------------------------------------------- */

static int decimal_value(const pm_type *t, const pm_datum *d, pm_i128 *v) {
    if (t->precision <= 18) { *v = d->v.i; return PAIMON_OK; }
    size_t n = d->v.bin.len;
    const uint8_t *p = d->v.bin.ptr;
    if (n > 16 || (n && !p)) return PAIMON_MISUSE;
    if (n == 0) { *v = 0; return PAIMON_OK; }
    pm_u128 u = (p[0] & 0x80) ? ~(pm_u128)0 : 0;
    for (size_t i = 0; i < n; i++) u = (u << 8) | p[i];
    *v = (pm_i128)u;
    return PAIMON_OK;
}

int pm_datum_to_string(const pm_type *t, const pm_datum *d, int legacy, pm_buf *out) {
    if (!t || !d || !out) return PAIMON_MISUSE;
    if (d->is_null) return pm_buf_printf(out, "null");
    size_t mark = out->len;
    int rc;
    switch (t->root) {
    case PM_T_BOOLEAN:
        rc = pm_buf_printf(out, "%s", d->v.i ? "true" : "false");
        break;
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT:
        rc = pm_buf_printf(out, "%lld", (long long)d->v.i);
        break;
    case PM_T_FLOAT:
        rc = java_fp_to_string((double)d->v.f, 1, out);
        break;
    case PM_T_DOUBLE:
        rc = java_fp_to_string(d->v.d, 0, out);
        break;
    case PM_T_DECIMAL: {
        pm_i128 v;
        if ((rc = decimal_value(t, d, &v))) break;
        rc = decimal_to_string(v, t->scale, out);
        break;
    }
    case PM_T_CHAR: case PM_T_VARCHAR:
        if (d->v.bin.len && !d->v.bin.ptr) { rc = PAIMON_MISUSE; break; }
        rc = pm_buf_append(out, d->v.bin.ptr, d->v.bin.len);
        break;
    case PM_T_BINARY: case PM_T_VARBINARY:
        if (d->v.bin.len && !d->v.bin.ptr) { rc = PAIMON_MISUSE; break; }
        if (!legacy) {   /* CAST(BINARY AS STRING): the bytes as a string */
            rc = pm_buf_append(out, d->v.bin.ptr, d->v.bin.len);
        } else {         /* Java prints byte[]@hash; lowercase hex here instead */
            static const char hx[] = "0123456789abcdef";
            rc = PAIMON_OK;
            for (size_t i = 0; i < d->v.bin.len && !rc; i++) {
                rc = pm_buf_putc(out, (uint8_t)hx[d->v.bin.ptr[i] >> 4]);
                if (!rc) rc = pm_buf_putc(out, (uint8_t)hx[d->v.bin.ptr[i] & 15]);
            }
        }
        break;
    case PM_T_DATE: case PM_T_TIME:     /* int32 internally */
        if (d->v.i < INT32_MIN || d->v.i > INT32_MAX) rc = PAIMON_MISUSE;
        else if (legacy) rc = pm_buf_printf(out, "%lld", (long long)d->v.i);
        else if (t->root == PM_T_DATE) rc = cast_date(d->v.i, out);
        else rc = cast_time(d->v.i, t->precision, out);
        break;
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ:
        if (d->v.ts.nanos_of_milli < 0 || d->v.ts.nanos_of_milli > 999999) { rc = PAIMON_MISUSE; break; }
        rc = legacy ? java_ts_legacy(d->v.ts.millis, d->v.ts.nanos_of_milli, out)
                    : cast_ts(d->v.ts.millis, d->v.ts.nanos_of_milli, t->precision, out);
        break;
    default:
        rc = PAIMON_UNSUPPORTED;
        break;
    }
    if (rc) out->len = mark;
    return rc;
}

/* ---- escaping ----------------------------------------------------------- */

static int needs_escape(uint8_t c) {
    if (c < 0x20 || c == 0x7f) return 1;
    switch (c) {
    case '"': case '#': case '%': case '\'': case '*': case '/': case ':': case '=':
    case '?': case '\\': case '{': case '}': case '[': case ']': case '^':
        return 1;
    default:
        return 0;
    }
}

int pm_escape_path_name(const char *s, size_t n, pm_buf *out) {
    static const char hx[] = "0123456789ABCDEF";
    if (!out || (n && !s)) return PAIMON_MISUSE;
    size_t mark = out->len;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        int rc;
        if (needs_escape(c)) {
            uint8_t esc[3] = {'%', (uint8_t)hx[c >> 4], (uint8_t)hx[c & 15]};
            rc = pm_buf_append(out, esc, 3);
        } else {
            rc = pm_buf_putc(out, c);
        }
        if (rc) { out->len = mark; return rc; }
    }
    return PAIMON_OK;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int pm_unescape_path_name(const char *s, size_t n, pm_buf *out) {
    if (!out || (n && !s)) return PAIMON_MISUSE;
    size_t mark = out->len;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        if (c == '%' && i + 2 < n) {
            /* Java: Integer.parseInt(two chars, 16); that also takes "+X" */
            int h1 = s[i + 1] == '+' ? 0 : hexval(s[i + 1]);
            int h2 = hexval(s[i + 2]);
            if (h1 >= 0 && h2 >= 0) {
                c = (uint8_t)(h1 * 16 + h2);
                i += 2;
            }
        }
        if (pm_buf_putc(out, c)) { out->len = mark; return PAIMON_NOMEM; }
    }
    return PAIMON_OK;
}

/* ---- partition paths ------------------------------------------------------ */

/* Java StringUtils.isNullOrWhitespaceOnly: every char Character.isWhitespace
 * (decoded from UTF-8; malformed bytes count as non-whitespace). */
static int java_is_ws(uint32_t cp) {
    if ((cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20)) return 1;
    if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a && cp != 0x2007)) return 1;
    return cp == 0x2028 || cp == 0x2029 || cp == 0x205f || cp == 0x3000;
}

static int blank(const uint8_t *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = p[i];
        uint32_t cp;
        size_t len;
        if (c < 0x80) { cp = c; len = 1; }
        else if ((c & 0xe0) == 0xc0) { cp = c & 0x1fu; len = 2; }
        else if ((c & 0xf0) == 0xe0) { cp = c & 0x0fu; len = 3; }
        else return 0;   /* 4-byte sequences are never whitespace; malformed neither */
        if (len > n - i) return 0;
        for (size_t j = 1; j < len; j++) {
            if ((p[i + j] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (p[i + j] & 0x3fu);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800)) return 0;   /* overlong */
        if (!java_is_ws(cp)) return 0;
        i += len;
    }
    return 1;
}

int pm_partition_path(const char *const *keys, pm_type *const *types, size_t n,
                      const pm_datum *vals, const char *default_name, int legacy,
                      pm_buf *out) {
    if (!out || (n && (!keys || !types || !vals))) return PAIMON_MISUSE;
    if (!default_name) default_name = "__DEFAULT_PARTITION__";
    size_t mark = out->len;
    pm_buf v = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        if (!keys[i] || !types[i]) { rc = PAIMON_MISUSE; break; }
        v.len = 0;
        if (!vals[i].is_null && (rc = pm_datum_to_string(types[i], &vals[i], legacy, &v))) break;
        const char *val = (const char *)v.data;
        size_t vlen = v.len;
        if (vals[i].is_null || blank(v.data, v.len)) {
            val = default_name;
            vlen = strlen(default_name);
        }
        if ((rc = pm_escape_path_name(keys[i], strlen(keys[i]), out))) break;
        if ((rc = pm_buf_putc(out, '='))) break;
        if ((rc = pm_escape_path_name(val, vlen, out))) break;
        rc = pm_buf_putc(out, '/');
    }
    pm_buf_free(&v);
    if (rc) out->len = mark;
    return rc;
}
