/* A set of byte strings (open addressing, linear probing; keys copied into
 * an arena owned by the set). Used for file identifiers during scans,
 * expiration and orphan cleaning. Lookups (contains, slot) do not modify
 * the set: any number of threads may run them while nobody adds or
 * removes. */
#ifndef PM_SET_H
#define PM_SET_H
#include "pm_common.h"

typedef struct pm_set pm_set;
pm_set *pm_set_new(void);
void pm_set_free(pm_set *s);                                  /* NULL-safe */
/* 1 if added, 0 if already present, -1 on OOM (or a key over 4 GiB). */
int pm_set_add(pm_set *s, const void *key, size_t len);
int pm_set_contains(const pm_set *s, const void *key, size_t len);
/* Remove; 1 if it was present. (The key's bytes stay in the arena.) */
int pm_set_remove(pm_set *s, const void *key, size_t len);
size_t pm_set_size(const pm_set *s);
/* Slot number of a present key in [0, pm_set_slots(s)), or -1: a dense
 * index for side arrays (flags per key). Stable until the next add or
 * remove. */
long pm_set_slot(const pm_set *s, const void *key, size_t len);
size_t pm_set_slots(const pm_set *s);
/* Room for n more keys: the next n adds do not grow (slots stay put).
 * 0, or -1 on OOM. */
int pm_set_reserve(pm_set *s, size_t n);
/* Add (if absent) and return the key's slot, or -1 on OOM. */
long pm_set_add_slot(pm_set *s, const void *key, size_t len);
/* Every slot whose key has the same hash and length as `key`, without
 * comparing bytes: the key's own slot if it is present, and any key that
 * merely collides with it (64-bit hash: practically never). For callers
 * to whom an extra match only errs on the safe side (orphan cleaning marks
 * names as used: a collision keeps a file, never deletes one) and who want
 * to skip the key comparison's cache miss. Writes up to cap slots to out,
 * returns how many there are (more than cap: call pm_set_slot). */
size_t pm_set_slots_like(const pm_set *s, const void *key, size_t len, long *out, size_t cap);
/* Ordinals: the n-th key ever added gets ordinal n (0-based); removing a
 * key does not renumber the others, and adding it again gives it a new
 * ordinal. A dense index that, unlike a slot, survives growth: side arrays
 * indexed by ordinal make the set a map (pm_set_ordinals() entries). */
/* Add (if absent) and return the key's ordinal, or -1 on OOM; *added (may
 * be NULL) = 1 if the key is new. */
long pm_set_add_ordinal(pm_set *s, const void *key, size_t len, int *added);
/* Ordinal of a present key, or -1. */
long pm_set_ordinal(const pm_set *s, const void *key, size_t len);
/* Ordinals handed out so far (one past the largest). */
size_t pm_set_ordinals(const pm_set *s);
/* The set's hash of a byte string (never 0): for other in-memory tables
 * of this process, never for anything stored. */
uint64_t pm_hash_bytes(const void *p, size_t n);
/* A set using `hash` instead of the built-in one (tests force collisions). */
pm_set *pm_set_new_hashed(uint64_t (*hash)(const void *key, size_t len));
#endif
