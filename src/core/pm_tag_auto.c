/* Automatic tag creation (pm_tag_auto.h): Java's TagAutoCreation,
 * TagPeriodHandler, TagTimeExtractor and TagBatchCreation on our FileIO;
 * creation and deletion through pm_tags. */
#include "pm_tag_auto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pm_meta.h"

#define DAY_MS 86400000LL
#define HOUR_MS 3600000LL

/* ---- options (CoreOptions tag.*) ------------------------------------------- */

static const char *const mode_names[] = {"none", "process-time", "watermark", "batch", NULL};
static const char *const period_names[] = {"daily", "hourly", "two-hours", NULL};
static const char *const formatter_names[] = {"with_dashes", "without_dashes", "without_dashes_and_spaces", NULL};

const char *pm_tag_auto_mode_name(pm_tag_auto_mode m) {
    return (int)m >= 0 && m <= PM_TAG_AUTO_BATCH ? mode_names[m] : "?";
}

/* An enum option as OptionsUtils.convertToEnum reads it (case-insensitive);
 * dflt when unset. */
static int enum_option(const paimon_table *t, const char *key, const char *const *names, int dflt, int *idx,
                       pm_err *e) {
    const char *v = pm_schema_option(t->schema, key);
    *idx = dflt;
    if (!v) return PAIMON_OK;
    char list[160] = "";
    for (int i = 0; names[i]; i++) {
        if (!strcasecmp(names[i], v)) { *idx = i; return PAIMON_OK; }
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", names[i]);
    }
    return pm_fail(e, PAIMON_CORRUPT, "%s: table option %s='%s' is not one of: %s", t->root, key, v, list);
}

/* A duration option (TimeUtils.parseDuration); *has 0 when unset. */
static int duration_option(const paimon_table *t, const char *key, int *has, int64_t *ms, pm_err *e) {
    const char *v = pm_schema_option(t->schema, key);
    *has = v != NULL;
    *ms = 0;
    if (!v) return PAIMON_OK;
    if (pm_parse_duration_ms(v, ms, e)) {
        pm_err_prefix(e, "%s: table option %s", t->root, key);
        return e->code = PAIMON_CORRUPT;
    }
    return PAIMON_OK;
}

static int int_option(const paimon_table *t, const char *key, int *has, int64_t *out, pm_err *e) {
    const char *v = pm_schema_option(t->schema, key);
    *has = v != NULL;
    if (!v) return PAIMON_OK;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    while (*end == ' ') end++;
    /* a negative count would delete every automatic tag: refused */
    if (errno || end == v || *end || x < 0 || x > INT32_MAX)
        return pm_fail(e, PAIMON_CORRUPT, "%s: table option %s='%s' is not an integer >= 0", t->root, key, v);
    *out = x;
    return PAIMON_OK;
}

static int bool_option(const paimon_table *t, const char *key, int *out, pm_err *e) {
    const char *v = pm_schema_option(t->schema, key);
    *out = 0;
    if (!v || !strcasecmp(v, "false")) return PAIMON_OK;
    if (!strcasecmp(v, "true")) { *out = 1; return PAIMON_OK; }
    return pm_fail(e, PAIMON_CORRUPT, "%s: table option %s='%s' is not true or false", t->root, key, v);
}

/* "+8", "-08", "+08:00", "+0800", "+08:00:00", "+080000" (ZoneOffset.of). */
static int offset_parse(const char *s, int64_t *ms) {
    int sign = *s == '+' ? 1 : *s == '-' ? -1 : 0;
    if (!sign) return 0;
    s++;
    int f[3] = {0, 0, 0}, nf = 0;
    size_t len = strlen(s);
    if (len == 1 || len == 2) {
        for (size_t i = 0; i < len; i++) if (s[i] < '0' || s[i] > '9') return 0;
        f[0] = atoi(s);
    } else {
        int colon = len > 2 && s[2] == ':';
        size_t step = colon ? 3 : 2;
        if (len != (colon ? 5u : 4u) && len != (colon ? 8u : 6u)) return 0;
        for (size_t p = 0; p < len; p += step, nf++) {
            if (s[p] < '0' || s[p] > '9' || s[p + 1] < '0' || s[p + 1] > '9') return 0;
            if (colon && p + 2 < len && s[p + 2] != ':') return 0;
            f[nf] = (s[p] - '0') * 10 + (s[p + 1] - '0');
        }
    }
    if (f[0] > 18 || f[1] > 59 || f[2] > 59) return 0;
    *ms = sign * ((int64_t)f[0] * HOUR_MS + f[1] * 60000LL + f[2] * 1000LL);
    return *ms >= -18 * HOUR_MS && *ms <= 18 * HOUR_MS;
}

