/* The rows of a snapshot as Java Paimon's batch read returns them: see
 * pm_read.h for the rules (AbstractBatchTableScan, MergeTreeSplitGenerator,
 * the raw and merge split reads, DeduplicateMergeFunction,
 * FirstRowMergeFunction, DropDeleteReader, DeletionVectorsIndexFile). */
#include "pm_read.h"
#include "pm_datafile.h"
#include "pm_manifest.h"
#include "pm_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#define DV_MAGIC 1581511376u
#define DV_MAGIC64 1681511377u

typedef struct rfile {
    uint8_t *part;
    size_t part_len;
    int32_t bucket, level;
    int64_t rows;
    int has_drc;
    int64_t drc;
    char *full, *rel;
    int64_t schema_id;             /* the schema the file was written under */
    size_t order;
    long dv;                       /* index into r->dvs, -1: none */
} rfile;

typedef struct rdv {
    char *path, *display;          /* the index file */
    int64_t offset, length;
} rdv;

struct pm_read {
    paimon_table *t;
    const pm_schema *schema;       /* t's when opened: rows come in its columns (an alter keeps it allocated) */
    int pk, first_row, ignore_delete, dv_on;
    rfile *files;
    size_t n_files;
    rdv *dvs;
    size_t n_dvs;
    /* key-value columns: _KEY_<trimmed primary key>..., _SEQUENCE_NUMBER, _VALUE_KIND */
    size_t n_key;
    pm_data_field *kfields;
    pm_type **ktypes;
    pm_datum *kvals;
    /* iteration: group [g0, g1) of files of one (partition, bucket) */
    size_t g0, g1, cur;
    int mode;                      /* 0 between groups, 1 every row, 2 the merge's winners */
    pm_datafile_reader *rd;
    int64_t pos;
    uint8_t *del;                  /* deletion-vector bits of the open file */
    uint8_t **keep;                /* mode 2: winner bits per file of the group */
    char *idx_path;                /* the index file in idx */
    pm_buf idx, key;
};

static pm_type seq_type = {.root = PM_T_BIGINT};
static pm_type kind_type = {.root = PM_T_TINYINT};

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
static unsigned le16(const uint8_t *p) { return (unsigned)p[1] << 8 | p[0]; }

static int is_true(const char *v) { return v && !strcasecmp(v, "true"); }

/* ---- deletion vectors --------------------------------------------------------------------- */

typedef struct dvbits { uint8_t *bits; int64_t n; const char *display; } dvbits;

static int dv_set(dvbits *b, uint32_t v, pm_err *e) {
    if ((int64_t)v >= b->n)
        return pm_fail(e, PAIMON_CORRUPT, "%s: the deletion vector deletes row %u of a data file of %lld rows",
                       b->display, v, (long long)b->n);
    b->bits[v >> 3] |= (uint8_t)(1u << (v & 7));
    return PAIMON_OK;
}

