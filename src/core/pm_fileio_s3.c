/* S3 FileIO: s3:// and s3a:// URIs (caps PM_IO_VIRTUAL_DIRS).
 * - A "directory" is a key prefix ending in '/': it exists when some key has
 *   it as prefix; mkdirs does nothing. An empty directory is a marker
 *   object "dir/" (Hadoop's S3A writes them): list_tree reports markers as
 *   directories (pm_io_list_tree_dirs), remove_within with
 *   PM_RM_EMPTY_DIR deletes a marker nothing else lies under. list of a
 *   prefix holding nothing is PAIMON_NOTFOUND, like a missing local
 *   directory.
 * - write_atomic is a plain PUT (objects appear whole); create_no_replace
 *   is a PUT with If-None-Match: * and never a check-then-put; an unknown
 *   outcome is resolved by reading the key back (see s3_create_no_replace).
 * - remove of a missing key is PAIMON_OK (S3's DELETE does not say);
 *   remove_within HEADs first, so it reports NOTFOUND and the size like the
 *   local one; remove_batch (DeleteObjects, up to 4 requests of 1000 keys in
 *   flight) reports size -1 and cannot tell a missing key from a deleted one.
 * - remove_within/remove_batch never touch a key outside root's prefix: rel
 *   must be relative without empty, "." or ".." components, and the joined
 *   key is checked to start with "<root key>/". */
#include "pm_fileio.h"
#include "pm_s3.h"
#include "pm_s3_xml.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DELETE_BATCH 1000     /* DeleteObjects' limit */
#define DELETE_THREADS 4      /* DeleteObjects requests in flight per remove_batch */

typedef struct s3_io {
    pm_fileio io;
    pm_s3 *s3;
} s3_io;

#define S3(io) (((s3_io *)(io))->s3)

static int prefix_ci(const char *s, const char *p) {
    for (; *p; s++, p++)
        if (tolower((unsigned char)*s) != tolower((unsigned char)*p)) return 0;
    return 1;
}

/* "s3://bucket/key" -> bucket start/length and key (may be ""). -1 if the
 * URI is not s3:// or s3a:// or has no bucket. */
static int split_uri(const char *uri, const char **bucket, size_t *bl, const char **key) {
    const char *p;
    if (prefix_ci(uri, "s3://")) p = uri + 5;
    else if (prefix_ci(uri, "s3a://")) p = uri + 6;
    else return -1;
    size_t n = strcspn(p, "/");
    if (n == 0) return -1;
    *bucket = p;
    *bl = n;
    *key = p[n] ? p + n + 1 : p + n;
    return 0;
}

/* The key of `uri` in this FileIO's bucket, or an error naming the URI. */
static int key_of(pm_fileio *io, const char *uri, const char **key, pm_err *e) {
    const char *b;
    size_t bl;
    if (split_uri(uri, &b, &bl, key))
        return pm_fail(e, PAIMON_MISUSE, "%s: not an s3://bucket/key URI", uri);
    const char *mine = pm_s3_bucket(S3(io));
    if (strlen(mine) != bl || memcmp(mine, b, bl) != 0)
        return pm_fail(e, PAIMON_MISUSE, "%s: bucket differs from this FileIO's bucket %s", uri, mine);
    return PAIMON_OK;
}

/* An object key (not a bucket, not a "directory/"). */
static int object_key_of(pm_fileio *io, const char *uri, const char **key, pm_err *e) {
    int rc = key_of(io, uri, key, e);
    if (rc) return rc;
    size_t n = strlen(*key);
    if (n == 0 || (*key)[n - 1] == '/')
        return pm_fail(e, PAIMON_MISUSE, "%s: the URI names a bucket or directory, not an object key", uri);
    return PAIMON_OK;
}

/* ---- ListObjectsV2 ----------------------------------------------------- */

/* One listed entry: a key (is_dir 0) or a common prefix (is_dir 1). */
typedef int (*list_cb)(void *ctx, const char *key, int is_dir, int64_t size, int64_t mtime_ms, pm_err *e);

typedef struct list_page {
    list_cb cb;
    void *cb_ctx;
    pm_err *e;
    int truncated;
    pm_buf token;
    char *key;          /* the current Contents/CommonPrefixes */
    int64_t size, mtime_ms;
    int bad;            /* a field that does not parse */
    int have_size, have_mtime;
    size_t count;
} list_page;

/* ISO 8601 "2026-12-01T23:15:26.123Z" -> epoch millis; -1 if malformed. */
static int64_t parse_iso8601_ms(const char *s) {
    int y, mo, d, h, mi, sec, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19) return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
    int64_t ms = 0;
    const char *p = s + 19;
    if (*p == '.') {
        int digits = 0;
        for (p++; isdigit((unsigned char)*p); p++, digits++)
            if (digits < 3) ms = ms * 10 + (*p - '0');
        for (; digits < 3; digits++) ms *= 10;
    }
    if (strcmp(p, "Z") != 0) return -1;
    /* days from civil (Howard Hinnant) */
    int yy = y - (mo <= 2);
    int era = (yy >= 0 ? yy : yy - 399) / 400;
    int yoe = yy - era * 400;
    int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + doe - 719468;
    return ((days * 24 + h) * 60 + mi) * 60000 + (int64_t)sec * 1000 + ms;
}

