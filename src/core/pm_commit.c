/* Commit: ManifestEntry records -> manifest file + manifest lists + a new
 * snapshot, created atomically without replacing (Java FileStoreCommitImpl
 * 2.0, paimon-format.md §7). */
#include "pm_commit_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "pm_avro.h"
#include "pm_expire.h"

/* ---- options ------------------------------------------------------------ */

/* A commit option: the table's value when it parses, else Paimon's
 * default from pm_option_defaults (the one place defaults are written;
 * the Lua side reads the same table through paimon.core.defaults). */
enum opt_kind { OPT_INT, OPT_DURATION, OPT_SIZE };

static int parse_opt(const char *v, enum opt_kind k, int64_t *out) {
    pm_err e;
    if (!v) return -1;
    if (k == OPT_DURATION) return pm_parse_duration_ms(v, out, &e) == PAIMON_OK && *out >= 0 ? 0 : -1;
    if (k == OPT_SIZE) return pm_parse_memory_size(v, out, &e) == PAIMON_OK && *out > 0 ? 0 : -1;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (*end == ' ') end++;
    if (errno || end == v || *end || x < 0 || x > 0x7fffffffLL) return -1;
    *out = x;
    return 0;
}

static int64_t opt_value(const paimon_table *t, const char *key, enum opt_kind k) {
    int64_t v = 0;
    if (t && t->schema && parse_opt(pm_schema_option(t->schema, key), k, &v) == 0) return v;
    if (parse_opt(pm_schema_option_or_default(NULL, key), k, &v) == 0) return v;
    return 0;   /* not reached: every key used here has a default */
}

void pm_commit_opts_from_table(const paimon_table *t, pm_commit_opts *o) {
    memset(o, 0, sizeof *o);
    o->identifier = INT64_MAX;
    o->kind = "APPEND";
    o->codec = "zstandard";
    o->level = 1;
    o->max_retries = (int)opt_value(t, "commit.max-retries", OPT_INT);
    o->min_retry_wait_ms = opt_value(t, "commit.min-retry-wait", OPT_DURATION);
    o->max_retry_wait_ms = opt_value(t, "commit.max-retry-wait", OPT_DURATION);
    o->manifest_target_size = opt_value(t, "manifest.target-file-size", OPT_SIZE);
    o->full_compaction_threshold = opt_value(t, "manifest.full-compaction-threshold-size", OPT_SIZE);
    o->merge_min_count = (int)opt_value(t, "manifest.merge-min-count", OPT_INT);
    if (!t || !t->schema) return;
    const char *optimize = pm_schema_option(t->schema, "manifest.merge-optimize.enabled");
    o->merge_decode_only = optimize && !strcasecmp(optimize, "false");
    o->codec = pm_manifest_codec_for(pm_schema_option(t->schema, "manifest.compression"),
                                     pm_schema_option(t->schema, "avro.codec"));
}

/* ---- one commit attempt: written files ---------------------------------- */

static void attempt_forget(pm_attempt *a) { pm_strv_clear(&a->written); }

/* Delete every file this attempt wrote (or tried to write). A failed remove
 * is tried once more; after that it is ignored (an orphan at worst). */
static void attempt_cleanup(pm_attempt *a) {
    for (size_t i = 0; i < a->written.n; i++) {
        pm_err e2;
        int rc = pm_io_remove(a->t->io, a->written.v[i], &e2);
        if (rc != PAIMON_OK && rc != PAIMON_NOTFOUND) pm_io_remove(a->t->io, a->written.v[i], &e2);
    }
    attempt_forget(a);
}

/* Write a new file in manifest/ named <prefix>-<uuid>-<n> (prefix by kind:
 * manifest, manifest-list, index-manifest); *name malloc'd. */
int pm_attempt_write_file(pm_attempt *a, int kind, const pm_buf *bytes, char **name, pm_err *e) {
    *name = NULL;
    char nm[128];
    if (kind == PM_MF_LIST) snprintf(nm, sizeof nm, "manifest-list-%s-%d", a->uuid, a->n_list++);
    else if (kind == PM_MF_INDEX) snprintf(nm, sizeof nm, "index-manifest-%s-%d", a->uuid, a->n_index++);
    else snprintf(nm, sizeof nm, "manifest-%s-%d", a->uuid, a->n_manifest++);
    char *path = pm_table_manifest_path(a->t, nm);
    /* Recorded before writing: a failed write may still have left the file
     * (the error can come after the rename), and cleanup must remove it. */
    int rc = path ? pm_strv_push(&a->written, path) : PAIMON_NOMEM;
    if (!rc && !(*name = pm_strdup(nm))) rc = PAIMON_NOMEM;
    if (rc) {
        free(path);
        return pm_nomem(e);
    }
    rc = pm_io_write_atomic(a->t->io, path, bytes->data ? bytes->data : (const uint8_t *)"", bytes->len, e);
    free(path);
    if (rc) {
        free(*name);
        *name = NULL;
        return rc;
    }
    return PAIMON_OK;
}

