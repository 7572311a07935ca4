/* Table metadata in JSON: snapshots, schemas, tags, consumers, hint files,
 * and the snapshot manager (Java's hint rules). Parses with pm_json. */
#ifndef PM_META_H
#define PM_META_H

#include "pm_common.h"
#include "pm_fileio.h"
#include "pm_types.h"

/* Optional int64 fields carry a presence flag. */
typedef struct pm_opt_i64 { int has; int64_t v; } pm_opt_i64;

typedef struct pm_kv { char *key; char *value; } pm_kv;

/* Snapshot.CURRENT_VERSION of every Java release so far; a newer version is
 * refused as unsupported. */
#define PM_SNAPSHOT_VERSION_MAX 3

typedef struct pm_snapshot {
    int32_t version;              /* 1 to 3; missing key -> 1 */
    char *uuid;                   /* NULL if absent */
    int64_t id;
    int64_t schema_id;
    char *base_manifest_list;
    pm_opt_i64 base_manifest_list_size;
    char *delta_manifest_list;
    pm_opt_i64 delta_manifest_list_size;
    char *changelog_manifest_list;          /* NULL if absent */
    pm_opt_i64 changelog_manifest_list_size;
    char *index_manifest;                   /* NULL if absent */
    char *commit_user;
    char *writer_version;                   /* NULL if absent */
    int64_t commit_identifier;
    char *commit_kind;                      /* "APPEND", "COMPACT", "OVERWRITE", "ANALYZE" */
    int64_t time_millis;
    int has_log_offsets;                    /* <=1.3 "logOffsets" map present */
    size_t n_log_offsets;
    struct { int32_t bucket; int64_t offset; } *log_offsets;
    pm_opt_i64 total_record_count;
    pm_opt_i64 delta_record_count;
    pm_opt_i64 changelog_record_count;
    pm_opt_i64 watermark;
    char *statistics;                       /* NULL if absent */
    int has_properties;
    size_t n_properties;
    pm_kv *properties;
    pm_opt_i64 next_row_id;
    char *operation;                        /* NULL if absent */
    /* tag files only */
    char *tag_create_time;                  /* raw JSON text of the array, NULL if absent */
    char *tag_time_retained;                /* raw JSON number text, NULL if absent */
    /* PM_SNAP_NULL_* bits: keys the file had with an explicit JSON null
     * (Java 1.0-1.3 wrote "changelogManifestList" : null). The serializer
     * writes `"key" : null` for them so parse + serialize is byte-identical.
     * Leave 0 when building a snapshot: absent values are then omitted. */
    uint32_t explicit_nulls;
} pm_snapshot;

enum {
    PM_SNAP_NULL_VERSION = 1u << 0,
    PM_SNAP_NULL_UUID = 1u << 1,
    PM_SNAP_NULL_BASE_MANIFEST_LIST_SIZE = 1u << 2,
    PM_SNAP_NULL_DELTA_MANIFEST_LIST_SIZE = 1u << 3,
    PM_SNAP_NULL_CHANGELOG_MANIFEST_LIST = 1u << 4,
    PM_SNAP_NULL_CHANGELOG_MANIFEST_LIST_SIZE = 1u << 5,
    PM_SNAP_NULL_INDEX_MANIFEST = 1u << 6,
    PM_SNAP_NULL_WRITER_VERSION = 1u << 7,
    PM_SNAP_NULL_LOG_OFFSETS = 1u << 8,
    PM_SNAP_NULL_TOTAL_RECORD_COUNT = 1u << 9,
    PM_SNAP_NULL_DELTA_RECORD_COUNT = 1u << 10,
    PM_SNAP_NULL_CHANGELOG_RECORD_COUNT = 1u << 11,
    PM_SNAP_NULL_WATERMARK = 1u << 12,
    PM_SNAP_NULL_STATISTICS = 1u << 13,
    PM_SNAP_NULL_PROPERTIES = 1u << 14,
    PM_SNAP_NULL_NEXT_ROW_ID = 1u << 15,
    PM_SNAP_NULL_OPERATION = 1u << 16,
    PM_SNAP_NULL_TAG_CREATE_TIME = 1u << 17,
    PM_SNAP_NULL_TAG_TIME_RETAINED = 1u << 18
};

