/* Snapshot / tag / changelog, schema and consumer JSON (parse with pm_json,
 * serialize exactly like Java's Jackson default pretty printer), option
 * defaults from CoreOptions, and Paimon's duration / memory-size syntax. */
#include "pm_meta.h"

#include "pm_json.h"
#include "pm_set.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * Jackson DefaultPrettyPrinter emulation
 *
 * Objects: "{", then per field "\n" + 2*depth spaces + "\"k\" : " + value,
 * fields separated by ","; end "\n" + 2*(depth-1) spaces + "}"; empty "{ }".
 * Arrays are inline and do not indent: "[ a, b ]", empty "[ ]"; an object
 * inside an array indents by its object depth, giving "[ {" ... "}, {" ...
 * "} ]". Only objects count towards the depth. No trailing newline.
 * ====================================================================== */

#define JW_MAX_DEPTH 128

typedef struct jw {
    pm_buf *b;
    int err;
    int n;                       /* frames */
    char kind[JW_MAX_DEPTH];     /* 'o' or 'a' */
    int cnt[JW_MAX_DEPTH];
    int objdepth;
} jw;

static void jw_raw(jw *w, const char *s, size_t n) {
    if (!w->err && pm_buf_append(w->b, s, n)) w->err = PAIMON_NOMEM;
}

static void jw_cstr(jw *w, const char *s) { jw_raw(w, s, strlen(s)); }

static void jw_indent(jw *w, int depth) {
    static const char sp[] = "                                ";
    size_t n = (size_t)depth * 2;
    jw_raw(w, "\n", 1);
    while (n > 0) {
        size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
        jw_raw(w, sp, k);
        n -= k;
    }
}

/* JSON string with Jackson's escaping: \" \\ \b \t \f \n \r, other control
 * characters as \u00XX (upper-case hex); everything else raw (UTF-8). */
static void jw_quoted(jw *w, const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    jw_raw(w, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        jw_raw(w, s + run, i - run);
        run = i + 1;
        char esc[7];
        switch (c) {
        case '"': jw_raw(w, "\\\"", 2); break;
        case '\\': jw_raw(w, "\\\\", 2); break;
        case '\b': jw_raw(w, "\\b", 2); break;
        case '\t': jw_raw(w, "\\t", 2); break;
        case '\f': jw_raw(w, "\\f", 2); break;
        case '\n': jw_raw(w, "\\n", 2); break;
        case '\r': jw_raw(w, "\\r", 2); break;
        default:
            esc[0] = '\\'; esc[1] = 'u'; esc[2] = '0'; esc[3] = '0';
            esc[4] = hex[c >> 4]; esc[5] = hex[c & 15]; esc[6] = 0;
            jw_raw(w, esc, 6);
        }
    }
    jw_raw(w, s + run, n - run);
    jw_raw(w, "\"", 1);
}

static void jw_push(jw *w, char kind) {
    if (w->n >= JW_MAX_DEPTH) { w->err = PAIMON_ERROR; return; }
    w->kind[w->n] = kind;
    w->cnt[w->n] = 0;
    w->n++;
}

/* Separator before a value: only inside arrays (keys handle objects). */
static void jw_value_prefix(jw *w) {
    if (w->n > 0 && w->kind[w->n - 1] == 'a') {
        jw_raw(w, w->cnt[w->n - 1] ? ", " : " ", w->cnt[w->n - 1] ? 2 : 1);
        w->cnt[w->n - 1]++;
    }
}

static void jw_key(jw *w, const char *k) {
    if (w->n == 0) { w->err = PAIMON_ERROR; return; }
    if (w->cnt[w->n - 1]) jw_raw(w, ",", 1);
    w->cnt[w->n - 1]++;
    jw_indent(w, w->objdepth);
    jw_quoted(w, k, strlen(k));
    jw_raw(w, " : ", 3);
}

static void jw_obj_begin(jw *w) {
    jw_value_prefix(w);
    jw_raw(w, "{", 1);
    jw_push(w, 'o');
    w->objdepth++;
}

static void jw_obj_end(jw *w) {
    if (w->n == 0) { w->err = PAIMON_ERROR; return; }
    int had = w->cnt[w->n - 1];
    w->n--;
    w->objdepth--;
    if (had) {
        jw_indent(w, w->objdepth);
        jw_raw(w, "}", 1);
    } else {
        jw_raw(w, " }", 2);
    }
}

static void jw_arr_begin(jw *w) {
    jw_value_prefix(w);
    jw_raw(w, "[", 1);
    jw_push(w, 'a');
}

static void jw_arr_end(jw *w) {
    if (w->n == 0) { w->err = PAIMON_ERROR; return; }
    w->n--;
    jw_raw(w, " ]", 2);
}

static void jw_str(jw *w, const char *s) {
    jw_value_prefix(w);
    if (s) jw_quoted(w, s, strlen(s));
    else jw_raw(w, "null", 4);
}

static void jw_i64(jw *w, int64_t v) {
    char tmp[32];
    int k = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    jw_value_prefix(w);
    jw_raw(w, tmp, (size_t)k);
}

static void jw_null(jw *w) {
    jw_value_prefix(w);
    jw_raw(w, "null", 4);
}

static void jw_rawval(jw *w, const char *s) {
    jw_value_prefix(w);
    jw_cstr(w, s);
}

static void jw_init(jw *w, pm_buf *b) {
    memset(w, 0, sizeof *w);
    w->b = b;
}

/* ======================================================================
 * JSON helpers
 * ====================================================================== */

/* The document of a metadata file, whose root must be an object. */
static pm_json_doc *load_json(const char *json, size_t len, const char *f, pm_err *e) {
    if (len == 0) {
        pm_fail(e, PAIMON_CORRUPT, "%s: invalid JSON: empty file", f);
        return NULL;
    }
    pm_json_doc *d;
    pm_json_error je;
    if (pm_json_parse(json, len, &d, &je)) {
        if (je.nomem) pm_fail(e, PAIMON_NOMEM, "%s: out of memory reading JSON", f);
        else pm_fail(e, PAIMON_CORRUPT, "%s: invalid JSON at line %d column %d: %s", f, je.line, je.column, je.text);
        return NULL;
    }
    if (!pm_json_is_object(pm_json_root(d))) {
        pm_json_doc_free(d);
        pm_fail(e, PAIMON_CORRUPT, "%s: invalid JSON: expected an object", f);
        return NULL;
    }
    return d;
}

static int missing(pm_err *e, const char *f, const char *key) {
    return pm_fail(e, PAIMON_CORRUPT, "%s: missing required field '%s'", f, key);
}

static int wrong_type(pm_err *e, const char *f, const char *key, const char *want) {
    return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s' must be %s", f, key, want);
}

/* Optional (or required) int64 member. Explicit null sets *null_bits |= bit
 * (when optional). */
