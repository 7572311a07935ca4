#define _GNU_SOURCE   /* memmem */
/* Manifest merging that copies the Avro blocks of manifests it keeps whole
 * (Java's ManifestFileBlockMerger): the result must read entry for entry as
 * the decode path's (our reader and python3-avro), cancelled entries must
 * send a manifest down the decode path, and a damaged block must never be
 * copied. */
#include "test.h"
#include "pm_commit.h"
#include "pm_commit_internal.h"

#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#define COMPLEX "cpp-parquet-append_complex_data/append_complex_data.db/append_complex_data"
#define PKDV "cpp-parquet-pk_dv_index_in_data_with_external/pk_dv_index_in_data_with_external.db/" \
             "pk_dv_index_in_data_with_external"
static const char PKDV1[] = PKDV;
#define TMP_PREFIX "/tmp/pm_test_merge_copy."
#define FIXED_TIME 1700000000000LL   /* one creation time: both copies get the same entries */

static void opts_for(paimon_table *t, pm_commit_opts *o, const char *codec, int decode_only) {
    pm_commit_opts_from_table(t, o);
    o->commit_user = "merge-copy";
    if (codec) o->codec = codec;
    o->merge_decode_only = decode_only;
    o->merge_min_count = 1000000;   /* no merging until a test asks for it */
}

/* Partition bytes of the first live file of the latest snapshot. */
static int some_partition(paimon_table *t, pm_buf *out) {
    pm_snapshot *s = tu_read_snap(t, tu_latest_id(t));
    pm_scan *sc;
    pm_err e;
    if (!s || pm_scan_open(t, s, NULL, &sc, &e)) { pm_snapshot_free(s); return -1; }
    const pm_manifest_entry *m;
    int rc = pm_scan_next(sc, &m, &e) == PAIMON_OK ? 0 : -1;
    if (!rc) pm_buf_append(out, m->partition.ptr, m->partition.len);
    pm_scan_close(sc);
    pm_snapshot_free(s);
    return rc;
}

/* n ADD entries data-<prefix>-<i>.parquet, all created at FIXED_TIME. */
static tentry *make_entries(const pm_buf *part, const char *prefix, int n, pm_manifest_entry **v) {
    tentry *store = calloc((size_t)n, sizeof *store);
    *v = calloc((size_t)n, sizeof **v);
    for (int i = 0; i < n; i++) {
        char name[96];
        snprintf(name, sizeof name, "data-%s-%05d.parquet", prefix, i);
        tentry_init_at(&store[i], part->data, part->len, i % 2, name, 1 + i % 7, FIXED_TIME);
        (*v)[i] = store[i].m;
    }
    return store;
}

static void free_entries(tentry *store, pm_manifest_entry *v, int n) {
    for (int i = 0; i < n; i++) tentry_free(&store[i]);
    free(store);
    free(v);
}

/* Everything a snapshot's base list says and holds, file names and sizes
 * aside: per manifest its counts, partition stats, schema id, bucket, level
 * and row-id ranges, then each entry as our encoder writes it. Two merges
 * with equal digests produced the same entries in the same order with the
 * same metadata. *names: the manifest file names, "\n"-joined. */
static int base_digest(paimon_table *t, int64_t id, pm_buf *out, pm_buf *names) {
    out->len = names->len = 0;
    pm_snapshot *s = tu_read_snap(t, id);
    if (!s) return -1;
    pm_manifest_reader *lr;
    pm_err e;
    int rc = pm_table_open_manifest(t, s->base_manifest_list, PM_MANIFEST_LIST, &lr, &e);
    pm_snapshot_free(s);
    if (rc) return -1;
    const pm_manifest_meta *m;
    while ((rc = pm_manifest_next_meta(lr, &m, &e)) == PAIMON_OK) {
        const pm_stats *st = &m->partition_stats;
        pm_buf_printf(out, "M %lld %lld %lld b%d:%d-%d l%d:%d-%d r%d:%lld-%lld n%zu", (long long)m->num_added_files,
                      (long long)m->num_deleted_files, (long long)m->schema_id, m->min_bucket.has, m->min_bucket.v,
                      m->max_bucket.v, m->min_level.has, m->min_level.v, m->max_level.v, m->min_row_id.has,
                      (long long)m->min_row_id.v, (long long)m->max_row_id.v, st->n_null_counts);
        for (size_t i = 0; i < st->n_null_counts; i++) pm_buf_printf(out, ",%lld", (long long)st->null_counts[i]);
        pm_buf_printf(out, " min:");
        for (size_t i = 0; i < st->min_values.len; i++) pm_buf_printf(out, "%02x", st->min_values.ptr[i]);
        pm_buf_printf(out, " max:");
        for (size_t i = 0; i < st->max_values.len; i++) pm_buf_printf(out, "%02x", st->max_values.ptr[i]);
        pm_buf_printf(out, "\n");
        pm_buf_printf(names, "%s\n", m->file_name);
        pm_manifest_reader *r;
        if (pm_table_open_manifest(t, m->file_name, PM_MANIFEST_FILE, &r, &e)) { rc = -1; break; }
        const pm_manifest_entry *x;
        while ((rc = pm_manifest_next_entry(r, &x, &e)) == PAIMON_OK) {
            pm_avro_writer *w;
            if (pm_avro_writer_open(PM_SCHEMA_MANIFEST_FILE, "null", 0, &w, &e)) { rc = -1; break; }
            if (pm_manifest_write_entry(w, x, &e)) { pm_avro_writer_abort(w); rc = -1; break; }
            pm_buf *d = pm_avro_writer_datum_buf(w);
            pm_buf_printf(out, "E ");
            for (size_t i = 0; i < d->len; i++) pm_buf_printf(out, "%02x", d->data[i]);
            pm_buf_printf(out, "\n");
            pm_avro_writer_abort(w);
        }
        pm_manifest_close(r);
        if (rc != PAIMON_DONE) { fprintf(stderr, "  digest: %s\n", e.msg); rc = -1; break; }
    }
    pm_manifest_close(lr);
    pm_buf_cstr(out);
    pm_buf_cstr(names);
    return rc == PAIMON_DONE ? 0 : -1;
}

