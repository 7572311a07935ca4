/* Rollback and rollback as latest (pm_rollback.h has the rules). */
#include "pm_rollback.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pm_branches.h"
#include "pm_commit.h"
#include "pm_consumers.h"
#include "pm_protect.h"
#include "pm_meta.h"
#include "pm_refs.h"
#include "pm_set.h"
#include "pm_tags.h"

void pm_rollback_result_free(pm_rollback_result *r) {
    if (!r) return;
    pm_clean_result_free(&r->clean);
    free(r->snapshots);
    pm_strv_free(r->tags, r->n_tags);
    free(r->changelogs);
    free(r->protection_tag);
    r->protection_tag = NULL;
    r->snapshots = NULL;
    r->tags = NULL;
    r->changelogs = NULL;
    r->n_snapshots = r->n_tags = r->n_changelogs = 0;
}

static int push_id(int64_t **v, size_t *n, int64_t id, pm_err *e) {
    int64_t *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) return pm_nomem(e);
    nv[(*n)++] = id;
    *v = nv;
    return PAIMON_OK;
}

static int snapshot_file(const paimon_table *t, int64_t id, pm_buf *out, pm_err *e) {
    out->len = 0;
    return pm_buf_printf(out, "%s/snapshot/snapshot-%lld", t->branch_root, (long long)id) ? pm_nomem(e) : PAIMON_OK;
}

static int snapshot_exists(paimon_table *t, int64_t id, int *ex, pm_err *e) {
    pm_buf p = {0};
    int rc = snapshot_file(t, id, &p, e);
    if (!rc) rc = pm_io_exists(t->io, (char *)p.data, ex, e);
    pm_buf_free(&p);
    return rc;
}

/* ---- the target ------------------------------------------------------------- */

/* Java earlierOrEqualTimeMills: the newest snapshot with timeMillis <= ts. */
static int snapshot_at_time(paimon_table *t, int64_t ts, pm_snapshot **out, pm_err *e) {
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, e);
    for (size_t i = n; !rc && i-- > 0;) {
        pm_snapshot *s;
        rc = pm_snapshot_read(t->io, t->branch_root, ids[i], &s, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; continue; }
        if (rc) break;
        if (s->time_millis <= ts) { *out = s; free(ids); return PAIMON_OK; }
        pm_snapshot_free(s);
    }
    free(ids);
    if (rc) return rc;
    return pm_fail(e, PAIMON_NOTFOUND, "%s: no snapshot at or before timestamp %lld", t->branch_root, (long long)ts);
}

/* Java's SnapshotManager.earlierOrEqualWatermark (rollback_to_watermark),
 * the same search so that the same snapshot is found: a binary search
 * over [first snapshot with a watermark, latest] that assumes watermarks
 * never decrease (Java's commit carries the latest one forward); a
 * snapshot without one (absent or Long.MIN_VALUE) stands at the place of
 * the nearest earlier one that has one; on an exact match the search
 * stops there, so among several snapshots with the watermark W the one
 * the search meets first is the target, as in Java. */
static int wm_missing(const pm_snapshot *s) { return !s->watermark.has || s->watermark.v == INT64_MIN; }

static int read_at(paimon_table *t, int64_t id, pm_snapshot **s, pm_err *e) {
    pm_snapshot_free(*s);
    *s = NULL;
    int rc = pm_snapshot_read(t->io, t->branch_root, id, s, e);
    if (rc) pm_err_prefix(e, "rollback to a watermark: reading snapshot %lld", (long long)id);
    return rc;
}

static int snapshot_at_watermark(paimon_table *t, int64_t wm, pm_snapshot **out, pm_err *e) {
    int64_t lo = 0, hi = 0;
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &hi, e);
    if (!rc) rc = pm_snapshot_earliest_id(t->io, t->branch_root, &lo, e);
    if (rc == PAIMON_NOTFOUND) {
        pm_err_clear(e);
        return pm_fail(e, PAIMON_NOTFOUND, "%s: no snapshot: nothing to roll back", t->branch_root);
    }
    if (rc) return rc;
    pm_snapshot *s = NULL, *found = NULL;
    if ((rc = read_at(t, lo, &s, e))) return rc;
    while (wm_missing(s) && lo < hi)
        if ((rc = read_at(t, ++lo, &s, e))) return rc;
    int none = wm_missing(s) || s->watermark.v > wm;
    while (!rc && !none && lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2, pos = mid;
        if ((rc = read_at(t, pos, &s, e))) break;
        while (wm_missing(s) && pos > lo)
            if ((rc = read_at(t, --pos, &s, e))) break;
        if (rc) break;
        if (wm_missing(s)) { lo = mid + 1; continue; }
        if (s->watermark.v > wm) { hi = pos - 1; continue; }
        pm_snapshot_free(found);
        found = s;
        s = NULL;
        if (found->watermark.v == wm) break;
        lo = mid + 1;
    }
    pm_snapshot_free(s);
    if (!rc && !found)
        rc = pm_fail(e, PAIMON_NOTFOUND, "%s: no snapshot with a watermark at or before %lld", t->branch_root,
                     (long long)wm);
    if (rc) { pm_snapshot_free(found); return rc; }
    *out = found;
    return PAIMON_OK;
}

/* A tag with snapshot id `id` (Java's rollback_to_as_latest findSnapshot). */
static int tag_with_id(paimon_table *t, int64_t id, pm_snapshot **out, pm_err *e) {
    char **names = NULL;
    size_t n = 0;
    int rc = pm_tag_list(t->io, t->branch_root, &names, &n, e);
    for (size_t i = 0; !rc && i < n && !*out; i++) {
        pm_snapshot *s;
        if ((rc = pm_tag_read(t->io, t->branch_root, names[i], &s, e))) break;
        if (s->id == id) *out = s;
        else pm_snapshot_free(s);
    }
    pm_strv_free(names, n);
    return rc;
}

/* Tag fields dropped: Java Tag.trimToSnapshot. */
static void trim_to_snapshot(pm_snapshot *s) {
    free(s->tag_create_time);
    free(s->tag_time_retained);
    s->tag_create_time = s->tag_time_retained = NULL;
    s->explicit_nulls &= ~(PM_SNAP_NULL_TAG_CREATE_TIME | PM_SNAP_NULL_TAG_TIME_RETAINED);
}

