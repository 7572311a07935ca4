/* Snapshot manager: hint files and listing (Java's HintFileUtils and
 * FileUtils.listVersionedFiles), plus reading snapshots, schemas, tags,
 * consumers and branch names of a branch root. */
#include "pm_meta.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Java's Long.parseLong on the whole text: optional '+' or '-', then one or
 * more ASCII digits, value within int64; nothing else (no whitespace). */
static int parse_long_exact(const char *s, size_t n, int64_t *out) {
    size_t i = 0;
    int neg = 0;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n) return 0;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (neg) *out = v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v;
    else *out = (int64_t)v;
    return 1;
}

/* <root>/<sub>/<name> (name may be NULL), malloc'd. */
static char *path3(const char *root, const char *sub, const char *name) {
    char *a = pm_path_join(root, sub);
    if (!a || !name) return a;
    char *b = pm_path_join(a, name);
    free(a);
    return b;
}

static char *versioned_path(const char *root, const char *sub, const char *prefix, int64_t id) {
    char name[64];
    snprintf(name, sizeof name, "%s%lld", prefix, (long long)id);
    return path3(root, sub, name);
}


static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Ids of `<root>/<sub>/<prefix><long>` entries, ascending. A missing
 * directory is an empty list. */
static int list_versioned(pm_fileio *io, const char *root, const char *sub, const char *prefix,
                          int64_t **ids, size_t *n, pm_err *e) {
    *ids = NULL;
    *n = 0;
    char *dir = path3(root, sub, NULL);
    if (!dir) return pm_nomem(e);
    pm_dirent *ents = NULL;
    size_t ne = 0;
    pm_err le;
    pm_err_clear(&le);
    int rc = pm_io_list(io, dir, &ents, &ne, &le);
    free(dir);
    if (rc == PAIMON_NOTFOUND) return PAIMON_OK;
    if (rc) {
        if (e) *e = le;
        return rc;
    }
    size_t pl = strlen(prefix), cnt = 0;
    int64_t *v = ne ? malloc(ne * sizeof *v) : NULL;
    if (ne && !v) {
        pm_dirents_free(ents, ne);
        return pm_nomem(e);
    }
    for (size_t i = 0; i < ne; i++) {
        const char *nm = ents[i].name;
        int64_t id;
        if (strncmp(nm, prefix, pl) == 0 && parse_long_exact(nm + pl, strlen(nm + pl), &id))
            v[cnt++] = id;
    }
    pm_dirents_free(ents, ne);
    if (cnt == 0) {
        free(v);
        return PAIMON_OK;
    }
    qsort(v, cnt, sizeof *v, cmp_i64);
    *ids = v;
    *n = cnt;
    return PAIMON_OK;
}

/* Names (prefix stripped, non-empty) of entries in <root>/<sub> starting
 * with prefix, sorted; dirs_only selects directories. */
static int list_names(pm_fileio *io, const char *root, const char *sub, const char *prefix,
                      int dirs_only, char ***names, size_t *n, pm_err *e) {
    *names = NULL;
    *n = 0;
    char *dir = path3(root, sub, NULL);
    if (!dir) return pm_nomem(e);
    pm_dirent *ents = NULL;
    size_t ne = 0;
    pm_err le;
    pm_err_clear(&le);
    int rc = pm_io_list(io, dir, &ents, &ne, &le);
    free(dir);
    if (rc == PAIMON_NOTFOUND) return PAIMON_OK;
    if (rc) {
        if (e) *e = le;
        return rc;
    }
    size_t pl = strlen(prefix), cnt = 0;
    char **v = ne ? calloc(ne, sizeof *v) : NULL;
    if (ne && !v) {
        pm_dirents_free(ents, ne);
        return pm_nomem(e);
    }
    for (size_t i = 0; i < ne; i++) {
        const char *nm = ents[i].name;
        if (strncmp(nm, prefix, pl) != 0 || nm[pl] == '\0') continue;
        if (dirs_only && !ents[i].is_dir) continue;
        v[cnt] = pm_strdup(nm + pl);
        if (!v[cnt]) {
            pm_strv_free(v, cnt);
            pm_dirents_free(ents, ne);
            return pm_nomem(e);
        }
        cnt++;
    }
    pm_dirents_free(ents, ne);
    if (cnt == 0) {
        free(v);
        return PAIMON_OK;
    }
    qsort(v, cnt, sizeof *v, cmp_str);
    *names = v;
    *n = cnt;
    return PAIMON_OK;
}

/* At most cap - 1 bytes of s[0, n) into out, printable ASCII as is, other
 * bytes (and '\\') as \\xNN; returns 1 when s was cut short. */
