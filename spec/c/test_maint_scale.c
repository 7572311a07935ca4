/* Snapshot expiration at scale, checked by the independent Python reader.
 *
 * A table built here with pm_commit: 300 snapshots over 5 partitions of
 * real (small) data files written to disk; APPENDs, compactions (COMPACT:
 * DELETE of every live file of a partition + ADD of one replacement),
 * two partition drops (pm_drop_partitions: OVERWRITE), manifest minor
 * merges and full compactions; two tags (copies of snapshot JSON) and a
 * branch (schema + one snapshot copied into branch/branch-b/).
 *
 * Several expiration runs with different settings (retain-min, the expire
 * limit, a time cut-off, retain-max, everything). After each run
 * spec/support/pyref.py (its view functions `snapshots`, `files` and
 * `manifests`, in one Python process, over every remaining snapshot, every
 * tag and the branch) gives the referenced set: every referenced data
 * file, manifest, manifest list and snapshot file exists, and every file
 * that only expired snapshots referenced (known from the reader's view of
 * the whole table before the first run) is gone. At the end an orphan dry
 * run finds nothing left behind. Runs on /dev/shm when available. */
#include "test.h"
#include "pm_commit.h"
#include "pm_expire.h"
#include "pm_orphan.h"
#include "pm_partition_ops.h"
#include "pm_set.h"

#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N_SNAPSHOTS = 300, N_PARTS = 5, MAX_FILES = 1200 };

static const char *SCHEMA =
    "{\n  \"version\" : 3,\n  \"id\" : 0,\n  \"fields\" : [ {\n    \"id\" : 0,\n    \"name\" : \"id\",\n"
    "    \"type\" : \"INT\"\n  }, {\n    \"id\" : 1,\n    \"name\" : \"dt\",\n    \"type\" : \"STRING\"\n  } ],\n"
    "  \"highestFieldId\" : 1,\n  \"partitionKeys\" : [ \"dt\" ],\n  \"primaryKeys\" : [ ],\n"
    "  \"options\" : {\n    \"bucket\" : \"-1\",\n    \"file.format\" : \"parquet\",\n"
    "    \"manifest.merge-min-count\" : \"30\"\n  },\n"
    "  \"timeMillis\" : 1764000000000\n}";

/* The reference: pyref's own view functions over every snapshot, tag and
 * branch snapshot; one "ref<TAB>table-relative path" line per reference.
 * Manifest files are immutable, so reading each once (lru_cache) changes
 * nothing but the time. */
static const char *PYCHECK =
    "import argparse, functools, os, sys\n"
    "sys.path.insert(0, sys.argv[2])\n"
    "import pyref\n"
    "pyref.read_avro = functools.lru_cache(maxsize=None)(pyref.read_avro)\n"
    "table = sys.argv[1]\n"
    "out = sys.stdout\n"
    "def refs(tbl, label, snap, **kw):\n"
    "    a = argparse.Namespace(snapshot=kw.get('snapshot'), tag=kw.get('tag'), branch=tbl.branch)\n"
    "    for r in pyref.view_files(tbl, a):\n"
    "        out.write('%s\\t%s\\n' % (label, r['file_path']))\n"
    "    for m in pyref.view_manifests(tbl, a):\n"
    "        out.write('%s\\tmanifest/%s\\n' % (label, m['file_name']))\n"
    "    for k in ('base_manifest_list', 'delta_manifest_list'):\n"
    "        out.write('%s\\tmanifest/%s\\n' % (label, snap[k]))\n"
    "main = pyref.Table(table)\n"
    "for s in pyref.view_snapshots(main, None):\n"
    "    sid = s['snapshot_id']\n"
    "    out.write('s:%d\\tsnapshot/snapshot-%d\\n' % (sid, sid))\n"
    "    refs(main, 's:%d' % sid, s, snapshot=sid)\n"
    "tagdir = os.path.join(table, 'tag')\n"
    "for name in sorted(os.listdir(tagdir)) if os.path.isdir(tagdir) else []:\n"
    "    if not name.startswith('tag-'): continue\n"
    "    j = pyref.read_json(os.path.join(tagdir, name))\n"
    "    snap = {'base_manifest_list': j['baseManifestList'], 'delta_manifest_list': j['deltaManifestList']}\n"
    "    refs(main, 't:' + name[4:], snap, tag=name[4:])\n"
    "bdir = os.path.join(table, 'branch')\n"
    "for name in sorted(os.listdir(bdir)) if os.path.isdir(bdir) else []:\n"
    "    b = pyref.Table(table, name[len('branch-'):])\n"
    "    for s in pyref.view_snapshots(b, None):\n"
    "        refs(b, 'b:%s:%d' % (name, s['snapshot_id']), s, snapshot=s['snapshot_id'])\n";