static int on_list_elem(void *ctx, int depth, const char *parent, const char *name, const char *text, size_t tl) {
    list_page *pg = ctx;
    if (depth == 3 && text && (strcmp(parent, "Contents") == 0 || strcmp(parent, "CommonPrefixes") == 0)) {
        if (strcmp(name, "Key") == 0 || strcmp(name, "Prefix") == 0) {
            free(pg->key);
            pg->key = pm_strndup(text, tl);
            if (!pg->key) return pm_nomem(pg->e);
        } else if (strcmp(name, "Size") == 0) {
            if (pm_decimal_int64(text, &pg->size) || pg->size < 0) pg->bad = 1;
            pg->have_size = 1;
        } else if (strcmp(name, "LastModified") == 0) {
            pg->mtime_ms = parse_iso8601_ms(text);
            if (pg->mtime_ms < 0) pg->bad = 1;
            pg->have_mtime = 1;
        }
        return 0;
    }
    if (depth == 2 && !text && (strcmp(name, "Contents") == 0 || strcmp(name, "CommonPrefixes") == 0)) {
        int is_dir = name[0] == 'C' && name[1] == 'o' && name[2] == 'm';
        /* an age the orphan cut-off can trust, or an error: never 0 for unknown */
        if (!pg->key || (!is_dir && (pg->bad || !pg->have_size || !pg->have_mtime)))
            return pm_fail(pg->e, PAIMON_IO, "a %s entry without a key, or with a missing or bad Size/LastModified", name);
        int rc = pg->cb(pg->cb_ctx, pg->key, is_dir, is_dir ? 0 : pg->size, is_dir ? 0 : pg->mtime_ms, pg->e);
        free(pg->key);
        pg->key = NULL;
        pg->size = pg->mtime_ms = 0;
        pg->bad = pg->have_size = pg->have_mtime = 0;
        pg->count++;
        return rc;
    }
    if (depth == 2 && text && strcmp(name, "IsTruncated") == 0) pg->truncated = strcmp(text, "true") == 0;
    if (depth == 2 && text && strcmp(name, "NextContinuationToken") == 0) {
        pg->token.len = 0;
        if (pm_buf_append(&pg->token, text, tl) || pm_buf_cstr(&pg->token)) return pm_nomem(pg->e);
    }
    return 0;
}

/* Lists keys under `prefix` (delimiter '/' when delim), page by page, each
 * entry to cb; max_keys 0 = the store's page size; first_page_only stops
 * after one page. Memory: one page. */
static int list_objects(pm_fileio *io, const char *prefix, int delim, int max_keys, int first_page_only,
                        list_cb cb, void *cb_ctx, pm_err *e) {
    pm_s3 *s3 = S3(io);
    list_page pg;
    memset(&pg, 0, sizeof pg);
    pg.cb = cb;
    pg.cb_ctx = cb_ctx;
    pg.e = e;
    pm_buf q = {0}, body = {0};
    int rc = PAIMON_OK;
    for (int page = 0;; page++) {
        /* parameters sorted by name, values percent-encoded (SigV4) */
        q.len = 0;
        body.len = 0;
        if ((page && (pm_buf_printf(&q, "continuation-token=") || pm_s3_uri_encode(&q, (const char *)pg.token.data, 0) ||
                      pm_buf_printf(&q, "&"))) ||
            (delim && pm_buf_printf(&q, "delimiter=%%2F&")) || pm_buf_printf(&q, "list-type=2") ||
            (max_keys && pm_buf_printf(&q, "&max-keys=%d", max_keys)) || pm_buf_printf(&q, "&prefix=") ||
            pm_s3_uri_encode(&q, prefix, 0) || pm_buf_cstr(&q)) {
            rc = pm_nomem(e);
            break;
        }
        pm_s3_req r = {"GET", "", (const char *)q.data, NULL, 0, NULL, NULL, 0, &body};
        pm_s3_resp resp;
        rc = pm_s3_request(s3, &r, &resp, e);
        if (rc) break;
        if (resp.status == 404 && !resp.s3_code[0]) {
            /* S3 answers a listing 404 only with an error document
             * (NoSuchBucket): a bare one is not a missing table */
            rc = pm_fail(e, PAIMON_IO, "s3://%s/%s: LIST answered HTTP 404 without an S3 error: %s does not answer as "
                         "an S3 service", pm_s3_bucket(s3), prefix, pm_s3_cfg(s3)->endpoint_shown);
            break;
        }
        if (resp.status != 200) {
            rc = pm_s3_fail(s3, e, resp.status == 404 && strcmp(resp.s3_code, "NoSuchBucket") != 0 ? PAIMON_NOTFOUND : PAIMON_IO,
                            "LIST", prefix, &resp);
            break;
        }
        char root[64], what[600];
        snprintf(what, sizeof what, "s3://%s/%s: LIST (page %d)", pm_s3_bucket(s3), prefix, page + 1);
        pg.truncated = 0;
        /* the whole page is checked before any entry reaches the callback */
        rc = pm_xml_walk((const char *)body.data, body.len, NULL, NULL, root, what, e);
        if (rc && rc != PAIMON_NOMEM)
            pm_err_prefix(e, "%s does not answer as an S3 service: ", pm_s3_cfg(s3)->endpoint_shown);
        if (rc == PAIMON_OK && strcmp(root, "ListBucketResult") == 0)
            rc = pm_xml_walk((const char *)body.data, body.len, on_list_elem, &pg, root, what, e);
        if (rc == PAIMON_OK && strcmp(root, "ListBucketResult") != 0)
            rc = pm_fail(e, PAIMON_IO, "%s: the answer is a <%s> document, not a ListBucketResult: %s does not answer "
                         "as an S3 service", what, root, pm_s3_cfg(s3)->endpoint_shown);
        else if (rc == PAIMON_IO && !strstr(e->msg, "s3://"))
            pm_err_prefix(e, "%s", what);
        if (rc) break;
        if (!pg.truncated || first_page_only) break;
        if (!pg.token.len) {
            rc = pm_fail(e, PAIMON_IO, "%s: a truncated listing without NextContinuationToken", what);
            break;
        }
    }
    free(pg.key);
    pm_buf_free(&pg.token);
    pm_buf_free(&q);
    pm_buf_free(&body);
    if (rc) pm_s3_scrub(s3, e);
    return rc;
}

/* ---- list / stat / exists ---------------------------------------------- */

typedef struct names_ctx {
    size_t skip;           /* length of the listed prefix */
    pm_dirent *v;
    size_t n, cap;
} names_ctx;