/* ---- one attempt ------------------------------------------------------------ */

static int total_from_scan(paimon_table *t, const pm_snapshot *s, int64_t *total, pm_err *e) {
    pm_scan *sc;
    int rc = pm_scan_open(t, s, NULL, &sc, e);
    if (rc) return rc;
    const pm_manifest_entry *m;
    *total = 0;
    while ((rc = pm_scan_next(sc, &m, e)) == PAIMON_OK) *total += m->file.row_count;
    pm_scan_close(sc);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

static char *snapshot_path(const paimon_table *t, int64_t id) {
    char rel[64];
    snprintf(rel, sizeof rel, "snapshot/snapshot-%lld", (long long)id);
    return pm_path_join(t->branch_root, rel);
}

/* One file the new snapshot references, checked right before publishing;
 * what: "data file", "manifest", ... for the message. Paths on another
 * file system than the table's are not checked (orphan cleaning never
 * lists them); a table on s3:// has its own files checked. */
static int must_still_exist(paimon_table *t, const char *path, const char *what, pm_err *e) {
    if (!pm_uri_same_fileio(t->root, path)) return PAIMON_OK;
    int exists = 0;
    int rc = pm_io_exists(t->io, path, &exists, e);
    if (rc) {
        pm_err_prefix(e, "commit to %s aborted: cannot check that %s %s still exists", t->root, what, path);
        return rc;
    }
    if (!exists)
        return pm_fail(e, PAIMON_CONFLICT, "commit to %s aborted, nothing published: %s %s of this commit is "
                       "missing (deleted while the commit was in flight, e.g. by orphan cleaning with a young "
                       "cut-off)", t->root, what, path);
    return PAIMON_OK;
}

/* Every file the new snapshot newly references must still exist: a file of
 * a commit in flight is in no snapshot yet, so a concurrent orphan
 * cleaning (or a hand) may have deleted it, and publishing would break the
 * table for good; failing leaves it whole. One exists() per file: this
 * attempt's manifests, lists and index manifest, the data files it adds
 * with their extra files, and the index files it adds. What remains is a
 * deletion between this check and the snapshot link (docs/maintenance.md). */
static int check_new_files_exist(pm_attempt *a, const pm_manifest_entry *ents, size_t n, const pm_index_entry *ix,
                                 size_t n_ix, pm_err *e) {
    paimon_table *t = a->t;
    pm_buf path = {0}, extra = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; i < a->written.n && !rc; i++) rc = must_still_exist(t, a->written.v[i], "metadata file", e);
    for (size_t i = 0; i < n && !rc; i++) {
        if (ents[i].kind != PM_FILE_ADD) continue;
        if ((rc = pm_data_file_full_path(t, &ents[i], &path, e)) ||
            (rc = must_still_exist(t, (char *)path.data, "data file", e)))
            break;
        for (size_t k = 0; k < ents[i].file.extra_files.n && !rc; k++)
            if (!(rc = pm_extra_file_path((char *)path.data, ents[i].file.extra_files.v[k], t->root, &extra, e)))
                rc = must_still_exist(t, (char *)extra.data, "extra file", e);
    }
    for (size_t i = 0; i < n_ix && !rc; i++) {
        if (ix[i].kind != PM_FILE_ADD) continue;
        if (!(rc = pm_index_file_path(t, &ix[i], &path, e))) rc = must_still_exist(t, (char *)path.data, "index file", e);
    }
    pm_buf_free(&path);
    pm_buf_free(&extra);
    return rc;
}

/* What one attempt reads and builds; released by attempt_state_free. */
typedef struct attempt_state {
    int64_t lid;                       /* latest snapshot id seen (0: none) */
    pm_snapshot *latest;
    int64_t schema_id;
    pm_own_meta *before, *after, *delta;
    size_t n_before, cap_before, n_after, n_delta, cap_delta;
    char *base_name, *delta_name, *index_name;
    int64_t base_size, delta_size, delta_rows;
    pm_arena *ix_arena;
    pm_ixset ixs;
    char snap_uuid[37];
    pm_buf json;                       /* the new snapshot */
    char *path;                        /* where it goes */
    pm_attempt_outcome outcome;        /* FAILED until the snapshot write goes out */
} attempt_state;

static void attempt_state_free(attempt_state *st) {
    pm_snapshot_free(st->latest);
    pm_own_metas_free(st->before, st->n_before);
    pm_own_metas_free(st->after, st->n_after);
    pm_own_metas_free(st->delta, st->n_delta);
    free(st->base_name);
    free(st->delta_name);
    free(st->index_name);
    pm_ixset_free(&st->ixs);
    pm_arena_free(st->ix_arena);
    free(st->path);
    pm_buf_free(&st->json);
}

