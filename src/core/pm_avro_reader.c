/* Avro object container reader: header/metadata/sync parsing, block
 * decompression and writer-schema driven decoding into an arena-allocated
 * value tree. Everything read from the file is bounds-checked before use. */
#include "pm_avro.h"
#include "pm_avro_codec.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECODE_MAX_DEPTH 512
/* Values one record may allocate (guards against tiny inputs expanding into
 * huge trees, e.g. arrays of nulls). */
#define RECORD_MAX_VALUES ((size_t)1 << 22)
/* Records of a schema that can encode in zero bytes, per file. */
#define EMPTY_RECORDS_MAX ((uint64_t)1 << 24)

typedef struct pm_skip_prog pm_skip_prog;
typedef struct dec_prog dec_prog;
/* Per projected record: the skip program's sequence for the run of
 * skipped fields that starts at field i (0: none, skip_value) and its
 * length. */
typedef struct skip_runs { uint32_t start[64]; uint8_t len[64]; } skip_runs;

typedef struct meta_entry {
    const uint8_t *key; size_t key_len;
    const uint8_t *val; size_t val_len;
} meta_entry;

struct pm_avro_reader {
    const uint8_t *data;
    size_t len;
    size_t pos;                 /* next unread byte of the file */
    char *file_name;
    pm_avro_schema *schema;
    int schema_borrowed;        /* schema belongs to a pm_avro_schema_cache */
    size_t min_record_size;     /* lower bound of one record's encoding */
    int codec;
    uint8_t sync[16];
    meta_entry *meta;
    size_t n_meta;
    pm_avro_codec_ctx cctx;
    pm_buf block_buf;           /* decompressed block (non-null codecs) */
    const uint8_t *cur, *end;   /* decode cursor in the current block */
    int64_t block_left;         /* records left in the current block */
    int64_t block_count;        /* records of the current block */
    uint64_t block_no;          /* 1-based number of the current block */
    uint64_t empty_records;
    int in_block, failed;
    pm_arena *arena;
    pm_avro_value root;
    pm_avro_skip skip[PM_AVRO_SKIP_MAX];
    int n_skip;
    pm_skip_prog *prog;         /* compiled walks (NULL: skip_value) */
    skip_runs *runs;            /* per skip[] entry, into prog */
    uint32_t prog_record;       /* prog's sequence walking a whole record (0: none) */
    int prog_tried;
    dec_prog *dprog;     /* compiled decode of the top record (NULL: decode) */
    uint64_t records_seen;      /* in the blocks loaded, until prog_tried */
    uint64_t compile_after;     /* records_seen that repays compiling (UINT64_MAX: never) */
    pm_avro_block_filter filter;
    void *filter_ud;
    unsigned part, parts;       /* pm_avro_reader_block_share */
    const uint8_t *raw;         /* the current block as stored (pm_avro_reader_block) */
    size_t raw_len;
    uint64_t raw_no;            /* its number and records (a shared reader passes others over) */
    int64_t raw_count;
};

/* ---- decoding ------------------------------------------------------------ */

typedef struct dec {
    const uint8_t *p, *end;
    pm_arena *arena;
    const pm_avro_skip *skip;
    int n_skip;
    const pm_skip_prog *prog;
    const skip_runs *runs;
    size_t values_left;
    int nomem;
    char msg[200];
} dec;

static int dec_fail(dec *d, const char *fmt, ...) PM_PRINTF(2, 3);
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int dec_fail(dec *d, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    return -1;
}
#define DEC_FAIL dec_fail

static int read_long_slow(dec *d, int64_t *out) {
    const uint8_t *p = d->p;
    uint64_t u = 0;
    for (int i = 0; i < 10; i++) {
        if (p >= d->end) return DEC_FAIL(d, "unexpected end of data in varint");
        uint8_t b = *p++;
        u |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            d->p = p;
            *out = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
            return 0;
        }
    }
    return DEC_FAIL(d, "varint longer than 10 bytes");
}

static inline int read_long(dec *d, int64_t *out) {
    if (d->p < d->end && !(*d->p & 0x80)) {
        uint64_t u = *d->p++;
        *out = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
        return 0;
    }
    return read_long_slow(d, out);
}

static inline int read_int(dec *d, int32_t *out) {
    int64_t v;
    if (read_long(d, &v)) return -1;
    if (v < INT32_MIN || v > INT32_MAX) return DEC_FAIL(d, "int value %lld out of range", (long long)v);
    *out = (int32_t)v;
    return 0;
}

static pm_avro_value *alloc_values(dec *d, size_t n) {
    if (n > d->values_left) {
        (void)DEC_FAIL(d, "record expands to more than %zu values", RECORD_MAX_VALUES);
        return NULL;
    }
    d->values_left -= n;
    pm_avro_value *v = pm_arena_alloc(d->arena, n * sizeof *v);
    if (!v) { d->nomem = 1; (void)DEC_FAIL(d, "out of memory"); }
    return v;
}

static int decode(dec *d, const pm_avro_schema *s, pm_avro_value *v, int depth);

/* ---- checks shared by decode and skip_value -------------------------------- */

/* A length-prefixed bytes / string / map key: the length is within the data. */
static inline int take_bytes(dec *d, const char *what, const uint8_t **p, size_t *n) {
    int64_t len;
    if (read_long(d, &len)) return -1;
    if (len < 0 || (uint64_t)len > (size_t)(d->end - d->p))
        return DEC_FAIL(d, "%s length %lld exceeds remaining %zu bytes", what, (long long)len, (size_t)(d->end - d->p));
    *p = d->p;
    *n = (size_t)len;
    d->p += len;
    return 0;
}

/* n raw bytes (float, double, fixed). */
static inline int take_raw(dec *d, size_t n, const char *what, const uint8_t **p) {
    if ((size_t)(d->end - d->p) < n) return DEC_FAIL(d, "unexpected end of data in %s", what);
    *p = d->p;
    d->p += n;
    return 0;
}

static inline int take_boolean(dec *d, int *out) {
    if (d->p >= d->end) return DEC_FAIL(d, "unexpected end of data in boolean");
    if (*d->p > 1) return DEC_FAIL(d, "bad boolean byte %u", *d->p);
    *out = *d->p++;
    return 0;
}

static inline int take_enum(dec *d, const pm_avro_schema *s, int32_t *out) {
    if (read_int(d, out)) return -1;
    if (*out < 0 || (size_t)*out >= s->n_symbols)
        return DEC_FAIL(d, "enum index %d out of range (%zu symbols)", *out, s->n_symbols);
    return 0;
}

/* The branch schema a union value continues with. */
static inline int take_branch(dec *d, const pm_avro_schema *s, int *branch, const pm_avro_schema **out) {
    int64_t b;
    if (read_long(d, &b)) return -1;
    if (b < 0 || (uint64_t)b >= s->n_branches)
        return DEC_FAIL(d, "union branch %lld out of range (%zu branches)", (long long)b, s->n_branches);
    *out = s->branches[b];
    *branch = (int)b;
    if ((*out)->type == PM_AVRO_UNION) return DEC_FAIL(d, "union inside a union");
    return 0;
}

/* Next array / map block: *count items (0: the end), within what the rest
 * of the data can hold and within the record's value budget (taken). */
static inline int take_block(dec *d, const pm_avro_schema *s, int64_t *count) {
    const char *what = s->type == PM_AVRO_MAP ? "map" : "array";
    int64_t c;
    if (read_long(d, &c)) return -1;
    if (c < 0) {
        int64_t bytes;
        if (c == INT64_MIN) return DEC_FAIL(d, "bad %s block count", what);
        c = -c;
        if (read_long(d, &bytes)) return -1;
        if (bytes < 0 || (uint64_t)bytes > (size_t)(d->end - d->p))
            return DEC_FAIL(d, "%s block byte size %lld exceeds remaining %zu bytes", what, (long long)bytes,
                            (size_t)(d->end - d->p));
    }
    size_t left = (size_t)(d->end - d->p);
    if (s->items_min && (uint64_t)c > left / s->items_min)
        return DEC_FAIL(d, "%s block count %lld too large (%zu bytes left)", what, (long long)c, left);
    if ((uint64_t)c > d->values_left)
        return DEC_FAIL(d, "%s block count %lld exceeds the limit of %zu values per record", what, (long long)c,
                        RECORD_MAX_VALUES);
    *count = c;
    return 0;
}

/* Walk a value without building it: the same checks as decode (the take_
 * helpers above), and a budget of values per record (each array item and
 * map entry counts, a map entry twice, like the decoder's key and value;
 * the decoder also counts the spare capacity it allocates, so a few huge
 * collections that it refuses can still be walked). */