/* python3-avro's records of manifest a (table ta) equal those of b (tb). */
static int py_same_records(const char *ta, const char *a, const char *tb, const char *b) {
    char cmd[1600];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import sys,warnings,avro.datafile,avro.io\n"
             "warnings.simplefilter(\"ignore\")\n"
             "r=lambda p: list(avro.datafile.DataFileReader(open(p,\"rb\"),avro.io.DatumReader()))\n"
             "x,y=r(sys.argv[1]),r(sys.argv[2])\n"
             "print(\"same\" if x==y and len(x) > 0 else \"DIFFERENT %%d %%d\" %% (len(x),len(y)))' "
             "'%s/manifest/%s' '%s/manifest/%s' 2>&1",
             ta, a, tb, b);
    int st = -1;
    char *out = tu_sh_out(cmd, &st);
    int ok = st == 0 && out && !strcmp(out, "same\n");
    if (!ok) fprintf(stderr, "  python3-avro: %s", out ? out : "(no output)\n");
    free(out);
    return ok ? 0 : -1;
}

/* Every manifest of the two base lists, pairwise, read the same in python3-avro. */
static int py_same_lists(const char *ta, const pm_buf *na, const char *tb, const pm_buf *nb) {
    char *a = pm_strdup(na->data ? (char *)na->data : ""), *b = pm_strdup(nb->data ? (char *)nb->data : "");
    int rc = 0, n = 0;
    char *sa, *sb;
    char *x = strtok_r(a, "\n", &sa), *y = strtok_r(b, "\n", &sb);
    for (; x && y && !rc; x = strtok_r(NULL, "\n", &sa), y = strtok_r(NULL, "\n", &sb), n++)
        rc = py_same_records(ta, x, tb, y);
    if (x || y || !n) rc = -1;
    free(a);
    free(b);
    return rc;
}

typedef struct run {
    tu_copy c;
    paimon_table *t;
    int64_t id;
    int64_t copied, decoded;   /* manifests the merge commit copied / decoded */
    int64_t decode_free;       /* of the copied: on their list record's word */
} run;

/* Commit `batches` batches of `per` entries (no merging), then one entry
 * with merging on (minor: merge_min_count 2; full: threshold 1), with block
 * copies (decode_only 0) or not. */
/* A temp copy of fixture rel, opened; PKDV1: PKDV as of its first
 * snapshot (one Java manifest, adds only). */
static paimon_table *open_copy(tu_copy *c, const char *rel) {
    if (tu_copy_make(c, TMP_PREFIX, rel)) return NULL;
    if (rel == PKDV1) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "cd '%s/snapshot' && rm -f snapshot-2 snapshot-3 snapshot-4 && printf 1 > LATEST",
                 c->table);
        if (tu_sh(cmd)) return NULL;
    }
    return tu_open_table(c->table);
}