static int shown_bytes(const char *s, size_t n, char *out, size_t cap) {
    size_t k = 0, i = 0;
    for (; i < n && k + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\') out[k++] = (char)c;
        else k += (size_t)snprintf(out + k, cap - k, "\\x%02x", c);
    }
    out[k] = '\0';
    return i < n;
}

static int has_control(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return 1;
    return 0;
}

/* ---- hints ------------------------------------------------------------ */

/* pm_hint_read; *junk: 1 when the file was read but holds no decimal id
 * (what Java's readHint ignores), 0 when reading it failed, refusals of a
 * file that is no hint at all (pm_io_read_meta) included. */
static int hint_read(pm_fileio *io, const char *branch_root, const char *which, int64_t *id, int *junk,
                     pm_err *e) {
    *junk = 0;
    char *path = path3(branch_root, "snapshot", which);
    if (!path) return pm_nomem(e);
    pm_buf b = {0};
    int rc = pm_io_read_meta(io, path, PM_HINT_MAX, &b, e);
    if (rc == PAIMON_OK && !parse_long_exact((const char *)b.data, b.len, id)) {
        *junk = 1;
        char shown[48];
        int cut = shown_bytes((const char *)b.data, b.len, shown, sizeof shown);
        rc = pm_fail(e, PAIMON_CORRUPT, "%s: hint is not a decimal id: \"%s\"%s", path, shown, cut ? "..." : "");
    }
    pm_buf_free(&b);
    free(path);
    return rc;
}

int pm_hint_read(pm_fileio *io, const char *branch_root, const char *which, int64_t *id, pm_err *e) {
    int junk;
    return hint_read(io, branch_root, which, id, &junk, e);
}

/* A hint to use: PAIMON_OK with *use set when it holds an id. A missing,
 * unreadable or junk hint is ignored (*use 0), as Java's readHint does; a
 * file that is no hint at all (a FIFO, a device, more bytes than any id:
 * planted, never written by Paimon) is refused (PAIMON_CORRUPT). */
static int hint_use(pm_fileio *io, const char *branch_root, const char *which, int64_t *id, int *use, pm_err *e) {
    pm_err he;
    int junk;
    int rc = hint_read(io, branch_root, which, id, &junk, &he);
    *use = rc == PAIMON_OK;
    if (rc == PAIMON_CORRUPT && !junk) {
        if (e) *e = he;
        return rc;
    }
    return PAIMON_OK;
}

int pm_hint_write(pm_fileio *io, const char *branch_root, const char *which, int64_t id, pm_err *e) {
    char *path = path3(branch_root, "snapshot", which);
    if (!path) return pm_nomem(e);
    char text[32];
    int n = snprintf(text, sizeof text, "%lld", (long long)id);
    int rc = pm_io_write_atomic(io, path, text, (size_t)n, e);
    free(path);
    return rc;
}

/* ---- snapshots -------------------------------------------------------- */

int pm_snapshot_list_ids(pm_fileio *io, const char *branch_root, int64_t **ids, size_t *n, pm_err *e) {
    return list_versioned(io, branch_root, "snapshot", "snapshot-", ids, n, e);
}

static int snapshot_exists(pm_fileio *io, const char *root, int64_t id, int *ex, pm_err *e) {
    char *p = versioned_path(root, "snapshot", "snapshot-", id);
    if (!p) return pm_nomem(e);
    int rc = pm_io_exists(io, p, ex, e);
    free(p);
    return rc;
}

/* max (want_max) or min of the listed ids; PAIMON_NOTFOUND if none. */
static int find_by_listing(pm_fileio *io, const char *root, int want_max, int64_t *id, pm_err *e) {
    int64_t *ids;
    size_t n;
    int rc = pm_snapshot_list_ids(io, root, &ids, &n, e);
    if (rc) return rc;
    if (n == 0) {
        char *dir = path3(root, "snapshot", NULL);
        rc = pm_fail(e, PAIMON_NOTFOUND, "no snapshot in %s", dir ? dir : root);
        free(dir);
        return rc;
    }
    *id = want_max ? ids[n - 1] : ids[0];
    free(ids);
    return PAIMON_OK;
}

int pm_snapshot_latest_id(pm_fileio *io, const char *branch_root, int64_t *id, pm_err *e) {
    int64_t h;
    int use, rc;
    if ((rc = hint_use(io, branch_root, "LATEST", &h, &use, e))) return rc;
    if (use && h > 0) {
        int ex = 0, next = 0;
        if ((rc = snapshot_exists(io, branch_root, h, &ex, e))) return rc;
        if (ex && h < INT64_MAX) {
            if ((rc = snapshot_exists(io, branch_root, h + 1, &next, e))) return rc;
        }
        if (ex && !next) {
            *id = h;
            return PAIMON_OK;
        }
    }
    return find_by_listing(io, branch_root, 1, id, e);
}