static int collect_name(void *ctx, const char *key, int is_dir, int64_t size, int64_t mtime_ms, pm_err *e) {
    names_ctx *c = ctx;
    (void)size;
    (void)mtime_ms;
    if (strlen(key) < c->skip) return pm_fail(e, PAIMON_IO, "listed key %s is outside the listed prefix", key);
    const char *name = key + c->skip;
    size_t nl = strlen(name);
    if (is_dir && nl && name[nl - 1] == '/') nl--;
    if (nl == 0) return 0;   /* the "dir/" marker object itself */
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        pm_dirent *nv = realloc(c->v, nc * sizeof *nv);
        if (!nv) return pm_nomem(e);
        c->v = nv;
        c->cap = nc;
    }
    c->v[c->n].name = pm_strndup(name, nl);
    if (!c->v[c->n].name) return pm_nomem(e);
    c->v[c->n].is_link = 0;
    c->v[c->n++].is_dir = is_dir;
    return 0;
}

static int dirent_cmp(const void *a, const void *b) {
    return strcmp(((const pm_dirent *)a)->name, ((const pm_dirent *)b)->name);
}

/* "key/" for a directory key ("" for the bucket root); malloc'd. */
static char *dir_prefix(const char *key) {
    size_t n = strlen(key);
    while (n && key[n - 1] == '/') n--;
    if (n == 0) return pm_strdup("");
    char *p = malloc(n + 2);
    if (!p) return NULL;
    memcpy(p, key, n);
    p[n] = '/';
    p[n + 1] = '\0';
    return p;
}

static int s3_list(pm_fileio *io, const char *uri, pm_dirent **out, size_t *n, pm_err *e) {
    *out = NULL;
    *n = 0;
    const char *key;
    int rc = key_of(io, uri, &key, e);
    if (rc) return rc;
    char *prefix = dir_prefix(key);
    if (!prefix) return pm_nomem(e);
    names_ctx c = {strlen(prefix), NULL, 0, 0};
    rc = list_objects(io, prefix, 1, 0, 0, collect_name, &c, e);
    free(prefix);
    if (rc == PAIMON_OK && c.n == 0 && *key) rc = pm_fail(e, PAIMON_NOTFOUND, "cannot list %s: no such directory", uri);
    if (rc) {
        pm_dirents_free(c.v, c.n);
        return rc;
    }
    if (c.n > 1) qsort(c.v, c.n, sizeof *c.v, dirent_cmp);
    *out = c.v;
    *n = c.n;
    return PAIMON_OK;
}

static int count_any(void *ctx, const char *key, int is_dir, int64_t size, int64_t mtime_ms, pm_err *e) {
    (void)key; (void)is_dir; (void)size; (void)mtime_ms; (void)e;
    (*(int *)ctx)++;
    return 0;
}

/* Whether some key lies under "key/" (a virtual directory). */
static int dir_exists(pm_fileio *io, const char *key, int *found, pm_err *e) {
    char *prefix = dir_prefix(key);
    if (!prefix) return pm_nomem(e);
    *found = 0;
    int rc = list_objects(io, prefix, 0, 1, 1, count_any, found, e);
    free(prefix);
    return rc;
}

static int head_object(pm_fileio *io, const char *key, pm_stat *st, pm_err *e) {
    pm_s3_req r = {"HEAD", key, NULL, NULL, 0, NULL, NULL, 0, NULL};
    pm_s3_resp resp;
    int rc = pm_s3_request(S3(io), &r, &resp, e);
    if (rc) return rc;
    if (resp.status == 404) return pm_fail(e, PAIMON_NOTFOUND, "s3://%s/%s: no such object", pm_s3_bucket(S3(io)), key);
    if (resp.status != 200) return pm_s3_fail(S3(io), e, PAIMON_IO, "HEAD", key, &resp);
    if (resp.content_length < 0 || resp.mtime_ms <= 0)
        return pm_fail(e, PAIMON_IO, "s3://%s/%s: HEAD answered without Content-Length or Last-Modified: %s does not "
                       "answer as an S3 service", pm_s3_bucket(S3(io)), key, pm_s3_cfg(S3(io))->endpoint_shown);
    st->size = resp.content_length;
    st->mtime_ms = resp.mtime_ms;
    st->is_dir = 0;
    return PAIMON_OK;
}

static int s3_stat(pm_fileio *io, const char *uri, pm_stat *st, pm_err *e) {
    const char *key;
    int rc = key_of(io, uri, &key, e);
    if (rc) return rc;
    memset(st, 0, sizeof *st);
    size_t kl = strlen(key);
    if (kl && key[kl - 1] != '/') {
        rc = head_object(io, key, st, e);
        if (rc != PAIMON_NOTFOUND) return rc;
    }
    if (!kl) {   /* the bucket root: a directory if the bucket answers */
        int any;
        rc = dir_exists(io, key, &any, e);
        if (rc == PAIMON_OK) st->is_dir = 1;
        return rc;
    }
    int found;
    rc = dir_exists(io, key, &found, e);
    if (rc) return rc;
    if (!found) return pm_fail(e, PAIMON_NOTFOUND, "cannot stat %s: no such object or directory", uri);
    st->is_dir = 1;
    return PAIMON_OK;
}

