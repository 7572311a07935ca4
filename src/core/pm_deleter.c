/* The cleanup deleter: result lists, the path-safety check, and batches of
 * deletions run on the executor. */
#include "pm_deleter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "pm_names.h"
#include "pm_set.h"

const char *const pm_file_kind_names[PM_K__N] = {
    "data_files", "changelog_files", "manifests", "manifest_lists", "index_manifests",
    "index_files", "statistics", "snapshots", "temp_files", "other_files",
    "tags", "schemas", "hints", "changelogs", "consumers",
};

static int name_starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

int pm_meta_kind(const char *path) {
    const char *base = strrchr(path, '/');
    if (!base || base == path) return PM_K_OTHER;
    const char *dir = base - 1;
    while (dir > path && dir[-1] != '/') dir--;
    size_t dl = (size_t)(base - dir);
    base++;
#define IN(d) (dl == strlen(d) && strncmp(dir, d, dl) == 0)
    if ((IN("snapshot") || IN("changelog")) && (!strcmp(base, "EARLIEST") || !strcmp(base, "LATEST"))) return PM_K_HINT;
    if (IN("snapshot") && name_starts(base, "snapshot-")) return PM_K_SNAPSHOT;
    if (IN("schema") && name_starts(base, "schema-")) return PM_K_SCHEMA;
    if (IN("tag") && name_starts(base, "tag-")) return PM_K_TAG;
    if (IN("changelog") && name_starts(base, "changelog-")) return PM_K_CHANGELOG_META;
    if (IN("consumer") && name_starts(base, "consumer-")) return PM_K_CONSUMER;
#undef IN
    return PM_K_OTHER;
}

int pm_clean_remove_one(pm_fileio *io, const char *path, int kind, pm_clean_result *r, pm_err *e) {
    pm_stat st;
    int rc = pm_io_stat(io, path, &st, e);
    if (rc == PAIMON_OK) rc = pm_io_remove(io, path, e);
    if (rc == PAIMON_NOTFOUND) {
        pm_err_clear(e);
        r->missing++;
        return PAIMON_OK;
    }
    if (rc) return rc;
    r->count[kind]++;
    r->bytes[kind] += st.size;
    return PAIMON_OK;
}

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
    pm_plan_free(r->plan);
    r->plan = NULL;
    items_free(r->failures, r->n_failures);
    items_free(r->skipped, r->n_skipped);
    r->failures = r->skipped = NULL;
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

/* ---- the deleter's paths ------------------------------------------------- */

/* Each path is stored once and compactly: a catch-up expiration plans
 * about 9 files per snapshot, millions in all, and a strdup'd path plus
 * its copy in a set of seen paths cost ~300 bytes each (issue 16). An
 * entry in `keys`: the kind, the status, flags (E_LISTED), then the path's key --
 * varint(directory ordinal), varint(name key length), the name's key
 * (pm_name_key: 19-28 bytes for Paimon's names). A key is self-delimiting,
 * so two keys are equal exactly when their bytes are. */
enum { E_KIND, E_STATUS, E_FLAGS, E_KEY };
#define E_LISTED 1   /* a listing of the store gave it (pm_deleter_add_listed) */

typedef struct del_item {
    uint8_t *entry;
    int64_t size;   /* from the metadata (-1 unknown); after a run, the size counted */
} del_item;

/* Paths in the order added: a deleter's, or one run's part of a plan. */
typedef struct path_store {
    pm_arena *keys;
    del_item *v;
    size_t n, cap;
    pm_set *dir_set;     /* directory part -> ordinal */
    pm_strv dirs;        /* by ordinal; NULL: the path had no '/' */
    size_t entry_bytes;  /* taken from keys */
} path_store;

static void store_clear(path_store *s) {
    pm_arena_free(s->keys);
    free(s->v);
    pm_set_free(s->dir_set);
    pm_strv_clear(&s->dirs);
    memset(s, 0, sizeof *s);
}

/* The directory part of a path (before the last '/') and where its name
 * starts; a path without '/' has the directory "\0" (no directory part
 * holds a NUL), as in pm_pathset. */
