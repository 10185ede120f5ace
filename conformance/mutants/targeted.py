"""The targeted sweep: is every claim falsifiable by its own tests?

For each :class:`~conformance.mutants.Mutant`, run *the tests of the claims
it declares* (``--claims``) under the mutant and read each declared claim's
verdict. A declared claim is

``falsified``
    when its verdict flipped to ``FAILED`` or ``unexpected pass``: its own
    tests caught the broken torch;
``survived``
    when it kept a passing verdict (held, expected deviation, region not
    reached, skipped): its tests would not have noticed that torch broke
    it - a defect of the suite, not of the mutant;
``error``
    when the run could not judge it (``ERROR``: a suite error such as a
    health check, or no result at all: the mutant broke the interpreter).

A mutant whose declared claims were all falsified is ``killed``; one with
a surviving claim has ``survived`` (the word of
:mod:`conformance.mutants.runner` and of mutation testing at large);
otherwise ``error``. A mutant of a
device-only path (:attr:`Mutant.devices`, e.g. CUDA) on a machine without
that device is ``not judged here`` (with the reason): it neither proves nor
disproves anything, and it is counted apart.

Speed: one *fork server* imports torch, NumPy, Hypothesis, pytest and
libcst (Hypothesis' failing-example patches) once and parses the claim
registry, instrument table and expectations (TOML data; their modules import
no torch) and the mutant catalogue (which patches nothing until asked); each
mutant runs in a forked child that installs the mutant
(:func:`conformance.mutants.install`, as its ``sitecustomize`` would right
after ``import torch``) and then ``pytest.main`` on the modules holding its
claims' tests. The suite's
test and strategy modules are imported by the child only, after the patch,
from one bytecode cache under ``out_dir`` (compiled, and assert-rewritten
by pytest, once per sweep). A child stops as soon as every declared claim
has failed (:mod:`conformance.mutants.order`) and skips pytest's long
tracebacks (``--tb=native``; the verdicts come from the plugin).
``workers`` children run at once. Where ``fork`` is missing, each mutant
runs in a fresh interpreter with a generated ``sitecustomize`` instead.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from conformance.mutants import CATALOGUE, Mutant, write_sitecustomize
from conformance.mutants.order import NO_SHRINK_ENV, STOP_ENV

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE_DIR = ROOT / "conformance"
SCHEMA = 2
FALSIFIED = ("FAILED", "unexpected pass")

__all__ = [
    "claim_modules",
    "share",
    "parse_share",
    "sweep_share",
    "sweep",
    "by_claim",
    "upgrade",
    "coverage",
    "summary_lines",
    "by_claim_table",
    "sweep_table",
]


def claim_modules(claims: Iterable[str], conformance_dir: Path = CONFORMANCE_DIR) -> list[Path]:
    """The conformance test modules holding the tests of ``claims``, sorted:
    those quoting a claim id (``@pytest.mark.claim("a.b")``), and for a
    claim no module quotes (a marker built from a computed list, like the
    state machine's), the modules testing its area; a compile aspect claim
    (``compile_oracle.ASPECTS``) also gets every module using that mapping."""
    # read, not imported: importing compile_oracle (torch._dynamo) in the fork
    # server's parent would bind torch functions before a mutant patches them
    oracle = (conformance_dir / "compile_oracle.py").read_text(encoding="utf-8")
    block = oracle[oracle.index("ASPECTS: dict[str, str] = {") :]
    aspect_claims = set(re.findall(r'"(compile\.[a-z0-9-]+)"', block[: block.index("}")]))
    texts = {p: p.read_text(encoding="utf-8") for p in sorted(conformance_dir.glob("test_*.py"))}
    out: set[Path] = set()
    for c in claims:
        quoting = {p for p, text in texts.items() if f'"{c}"' in text}
        if c in aspect_claims:
            # the compile tier's aspect claims are also carried through
            # compile_oracle.ASPECTS (the generated-program tests), not by name
            quoting |= {p for p, text in texts.items() if "ASPECTS" in text}
        if not quoting:
            from conformance.mutants.runner import module_areas

            area = c.split(".", 1)[0]
            quoting = {p for p, areas in module_areas(conformance_dir).items() if area in areas}
        out |= quoting
    return sorted(out)


def _pytest_args(mutant: Mutant, results: Path, profile: str, devices: str) -> list[str]:
    mods = [str(p.relative_to(ROOT)) for p in claim_modules(mutant.claims)]
    return [
        *mods,
        "-p", "reports.plugin", "-p", "conformance.mutants.order",
        "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:unraisableexception",
        # Installed plugins a child never uses (their imports cost ~60 ms a child).
        "-p", "no:xdist", "-p", "no:xdist.looponfail", "-p", "no:benchmark",
        "--rootdir", str(ROOT),
        "--hypothesis-profile", profile,
        "--devices", devices,
        "--claims", ",".join(mutant.claims),
        *(["--backends", ",".join(mutant.backends)] if mutant.backends else []),
        "--results-json", str(results),
        "-q", "--no-header",
        # The verdicts come from the plugin; pytest's own long tracebacks
        # (source lookups per frame) cost ~1 s per failing test and go unread.
        "--tb=native",
    ]  # fmt: skip


#: The fork server: imports the heavy modules once, then reads one JSON job
#: per line on stdin and forks a child per job; replies one JSON line per
#: finished child. A child patches torch, then runs pytest.main.
_SERVER = r"""
import json, os, select, signal, sys, time
import numpy, torch
import hypothesis, pytest  # noqa: F401
import hypothesis.extra.numpy  # noqa: F401  (the strategies' NumPy strategies: no torch)
try:  # libcst, for Hypothesis' failing-example patches: ~1.8 s per child otherwise
    import hypothesis.extra._patching  # noqa: F401
except ImportError:
    pass
torch.set_num_threads(1)
# The claim registry, the instrument table and the expectations are TOML data
# (their modules import no torch): parsed once here, not once per child
# (~0.4 s and ~0.25 s each).
from conformance.expectations import load_expectations
from conformance.instruments import default_instruments
from conformance.registry import default_registry
load_expectations(registry=default_registry()); default_instruments()
# The catalogue: records naming their patch functions (nothing patched yet).
from conformance.mutants import install
# Every module of the suite, as the plugin loads them after collection (the
# same pool of Hypothesis constants as a gate run), imported once here.
from reports.plugin import load_suite_modules
load_suite_modules()
# One bytecode cache (under the sweep's output) for every child: the suite's
# modules, and pytest's assertion rewriting of them, compile once per sweep
# instead of once per mutant, even where PYTHONDONTWRITEBYTECODE is set.
sys.dont_write_bytecode = False
sys.pycache_prefix = sys.argv[2]
# Everything imported so far is shared with the children copy-on-write; a
# full collection in a child would touch (and copy) all of it.
import gc
gc.freeze()

def child(job):
    fd = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1); os.dup2(fd, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1); sys.stderr = os.fdopen(2, "w", buffering=1)
    os.chdir(job["cwd"])
    os.environ.update(job["env"])
    rc = 3
    try:
        install(job["name"])
        rc = int(pytest.main(job["args"]))
    except BaseException:
        import traceback; traceback.print_exc()
        rc = 4
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(rc)

