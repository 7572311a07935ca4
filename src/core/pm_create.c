/* Table creation (Java Schema / SchemaManager.createTable). */
#include "pm_create.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pm_fileio.h"

/* ---- type parser --------------------------------------------------------- */

static const char *skip_ws(const char *p) {
    while (*p && isspace((unsigned char)*p)) p++;
    return p;
}

/* Case-insensitive keyword followed by optional spaces and '<'. */
static const char *kw_open(const char *p, const char *kw) {
    size_t n = strlen(kw);
    if (strncasecmp(p, kw, n)) return NULL;
    p = skip_ws(p + n);
    return *p == '<' ? p + 1 : NULL;
}

/* Position of the '>' closing a '<' opened just before p (nesting and
 * quotes respected), NULL if unbalanced. */
static const char *match_close(const char *p) {
    int depth = 1;
    char q = 0;
    for (; *p; p++) {
        if (q) { if (*p == q) q = 0; continue; }
        if (*p == '`' || *p == '\'' || *p == '"') { q = *p; continue; }
        if (*p == '<') depth++;
        else if (*p == '>' && --depth == 0) return p;
    }
    return NULL;
}

/* Next top-level comma in [p, end), or end. */
static const char *next_comma(const char *p, const char *end) {
    int depth = 0;
    char q = 0;
    for (; p < end; p++) {
        if (q) { if (*p == q) q = 0; continue; }
        if (*p == '`' || *p == '\'' || *p == '"') { q = *p; continue; }
        if (*p == '<' || *p == '(') depth++;
        else if (*p == '>' || *p == ')') depth--;
        else if (*p == ',' && depth == 0) return p;
    }
    return end;
}

static int parse_range(const char *s, size_t n, pm_type **out, pm_err *e, int depth);

static int parse_nullability(const char *p, int *nullable, const char *whole, pm_err *e) {
    p = skip_ws(p);
    *nullable = 1;
    if (!*p) return PAIMON_OK;
    if (!strncasecmp(p, "NOT", 3)) {
        p = skip_ws(p + 3);
        if (!strncasecmp(p, "NULL", 4) && !*skip_ws(p + 4)) { *nullable = 0; return PAIMON_OK; }
    } else if (!strncasecmp(p, "NULL", 4) && !*skip_ws(p + 4)) {
        return PAIMON_OK;
    }
    return pm_fail(e, PAIMON_MISUSE, "invalid type '%s': unexpected '%s'", whole, p);
}

