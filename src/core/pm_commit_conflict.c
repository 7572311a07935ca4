/* Commit conflict detection (Java ConflictDetection) and the identifier
 * map it and the mergers use. */
#include "pm_commit_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- identifier map ------------------------------------------------------- */

long pm_idmap_find(const pm_idmap *m, const void *key, size_t len) {
    return m->keys ? pm_set_ordinal(m->keys, key, len) : -1;
}

static int idmap_room(pm_idmap *m, size_t ord) {
    if (ord < m->cap) return 0;
    size_t nc = m->cap ? m->cap * 2 : 64;
    while (nc <= ord) nc *= 2;
    int64_t *nv = realloc(m->val, nc * sizeof *nv);
    if (!nv) return -1;
    m->val = nv;
    int *nk = realloc(m->kind, nc * sizeof *nk);
    if (!nk) return -1;
    m->kind = nk;
    uint8_t *nl = realloc(m->live, nc);
    if (!nl) return -1;
    m->live = nl;
    m->cap = nc;
    return 0;
}

int pm_idmap_put(pm_idmap *m, const void *key, size_t len, int64_t val, int kind) {
    if (!m->keys && !(m->keys = pm_set_new())) return -1;
    long ord = pm_set_add_ordinal(m->keys, key, len, NULL);
    if (ord < 0 || idmap_room(m, (size_t)ord)) return -1;
    m->val[ord] = val;
    m->kind[ord] = kind;
    m->live[ord] = 1;
    m->n++;
    return 0;
}

void pm_idmap_del(pm_idmap *m, const void *key, size_t len, long ord) {
    pm_set_remove(m->keys, key, len);
    m->live[ord] = 0;
    m->n--;
}

size_t pm_idmap_ordinals(const pm_idmap *m) { return m->keys ? pm_set_ordinals(m->keys) : 0; }

void pm_idmap_free(pm_idmap *m) {
    pm_set_free(m->keys);
    free(m->val);
    free(m->kind);
    free(m->live);
    memset(m, 0, sizeof *m);
}

/* ---- messages ------------------------------------------------------------ */

/* "file X in partition P" into buf (NUL-terminated). */
void pm_commit_describe_file(paimon_table *t, const pm_manifest_entry *m, pm_buf *out) {
    pm_buf p = {0};
    pm_err e2;
    out->len = 0;
    if (t->n_part == 0) pm_buf_printf(&p, "(unpartitioned)");
    else if (pm_table_partition_path(t, m->partition, &p, &e2) == PAIMON_OK && p.len && p.data[p.len - 1] == '/')
        p.len--;
    pm_buf_cstr(&p);
    pm_buf_printf(out, "file %s in partition %s bucket %d", m->file.file_name,
                  p.data ? (const char *)p.data : "?", (int)m->bucket);
    pm_buf_cstr(out);
    pm_buf_free(&p);
}

/* ---- conflict detection --------------------------------------------------- */

static int conflict_at(paimon_table *t, const pm_manifest_entry *m, pm_err *e, const char *fmt_tail,
                       long long snap) {
    pm_buf d = {0};
    pm_commit_describe_file(t, m, &d);
    int rc;
    if (snap > 0)
        rc = pm_fail(e, PAIMON_CONFLICT, "commit conflict in %s: %s %s %lld", t->root,
                     d.data ? (char *)d.data : "?", fmt_tail, snap);
    else
        rc = pm_fail(e, PAIMON_CONFLICT, "commit conflict in %s: %s %s", t->root,
                     d.data ? (char *)d.data : "?", fmt_tail);
    pm_buf_free(&d);
    return rc;
}

/* Total-bucket consistency (not for OVERWRITE): within a partition every
 * entry with _TOTAL_BUCKETS > 0 agrees. 0 if fine, else the conflict. */
static int check_buckets(paimon_table *t, pm_idmap *tb, const pm_manifest_entry *m, pm_err *e) {
    if (m->total_buckets <= 0) return PAIMON_OK;
    long s = pm_idmap_find(tb, m->partition.ptr, m->partition.len);
    if (s < 0) {
        if (pm_idmap_put(tb, m->partition.ptr, m->partition.len, m->total_buckets, 0))
            return pm_fail(e, PAIMON_NOMEM, "out of memory");
        return PAIMON_OK;
    }
    if (tb->val[s] == m->total_buckets) return PAIMON_OK;
    pm_buf d = {0};
    pm_commit_describe_file(t, m, &d);
    int rc = pm_fail(e, PAIMON_CONFLICT,
                     "commit conflict in %s: total buckets of the partition of %s changed from %lld to %d "
                     "without overwrite",
                     t->root, d.data ? (char *)d.data : "?", (long long)tb->val[s], (int)m->total_buckets);
    pm_buf_free(&d);
    return rc;
}