/* Parse snapshot/tag/changelog JSON. int64 exact. Unknown keys ignored,
 * explicit null accepted for optional keys. Missing required keys (id,
 * schemaId, baseManifestList, deltaManifestList, commitUser,
 * commitIdentifier, commitKind, timeMillis) -> PAIMON_CORRUPT naming the key;
 * so is a commitKind outside Java's enum or a negative totalRecordCount /
 * changelogRecordCount; a version above PM_SNAPSHOT_VERSION_MAX ->
 * PAIMON_UNSUPPORTED.
 * `file_name` is used in messages. */
int pm_snapshot_parse(const char *json, size_t len, const char *file_name,
                      pm_snapshot **out, pm_err *e);
/* Serialize as Java's Jackson pretty printer does (2-space indent,
 * "key" : value, field order of §2.2, no trailing newline). */
int pm_snapshot_to_json(const pm_snapshot *s, pm_buf *out);
void pm_snapshot_free(pm_snapshot *s);        /* NULL-safe */

typedef struct pm_schema {
    int32_t version;                         /* missing -> 1 */
    int64_t id;
    size_t n_fields;
    pm_data_field *fields;
    int32_t highest_field_id;
    size_t n_partition_keys;
    char **partition_keys;
    size_t n_primary_keys;
    char **primary_keys;
    size_t n_options;
    pm_kv *options;                          /* in file order; compat defaults appended */
    char *comment;                           /* NULL if absent */
    int64_t time_millis;
} pm_schema;

/* Parse schema-N JSON. Applies SchemaSerializer's read compatibility:
 * version <= 1 without "bucket" -> bucket=1; version <= 2 without
 * "file.format" -> file.format=orc. Composite types (ARRAY/MAP/MULTISET/ROW/
 * VECTOR objects) are parsed recursively. */
int pm_schema_parse(const char *json, size_t len, const char *file_name,
                    pm_schema **out, pm_err *e);
int pm_schema_to_json(const pm_schema *s, pm_buf *out);
void pm_schema_free(pm_schema *s);
const char *pm_schema_option(const pm_schema *s, const char *key);      /* raw, NULL if unset */
/* Option value with Paimon's default (CoreOptions) when unset; NULL if the
 * option has no default. */
const char *pm_schema_option_or_default(const pm_schema *s, const char *key);
/* Table of (key, default) pairs known to us, NULL-terminated. */
extern const pm_kv pm_option_defaults[];
/* Field by name, NULL if absent. */
const pm_data_field *pm_schema_field(const pm_schema *s, const char *name);

typedef struct pm_consumer { int64_t next_snapshot; } pm_consumer;
int pm_consumer_parse(const char *json, size_t len, const char *file_name,
                      pm_consumer *out, pm_err *e);

/* Parse duration "1 h", "30min", "10 s", "1d", "100ms" (Paimon's
 * TimeUtils.parseDuration) into milliseconds. */
int pm_parse_duration_ms(const char *s, int64_t *ms, pm_err *e);
/* Parse MemorySize "8 mb", "16MB", "1024", "1 kb" into bytes. */
int pm_parse_memory_size(const char *s, int64_t *bytes, pm_err *e);

/* ---- snapshot manager ----
 * dir is a branch root (table root for main, <table>/branch/branch-<b>
 * otherwise). Hint rules as Java's HintFileUtils: LATEST trusted only if
 * snapshot-(N+1) is absent; EARLIEST only if its snapshot exists; otherwise
 * list snapshot/ (non-numeric suffixes ignored). A junk hint is ignored
 * (falls back to listing), never fatal. PAIMON_NOTFOUND if no snapshot. */
int pm_snapshot_latest_id(pm_fileio *io, const char *branch_root, int64_t *id, pm_err *e);
int pm_snapshot_earliest_id(pm_fileio *io, const char *branch_root, int64_t *id, pm_err *e);
/* All existing snapshot ids, ascending (malloc'd array; NULL and n = 0 when
 * there are none or snapshot/ is missing). The listing helpers below also
 * return PAIMON_OK with n = 0 for a missing directory. */
