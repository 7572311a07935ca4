/* ALTER TABLE (Java SchemaManager.commitChanges / generateTableSchema). */
#include "pm_alter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pm_create.h"
#include "pm_fileio.h"

const char *pm_alter_kind_name(pm_alter_kind k) {
    static const char *const names[] = {"setOption", "removeOption", "updateComment", "addColumn",
                                        "renameColumn", "dropColumn", "updateColumnType",
                                        "updateColumnNullability", "updateColumnComment",
                                        "updateColumnPosition"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

/* ---- casts (DataTypeCasts + CastExecutors) --------------------------------------------- */

enum {
    F_PREDEFINED = 1, F_CHARSTR = 2, F_BINSTR = 4, F_NUMERIC = 8, F_INTNUM = 16, F_EXACT = 32,
    F_APPROX = 64, F_DATETIME = 128, F_TIME = 256, F_TIMESTAMP = 512, F_CONSTRUCTED = 1024
};

static unsigned families(pm_type_root r) {
    switch (r) {
    case PM_T_CHAR: case PM_T_VARCHAR: return F_PREDEFINED | F_CHARSTR;
    case PM_T_BOOLEAN: return F_PREDEFINED;
    case PM_T_BINARY: case PM_T_VARBINARY: return F_PREDEFINED | F_BINSTR;
    case PM_T_DECIMAL: return F_PREDEFINED | F_NUMERIC | F_EXACT;
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT:
        return F_PREDEFINED | F_NUMERIC | F_INTNUM | F_EXACT;
    case PM_T_FLOAT: case PM_T_DOUBLE: return F_PREDEFINED | F_NUMERIC | F_APPROX;
    case PM_T_DATE: return F_PREDEFINED | F_DATETIME;
    case PM_T_TIME: return F_PREDEFINED | F_DATETIME | F_TIME;
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ: return F_PREDEFINED | F_DATETIME | F_TIMESTAMP;
    case PM_T_ARRAY: case PM_T_MULTISET: case PM_T_MAP: case PM_T_ROW: return F_CONSTRUCTED;
    default: return 0;
    }
}

#define R(x) (1ull << (x))
static int in(pm_type_root s, unsigned long long roots, unsigned fams) {
    return (roots & R(s)) || (families(s) & fams);
}

/* implicitCastingRules / explicitCastingRules of DataTypeCasts */
static int implicit_ok(pm_type_root s, pm_type_root t) {
    switch (t) {
    case PM_T_CHAR: return s == PM_T_CHAR;
    case PM_T_VARCHAR: return in(s, 0, F_CHARSTR);
    case PM_T_BOOLEAN: return s == PM_T_BOOLEAN;
    case PM_T_BINARY: return s == PM_T_BINARY;
    case PM_T_VARBINARY: return in(s, 0, F_BINSTR);
    case PM_T_DECIMAL: return in(s, 0, F_NUMERIC);
    case PM_T_TINYINT: return s == PM_T_TINYINT;
    case PM_T_SMALLINT: return in(s, R(PM_T_TINYINT) | R(PM_T_SMALLINT), 0);
    case PM_T_INT: return in(s, R(PM_T_TINYINT) | R(PM_T_SMALLINT) | R(PM_T_INT), 0);
    case PM_T_BIGINT: return in(s, 0, F_INTNUM);
    case PM_T_FLOAT: return in(s, 0, F_INTNUM) || s == PM_T_FLOAT || s == PM_T_DECIMAL;
    case PM_T_DOUBLE: return in(s, 0, F_NUMERIC);
    case PM_T_DATE: return s == PM_T_DATE || s == PM_T_TIMESTAMP;
    case PM_T_TIME: return s == PM_T_TIME || s == PM_T_TIMESTAMP;
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ: return s == PM_T_TIMESTAMP || s == PM_T_TIMESTAMP_LTZ;
    default: return s == t;
    }
}

static int explicit_ok(pm_type_root s, pm_type_root t) {
    const unsigned long long bool_ts = R(PM_T_BOOLEAN) | R(PM_T_TIMESTAMP) | R(PM_T_TIMESTAMP_LTZ);
    switch (t) {
    case PM_T_CHAR: case PM_T_VARCHAR: return in(s, 0, F_PREDEFINED | F_CONSTRUCTED);
    case PM_T_BOOLEAN: return in(s, 0, F_CHARSTR | F_INTNUM);
    case PM_T_BINARY: return in(s, R(PM_T_VARBINARY), F_CHARSTR);
    case PM_T_VARBINARY: return in(s, R(PM_T_BINARY), F_CHARSTR);
    case PM_T_DECIMAL: return in(s, bool_ts, F_CHARSTR);
    case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT: case PM_T_FLOAT:
        return in(s, bool_ts, F_NUMERIC | F_CHARSTR);
    case PM_T_DOUBLE: return in(s, bool_ts, F_CHARSTR);
    case PM_T_DATE: return in(s, 0, F_TIMESTAMP | F_CHARSTR);
    case PM_T_TIME: return in(s, 0, F_TIME | F_TIMESTAMP | F_CHARSTR);
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ: return in(s, 0, F_DATETIME | F_CHARSTR | F_NUMERIC);
    default: return 0;
    }
}

/* a CastExecutors rule for (s -> t) */
static int executor_ok(pm_type_root s, pm_type_root t) {
    unsigned fs = families(s), ft = families(t);
    int s_prim = (fs & (F_INTNUM | F_APPROX)) != 0, t_prim = (ft & (F_INTNUM | F_APPROX)) != 0;
    int s_ts = (fs & F_TIMESTAMP) != 0, t_ts = (ft & F_TIMESTAMP) != 0;
    if (s == PM_T_DECIMAL && t == PM_T_DECIMAL) return 1;
    if (s_prim && t == PM_T_DECIMAL) return 1;
    if (s == PM_T_DECIMAL && t_prim) return 1;
    if (s_prim && t_prim) return 1;
    if ((fs & F_NUMERIC) && t_ts) return 1;
    if (s == PM_T_BOOLEAN && (ft & F_NUMERIC)) return 1;
    if ((fs & F_INTNUM) && t == PM_T_BOOLEAN) return 1;
    if (ft & F_CHARSTR) {
        if ((fs & (F_NUMERIC | F_CHARSTR | F_BINSTR)) || s == PM_T_BOOLEAN || s_ts || s == PM_T_TIME ||
            s == PM_T_DATE || s == PM_T_ARRAY || s == PM_T_MAP || s == PM_T_ROW)
            return 1;
    }
    if (fs & F_CHARSTR) {
        if (t == PM_T_BOOLEAN || t == PM_T_DECIMAL || t_prim || t == PM_T_DATE || t == PM_T_TIME || t_ts ||
            (ft & F_BINSTR) || t == PM_T_ARRAY || t == PM_T_MAP || t == PM_T_ROW)
            return 1;
    }
    if (s_ts && (t_ts || t == PM_T_DATE || t == PM_T_TIME || t == PM_T_BIGINT || t == PM_T_INT)) return 1;
    if ((s == PM_T_DATE || s == PM_T_TIME) && t_ts) return 1;
    if ((fs & F_BINSTR) && (ft & F_BINSTR)) return 1;
    return 0;
}

static int type_equal(const pm_type *a, const pm_type *b, int ignore_null);

static int fields_equal(const pm_data_field *a, const pm_data_field *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i].id != b[i].id || strcmp(a[i].name, b[i].name) || !type_equal(a[i].type, b[i].type, 0))
            return 0;
    return 1;
}

