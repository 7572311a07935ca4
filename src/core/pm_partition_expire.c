/* Partition expiration for paimon.h (pm_partition_expire.h): Java's rule,
 * as lua/paimon/policy/partition_expire.lua states it for the Lua face. */
#include "pm_partition_expire.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_meta.h"
#include "pm_tags.h"

void pm_part_expire_result_free(pm_part_expire_result *r) {
    if (!r) return;
    pm_drop_result_free(&r->drop);
    for (size_t i = 0; i < r->n_unparseable; i++) { free(r->unparseable[i].path); free(r->unparseable[i].reason); }
    free(r->unparseable);
    r->unparseable = NULL;
    r->n_unparseable = 0;
}

/* ---- times (java.time, ResolverStyle.SMART) -------------------------------- */

enum { F_YEAR, F_MONTH, F_DAY, F_HOUR, F_MINUTE, F_SECOND, F_NANO, F__N };

typedef struct fields { int has[F__N]; int64_t v[F__N]; } fields;

static int is_leap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

/* Month 1..12, day clamped to the month, hour 0..23 (24:00:00 is the next
 * midnight), minute and second 0..59; LocalDate when there is no time. */
static int resolve(const fields *f, const char *text, int64_t *ms, pm_err *e) {
    if (!f->has[F_YEAR] || !f->has[F_MONTH] || !f->has[F_DAY])
        return pm_fail(e, PAIMON_CORRUPT, "no complete date in '%s'", text);
    int64_t y = f->v[F_YEAR], m = f->v[F_MONTH], d = f->v[F_DAY];
    if (m < 1 || m > 12) return pm_fail(e, PAIMON_CORRUPT, "invalid month %lld in '%s'", (long long)m, text);
    if (d < 1 || d > 31) return pm_fail(e, PAIMON_CORRUPT, "invalid day %lld in '%s'", (long long)d, text);
    if (y < -999999999 || y > 999999999) return pm_fail(e, PAIMON_CORRUPT, "invalid year in '%s'", text);
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t last = m == 2 && is_leap(y) ? 29 : dim[m - 1];
    if (d > last) d = last;
    int64_t h, mi, s, nano;
    if (!f->has[F_HOUR]) {
        if (f->has[F_MINUTE] || f->has[F_SECOND] || f->has[F_NANO])
            return pm_fail(e, PAIMON_CORRUPT, "a time without hours in '%s'", text);
        h = mi = s = nano = 0;
    } else {
        if (!f->has[F_MINUTE] && (f->has[F_SECOND] || f->has[F_NANO]))
            return pm_fail(e, PAIMON_CORRUPT, "seconds without minutes in '%s'", text);
        h = f->v[F_HOUR];
        mi = f->has[F_MINUTE] ? f->v[F_MINUTE] : 0;
        s = f->has[F_SECOND] ? f->v[F_SECOND] : 0;
        nano = f->has[F_NANO] ? f->v[F_NANO] : 0;
    }
    int64_t extra = 0;
    if (h == 24 && mi == 0 && s == 0 && nano == 0) { h = 0; extra = 1; }
    if (h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59)
        return pm_fail(e, PAIMON_CORRUPT, "invalid time in '%s'", text);
    int64_t days = pm_days_from_civil(y, (int)m, (int)d) + extra;
    *ms = ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + nano / 1000000;
    return PAIMON_OK;
}

static size_t digit_run(const char *p) {
    size_t n = 0;
    while (isdigit((unsigned char)p[n])) n++;
    return n;
}

/* The first n digits at p as a number; 0 if they do not fit. */
static int digits_value(const char *p, size_t n, int64_t *v) {
    if (n == 0 || n > 18) return 0;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) x = x * 10 + (p[i] - '0');
    *v = x;
    return 1;
}

/* Nine fraction digits from the first n digits at p (padded, cut). */
static int64_t nano_of(const char *p, size_t n) {
    int64_t x = 0;
    for (size_t i = 0; i < 9; i++) x = x * 10 + (i < n ? p[i] - '0' : 0);
    return x;
}

/* PartitionTimeExtractor's default: yyyy-M-d[ H:m:s[.fraction]] with 1..10
 * year digits, 1..2 for the rest, 1..9 fraction digits. */
