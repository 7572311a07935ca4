/* Orphan file cleaning: list candidates, then build the used set from every
 * branch, then delete old candidates nobody uses. */
#include "pm_orphan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pm_avro.h"
#include "pm_names.h"
#include "pm_refs.h"


static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }
static int ends(const char *s, const char *p) {
    size_t a = strlen(s), b = strlen(p);
    return a >= b && !strcmp(s + a - b, p);
}


/* ---- listing ------------------------------------------------------------------ */

/* DIR_PART: a partition directory (k=v) below the data directory: only
 * the files directly in it are candidates there. */
typedef enum { DIR_MANIFEST, DIR_INDEX, DIR_STATS, DIR_BUCKET, DIR_META, DIR_PART } dir_kind;

/* Directories that may be removed once empty (step 6): partition and
 * bucket directories, and directories found inside a directory of
 * candidates (junk a failed writer or tool left). Each with its mtime
 * before this run deleted anything, and whether this run deleted something
 * in it (a file, or a directory below it). */
typedef struct sweep_dir {
    char *path;
    int64_t mtime_ms;    /* from a listing (an object store's marker object); -1: stat it */
    uint8_t touched;
} sweep_dir;

typedef struct sweep {
    sweep_dir *v;
    size_t n, cap;
    pm_set *at;          /* path -> index in v (ordinals) */
} sweep;

/* A Paimon file found by the listing. Its age is looked up only if nothing
 * uses it (most files of a healthy table are used: no stat for them). */
typedef struct cand {
    size_t name;         /* offset into the task's names: its key (pm_names.h) */
    long slot;           /* of the name in the listed-name set; -1 for temp files */
    int8_t kind;
    uint8_t used;
    uint8_t remove;      /* unused, a file, older than the cut-off */
} cand;

typedef struct list_task {
    char *dir;
    dir_kind kind;
    pm_buf names;        /* the names' keys (pm_name_key: 19-28 bytes for Paimon's own shapes),
                            each after its length as a varint, back to back */
    cand *c;
    size_t n, cap;
    pm_stat *listed;     /* per candidate, age and size from the one listing (NULL: stat for the age) */
    size_t listed_cap;
    size_t n_unused;
    pm_strv subdirs;     /* directories found in it (not partition or bucket directories): sweep candidates */
    int rc;
    pm_err err;
} list_task;

typedef struct list_ctx {
    pm_fileio *io;
    int local;           /* io is the plain local FileIO */
    int tree;            /* not a local FileIO: one list_tree of the table, ages from it */
    list_task *tasks;
    int64_t cutoff;
    const char *data_prefix, *changelog_prefix;
} list_ctx;

/* The key of a candidate's name (*len bytes). */
static const uint8_t *cand_key(const list_task *tk, const cand *c, size_t *len) {
    const uint8_t *p = tk->names.data + c->name;
    size_t n = 0;
    for (unsigned sh = 0;; sh += 7) {
        n |= (size_t)(*p & 0x7f) << sh;
        if (!(*p++ & 0x80)) break;
    }
    *len = n;
    return p;
}

/* The candidate's exact name, NUL-terminated in out (reused): NULL on OOM. */
static const char *cand_name(const list_task *tk, const cand *c, pm_buf *out) {
    size_t kl;
    const uint8_t *k = cand_key(tk, c, &kl);
    out->len = 0;
    /* every key here was made by pm_name_key: only OOM fails */
    if (pm_name_unkey(k, kl, out) || pm_buf_cstr(out)) return NULL;
    return (const char *)out->data;
}

/* Kind of a file found in a directory of kind dk, or -1: never a
 * candidate. As Java's OrphanFilesClean: every file in manifest/, index/,
 * statistics/ and the bucket directories is a candidate (Paimon's names by
 * their kind, anything else PM_K_OTHER: a temp file, a failed write's
 * leftover), and in snapshot/ and changelog/ every file but the snapshot
 * or changelog files and the EARLIEST/LATEST hints. Beyond Java: the files
 * directly in a partition directory, except the `_SUCCESS` file of
 * mark_partition_done's success-file action. Temp files (.<name>.tmp) go
 * by age alone. */
static int classify(const list_ctx *x, dir_kind dk, const char *name) {
    if (name[0] == '.' && ends(name, ".tmp")) return PM_K_TEMP;   /* .<name>.<uuid>.tmp of atomic writes */
    switch (dk) {
    case DIR_MANIFEST:
        if (starts(name, "manifest-list-")) return PM_K_MANIFEST_LIST;
        if (starts(name, "index-manifest-")) return PM_K_INDEX_MANIFEST;
        if (starts(name, "manifest-")) return PM_K_MANIFEST;
        return PM_K_OTHER;
    case DIR_INDEX: return starts(name, "index-") ? PM_K_INDEX : PM_K_OTHER;
    case DIR_STATS: return starts(name, "stat-") ? PM_K_STATISTICS : PM_K_OTHER;
    case DIR_BUCKET:
        if (*x->data_prefix && starts(name, x->data_prefix)) return PM_K_DATA;
        if (*x->changelog_prefix && starts(name, x->changelog_prefix)) return PM_K_CHANGELOG;
        if (starts(name, "index-")) return PM_K_INDEX;
        return PM_K_OTHER;
    case DIR_PART: return strcmp(name, "_SUCCESS") ? PM_K_OTHER : -1;
    case DIR_META:
        if (!strcmp(name, "EARLIEST") || !strcmp(name, "LATEST")) return -1;
        /* old snapshot-1<uuid>.tmp temp files go; snapshot and changelog files never */
        if ((starts(name, "snapshot-") || starts(name, "changelog-")) && !ends(name, ".tmp")) return -1;
        return PM_K_TEMP;
    }
    return -1;
}

static int task_add(list_task *tk, const char *name, int kind) {
    if (tk->n == tk->cap) {
        size_t cap = tk->cap ? tk->cap * 2 : 32;
        cand *nv = realloc(tk->c, cap * sizeof *nv);
        if (!nv) return PAIMON_NOMEM;
        tk->c = nv;
        tk->cap = cap;
    }
    size_t off = tk->names.len, kl;
    uint8_t kb[PM_NAME_KEY_MAX], lb[10], nl = 0;
    const void *k = pm_name_key(name, strlen(name), kb, &kl);
    for (size_t v = kl; ; v >>= 7) {
        lb[nl++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        if (v <= 0x7f) break;
    }
    if (pm_buf_append(&tk->names, lb, nl) || pm_buf_append(&tk->names, k, kl)) return PAIMON_NOMEM;
    tk->c[tk->n++] = (cand){off, -1, (int8_t)kind, 0, 0};
    return PAIMON_OK;
}

/* task_add with the age and size the listing gave. */
static int task_add_listed(list_task *tk, const char *name, int kind, const pm_stat *st) {
    if (task_add(tk, name, kind)) return PAIMON_NOMEM;
    if (tk->listed_cap < tk->cap) {
        pm_stat *nv = realloc(tk->listed, tk->cap * sizeof *nv);
        if (!nv) return PAIMON_NOMEM;
        tk->listed = nv;
        tk->listed_cap = tk->cap;
    }
    tk->listed[tk->n - 1] = *st;
    return PAIMON_OK;
}

/* Names only (readdir); what pm_io_list gives, without a stat per file. */
static void list_one_local(list_ctx *x, list_task *tk) {
    const char *path = pm_local_path(tk->dir);
    DIR *d = opendir(path);
    if (!d) {
        int err = errno;
        if (err != ENOENT && err != ENOTDIR) tk->rc = pm_fail_errno(&tk->err, PAIMON_IO, err, "cannot list %s", path);
        return;
    }
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno) tk->rc = pm_fail_errno(&tk->err, PAIMON_IO, errno, "cannot list %s", path);
            break;
        }
        const char *nm = de->d_name;
        if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0'))) continue;
#ifdef DT_DIR
        if (de->d_type == DT_LNK) continue;   /* a symlink is never a candidate, never descended */
        if (de->d_type == DT_DIR) {           /* DT_UNKNOWN: the age check stats it */
            if (tk->kind != DIR_PART && pm_strv_push(&tk->subdirs, nm)) { tk->rc = pm_nomem(&tk->err); break; }
            continue;
        }
#endif
        int kind = classify(x, tk->kind, nm);
        if (kind < 0) continue;
        if (task_add(tk, nm, kind)) { tk->rc = pm_nomem(&tk->err); break; }
    }
    closedir(d);
}

static void list_one(void *ctx, size_t i) {
    list_ctx *x = ctx;
    list_task *tk = &x->tasks[i];
    if (x->local) { list_one_local(x, tk); return; }
    pm_dirent *d = NULL;
    size_t n = 0;
    tk->rc = pm_io_list(x->io, tk->dir, &d, &n, &tk->err);
    if (tk->rc == PAIMON_NOTFOUND) { tk->rc = 0; pm_err_clear(&tk->err); return; }
    if (tk->rc) return;
    for (size_t k = 0; k < n; k++) {
        if (d[k].is_dir) continue;
        int kind = classify(x, tk->kind, d[k].name);
        if (kind < 0) continue;
        if (task_add(tk, d[k].name, kind)) { tk->rc = pm_nomem(&tk->err); break; }
    }
    pm_dirents_free(d, n);
}