static int type_equal(const pm_type *a, const pm_type *b, int ignore_null) {
    if (!a || !b) return a == b;
    if (a->root != b->root || (!ignore_null && a->nullable != b->nullable)) return 0;
    if (a->precision != b->precision || a->scale != b->scale || a->length != b->length) return 0;
    if (!type_equal(a->element, b->element, 0) || !type_equal(a->value, b->value, 0)) return 0;
    return a->n_fields == b->n_fields && fields_equal(a->fields, b->fields, a->n_fields);
}

int pm_alter_cast_allowed(const pm_type *src, const pm_type *dst, int allow_explicit) {
    if (src->nullable && !dst->nullable && !allow_explicit) return 0;
    int ok = type_equal(src, dst, 1) || implicit_ok(src->root, dst->root) ||
             (allow_explicit && explicit_ok(src->root, dst->root));
    return ok && executor_ok(src->root, dst->root);
}

/* ---- options in Java's HashMap order ----------------------------------------------------- */

typedef struct jmap {
    pm_kv *kv;
    size_t n, alloc, cap;
} jmap;

static size_t bucket_of(const char *k, size_t cap) {
    uint32_t h = (uint32_t)pm_java_string_hash(k);
    h ^= h >> 16;
    return h & (cap - 1);
}

/* stable: by bucket, then the current (insertion / previous iteration) order */
static void jm_sort(jmap *m) {
    for (size_t i = 1; i < m->n; i++) {
        pm_kv x = m->kv[i];
        size_t b = bucket_of(x.key, m->cap), j = i;
        while (j > 0 && bucket_of(m->kv[j - 1].key, m->cap) > b) { m->kv[j] = m->kv[j - 1]; j--; }
        m->kv[j] = x;
    }
}

/* new HashMap<>(map): threshold tableSizeFor((int)(n / 0.75f + 1)) (JDK 8-18) */
static void jm_copy(jmap *m) {
    size_t cap = 16;
    if (m->n) {
        size_t t = (size_t)((float)m->n / 0.75f + 1.0f);
        cap = 1;
        while (cap < t) cap <<= 1;
    }
    m->cap = cap;
    jm_sort(m);
}

