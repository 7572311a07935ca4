#!/usr/bin/python3
"""lifecycle: randomized lifecycle test of paimon-lua's maintenance, checked
after every step against the independent oracle (spec/support/oracle.py).

Each sequence creates a small partitioned append table (create_table.lua +
write.lua) in a temp dir and runs seeded random steps through the real CLI
($PAIMON_BUILD/paimon-lua scripts/X.lua): writes on main and on branches, tag
create/delete/expire/replace, branch create (empty or from a tag)/delete/rename/fast-forward,
rollback (metadata only, --purge-files and --as-latest, main and branches; a
rollback without --purge-files must remove only snapshot, tag and changelog
files), drop partition,
expire (main and branches), changelog expire (some sequences decouple the
changelog lifecycle, so long-lived changelogs exist), consumer
reset/delete/expire, orphan cleaning with a young cut-off, now and then
purge_files (the table emptied but for its schemas), and maintain.lua
(the commit's upkeep, once; --dry-run too). Every write runs the upkeep
after its commit (docs/maintenance.md): some sequences set options that make
it expire snapshots at every commit (snapshot.num-retained.max,
snapshot.time-retained), create automatic tags, or turn it off (write-only);
an upkeep step that fails after a write is a failure ("upkeep"), but a
refusal (conflict).

An operation may refuse (exit 1/2/3 with a message); a crash (signal, an
"internal error", a Lua traceback, another exit code) is a failure. After
EVERY step:
  * every file the oracle says is needed exists;
  * `verify.lua --all-snapshots --json` says whole iff the oracle does;
  * the latest snapshot of each branch, and one random snapshot or tag, read
    with read.lua and give as many rows as the oracle's live files record
    (at the end of a sequence every snapshot and tag of every branch does).
  * after an expire, the snapshot each remaining consumer reads next is still
    there.
The table directory is listed before every step, so a failure names the step
that deleted each needed file, and gets a signature (which operation deleted
what kind of file of which root) that sets distinct failures apart. The first
time an operation leaves an EARLIEST/LATEST hint off the real snapshots is
printed as a "# note" (hints may be stale; not a failure).

Usage:
  /usr/bin/python3 spec/support/lifecycle.py            # LIFECYCLE_* below
  /usr/bin/python3 spec/support/lifecycle.py --replay FILE.json
Environment: PAIMON_BUILD (default ./build), LIFECYCLE_SEQS (40),
LIFECYCLE_STEPS (30), LIFECYCLE_SEED (sequence i uses seed SEED + i; default
from the clock, printed), LIFECYCLE_SHRINK=1 (shrink each failure to a
minimal step list by replaying), LIFECYCLE_KEEP=1 (keep failing tables),
LIFECYCLE_VERBOSE=1 (print every step), LIFECYCLE_NO_OPS=fast_forward,rollback
(leave operations out, to look for failures behind a known one),
LIFECYCLE_WEIGHTS=rollback=6,drop_partition=4 (other weights; the names are
those of Generator.step).
Known cases: every spec/lifecycle/*.json ({"what", "options", "steps"} as
printed by a failing run's "replay spec") is replayed first, one test each.
Then the oracle and verify.lua must agree on every Java-written fixture
(spec/fixtures, read-only). Self-tests of the checks: a step {"rm": GLOB} removes files under the table
as a bug would, and "expect": KIND makes the case pass only when it fails
with that kind (missing, verify-blind, read, ...).
Output: "ok N - ..." / "not ok N - ..." per case and sequence (with the seed and the
replayable step list on failure), and last "N passed, N failed".
"""
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import oracle as oracle_mod  # noqa: E402
import pyref  # noqa: E402

BUILD = os.environ.get("PAIMON_BUILD") or os.path.join(ROOT, "build")
LUA = os.path.join(BUILD, "paimon-lua")
SCRIPTS = os.path.join(ROOT, "scripts")
CASES = os.path.join(ROOT, "spec", "lifecycle")
VERBOSE = os.environ.get("LIFECYCLE_VERBOSE") == "1"
PARTS = ("a", "b", "c")
ENV = dict(os.environ, PAIMON_LUA_TRACEBACK="1")
# LIFECYCLE_NO_OPS=fast_forward,rollback: leave those operations out (to look
# for failures behind a known one)
NO_OPS = set(x for x in os.environ.get("LIFECYCLE_NO_OPS", "").split(",") if x)
# LIFECYCLE_WEIGHTS=rollback=6,drop_partition=4: other weights for operations
WEIGHTS = dict((k, float(v)) for k, v in (x.split("=") for x in os.environ.get("LIFECYCLE_WEIGHTS", "").split(",") if x))


class Failure(Exception):
    def __init__(self, kind, msg):
        Exception.__init__(self, msg)
        self.kind = kind
        self.msg = msg
        self.signature = kind


