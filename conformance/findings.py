"""The findings registry: every torch bug the suite has found, with its reproducer.

A *finding* is a behaviour of real torch that contradicts the documentation,
eager semantics (under ``torch.compile``) or an earlier release, found by the
suite's claims or probes. ``conformance/findings.toml`` holds one record per
finding (see :class:`Finding`); its torch-only reproducer lives in
``conformance/probes/findings/``. A reproducer follows one protocol, read by
:func:`run_reproducer`: its last line of standard output is

``REPRODUCES: ...`` (exit status 1)
    the installed torch shows the finding;
``FIXED: ...`` (exit status 0)
    the installed torch behaves as documented / as eager does;
``NOT APPLICABLE: ...`` (exit status 3)
    the API, dtype, backend or device it needs is missing here.

A finding's title states the departure (the bug), and ``REPRODUCES`` means
the installed torch shows exactly what the title says - also for a change
between releases, whose title names the side that departs from the
documentation or from eager (so ``FIXED`` on a release on the other side).

Anything else (another exit status, a missing or mismatched last line, a
timeout, a crash the reproducer did not contain) is ``error``: a defect of
the reproducer or the run, never a verdict on torch. Crash findings run the
crashing statements in a child process of their own, so a segfault is a
``REPRODUCES`` line, not an error.

This module imports no torch: the reproducers run in fresh interpreters.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent
FINDINGS_FILE = ROOT / "findings.toml"
REPRODUCERS_DIR = ROOT / "probes" / "findings"

#: What kind of departure a finding is, most severe first within each severity.
KINDS: dict[str, str] = {
    "silent wrong value": "high",
    "wrong gradient": "high",
    "crash": "high",
    "silent aliasing": "medium",
    "silent autograd metadata": "medium",
    "error where eager or the docs say it works": "medium",
    "behaviour change between releases": "medium",
    "error-type change": "low",
    "doc drift": "low",
    "device divergence": "low",
}
SEVERITIES = ("high", "medium", "low")
#: Results of a reproducer, and the results a record may list in ``measured``.
RESULTS = ("reproduces", "fixed", "not applicable")
_STATUS = {"REPRODUCES": ("reproduces", 1), "FIXED": ("fixed", 0),
           "NOT APPLICABLE": ("not applicable", 3)}  # fmt: skip
_FIELDS = {"id", "title", "kind", "claims", "reproducer", "expected", "observed", "backends",
           "device", "measured", "releases_note", "upstream"}  # fmt: skip


class FindingsError(ValueError):
    """``findings.toml`` is malformed: the message names the record and field."""


@dataclass(frozen=True)
class Upstream:
    """One public record about a finding: ``ref`` (``pytorch/pytorch#N`` or a
    URL), its ``state`` (open, closed, merged, ...) and what it ``covers``
    (``"related: ..."`` when it is not this exact behaviour)."""

    ref: str
    state: str
    covers: str

    @property
    def url(self) -> str:
        if self.ref.startswith("http"):
            return self.ref
        repo, _, number = self.ref.partition("#")
        return f"https://github.com/{repo}/issues/{number}"

    @property
    def related_only(self) -> bool:
        return self.covers.lower().startswith("related")


@dataclass(frozen=True)
class Finding:
    """One record of ``conformance/findings.toml``.

    ``measured`` maps a torch release (``"2.13.0"``) to the reproducer's
    result there (one of :data:`RESULTS`); ``releases_note`` says what the
    suite's expectations and baselines record for other releases;
    ``upstream`` is empty when no public report was found."""

    id: str
    title: str
    kind: str
    claims: tuple[str, ...]
    reproducer: str
    expected: str
    observed: str
    backends: tuple[str, ...] = ()
    device: str = "cpu"
    measured: dict[str, str] = field(default_factory=dict)
    releases_note: str = ""
    upstream: tuple[Upstream, ...] = ()

    @property
    def severity(self) -> str:
        return KINDS[self.kind]

    @property
    def path(self) -> Path:
        return REPRODUCERS_DIR / self.reproducer

    @property
    def reported(self) -> bool:
        """Whether some public record covers this exact behaviour."""
        return any(not u.related_only for u in self.upstream)

    def fixed_in(self) -> str | None:
        """The first measured release where the reproducer said ``fixed``
        after one where it said ``reproduces`` (releases in version order)."""
        from packaging.version import Version

        seen = False
        for rel in sorted(self.measured, key=Version):
            if self.measured[rel] == "reproduces":
                seen = True
            elif self.measured[rel] == "fixed" and seen:
                return rel
        return None


def _release_ok(text: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def load_findings(path: Path | str = FINDINGS_FILE, *, registry=None) -> list[Finding]:
    """Parse and validate the registry; returns the findings in file order.

    Checks: known fields only, unique ids, a known ``kind``, claim ids
    registered (when ``registry`` is given), the reproducer file present,
    ``measured`` releases parseable with known results, upstream entries
    complete. Raises :class:`FindingsError` with one line per problem."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise FindingsError(f"{path}: {e}") from None
    problems: list[str] = []
    out: list[Finding] = []
    seen: set[str] = set()
    for n, raw in enumerate(data.get("finding", []), 1):
        fid = raw.get("id") or f"#{n}"
        where = f"{path.name}: finding {fid}"
        unknown = set(raw) - _FIELDS
        if unknown:
            problems.append(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        missing = [k for k in ("id", "title", "kind", "reproducer", "expected", "observed")
                   if not str(raw.get(k, "")).strip()]  # fmt: skip
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        if fid in seen:
            problems.append(f"{where}: duplicate id")
        seen.add(fid)
        if raw["kind"] not in KINDS:
            problems.append(f"{where}: kind {raw['kind']!r} is not one of {', '.join(KINDS)}")
        claims = tuple(raw.get("claims", ()))
        if registry is not None:
            bad = [c for c in claims if c not in registry]
            if bad:
                problems.append(f"{where}: unregistered claim(s) {', '.join(bad)}")
        if not (REPRODUCERS_DIR / raw["reproducer"]).is_file():
            problems.append(f"{where}: no reproducer {raw['reproducer']} in {REPRODUCERS_DIR}")
        measured = dict(raw.get("measured", {}))
        for rel, res in measured.items():
            if not _release_ok(rel) or res not in RESULTS:
                problems.append(f"{where}: measured {rel} = {res!r} (release = one of {RESULTS})")
        ups = []
        for u in raw.get("upstream", ()):
            if not all(str(u.get(k, "")).strip() for k in ("ref", "state", "covers")):
                problems.append(f"{where}: an upstream entry needs ref, state and covers")
                continue
            ups.append(Upstream(u["ref"], u["state"], u["covers"]))
        out.append(
            Finding(
                id=fid,
                title=raw["title"],
                kind=raw["kind"],
                claims=claims,
                reproducer=raw["reproducer"],
                expected=raw["expected"],
                observed=raw["observed"],
                backends=tuple(raw.get("backends", ())),
                device=raw.get("device", "cpu"),
                measured=measured,
                releases_note=raw.get("releases_note", ""),
                upstream=tuple(ups),
            )  # fmt: skip
        )
    if problems:
        raise FindingsError("\n".join(problems))
    return out


@dataclass(frozen=True)
class ReproducerResult:
    """What one reproducer run said: ``status`` is one of :data:`RESULTS` or
    ``"error"``; ``line`` its last line of output (or why it is an error);
    ``returncode`` (``None`` on timeout) and ``seconds`` of wall time."""

    id: str
    status: str
    line: str
    returncode: int | None
    seconds: float

    def to_dict(self) -> dict:
        return {"id": self.id, "status": self.status, "line": self.line,
                "returncode": self.returncode, "seconds": round(self.seconds, 2)}  # fmt: skip


def read_outcome(stdout: str, returncode: int | None) -> tuple[str, str]:
    """``(status, line)`` from a reproducer's output and exit status, per the
    protocol in this module's docstring: the last non-empty line must start
    with the status word matching the exit status, else ``error``."""
    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if returncode is None:
        return "error", "timed out"
    for word, (status, code) in _STATUS.items():
        if last.startswith(word + ":"):
            if returncode == code:
                return status, last.removeprefix(word + ":").strip()
            return "error", f"exit status {returncode} with the line {last[:200]!r}"
    if returncode < 0:
        return "error", f"died with signal {-returncode} outside the reproducer's own child"
    return "error", f"exit status {returncode}, last line {last[:200]!r}"


def run_reproducer(
    finding: Finding, *, python: str = sys.executable, timeout: float = 120,
    env: dict[str, str] | None = None,
) -> ReproducerResult:  # fmt: skip
    """Run ``finding``'s reproducer in a fresh interpreter (``python``, the
    installed torch) from a temporary working directory; never raises for
    what the reproducer does. ``env`` replaces the environment (the
    self-tests put a patched torch on ``PYTHONPATH``); by default it is this
    process's without ``PYTHONPATH`` (that reproducers import only torch,
    NumPy and the standard library is checked on their source by
    ``tests/test_findings.py``)."""
    import tempfile

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="torch-finding-") as tmp:
        if env is None:
            run_env = dict(os.environ)
            run_env.pop("PYTHONPATH", None)
        else:
            run_env = dict(env)
        run_env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path(tmp) / "inductor"))
        try:
            proc = subprocess.run(
                [python, str(finding.path)], cwd=tmp, env=run_env, capture_output=True,
                text=True, timeout=timeout, check=False,
            )  # fmt: skip
            status, line = read_outcome(proc.stdout, proc.returncode)
            if status == "error" and proc.stderr.strip():
                line += " | " + proc.stderr.strip().splitlines()[-1][:300]
            rc: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            status, line, rc = "error", f"timed out after {timeout:.0f} s", None
    return ReproducerResult(finding.id, status, line, rc, time.perf_counter() - t0)