static int s3_exists(pm_fileio *io, const char *uri, int *exists, pm_err *e) {
    pm_stat st;
    *exists = 0;
    int rc = s3_stat(io, uri, &st, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (rc == PAIMON_OK) *exists = 1;
    return rc;
}

/* ---- list_tree ----------------------------------------------------------- */

typedef struct tree_ctx {
    size_t skip;
    pm_tree_cb cb;
    void *cb_ctx;
} tree_ctx;

/* Directory marker objects ("dir/", as Hadoop's S3A writes for an empty
 * directory) are reported as directories (rel without the '/', is_dir 1);
 * pm_io_list_tree passes only files on. */
static int tree_entry(void *ctx, const char *key, int is_dir, int64_t size, int64_t mtime_ms, pm_err *e) {
    tree_ctx *t = ctx;
    (void)is_dir;
    size_t kl = strlen(key);
    if (kl < t->skip) return pm_fail(e, PAIMON_IO, "listed key %s is outside the listed prefix", key);
    if (kl == t->skip) return 0;   /* the listed directory's own marker */
    if (key[kl - 1] == '/') {
        char *rel = pm_strndup(key + t->skip, kl - t->skip - 1);
        if (!rel) return pm_nomem(e);
        pm_stat st = {0, mtime_ms, 1};
        int rc = *rel ? t->cb(t->cb_ctx, rel, &st, e) : 0;
        free(rel);
        return rc;
    }
    pm_stat st = {size, mtime_ms, 0};
    return t->cb(t->cb_ctx, key + t->skip, &st, e);
}

static int s3_list_tree(pm_fileio *io, const char *uri, pm_tree_cb cb, void *cb_ctx, pm_err *e) {
    const char *key;
    int rc = key_of(io, uri, &key, e);
    if (rc) return rc;
    char *prefix = dir_prefix(key);
    if (!prefix) return pm_nomem(e);
    tree_ctx t = {strlen(prefix), cb, cb_ctx};
    rc = list_objects(io, prefix, 0, 0, 0, tree_entry, &t, e);
    free(prefix);
    return rc;
}

/* ---- read / write ------------------------------------------------------ */

static int s3_read_all(pm_fileio *io, const char *uri, pm_buf *out, pm_err *e) {
    const char *key;
    int rc = object_key_of(io, uri, &key, e);
    if (rc) return rc;
    size_t from = out->len;
    int had_memory = out->data != NULL;
    pm_s3_req r = {"GET", key, NULL, NULL, 0, NULL, NULL, 0, out};
    pm_s3_resp resp;
    rc = pm_s3_request(S3(io), &r, &resp, e);
    if (rc == PAIMON_OK && resp.status != 200)
        rc = pm_s3_fail(S3(io), e, resp.status == 404 ? PAIMON_NOTFOUND : PAIMON_IO, "GET", key, &resp);
    else if (rc == PAIMON_OK && resp.too_big)
        rc = pm_io_fail_too_big(e, uri, resp.content_length, out->read_max);
    if (rc && !had_memory) pm_buf_free(out);   /* the buffer as the caller gave it */
    else if (rc) out->len = from;              /* no error document in it */
    return rc;
}

static int s3_write_atomic(pm_fileio *io, const char *uri, const void *p, size_t n, pm_err *e) {
    const char *key;
    int rc = object_key_of(io, uri, &key, e);
    if (rc) return rc;
    pm_s3_req r = {"PUT", key, NULL, p, n, NULL, NULL, 0, NULL};
    pm_buf body = {0};
    r.out = &body;
    pm_s3_resp resp;
    rc = pm_s3_request(S3(io), &r, &resp, e);
    if (rc == PAIMON_OK && resp.status != 200) rc = pm_s3_fail(S3(io), e, PAIMON_IO, "PUT", key, &resp);
    pm_buf_free(&body);
    return rc;
}

/* The store refuses If-None-Match on PUT (rather than honouring it). */
static int conditional_put_unsupported(const pm_s3_resp *resp) {
    if (resp->status == 501) return 1;
    return resp->status == 400 && (strstr(resp->s3_message, "If-None-Match") || strstr(resp->s3_code, "NotImplemented") ||
                                   strstr(resp->s3_message, "if-none-match"));
}

/* After an outcome we cannot know: is the object there with our bytes? */
static int resolve_by_reading_back(pm_fileio *io, const char *uri, const char *key, const void *p, size_t n,
                                   const char *why, int *missing, pm_err *e) {
    pm_buf got = {0};
    pm_err re;
    pm_err_clear(&re);
    *missing = 0;
    int rc = s3_read_all(io, uri, &got, &re);
    if (rc == PAIMON_OK) {
        int same = got.len == n && (n == 0 || memcmp(got.data, p, n) == 0);
        pm_buf_free(&got);
        if (same) return PAIMON_OK;
        return pm_fail(e, PAIMON_EXISTS, "%s already exists (written by another writer; %s)", uri, why);
    }
    pm_buf_free(&got);
    if (rc == PAIMON_NOTFOUND) { *missing = 1; return rc; }
    (void)key;
    rc = pm_fail(e, PAIMON_UNCERTAIN, "%s: the outcome of the conditional PUT is unknown (%s) and reading it back "
                 "failed: %s", uri, why, re.msg);
    pm_s3_scrub(S3(io), e);
    return rc;
}

/* PUT with If-None-Match: *. Retried only when it is known to be safe: an
 * answer that the request was not applied (5xx/SlowDown: the key is then
 * read back first, since a 500 may still have stored it) or no connection.
 * When the request may have been applied, the key is read back: our bytes
 * -> OK, other bytes -> EXISTS, missing -> the conditional PUT is tried
 * again (it cannot overwrite), unreadable -> UNCERTAIN. A 412 is checked
 * the same way: it may be our own write, applied by an earlier attempt or
 * by libcurl's silent re-send on a reused connection. A 412 whose key then
 * reads as missing contradicts itself (a store or cache without
 * read-after-write on the key): UNCERTAIN, never EXISTS. Once a request may
 * have been applied, every later failure is UNCERTAIN too. So: OK (ours is
 * there), EXISTS (proven: another writer's bytes are there), UNCERTAIN, or
 * another code (proven: nothing was applied). */
static int s3_create_no_replace(pm_fileio *io, const char *uri, const void *p, size_t n, pm_err *e) {
    const char *key;
    int rc = object_key_of(io, uri, &key, e);
    if (rc) return rc;
    pm_s3 *s3 = S3(io);
    int attempts = 1 + pm_s3_cfg(s3)->max_retries, uncertain = 0;
    char why[sizeof ((pm_err *)0)->msg] = "";
    pm_buf body = {0};
    for (int i = 1;; i++) {
        pm_s3_req r = {"PUT", key, NULL, p, n, "If-None-Match: *", NULL, 1, &body};
        pm_s3_resp resp;
        body.len = 0;
        rc = pm_s3_request(s3, &r, &resp, e);
        if (rc == PAIMON_OK && resp.status == 200) break;
        if (rc == PAIMON_OK && resp.status == 412) {
            /* A 412 may answer our own PUT sent twice: libcurl re-sends a
             * request whose reused connection closed without an answer
             * (the first copy may have been applied). Only other bytes
             * under the key mean another writer won. */
            int missing;
            if (!uncertain) snprintf(why, sizeof why, "the store answered 412 Precondition Failed");
            rc = resolve_by_reading_back(io, uri, key, p, n, why, &missing, e);
            if (missing)
                rc = pm_fail(e, PAIMON_UNCERTAIN, "%s: outcome uncertain: the conditional PUT was answered 412 "
                             "Precondition Failed (the key exists) but reading the key back answers 404 (missing); "
                             "the write may have been applied (%s)", uri, why);
            break;
        }
        if (rc == PAIMON_OK && conditional_put_unsupported(&resp)) {
            pm_s3_fail(s3, e, PAIMON_UNSUPPORTED, "PUT If-None-Match", key, &resp);
            pm_err_prefix(e, "the store does not support conditional writes, so commits refuse (there is no "
                          "check-then-put fallback)");
            rc = PAIMON_UNSUPPORTED;
            break;
        }
        /* AWS: another conditional write on the key is in flight; this one
         * was not applied, and trying again cannot overwrite */
        int conflict = rc == PAIMON_OK && resp.status == 409 && strcmp(resp.s3_code, "ConditionalRequestConflict") == 0;
        if (rc == PAIMON_OK && !conflict && !pm_s3_retryable(&resp)) {
            rc = pm_s3_fail(s3, e, PAIMON_IO, "PUT", key, &resp);
            if (uncertain) {   /* an earlier copy may have been applied */
                pm_err_prefix(e, "%s: outcome uncertain (an earlier attempt may have been applied: %s)", uri, why);
                rc = e->code = PAIMON_UNCERTAIN;
            }
            break;
        }
        /* no answer or a retryable answer */
        if (rc != PAIMON_OK || resp.maybe_sent) {
            pm_err fe;
            pm_s3_fail(s3, &fe, PAIMON_IO, "PUT", key, &resp);
            snprintf(why, sizeof why, "%s", fe.msg);
            if (resp.maybe_sent && resp.status != 503 && !conflict) {
                uncertain = 1;
                int missing;
                rc = resolve_by_reading_back(io, uri, key, p, n, why, &missing, e);
                if (!missing) break;
            }
        }
        if (i >= attempts) {
            rc = uncertain ? pm_fail(e, PAIMON_UNCERTAIN, "%s: the conditional PUT failed %d times, its outcome is unknown: %s",
                                     uri, i, why)
                           : pm_fail(e, PAIMON_IO, "%s: the conditional PUT failed %d times: %s", uri, i, why);
            break;
        }
        pm_s3_backoff(s3, i);
    }
    pm_buf_free(&body);
    if (rc) pm_s3_scrub(s3, e);
    return rc;
}

/* ---- remove ------------------------------------------------------------ */

static int s3_remove(pm_fileio *io, const char *uri, pm_err *e) {
    const char *key;
    int rc = object_key_of(io, uri, &key, e);
    if (rc) return rc;
    pm_buf body = {0};
    pm_s3_req r = {"DELETE", key, NULL, NULL, 0, NULL, NULL, 0, &body};
    pm_s3_resp resp;
    rc = pm_s3_request(S3(io), &r, &resp, e);
    if (rc == PAIMON_OK && resp.status != 204 && resp.status != 200)
        rc = pm_s3_fail(S3(io), e, resp.status == 404 ? PAIMON_NOTFOUND : PAIMON_IO, "DELETE", key, &resp);
    pm_buf_free(&body);
    return rc;
}

/* root key + "/" + rel after the lexical rules; malloc'd in *out, or
 * PM_IO_OUTSIDE. */
static int key_within(pm_fileio *io, const char *root, const char *rel, char **out, pm_err *e) {
    const char *rk;
    *out = NULL;
    int rc = key_of(io, root, &rk, e);
    if (rc) return rc;
    if (!rel || !*rel || rel[0] == '/') return pm_fail(e, PM_IO_OUTSIDE, "%s/%s: not a relative path", root, rel ? rel : "");
    for (const char *c = rel;;) {
        const char *end = strchr(c, '/');
        size_t cl = end ? (size_t)(end - c) : strlen(c);
        if (cl == 0 || (cl == 1 && c[0] == '.') || (cl == 2 && c[0] == '.' && c[1] == '.'))
            return pm_fail(e, PM_IO_OUTSIDE, "%s/%s: empty, '.' or '..' path component", root, rel);
        if (!end) break;
        c = end + 1;
    }
    char *prefix = dir_prefix(rk);
    if (!prefix) return pm_nomem(e);
    size_t pl = strlen(prefix);
    char *key = pm_path_join(*prefix ? prefix : "", rel);
    if (key && !*prefix) { free(key); key = pm_strdup(rel); }
    if (!key) { free(prefix); return pm_nomem(e); }
    /* the normalized key must still lie under the root's prefix */
    if (strncmp(key, prefix, pl) != 0 || strlen(key) == pl) {
        rc = pm_fail(e, PM_IO_OUTSIDE, "%s: key %s is outside the table prefix %s", root, key, prefix);
        free(key);
        free(prefix);
        return rc;
    }
    free(prefix);
    *out = key;
    return PAIMON_OK;
}

/* What is under a "dir/" prefix: its marker object, and whether any other key. */
typedef struct dir_look { const char *marker; int has_marker, has_other; int64_t mtime_ms; } dir_look;

static int look_entry(void *ctx, const char *key, int is_dir, int64_t size, int64_t mtime_ms, pm_err *e) {
    dir_look *d = ctx;
    (void)size;
    (void)e;
    if (!is_dir && !strcmp(key, d->marker)) { d->has_marker = 1; d->mtime_ms = mtime_ms; }
    else d->has_other = 1;
    return 0;
}

/* An "empty directory" on S3 is a marker object "dir/" with no other key
 * under it: that marker is deleted. Another key under it: PAIMON_EXISTS
 * (not empty); no key at all: PAIMON_NOTFOUND (no directory to remove).
 * A key a writer adds meanwhile is not affected (a marker is only an
 * object). */
static int remove_empty_dir(pm_fileio *io, const char *root, const char *rel, const char *key, int flags,
                            pm_stat *st, pm_err *e) {
    size_t kl = strlen(key);
    char *marker = malloc(kl + 2);
    if (!marker) return pm_nomem(e);
    memcpy(marker, key, kl);
    memcpy(marker + kl, "/", 2);
    dir_look d = {marker, 0, 0, 0};
    int rc = list_objects(io, marker, 0, 2, 1, look_entry, &d, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
    if (!rc && d.has_other) rc = pm_fail(e, PAIMON_EXISTS, "%s/%s: not an empty directory", root, rel);
    else if (!rc && !d.has_marker) rc = pm_fail(e, PAIMON_NOTFOUND, "%s/%s: no directory (marker object) to remove", root, rel);
    if (!rc) {
        st->is_dir = 1;
        st->mtime_ms = d.mtime_ms;
    }
    if (!rc && !(flags & PM_RM_DRY_RUN)) {
        pm_buf body = {0};
        pm_s3_req r = {"DELETE", marker, NULL, NULL, 0, NULL, NULL, 0, &body};
        pm_s3_resp resp;
        rc = pm_s3_request(S3(io), &r, &resp, e);
        if (rc == PAIMON_OK && resp.status != 204 && resp.status != 200)
            rc = pm_s3_fail(S3(io), e, resp.status == 404 ? PAIMON_NOTFOUND : PAIMON_IO, "DELETE", marker, &resp);
        pm_buf_free(&body);
    }
    free(marker);
    return rc;
}

static int s3_remove_within(pm_fileio *io, const char *root, const char *rel, int flags, pm_stat *st, pm_err *e) {
    char *key;
    int rc = key_within(io, root, rel, &key, e);
    if (rc) return rc;
    memset(st, 0, sizeof *st);
    if (flags & PM_RM_EMPTY_DIR) {
        rc = remove_empty_dir(io, root, rel, key, flags, st, e);
        free(key);
        return rc;
    }
    rc = head_object(io, key, st, e);
    if (rc == PAIMON_OK && !(flags & PM_RM_DRY_RUN)) {
        pm_buf body = {0};
        pm_s3_req r = {"DELETE", key, NULL, NULL, 0, NULL, NULL, 0, &body};
        pm_s3_resp resp;
        rc = pm_s3_request(S3(io), &r, &resp, e);
        if (rc == PAIMON_OK && resp.status != 204 && resp.status != 200)
            rc = pm_s3_fail(S3(io), e, resp.status == 404 ? PAIMON_NOTFOUND : PAIMON_IO, "DELETE", key, &resp);
        pm_buf_free(&body);
    }
    free(key);
    return rc;
}

/* DeleteResult: per-key <Error>s of a Quiet DeleteObjects. */
typedef struct del_ctx {
    char **keys;          /* the batch's keys */
    size_t *idx;          /* their item indices */
    size_t n;
    int *rcs;
    char **msgs;
    pm_s3 *s3;
    char *key, *code, *msg;
} del_ctx;

static int on_delete_elem(void *ctx, int depth, const char *parent, const char *name, const char *text, size_t tl) {
    del_ctx *d = ctx;
    if (depth == 3 && text && strcmp(parent, "Error") == 0) {
        char **slot = strcmp(name, "Key") == 0 ? &d->key : strcmp(name, "Code") == 0 ? &d->code
                    : strcmp(name, "Message") == 0 ? &d->msg : NULL;
        if (slot) {
            free(*slot);
            *slot = pm_strndup(text, tl);
            if (!*slot) return PAIMON_NOMEM;
        }
    } else if (depth == 2 && !text && strcmp(name, "Error") == 0) {
        for (size_t i = 0; d->key && i < d->n; i++) {
            if (strcmp(d->keys[i], d->key) != 0) continue;
            size_t j = d->idx[i];
            d->rcs[j] = PAIMON_IO;
            pm_err me;
            pm_fail(&me, PAIMON_IO, "s3://%s/%s: DeleteObjects failed for this key: %s: %s", pm_s3_bucket(d->s3),
                    d->key, d->code ? d->code : "?", d->msg ? d->msg : "");
            pm_s3_scrub(d->s3, &me);
            free(d->msgs[j]);
            d->msgs[j] = pm_strdup(me.msg);
        }
        free(d->key); free(d->code); free(d->msg);
        d->key = d->code = d->msg = NULL;
    }
    return 0;
}

static void base64(const unsigned char *p, size_t n, char *out) {
    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
}

/* One DeleteObjects request for keys[0..n). */
static int delete_batch(pm_fileio *io, char **keys, size_t *idx, size_t n, int *rcs, char **msgs, pm_err *e) {
    pm_s3 *s3 = S3(io);
    pm_buf req = {0}, body = {0};
    int rc = pm_buf_printf(&req, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>");
    for (size_t i = 0; i < n && !rc; i++)
        rc = pm_buf_printf(&req, "<Object><Key>") || pm_xml_escape(&req, keys[i]) || pm_buf_printf(&req, "</Key></Object>");
    if (rc || pm_buf_printf(&req, "</Delete>")) { pm_buf_free(&req); return pm_nomem(e); }
    unsigned char md5[EVP_MAX_MD_SIZE];
    unsigned int ml = 0;
    char md5_b64[64];
    EVP_Digest(req.data, req.len, md5, &ml, EVP_md5(), NULL);
    base64(md5, ml, md5_b64);
    pm_s3_req r = {"POST", "", "delete=", req.data, req.len, NULL, md5_b64, 0, &body};
    pm_s3_resp resp;
    rc = pm_s3_request(s3, &r, &resp, e);
    if (rc == PAIMON_OK && resp.status != 200) rc = pm_s3_fail(s3, e, PAIMON_IO, "DeleteObjects", keys[0], &resp);
    if (rc == PAIMON_OK) {
        del_ctx d = {keys, idx, n, rcs, msgs, s3, NULL, NULL, NULL};
        char root[64], what[300];
        snprintf(what, sizeof what, "s3://%s/%s: DeleteObjects of %zu keys", pm_s3_bucket(s3), keys[0], n);
        rc = pm_xml_walk((const char *)body.data, body.len, on_delete_elem, &d, root, what, e);
        if (rc == PAIMON_NOMEM) rc = pm_nomem(e);
        else if (rc == PAIMON_OK && strcmp(root, "DeleteResult") != 0)
            rc = pm_fail(e, PAIMON_IO, "%s: the answer is a <%s> document, not a DeleteResult", what, root);
        free(d.key); free(d.code); free(d.msg);
    }
    pm_buf_free(&req);
    pm_buf_free(&body);
    return rc;
}

/* The DeleteObjects requests of one remove_batch, shared by its threads:
 * thread t sends batches t, t + threads, ...; each writes only the rcs and
 * msgs of its own keys. */
typedef struct batch_job {
    pm_fileio *io;
    char **keys;        /* the valid keys, in item order */
    size_t *idx;        /* their item indices */
    size_t nkeys, threads, t;
    int *rcs;
    char **msgs;
} batch_job;

static void *run_batches(void *arg) {
    batch_job *j = arg;
    for (size_t off = j->t * DELETE_BATCH; off < j->nkeys; off += j->threads * DELETE_BATCH) {
        size_t nb = j->nkeys - off < DELETE_BATCH ? j->nkeys - off : DELETE_BATCH;
        pm_err be;
        pm_err_clear(&be);
        if (delete_batch(j->io, j->keys + off, j->idx + off, nb, j->rcs, j->msgs, &be) != PAIMON_OK)
            for (size_t k = off; k < off + nb; k++) {   /* the batch failed as a whole */
                j->rcs[j->idx[k]] = be.code ? be.code : PAIMON_IO;
                free(j->msgs[j->idx[k]]);
                j->msgs[j->idx[k]] = pm_strdup(be.msg);
            }
    }
    return NULL;
}

/* ---- dry runs: one listing for many keys of a directory ----------------- */

/* A dry run asks whether each key exists and how big it is. A HEAD each is
 * one request per key: a catch-up expiration plans hundreds of thousands.
 * Keys of one directory (DRY_LIST_MIN or more in a batch) are looked up in
 * a listing of that directory instead, one request per 1000 keys listed,
 * stopping past the largest key asked for. A directory much larger than
 * what is asked of it would cost more pages than HEADs: after 1 page per
 * DRY_LIST_KEYS_PER_PAGE keys asked the listing stops and the keys it has
 * not reached yet get their HEAD. */
#define DRY_LIST_MIN 16
#define DRY_LIST_KEYS_PER_PAGE 10

typedef struct dry_group {
    char **keys;           /* the batch's keys, by index */
    const size_t *order;   /* indexes of this directory's keys, in key order */
    size_t n, next;        /* keys; the first not yet settled */
    pm_stat *sts;
    int *rcs;
    int *settled;
    size_t listed, max_listed;
    int capped;            /* stopped at max_listed */
} dry_group;

static int dry_listed(void *ctx, const char *key, int is_dir, int64_t size, int64_t mtime_ms, pm_err *e) {
    dry_group *g = ctx;
    (void)e;
    if (is_dir) return 0;
    /* keys come in ascending order: the ones asked for below this one are not there */
    while (g->next < g->n) {
        size_t i = g->order[g->next];
        int c = strcmp(g->keys[i], key);
        if (c > 0) break;
        if (c == 0) {
            g->sts[i] = (pm_stat){size, mtime_ms, 0};
            g->rcs[i] = PAIMON_OK;
        } else {
            g->rcs[i] = PAIMON_NOTFOUND;
        }
        g->settled[i] = 1;
        g->next++;
    }
    if (g->next == g->n) return PAIMON_DONE;   /* past the largest key asked for */
    if (++g->listed >= g->max_listed) { g->capped = 1; return PAIMON_DONE; }
    return 0;
}

typedef struct dry_key { const char *key; size_t i; } dry_key;

static int dry_key_cmp(const void *a, const void *b) {
    return strcmp(((const dry_key *)a)->key, ((const dry_key *)b)->key);
}

static size_t parent_len(const char *key) {
    const char *slash = strrchr(key, '/');
    return slash ? (size_t)(slash - key) + 1 : 0;
}

/* Settle what listings can of keys[0, n) (NULL: not a valid key); the rest
 * stays unsettled for a HEAD. Fails only for out of memory. */
static int dry_run_by_listing(pm_fileio *io, char **keys, size_t n, pm_stat *sts, int *rcs, int *settled, pm_err *e) {
    size_t *order = malloc((n ? n : 1) * sizeof *order), m = 0;
    dry_key *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!order || !sorted) { free(order); free(sorted); return pm_nomem(e); }
    for (size_t i = 0; i < n; i++)
        if (keys[i]) sorted[m++] = (dry_key){keys[i], i};
    qsort(sorted, m, sizeof *sorted, dry_key_cmp);
    for (size_t k = 0; k < m; k++) order[k] = sorted[k].i;
    free(sorted);
    int rc = PAIMON_OK;
    for (size_t a = 0; a < m && !rc;) {
        size_t pl = parent_len(keys[order[a]]), b = a + 1;
        while (b < m && parent_len(keys[order[b]]) == pl && !strncmp(keys[order[a]], keys[order[b]], pl)) b++;
        if (b - a >= DRY_LIST_MIN && pl > 0) {
            char *prefix = pm_strndup(keys[order[a]], pl);
            if (!prefix) { rc = pm_nomem(e); break; }
            dry_group g = {keys, order + a, b - a, 0, sts, rcs, settled, 0, (b - a) / DRY_LIST_KEYS_PER_PAGE * 1000, 0};
            if (g.max_listed < 1000) g.max_listed = 1000;
            pm_err le;
            pm_err_clear(&le);
            int lr = list_objects(io, prefix, 1, 0, 0, dry_listed, &g, &le);
            free(prefix);
            if (lr == PAIMON_NOMEM) { rc = pm_nomem(e); break; }
            if (lr == PAIMON_OK && !g.capped) {
                /* the whole directory listed: what it did not show is not there */
                for (; g.next < g.n; g.next++) {
                    rcs[order[a + g.next]] = PAIMON_NOTFOUND;
                    settled[order[a + g.next]] = 1;
                }
            }
            /* a failed or capped listing: the unsettled keys get their HEAD */
        }
        a = b;
    }
    free(order);
    return rc;
}

/* A dry run's batch: each key checked as a deletion would check it, then
 * found in a listing of its directory or by a HEAD. */
static int dry_run_batch(pm_fileio *io, const char *root, const char *const *rels, size_t n, pm_stat *sts, int *rcs,
                         char **msgs, pm_err *e) {
    char **keys = calloc(n ? n : 1, sizeof *keys);
    int *settled = calloc(n ? n : 1, sizeof *settled);
    if (!keys || !settled) { free(keys); free(settled); return pm_nomem(e); }
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n; i++) {
        pm_err ie;
        pm_err_clear(&ie);
        sts[i] = (pm_stat){-1, 0, 0};
        msgs[i] = NULL;
        rcs[i] = key_within(io, root, rels[i], &keys[i], &ie);
        if (rcs[i] == PAIMON_NOMEM && rc == PAIMON_OK) rc = pm_nomem(e);
        if (rcs[i] != PAIMON_OK) { msgs[i] = pm_strdup(ie.msg); free(keys[i]); keys[i] = NULL; }
    }
    if (rc == PAIMON_OK) rc = dry_run_by_listing(io, keys, n, sts, rcs, settled, e);
    for (size_t i = 0; i < n && rc == PAIMON_OK; i++) {
        if (!keys[i]) continue;
        pm_err ie;
        pm_err_clear(&ie);
        if (settled[i]) {
            if (rcs[i] == PAIMON_NOTFOUND) {
                pm_fail(&ie, PAIMON_NOTFOUND, "s3://%s/%s: no such object (listed)", pm_s3_bucket(S3(io)), keys[i]);
                msgs[i] = pm_strdup(ie.msg);
            }
            continue;
        }
        rcs[i] = head_object(io, keys[i], &sts[i], &ie);
        if (rcs[i] == PAIMON_NOMEM) rc = pm_nomem(e);
        if (rcs[i] != PAIMON_OK) msgs[i] = pm_strdup(ie.msg);
    }
    for (size_t i = 0; i < n; i++) free(keys[i]);
    free(keys);
    free(settled);
    return rc;
}

static int s3_remove_batch(pm_fileio *io, const char *root, const char *const *rels, size_t n, int flags,
                           pm_stat *sts, int *rcs, char **msgs, pm_err *e) {
    if (flags & PM_RM_DRY_RUN) return dry_run_batch(io, root, rels, n, sts, rcs, msgs, e);
    char **keys = calloc(n ? n : 1, sizeof *keys);
    size_t *idx = calloc(n ? n : 1, sizeof *idx);
    if (!keys || !idx) { free(keys); free(idx); return pm_nomem(e); }
    size_t nkeys = 0;
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n; i++) {
        pm_err ie;
        pm_err_clear(&ie);
        sts[i] = (pm_stat){-1, 0, 0};
        msgs[i] = NULL;
        char *key = NULL;
        rcs[i] = key_within(io, root, rels[i], &key, &ie);
        if (rcs[i] == PAIMON_OK) {
            keys[nkeys] = key;
            idx[nkeys++] = i;
        }
        if (rcs[i] == PAIMON_NOMEM && rc == PAIMON_OK) rc = pm_nomem(e);
        if (rcs[i] != PAIMON_OK) msgs[i] = pm_strdup(ie.msg);
    }
    size_t nbatches = (nkeys + DELETE_BATCH - 1) / DELETE_BATCH;
    size_t threads = nbatches < DELETE_THREADS ? nbatches : DELETE_THREADS;
    batch_job jobs[DELETE_THREADS];
    pthread_t th[DELETE_THREADS];
    int started[DELETE_THREADS] = {0};
    for (size_t t = 0; t < threads && rc == PAIMON_OK; t++) {
        jobs[t] = (batch_job){io, keys, idx, nkeys, threads, t, rcs, msgs};
        /* the first batch runs on this thread; a thread that cannot start
         * leaves its batches to this one */
        started[t] = t > 0 && pthread_create(&th[t], NULL, run_batches, &jobs[t]) == 0;
    }
    if (rc == PAIMON_OK && threads) {
        for (size_t t = 0; t < threads; t++)
            if (!started[t]) run_batches(&jobs[t]);
        for (size_t t = 1; t < threads; t++)
            if (started[t]) pthread_join(th[t], NULL);
    }
    for (size_t k = 0; k < nkeys; k++) free(keys[k]);
    free(keys);
    free(idx);
    return rc;
}

