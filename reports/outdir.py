"""Checks on where the CLI will write, made before any work is done.

Every check raises :class:`OutputError` with a one-line message; the CLI turns
it into ``error: ...`` and exit 2. A check leaves no trace: a directory it had
to create to prove it writable is removed again.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from importlib import metadata
from pathlib import Path


class OutputError(Exception):
    """An output location that cannot be written (one-line message)."""


def check_writable_dir(path: Path | str, what: str = "--out") -> None:
    """Raise :class:`OutputError` unless ``path`` is (or can be created as) a
    writable directory. Nothing is left behind on disk either way."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{what} {path}: exists and is not a directory")
    created: list[Path] = []
    try:
        missing = []
        p = path.absolute()
        while not p.exists():
            missing.append(p)
            if p.parent == p:
                break
            p = p.parent
        for d in reversed(missing):
            os.mkdir(d)
            created.append(d)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".torch-conformance-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        reason = e.strerror or str(e)
        where = f" ({e.filename})" if e.filename and str(e.filename) != str(path) else ""
        raise OutputError(f"{what} {path}: not a writable directory: {reason}{where}") from None
    finally:
        for d in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(d)


def check_writable_file(path: Path | str, what: str) -> None:
    """Raise :class:`OutputError` unless a file can be written at ``path``
    (its directory writable, the path not a directory)."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{what} {path}: is a directory, expected a file name")
    try:
        check_writable_dir(path.parent, what=what)
    except OutputError as e:
        raise OutputError(f"{what} {path}: cannot be written ({e})") from None


def check_previous_results(out: Path | str, *, force: bool) -> None:
    """Refuse (unless ``force``) to write into a directory whose
    ``results.json`` was written by another schema or suite version, or is not
    a torch-conformance result file at all."""
    from reports.results import SCHEMA_VERSION

    path = Path(out) / "results.json"
    if force or not path.is_file():
        return
    hint = "; pass --force to overwrite it or choose another --out"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise OutputError(f"{path} is not a torch-conformance result file{hint}") from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise OutputError(f"{path} is not a torch-conformance result file{hint}")
    if doc["schema_version"] != SCHEMA_VERSION:
        raise OutputError(
            f"{path} has schema_version {doc['schema_version']!r}, this suite writes "
            f"{SCHEMA_VERSION}{hint}"
        )
    old = (doc.get("suite") or {}).get("version")
    try:
        new = metadata.version("torch-semantics-conformance")
    except metadata.PackageNotFoundError:
        new = None
    if old and new and old != new:
        raise OutputError(f"{path} was written by suite version {old}, this is {new}{hint}")