def run_all(
    findings: Sequence[Finding], *, workers: int = 1, timeout: float = 120,
    env: dict[str, str] | None = None, progress=None,
) -> list[ReproducerResult]:  # fmt: skip
    """Run every reproducer (``workers`` at a time); results in input order."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(run_reproducer, f, timeout=timeout, env=env) for f in findings]
        results = []
        for fut in futures:
            res = fut.result()
            if progress is not None:
                progress(res)
            results.append(res)
    return results


def news(
    findings: Iterable[Finding], results: Iterable[ReproducerResult], release: str
) -> list[dict]:
    """Results that differ from what the registry expects on ``release``:
    a finding measured as reproducing (on this release, or on the newest
    measured release before it) that now says ``fixed`` comes first - the
    news a reviewer wants - then any other change. Each item:
    ``{"id", "was", "now", "on"}``."""
    from packaging.version import Version

    by_id = {f.id: f for f in findings}
    out = []
    for r in results:
        f = by_id[r.id]
        if r.status == "error":
            continue
        if release in f.measured:
            was, on = f.measured[release], release
        else:
            older = [v for v in f.measured if Version(v) < Version(release)]
            if not older:
                continue
            on = max(older, key=Version)
            was = f.measured[on]
        if was != r.status:
            out.append({"id": r.id, "was": was, "now": r.status, "on": on})
    out.sort(key=lambda n: (not (n["was"] == "reproduces" and n["now"] == "fixed"), n["id"]))
    return out


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def dump_findings(findings: Sequence[Finding]) -> str:
    """The registry as canonical TOML (the inverse of :func:`load_findings`)."""
    from packaging.version import Version

    parts = ["# The findings registry: conformance/findings.py documents every field.\n"
             "# `torch-conformance findings --record` adds the installed torch's results.\n"]  # fmt: skip
    for f in findings:
        lines = ["[[finding]]",
                 f"id = {_toml_str(f.id)}",
                 f"title = {_toml_str(f.title)}",
                 f"kind = {_toml_str(f.kind)}",
                 "claims = [" + ", ".join(map(_toml_str, f.claims)) + "]",
                 f"reproducer = {_toml_str(f.reproducer)}",
                 f"expected = {_toml_str(f.expected)}",
                 f"observed = {_toml_str(f.observed)}",
                 "backends = [" + ", ".join(map(_toml_str, f.backends)) + "]",
                 f"device = {_toml_str(f.device)}",
                 "measured = { " + ", ".join(f"{_toml_str(k)} = {_toml_str(f.measured[k])}"
                                             for k in sorted(f.measured, key=Version)) + " }",
                 f"releases_note = {_toml_str(f.releases_note)}"]  # fmt: skip
        if f.upstream:
            lines.append("upstream = [")
            for u in f.upstream:
                lines.append(f"  {{ ref = {_toml_str(u.ref)}, state = {_toml_str(u.state)}, "
                             f"covers = {_toml_str(u.covers)} }},")  # fmt: skip
            lines.append("]")
        else:
            lines.append("upstream = []")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def record(
    findings: Sequence[Finding], results: Iterable[ReproducerResult], release: str
) -> list[Finding]:
    """``findings`` with ``measured[release]`` set from ``results`` (errors
    are not recorded)."""
    from dataclasses import replace

    got = {r.id: r.status for r in results if r.status != "error"}
    return [replace(f, measured={**f.measured, release: got[f.id]}) if f.id in got else f
            for f in findings]  # fmt: skip