def run(argv, table, stdin=None):
    """argv[0] is a script name; "T" stands for the table."""
    args = [LUA, os.path.join(SCRIPTS, argv[0])] + [table if a == "T" else a for a in argv[1:]]
    try:
        p = subprocess.run(args, input=(stdin or "").encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=ENV, timeout=300)
    except subprocess.TimeoutExpired:
        raise Failure("crash", "%s did not finish in 300 s" % " ".join(argv))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def crashed(rc, err):
    if rc not in (0, 1, 2, 3):
        return "exit %d" % rc
    low = err.lower()
    if "internal error" in low or "stack traceback" in low:
        return "internal error"
    if "addresssanitizer" in low or "leaksanitizer" in low or "runtime error:" in low:
        return "sanitizer report"
    return None


def listing(table):
    out = set()
    for d, _, files in os.walk(table):
        for f in files:
            out.add(os.path.relpath(os.path.join(d, f), table))
    return out


# --------------------------------------------------------------------------
# table state, read from disk (what the generator may choose from)


def state(table):
    st = {}
    for bname, broot in oracle_mod.branches(table):
        snaps = sorted(pyref.snapshot_files(broot))
        tags = [n[4:] for n in oracle_mod.list_dir(os.path.join(broot, "tag"), "tag-")]
        cons = [n[9:] for n in oracle_mod.list_dir(os.path.join(broot, "consumer"), "consumer-")]
        st[bname] = {"snapshots": snaps, "tags": tags, "consumers": cons}
    return st


def bflag(b):
    return [] if b == "main" else ["--branch", b]


