/* Compact name keys (pm_names.h): canonical shapes pack small, every name
 * (packed or not) comes back byte for byte, two different names never share
 * a key (near misses of the canonical shapes stay raw), and path sets answer
 * as a set of the full paths would. */
#include "test.h"
#include "pm_deleter.h"
#include "pm_names.h"
#include "pm_set.h"

#include <stdint.h>

static const char *const UUID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";

/* key of name, copied out (the key may point into the name or buf) */
static size_t key_of(const char *name, uint8_t out[512]) {
    uint8_t buf[PM_NAME_KEY_MAX];
    size_t kl;
    const void *k = pm_name_key(name, strlen(name), buf, &kl);
    CHECK(kl <= 512);
    memcpy(out, k, kl);
    return kl;
}

/* unkey(key(name)) == name, and whether it packed */
static int round_trips(const char *name, int *packed) {
    uint8_t k[512];
    size_t kl = key_of(name, k);
    pm_buf out = {0};
    int rc = pm_name_unkey(k, kl, &out);
    int ok = !rc && out.len == strlen(name) && (!out.len || !memcmp(out.data, name, out.len));
    if (!ok) fprintf(stderr, "# no round trip: %s\n", name);
    *packed = kl > 0 && k[0] == 0;
    pm_buf_free(&out);
    return ok;
}

TEST(canonical_names_pack_and_round_trip) {
    static const char *const v[][3] = {{"data-", "0", ".parquet"}, {"data-", "17", ".orc"},
                                       {"changelog-", "3", ".avro"}, {"manifest-", "0", ""},
                                       {"manifest-list-", "12", ""}, {"index-manifest-", "1", ""},
                                       {"index-", "0", ""}, {"stat-", "0", ""},
                                       {"data-", "9999999999999999999", ".json"}, {"data-", "127", ".csv"},
                                       {"data-", "128", ".lance"}, {"data-", "5", ".blob"}};
    char name[256];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        snprintf(name, sizeof name, "%s%s-%s%s", v[i][0], UUID, v[i][1], v[i][2]);
        int packed = 0;
        CHECK(round_trips(name, &packed));
        CHECK_EQ_INT(packed, 1);
        uint8_t k[512];
        size_t kl = key_of(name, k);
        CHECK(kl <= PM_NAME_KEY_MAX);
        CHECK(kl < strlen(name) / 2);
    }
}

/* Shapes that must not pack (so that they keep their exact bytes): every
 * one still round-trips, as itself. */
TEST(near_misses_stay_raw) {
    static const char *const v[] = {
        "data-0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0-0.parquet",   /* uppercase hex */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fA-0.parquet",   /* one uppercase digit */
        "data-0f1e2d3c4b5a-6978-8796-a5b4c3d2e1f0-0.parquet",    /* a dash missing */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.parquet.crc", /* extra suffix */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.zst.parquet", /* compression in the extension */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-00.parquet",  /* leading zero */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-01.parquet",  /* leading zero */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-10000000000000000000.parquet", /* 20 digits */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-99999999999999999999.parquet", /* past 64 bits */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-.parquet",    /* no counter */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-+1.parquet",  /* a sign */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-1 .parquet",  /* a blank */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0.parquet",     /* no counter part */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f-0.parquet",    /* short UUID */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f00-0.parquet",  /* long UUID */
        "data-0f1e2d3c-4b5a-6978-8796_a5b4c3d2e1f0-0.parquet",   /* '_' for a dash */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1g0-0.parquet",   /* not hex */
        "Data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.parquet",   /* prefix case */
        "dat-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.parquet",    /* unknown prefix */
        "part-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.parquet",   /* unknown prefix */
        "manifest-list0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0",   /* prefix without its dash */
        "manifest-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.avro.tmp",
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.PARQUET",   /* extension case */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.",          /* a bare dot */
        "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.txt",       /* unknown extension */
        ".data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.parquet.0f1e2d3c.tmp",
        "snapshot-1", "EARLIEST", "", "x",
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        int packed = 1;
        CHECK(round_trips(v[i], &packed));
        if (packed) fprintf(stderr, "# packed but not canonical: %s\n", v[i]);
        CHECK_EQ_INT(packed, 0);
    }
}

/* Every name above and its canonical neighbours into one set: as many keys
 * as names (injective), each found again. */
