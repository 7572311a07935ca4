/* Partition entries and drop partitions (paimon-format.md §7.8, §8.4). */
#include "pm_partition_ops.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pm_commit.h"
#include "pm_json.h"
#include "pm_meta.h"
#include "pm_set.h"

/* ---- selection ------------------------------------------------------------ */

int pm_part_select_check(const paimon_table *t, const pm_part_select *sel, pm_err *e) {
    if (!sel) return PAIMON_OK;
    for (size_t i = 0; i < sel->n_specs; i++) {
        int rc = pm_partition_filter_check(t, &sel->specs[i], e);
        if (rc) return rc;
    }
    return PAIMON_OK;
}

int pm_part_selected(const paimon_table *t, const pm_part_select *sel, pm_bytes part, pm_err *e) {
    if (!sel || sel->all) return 1;
    for (size_t i = 0; i < sel->n_exact; i++)
        if (sel->exact[i].len == part.len && (!part.len || !memcmp(sel->exact[i].ptr, part.ptr, part.len)))
            return 1;
    for (size_t i = 0; i < sel->n_specs; i++) {
        int m = pm_partition_matches(t, &sel->specs[i], part, e);
        if (m != 0) return m;
    }
    return 0;
}

/* ---- partition aggregation (bytes -> index) ------------------------------------ */

typedef struct pagg {
    pm_part_stat *v;
    size_t n, cap;
    pm_set *keys;                    /* partition bytes; ordinal = index in v */
} pagg;

void pm_part_stats_free(pm_part_stat *v, size_t n) {
    for (size_t i = 0; i < n; i++) { free(v[i].part); free(v[i].path); }
    free(v);
}

static void pagg_free(pagg *a) {
    pm_part_stats_free(a->v, a->n);
    pm_set_free(a->keys);
    memset(a, 0, sizeof *a);
}

/* Key the records already in v (distinct partitions, as pagg_get made
 * them): ordinal i is v[i]. 0 or -1 (OOM). */
static int pagg_index(pagg *a) {
    if (!a->keys && !(a->keys = pm_set_new())) return -1;
    for (size_t i = 0; i < a->n; i++)
        if (pm_set_add_ordinal(a->keys, a->v[i].part, a->v[i].part_len, NULL) != (long)i) return -1;
    return 0;
}

/* The stat record of a partition, created if new. NULL on OOM. */
static pm_part_stat *pagg_get(pagg *a, const paimon_table *t, pm_bytes part, pm_err *e, int *rc) {
    *rc = PAIMON_OK;
    if (!a->keys && !(a->keys = pm_set_new())) { *rc = pm_nomem(e); return NULL; }
    int added;
    long ord = pm_set_add_ordinal(a->keys, part.ptr, part.len, &added);
    if (ord < 0) { *rc = pm_nomem(e); return NULL; }
    if (!added) return &a->v[ord];
    /* a new key: its record is v[n] (ordinal n); on failure the caller
     * drops the whole aggregate */
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 16;
        pm_part_stat *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv) { *rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); return NULL; }
        a->v = nv;
        a->cap = nc;
    }
    pm_part_stat *s = &a->v[a->n];
    memset(s, 0, sizeof *s);
    s->part = malloc(part.len ? part.len : 1);
    if (!s->part) { *rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); return NULL; }
    if (part.len) memcpy(s->part, part.ptr, part.len);
    s->part_len = part.len;
    pm_buf path = {0};
    *rc = pm_table_partition_path(t, part, &path, e);
    if (*rc) { free(s->part); pm_buf_free(&path); return NULL; }
    s->path = path.data ? (char *)path.data : pm_strdup("");
    a->n++;
    return s;
}

static void stat_add(pm_part_stat *s, const pm_manifest_entry *m) {
    s->file_count++;
    s->record_count += m->file.row_count;
    s->file_size += m->file.file_size;
    if (m->file.creation_time.has &&
        (!s->has_creation_time || m->file.creation_time.v > s->last_creation_time)) {
        s->has_creation_time = 1;
        s->last_creation_time = m->file.creation_time.v;
    }
}

static int cmp_stat_path(const void *a, const void *b) {
    const pm_part_stat *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    if (c) return c;
    size_t l = x->part_len < y->part_len ? x->part_len : y->part_len;
    c = l ? memcmp(x->part, y->part, l) : 0;
    return c ? c : (x->part_len < y->part_len ? -1 : x->part_len > y->part_len);
}

