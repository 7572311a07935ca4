/* Parallel executor on the libuv thread pool. */
#include "pm_exec.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

static void run_tasks(exec_ctx *x) {
    for (;;) {
        size_t i = __atomic_fetch_add(&x->next, 1, __ATOMIC_RELAXED);
        if (i >= x->n) break;
        x->fn(x->ctx, i);
        __atomic_fetch_add(&x->done, 1, __ATOMIC_RELEASE);
    }
}

static void worker_cb(uv_work_t *req) { run_tasks(((exec_worker *)req->data)->x); }

static void after_cb(uv_work_t *req, int status) {
    (void)status;
    exec_ctx *x = ((exec_worker *)req->data)->x;
    if (--x->active == 0) uv_close((uv_handle_t *)&x->timer, NULL);
}

static void report_progress(exec_ctx *x) {
    if (x->progress)
        x->progress(x->progress_ud, x->phase, __atomic_load_n(&x->done, __ATOMIC_ACQUIRE), x->n);
}

static void timer_cb(uv_timer_t *tm) { report_progress(tm->data); }

/* libuv sizes its pool from UV_THREADPOOL_SIZE at first use (default 4)
 * and never again; returns that size. */
static int size_pool(int threads) {
    static int pool_size;
    if (pool_size) return pool_size;
    const char *env = getenv("UV_THREADPOOL_SIZE");
    if (env) {
        pool_size = atoi(env);
        if (pool_size < 1) pool_size = 1;   /* libuv's own clamp */
        return pool_size;
    }
    pool_size = threads < 4 ? 4 : threads;
    char buf[16];
    snprintf(buf, sizeof buf, "%d", pool_size);
    setenv("UV_THREADPOOL_SIZE", buf, 0);
    return pool_size;
}

/* ---- own threads: more workers than the libuv pool has ----------------------- */

/* An object store's reads ask for more workers than a pool sized earlier
 * in the process (for CPU work) can run: queued on it they would wait
 * their turn. These runs start their own threads instead. */
typedef struct own_run {
    exec_ctx *x;
    pthread_mutex_t lock;
    pthread_cond_t done;
    int running;
} own_run;

/* Workers (ours and the libuv pool's, created in the calling thread on
 * first use) start with SIGINT and SIGTERM blocked: a stop signal reaches
 * the thread that runs the operation, whose handler asks it to stop
 * (paimon_interrupt), never a worker that the scheduler may leave waiting. */
static void block_stop_signals(sigset_t *old) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

static void *own_worker(void *arg) {
    own_run *r = arg;
    run_tasks(r->x);
    pthread_mutex_lock(&r->lock);
    r->running--;
    pthread_cond_signal(&r->done);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* 1: ran on own threads; 0: none could start (nothing ran). */
static int run_own_threads(exec_ctx *x, int threads) {
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    if (!th) return 0;
    own_run r = {x, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    int started = 0;
    pthread_mutex_lock(&r.lock);
    sigset_t old;
    block_stop_signals(&old);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[started], NULL, own_worker, &r) == 0) { started++; r.running++; }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    while (r.running > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        if (pthread_cond_timedwait(&r.done, &r.lock, &ts) == ETIMEDOUT && x->progress) {
            pthread_mutex_unlock(&r.lock);   /* progress runs on the calling thread, unlocked */
            report_progress(x);
            pthread_mutex_lock(&r.lock);
        }
    }
    pthread_mutex_unlock(&r.lock);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_cond_destroy(&r.done);
    pthread_mutex_destroy(&r.lock);
    free(th);
    return started > 0;
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
    exec_ctx x;
    memset(&x, 0, sizeof x);
    x.n = n;
    x.fn = fn;
    x.ctx = ctx;
    x.phase = phase;
    x.progress = progress;
    x.progress_ud = progress_ud;
    int pool = size_pool(threads);
    if (threads > pool) {
        /* (no thread started: x is untouched for the pool's workers) */
        if (run_own_threads(&x, threads)) {
            if (progress) progress(progress_ud, phase, n, n);
            return PAIMON_OK;
        }
        threads = pool;   /* no thread could start: the pool's workers */
    }
    uv_loop_t loop;
    int rc = uv_loop_init(&loop);
    if (rc) return pm_fail(e, PAIMON_IO, "cannot start the thread pool: %s", uv_strerror(rc));
    exec_worker *w = calloc((size_t)threads, sizeof *w);
    if (!w) { uv_loop_close(&loop); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    uv_timer_init(&loop, &x.timer);
    x.timer.data = &x;
    uv_timer_start(&x.timer, timer_cb, 100, 100);
    sigset_t old;
    block_stop_signals(&old);
    for (int i = 0; i < threads; i++) {
        w[i].req.data = &w[i];
        w[i].x = &x;
        if (uv_queue_work(&loop, &w[i].req, worker_cb, after_cb) == 0) x.active++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
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