/* ---- the table ----------------------------------------------------------------- */

typedef struct tfile {
    pm_manifest_entry m;
    pm_buf part, empty;
    char name[96];
    int p;               /* partition index */
    int live;
} tfile;

typedef struct world {
    char dir[128], table[200], script[200];
    paimon_table *t;
    tfile *f;
    size_t nf;
    int64_t commits;
    int64_t tag_ids[2];
    int64_t branch_id;
} world;

static int path_exists(const world *w, const char *rel) {
    char p[600];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", w->table, rel);
    return stat(p, &st) == 0;
}

/* A new data file in partition p, written to disk; its ADD entry. */
static tfile *new_file(world *w, int p) {
    if (w->nf == MAX_FILES) return NULL;
    tfile *x = &w->f[w->nf++];
    memset(x, 0, sizeof *x);
    pm_err e;
    char dt[16];
    snprintf(dt, sizeof dt, "p%d", p);
    pm_datum v;
    memset(&v, 0, sizeof v);
    v.v.bin.ptr = (const uint8_t *)dt;
    v.v.bin.len = strlen(dt);
    pm_binrow_encode(w->t->part_types, 1, &v, &x->part, &e);
    pm_binrow_encode(NULL, 0, NULL, &x->empty, &e);
    char uuid[37];
    pm_uuid4(uuid);
    snprintf(x->name, sizeof x->name, "data-%s-%zu.parquet", uuid, w->nf);
    x->p = p;
    x->live = 1;
    char dirp[400], path[600], body[200];
    snprintf(dirp, sizeof dirp, "%s/dt=%s/bucket-0", w->table, dt);
    mkdir(dirp, 0755);   /* the partition directory exists (made in world_open) */
    snprintf(path, sizeof path, "%s/%s", dirp, x->name);
    int len = snprintf(body, sizeof body, "PAR1 fake data file %s of dt=%s PAR1\n", x->name, dt);
    if (tu_write_file(path, body, (size_t)len)) return NULL;
    tu_fake_add(&x->m, (pm_bytes){x->part.data, x->part.len}, (pm_bytes){x->empty.data, x->empty.len}, 0, -1,
                x->name, len, 10, 1764000000000LL);
    return x;
}

static int commit(world *w, const pm_manifest_entry *v, size_t n, const char *kind) {
    pm_commit_opts o;
    pm_commit_opts_from_table(w->t, &o);
    o.commit_user = "scale";
    o.identifier = w->commits + 1;
    o.kind = kind;
    if (w->commits % 100 == 99) o.full_compaction_threshold = 1;   /* a full compaction now and then */
    pm_err e;
    int64_t id = 0;
    int rc = tu_commit(w->t, v, n, &o, &id, &e);
    if (rc) { fprintf(stderr, "  commit %lld: %s\n", (long long)w->commits + 1, e.msg); return -1; }
    w->commits = id;
    return 0;
}

static int copy_file(const char *from, const char *to) {
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
    return tu_sh(cmd);
}

