/* make_sample: generate the sample Paimon table used by `make demo`.
 *
 *   build/make_sample [WAREHOUSE]        (default: examples/sample/warehouse)
 *
 * Writes WAREHOUSE/demo.db/orders the way Java Paimon 2.0 would for a
 * partitioned, bucket-unaware append table (docs: paimon-format.md §1-§5,
 * §7.1, §9.2), using the core's own writers:
 *
 *   snapshot 1  APPEND     dt=2026-11-01 (4 rows), dt=2026-11-02 (3 rows)
 *   snapshot 2  APPEND     dt=2026-11-02 (2 rows), dt=2026-11-03 (5 rows)
 *   snapshot 3  APPEND     dt=2026-11-01 (3 rows), dt=2026-11-03 (2 rows)
 *   snapshot 4  OVERWRITE  DELETE both dt=2026-11-01 files (drop partition)
 *   snapshot 5  APPEND     dt=2026-11-02 (4 rows)
 *   tag/tag-nightly = snapshot 2, consumer/consumer-dashboard at snapshot 3
 *
 * Data files are real Avro files (zstandard) with the four table columns and
 * full value stats. File names carry random UUIDs, so every run produces a
 * different (but equivalent) table; the generator refuses to touch an
 * existing table directory.
 *
 * Build (after `make`):
 *   cc -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Isrc/include \
 *      -Isrc/core examples/make_sample.c build/libpaimon.a \
 *      $(pkg-config --libs libuv libzstd zlib snappy jansson) -lm \
 *      -o build/make_sample
 */
#include "pm_avro.h"
#include "pm_common.h"
#include "pm_manifest.h"
#include "pm_meta.h"
#include "pm_types.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define COMMIT_IDENTIFIER INT64_MAX     /* batch commits: Long.MAX_VALUE */
#define TOTAL_BUCKETS (-1)              /* table option bucket = -1 */
#define BUCKET 0                        /* unaware-bucket tables write bucket-0 */
#define MAX_ENTRIES 64
#define MAX_METAS 64

/* Avro schema of the data files (AvroSchemaConverter for the table row type). */
static const char DATA_SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"record\",\"namespace\":\"org.apache.paimon.avro.generated\","
    "\"fields\":[{\"name\":\"order_id\",\"type\":\"long\"},"
    "{\"name\":\"customer\",\"type\":[\"null\",\"string\"],\"default\":null},"
    "{\"name\":\"amount\",\"type\":[\"null\",{\"type\":\"bytes\",\"logicalType\":\"decimal\","
    "\"precision\":10,\"scale\":2}],\"default\":null},"
    "{\"name\":\"dt\",\"type\":[\"null\",\"string\"],\"default\":null}]}";

static const char *const CUSTOMERS[] = {"alice", "bob", "carol", "dave", "erin", "frank",
                                        "grace", "heidi", "ivan", "judy"};

static char table_dir[1024];
static char commit_user[37];
static pm_type *stats_types[4];    /* value stats: the four columns made nullable */
static pm_type *part_type;         /* dt STRING */
static int64_t next_order_id = 1001;

/* ---- small helpers --------------------------------------------------------- */

static void die(const char *fmt, ...) PM_PRINTF(1, 2);
static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("make_sample: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void check(int rc, const pm_err *e) {
    if (rc != PAIMON_OK) die("%s (code %d)", e->msg[0] ? e->msg : "error", rc);
}

static void *xmalloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

static void mkdirs(const char *path) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST) die("mkdir %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) die("mkdir %s: %s", tmp, strerror(errno));
}