static int resolve_target(paimon_table *t, const pm_rollback_opts *o, pm_snapshot **out, int *from_tag, pm_err *e) {
    *out = NULL;
    *from_tag = 0;
    int given = (o->to_snapshot > 0) + (o->to_tag != NULL) + (o->has_timestamp != 0) + (o->has_watermark != 0);
    if (given != 1)
        return pm_fail(e, PAIMON_MISUSE, "rollback: give exactly one of a snapshot id, a tag, a timestamp or a watermark");
    int rc;
    if (o->to_tag) {
        rc = pm_tag_read(t->io, t->branch_root, o->to_tag, out, e);
        if (rc) return rc;
        *from_tag = 1;
    } else if (o->has_timestamp) {
        if ((rc = snapshot_at_time(t, o->to_timestamp_ms, out, e))) return rc;
    } else if (o->has_watermark) {
        if ((rc = snapshot_at_watermark(t, o->to_watermark, out, e))) return rc;
    } else {
        rc = pm_snapshot_read(t->io, t->branch_root, o->to_snapshot, out, e);
        if (rc == PAIMON_NOTFOUND && o->as_latest) {
            pm_err_clear(e);
            if ((rc = tag_with_id(t, o->to_snapshot, out, e))) return rc;
            if (!*out) rc = PAIMON_NOTFOUND;
            *from_tag = *out != NULL;
        }
        if (rc == PAIMON_NOTFOUND)
            return pm_fail(e, PAIMON_NOTFOUND, "%s: snapshot %lld to roll back to does not exist", t->branch_root,
                           (long long)o->to_snapshot);
        if (rc) return rc;
    }
    trim_to_snapshot(*out);
    return PAIMON_OK;
}

/* ---- as latest ---------------------------------------------------------------- */

typedef struct entries {
    pm_arena *arena;
    pm_manifest_entry *v;
    size_t n, cap;
    pm_index_entry *ix;
    size_t n_ix, cap_ix;
} entries;

static int entries_push(entries *x, const pm_manifest_entry *m, int kind, pm_err *e) {
    if (x->n == x->cap) {
        size_t nc = x->cap ? 2 * x->cap : 64;
        pm_manifest_entry *nv = realloc(x->v, nc * sizeof *nv);
        if (!nv) return pm_nomem(e);
        x->v = nv;
        x->cap = nc;
    }
    if (pm_manifest_entry_copy(x->arena, m, &x->v[x->n])) return pm_nomem(e);
    x->v[x->n++].kind = kind;
    return PAIMON_OK;
}

static int index_push(entries *x, const pm_index_entry *m, int kind, pm_err *e) {
    if (x->n_ix == x->cap_ix) {
        size_t nc = x->cap_ix ? 2 * x->cap_ix : 16;
        pm_index_entry *nv = realloc(x->ix, nc * sizeof *nv);
        if (!nv) return pm_nomem(e);
        x->ix = nv;
        x->cap_ix = nc;
    }
    if (pm_index_entry_copy(x->arena, m, &x->ix[x->n_ix])) return pm_nomem(e);
    x->ix[x->n_ix++].kind = kind;
    return PAIMON_OK;
}

/* Identifiers of s's live files into ids; with `other`, every live file of
 * s not in other becomes an entry of `kind`. */