class Generator(object):
    def __init__(self, rng):
        self.rng = rng
        self.n_tag = 0
        self.n_branch = 0
        self.n_row = 0
        self.n_col = 0
        self.cols = []
        self.focus = "main"

    def rows(self):
        r = self.rng
        out = []
        for _ in range(r.randint(1, 3)):
            self.n_row += 1
            out.append(json.dumps({"id": self.n_row, "p": r.choice(PARTS)}))
        return "\n".join(out) + "\n"

    def step(self, st):
        r = self.rng
        names = sorted(st)
        others = [b for b in names if b != "main"]
        any_b = lambda: "main" if not others or r.random() < 0.55 else r.choice(others)  # noqa: E731
        ops = [("write", 7), ("tag_create", 3), ("tag_delete", 2), ("tag_expire", 1), ("tag_replace", 1.5),
               ("branch_create", 2 if len(others) < 3 else 0), ("branch_delete", 0.7 if others else 0),
               ("branch_rename", 0.7 if others else 0),
               ("fast_forward", 1.5 if others else 0), ("rollback", 2.5), ("drop_partition", 2),
               ("expire", 4), ("expire_changelogs", 1.5), ("consumer", 1.5), ("orphans", 1), ("purge", 0.25),
               ("junk", 1), ("maintain", 1.5), ("alter", 1)]
        ops = [(o, 0 if o in NO_OPS or not w else WEIGHTS.get(o, w)) for o, w in ops]
        total = sum(w for _, w in ops)
        x = r.random() * total
        for op, w in ops:
            x -= w
            if x < 0:
                break
        # stay on the branch of the last step more often than not, so that
        # a branch gets several commits, tags and maintenance in a row
        if self.focus in st and r.random() < 0.6:
            b = self.focus
        else:
            b = any_b()
        self.focus = b
        s = st[b]
        if op == "write":
            return {"op": op, "argv": ["write.lua", "T"] + bflag(b), "stdin": self.rows()}
        if op == "tag_create":
            self.n_tag += 1
            name = "t%d" % self.n_tag
            a = ["tag.lua", "T", "create", name] + bflag(b)
            if s["snapshots"] and r.random() < 0.5:
                a += ["--snapshot", str(r.choice(s["snapshots"]))]
            if r.random() < 0.3:
                a += ["--time-retained", "1s"]
            return {"op": op, "argv": a}
        if op == "tag_delete":
            if not s["tags"]:
                return self.step_write(b)
            return {"op": op, "argv": ["tag.lua", "T", "delete", r.choice(s["tags"])] + bflag(b)}
        if op == "tag_replace":
            # Java's replace_tag: the old snapshot's files are left to orphan cleaning
            if not s["tags"] or not s["snapshots"]:
                return self.step_write(b)
            a = ["tag.lua", "T", "replace", r.choice(s["tags"])] + bflag(b)
            if r.random() < 0.6:
                a += ["--snapshot", str(r.choice(s["snapshots"]))]
            return {"op": op, "argv": a}
        if op == "tag_expire":
            a = ["tag.lua", "T", "expire"] + bflag(b)
            if r.random() < 0.4:
                a += ["--older-than", "1ms"]
            return {"op": op, "argv": a}
        if op == "branch_create":
            self.n_branch += 1
            name = "b%d" % self.n_branch
            a = ["branch.lua", "T", "create", name]
            if st["main"]["tags"] and r.random() < 0.85:
                a += ["--from-tag", r.choice(st["main"]["tags"])]
            self.focus = name
            return {"op": op, "argv": a}
        if op == "branch_delete":
            return {"op": op, "argv": ["branch.lua", "T", "delete", r.choice(others)]}
        if op == "branch_rename":
            self.n_branch += 1
            new = "b%d" % self.n_branch
            self.focus = new
            return {"op": op, "argv": ["branch.lua", "T", "rename", r.choice(others), new]}
        if op == "fast_forward":
            return {"op": op, "argv": ["branch.lua", "T", "fast-forward", r.choice(others)]}
        if op == "rollback":
            a = ["rollback.lua", "T"] + bflag(b)
            older = s["snapshots"][:-1]
            if s["tags"] and (not older or r.random() < 0.35):
                a += ["--to-tag", r.choice(s["tags"])]
            elif older:
                a += ["--to-snapshot", str(r.choice(older))]
            else:
                return self.step_write(b)
            y = r.random()
            if y < 0.5:
                a.append("--as-latest")
            elif y < 0.75:
                a.append("--purge-files")     # else metadata only (Java 1.2+)
            return {"op": op, "argv": a}
        if op == "drop_partition":
            return {"op": op, "argv": ["drop_partition.lua", "T", "--partition", "p=" + r.choice(PARTS)] + bflag(b)}
        if op == "expire":
            a = ["expire.lua", "T", "--retain-min", str(r.randint(1, 3)), "--older-than", "1ms"] + bflag(b)
            if r.random() < 0.2:
                a += ["--max-deletes", str(r.randint(1, 3))]
            return {"op": op, "argv": a}
        if op == "expire_changelogs":
            return {"op": op, "argv": ["expire_changelogs.lua", "T", "--retain-min", str(r.randint(1, 2)),
                                       "--older-than", "1ms"] + bflag(b)}
        if op == "consumer":
            y = r.random()
            if y < 0.6 and s["snapshots"]:
                return {"op": "consumer_reset", "argv": ["consumer.lua", "T", "reset", r.choice(["c1", "c2"]),
                                                         "--next-snapshot", str(r.choice(s["snapshots"]))] + bflag(b)}
            if y < 0.8 and s["consumers"]:
                return {"op": "consumer_delete", "argv": ["consumer.lua", "T", "delete", r.choice(s["consumers"])] + bflag(b)}
            if y < 0.9 and s["consumers"]:
                return {"op": "consumer_clear", "argv": ["consumer.lua", "T", "clear", "--include", r.choice(["c1", "c.*"]),
                                                         "--exclude", r.choice(["c2", " "])] + bflag(b)}
            return {"op": "consumer_expire", "argv": ["consumer.lua", "T", "expire", "--expiration", "1s"] + bflag(b)}
        if op == "purge":
            # purge_files: the whole table emptied (main only; every branch goes)
            return {"op": op, "argv": ["purge_files.lua", "T", "--yes"]}
        if op == "alter":
            # schema changes between writes: reads then map files by field id
            # (columns the generator added; one may be gone already: exit 2)
            y = r.random()
            if y < 0.5 or not self.cols:
                self.n_col += 1
                name = "c%d" % self.n_col
                self.cols.append(name)
                a = ["alter_table.lua", "T", "add-column", name + ":" + r.choice(["INT", "STRING", "DOUBLE"])]
            elif y < 0.7:
                old = r.choice(self.cols)
                self.n_col += 1
                new = "c%d" % self.n_col
                self.cols.append(new)
                a = ["alter_table.lua", "T", "rename-column", old, new]
            elif y < 0.85:
                a = ["alter_table.lua", "T", "drop-column", r.choice(self.cols)]
            else:
                a = ["alter_table.lua", "T", "set", "snapshot.num-retained.max=%d" % r.randint(5, 50)]
            return {"op": op, "argv": a + bflag(b)}
        if op == "orphans":
            return {"op": op, "argv": ["remove_orphan_files.lua", "T", "--older-than", "1ms", "--allow-young-cutoff"]}
        if op == "junk":
            return {"op": op, "junk": self.junk()}
        if op == "maintain":
            return {"op": op, "argv": ["maintain.lua", "T"] + bflag(b) + (["--dry-run"] if r.random() < 0.25 else [])}
        raise AssertionError(op)

    def junk(self):
        """What failed writers and tools leave in a table's folders, all
        old: temp files, non-Paimon files, empty directories (a trailing
        "/"), and files orphan cleaning must never touch (schema/ temp
        files, a partition's _SUCCESS)."""
        r = self.rng
        k = r.randint(1, 10 ** 6)
        part = "p=" + r.choice(PARTS)
        pool = ["manifest/.manifest-%d.tmp" % k, "manifest/junk-%d.txt" % k,
                part + "/bucket-0/junk-%d.orc" % k, part + "/bucket-0/.data-%d.parquet.tmp" % k,
                part + "/junk-%d.txt" % k, "snapshot/.snapshot-%d.tmp" % k, "snapshot/junk-%d" % k,
                "index/junk-%d" % k, "statistics/junk-%d" % k,
                part + "/bucket-%d/" % r.randint(1, 9), "p=zz%d/bucket-0/" % k, part + "/bucket-0/d%d/" % k,
                "manifest/d%d/" % k, part + "/stray-%d/" % k,
                "schema/.schema-%d.tmp" % k, part + "/_SUCCESS"]
        return r.sample(pool, r.randint(1, 5))

    def step_write(self, b):
        return {"op": "write", "argv": ["write.lua", "T"] + bflag(b), "stdin": self.rows()}


