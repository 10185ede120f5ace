"""'Not applicable' is a verdict, not a failure.

When a test cannot exercise its claim on the installed torch (a helper op
without a kernel for a dtype, an API that came later, an observation that is
impossible through public APIs), the examples concerned are counted per
reason and the claim is judged on the rest; a test none of whose examples
applied is ``not-applicable`` with its reasons - never failed, never
silently held.
"""

from __future__ import annotations

import pytest
import torch

from conformance import capabilities as cap
from conformance import evidence
from reports.results import claim_verdicts, summarize
from tests.conftest import run_gate


def test_not_applicable_raises_with_one_line_reason():
    with pytest.raises(evidence.NotApplicable) as e:
        evidence.not_applicable("no   uint16\n kernel")
    assert e.value.reason == "no uint16 kernel"


def _missing(dtype, device):
    raise RuntimeError(f'"probe" not implemented for {dtype}')


def test_capability_probes_on_this_torch(monkeypatch):
    assert cap.storage_identity_observable() in (True, False)
    assert cap.kernel_available("add_", torch.float32, "cpu")
    monkeypatch.setitem(cap.KERNEL_PROBES, "missing op", _missing)
    assert not cap.kernel_available("missing op", torch.uint8, "cpu")
    with pytest.raises(evidence.NotApplicable, match="missing op has no uint8 kernel on cpu"):
        cap.require_kernel("missing op", torch.uint8, "cpu")
    cap.require_kernel("add_", torch.float64, "cpu")  # no raise
    assert cap.has_api(torch, "from_numpy") and not cap.has_api(torch, "no_such_api")
    assert cap.has_kwarg(lambda a, *, copy=None: a, "copy")


def _doc(tests):
    return {
        "environment": {"devices": ["cpu"]},
        "claims": {"a.x": {"area": "a", "kind": "documented"}},
        "tests": tests,
    }


def _t(verdict, **kw):
    return {"nodeid": f"t_{verdict}", "claims": ["a.x"], "device": "cpu", "verdict": verdict,
            "examples": 10, **kw}  # fmt: skip


def test_claim_verdict_precedence():
    na = _t("not-applicable", skip_reason="not applicable on torch 2.1.2: x")
    cell = claim_verdicts(_doc([na]))["a.x"]["cpu"]
    assert cell["verdict"] == "not applicable" and cell["reasons"] == [na["skip_reason"]]
    # evidence elsewhere wins: the claim held where it could be checked
    assert claim_verdicts(_doc([na, _t("held")]))["a.x"]["cpu"]["verdict"] == "held"
    assert claim_verdicts(_doc([na, _t("skipped")]))["a.x"]["cpu"]["verdict"] == "not applicable"
    s = summarize(_doc([na]))
    assert s["gate_passed"] and s["claims"]["not applicable"] == 1


@pytest.mark.slow
def test_unobservable_inputs_are_counted_not_failed(cli, tmp_path, read_results):
    """A torch on which 0-byte storage sharing cannot be observed (as 2.1):
    the zero-size examples are not applicable, counted with their reason,
    and the claims are judged (held) on every other example."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import conformance.capabilities as c\nc.storage_identity_observable = lambda: False\n"
    )
    import os

    from tests.conftest import ROOT

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), str(ROOT), env.get("PYTHONPATH")]))
    proc, out = run_gate(cli, tmp_path, "--claims", "clone.new-storage", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (t,) = [t for t in read_results(out)["tests"] if t["device"] == "cpu"]
    assert t["verdict"] == "held"
    ((reason, n),) = t["not_applicable"].items()
    assert "0-byte storage is not observable" in reason and 0 < n < t["examples"]
    assert t["claim_examples"]["clone.new-storage"] == t["examples"] - n
