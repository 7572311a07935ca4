/* Avro object container files: our own reader and writer (Debian's avro-c
 * lacks zstandard). Decoding is driven by the writer schema embedded in the
 * file; callers map fields by name. */
#ifndef PM_AVRO_H
#define PM_AVRO_H

#include "pm_common.h"

typedef enum pm_avro_type {
    PM_AVRO_NULL, PM_AVRO_BOOLEAN, PM_AVRO_INT, PM_AVRO_LONG, PM_AVRO_FLOAT,
    PM_AVRO_DOUBLE, PM_AVRO_BYTES, PM_AVRO_STRING, PM_AVRO_RECORD, PM_AVRO_ENUM,
    PM_AVRO_ARRAY, PM_AVRO_MAP, PM_AVRO_UNION, PM_AVRO_FIXED
} pm_avro_type;

typedef struct pm_avro_schema pm_avro_schema;

typedef struct pm_avro_field {
    char *name;
    pm_avro_schema *type;
} pm_avro_field;

struct pm_avro_schema {
    pm_avro_type type;
    char *name;              /* full name for record/enum/fixed, else NULL */
    char *logical_type;      /* "timestamp-millis", "decimal", ... or NULL */
    size_t n_fields;         /* record */
    pm_avro_field *fields;
    pm_avro_schema *items;   /* array items / map values */
    size_t n_branches;       /* union */
    pm_avro_schema **branches;
    size_t n_symbols;        /* enum */
    char **symbols;
    size_t fixed_size;       /* fixed */
    size_t items_min;        /* array / map: lower bound of one item's encoding (map: with its key) */
    int is_ref;              /* named-type reference: not owned, do not free */
};

/* Parse Avro schema JSON (as stored in avro.schema). Named types may be
 * referenced by name later in the schema. */
int pm_avro_schema_parse(const char *json, size_t len, pm_avro_schema **out, pm_err *e);
void pm_avro_schema_free(pm_avro_schema *s);   /* NULL-safe */
/* If s is a union ["null", X] (either order) return X, else s. */
const pm_avro_schema *pm_avro_unwrap_nullable(const pm_avro_schema *s);
/* Lower bound of the encoded size of a value of schema s (depth-limited:
 * a smaller, still valid bound for deep or recursive schemas). */
size_t pm_avro_min_size(const pm_avro_schema *s);
/* Index of a record field by name (after unwrap_nullable), or -1. */
int pm_avro_field_index(const pm_avro_schema *record, const char *name);
/* 1 if data written with schema a is read field for field by schema b
 * and back: same types, record field names and order, union branches,
 * enum symbols, fixed sizes (names, docs, defaults and logical types
 * aside). Blocks may then be copied between files of a and b. */
int pm_avro_schema_same_layout(const pm_avro_schema *a, const pm_avro_schema *b);

/* A decoded value. Unions are resolved: `type` is the branch's type (NULL
 * for the null branch) and `branch` its index. Bytes/strings/fixed point
 * into the reader's current block and stay valid until the next call to
 * pm_avro_reader_next. */
typedef struct pm_avro_value pm_avro_value;
struct pm_avro_value {
    pm_avro_type type;
    int branch;                         /* union branch index, -1 if not a union */
    const pm_avro_schema *schema;       /* schema of the resolved value */
    union {
        int boolean;
        int32_t i;                      /* int, enum (symbol index) */
        int64_t l;
        float f;
        double d;
        struct { const uint8_t *ptr; size_t len; } bytes;   /* bytes, string, fixed */
        struct { pm_avro_value *items; size_t n; } list;    /* record fields (writer order), array items */
        struct { pm_avro_value *keys; pm_avro_value *values; size_t n; } map; /* keys are strings */
    } u;
};

/* Reader over a whole file held in memory (memory is per manifest). */
typedef struct pm_avro_reader pm_avro_reader;

/* `data` must outlive the reader. `file_name` is used in error messages.
 * Checks magic, metadata (avro.schema required; avro.codec null, deflate,
 * snappy or zstandard), sync marker. */
