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
#define PAIMON_UNCERTAIN   10  /* may or may not have taken effect: a commit whose
                                  snapshot may exist (an object store's answer lost,
                                  a 412 whose key reads as missing, a directory sync
                                  failed). Every file it may reference is kept; not a
                                  conflict (nothing proven unpublished). Re-run the
                                  same commit (user, identifier) to learn the outcome */
#define PAIMON_INTERRUPT   11  /* paimon_interrupt() stopped it at a consistent point:
                                  what was done is whole (the message says what is
                                  left); run it again to finish */
#define PAIMON_DONE        100 /* iterator exhausted (not an error) */

PAIMON_API const char *paimon_errstr(int code);

/* Interruption (SIGINT/SIGTERM in paimon-lua): a long destructive operation
 * (snapshot expiration, orphan cleaning) checks the flag paimon_interrupt()
 * sets between batches of deletions and stops at the next consistent point
 * with PAIMON_INTERRUPT. Both are async-signal-safe (a signal handler may
 * call them). paimon_interruptible() is nonzero while such an operation
 * runs in this process: a handler can let any other work die at once.
 * paimon_interrupt() while none runs does nothing; the flag is cleared
 * when the last interruptible operation ends. */
PAIMON_API void paimon_interrupt(void);
PAIMON_API int paimon_interruptible(void);
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
/* paimon_table_open for a local path or a URI (file://, s3://bucket/key,
 * s3a://bucket/key) with FileIO options: NULL or a NULL-terminated array
 * key, value, key, value, ..., NULL, with Paimon's names (s3.endpoint,
 * s3.access-key, s3.secret-key, s3.region, s3.path.style.access). The
 * strings are copied. The table keeps them: every operation on it (reads,
 * writes, commits, the maintenance functions below, and the other branches
 * orphan cleaning and verify visit) goes through the one FileIO opened
 * with them. A key in a FileIO's namespace that it does not know (a
 * misspelt "s3.endpiont") is PAIMON_MISUSE; other keys are allowed.
 * Credentials given here never appear in messages. paimon_table_path
 * gives the URI as given (s3a:// stays s3a://). */
PAIMON_API int paimon_table_open_v2(const char *uri, const char *branch, const char *const *options,
                                    paimon_table **out, char **errmsg);
PAIMON_API void paimon_table_close(paimon_table *t);          /* NULL-safe */

/* The tables below `uri` in Java Paimon's filesystem catalog layout
 * (WAREHOUSE/<database>.db/<table>/, a table being a directory with
 * schema/schema-N): uri is a table (just it), a database directory
 * (<name>.db: its tables) or a warehouse (every <name>.db's tables).
 * database_pattern and table_pattern (NULL: all) are shell globs on the
 * database name (without .db) and the table name. cb is called per table,
 * sorted by database then table, with the database ("" for a table whose
 * parent is not <name>.db), the table name and its URI; a nonzero return
 * stops the walk and is returned. `kind` (may be NULL) gets "table",
 * "database" or "warehouse" (static). Symlinks and names starting with
 * '.' are never looked into. options: as paimon_table_open_v2. */
