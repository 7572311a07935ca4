#include "pm_names.h"

#include <stdlib.h>

#include "pm_set.h"

/* The shapes Paimon writes (docs/paimon-format.md, file naming); a longer
 * prefix never matches where a shorter one does, since a UUID follows each. */
typedef struct shape { const char *s; uint8_t len; } shape;
#define SHAPE(x) {x, sizeof x - 1}
static const shape prefixes[] = {SHAPE("data-"), SHAPE("changelog-"), SHAPE("manifest-"), SHAPE("manifest-list-"),
                                 SHAPE("index-manifest-"), SHAPE("index-"), SHAPE("stat-")};
static const shape exts[] = {SHAPE(""), SHAPE(".parquet"), SHAPE(".orc"), SHAPE(".avro"),
                             SHAPE(".csv"), SHAPE(".json"), SHAPE(".lance"), SHAPE(".blob")};
#define N_PREFIXES (sizeof prefixes / sizeof *prefixes)
#define N_EXTS (sizeof exts / sizeof *exts)

/* The value of a lowercase hex digit; 0x10 for anything else (a table:
 * this runs for every name orphan cleaning lists or reads). */
#define BAD 0x10
#define ROW16 BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD
static const uint8_t hexval[256] = {
    ROW16, ROW16, ROW16,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, BAD, BAD, BAD, BAD, BAD, BAD,                /* '0'-'9' */
    ROW16, ROW16,
    BAD, 10, 11, 12, 13, 14, 15, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD, BAD,  /* 'a'-'f' */
    ROW16, ROW16, ROW16, ROW16, ROW16, ROW16, ROW16, ROW16, ROW16};   /* 0x70-0xff */

/* 36 chars of a canonical lowercase UUID into 16 bytes; 0, or -1.
 * Unrolled: the offsets of the digit pairs are fixed. */
static int parse_uuid(const char *str, uint8_t out[16]) {
    const unsigned char *s = (const unsigned char *)str;
    if (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') return -1;
    unsigned bad = 0, hi, lo;
#define PAIR(i, at) (hi = hexval[s[at]], lo = hexval[s[(at) + 1]], bad |= hi | lo, out[i] = (uint8_t)(hi << 4 | lo))
    PAIR(0, 0); PAIR(1, 2); PAIR(2, 4); PAIR(3, 6); PAIR(4, 9); PAIR(5, 11); PAIR(6, 14); PAIR(7, 16);
    PAIR(8, 19); PAIR(9, 21); PAIR(10, 24); PAIR(11, 26); PAIR(12, 28); PAIR(13, 30); PAIR(14, 32); PAIR(15, 34);
#undef PAIR
    return bad & BAD ? -1 : 0;
}

size_t pm_varint_put(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) { p[n++] = (uint8_t)(v | 0x80); v >>= 7; }
    p[n++] = (uint8_t)v;
    return n;
}

/* A canonical varint (no redundant trailing zero groups) filling p[0, n)
 * exactly; 0, or -1. */
static int get_varint(const uint8_t *p, size_t n, uint64_t *v) {
    uint64_t x = 0;
    for (size_t i = 0; i < n && i < 10; i++) {
        if (i == 9 && p[i] > 1) return -1;   /* past 64 bits */
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (i + 1 != n || (i > 0 && p[i] == 0)) return -1;
            *v = x;
            return 0;
        }
    }
    return -1;
}

size_t pm_varint_read(const uint8_t *p, uint64_t *v) {
    uint64_t x = 0;
    size_t i = 0;
    do x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    while (p[i++] & 0x80);
    *v = x;
    return i;
}

/* The prefix name starts with (name has at least 43 bytes): -1 none.
 * Fixed-size compares, by the first letter. */
static int prefix_of(const char *n) {
    switch (n[0]) {
    case 'd': return !memcmp(n, "data-", 5) ? 0 : -1;
    case 'c': return !memcmp(n, "changelog-", 10) ? 1 : -1;
    case 'm':
        if (memcmp(n, "manifest-", 9)) return -1;
        return !memcmp(n + 9, "list-", 5) ? 3 : 2;
    case 'i':
        if (memcmp(n, "index-", 6)) return -1;
        return !memcmp(n + 6, "manifest-", 9) ? 4 : 5;
    case 's': return !memcmp(n, "stat-", 5) ? 6 : -1;
    default: return -1;
    }
}

/* The extension x[0, xl): its index in exts, or -1. */
static int ext_of(const char *x, size_t xl) {
    switch (xl) {
    case 0: return 0;
    case 4: return !memcmp(x, ".orc", 4) ? 2 : !memcmp(x, ".csv", 4) ? 4 : -1;
    case 5: return !memcmp(x, ".avro", 5) ? 3 : !memcmp(x, ".json", 5) ? 5 : !memcmp(x, ".blob", 5) ? 7 : -1;
    case 6: return !memcmp(x, ".lance", 6) ? 6 : -1;
    case 8: return !memcmp(x, ".parquet", 8) ? 1 : -1;
    default: return -1;
    }
}

