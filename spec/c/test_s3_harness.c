/* The C side of the S3 test harness (spec/c/s3_util.h) against the Ceph RGW
 * that make test starts: config from the env, a fixture table uploaded and
 * downloaded through rclone with identical bytes, listed with its sizes. */
#include "test.h"
#include "s3_util.h"

#define TMP_PREFIX "/tmp/pm_test_s3_harness."
#define FIXTURE "cpp-avro-append_with_multiple_map/append_with_multiple_map.db/append_with_multiple_map"

TEST(s3_config_from_env) {
    tu_s3 c;
    CHECK_EQ_INT(tu_s3_config(&c), 0);
    if (t_cur_failed) return;
    CHECK(!strncmp(c.endpoint, "http://127.0.0.1:", 17));
    CHECK(strlen(c.bucket) > 0);
    CHECK(strlen(c.access_key) > 0 && strlen(c.secret_key) > 0);
}

/* "size path" of every file below dir, sorted by path (as tu_s3_ls). */
static char *local_ls(const char *dir) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cd '%s' && find . -type f -printf '%%s %%P\\n' | LC_ALL=C sort -k2", dir);
    return tu_sh_out(cmd, NULL);
}

TEST(s3_table_round_trip_is_byte_identical) {
    tu_copy cp;
    CHECK_EQ_INT(tu_copy_make(&cp, TMP_PREFIX, FIXTURE), 0);
    char *uri = tu_s3_put_table(cp.table);
    CHECK(uri != NULL);
    if (uri) {
        CHECK(!strncmp(uri, "s3://", 5) && strstr(uri, "/ctest-") && !strcmp(strrchr(uri, '/'), "/t"));
        char *listed = tu_s3_ls(uri), *local = local_ls(cp.table);
        CHECK(listed && local && strlen(local) > 0);
        CHECK_EQ_STR(listed, local);
        free(listed);
        free(local);
        char back[300];
        snprintf(back, sizeof back, "%s/back", cp.dir);
        CHECK_EQ_INT(tu_s3_get_table(uri, back), 0);
        char *a = tu_tree(cp.table, 0), *b = tu_tree(back, 0);
        CHECK(strlen(a) > 0);
        CHECK_EQ_STR(b, a);
        free(a);
        free(b);
        free(uri);
    }
    tu_copy_remove(&cp, TMP_PREFIX);
}

TEST(s3_ls_of_an_unused_prefix_is_empty_and_bad_uris_fail) {
    tu_s3 c;
    if (tu_s3_config(&c)) { CHECK(0); return; }
    char uri[300], id[37];
    pm_uuid4(id);
    snprintf(uri, sizeof uri, "s3://%s/ctest-none-%s", c.bucket, id);
    char *l = tu_s3_ls(uri);
    CHECK_EQ_STR(l, "");
    free(l);
    CHECK(tu_s3_ls("/tmp/not-s3") == NULL);
    CHECK(tu_s3_get_table("s3://", "/tmp/x") == -1);
}

int main(void) {
    if (tu_s3_off()) {
        printf("ok - # SKIP PAIMON_S3_TESTS=0: S3 tests skipped\n");
        return TEST_SUMMARY();
    }
    RUN(s3_config_from_env);
    RUN(s3_table_round_trip_is_byte_identical);
    RUN(s3_ls_of_an_unused_prefix_is_empty_and_bad_uris_fail);
    return TEST_SUMMARY();
}
