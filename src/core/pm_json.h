/* Internal: a strict JSON reader (RFC 8259) for the metadata files.
 *
 * What it accepts and rejects is jansson's json_loadb with no flags, which
 * the metadata readers used before (and which spec/c/test_json.c checks it
 * against): one object or array, UTF-8 only, no control characters or
 * \u0000 in strings, paired surrogates, integers within int64 (else an
 * error), reals within double, nesting up to 2048 levels; a key given
 * twice keeps its first place and takes its last value. One difference:
 * a NUL byte outside a string is refused (jansson drops one that follows a
 * number or literal). The whole document
 * lives in one arena (a snapshot file parses into a few allocations
 * instead of one per value). */
#ifndef PM_JSON_H
#define PM_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef enum pm_json_type {
    PM_JSON_NULL, PM_JSON_FALSE, PM_JSON_TRUE, PM_JSON_INTEGER, PM_JSON_REAL,
    PM_JSON_STRING, PM_JSON_ARRAY, PM_JSON_OBJECT
} pm_json_type;

typedef struct pm_json pm_json;
typedef struct pm_json_member pm_json_member;

struct pm_json {
    pm_json_type type;
    union {
        int64_t i;                                    /* INTEGER */
        double d;                                     /* REAL */
        struct { const char *s; size_t len; } str;    /* STRING: NUL-terminated */
        struct { pm_json *v; size_t n; } arr;         /* ARRAY */
        struct { pm_json_member *m; size_t n; } obj;  /* OBJECT, in first-seen key order */
    } u;
};

struct pm_json_member {
    const char *key;   /* NUL-terminated */
    size_t key_len;
    pm_json value;
};

typedef struct pm_json_doc pm_json_doc;

/* Where and why parsing failed: 1-based line and column (in bytes). */
typedef struct pm_json_error {
    int line, column;
    int nomem;          /* out of memory, not bad input */
    char text[120];
} pm_json_error;

/* Parse text[0, len). 0 and *out, or -1 with *err filled. */
int pm_json_parse(const char *text, size_t len, pm_json_doc **out, pm_json_error *err);
const pm_json *pm_json_root(const pm_json_doc *d);
void pm_json_doc_free(pm_json_doc *d);   /* NULL-safe */

/* Length of the valid UTF-8 sequence at p (no overlong forms, surrogates or
 * code points past U+10FFFF: what jansson accepts), or 0. */
size_t pm_utf8_len(const unsigned char *p, const unsigned char *end);

/* Accessors in jansson's manner: NULL-safe, a wrong type reads as absent. */
const pm_json *pm_json_get(const pm_json *obj, const char *key);   /* member value or NULL */
static inline int pm_json_is(const pm_json *v, pm_json_type t) { return v && v->type == t; }
static inline int pm_json_is_null(const pm_json *v) { return pm_json_is(v, PM_JSON_NULL); }
static inline int pm_json_is_integer(const pm_json *v) { return pm_json_is(v, PM_JSON_INTEGER); }
static inline int pm_json_is_real(const pm_json *v) { return pm_json_is(v, PM_JSON_REAL); }
static inline int pm_json_is_number(const pm_json *v) { return pm_json_is_integer(v) || pm_json_is_real(v); }
static inline int pm_json_is_string(const pm_json *v) { return pm_json_is(v, PM_JSON_STRING); }
static inline int pm_json_is_array(const pm_json *v) { return pm_json_is(v, PM_JSON_ARRAY); }
static inline int pm_json_is_object(const pm_json *v) { return pm_json_is(v, PM_JSON_OBJECT); }
static inline int pm_json_is_true(const pm_json *v) { return pm_json_is(v, PM_JSON_TRUE); }
static inline int pm_json_is_boolean(const pm_json *v) { return pm_json_is(v, PM_JSON_TRUE) || pm_json_is(v, PM_JSON_FALSE); }
static inline int64_t pm_json_int(const pm_json *v) { return pm_json_is_integer(v) ? v->u.i : 0; }
static inline double pm_json_real(const pm_json *v) { return pm_json_is_real(v) ? v->u.d : 0.0; }
static inline const char *pm_json_str(const pm_json *v) { return pm_json_is_string(v) ? v->u.str.s : NULL; }
static inline size_t pm_json_str_len(const pm_json *v) { return pm_json_is_string(v) ? v->u.str.len : 0; }
/* items of an array, members of an object */
static inline size_t pm_json_size(const pm_json *v) {
    return pm_json_is_array(v) ? v->u.arr.n : pm_json_is_object(v) ? v->u.obj.n : 0;
}
static inline const pm_json *pm_json_at(const pm_json *arr, size_t i) {
    return pm_json_is_array(arr) && i < arr->u.arr.n ? &arr->u.arr.v[i] : NULL;
}

#endif
