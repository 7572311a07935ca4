/* Internal helpers shared by every core module: error records, growable
 * buffers, arenas. No Lua here. */
#ifndef PM_COMMON_H
#define PM_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "paimon.h"

/* Every core function that can fail takes a pm_err* and returns a PAIMON_*
 * code; on failure the record holds the code, the errno (0 if none) and a
 * message that names the file and the problem. */
typedef struct pm_err {
    int code;
    int sys_errno;
    char msg[1024];
} pm_err;

#if defined(__GNUC__)
#define PM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PM_PRINTF(a, b)
/* Exact decimal text to int64: an optional sign and digits, nothing else
 * (no hex, exponent, blanks or fraction: Lua's own coercion takes "0x10"
 * and "1e3", strtoll clamps overflow to the maximum). 0 ok, 1 not a
 * decimal integer, 2 out of the int64 range. */
int pm_decimal_int64(const char *s, int64_t *out);
#endif

/* Set code and message; returns code so callers can `return pm_fail(...)`. */
int pm_fail(pm_err *e, int code, const char *fmt, ...) PM_PRINTF(3, 4);
/* Same, appending ": <strerror(err)>" and recording err. */
int pm_fail_errno(pm_err *e, int code, int err, const char *fmt, ...) PM_PRINTF(4, 5);
/* Prepend "<context>: " to the current message (keeps code). */
void pm_err_prefix(pm_err *e, const char *fmt, ...) PM_PRINTF(2, 3);
void pm_err_clear(pm_err *e);
/* Append "<text>" to the current message (keeps code). */
void pm_err_suffix(pm_err *e, const char *fmt, ...) PM_PRINTF(2, 3);
/* Interruption (paimon_interrupt): an interruptible operation brackets its
 * destructive part with enter/leave and polls pm_interrupted() where it can
 * stop consistently; leaving the outermost one clears the flag. */
void pm_interrupt_enter(void);
void pm_interrupt_leave(void);
int pm_interrupted(void);

/* pm_fail(e, PAIMON_NOMEM, "out of memory"): the one out-of-memory report. */
int pm_nomem(pm_err *e);

/* Growable byte buffer. Zero-initialise ({0}) before use. */
typedef struct pm_buf {
    uint8_t *data;
    size_t len, cap;
    /* Nonzero: a FileIO read into this buffer refuses a file of more bytes
     * or one that is no regular file (set by pm_io_read_meta; carried by the
     * buffer so that every FileIO wrapper passes it on unchanged). */
    size_t read_max;
} pm_buf;

/* Same bytes (an empty buffer may have data NULL: memcmp must not see it). */
static inline int pm_buf_eq(const pm_buf *a, const pm_buf *b) {
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

int pm_buf_reserve(pm_buf *b, size_t extra);          /* PAIMON_OK / PAIMON_NOMEM */
int pm_buf_append(pm_buf *b, const void *p, size_t n);
int pm_buf_putc(pm_buf *b, uint8_t c);
int pm_buf_printf(pm_buf *b, const char *fmt, ...) PM_PRINTF(2, 3);
int pm_buf_cstr(pm_buf *b);                          /* NUL-terminate without counting it */
void pm_buf_free(pm_buf *b);

/* Bump allocator for short-lived records; reset reuses the first chunk. */
typedef struct pm_arena pm_arena;
pm_arena *pm_arena_new(size_t chunk_size);
void *pm_arena_alloc(pm_arena *a, size_t n);         /* 8-byte aligned, NULL on OOM */
char *pm_arena_strndup(pm_arena *a, const char *s, size_t n);
void pm_arena_reset(pm_arena *a);
void pm_arena_free(pm_arena *a);

char *pm_strdup(const char *s);                      /* NULL-safe */
char *pm_strndup(const char *s, size_t n);
/* Join path components with '/', avoiding doubled separators. malloc'd. */
char *pm_path_join(const char *a, const char *b);
/* Random v4 UUID in canonical 36-char form + NUL. */
void pm_uuid4(char out[37]);
int64_t pm_now_millis(void);
/* Local wall-clock millis (Java LocalDateTime.now() encoded as UTC: epoch
 * millis shifted by the local zone's offset). */
int64_t pm_local_now_millis(void);

/* Growable vector of owned strings. Zero-initialise ({0}) before use. */
typedef struct pm_strv {
    char **v;
    size_t n, cap;
} pm_strv;
/* Append a copy of s (NULL-safe: appends NULL). PAIMON_OK / PAIMON_NOMEM. */
int pm_strv_push(pm_strv *sv, const char *s);
/* Free every string and the array; the vector is empty and reusable. */
void pm_strv_clear(pm_strv *sv);
/* Free a plain array of n owned strings (NULL-safe). */
void pm_strv_free(char **v, size_t n);

/* Exact decimal text to int64: an optional sign and digits, nothing else
 * (no hex, exponent, blanks or fraction: Lua's own coercion takes "0x10"
 * and "1e3", strtoll clamps overflow to the maximum). 0 ok, 1 not a
 * decimal integer, 2 out of the int64 range. */
int pm_decimal_int64(const char *s, int64_t *out);
#endif
