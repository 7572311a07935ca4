/* Shared between the parts of the paimon.core binding (read side in
 * lpaimon.c, commit/write in lpaimon_write.c, maintenance in
 * lpaimon_maint.c). Only the binding includes this; the core never does. */
#ifndef LPAIMON_H
#define LPAIMON_H

#include "lpaimon_compat.h"
#include "pm_deleter.h"
#include "pm_ops.h"
#include "pm_table.h"

#define TABLE_MT "paimon.Table"
#define SNAP_MT "paimon.Snapshot"
#define ITER_MT "paimon.Iterator"

typedef struct lp_table { paimon_table *t; } lp_table;

typedef struct lp_snap {
    pm_snapshot *s;
    lp_table *owner;
    char *tag;                  /* tag name when loaded from a tag */
} lp_snap;

/* Errors: misuse raises; other failures return nil, message, code-name. */
const char *lp_code_name(int code);
int lp_push_fail(lua_State *L, int code, const pm_err *e);
int lp_raise(lua_State *L, const pm_err *e);

/* Every key of the options table at idx (when it is a table) must be in
 * known (NULL-ended): else a misuse error naming the key and the known ones.
 * A misspelt option (dryrun for dry_run) must not fall back to a default
 * that deletes more. what: the method, e.g. "expire_snapshots". */
void lp_check_options(lua_State *L, int idx, const char *what, const char *const *known);
/* The FileIO options at field "options" of the table at idx (nil: none) as
 * key, value, ..., NULL for pm_fileio_open; values strings, numbers
 * (exact text) or booleans, anything else raises naming the key (never the
 * value). Pushes one value (what keeps the strings alive) that must stay
 * on the stack while the array is used; NULL when there are none. */
const char *const *lp_fileio_options(lua_State *L, int idx, const char *what);

/* Field setters on the table at the stack top (nil values are skipped). */
void lp_set_str(lua_State *L, const char *k, const char *v);
void lp_set_lstr(lua_State *L, const char *k, const void *p, size_t n);
void lp_set_int(lua_State *L, const char *k, int64_t v);
void lp_set_opt(lua_State *L, const char *k, pm_opt_i64 v);
void lp_set_opt32(lua_State *L, const char *k, pm_opt_i32 v);
void lp_set_bool(lua_State *L, const char *k, int v);
void lp_push_strs(lua_State *L, pm_strs s);
void lp_push_cstrv(lua_State *L, char **v, size_t n);

paimon_table *lp_check_table(lua_State *L, int i);
lp_snap *lp_check_snap(lua_State *L, int i);
/* Push a Snapshot userdata owning s; the Table userdata is at tidx. */
void lp_push_snap(lua_State *L, int tidx, pm_snapshot *s, const char *tag);
void lp_push_schema(lua_State *L, const pm_schema *s);
void lp_push_datum(lua_State *L, const pm_type *ty, const pm_datum *d);
int lp_push_partition(lua_State *L, const paimon_table *t, pm_bytes part, pm_err *e);
void lp_push_stats(lua_State *L, const pm_stats *st);
void lp_push_data_file(lua_State *L, const pm_data_file *d);

/* Partition filters given as Lua tables {column = value}: strings, numbers
 * (integral ones render as integers), booleans or paimon.null. */
void lp_partition_filter_free(pm_partition_filter *f);
/* Append the pairs of the table at idx to *f; NULL or an error text (the
 * caller frees *f). */
const char *lp_partition_filter_from_table(lua_State *L, int idx, pm_partition_filter *f);
/* opts.partition of the options table at opts_idx (may be absent) into *f;
 * misuse raises. */
void lp_opt_partition_filter(lua_State *L, int opts_idx, pm_partition_filter *f);

/* Maintenance (lpaimon_maint.c): the face of the operations layer
 * (pm_ops) in Lua, and the progress callback. */
typedef struct lp_progress { lua_State *L; int ref; } lp_progress;
/* The options table at idx (may be absent) of operation `what` parsed by
 * the layer into *args; misuse raises. Leaves one value on the stack (the
 * copies args points into). */
void lp_op_options(lua_State *L, int idx, const char *what, pm_op_args *args);
/* Run the parsed operation on t: its result as a Lua table, or nil,
 * message, code (misuse raises); releases pr (may be NULL) first. */
int lp_op_run(lua_State *L, paimon_table *t, const pm_op_args *args, const pm_op_hooks *hooks, lp_progress *pr);
/* A result tree as Lua values (objects, lists as tables). */
void lp_push_result(lua_State *L, const pm_rv *v);
/* The same for an operation's result, but its "paths" list (a dry run's
 * plan) stays in C: a paimon.PathList (lpaimon_json.c) that owns res and
 * paimon.core.json_write streams. Takes res. */
void lp_push_result_keeping_paths(lua_State *L, pm_result *res);
void lp_progress_cb(void *ud, const char *phase, size_t done, size_t total);
/* Option `progress` (a function, or absent) of the options table at idx:
 * *fn / *ud call it through pr; lp_progress_release(pr) afterwards. */
void lp_opt_progress(lua_State *L, int idx, lp_progress *pr, pm_progress_fn *fn, void **ud);
void lp_progress_release(lp_progress *pr);

/* Each part registers its functions: Table methods go into the Table
 * metatable's __index, Snapshot methods into its __methods, module
 * functions into the module table at module_idx. */
void lp_add_table_methods(lua_State *L, const luaL_Reg *methods);
void lp_add_snapshot_methods(lua_State *L, const luaL_Reg *methods);
void lp_open_write(lua_State *L, int module_idx);   /* lpaimon_write.c */
void lp_open_maint(lua_State *L, int module_idx);   /* lpaimon_maint.c: expiration */
void lp_open_orphan(lua_State *L, int module_idx);  /* lpaimon_orphan.c */
void lp_open_upkeep(lua_State *L, int module_idx);  /* lpaimon_upkeep.c */
/* The commit's upkeep (pm_upkeep.h) on t, whose Table userdata is at tidx,
 * with paimon.upkeep's hook; pushes its result table (never fails: an
 * upkeep that could not run is {error, code, errors = 1}). */
int lp_upkeep_after_commit(lua_State *L, int tidx, paimon_table *t, int64_t *last_check, int64_t identifier);
void lp_open_verify(lua_State *L, int module_idx);  /* lpaimon_verify.c */
void lp_open_rollback(lua_State *L, int module_idx);  /* lpaimon_rollback.c */
void lp_open_partition(lua_State *L, int module_idx); /* lpaimon_partition.c */
void lp_open_tags(lua_State *L, int module_idx);    /* lpaimon_tags.c */
void lp_open_branches(lua_State *L, int module_idx);   /* lpaimon_branches.c */
void lp_open_changelogs(lua_State *L, int module_idx);   /* lpaimon_changelog.c */
void lp_open_warehouse(lua_State *L, int module_idx);   /* lpaimon_warehouse.c */
void lp_open_json(lua_State *L, int module_idx);         /* lpaimon_json.c */
void lp_open_alter(lua_State *L, int module_idx);        /* lpaimon_alter.c */

#endif
