/* Tags: create, rename, delete, and the expiration rule (Java TagManager
 * createTag / renameTag / deleteTag, TagTimeExpire, TagAutoCreation's
 * tag.num-retained-max). Files as Java writes them; deletion through the
 * one rule of pm_protect: fail closed
 * when anything that could protect a file cannot be read. No Lua here. */
#ifndef PM_TAGS_H
#define PM_TAGS_H

#include "pm_deleter.h"
#include "pm_table.h"

/* Epoch ms as Java's LocalDateTime of that instant (local wall clock,
 * encoded as UTC ms): the zone offset of that very instant, not of a
 * second clock read. */
int64_t pm_tag_local_ms(int64_t epoch_ms);
/* A local wall-clock time (Java's LocalDateTime, as tagCreateTime holds it)
 * back to epoch ms, with the zone offset near it. */
int64_t pm_tag_epoch_of_local(int64_t local_ms);
/* A tag's creation time as epoch ms and its retention in ms, from Java's
 * forms (a LocalDateTime array, decimal seconds): bit 1 set when the
 * creation time is there and readable, bit 2 the retention. */
int pm_tag_times(const pm_snapshot *s, int64_t *create_epoch_ms, int64_t *retained_ms);

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (Java's
 * LocalDate arithmetic). */
int64_t pm_days_from_civil(int64_t y, int m, int d);
void pm_civil_from_days(int64_t z, int64_t *y, int *m, int *d);

/* Java's rule (not blank), and ours: a name that is a file name (no '/',
 * not "." or "..", no control character). PAIMON_MISUSE naming it. */
int pm_tag_name_check(const char *what, const char *name, pm_err *e);

typedef struct pm_tag_create_opts {
    int has_snapshot;
    int64_t snapshot_id;          /* a snapshot, or a tag of that snapshot */
    int has_timestamp;
    int64_t timestamp_ms;         /* the latest snapshot committed at or before it */
    int has_time_retained;
    int64_t time_retained_ms;     /* writes tagCreateTime + tagTimeRetained */
    int64_t now_local_ms;         /* tagCreateTime (local wall clock); 0: the clock */
    int dry_run;
    int has_watermark;
    int64_t watermark;            /* Java create_tag_from_watermark: the earliest snapshot
                                     (or tag) whose watermark is >= it */
    int replace;                  /* Java replaceTag: the tag must exist; rewritten */
} pm_tag_create_opts;

typedef struct pm_tag_created {
    int64_t snapshot_id, commit_time;
    int has_watermark;
    int64_t watermark;            /* the snapshot's, when it has one */
    int64_t previous_snapshot_id; /* replace: the snapshot the tag named before */
    char path[1024];
} pm_tag_created;

/* Write tag/tag-<name> of t's branch without replacing (PAIMON_EXISTS if
 * the tag exists). Neither snapshot, timestamp nor watermark: the latest
 * snapshot. With o->replace (Java TagManager.replaceTag): the tag must
 * exist (PAIMON_NOTFOUND) and be readable; its file is rewritten
 * atomically, and the files only its old snapshot held are left to orphan
 * cleaning, as Java leaves them. Either way a name TagAutoCreation would
 * write is refused on a snapshot that already has an automatic tag
 * (TagManager.validateNoAutoTag). */
int pm_tag_create(paimon_table *t, const char *name, const pm_tag_create_opts *o, pm_tag_created *out, pm_err *e);

/* Java's Tag JSON: the snapshot's JSON, plus tagCreateTime (LocalDateTime
 * array) and tagTimeRetained (decimal seconds) when time_retained_ms >= 0. */
int pm_tag_to_json(const pm_snapshot *s, int64_t time_retained_ms, int64_t create_local_ms, pm_buf *out);

/* Create `to` with the bytes of `from` (no replace), then remove `from`. */
int pm_tag_rename(paimon_table *t, const char *from, const char *to, pm_err *e);
/* Its dry run: the same checks (names, the tag readable, the new name
 * free), nothing changed. */
int pm_tag_rename_check(paimon_table *t, const char *from, const char *to, pm_err *e);

typedef struct pm_tag_delete_opts {
    int threads;
    int dry_run;
    pm_progress_fn progress;
    void *progress_ud;
} pm_tag_delete_opts;

typedef struct pm_tag_delete_result {
    pm_clean_result clean;
    size_t n_tags;                /* tag files deleted (dry run: that would be) */
} pm_tag_delete_result;

/* Delete tags: every name must exist and be readable, else nothing is
 * deleted. Plan what only they hold, check that no tag, branch or consumer
 * changed meanwhile (PAIMON_CONFLICT), remove the tag files, then their
 * data files, manifests and manifest lists (a crash leaves orphans, never
 * a tag pointing at missing files). Free with pm_clean_result_free. */
int pm_tags_delete(paimon_table *t, const char *const *names, size_t n, const pm_tag_delete_opts *o,
                   pm_tag_delete_result *r, pm_err *e);

/* One tag as the expiration rule sees it. */
typedef struct pm_tag_state {
    char *name;
    int64_t snapshot_id, commit_time;
    int has_create_time;
    int64_t create_time;          /* local wall clock ms: tagCreateTime, else the file's mtime */
    int has_time_retained;
    int64_t time_retained_ms;
    int auto_tag;                 /* named like TagAutoCreation's tags (tag.period-formatter) */
    const char *expire_reason;    /* Java's rule: "time-retained", "older-than", "num-retained-max"; NULL keeps */
} pm_tag_state;

typedef struct pm_tag_expire_opts {
    int64_t now_local_ms;         /* 0: the clock */
    int has_older_than;
    int64_t older_than_ms;        /* epoch ms (Java expire_tags older_than) */
    int num_retained_max;         /* < 0: none (tag.num-retained-max is auto_tags', as Java's expire_tags) */
} pm_tag_expire_opts;

/* Every tag of t's branch with Java's verdict: TagTimeExpire (created
 * before now - tagTimeRetained, or before older_than), then, when
 * num_retained_max is given and tag.automatic-creation is on, the oldest
 * auto tags above it (TagAutoCreation's rule). Sorted by snapshot id, name. */
int pm_tags_expire_states(paimon_table *t, const pm_tag_expire_opts *o, pm_tag_state **out, size_t *n, pm_err *e);
void pm_tag_states_free(pm_tag_state *v, size_t n);

#endif