/* ZoneId.of for a fixed offset; NULL: the system's zone. */
static int zone_option(const paimon_table *t, const char *key, const char *dflt, pm_tag_zone *z, pm_err *e) {
    const char *v = pm_schema_option(t->schema, key);
    if (!v) v = dflt;
    memset(z, 0, sizeof *z);
    if (!v) { z->system = 1; return PAIMON_OK; }
    if (!strcmp(v, "Z") || !strcmp(v, "UTC") || !strcmp(v, "GMT") || !strcmp(v, "UT")) return PAIMON_OK;
    const char *off = v;
    if (!strncmp(v, "UTC", 3) || !strncmp(v, "GMT", 3)) off = v + 3;
    else if (!strncmp(v, "UT", 2)) off = v + 2;
    if (offset_parse(off, &z->offset_ms)) return PAIMON_OK;
    return pm_fail(e, PAIMON_UNSUPPORTED,
                   "%s: table option %s='%s': only UTC and fixed offsets (+08:00, GMT-8) are supported here; "
                   "leave it unset for the system's zone",
                   t->root, key, v);
}

int pm_tag_period_read(const paimon_table *t, pm_tag_period *p, pm_err *e) {
    int period, fmt, has_duration;
    int64_t duration;
    int rc = enum_option(t, "tag.creation-period", period_names, 0, &period, e);
    if (!rc) rc = enum_option(t, "tag.period-formatter", formatter_names, 0, &fmt, e);
    if (!rc) rc = duration_option(t, "tag.creation-period-duration", &has_duration, &duration, e);
    if (rc) return rc;
    memset(p, 0, sizeof *p);
    if (has_duration) {   /* PeriodDurationTagPeriodHandler: tag.creation-period is ignored */
        if (duration <= 0)
            return pm_fail(e, PAIMON_CORRUPT, "%s: table option tag.creation-period-duration must be positive",
                           t->root);
        p->period_ms = duration;
        p->layout = PM_TL_MINUTE;
    } else if (period == 0) {   /* DailyTagPeriodHandler */
        p->period_ms = DAY_MS;
        p->layout = fmt == 0 ? PM_TL_DAY : PM_TL_DAY_NO_DASHES;
        p->daily = 1;
    } else if (period == 1) {   /* HourlyTagPeriodHandler */
        p->period_ms = HOUR_MS;
        p->layout = fmt == 0 ? PM_TL_HOUR : fmt == 1 ? PM_TL_HOUR_NO_DASHES : PM_TL_HOUR_NO_DASHES_SPACES;
    } else {                    /* TwoHoursTagPeriodHandler: always yyyy-MM-dd HH */
        p->period_ms = 2 * HOUR_MS;
        p->layout = PM_TL_HOUR;
    }
    return PAIMON_OK;
}