static int jm_put(jmap *m, const char *k, const char *v) {
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->kv[i].key, k)) {
            char *nv = pm_strdup(v);
            if (!nv) return PAIMON_NOMEM;
            free(m->kv[i].value);
            m->kv[i].value = nv;
            return PAIMON_OK;
        }
    if (m->n == m->alloc) {
        size_t na = m->alloc ? m->alloc * 2 : 8;
        pm_kv *nk = realloc(m->kv, na * sizeof *nk);
        if (!nk) return PAIMON_NOMEM;
        m->kv = nk;
        m->alloc = na;
    }
    pm_kv *x = &m->kv[m->n];
    x->key = pm_strdup(k);
    x->value = pm_strdup(v);
    if (!x->key || !x->value) { free(x->key); free(x->value); return PAIMON_NOMEM; }
    m->n++;
    if ((double)m->n > 0.75 * (double)m->cap) m->cap *= 2;
    jm_sort(m);
    return PAIMON_OK;
}

static const char *jm_get(const jmap *m, const char *k) {
    for (size_t i = 0; i < m->n; i++) if (!strcmp(m->kv[i].key, k)) return m->kv[i].value;
    return NULL;
}

static char *jm_remove(jmap *m, const char *k) {     /* the removed value (caller frees) or NULL */
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->kv[i].key, k)) {
            char *v = m->kv[i].value;
            free(m->kv[i].key);
            memmove(&m->kv[i], &m->kv[i + 1], (m->n - i - 1) * sizeof *m->kv);
            m->n--;
            return v;
        }
    return NULL;
}

int pm_java_hashmap_copy_order(pm_kv *kv, size_t n) {
    jmap m = {kv, n, n, 16};
    while ((double)m.n > 0.75 * (double)m.cap) m.cap *= 2;
    jm_sort(&m);     /* as deserialized: puts into a default map */
    jm_copy(&m);
    return PAIMON_OK;
}

/* ---- the changes ------------------------------------------------------------------------- */

static const char *const immutable_options[] = {
    "type", "bucket-key", "bucket-function.type", "data-file.path-directory", "merge-engine",
    "sequence.snapshot-ordering", "aggregation.remove-record-on-delete",
    "partial-update.remove-record-on-delete", "partial-update.remove-record-on-sequence-group",
    "rowkind.field", "primary-key", "primary-key.nullable", "partition", "dynamic-bucket.initial-buckets",
    "force-lookup", "row-tracking.enabled", "data-evolution.enabled", "index-file-in-data-file-dir",
    "blob-field", "blob-descriptor-field", "blob-view-field", "pk-clustering-override", NULL};

static int is_immutable(const char *k) {
    for (size_t i = 0; immutable_options[i]; i++) if (!strcmp(immutable_options[i], k)) return 1;
    return 0;
}

static int java_bool(const char *v, int dflt) { return v ? !strcasecmp(v, "true") : dflt; }

static int parse_int(const char *v, long *out) {
    char *end;
    if (!v || !*v) return 0;
    *out = strtol(v, &end, 10);
    return !*end;
}

/* checkAlterTableOption / checkResetTableOption (only once the table has a snapshot) */
static int check_set_option(const jmap *old, const char *k, const char *v, pm_err *e) {
    if (is_immutable(k)) return pm_fail(e, PAIMON_MISUSE, "Change '%s' is not supported yet.", k);
    const char *ov = jm_get(old, k);
    if (!strcmp(k, "bucket")) {
        long ob = -1, nb;
        if (ov && !parse_int(ov, &ob)) return pm_fail(e, PAIMON_MISUSE, "option bucket=%s is not a number", ov);
        if (!parse_int(v, &nb)) return pm_fail(e, PAIMON_MISUSE, "option bucket=%s is not a number", v);
        if (ob == -1) return pm_fail(e, PAIMON_MISUSE, "Cannot change bucket when it is -1.");
        if (nb == -1) return pm_fail(e, PAIMON_MISUSE, "Cannot change bucket to -1.");
    }
    if (!strcmp(k, "deletion-vectors.enabled") && !java_bool(jm_get(old, "deletion-vectors.modifiable"), 0)) {
        int o = java_bool(ov, 0), nv = java_bool(v, 0);
        if (o != nv)
            return pm_fail(e, PAIMON_MISUSE,
                           "Cannot change deletion vectors mode from %s to %s. If modifying table deletion-vectors "
                           "mode without full-compaction, this may result in data duplication. If you are confident, "
                           "you can set table option 'deletion-vectors.modifiable' = 'true' to allow deletion "
                           "vectors modification.", o ? "true" : "false", nv ? "true" : "false");
    }
    if ((!strcmp(k, "ignore-delete") || !strcmp(k, "ignore-update-before")) && java_bool(ov, 0) && !java_bool(v, 0))
        return pm_fail(e, PAIMON_MISUSE, "Cannot change %s from true to false.", k);
    if (!strcmp(k, "clustering.columns") && jm_get(old, "pk-clustering-override"))
        return pm_fail(e, PAIMON_MISUSE, "Cannot change clustering.columns when pk-clustering-override enabled.");
    return PAIMON_OK;
}

