/* Table handle, partition rendering, live-file scan, public C API. */
#include "pm_table.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

static int is_true(const char *v) { return v && !strcasecmp(v, "true"); }

void pm_table_free(paimon_table *t) {
    if (!t) return;
    pm_schema_free(t->schema);
    free(t->part_keys);
    free(t->part_types);
    free(t->root);
    free(t->branch);
    free(t->branch_root);
    pm_schema_known_free(t->schemas_known);
    for (size_t i = 0; i < t->n_file_schemas; i++) pm_schema_free(t->file_schemas[i]);
    free(t->file_schemas);
    pm_options_free(t->io_options);
    pm_fileio_destroy(t->io);
    free(t);
}

int pm_table_file_schema(paimon_table *t, int64_t id, const pm_schema **out, pm_err *e) {
    if (id == t->schema->id) { *out = t->schema; return PAIMON_OK; }
    for (size_t i = 0; i < t->n_file_schemas; i++)
        if (t->file_schemas[i]->id == id) { *out = t->file_schemas[i]; return PAIMON_OK; }
    pm_schema *s;
    int rc = pm_schema_read(t->io, t->branch_root, id, &s, e);
    if (rc) return rc;
    pm_schema **v = realloc(t->file_schemas, (t->n_file_schemas + 1) * sizeof *v);
    if (!v) { pm_schema_free(s); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    t->file_schemas = v;
    v[t->n_file_schemas++] = s;
    *out = s;
    return PAIMON_OK;
}

/* The handle's derived view of its schema: partition columns and the path options. */
static int bind_schema(paimon_table *t, pm_err *e) {
    int rc;
    t->n_part = t->schema->n_partition_keys;
    free(t->part_keys);
    free(t->part_types);
    t->part_keys = calloc(t->n_part ? t->n_part : 1, sizeof *t->part_keys);
    t->part_types = calloc(t->n_part ? t->n_part : 1, sizeof *t->part_types);
    if (!t->part_keys || !t->part_types) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    for (size_t i = 0; i < t->n_part; i++) {
        const pm_data_field *f = pm_schema_field(t->schema, t->schema->partition_keys[i]);
        if (!f) {
            rc = pm_fail(e, PAIMON_CORRUPT, "%s/schema/schema-%lld: partition key '%s' is not a column",
                         t->branch_root, (long long)t->schema->id, t->schema->partition_keys[i]);
            return rc;
        }
        t->part_keys[i] = f->name;
        t->part_types[i] = f->type;
    }
    t->default_part_name = pm_schema_option_or_default(t->schema, "partition.default-name");
    if (!t->default_part_name) t->default_part_name = "__DEFAULT_PARTITION__";
    const char *legacy = pm_schema_option_or_default(t->schema, "partition.legacy-name");
    t->legacy_part_name = legacy ? is_true(legacy) : 1;
    t->data_dir = pm_schema_option(t->schema, "data-file.path-directory");
    return PAIMON_OK;
}

int pm_table_use_schema(paimon_table *t, pm_schema *s, pm_err *e) {
    pm_schema **v = realloc(t->file_schemas, (t->n_file_schemas + 1) * sizeof *v);
    if (!v) { pm_schema_free(s); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    t->file_schemas = v;
    v[t->n_file_schemas++] = t->schema;      /* kept: writers and iterators may point into it */
    t->schema = s;
    return bind_schema(t, e);
}

static int valid_branch_name(const char *b) {
    if (!*b || strchr(b, '/') || !strcmp(b, ".") || !strcmp(b, "..")) return 0;
    for (const char *p = b; *p; p++) if ((unsigned char)*p < 0x20) return 0;
    return 1;
}

/* Opens with `io` when given (borrowed: the caller puts it in place after
 * success), else with a FileIO of its own for uri and options. */
static int table_open(const char *uri, const char *branch, const char *const *options, pm_fileio *io,
                      paimon_table **out, pm_err *e) {
    *out = NULL;
    if (!uri || !*uri) return pm_fail(e, PAIMON_MISUSE, "table path is empty");
    if (pm_uri_is_bucket_root(uri)) return pm_fail(e, PAIMON_MISUSE, PM_BUCKET_ROOT_MSG, uri);
    paimon_table *t = calloc(1, sizeof *t);
    if (!t) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = pm_options_dup(options, &t->io_options, e);
    if (rc) goto fail;
    if (!(t->schemas_known = pm_schema_known_new())) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto fail; }
    if (io) t->io = io;
    else if ((rc = pm_fileio_open(uri, options, &t->io, e))) goto fail;
    t->root = pm_strdup(pm_local_path(uri));
    if (!t->root) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto fail; }
    size_t l = strlen(t->root);
    while (l > 1 && t->root[l - 1] == '/') t->root[--l] = '\0';
    if (branch && strcmp(branch, "main")) {
        if (!valid_branch_name(branch)) { rc = pm_fail(e, PAIMON_MISUSE, "invalid branch name '%s'", branch); goto fail; }
        t->branch = pm_strdup(branch);
        char rel[1100];
        snprintf(rel, sizeof rel, "branch/branch-%s", branch);
        t->branch_root = pm_path_join(t->root, rel);
    } else {
        t->branch = pm_strdup("main");
        t->branch_root = pm_strdup(t->root);
    }
    pm_stat st;
    rc = pm_io_stat(t->io, t->root, &st, e);
    if (rc == PAIMON_NOTFOUND) { rc = pm_fail(e, PAIMON_NOTFOUND, "%s: no such table directory", t->root); goto fail; }
    if (rc) goto fail;
    if (!st.is_dir) { rc = pm_fail(e, PAIMON_IO, "%s: not a directory", t->root); goto fail; }
    if (strcmp(t->branch, "main")) {
        rc = pm_io_stat(t->io, t->branch_root, &st, e);
        if (rc == PAIMON_NOTFOUND) { rc = pm_fail(e, PAIMON_NOTFOUND, "%s: branch '%s' does not exist", t->root, t->branch); goto fail; }
        if (rc) goto fail;
    }
    int64_t *ids = NULL;
    size_t n = 0;
    rc = pm_schema_list_ids(t->io, t->branch_root, &ids, &n, e);
    if (rc == PAIMON_NOTFOUND || (!rc && n == 0)) {
        free(ids);
        rc = pm_fail(e, PAIMON_NOTFOUND, "%s: not a Paimon table (no schema/schema-N)", t->branch_root);
        goto fail;
    }
    if (rc) goto fail;
    int64_t latest = ids[n - 1];
    free(ids);
    rc = pm_schema_read(t->io, t->branch_root, latest, &t->schema, e);
    if (rc) goto fail;
    if ((rc = bind_schema(t, e))) goto fail;
    *out = t;
    return PAIMON_OK;
fail:
    if (io) t->io = NULL;   /* the caller's */
    pm_table_free(t);
    return rc ? rc : PAIMON_ERROR;
}