static int parse_default(const char *text, int64_t *ms, pm_err *e) {
    fields f;
    memset(&f, 0, sizeof f);
    const char *p = text;
    size_t ny = digit_run(p);
    size_t nm = ny && p[ny] == '-' ? digit_run(p + ny + 1) : 0;
    size_t nd = nm && p[ny + 1 + nm] == '-' ? digit_run(p + ny + nm + 2) : 0;
    if (!nd || ny > 10 || nm > 2 || nd > 2) goto bad;
    digits_value(p, ny, &f.v[F_YEAR]);
    digits_value(p + ny + 1, nm, &f.v[F_MONTH]);
    digits_value(p + ny + nm + 2, nd, &f.v[F_DAY]);
    f.has[F_YEAR] = f.has[F_MONTH] = f.has[F_DAY] = 1;
    p += ny + nm + nd + 2;
    if (*p) {
        if (*p != ' ') goto bad;
        p++;
        int ids[3] = {F_HOUR, F_MINUTE, F_SECOND};
        for (int k = 0; k < 3; k++) {
            size_t n = digit_run(p);
            if (!n || n > 2) goto bad;
            digits_value(p, n, &f.v[ids[k]]);
            f.has[ids[k]] = 1;
            p += n;
            if (k < 2) {
                if (*p != ':') goto bad;
                p++;
            }
        }
        if (*p) {
            if (*p != '.') goto bad;
            size_t n = digit_run(p + 1);
            if (!n || n > 9 || p[1 + n]) goto bad;
            f.v[F_NANO] = nano_of(p + 1, n);
            f.has[F_NANO] = 1;
        }
    }
    return resolve(&f, text, ms, e);
bad:
    return pm_fail(e, PAIMON_CORRUPT, "'%s' does not match yyyy-M-d[ H:m:s[.S]]", text);
}

/* DateTimeFormatter.ofPattern, the subset: y/u, M, d, H, m, s (1 letter: 1+
 * digits, 2: exactly two; yy: 2000-2099, yyyy+: that many), S..S (fraction,
 * exactly that many), 'quoted' and other non-letter literals. */
typedef struct tok {
    const char *lit;              /* a literal: lit[0..lit_len) */
    size_t lit_len;
    int field;                    /* else */
    size_t min, max;
    int fraction, reduced;
    long reserve;                 /* digits left to the fixed-width fields after it; -1 none */
} tok;

static int field_of(char c) {
    switch (c) {
    case 'y': case 'u': return F_YEAR;
    case 'M': return F_MONTH;
    case 'd': return F_DAY;
    case 'H': return F_HOUR;
    case 'm': return F_MINUTE;
    case 's': return F_SECOND;
    default: return -1;
    }
}

static int compile_formatter(const char *pattern, tok **out, size_t *n, pm_err *e) {
    *out = NULL;
    *n = 0;
    if (!pattern || !*pattern) return pm_fail(e, PAIMON_MISUSE, "empty timestamp formatter");
    size_t len = strlen(pattern);
    tok *v = calloc(len + 1, sizeof *v);
    if (!v) return pm_nomem(e);
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        char c = pattern[i];
        tok *t = &v[k];
        t->reserve = -1;
        if (c == '\'') {
            const char *q = strchr(pattern + i + 1, '\'');
            if (!q) { free(v); return pm_fail(e, PAIMON_MISUSE, "unterminated quote in timestamp formatter '%s'", pattern); }
            size_t j = (size_t)(q - pattern);
            if (j == i + 1) { t->lit = "'"; t->lit_len = 1; }
            else { t->lit = pattern + i + 1; t->lit_len = j - i - 1; }
            i = j + 1;
        } else if (isalpha((unsigned char)c)) {
            size_t j = i;
            while (j + 1 < len && pattern[j + 1] == c) j++;
            size_t count = j - i + 1;
            int f = field_of(c);
            if (c == 'S') {
                t->field = F_NANO;
                t->min = t->max = count;
                t->fraction = 1;
            } else if (f < 0) {
                free(v);
                return pm_fail(e, PAIMON_MISUSE, "unsupported pattern letter '%c' in timestamp formatter '%s'", c, pattern);
            } else if (f == F_YEAR) {
                t->field = f;
                if (count == 2) { t->min = t->max = 2; t->reduced = 1; }
                else if (count >= 4) t->min = t->max = count;
                else { t->min = count; t->max = 19; }
            } else if (count <= 2) {
                t->field = f;
                t->min = count;
                t->max = count == 1 ? 19 : 2;
            } else {
                free(v);
                return pm_fail(e, PAIMON_MISUSE, "unsupported pattern letters '%.*s' in timestamp formatter '%s'",
                               (int)count, pattern + i, pattern);
            }
            i = j + 1;
        } else {
            t->lit = pattern + i;
            t->lit_len = 1;
            i++;
        }
        k++;
    }
    /* adjacent value parsing: a variable-width number followed directly by
     * fixed-width ones leaves them their digits */
    for (size_t a = 0; a < k; a++) {
        if (v[a].lit || v[a].min == v[a].max) continue;
        long reserve = 0;
        for (size_t b = a + 1; b < k && !v[b].lit && v[b].min == v[b].max; b++) reserve += (long)v[b].min;
        v[a].reserve = reserve;
    }
    *out = v;
    *n = k;
    return PAIMON_OK;
}

