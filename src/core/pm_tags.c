/* Tags (pm_tags.h): Java's TagManager operations on our FileIO, deletion
 * through pm_protect (the one rule of what stays needed). */
#include "pm_tags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pm_protect.h"
#include "pm_refs.h"
#include "pm_tag_auto.h"
#include "pm_meta.h"

int64_t pm_tag_local_ms(int64_t epoch_ms) {
    time_t sec = (time_t)(epoch_ms / 1000);
    struct tm tm;
    return localtime_r(&sec, &tm) ? epoch_ms + (int64_t)tm.tm_gmtoff * 1000 : epoch_ms;
}

int pm_tag_name_check(const char *what, const char *name, pm_err *e) {
    int blank = 1;
    for (const char *p = name; p && *p; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '\f' && *p != '\v') blank = 0;
    if (!name || blank) return pm_fail(e, PAIMON_MISUSE, "%s name shouldn't be blank", what);
    for (const char *p = name; *p; p++)
        if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
            return pm_fail(e, PAIMON_MISUSE, "%s name '%s' is not a file name (no '/' or control characters)", what,
                           name);
    if (!strcmp(name, ".") || !strcmp(name, ".."))
        return pm_fail(e, PAIMON_MISUSE, "%s name '%s' is not a file name", what, name);
    return PAIMON_OK;
}

static int tag_path(const paimon_table *t, const char *name, pm_buf *out, pm_err *e) {
    out->len = 0;
    return pm_buf_printf(out, "%s/tag/tag-%s", t->branch_root, name) ? pm_nomem(e) : PAIMON_OK;
}

/* ---- local wall-clock time (Java LocalDateTime) ---------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date, and back. */
int64_t pm_days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void pm_civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* Jackson's LocalDateTime array: trailing zero second / nano left out. */
static int local_time_json(int64_t local_ms, pm_buf *out) {
    int64_t days = floor_div(local_ms, 86400000), in_day = local_ms - days * 86400000;
    int64_t y;
    int m, d;
    pm_civil_from_days(days, &y, &m, &d);
    int h = (int)(in_day / 3600000), mi = (int)(in_day / 60000 % 60), s = (int)(in_day / 1000 % 60);
    long nano = (long)(in_day % 1000) * 1000000L;
    out->len = 0;
    int rc = pm_buf_printf(out, "[ %lld, %d, %d, %d, %d", (long long)y, m, d, h, mi);
    if (!rc && (s || nano)) rc = pm_buf_printf(out, ", %d", s);
    if (!rc && nano) rc = pm_buf_printf(out, ", %ld", nano);
    if (!rc) rc = pm_buf_printf(out, " ]");
    return rc;
}

/* tagCreateTime text ("[ 2024, 1, 2, 3, 4, 5, 6000000 ]") -> local ms; 0 if
 * it is not a LocalDateTime array. */
static int local_time_parse(const char *text, int64_t *ms) {
    long long v[7] = {0, 1, 1, 0, 0, 0, 0};
    int n = 0;
    const char *p = text;
    while (*p && *p != '[') p++;
    if (*p) p++;
    while (n < 7) {
        char *end;
        while (*p == ' ') p++;
        v[n] = strtoll(p, &end, 10);
        if (end == p) break;
        n++;
        p = end;
        while (*p == ' ') p++;
        if (*p != ',') break;
        p++;
    }
    if (n < 5 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31) return 0;
    *ms = pm_days_from_civil(v[0], (int)v[1], (int)v[2]) * 86400000 + v[3] * 3600000 + v[4] * 60000 + v[5] * 1000 +
          v[6] / 1000000;
    return 1;
}

/* Jackson's Duration: decimal seconds with nine fraction digits. */
static int duration_json(int64_t ms, pm_buf *out) {
    out->len = 0;
    return pm_buf_printf(out, "%lld.%09lld", (long long)(ms / 1000), (long long)(ms % 1000) * 1000000LL);
}

/* tagTimeRetained text (decimal seconds) -> ms; 0 if not a number. */
static int duration_parse(const char *text, int64_t *ms) {
    char *end;
    double sec = strtod(text, &end);
    if (end == text || sec < 0) return 0;
    *ms = (int64_t)(sec * 1000.0 + 0.5);
    return 1;
}

int64_t pm_tag_epoch_of_local(int64_t local_ms) { return local_ms - (pm_tag_local_ms(local_ms) - local_ms); }

