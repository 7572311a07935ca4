/* Paimon data types: construction, atomic type-string parsing (Java's
 * DataTypeJsonParser.parseAtomicTypeSQLString) and printing (asSQLString). */
#include "pm_types.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define PM_MAX_LEN 2147483647

const char *pm_type_root_name(pm_type_root r) {
    switch (r) {
    case PM_T_BOOLEAN: return "BOOLEAN";
    case PM_T_TINYINT: return "TINYINT";
    case PM_T_SMALLINT: return "SMALLINT";
    case PM_T_INT: return "INT";
    case PM_T_BIGINT: return "BIGINT";
    case PM_T_FLOAT: return "FLOAT";
    case PM_T_DOUBLE: return "DOUBLE";
    case PM_T_DECIMAL: return "DECIMAL";
    case PM_T_CHAR: return "CHAR";
    case PM_T_VARCHAR: return "VARCHAR";
    case PM_T_BINARY: return "BINARY";
    case PM_T_VARBINARY: return "VARBINARY";
    case PM_T_DATE: return "DATE";
    case PM_T_TIME: return "TIME";
    case PM_T_TIMESTAMP: return "TIMESTAMP";
    case PM_T_TIMESTAMP_LTZ: return "TIMESTAMP_LTZ";
    case PM_T_ARRAY: return "ARRAY";
    case PM_T_MAP: return "MAP";
    case PM_T_MULTISET: return "MULTISET";
    case PM_T_ROW: return "ROW";
    case PM_T_VARIANT: return "VARIANT";
    case PM_T_BLOB: return "BLOB";
    case PM_T_VECTOR: return "VECTOR";
    }
    return "UNKNOWN";
}

pm_type *pm_type_new(pm_type_root root, int nullable) {
    pm_type *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->root = root;
    t->nullable = nullable ? 1 : 0;
    switch (root) {      /* Java's no-argument constructor defaults */
    case PM_T_DECIMAL: t->precision = 10; t->scale = 0; break;
    case PM_T_CHAR: case PM_T_VARCHAR: case PM_T_BINARY: case PM_T_VARBINARY:
        t->length = 1; break;
    case PM_T_TIME: t->precision = 0; break;
    case PM_T_TIMESTAMP: case PM_T_TIMESTAMP_LTZ: t->precision = 6; break;
    default: break;
    }
    return t;
}

void pm_type_free(pm_type *t) {
    if (!t) return;
    pm_type_free(t->element);
    pm_type_free(t->value);
    if (t->fields) {
        for (size_t i = 0; i < t->n_fields; i++) {
            free(t->fields[i].name);
            free(t->fields[i].description);
            free(t->fields[i].default_value);
            pm_type_free(t->fields[i].type);
        }
        free(t->fields);
    }
    free(t);
}

pm_type *pm_type_clone(const pm_type *t) {
    if (!t) return NULL;
    pm_type *c = malloc(sizeof *c);
    if (!c) return NULL;
    *c = *t;
    c->element = NULL;
    c->value = NULL;
    c->fields = NULL;
    c->n_fields = 0;
    if (t->element && !(c->element = pm_type_clone(t->element))) goto fail;
    if (t->value && !(c->value = pm_type_clone(t->value))) goto fail;
    if (t->n_fields && t->fields) {
        c->fields = calloc(t->n_fields, sizeof *c->fields);
        if (!c->fields) goto fail;
        c->n_fields = t->n_fields;
        for (size_t i = 0; i < t->n_fields; i++) {
            const pm_data_field *sf = &t->fields[i];
            pm_data_field *df = &c->fields[i];
            df->id = sf->id;
            if (sf->name && !(df->name = pm_strdup(sf->name))) goto fail;
            if (sf->description && !(df->description = pm_strdup(sf->description))) goto fail;
            if (sf->default_value && !(df->default_value = pm_strdup(sf->default_value))) goto fail;
            if (sf->type && !(df->type = pm_type_clone(sf->type))) goto fail;
        }
    }
    return c;
fail:
    pm_type_free(c);
    return NULL;
}