running = {}
pending = []
workers = int(sys.argv[1])
closed = False
while not closed or pending or running:
    while pending and len(running) < workers:
        job = pending.pop(0)
        pid = os.fork()
        if pid == 0:
            os.setpgid(0, 0)
            child(job)
        running[pid] = (job, time.monotonic())
    if not closed:
        r, _, _ = select.select([sys.stdin], [], [], 0.05)
        if r:
            line = sys.stdin.readline()
            if not line:
                closed = True
            else:
                pending.append(json.loads(line))
    for pid, (job, t0) in list(running.items()):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            if time.monotonic() - t0 > job["timeout"]:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                os.waitpid(pid, 0)
                status = -1
            else:
                continue
        del running[pid]
        rc = os.waitstatus_to_exitcode(status) if status != -1 else None
        print(json.dumps({"name": job["name"], "rc": rc, "time_s": time.monotonic() - t0}), flush=True)
    if closed and not pending and running:
        time.sleep(0.05)
"""


def _device_available(device: str) -> bool:
    if device == "cpu":
        return True
    import torch

    return device == "cuda" and torch.cuda.is_available()


def _expected_cost(mutant: Mutant) -> int:
    """A rank of how long the mutant's run takes, for scheduling only:
    compile-tier claims (every example compiles; the sweeps measured
    150-280 s for a mutant judged on all three backends) before the state
    machine's (tens of seconds to reach a failing step), before the rest
    (a few seconds). Ties keep the catalogue's order."""
    areas = {c.split(".", 1)[0] for c in mutant.claims}
    inductor = not mutant.backends or "inductor" in mutant.backends
    return 3 * ("compile" in areas) + ("compile" in areas and inductor) + ("sequences" in areas)