static int skip_value(dec *d, const pm_avro_schema *s, int depth) {
    const uint8_t *p;
    size_t n;
    int32_t i32 = 0;
    int64_t i64 = 0;
    int b;
    for (;;) {
        switch (s->type) {
        case PM_AVRO_NULL: return 0;
        case PM_AVRO_BOOLEAN: return take_boolean(d, &b);
        case PM_AVRO_INT: return read_int(d, &i32);
        case PM_AVRO_LONG: return read_long(d, &i64);
        case PM_AVRO_FLOAT: return take_raw(d, 4, "float", &p);
        case PM_AVRO_DOUBLE: return take_raw(d, 8, "double", &p);
        case PM_AVRO_BYTES: return take_bytes(d, "bytes", &p, &n);
        case PM_AVRO_STRING: return take_bytes(d, "string", &p, &n);
        case PM_AVRO_FIXED: return take_raw(d, s->fixed_size, "fixed", &p);
        case PM_AVRO_ENUM: return take_enum(d, s, &i32);
        case PM_AVRO_RECORD:
            if (depth > DECODE_MAX_DEPTH) return DEC_FAIL(d, "values nested deeper than %d", DECODE_MAX_DEPTH);
            if (s->n_fields > d->values_left)
                return DEC_FAIL(d, "record expands to more than %zu values", RECORD_MAX_VALUES);
            d->values_left -= s->n_fields;
            for (size_t k = 0; k < s->n_fields; k++)
                if (skip_value(d, s->fields[k].type, depth + 1)) return -1;
            return 0;
        case PM_AVRO_ARRAY:
        case PM_AVRO_MAP:
            if (depth > DECODE_MAX_DEPTH) return DEC_FAIL(d, "values nested deeper than %d", DECODE_MAX_DEPTH);
            for (;;) {
                if (take_block(d, s, &i64)) return -1;
                if (i64 == 0) return 0;
                if (s->type == PM_AVRO_MAP && (uint64_t)i64 > (d->values_left - (size_t)i64))
                    return DEC_FAIL(d, "map block count %lld exceeds the limit of %zu values per record",
                                    (long long)i64, RECORD_MAX_VALUES);
                d->values_left -= (size_t)i64 * (s->type == PM_AVRO_MAP ? 2 : 1);
                for (int64_t k = 0; k < i64; k++) {
                    if (s->type == PM_AVRO_MAP && take_bytes(d, "map key", &p, &n)) return -1;
                    if (skip_value(d, s->items, depth + 1)) return -1;
                }
            }
        case PM_AVRO_UNION:
            if (take_branch(d, s, &b, &s)) return -1;
            continue;
        default:
            return DEC_FAIL(d, "unknown schema type %d", (int)s->type);
        }
    }
}

/* ---- skip programs ------------------------------------------------------------ */

/* What a reader walks without building (the skipped fields of a projection,
 * the records of a block passed over) compiled once into straight-line
 * ops: skip_value dispatches, recurses and goes through memory once per
 * value, which was most of the time a names-only manifest read took. Runs
 * of longs, ints, strings or bytes take one op, records are inlined with
 * their value budget taken at the start of the sequence, a union's null or
 * scalar branch is walked in place. Every value gets exactly skip_value's
 * checks: the common shapes (one-byte varints and lengths) are checked
 * inline, anything else goes through the take_ helpers, which also word
 * the messages; the budget fails for the same inputs (only the point where
 * it is noticed can differ). Nesting past SKIP_INLINE_DEPTH (recursive
 * schemas) is left to skip_value. */
#define SKIP_INLINE_DEPTH 16
#define SKIP_PROG_MIN_RECORDS 32       /* records loaded before a reader compiles */
/* Inlining copies a record wherever it is used: a small schema that names
 * the same record many times at every level would expand exponentially
 * (null fields emit no op but are still visited). Past this many ops,
 * union branches or schema nodes visited, the reader keeps skip_value. */
#define SKIP_PROG_MAX_OPS 4096
#define SKIP_PROG_MAX_VISITS (16 * SKIP_PROG_MAX_OPS)
/* sequence starts share a uint32 with the BRANCH_* flags */
typedef char skip_prog_ops_below_flags[4 * SKIP_PROG_MAX_OPS + SKIP_PROG_MAX_VISITS < (1u << 29) ? 1 : -1];
#define BRANCH_SCALAR 0x80000000u      /* tab / COLL target: one scalar op, in place */
#define BRANCH_UNION 0x40000000u       /* tab: a union inside a union (fails) */
#define BRANCH_OPT 0x20000000u         /* COLL target: a union of null and one scalar (branch << 8 | op) */

enum { OP_END, OP_BUDGET, OP_LONGS, OP_INTS, OP_STRINGS, OP_BYTES, OP_RAW, OP_BOOL, OP_ENUM, OP_UNION, OP_OPT,
       OP_COLL, OP_VALUE };

typedef struct skip_op {
    uint8_t op;
    uint16_t depth;            /* skip_value's depth of this value, relative to the program's root */
    uint32_t n;                /* LONGS..BYTES: how many; RAW: bytes; BUDGET: values; OPT: ops that follow */
    uint32_t at;               /* UNION: its branches in tab; OPT: the branch that is not null; COLL: the items' target */
    const pm_avro_schema *s;   /* ENUM, UNION, COLL, VALUE */
    const char *what;          /* RAW: for messages */
} skip_op;

typedef struct pending { uint32_t op, slot; const pm_avro_schema *s; uint16_t depth; } pending;

struct pm_skip_prog {
    skip_op *ops;              /* ops[0]: END */
    size_t n, cap;
    uint32_t *tab;             /* per union branch: 0 (null), BRANCH_* | op, or a sequence's start */
    size_t n_tab, cap_tab;
    pending *todo;             /* sequences still to compile */
    size_t n_todo, cap_todo;
    size_t merge_from;         /* a scalar may join a run at ops[merge_from..] only */
    size_t visits;             /* schema nodes compiled */
    int nomem;                 /* out of memory or too big: the program is dropped */
};

/* Of a union of null and one other branch: that branch's index (else -1). */
static int nullable_branch(const pm_avro_schema *s) {
    if (s->type != PM_AVRO_UNION || s->n_branches != 2) return -1;
    if (s->branches[0]->type == PM_AVRO_NULL && s->branches[1]->type != PM_AVRO_NULL) return 1;
    if (s->branches[1]->type == PM_AVRO_NULL && s->branches[0]->type != PM_AVRO_NULL) return 0;
    return -1;
}

/* The op that walks s alone, if it is a scalar one (else 0). */
static uint8_t scalar_op(const pm_avro_schema *s) {
    switch (s->type) {
    case PM_AVRO_LONG: return OP_LONGS;
    case PM_AVRO_INT: return OP_INTS;
    case PM_AVRO_STRING: return OP_STRINGS;
    case PM_AVRO_BYTES: return OP_BYTES;
    default: return 0;
    }
}

static uint32_t prog_emit(pm_skip_prog *g, uint8_t op, uint16_t depth) {
    if (g->nomem) return 0;
    if (g->n >= SKIP_PROG_MAX_OPS) { g->nomem = 1; return 0; }   /* too big: not compiled */
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 32;
        skip_op *no = realloc(g->ops, nc * sizeof *no);
        if (!no) { g->nomem = 1; return 0; }
        g->ops = no;
        g->cap = nc;
    }
    skip_op *o = &g->ops[g->n];
    memset(o, 0, sizeof *o);
    o->op = op;
    o->depth = depth;
    return (uint32_t)g->n++;
}

/* s is compiled as a sequence of its own later; its start goes to
 * ops[op].at (slot UINT32_MAX) or tab[slot]. */
static void prog_later(pm_skip_prog *g, uint32_t op, uint32_t slot, const pm_avro_schema *s, uint16_t depth) {
    if (g->nomem) return;
    if (g->n_todo == g->cap_todo) {
        size_t nc = g->cap_todo ? g->cap_todo * 2 : 8;
        pending *nt = realloc(g->todo, nc * sizeof *nt);
        if (!nt) { g->nomem = 1; return; }
        g->todo = nt;
        g->cap_todo = nc;
    }
    g->todo[g->n_todo++] = (pending){op, slot, s, depth};
}