def table_options(rng):
    opts = ["bucket=-1"]
    if rng.random() < 0.5:
        # decouple the changelog lifecycle: expiration keeps long-lived changelogs
        opts.append(rng.choice(["changelog.time-retained=1d", "changelog.num-retained.min=20"]))
    if rng.random() < 0.3:
        opts.append("consumer.expiration-time=1s")
    # the upkeep after every commit (and maintain.lua) by the table's options
    if rng.random() < 0.4:
        opts += ["snapshot.num-retained.min=1", "snapshot.num-retained.max=%d" % rng.randint(2, 6)]
        if "changelog.num-retained.min=20" in opts:
            # changelog.num-retained.max falls back to the snapshots' (Java too
            # refuses a max below the min)
            opts.append("changelog.num-retained.max=40")
        if rng.random() < 0.4:
            opts.append("snapshot.time-retained=1ms")
    if rng.random() < 0.2:
        opts += ["tag.automatic-creation=process-time", "tag.num-retained-max=1"]
    if rng.random() < 0.15:
        opts.append("write-only=true")
    return opts


# --------------------------------------------------------------------------
# checks


class Checker(object):
    def __init__(self, table, rng):
        self.table = table
        self.rng = rng
        self.oracle = oracle_mod.Oracle(table)

    def check(self, read_all=False):
        needed, missing = self.oracle.compute()
        rc, out, err = run(["verify.lua", "T", "--all-snapshots", "--json"], self.table)
        c = crashed(rc, err)
        if c:
            raise Failure("crash", "verify.lua crashed (%s): %s" % (c, err.strip()[-2000:]))
        try:
            v = json.loads(out)
        except ValueError:
            raise Failure("verify", "verify.lua printed no JSON (exit %d): %s %s" % (rc, out[:500], err[:500]))
        if missing:
            # "missing": data loss that verify sees too; "verify-blind": verify calls it whole
            vm = verify_missing(v, self.table)
            raise Failure("missing" if not v.get("ok") else "verify-blind", "needed files are missing:\n" + "\n".join(
                "    %s  (needed by %s)" % (p, ", ".join(sorted(r))) for p, r in sorted(missing.items()))
                + "\n  verify.lua says %s" % ("whole" if v.get("ok") else "not whole")
                + "".join("\n  verify.lua does not report %s" % p for p in sorted(set(missing) - vm))
                + "".join("\n  verify.lua also reports %s" % p for p in sorted(vm - set(missing)))
                + ("\n  verify.lua: " + json.dumps({k: v.get(k) for k in ("wrong_size", "unreadable")})
                   if v.get("wrong_size") or v.get("unreadable") else ""))
        if not v.get("ok"):
            raise Failure("verify", "the oracle says whole, verify.lua does not: " + json.dumps(
                {k: v.get(k) for k in ("missing", "wrong_size", "unreadable")})[:3000])
        # reads: the latest of each branch, and one random snapshot or tag
        st = state(self.table)
        targets = []
        for b in sorted(st):
            if st[b]["snapshots"]:
                targets.append((b, "snapshot", st[b]["snapshots"][-1]))
        pool = [(b, "snapshot", s) for b in sorted(st) for s in st[b]["snapshots"]] + \
               [(b, "tag", t) for b in sorted(st) for t in st[b]["tags"]]
        if read_all:   # the end of a sequence: every retained snapshot and tag reads
            targets = pool
        elif pool:
            targets.append(self.rng.choice(pool))
        for b, kind, what in targets:
            a = ["read.lua", "T"] + bflag(b) + ["--" + kind, str(what)]
            rc, out, err = run(a, self.table)
            if rc != 0:
                raise Failure("read", "%s (%s %s %s) failed, exit %d: %s"
                              % (" ".join(a), b, kind, what, rc, err.strip()[-1500:]))
            rows = sum(1 for line in out.splitlines() if line.strip())
            expect = self.expected_rows(b, kind, what)
            if expect is not None and rows != expect:
                raise Failure("read", "%s gave %d rows, its live files record %d" % (" ".join(a), rows, expect))

    def expected_rows(self, b, kind, what):
        tbl = pyref.Table(self.table, None if b == "main" else b)
        try:
            snap = tbl.resolve_snapshot(what if kind == "snapshot" else None, what if kind == "tag" else None)
            return sum(e["_FILE"]["_ROW_COUNT"] for e in tbl.live_files(snap))
        except pyref.RefError:
            return None


