/* Error records, buffers, arenas and small utilities for the core. */
#define _GNU_SOURCE
#include "pm_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int pm_fail(pm_err *e, int code, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        e->code = code;
        e->sys_errno = 0;
    }
    return code;
}

int pm_fail_errno(pm_err *e, int code, int err, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < sizeof e->msg)
            snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %s", strerror(err));
        e->code = code;
        e->sys_errno = err;
    }
    return code;
}

/* Lock-free atomics on plain ints: safe from a signal handler and from
 * the executor's threads. */
static int interrupt_flag, interrupt_depth;

/* a no-op while nothing interruptible runs: no stale flag stops a later one */
void paimon_interrupt(void) {
    if (__atomic_load_n(&interrupt_depth, __ATOMIC_SEQ_CST) > 0) __atomic_store_n(&interrupt_flag, 1, __ATOMIC_SEQ_CST);
}
int paimon_interruptible(void) { return __atomic_load_n(&interrupt_depth, __ATOMIC_SEQ_CST) > 0; }
void pm_interrupt_enter(void) { __atomic_add_fetch(&interrupt_depth, 1, __ATOMIC_SEQ_CST); }
void pm_interrupt_leave(void) {
    if (__atomic_sub_fetch(&interrupt_depth, 1, __ATOMIC_SEQ_CST) == 0)
        __atomic_store_n(&interrupt_flag, 0, __ATOMIC_SEQ_CST);
}
int pm_interrupted(void) { return __atomic_load_n(&interrupt_flag, __ATOMIC_SEQ_CST); }

void pm_err_suffix(pm_err *e, const char *fmt, ...) {
    size_t l = strlen(e->msg);
    if (l + 1 >= sizeof e->msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg + l, sizeof e->msg - l, fmt, ap);
    va_end(ap);
}

void pm_err_prefix(pm_err *e, const char *fmt, ...) {
    if (!e) return;
    char head[512], old[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t hl = strlen(head);
    if (hl + 2 >= sizeof e->msg) hl = sizeof e->msg - 3;
    memcpy(e->msg, head, hl);
    memcpy(e->msg + hl, ": ", 2);
    size_t rest = sizeof e->msg - hl - 3;
    size_t ol = strnlen(old, rest);
    memcpy(e->msg + hl + 2, old, ol);
    e->msg[hl + 2 + ol] = '\0';
}

void pm_err_clear(pm_err *e) {
    if (!e) return;
    e->code = PAIMON_OK;
    e->sys_errno = 0;
    e->msg[0] = '\0';
}

int pm_buf_reserve(pm_buf *b, size_t extra) {
    if (b->cap - b->len >= extra) return PAIMON_OK;
    size_t need = b->len + extra;
    if (need < b->len) return PAIMON_NOMEM;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) { cap = need; break; }
        cap *= 2;
    }
    uint8_t *p = realloc(b->data, cap);
    if (!p) return PAIMON_NOMEM;
    b->data = p;
    b->cap = cap;
    return PAIMON_OK;
}

int pm_buf_append(pm_buf *b, const void *p, size_t n) {
    if (n == 0) return PAIMON_OK;
    if (pm_buf_reserve(b, n)) return PAIMON_NOMEM;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return PAIMON_OK;
}

int pm_buf_putc(pm_buf *b, uint8_t c) {
    if (pm_buf_reserve(b, 1)) return PAIMON_NOMEM;
    b->data[b->len++] = c;
    return PAIMON_OK;
}

int pm_buf_printf(pm_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return PAIMON_ERROR;
    if (pm_buf_reserve(b, (size_t)n + 1)) return PAIMON_NOMEM;
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return PAIMON_OK;
}

int pm_buf_cstr(pm_buf *b) {
    if (pm_buf_reserve(b, 1)) return PAIMON_NOMEM;
    b->data[b->len] = '\0';
    return PAIMON_OK;
}

