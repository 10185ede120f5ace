"""Flake sweep: run the conformance suite under many random Hypothesis seeds.

The gate runs the derandomized ``ci`` profile; a defect of the suite that only
some random draws reach (an invalid draw, a health check, an oracle that
rounds differently) shows up here instead::

    python -m reports.flake_sweep 20               # dev profile, seeds 1..20
    python -m reports.flake_sweep 20 --thorough 3  # plus thorough, seeds 1..3
    python -m reports.flake_sweep 0 --thorough 1 --first 3  # thorough seed 3 only
    nox -s flake_sweep -- 20 --thorough 3          # the same through nox

Each run is ``python -m pytest conformance -q -p no:cacheprovider -n WORKERS
--hypothesis-profile=PROFILE --hypothesis-seed=SEED`` with the current
interpreter (the installed torch), one at a time. Prints one line per run
(profile, seed, PASS/FAIL, wall time, the failed test ids) and a summary
line; each run's full output goes to ``OUT/<profile>-seed<N>.txt``. Exits 1
when any run failed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

_FAILED = re.compile(r"^(FAILED|ERROR) (\S+)", re.MULTILINE)


def run_seed(profile: str, seed: int, *, workers: int, tests: str, out: Path) -> dict:
    """Run the suite once with ``profile`` and ``seed``; write its output to
    ``out/<profile>-seed<seed>.txt``. Returns ``{profile, seed, ok, rc,
    wall_s, failed, log}`` (``failed``: the FAILED/ERROR test ids)."""
    cmd = [sys.executable, "-m", "pytest", tests, "-q", "-p", "no:cacheprovider"]
    if workers > 0:
        cmd += ["-n", str(workers)]
    cmd += [f"--hypothesis-profile={profile}", f"--hypothesis-seed={seed}"]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    log = out / f"{profile}-seed{seed}.txt"
    log.write_text(proc.stdout + proc.stderr)
    failed = sorted({m.group(2) for m in _FAILED.finditer(proc.stdout)})
    return {
        "profile": profile,
        "seed": seed,
        "ok": proc.returncode == 0,
        "rc": proc.returncode,
        "wall_s": wall,
        "failed": failed,
        "log": str(log),
    }


def sweep(seeds: int, thorough: int = 0, *, workers: int = 2, tests: str = "conformance",
          out: str | Path = "flake-sweep-out", first: int = 1) -> list[dict]:  # fmt: skip
    """Run ``seeds`` ``dev`` runs then ``thorough`` ``thorough`` runs, each
    profile's seeds counting up from ``first`` (so a long sweep can be split
    across machines), printing one line per run as it ends; returns the runs
    (see :func:`run_seed`). Raises ValueError for a negative count or a
    ``first`` below 1."""
    if seeds < 0 or thorough < 0 or first < 1:
        raise ValueError(f"run counts must be >= 0 and the first seed >= 1, not "
                         f"{seeds}, {thorough}, {first}")  # fmt: skip
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    plan = [("dev", s) for s in range(first, first + seeds)]
    plan += [("thorough", s) for s in range(first, first + thorough)]
    for profile, seed in plan:
        r = run_seed(profile, seed, workers=workers, tests=tests, out=out)
        verdict = "PASS" if r["ok"] else f"FAIL (rc {r['rc']})"
        detail = f"  {' '.join(r['failed'])}" if r["failed"] else ""
        print(f"{profile:8} seed {seed:3}: {verdict}  {r['wall_s']:7.1f}s{detail}", flush=True)
        runs.append(r)
    return runs


def summary(runs: list[dict]) -> str:
    """One line: runs passed per profile, total wall time and the failed runs."""
    parts = []
    for profile in dict.fromkeys(r["profile"] for r in runs):
        mine = [r for r in runs if r["profile"] == profile]
        parts.append(f"{profile} {sum(r['ok'] for r in mine)}/{len(mine)} passed")
    bad = [f"{r['profile']}:{r['seed']}" for r in runs if not r["ok"]]
    total = sum(r["wall_s"] for r in runs)
    tail = f"; FAILED seeds: {', '.join(bad)}" if bad else "; no failures"
    return f"flake sweep: {', '.join(parts) or 'nothing run'} in {total:.0f}s{tail}"


def main(argv: list[str] | None = None) -> int:
    """Command line entry point (see the module docstring); returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m reports.flake_sweep", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("seeds", nargs="?", type=int, default=20,
                   help="dev-profile runs, seeds 1..SEEDS (default 20)")  # fmt: skip
    p.add_argument("--thorough", type=int, default=0, metavar="K",
                   help="also K thorough-profile runs, seeds 1..K (default 0)")  # fmt: skip
    p.add_argument("--first", type=int, default=1, metavar="SEED",
                   help="count each profile's seeds from SEED instead of 1")  # fmt: skip
    p.add_argument("-n", "--workers", type=int, default=2,
                   help="pytest-xdist workers per run (0: no xdist; default 2)")  # fmt: skip
    p.add_argument("--tests", default="conformance", help="what pytest runs (default conformance)")
    p.add_argument("--out", default="flake-sweep-out", help="where each run's output goes")
    args = p.parse_args(argv)
    if args.seeds < 0 or args.thorough < 0:
        p.error("seed counts must be >= 0")
    if args.first < 1:
        p.error("--first must be >= 1")
    runs = sweep(args.seeds, args.thorough, workers=args.workers, tests=args.tests, out=args.out,
                 first=args.first)  # fmt: skip
    print(summary(runs))
    return 0 if all(r["ok"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