# --------------------------------------------------------------------------
# one sequence


def run_sequence(spec, steps_max=None, rng_seed=0, generate=None, keep=False):
    """Runs spec = {"options": [...], "steps": [...]}; with generate (a
    Generator) steps are made up as it goes and appended to spec["steps"].
    Returns (None, log) or (Failure, log); log is a list of step records."""
    tmp = tempfile.mkdtemp(prefix="paimon-lifecycle.")
    table = os.path.join(tmp, "t")
    log = []
    listings = []
    failure = None
    try:
        a = ["create_table.lua", "T", "--field", "id:INT", "--field", "p:STRING", "--partition", "p"]
        for o in spec["options"]:
            a += ["--option", o]
        rc, out, err = run(a, table)
        if rc != 0:
            raise Failure("setup", "create_table.lua failed: " + err)
        checker = Checker(table, random.Random(rng_seed))
        i = 0
        while True:
            if generate is not None:
                if i >= steps_max:
                    break
                step = generate.step(state(table))
                spec["steps"].append(step)
            else:
                if i >= len(spec["steps"]):
                    break
                step = spec["steps"][i]
            listings.append(listing(table))
            before_state = state(table)
            hints_before = stale_hints(table)
            if "junk" in step:
                made = plant_junk(table, step["junk"])
                step["argv"] = ["junk"] + step["junk"]
                rc, out, err = 0, "", "planted %d" % made
            elif "rm" in step:
                # a self-test of the checks: remove files as a bug would
                gone = sorted(glob.glob(os.path.join(table, step["rm"])))
                for p in gone:
                    os.remove(p)
                step["argv"] = ["rm", step["rm"]]
                rc, out, err = 0, "", "removed %d file(s)" % len(gone)
            else:
                rc, out, err = run(step["argv"], table, step.get("stdin"))
            rec = {"i": i + 1, "argv": step["argv"], "rc": rc,
                   "msg": (err.strip().splitlines() or [""])[-1][:200]}
            log.append(rec)
            if VERBOSE:
                sys.stdout.write("#   %2d %s -> %d %s\n" % (i + 1, " ".join(step["argv"]), rc, rec["msg"]))
            c = crashed(rc, err)
            if c:
                raise Failure("crash", "step %d %s crashed (%s):\n%s" % (i + 1, " ".join(step["argv"]), c,
                                                                          err.strip()[-3000:]))
            note_stale_hints(hints_before, stale_hints(table), step, i, rng_seed)
            if step["argv"][0] in ("expire.lua", "write.lua", "maintain.lua") and rc == 0:
                consumers_kept(table, before_state, step, i)
            if step["argv"][0] == "rollback.lua" and rc == 0:
                rollback_kept_files(listings[-1], listing(table), step, i)
            if step["argv"][0] == "remove_orphan_files.lua" and rc == 0:
                orphans_exact(table, checker.oracle, step, i)
            if step["argv"][0] == "write.lua" and rc == 0:
                # a failed upkeep step is a failure, but a refusal (conflict),
                # as for the operations run on their own
                bad = [l for l in err.splitlines() if l.startswith("upkeep:") and " failed: " in l
                       and not l.endswith("(conflict)")]
                if bad:
                    raise Failure("upkeep", "step %d %s: the upkeep after the commit failed:\n%s"
                                  % (i + 1, " ".join(step["argv"]), "\n".join(bad)[-2000:]))
            try:
                checker.check()
            except Failure as f:
                f.msg = "after step %d (%s):\n  %s" % (i + 1, " ".join(step["argv"]), f.msg)
                if f.kind in ("missing", "verify-blind"):
                    f.msg += "\n" + who_deleted(f, listings, listing(table), log)
                raise
            i += 1
        try:
            checker.check(read_all=True)
        except Failure as f:
            f.msg = "at the end (every snapshot and tag read):\n  %s" % f.msg
            raise
    except Failure as f:
        failure = f
    except pyref.RefError as ex:
        failure = Failure("oracle", "the oracle cannot read the table: %s" % ex)
    except Exception:  # a bug of this driver: reported with the sequence, not fatal
        import traceback
        failure = Failure("driver", "lifecycle.py itself failed:\n" + traceback.format_exc())
    finally:
        if failure is not None and keep:
            sys.stdout.write("# table kept at %s\n" % table)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return failure, log


NOTES = set()


