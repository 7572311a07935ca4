/* Avro schema JSON parsing (jansson), named-type references, helpers. */
#include "pm_avro.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define PM_AVRO_SCHEMA_MAX_DEPTH 64

typedef struct named_def {
    char *full;                 /* owned by the schema node (s->name) */
    pm_avro_schema *s;
} named_def;

typedef struct parse_ctx {
    named_def *defs;
    size_t n_defs, cap_defs;
    pm_avro_schema **refs;      /* reference nodes to refresh once parsing is done */
    size_t n_refs, cap_refs;
    pm_err *e;
} parse_ctx;

static const struct { const char *name; pm_avro_type type; } primitives[] = {
    {"null", PM_AVRO_NULL}, {"boolean", PM_AVRO_BOOLEAN}, {"int", PM_AVRO_INT},
    {"long", PM_AVRO_LONG}, {"float", PM_AVRO_FLOAT}, {"double", PM_AVRO_DOUBLE},
    {"bytes", PM_AVRO_BYTES}, {"string", PM_AVRO_STRING},
};

static int primitive_type(const char *name, pm_avro_type *t) {
    for (size_t i = 0; i < sizeof primitives / sizeof primitives[0]; i++)
        if (!strcmp(name, primitives[i].name)) { *t = primitives[i].type; return 1; }
    return 0;
}

void pm_avro_schema_free(pm_avro_schema *s) {
    if (!s) return;
    if (!s->is_ref) {
        free(s->name);
        free(s->logical_type);
        for (size_t i = 0; i < s->n_fields; i++) {
            free(s->fields[i].name);
            pm_avro_schema_free(s->fields[i].type);
        }
        free(s->fields);
        pm_avro_schema_free(s->items);
        for (size_t i = 0; i < s->n_branches; i++) pm_avro_schema_free(s->branches[i]);
        free(s->branches);
        for (size_t i = 0; i < s->n_symbols; i++) free(s->symbols[i]);
        free(s->symbols);
    }
    free(s);
}

static pm_avro_schema *lookup(parse_ctx *c, const char *name, const char *ns) {
    /* Full name first when qualified, else try the enclosing namespace. */
    if (!strchr(name, '.') && ns && *ns) {
        size_t ln = strlen(ns), lm = strlen(name);
        for (size_t i = 0; i < c->n_defs; i++) {
            const char *f = c->defs[i].full;
            if (strlen(f) == ln + 1 + lm && !memcmp(f, ns, ln) && f[ln] == '.' && !strcmp(f + ln + 1, name))
                return c->defs[i].s;
        }
    }
    for (size_t i = 0; i < c->n_defs; i++)
        if (!strcmp(c->defs[i].full, name)) return c->defs[i].s;
    return NULL;
}

static int make_ref(parse_ctx *c, pm_avro_schema *target, pm_avro_schema **out) {
    if (c->n_refs == c->cap_refs) {
        size_t nc = c->cap_refs ? c->cap_refs * 2 : 8;
        pm_avro_schema **p = realloc(c->refs, nc * sizeof *p);
        if (!p) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
        c->refs = p;
        c->cap_refs = nc;
    }
    pm_avro_schema *r = malloc(sizeof *r);
    if (!r) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
    *r = *target;
    r->is_ref = 1;
    /* The copy shares the target's name pointer, which identifies the
     * definition again when refs are refreshed at the end of parsing. */
    c->refs[c->n_refs++] = r;
    *out = r;
    return PAIMON_OK;
}

static int register_def(parse_ctx *c, pm_avro_schema *s) {
    if (lookup(c, s->name, NULL))
        return pm_fail(c->e, PAIMON_CORRUPT, "named type '%s' defined twice", s->name);
    if (c->n_defs == c->cap_defs) {
        size_t nc = c->cap_defs ? c->cap_defs * 2 : 8;
        named_def *p = realloc(c->defs, nc * sizeof *p);
        if (!p) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
        c->defs = p;
        c->cap_defs = nc;
    }
    c->defs[c->n_defs].full = s->name;
    c->defs[c->n_defs].s = s;
    c->n_defs++;
    return PAIMON_OK;
}

static int parse_node(parse_ctx *c, json_t *j, const char *ns, int depth, pm_avro_schema **out);