int pm_avro_reader_open(const uint8_t *data, size_t len, const char *file_name,
                        pm_avro_reader **out, pm_err *e);
const pm_avro_schema *pm_avro_reader_schema(const pm_avro_reader *r);

/* Optional cache of parsed writer schemas, keyed by the exact avro.schema
 * bytes, for an operation that opens many files written with the same
 * schema. Thread-safe; bounded (schemas beyond the bound are parsed per
 * reader as usual). While a cache is bound to the calling thread
 * (pm_avro_schema_cache_bind(c); unbind with NULL), pm_avro_reader_open on
 * that thread borrows schemas from it: the cache must outlive every reader
 * opened so. Without a bound cache pm_avro_reader_open is unchanged. */
typedef struct pm_avro_schema_cache pm_avro_schema_cache;
pm_avro_schema_cache *pm_avro_schema_cache_new(void);        /* NULL: out of memory */
void pm_avro_schema_cache_free(pm_avro_schema_cache *c);      /* NULL-safe */
int pm_avro_schema_cache_bind(pm_avro_schema_cache *c);       /* 0, or -1 (not bound) */
pm_avro_schema_cache *pm_avro_schema_cache_bound(void);      /* of the calling thread */
const char *pm_avro_reader_codec(const pm_avro_reader *r);
/* Raw metadata value for key, or NULL. */
const uint8_t *pm_avro_reader_meta(const pm_avro_reader *r, const char *key, size_t *len);
/* Next record: PAIMON_OK with *out (valid until the next call), PAIMON_DONE
 * at the end, PAIMON_CORRUPT with a message naming the file, block and
 * problem (bad sync, block past EOF, negative/huge lengths, bad codec data). */
int pm_avro_reader_next(pm_avro_reader *r, const pm_avro_value **out, pm_err *e);
void pm_avro_reader_close(pm_avro_reader *r);  /* NULL-safe */

/* Projection: fields the caller does not need (bit i = field i of the
 * writer-schema record `record`, one of the reader's schema nodes; fields
 * past 64 are always decoded). pm_avro_reader_next walks them with the
 * same checks but builds no value: they come back as null values with
 * branch PM_AVRO_SKIPPED. At most PM_AVRO_SKIP_MAX records; 0, or -1 (not
 * a record, or too many). */
#define PM_AVRO_SKIPPED (-2)
#define PM_AVRO_SKIP_MAX 8
typedef struct pm_avro_skip { const pm_avro_schema *record; uint64_t fields; } pm_avro_skip;
int pm_avro_reader_skip_fields(pm_avro_reader *r, const pm_avro_schema *record, uint64_t fields);

/* A filter on whole blocks: after a block is decompressed (and its header,
 * sync marker and record count checked), fn sees its bytes; when fn returns
 * 0 the block's records are not returned: they are walked with every check
 * of decoding (a garbled block fails as it would when read) but nothing is
 * built. For a caller that needs only records containing certain bytes.
 * NULL turns it off. */
typedef int (*pm_avro_block_filter)(void *ud, const uint8_t *data, size_t len);
void pm_avro_reader_block_filter(pm_avro_reader *r, pm_avro_block_filter fn, void *ud);

/* The walks of skipped fields and passed-over blocks are compiled into
 * straight-line programs once a reader has loaded 32 records (a small
 * file is walked by the generic code). For tests comparing the two: 0
 * never compiles, 1 compiles at the first block. Before the first record. */
void pm_avro_reader_compile_walks(pm_avro_reader *r, int when);

/* Share a file's blocks among several readers (one per worker): this one
 * returns only the records of the blocks whose 0-based index i has
 * i % parts == part; the others are passed over before decompression (their
 * header, size and sync marker still checked), for the reader that owns
 * them. parts <= 1: every block. */
void pm_avro_reader_block_share(pm_avro_reader *r, unsigned part, unsigned parts);