int pm_tag_times(const pm_snapshot *s, int64_t *create_epoch_ms, int64_t *retained_ms) {
    int has = 0;
    int64_t local = 0;
    if (s->tag_create_time && local_time_parse(s->tag_create_time, &local)) {
        *create_epoch_ms = pm_tag_epoch_of_local(local);
        has |= 1;
    }
    if (s->tag_time_retained && duration_parse(s->tag_time_retained, retained_ms)) has |= 2;
    return has;
}

int pm_tag_to_json(const pm_snapshot *s, int64_t time_retained_ms, int64_t create_local_ms, pm_buf *out) {
    pm_snapshot copy = *s;
    pm_buf ct = {0}, tr = {0};
    /* Java 2.0 leaves null fields out; a tag never carries the snapshot's
     * own tag fields */
    copy.explicit_nulls = 0;
    copy.tag_create_time = copy.tag_time_retained = NULL;
    int rc = PAIMON_OK;
    if (time_retained_ms >= 0) {
        if (local_time_json(create_local_ms, &ct) || pm_buf_cstr(&ct) || duration_json(time_retained_ms, &tr) ||
            pm_buf_cstr(&tr))
            rc = PAIMON_NOMEM;
        copy.tag_create_time = (char *)ct.data;
        copy.tag_time_retained = (char *)tr.data;
    }
    out->len = 0;
    if (!rc) rc = pm_snapshot_to_json(&copy, out);
    pm_buf_free(&ct);
    pm_buf_free(&tr);
    return rc;
}

/* ---- create ------------------------------------------------------------------ */

/* A tag of snapshot id (Java findSnapshot: a tag keeps an expired snapshot). */
static int snapshot_from_tags(paimon_table *t, int64_t id, pm_snapshot **out, pm_err *e) {
    char **names = NULL;
    size_t n = 0;
    int rc = pm_tag_list(t->io, t->branch_root, &names, &n, e);
    for (size_t i = 0; !rc && i < n && !*out; i++) {
        pm_snapshot *s = NULL;
        if ((rc = pm_tag_read(t->io, t->branch_root, names[i], &s, e))) break;
        if (s->id == id) *out = s;
        else pm_snapshot_free(s);
    }
    pm_strv_free(names, n);
    if (!rc && !*out)
        rc = pm_fail(e, PAIMON_NOTFOUND, "%s: snapshot %lld does not exist (nor does a tag of it)", t->branch_root,
                     (long long)id);
    return rc;
}

/* The latest snapshot committed at or before ts (Java
 * SnapshotManager.earlierOrEqualTimeMills): binary search over the ids. */
static int snapshot_at_time(paimon_table *t, int64_t ts, pm_snapshot **out, pm_err *e) {
    int64_t *ids = NULL;
    size_t n = 0;
    int rc = pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, e);
    size_t lo = 0, hi = n;   /* answer: the last index in [0, lo) */
    while (!rc && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        pm_snapshot *s = NULL;
        if ((rc = pm_snapshot_read(t->io, t->branch_root, ids[mid], &s, e))) break;
        if (s->time_millis <= ts) lo = mid + 1;
        else hi = mid;
        pm_snapshot_free(s);
    }
    if (!rc && lo == 0)
        rc = pm_fail(e, PAIMON_NOTFOUND, "%s: no snapshot was committed at or before %lld", t->branch_root,
                     (long long)ts);
    if (!rc) rc = pm_snapshot_read(t->io, t->branch_root, ids[lo - 1], out, e);
    free(ids);
    return rc;
}

/* Both null and Long.MIN_VALUE mean "no watermark" (SnapshotManager
 * .isMissingWatermark). */
static int missing_watermark(const pm_snapshot *s) { return !s->watermark.has || s->watermark.v == INT64_MIN; }

static int read_id(paimon_table *t, int64_t id, pm_snapshot **s, pm_err *e) {
    pm_snapshot_free(*s);
    *s = NULL;
    return pm_snapshot_read(t->io, t->branch_root, id, s, e);
}

/* SnapshotManager.laterOrEqualWatermark: from the first snapshot with a
 * watermark, a binary search in which a snapshot without one takes the
 * place of the nearest earlier one that has one. *out NULL: none. */