static const char *dir_part(const char *path, size_t len, size_t *dl, size_t *name_off) {
    for (size_t i = len; i > 0; i--)
        if (path[i - 1] == '/') { *name_off = i; *dl = i - 1; return path; }
    *name_off = 0;
    *dl = 1;
    return "";
}

/* Room path_key needs for a path of len bytes. */
#define KEY_ROOM(len) (20 + ((len) > PM_NAME_KEY_MAX ? (len) : PM_NAME_KEY_MAX))

/* The key of path[0, len) with directory ordinal ord into out
 * (KEY_ROOM(len) bytes); its length. */
static size_t path_key(const char *path, size_t len, size_t name_off, uint64_t ord, uint8_t *out) {
    uint8_t nbuf[PM_NAME_KEY_MAX];
    size_t nk;
    const void *k = pm_name_key(path + name_off, len - name_off, nbuf, &nk);
    size_t o = pm_varint_put(out, ord);
    o += pm_varint_put(out + o, nk);
    memcpy(out + o, k, nk);
    return o + nk;
}

static size_t key_len(const uint8_t *key) {
    uint64_t ord, nk;
    size_t o = pm_varint_read(key, &ord);
    o += pm_varint_read(key + o, &nk);
    return o + (size_t)nk;
}

/* Append the path of an entry to out (no NUL). */
static int entry_path(const path_store *s, const uint8_t *entry, pm_buf *out) {
    uint64_t ord, nk;
    const uint8_t *k = entry + E_KEY;
    k += pm_varint_read(k, &ord);
    k += pm_varint_read(k, &nk);
    if (ord >= s->dirs.n) return PAIMON_CORRUPT;
    const char *dir = s->dirs.v[ord];
    if (dir && (pm_buf_append(out, dir, strlen(dir)) || pm_buf_putc(out, '/'))) return PAIMON_NOMEM;
    return pm_name_unkey(k, (size_t)nk, out);
}

/* The path of item i as a C string in out (overwritten). */
static const char *item_path(const path_store *s, size_t i, pm_buf *out) {
    out->len = 0;
    if (entry_path(s, s->v[i].entry, out) || pm_buf_cstr(out)) return NULL;
    return (const char *)out->data;
}

/* ---- plans --------------------------------------------------------------- */

struct pm_plan {
    path_store *seg;     /* one per dry run that added to it, each its planned items only */
    size_t n_seg;
    size_t n;
};

void pm_plan_free(pm_plan *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n_seg; i++) store_clear(&p->seg[i]);
    free(p->seg);
    free(p);
}

size_t pm_plan_count(const pm_plan *p) { return p ? p->n : 0; }

const char *pm_plan_path(const pm_plan *p, size_t i, pm_buf *out, int *kind, int64_t *size) {
    if (!p || i >= p->n) return NULL;
    const path_store *s = p->seg;
    while (i >= s->n) i -= s++->n;
    if (kind) *kind = s->v[i].entry[E_KIND];
    if (size) *size = s->v[i].size;
    return item_path(s, i, out);
}

/* Move a dry run's planned items (status 0) from s to the end of r's plan;
 * s is empty afterwards. */
static int plan_take(pm_clean_result *r, path_store *s) {
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].entry[E_STATUS] == 0) s->v[k++] = s->v[i];
    s->n = k;
    if (!k) { store_clear(s); return PAIMON_OK; }
    if (!r->plan && !(r->plan = calloc(1, sizeof *r->plan))) return PAIMON_NOMEM;
    path_store *nv = realloc(r->plan->seg, (r->plan->n_seg + 1) * sizeof *nv);
    if (!nv) return PAIMON_NOMEM;
    r->plan->seg = nv;
    nv[r->plan->n_seg++] = *s;
    r->plan->n += k;
    r->n_paths = r->plan->n;
    memset(s, 0, sizeof *s);
    return PAIMON_OK;
}

/* ---- deleter ------------------------------------------------------------- */

/* A failure or skip reason of item i (rare: kept aside, not per item). */
typedef struct del_msg { size_t i; char *msg; } del_msg;