const void *pm_name_key(const char *name, size_t len, uint8_t buf[PM_NAME_KEY_MAX], size_t *key_len) {
    *key_len = len;
    /* shortest canonical name: "data-" + 36 + "-0" */
    if (len < 5 + 36 + 2) return name;
    int p = prefix_of(name);
    if (p < 0) return name;
    size_t pl = prefixes[p].len;
    if (len < pl + 38) return name;
    const char *u = name + pl, *end = name + len;
    if (u[36] != '-' || parse_uuid(u, buf + 2)) return name;
    /* the counter: "0", or up to 19 digits without a leading zero (fits 64 bits) */
    const char *d = u + 37;
    size_t nd = 0;
    uint64_t counter = 0;
    while (d + nd < end && (unsigned)(d[nd] - '0') < 10) {
        counter = counter * 10 + (uint64_t)(d[nd] - '0');
        if (++nd > 19) return name;
    }
    if (!nd || (nd > 1 && d[0] == '0')) return name;
    int x = ext_of(d + nd, (size_t)(end - d - nd));
    if (x < 0) return name;
    buf[0] = 0;
    buf[1] = (uint8_t)(1 + (size_t)p * N_EXTS + (size_t)x);
    *key_len = 18 + pm_varint_put(buf + 18, counter);
    return buf;
}

int pm_name_unkey(const void *key, size_t len, pm_buf *out) {
    const uint8_t *k = key;
    if (!len || k[0] != 0) return pm_buf_append(out, key, len);
    uint64_t counter;
    unsigned tag = len > 18 ? k[1] : 0;
    if (tag < 1 || tag > N_PREFIXES * N_EXTS || get_varint(k + 18, len - 18, &counter)) return PAIMON_CORRUPT;
    static const char hex[] = "0123456789abcdef";
    char s[PM_NAME_KEY_MAX + 64 + 40], *o = s;
    const shape *pre = &prefixes[(tag - 1) / N_EXTS], *ext = &exts[(tag - 1) % N_EXTS];
    memcpy(o, pre->s, pre->len);
    o += pre->len;
    for (size_t i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) *o++ = '-';
        *o++ = hex[k[2 + i] >> 4];
        *o++ = hex[k[2 + i] & 15];
    }
    *o++ = '-';
    char digits[20];
    size_t nd = 0;
    do { digits[nd++] = (char)('0' + counter % 10); counter /= 10; } while (counter);
    /* a 20-digit counter is no key pm_name_key makes */
    if (nd > 19) return PAIMON_CORRUPT;
    while (nd) *o++ = digits[--nd];
    memcpy(o, ext->s, ext->len);
    o += ext->len;
    return pm_buf_append(out, s, (size_t)(o - s));
}

/* ---- path sets ----------------------------------------------------------- */

struct pm_pathset {
    pm_set *dirs;    /* directory parts, by ordinal */
    pm_set *keys;    /* varint(directory ordinal) + name key */
};

pm_pathset *pm_pathset_new(void) {
    pm_pathset *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->dirs = pm_set_new();
    s->keys = pm_set_new();
    if (!s->dirs || !s->keys) { pm_pathset_free(s); return NULL; }
    return s;
}

void pm_pathset_free(pm_pathset *s) {
    if (!s) return;
    pm_set_free(s->dirs);
    pm_set_free(s->keys);
    free(s);
}

/* The directory part of a path (up to the last '/') as its key in dirs;
 * *name_off: where the name starts. A path without '/' is all name: its
 * directory is the one key no directory part can be ("\0": paths hold no
 * NUL), so "x" and "/x" stay apart. */
static const char *dir_key(const char *path, size_t len, size_t *dl, size_t *name_off) {
    for (size_t i = len; i > 0; i--)
        if (path[i - 1] == '/') { *name_off = i; *dl = i - 1; return path; }
    *name_off = 0;
    *dl = 1;
    return "";
}

/* varint(directory ordinal) + the name's key, in small (or a malloc'd
 * *heap for a long raw name); NULL on OOM. */
static const uint8_t *path_key(const char *name, size_t nl, long ord, uint8_t *small, size_t cap, uint8_t **heap,
                               size_t *klen) {
    uint8_t nbuf[PM_NAME_KEY_MAX];
    size_t nk;
    const void *k = pm_name_key(name, nl, nbuf, &nk);
    uint8_t *out = small;
    *heap = NULL;
    if (10 + nk > cap && !(out = *heap = malloc(10 + nk))) return NULL;
    size_t vl = pm_varint_put(out, (uint64_t)ord);
    memcpy(out + vl, k, nk);
    *klen = vl + nk;
    return out;
}

int pm_pathset_add(pm_pathset *s, const void *pathv, size_t len) {
    const char *path = pathv;
    size_t off, dl;
    const char *dir = dir_key(path, len, &dl, &off);
    long ord = pm_set_add_ordinal(s->dirs, dir, dl, NULL);
    if (ord < 0) return -1;
    uint8_t small[128], *heap;
    size_t kl;
    const uint8_t *k = path_key(path + off, len - off, ord, small, sizeof small, &heap, &kl);
    if (!k) return -1;
    int rc = pm_set_add(s->keys, k, kl);
    free(heap);
    return rc;
}

/* -1 on OOM: callers that protect what a set holds keep the file. */
int pm_pathset_contains(const pm_pathset *s, const void *pathv, size_t len) {
    const char *path = pathv;
    size_t off, dl;
    const char *dir = dir_key(path, len, &dl, &off);
    long ord = pm_set_ordinal(s->dirs, dir, dl);
    if (ord < 0) return 0;
    uint8_t small[128], *heap;
    size_t kl;
    const uint8_t *k = path_key(path + off, len - off, ord, small, sizeof small, &heap, &kl);
    if (!k) return -1;
    int rc = pm_set_contains(s->keys, k, kl);
    free(heap);
    return rc;
}

size_t pm_pathset_size(const pm_pathset *s) { return pm_set_size(s->keys); }
