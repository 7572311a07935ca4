/* S3 configuration, resolved field by field in the order the ecosystem
 * expects: table/caller options (Paimon's `s3.*` names and the Hadoop
 * `fs.s3a.*` names Paimon mirrors them to), then the AWS environment
 * variables, then the AWS shared files (~/.aws/credentials, ~/.aws/config;
 * AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE and AWS_PROFILE honoured).
 * Option names: Paimon's prefixes "s3.", "s3a." and "fs.s3a." all map to
 * Hadoop S3A's names (as Paimon's S3 FileIO does), with the dash/dot
 * spellings Paimon mirrors (access-key = access.key, ...).
 * Credentials are taken as a set (key id, secret and token from one
 * source). */
#include "pm_s3.h"
#include "pm_meta.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The option named by one of `names` (suffixes, in preference order) under
 * any of the prefixes Paimon maps to Hadoop's S3A: "s3.", "s3a.", "fs.s3a.". */
static const char *opt_get(const char *const *options, const char *const *names) {
    static const char *const prefixes[] = {"s3.", "s3a.", "fs.s3a."};
    if (!options) return NULL;
    for (const char *const *n = names; *n; n++)
        for (const char *const *o = options; o[0] && o[1]; o += 2)
            for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
                size_t pl = strlen(prefixes[i]);
                if (strncmp(o[0], prefixes[i], pl) == 0 && strcmp(o[0] + pl, *n) == 0) return o[1];
            }
    return NULL;
}

static const char *env_get(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Reads `key` of section `section` from an INI file; malloc'd or NULL. */
static char *ini_get(const char *file, const char *section, const char *key) {
    FILE *f = file ? fopen(file, "r") : NULL;
    if (!f) return NULL;
    char line[4096];
    int in = 0;
    char *val = NULL;
    while (!val && fgets(line, sizeof line, f)) {
        char *s = trim(line);
        if (*s == '#' || *s == ';' || !*s) continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close) { in = 0; continue; }
            *close = '\0';
            in = strcmp(trim(s + 1), section) == 0;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!in || !eq) continue;
        *eq = '\0';
        if (strcmp(trim(s), key) == 0) val = pm_strdup(trim(eq + 1));
    }
    fclose(f);
    return val;
}

/* 1 if the INI file has section `section`. */
static int ini_has_section(const char *file, const char *section) {
    FILE *f = file ? fopen(file, "r") : NULL;
    if (!f) return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *s = trim(line), *close;
        if (*s == '[' && (close = strchr(s, ']')) != NULL) {
            *close = '\0';
            found = strcmp(trim(s + 1), section) == 0;
        }
    }
    fclose(f);
    return found;
}

static char *home_file(const char *env, const char *rel) {
    const char *v = env_get(env);
    if (v) return pm_strdup(v);
    const char *home = env_get("HOME");
    return home ? pm_path_join(home, rel) : NULL;
}

typedef struct profile_files {
    char *creds, *config;
    const char *name;
    char section[300];   /* "profile x" in config, "default" stays "default" */
} profile_files;

/* A profile value: the credentials file first, then the config file. */
static char *profile_get(const profile_files *p, const char *key, int creds_first) {
    char *v = creds_first ? ini_get(p->creds, p->name, key) : NULL;
    if (!v) v = ini_get(p->config, p->section, key);
    return v;
}

static int dup_into(char **dst, const char *v) {
    if (!v) return 0;
    *dst = pm_strdup(v);
    return *dst ? 0 : -1;
}

static int parse_bool(const char *v, int *out) {
    if (strcmp(v, "true") == 0 || strcmp(v, "TRUE") == 0 || strcmp(v, "True") == 0) { *out = 1; return 0; }
    if (strcmp(v, "false") == 0 || strcmp(v, "FALSE") == 0 || strcmp(v, "False") == 0) { *out = 0; return 0; }
    return -1;
}

/* A duration option (Paimon syntax "30 s", "500 ms"; a bare number is ms). */
static int opt_duration(const char *const *options, const char *const *names, long *out, pm_err *e) {
    const char *v = opt_get(options, names);
    if (!v) return PAIMON_OK;
    int64_t ms = 0;
    if (pm_parse_duration_ms(v, &ms, e) || ms <= 0 || ms > 86400000)
        return pm_fail(e, PAIMON_MISUSE, "option s3.%s: '%s' is not a duration between 1 ms and 1 day", names[0], v);
    *out = (long)ms;
    return PAIMON_OK;
}