static int live_diff(paimon_table *t, const pm_snapshot *s, pm_set *ids, const pm_set *other, int kind, entries *x,
                     pm_err *e) {
    pm_scan *sc;
    int rc = pm_scan_open(t, s, NULL, &sc, e);
    if (rc) return rc;
    pm_buf id = {0};
    const pm_manifest_entry *m;
    while ((rc = pm_scan_next(sc, &m, e)) == PAIMON_OK) {
        id.len = 0;
        if (pm_file_identifier(m, &id)) { rc = pm_nomem(e); break; }
        if (ids && pm_set_add(ids, id.data, id.len) < 0) { rc = pm_nomem(e); break; }
        if (other && !pm_set_contains(other, id.data, id.len) && (rc = entries_push(x, m, kind, e))) break;
    }
    pm_buf_free(&id);
    pm_scan_close(sc);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

static int index_key(const pm_index_entry *ie, pm_buf *out) {
    out->len = 0;
    if (pm_buf_printf(out, "%s/%d/%s/", ie->index_type ? ie->index_type : "", (int)ie->bucket,
                      ie->file_name ? ie->file_name : ""))
        return -1;
    return pm_buf_append(out, ie->partition.ptr, ie->partition.len);
}

/* Same for the index manifest's ADD entries. */
static int index_diff(paimon_table *t, const char *im, pm_set *keys, const pm_set *other, int kind, entries *x,
                      pm_err *e) {
    if (!im) return PAIMON_OK;
    pm_manifest_reader *r;
    int rc = pm_table_open_manifest(t, im, PM_INDEX_MANIFEST, &r, e);
    if (rc) return rc;
    pm_buf k = {0};
    const pm_index_entry *ie;
    while ((rc = pm_manifest_next_index(r, &ie, e)) == PAIMON_OK) {
        if (ie->kind != PM_FILE_ADD) continue;
        if (index_key(ie, &k)) { rc = pm_nomem(e); break; }
        if (keys && pm_set_add(keys, k.data, k.len) < 0) { rc = pm_nomem(e); break; }
        if (other && !pm_set_contains(other, k.data, k.len) && (rc = index_push(x, ie, kind, e))) break;
    }
    pm_buf_free(&k);
    pm_manifest_close(r);
    return rc == PAIMON_DONE ? PAIMON_OK : rc;
}

/* The committed snapshot must read as the target (same live files); say
 * so loudly if it does not, with the way back. */
static int check_reads_as(paimon_table *t, int64_t id, int64_t target, const pm_set *want, pm_err *e) {
    pm_snapshot *s = NULL;
    int rc = pm_snapshot_read(t->io, t->branch_root, id, &s, e);
    pm_set *got = rc ? NULL : pm_set_new();
    if (!rc && !got) rc = pm_nomem(e);
    entries extra = {pm_arena_new(1 << 12), NULL, 0, 0, NULL, 0, 0};
    if (!rc && !extra.arena) rc = pm_nomem(e);
    if (!rc) rc = live_diff(t, s, got, want, PM_FILE_ADD, &extra, e);
    if (!rc && (extra.n || pm_set_size(got) != pm_set_size(want)))
        rc = pm_fail(e, PAIMON_CORRUPT, "%s: snapshot %lld was committed but does not read as snapshot %lld (%zu files, want %zu); roll back to snapshot %lld as latest to undo",
                     t->branch_root, (long long)id, (long long)target, pm_set_size(got), pm_set_size(want),
                     (long long)id - 1);
    free(extra.v);
    pm_arena_free(extra.arena);
    pm_set_free(got);
    pm_snapshot_free(s);
    return rc;
}

/* clean: account the removal there (NULL: a file no result counts) */
static int remove_named(paimon_table *t, const char *dir, const char *name, pm_clean_result *clean, pm_err *e) {
    pm_buf p = {0};
    int rc = pm_buf_printf(&p, "%s/%s/%s-%s", t->branch_root, dir, dir, name) ? pm_nomem(e) : PAIMON_OK;
    if (!rc && clean) rc = pm_clean_remove_one(t->io, (char *)p.data, pm_meta_kind((char *)p.data), clean, e);
    else if (!rc) rc = pm_io_remove(t->io, (char *)p.data, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
    if (rc) pm_err_prefix(e, "rollback: removing %s-%s", dir, name);
    pm_buf_free(&p);
    return rc;
}

/* Java's rollback_to_as_latest (RollbackToAsLatestProcedure) tags a target
 * given by id before committing, without time retained: Java's expiration
 * deletes the files named by an expired snapshot's DELETE entries unless a
 * tag holds them, and the new snapshot re-adds files that later snapshots
 * deleted. A writer running Java's expiration would otherwise delete them. */
static int create_protection_tag(paimon_table *t, const pm_snapshot *target, pm_rollback_result *r, pm_err *e) {
    char uuid[37], name[128];
    pm_uuid4(uuid);
    snprintf(name, sizeof name, "rollback-to-as-latest-%lld-%s", (long long)target->id, uuid);
    pm_tag_create_opts to;
    memset(&to, 0, sizeof to);
    to.has_snapshot = 1;
    to.snapshot_id = target->id;
    pm_tag_created made;
    int rc = pm_tag_create(t, name, &to, &made, e);
    if (rc) {
        pm_err_prefix(e, "rollback to snapshot %lld as latest: creating the protection tag", (long long)target->id);
        return rc;
    }
    if (!(r->protection_tag = pm_strdup(name))) return pm_nomem(e);
    return PAIMON_OK;
}

/* After a failed commit: did a snapshot of `user` land above `latest`?
 * Anything unreadable counts as yes (the tag is then kept). */
static int maybe_published(paimon_table *t, int64_t latest, const char *user) {
    pm_err e;
    int64_t now = 0;
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &now, &e);
    if (rc) return 1;
    for (int64_t id = latest + 1; id <= now; id++) {
        pm_snapshot *s = NULL;
        if (pm_snapshot_read(t->io, t->branch_root, id, &s, &e)) return 1;
        int ours = s->commit_user && !strcmp(s->commit_user, user);
        pm_snapshot_free(s);
        if (ours) return 1;
    }
    return 0;
}

/* The commit failed: the protection tag goes only when the failure was a
 * conflict and no snapshot of ours landed (Java deletes it only when the
 * commit reports it did not happen); otherwise it stays, and says so. */
static void drop_protection_tag(paimon_table *t, int rc, int64_t latest, const char *user, pm_rollback_result *r,
                                pm_err *e) {
    if (!r->protection_tag) return;
    pm_err e2;
    if (rc == PAIMON_CONFLICT && !maybe_published(t, latest, user) &&
        remove_named(t, "tag", r->protection_tag, NULL, &e2) == PAIMON_OK)
        return;
    char why[sizeof e->msg];
    snprintf(why, sizeof why, "%s", e->msg);
    snprintf(e->msg, sizeof e->msg, "%.700s (the protection tag '%s' is kept: delete it with tag.lua once the table "
             "is checked)", why, r->protection_tag);
}

static int rollback_as_latest(paimon_table *t, const pm_rollback_opts *o, const pm_snapshot *target, int from_tag,
                              pm_rollback_result *r, pm_err *e) {
    pm_snapshot *latest = NULL;
    int rc = pm_snapshot_read(t->io, t->branch_root, r->previous_latest, &latest, e);
    if (rc) return rc;
    entries x = {pm_arena_new(1 << 16), NULL, 0, 0, NULL, 0, 0};
    pm_set *lt = pm_set_new(), *tg = pm_set_new(), *lix = pm_set_new(), *tix = pm_set_new();
    if (!x.arena || !lt || !tg || !lix || !tix) rc = pm_nomem(e);
    /* the latest's files that the target lacks go (DELETE), the target's
     * that the latest lacks come back (ADD) */
    if (!rc) rc = live_diff(t, target, tg, NULL, 0, &x, e);
    if (!rc) rc = live_diff(t, latest, lt, tg, PM_FILE_DELETE, &x, e);
    if (!rc) rc = live_diff(t, target, NULL, lt, PM_FILE_ADD, &x, e);
    int same_index = (!target->index_manifest && !latest->index_manifest) ||
                     (target->index_manifest && latest->index_manifest &&
                      !strcmp(target->index_manifest, latest->index_manifest));
    if (!rc && !same_index) {
        rc = index_diff(t, target->index_manifest, tix, NULL, 0, &x, e);
        if (!rc) rc = index_diff(t, latest->index_manifest, lix, tix, PM_FILE_DELETE, &x, e);
        if (!rc) rc = index_diff(t, target->index_manifest, NULL, lix, PM_FILE_ADD, &x, e);
    }
    for (size_t i = 0; !rc && i < x.n; i++) *(x.v[i].kind == PM_FILE_ADD ? &r->added : &r->deleted) += 1;
    for (size_t i = 0; !rc && i < x.n_ix; i++) *(x.ix[i].kind == PM_FILE_ADD ? &r->index_added : &r->index_deleted) += 1;
    r->new_latest = r->previous_latest + 1;
    if (!rc && !o->dry_run) {
        pm_commit_opts co;
        pm_commit_opts_from_table(t, &co);
        char user[80];
        char uuid[37];
        pm_uuid4(uuid);
        snprintf(user, sizeof user, "rollback-to-as-latest-%s", uuid);
        co.commit_user = o->commit_user ? o->commit_user : user;
        co.kind = "OVERWRITE";
        co.expect_latest = r->previous_latest;
        /* a full manifest compaction of the base: files the target had and
         * a later snapshot deleted come back by a plain ADD, which the live
         * rule only keeps when no DELETE of theirs is left in the base */
        co.full_compaction_threshold = 1;
        if (!from_tag) rc = create_protection_tag(t, target, r, e);
        if (!rc) {
            rc = pm_commit_with_index(t, x.v, x.n, x.ix, x.n_ix, &co, &r->new_latest, e);
            if (rc) pm_err_prefix(e, "rollback to snapshot %lld as latest", (long long)target->id);
            if (rc) drop_protection_tag(t, rc, r->previous_latest, co.commit_user, r, e);
        }
        if (!rc) rc = check_reads_as(t, r->new_latest, target->id, tg, e);
    }
    pm_set_free(lt);
    pm_set_free(tg);
    pm_set_free(lix);
    pm_set_free(tix);
    free(x.v);
    free(x.ix);
    pm_arena_free(x.arena);
    pm_snapshot_free(latest);
    return rc;
}

/* ---- destructive rollback: plan ----------------------------------------------- */

typedef struct rb_plan {
    pm_snapshot **above; size_t n_above;         /* snapshots above the target, ascending */
    pm_snapshot **kept; size_t n_kept;           /* [earliest, target] (or the recreated one) */
    pm_snapshot **all; size_t n_all;
    pm_snapshot **tags; size_t n_tags_read;      /* removed tags (parallel to r->tags) */
    pm_snapshot **chl; size_t n_chl;             /* removed changelogs */
    pm_deleter *data, *meta_a, *meta_b;
    pm_protect *prot;
    pm_buf fingerprint;                          /* tag and branch names when planned */
} rb_plan;

static void rb_plan_free(rb_plan *p) {
    pm_refs_snapshots_free(p->all, p->n_all);
    free(p->kept);
    for (size_t i = 0; i < p->n_tags_read; i++) pm_snapshot_free(p->tags[i]);
    free(p->tags);
    for (size_t i = 0; i < p->n_chl; i++) pm_snapshot_free(p->chl[i]);
    free(p->chl);
    pm_deleter_free(p->data);
    pm_deleter_free(p->meta_a);
    pm_deleter_free(p->meta_b);
    pm_protect_free(p->prot);
    pm_buf_free(&p->fingerprint);
}

/* Tags above the target: read (an unreadable one refuses: it may be one
 * that stays and protects files) and collected. */
static int plan_tags(paimon_table *t, int64_t target, rb_plan *p, pm_rollback_result *r, pm_err *e) {
    char **names = NULL;
    size_t n = 0;
    int rc = pm_tag_list(t->io, t->branch_root, &names, &n, e);
    if (!rc && n && !(p->tags = calloc(n, sizeof *p->tags))) rc = pm_nomem(e);
    if (!rc && n && !(r->tags = calloc(n, sizeof *r->tags))) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < n; i++) {
        pm_snapshot *s;
        if ((rc = pm_tag_read(t->io, t->branch_root, names[i], &s, e))) {
            pm_err_prefix(e, "refusing to roll back: cannot read tag '%s'", names[i]);
            break;
        }
        if (s->id <= target) { pm_snapshot_free(s); continue; }
        p->tags[p->n_tags_read++] = s;
        r->tags[r->n_tags++] = names[i];
        names[i] = NULL;
    }
    pm_strv_free(names, n);
    return rc;
}

