/* The small shared helpers of pm_common: out-of-memory report, string
 * vector, local wall clock. */
#include "test.h"
#include "pm_common.h"

#include <time.h>

TEST(nomem_reports_out_of_memory) {
    pm_err e = {0};
    e.sys_errno = 5;
    CHECK_EQ_INT(pm_nomem(&e), PAIMON_NOMEM);
    CHECK_EQ_INT(e.code, PAIMON_NOMEM);
    CHECK_EQ_INT(e.sys_errno, 0);
    CHECK_EQ_STR(e.msg, "out of memory");
    CHECK_EQ_INT(pm_nomem(NULL), PAIMON_NOMEM);   /* callers without an error record */
}

TEST(strv_grows_copies_and_clears) {
    pm_strv v = {0};
    char name[32];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "manifest-%d", i);
        CHECK_EQ_INT(pm_strv_push(&v, name), PAIMON_OK);
    }
    name[0] = 'X';                                 /* the vector holds copies */
    CHECK_EQ_INT(v.n, 100);
    CHECK(v.cap >= 100);
    CHECK_EQ_STR(v.v[0], "manifest-0");
    CHECK_EQ_STR(v.v[99], "manifest-99");
    CHECK_EQ_INT(pm_strv_push(&v, NULL), PAIMON_OK);
    CHECK(v.v[100] == NULL);
    pm_strv_clear(&v);
    CHECK(v.v == NULL);
    CHECK_EQ_INT(v.n, 0);
    CHECK_EQ_INT(v.cap, 0);
    CHECK_EQ_INT(pm_strv_push(&v, "again"), PAIMON_OK);   /* reusable after clear */
    CHECK_EQ_STR(v.v[0], "again");
    pm_strv_clear(&v);
    pm_strv_free(NULL, 3);                         /* NULL-safe */
}

/* Java's LocalDateTime.now() as epoch millis: UTC shifted by the zone. */
TEST(local_clock_is_utc_plus_the_zone_offset) {
    setenv("TZ", "PMT-3", 1);                      /* UTC+3, no daylight saving */
    tzset();
    int64_t utc = pm_now_millis();
    int64_t local = pm_local_now_millis();
    int64_t shift = local - utc - 3 * 3600 * 1000LL;
    CHECK(shift >= 0 && shift < 5000);
    setenv("TZ", "UTC", 1);
    tzset();
    utc = pm_now_millis();
    local = pm_local_now_millis();
    CHECK(local - utc >= 0 && local - utc < 5000);
    unsetenv("TZ");
    tzset();
}

int main(void) {
    RUN(nomem_reports_out_of_memory);
    RUN(strv_grows_copies_and_clears);
    RUN(local_clock_is_utc_plus_the_zone_offset);
    return TEST_SUMMARY();
}