static int world_open(world *w) {
    memset(w, 0, sizeof *w);
    const char *base = tu_tmp_base();
    snprintf(w->dir, sizeof w->dir, "%s/pm_test_mscale.XXXXXX", base);
    if (!mkdtemp(w->dir)) return -1;
    snprintf(w->table, sizeof w->table, "%s/t", w->dir);
    snprintf(w->script, sizeof w->script, "%s/check.py", w->dir);
    char p[400];
    if (mkdir(w->table, 0755)) return -1;
    snprintf(p, sizeof p, "%s/schema", w->table);
    if (mkdir(p, 0755)) return -1;
    snprintf(p, sizeof p, "%s/schema/schema-0", w->table);
    if (tu_write_file(p, SCHEMA, strlen(SCHEMA))) return -1;
    for (int i = 0; i < N_PARTS; i++) {
        snprintf(p, sizeof p, "%s/dt=p%d", w->table, i);
        mkdir(p, 0755);
    }
    if (tu_write_file(w->script, PYCHECK, strlen(PYCHECK))) return -1;
    w->f = calloc(MAX_FILES, sizeof *w->f);
    pm_err e;
    if (pm_table_open(w->table, NULL, &w->t, &e)) { fprintf(stderr, "  open: %s\n", e.msg); return -1; }
    return 0;
}

static void world_close(world *w) {
    for (size_t i = 0; i < w->nf; i++) { pm_buf_free(&w->f[i].part); pm_buf_free(&w->f[i].empty); }
    free(w->f);
    pm_table_free(w->t);
    if (!getenv("KEEP") && strstr(w->dir, "/pm_test_mscale.")) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
        tu_sh(cmd);
    }
}

/* Drop partition p through pm_drop_partitions (an OVERWRITE snapshot). */
static int drop_partition(world *w, int p) {
    char val[16];
    snprintf(val, sizeof val, "p%d", p);
    const char *keys[] = {"dt"}, *vals[] = {val};
    pm_partition_filter f = {1, keys, vals};
    pm_part_select sel = {1, &f, 0, NULL, 0};
    pm_drop_opts o;
    memset(&o, 0, sizeof o);
    pm_drop_result r;
    pm_err e;
    int rc = pm_drop_partitions(w->t, &sel, &o, &r, &e);
    if (rc || r.snapshot_id != w->commits + 1) {
        fprintf(stderr, "  drop p%d: rc %d %s\n", p, rc, rc ? e.msg : "");
        if (!rc) pm_drop_result_free(&r);
        return -1;
    }
    w->commits = r.snapshot_id;
    pm_drop_result_free(&r);
    for (size_t i = 0; i < w->nf; i++)
        if (w->f[i].p == p) w->f[i].live = 0;
    return 0;
}

/* Compaction of partition p: DELETE every live file, ADD one. */
static int compact(world *w, int p) {
    pm_manifest_entry v[MAX_FILES / 2];
    size_t n = 0;
    for (size_t i = 0; i < w->nf && n < MAX_FILES / 2 - 1; i++)
        if (w->f[i].p == p && w->f[i].live) {
            v[n] = w->f[i].m;
            v[n++].kind = PM_FILE_DELETE;
        }
    tfile *x = new_file(w, p);
    if (!x) return -1;
    v[n++] = x->m;
    if (commit(w, v, n, "COMPACT")) return -1;
    for (size_t i = 0; i + 1 < w->nf; i++)
        if (w->f[i].p == p) w->f[i].live = 0;
    return 0;
}

static int build(world *w) {
    char from[400], to[400];
    for (int i = 1; i <= N_SNAPSHOTS; i++) {
        int rc;
        if (i == 120 || i == 240) rc = drop_partition(w, i / 120);
        else if (i % 25 == 0) rc = compact(w, (i / 25) % N_PARTS);
        else {
            tfile *a = new_file(w, i % N_PARTS), *b = new_file(w, (i * 3 + 1) % N_PARTS);
            if (!a || !b) return -1;
            pm_manifest_entry v[2] = {a->m, b->m};
            rc = commit(w, v, 2, "APPEND");
        }
        if (rc || w->commits != i) return -1;
        if (i == 40 || i == 170) {          /* tags */
            snprintf(from, sizeof from, "%s/snapshot/snapshot-%d", w->table, i);
            snprintf(to, sizeof to, "%s/tag", w->table);
            mkdir(to, 0755);
            snprintf(to, sizeof to, "%s/tag/tag-t%d", w->table, i);
            if (copy_file(from, to)) return -1;
            w->tag_ids[i == 170] = i;
        }
        if (i == 130) {                     /* branch b: schema + snapshot 130 */
            char cmd[1400];
            snprintf(cmd, sizeof cmd,
                     "mkdir -p '%s/branch/branch-b/schema' '%s/branch/branch-b/snapshot' && "
                     "cp '%s/schema/schema-0' '%s/branch/branch-b/schema/' && "
                     "cp '%s/snapshot/snapshot-130' '%s/branch/branch-b/snapshot/'",
                     w->table, w->table, w->table, w->table, w->table, w->table);
            if (tu_sh(cmd)) return -1;
            w->branch_id = 130;
        }
    }
    return 0;
}