static int plan_changelogs(paimon_table *t, int64_t target, rb_plan *p, pm_rollback_result *r, pm_err *e) {
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = pm_changelog_list_ids(t->io, t->branch_root, &ids, &n, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; }
    if (!rc && n && !(p->chl = calloc(n, sizeof *p->chl))) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < n; i++) {
        if (ids[i] <= target) continue;
        pm_snapshot *s;
        rc = pm_changelog_read(t->io, t->branch_root, ids[i], &s, e);
        if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; continue; }
        if (rc) { pm_err_prefix(e, "refusing to roll back: cannot read changelog %lld", (long long)ids[i]); break; }
        p->chl[p->n_chl++] = s;
        rc = push_id(&r->changelogs, &r->n_changelogs, ids[i], e);
    }
    free(ids);
    return rc;
}

static int in_above(const rb_plan *p, int64_t id) {
    for (size_t i = 0; i < p->n_above; i++)
        if (p->above[i]->id == id) return 1;
    return 0;
}

static int plan_rollback(paimon_table *t, const pm_rollback_opts *o, pm_snapshot *target, rb_plan *p,
                         pm_rollback_result *r, pm_err *e) {
    int64_t earliest;
    int rc = pm_snapshot_earliest_id(t->io, t->branch_root, &earliest, e);
    if (!rc) rc = pm_refs_fingerprint(t, &p->fingerprint, e);
    if (!rc && (rc = pm_refs_snapshots(t, earliest, &p->all, &p->n_all, e))) pm_err_prefix(e, "refusing to roll back");
    if (rc) return rc;
    size_t k = 0;
    while (k < p->n_all && p->all[k]->id <= target->id) k++;
    p->above = p->all + k;
    p->n_above = p->n_all - k;
    p->kept = calloc(k + 1, sizeof *p->kept);
    if (!p->kept) return pm_nomem(e);
    int target_exists = k > 0 && p->all[k - 1]->id == target->id;
    if (target_exists) {
        memcpy(p->kept, p->all, k * sizeof *p->kept);
        p->n_kept = k;
    } else {
        /* a tag whose snapshot expired: it alone is what stays (Java
         * cleanLargerThan removes every snapshot above it) */
        p->kept[0] = target;
        p->n_kept = 1;
        r->recreated = 1;
        p->above = p->all;
        p->n_above = p->n_all;
    }
    for (size_t i = p->n_above; i-- > 0;)
        if ((rc = push_id(&r->snapshots, &r->n_snapshots, p->above[i]->id, e))) return rc;
    if ((rc = plan_tags(t, target->id, p, r, e)) || (rc = plan_changelogs(t, target->id, p, r, e))) return rc;
    /* metadata only (Java 1.2+): the files stay for orphan cleaning */
    if (!o->purge_files) return PAIMON_OK;
    pm_protect_spec sp = {.kept = p->kept, .n_kept = p->n_kept, .refs_above = target->id,
                          .refusing = "refusing to roll back", .threads = o->threads};
    if ((rc = pm_protect_build(t, &sp, &p->prot, e))) return rc;
    p->data = pm_deleter_new();
    p->meta_a = pm_deleter_new();
    p->meta_b = pm_deleter_new();
    if (!p->data || !p->meta_a || !p->meta_b) return pm_nomem(e);
    pm_protect_plan pl = {p->data, p->meta_a, p->meta_b, 0, 0};
    /* a removed snapshot's files are its delta's additions (the rest was
     * live at the one below it); a removed tag or recreated-target case
     * without its snapshot: its whole live set */
    for (size_t i = 0; !rc && i < p->n_above; i++)
        rc = pm_protect_plan_dropped(p->prot, t, p->above[i],
                                     i == 0 && !target_exists ? PM_PROTECT_LIVE : PM_PROTECT_DELTA_ADDS, 0, &pl, e);
    for (size_t i = 0; !rc && i < p->n_tags_read; i++)
        if (!in_above(p, p->tags[i]->id))
            rc = pm_protect_plan_dropped(p->prot, t, p->tags[i], PM_PROTECT_LIVE, 0, &pl, e);
    for (size_t i = 0; !rc && i < p->n_chl; i++)
        rc = pm_protect_plan_dropped(p->prot, t, p->chl[i], PM_PROTECT_DELTA_ADDS, 0, &pl, e);
    r->clean.protected_files = pl.protected_files;
    r->unreadable += pl.unreadable;
    return rc;
}

