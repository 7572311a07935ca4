/* Internals of the S3 FileIO: configuration (pm_s3_config.c), signed HTTP
 * requests with retries over pooled keep-alive curl handles (pm_s3_http.c);
 * the FileIO ops are in pm_fileio_s3.c, the XML reader in pm_s3_xml.c. */
#ifndef PM_S3_H
#define PM_S3_H

#include "pm_common.h"

/* s3.max-connections by default: reads of many small metadata files wait
 * on round trips, not on a CPU, so more run at once than there are
 * threads (measured in bench/RESULTS.md, "Object store"). */
#define PM_S3_MAX_CONNECTIONS_DEFAULT 32

typedef struct pm_s3_config {
    char *endpoint;        /* "http(s)://host[:port]", no trailing '/' */
    char *endpoint_shown;  /* the endpoint for messages: any "user:password@" in it as "***@" */
    char *endpoint_userinfo;   /* that "user:password" (scrubbed from messages), or NULL */
    char *region;
    char *access_key, *secret_key, *session_token;   /* NULL: anonymous */
    int path_style;        /* 1: endpoint/bucket/key; 0: bucket.host/key */
    int verify_tls;
    long connect_timeout_ms, request_timeout_ms;
    int max_retries;       /* retries after the first attempt */
    int max_connections;   /* requests at once, each with its kept-alive connection */
    long retry_base_ms;
} pm_s3_config;

/* Resolves the configuration: options (Paimon's and Hadoop's s3 names),
 * then the AWS environment variables, then ~/.aws profiles. */
int pm_s3_config_load(pm_s3_config *c, const char *bucket, const char *const *options, pm_err *e);
void pm_s3_config_free(pm_s3_config *c);
/* Whether `key` is an option the S3 FileIO reads (any of the prefixes
 * s3., s3a., fs.s3a. and any spelling Paimon mirrors); the names for
 * messages ("s3.endpoint, s3.region, ..."). */
int pm_s3_option_known(const char *key);
void pm_s3_option_names(char *out, size_t cap);

typedef struct pm_s3 pm_s3;

typedef struct pm_s3_req {
    const char *method;              /* GET HEAD PUT POST DELETE */
    const char *key;                 /* object key, not encoded; "" for the bucket */
    const char *query;               /* sorted and encoded ("a=1&b=2"), or NULL */
    const void *body;
    size_t body_len;
    const char *extra_header;        /* one "Name: value" or NULL */
    const char *content_md5;         /* base64, or NULL */
    int max_attempts;                /* 0: 1 + max_retries; 1: no retry */
    pm_buf *out;                     /* response body; appended, reset per attempt; a 2xx body
                                        over out->read_max (Content-Length, else the bytes as
                                        they come) is not read: resp->too_big */
} pm_s3_req;

typedef struct pm_s3_resp {
    long status;                     /* 0 when no HTTP answer came */
    int transport_error;             /* a CURLcode, 0 when an answer came */
    int maybe_sent;                  /* the request may have reached the store */
    int attempts;                    /* attempts made */
    int64_t content_length;          /* -1 unknown */
    int too_big;                     /* the body was over r->out->read_max: not read, not retried */
    int64_t mtime_ms;                /* Last-Modified, 0 unknown */
    char transport_msg[256];
    char s3_code[64];                /* from the XML error body */
    char s3_message[256];
} pm_s3_resp;

int pm_s3_new(const pm_s3_config *c, const char *bucket, pm_s3 **out, pm_err *e);
void pm_s3_free(pm_s3 *s3);
const pm_s3_config *pm_s3_cfg(const pm_s3 *s3);
const char *pm_s3_bucket(const pm_s3 *s3);

/* Sends the request (retrying 5xx, SlowDown, RequestTimeout and dropped
 * connections with backoff up to max_attempts). PAIMON_OK when an HTTP answer
 * came (any status; check resp->status), PAIMON_IO (with *e naming the key)
 * when none came. */
int pm_s3_request(pm_s3 *s3, const pm_s3_req *r, pm_s3_resp *resp, pm_err *e);

/* Fills *e with "s3://bucket/key: VERB failed: HTTP 403 Code: message"
 * (credentials scrubbed) and returns code. */
int pm_s3_fail(pm_s3 *s3, pm_err *e, int code, const char *verb, const char *key, const pm_s3_resp *resp);
/* Replaces any credential in e->msg with "***". */
void pm_s3_scrub(const pm_s3 *s3, pm_err *e);

/* Appends s percent-encoded (RFC 3986 unreserved kept; '/' kept if keep_slash). */
int pm_s3_uri_encode(pm_buf *b, const char *s, int keep_slash);
/* Whether a status/code is worth retrying. */
int pm_s3_retryable(const pm_s3_resp *resp);
/* Sleeps the backoff for retry number `attempt` (1-based), with jitter. */
void pm_s3_backoff(const pm_s3 *s3, int attempt);

#endif
