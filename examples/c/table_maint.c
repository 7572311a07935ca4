/* table_maint: the maintenance operations through the public C API alone
 * (paimon.h, no Lua), one JSON object on stdout.
 *
 *   table_maint OPERATION TABLE [--branch B] [key=value ...]
 *
 * OPERATION: expire | orphans | verify | drop | create-tag | replace-tag |
 * rename-branch | clear-consumers | mark-done | expire-partitions; key=value pairs are the
 * operation's options (paimon.h), e.g.
 *
 *   table_maint expire /warehouse/db.db/orders retain-min=10 older-than=1h dry-run=true
 *   table_maint drop /warehouse/db.db/orders partition=dt=2026-11-01
 *
 * Exit codes as the scripts': 0 done (verify: the table is whole), 1 failed
 * (verify: problems found), 2 usage, 3 conflict. */
#include <paimon.h>

#include <stdio.h>
#include <string.h>

static int usage(FILE *f) {
    fputs("usage: table_maint OPERATION TABLE [--branch B] [key=value ...]\n"
          "  OPERATION: expire, orphans, verify, drop, create-tag, replace-tag, rename-branch,\n"
          "  clear-consumers, mark-done, expire-partitions\n"
          "  options (see paimon.h): expire: retain-min, retain-max, max-deletes, older-than,\n"
          "  older-than-ms, threads, dry-run, clean-empty-directories; orphans: older-than,\n"
          "  allow-young-cutoff, threads, dry-run; verify: all-snapshots, threads; drop:\n"
          "  partition (k=v[,k2=v2], repeatable), max-attempts, dry-run; create-tag: tag,\n"
          "  snapshot, timestamp-ms, watermark, time-retained, dry-run; replace-tag: tag, snapshot,\n"
          "  time-retained, dry-run; rename-branch: branch, new-name, dry-run; clear-consumers:\n"
          "  include, exclude, dry-run; mark-done: partition, dry-run; expire-partitions:\n"
          "  expiration-time, strategy, timestamp-formatter, timestamp-pattern, max-expires, dry-run\n",
          f);
    return f == stdout ? 0 : 2;
}

static int write_stdout(void *ud, const char *p, size_t n) {
    (void)ud;
    return fwrite(p, 1, n, stdout) == n ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return usage(stdout);
    if (argc < 3) return usage(stderr);
    int (*op)(paimon_table *, const paimon_options *, paimon_result **) = NULL;
    if (!strcmp(argv[1], "expire")) op = paimon_expire_snapshots;
    else if (!strcmp(argv[1], "orphans")) op = paimon_remove_orphan_files;
    else if (!strcmp(argv[1], "verify")) op = paimon_verify;
    else if (!strcmp(argv[1], "drop")) op = paimon_drop_partitions;
    else if (!strcmp(argv[1], "create-tag")) op = paimon_create_tag;
    else if (!strcmp(argv[1], "replace-tag")) op = paimon_replace_tag;
    else if (!strcmp(argv[1], "rename-branch")) op = paimon_rename_branch;
    else if (!strcmp(argv[1], "clear-consumers")) op = paimon_clear_consumers;
    else if (!strcmp(argv[1], "mark-done")) op = paimon_mark_partition_done;
    else if (!strcmp(argv[1], "expire-partitions")) op = paimon_expire_partitions;
    else {
        fprintf(stderr, "table_maint: unknown operation '%s'\n", argv[1]);
        return usage(stderr);
    }
    const char *branch = NULL;
    paimon_options *o = paimon_options_new();
    if (!o) { fputs("table_maint: out of memory\n", stderr); return 1; }
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--branch") && i + 1 < argc) { branch = argv[++i]; continue; }
        char *eq = strchr(argv[i], '=');
        if (!eq || eq == argv[i]) {
            fprintf(stderr, "table_maint: expected key=value, got '%s'\n", argv[i]);
            paimon_options_free(o);
            return 2;
        }
        *eq = '\0';
        int rc = paimon_options_set(o, argv[i], eq + 1);
        if (rc) { fprintf(stderr, "table_maint: %s\n", paimon_errstr(rc)); paimon_options_free(o); return 1; }
    }
    paimon_table *t = NULL;
    char *err = NULL;
    int rc = paimon_table_open(argv[2], branch, &t, &err);
    if (rc) {
        fprintf(stderr, "table_maint: %s\n", err ? err : paimon_errstr(rc));
        paimon_free(err);
        paimon_options_free(o);
        return rc == PAIMON_MISUSE ? 2 : 1;
    }
    paimon_result *r = NULL;
    rc = op(t, o, &r);
    int code = 0;
    if (rc) {
        fprintf(stderr, "table_maint: %s (%s)\n", paimon_table_errmsg(t), paimon_errstr(rc));
        code = rc == PAIMON_CONFLICT ? 3 : rc == PAIMON_MISUSE ? 2 : 1;
    } else {
        /* streamed: a dry run's plan of millions of paths is never one string */
        rc = paimon_result_write_json(r, write_stdout, NULL);
        if (rc || putchar('\n') == EOF || fflush(stdout)) {
            fprintf(stderr, "table_maint: writing the result: %s\n", paimon_errstr(rc ? rc : PAIMON_IO));
            code = 1;
        }
        int64_t ok = 1;
        if (op == paimon_verify && paimon_result_int(r, "ok", &ok) == PAIMON_OK && !ok) code = 1;
    }
    paimon_result_free(r);
    paimon_options_free(o);
    paimon_table_close(t);
    return code;
}
