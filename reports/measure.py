"""Timing measurements reported outside the pass/fail gate.

The seed ``001_7607ef73017ad62c.txt`` claims ``detach().clone()`` is faster
than ``clone().detach()`` ("clone을 먼저하면 사용하지 않을 computational graph도
복사해야 한다"). It is a statement about speed, so it is measured with
``torch.utils.benchmark`` and shown with its spread, never gated: timings vary
by machine and load.
"""

from __future__ import annotations

MEASURED_CLAIM = "performance.detach-clone-faster-than-clone-detach"


def measure_detach_clone(
    device: str = "cpu", numels=(1_000, 1_000_000), min_run_time: float = 0.2
) -> dict:
    """Median and IQR (seconds) of both orders for float32 tensors that
    require grad, and the ratio ``clone().detach() / detach().clone()``.

    Returns ``{"claim", "device", "cases": [{numel, detach_clone, clone_detach, ratio}]}``.
    Raises nothing for a missing CUDA: call it only for available devices.
    """
    import torch
    from torch.utils import benchmark

    cases = []
    for numel in numels:
        x = torch.randn(numel, device=device, requires_grad=True)
        res = {}
        for label, stmt in (
            ("detach_clone", "x.detach().clone()"),
            ("clone_detach", "x.clone().detach()"),
        ):
            m = benchmark.Timer(stmt=stmt, globals={"x": x}, label=label).blocked_autorange(
                min_run_time=min_run_time
            )
            res[label] = {"median_s": m.median, "iqr_s": m.iqr, "runs": len(m.times)}
        ratio = res["clone_detach"]["median_s"] / res["detach_clone"]["median_s"]
        cases.append({"numel": numel, **res, "ratio_clone_detach_over_detach_clone": ratio})
    return {
        "claim": MEASURED_CLAIM,
        "device": device,
        "what": "median time of clone().detach() divided by detach().clone(); > 1 means the seed's claim holds here",
        "cases": cases,
    }


def measure_all(devices, quick: bool = True) -> list[dict]:
    """Run every measurement on every available device in ``devices``."""
    from conformance.capabilities import device_unavailable

    out = []
    for dev in devices:
        if dev != "cpu" and device_unavailable(dev):
            continue
        out.append(measure_detach_clone(dev, min_run_time=0.1 if quick else 0.5))
    return out