/* ---- partition spans: which manifests can hold one of a set of partitions -- */

void pm_part_span_of_entries(paimon_table *t, const pm_manifest_entry *ents, size_t n, pm_part_span *sp) {
    memset(sp, 0, sizeof *sp);
    size_t np = t->n_part;
    if (np == 0 || np > PM_SPAN_MAX_FIELDS || n == 0) return;
    pm_datum v[PM_SPAN_MAX_FIELDS];
    pm_err ignored;
    for (size_t i = 0; i < n; i++) {
        if (pm_table_partition_decode(t, ents[i].partition, v, &ignored)) return;
        for (size_t k = 0; k < np; k++) {
            const pm_type *ty = t->part_types[k];
            if (v[k].is_null) { sp->has_null[k] = 1; continue; }
            if (!sp->has_value[k] || pm_stats_cmp_datum(ty, &v[k], &sp->min[k]) < 0) sp->min[k] = v[k];
            if (!sp->has_value[k] || pm_stats_cmp_datum(ty, &v[k], &sp->max[k]) > 0) sp->max[k] = v[k];
            sp->has_value[k] = 1;
        }
    }
    sp->usable = 1;
}

int pm_part_span_of_builder(const pm_mbuild *b, pm_part_span *sp, pm_err *e) {
    memset(sp, 0, sizeof *sp);
    size_t np = b->np;
    if (np == 0 || np > PM_SPAN_MAX_FIELDS || b->n == 0) return PAIMON_OK;
    pm_type *const *ty = b->a->t->part_types;
    int rc;
    if ((rc = pm_binrow_decode(b->pmin.data, b->pmin.len, ty, np, sp->min, e)) ||
        (rc = pm_binrow_decode(b->pmax.data, b->pmax.len, ty, np, sp->max, e)))
        return rc;
    for (size_t k = 0; k < np; k++) {
        sp->has_null[k] = b->nulls[k] > 0;
        sp->has_value[k] = !sp->min[k].is_null;
    }
    sp->usable = 1;
    return PAIMON_OK;
}

/* Field by field (Java's MultiplePartitionPredicate over the stats): a
 * null of the span needs a null in the manifest, a value of the span a
 * non-null value there whose [min, max] meets the span's. Stats that do
 * not decode, or say nothing, keep the manifest. */
int pm_part_span_may_hold(paimon_table *t, const pm_part_span *sp, const pm_manifest_meta *m) {
    if (!sp->usable) return 1;
    size_t np = t->n_part;
    const pm_stats *st = &m->partition_stats;
    pm_datum fmin[PM_SPAN_MAX_FIELDS], fmax[PM_SPAN_MAX_FIELDS];
    pm_err ignored;
    if (pm_binrow_decode(st->min_values.ptr, st->min_values.len, t->part_types, np, fmin, &ignored) ||
        pm_binrow_decode(st->max_values.ptr, st->max_values.len, t->part_types, np, fmax, &ignored))
        return 1;
    int64_t rows = m->num_added_files + m->num_deleted_files;
    for (size_t k = 0; k < np; k++) {
        const pm_type *ty = t->part_types[k];
        int known = st->has_null_counts && k < st->n_null_counts &&
                    !(st->null_count_is_null && st->null_count_is_null[k]) && rows > 0;
        int64_t nulls = known ? st->null_counts[k] : 0;
        int may_null = !known || nulls > 0, may_value = !known || nulls < rows;
        int hit = sp->has_null[k] && may_null;
        if (!hit && sp->has_value[k] && may_value)
            hit = fmin[k].is_null || fmax[k].is_null ||
                  (pm_stats_cmp_datum(ty, &fmax[k], &sp->min[k]) >= 0 && pm_stats_cmp_datum(ty, &fmin[k], &sp->max[k]) <= 0);
        if (!hit) return 0;
    }
    return 1;
}

/* Java ConflictDetection: the delta must merge on its own, base + delta
 * must merge leaving no DELETE (every deleted file live in latest, no added
 * file already live), and (unless overwriting) total buckets agree within
 * each changed partition. */
/* The scan of latest's live files over the manifests that may hold a
 * changed partition (keep[i]). */