/* Scan snapshot s; calls fn for every live entry of a selected partition. */
typedef int (*entry_fn)(void *ud, const pm_manifest_entry *m, pm_err *e);

static int scan_selected(paimon_table *t, const pm_snapshot *s, const pm_part_select *sel, entry_fn fn,
                         void *ud, pm_err *e) {
    /* One spec and nothing else: let the scan prune manifests by it. */
    const pm_partition_filter *f = NULL;
    if (sel && !sel->all && sel->n_specs == 1 && sel->n_exact == 0) f = &sel->specs[0];
    pm_scan *sc;
    int rc = pm_scan_open(t, s, f, &sc, e);
    if (rc) return rc;
    const pm_manifest_entry *m;
    while ((rc = pm_scan_next(sc, &m, e)) == PAIMON_OK) {
        if (!f) {
            int mt = pm_part_selected(t, sel, m->partition, e);
            if (mt < 0) { rc = -mt; break; }
            if (!mt) continue;
        }
        if ((rc = fn(ud, m, e))) break;
    }
    pm_scan_close(sc);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

typedef struct list_ctx { paimon_table *t; pagg agg; } list_ctx;

static int list_one(void *ud, const pm_manifest_entry *m, pm_err *e) {
    list_ctx *c = ud;
    int rc;
    pm_part_stat *s = pagg_get(&c->agg, c->t, m->partition, e, &rc);
    if (!s) return rc;
    stat_add(s, m);
    return PAIMON_OK;
}

int pm_partition_entries(paimon_table *t, const pm_snapshot *s, const pm_part_select *sel,
                         pm_part_stat **out, size_t *n, pm_err *e) {
    *out = NULL;
    *n = 0;
    int rc = pm_part_select_check(t, sel, e);
    if (rc) return rc;
    list_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    rc = scan_selected(t, s, sel, list_one, &c, e);
    if (rc) { pagg_free(&c.agg); return rc; }
    if (c.agg.n) qsort(c.agg.v, c.agg.n, sizeof *c.agg.v, cmp_stat_path);
    pm_set_free(c.agg.keys);
    *out = c.agg.v;
    *n = c.agg.n;
    return PAIMON_OK;
}

/* ---- deep copies of manifest entries ---------------------------------------- */

typedef struct plan {
    paimon_table *t;
    pm_arena *arena;
    pm_manifest_entry *v;
    size_t n, cap;
    pm_index_entry *ix;              /* DELETE copies of the index files */
    size_t n_ix, cap_ix;
    pagg agg;
    int drop_stats;
    pm_bytes empty_row;
} plan;

/* A DELETE entry equal to the ADD entry m in every field (Java copies the
 * ManifestEntry with kind DELETE), stats dropped when
 * manifest.delete-file-drop-stats is true (DataFileMeta.copyWithoutStats). */
static int copy_as_delete(plan *p, const pm_manifest_entry *m, pm_manifest_entry *d) {
    if (pm_manifest_entry_copy(p->arena, m, d)) return -1;
    d->kind = PM_FILE_DELETE;
    if (p->drop_stats) {
        pm_data_file *f = &d->file;
        memset(&f->value_stats, 0, sizeof f->value_stats);
        f->value_stats.min_values = f->value_stats.max_values = p->empty_row;
        f->value_stats.has_null_counts = 1;
        f->has_value_stats_cols = 1;
        f->value_stats_cols = (pm_strs){0, NULL};
    }
    return 0;
}

static int plan_one(void *ud, const pm_manifest_entry *m, pm_err *e) {
    plan *p = ud;
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 64;
        pm_manifest_entry *nv = realloc(p->v, nc * sizeof *nv);
        if (!nv) return pm_fail(e, PAIMON_NOMEM, "out of memory");
        p->v = nv;
        p->cap = nc;
    }
    if (copy_as_delete(p, m, &p->v[p->n])) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    p->n++;
    int rc;
    pm_part_stat *s = pagg_get(&p->agg, p->t, m->partition, e, &rc);
    if (!s) return rc;
    stat_add(s, m);
    return PAIMON_OK;
}

static void plan_reset(plan *p) {
    p->n = 0;
    p->n_ix = 0;
    pagg_free(&p->agg);
    pm_arena_reset(p->arena);
}