int pm_snapshot_earliest_id(pm_fileio *io, const char *branch_root, int64_t *id, pm_err *e) {
    int64_t h;
    int use, rc;
    if ((rc = hint_use(io, branch_root, "EARLIEST", &h, &use, e))) return rc;
    /* Trusted when its snapshot exists and the one below it does not (the
     * mirror of LATEST's rule): expiration deletes an ascending prefix with
     * no gap, so nothing lower is left. A hint above existing snapshots
     * (EARLIEST=3 with 1 and 2 there) would strand them for good: the
     * listing decides, and expiration takes them. Java trusts any hint
     * whose snapshot exists. Ids start at 1: below 1 is not asked. */
    if (use) {
        int ex = 0, below = 0;
        if ((rc = snapshot_exists(io, branch_root, h, &ex, e))) return rc;
        if (ex && h > 1 && (rc = snapshot_exists(io, branch_root, h - 1, &below, e))) return rc;
        if (ex && !below) {
            *id = h;
            return PAIMON_OK;
        }
    }
    return find_by_listing(io, branch_root, 0, id, e);
}

/* The bytes of <dir>/<dir>-<id> (snapshot, changelog, schema); a missing
 * file is PAIMON_NOTFOUND naming the kind, id and path. *path: the file's
 * path (the caller frees it), for messages. */
static int read_versioned(pm_fileio *io, const char *branch_root, const char *dir, int64_t id, pm_buf *b,
                          char **path, pm_err *e) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s-", dir);
    if (!(*path = versioned_path(branch_root, dir, prefix, id))) return pm_nomem(e);
    int rc = pm_io_read_meta(io, *path, PM_META_MAX, b, e);
    if (rc == PAIMON_NOTFOUND) rc = pm_fail(e, PAIMON_NOTFOUND, "%s %lld not found (%s)", dir, (long long)id, *path);
    return rc;
}

/* A table has a handful of schemas: a short list, searched under a lock
 * (reads run on the thread pool). */
struct pm_schema_known {
    pthread_mutex_t mu;
    int64_t *ids;
    size_t n, cap;
};

pm_schema_known *pm_schema_known_new(void) {
    pm_schema_known *k = calloc(1, sizeof *k);
    if (k && pthread_mutex_init(&k->mu, NULL) != 0) { free(k); return NULL; }
    return k;
}

void pm_schema_known_free(pm_schema_known *k) {
    if (!k) return;
    pthread_mutex_destroy(&k->mu);
    free(k->ids);
    free(k);
}

static int schema_known(pm_schema_known *k, int64_t id) {
    int found = 0;
    pthread_mutex_lock(&k->mu);
    for (size_t i = 0; i < k->n && !found; i++) found = k->ids[i] == id;
    pthread_mutex_unlock(&k->mu);
    return found;
}

/* Out of memory only forgets: the next read checks again. */
void pm_schema_known_note(pm_schema_known *k, int64_t id) {
    pthread_mutex_lock(&k->mu);
    int found = 0;
    for (size_t i = 0; i < k->n && !found; i++) found = k->ids[i] == id;
    if (!found && k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 8;
        int64_t *nv = realloc(k->ids, cap * sizeof *nv);
        if (nv) { k->ids = nv; k->cap = cap; }
    }
    if (!found && k->n < k->cap) k->ids[k->n++] = id;
    pthread_mutex_unlock(&k->mu);
}

/* The schema a snapshot, changelog or tag names must exist in the branch:
 * every reader and writer resolves its fields through it. */
static int check_schema_exists(pm_fileio *io, const char *branch_root, pm_schema_known *known, const pm_snapshot *s,
                               const char *path, pm_err *e) {
    if (known && schema_known(known, s->schema_id)) return PAIMON_OK;
    char *sp = versioned_path(branch_root, "schema", "schema-", s->schema_id);
    if (!sp) return pm_nomem(e);
    int ex = 0;
    int rc = pm_io_exists(io, sp, &ex, e);
    if (rc == PAIMON_OK && !ex)
        rc = pm_fail(e, PAIMON_CORRUPT, "%s: field 'schemaId' names schema %lld, which does not exist (%s)", path,
                     (long long)s->schema_id, sp);
    if (rc == PAIMON_OK && known) pm_schema_known_note(known, s->schema_id);
    free(sp);
    return rc;
}