/* portable-format 32-bit RoaringBitmap (the format RoaringBitmap.serialize writes) */
static int roaring(const uint8_t *p, size_t n, dvbits *b, pm_err *e) {
#define NEED(k) do { if ((k) > n) goto trunc; } while (0)
    NEED(4);
    uint32_t cookie = le32(p);
    size_t nc, at;
    const uint8_t *runs = NULL;
    int offsets;
    if ((cookie & 0xFFFF) == 12347) {
        nc = (cookie >> 16) + 1;
        NEED(4 + (nc + 7) / 8);
        runs = p + 4;
        at = 4 + (nc + 7) / 8;
        offsets = nc >= 4;
    } else if (cookie == 12346) {
        NEED(8);
        nc = le32(p + 4);
        at = 8;
        offsets = 1;
    } else {
        return pm_fail(e, PAIMON_CORRUPT, "%s: not a RoaringBitmap (cookie %u)", b->display, cookie);
    }
    if (nc > 65536) return pm_fail(e, PAIMON_CORRUPT, "%s: RoaringBitmap of %zu containers", b->display, nc);
    NEED(at + 4 * nc);
    const uint8_t *heads = p + at;
    at += 4 * nc;
    if (offsets) { NEED(at + 4 * nc); at += 4 * nc; }
    for (size_t i = 0; i < nc; i++) {
        uint32_t base = (uint32_t)le16(heads + 4 * i) << 16;
        size_t card = (size_t)le16(heads + 4 * i + 2) + 1;
        int rc;
        if (runs && (runs[i / 8] >> (i % 8)) & 1) {
            NEED(at + 2);
            size_t nr = le16(p + at);
            at += 2;
            NEED(at + 4 * nr);
            for (size_t k = 0; k < nr; k++, at += 4) {
                unsigned start = le16(p + at), len = le16(p + at + 2);
                if (start + len > 0xFFFF)
                    return pm_fail(e, PAIMON_CORRUPT, "%s: RoaringBitmap run past its container", b->display);
                for (unsigned v = start; v <= start + len; v++)
                    if ((rc = dv_set(b, base | v, e))) return rc;
            }
        } else if (card > 4096) {
            NEED(at + 8192);
            for (size_t j = 0; j < 8192; j++) {
                uint8_t x = p[at + j];
                for (unsigned k = 0; x && k < 8; k++, x >>= 1)
                    if ((x & 1) && (rc = dv_set(b, base | (uint32_t)(j * 8 + k), e))) return rc;
            }
            at += 8192;
        } else {
            NEED(at + 2 * card);
            for (size_t k = 0; k < card; k++)
                if ((rc = dv_set(b, base | le16(p + at + 2 * k), e))) return rc;
            at += 2 * card;
        }
    }
    return PAIMON_OK;
trunc:
    return pm_fail(e, PAIMON_CORRUPT, "%s: truncated RoaringBitmap", b->display);
#undef NEED
}

int pm_dv_decode(const uint8_t *data, size_t len, int64_t length, uint8_t *bits, int64_t n_rows,
                 const char *display, pm_err *e) {
    if (len < 8) return pm_fail(e, PAIMON_CORRUPT, "%s: deletion vector past the end of the file", display);
    int64_t size = (int32_t)be32(data);
    if (size != length)
        return pm_fail(e, PAIMON_CORRUPT, "%s: deletion vector of %lld bytes where the index manifest says %lld",
                       display, (long long)size, (long long)length);
    if (size < 4 || (uint64_t)size + 8 > len)
        return pm_fail(e, PAIMON_CORRUPT, "%s: deletion vector past the end of the file", display);
    uint32_t magic = be32(data + 4);
    if (magic == DV_MAGIC64 || le32(data + 4) == DV_MAGIC64)
        return pm_fail(e, PAIMON_UNSUPPORTED, "%s: a 64-bit deletion vector (deletion-vectors.bitmap64): "
                       "paimon-lua reads 32-bit ones only", display);
    if (magic != DV_MAGIC)
        return pm_fail(e, PAIMON_CORRUPT, "%s: deletion vector magic %u, expected %u", display, magic, DV_MAGIC);
    uint32_t crc = (uint32_t)crc32(0L, data + 4, (uInt)size);
    if (crc != be32(data + 4 + size))
        return pm_fail(e, PAIMON_CORRUPT, "%s: deletion vector checksum mismatch", display);
    dvbits b = {bits, n_rows, display};
    return roaring(data + 8, (size_t)size - 4, &b, e);
}

/* ---- opening ------------------------------------------------------------------------------ */

static void free_group(pm_read *r) {
    pm_datafile_reader_close(r->rd);
    r->rd = NULL;
    free(r->del);
    r->del = NULL;
    if (r->keep)
        for (size_t i = 0; i < r->g1 - r->g0; i++) free(r->keep[i]);
    free(r->keep);
    r->keep = NULL;
}