/* ---- destructive rollback: act ------------------------------------------------- */

/* The rule against a racing writer before anything is deleted. */
static int check_unchanged(paimon_table *t, const rb_plan *p, int64_t latest, pm_err *e) {
    int64_t now = 0;
    int ex = 0;
    pm_buf fp = {0};
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &now, e);
    if (!rc) rc = snapshot_exists(t, latest + 1, &ex, e);
    if (!rc && (now != latest || ex))
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: a snapshot was committed while the rollback was planned (latest %lld, planned from %lld); nothing deleted, run again",
                     t->branch_root, (long long)(ex ? latest + 1 : now), (long long)latest);
    if (!rc) rc = pm_refs_fingerprint(t, &fp, e);
    if (!rc && !pm_buf_eq(&fp, &p->fingerprint))
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: tags, branches or consumers changed while the rollback was planned; nothing deleted, run again",
                     t->branch_root);
    pm_buf_free(&fp);
    return rc;
}

static int write_back_snapshot(paimon_table *t, const pm_snapshot *target, pm_err *e) {
    pm_buf json = {0}, path = {0};
    int rc = pm_snapshot_to_json(target, &json) ? pm_nomem(e) : PAIMON_OK;
    if (!rc) rc = snapshot_file(t, target->id, &path, e);
    if (!rc) rc = pm_io_create_no_replace(t->io, (char *)path.data, json.data, json.len, e);
    if (rc) pm_err_prefix(e, "rollback: writing back snapshot %lld of the tag", (long long)target->id);
    pm_buf_free(&json);
    pm_buf_free(&path);
    return rc;
}

/* Snapshot files above the target, newest first; before each, no snapshot
 * may have appeared above the planned latest; after the last, none above
 * the target may exist. */
static int remove_snapshots(paimon_table *t, pm_rollback_result *r, int64_t target, pm_err *e) {
    int64_t latest = r->previous_latest;
    pm_buf p = {0};
    int rc = PAIMON_OK;
    for (size_t i = 0; !rc && i < r->n_snapshots; i++) {
        int ex = 0;
        if ((rc = snapshot_exists(t, latest + 1, &ex, e))) break;
        if (ex) {
            rc = pm_fail(e, PAIMON_CONFLICT, "%s: snapshot %lld was committed during the rollback; snapshots above %lld were removed down to %lld, no data file deleted; the table reads as snapshot %lld (run verify)",
                         t->branch_root, (long long)(latest + 1), (long long)target,
                         (long long)(i ? r->snapshots[i - 1] : latest + 1), (long long)(latest + 1));
            break;
        }
        if ((rc = snapshot_file(t, r->snapshots[i], &p, e))) break;
        rc = pm_clean_remove_one(t->io, (char *)p.data, PM_K_SNAPSHOT, &r->clean, e);
    }
    pm_buf_free(&p);
    if (rc) return rc;
    int64_t *ids = NULL;
    size_t n = 0;
    if ((rc = pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, e))) return rc;
    if (n && ids[n - 1] > target)
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: snapshot %lld appeared during the rollback; no data file deleted (run verify)",
                     t->branch_root, (long long)ids[n - 1]);
    free(ids);
    return rc;
}


/* A dry run's plan of the metadata files the real run removes (snapshot
 * files, tags, changelogs above the target), in its order. */
static int plan_metadata(paimon_table *t, pm_rollback_result *r, pm_err *e) {
    pm_deleter *d = pm_deleter_new();
    pm_buf p = {0};
    int rc = d ? PAIMON_OK : pm_nomem(e);
    for (size_t i = 0; !rc && i < r->n_snapshots; i++)
        if (!(rc = snapshot_file(t, r->snapshots[i], &p, e))) rc = pm_deleter_add(d, (char *)p.data, PM_K_SNAPSHOT, e);
    for (size_t i = 0; !rc && i < r->n_tags + r->n_changelogs; i++) {
        p.len = 0;
        if (i < r->n_tags) rc = pm_buf_printf(&p, "%s/tag/tag-%s", t->branch_root, r->tags[i]);
        else rc = pm_buf_printf(&p, "%s/changelog/changelog-%lld", t->branch_root, (long long)r->changelogs[i - r->n_tags]);
        if (rc || pm_buf_cstr(&p)) { rc = pm_nomem(e); break; }
        rc = pm_deleter_add(d, (char *)p.data, pm_meta_kind((char *)p.data), e);
    }
    pm_clean_opts co = {1, 1, 0, NULL, NULL, 0};
    if (!rc) rc = pm_deleter_run(d, t->io, t->root, &co, "snapshots, tags, changelogs", &r->clean, e);
    pm_deleter_free(d);
    pm_buf_free(&p);
    return rc;
}