static int later_or_equal_watermark(paimon_table *t, int64_t wm, pm_snapshot **out, pm_err *e) {
    *out = NULL;
    int64_t latest = 0, earliest = 0;
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &latest, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    if (!rc) rc = pm_snapshot_earliest_id(t->io, t->branch_root, &earliest, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    pm_snapshot *s = NULL, *found = NULL;
    if (!rc) rc = read_id(t, earliest, &s, e);
    while (!rc && missing_watermark(s) && earliest < latest) rc = read_id(t, ++earliest, &s, e);
    if (rc || missing_watermark(s)) { pm_snapshot_free(s); return rc; }
    if (s->watermark.v >= wm) { *out = s; return PAIMON_OK; }
    while (!rc && earliest <= latest) {
        int64_t mid = earliest + (latest - earliest) / 2, pos = mid;
        if ((rc = read_id(t, pos, &s, e))) break;
        while (!rc && missing_watermark(s) && pos > earliest) rc = read_id(t, --pos, &s, e);
        if (rc) break;
        if (missing_watermark(s)) {
            earliest = mid + 1;
        } else if (s->watermark.v > wm) {
            latest = pos - 1;
            pm_snapshot_free(found);
            found = s;
            s = NULL;
        } else if (s->watermark.v < wm) {
            earliest = mid + 1;
        } else {
            pm_snapshot_free(found);
            found = s;
            s = NULL;
            break;
        }
    }
    pm_snapshot_free(s);
    if (rc) { pm_snapshot_free(found); return rc; }
    *out = found;
    return PAIMON_OK;
}

static int cmp_snapshot_id(const void *a, const void *b) {
    const pm_snapshot *x = *(pm_snapshot *const *)a, *y = *(pm_snapshot *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Every tag of t's branch, read, sorted by snapshot id (Java's
 * TagManager.tags(), a map ordered by snapshot). An unreadable tag fails. */
static int read_tags(paimon_table *t, char ***names, pm_snapshot ***tags, size_t *n, pm_err *e) {
    *tags = NULL;
    int rc = pm_tag_list(t->io, t->branch_root, names, n, e);
    if (!rc && !(*tags = calloc(*n ? *n : 1, sizeof **tags))) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < *n; i++) rc = pm_tag_read(t->io, t->branch_root, (*names)[i], &(*tags)[i], e);
    return rc;
}

static void free_tags(char **names, pm_snapshot **tags, size_t n) {
    for (size_t i = 0; tags && i < n; i++) pm_snapshot_free(tags[i]);
    free(tags);
    pm_strv_free(names, n);
}

/* CreateTagFromWatermarkProcedure: laterOrEqualWatermark, then the first
 * tag (in snapshot order) whose watermark is >= wm wins if its watermark
 * is below that snapshot's (a tag keeps an expired snapshot). */
static int snapshot_at_watermark(paimon_table *t, int64_t wm, pm_snapshot **out, pm_err *e) {
    pm_snapshot *s = NULL, **tags = NULL;
    char **names = NULL;
    size_t n = 0;
    int rc = later_or_equal_watermark(t, wm, &s, e);
    if (!rc) rc = read_tags(t, &names, &tags, &n, e);
    if (!rc) {
        qsort(tags, n, sizeof *tags, cmp_snapshot_id);
        for (size_t i = 0; i < n; i++) {
            if (!tags[i]->watermark.has || wm > tags[i]->watermark.v) continue;
            if (!s || !s->watermark.has || tags[i]->watermark.v < s->watermark.v) {
                pm_snapshot_free(s);
                s = tags[i];
                tags[i] = NULL;
            }
            break;
        }
    }
    free_tags(names, tags, n);
    if (!rc && !s)
        rc = pm_fail(e, PAIMON_NOTFOUND, "%s: could not find any snapshot whose watermark is later than %lld",
                     t->branch_root, (long long)wm);
    if (rc) pm_snapshot_free(s);
    else *out = s;
    return rc;
}

static int is_auto_tag(const paimon_table *t, const char *name);

/* TagManager.validateNoAutoTag: a name TagAutoCreation would write may not
 * go on a snapshot that already has an automatic tag (the tag replaced
 * counts too, as in Java). */
static int validate_no_auto_tag(paimon_table *t, const char *name, int64_t snapshot_id, pm_err *e) {
    if (!is_auto_tag(t, name)) return PAIMON_OK;
    pm_snapshot **tags = NULL;
    char **names = NULL;
    size_t n = 0;
    int rc = read_tags(t, &names, &tags, &n, e);
    for (size_t i = 0; !rc && i < n; i++)
        if (tags[i]->id == snapshot_id && is_auto_tag(t, names[i]))
            rc = pm_fail(e, PAIMON_ERROR, "%s: snapshot %lld is already auto-tagged with '%s'; not adding '%s'",
                         t->branch_root, (long long)snapshot_id, names[i], name);
    free_tags(names, tags, n);
    return rc;
}

/* The snapshot a create or replace names: by id (or a tag of it), by
 * time, by watermark, else the latest. */
static int pick_snapshot(paimon_table *t, const pm_tag_create_opts *o, pm_snapshot **s, pm_err *e) {
    int rc;
    if (o->has_snapshot) {
        rc = pm_snapshot_read(t->io, t->branch_root, o->snapshot_id, s, e);
        if (rc == PAIMON_NOTFOUND) {
            pm_err_clear(e);
            rc = snapshot_from_tags(t, o->snapshot_id, s, e);
        }
    } else if (o->has_timestamp) {
        rc = snapshot_at_time(t, o->timestamp_ms, s, e);
    } else if (o->has_watermark) {
        rc = snapshot_at_watermark(t, o->watermark, s, e);
    } else {
        int64_t id = 0;
        rc = pm_snapshot_latest_id(t->io, t->branch_root, &id, e);
        if (rc == PAIMON_NOTFOUND)
            rc = pm_fail(e, PAIMON_NOTFOUND, "%s: no snapshot to tag%s", t->branch_root,
                         o->replace ? " (cannot replace the tag: the latest snapshot doesn't exist)" : "");
        if (!rc) rc = pm_snapshot_read(t->io, t->branch_root, id, s, e);
    }
    return rc;
}

/* replace: the tag must exist and be readable (what it named is reported). */
static int check_replaced(paimon_table *t, const char *name, const pm_buf *path, pm_tag_created *out, pm_err *e) {
    pm_snapshot *old = NULL;
    int rc = pm_tag_read(t->io, t->branch_root, name, &old, e);
    if (rc == PAIMON_NOTFOUND)
        return pm_fail(e, PAIMON_NOTFOUND, "tag '%s' doesn't exist (%s)", name, (const char *)path->data);
    if (rc) {
        pm_err_prefix(e, "refusing to replace tag '%s'", name);
        return rc;
    }
    out->previous_snapshot_id = old->id;
    pm_snapshot_free(old);
    return PAIMON_OK;
}

int pm_tag_create(paimon_table *t, const char *name, const pm_tag_create_opts *o, pm_tag_created *out, pm_err *e) {
    memset(out, 0, sizeof *out);
    int rc = pm_tag_name_check("tag", name, e);
    if (rc) return rc;
    if (o->has_snapshot + o->has_timestamp + o->has_watermark > 1)
        return pm_fail(e, PAIMON_MISUSE, "create tag '%s': give one of a snapshot, a timestamp or a watermark", name);
    if (o->replace && (o->has_timestamp || o->has_watermark))
        return pm_fail(e, PAIMON_MISUSE, "replace tag '%s': give a snapshot id or none (the latest), as Java's replace_tag",
                       name);
    if (o->has_time_retained && o->time_retained_ms <= 0)
        return pm_fail(e, PAIMON_MISUSE, "create tag '%s': time retained must be positive", name);
    pm_snapshot *s = NULL;
    pm_buf path = {0}, json = {0}, dir = {0};
    rc = tag_path(t, name, &path, e);
    if (!rc && o->replace) rc = check_replaced(t, name, &path, out, e);
    if (!rc) rc = pick_snapshot(t, o, &s, e);
    if (!rc) rc = validate_no_auto_tag(t, name, s->id, e);
    if (!rc) {
        out->snapshot_id = s->id;
        out->commit_time = s->time_millis;
        out->has_watermark = s->watermark.has;
        out->watermark = s->watermark.v;
        snprintf(out->path, sizeof out->path, "%s", (char *)path.data);
        int64_t now = o->now_local_ms ? o->now_local_ms : pm_local_now_millis();
        if (pm_tag_to_json(s, o->has_time_retained ? o->time_retained_ms : -1, now, &json)) rc = pm_nomem(e);
    }
    if (!rc && o->dry_run) {
        int ex = 0;
        if (!o->replace && !(rc = pm_io_exists(t->io, (char *)path.data, &ex, e)) && ex)
            rc = pm_fail(e, PAIMON_EXISTS, "tag '%s' already exists (%s)", name, (char *)path.data);
    } else if (!rc && o->replace) {
        /* Java overwrites the tag file; ours is atomic (temp file + rename) */
        rc = pm_io_write_atomic(t->io, (char *)path.data, json.data, json.len, e);
    } else if (!rc) {
        if (pm_buf_printf(&dir, "%s/tag", t->branch_root)) rc = pm_nomem(e);
        if (!rc) rc = pm_io_mkdirs(t->io, (char *)dir.data, e);
        if (!rc) rc = pm_io_create_no_replace(t->io, (char *)path.data, json.data, json.len, e);
        if (rc == PAIMON_EXISTS) pm_err_prefix(e, "tag '%s' already exists", name);
    }
    pm_snapshot_free(s);
    pm_buf_free(&path);
    pm_buf_free(&json);
    pm_buf_free(&dir);
    return rc;
}

/* ---- rename ------------------------------------------------------------------ */

static int tag_rename(paimon_table *t, const char *from, const char *to, int dry_run, pm_err *e);
int pm_tag_rename(paimon_table *t, const char *from, const char *to, pm_err *e) { return tag_rename(t, from, to, 0, e); }
int pm_tag_rename_check(paimon_table *t, const char *from, const char *to, pm_err *e) {
    return tag_rename(t, from, to, 1, e);
}

static int tag_rename(paimon_table *t, const char *from, const char *to, int dry_run, pm_err *e) {
    int rc = pm_tag_name_check("original tag", from, e);
    if (!rc) rc = pm_tag_name_check("new tag", to, e);
    if (rc) return rc;
    pm_buf src = {0}, dst = {0}, bytes = {0};
    pm_snapshot *s = NULL;
    if (!(rc = tag_path(t, from, &src, e)) && !(rc = tag_path(t, to, &dst, e))) {
        rc = pm_io_read_meta(t->io, (char *)src.data, PM_META_MAX, &bytes, e);
        if (rc == PAIMON_NOTFOUND) rc = pm_fail(e, PAIMON_NOTFOUND, "tag '%s' doesn't exist (%s)", from, (char *)src.data);
    }
    /* only a tag we can read moves: its bytes go over unchanged */
    if (!rc) rc = pm_snapshot_parse((const char *)bytes.data, bytes.len, (char *)src.data, &s, e);
    if (!rc && dry_run) {
        int ex = 0;
        if (!(rc = pm_io_exists(t->io, (char *)dst.data, &ex, e)) && ex)
            rc = pm_fail(e, PAIMON_EXISTS, "tag '%s' already exists: %s already exists", to, (char *)dst.data);
    } else if (!rc) {
        rc = pm_io_create_no_replace(t->io, (char *)dst.data, bytes.data, bytes.len, e);
        if (rc == PAIMON_EXISTS) pm_err_prefix(e, "tag '%s' already exists", to);
    }
    if (!rc && !dry_run && (rc = pm_io_remove(t->io, (char *)src.data, e)))
        pm_err_prefix(e, "tag '%s' was copied to '%s' but could not be removed (delete it by hand)", from, to);
    pm_snapshot_free(s);
    pm_buf_free(&src);
    pm_buf_free(&dst);
    pm_buf_free(&bytes);
    return rc;
}

/* ---- delete ------------------------------------------------------------------ */

/* What deleting the n tags (read, with their names) frees: their live
 * files, changelog files and metadata that nothing staying needs (every
 * snapshot, the other tags and changelogs of the branch, every other
 * branch: pm_protect). An unreadable file of any of them refuses. */
static int plan_tag_deletion(paimon_table *t, pm_snapshot *const *tags, const char *const *names, size_t n,
                             int threads, pm_protect_plan *pl, pm_err *e) {
    pm_protect *x = NULL;
    pm_protect_spec sp = {.kept_all = 1, .refs_above = INT64_MAX, .tags = names, .n_tags = n,
                          .refusing = "refusing to delete tags", .threads = threads};
    int rc = pm_protect_build(t, &sp, &x, e);
    for (size_t i = 0; !rc && i < n; i++)
        if ((rc = pm_protect_plan_dropped(x, t, tags[i], PM_PROTECT_LIVE, 1, pl, e)))
            pm_err_prefix(e, "refusing to delete tag '%s': cannot read what it holds", names[i]);
    pm_protect_free(x);
    return rc;
}

int pm_tags_delete(paimon_table *t, const char *const *names, size_t n, const pm_tag_delete_opts *o,
                   pm_tag_delete_result *r, pm_err *e) {
    int64_t t0 = pm_now_millis();
    memset(r, 0, sizeof *r);
    r->clean.dry_run = o->dry_run;
    if (n == 0) return PAIMON_OK;
    int rc = pm_table_check_manifest_format(t, e);
    pm_snapshot **tags = calloc(n, sizeof *tags);
    pm_deleter *data = pm_deleter_new(), *manifests = pm_deleter_new(), *lists = pm_deleter_new();
    pm_buf fp0 = {0}, fp1 = {0}, path = {0};
    if (!rc && (!tags || !data || !manifests || !lists)) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < n; i++) {
        if ((rc = pm_tag_name_check("tag", names[i], e))) break;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(names[k], names[i])) rc = pm_fail(e, PAIMON_MISUSE, "tag '%s' given twice", names[i]);
        if (!rc && (rc = pm_tag_read(t->io, t->branch_root, names[i], &tags[i], e))) {
            pm_err_prefix(e, "refusing to delete tag '%s'; nothing deleted", names[i]);
            if (rc == PAIMON_CORRUPT)
                pm_err_suffix(e, " (--force removes the tag file alone, leaving what it held to orphan cleaning)");
        }
    }
    if (!rc) rc = pm_refs_fingerprint(t, &fp0, e);
    pm_protect_plan pl = {data, manifests, lists, 0, 0};
    if (!rc) rc = plan_tag_deletion(t, tags, names, n, o->threads, &pl, e);
    r->clean.protected_files = pl.protected_files;
    if (!rc && (rc = pm_refs_fingerprint(t, &fp1, e)) == PAIMON_OK &&
        !pm_buf_eq(&fp0, &fp1))
        rc = pm_fail(e, PAIMON_CONFLICT, "%s: tags, branches or consumers changed while planning the tag deletion; nothing deleted, run again",
                     t->root);
    /* the tag files first: a crash after them leaves orphans, never a tag
     * whose files are gone (accounted as "tags"; a dry run plans them) */
    pm_clean_opts co = {o->threads, o->dry_run, 0, o->progress, o->progress_ud, 0};
    pm_deleter *tagd = o->dry_run ? pm_deleter_new() : NULL;
    if (!rc && o->dry_run && !tagd) rc = pm_nomem(e);
    for (size_t i = 0; !rc && i < n; i++) {
        if ((rc = tag_path(t, names[i], &path, e))) break;
        if (o->dry_run) rc = pm_deleter_add(tagd, (char *)path.data, PM_K_TAG, e);
        else if ((rc = pm_clean_remove_one(t->io, (char *)path.data, PM_K_TAG, &r->clean, e))) {
            pm_err_prefix(e, "deleting tag '%s' (%zu of %zu tag files removed, no data file deleted)", names[i], i, n);
            break;
        }
        r->n_tags++;
    }
    if (!rc && tagd) rc = pm_deleter_run(tagd, t->io, t->root, &co, "tags", &r->clean, e);
    pm_deleter_free(tagd);
    pm_deleter *phases[3] = {data, manifests, lists};
    static const char *const phase_names[3] = {"data files", "manifests", "manifest lists"};
    for (int ph = 0; !rc && ph < 3; ph++) {
        if ((rc = pm_deleter_run(phases[ph], t->io, t->root, &co, phase_names[ph], &r->clean, e))) break;
        if (!o->dry_run && r->clean.n_failures)
            rc = pm_fail(e, PAIMON_IO, "%s: %zu file(s) could not be deleted (first: %s: %s); the tags are gone, orphan cleaning removes the rest",
                         t->root, r->clean.n_failures, r->clean.failures[0].path, r->clean.failures[0].msg);
    }
    for (size_t i = 0; tags && i < n; i++) pm_snapshot_free(tags[i]);
    free(tags);
    pm_deleter_free(data);
    pm_deleter_free(manifests);
    pm_deleter_free(lists);
    pm_buf_free(&fp0);
    pm_buf_free(&fp1);
    pm_buf_free(&path);
    r->clean.duration_ms = pm_now_millis() - t0;
    if (rc) pm_clean_result_free(&r->clean);
    return rc;
}