/* Write <table>/<rel> (creating directories), refusing to replace a file. */
static void write_file(const char *rel, const void *data, size_t len) {
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/%s", table_dir, rel);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) { *slash = '\0'; mkdirs(dir); }
    FILE *f = fopen(path, "wx");
    if (!f) die("create %s: %s", path, strerror(errno));
    if ((len && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
        die("write %s: %s", path, strerror(errno));
}

/* Hint files are overwritten (plain text, no trailing newline). */
static void write_hint(const char *which, int64_t id) {
    char path[4096], text[32];
    snprintf(path, sizeof path, "%s/snapshot/%s", table_dir, which);
    int n = snprintf(text, sizeof text, "%lld", (long long)id);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(text, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0)
        die("write %s: %s", path, strerror(errno));
}

static pm_type *parse_type(const char *s) {
    pm_type *t = NULL;
    pm_err e = {0};
    check(pm_type_parse_atomic(s, &t, &e), &e);
    return t;
}

/* Java's LocalDateTime.now() stored as if UTC: local wall-clock millis. */
static int64_t local_wall_millis(int64_t epoch_ms) {
    time_t secs = (time_t)(epoch_ms / 1000);
    struct tm lt;
    localtime_r(&secs, &lt);
    return (int64_t)timegm(&lt) * 1000 + epoch_ms % 1000;
}

/* Owned copy of bytes (entries outlive the buffers they were built in). */
static pm_bytes dup_bytes(const uint8_t *p, size_t n) {
    uint8_t *c = xmalloc(n);
    memcpy(c, p, n);
    pm_bytes r = {c, n};
    return r;
}

/* Serialized empty BinaryRow (arity 0): 12 bytes. */
static pm_bytes empty_row(void) {
    pm_buf b = {0};
    pm_err e = {0};
    check(pm_binrow_encode(NULL, 0, NULL, &b, &e), &e);
    pm_bytes r = dup_bytes(b.data, b.len);
    pm_buf_free(&b);
    return r;
}

static pm_bytes partition_row(const char *dt) {
    pm_datum d;
    memset(&d, 0, sizeof d);
    d.v.bin.ptr = (const uint8_t *)dt;
    d.v.bin.len = strlen(dt);
    pm_buf b = {0};
    pm_err e = {0};
    check(pm_binrow_encode(&part_type, 1, &d, &b, &e), &e);
    pm_bytes r = dup_bytes(b.data, b.len);
    pm_buf_free(&b);
    return r;
}

/* Unscaled decimal as minimal big-endian two's complement (BigInteger.toByteArray). */
static int put_decimal(pm_buf *b, int64_t unscaled) {
    uint8_t be[8];
    for (int i = 0; i < 8; i++) be[i] = (uint8_t)((uint64_t)unscaled >> (56 - 8 * i));
    int start = 0;
    while (start < 7 && ((be[start] == 0x00 && !(be[start + 1] & 0x80)) ||
                         (be[start] == 0xff && (be[start + 1] & 0x80))))
        start++;
    return pm_avro_put_bytes(b, be + start, (size_t)(8 - start));
}

/* ---- data files -------------------------------------------------------------- */

typedef struct row {
    int64_t order_id;
    const char *customer;   /* NULL = SQL null */
    int64_t amount;         /* cents (DECIMAL(10, 2) unscaled) */
} row;

static pm_stats stats_with_counts(pm_bytes min, pm_bytes max, size_t n, const int64_t *counts) {
    pm_stats st;
    memset(&st, 0, sizeof st);
    st.min_values = min;
    st.max_values = max;
    st.has_null_counts = 1;
    st.n_null_counts = n;
    if (n) {
        st.null_counts = xmalloc(n * sizeof *st.null_counts);
        memcpy(st.null_counts, counts, n * sizeof *counts);
    }
    return st;
}

/* Write one data file with `n` generated rows into dt=<dt>/bucket-0 and
 * return its ADD entry. */
static pm_manifest_entry data_file(const char *dt, const char *writer_uuid, int seq, size_t n,
                                   int64_t commit_ms) {
    row rows[64];
    if (n > 64) die("too many rows");
    for (size_t i = 0; i < n; i++) {
        int64_t id = next_order_id++;
        rows[i].order_id = id;
        rows[i].customer = id % 7 == 3 ? NULL : CUSTOMERS[(id * 3) % 10];
        rows[i].amount = 199 + (id * 7919) % 50000;
    }

    pm_err e = {0};
    pm_avro_writer *w = NULL;
    check(pm_avro_writer_open(DATA_SCHEMA, "zstandard", 1, &w, &e), &e);
    for (size_t i = 0; i < n; i++) {
        pm_buf *b = pm_avro_writer_datum_buf(w);
        int rc = pm_avro_put_long(b, rows[i].order_id);
        if (rows[i].customer) {
            rc |= pm_avro_put_long(b, 1);
            rc |= pm_avro_put_string(b, rows[i].customer);
        } else {
            rc |= pm_avro_put_long(b, 0);
        }
        rc |= pm_avro_put_long(b, 1);
        rc |= put_decimal(b, rows[i].amount);
        rc |= pm_avro_put_long(b, 1);
        rc |= pm_avro_put_string(b, dt);
        if (rc) die("out of memory encoding a row");
        check(pm_avro_writer_end_datum(w, &e), &e);
    }
    pm_buf file = {0};
    check(pm_avro_writer_finish(w, &file, &e), &e);

    char name[128], rel[512];
    snprintf(name, sizeof name, "data-%s-%d.avro", writer_uuid, seq);
    snprintf(rel, sizeof rel, "dt=%s/bucket-%d/%s", dt, BUCKET, name);
    write_file(rel, file.data, file.len);

    /* Value stats over all columns (_VALUE_STATS_COLS null), mode truncate(16):
     * the names are short, so min/max are exact. */
    pm_datum mn[4], mx[4];
    memset(mn, 0, sizeof mn);
    memset(mx, 0, sizeof mx);
    int64_t nulls[4] = {0, 0, 0, 0};
    const char *cmin = NULL, *cmax = NULL;
    mn[0].v.i = mx[0].v.i = rows[0].order_id;
    mn[2].v.i = mx[2].v.i = rows[0].amount;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].order_id < mn[0].v.i) mn[0].v.i = rows[i].order_id;
        if (rows[i].order_id > mx[0].v.i) mx[0].v.i = rows[i].order_id;
        if (rows[i].amount < mn[2].v.i) mn[2].v.i = rows[i].amount;
        if (rows[i].amount > mx[2].v.i) mx[2].v.i = rows[i].amount;
        if (!rows[i].customer) { nulls[1]++; continue; }
        if (!cmin || strcmp(rows[i].customer, cmin) < 0) cmin = rows[i].customer;
        if (!cmax || strcmp(rows[i].customer, cmax) > 0) cmax = rows[i].customer;
    }
    mn[1].is_null = mx[1].is_null = cmin == NULL;
    if (cmin) {
        mn[1].v.bin.ptr = (const uint8_t *)cmin;
        mn[1].v.bin.len = strlen(cmin);
        mx[1].v.bin.ptr = (const uint8_t *)cmax;
        mx[1].v.bin.len = strlen(cmax);
    }
    mn[3].v.bin.ptr = mx[3].v.bin.ptr = (const uint8_t *)dt;
    mn[3].v.bin.len = mx[3].v.bin.len = strlen(dt);
    pm_buf bmin = {0}, bmax = {0};
    check(pm_binrow_encode(stats_types, 4, mn, &bmin, &e), &e);
    check(pm_binrow_encode(stats_types, 4, mx, &bmax, &e), &e);

    pm_manifest_entry m;
    memset(&m, 0, sizeof m);
    m.version = 2;
    m.kind = PM_FILE_ADD;
    m.partition = partition_row(dt);
    m.bucket = BUCKET;
    m.total_buckets = TOTAL_BUCKETS;
    pm_data_file *d = &m.file;
    d->file_name = pm_strdup(name);
    d->file_size = (int64_t)file.len;
    d->row_count = (int64_t)n;
    d->min_key = empty_row();
    d->max_key = empty_row();
    d->key_stats = stats_with_counts(empty_row(), empty_row(), 0, NULL);
    d->value_stats = stats_with_counts(dup_bytes(bmin.data, bmin.len), dup_bytes(bmax.data, bmax.len),
                                       4, nulls);
    d->min_sequence_number = 0;               /* unaware-bucket writers start at 0 */
    d->max_sequence_number = (int64_t)n - 1;
    d->schema_id = 0;
    d->level = 0;
    d->creation_time.has = 1;
    d->creation_time.v = local_wall_millis(commit_ms);
    d->delete_row_count.has = 1;
    d->delete_row_count.v = 0;
    d->file_source.has = 1;
    d->file_source.v = 0;                     /* APPEND */
    pm_buf_free(&bmin);
    pm_buf_free(&bmax);
    pm_buf_free(&file);
    return m;
}

