/* A table handle (one branch of a table directory) and the live-file scan.
 * This is what the public API and the Lua binding stand on. */
#ifndef PM_TABLE_H
#define PM_TABLE_H

#include "pm_common.h"
#include "pm_fileio.h"
#include "pm_manifest.h"
#include "pm_meta.h"
#include "pm_set.h"
#include "pm_types.h"

struct paimon_table {
    pm_fileio *io;
    char **io_options;           /* what io was opened with (key, value, ..., NULL) or NULL */
    char *root;                  /* table directory: a local path or a URI as given (s3://b/t) */
    char *branch;                /* "main" or the branch name */
    char *branch_root;           /* root, or root/branch/branch-<name> */
    pm_schema *schema;           /* latest schema of the branch */
    size_t n_part;
    const char **part_keys;      /* borrowed from schema */
    pm_type **part_types;        /* borrowed from schema fields */
    const char *default_part_name;
    int legacy_part_name;
    const char *data_dir;        /* data-file.path-directory or NULL */
    pm_schema_known *schemas_known;  /* schema ids seen to exist (the *_read_known reads) */
    pm_schema **file_schemas;    /* older schemas data files were written under (pm_table_file_schema) */
    size_t n_file_schemas;
    pm_err err;                  /* last error (public API) */
};

int pm_table_open(const char *uri, const char *branch, paimon_table **out, pm_err *e);
/* pm_table_open with FileIO options (NULL or key, value, ..., NULL; see
 * pm_fileio_open), kept on the handle for the tables derived from it. */
int pm_table_open_opts(const char *uri, const char *branch, const char *const *options, paimon_table **out,
                       pm_err *e);
void pm_table_free(paimon_table *t);
/* The schema a data file was written under (its schemaId): the latest one,
 * or schema-<id> of the branch read once and kept on the handle. */
int pm_table_file_schema(paimon_table *t, int64_t id, const pm_schema **out, pm_err *e);
/* Make s (owned from now on) the handle's latest schema, as after an
 * ALTER TABLE; the previous one stays allocated (kept with the file
 * schemas) for whatever still points into it. */
int pm_table_use_schema(paimon_table *t, pm_schema *s, pm_err *e);
/* Refuse tables whose manifests we cannot read (manifest.format != avro). */
int pm_table_check_manifest_format(const paimon_table *t, pm_err *e);
/* Full path of a file in manifest/ (malloc'd). */
char *pm_table_manifest_path(const paimon_table *t, const char *name);
char *pm_table_index_path(const paimon_table *t, const char *name);
/* Open a manifest-family file of this table, checking the format option. */
int pm_table_open_manifest(const paimon_table *t, const char *name, pm_manifest_kind kind,
                           pm_manifest_reader **out, pm_err *e);
/* The same with the size the metadata records (-1: unknown). */
int pm_table_open_manifest_sized(const paimon_table *t, const char *name, int64_t size, pm_manifest_kind kind,
                                 pm_manifest_reader **out, pm_err *e);
/* Decode partition bytes into n_part datums (strings point into `part`). */
int pm_table_partition_decode(const paimon_table *t, pm_bytes part, pm_datum *vals, pm_err *e);
/* "k=v/k2=v2/" as Java renders it ("" unpartitioned). */
int pm_table_partition_path(const paimon_table *t, pm_bytes part, pm_buf *out, pm_err *e);
/* Path of a data file relative to the table directory (or the external
 * path when the entry has one); NUL-terminated in out. */
int pm_table_file_path(const paimon_table *t, const pm_manifest_entry *m, pm_buf *out, pm_err *e);
/* Identifier of a data file (Java FileEntry.Identifier) as bytes. */
int pm_file_identifier(const pm_manifest_entry *m, pm_buf *out);

/* File paths of the maintenance operations (expire, orphan cleaning,
 * verify); a name from metadata that is not a plain file name is
 * PAIMON_CORRUPT. */