int pm_tag_auto_conf_read(const paimon_table *t, pm_tag_auto_conf *c, pm_err *e) {
    memset(c, 0, sizeof *c);
    int mode, has_delay;
    int rc = enum_option(t, "tag.automatic-creation", mode_names, 0, &mode, e);
    c->mode = (pm_tag_auto_mode)mode;
    /* Java reads the period options only to create tags: with none, a
     * table whose other tag.* options are junk is still maintained */
    if (rc || c->mode == PM_TAG_AUTO_NONE) return rc;
    rc = pm_tag_period_read(t, &c->period, e);
    if (!rc) rc = duration_option(t, "tag.creation-delay", &has_delay, &c->delay_ms, e);
    if (!rc) rc = int_option(t, "tag.num-retained-max", &c->has_num_retained_max, &c->num_retained_max, e);
    if (!rc) rc = duration_option(t, "tag.default-time-retained", &c->has_time_retained, &c->time_retained_ms, e);
    if (!rc) rc = bool_option(t, "tag.automatic-completion", &c->automatic_completion, e);
    if (rc) return rc;
    if (c->has_time_retained && c->time_retained_ms <= 0)
        return pm_fail(e, PAIMON_CORRUPT, "%s: table option tag.default-time-retained must be positive", t->root);
    /* BaseTagPeriodHandler.validateDelay */
    if (c->mode != PM_TAG_AUTO_NONE && c->mode != PM_TAG_AUTO_BATCH && c->delay_ms >= c->period.period_ms)
        return pm_fail(e, PAIMON_CORRUPT, "%s: table option tag.creation-delay (%lld ms) must be shorter than the period (%lld ms)",
                       t->root, (long long)c->delay_ms, (long long)c->period.period_ms);
    if (c->mode == PM_TAG_AUTO_WATERMARK) rc = zone_option(t, "sink.watermark-time-zone", "UTC", &c->zone, e);
    else if (c->mode != PM_TAG_AUTO_NONE) rc = zone_option(t, "sink.process-time-zone", NULL, &c->zone, e);
    c->batch_name = pm_schema_option(t->schema, "tag.batch.customized-name");
    if (!rc && c->mode == PM_TAG_AUTO_BATCH && c->batch_name && pm_tag_name_check("tag", c->batch_name, e)) {
        pm_err_prefix(e, "%s: table option tag.batch.customized-name", t->root);
        rc = e->code = PAIMON_CORRUPT;
    }
    return rc;
}

/* ---- the period handler (TagPeriodHandler) --------------------------------- */

static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

/* The layouts: Y M D h m are digits of year, month, day, hour, minute. */
static const char *layout_pattern(pm_tag_layout l) {
    switch (l) {
    case PM_TL_DAY: return "YYYY-MM-DD";
    case PM_TL_DAY_NO_DASHES: return "YYYYMMDD";
    case PM_TL_HOUR: return "YYYY-MM-DD hh";
    case PM_TL_HOUR_NO_DASHES: return "YYYYMMDD hh";
    case PM_TL_HOUR_NO_DASHES_SPACES: return "YYYYMMDDhh";
    case PM_TL_MINUTE: return "YYYYMMDDhhmm";
    }
    return "";
}

int pm_tag_period_name(const pm_tag_period *p, int64_t local_ms, char *out, size_t cap) {
    int64_t days = floor_div(local_ms, DAY_MS), in_day = local_ms - days * DAY_MS, y;
    int mo, d;
    pm_civil_from_days(days, &y, &mo, &d);
    if (y < 0 || y > 9999) return -1;   /* Java: wider than appendValue(YEAR, 4) */
    int v[5] = {(int)y, mo, d, (int)(in_day / HOUR_MS), (int)(in_day / 60000 % 60)};
    size_t k = 0;
    for (const char *q = layout_pattern(p->layout); *q; q++) {
        if (k + 1 >= cap) return -1;
        const char *f = strchr("YMDhm", *q);
        if (!f) { out[k++] = *q; continue; }
        /* the digit of this letter counted from the right of its run */
        int run_left = 0;
        while (q[run_left + 1] == *q) run_left++;
        int x = v[f - "YMDhm"];
        for (int i = 0; i < run_left; i++) x /= 10;
        out[k++] = (char)('0' + x % 10);
    }
    out[k] = '\0';
    return 0;
}

int pm_tag_period_parse(const pm_tag_period *p, const char *name, int64_t *local_ms) {
    const char *pat = layout_pattern(p->layout);
    /* DailyTagPeriodHandler.tagToTime: the text before the first ' ' */
    size_t len = strlen(name);
    if (p->daily) {
        const char *sp = strchr(name, ' ');
        if (sp) len = (size_t)(sp - name);
    }
    if (len != strlen(pat)) return 0;
    int64_t v[5] = {0, 0, 0, 0, 0};
    for (size_t i = 0; i < len; i++) {
        const char *f = strchr("YMDhm", pat[i]);
        if (!f) { if (name[i] != pat[i]) return 0; continue; }
        if (name[i] < '0' || name[i] > '9') return 0;
        v[f - "YMDhm"] = v[f - "YMDhm"] * 10 + (name[i] - '0');
    }
    int has_date = strchr(pat, 'D') != NULL;
    if (has_date && (v[1] < 1 || v[1] > 12 || v[2] < 1)) return 0;
    /* ResolverStyle.STRICT: the day must exist in that month */
    int64_t first = pm_days_from_civil(v[0], (int)v[1], 1);
    int64_t next = v[1] == 12 ? pm_days_from_civil(v[0] + 1, 1, 1) : pm_days_from_civil(v[0], (int)v[1] + 1, 1);
    if (v[2] > next - first || v[3] > 23 || v[4] > 59) return 0;
    *local_ms = (first + v[2] - 1) * DAY_MS + v[3] * HOUR_MS + v[4] * 60000;
    return 1;
}

