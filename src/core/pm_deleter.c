/* The cleanup deleter: result lists, the path-safety check, and batches of
 * deletions run on the executor. */
#include "pm_deleter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_set.h"

const char *const pm_file_kind_names[PM_K__N] = {
    "data_files", "changelog_files", "manifests", "manifest_lists", "index_manifests",
    "index_files", "statistics", "snapshots", "temp_files",
};

/* ---- results ------------------------------------------------------------- */

int pm_clean_result_add(pm_clean_item **v, size_t *n, const char *path, int kind, int64_t size,
                        const char *msg) {
    if ((*n & (*n - 1)) == 0) {   /* grow at powers of two */
        size_t cap = *n ? *n * 2 : 8;
        pm_clean_item *nv = realloc(*v, cap * sizeof *nv);
        if (!nv) return PAIMON_NOMEM;
        *v = nv;
    }
    pm_clean_item *it = &(*v)[*n];
    it->path = pm_strdup(path);
    it->kind = kind;
    it->size = size;
    it->msg = msg ? pm_strdup(msg) : NULL;
    if (!it->path || (msg && !it->msg)) { free(it->path); free(it->msg); return PAIMON_NOMEM; }
    (*n)++;
    return PAIMON_OK;
}

static void items_free(pm_clean_item *v, size_t n) {
    for (size_t i = 0; i < n; i++) { free(v[i].path); free(v[i].msg); }
    free(v);
}

void pm_clean_result_free(pm_clean_result *r) {
    if (!r) return;
    items_free(r->paths, r->n_paths);
    items_free(r->failures, r->n_failures);
    items_free(r->skipped, r->n_skipped);
    r->paths = r->failures = r->skipped = NULL;
    r->n_paths = r->n_failures = r->n_skipped = 0;
}

/* ---- path safety --------------------------------------------------------- */

static int lexically_inside(const char *root, const char *path, char *why, size_t wl) {
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/') rl--;
    if (strncmp(path, root, rl) != 0 || path[rl] != '/') {
        snprintf(why, wl, "not inside the table directory %.*s", (int)rl, root);
        return 0;
    }
    const char *p = path + rl + 1;
    if (!*p) { snprintf(why, wl, "is the table directory itself"); return 0; }
    for (;;) {
        const char *s = strchr(p, '/');
        size_t cl = s ? (size_t)(s - p) : strlen(p);
        if (cl == 0 || (cl == 1 && p[0] == '.') || (cl == 2 && p[0] == '.' && p[1] == '.')) {
            snprintf(why, wl, "has an empty, '.' or '..' path component");
            return 0;
        }
        if (!s) break;
        p = s + 1;
    }
    return 1;
}

int pm_path_inside(pm_fileio *io, const char *root, const char *path, char *why, size_t wl) {
    const char *lroot = pm_local_path(root), *lpath = pm_local_path(path);
    if (!lexically_inside(lroot, lpath, why, wl)) return 0;
    size_t rl = strlen(lroot);
    while (rl > 1 && lroot[rl - 1] == '/') rl--;
    /* the deleter's own way there: what passes here, it can delete */
    pm_stat st;
    pm_err e;
    int rc = pm_io_remove_within(io, root, lpath + rl + 1, PM_RM_DRY_RUN, &st, &e);
    if (rc == PAIMON_OK) return 1;
    snprintf(why, wl, "%s", e.msg);
    return rc == PAIMON_NOTFOUND ? -1 : 0;
}

/* ---- deleter ------------------------------------------------------------- */

typedef struct del_item {
    char *path;
    int kind;
    int status;          /* 0 deleted/planned, 1 missing, 2 failed, 3 skipped (outside) */
    int64_t size;
    int64_t known_size;  /* from the metadata or a listing; -1 unknown */
    int listed;          /* a listing of the store gave it (pm_deleter_add_listed) */
    char *msg;
} del_item;

struct pm_deleter {
    del_item *v;
    size_t n, cap;
    pm_set *seen;
    pm_fileio *io;       /* during run */
    const char *root;
    int dry_run;
    int stop_on_failure;
    int failed;          /* __atomic */
};

pm_deleter *pm_deleter_new(void) {
    pm_deleter *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->seen = pm_set_new();
    if (!d->seen) { free(d); return NULL; }
    return d;
}