/* Retry after an uncertain attempt: did it commit after all? *landed =
 * the id of a snapshot with our (user, identifier, kind) after the one the
 * first uncertain attempt built on, else 0. When none is ours and every id
 * up to the last uncertain write reads as another writer's snapshot, no
 * write of ours landed (a no-replace write goes to exactly its id): the
 * uncertainty is resolved as failed. A snapshot that reads as missing
 * proves nothing (expired, or a store without read-after-write). */
static int find_landed_attempt(pm_attempt *a, int64_t lid, const char *kind, int64_t *landed, pm_err *e) {
    paimon_table *t = a->t;
    *landed = 0;
    int all_read = 1;
    for (int64_t i = a->scan_from + 1; i <= lid; i++) {
        pm_snapshot *got = NULL;
        int rc = pm_snapshot_read(t->io, t->branch_root, i, &got, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); all_read = 0; continue; }
        if (rc) return rc;
        int same = got->commit_user && !strcmp(got->commit_user, a->o->commit_user) &&
                   got->commit_identifier == a->o->identifier && got->commit_kind &&
                   !strcmp(got->commit_kind, kind);
        pm_snapshot_free(got);
        if (same) {
            *landed = i;
            return PAIMON_OK;
        }
    }
    if (all_read && lid >= a->uncertain_top) a->uncertain = 0;
    return PAIMON_OK;
}

/* This attempt's snapshot write may have landed: the next attempt looks
 * for it, and the commit cannot end as failed until that is resolved. */
static void mark_uncertain(pm_attempt *a, attempt_state *st) {
    st->outcome = PM_ATTEMPT_UNCERTAIN;
    if (!a->uncertain) {
        a->uncertain = 1;
        a->scan_from = st->lid;
    }
    if (st->lid + 1 > a->uncertain_top) a->uncertain_top = st->lid + 1;
    a->uncertain_id = st->lid + 1;
}

/* The latest snapshot (none on an empty table) and the newest schema id. */
static int read_latest(pm_attempt *a, attempt_state *st, pm_err *e) {
    paimon_table *t = a->t;
    int64_t *sids = NULL;
    size_t n_sids = 0;
    int rc = pm_schema_list_ids(t->io, t->branch_root, &sids, &n_sids, e);
    if (rc) return rc;
    st->schema_id = n_sids ? sids[n_sids - 1] : (t->schema ? t->schema->id : 0);
    /* the latest's schema must exist: the listing just read says which
     * do, so reading it needs no request for its schema file */
    for (size_t i = 0; t->schemas_known && i < n_sids; i++) pm_schema_known_note(t->schemas_known, sids[i]);
    free(sids);
    if (st->lid > 0) rc = pm_snapshot_read_known(t->io, t->branch_root, t->schemas_known, st->lid, &st->latest, e);
    return rc;
}

/* The latest's base and delta manifests, read once for the conflict check
 * and the new base list. */
static int read_latest_manifests(pm_attempt *a, attempt_state *st, pm_err *e) {
    const pm_snapshot *l = st->latest;
    int rc;
    if (l && l->base_manifest_list &&
        (rc = pm_own_metas_read(a->t, l->base_manifest_list, &st->before, &st->n_before, &st->cap_before, e)))
        return rc;
    if (l && l->delta_manifest_list &&
        (rc = pm_own_metas_read(a->t, l->delta_manifest_list, &st->before, &st->n_before, &st->cap_before, e)))
        return rc;
    return PAIMON_OK;
}

/* Index changes: a new complete index manifest (step 9), combined and
 * checked before anything else is written. */
static int write_index_changes(pm_attempt *a, attempt_state *st, const pm_index_entry *ix, size_t n_ix,
                               pm_err *e) {
    if (!n_ix) return PAIMON_OK;
    if (!(st->ix_arena = pm_arena_new(1 << 14))) return pm_nomem(e);
    int rc = pm_combine_index(a->t, st->latest, ix, n_ix, st->ix_arena, &st->ixs, e);
    if (!rc) rc = pm_write_index_manifest(a, &st->ixs, &st->index_name, e);
    return rc;
}

/* Base manifest list = merged manifests of latest (base + delta). */
static int write_base_list(pm_attempt *a, attempt_state *st, pm_err *e) {
    int rc;
    if ((rc = pm_merge_manifests(a, st->before, st->n_before, &st->after, &st->n_after, e))) return rc;
    return pm_write_manifest_list(a, st->after, st->n_after, &st->base_name, &st->base_size, e);
}