/* ---- manifests, manifest lists, snapshots ---------------------------------- */

static pm_manifest_meta metas_base[MAX_METAS], metas_delta[MAX_METAS];
static size_t n_base, n_delta;
static pm_manifest_entry live[MAX_ENTRIES];   /* every ADD entry ever written */
static size_t n_live;
static int64_t total_records, last_snapshot_id;

/* Encode records into a manifest-family file in manifest/ and return its size. */
static int64_t write_manifest_file(const char *name, const char *schema, const pm_manifest_entry *entries,
                                   const pm_manifest_meta *metas, size_t n) {
    pm_err e = {0};
    pm_avro_writer *w = NULL;
    check(pm_avro_writer_open(schema, pm_manifest_codec_for("zstd", NULL), 1, &w, &e), &e);
    for (size_t i = 0; i < n; i++) {
        if (entries) check(pm_manifest_write_entry(w, &entries[i], &e), &e);
        else check(pm_manifest_write_meta(w, &metas[i], &e), &e);
    }
    pm_buf file = {0};
    check(pm_avro_writer_finish(w, &file, &e), &e);
    char rel[512];
    snprintf(rel, sizeof rel, "manifest/%s", name);
    write_file(rel, file.data, file.len);
    int64_t size = (int64_t)file.len;
    pm_buf_free(&file);
    return size;
}