static int scan_latest(paimon_table *t, const pm_snapshot *latest, const pm_own_meta *metas, const uint8_t *keep,
                       size_t n_metas, pm_scan **sc, pm_err *e) {
    pm_mfile *files = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < n_metas; i++) {
        if (!keep[i]) continue;
        int rc = pm_mfile_append(&files, &n, &cap, &metas[i].m, e);
        if (rc) { pm_mfiles_free(files, n); return rc; }
    }
    return pm_scan_open_files(t, latest, files, n, sc, e);
}

/* Manifests read by conflict checks (the test suite counts them). */
static int64_t conflict_manifests_read, conflict_exact_scans;
int64_t pm_conflict_manifests_read(void) { return conflict_manifests_read; }
int64_t pm_conflict_exact_scans(void) { return conflict_exact_scans; }

/* The common case in one pass over the kept manifests, entries of the
 * changed partitions only: each commit identifier's count in latest (ADDs
 * minus DELETEs, Java's merge of entries in order) and, per changed
 * partition, the live files' total buckets. Sets *mixed (and decides
 * nothing) when a partition's entries carry more than one total-bucket
 * value: the exact scan below sorts that out. Else marks matched DELETEs
 * in `map` as the scan would, seeds `tb` with each partition's live total
 * buckets, or fails on a file already live. */
