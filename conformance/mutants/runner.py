"""Mutation runs: the conformance suite once per mutant, and the kill matrix.

For each :class:`~conformance.mutants.Mutant` the runner writes its
``sitecustomize.py`` into a private directory, puts that directory first on
``PYTHONPATH`` and runs, in a subprocess::

    python -m pytest <target area modules> <every other conformance module>
        -p reports.plugin -p conformance.mutants.order
        --hypothesis-profile ci --devices cpu -x --results-json <work>/results.json

Every conformance module is listed explicitly, the mutant's target areas
first (pytest keeps the command-line order of files; it would fold a file
into a directory given after it), so the likely killers run first while the
whole suite still runs until the first failure. A mutant is

``killed``
    when at least one test ends as a regression or an unexpected pass
    (the claims of those tests are the ones that caught it);
``survived``
    when the whole suite passes (only held claims and expected deviations);
``error``
    when pytest could not run (exit status other than 0/1, or a failure
    without any conformance verdict): the mutant itself is broken.

Every module still runs; the order only decides how soon a killer runs:
the tests of the mutant's target claims first, then those of the claims that
killed it in the previous sweep of the same output directory (a kill cache,
``--cold`` ignores it), then its target areas' modules, then the rest (see
:mod:`conformance.mutants.order`). Hypothesis runs the ``ci`` profile's
examples but, unless ``shrink=True``, skips the shrink and explain phases:
the first failing example decides the kill, so only the time to kill (and
the readability of the recorded example) changes.

Time to kill is the wall time of the subprocess (interpreter start, torch
import and collection included). A ``control`` run (no mutant, same
machinery) checks that the suite passes on real torch: no false kills, and
a kill by a test that also fails in the control run does not count.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from conformance.mutants import CONTROL, Mutant, write_sitecustomize
from conformance.mutants.order import ENV as ORDER_ENV
from conformance.mutants.order import NO_SHRINK_ENV

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE_DIR = ROOT / "conformance"
SCHEMA = 1
#: Verdicts of the conformance plugin that count as a kill.
KILLING_VERDICTS = ("regression", "unexpected-pass")  # suite-error is a defect, not a kill


# ----------------------------------------------------------------- modules


_CLAIM_MARK = re.compile(r"mark\.claim\(\s*[\"']([a-z0-9_]+)\.")


def module_areas(conformance_dir: Path = CONFORMANCE_DIR) -> dict[Path, tuple[str, ...]]:
    """``{module: areas}`` for every ``conformance/test_*.py``, sorted by path.

    A module's areas are the areas of the claim ids its ``@pytest.mark.claim``
    markers name (``test_copy_sequences.py`` holds the ``sequences`` area),
    or the part of its name after ``test_`` when it names none.
    """
    out: dict[Path, tuple[str, ...]] = {}
    for p in sorted(conformance_dir.glob("test_*.py")):
        try:
            found = _CLAIM_MARK.findall(p.read_text(encoding="utf-8"))
        except OSError:
            found = []
        out[p] = tuple(dict.fromkeys(found)) or (p.stem.removeprefix("test_"),)
    return out


def all_areas(conformance_dir: Path = CONFORMANCE_DIR) -> list[str]:
    """Every area some conformance module tests, sorted."""
    return sorted({a for areas in module_areas(conformance_dir).values() for a in areas})


def ordered_modules(mutant: Mutant, conformance_dir: Path = CONFORMANCE_DIR) -> list[Path]:
    """Every conformance module, those testing the mutant's target areas first
    (in target order), then the others in name order."""
    mods = module_areas(conformance_dir)
    first: list[Path] = []
    for area in target_areas(mutant):
        first += [p for p, areas in mods.items() if area in areas and p not in first]
    return first + [p for p in mods if p not in first]


def target_areas(mutant: Mutant) -> list[str]:
    """The areas of a mutant's targets (a target is an area or a claim id,
    whose area is the part before the first dot)."""
    return list(dict.fromkeys(t.split(".", 1)[0] for t in mutant.targets))


def target_claims(mutant: Mutant) -> list[str]:
    """The claim ids among a mutant's targets: their tests run first."""
    return [t for t in mutant.targets if "." in t]


