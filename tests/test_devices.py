"""``--devices``: any available torch device type, the CPU as the reference.

What can be checked without an accelerator: the parsing of device lists,
the one-line exit-2 error for a device that is unknown or not available (from
``torch-conformance run``, ``mutate`` and plain pytest), the registry's device
restrictions, and - with a PrivateUse1 type registered from Python in a
subprocess (``rename_privateuse1_backend`` + a device module, no kernels) -
that a renamed out-of-tree type is accepted, parametrizes the tests and is
refused when its ``is_available()`` is False.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from conformance import capabilities as cap
from tests.conftest import ROOT, subprocess_env

# -- parsing ------------------------------------------------------------------


def test_parse_keeps_order_and_drops_blanks_and_repeats():
    assert cap.parse_devices("cpu, cuda,,cpu") == ["cpu", "cuda"]
    assert cap.parse_devices("cuda,cpu") == ["cuda", "cpu"]
    assert cap.parse_devices("xpu,mps,meta") == ["xpu", "mps", "meta"]  # known types


@pytest.mark.parametrize("raw", ["", " , ", ","])
def test_parse_refuses_an_empty_list(raw):
    with pytest.raises(ValueError, match="no device"):
        cap.parse_devices(raw)


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("tpu", "unknown device(s) tpu: 'tpu' is not a device type"),
        ("cpu,tpu,gpu", "unknown device(s) tpu, gpu"),
        ("Cuda", "unknown device(s) Cuda"),
        ("cuda:1", "names a device index; give the device type (cuda)"),
    ],
)
def test_parse_refuses_unknown_types_in_one_line(raw, needle):
    with pytest.raises(ValueError) as e:
        cap.parse_devices(raw)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_default_is_cpu_cuda_plus_another_accelerator(monkeypatch):
    monkeypatch.setattr(cap, "current_accelerator", lambda: None)
    assert cap.parse_devices(None) == ["cpu", "cuda"]
    monkeypatch.setattr(cap, "current_accelerator", lambda: "cuda")
    assert cap.default_devices() == ["cpu", "cuda"]
    monkeypatch.setattr(cap, "current_accelerator", lambda: "xpu")
    assert cap.default_devices() == ["cpu", "cuda", "xpu"]


# -- availability ---------------------------------------------------------------


def test_cpu_is_always_available():
    assert cap.device_unavailable("cpu") is None
    assert cap.device_module("cpu") is None
    cap.synchronize("cpu")  # a no-op, raises nothing


def test_cuda_unavailable_reason_is_the_documented_check():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert cap.device_unavailable("cuda") == (
        "CUDA is not available (torch.cuda.is_available() is False)"
    )


@pytest.mark.parametrize("device", ["xpu", "mps"])
def test_other_accelerators_unavailable_reason(device):
    if cap.current_accelerator() == device:
        pytest.skip(f"this machine has {device}")
    why = cap.device_unavailable(device)
    assert why is not None and why.startswith(f"{device} is not available (torch.")


@pytest.mark.parametrize("device", ["meta", "privateuseone"])
def test_a_type_without_device_module_is_refused(device):
    """``meta`` has no memory to observe; ``privateuseone`` is no device until
    an extension renames it and registers its module."""
    why = cap.device_unavailable(device)
    assert why is not None and "has no device module" in why


def test_device_restrictions_of_the_registry():
    assert cap.device_allowed("openreg", [])
    assert cap.device_allowed("cpu", ["cpu"]) and not cap.device_allowed("openreg", ["cpu"])
    assert cap.device_allowed("cuda", ["cuda"]) and not cap.device_allowed("xpu", ["cuda"])
    assert cap.device_allowed("xpu", [cap.ANY_ACCELERATOR])
    assert cap.device_allowed("openreg", [cap.ANY_ACCELERATOR])
    assert not cap.device_allowed("cpu", [cap.ANY_ACCELERATOR])


def test_host_device_claims_run_on_any_accelerator():
    """The claims that move data between the host and a device are
    registered for any accelerator, not for CUDA alone: on an XPU or a
    PrivateUse1 device they run, on the CPU they are skipped."""
    from conformance.registry import default_registry

    reg = default_registry()
    for cid in ("copy.across-devices", "to.cuda-move-is-non-leaf", "to.created-on-cuda-is-leaf"):
        assert reg[cid].devices == (cap.ANY_ACCELERATOR,), cid
        assert cap.device_allowed("openreg", reg[cid].devices)
        assert not cap.device_allowed("cpu", reg[cid].devices)


# -- the command line -------------------------------------------------------------


@pytest.mark.parametrize(
    ("devices", "needle"),
    [
        ("tpu", "--devices: unknown device(s) tpu"),
        ("cuda:0", "names a device index"),
        ("meta", "--devices meta: 'meta' has no device module"),
        ("cpu,xpu", "--devices xpu: xpu is not available (torch.xpu.is_available() is False)"),
    ],
)
def test_run_refuses_a_device_in_one_line_exit_2(cli, tmp_path, devices, needle):
    if devices == "cpu,xpu" and cap.device_unavailable("xpu") is None:
        pytest.skip("this machine has an XPU")
    out = tmp_path / "out"
    proc = cli("run", "--devices", devices, "--out", str(out), "--no-progress")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in proc.stderr
    assert not out.exists(), "a refused run wrote to --out"


def test_mutate_refuses_an_unknown_device_in_one_line_exit_2(cli, tmp_path):
    out = tmp_path / "m"
    proc = cli("mutate", "--devices", "tpu", "--out", str(out), "--mutants", "detach-copies")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "--devices: unknown device(s) tpu" in lines[0] and not out.exists()


# -- a PrivateUse1 type, registered from Python -------------------------------------

#: An out-of-tree "extension" as torch autoloads one (the ``torch.backends``
#: entry point, torch 2.5+): it renames PrivateUse1 to ``fakedev`` and
#: registers a device module whose ``is_available()`` follows
#: ``FAKEDEV_AVAILABLE`` - what OpenReg does on import, minus its kernels, so
#: no test may run on it. ``torch._register_device_module`` is the
#: registration the ``rename_privateuse1_backend`` docstring names; there is
#: no public one.
FAKEDEV_EXT = """
import os, types, torch
def _autoload():
    torch.utils.rename_privateuse1_backend("fakedev")
    mod = types.ModuleType("fakedev_module")
    mod.is_available = lambda: os.environ.get("FAKEDEV_AVAILABLE") == "1"
    torch._register_device_module("fakedev", mod)