/* Delta manifest(s) of this commit's entries + their list. */
static int write_delta_list(pm_attempt *a, attempt_state *st, const pm_manifest_entry *ents, size_t n, pm_err *e) {
    int rc = PAIMON_OK;
    st->delta_rows = 0;
    if (n) {
        pm_mroll r;
        pm_mroll_init(&r, a, &st->delta, &st->n_delta, &st->cap_delta);
        for (size_t i = 0; i < n && !rc; i++) {
            rc = pm_mroll_add(&r, &ents[i], e);
            st->delta_rows += ents[i].kind == PM_FILE_ADD ? ents[i].file.row_count : -ents[i].file.row_count;
        }
        if (!rc) rc = pm_mroll_finish(&r, e);
        else pm_mroll_abort(&r);
        if (rc) return rc;
    }
    return pm_write_manifest_list(a, st->delta, st->n_delta, &st->delta_name, &st->delta_size, e);
}

/* The new snapshot's JSON and path (id = latest + 1). */
static int build_snapshot(pm_attempt *a, attempt_state *st, const char *kind, size_t n_ix, pm_err *e) {
    paimon_table *t = a->t;
    const pm_snapshot *latest = st->latest;
    int64_t prev_total = 0;
    int rc;
    if (latest) {
        if (latest->total_record_count.has) prev_total = latest->total_record_count.v;
        else if ((rc = total_from_scan(t, latest, &prev_total, e))) return rc;
    }
    pm_uuid4(st->snap_uuid);
    pm_snapshot s;
    memset(&s, 0, sizeof s);
    s.version = 3;
    s.uuid = st->snap_uuid;
    s.id = st->lid + 1;
    s.schema_id = st->schema_id;
    s.base_manifest_list = st->base_name;
    s.base_manifest_list_size = (pm_opt_i64){1, st->base_size};
    s.delta_manifest_list = st->delta_name;
    s.delta_manifest_list_size = (pm_opt_i64){1, st->delta_size};
    s.index_manifest = n_ix ? st->index_name : latest ? latest->index_manifest : NULL;
    s.commit_user = (char *)a->o->commit_user;
    s.commit_identifier = a->o->identifier;
    s.commit_kind = (char *)kind;
    s.time_millis = pm_now_millis();
    s.total_record_count = (pm_opt_i64){1, prev_total + st->delta_rows};
    s.delta_record_count = (pm_opt_i64){1, st->delta_rows};
    if (latest) s.watermark = latest->watermark;
    if (latest && latest->schema_id == st->schema_id) s.statistics = latest->statistics;
    s.next_row_id = (pm_opt_i64){1, latest && latest->next_row_id.has ? latest->next_row_id.v : 0};
    if (pm_snapshot_to_json(&s, &st->json)) return pm_nomem(e);
    if (!(st->path = snapshot_path(t, s.id))) return pm_nomem(e);
    return PAIMON_OK;
}

/* 1 when a snapshot with an id below `id` exists (listed); 0 when none
 * does or the listing fails. */
static int snapshot_below_exists(paimon_table *t, int64_t id) {
    int64_t *ids = NULL;
    size_t n = 0;
    pm_err e;
    int below = pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, &e) == PAIMON_OK && n > 0 && ids[0] < id;
    free(ids);
    return below;
}

/* 1 when `now` is not the snapshot we built on: a fast-forward deleted
 * ours and wrote the branch's under the same id. Snapshot files are
 * otherwise never rewritten, so their manifest lists (uuid-named) tell. */
static int snapshot_replaced(const pm_snapshot *built_on, const pm_snapshot *now) {
    const char *a[2] = {built_on->base_manifest_list, built_on->delta_manifest_list};
    const char *b[2] = {now->base_manifest_list, now->delta_manifest_list};
    for (int i = 0; i < 2; i++)
        if ((a[i] == NULL) != (b[i] == NULL) || (a[i] && strcmp(a[i], b[i]))) return 1;
    return 0;
}

/* After our create: the snapshot we built on must still exist, as it was.
 * If an expiration deleted it before our create, it also deleted this id
 * (committed by someone else; snapshot files go in ascending order) and
 * kept newer ones: we re-created an expired id below EARLIEST, a lost
 * commit, and our LATEST hint would send readers back to it. Then a newer
 * snapshot exists; take ours back and retry on the real latest. If an
 * older snapshot is still there, expiration (ascending) did not remove
 * the base: a rollback or a fast-forward did (newest first), and a
 * rollback deletes the files of the snapshots it removed, which ours
 * names; take ours back too and retry on the new latest. A base that is
 * there but another snapshot (a fast-forward wrote the branch's) is the
 * same lost race. (Otherwise we are the latest and an expiration removed
 * our base after we committed: keep it.) The base is read, not HEADed:
 * one request either way. Returns rc unchanged when the base is there. */