TEST(keys_are_injective) {
    pm_set *s = pm_set_new();
    char name[256];
    const char *const pre[] = {"data-", "changelog-", "manifest-", "manifest-list-", "index-manifest-", "index-", "stat-", "Data-", "manifest-list"};
    const char *const ext[] = {"", ".parquet", ".orc", ".avro", ".csv", ".json", ".lance", ".blob", ".crc", ".zst.parquet", "."};
    const char *const ctr[] = {"0", "1", "00", "01", "127", "128", "16383", "16384", "9999999999999999999",
                               "18446744073709551615", "18446744073709551616", ""};
    const char *const uuids[] = {"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",
                                 "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f1", "0f1e2d3c4b5a-6978-8796-a5b4c3d2e1f0-",
                                 "00000000-0000-0000-0000-000000000000"};
    size_t n = 0;
    for (size_t a = 0; a < sizeof pre / sizeof *pre; a++)
        for (size_t b = 0; b < sizeof uuids / sizeof *uuids; b++)
            for (size_t c = 0; c < sizeof ctr / sizeof *ctr; c++)
                for (size_t d = 0; d < sizeof ext / sizeof *ext; d++) {
                    snprintf(name, sizeof name, "%s%s-%s%s", pre[a], uuids[b], ctr[c], ext[d]);
                    uint8_t k[512];
                    size_t kl = key_of(name, k);
                    CHECK_EQ_INT(pm_set_add(s, k, kl), 1);   /* no earlier name had this key */
                    int packed;
                    CHECK(round_trips(name, &packed));
                    n++;
                }
    CHECK_EQ_INT(pm_set_size(s), n);
    pm_set_free(s);
}

/* Keys no pm_name_key makes are refused, not misread. */
TEST(foreign_keys_are_refused) {
    uint8_t k[PM_NAME_KEY_MAX] = {0};
    pm_buf out = {0};
    CHECK_EQ_INT(pm_name_unkey(k, 2, &out), PAIMON_CORRUPT);          /* too short */
    k[1] = 200;                                                      /* no such tag */
    CHECK_EQ_INT(pm_name_unkey(k, 19, &out), PAIMON_CORRUPT);
    k[1] = 1;
    k[18] = 0x80;                                                    /* unterminated varint */
    CHECK_EQ_INT(pm_name_unkey(k, 19, &out), PAIMON_CORRUPT);
    k[18] = 0x81;
    k[19] = 0x00;                                                    /* redundant zero group */
    CHECK_EQ_INT(pm_name_unkey(k, 20, &out), PAIMON_CORRUPT);
    CHECK_EQ_INT(out.len, 0);
    pm_buf_free(&out);
}

TEST(path_sets_match_full_paths) {
    pm_pathset *s = pm_pathset_new();
    char p[512];
    /* the same name in two directories, and names only a raw key holds */
    const char *const dirs[] = {"/t/dt=1/bucket-0", "/t/dt=2/bucket-0", "/t/dt=1/bucket-01", ""};
    const char *const names[] = {"data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.orc",
                                 "data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.orc.index", "x"};
    for (size_t d = 0; d < 4; d++)
        for (size_t i = 0; i < 3; i++) {
            if (d == 1 && i == 1) continue;   /* left out: must not be found */
            snprintf(p, sizeof p, "%s/%s", dirs[d], names[i]);
            CHECK_EQ_INT(pm_pathset_add(s, p, strlen(p)), 1);
            CHECK_EQ_INT(pm_pathset_add(s, p, strlen(p)), 0);
        }
    CHECK_EQ_INT(pm_pathset_size(s), 11);
    for (size_t d = 0; d < 4; d++)
        for (size_t i = 0; i < 3; i++) {
            snprintf(p, sizeof p, "%s/%s", dirs[d], names[i]);
            CHECK_EQ_INT(pm_pathset_contains(s, p, strlen(p)), !(d == 1 && i == 1));
        }
    /* a path without a slash, a directory never added, a prefix of a path */
    CHECK_EQ_INT(pm_pathset_add(s, "bare", 4), 1);
    CHECK_EQ_INT(pm_pathset_contains(s, "bare", 4), 1);
    CHECK_EQ_INT(pm_pathset_contains(s, "/bare", 5), 0);
    CHECK_EQ_INT(pm_pathset_contains(s, "/t/dt=3/bucket-0/x", 18), 0);
    CHECK_EQ_INT(pm_pathset_contains(s, "/t/dt=1/bucket-0/", 17), 0);
    /* a long raw name (past the stack buffer) */
    char longname[400];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    snprintf(p, sizeof p, "/t/%s", longname);
    CHECK_EQ_INT(pm_pathset_contains(s, p, strlen(p)), 0);
    CHECK_EQ_INT(pm_pathset_add(s, p, strlen(p)), 1);
    CHECK_EQ_INT(pm_pathset_contains(s, p, strlen(p)), 1);
    p[strlen(p) - 1] = 'm';
    CHECK_EQ_INT(pm_pathset_contains(s, p, strlen(p)), 0);
    pm_pathset_free(s);
}

/* A deleter keeps each path once, compactly: 100,000 Paimon data files
 * (each added twice) take under 80 bytes a path (a strdup'd copy alone was
 * ~100, and the plan held it three times: issue 16). */
