/* Tables of a warehouse, in Java Paimon's filesystem catalog layout:
 * WAREHOUSE/<database>.db/<table>/ with schema/schema-N in each table. The
 * one home of table discovery (remove_orphan_files.lua over a warehouse or
 * a database; maintain.lua next). Works on any FileIO through pm_io_list:
 * a local readdir, or S3 ListObjectsV2 with the '/' delimiter. */
#ifndef PM_WAREHOUSE_H
#define PM_WAREHOUSE_H

#include "pm_fileio.h"

typedef enum { PM_WH_TABLE = 1, PM_WH_DATABASE, PM_WH_WAREHOUSE } pm_wh_kind;

typedef struct pm_table_ref {
    char *database;      /* "" when a table path's parent is not <name>.db */
    char *table;
    char *path;          /* the table's URI: uri joined with db/table */
} pm_table_ref;

/* The tables below uri, sorted by database then table. uri is a table
 * (a directory with schema/schema-N: just it), a database (a directory
 * named <name>.db: its tables) or a warehouse (its <name>.db databases'
 * tables). db_pattern and table_pattern (NULL: "*") are shell globs
 * (fnmatch) on the database name (without ".db") and the table name; a
 * table path is matched against them too. Entries whose name starts with
 * '.', and symlinks, are never looked into. *kind says what uri was.
 * A missing uri is PAIMON_NOTFOUND; a directory listing that fails fails
 * the call (naming it). */
int pm_warehouse_tables(pm_fileio *io, const char *uri, const char *db_pattern, const char *table_pattern,
                        pm_table_ref **out, size_t *n, pm_wh_kind *kind, pm_err *e);
void pm_table_refs_free(pm_table_ref *v, size_t n);   /* NULL-safe */
const char *pm_wh_kind_name(pm_wh_kind k);            /* "table", "database", "warehouse" */

#endif
