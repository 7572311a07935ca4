/* Canonical text of a jansson value and of a pm_json value, equal when
 * the two parsers read a document alike (spec/c/test_json.c and
 * spec/fuzz/fuzz_json.c compare them). */
#ifndef PM_JSON_CANON_H
#define PM_JSON_CANON_H

#include <jansson.h>
#include <string.h>

#include "pm_common.h"
#include "pm_json.h"

static inline void put_str(pm_buf *b, const char *s, size_t n) {
    pm_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) pm_buf_printf(b, "%02x", (unsigned char)s[i]);
    pm_buf_putc(b, '"');
}

static inline void canon_jansson(pm_buf *b, const json_t *v) {
    switch (json_typeof(v)) {
    case JSON_NULL: pm_buf_printf(b, "null"); break;
    case JSON_TRUE: pm_buf_printf(b, "true"); break;
    case JSON_FALSE: pm_buf_printf(b, "false"); break;
    case JSON_INTEGER: pm_buf_printf(b, "i%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL: pm_buf_printf(b, "r%.17g", json_real_value(v)); break;
    case JSON_STRING: put_str(b, json_string_value(v), json_string_length(v)); break;
    case JSON_ARRAY: {
        pm_buf_putc(b, '[');
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) { if (i) pm_buf_putc(b, ','); canon_jansson(b, x); }
        pm_buf_putc(b, ']');
        break;
    }
    case JSON_OBJECT: {
        pm_buf_putc(b, '{');
        const char *k;
        json_t *x;
        int first = 1;
        json_object_foreach((json_t *)v, k, x) {
            if (!first) pm_buf_putc(b, ',');
            first = 0;
            put_str(b, k, strlen(k));
            pm_buf_putc(b, ':');
            canon_jansson(b, x);
        }
        pm_buf_putc(b, '}');
        break;
    }
    }
}

static inline void canon_ours(pm_buf *b, const pm_json *v) {
    switch (v->type) {
    case PM_JSON_NULL: pm_buf_printf(b, "null"); break;
    case PM_JSON_TRUE: pm_buf_printf(b, "true"); break;
    case PM_JSON_FALSE: pm_buf_printf(b, "false"); break;
    case PM_JSON_INTEGER: pm_buf_printf(b, "i%lld", (long long)v->u.i); break;
    case PM_JSON_REAL: pm_buf_printf(b, "r%.17g", v->u.d); break;
    case PM_JSON_STRING: put_str(b, v->u.str.s, v->u.str.len); break;
    case PM_JSON_ARRAY:
        pm_buf_putc(b, '[');
        for (size_t i = 0; i < v->u.arr.n; i++) { if (i) pm_buf_putc(b, ','); canon_ours(b, &v->u.arr.v[i]); }
        pm_buf_putc(b, ']');
        break;
    case PM_JSON_OBJECT:
        pm_buf_putc(b, '{');
        for (size_t i = 0; i < v->u.obj.n; i++) {
            if (i) pm_buf_putc(b, ',');
            put_str(b, v->u.obj.m[i].key, v->u.obj.m[i].key_len);
            pm_buf_putc(b, ':');
            canon_ours(b, &v->u.obj.m[i].value);
        }
        pm_buf_putc(b, '}');
        break;
    }
}

#endif
