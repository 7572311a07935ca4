/* The operations layer (pm_ops) under paimon.h and the Lua binding: one
 * option table read by both faces (names, types, ranges, defaults, the
 * same messages under each face's names), and the result tree both faces
 * walk (pm_result). The operations themselves are exercised through the
 * faces: spec/c/test_capi.c, spec/capi_spec.lua and the Lua specs. */
#include "test.h"

#include "pm_ops.h"
#include "pm_result.h"

static pm_opt_in text(const char *k, const char *v) { return (pm_opt_in){k, PM_OV_TEXT, v, 0, NULL}; }
static pm_opt_in integer(const char *k, int64_t v) { return (pm_opt_in){k, PM_OV_INT, NULL, v, NULL}; }
static pm_opt_in boolean(const char *k, int v) { return (pm_opt_in){k, PM_OV_BOOL, NULL, v, NULL}; }

/* The message of parsing n pairs for op under face ("" when accepted). */
static const char *parse_msg(const char *op, pm_face face, const pm_opt_in *in, size_t n, pm_op_args *a) {
    static pm_err e;
    pm_err_clear(&e);
    int rc = pm_op_parse(pm_op_find(op), face, in, n, a, &e);
    if (rc && rc != PAIMON_MISUSE) return "(not misuse)";
    return rc ? e.msg : "";
}

TEST(both_faces_read_one_option_table) {
    pm_op_args a;
    pm_opt_in c[] = {text("retain-min", "3"), text("dry-run", "true"), text("until", "7")};
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_C, c, 3, &a), "");
    CHECK_EQ_INT(a.v[PM_O_RETAIN_MIN], 3);
    CHECK_EQ_INT(a.v[PM_O_DRY_RUN], 1);
    CHECK_EQ_INT(a.v[PM_O_KEEP_FROM], 7);
    CHECK_EQ_INT(a.v[PM_O_THREADS], 4);                 /* one default for both faces */
    pm_opt_in l[] = {integer("retain_min", 3), boolean("dry_run", 1), integer("keep_from", 7)};
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_LUA, l, 3, &a), "");
    CHECK_EQ_INT(a.v[PM_O_RETAIN_MIN], 3);
    CHECK_EQ_INT(a.v[PM_O_DRY_RUN], 1);
    CHECK_EQ_INT(a.v[PM_O_KEEP_FROM], 7);
    CHECK_EQ_INT(a.v[PM_O_THREADS], 4);
    CHECK_EQ_STR(parse_msg("drop_partitions", PM_FACE_LUA, NULL, 0, &a), "");
    CHECK_EQ_INT(a.v[PM_O_MAX_ATTEMPTS], 3);
    CHECK_EQ_STR(pm_op_key(PM_O_NOW, PM_FACE_C), "now-ms");
    CHECK_EQ_STR(pm_op_key(PM_O_NOW, PM_FACE_LUA), "now");
    CHECK(pm_op_key(PM_O_POLICY, PM_FACE_C) == NULL);    /* Lua only */
    CHECK(pm_op_find("no_such_operation") == NULL);
}

TEST(the_same_message_under_each_faces_name) {
    pm_op_args a;
    pm_opt_in c0[] = {text("retain-min", "0")}, l0[] = {integer("retain_min", 0)};
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_C, c0, 1, &a),
                 "option 'retain-min' must be between 1 and 2147483647, got 0");
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_LUA, l0, 1, &a),
                 "option 'retain_min' must be between 1 and 2147483647, got 0");
    pm_opt_in ct[] = {text("threads", "many")}, lt[] = {text("threads", "many")};
    CHECK_EQ_STR(parse_msg("verify", PM_FACE_C, ct, 1, &a), "option 'threads' must be an integer, got 'many'");
    CHECK_EQ_STR(parse_msg("verify", PM_FACE_LUA, lt, 1, &a), "option 'threads' must be an integer, got 'many'");
    /* each face's known names; a name of the other face is unknown */
    pm_opt_in cu[] = {text("all_snapshots", "true")}, lu[] = {boolean("all-snapshots", 1)};
    CHECK_EQ_STR(parse_msg("verify", PM_FACE_C, cu, 1, &a),
                 "verify: unknown option 'all_snapshots' (known: all-snapshots, threads)");
    CHECK_EQ_STR(parse_msg("verify", PM_FACE_LUA, lu, 1, &a),
                 "verify: unknown option 'all-snapshots' (known: all_snapshots, threads, progress)");
    /* an unknown name is reported before a bad value given earlier */
    pm_opt_in both[] = {integer("threads", 0), boolean("dryrun", 1)};
    CHECK(strstr(parse_msg("remove_orphan_files", PM_FACE_LUA, both, 2, &a), "unknown option 'dryrun'") != NULL);
}