/* pyref's references of the current table state into refs (paths) and
 * labels (ref names). -1 when the reader fails (a referenced file missing,
 * corrupt metadata). */
static int reference(world *w, tu_strset *refs, tu_strset *labels) {
    char cmd[800];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' spec/support 2>&1", w->script, w->table);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[1024];
    int bad = 0;
    size_t n = 0;
    while (fgets(line, sizeof line, p)) {
        size_t l = strlen(line);
        if (l && line[l - 1] == '\n') line[--l] = '\0';
        char *tab = strchr(line, '\t');
        if (!tab) { fprintf(stderr, "  pyref: %s\n", line); bad = 1; continue; }
        *tab = '\0';
        if (labels) tu_ss_add(labels, line);
        tu_ss_add(refs, tab + 1);
        n++;
    }
    int st = pclose(p);
    if (bad || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || n == 0) return -1;
    return 0;
}

typedef struct run_spec {
    const char *what;
    int retain_min, retain_max, max_deletes;
    int64_t older_than;     /* 0: now */
    int64_t want_earliest;  /* expected EARLIEST afterwards; 0: don't check */
} run_spec;

static int64_t snapshot_time(world *w, int64_t id) {
    pm_snapshot *s = NULL;
    pm_err e;
    int64_t tm = 0;
    if (pm_snapshot_read(w->t->io, w->t->root, id, &s, &e) == 0) tm = s->time_millis;
    pm_snapshot_free(s);
    return tm;
}

/* One expiration run, then the reference check: all = every path the
 * reader saw before the first run. Returns the number of problems. */