def parse_share(text: str) -> tuple[int, int]:
    """``"I/N"`` -> ``(I, N)`` with ``1 <= I <= N``.

    Raises :class:`ValueError` with a one-line reason otherwise."""
    head, sep, tail = text.strip().partition("/")
    try:
        index, count = int(head), int(tail)
    except ValueError:
        index = count = 0
    if not sep or not 1 <= index <= count:
        raise ValueError(f"a share is I/N with 1 <= I <= N, not {text!r}")
    return index, count


def share(mutants: Sequence[Mutant], index: int, count: int) -> list[Mutant]:
    """Share ``index`` of ``count`` (1-based) of ``mutants``, in their order.

    Deterministic and balanced: the mutants are ranked by
    :func:`_expected_cost` (compile tier, state machine, the rest; ties keep
    the catalogue's order) and dealt out in turn, so each share gets its
    part of every cost class. The shares are disjoint and together are all
    of ``mutants``. Raises :class:`ValueError` for an index outside
    ``1..count``."""
    if not 1 <= index <= count:
        raise ValueError(f"share {index}/{count}: need 1 <= I <= N")
    ranked = sorted(range(len(mutants)), key=lambda i: (-_expected_cost(mutants[i]), i))
    mine = {i for pos, i in enumerate(ranked) if pos % count == index - 1}
    return [m for i, m in enumerate(mutants) if i in mine]


#: Which part of the targeted sweep the README test command runs:
#: ``all``, ``I/N``, or unset for CI's rotating third.
SHARE_ENV = "TORCH_CONFORMANCE_SWEEP_SHARE"
#: CI's rotation: this many shares, one per commit.
ROTATION = 3


def sweep_share(env: dict | None = None) -> tuple[int, int, str]:
    """The share of the targeted sweep a test run should judge:
    ``(I, N, why)``; ``(1, 1, ...)`` is the whole sweep.

    ``TORCH_CONFORMANCE_SWEEP_SHARE=all`` (the nightly job) or ``I/N``
    decides; unset, the share rotates with the commit: share
    ``1 + int(HEAD[:8], 16) % ROTATION`` of :data:`ROTATION`, from
    ``git rev-parse HEAD`` in the project's checkout, so a re-run of one
    commit judges the same mutants and consecutive commits judge the others.
    Without git (an unpacked source tree) it is share 1. Raises
    :class:`ValueError` for a malformed variable."""
    env = os.environ if env is None else env
    raw = env.get(SHARE_ENV, "").strip()
    if raw == "all":
        return 1, 1, f"{SHARE_ENV}=all"
    if raw:
        i, n = parse_share(raw)
        return i, n, f"{SHARE_ENV}={raw}"
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=str(ROOT), capture_output=True, text=True,
            timeout=30, check=True,
        ).stdout.strip()  # fmt: skip
        i = 1 + int(head[:8], 16) % ROTATION
        return i, ROTATION, f"rotating with the commit ({head[:12]})"
    except (OSError, subprocess.SubprocessError, ValueError):
        return 1, ROTATION, "rotating share, no git checkout: share 1"


