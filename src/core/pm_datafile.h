/* Avro data files of append-only tables: the writer (rows -> data files
 * laid out and typed as Java Paimon's AvroFileFormat writes them, with
 * SimpleStats value statistics, rolling at target-file-size) and the reader
 * (rows of a data file mapped by field name onto the table schema).
 * See docs/writing.md and paimon-format.md §1.2, §4.1, §4.3, §9.2. */
#ifndef PM_DATAFILE_H
#define PM_DATAFILE_H

#include "pm_avro.h"
#include "pm_table.h"

/* Avro schema JSON of a data file holding these columns, as Java's
 * AvroSchemaConverter builds it and Avro's Schema.toString prints it
 * (record "org.apache.paimon.avro.generated.record", nullable -> ["null", T]
 * with "default": null, nested records "record_<field>[_<field>...]", maps
 * with non-string keys as arrays of {key, value} records with logicalType
 * "map"). VARIANT/VECTOR, TIME(p > 3), TIMESTAMP(p > 6) and names that are
 * not Avro names -> PAIMON_UNSUPPORTED naming the column. Appends to out. */
int pm_datafile_avro_schema(const pm_data_field *fields, size_t n, pm_buf *out, pm_err *e);

/* Avro codec name and level for data files of a table: avro.codec if set,
 * else file.compression (zstd -> "zstandard" at file.compression.zstd-level,
 * none -> "null"). PAIMON_UNSUPPORTED for codecs we cannot write. */
int pm_datafile_codec(const pm_schema *s, const char **codec, int *level, pm_err *e);

/* Can the append writer write this table? (file.format avro, no primary
 * key, bucket -1, no row tracking / data evolution, atomic column types
 * Avro can hold.) PAIMON_UNSUPPORTED with a message naming the option or
 * column otherwise. */
int pm_append_check(const paimon_table *t, pm_err *e);

typedef struct pm_append_writer pm_append_writer;

/* The writer borrows t (must outlive it) and uses t's latest schema. */
int pm_append_writer_open(paimon_table *t, pm_append_writer **out, pm_err *e);
/* The schema the writer writes under: t's latest when it was opened. */
const pm_schema *pm_append_writer_schema(const pm_append_writer *w);
/* Avro encoding of one value of type t (with the ["null", T] branch index
 * when t is nullable), as Java's FieldWriterFactory writes it. Values of
 * ARRAY/MAP/MULTISET/ROW type are passed already encoded: v.bin holds the
 * Avro binary of the non-null value. */
int pm_datafile_encode_value(pm_buf *b, const pm_type *t, const pm_datum *d, const char *col, pm_err *e);

/* One row: a datum per schema field, in schema order (var-length data is
 * copied; composite columns as for pm_datafile_encode_value). NOT NULL columns must not be null (PAIMON_MISUSE). A failed
 * write leaves the writer unusable (PAIMON_MISUSE afterwards). */
int pm_append_writer_write(pm_append_writer *w, const pm_datum *row, pm_err *e);
/* Close every open file and hand out one ADD ManifestEntry per data file
 * written since open or the previous call. The entries stay valid until
 * the next call or pm_append_writer_free. */
int pm_append_writer_prepare(pm_append_writer *w, const pm_manifest_entry **entries, size_t *n,
                             pm_err *e);
/* Delete the files written since open or the previous prepare (not the
 * ones already handed out) and drop the open ones. Returns the first
 * deletion error, trying all. */
int pm_append_writer_discard(pm_append_writer *w, pm_err *e);
size_t pm_append_writer_pending_files(const pm_append_writer *w);
/* The table is going away: forget it. Pending files are left on disk (not
 * deleted), open files dropped; only pm_append_writer_free may follow. */
void pm_append_writer_detach(pm_append_writer *w);
void pm_append_writer_free(pm_append_writer *w);            /* NULL-safe; discards */

/* Value statistics mode of a column: metadata.stats-mode or
 * fields.<name>.stats-mode: PM_STATS_NONE, COUNTS, FULL, TRUNCATE (len). */
enum { PM_STATS_NONE, PM_STATS_COUNTS, PM_STATS_FULL, PM_STATS_TRUNCATE };
int pm_stats_mode(const pm_schema *s, const char *field, int *mode, int *trunc_len, pm_err *e);

/* ---- reader ---- */
typedef struct pm_datafile_reader pm_datafile_reader;

/* Read the data file of entry m (whole file in memory) and map the n
 * fields (the table's latest schema) by field id onto the schema the file
 * was written under (its schemaId), as Java's SchemaEvolutionUtil: renamed
 * columns are read from their old name, added ones are NULL, dropped ones
 * never read; a changed type is cast as Java casts (integer widening and
 * narrowing, integers and floats, DECIMAL scale up, wider VARCHAR, to
 * STRING), any other change -> PAIMON_UNSUPPORTED naming the column.
 * Non-Avro files -> PAIMON_UNSUPPORTED naming the file. */
int pm_datafile_reader_open(paimon_table *t, const pm_manifest_entry *m,
                            const pm_data_field *fields, size_t n, pm_datafile_reader **out,
                            pm_err *e);
/* The same for a file at `full` (shown as `display`) written under schema
 * schema_id of t's branch. */
int pm_datafile_reader_open_evolved(paimon_table *t, int64_t schema_id, const char *full, const char *display,
                                    const pm_data_field *fields, size_t n, pm_datafile_reader **out, pm_err *e);
/* Over a file path, fields[i] read from the file's column names[i] (NULL:
 * not in the file; names are only looked at here, fields stay borrowed). */
int pm_datafile_reader_open_names(pm_fileio *io, const char *path, const char *display, const pm_data_field *fields,
                                  const char *const *names, size_t n, pm_datafile_reader **out, pm_err *e);
/* Same over a file path (full path), fields matched by name. */
int pm_datafile_reader_open_path(pm_fileio *io, const char *path, const char *display,
                                 const pm_data_field *fields, size_t n, pm_datafile_reader **out,
                                 pm_err *e);
/* Next row: PAIMON_OK with vals[i] (atomic columns; is_null for NULL or
 * a column missing from the file) and raw[i] (the Avro value, NULL when
 * missing or null; the only representation for ARRAY/MAP/ROW columns),
 * PAIMON_DONE at the end. Everything points into the reader and stays
 * valid until the next call. raw may be NULL. */
int pm_datafile_reader_next(pm_datafile_reader *r, pm_datum *vals, const pm_avro_value **raw,
                            pm_err *e);
void pm_datafile_reader_close(pm_datafile_reader *r);     /* NULL-safe */
/* 1 if the file has a column named fields[i].name, else 0. */
int pm_datafile_reader_has(const pm_datafile_reader *r, size_t i);

/* A data file's value stats as the table's latest schema sees them (Java's
 * SimpleStatsEvolution): per latest field, by field id through the schema
 * the file was written under, min/max (is_null: unknown) and the null
 * count (-1: unknown); columns added later or not collected are unknown,
 * dropped ones are not shown, changed types are cast as on read (a cast
 * we cannot do: unknown). Values may point into f and into scratch (2 per
 * field). n = t->schema->n_fields entries each. */
int pm_value_stats_evolve(paimon_table *t, const pm_data_file *f, pm_datum *mins, pm_datum *maxs, int64_t *nulls,
                          pm_buf *scratch, pm_err *e);

/* Avro value (already resolved) -> datum of Paimon type ty; atomic types. */
int pm_datafile_to_datum(const pm_type *ty, const pm_avro_value *v, const char *column,
                         pm_datum *d, pm_err *e);


#endif