TEST(typed_values_are_checked_not_coerced) {
    pm_op_args a;
    /* a Lua string "false" is no boolean: it must not turn a dry run into a real one */
    pm_opt_in ls[] = {text("dry_run", "false")};
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_LUA, ls, 1, &a),
                 "dry_run must be a boolean, got string");
    pm_opt_in cs[] = {text("dry-run", "false")};
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_C, cs, 1, &a), "");
    CHECK_EQ_INT(a.has[PM_O_DRY_RUN], 1);
    CHECK_EQ_INT(a.v[PM_O_DRY_RUN], 0);
    pm_opt_in ln[] = {integer("dry_run", 1)};
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_LUA, ln, 1, &a),
                 "dry_run must be a boolean, got number");
    pm_opt_in lo[] = {{"max_attempts", PM_OV_OTHER, NULL, 0, "table"}};
    CHECK_EQ_STR(parse_msg("drop_partitions", PM_FACE_LUA, lo, 1, &a),
                 "option 'max_attempts' must be an integer, got table");
    pm_opt_in lu[] = {integer("commit_user", 5)};
    CHECK_EQ_STR(parse_msg("drop_partitions", PM_FACE_LUA, lu, 1, &a), "option 'commit_user' must be a string");
}

TEST(cutoffs_aliases_and_exclusions) {
    pm_op_args a;
    /* Lua: an integer is epoch ms, a text a duration before `now` */
    pm_opt_in li[] = {integer("older_than", 12345)};
    CHECK_EQ_STR(parse_msg("remove_orphan_files", PM_FACE_LUA, li, 1, &a), "");
    CHECK_EQ_INT(a.v[PM_O_OLDER_THAN], 12345);
    pm_opt_in ld[] = {text("older_than", "1h"), integer("now", 10000000)};
    CHECK_EQ_STR(parse_msg("remove_orphan_files", PM_FACE_LUA, ld, 2, &a), "");
    CHECK_EQ_INT(a.v[PM_O_OLDER_THAN], 10000000 - 3600000);
    pm_opt_in cm[] = {text("older-than-ms", "777")};
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_C, cm, 1, &a), "");
    CHECK_EQ_INT(a.has[PM_O_OLDER_THAN], 1);
    CHECK_EQ_INT(a.v[PM_O_OLDER_THAN], 777);
    pm_opt_in cx[] = {text("older-than", "1h"), text("older-than-ms", "1")};
    CHECK_EQ_STR(parse_msg("expire_snapshots", PM_FACE_C, cx, 2, &a),
                 "options 'older-than' and 'older-than-ms' exclude each other");
    pm_opt_in bad[] = {text("older_than", "soon")};
    CHECK(strncmp(parse_msg("expire_range", PM_FACE_LUA, bad, 1, &a), "option 'older_than': ", 21) == 0);
    /* keep_from and its old name `until` */
    pm_opt_in same[] = {integer("keep_from", 4), integer("until", 4)};
    CHECK_EQ_STR(parse_msg("expire_range", PM_FACE_LUA, same, 2, &a), "");
    CHECK_EQ_INT(a.v[PM_O_KEEP_FROM], 4);
    pm_opt_in old[] = {integer("until", 5)};
    CHECK_EQ_STR(parse_msg("expire_range", PM_FACE_LUA, old, 1, &a), "");
    CHECK_EQ_INT(a.v[PM_O_KEEP_FROM], 5);
    pm_opt_in differ[] = {integer("keep_from", 4), integer("until", 5)};
    CHECK_EQ_STR(parse_msg("expire_range", PM_FACE_LUA, differ, 2, &a),
                 "expire_range: keep_from and until (its old name) differ");
}

TEST(result_tree_keeps_order_and_finds_by_path) {
    pm_result *r = pm_result_new();
    CHECK(r != NULL);
    if (!r) return;
    pm_rv_int(r, r->root, "expired", 3);
    pm_rv_str(r, r->root, "skipped", NULL);              /* absent, not an empty string */
    pm_rv *range = pm_rv_list(r, r->root, "range");
    pm_rv_int(r, range, NULL, 1);
    pm_rv_int(r, range, NULL, 3);
    pm_rv *plan = pm_rv_obj(r, r->root, "plan");
    pm_rv_bool(r, plan, "ok", 7);
    pm_rv_bytes(r, plan, "row", "a\0b", 3);
    pm_err e;
    pm_err_clear(&e);
    CHECK_EQ_INT(pm_result_check(r, &e), PAIMON_OK);
    CHECK_EQ_INT(r->root->n, 3);
    CHECK_EQ_STR(r->root->first->key, "expired");
    CHECK_EQ_STR(r->root->last->key, "plan");
    CHECK(pm_rv_get(r->root, "skipped") == NULL);
    const pm_rv *v = pm_rv_path(r->root, "range.1");
    CHECK(v && v->type == PM_RV_INT && v->i == 3);
    CHECK(pm_rv_path(r->root, "range.2") == NULL);
    CHECK(pm_rv_path(r->root, "range.x") == NULL);
    v = pm_rv_path(r->root, "plan.ok");
    CHECK(v && v->type == PM_RV_BOOL && v->i == 1);
    v = pm_rv_path(r->root, "plan.row");
    CHECK(v && v->type == PM_RV_BYTES && v->len == 3 && !memcmp(v->s, "a\0b", 3));
    CHECK(pm_rv_path(r->root, "expired.0") == NULL);
    CHECK(pm_rv_path(r->root, "") == NULL);
    pm_result_free(r);
    pm_result_free(NULL);
}

int main(void) {
    RUN(both_faces_read_one_option_table);
    RUN(the_same_message_under_each_faces_name);
    RUN(typed_values_are_checked_not_coerced);
    RUN(cutoffs_aliases_and_exclusions);
    RUN(result_tree_keeps_order_and_finds_by_path);
    return TEST_SUMMARY();
}
