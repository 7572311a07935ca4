/* Manifest-family records (ManifestFileMeta, ManifestEntry + DataFileMeta,
 * IndexManifestEntry) decoded from and encoded to Paimon's Avro files. Reading
 * maps fields by name from the file's writer schema, so every Paimon version
 * from 0.4 to 2.x reads; writing uses Java 2.0's exact schemas. */
#ifndef PM_MANIFEST_H
#define PM_MANIFEST_H

#include "pm_common.h"
#include "pm_fileio.h"
#include "pm_meta.h"

typedef struct pm_opt_i32 { int has; int32_t v; } pm_opt_i32;
typedef struct pm_bytes { const uint8_t *ptr; size_t len; } pm_bytes;
typedef struct pm_strs { size_t n; const char **v; } pm_strs;   /* has: v != NULL or n > 0 */

typedef struct pm_stats {
    pm_bytes min_values, max_values;     /* serialized BinaryRows */
    int has_null_counts;                 /* array present (Java always writes it) */
    size_t n_null_counts;
    int64_t *null_counts;
    uint8_t *null_count_is_null;         /* per element: 1 if null */
} pm_stats;

enum { PM_FILE_ADD = 0, PM_FILE_DELETE = 1 };

typedef struct pm_data_file {
    const char *file_name;
    int64_t file_size, row_count;
    pm_bytes min_key, max_key;
    pm_stats key_stats, value_stats;
    int64_t min_sequence_number, max_sequence_number, schema_id;
    int32_t level;
    pm_strs extra_files;
    pm_opt_i64 creation_time;            /* local wall-clock millis (timestamp-millis) */
    pm_opt_i64 delete_row_count;
    int has_embedded_index;
    pm_bytes embedded_index;
    pm_opt_i32 file_source;              /* 0 APPEND, 1 COMPACT */
    int has_value_stats_cols;
    pm_strs value_stats_cols;
    const char *external_path;           /* NULL if absent */
    pm_opt_i64 first_row_id;
    int has_write_cols;
    pm_strs write_cols;
    int has_write_cols_sequences;
    size_t n_write_cols_sequences;
    int64_t *write_cols_sequences;
} pm_data_file;

typedef struct pm_manifest_entry {
    int32_t version;                     /* 2 */
    int32_t kind;                        /* PM_FILE_ADD / PM_FILE_DELETE */
    pm_bytes partition;
    int32_t bucket, total_buckets;
    pm_data_file file;
} pm_manifest_entry;

typedef struct pm_manifest_meta {
    int32_t version;                     /* 2 */
    const char *file_name;
    int64_t file_size, num_added_files, num_deleted_files;
    pm_stats partition_stats;
    int64_t schema_id;
    pm_opt_i32 min_bucket, max_bucket, min_level, max_level;
    pm_opt_i64 min_row_id, max_row_id;
    /* Not stored: the list's schema has _MIN_ROW_ID/_MAX_ROW_ID (1.4+), so
     * their absence means an entry without _FIRST_ROW_ID. */
    int row_ids_known;
} pm_manifest_meta;

typedef struct pm_dv_range {
    const char *data_file;               /* f0 */
    int32_t offset, length;              /* f1, f2 */
    pm_opt_i64 cardinality;
} pm_dv_range;

typedef struct pm_index_entry {
    int32_t version;                     /* 1 */
    int32_t kind;
    pm_bytes partition;
    int32_t bucket;
    const char *index_type;              /* DELETION_VECTORS, HASH, ... */
    const char *file_name;
    int64_t file_size, row_count;
    int has_dv_ranges;
    size_t n_dv_ranges;
    pm_dv_range *dv_ranges;
    const char *external_path;
    int has_global_index;
    struct pm_global_index {
        int64_t row_range_start, row_range_end;
        int32_t index_field_id;
        int has_extra_field_ids;
        size_t n_extra_field_ids;
        int32_t *extra_field_ids;
        int has_index_meta, has_source_meta;
        pm_bytes index_meta, source_meta;
    } global_index;
} pm_index_entry;

typedef enum pm_manifest_kind {
    PM_MANIFEST_LIST, PM_MANIFEST_FILE, PM_INDEX_MANIFEST
} pm_manifest_kind;

typedef struct pm_manifest_reader pm_manifest_reader;

/* Read the whole file at `path` and prepare to decode records of `kind`.
 * `display` names the file in messages (e.g. "manifest/manifest-…-0"). */
int pm_manifest_open(pm_fileio *io, const char *path, const char *display,
                     pm_manifest_kind kind, pm_manifest_reader **out, pm_err *e);
/* The same with the size the metadata records for it (-1: unknown; see
 * pm_io_read_sized). */