def stale_hints(table):
    """{(branch, hint): (value, first id, last id)} for the EARLIEST/LATEST
    hints that are off the branch's real snapshots."""
    out = {}
    for bname, broot in oracle_mod.branches(table):
        ids = sorted(pyref.snapshot_files(broot))
        for hint, real in (("EARLIEST", ids[0] if ids else None), ("LATEST", ids[-1] if ids else None)):
            try:
                with open(os.path.join(broot, "snapshot", hint)) as fh:
                    v = int(fh.read().strip())
            except (OSError, ValueError):
                continue
            if real is not None and v != real:
                out[(bname, hint)] = (v, ids[0], ids[-1])
    return out


def note_stale_hints(before, after, step, i, seed):
    """a note, not a failure (readers must tolerate stale hints), the first
    time an operation leaves a hint off the real snapshots."""
    for (bname, hint), (v, lo, hi) in sorted(after.items()):
        key = (op_name(step["argv"]), hint)
        if (bname, hint) not in before and key not in NOTES:
            NOTES.add(key)
            sys.stdout.write("# note: seed %s step %d (%s) leaves %s's %s hint at %d, its snapshots are %d..%d\n"
                             % (seed, i + 1, " ".join(step["argv"]), bname, hint, v, lo, hi))


def rollback_kept_files(before, after, step, i):
    """a rollback without --purge-files removes only snapshot, tag and
    changelog files (Java 1.2+); --as-latest removes nothing."""
    argv = step["argv"]
    if "--purge-files" in argv:
        return
    b = argv[argv.index("--branch") + 1] if "--branch" in argv else "main"
    pre = "" if b == "main" else "branch/branch-%s/" % b
    meta = re.compile("^" + re.escape(pre) + r"(snapshot/snapshot-\d+|tag/tag-.+|changelog/changelog-\d+)$")
    bad = sorted(p for p in before - after if "--as-latest" in argv or not meta.match(p))
    if bad:
        raise Failure("rollback", "step %d %s removed files other than snapshots, tags and changelogs:\n    %s"
                      % (i + 1, " ".join(argv), "\n    ".join(bad[:20])))
OLD = 3 * 86400


def plant_junk(table, items):
    """Creates the junk of a "junk" step (paths relative to the table; a
    trailing "/" makes an empty directory), backdated 3 days, and the
    directories made for it too. Returns how many were made."""
    made = 0
    t = time.time() - OLD
    for rel in items:
        full = os.path.join(table, rel.rstrip("/"))
        parent = os.path.dirname(full)
        new_dirs = []
        d = parent
        while not os.path.isdir(d):
            new_dirs.append(d)
            d = os.path.dirname(d)
        if rel.endswith("/"):
            if os.path.exists(full):
                continue
            os.makedirs(full)
            new_dirs.insert(0, full)
        else:
            os.makedirs(parent, exist_ok=True)
            if os.path.exists(full):
                continue
            with open(full, "w") as fh:
                fh.write("junk\n")
            os.utime(full, (t, t))
        for nd in new_dirs:
            os.utime(nd, (t, t))
        made += 1
    return made


def orphans_exact(table, oracle, step, i):
    """After orphan cleaning with a cut-off after every file: exactly the
    needed files are left in Paimon's folders, and no empty partition,
    bucket or junk directory (the oracle's rules, oracle.py)."""
    needed, _ = oracle.compute()
    left = oracle_mod.orphan_leftovers(table, ["p"], needed, oracle.reachable_names())
    if left:
        raise Failure("orphan-left", "step %d %s left %d unneeded file(s): %s"
                      % (i + 1, " ".join(step["argv"]), len(left), ", ".join(left[:20])))
    dirs = oracle_mod.empty_dirs_left(table, ["p"])
    if dirs:
        raise Failure("orphan-dirs", "step %d %s left %d empty director(ies): %s"
                      % (i + 1, " ".join(step["argv"]), len(dirs), ", ".join(dirs[:20])))


def consumers_kept(table, before, step, i):
    """expiration keeps the snapshot a (remaining) consumer reads next."""
    b = step["argv"][step["argv"].index("--branch") + 1] if "--branch" in step["argv"] else "main"
    broot = pyref.branch_root(table, b)
    if b not in before:
        return
    now = set(pyref.snapshot_files(broot))
    for n in oracle_mod.list_dir(os.path.join(broot, "consumer"), "consumer-"):
        nxt = pyref.read_json(os.path.join(broot, "consumer", n)).get("nextSnapshot")
        if nxt in before[b]["snapshots"] and nxt not in now:
            raise Failure("consumer", "step %d %s expired snapshot %d of %s, which consumer %s reads next"
                          % (i + 1, " ".join(step["argv"]), nxt, b, n[9:]))


def op_name(argv):
    if argv[0] in ("rm", "junk"):
        return argv[0]
    name = argv[0][:-4]
    if name in ("tag", "branch", "consumer"):
        name += " " + argv[2]
    if "--as-latest" in argv:
        name += " --as-latest"
    if "--purge-files" in argv:
        name += " --purge-files"
    return name