typedef int (*paimon_table_cb)(void *ud, const char *database, const char *table, const char *uri);
PAIMON_API int paimon_list_tables(const char *uri, const char *const *options, const char *database_pattern,
                                  const char *table_pattern, paimon_table_cb cb, void *ud, const char **kind,
                                  char **errmsg);
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
 *   create_tag:          tag (its name), snapshot (id) or timestamp-ms (the
 *                        latest snapshot at or before it; neither: the
 *                        latest), time-retained (a duration), dry-run, now-ms;
 *                        an existing tag is PAIMON_EXISTS
 *   delete_tags:         tag (repeat for several), threads, dry-run: the tag
 *                        files and the files only those tags held
 *   rename_tag:          tag, new-name
 *   expire_tags:         older-than / older-than-ms, num-retained-max,
 *                        threads, dry-run, now-ms: Java's rule (TagTimeExpire,
 *                        tag.num-retained-max); "candidates" lists every tag
 *   auto_tags:           dry-run, threads, now-ms: Java's TagAutoCreation by
 *                        the table's tag.automatic-creation (process-time,
 *                        watermark, batch) and tag.* options: "created",
 *                        "existing" (the period's name was taken: left
 *                        alone), "expired" (automatic tags over
 *                        tag.num-retained-max, deleted as delete_tags)
 *   rollback:            exactly one of to-snapshot (id), to-tag (name),
 *                        to-timestamp (epoch ms: the latest snapshot at or
 *                        before it), to-watermark (Java's
 *                        rollback_to_watermark: the snapshot its
 *                        earlierOrEqualWatermark finds); as-latest (a new
 *                        snapshot with the target's content, nothing
 *                        deleted), purge-files (destructive: also delete
 *                        the data files, manifests and index files only the
 *                        removed snapshots, tags and changelogs used;
 *                        without it only those metadata files go, as in
 *                        Java 1.2+, and the rest is left for
 *                        remove_orphan_files), dry-run, threads,
 *                        commit-user (as-latest)
 *   purge_files:         dry-run, threads, commit-user: Java's purge_files,
 *                        the table on main emptied but for its schemas:
 *                        every branch, tag, consumer and long-lived
 *                        changelog goes, a truncating snapshot latest+1
 *                        (OVERWRITE) stays alone, and every file nothing
 *                        then needs is deleted ("paths" in a dry run)
 *   consumers:           (none) the consumers, id / next_snapshot / mtime
 *   reset_consumer:      id, next-snapshot
 *   delete_consumer:     id
 *   expire_consumers:    expiration (a duration; default the table's
 *                        consumer.expiration-time), dry-run, now-ms
 *   expire_changelogs:   retain-min, retain-max, older-than / older-than-ms,
 *                        max-deletes, threads, dry-run, now-ms: the long-lived
 *                        changelogs (changelog/) by Java's ExpireChangelogImpl
 *                        (defaults: changelog.num-retained.*, changelog.time-
 *                        retained, else the snapshot.* ones)
 *   branches:            (none) every branch: name, create_time (epoch ms),
 *                        earliest_snapshot / latest_snapshot (0: none), tags
 *   create_branch:       branch (its name), from-tag (copy the tag, its
 *                        snapshot and schemas 0..its schema, as Java's
 *                        createBranch(name, tag); without: schemas
 *                        0..latest), dry-run; an existing branch is
 *                        PAIMON_EXISTS
 *   delete_branch:       branch, threads, dry-run: the branch directory and
 *                        the files only it held (never what main, tags or
 *                        other branches need; an unreadable reference
 *                        refuses); not the branch the table is opened on
 *   fast_forward:        branch, dry-run: Java's fastForward into the
 *                        table's branch: its snapshots and tags from the
 *                        branch's earliest snapshot on are replaced by the
 *                        branch's, with the branch's schemas; "dropped_paths"
 *                        and "taken_paths" are the plan. Data files are not
 *                        deleted (orphan cleaning finds them, as in Java)
 * Booleans are "true" / "false"; integers are decimal. FileIO options
 * (s3.endpoint, credentials, ...) are not operation options: they are
 * given once to paimon_table_open_v2 and every operation on the table
 * uses them. */
typedef struct paimon_options paimon_options;
typedef struct paimon_result paimon_result;

PAIMON_API paimon_options *paimon_options_new(void);          /* NULL: out of memory */
/* Copies both strings; a second value replaces the first, except for
 * "partition" and "tag", whose values add up. */
PAIMON_API int paimon_options_set(paimon_options *o, const char *key, const char *value);
PAIMON_API void paimon_options_free(paimon_options *o);       /* NULL-safe */

/* o may be NULL (every default). The table's branch (paimon_table_open)
 * is the one expired / dropped on; orphan cleaning and verify cover every
 * branch. */