/* Append the ops of one value to the sequence whose BUDGET op is `budget`. */
static void prog_value(pm_skip_prog *g, const pm_avro_schema *s, uint16_t depth, uint32_t budget) {
    if (g->nomem) return;
    if (++g->visits > SKIP_PROG_MAX_VISITS) { g->nomem = 1; return; }
    if (s->type == PM_AVRO_NULL) return;
    uint8_t so = scalar_op(s);
    if (so) {   /* joins a run of the same op */
        skip_op *last = &g->ops[g->n - 1];
        if (g->n - 1 >= g->merge_from && last->op == so && last->n < UINT32_MAX) { last->n++; return; }
        uint32_t i = prog_emit(g, so, depth);
        if (!g->nomem) g->ops[i].n = 1;
        return;
    }
    uint32_t i;
    switch (s->type) {
    case PM_AVRO_FLOAT:
    case PM_AVRO_DOUBLE:
    case PM_AVRO_FIXED:
        if (s->type == PM_AVRO_FIXED && s->fixed_size > UINT32_MAX) break;
        i = prog_emit(g, OP_RAW, depth);
        if (g->nomem) return;
        g->ops[i].n = s->type == PM_AVRO_FLOAT ? 4 : s->type == PM_AVRO_DOUBLE ? 8 : (uint32_t)s->fixed_size;
        g->ops[i].what = s->type == PM_AVRO_FLOAT ? "float" : s->type == PM_AVRO_DOUBLE ? "double" : "fixed";
        return;
    case PM_AVRO_BOOLEAN:
        prog_emit(g, OP_BOOL, depth);
        return;
    case PM_AVRO_ENUM:
        i = prog_emit(g, OP_ENUM, depth);
        if (!g->nomem) g->ops[i].s = s;
        return;
    case PM_AVRO_RECORD:
        if (depth >= SKIP_INLINE_DEPTH || s->n_fields > UINT32_MAX - g->ops[budget].n) break;
        g->ops[budget].n += (uint32_t)s->n_fields;
        for (size_t k = 0; k < s->n_fields; k++) prog_value(g, s->fields[k].type, (uint16_t)(depth + 1), budget);
        return;
    case PM_AVRO_ARRAY:
    case PM_AVRO_MAP:
        if (depth >= SKIP_INLINE_DEPTH) break;
        i = prog_emit(g, OP_COLL, depth);
        if (g->nomem) return;
        g->ops[i].s = s;
        int nb = nullable_branch(s->items);
        if (scalar_op(s->items)) g->ops[i].at = BRANCH_SCALAR | scalar_op(s->items);
        else if (nb >= 0 && scalar_op(s->items->branches[nb]))
            g->ops[i].at = BRANCH_OPT | (uint32_t)nb << 8 | scalar_op(s->items->branches[nb]);
        else prog_later(g, i, UINT32_MAX, s->items, (uint16_t)(depth + 1));
        return;
    case PM_AVRO_UNION: {
        if (depth >= SKIP_INLINE_DEPTH || s->n_branches >= BRANCH_UNION) break;
        /* null or X, X neither a scalar (walked in place below) nor a
         * record (its budget would be taken even when the branch is null):
         * X's ops follow in place */
        int nx = nullable_branch(s);
        const pm_avro_schema *x = nx >= 0 ? s->branches[nx] : NULL;
        if (x && !scalar_op(x) && x->type != PM_AVRO_RECORD && x->type != PM_AVRO_UNION) {
            i = prog_emit(g, OP_OPT, depth);
            if (g->nomem) return;
            g->ops[i].s = s;
            g->ops[i].at = (uint32_t)nx;
            g->merge_from = g->n;
            prog_value(g, x, depth, budget);
            if (g->nomem) return;
            g->ops[i].n = (uint32_t)(g->n - i - 1);
            g->merge_from = g->n;   /* nothing after joins X's ops */
            return;
        }
        i = prog_emit(g, OP_UNION, depth);
        if (g->nomem) return;
        g->ops[i].s = s;
        if (g->n_tab + s->n_branches > 4 * SKIP_PROG_MAX_OPS) { g->nomem = 1; return; }
        if (g->n_tab + s->n_branches > g->cap_tab) {
            size_t nc = g->n_tab + s->n_branches + g->cap_tab + 8;
            uint32_t *nt = realloc(g->tab, nc * sizeof *nt);
            if (!nt) { g->nomem = 1; return; }
            g->tab = nt;
            g->cap_tab = nc;
        }
        g->ops[i].at = (uint32_t)g->n_tab;
        for (size_t b = 0; b < s->n_branches; b++) {
            const pm_avro_schema *bs = s->branches[b];
            uint32_t slot = (uint32_t)g->n_tab++;
            g->tab[slot] = bs->type == PM_AVRO_NULL ? 0 : bs->type == PM_AVRO_UNION ? BRANCH_UNION
                         : scalar_op(bs) ? BRANCH_SCALAR | scalar_op(bs) : 0;
            if (bs->type != PM_AVRO_NULL && bs->type != PM_AVRO_UNION && !scalar_op(bs))
                prog_later(g, i, slot, bs, depth);
        }
        return;
    }
    default:
        break;
    }
    i = prog_emit(g, OP_VALUE, depth);   /* deep, recursive or anything else: skip_value */
    if (!g->nomem) g->ops[i].s = s;
}

/* A sequence: BUDGET, the values' ops, END. Its start (past the BUDGET
 * when nothing in it is a record). */
static uint32_t prog_sequence(pm_skip_prog *g, const pm_avro_field *fields, size_t n_fields,
                              const pm_avro_schema *one, uint16_t depth) {
    uint32_t start = prog_emit(g, OP_BUDGET, 0);
    g->merge_from = g->n;
    if (one) prog_value(g, one, depth, start);
    for (size_t k = 0; k < n_fields; k++) prog_value(g, fields[k].type, depth, start);
    prog_emit(g, OP_END, 0);
    return g->nomem || g->ops[start].n ? start : start + 1;
}

/* The sequences the others need (array items, union branches). */
static void prog_finish(pm_skip_prog *g) {
    while (!g->nomem && g->n_todo) {
        pending q = g->todo[--g->n_todo];
        uint32_t start = prog_sequence(g, NULL, 0, q.s, q.depth);
        if (q.slot == UINT32_MAX) g->ops[q.op].at = start;
        else g->tab[q.slot] = start;
    }
}

static void prog_free(pm_skip_prog *g) {
    if (!g) return;
    free(g->ops);
    free(g->tab);
    free(g->todo);
    free(g);
}

static pm_skip_prog *prog_new(void) {
    pm_skip_prog *g = calloc(1, sizeof *g);
    if (g) prog_emit(g, OP_END, 0);
    if (g && g->nomem) { prog_free(g); g = NULL; }
    return g;
}

#if defined(__GNUC__)
#define SKIP_INLINE inline __attribute__((always_inline))
#define SKIP_NOINLINE __attribute__((noinline))
#else
#define SKIP_INLINE inline
#define SKIP_NOINLINE
#endif

/* A scalar the fast paths below leave alone (and every failure): the helpers. */
static SKIP_NOINLINE int scalar_skip_slow(dec *d, const uint8_t **pp, uint32_t op) {
    const uint8_t *p = *pp;
    d->p = p;
    int64_t v;
    int32_t i32;
    const uint8_t *s;
    size_t n;
    int rc = op == OP_LONGS ? read_long_slow(d, &v)
           : op == OP_INTS ? read_int(d, &i32)
           : take_bytes(d, op == OP_STRINGS ? "string" : "bytes", &s, &n);
    *pp = d->p;
    return rc;
}

/* One value of scalar op `op` at *pp: one-byte ints and lengths, and longs
 * of up to 10 bytes, here. */
static SKIP_INLINE int scalar_skip(dec *d, const uint8_t **pp, const uint8_t *end, uint32_t op) {
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) {
        if (op == OP_LONGS || op == OP_INTS) { *pp = p + 1; return 0; }
        if (!(*p & 1) && (size_t)(*p >> 1) <= (size_t)(end - p - 1)) { *pp = p + 1 + (*p >> 1); return 0; }
    } else if (op == OP_LONGS && end - p >= 10) {   /* a long of 2 to 10 bytes */
        for (int k = 1; k < 10; k++)
            if (p[k] < 0x80) { *pp = p + k + 1; return 0; }
    }
    return scalar_skip_slow(d, pp, op);
}

/* Run the sequence at pc; depth: skip_value's depth of the program's root. */
static int prog_run(dec *d, const pm_skip_prog *g, uint32_t pc, int depth) {
    const uint8_t *p = d->p, *end = d->end, *x;
    int32_t i32 = 0;
    int b = 0;
    for (;; pc++) {
        const skip_op *o = &g->ops[pc];
        switch (o->op) {
        case OP_END:
            d->p = p;
            return 0;
        case OP_BUDGET:
            if (o->n > d->values_left) return DEC_FAIL(d, "record expands to more than %zu values", RECORD_MAX_VALUES);
            d->values_left -= o->n;
            break;
        /* one loop per op, so that scalar_skip is inlined with its op fixed */
        case OP_LONGS:
            for (uint32_t k = 0; k < o->n; k++)
                if (scalar_skip(d, &p, end, OP_LONGS)) return -1;
            break;
        case OP_INTS:
            for (uint32_t k = 0; k < o->n; k++)
                if (scalar_skip(d, &p, end, OP_INTS)) return -1;
            break;
        case OP_STRINGS:
            for (uint32_t k = 0; k < o->n; k++)
                if (scalar_skip(d, &p, end, OP_STRINGS)) return -1;
            break;
        case OP_BYTES:
            for (uint32_t k = 0; k < o->n; k++)
                if (scalar_skip(d, &p, end, OP_BYTES)) return -1;
            break;
        case OP_RAW:
            d->p = p;
            if (take_raw(d, o->n, o->what, &x)) return -1;
            p = d->p;
            break;
        case OP_BOOL:
            d->p = p;
            if (take_boolean(d, &b)) return -1;
            p = d->p;
            break;
        case OP_ENUM:
            d->p = p;
            if (take_enum(d, o->s, &i32)) return -1;
            p = d->p;
            break;
        case OP_UNION: {
            uint32_t br;
            if (p < end && *p < 0x80 && !(*p & 1) && (br = *p >> 1) < o->s->n_branches) {
                p++;
            } else {
                const pm_avro_schema *bs;
                d->p = p;
                if (take_branch(d, o->s, &b, &bs)) return -1;
                p = d->p;
                br = (uint32_t)b;
            }
            uint32_t to = g->tab[o->at + br];
            if (to & BRANCH_SCALAR) {
                if (scalar_skip(d, &p, end, to & ~BRANCH_SCALAR)) return -1;
            } else if (to & BRANCH_UNION) {
                d->p = p;
                return DEC_FAIL(d, "union inside a union");
            } else if (to) {
                d->p = p;
                if (prog_run(d, g, to, depth)) return -1;
                p = d->p;
            }
            break;
        }
        case OP_OPT: {
            uint32_t br;
            if (p < end && *p < 0x80 && !(*p & 1) && (br = *p >> 1) < 2) {
                p++;
            } else {
                const pm_avro_schema *bs;
                d->p = p;
                if (take_branch(d, o->s, &b, &bs)) return -1;
                p = d->p;
                br = (uint32_t)b;
            }
            if (br != o->at) pc += o->n;   /* null: over X's ops */
            break;
        }
        case OP_COLL: {
            if (p < end && *p == 0) { p++; break; }   /* empty */
            const pm_avro_schema *s = o->s;
            int is_map = s->type == PM_AVRO_MAP;
            if (depth + o->depth > DECODE_MAX_DEPTH) return DEC_FAIL(d, "values nested deeper than %d", DECODE_MAX_DEPTH);
            d->p = p;
            for (;;) {
                int64_t c;
                if (take_block(d, s, &c)) return -1;
                if (c == 0) break;
                if (is_map && (uint64_t)c > (d->values_left - (size_t)c))
                    return DEC_FAIL(d, "map block count %lld exceeds the limit of %zu values per record",
                                    (long long)c, RECORD_MAX_VALUES);
                d->values_left -= (size_t)c * (is_map ? 2 : 1);
                for (int64_t k = 0; k < c; k++) {
                    size_t n;
                    if (is_map && take_bytes(d, "map key", &x, &n)) return -1;
                    if (o->at & BRANCH_SCALAR) {
                        const uint8_t *q = d->p;
                        if (scalar_skip(d, &q, d->end, o->at & ~BRANCH_SCALAR)) return -1;
                        d->p = q;
                    } else if (o->at & BRANCH_OPT) {
                        const pm_avro_schema *bs;
                        if (take_branch(d, s->items, &b, &bs)) return -1;
                        if ((uint32_t)b == (o->at >> 8 & 0xff)) {
                            const uint8_t *q = d->p;
                            if (scalar_skip(d, &q, d->end, o->at & 0xff)) return -1;
                            d->p = q;
                        }
                    } else if (prog_run(d, g, o->at, depth)) {
                        return -1;
                    }
                }
            }
            p = d->p;
            break;
        }
        case OP_VALUE:
            d->p = p;
            if (skip_value(d, o->s, depth + o->depth)) return -1;
            p = d->p;
            break;
        default:
            d->p = p;
            return DEC_FAIL(d, "bad skip program");
        }
    }
}