/* An endpoint as given ("host:port", "http://host/") -> "scheme://host[:port]". */
static char *normalize_endpoint(const char *v) {
    pm_buf b = {0};
    if (!strstr(v, "://") && pm_buf_printf(&b, "https://")) return NULL;
    if (pm_buf_append(&b, v, strlen(v)) || pm_buf_cstr(&b)) { pm_buf_free(&b); return NULL; }
    char *s = (char *)b.data;
    size_t n = strlen(s);
    while (n && s[n - 1] == '/') s[--n] = '\0';
    return s;
}

/* An endpoint given as "scheme://user:password@host" keeps its
 * credentials out of every message: *shown is it with "***@" for them,
 * *userinfo the "user:password" (NULL when there is none). */
static int endpoint_redact(const char *ep, char **shown, char **userinfo) {
    const char *h = strstr(ep, "://");
    h = h ? h + 3 : ep;
    size_t auth = strcspn(h, "/?#");
    const char *at = NULL;
    for (const char *q = h; q < h + auth; q++)
        if (*q == '@') at = q;
    *userinfo = NULL;
    if (!at) return (*shown = pm_strdup(ep)) ? 0 : -1;
    pm_buf b = {0};
    if (pm_buf_append(&b, ep, (size_t)(h - ep)) || pm_buf_printf(&b, "***%s", at) || pm_buf_cstr(&b) ||
        !(*userinfo = pm_strndup(h, (size_t)(at - h)))) {
        pm_buf_free(&b);
        return -1;
    }
    *shown = (char *)b.data;
    return 0;
}

/* The host of "scheme://host[:port]" is an IP address or localhost. */
static int endpoint_is_ip_or_localhost(const char *ep) {
    const char *h = strstr(ep, "://");
    h = h ? h + 3 : ep;
    if (*h == '[') return 1;   /* IPv6 literal */
    size_t hl = strcspn(h, ":/");
    if (hl == 9 && strncmp(h, "localhost", 9) == 0) return 1;
    for (size_t i = 0; i < hl; i++)
        if (!isdigit((unsigned char)h[i]) && h[i] != '.') return 0;
    return hl > 0;
}

/* option names after the prefix; messages show them as "s3." + the first */
static const char *const N_ENDPOINT[] = {"endpoint", NULL};
static const char *const N_REGION[] = {"region", "endpoint.region", NULL};
static const char *const N_AK[] = {"access-key", "access.key", NULL};
static const char *const N_SK[] = {"secret-key", "secret.key", NULL};
static const char *const N_TOKEN[] = {"session.token", "session-token", NULL};
static const char *const N_PATH[] = {"path.style.access", "path-style-access", NULL};
static const char *const N_SSL[] = {"connection.ssl.enabled", "ssl.enabled", NULL};
static const char *const N_VERIFY[] = {"ssl.verify", NULL};
static const char *const N_CTO[] = {"connect-timeout", "connection.establish.timeout", NULL};
static const char *const N_RTO[] = {"request-timeout", "connection.request.timeout", NULL};
static const char *const N_RETRIES[] = {"max-retries", "attempts.maximum", NULL};
static const char *const N_RBASE[] = {"retry-base", NULL};
static const char *const N_CONNS[] = {"max-connections", "connection.maximum", NULL};

static const char *const *const ALL_NAMES[] = {N_ENDPOINT, N_REGION, N_AK, N_SK, N_TOKEN, N_PATH, N_SSL,
                                              N_VERIFY, N_CTO, N_RTO, N_RETRIES, N_RBASE, N_CONNS};

int pm_s3_option_known(const char *key) {
    static const char *const prefixes[] = {"s3.", "s3a.", "fs.s3a."};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t pl = strlen(prefixes[i]);
        if (strncmp(key, prefixes[i], pl)) continue;
        for (size_t k = 0; k < sizeof ALL_NAMES / sizeof ALL_NAMES[0]; k++)
            for (const char *const *n = ALL_NAMES[k]; *n; n++)
                if (!strcmp(key + pl, *n)) return 1;
    }
    return 0;
}

void pm_s3_option_names(char *out, size_t cap) {
    out[0] = '\0';
    for (size_t k = 0; k < sizeof ALL_NAMES / sizeof ALL_NAMES[0]; k++)
        snprintf(out + strlen(out), cap - strlen(out), "%ss3.%s", k ? ", " : "", ALL_NAMES[k][0]);
}