void pm_deleter_free(pm_deleter *d) {
    if (!d) return;
    for (size_t i = 0; i < d->n; i++) { free(d->v[i].path); free(d->v[i].msg); }
    free(d->v);
    pm_set_free(d->seen);
    free(d);
}

size_t pm_deleter_count(const pm_deleter *d) { return d->n; }

int pm_deleter_contains(const pm_deleter *d, const char *path) {
    return pm_set_contains(d->seen, path, strlen(path));
}

int pm_deleter_add(pm_deleter *d, const char *path, int kind, pm_err *e) {
    return pm_deleter_add_sized(d, path, kind, -1, e);
}

int pm_deleter_add_listed(pm_deleter *d, const char *path, int kind, int64_t size, pm_err *e) {
    size_t n = d->n;
    int rc = pm_deleter_add_sized(d, path, kind, size, e);
    if (!rc && d->n > n) d->v[n].listed = 1;
    return rc;
}

int pm_deleter_add_sized(pm_deleter *d, const char *path, int kind, int64_t size, pm_err *e) {
    int added = pm_set_add(d->seen, path, strlen(path));
    if (added < 0) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if (added == 0) return PAIMON_OK;
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        del_item *nv = realloc(d->v, cap * sizeof *nv);
        if (!nv) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        d->v = nv;
        d->cap = cap;
    }
    del_item *it = &d->v[d->n];
    memset(it, 0, sizeof *it);
    it->path = pm_strdup(path);
    it->kind = kind;
    it->known_size = size;
    if (!it->path) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    d->n++;
    return PAIMON_OK;
}

/* Most paths one remove_batch call gets: DeleteObjects' limit on a store;
 * locally batches small enough that the thread pool still runs many in
 * parallel, large enough that opening the table and the directory (4 system
 * calls a batch) stays far below the 2 per file (fstatat, unlinkat). */
#define DELETE_BATCH_MAX 1000
#define LOCAL_BATCH_MAX 256

/* The outcome remove_within (or its batch) gave one item. */
static void item_outcome(pm_deleter *d, del_item *it, int rc, const pm_stat *st, char *msg) {
    /* a store that does not say (size -1) counts the size the metadata recorded */
    if (rc == PAIMON_OK) { it->size = st->size >= 0 ? st->size : it->known_size; free(msg); return; }
    if (rc == PAIMON_NOTFOUND) { it->status = 1; free(msg); return; }
    if (rc == PM_IO_NOT_TRIED) { it->status = 4; free(msg); return; }
    it->status = rc == PM_IO_OUTSIDE ? 3 : 2;
    it->msg = msg;
    if (rc != PM_IO_OUTSIDE) __atomic_store_n(&d->failed, 1, __ATOMIC_RELEASE);
}

/* One batch: items [from, from + n) that passed the lexical check. Each is
 * checked and removed in one step from the table directory down (a
 * directory swapped for a symlink after a check would otherwise redirect
 * the deletion); object stores take the whole batch in one request. */
static void delete_batch(pm_deleter *d, size_t *idx, size_t n, size_t rl) {
    /* A dry run on a store: a key its listing just gave exists with the
     * listed size; a HEAD each would say no more (no symlinks, no
     * directories on the way). Local dry runs keep their look. */
    if (d->dry_run && pm_io_has(d->io, PM_IO_VIRTUAL_DIRS)) {
        size_t m = 0;
        for (size_t k = 0; k < n; k++) {
            del_item *it = &d->v[idx[k]];
            if (it->listed) item_outcome(d, it, PAIMON_OK, &(pm_stat){it->known_size, 0, 0}, NULL);
            else idx[m++] = idx[k];
        }
        if ((n = m) == 0) return;
    }
    const char **rels = malloc(n * sizeof *rels);
    pm_stat *sts = calloc(n, sizeof *sts);
    int *rcs = malloc(n * sizeof *rcs);
    char **msgs = calloc(n, sizeof *msgs);
    pm_err e;
    pm_err_clear(&e);
    int rc = rels && sts && rcs && msgs ? PAIMON_OK : pm_nomem(&e);
    if (!rc) {
        for (size_t k = 0; k < n; k++) rels[k] = pm_local_path(d->v[idx[k]].path) + rl + 1;
        rc = pm_io_remove_batch(d->io, d->root, rels, n,
                                (d->dry_run ? PM_RM_DRY_RUN : 0) | (d->stop_on_failure ? PM_RM_STOP_ON_FAILURE : 0),
                                sts, rcs, msgs, &e);
    }
    for (size_t k = 0; k < n; k++) {
        if (rc)   /* the batch as a whole failed: every item in it did */
            item_outcome(d, &d->v[idx[k]], rc == PAIMON_NOTFOUND || rc == PM_IO_OUTSIDE ? PAIMON_IO : rc, NULL,
                         pm_strdup(e.msg));
        else
            item_outcome(d, &d->v[idx[k]], rcs[k], &sts[k], msgs[k]);
    }
    free(rels);
    free(sts);
    free(rcs);
    free(msgs);
}