static int check_base_survived(pm_attempt *a, attempt_state *st, int rc, pm_err *e) {
    paimon_table *t = a->t;
    pm_snapshot *now = NULL;
    int64_t now_latest = 0;
    pm_err e2;
    int r = pm_snapshot_read_known(t->io, t->branch_root, t->schemas_known, st->lid, &now, &e2);
    int take_back = r == PAIMON_OK && st->latest && snapshot_replaced(st->latest, now);
    if (r == PAIMON_NOTFOUND)
        take_back = pm_snapshot_latest_id(t->io, t->branch_root, &now_latest, &e2) == PAIMON_OK &&
                    (now_latest > st->lid + 1 || snapshot_below_exists(t, st->lid));
    pm_snapshot_free(now);
    if (take_back) {
        if (pm_io_remove(t->io, st->path, &e2) == PAIMON_OK) {
            st->outcome = PM_ATTEMPT_FAILED;
            rc = pm_fail(e, PAIMON_EXISTS, "%s: snapshot %lld was expired, rolled back or replaced while committing "
                         "on top of it", t->root, (long long)st->lid);
        } else {   /* our snapshot file stays: keep what it names */
            mark_uncertain(a, st);
            rc = pm_fail(e, PAIMON_UNCERTAIN, "%s: snapshot %lld was expired, rolled back or replaced while "
                         "committing on top of it and %s cannot be removed: %s", t->root, (long long)st->lid,
                         st->path, e2.msg);
        }
    }
    return rc;
}

/* The create failed with neither success, "exists" nor "uncertain" (a
 * FileIO error that does not say whether the write was applied): read the
 * id back. Ours (our uuid, or our delta manifest list, whose name only
 * this attempt uses): committed. Another writer's snapshot: failed, a lost
 * race (a no-replace write cannot have replaced it). Anything else stays
 * uncertain: nothing is deleted, and the next attempt looks for it. */
static int settle_unknown_outcome(pm_attempt *a, attempt_state *st, int rc, pm_err *e) {
    pm_snapshot *got = NULL;
    pm_err e2;
    int r = pm_snapshot_read(a->t->io, a->t->branch_root, st->lid + 1, &got, &e2);
    int ours = r == PAIMON_OK && ((got->uuid && !strcmp(got->uuid, st->snap_uuid)) ||
                                  (got->delta_manifest_list && st->delta_name &&
                                   !strcmp(got->delta_manifest_list, st->delta_name)));
    if (ours) {
        st->outcome = PM_ATTEMPT_COMMITTED;
        rc = PAIMON_OK;
        pm_err_clear(e);
    } else if (r == PAIMON_OK) {
        st->outcome = PM_ATTEMPT_FAILED;
        pm_err_prefix(e, "%s: snapshot %lld is another writer's", a->t->root, (long long)(st->lid + 1));
        rc = PAIMON_EXISTS;
    } else {
        mark_uncertain(a, st);
    }
    pm_snapshot_free(got);
    return rc;
}

/* Create the snapshot file without replacing and classify the outcome:
 * committed; failed only when the FileIO proved the id another writer's
 * (PAIMON_EXISTS); PAIMON_UNCERTAIN from the FileIO (applied or not, it
 * cannot tell: a 412 whose key reads as missing, a durable-sync failure)
 * is uncertain and final; any other error is settled by reading back. */
static int publish(pm_attempt *a, attempt_state *st, pm_err *e) {
    paimon_table *t = a->t;
    st->outcome = PM_ATTEMPT_UNCERTAIN;   /* from here on a snapshot of ours may exist */
    int rc = pm_io_create_no_replace(t->io, st->path, st->json.data, st->json.len, e);
    if (rc == PAIMON_OK) {
        st->outcome = PM_ATTEMPT_COMMITTED;
        if (st->lid > 0) rc = check_base_survived(a, st, rc, e);
    } else if (rc == PAIMON_EXISTS) {
        st->outcome = PM_ATTEMPT_FAILED;
    } else if (rc == PAIMON_UNCERTAIN) {
        mark_uncertain(a, st);
    } else {
        rc = settle_unknown_outcome(a, st, rc, e);
    }
    return rc;
}

/* A manifest or snapshot of our base vanished while we read it: if the
 * base snapshot itself is gone, an expiration overtook us. That is a lost
 * race (retry on the new latest), not corruption. */
static int base_expired_is_lost_race(pm_attempt *a, const attempt_state *st, int rc) {
    if (rc != PAIMON_NOTFOUND || st->outcome != PM_ATTEMPT_FAILED || st->lid <= 0) return rc;
    char *sp = snapshot_path(a->t, st->lid);
    int exists = 1;
    pm_err ignored = {0};
    if (sp && pm_io_exists(a->t->io, sp, &exists, &ignored) == PAIMON_OK && !exists) rc = PAIMON_EXISTS;
    free(sp);
    return rc;
}

/* The steps of an attempt on the latest snapshot: read it, detect
 * conflicts, write manifests, build the snapshot, check that the new files
 * still exist, publish. */
