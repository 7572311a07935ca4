#include "pm_set.h"
#include <stdlib.h>
#include <string.h>

/* 24 bytes: 32-bit length and ordinal keep the probe arrays of orphan
 * cleaning's name sets as compact as before ordinals existed. */
typedef struct slot { uint64_t hash; const uint8_t *key; uint32_t len, ord; } slot;
/* a removed key: probing continues past it */
static const uint8_t tomb_byte;
#define TOMB (&tomb_byte)

struct pm_set {
    slot *slots;
    size_t cap, used, live;
    size_t ords;                                      /* ordinals handed out */
    pm_arena *keys;
    uint64_t (*hash)(const void *key, size_t len);   /* NULL: pm_hash_bytes */
};

/* 8 bytes per step (file names are 40-100 bytes; FNV's byte loop showed in
 * profiles of orphan cleaning). Only for this process's in-memory tables. */
static inline uint64_t mix(uint64_t h) {
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return h;
}

uint64_t pm_hash_bytes(const void *p, size_t n) {
    const uint8_t *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = (h ^ mix(w)) * 0x9e3779b97f4a7c15ull;
        b += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, b, n);
    h = mix(h ^ mix(w ^ n));
    return h ? h : 1;
}

static inline uint64_t key_hash(const pm_set *s, const void *key, size_t len) {
    if (!s->hash) return pm_hash_bytes(key, len);
    uint64_t h = s->hash(key, len);
    return h ? h : 1;
}

pm_set *pm_set_new_hashed(uint64_t (*hash)(const void *key, size_t len)) {
    pm_set *s = pm_set_new();
    if (s) s->hash = hash;
    return s;
}

pm_set *pm_set_new(void) {
    pm_set *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->cap = 64;
    s->slots = calloc(s->cap, sizeof *s->slots);
    s->keys = pm_arena_new(16384);
    if (!s->slots || !s->keys) { free(s->slots); pm_arena_free(s->keys); free(s); return NULL; }
    return s;
}

void pm_set_free(pm_set *s) {
    if (!s) return;
    free(s->slots);
    pm_arena_free(s->keys);
    free(s);
}

static slot *find(const pm_set *s, uint64_t h, const void *key, size_t len, slot **free_slot) {
    size_t mask = s->cap - 1, i = (size_t)h & mask;
    if (free_slot) *free_slot = NULL;
    for (;;) {
        slot *sl = &s->slots[i];
        if (!sl->key) { if (free_slot && !*free_slot) *free_slot = sl; return NULL; }
        if (sl->key == TOMB) { if (free_slot && !*free_slot) *free_slot = sl; }
        /* a key over 4 GiB never matches: add refuses it, and no 32-bit length equals its length */
        else if (sl->hash == h && sl->len == len && !memcmp(sl->key, key, len)) return sl;
        i = (i + 1) & mask;
    }
}

static int rehash(pm_set *s, size_t ncap) {
    slot *ns = calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < s->cap; i++) {
        slot *o = &s->slots[i];
        if (!o->key || o->key == TOMB) continue;
        size_t j = (size_t)o->hash & (ncap - 1);
        while (ns[j].key) j = (j + 1) & (ncap - 1);
        ns[j] = *o;
    }
    free(s->slots);
    s->slots = ns;
    s->cap = ncap;
    s->used = s->live;
    return 0;
}

static int grow(pm_set *s) { return rehash(s, s->cap * 2); }

/* Probing needs a free slot: the table stays under 3/4 full. */
static int full_after(const pm_set *s, size_t cap, size_t more) { return (s->used + more) * 4 >= cap * 3; }

int pm_set_reserve(pm_set *s, size_t n) {
    if (n > SIZE_MAX / 8 - s->used) return -1;   /* the arithmetic below stays in range */
    size_t cap = s->cap;
    while (full_after(s, cap, n + 1)) {
        if (cap > SIZE_MAX / 4 / sizeof(slot)) return -1;
        cap *= 2;
    }
    return cap == s->cap ? 0 : rehash(s, cap);
}

/* *sl: the key's slot; returns 1 added, 0 present, -1 OOM */
static int add(pm_set *s, const void *key, size_t len, slot **sl) {
    if (len > UINT32_MAX) return -1;
    if (full_after(s, s->cap, 1) && grow(s)) return -1;
    uint64_t h = key_hash(s, key, len);
    slot *fs;
    if ((*sl = find(s, h, key, len, &fs))) return 0;
    if (s->ords >= UINT32_MAX) return -1;
    uint8_t *k = pm_arena_alloc(s->keys, len ? len : 1);
    if (!k) return -1;
    if (len) memcpy(k, key, len);
    if (fs->key != TOMB) s->used++;
    fs->key = k;
    fs->len = (uint32_t)len;
    fs->ord = (uint32_t)s->ords++;
    fs->hash = h;
    s->live++;
    *sl = fs;
    return 1;
}

int pm_set_add(pm_set *s, const void *key, size_t len) {
    slot *sl;
    return add(s, key, len, &sl);
}

long pm_set_add_slot(pm_set *s, const void *key, size_t len) {
    slot *sl;
    return add(s, key, len, &sl) < 0 ? -1 : (long)(sl - s->slots);
}

long pm_set_add_ordinal(pm_set *s, const void *key, size_t len, int *added) {
    slot *sl;
    int a = add(s, key, len, &sl);
    if (added) *added = a > 0;
    return a < 0 ? -1 : (long)sl->ord;
}

long pm_set_ordinal(const pm_set *s, const void *key, size_t len) {
    slot *sl = find(s, key_hash(s, key, len), key, len, NULL);
    return sl ? (long)sl->ord : -1;
}

size_t pm_set_ordinals(const pm_set *s) { return s->ords; }

int pm_set_contains(const pm_set *s, const void *key, size_t len) {
    return find(s, key_hash(s, key, len), key, len, NULL) != NULL;
}

long pm_set_slot(const pm_set *s, const void *key, size_t len) {
    slot *sl = find(s, key_hash(s, key, len), key, len, NULL);
    return sl ? (long)(sl - s->slots) : -1;
}

size_t pm_set_slots(const pm_set *s) { return s->cap; }

size_t pm_set_slots_like(const pm_set *s, const void *key, size_t len, long *out, size_t cap) {
    uint64_t h = key_hash(s, key, len);
    size_t mask = s->cap - 1, i = (size_t)h & mask, n = 0;
    /* the whole probe run: the key, if present, is somewhere in it */
    for (;;) {
        const slot *sl = &s->slots[i];
        if (!sl->key) return n;
        if (sl->key != TOMB && sl->hash == h && sl->len == len) {
            if (n < cap) out[n] = (long)i;
            n++;
        }
        i = (i + 1) & mask;
    }
}

int pm_set_remove(pm_set *s, const void *key, size_t len) {
    slot *sl = find(s, key_hash(s, key, len), key, len, NULL);
    if (!sl) return 0;
    sl->key = TOMB;
    s->live--;
    return 1;
}

size_t pm_set_size(const pm_set *s) { return s->live; }
