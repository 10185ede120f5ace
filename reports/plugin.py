"""The pytest plugin behind the conformance gate.

Registered by the root ``conftest.py`` (and by ``torch-conformance run`` with
``-p reports.plugin``). It

- adds ``--devices``, ``--claims``, ``--results-json`` and ``--expectations``;
- registers the Hypothesis profiles ``ci`` (the default), ``dev`` and ``thorough``;
- parametrizes every test that takes a ``device`` argument over the device
  types (any available one: ``cpu``, ``cuda``, ``xpu``, ``mps``, a renamed
  PrivateUse1 type; a named device that is not available is a usage error,
  the default's CUDA cases are skipped with a reason), and every
  test that takes a ``backend`` argument (the compile tier) over the
  ``torch.compile`` backends (``--backends``: ``eager``, the oracle run
  through the same harness, ``aot_eager`` and ``inductor`` by default; any
  other registered name or a ``module:callable`` on request; inductor cases
  are skipped with a reason when no C++ compiler is found);
- validates ``@pytest.mark.claim`` ids against the registry at collection;
- turns failures into verdicts against ``conformance/expectations.toml``:
  a failure with the recorded signature is an expected deviation (reported
  as xfailed), a different failure is a regression, and a pass of an
  expected deviation is an unexpected pass (reported as failed);
- counts the test cases Hypothesis ran, records the falsifying example and
  the ``@reproduce_failure`` line from the exception notes, and writes
  ``results.json`` (merged correctly under pytest-xdist via ``user_properties``).
"""

from __future__ import annotations

import datetime as _dt
import functools
import inspect
import json
import os
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, is_hypothesis_test, settings

from conformance.expectations import (
    EXPECTATIONS_DIR,
    ExpectationsError,
    load_expectations,
    newest_measured,
)
from conformance.registry import RegistryError, default_registry, load_out_of_scope
from reports.backends import BACKENDS, backend_unavailable, parse_backends
from reports.examples import (
    _RUN,
    ShrinkBudgetSpent,
    _budget_failure,
    _count,
    _flatten,
    _nested_coverage,
    _passthrough,
    _program_clock,
    _run_example,
)

CONFORMANCE_DIR = Path(__file__).resolve().parent.parent / "conformance"
DEFAULT_PROFILE = "ci"

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=100,
    # No explain phase: it re-runs a failure hundreds of times under a line
    # tracer only to annotate the report; a gate wants the shrunk example fast.
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)
settings.register_profile(
    "smoke",
    # A quick look, not a gate: derandomized like ci, 10 examples per test,
    # the first falsifying example as found (no shrinking). The suite's own
    # tests use it where which claims fail matters, not how small the
    # example is or how rare the failing region.
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=10,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)
settings.register_profile(
    "explicit",
    # The explicit examples alone (no generated input): a run under it shows which
    # declared domain values a claim's tests draw by construction, in every profile
    # (tests/test_domain_coverage.py), rather than by a lucky seed.
    deadline=None,
    database=None,
    phases=[Phase.explicit],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=50,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)
settings.register_profile(
    "thorough",
    deadline=None,
    max_examples=2000,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)

_claims_key = pytest.StashKey[tuple]()
_expect_key = pytest.StashKey[list]()


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("conformance", "torch semantics conformance")
    g.addoption(
        "--devices",
        default=None,
        help="comma-separated device types to run on: cpu and any available accelerator "
        "(cuda, xpu, mps, a PrivateUse1 type such as openreg); default: cpu, cuda (cases "
        "skipped with a reason when CUDA is unavailable) and the torch.accelerator of another "
        "type when there is one",
    )
    g.addoption(
        "--backends",
        default=None,
        help="comma-separated torch.compile backends for the compile tier: any name "
        "registered with Dynamo (torch.compiler.list_backends(exclude_tags=())) or "
        "module:callable, a compiler function imported from sys.path (default: eager, "
        "aot_eager, inductor; inductor cases are skipped with a reason when no C++ compiler "
        "is found)",
    )
    g.addoption(
        "--claims", default=None, help="run only the tests of these claim ids (comma-separated)"
    )
    g.addoption(
        "--results-json", default=None, help="write per-test conformance results to this JSON file"
    )
    g.addoption(
        "--shard",
        default=None,
        metavar="I/N",
        help="run only part I of N of the selected test cases (balanced by recorded durations; "
        "join the N results with torch-conformance merge)",
    )
    g.addoption(
        "--expectations",
        default=None,
        help="known deviations: a directory of <area>.toml files or one TOML file (default: "
        "conformance/expectations/ shipped with the suite)",
    )


@functools.cache
def _device_unavailable(device_type: str) -> str | None:
    """Why the tests cannot run on ``device_type`` here, or ``None`` (once
    per process: :func:`conformance.capabilities.device_unavailable`)."""
    from conformance.capabilities import device_unavailable

    return device_unavailable(device_type)


def _device_allowed(device_type: str, allowed) -> bool:
    from conformance.capabilities import device_allowed

    return device_allowed(device_type, allowed)