static int act(paimon_table *t, const pm_rollback_opts *o, const pm_snapshot *target, rb_plan *p,
               pm_rollback_result *r, pm_err *e) {
    pm_clean_opts co = {o->threads, o->dry_run, 0, o->progress, o->progress_ud, 0};
    int rc = PAIMON_OK;
    if (!o->dry_run) {
        if ((rc = check_unchanged(t, p, r->previous_latest, e))) return rc;
        if (r->recreated && (rc = write_back_snapshot(t, target, e))) return rc;
        if ((rc = remove_snapshots(t, r, target->id, e))) return rc;
        /* Java commitLatestHint(retained id); EARLIEST for a written-back tag */
        if ((rc = pm_hint_write(t->io, t->branch_root, "LATEST", target->id, e))) return rc;
        if (r->recreated && (rc = pm_hint_write(t->io, t->branch_root, "EARLIEST", target->id, e))) return rc;
        char num[32];
        for (size_t i = 0; !rc && i < r->n_tags; i++) rc = remove_named(t, "tag", r->tags[i], &r->clean, e);
        for (size_t i = 0; !rc && i < r->n_changelogs; i++) {
            snprintf(num, sizeof num, "%lld", (long long)r->changelogs[i]);
            rc = remove_named(t, "changelog", num, &r->clean, e);
        }
        if (rc) return rc;
    } else if ((rc = plan_metadata(t, r, e))) {
        return rc;
    }
    pm_deleter *phases[3] = {p->data, p->meta_a, p->meta_b};
    static const char *const names[3] = {"data files", "manifests", "manifest lists"};
    for (int ph = 0; o->purge_files && ph < 3; ph++) {
        if ((rc = pm_deleter_run(phases[ph], t->io, t->root, &co, names[ph], &r->clean, e))) return rc;
        if (!o->dry_run && r->clean.n_failures)
            return pm_fail(e, PAIMON_IO, "%s: %zu file(s) could not be deleted (first: %s: %s); the table is rolled back to snapshot %lld, the rest are orphans",
                           t->root, r->clean.n_failures, r->clean.failures[0].path, r->clean.failures[0].msg,
                           (long long)target->id);
    }
    return PAIMON_OK;
}

static int count_consumers_ahead(paimon_table *t, int64_t target, pm_rollback_result *r, pm_err *e) {
    pm_consumer_info *v = NULL;
    size_t n = 0;
    int rc = pm_consumers_list(t, &v, &n, e);
    for (size_t i = 0; !rc && i < n; i++) r->consumers_ahead += v[i].next_snapshot > target + 1;
    pm_consumer_infos_free(v, n);
    return rc;
}

int pm_rollback(paimon_table *t, const pm_rollback_opts *o, pm_rollback_result *r, pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(r, 0, sizeof *r);
    r->clean.dry_run = o->dry_run;
    int rc = pm_table_check_manifest_format(t, e);
    if (rc) return rc;
    pm_snapshot *target = NULL;
    int from_tag = 0;
    if ((rc = resolve_target(t, o, &target, &from_tag, e))) return rc;
    r->target = target->id;
    rc = pm_snapshot_latest_id(t->io, t->branch_root, &r->previous_latest, e);
    if (rc == PAIMON_NOTFOUND) rc = pm_fail(e, PAIMON_NOTFOUND, "%s: no snapshot: nothing to roll back", t->branch_root);
    if (!rc && target->id > r->previous_latest)
        rc = pm_fail(e, PAIMON_MISUSE, "%s: snapshot %lld is above the latest (%lld)", t->branch_root,
                     (long long)target->id, (long long)r->previous_latest);
    if (!rc && o->as_latest) {
        rc = rollback_as_latest(t, o, target, o->to_tag != NULL, r, e);
    } else if (!rc) {
        (void)from_tag;
        rb_plan p;
        memset(&p, 0, sizeof p);
        r->new_latest = target->id;
        rc = plan_rollback(t, o, target, &p, r, e);
        if (!rc) rc = count_consumers_ahead(t, target->id, r, e);
        if (!rc) rc = act(t, o, target, &p, r, e);
        /* p.kept may hold target itself (not owned by p) */
        rb_plan_free(&p);
    }
    pm_snapshot_free(target);
    r->clean.duration_ms = pm_now_millis() - t0;
    if (rc) pm_rollback_result_free(r);
    return rc;
}

/* ---- purge (Java's purge_files, pm_rollback.h) ------------------------------- */

void pm_purge_result_free(pm_purge_result *r) {
    if (!r) return;
    pm_clean_result_free(&r->clean);
    pm_strv_clear(&r->branches);
    pm_strv_clear(&r->tags);
    pm_strv_clear(&r->consumers);
}

typedef struct purge_plan {
    paimon_table *t;
    int64_t latest;
    pm_strv roots;                /* snapshot, tag, consumer, changelog and branch files (full paths) */
    pm_strv roots_last;           /* the rest of a branch's directory (schemas, consumers): after its
                                     snapshots and tags, so that a crash never leaves a branch with
                                     snapshots but no schema (as pm_branch_delete orders them) */
    pm_strv files;                /* manifest/, index/, statistics/ and bucket files (full paths) */
    pm_buf path;
    pm_purge_result *r;
} purge_plan;

/* "name-rest" after `prefix` up to the next '/' into v, once. */
static int push_name(pm_strv *v, const char *rel, size_t skip) {
    const char *s = rel + skip, *end = strchr(s, '/');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    if (v->n && strlen(v->v[v->n - 1]) == len && !strncmp(v->v[v->n - 1], s, len)) return 0;
    for (size_t i = 0; i < v->n; i++)
        if (strlen(v->v[i]) == len && !strncmp(v->v[i], s, len)) return 0;
    char *x = pm_strndup(s, len);
    int rc = !x || pm_strv_push(v, x);
    free(x);
    return rc;
}

/* rel is a file in a bucket directory: (k=v/)*bucket-X/name. */
static int in_bucket_dir(const char *rel) {
    const char *last = strrchr(rel, '/');
    if (!last) return 0;
    const char *p = rel;
    for (;;) {
        const char *slash = strchr(p, '/');
        if (slash == last) return !strncmp(p, "bucket-", 7);
        const char *eq = memchr(p, '=', (size_t)(slash - p));
        if (!eq) return 0;
        p = slash + 1;
    }
}