void pm_read_close(pm_read *r) {
    if (!r) return;
    free_group(r);
    for (size_t i = 0; i < r->n_files; i++) {
        free(r->files[i].part);
        free(r->files[i].full);
        free(r->files[i].rel);
    }
    free(r->files);
    for (size_t i = 0; i < r->n_dvs; i++) { free(r->dvs[i].path); free(r->dvs[i].display); }
    free(r->dvs);
    if (r->kfields)
        for (size_t i = 0; i < r->n_key; i++) free(r->kfields[i].name);
    free(r->kfields);
    free(r->ktypes);
    free(r->kvals);
    free(r->idx_path);
    pm_buf_free(&r->idx);
    pm_buf_free(&r->key);
    free(r);
}

static int cmp_files(const void *a, const void *b) {
    const rfile *x = a, *y = b;
    if (x->part_len != y->part_len) return x->part_len < y->part_len ? -1 : 1;
    int c = x->part_len ? memcmp(x->part, y->part, x->part_len) : 0;
    if (c) return c;
    if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* partition bytes + bucket + a file name: the key of a deletion vector */
static int dv_key(pm_buf *k, pm_bytes part, int32_t bucket, const char *name) {
    k->len = 0;
    uint8_t b[4] = {(uint8_t)(bucket >> 24), (uint8_t)(bucket >> 16), (uint8_t)(bucket >> 8), (uint8_t)bucket};
    uint32_t pl = (uint32_t)part.len;
    return pm_buf_append(k, &pl, sizeof pl) || pm_buf_append(k, part.ptr, part.len) || pm_buf_append(k, b, 4) ||
           pm_buf_append(k, name, strlen(name));
}

static int is_dv(const pm_index_entry *x) { return x->index_type && !strcmp(x->index_type, "DELETION_VECTORS"); }

/* The DELETION_VECTORS ranges of the snapshot's index manifest, looked up
 * for every file: files[i].dv. */
static int load_dv_index(pm_read *r, const pm_snapshot *s, pm_err *e) {
    paimon_table *t = r->t;
    pm_manifest_reader *mr = NULL;
    pm_set *gone = pm_set_new(), *ranges = pm_set_new();
    pm_buf k = {0};
    size_t cap = 0;
    int rc = (!gone || !ranges) ? pm_nomem(e) : pm_table_open_manifest(t, s->index_manifest, PM_INDEX_MANIFEST, &mr, e);
    const pm_index_entry *x;
    /* deleted index files first (an index manifest holds ADDs; be exact if it does not) */
    while (!rc && (rc = pm_manifest_next_index(mr, &x, e)) == PAIMON_OK) {
        if (x->kind != PM_FILE_DELETE || !is_dv(x)) continue;
        if (dv_key(&k, x->partition, x->bucket, x->file_name) || pm_set_add(gone, k.data, k.len) < 0) rc = pm_nomem(e);
    }
    if (rc == PAIMON_DONE) rc = PAIMON_OK;
    pm_manifest_close(mr);
    mr = NULL;
    if (!rc) rc = pm_table_open_manifest(t, s->index_manifest, PM_INDEX_MANIFEST, &mr, e);
    while (!rc && (rc = pm_manifest_next_index(mr, &x, e)) == PAIMON_OK) {
        if (x->kind != PM_FILE_ADD || !is_dv(x)) continue;
        if (dv_key(&k, x->partition, x->bucket, x->file_name)) { rc = pm_nomem(e); break; }
        if (pm_set_contains(gone, k.data, k.len)) continue;
        pm_buf path = {0};
        if ((rc = pm_index_file_path(t, x, &path, e))) { pm_buf_free(&path); break; }
        for (size_t i = 0; !rc && i < x->n_dv_ranges; i++) {
            const pm_dv_range *dr = &x->dv_ranges[i];
            int added = 0;
            long o = -1;
            if (dv_key(&k, x->partition, x->bucket, dr->data_file) ||
                (o = pm_set_add_ordinal(ranges, k.data, k.len, &added)) < 0) { rc = pm_nomem(e); break; }
            if (!added)
                rc = pm_fail(e, PAIMON_CORRUPT, "two deletion vectors for data file %s", dr->data_file);
            if (rc) break;
            if ((size_t)o >= cap) {
                size_t nc = cap ? cap * 2 : 16;
                rdv *nv = realloc(r->dvs, nc * sizeof *nv);
                if (!nv) { rc = pm_nomem(e); break; }
                r->dvs = nv;
                cap = nc;
            }
            rdv *d = &r->dvs[o];
            d->path = pm_strdup((const char *)path.data);
            d->display = pm_strdup(x->file_name);
            d->offset = dr->offset;
            d->length = dr->length;
            r->n_dvs = (size_t)o + 1;
            if (!d->path || !d->display) rc = pm_nomem(e);
        }
        pm_buf_free(&path);
    }
    if (rc == PAIMON_DONE) rc = PAIMON_OK;
    if (rc) pm_err_prefix(e, "%s", s->index_manifest);
    pm_manifest_close(mr);
    for (size_t i = 0; !rc && i < r->n_files; i++) {
        rfile *f = &r->files[i];
        const char *name = strrchr(f->rel, '/') ? strrchr(f->rel, '/') + 1 : f->rel;
        pm_bytes pb = {f->part, f->part_len};
        if (dv_key(&k, pb, f->bucket, name)) { rc = pm_nomem(e); break; }
        f->dv = pm_set_ordinal(ranges, k.data, k.len);
    }
    pm_buf_free(&k);
    pm_set_free(gone);
    pm_set_free(ranges);
    return rc;
}

static int key_columns(pm_read *r, pm_err *e) {
    const pm_schema *s = r->schema;
    size_t n = 0;
    r->kfields = calloc(s->n_primary_keys + 2, sizeof *r->kfields);
    r->ktypes = calloc(s->n_primary_keys + 2, sizeof *r->ktypes);
    r->kvals = calloc(s->n_primary_keys + 2, sizeof *r->kvals);
    if (!r->kfields || !r->ktypes || !r->kvals) return pm_nomem(e);
    for (size_t i = 0; i < s->n_primary_keys; i++) {
        const char *k = s->primary_keys[i];
        int is_part = 0;
        for (size_t j = 0; j < s->n_partition_keys; j++) is_part |= !strcmp(k, s->partition_keys[j]);
        if (is_part) continue;          /* the trimmed primary key, as the files hold it */
        const pm_data_field *f = pm_schema_field(s, k);
        if (!f) return pm_fail(e, PAIMON_CORRUPT, "%s: primary key '%s' is not a column", r->t->root, k);
        pm_type_root root = f->type->root;
        if (root == PM_T_ARRAY || root == PM_T_MAP || root == PM_T_MULTISET || root == PM_T_ROW ||
            root == PM_T_VARIANT || root == PM_T_VECTOR || root == PM_T_BLOB)
            return pm_fail(e, PAIMON_UNSUPPORTED, "%s: primary key '%s' of type %s: paimon-lua merges atomic keys only",
                           r->t->root, k, pm_type_root_name(root));
        size_t len = strlen(k) + 6;
        char *name = malloc(len);
        if (!name) return pm_nomem(e);
        snprintf(name, len, "_KEY_%s", k);
        r->kfields[n].name = name;
        r->kfields[n].id = f->id;       /* to find the key under an older name (renamed) */
        r->kfields[n].type = f->type;
        r->ktypes[n] = f->type;
        r->n_key = ++n;                 /* names [0, n_key) are freed by pm_read_close */
    }
    static const char *const sys[] = {"_SEQUENCE_NUMBER", "_VALUE_KIND"};
    for (int i = 0; i < 2; i++) {
        if (!(r->kfields[n].name = pm_strdup(sys[i]))) return pm_nomem(e);
        r->kfields[n].type = i ? &kind_type : &seq_type;
        r->n_key = ++n;
    }
    return PAIMON_OK;
}

int pm_read_open(paimon_table *t, const pm_snapshot *s, const pm_partition_filter *f, pm_read **out,
                 pm_err *e) {
    *out = NULL;
    const pm_schema *sc = t->schema;
    pm_read *r = calloc(1, sizeof *r);
    if (!r) return pm_nomem(e);
    r->t = t;
    r->schema = sc;
    r->pk = sc->n_primary_keys > 0;
    int rc = PAIMON_OK;
    const char *engine = pm_schema_option(sc, "merge-engine");
    if (r->pk && engine && strcasecmp(engine, "deduplicate") && strcasecmp(engine, "first-row")) {
        rc = pm_fail(e, PAIMON_UNSUPPORTED,
                     "%s: primary-key table with merge-engine=%s: paimon-lua reads merge-engine deduplicate "
                     "and first-row only (no unmerged rows are returned)", t->root, engine);
        goto fail;
    }
    const char *seqf = pm_schema_option(sc, "sequence.field");
    if (r->pk && seqf && *seqf) {
        rc = pm_fail(e, PAIMON_UNSUPPORTED,
                     "%s: primary-key table with sequence.field=%s: paimon-lua merges by _SEQUENCE_NUMBER only",
                     t->root, seqf);
        goto fail;
    }
    r->first_row = engine && !strcasecmp(engine, "first-row");
    static const char *const ignore_keys[] = {"ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete",
                                              "partial-update.ignore-delete"};
    for (size_t i = 0; i < sizeof ignore_keys / sizeof *ignore_keys; i++)
        r->ignore_delete |= is_true(pm_schema_option(sc, ignore_keys[i]));
    int dv_on = r->dv_on = is_true(pm_schema_option_or_default(sc, "deletion-vectors.enabled"));
    int skip0 = r->pk && (dv_on ? !is_true(pm_schema_option(sc, "deletion-vectors.merge-on-read")) : r->first_row);
    if (r->pk && (rc = key_columns(r, e))) goto fail;

    pm_scan *scan = NULL;
    if ((rc = pm_scan_open(t, s, f, &scan, e))) goto fail;
    size_t cap = 0;
    const pm_manifest_entry *m;
    pm_buf b = {0};
    while ((rc = pm_scan_next(scan, &m, e)) == PAIMON_OK) {
        if (r->pk && m->bucket == -2) continue;          /* postpone bucket: not visible (onlyReadRealBuckets) */
        if (skip0 && m->file.level == 0) continue;
        if (r->n_files == cap) {
            size_t nc = cap ? cap * 2 : 64;
            rfile *nv = realloc(r->files, nc * sizeof *nv);
            if (!nv) { rc = pm_nomem(e); break; }
            r->files = nv;
            cap = nc;
        }
        rfile *x = &r->files[r->n_files];
        memset(x, 0, sizeof *x);
        r->n_files++;
        x->dv = -1;
        x->order = r->n_files;
        x->bucket = m->bucket;
        x->level = m->file.level;
        x->schema_id = m->file.schema_id;
        x->rows = m->file.row_count;
        x->has_drc = m->file.delete_row_count.has;
        x->drc = m->file.delete_row_count.v;
        x->part_len = m->partition.len;
        x->part = malloc(m->partition.len ? m->partition.len : 1);
        if (!x->part) { rc = pm_nomem(e); break; }
        if (m->partition.len) memcpy(x->part, m->partition.ptr, m->partition.len);
        b.len = 0;
        if ((rc = pm_table_file_path(t, m, &b, e))) break;
        x->rel = pm_strdup((const char *)b.data);
        b.len = 0;
        if ((rc = pm_data_file_full_path(t, m, &b, e))) break;
        x->full = pm_strdup((const char *)b.data);
        if (!x->rel || !x->full) { rc = pm_nomem(e); break; }
        if ((rc = pm_table_reachable(t, x->full, e))) break;
    }
    pm_buf_free(&b);
    pm_scan_close(scan);
    if (rc != PAIMON_DONE) goto fail;
    rc = PAIMON_OK;
    if (r->n_files > 1) qsort(r->files, r->n_files, sizeof *r->files, cmp_files);
    if (dv_on && s->index_manifest && (rc = load_dv_index(r, s, e))) goto fail;
    *out = r;
    return PAIMON_OK;
fail:
    pm_read_close(r);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* the deletion-vector bits of file i (NULL: none) */
static int load_del(pm_read *r, size_t i, uint8_t **out, pm_err *e) {
    *out = NULL;
    rfile *f = &r->files[i];
    if (f->dv < 0) return PAIMON_OK;
    rdv *d = &r->dvs[f->dv];
    int rc;
    if (!r->idx_path || strcmp(r->idx_path, d->path)) {
        free(r->idx_path);
        r->idx_path = NULL;
        r->idx.len = 0;
        if ((rc = pm_io_read_all(r->t->io, d->path, &r->idx, e))) return rc;
        if (!(r->idx_path = pm_strdup(d->path))) return pm_nomem(e);
    }
    if (d->offset < 0 || d->length < 0 || (uint64_t)d->offset >= r->idx.len)
        return pm_fail(e, PAIMON_CORRUPT, "index/%s: deletion vector of %s at offset %lld past the end (%zu bytes)",
                       d->display, f->rel, (long long)d->offset, r->idx.len);
    uint8_t *bits = calloc((size_t)(f->rows > 0 ? (f->rows + 7) / 8 : 1), 1);
    if (!bits) return pm_nomem(e);
    pm_buf disp = {0};
    if (pm_buf_printf(&disp, "index/%s (deletion vector of %s)", d->display, f->rel)) {
        free(bits);
        pm_buf_free(&disp);
        return pm_nomem(e);
    }
    rc = pm_dv_decode(r->idx.data + d->offset, r->idx.len - (size_t)d->offset, d->length, bits, f->rows,
                      (const char *)disp.data, e);
    pm_buf_free(&disp);
    if (rc) { free(bits); return rc; }
    *out = bits;
    return PAIMON_OK;
}

static int bit(const uint8_t *b, int64_t p) { return (b[p >> 3] >> (p & 7)) & 1; }

static int past_rows(const rfile *f, pm_err *e) {
    return pm_fail(e, PAIMON_CORRUPT, "%s: more rows than the manifest's _ROW_COUNT %lld", f->rel, (long long)f->rows);
}

/* Read the group's files once: the winning row of every key; then
 * r->keep marks the winners that are adds. */
/* The key-value columns of file f: _KEY_<name> by the name the primary key had
 * in the schema f was written under (a primary key may have been renamed since). */
static int open_keys(pm_read *r, const rfile *f, pm_datafile_reader **rd, pm_err *e) {
    if (f->schema_id == r->schema->id)
        return pm_datafile_reader_open_path(r->t->io, f->full, f->rel, r->kfields, r->n_key, rd, e);
    const pm_schema *fs;
    int rc = pm_table_file_schema(r->t, f->schema_id, &fs, e);
    if (rc) { pm_err_prefix(e, "data file %s", f->rel); return rc; }
    size_t nk = r->n_key - 2;
    char **names = calloc(r->n_key, sizeof *names);
    if (!names) return pm_nomem(e);
    for (size_t j = 0; j < nk && !rc; j++) {
        const pm_data_field *old = NULL;
        for (size_t k = 0; k < fs->n_fields && !old; k++)
            if (fs->fields[k].id == r->kfields[j].id) old = &fs->fields[k];
        if (!old) {
            rc = pm_fail(e, PAIMON_CORRUPT, "%s: schema-%lld has no field %d (primary key %s)", f->rel,
                         (long long)fs->id, (int)r->kfields[j].id, r->kfields[j].name + 5);
            break;
        }
        size_t len = strlen(old->name) + 6;
        if (!(names[j] = malloc(len))) { rc = pm_nomem(e); break; }
        snprintf(names[j], len, "_KEY_%s", old->name);
    }
    for (size_t j = nk; j < r->n_key; j++) names[j] = r->kfields[j].name;    /* the system columns */
    if (!rc) rc = pm_datafile_reader_open_names(r->t->io, f->full, f->rel, r->kfields, (const char *const *)names,
                                                r->n_key, rd, e);
    for (size_t j = 0; j < nk; j++) free(names[j]);
    free(names);
    return rc;
}

static int merge_group(pm_read *r, pm_err *e) {
    size_t nf = r->g1 - r->g0, nk = r->n_key - 2, cap = 0;
    pm_set *keys = pm_set_new();
    int64_t *seq = NULL, *pos = NULL;
    uint32_t *file = NULL;
    uint8_t *add = NULL, *del = NULL;
    pm_datafile_reader *rd = NULL;
    int rc = keys ? PAIMON_OK : pm_nomem(e);
    for (size_t fi = 0; !rc && fi < nf; fi++) {
        rfile *f = &r->files[r->g0 + fi];
        if ((rc = open_keys(r, f, &rd, e))) break;
        for (size_t j = 0; j < r->n_key; j++)
            if (!pm_datafile_reader_has(rd, j)) {
                rc = pm_fail(e, PAIMON_CORRUPT, "%s: no column %s: not a key-value data file of a primary-key table",
                             f->rel, r->kfields[j].name);
                break;
            }
        if (rc || (rc = load_del(r, r->g0 + fi, &del, e))) break;
        for (int64_t p = 0;; p++) {
            rc = pm_datafile_reader_next(rd, r->kvals, NULL, e);
            if (rc == PAIMON_DONE) { rc = PAIMON_OK; break; }
            if (rc) break;
            if (p >= f->rows) { rc = past_rows(f, e); break; }
            if (del && bit(del, p)) continue;
            const pm_datum *sq = &r->kvals[nk], *kd = &r->kvals[nk + 1];
            if (sq->is_null || kd->is_null || kd->v.i < 0 || kd->v.i > 3) {
                rc = pm_fail(e, PAIMON_CORRUPT, "%s: row %lld: _SEQUENCE_NUMBER or _VALUE_KIND null or out of range",
                             f->rel, (long long)p);
                break;
            }
            int is_add = kd->v.i == 0 || kd->v.i == 2;      /* +I, +U; -U = 1, -D = 3 retract */
            if (!is_add) {
                if (r->ignore_delete) continue;
                if (r->first_row) {
                    rc = pm_fail(e, PAIMON_CORRUPT, "%s: row %lld is a DELETE/UPDATE_BEFORE row, which merge-engine="
                                 "first-row does not accept without ignore-delete (as Java's FirstRowMergeFunction)",
                                 f->rel, (long long)p);
                    break;
                }
            }
            r->key.len = 0;
            if ((rc = pm_binrow_encode(r->ktypes, nk, r->kvals, &r->key, e))) break;
            int added = 0;
            long o = pm_set_add_ordinal(keys, r->key.data, r->key.len, &added);
            if (o < 0) { rc = pm_nomem(e); break; }
            if ((size_t)o >= cap) {
                size_t nc = cap ? cap * 2 : 1024;
                int64_t *s2 = realloc(seq, nc * sizeof *s2);
                if (s2) seq = s2;
                int64_t *p2 = realloc(pos, nc * sizeof *p2);
                if (p2) pos = p2;
                uint32_t *f2 = realloc(file, nc * sizeof *f2);
                if (f2) file = f2;
                uint8_t *a2 = realloc(add, nc);
                if (a2) add = a2;
                if (!s2 || !p2 || !f2 || !a2) { rc = pm_nomem(e); break; }
                cap = nc;
            }
            int64_t sv = sq->v.i;
            int take;
            if (added) take = 1;
            else if (r->first_row) take = sv < seq[o];                      /* the first add */
            else take = sv > seq[o] || (sv == seq[o] && is_add >= add[o]);  /* the last: add after retract */
            if (take) { seq[o] = sv; add[o] = (uint8_t)is_add; file[o] = (uint32_t)fi; pos[o] = p; }
        }
        pm_datafile_reader_close(rd);
        rd = NULL;
        free(del);
        del = NULL;
    }
    pm_datafile_reader_close(rd);
    free(del);
    if (!rc) {
        r->keep = calloc(nf, sizeof *r->keep);
        if (!r->keep) rc = pm_nomem(e);
        for (size_t fi = 0; !rc && fi < nf; fi++) {
            int64_t rows = r->files[r->g0 + fi].rows;
            r->keep[fi] = calloc((size_t)(rows > 0 ? (rows + 7) / 8 : 1), 1);
            if (!r->keep[fi]) rc = pm_nomem(e);
        }
        size_t n = pm_set_ordinals(keys);
        for (size_t o = 0; !rc && o < n; o++)
            if (add[o]) r->keep[file[o]][pos[o] >> 3] |= (uint8_t)(1u << (pos[o] & 7));
    }
    pm_set_free(keys);
    free(seq);
    free(pos);
    free(file);
    free(add);
    return rc;
}

int pm_read_next(pm_read *r, pm_datum *vals, const pm_avro_value **raw, const char **file, pm_err *e) {
    const pm_schema *s = r->schema;
    int rc;
    for (;;) {
        if (r->mode == 0) {
            free_group(r);
            if (r->g1 >= r->n_files) return PAIMON_DONE;
            r->g0 = r->g1;
            size_t g = r->g0 + 1;
            while (g < r->n_files && r->files[g].bucket == r->files[r->g0].bucket &&
                   r->files[g].part_len == r->files[r->g0].part_len &&
                   !memcmp(r->files[g].part, r->files[r->g0].part, r->files[g].part_len))
                g++;
            r->g1 = g;
            r->cur = r->g0;
            int raw_read = 1;
            if (r->pk) {
                /* MergeTreeSplitGenerator: raw-convertible when every file is above level 0 without
                 * delete rows (a known _DELETE_ROW_COUNT of 0) and deletion vectors, first-row or one level */
                int one_level = 1;
                for (size_t i = r->g0; i < r->g1; i++) {
                    rfile *f = &r->files[i];
                    if (f->level == 0 || !f->has_drc || f->drc != 0) raw_read = 0;
                    if (f->level != r->files[r->g0].level) one_level = 0;
                }
                if (!(r->dv_on || r->first_row || one_level)) raw_read = 0;
            }
            if (raw_read) r->mode = 1;
            else {
                r->mode = 2;
                if ((rc = merge_group(r, e))) return rc;
            }
        }
        if (!r->rd) {
            if (r->cur >= r->g1) { r->mode = 0; continue; }
            rfile *f = &r->files[r->cur];
            free(r->del);
            r->del = NULL;
            if ((rc = pm_datafile_reader_open_evolved(r->t, f->schema_id, f->full, f->rel, s->fields, s->n_fields,
                                                      &r->rd, e)))
                return rc;
            if ((rc = load_del(r, r->cur, &r->del, e))) return rc;
            r->pos = 0;
        }
        rfile *f = &r->files[r->cur];
        rc = pm_datafile_reader_next(r->rd, vals, raw, e);
        if (rc == PAIMON_DONE) {
            pm_datafile_reader_close(r->rd);
            r->rd = NULL;
            r->cur++;
            continue;
        }
        if (rc) return rc;
        int64_t p = r->pos++;
        if (r->del || r->mode == 2) {
            if (p >= f->rows) return past_rows(f, e);
            if (r->del && bit(r->del, p)) continue;
            if (r->mode == 2 && !bit(r->keep[r->cur - r->g0], p)) continue;
        }
        if (file) *file = f->rel;
        return PAIMON_OK;
    }
}
