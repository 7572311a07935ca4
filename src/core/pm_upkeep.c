/* Upkeep after every commit and maintain.lua (pm_upkeep.h): Java's
 * TableCommitImpl.maintain composed from the existing operations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pm_tags.h"
#include "pm_expire.h"
#include "pm_meta.h"
#include "pm_ops.h"
#include "pm_upkeep.h"

static int option_true(const paimon_table *t, const char *key, int dflt) {
    const char *v = pm_schema_option(t->schema, key);
    if (!v) return dflt;
    return !strcasecmp(v, "true");
}

/* write-only, or its fallback key write.compaction-skip (CoreOptions) */
int pm_upkeep_write_only(const paimon_table *t) {
    if (!t || !t->schema) return 0;
    if (pm_schema_option(t->schema, "write-only")) return option_true(t, "write-only", 0);
    return option_true(t, "write.compaction-skip", 0);
}

typedef struct run {
    const pm_upkeep_opts *o;
    paimon_table *t;              /* the latest schema's handle */
    pm_result *res;
    pm_rv *steps;
    int64_t now_ms;
    int threads;
    int64_t errors, expired, files;
} run;

static pm_rv *step_node(run *u, const char *name, const char *status) {
    pm_rv *s = pm_rv_obj(u->res, u->steps, NULL);
    pm_rv_str(u->res, s, "operation", name);
    pm_rv_str(u->res, s, "status", status);
    return s;
}

static void skipped(run *u, const char *name, const char *reason) {
    pm_rv_str(u->res, step_node(u, name, "skipped"), "reason", reason);
}

static void failed(run *u, pm_rv *s, int rc, const pm_err *e) {
    pm_rv_str(u->res, s, "error", e->msg[0] ? e->msg : paimon_errstr(rc));
    pm_rv_str(u->res, s, "code", pm_code_name(rc));
    u->errors++;
}

/* Totals over what the steps did: snapshots expired, files deleted (or,
 * in a dry run, planned). */
static void add_totals(run *u, const char *name, const pm_rv *r) {
    const pm_rv *v = pm_rv_get(r, "files");
    if (v && v->type == PM_RV_INT) u->files += v->i;
    v = pm_rv_get(r, "expired");
    if (!strcmp(name, "expire_snapshots") && v && v->type == PM_RV_INT) u->expired += v->i;
}

/* The step's outcome: its result under a "done" step, or the error under
 * a "failed" one. */
static void record(run *u, const char *name, int rc, const pm_err *e, const pm_rv *result) {
    pm_rv *s = step_node(u, name, rc ? "failed" : "done");
    if (rc) {
        failed(u, s, rc, e);
        return;
    }
    pm_rv_copy(u->res, s, "result", result);
    add_totals(u, name, result);
}

/* The face's hook for step `name` (pm_upkeep_opts.step): 1 when it ran
 * the step (recorded, its code in *rc), 0 when the core's own should. */
static int hooked(run *u, const char *name, int *rc) {
    if (!u->o->step) return 0;
    pm_err e = {0};
    pm_upkeep_step st = {name, u->t, u->o->dry_run, u->threads, u->now_ms};
    pm_result *hr = pm_result_new();
    *rc = hr ? u->o->step(u->o->step_ud, &st, hr, hr->root, &e) : pm_nomem(&e);
    if (*rc == PM_UPKEEP_DEFAULT) {
        pm_result_free(hr);
        return 0;
    }
    if (!*rc && hr->oom) *rc = pm_nomem(&e);
    record(u, name, *rc, &e, hr ? hr->root : NULL);
    pm_result_free(hr);
    return 1;
}

/* Operation `name` (pm_ops) with the run's options that it knows, unless
 * the face's hook runs it; the outcome recorded. */