static int expire_and_check(world *w, const run_spec *rs, const tu_strset *all) {
    pm_expire_opts o;
    memset(&o, 0, sizeof o);
    o.retain_min = rs->retain_min;
    o.retain_max = rs->retain_max;
    o.max_deletes = rs->max_deletes;
    o.has_older_than = 1;
    o.older_than_ms = rs->older_than ? rs->older_than : pm_now_millis();
    o.threads = 2;
    pm_expire_result r;
    pm_err e;
    int rc = pm_expire_snapshots(w->t, &o, &r, &e);
    if (rc) { fprintf(stderr, "  %s: expire failed: %s\n", rs->what, e.msg); return 1; }
    int bad = 0;
    int64_t earliest = 0;
    pm_snapshot_earliest_id(w->t->io, w->t->root, &earliest, &e);
    printf("# %s: expired %lld [%lld, %lld) capped by %s; deleted %lld data files, %lld manifests, "
           "%lld lists, %lld snapshots; protected %lld\n",
           rs->what, (long long)r.expired, (long long)r.range.begin, (long long)r.range.end, r.range.capped_by,
           (long long)r.clean.count[PM_K_DATA], (long long)r.clean.count[PM_K_MANIFEST],
           (long long)r.clean.count[PM_K_MANIFEST_LIST], (long long)r.clean.count[PM_K_SNAPSHOT],
           (long long)r.clean.protected_files);
    if (r.clean.n_failures || r.clean.n_skipped) {
        fprintf(stderr, "  %s: %zu failures, %zu skipped\n", rs->what, r.clean.n_failures, r.clean.n_skipped);
        bad++;
    }
    if (rs->want_earliest && earliest != rs->want_earliest) {
        fprintf(stderr, "  %s: EARLIEST %lld, want %lld\n", rs->what, (long long)earliest, (long long)rs->want_earliest);
        bad++;
    }
    if (r.expired <= 0) { fprintf(stderr, "  %s: nothing expired\n", rs->what); bad++; }
    pm_clean_result_free(&r.clean);

    tu_strset refs = {0}, labels = {0};
    if (reference(w, &refs, &labels)) {
        fprintf(stderr, "  %s: the reference reader failed on the expired table\n", rs->what);
        bad++;
    }
    /* the retained state: latest, the tags, the branch */
    char l[64];
    snprintf(l, sizeof l, "s:%d", N_SNAPSHOTS);
    if (!tu_ss_has(&labels, l)) { fprintf(stderr, "  %s: latest snapshot gone\n", rs->what); bad++; }
    if (!tu_ss_has(&labels, "t:t40") || !tu_ss_has(&labels, "t:t170") || !tu_ss_has(&labels, "b:branch-b:130")) {
        fprintf(stderr, "  %s: a tag or the branch is gone\n", rs->what);
        bad++;
    }
    for (int64_t id = 1; id < earliest; id++) {
        snprintf(l, sizeof l, "s:%lld", (long long)id);
        if (tu_ss_has(&labels, l)) { fprintf(stderr, "  %s: snapshot %lld below EARLIEST remains\n", rs->what, (long long)id); bad++; }
    }
    size_t kept = 0, gone = 0;
    for (size_t i = 0; i < refs.n; i++) {
        if (!path_exists(w, refs.v[i])) {
            if (bad < 20) fprintf(stderr, "  %s: referenced %s is missing\n", rs->what, refs.v[i]);
            bad++;
        }
        kept++;
    }
    for (size_t i = 0; i < all->n; i++) {
        if (tu_ss_has(&refs, all->v[i])) continue;
        if (path_exists(w, all->v[i])) {
            if (bad < 20) fprintf(stderr, "  %s: %s (only expired snapshots used it) still exists\n", rs->what, all->v[i]);
            bad++;
        }
        gone++;
    }
    printf("# %s: %zu referenced paths exist, %zu paths of expired snapshots gone\n", rs->what, kept, gone);
    if (!gone) bad++;
    tu_ss_free(&refs);
    tu_ss_free(&labels);
    return bad;
}

/* Orphan cleaning over the whole history (600 manifest lists: read a
 * window at a time): plans exactly one planted old orphan; an unreadable
 * list in the last window (the latest snapshot's) refuses the run. */
static int orphan_over_history(world *w) {
    int bad = 0;
    char orphan[320], list[320], cmd[1200];
    snprintf(orphan, sizeof orphan, "%s/dt=p0/bucket-0/data-00000000-0000-0000-0000-00000000beef-0.parquet", w->table);
    if (tu_write_file(orphan, "orphan", 6)) return 1;
    snprintf(cmd, sizeof cmd, "touch -d '3 days ago' '%s'", orphan);
    if (tu_sh(cmd)) return 1;
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.has_older_than = 1;
    oo.older_than_ms = pm_now_millis() - 86400000;
    oo.dry_run = 1;
    oo.threads = 2;
    pm_orphan_result orr;
    pm_err e;
    int rc = pm_remove_orphan_files(w->t, &oo, &orr, &e);
    if (rc) { fprintf(stderr, "  orphan dry run failed: %s\n", e.msg); return 1; }
    if (orr.clean.n_paths != 1 || !strstr(tu_plan_path(&orr.clean, 0, NULL), "00000000beef")) {
        fprintf(stderr, "  orphan dry run planned %zu paths, want the one orphan\n", orr.clean.n_paths);
        bad++;
    }
    if (orr.used != orr.listed - 1) { fprintf(stderr, "  used %lld of %lld listed\n", (long long)orr.used, (long long)orr.listed); bad++; }
    pm_clean_result_free(&orr.clean);
    /* the latest snapshot's delta list, garbled (kept aside, put back) */
    pm_snapshot *s = NULL;
    if (pm_snapshot_read(w->t->io, w->t->root, N_SNAPSHOTS, &s, &e)) return bad + 1;
    snprintf(list, sizeof list, "%s/manifest/%s", w->table, s->delta_manifest_list);
    pm_snapshot_free(s);
    snprintf(cmd, sizeof cmd, "cp -p '%s' '%s.keep' && printf 'Obj\\001garbage' > '%s'", list, list, list);
    if (tu_sh(cmd)) return bad + 1;
    rc = pm_remove_orphan_files(w->t, &oo, &orr, &e);
    if (rc == PAIMON_OK) { fprintf(stderr, "  an unreadable manifest list was not refused\n"); bad++; pm_clean_result_free(&orr.clean); }
    else if (!strstr(e.msg, "refusing to clean") || !strstr(e.msg, strrchr(list, '/') + 1)) {
        fprintf(stderr, "  unclear refusal: %s\n", e.msg);
        bad++;
    }
    snprintf(cmd, sizeof cmd, "mv '%s.keep' '%s' && rm -f '%s'", list, list, orphan);
    if (tu_sh(cmd)) bad++;
    return bad;
}