/* A snapshot-shaped JSON file: snapshot/snapshot-<id> or changelog/changelog-<id>.
 * Its "id" must be the id of its name: expiration, EARLIEST and every
 * range computation trust the file name, readers trust the field. */
static int read_snapshot_json(pm_fileio *io, const char *branch_root, pm_schema_known *known, const char *dir,
                              int64_t id, pm_snapshot **out, pm_err *e) {
    *out = NULL;
    pm_buf b = {0};
    char *path = NULL;
    int rc = read_versioned(io, branch_root, dir, id, &b, &path, e);
    if (rc == PAIMON_OK) rc = pm_snapshot_parse((const char *)b.data, b.len, path, out, e);
    if (rc == PAIMON_OK && (*out)->id != id)
        rc = pm_fail(e, PAIMON_CORRUPT, "%s: field 'id' is %lld but the file name says %lld", path,
                     (long long)(*out)->id, (long long)id);
    if (rc == PAIMON_OK) rc = check_schema_exists(io, branch_root, known, *out, path, e);
    if (rc) {
        pm_snapshot_free(*out);
        *out = NULL;
    }
    pm_buf_free(&b);
    free(path);
    return rc;
}

int pm_snapshot_read(pm_fileio *io, const char *branch_root, int64_t id, pm_snapshot **out, pm_err *e) {
    return read_snapshot_json(io, branch_root, NULL, "snapshot", id, out, e);
}

int pm_snapshot_read_known(pm_fileio *io, const char *branch_root, pm_schema_known *known, int64_t id,
                           pm_snapshot **out, pm_err *e) {
    return read_snapshot_json(io, branch_root, known, "snapshot", id, out, e);
}

/* Long-lived changelogs: changelog/changelog-<id>, the snapshot JSON shape. */
int pm_changelog_list_ids(pm_fileio *io, const char *branch_root, int64_t **ids, size_t *n, pm_err *e) {
    return list_versioned(io, branch_root, "changelog", "changelog-", ids, n, e);
}

int pm_changelog_read(pm_fileio *io, const char *branch_root, int64_t id, pm_snapshot **out, pm_err *e) {
    return read_snapshot_json(io, branch_root, NULL, "changelog", id, out, e);
}

int pm_changelog_read_known(pm_fileio *io, const char *branch_root, pm_schema_known *known, int64_t id,
                            pm_snapshot **out, pm_err *e) {
    return read_snapshot_json(io, branch_root, known, "changelog", id, out, e);
}

/* ---- schemas ---------------------------------------------------------- */

int pm_schema_list_ids(pm_fileio *io, const char *branch_root, int64_t **ids, size_t *n, pm_err *e) {
    return list_versioned(io, branch_root, "schema", "schema-", ids, n, e);
}

int pm_schema_read(pm_fileio *io, const char *branch_root, int64_t id, pm_schema **out, pm_err *e) {
    *out = NULL;
    pm_buf b = {0};
    char *path = NULL;
    int rc = read_versioned(io, branch_root, "schema", id, &b, &path, e);
    if (rc == PAIMON_OK) rc = pm_schema_parse((const char *)b.data, b.len, path, out, e);
    pm_buf_free(&b);
    free(path);
    return rc;
}

/* ---- tags, consumers, branches ---------------------------------------- */

int pm_meta_name_check(const char *what, const char *name, pm_err *e) {
    if (!name || !*name || strchr(name, '/') || has_control(name) || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0) {
        char shown[160];
        int cut = name ? shown_bytes(name, strlen(name), shown, sizeof shown) : 0;
        return pm_fail(e, PAIMON_MISUSE, "invalid %s '%s%s': not a file name (empty, '.', '..', '/' or a control "
                       "character)", what, name ? shown : "(null)", cut ? "..." : "");
    }
    return PAIMON_OK;
}

int pm_tag_list(pm_fileio *io, const char *branch_root, char ***names, size_t *n, pm_err *e) {
    return list_names(io, branch_root, "tag", "tag-", 0, names, n, e);
}

/* The bytes of <dir>/<dir>-<name> (tag, consumer) for a checked name; a
 * missing file is PAIMON_NOTFOUND naming it. *path: for messages (the
 * caller frees it). */