static void run_step(run *u, const char *name) {
    int rc;
    if (hooked(u, name, &rc)) return;
    pm_err e = {0};
    const pm_op *op = pm_op_find(name);
    char threads[24], now[24];
    snprintf(threads, sizeof threads, "%d", u->threads);
    snprintf(now, sizeof now, "%lld", (long long)u->now_ms);
    const char *base[][2] = {{"dry-run", u->o->dry_run ? "true" : "false"}, {"threads", threads}, {"now-ms", now}};
    pm_opt_in in[3];
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) {
        /* only the options this operation knows (expire_consumers has no threads) */
        pm_op_args probe;
        pm_opt_in one = {base[i][0], PM_OV_TEXT, base[i][1], 0, NULL};
        pm_err pe = {0};
        if (!pm_op_parse(op, PM_FACE_C, &one, 1, &probe, &pe)) in[n++] = one;
    }
    pm_op_args args;
    pm_result *r = NULL;
    rc = pm_op_parse(op, PM_FACE_C, in, n, &args, &e);
    if (!rc) rc = pm_op_run(u->t, &args, NULL, &r, &e);
    record(u, name, rc, &e, r ? r->root : NULL);
    pm_result_free(r);
}

/* PartitionExpire.expire: checked when the interval is zero, when it has
 * passed since the committer's last check, at the end of a batch input
 * with end-input.check-partition-expire, or when forced (maintain). */
static void partition_step(run *u) {
    paimon_table *t = u->t;
    const char *name = "expire_partitions";
    const char *exp = pm_schema_option(t->schema, "partition.expiration-time");
    if (!exp) { skipped(u, name, "partition.expiration-time is not set"); return; }
    if (t->n_part == 0) { skipped(u, name, "the table is not partitioned"); return; }
    pm_err e = {0};
    int64_t interval = 0;
    const char *iv = pm_schema_option_or_default(t->schema, "partition.expiration-check-interval");
    if (iv && pm_parse_duration_ms(iv, &interval, &e)) {
        pm_err_prefix(&e, "table option partition.expiration-check-interval");
        failed(u, step_node(u, name, "failed"), PAIMON_MISUSE, &e);
        return;
    }
    int64_t *last = u->o->partition_last_check_ms;
    int due = u->o->force_partition_check || interval == 0 || (last && u->now_ms > *last + interval) ||
              (u->o->commit_identifier == INT64_MAX && option_true(t, "end-input.check-partition-expire", 0));
    if (!due) {
        char why[200];
        snprintf(why, sizeof why, "partition.expiration-check-interval (%s) not reached since the last check", iv);
        skipped(u, name, why);
        return;
    }
    /* a face's hook (the Lua runner, which takes policies), else the same
     * rule in C (pm_partition_expire, operation expire_partitions), whose
     * clock is the local wall clock as the Lua runner's */
    int rc;
    if (!hooked(u, name, &rc)) {
        char now[24];
        snprintf(now, sizeof now, "%lld", (long long)pm_tag_local_ms(u->now_ms));
        pm_opt_in in[2] = {{"dry-run", PM_OV_TEXT, u->o->dry_run ? "true" : "false", 0, NULL},
                           {"now-ms", PM_OV_TEXT, now, 0, NULL}};
        pm_op_args args;
        pm_result *r = NULL;
        rc = pm_op_parse(pm_op_find(name), PM_FACE_C, in, 2, &args, &e);
        if (!rc) rc = pm_op_run(u->t, &args, NULL, &r, &e);
        record(u, name, rc, &e, r ? r->root : NULL);
        pm_result_free(r);
    }
    if (!rc && last && !u->o->dry_run) *last = u->now_ms;   /* Java: lastCheck = now after doExpire */
}

/* Java's TableCommitImpl.maintain (master, 2026): automatic tags, tag
 * expiry by time, partitions, consumers (before the snapshots, so a dead
 * job stops blocking them), snapshots last (+ changelogs when decoupled). */