static uint64_t skip_mask(const dec *d, const pm_avro_schema *rec, const skip_runs **runs) {
    for (int k = 0; k < d->n_skip; k++)
        if (d->skip[k].record == rec) {
            *runs = d->runs ? &d->runs[k] : NULL;
            return d->skip[k].fields;
        }
    return 0;
}

/* Array or map blocks. */
static int decode_blocks(dec *d, const pm_avro_schema *s, pm_avro_value *v, int depth) {
    const int is_map = s->type == PM_AVRO_MAP;
    pm_avro_value *items = NULL, *keys = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        int64_t c = 0;
        if (take_block(d, s, &c)) return -1;
        if (c == 0) break;
        size_t need = n + (size_t)c;
        if (need > cap) {
            size_t nc = cap * 2 > need ? cap * 2 : need;
            if (nc > n + d->values_left) nc = need;
            pm_avro_value *ni = alloc_values(d, nc);
            if (!ni) return -1;
            if (n) memcpy(ni, items, n * sizeof *ni);
            items = ni;
            if (is_map) {
                pm_avro_value *nk = alloc_values(d, nc);
                if (!nk) return -1;
                if (n) memcpy(nk, keys, n * sizeof *nk);
                keys = nk;
            }
            cap = nc;
        }
        for (size_t i = n; i < need; i++) {
            if (is_map) {
                keys[i].type = PM_AVRO_STRING;
                keys[i].branch = -1;
                keys[i].schema = NULL;
                if (take_bytes(d, "map key", &keys[i].u.bytes.ptr, &keys[i].u.bytes.len)) return -1;
            }
            if (decode(d, s->items, &items[i], depth + 1)) return -1;
        }
        n = need;
    }
    if (is_map) {
        v->u.map.keys = keys;
        v->u.map.values = items;
        v->u.map.n = n;
    } else {
        v->u.list.items = items;
        v->u.list.n = n;
    }
    return 0;
}

static int decode(dec *d, const pm_avro_schema *s, pm_avro_value *v, int depth) {
    const uint8_t *p = NULL;
    v->branch = -1;
    for (;;) {
        v->type = s->type;
        v->schema = s;
        switch (s->type) {
        case PM_AVRO_NULL:
            return 0;
        case PM_AVRO_BOOLEAN:
            return take_boolean(d, &v->u.boolean);
        case PM_AVRO_INT:
            return read_int(d, &v->u.i);
        case PM_AVRO_LONG:
            return read_long(d, &v->u.l);
        case PM_AVRO_FLOAT: {
            if (take_raw(d, 4, "float", &p)) return -1;
            uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            memcpy(&v->u.f, &u, 4);
            return 0;
        }
        case PM_AVRO_DOUBLE: {
            if (take_raw(d, 8, "double", &p)) return -1;
            uint64_t u = 0;
            for (int i = 7; i >= 0; i--) u = u << 8 | p[i];
            memcpy(&v->u.d, &u, 8);
            return 0;
        }
        case PM_AVRO_BYTES:
        case PM_AVRO_STRING:
            return take_bytes(d, s->type == PM_AVRO_STRING ? "string" : "bytes", &v->u.bytes.ptr, &v->u.bytes.len);
        case PM_AVRO_FIXED:
            v->u.bytes.len = s->fixed_size;
            return take_raw(d, s->fixed_size, "fixed", &v->u.bytes.ptr);
        case PM_AVRO_ENUM:
            return take_enum(d, s, &v->u.i);
        case PM_AVRO_RECORD: {
            if (depth > DECODE_MAX_DEPTH) return DEC_FAIL(d, "values nested deeper than %d", DECODE_MAX_DEPTH);
            size_t n = s->n_fields;
            pm_avro_value *items = NULL;
            if (n && !(items = alloc_values(d, n))) return -1;
            v->u.list.items = items;
            v->u.list.n = n;
            const skip_runs *runs = NULL;
            uint64_t mask = d->n_skip ? skip_mask(d, s, &runs) : 0;
            if (depth + 1 + SKIP_INLINE_DEPTH + 1 >= DECODE_MAX_DEPTH) runs = NULL;   /* skip_value's depth checks */
            for (size_t i = 0; i < n; i++) {
                if (i < 64 && (mask >> i & 1)) {
                    size_t len = runs && runs->start[i] ? runs->len[i] : 1;
                    for (size_t k = i; k < i + len; k++) {
                        items[k].type = PM_AVRO_NULL;
                        items[k].branch = PM_AVRO_SKIPPED;
                        items[k].schema = s->fields[k].type;
                    }
                    if (len > 1 ? prog_run(d, d->prog, runs->start[i], depth + 1)
                                : skip_value(d, s->fields[i].type, depth + 1))
                        return -1;
                    i += len - 1;
                } else if (decode(d, s->fields[i].type, &items[i], depth + 1)) {
                    return -1;
                }
            }
            return 0;
        }
        case PM_AVRO_ARRAY:
        case PM_AVRO_MAP:
            if (depth > DECODE_MAX_DEPTH) return DEC_FAIL(d, "values nested deeper than %d", DECODE_MAX_DEPTH);
            return decode_blocks(d, s, v, depth);
        case PM_AVRO_UNION:
            if (take_branch(d, s, &v->branch, &s)) return -1;
            continue;   /* decode the branch into the same value */
        default:
            return DEC_FAIL(d, "unknown schema type %d", (int)s->type);
        }
    }
}

/* ---- decode programs ----------------------------------------------------------- */

/* decode() dispatches on the schema, recurses and allocates once per record
 * and collection: most of the time a manifest read took above zstd. A
 * reader compiles its top record once (with its skip programs, so a small
 * file keeps decode()) into flat ops, one per value or run of skipped
 * fields: the records in fixed places (not in a union or collection, not
 * nested past SKIP_INLINE_DEPTH) share one allocation per record read (the
 * budget is still taken record by record where decode() takes it), the
 * projection is resolved once, and longs, ints, strings, bytes, unions of
 * null and one of those or a collection, and collections of those are
 * decoded in place. Anything else goes to decode(). Every value gets
 * decode()'s checks in decode()'s order: the fast paths take only varints
 * and lengths that are whole and within the data, anything else goes
 * through the same helpers, which word the messages. */
#define DEC_PROG_MAX_FRAME (4 * SKIP_PROG_MAX_OPS)   /* values allocated per record read */

enum { DOP_END, DOP_NULL, DOP_LONG, DOP_INT, DOP_STRING, DOP_BYTES, DOP_RECORD, DOP_COLL, DOP_OPT, DOP_SKIP,
       DOP_VALUE };

/* How a collection's items are decoded: a scalar op, OPT (a union of null,
 * branch nb, and scalar op `scalar`) or VALUE (decode()). */
typedef struct dec_item { uint8_t op, nb, scalar; } dec_item;

typedef struct dec_op {
    uint8_t op;
    uint8_t x;                 /* OPT: the op of the branch that is not null (a scalar op or COLL) */
    uint8_t nb;                /* OPT: that branch */
    dec_item item;             /* COLL, OPT of a COLL: its items */
    uint16_t depth;            /* decode()'s depth of the value */
    uint32_t slot;             /* the value, in the record's frame */
    uint32_t n;                /* RECORD: fields; SKIP, LONG..BYTES: fields skipped or decoded */
    uint32_t at;               /* RECORD: its first field's slot; SKIP: skip program sequence (0: skip_value) */
    uint32_t field;            /* SKIP, LONG..BYTES: the first field of the run */
    const pm_avro_schema *s;   /* the value's schema (SKIP, LONG..BYTES: the record) */
} dec_op;

struct dec_prog {
    dec_op *ops;               /* the top record's fields, then END */
    size_t n, cap;
    uint32_t frame;            /* values allocated per record: the top record's fields first */
    int nomem;                 /* out of memory or too big: not compiled */
};