/* Index files (deletion vectors, HASH index, global indexes) of the
 * selected partitions, from the index manifest of snapshot s (or of
 * snapshot s only counted in *hits when p is NULL): Java's overwrite drops
 * them in the same commit (paimon-format.md §7.8). Partitions match like
 * data files: exact bytes, or the specs. */
static int plan_index(paimon_table *t, const pm_snapshot *s, const pm_part_select *sel, plan *p, size_t *hits,
                      pm_err *e) {
    if (hits) *hits = 0;
    if (!s->index_manifest) return PAIMON_OK;
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(t, s->index_manifest, PM_INDEX_MANIFEST, &r, e);
    if (rc) return rc;
    const pm_index_entry *x;
    while ((rc = pm_manifest_next_index(r, &x, e)) == PAIMON_OK) {
        if (x->kind != PM_FILE_ADD) continue;
        int mt = pm_part_selected(t, sel, x->partition, e);
        if (mt < 0) { rc = -mt; break; }
        if (!mt) continue;
        if (hits) (*hits)++;
        if (!p) continue;
        if (p->n_ix == p->cap_ix) {
            size_t nc = p->cap_ix ? p->cap_ix * 2 : 16;
            pm_index_entry *nv = realloc(p->ix, nc * sizeof *nv);
            if (!nv) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
            p->ix = nv;
            p->cap_ix = nc;
        }
        if (pm_index_entry_copy(p->arena, x, &p->ix[p->n_ix])) { rc = pm_fail(e, PAIMON_NOMEM, "out of memory"); break; }
        p->ix[p->n_ix++].kind = PM_FILE_DELETE;
    }
    pm_manifest_close(r);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

void pm_drop_result_free(pm_drop_result *r) {
    if (!r) return;
    pm_part_stats_free(r->parts, r->n_parts);
    free(r->refused);
    memset(r, 0, sizeof *r);
}

/* Fold this attempt's plan into the result (follow-up commits add up). */
static int result_add(pm_drop_result *r, const plan *p, pm_err *e) {
    pagg acc;
    memset(&acc, 0, sizeof acc);
    acc.v = r->parts;
    acc.n = acc.cap = r->n_parts;
    r->parts = NULL;
    r->n_parts = 0;
    if (acc.n && pagg_index(&acc)) { pagg_free(&acc); return pm_fail(e, PAIMON_NOMEM, "out of memory"); }
    int rc = PAIMON_OK;
    for (size_t i = 0; i < p->agg.n && !rc; i++) {
        const pm_part_stat *x = &p->agg.v[i];
        pm_part_stat *s = pagg_get(&acc, p->t, (pm_bytes){x->part, x->part_len}, e, &rc);
        if (!s) break;
        s->file_count += x->file_count;
        s->record_count += x->record_count;
        s->file_size += x->file_size;
        if (x->has_creation_time && (!s->has_creation_time || x->last_creation_time > s->last_creation_time)) {
            s->has_creation_time = 1;
            s->last_creation_time = x->last_creation_time;
        }
        r->files += x->file_count;
        r->rows += x->record_count;
        r->bytes += x->file_size;
    }
    r->index_files += (int64_t)p->n_ix;
    if (acc.n) qsort(acc.v, acc.n, sizeof *acc.v, cmp_stat_path);
    pm_set_free(acc.keys);
    r->parts = acc.v;
    r->n_parts = acc.n;
    return rc;
}

static void sleep_ms(int64_t ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

typedef struct any_ctx { int found; } any_ctx;
static int any_one(void *ud, const pm_manifest_entry *m, pm_err *e) {
    (void)m;
    (void)e;
    ((any_ctx *)ud)->found = 1;
    return PAIMON_DONE;   /* stop */
}

/* The arguments of a drop: a partitioned table, a non-empty selection. */
static int check_drop_args(paimon_table *t, const pm_part_select *sel, const pm_drop_opts *o, pm_err *e) {
    if (!t || !sel || !o) return pm_fail(e, PAIMON_MISUSE, "drop partitions: NULL argument");
    if (t->n_part == 0) return pm_fail(e, PAIMON_MISUSE, "%s: the table is not partitioned", t->root);
    if (!sel->all && sel->n_specs == 0 && sel->n_exact == 0)
        return pm_fail(e, PAIMON_MISUSE, "drop partitions: no partition given");
    for (size_t i = 0; i < sel->n_specs; i++)
        if (sel->specs[i].n == 0)
            return pm_fail(e, PAIMON_MISUSE, "drop partitions: an empty partition spec would drop every partition");
    int rc = pm_part_select_check(t, sel, e);
    if (rc) return rc;
    return pm_table_check_manifest_format(t, e);
}

/* Our commit landed on a newer snapshot than the one scanned: files
 * appended in between may still be live in the dropped partitions.
 * *left = 1 if snapshot id still has data or index files there. */
static int dropped_still_live(paimon_table *t, const pm_part_select *sel, int64_t id, int *left, pm_err *e) {
    pm_snapshot *mine = NULL;
    *left = 0;
    int rc = pm_snapshot_read(t->io, t->branch_root, id, &mine, e);
    if (rc) return rc;
    any_ctx ac = {0};
    size_t ix_left = 0;
    rc = scan_selected(t, mine, sel, any_one, &ac, e);
    if (rc == PAIMON_DONE) rc = PAIMON_OK;
    if (!rc) rc = plan_index(t, mine, sel, NULL, &ix_left, e);
    pm_snapshot_free(mine);
    *left = ac.found || ix_left;
    return rc;
}

int pm_drop_partitions(paimon_table *t, const pm_part_select *sel, const pm_drop_opts *o, pm_drop_result *r,
                       pm_err *e) {
    memset(r, 0, sizeof *r);
    int rc = check_drop_args(t, sel, o, e);
    if (rc) return rc;

    char user[64];
    if (!o->commit_user) {
        char u[37];
        pm_uuid4(u);
        snprintf(user, sizeof user, "paimon-lua-drop-%s", u);
    }
    pm_commit_opts co;
    pm_commit_opts_from_table(t, &co);
    co.commit_user = o->commit_user ? o->commit_user : user;
    co.kind = "OVERWRITE";
    co.max_retries = 0;       /* a lost snapshot id comes back as a conflict: re-scan */
    int max_attempts = o->max_attempts > 0 ? o->max_attempts : 3;
    int64_t wait = o->retry_wait_ms > 0 ? o->retry_wait_ms : 10;

    plan p;
    memset(&p, 0, sizeof p);
    p.t = t;
    p.arena = pm_arena_new(1 << 16);
    pm_buf empty = {0};
    if (!p.arena || pm_binrow_encode(NULL, 0, NULL, &empty, e)) {
        pm_arena_free(p.arena);
        pm_buf_free(&empty);
        return pm_fail(e, PAIMON_NOMEM, "out of memory");
    }
    p.empty_row = (pm_bytes){empty.data, empty.len};
    const char *ds = pm_schema_option(t->schema, "manifest.delete-file-drop-stats");
    p.drop_stats = ds && !strcasecmp(ds, "true");

    pm_snapshot *latest = NULL;
    for (int attempt = 1;; attempt++) {
        r->attempts = attempt;
        plan_reset(&p);
        pm_snapshot_free(latest);
        latest = NULL;
        int64_t lid = 0;
        rc = pm_snapshot_latest_id(t->io, t->branch_root, &lid, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; break; }   /* empty table */
        if (rc) break;
        if ((rc = pm_snapshot_read(t->io, t->branch_root, lid, &latest, e))) break;
        r->base_snapshot_id = lid;
        if ((rc = scan_selected(t, latest, sel, plan_one, &p, e))) break;
        if ((rc = plan_index(t, latest, sel, &p, NULL, e))) break;
        if (p.n == 0 && p.n_ix == 0) break;                  /* nothing (left) to drop */
        if (o->dry_run) { rc = result_add(r, &p, e); break; }
        int64_t id = 0;
        pm_err ce = {0};
        rc = pm_commit_with_index(t, p.v, p.n, p.ix, p.n_ix, &co, &id, &ce);
        if (rc == PAIMON_OK) {
            r->snapshot_id = id;
            r->commits++;
            if ((rc = result_add(r, &p, e))) break;
            if (id == lid + 1) break;
            int left = 0;
            if ((rc = dropped_still_live(t, sel, id, &left, e)) || !left) break;
            pm_fail(&ce, PAIMON_CONFLICT, "%s: files were appended to the dropped partitions between snapshot "
                    "%lld and %lld", t->root, (long long)lid, (long long)id);
        } else if (rc != PAIMON_CONFLICT) {
            *e = ce;
            break;
        }
        if (o->on_retry) o->on_retry(o->ud, attempt, &ce);
        if (attempt >= max_attempts) {
            rc = pm_fail(e, PAIMON_CONFLICT, "drop partitions of %s: still conflicting after %d attempts (%s)",
                         t->root, attempt, ce.msg);
            break;
        }
        sleep_ms(wait);
        if (wait < 10000) wait *= 2;
    }
    pm_snapshot_free(latest);
    plan_reset(&p);
    free(p.v);
    free(p.ix);
    pm_arena_free(p.arena);
    pm_buf_free(&empty);
    return rc;
}

/* ---- mark partitions done ------------------------------------------------ */

void pm_mark_done_result_free(pm_mark_done_result *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) { free(r->items[i].partition); free(r->items[i].path); }
    free(r->items);
    free(r->actions);
    memset(r, 0, sizeof *r);
}

/* CoreOptions.partitionMarkDoneActions: comma-separated, each
 * PartitionMarkDoneAction.valueOf(x.replace('-', '_').toUpperCase()). */
static int mark_done_actions(const paimon_table *t, const char *v, pm_err *e) {
    static const char *const unsupported[] = {"done-partition", "mark-event", "http-report", "custom"};
    static const char *const why[] = {"adds a '.done' partition to a metastore", "marks an event in a metastore",
                                      "reports to an HTTP server", "loads a Java class"};
    const char *p = v;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char one[64];
        size_t k = 0;
        for (size_t i = 0; i < len && k + 1 < sizeof one; i++) one[k++] = p[i] == '_' ? '-' : (char)tolower((unsigned char)p[i]);
        one[k] = '\0';
        int known = len < sizeof one && !strcmp(one, "success-file");
        for (size_t i = 0; !known && len < sizeof one && i < sizeof unsupported / sizeof *unsupported; i++)
            if (!strcmp(one, unsupported[i]))
                return pm_fail(e, PAIMON_UNSUPPORTED, "%s: partition.mark-done-action '%s' is not supported here (it %s); "
                               "only success-file is; nothing was marked", t->root, unsupported[i], why[i]);
        if (!known)
            return pm_fail(e, PAIMON_MISUSE, "%s: partition.mark-done-action '%.*s' is not one of success-file, "
                           "done-partition, mark-event, http-report, custom", t->root, (int)len, p);
        if (!c) return PAIMON_OK;
        p = c + 1;
    }
}

