/* S3 helpers for C tests (include after test.h): the throwaway Ceph RGW of
 * scripts/s3-server.sh, configured from the env make test exports, and
 * put/get/ls through rclone (an independent client; configured by
 * RCLONE_CONFIG_PMS3_* only, keys taken from the env by the shell, never
 * on a command line). docs/testing-s3.md. Paths must not hold a quote. */
#ifndef PM_TEST_S3_UTIL_H
#define PM_TEST_S3_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct tu_s3 {
    const char *endpoint, *bucket, *access_key, *secret_key, *region;
} tu_s3;

/* 1 when a developer switched the S3 tests off (PAIMON_S3_TESTS=0). */
static inline int tu_s3_off(void) {
    const char *v = getenv("PAIMON_S3_TESTS");
    return v && !strcmp(v, "0");
}

/* The test server's settings from the env: 0, or -1 after naming the
 * missing variable on stderr. */
static inline int tu_s3_config(tu_s3 *c) {
    static const char *const names[] = {"AWS_ENDPOINT_URL", "PAIMON_S3_BUCKET", "AWS_ACCESS_KEY_ID",
                                        "AWS_SECRET_ACCESS_KEY"};
    const char *vals[4];
    for (int i = 0; i < 4; i++) {
        vals[i] = getenv(names[i]);
        if (!vals[i] || !*vals[i]) {
            fprintf(stderr, "  no S3 test server: %s not set (make test starts one; by hand: "
                            "sh scripts/s3-server.sh start DIR && . DIR/env)\n", names[i]);
            return -1;
        }
    }
    c->endpoint = vals[0];
    c->bucket = vals[1];
    c->access_key = vals[2];
    c->secret_key = vals[3];
    c->region = getenv("AWS_REGION") && *getenv("AWS_REGION") ? getenv("AWS_REGION") : "us-east-1";
    return 0;
}

/* `rclone ARGS` against the test server: its stdout (malloc'd) or NULL
 * (rclone's stderr went to ours). */
static inline char *tu_rclone(const char *args) {
    tu_s3 c;
    if (tu_s3_config(&c)) return NULL;
    pm_buf cmd = {0};
    pm_buf_printf(&cmd, "env -u AWS_CA_BUNDLE -u AWS_PROFILE RCLONE_CONFIG_PMS3_TYPE=s3 "
                        "RCLONE_CONFIG_PMS3_PROVIDER=Ceph RCLONE_CONFIG_PMS3_ACCESS_KEY_ID=\"$AWS_ACCESS_KEY_ID\" "
                        "RCLONE_CONFIG_PMS3_SECRET_ACCESS_KEY=\"$AWS_SECRET_ACCESS_KEY\" "
                        "RCLONE_CONFIG_PMS3_ENDPOINT='%s' RCLONE_CONFIG_PMS3_REGION='%s' "
                        "RCLONE_CONFIG_PMS3_NO_CHECK_BUCKET=true timeout 300 rclone --config /dev/null --retries 1 --low-level-retries 2 --contimeout 5s --timeout 60s %s",
                  c.endpoint, c.region, args);
    pm_buf_cstr(&cmd);
    int status = -1;
    char *out = tu_sh_out((const char *)cmd.data, &status);
    if (out && status != 0) {
        fprintf(stderr, "  rclone %s: exit %d\n", args, status);
        free(out);
        out = NULL;
    }
    pm_buf_free(&cmd);
    return out;
}

/* PUTs the empty directory marker object "<key>/" of uri (s3://bucket/key),
 * as Hadoop's S3A writes for an empty directory (rclone writes none), with
 * curl's SigV4: 0, or -1. */
static inline int tu_s3_put_marker(const char *uri) {
    tu_s3 c;
    if (tu_s3_config(&c) || strncmp(uri, "s3://", 5)) return -1;
    pm_buf cmd = {0};
    pm_buf_printf(&cmd, "curl -sS -f --aws-sigv4 'aws:amz:%s:s3' --user \"$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY\" "
                        "-X PUT -H 'x-amz-content-sha256: "
                        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' --data-binary '' '%s/%s/'",
                  c.region, c.endpoint, uri + 5);
    pm_buf_cstr(&cmd);
    int rc = tu_sh((const char *)cmd.data);
    pm_buf_free(&cmd);
    return rc ? -1 : 0;
}

/* "s3://bucket/prefix" -> "pms3:bucket/prefix" in out: 0, or -1. */
static inline int tu_s3_remote(const char *uri, char *out, size_t n) {
    const char *rest = !strncmp(uri, "s3://", 5) ? uri + 5 : !strncmp(uri, "s3a://", 6) ? uri + 6 : NULL;
    if (!rest || !*rest || strchr(rest, '\'')) return -1;
    return snprintf(out, n, "pms3:%s", rest) < (int)n ? 0 : -1;
}

/* Uploads local_dir to a fresh prefix of the test bucket; returns its URI
 * "s3://bucket/ctest-<random>/<directory name>" (malloc'd) or NULL. */
static inline char *tu_s3_put_table(const char *local_dir) {
    tu_s3 c;
    if (tu_s3_config(&c)) return NULL;
    const char *name = strrchr(local_dir, '/');
    name = name ? name + 1 : local_dir;
    char id[37];
    pm_uuid4(id);
    char uri[600], remote[620], args[1400];
    snprintf(uri, sizeof uri, "s3://%s/ctest-%s/%s", c.bucket, id, name);
    if (tu_s3_remote(uri, remote, sizeof remote)) return NULL;
    snprintf(args, sizeof args, "copy '%s' '%s'", local_dir, remote);
    char *out = tu_rclone(args);
    if (!out) return NULL;
    free(out);
    return pm_strdup(uri);
}

/* Downloads every object under the URI into local_dir: 0, or -1. */
static inline int tu_s3_get_table(const char *uri, const char *local_dir) {
    char remote[620], args[1400];
    if (tu_s3_remote(uri, remote, sizeof remote)) return -1;
    snprintf(args, sizeof args, "copy '%s' '%s'", remote, local_dir);
    char *out = tu_rclone(args);
    free(out);
    return out ? 0 : -1;
}

static inline int tu_s3_cmp_path(const void *a, const void *b) {
    const char *x = strchr(*(const char *const *)a, ' '), *y = strchr(*(const char *const *)b, ' ');
    return strcmp(x ? x : "", y ? y : "");
}

/* "size path" lines (path below the URI's prefix) of every object under the
 * URI, sorted by path (malloc'd), or NULL. */
static inline char *tu_s3_ls(const char *uri) {
    char remote[620], args[1400];
    if (tu_s3_remote(uri, remote, sizeof remote)) return NULL;
    snprintf(args, sizeof args, "lsf -R --files-only --format sp --separator ' ' '%s'", remote);
    char *out = tu_rclone(args);
    if (!out) return NULL;
    size_t n = 0, cap = 0;
    char **lines = NULL;
    for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(lines, cap * sizeof *lines);
            if (!grown) { free(lines); free(out); return NULL; }
            lines = grown;
        }
        lines[n++] = l;
    }
    if (n) qsort(lines, n, sizeof *lines, tu_s3_cmp_path);
    pm_buf sorted = {0};
    for (size_t i = 0; i < n; i++) pm_buf_printf(&sorted, "%s\n", lines[i]);
    pm_buf_cstr(&sorted);
    free(lines);
    free(out);
    return sorted.data ? (char *)sorted.data : pm_strdup("");
}
#endif