static dec_op *dprog_emit(dec_prog *g, uint8_t op, uint32_t slot, const pm_avro_schema *s, int depth) {
    if (g->nomem) return NULL;
    if (g->n >= SKIP_PROG_MAX_OPS) { g->nomem = 1; return NULL; }
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 64;
        dec_op *no = realloc(g->ops, nc * sizeof *no);
        if (!no) { g->nomem = 1; return NULL; }
        g->ops = no;
        g->cap = nc;
    }
    dec_op *o = &g->ops[g->n++];
    memset(o, 0, sizeof *o);
    o->op = op;
    o->slot = slot;
    o->s = s;
    o->depth = (uint16_t)depth;
    return o;
}

static uint8_t dec_scalar_op(const pm_avro_schema *s) {
    switch (s->type) {
    case PM_AVRO_LONG: return DOP_LONG;
    case PM_AVRO_INT: return DOP_INT;
    case PM_AVRO_STRING: return DOP_STRING;
    case PM_AVRO_BYTES: return DOP_BYTES;
    default: return 0;
    }
}

static dec_item dec_item_of(const pm_avro_schema *s) {
    dec_item it = {DOP_VALUE, 0, 0};
    uint8_t so = dec_scalar_op(s);
    int nb = nullable_branch(s);
    if (so) it.op = so;
    else if (nb >= 0 && (so = dec_scalar_op(s->branches[nb]))) it = (dec_item){DOP_OPT, (uint8_t)nb, so};
    return it;
}

static void dprog_value(dec_prog *g, const pm_avro_reader *r, const pm_avro_schema *s, uint32_t slot, int depth);

/* The fields of record rec at depth `depth`, in slots first.., as decode()
 * walks them (skip_mask and the runs of skipped fields resolved here). */
static void dprog_fields(dec_prog *g, const pm_avro_reader *r, const pm_avro_schema *rec, uint32_t first, int depth) {
    const skip_runs *runs = NULL;
    uint64_t mask = 0;
    for (int k = 0; k < r->n_skip; k++)
        if (r->skip[k].record == rec) {
            mask = r->skip[k].fields;
            runs = r->runs ? &r->runs[k] : NULL;
            break;
        }
    if (depth + 1 + SKIP_INLINE_DEPTH + 1 >= DECODE_MAX_DEPTH) runs = NULL;   /* as decode() */
    for (size_t i = 0; i < rec->n_fields && !g->nomem; i++) {
        if (i < 64 && (mask >> i & 1)) {
            size_t len = runs && runs->start[i] ? runs->len[i] : 1;
            dec_op *o = dprog_emit(g, DOP_SKIP, first + (uint32_t)i, rec, depth + 1);
            if (!o) return;
            o->n = (uint32_t)len;
            o->at = len > 1 ? runs->start[i] : 0;
            o->field = (uint32_t)i;
            i += len - 1;
        } else {
            const pm_avro_schema *s = rec->fields[i].type;
            uint8_t so = dec_scalar_op(s);
            dec_op *last = g->n ? &g->ops[g->n - 1] : NULL;
            if (so && last && last->op == so && last->s == rec && last->field + last->n == i) {
                last->n++;   /* joins the run of the fields before */
                continue;
            }
            if (so) {
                dec_op *o = dprog_emit(g, so, first + (uint32_t)i, rec, depth + 1);
                if (!o) return;
                o->n = 1;
                o->field = (uint32_t)i;
                continue;
            }
            dprog_value(g, r, s, first + (uint32_t)i, depth + 1);
        }
    }
}

static void dprog_value(dec_prog *g, const pm_avro_reader *r, const pm_avro_schema *s, uint32_t slot, int depth) {
    if (g->nomem) return;
    dec_op *o;
    if (s->type == PM_AVRO_NULL) { dprog_emit(g, DOP_NULL, slot, s, depth); return; }
    switch (s->type) {
    case PM_AVRO_RECORD: {
        if (depth >= SKIP_INLINE_DEPTH) break;
        if (s->n_fields > DEC_PROG_MAX_FRAME - g->frame) { g->nomem = 1; return; }
        uint32_t first = g->frame;
        g->frame += (uint32_t)s->n_fields;
        if (!(o = dprog_emit(g, DOP_RECORD, slot, s, depth))) return;
        o->n = (uint32_t)s->n_fields;
        o->at = first;
        dprog_fields(g, r, s, first, depth);
        return;
    }
    case PM_AVRO_ARRAY:
    case PM_AVRO_MAP:
        if (!(o = dprog_emit(g, DOP_COLL, slot, s, depth))) return;
        o->item = dec_item_of(s->items);
        return;
    case PM_AVRO_UNION: {
        int nb = nullable_branch(s);
        if (nb < 0) break;
        const pm_avro_schema *x = s->branches[nb];
        uint8_t xo = dec_scalar_op(x);
        if (!xo && (x->type == PM_AVRO_ARRAY || x->type == PM_AVRO_MAP)) xo = DOP_COLL;
        if (!xo) break;
        if (!(o = dprog_emit(g, DOP_OPT, slot, s, depth))) return;
        o->x = xo;
        o->nb = (uint8_t)nb;
        if (xo == DOP_COLL) o->item = dec_item_of(x->items);
        return;
    }
    default:
        break;
    }
    dprog_emit(g, DOP_VALUE, slot, s, depth);
}

static void dprog_free(dec_prog *g) {
    if (!g) return;
    free(g->ops);
    free(g);
}

/* The program of the reader's top record (NULL: not a record, or out of
 * memory; decode() then). After the skip programs: it uses their runs. */
static dec_prog *dprog_compile(const pm_avro_reader *r) {
    const pm_avro_schema *top = r->schema;
    if (top->type != PM_AVRO_RECORD || top->n_fields > DEC_PROG_MAX_FRAME) return NULL;
    dec_prog *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->frame = (uint32_t)top->n_fields;
    dprog_fields(g, r, top, 0, 0);
    dprog_emit(g, DOP_END, 0, NULL, 0);
    if (g->nomem) { dprog_free(g); return NULL; }
    return g;
}

/* A long at *pp: up to ten bytes here when ten are left, else
 * read_long_slow (which also words the failures). */
static SKIP_INLINE int fast_long(dec *d, const uint8_t **pp, int64_t *out) {
    const uint8_t *p = *pp;
    uint64_t u;
    if (p < d->end && *p < 0x80) {
        u = *p;
        *pp = p + 1;
        *out = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
        return 0;
    }
    if (d->end - p >= 10) {
        u = 0;
        for (int k = 0; k < 10; k++) {
            u |= (uint64_t)(p[k] & 0x7f) << (7 * k);
            if (p[k] < 0x80) {
                *pp = p + k + 1;
                *out = (int64_t)((u >> 1) ^ (~(u & 1) + 1));
                return 0;
            }
        }
    }
    d->p = p;
    int rc = read_long_slow(d, out);
    *pp = d->p;
    return rc;
}

/* The payload of scalar op `op` at *pp into v (type and schema set by the caller). */
static SKIP_INLINE int dec_scalar(dec *d, const uint8_t **pp, uint8_t op, pm_avro_value *v) {
    if (op == DOP_LONG) return fast_long(d, pp, &v->u.l);
    const uint8_t *p = *pp;
    int64_t x;
    if (op == DOP_INT) {
        if (fast_long(d, pp, &x)) return -1;
        if (x < INT32_MIN || x > INT32_MAX) return DEC_FAIL(d, "int value %lld out of range", (long long)x);
        v->u.i = (int32_t)x;
        return 0;
    }
    const uint8_t *q = p;   /* string, bytes: a length within the data here, else take_bytes */
    if (p < d->end && !fast_long(d, &q, &x) && x >= 0 && (uint64_t)x <= (size_t)(d->end - q)) {
        v->u.bytes.ptr = q;
        v->u.bytes.len = (size_t)x;
        *pp = q + x;
        return 0;
    }
    d->p = p;
    int rc = take_bytes(d, op == DOP_STRING ? "string" : "bytes", &v->u.bytes.ptr, &v->u.bytes.len);
    *pp = d->p;
    return rc;
}

/* A union value: its branch at *pp (the common one-byte ones here). */
static SKIP_INLINE int dec_branch(dec *d, const uint8_t **pp, const pm_avro_schema *s, uint32_t *br) {
    const uint8_t *p = *pp;
    if (p < d->end && *p < 0x80 && !(*p & 1) && (*br = *p >> 1) < s->n_branches &&
        s->branches[*br]->type != PM_AVRO_UNION) {
        *pp = p + 1;
        return 0;
    }
    int b = 0;
    const pm_avro_schema *bs;
    d->p = p;
    if (take_branch(d, s, &b, &bs)) return -1;
    *pp = d->p;
    *br = (uint32_t)b;
    return 0;
}

/* An item of a collection decoded the way `it` says; as decode(d, s, v, depth). */
static SKIP_INLINE int dec_item_value(dec *d, const dec_item *it, const pm_avro_schema *s, pm_avro_value *v, int depth) {
    const uint8_t *p = d->p;
    int rc;
    if (it->op == DOP_VALUE) return decode(d, s, v, depth);
    v->branch = -1;
    if (it->op == DOP_OPT) {
        uint32_t b;
        if (p < d->end && (*p == 0 || *p == 2)) b = *p++ >> 1;   /* null and a scalar: neither a union */
        else if (dec_branch(d, &p, s, &b)) return -1;
        v->branch = (int)b;
        s = s->branches[b];
        v->type = s->type;
        v->schema = s;
        if (b != it->nb) { d->p = p; return 0; }
        rc = dec_scalar(d, &p, it->scalar, v);
    } else {
        v->type = s->type;
        v->schema = s;
        rc = dec_scalar(d, &p, it->op, v);
    }
    d->p = p;
    return rc;
}

