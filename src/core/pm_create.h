/* Create a table: schema/schema-0 as Java's SchemaManager.createTable writes
 * it (field ids from one depth-first counter, primary-key columns NOT NULL,
 * highestFieldId, version 3, options in Java HashMap order), created without
 * replacing. See paimon-format.md §1.1, §3 and docs/writing.md. */
#ifndef PM_CREATE_H
#define PM_CREATE_H

#include "pm_common.h"
#include "pm_meta.h"

/* Parse a column type as users write it: every atomic type string
 * (pm_type_parse_atomic) plus ARRAY<T>, MULTISET<T>, MAP<K, V> and
 * ROW<name T, ...> (names plain or `quoted`), each with an optional
 * NOT NULL. */
int pm_type_parse_sql(const char *s, pm_type **out, pm_err *e);

/* Java's String.hashCode over the UTF-16 code units of a UTF-8 string
 * (the bucket order of the HashMap Java keeps options in). */
int32_t pm_java_string_hash(const char *s);

/* Normalize a caller-built schema for a new table in place: version 3,
 * id 0, field ids (nested ROW fields included) from 0 depth-first,
 * highestFieldId, primary-key columns NOT NULL, options reordered as
 * Java's HashMap iterates them, timeMillis = now when 0. Validates names
 * (non-empty, unique), partition/primary keys (existing, unique, primary
 * key includes the partition keys and differs from them) and the bucket
 * option; PAIMON_MISUSE with a message otherwise. */
int pm_create_normalize(pm_schema *s, pm_err *e);

/* Normalize s and write <uri>/schema/schema-0 (create-no-replace).
 * PAIMON_EXISTS when the table already has a schema. */
int pm_create_table(const char *uri, pm_schema *s, pm_err *e);
/* pm_create_table through a FileIO opened with options (see pm_fileio_open). */
int pm_create_table_opts(const char *uri, pm_schema *s, const char *const *options, pm_err *e);

/* Java's checks on a schema's options that create and alter share: bucket
 * (a positive count, -1 or -2), snapshot/changelog num-retained (at least
 * 1, min <= max); PAIMON_MISUSE naming the options. */
int pm_schema_check_options(const pm_schema *s, pm_err *e);

#endif