int pm_snapshot_list_ids(pm_fileio *io, const char *branch_root, int64_t **ids, size_t *n, pm_err *e);
/* Read snapshot-<id>; PAIMON_NOTFOUND if missing; PAIMON_CORRUPT if its
 * "id" is not <id> or its "schemaId" names a schema file that does not
 * exist (changelog and tag reads check the schema too). */
int pm_snapshot_read(pm_fileio *io, const char *branch_root, int64_t id, pm_snapshot **out, pm_err *e);
/* Schema ids known to exist in one branch, kept by its table handle: a
 * schema file is never deleted while a snapshot names it, so reading many
 * snapshots checks each schema file once (one stat per schema id, not per
 * snapshot: a request each on an object store). Only found files are
 * remembered. Thread-safe. The *_known reads take one (NULL: check every
 * time, as the plain reads do). */
typedef struct pm_schema_known pm_schema_known;
pm_schema_known *pm_schema_known_new(void);
void pm_schema_known_free(pm_schema_known *k);   /* NULL-safe */
/* Schema id `id` exists (a listing just found it). */
void pm_schema_known_note(pm_schema_known *k, int64_t id);
int pm_snapshot_read_known(pm_fileio *io, const char *branch_root, pm_schema_known *known, int64_t id,
                           pm_snapshot **out, pm_err *e);
int pm_changelog_read_known(pm_fileio *io, const char *branch_root, pm_schema_known *known, int64_t id,
                            pm_snapshot **out, pm_err *e);
int pm_tag_read_known(pm_fileio *io, const char *branch_root, pm_schema_known *known, const char *name,
                      pm_snapshot **out, pm_err *e);
/* Read hint file "EARLIEST"/"LATEST" in snapshot/: PAIMON_NOTFOUND if
 * missing, PAIMON_CORRUPT if not a decimal id (exact Long.parseLong rules). */
int pm_hint_read(pm_fileio *io, const char *branch_root, const char *which, int64_t *id, pm_err *e);
int pm_hint_write(pm_fileio *io, const char *branch_root, const char *which, int64_t id, pm_err *e);

/* Long-lived changelogs (changelog/changelog-<id>, written while the
 * changelog lifecycle is decoupled): ids ascending, and one read like a
 * snapshot; PAIMON_NOTFOUND if missing. */
int pm_changelog_list_ids(pm_fileio *io, const char *branch_root, int64_t **ids, size_t *n, pm_err *e);
int pm_changelog_read(pm_fileio *io, const char *branch_root, int64_t id, pm_snapshot **out, pm_err *e);

/* Schemas: ids ascending; latest = max. */
int pm_schema_list_ids(pm_fileio *io, const char *branch_root, int64_t **ids, size_t *n, pm_err *e);
int pm_schema_read(pm_fileio *io, const char *branch_root, int64_t id, pm_schema **out, pm_err *e);

/* Tags: names (without "tag-"), sorted by name. */
int pm_tag_list(pm_fileio *io, const char *branch_root, char ***names, size_t *n, pm_err *e);
int pm_tag_read(pm_fileio *io, const char *branch_root, const char *name, pm_snapshot **out, pm_err *e);
/* Consumers: ids (without "consumer-"). */
int pm_consumer_list(pm_fileio *io, const char *branch_root, char ***ids, size_t *n, pm_err *e);
/* PAIMON_MISUSE unless name can be a tag or consumer file's suffix: not
 * empty, ".", "..", no '/' and no control character (shown escaped in the
 * message, as "invalid <what> 'a\x0ab': ..."). */
int pm_meta_name_check(const char *what, const char *name, pm_err *e);
int pm_consumer_read(pm_fileio *io, const char *branch_root, const char *id, pm_consumer *out, pm_err *e);
/* Branch names under <table>/branch/ (directories "branch-<name>"). */
int pm_branch_list(pm_fileio *io, const char *table_root, char ***names, size_t *n, pm_err *e);

#endif