static int read_named(pm_fileio *io, const char *branch_root, const char *dir, const char *name, pm_buf *b,
                      char **path, pm_err *e) {
    *path = NULL;
    int rc = pm_meta_name_check(strcmp(dir, "consumer") ? "tag name" : "consumer id", name, e);
    if (rc) return rc;
    size_t nl = strlen(dir) + strlen(name) + 2;
    char *fname = malloc(nl);
    if (!fname) return pm_nomem(e);
    snprintf(fname, nl, "%s-%s", dir, name);
    *path = path3(branch_root, dir, fname);
    free(fname);
    if (!*path) return pm_nomem(e);
    rc = pm_io_read_meta(io, *path, PM_META_MAX, b, e);
    if (rc == PAIMON_NOTFOUND) rc = pm_fail(e, PAIMON_NOTFOUND, "%s '%s' not found (%s)", dir, name, *path);
    return rc;
}

int pm_tag_read(pm_fileio *io, const char *branch_root, const char *name, pm_snapshot **out, pm_err *e) {
    return pm_tag_read_known(io, branch_root, NULL, name, out, e);
}

int pm_tag_read_known(pm_fileio *io, const char *branch_root, pm_schema_known *known, const char *name,
                      pm_snapshot **out, pm_err *e) {
    *out = NULL;
    pm_buf b = {0};
    char *path;
    int rc = read_named(io, branch_root, "tag", name, &b, &path, e);
    if (rc == PAIMON_OK) rc = pm_snapshot_parse((const char *)b.data, b.len, path, out, e);
    if (rc == PAIMON_OK && (rc = check_schema_exists(io, branch_root, known, *out, path, e))) {
        pm_snapshot_free(*out);
        *out = NULL;
    }
    pm_buf_free(&b);
    free(path);
    return rc;
}

/* A file name holding a control character is refused, not listed: every
 * id is printed, one a line (Java takes any name after "consumer-"). */
int pm_consumer_list(pm_fileio *io, const char *branch_root, char ***ids, size_t *n, pm_err *e) {
    int rc = list_names(io, branch_root, "consumer", "consumer-", 0, ids, n, e);
    for (size_t i = 0; !rc && i < *n; i++) {
        if (!has_control((*ids)[i])) continue;
        char shown[160];
        int cut = shown_bytes((*ids)[i], strlen((*ids)[i]), shown, sizeof shown);
        char *dir = path3(branch_root, "consumer", NULL);
        rc = pm_fail(e, PAIMON_CORRUPT, "%s/consumer-%s%s: the consumer id in the file name holds a control character; "
                     "rename or remove the file", dir ? dir : branch_root, shown, cut ? "..." : "");
        free(dir);
        pm_strv_free(*ids, *n);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

int pm_consumer_read(pm_fileio *io, const char *branch_root, const char *id, pm_consumer *out,
                     pm_err *e) {
    pm_buf b = {0};
    char *path;
    int rc = read_named(io, branch_root, "consumer", id, &b, &path, e);
    if (rc == PAIMON_OK) rc = pm_consumer_parse((const char *)b.data, b.len, path, out, e);
    pm_buf_free(&b);
    free(path);
    return rc;
}

#define HAS_FILE 1000

static int stop_at_file(void *ctx, const char *rel, const pm_stat *st, pm_err *e) {
    (void)ctx; (void)rel; (void)st; (void)e;
    return HAS_FILE;
}

/* A branch directory without any file (what a branch deletion interrupted
 * after its last file leaves on a file system with real directories) is no branch: it
 * references nothing, and it must not make every later walk fail. */
int pm_branch_list(pm_fileio *io, const char *table_root, char ***names, size_t *n, pm_err *e) {
    int rc = list_names(io, table_root, "branch", "branch-", 1, names, n, e);
    /* object stores have no directory without a file under it */
    if (rc || pm_io_has(io, PM_IO_VIRTUAL_DIRS)) return rc;
    size_t kept = 0, i = 0;
    for (; !rc && i < *n; i++) {
        char *dir = path3(table_root, "branch", NULL), *full = NULL;
        size_t len = dir ? strlen(dir) + strlen((*names)[i]) + 9 : 0;
        if (dir && (full = malloc(len))) snprintf(full, len, "%s/branch-%s", dir, (*names)[i]);
        free(dir);
        if (!full) { rc = pm_nomem(e); break; }
        int r = pm_io_list_tree(io, full, stop_at_file, NULL, e);
        free(full);
        if (r == HAS_FILE) { pm_err_clear(e); (*names)[kept++] = (*names)[i]; continue; }
        if (r) { rc = r; break; }
        free((*names)[i]);
    }
    if (rc) {   /* [0, kept) and [i, n) still own their strings */
        for (size_t k = 0; k < kept; k++) free((*names)[k]);
        for (size_t k = i; k < *n; k++) free((*names)[k]);
        free(*names);
        *names = NULL;
        *n = 0;
        return rc;
    }
    *n = kept;
    if (!kept) { free(*names); *names = NULL; }
    return PAIMON_OK;
}