static int parse_with(const tok *toks, size_t nt, const char *text, const char *pattern, int64_t *ms, pm_err *e) {
    fields f;
    memset(&f, 0, sizeof f);
    size_t pos = 0, n = strlen(text);
    for (size_t i = 0; i < nt; i++) {
        const tok *t = &toks[i];
        if (t->lit) {
            if (n - pos < t->lit_len || memcmp(text + pos, t->lit, t->lit_len)) goto bad;
            pos += t->lit_len;
            continue;
        }
        size_t run = digit_run(text + pos), take = run < t->max ? run : t->max;
        if (t->reserve >= 0) {
            long room = (long)run - t->reserve;
            if (room < (long)take) take = room < 0 ? 0 : (size_t)room;
        }
        if (take < t->min) goto bad;
        int64_t val;
        if (!digits_value(text + pos, take, &val)) goto bad;
        if (t->fraction) val = nano_of(text + pos, take);
        else if (t->reduced) val += 2000;
        if (f.has[t->field] && f.v[t->field] != val)
            return pm_fail(e, PAIMON_CORRUPT, "conflicting values in '%s'", text);
        f.has[t->field] = 1;
        f.v[t->field] = val;
        pos += take;
    }
    if (pos < n) return pm_fail(e, PAIMON_CORRUPT, "'%s' has unparsed text at position %zu", text, pos);
    return resolve(&f, text, ms, e);
bad:
    return pm_fail(e, PAIMON_CORRUPT, "'%s' does not match '%s'", text, pattern);
}

int pm_partition_time_parse(const char *text, const char *formatter, int64_t *ms, pm_err *e) {
    if (!formatter) return parse_default(text, ms, e);
    tok *toks;
    size_t n;
    int rc = compile_formatter(formatter, &toks, &n, e);
    if (!rc) rc = parse_with(toks, n, text, formatter, ms, e);
    free(toks);
    return rc;
}

/* ---- the rule ------------------------------------------------------------------ */

typedef struct part {
    const pm_part_stat *st;
    char **values;                /* Java's toString of each value, NULL for null */
    char *sort_key;
} part;

static void part_clear(part *p, size_t nkeys) {
    for (size_t k = 0; p->values && k < nkeys; k++) free(p->values[k]);
    free(p->values);
    free(p->sort_key);
    memset(p, 0, sizeof *p);
}

static void parts_free(part *v, size_t n, size_t nkeys) {
    for (size_t i = 0; v && i < n; i++) part_clear(&v[i], nkeys);
    free(v);
}

static int part_values(const paimon_table *t, part *p, pm_err *e) {
    pm_datum vals[32];
    if (t->n_part > 32) return pm_fail(e, PAIMON_UNSUPPORTED, "more than 32 partition keys");
    int rc = pm_table_partition_decode(t, (pm_bytes){p->st->part, p->st->part_len}, vals, e);
    if (rc) return rc;
    if (!(p->values = calloc(t->n_part, sizeof *p->values))) return pm_nomem(e);
    pm_buf b = {0}, key = {0};
    for (size_t i = 0; !rc && i < t->n_part; i++) {
        b.len = 0;
        if (!vals[i].is_null) {
            if (pm_datum_to_string(t->part_types[i], &vals[i], 1, &b) || pm_buf_cstr(&b) ||
                !(p->values[i] = pm_strdup(b.data ? (char *)b.data : "")))
                rc = pm_nomem(e);
        }
        /* Java sorts by the values joined with ",", null as "null" */
        if (!rc && pm_buf_printf(&key, "%s%s", i ? "," : "", p->values[i] ? p->values[i] : "null")) rc = pm_nomem(e);
    }
    if (!rc && (pm_buf_cstr(&key) || !(p->sort_key = pm_strdup(key.data ? (char *)key.data : "")))) rc = pm_nomem(e);
    pm_buf_free(&b);
    pm_buf_free(&key);
    return rc;
}