static int build(run *r, const char *rel, const char *codec, int decode_only, int batches, int per, int full,
                 int64_t target) {
    memset(r, 0, sizeof *r);
    r->t = open_copy(&r->c, rel);
    if (!r->t) return -1;
    pm_buf part = {0};
    if (some_partition(r->t, &part)) { pm_buf_free(&part); return -1; }
    pm_commit_opts o;
    opts_for(r->t, &o, codec, decode_only);
    pm_err e = {0};
    int rc = 0;
    for (int b = 0; b < batches && !rc; b++) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "b%d", b);
        pm_manifest_entry *v;
        tentry *store = make_entries(&part, prefix, per, &v);
        rc = tu_commit(r->t, v, (size_t)per, &o, &r->id, &e);
        free_entries(store, v, per);
    }
    if (target) o.manifest_target_size = target;
    if (full) o.full_compaction_threshold = 1;
    else o.merge_min_count = 2;
    pm_manifest_entry *v;
    tentry *store = make_entries(&part, "last", 1, &v);
    int64_t c0, d0, c1, d1, f0, f1;
    pm_merge_copy_counts(&c0, &d0);
    pm_merge_decode_free_count(&f0);
    if (!rc) rc = tu_commit(r->t, v, 1, &o, &r->id, &e);
    pm_merge_copy_counts(&c1, &d1);
    pm_merge_decode_free_count(&f1);
    r->decode_free = f1 - f0;
    r->copied = c1 - c0;
    r->decoded = d1 - d0;
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    free_entries(store, v, 1);
    pm_buf_free(&part);
    return rc;
}

static void unbuild(run *r) {
    pm_table_free(r->t);
    tu_copy_remove(&r->c, TMP_PREFIX);
}

/* The merge with block copies and the decode-only merge of the same
 * history produce the same base list and entries. */
static int64_t last_decode_free;   /* of the last same_as_decode */

static void same_as_decode(const char *rel, const char *codec, int batches, int per, int full, int64_t target,
                           int64_t *copied, int64_t *decoded) {
    run a, b;
    *copied = *decoded = last_decode_free = -1;
    int ra = build(&a, rel, codec, 1, batches, per, full, target);
    int rb = build(&b, rel, codec, 0, batches, per, full, target);
    CHECK_EQ_INT(ra, 0);
    CHECK_EQ_INT(rb, 0);
    if (!ra && !rb) {
        CHECK_EQ_INT(a.copied, 0);
        CHECK_EQ_INT(a.decode_free, 0);   /* merge-optimize off: everything decoded */
        last_decode_free = b.decode_free;
        *copied = b.copied;
        *decoded = b.decoded;
        pm_buf da = {0}, db = {0}, na = {0}, nb = {0};
        CHECK_EQ_INT(base_digest(a.t, a.id, &da, &na), 0);
        CHECK_EQ_INT(base_digest(b.t, b.id, &db, &nb), 0);
        CHECK(da.len > 0 && da.len == db.len && !memcmp(da.data, db.data, da.len));
        CHECK_EQ_INT(py_same_lists(a.c.table, &na, b.c.table, &nb), 0);
        pm_buf_free(&da);
        pm_buf_free(&db);
        pm_buf_free(&na);
        pm_buf_free(&nb);
    }
    unbuild(&a);
    unbuild(&b);
}

/* Minor merge: the Java manifests of the fixture (an older schema) are
 * decoded, ours are copied, for each codec; the result is the decode
 * path's. (The commit's own delta manifest is not merged, as in Java.) */
TEST(minor_merge_copies_our_manifests) {
    static const char *const codecs[] = {"zstandard", "snappy", "null", "deflate"};
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        int64_t copied, decoded;
        same_as_decode(COMPLEX, codecs[i], 5, 300, 0, 0, &copied, &decoded);
        CHECK_EQ_INT(copied, 5);
        CHECK_EQ_INT(decoded, 4);   /* the fixture's Java-written manifests */
        /* the fixture's manifests count deleted files: the group takes pass 1 */
        CHECK_EQ_INT(last_decode_free, 0);
    }
}

/* Full compaction rewrites every small manifest: ours are copied. */
TEST(full_compaction_copies_our_manifests) {
    int64_t copied, decoded;
    same_as_decode(COMPLEX, "zstandard", 4, 200, 1, 0, &copied, &decoded);
    CHECK_EQ_INT(copied, 4);
    CHECK_EQ_INT(decoded, 4);
    CHECK_EQ_INT(last_decode_free, 4);
}

/* A Java-written table whose manifests have our layout. As of its first
 * snapshot (one manifest of adds) the Java manifest is copied like ours;
 * as of its last, each Java manifest has an entry a DELETE of the group
 * cancels (compactions) and is decoded, in a minor merge and in a full
 * compaction. The result is always the decode path's. */
TEST(java_manifests_copied_or_decoded) {
    int64_t copied, decoded;
    same_as_decode(PKDV1, NULL, 2, 20, 0, 0, &copied, &decoded);
    CHECK_EQ_INT(copied, 1 + 2);
    CHECK_EQ_INT(decoded, 0);
    CHECK_EQ_INT(last_decode_free, 1 + 2);   /* the Java manifest's list record folded like ours */
    same_as_decode(PKDV, NULL, 2, 20, 0, 0, &copied, &decoded);
    CHECK_EQ_INT(copied, 2);
    CHECK_EQ_INT(decoded, 4);
    CHECK_EQ_INT(last_decode_free, 0);   /* a group with DELETEs: pass 1 and walked copies */
    same_as_decode(PKDV, NULL, 2, 20, 1, 0, &copied, &decoded);
    CHECK_EQ_INT(copied, 2);
    CHECK_EQ_INT(decoded, 4);
}