static int check_reset_option(const jmap *old, const char *k, pm_err *e) {
    if (is_immutable(k)) return pm_fail(e, PAIMON_MISUSE, "Change '%s' is not supported yet.", k);
    if (!strcmp(k, "bucket")) return pm_fail(e, PAIMON_MISUSE, "Cannot reset %s.", k);
    if (!strcmp(k, "clustering.columns") && jm_get(old, "pk-clustering-override"))
        return pm_fail(e, PAIMON_MISUSE, "Cannot reset clustering.columns when pk-clustering-override enabled.");
    return PAIMON_OK;
}

typedef struct alter_ctx {
    pm_schema *s;            /* the new schema being built (fields owned) */
    const pm_schema *old;
    const char *table;       /* for messages */
    size_t fields_alloc;
} alter_ctx;

static int find_col(const pm_schema *s, const char *name) {
    for (size_t i = 0; i < s->n_fields; i++) if (!strcmp(s->fields[i].name, name)) return (int)i;
    return -1;
}

static int in_keys(char **keys, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++) if (!strcmp(keys[i], name)) return 1;
    return 0;
}

static int no_column(alter_ctx *c, const char *name, pm_err *e) {
    return pm_fail(e, PAIMON_MISUSE, "Column %s does not exist in the %s table.", name, c->table);
}

static void assign_ids(pm_type *t, int32_t *highest) {
    if (!t) return;
    if (t->root == PM_T_ROW)
        for (size_t i = 0; i < t->n_fields; i++) {
            t->fields[i].id = ++*highest;
            assign_ids(t->fields[i].type, highest);
        }
    assign_ids(t->element, highest);
    assign_ids(t->value, highest);
}

static int insert_field(alter_ctx *c, size_t at, pm_data_field f, pm_err *e) {
    pm_schema *s = c->s;
    if (s->n_fields == c->fields_alloc) {
        size_t na = c->fields_alloc * 2 + 4;
        pm_data_field *nf = realloc(s->fields, na * sizeof *nf);
        if (!nf) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        s->fields = nf;
        c->fields_alloc = na;
    }
    memmove(&s->fields[at + 1], &s->fields[at], (s->n_fields - at) * sizeof f);
    s->fields[at] = f;
    s->n_fields++;
    return PAIMON_OK;
}

static void move_field(pm_schema *s, size_t from, size_t to) {
    pm_data_field f = s->fields[from];
    memmove(&s->fields[from], &s->fields[from + 1], (s->n_fields - from - 1) * sizeof f);
    memmove(&s->fields[to + 1], &s->fields[to], (s->n_fields - 1 - to) * sizeof f);
    s->fields[to] = f;
}