/* Batches of the items that passed the lexical check (indexes into d->v). */
typedef struct batch_plan {
    pm_deleter *d;
    size_t *idx;
    size_t n, per_batch;
    size_t rl;           /* length of the root's local path, without trailing '/' */
} batch_plan;

static void delete_batch_task(void *ctx, size_t b) {
    batch_plan *bp = ctx;
    pm_deleter *d = bp->d;
    size_t from = b * bp->per_batch, n = bp->n - from < bp->per_batch ? bp->n - from : bp->per_batch;
    if (d->stop_on_failure && __atomic_load_n(&d->failed, __ATOMIC_ACQUIRE)) {
        for (size_t k = 0; k < n; k++) d->v[bp->idx[from + k]].status = 4;
        return;
    }
    delete_batch(d, bp->idx + from, n, bp->rl);
}

/* Item indexes sorted by their directory (stable): a local batch keeps
 * its directories open, so one directory's files together cost one
 * descent per batch instead of one per change of directory. */
typedef struct dir_key { const char *path; size_t dir_len, i; } dir_key;

static int dir_key_cmp(const void *pa, const void *pb) {
    const dir_key *a = pa, *b = pb;
    int c = memcmp(a->path, b->path, a->dir_len < b->dir_len ? a->dir_len : b->dir_len);
    if (c) return c;
    if (a->dir_len != b->dir_len) return a->dir_len < b->dir_len ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static void group_by_dir(const pm_deleter *d, size_t *idx, size_t n) {
    dir_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!k) return;   /* only slower unsorted */
    for (size_t j = 0; j < n; j++) {
        const char *p = d->v[idx[j]].path, *slash = strrchr(p, '/');
        k[j] = (dir_key){p, slash ? (size_t)(slash - p) : 0, idx[j]};
    }
    qsort(k, n, sizeof *k, dir_key_cmp);
    for (size_t j = 0; j < n; j++) idx[j] = k[j].i;
    free(k);
}

/* Progress counts files, not batches: done batches times their size (the
 * last may be shorter). */
typedef struct file_progress {
    pm_progress_fn fn;
    void *ud;
    size_t per_batch, n;
} file_progress;

static void progress_in_files(void *ud, const char *phase, size_t done, size_t total) {
    const file_progress *fp = ud;
    size_t files = done >= total ? fp->n : done * fp->per_batch;
    fp->fn(fp->ud, phase, files < fp->n ? files : fp->n, fp->n);
}

static char *parent_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash && slash > path ? pm_strndup(path, (size_t)(slash - path)) : NULL;
}

void pm_deleter_clean_dirs(pm_deleter *d, pm_fileio *io, const char *root, size_t partition_levels,
                           pm_clean_result *r) {
    if (d->dry_run || pm_io_has(io, PM_IO_VIRTUAL_DIRS)) return;   /* no directories to remove on an object store */
    const char *lroot = pm_local_path(root);
    size_t rl = strlen(lroot);
    while (rl > 1 && lroot[rl - 1] == '/') rl--;
    pm_set *seen = pm_set_new();
    char **cur = calloc(d->n ? d->n : 1, sizeof *cur);
    size_t n = 0;
    if (!seen || !cur) { pm_set_free(seen); free(cur); return; }   /* cosmetic: nothing lost by skipping it */
    for (size_t i = 0; i < d->n; i++) {
        const del_item *it = &d->v[i];
        if (it->status != 0 && it->status != 1) continue;   /* deleted now, or by a run that crashed */
        char *dir = parent_dir(pm_local_path(it->path));
        const char *base = dir ? strrchr(dir, '/') : NULL;
        if (base && strncmp(base + 1, "bucket-", 7) == 0 && pm_set_add(seen, dir, strlen(dir)) == 1) cur[n++] = dir;
        else free(dir);
    }
    /* level 0: the bucket directories; then one partition level each */
    for (size_t level = 0; level <= partition_levels && n; level++) {
        size_t next = 0;
        for (size_t i = 0; i < n; i++) {
            char why[600];
            pm_stat st;
            pm_err e;
            char *dir = cur[i];
            cur[i] = NULL;
            const char *base = strrchr(dir, '/');
            if (lexically_inside(lroot, dir, why, sizeof why) && (level == 0 || (base && strchr(base, '='))) &&
                pm_io_remove_within(io, root, dir + rl + 1, PM_RM_EMPTY_DIR, &st, &e) == PAIMON_OK) {
                r->dirs_removed++;
                char *up = parent_dir(dir);
                if (up && pm_set_add(seen, up, strlen(up)) == 1) { cur[next++] = up; up = NULL; }
                free(up);
            }
            free(dir);
        }
        n = next;
    }
    for (size_t i = 0; i < n; i++) free(cur[i]);
    free(cur);
    pm_set_free(seen);
}

