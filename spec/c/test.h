/* Tiny C unit-test harness. Each TEST is counted; the runner prints
 * "N passed, N failed" per binary and scripts/run-tests.sh sums them. */
#ifndef PM_TEST_H
#define PM_TEST_H
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static int t_passed, t_failed, t_cur_failed;
static const char *t_cur;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "  FAIL %s: %s:%d: %s\n", t_cur, __FILE__, __LINE__, #cond); \
    t_cur_failed = 1; } } while (0)
#define CHECK_EQ_INT(a, b) do { long long _a = (long long)(a), _b = (long long)(b); if (_a != _b) { \
    fprintf(stderr, "  FAIL %s: %s:%d: %s == %s (%lld vs %lld)\n", t_cur, __FILE__, __LINE__, #a, #b, _a, _b); \
    t_cur_failed = 1; } } while (0)
#define CHECK_EQ_STR(a, b) do { const char *_a = (a), *_b = (b); if (!_a || !_b || strcmp(_a, _b)) { \
    fprintf(stderr, "  FAIL %s: %s:%d: %s == %s (\"%s\" vs \"%s\")\n", t_cur, __FILE__, __LINE__, #a, #b, \
            _a ? _a : "(null)", _b ? _b : "(null)"); t_cur_failed = 1; } } while (0)

#define TEST(name) static void name(void)
#define RUN(name) do { t_cur = #name; t_cur_failed = 0; name(); \
    if (t_cur_failed) { t_failed++; printf("not ok - %s\n", #name); } \
    else { t_passed++; printf("ok - %s\n", #name); } } while (0)
#define TEST_SUMMARY() (printf("%d passed, %d failed\n", t_passed, t_failed), t_failed ? 1 : 0)

/* Path of the fixtures directory (spec/fixtures by default). */
static inline const char *fixtures_dir(void) {
    const char *d = getenv("PAIMON_FIXTURES");
    return d ? d : "spec/fixtures";
}

/* Shared helpers (shell, temp copies, trees, fake entries, fault sweeps). */
#include "test_util.h"
#endif
