"""The ``torch.compile`` backends of the compile tier: the default three,
``--backends`` parsing and validation, and whether a backend can run on this
machine (inductor needs a C++ compiler). Imports no torch for the defaults."""

from __future__ import annotations

import os

#: The compile-tier backends run by default, the eager oracle first; ``--backends``
#: also takes any other registered name or a ``module:callable``
#: (:func:`backend_problem`).
BACKENDS = ("eager", "aot_eager", "inductor")


def cxx_compiler() -> str | None:
    """The C++ compiler inductor would use (``$CXX``, else ``c++``/``g++``/
    ``clang++`` on ``PATH``), or ``None`` when there is none."""
    import shutil

    for name in filter(None, (os.environ.get("CXX"), "c++", "g++", "clang++")):
        found = shutil.which(name)
        if found:
            return found
    return None


def backend_unavailable(backend: str) -> str | None:
    """Why ``backend`` cannot run on this machine, or ``None`` when it can."""
    if backend == "inductor" and cxx_compiler() is None:
        return "inductor needs a C++ compiler and none was found (set CXX or install g++)"
    return None


def backend_problem(backend: str) -> str | None:
    """Why ``backend`` names no torch.compile backend (one line), or ``None``.

    The default three are known without importing torch; any other name must
    be registered with Dynamo, and a ``module:callable`` is imported now (see
    :func:`conformance.compile_oracle.resolve_backend`), so a bad one stops
    the run before anything runs."""
    if backend in BACKENDS:
        return None
    from conformance.compile_oracle import BackendError, resolve_backend

    try:
        resolve_backend(backend)
    except BackendError as e:
        return str(e)
    return None


def parse_backends(raw: str | None) -> list[str]:
    """The backends of ``--backends`` (default :data:`BACKENDS`), in order,
    each once. Raises ``ValueError`` with a one-line message for an empty
    list, a name that is no backend (:func:`backend_problem`), or two names
    that would share a test id (:func:`conformance.compile_oracle.backend_id`)."""
    names = [b.strip() for b in (raw or ",".join(BACKENDS)).split(",") if b.strip()]
    if not names:
        raise ValueError(f"--backends: no backend named in {raw!r}")
    names = list(dict.fromkeys(names))
    for b in names:
        why = backend_problem(b)
        if why:
            raise ValueError(f"--backends {b}: {why}")
    if any(b not in BACKENDS for b in names):
        from conformance.compile_oracle import backend_id

        ids: dict[str, str] = {}
        for b in names:
            other = ids.setdefault(backend_id(b), b)
            if other != b:
                raise ValueError(
                    f"--backends: {other} and {b} would share the test id {backend_id(b)}"
                )
    return names