static int add_column(alter_ctx *c, const pm_schema_change *ch, pm_err *e) {
    pm_type *ty;
    int rc = pm_type_parse_sql(ch->value, &ty, e);
    if (rc) return rc;
    if (!ty->nullable) {
        pm_type_free(ty);
        return pm_fail(e, PAIMON_MISUSE, "Column %s cannot specify NOT NULL in the %s table.", ch->name, c->table);
    }
    int32_t id = ++c->s->highest_field_id;
    assign_ids(ty, &c->s->highest_field_id);
    if (find_col(c->s, ch->name) >= 0) {
        pm_type_free(ty);
        return pm_fail(e, PAIMON_MISUSE, "Column %s already exists in the %s table.", ch->name, c->table);
    }
    pm_data_field f = {id, pm_strdup(ch->name), ty, ch->comment ? pm_strdup(ch->comment) : NULL, NULL};
    if (!f.name || (ch->comment && !f.description)) {
        free(f.name); free(f.description); pm_type_free(ty);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    size_t at = c->s->n_fields;
    if (ch->first) {
        at = 0;
    } else if (ch->after) {
        int r = find_col(c->s, ch->after);
        if (r < 0) { free(f.name); free(f.description); pm_type_free(ty); return no_column(c, ch->after, e); }
        at = (size_t)r + 1;
    } else if (java_bool(pm_schema_option(c->s, "add-column-before-partition"), 0) && c->s->n_partition_keys) {
        for (size_t i = 0; i < c->s->n_fields; i++)
            if (in_keys(c->s->partition_keys, c->s->n_partition_keys, c->s->fields[i].name)) { at = i; break; }
    }
    if ((rc = insert_field(c, at, f, e))) { free(f.name); free(f.description); pm_type_free(ty); }
    return rc;
}

static int rename_column(alter_ctx *c, const pm_schema_change *ch, pm_err *e) {
    if (in_keys(c->old->partition_keys, c->old->n_partition_keys, ch->name))
        return pm_fail(e, PAIMON_MISUSE, "Cannot rename partition column: [%s]", ch->name);
    int i = find_col(c->s, ch->name);
    if (i < 0) return no_column(c, ch->name, e);
    if (c->s->fields[i].type->root == PM_T_BLOB)
        return pm_fail(e, PAIMON_MISUSE, "Cannot rename BLOB column: [%s]", ch->name);
    if (find_col(c->s, ch->value) >= 0)
        return pm_fail(e, PAIMON_MISUSE, "Column %s already exists in the %s table.", ch->value, c->table);
    char *nn = pm_strdup(ch->value);
    if (!nn) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    free(c->s->fields[i].name);
    c->s->fields[i].name = nn;
    return PAIMON_OK;
}

static int drop_column(alter_ctx *c, const pm_schema_change *ch, pm_err *e) {
    if (in_keys(c->old->partition_keys, c->old->n_partition_keys, ch->name) ||
        in_keys(c->old->primary_keys, c->old->n_primary_keys, ch->name))
        return pm_fail(e, PAIMON_MISUSE, "Cannot drop partition key or primary key: [%s]", ch->name);
    int i = find_col(c->s, ch->name);
    if (i < 0) return no_column(c, ch->name, e);
    if (c->s->n_fields == 1) return pm_fail(e, PAIMON_MISUSE, "Cannot drop all fields in table");
    pm_data_field f = c->s->fields[i];
    memmove(&c->s->fields[i], &c->s->fields[i + 1], (c->s->n_fields - (size_t)i - 1) * sizeof f);
    c->s->n_fields--;
    free(f.name); free(f.description); free(f.default_value); pm_type_free(f.type);
    return PAIMON_OK;
}

static int null_to_not_null(alter_ctx *c, int old_nullable, int new_nullable, const char *name, pm_err *e) {
    if (old_nullable && !new_nullable &&
        java_bool(pm_schema_option(c->old, "alter-column-null-to-not-null.disabled"), 1))
        return pm_fail(e, PAIMON_MISUSE,
                       "Cannot update column type from nullable to non nullable for %s. You can set table "
                       "configuration option 'alter-column-null-to-not-null.disabled' = 'false' to allow "
                       "converting null columns to not null", name);
    return PAIMON_OK;
}

static int sql_of(const pm_type *t, char *buf, size_t n) {
    pm_buf b = {0};
    int rc = pm_type_to_sql(t, &b);
    if (rc == PAIMON_OK && b.len) snprintf(buf, n, "%.*s", (int)b.len, (const char *)b.data);
    else snprintf(buf, n, "?");
    pm_buf_free(&b);
    return rc;
}

/* the type text names its nullability (NULL / NOT NULL) */
static int says_null(const char *s) {
    for (; *s; s++)
        if (!strncasecmp(s, "NULL", 4)) return 1;
    return 0;
}

static int update_type(alter_ctx *c, const pm_schema_change *ch, pm_err *e) {
    if (in_keys(c->old->partition_keys, c->old->n_partition_keys, ch->name))
        return pm_fail(e, PAIMON_MISUSE, "Cannot update partition column: [%s]", ch->name);
    if (in_keys(c->old->primary_keys, c->old->n_primary_keys, ch->name))
        return pm_fail(e, PAIMON_MISUSE, "Cannot update primary key");
    int i = find_col(c->s, ch->name);
    if (i < 0) return no_column(c, ch->name, e);
    pm_data_field *f = &c->s->fields[i];
    pm_type *ty;
    int rc = pm_type_parse_sql(ch->value, &ty, e);
    if (rc) return rc;
    char src[256], dst[256];
    if (f->type->root == PM_T_BLOB || ty->root == PM_T_BLOB) {
        sql_of(f->type, src, sizeof src);
        sql_of(ty, dst, sizeof dst);
        pm_type_free(ty);
        return pm_fail(e, PAIMON_MISUSE, "Cannot change column type involving BLOB: [%s] %s -> %s", ch->name, src, dst);
    }
    if (!says_null(ch->value)) ty->nullable = f->type->nullable;   /* keepNullability */
    else if ((rc = null_to_not_null(c, f->type->nullable, ty->nullable, ch->name, e))) { pm_type_free(ty); return rc; }
    int explicit_ok_ = !java_bool(pm_schema_option(c->old, "disable-explicit-type-casting"), 0);
    if (!pm_alter_cast_allowed(f->type, ty, explicit_ok_)) {
        sql_of(f->type, src, sizeof src);
        sql_of(ty, dst, sizeof dst);
        pm_type_free(ty);
        return pm_fail(e, PAIMON_MISUSE, "Column type %s[%s] cannot be converted to %s without loosing information.",
                       f->name, src, dst);
    }
    int32_t hi = c->s->highest_field_id;
    if (ty->root == PM_T_ROW || ty->element || ty->value) assign_ids(ty, &hi);   /* as given; never reached for casts */
    pm_type_free(f->type);
    f->type = ty;
    return PAIMON_OK;
}

static int update_nullability(alter_ctx *c, const pm_schema_change *ch, pm_err *e) {
    if (ch->nullable && in_keys(c->old->primary_keys, c->old->n_primary_keys, ch->name))
        return pm_fail(e, PAIMON_MISUSE, "Cannot change nullability of primary key");
    int i = find_col(c->s, ch->name);
    if (i < 0) return no_column(c, ch->name, e);
    int rc = null_to_not_null(c, c->s->fields[i].type->nullable, ch->nullable, ch->name, e);
    if (!rc) c->s->fields[i].type->nullable = ch->nullable != 0;
    return rc;
}

static int update_comment(alter_ctx *c, const pm_schema_change *ch, pm_err *e) {
    int i = find_col(c->s, ch->name);
    if (i < 0) return no_column(c, ch->name, e);
    char *d = ch->comment ? pm_strdup(ch->comment) : NULL;
    if (ch->comment && !d) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    free(c->s->fields[i].description);
    c->s->fields[i].description = d;
    return PAIMON_OK;
}

/* SchemaManager.applyMove (FIRST / AFTER) */
static int update_position(alter_ctx *c, const pm_schema_change *ch, pm_err *e) {
    int from = find_col(c->s, ch->name);
    if (from < 0) return pm_fail(e, PAIMON_MISUSE, "Field name not found: %s", ch->name);
    if (ch->first) {
        if (from == 0) return pm_fail(e, PAIMON_MISUSE, "Cannot move itself for column %s", ch->name);
        move_field(c->s, (size_t)from, 0);
        return PAIMON_OK;
    }
    if (!ch->after) return pm_fail(e, PAIMON_MISUSE, "updateColumnPosition of %s needs first or after", ch->name);
    int ref = find_col(c->s, ch->after);
    if (ref < 0) return pm_fail(e, PAIMON_MISUSE, "Reference field name not found: %s", ch->after);
    if (ref == from) return pm_fail(e, PAIMON_MISUSE, "Cannot move itself for column %s", ch->name);
    int to = ref;
    if (from > ref) to++;
    if (to > (int)c->s->n_fields - 1) to = (int)c->s->n_fields - 1;
    move_field(c->s, (size_t)from, (size_t)to);
    return PAIMON_OK;
}

/* deep copy through Java's JSON (what the file holds) */
static int schema_copy(const pm_schema *s, pm_schema **out, pm_err *e) {
    pm_buf b = {0};
    int rc = pm_schema_to_json(s, &b);
    if (rc) { pm_buf_free(&b); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    rc = pm_schema_parse((const char *)b.data, b.len, "schema", out, e);
    pm_buf_free(&b);
    return rc;
}

/* the final SchemaValidation checks this schema can fail on */
static int validate(const pm_schema *s, pm_err *e) {
    for (size_t i = 0; i < s->n_fields; i++)
        for (size_t j = 0; j < i; j++)
            if (!strcmp(s->fields[i].name, s->fields[j].name))
                return pm_fail(e, PAIMON_MISUSE, "column '%s' is defined twice", s->fields[i].name);
    for (size_t i = 0; i < s->n_primary_keys; i++)
        if (find_col(s, s->primary_keys[i]) < 0)
            return pm_fail(e, PAIMON_MISUSE, "primary key '%s' is not a column", s->primary_keys[i]);
    if (s->n_partition_keys >= s->n_fields)
        return pm_fail(e, PAIMON_MISUSE, "cannot define all columns as partition keys");
    return pm_schema_check_options(s, e);
}

static int rename_in(char **v, size_t n, const pm_schema_change *c, size_t nc) {
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < nc; k++)
            if (c[k].kind == PM_ALTER_RENAME_COLUMN && !strcmp(v[i], c[k].name)) {
                char *x = pm_strdup(c[k].value);
                if (!x) return PAIMON_NOMEM;
                free(v[i]);
                v[i] = x;
                break;
            }
    return PAIMON_OK;
}

/* applyRenameColumnsToOptions: bucket-key, sequence.field, fields.<col>.<agg options> */
static int rename_options(jmap *m, const pm_schema_change *c, size_t nc) {
    static const char *const list_keys[] = {"bucket-key", "sequence.field", NULL};
    static const char *const suffixes[] = {"aggregate-function", "ignore-retract", "distinct",
                                           "list-agg-delimiter", NULL};
    for (size_t k = 0; list_keys[k]; k++) {
        const char *v = jm_get(m, list_keys[k]);
        if (!v || !*v) continue;
        pm_buf out = {0};
        const char *p = v;
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            const char *nm = NULL;
            for (size_t j = 0; j < nc; j++)
                if (c[j].kind == PM_ALTER_RENAME_COLUMN && strlen(c[j].name) == len && !strncmp(c[j].name, p, len))
                    nm = c[j].value;
            if (out.len && pm_buf_append(&out, ",", 1)) goto nomem;
            if (pm_buf_append(&out, nm ? nm : p, nm ? strlen(nm) : len)) goto nomem;
            if (!comma) break;
            p = comma + 1;
        }
        if (pm_buf_append(&out, "", 1) || jm_put(m, list_keys[k], (const char *)out.data)) goto nomem;
        pm_buf_free(&out);
        continue;
    nomem:
        pm_buf_free(&out);
        return PAIMON_NOMEM;
    }
    for (size_t j = 0; j < nc; j++) {
        if (c[j].kind != PM_ALTER_RENAME_COLUMN) continue;
        for (size_t k = 0; suffixes[k]; k++) {
            char ok_[512], nk[512];
            snprintf(ok_, sizeof ok_, "fields.%s.%s", c[j].name, suffixes[k]);
            snprintf(nk, sizeof nk, "fields.%s.%s", c[j].value, suffixes[k]);
            char *v = jm_remove(m, ok_);
            if (!v) continue;
            int rc = jm_put(m, nk, v);
            free(v);
            if (rc) return rc;
        }
    }
    return PAIMON_OK;
}

