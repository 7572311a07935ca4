/* pm_set against a plain sorted-array model: adds, duplicates, removals
 * (tombstones), growth, reserve and slot stability, binary keys. */
#include "test.h"
#include "pm_set.h"

#include <stdint.h>

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint64_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* key i: a file-like name, sometimes with a NUL byte inside, lengths 0..80 */
static size_t make_key(unsigned i, char *buf) {
    if (i == 0) return 0;   /* the empty key */
    int n = snprintf(buf, 96, "data-%08x-%u-%.*s.avro", i * 2654435761u, i, (int)(i % 40), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    if (i % 17 == 0) buf[3] = '\0';
    return (size_t)n;
}

static void model_run(pm_set *s, unsigned N, int steps) {
    unsigned char *in = calloc(N, 1);
    CHECK(s != NULL);
    size_t live = 0;
    char k[96];
    for (int step = 0; step < steps; step++) {
        unsigned i = (unsigned)(next_rand() % N);
        size_t n = make_key(i, k);
        int op = (int)(next_rand() % 4);
        if (op < 2) {
            int a = pm_set_add(s, k, n);
            CHECK_EQ_INT(a, in[i] ? 0 : 1);
            if (!in[i]) { in[i] = 1; live++; }
        } else if (op == 2) {
            int r = pm_set_remove(s, k, n);
            CHECK_EQ_INT(r, in[i]);
            if (in[i]) { in[i] = 0; live--; }
        } else {
            CHECK_EQ_INT(pm_set_contains(s, k, n), in[i]);
            CHECK_EQ_INT(pm_set_slot(s, k, n) >= 0, in[i]);
        }
        CHECK_EQ_INT(pm_set_size(s), live);
        if (t_cur_failed) break;
    }
    for (unsigned i = 0; i < N; i++) {
        size_t n = make_key(i, k);
        CHECK_EQ_INT(pm_set_contains(s, k, n), in[i]);
    }
    /* a prefix of a key, and the key with one more byte, are other keys */
    size_t n = make_key(12345, k);
    pm_set_add(s, k, n);
    CHECK(!pm_set_contains(s, k, n - 1) || in[0]);
    k[n] = 'z';
    CHECK(!pm_set_contains(s, k, n + 1));
    pm_set_free(s);
    free(in);
}

static uint64_t weak_hash(const void *key, size_t len);

TEST(matches_a_model) { model_run(pm_set_new(), 20000, 200000); }
/* the same with every key of a length class colliding: exact all the same */
TEST(matches_a_model_under_collisions) { model_run(pm_set_new_hashed(weak_hash), 400, 20000); }

TEST(reserved_slots_stay_put) {
    pm_set *s = pm_set_new();
    enum { N = 5000 };
    static long slot[N];
    char k[96];
    CHECK_EQ_INT(pm_set_reserve(s, N), 0);
    size_t cap = pm_set_slots(s);
    for (unsigned i = 0; i < N; i++) {
        size_t n = make_key(i + 1, k);
        slot[i] = pm_set_add_slot(s, k, n);
        CHECK(slot[i] >= 0 && (size_t)slot[i] < cap);
        CHECK_EQ_INT(pm_set_add_slot(s, k, n), slot[i]);   /* present: same slot */
    }
    CHECK_EQ_INT(pm_set_slots(s), cap);                       /* never grew */
    for (unsigned i = 0; i < N; i++) {
        size_t n = make_key(i + 1, k);
        CHECK_EQ_INT(pm_set_slot(s, k, n), slot[i]);
        for (unsigned j = 0; j < i && j < 3; j++) CHECK(slot[j] != slot[i]);
    }
    /* slots are distinct: a side array of flags works */
    unsigned char *seen = calloc(cap, 1);
    for (unsigned i = 0; i < N; i++) { CHECK(!seen[slot[i]]); seen[slot[i]] = 1; }
    free(seen);
    CHECK_EQ_INT(pm_set_slot(s, "absent", 6), -1);
    pm_set_free(s);
}

static uint64_t weak_hash(const void *key, size_t len) {
    (void)key;
    return 1000 + len % 3;   /* every key of a length class collides */
}

/* pm_set_slots_like finds a key's own slot among every colliding one (and
 * nothing of another length); exact lookups stay exact under collisions. */
TEST(slots_like_includes_the_key_itself) {
    pm_set *s = pm_set_new_hashed(weak_hash);
    enum { N = 300 };
    static long slot[N];
    static size_t len[N];
    char k[96];
    CHECK_EQ_INT(pm_set_reserve(s, N), 0);
    for (unsigned i = 0; i < N; i++) {
        len[i] = make_key(i + 1, k);
        slot[i] = pm_set_add_slot(s, k, len[i]);
        CHECK(slot[i] >= 0);
    }
    for (unsigned i = 0; i < N; i++) {
        size_t n = make_key(i + 1, k);
        CHECK_EQ_INT(pm_set_slot(s, k, n), slot[i]);          /* exact */
        long out[N];
        size_t m = pm_set_slots_like(s, k, n, out, N);
        size_t same_len = 0;
        for (unsigned j = 0; j < N; j++) same_len += len[j] == n;
        CHECK_EQ_INT(m, same_len);                             /* all colliding keys of this length */
        int self = 0;
        for (size_t q = 0; q < m && q < N; q++) {
            if (out[q] == slot[i]) self = 1;
            unsigned j = 0;
            while (j < N && slot[j] != out[q]) j++;
            CHECK(j < N && len[j] == n);
        }
        CHECK(self);
        /* more matches than room: the count still says so */
        if (m > 1) CHECK_EQ_INT(pm_set_slots_like(s, k, n, out, 1), m);
        if (t_cur_failed) break;
    }
    /* an absent key: only its collisions (never itself) */
    long out[N];
    size_t m = pm_set_slots_like(s, "absent-key", 10, out, N);
    CHECK_EQ_INT(pm_set_slot(s, "absent-key", 10), -1);
    for (size_t q = 0; q < m && q < N; q++) {
        unsigned j = 0;
        while (j < N && slot[j] != out[q]) j++;
        CHECK(j < N && len[j] == 10);
    }
    pm_set_free(s);
    /* the built-in hash: a present key matches itself alone */
    s = pm_set_new();
    for (unsigned i = 0; i < N; i++) { size_t n = make_key(i + 1, k); pm_set_add(s, k, n); }
    for (unsigned i = 0; i < N; i++) {
        size_t n = make_key(i + 1, k);
        long o[4];
        CHECK_EQ_INT(pm_set_slots_like(s, k, n, o, 4), 1);
        CHECK_EQ_INT(o[0], pm_set_slot(s, k, n));
    }
    pm_set_free(s);
}

/* Ordinals number keys in insertion order, survive growth (unlike slots)
 * and removals, and a removed key comes back with a new ordinal. */
static void check_ordinals(pm_set *s) {
    enum { N = 2000 };
    char k[96];
    for (unsigned i = 0; i < N; i++) {
        size_t n = make_key(i, k);
        int added = -1;
        CHECK_EQ_INT(pm_set_add_ordinal(s, k, n, &added), i);
        CHECK_EQ_INT(added, 1);
    }
    CHECK_EQ_INT(pm_set_ordinals(s), N);
    for (unsigned i = 0; i < N; i += 3) {           /* present: same ordinal, not added */
        size_t n = make_key(i, k);
        int added = -1;
        CHECK_EQ_INT(pm_set_add_ordinal(s, k, n, &added), i);
        CHECK_EQ_INT(added, 0);
    }
    for (unsigned i = 0; i < N; i += 2) { size_t n = make_key(i, k); CHECK_EQ_INT(pm_set_remove(s, k, n), 1); }
    for (unsigned i = 0; i < N; i++) {
        size_t n = make_key(i, k);
        CHECK_EQ_INT(pm_set_ordinal(s, k, n), i % 2 ? (long)i : -1);
    }
    size_t n = make_key(0, k);
    CHECK_EQ_INT(pm_set_add_ordinal(s, k, n, NULL), N);   /* re-added: a fresh ordinal */
    CHECK_EQ_INT(pm_set_ordinal(s, k, n), N);
    CHECK_EQ_INT(pm_set_ordinals(s), N + 1);
    CHECK_EQ_INT(pm_set_ordinal(s, "absent-key", 10), -1);
}

TEST(ordinals_follow_insertion_order) {
    pm_set *s = pm_set_new();
    check_ordinals(s);
    pm_set_free(s);
    s = pm_set_new_hashed(weak_hash);
    check_ordinals(s);
    pm_set_free(s);
}

int main(void) {
    RUN(matches_a_model);
    RUN(matches_a_model_under_collisions);
    RUN(reserved_slots_stay_put);
    RUN(slots_like_includes_the_key_itself);
    RUN(ordinals_follow_insertion_order);
    return TEST_SUMMARY();
}
