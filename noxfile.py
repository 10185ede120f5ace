"""Cross-version matrix: one fresh virtual environment per torch version.

    nox -s matrix                    # torch 2.13.0 and 2.14.1
    nox -s matrix -- 2.12.0 2.13.0   # any list

Each environment installs ``torch==<version>`` and this suite with pip (pip on
the build machines finds local torch builds through its own configuration;
keep the default virtualenv backend rather than uv), runs
``torch-conformance run`` into ``matrix-out/<version>/``, then renders
``matrix-out/matrix.html`` (claims x torch version x device) and compares each
version with the first one (``matrix-out/compare-<a>-<b>.html``).
"""

from __future__ import annotations

from pathlib import Path

import nox

DEFAULT_VERSIONS = ("2.13.0", "2.14.1")
OUT = Path("matrix-out")
#: Pins the verdicts depend on (the exact Hypothesis of the derandomized CI
#: profile); the package declares floors only.
CONSTRAINTS = "constraints/ci.txt"

nox.options.default_venv_backend = "virtualenv"
nox.options.reuse_existing_virtualenvs = True


@nox.session(python=False)
def matrix(session: nox.Session) -> None:
    versions = session.posargs or list(DEFAULT_VERSIONS)
    results = []
    for version in versions:
        venv = Path(".nox") / f"torch-{version}"
        if not (venv / "bin" / "python").exists():
            session.run("python", "-m", "venv", str(venv), external=True)
        py = str(venv / "bin" / "python")
        session.run(py, "-m", "pip", "install", "-q", f"torch=={version}", external=True)
        session.run(py, "-m", "pip", "install", "-q", "-c", CONSTRAINTS, "-e", ".", external=True)
        out = OUT / version
        session.run(
            py, "-m", "reports.cli", "run", "--out", str(out), external=True, success_codes=[0, 1]
        )
        results.append(str(out / "results.json"))
    session.run("torch-conformance", "matrix", *results, "-o", str(OUT / "matrix.html"),
                external=True, success_codes=[0, 1])  # fmt: skip
    for r in results[1:]:
        name = f"compare-{Path(results[0]).parent.name}-{Path(r).parent.name}.html"
        session.run("torch-conformance", "compare", results[0], r, "-o", str(OUT / name),
                    external=True, success_codes=[0, 1])  # fmt: skip


#: Every minor release from the floor, latest patch the registry serves.
RELEASES = (
    "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1",
    "2.10.0", "2.11.0", "2.12.0", "2.13.0", "2.14.1", "2.15.0",
)  # fmt: skip


@nox.session(python=False)
def releases(session: nox.Session) -> None:
    """Run the gate on every torch release and refresh the shipped baselines.

        nox -s releases                  # every release in RELEASES
        nox -s releases -- 2.5.1 2.9.1   # some

    One release at a time, each in a fresh virtual environment under
    ``$TMPDIR`` that is deleted afterwards (CUDA wheels: 5-7 GB each; they
    run fine on CPU). torch < 2.3 gets ``numpy<2``. The gate runs with the
    committed expectations into ``release-out/<version>/`` and its
    results.json becomes ``reports/baseline_data/torch-<version>.results.json.gz``.
    A release whose gate fails is reported and its baseline is not written.
    """
    import shutil
    import tempfile

    from packaging.version import Version

    failed = []
    for version in session.posargs or RELEASES:
        venv = Path(tempfile.gettempdir()) / f"tsc-venv-{version}"
        shutil.rmtree(venv, ignore_errors=True)
        try:
            session.run("python", "-m", "venv", str(venv), external=True)
            py = str(venv / "bin" / "python")
            pins = [f"torch=={version}"] + (
                ["numpy<2"] if Version(version) < Version("2.3") else []
            )
            session.run(py, "-m", "pip", "install", "-q", "--no-cache-dir", *pins, external=True)
            session.run(py, "-m", "pip", "install", "-q", "--no-cache-dir", "-c", CONSTRAINTS,
                        "-e", ".", external=True)  # fmt: skip
            out = Path("release-out") / version
            session.run(py, "-m", "reports.cli", "run", "--no-measure", "--devices", "cpu",
                        "--out", str(out), "--force", "--no-progress", external=True,
                        success_codes=[0, 1])  # fmt: skip
            from reports.results import load_results, summarize

            if not summarize(load_results(out / "results.json"))["gate_passed"]:
                failed.append(version)
            else:
                session.run(py, "-m", "reports.cli", "baseline", "save",
                            str(out / "results.json"), external=True)  # fmt: skip
        finally:
            shutil.rmtree(venv, ignore_errors=True)
    if failed:
        session.error(f"the gate failed on torch {', '.join(failed)}: see release-out/")


@nox.session(python=False)
def mutate(session: nox.Session) -> None:
    """Full mutation sweep of the installed torch: the suite's detection power.

    Writes ``mutation-out/results.json`` and ``report.html`` with the
    detection-power section, and ``mutation-out/mutants.json``.
    """
    out = Path("mutation-out")
    session.run("torch-conformance", "run", "--no-measure", "--out", str(out), external=True,
                success_codes=[0, 1])  # fmt: skip
    session.run("torch-conformance", "mutate", "-n", "2", "--out", str(out), *session.posargs,
                external=True)  # fmt: skip


@nox.session(python=False)
def flake_sweep(session: nox.Session) -> None:
    """The suite under many random Hypothesis seeds, with the installed torch.

        nox -s flake_sweep                    # dev profile, seeds 1..20
        nox -s flake_sweep -- 8               # dev profile, seeds 1..8
        nox -s flake_sweep -- 20 --thorough 3 # plus thorough, seeds 1..3

    Arguments are those of ``python -m reports.flake_sweep`` (also ``-n
    WORKERS``, ``--out DIR``). One line per seed (PASS/FAIL, wall time, failed
    tests), a summary line; fails when any seed failed. No virtual
    environment: it runs in the current one, so torch is not downloaded.
    """
    session.run("python", "-m", "reports.flake_sweep", *(session.posargs or ["20"]),
                external=True)  # fmt: skip
