/* Signed S3 requests through libcurl: AWS SigV4 by curl (CURLOPT_AWS_SIGV4)
 * with the x-amz-content-sha256 header curl does not add itself; a locked
 * pool of easy handles so each keeps its keep-alive connection between the
 * requests of the thread-pool workers; retries with exponential backoff and
 * full jitter for 5xx, SlowDown, RequestTimeout and dropped connections. */
#include "pm_s3.h"
#include "pm_s3_xml.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct pm_s3 {
    pm_s3_config cfg;
    char *bucket;
    char *base_url;              /* ".../bucket" (path style) or "scheme://bucket.host" */
    char *sigv4;                 /* "aws:amz:REGION:s3" */
    pthread_mutex_t lock;
    CURL **pool;                 /* cfg.max_connections idle handles at most */
    int pooled;
    int trace_fd;                /* PAIMON_S3_TRACE: one line per attempt; -1 off */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_rc;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1; }

int pm_s3_uri_encode(pm_buf *b, const char *s, int keep_slash) {
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
        if (plain ? pm_buf_putc(b, c) : pm_buf_printf(b, "%%%c%c", hex[c >> 4], hex[c & 15])) return PAIMON_NOMEM;
    }
    return PAIMON_OK;
}

int pm_s3_new(const pm_s3_config *c, const char *bucket, pm_s3 **out, pm_err *e) {
    *out = NULL;
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc) return pm_fail(e, PAIMON_IO, "s3://%s: libcurl could not be initialised", bucket);
    pm_s3 *s3 = calloc(1, sizeof *s3);
    if (!s3) return pm_nomem(e);
    s3->cfg = *c;
    s3->trace_fd = -1;
    s3->bucket = pm_strdup(bucket);
    pm_buf b = {0}, sv = {0};
    const char *sep = strstr(c->endpoint, "://");
    int bad = !s3->bucket || !sep;
    if (!bad) {
        if (c->path_style) bad = pm_buf_printf(&b, "%s/%s", c->endpoint, bucket) != 0;
        else bad = pm_buf_printf(&b, "%.*s://%s.%s", (int)(sep - c->endpoint), c->endpoint, bucket, sep + 3) != 0;
    }
    bad = bad || pm_buf_cstr(&b) || pm_buf_printf(&sv, "aws:amz:%s:s3", c->region) || pm_buf_cstr(&sv);
    s3->base_url = (char *)b.data;
    s3->sigv4 = (char *)sv.data;
    pthread_mutex_init(&s3->lock, NULL);
    bad = bad || !(s3->pool = calloc((size_t)(c->max_connections > 0 ? c->max_connections : 1), sizeof *s3->pool));
    if (bad) {
        memset(&s3->cfg, 0, sizeof s3->cfg);   /* the caller still owns c */
        pm_s3_free(s3);
        return pm_nomem(e);
    }
    const char *trace = getenv("PAIMON_S3_TRACE");
    if (trace && *trace) {
        s3->trace_fd = open(trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (s3->trace_fd < 0) {
            int err = errno;
            memset(&s3->cfg, 0, sizeof s3->cfg);
            pm_s3_free(s3);
            return pm_fail_errno(e, PAIMON_IO, err, "PAIMON_S3_TRACE=%s: cannot open the trace file", trace);
        }
    }
    *out = s3;
    return PAIMON_OK;
}

void pm_s3_free(pm_s3 *s3) {
    if (!s3) return;
    for (int i = 0; i < s3->pooled; i++) curl_easy_cleanup(s3->pool[i]);
    free(s3->pool);
    if (s3->trace_fd >= 0) close(s3->trace_fd);
    pthread_mutex_destroy(&s3->lock);
    pm_s3_config_free(&s3->cfg);
    free(s3->bucket);
    free(s3->base_url);
    free(s3->sigv4);
    free(s3);
}

const pm_s3_config *pm_s3_cfg(const pm_s3 *s3) { return &s3->cfg; }
const char *pm_s3_bucket(const pm_s3 *s3) { return s3->bucket; }