/* Entries cancelled inside the group (ADD then DELETE): the manifests that
 * held them go down the decode path, the untouched one is copied. */
TEST(cancelled_entries_fall_back_to_decoding) {
    tu_copy c;
    paimon_table *t = tu_copy_open(&c, TMP_PREFIX, COMPLEX);
    if (!t) return;
    pm_buf part = {0};
    CHECK_EQ_INT(some_partition(t, &part), 0);
    pm_commit_opts o;
    opts_for(t, &o, "zstandard", 0);
    pm_err e = {0};
    int64_t id = 0;
    pm_manifest_entry *v1, *v2;
    tentry *s1 = make_entries(&part, "keep", 50, &v1), *s2 = make_entries(&part, "gone", 50, &v2);
    CHECK_EQ_INT(tu_commit(t, v1, 50, &o, &id, &e), PAIMON_OK);   /* copied */
    CHECK_EQ_INT(tu_commit(t, v2, 50, &o, &id, &e), PAIMON_OK);   /* one entry cancelled */
    pm_manifest_entry del = v2[7];
    del.kind = PM_FILE_DELETE;
    CHECK_EQ_INT(tu_commit(t, &del, 1, &o, &id, &e), PAIMON_OK);   /* cancelled too */
    o.merge_min_count = 2;
    int64_t c0, d0, c1, d1;
    pm_manifest_entry *v3;
    tentry *s3 = make_entries(&part, "next", 1, &v3);
    pm_merge_copy_counts(&c0, &d0);
    int rc = tu_commit(t, v3, 1, &o, &id, &e);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    CHECK_EQ_INT(rc, PAIMON_OK);
    pm_merge_copy_counts(&c1, &d1);
    free_entries(s3, v3, 1);
    CHECK_EQ_INT(c1 - c0, 1);
    CHECK_EQ_INT(d1 - d0, 4 + 2);   /* the fixture's 4 Java manifests, "gone" and the DELETE */
    pm_buf names = {0}, digest = {0};
    CHECK_EQ_INT(base_digest(t, id, &digest, &names), 0);
    CHECK(names.data && !strchr((char *)names.data, '\n')[1]);   /* one merged manifest */
    CHECK(digest.data && !strstr((char *)digest.data, "E 0402"));   /* no DELETE (version 2, kind 1) left */
    pm_buf live = {0};
    pm_snapshot *s = tu_read_snap(t, id);
    pm_scan *sc;
    int n = 0, found_deleted = 0;
    if (s && !pm_scan_open(t, s, NULL, &sc, &e)) {
        const pm_manifest_entry *m;
        while (pm_scan_next(sc, &m, &e) == PAIMON_OK) {
            n++;
            if (!strcmp(m->file.file_name, v2[7].file.file_name)) found_deleted = 1;
        }
        pm_scan_close(sc);
    }
    pm_snapshot_free(s);
    CHECK_EQ_INT(n, 3 + 100 - 1 + 1);
    CHECK_EQ_INT(found_deleted, 0);
    pm_buf_free(&live);
    pm_buf_free(&names);
    pm_buf_free(&digest);
    free_entries(s1, v1, 50);
    free_entries(s2, v2, 50);
    pm_buf_free(&part);
    pm_table_free(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

/* Read a whole file. */
static int slurp(const char *path, pm_buf *out) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char buf[65536];
    size_t n;
    out->len = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) pm_buf_append(out, buf, n);
    fclose(f);
    return 0;
}

/* Offset of the first block's data in an Avro file of ours (after the
 * header, the sync marker, the count and size varints), its size. */
static size_t first_block(const pm_buf *f, size_t *size) {
    pm_avro_reader *r;
    pm_err e;
    *size = 0;
    if (pm_avro_reader_open(f->data, f->len, "x", &r, &e)) return 0;
    const pm_avro_value *v;
    size_t at = 0;
    if (pm_avro_reader_next(r, &v, &e) == PAIMON_OK) {
        int64_t count;
        const uint8_t *raw;
        if (pm_avro_reader_block(r, &count, &raw, size)) at = (size_t)(raw - f->data);
    }
    pm_avro_reader_close(r);
    return at;
}

/* A manifest damaged in one of three ways: a copy never carries it into a
 * new manifest; the merge commit fails naming the file, nothing is
 * published, and the table still reads as before. */