static int parse_row_fields(const char *p, const char *end, pm_type *t, const char *whole, pm_err *e,
                            int depth) {
    size_t cap = 0;
    while (p < end) {
        const char *c = next_comma(p, end);
        const char *q = skip_ws(p);
        if (q >= c) return pm_fail(e, PAIMON_MISUSE, "invalid type '%s': empty ROW field", whole);
        char *name;
        const char *rest;
        if (*q == '`') {
            const char *z = memchr(q + 1, '`', (size_t)(c - q - 1));
            if (!z) return pm_fail(e, PAIMON_MISUSE, "invalid type '%s': unterminated `name`", whole);
            name = pm_strndup(q + 1, (size_t)(z - q - 1));
            rest = z + 1;
        } else {
            const char *z = q;
            while (z < c && !isspace((unsigned char)*z)) z++;
            name = pm_strndup(q, (size_t)(z - q));
            rest = z;
        }
        if (!name) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        if (t->n_fields == cap) {
            cap = cap ? cap * 2 : 4;
            pm_data_field *nf = realloc(t->fields, cap * sizeof *nf);
            if (!nf) { free(name); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
            t->fields = nf;
        }
        pm_data_field *f = &t->fields[t->n_fields];
        memset(f, 0, sizeof *f);
        f->name = name;
        t->n_fields++;
        int rc = parse_range(rest, (size_t)(c - rest), &f->type, e, depth + 1);
        if (rc) return rc;
        p = c < end ? c + 1 : end;
    }
    if (!t->n_fields) return pm_fail(e, PAIMON_MISUSE, "invalid type '%s': ROW needs fields", whole);
    return PAIMON_OK;
}

static int parse_range(const char *s, size_t n, pm_type **out, pm_err *e, int depth) {
    *out = NULL;
    char *buf = pm_strndup(s, n);
    if (!buf) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = PAIMON_OK;
    if (depth > 64) { rc = pm_fail(e, PAIMON_MISUSE, "type nested too deeply"); goto done; }
    const char *p = skip_ws(buf), *in;
    pm_type_root root;
    if ((in = kw_open(p, "ARRAY"))) root = PM_T_ARRAY;
    else if ((in = kw_open(p, "MULTISET"))) root = PM_T_MULTISET;
    else if ((in = kw_open(p, "MAP"))) root = PM_T_MAP;
    else if ((in = kw_open(p, "ROW"))) root = PM_T_ROW;
    else { rc = pm_type_parse_atomic(p, out, e); goto done; }
    const char *close = match_close(in);
    if (!close) { rc = pm_fail(e, PAIMON_MISUSE, "invalid type '%s': missing '>'", buf); goto done; }
    pm_type *t = pm_type_new(root, 1);
    if (!t) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto done; }
    *out = t;
    if ((rc = parse_nullability(close + 1, &t->nullable, buf, e))) goto done;
    if (root == PM_T_ARRAY || root == PM_T_MULTISET) {
        rc = parse_range(in, (size_t)(close - in), &t->element, e, depth + 1);
    } else if (root == PM_T_MAP) {
        const char *c = next_comma(in, close);
        if (c == close) { rc = pm_fail(e, PAIMON_MISUSE, "invalid type '%s': MAP<key, value> needs two types", buf); goto done; }
        rc = parse_range(in, (size_t)(c - in), &t->element, e, depth + 1);
        if (!rc) rc = parse_range(c + 1, (size_t)(close - c - 1), &t->value, e, depth + 1);
    } else {
        rc = parse_row_fields(in, close, t, buf, e, depth);
    }
done:
    if (rc && *out) { pm_type_free(*out); *out = NULL; }
    free(buf);
    return rc;
}

int pm_type_parse_sql(const char *s, pm_type **out, pm_err *e) {
    if (!s) return pm_fail(e, PAIMON_MISUSE, "type is NULL");
    return parse_range(s, strlen(s), out, e, 0);
}

/* ---- normalize -------------------------------------------------------------- */

static void assign_ids(pm_type *t, int32_t *next) {
    if (!t) return;
    if (t->root == PM_T_ROW) {
        for (size_t i = 0; i < t->n_fields; i++) {
            t->fields[i].id = (*next)++;
            assign_ids(t->fields[i].type, next);
        }
    } else {
        assign_ids(t->element, next);
        assign_ids(t->value, next);
    }
}

int32_t pm_java_string_hash(const char *s) {
    uint32_t h = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        uint32_t cp;
        size_t l;
        if (*p < 0x80) { cp = *p; l = 1; }
        else if ((*p >> 5) == 6 && p[1]) { cp = ((uint32_t)(*p & 0x1F) << 6) | (p[1] & 0x3F); l = 2; }
        else if ((*p >> 4) == 14 && p[1] && p[2]) { cp = ((uint32_t)(*p & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F); l = 3; }
        else if ((*p >> 3) == 30 && p[1] && p[2] && p[3]) {
            cp = ((uint32_t)(*p & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) | ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
            l = 4;
        } else { cp = *p; l = 1; }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = 31 * h + (0xD800 + (cp >> 10));
            h = 31 * h + (0xDC00 + (cp & 0x3FF));
        } else {
            h = 31 * h + cp;
        }
        p += l;
    }
    return (int32_t)h;
}

typedef struct { pm_kv kv; size_t bucket, pos; } opt_slot;

static int opt_cmp(const void *a, const void *b) {
    const opt_slot *x = a, *y = b;
    if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* HashMap iteration order: by bucket (hash ^ hash >>> 16) & (cap - 1),
 * insertion order inside a bucket; capacity 16 doubled while size > 0.75 cap. */
static int java_hashmap_order(pm_kv *kv, size_t n) {
    if (n < 2) return PAIMON_OK;
    size_t cap = 16;
    while ((double)n > 0.75 * (double)cap) cap *= 2;
    opt_slot *v = calloc(n, sizeof *v);
    if (!v) return PAIMON_NOMEM;
    for (size_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)pm_java_string_hash(kv[i].key);
        h ^= h >> 16;
        v[i].kv = kv[i];
        v[i].bucket = h & (cap - 1);
        v[i].pos = i;
    }
    qsort(v, n, sizeof *v, opt_cmp);
    for (size_t i = 0; i < n; i++) kv[i] = v[i].kv;
    free(v);
    return PAIMON_OK;
}

