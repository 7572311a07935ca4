/* ALTER TABLE: Java's SchemaManager.commitChanges. A list of schema changes
 * (Java's SchemaChange kinds) applied to the latest schema of a branch gives
 * schema-(N+1), written without replacing; a concurrent alter that took N+1
 * first makes it re-read and re-apply. Java's validation: no drop of a
 * partition or primary key, no rename of a partition key, no type change of
 * either, only the type changes DataTypeCasts + CastExecutors allow, the
 * immutable options (CoreOptions @Immutable) and the bucket / deletion
 * vector / ignore-delete rules of checkAlterTableOption once the table has
 * a snapshot, field ids from highestFieldId + 1, never reused. Options are
 * written in the order Java's HashMap copies leave them. docs/alter.md. */
#ifndef PM_ALTER_H
#define PM_ALTER_H

#include "pm_common.h"
#include "pm_meta.h"
#include "pm_table.h"

typedef enum pm_alter_kind {
    PM_ALTER_SET_OPTION,              /* name = key, value = value */
    PM_ALTER_REMOVE_OPTION,           /* name = key */
    PM_ALTER_UPDATE_COMMENT,          /* value = table comment (NULL: none) */
    PM_ALTER_ADD_COLUMN,              /* name, value = type SQL, comment, first / after */
    PM_ALTER_RENAME_COLUMN,           /* name -> value */
    PM_ALTER_DROP_COLUMN,             /* name */
    PM_ALTER_UPDATE_COLUMN_TYPE,      /* name, value = type SQL (nullability kept unless it says NULL / NOT NULL) */
    PM_ALTER_UPDATE_COLUMN_NULLABILITY, /* name, nullable */
    PM_ALTER_UPDATE_COLUMN_COMMENT,   /* name, comment */
    PM_ALTER_UPDATE_COLUMN_POSITION   /* name, first / after */
} pm_alter_kind;

typedef struct pm_schema_change {
    pm_alter_kind kind;
    const char *name;
    const char *value;
    const char *comment;     /* ADD_COLUMN, UPDATE_COLUMN_COMMENT (NULL: none) */
    const char *after;       /* ADD_COLUMN, UPDATE_COLUMN_POSITION: reference column */
    int first;               /* ADD_COLUMN, UPDATE_COLUMN_POSITION */
    int nullable;            /* UPDATE_COLUMN_NULLABILITY */
} pm_schema_change;

/* Java's SchemaChange kind names ("setOption", "removeOption",
 * "updateComment", "addColumn", "renameColumn", "dropColumn",
 * "updateColumnType", "updateColumnNullability", "updateColumnComment",
 * "updateColumnPosition"). */
const char *pm_alter_kind_name(pm_alter_kind k);

/* Apply the changes to old (Java's generateTableSchema): a new schema with
 * id old->id + 1, timeMillis now. has_snapshots enables the option checks.
 * A refused change -> PAIMON_MISUSE with Java's message. */
int pm_alter_apply(const pm_schema *old, const pm_schema_change *c, size_t n, int has_snapshots,
                   pm_schema **out, pm_err *e);
/* The same, naming the table in messages as Java does ("db.table"). */
int pm_alter_apply_named(const pm_schema *old, const pm_schema_change *c, size_t n, int has_snapshots,
                         const char *table, pm_schema **out, pm_err *e);

/* Java DataTypeCasts.supportsCast(src, dst, allow_explicit) && a
 * CastExecutors rule exists. */
int pm_alter_cast_allowed(const pm_type *src, const pm_type *dst, int allow_explicit);

/* Java's HashMap iteration order of options after a copy (new
 * HashMap<>(map)): kv reordered in place. */
int pm_java_hashmap_copy_order(pm_kv *kv, size_t n);

/* commitChanges on t's branch: read the latest schema, apply, create
 * schema-(N+1) without replacing; when another writer took N+1, re-read
 * and re-apply (a change no longer applicable -> PAIMON_CONFLICT naming the
 * schema that won). dry_run: nothing written. *out: the new schema. t's own
 * schema is not refreshed (open the table again). */
int pm_alter_table(paimon_table *t, const pm_schema_change *c, size_t n, int dry_run, pm_schema **out,
                   pm_err *e);

#endif
