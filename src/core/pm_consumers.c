/* Consumers of a branch (Java ConsumerManager): list, reset, delete,
 * expire by consumer.expiration-time. */
#include "pm_consumers.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_meta.h"

void pm_consumer_infos_free(pm_consumer_info *v, size_t n) {
    for (size_t i = 0; v && i < n; i++) free(v[i].id);
    free(v);
}

void pm_consumer_expire_result_free(pm_consumer_expire_result *r) {
    if (!r) return;
    pm_consumer_infos_free(r->expired, r->n_expired);
    r->expired = NULL;
    r->n_expired = 0;
}

/* Java ConsumerManager.consumerPath; ids must be file names (pm_meta_name_check). */
static int consumer_path(const paimon_table *t, const char *id, pm_buf *out, pm_err *e) {
    int rc = pm_meta_name_check("consumer id", id, e);
    if (rc) return rc;
    out->len = 0;
    if (pm_buf_printf(out, "%s/consumer/consumer-%s", t->branch_root, id)) return pm_nomem(e);
    return PAIMON_OK;
}

static int cmp_info(const void *a, const void *b) {
    return strcmp(((const pm_consumer_info *)a)->id, ((const pm_consumer_info *)b)->id);
}

int pm_consumers_list(paimon_table *t, pm_consumer_info **out, size_t *n, pm_err *e) {
    *out = NULL;
    *n = 0;
    char **ids = NULL;
    size_t k = 0;
    int rc = pm_consumer_list(t->io, t->branch_root, &ids, &k, e);
    if (rc) return rc;
    pm_consumer_info *v = calloc(k ? k : 1, sizeof *v);
    size_t m = 0;
    pm_buf p = {0};
    if (!v) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < k; i++) {
        pm_consumer c;
        pm_stat st = {0};
        rc = pm_consumer_read(t->io, t->branch_root, ids[i], &c, e);
        if (!rc && !(rc = consumer_path(t, ids[i], &p, e))) rc = pm_io_stat(t->io, (char *)p.data, &st, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; continue; }   /* removed meanwhile */
        if (rc) break;
        v[m].id = ids[i];
        ids[i] = NULL;
        v[m].next_snapshot = c.next_snapshot;
        v[m].mtime_ms = st.mtime_ms;
        m++;
    }
    pm_buf_free(&p);
    pm_strv_free(ids, k);
    if (rc) { pm_consumer_infos_free(v, m); return rc; }
    qsort(v, m, sizeof *v, cmp_info);
    *out = v;
    *n = m;
    return PAIMON_OK;
}

int pm_consumer_to_json(int64_t next_snapshot, pm_buf *out) {
    out->len = 0;
    return pm_buf_printf(out, "{\n  \"nextSnapshot\" : %lld\n}", (long long)next_snapshot);
}

int pm_consumer_reset(paimon_table *t, const char *id, int64_t next_snapshot, pm_err *e) {
    if (next_snapshot < 1)
        return pm_fail(e, PAIMON_MISUSE, "consumer '%s': next snapshot must be at least 1, got %lld", id ? id : "",
                       (long long)next_snapshot);
    pm_buf p = {0}, json = {0};
    int rc = consumer_path(t, id, &p, e);
    if (!rc && pm_consumer_to_json(next_snapshot, &json)) rc = pm_nomem(e);
    if (!rc) {
        pm_buf dir = {0};
        if (pm_buf_printf(&dir, "%s/consumer", t->branch_root)) rc = pm_nomem(e);
        else rc = pm_io_mkdirs(t->io, (char *)dir.data, e);
        pm_buf_free(&dir);
    }
    if (!rc) rc = pm_io_write_atomic(t->io, (char *)p.data, json.data, json.len, e);
    pm_buf_free(&p);
    pm_buf_free(&json);
    return rc;
}

int pm_consumer_delete(paimon_table *t, const char *id, pm_err *e) {
    pm_buf p = {0};
    int rc = consumer_path(t, id, &p, e);
    int ex = 0;
    if (!rc) rc = pm_io_exists(t->io, (char *)p.data, &ex, e);
    if (!rc && !ex) rc = pm_fail(e, PAIMON_NOTFOUND, "consumer '%s' not found (%s)", id, (char *)p.data);
    if (!rc) rc = pm_io_remove(t->io, (char *)p.data, e);
    pm_buf_free(&p);
    return rc;
}

int pm_consumer_expiration(const paimon_table *t, int64_t *ms, int *has, pm_err *e) {
    const char *v = pm_schema_option(t->schema, "consumer.expiration-time");
    *has = v != NULL;
    *ms = 0;
    if (!v) return PAIMON_OK;
    int rc = pm_parse_duration_ms(v, ms, e);
    if (rc) pm_err_prefix(e, "%s: table option consumer.expiration-time", t->root);
    return rc;
}