/* ---- parsing ------------------------------------------------------------ */

typedef enum { TK_END, TK_WORD, TK_INT, TK_LPAREN, TK_RPAREN, TK_LT, TK_GT, TK_COMMA, TK_BAD } tk_kind;

typedef struct {
    const char *src;
    const char *p;
    tk_kind kind;
    const char *tok;     /* start of current token */
    size_t tok_len;
    long long ival;      /* TK_INT value; -1 when it overflows int32 */
} lexer;

static int is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
           (c >= 0x1c && c <= 0x1f);
}

static int is_delim(char c) {
    return is_ws(c) || c == '<' || c == '>' || c == '(' || c == ')' || c == ',' || c == '.' ||
           c == '\'' || c == '`';
}

static void lex_next(lexer *lx) {
    while (*lx->p && is_ws(*lx->p)) lx->p++;
    lx->tok = lx->p;
    lx->tok_len = 0;
    char c = *lx->p;
    if (!c) { lx->kind = TK_END; return; }
    lx->p++;
    lx->tok_len = 1;
    switch (c) {
    case '(': lx->kind = TK_LPAREN; return;
    case ')': lx->kind = TK_RPAREN; return;
    case '<': lx->kind = TK_LT; return;
    case '>': lx->kind = TK_GT; return;
    case ',': lx->kind = TK_COMMA; return;
    case '.': case '\'': case '`': lx->kind = TK_BAD; return;
    default: break;
    }
    if (c >= '0' && c <= '9') {
        long long v = c - '0';
        while (*lx->p >= '0' && *lx->p <= '9') {
            if (v >= 0) {
                v = v * 10 + (*lx->p - '0');
                if (v > INT_MAX) v = -1;
            }
            lx->p++;
        }
        lx->kind = TK_INT;
        lx->ival = v;
        lx->tok_len = (size_t)(lx->p - lx->tok);
        return;
    }
    while (*lx->p && !is_delim(*lx->p)) lx->p++;
    lx->kind = TK_WORD;
    lx->tok_len = (size_t)(lx->p - lx->tok);
}

static int tok_is(const lexer *lx, const char *kw) {
    if (lx->kind != TK_WORD) return 0;
    size_t n = strlen(kw);
    if (n != lx->tok_len) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = lx->tok[i];
        if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
        if (c != kw[i]) return 0;
    }
    return 1;
}

static int parse_err(lexer *lx, pm_err *e, const char *what) {
    return pm_fail(e, PAIMON_CORRUPT, "cannot parse type \"%s\" at position %d: %s", lx->src,
                   (int)(lx->tok - lx->src), what);
}

/* "(" INT ")" if present; *present tells whether it was. */
static int parse_opt_int_param(lexer *lx, pm_err *e, int *present, int32_t *val) {
    *present = 0;
    if (lx->kind != TK_LPAREN) return PAIMON_OK;
    lex_next(lx);
    if (lx->kind != TK_INT) return parse_err(lx, e, "integer expected");
    if (lx->ival < 0) return parse_err(lx, e, "integer out of range");
    *val = (int32_t)lx->ival;
    lex_next(lx);
    if (lx->kind != TK_RPAREN) return parse_err(lx, e, "')' expected");
    lex_next(lx);
    *present = 1;
    return PAIMON_OK;
}

/* Optional "WITHOUT TIME ZONE" (TIME, TIMESTAMP). */
static int parse_without_tz(lexer *lx, pm_err *e) {
    if (!tok_is(lx, "WITHOUT")) return PAIMON_OK;
    lex_next(lx);
    if (!tok_is(lx, "TIME")) return parse_err(lx, e, "'TIME' expected");
    lex_next(lx);
    if (!tok_is(lx, "ZONE")) return parse_err(lx, e, "'ZONE' expected");
    lex_next(lx);
    return PAIMON_OK;
}