def _child_env(workdir: Path, profile: str) -> dict[str, str]:
    # The ci profile keeps no example database, so Hypothesis' storage holds
    # only its cache of the test modules' constants: one shared directory
    # saves every child re-parsing the suite. Other profiles keep examples
    # there, and one mutant's failures must not be replayed under another.
    storage = workdir.parent / "hypothesis" if profile == "ci" else workdir / "hypothesis"
    return {
        "HYPOTHESIS_STORAGE_DIRECTORY": str(storage),
        NO_SHRINK_ENV: "1",
        STOP_ENV: "1",
        "PYTHONHASHSEED": "0",
    }


def _judge(mutant: Mutant, results: Path, rc: int | None, log: Path) -> dict:
    """Per-claim verdicts of one mutant run, and the mutant's status."""
    from reports.results import claim_verdicts

    doc = None
    if results.exists():
        try:
            doc = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
    per_claim: dict[str, dict] = {}
    if doc is not None:
        cv = claim_verdicts(doc)
        for c in mutant.claims:
            cells = cv.get(c, {})
            # A compile-tier claim has one column per backend (cpu/eager,
            # cpu/aot_eager, cpu/inductor): it is falsified when any column
            # is (a mutant may break one backend only).
            cell = (
                next((x for x in cells.values() if x["verdict"] in FALSIFIED), None)
                or cells.get("cpu")
                or next(iter(cells.values()), None)
            )
            verdict = cell["verdict"] if cell else "not run"
            first = next(
                (t for t in (cell or {}).get("tests", []) if t.get("verdict") == "regression"),
                None,
            )
            failure = (first or {}).get("failure") or {}
            per_claim[c] = {
                "verdict": verdict,
                "state": "falsified"
                if verdict in FALSIFIED
                else "error"
                if verdict in ("ERROR", "not run")
                else "survived",
                "examples": (cell or {}).get("examples", 0),
                "signature": failure.get("signature"),
            }
    else:
        for c in mutant.claims:
            per_claim[c] = {"verdict": "no result", "state": "error", "examples": 0}
    states = {v["state"] for v in per_claim.values()}
    if states == {"falsified"}:
        status, reason = "killed", ""
    elif "survived" in states:
        status = "survived"
        reason = "claims survived: " + ", ".join(
            c for c, v in per_claim.items() if v["state"] == "survived"
        )
    else:
        status = "error"
        tail = (
            log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
            if (log.exists())
            else []
        )
        reason = f"pytest exit {rc}: " + " | ".join(tail)[-400:]
    return {"status": status, "reason": reason, "claims": per_claim}


def _run_subprocess(job: dict, mutant: Mutant) -> int | None:
    """Fallback without fork: a fresh interpreter with a sitecustomize."""
    with tempfile.TemporaryDirectory(prefix="torch-mutant-") as tmp:
        env = dict(os.environ)
        env.update(job["env"])
        env["PYTHONPATH"] = os.pathsep.join(
            filter(
                None,
                [
                    str(write_sitecustomize(mutant, Path(tmp)).parent),
                    str(ROOT),
                    env.get("PYTHONPATH"),
                ],
            )
        )
        with open(job["log"], "w", encoding="utf-8") as log:
            try:
                return subprocess.run(
                    [sys.executable, "-m", "pytest", *job["args"]],
                    cwd=job["cwd"], env=env, stdout=log, stderr=subprocess.STDOUT,
                    timeout=job["timeout"], check=False,
                ).returncode  # fmt: skip
            except subprocess.TimeoutExpired:
                return None