static int get_i64(const pm_json *o, const char *key, int required, pm_opt_i64 *out, uint32_t *null_bits,
                   uint32_t bit, const char *f, pm_err *e) {
    const pm_json *v = pm_json_get(o, key);
    out->has = 0;
    out->v = 0;
    if (!v) return required ? missing(e, f, key) : PAIMON_OK;
    if (pm_json_is_null(v)) {
        if (required) return pm_fail(e, PAIMON_CORRUPT, "%s: required field '%s' is null", f, key);
        if (null_bits) *null_bits |= bit;
        return PAIMON_OK;
    }
    if (!pm_json_is_integer(v)) return wrong_type(e, f, key, "an integer");
    out->has = 1;
    out->v = (int64_t)pm_json_int(v);
    return PAIMON_OK;
}

static int get_req_i64(const pm_json *o, const char *key, int64_t *out, const char *f, pm_err *e) {
    pm_opt_i64 t;
    int rc = get_i64(o, key, 1, &t, NULL, 0, f, e);
    if (rc == PAIMON_OK) *out = t.v;
    return rc;
}

static int get_str(const pm_json *o, const char *key, int required, char **out, uint32_t *null_bits,
                   uint32_t bit, const char *f, pm_err *e) {
    const pm_json *v = pm_json_get(o, key);
    *out = NULL;
    if (!v) return required ? missing(e, f, key) : PAIMON_OK;
    if (pm_json_is_null(v)) {
        if (required) return pm_fail(e, PAIMON_CORRUPT, "%s: required field '%s' is null", f, key);
        if (null_bits) *null_bits |= bit;
        return PAIMON_OK;
    }
    if (!pm_json_is_string(v)) return wrong_type(e, f, key, "a string");
    *out = pm_strndup(pm_json_str(v), pm_json_str_len(v));
    if (!*out) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

/* ---- raw text of a top-level member (the parsed values do not keep number text) */

static size_t sk_ws(const char *s, size_t i, size_t n) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

static size_t sk_string(const char *s, size_t i, size_t n) {
    i++;   /* opening quote */
    while (i < n && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
    return i < n ? i + 1 : n;
}

static size_t sk_value(const char *s, size_t i, size_t n) {
    if (i >= n) return n;
    if (s[i] == '"') return sk_string(s, i, n);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') { i = sk_string(s, i, n); continue; }
            if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0) return i + 1;
            }
            i++;
        }
        return n;
    }
    while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' &&
           s[i] != '\n' && s[i] != '\r')
        i++;
    return i;
}

/* Finds the last top-level member `key` of the (already validated) JSON
 * object text; returns 1 and the raw value span if found. */
static int raw_member(const char *s, size_t n, const char *key, const char **vs, size_t *vl) {
    size_t kl = strlen(key), i = sk_ws(s, 0, n);
    int found = 0;
    if (i >= n || s[i] != '{') return 0;
    i++;
    for (;;) {
        i = sk_ws(s, i, n);
        if (i >= n || s[i] != '"') break;
        size_t ks = i + 1, ke = sk_string(s, i, n);
        int match = ke - 1 >= ks && ke - 1 - ks == kl && memcmp(s + ks, key, kl) == 0;
        i = sk_ws(s, ke, n);
        if (i >= n || s[i] != ':') break;
        i = sk_ws(s, i + 1, n);
        size_t ve = sk_value(s, i, n);
        if (match) {
            *vs = s + i;
            *vl = ve - i;
            found = 1;
        }
        i = sk_ws(s, ve, n);
        if (i < n && s[i] == ',') { i++; continue; }
        break;
    }
    return found;
}

/* ======================================================================
 * Snapshot
 * ====================================================================== */

void pm_snapshot_free(pm_snapshot *s) {
    if (!s) return;
    free(s->uuid);
    free(s->base_manifest_list);
    free(s->delta_manifest_list);
    free(s->changelog_manifest_list);
    free(s->index_manifest);
    free(s->commit_user);
    free(s->writer_version);
    free(s->commit_kind);
    free(s->log_offsets);
    free(s->statistics);
    for (size_t i = 0; i < s->n_properties; i++) {
        free(s->properties[i].key);
        free(s->properties[i].value);
    }
    free(s->properties);
    free(s->operation);
    free(s->tag_create_time);
    free(s->tag_time_retained);
    free(s);
}

static int parse_log_offsets(const pm_json *root, pm_snapshot *s, const char *f, pm_err *e) {
    const pm_json *v = pm_json_get(root, "logOffsets");
    if (!v) return PAIMON_OK;
    if (pm_json_is_null(v)) {
        s->explicit_nulls |= PM_SNAP_NULL_LOG_OFFSETS;
        return PAIMON_OK;
    }
    if (!pm_json_is_object(v)) return wrong_type(e, f, "logOffsets", "an object");
    s->has_log_offsets = 1;
    size_t n = pm_json_size(v);
    if (n == 0) return PAIMON_OK;
    s->log_offsets = calloc(n, sizeof *s->log_offsets);
    if (!s->log_offsets) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < v->u.obj.n; i++) {
        const char *k = v->u.obj.m[i].key;
        const pm_json *val = &v->u.obj.m[i].value;
        char *end;
        long b = strtol(k, &end, 10);
        if (!*k || *end || b < INT32_MIN || b > INT32_MAX)
            return pm_fail(e, PAIMON_CORRUPT, "%s: field 'logOffsets' has a non-integer key '%s'",
                           f, k);
        if (!pm_json_is_integer(val)) return wrong_type(e, f, "logOffsets", "a map of integers");
        s->log_offsets[s->n_log_offsets].bucket = (int32_t)b;
        s->log_offsets[s->n_log_offsets].offset = (int64_t)pm_json_int(val);
        s->n_log_offsets++;
    }
    return PAIMON_OK;
}

static int parse_properties(const pm_json *root, pm_snapshot *s, const char *f, pm_err *e) {
    const pm_json *v = pm_json_get(root, "properties");
    if (!v) return PAIMON_OK;
    if (pm_json_is_null(v)) {
        s->explicit_nulls |= PM_SNAP_NULL_PROPERTIES;
        return PAIMON_OK;
    }
    if (!pm_json_is_object(v)) return wrong_type(e, f, "properties", "an object");
    s->has_properties = 1;
    size_t n = pm_json_size(v);
    if (n == 0) return PAIMON_OK;
    s->properties = calloc(n, sizeof *s->properties);
    if (!s->properties) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < v->u.obj.n; i++) {
        const char *k = v->u.obj.m[i].key;
        const pm_json *val = &v->u.obj.m[i].value;
        if (!pm_json_is_string(val)) return wrong_type(e, f, "properties", "a map of strings");
        pm_kv *kv = &s->properties[s->n_properties];
        kv->key = pm_strdup(k);
        kv->value = pm_strndup(pm_json_str(val), pm_json_str_len(val));
        s->n_properties++;
        if (!kv->key || !kv->value) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    return PAIMON_OK;
}

