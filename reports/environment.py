"""Identify the suite itself: name, version and git commit."""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def suite_info() -> dict:
    """``{"name", "version", "commit", "dirty"}`` of the installed suite.

    ``commit`` is ``git rev-parse HEAD`` of the checkout the suite runs from,
    or ``None`` outside a git checkout.
    """
    try:
        version = metadata.version("torch-semantics-conformance")
    except metadata.PackageNotFoundError:
        version = None
    commit = dirty = None
    try:
        commit = (
            subprocess.run(
                ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
            ).stdout.strip()
            or None
        )
        if commit:
            status = subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout
            dirty = bool(status.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return {
        "name": "torch-semantics-conformance",
        "version": version,
        "commit": commit,
        "dirty": dirty,
    }