/* The age check, after the used set: stat each unused candidate (relative to
 * its directory on the local FileIO). Vanished files and directories are
 * skipped; a file is removed only if its mtime is before the cut-off. Any
 * other stat failure refuses the run. */
static void age_one(void *ctx, size_t i) {
    list_ctx *x = ctx;
    list_task *tk = &x->tasks[i];
    if (!tk->n_unused) return;
    if (x->tree) {   /* the listing said how old each file is: no request per file */
        for (size_t k = 0; k < tk->n; k++)
            if (!tk->c[k].used) tk->c[k].remove = tk->listed[k].mtime_ms < x->cutoff;
        return;
    }
    int dfd = -1;
    if (x->local) {
        do dfd = open(pm_local_path(tk->dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC); while (dfd < 0 && errno == EINTR);
        if (dfd < 0) {
            int err = errno;
            if (err != ENOENT && err != ENOTDIR)
                tk->rc = pm_fail_errno(&tk->err, PAIMON_IO, err, "cannot open %s", pm_local_path(tk->dir));
            return;   /* gone: nothing in it to remove */
        }
    }
    pm_buf nb = {0};
    for (size_t k = 0; k < tk->n && !tk->rc; k++) {
        cand *c = &tk->c[k];
        if (c->used) continue;
        const char *nm = cand_name(tk, c, &nb);
        if (!nm) { tk->rc = pm_nomem(&tk->err); break; }
        int64_t mtime_ms;
        int is_dir;
        if (x->local) {
            struct stat st;
            if (fstatat(dfd, nm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                int err = errno;
                if (err != ENOENT && err != ENOTDIR)
                    tk->rc = pm_fail_errno(&tk->err, PAIMON_IO, err, "cannot stat %s/%s", pm_local_path(tk->dir), nm);
                continue;
            }
            if (S_ISLNK(st.st_mode)) continue;   /* a symlink (DT_UNKNOWN listing): never removed */
            mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
            is_dir = S_ISDIR(st.st_mode);
            if (is_dir && tk->kind != DIR_PART && pm_strv_push(&tk->subdirs, nm)) { tk->rc = pm_nomem(&tk->err); break; }
        } else {
            char *p = pm_path_join(tk->dir, nm);
            if (!p) { tk->rc = pm_nomem(&tk->err); break; }
            pm_stat st;
            int rc = pm_io_stat(x->io, p, &st, &tk->err);
            free(p);
            if (rc == PAIMON_NOTFOUND) { pm_err_clear(&tk->err); continue; }
            if (rc) { tk->rc = rc; break; }
            mtime_ms = st.mtime_ms;
            is_dir = st.is_dir;
        }
        c->remove = !is_dir && mtime_ms < x->cutoff;
    }
    pm_buf_free(&nb);
    if (dfd >= 0) close(dfd);
}

static int add_dir(list_task **v, size_t *n, size_t *cap, const char *dir, dir_kind k, pm_err *e) {
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        list_task *nv = realloc(*v, c * sizeof *nv);
        if (!nv) return pm_nomem(e);
        *v = nv;
        *cap = c;
    }
    list_task *t = &(*v)[*n];
    memset(t, 0, sizeof *t);
    t->dir = pm_strdup(dir);
    t->kind = k;
    if (!t->dir) return pm_nomem(e);
    (*n)++;
    return PAIMON_OK;
}

/* add_dir of base/sub. */
static int add_candidate_dir_to(list_task **v, size_t *n, size_t *cap, const char *base, const char *sub,
                                dir_kind k, pm_err *e) {
    char *p = pm_path_join(base, sub);
    int rc = p ? add_dir(v, n, cap, p, k, e) : pm_nomem(e);
    free(p);
    return rc;
}

static int is_bucket_dir(const char *name) {
    if (!strcmp(name, "bucket-postpone")) return 1;
    if (!starts(name, "bucket-") || !name[7]) return 0;
    for (const char *p = name + 7; *p; p++) if (*p < '0' || *p > '9') return 0;
    return 1;
}

/* A directory that may be removed once empty (once: the first note counts). */
static int sweep_add_at(sweep *sw, const char *path, int64_t mtime_ms, pm_err *e) {
    int added = 0;
    long ord = pm_set_add_ordinal(sw->at, path, strlen(path), &added);
    if (ord < 0) return pm_nomem(e);
    if (!added) return PAIMON_OK;
    if (sw->n == sw->cap) {
        size_t c = sw->cap ? sw->cap * 2 : 16;
        sweep_dir *nv = realloc(sw->v, c * sizeof *nv);
        if (!nv) return pm_nomem(e);
        sw->v = nv;
        sw->cap = c;
    }
    sweep_dir *d = &sw->v[sw->n];
    *d = (sweep_dir){pm_strdup(path), mtime_ms, 0};
    if (!d->path) return pm_nomem(e);
    sw->n++;   /* == ord + 1: ordinals count insertions */
    return PAIMON_OK;
}

static int sweep_add(sweep *sw, const char *path, pm_err *e) { return sweep_add_at(sw, path, -1, e); }

static long sweep_find(const sweep *sw, const char *path, size_t len) {
    return pm_set_ordinal(sw->at, path, len);
}

/* Walk k1=v1/k2=v2/ levels down to bucket-N directories: each partition
 * directory's own files and each bucket directory's are candidates. Every
 * partition and bucket directory, and any other directory inside a
 * partition directory, is noted for the empty-directory sweep. Symlinks
 * are neither descended nor noted (a symlinked directory is not ours). */
static int walk_partitions(paimon_table *t, const char *dir, size_t level, list_task **v, size_t *n, size_t *cap,
                           sweep *sw, pm_err *e) {
    pm_dirent *d = NULL;
    size_t nd = 0;
    int rc = pm_io_list(t->io, dir, &d, &nd, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (rc) return rc;
    for (size_t i = 0; i < nd && !rc; i++) {
        if (!d[i].is_dir || d[i].is_link) continue;
        const char *nm = d[i].name;
        char *p = pm_path_join(dir, nm);
        if (!p) { rc = pm_nomem(e); break; }
        size_t kl = level < t->n_part ? strlen(t->part_keys[level]) : 0;
        if (level == t->n_part && is_bucket_dir(nm)) {
            rc = add_dir(v, n, cap, p, DIR_BUCKET, e);
            if (!rc && sw) rc = sweep_add(sw, p, e);
        } else if (level < t->n_part && !strncmp(nm, t->part_keys[level], kl) && nm[kl] == '=') {
            rc = add_dir(v, n, cap, p, DIR_PART, e);
            if (!rc && sw) rc = sweep_add(sw, p, e);
            if (!rc) rc = walk_partitions(t, p, level + 1, v, n, cap, sw, e);
        } else if (level > 0 && sw) {
            rc = sweep_add(sw, p, e);   /* inside a partition directory, not Paimon's: removed only if empty */
        }
        free(p);
    }
    pm_dirents_free(d, nd);
    return rc;
}

/* ---- one listing of the table (object stores) ---------------------------------- */

/* Every key under the table directory, streamed once; each is a candidate
 * exactly when the per-directory walk above would have found it: its
 * directory is one of the fixed candidate directories, or a bucket
 * directory at the partition depth below the data directory. Only
 * candidates are kept (memory follows them, not the listing). */
typedef struct tree_ctx {
    const list_ctx *lx;
    const paimon_table *main_t;
    const char *root;
    const char *data_rel;    /* data directory relative to the table ("" : the table directory) */
    list_task **v;
    size_t *n, *cap;
    pm_set *dirs;            /* directories seen (relative), by ordinal */
    long *task_of;           /* per ordinal: its task, or -1 (no candidates there) */
    size_t task_of_cap;
    sweep *sw;               /* directory marker objects that may go once alone */
} tree_ctx;

/* What the relative directory dir[0, dl) is (walk_partitions' rules):
 * DIR_BUCKET (data_rel, then one k=v level per partition key, then a
 * bucket directory), DIR_PART (data_rel, then 1..n k=v levels), or -1. */
static int data_rel_kind(const tree_ctx *x, const char *dir, size_t dl) {
    size_t pl = strlen(x->data_rel);
    if (pl) {
        if (dl <= pl || strncmp(dir, x->data_rel, pl) || dir[pl] != '/') return -1;
        dir += pl + 1;
        dl -= pl + 1;
    }
    const char *end = dir + dl;
    for (size_t level = 0;; level++) {
        const char *slash = memchr(dir, '/', (size_t)(end - dir));
        size_t cl = slash ? (size_t)(slash - dir) : (size_t)(end - dir);
        if (level == x->main_t->n_part) {
            char comp[64];
            if (slash || cl >= sizeof comp) return -1;
            memcpy(comp, dir, cl);
            comp[cl] = '\0';
            return is_bucket_dir(comp) ? DIR_BUCKET : -1;
        }
        size_t kl = strlen(x->main_t->part_keys[level]);
        if (cl <= kl || strncmp(dir, x->main_t->part_keys[level], kl) || dir[kl] != '=') return -1;
        if (!slash) return DIR_PART;
        dir = slash + 1;
    }
}

/* The task of a directory first seen: a fixed one was added by ordinal
 * before the listing; a bucket directory gets a new task. */
static int tree_dir_task(tree_ctx *x, const char *rel, size_t dl, long ord, pm_err *e) {
    if ((size_t)ord >= x->task_of_cap) {
        size_t cap = x->task_of_cap ? x->task_of_cap * 2 : 64;
        while (cap <= (size_t)ord) cap *= 2;
        long *nv = realloc(x->task_of, cap * sizeof *nv);
        if (!nv) return pm_nomem(e);
        x->task_of = nv;
        x->task_of_cap = cap;
    }
    x->task_of[ord] = -1;
    int kind = data_rel_kind(x, rel, dl);
    if (kind < 0) return PAIMON_OK;
    char *sub = pm_strndup(rel, dl);
    int rc = sub ? add_candidate_dir_to(x->v, x->n, x->cap, x->root, sub, (dir_kind)kind, e) : pm_nomem(e);
    free(sub);
    if (!rc) x->task_of[ord] = (long)*x->n - 1;
    return rc;
}

/* A directory marker object (an empty directory on an object store):
 * noted for the sweep if the local walk would have noted the directory: a
 * partition or bucket directory, a directory inside a partition directory,
 * or one inside a directory of candidates. */
static int tree_marker(tree_ctx *x, const char *rel, const pm_stat *st, pm_err *e) {
    const char *slash = strrchr(rel, '/');
    size_t dl = slash ? (size_t)(slash - rel) : 0;
    int sweepable = data_rel_kind(x, rel, strlen(rel)) >= 0;
    if (!sweepable && slash) {
        long ord = pm_set_ordinal(x->dirs, rel, dl);
        /* inside a partition or bucket directory, or a fixed directory of candidates
         * (noted before the listing: whatever order keys come in) */
        sweepable = data_rel_kind(x, rel, dl) >= 0 || (ord >= 0 && (size_t)ord < x->task_of_cap && x->task_of[ord] >= 0);
    }
    if (!sweepable) return PAIMON_OK;
    char *p = pm_path_join(x->root, rel);
    int rc = p ? sweep_add_at(x->sw, p, st->mtime_ms, e) : pm_nomem(e);
    free(p);
    return rc;
}

static int tree_key(void *ud, const char *rel, const pm_stat *st, pm_err *e) {
    tree_ctx *x = ud;
    if (st->is_dir) return tree_marker(x, rel, st, e);
    const char *slash = strrchr(rel, '/');
    if (!slash || !slash[1]) return PAIMON_OK;   /* in the table directory itself: never a candidate */
    size_t dl = (size_t)(slash - rel);
    int added = 0;
    long ord = pm_set_add_ordinal(x->dirs, rel, dl, &added);
    if (ord < 0) return pm_nomem(e);
    if (added) {
        int rc = tree_dir_task(x, rel, dl, ord, e);
        if (rc) return rc;
    }
    long ti = x->task_of[ord];
    if (ti < 0) return PAIMON_OK;
    list_task *tk = &(*x->v)[ti];
    int kind = classify(x->lx, tk->kind, slash + 1);
    if (kind < 0) return PAIMON_OK;
    return task_add_listed(tk, slash + 1, kind, st) ? pm_nomem(e) : PAIMON_OK;
}

static int cmp_task_dir(const void *a, const void *b) {
    return strcmp(((const list_task *)a)->dir, ((const list_task *)b)->dir);
}

/* ---- used set ----------------------------------------------------------------- */

/* The used set is kept as marks on the listed files: a name nobody listed
 * cannot be deleted, so only listed names need to be known as used. The
 * candidate names form a set (read-only while readers look names up in
 * parallel); each used name sets the flag of its slot. Names match by file
 * name alone, whichever directory they were found in (as Java matches). */
typedef struct marks {
    pm_set *names;       /* listed names (main thread builds, workers only look up) */
    uint8_t *flag;       /* per slot of names: used */
    int64_t data_names;  /* data / extra / changelog file names read from manifests */
} marks;

/* Look a used name up among the listed ones and flag its slot (readers
 * flag in parallel: relaxed atomic stores of 1, read after the run joins).
 * Matched by hash and length alone (the key comparison's cache miss was a
 * fifth of the scan's CPU): every listed name that could be this one is
 * flagged, so the name itself always is, and a hash collision can only
 * keep a file. */
static void note_used(const marks *m, const char *name) {
    if (!name) return;
    uint8_t kb[PM_NAME_KEY_MAX];
    size_t len;
    const void *key = pm_name_key(name, strlen(name), kb, &len);
    long sl[8];
    size_t n = pm_set_slots_like(m->names, key, len, sl, 8);
    if (n > 8) {   /* more collisions than room: the exact slot */
        sl[0] = pm_set_slot(m->names, key, len);
        n = sl[0] >= 0;
    }
    for (size_t k = 0; k < n; k++) __atomic_store_n(&m->flag[sl[k]], 1, __ATOMIC_RELAXED);
}

static void mark(marks *m, const char *name) {
    if (!name) return;
    uint8_t kb[PM_NAME_KEY_MAX];
    size_t len;
    const void *key = pm_name_key(name, strlen(name), kb, &len);
    long sl = pm_set_slot(m->names, key, len);
    if (sl >= 0) m->flag[sl] = 1;
}

/* A failed task's error, kept on the heap (a pm_err is about 1 KiB: not
 * one per task of a long history); NULL when rc is OK or out of memory. */
static pm_err *err_keep(int rc, const pm_err *err) {
    pm_err *k = rc ? malloc(sizeof *k) : NULL;
    if (k) *k = *err;
    return k;
}

/* The error a failed task kept, into e: its code, or PAIMON_NOMEM when
 * it could not be kept. */
static int err_restore(int rc, const pm_err *kept, pm_err *e) {
    if (!kept) return pm_nomem(e);
    *e = *kept;
    return rc;
}

typedef struct read_task {
    const char *name;
    int64_t size;        /* from the manifest list: biggest first */
    int index;           /* index manifest */
    int later;           /* only older snapshots name it: the second round */
    unsigned part, parts;/* a big manifest's blocks shared by parts tasks (parts 0: one task) */
    int64_t data_names;
    int rc;
    pm_err *err;         /* allocated when the read failed */
} read_task;

static int cmp_read_size(const void *a, const void *b) {
    const read_task *x = a, *y = b;
    if (x->later != y->later) return x->later - y->later;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The second round, when few listed files are still unknown: their names.
 * A manifest block whose bytes hold none of them cannot name one of them
 * (Avro keeps strings as their bytes): its records are only walked with
 * every check (a garbled block still refuses the run), their names are not
 * looked up. */
#define UNKNOWN_NEEDLES_MAX 8
/* a manifest gets one reading task per this many bytes (at most one per thread) */
#define MANIFEST_PART_BYTES ((int64_t)64 * 1024)
static int64_t part_bytes(const pm_orphan_opts *o) {
    return o->manifest_part_bytes > 0 ? o->manifest_part_bytes : MANIFEST_PART_BYTES;
}
typedef struct needles {
    const char *v[UNKNOWN_NEEDLES_MAX];
    size_t len[UNKNOWN_NEEDLES_MAX];
    size_t n;
    pm_buf text;         /* the names, unpacked (v points into it) */
} needles;

static int contains(const uint8_t *data, size_t len, const char *needle, size_t n) {
    if (n == 0) return 1;
    const uint8_t *p = data, *end = data + len;
    while ((size_t)(end - p) >= n && (p = memchr(p, (unsigned char)needle[0], (size_t)(end - p) - n + 1))) {
        if (!memcmp(p, needle, n)) return 1;
        p++;
    }
    return 0;
}

static int block_names_any(void *ud, const uint8_t *data, size_t len) {
    const needles *nd = ud;
    for (size_t i = 0; i < nd->n; i++)
        if (contains(data, len, nd->v[i], nd->len[i])) return 1;
    return 0;
}

typedef struct read_ctx {
    paimon_table *t;
    read_task *tasks;
    pm_avro_schema_cache *sc;
    const marks *m;
    needles *only;       /* NULL: every block */
} read_ctx;

static void read_one(void *ctx, size_t i) {
    read_ctx *x = ctx;
    read_task *tk = &x->tasks[i];
    pm_err err = {0};
    pm_manifest_reader *r;
    /* the operation's schema cache (bound while opening; it outlives the reader) */
    pm_avro_schema_cache *prev = pm_avro_schema_cache_bound();
    if (x->sc) pm_avro_schema_cache_bind(x->sc);
    int rc = pm_table_open_manifest(x->t, tk->name, tk->index ? PM_INDEX_MANIFEST : PM_MANIFEST_FILE, &r, &err);
    if (x->sc) pm_avro_schema_cache_bind(prev);
    if (!rc) {
        if (!tk->index) pm_manifest_names_only(r);   /* only names matter here */
        if (tk->parts > 1) pm_manifest_block_share(r, tk->part, tk->parts);
        if (x->only) pm_manifest_block_filter(r, block_names_any, x->only);
        if (tk->index) {
            const pm_index_entry *ie;
            while ((rc = pm_manifest_next_index(r, &ie, &err)) == PAIMON_OK) note_used(x->m, ie->file_name);
        } else {
            const pm_manifest_entry *me;
            while ((rc = pm_manifest_next_entry(r, &me, &err)) == PAIMON_OK) {
                if (me->file.file_name) tk->data_names++;
                note_used(x->m, me->file.file_name);
                for (size_t k = 0; k < me->file.extra_files.n; k++) {
                    tk->data_names++;
                    note_used(x->m, me->file.extra_files.v[k]);
                }
            }
        }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    tk->rc = rc;
    tk->err = err_keep(rc, &err);
}

/* Manifest lists, read in parallel (names only); merged in list order
 * afterwards. */
typedef struct list_read {
    const char *name;
    pm_strv v;
    int64_t *size;       /* per name in v */
    int rc;
    pm_err *err;         /* allocated when the read failed (a pm_err is large) */
} list_read;

typedef struct list_read_ctx { paimon_table *t; list_read *tasks; pm_avro_schema_cache *sc; } list_read_ctx;

static void read_list_one(void *ctx, size_t i) {
    list_read_ctx *x = ctx;
    list_read *tk = &x->tasks[i];
    pm_err err = {0};
    pm_avro_schema_cache *prev = pm_avro_schema_cache_bound();
    if (x->sc) pm_avro_schema_cache_bind(x->sc);
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(x->t, tk->name, PM_MANIFEST_LIST, &r, &err);
    if (x->sc) pm_avro_schema_cache_bind(prev);
    if (!rc) {
        pm_manifest_names_only(r);
        const pm_manifest_meta *m;
        while ((rc = pm_manifest_next_meta(r, &m, &err)) == PAIMON_OK) {
            if (pm_strv_push(&tk->v, m->file_name)) { rc = pm_nomem(&err); break; }
            int64_t *ns = realloc(tk->size, tk->v.cap * sizeof *ns);
            if (!ns) { rc = pm_nomem(&err); break; }
            tk->size = ns;
            tk->size[tk->v.n - 1] = m->file_size;
        }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    tk->rc = rc;
    tk->err = err_keep(rc, &err);
}

typedef struct used {
    marks *m;
    pm_set *lists;       /* manifest lists to read */
    pm_set *first;       /* those of each branch's latest snapshot and of the tags */
    pm_set *index;       /* index manifests to read */
    pm_strv list_v, index_v;
} used;

/* One metadata file a snapshot names: used, and a manifest list or index
 * manifest queued for reading (each once). */
typedef struct use_ctx { used *u; int first; } use_ctx;

static int use_name(void *ud, pm_refs_name_kind kind, const char *name, int64_t size, pm_err *e) {
    use_ctx *c = ud;
    used *u = c->u;
    (void)size;
    mark(u->m, name);
    if (kind == PM_REFS_STATISTICS) return PAIMON_OK;
    size_t len = strlen(name);
    if (kind == PM_REFS_INDEX_MANIFEST) {
        int a = pm_set_add(u->index, name, len);
        return a < 0 || (a && pm_strv_push(&u->index_v, name)) ? pm_nomem(e) : PAIMON_OK;
    }
    int a = pm_set_add(u->lists, name, len);
    if (a < 0 || (a && pm_strv_push(&u->list_v, name))) return pm_nomem(e);
    if (c->first && pm_set_add(u->first, name, len) < 0) return pm_nomem(e);
    return PAIMON_OK;
}

/* first: the snapshot is a branch's latest or a tag; its manifests are read
 * in the first round (see read_manifests). */
static int use_snapshot(used *u, const pm_snapshot *s, int first, pm_err *e) {
    use_ctx c = {u, first};
    return pm_refs_snapshot_names(s, use_name, &c, e);
}

/* A long-lived changelog: Java deletes the base and delta manifest lists of
 * a changelog with a changelog producer, and the base list, index manifest
 * and statistics of one without, when it moves the snapshot to changelog/
 * (and reads them only if they exist, OrphanFilesClean): a missing one
 * names nothing. Its changelog manifest list must be readable. A list
 * that vanishes after this check still aborts the run (fail closed). */
static int use_changelog(paimon_table *bt, used *u, const pm_snapshot *s, pm_err *e) {
    pm_snapshot c = *s;
    char **opt[3] = {&c.base_manifest_list, &c.delta_manifest_list, &c.index_manifest};
    for (int i = 0; i < 3; i++) {
        if (!*opt[i]) continue;
        mark(u->m, *opt[i]);   /* the name stays used either way */
        char *path = pm_table_manifest_path(bt, *opt[i]);
        if (!path) return pm_nomem(e);
        int ex = 0, rc = pm_io_exists(bt->io, path, &ex, e);
        free(path);
        if (rc) return rc;
        if (!ex) *opt[i] = NULL;
    }
    return use_snapshot(u, &c, 0, e);
}

/* A tag (its manifests read in the first round) or a long-lived changelog. */
static int use_source(void *ud, paimon_table *bt, pm_refs_source src, const char *by, const pm_snapshot *s,
                      pm_err *e) {
    (void)by;
    return src == PM_REFS_TAG ? use_snapshot(ud, s, 1, e) : use_changelog(bt, ud, s, e);
}

/* Snapshot files, read in parallel; used in id order afterwards. */
/* Progress of a window of a longer run, reported against the whole. */
typedef struct window_progress { pm_progress_fn fn; void *ud; size_t base, total; } window_progress;

static void window_progress_fn(void *ud, const char *phase, size_t done, size_t total) {
    const window_progress *w = ud;
    (void)total;
    w->fn(w->ud, phase, w->base + done, w->total);
}

typedef struct snap_read {
    int64_t id;
    pm_snapshot *s;
    int rc;
    pm_err *err;         /* allocated when the read failed */
} snap_read;

/* The set of listed names, built while the first branch's snapshots are
 * read (task 0 of that run): nothing reads it before the run ends. */
typedef struct name_set_job {
    list_task *tasks;
    size_t n_tasks;
    size_t listed;
    marks *m;
    int64_t data_cands;   /* data and changelog files listed */
    int rc;
} name_set_job;

static void build_name_set(name_set_job *j) {
    /* sized up front: the slots noted below stay valid */
    if (pm_set_reserve(j->m->names, j->listed)) { j->rc = PAIMON_NOMEM; return; }
    for (size_t i = 0; i < j->n_tasks; i++)
        for (size_t k = 0; k < j->tasks[i].n; k++) {
            cand *c = &j->tasks[i].c[k];
            if (c->kind == PM_K_DATA || c->kind == PM_K_CHANGELOG) j->data_cands++;
            if (c->kind == PM_K_TEMP) continue;
            size_t kl;
            const uint8_t *key = cand_key(&j->tasks[i], c, &kl);
            if ((c->slot = pm_set_add_slot(j->m->names, key, kl)) < 0) { j->rc = PAIMON_NOMEM; return; }
        }
    if (!(j->m->flag = calloc(pm_set_slots(j->m->names), 1))) j->rc = PAIMON_NOMEM;
}

typedef struct snap_read_ctx { paimon_table *bt; snap_read *tasks; name_set_job *side; } snap_read_ctx;

static void read_snapshot_one(void *ctx, size_t i) {
    snap_read_ctx *x = ctx;
    if (x->side) {
        if (i == 0) { build_name_set(x->side); return; }
        i--;
    }
    snap_read *tk = &x->tasks[i];
    pm_err err = {0};
    tk->rc = pm_snapshot_read_known(x->bt->io, x->bt->branch_root, x->bt->schemas_known, tk->id, &tk->s, &err);
    if (tk->rc) tk->s = NULL;
    tk->err = err_keep(tk->rc, &err);
}

/* Snapshots read (and held) at a time. */
#define SNAPSHOT_WINDOW 256

/* Snapshots, tags and long-lived changelogs of one branch; `side` (if not
 * NULL) runs alongside the snapshot reads. */
static int use_branch(paimon_table *bt, used *u, const pm_orphan_opts *o, name_set_job *side, pm_err *e) {
    int64_t *ids = NULL;
    size_t n = 0;
    snap_read *sr = NULL;
    int rc = pm_snapshot_list_ids(bt->io, bt->branch_root, &ids, &n, e);
    if (!rc && !(sr = calloc(SNAPSHOT_WINDOW, sizeof *sr))) rc = pm_nomem(e);
    /* a window at a time, in id order: the first unreadable snapshot fails
     * the run; the side job runs with the first window (also when there
     * is no snapshot) */
    for (size_t base = 0; !rc && (base < n || (base == 0 && side)); base += SNAPSHOT_WINDOW) {
        size_t w = n - base < SNAPSHOT_WINDOW ? n - base : SNAPSHOT_WINDOW;
        for (size_t i = 0; i < w; i++) sr[i] = (snap_read){.id = ids[base + i]};
        snap_read_ctx sx = {bt, sr, base == 0 ? side : NULL};
        window_progress wp = {o->progress, o->progress_ud, base, n};
        /* an object store's reads wait on round trips: more at once than threads */
        rc = pm_exec_run(pm_io_read_threads(bt->io, o->threads), w + (sx.side ? 1 : 0), read_snapshot_one, &sx,
                         "reading snapshots", wp.fn ? window_progress_fn : NULL, &wp, e);
        if (!rc && sx.side && side->rc) rc = pm_nomem(e);
        for (size_t i = 0; !rc && i < w; i++) {
            if (sr[i].rc) {
                rc = err_restore(sr[i].rc, sr[i].err, e);
                if (!sr[i].err) break;   /* out of memory */
                pm_err_prefix(e, "refusing to clean: cannot read snapshot %lld of branch %s", (long long)sr[i].id, bt->branch);
                if (rc == PAIMON_NOTFOUND) rc = PAIMON_CONFLICT;   /* expired meanwhile */
                break;
            }
            rc = use_snapshot(u, sr[i].s, base + i + 1 == n, e);
        }
        for (size_t i = 0; i < w; i++) { pm_snapshot_free(sr[i].s); free(sr[i].err); }
        if (n == 0) break;
    }
    free(sr);
    free(ids);
    if (rc) return rc;
    /* tags (a tag gone meanwhile: conflict), changelog/changelog-<id>
     * (decoupled changelog lifecycle) */
    pm_refs_visitor v = {PM_REFS_REFUSE, "refusing to clean", {0, PAIMON_CONFLICT, 0}, use_source, NULL, u};
    rc = pm_refs_tags(bt, &v, e);
    return rc ? rc : pm_refs_changelogs(bt, &v, e);
}

static int latest_or_zero(paimon_table *bt, int64_t *id, pm_err *e) {
    int rc = pm_snapshot_latest_id(bt->io, bt->branch_root, id, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); *id = 0; return PAIMON_OK; }
    return rc;
}

/* The age check for the candidates the used set does not name (temp files:
 * all of them, by age alone): marks them used or not from the flags, then
 * stats the unused ones (c->remove). *used_out: candidates in use. */
static int check_ages(list_ctx *lx, list_task *tasks, size_t n_tasks, const marks *m, const pm_orphan_opts *o,
                      int64_t *used_out, pm_err *e) {
    int64_t n_used = 0;
    for (size_t i = 0; i < n_tasks; i++) {
        tasks[i].n_unused = 0;
        for (size_t k = 0; k < tasks[i].n; k++) {
            cand *c = &tasks[i].c[k];
            c->remove = 0;
            if (c->kind != PM_K_TEMP) c->used = m->flag[c->slot];
            if (c->used) n_used++;
            else tasks[i].n_unused++;
        }
    }
    *used_out = n_used;
    int rc = pm_exec_run(o->threads, n_tasks, age_one, lx, "checking ages", o->progress, o->progress_ud, e);
    for (size_t i = 0; !rc && i < n_tasks; i++)
        if (tasks[i].rc) { rc = tasks[i].rc; *e = tasks[i].err; pm_err_prefix(e, "refusing to clean"); }
    return rc;
}

/* Tasks reading a manifest of `size` bytes: one per part_bytes, at most max_parts. */
static unsigned parts_of(int64_t size, unsigned max_parts, const pm_orphan_opts *o) {
    int64_t k = size / part_bytes(o);
    return k <= 1 ? 1 : k < (int64_t)max_parts ? (unsigned)k : max_parts;
}

/* After reads [from, to) (they flagged the names they found): the first
 * that failed fails the run; count the data file names they read. */
static int merge_reads(read_task *reads, size_t from, size_t to, marks *m, pm_err *e) {
    for (size_t i = from; i < to; i++) {
        if (reads[i].rc) {
            int rc = err_restore(reads[i].rc, reads[i].err, e);
            if (reads[i].err) pm_err_prefix(e, "refusing to clean: cannot read the used set");
            return rc;
        }
        m->data_names += reads[i].data_names;   /* the names were flagged as read */
    }
    return PAIMON_OK;
}

static int unknown_cand(const cand *c, const marks *m) { return c->kind != PM_K_TEMP && !m->flag[c->slot]; }

/* After the first round: must the manifests only older snapshots name
 * (later[0, n_later)) be read? Only if a listed file not yet known to be in
 * use would be deleted: one older than the cut-off (a file being written
 * now is kept either way; few unknown files get their ages looked up for
 * that, and *ages_final says those ages stand if the answer is no; many
 * mean older snapshots' files: yes at once). Also yes when what would be
 * skipped is wrong in a way reading would show without doubt: no data file
 * named yet while data files exist (the empty-used-set check must see
 * every manifest), or a manifest the lists name that the listing did not
 * find (its read would fail, as Java's does). */
static int second_round_needed(list_ctx *lx, list_task *tasks, size_t n_tasks, const marks *m, int64_t data_cands,
                               const read_task *later, size_t n_later, const pm_orphan_opts *o,
                               pm_orphan_result *res, int *needed, int *ages_final, pm_err *e) {
    int64_t unknown = 0;
    for (size_t i = 0; i < n_tasks; i++)
        for (size_t k = 0; k < tasks[i].n; k++) unknown += unknown_cand(&tasks[i].c[k], m);
    *needed = unknown > 64 && unknown > res->listed / 64;
    if (!*needed && unknown) {
        int rc = check_ages(lx, tasks, n_tasks, m, o, &res->used, e);
        if (rc) return rc;
        *ages_final = 1;
        for (size_t i = 0; i < n_tasks && !*needed; i++)
            for (size_t k = 0; k < tasks[i].n && !*needed; k++) {
                const cand *c = &tasks[i].c[k];
                *needed = c->kind != PM_K_TEMP && !c->used && c->remove;
            }
    }
    if (data_cands > 0 && m->data_names == 0) *needed = 1;
    for (size_t i = 0; i < n_later && !*needed; i++) {
        uint8_t kb[PM_NAME_KEY_MAX];
        size_t len;
        const void *key = pm_name_key(later[i].name, strlen(later[i].name), kb, &len);
        *needed = pm_set_slot(m->names, key, len) < 0;
    }
    return PAIMON_OK;
}

/* The names of the files still unknown, if there are few and data names
 * were seen (the empty-used-set check did not force the round): NULL
 * otherwise (every block's names are looked up). */
static needles *few_unknown(list_task *tasks, size_t n_tasks, const marks *m, needles *nd) {
    nd->n = 0;
    if (m->data_names == 0) return NULL;
    size_t off[UNKNOWN_NEEDLES_MAX];
    for (size_t i = 0; i < n_tasks; i++)
        for (size_t k = 0; k < tasks[i].n; k++) {
            const cand *c = &tasks[i].c[k];
            if (!unknown_cand(c, m)) continue;
            if (nd->n == UNKNOWN_NEEDLES_MAX) return NULL;
            size_t kl, at = nd->text.len;
            const uint8_t *key = cand_key(&tasks[i], c, &kl);
            /* out of memory: no needles, every block is looked up (slower, as safe) */
            if (pm_name_unkey(key, kl, &nd->text)) return NULL;
            off[nd->n] = at;
            nd->len[nd->n] = nd->text.len - at;
            nd->n++;
        }
    for (size_t i = 0; i < nd->n; i++) nd->v[i] = (const char *)nd->text.data + off[i];
    return nd->n ? nd : NULL;
}

/* ---- main: the named steps ------------------------------------------------- */

/* An old unused candidate: its name and the size its listing gave (-1: not listed). */
typedef struct orphan_name { const char *name; int64_t size; } orphan_name;

static int cmp_orphan_name(const void *a, const void *b) {
    return strcmp(((const orphan_name *)a)->name, ((const orphan_name *)b)->name);
}

/* One run's state, shared by the steps below. */
typedef struct orphan_run {
    paimon_table *t;
    const pm_orphan_opts *o;
    pm_orphan_result *res;
    paimon_table **bts;          /* main, then the other branches */
    size_t nb;
    int64_t *latest;             /* per branch, when the run started */
    list_task *tasks;            /* candidate directories and what they hold */
    size_t n_tasks, cap_tasks;
    list_ctx lx;
    marks m;
    used u;
    int64_t data_cands;
    int ages_final;              /* the age check already ran on the final used set */
    pm_deleter *del;
    pm_avro_schema_cache *sc;    /* the many manifest lists and manifests share a few writer schemas */
    sweep sw;                    /* directories removed once empty (step 6) */
} orphan_run;

/* The cut-off: not in the future (by the real clock too: a caller's `now`
 * (tests, a skewed host) must not let one through), and not younger than
 * the floor (files of commits in flight are protected only by their age:
 * a commit publishes files it wrote earlier) unless overridden. */
static int check_cutoff(paimon_table *t, const pm_orphan_opts *o, pm_orphan_result *res, pm_err *e) {
    int64_t now = o->now_ms > 0 ? o->now_ms : pm_now_millis();
    int64_t cutoff = o->has_older_than ? o->older_than_ms : now - 86400000LL;
    int64_t clock = pm_now_millis();
    if (cutoff > now || cutoff > clock)
        return pm_fail(e, PAIMON_MISUSE, "older-than cut-off %lld is in the future (now %lld): files being written would be deleted",
                       (long long)cutoff, (long long)(now < clock ? now : clock));
    int64_t youngest = (now < clock ? now : clock) - PM_ORPHAN_CUTOFF_FLOOR_MS;
    res->cutoff_floor_ms = PM_ORPHAN_CUTOFF_FLOOR_MS;
    if (cutoff > youngest) {
        if (!o->allow_young_cutoff)
            return pm_fail(e, PAIMON_MISUSE, "%s: older-than cut-off %lld is younger than the safety floor (%lld "
                           "minutes before now, %lld): files of commits still in flight could be deleted; choose an "
                           "older cut-off (default 1 day) or set allow-young-cutoff to override",
                           t->root, (long long)cutoff, PM_ORPHAN_CUTOFF_FLOOR_MS / 60000,
                           (long long)(now < clock ? now : clock));
        res->floor_overridden = 1;
    }
    res->older_than_ms = cutoff;
    return PAIMON_OK;
}

/* Every branch, each with a schema and Avro manifests (Java aborts
 * otherwise), and its latest snapshot now (compared before deleting). */
static int open_branches(orphan_run *r, pm_err *e) {
    int rc = pm_refs_open_branches(r->t, &r->bts, &r->nb, e);
    if (rc) { pm_err_prefix(e, "refusing to clean"); return rc; }
    if (!(r->latest = calloc(r->nb, sizeof *r->latest))) return pm_nomem(e);
    for (size_t i = 0; i < r->nb; i++) {
        if ((rc = pm_table_check_manifest_format(r->bts[i], e))) return rc;
        if ((rc = latest_or_zero(r->bts[i], &r->latest[i], e))) return rc;
    }
    return PAIMON_OK;
}

static int add_candidate_dir(orphan_run *r, const char *base, const char *sub, dir_kind k, pm_err *e) {
    return add_candidate_dir_to(&r->tasks, &r->n_tasks, &r->cap_tasks, base, sub, k, e);
}

/* The candidates of a FileIO that is not local: the fixed directories
 * (tasks [0, n_tasks)) and the bucket directories, from one list_tree of
 * the table; bucket directories in name order. */
static int list_tree_candidates(orphan_run *r, const char *droot, pm_err *e) {
    paimon_table *t = r->t;
    size_t rl = strlen(t->root), n_fixed = r->n_tasks;
    /* pm_path_join put droot below the root; as a key prefix without a trailing '/' */
    const char *dr = strncmp(droot, t->root, rl) == 0 && droot[rl] == '/' ? droot + rl + 1 : "";
    size_t drl = strlen(dr);
    while (drl && dr[drl - 1] == '/') drl--;
    char *data_rel = pm_strndup(dr, drl);
    tree_ctx x = {&r->lx, r->bts[0], t->root, data_rel, &r->tasks, &r->n_tasks, &r->cap_tasks, pm_set_new(), NULL, 0,
                  &r->sw};
    int rc = x.dirs && data_rel ? PAIMON_OK : pm_nomem(e);
    for (size_t i = 0; !rc && i < n_fixed; i++) {   /* the fixed directories, relative to the table */
        const char *d = r->tasks[i].dir;
        if (strncmp(d, t->root, rl) || d[rl] != '/') continue;   /* not below the table: not listed */
        long ord = pm_set_add_ordinal(x.dirs, d + rl + 1, strlen(d + rl + 1), NULL);
        if (ord < 0 || tree_dir_task(&x, d + rl + 1, 0, ord, e)) { rc = pm_nomem(e); break; }
        x.task_of[ord] = (long)i;
    }
    if (!rc) rc = pm_io_list_tree_dirs(t->io, t->root, tree_key, &x, e);
    if (rc) pm_err_prefix(e, "refusing to clean: cannot list %s", t->root);
    if (!rc && r->n_tasks - n_fixed > 1)
        qsort(r->tasks + n_fixed, r->n_tasks - n_fixed, sizeof *r->tasks, cmp_task_dir);
    pm_set_free(x.dirs);
    free(x.task_of);
    free(data_rel);
    return rc;
}

/* 1. The candidates: Paimon's own directories and file-name patterns,
 * listed before the used set is read. */
static int list_candidates(orphan_run *r, pm_err *e) {
    paimon_table *t = r->t, *main_t = r->bts[0];
    int rc = add_candidate_dir(r, t->root, "manifest", DIR_MANIFEST, e);
    if (!rc) rc = add_candidate_dir(r, t->root, "index", DIR_INDEX, e);
    if (!rc) rc = add_candidate_dir(r, t->root, "statistics", DIR_STATS, e);
    for (size_t i = 0; !rc && i < r->nb; i++) {
        rc = add_candidate_dir(r, r->bts[i]->branch_root, "snapshot", DIR_META, e);
        if (!rc) rc = add_candidate_dir(r, r->bts[i]->branch_root, "changelog", DIR_META, e);
    }
    if (rc) return rc;
    /* readdir/fstatat directly only where the FileIO says paths are OS paths;
     * one flat listing where it is an object store */
    int is_local = pm_io_has(t->io, PM_IO_LOCAL);
    list_ctx lx = {t->io, is_local, !is_local, NULL, r->res->older_than_ms,
                   pm_schema_option_or_default(main_t->schema, "data-file.prefix"),
                   pm_schema_option_or_default(main_t->schema, "changelog-file.prefix")};
    if (!lx.data_prefix) lx.data_prefix = "data-";
    if (!lx.changelog_prefix) lx.changelog_prefix = "changelog-";
    r->lx = lx;
    char *droot = main_t->data_dir && *main_t->data_dir ? pm_path_join(t->root, main_t->data_dir) : pm_strdup(t->root);
    if (!droot) return pm_nomem(e);
    if (r->lx.tree) rc = list_tree_candidates(r, droot, e);
    else rc = walk_partitions(main_t, droot, 0, &r->tasks, &r->n_tasks, &r->cap_tasks, &r->sw, e);
    free(droot);
    if (rc) return rc;
    r->lx.tasks = r->tasks;   /* final now: the walk grows the array */
    if (!r->lx.tree &&
        (rc = pm_exec_run(r->o->threads, r->n_tasks, list_one, &r->lx, "listing", r->o->progress, r->o->progress_ud, e)))
        return rc;
    for (size_t i = 0; i < r->n_tasks; i++) {
        if (r->tasks[i].rc) { *e = r->tasks[i].err; pm_err_prefix(e, "refusing to clean"); return r->tasks[i].rc; }
        r->res->listed += (int64_t)r->tasks[i].n;
    }
    return PAIMON_OK;
}

/* The manifests every queued manifest list names, each once, in list
 * order, with its size and whether only older snapshots name it. */
typedef struct manifest_set {
    pm_strv names;
    int64_t *size;
    uint8_t *later;
} manifest_set;

static void manifest_set_free(manifest_set *ms) {
    pm_strv_clear(&ms->names);
    free(ms->size);
    free(ms->later);
}

/* Merge the lists [0, n) of a window read by read_lists into ms, in list
 * order: the first unreadable list fails the run. A manifest is "later"
 * until a first-round list (a branch's latest snapshot, a tag) names it. */
static int merge_lists(orphan_run *r, list_read *lr, size_t n, pm_set *mseen, manifest_set *ms, pm_err *e) {
    used *u = &r->u;
    for (size_t i = 0; i < n; i++) {
        if (lr[i].rc) {
            int rc = err_restore(lr[i].rc, lr[i].err, e);
            if (lr[i].err) pm_err_prefix(e, "refusing to clean: cannot read the used set");
            return rc;
        }
        const int first = pm_set_contains(u->first, lr[i].name, strlen(lr[i].name));
        for (size_t k = 0; k < lr[i].v.n; k++) {
            const char *mn = lr[i].v.v[k];
            int added = 0;
            long at = pm_set_add_ordinal(mseen, mn, strlen(mn), &added);
            if (at < 0) return pm_nomem(e);
            if (added) {
                if (pm_strv_push(&ms->names, mn)) return pm_nomem(e);
                mark(&r->m, mn);
                int64_t *ns = realloc(ms->size, ms->names.cap * sizeof *ns);
                uint8_t *nl = ns ? realloc(ms->later, ms->names.cap) : NULL;
                if (ns) ms->size = ns;
                if (!nl) return pm_nomem(e);
                ms->later = nl;
                ms->size[at] = lr[i].size[k];
                ms->later[at] = 1;
            }
            if (first) ms->later[at] = 0;
        }
    }
    return PAIMON_OK;
}

/* Manifest lists read (and their names held) at a time: a table with a
 * long history has a list per snapshot, each naming many manifests. */
#define LIST_WINDOW 256

/* 2a. What every branch's snapshots, tags and changelogs name (the
 * listed-name set is built alongside the main branch's snapshot reads),
 * then their manifest lists, read in parallel (names only) a window at a
 * time, each window merged before the next is read. */
static int read_lists(orphan_run *r, manifest_set *ms, pm_err *e) {
    name_set_job nsj = {r->tasks, r->n_tasks, (size_t)r->res->listed, &r->m, 0, 0};
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < r->nb; i++) rc = use_branch(r->bts[i], &r->u, r->o, i == 0 ? &nsj : NULL, e);
    if (rc) return rc;
    r->data_cands = nsj.data_cands;
    used *u = &r->u;
    const size_t n_lists = u->list_v.n;
    list_read *lr = calloc(LIST_WINDOW, sizeof *lr);
    pm_set *mseen = pm_set_new();
    if (!lr || !mseen) { free(lr); pm_set_free(mseen); return pm_nomem(e); }
    for (size_t base = 0; !rc && base < n_lists; base += LIST_WINDOW) {
        size_t n = n_lists - base < LIST_WINDOW ? n_lists - base : LIST_WINDOW;
        for (size_t i = 0; i < n; i++) lr[i] = (list_read){.name = u->list_v.v[base + i]};
        list_read_ctx lrx = {r->bts[0], lr, r->sc};
        window_progress wp = {r->o->progress, r->o->progress_ud, base, n_lists};
        rc = pm_exec_run(pm_io_read_threads(r->t->io, r->o->threads), n, read_list_one, &lrx,
                         "reading manifest lists", wp.fn ? window_progress_fn : NULL, &wp, e);
        if (!rc) rc = merge_lists(r, lr, n, mseen, ms, e);
        for (size_t i = 0; i < n; i++) { pm_strv_clear(&lr[i].v); free(lr[i].size); free(lr[i].err); }
    }
    free(lr);
    pm_set_free(mseen);
    return rc;
}

/* The reading tasks: every index manifest, then each manifest in one or
 * more parts, biggest first in each round. A big merged manifest would
 * leave the other CPUs idle while one reads it: on the local file system
 * its blocks are shared out among a few tasks (each opens the file and
 * decodes every parts-th block). */
static read_task *plan_reads(orphan_run *r, const manifest_set *ms, size_t *n_reads, size_t *n_first, pm_err *e) {
    const pm_orphan_opts *o = r->o;
    size_t n_index = r->u.index_v.n;
    unsigned max_parts = r->lx.local && o->threads > 1 ? (unsigned)(o->threads < 8 ? o->threads : 8) : 1;
    size_t n_parts = 0;
    for (size_t i = 0; i < ms->names.n; i++) n_parts += parts_of(ms->size[i], max_parts, o);
    *n_reads = n_parts + n_index;
    read_task *reads = calloc(*n_reads ? *n_reads : 1, sizeof *reads);
    if (!reads) { pm_nomem(e); return NULL; }
    for (size_t i = 0; i < n_index; i++) { reads[i].name = r->u.index_v.v[i]; reads[i].index = 1; }
    for (size_t i = 0, at = n_index; i < ms->names.n; i++) {
        unsigned parts = parts_of(ms->size[i], max_parts, o);
        for (unsigned q = 0; q < parts; q++, at++) {
            read_task *rt = &reads[at];
            rt->name = ms->names.v[i];
            rt->size = ms->size[i] / parts;
            rt->later = ms->later[i];
            rt->part = q;
            rt->parts = parts > 1 ? parts : 0;
        }
    }
    if (n_parts > 1) qsort(reads + n_index, n_parts, sizeof *reads, cmp_read_size);
    *n_first = n_index;
    while (*n_first < *n_reads && !reads[*n_first].later) (*n_first)++;
    return reads;
}

/* 2b. The manifests, in two rounds: first those of each branch's latest
 * snapshot and of the tags, with every index manifest; then those only
 * older snapshots name, unless no file they could protect would be
 * deleted (second_round_needed; most runs on a healthy table). Any
 * unreadable manifest a round reads fails the run. */
static int read_manifests(orphan_run *r, const manifest_set *ms, pm_err *e) {
    const pm_orphan_opts *o = r->o;
    size_t n_reads = 0, n_first = 0;
    read_task *reads = plan_reads(r, ms, &n_reads, &n_first, e);
    if (!reads) return PAIMON_NOMEM;
    int reader_threads = pm_io_read_threads(r->t->io, o->threads);
    read_ctx rx = {r->bts[0], reads, r->sc, &r->m, NULL};
    int rc = pm_exec_run(reader_threads, n_first, read_one, &rx, "reading manifests", o->progress, o->progress_ud, e);
    if (!rc) rc = merge_reads(reads, 0, n_first, &r->m, e);
    size_t n_done = n_first;
    int needed = 0;
    if (!rc && n_first < n_reads)
        rc = second_round_needed(&r->lx, r->tasks, r->n_tasks, &r->m, r->data_cands, reads + n_first,
                                 n_reads - n_first, o, r->res, &needed, &r->ages_final, e);
    if (!rc && needed) {
        r->ages_final = 0;
        needles nd = {{0}, {0}, 0, {0}};
        read_ctx rx2 = {r->bts[0], reads + n_first, r->sc, &r->m, few_unknown(r->tasks, r->n_tasks, &r->m, &nd)};
        rc = pm_exec_run(reader_threads, n_reads - n_first, read_one, &rx2, "reading manifests", o->progress,
                         o->progress_ud, e);
        pm_buf_free(&nd.text);
        if (!rc) rc = merge_reads(reads, n_first, n_reads, &r->m, e);
        n_done = n_reads;
    }
    for (size_t i = r->u.index_v.n; i < n_reads; i++) {   /* manifests, not their parts */
        if (reads[i].part) continue;
        if (i < n_done) r->res->manifests_read++;
        else r->res->manifests_skipped++;
    }
    for (size_t i = 0; i < n_reads; i++) free(reads[i].err);
    free(reads);
    return rc;
}

/* 2. The used set (as marks on the listed names); an empty one while
 * data files exist refuses the run. */
static int collect_used(orphan_run *r, pm_err *e) {
    manifest_set ms = {{0}, NULL, NULL};
    int rc = read_lists(r, &ms, e);
    if (!rc) rc = read_manifests(r, &ms, e);
    manifest_set_free(&ms);
    if (!rc && r->data_cands > 0 && r->m.data_names == 0)
        rc = pm_fail(e, PAIMON_CONFLICT,
                     "%s: refusing to clean: no snapshot, tag or changelog uses any data file, yet data files exist",
                     r->t->root);
    return rc;
}

/* 3. The age of each unused candidate (temp files: by age alone); done
 * already when the used set was final before the second round. */
static int age_filter(orphan_run *r, pm_err *e) {
    int rc = r->ages_final ? PAIMON_OK : check_ages(&r->lx, r->tasks, r->n_tasks, &r->m, r->o, &r->res->used, e);
    if (!rc) r->res->candidates = r->res->listed - r->res->used;
    return rc;
}

/* 4. Nothing committed meanwhile (checked last, right before deleting). */
static int check_unchanged(orphan_run *r, pm_err *e) {
    for (size_t i = 0; i < r->nb; i++) {
        int64_t now_latest;
        int rc = latest_or_zero(r->bts[i], &now_latest, e);
        if (rc) return rc;
        if (now_latest != r->latest[i])
            return pm_fail(e, PAIMON_CONFLICT, "%s: branch %s changed while cleaning (latest snapshot %lld -> %lld); nothing deleted",
                           r->t->root, r->bts[i]->branch, (long long)r->latest[i], (long long)now_latest);
    }
    return PAIMON_OK;
}

/* 5. Delete the old unused candidates, in name order per directory. */
static int delete_orphans(orphan_run *r, pm_err *e) {
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < r->n_tasks; i++) {
        list_task *tk = &r->tasks[i];
        if (!tk->n_unused) continue;
        /* the names unpacked to their exact bytes, NUL-terminated, back to back */
        orphan_name *names = malloc(tk->n_unused * sizeof *names);
        size_t *at = malloc(tk->n_unused * sizeof *at);
        int64_t *size = malloc(tk->n_unused * sizeof *size);
        pm_buf text = {0};
        size_t nr = 0;
        if (!names || !at || !size) { free(names); free(at); free(size); return pm_nomem(e); }
        for (size_t k = 0; k < tk->n && !rc; k++) {
            if (tk->c[k].used) continue;
            if (!tk->c[k].remove) { r->res->recent++; continue; }
            size_t kl;
            const uint8_t *key = cand_key(tk, &tk->c[k], &kl);
            size[nr] = tk->listed ? tk->listed[k].size : -1;
            at[nr++] = text.len;
            if (pm_name_unkey(key, kl, &text) || pm_buf_putc(&text, 0)) rc = pm_nomem(e);
        }
        if (rc) nr = 0;   /* out of memory: a name may be cut short; none is used */
        for (size_t k = 0; k < nr; k++) names[k] = (orphan_name){(const char *)text.data + at[k], size[k]};
        free(at);
        free(size);
        if (nr > 1) qsort(names, nr, sizeof *names, cmp_orphan_name);
        for (size_t k = 0; k < nr && !rc; k++) {
            char *path = pm_path_join(tk->dir, names[k].name);
            int kind = classify(&r->lx, tk->kind, names[k].name);
            /* listed: the store said it exists and how big it is */
            rc = !path ? pm_nomem(e) : names[k].size >= 0 ? pm_deleter_add_listed(r->del, path, kind, names[k].size, e)
                                                          : pm_deleter_add(r->del, path, kind, e);
            free(path);
        }
        free(names);
        pm_buf_free(&text);
    }
    if (rc) return rc;
    const pm_orphan_opts *o = r->o;
    pm_clean_opts co = {o->threads, o->dry_run, 0, o->progress, o->progress_ud, 1};
    /* interruptible: every orphan is deleted on its own, so stopping
     * between batches leaves nothing half done */
    if (!o->dry_run) pm_interrupt_enter();
    rc = pm_deleter_run(r->del, r->t->io, r->t->root, &co, "deleting", &r->res->clean, e);
    if (!o->dry_run) pm_interrupt_leave();
    if (!rc && r->res->clean.not_attempted) {
        int64_t done = 0;
        for (int k = 0; k < PM_K__N; k++) done += r->res->clean.count[k];
        rc = pm_fail(e, PAIMON_INTERRUPT, "%s: interrupted: %lld of %lld orphan file(s) deleted; run again to finish",
                     r->t->root, (long long)done, (long long)(done + r->res->clean.not_attempted));
    }
    return rc;
}

/* A directory of the table that is never removed, even empty: the table
 * directory, and each branch's root and its snapshot/, schema/, manifest/,
 * tag/, branch/, consumer/, changelog/, index/, statistics/ (rel: relative
 * to the table directory). */
static int never_removed(const char *rel) {
    static const char *const fixed[] = {"snapshot", "schema", "manifest", "tag", "branch", "consumer",
                                        "changelog", "index", "statistics"};
    const char *p = rel;
    if (starts(p, "branch/")) {
        const char *s = strchr(p + 7, '/');
        if (!s) return 1;
        p = s + 1;
    }
    if (!*p) return 1;
    if (strchr(p, '/')) return 0;
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (!strcmp(p, fixed[i])) return 1;
    return 0;
}

static size_t depth_of(const char *p) {
    size_t n = 0;
    for (; *p; p++) n += *p == '/';
    return n;
}

typedef struct sweep_order { size_t depth; size_t i; } sweep_order;

static int cmp_sweep_order(const void *a, const void *b) {
    const sweep_order *x = a, *y = b;
    if (x->depth != y->depth) return x->depth > y->depth ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* 6. Directories left empty, deepest first: a partition or bucket
 * directory, or a directory found among candidates, is removed if it is
 * empty now and either this run deleted something in it or it was last
 * modified before the cut-off (a directory a writer created just now, for
 * a file it is about to write, stays). Never one never_removed names,
 * never outside the table, never through a symlink (remove_within). Not in
 * a dry run; not on an object store (no directories). Best effort: a
 * directory that cannot be removed stays. */
static int sweep_dirs(orphan_run *r, pm_err *e) {
    sweep *sw = &r->sw;
    if (r->o->dry_run) return PAIMON_OK;
    for (size_t i = 0; i < r->n_tasks; i++) {
        list_task *tk = &r->tasks[i];
        for (size_t k = 0; k < tk->subdirs.n; k++) {
            char *p = pm_path_join(tk->dir, tk->subdirs.v[k]);
            int rc = p ? sweep_add(sw, p, e) : pm_nomem(e);
            free(p);
            if (rc) return rc;
        }
        int any = 0;
        for (size_t k = 0; k < tk->n && !any; k++) any = !tk->c[k].used && tk->c[k].remove;
        long at = any ? sweep_find(sw, tk->dir, strlen(tk->dir)) : -1;
        if (at >= 0) sw->v[at].touched = 1;
    }
    if (!sw->n) return PAIMON_OK;
    sweep_order *ord = malloc(sw->n * sizeof *ord);
    if (!ord) return pm_nomem(e);
    for (size_t i = 0; i < sw->n; i++) ord[i] = (sweep_order){depth_of(sw->v[i].path), i};
    qsort(ord, sw->n, sizeof *ord, cmp_sweep_order);
    const char *root = r->t->root;
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/') rl--;
    for (size_t k = 0; k < sw->n; k++) {
        sweep_dir *d = &sw->v[ord[k].i];
        if (strncmp(d->path, root, rl) || d->path[rl] != '/') continue;   /* not below the table */
        const char *rel = d->path + rl + 1;
        if (never_removed(rel)) continue;
        pm_err ie;
        pm_stat st;
        if (!d->touched) {
            int64_t mt = d->mtime_ms;
            if (mt < 0 && (pm_io_stat(r->t->io, d->path, &st, &ie) || !st.is_dir)) continue;
            if (mt < 0) mt = st.mtime_ms;
            if (mt >= r->res->older_than_ms) continue;
        }
        if (pm_io_remove_within(r->t->io, root, rel, PM_RM_EMPTY_DIR, &st, &ie) != PAIMON_OK) continue;
        r->res->clean.dirs_removed++;
        const char *slash = strrchr(d->path, '/');
        long up = slash ? sweep_find(sw, d->path, (size_t)(slash - d->path)) : -1;
        if (up >= 0) sw->v[up].touched = 1;
    }
    free(ord);
    return PAIMON_OK;
}

static void orphan_run_free(orphan_run *r) {
    for (size_t i = 0; i < r->n_tasks; i++) {
        free(r->tasks[i].c);
        free(r->tasks[i].listed);
        pm_buf_free(&r->tasks[i].names);
        pm_strv_clear(&r->tasks[i].subdirs);
        free(r->tasks[i].dir);
    }
    for (size_t i = 0; i < r->sw.n; i++) free(r->sw.v[i].path);
    free(r->sw.v);
    pm_set_free(r->sw.at);
    free(r->tasks);
    pm_refs_close_branches(r->bts, r->nb);
    free(r->latest);
    pm_set_free(r->m.names);
    free(r->m.flag);
    pm_set_free(r->u.lists);
    pm_set_free(r->u.first);
    pm_set_free(r->u.index);
    pm_strv_clear(&r->u.list_v);
    pm_strv_clear(&r->u.index_v);
    pm_deleter_free(r->del);
    pm_avro_schema_cache_free(r->sc);
}

/* As Java's LocalOrphanFilesClean.clean(): list the candidates, collect
 * the used names, keep the young, delete the rest. */
int pm_remove_orphan_files(paimon_table *t, const pm_orphan_opts *o, pm_orphan_result *res, pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(res, 0, sizeof *res);
    res->clean.dry_run = o->dry_run;
    int rc = check_cutoff(t, o, res, e);
    if (rc) return rc;
    orphan_run r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.o = o;
    r.res = res;
    r.m.names = pm_set_new();
    r.u = (used){&r.m, pm_set_new(), pm_set_new(), pm_set_new(), {0}, {0}};
    r.del = pm_deleter_new();
    r.sc = pm_avro_schema_cache_new();
    r.sw.at = pm_set_new();
    if (!r.m.names || !r.u.lists || !r.u.first || !r.u.index || !r.del || !r.sc || !r.sw.at) rc = pm_nomem(e);
    if (!rc) rc = open_branches(&r, e);
    if (!rc) rc = list_candidates(&r, e);
    if (!rc) rc = collect_used(&r, e);
    if (!rc) rc = age_filter(&r, e);
    if (!rc) rc = check_unchanged(&r, e);
    if (!rc) rc = delete_orphans(&r, e);
    if (!rc) rc = sweep_dirs(&r, e);
    orphan_run_free(&r);
    res->clean.duration_ms = pm_now_millis() - t0;
    if (rc) pm_clean_result_free(&res->clean);
    return rc;
}
