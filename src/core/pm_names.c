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

/* 1 + the value of a lowercase hex digit; 0 for anything else (a table:
 * this runs for every name orphan cleaning lists or reads) */
static const uint8_t hexval[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
    ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16};

/* 36 chars of a canonical lowercase UUID into 16 bytes; 0, or -1. */
static int parse_uuid(const char *s, uint8_t out[16]) {
    if (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-') return -1;
    static const uint8_t at[16] = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};
    unsigned bad = 0;
    for (size_t i = 0; i < 16; i++) {
        unsigned hi = hexval[(uint8_t)s[at[i]]], lo = hexval[(uint8_t)s[at[i] + 1]];
        bad |= !hi | !lo;
        out[i] = (uint8_t)((hi - 1) << 4 | ((lo - 1) & 15));
    }
    return bad ? -1 : 0;
}

static size_t put_varint(uint8_t *p, uint64_t v) {
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

/* The prefix name starts with, by its first letter: -1 none. */
static int prefix_of(const char *name, size_t len) {
    int p;
    switch (name[0]) {
    case 'd': p = 0; break;
    case 'c': p = 1; break;
    case 'm': p = len > 14 && name[9] == 'l' ? 3 : 2; break;
    case 'i': p = len > 15 && name[6] == 'm' ? 4 : 5; break;
    case 's': p = 6; break;
    default: return -1;
    }
    return memcmp(name, prefixes[p].s, prefixes[p].len) ? -1 : p;
}

const void *pm_name_key(const char *name, size_t len, uint8_t buf[PM_NAME_KEY_MAX], size_t *key_len) {
    *key_len = len;
    /* shortest canonical name: "data-" + 36 + "-0" */
    if (len < 5 + 36 + 2) return name;
    int p = prefix_of(name, len);
    if (p < 0) return name;
    size_t pl = prefixes[p].len;
    if (len < pl + 38) return name;
    const char *u = name + pl, *end = name + len;
    if (u[36] != '-' || parse_uuid(u, buf + 2)) return name;
    /* the counter: "0", or up to 19 digits without a leading zero (fits 64 bits) */
    const char *d = u + 37;
    size_t nd = 0;
    uint64_t counter = 0;
    while (d + nd < end && d[nd] >= '0' && d[nd] <= '9') {
        counter = counter * 10 + (uint64_t)(d[nd] - '0');
        if (++nd > 19) return name;
    }
    if (!nd || (nd > 1 && d[0] == '0')) return name;
    const char *x = d + nd;
    size_t xl = (size_t)(end - x);
    for (size_t k = 0; k < N_EXTS; k++) {
        if (exts[k].len != xl || memcmp(x, exts[k].s, xl)) continue;
        buf[0] = 0;
        buf[1] = (uint8_t)(1 + (size_t)p * N_EXTS + k);
        *key_len = 18 + put_varint(buf + 18, counter);
        return buf;
    }
    return name;
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
    size_t vl = put_varint(out, (uint64_t)ord);
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