/* "k=v/k2=v2/" of the spec's columns in partition-key order (Java's
 * generatePartitionPath: escaped names and values); a leading run of the
 * keys only. */
static int mark_done_dir(const paimon_table *t, const pm_partition_filter *f, pm_buf *out, pm_err *e) {
    out->len = 0;
    size_t used = 0;
    for (size_t k = 0; k < t->n_part; k++) {
        const char *v = NULL;
        for (size_t i = 0; i < f->n; i++)
            if (!strcmp(f->keys[i], t->part_keys[k])) v = f->values[i];
        if (!v) {
            if (used < f->n)
                return pm_fail(e, PAIMON_MISUSE, "partition spec gives a later partition column but not '%s' of %s: "
                               "its directory would hold no partition", t->part_keys[k], t->root);
            break;
        }
        if (pm_escape_path_name(t->part_keys[k], strlen(t->part_keys[k]), out) || pm_buf_printf(out, "=") ||
            pm_escape_path_name(v, strlen(v), out) || pm_buf_printf(out, "/"))
            return pm_nomem(e);
        used++;
    }
    if (!used) return pm_fail(e, PAIMON_MISUSE, "mark_partition_done: an empty partition spec");
    return pm_buf_cstr(out) ? pm_nomem(e) : PAIMON_OK;
}

