#!/usr/bin/env python3
"""Puts back, one at a time, the small bugs the tests must catch (issue 16),
and checks that each makes its suite fail.

    python3 tests/mutants.py [--build DIR] [NAME-PART ...]

For each mutant: edit one line of a library source, rebuild the runner, run
the suite that must catch it (expect a failure), restore the source. At the
end the runners are rebuilt from the clean sources and every suite named
here is run once more (expect a pass). Exit status 1 when a mutant survives
or a clean suite fails. Not a ctest entry: it edits sources and takes a few
minutes. A file with uncommitted changes is refused, so nothing is lost.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, file, old text, new text, runner, suite)
MUTANTS = [
    # item 1: the growth check of `backoff`
    ("growth threshold ten times weaker", "reports/verdict_timing.c",
     "fmax(0.15 * first->ms, c->tol)", "fmax(0.015 * first->ms, c->tol)", "unit_reports", "verdict_backoff"),
    ("growth threshold: <= for <", "reports/verdict_timing.c",
     "prev->ms - first->ms < fmax(", "prev->ms - first->ms <= fmax(", "unit_reports", "verdict_backoff"),
    ("growth: tolerance dropped", "reports/verdict_timing.c",
     "fmax(0.15 * first->ms, c->tol)", "(0.15 * first->ms)", "unit_reports", "verdict_backoff"),
    ("shrink: a quarter for half", "reports/verdict_timing.c",
     "g->ms < 0.5 * prev->ms - c->tol", "g->ms < 0.25 * prev->ms - c->tol", "unit_reports", "verdict_backoff"),
    # item 2: stream timing under a time scale
    ("stream interval not scaled", "sim/play.c",
     "s->interval * 1000.0 * c->srv->scale", "s->interval * 1000.0", "e2e", "stream_scale"),
    ("stream stall not scaled", "sim/play.c",
     "s->stall * 1000.0 * c->srv->scale", "s->stall * 1000.0", "e2e", "stream_scale"),
    # item 3: the quota kind of no_retry_after
    ("quota never matches", "reports/verdict_attempts.c",
     "if (s->quota && quota) return 1;", "if (s->quota && quota && 0) return 1;", "unit_reports", "verdict_no_retry_after"),
    ("quota: 402 forgotten", "reports/verdict_attempts.c",
     "              a->status == 402;", "              0;", "unit_reports", "verdict_no_retry_after"),
    # item 4: boundaries
    ("max_requests off by one", "reports/verdict_attempts.c",
     "tr->narr <= max ? RPT_PASS", "tr->narr <= max + 1 ? RPT_PASS", "unit_reports", "verdict_max_requests"),
    ("attempts: max off by one", "reports/verdict_attempts.c",
     "if (n < lo || n > hi) {", "if (n < lo || n > hi + 1) {", "unit_reports", "verdict_attempts"),
    ("attempts: min off by one", "reports/verdict_attempts.c",
     "if (n < lo || n > hi) {", "if (n < lo - 1 || n > hi) {", "unit_reports", "verdict_attempts"),
    ("herd: max off by one", "reports/verdict_attempts.c",
     "peak <= max ? RPT_PASS", "peak <= max + 1 ? RPT_PASS", "unit_reports", "verdict_herd"),
    ("herd: window edge > for >=", "reports/verdict_attempts.c",
     "while (t[i] - t[j] >= w) j++;", "while (t[i] - t[j] > w) j++;", "unit_reports", "verdict_herd"),
    ("retry_after: tolerance doubled", "reports/verdict_timing.c",
     "int st = worst_margin + c->tol < 0", "int st = worst_margin + 2 * c->tol < 0", "unit_reports", "verdict_retry_after"),
    ("min_gap: tolerance doubled", "reports/verdict_timing.c",
     "if (has_min && g->ms + c->tol < lo)", "if (has_min && g->ms + 2 * c->tol < lo)", "unit_reports", "verdict_backoff"),
    ("min_gap: not scaled", "reports/verdict_timing.c",
     "double lo = min_gap * 1000.0 * c->scale,", "double lo = min_gap * 1000.0,", "unit_reports", "verdict_backoff"),
    ("max_gap: tolerance doubled", "reports/verdict_timing.c",
     "g->ms > hi + c->tol)", "g->ms > hi + 2 * c->tol)", "unit_reports", "verdict_backoff"),
    ("jitter: 0.5 % for 5 %", "reports/verdict_timing.c",
     "fmax(0.05 * med, c->slack / 2)", "fmax(0.005 * med, c->slack / 2)", "unit_reports", "verdict_backoff"),
    ("jitter: slack ignored", "reports/verdict_timing.c",
     "fmax(0.05 * med, c->slack / 2)", "(0.05 * med)", "unit_reports", "verdict_backoff"),
    ("within_deadline: 10 % for 5 %", "reports/verdict_timing.c",
     "double allow = dl * 1.05 + c->tol;", "double allow = dl * 1.10 + c->tol;", "unit_reports", "verdict_deadline"),
    ("cost: max_billed off by one", "reports/verdict_client.c",
     "if (has_billed && billed > billed_max)", "if (has_billed && billed > billed_max + 1)", "unit_reports", "verdict_cost"),
    ("cost: ratio >= for >", "reports/verdict_client.c",
     "if (r > ratio + 1e-9)", "if (r >= ratio)", "unit_reports", "verdict_cost"),
    ("cost: ratio 1 % over", "reports/verdict_client.c",
     "if (r > ratio + 1e-9)", "if (r > ratio * 1.01)", "unit_reports", "verdict_cost"),
    ("side_effects: count > 2", "reports/verdict_client.c",
     "if (e->count > 1)", "if (e->count > 2)", "unit_reports", "verdict_side_effects"),
    ("profile: max_attempts off by one", "reports/verdict_profile.c",
     "if (n > p.max_attempts)", "if (n > p.max_attempts + 1)", "unit_reports", "verdict_profile"),
    ("profile: early gap tolerance doubled", "reports/verdict_profile.c",
     "if (gap < lo - c->tol)", "if (gap < lo - 2 * c->tol)", "unit_reports", "verdict_profile"),
    ("profile: late gap x2 for x1.5", "reports/verdict_profile.c",
     "if (gap > hi * 1.5 + c->tol + 250.0)", "if (gap > hi * 2 + c->tol + 250.0)", "unit_reports", "verdict_profile"),
    # item 5: a missing header must fail one test, not crash the runner
    ("Retry-After header not sent", "sim/play.c",
     "    sim__format_seconds(s->retry_after, buf);\n    add_header(r, c, \"retry-after\", buf, 1);",
     "    sim__format_seconds(s->retry_after, buf);", "e2e", "steps"),
]


def build(build_dir, target):
    p = subprocess.run(["cmake", "--build", build_dir, "-j2", "--target", target],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("build of %s failed:\n%s" % (target, p.stdout[-3000:] + p.stderr[-2000:]))


def run(build_dir, runner, suite):
    env = dict(os.environ, FUSEBOX_SRC=ROOT)
    p = subprocess.run([os.path.join(build_dir, "tests", runner), suite], capture_output=True,
                       text=True, env=env, timeout=300)
    return p.returncode, p.stdout + p.stderr


def dirty(path):
    p = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", path],
                       capture_output=True, text=True)
    return p.stdout.strip() != ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("only", nargs="*", help="run the mutants whose name contains one of these")
    a = ap.parse_args()
    todo = [m for m in MUTANTS if not a.only or any(o in m[0] for o in a.only)]
    survived = []
    for name, rel, old, new, runner, suite in todo:
        path = os.path.join(ROOT, rel)
        if dirty(rel):
            sys.exit("%s has uncommitted changes: commit or stash them first" % rel)
        src = open(path).read()
        if src.count(old) != 1:
            print("?? %-40s the text to change is not in %s once (the source moved on)" % (name, rel))
            survived.append(name)
            continue
        try:
            with open(path, "w") as f:
                f.write(src.replace(old, new))
            build(a.build, runner)
            rc, out = run(a.build, runner, suite)
        finally:
            with open(path, "w") as f:
                f.write(src)
        caught = [l.strip() for l in out.splitlines()
                  if "data case" in l or "FAILED" in l or "CRASH" in l][:3]
        if rc == 0:
            survived.append(name)
        print("%s %-40s %s %s: %s" % ("ok" if rc else "!!", name, runner, suite,
                                      "; ".join(caught) if rc else "SURVIVED (the suite passed)"))
        sys.stdout.flush()
    bad_clean = []
    for runner in sorted({m[4] for m in todo}):
        build(a.build, runner)
    for runner, suite in sorted({(m[4], m[5]) for m in todo}):
        rc, _ = run(a.build, runner, suite)
        if rc != 0:
            bad_clean.append("%s %s" % (runner, suite))
    print("%d mutants, %d caught, %d survived%s; clean sources: %s" % (
        len(todo), len(todo) - len(survived), len(survived),
        (" (" + ", ".join(survived) + ")") if survived else "",
        "every suite passes" if not bad_clean else "FAILING " + ", ".join(bad_clean)))
    return 1 if survived or bad_clean else 0


if __name__ == "__main__":
    sys.exit(main())