struct pm_deleter {
    path_store st;
    /* the items by key: item + 1 in the low 32 bits (0: empty), the key's
     * hash in the high ones; open addressing, under 3/4 full */
    uint64_t *index;
    size_t index_cap;
    pthread_mutex_t msg_lock;   /* workers add failures */
    del_msg *msgs;
    size_t n_msgs, cap_msgs;
    pm_fileio *io;       /* during run */
    const char *root;
    int dry_run;
    int stop_on_failure;
    int interruptible;   /* stop starting batches after paimon_interrupt() */
    int failed;          /* __atomic */
};

pm_deleter *pm_deleter_new(void) {
    pm_deleter *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    if (pthread_mutex_init(&d->msg_lock, NULL)) { free(d); return NULL; }
    return d;
}

static void msgs_clear(pm_deleter *d) {
    for (size_t i = 0; i < d->n_msgs; i++) free(d->msgs[i].msg);
    free(d->msgs);
    d->msgs = NULL;
    d->n_msgs = d->cap_msgs = 0;
}

void pm_deleter_free(pm_deleter *d) {
    if (!d) return;
    store_clear(&d->st);
    free(d->index);
    msgs_clear(d);
    pthread_mutex_destroy(&d->msg_lock);
    free(d);
}

size_t pm_deleter_count(const pm_deleter *d) { return d->st.n; }

size_t pm_deleter_bytes(const pm_deleter *d) {
    size_t b = d->st.entry_bytes + d->st.cap * sizeof(del_item) + d->index_cap * sizeof *d->index;
    for (size_t i = 0; i < d->st.dirs.n; i++) b += d->st.dirs.v[i] ? strlen(d->st.dirs.v[i]) + 1 : 0;
    return b;
}

static uint64_t key_hash(const uint8_t *key, size_t kl) { return pm_hash_bytes(key, kl) & ~(uint64_t)UINT32_MAX; }

/* The index slot holding key (*found 1), or the empty slot where it goes. */
static size_t index_find(const pm_deleter *d, const uint8_t *key, size_t kl, uint64_t h, int *found) {
    size_t mask = d->index_cap - 1, i = (size_t)(h >> 32) & mask;
    for (;; i = (i + 1) & mask) {
        uint64_t sl = d->index[i];
        if (!sl) { *found = 0; return i; }
        if ((sl & ~(uint64_t)UINT32_MAX) != h) continue;
        const uint8_t *ek = d->st.v[(uint32_t)sl - 1].entry + E_KEY;
        if (key_len(ek) == kl && !memcmp(ek, key, kl)) { *found = 1; return i; }
    }
}

static int index_grow(pm_deleter *d) {
    size_t cap = d->index_cap ? d->index_cap * 2 : 256;
    uint64_t *nv = calloc(cap, sizeof *nv);
    if (!nv) return -1;
    for (size_t k = 0; k < d->index_cap; k++) {
        uint64_t sl = d->index[k];
        if (!sl) continue;
        size_t i = (size_t)(sl >> 32) & (cap - 1);
        while (nv[i]) i = (i + 1) & (cap - 1);
        nv[i] = sl;
    }
    free(d->index);
    d->index = nv;
    d->index_cap = cap;
    return 0;
}

int pm_deleter_contains(const pm_deleter *d, const char *path) {
    size_t len = strlen(path), dl, off;
    const char *dir = dir_part(path, len, &dl, &off);
    long ord = d->st.dir_set ? pm_set_ordinal(d->st.dir_set, dir, dl) : -1;
    if (ord < 0 || !d->index_cap) return 0;
    uint8_t small[256], *key = KEY_ROOM(len) <= sizeof small ? small : malloc(KEY_ROOM(len));
    if (!key) return -1;
    size_t kl = path_key(path, len, off, (uint64_t)ord, key);
    int found;
    index_find(d, key, kl, key_hash(key, kl), &found);
    if (key != small) free(key);
    return found;
}

int pm_deleter_add(pm_deleter *d, const char *path, int kind, pm_err *e) {
    return pm_deleter_add_sized(d, path, kind, -1, e);
}

int pm_deleter_add_listed(pm_deleter *d, const char *path, int kind, int64_t size, pm_err *e) {
    size_t n = d->st.n;
    int rc = pm_deleter_add_sized(d, path, kind, size, e);
    if (!rc && d->st.n > n) d->st.v[n].entry[E_FLAGS] |= E_LISTED;
    return rc;
}

