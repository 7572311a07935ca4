/* The operations layer under both faces (paimon.h and the Lua binding) for
 * the maintenance operations: expire_range, expire_snapshots,
 * remove_orphan_files, verify, drop_partitions, expire_partitions, mark_partition_done, create_tag, delete_tags,
 * rename_tag, replace_tag, expire_tags, auto_tags, rollback, purge_files, consumers, reset_consumer,
 * delete_consumer, expire_consumers, clear_consumers, expire_changelogs, branches,
 * create_branch, delete_branch, rename_branch, fast_forward, upkeep. Each face hands over its
 * options as a list of key / value pairs (paimon.h: text under the flags'
 * names, "retain-min"; Lua: typed values under the Lua names,
 * "retain_min"); the one option table here knows, per option, both names,
 * the type, the range and the default, and refuses unknown keys (a misspelt
 * option must not fall back to a default that deletes more). The result is
 * one pm_result tree that each face walks generically. What only a face
 * can give (a progress callback, Lua partition
 * specs, on_retry) comes in pm_op_hooks. */
#ifndef PM_OPS_H
#define PM_OPS_H

#include "pm_exec.h"
#include "pm_partition_ops.h"
#include "pm_result.h"
#include "pm_table.h"

struct pm_upkeep_step;

typedef enum pm_face { PM_FACE_C, PM_FACE_LUA } pm_face;

/* A value as the face has it: paimon.h gives only TEXT; Lua gives its
 * booleans, integers and strings, anything else as OTHER (type_name says
 * what). */
typedef enum pm_opt_kind { PM_OV_TEXT, PM_OV_INT, PM_OV_BOOL, PM_OV_OTHER } pm_opt_kind;

typedef struct pm_opt_in {
    const char *key;
    pm_opt_kind kind;
    const char *text;             /* TEXT */
    int64_t i;                    /* INT, BOOL */
    const char *type_name;        /* OTHER */
} pm_opt_in;

/* The options every operation may take, one slot each. */
typedef enum pm_opt_id {
    PM_O_RETAIN_MIN, PM_O_RETAIN_MAX, PM_O_OLDER_THAN, PM_O_OLDER_THAN_MS, PM_O_MAX_DELETES,
    PM_O_KEEP_FROM, PM_O_UNTIL_ALIAS, PM_O_THREADS, PM_O_NOW, PM_O_DRY_RUN, PM_O_CLEAN_EMPTY_DIRS,
    PM_O_ALLOW_YOUNG_CUTOFF, PM_O_ALL_SNAPSHOTS, PM_O_PARTITION, PM_O_MAX_ATTEMPTS, PM_O_COMMIT_USER,
    PM_O_PROGRESS, PM_O_POLICY, PM_O_EXACT, PM_O_ON_RETRY,
    PM_O_TAG, PM_O_NEW_NAME, PM_O_SNAPSHOT, PM_O_TIMESTAMP, PM_O_TIME_RETAINED, PM_O_NUM_RETAINED_MAX,
    PM_O_TO_SNAPSHOT, PM_O_TO_TAG, PM_O_TO_TIMESTAMP, PM_O_AS_LATEST,          /* rollback */
    PM_O_TO_WATERMARK, PM_O_PURGE_FILES,
    PM_O_CONSUMER_ID, PM_O_NEXT_SNAPSHOT, PM_O_EXPIRATION,                     /* consumers */
    PM_O_BRANCH_NAME, PM_O_FROM_TAG,                                           /* branches */
    PM_O_NOW_MS_ALIAS,                                                         /* auto_tags (Lua) */
    PM_O_PATHS_HANDLE,                                                         /* dry-run plans (Lua) */
    PM_O_WATERMARK,                                                            /* create_tag */
    PM_O_INCLUDE, PM_O_EXCLUDE,                                                /* clear_consumers */
    PM_O_EXPIRATION_TIME, PM_O_STRATEGY, PM_O_TS_FORMATTER, PM_O_TS_PATTERN,
    PM_O_MAX_EXPIRES,                                                          /* expire_partitions */
    PM_O_FORCE,                                                                /* delete_tags */
    PM_O__N
} pm_opt_id;

typedef struct pm_op pm_op;

/* Options after parsing: has[id] set when given (or defaulted), v[id] the
 * integer / boolean / cut-off in epoch ms, text[id] a text value; the
 * face's pairs stay reachable for repeated keys ("partition"). */
typedef struct pm_op_args {
    const pm_op *op;
    pm_face face;
    unsigned char has[PM_O__N];
    int64_t v[PM_O__N];
    const char *text[PM_O__N];
    const pm_opt_in *in;
    size_t n_in;
} pm_op_args;

typedef struct pm_op_hooks {
    pm_progress_fn progress;
    void *progress_ud;
    const pm_part_select *select;           /* drop_partitions: instead of 'partition' options */
    void (*on_retry)(void *ud, int attempt, const pm_err *why);   /* drop_partitions */
    void *retry_ud;
    /* tag operations: the names the face gives as arguments (t:create_tag(name),
     * t:delete_tags{names}, t:rename_tag(old, new); expire_tags: a policy's
     * choice) instead of 'tag' / 'new-name' options */
    const char *const *tags;
    size_t n_tags;
    int has_tags;
    const char *new_name;
    /* branch operations: the branch name the face gives as an argument
     * (t:create_branch(name) ...) instead of the 'branch' option */
    const char *branch_name;
    /* upkeep: a face's own steps (pm_upkeep_opts.step) */
    int (*upkeep_step)(void *ud, const struct pm_upkeep_step *s, pm_result *r, pm_rv *node, pm_err *e);
    void *upkeep_ud;
} pm_op_hooks;

/* The operation called name; NULL if there is none. */
const pm_op *pm_op_find(const char *name);
const char *pm_op_name(const pm_op *op);
/* The face's name of option id (NULL: the face has none). */
const char *pm_op_key(pm_opt_id id, pm_face face);

/* Check and convert the face's pairs (they must outlive args); every
 * error is PAIMON_MISUSE naming the option. */
int pm_op_parse(const pm_op *op, pm_face face, const pm_opt_in *in, size_t n, pm_op_args *args, pm_err *e);
/* Row i of a kept plan (pm_result.plan) as put_clean lists a planned
 * file, appended to list: the faces that stream the plan make the same
 * bytes. tmp: scratch for the path. NULL (r->oom) out of memory. */
pm_rv *pm_op_plan_row(pm_result *r, pm_rv *list, const struct pm_plan *p, size_t i, pm_buf *tmp);

/* Run the operation; *out (free with pm_result_free) on success only.
 * hooks may be NULL. */
int pm_op_run(paimon_table *t, const pm_op_args *args, const pm_op_hooks *hooks, pm_result **out, pm_err *e);

/* paimon.h's result owning tree (freed also on failure). */
struct paimon_result;
int pm_api_result_wrap(pm_result *tree, struct paimon_result **out, pm_err *e);

#endif