/* The block the last record came from, as stored in the file (still
 * compressed): its 1-based number (0 before the first record), record
 * count, and bytes (into the caller's file data). Once the reader has
 * returned the record after that block's last (or PAIMON_DONE), the whole
 * block was decoded with every check, trailing bytes included. */
uint64_t pm_avro_reader_block(const pm_avro_reader *r, int64_t *count, const uint8_t **raw, size_t *raw_len);

/* The next block as stored, without decompressing or decoding it, for a
 * copy whose records are described elsewhere: its framing is checked
 * (header, byte size within the file, the sync marker after it) and its
 * compressed bytes as far as that is cheap (pm_avro_check_stored; the
 * record count against the uncompressed size where that is known).
 * PAIMON_OK with the block, PAIMON_DONE at the end, PAIMON_CORRUPT naming
 * the file and block. Not mixed with pm_avro_reader_next on one reader. */
int pm_avro_reader_next_stored(pm_avro_reader *r, int64_t *count, const uint8_t **raw, size_t *raw_len, pm_err *e);

/* Writer producing a complete container file in memory. */
typedef struct pm_avro_writer pm_avro_writer;

/* codec: "null", "deflate", "snappy", "zstandard" (level used by deflate and
 * zstandard; Paimon's default is zstandard level 1). schema_json is written
 * verbatim into avro.schema. Blocks are cut when the uncompressed datum
 * buffer reaches 64000 bytes, like Java's DataFileWriter. */
int pm_avro_writer_open(const char *schema_json, const char *codec, int level,
                        pm_avro_writer **out, pm_err *e);
/* Buffer to which the caller appends one encoded datum ... */
pm_buf *pm_avro_writer_datum_buf(pm_avro_writer *w);
/* ... then calls this to count it (may flush a block). */
int pm_avro_writer_end_datum(pm_avro_writer *w, pm_err *e);
/* Flush the last block and hand over the file bytes (caller frees with
 * pm_buf_free). The writer is freed whatever the result. */
int pm_avro_writer_finish(pm_avro_writer *w, pm_buf *file_out, pm_err *e);
void pm_avro_writer_abort(pm_avro_writer *w);  /* NULL-safe */
/* Append a block of `count` records compressed with `codec` as it is
 * (Java AvroBlockWriter.addEncodedBlock): the records buffered so far are
 * flushed as their own block first, and the copy gets this file's sync
 * marker. PAIMON_MISUSE when codec is not the writer's; the caller vouches
 * that the block was written with a schema of the same layout and decodes. */
int pm_avro_writer_append_block(pm_avro_writer *w, const char *codec, int64_t count, const uint8_t *raw,
                                size_t raw_len, pm_err *e);
/* Flush the records buffered so far as their own block (as
 * pm_avro_writer_append_block does first). */
int pm_avro_writer_flush(pm_avro_writer *w, pm_err *e);
/* Bytes of the file so far: header + flushed blocks (the records of the
 * current block are not counted until it is flushed), like the position of
 * Java's output stream that RollingFileWriter checks. */
int64_t pm_avro_writer_bytes(const pm_avro_writer *w);

/* Binary encoding primitives (Avro spec: zigzag varints, little-endian
 * floats, length-prefixed bytes). */
int pm_avro_put_long(pm_buf *b, int64_t v);
int pm_avro_put_int(pm_buf *b, int32_t v);
int pm_avro_put_bool(pm_buf *b, int v);
int pm_avro_put_float(pm_buf *b, float v);
int pm_avro_put_double(pm_buf *b, double v);
int pm_avro_put_bytes(pm_buf *b, const void *p, size_t n);
int pm_avro_put_string(pm_buf *b, const char *s);   /* NUL-terminated */
/* Encode a value according to schema (for unions, v->branch picks the
 * branch). Used by tests and generic copies. */
int pm_avro_encode_value(pm_buf *b, const pm_avro_schema *s, const pm_avro_value *v, pm_err *e);

#endif
