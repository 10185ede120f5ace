"""The CLI never misleads: bad input, interruption, output formats, pins.

Bad input is one ``error:`` line on stderr and exit 2 (never a traceback,
never exit 1, which means "gate failed"), and nothing is written to
``--out``. An interrupted run leaves the earlier results byte-identical and
no process behind, and exits 130 / 143.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import ROOT

SHARES = "detach.shares-storage"
STALE = "detach.metadata-change-raises"  # a known deviation on torch >= 1.13
SMALL = ("-n", "0", "--no-measure", "--devices", "cpu")


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], proc.stderr
    return lines[0]


# ------------------------------------------------------------ bad input


def _bad_inputs(tmp: Path) -> list[tuple[tuple[str, ...], str]]:
    blocker = tmp / "a-file"
    out = str(tmp / "out")
    return [
        (("run", "--out", str(blocker / "sub")), "--out"),
        (("run", "--out", str(blocker)), "not a directory"),
        (("run", "--out", out, "-n", "-1"), "argument -n"),
        (("run", "--out", out, "-n", "many"), "argument -n"),
        (("run", "--out", out, "--claims", ""), "argument --claims"),
        (("run", "--out", out, "--claims", " , "), "argument --claims"),
        (("run", "--out", out, "--devices", ""), "argument --devices"),
        (("run", "--out", out, "--out", ""), "argument --out"),
        (("run", "--out", out, "--baseline", str(tmp / "none.json")), "no such result file"),
        (("run", "--out", out, "--junitxml", str(blocker / "j.xml")), "--junitxml"),
        (("run", "--out", out, "--xfails-file", str(tmp)), "is a directory"),
        (("run", "--out", out, "--profile", "fast"), "argument --profile"),
        (("claims", "--area", "nope"), "unknown area 'nope'"),
        (("claims", "--format", "xml"), "argument --format"),
        (("mutate", "--out", out, "-n", "0"), "argument -n"),
        (("mutate", "--out", out, "--timeout", "-5"), "argument --timeout"),
        (("mutate", "--out", str(blocker / "sub"), "--mutants", "detach-copies"), "--out"),
        (("report", str(tmp / "none.json"), "-o", str(tmp / "out" / "r.html")), "no such result"),
        (("no-such-command",), "invalid choice"),
    ]


@pytest.mark.parametrize("case", range(19))
def test_bad_input_is_one_error_line_exit_2_and_writes_nothing(cli, tmp_path, case):
    (tmp_path / "a-file").write_text("not a directory\n")
    cases = _bad_inputs(tmp_path)
    assert len(cases) == 19
    args, needle = cases[case]
    proc = cli(*args)
    line = _one_error_line(proc)
    assert needle in line, line
    assert not (tmp_path / "out").exists()
    assert (tmp_path / "a-file").read_text() == "not a directory\n"


def test_unwritable_proc_path_is_exit_2(cli):
    if not Path("/proc/self").exists():
        pytest.skip("no /proc")
    line = _one_error_line(cli("run", "--out", "/proc/x/y", "--claims", SHARES, *SMALL))
    assert "--out /proc/x/y" in line


def test_results_of_another_schema_are_kept_unless_force(cli, tmp_path, read_results):
    out = tmp_path / "out"
    out.mkdir()
    old = json.dumps({"schema_version": 99, "tests": []}).encode()
    (out / "results.json").write_bytes(old)
    line = _one_error_line(cli("run", "--claims", SHARES, *SMALL, "--out", str(out)))
    assert "schema_version 99" in line and "--force" in line
    assert (out / "results.json").read_bytes() == old
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]
    proc = cli("run", "--claims", SHARES, *SMALL, "--out", str(out), "--force")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert read_results(out)["schema_version"] == 1


# ------------------------------------------------------------- interrupt


def _marked_processes(marker: str) -> list[int]:
    """Live processes whose environment carries ``marker`` (Linux /proc)."""
    found = []
    for env in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker.encode() in env.read_bytes():
                stat = (env.parent / "stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(env.parent.name))
        except (OSError, IndexError):
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_interrupted_run_keeps_earlier_results_and_leaves_no_process(tmp_path, sig, code):
    out = tmp_path / "out"
    out.mkdir()
    earlier = json.dumps({"schema_version": 1, "tests": [], "note": "earlier run"}).encode()
    (out / "results.json").write_bytes(earlier)
    (out / "report.html").write_bytes(b"<html>earlier report</html>\n")
    marker = f"TC_ROBUSTNESS_{uuid.uuid4().hex}"
    env = dict(os.environ, **{marker: "1"})
    env.pop("CI", None)
    # thorough: thousands of examples, so the run is still going when the signal comes
    cmd = [sys.executable, "-m", "reports.cli", "run", "--claims", SHARES, *SMALL,
           "--profile", "thorough", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=str(ROOT), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        first = proc.stdout.readline()
        assert first.startswith("running the suite"), first
        time.sleep(2.0)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == code, stdout + stderr
    assert "Traceback" not in stderr
    assert f"interrupted by {signal.Signals(sig).name}" in stderr
    assert (out / "results.json").read_bytes() == earlier
    assert (out / "report.html").read_bytes() == b"<html>earlier report</html>\n"
    assert not list(out.glob("*.tmp"))
    deadline = time.monotonic() + 10
    while _marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _marked_processes(marker) == []


# ------------------------------------------------------- output formats


def test_junit_xfails_and_progress(cli, tmp_path, read_results):
    import hypothesis

    out, junit, xfails = tmp_path / "out", tmp_path / "j.xml", tmp_path / "xfails.txt"
    proc = cli("run", "--claims", f"{SHARES},{STALE}", *SMALL, "--out", str(out),
               "--junitxml", str(junit), "--xfails-file", str(xfails))  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {SHARES, STALE}
    assert list(cases[SHARES]) == [] or cases[SHARES][0].tag == "system-out"
    assert cases[STALE].find("skipped").get("type") == "pytest.xfail"
    ids = [ln for ln in xfails.read_text().splitlines() if ln and not ln.startswith("#")]
    assert ids == ["conformance/test_detach.py::test_detach_metadata_change_raises[cpu]"]
    # non-terminal stdout: plain progress lines, the last one complete
    progress = [ln for ln in proc.stdout.splitlines() if ln.startswith("progress:")]
    assert progress and "claims 2/2" in progress[-1] and "failures 0" in progress[-1]
    assert read_results(out)["environment"]["hypothesis"] == hypothesis.__version__


def test_junit_failure_carries_the_falsifying_example(cli, tmp_path):
    exp = tmp_path / "none.toml"
    exp.write_text("# no known deviations\n")
    junit = tmp_path / "j.xml"
    proc = cli("run", "--claims", STALE, *SMALL, "--out", str(tmp_path / "out"),
               "--expectations", str(exp), "--junitxml", str(junit))  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("failures") == "1"
    failure = suite.find("testcase").find("failure")
    assert failure.get("type") == "regression" and "DID NOT RAISE" in failure.get("message")
    assert re.search(r"Falsifying (explicit )?example", failure.text)  # domain examples run first
    assert "progress:" in proc.stdout and "failures 1" in proc.stdout


# --------------------------------------------------------------- claims


def test_claims_prints_ids_whole_in_every_format(cli):
    from conformance.registry import default_registry

    ids = set(default_registry().claims)
    narrow = dict(os.environ, COLUMNS="30")
    table = cli("claims", env=narrow)
    assert table.returncode == 0, table.stderr
    assert ids <= {ln.strip() for ln in table.stdout.splitlines()}
    tsv = cli("claims", "--format", "tsv", env=narrow)
    rows = [ln.split("\t") for ln in tsv.stdout.splitlines()]
    assert rows[0] == ["id", "area", "kind", "statement"]
    assert all(len(r) == 4 for r in rows) and {r[0] for r in rows[1:]} == ids
    js = json.loads(cli("claims", "--format", "json", "--area", "detach").stdout)
    assert js and all(c["area"] == "detach" for c in js) and SHARES in {c["id"] for c in js}


def test_claims_show_prints_the_evidence_for_one_claim(cli):
    """``claims --show ID``: statement, tests, mutants, each recorded
    deviation with its range and measured releases, and the claim's verdict
    in every shipped baseline; an unknown id is one error line, exit 2."""
    proc = cli("claims", "--show", "detach.metadata-change-raises")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "test_detach.py::test_detach_metadata_change_raises" in out
    assert "recorded deviations (1)" in out and "measured on 2.1.2" in out
    assert "verdict per shipped baseline:" in out and "2.13.0  expected deviation" in out
    bad = cli("claims", "--show", "no.such-claim")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------- dependencies


def test_runtime_requirements_are_floors_and_ci_pins_through_constraints():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for req in project["dependencies"]:
        assert "==" not in req and "<" not in req, f"runtime pin: {req}"
    constraints = (ROOT / "constraints" / "ci.txt").read_text().splitlines()
    assert any(ln.startswith("hypothesis==") for ln in constraints)
    readme = (ROOT / "README.md").read_text()
    test_cmd = "pip install -c constraints/ci.txt -e '.[test]' && python -m pytest -n 2"
    assert f"```sh\n{test_cmd}\n```" in readme
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == test_cmd and "torch==2.13.0" in ci[-2]