int pm_table_open_opts(const char *uri, const char *branch, const char *const *options, paimon_table **out,
                       pm_err *e) {
    return table_open(uri, branch, options, NULL, out, e);
}

int pm_table_open(const char *uri, const char *branch, paimon_table **out, pm_err *e) {
    return table_open(uri, branch, NULL, NULL, out, e);
}

int pm_table_check_manifest_format(const paimon_table *t, pm_err *e) {
    const char *fmt = pm_schema_option(t->schema, "manifest.format");
    if (fmt && strcasecmp(fmt, "avro"))
        return pm_fail(e, PAIMON_UNSUPPORTED,
                       "%s: the table sets manifest.format=%s; paimon-lua reads only Avro manifests (manifest.format=avro)",
                       t->root, fmt);
    return PAIMON_OK;
}

char *pm_table_manifest_path(const paimon_table *t, const char *name) {
    char *dir = pm_path_join(t->root, "manifest");
    char *p = dir ? pm_path_join(dir, name) : NULL;
    free(dir);
    return p;
}

char *pm_table_index_path(const paimon_table *t, const char *name) {
    char *dir = pm_path_join(t->root, "index");
    char *p = dir ? pm_path_join(dir, name) : NULL;
    free(dir);
    return p;
}

/* Names stored in metadata are plain file names; anything with a path
 * separator or dot-dot would let metadata point outside the table. */