static void damaged(const char *codec, int how, int full) {
    tu_copy c;
    /* full compaction of a table without deletes: nothing reads a manifest
     * before its copy, the copy's own checks alone must refuse it */
    paimon_table *t = open_copy(&c, full ? PKDV1 : COMPLEX);
    if (!t) { tu_copy_remove(&c, TMP_PREFIX); return; }
    pm_buf part = {0};
    CHECK_EQ_INT(some_partition(t, &part), 0);
    pm_commit_opts o;
    opts_for(t, &o, codec, 0);
    pm_err e = {0};
    int64_t id = 0;
    for (int b = 0; b < 3; b++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "d%d", b);
        pm_manifest_entry *v;
        tentry *st = make_entries(&part, prefix, 40, &v);
        CHECK_EQ_INT(tu_commit(t, v, 40, &o, &id, &e), PAIMON_OK);
        free_entries(st, v, 40);
    }
    /* the second batch's delta manifest */
    pm_snapshot *s = tu_read_snap(t, id - 1);
    pm_mfile *mf = NULL;
    size_t n = 0;
    CHECK(s && pm_read_manifest_list(t, s->delta_manifest_list, &mf, &n, &e) == 0 && n == 1);
    pm_snapshot_free(s);
    if (n != 1) { pm_mfiles_free(mf, n); pm_buf_free(&part); pm_table_free(t); tu_copy_remove(&c, TMP_PREFIX); return; }
    char path[800];
    snprintf(path, sizeof path, "%s/manifest/%s", c.table, mf[0].name);
    pm_buf f = {0};
    CHECK_EQ_INT(slurp(path, &f), 0);
    size_t size, at = first_block(&f, &size);
    CHECK(at > 0 && size > 8);
    if (how == 0) {            /* the block's first bytes (null codec: the first record's) garbled */
        for (size_t i = 0; i < 12; i++) f.data[at + i] = 0xff;
    } else if (how == 1) {     /* the sync marker after the block */
        f.data[at + size + 3] ^= 0xff;
    } else {                   /* a record more than the block holds: the count varint after the header */
        const uint8_t *hs = memmem(f.data, f.len, f.data + f.len - 16, 16);
        CHECK(hs && hs[16] == 2 * 40);   /* zigzag 40, one byte */
        if (hs) f.data[hs + 16 - f.data] += 2;
    }
    CHECK_EQ_INT(tu_write_file(path, f.data, f.len), 0);
    char ls[800];
    snprintf(ls, sizeof ls, "ls '%s/manifest'", c.table);
    char *before = tu_sh_out(ls, NULL);
    int64_t c0, d0, c1, d1;
    pm_merge_copy_counts(&c0, &d0);
    if (full) o.full_compaction_threshold = 1;   /* no read before the copy: the copy's checks alone */
    else o.merge_min_count = 2;
    pm_manifest_entry *v;
    tentry *st = make_entries(&part, "after", 1, &v);
    int64_t latest = tu_latest_id(t), nid = 0;
    int rc = tu_commit(t, v, 1, &o, &nid, &e);
    CHECK(rc == PAIMON_CORRUPT || rc == PAIMON_UNSUPPORTED);
    if (rc != PAIMON_CORRUPT && rc != PAIMON_UNSUPPORTED) fprintf(stderr, "  %s, damage %d: rc %d\n", codec, how, rc);
    pm_merge_copy_counts(&c1, &d1);
    if (full) {   /* the batch before was copied (the zstandard Java manifest too if the codec is the same),
                     then the damaged one refused */
        int same_codec = !strcmp(codec, "zstandard");
        CHECK_EQ_INT(c1 - c0, 1 + same_codec);
        CHECK_EQ_INT(d1 - d0, !same_codec);
    }
    if (getenv("PM_TEST_SHOW_MESSAGES")) fprintf(stderr, "  %s %d %d: %s\n", codec, how, full, e.msg);
    CHECK(strstr(e.msg, mf[0].name) != NULL);
    if (!strstr(e.msg, mf[0].name)) fprintf(stderr, "  message: %s\n", e.msg);
    CHECK_EQ_INT(tu_latest_id(t), latest);
    free_entries(st, v, 1);
    /* the failed attempt left no manifest behind */
    char *after = tu_sh_out(ls, NULL);
    CHECK(before && after && !strcmp(before, after));
    free(before);
    free(after);
    pm_buf_free(&f);
    pm_mfiles_free(mf, n);
    pm_buf_free(&part);
    pm_table_free(t);
    tu_copy_remove(&c, TMP_PREFIX);
}

TEST(damaged_block_is_never_copied) {
    static const char *const codecs[] = {"null", "zstandard", "snappy"};
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++)
        for (int how = 0; how < 3; how++) {
            damaged(codecs[i], how, 0);
            damaged(codecs[i], how, 1);
        }
}