/* One commit: base list = previous base + previous delta, one manifest with
 * the delta entries, a delta list naming it, then snapshot-<id> and LATEST. */
static void commit(const char *kind, const pm_manifest_entry *delta, const char *const *delta_dts,
                   size_t n, int64_t time_ms, pm_buf *snapshot_json_out) {
    char uuid[37], base_name[128], delta_name[128], manifest_name[128];
    pm_uuid4(uuid);   /* one FileStorePathFactory per commit: one UUID, counters from 0 */
    snprintf(base_name, sizeof base_name, "manifest-list-%s-0", uuid);
    snprintf(delta_name, sizeof delta_name, "manifest-list-%s-1", uuid);
    snprintf(manifest_name, sizeof manifest_name, "manifest-%s-0", uuid);

    /* base */
    if (n_base + n_delta > MAX_METAS) die("too many manifests");
    memcpy(metas_base + n_base, metas_delta, n_delta * sizeof *metas_delta);
    n_base += n_delta;
    int64_t base_size = write_manifest_file(base_name, PM_SCHEMA_MANIFEST_LIST, NULL, metas_base, n_base);

    /* delta manifest + its ManifestFileMeta */
    int64_t delta_records = 0;
    pm_manifest_meta m;
    memset(&m, 0, sizeof m);
    m.version = 2;
    m.file_name = pm_strdup(manifest_name);
    size_t imin = 0, imax = 0;
    for (size_t i = 0; i < n; i++) {
        if (delta[i].kind == PM_FILE_ADD) {
            m.num_added_files++;
            delta_records += delta[i].file.row_count;
        } else {
            m.num_deleted_files++;
            delta_records -= delta[i].file.row_count;
        }
        /* partition stats: min/max of the (single STRING) partition field */
        if (strcmp(delta_dts[i], delta_dts[imin]) < 0) imin = i;
        if (strcmp(delta_dts[i], delta_dts[imax]) > 0) imax = i;
    }
    m.file_size = write_manifest_file(manifest_name, PM_SCHEMA_MANIFEST_FILE, delta, NULL, n);
    int64_t zero = 0;
    m.partition_stats = stats_with_counts(delta[imin].partition, delta[imax].partition, 1, &zero);
    m.schema_id = 0;
    m.min_bucket.has = m.max_bucket.has = 1;
    m.min_bucket.v = m.max_bucket.v = BUCKET;
    m.min_level.has = m.max_level.has = 1;
    m.min_level.v = m.max_level.v = 0;
    metas_delta[0] = m;
    n_delta = 1;
    int64_t delta_size = write_manifest_file(delta_name, PM_SCHEMA_MANIFEST_LIST, NULL, metas_delta, n_delta);

    /* snapshot */
    char snap_uuid[37];
    pm_uuid4(snap_uuid);
    total_records += delta_records;
    pm_snapshot s;
    memset(&s, 0, sizeof s);
    s.version = 3;
    s.uuid = snap_uuid;
    s.id = ++last_snapshot_id;
    s.schema_id = 0;
    s.base_manifest_list = base_name;
    s.base_manifest_list_size.has = 1;
    s.base_manifest_list_size.v = base_size;
    s.delta_manifest_list = delta_name;
    s.delta_manifest_list_size.has = 1;
    s.delta_manifest_list_size.v = delta_size;
    s.commit_user = commit_user;
    s.commit_identifier = COMMIT_IDENTIFIER;
    s.commit_kind = (char *)(uintptr_t)kind;
    s.time_millis = time_ms;
    s.total_record_count.has = 1;
    s.total_record_count.v = total_records;
    s.delta_record_count.has = 1;
    s.delta_record_count.v = delta_records;
    s.next_row_id.has = 1;
    s.next_row_id.v = 0;
    pm_buf json = {0};
    if (pm_snapshot_to_json(&s, &json) != PAIMON_OK) die("snapshot to JSON failed");
    char rel[64];
    snprintf(rel, sizeof rel, "snapshot/snapshot-%lld", (long long)s.id);
    write_file(rel, json.data, json.len);
    if (s.id == 1) write_hint("EARLIEST", 1);
    write_hint("LATEST", s.id);
    printf("snapshot %lld %-9s %zu entr%s, %lld rows total\n", (long long)s.id, kind, n,
           n == 1 ? "y" : "ies", (long long)total_records);
    if (snapshot_json_out) *snapshot_json_out = json;
    else pm_buf_free(&json);
}

