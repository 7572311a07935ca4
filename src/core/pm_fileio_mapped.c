/* A local directory seen through URIs (pm_fileio_mapped_new): every path
 * is translated and handed to the local FileIO. Without PM_IO_LOCAL, so
 * the layers above take the paths an object store takes. */
#include "pm_fileio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mapped_ctx {
    pm_fileio *local;
    char *prefix;        /* "pmtest://" */
    char *dir;           /* what the prefix stands for */
} mapped_ctx;

/* The local path for uri (malloc'd), or NULL with *e filled. */
static char *to_local(pm_fileio *io, const char *uri, pm_err *e) {
    mapped_ctx *c = io->ctx;
    size_t pl = strlen(c->prefix);
    if (strncmp(uri, c->prefix, pl)) {
        pm_fail(e, PAIMON_IO, "%s: not under %s (mapped FileIO)", uri, c->prefix);
        return NULL;
    }
    char *p = pm_path_join(c->dir, uri + pl);
    if (!p) pm_nomem(e);
    return p;
}

#define MAPPED(call)                                   \
    do {                                               \
        char *lp = to_local(io, path, e);              \
        if (!lp) return e->code ? e->code : PAIMON_IO; \
        mapped_ctx *c = io->ctx;                       \
        int rc = call;                                 \
        free(lp);                                      \
        return rc;                                     \
    } while (0)

static int m_read_all(pm_fileio *io, const char *path, pm_buf *out, pm_err *e) {
    MAPPED(pm_io_read_all(c->local, lp, out, e));
}
static int m_list(pm_fileio *io, const char *path, pm_dirent **out, size_t *n, pm_err *e) {
    MAPPED(pm_io_list(c->local, lp, out, n, e));
}
static int m_stat(pm_fileio *io, const char *path, pm_stat *st, pm_err *e) {
    MAPPED(pm_io_stat(c->local, lp, st, e));
}
static int m_exists(pm_fileio *io, const char *path, int *x, pm_err *e) {
    MAPPED(pm_io_exists(c->local, lp, x, e));
}
static int m_write_atomic(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    MAPPED(pm_io_write_atomic(c->local, lp, p, n, e));
}
static int m_create(pm_fileio *io, const char *path, const void *p, size_t n, pm_err *e) {
    MAPPED(pm_io_create_no_replace(c->local, lp, p, n, e));
}
static int m_remove(pm_fileio *io, const char *path, pm_err *e) {
    MAPPED(pm_io_remove(c->local, lp, e));
}
static int m_remove_within(pm_fileio *io, const char *path, const char *rel, int flags, pm_stat *st, pm_err *e) {
    MAPPED(pm_io_remove_within(c->local, lp, rel, flags, st, e));
}
static int m_mkdirs(pm_fileio *io, const char *path, pm_err *e) {
    MAPPED(pm_io_mkdirs(c->local, lp, e));
}

static void m_destroy(pm_fileio *io) {
    mapped_ctx *c = io->ctx;
    pm_fileio_destroy(c->local);
    free(c->prefix);
    free(c->dir);
    free(c);
    free(io);
}

static const pm_fileio_ops mapped_ops = {
    "mapped", m_read_all, m_list, m_stat, m_exists, m_write_atomic, m_create, m_remove, m_remove_within,
    m_mkdirs, m_destroy,
    0,      /* not local: no direct system calls above the FileIO */
    NULL,   /* list_tree: the generic walk */
    NULL,   /* remove_batch: remove_within per item */
};

pm_fileio *pm_fileio_mapped_new(const char *prefix, const char *local_dir) {
    pm_fileio *io = malloc(sizeof *io);
    mapped_ctx *c = calloc(1, sizeof *c);
    if (c) {
        c->local = pm_fileio_local();
        c->prefix = pm_strdup(prefix);
        c->dir = pm_strdup(local_dir);
    }
    if (!io || !c || !c->local || !c->prefix || !c->dir) {
        if (c) { pm_fileio_destroy(c->local); free(c->prefix); free(c->dir); }
        free(c);
        free(io);
        return NULL;
    }
    io->ops = &mapped_ops;
    io->ctx = c;
    io->parallel_requests = 0;
    return io;
}