static int load_credentials(pm_s3_config *c, const char *const *options, const profile_files *p) {
    const char *ak = opt_get(options, N_AK), *sk = opt_get(options, N_SK);
    if (ak || sk) {
        if (dup_into(&c->access_key, ak) || dup_into(&c->secret_key, sk) ||
            dup_into(&c->session_token, opt_get(options, N_TOKEN)))
            return -1;
        return 0;
    }
    if (env_get("AWS_ACCESS_KEY_ID")) {
        if (dup_into(&c->access_key, env_get("AWS_ACCESS_KEY_ID")) ||
            dup_into(&c->secret_key, env_get("AWS_SECRET_ACCESS_KEY")) ||
            dup_into(&c->session_token, env_get("AWS_SESSION_TOKEN")))
            return -1;
        return 0;
    }
    c->access_key = profile_get(p, "aws_access_key_id", 1);
    if (c->access_key) {
        c->secret_key = profile_get(p, "aws_secret_access_key", 1);
        c->session_token = profile_get(p, "aws_session_token", 1);
    }
    return 0;
}

/* A profile that gets its credentials some other way than static keys:
 * the first such key it has (never silently unsigned requests then). */
static const char *profile_indirect_source(const profile_files *p) {
    static const char *const keys[] = {"role_arn", "credential_process", "web_identity_token_file", "sso_session",
                                       "sso_start_url", "sso_account_id", "sso_role_name", "credential_source"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *v = profile_get(p, keys[i], 1);
        free(v);
        if (v) return keys[i];
    }
    return NULL;
}

/* The files as the message shows them: ~ for $HOME. */
static void shown_file(const char *file, char *out, size_t n) {
    const char *home = env_get("HOME");
    size_t hl = home ? strlen(home) : 0;
    if (!file) snprintf(out, n, "(none: HOME is not set)");
    else if (hl && strncmp(file, home, hl) == 0 && file[hl] == '/') snprintf(out, n, "~%s", file + hl);
    else snprintf(out, n, "%s", file);
}