void pm_buf_free(pm_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

typedef struct pm_chunk {
    struct pm_chunk *next;
    size_t size, used;
    /* data follows, 8-aligned */
} pm_chunk;

struct pm_arena {
    pm_chunk *head;
    size_t chunk_size;
};

#define PM_CHUNK_HDR ((sizeof(pm_chunk) + 7u) & ~(size_t)7u)

pm_arena *pm_arena_new(size_t chunk_size) {
    pm_arena *a = calloc(1, sizeof *a);
    if (a) a->chunk_size = chunk_size ? chunk_size : 16384;
    return a;
}

/* A new chunk, out of line so that the common bump below saves no
 * registers (manifest reads allocate several times per record). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void *arena_grow(pm_arena *a, size_t n) {
    size_t size = n > a->chunk_size ? n : a->chunk_size;
    pm_chunk *c = malloc(PM_CHUNK_HDR + size);
    if (!c) return NULL;
    c->size = size;
    c->used = n;
    c->next = a->head;
    a->head = c;
    return (char *)c + PM_CHUNK_HDR;
}

void *pm_arena_alloc(pm_arena *a, size_t n) {
    n = (n + 7u) & ~(size_t)7u;
    if (n == 0) n = 8;
    pm_chunk *c = a->head;
    if (!c || c->size - c->used < n) return arena_grow(a, n);
    void *p = (char *)c + PM_CHUNK_HDR + c->used;
    c->used += n;
    return p;
}

char *pm_arena_strndup(pm_arena *a, const char *s, size_t n) {
    char *p = pm_arena_alloc(a, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void pm_arena_reset(pm_arena *a) {
    /* Keep the largest-most-recent chunk, free the rest. */
    pm_chunk *keep = a->head;
    if (!keep) return;
    pm_chunk *c = keep->next;
    while (c) { pm_chunk *n = c->next; free(c); c = n; }
    keep->next = NULL;
    keep->used = 0;
}

void pm_arena_free(pm_arena *a) {
    if (!a) return;
    pm_chunk *c = a->head;
    while (c) { pm_chunk *n = c->next; free(c); c = n; }
    free(a);
}

char *pm_strdup(const char *s) {
    return s ? pm_strndup(s, strlen(s)) : NULL;
}

char *pm_strndup(const char *s, size_t n) {
    if (!s) return NULL;
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *pm_path_join(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    while (la > 1 && a[la - 1] == '/') la--;
    while (lb > 0 && b[0] == '/') { b++; lb--; }
    char *p = malloc(la + lb + 2);
    if (!p) return NULL;
    memcpy(p, a, la);
    p[la] = '/';
    memcpy(p + la + 1, b, lb);
    p[la + 1 + lb] = '\0';
    return p;
}

void pm_uuid4(char out[37]) {
    uint8_t r[16];
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        while (got < sizeof r) {
            ssize_t n = read(fd, r + got, sizeof r - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        close(fd);
    }
    if (got < sizeof r) { /* fallback: time and pid mixed; still unique enough per process */
        uint64_t x = (uint64_t)pm_now_millis() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)out;
        for (size_t i = 0; i < sizeof r; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            r[i] = (uint8_t)x;
        }
    }
    r[6] = (uint8_t)((r[6] & 0x0f) | 0x40);
    r[8] = (uint8_t)((r[8] & 0x3f) | 0x80);
    static const char hex[] = "0123456789abcdef";
    int o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[r[i] >> 4];
        out[o++] = hex[r[i] & 15];
    }
    out[o] = '\0';
}

int pm_nomem(pm_err *e) { return pm_fail(e, PAIMON_NOMEM, "out of memory"); }

int64_t pm_local_now_millis(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    time_t sec = ts.tv_sec;
    int64_t off = 0;
    if (localtime_r(&sec, &tm)) off = (int64_t)tm.tm_gmtoff;
    return ((int64_t)ts.tv_sec + off) * 1000 + ts.tv_nsec / 1000000;
}

int pm_strv_push(pm_strv *sv, const char *s) {
    if (sv->n == sv->cap) {
        size_t cap = sv->cap ? sv->cap * 2 : 16;
        char **nv = realloc(sv->v, cap * sizeof *nv);
        if (!nv) return PAIMON_NOMEM;
        sv->v = nv;
        sv->cap = cap;
    }
    char *copy = NULL;
    if (s && !(copy = pm_strdup(s))) return PAIMON_NOMEM;
    sv->v[sv->n++] = copy;
    return PAIMON_OK;
}

void pm_strv_clear(pm_strv *sv) {
    pm_strv_free(sv->v, sv->n);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

void pm_strv_free(char **v, size_t n) {
    if (!v) return;
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

int64_t pm_now_millis(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int pm_decimal_int64(const char *s, int64_t *out) {
    int neg = (*s == '-');
    if (*s == '-' || *s == '+') s++;
    if (!*s) return 1;
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, v = 0;
    int overflow = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10) overflow = 1;   /* keep scanning: "9e99" is not a number at all */
        else v = v * 10 + d;
    }
    if (overflow) return 2;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}