/* Full path of an index file of entry ie
 * (external path, bucket directory with index-file-in-data-file-dir, or
 * index/). */
int pm_index_file_path(const paimon_table *t, const pm_index_entry *ie, pm_buf *out, pm_err *e);
/* Full path of a data file of entry m (root + pm_table_file_path, or the
 * external path). */
int pm_data_file_full_path(const paimon_table *t, const pm_manifest_entry *m, pm_buf *out, pm_err *e);
/* PAIMON_OK when path (a file path from the two above) is on t's FileIO;
 * else PAIMON_UNSUPPORTED naming it: an external path on another file
 * system (a local table with s3:// external paths) is not read through a
 * guess. Checks and deletions skip such paths (they are outside the table). */
int pm_table_reachable(const paimon_table *t, const char *path, pm_err *e);
/* <directory of data_path>/<extra> for an _EXTRA_FILES name (checked: a
 * plain file name). */
int pm_extra_file_path(const char *data_path, const char *extra, const char *root, pm_buf *out, pm_err *e);
/* <table>/<sub>/<name> for a metadata file name from a snapshot or list
 * (checked: a plain file name). */
int pm_table_meta_path(const paimon_table *t, const char *sub, const char *name, pm_buf *out, pm_err *e);
/* Open branch `name` of t's table sharing t's FileIO (and so its
 * options); free with pm_table_free_shared. */
int pm_table_open_shared(paimon_table *t, const char *branch, paimon_table **out, pm_err *e);
void pm_table_free_shared(paimon_table *bt);

/* Partition filter: equality on some partition columns. A value of NULL
 * or the default partition name matches null partitions. Values match the
 * rendered text (legacy or CAST form, e.g. DATE as 19724 or 2024-01-01). */
typedef struct pm_partition_filter {
    size_t n;
    const char **keys;
    const char **values;
} pm_partition_filter;
int pm_partition_filter_check(const paimon_table *t, const pm_partition_filter *f, pm_err *e);
/* 1 if the partition bytes match, 0 if not, <0 on error (code negated). */
int pm_partition_matches(const paimon_table *t, const pm_partition_filter *f, pm_bytes part, pm_err *e);

/* Manifest metadata copied out of a manifest list. */
typedef struct pm_mfile {
    char *name;
    int64_t size, added, deleted, schema_id;
    uint8_t *pmin, *pmax;
    size_t pmin_len, pmax_len;
} pm_mfile;
/* Append every ManifestFileMeta of list file `list_name` to *v. */
int pm_read_manifest_list(const paimon_table *t, const char *list_name, pm_mfile **v, size_t *n,
                          pm_err *e);
/* The same with the list's size from its snapshot (-1: unknown). */
int pm_read_manifest_list_sized(const paimon_table *t, const char *list_name, int64_t size, pm_mfile **v,
                                size_t *n, pm_err *e);
void pm_mfiles_free(pm_mfile *v, size_t n);
/* Append a copy of one ManifestFileMeta to *v (*cap: its room). */
int pm_mfile_append(pm_mfile **v, size_t *n, size_t *cap, const pm_manifest_meta *m, pm_err *e);

/* Live data files of a snapshot: DELETE identifiers first (from manifests
 * with deletions), then ADD entries not deleted, streamed manifest by
 * manifest; memory holds the deletions, never the whole table. */
typedef struct pm_scan pm_scan;
int pm_scan_open(paimon_table *t, const pm_snapshot *s, const pm_partition_filter *f,
                 pm_scan **out, pm_err *e);
/* The same over s's manifests read already (files: base then delta list,
 * taken over, freed also on failure): no request for the lists. */
int pm_scan_open_files(paimon_table *t, const pm_snapshot *s, pm_mfile *files, size_t n, pm_scan **out, pm_err *e);
int pm_scan_next(pm_scan *sc, const pm_manifest_entry **out, pm_err *e);
size_t pm_scan_manifests_pruned(const pm_scan *sc);
void pm_scan_close(pm_scan *sc);

#endif
