/* A set of byte strings (open addressing, FNV-1a). Used for file
 * identifiers during scans, expiration and orphan cleaning. */
#ifndef PM_SET_H
#define PM_SET_H
#include "pm_common.h"

typedef struct pm_set pm_set;
pm_set *pm_set_new(void);
void pm_set_free(pm_set *s);                                  /* NULL-safe */
/* 1 if added, 0 if already present, -1 on OOM. */
int pm_set_add(pm_set *s, const void *key, size_t len);
int pm_set_contains(const pm_set *s, const void *key, size_t len);
/* Remove; 1 if it was present. */
int pm_set_remove(pm_set *s, const void *key, size_t len);
size_t pm_set_size(const pm_set *s);
#endif
