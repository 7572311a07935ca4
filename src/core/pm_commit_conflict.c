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

/* Java ConflictDetection: the delta must merge on its own, base + delta
 * must merge leaving no DELETE (every deleted file live in latest, no added
 * file already live), and (unless overwriting) total buckets agree within
 * each changed partition. */
/* The scan of latest's live files over the manifests read already. */
static int scan_latest(paimon_table *t, const pm_snapshot *latest, const pm_own_meta *metas, size_t n_metas,
                       pm_scan **sc, pm_err *e) {
    pm_mfile *files = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < n_metas; i++) {
        int rc = pm_mfile_append(&files, &n, &cap, &metas[i].m, e);
        if (rc) { pm_mfiles_free(files, n); return rc; }
    }
    return pm_scan_open_files(t, latest, files, n, sc, e);
}

int pm_check_conflicts(paimon_table *t, const pm_snapshot *latest, const pm_own_meta *metas, size_t n_metas,
                       const pm_manifest_entry *ents, size_t n, int overwrite, pm_err *e) {
    pm_idmap map = {0}, tb = {0};
    pm_set *touched = NULL;
    pm_buf key = {0};
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
    if (!rc && buckets) {
        touched = pm_set_new();
        if (!touched) rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
        for (size_t i = 0; i < n && !rc; i++)
            if (pm_set_add(touched, ents[i].partition.ptr, ents[i].partition.len) < 0)
                rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    size_t deletes = 0;
    for (size_t o = 0; o < pm_idmap_ordinals(&map); o++) if (map.live[o] && map.kind[o] == PM_FILE_DELETE) deletes++;
    if (!rc && latest && (map.n || buckets)) {
        pm_scan *sc;
        if (!(rc = scan_latest(t, latest, metas, n_metas, &sc, e))) {
            const pm_manifest_entry *m;
            while ((rc = pm_scan_next(sc, &m, e)) == PAIMON_OK) {
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
                if (buckets && pm_set_contains(touched, m->partition.ptr, m->partition.len) &&
                    (rc = check_buckets(t, &tb, m, e)))
                    break;
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
    return rc;
}

