/* Parallel executor on the libuv thread pool. */
#include "pm_exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* ---- executor ------------------------------------------------------------ */

typedef struct exec_ctx {
    size_t n;
    size_t next, done;            /* __atomic */
    pm_task_fn fn;
    void *ctx;
    int active;                   /* workers not yet finished (loop thread only) */
    uv_timer_t timer;
    const char *phase;
    pm_progress_fn progress;
    void *progress_ud;
} exec_ctx;

typedef struct exec_worker {
    uv_work_t req;
    exec_ctx *x;
} exec_worker;

static void worker_cb(uv_work_t *req) {
    exec_ctx *x = ((exec_worker *)req->data)->x;
    for (;;) {
        size_t i = __atomic_fetch_add(&x->next, 1, __ATOMIC_RELAXED);
        if (i >= x->n) break;
        x->fn(x->ctx, i);
        __atomic_fetch_add(&x->done, 1, __ATOMIC_RELEASE);
    }
}

static void after_cb(uv_work_t *req, int status) {
    (void)status;
    exec_ctx *x = ((exec_worker *)req->data)->x;
    if (--x->active == 0) uv_close((uv_handle_t *)&x->timer, NULL);
}

static void timer_cb(uv_timer_t *tm) {
    exec_ctx *x = tm->data;
    if (x->progress)
        x->progress(x->progress_ud, x->phase, __atomic_load_n(&x->done, __ATOMIC_ACQUIRE), x->n);
}

/* libuv sizes its pool from UV_THREADPOOL_SIZE at first use (default 4). */
static void size_pool(int threads) {
    static int sized;
    if (sized) return;
    sized = 1;
    if (getenv("UV_THREADPOOL_SIZE")) return;
    char buf[16];
    snprintf(buf, sizeof buf, "%d", threads < 4 ? 4 : threads);
    setenv("UV_THREADPOOL_SIZE", buf, 0);
}

int pm_exec_run(int threads, size_t n, pm_task_fn fn, void *ctx, const char *phase,
                pm_progress_fn progress, void *progress_ud, pm_err *e) {
    if (n == 0) return PAIMON_OK;
    if (threads > 64) threads = 64;
    if ((size_t)threads > n) threads = (int)n;
    if (threads <= 1) {
        int64_t last = pm_now_millis();
        for (size_t i = 0; i < n; i++) {
            fn(ctx, i);
            if (progress && pm_now_millis() - last >= 100) {
                last = pm_now_millis();
                progress(progress_ud, phase, i + 1, n);
            }
        }
        if (progress) progress(progress_ud, phase, n, n);
        return PAIMON_OK;
    }
    size_pool(threads);
    uv_loop_t loop;
    int rc = uv_loop_init(&loop);
    if (rc) return pm_fail(e, PAIMON_IO, "cannot start the thread pool: %s", uv_strerror(rc));
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.n = n;
    x.fn = fn;
    x.ctx = ctx;
    x.phase = phase;
    x.progress = progress;
    x.progress_ud = progress_ud;
    exec_worker *w = calloc((size_t)threads, sizeof *w);
    if (!w) { uv_loop_close(&loop); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    uv_timer_init(&loop, &x.timer);
    x.timer.data = &x;
    uv_timer_start(&x.timer, timer_cb, 100, 100);
    for (int i = 0; i < threads; i++) {
        w[i].req.data = &w[i];
        w[i].x = &x;
        if (uv_queue_work(&loop, &w[i].req, worker_cb, after_cb) == 0) x.active++;
    }
    if (x.active == 0) {
        uv_close((uv_handle_t *)&x.timer, NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        free(w);
        /* no worker could be queued: do the work here */
        return pm_exec_run(1, n, fn, ctx, phase, progress, progress_ud, e);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    free(w);
    if (progress) progress(progress_ud, phase, n, n);
    return PAIMON_OK;
}