/* Full name of a named type; *child_ns receives its namespace (malloc'd). */
static int full_name(parse_ctx *c, json_t *obj, const char *ns, char **full, char **child_ns) {
    json_t *jn = json_object_get(obj, "name");
    if (!json_is_string(jn) || json_string_length(jn) == 0)
        return pm_fail(c->e, PAIMON_CORRUPT, "named type without a valid \"name\"");
    const char *name = json_string_value(jn);
    if (strlen(name) != json_string_length(jn))
        return pm_fail(c->e, PAIMON_CORRUPT, "name contains a NUL byte");
    const char *dot = strrchr(name, '.');
    if (dot) {
        *full = pm_strdup(name);
        *child_ns = pm_strndup(name, (size_t)(dot - name));
    } else {
        json_t *jns = json_object_get(obj, "namespace");
        const char *use = ns;
        if (jns && json_is_string(jns)) use = json_string_value(jns);
        else if (jns && !json_is_null(jns))
            return pm_fail(c->e, PAIMON_CORRUPT, "type '%s': \"namespace\" is not a string", name);
        if (use && *use) {
            size_t lu = strlen(use), ln = strlen(name);
            *full = malloc(lu + ln + 2);
            if (*full) {
                memcpy(*full, use, lu);
                (*full)[lu] = '.';
                memcpy(*full + lu + 1, name, ln + 1);
            }
        } else {
            *full = pm_strdup(name);
        }
        *child_ns = pm_strdup(use ? use : "");
    }
    if (!*full || !*child_ns) {
        free(*full); free(*child_ns);
        *full = *child_ns = NULL;
        return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
    }
    return PAIMON_OK;
}

static int parse_record(parse_ctx *c, json_t *j, pm_avro_schema *s, const char *ns, int depth) {
    char *child_ns = NULL;
    int rc = full_name(c, j, ns, &s->name, &child_ns);
    if (rc) return rc;
    if ((rc = register_def(c, s))) goto done;
    json_t *jf = json_object_get(j, "fields");
    if (!json_is_array(jf)) {
        rc = pm_fail(c->e, PAIMON_CORRUPT, "record '%s' without a \"fields\" array", s->name);
        goto done;
    }
    size_t n = json_array_size(jf);
    if (n) {
        s->fields = calloc(n, sizeof *s->fields);
        if (!s->fields) { rc = pm_fail(c->e, PAIMON_NOMEM, "out of memory"); goto done; }
    }
    for (size_t i = 0; i < n; i++) {
        json_t *f = json_array_get(jf, i);
        json_t *fn = json_object_get(f, "name");
        json_t *ft = json_object_get(f, "type");
        if (!json_is_object(f) || !json_is_string(fn) || !ft) {
            rc = pm_fail(c->e, PAIMON_CORRUPT, "record '%s': field %zu needs \"name\" and \"type\"", s->name, i);
            goto done;
        }
        s->fields[i].name = pm_strndup(json_string_value(fn), json_string_length(fn));
        if (!s->fields[i].name) { rc = pm_fail(c->e, PAIMON_NOMEM, "out of memory"); goto done; }
        s->n_fields = i + 1;
        if ((rc = parse_node(c, ft, child_ns, depth + 1, &s->fields[i].type))) {
            pm_err_prefix(c->e, "record '%s' field '%s'", s->name, s->fields[i].name);
            goto done;
        }
    }
done:
    free(child_ns);
    return rc;
}