TEST(deleter_paths_are_compact) {
    pm_deleter *d = pm_deleter_new();
    pm_err e;
    char path[200];
    size_t n = 100000;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            snprintf(path, sizeof path, "/tmp/t/dt=2026-01-%02zu/bucket-%zu/data-%08zx-4b5a-6978-8796-a5b4c3d2e1f0-%zu.parquet",
                     i % 28 + 1, i % 4, i * 2654435761u % 0xffffffffu, i % 3);
            CHECK_EQ_INT(pm_deleter_add_sized(d, path, PM_K_DATA, 100, &e), PAIMON_OK);
        }
    CHECK_EQ_INT(pm_deleter_count(d), n);
    CHECK(pm_deleter_contains(d, path));
    CHECK(!pm_deleter_contains(d, "/tmp/t/dt=2026-01-01/bucket-0/data-x.parquet"));
    size_t per_path = pm_deleter_bytes(d) / n;
    fprintf(stderr, "# %zu bytes a path\n", per_path);
    CHECK(per_path > 20 && per_path < 80);
    pm_deleter_free(d);
}

/* A dry run's plan gives back every path byte for byte, in the order added,
 * once, with its kind and size: Paimon's names and any other (long, odd,
 * without a name, without a directory); missing and refused paths are not
 * in it, and two runs into one result follow each other. */
TEST(plan_round_trips_paths_in_order) {
    char *root = tu_make_tmpdir("/tmp/pm_test_names.plan.");
    char sub[600], p[900];
    snprintf(sub, sizeof sub, "%s/dt=a b/bucket-0", root);
    CHECK_EQ_INT(tu_sh((snprintf(p, sizeof p, "mkdir -p '%s' '%s/manifest'", sub, root), p)), 0);
    char longname[400];
    memset(longname, 'x', 240);   /* the path is longer than the deleter's stack buffer */
    strcpy(longname + 240, ".parquet");
    const char *names[] = {"data-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-0.parquet", "changelog-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-7.orc",
                           "data-0F1E2D3C-4b5a-6978-8796-a5b4c3d2e1f0-0.parquet", longname, "weird name\tx", "-"};
    size_t nn = sizeof names / sizeof *names;
    pm_strv want = {0};
    pm_deleter *d = pm_deleter_new(), *d2 = pm_deleter_new();
    pm_err e;
    for (size_t i = 0; i < nn; i++) {
        snprintf(p, sizeof p, "%s/%s", sub, names[nn - 1 - i]);   /* not in sorted order */
        CHECK_EQ_INT(tu_write_file(p, "abcdefg", 1 + i), 0);
        CHECK_EQ_INT(pm_deleter_add_sized(d, p, (int)(i % 2), 99, &e), PAIMON_OK);
        CHECK_EQ_INT(pm_deleter_add(d, p, 5, &e), PAIMON_OK);   /* again: ignored */
        pm_strv_push(&want, p);
    }
    snprintf(p, sizeof p, "%s/missing-file", sub);
    CHECK_EQ_INT(pm_deleter_add(d, p, 0, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_deleter_add(d, "/etc/passwd", 0, &e), PAIMON_OK);
    snprintf(p, sizeof p, "%s/manifest/manifest-list-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-12", root);
    CHECK_EQ_INT(tu_write_file(p, "abcdefg", 7), 0);
    CHECK_EQ_INT(pm_deleter_add(d2, p, PM_K_MANIFEST_LIST, &e), PAIMON_OK);
    pm_strv_push(&want, p);
    pm_fileio *io = pm_fileio_local();
    pm_clean_opts o = {2, 1, 0, NULL, NULL, 0};
    pm_clean_result r;
    memset(&r, 0, sizeof r);
    CHECK_EQ_INT(pm_deleter_run(d, io, root, &o, "test", &r, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_deleter_run(d2, io, root, &o, "test", &r, &e), PAIMON_OK);
    CHECK_EQ_INT(r.n_paths, want.n);
    CHECK_EQ_INT(pm_plan_count(r.plan), want.n);
    CHECK_EQ_INT(r.missing, 1);
    CHECK_EQ_INT(r.n_skipped, 1);
    CHECK_EQ_STR(r.skipped[0].path, "/etc/passwd");
    pm_buf b = {0};
    for (size_t i = 0; i < want.n; i++) {
        int kind = -1;
        int64_t size = -2;
        CHECK_EQ_STR(pm_plan_path(r.plan, i, &b, &kind, &size), want.v[i]);
        CHECK_EQ_INT(kind, i < nn ? (int)(i % 2) : PM_K_MANIFEST_LIST);
        CHECK_EQ_INT(size, i < nn ? (int64_t)(1 + i) : 7);   /* the file's size, not the metadata's */
    }
    CHECK(pm_plan_path(r.plan, want.n, &b, NULL, NULL) == NULL);
    CHECK_EQ_INT(tu_file_exists(want.v[0]), 1);   /* a dry run */
    pm_buf_free(&b);
    pm_clean_result_free(&r);
    pm_deleter_free(d);
    pm_deleter_free(d2);
    pm_fileio_destroy(io);
    pm_strv_clear(&want);
    tu_rm_rf(root);
    free(root);
}

int main(void) {
    RUN(canonical_names_pack_and_round_trip);
    RUN(near_misses_stay_raw);
    RUN(keys_are_injective);
    RUN(foreign_keys_are_refused);
    RUN(path_sets_match_full_paths);
    RUN(deleter_paths_are_compact);
    RUN(plan_round_trips_paths_in_order);
    return TEST_SUMMARY();
}