TEST(expire_300_snapshots_with_tags_and_branch) {
    world w;
    if (world_open(&w)) { CHECK(!"world"); world_close(&w); return; }
    int64_t t0 = pm_now_millis();
    CHECK(build(&w) == 0);
    printf("# built %lld snapshots, %zu data files in %lld ms\n", (long long)w.commits, w.nf,
           (long long)(pm_now_millis() - t0));
    if (w.commits != N_SNAPSHOTS) { world_close(&w); return; }
    usleep(5000);
    tu_strset all = {0};
    CHECK(reference(&w, &all, NULL) == 0);
    /* the reader sees what we built: every file ever written is referenced */
    for (size_t i = 0; i < w.nf; i++) {
        char rel[300];
        snprintf(rel, sizeof rel, "dt=p%d/bucket-0/%s", w.f[i].p, w.f[i].name);
        if (!tu_ss_has(&all, rel)) { fprintf(stderr, "  %s not referenced\n", rel); CHECK(0); break; }
    }
    CHECK(orphan_over_history(&w) == 0);
    int64_t t150 = snapshot_time(&w, 150), t1 = snapshot_time(&w, 1);
    CHECK(t150 > 0 && t1 > 0);
    run_spec runs[] = {
        {"retain-min 250", 250, 0, 1000, 0, 51},
        {"expire limit 30", 1, 0, 30, 0, 81},
        {"older than snapshot 150", 1, 0, 1000, t150, 0},
        {"retain-max 40", 1, 40, 1000, t1, 261},
        {"retain-min 1", 1, 0, 1000, 0, 300},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        int bad = expire_and_check(&w, &runs[i], &all);
        if (bad) { fprintf(stderr, "  run '%s': %d problems\n", runs[i].what, bad); CHECK(bad == 0); break; }
    }
    /* nothing left behind: an orphan dry run over everything finds nothing */
    pm_orphan_opts oo;
    memset(&oo, 0, sizeof oo);
    oo.has_older_than = 1;
    oo.older_than_ms = pm_now_millis();
    oo.allow_young_cutoff = 1;   /* below the 1 h floor on purpose */
    oo.dry_run = 1;
    oo.threads = 2;
    pm_orphan_result orr;
    pm_err e;
    CHECK_EQ_INT(pm_remove_orphan_files(w.t, &oo, &orr, &e), PAIMON_OK);
    int64_t left = 0;
    for (int k = 0; k < PM_K__N; k++) left += orr.clean.count[k];
    for (size_t i = 0; i < orr.clean.n_paths && i < 10; i++) fprintf(stderr, "  left behind: %s\n", tu_plan_path(&orr.clean, i, NULL));
    CHECK_EQ_INT(left, 0);
    CHECK(orr.listed > 0);
    CHECK_EQ_INT(orr.used, orr.listed);   /* nothing unused left, of any age */
    pm_clean_result_free(&orr.clean);
    tu_ss_free(&all);
    world_close(&w);
}

int main(void) {
    RUN(expire_300_snapshots_with_tags_and_branch);
    return TEST_SUMMARY();
}
