/* The public C API (paimon.h) over the internal modules. */
#include "pm_warehouse.h"
#include "pm_table.h"

#include <stdlib.h>
#include <string.h>

const char *paimon_version(void) { return PAIMON_VERSION; }

const char *paimon_errstr(int code) {
    switch (code) {
    case PAIMON_OK: return "not an error";
    case PAIMON_ERROR: return "error";
    case PAIMON_IO: return "I/O error";
    case PAIMON_CORRUPT: return "corrupt or unreadable metadata";
    case PAIMON_NOTFOUND: return "not found";
    case PAIMON_EXISTS: return "already exists";
    case PAIMON_UNSUPPORTED: return "not supported";
    case PAIMON_CONFLICT: return "conflict";
    case PAIMON_MISUSE: return "bad argument";
    case PAIMON_NOMEM: return "out of memory";
    case PAIMON_UNCERTAIN: return "outcome unknown";
    case PAIMON_INTERRUPT: return "interrupted";
    case PAIMON_DONE: return "no more items";
    default: return "unknown error";
    }
}

void paimon_free(void *p) { free(p); }

int paimon_table_open_v2(const char *uri, const char *branch, const char *const *options, paimon_table **out,
                         char **errmsg) {
    pm_err e = {0};
    if (errmsg) *errmsg = NULL;
    if (!out) return PAIMON_MISUSE;
    int rc = pm_table_open_opts(uri, branch, options, out, &e);
    if (rc && errmsg) *errmsg = pm_strdup(e.msg);
    return rc;
}

int paimon_table_open(const char *path, const char *branch, paimon_table **out, char **errmsg) {
    return paimon_table_open_v2(path, branch, NULL, out, errmsg);
}

void paimon_table_close(paimon_table *t) { pm_table_free(t); }

int paimon_list_tables(const char *uri, const char *const *options, const char *database_pattern,
                       const char *table_pattern, paimon_table_cb cb, void *ud, const char **kind, char **errmsg) {
    pm_err e = {0};
    if (errmsg) *errmsg = NULL;
    if (kind) *kind = NULL;
    if (!uri || !cb) return PAIMON_MISUSE;
    pm_fileio *io = NULL;
    pm_table_ref *v = NULL;
    size_t n = 0;
    pm_wh_kind k = PM_WH_WAREHOUSE;
    int rc = pm_fileio_open(uri, options, &io, &e);
    if (!rc) rc = pm_warehouse_tables(io, uri, database_pattern, table_pattern, &v, &n, &k, &e);
    if (!rc && kind) *kind = pm_wh_kind_name(k);
    for (size_t i = 0; !rc && i < n; i++) rc = cb(ud, v[i].database, v[i].table, v[i].path);
    if (rc && errmsg && e.msg[0]) *errmsg = pm_strdup(e.msg);
    pm_table_refs_free(v, n);
    pm_fileio_destroy(io);
    return rc;
}
const char *paimon_table_errmsg(const paimon_table *t) { return t ? t->err.msg : "no table"; }
const char *paimon_table_path(const paimon_table *t) { return t ? t->root : NULL; }

int paimon_latest_snapshot_id(paimon_table *t, int64_t *id) {
    return pm_snapshot_latest_id(t->io, t->branch_root, id, &t->err);
}

int paimon_earliest_snapshot_id(paimon_table *t, int64_t *id) {
    return pm_snapshot_earliest_id(t->io, t->branch_root, id, &t->err);
}

struct paimon_snapshot { pm_snapshot *s; };

int paimon_snapshot_load(paimon_table *t, int64_t id, paimon_snapshot **out) {
    *out = NULL;
    paimon_snapshot *ps = calloc(1, sizeof *ps);
    if (!ps) return pm_fail(&t->err, PAIMON_NOMEM, "out of memory");
    int rc = pm_snapshot_read(t->io, t->branch_root, id, &ps->s, &t->err);
    if (rc) { free(ps); return rc; }
    *out = ps;
    return PAIMON_OK;
}

void paimon_snapshot_free(paimon_snapshot *s) {
    if (!s) return;
    pm_snapshot_free(s->s);
    free(s);
}

int64_t paimon_snapshot_id(const paimon_snapshot *s) { return s->s->id; }
int64_t paimon_snapshot_time_millis(const paimon_snapshot *s) { return s->s->time_millis; }
int64_t paimon_snapshot_total_record_count(const paimon_snapshot *s) { return s->s->total_record_count.v; }
const char *paimon_snapshot_commit_kind(const paimon_snapshot *s) { return s->s->commit_kind; }

struct paimon_file_iter {
    paimon_table *t;
    pm_scan *scan;
    pm_buf path, part;
};

int paimon_file_iter_open(paimon_table *t, const paimon_snapshot *s, paimon_file_iter **out) {
    *out = NULL;
    paimon_file_iter *it = calloc(1, sizeof *it);
    if (!it) return pm_fail(&t->err, PAIMON_NOMEM, "out of memory");
    it->t = t;
    int rc = pm_scan_open(t, s->s, NULL, &it->scan, &t->err);
    if (rc) { free(it); return rc; }
    *out = it;
    return PAIMON_OK;
}

int paimon_file_iter_next(paimon_file_iter *it, paimon_file_info *info) {
    const pm_manifest_entry *m;
    int rc = pm_scan_next(it->scan, &m, &it->t->err);
    if (rc) return rc;
    it->part.len = 0;
    if ((rc = pm_table_partition_path(it->t, m->partition, &it->part, &it->t->err))) return rc;
    if ((rc = pm_table_file_path(it->t, m, &it->path, &it->t->err))) return rc;
    info->partition = (const char *)it->part.data;
    info->bucket = m->bucket;
    info->file_path = (const char *)it->path.data;
    info->file_name = m->file.file_name;
    info->record_count = m->file.row_count;
    info->file_size = m->file.file_size;
    info->level = m->file.level;
    info->schema_id = m->file.schema_id;
    return PAIMON_OK;
}

void paimon_file_iter_close(paimon_file_iter *it) {
    if (!it) return;
    pm_scan_close(it->scan);
    pm_buf_free(&it->path);
    pm_buf_free(&it->part);
    free(it);
}