static int parse_with_nullability(lexer *lx, pm_err *e, pm_type **out);

/* *out = a new nullable type of this root. */
static int new_type(pm_type_root root, pm_type **out, pm_err *e) {
    *out = pm_type_new(root, 1);
    return *out ? PAIMON_OK : pm_nomem(e);
}

/* Keywords with no parameters; 0 if the token is none of them. */
static int simple_root(lexer *lx, pm_type_root *root) {
    static const struct { const char *kw; pm_type_root root; } simple[] = {
        {"BOOLEAN", PM_T_BOOLEAN}, {"TINYINT", PM_T_TINYINT}, {"SMALLINT", PM_T_SMALLINT},
        {"INT", PM_T_INT},         {"INTEGER", PM_T_INT},     {"BIGINT", PM_T_BIGINT},
        {"FLOAT", PM_T_FLOAT},     {"DATE", PM_T_DATE},       {"VARIANT", PM_T_VARIANT},
        {"BLOB", PM_T_BLOB},
    };
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (tok_is(lx, simple[i].kw)) { *root = simple[i].root; return 1; }
    return 0;
}

/* CHAR/VARCHAR/BINARY/VARBINARY [(length)] */
static int parse_sized_string(lexer *lx, pm_err *e, pm_type **out) {
    pm_type_root root = tok_is(lx, "CHAR") ? PM_T_CHAR : tok_is(lx, "VARCHAR") ? PM_T_VARCHAR
                      : tok_is(lx, "BINARY") ? PM_T_BINARY : PM_T_VARBINARY;
    int present = 0;
    int32_t v = 0;
    lex_next(lx);
    int rc = parse_opt_int_param(lx, e, &present, &v);
    if (rc) return rc;
    if (present && v < 1) return parse_err(lx, e, "length must be between 1 and 2147483647");
    if ((rc = new_type(root, out, e))) return rc;
    if (present) (*out)->length = v;
    return PAIMON_OK;
}

/* DECIMAL/NUMERIC/DEC [(precision [, scale])] */
static int parse_decimal(lexer *lx, pm_err *e, pm_type **out) {
    int32_t p = 10, s = 0;
    lex_next(lx);
    if (lx->kind == TK_LPAREN) {
        lex_next(lx);
        if (lx->kind != TK_INT || lx->ival < 0) return parse_err(lx, e, "precision expected");
        p = (int32_t)lx->ival;
        lex_next(lx);
        if (lx->kind == TK_COMMA) {
            lex_next(lx);
            if (lx->kind != TK_INT || lx->ival < 0) return parse_err(lx, e, "scale expected");
            s = (int32_t)lx->ival;
            lex_next(lx);
        }
        if (lx->kind != TK_RPAREN) return parse_err(lx, e, "')' expected");
        lex_next(lx);
    }
    if (p < 1 || p > 38) return parse_err(lx, e, "decimal precision must be between 1 and 38");
    if (s < 0 || s > p) return parse_err(lx, e, "decimal scale must be between 0 and the precision");
    int rc = new_type(PM_T_DECIMAL, out, e);
    if (rc) return rc;
    (*out)->precision = p;
    (*out)->scale = s;
    return PAIMON_OK;
}

/* TIME [(precision)] [WITHOUT TIME ZONE] */
static int parse_time(lexer *lx, pm_err *e, pm_type **out) {
    int present = 0;
    int32_t v = 0;
    lex_next(lx);
    int rc = parse_opt_int_param(lx, e, &present, &v);
    if (rc) return rc;
    if (present && v > 9) return parse_err(lx, e, "time precision must be between 0 and 9");
    if ((rc = parse_without_tz(lx, e)) || (rc = new_type(PM_T_TIME, out, e))) return rc;
    (*out)->precision = present ? v : 0;
    return PAIMON_OK;
}