static int purge_classify(void *ctx, const char *rel, const pm_stat *st, pm_err *e) {
    (void)st;
    purge_plan *p = ctx;
    pm_strv *into = NULL;
    int64_t id;
    char tail;
    if (!strncmp(rel, "branch/", 7)) {
        const char *sub = strchr(rel + 7, '/');
        sub = sub ? sub + 1 : "";
        int first = !strncmp(sub, "snapshot/", 9) || !strncmp(sub, "tag/", 4) || !strncmp(sub, "changelog/", 10);
        into = first ? &p->roots : &p->roots_last;
        if (!strncmp(rel + 7, "branch-", 7) && push_name(&p->r->branches, rel, 14)) return pm_nomem(e);
    } else if (!strncmp(rel, "tag/", 4)) {
        into = &p->roots;
        if (!strncmp(rel + 4, "tag-", 4) && !strchr(rel + 8, '/') && push_name(&p->r->tags, rel, 8)) return pm_nomem(e);
    } else if (!strncmp(rel, "consumer/", 9)) {
        into = &p->roots;
        if (!strncmp(rel + 9, "consumer-", 9) && !strchr(rel + 18, '/') && push_name(&p->r->consumers, rel, 18))
            return pm_nomem(e);
    } else if (!strncmp(rel, "changelog/", 10)) {
        into = &p->roots;
        if (sscanf(rel + 10, "changelog-%" SCNd64 "%c", &id, &tail) == 1) p->r->n_changelogs++;
    } else if (!strncmp(rel, "snapshot/", 9)) {
        /* the hints stay (rewritten); a snapshot above the planned latest is a writer's */
        if (sscanf(rel + 9, "snapshot-%" SCNd64 "%c", &id, &tail) == 1 && id <= p->latest) {
            into = &p->roots;
            p->r->n_snapshots++;
        }
    } else if (!strncmp(rel, "manifest/", 9) || !strncmp(rel, "index/", 6) || !strncmp(rel, "statistics/", 11) ||
               in_bucket_dir(rel)) {
        into = &p->files;
    }
    if (!into) return PAIMON_OK;   /* schema/, hints, files that are not Paimon's */
    p->path.len = 0;
    if (pm_buf_printf(&p->path, "%s/%s", p->t->root, rel) || pm_buf_cstr(&p->path) ||
        pm_strv_push(into, (char *)p->path.data))
        return pm_nomem(e);
    return PAIMON_OK;
}

static int purge_kind(const char *rel) {
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    if (!strncmp(rel, "manifest/", 9)) {
        if (!strncmp(base, "manifest-list-", 14)) return PM_K_MANIFEST_LIST;
        if (!strncmp(base, "index-manifest-", 15)) return PM_K_INDEX_MANIFEST;
        if (!strncmp(base, "manifest-", 9)) return PM_K_MANIFEST;
        return PM_K_TEMP;
    }
    if (!strncmp(rel, "index/", 6)) return PM_K_INDEX;
    if (!strncmp(rel, "statistics/", 11)) return PM_K_STATISTICS;
    return !strncmp(base, "changelog-", 10) ? PM_K_CHANGELOG : PM_K_DATA;
}

/* The one manifest of the latest's base and delta lists, if there is
 * exactly one (else *name stays NULL): the commit's manifest merge keeps a
 * lone manifest as it is (pm_merge_manifests falls back to minor
 * compaction, which keeps a group of one), so the truncating snapshot's
 * base names it. */
static int lone_manifest(paimon_table *t, const pm_snapshot *latest, char **name, pm_err *e) {
    *name = NULL;
    const char *lists[2] = {latest->base_manifest_list, latest->delta_manifest_list};
    size_t n = 0;
    int rc = PAIMON_OK;
    for (int i = 0; i < 2 && !rc; i++) {
        if (!lists[i]) continue;
        pm_manifest_reader *r;
        if ((rc = pm_table_open_manifest(t, lists[i], PM_MANIFEST_LIST, &r, e))) break;
        const pm_manifest_meta *m;
        while ((rc = pm_manifest_next_meta(r, &m, e)) == PAIMON_OK)
            if (n++ == 0 && !(*name = pm_strdup(m->file_name))) { rc = pm_nomem(e); break; }
        pm_manifest_close(r);
        if (rc == PAIMON_DONE) rc = PAIMON_OK;
    }
    if (rc || n != 1) { free(*name); *name = NULL; }
    if (rc) pm_err_prefix(e, "refusing to purge");
    return rc;
}

/* Files the truncating snapshot keeps naming: the latest's statistics (the
 * commit carries it when the schema is the same), its index manifest when
 * no index entry changes, its lone manifest. The real run keeps them by
 * pm_protect; the plan leaves them out. */
static int kept_by_truncate(const paimon_table *t, const pm_snapshot *latest, int index_changes, const char *lone,
                            const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!latest) return 0;
    if (lone && !strcmp(base, lone) && strstr(path, "/manifest/")) return 1;
    int64_t schema = t->schema ? t->schema->id : -1;
    if (latest->statistics && latest->schema_id == schema && !strcmp(base, latest->statistics) &&
        strstr(path, "/statistics/"))
        return 1;
    return !index_changes && latest->index_manifest && !strcmp(base, latest->index_manifest) &&
           strstr(path, "/manifest/") != NULL;
}

static int purge_commit(paimon_table *t, const pm_purge_opts *o, const pm_snapshot *latest, entries *x,
                        pm_purge_result *r, pm_err *e) {
    pm_commit_opts co;
    pm_commit_opts_from_table(t, &co);
    char user[80], uuid[37];
    pm_uuid4(uuid);
    snprintf(user, sizeof user, "purge-files-%s", uuid);
    co.commit_user = o->commit_user ? o->commit_user : user;
    co.kind = "OVERWRITE";
    co.expect_latest = latest->id;
    /* every base manifest rewritten: the new snapshot names no old one */
    co.full_compaction_threshold = 1;
    co.manifest_target_size = INT64_MAX;
    int rc = pm_commit_with_index(t, x->v, x->n, x->ix, x->n_ix, &co, &r->new_latest, e);
    if (rc) pm_err_prefix(e, "purge: truncating snapshot %lld", (long long)latest->id);
    return rc;
}

static int purge_remove_roots(paimon_table *t, const pm_purge_opts *o, purge_plan *p, pm_purge_result *r,
                              pm_err *e) {
    pm_clean_opts co = {o->threads, o->dry_run, 0, o->progress, o->progress_ud, 0};
    pm_deleter *d = pm_deleter_new();
    int rc = d ? PAIMON_OK : pm_nomem(e);
    pm_deleter *last = pm_deleter_new();
    if (!rc && !last) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < p->roots.n; i++) rc = pm_deleter_add(d, p->roots.v[i], pm_meta_kind(p->roots.v[i]), e);
    for (size_t i = 0; !rc && i < p->roots_last.n; i++) rc = pm_deleter_add(last, p->roots_last.v[i], pm_meta_kind(p->roots_last.v[i]), e);
    if (!rc) rc = pm_deleter_run(d, t->io, t->root, &co, "snapshots, tags, consumers, changelogs", &r->clean, e);
    if (!rc && !o->dry_run && r->clean.n_failures) goto failed;
    if (!rc) rc = pm_deleter_run(last, t->io, t->root, &co, "branch directories", &r->clean, e);
