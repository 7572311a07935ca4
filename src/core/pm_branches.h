/* Branches: create, delete, fast-forward, list (Java's
 * FileSystemBranchManager createBranch / dropBranch / fastForward and
 * BranchManager.branches). Files as Java writes them, through FileIO
 * operations only (directories are virtual on object stores). Deletion
 * removes what only the branch held, through pm_protect (the one rule of what stays needed);
 * fast-forward never deletes data files (what main's dropped snapshots
 * alone held is left to orphan cleaning, as in Java). No Lua here. */
#ifndef PM_BRANCHES_H
#define PM_BRANCHES_H

#include "pm_deleter.h"
#include "pm_table.h"

/* Java's BranchManager.validateBranch (not "main", not blank, not only
 * digits) and ours (a file name: no '/', control character, "." or "..").
 * PAIMON_MISUSE naming the problem. */
int pm_branch_name_check(const char *name, pm_err *e);

typedef struct pm_branch_created {
    int64_t snapshot_id;          /* from a tag: its snapshot; else 0 */
    int64_t schema_id;            /* the latest schema copied */
    size_t n_files;               /* files written (dry run: that would be) */
    char path[1024];              /* the branch directory */
} pm_branch_created;

/* Create branch `name` of t's table from t's branch: with from_tag, the
 * tag file, the snapshot file (main's bytes, or the tag's snapshot when it
 * has expired) and schemas 0..its schema id; without, schemas
 * 0..latest. A branch that exists is PAIMON_EXISTS (also when another
 * process creates it meanwhile: no file is replaced). Schemas are written
 * first, the snapshot last: a crash leaves an empty or partial branch
 * whose every file is readable. */
int pm_branch_create(paimon_table *t, const char *name, const char *from_tag, int dry_run, pm_branch_created *out,
                     pm_err *e);

typedef struct pm_branch_delete_opts {
    int threads;
    int dry_run;
    pm_progress_fn progress;
    void *progress_ud;
} pm_branch_delete_opts;

typedef struct pm_branch_delete_result {
    pm_clean_result clean;        /* data files, manifests, lists (and the branch's own files as "snapshot") */
    size_t n_branch_files;        /* files of the branch directory removed (dry run: that would be) */
} pm_branch_delete_result;

/* Delete branch `name`: plan what only it holds (refusing when anything
 * that could protect a file is unreadable), check that no tag, branch or
 * consumer changed meanwhile (PAIMON_CONFLICT), then remove the branch's
 * snapshot, tag and changelog files, the data files, manifests and
 * manifest lists only it held, and last the rest of its directory
 * (schemas, consumers, hints). A crash leaves orphans, never a branch
 * pointing at missing files. Free with pm_clean_result_free. */
int pm_branch_delete(paimon_table *t, const char *name, const pm_branch_delete_opts *o, pm_branch_delete_result *r,
                     pm_err *e);

/* Local file systems: the directories under TABLE/rel, deepest first, and
 * rel itself, each once it is empty (a file that appeared meanwhile keeps
 * its directory). */
int pm_branches_remove_empty_dirs(paimon_table *t, const char *rel, pm_err *e);

typedef struct pm_branch_ff_result {
    int64_t earliest_id;          /* the branch's earliest snapshot: main's snapshots from it on are replaced */
    int64_t earliest_schema_id;
    int64_t latest_id;            /* main's latest afterwards */
    size_t deleted_snapshots, deleted_schemas, deleted_tags;
    size_t copied_snapshots, copied_schemas, copied_tags;
    int dry_run;
    pm_strv dropped;              /* t's snapshot, tag and schema files that go (the plan, also on a dry run) */
    pm_strv taken;                /* the branch's files as they land in t's branch (the plan) */
    pm_clean_result clean;        /* t's files removed by kind (snapshots, tags, schemas); a dry run's
                                     plan of them: the result vocabulary of every destructive operation */
} pm_branch_ff_result;

/* Java's fastForward into t's branch: refuses "main", a blank name, t's own
 * branch, a missing branch and one without snapshot. Everything is read
 * first; then t's LATEST hint, its tags of snapshots >= the branch's
 * earliest, those snapshots (descending) and its schemas >= that
 * snapshot's schema id go, and the branch's schemas, tags and snapshots
 * are copied (snapshots without replacing: a commit meanwhile is
 * PAIMON_CONFLICT), then both hints are written. Refuses (before any
 * change) when a schema that t's remaining snapshots or tags use would be
 * removed or changed. */
int pm_branch_fast_forward(paimon_table *t, const char *name, int dry_run, pm_branch_ff_result *r, pm_err *e);
/* The plan's path lists (r stays usable as empty). */
void pm_branch_ff_result_free(pm_branch_ff_result *r);

typedef struct pm_branch_renamed {
    size_t n_files;               /* files of the branch directory moved (dry run: that would be) */
    pm_strv moved;                /* their new paths (the plan, also on a dry run) */
    char path[1024];              /* the new branch directory */
} pm_branch_renamed;
void pm_branch_renamed_free(pm_branch_renamed *r);

/* Java's renameBranch (FileSystemBranchManager): refuses renaming "main"
 * ("Cannot rename the main branch."), a missing branch, a target that
 * exists (never replaces), a target name validateBranch refuses, and the
 * branch t is opened on. Through FileIO operations only, so also on object
 * stores (where Java's rename is a copy too): every file of the branch is
 * read, then written under the new name without replacing (schemas first,
 * snapshots and their hints last: every prefix is a readable branch); if
 * the old branch changed meanwhile (a commit, a tag) the copies are
 * removed again and PAIMON_CONFLICT is returned; else the old files go
 * (all but the schemas first, the schemas last). A copy that fails half
 * way is removed again; a target directory without files is no branch.
 * No data file, manifest or list
 * is touched: they live in the table directory and the new branch names
 * the same ones. A crash leaves both names (the old one maybe partial);
 * delete the one not wanted with pm_branch_delete. */
int pm_branch_rename(paimon_table *t, const char *from, const char *to, int dry_run, pm_branch_renamed *r, pm_err *e);

typedef struct pm_branch_info {
    char *name;
    int64_t create_time;          /* directory modification time (object stores: its oldest file), epoch ms */
    int64_t earliest_snapshot, latest_snapshot;   /* 0: none */
    size_t n_tags;
} pm_branch_info;

/* Every branch of t's table, sorted by create time then name (as Java's
 * branches()). */
int pm_branches_list(paimon_table *t, pm_branch_info **out, size_t *n, pm_err *e);
void pm_branch_infos_free(pm_branch_info *v, size_t n);

#endif