int pm_deleter_run(pm_deleter *d, pm_fileio *io, const char *root, const pm_clean_opts *o,
                   const char *phase, pm_clean_result *r, pm_err *e) {
    d->io = io;
    d->root = root;
    d->dry_run = o->dry_run;
    d->stop_on_failure = o->stop_on_failure;
    d->failed = 0;
    const char *lroot = pm_local_path(root);
    size_t rl = strlen(lroot);
    while (rl > 1 && lroot[rl - 1] == '/') rl--;
    batch_plan bp = {d, malloc((d->n ? d->n : 1) * sizeof(size_t)), 0, 1, rl};
    if (!bp.idx) return pm_nomem(e);
    /* the lexical check first: nothing outside the table reaches the FileIO */
    for (size_t i = 0; i < d->n; i++) {
        char why[700];
        del_item *it = &d->v[i];
        if (lexically_inside(lroot, pm_local_path(it->path), why, sizeof why)) bp.idx[bp.n++] = i;
        else { it->status = 3; it->msg = pm_strdup(why); }
    }
    /* Without a batch operation one item per task; with one, as few
     * batches as its limit allows, of even size, run in parallel. */
    size_t n_batches = bp.n;
    if (io->ops->remove_batch && bp.n) {
        /* stop on failure (snapshot files, in order: no gap): the batch
         * stops after the very item that failed (PM_RM_STOP_ON_FAILURE),
         * so the order is kept */
        int local = pm_io_has(io, PM_IO_LOCAL);
        if (local && !o->stop_on_failure) group_by_dir(d, bp.idx, bp.n);
        size_t max = local ? LOCAL_BATCH_MAX : DELETE_BATCH_MAX;
        n_batches = (bp.n + max - 1) / max;
        bp.per_batch = (bp.n + n_batches - 1) / n_batches;
    }
    file_progress fp = {o->progress, o->progress_ud, bp.per_batch, bp.n};
    int rc = pm_exec_run(o->threads, n_batches, delete_batch_task, &bp, phase, o->progress ? progress_in_files : NULL,
                         &fp, e);
    free(bp.idx);
    if (rc) return rc;
    for (size_t i = 0; i < d->n; i++) {
        del_item *it = &d->v[i];
        switch (it->status) {
        case 0:
            r->count[it->kind]++;
            if (it->size > 0) r->bytes[it->kind] += it->size;   /* -1: the store did not say */
            if (o->dry_run && pm_clean_result_add(&r->paths, &r->n_paths, it->path, it->kind, it->size, NULL))
                return pm_fail(e, PAIMON_NOMEM, "out of memory");
            break;
        case 1:
            r->missing++;
            break;
        case 4:              /* not attempted after an earlier failure */
            break;
        case 2:
            if (pm_clean_result_add(&r->failures, &r->n_failures, it->path, it->kind, 0,
                                    it->msg ? it->msg : "cannot delete"))
                return pm_fail(e, PAIMON_NOMEM, "out of memory");
            break;
        default:
            if (pm_clean_result_add(&r->skipped, &r->n_skipped, it->path, it->kind, 0, it->msg))
                return pm_fail(e, PAIMON_NOMEM, "out of memory");
            break;
        }
    }
    return PAIMON_OK;
}
