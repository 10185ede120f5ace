"""Where the gate's time goes: ``python -m reports.bench``.

Runs ``torch-conformance run`` (``--no-measure``) ``--runs`` times into
temporary directories and prints, as the median over the runs:

- ``wall``: the whole command, as a user waits for it;
- ``startup``: the run's wall time not covered by its tests' own time,
  i.e. interpreter and torch import, collection, starting the xdist
  workers, writing results and report (``wall - test time / workers``);
- ``collect``: a separate ``pytest --collect-only`` of the same selection
  in one process (imports, plugin configuration, collection);
- per area and compile backend, the test time (core-seconds, the sum of
  ``duration_s``) split into ``examples`` (inside the examples' bodies:
  building inputs, the torch calls, the checks; ``body_s``) and
  ``hypothesis`` (the rest: generating examples, shrinking, the plugin's
  bookkeeping), and the time per example;
- ``report``: rendering ``report.html`` from the run's ``results.json``;
- the slowest tests.

Usage::

    python -m reports.bench [--runs 3] [-n 2] [--profile ci] [--claims ID,...]
        [--backends eager,...] [--json FILE] [-- EXTRA RUN ARGS]

The figures depend on the machine and on what else runs on it: measure
with nothing else running. ``--json FILE`` also writes every run's figures.
Exit status 0, or 2 with one ``error:`` line on bad input or a failed run.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _area(t: dict) -> str:
    mod = t["nodeid"].split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
    area = mod.removeprefix("test_")
    return area + (f"[{t['backend']}]" if t.get("backend") else "")


def breakdown(doc: dict) -> dict:
    """Test time of one ``results.json`` by area (and compile backend):
    ``{area: {"tests", "examples", "test_s", "body_s", "hypothesis_s"}}``,
    times in seconds (core-seconds: summed over workers)."""
    out: dict[str, dict] = defaultdict(
        lambda: {"tests": 0, "examples": 0, "test_s": 0.0, "body_s": 0.0, "hypothesis_s": 0.0}
    )
    for t in doc["tests"]:
        row = out[_area(t)]
        row["tests"] += 1
        row["examples"] += t.get("examples") or 0
        d = t.get("duration_s") or 0.0
        b = min(d, t.get("body_s") or 0.0)
        row["test_s"] += d
        row["body_s"] += b
        row["hypothesis_s"] += d - b
    return dict(out)


def _workers(n: str) -> int:
    import os

    if n in ("auto", "logical"):
        return os.cpu_count() or 1
    return max(1, int(n))


def one_run(args, extra: list[str]) -> dict:
    """One timed ``torch-conformance run``; its figures (raises
    ``RuntimeError`` when the run wrote no results)."""
    from reports.html import render_report

    with tempfile.TemporaryDirectory(prefix="torch-conformance-bench-") as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "reports.cli", "run", "--no-measure", "--no-progress",
               "-n", args.n, "--profile", args.profile, "--out", str(out)]  # fmt: skip
        if args.claims:
            cmd += ["--claims", args.claims]
        if args.backends:
            cmd += ["--backends", args.backends]
        cmd += extra
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=str(ROOT), capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1) or not (out / "results.json").exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"the run failed (exit {proc.returncode}): {tail[0]}")
        doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
        t1 = time.perf_counter()
        render_report(doc)
        report_s = time.perf_counter() - t1
        collect_cmd = [sys.executable, "-m", "pytest", "-p", "reports.plugin",
                       "-p", "no:cacheprovider", "--collect-only", "-q",
                       "--rootdir", str(ROOT), str(ROOT / "conformance")]  # fmt: skip
        if args.claims:
            collect_cmd += ["--claims", args.claims]
        t2 = time.perf_counter()
        subprocess.run(collect_cmd, cwd=str(ROOT), capture_output=True, text=True)
        collect_s = time.perf_counter() - t2
    areas = breakdown(doc)
    test_s = sum(r["test_s"] for r in areas.values())
    return {
        "wall_s": wall,
        "startup_s": max(0.0, wall - test_s / _workers(args.n)),
        "collect_s": collect_s,
        "report_s": report_s,
        "test_s": test_s,
        "gate_passed": proc.returncode == 0,
        "areas": areas,
        "slowest": sorted(
            (
                (t.get("duration_s") or 0.0, t["nodeid"], t.get("examples") or 0)
                for t in doc["tests"]
            ),
            reverse=True,
        )[:10],
    }


def _med(values) -> float:
    return statistics.median(values) if values else 0.0


def summary_lines(runs: list[dict]) -> list[str]:
    """The printed breakdown: medians over ``runs``."""
    lines = [
        f"{len(runs)} run(s); medians; gate passed in {sum(r['gate_passed'] for r in runs)}",
        f"  wall     {_med([r['wall_s'] for r in runs]):8.1f} s",
        f"  startup  {_med([r['startup_s'] for r in runs]):8.1f} s  "
        "(wall not covered by test time / workers: imports, collection, workers, writing)",
        f"  collect  {_med([r['collect_s'] for r in runs]):8.1f} s  (pytest --collect-only, "
        "one process)",
        f"  report   {_med([r['report_s'] for r in runs]):8.1f} s  (rendering report.html)",
        f"  tests    {_med([r['test_s'] for r in runs]):8.1f} core-s",
        "",
        f"  {'area':34} {'tests':>5} {'examples':>8} {'test s':>8} {'bodies s':>8} "
        f"{'hyp. s':>8} {'ms/ex':>7}",
    ]
    names = sorted({a for r in runs for a in r["areas"]})
    rows = []
    for a in names:
        cells = [r["areas"].get(a) for r in runs if a in r["areas"]]
        med = {k: _med([c[k] for c in cells]) for k in cells[0]}
        rows.append((med["test_s"], a, med))
    for _, a, m in sorted(rows, reverse=True):
        per = 1000 * m["test_s"] / m["examples"] if m["examples"] else 0.0
        lines.append(
            f"  {a:34} {m['tests']:5.0f} {m['examples']:8.0f} {m['test_s']:8.1f} "
            f"{m['body_s']:8.1f} {m['hypothesis_s']:8.1f} {per:7.1f}"
        )
    lines += ["", "  slowest tests (last run):"]
    lines += [f"    {d:7.1f} s  {n}  ({e} examples)" for d, n, e in runs[-1]["slowest"]]
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    from reports.cli_common import Parser

    p = Parser(prog="python -m reports.bench", description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=3, help="how many runs (default 3)")
    p.add_argument("-n", default="2", help="xdist workers of each run (default 2)")
    p.add_argument("--profile", default="ci", choices=["ci", "smoke", "dev", "thorough"])
    p.add_argument("--claims", default=None, help="only these claims (comma-separated)")
    p.add_argument("--backends", default=None, help="compile backends (default: all)")
    p.add_argument("--json", default=None, help="also write every run's figures here")
    args = p.parse_args(argv)
    if args.runs < 1:
        print("error: --runs must be at least 1", file=sys.stderr)
        return 2
    runs = []
    for i in range(args.runs):
        try:
            runs.append(one_run(args, extra))
        except RuntimeError as e:
            print(f"error: run {i + 1}: {e}", file=sys.stderr)
            return 2
        print(f"run {i + 1}/{args.runs}: {runs[-1]['wall_s']:.1f} s", flush=True)
    print("\n".join(summary_lines(runs)))
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