/* Java's Pattern.replaceAll("\\$" + key, value) over the keys in order. */
static int substitute(const paimon_table *t, const char *pattern, char *const *values, pm_buf *out, pm_buf *why) {
    pm_buf cur = {0};
    if (pm_buf_printf(&cur, "%s", pattern) || pm_buf_cstr(&cur)) return PAIMON_NOMEM;
    int rc = PAIMON_OK;
    for (size_t k = 0; !rc && k < t->n_part; k++) {
        char needle[256];
        snprintf(needle, sizeof needle, "$%s", t->part_keys[k]);
        if (!strstr((char *)cur.data, needle)) continue;
        if (!values[k]) {
            pm_buf_printf(why, "partition value of '%s' is null", t->part_keys[k]);
            rc = PAIMON_CORRUPT;
            break;
        }
        out->len = 0;
        const char *s = (char *)cur.data, *hit;
        while ((hit = strstr(s, needle))) {
            if (pm_buf_append(out, s, (size_t)(hit - s)) || pm_buf_printf(out, "%s", values[k])) { rc = PAIMON_NOMEM; break; }
            s = hit + strlen(needle);
        }
        if (!rc && (pm_buf_printf(out, "%s", s) || pm_buf_cstr(out))) rc = PAIMON_NOMEM;
        if (!rc) {
            pm_buf tmp = cur;
            cur = *out;
            *out = tmp;
        }
    }
    if (!rc) {
        out->len = 0;
        if (pm_buf_printf(out, "%s", (char *)cur.data) || pm_buf_cstr(out)) rc = PAIMON_NOMEM;
    }
    pm_buf_free(&cur);
    return rc;
}

/* 1 expired, 0 kept, -1 undecided (why says why), -2 out of memory. */
static int expired(const paimon_table *t, const part *p, const char *strategy, const char *formatter,
                   const char *pattern, int64_t expire_before, pm_buf *why) {
    if (!strcmp(strategy, "update-time")) {
        if (!p->st->has_creation_time) {
            pm_buf_printf(why, "no _CREATION_TIME on the partition's files");
            return -1;
        }
        return p->st->last_creation_time < expire_before;
    }
    pm_buf text = {0};
    const char *s = p->values[0];
    if (pattern) {
        int rc = substitute(t, pattern, p->values, &text, why);
        if (rc == PAIMON_NOMEM) { pm_buf_free(&text); return -2; }
        if (rc) { pm_buf_free(&text); return -1; }
        s = (char *)text.data;
    } else if (!s) {
        pm_buf_printf(why, "partition value is null");
        return -1;
    }
    int64_t ms = 0;
    pm_err e;
    pm_err_clear(&e);
    int rc = pm_partition_time_parse(s, formatter, &ms, &e);
    pm_buf_free(&text);
    if (rc == PAIMON_NOMEM) return -2;
    if (rc) {
        pm_buf_printf(why, "cannot parse a time from %s", e.msg);
        return -1;
    }
    return expire_before > ms;
}

static int cmp_part(const void *a, const void *b) {
    const part *x = a, *y = b;
    int c = strcmp(x->sort_key, y->sort_key);
    return c ? c : strcmp(x->st->path, y->st->path);
}

/* Flags over table options over Java's defaults, as the Lua runner's
 * resolve_options. */
static int resolve_options(const paimon_table *t, const pm_part_expire_opts *o, pm_part_expire_result *r, const char **fmt,
                           const char **pat, pm_err *e) {
    int rc;
    if (o->has_expiration) {
        r->expiration_ms = o->expiration_ms;
    } else {
        const char *v = pm_schema_option_or_default(t->schema, "partition.expiration-time");
        if (!v)
            return pm_fail(e, PAIMON_MISUSE, "no expiration time: pass expiration-time or set partition.expiration-time");
        if ((rc = pm_parse_duration_ms(v, &r->expiration_ms, e))) {
            pm_err_prefix(e, "partition.expiration-time");
            return PAIMON_MISUSE;
        }
    }
    if (r->expiration_ms < 0) return pm_fail(e, PAIMON_MISUSE, "the expiration time must not be negative");
    r->strategy = o->strategy ? o->strategy : pm_schema_option_or_default(t->schema, "partition.expiration-strategy");
    if (!r->strategy || (strcmp(r->strategy, "values-time") && strcmp(r->strategy, "update-time")))
        return pm_fail(e, PAIMON_MISUSE, "unknown partition expiration strategy '%s' (values-time or update-time)",
                       r->strategy ? r->strategy : "");
    *fmt = o->formatter ? o->formatter : pm_schema_option_or_default(t->schema, "partition.timestamp-formatter");
    *pat = o->pattern ? o->pattern : pm_schema_option_or_default(t->schema, "partition.timestamp-pattern");
    if (*fmt) {
        tok *toks;
        size_t n;
        if ((rc = compile_formatter(*fmt, &toks, &n, e))) return rc;
        free(toks);
    }
    r->max_expires = o->max_expires;
    if (r->max_expires <= 0) {
        const char *v = pm_schema_option_or_default(t->schema, "partition.expiration-max-num");
        char *end;
        errno = 0;
        long x = v ? strtol(v, &end, 10) : 0;
        if (!v || *end || errno || x < 1 || x > INT32_MAX)
            return pm_fail(e, PAIMON_MISUSE, "partition.expiration-max-num: not a positive integer: %s", v ? v : "");
        r->max_expires = (int)x;
    }
    r->now = o->now_local_ms ? o->now_local_ms : pm_local_now_millis();
    r->expire_before = r->now - r->expiration_ms;
    return PAIMON_OK;
}