int pm_consumers_expire(paimon_table *t, int64_t expiration_ms, int64_t now_ms, int dry_run,
                        pm_consumer_expire_result *r, pm_err *e) {
    memset(r, 0, sizeof *r);
    int rc;
    if (expiration_ms < 0) {
        int has;
        if ((rc = pm_consumer_expiration(t, &expiration_ms, &has, e))) return rc;
        if (!has)
            return pm_fail(e, PAIMON_MISUSE, "%s: consumer.expiration-time is not set; give an expiration", t->root);
    }
    r->cutoff_ms = (now_ms > 0 ? now_ms : pm_now_millis()) - expiration_ms;
    pm_consumer_info *v = NULL;
    size_t n = 0;
    if ((rc = pm_consumers_list(t, &v, &n, e))) return rc;
    r->expired = calloc(n ? n : 1, sizeof *r->expired);
    if (!r->expired) rc = pm_nomem(e);
    pm_buf p = {0};
    for (size_t i = 0; !rc && i < n; i++) {
        /* Java: expireDateTime.isAfter(modificationTime) */
        if (v[i].mtime_ms >= r->cutoff_ms) { r->kept++; continue; }
        if (!dry_run && !(rc = consumer_path(t, v[i].id, &p, e))) {
            rc = pm_io_remove(t->io, (char *)p.data, e);
            if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
        }
        if (rc) break;
        r->expired[r->n_expired++] = v[i];
        v[i].id = NULL;
    }
    pm_buf_free(&p);
    pm_consumer_infos_free(v, n);
    if (rc) pm_consumer_expire_result_free(r);
    return rc;
}

void pm_consumer_clear_result_free(pm_consumer_clear_result *r) {
    if (!r) return;
    pm_strv_free(r->cleared, r->n_cleared);
    r->cleared = NULL;
    r->n_cleared = 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int blank(const char *s) {
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f' && *s != '\v') return 0;
    return 1;
}

/* Java's Pattern.matcher(id).matches(): the whole id, so the pattern is
 * anchored as ^(...)$. */
static int compile_whole(const char *what, const char *pat, regex_t *re, pm_err *e) {
    pm_buf b = {0};
    if (pm_buf_printf(&b, "^(%s)$", pat) || pm_buf_cstr(&b)) { pm_buf_free(&b); return pm_nomem(e); }
    int rc = regcomp(re, (char *)b.data, REG_EXTENDED | REG_NOSUB);
    pm_buf_free(&b);
    if (rc) {
        char msg[256];
        regerror(rc, re, msg, sizeof msg);
        return pm_fail(e, PAIMON_MISUSE, "clear consumers: %s pattern '%s' is not a regular expression: %s", what, pat,
                       msg);
    }
    return PAIMON_OK;
}

int pm_consumers_clear(paimon_table *t, const char *include, const char *exclude, int dry_run,
                       pm_consumer_clear_result *r, pm_err *e) {
    memset(r, 0, sizeof *r);
    regex_t inc, exc;
    int has_inc = !blank(include), has_exc = !blank(exclude);
    int rc = has_inc ? compile_whole("including", include, &inc, e) : PAIMON_OK;
    if (rc) return rc;
    if (has_exc && (rc = compile_whole("excluding", exclude, &exc, e))) {
        if (has_inc) regfree(&inc);
        return rc;
    }
    char **ids = NULL;
    size_t k = 0;
    rc = pm_consumer_list(t->io, t->branch_root, &ids, &k, e);
    if (!rc && !(r->cleared = calloc(k ? k : 1, sizeof *r->cleared))) rc = pm_nomem(e);
    if (!rc) qsort(ids, k, sizeof *ids, cmp_str);
    pm_buf p = {0};
    for (size_t i = 0; !rc && i < k; i++) {
        int clear = !has_inc || regexec(&inc, ids[i], 0, NULL, 0) == 0;
        if (clear && has_exc) clear = regexec(&exc, ids[i], 0, NULL, 0) != 0;
        if (!clear) { r->kept++; continue; }
        if (!dry_run && !(rc = consumer_path(t, ids[i], &p, e))) {
            rc = pm_io_remove(t->io, (char *)p.data, e);
            if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }   /* Java: deleteQuietly */
        }
        if (rc) break;
        r->cleared[r->n_cleared++] = ids[i];
        ids[i] = NULL;
    }
    pm_buf_free(&p);
    pm_strv_free(ids, k);
    if (has_inc) regfree(&inc);
    if (has_exc) regfree(&exc);
    if (rc) pm_consumer_clear_result_free(r);
    return rc;
}