static CURL *handle_get(pm_s3 *s3) {
    CURL *h = NULL;
    pthread_mutex_lock(&s3->lock);
    if (s3->pooled) h = s3->pool[--s3->pooled];
    pthread_mutex_unlock(&s3->lock);
    return h ? h : curl_easy_init();
}

static void handle_put(pm_s3 *s3, CURL *h) {
    pthread_mutex_lock(&s3->lock);
    if (s3->pooled < s3->cfg.max_connections) { s3->pool[s3->pooled++] = h; h = NULL; }
    pthread_mutex_unlock(&s3->lock);
    if (h) curl_easy_cleanup(h);
}

/* Where a response body goes: b, from byte `from`, up to b->read_max for a
 * 2xx answer (checked on Content-Length before the first byte is kept). */
typedef struct body_sink { pm_buf *b; CURL *h; size_t from; int too_big; } body_sink;

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud) {
    body_sink *s = ud;
    size_t n = size * nmemb, max = s->b->read_max;
    if (max) {
        long status = 0;
        curl_off_t cl = -1;
        curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(s->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
        if (status >= 200 && status < 300 && ((cl >= 0 && (uint64_t)cl > max) || s->b->len - s->from + n > max)) {
            s->too_big = 1;
            return 0;   /* aborts the transfer */
        }
    }
    return pm_buf_append(s->b, p, n) ? 0 : n;
}

static size_t on_discard(char *p, size_t size, size_t nmemb, void *ud) {
    (void)p;
    (void)ud;
    return size * nmemb;
}

static void sha256_hex(const void *p, size_t n, char out[65]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int ml = 0;
    EVP_Digest(p, n, md, &ml, EVP_sha256(), NULL);
    for (unsigned i = 0; i < ml && i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
    out[64] = '\0';
}

/* "Code"/"Message" of an S3 <Error> body. */
typedef struct err_fields { char *code; size_t code_n; char *msg; size_t msg_n; } err_fields;

static int on_error_elem(void *ctx, int depth, const char *parent, const char *name, const char *text, size_t tl) {
    err_fields *f = ctx;
    (void)parent;
    if (depth != 2 || !text) return 0;
    if (strcmp(name, "Code") == 0) snprintf(f->code, f->code_n, "%.*s", (int)tl, text);
    else if (strcmp(name, "Message") == 0) snprintf(f->msg, f->msg_n, "%.*s", (int)tl, text);
    return 0;
}

static void parse_error_body(const pm_buf *body, size_t from, pm_s3_resp *resp) {
    if (!body || body->len <= from) return;
    err_fields f = {resp->s3_code, sizeof resp->s3_code, resp->s3_message, sizeof resp->s3_message};
    char root[64];
    pm_err ie;
    if (pm_xml_walk((const char *)body->data + from, body->len - from, on_error_elem, &f, root, "error", &ie) ||
        strcmp(root, "Error") != 0) {
        resp->s3_code[0] = resp->s3_message[0] = '\0';
        snprintf(resp->s3_message, sizeof resp->s3_message, "(the answer is not an S3 error document)");
    }
}

int pm_s3_retryable(const pm_s3_resp *resp) {
    if (resp->status == 0) return 1;   /* no answer: dropped, refused, timed out */
    if (resp->status >= 500) return 1;
    return resp->status == 400 && strcmp(resp->s3_code, "RequestTimeout") == 0;
}

void pm_s3_backoff(const pm_s3 *s3, int attempt) {
    long cap = s3->cfg.retry_base_ms << (attempt > 10 ? 10 : attempt - 1);
    if (cap > 10000) cap = 10000;
    /* full jitter from a per-call seed: retries of parallel workers spread out */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unsigned seed = (unsigned)now.tv_nsec ^ (unsigned)(uintptr_t)&now;
    long ms = cap / 2 + (long)(rand_r(&seed) % (unsigned)(cap / 2 + 1));
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&d, &d) != 0) {}
}

/* The request trace (PAIMON_S3_TRACE, docs/s3.md): "METHOD s3://bucket/key[?query]
 * STATUS ATTEMPT MS" per attempt, status 0 when no answer came. Only what the
 * URL holds: credentials travel in headers, which are never written. One
 * write(2) per line on an O_APPEND file: lines of parallel workers do not mix. */