def who_deleted(f, listings, now, log):
    lines = []
    sigs = set()
    paths = [ln.split("  (needed by")[0].strip() for ln in f.msg.splitlines() if "  (needed by" in ln]
    for p in paths:
        who = None
        for k, before in enumerate(listings):
            after = listings[k + 1] if k + 1 < len(listings) else now
            if p in before and p not in after:
                who = k
        if who is None:
            lines.append("    %s: never present in any listing" % p)
        else:
            lines.append("    %s: deleted by step %d (%s)" % (p, who + 1, " ".join(log[who]["argv"])))
            argv = log[who]["argv"]
            ob = argv[argv.index("--branch") + 1] if "--branch" in argv else "main"
            roots = [ln.split("(needed by ")[1].rstrip(")") for ln in f.msg.splitlines()
                     if ln.strip().startswith(p + "  (needed by")][0]
            for root in roots.split(", "):
                rb, rkind = root.split(" ")[:2]
                what = "data file" if "/bucket-" in p else p.split("/")[-1].rsplit("-", 6)[0] \
                    if p.startswith("manifest/") else p.split("/")[-2] if "/" in p else p
                sigs.add("%s deletes %s of a %s of %s" % (op_name(argv), what.replace("manifest-list", "manifest list"),
                                                          rkind, "the same branch" if rb == ob or argv[0] in
                                                          ("remove_orphan_files.lua",) else "another branch"))
    f.signature = "; ".join(sorted(sigs)) or "never present"
    return "  who deleted them:\n" + "\n".join(lines) + "\n  signature: " + f.signature


def shrink(spec, sig):
    """greedy: drop steps (from the end) while the same failure (signature) stays."""
    steps = list(spec["steps"])
    k = len(steps) - 1
    while k >= 0:
        cand = steps[:k] + steps[k + 1:]
        f, _ = run_sequence({"options": spec["options"], "steps": cand})
        if f is not None and f.signature == sig:
            steps = cand
        k -= 1
    # and the options not needed
    opts = list(spec["options"])
    for o in list(opts):
        if o == "bucket=-1":
            continue
        cand = [x for x in opts if x != o]
        f, _ = run_sequence({"options": cand, "steps": steps})
        if f is not None and f.signature == sig:
            opts = cand
    return {"options": opts, "steps": steps}


def spec_text(spec, what=""):
    """a replayable spec as spec/lifecycle/*.json keeps it: one step a line."""
    return ('{\n "what": %s,\n "options": %s,\n "steps": [\n%s\n ]\n}\n'
            % (json.dumps(spec.get("what", what)), json.dumps(spec["options"]),
               ",\n".join("  " + json.dumps({k: v for k, v in st.items() if k != "op"}) for st in spec["steps"])))


def describe(spec, log):
    out = ["  options: " + " ".join(spec["options"])]
    for rec in log:
        out.append("  %2d. %s  -> exit %d%s" % (rec["i"], " ".join(rec["argv"]), rec["rc"],
                                               ("  (" + rec["msg"] + ")") if rec["rc"] and rec["msg"] else ""))
    return "\n".join(out)


def verify_missing(v, table):
    """verify.lua's missing paths, relative to the table as the oracle's."""
    out = set()
    for m in v.get("missing") or []:
        p = m["path"]
        out.add(os.path.relpath(p, table) if p.startswith(table + "/") else p)
    return out


def fixture_tables(root):
    out = []
    for d, dirs, _ in os.walk(root):
        if "schema" in dirs and "/branch/" not in d + "/":
            out.append(d)
    return sorted(out)