/* decode_blocks with the items decoded the way `it` says. */
static int dec_coll(dec *d, const pm_avro_schema *s, pm_avro_value *v, int depth, const dec_item *it) {
    if (depth > DECODE_MAX_DEPTH) return DEC_FAIL(d, "values nested deeper than %d", DECODE_MAX_DEPTH);
    const int is_map = s->type == PM_AVRO_MAP;
    pm_avro_value *items = NULL, *keys = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        int64_t c = 0;
        const uint8_t *p = d->p;
        size_t m = s->items_min;
        if (p < d->end && *p == 0) {   /* the end: take_block would only read it */
            d->p++;
            break;
        }
        if (p < d->end && *p < 0x80 && !(*p & 1) && m <= SIZE_MAX / 64 &&
            (size_t)(*p >> 1) * m <= (size_t)(d->end - p - 1) && (size_t)(*p >> 1) <= d->values_left) {
            c = *p >> 1;   /* a one-byte count that passes take_block's checks (c * m <= left: c <= left / m) */
            d->p++;
        } else if (take_block(d, s, &c)) {
            return -1;
        }
        if (c == 0) break;
        size_t need = n + (size_t)c;
        if (need > cap) {
            size_t nc = cap * 2 > need ? cap * 2 : need;
            if (nc > n + d->values_left) nc = need;
            pm_avro_value *ni = alloc_values(d, nc);
            if (!ni) return -1;
            if (n) memcpy(ni, items, n * sizeof *ni);
            items = ni;
            if (is_map) {
                pm_avro_value *nk = alloc_values(d, nc);
                if (!nk) return -1;
                if (n) memcpy(nk, keys, n * sizeof *nk);
                keys = nk;
            }
            cap = nc;
        }
        for (size_t i = n; i < need; i++) {
            if (is_map) {
                keys[i].type = PM_AVRO_STRING;
                keys[i].branch = -1;
                keys[i].schema = NULL;
                if (take_bytes(d, "map key", &keys[i].u.bytes.ptr, &keys[i].u.bytes.len)) return -1;
            }
            if (dec_item_value(d, it, s->items, &items[i], depth + 1)) return -1;
        }
        n = need;
    }
    if (is_map) {
        v->u.map.keys = keys;
        v->u.map.values = items;
        v->u.map.n = n;
    } else {
        v->u.list.items = items;
        v->u.list.n = n;
    }
    return 0;
}

/* decode(d, top, root, 0) by program g. */
static int dprog_run(dec *d, const dec_prog *g, const pm_avro_schema *top, pm_avro_value *root) {
    root->type = PM_AVRO_RECORD;
    root->branch = -1;
    root->schema = top;
    pm_avro_value *f = NULL;
    if (top->n_fields) {
        if (top->n_fields > d->values_left)
            return DEC_FAIL(d, "record expands to more than %zu values", RECORD_MAX_VALUES);
        d->values_left -= top->n_fields;
        if (!(f = pm_arena_alloc(d->arena, g->frame * sizeof *f))) { d->nomem = 1; return DEC_FAIL(d, "out of memory"); }
    }
    root->u.list.items = f;
    root->u.list.n = top->n_fields;
    const uint8_t *p = d->p, *end = d->end;
    for (const dec_op *o = g->ops;; o++) {
        pm_avro_value *v = f + o->slot;
        switch (o->op) {
        case DOP_END:
            d->p = p;
            return 0;
        case DOP_NULL:
            v->type = PM_AVRO_NULL;
            v->branch = -1;
            v->schema = o->s;
            break;
        /* one case per op, so that dec_scalar is inlined with its op fixed */
        case DOP_LONG:
            for (uint32_t k = 0; k < o->n; k++) {
                v[k].type = PM_AVRO_LONG;
                v[k].branch = -1;
                v[k].schema = o->s->fields[o->field + k].type;
                if (dec_scalar(d, &p, DOP_LONG, &v[k])) return -1;
            }
            break;
        case DOP_INT:
            for (uint32_t k = 0; k < o->n; k++) {
                v[k].type = PM_AVRO_INT;
                v[k].branch = -1;
                v[k].schema = o->s->fields[o->field + k].type;
                if (dec_scalar(d, &p, DOP_INT, &v[k])) return -1;
            }
            break;
        case DOP_STRING:
            for (uint32_t k = 0; k < o->n; k++) {
                v[k].type = PM_AVRO_STRING;
                v[k].branch = -1;
                v[k].schema = o->s->fields[o->field + k].type;
                if (dec_scalar(d, &p, DOP_STRING, &v[k])) return -1;
            }
            break;
        case DOP_BYTES:
            for (uint32_t k = 0; k < o->n; k++) {
                v[k].type = PM_AVRO_BYTES;
                v[k].branch = -1;
                v[k].schema = o->s->fields[o->field + k].type;
                if (dec_scalar(d, &p, DOP_BYTES, &v[k])) return -1;
            }
            break;
        case DOP_RECORD:
            v->type = PM_AVRO_RECORD;
            v->branch = -1;
            v->schema = o->s;
            if (o->n > d->values_left) return DEC_FAIL(d, "record expands to more than %zu values", RECORD_MAX_VALUES);
            d->values_left -= o->n;
            v->u.list.items = o->n ? f + o->at : NULL;
            v->u.list.n = o->n;
            break;
        case DOP_COLL:
            v->type = o->s->type;
            v->branch = -1;
            v->schema = o->s;
            d->p = p;
            if (dec_coll(d, o->s, v, o->depth, &o->item)) return -1;
            p = d->p;
            break;
        case DOP_OPT: {
            uint32_t b;
            if (p < end && (*p == 0 || *p == 2)) b = *p++ >> 1;   /* null and X: neither a union */
            else if (dec_branch(d, &p, o->s, &b)) return -1;
            const pm_avro_schema *bs = o->s->branches[b];
            v->type = bs->type;
            v->branch = (int)b;
            v->schema = bs;
            if (b != o->nb) break;   /* null */
            switch (o->x) {
            case DOP_LONG: if (dec_scalar(d, &p, DOP_LONG, v)) return -1; break;
            case DOP_INT: if (dec_scalar(d, &p, DOP_INT, v)) return -1; break;
            case DOP_STRING: if (dec_scalar(d, &p, DOP_STRING, v)) return -1; break;
            case DOP_BYTES: if (dec_scalar(d, &p, DOP_BYTES, v)) return -1; break;
            default:
                d->p = p;
                if (dec_coll(d, bs, v, o->depth, &o->item)) return -1;
                p = d->p;
                break;
            }
            break;
        }
        case DOP_SKIP:
            for (uint32_t k = 0; k < o->n; k++) {
                v[k].type = PM_AVRO_NULL;
                v[k].branch = PM_AVRO_SKIPPED;
                v[k].schema = o->s->fields[o->field + k].type;
            }
            d->p = p;
            if (o->at ? prog_run(d, d->prog, o->at, o->depth) : skip_value(d, o->s->fields[o->field].type, o->depth))
                return -1;
            p = d->p;
            break;
        case DOP_VALUE:
            d->p = p;
            if (decode(d, o->s, v, o->depth)) return -1;
            p = d->p;
            break;
        default:
            d->p = p;
            return DEC_FAIL(d, "bad decode program");
        }
    }
}

/* ---- container ------------------------------------------------------------ */

static int rfail(pm_avro_reader *r, pm_err *e, int code, const char *fmt, ...) PM_PRINTF(4, 5);

static int rfail(pm_avro_reader *r, pm_err *e, int code, const char *fmt, ...) {
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->failed = 1;
    return pm_fail(e, code, "%s: %s", r->file_name, msg);
}

/* Printable, truncated copy of untrusted bytes for messages. */
static void printable(char *dst, size_t cap, const uint8_t *p, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < cap; i++)
        dst[o++] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
    if (o + 4 >= cap && n > o) { dst[o++] = '.'; dst[o++] = '.'; dst[o++] = '.'; }
    dst[o] = '\0';
}

/* ---- schema cache ----------------------------------------------------------- */

#define SCHEMA_CACHE_MAX 64

typedef struct schema_entry {
    uint8_t *json;
    size_t len;
    pm_avro_schema *schema;
    size_t min_record_size;
} schema_entry;

struct pm_avro_schema_cache {
    pthread_mutex_t mu;
    schema_entry e[SCHEMA_CACHE_MAX];
    size_t n;
};

static pthread_once_t bind_once = PTHREAD_ONCE_INIT;
static pthread_key_t bind_key;
static int bind_ok;

static void bind_init(void) { bind_ok = pthread_key_create(&bind_key, NULL) == 0; }

pm_avro_schema_cache *pm_avro_schema_cache_new(void) {
    pm_avro_schema_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (pthread_mutex_init(&c->mu, NULL)) { free(c); return NULL; }
    return c;
}

void pm_avro_schema_cache_free(pm_avro_schema_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->e[i].json);
        pm_avro_schema_free(c->e[i].schema);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

int pm_avro_schema_cache_bind(pm_avro_schema_cache *c) {
    pthread_once(&bind_once, bind_init);
    if (!bind_ok) return -1;
    return pthread_setspecific(bind_key, c) ? -1 : 0;
}