static void trace_attempt(const pm_s3 *s3, const pm_s3_req *r, const pm_s3_resp *resp, double ms) {
    pm_buf line = {0};
    int bad = pm_buf_printf(&line, "%s s3://%s/", r->method, s3->bucket) || pm_s3_uri_encode(&line, r->key, 1) ||
              (r->query && pm_buf_printf(&line, "?%s", r->query)) ||
              pm_buf_printf(&line, " %ld %d %.3f\n", resp->status, resp->attempts, ms);
    if (!bad && write(s3->trace_fd, line.data, line.len) < 0) {}   /* a diagnostic: never fails the request */
    pm_buf_free(&line);
}

static double mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One attempt on handle h. */
static void attempt_once(pm_s3 *s3, CURL *h, const pm_s3_req *r, const char *url, pm_s3_resp *resp) {
    char sha[65];
    char hdr_sha[100], hdr_md5[64], hdr_tok[4096];
    struct curl_slist *hl = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    int is_head = strcmp(r->method, "HEAD") == 0;
    int has_body = strcmp(r->method, "PUT") == 0 || strcmp(r->method, "POST") == 0;

    curl_easy_reset(h);   /* keeps the live connections */
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, s3->cfg.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, s3->cfg.request_timeout_ms);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, s3->cfg.verify_tls ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, s3->cfg.verify_tls ? 2L : 0L);
    curl_easy_setopt(h, CURLOPT_FILETIME, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (s3->cfg.access_key) {
        curl_easy_setopt(h, CURLOPT_AWS_SIGV4, s3->sigv4);
        curl_easy_setopt(h, CURLOPT_USERNAME, s3->cfg.access_key);
        curl_easy_setopt(h, CURLOPT_PASSWORD, s3->cfg.secret_key);
    }
    if (is_head) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (has_body) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
        if (strcmp(r->method, "PUT") == 0) curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
        hl = curl_slist_append(hl, "Content-Type: application/octet-stream");
        /* No "Expect:" removal header here: curl signs it as an empty
         * header it then does not send, and the signature fails. */
    } else if (strcmp(r->method, "GET") != 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
    }
    sha256_hex(r->body ? r->body : "", r->body ? r->body_len : 0, sha);
    snprintf(hdr_sha, sizeof hdr_sha, "x-amz-content-sha256: %s", sha);
    hl = curl_slist_append(hl, hdr_sha);
    if (r->content_md5) {
        snprintf(hdr_md5, sizeof hdr_md5, "Content-MD5: %s", r->content_md5);
        hl = curl_slist_append(hl, hdr_md5);
    }
    if (s3->cfg.access_key && s3->cfg.session_token) {
        snprintf(hdr_tok, sizeof hdr_tok, "x-amz-security-token: %s", s3->cfg.session_token);
        hl = curl_slist_append(hl, hdr_tok);
    }
    if (r->extra_header) hl = curl_slist_append(hl, r->extra_header);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    size_t from = r->out ? r->out->len : 0;
    body_sink sink = {r->out, h, from, 0};
    if (r->out) {
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    } else {
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_discard);
    }

    CURLcode cc = curl_easy_perform(h);
    curl_slist_free_all(hl);
    memset(hdr_tok, 0, sizeof hdr_tok);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (cc == CURLE_OK || sink.too_big) {
        resp->status = status;
        resp->too_big = sink.too_big;
        curl_off_t cl = -1, ft = -1;
        curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
        curl_easy_getinfo(h, CURLINFO_FILETIME_T, &ft);
        resp->content_length = cl;
        resp->mtime_ms = ft > 0 ? (int64_t)ft * 1000 : 0;
        if (status >= 300) parse_error_body(r->out, from, resp);
    } else {
        resp->transport_error = (int)cc;
        /* Before the connection was made nothing reached the store. */
        resp->maybe_sent = !(cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
                             cc == CURLE_COULDNT_RESOLVE_PROXY);
        snprintf(resp->transport_msg, sizeof resp->transport_msg, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
    }
}

