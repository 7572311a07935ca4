/* FileIO: every byte the core reads or writes goes through this interface,
 * chosen by URI scheme. Local file system now; object stores later; tests
 * wrap it to inject faults. All paths are full paths (or URIs). */
#ifndef PM_FILEIO_H
#define PM_FILEIO_H

#include "pm_common.h"

typedef struct pm_fileio pm_fileio;

typedef struct pm_stat {
    int64_t size;
    int64_t mtime_ms;   /* modification time, epoch milliseconds */
    int is_dir;
} pm_stat;

/* list_tree callback: rel is relative to the listed dir ("a/b/file"). */
typedef int (*pm_tree_cb)(void *ctx, const char *rel, const pm_stat *st, pm_err *e);

/* caps: directories are not objects (an object store): mkdirs does nothing,
 * there are no empty directories to remove, a "directory" exists when some
 * key has it as prefix. */
#define PM_IO_VIRTUAL_DIRS 1u
/* caps: a local file system (pm_local_path gives the OS path). */
#define PM_IO_LOCAL 2u

typedef struct pm_dirent {
    char *name;         /* entry name (no directory part), malloc'd */
    int is_dir;         /* a directory, or (local) a symlink to one */
    int is_link;        /* local: a symbolic link (is_dir says what it points at); never on object stores */
} pm_dirent;

/* Internal result of remove_within: the path leaves the root directory. */
#define PM_IO_OUTSIDE 200
/* Internal result of remove_batch with PM_RM_STOP_ON_FAILURE: not tried
 * after an earlier item of the batch failed. */
#define PM_IO_NOT_TRIED 201
/* remove_within flags */
#define PM_RM_DRY_RUN 1
#define PM_RM_EMPTY_DIR 2
/* remove_batch only: after an item fails (pm_rm_failed), try none of the
 * later ones (PM_IO_NOT_TRIED): ordered deletions such as snapshot files
 * must leave no gap. A store's batch (one request) is sent whole. */
#define PM_RM_STOP_ON_FAILURE 4
/* Whether a remove_within result is a failure that stops ordered
 * deletions: not done, yet neither missing nor refused as outside. */
static inline int pm_rm_failed(int rc) {
    return rc != PAIMON_OK && rc != PAIMON_NOTFOUND && rc != PM_IO_OUTSIDE && rc != PM_IO_NOT_TRIED;
}

/* Operations. Each returns PAIMON_OK or a code with *e filled; messages name
 * the path and include strerror text. A missing path is PAIMON_NOTFOUND. */
typedef struct pm_fileio_ops {
    const char *scheme;   /* "file" */
    int (*read_all)(pm_fileio *io, const char *path, pm_buf *out, pm_err *e);
    int (*list)(pm_fileio *io, const char *dir, pm_dirent **out, size_t *n, pm_err *e);
    int (*stat)(pm_fileio *io, const char *path, pm_stat *st, pm_err *e);
    int (*exists)(pm_fileio *io, const char *path, int *exists, pm_err *e);
    /* Write `path` with temp file `.<name>.<uuid>.tmp` + rename (replaces). */
    int (*write_atomic)(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e);
    /* Create `path` with the content, never replacing: PAIMON_EXISTS if it
     * exists. The file appears complete or not at all. PAIMON_UNCERTAIN:
     * it is in place but its directory could not be synced (it may not
     * survive a crash); the caller must not report success. */
    int (*create_no_replace)(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e);
    int (*remove)(pm_fileio *io, const char *path, pm_err *e);
    /* Remove the file root/rel (rel: relative, no empty, "." or ".."
     * component), reaching it from root without following a symlink on the
     * way, so a directory swapped for a symlink meanwhile cannot redirect
     * the deletion outside root; a symlink as the last component is removed
     * itself. flags: PM_RM_DRY_RUN only looks; PM_RM_EMPTY_DIR removes
     * root/rel only if it is an empty directory (PAIMON_EXISTS if it is not
     * empty). *st gets what was (or would be) removed. PAIMON_NOTFOUND if
     * it is missing, PM_IO_OUTSIDE if a directory on the way is a symlink
     * or not a directory; without PM_RM_EMPTY_DIR a directory is never
     * removed. */
    int (*remove_within)(pm_fileio *io, const char *root, const char *rel, int flags, pm_stat *st, pm_err *e);
    int (*mkdirs)(pm_fileio *io, const char *path, pm_err *e);
    void (*destroy)(pm_fileio *io);
    /* PM_IO_* capability bits. */
    unsigned caps;
    /* Optional (NULL: pm_io_list_tree walks list + stat). Every file under
     * `dir` (and every directory marker object, is_dir 1: see
     * pm_io_list_tree_dirs), recursively, streamed to cb with its path
     * relative to dir, size and mtime; order unspecified; memory bounded
     * whatever the number of files. A missing dir lists nothing. cb returns
     * nonzero to stop: that code is returned (with *e as cb left it). */
    int (*list_tree)(pm_fileio *io, const char *dir, pm_tree_cb cb, void *cb_ctx, pm_err *e);
    /* Optional (NULL: pm_io_remove_batch calls remove_within per item).
     * remove_within for n items under one root at once (object stores: one
     * DeleteObjects request per 1000 keys). Only flags PM_RM_DRY_RUN and
     * PM_RM_STOP_ON_FAILURE.
     * Per item: rcs[i] is what remove_within would return for it, sts[i]
     * what was removed (size may be -1 when the store does not say) and
     * msgs[i] a malloc'd message when rcs[i] is not OK (caller frees).
     * Returns PAIMON_OK when every item has its rcs[i], or a code (with *e)
     * when the batch as a whole could not be tried. */
    int (*remove_batch)(pm_fileio *io, const char *root, const char *const *rels, size_t n, int flags,
                        pm_stat *sts, int *rcs, char **msgs, pm_err *e);
} pm_fileio_ops;