pm_avro_schema_cache *pm_avro_schema_cache_bound(void) {
    pthread_once(&bind_once, bind_init);
    return bind_ok ? pthread_getspecific(bind_key) : NULL;
}

/* Borrow the cached schema parsed from exactly these bytes, if any. */
static int schema_cache_find(pm_avro_schema_cache *c, const uint8_t *json, size_t len, pm_avro_reader *r) {
    int found = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) {
        schema_entry *x = &c->e[i];
        if (x->len == len && !memcmp(x->json, json, len)) {
            r->schema = x->schema;
            r->min_record_size = x->min_record_size;
            r->schema_borrowed = 1;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return found;
}

/* Hand the reader's freshly parsed schema to the cache (when there is room
 * and no other thread added the same one meanwhile); the reader borrows it
 * from then on. On any failure the reader keeps its own copy. */
static void schema_cache_add(pm_avro_schema_cache *c, const uint8_t *json, size_t len, pm_avro_reader *r) {
    pthread_mutex_lock(&c->mu);
    int dup = 0;
    for (size_t i = 0; i < c->n && !dup; i++)
        dup = c->e[i].len == len && !memcmp(c->e[i].json, json, len);
    if (!dup && c->n < SCHEMA_CACHE_MAX) {
        uint8_t *copy = malloc(len ? len : 1);
        if (copy) {
            memcpy(copy, json, len);
            schema_entry *x = &c->e[c->n++];
            x->json = copy;
            x->len = len;
            x->schema = r->schema;
            x->min_record_size = r->min_record_size;
            r->schema_borrowed = 1;
        }
    }
    pthread_mutex_unlock(&c->mu);
}

static int parse_header(pm_avro_reader *r, pm_err *e) {
    if (r->len < 4 || memcmp(r->data, "Obj\x01", 4))
        return rfail(r, e, PAIMON_CORRUPT, "not an Avro object container file (bad magic)");
    dec d;
    d.p = r->data + 4;
    d.end = r->data + r->len;
    d.msg[0] = '\0';
    size_t cap = 0;
    for (;;) {
        int64_t c;
        if (read_long(&d, &c)) return rfail(r, e, PAIMON_CORRUPT, "truncated header: metadata: %s", d.msg);
        if (c == 0) break;
        if (c < 0) {
            int64_t bytes;
            if (c == INT64_MIN) return rfail(r, e, PAIMON_CORRUPT, "truncated header: bad metadata block count");
            c = -c;
            if (read_long(&d, &bytes) || bytes < 0)
                return rfail(r, e, PAIMON_CORRUPT, "truncated header: bad metadata block size");
        }
        if ((uint64_t)c > (size_t)(d.end - d.p) / 2)
            return rfail(r, e, PAIMON_CORRUPT, "truncated header: metadata count %lld exceeds file size",
                         (long long)c);
        for (int64_t i = 0; i < c; i++) {
            int64_t kl, vl;
            if (read_long(&d, &kl) || kl < 0 || (uint64_t)kl > (size_t)(d.end - d.p))
                return rfail(r, e, PAIMON_CORRUPT, "truncated header: bad metadata key length");
            const uint8_t *k = d.p;
            d.p += kl;
            if (read_long(&d, &vl) || vl < 0 || (uint64_t)vl > (size_t)(d.end - d.p))
                return rfail(r, e, PAIMON_CORRUPT, "truncated header: bad metadata value length");
            if (r->n_meta == cap) {
                size_t nc = cap ? cap * 2 : 4;
                meta_entry *m = realloc(r->meta, nc * sizeof *m);
                if (!m) return rfail(r, e, PAIMON_NOMEM, "out of memory");
                r->meta = m;
                cap = nc;
            }
            r->meta[r->n_meta].key = k;
            r->meta[r->n_meta].key_len = (size_t)kl;
            r->meta[r->n_meta].val = d.p;
            r->meta[r->n_meta].val_len = (size_t)vl;
            r->n_meta++;
            d.p += vl;
        }
    }
    if (d.end - d.p < 16) return rfail(r, e, PAIMON_CORRUPT, "truncated header: missing sync marker");
    memcpy(r->sync, d.p, 16);
    d.p += 16;
    r->pos = (size_t)(d.p - r->data);

    size_t sl, cl;
    const uint8_t *sj = pm_avro_reader_meta(r, "avro.schema", &sl);
    if (!sj) return rfail(r, e, PAIMON_CORRUPT, "metadata has no avro.schema");
    const uint8_t *cn = pm_avro_reader_meta(r, "avro.codec", &cl);
    if (!cn) r->codec = PM_AVRO_CODEC_NULL;
    else if ((r->codec = pm_avro_codec_lookup((const char *)cn, cl)) < 0) {
        char buf[64];
        printable(buf, sizeof buf, cn, cl);
        return rfail(r, e, PAIMON_UNSUPPORTED, "unsupported Avro codec '%s'", buf);
    }
    pm_avro_schema_cache *cache = pm_avro_schema_cache_bound();
    if (cache && schema_cache_find(cache, sj, sl, r)) return PAIMON_OK;
    int rc = pm_avro_schema_parse((const char *)sj, sl, &r->schema, e);
    if (rc) {
        pm_err_prefix(e, "%s: invalid avro.schema", r->file_name);
        r->failed = 1;
        return rc;
    }
    r->min_record_size = pm_avro_min_size(r->schema);
    if (cache) schema_cache_add(cache, sj, sl, r);
    return PAIMON_OK;
}

int pm_avro_reader_open(const uint8_t *data, size_t len, const char *file_name,
                        pm_avro_reader **out, pm_err *e) {
    *out = NULL;
    pm_avro_reader *r = calloc(1, sizeof *r);
    if (!r) return pm_fail(e, PAIMON_NOMEM, "%s: out of memory", file_name ? file_name : "?");
    r->data = data;
    r->len = data ? len : 0;
    r->file_name = pm_strdup(file_name ? file_name : "<avro>");
    r->arena = pm_arena_new(65536);
    r->compile_after = SKIP_PROG_MIN_RECORDS;
    if (!r->file_name || !r->arena) {
        pm_avro_reader_close(r);
        return pm_fail(e, PAIMON_NOMEM, "%s: out of memory", file_name ? file_name : "?");
    }
    int rc = parse_header(r, e);
    if (rc) {
        pm_avro_reader_close(r);
        return rc;
    }
    *out = r;
    return PAIMON_OK;
}

const pm_avro_schema *pm_avro_reader_schema(const pm_avro_reader *r) { return r->schema; }
const char *pm_avro_reader_codec(const pm_avro_reader *r) { return pm_avro_codec_name(r->codec); }

const uint8_t *pm_avro_reader_meta(const pm_avro_reader *r, const char *key, size_t *len) {
    size_t kl = strlen(key);
    for (size_t i = r->n_meta; i-- > 0;)   /* last one wins, like Java's map */
        if (r->meta[i].key_len == kl && !memcmp(r->meta[i].key, key, kl)) {
            if (len) *len = r->meta[i].val_len;
            return r->meta[i].val;
        }
    return NULL;
}

/* The framing of the block at r->pos (header, byte size within the file,
 * the sync marker after it), nothing consumed; PAIMON_DONE at the end. */
static int frame_block(pm_avro_reader *r, uint64_t no, int64_t *count_out, const uint8_t **blk_out, int64_t *size_out,
                       pm_err *e) {
    if (r->pos == r->len) return PAIMON_DONE;
    dec d;
    d.p = r->data + r->pos;
    d.end = r->data + r->len;
    int64_t count, size;
    if (read_long(&d, &count) || read_long(&d, &size))
        return rfail(r, e, PAIMON_CORRUPT, "block %llu: truncated block header", (unsigned long long)no);
    if (count < 0)
        return rfail(r, e, PAIMON_CORRUPT, "block %llu: negative object count %lld", (unsigned long long)no, (long long)count);
    if (size < 0)
        return rfail(r, e, PAIMON_CORRUPT, "block %llu: negative byte size %lld", (unsigned long long)no, (long long)size);
    size_t at = (size_t)(d.p - r->data);
    if ((uint64_t)size > r->len - at)
        return rfail(r, e, PAIMON_CORRUPT, "block %llu: byte size %lld past end of file (size %zu)",
                     (unsigned long long)no, (long long)size, r->len);
    if (r->len - at - (size_t)size < 16)
        return rfail(r, e, PAIMON_CORRUPT, "block %llu: truncated sync marker", (unsigned long long)no);
    if (memcmp(d.p + size, r->sync, 16))
        return rfail(r, e, PAIMON_CORRUPT, "sync marker mismatch after block %llu", (unsigned long long)no);
    *count_out = count;
    *blk_out = d.p;
    *size_out = size;
    return PAIMON_OK;
}

/* Load the next block; returns PAIMON_OK, PAIMON_DONE or an error. */
static int next_block(pm_avro_reader *r, pm_err *e) {
    uint64_t no = r->block_no + 1;
    int64_t count, size;
    const uint8_t *blk;
    int rc = frame_block(r, no, &count, &blk, &size, e);
    if (rc) return rc;
    const uint8_t *sync = blk + size;
    if (r->parts > 1 && (no - 1) % r->parts != r->part) {   /* another reader's block */
        r->pos = (size_t)(sync + 16 - r->data);
        r->block_no = no;
        r->block_left = r->block_count = 0;
        r->in_block = 0;
        return PAIMON_OK;
    }
    if (r->codec == PM_AVRO_CODEC_NULL) {
        r->cur = blk;
        r->end = blk + size;
    } else {
        rc = pm_avro_decompress(&r->cctx, r->codec, blk, (size_t)size, PM_AVRO_MAX_BLOCK, &r->block_buf, e);
        if (rc) {
            pm_err_prefix(e, "%s: block %llu (%s)", r->file_name, (unsigned long long)no, pm_avro_codec_name(r->codec));
            r->failed = 1;
            return rc;
        }
        r->cur = r->block_buf.data;
        r->end = r->block_buf.data + r->block_buf.len;
    }
    size_t ulen = (size_t)(r->end - r->cur);
    if (r->min_record_size ? (uint64_t)count > ulen / r->min_record_size : 0)
        return rfail(r, e, PAIMON_CORRUPT, "block %llu: object count %lld exceeds block size %zu",
                     (unsigned long long)no, (long long)count, ulen);
    if (!r->min_record_size) {
        if ((uint64_t)count > EMPTY_RECORDS_MAX - r->empty_records)
            return rfail(r, e, PAIMON_CORRUPT, "block %llu: too many empty records", (unsigned long long)no);
        r->empty_records += (uint64_t)count;
    }
    r->pos = (size_t)(sync + 16 - r->data);
    r->block_no = no;
    r->block_left = r->block_count = count;
    r->in_block = 1;
    r->raw = blk;
    r->raw_len = (size_t)size;
    r->raw_no = no;
    r->raw_count = count;
    return PAIMON_OK;
}

/* The skip programs of the reader's walks (the runs of skipped fields of
 * its projection; whole records when a block filter is set). Out of
 * memory: it keeps skip_value. */
static void compile_skips(pm_avro_reader *r) {
    pm_skip_prog *g = prog_new();
    skip_runs *runs = r->n_skip ? calloc((size_t)r->n_skip, sizeof *runs) : NULL;
    if (!g || (r->n_skip && !runs)) { prog_free(g); free(runs); return; }
    for (int k = 0; k < r->n_skip; k++) {
        const pm_avro_schema *rec = r->skip[k].record;
        uint64_t m = r->skip[k].fields;
        size_t nf = rec->n_fields < 64 ? rec->n_fields : 64;
        for (size_t i = 0; i < nf;) {
            if (!(m >> i & 1)) { i++; continue; }
            size_t j = i;
            while (j < nf && (m >> j & 1) && j - i < 255) j++;
            if (j - i > 1) {   /* a lone field costs skip_value less than a sequence */
                runs[k].start[i] = prog_sequence(g, rec->fields + i, j - i, NULL, 0);
                runs[k].len[i] = (uint8_t)(j - i);
            }
            i = j;
        }
    }
    uint32_t whole = r->filter ? prog_sequence(g, NULL, 0, r->schema, 0) : 0;
    prog_finish(g);
    if (g->nomem) { prog_free(g); free(runs); return; }
    r->prog = g;
    r->runs = runs;
    r->prog_record = whole;
}

/* Compile the walks this reader makes and its decode once it has loaded
 * enough records to repay it. */
static void compile_walks(pm_avro_reader *r) {
    r->prog_tried = 1;
    if (r->n_skip || r->filter) compile_skips(r);
    r->dprog = dprog_compile(r);
}

/* The compiled walks follow the projection and the filter: after a change
 * they are compiled again. */
static void drop_walks(pm_avro_reader *r) {
    prog_free(r->prog);
    free(r->runs);
    dprog_free(r->dprog);
    r->prog = NULL;
    r->runs = NULL;
    r->dprog = NULL;
    r->prog_record = 0;
    r->prog_tried = 0;
    r->records_seen = 0;
}

/* A decoder for the next record of the current block. */
static void record_decoder(pm_avro_reader *r, dec *d) {
    d->p = r->cur;
    d->end = r->end;
    d->arena = r->arena;
    d->skip = r->skip;
    d->n_skip = r->n_skip;
    d->prog = r->prog;
    d->runs = r->runs;
    d->values_left = RECORD_MAX_VALUES;
    d->nomem = 0;
    d->msg[0] = '\0';
}

int pm_avro_reader_next(pm_avro_reader *r, const pm_avro_value **out, pm_err *e) {
    *out = NULL;
    if (r->failed) return pm_fail(e, PAIMON_MISUSE, "%s: reader already failed", r->file_name);
    while (r->block_left == 0) {
        if (r->in_block && r->cur != r->end) {
            return rfail(r, e, PAIMON_CORRUPT, "block %llu: %zu trailing bytes after %lld records",
                         (unsigned long long)r->block_no, (size_t)(r->end - r->cur), (long long)r->block_count);
        }
        r->in_block = 0;
        int rc = next_block(r, e);
        if (rc) return rc;
        if (!r->prog_tried && (r->records_seen += (uint64_t)r->block_left) >= r->compile_after) compile_walks(r);
        if (r->filter && r->block_left && !r->filter(r->filter_ud, r->cur, (size_t)(r->end - r->cur))) {
            /* passed over: its records are still walked with every check
             * (a garbled block must fail as it would when decoded; zstd
             * frames as Java writes them carry no checksum), nothing built */
            while (r->block_left > 0) {
                dec d;
                record_decoder(r, &d);
                if (r->prog_record ? prog_run(&d, r->prog, r->prog_record, 0) : skip_value(&d, r->schema, 0))
                    return rfail(r, e, PAIMON_CORRUPT, "block %llu: record %lld: %s", (unsigned long long)r->block_no,
                                 (long long)(r->block_count - r->block_left), d.msg);
                r->cur = d.p;
                r->block_left--;
            }
        }
    }
    pm_arena_reset(r->arena);
    dec d;
    record_decoder(r, &d);
    if (r->dprog ? dprog_run(&d, r->dprog, r->schema, &r->root) : decode(&d, r->schema, &r->root, 0))
        return rfail(r, e, d.nomem ? PAIMON_NOMEM : PAIMON_CORRUPT, "block %llu: record %lld: %s", (unsigned long long)r->block_no,
                     (long long)(r->block_count - r->block_left), d.msg);
    r->cur = d.p;
    r->block_left--;
    *out = &r->root;
    return PAIMON_OK;
}

int pm_avro_reader_next_stored(pm_avro_reader *r, int64_t *count, const uint8_t **raw, size_t *raw_len, pm_err *e) {
    *count = 0;
    *raw = NULL;
    *raw_len = 0;
    if (r->failed) return pm_fail(e, PAIMON_MISUSE, "%s: reader already failed", r->file_name);
    if (r->in_block) return pm_fail(e, PAIMON_MISUSE, "%s: records already read", r->file_name);
    uint64_t no = r->block_no + 1;
    int64_t n, size;
    const uint8_t *blk;
    int rc = frame_block(r, no, &n, &blk, &size, e);
    if (rc) return rc;
    uint64_t ulen = 0;
    int known = 0;
    if ((rc = pm_avro_check_stored(r->codec, blk, (size_t)size, PM_AVRO_MAX_BLOCK, &ulen, &known, e))) {
        pm_err_prefix(e, "%s: block %llu (%s)", r->file_name, (unsigned long long)no, pm_avro_codec_name(r->codec));
        r->failed = 1;
        return rc;
    }
    if (known && r->min_record_size && (uint64_t)n > ulen / r->min_record_size)
        return rfail(r, e, PAIMON_CORRUPT, "block %llu: object count %lld exceeds block size %llu",
                     (unsigned long long)no, (long long)n, (unsigned long long)ulen);
    r->pos = (size_t)(blk + size + 16 - r->data);
    r->block_no = no;
    r->raw = blk;
    r->raw_len = (size_t)size;
    r->raw_no = no;
    r->raw_count = n;
    *count = n;
    *raw = blk;
    *raw_len = (size_t)size;
    return PAIMON_OK;
}

void pm_avro_reader_block_share(pm_avro_reader *r, unsigned part, unsigned parts) {
    r->part = parts > 1 ? part % parts : 0;
    r->parts = parts > 1 ? parts : 0;
}

uint64_t pm_avro_reader_block(const pm_avro_reader *r, int64_t *count, const uint8_t **raw, size_t *raw_len) {
    *count = r->raw ? r->raw_count : 0;
    *raw = r->raw;
    *raw_len = r->raw ? r->raw_len : 0;
    return r->raw ? r->raw_no : 0;
}

void pm_avro_reader_compile_walks(pm_avro_reader *r, int when) {
    drop_walks(r);
    r->compile_after = when ? 0 : UINT64_MAX;
}

void pm_avro_reader_block_filter(pm_avro_reader *r, pm_avro_block_filter fn, void *ud) {
    drop_walks(r);
    r->filter = fn;
    r->filter_ud = ud;
}

int pm_avro_reader_skip_fields(pm_avro_reader *r, const pm_avro_schema *record, uint64_t fields) {
    if (!record || record->type != PM_AVRO_RECORD) return -1;
    drop_walks(r);
    for (int k = 0; k < r->n_skip; k++)
        if (r->skip[k].record == record) { r->skip[k].fields = fields; return 0; }
    if (r->n_skip == PM_AVRO_SKIP_MAX) return -1;
    r->skip[r->n_skip].record = record;
    r->skip[r->n_skip].fields = fields;
    r->n_skip++;
    return 0;
}

void pm_avro_reader_close(pm_avro_reader *r) {
    if (!r) return;
    drop_walks(r);
    if (!r->schema_borrowed) pm_avro_schema_free(r->schema);
    free(r->meta);
    free(r->file_name);
    pm_avro_codec_buf_release(&r->block_buf);
    pm_avro_codec_done(&r->cctx);
    pm_arena_free(r->arena);
    free(r);
}