def sweep(
    mutants: Sequence[Mutant],
    out_dir: Path,
    *,
    workers: int = 2,
    profile: str = "ci",
    devices: str = "cpu",
    timeout: float = 600,
    progress: Callable[[dict], None] | None = None,
) -> dict:
    """Run the targeted sweep over ``mutants``; returns the ``mutants.json``
    document (schema 2, not written). Each mutant's work files (log,
    results) go to ``out_dir/mutants-work/<name>/``."""
    out_dir = Path(out_dir)
    work = out_dir / "mutants-work"
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    jobs: dict[str, dict] = {}
    by_name = {m.name: m for m in mutants}
    for m in mutants:
        wd = work / m.name
        wd.mkdir(parents=True, exist_ok=True)
        for f in ("results.json", "pytest.log"):
            (wd / f).unlink(missing_ok=True)
        jobs[m.name] = {
            "name": m.name,
            "args": _pytest_args(m, wd / "results.json", profile, devices),
            "log": str(wd / "pytest.log"),
            "cwd": str(ROOT),
            "env": _child_env(wd, profile),
            "timeout": timeout,
        }
    records: dict[str, dict] = {}
    for m in mutants:
        missing = [d for d in m.devices if not _device_available(d)]
        if missing:
            jobs.pop(m.name)
            records[m.name] = {
                **m.to_dict(), "rc": None, "time_s": 0.0, "status": "not judged here",
                "reason": f"needs {', '.join(missing)}, which this machine does not have",
                "claims": {c: {"verdict": "not run", "state": "not judged here", "examples": 0,
                               "signature": None} for c in m.claims},
            }  # fmt: skip
            if progress is not None:
                progress(records[m.name])
        elif m.devices:
            jobs[m.name]["args"] = _pytest_args(
                m, work / m.name / "results.json", profile, ",".join(m.devices)
            )

    def finish(name: str, rc: int | None, elapsed: float) -> None:
        m = by_name[name]
        wd = work / name
        rec = {
            **m.to_dict(),
            "rc": rc,
            "time_s": round(elapsed, 2),
            **_judge(m, wd / "results.json", rc, wd / "pytest.log"),
        }
        if rc is None:
            rec["status"], rec["reason"] = "error", f"timed out after {timeout:.0f} s"
        records[name] = rec
        if progress is not None:
            progress(rec)

    if hasattr(os, "fork"):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.pop("PYTEST_ADDOPTS", None)
        env.pop("PYTEST_XDIST_WORKER", None)
        proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(max(1, workers)), str(out_dir / "pycache")],
            cwd=str(ROOT), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, start_new_session=True,
        )  # fmt: skip
        try:
            # Slowest first (longest-processing-time scheduling), so no long
            # compile-tier job starts last and leaves the other workers idle.
            for job in sorted(jobs.values(), key=lambda j: -_expected_cost(by_name[j["name"]])):
                proc.stdin.write(json.dumps(job) + "\n")
            proc.stdin.close()
            for line in proc.stdout:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                finish(msg["name"], msg["rc"], msg["time_s"])
            proc.wait()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait()
        for name in jobs:
            if name not in records:  # the server died under this child
                finish(name, None, 0.0)
                records[name]["reason"] = "the fork server died"
    else:  # pragma: no cover - non-POSIX fallback
        for name, job in jobs.items():
            t1 = time.perf_counter()
            rc = _run_subprocess(job, by_name[name])
            finish(name, rc, time.perf_counter() - t1)
    ordered = [records[m.name] for m in mutants]
    import torch

    doc = {
        "schema": SCHEMA,
        "mode": "targeted",
        "torch": torch.__version__,
        "profile": profile,
        "devices": devices,
        "workers": workers,
        "started": started,
        "wall_s": round(time.perf_counter() - t0, 1),
        "mutants": ordered,
    }
    doc["by_claim"] = by_claim(doc)
    doc["score"] = score(doc)
    return doc


#: A mutant's status and a declared claim's state from before the rename
#: (``escaped``), read as their current names.
_OLD_NAMES = {"escaped": "survived"}


def _current(name: str) -> str:
    return _OLD_NAMES.get(name, name)


def upgrade(doc: dict | None) -> dict | None:
    """A copy of a sweep document (``mutants.json``, or the ``mutation``
    section of a ``results.json``) with the names of files written before
    the rename read as today's: status and claim state ``escaped`` ->
    ``survived``; ``by_claim`` cells' ``escaped`` -> ``survived``; score
    ``escaped`` -> ``survived`` and ``claims_escaped`` -> ``claims_survived``.
    A current document comes back equal; ``None`` stays ``None``."""
    if doc is None:
        return None
    out = dict(doc)
    if "mutants" in doc:
        out["mutants"] = [
            {
                **r,
                "status": _current(r.get("status", "")),
                "claims": {
                    c: {**v, "state": _current(v.get("state", ""))}
                    for c, v in (r.get("claims") or {}).items()
                },
            }
            for r in doc["mutants"]
        ]
    if doc.get("by_claim") is not None:
        out["by_claim"] = {
            c: {("survived" if k == "escaped" else k): v for k, v in cell.items()}
            for c, cell in doc["by_claim"].items()
        }
    if doc.get("score") is not None:
        renamed = {"escaped": "survived", "claims_escaped": "claims_survived"}
        out["score"] = {renamed.get(k, k): v for k, v in doc["score"].items()}
    return out