/* TIMESTAMP [(p)] [WITHOUT TIME ZONE | WITH LOCAL TIME ZONE], TIMESTAMP_LTZ [(p)] */
static int parse_timestamp(lexer *lx, pm_err *e, pm_type **out) {
    int ltz = tok_is(lx, "TIMESTAMP_LTZ"), present = 0;
    int32_t v = 0;
    lex_next(lx);
    int rc = parse_opt_int_param(lx, e, &present, &v);
    if (rc) return rc;
    if (present && v > 9) return parse_err(lx, e, "timestamp precision must be between 0 and 9");
    if (!ltz) {
        if (tok_is(lx, "WITHOUT")) {
            if ((rc = parse_without_tz(lx, e))) return rc;
        } else if (tok_is(lx, "WITH")) {
            lex_next(lx);
            if (!tok_is(lx, "LOCAL")) return parse_err(lx, e, "'LOCAL' expected");
            lex_next(lx);
            if (!tok_is(lx, "TIME")) return parse_err(lx, e, "'TIME' expected");
            lex_next(lx);
            if (!tok_is(lx, "ZONE")) return parse_err(lx, e, "'ZONE' expected");
            lex_next(lx);
            ltz = 1;
        }
    }
    if ((rc = new_type(ltz ? PM_T_TIMESTAMP_LTZ : PM_T_TIMESTAMP, out, e))) return rc;
    (*out)->precision = present ? v : 6;
    return PAIMON_OK;
}

/* VECTOR<element, length>: a numeric element type. */
static int parse_vector(lexer *lx, pm_err *e, pm_type **out) {
    pm_type *el = NULL;
    lex_next(lx);
    if (lx->kind != TK_LT) return parse_err(lx, e, "'<' expected");
    lex_next(lx);
    int rc = parse_with_nullability(lx, e, &el);
    if (rc) return rc;
    if (el->root > PM_T_DOUBLE) {
        pm_type_free(el);
        return parse_err(lx, e, "invalid vector element type");
    }
    if (lx->kind != TK_COMMA) { pm_type_free(el); return parse_err(lx, e, "',' expected"); }
    lex_next(lx);
    if (lx->kind != TK_INT || lx->ival < 1) {
        pm_type_free(el);
        return parse_err(lx, e, "vector length expected");
    }
    int32_t v = (int32_t)lx->ival;
    lex_next(lx);
    if (lx->kind != TK_GT) { pm_type_free(el); return parse_err(lx, e, "'>' expected"); }
    lex_next(lx);
    if ((rc = new_type(PM_T_VECTOR, out, e))) { pm_type_free(el); return rc; }
    (*out)->element = el;
    (*out)->length = v;
    return PAIMON_OK;
}

static int parse_base(lexer *lx, pm_err *e, pm_type **out) {
    if (lx->kind != TK_WORD) return parse_err(lx, e, "type keyword expected");
    pm_type_root root;
    int rc;
    if (simple_root(lx, &root)) {
        if ((rc = new_type(root, out, e))) return rc;
        lex_next(lx);
        return PAIMON_OK;
    }
    if (tok_is(lx, "DOUBLE")) {
        if ((rc = new_type(PM_T_DOUBLE, out, e))) return rc;
        lex_next(lx);
        if (tok_is(lx, "PRECISION")) lex_next(lx);
        return PAIMON_OK;
    }
    if (tok_is(lx, "STRING") || tok_is(lx, "BYTES")) {
        if ((rc = new_type(tok_is(lx, "STRING") ? PM_T_VARCHAR : PM_T_VARBINARY, out, e))) return rc;
        (*out)->length = PM_MAX_LEN;
        lex_next(lx);
        return PAIMON_OK;
    }
    if (tok_is(lx, "CHAR") || tok_is(lx, "VARCHAR") || tok_is(lx, "BINARY") || tok_is(lx, "VARBINARY"))
        return parse_sized_string(lx, e, out);
    if (tok_is(lx, "DECIMAL") || tok_is(lx, "NUMERIC") || tok_is(lx, "DEC")) return parse_decimal(lx, e, out);
    if (tok_is(lx, "TIME")) return parse_time(lx, e, out);
    if (tok_is(lx, "TIMESTAMP") || tok_is(lx, "TIMESTAMP_LTZ")) return parse_timestamp(lx, e, out);
    if (tok_is(lx, "VECTOR")) return parse_vector(lx, e, out);
    return parse_err(lx, e, "unsupported or unknown type");
}

