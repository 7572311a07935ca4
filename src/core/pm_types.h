/* Paimon data types, BinaryRow encoding and partition path rendering. */
#ifndef PM_TYPES_H
#define PM_TYPES_H

#include "pm_common.h"

typedef enum pm_type_root {
    PM_T_BOOLEAN, PM_T_TINYINT, PM_T_SMALLINT, PM_T_INT, PM_T_BIGINT,
    PM_T_FLOAT, PM_T_DOUBLE, PM_T_DECIMAL, PM_T_CHAR, PM_T_VARCHAR,
    PM_T_BINARY, PM_T_VARBINARY, PM_T_DATE, PM_T_TIME, PM_T_TIMESTAMP,
    PM_T_TIMESTAMP_LTZ, PM_T_ARRAY, PM_T_MAP, PM_T_MULTISET, PM_T_ROW,
    PM_T_VARIANT, PM_T_BLOB, PM_T_VECTOR
} pm_type_root;

typedef struct pm_type pm_type;
typedef struct pm_data_field {
    int32_t id;
    char *name;
    pm_type *type;
    char *description;     /* NULL if absent */
    char *default_value;   /* NULL if absent */
} pm_data_field;

struct pm_type {
    pm_type_root root;
    int nullable;
    int32_t precision;     /* DECIMAL, TIME, TIMESTAMP(_LTZ) */
    int32_t scale;         /* DECIMAL */
    int32_t length;        /* CHAR/VARCHAR/BINARY/VARBINARY/VECTOR */
    pm_type *element;      /* ARRAY, MULTISET, VECTOR element; MAP key */
    pm_type *value;        /* MAP value */
    size_t n_fields;       /* ROW */
    pm_data_field *fields;
};

/* Parse an atomic type string as Java writes it ("INT NOT NULL",
 * "DECIMAL(10, 2)", "STRING", "TIMESTAMP(6) WITH LOCAL TIME ZONE", also the
 * parser's aliases INTEGER, NUMERIC, DEC, TIMESTAMP_LTZ ...). Composite types
 * are built by the JSON layer. */
int pm_type_parse_atomic(const char *s, pm_type **out, pm_err *e);
pm_type *pm_type_new(pm_type_root root, int nullable);
void pm_type_free(pm_type *t);                 /* NULL-safe, frees children */
pm_type *pm_type_clone(const pm_type *t);
/* Java's asSQLString: "INT NOT NULL", "DECIMAL(10, 2)", "STRING" ... */
int pm_type_to_sql(const pm_type *t, pm_buf *out);
/* Java type root name, e.g. "INT", "VARCHAR". */
const char *pm_type_root_name(pm_type_root r);

/* One BinaryRow field value. */
typedef struct pm_datum {
    int is_null;
    union {
        int64_t i;        /* BOOLEAN(0/1), TINYINT..BIGINT, DATE (days), TIME (ms of day),
                             DECIMAL with precision <= 18 (unscaled) */
        float f;
        double d;
        struct { const uint8_t *ptr; size_t len; } bin;  /* CHAR/VARCHAR (UTF-8), BINARY/VARBINARY,
                             DECIMAL precision > 18: unscaled big-endian two's complement */
        struct { int64_t millis; int32_t nanos_of_milli; } ts;  /* TIMESTAMP(_LTZ) */
    } v;
} pm_datum;

/* Decode serialized BinaryRow bytes ([arity int32 BE][row]) against `types`.
 * The arity must equal n. Var-length data points into `ser`. Malformed rows
 * (short, offsets out of range, bad arity) -> PAIMON_CORRUPT. */
int pm_binrow_decode(const uint8_t *ser, size_t len, pm_type *const *types, size_t n,
                     pm_datum *out, pm_err *e);
/* Arity of serialized bytes, -1 if shorter than 4 bytes. */
int32_t pm_binrow_arity(const uint8_t *ser, size_t len);
/* Encode canonical bytes exactly as Java's BinaryRowWriter (with the BE
 * arity prefix) appended to out. */
int pm_binrow_encode(pm_type *const *types, size_t n, const pm_datum *vals, pm_buf *out, pm_err *e);
/* The minimal form (BigInteger.toByteArray) of big-endian two's complement
 * bytes (n >= 1): *mp points into p, *mn bytes long. */
void pm_twos_complement_minimal(const uint8_t *p, size_t n, const uint8_t **mp, size_t *mn);

/* Java's toString of the internal value (partition.legacy-name = true):
 * DATE as day count, TIMESTAMP as LocalDateTime ISO, FLOAT/DOUBLE as Java
 * Float/Double.toString, DECIMAL toPlainString. Appends to out. legacy = 0
 * renders CAST(... AS STRING) instead (DATE as yyyy-MM-dd ...). */
int pm_datum_to_string(const pm_type *t, const pm_datum *d, int legacy, pm_buf *out);
/* Hive-style escaping of a path name component (%XX for the listed chars). */
int pm_escape_path_name(const char *s, size_t n, pm_buf *out);
/* Unescape %XX sequences. */
int pm_unescape_path_name(const char *s, size_t n, pm_buf *out);
/* Render "k1=v1/k2=v2/" (trailing slash; "" for no keys). Null, empty or
 * whitespace-only values render as default_name. */
int pm_partition_path(const char *const *keys, pm_type *const *types, size_t n,
                      const pm_datum *vals, const char *default_name, int legacy,
                      pm_buf *out);

#endif
