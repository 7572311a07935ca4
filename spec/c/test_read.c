/* Tests for pm_read.c's deletion vectors (pm_dv_decode): the Java-written
 * ones of the Avro primary-key fixture, and hand-built portable
 * RoaringBitmaps of each container kind (array, bitmap, run; with and
 * without the run cookie), plus damaged input. The merge itself is
 * checked end to end by spec/read_pk_spec.lua against python3-avro. */
#include "test.h"
#include "pm_read.h"

#include <zlib.h>

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static void put_le16(uint8_t *p, unsigned v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put_le32(uint8_t *p, uint32_t v) { put_le16(p, v & 0xFFFF); put_le16(p + 2, v >> 16); }

/* [size][magic][bitmap][crc] as DeletionVectorsIndexFile writes one vector */
static size_t wrap(const uint8_t *bm, size_t n, uint8_t *out) {
    put_be32(out, (uint32_t)(n + 4));
    put_be32(out + 4, 1581511376u);
    memcpy(out + 8, bm, n);
    put_be32(out + 8 + n, (uint32_t)crc32(0L, out + 4, (uInt)(n + 4)));
    return n + 12;
}

static int64_t count_bits(const uint8_t *b, int64_t rows) {
    int64_t c = 0;
    for (int64_t i = 0; i < rows; i++) c += (b[i >> 3] >> (i & 7)) & 1;
    return c;
}
static int has(const uint8_t *b, int64_t p) { return (b[p >> 3] >> (p & 7)) & 1; }

TEST(java_written_deletion_vectors) {
    char path[1024];
    snprintf(path, sizeof path, "%s/paimon-java/cpp-avro-pk_table_scan_and_read_dv/pk_table_scan_and_read_dv.db/"
             "pk_table_scan_and_read_dv/index/index-3be0d042-692a-41cc-8d24-449ebfd0370a-1", fixtures_dir());
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    uint8_t buf[64];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    CHECK_EQ_INT(n, 31);
    uint8_t bits[1] = {0};
    pm_err e = {0};
    /* the index manifest: data-b156a829-...-0.avro, offset 1, length 22; the file has 5 rows */
    CHECK_EQ_INT(pm_dv_decode(buf + 1, n - 1, 22, bits, 5, "dv", &e), PAIMON_OK);
    CHECK_EQ_INT(bits[0], 1 << 4);                    /* row 4: Tony */
    memset(bits, 0, sizeof bits);
    CHECK_EQ_INT(pm_dv_decode(buf + 1, n - 1, 21, bits, 5, "dv", &e), PAIMON_CORRUPT);   /* length differs */
    CHECK(strstr(e.msg, "dv: deletion vector of 22 bytes where the index manifest says 21") != NULL);
    CHECK_EQ_INT(pm_dv_decode(buf + 1, n - 1, 22, bits, 4, "dv", &e), PAIMON_CORRUPT);   /* row 4 of 4 rows */
    CHECK(strstr(e.msg, "deletes row 4 of a data file of 4 rows") != NULL);
    buf[20] ^= 1;
    CHECK_EQ_INT(pm_dv_decode(buf + 1, n - 1, 22, bits, 5, "dv", &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "checksum") != NULL);
}

TEST(array_containers_in_two_chunks) {
    /* no-run cookie 12346, 2 containers: key 0 {3, 9}, key 1 {7} -> 65543 */
    uint8_t bm[64], dv[128];
    size_t n = 0;
    put_le32(bm, 12346); put_le32(bm + 4, 2); n = 8;
    put_le16(bm + n, 0); put_le16(bm + n + 2, 1); put_le16(bm + n + 4, 1); put_le16(bm + n + 6, 0); n += 8;
    n += 8;                                            /* offsets (not used) */
    put_le16(bm + n, 3); put_le16(bm + n + 2, 9); n += 4;
    put_le16(bm + n, 7); n += 2;
    size_t dn = wrap(bm, n, dv);
    int64_t rows = 70000;
    uint8_t *bits = calloc((size_t)(rows + 7) / 8, 1);
    pm_err e = {0};
    CHECK_EQ_INT(pm_dv_decode(dv, dn, (int64_t)n + 4, bits, rows, "dv", &e), PAIMON_OK);
    CHECK_EQ_INT(count_bits(bits, rows), 3);
    CHECK(has(bits, 3) && has(bits, 9) && has(bits, 65543));
    /* truncated: the bitmap cut short, the size and checksum made to match */
    memset(bits, 0, (size_t)(rows + 7) / 8);
    dn = wrap(bm, n - 2, dv);
    CHECK_EQ_INT(pm_dv_decode(dv, dn, (int64_t)n + 2, bits, rows, "dv", &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "truncated RoaringBitmap") != NULL);
    free(bits);
}

TEST(run_and_bitmap_containers) {
    /* run cookie 12347 with 2 containers (no offsets below 4): container 0
     * a run container {2..5, 100..100}; container 1 (key 1) a bitmap
     * container of the 5000 even values 0..9998 -> 65536 + even */
    static uint8_t bm[16384], dv[16384];
    size_t n = 0;
    put_le32(bm, 12347u | (1u << 16)); n = 4;          /* 2 containers */
    bm[n++] = 0x01;                                     /* container 0 is a run container */
    put_le16(bm + n, 0); put_le16(bm + n + 2, 4); n += 4;         /* key 0, cardinality 5 */
    put_le16(bm + n, 1); put_le16(bm + n + 2, 4999); n += 4;      /* key 1, cardinality 5000 */
    put_le16(bm + n, 2); n += 2;                        /* 2 runs */
    put_le16(bm + n, 2); put_le16(bm + n + 2, 3); n += 4;
    put_le16(bm + n, 100); put_le16(bm + n + 2, 0); n += 4;
    memset(bm + n, 0, 8192);
    for (unsigned v = 0; v < 10000; v += 2) bm[n + v / 8] |= (uint8_t)(1u << (v % 8));
    n += 8192;
    size_t dn = wrap(bm, n, dv);
    int64_t rows = 80000;
    uint8_t *bits = calloc((size_t)(rows + 7) / 8, 1);
    pm_err e = {0};
    CHECK_EQ_INT(pm_dv_decode(dv, dn, (int64_t)n + 4, bits, rows, "dv", &e), PAIMON_OK);
    CHECK_EQ_INT(count_bits(bits, 65536), 5);
    CHECK(has(bits, 2) && has(bits, 5) && has(bits, 100) && !has(bits, 6) && !has(bits, 1));
    CHECK_EQ_INT(count_bits(bits, rows), 5005);
    CHECK(has(bits, 65536) && has(bits, 65536 + 9998) && !has(bits, 65537));
    free(bits);
}

TEST(bitmap64_and_bad_magic) {
    uint8_t dv[32] = {0};
    put_be32(dv, 8);
    put_be32(dv + 4, 1681511377u);
    put_be32(dv + 12, (uint32_t)crc32(0L, dv + 4, 8));
    uint8_t bits[2] = {0};
    pm_err e = {0};
    CHECK_EQ_INT(pm_dv_decode(dv, 16, 8, bits, 16, "dv", &e), PAIMON_UNSUPPORTED);
    CHECK(strstr(e.msg, "64-bit") != NULL);
    put_be32(dv + 4, 12345);
    CHECK_EQ_INT(pm_dv_decode(dv, 16, 8, bits, 16, "dv", &e), PAIMON_CORRUPT);
    CHECK(strstr(e.msg, "magic") != NULL);
    CHECK_EQ_INT(pm_dv_decode(dv, 10, 8, bits, 16, "dv", &e), PAIMON_CORRUPT);     /* past the end */
}

int main(void) {
    RUN(java_written_deletion_vectors);
    RUN(array_containers_in_two_chunks);
    RUN(run_and_bitmap_containers);
    RUN(bitmap64_and_bad_magic);
    return TEST_SUMMARY();
}