/* Rolling: a copied block is followed by a size check (Java's
 * ManifestAvroWriter), so files end at block boundaries once they reach
 * the target, where the decode path checks every 1000 records. */
TEST(copied_blocks_roll_after_the_block) {
    enum { B = 6, PER = 300 };
    run a, b;
    int ra = build(&a, COMPLEX, "null", 1, B, PER, 1, 100000);
    int rb = build(&b, COMPLEX, "null", 0, B, PER, 1, 100000);
    CHECK_EQ_INT(ra, 0);
    CHECK_EQ_INT(rb, 0);
    if (!ra && !rb) {
        pm_mfile *va = NULL, *vb = NULL;
        size_t na = 0, nb = 0;
        pm_err e;
        pm_snapshot *sa = tu_read_snap(a.t, a.id), *sb = tu_read_snap(b.t, b.id);
        CHECK(sa && pm_read_manifest_list(a.t, sa->base_manifest_list, &va, &na, &e) == 0);
        CHECK(sb && pm_read_manifest_list(b.t, sb->base_manifest_list, &vb, &nb, &e) == 0);
        pm_snapshot_free(sa);
        pm_snapshot_free(sb);
        /* decode path: 1000, 1000, the rest */
        CHECK_EQ_INT(na, 2);
        if (na == 2) CHECK_EQ_INT(va[0].added, 1000);
        /* copies: whole batches of 300 (the 3 decoded Java entries first) until 100 kB */
        int64_t total = 0;
        for (size_t i = 0; i < nb; i++) {
            total += vb[i].added;
            if (i + 1 < nb) CHECK(vb[i].size >= 100000);
            CHECK_EQ_INT((vb[i].added - (i == 0 ? 3 : 0)) % PER == 0 || i + 1 == nb, 1);
        }
        CHECK_EQ_INT(total, 3 + B * PER);
        CHECK(nb >= 2);
        if (nb >= 2) CHECK(vb[0].added != 1000);
        pm_mfiles_free(va, na);
        pm_mfiles_free(vb, nb);
    }
    unbuild(&a);
    unbuild(&b);
}