int pm_s3_config_load(pm_s3_config *c, const char *bucket, const char *const *options, pm_err *e) {
    memset(c, 0, sizeof *c);
    c->verify_tls = 1;
    c->connect_timeout_ms = 10000;
    c->request_timeout_ms = 120000;
    c->max_retries = 4;
    c->retry_base_ms = 100;
    c->max_connections = PM_S3_MAX_CONNECTIONS_DEFAULT;
    profile_files p = {0};
    p.creds = home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
    p.config = home_file("AWS_CONFIG_FILE", ".aws/config");
    /* AWS_PROFILE, then AWS_DEFAULT_PROFILE (the AWS CLI's order) */
    const char *named = env_get("AWS_PROFILE") ? env_get("AWS_PROFILE") : env_get("AWS_DEFAULT_PROFILE");
    p.name = named ? named : "default";
    snprintf(p.section, sizeof p.section, strcmp(p.name, "default") == 0 ? "%s" : "profile %s", p.name);
    int rc = PAIMON_OK;
    char fa[300], fb[300];
    shown_file(p.config, fa, sizeof fa);
    shown_file(p.creds, fb, sizeof fb);
    /* a profile asked for by name must exist, as the AWS CLI says: a typo
     * is not an anonymous request answered by "access denied" */
    if (named && strcmp(named, "default") != 0 && !ini_has_section(p.config, p.section) && !ini_has_section(p.creds, p.name) &&
        !(strcmp(p.name, "default") != 0 && ini_has_section(p.config, p.name))) {
        rc = pm_fail(e, PAIMON_MISUSE, "s3://%s: profile %s not found in %s or %s (AWS_PROFILE)", bucket, p.name, fa, fb);
        goto done;
    }
    if (load_credentials(c, options, &p)) { rc = pm_nomem(e); goto done; }
    const char *indirect;
    if (!c->access_key && (indirect = profile_indirect_source(&p)) != NULL) {
        rc = pm_fail(e, PAIMON_UNSUPPORTED,
                     "s3://%s: profile %s gets its credentials through %s, which paimon-lua does not support yet: "
                     "export AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (e.g. from "
                     "`aws configure export-credentials --profile %s --format env`)", bucket, p.name, indirect, p.name);
        goto done;
    }
    if (c->access_key && !c->secret_key) {
        rc = pm_fail(e, PAIMON_MISUSE, "s3://%s: an access key is configured without its secret key", bucket);
        goto done;
    }
    const char *v = opt_get(options, N_REGION);
    if (!v) v = env_get("AWS_REGION");
    if (!v) v = env_get("AWS_DEFAULT_REGION");
    if (v) c->region = pm_strdup(v);
    else c->region = profile_get(&p, "region", 0);
    if (!c->region) c->region = pm_strdup("us-east-1");

    v = opt_get(options, N_ENDPOINT);
    if (!v) v = env_get("AWS_ENDPOINT_URL_S3");
    if (!v) v = env_get("AWS_ENDPOINT_URL");
    char *pe = v ? NULL : profile_get(&p, "endpoint_url", 0);
    if (pe) v = pe;
    if (v) {
        c->endpoint = normalize_endpoint(v);
        const char *ssl = opt_get(options, N_SSL);
        int ssl_on = 1;
        if (ssl && parse_bool(ssl, &ssl_on) == 0 && !ssl_on && c->endpoint && strncmp(c->endpoint, "https://", 8) == 0 &&
            !strstr(v, "://")) {
            /* a bare host with SSL disabled (Hadoop's fs.s3a.connection.ssl.enabled=false) */
            char *plain = NULL;
            pm_buf b = {0};
            if (pm_buf_printf(&b, "http://%s", c->endpoint + 8) == 0 && pm_buf_cstr(&b) == 0) plain = (char *)b.data;
            free(c->endpoint);
            c->endpoint = plain;
        }
    } else {
        pm_buf b = {0};
        if (pm_buf_printf(&b, "https://s3.%s.amazonaws.com", c->region) == 0 && pm_buf_cstr(&b) == 0)
            c->endpoint = (char *)b.data;
    }
    free(pe);
    if (!c->region || !c->endpoint || endpoint_redact(c->endpoint, &c->endpoint_shown, &c->endpoint_userinfo)) {
        rc = pm_nomem(e);
        goto done;
    }

    /* Path style when asked for, for an IP/localhost endpoint (no DNS names
     * per bucket there) and for bucket names with a dot (they break the
     * TLS certificate of a virtual host). */
    c->path_style = endpoint_is_ip_or_localhost(c->endpoint) || strchr(bucket, '.') != NULL;
    if ((v = opt_get(options, N_PATH)) != NULL) {
        int ps;
        if (parse_bool(v, &ps)) {
            rc = pm_fail(e, PAIMON_MISUSE, "option s3.%s: '%s' is not true or false", N_PATH[0], v);
            goto done;
        }
        if (ps) c->path_style = 1;
    }
    if ((v = opt_get(options, N_VERIFY)) != NULL && parse_bool(v, &c->verify_tls)) {
        rc = pm_fail(e, PAIMON_MISUSE, "option s3.%s: '%s' is not true or false", N_VERIFY[0], v);
        goto done;
    }
    if ((rc = opt_duration(options, N_CTO, &c->connect_timeout_ms, e)) ||
        (rc = opt_duration(options, N_RTO, &c->request_timeout_ms, e)) ||
        (rc = opt_duration(options, N_RBASE, &c->retry_base_ms, e)))
        goto done;
    if ((v = opt_get(options, N_RETRIES)) != NULL) {
        int64_t r;
        if (pm_decimal_int64(v, &r) || r < 0 || r > 20) {
            rc = pm_fail(e, PAIMON_MISUSE, "option s3.%s: '%s' is not a number of retries from 0 to 20", N_RETRIES[0], v);
            goto done;
        }
        c->max_retries = (int)r;
    }
    if ((v = opt_get(options, N_CONNS)) != NULL) {
        int64_t n;
        if (pm_decimal_int64(v, &n) || n < 1 || n > 256) {
            rc = pm_fail(e, PAIMON_MISUSE, "option s3.%s: '%s' is not a number of connections from 1 to 256",
                         N_CONNS[0], v);
            goto done;
        }
        c->max_connections = (int)n;
    }
done:
    free(p.creds);
    free(p.config);
    if (rc) pm_s3_config_free(c);
    return rc;
}

void pm_s3_config_free(pm_s3_config *c) {
    free(c->endpoint);
    free(c->endpoint_shown);
    free(c->endpoint_userinfo);
    free(c->region);
    free(c->access_key);
    free(c->secret_key);
    free(c->session_token);
    memset(c, 0, sizeof *c);
}