int pm_deleter_add_sized(pm_deleter *d, const char *path, int kind, int64_t size, pm_err *e) {
    path_store *s = &d->st;
    if (!s->keys && !(s->keys = pm_arena_new(64 * 1024))) return pm_nomem(e);
    if (!s->dir_set && !(s->dir_set = pm_set_new())) return pm_nomem(e);
    size_t len = strlen(path), dl, off;
    const char *dir = dir_part(path, len, &dl, &off);
    long ord = pm_set_ordinal(s->dir_set, dir, dl);
    if (ord < 0) {
        /* the slot in dirs first, then the ordinal: ordinal k is always
         * dirs.v[k] (a failed step leaves neither, never a shifted pair) */
        char *copy = off ? pm_strndup(dir, dl) : NULL;   /* NULL: no directory part */
        if ((off && !copy) || pm_strv_push(&s->dirs, NULL)) { free(copy); return pm_nomem(e); }
        ord = pm_set_add_ordinal(s->dir_set, dir, dl, NULL);
        if (ord < 0 || (size_t)ord != s->dirs.n - 1) {
            s->dirs.n--;   /* the NULL pushed */
            free(copy);
            return ord < 0 ? pm_nomem(e) : pm_fail(e, PAIMON_ERROR, "directory ordinals out of step");
        }
        s->dirs.v[s->dirs.n - 1] = copy;
    }
    uint8_t small[256], *key = KEY_ROOM(len) <= sizeof small ? small : malloc(KEY_ROOM(len));
    if (!key) return pm_nomem(e);
    size_t kl = path_key(path, len, off, (uint64_t)ord, key);
    uint64_t h = key_hash(key, kl);
    int found = 0, rc = PAIMON_OK;
    if ((s->n + 1) * 4 >= d->index_cap * 3 && index_grow(d)) rc = pm_nomem(e);
    size_t slot = rc ? 0 : index_find(d, key, kl, h, &found);
    if (!rc && !found) {
        if (s->n >= UINT32_MAX - 1) rc = pm_fail(e, PAIMON_NOMEM, "out of memory: more than 4 billion paths");
        else if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 64;
            del_item *nv = realloc(s->v, cap * sizeof *nv);
            if (!nv) rc = pm_nomem(e);
            else { s->v = nv; s->cap = cap; }
        }
        uint8_t *entry = rc ? NULL : pm_arena_alloc(s->keys, E_KEY + kl);
        if (!rc && !entry) rc = pm_nomem(e);
        if (!rc) {
            s->entry_bytes += (E_KEY + kl + 7) & ~(size_t)7;   /* the arena's alignment */
            entry[E_KIND] = (uint8_t)kind;
            entry[E_STATUS] = 0;
            entry[E_FLAGS] = 0;
            memcpy(entry + E_KEY, key, kl);
            s->v[s->n] = (del_item){entry, size};
            d->index[slot] = h | (uint64_t)(s->n + 1);
            s->n++;
        }
    }
    if (key != small) free(key);
    return rc;
}

/* Most paths one remove_batch call gets: DeleteObjects' limit on a store;
 * locally batches small enough that the thread pool still runs many in
 * parallel, large enough that opening the table and the directory (4 system
 * calls a batch) stays far below the 2 per file (fstatat, unlinkat). */
#define DELETE_BATCH_MAX 1000
#define LOCAL_BATCH_MAX 256
#define LOCAL_BATCH_INTERRUPTIBLE 64

/* Keep msg as item i's reason (workers too: under the lock). */
static void keep_msg(pm_deleter *d, size_t i, char *msg) {
    if (!msg) return;
    pthread_mutex_lock(&d->msg_lock);
    if (d->n_msgs == d->cap_msgs) {
        size_t cap = d->cap_msgs ? d->cap_msgs * 2 : 16;
        del_msg *nv = realloc(d->msgs, cap * sizeof *nv);
        if (nv) { d->msgs = nv; d->cap_msgs = cap; }
    }
    /* out of memory: the item keeps its status, with a generic reason */
    if (d->n_msgs < d->cap_msgs) d->msgs[d->n_msgs++] = (del_msg){i, msg};
    else free(msg);
    pthread_mutex_unlock(&d->msg_lock);
}

