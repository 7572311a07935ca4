/* Compact keys for Paimon's fixed-shape file names, and sets of paths that
 * store them. Orphan cleaning and expiration keep millions of names
 * (data-<uuid>-<n>.parquet: 50 bytes); as a key such a name is 19-28 bytes.
 *
 * Key of a name: a name of exactly canonical shape -- one of the known
 * prefixes, a lowercase 8-4-4-4-12 hex UUID, '-', a decimal counter without
 * leading zeros (at most 19 digits), one of the known extensions -- is
 * packed as 0x00, a tag byte (prefix and extension), the 16 UUID bytes and
 * the counter as a LEB128 varint. Any other name is its key, unchanged: a
 * file name never holds a NUL byte, so no name's key starts with 0x00 and
 * two different names never have the same key. */
#ifndef PM_NAMES_H
#define PM_NAMES_H
#include "pm_common.h"

/* The longest packed key: 0x00, tag, 16 UUID bytes, a 10-byte varint. */
#define PM_NAME_KEY_MAX 28

/* The key of name[0, len): buf (packed, *key_len bytes) when the name has a
 * canonical shape, else name itself (*key_len = len). */
const void *pm_name_key(const char *name, size_t len, uint8_t buf[PM_NAME_KEY_MAX], size_t *key_len);
/* Append the exact name of a key to out (no NUL). PAIMON_OK, PAIMON_NOMEM,
 * or PAIMON_CORRUPT for bytes no pm_name_key made (out unchanged). */
int pm_name_unkey(const void *key, size_t len, pm_buf *out);

/* LEB128 varints: write v at p (up to 10 bytes), the bytes written; read
 * one that pm_varint_put wrote (no checks: for this process's own
 * bytes), the bytes read. */
size_t pm_varint_put(uint8_t *p, uint64_t v);
size_t pm_varint_read(const uint8_t *p, uint64_t *v);

/* A set of paths: the directory part of each (everything before the last
 * '/') interned once, the name as its key. Lookups do not modify the set
 * (any number of threads while nobody adds). */
typedef struct pm_pathset pm_pathset;
pm_pathset *pm_pathset_new(void);
void pm_pathset_free(pm_pathset *s);                                   /* NULL-safe */
/* 1 added, 0 already present, -1 on OOM. */
int pm_pathset_add(pm_pathset *s, const void *path, size_t len);
/* 1 present, 0 absent, -1 on OOM (treat as present: keep the file). */
int pm_pathset_contains(const pm_pathset *s, const void *path, size_t len);
size_t pm_pathset_size(const pm_pathset *s);
#endif