struct pm_fileio {
    const pm_fileio_ops *ops;
    void *ctx;
    /* Requests the store serves well at once (object stores: the wait is
     * the network's, not a CPU's; S3: s3.max-connections); 0: no more than
     * the caller's threads (the local file system). */
    int parallel_requests;
};

/* Chooses the implementation for the URI's scheme (none or file:// = local;
 * s3:// and s3a:// = S3). `options`: NULL or key, value, ..., NULL pairs
 * (Paimon's names: s3.endpoint, s3.access-key, s3.secret-key, s3.region,
 * s3.path.style.access, ...); options outside a FileIO's namespace are
 * ignored (they are table options too), a key in it that it does not know
 * is PAIMON_MISUSE (pm_fileio_options_check). No message may hold the
 * value of a key pm_option_is_secret names. Unknown schemes ->
 * PAIMON_UNSUPPORTED naming the scheme. */
int pm_fileio_open(const char *uri, const char *const *options, pm_fileio **out, pm_err *e);
/* Whether `key` is one of the options the FileIO for uri's scheme knows
 * (s3:// and s3a://: Paimon's s3.* names). */
int pm_fileio_option_known(const char *uri, const char *key);
/* Checks options before pm_fileio_open uses them: pairs complete, keys
 * non-empty, and a key in the namespace of uri's FileIO ("s3." for
 * s3:// and s3a://) known to it (a misspelt s3.endpoint must not fall back
 * to a default). PAIMON_MISUSE naming the key, never the value. */
int pm_fileio_options_check(const char *uri, const char *const *options, pm_err *e);
/* Whether two paths or URIs are served by the same FileIO (local paths and
 * file:; s3: and s3a:; otherwise the same scheme). */
int pm_uri_same_fileio(const char *a, const char *b);
/* 1 if uri is a store URI that names no key below its bucket ("s3://b",
 * "s3://b/"): a table there would share its prefix with the whole bucket. */
int pm_uri_is_bucket_root(const char *uri);
#define PM_BUCKET_ROOT_MSG "%s: the URI names a whole bucket, no table: give the table's key " \
                           "below it (s3://bucket/warehouse/db.db/table)"
/* Whether the value of option `key` is a credential that must never be
 * printed (keys containing secret, password, token, access-key,
 * access.key or session, in any case). */
int pm_option_is_secret(const char *key);
/* Copy of a key, value, ..., NULL array (NULL for NULL); *out NULL and
 * PAIMON_NOMEM on failure. pm_options_free frees it. */
int pm_options_dup(const char *const *options, char ***out, pm_err *e);
void pm_options_free(char **options);
/* The S3 opener pm_fileio_open calls for s3:// and s3a:// (default
 * pm_fileio_s3_open). Tests replace it to see what reaches the FileIO;
 * returns the previous one; NULL restores the default. Not thread-safe:
 * set it before opening tables. */
typedef int (*pm_fileio_opener)(const char *uri, const char *const *options, pm_fileio **out, pm_err *e);
pm_fileio_opener pm_fileio_set_s3_opener(pm_fileio_opener opener);
/* A local directory seen through URIs: `prefix` + rest maps to
 * `local_dir` + rest. Not PM_IO_LOCAL, so the code above it takes the
 * object-store paths (no direct system calls). For tests of URI handling
 * (the C tests' S3 stand-in, and the pmtest:// scheme below). NULL: out of
 * memory. */
pm_fileio *pm_fileio_mapped_new(const char *prefix, const char *local_dir);
/* pmtest://X maps to <option pmtest.root>/X through pm_fileio_mapped_new:
 * lets every face (Lua, command line, resty) be tested with a URI and
 * FileIO options; pmtest.root is required, pmtest.secret-key accepted (a
 * credential stand-in), other pmtest.* keys refused. */