static void steps(run *u) {
    paimon_table *t = u->t;
    /* TagAutoManager: TagAutoCreation only for process-time and watermark
     * (TagTimeExtractor.createForAutoTag; batch tags are Flink's batch sink's) */
    const char *mode = pm_schema_option(t->schema, "tag.automatic-creation");
    if (!mode || !strcasecmp(mode, "none")) skipped(u, "auto_tags", "tag.automatic-creation is none");
    else if (!strcasecmp(mode, "batch"))
        skipped(u, "auto_tags", "tag.automatic-creation is batch: Java tags at the end of a Flink batch job, "
                                "not after commits (tag.lua TABLE auto does it)");
    else run_step(u, "auto_tags");

    /* TagTimeExpire: tagCreateTime + tagTimeRetained (the count rule,
     * tag.num-retained-max, is TagAutoCreation's, run above) */
    if (option_true(t, "tag.time-expire-enabled", 1)) {
        run_step(u, "expire_tags");
    } else {
        skipped(u, "expire_tags", "tag.time-expire-enabled is false");
    }

    partition_step(u);

    if (pm_schema_option(t->schema, "consumer.expiration-time")) run_step(u, "expire_consumers");
    else skipped(u, "expire_consumers", "consumer.expiration-time is not set");

    const char *bucket = pm_schema_option(t->schema, "bucket");
    if (bucket && !strcmp(bucket, "-2")) {
        skipped(u, "expire_snapshots", "bucket = -2 (postpone bucket): Java does not expire after commits");
        skipped(u, "expire_changelogs", "bucket = -2 (postpone bucket)");
        return;
    }
    run_step(u, "expire_snapshots");
    char why[400];
    pm_err e = {0};
    int d = pm_changelog_decoupled(t, why, sizeof why, &e);
    if (d < 0) failed(u, step_node(u, "expire_changelogs", "failed"), -d, &e);
    else if (d) run_step(u, "expire_changelogs");
    else skipped(u, "expire_changelogs", "the changelog lifecycle is not decoupled");
}

int pm_upkeep_run(paimon_table *t, const pm_upkeep_opts *o, pm_result **out, pm_err *e) {
    *out = NULL;
    if (!t || !o) return pm_fail(e, PAIMON_MISUSE, "upkeep: no table or options");
    int64_t t0 = pm_now_millis();
    pm_result *res = pm_result_new();
    if (!res) return pm_nomem(e);
    run u;
    memset(&u, 0, sizeof u);
    u.o = o;
    u.res = res;
    u.now_ms = o->now_ms > 0 ? o->now_ms : pm_now_millis();
    u.threads = o->threads > 0 ? o->threads : 4;
    pm_rv *root = res->root;
    pm_rv_str(res, root, "table", t->root);
    pm_rv_str(res, root, "branch", t->branch);
    pm_rv_bool(res, root, "dry_run", o->dry_run);
    /* the options as of now: the branch's latest schema, read afresh */
    pm_err oe = {0};
    paimon_table *ut = NULL;
    int rc = pm_table_open_shared(t, t->branch, &ut, &oe);
    if (rc) {
        pm_rv_bool(res, root, "write_only", 0);
        pm_rv_list(res, root, "steps");
        pm_rv_str(res, root, "error", oe.msg);
        pm_rv_str(res, root, "code", pm_code_name(rc));
        u.errors = 1;
    } else {
        u.t = ut;
        pm_rv_int(res, root, "schema_id", ut->schema->id);
        int wo = pm_upkeep_write_only(ut);
        pm_rv_bool(res, root, "write_only", wo);
        u.steps = pm_rv_list(res, root, "steps");
        if (wo && !o->ignore_write_only) pm_rv_str(res, root, "reason", "write-only=true: no upkeep, as Java's writers");
        else steps(&u);
        pm_table_free_shared(ut);
    }
    pm_rv_int(res, root, "expired_snapshots", u.expired);
    pm_rv_int(res, root, "deleted_files", u.files);
    pm_rv_int(res, root, "errors", u.errors);
    pm_rv_int(res, root, "duration_ms", pm_now_millis() - t0);
    if ((rc = pm_result_check(res, e))) {
        pm_result_free(res);
        return rc;
    }
    *out = res;
    return PAIMON_OK;
}