static int safe_file_name(const char *name) {
    return name && *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

int pm_table_open_manifest(const paimon_table *t, const char *name, pm_manifest_kind kind,
                           pm_manifest_reader **out, pm_err *e) {
    return pm_table_open_manifest_sized(t, name, -1, kind, out, e);
}

int pm_table_open_manifest_sized(const paimon_table *t, const char *name, int64_t size, pm_manifest_kind kind,
                                 pm_manifest_reader **out, pm_err *e) {
    *out = NULL;
    int rc = pm_table_check_manifest_format(t, e);
    if (rc) return rc;
    if (!safe_file_name(name))
        return pm_fail(e, PAIMON_CORRUPT, "%s: invalid manifest file name '%s'", t->root, name ? name : "(null)");
    char *path = pm_table_manifest_path(t, name);
    char display[600];
    snprintf(display, sizeof display, "%s/manifest/%s", t->root, name);
    rc = path ? pm_manifest_open_sized(t->io, path, display, size, kind, out, e) : pm_nomem(e);
    if (rc == PAIMON_NOTFOUND) pm_fail(e, PAIMON_NOTFOUND, "%s: manifest file is missing", display);
    free(path);
    return rc;
}

int pm_table_partition_decode(const paimon_table *t, pm_bytes part, pm_datum *vals, pm_err *e) {
    return pm_binrow_decode(part.ptr, part.len, t->part_types, t->n_part, vals, e);
}

int pm_table_partition_path(const paimon_table *t, pm_bytes part, pm_buf *out, pm_err *e) {
    if (t->n_part == 0) return pm_buf_cstr(out);
    pm_datum stackv[16];
    pm_datum *vals = t->n_part <= 16 ? stackv : malloc(t->n_part * sizeof *vals);
    if (!vals) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = pm_table_partition_decode(t, part, vals, e);
    if (!rc) rc = pm_partition_path(t->part_keys, t->part_types, t->n_part, vals, t->default_part_name,
                                    t->legacy_part_name, out);
    if (!rc) rc = pm_buf_cstr(out);
    if (vals != stackv) free(vals);
    return rc;
}

int pm_table_file_path(const paimon_table *t, const pm_manifest_entry *m, pm_buf *out, pm_err *e) {
    out->len = 0;
    if (m->file.external_path) {
        return pm_buf_append(out, m->file.external_path, strlen(m->file.external_path)) | pm_buf_cstr(out);
    }
    if (!safe_file_name(m->file.file_name))
        return pm_fail(e, PAIMON_CORRUPT, "%s: manifest names an invalid data file '%s'", t->root, m->file.file_name);
    if (t->data_dir && *t->data_dir) {
        pm_buf_append(out, t->data_dir, strlen(t->data_dir));
        if (out->data[out->len - 1] != '/') pm_buf_putc(out, '/');
    }
    int rc = pm_table_partition_path(t, m->partition, out, e);
    if (rc) return rc;
    if (m->bucket == -2) rc = pm_buf_printf(out, "bucket-postpone/%s", m->file.file_name);
    else rc = pm_buf_printf(out, "bucket-%d/%s", (int)m->bucket, m->file.file_name);
    return rc ? rc : pm_buf_cstr(out);
}

static int put_len_bytes(pm_buf *b, const void *p, size_t n) {
    uint32_t l = (uint32_t)n;
    return pm_buf_append(b, &l, 4) | pm_buf_append(b, p, n);
}

int pm_file_identifier(const pm_manifest_entry *m, pm_buf *out) {
    out->len = 0;
    int rc = put_len_bytes(out, m->partition.ptr, m->partition.len);
    rc |= pm_buf_append(out, &m->bucket, 4);
    rc |= pm_buf_append(out, &m->file.level, 4);
    rc |= put_len_bytes(out, m->file.file_name, strlen(m->file.file_name));
    uint32_t n = (uint32_t)m->file.extra_files.n;
    rc |= pm_buf_append(out, &n, 4);
    for (size_t i = 0; i < m->file.extra_files.n; i++)
        rc |= put_len_bytes(out, m->file.extra_files.v[i], strlen(m->file.extra_files.v[i]));
    rc |= pm_buf_putc(out, (uint8_t)m->file.has_embedded_index);
    if (m->file.has_embedded_index) rc |= put_len_bytes(out, m->file.embedded_index.ptr, m->file.embedded_index.len);
    rc |= pm_buf_putc(out, m->file.external_path != NULL);
    if (m->file.external_path) rc |= put_len_bytes(out, m->file.external_path, strlen(m->file.external_path));
    return rc;
}

/* ---- partition filter ------------------------------------------------- */

static int key_index(const paimon_table *t, const char *key) {
    for (size_t i = 0; i < t->n_part; i++)
        if (!strcmp(t->part_keys[i], key)) return (int)i;
    return -1;
}

/* Whether `v` can be a value of partition column type ty as Paimon renders
 * it (a value that cannot never matches: a typo, not "nothing to drop").
 * Types whose text has several forms (time, timestamp) are not checked. */
static int value_parses(const pm_type *ty, const char *v) {
    char *end;
    switch (ty->root) {
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT: {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (errno || end == v || *end) return 0;
        long long lo = ty->root == PM_T_TINYINT ? -128 : ty->root == PM_T_SMALLINT ? -32768
                     : ty->root == PM_T_INT ? -2147483648LL : LLONG_MIN;
        long long hi = ty->root == PM_T_TINYINT ? 127 : ty->root == PM_T_SMALLINT ? 32767
                     : ty->root == PM_T_INT ? 2147483647LL : LLONG_MAX;
        return x >= lo && x <= hi;
    }
    case PM_T_FLOAT: case PM_T_DOUBLE:
        errno = 0;
        (void)strtod(v, &end);
        return end != v && !*end;
    case PM_T_DECIMAL: {
        const char *q = v + (*v == '-' || *v == '+');
        size_t digits = 0;
        while (*q >= '0' && *q <= '9') { q++; digits++; }
        if (*q == '.') for (q++; *q >= '0' && *q <= '9'; q++) digits++;
        return digits > 0 && !*q;
    }
    case PM_T_BOOLEAN:
        return !strcasecmp(v, "true") || !strcasecmp(v, "false");
    case PM_T_DATE: {   /* legacy: days since the epoch; else yyyy-MM-dd */
        errno = 0;
        (void)strtoll(v, &end, 10);
        if (!errno && end != v && !*end) return 1;
        int y, m, d, n = 0;
        return sscanf(v, "%d-%d-%d%n", &y, &m, &d, &n) == 3 && !v[n] && m >= 1 && m <= 12 && d >= 1 && d <= 31;
    }
    default:
        return 1;
    }
}

int pm_partition_filter_check(const paimon_table *t, const pm_partition_filter *f, pm_err *e) {
    if (!f) return PAIMON_OK;
    for (size_t i = 0; i < f->n; i++) {
        int k = key_index(t, f->keys[i]);
        const char *v = f->values[i];
        if (k >= 0 && v && strcmp(v, t->default_part_name) && !value_parses(t->part_types[k], v))
            return pm_fail(e, PAIMON_MISUSE, "'%s' is not a value of partition key '%s' (%s) of %s", v, f->keys[i],
                           pm_type_root_name(t->part_types[k]->root), t->root);
        if (k < 0) {
            pm_buf keys = {0};
            for (size_t j = 0; j < t->n_part; j++) pm_buf_printf(&keys, "%s%s", j ? ", " : "", t->part_keys[j]);
            pm_buf_cstr(&keys);
            int rc = pm_fail(e, PAIMON_MISUSE, "'%s' is not a partition key of %s (partition keys: %s)",
                             f->keys[i], t->root, t->n_part ? (char *)keys.data : "none, the table is unpartitioned");
            pm_buf_free(&keys);
            return rc;
        }
    }
    return PAIMON_OK;
}

/* Java turns a spec into a row (convertSpecToInternalRow): the default
 * partition name is null, any other text is the column's value. So null and
 * "" (both in the __DEFAULT_PARTITION__ directory) are different partitions. */
static int value_matches(const paimon_table *t, size_t k, const pm_datum *d, const char *want) {
    const pm_type *ty = t->part_types[k];
    if (d->is_null) return want == NULL || !strcmp(want, t->default_part_name);
    if (!want) return 0;
    pm_buf b = {0};
    int ok = 0;
    for (int legacy = 1; legacy >= 0 && !ok; legacy--) {
        b.len = 0;
        if (!pm_datum_to_string(ty, d, legacy, &b) && !pm_buf_cstr(&b)) ok = !strcmp((char *)b.data, want);
    }
    pm_buf_free(&b);
    return ok;
}

int pm_partition_matches(const paimon_table *t, const pm_partition_filter *f, pm_bytes part, pm_err *e) {
    if (!f || f->n == 0) return 1;
    pm_datum stackv[16];
    pm_datum *vals = t->n_part <= 16 ? stackv : malloc(t->n_part * sizeof *vals);
    if (!vals) return -pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = pm_table_partition_decode(t, part, vals, e), res = 1;
    if (rc) res = -rc;
    for (size_t i = 0; res == 1 && i < f->n; i++) {
        int k = key_index(t, f->keys[i]);
        if (k < 0 || !value_matches(t, (size_t)k, &vals[k], f->values[i])) res = 0;
    }
    if (vals != stackv) free(vals);
    return res;
}

/* Manifest pruning: only integer and string columns, only when the wanted
 * value is certainly outside [min, max]. Anything unclear keeps the file. */
static int cmp_datum(const pm_type *ty, const pm_datum *a, const char *want, int *out) {
    switch (ty->root) {
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT: {
        char *end;
        errno = 0;
        long long w = strtoll(want, &end, 10);
        if (errno || *end || end == want) return 0;
        *out = a->v.i < w ? -1 : a->v.i > w;
        return 1;
    }
    case PM_T_CHAR: case PM_T_VARCHAR: {
        size_t wl = strlen(want), n = a->v.bin.len < wl ? a->v.bin.len : wl;
        int c = memcmp(a->v.bin.ptr, want, n);
        *out = c ? (c < 0 ? -1 : 1) : (a->v.bin.len < wl ? -1 : a->v.bin.len > wl);
        return 1;
    }
    default:
        return 0;
    }
}

static int manifest_may_match(const paimon_table *t, const pm_partition_filter *f, const pm_mfile *m) {
    if (!f || f->n == 0 || !m->pmin || !m->pmax || t->n_part == 0 || t->n_part > 16) return 1;
    pm_datum mins[16], maxs[16];
    pm_err e;
    if (pm_binrow_decode(m->pmin, m->pmin_len, t->part_types, t->n_part, mins, &e) ||
        pm_binrow_decode(m->pmax, m->pmax_len, t->part_types, t->n_part, maxs, &e))
        return 1;
    for (size_t i = 0; i < f->n; i++) {
        int k = key_index(t, f->keys[i]);
        const char *want = f->values[i];
        if (k < 0 || !want || !strcmp(want, t->default_part_name)) continue;
        if (mins[k].is_null || maxs[k].is_null) continue;
        int c1, c2;
        if (cmp_datum(t->part_types[k], &mins[k], want, &c1) && cmp_datum(t->part_types[k], &maxs[k], want, &c2))
            if (c1 > 0 || c2 < 0) return 0;
    }
    return 1;
}

/* ---- manifest lists ----------------------------------------------------- */

void pm_mfiles_free(pm_mfile *v, size_t n) {
    for (size_t i = 0; i < n; i++) { free(v[i].name); free(v[i].pmin); free(v[i].pmax); }
    free(v);
}

static uint8_t *dup_bytes(pm_bytes b) {
    uint8_t *p = malloc(b.len ? b.len : 1);
    if (p && b.len) memcpy(p, b.ptr, b.len);
    return p;
}

int pm_mfile_append(pm_mfile **v, size_t *n, size_t *cap, const pm_manifest_meta *m, pm_err *e) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        pm_mfile *nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        *v = nv;
        *cap = nc;
    }
    pm_mfile *x = &(*v)[*n];
    memset(x, 0, sizeof *x);
    x->name = pm_strdup(m->file_name);
    x->size = m->file_size;
    x->added = m->num_added_files;
    x->deleted = m->num_deleted_files;
    x->schema_id = m->schema_id;
    if (m->partition_stats.min_values.ptr) {
        x->pmin = dup_bytes(m->partition_stats.min_values);
        x->pmin_len = m->partition_stats.min_values.len;
        x->pmax = dup_bytes(m->partition_stats.max_values);
        x->pmax_len = m->partition_stats.max_values.len;
    }
    (*n)++;
    if (!x->name || (m->partition_stats.min_values.ptr && (!x->pmin || !x->pmax)))
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