static int s3_mkdirs(pm_fileio *io, const char *uri, pm_err *e) {
    const char *key;
    return key_of(io, uri, &key, e);   /* directories are virtual */
}

static void s3_destroy(pm_fileio *io) {
    pm_s3_free(S3(io));
    free(io);
}

static const pm_fileio_ops s3_ops = {
    "s3",
    s3_read_all,
    s3_list,
    s3_stat,
    s3_exists,
    s3_write_atomic,
    s3_create_no_replace,
    s3_remove,
    s3_remove_within,
    s3_mkdirs,
    s3_destroy,
    PM_IO_VIRTUAL_DIRS,
    s3_list_tree,
    s3_remove_batch,
};

int pm_fileio_s3_open(const char *uri, const char *const *options, pm_fileio **out, pm_err *e) {
    *out = NULL;
    const char *b, *key;
    size_t bl;
    if (split_uri(uri, &b, &bl, &key))
        return pm_fail(e, PAIMON_MISUSE, "%s: an S3 URI needs a bucket: s3://bucket/path", uri);
    char *bucket = pm_strndup(b, bl);
    if (!bucket) return pm_nomem(e);
    pm_s3_config cfg;
    int rc = pm_s3_config_load(&cfg, bucket, options, e);
    pm_s3 *s3 = NULL;
    if (rc == PAIMON_OK) {
        rc = pm_s3_new(&cfg, bucket, &s3, e);   /* takes cfg's strings */
        if (rc) pm_s3_config_free(&cfg);
    }
    free(bucket);
    if (rc) return rc;
    s3_io *io = calloc(1, sizeof *io);
    if (!io) { pm_s3_free(s3); return pm_nomem(e); }
    io->io.ops = &s3_ops;
    io->io.ctx = io;
    io->io.parallel_requests = pm_s3_cfg(s3)->max_connections;
    io->s3 = s3;
    *out = &io->io;
    return PAIMON_OK;
}