def main(argv):
    if not os.access(LUA, os.X_OK):
        sys.stdout.write("not ok 1 - %s is not built\n0 passed, 1 failed\n" % LUA)
        return 1
    shrink_on = os.environ.get("LIFECYCLE_SHRINK") == "1"
    keep = os.environ.get("LIFECYCLE_KEEP") == "1"
    if len(argv) == 3 and argv[1] == "--replay":
        with open(argv[2]) as fh:
            spec = json.load(fh)
        f, log = run_sequence(spec, keep=keep)
        sys.stdout.write(describe(spec, log) + "\n")
        if f:
            sys.stdout.write("not ok 1 - replay %s: %s: %s\n0 passed, 1 failed\n" % (argv[2], f.kind, f.msg))
            return 1
        sys.stdout.write("ok 1 - replay %s\n1 passed, 0 failed\n" % argv[2])
        return 0
    seqs = int(os.environ.get("LIFECYCLE_SEQS", "40"))
    steps = int(os.environ.get("LIFECYCLE_STEPS", "30"))
    base = int(os.environ.get("LIFECYCLE_SEED") or int(time.time()) % 1000000)
    sys.stdout.write("# lifecycle: the cases of spec/lifecycle, then %d sequences x %d steps, seeds %d..%d "
                     "(LIFECYCLE_SEED=%d)\n" % (seqs, steps, base, base + seqs - 1, base))
    passed = failed = 0
    kinds = {}
    # the known cases first: every spec/lifecycle/*.json, one test each
    n = 0
    for name in sorted(os.listdir(CASES)) if os.path.isdir(CASES) else []:
        if not name.endswith(".json"):
            continue
        n += 1
        with open(os.path.join(CASES, name)) as fh:
            spec = json.load(fh)
        f, log = run_sequence(spec, keep=keep)
        expect = spec.get("expect")     # a self-test: the failure kind it must cause
        if expect is not None and f is not None and f.kind == expect:
            passed += 1
            sys.stdout.write("ok %d - lifecycle case %s (fails as expected: %s)\n" % (n, name, expect))
        elif expect is not None:
            failed += 1
            sys.stdout.write("not ok %d - lifecycle case %s: %s: expected a %s failure, got %s\n"
                             % (n, name, spec.get("what", ""), expect, f.kind + ": " + f.msg if f else "none"))
            sys.stdout.write("  steps:\n%s\n" % describe(spec, log))
        elif f is None:
            passed += 1
            sys.stdout.write("ok %d - lifecycle case %s\n" % (n, name))
        else:
            failed += 1
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
            sys.stdout.write("not ok %d - lifecycle case %s: %s: %s\n" % (n, name, spec.get("what", ""), f.kind))
            sys.stdout.write("  %s\n  steps:\n%s\n" % (f.msg.replace("\n", "\n  "), describe(spec, log)))
        sys.stdout.flush()
    # the oracle against verify on every Java-written fixture (read-only)
    fixtures = os.environ.get("PAIMON_FIXTURES") or os.path.join(ROOT, "spec", "fixtures")
    for d in fixture_tables(fixtures):
        n += 1
        name = os.path.relpath(d, fixtures)
        missing, vm = {}, set()
        try:
            _, missing = oracle_mod.Oracle(d).compute()
            o = "whole" if not missing else "not whole"
        except pyref.RefError as ex:
            o = "refused (%s)" % ex
        rc, out, err = run(["verify.lua", "T", "--all-snapshots", "--json"], d)
        try:
            vj = json.loads(out)
            v = "refused (%s)" % vj["error"] if "error" in vj else "whole" if vj.get("ok") else "not whole"
            vm = verify_missing(vj, d)
        except ValueError:
            v = "refused (%s)" % err.strip()
        if set(missing) != vm:
            v += "; missing differs: oracle only %s, verify only %s" % (sorted(set(missing) - vm), sorted(vm - set(missing)))
        if (o == v) or (o.startswith("refused") and v.startswith("refused") and rc == 1):
            passed += 1
            sys.stdout.write("ok %d - oracle and verify agree on fixture %s (%s)\n" % (n, name, o.split(" (")[0]))
        else:
            failed += 1
            sys.stdout.write("not ok %d - fixture %s: the oracle says %s, verify.lua says %s\n" % (n, name, o, v))
    t0 = time.time()
    ncase = n
    sigs = {}
    for n in range(seqs):
        seed = base + n
        rng = random.Random(seed)
        spec = {"seed": seed, "options": table_options(rng), "steps": []}
        f, log = run_sequence(spec, steps_max=steps, rng_seed=seed, generate=Generator(rng), keep=keep)
        if f is None:
            passed += 1
            sys.stdout.write("ok %d - lifecycle seed %d (%d steps)\n" % (ncase + n + 1, seed, len(log)))
            sys.stdout.flush()
            continue
        failed += 1
        kinds[f.kind] = kinds.get(f.kind, 0) + 1
        sigs.setdefault(f.signature, []).append(seed)
        spec["steps"] = spec["steps"][:len(log)]
        sys.stdout.write("not ok %d - lifecycle seed %d: %s (reproduce: LIFECYCLE_SEED=%d LIFECYCLE_SEQS=1 "
                         "LIFECYCLE_STEPS=%d)\n" % (ncase + n + 1, seed, f.kind, seed, steps))
        sys.stdout.write("  %s\n" % f.msg.replace("\n", "\n  "))
        sys.stdout.write("  steps:\n%s\n" % describe(spec, log))
        if shrink_on:
            small = shrink(spec, f.signature)
            f2, log2 = run_sequence(small)
            sys.stdout.write("  shrunk to %d steps:\n%s\n" % (len(small["steps"]), describe(small, log2)))
            if f2:
                sys.stdout.write("  %s\n" % f2.msg.replace("\n", "\n  "))
            spec = small
        sys.stdout.write("  replay spec (lifecycle.py --replay FILE):\n%s" % spec_text(
            spec, "seed %d: %s" % (seed, f.signature)))
        sys.stdout.flush()
    sys.stdout.write("# lifecycle: %.0f s; failures by kind: %s\n" % (time.time() - t0, json.dumps(kinds)))
    for sig in sorted(sigs):
        sys.stdout.write("# signature (seeds %s): %s\n" % (" ".join(map(str, sigs[sig])), sig))
    sys.stdout.write("%d passed, %d failed\n" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