int pm_s3_request(pm_s3 *s3, const pm_s3_req *r, pm_s3_resp *resp, pm_err *e) {
    pm_buf url = {0};
    if (pm_buf_printf(&url, "%s/", s3->base_url) || pm_s3_uri_encode(&url, r->key, 1) ||
        (r->query && pm_buf_printf(&url, "?%s", r->query)) || pm_buf_cstr(&url)) {
        pm_buf_free(&url);
        return pm_nomem(e);
    }
    CURL *h = handle_get(s3);
    if (!h) { pm_buf_free(&url); return pm_nomem(e); }
    int attempts = r->max_attempts > 0 ? r->max_attempts : 1 + s3->cfg.max_retries;
    size_t from = r->out ? r->out->len : 0;
    int maybe_sent = 0;
    for (int i = 1;; i++) {
        memset(resp, 0, sizeof *resp);
        resp->content_length = -1;
        resp->attempts = i;
        if (r->out) r->out->len = from;
        double t0 = s3->trace_fd >= 0 ? mono_ms() : 0;
        attempt_once(s3, h, r, (const char *)url.data, resp);
        if (s3->trace_fd >= 0) trace_attempt(s3, r, resp, mono_ms() - t0);
        maybe_sent |= resp->maybe_sent;
        if (i >= attempts || !pm_s3_retryable(resp)) break;
        pm_s3_backoff(s3, i);
    }
    resp->maybe_sent = maybe_sent || resp->status != 0;
    handle_put(s3, h);
    pm_buf_free(&url);
    if (resp->status == 0) return pm_s3_fail(s3, e, PAIMON_IO, r->method, r->key, resp);
    return PAIMON_OK;
}

/* Replaces every occurrence of a secret in msg by "***". */
static void scrub_one(char *msg, size_t cap, const char *secret) {
    if (!secret || strlen(secret) < 4) return;
    size_t sl = strlen(secret);
    for (char *p; (p = strstr(msg, secret)) != NULL;) {
        size_t tail = strlen(p + sl);
        if (3 + tail + (size_t)(p - msg) + 1 > cap) tail = cap - (size_t)(p - msg) - 4;
        memmove(p + 3, p + sl, tail);
        p[3 + tail] = '\0';
        memcpy(p, "***", 3);
    }
}

void pm_s3_scrub(const pm_s3 *s3, pm_err *e) {
    scrub_one(e->msg, sizeof e->msg, s3->cfg.secret_key);
    scrub_one(e->msg, sizeof e->msg, s3->cfg.session_token);
    scrub_one(e->msg, sizeof e->msg, s3->cfg.access_key);
    scrub_one(e->msg, sizeof e->msg, s3->cfg.endpoint_userinfo);
}

/* What a status without an S3 error code most likely means. */
static const char *no_body_hint(const pm_s3 *s3, long status, char *hint, size_t cap) {
    if (status == 403)
        return "access denied: wrong or missing credentials, a clock far off, or no permission for this key";
    if (status == 301 || status == 307 || status == 308)
        return "redirected: the bucket is in another region (s3.region) or needs another endpoint";
    if (status == 404) return "not found: no such bucket, or the endpoint is not an S3 store";
    snprintf(hint, cap, "no S3 error in the answer: is %s an S3 endpoint?", s3->cfg.endpoint_shown);
    return hint;
}

int pm_s3_fail(pm_s3 *s3, pm_err *e, int code, const char *verb, const char *key, const pm_s3_resp *resp) {
    char hint[600];
    if (resp->status == 0)
        pm_fail(e, code, "s3://%s/%s: %s failed: no answer from %s after %d attempt(s): %s", s3->bucket, key, verb,
                s3->cfg.endpoint_shown, resp->attempts ? resp->attempts : 1, resp->transport_msg);
    else if (resp->s3_code[0])
        pm_fail(e, code, "s3://%s/%s: %s failed: HTTP %ld %s%s%s", s3->bucket, key, verb, resp->status,
                resp->s3_code, resp->s3_message[0] ? ": " : "", resp->s3_message);
    else   /* a HEAD has no error body; a server that is not S3 sends none either */
        pm_fail(e, code, "s3://%s/%s: %s failed: HTTP %ld (%s)", s3->bucket, key, verb, resp->status,
                no_body_hint(s3, resp->status, hint, sizeof hint));
    pm_s3_scrub(s3, e);
    return code;
}
