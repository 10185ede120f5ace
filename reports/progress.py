"""Live progress of a ``torch-conformance run``.

Two halves:

- a pytest plugin (``-p reports.progress``), active when the environment
  variable :data:`PROGRESS_ENV` names a file: the pytest controller appends
  one JSON line per event to it (``{"total": n}`` once collection is known,
  ``{"done": nodeid, "claims": [...], "verdict": v}`` per finished test);
- :class:`ProgressDisplay`, used by the CLI while pytest runs: it reads
  those events and shows tests finished / total, claims with a verdict,
  failures so far, the current area and the elapsed time - a live ``rich``
  line on a terminal, plain lines (at most one every few seconds, plus one
  per new failure) when stdout is not a terminal or ``CI`` is set.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

PROGRESS_ENV = "TORCH_CONFORMANCE_PROGRESS"
FAILING = ("regression", "unexpected-pass", "suite-error")

# ------------------------------------------------------------- pytest side

_STATE: dict = {}


def _emit(event: dict) -> None:
    path = _STATE.get("path")
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(event) + "\n")
    except OSError:
        _STATE["path"] = None  # progress is best effort; never break the run


def pytest_configure(config: pytest.Config) -> None:
    """Activate on the controller when :data:`PROGRESS_ENV` is set."""
    if hasattr(config, "workerinput"):
        return
    _STATE["path"] = os.environ.get(PROGRESS_ENV) or None
    _STATE["records"] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: the number of collected tests."""
    if session.config.pluginmanager.hasplugin("dsession"):
        return
    _emit({"total": len(session.items)})


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids) -> None:
    """Under xdist: the number of tests the first worker collected."""
    if not _STATE.get("total_sent"):
        _STATE["total_sent"] = True
        _emit({"total": len(ids)})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """One event per finished test (at teardown), with its conformance verdict."""
    if not _STATE.get("path"):
        return
    rec = _STATE["records"]
    for key, value in report.user_properties:
        if key == "conformance":
            try:
                r = json.loads(value)
            except ValueError:
                continue
            rec[report.nodeid] = {"claims": r.get("claims", []), "verdict": r.get("verdict")}
    if report.when == "teardown":
        info = rec.pop(report.nodeid, {"claims": [], "verdict": None})
        _emit({"done": report.nodeid, **info})


# ---------------------------------------------------------------- CLI side


def _fmt_elapsed(s: float) -> str:
    m, s = divmod(int(s), 60)
    return f"{m}:{s:02d}"


class ProgressDisplay:
    """Follows the event file of a running suite and shows its progress.

    ``claims_total`` is the number of claims selected for the run. Call
    :meth:`update` periodically and :meth:`close` at the end.
    """

    def __init__(
        self, events: Path, claims_total: int, *, live: bool | None = None, stream=None
    ) -> None:
        self.events = Path(events)
        self.claims_total = claims_total
        self.stream = stream or sys.stdout
        if live is None:
            live = bool(getattr(self.stream, "isatty", lambda: False)()) and not os.environ.get(
                "CI"
            )
        self.live = live
        self.t0 = time.monotonic()
        self.total: int | None = None
        self.done = 0
        self.claims: set[str] = set()
        self.failures: list[str] = []
        self.area = ""
        self._offset = 0
        self._last_plain = 0.0
        self._last_line = ""
        self._live = None
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(
                self._line(),
                console=Console(file=self.stream, highlight=False),
                refresh_per_second=4,
                transient=False,
            )
            self._live.start()

    def _read(self) -> None:
        try:
            with open(self.events, encoding="utf-8") as f:
                f.seek(self._offset)
                chunk = f.read()
        except OSError:
            return
        end = chunk.rfind("\n")
        if end < 0:
            return
        self._offset += len(chunk[: end + 1].encode("utf-8"))
        for line in chunk[: end + 1].splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if "total" in ev:
                self.total = ev["total"]
            elif "done" in ev:
                self.done += 1
                self.claims.update(ev.get("claims") or [])
                nodeid = ev["done"]
                self.area = nodeid.split("::")[0].rsplit("/", 1)[-1].removeprefix("test_")
                self.area = self.area.removesuffix(".py")
                if ev.get("verdict") in FAILING:
                    self.failures.append(f"{ev['verdict']}: {nodeid}")
                    if not self.live:
                        self._print(f"  {ev['verdict'].upper()}: {nodeid}")

    def _line(self) -> str:
        total = "?" if self.total is None else str(self.total)
        claims = f"{len(self.claims)}/{self.claims_total}" if self.claims_total else "?"
        area = f" | area {self.area}" if self.area else ""
        return (
            f"tests {self.done}/{total} | claims {claims} | failures {len(self.failures)}"
            f"{area} | {_fmt_elapsed(time.monotonic() - self.t0)}"
        )

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def update(self) -> None:
        """Read new events and refresh the display."""
        self._read()
        line = self._line()
        if self._live is not None:
            from rich.text import Text

            self._live.update(Text(line))
            return
        now = time.monotonic()
        core = line.rsplit(" | ", 1)[0]
        if core != self._last_line and now - self._last_plain >= 5:
            self._last_plain, self._last_line = now, core
            self._print(f"progress: {line}")

    def close(self) -> None:
        """A last refresh; stop the live display."""
        self._read()
        if self._live is not None:
            from rich.text import Text

            self._live.update(Text(self._line()))
            self._live.stop()
            self._live = None
        else:
            self._print(f"progress: {self._line()}")