def pytest_command(
    mutant: Mutant,
    results_json: Path,
    *,
    profile: str = "ci",
    devices: str = "cpu",
    stop_first: bool = True,
    only: Sequence[str] | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The pytest command line of one mutation run.

    ``only`` replaces the ordered list of every conformance module by these
    paths or node ids (relative to the repository root); the suite's own
    tests use it for quick control runs of a few tests.
    """
    targets = list(only) if only else [str(p.relative_to(ROOT)) for p in ordered_modules(mutant)]
    cmd = [
        sys.executable, "-m", "pytest",
        *targets,
        "-p", "reports.plugin", "-p", "conformance.mutants.order", "-p", "no:cacheprovider",
        "--rootdir", str(ROOT),
        "--hypothesis-profile", profile,
        "--devices", devices,
        "--results-json", str(results_json),
        "-q", "--no-header", "-p", "no:randomly",
        # Its gc.collect() per test costs ~1 s per run; not a semantics check.
        "-p", "no:unraisableexception",
    ]  # fmt: skip
    if stop_first:
        cmd.append("-x")
    return cmd + list(extra)


def mutated_env(
    mutant: Mutant,
    site_dir: Path,
    storage_dir: Path | None = None,
    pycache_dir: Path | None = None,
) -> dict[str, str]:
    """Environment installing ``mutant`` (its sitecustomize first on PYTHONPATH, then ROOT).

    ``storage_dir`` receives Hypothesis' files (failing-example patches) instead
    of the checkout. ``pycache_dir`` is a bytecode cache shared by the runs
    (``PYTHONPYCACHEPREFIX``), so pytest's assertion rewriting and the
    imports are not redone by every run even where ``PYTHONDONTWRITEBYTECODE``
    is set; it keeps the checkout free of ``__pycache__`` directories.
    """
    write_sitecustomize(mutant, site_dir)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(site_dir), str(ROOT), env.get("PYTHONPATH")])
    )
    if storage_dir is not None:
        env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(storage_dir)
    if pycache_dir is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache_dir)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


# ----------------------------------------------------------------- witness


def run_witness(
    mutant: Mutant, *, mutated: bool, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run ``mutant.witness`` in a fresh interpreter, with the mutant
    installed (``mutated=True``) or on real torch (through the same
    machinery with the control mutant)."""
    with tempfile.TemporaryDirectory(prefix="torch-mutant-witness-") as tmp:
        env = mutated_env(mutant if mutated else CONTROL, Path(tmp) / "site")
        code = f"from conformance.mutants import get\nget({mutant.name!r}).witness()\n"
        return subprocess.run(
            [sys.executable, "-c", code],
            cwd=str(ROOT),
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


#: Child program of :func:`check_witnesses`: imports torch once, then forks.
#: The real-torch runs share one child, which runs every witness in turn
#: (a witness that fails there is run again in a fork of its own, so a
#: state one witness leaks cannot fail another); each mutated run gets a
#: fork of its own, which installs the mutant (as a sitecustomize would
#: right after ``import torch``), smoke-tests the strategies under it, runs
#: the witness and reports. Nothing is compiled in the parent, so no
#: compiled code of a witness outlives the run that compiled it.
_WITNESS_SERVER = r"""
import json, os, signal, sys, traceback
import numpy, torch
torch.set_num_threads(1)
import hypothesis, pytest  # noqa: F401  (imported before the patch, like in a run)
from strategies import DIFFERENTIABLE, layout_grid
from conformance.mutants import get, install  # the catalogue: patches nothing until install
import gc
def warm(x):  # the compile stack's imports and first-use setup, shared by every fork
    return x * 2
for backend in ("aot_eager", "inductor"):
    try:
        torch.compile(warm, backend=backend)(torch.ones(2))
    except Exception:
        pass
    torch.compiler.reset()
gc.freeze()  # the children share all of this copy-on-write; no collection walks it

def smoke():
    for spec in layout_grid((torch.float32, torch.int64)):
        spec.build("cpu")
        if spec.dtype in DIFFERENTIABLE:
            spec.build("cpu", requires_grad=True)
            spec.build("cpu", requires_grad=True, leaf=True)

def check(name, mutated):
    signal.alarm(60)
    res = {"status": "pass", "message": ""}
    stage = "mutant"
    try:
        if mutated:
            install(name)
        stage = "strategies"
        smoke()
        stage = "witness"
        get(name).witness()
    except AssertionError as e:
        res = {"status": "assertion" if stage == "witness" else "error",
               "message": "%s: AssertionError: %s" % (stage, e)}
    except BaseException as e:
        res = {"status": "error", "message": "%s: %s: %s\n%s" % (
            stage, type(e).__name__, e, traceback.format_exc(limit=-3))}
    signal.alarm(0)
    return res

def in_fork(work):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    try:
        return json.loads(b"".join(chunks).decode())
    except ValueError:
        return {"status": "error", "message": "child died (wait status %d)" % status}

names = [job["name"] for job in json.load(sys.stdin)]
real = in_fork(lambda: {name: check(name, False) for name in names})
if real.get("status") == "error":  # the shared child died: one fork each
    real = {}
out = {}
for name in names:
    res = real.get(name)
    if res is None or res["status"] != "pass":
        res = in_fork(lambda: check(name, False))
    out[name] = {"real": res, "mutated": in_fork(lambda: check(name, True))}
print("WITNESS-RESULTS " + json.dumps(out))
"""


def check_witnesses(mutants: Sequence[Mutant], *, timeout: float = 600) -> dict[str, dict]:
    """Run every witness on real torch and under its mutant.

    Returns ``{name: {"real": res, "mutated": res}}`` where ``res["status"]``
    is ``pass`` (the witness held), ``assertion`` (the witness failed: the
    mutant changed observable behaviour) or ``error`` (anything else: a
    broken mutant or witness, or a mutant that breaks the strategies).
    Uses one interpreter (the compile stack warmed up once, nothing of a
    witness compiled in it), one fork for all real-torch runs and a fork per
    mutated run (POSIX); elsewhere it falls back to :func:`run_witness`,
    one fresh interpreter per check.
    """
    if not hasattr(os, "fork"):  # pragma: no cover - non-POSIX fallback
        out: dict[str, dict] = {}
        for m in mutants:
            out[m.name] = {}
            for mutated in (False, True):
                p = run_witness(m, mutated=mutated)
                status = (
                    "pass"
                    if p.returncode == 0
                    else "assertion"
                    if "AssertionError" in p.stderr
                    else "error"
                )
                out[m.name]["mutated" if mutated else "real"] = {
                    "status": status,
                    "message": p.stderr[-2000:],
                }
        return out
    jobs = [{"name": m.name} for m in mutants]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # compile in-process (no worker pool a fork would inherit), into a cache
    # no earlier run wrote
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    with tempfile.TemporaryDirectory(prefix="torch-mutant-witness-cache-") as cache:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache
        proc = subprocess.run(
            [sys.executable, "-c", _WITNESS_SERVER],
            input=json.dumps(jobs),
            cwd=str(ROOT),
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("WITNESS-RESULTS ")), None)
    if line is None:
        raise RuntimeError(f"witness server failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(line.removeprefix("WITNESS-RESULTS "))


# ------------------------------------------------------------------- runs


def _claim_areas() -> dict[str, str]:
    try:
        from conformance.registry import default_registry

        reg = default_registry()
        return {cid: c.area for cid, c in reg.claims.items()}
    except Exception:  # registry errors are reported by the run itself
        return {}


def _area_of(claim: str, areas: dict[str, str]) -> str:
    return areas.get(claim) or claim.split(".", 1)[0]


def _module_area(nodeid: str) -> str:
    stem = Path(nodeid.split("::", 1)[0]).stem
    return stem.removeprefix("test_")


def _first_line(text: str | None, limit: int = 300) -> str:
    return (text or "").strip().splitlines()[0][:limit] if (text or "").strip() else ""


#: "AssertionError: [sequences.views-alias-base] ..." - a failure citing its claim.
_CITED = re.compile(r"^\w+: \[([a-z0-9_]+\.[a-z0-9_.-]+)\]")


def analyse(doc: dict | None, all_areas: Iterable[str], claim_areas: dict[str, str]) -> dict:
    """Kill facts from one run's ``results.json`` document.

    Returns ``{"killed_by": [...], "claims": [...], "areas": {area: state},
    "tests_run": n}`` where a state is ``killed`` (a test of the area failed),
    ``held`` (its tests ran and none failed) or ``not run``.
    """
    areas = dict.fromkeys(all_areas, "not run")
    killed_by: list[dict] = []
    tests = (doc or {}).get("tests", [])
    for t in tests:
        claims = t.get("claims") or []
        area = _area_of(claims[0], claim_areas) if claims else _module_area(t.get("nodeid", ""))
        if t.get("verdict") in KILLING_VERDICTS:
            failure = t.get("failure") or {}
            cited = _CITED.match(failure.get("signature") or "")
            if cited and cited.group(1) in claims:
                # A test checking many claims (a state machine) names the one it caught.
                claims = [cited.group(1)]
            killed_by.append(
                {
                    "nodeid": t["nodeid"],
                    "claims": list(claims),
                    "verdict": t["verdict"],
                    "signature": failure.get("signature")
                    or ("unexpected pass" if t["verdict"] == "unexpected-pass" else ""),
                    "falsifying_example": (failure.get("falsifying_example") or "")[:1500],
                    "duration_s": t.get("duration_s", 0),
                }
            )
            for c in claims:
                areas[_area_of(c, claim_areas)] = "killed"
        elif t.get("verdict") in ("held", "expected-deviation", "skipped"):
            if areas.get(area, "not run") == "not run":
                areas[area] = "held"
    claims = sorted({c for k in killed_by for c in k["claims"]})
    return {
        "killed_by": killed_by,
        "claims": claims,
        "claim_areas": sorted({_area_of(c, claim_areas) for c in claims}),
        "areas": areas,
        "tests_run": len(tests),
    }


def run_mutant(
    mutant: Mutant,
    workdir: Path,
    *,
    profile: str = "ci",
    devices: str = "cpu",
    stop_first: bool = True,
    timeout: float = 1200,
    claim_areas: dict[str, str] | None = None,
    pycache_dir: Path | None = None,
    only: Sequence[str] | None = None,
    first_claims: Sequence[str] = (),
    shrink: bool = False,
) -> dict:
    """Run the conformance suite (or the ``only`` node ids) under ``mutant``;
    returns its record.

    The tests of the mutant's target claims run first, then those of
    ``first_claims`` (the claims that killed it in a previous sweep), then
    the rest of its target areas' modules, then every other module."""
    workdir = Path(workdir)
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    results = workdir / "results.json"
    env = mutated_env(mutant, workdir / "site", workdir / "hypothesis", pycache_dir)
    first = list(dict.fromkeys([*target_claims(mutant), *first_claims]))
    env[ORDER_ENV] = ",".join(first)
    if not shrink:
        env[NO_SHRINK_ENV] = "1"
    cmd = pytest_command(
        mutant, results, profile=profile, devices=devices, stop_first=stop_first, only=only
    )
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=timeout
        )
        rc, output = proc.returncode, (proc.stdout or "") + (proc.stderr or "")
    except subprocess.TimeoutExpired as e:
        rc = None
        output = (
            (e.stdout or b"").decode(errors="replace")
            if isinstance(e.stdout, bytes)
            else (e.stdout or "")
        )
    elapsed = time.perf_counter() - t0
    (workdir / "pytest.log").write_text(output, encoding="utf-8")
    doc = None
    if results.exists():
        try:
            doc = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            doc = None
    facts = analyse(doc, all_areas(), claim_areas if claim_areas is not None else {})
    if rc is None:
        status = "error"
        reason = f"timed out after {timeout:.0f} s"
    elif facts["killed_by"]:
        status, reason = "killed", ""
    elif rc == 0:
        status, reason = "survived", ""
    else:
        status = "error"
        tail = [ln for ln in output.strip().splitlines() if ln.strip()]
        errline = next((ln for ln in reversed(tail) if "rror" in ln), tail[-1] if tail else "")
        reason = f"pytest exit {rc}: {errline[:300]}"
    return {
        **mutant.to_dict(),
        "status": status,
        "time_s": round(elapsed, 2),
        "session_s": (doc or {}).get("environment", {}).get("wall_s"),
        "rc": rc,
        "reason": reason,
        "first_claims": first,
        **facts,
        "log_tail": "\n".join(output.strip().splitlines()[-40:]) if status == "error" else "",
    }


def previous_kills(path: Path) -> dict[str, list[str]]:
    """``{mutant: claims that killed it}`` from an earlier ``mutants.json``
    (empty when there is none or it is unreadable)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        return {r["name"]: list(r["claims"]) for r in doc["mutants"] if r["status"] == "killed"}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def discount_false_kills(records: Sequence[dict], control: dict) -> None:
    """Mark kills by tests that also fail in the control run (no mutant).

    Such a test proves nothing about a mutant: each of its ``killed_by``
    entries gets ``fails_without_mutant``, and a mutant killed *only* by such
    tests becomes an ``error`` (inconclusive) instead of ``killed``.
    """
    broken = {k["nodeid"] for k in control["killed_by"]}
    for rec in records:
        for k in rec["killed_by"]:
            k["fails_without_mutant"] = k["nodeid"] in broken
        if rec["status"] == "killed" and all(k["fails_without_mutant"] for k in rec["killed_by"]):
            rec["status"] = "error"
            rec["reason"] = "killed only by tests that fail without a mutant too (see control)"


def bytecode_cache() -> Path | None:
    """Where the runs cache bytecode when ``PYTHONDONTWRITEBYTECODE`` is set.

    Without a cache every run would re-do pytest's assertion rewriting of
    ~100 modules (seconds per run). Uses ``$XDG_CACHE_HOME`` (or
    ``~/.cache``)/torch-conformance/pycache, shared by all sweeps; ``None``
    (Python's normal ``__pycache__``) when bytecode writing is allowed.
    """
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "torch-conformance" / "pycache"


def score(records: Sequence[dict]) -> dict:
    """Kill score of mutant records (control excluded)."""
    out: dict = {"total": len(records)}
    for status in ("killed", "survived", "error"):
        out[status] = sum(r["status"] == status for r in records)
    out["percent"] = round(100.0 * out["killed"] / out["total"], 1) if records else 0.0
    times = [r["time_s"] for r in records if r["status"] == "killed"]
    out["median_time_to_kill_s"] = round(statistics.median(times), 2) if times else None
    out["max_time_to_kill_s"] = round(max(times), 2) if times else None
    out["by_kind"] = {}
    for kind in ("always", "partial"):
        rs = [r for r in records if r["kind"] == kind]
        out["by_kind"][kind] = {
            "total": len(rs),
            "killed": sum(r["status"] == "killed" for r in rs),
        }
    return out


def sweep(
    mutants: Sequence[Mutant],
    out_dir: Path,
    *,
    workers: int = 1,
    profile: str = "ci",
    devices: str = "cpu",
    stop_first: bool = True,
    control: bool = True,
    timeout: float = 1200,
    progress: Callable[[dict], None] | None = None,
    hints: dict[str, Sequence[str]] | None = None,
    shrink: bool = False,
) -> dict:
    """Run every mutant (and the control run) with ``workers`` in parallel.

    ``hints`` maps a mutant name to the claims that killed it before (see
    :func:`previous_kills`); their tests run early. Returns the
    ``mutants.json`` document (not written)."""
    out_dir = Path(out_dir)
    work = out_dir / "mutants-work"
    claim_areas = _claim_areas()
    pycache = bytecode_cache()
    jobs = ([CONTROL] if control else []) + list(mutants)
    started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    records: dict[str, dict] = {}
    lock = threading.Lock()

    def one(m: Mutant) -> dict:
        rec = run_mutant(
            m,
            work / m.name,
            profile=profile,
            devices=devices,
            stop_first=stop_first,
            timeout=timeout,
            claim_areas=claim_areas,
            pycache_dir=pycache,
            first_claims=(hints or {}).get(m.name, ()),
            shrink=shrink,
        )
        with lock:
            records[m.name] = rec
            if progress is not None:
                progress(rec)
        return rec

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(one, m) for m in jobs]
        for f in as_completed(futures):
            f.result()
    ordered = [records[m.name] for m in mutants]
    ctrl = records.get(CONTROL.name)
    if ctrl is not None:
        discount_false_kills(ordered, ctrl)
    import torch

    return {
        "schema": SCHEMA,
        "torch": torch.__version__,
        "profile": profile,
        "devices": devices,
        "stop_at_first_failure": stop_first,
        "kill_hints": bool(hints),
        "shrink": shrink,
        "workers": workers,
        "started": started,
        "wall_s": round(time.perf_counter() - t0, 1),
        "areas": all_areas(),
        "control": None
        if ctrl is None
        else {
            "status": ctrl["status"],
            "passed": ctrl["status"] == "survived",
            "time_s": ctrl["time_s"],
            "tests_run": ctrl["tests_run"],
            "false_kills": ctrl["killed_by"],
            "reason": ctrl["reason"],
        },
        "score": score(ordered),
        "mutants": ordered,
    }


def gate_ok(doc: dict) -> bool:
    """True when every mutant was killed and the control run (if any) passed."""
    ctrl = doc.get("control")
    return doc["score"]["killed"] == doc["score"]["total"] and (ctrl is None or ctrl["passed"])


# ----------------------------------------------------------------- output


def kill_matrix_table(doc: dict):
    """The kill matrix as a rich Table: one row per mutant."""
    from rich.table import Table

    s = doc["score"]
    table = Table(
        title=f"Kill matrix: {s['killed']}/{s['total']} mutants killed ({s['percent']}%)",
        show_lines=False,
    )
    for col in ("mutant", "kind", "result", "time (s)", "killed in", "claims that caught it"):
        table.add_column(col, overflow="fold")
    style = {"killed": "green", "survived": "bold red", "error": "bold yellow"}
    for r in doc["mutants"]:
        kind = r["kind"] + (f" ({r['family']})" if r.get("family") else "")
        killed_in = ", ".join(a for a, v in r["areas"].items() if v == "killed")
        claims = ", ".join(r["claims"]) if r["claims"] else (r["reason"] or "-")
        table.add_row(
            r["name"],
            kind,
            f"[{style[r['status']]}]{r['status']}[/]",
            f"{r['time_s']:.1f}",
            killed_in or "-",
            claims,
        )
    return table


def summary_lines(doc: dict) -> list[str]:
    s = doc["score"]
    lines = [
        f"score: {s['killed']}/{s['total']} killed ({s['percent']}%)"
        f" - always {s['by_kind']['always']['killed']}/{s['by_kind']['always']['total']},"
        f" partial {s['by_kind']['partial']['killed']}/{s['by_kind']['partial']['total']}",
        f"median time to kill: {s['median_time_to_kill_s']} s (max {s['max_time_to_kill_s']} s),"
        f" profile {doc['profile']}, {doc['workers']} worker(s), sweep {doc['wall_s']} s",
    ]
    ctrl = doc.get("control")
    if ctrl is not None:
        if ctrl["passed"]:
            lines.append(
                f"control (no mutant): passed, {ctrl['tests_run']} tests, no false kills ({ctrl['time_s']} s)"
            )
        else:
            culprits = ", ".join(k["nodeid"] for k in ctrl["false_kills"]) or ctrl["reason"]
            lines.append(f"control (no mutant): FAILED - {culprits}")
    survivors = [r["name"] for r in doc["mutants"] if r["status"] == "survived"]
    errors = [r["name"] for r in doc["mutants"] if r["status"] == "error"]
    if survivors:
        lines.append("survivors: " + ", ".join(survivors))
    if errors:
        lines.append("broken mutants (pytest could not run): " + ", ".join(errors))
    return lines


def for_report(doc: dict) -> dict:
    """A compact copy of a mutation document for embedding in ``results.json``."""
    slim = dict(doc)
    slim["mutants"] = [
        {
            **{k: v for k, v in r.items() if k not in ("log_tail", "killed_by")},
            "killed_by": [
                {k: v for k, v in kb.items() if k != "falsifying_example"}
                for kb in r["killed_by"][:3]
            ],
        }
        for r in doc["mutants"]
    ]
    return slim