static int build_and_publish(pm_attempt *a, attempt_state *st, const pm_manifest_entry *ents, size_t n,
                             const pm_index_entry *ix, size_t n_ix, const char *kind, int need_check, pm_err *e) {
    int rc;
    if ((rc = read_latest(a, st, e)) || (rc = read_latest_manifests(a, st, e))) return rc;
    if (need_check && (rc = pm_check_conflicts(a->t, st->latest, st->before, st->n_before, ents, n,
                                               !strcmp(kind, "OVERWRITE"), e)))
        return rc;
    if ((rc = write_index_changes(a, st, ix, n_ix, e))) return rc;
    if ((rc = write_base_list(a, st, e))) return rc;
    if ((rc = write_delta_list(a, st, ents, n, e))) return rc;
    if ((rc = build_snapshot(a, st, kind, n_ix, e))) return rc;
    if ((rc = check_new_files_exist(a, ents, n, ix, n_ix, e))) return rc;
    return publish(a, st, e);
}

/* One attempt: *outcome committed (PAIMON_OK, *out_id set), failed
 * (PAIMON_EXISTS: lost the race; else why; this attempt's files removed)
 * or uncertain (the error; its files kept). */
static int try_commit_once(pm_attempt *a, const pm_manifest_entry *ents, size_t n, const pm_index_entry *ix,
                           size_t n_ix, const char *kind, int need_check, int64_t *out_id,
                           pm_attempt_outcome *outcome, pm_err *e) {
    paimon_table *t = a->t;
    attempt_state st;
    memset(&st, 0, sizeof st);
    st.outcome = PM_ATTEMPT_FAILED;
    pm_uuid4(a->uuid);
    a->n_manifest = a->n_list = a->n_index = 0;
    a->write_hint = 1;

    int64_t landed = 0;
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &st.lid, e);
    if (rc == PAIMON_NOTFOUND) { st.lid = 0; rc = PAIMON_OK; pm_err_clear(e); }
    if (!rc && a->uncertain) rc = find_landed_attempt(a, st.lid, kind, &landed, e);
    if (!rc && !landed && a->o->expect_latest > 0 && st.lid != a->o->expect_latest)
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: the latest snapshot is %lld, not %lld: another commit came first",
                     t->root, (long long)st.lid, (long long)a->o->expect_latest);
    if (!rc && landed) {
        *out_id = landed;
        st.outcome = PM_ATTEMPT_COMMITTED;
        a->write_hint = landed == st.lid;
    } else if (!rc && (rc = build_and_publish(a, &st, ents, n, ix, n_ix, kind, need_check, e)) == PAIMON_OK) {
        *out_id = st.lid + 1;
    }
    rc = base_expired_is_lost_race(a, &st, rc);
    *outcome = st.outcome;
    if (st.outcome == PM_ATTEMPT_FAILED) attempt_cleanup(a);   /* proven: nothing of ours is visible */
    else attempt_forget(a);
    attempt_state_free(&st);
    return rc;
}

/* The end of a commit with an unresolved uncertain attempt, whatever the
 * last attempt said (a conflict found after an uncertain write is no proof
 * that the write did not land): PAIMON_UNCERTAIN, naming the snapshot. */
static int commit_uncertain(pm_attempt *a, pm_err *e) {
    char *path = snapshot_path(a->t, a->uncertain_id);
    pm_err_prefix(e, "commit outcome uncertain: snapshot %lld (%s) may or may not have been created; every file it "
                  "may reference is kept. Once it reads, re-run the same commit (same commit user and identifier): "
                  "it reports the commit if it landed", (long long)a->uncertain_id, path ? path : "?");
    free(path);
    e->code = PAIMON_UNCERTAIN;
    return PAIMON_UNCERTAIN;
}

static void retry_sleep(const pm_commit_opts *o, int retry) {
    double w = (double)o->min_retry_wait_ms;
    for (int i = 0; i < retry && w < (double)o->max_retry_wait_ms; i++) w *= 2;
    int64_t ms = w > (double)o->max_retry_wait_ms ? o->max_retry_wait_ms : (int64_t)w;
    int64_t jmax = ms / 5;
    if (jmax < 1) jmax = 1;
    char u[37];
    pm_uuid4(u);
    unsigned long r = strtoul((char[9]){u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], 0}, NULL, 16);
    ms += (int64_t)(r % (unsigned long)jmax);
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int pm_commit(paimon_table *t, const pm_manifest_entry *entries, size_t n, const pm_commit_opts *o,
              int64_t *snapshot_id, pm_err *e) {
    return pm_commit_with_index(t, entries, n, NULL, 0, o, snapshot_id, e);
}

