/* Automatic tag creation as Java's TagAutoCreation (process-time,
 * watermark) and TagBatchCreation (batch), run on demand over the
 * snapshots present: the table options (CoreOptions tag.*), the period
 * handler (TagPeriodHandler: tag names <-> local times), and one run that
 * creates the missing period tags without replacing any tag, then removes
 * the oldest automatic tags above tag.num-retained-max. No Lua here. */
#ifndef PM_TAG_AUTO_H
#define PM_TAG_AUTO_H

#include "pm_tags.h"

typedef enum pm_tag_auto_mode {
    PM_TAG_AUTO_NONE, PM_TAG_AUTO_PROCESS_TIME, PM_TAG_AUTO_WATERMARK, PM_TAG_AUTO_BATCH
} pm_tag_auto_mode;

/* The layout of a tag name (TagPeriodHandler's formatters). */
typedef enum pm_tag_layout {
    PM_TL_DAY,                    /* yyyy-MM-dd */
    PM_TL_DAY_NO_DASHES,          /* yyyyMMdd */
    PM_TL_HOUR,                   /* yyyy-MM-dd HH */
    PM_TL_HOUR_NO_DASHES,         /* yyyyMMdd HH */
    PM_TL_HOUR_NO_DASHES_SPACES,  /* yyyyMMddHH */
    PM_TL_MINUTE                  /* yyyyMMddHHmm (tag.creation-period-duration) */
} pm_tag_layout;

typedef struct pm_tag_period {
    int64_t period_ms;
    pm_tag_layout layout;
    int daily;                    /* DailyTagPeriodHandler: a name is read up to its first ' ' */
} pm_tag_period;

/* A time zone as Java's ZoneId for the few forms we can evaluate: the
 * system's (ZoneId.systemDefault) or a fixed offset (UTC, Z, +08:00,
 * GMT-8, ...). */
typedef struct pm_tag_zone {
    int system;
    int64_t offset_ms;
} pm_tag_zone;

typedef struct pm_tag_auto_conf {
    pm_tag_auto_mode mode;                    /* tag.automatic-creation */
    pm_tag_period period;                     /* tag.creation-period, tag.period-formatter,
                                                 tag.creation-period-duration */
    int64_t delay_ms;                         /* tag.creation-delay */
    int has_num_retained_max;
    int64_t num_retained_max;                 /* tag.num-retained-max */
    int has_time_retained;
    int64_t time_retained_ms;                 /* tag.default-time-retained */
    int automatic_completion;                 /* tag.automatic-completion */
    pm_tag_zone zone;                         /* sink.process-time-zone / sink.watermark-time-zone */
    const char *batch_name;                   /* tag.batch.customized-name (the schema's string) */
} pm_tag_auto_conf;

/* The table's options, checked as Java's CoreOptions parses them (enums
 * case-insensitive); a value we do not understand is PAIMON_CORRUPT
 * naming the option, a time zone we cannot evaluate PAIMON_UNSUPPORTED. */
int pm_tag_auto_conf_read(const paimon_table *t, pm_tag_auto_conf *c, pm_err *e);
/* The period handler alone (tag.creation-period, tag.period-formatter,
 * tag.creation-period-duration), for telling automatic tags apart. */
int pm_tag_period_read(const paimon_table *t, pm_tag_period *p, pm_err *e);

/* TagPeriodHandler.timeToTag: the name of the tag at local_ms (a local
 * wall-clock time encoded as UTC ms). 0, or -1 if cap is too small. */
int pm_tag_period_name(const pm_tag_period *p, int64_t local_ms, char *out, size_t cap);
/* TagPeriodHandler.tagToTime / isAutoTag: 1 and *local_ms when name is an
 * automatic tag's name (a valid date, strictly in the layout), else 0. */
int pm_tag_period_parse(const pm_tag_period *p, const char *name, int64_t *local_ms);

typedef struct pm_tag_auto_opts {
    int dry_run;
    int threads;
    int64_t now_local_ms;         /* tagCreateTime; 0: the clock */
    pm_progress_fn progress;
    void *progress_ud;
} pm_tag_auto_opts;

typedef struct pm_tag_auto_item {
    char *name;
    int64_t snapshot_id, commit_time;
} pm_tag_auto_item;

typedef struct pm_tag_auto_result {
    pm_tag_auto_mode mode;
    pm_tag_auto_item *created;    /* written now (dry run: would be) */
    size_t n_created;
    pm_tag_auto_item *existing;   /* the period's tag name was already taken: left alone */
    size_t n_existing;
    char **expired;               /* existing automatic tags removed over tag.num-retained-max */
    size_t n_expired;
    size_t n_skipped;             /* periods not written: over tag.num-retained-max at once */
    pm_tag_delete_result deletion;
} pm_tag_auto_result;

/* One run of TagAutoCreation.run (or TagBatchCreation.createTag) over the
 * snapshots of t's branch: every tag is created without replacing (a
 * period already tagged is left as it is, so runs are idempotent), then
 * tags over tag.num-retained-max go through pm_tags_delete. Free with
 * pm_tag_auto_result_free. */
int pm_tags_auto(paimon_table *t, const pm_tag_auto_opts *o, pm_tag_auto_result *r, pm_err *e);
void pm_tag_auto_result_free(pm_tag_auto_result *r);
const char *pm_tag_auto_mode_name(pm_tag_auto_mode m);

#endif
