/* Strict JSON reader (see pm_json.h): recursive descent over the bytes,
 * values of open arrays and objects on two stacks, each finished array or
 * object copied into the document's arena. */
#include "pm_json.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_common.h"

#define MAX_DEPTH 2048   /* jansson's JSON_PARSER_MAX_DEPTH */

struct pm_json_doc {
    pm_arena *arena;
    pm_json root;
};

typedef struct parser {
    const char *p, *end;
    const char *line_start;
    int line;
    int depth;
    pm_arena *arena;
    pm_json *vals;              /* items of the open arrays */
    size_t n_vals, cap_vals;
    pm_json_member *mems;       /* members of the open objects */
    size_t n_mems, cap_mems;
    pm_json_error *err;
} parser;

static int fail(parser *x, const char *fmt, ...) PM_PRINTF(2, 3);
static int fail(parser *x, const char *fmt, ...) {
    pm_json_error *e = x->err;
    e->line = x->line;
    e->column = (int)(x->p - x->line_start) + 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
    return -1;
}

static int nomem(parser *x) {
    x->err->nomem = 1;
    return fail(x, "out of memory");
}

/* What the error is near: the next byte, printable or in hex. */
static const char *near(parser *x, char *buf, size_t cap) {
    if (x->p >= x->end) return "end of input";
    unsigned char c = (unsigned char)*x->p;
    if (c >= 0x20 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

static void skip_ws(parser *x) {
    while (x->p < x->end) {
        char c = *x->p;
        if (c == '\n') { x->p++; x->line++; x->line_start = x->p; }
        else if (c == ' ' || c == '\t' || c == '\r') x->p++;
        else break;
    }
}

/* ---- strings ------------------------------------------------------------------ */

static int hex4(const char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

size_t pm_utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned c = p[0];
    size_t n;
    unsigned v;
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) { n = 2; v = c & 0x1F; }
    else if (c < 0xF0) { n = 3; v = c & 0x0F; }
    else if (c < 0xF5) { n = 4; v = c & 0x07; }
    else return 0;
    if ((size_t)(end - p) < n) return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3F);
    }
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000)) return 0;
    return n;
}