static int64_t zone_local(const pm_tag_zone *z, int64_t epoch_ms) {
    return z->system ? pm_tag_local_ms(epoch_ms) : epoch_ms + z->offset_ms;
}

/* ---- one run ------------------------------------------------------------------ */

typedef struct auto_tag {
    char *name;
    int64_t snapshot_id, commit_time;
    int64_t mtime;                /* batch: the tag file's, to order tags of one snapshot */
    int planned;                  /* to be created by this run */
    int drop;                     /* over tag.num-retained-max */
} auto_tag;

typedef struct auto_run {
    paimon_table *t;
    pm_tag_auto_conf c;
    char **names;                 /* every tag of the branch */
    size_t n_names;
    auto_tag *v;                  /* the automatic tags, then the planned ones */
    size_t n, cap;
    int fired;                    /* a period was due: Java then applies tag.num-retained-max */
} auto_run;

static int tag_taken(const auto_run *a, const char *name) {
    for (size_t i = 0; i < a->n_names; i++)
        if (!strcmp(a->names[i], name)) return 1;
    for (size_t i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].name, name)) return 1;
    return 0;
}

static int push_tag(auto_run *a, const char *name, int64_t snapshot_id, int64_t commit_time, int planned,
                    pm_err *e) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        auto_tag *nv = realloc(a->v, cap * sizeof *nv);
        if (!nv) return pm_nomem(e);
        a->v = nv;
        a->cap = cap;
    }
    auto_tag *x = &a->v[a->n];
    memset(x, 0, sizeof *x);
    if (!(x->name = pm_strdup(name))) return pm_nomem(e);
    x->snapshot_id = snapshot_id;
    x->commit_time = commit_time;
    x->planned = planned;
    a->n++;
    return PAIMON_OK;
}

/* TagBatchCreation's tag names: batch-write-yyyy-MM-dd, or the customized one. */
static int is_batch_tag(const auto_run *a, const char *name, int64_t *local_ms) {
    static const pm_tag_period day = {DAY_MS, PM_TL_DAY, 0};
    if (a->c.batch_name && !strcmp(name, a->c.batch_name)) { *local_ms = 0; return 1; }
    return !strncmp(name, "batch-write-", 12) && pm_tag_period_parse(&day, name + 12, local_ms);
}

/* The automatic tags there are, with their snapshots (each read: an
 * unreadable one fails the run, as it would Java's). *latest: the index of
 * the latest by period time (TagAutoCreation's progress), -1 if none. */
static int load_auto_tags(auto_run *a, long *latest, pm_err *e) {
    paimon_table *t = a->t;
    int64_t best = 0;
    *latest = -1;
    int rc = pm_tag_list(t->io, t->branch_root, &a->names, &a->n_names, e);
    pm_buf path = {0};
    for (size_t i = 0; !rc && i < a->n_names; i++) {
        int64_t when;
        int is_auto = a->c.mode == PM_TAG_AUTO_BATCH ? is_batch_tag(a, a->names[i], &when)
                                                     : pm_tag_period_parse(&a->c.period, a->names[i], &when);
        if (!is_auto) continue;
        pm_snapshot *s = NULL;
        if ((rc = pm_tag_read(t->io, t->branch_root, a->names[i], &s, e))) {
            pm_err_prefix(e, "reading automatic tag '%s'", a->names[i]);
            break;
        }
        rc = push_tag(a, a->names[i], s->id, s->time_millis, 0, e);
        pm_snapshot_free(s);
        if (rc) break;
        if (a->c.mode == PM_TAG_AUTO_BATCH) {
            pm_stat st = {0};
            path.len = 0;
            if (pm_buf_printf(&path, "%s/tag/tag-%s", t->branch_root, a->names[i])) rc = pm_nomem(e);
            if (!rc) rc = pm_io_stat(t->io, (char *)path.data, &st, e);
            a->v[a->n - 1].mtime = st.mtime_ms;
        } else if (*latest < 0 || when > best) {
            best = when;
            *latest = (long)(a->n - 1);
        }
    }
    pm_buf_free(&path);
    return rc;
}