static int find_field(const pm_schema *s, const char *name) {
    for (size_t i = 0; i < s->n_fields; i++) if (!strcmp(s->fields[i].name, name)) return (int)i;
    return -1;
}

static int check_keys(const pm_schema *s, char **keys, size_t n, const char *what, pm_err *e) {
    for (size_t i = 0; i < n; i++) {
        if (!keys[i] || find_field(s, keys[i]) < 0)
            return pm_fail(e, PAIMON_MISUSE, "%s '%s' is not a column", what, keys[i] ? keys[i] : "(null)");
        for (size_t j = 0; j < i; j++)
            if (!strcmp(keys[i], keys[j])) return pm_fail(e, PAIMON_MISUSE, "%s '%s' is listed twice", what, keys[i]);
    }
    return PAIMON_OK;
}

static int in_list(char **v, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++) if (!strcmp(v[i], s)) return 1;
    return 0;
}

static int parse_long(const char *v, long *out);

/* The option checks of Java's SchemaValidation that create_table and
 * alter_table share: bucket, then retention (the changelog's counts falling
 * back to the snapshot's: a schema that fails them would make every upkeep
 * fail). */
int pm_schema_check_options(const pm_schema *s, pm_err *e) {
    long smin = 0, smax = 0, cmin = 0, cmax = 0, x = 0;
    const char *v = pm_schema_option(s, "bucket");
    if (v && (!parse_long(v, &x) || x == 0 || x < -2 || x > 0x7fffffff))
        return pm_fail(e, PAIMON_MISUSE, "option bucket=%s: expected a positive number of buckets, -1 or -2", v);
    if ((v = pm_schema_option_or_default(s, "snapshot.num-retained.min")) && !parse_long(v, &smin))
        return pm_fail(e, PAIMON_MISUSE, "option snapshot.num-retained.min=%s: not an integer", v);
    if ((v = pm_schema_option_or_default(s, "snapshot.num-retained.max")) && !parse_long(v, &smax))
        return pm_fail(e, PAIMON_MISUSE, "option snapshot.num-retained.max=%s: not an integer", v);
    cmin = smin;
    cmax = smax;
    if ((v = pm_schema_option(s, "changelog.num-retained.min")) && !parse_long(v, &cmin))
        return pm_fail(e, PAIMON_MISUSE, "option changelog.num-retained.min=%s: not an integer", v);
    if ((v = pm_schema_option(s, "changelog.num-retained.max")) && !parse_long(v, &cmax))
        return pm_fail(e, PAIMON_MISUSE, "option changelog.num-retained.max=%s: not an integer", v);
    if (smin <= 0) return pm_fail(e, PAIMON_MISUSE, "snapshot.num-retained.min should be at least 1");
    if (smin > smax)
        return pm_fail(e, PAIMON_MISUSE, "snapshot.num-retained.min should not be larger than snapshot.num-retained.max");
    if (cmin <= 0) return pm_fail(e, PAIMON_MISUSE, "changelog.num-retained.min should be at least 1");
    if (cmin > cmax)
        return pm_fail(e, PAIMON_MISUSE, "changelog.num-retained.min should not be larger than changelog.num-retained.max "
                       "(%ld > %ld%s)", cmin, cmax, pm_schema_option(s, "changelog.num-retained.max") ? "" :
                       ": it falls back to snapshot.num-retained.max");
    return PAIMON_OK;
}

static int parse_long(const char *v, long *out) {
    char *end;
    if (!v || !*v) return 0;
    *out = strtol(v, &end, 10);
    return !*end;
}