int pm_alter_apply(const pm_schema *old, const pm_schema_change *ch, size_t n, int has_snapshots,
                   pm_schema **out, pm_err *e) {
    return pm_alter_apply_named(old, ch, n, has_snapshots, NULL, out, e);
}

int pm_alter_apply_named(const pm_schema *old, const pm_schema_change *ch, size_t n, int has_snapshots,
                         const char *table, pm_schema **out, pm_err *e) {
    *out = NULL;
    pm_schema *s;
    int rc = schema_copy(old, &s, e);
    if (rc) return rc;
    alter_ctx c = {s, old, table ? table : "this", s->n_fields};
    /* options as SchemaSerializer reads them (puts into a default HashMap) */
    jmap m = {s->options, s->n_options, s->n_options, 16};
    s->options = NULL;
    s->n_options = 0;
    while ((double)m.n > 0.75 * (double)m.cap) m.cap *= 2;
    jm_sort(&m);
    jmap old_opts = {NULL, 0, 0, m.cap};      /* oldOptions: only looked up */
    for (size_t i = 0; i < m.n && !rc; i++)
        if (jm_put(&old_opts, m.kv[i].key, m.kv[i].value)) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    jm_copy(&m);                              /* newOptions = new HashMap<>(old.options()) */
    int renamed = 0;
    if (rc) goto done;
    for (size_t i = 0; i < n && !rc; i++) {
        const pm_schema_change *x = &ch[i];
        if (!x->name && x->kind != PM_ALTER_UPDATE_COMMENT) {
            rc = pm_fail(e, PAIMON_MISUSE, "%s: no column or option name", pm_alter_kind_name(x->kind));
            break;
        }
        if ((x->kind == PM_ALTER_SET_OPTION || x->kind == PM_ALTER_ADD_COLUMN || x->kind == PM_ALTER_RENAME_COLUMN ||
             x->kind == PM_ALTER_UPDATE_COLUMN_TYPE) && !x->value) {
            rc = pm_fail(e, PAIMON_MISUSE, "%s %s: no value", pm_alter_kind_name(x->kind), x->name);
            break;
        }
        s->options = m.kv;      /* the option reads of the column changes see the current options */
        s->n_options = m.n;
        switch (x->kind) {
        case PM_ALTER_SET_OPTION:
            if (!strcasecmp(x->name, "path")) { rc = pm_fail(e, PAIMON_MISUSE, "Change path is not supported yet."); break; }
            if (has_snapshots && (rc = check_set_option(&old_opts, x->name, x->value, e))) break;
            if (jm_put(&m, x->name, x->value)) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
            break;
        case PM_ALTER_REMOVE_OPTION:
            if (has_snapshots && (rc = check_reset_option(&old_opts, x->name, e))) break;
            free(jm_remove(&m, x->name));
            break;
        case PM_ALTER_UPDATE_COMMENT: {
            char *cm = x->value ? pm_strdup(x->value) : NULL;
            if (x->value && !cm) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
            free(s->comment);
            s->comment = cm;
            break;
        }
        case PM_ALTER_ADD_COLUMN: rc = add_column(&c, x, e); break;
        case PM_ALTER_RENAME_COLUMN: rc = rename_column(&c, x, e); renamed = 1; break;
        case PM_ALTER_DROP_COLUMN: rc = drop_column(&c, x, e); break;
        case PM_ALTER_UPDATE_COLUMN_TYPE: rc = update_type(&c, x, e); break;
        case PM_ALTER_UPDATE_COLUMN_NULLABILITY: rc = update_nullability(&c, x, e); break;
        case PM_ALTER_UPDATE_COLUMN_COMMENT: rc = update_comment(&c, x, e); break;
        case PM_ALTER_UPDATE_COLUMN_POSITION: rc = update_position(&c, x, e); break;
        default: rc = pm_fail(e, PAIMON_MISUSE, "unknown schema change kind %d", (int)x->kind);
        }
    }
    s->options = NULL;
    s->n_options = 0;
    if (rc) goto done;
    if (renamed) {
        jm_copy(&m);                     /* Maps.newHashMap(options) */
        if (rename_options(&m, ch, n) || rename_in(s->primary_keys, s->n_primary_keys, ch, n)) {
            rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
            goto done;
        }
    }
    jm_copy(&m);                         /* new Schema(...): new HashMap<>(options) */
    s->options = m.kv;
    s->n_options = m.n;
    m.kv = NULL;
    m.n = 0;
    s->id = old->id + 1;
    s->version = 3;
    s->time_millis = pm_now_millis();
    if ((rc = validate(s, e))) goto done;
    *out = s;
    s = NULL;
done:
    for (size_t i = 0; i < m.n; i++) { free(m.kv[i].key); free(m.kv[i].value); }
    free(m.kv);
    for (size_t i = 0; i < old_opts.n; i++) { free(old_opts.kv[i].key); free(old_opts.kv[i].value); }
    free(old_opts.kv);
    pm_schema_free(s);
    return rc;
}