failed:
    pm_deleter_free(d);
    pm_deleter_free(last);
    if (!rc && !o->dry_run && r->clean.n_failures)
        rc = pm_fail(e, PAIMON_IO, "%s: %zu file(s) could not be deleted (first: %s: %s); the table is truncated, run the purge again",
                     t->root, r->clean.n_failures, r->clean.failures[0].path, r->clean.failures[0].msg);
    if (!rc && !o->dry_run) {
        pm_err ig;
        (void)pm_branches_remove_empty_dirs(t, "branch", &ig);   /* cosmetic: the files are gone */
    }
    return rc;
}

/* Every planned file nothing left needs, in three phases. */
static int purge_remove_files(paimon_table *t, const pm_purge_opts *o, purge_plan *p, const pm_snapshot *latest,
                              int index_changes, const char *lone, pm_purge_result *r, pm_err *e) {
    pm_protect *prot = NULL;
    int rc = PAIMON_OK;
    if (!o->dry_run) {
        pm_protect_spec sp = {.kept_all = 1, .refs_above = INT64_MAX, .refusing = "refusing to purge",
                              .threads = o->threads};
        rc = pm_protect_build(t, &sp, &prot, e);
    }
    pm_deleter *ph[3] = {pm_deleter_new(), pm_deleter_new(), pm_deleter_new()};
    if (!rc && (!ph[0] || !ph[1] || !ph[2])) rc = pm_nomem(e);
    size_t rl = strlen(t->root) + 1;
    for (size_t i = 0; !rc && i < p->files.n; i++) {
        const char *path = p->files.v[i], *rel = path + rl;
        const char *base = strrchr(path, '/') + 1;
        if (kept_by_truncate(t, latest, index_changes, lone, path)) continue;
        int kind = purge_kind(rel);
        int data = kind == PM_K_DATA || kind == PM_K_CHANGELOG;
        if (prot && (data ? pm_protect_has_path(prot, path, strlen(path)) : pm_protect_has_name(prot, base))) {
            r->clean.protected_files++;
            continue;
        }
        int phase = data ? 0 : kind == PM_K_MANIFEST_LIST || kind == PM_K_INDEX_MANIFEST ? 2 : 1;
        rc = pm_deleter_add(ph[phase], path, kind, e);
    }
    pm_clean_opts co = {o->threads, o->dry_run, 0, o->progress, o->progress_ud, 0};
    static const char *const names[3] = {"data files", "manifests and index files", "manifest lists"};
    for (int k = 0; !rc && k < 3; k++) {
        rc = pm_deleter_run(ph[k], t->io, t->root, &co, names[k], &r->clean, e);
        if (!rc && k == 0 && !o->dry_run) pm_deleter_clean_dirs(ph[0], t->io, t->root, t->n_part, &r->clean);
        if (!rc && !o->dry_run && r->clean.n_failures)
            rc = pm_fail(e, PAIMON_IO, "%s: %zu file(s) could not be deleted (first: %s: %s); the table is empty, the rest are orphans",
                         t->root, r->clean.n_failures, r->clean.failures[0].path, r->clean.failures[0].msg);
    }
    for (int k = 0; k < 3; k++) pm_deleter_free(ph[k]);
    pm_protect_free(prot);
    return rc;
}

int pm_purge_files(paimon_table *t, const pm_purge_opts *o, pm_purge_result *r, pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(r, 0, sizeof *r);
    r->clean.dry_run = o->dry_run;
    if (strcmp(t->branch, "main"))
        return pm_fail(e, PAIMON_MISUSE, "purge_files empties the whole table and drops every branch: open %s on main, not on branch '%s'",
                       t->root, t->branch);
    int rc = pm_table_check_manifest_format(t, e);
    if (rc) return rc;
    purge_plan p;
    memset(&p, 0, sizeof p);
    p.t = t;
    p.r = r;
    pm_snapshot *latest = NULL;
    pm_buf fp = {0}, fp2 = {0};
    entries x = {pm_arena_new(1 << 12), NULL, 0, 0, NULL, 0, 0};
    pm_set *none = pm_set_new();
    if (!x.arena || !none) rc = pm_nomem(e);
    if (!rc) rc = pm_snapshot_latest_id(t->io, t->branch_root, &p.latest, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); rc = PAIMON_OK; p.latest = 0; }
    if (!rc && p.latest && (rc = pm_snapshot_read(t->io, t->branch_root, p.latest, &latest, e)))
        pm_err_prefix(e, "refusing to purge");
    if (!rc) rc = pm_refs_fingerprint(t, &fp, e);
    /* what the truncating snapshot deletes: every live file and index file */
    if (!rc && latest) rc = live_diff(t, latest, NULL, none, PM_FILE_DELETE, &x, e);
    if (!rc && latest) rc = index_diff(t, latest->index_manifest, NULL, none, PM_FILE_DELETE, &x, e);
    char *lone = NULL;
    if (!rc && latest) rc = lone_manifest(t, latest, &lone, e);
    if (!rc) rc = pm_io_list_tree(t->io, t->root, purge_classify, &p, e);
    if (rc == PAIMON_OK) {
        r->previous_latest = p.latest;
        r->new_latest = latest ? p.latest + 1 : 0;
        r->truncated = (int64_t)x.n;
        r->index_truncated = (int64_t)x.n_ix;
    }
    if (!rc && !o->dry_run && latest) rc = purge_commit(t, o, latest, &x, r, e);
    if (!rc && !o->dry_run) {
        rc = pm_refs_fingerprint(t, &fp2, e);
        if (!rc && !pm_buf_eq(&fp, &fp2))
            rc = pm_fail(e, PAIMON_CONFLICT, "%s: tags, branches or consumers changed while the purge was planned; the table is truncated (snapshot %lld), nothing deleted: run it again",
                         t->root, (long long)r->new_latest);
        if (!rc && r->new_latest) rc = pm_hint_write(t->io, t->branch_root, "EARLIEST", r->new_latest, e);
    }
    if (!rc) rc = purge_remove_roots(t, o, &p, r, e);
    if (!rc) rc = purge_remove_files(t, o, &p, latest, x.n_ix > 0, lone, r, e);
    free(lone);
    pm_buf_free(&p.path);
    pm_strv_clear(&p.roots);
    pm_strv_clear(&p.roots_last);
    pm_strv_clear(&p.files);
    pm_buf_free(&fp);
    pm_buf_free(&fp2);
    pm_set_free(none);
    free(x.v);
    free(x.ix);
    pm_arena_free(x.arena);
    pm_snapshot_free(latest);
    r->clean.duration_ms = pm_now_millis() - t0;
    if (rc) pm_purge_result_free(r);
    return rc;
}