static int one_pass(paimon_table *t, const pm_snapshot *latest, const pm_own_meta *metas, const uint8_t *keep,
                    size_t n_metas, pm_idmap *map, const pm_set *touched, int buckets, pm_idmap *tb,
                    const pm_manifest_entry *ents, size_t n_ents, size_t *deletes, int *mixed, pm_err *e) {
    size_t nord = pm_idmap_ordinals(map);
    int64_t *count = calloc(nord ? nord : 1, sizeof *count);
    pm_idmap parts = {0};        /* partition -> val: live count, kind: total buckets */
    pm_buf key = {0};
    int rc = count ? PAIMON_OK : pm_nomem(e);
    *mixed = 0;
    for (size_t i = 0; i < n_metas && !rc && !*mixed; i++) {
        if (!keep[i]) continue;
        pm_manifest_reader *r;
        if ((rc = pm_table_open_manifest(t, metas[i].m.file_name, PM_MANIFEST_FILE, &r, e))) break;
        __atomic_add_fetch(&conflict_manifests_read, 1, __ATOMIC_RELAXED);
        const pm_manifest_entry *m;
        while ((rc = pm_manifest_next_entry(r, &m, e)) == PAIMON_OK) {
            if (t->n_part && !pm_set_contains(touched, m->partition.ptr, m->partition.len)) continue;
            int d = m->kind == PM_FILE_ADD ? 1 : -1;
            if (map->n) {
                if (pm_file_identifier(m, &key)) { rc = pm_nomem(e); break; }
                long s = pm_idmap_find(map, key.data, key.len);
                if (s >= 0) count[s] += d;
            }
            if (!buckets || m->total_buckets <= 0) continue;
            long ps = pm_idmap_find(&parts, m->partition.ptr, m->partition.len);
            if (ps < 0) {
                if (pm_idmap_put(&parts, m->partition.ptr, m->partition.len, d, m->total_buckets)) { rc = pm_nomem(e); break; }
            } else if (parts.kind[ps] != m->total_buckets) {
                *mixed = 1;
                break;
            } else {
                parts.val[ps] += d;
            }
        }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    if (!rc && !*mixed) {
        size_t first_live = SIZE_MAX;      /* in commit order */
        for (size_t o = 0; o < nord; o++) {
            if (!map->live[o] || count[o] <= 0) continue;
            if (map->kind[o] == PM_FILE_ADD && (size_t)map->val[o] < first_live) first_live = (size_t)map->val[o];
        }
        if (first_live != SIZE_MAX) {
            rc = conflict_at(t, &ents[first_live], e, "is already live in snapshot", (long long)latest->id);
        } else {
            for (size_t o = 0; o < nord; o++)
                if (map->live[o] && map->kind[o] == PM_FILE_DELETE && count[o] > 0) {
                    map->kind[o] = -1;   /* matched */
                    (*deletes)--;
                }
            /* every changed partition is some commit entry's */
            for (size_t i = 0; i < n_ents && buckets && !rc; i++) {
                pm_bytes pb = ents[i].partition;
                long ps = pm_idmap_find(&parts, pb.ptr, pb.len);
                if (ps < 0 || parts.val[ps] <= 0 || pm_idmap_find(tb, pb.ptr, pb.len) >= 0) continue;
                if (pm_idmap_put(tb, pb.ptr, pb.len, parts.kind[ps], 0)) rc = pm_nomem(e);
            }
        }
    }
    free(count);
    pm_idmap_free(&parts);
    pm_buf_free(&key);
    return rc;
}

int pm_check_conflicts(paimon_table *t, const pm_snapshot *latest, const pm_own_meta *metas, size_t n_metas,
                       const pm_manifest_entry *ents, size_t n, int overwrite, pm_err *e) {
    pm_idmap map = {0}, tb = {0};
    pm_set *touched = NULL;
    pm_buf key = {0};
    uint8_t *keep = NULL;
    int rc = PAIMON_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        if (pm_file_identifier(&ents[i], &key)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
        long s = pm_idmap_find(&map, key.data, key.len);
        if (ents[i].kind == PM_FILE_ADD) {
            if (s >= 0) {
                rc = conflict_at(t, &ents[i], e, map.kind[s] == PM_FILE_ADD ? "is added twice in this commit"
                                                                        : "is deleted and added again in this commit", 0);
                break;
            }
        } else if (s >= 0) {
            pm_idmap_del(&map, key.data, key.len, s);
            continue;
        }
        if (pm_idmap_put(&map, key.data, key.len, (int64_t)i, ents[i].kind)) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    int buckets = !overwrite && n > 0;
    if (!rc) {
        touched = pm_set_new();
        if (!touched) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
        for (size_t i = 0; i < n && !rc; i++)
            if (pm_set_add(touched, ents[i].partition.ptr, ents[i].partition.len) < 0)
                rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    size_t deletes = 0;
    for (size_t o = 0; o < pm_idmap_ordinals(&map); o++) if (map.live[o] && map.kind[o] == PM_FILE_DELETE) deletes++;
    if (!rc && latest && (map.n || buckets)) {
        /* only the manifests that may hold a changed partition matter:
         * every identifier and bucket check is within one partition */
        pm_part_span span;
        pm_part_span_of_entries(t, ents, n, &span);
        keep = malloc(n_metas ? n_metas : 1);
        if (!keep) rc = pm_nomem(e);
        for (size_t i = 0; i < n_metas && !rc; i++) keep[i] = (uint8_t)pm_part_span_may_hold(t, &span, &metas[i].m);
        int mixed = 0;
        if (!rc) rc = one_pass(t, latest, metas, keep, n_metas, &map, touched, buckets, &tb, ents, n, &deletes, &mixed, e);
        pm_scan *sc;
        if (!rc && mixed && !(rc = scan_latest(t, latest, metas, keep, n_metas, &sc, e))) {
            __atomic_add_fetch(&conflict_exact_scans, 1, __ATOMIC_RELAXED);
            const pm_manifest_entry *m;
            while ((rc = pm_scan_next(sc, &m, e)) == PAIMON_OK) {
                if (t->n_part && !pm_set_contains(touched, m->partition.ptr, m->partition.len)) continue;
                if (pm_file_identifier(m, &key)) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
                long s = pm_idmap_find(&map, key.data, key.len);
                if (s >= 0 && map.kind[s] == PM_FILE_ADD) {
                    rc = conflict_at(t, &ents[map.val[s]], e, "is already live in snapshot", (long long)latest->id);
                    break;
                }
                if (s >= 0 && map.kind[s] == PM_FILE_DELETE) {
                    map.kind[s] = -1;   /* matched */
                    deletes--;
                    continue;       /* removed by this commit */
                }
                if (buckets && (rc = check_buckets(t, &tb, m, e))) break;
            }
            pm_scan_close(sc);
            if (rc == PAIMON_DONE) rc = PAIMON_OK;
        }
    }
    /* Java order: live entries of the changed partitions, then the delta. */
    for (size_t i = 0; i < n && !rc && buckets; i++) rc = check_buckets(t, &tb, &ents[i], e);
    if (!rc && deletes) {
        /* Report the first unmatched DELETE in commit order. */
        size_t first = n;
        for (size_t o = 0; o < pm_idmap_ordinals(&map); o++)
            if (map.live[o] && map.kind[o] == PM_FILE_DELETE && (size_t)map.val[o] < first)
                first = (size_t)map.val[o];
        if (latest) rc = conflict_at(t, &ents[first], e, "is not live in snapshot", (long long)latest->id);
        else rc = conflict_at(t, &ents[first], e, "is not live (the table has no snapshot)", 0);
    }
    pm_idmap_free(&map);
    pm_idmap_free(&tb);
    pm_set_free(touched);
    pm_buf_free(&key);
    free(keep);
    return rc;
}