/* APPEND commit of one new data file per listed partition. */
static void append(const char *const *dts, const size_t *rows, size_t n, int64_t time_ms,
                   pm_buf *json_out) {
    pm_manifest_entry delta[8];
    for (size_t i = 0; i < n; i++) {
        char writer[37];
        pm_uuid4(writer);   /* one writer (UUID, counter from 0) per partition and bucket */
        delta[i] = data_file(dts[i], writer, 0, rows[i], time_ms);
        if (n_live == MAX_ENTRIES) die("too many files");
        live[n_live++] = delta[i];
    }
    commit("APPEND", delta, dts, n, time_ms, json_out);
}

/* OVERWRITE commit dropping partition dt: DELETE entries that copy the ADDs. */
static void drop_partition(const char *dt, int64_t time_ms) {
    pm_manifest_entry delta[MAX_ENTRIES];
    const char *dts[MAX_ENTRIES];
    pm_bytes part = partition_row(dt);
    size_t n = 0;
    for (size_t i = 0; i < n_live; i++) {
        if (live[i].partition.len != part.len || memcmp(live[i].partition.ptr, part.ptr, part.len) != 0)
            continue;
        delta[n] = live[i];
        delta[n].kind = PM_FILE_DELETE;
        dts[n++] = dt;
        live[i] = live[--n_live];
        i--;
    }
    free((void *)part.ptr);
    commit("OVERWRITE", delta, dts, n, time_ms, NULL);
}