def by_claim(doc: dict) -> dict[str, dict]:
    """``{claim: {"falsified_by": [{mutant, time_s}], "survived": [...], "error": [...],
    "not_judged": [...]}}`` over the declared claims of a sweep document (a
    claim state ``escaped``, written before the rename, counts as ``survived``)."""
    out: dict[str, dict] = {}
    for rec in doc["mutants"]:
        for c, v in rec["claims"].items():
            cell = out.setdefault(
                c, {"falsified_by": [], "survived": [], "error": [], "not_judged": []}
            )
            key = {"falsified": "falsified_by", "survived": "survived", "error": "error",
                   "not judged here": "not_judged"}[_current(v["state"])]  # fmt: skip
            cell[key].append({"mutant": rec["name"], "time_s": rec["time_s"]})
    return dict(sorted(out.items()))


def score(doc: dict) -> dict:
    recs = doc["mutants"]
    out = {"total": len(recs)}
    for status in ("killed", "survived", "error", "not judged here"):
        out[status.replace(" ", "_")] = sum(_current(r["status"]) == status for r in recs)
    out["partial"] = sum(r["kind"] == "partial" for r in recs)
    out["partial_share"] = round(out["partial"] / len(recs), 3) if recs else 0.0
    bc = upgrade({"by_claim": doc.get("by_claim") or by_claim(doc)})["by_claim"]
    out["claims_declared"] = len(bc)
    out["claims_falsified"] = sum(bool(v["falsified_by"]) for v in bc.values())
    out["claims_survived"] = sorted(c for c, v in bc.items() if v["survived"])
    return out


def coverage(doc: dict | None = None) -> dict:
    """Which registered claims are proven falsifiable.

    Returns ``{"falsifiable": [...], "unfalsifiable": {claim: reason},
    "uncovered": [...], "by_area": {area: {"claims": n, "falsifiable": k,
    "unfalsifiable": u, "share": k / (n - u)}}}``. Without a sweep document
    a claim counts as falsifiable when some mutant declares it (what the
    sweep would check); with one, when some mutant falsified it.
    """
    from conformance.registry import default_registry

    reg = default_registry()
    if doc is not None:
        bc = doc.get("by_claim") or by_claim(doc)
        proven = {c for c, v in bc.items() if v["falsified_by"]}
    else:
        proven = {c for m in CATALOGUE for c in m.claims}
    not_judged: set[str] = set()
    if doc is not None:
        not_judged = {c for c, v in bc.items() if v.get("not_judged") and not v["falsified_by"]}
    out: dict = {"falsifiable": [], "unfalsifiable": {}, "uncovered": [], "not_judged_here": [],
                 "by_area": {}}  # fmt: skip
    for cid, claim in reg.claims.items():
        area = out["by_area"].setdefault(
            claim.area, {"claims": 0, "falsifiable": 0, "unfalsifiable": 0}
        )
        area["claims"] += 1
        if claim.check == "measurement":
            out["unfalsifiable"][cid] = "a measurement, outside the gate"
            area["unfalsifiable"] += 1
        elif claim.unfalsifiable:
            out["unfalsifiable"][cid] = claim.unfalsifiable
            area["unfalsifiable"] += 1
        elif cid in proven:
            out["falsifiable"].append(cid)
            area["falsifiable"] += 1
        elif cid in not_judged:
            out["not_judged_here"].append(cid)
        else:
            out["uncovered"].append(cid)
    for a in out["by_area"].values():
        judged = a["claims"] - a["unfalsifiable"]
        a["share"] = round(a["falsifiable"] / judged, 3) if judged else 1.0
    return out