/* TagAutoCreation.tryToCreateTags for one snapshot. */
static int try_snapshot(auto_run *a, const pm_snapshot *s, int *has_next, int64_t *next_tag, pm_tag_auto_result *r,
                        pm_err *e) {
    const pm_tag_period *p = &a->c.period;
    int64_t time;
    if (a->c.mode == PM_TAG_AUTO_WATERMARK) {   /* WatermarkExtractor: none yet, no tag */
        if (!s->watermark.has || s->watermark.v == INT64_MIN) return PAIMON_OK;
        time = zone_local(&a->c.zone, s->watermark.v);
    } else {
        time = zone_local(&a->c.zone, s->time_millis);
    }
    if (*has_next && time - a->c.delay_ms < *next_tag + p->period_ms) return PAIMON_OK;
    /* normalizeToPreviousTag: Java's truncating division, one period back */
    int64_t this_tag = (time / p->period_ms) * p->period_ms - p->period_ms;
    if (a->c.automatic_completion && *has_next) this_tag = *next_tag;
    char name[64];
    if (pm_tag_period_name(p, this_tag, name, sizeof name))
        return pm_fail(e, PAIMON_UNSUPPORTED, "%s: snapshot %lld: the tag time is outside years 0-9999",
                       a->t->branch_root, (long long)s->id);
    a->fired = 1;
    *has_next = 1;
    *next_tag = this_tag + p->period_ms;
    if (tag_taken(a, name)) {   /* createTag(..., ignoreIfExists = true) */
        pm_tag_auto_item *nv = realloc(r->existing, (r->n_existing + 1) * sizeof *nv);
        if (!nv) return pm_nomem(e);
        r->existing = nv;
        nv[r->n_existing].snapshot_id = s->id;
        nv[r->n_existing].commit_time = s->time_millis;
        if (!(nv[r->n_existing].name = pm_strdup(name))) return pm_nomem(e);
        r->n_existing++;
        return PAIMON_OK;
    }
    /* TagManager.validateNoAutoTag */
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].snapshot_id == s->id)
            return pm_fail(e, PAIMON_ERROR, "%s: snapshot %lld is already auto-tagged with '%s'; not adding '%s'",
                           a->t->branch_root, (long long)s->id, a->v[i].name, name);
    return push_tag(a, name, s->id, s->time_millis, 1, e);
}

/* TagAutoCreation.run: from the snapshot after the latest automatic tag's
 * (or the earliest) on, every snapshot in id order while they follow. */
static int plan_periods(auto_run *a, long latest, pm_tag_auto_result *r, pm_err *e) {
    paimon_table *t = a->t;
    int64_t *ids = NULL, next = 1, next_tag = 0;
    size_t n = 0;
    int has_next = latest >= 0;
    int rc = pm_snapshot_list_ids(t->io, t->branch_root, &ids, &n, e);
    if (rc) return rc;
    if (latest >= 0) {
        next = a->v[latest].snapshot_id + 1;
        pm_tag_period_parse(&a->c.period, a->v[latest].name, &next_tag);
        next_tag += a->c.period.period_ms;
    } else if (n > 0) {
        next = ids[0];
    }
    size_t i = 0;
    while (i < n && ids[i] < next) i++;
    if (i == 0 && n > 0 && ids[0] > next) next = ids[0];   /* expired meanwhile: from the earliest */
    for (; !rc && i < n && ids[i] == next; i++, next++) {
        pm_snapshot *s = NULL;
        if (!(rc = pm_snapshot_read(t->io, t->branch_root, ids[i], &s, e)))
            rc = try_snapshot(a, s, &has_next, &next_tag, r, e);
        pm_snapshot_free(s);
    }
    free(ids);
    return rc;
}