int pm_commit_with_index(paimon_table *t, const pm_manifest_entry *entries, size_t n,
                         const pm_index_entry *index_entries, size_t n_index, const pm_commit_opts *o,
                         int64_t *snapshot_id, pm_err *e) {
    if (!t || !o || (n && !entries) || (n_index && !index_entries))
        return pm_fail(e, PAIMON_MISUSE, "pm_commit: NULL argument");
    if (!o->commit_user || !*o->commit_user) return pm_fail(e, PAIMON_MISUSE, "commit: commit_user is required");
    const char *kind = o->kind ? o->kind : "APPEND";
    if (strcmp(kind, "APPEND") && strcmp(kind, "OVERWRITE") && strcmp(kind, "COMPACT"))
        return pm_fail(e, PAIMON_MISUSE, "commit: unknown commit kind '%s' (APPEND, OVERWRITE or COMPACT)", kind);
    if (!o->codec) return pm_fail(e, PAIMON_MISUSE, "commit: no manifest codec");
    int rc = pm_table_check_manifest_format(t, e);
    if (rc) return rc;
    int has_delete = 0;
    for (size_t i = 0; i < n; i++) {
        const pm_manifest_entry *m = &entries[i];
        if (m->kind != PM_FILE_ADD && m->kind != PM_FILE_DELETE)
            return pm_fail(e, PAIMON_MISUSE, "commit: entry %zu has invalid kind %d", i, (int)m->kind);
        if (!m->file.file_name || !*m->file.file_name || strchr(m->file.file_name, '/'))
            return pm_fail(e, PAIMON_MISUSE, "commit: entry %zu has an invalid file name", i);
        if (!m->partition.ptr || pm_binrow_arity(m->partition.ptr, m->partition.len) != (int32_t)t->n_part)
            return pm_fail(e, PAIMON_MISUSE,
                           "commit: entry %zu (%s) has partition bytes of the wrong arity (the table has %zu "
                           "partition fields)", i, m->file.file_name, t->n_part);
        if (m->kind == PM_FILE_DELETE) has_delete = 1;
    }
    for (size_t i = 0; i < n_index; i++) {
        const pm_index_entry *x = &index_entries[i];
        if (x->kind != PM_FILE_ADD && x->kind != PM_FILE_DELETE)
            return pm_fail(e, PAIMON_MISUSE, "commit: index entry %zu has invalid kind %d", i, (int)x->kind);
        if (!x->file_name || !*x->file_name || strchr(x->file_name, '/'))
            return pm_fail(e, PAIMON_MISUSE, "commit: index entry %zu has an invalid file name", i);
        if (!x->index_type || !*x->index_type)
            return pm_fail(e, PAIMON_MISUSE, "commit: index entry %zu (%s) has no index type", i, x->file_name);
        if (!x->partition.ptr || pm_binrow_arity(x->partition.ptr, x->partition.len) != (int32_t)t->n_part)
            return pm_fail(e, PAIMON_MISUSE,
                           "commit: index entry %zu (%s) has partition bytes of the wrong arity (the table has %zu "
                           "partition fields)", i, x->file_name, t->n_part);
        if (x->kind == PM_FILE_DELETE || !strcmp(x->index_type, PM_IX_DV)) has_delete = 1;
    }
    /* Java 2.0 (containsFileDeletionOrDeletionVectors): an append carrying
     * deletions (data or index files) or deletion vectors becomes an
     * OVERWRITE commit with conflict detection. */
    if (has_delete && !strcmp(kind, "APPEND")) kind = "OVERWRITE";
    int need_check = has_delete || strcmp(kind, "APPEND") != 0;

    /* conflict checks and merges open many manifests written with one
     * schema: parse it once (a merge of 200 parsed it 200 times) */
    pm_avro_schema_cache *sc = pm_avro_schema_cache_bound() ? NULL : pm_avro_schema_cache_new();
    if (sc) pm_avro_schema_cache_bind(sc);
    pm_attempt a;
    memset(&a, 0, sizeof a);
    a.t = t;
    a.o = o;
    int64_t id = 0;
    pm_attempt_outcome out = PM_ATTEMPT_FAILED;
    for (int retry = 0;; retry++) {
        rc = try_commit_once(&a, entries, n, index_entries, n_index, kind, need_check, &id, &out, e);
        if (out == PM_ATTEMPT_COMMITTED) break;
        /* A lost race is retried, and so is a snapshot write whose outcome
         * the next attempt can look for (a FileIO error); failures before
         * publishing, conflicts and the FileIO's own "uncertain" are final. */
        int again = out == PM_ATTEMPT_FAILED ? rc == PAIMON_EXISTS : rc != PAIMON_UNCERTAIN;
        if (!again) break;
        if (retry >= o->max_retries) {
            if (rc == PAIMON_EXISTS && !a.uncertain)
                rc = pm_fail(e, PAIMON_CONFLICT,
                             "commit to %s gave up after %d retries: snapshot ids were taken by concurrent commits",
                             t->root, retry);
            else
                pm_err_prefix(e, "gave up after %d retries", retry);
            break;
        }
        retry_sleep(o, retry);
    }
    attempt_forget(&a);
    if (sc) {
        pm_avro_schema_cache_bind(NULL);
        pm_avro_schema_cache_free(sc);
    }
    if (out != PM_ATTEMPT_COMMITTED && a.uncertain) rc = commit_uncertain(&a, e);
    if (out != PM_ATTEMPT_COMMITTED) return rc ? rc : pm_fail(e, PAIMON_ERROR, "commit to %s failed", t->root);
    if (snapshot_id) *snapshot_id = id;
    if (a.write_hint) {
        pm_err e2;
        pm_hint_write(t->io, t->branch_root, "LATEST", id, &e2);   /* advisory only */
    }
    return PAIMON_OK;
}