def _unavailable_reason(device_type: str, why: str) -> str:
    """The skip reason of a device that is not there (CUDA's as before)."""
    if device_type == "cuda":
        return "CUDA not available on this machine"
    return f"{device_type} not available on this machine: {why}"


def pytest_configure(config: pytest.Config) -> None:
    _LAST_CONFIG["config"] = config
    # Registered before pytest's unraisableexception plugin adds its own
    # cleanup (this plugin is registered after pytest's, so its configure
    # runs first), and cleanups run last-in first-out: the objects
    # pytest_collection_finish froze are handed back only after that
    # cleanup's five full collections (~0.6 s per run when they walk torch).
    import gc

    config.add_cleanup(gc.unfreeze)
    config.addinivalue_line("markers", "claim(*ids): registered claim ids this test checks")
    config.addinivalue_line(
        "markers",
        "backends(*names, others=False): the default compile backends a compile-tier test "
        "runs on (default: all), and whether any other --backends run it too",
    )
    config.addinivalue_line(
        "markers",
        "observes(*names): instruments (conformance/instruments.toml) the test observes "
        "its claims through",
    )
    try:
        registry = default_registry()
        exp_path = config.getoption("expectations") or EXPECTATIONS_DIR
        if config.getoption("expectations") and not Path(exp_path).exists():
            raise ExpectationsError(f"{exp_path}: no such expectations file")
        deviations = load_expectations(exp_path, registry)
        from conformance.instruments import InstrumentsError, default_instruments

        instruments = default_instruments()
        from conformance.capabilities import numpy_problem

        problem = numpy_problem()
        if problem:
            raise pytest.UsageError(problem)
    except (RegistryError, ExpectationsError, InstrumentsError) as e:
        raise pytest.UsageError(str(e)) from None
    if not _is_worker(config):
        _fresh_compile_caches(config)
    config._conformance = {  # type: ignore[attr-defined]
        "instruments": instruments,
        "registry": registry,
        "deviations": deviations,
        "expectations_path": str(exp_path),
        "results": [],
        "started": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    raw = config.getoption("devices")
    from conformance import capabilities as cap

    try:
        devices = cap.parse_devices(raw)
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    if raw is not None:  # named devices must be there; the default's CUDA is skipped
        for d in devices:
            why = cap.device_unavailable(d)
            if why:
                raise pytest.UsageError(f"--devices {d}: {why}")
    config._conformance["devices"] = devices  # type: ignore[attr-defined]
    raw_b = config.getoption("backends")
    try:
        backends = parse_backends(raw_b)
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    if raw_b is not None:
        for b in backends:
            why = backend_unavailable(b)
            if why:
                raise pytest.UsageError(f"--backends {b}: {why}")
    config._conformance["backends"] = list(dict.fromkeys(backends))  # type: ignore[attr-defined]
    shard = config.getoption("shard")
    if shard:
        from reports.shards import parse_shard

        try:
            config._conformance["shard"] = parse_shard(shard)  # type: ignore[attr-defined]
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
    claims = config.getoption("claims")
    if claims:
        wanted = [c.strip() for c in claims.split(",") if c.strip()]
        unknown = [c for c in wanted if c not in registry]
        if unknown:
            raise pytest.UsageError(f"--claims: unknown claim id(s) {', '.join(unknown)}")
        config._conformance["selected"] = set(wanted)  # type: ignore[attr-defined]
    if config.getoption("hypothesis_profile", None) is None:
        settings.load_profile(DEFAULT_PROFILE)
    config._conformance["profile"] = config.getoption("hypothesis_profile", None) or DEFAULT_PROFILE  # type: ignore[attr-defined]


#: Where torch.compile keeps what it compiled across processes (inductor's FX
#: graph and AOTAutograd caches, Triton kernels).
_COMPILE_CACHE_ENV = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")


def _fresh_compile_caches(config: pytest.Config) -> None:
    """Point the compile caches of this run (and its xdist workers, which
    inherit the environment) at a new empty directory, removed at the end,
    so no verdict depends on what an earlier run left on disk. A cache
    directory the user set is left alone."""
    import shutil
    import tempfile

    if all(os.environ.get(k) for k in _COMPILE_CACHE_ENV):
        return
    root = tempfile.mkdtemp(prefix="torch-conformance-compile-cache-")
    for k in _COMPILE_CACHE_ENV:
        if not os.environ.get(k):
            os.environ[k] = os.path.join(root, k.split("_")[0].lower())
            config.add_cleanup(functools.partial(os.environ.pop, k, None))
    config.add_cleanup(functools.partial(shutil.rmtree, root, ignore_errors=True))


def _state(config: pytest.Config) -> dict:
    return config._conformance  # type: ignore[attr-defined]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if not _in_conformance(metafunc.definition):
        return
    st = _state(metafunc.config)
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", _backend_params(metafunc, st))
    if "device" not in metafunc.fixturenames:
        return
    registry = st["registry"]
    marker_claims = [c for m in metafunc.definition.iter_markers("claim") for c in m.args]
    only: set[str] = set()
    for cid in marker_claims:
        if cid in registry and registry[cid].devices:
            only.update(registry[cid].devices)
    params = []
    for dev in st["devices"]:
        marks = []
        if not _device_allowed(dev, only):
            marks.append(pytest.mark.skip(reason=f"claim applies to {'/'.join(sorted(only))} only"))
        else:
            why = _device_unavailable(dev)
            if why:
                marks.append(pytest.mark.skip(reason=_unavailable_reason(dev, why)))
        params.append(pytest.param(dev, marks=marks, id=dev))
    metafunc.parametrize("device", params)


def _backend_params(metafunc: pytest.Metafunc, st: dict) -> list:
    """The ``backend`` parameters of a compile-tier test.

    ``@pytest.mark.backends(*names)`` limits a test to those of the default
    backends (:data:`BACKENDS`); any other backend runs it only when the
    marker says ``others=True`` (the generated programs at the full example
    count). A test whose claims are all characterizations pins what torch
    does on the default backends: on any other backend it is skipped with
    that reason (its claims say nothing of that backend). The test id of a
    backend is :func:`conformance.compile_oracle.backend_id`."""
    from conformance.compile_oracle import backend_id

    markers = list(metafunc.definition.iter_markers("backends"))
    only_b = {b for m in markers for b in m.args}
    others = not markers or any(m.kwargs.get("others") for m in markers)
    registry = st["registry"]
    claims = [c for m in metafunc.definition.iter_markers("claim") for c in m.args]
    pins = bool(claims) and all(
        c in registry and registry[c].kind == "characterization" for c in claims
    )
    params = []
    for b in st["backends"]:
        if b in BACKENDS:
            if only_b and b not in only_b:
                continue
        elif not others:
            continue
        why = backend_unavailable(b)
        if why is None and pins and b not in BACKENDS:
            why = (
                f"characterization claim: pins what torch does on {', '.join(BACKENDS)}; "
                f"it says nothing of backend {b}"
            )
        marks = [pytest.mark.skip(reason=why)] if why else []
        params.append(pytest.param(b, marks=marks, id=backend_id(b)))
    return params


def _item_claims(item: pytest.Item) -> tuple[str, ...]:
    return tuple(c for m in item.iter_markers("claim") for c in m.args)


def _item_device(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "device" in callspec.params:
        return callspec.params["device"]
    return "any"


def _item_backend(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "backend" in callspec.params:
        return callspec.params["backend"]
    return None


def _in_conformance(item: pytest.Item) -> bool:
    try:
        return Path(str(item.path)).resolve().is_relative_to(CONFORMANCE_DIR)
    except (OSError, ValueError):
        return False


def _torch_version() -> str:
    import torch

    return torch.__version__


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move everything alive after collection (torch, NumPy, Hypothesis, the
    suite's modules, the collected items) into the garbage collector's
    permanent generation (``gc.freeze()``): the examples' own objects are
    collected as before, but a full collection no longer walks torch's
    hundreds of thousands of module-level objects, which Hypothesis' churn
    of small objects triggers again and again (measured: ~20% of a mutant
    run's CPU time). Nothing observable changes: garbage is collected first,
    so no frozen object is garbage, and the tests' objects are created after
    the freeze. A cleanup registered by :func:`pytest_configure` unfreezes
    them again.

    First every module of the suite is loaded (:func:`load_suite_modules`),
    so Hypothesis draws from the same pool of constants in every process
    from the first example on."""
    import gc

    load_suite_modules()
    gc.collect()
    gc.freeze()


#: Packages of the suite whose modules Hypothesis reads constants from.
_SUITE_PACKAGES = ("strategies", "conformance", "reports")


def load_suite_modules() -> None:
    """Import every module of the suite that Hypothesis takes constants from,
    and hide the mutant catalogue from it.

    Hypothesis (6.131 and later) draws about one number in twenty from the
    literals of the local modules loaded when an example starts (test
    modules excepted), re-reading ``sys.modules`` as it grows. The plugin
    imports some modules only when a test ends (the verdict logic) or first
    fails (the snippet writer), so without this the draws of a test would
    depend on what ran before it in its process: on xdist's scheduling, on
    whether the test runs alone. Loaded here, the pool is the same in every
    process of every run: the non-test modules of :data:`_SUITE_PACKAGES`
    but the mutant catalogue (:func:`conformance.mutants.hide_from_hypothesis`:
    a mutant run imports it, a gate run must draw the same) and the probes
    (scripts). A module that fails to import on this torch is left out, the
    same way in every run of that torch."""
    import importlib

    root = CONFORMANCE_DIR.parent
    for package in _SUITE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            if (
                path.stem.startswith("test_")
                or parts[:2] in (("conformance", "mutants"), ("conformance", "probes"))
                or any(not p.isidentifier() for p in parts)
            ):
                continue
            name = ".".join(parts)
            if name not in sys.modules:
                try:
                    importlib.import_module(name)
                except Exception:  # noqa: S112 - e.g. a dtype this torch lacks
                    continue
    if "conformance.mutants" in sys.modules:
        from conformance.mutants import hide_from_hypothesis

        hide_from_hypothesis()


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list
) -> None:
    st = _state(config)
    registry = st["registry"]
    problems = []
    for item in items:
        claims = _item_claims(item)
        if _in_conformance(item) and not claims:
            problems.append(f"{item.nodeid}: conformance test carries no @pytest.mark.claim")
        for cid in claims:
            if cid not in registry:
                problems.append(f"{item.nodeid}: unknown claim id {cid!r}")
        item.stash[_claims_key] = claims
        for m in item.iter_markers("observes"):
            unknown = [o for o in m.args if o not in st["instruments"]]
            if unknown:
                problems.append(f"{item.nodeid}: unknown instrument(s) {unknown}")
    if problems:
        raise pytest.UsageError(
            problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
        )
    selected = st.get("selected")
    if selected:
        keep, drop = [], []
        for item in items:
            (keep if set(item.stash[_claims_key]) & selected else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    if st.get("shard"):
        from reports.shards import assign, recorded_durations

        index, total = st["shard"]
        where = assign([i.nodeid for i in items], total, recorded_durations(_torch_version()))
        keep = [item for item, k in zip(items, where, strict=True) if k == index]
        drop = [item for item, k in zip(items, where, strict=True) if k != index]
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    version = _torch_version()
    newest = newest_measured(st["deviations"])
    # An entry this release's baseline does not show explains an exactly
    # matching failure ("not measured on this release") but demands nothing.
    marked = [replace(d, unmeasured=d.unmeasured_on(version)) for d in st["deviations"]]
    wrapped: set[int] = set()
    for item in items:
        claims = item.stash[_claims_key]
        name = getattr(item, "originalname", item.name)
        device = _item_device(item)
        hits = [
            d
            for d in marked
            if d.claim in claims
            and d.matches_test(name)
            and d.applies(
                torch_version=version, device=device, backend=_item_backend(item), newest=newest
            )
        ]
        item.stash[_expect_key] = hits
        fn = getattr(item, "obj", None)
        if fn is None or not is_hypothesis_test(fn) or id(fn) in wrapped:
            continue
        wrapped.add(id(fn))
        inner = fn.hypothesis.inner_test

        @functools.wraps(inner)
        def per_example(*args, __inner=inner, **kwargs):
            return _run_example(__inner, args, kwargs)

        fn.hypothesis.inner_test = per_example


def pytest_runtest_setup(item: pytest.Item) -> None:
    _count["n"] = 0
    _count["body_s"] = 0.0


_ledger_key = pytest.StashKey[dict]()


def _per_claim_deviations(
    report, record: dict, whole: list, failures: dict, muted: dict | None = None
) -> dict:
    """The record of a test of several claims that has whole-test deviations,
    split per claim by :func:`conformance.verdicts.per_claim_deviations`,
    whose outcome, text and section go on the report; ``failures`` takes
    the later violations that differ from their entry."""
    from conformance.verdicts import per_claim_deviations

    split = per_claim_deviations(record, whole, failures, muted)
    failures.update(split.failures)
    if split.section is not None:
        report.sections.append(("conformance", split.section))
    if split.report_outcome is not None:
        report.outcome = split.report_outcome
    if split.wasxfail is not None:
        report.wasxfail = split.wasxfail
    if split.clear_longrepr:
        report.longrepr = None
    return split.record


def _cited_claims(e: BaseException, claims: tuple[str, ...]) -> list[str]:
    """The claims a failure blames: a :class:`ClaimViolation`'s claim; the
    ``[claim-id]`` a message starts with (the state machine's failures: the
    claim of the check that failed, never the other claims its step cites,
    which the message lists for the reader); else the claim ids the message
    names."""
    from conformance.evidence import ClaimViolation

    out: list[str] = []
    for x in _flatten(e):
        if isinstance(x, ClaimViolation) and x.claim in claims:
            out.append(x.claim)
            continue
        text = str(x)
        lead = re.match(r"\[([\w.-]+)\] ", text)
        if lead and lead.group(1) in claims:
            out.append(lead.group(1))
            continue
        out.extend(c for c in claims if re.search(rf"(?<![\w.-]){re.escape(c)}(?![\w-])", text))
    return list(dict.fromkeys(out))


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    """Run a conformance test under an evidence ledger.

    A test that checks several claims is re-run after a failure with the
    failed claims muted, until it passes or every claim failed, so one
    claim's failure never hides another's verdict. Each failure is kept for
    the claims it names; the first one is raised at the end.
    """
    claims = pyfuncitem.stash.get(_claims_key, ())
    if not claims or not _in_conformance(pyfuncitem):
        return None
    from conformance import evidence

    fn = pyfuncitem.obj
    names = inspect.signature(fn).parameters
    kwargs = {n: pyfuncitem.funcargs[n] for n in names if n in pyfuncitem.funcargs}
    hyp = is_hypothesis_test(fn)
    _RUN["hits"] = pyfuncitem.stash.get(_expect_key, [])
    _RUN["claims"] = tuple(claims)
    failures: dict[str, dict] = {}
    first: BaseException | None = None
    failing = None
    _RUN["failing"] = None
    selected = _state(pyfuncitem.config).get("selected")
    selected = selected & set(claims) if selected else set()
    passes = 0
    with evidence.ledger(claims) as led:
        led.program_clock = _program_clock
        registry = _state(pyfuncitem.config)["registry"]
        led.domains = {
            c: registry.claims[c].domain
            for c in claims
            if c in registry.claims and registry.claims[c].domain
        }
        try:
            while True:
                passes += 1
                led.reset_counts()
                _count["n"] = 0
                _RUN["failed_at"] = _RUN["raised"] = None
                try:
                    try:
                        if hyp:
                            fn(**kwargs)
                        else:
                            _run_example(fn, (), kwargs)
                    except ShrinkBudgetSpent:
                        if _RUN.get("failing") is None:  # a program of the test's own engine
                            _RUN["failing"] = (fn, kwargs, [], _RUN["raised"][0])
                        raise _budget_failure() from None
                    except BaseExceptionGroup as group:
                        # Several distinct failures, and the budget ran out
                        # while Hypothesis replayed them (a slow example, e.g.
                        # an inductor compile): report the last one raised.
                        if not any(isinstance(x, ShrinkBudgetSpent) for x in _flatten(group)):
                            raise
                        if _RUN.get("raised") is None:
                            raise
                        raise _budget_failure() from None
                    break
                except BaseException as e:
                    if _passthrough(e) and not isinstance(e, Exception):
                        raise
                    cited = _cited_claims(e, claims) if len(claims) > 1 else list(claims)
                    new = [c for c in cited if c not in led.muted]
                    info = _failure_info_from(e)
                    if not new and len(claims) > 1 and first is not None:
                        # raised in a pass where the claims it names were
                        # already muted (a check that cannot be muted): a
                        # later violation of each, compared with its entry
                        for c in cited or sorted(led.muted):
                            led.note_violation(c, info["exception"], info["message"])
                    for c in new or [c for c in claims if c not in led.muted]:
                        failures.setdefault(c, info)
                    if first is None:
                        first = e
                        failing = _RUN.get("failing")
                    if not new or len(claims) == 1:
                        break  # nothing attributable left to mute: stop here
                    led.muted.update(new)
                    # a claim a whole-test entry may explain gets one more
                    # pass muted: each later violation must match the entry
                    recheck = any(d.whole_test and d.claim in new for d in _RUN["hits"])
                    if not recheck and (
                        led.muted >= set(claims) or (selected and led.muted >= selected)
                    ):
                        # every claim of the test, or every one this run was
                        # asked about (--claims), has its failure already
                        break
        finally:
            _RUN["hits"] = []
            _RUN["claims"] = ()
            snippet = _snippet(pyfuncitem, claims, failing) if first is not None else {}
            pyfuncitem.stash[_ledger_key] = {
                **snippet,
                "claim_examples": dict(led.claim_examples),
                "tallies": dict(led.tallies),
                "muted_counts": dict(led.muted_counts),
                "muted_signatures": {
                    c: [[exc, msg, n] for (exc, msg), n in sigs.most_common()]
                    for c, sigs in led.muted_signatures.items()
                },
                "not_applicable": dict(led.not_applicable),
                "region": {k: dict(v) for k, v in led.region.items()},
                "whole_test_split": _whole_test_split(led.whole_examples),
                "coverage": {c: _nested_coverage(counts) for c, counts in led.coverage.items()},
                "na_coverage": {
                    c: _nested_coverage(counts) for c, counts in led.na_coverage.items()
                },
                "failures": failures,
                "passes": passes,
                "examples": _count["n"],
            }
    if first is not None:
        raise first
    return True


def _whole_test_split(examples: list) -> dict | None:
    """Where a test with a whole-test entry deviated: the examples on each
    side and the regions that would separate them (``None`` without such
    examples; ``regions`` is empty when no single feature separates them,
    and absent when every example deviated: torch deviates everywhere)."""
    if not examples:
        return None
    from conformance.expectations import propose_region

    dev = [f for d, f in examples if d]
    held = [f for d, f in examples if not d]
    out: dict = {"deviated": len(dev), "held": len(held)}
    if dev and held:
        out["regions"] = propose_region(dev, held)
    return out


def _snippet(item: pytest.Item, claims: tuple[str, ...], failing) -> dict:
    """``{"snippet": source}`` for the test's falsifying example, or
    ``{"snippet_unavailable": reason}`` (see :mod:`reports.snippet`)."""
    if failing is None:
        return {"snippet_unavailable": "no failing example was recorded"}
    from reports.snippet import SnippetUnavailable, make_snippet

    fn, kwargs, draws, error = failing
    try:
        return {"snippet": make_snippet(fn, kwargs, draws, nodeid=item.nodeid, claims=claims,
                                        error=error)}  # fmt: skip
    except SnippetUnavailable as e:
        return {"snippet_unavailable": str(e)}
    except Exception as e:  # a defect of the snippet writer must not hide the verdict
        return {"snippet_unavailable": f"the snippet writer failed: {type(e).__name__}: {e}"}


def _failure_info_from(e: BaseException) -> dict:
    info = _failure_info(pytest.ExceptionInfo.from_exception(e))
    info.pop("_excs", None)
    return info


def _failure_info(excinfo: pytest.ExceptionInfo) -> dict:
    excs = _flatten(excinfo.value)
    first = excs[0]
    message = str(first)
    notes: list[str] = []
    for e in excs:
        notes.extend(getattr(e, "__notes__", []) or [])
    falsifying = [n for n in notes if n.startswith("Falsifying")]
    reproduce = [n for n in notes if "@reproduce_failure" in n]
    other = [n for n in notes if n not in falsifying and n not in reproduce]
    return {
        "exception": type(first).__name__,
        "message": message[:4000],
        "signature": f"{type(first).__name__}: {message.splitlines()[0] if message else ''}"[:500],
        "falsifying_example": "\n".join(falsifying) or None,
        "reproduce": "\n".join(reproduce) or None,
        "notes": "\n".join(other)[:4000] or None,
        "all_signatures": [
            f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300] for e in excs
        ],
        "_excs": [(type(e).__name__, str(e)) for e in excs],
    }


def _decide(item: pytest.Item, call: pytest.CallInfo, report, n_claims: int):
    """The test's :class:`~conformance.verdicts.TestVerdict` (``None``: no
    verdict in this phase) and its failure record (``None`` without one),
    from the report, the test's expectation entries and its ledger."""
    from conformance.verdicts import Failure, decide_test

    if report.skipped and (
        call.when == "setup"
        or (call.excinfo is not None and call.excinfo.errisinstance(pytest.skip.Exception))
    ):
        outcome = "skipped"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    elif call.when not in ("setup", "call"):
        return None, None
    elif report.passed:
        outcome, reason = "passed", None
    elif report.failed and call.excinfo is not None:
        outcome, reason = "failed", None
    else:
        return None, None
    info = _failure_info(call.excinfo) if outcome == "failed" else None
    pairs = info.pop("_excs") if info is not None else []
    led = item.stash.get(_ledger_key, {}) if call.when == "call" else {}
    verdict = decide_test(
        phase=call.when,
        outcome=outcome,
        skip_reason=reason,
        failure=None if info is None else Failure(tuple(pairs), info["signature"]),
        hits=item.stash.get(_expect_key, []),
        region_stats=led.get("region", {}),
        claim_examples=led.get("claim_examples", {}) if led else None,
        examples=led.get("examples", 0),
        not_applicable=led.get("not_applicable", {}),
        claims=n_claims,
        torch_version=_torch_version() if call.when == "call" else "",
        whole_test_split=led.get("whole_test_split"),
    )
    return verdict, info


def _apply_verdict(item: pytest.Item, report, verdict) -> None:
    """Put a test's verdict on its pytest report: outcome, the expected
    deviation's text, the skip reason or failure text, a section."""
    if verdict.report_outcome is not None:
        report.outcome = verdict.report_outcome
    if verdict.wasxfail is not None:
        report.wasxfail = verdict.wasxfail
    if verdict.longrepr is not None:
        report.longrepr = (
            (str(item.path), None, verdict.longrepr)
            if verdict.report_outcome == "skipped"
            else verdict.longrepr
        )
    if verdict.section is not None:
        report.sections.append(("conformance", verdict.section))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    claims = item.stash.get(_claims_key, ())
    if not claims:
        return report
    verdict, failure = _decide(item, call, report, len(claims))
    if verdict is None:
        return report
    _apply_verdict(item, report, verdict)
    record = verdict.record(failure)
    if "failure" in record:
        record["failure"].pop("_excs", None)
        led_ = item.stash.get(_ledger_key, {}) if call.when == "call" else {}
        if record["verdict"] in ("regression", "unexpected-pass"):
            for key in ("snippet", "snippet_unavailable"):
                if led_.get(key):
                    record["failure"][key] = led_[key]
    led = item.stash.get(_ledger_key, {}) if call.when == "call" else {}
    if led and len(claims) > 1 and record["verdict"] != "suite-error":
        whole = [d for d in item.stash.get(_expect_key, []) if d.whole_test]
        if whole:
            record = _per_claim_deviations(
                report, record, whole, led.get("failures", {}), led.get("muted_signatures")
            )
    if led:
        failures = led.get("failures", {})
        if len(claims) > 1 and failures and record["verdict"] != "held":
            # Each failure is attributed to the claims it names; the test was
            # re-run with those muted, so the others have verdicts of their own.
            record["failed_claims"] = [c for c in claims if c in failures]
            record["claim_failures"] = {c: failures[c] for c in record["failed_claims"]}
        record["claim_examples"] = led.get("claim_examples", {})
        if led.get("coverage"):
            record["claim_coverage"] = led["coverage"]
        if led.get("na_coverage"):
            record["claim_na_coverage"] = led["na_coverage"]
        if call.when == "call":
            checked = max(record["claim_examples"].values(), default=0)
            na = sum(led.get("not_applicable", {}).values())
            record["example_counts"] = {
                "checked": checked,
                "not_applicable": na,
                "rejected": max(0, led.get("examples", 0) - checked - na),
            }
        if led.get("tallies"):
            record["tallies"] = led["tallies"]
        if led.get("muted_counts"):
            record["muted_violations"] = led["muted_counts"]
        if led.get("not_applicable"):
            record["not_applicable"] = led["not_applicable"]
        record["passes"] = led.get("passes", 1)
    record.update(
        {
            "nodeid": item.nodeid,
            "name": getattr(item, "originalname", item.name),
            "claims": list(claims),
            "observes": sorted({o for m in item.iter_markers("observes") for o in m.args}),
            "device": _item_device(item),
            **({"backend": _item_backend(item)} if _item_backend(item) else {}),
            "duration_s": round(getattr(report, "duration", 0.0), 4),
            # inside the examples' bodies (building inputs, the torch calls,
            # the checks); the rest of duration_s is Hypothesis generating
            # and shrinking, and the plugin's own bookkeeping
            "body_s": round(_count["body_s"], 4) if call.when == "call" else 0.0,
            "examples": (led.get("examples", _count["n"]) if led else _count["n"])
            if call.when == "call"
            else 0,
        }
    )
    report.user_properties.append(("conformance", json.dumps(record, default=str)))
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    cfg = _CONFIG.get("config")
    if cfg is None or _is_worker(cfg):
        return
    for key, value in report.user_properties:
        if key == "conformance":
            _state(cfg)["results"].append(json.loads(value))


_CONFIG: dict = {}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _CONFIG["config"] = session.config
    session.config._conformance["t0"] = time.time()  # type: ignore[attr-defined]


def environment(config: pytest.Config) -> dict:
    """The run's environment: versions, profile, devices, suite commit."""
    import platform

    import hypothesis
    import numpy
    import torch

    from reports.environment import suite_info

    st = _state(config)
    return {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "cuda_device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "python": platform.python_version(),
        "hypothesis": hypothesis.__version__,
        "numpy": numpy.__version__,
        "pytest": pytest.__version__,
        "platform": platform.platform(),
        "profile": st["profile"],
        "devices": st["devices"],
        "backends": st["backends"],
        "claims_selected": sorted(st.get("selected", [])) or None,
        **(
            {"shard": {"index": st["shard"][0], "total": st["shard"][1]}} if st.get("shard") else {}
        ),
        "expectations_file": st["expectations_path"],
        "started": st["started"],
        "finished": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "wall_s": round(time.time() - st.get("t0", time.time()), 2),
        "suite": suite_info(),
    }


def _stale(deviations: list, results: list[dict]) -> list:
    """Entries that match no test that ran (computed from the results, so it
    is right under pytest-xdist too, where the controller collects nothing)."""
    return [
        d
        for d in deviations
        if not any(d.claim in r["claims"] and d.matches_test(r["name"]) for r in results)
    ]


def build_results(config: pytest.Config) -> dict:
    """The ``results.json`` document for this session."""
    from reports.results import SCHEMA_VERSION

    st = _state(config)
    registry = st["registry"]
    env = environment(config)
    suite = env.pop("suite")
    selected = st.get("selected")
    claims = {
        cid: c.to_dict() for cid, c in registry.claims.items() if not selected or cid in selected
    }
    results = sorted(st["results"], key=lambda r: r["nodeid"])
    stale = [
        d.to_dict()
        for d in _stale(st["deviations"], results)
        if not selected or d.claim in selected
    ]
    from conformance.tolerances import RULES
    from reports.docdrift import check_docs

    doc = {
        "schema_version": SCHEMA_VERSION,
        "suite": suite,
        "environment": env,
        "areas": dict(registry.areas),
        "claims": claims,
        "tests": results,
        "expectations": {"stale": stale, "all": [d.to_dict() for d in st["deviations"]]},
        "measurements": [],
        "doc_drift": check_docs(claims),
        "out_of_scope": load_out_of_scope(),
        "instruments": {name: p.to_dict() for name, p in st["instruments"].items()},
        "tolerances": {"graphs.gradient-values": dict(RULES)},
    }
    from reports.causes import cause_groups

    doc["causes"] = cause_groups(doc)
    return doc


def pytest_collectreport(report) -> None:
    """A module that fails to import (e.g. it uses a dtype this torch lacks)
    would otherwise leave its claims silently "not run": record it as a
    suite error, which fails the gate. (xdist forwards failed collection
    reports to the controller.)"""
    if not report.failed:
        return
    config = _LAST_CONFIG.get("config")
    if config is None or _is_worker(config) or not hasattr(config, "_conformance"):
        return
    text = str(report.longrepr)
    last = next((ln for ln in reversed(text.splitlines()) if ln.startswith("E ")), text[-300:])
    _state(config)["results"].append(
        {
            "verdict": "suite-error",
            "outcome": "error",
            "nodeid": report.nodeid,
            "name": report.nodeid.rsplit("/", 1)[-1],
            "claims": [],
            "device": "any",
            "failure": {
                "exception": "CollectionError",
                "message": f"collecting {report.nodeid} failed: {last.removeprefix('E ').strip()}",
                "signature": f"CollectionError: {last.removeprefix('E ').strip()}",
                "falsifying_example": None,
                "all_signatures": [],
            },
        }
    )


_LAST_CONFIG: dict = {}


def _domain_gaps(config: pytest.Config) -> list[str]:
    """One line per (claim, column) whose tests held without an example that
    drew some value of the claim's declared domain (issue 29)."""
    from reports.results import claim_verdicts

    st = _state(config)
    if not st["results"]:
        return []
    shard = st.get("shard")
    # a co-claim outside --claims is not judged (results.json leaves it out too)
    selected = st.get("selected")
    mini = {
        # a shard's document leaves the domain to the merged run (claim_verdicts)
        "environment": {
            "devices": st["devices"],
            **({"shard": {"index": shard[0], "total": shard[1]}} if shard else {}),
        },
        "claims": {
            cid: c.to_dict()
            for cid, c in st["registry"].claims.items()
            if c.domain and (not selected or cid in selected)
        },
        "tests": st["results"],
    }
    return [
        f"claim {cid} ({col}): domain value {m} never checked"
        for cid, cells in claim_verdicts(mini).items()
        for col, cell in cells.items()
        for m in cell.get("domain_missing", [])
    ]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if _is_worker(config) or not hasattr(config, "_conformance"):
        return
    gaps = _domain_gaps(config)
    _state(config)["domain_gaps"] = gaps
    if gaps and session.exitstatus == 0:
        # "held" covers the declared domain: a value no checked example drew
        # is a defect of the suite, and fails the run like a suite error
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    out = config.getoption("results_json")
    if not out:
        return
    from reports.results import write_json_atomic

    write_json_atomic(out, build_results(config))


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _is_worker(config) or not hasattr(config, "_conformance"):
        return
    st = _state(config)
    results = st["results"]
    if not results:
        return
    counts: dict[str, int] = {}
    for r in results:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    stale = _stale(st["deviations"], results)
    terminalreporter.section("conformance verdicts")
    terminalreporter.write_line(
        "  ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        + f"  | stale expectations: {len(stale)}"
    )
    for r in results:
        if r["verdict"] in ("regression", "unexpected-pass"):
            terminalreporter.write_line(
                f"{r['verdict'].upper()}: {r['nodeid']} [{', '.join(r['claims'])}]"
            )
    for line in st.get("domain_gaps", []):
        terminalreporter.write_line(f"SUITE ERROR: {line}")
    from reports.causes import cause_lines

    mini = {
        "environment": {"devices": st["devices"]},
        "claims": {cid: c.to_dict() for cid, c in st["registry"].claims.items()},
        "tests": results,
        "instruments": {name: p.to_dict() for name, p in st["instruments"].items()},
    }
    for line in cause_lines(mini):
        terminalreporter.write_line(line)
    if os.environ.get("CONFORMANCE_SHOW_STALE"):
        for d in stale:
            terminalreporter.write_line(f"stale expectation: {d.key}")


def _torch_global_state() -> dict:
    import torch

    return {
        "grad_enabled": torch.is_grad_enabled(),
        "inference_mode": torch.is_inference_mode_enabled(),
        "default_dtype": torch.get_default_dtype(),
        "anomaly_enabled": torch.is_anomaly_enabled(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
    }


@pytest.fixture(autouse=True)
def _torch_global_state_guard():
    """Fail any test that leaves global torch state changed (grad mode,
    inference mode, default dtype, anomaly mode, deterministic algorithms),
    after restoring what can be restored: a leak would silently change the
    inputs and verdicts of every later test in the process."""
    before = _torch_global_state()
    yield
    from conformance.capabilities import restore_subnormals

    if restore_subnormals():
        # torch itself did it (old inductor kernels built with -ffast-math set
        # flush-to-zero when loaded): the claim compile.fp-environment-untouched
        # judges that; here it is only undone so later tests keep subnormals.
        import warnings

        warnings.warn("flush-denormal mode was on after this test; turned off", stacklevel=1)
    after = _torch_global_state()
    if after == before:
        return
    import torch

    torch.set_grad_enabled(before["grad_enabled"])
    torch.set_default_dtype(before["default_dtype"])
    torch.autograd.set_detect_anomaly(before["anomaly_enabled"])
    torch.use_deterministic_algorithms(before["deterministic_algorithms"])
    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    pytest.fail(f"the test leaked global torch state (before, after): {changed}", pytrace=False)