/* ---- expiration rule ------------------------------------------------------------ */

void pm_tag_states_free(pm_tag_state *v, size_t n) {
    for (size_t i = 0; v && i < n; i++) free(v[i].name);
    free(v);
}

/* A name TagAutoCreation would write (TagPeriodHandler.isAutoTag, the
 * one period handler of pm_tag_auto); options it cannot read make no tag
 * automatic, so none expires by count. */
static int is_auto_tag(const paimon_table *t, const char *name) {
    pm_tag_period p;
    pm_err e;
    int64_t when;
    return pm_tag_period_read(t, &p, &e) == PAIMON_OK && pm_tag_period_parse(&p, name, &when);
}

static int cmp_state(const void *a, const void *b) {
    const pm_tag_state *x = a, *y = b;
    if (x->snapshot_id != y->snapshot_id) return x->snapshot_id < y->snapshot_id ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* TagAutoCreation: above tag.num-retained-max auto-tagged snapshots, the
 * oldest ones' auto tags go. */
static void mark_num_retained(const paimon_table *t, pm_tag_state *v, size_t n, int max) {
    const char *ac = pm_schema_option(t->schema, "tag.automatic-creation");
    if (max < 0 || !ac || !strcmp(ac, "none")) return;
    /* distinct auto-tagged snapshots, in id order (v is sorted) */
    size_t snaps = 0;
    int64_t last = INT64_MIN;
    for (size_t i = 0; i < n; i++)
        if (v[i].auto_tag && v[i].snapshot_id != last) { snaps++; last = v[i].snapshot_id; }
    size_t seen = 0, drop = snaps > (size_t)max ? snaps - (size_t)max : 0;
    last = INT64_MIN;
    for (size_t i = 0; i < n && drop; i++) {
        if (!v[i].auto_tag) continue;
        if (v[i].snapshot_id != last) {
            if (seen == drop) break;
            seen++;
            last = v[i].snapshot_id;
        }
        if (!v[i].expire_reason)         v[i].expire_reason = "num-retained-max";
    }
}

int pm_tags_expire_states(paimon_table *t, const pm_tag_expire_opts *o, pm_tag_state **out, size_t *n, pm_err *e) {
    *out = NULL;
    *n = 0;
    char **names = NULL;
    size_t nn = 0;
    int rc = pm_tag_list(t->io, t->branch_root, &names, &nn, e);
    pm_tag_state *v = rc ? NULL : calloc(nn ? nn : 1, sizeof *v);
    if (!rc && !v) rc = pm_nomem(e);
    int64_t now = o->now_local_ms ? o->now_local_ms : pm_local_now_millis();
    /* Java's expire_tags is TagTimeExpire alone: tag.num-retained-max is
     * TagAutoCreation's (auto_tags), applied here only when asked for */
    int max = o->num_retained_max;
    pm_buf path = {0};
    for (size_t i = 0; !rc && i < nn; i++) {
        pm_snapshot *s = NULL;
        if ((rc = pm_tag_read(t->io, t->branch_root, names[i], &s, e))) break;
        pm_tag_state *x = &v[i];
        x->name = names[i];
        names[i] = NULL;
        x->snapshot_id = s->id;
        x->commit_time = s->time_millis;
        x->has_create_time = s->tag_create_time && local_time_parse(s->tag_create_time, &x->create_time);
        x->has_time_retained = s->tag_time_retained && duration_parse(s->tag_time_retained, &x->time_retained_ms);
        x->auto_tag = is_auto_tag(t, x->name);
        pm_snapshot_free(s);
        if (!x->has_create_time && o->has_older_than) {   /* Java: the file's modification time */
            pm_stat st = {0};
            if ((rc = tag_path(t, x->name, &path, e)) || (rc = pm_io_stat(t->io, (char *)path.data, &st, e))) break;
            x->has_create_time = 1;
            x->create_time = pm_tag_local_ms(st.mtime_ms);
        }
        if (x->has_create_time && x->has_time_retained && now > x->create_time + x->time_retained_ms)
            x->expire_reason = "time-retained";
        else if (x->has_create_time && o->has_older_than && pm_tag_local_ms(o->older_than_ms) > x->create_time)
            x->expire_reason = "older-than";
    }
    pm_buf_free(&path);
    pm_strv_free(names, nn);
    if (rc) { pm_tag_states_free(v, nn); return rc; }
    qsort(v, nn, sizeof *v, cmp_state);
    mark_num_retained(t, v, nn, max);
    *out = v;
    *n = nn;
    return PAIMON_OK;
}