int pm_manifest_open_sized(pm_fileio *io, const char *path, const char *display, int64_t size,
                           pm_manifest_kind kind, pm_manifest_reader **out, pm_err *e);
/* Same over bytes the caller owns (must outlive the reader). */
int pm_manifest_open_bytes(const uint8_t *data, size_t len, const char *display,
                           pm_manifest_kind kind, pm_manifest_reader **out, pm_err *e);
/* Next record: PAIMON_OK, PAIMON_DONE or an error. The record and all it
 * points to stay valid until the next call. */
int pm_manifest_next_meta(pm_manifest_reader *r, const pm_manifest_meta **out, pm_err *e);
int pm_manifest_next_entry(pm_manifest_reader *r, const pm_manifest_entry **out, pm_err *e);
int pm_manifest_next_index(pm_manifest_reader *r, const pm_index_entry **out, pm_err *e);
const char *pm_manifest_codec(const pm_manifest_reader *r);
/* Decode only what names files, before the first record: manifest entries
 * then carry _VERSION, _KIND, _FILE_NAME, _EXTRA_FILES and _EXTERNAL_PATH
 * (every other field zero), manifest-list records _VERSION, _FILE_NAME and
 * _FILE_SIZE.
 * The other fields are still walked and checked, not built. For orphan
 * cleaning's used set. 0, or -1 (another kind, or records already read). */
int pm_manifest_names_only(pm_manifest_reader *r);
/* Decode only what a manifest's metadata needs, before the first record:
 * entries carry _VERSION, _KIND, _PARTITION, _BUCKET, _FILE_NAME,
 * _ROW_COUNT, _SCHEMA_ID, _LEVEL and _FIRST_ROW_ID (every other field zero),
 * the others walked and checked, not built. For a merge copying the blocks
 * (pm_manifest_blocks_copyable first: it says no afterwards). 0, or -1. */
int pm_manifest_stats_only(pm_manifest_reader *r);
/* pm_avro_reader_block_filter on the manifest's blocks: records of a block
 * fn refuses are passed over (see pm_avro.h). */
void pm_manifest_block_filter(pm_manifest_reader *r, int (*fn)(void *ud, const uint8_t *data, size_t len), void *ud);
/* pm_avro_reader_block_share: this reader returns only the entries of
 * blocks i with i % parts == part (several workers share one big file). */
void pm_manifest_block_share(pm_manifest_reader *r, unsigned part, unsigned parts);
void pm_manifest_close(pm_manifest_reader *r);              /* NULL-safe */
/* For copying a manifest's blocks verbatim into a new manifest (merging):
 * 1 when its blocks read as ours would, i.e. its writer schema has the
 * layout of PM_SCHEMA_MANIFEST_FILE and its codec is `codec` (an Avro
 * codec name); then pm_manifest_block gives the block of the last entry
 * returned (see pm_avro_reader_block). */
int pm_manifest_blocks_copyable(const pm_manifest_reader *r, const char *codec);
uint64_t pm_manifest_block(const pm_manifest_reader *r, int64_t *count, const uint8_t **raw, size_t *raw_len);
/* The next block of a manifest file as stored, nothing decoded (see
 * pm_avro_reader_next_stored); before any record is read, never mixed
 * with pm_manifest_next_entry. */
int pm_manifest_next_stored(pm_manifest_reader *r, int64_t *count, const uint8_t **raw, size_t *raw_len, pm_err *e);

/* Deep copies into an arena (every string, byte string and array), so a
 * record outlives the reader it came from. 0, or -1 when out of memory. */
int pm_manifest_entry_copy(pm_arena *a, const pm_manifest_entry *src, pm_manifest_entry *dst);
int pm_index_entry_copy(pm_arena *a, const pm_index_entry *src, pm_index_entry *dst);

/* Encoders: append records to an Avro writer opened with the matching schema
 * JSON below (Java 2.0's exact text). */
extern const char PM_SCHEMA_MANIFEST_LIST[];
extern const char PM_SCHEMA_MANIFEST_FILE[];
extern const char PM_SCHEMA_INDEX_MANIFEST[];
struct pm_avro_writer;
int pm_manifest_write_meta(struct pm_avro_writer *w, const pm_manifest_meta *m, pm_err *e);
int pm_manifest_write_entry(struct pm_avro_writer *w, const pm_manifest_entry *m, pm_err *e);
int pm_manifest_write_index(struct pm_avro_writer *w, const pm_index_entry *m, pm_err *e);

/* Avro codec name for a table's options: avro.codec if set, else
 * manifest.compression mapped (zstd -> zstandard, none -> null). */
const char *pm_manifest_codec_for(const char *manifest_compression, const char *avro_codec);

#endif
