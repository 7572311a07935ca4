/* Parallel executor (libuv thread pool, private loop per call). The
 * cleanup deleter built on it is in pm_deleter.h. No Lua here. */
#ifndef PM_EXEC_H
#define PM_EXEC_H

#include "pm_common.h"

/* Progress report, always called on the calling thread. */
typedef void (*pm_progress_fn)(void *ud, const char *phase, size_t done, size_t total);

/* Run fn(ctx, i) for every i in [0, n) on up to `threads` worker threads of
 * the libuv pool (threads <= 1: inline; more than the pool was sized for at
 * its first use: threads of its own). Blocks until all are done; fn must
 * be thread-safe and report its own errors through ctx. progress (may be
 * NULL) is called about every 100 ms and once at the end. */
typedef void (*pm_task_fn)(void *ctx, size_t i);
int pm_exec_run(int threads, size_t n, pm_task_fn fn, void *ctx, const char *phase,
                pm_progress_fn progress, void *progress_ud, pm_err *e);

#endif