/* tagCreateTime: Jackson LocalDateTime array, kept in Jackson's text form. */
static int parse_tag_create_time(const pm_json *root, pm_snapshot *s, const char *f, pm_err *e) {
    const pm_json *v = pm_json_get(root, "tagCreateTime");
    if (!v) return PAIMON_OK;
    if (pm_json_is_null(v)) {
        s->explicit_nulls |= PM_SNAP_NULL_TAG_CREATE_TIME;
        return PAIMON_OK;
    }
    if (!pm_json_is_array(v)) return wrong_type(e, f, "tagCreateTime", "an array of integers");
    pm_buf b = {0};
    jw w;
    jw_init(&w, &b);
    jw_arr_begin(&w);
    for (size_t i = 0; i < pm_json_size(v); i++) {
        const pm_json *x = pm_json_at(v, i);
        if (!pm_json_is_integer(x)) {
            pm_buf_free(&b);
            return wrong_type(e, f, "tagCreateTime", "an array of integers");
        }
        jw_i64(&w, (int64_t)pm_json_int(x));
    }
    jw_arr_end(&w);
    if (w.err || pm_buf_cstr(&b)) {
        pm_buf_free(&b);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    s->tag_create_time = (char *)b.data;
    return PAIMON_OK;
}

/* tagTimeRetained: Jackson Duration = decimal seconds ("86400.000000000");
 * keep the exact source text. */
static int parse_tag_time_retained(const pm_json *root, const char *json, size_t len, pm_snapshot *s,
                                   const char *f, pm_err *e) {
    const pm_json *v = pm_json_get(root, "tagTimeRetained");
    if (!v) return PAIMON_OK;
    if (pm_json_is_null(v)) {
        s->explicit_nulls |= PM_SNAP_NULL_TAG_TIME_RETAINED;
        return PAIMON_OK;
    }
    if (!pm_json_is_number(v) && !pm_json_is_string(v))
        return wrong_type(e, f, "tagTimeRetained", "a number");
    const char *vs = NULL;
    size_t vl = 0;
    if (raw_member(json, len, "tagTimeRetained", &vs, &vl) && vl > 0) {
        s->tag_time_retained = pm_strndup(vs, vl);
    } else {
        char tmp[64];
        if (pm_json_is_integer(v)) snprintf(tmp, sizeof tmp, "%lld", (long long)pm_json_int(v));
        else if (pm_json_is_real(v)) snprintf(tmp, sizeof tmp, "%.9f", pm_json_real(v));
        else return wrong_type(e, f, "tagTimeRetained", "a number");
        s->tag_time_retained = pm_strdup(tmp);
    }
    if (!s->tag_time_retained) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

/* Values Java itself would refuse or never writes: the maintenance code
 * acts on these fields, so a file that contradicts them is not guessed at.
 * deltaRecordCount may be negative (added minus deleted rows: Java's
 * OVERWRITE snapshots); the total and changelog counts may not. */
static int snapshot_check(const pm_snapshot *s, const char *f, pm_err *e) {
    if (s->version < 1)
        return pm_fail(e, PAIMON_CORRUPT, "%s: field 'version' is %d, not a snapshot version (1 to %d)", f,
                       (int)s->version, PM_SNAPSHOT_VERSION_MAX);
    if (s->version > PM_SNAPSHOT_VERSION_MAX)
        return pm_fail(e, PAIMON_UNSUPPORTED, "%s: field 'version' is %d, newer than the snapshot versions known here (1 to %d)",
                       f, (int)s->version, PM_SNAPSHOT_VERSION_MAX);
    static const char *const kinds[] = {"APPEND", "COMPACT", "OVERWRITE", "ANALYZE"};
    int known = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) known |= !strcmp(s->commit_kind, kinds[i]);
    if (!known)
        return pm_fail(e, PAIMON_CORRUPT, "%s: field 'commitKind' is '%s', not one of APPEND, COMPACT, OVERWRITE, ANALYZE",
                       f, s->commit_kind);
    if (s->total_record_count.has && s->total_record_count.v < 0)
        return pm_fail(e, PAIMON_CORRUPT, "%s: field 'totalRecordCount' is negative (%lld)", f,
                       (long long)s->total_record_count.v);
    if (s->changelog_record_count.has && s->changelog_record_count.v < 0)
        return pm_fail(e, PAIMON_CORRUPT, "%s: field 'changelogRecordCount' is negative (%lld)", f,
                       (long long)s->changelog_record_count.v);
    /* Java writes System.currentTimeMillis(): never before 1970. Expiration's
     * time rule and tag retention compare it. */
    if (s->time_millis < 0)
        return pm_fail(e, PAIMON_CORRUPT, "%s: field 'timeMillis' is negative (%lld)", f, (long long)s->time_millis);
    return PAIMON_OK;
}

static int snapshot_fill(const pm_json *root, const char *json, size_t len, pm_snapshot *s, const char *f,
                         pm_err *e) {
    int rc;
    uint32_t *nb = &s->explicit_nulls;
    pm_opt_i64 ver;
    if ((rc = get_i64(root, "version", 0, &ver, nb, PM_SNAP_NULL_VERSION, f, e))) return rc;
    if (ver.has && (ver.v < INT32_MIN || ver.v > INT32_MAX))
        return wrong_type(e, f, "version", "a 32-bit integer");
    s->version = ver.has ? (int32_t)ver.v : 1;
    if ((rc = get_str(root, "uuid", 0, &s->uuid, nb, PM_SNAP_NULL_UUID, f, e))) return rc;
    if ((rc = get_req_i64(root, "id", &s->id, f, e))) return rc;
    if ((rc = get_req_i64(root, "schemaId", &s->schema_id, f, e))) return rc;
    if ((rc = get_str(root, "baseManifestList", 1, &s->base_manifest_list, NULL, 0, f, e))) return rc;
    if ((rc = get_i64(root, "baseManifestListSize", 0, &s->base_manifest_list_size, nb,
                      PM_SNAP_NULL_BASE_MANIFEST_LIST_SIZE, f, e)))
        return rc;
    if ((rc = get_str(root, "deltaManifestList", 1, &s->delta_manifest_list, NULL, 0, f, e))) return rc;
    if ((rc = get_i64(root, "deltaManifestListSize", 0, &s->delta_manifest_list_size, nb,
                      PM_SNAP_NULL_DELTA_MANIFEST_LIST_SIZE, f, e)))
        return rc;
    if ((rc = get_str(root, "changelogManifestList", 0, &s->changelog_manifest_list, nb,
                      PM_SNAP_NULL_CHANGELOG_MANIFEST_LIST, f, e)))
        return rc;
    if ((rc = get_i64(root, "changelogManifestListSize", 0, &s->changelog_manifest_list_size, nb,
                      PM_SNAP_NULL_CHANGELOG_MANIFEST_LIST_SIZE, f, e)))
        return rc;
    if ((rc = get_str(root, "indexManifest", 0, &s->index_manifest, nb, PM_SNAP_NULL_INDEX_MANIFEST,
                      f, e)))
        return rc;
    if ((rc = get_str(root, "commitUser", 1, &s->commit_user, NULL, 0, f, e))) return rc;
    if ((rc = get_str(root, "writerVersion", 0, &s->writer_version, nb, PM_SNAP_NULL_WRITER_VERSION,
                      f, e)))
        return rc;
    if ((rc = get_req_i64(root, "commitIdentifier", &s->commit_identifier, f, e))) return rc;
    if ((rc = get_str(root, "commitKind", 1, &s->commit_kind, NULL, 0, f, e))) return rc;
    if ((rc = get_req_i64(root, "timeMillis", &s->time_millis, f, e))) return rc;
    if ((rc = parse_log_offsets(root, s, f, e))) return rc;
    if ((rc = get_i64(root, "totalRecordCount", 0, &s->total_record_count, nb,
                      PM_SNAP_NULL_TOTAL_RECORD_COUNT, f, e)))
        return rc;
    if ((rc = get_i64(root, "deltaRecordCount", 0, &s->delta_record_count, nb,
                      PM_SNAP_NULL_DELTA_RECORD_COUNT, f, e)))
        return rc;
    if ((rc = get_i64(root, "changelogRecordCount", 0, &s->changelog_record_count, nb,
                      PM_SNAP_NULL_CHANGELOG_RECORD_COUNT, f, e)))
        return rc;
    if ((rc = get_i64(root, "watermark", 0, &s->watermark, nb, PM_SNAP_NULL_WATERMARK, f, e))) return rc;
    if ((rc = get_str(root, "statistics", 0, &s->statistics, nb, PM_SNAP_NULL_STATISTICS, f, e)))
        return rc;
    if ((rc = parse_properties(root, s, f, e))) return rc;
    if ((rc = get_i64(root, "nextRowId", 0, &s->next_row_id, nb, PM_SNAP_NULL_NEXT_ROW_ID, f, e)))
        return rc;
    if ((rc = get_str(root, "operation", 0, &s->operation, nb, PM_SNAP_NULL_OPERATION, f, e))) return rc;
    if ((rc = parse_tag_create_time(root, s, f, e))) return rc;
    if ((rc = parse_tag_time_retained(root, json, len, s, f, e))) return rc;
    return snapshot_check(s, f, e);
}

int pm_snapshot_parse(const char *json, size_t len, const char *file_name, pm_snapshot **out,
                      pm_err *e) {
    const char *f = file_name ? file_name : "snapshot";
    *out = NULL;
    pm_json_doc *doc = load_json(json, len, f, e);
    if (!doc) return e ? e->code : PAIMON_CORRUPT;
    pm_snapshot *s = calloc(1, sizeof *s);
    if (!s) {
        pm_json_doc_free(doc);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    int rc = snapshot_fill(pm_json_root(doc), json, len, s, f, e);
    pm_json_doc_free(doc);
    if (rc) {
        pm_snapshot_free(s);
        return rc;
    }
    *out = s;
    return PAIMON_OK;
}

static void w_opt_i64(jw *w, const char *key, pm_opt_i64 v, uint32_t nulls, uint32_t bit) {
    if (v.has) { jw_key(w, key); jw_i64(w, v.v); }
    else if (nulls & bit) { jw_key(w, key); jw_null(w); }
}

static void w_opt_str(jw *w, const char *key, const char *v, uint32_t nulls, uint32_t bit) {
    if (v) { jw_key(w, key); jw_str(w, v); }
    else if (nulls & bit) { jw_key(w, key); jw_null(w); }
}

int pm_snapshot_to_json(const pm_snapshot *s, pm_buf *out) {
    jw w;
    jw_init(&w, out);
    uint32_t nb = s->explicit_nulls;
    jw_obj_begin(&w);
    jw_key(&w, "version");
    if (nb & PM_SNAP_NULL_VERSION) jw_null(&w);
    else jw_i64(&w, s->version);
    w_opt_str(&w, "uuid", s->uuid, nb, PM_SNAP_NULL_UUID);
    jw_key(&w, "id"); jw_i64(&w, s->id);
    jw_key(&w, "schemaId"); jw_i64(&w, s->schema_id);
    jw_key(&w, "baseManifestList"); jw_str(&w, s->base_manifest_list);
    w_opt_i64(&w, "baseManifestListSize", s->base_manifest_list_size, nb,
              PM_SNAP_NULL_BASE_MANIFEST_LIST_SIZE);
    jw_key(&w, "deltaManifestList"); jw_str(&w, s->delta_manifest_list);
    w_opt_i64(&w, "deltaManifestListSize", s->delta_manifest_list_size, nb,
              PM_SNAP_NULL_DELTA_MANIFEST_LIST_SIZE);
    w_opt_str(&w, "changelogManifestList", s->changelog_manifest_list, nb,
              PM_SNAP_NULL_CHANGELOG_MANIFEST_LIST);
    w_opt_i64(&w, "changelogManifestListSize", s->changelog_manifest_list_size, nb,
              PM_SNAP_NULL_CHANGELOG_MANIFEST_LIST_SIZE);
    w_opt_str(&w, "indexManifest", s->index_manifest, nb, PM_SNAP_NULL_INDEX_MANIFEST);
    jw_key(&w, "commitUser"); jw_str(&w, s->commit_user);
    w_opt_str(&w, "writerVersion", s->writer_version, nb, PM_SNAP_NULL_WRITER_VERSION);
    jw_key(&w, "commitIdentifier"); jw_i64(&w, s->commit_identifier);
    jw_key(&w, "commitKind"); jw_str(&w, s->commit_kind);
    jw_key(&w, "timeMillis"); jw_i64(&w, s->time_millis);
    if (s->has_log_offsets) {
        jw_key(&w, "logOffsets");
        jw_obj_begin(&w);
        for (size_t i = 0; i < s->n_log_offsets; i++) {
            char k[16];
            snprintf(k, sizeof k, "%d", (int)s->log_offsets[i].bucket);
            jw_key(&w, k);
            jw_i64(&w, s->log_offsets[i].offset);
        }
        jw_obj_end(&w);
    } else if (nb & PM_SNAP_NULL_LOG_OFFSETS) {
        jw_key(&w, "logOffsets"); jw_null(&w);
    }
    w_opt_i64(&w, "totalRecordCount", s->total_record_count, nb, PM_SNAP_NULL_TOTAL_RECORD_COUNT);
    w_opt_i64(&w, "deltaRecordCount", s->delta_record_count, nb, PM_SNAP_NULL_DELTA_RECORD_COUNT);
    w_opt_i64(&w, "changelogRecordCount", s->changelog_record_count, nb,
              PM_SNAP_NULL_CHANGELOG_RECORD_COUNT);
    w_opt_i64(&w, "watermark", s->watermark, nb, PM_SNAP_NULL_WATERMARK);
    w_opt_str(&w, "statistics", s->statistics, nb, PM_SNAP_NULL_STATISTICS);
    if (s->has_properties) {
        jw_key(&w, "properties");
        jw_obj_begin(&w);
        for (size_t i = 0; i < s->n_properties; i++) {
            jw_key(&w, s->properties[i].key ? s->properties[i].key : "");
            jw_str(&w, s->properties[i].value);
        }
        jw_obj_end(&w);
    } else if (nb & PM_SNAP_NULL_PROPERTIES) {
        jw_key(&w, "properties"); jw_null(&w);
    }
    w_opt_i64(&w, "nextRowId", s->next_row_id, nb, PM_SNAP_NULL_NEXT_ROW_ID);
    w_opt_str(&w, "operation", s->operation, nb, PM_SNAP_NULL_OPERATION);
    if (s->tag_create_time) { jw_key(&w, "tagCreateTime"); jw_rawval(&w, s->tag_create_time); }
    else if (nb & PM_SNAP_NULL_TAG_CREATE_TIME) { jw_key(&w, "tagCreateTime"); jw_null(&w); }
    if (s->tag_time_retained) { jw_key(&w, "tagTimeRetained"); jw_rawval(&w, s->tag_time_retained); }
    else if (nb & PM_SNAP_NULL_TAG_TIME_RETAINED) { jw_key(&w, "tagTimeRetained"); jw_null(&w); }
    jw_obj_end(&w);
    return w.err ? w.err : PAIMON_OK;
}

/* ======================================================================
 * Consumer
 * ====================================================================== */

int pm_consumer_parse(const char *json, size_t len, const char *file_name, pm_consumer *out,
                      pm_err *e) {
    const char *f = file_name ? file_name : "consumer";
    pm_json_doc *doc = load_json(json, len, f, e);
    if (!doc) return e ? e->code : PAIMON_CORRUPT;
    int64_t v = 0;
    int rc = get_req_i64(pm_json_root(doc), "nextSnapshot", &v, f, e);
    pm_json_doc_free(doc);
    if (rc == PAIMON_OK) out->next_snapshot = v;
    return rc;
}

/* ======================================================================
 * Schema
 * ====================================================================== */

static void field_clear(pm_data_field *fd) {
    free(fd->name);
    free(fd->description);
    free(fd->default_value);
    pm_type_free(fd->type);
    memset(fd, 0, sizeof *fd);
}

static void fields_free(pm_data_field *fs, size_t n) {
    if (!fs) return;
    for (size_t i = 0; i < n; i++) field_clear(&fs[i]);
    free(fs);
}

static int parse_field(const pm_json *j, const char *f, int depth, pm_data_field *out, pm_err *e);

static int parse_fields(const pm_json *arr, const char *f, int depth, pm_data_field **out, size_t *n,
                        pm_err *e) {
    *out = NULL;
    *n = 0;
    size_t cnt = pm_json_size(arr);
    if (cnt == 0) return PAIMON_OK;
    pm_data_field *fs = calloc(cnt, sizeof *fs);
    if (!fs) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < cnt; i++) {
        int rc = parse_field(pm_json_at(arr, i), f, depth, &fs[i], e);
        if (rc) {
            fields_free(fs, i + 1);
            return rc;
        }
    }
    /* Java's RowType refuses duplicate names (case-sensitive); a duplicate
     * would make partition and key lookups pick one of them silently */
    pm_set *names = pm_set_new();
    int rc = names ? PAIMON_OK : pm_fail(e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; !rc && i < cnt; i++) {
        int added = pm_set_add(names, fs[i].name, strlen(fs[i].name));
        if (added < 0) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
        else if (!added)
            rc = pm_fail(e, PAIMON_CORRUPT, "%s: field 'fields' names '%s' twice (field names must be unique)", f,
                         fs[i].name);
    }
    pm_set_free(names);
    if (rc) {
        fields_free(fs, cnt);
        return rc;
    }
    *out = fs;
    *n = cnt;
    return PAIMON_OK;
}

static int parse_type(const pm_json *j, const char *f, const char *fname, int depth, pm_type **out,
                      pm_err *e) {
    *out = NULL;
    if (depth > 64)
        return pm_fail(e, PAIMON_CORRUPT, "%s: type of field '%s' is nested too deeply", f, fname);
    if (pm_json_is_string(j)) {
        int rc = pm_type_parse_atomic(pm_json_str(j), out, e);
        if (rc) pm_err_prefix(e, "%s: field '%s'", f, fname);
        return rc;
    }
    if (!pm_json_is_object(j))
        return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s': type must be a string or an object", f,
                       fname);
    const pm_json *tv = pm_json_get(j, "type");
    if (!pm_json_is_string(tv))
        return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s': composite type without a \"type\" string",
                       f, fname);
    const char *ts = pm_json_str(tv);
    int nullable = strstr(ts, "NOT NULL") == NULL;
    pm_type_root root;
    if (strncmp(ts, "ARRAY", 5) == 0) root = PM_T_ARRAY;
    else if (strncmp(ts, "VECTOR", 6) == 0) root = PM_T_VECTOR;
    else if (strncmp(ts, "MULTISET", 8) == 0) root = PM_T_MULTISET;
    else if (strncmp(ts, "MAP", 3) == 0) root = PM_T_MAP;
    else if (strncmp(ts, "ROW", 3) == 0) root = PM_T_ROW;
    else
        return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s': cannot parse type '%s'", f, fname, ts);

    int rc = PAIMON_OK;
    pm_type *a = NULL, *b = NULL;
    pm_data_field *fs = NULL;
    size_t nfs = 0;
    int32_t length = 0;
    if (root == PM_T_MAP) {
        const pm_json *k = pm_json_get(j, "key"), *v = pm_json_get(j, "value");
        if (!k || !v)
            return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s': MAP type needs \"key\" and \"value\"",
                           f, fname);
        if ((rc = parse_type(k, f, fname, depth + 1, &a, e))) return rc;
        if ((rc = parse_type(v, f, fname, depth + 1, &b, e))) { pm_type_free(a); return rc; }
    } else if (root == PM_T_ROW) {
        const pm_json *arr = pm_json_get(j, "fields");
        if (!pm_json_is_array(arr))
            return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s': ROW type needs a \"fields\" array", f,
                           fname);
        if ((rc = parse_fields(arr, f, depth + 1, &fs, &nfs, e))) return rc;
    } else {
        const pm_json *el = pm_json_get(j, "element");
        if (!el)
            return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s': %s type needs an \"element\"", f,
                           fname, ts);
        if (root == PM_T_VECTOR) {
            const pm_json *lv = pm_json_get(j, "length");
            if (!pm_json_is_integer(lv) || pm_json_int(lv) < 0 ||
                pm_json_int(lv) > INT32_MAX)
                return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s': VECTOR type needs a \"length\"",
                               f, fname);
            length = (int32_t)pm_json_int(lv);
        }
        if ((rc = parse_type(el, f, fname, depth + 1, &a, e))) return rc;
    }
    pm_type *t = pm_type_new(root, nullable);
    if (!t) {
        pm_type_free(a);
        pm_type_free(b);
        fields_free(fs, nfs);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    t->element = a;
    t->value = b;
    t->fields = fs;
    t->n_fields = nfs;
    if (root == PM_T_VECTOR) t->length = length;
    *out = t;
    return PAIMON_OK;
}

