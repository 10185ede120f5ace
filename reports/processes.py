"""Stopping a run cleanly: SIGINT, SIGTERM and SIGHUP become an exception in
the controller, are held back while result files are written, and stop the
pytest process group (controller and xdist workers) with a grace period."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

#: Seconds an interrupted pytest gets to write its partial results before it is killed.
INTERRUPT_GRACE_S = 10.0


#: Signals that stop a run cleanly (SIGHUP: its terminal went away).
_STOP_SIGNALS = tuple(
    getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)
)


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived (raised from the signal handler)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def signals_raise():
    """Turn SIGINT, SIGTERM and SIGHUP into :class:`Interrupted` for the block; the
    first one only: later ones are remembered and ignored while cleaning up."""
    state: dict = {"signum": None, "late": None}

    def handler(signum, frame):
        if state["signum"] is None:
            state["signum"] = signum
            raise Interrupted(signum)

    old = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}
    try:
        yield state
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


@contextlib.contextmanager
def signals_deferred(state: dict):
    """Hold SIGINT/SIGTERM back while a pair of result files is written, so
    ``results.json`` and ``report.html`` are both from the same run; a
    signal that arrived meanwhile is recorded as ``state["late"]``."""

    def handler(signum, frame):
        if state["signum"] is None:
            state["signum"] = state["late"] = signum

    old = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def stop_group(proc: subprocess.Popen) -> None:
    """Stop the pytest process group (controller and xdist workers): send it
    SIGINT (whichever signal stopped us), so pytest ends its session and writes its
    partial results, wait a grace period, then kill whatever is left."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=INTERRUPT_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # workers outliving their controller, too
    proc.wait()


def _descendants(pid: int) -> list[int]:
    """Process ids descending from ``pid`` (Linux ``/proc``; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_children_on_sigterm() -> None:
    """For ``mutate``: on SIGINT/SIGTERM, stop every process this one started
    (the mutant runs and their workers), say so, and exit 130 / 143 at once
    (queued mutant runs are not started). Files in ``--out`` are only written
    after the sweep, atomically, so the earlier ones stay as they were."""

    def handler(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        import time

        pids = _descendants(os.getpid())
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.1)
        for pid in [*pids, *_descendants(os.getpid())]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        name = signal.Signals(signum).name
        print(f"torch-conformance: interrupted by {name}: the mutation sweep was stopped; "
              "files in --out left as they were (no partial results)", file=sys.stderr, flush=True)  # fmt: skip
        sys.stdout.flush()
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
