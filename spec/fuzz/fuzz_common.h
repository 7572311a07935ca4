/* Shared helpers for the libFuzzer harnesses in spec/fuzz/.
 *
 * A harness signals a logic bug (a broken round-trip property, not just a
 * memory error) by printing a message and calling abort(), so libFuzzer
 * saves the input as a crash-* file. Build with -DPM_FUZZ_NO_ROUNDTRIP to
 * keep only the sanitizer checks. */
#ifndef PM_FUZZ_COMMON_H
#define PM_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_common.h"

#define FUZZ_FAIL(...) do { \
    fprintf(stderr, "fuzz property violated (%s:%d): ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

/* Touch every byte of a region so ASan reports dangling / out-of-range
 * pointers handed out by the code under test. */
static volatile unsigned fuzz_sink;
static inline void fuzz_touch(const void *p, size_t n) {
    const unsigned char *c = (const unsigned char *)p;
    unsigned acc = 0;
    size_t i;
    if (!p) return;
    for (i = 0; i < n; i++) acc += c[i];
    fuzz_sink += acc;
}

/* A heap copy with exactly n bytes (+ optional NUL), so over-reads are
 * caught by ASan even for functions taking (ptr, len). */
static inline char *fuzz_dup(const uint8_t *data, size_t n, int nul) {
    size_t sz = n + (nul ? 1 : 0);
    char *p = (char *)malloc(sz ? sz : 1);
    if (!p) abort();
    if (n) memcpy(p, data, n);
    if (nul) p[n] = 0;
    return p;
}

static inline void fuzz_err_init(pm_err *e) { memset(e, 0, sizeof *e); }

/* Error messages must be NUL-terminated within the buffer. */
static inline void fuzz_check_err(const pm_err *e) {
    if (memchr(e->msg, 0, sizeof e->msg) == NULL)
        FUZZ_FAIL("pm_err.msg is not NUL-terminated");
}

#endif