static int parse_field(const pm_json *j, const char *f, int depth, pm_data_field *out, pm_err *e) {
    memset(out, 0, sizeof *out);
    if (!pm_json_is_object(j)) return wrong_type(e, f, "fields", "an array of objects");
    pm_opt_i64 id;
    int rc;
    if ((rc = get_i64(j, "id", 1, &id, NULL, 0, f, e))) return rc;
    if (id.v < INT32_MIN || id.v > INT32_MAX) return wrong_type(e, f, "id", "a 32-bit integer");
    out->id = (int32_t)id.v;
    if ((rc = get_str(j, "name", 1, &out->name, NULL, 0, f, e))) return rc;
    const pm_json *tj = pm_json_get(j, "type");
    if (!tj || pm_json_is_null(tj))
        return pm_fail(e, PAIMON_CORRUPT, "%s: field '%s' has no type", f, out->name);
    if ((rc = parse_type(tj, f, out->name, depth, &out->type, e))) return rc;
    if ((rc = get_str(j, "description", 0, &out->description, NULL, 0, f, e))) return rc;
    if ((rc = get_str(j, "defaultValue", 0, &out->default_value, NULL, 0, f, e))) return rc;
    return PAIMON_OK;
}

static int parse_str_array(const pm_json *root, const char *key, const char *f, char ***out, size_t *n,
                           pm_err *e) {
    *out = NULL;
    *n = 0;
    const pm_json *arr = pm_json_get(root, key);
    if (!arr) return missing(e, f, key);
    if (!pm_json_is_array(arr)) return wrong_type(e, f, key, "an array of strings");
    size_t cnt = pm_json_size(arr);
    if (cnt == 0) return PAIMON_OK;
    char **v = calloc(cnt, sizeof *v);
    if (!v) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    *out = v;
    for (size_t i = 0; i < cnt; i++) {
        const pm_json *x = pm_json_at(arr, i);
        if (!pm_json_is_string(x)) return wrong_type(e, f, key, "an array of strings");
        v[i] = pm_strndup(pm_json_str(x), pm_json_str_len(x));
        if (!v[i]) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        *n = i + 1;
    }
    return PAIMON_OK;
}