/* The Avro layer: layouts, block bookkeeping, verbatim appends. */
TEST(avro_block_append_round_trip) {
    static const char *s1 =
        "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"},"
        "{\"name\":\"b\",\"type\":[\"null\",\"string\"],\"default\":null}]}";
    static const char *s2 =   /* same bytes: other names, docs, no default */
        "{\"type\":\"record\",\"name\":\"x\",\"namespace\":\"n\",\"doc\":\"d\",\"fields\":["
        "{\"name\":\"a\",\"type\":\"long\"},{\"name\":\"b\",\"type\":[\"null\",\"string\"]}]}";
    static const char *s5 =   /* same bytes: a logical type */
        "{\"type\":\"record\",\"name\":\"r\",\"fields\":["
        "{\"name\":\"a\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
        "{\"name\":\"b\",\"type\":[\"null\",\"string\"]}]}";
    static const char *s3 =   /* a field renamed */
        "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"},"
        "{\"name\":\"c\",\"type\":[\"null\",\"string\"],\"default\":null}]}";
    static const char *s4 =   /* branches swapped */
        "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"},"
        "{\"name\":\"b\",\"type\":[\"string\",\"null\"]}]}";
    pm_err e;
    pm_avro_schema *p1, *p2, *p3, *p4, *p5;
    CHECK_EQ_INT(pm_avro_schema_parse(s5, strlen(s5), &p5, &e), 0);
    CHECK_EQ_INT(pm_avro_schema_same_layout(p5, (p1 = NULL, pm_avro_schema_parse(s1, strlen(s1), &p1, &e), p1)), 1);
    pm_avro_schema_free(p1);
    pm_avro_schema_free(p5);
    CHECK_EQ_INT(pm_avro_schema_parse(s1, strlen(s1), &p1, &e), 0);
    CHECK_EQ_INT(pm_avro_schema_parse(s2, strlen(s2), &p2, &e), 0);
    CHECK_EQ_INT(pm_avro_schema_parse(s3, strlen(s3), &p3, &e), 0);
    CHECK_EQ_INT(pm_avro_schema_parse(s4, strlen(s4), &p4, &e), 0);
    CHECK_EQ_INT(pm_avro_schema_same_layout(p1, p2), 1);
    CHECK_EQ_INT(pm_avro_schema_same_layout(p1, p3), 0);
    CHECK_EQ_INT(pm_avro_schema_same_layout(p1, p4), 0);
    CHECK_EQ_INT(pm_avro_schema_same_layout(p1, NULL), 0);
    pm_avro_schema_free(p1);
    pm_avro_schema_free(p2);
    pm_avro_schema_free(p3);
    pm_avro_schema_free(p4);

    /* a source file of 3 records in 1 block */
    pm_avro_writer *w;
    CHECK_EQ_INT(pm_avro_writer_open(s1, "zstandard", 1, &w, &e), 0);
    for (int i = 0; i < 3; i++) {
        pm_avro_put_long(pm_avro_writer_datum_buf(w), 10 + i);
        pm_avro_put_long(pm_avro_writer_datum_buf(w), 0);
        pm_avro_writer_end_datum(w, &e);
    }
    pm_buf src = {0};
    CHECK_EQ_INT(pm_avro_writer_finish(w, &src, &e), 0);
    pm_avro_reader *r;
    CHECK_EQ_INT(pm_avro_reader_open(src.data, src.len, "src", &r, &e), 0);
    int64_t count;
    const uint8_t *raw;
    size_t len;
    CHECK_EQ_INT(pm_avro_reader_block(r, &count, &raw, &len), 0);   /* before the first record */
    const pm_avro_value *v;
    CHECK_EQ_INT(pm_avro_reader_next(r, &v, &e), PAIMON_OK);
    CHECK_EQ_INT(pm_avro_reader_block(r, &count, &raw, &len), 1);
    CHECK_EQ_INT(count, 3);
    CHECK(raw > src.data && raw + len + 16 == src.data + src.len);

    /* one decoded record, the copied block, one more: 5 records in order */
    CHECK_EQ_INT(pm_avro_writer_open(s2, "zstandard", 3, &w, &e), 0);
    pm_avro_put_long(pm_avro_writer_datum_buf(w), 1);
    pm_avro_put_long(pm_avro_writer_datum_buf(w), 0);
    pm_avro_writer_end_datum(w, &e);
    CHECK_EQ_INT(pm_avro_writer_append_block(w, "snappy", count, raw, len, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(pm_avro_writer_append_block(w, "zstandard", 0, raw, len, &e), PAIMON_MISUSE);
    CHECK_EQ_INT(pm_avro_writer_append_block(w, "zstandard", count, raw, len, &e), PAIMON_OK);
    pm_avro_put_long(pm_avro_writer_datum_buf(w), 99);
    pm_avro_put_long(pm_avro_writer_datum_buf(w), 0);
    pm_avro_writer_end_datum(w, &e);
    pm_buf out = {0};
    CHECK_EQ_INT(pm_avro_writer_finish(w, &out, &e), 0);
    pm_avro_reader_close(r);
    CHECK_EQ_INT(pm_avro_reader_open(out.data, out.len, "out", &r, &e), 0);
    int64_t want[] = {1, 10, 11, 12, 99};
    uint64_t blocks[] = {1, 2, 2, 2, 3};
    int i = 0, rc;
    while ((rc = pm_avro_reader_next(r, &v, &e)) == PAIMON_OK && i < 5) {
        CHECK_EQ_INT(v->u.list.items[0].u.l, want[i]);
        CHECK_EQ_INT(pm_avro_reader_block(r, &count, &raw, &len), blocks[i]);
        i++;
    }
    CHECK_EQ_INT(rc, PAIMON_DONE);
    CHECK_EQ_INT(i, 5);
    pm_avro_reader_close(r);
    char path[200];
    snprintf(path, sizeof path, "%s/pm_test_merge_copy_blocks.avro", tu_tmp_base());
    CHECK_EQ_INT(tu_write_file(path, out.data, out.len), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import sys,avro.datafile,avro.io\n"
             "print([x[\"a\"] for x in avro.datafile.DataFileReader(open(sys.argv[1],\"rb\"),avro.io.DatumReader())])' '%s'",
             path);
    char *py = tu_sh_out(cmd, NULL);
    CHECK(py && !strcmp(py, "[1, 10, 11, 12, 99]\n"));
    free(py);
    unlink(path);
    pm_buf_free(&src);
    pm_buf_free(&out);
}

/* A table partitioned by STRING (short, long and null values), INT (a
 * batch all null), DOUBLE and DATE; `batches` commits of 30 entries over
 * many partitions, then a full compaction, decode-only or not. */
static int typed_history(const char *dir, int decode_only, int64_t *id, int64_t *decode_free, paimon_table **out) {
    static const paimon_column cols[] = {{"s", "STRING", NULL}, {"i", "INT", NULL}, {"d", "DOUBLE", NULL},
                                         {"dt", "DATE", NULL}, {"v", "INT", NULL}};
    static const char *const keys[] = {"s", "i", "d", "dt"};
    paimon_table_spec spec = {cols, 5, keys, 4, NULL, 0, NULL, 0, NULL};
    char *msg = NULL;
    paimon_table *t = NULL;
    if (paimon_table_create(dir, &spec, &t, &msg)) { fprintf(stderr, "  create: %s\n", msg); free(msg); return -1; }
    pm_commit_opts o;
    opts_for(t, &o, "zstandard", decode_only);
    pm_err e = {0};
    int rc = 0;
    static const char *const words[] = {"a", "zz", "a-partition-value-longer-than-seven", "m", ""};
    for (int b = 0; b < 4 && !rc; b++) {
        enum { N = 30 };
        tentry st[N];
        pm_manifest_entry v[N];
        for (int k = 0; k < N; k++) {
            pm_datum p[4];
            memset(p, 0, sizeof p);
            const char *w = words[(k + b) % 5];
            p[0].is_null = k % 7 == 3;
            p[0].v.bin.ptr = (const uint8_t *)w;
            p[0].v.bin.len = strlen(w);
            p[1].is_null = b == 2 || k % 5 == 0;
            p[1].v.i = (k * 13 + b) % 11 - 5;
            p[2].v.d = k * 0.5 - b * 3;
            p[3].is_null = k % 4 == 1;
            p[3].v.i = 19000 + (k * 7 + b) % 50;
            pm_buf part = {0};
            char name[64];
            snprintf(name, sizeof name, "data-t%d-%03d.parquet", b, k);
            pm_binrow_encode(t->part_types, 4, p, &part, &e);
            tentry_init_at(&st[k], part.data, part.len, 0, name, 1 + k % 3, FIXED_TIME);
            v[k] = st[k].m;
            pm_buf_free(&part);
        }
        rc = tu_commit(t, v, N, &o, id, &e);
        for (int k = 0; k < N; k++) tentry_free(&st[k]);
    }
    o.full_compaction_threshold = 1;
    tentry one;
    pm_datum p[4];
    memset(p, 0, sizeof p);
    p[0].is_null = p[1].is_null = p[2].is_null = p[3].is_null = 1;
    pm_buf part = {0};
    pm_binrow_encode(t->part_types, 4, p, &part, &e);
    tentry_init_at(&one, part.data, part.len, 0, "data-last.parquet", 1, FIXED_TIME);
    pm_buf_free(&part);
    int64_t f0, f1;
    pm_merge_decode_free_count(&f0);
    if (!rc) rc = tu_commit(t, &one.m, 1, &o, id, &e);
    pm_merge_decode_free_count(&f1);
    tentry_free(&one);
    if (rc) fprintf(stderr, "  commit: %s\n", e.msg);
    *decode_free = f1 - f0;
    *out = t;
    return rc;
}

/* The decode-free merge's ManifestFileMeta (counts, schema id, buckets,
 * levels, row ids, null counts, partition stats bytes) and entries equal
 * the decode path's for typed partitions with strings and nulls; no
 * record was decoded for the copied manifests. */
TEST(decode_free_stats_match_decode_path) {
    char da[300], db[300];
    snprintf(da, sizeof da, "%s/pm_test_merge_typed_a.%d", tu_tmp_base(), (int)getpid());
    snprintf(db, sizeof db, "%s/pm_test_merge_typed_b.%d", tu_tmp_base(), (int)getpid());
    paimon_table *ta = NULL, *tb = NULL;
    int64_t ida = 0, idb = 0, fa = -1, fb = -1;
    CHECK_EQ_INT(typed_history(da, 1, &ida, &fa, &ta), 0);
    CHECK_EQ_INT(typed_history(db, 0, &idb, &fb, &tb), 0);
    CHECK_EQ_INT(fa, 0);
    CHECK_EQ_INT(fb, 4);
    if (ta && tb) {
        pm_buf xa = {0}, xb = {0}, na = {0}, nb = {0};
        CHECK_EQ_INT(base_digest(ta, ida, &xa, &na), 0);
        CHECK_EQ_INT(base_digest(tb, idb, &xb, &nb), 0);
        CHECK(xa.len > 0 && xa.len == xb.len && !memcmp(xa.data, xb.data, xa.len));
        if (xa.len != xb.len || memcmp(xa.data, xb.data, xa.len))
            fprintf(stderr, "  decode path:\n%.2000s\n  decode-free:\n%.2000s\n", (char *)xa.data, (char *)xb.data);
        CHECK_EQ_INT(py_same_lists(da, &na, db, &nb), 0);
        pm_buf_free(&xa);
        pm_buf_free(&xb);
        pm_buf_free(&na);
        pm_buf_free(&nb);
    }
    paimon_table_close(ta);
    paimon_table_close(tb);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", da, db);
    tu_sh(cmd);
}

int main(void) {
    RUN(avro_block_append_round_trip);
    RUN(minor_merge_copies_our_manifests);
    RUN(full_compaction_copies_our_manifests);
    RUN(java_manifests_copied_or_decoded);
    RUN(cancelled_entries_fall_back_to_decoding);
    RUN(damaged_block_is_never_copied);
    RUN(copied_blocks_roll_after_the_block);
    RUN(decode_free_stats_match_decode_path);
    return TEST_SUMMARY();
}