def for_report(doc: dict) -> dict:
    """A compact copy of a sweep document for embedding in ``results.json``."""
    slim = {k: v for k, v in doc.items() if k != "mutants"}
    slim["mutants"] = [
        {**{k: v for k, v in r.items() if k not in ("reason",)}, "reason": r["reason"][:300]}
        for r in doc["mutants"]
    ]
    return slim


def gate_ok(doc: dict) -> bool:
    """True when every mutant that could be judged here was killed (no claim
    survived, nothing broke)."""
    s = doc["score"]
    return s["killed"] + s.get("not_judged_here", 0) == s["total"]


def summary_lines(doc: dict) -> list[str]:
    doc = upgrade(doc)
    s = doc["score"]
    times = sorted(r["time_s"] for r in doc["mutants"])
    median = times[len(times) // 2] if times else 0
    lines = [
        f"targeted sweep: {s['killed']}/{s['total']} mutants killed, {s['survived']} with a "
        f"surviving claim, {s['error']} errors, {s.get('not_judged_here', 0)} not judged here "
        f"(device missing); {s['partial']}/{s['total']} input-dependent "
        f"({100 * s['partial_share']:.0f}%)",
        f"claims: {s['claims_falsified']}/{s['claims_declared']} declared claims falsified; "
        f"median {median:.1f} s per mutant, sweep {doc['wall_s']} s with {doc['workers']} workers",
    ]
    if s["claims_survived"]:
        lines.append("SURVIVED (a claim's own tests missed a mutant that breaks it): "
                     + ", ".join(s["claims_survived"]))  # fmt: skip
    errors = [
        f"{r['name']} ({r['reason'][:200]})" for r in doc["mutants"] if r["status"] == "error"
    ]
    if errors:
        lines.append("errors: " + "; ".join(errors))
    return lines


def sweep_table(doc: dict):
    """One row per mutant: kind/region, status, time, declared claims with their verdicts."""
    from rich.table import Table

    doc = upgrade(doc)
    s = doc["score"]
    table = Table(title=f"Targeted sweep: {s['killed']}/{s['total']} mutants killed")
    for col in ("mutant", "region", "result", "time (s)", "declared claims"):
        table.add_column(col, overflow="fold")
    style = {"killed": "green", "survived": "bold red", "error": "bold yellow",
             "not judged here": "dim"}  # fmt: skip
    for r in doc["mutants"]:
        claims = ", ".join(
            c + ("" if v["state"] == "falsified" else f" [{v['state'].upper()}: {v['verdict']}]")
            for c, v in r["claims"].items()
        )
        table.add_row(
            r["name"], r["region"] or "(every input)", f"[{style[r['status']]}]{r['status']}[/]",
            f"{r['time_s']:.1f}", claims,
        )  # fmt: skip
    return table


def by_claim_table(doc: dict):
    """Claims x mutants: one row per registered claim, the mutants that
    falsified it (with time to falsify), survivals, or why it is unfalsifiable."""
    from rich.table import Table

    doc = upgrade(doc)
    cov = coverage(doc)
    bc = doc.get("by_claim") or by_claim(doc)
    table = Table(title="Claims by falsifying mutant")
    for col in ("claim", "falsified by (time to falsify)", "survived / not covered"):
        table.add_column(col, overflow="fold")
    from conformance.registry import default_registry

    for cid in default_registry().claims:
        cell = bc.get(cid, {"falsified_by": [], "survived": [], "error": [], "not_judged": []})
        fals = ", ".join(f"{x['mutant']} ({x['time_s']:.1f} s)" for x in cell["falsified_by"])
        if cid in cov["unfalsifiable"]:
            other = f"unfalsifiable: {cov['unfalsifiable'][cid]}"
        elif cell["survived"]:
            other = "[bold red]SURVIVED[/] " + ", ".join(x["mutant"] for x in cell["survived"])
        elif not cell["falsified_by"] and cell.get("not_judged"):
            other = "not judged here (device missing): " + ", ".join(
                x["mutant"] for x in cell["not_judged"]
            )
        elif not cell["falsified_by"]:
            other = "[yellow]no mutant falsified it[/]"
        else:
            other = ""
        table.add_row(cid, fals or "-", other)
    return table