/* pm_fileio_open with no options. */
int pm_fileio_for_uri(const char *uri, pm_fileio **out, pm_err *e);
/* S3 FileIO (pm_fileio_s3.c); uri is s3://bucket/... or s3a://bucket/... */
int pm_fileio_s3_open(const char *uri, const char *const *options, pm_fileio **out, pm_err *e);
pm_fileio *pm_fileio_local(void);
void pm_fileio_destroy(pm_fileio *io);          /* NULL-safe */
void pm_dirents_free(pm_dirent *d, size_t n);
/* Strip "file://" / "file:" prefix: the local path for a URI. */
const char *pm_local_path(const char *uri);

/* Convenience wrappers */
static inline int pm_io_read_all(pm_fileio *io, const char *p, pm_buf *o, pm_err *e) { return io->ops->read_all(io, p, o, e); }
static inline int pm_io_list(pm_fileio *io, const char *p, pm_dirent **o, size_t *n, pm_err *e) { return io->ops->list(io, p, o, n, e); }
static inline int pm_io_stat(pm_fileio *io, const char *p, pm_stat *s, pm_err *e) { return io->ops->stat(io, p, s, e); }
static inline int pm_io_exists(pm_fileio *io, const char *p, int *x, pm_err *e) { return io->ops->exists(io, p, x, e); }
static inline int pm_io_write_atomic(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) { return io->ops->write_atomic(io, p, d, n, e); }
static inline int pm_io_create_no_replace(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) { return io->ops->create_no_replace(io, p, d, n, e); }
static inline int pm_io_remove(pm_fileio *io, const char *p, pm_err *e) { return io->ops->remove(io, p, e); }
static inline int pm_io_remove_within(pm_fileio *io, const char *root, const char *rel, int flags, pm_stat *st, pm_err *e) { return io->ops->remove_within(io, root, rel, flags, st, e); }
/* Caps of the metadata reads (docs/maintenance.md, "Hostile metadata"):
 * snapshot, changelog, schema, tag, consumer and branch metadata JSON; the
 * LATEST / EARLIEST hints (a decimal long: 20 bytes at most). */
#define PM_META_MAX ((size_t)16 << 20)
#define PM_HINT_MAX ((size_t)64)
/* pm_io_read_all of a metadata file of at most max bytes (PM_META_MAX,
 * PM_HINT_MAX): a larger one, or on a local file system one that is not a
 * regular file (a FIFO, a device, a directory, a symlink to one), is
 * PAIMON_CORRUPT naming the path and why, without reading it; an object
 * store's Content-Length is checked before the body is read. The one home
 * of that rule: every FileIO honours out->read_max. */
int pm_io_read_meta(pm_fileio *io, const char *path, size_t max, pm_buf *out, pm_err *e);
/* The refusal of a file over out->read_max: "PATH is SIZE bytes, more than
 * the 16 MiB allowed for metadata" (size < 0: unknown). */
int pm_io_fail_too_big(pm_err *e, const char *path, int64_t size, size_t max);

/* pm_io_read_all of a file whose size the metadata records (a manifest's
 * file_size, a snapshot's manifest list size; -1: unknown): the local
 * FileIO then reads it without asking for its size first (open, read,
 * close). Still the whole file when the record is wrong. */
int pm_io_read_sized(pm_fileio *io, const char *path, int64_t size, pm_buf *out, pm_err *e);
int pm_io_list_tree(pm_fileio *io, const char *dir, pm_tree_cb cb, void *cb_ctx, pm_err *e);
/* pm_io_list_tree that also reports empty directories (st->is_dir 1, rel
 * without a trailing '/'): an object store's directory marker objects
 * ("dir/"), a walked file system's empty directories (symlinked ones are
 * not descended). ops->list_tree reports markers this way. */
int pm_io_list_tree_dirs(pm_fileio *io, const char *dir, pm_tree_cb cb, void *cb_ctx, pm_err *e);
int pm_io_remove_batch(pm_fileio *io, const char *root, const char *const *rels, size_t n, int flags,
                       pm_stat *sts, int *rcs, char **msgs, pm_err *e);
static inline int pm_io_has(const pm_fileio *io, unsigned cap) { return (io->ops->caps & cap) != 0; }
/* Workers for a run of independent reads: the caller's threads, or the
 * store's parallel_requests where that is more. */
static inline int pm_io_read_threads(const pm_fileio *io, int threads) {
    return io->parallel_requests > threads ? io->parallel_requests : threads;
}
static inline int pm_io_mkdirs(pm_fileio *io, const char *p, pm_err *e) { return io->ops->mkdirs(io, p, e); }

#endif