static int options_add(pm_schema *s, size_t *cap, const char *k, const char *v, size_t vl) {
    if (s->n_options == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        pm_kv *nv = realloc(s->options, nc * sizeof *nv);
        if (!nv) return PAIMON_NOMEM;
        s->options = nv;
        *cap = nc;
    }
    pm_kv *kv = &s->options[s->n_options];
    kv->key = pm_strdup(k);
    kv->value = pm_strndup(v, vl);
    if (!kv->key || !kv->value) {
        free(kv->key);
        free(kv->value);
        return PAIMON_NOMEM;
    }
    s->n_options++;
    return PAIMON_OK;
}

static int schema_fill(const pm_json *root, pm_schema *s, const char *f, pm_err *e) {
    int rc;
    pm_opt_i64 v;
    if ((rc = get_i64(root, "version", 0, &v, NULL, 0, f, e))) return rc;
    if (v.has && (v.v < INT32_MIN || v.v > INT32_MAX))
        return wrong_type(e, f, "version", "a 32-bit integer");
    s->version = v.has ? (int32_t)v.v : 1;
    if ((rc = get_req_i64(root, "id", &s->id, f, e))) return rc;
    const pm_json *fields = pm_json_get(root, "fields");
    if (!fields) return missing(e, f, "fields");
    if (!pm_json_is_array(fields)) return wrong_type(e, f, "fields", "an array");
    if ((rc = parse_fields(fields, f, 0, &s->fields, &s->n_fields, e))) return rc;
    if ((rc = get_i64(root, "highestFieldId", 1, &v, NULL, 0, f, e))) return rc;
    if (v.v < INT32_MIN || v.v > INT32_MAX)
        return wrong_type(e, f, "highestFieldId", "a 32-bit integer");
    s->highest_field_id = (int32_t)v.v;
    if ((rc = parse_str_array(root, "partitionKeys", f, &s->partition_keys, &s->n_partition_keys, e)))
        return rc;
    if ((rc = parse_str_array(root, "primaryKeys", f, &s->primary_keys, &s->n_primary_keys, e)))
        return rc;
    const pm_json *opts = pm_json_get(root, "options");
    if (!opts) return missing(e, f, "options");
    if (!pm_json_is_object(opts)) return wrong_type(e, f, "options", "an object");
    size_t cap = 0;
    for (size_t i = 0; i < opts->u.obj.n; i++) {
        const char *k = opts->u.obj.m[i].key;
        const pm_json *val = &opts->u.obj.m[i].value;
        char tmp[32];
        const char *vs;
        size_t vl;
        if (pm_json_is_string(val)) {
            vs = pm_json_str(val);
            vl = pm_json_str_len(val);
        } else if (pm_json_is_integer(val)) {   /* Java reads with asText() */
            vl = (size_t)snprintf(tmp, sizeof tmp, "%lld", (long long)pm_json_int(val));
            vs = tmp;
        } else if (pm_json_is_boolean(val)) {
            vs = pm_json_is_true(val) ? "true" : "false";
            vl = strlen(vs);
        } else {
            return pm_fail(e, PAIMON_CORRUPT, "%s: option '%s' must be a string", f, k);
        }
        if (options_add(s, &cap, k, vs, vl)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    /* SchemaSerializer read compatibility: the old defaults. */
    if (s->version <= 1 && !pm_schema_option(s, "bucket"))
        if (options_add(s, &cap, "bucket", "1", 1)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if (s->version <= 2 && !pm_schema_option(s, "file.format"))
        if (options_add(s, &cap, "file.format", "orc", 3))
            return pm_fail(e, PAIMON_NOMEM, "out of memory");
    if ((rc = get_str(root, "comment", 0, &s->comment, NULL, 0, f, e))) return rc;
    if ((rc = get_i64(root, "timeMillis", 0, &v, NULL, 0, f, e))) return rc;
    s->time_millis = v.has ? v.v : 0;
    return PAIMON_OK;
}

void pm_schema_free(pm_schema *s) {
    if (!s) return;
    fields_free(s->fields, s->n_fields);
    for (size_t i = 0; i < s->n_partition_keys; i++) free(s->partition_keys[i]);
    free(s->partition_keys);
    for (size_t i = 0; i < s->n_primary_keys; i++) free(s->primary_keys[i]);
    free(s->primary_keys);
    for (size_t i = 0; i < s->n_options; i++) {
        free(s->options[i].key);
        free(s->options[i].value);
    }
    free(s->options);
    free(s->comment);
    free(s);
}

int pm_schema_parse(const char *json, size_t len, const char *file_name, pm_schema **out,
                    pm_err *e) {
    const char *f = file_name ? file_name : "schema";
    *out = NULL;
    pm_json_doc *doc = load_json(json, len, f, e);
    if (!doc) return e ? e->code : PAIMON_CORRUPT;
    pm_schema *s = calloc(1, sizeof *s);
    if (!s) {
        pm_json_doc_free(doc);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    int rc = schema_fill(pm_json_root(doc), s, f, e);
    pm_json_doc_free(doc);
    if (rc) {
        pm_schema_free(s);
        return rc;
    }
    *out = s;
    return PAIMON_OK;
}

static void w_field(jw *w, const pm_data_field *fd);

static void w_type(jw *w, const pm_type *t) {
    if (!t) { jw_null(w); return; }
    const char *nn = t->nullable ? "" : " NOT NULL";
    char head[32];
    switch (t->root) {
    case PM_T_ARRAY:
    case PM_T_MULTISET:
    case PM_T_VECTOR:
        jw_obj_begin(w);
        snprintf(head, sizeof head, "%s%s",
                 t->root == PM_T_ARRAY ? "ARRAY" : t->root == PM_T_MULTISET ? "MULTISET" : "VECTOR",
                 nn);
        jw_key(w, "type"); jw_str(w, head);
        jw_key(w, "element"); w_type(w, t->element);
        if (t->root == PM_T_VECTOR) { jw_key(w, "length"); jw_i64(w, t->length); }
        jw_obj_end(w);
        return;
    case PM_T_MAP:
        jw_obj_begin(w);
        snprintf(head, sizeof head, "MAP%s", nn);
        jw_key(w, "type"); jw_str(w, head);
        jw_key(w, "key"); w_type(w, t->element);
        jw_key(w, "value"); w_type(w, t->value);
        jw_obj_end(w);
        return;
    case PM_T_ROW:
        jw_obj_begin(w);
        snprintf(head, sizeof head, "ROW%s", nn);
        jw_key(w, "type"); jw_str(w, head);
        jw_key(w, "fields");
        jw_arr_begin(w);
        for (size_t i = 0; i < t->n_fields; i++) w_field(w, &t->fields[i]);
        jw_arr_end(w);
        jw_obj_end(w);
        return;
    default: {
        pm_buf sql = {0};
        if (pm_type_to_sql(t, &sql) != PAIMON_OK) {
            pm_buf_free(&sql);
            if (!w->err) w->err = PAIMON_ERROR;
            return;
        }
        jw_value_prefix(w);
        jw_quoted(w, sql.len ? (const char *)sql.data : "", sql.len);
        pm_buf_free(&sql);
        return;
    }
    }
}

static void w_field(jw *w, const pm_data_field *fd) {
    jw_obj_begin(w);
    jw_key(w, "id"); jw_i64(w, fd->id);
    jw_key(w, "name"); jw_str(w, fd->name);
    jw_key(w, "type"); w_type(w, fd->type);
    if (fd->description) { jw_key(w, "description"); jw_str(w, fd->description); }
    if (fd->default_value) { jw_key(w, "defaultValue"); jw_str(w, fd->default_value); }
    jw_obj_end(w);
}

int pm_schema_to_json(const pm_schema *s, pm_buf *out) {
    jw w;
    jw_init(&w, out);
    jw_obj_begin(&w);
    jw_key(&w, "version"); jw_i64(&w, s->version);
    jw_key(&w, "id"); jw_i64(&w, s->id);
    jw_key(&w, "fields");
    jw_arr_begin(&w);
    for (size_t i = 0; i < s->n_fields; i++) w_field(&w, &s->fields[i]);
    jw_arr_end(&w);
    jw_key(&w, "highestFieldId"); jw_i64(&w, s->highest_field_id);
    jw_key(&w, "partitionKeys");
    jw_arr_begin(&w);
    for (size_t i = 0; i < s->n_partition_keys; i++) jw_str(&w, s->partition_keys[i]);
    jw_arr_end(&w);
    jw_key(&w, "primaryKeys");
    jw_arr_begin(&w);
    for (size_t i = 0; i < s->n_primary_keys; i++) jw_str(&w, s->primary_keys[i]);
    jw_arr_end(&w);
    jw_key(&w, "options");
    jw_obj_begin(&w);
    for (size_t i = 0; i < s->n_options; i++) {
        jw_key(&w, s->options[i].key ? s->options[i].key : "");
        jw_str(&w, s->options[i].value);
    }
    jw_obj_end(&w);
    if (s->comment) { jw_key(&w, "comment"); jw_str(&w, s->comment); }
    jw_key(&w, "timeMillis"); jw_i64(&w, s->time_millis);
    jw_obj_end(&w);
    return w.err ? w.err : PAIMON_OK;
}

const char *pm_schema_option(const pm_schema *s, const char *key) {
    if (!s || !key) return NULL;
    /* last one wins, like a HashMap fed in file order */
    for (size_t i = s->n_options; i-- > 0;)
        if (s->options[i].key && strcmp(s->options[i].key, key) == 0) return s->options[i].value;
    return NULL;
}

const pm_data_field *pm_schema_field(const pm_schema *s, const char *name) {
    if (!s || !name) return NULL;
    for (size_t i = 0; i < s->n_fields; i++)
        if (s->fields[i].name && strcmp(s->fields[i].name, name) == 0) return &s->fields[i];
    return NULL;
}

/* ======================================================================
 * Option defaults (CoreOptions, release 2.0), rendered as Java's
 * MemorySize / Duration toString would.
 * ====================================================================== */

#define KV(k, v) { (char *)(k), (char *)(v) }
const pm_kv pm_option_defaults[] = {
    KV("bucket", "-1"),
    KV("file.format", "parquet"),
    KV("file.compression", "zstd"),
    KV("file.compression.zstd-level", "1"),
    KV("file.suffix.include.compression", "false"),
    KV("manifest.format", "avro"),
    KV("manifest.compression", "zstd"),
    KV("manifest.target-file-size", "8 mb"),
    KV("manifest.full-compaction-threshold-size", "16 mb"),
    KV("manifest.merge-min-count", "30"),
    KV("manifest.delete-file-drop-stats", "false"),
    KV("snapshot.num-retained.min", "10"),
    KV("snapshot.num-retained.max", "2147483647"),
    KV("snapshot.time-retained", "1 h"),
    KV("snapshot.expire.limit", "50"),
    KV("snapshot.expire.execution-mode", "sync"),
    KV("snapshot.clean-empty-directories", "false"),
    KV("partition.default-name", "__DEFAULT_PARTITION__"),
    KV("partition.legacy-name", "true"),
    KV("partition.expiration-strategy", "values-time"),
    KV("partition.expiration-max-num", "100"),
    KV("partition.expiration-check-interval", "1 h"),
    KV("commit.max-retries", "10"),
    KV("commit.min-retry-wait", "10 ms"),
    KV("commit.max-retry-wait", "10 s"),
    KV("commit.force-compact", "false"),
    KV("target-file-size", "256 mb"),   /* append tables; 128 mb with a primary key */
    KV("write-buffer-size", "256 mb"),
    KV("page-size", "64 kb"),
    KV("source.split.target-size", "128 mb"),
    KV("data-file.prefix", "data-"),
    KV("changelog-file.prefix", "changelog-"),
    KV("changelog-producer", "none"),
    KV("merge-engine", "deduplicate"),
    KV("deletion-vectors.enabled", "false"),
    KV("write-only", "false"),
    KV("metadata.stats-mode", "truncate(16)"),
    KV("metadata.stats-keep-first-n-columns", "-1"),
    KV("file-index.in-manifest-threshold", "500 bytes"),
    KV("index-file-in-data-file-dir", "false"),
    KV("num-sorted-run.compaction-trigger", "5"),
    KV("dynamic-bucket.target-row-num", "2000000"),
    KV("row-tracking.enabled", "false"),
    KV("data-evolution.enabled", "false"),
    KV("sink.watermark-time-zone", "UTC"),
    KV(NULL, NULL),
};
#undef KV

const char *pm_schema_option_or_default(const pm_schema *s, const char *key) {
    const char *v = pm_schema_option(s, key);
    if (v || !key) return v;
    if (strcmp(key, "target-file-size") == 0)   /* CoreOptions.targetFileSize(hasPrimaryKey) */
        return s && s->n_primary_keys > 0 ? "128 mb" : "256 mb";
    for (const pm_kv *kv = pm_option_defaults; kv->key; kv++)
        if (strcmp(kv->key, key) == 0) return kv->value;
    return NULL;
}

/* ======================================================================
 * Duration (TimeUtils.parseDuration) and MemorySize.parseBytes
 * ====================================================================== */

typedef struct unit_label { const char *label; int64_t mul; int64_t div; } unit_label;

/* Splits "<digits><ws><unit>" after Java's trim(); unit lower-cased (ASCII).
 * Returns 0 on success. */
static int split_number_unit(const char *s, const char *what, int64_t *value, char *unit,
                             size_t unit_cap, pm_err *e) {
    size_t n = strlen(s), b = 0;
    while (b < n && (unsigned char)s[b] <= ' ') b++;
    while (n > b && (unsigned char)s[n - 1] <= ' ') n--;
    if (b == n)
        return pm_fail(e, PAIMON_MISUSE, "invalid %s '%s': empty or whitespace-only string", what, s);
    size_t p = b;
    while (p < n && s[p] >= '0' && s[p] <= '9') p++;
    if (p == b)
        return pm_fail(e, PAIMON_MISUSE, "invalid %s '%s': text does not start with a number", what, s);
    int64_t v = 0;
    for (size_t i = b; i < p; i++) {
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10)
            return pm_fail(e, PAIMON_MISUSE,
                           "invalid %s '%s': the value cannot be represented as a 64-bit number", what, s);
        v = v * 10 + d;
    }
    size_t u = p;
    while (u < n && (unsigned char)s[u] <= ' ') u++;
    if (n - u >= unit_cap)
        return pm_fail(e, PAIMON_MISUSE, "invalid %s '%s': unknown unit", what, s);
    for (size_t i = u; i < n; i++) {
        char c = s[i];
        unit[i - u] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    unit[n - u] = '\0';
    *value = v;
    return PAIMON_OK;
}

static int apply_unit(const unit_label *tab, const char *unit, int64_t v, const char *what,
                      const char *s, int64_t *out, pm_err *e) {
    if (!unit[0]) { *out = v; return PAIMON_OK; }
    for (const unit_label *u = tab; u->label; u++) {
        if (strcmp(u->label, unit) != 0) continue;
        if (u->div > 1) { *out = v / u->div; return PAIMON_OK; }
        if (v > INT64_MAX / u->mul)
            return pm_fail(e, PAIMON_MISUSE, "invalid %s '%s': numeric overflow", what, s);
        *out = v * u->mul;
        return PAIMON_OK;
    }
    return pm_fail(e, PAIMON_MISUSE, "invalid %s '%s': unit '%s' is not recognized", what, s, unit);
}

int pm_parse_duration_ms(const char *s, int64_t *ms, pm_err *e) {
    static const unit_label units[] = {
        {"d", 86400000, 1}, {"day", 86400000, 1}, {"days", 86400000, 1},
        {"h", 3600000, 1}, {"hour", 3600000, 1}, {"hours", 3600000, 1},
        {"min", 60000, 1}, {"m", 60000, 1}, {"minute", 60000, 1}, {"minutes", 60000, 1},
        {"s", 1000, 1}, {"sec", 1000, 1}, {"secs", 1000, 1}, {"second", 1000, 1},
        {"seconds", 1000, 1},
        {"ms", 1, 1}, {"milli", 1, 1}, {"millis", 1, 1}, {"millisecond", 1, 1},
        {"milliseconds", 1, 1},
        {"\xc2\xb5s", 1, 1000}, {"micro", 1, 1000}, {"micros", 1, 1000},
        {"microsecond", 1, 1000}, {"microseconds", 1, 1000},
        {"ns", 1, 1000000}, {"nano", 1, 1000000}, {"nanos", 1, 1000000},
        {"nanosecond", 1, 1000000}, {"nanoseconds", 1, 1000000},
        {NULL, 0, 0},
    };
    if (!s) return pm_fail(e, PAIMON_MISUSE, "invalid duration: NULL");
    int64_t v;
    char unit[32];
    int rc = split_number_unit(s, "duration", &v, unit, sizeof unit, e);
    if (rc) return rc;
    return apply_unit(units, unit, v, "duration", s, ms, e);
}

int pm_parse_memory_size(const char *s, int64_t *bytes, pm_err *e) {
    static const unit_label units[] = {
        {"b", 1, 1}, {"bytes", 1, 1},
        {"k", 1024LL, 1}, {"kb", 1024LL, 1}, {"kibibytes", 1024LL, 1},
        {"m", 1024LL << 10, 1}, {"mb", 1024LL << 10, 1}, {"mebibytes", 1024LL << 10, 1},
        {"g", 1024LL << 20, 1}, {"gb", 1024LL << 20, 1}, {"gibibytes", 1024LL << 20, 1},
        {"t", 1024LL << 30, 1}, {"tb", 1024LL << 30, 1}, {"tebibytes", 1024LL << 30, 1},
        {NULL, 0, 0},
    };
    if (!s) return pm_fail(e, PAIMON_MISUSE, "invalid memory size: NULL");
    int64_t v;
    char unit[32];
    int rc = split_number_unit(s, "memory size", &v, unit, sizeof unit, e);
    if (rc) return rc;
    return apply_unit(units, unit, v, "memory size", s, bytes, e);
}