/* TagBatchCreation.createTag: the latest snapshot, tagged by its day. */
static int plan_batch(auto_run *a, pm_tag_auto_result *r, pm_err *e) {
    paimon_table *t = a->t;
    int64_t id;
    int rc = pm_snapshot_latest_id(t->io, t->branch_root, &id, e);
    if (rc == PAIMON_NOTFOUND) { pm_err_clear(e); return PAIMON_OK; }
    pm_snapshot *s = NULL;
    if (rc || (rc = pm_snapshot_read(t->io, t->branch_root, id, &s, e))) return rc;
    static const pm_tag_period day = {DAY_MS, PM_TL_DAY, 0};
    char name[80] = "batch-write-";
    const char *use = a->c.batch_name ? a->c.batch_name : name;
    if (!a->c.batch_name && pm_tag_period_name(&day, zone_local(&a->c.zone, s->time_millis), name + 12, sizeof name - 12))
        rc = pm_fail(e, PAIMON_UNSUPPORTED, "%s: snapshot %lld: its day is outside years 0-9999", t->branch_root,
                     (long long)id);
    a->fired = 1;
    /* Java replaces an existing tag of that name; we never replace a tag */
    if (!rc && tag_taken(a, use)) {
        pm_tag_auto_item *nv = realloc(r->existing, (r->n_existing + 1) * sizeof *nv);
        if (!nv) rc = pm_nomem(e);
        else {
            r->existing = nv;
            nv[r->n_existing].snapshot_id = s->id;
            nv[r->n_existing].commit_time = s->time_millis;
            if (!(nv[r->n_existing].name = pm_strdup(use))) rc = pm_nomem(e);
            else r->n_existing++;
        }
    } else if (!rc) {
        rc = push_tag(a, use, s->id, s->time_millis, 1, e);
        if (!rc) a->v[a->n - 1].mtime = INT64_MAX;   /* the newest file of its snapshot */
    }
    pm_snapshot_free(s);
    return rc;
}

static int cmp_auto(const void *x, const void *y) {
    const auto_tag *p = x, *q = y;
    if (p->snapshot_id != q->snapshot_id) return p->snapshot_id < q->snapshot_id ? -1 : 1;
    if (p->mtime != q->mtime) return p->mtime < q->mtime ? -1 : 1;
    return strcmp(p->name, q->name);
}

/* tag.num-retained-max. TagAutoCreation: the automatic tags of the oldest
 * snapshots until max snapshots keep one (more than one automatic tag on
 * a snapshot it would delete is refused, as Java's checkAndGetOneAutoTag).
 * TagBatchCreation: the oldest tags until max are left, a whole snapshot's
 * while that stays above max, else its oldest files first; of the batch
 * tags only (Java counts every tag, manual ones too: we never delete a tag
 * by count that no automatic creation wrote). */
static int mark_over_max(auto_run *a, pm_err *e) {
    if (!a->fired || !a->c.has_num_retained_max) return PAIMON_OK;
    qsort(a->v, a->n, sizeof *a->v, cmp_auto);
    int64_t max = a->c.num_retained_max;
    if (a->c.mode == PM_TAG_AUTO_BATCH) {
        for (size_t i = 0; (int64_t)(a->n - i) > max; i++) a->v[i].drop = 1;
        return PAIMON_OK;
    }
    size_t groups = 0;
    for (size_t i = 0; i < a->n; i++)
        if (i == 0 || a->v[i].snapshot_id != a->v[i - 1].snapshot_id) groups++;
    if ((int64_t)groups <= max) return PAIMON_OK;
    size_t drop = groups - (size_t)max, g = 0;
    for (size_t i = 0; i < a->n && g < drop; g++) {
        size_t j = i + 1;
        while (j < a->n && a->v[j].snapshot_id == a->v[i].snapshot_id) j++;
        if (j - i > 1)
            return pm_fail(e, PAIMON_ERROR, "%s: snapshot %lld has more than one automatic tag ('%s', '%s'); "
                           "not expiring by tag.num-retained-max",
                           a->t->branch_root, (long long)a->v[i].snapshot_id, a->v[i].name, a->v[i + 1].name);
        a->v[i].drop = 1;
        i = j;
    }
    return PAIMON_OK;
}