static int push_unparseable(pm_part_expire_result *r, const char *path, const pm_buf *why, pm_err *e) {
    pm_part_unparseable *nv = realloc(r->unparseable, (r->n_unparseable + 1) * sizeof *nv);
    if (!nv) return pm_nomem(e);
    r->unparseable = nv;
    nv[r->n_unparseable].path = pm_strdup(path);
    nv[r->n_unparseable].reason = pm_strndup(why->data ? (const char *)why->data : "", why->len);
    if (!nv[r->n_unparseable].path || !nv[r->n_unparseable].reason) {
        free(nv[r->n_unparseable].path);
        free(nv[r->n_unparseable].reason);
        return pm_nomem(e);
    }
    r->n_unparseable++;
    return PAIMON_OK;
}

int pm_expire_partitions(paimon_table *t, const pm_part_expire_opts *o, pm_part_expire_result *r, pm_err *e) {
    memset(r, 0, sizeof *r);
    const char *fmt = NULL, *pat = NULL;
    int rc = resolve_options(t, o, r, &fmt, &pat, e);
    if (rc) return rc;
    if (t->n_part == 0) return pm_fail(e, PAIMON_UNSUPPORTED, "%s: the table is not partitioned", t->root);
    int64_t id = 0;
    pm_snapshot *s = NULL;
    pm_part_stat *stats = NULL;
    size_t n = 0;
    rc = pm_snapshot_latest_id(t->io, t->branch_root, &id, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; id = 0; }
    else if (!rc) rc = pm_snapshot_read(t->io, t->branch_root, id, &s, e);
    if (!rc && s) rc = pm_partition_entries(t, s, NULL, &stats, &n, e);
    pm_snapshot_free(s);
    r->scanned_snapshot_id = id;
    part *v = rc ? NULL : calloc(n ? n : 1, sizeof *v);
    if (!rc && !v) rc = pm_nomem(e);
    size_t k = 0;
    pm_buf why = {0};
    for (size_t i = 0; !rc && i < n; i++) {
        part *p = &v[k];
        p->st = &stats[i];
        if ((rc = part_values(t, p, e))) { k++; break; }
        why.len = 0;
        int x = expired(t, p, r->strategy, fmt, pat, r->expire_before, &why);
        if (x == -2) rc = pm_nomem(e);
        else if (x == -1) rc = push_unparseable(r, stats[i].path, &why, e);
        k++;
        if (x == 1) continue;   /* a candidate: stays in v[0..k) */
        part_clear(p, t->n_part);
        k--;
    }
    r->checked = n;
    r->candidates = k;
    if (!rc) {
        qsort(v, k, sizeof *v, cmp_part);
        size_t take = k < (size_t)r->max_expires ? k : (size_t)r->max_expires;
        r->limited = k > take;
        pm_bytes *exact = calloc(take ? take : 1, sizeof *exact);
        if (!exact) rc = pm_nomem(e);
        for (size_t i = 0; !rc && i < take; i++) exact[i] = (pm_bytes){v[i].st->part, v[i].st->part_len};
        pm_part_select sel = {0, NULL, take, exact, 0};
        if (!rc && take > 0) rc = pm_drop_partitions(t, &sel, &o->drop, &r->drop, e);
        free(exact);
    }
    pm_buf_free(&why);
    parts_free(v, k, t->n_part);
    pm_part_stats_free(stats, n);
    if (rc) pm_part_expire_result_free(r);
    return rc;
}