int pm_read_manifest_list(const paimon_table *t, const char *list_name, pm_mfile **v, size_t *n, pm_err *e) {
    return pm_read_manifest_list_sized(t, list_name, -1, v, n, e);
}

int pm_read_manifest_list_sized(const paimon_table *t, const char *list_name, int64_t size, pm_mfile **v,
                                size_t *n, pm_err *e) {
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest_sized(t, list_name, size, PM_MANIFEST_LIST, &r, e);
    if (rc) return rc;
    size_t cap = *n;
    const pm_manifest_meta *m;
    while ((rc = pm_manifest_next_meta(r, &m, e)) == PAIMON_OK)
        if ((rc = pm_mfile_append(v, n, &cap, m, e))) break;
    pm_manifest_close(r);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

/* ---- file paths (shared by the maintenance operations) ------------------------ */

/* A plain file name: what a name from a manifest or snapshot must be. */
static int safe_name(const char *n) {
    return n && *n && !strchr(n, '/') && strcmp(n, ".") && strcmp(n, "..");
}

int pm_table_reachable(const paimon_table *t, const char *path, pm_err *e) {
    if (pm_uri_same_fileio(t->root, path)) return PAIMON_OK;
    return pm_fail(e, PAIMON_UNSUPPORTED,
                   "%s: external path %s is on another file system than the table; paimon-lua reaches a "
                   "table's files through the table's FileIO only", t->root, path);
}

int pm_data_file_full_path(const paimon_table *t, const pm_manifest_entry *m, pm_buf *out, pm_err *e) {
    pm_buf rel = {0};
    int rc = pm_table_file_path(t, m, &rel, e);
    out->len = 0;
    if (!rc) {
        if (m->file.external_path) rc = pm_buf_printf(out, "%s", pm_local_path((char *)rel.data));
        else rc = pm_buf_printf(out, "%s/%s", t->root, (char *)rel.data);
        if (rc) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    pm_buf_free(&rel);
    return rc;
}

int pm_extra_file_path(const char *data_path, const char *extra, const char *root, pm_buf *out, pm_err *e) {
    if (!safe_name(extra))
        return pm_fail(e, PAIMON_CORRUPT, "%s: manifest names an invalid extra file '%s' of %s", root, extra,
                       data_path);
    const char *slash = strrchr(data_path, '/');
    size_t dl = slash ? (size_t)(slash - data_path) : 0;
    out->len = 0;
    if (pm_buf_append(out, data_path, dl) || pm_buf_printf(out, "/%s", extra)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

int pm_index_file_path(const paimon_table *t, const pm_index_entry *ie, pm_buf *out, pm_err *e) {
    out->len = 0;
    if (ie->external_path && *ie->external_path) {
        if (pm_buf_printf(out, "%s", pm_local_path(ie->external_path))) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        return PAIMON_OK;
    }
    if (!safe_name(ie->file_name))
        return pm_fail(e, PAIMON_CORRUPT, "%s: index manifest names an invalid index file '%s'", t->root,
                       ie->file_name ? ie->file_name : "(null)");
    const char *in_data = pm_schema_option_or_default(t->schema, "index-file-in-data-file-dir");
    if (in_data && !strcasecmp(in_data, "true")) {
        pm_buf part = {0};
        int rc = pm_table_partition_path(t, ie->partition, &part, e);
        if (!rc) {
            if (t->data_dir && *t->data_dir)
                rc = pm_buf_printf(out, "%s/%s%s%s", t->root, t->data_dir,
                                   t->data_dir[strlen(t->data_dir) - 1] == '/' ? "" : "/", (char *)part.data);
            else
                rc = pm_buf_printf(out, "%s/%s", t->root, (char *)part.data);
            if (!rc) rc = ie->bucket == -2 ? pm_buf_printf(out, "bucket-postpone/%s", ie->file_name)
                                           : pm_buf_printf(out, "bucket-%d/%s", (int)ie->bucket, ie->file_name);
            if (rc) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
        }
        pm_buf_free(&part);
        return rc;
    }
    if (pm_buf_printf(out, "%s/index/%s", t->root, ie->file_name)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    return PAIMON_OK;
}

int pm_table_open_shared(paimon_table *t, const char *branch, paimon_table **out, pm_err *e) {
    /* t's FileIO itself: a FileIO opened again from t->root alone would
     * lack t's options (endpoint, credentials) */
    return table_open(t->root, branch, (const char *const *)t->io_options, t->io, out, e);
}

void pm_table_free_shared(paimon_table *bt) {
    if (!bt) return;
    bt->io = NULL;
    pm_table_free(bt);
}

int pm_table_meta_path(const paimon_table *t, const char *sub, const char *name, pm_buf *out, pm_err *e) {
    if (!safe_name(name))
        return pm_fail(e, PAIMON_CORRUPT, "%s: metadata names an invalid file '%s'", t->root, name ? name : "(null)");
    out->len = 0;
    return pm_buf_printf(out, "%s/%s/%s", t->root, sub, name) ? pm_fail(e, PAIMON_NOMEM, "out of memory") : PAIMON_OK;
}

/* ---- scan ----------------------------------------------------------------- */

struct pm_scan {
    paimon_table *t;
    pm_partition_filter filter;   /* borrowed */
    int has_filter;
    pm_mfile *files;
    size_t n_files, next_file, pruned;
    pm_set *deleted;
    pm_manifest_reader *cur;
    pm_buf key;
};

void pm_scan_close(pm_scan *sc) {
    if (!sc) return;
    pm_manifest_close(sc->cur);
    pm_mfiles_free(sc->files, sc->n_files);
    pm_set_free(sc->deleted);
    pm_buf_free(&sc->key);
    free(sc);
}

size_t pm_scan_manifests_pruned(const pm_scan *sc) { return sc->pruned; }

/* files (owned; NULL: read s's lists): the snapshot's manifests. */
static int scan_open(paimon_table *t, const pm_snapshot *s, pm_mfile *files, size_t n_files,
                     const pm_partition_filter *f, pm_scan **out, pm_err *e) {
    *out = NULL;
    int rc = pm_partition_filter_check(t, f, e);
    if (rc) { pm_mfiles_free(files, n_files); return rc; }
    pm_scan *sc = calloc(1, sizeof *sc);
    if (!sc) { pm_mfiles_free(files, n_files); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    sc->t = t;
    if (f && f->n) { sc->filter = *f; sc->has_filter = 1; }
    sc->deleted = pm_set_new();
    if (!sc->deleted) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); goto fail; }
    int read_lists = files == NULL;
    if (!read_lists) {   /* the caller's lists, read already */
        sc->files = files;
        sc->n_files = n_files;
        files = NULL;
        n_files = 0;
    }
    if (read_lists && s->base_manifest_list &&
        (rc = pm_read_manifest_list(t, s->base_manifest_list, &sc->files, &sc->n_files, e))) goto fail;
    if (read_lists && s->delta_manifest_list &&
        (rc = pm_read_manifest_list(t, s->delta_manifest_list, &sc->files, &sc->n_files, e))) goto fail;
    /* Prune, then collect deletions. Unlike pm_refs_live (maintenance,
     * where a wrong count could delete a file in use), the read path
     * trusts the list's delete counts and skips manifests that record none:
     * a deliberate optimisation (most manifests of a table only add), and
     * Java's own writers keep the counts exact. */
    for (size_t i = 0; i < sc->n_files; i++) {
        pm_mfile *m = &sc->files[i];
        if (sc->has_filter && !manifest_may_match(t, &sc->filter, m)) {
            m->added = m->deleted = 0;        /* skipped in both passes */
            sc->pruned++;
            continue;
        }
        if (m->deleted == 0) continue;
        pm_manifest_reader *r;
        if ((rc = pm_table_open_manifest(t, m->name, PM_MANIFEST_FILE, &r, e))) goto fail;
        const pm_manifest_entry *me;
        while ((rc = pm_manifest_next_entry(r, &me, e)) == PAIMON_OK) {
            if (me->kind != PM_FILE_DELETE) continue;
            if (pm_file_identifier(me, &sc->key) || pm_set_add(sc->deleted, sc->key.data, sc->key.len) < 0) {
                rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
                break;
            }
        }
        pm_manifest_close(r);
        if (rc != PAIMON_DONE) goto fail;
    }
    *out = sc;
    return PAIMON_OK;
fail:
    pm_mfiles_free(files, n_files);   /* not handed over yet */
    pm_scan_close(sc);
    return rc;
}

int pm_scan_open(paimon_table *t, const pm_snapshot *s, const pm_partition_filter *f, pm_scan **out, pm_err *e) {
    return scan_open(t, s, NULL, 0, f, out, e);
}

int pm_scan_open_files(paimon_table *t, const pm_snapshot *s, pm_mfile *files, size_t n, pm_scan **out, pm_err *e) {
    return scan_open(t, s, files, n, NULL, out, e);
}

int pm_scan_next(pm_scan *sc, const pm_manifest_entry **out, pm_err *e) {
    for (;;) {
        if (!sc->cur) {
            while (sc->next_file < sc->n_files && sc->files[sc->next_file].added == 0) sc->next_file++;
            if (sc->next_file >= sc->n_files) return PAIMON_DONE;
            int rc = pm_table_open_manifest(sc->t, sc->files[sc->next_file++].name, PM_MANIFEST_FILE, &sc->cur, e);
            if (rc) return rc;
        }
        const pm_manifest_entry *m;
        int rc = pm_manifest_next_entry(sc->cur, &m, e);
        if (rc == PAIMON_DONE) { pm_manifest_close(sc->cur); sc->cur = NULL; continue; }
        if (rc) return rc;
        if (m->kind != PM_FILE_ADD) continue;
        if (pm_set_size(sc->deleted)) {
            if (pm_file_identifier(m, &sc->key)) return pm_fail(e, PAIMON_NOMEM, "out of memory");
            if (pm_set_contains(sc->deleted, sc->key.data, sc->key.len)) continue;
        }
        if (sc->has_filter) {
            int mt = pm_partition_matches(sc->t, &sc->filter, m->partition, e);
            if (mt < 0) return -mt;
            if (!mt) continue;
        }
        *out = m;
        return PAIMON_OK;
    }
}