static size_t put_utf8(char *o, unsigned v) {
    if (v < 0x80) { o[0] = (char)v; return 1; }
    if (v < 0x800) { o[0] = (char)(0xC0 | v >> 6); o[1] = (char)(0x80 | (v & 0x3F)); return 2; }
    if (v < 0x10000) {
        o[0] = (char)(0xE0 | v >> 12); o[1] = (char)(0x80 | (v >> 6 & 0x3F)); o[2] = (char)(0x80 | (v & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | v >> 18); o[1] = (char)(0x80 | (v >> 12 & 0x3F));
    o[2] = (char)(0x80 | (v >> 6 & 0x3F)); o[3] = (char)(0x80 | (v & 0x3F));
    return 4;
}

/* An escape at p (after the backslash): its code point and the bytes it
 * spans; -1 with the error set. */
static int escape_at(parser *x, const char *p, unsigned *cp, size_t *span) {
    switch (*p) {
    case '"': *cp = '"'; *span = 1; return 0;
    case '\\': *cp = '\\'; *span = 1; return 0;
    case '/': *cp = '/'; *span = 1; return 0;
    case 'b': *cp = '\b'; *span = 1; return 0;
    case 'f': *cp = '\f'; *span = 1; return 0;
    case 'n': *cp = '\n'; *span = 1; return 0;
    case 'r': *cp = '\r'; *span = 1; return 0;
    case 't': *cp = '\t'; *span = 1; return 0;
    case 'u': break;
    default: x->p = p; return fail(x, "invalid escape in string");
    }
    unsigned v, lo;
    if (x->end - p < 5 || hex4(p + 1, &v)) { x->p = p; return fail(x, "invalid \\u escape in string"); }
    *span = 5;
    if (v >= 0xDC00 && v <= 0xDFFF) { x->p = p; return fail(x, "invalid Unicode '\\u%04X' (lone low surrogate)", v); }
    if (v >= 0xD800 && v <= 0xDBFF) {
        if (x->end - p < 11 || p[5] != '\\' || p[6] != 'u' || hex4(p + 7, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
            x->p = p;
            return fail(x, "invalid Unicode '\\u%04X' (high surrogate without its low one)", v);
        }
        v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
        *span = 11;
    }
    if (v == 0) { x->p = p; return fail(x, "\\u0000 is not allowed in a string"); }
    *cp = v;
    return 0;
}

/* A string at x->p (the opening quote): checked, then copied unescaped into
 * the arena. */
static int parse_string(parser *x, const char **out, size_t *out_len) {
    const char *start = ++x->p, *q = start;
    size_t len = 0;
    int escaped = 0;
    for (;;) {
        if (q >= x->end) { x->p = q; return fail(x, "premature end of input in a string"); }
        unsigned char c = (unsigned char)*q;
        if (c == '"') break;
        if (c < 0x20) { x->p = q; return fail(x, "control character 0x%02x in a string", c); }
        if (c == '\\') {
            unsigned cp;
            size_t span;
            if (q + 1 >= x->end) { x->p = q; return fail(x, "premature end of input in a string"); }
            if (escape_at(x, q + 1, &cp, &span)) return -1;
            q += 1 + span;
            len += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            escaped = 1;
            continue;
        }
        size_t n = c < 0x80 ? 1 : pm_utf8_len((const unsigned char *)q, (const unsigned char *)x->end);
        if (!n) { x->p = q; return fail(x, "invalid UTF-8 (byte 0x%02x) in a string", c); }
        q += n;
        len += n;
    }
    char *s = pm_arena_alloc(x->arena, len + 1);
    if (!s) return nomem(x);
    if (!escaped) {
        memcpy(s, start, len);
    } else {
        size_t o = 0;
        for (const char *r = start; r < q;) {
            if (*r != '\\') { s[o++] = *r++; continue; }
            unsigned cp;
            size_t span;
            (void)escape_at(x, r + 1, &cp, &span);   /* checked above */
            o += put_utf8(s + o, cp);
            r += 1 + span;
        }
    }
    s[len] = '\0';
    x->p = q + 1;
    *out = s;
    *out_len = len;
    return 0;
}

/* ---- numbers -------------------------------------------------------------------- */

static int parse_number(parser *x, pm_json *v) {
    const char *s = x->p, *q = s;
    int neg = 0, is_real = 0;
    if (q < x->end && *q == '-') { neg = 1; q++; }
    if (q >= x->end || *q < '0' || *q > '9') return fail(x, "invalid number");
    if (*q == '0') {
        q++;
        if (q < x->end && *q >= '0' && *q <= '9') return fail(x, "invalid number (leading zero)");
    } else {
        while (q < x->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < x->end && *q == '.') {
        is_real = 1;
        q++;
        if (q >= x->end || *q < '0' || *q > '9') { x->p = q; return fail(x, "invalid number (no digit after '.')"); }
        while (q < x->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < x->end && (*q == 'e' || *q == 'E')) {
        is_real = 1;
        q++;
        if (q < x->end && (*q == '+' || *q == '-')) q++;
        if (q >= x->end || *q < '0' || *q > '9') { x->p = q; return fail(x, "invalid number (no exponent digit)"); }
        while (q < x->end && *q >= '0' && *q <= '9') q++;
    }
    if (!is_real) {
        uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        for (const char *r = s + neg; r < q; r++) {
            unsigned dgt = (unsigned)(*r - '0');
            if (u > (lim - dgt) / 10) return fail(x, neg ? "too big negative integer" : "too big integer");
            u = u * 10 + dgt;
        }
        v->type = PM_JSON_INTEGER;
        v->u.i = neg ? (u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u) : (int64_t)u;
        x->p = q;
        return 0;
    }
    /* strtod reads the locale's decimal point (a host may have set one) */
    char buf[512], *copy = buf;
    size_t n = (size_t)(q - s);
    if (n >= sizeof buf && !(copy = malloc(n + 1))) return nomem(x);
    memcpy(copy, s, n);
    copy[n] = '\0';
    const char *dp = localeconv()->decimal_point;
    if (dp && dp[0] && dp[0] != '.' && !dp[1]) {
        char *dot = strchr(copy, '.');
        if (dot) *dot = dp[0];
    }
    errno = 0;
    double d = strtod(copy, NULL);
    int range = errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL);
    if (copy != buf) free(copy);
    if (range) return fail(x, "real number overflow");
    v->type = PM_JSON_REAL;
    v->u.d = d;
    x->p = q;
    return 0;
}

/* ---- values ------------------------------------------------------------------------ */

static int parse_value(parser *x, pm_json *v);
static int parse_one(parser *x, pm_json *v);

static int lit(parser *x, const char *word, size_t n, pm_json_type t, pm_json *v) {
    if ((size_t)(x->end - x->p) < n || memcmp(x->p, word, n)) return fail(x, "invalid token");
    x->p += n;
    v->type = t;
    return 0;
}

static int push_val(parser *x, const pm_json *v) {
    if (x->n_vals == x->cap_vals) {
        size_t nc = x->cap_vals ? x->cap_vals * 2 : 64;
        pm_json *nv = realloc(x->vals, nc * sizeof *nv);
        if (!nv) return nomem(x);
        x->vals = nv;
        x->cap_vals = nc;
    }
    x->vals[x->n_vals++] = *v;
    return 0;
}

static int push_mem(parser *x, const char *k, size_t kl) {
    if (x->n_mems == x->cap_mems) {
        size_t nc = x->cap_mems ? x->cap_mems * 2 : 64;
        pm_json_member *nm = realloc(x->mems, nc * sizeof *nm);
        if (!nm) return nomem(x);
        x->mems = nm;
        x->cap_mems = nc;
    }
    pm_json_member *m = &x->mems[x->n_mems++];
    m->key = k;
    m->key_len = kl;
    m->value.type = PM_JSON_NULL;
    return 0;
}

static int parse_array(parser *x, pm_json *v) {
    size_t base = x->n_vals;
    x->p++;
    skip_ws(x);
    if (x->p < x->end && *x->p == ']') {
        x->p++;
    } else {
        for (;;) {
            pm_json item;
            if (parse_value(x, &item) || push_val(x, &item)) return -1;
            skip_ws(x);
            if (x->p < x->end && *x->p == ',') { x->p++; skip_ws(x); continue; }
            if (x->p < x->end && *x->p == ']') { x->p++; break; }
            char b[16];
            return fail(x, "',' or ']' expected near %s", near(x, b, sizeof b));
        }
    }
    size_t n = x->n_vals - base;
    pm_json *items = NULL;
    if (n && !(items = pm_arena_alloc(x->arena, n * sizeof *items))) return nomem(x);
    if (n) memcpy(items, x->vals + base, n * sizeof *items);
    x->n_vals = base;
    v->type = PM_JSON_ARRAY;
    v->u.arr.v = items;
    v->u.arr.n = n;
    return 0;
}

static int cmp_member_key(const void *a, const void *b) {
    const pm_json_member *x = *(const pm_json_member *const *)a, *y = *(const pm_json_member *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
    return x < y ? -1 : x > y;   /* the same key: in order of appearance */
}

/* A key given twice keeps its first place and takes the last value; the
 * others are dropped (key NULL). Sorting keeps a huge object with many
 * keys from taking quadratic time. */
static int merge_duplicates(parser *x, pm_json_member *m, size_t n) {
    if (n < 2) return 0;
    if (n <= 16) {
        for (size_t i = 1; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (m[j].key && m[j].key_len == m[i].key_len && !memcmp(m[j].key, m[i].key, m[i].key_len)) {
                    m[j].value = m[i].value;
                    m[i].key = NULL;
                    break;
                }
        return 0;
    }
    pm_json_member **idx = malloc(n * sizeof *idx);
    if (!idx) return nomem(x);
    for (size_t i = 0; i < n; i++) idx[i] = &m[i];
    qsort(idx, n, sizeof *idx, cmp_member_key);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && idx[j]->key_len == idx[i]->key_len && !memcmp(idx[j]->key, idx[i]->key, idx[i]->key_len)) j++;
        if (j - i > 1) {
            idx[i]->value = idx[j - 1]->value;
            for (size_t k = i + 1; k < j; k++) idx[k]->key = NULL;
        }
        i = j;
    }
    free(idx);
    return 0;
}

static int parse_object(parser *x, pm_json *v) {
    size_t base = x->n_mems;
    x->p++;
    skip_ws(x);
    if (x->p < x->end && *x->p == '}') {
        x->p++;
    } else {
        for (;;) {
            char b[16];
            if (x->p >= x->end || *x->p != '"') return fail(x, "string or '}' expected near %s", near(x, b, sizeof b));
            const char *k;
            size_t kl;
            if (parse_string(x, &k, &kl) || push_mem(x, k, kl)) return -1;
            size_t at = x->n_mems - 1;
            skip_ws(x);
            if (x->p >= x->end || *x->p != ':') return fail(x, "':' expected near %s", near(x, b, sizeof b));
            x->p++;
            skip_ws(x);
            pm_json val;
            if (parse_value(x, &val)) return -1;
            x->mems[at].value = val;   /* (the stack may have moved) */
            skip_ws(x);
            if (x->p < x->end && *x->p == ',') { x->p++; skip_ws(x); continue; }
            if (x->p < x->end && *x->p == '}') { x->p++; break; }
            return fail(x, "',' or '}' expected near %s", near(x, b, sizeof b));
        }
    }
    size_t n = x->n_mems - base;
    if (n > 1 && merge_duplicates(x, x->mems + base, n)) return -1;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) kept += x->mems[base + i].key != NULL;
    pm_json_member *m = NULL;
    if (kept && !(m = pm_arena_alloc(x->arena, kept * sizeof *m))) return nomem(x);
    for (size_t i = 0, o = 0; i < n; i++)
        if (x->mems[base + i].key) m[o++] = x->mems[base + i];
    x->n_mems = base;
    v->type = PM_JSON_OBJECT;
    v->u.obj.m = m;
    v->u.obj.n = kept;
    return 0;
}

/* Every value counts towards the depth, scalars too (as in jansson). */
static int parse_value(parser *x, pm_json *v) {
    if (++x->depth > MAX_DEPTH) return fail(x, "maximum parsing depth (%d) reached", MAX_DEPTH);
    int rc = parse_one(x, v);
    x->depth--;
    return rc;
}

static int parse_one(parser *x, pm_json *v) {
    memset(v, 0, sizeof *v);
    if (x->p >= x->end) return fail(x, "premature end of input");
    switch (*x->p) {
    case '{': return parse_object(x, v);
    case '[': return parse_array(x, v);
    case '"': {
        const char *s;
        size_t n;
        if (parse_string(x, &s, &n)) return -1;
        v->type = PM_JSON_STRING;
        v->u.str.s = s;
        v->u.str.len = n;
        return 0;
    }
    case 't': return lit(x, "true", 4, PM_JSON_TRUE, v);
    case 'f': return lit(x, "false", 5, PM_JSON_FALSE, v);
    case 'n': return lit(x, "null", 4, PM_JSON_NULL, v);
    default:
        if (*x->p == '-' || (*x->p >= '0' && *x->p <= '9')) return parse_number(x, v);
        return fail(x, "invalid token");
    }
}

int pm_json_parse(const char *text, size_t len, pm_json_doc **out, pm_json_error *err) {
    *out = NULL;
    memset(err, 0, sizeof *err);
    parser x;
    memset(&x, 0, sizeof x);
    x.p = x.line_start = text;
    x.end = text + len;
    x.line = 1;
    x.err = err;
    pm_json_doc *d = calloc(1, sizeof *d);
    size_t chunk = len < 512 ? 1024 : len < 32768 ? len * 2 : 65536;
    if (!d || !(d->arena = pm_arena_new(chunk))) {
        free(d);
        return nomem(&x);
    }
    x.arena = d->arena;
    skip_ws(&x);
    int rc;
    char b[16];
    if (x.p >= x.end || (*x.p != '{' && *x.p != '['))
        rc = fail(&x, "'[' or '{' expected near %s", near(&x, b, sizeof b));
    else
        rc = parse_value(&x, &d->root);
    if (!rc) {
        skip_ws(&x);
        if (x.p < x.end) rc = fail(&x, "end of input expected near %s", near(&x, b, sizeof b));
    }
    free(x.vals);
    free(x.mems);
    if (rc) {
        pm_json_doc_free(d);
        return -1;
    }
    *out = d;
    return 0;
}

const pm_json *pm_json_root(const pm_json_doc *d) { return &d->root; }

void pm_json_doc_free(pm_json_doc *d) {
    if (!d) return;
    pm_arena_free(d->arena);
    free(d);
}

const pm_json *pm_json_get(const pm_json *obj, const char *key) {
    if (!pm_json_is_object(obj) || !key) return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < obj->u.obj.n; i++) {
        const pm_json_member *m = &obj->u.obj.m[i];
        if (m->key_len == kl && !memcmp(m->key, key, kl)) return &m->value;
    }
    return NULL;
}