static void write_schema(int64_t time_ms) {
    static const char *const names[] = {"order_id", "customer", "amount", "dt"};
    static const char *const types[] = {"BIGINT NOT NULL", "STRING", "DECIMAL(10, 2)", "STRING"};
    pm_data_field fields[4];
    memset(fields, 0, sizeof fields);
    for (int i = 0; i < 4; i++) {
        fields[i].id = i;
        fields[i].name = pm_strdup(names[i]);
        fields[i].type = parse_type(types[i]);
    }
    /* Java's HashMap iteration order for these three keys. */
    pm_kv options[3] = {{pm_strdup("bucket"), pm_strdup("-1")},
                        {pm_strdup("file.format"), pm_strdup("avro")},
                        {pm_strdup("manifest.compression"), pm_strdup("zstd")}};
    char *partition_keys[1] = {pm_strdup("dt")};
    pm_schema s;
    memset(&s, 0, sizeof s);
    s.version = 3;
    s.id = 0;
    s.n_fields = 4;
    s.fields = fields;
    s.highest_field_id = 3;
    s.n_partition_keys = 1;
    s.partition_keys = partition_keys;
    s.n_options = 3;
    s.options = options;
    s.time_millis = time_ms;
    pm_buf json = {0};
    if (pm_schema_to_json(&s, &json) != PAIMON_OK) die("schema to JSON failed");
    write_file("schema/schema-0", json.data, json.len);
    pm_buf_free(&json);
}

int main(int argc, char **argv) {
    const char *warehouse = argc > 1 ? argv[1] : "examples/sample/warehouse";
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: %s [WAREHOUSE]   (default examples/sample/warehouse)\n", argv[0]);
        return 2;
    }
    if ((size_t)snprintf(table_dir, sizeof table_dir, "%s/demo.db/orders", warehouse) >= sizeof table_dir)
        die("warehouse path too long");
    struct stat st;
    if (stat(table_dir, &st) == 0)
        die("%s already exists; remove it first to regenerate the sample", table_dir);
    mkdirs(table_dir);

    const char *const val_types[] = {"BIGINT", "STRING", "DECIMAL(10, 2)", "STRING"};
    for (int i = 0; i < 4; i++) stats_types[i] = parse_type(val_types[i]);
    part_type = parse_type("STRING");
    pm_uuid4(commit_user);

    /* Commits one minute apart, ending now. */
    int64_t t = pm_now_millis() - 6 * 60000;
    write_schema(t);

    static const char *const c1[] = {"2026-11-01", "2026-11-02"};
    static const size_t r1[] = {4, 3};
    static const char *const c2[] = {"2026-11-02", "2026-11-03"};
    static const size_t r2[] = {2, 5};
    static const char *const c3[] = {"2026-11-01", "2026-11-03"};
    static const size_t r3[] = {3, 2};
    static const char *const c5[] = {"2026-11-02"};
    static const size_t r5[] = {4};
    pm_buf snap2 = {0};

    append(c1, r1, 2, t += 60000, NULL);
    append(c2, r2, 2, t += 60000, &snap2);
    append(c3, r3, 2, t += 60000, NULL);
    drop_partition("2026-11-01", t += 60000);
    append(c5, r5, 1, t += 60000, NULL);

    /* Tag without retention: exactly the snapshot's JSON. */
    write_file("tag/tag-nightly", snap2.data, snap2.len);
    pm_buf_free(&snap2);
    static const char consumer[] = "{\n  \"nextSnapshot\" : 3\n}";
    write_file("consumer/consumer-dashboard", consumer, sizeof consumer - 1);

    printf("wrote %s\n", table_dir);
    return 0;
}
