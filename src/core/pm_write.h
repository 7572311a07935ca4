/* The write operations both faces share (paimon.h and the Lua binding):
 * a table from a column spec, a row writer over paimon_value (the type
 * rules of pm_value, rows into pm_datafile's append writer), commit with
 * Java's empty-commit rule, and abort (delete the files a failed commit's
 * messages add, unless a snapshot adds them). See docs/writing.md. */
#ifndef PM_WRITE_H
#define PM_WRITE_H

#include "pm_commit.h"
#include "pm_datafile.h"
#include "pm_value.h"

/* Build a schema from spec (types parsed by pm_type_parse_sql; options
 * sorted by key before Java's HashMap order is applied) and create the
 * table (pm_create_table_opts with the FileIO options, NULL or key,
 * value, ..., NULL). PAIMON_MISUSE naming spec.fields[i] (1-based) for a
 * column without name or type, or with a type that does not parse. */
int pm_create_from_spec(const char *path, const paimon_table_spec *spec, const char *const *options, pm_err *e);

/* paimon_writer of paimon.h: the append writer plus the row being built. */
struct paimon_writer {
    paimon_table *t;
    pm_append_writer *w;
    size_t n;
    pm_datum *row;              /* one per column; is_null until set */
    uint8_t (*dec)[16];         /* wide decimals of the row */
    pm_buf *cbuf;               /* Avro encoding of composite columns */
    int64_t rows;
};

int pm_writer_open(paimon_table *t, paimon_writer **out, pm_err *e);
/* Convert v for column col (top-level nulls of NOT NULL columns refused
 * with "column 'c' is NOT NULL but the value is null"). Strings are not
 * copied until the row is written. On failure the column is unset (NULL). */
int pm_writer_set(paimon_writer *w, size_t col, const paimon_value *v, pm_err *e);
/* Unset every column of the row being built. */
void pm_writer_clear_row(paimon_writer *w);
/* Write the row built so far, then unset every column. */
int pm_writer_write_row(paimon_writer *w, pm_err *e);
/* The table is going away first: forget it (files already written stay). */
void pm_writer_detach(paimon_writer *w);
void pm_writer_free(paimon_writer *w);   /* NULL-safe; deletes files not handed out */

/* What a commit handle (the C API's paimon_commit, the Lua binding's)
 * remembers between its commits; zero-initialise. */
typedef struct pm_commit_history {
    int64_t first_seen;   /* the latest id before its first commit + 1 (0: none yet): where abort
                             starts looking for snapshots of this committer */
    int uncertain;        /* a commit ended with an unknown outcome (PAIMON_UNCERTAIN): its snapshot
                             may exist, so abort deletes nothing from then on */
} pm_commit_history;

/* Commit entries as one snapshot, except that no entries and a kind other
 * than COMPACT (unless force) commit nothing, as Java's batch commit skips
 * empty commits: *created 0 and *snapshot_id the latest id (0 if none). */
int pm_write_commit(paimon_table *t, const pm_manifest_entry *ents, size_t n, const pm_commit_opts *o,
                    int force, pm_commit_history *h, int64_t *snapshot_id, int *created, pm_err *e);

/* Delete the data files the ADD entries name, except those a snapshot
 * from h->first_seen on adds (a commit whose snapshot write had an unknown
 * outcome may have landed); through the cleanup deleter (inside the table
 * directory only). Nothing is deleted when the snapshots cannot be read,
 * nor after a commit of this handle ended uncertain (a snapshot that reads
 * as missing now may still be there): every ADD counts as kept. */
int pm_write_abort(paimon_table *t, const pm_commit_history *h, const pm_manifest_entry *ents, size_t n,
                   int64_t *removed, int64_t *kept, pm_err *e);

#endif