static int create_planned(auto_run *a, const pm_tag_auto_opts *o, pm_tag_auto_result *r, pm_err *e) {
    size_t want = 0;
    for (size_t i = 0; i < a->n; i++) want += a->v[i].planned && !a->v[i].drop;
    r->created = calloc(want ? want : 1, sizeof *r->created);
    if (!r->created) return pm_nomem(e);
    for (size_t i = 0; i < a->n; i++) {
        auto_tag *x = &a->v[i];
        if (!x->planned) continue;
        if (x->drop) { r->n_skipped++; continue; }
        pm_tag_create_opts co;
        memset(&co, 0, sizeof co);
        co.has_snapshot = 1;
        co.snapshot_id = x->snapshot_id;
        co.has_time_retained = a->c.has_time_retained;
        co.time_retained_ms = a->c.time_retained_ms;
        co.now_local_ms = o->now_local_ms;
        co.dry_run = o->dry_run;
        pm_tag_created c;
        int rc = pm_tag_create(a->t, x->name, &co, &c, e);
        if (rc == PAIMON_EXISTS) {   /* another run was first: the period has its tag */
            pm_err_clear(e);
            continue;
        }
        if (rc) {
            pm_err_prefix(e, "creating automatic tag '%s' (%zu created before it)", x->name, r->n_created);
            return rc;
        }
        pm_tag_auto_item *it = &r->created[r->n_created];
        it->snapshot_id = x->snapshot_id;
        it->commit_time = x->commit_time;
        if (!(it->name = pm_strdup(x->name))) return pm_nomem(e);
        r->n_created++;
    }
    return PAIMON_OK;
}

static int delete_dropped(auto_run *a, const pm_tag_auto_opts *o, pm_tag_auto_result *r, pm_err *e) {
    r->expired = calloc(a->n ? a->n : 1, sizeof *r->expired);
    if (!r->expired) return pm_nomem(e);
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].drop && !a->v[i].planned && !(r->expired[r->n_expired++] = pm_strdup(a->v[i].name)))
            return pm_nomem(e);
    r->deletion.clean.dry_run = o->dry_run;
    if (r->n_expired == 0) return PAIMON_OK;
    pm_tag_delete_opts d = {o->threads > 0 ? o->threads : 1, o->dry_run, o->progress, o->progress_ud};
    return pm_tags_delete(a->t, (const char *const *)r->expired, r->n_expired, &d, &r->deletion, e);
}

void pm_tag_auto_result_free(pm_tag_auto_result *r) {
    for (size_t i = 0; i < r->n_created; i++) free(r->created[i].name);
    for (size_t i = 0; i < r->n_existing; i++) free(r->existing[i].name);
    free(r->created);
    free(r->existing);
    pm_strv_free(r->expired, r->n_expired);
    pm_clean_result_free(&r->deletion.clean);
    memset(r, 0, sizeof *r);
}

int pm_tags_auto(paimon_table *t, const pm_tag_auto_opts *o, pm_tag_auto_result *r, pm_err *e) {
    memset(r, 0, sizeof *r);
    auto_run a;
    memset(&a, 0, sizeof a);
    a.t = t;
    int rc = pm_tag_auto_conf_read(t, &a.c, e);
    r->mode = a.c.mode;
    if (rc || a.c.mode == PM_TAG_AUTO_NONE) return rc;
    long latest = -1;
    rc = load_auto_tags(&a, &latest, e);
    if (!rc) rc = a.c.mode == PM_TAG_AUTO_BATCH ? plan_batch(&a, r, e) : plan_periods(&a, latest, r, e);
    if (!rc) rc = mark_over_max(&a, e);
    /* plan first: nothing is written when the plan fails */
    if (!rc) rc = create_planned(&a, o, r, e);
    if (!rc) rc = delete_dropped(&a, o, r, e);
    for (size_t i = 0; i < a.n; i++) free(a.v[i].name);
    free(a.v);
    pm_strv_free(a.names, a.n_names);
    if (rc) pm_tag_auto_result_free(r);
    return rc;
}
