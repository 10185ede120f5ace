"""What every ``torch-conformance`` subcommand shares: exit codes, the
one-line ``error:`` convention, the argument parser that keeps it, output
checks and the console."""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
from pathlib import Path

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2
#: Exit status after SIGINT / SIGTERM (128 + signal number, as shells report it).
EXIT_SIGINT, EXIT_SIGTERM = 128 + signal.SIGINT, 128 + signal.SIGTERM
ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE_DIR = ROOT / "conformance"


class BadInput(Exception):
    """Raised for any user error; becomes ``error: <message>`` and exit 2."""


def print_error(msg: str, code: int = EXIT_BAD_INPUT) -> int:
    """Print one ``error:`` line on stderr; returns ``code`` (exit 2: bad input)."""
    print(f"torch-conformance: error: {msg}", file=sys.stderr)
    return code


class Parser(argparse.ArgumentParser):
    """``argparse`` whose usage errors are one ``error:`` line and exit 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        """Print a one-line usage error and exit 2."""
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def check_out(path, what: str, *, file: bool = False) -> None:
    """Raise :class:`BadInput` unless ``path`` can be written (nothing is left on disk)."""
    from reports.outdir import OutputError, check_writable_dir, check_writable_file

    try:
        if file:
            check_writable_file(path, what)
        else:
            check_writable_dir(path, what)
    except OutputError as e:
        raise BadInput(str(e)) from None


def make_console():
    """The terminal console; when stdout is not a terminal (CI logs, pipes)
    tables get a fixed 160 columns instead of rich's 80, so area names and
    verdict headers are never cut."""
    from rich.console import Console

    console = Console(stderr=False, highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(stderr=False, highlight=False, width=160)
    return console


def check_devices(raw: str) -> list[str]:
    """The device types of ``--devices`` ``raw``, each known to this torch and
    available here (:mod:`conformance.capabilities`); raises :class:`BadInput`
    with one line naming the first that is not. Imports torch only when a
    device other than the CPU is named."""
    devs = list(dict.fromkeys(d.strip() for d in raw.split(",") if d.strip()))
    if not devs:
        raise BadInput(f"--devices: no device in {raw!r}")
    if devs == ["cpu"]:
        return devs
    from conformance import capabilities as cap

    try:
        devs = cap.parse_devices(raw)
    except ValueError as e:
        raise BadInput(str(e)) from None
    for d in devs:
        why = cap.device_unavailable(d)
        if why:
            raise BadInput(f"--devices {d}: {why}")
    return devs


def claim_tests(claim_id: str) -> list[str]:
    """``module::test`` of every conformance test marked with ``claim_id``
    (read from the source with :mod:`ast`; nothing is imported)."""
    return list(_claim_test_index().get(claim_id, ()))


@functools.cache
def _claim_test_index() -> dict[str, tuple[str, ...]]:
    """Claim id -> ``module::test`` of the conformance tests whose
    ``@pytest.mark.claim(...)`` quotes it, from one parse of each module
    (``run --claims`` with many claims once parsed every module per claim)."""
    import ast

    out: dict[str, list[str]] = {}
    for path in sorted((Path(__file__).resolve().parent.parent / "conformance").glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "attr", None) == "claim":
                    for a in dec.args:
                        if isinstance(a, ast.Constant) and isinstance(a.value, str):
                            tests = out.setdefault(a.value, [])
                            if f"{path.name}::{node.name}" not in tests:
                                tests.append(f"{path.name}::{node.name}")
    return {c: tuple(t) for c, t in out.items()}