static int parse_object(parse_ctx *c, json_t *j, const char *ns, int depth, pm_avro_schema **out) {
    json_t *jt = json_object_get(j, "type");
    if (!jt) return pm_fail(c->e, PAIMON_CORRUPT, "schema object without \"type\"");
    if (!json_is_string(jt)) /* {"type": {...}} or {"type": [...]} */
        return parse_node(c, jt, ns, depth + 1, out);
    const char *t = json_string_value(jt);
    json_t *jl = json_object_get(j, "logicalType");
    pm_avro_type pt;
    int rc = PAIMON_OK;
    if (primitive_type(t, &pt) || !strcmp(t, "record") || !strcmp(t, "error") || !strcmp(t, "enum") ||
        !strcmp(t, "array") || !strcmp(t, "map") || !strcmp(t, "fixed")) {
        pm_avro_schema *s = calloc(1, sizeof *s);
        if (!s) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
        if (jl && json_is_string(jl)) {
            s->logical_type = pm_strndup(json_string_value(jl), json_string_length(jl));
            if (!s->logical_type) { free(s); return pm_fail(c->e, PAIMON_NOMEM, "out of memory"); }
        }
        *out = s;   /* caller frees on error */
        if (primitive_type(t, &pt)) {
            s->type = pt;
        } else if (!strcmp(t, "record") || !strcmp(t, "error")) {
            s->type = PM_AVRO_RECORD;
            rc = parse_record(c, j, s, ns, depth);
        } else if (!strcmp(t, "enum")) {
            s->type = PM_AVRO_ENUM;
            char *child_ns = NULL;
            if ((rc = full_name(c, j, ns, &s->name, &child_ns))) return rc;
            free(child_ns);
            if ((rc = register_def(c, s))) return rc;
            json_t *sy = json_object_get(j, "symbols");
            if (!json_is_array(sy))
                return pm_fail(c->e, PAIMON_CORRUPT, "enum '%s' without a \"symbols\" array", s->name);
            size_t n = json_array_size(sy);
            if (n) {
                s->symbols = calloc(n, sizeof *s->symbols);
                if (!s->symbols) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
            }
            for (size_t i = 0; i < n; i++) {
                json_t *x = json_array_get(sy, i);
                if (!json_is_string(x))
                    return pm_fail(c->e, PAIMON_CORRUPT, "enum '%s': symbol %zu is not a string", s->name, i);
                s->symbols[i] = pm_strndup(json_string_value(x), json_string_length(x));
                if (!s->symbols[i]) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
                s->n_symbols = i + 1;
            }
        } else if (!strcmp(t, "array") || !strcmp(t, "map")) {
            int arr = !strcmp(t, "array");
            s->type = arr ? PM_AVRO_ARRAY : PM_AVRO_MAP;
            json_t *it = json_object_get(j, arr ? "items" : "values");
            if (!it) return pm_fail(c->e, PAIMON_CORRUPT, "%s without \"%s\"", t, arr ? "items" : "values");
            rc = parse_node(c, it, ns, depth + 1, &s->items);
            if (rc) pm_err_prefix(c->e, "%s %s", t, arr ? "items" : "values");
        } else { /* fixed */
            s->type = PM_AVRO_FIXED;
            char *child_ns = NULL;
            if ((rc = full_name(c, j, ns, &s->name, &child_ns))) return rc;
            free(child_ns);
            if ((rc = register_def(c, s))) return rc;
            json_t *sz = json_object_get(j, "size");
            if (!json_is_integer(sz) || json_integer_value(sz) < 0 || json_integer_value(sz) > INT32_MAX)
                return pm_fail(c->e, PAIMON_CORRUPT, "fixed '%s' without a valid \"size\"", s->name);
            s->fixed_size = (size_t)json_integer_value(sz);
        }
        return rc;
    }
    /* {"type": "SomeNamedType"} */
    pm_avro_schema *target = lookup(c, t, ns);
    if (!target) return pm_fail(c->e, PAIMON_CORRUPT, "unknown type '%s'", t);
    return make_ref(c, target, out);
}

static int parse_node(parse_ctx *c, json_t *j, const char *ns, int depth, pm_avro_schema **out) {
    *out = NULL;
    if (depth > PM_AVRO_SCHEMA_MAX_DEPTH)
        return pm_fail(c->e, PAIMON_CORRUPT, "schema nested deeper than %d levels", PM_AVRO_SCHEMA_MAX_DEPTH);
    if (json_is_string(j)) {
        const char *t = json_string_value(j);
        pm_avro_type pt;
        if (primitive_type(t, &pt)) {
            pm_avro_schema *s = calloc(1, sizeof *s);
            if (!s) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
            s->type = pt;
            *out = s;
            return PAIMON_OK;
        }
        pm_avro_schema *target = lookup(c, t, ns);
        if (!target) return pm_fail(c->e, PAIMON_CORRUPT, "unknown type '%s'", t);
        return make_ref(c, target, out);
    }
    if (json_is_object(j)) return parse_object(c, j, ns, depth, out);
    if (json_is_array(j)) {
        size_t n = json_array_size(j);
        if (n == 0) return pm_fail(c->e, PAIMON_CORRUPT, "empty union");
        pm_avro_schema *s = calloc(1, sizeof *s);
        if (!s) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
        *out = s;
        s->type = PM_AVRO_UNION;
        s->branches = calloc(n, sizeof *s->branches);
        if (!s->branches) return pm_fail(c->e, PAIMON_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++) {
            int rc = parse_node(c, json_array_get(j, i), ns, depth + 1, &s->branches[i]);
            if (s->branches[i]) s->n_branches = i + 1;
            if (rc) { pm_err_prefix(c->e, "union branch %zu", i); return rc; }
            if (s->branches[i]->type == PM_AVRO_UNION)
                return pm_fail(c->e, PAIMON_CORRUPT, "union directly inside a union");
        }
        return PAIMON_OK;
    }
    return pm_fail(c->e, PAIMON_CORRUPT, "schema is not a string, object or array");
}

/* Map a reference node back to its definition (same name and type). */
static pm_avro_schema *ref_target(parse_ctx *c, const pm_avro_schema *r) {
    for (size_t i = 0; i < c->n_defs; i++)
        if (c->defs[i].full == r->name) return c->defs[i].s;
    return NULL;
}