/* Returns 1 when the nullability suffix says NOT NULL, 0 otherwise. */
static int parse_nullability(lexer *lx, pm_err *e, int *nullable) {
    *nullable = 1;
    if (tok_is(lx, "NOT")) {
        lex_next(lx);
        if (!tok_is(lx, "NULL")) return parse_err(lx, e, "'NULL' expected after 'NOT'");
        lex_next(lx);
        *nullable = 0;
    } else if (tok_is(lx, "NULL")) {
        lex_next(lx);
    }
    return PAIMON_OK;
}

static int parse_with_nullability(lexer *lx, pm_err *e, pm_type **out) {
    pm_type *t = NULL;
    int rc, nullable;
    if ((rc = parse_base(lx, e, &t))) return rc;
    if ((rc = parse_nullability(lx, e, &nullable))) { pm_type_free(t); return rc; }
    t->nullable = nullable;
    /* suffix notation: "INT ARRAY", "INT MULTISET" */
    if (tok_is(lx, "ARRAY") || tok_is(lx, "MULTISET")) {
        pm_type *c = pm_type_new(tok_is(lx, "ARRAY") ? PM_T_ARRAY : PM_T_MULTISET, 1);
        if (!c) { pm_type_free(t); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
        c->element = t;
        t = c;
        lex_next(lx);
        if ((rc = parse_nullability(lx, e, &nullable))) { pm_type_free(t); return rc; }
        t->nullable = nullable;
    }
    *out = t;
    return PAIMON_OK;
}

int pm_type_parse_atomic(const char *s, pm_type **out, pm_err *e) {
    if (out) *out = NULL;
    if (!s || !out) return pm_fail(e, PAIMON_MISUSE, "pm_type_parse_atomic: NULL argument");
    lexer lx;
    memset(&lx, 0, sizeof lx);
    lx.src = s;
    lx.p = s;
    lex_next(&lx);
    pm_type *t = NULL;
    int rc = parse_with_nullability(&lx, e, &t);
    if (rc) return rc;
    if (lx.kind != TK_END) {
        pm_type_free(t);
        return parse_err(&lx, e, "unexpected token");
    }
    *out = t;
    return PAIMON_OK;
}

/* ---- printing ----------------------------------------------------------- */

static int append_escaped(pm_buf *out, const char *s, char q) {
    if (pm_buf_putc(out, (uint8_t)q)) return PAIMON_NOMEM;
    for (; s && *s; s++) {
        if (*s == q && pm_buf_putc(out, (uint8_t)q)) return PAIMON_NOMEM;
        if (pm_buf_putc(out, (uint8_t)*s)) return PAIMON_NOMEM;
    }
    return pm_buf_putc(out, (uint8_t)q);
}

static int type_to_sql(const pm_type *t, pm_buf *out, int depth) {
    int rc = PAIMON_OK;
    if (depth > 256) return PAIMON_ERROR;
    switch (t->root) {
    case PM_T_BOOLEAN: case PM_T_TINYINT: case PM_T_SMALLINT: case PM_T_INT: case PM_T_BIGINT:
    case PM_T_FLOAT: case PM_T_DOUBLE: case PM_T_DATE: case PM_T_VARIANT: case PM_T_BLOB:
        rc = pm_buf_printf(out, "%s", pm_type_root_name(t->root));
        break;
    case PM_T_DECIMAL:
        rc = pm_buf_printf(out, "DECIMAL(%d, %d)", (int)t->precision, (int)t->scale);
        break;
    case PM_T_CHAR:
        rc = pm_buf_printf(out, "CHAR(%d)", (int)t->length);
        break;
    case PM_T_VARCHAR:
        rc = t->length == PM_MAX_LEN ? pm_buf_printf(out, "STRING")
                                     : pm_buf_printf(out, "VARCHAR(%d)", (int)t->length);
        break;
    case PM_T_BINARY:
        rc = pm_buf_printf(out, "BINARY(%d)", (int)t->length);
        break;
    case PM_T_VARBINARY:
        rc = t->length == PM_MAX_LEN ? pm_buf_printf(out, "BYTES")
                                     : pm_buf_printf(out, "VARBINARY(%d)", (int)t->length);
        break;
    case PM_T_TIME:
        rc = pm_buf_printf(out, "TIME(%d)", (int)t->precision);
        break;
    case PM_T_TIMESTAMP:
        rc = pm_buf_printf(out, "TIMESTAMP(%d)", (int)t->precision);
        break;
    case PM_T_TIMESTAMP_LTZ:
        rc = pm_buf_printf(out, "TIMESTAMP(%d) WITH LOCAL TIME ZONE", (int)t->precision);
        break;
    case PM_T_ARRAY: case PM_T_MULTISET:
        if (!t->element) return PAIMON_MISUSE;
        if ((rc = pm_buf_printf(out, "%s<", t->root == PM_T_ARRAY ? "ARRAY" : "MULTISET"))) return rc;
        if ((rc = type_to_sql(t->element, out, depth + 1))) return rc;
        rc = pm_buf_putc(out, '>');
        break;
    case PM_T_VECTOR:
        if (!t->element) return PAIMON_MISUSE;
        if ((rc = pm_buf_printf(out, "VECTOR<"))) return rc;
        if ((rc = type_to_sql(t->element, out, depth + 1))) return rc;
        rc = pm_buf_printf(out, ", %d>", (int)t->length);
        break;
    case PM_T_MAP:
        if (!t->element || !t->value) return PAIMON_MISUSE;
        if ((rc = pm_buf_printf(out, "MAP<"))) return rc;
        if ((rc = type_to_sql(t->element, out, depth + 1))) return rc;
        if ((rc = pm_buf_printf(out, ", "))) return rc;
        if ((rc = type_to_sql(t->value, out, depth + 1))) return rc;
        rc = pm_buf_putc(out, '>');
        break;
    case PM_T_ROW:
        if ((rc = pm_buf_printf(out, "ROW<"))) return rc;
        for (size_t i = 0; i < t->n_fields; i++) {
            const pm_data_field *f = &t->fields[i];
            if (!f->type) return PAIMON_MISUSE;
            if (i && (rc = pm_buf_printf(out, ", "))) return rc;
            if ((rc = append_escaped(out, f->name ? f->name : "", '`'))) return rc;
            if ((rc = pm_buf_putc(out, ' '))) return rc;
            if ((rc = type_to_sql(f->type, out, depth + 1))) return rc;
            if (f->description && f->description[0]) {
                if ((rc = pm_buf_printf(out, " COMMENT "))) return rc;
                if ((rc = append_escaped(out, f->description, '\''))) return rc;
            }
            if (f->default_value && (rc = pm_buf_printf(out, " DEFAULT %s", f->default_value)))
                return rc;
        }
        rc = pm_buf_putc(out, '>');
        break;
    default:
        return PAIMON_UNSUPPORTED;
    }
    if (rc) return rc;
    if (!t->nullable) rc = pm_buf_printf(out, " NOT NULL");
    return rc;
}

int pm_type_to_sql(const pm_type *t, pm_buf *out) {
    if (!t || !out) return PAIMON_MISUSE;
    size_t mark = out->len;
    int rc = type_to_sql(t, out, 0);
    if (rc) out->len = mark;
    return rc;
}