/* Java's identifierFromPath: ".../<db>.db/<table>" -> "db.table" */
static char *table_display(const char *root) {
    size_t l = strlen(root);
    while (l > 1 && root[l - 1] == '/') l--;
    size_t tb = l;
    while (tb > 0 && root[tb - 1] != '/') tb--;
    size_t de = tb ? tb - 1 : 0, db = de;
    while (db > 0 && root[db - 1] != '/') db--;
    pm_buf b = {0};
    if (de - db > 3 && !strncmp(root + de - 3, ".db", 3)) {
        if (pm_buf_printf(&b, "%.*s.%.*s", (int)(de - 3 - db), root + db, (int)(l - tb), root + tb)) return NULL;
    } else if (pm_buf_printf(&b, "%.*s", (int)(l - tb), root + tb)) {
        return NULL;
    }
    char *r = pm_strdup((const char *)b.data);
    pm_buf_free(&b);
    return r;
}

#define ALTER_MAX_ATTEMPTS 100

int pm_alter_table(paimon_table *t, const pm_schema_change *c, size_t n, int dry_run, pm_schema **out,
                   pm_err *e) {
    *out = NULL;
    if (!n) return pm_fail(e, PAIMON_MISUSE, "alter table: no changes");
    char *name = table_display(t->root);
    if (!name) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = PAIMON_OK;
    int64_t raced = -1;
    for (int attempt = 0; attempt < ALTER_MAX_ATTEMPTS; attempt++) {
        int64_t *ids = NULL;
        size_t nids = 0;
        if ((rc = pm_schema_list_ids(t->io, t->branch_root, &ids, &nids, e))) break;
        if (!nids) {
            free(ids);
            rc = pm_fail(e, PAIMON_NOTFOUND, "%s: no schema (schema/ is empty): not a table", t->branch_root);
            break;
        }
        int64_t latest = ids[nids - 1];
        free(ids);
        pm_schema *old = NULL, *neu = NULL;
        if ((rc = pm_schema_read(t->io, t->branch_root, latest, &old, e))) break;
        int64_t snap;
        rc = pm_snapshot_latest_id(t->io, t->branch_root, &snap, e);
        int has_snapshots = rc == PAIMON_OK;
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
        if (rc) { pm_schema_free(old); break; }
        rc = pm_alter_apply_named(old, c, n, has_snapshots, name, &neu, e);
        pm_schema_free(old);
        if (rc) {
            if (raced >= 0 && rc == PAIMON_MISUSE) {
                char why[sizeof e->msg];
                snprintf(why, sizeof why, "%s", e->msg);
                rc = pm_fail(e, PAIMON_CONFLICT, "%s: schema-%lld was written concurrently and the change no longer "
                             "applies: %s", t->branch_root, (long long)raced, why);
            }
            break;
        }
        if (dry_run) { *out = neu; break; }
        pm_buf json = {0};
        char file[64];
        snprintf(file, sizeof file, "schema/schema-%lld", (long long)neu->id);
        char *path = pm_path_join(t->branch_root, file);
        if (!path || pm_schema_to_json(neu, &json)) {
            free(path); pm_buf_free(&json); pm_schema_free(neu);
            rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
            break;
        }
        rc = pm_io_create_no_replace(t->io, path, json.data, json.len, e);
        free(path);
        pm_buf_free(&json);
        if (rc == PAIMON_OK) {
            /* the handle now writes under the new schema (its old one stays allocated) */
            pm_schema *mine = NULL;
            if (!schema_copy(neu, &mine, e) && !pm_table_use_schema(t, mine, e)) { *out = neu; break; }
            pm_schema_free(neu);
            pm_err_prefix(e, "schema-%lld was written, but the table handle could not take it", (long long)latest + 1);
            rc = e->code ? e->code : PAIMON_ERROR;
            break;
        }
        pm_schema_free(neu);
        if (rc != PAIMON_EXISTS) break;
        pm_err_clear(e);             /* another alter took schema-(N+1): re-read, re-apply */
        raced = latest + 1;
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: gave up after %d concurrent schema changes", t->branch_root,
                     ALTER_MAX_ATTEMPTS);
    }
    free(name);
    return rc;
}