/* SuccessFile.fromJson: both fields required, integers. */
static int success_file_parse(const pm_buf *b, const char *path, int64_t *created, pm_err *e) {
    pm_json_doc *doc = NULL;
    pm_json_error je;
    if (pm_json_parse((const char *)b->data, b->len, &doc, &je))
        return je.nomem ? pm_nomem(e) : pm_fail(e, PAIMON_CORRUPT, "%s: not a success file (line %d, column %d: %s)",
                                                path, je.line, je.column, je.text);
    const pm_json *root = pm_json_root(doc);
    const pm_json *c = pm_json_get(root, "creationTime"), *m = pm_json_get(root, "modificationTime");
    int rc = PAIMON_OK;
    if (!pm_json_is_integer(c) || !pm_json_is_integer(m))
        rc = pm_fail(e, PAIMON_CORRUPT, "%s: not a success file (needs integer creationTime and modificationTime)", path);
    else *created = pm_json_int(c);
    pm_json_doc_free(doc);
    return rc;
}

int pm_mark_partitions_done(paimon_table *t, const pm_partition_filter *specs, size_t n, int64_t now_ms, int dry_run,
                            pm_mark_done_result *r, pm_err *e) {
    memset(r, 0, sizeof *r);
    if (t->n_part == 0) return pm_fail(e, PAIMON_MISUSE, "%s is not partitioned: no partition to mark done", t->root);
    if (n == 0) return pm_fail(e, PAIMON_MISUSE, "mark_partition_done: no partition given (k=v[,k2=v2])");
    const char *actions = pm_schema_option_or_default(t->schema, "partition.mark-done-action");
    if (!actions) actions = "success-file";
    if (!(r->actions = pm_strdup(actions))) return pm_nomem(e);
    int rc = mark_done_actions(t, actions, e);
    if (!rc && !(r->items = calloc(n, sizeof *r->items))) rc = pm_nomem(e);
    int64_t now = now_ms > 0 ? now_ms : pm_now_millis();
    pm_buf dir = {0}, path = {0}, bytes = {0}, json = {0};
    /* everything read and checked first */
    for (size_t i = 0; !rc && i < n; i++) {
        pm_mark_done_item *it = &r->items[r->n];
        if ((rc = pm_partition_filter_check(t, &specs[i], e)) || (rc = mark_done_dir(t, &specs[i], &dir, e))) break;
        path.len = 0;
        if (pm_buf_printf(&path, "%s/%s_SUCCESS", t->root, (char *)dir.data) || pm_buf_cstr(&path)) { rc = pm_nomem(e); break; }
        for (size_t k = 0; k < r->n; k++)
            if (!strcmp(r->items[k].path, (char *)path.data))
                rc = pm_fail(e, PAIMON_MISUSE, "partition '%s' given twice", (char *)dir.data);
        if (rc) break;
        if (!(it->partition = pm_strdup((char *)dir.data)) || !(it->path = pm_strdup((char *)path.data))) {
            free(it->partition);
            rc = pm_nomem(e);
            break;
        }
        r->n++;
        int got = pm_io_read_meta(t->io, it->path, PM_META_MAX, &bytes, e);
        if (got == PAIMON_NOTFOUND) {
            pm_err_clear(e);
            it->created = 1;
            it->creation_time = now;
        } else if (got) {
            rc = got;
        } else {
            rc = success_file_parse(&bytes, it->path, &it->creation_time, e);
        }
        it->modification_time = now;
        bytes.len = 0;
    }
    for (size_t i = 0; !rc && !dry_run && i < r->n; i++) {
        pm_mark_done_item *it = &r->items[i];
        json.len = 0;
        /* Jackson's default pretty printer, as JsonSerdeUtil.toJson */
        if (pm_buf_printf(&json, "{\n  \"creationTime\" : %lld,\n  \"modificationTime\" : %lld\n}",
                          (long long)it->creation_time, (long long)it->modification_time)) {
            rc = pm_nomem(e);
            break;
        }
        dir.len = 0;
        if (pm_buf_printf(&dir, "%s/%s", t->root, it->partition) || pm_buf_cstr(&dir)) { rc = pm_nomem(e); break; }
        dir.len--;   /* the trailing '/' */
        ((char *)dir.data)[dir.len] = '\0';
        if (!(rc = pm_io_mkdirs(t->io, (char *)dir.data, e)))
            rc = pm_io_write_atomic(t->io, it->path, json.data, json.len, e);
        if (rc) pm_err_prefix(e, "marking partition '%s' done (%zu of %zu marked)", it->partition, i, r->n);
    }
    pm_buf_free(&dir);
    pm_buf_free(&path);
    pm_buf_free(&bytes);
    pm_buf_free(&json);
    if (rc) pm_mark_done_result_free(r);
    return rc;
}