static size_t min_size(const pm_avro_schema *s, int depth) {
    if (depth > 8) return 0;
    switch (s->type) {
    case PM_AVRO_NULL: return 0;
    case PM_AVRO_FLOAT: return 4;
    case PM_AVRO_DOUBLE: return 8;
    case PM_AVRO_FIXED: return s->fixed_size;
    case PM_AVRO_RECORD: {
        size_t t = 0;
        for (size_t i = 0; i < s->n_fields && t < 4096; i++) t += min_size(s->fields[i].type, depth + 1);
        return t;
    }
    case PM_AVRO_UNION: {
        size_t m = SIZE_MAX;
        for (size_t i = 0; i < s->n_branches && m; i++) {
            size_t b = min_size(s->branches[i], depth + 1);
            if (b < m) m = b;
        }
        return 1 + (m == SIZE_MAX ? 0 : m);
    }
    default: return 1;   /* boolean, int, long, bytes, string, enum, array, map */
    }
}

size_t pm_avro_min_size(const pm_avro_schema *s) { return min_size(s, 0); }

/* Cache each array's / map's item size bound (the decoder checks block
 * counts against it for every block). Reference nodes share their
 * target's children: not walked again. */
static void annotate(pm_avro_schema *s) {
    if (s->type == PM_AVRO_ARRAY || s->type == PM_AVRO_MAP)
        s->items_min = min_size(s->items, 0) + (s->type == PM_AVRO_MAP ? 1 : 0);
    if (s->is_ref) return;
    for (size_t i = 0; i < s->n_fields; i++) annotate(s->fields[i].type);
    if (s->items) annotate(s->items);
    for (size_t i = 0; i < s->n_branches; i++) annotate(s->branches[i]);
}

int pm_avro_schema_parse(const char *json, size_t len, pm_avro_schema **out, pm_err *e) {
    *out = NULL;
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!root)
        return pm_fail(e, PAIMON_CORRUPT, "invalid schema JSON: %s (line %d, column %d)",
                       je.text, je.line, je.column);
    parse_ctx c;
    memset(&c, 0, sizeof c);
    c.e = e;
    pm_avro_schema *s = NULL;
    int rc = parse_node(&c, root, "", 1, &s);
    if (rc == PAIMON_OK) {
        /* Refresh reference nodes: recursive types were referenced before
         * their definition was complete. */
        for (size_t i = 0; i < c.n_refs; i++) {
            pm_avro_schema *t = ref_target(&c, c.refs[i]);
            if (t) { *c.refs[i] = *t; c.refs[i]->is_ref = 1; }
        }
        annotate(s);
        *out = s;
    } else {
        pm_avro_schema_free(s);
    }
    free(c.defs);
    free(c.refs);
    json_decref(root);
    return rc;
}

const pm_avro_schema *pm_avro_unwrap_nullable(const pm_avro_schema *s) {
    if (s && s->type == PM_AVRO_UNION && s->n_branches == 2) {
        if (s->branches[0]->type == PM_AVRO_NULL) return s->branches[1];
        if (s->branches[1]->type == PM_AVRO_NULL) return s->branches[0];
    }
    return s;
}

int pm_avro_field_index(const pm_avro_schema *record, const char *name) {
    const pm_avro_schema *s = pm_avro_unwrap_nullable(record);
    if (!s || s->type != PM_AVRO_RECORD) return -1;
    for (size_t i = 0; i < s->n_fields; i++)
        if (!strcmp(s->fields[i].name, name)) return (int)i;
    return -1;
}

/* Named types may refer to themselves: past this depth two schemas are
 * called different (no copy), never looped over. */
#define SAME_LAYOUT_MAX_DEPTH 64

static int same_layout(const pm_avro_schema *a, const pm_avro_schema *b, int depth) {
    if (depth > SAME_LAYOUT_MAX_DEPTH || a->type != b->type) return 0;
    switch (a->type) {
    case PM_AVRO_RECORD:
        if (a->n_fields != b->n_fields) return 0;
        for (size_t i = 0; i < a->n_fields; i++)
            if (strcmp(a->fields[i].name, b->fields[i].name) ||
                !same_layout(a->fields[i].type, b->fields[i].type, depth + 1))
                return 0;
        return 1;
    case PM_AVRO_UNION:
        if (a->n_branches != b->n_branches) return 0;
        for (size_t i = 0; i < a->n_branches; i++)
            if (!same_layout(a->branches[i], b->branches[i], depth + 1)) return 0;
        return 1;
    case PM_AVRO_ARRAY:
    case PM_AVRO_MAP:
        return same_layout(a->items, b->items, depth + 1);
    case PM_AVRO_ENUM:
        if (a->n_symbols != b->n_symbols) return 0;
        for (size_t i = 0; i < a->n_symbols; i++)
            if (strcmp(a->symbols[i], b->symbols[i])) return 0;
        return 1;
    case PM_AVRO_FIXED:
        return a->fixed_size == b->fixed_size;
    default:
        return 1;   /* primitives: a logical type does not change the bytes */
    }
}

int pm_avro_schema_same_layout(const pm_avro_schema *a, const pm_avro_schema *b) {
    return a && b && same_layout(a, b, 0);
}