int pm_create_normalize(pm_schema *s, pm_err *e) {
    if (!s->n_fields) return pm_fail(e, PAIMON_MISUSE, "a table needs at least one column");
    for (size_t i = 0; i < s->n_fields; i++) {
        const char *nm = s->fields[i].name;
        if (!nm || !*nm) return pm_fail(e, PAIMON_MISUSE, "column %zu has no name", i + 1);
        if (!s->fields[i].type) return pm_fail(e, PAIMON_MISUSE, "column '%s' has no type", nm);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(s->fields[j].name, nm)) return pm_fail(e, PAIMON_MISUSE, "column '%s' is defined twice", nm);
    }
    int rc;
    if ((rc = check_keys(s, s->partition_keys, s->n_partition_keys, "partition key", e))) return rc;
    if ((rc = check_keys(s, s->primary_keys, s->n_primary_keys, "primary key", e))) return rc;
    if (s->n_partition_keys >= s->n_fields)
        return pm_fail(e, PAIMON_MISUSE, "cannot define all columns as partition keys");
    if (s->n_primary_keys) {
        for (size_t i = 0; i < s->n_partition_keys; i++)
            if (!in_list(s->primary_keys, s->n_primary_keys, s->partition_keys[i]))
                return pm_fail(e, PAIMON_MISUSE, "the primary key must include every partition key ('%s' is missing)",
                               s->partition_keys[i]);
        if (s->n_primary_keys == s->n_partition_keys)
            return pm_fail(e, PAIMON_MISUSE,
                           "the primary key must not equal the partition keys (only one row per partition)");
    }
    for (size_t i = 0; i < s->n_options; i++) {
        if (!s->options[i].key || !s->options[i].value) return pm_fail(e, PAIMON_MISUSE, "option %zu has no key or value", i + 1);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(s->options[i].key, s->options[j].key)) return pm_fail(e, PAIMON_MISUSE, "option '%s' is set twice", s->options[i].key);
    }
    rc = pm_schema_check_options(s, e);
    if (rc) return rc;
    /* primary-key columns are NOT NULL */
    for (size_t i = 0; i < s->n_primary_keys; i++) s->fields[find_field(s, s->primary_keys[i])].type->nullable = 0;
    int32_t next = 0;
    for (size_t i = 0; i < s->n_fields; i++) {
        s->fields[i].id = next++;
        assign_ids(s->fields[i].type, &next);
    }
    s->highest_field_id = next - 1;
    s->version = 3;
    s->id = 0;
    if (!s->time_millis) s->time_millis = pm_now_millis();
    if (java_hashmap_order(s->options, s->n_options)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

int pm_create_table(const char *uri, pm_schema *s, pm_err *e) {
    return pm_create_table_opts(uri, s, NULL, e);
}

int pm_create_table_opts(const char *uri, pm_schema *s, const char *const *options, pm_err *e) {
    if (!uri || !*uri) return pm_fail(e, PAIMON_MISUSE, "table path is empty");
    if (pm_uri_is_bucket_root(uri)) return pm_fail(e, PAIMON_MISUSE, PM_BUCKET_ROOT_MSG, uri);
    int rc = pm_create_normalize(s, e);
    if (rc) return rc;
    pm_fileio *io;
    if ((rc = pm_fileio_open(uri, options, &io, e))) return rc;
    char *root = pm_strdup(pm_local_path(uri));
    char *path = NULL;
    pm_buf json = {0};
    int64_t *ids = NULL;
    size_t n = 0;
    if (!root) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto done; }
    size_t l = strlen(root);
    while (l > 1 && root[l - 1] == '/') root[--l] = '\0';
    rc = pm_schema_list_ids(io, root, &ids, &n, e);
    if (rc == PAIMON_NOTFOUND) { rc = PAIMON_OK; n = 0; pm_err_clear(e); }
    if (rc) goto done;
    if (n) { rc = pm_fail(e, PAIMON_EXISTS, "%s: the table already exists (schema/schema-%lld)", root, (long long)ids[0]); goto done; }
    if (pm_schema_to_json(s, &json)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto done; }
    path = pm_path_join(root, "schema/schema-0");
    if (!path) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto done; }
    rc = pm_io_create_no_replace(io, path, json.data, json.len, e);
    if (rc == PAIMON_EXISTS) pm_fail(e, PAIMON_EXISTS, "%s: the table already exists (schema/schema-0)", root);
done:
    free(ids);
    free(path);
    free(root);
    pm_buf_free(&json);
    pm_fileio_destroy(io);
    return rc;
}
