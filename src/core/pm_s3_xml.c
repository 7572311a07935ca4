/* Small strict XML reader for the S3 answers (see pm_s3_xml.h). */
#include "pm_s3_xml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XML_MAX_DEPTH 32
#define XML_MAX_NAME 64

typedef struct xml_state {
    const char *p, *end;
    char names[XML_MAX_DEPTH][XML_MAX_NAME];
    int depth;
    int has_child[XML_MAX_DEPTH];
    pm_buf text;
} xml_state;

static int is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.' || c == ':';
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* UTF-8 of a code point from &#N; / &#xN;. */
static int put_utf8(pm_buf *b, unsigned long cp) {
    uint8_t u[4];
    size_t n;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    if (cp < 0x80) { u[0] = (uint8_t)cp; n = 1; }
    else if (cp < 0x800) { u[0] = (uint8_t)(0xC0 | (cp >> 6)); u[1] = (uint8_t)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        u[0] = (uint8_t)(0xE0 | (cp >> 12)); u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (uint8_t)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        u[0] = (uint8_t)(0xF0 | (cp >> 18)); u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (uint8_t)(0x80 | (cp & 0x3F)); n = 4;
    }
    return pm_buf_append(b, u, n) ? -2 : 0;
}

/* Decodes the entity at s->p ('&'); 0 ok, -1 bad, -2 out of memory. */
static int decode_entity(xml_state *s) {
    const char *semi = memchr(s->p, ';', (size_t)(s->end - s->p) < 12 ? (size_t)(s->end - s->p) : 12);
    if (!semi) return -1;
    const char *nm = s->p + 1;
    size_t len = (size_t)(semi - nm);
    static const struct { const char *name; char c; } named[] = {
        {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
    int rc = -1;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strlen(named[i].name) == len && memcmp(nm, named[i].name, len) == 0)
            rc = pm_buf_putc(&s->text, (uint8_t)named[i].c) ? -2 : 0;
    if (rc == -1 && len >= 2 && nm[0] == '#') {
        int hex = nm[1] == 'x';
        const char *d = nm + 1 + hex;
        if (d == semi) return -1;
        unsigned long cp = 0;
        for (; d < semi; d++) {
            int v;
            if (*d >= '0' && *d <= '9') v = *d - '0';
            else if (hex && *d >= 'a' && *d <= 'f') v = *d - 'a' + 10;
            else if (hex && *d >= 'A' && *d <= 'F') v = *d - 'A' + 10;
            else return -1;
            cp = cp * (hex ? 16 : 10) + (unsigned long)v;
            if (cp > 0x10FFFF) return -1;
        }
        rc = put_utf8(&s->text, cp);
    }
    if (rc == 0) s->p = semi + 1;
    return rc;
}

/* Skips "<?...?>" or "<!--...-->" at s->p; 0 ok, -1 unterminated. */
static int skip_special(xml_state *s) {
    const char *close = s->p[1] == '?' ? "?>" : "-->";
    size_t cl = strlen(close);
    for (const char *q = s->p + 2; q + cl <= s->end; q++)
        if (memcmp(q, close, cl) == 0) { s->p = q + cl; return 0; }
    return -1;
}

/* Reads a tag name at s->p into out; returns its length, 0 if none/too long. */
static size_t read_name(xml_state *s, char out[XML_MAX_NAME]) {
    size_t n = 0;
    while (s->p < s->end && is_name_char(*s->p)) {
        if (n + 1 >= XML_MAX_NAME) return 0;
        out[n++] = *s->p++;
    }
    out[n] = '\0';
    return n;
}

/* Skips attributes up to '>' or '/>'; sets *empty for '/>'; 0 or -1. */
static int skip_attrs(xml_state *s, int *empty) {
    while (s->p < s->end) {
        char c = *s->p;
        if (c == '>') { s->p++; *empty = 0; return 0; }
        if (c == '/' && s->p + 1 < s->end && s->p[1] == '>') { s->p += 2; *empty = 1; return 0; }
        if (c == '"' || c == '\'') {
            const char *q = memchr(s->p + 1, c, (size_t)(s->end - s->p - 1));
            if (!q) return -1;
            s->p = q + 1;
        } else if (c == '<') {
            return -1;
        } else {
            s->p++;
        }
    }
    return -1;
}

static int fail_at(xml_state *s, const char *data, const char *what, const char *why, pm_err *e) {
    return pm_fail(e, PAIMON_IO, "%s: the answer is not valid S3 XML (%s at byte %lld)", what, why,
                   (long long)(s->p - data));
}

static int close_element(xml_state *s, pm_xml_cb cb, void *ctx) {
    int d = s->depth;
    const char *parent = d >= 2 ? s->names[d - 2] : "";
    int rc = 0;
    if (cb) {
        if (s->has_child[d - 1]) rc = cb(ctx, d, parent, s->names[d - 1], NULL, 0);
        else if (pm_buf_cstr(&s->text)) rc = -2;
        else rc = cb(ctx, d, parent, s->names[d - 1], s->text.data ? (const char *)s->text.data : "", s->text.len);
    }
    s->text.len = 0;
    s->depth--;
    return rc;
}

int pm_xml_walk(const char *data, size_t n, pm_xml_cb cb, void *ctx, char root_out[64], const char *what,
                pm_err *e) {
    xml_state s;
    memset(&s, 0, sizeof s);
    s.p = data;
    s.end = data + n;
    int seen_root = 0, rc = PAIMON_OK;
    if (root_out) root_out[0] = '\0';
    while (s.p < s.end && rc == PAIMON_OK) {
        char c = *s.p;
        if (c != '<') {
            if (s.depth == 0) {
                if (!is_space(c)) { rc = fail_at(&s, data, what, "text outside the root element", e); break; }
                s.p++;
            } else if (c == '&') {
                int r = decode_entity(&s);
                if (r == -2) rc = pm_nomem(e);
                else if (r) rc = fail_at(&s, data, what, "unknown or malformed entity", e);
            } else {
                if (pm_buf_putc(&s.text, (uint8_t)c)) rc = pm_nomem(e);
                s.p++;
            }
            continue;
        }
        if (s.p + 1 >= s.end) { rc = fail_at(&s, data, what, "truncated tag", e); break; }
        if (s.p[1] == '?' || (s.p[1] == '!' && s.end - s.p >= 4 && memcmp(s.p, "<!--", 4) == 0)) {
            if (skip_special(&s)) rc = fail_at(&s, data, what, "unterminated declaration or comment", e);
            continue;
        }
        if (s.p[1] == '/') {
            s.p += 2;
            char nm[XML_MAX_NAME];
            size_t nl = read_name(&s, nm);
            while (s.p < s.end && is_space(*s.p)) s.p++;
            if (!nl || s.p >= s.end || *s.p != '>') { rc = fail_at(&s, data, what, "malformed end tag", e); break; }
            s.p++;
            if (s.depth == 0 || strcmp(nm, s.names[s.depth - 1]) != 0) {
                rc = fail_at(&s, data, what, "end tag does not match", e);
                break;
            }
            int r = close_element(&s, cb, ctx);
            if (r == -2) rc = pm_nomem(e);
            else rc = r;
            continue;
        }
        /* start tag */
        s.p++;
        if (s.depth == 0 && seen_root) { rc = fail_at(&s, data, what, "a second root element", e); break; }
        if (s.depth == XML_MAX_DEPTH) { rc = fail_at(&s, data, what, "elements nested too deep", e); break; }
        char *nm = s.names[s.depth];
        if (!read_name(&s, nm)) { rc = fail_at(&s, data, what, "malformed start tag", e); break; }
        int empty = 0;
        if (skip_attrs(&s, &empty)) { rc = fail_at(&s, data, what, "unterminated start tag", e); break; }
        if (s.depth == 0) {
            seen_root = 1;
            if (root_out) snprintf(root_out, 64, "%s", nm);
        } else {
            s.has_child[s.depth - 1] = 1;
        }
        s.has_child[s.depth] = 0;
        s.text.len = 0;   /* mixed content: only the text after the last child counts */
        s.depth++;
        if (empty) {
            int r = close_element(&s, cb, ctx);
            rc = r == -2 ? pm_nomem(e) : r;
        }
    }
    if (rc == PAIMON_OK && (s.depth != 0 || !seen_root))
        rc = fail_at(&s, data, what, seen_root ? "unclosed element" : "no root element", e);
    pm_buf_free(&s.text);
    return rc;
}

int pm_xml_escape(pm_buf *b, const char *s) {
    for (; *s; s++) {
        const char *r = NULL;
        switch (*s) {
        case '&': r = "&amp;"; break;
        case '<': r = "&lt;"; break;
        case '>': r = "&gt;"; break;
        case '"': r = "&quot;"; break;
        case '\'': r = "&apos;"; break;
        default: break;
        }
        if (r ? pm_buf_append(b, r, strlen(r)) : pm_buf_putc(b, (uint8_t)*s)) return PAIMON_NOMEM;
    }
    return PAIMON_OK;
}
