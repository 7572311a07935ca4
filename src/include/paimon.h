/*
 * paimon.h -- the public C API of paimon-lua's core.
 *
 * SQLite-style: opaque handles, integer result codes, error text kept on the
 * handle (or returned through an out-parameter when no handle exists yet).
 * Nothing here depends on Lua.
 */
#ifndef PAIMON_H
#define PAIMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PAIMON_API
#define PAIMON_API __attribute__((visibility("default")))
#endif

#define PAIMON_VERSION "0.1.0"

/* Result codes. */
#define PAIMON_OK          0
#define PAIMON_ERROR       1   /* generic failure */
#define PAIMON_IO          2   /* an I/O operation failed */
#define PAIMON_CORRUPT     3   /* a file could not be understood */
#define PAIMON_NOTFOUND    4   /* a file, snapshot, tag, branch ... is missing */
#define PAIMON_EXISTS      5   /* create-without-replace found the target */
#define PAIMON_UNSUPPORTED 6   /* valid Paimon, not implemented here */
#define PAIMON_CONFLICT    7   /* concurrent change; commit aborted */
#define PAIMON_MISUSE      8   /* bad argument from the caller */
#define PAIMON_NOMEM       9
#define PAIMON_DONE        100 /* iterator exhausted (not an error) */

PAIMON_API const char *paimon_errstr(int code);
PAIMON_API const char *paimon_version(void);

/* ---- tables ---------------------------------------------------------- */
typedef struct paimon_table paimon_table;
typedef struct paimon_snapshot paimon_snapshot;
typedef struct paimon_file_iter paimon_file_iter;

/* Open the table at `path` (local path or file:// URI); `branch` NULL or
 * "main" for the main branch. On failure *out is NULL and, when errmsg is not
 * NULL, *errmsg receives a malloc'd message (free with paimon_free). */
PAIMON_API int paimon_table_open(const char *path, const char *branch,
                                 paimon_table **out, char **errmsg);
PAIMON_API void paimon_table_close(paimon_table *t);          /* NULL-safe */
PAIMON_API const char *paimon_table_errmsg(const paimon_table *t);
PAIMON_API const char *paimon_table_path(const paimon_table *t);

/* Latest / earliest snapshot id; PAIMON_NOTFOUND when the table has none. */
PAIMON_API int paimon_latest_snapshot_id(paimon_table *t, int64_t *id);
PAIMON_API int paimon_earliest_snapshot_id(paimon_table *t, int64_t *id);
PAIMON_API int paimon_snapshot_load(paimon_table *t, int64_t id, paimon_snapshot **out);
PAIMON_API void paimon_snapshot_free(paimon_snapshot *s);     /* NULL-safe */
PAIMON_API int64_t paimon_snapshot_id(const paimon_snapshot *s);
PAIMON_API int64_t paimon_snapshot_time_millis(const paimon_snapshot *s);
PAIMON_API int64_t paimon_snapshot_total_record_count(const paimon_snapshot *s);
PAIMON_API const char *paimon_snapshot_commit_kind(const paimon_snapshot *s);

/* A data file of a snapshot's live set. Strings stay valid until the next
 * call to paimon_file_iter_next. */
typedef struct paimon_file_info {
    const char *partition;     /* rendered partition path "k=v/..." ("" unpartitioned) */
    int32_t bucket;
    const char *file_path;     /* relative to the table directory unless external */
    const char *file_name;
    int64_t record_count;
    int64_t file_size;
    int32_t level;
    int64_t schema_id;
} paimon_file_info;

PAIMON_API int paimon_file_iter_open(paimon_table *t, const paimon_snapshot *s,
                                     paimon_file_iter **out);
/* PAIMON_OK with *info filled, PAIMON_DONE at the end, or an error code. */
PAIMON_API int paimon_file_iter_next(paimon_file_iter *it, paimon_file_info *info);
PAIMON_API void paimon_file_iter_close(paimon_file_iter *it); /* NULL-safe */

PAIMON_API void paimon_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