/* The outcome remove_within (or its batch) gave item i. */
static void item_outcome(pm_deleter *d, size_t i, int rc, const pm_stat *st, char *msg) {
    del_item *it = &d->st.v[i];
    /* a store that does not say (size -1) counts the size the metadata recorded */
    if (rc == PAIMON_OK) { if (st->size >= 0) it->size = st->size; free(msg); return; }
    if (rc == PAIMON_NOTFOUND) { it->entry[E_STATUS] = 1; free(msg); return; }
    if (rc == PM_IO_NOT_TRIED) { it->entry[E_STATUS] = 4; free(msg); return; }
    it->entry[E_STATUS] = rc == PM_IO_OUTSIDE ? 3 : 2;
    keep_msg(d, i, msg);
    if (rc != PM_IO_OUTSIDE) __atomic_store_n(&d->failed, 1, __ATOMIC_RELEASE);
}

/* Batches of the items that passed the lexical check. */
typedef struct batch_plan {
    pm_deleter *d;
    size_t *idx;         /* indexes of those items; NULL: all items passed */
    size_t n, per_batch;
    size_t rl;           /* length of the root's local path, without trailing '/' */
} batch_plan;

static size_t batch_item(const batch_plan *bp, size_t k) { return bp->idx ? bp->idx[k] : k; }

/* One batch: items [from, from + n) of the plan. Each is checked and
 * removed in one step from the table directory down (a directory swapped
 * for a symlink after a check would otherwise redirect the deletion);
 * object stores take the whole batch in one request. */
static void delete_batch(const batch_plan *bp, size_t from, size_t n) {
    pm_deleter *d = bp->d;
    size_t *items = malloc((n ? n : 1) * sizeof *items);
    const char **rels = malloc((n ? n : 1) * sizeof *rels);
    size_t *offs = malloc((n ? n : 1) * sizeof *offs);
    pm_stat *sts = calloc(n ? n : 1, sizeof *sts);
    int *rcs = malloc((n ? n : 1) * sizeof *rcs);
    char **msgs = calloc(n ? n : 1, sizeof *msgs);
    pm_buf paths = {0}, one = {0};
    pm_err e;
    pm_err_clear(&e);
    int rc = items && rels && offs && sts && rcs && msgs ? PAIMON_OK : pm_nomem(&e);
    size_t m = 0;
    /* A dry run on a store: a key its listing just gave exists with the
     * listed size; a HEAD each would say no more (no symlinks, no
     * directories on the way). Local dry runs keep their look. */
    const int trust_listing = d->dry_run && pm_io_has(d->io, PM_IO_VIRTUAL_DIRS);
    for (size_t k = 0; k < n; k++) {
        size_t i = batch_item(bp, from + k);
        if (!rc && trust_listing && (d->st.v[i].entry[E_FLAGS] & E_LISTED))
            item_outcome(d, i, PAIMON_OK, &(pm_stat){d->st.v[i].size, 0, 0}, NULL);
        else if (items)
            items[m++] = i;
    }
    /* the batch's relative paths, one after the other in `paths` */
    for (size_t k = 0; k < m && !rc; k++) {
        const char *p = item_path(&d->st, items[k], &one);
        const char *rel = p ? pm_local_path(p) + bp->rl + 1 : NULL;
        offs[k] = paths.len;
        if (!rel || pm_buf_append(&paths, rel, strlen(rel) + 1)) rc = pm_nomem(&e);
    }
    if (!rc && m) {
        for (size_t k = 0; k < m; k++) rels[k] = (const char *)paths.data + offs[k];
        rc = pm_io_remove_batch(d->io, d->root, rels, m,
                                (d->dry_run ? PM_RM_DRY_RUN : 0) | (d->stop_on_failure ? PM_RM_STOP_ON_FAILURE : 0),
                                sts, rcs, msgs, &e);
    }
    if (!items) {   /* out of memory before any item was sorted out: all failed */
        for (size_t k = 0; k < n; k++) item_outcome(d, batch_item(bp, from + k), PAIMON_NOMEM, NULL, pm_strdup(e.msg));
    }
    for (size_t k = 0; k < m; k++) {
        if (rc)   /* the batch as a whole failed: every item in it did */
            item_outcome(d, items[k], rc == PAIMON_NOTFOUND || rc == PM_IO_OUTSIDE ? PAIMON_IO : rc, NULL, pm_strdup(e.msg));
        else
            item_outcome(d, items[k], rcs[k], &sts[k], msgs[k]);
    }
    pm_buf_free(&paths);
    pm_buf_free(&one);
    free(items);
    free(rels);
    free(offs);
    free(sts);
    free(rcs);
    free(msgs);
}