/* found[i] for the ADDs of one manifest list */
static int find_added_in_list(paimon_table *t, const char *list, pm_set *names, const pm_manifest_entry *entries,
                              size_t n, uint8_t *found, pm_err *e) {
    pm_mfile *mf = NULL;
    size_t nm = 0;
    int rc = pm_read_manifest_list(t, list, &mf, &nm, e);
    for (size_t i = 0; !rc && i < nm; i++) {
        pm_manifest_reader *r;
        if ((rc = pm_table_open_manifest(t, mf[i].name, PM_MANIFEST_FILE, &r, e))) break;
        pm_manifest_names_only(r);
        const pm_manifest_entry *m;
        while ((rc = pm_manifest_next_entry(r, &m, e)) == PAIMON_OK) {
            if (m->kind != PM_FILE_ADD || !pm_set_contains(names, m->file.file_name, strlen(m->file.file_name)))
                continue;
            for (size_t k = 0; k < n; k++)
                if (entries[k].file.file_name && !strcmp(entries[k].file.file_name, m->file.file_name)) found[k] = 1;
        }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    pm_mfiles_free(mf, nm);
    return rc;
}

int pm_commit_find_added(paimon_table *t, int64_t from_id, const pm_manifest_entry *entries, size_t n,
                         uint8_t *found, pm_err *e) {
    memset(found, 0, n);
    pm_set *names = pm_set_new();
    if (!names) return pm_fail(e, PAIMON_NOMEM, "out of memory");
    int rc = PAIMON_OK;
    for (size_t k = 0; !rc && k < n; k++)
        if (entries[k].kind == PM_FILE_ADD && entries[k].file.file_name &&
            pm_set_add(names, entries[k].file.file_name, strlen(entries[k].file.file_name)) < 0)
            rc = pm_fail(e, PAIMON_NOMEM, "out of memory");
    int64_t latest = 0, earliest = 1;
    if (!rc) {
        rc = pm_snapshot_latest_id(t->io, t->branch_root, &latest, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; latest = 0; }
    }
    if (!rc && latest > 0) {
        pm_err e2;
        if (pm_snapshot_earliest_id(t->io, t->branch_root, &earliest, &e2) != PAIMON_OK) earliest = 1;
    }
    for (int64_t id = from_id > earliest ? from_id : earliest; !rc && id <= latest; id++) {
        pm_snapshot *s;
        rc = pm_snapshot_read(t->io, t->branch_root, id, &s, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; continue; }
        if (rc) break;
        const char *lists[2] = {s->delta_manifest_list, s->changelog_manifest_list};
        for (int i = 0; i < 2 && !rc; i++)
            if (lists[i]) rc = find_added_in_list(t, lists[i], names, entries, n, found, e);
        if (rc) pm_err_prefix(e, "cannot tell whether snapshot %lld added these files", (long long)id);
        pm_snapshot_free(s);
    }
    pm_set_free(names);
    return rc;
}

int pm_commit_last_identifier(paimon_table *t, const char *commit_user, int64_t *identifier, pm_err *e) {
    int64_t snapshot_id;
    return pm_commit_last_of_user(t, commit_user, identifier, &snapshot_id, e);
}

int pm_commit_last_of_user(paimon_table *t, const char *commit_user, int64_t *identifier, int64_t *snapshot_id,
                           pm_err *e) {
    *identifier = INT64_MIN;
    *snapshot_id = 0;
    if (!commit_user) return pm_fail(e, PAIMON_MISUSE, "commit_user is required");
    int64_t latest, earliest = 1;
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &latest, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (rc) return rc;
    pm_err e2;
    if (pm_snapshot_earliest_id(t->io, t->branch_root, &earliest, &e2) != PAIMON_OK) earliest = 1;
    for (int64_t id = latest; id >= earliest; id--) {
        pm_snapshot *s;
        rc = pm_snapshot_read(t->io, t->branch_root, id, &s, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
        if (rc) return rc;
        int match = s->commit_user && !strcmp(s->commit_user, commit_user);
        if (match) { *identifier = s->commit_identifier; *snapshot_id = id; }
        pm_snapshot_free(s);
        if (match) return PAIMON_OK;
    }
    return PAIMON_OK;
}

