/* Fault-injecting FileIO wrapper (tests). */
#include "pm_fileio_fault.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct fault_ctx {
    pm_fileio *inner;
    unsigned kinds;
    long fail_at;
    int crash;
    long count;          /* __atomic */
    int crashed;         /* __atomic */
    long delay_us;       /* __atomic; slept before every operation of delay_kinds */
    unsigned delay_kinds;
    long kill_at;        /* SIGKILL at this operation of `kinds` (0: never) */
    int kill_after;      /* ... right after performing it, else right before */
    pm_fileio_ops ops;
} fault_ctx;

/* Counts an operation of kind (its index in *nth, 0 when not counted);
 * fails it or kills the process before it when so set. */
static int hit(pm_fileio *io, unsigned kind, const char *path, long *nth, pm_err *e) {
    fault_ctx *c = io->ctx;
    *nth = 0;
    long delay = __atomic_load_n(&c->delay_us, __ATOMIC_ACQUIRE);
    if (delay > 0 && (c->delay_kinds & kind)) {
        struct timespec ts = {delay / 1000000, (delay % 1000000) * 1000};
        nanosleep(&ts, NULL);
    }
    if (__atomic_load_n(&c->crashed, __ATOMIC_ACQUIRE))
        return pm_fail(e, PAIMON_IO, "%s: injected fault (after crash)", path);
    if (!(c->kinds & kind)) return PAIMON_OK;
    long k = __atomic_add_fetch(&c->count, 1, __ATOMIC_ACQ_REL);
    *nth = k;
    if (c->kill_at == k && !c->kill_after) raise(SIGKILL);
    if (c->fail_at > 0 && k == c->fail_at) {
        if (c->crash) __atomic_store_n(&c->crashed, 1, __ATOMIC_RELEASE);
        return pm_fail(e, PAIMON_IO, "%s: injected fault (operation %ld)", path, k);
    }
    return PAIMON_OK;
}

/* After operation nth was performed: kill the process when so set. */
static int done(pm_fileio *io, long nth, int rc) {
    fault_ctx *c = io->ctx;
    if (nth && c->kill_at == nth && c->kill_after) raise(SIGKILL);
    return rc;
}

#define INNER(io) (((fault_ctx *)(io)->ctx)->inner)

static int f_read_all(pm_fileio *io, const char *p, pm_buf *o, pm_err *e) {
    long k;
    int rc = hit(io, PM_FAULT_READ, p, &k, e);
    return rc ? rc : done(io, k, pm_io_read_all(INNER(io), p, o, e));
}
static int f_list(pm_fileio *io, const char *p, pm_dirent **o, size_t *n, pm_err *e) {
    long k;
    int rc = hit(io, PM_FAULT_LIST, p, &k, e);
    return rc ? rc : done(io, k, pm_io_list(INNER(io), p, o, n, e));
}
static int f_stat(pm_fileio *io, const char *p, pm_stat *s, pm_err *e) {
    long k;
    int rc = hit(io, PM_FAULT_STAT, p, &k, e);
    return rc ? rc : done(io, k, pm_io_stat(INNER(io), p, s, e));
}
static int f_exists(pm_fileio *io, const char *p, int *x, pm_err *e) {
    long k;
    int rc = hit(io, PM_FAULT_EXISTS, p, &k, e);
    return rc ? rc : done(io, k, pm_io_exists(INNER(io), p, x, e));
}
static int f_write_atomic(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    long k;
    int rc = hit(io, PM_FAULT_WRITE, p, &k, e);
    return rc ? rc : done(io, k, pm_io_write_atomic(INNER(io), p, d, n, e));
}
static int f_create(pm_fileio *io, const char *p, const void *d, size_t n, pm_err *e) {
    long k;
    int rc = hit(io, PM_FAULT_CREATE, p, &k, e);
    return rc ? rc : done(io, k, pm_io_create_no_replace(INNER(io), p, d, n, e));
}
static int f_remove(pm_fileio *io, const char *p, pm_err *e) {
    long k;
    int rc = hit(io, PM_FAULT_REMOVE, p, &k, e);
    return rc ? rc : done(io, k, pm_io_remove(INNER(io), p, e));
}
/* The same fault points as the stat + remove it replaces. */
static int f_remove_within(pm_fileio *io, const char *root, const char *rel, int flags, pm_stat *st, pm_err *e) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", pm_local_path(root), rel);
    long k;
    int rc = hit(io, PM_FAULT_STAT, path, &k, e);
    if (!rc && !(flags & PM_RM_DRY_RUN)) {
        done(io, k, rc);   /* after the stat: nothing of the removal done yet */
        rc = hit(io, PM_FAULT_REMOVE, path, &k, e);
    }
    return rc ? rc : done(io, k, pm_io_remove_within(INNER(io), root, rel, flags, st, e));
}
static int f_mkdirs(pm_fileio *io, const char *p, pm_err *e) {
    long k;
    int rc = hit(io, PM_FAULT_MKDIRS, p, &k, e);
    return rc ? rc : done(io, k, pm_io_mkdirs(INNER(io), p, e));
}
static void f_destroy(pm_fileio *io) {
    fault_ctx *c = io->ctx;
    pm_fileio_destroy(c->inner);
    free(c);
    free(io);
}

pm_fileio *pm_fileio_fault_new(pm_fileio *inner, unsigned kinds, long fail_at, int crash) {
    pm_fileio *io = malloc(sizeof *io);
    fault_ctx *c = calloc(1, sizeof *c);
    if (!io || !c) { free(io); free(c); return NULL; }
    c->inner = inner;
    c->kinds = kinds;
    c->fail_at = fail_at;
    c->crash = crash;
    c->ops = (pm_fileio_ops){inner->ops->scheme, f_read_all, f_list, f_stat, f_exists, f_write_atomic,
                             f_create, f_remove, f_remove_within, f_mkdirs, f_destroy,
                             /* not PM_IO_LOCAL: no direct system call may bypass the faults */
                             inner->ops->caps & ~PM_IO_LOCAL, NULL, NULL};   /* generic walk/batch: every call faults */
    io->ops = &c->ops;
    io->ctx = c;
    io->parallel_requests = inner->parallel_requests;   /* the wrapped store's concurrency */
    return io;
}

long pm_fileio_fault_count(const pm_fileio *io) {
    return __atomic_load_n(&((fault_ctx *)io->ctx)->count, __ATOMIC_ACQUIRE);
}

void pm_fileio_fault_set_delay(pm_fileio *io, unsigned kinds, long delay_us) {
    fault_ctx *c = io->ctx;
    c->delay_kinds = kinds;
    __atomic_store_n(&c->delay_us, delay_us, __ATOMIC_RELEASE);
}

void pm_fileio_fault_set_kill(pm_fileio *io, long at, int after) {
    fault_ctx *c = io->ctx;
    c->kill_after = after;
    c->kill_at = at;
}

pm_fileio *pm_fileio_fault_release(pm_fileio *io) {
    fault_ctx *c = io->ctx;
    pm_fileio *inner = c->inner;
    free(c);
    free(io);
    return inner;
}