static void delete_batch_task(void *ctx, size_t b) {
    batch_plan *bp = ctx;
    pm_deleter *d = bp->d;
    size_t from = b * bp->per_batch, n = bp->n - from < bp->per_batch ? bp->n - from : bp->per_batch;
    if ((d->stop_on_failure && __atomic_load_n(&d->failed, __ATOMIC_ACQUIRE)) || (d->interruptible && pm_interrupted())) {
        for (size_t k = 0; k < n; k++) d->st.v[batch_item(bp, from + k)].entry[E_STATUS] = 4;
        return;
    }
    delete_batch(bp, from, n);
}

/* Item indexes sorted by their directory (stable): a local batch keeps
 * its directories open, so one directory's files together cost one
 * descent per batch instead of one per change of directory. The
 * directory's ordinal is the first thing in an item's key. */
typedef struct dir_key { uint64_t dir; size_t i; } dir_key;

static int dir_key_cmp(const void *pa, const void *pb) {
    const dir_key *a = pa, *b = pb;
    if (a->dir != b->dir) return a->dir < b->dir ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static void group_by_dir(const pm_deleter *d, size_t *idx, size_t n) {
    dir_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!k) return;   /* only slower unsorted */
    for (size_t j = 0; j < n; j++) {
        k[j].i = idx[j];
        pm_varint_read(d->st.v[idx[j]].entry + E_KEY, &k[j].dir);
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
    char **cur = calloc(d->st.n ? d->st.n : 1, sizeof *cur);
    size_t n = 0;
    pm_buf pb = {0};
    if (!seen || !cur) { pm_set_free(seen); free(cur); return; }   /* cosmetic: nothing lost by skipping it */
    for (size_t i = 0; i < d->st.n; i++) {
        int status = d->st.v[i].entry[E_STATUS];
        if (status != 0 && status != 1) continue;   /* deleted now, or by a run that crashed */
        const char *p = item_path(&d->st, i, &pb);
        char *dir = p ? parent_dir(pm_local_path(p)) : NULL;
        const char *base = dir ? strrchr(dir, '/') : NULL;
        if (base && strncmp(base + 1, "bucket-", 7) == 0 && pm_set_add(seen, dir, strlen(dir)) == 1) cur[n++] = dir;
        else free(dir);
    }
    pm_buf_free(&pb);
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

static int msg_cmp(const void *a, const void *b) {
    const del_msg *x = a, *y = b;
    return x->i < y->i ? -1 : x->i > y->i;
}

int pm_deleter_run(pm_deleter *d, pm_fileio *io, const char *root, const pm_clean_opts *o,
                   const char *phase, pm_clean_result *r, pm_err *e) {
    path_store *s = &d->st;
    d->io = io;
    d->root = root;
    d->dry_run = o->dry_run;
    d->stop_on_failure = o->stop_on_failure;
    d->interruptible = o->interruptible && !o->dry_run;
    d->failed = 0;
    const char *lroot = pm_local_path(root);
    size_t rl = strlen(lroot);
    while (rl > 1 && lroot[rl - 1] == '/') rl--;
    batch_plan bp = {d, NULL, 0, 1, rl};
    pm_buf pb = {0};
    int rc = PAIMON_OK;
    /* the lexical check first: nothing outside the table reaches the FileIO */
    for (size_t i = 0; i < s->n && !rc; i++) {
        char why[700];
        const char *p = item_path(s, i, &pb);
        if (!p) { rc = pm_nomem(e); break; }
        if (lexically_inside(lroot, pm_local_path(p), why, sizeof why)) {
            if (bp.idx) bp.idx[bp.n] = i;
            bp.n++;
            continue;
        }
        /* the first refused one: from here on, the items that passed by index */
        if (!bp.idx) {   /* so far every item passed: bp.n == i */
            if (!(bp.idx = malloc(s->n * sizeof *bp.idx))) { rc = pm_nomem(e); break; }
            for (size_t k = 0; k < i; k++) bp.idx[k] = k;
        }
        s->v[i].entry[E_STATUS] = 3;
        keep_msg(d, i, pm_strdup(why));
    }
    pm_buf_free(&pb);
    if (rc) { free(bp.idx); return rc; }
    /* Without a batch operation one item per task; with one, as few
     * batches as its limit allows, of even size, run in parallel. */
    size_t n_batches = bp.n;
    if (io->ops->remove_batch && bp.n) {
        /* stop on failure (snapshot files, in order: no gap): the batch
         * stops after the very item that failed (PM_RM_STOP_ON_FAILURE),
         * so the order is kept */
        int local = pm_io_has(io, PM_IO_LOCAL);
        /* by directory: a local batch descends once per directory, a store's
         * dry run lists a directory for its keys instead of a HEAD each */
        if ((local && !o->stop_on_failure) || (o->dry_run && pm_io_has(io, PM_IO_VIRTUAL_DIRS))) {
            if (!bp.idx && (bp.idx = malloc(bp.n * sizeof *bp.idx)))
                for (size_t k = 0; k < bp.n; k++) bp.idx[k] = k;
            if (bp.idx) group_by_dir(d, bp.idx, bp.n);   /* out of memory: only slower unsorted */
        }
        size_t max = local ? LOCAL_BATCH_MAX : DELETE_BATCH_MAX;
        /* an interruption stops between batches: locally keep them short
         * (a store's batch is one request either way) */
        if (local && d->interruptible && max > LOCAL_BATCH_INTERRUPTIBLE) max = LOCAL_BATCH_INTERRUPTIBLE;
        n_batches = (bp.n + max - 1) / max;
        bp.per_batch = (bp.n + n_batches - 1) / n_batches;
    }
    file_progress fp = {o->progress, o->progress_ud, bp.per_batch, bp.n};
    rc = pm_exec_run(o->threads, n_batches, delete_batch_task, &bp, phase, o->progress ? progress_in_files : NULL,
                     &fp, e);
    free(bp.idx);
    if (rc) { msgs_clear(d); return rc; }
    if (d->n_msgs) qsort(d->msgs, d->n_msgs, sizeof *d->msgs, msg_cmp);
    size_t m = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        del_item *it = &s->v[i];
        int kind = it->entry[E_KIND];
        const char *msg = NULL;
        while (m < d->n_msgs && d->msgs[m].i < i) m++;
        if (m < d->n_msgs && d->msgs[m].i == i) msg = d->msgs[m].msg;
        switch (it->entry[E_STATUS]) {
        case 0:
            r->count[kind]++;
            if (it->size > 0) r->bytes[kind] += it->size;   /* -1: the store did not say */
            break;
        case 1:
            r->missing++;
            break;
        case 4:              /* not attempted after an earlier failure or an interruption */
            if (d->interruptible && pm_interrupted()) r->not_attempted++;
            break;
        case 2: {
            const char *p = item_path(s, i, &pb);
            if (!p || pm_clean_result_add(&r->failures, &r->n_failures, p, kind, 0, msg ? msg : "cannot delete"))
                rc = pm_nomem(e);
            break;
        }
        default: {
            const char *p = item_path(s, i, &pb);
            if (!p || pm_clean_result_add(&r->skipped, &r->n_skipped, p, kind, 0, msg)) rc = pm_nomem(e);
            break;
        }
        }
    }
    pm_buf_free(&pb);
    msgs_clear(d);
    /* a dry run's plan is what the deleter holds: the result takes it over
     * (no copy), the deleter is empty afterwards */
    if (!rc && o->dry_run) {
        free(d->index);
        d->index = NULL;
        d->index_cap = 0;
        if (plan_take(r, s)) rc = pm_nomem(e);
    }
    return rc;
}