"""


def _fakedev_env(tmp_path, available: bool) -> dict[str, str]:
    """The environment of a process whose ``import torch`` loads ``fakedev``:
    the module and a ``dist-info`` with its entry point on ``PYTHONPATH``."""
    site = tmp_path / "site"
    info = site / "fakedev_ext-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (site / "fakedev_ext.py").write_text(FAKEDEV_EXT)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakedev-ext\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[torch.backends]\nfakedev = fakedev_ext:_autoload\n")
    env = subprocess_env()
    env["PYTHONPATH"] = f"{site}:{ROOT}"
    env["FAKEDEV_AVAILABLE"] = "1" if available else "0"
    env.pop("TORCH_DEVICE_BACKEND_AUTOLOAD", None)
    env["HYPOTHESIS_STORAGE_DIRECTORY"] = str(tmp_path / "hypothesis")
    return env


def _require_autoload() -> None:
    if not cap.release_has("device-backend-autoload"):
        pytest.skip(f"torch {torch.__version__} does not autoload device extensions (2.5+)")


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=str(ROOT), env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip


def test_a_renamed_privateuse1_type_is_a_device(tmp_path):
    _require_autoload()
    probe = (
        "import torch\n"
        "from conformance import capabilities as cap\n"
        "print(cap.parse_devices('cpu,fakedev'), cap.device_unavailable('fakedev'),\n"
        "      cap.unknown_device_type('privateuseone'), cap.default_devices(), sep='|')\n"
    )
    proc = _run(["-c", probe], _fakedev_env(tmp_path, True))
    assert proc.returncode == 0, proc.stderr
    parsed, why, alias, default = proc.stdout.strip().split("|")
    assert parsed == "['cpu', 'fakedev']" and why == "None"
    assert alias == "'privateuseone' is named 'fakedev' in this torch: use fakedev"
    if cap.has_api(torch, "accelerator"):  # torch 2.6+
        assert default == "['cpu', 'cuda', 'fakedev']", "the torch.accelerator joins the default"
    else:
        assert default == "['cpu', 'cuda']"


def test_run_on_a_privateuse1_type(tmp_path):
    """``run --devices cpu,fakedev`` end to end: the type is accepted, the
    tests are parametrized over it, and a claim registered for the CPU only
    (DLPack exchanges host memory) skips on it with its reason."""
    _require_autoload()
    out = tmp_path / "out"
    args = ["-m", "reports.cli", "run", "--devices", "cpu,fakedev", "--out", str(out),
            "--no-progress", "--no-measure", "--claims", "dlpack.conj-bit-export-raises"]  # fmt: skip
    proc = _run(args, _fakedev_env(tmp_path, True))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = json.loads((out / "results.json").read_text())
    assert doc["environment"]["devices"] == ["cpu", "fakedev"]
    got = {(t["device"], t["verdict"], t.get("skip_reason")) for t in doc["tests"]}
    assert got == {("cpu", "held", None), ("fakedev", "skipped", "claim applies to cpu only")}


@pytest.mark.parametrize("how", ["cli", "pytest"])
def test_an_unavailable_privateuse1_type_is_refused(tmp_path, how):
    _require_autoload()
    env = _fakedev_env(tmp_path, False)
    out = tmp_path / "out"
    if how == "cli":
        proc = _run(
            ["-m", "reports.cli", "run", "--devices", "cpu,fakedev", "--out", str(out)], env
        )
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    else:
        proc = _run(["-m", "pytest", "conformance/test_dlpack.py", "--devices", "cpu,fakedev"], env)
        assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout[-2000:] + proc.stderr
    assert (
        "--devices fakedev: fakedev is not available (torch.fakedev.is_available() is False)"
        in proc.stderr
    )
    assert not out.exists()


def test_a_cuda_observation_is_not_pinned_on_another_device(tmp_path):
    """The compile findings pinned on the CPU and on CUDA say nothing of a
    third device type: skipped there with that reason, never judged."""
    _require_autoload()
    args = ["-m", "pytest", "conformance/test_compile_findings_aliasing.py",
            "conformance/test_compile_findings_autograd.py", "--devices", "cpu,fakedev",
            "--backends", "eager", "-rs", "-q", "-p", "no:cacheprovider", "-k",
            "fakedev and (mutation_dropped_pinned or integer_tensor_refused_pinned)"]  # fmt: skip
    proc = _run(args, _fakedev_env(tmp_path, True))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 skipped" in proc.stdout and "passed" not in proc.stdout, proc.stdout[-2000:]
    assert proc.stdout.count("pinned on cpu/cuda only: it says nothing of fakedev") == 2
