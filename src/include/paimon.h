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
#define PAIMON_UNCERTAIN   10  /* may or may not have taken effect (e.g. a snapshot
                                  created whose directory sync failed) */
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

/* ---- maintenance ------------------------------------------------------
 * The operations of expire.lua, remove_orphan_files.lua, verify.lua and
 * drop_partition.lua, with the same safety rules (the core enforces them,
 * whoever calls). Options are key/value text named like the scripts'
 * flags; a key the operation does not know is PAIMON_MISUSE (a misspelt
 * option never falls back to a default). On failure the message is
 * paimon_table_errmsg(t) and *out is NULL.
 *
 *   expire_snapshots:    retain-min, retain-max, max-deletes, until (exclusive
 *                        end id), older-than (a duration: "1 h", "7d", "90s";
 *                        now minus it) or older-than-ms (epoch ms), threads
 *                        (default 4), dry-run, clean-empty-directories, now-ms
 *   remove_orphan_files: older-than / older-than-ms (default now - 1 day;
 *                        a cut-off less than 1 h ago is refused unless
 *                        allow-young-cutoff=true, and the result's
 *                        floor_overridden records it), threads, dry-run, now-ms
 *   verify:              all-snapshots, threads (read-only)
 *   drop_partitions:     partition ("k=v[,k2=v2]", repeat for several),
 *                        max-attempts, commit-user, dry-run
 * Booleans are "true" / "false"; integers are decimal. */
typedef struct paimon_options paimon_options;
typedef struct paimon_result paimon_result;

PAIMON_API paimon_options *paimon_options_new(void);          /* NULL: out of memory */
/* Copies both strings; a second value replaces the first, except for
 * "partition", whose values add up. */
PAIMON_API int paimon_options_set(paimon_options *o, const char *key, const char *value);
PAIMON_API void paimon_options_free(paimon_options *o);       /* NULL-safe */

/* o may be NULL (every default). The table's branch (paimon_table_open)
 * is the one expired / dropped on; orphan cleaning and verify cover every
 * branch. */
PAIMON_API int paimon_expire_snapshots(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_remove_orphan_files(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_verify(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_drop_partitions(paimon_table *t, const paimon_options *o, paimon_result **out);

/* The result as one JSON object, the keys of the Lua methods' result
 * tables (t:expire_snapshots() ...; both faces render one result): e.g.
 * "expired", "deleted": {"data": n, ...}, "bytes", "files", "paths" (dry
 * run), "failures", "plan" (drop_partitions: what the Lua result has but
 * the typed partition values and the BinaryRow bytes). Valid until
 * paimon_result_free. */
PAIMON_API const char *paimon_result_json(const paimon_result *r);
/* A value by dotted path ("expired", "deleted.data", "plan.end",
 * "range.0"): integers, booleans (0 / 1) and arrays (their length).
 * PAIMON_NOTFOUND if absent, PAIMON_MISUSE if it is not one of those. */
PAIMON_API int paimon_result_int(const paimon_result *r, const char *path, int64_t *out);
PAIMON_API const char *paimon_result_str(const paimon_result *r, const char *path);  /* NULL: no such string */
PAIMON_API void paimon_result_free(paimon_result *r);         /* NULL-safe */

#ifdef __cplusplus
}
#endif
#endif