PAIMON_API int paimon_expire_snapshots(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_remove_orphan_files(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_verify(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_drop_partitions(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_create_tag(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_delete_tags(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_rename_tag(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_expire_tags(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_auto_tags(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_rollback(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_purge_files(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_consumers(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_reset_consumer(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_delete_consumer(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_expire_consumers(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_expire_changelogs(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_branches(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_create_branch(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_delete_branch(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_fast_forward(paimon_table *t, const paimon_options *o, paimon_result **out);
/* upkeep (maintain.lua): what every commit runs afterwards (see
 * paimon_commit_commit), once, by the table's options as of its latest
 * schema, in Java's order: auto_tags, expire_tags, expire_partitions,
 * expire_consumers, expire_snapshots, expire_changelogs; also on a
 * write-only table; partitions whatever the check interval. Options
 * dry-run, threads, now-ms. The result lists each step ("steps":
 * operation, status done / skipped / failed, reason, error, code, result)
 * and counts "errors"; a failed step does not stop the next, and PAIMON_OK
 * is returned whenever the result could be made. Partition expiration from
 * C is paimon_expire_partitions' rule (the Lua runner's default policy; a
 * named Lua policy is not asked). docs/maintenance.md "Upkeep after every
 * commit". */
PAIMON_API int paimon_upkeep(paimon_table *t, const paimon_options *o, paimon_result **out);
/* Java's replace_tag, clear_consumers and rename_branch (docs/maintenance.md):
 * replace_tag takes "tag", "snapshot" (else the latest), "time-retained",
 * "dry-run" (paimon_create_tag also takes "watermark": Java's
 * create_tag_from_watermark); clear_consumers "include" / "exclude" (regular
 * expressions matched against the whole consumer id), "dry-run";
 * rename_branch "branch" (the old name), "new-name", "dry-run". */
PAIMON_API int paimon_replace_tag(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_clear_consumers(paimon_table *t, const paimon_options *o, paimon_result **out);
PAIMON_API int paimon_rename_branch(paimon_table *t, const paimon_options *o, paimon_result **out);
/* Java's expire_partitions: "expiration-time" (a duration; else the table's
 * partition.expiration-time), "strategy" (values-time | update-time),
 * "timestamp-formatter", "timestamp-pattern", "max-expires" (else the
 * table's partition.* options), "dry-run", "max-attempts", "commit-user",
 * "now-ms" (local wall clock, for tests). The rule of the Lua default
 * policy (docs/partitions.md); the chosen partitions go in one OVERWRITE
 * snapshot as paimon_drop_partitions. */
PAIMON_API int paimon_expire_partitions(paimon_table *t, const paimon_options *o, paimon_result **out);
/* Java's mark_partition_done by the table's partition.mark-done-action:
 * "partition" (k=v[,k2=v2], repeatable), "dry-run". success-file writes
 * <table>/<partition>/_SUCCESS; the metastore actions are
 * PAIMON_UNSUPPORTED. */
PAIMON_API int paimon_mark_partition_done(paimon_table *t, const paimon_options *o, paimon_result **out);

/* The result as one JSON object, the keys of the Lua methods' result
 * tables (t:expire_snapshots() ...; both faces render one result): e.g.
 * "expired", "deleted": {"data_files": n, "manifests": n, ...}, "bytes", "files", "paths" (dry
 * run), "failures", "plan" (drop_partitions: what the Lua result has but
 * the typed partition values and the BinaryRow bytes).
 *
 * paimon_result_write_json hands the text to write(ud, p, n) in pieces
 * (about 64 KiB each; write returns 0, or non-zero to stop) and holds
 * none of it: a dry run's planned paths are kept compactly and each row
 * of "paths" is made as it is written, so memory stays bounded at any
 * plan size. PAIMON_OK, PAIMON_IO if write failed (what it wrote stays
 * written), PAIMON_NOMEM, PAIMON_CORRUPT if a string in the result (a
 * file name found in a listing) is not UTF-8, PAIMON_MISUSE for NULL.
 *
 * paimon_result_json makes the same bytes as one string on its first
 * call and keeps the whole text until paimon_result_free (hundreds of
 * MiB for a plan of millions of paths: stream those instead). NULL for a
 * NULL result or when paimon_result_write_json would fail.
 * Neither may run at the same time as another call on the same result. */
PAIMON_API int paimon_result_write_json(const paimon_result *r, int (*write)(void *ud, const char *p, size_t n),
                                        void *ud);
PAIMON_API const char *paimon_result_json(const paimon_result *r);
/* A value by dotted path ("expired", "deleted.data", "plan.end",
 * "range.0", "paths.3.path"): integers, booleans (0 / 1) and arrays
 * (their length). PAIMON_NOTFOUND if absent, PAIMON_MISUSE if it is not
 * one of those. Strings are valid until paimon_result_free; each one
 * looked up in a row of a dry run's "paths" is a copy kept that long.
 * A result is one thread's at a time: none of these calls (they render
 * plan rows in the result's scratch space) may overlap another call on
 * the same result. */
PAIMON_API int paimon_result_int(const paimon_result *r, const char *path, int64_t *out);
PAIMON_API const char *paimon_result_str(const paimon_result *r, const char *path);  /* NULL: no such string */
PAIMON_API void paimon_result_free(paimon_result *r);         /* NULL-safe */


/* ---- writing and committing -------------------------------------------
 * Append-only Avro tables (bucket -1, no primary key; see docs/writing.md).
 * The same type rules and messages as the Lua binding's t:new_write():
 * the binding maps Lua values onto paimon_value and calls the same core.
 * On failure the message is paimon_table_errmsg(t) of the writer's or
 * committer's table. */

/* A value to write. Integers of every width come as PAIMON_VALUE_INT (or
 * as decimal text, which is exact); a DOUBLE with a fraction, or of 2^53
 * or more, is refused by integer columns (it may have been rounded).
 * Strings hold UTF-8 text or bytes (not copied: they must stay valid until
 * the row is written) and also carry decimals ("12.50"), dates
 * ("2024-01-31" or INT days), times ("12:30:00.250" or INT millis of the
 * day), timestamps ("2024-01-31 12:30:00.123456" or INT epoch millis) and
 * "NaN" / "Infinity" / "-Infinity" for FLOAT/DOUBLE. ARRAY values list
 * items; MAP values are key/value pairs (keys in the order written) and
 * also give ROW values (keys are the field names; a missing field is
 * NULL). `text`, when not NULL, is how the caller wrote a number, quoted
 * in error messages instead of the core's rendering. Messages name value
 * kinds as Lua does: boolean, number, string, table. */
typedef enum paimon_value_kind {
    PAIMON_VALUE_NULL = 0,
    PAIMON_VALUE_BOOL,
    PAIMON_VALUE_INT,
    PAIMON_VALUE_DOUBLE,
    PAIMON_VALUE_STRING,
    PAIMON_VALUE_ARRAY,
    PAIMON_VALUE_MAP,
    PAIMON_VALUE_OTHER         /* none of these (text names its kind): always refused */
} paimon_value_kind;

typedef struct paimon_value paimon_value;
struct paimon_value {
    paimon_value_kind kind;
    const char *text;
    union {
        int b;
        int64_t i;
        double d;
        struct { const char *ptr; size_t len; } str;
        struct { const paimon_value *items; size_t n; } array;
        struct { const paimon_value *keys, *values; size_t n; } map;
    } v;
};

/* Constructors for the common cases (a NULL s gives a NULL value). */
static inline paimon_value paimon_null(void) { paimon_value v = {PAIMON_VALUE_NULL, NULL, {0}}; return v; }
static inline paimon_value paimon_bool(int b) { paimon_value v = {PAIMON_VALUE_BOOL, NULL, {0}}; v.v.b = b != 0; return v; }
static inline paimon_value paimon_int(int64_t i) { paimon_value v = {PAIMON_VALUE_INT, NULL, {0}}; v.v.i = i; return v; }
static inline paimon_value paimon_double(double d) { paimon_value v = {PAIMON_VALUE_DOUBLE, NULL, {0}}; v.v.d = d; return v; }
static inline paimon_value paimon_bytes(const void *p, size_t n) {
    paimon_value v = {PAIMON_VALUE_STRING, NULL, {0}};
    v.v.str.ptr = (const char *)p;
    v.v.str.len = n;
    return v;
}
static inline paimon_value paimon_str(const char *s) {
    size_t n = 0;
    if (!s) return paimon_null();
    while (s[n]) n++;
    return paimon_bytes(s, n);
}
static inline paimon_value paimon_array(const paimon_value *items, size_t n) {
    paimon_value v = {PAIMON_VALUE_ARRAY, NULL, {0}};
    v.v.array.items = items;
    v.v.array.n = n;
    return v;
}
static inline paimon_value paimon_map(const paimon_value *keys, const paimon_value *values, size_t n) {
    paimon_value v = {PAIMON_VALUE_MAP, NULL, {0}};
    v.v.map.keys = keys;
    v.v.map.values = values;
    v.v.map.n = n;
    return v;
}

/* A column of a new table: name, type as SQL text ("BIGINT NOT NULL",
 * "DECIMAL(10, 2)", "ARRAY<STRING>", "ROW<a INT, b STRING>"), optional
 * description. */
typedef struct paimon_column {
    const char *name;
    const char *type;
    const char *description;   /* may be NULL */
} paimon_column;

typedef struct paimon_table_spec {
    const paimon_column *columns;
    size_t n_columns;
    const char *const *partition_keys;
    size_t n_partition_keys;
    const char *const *primary_keys;
    size_t n_primary_keys;
    const char *const *options;  /* key, value, key, value ...: 2 * n_options strings */
    size_t n_options;
    const char *comment;         /* may be NULL */
} paimon_table_spec;

/* Create the table at `path` (schema-0, as Java's SchemaManager writes it;
 * never replaces: PAIMON_EXISTS if it has a schema) and open it (*out).
 * Errors as for paimon_table_open. */
PAIMON_API int paimon_table_create(const char *path, const paimon_table_spec *spec,
                                   paimon_table **out, char **errmsg);
/* paimon_table_create with FileIO options as for paimon_table_open_v2
 * (they reach the FileIO and stay on the opened table; they are not
 * written into the schema: table options go in spec->options). */
PAIMON_API int paimon_table_create_v2(const char *uri, const paimon_table_spec *spec,
                                      const char *const *options, paimon_table **out, char **errmsg);

typedef struct paimon_writer paimon_writer;
typedef struct paimon_messages paimon_messages;
typedef struct paimon_commit paimon_commit;

/* A writer of new data files (rolling at target-file-size, one per
 * partition). It borrows t, which must outlive it. */
PAIMON_API int paimon_writer_open(paimon_table *t, paimon_writer **out);
/* Set one column (schema order, from 0) of the row being built. A value
 * the column's type refuses is PAIMON_MISUSE and leaves the column unset. */
PAIMON_API int paimon_writer_set(paimon_writer *w, size_t column, const paimon_value *v);
/* Write the row built so far (unset columns are NULL) and start a new one. */
PAIMON_API int paimon_writer_write_row(paimon_writer *w);
/* Set columns 0 .. n-1 from row[] and write (n must be the column count). */
PAIMON_API int paimon_writer_write(paimon_writer *w, const paimon_value *row, size_t n);
PAIMON_API int64_t paimon_writer_rows(const paimon_writer *w);
/* Close the open files and hand out a commit message per data file
 * written since open or the previous call (*out: free with
 * paimon_messages_free; independent of the writer). */
PAIMON_API int paimon_writer_prepare_commit(paimon_writer *w, paimon_messages **out);
/* NULL-safe; deletes the files written but not handed out by
 * paimon_writer_prepare_commit. */
PAIMON_API void paimon_writer_close(paimon_writer *w);

PAIMON_API size_t paimon_messages_count(const paimon_messages *m);
PAIMON_API int64_t paimon_messages_row_count(const paimon_messages *m);  /* rows of the ADDed files */
/* The data file of message i, relative to the table directory. */
PAIMON_API const char *paimon_messages_file_path(const paimon_messages *m, size_t i);
PAIMON_API void paimon_messages_free(paimon_messages *m);    /* NULL-safe */

/* A committer: commit_user NULL for a random one (a retry of the same
 * commits must reuse the user, see paimon_commit_filter_committed). It
 * borrows t. */
PAIMON_API int paimon_commit_open(paimon_table *t, const char *commit_user, paimon_commit **out);
PAIMON_API const char *paimon_commit_user(const paimon_commit *c);
/* Commit the messages as one snapshot of kind `kind` (NULL: "APPEND"),
 * with `identifier` (INT64_MAX for a batch commit). *snapshot_id is the
 * new snapshot, *created 1; no messages and a kind other than COMPACT create
 * nothing (*created 0, *snapshot_id the latest id or 0), as Java's batch
 * commit ignores empty commits. PAIMON_CONFLICT: nothing was committed.
 * PAIMON_UNCERTAIN: the snapshot may or may not exist; keep the files (from
 * then on paimon_commit_abort on this committer deletes nothing) and ask
 * paimon_commit_filter_committed later. */
PAIMON_API int paimon_commit_commit(paimon_commit *c, const paimon_messages *m, int64_t identifier,
                                    const char *kind, int64_t *snapshot_id, int *created);
/* After every successful paimon_commit_commit (also one that created
 * nothing), the table's upkeep runs as Java's TableCommitImpl does
 * (paimon_upkeep's steps; none with write-only=true; partitions at most
 * once per partition.expiration-check-interval since the committer was
 * opened). It never fails the commit: its result, errors included, is
 * here until the next commit or paimon_commit_close (NULL: none ran, or
 * out of memory). */
PAIMON_API const paimon_result *paimon_commit_upkeep(const paimon_commit *c);
/* Delete the data files the messages add, except those a snapshot already
 * adds (a commit with an unknown outcome may have landed). After a commit
 * of this committer returned PAIMON_UNCERTAIN nothing is deleted (every
 * file counts as kept). *removed, *kept (either may be NULL) count the
 * files. */
PAIMON_API int paimon_commit_abort(paimon_commit *c, const paimon_messages *m, int64_t *removed,
                                   int64_t *kept);
/* For each identifier, committed[i] = 1 if this commit user already
 * committed it (its newest snapshot's identifier is >= it), else 0. */
PAIMON_API int paimon_commit_filter_committed(paimon_commit *c, const int64_t *identifiers, size_t n,
                                              uint8_t *committed);
PAIMON_API void paimon_commit_close(paimon_commit *c);       /* NULL-safe */

/* ---- ALTER TABLE (docs/alter.md; Java's SchemaManager.commitChanges) ---- */

/* Java's SchemaChange kinds. */
#define PAIMON_ALTER_SET_OPTION                0  /* name = key, value */
#define PAIMON_ALTER_REMOVE_OPTION             1  /* name = key */
#define PAIMON_ALTER_UPDATE_COMMENT            2  /* value = the table comment (NULL: none) */
#define PAIMON_ALTER_ADD_COLUMN                3  /* name, value = type, comment, first / after */
#define PAIMON_ALTER_RENAME_COLUMN             4  /* name -> value */
#define PAIMON_ALTER_DROP_COLUMN               5  /* name */
#define PAIMON_ALTER_UPDATE_COLUMN_TYPE        6  /* name, value = type (nullability kept unless it says NULL) */
#define PAIMON_ALTER_UPDATE_COLUMN_NULLABILITY 7  /* name, nullable */
#define PAIMON_ALTER_UPDATE_COLUMN_COMMENT     8  /* name, comment */
#define PAIMON_ALTER_UPDATE_COLUMN_POSITION    9  /* name, first / after */

typedef struct paimon_schema_change {
    int kind;                 /* PAIMON_ALTER_* */
    const char *name;         /* column, or option key */
    const char *value;        /* option value, type, new name, table comment */
    const char *comment;      /* column comment (may be NULL) */
    const char *after;        /* position: after this column (may be NULL) */
    int first;                /* position: first */
    int nullable;             /* UPDATE_COLUMN_NULLABILITY */
} paimon_schema_change;

/* Apply the changes to the latest schema of t's branch and write
 * schema-(N+1) without replacing (re-applied when a concurrent alter won;
 * PAIMON_CONFLICT when the change no longer applies). A change Java refuses
 * is PAIMON_MISUSE with Java's message (paimon_table_errmsg). t takes the
 * new schema (its new writers write under it). dry_run: nothing written.
 * *schema_id (may be NULL) = the new id; *schema_json (may be NULL; free()
 * it) = the schema file's text. */
PAIMON_API int paimon_alter_table(paimon_table *t, const paimon_schema_change *changes, size_t n, int dry_run,
                                  int64_t *schema_id, char **schema_json);

#ifdef __cplusplus
}
#endif
#endif
