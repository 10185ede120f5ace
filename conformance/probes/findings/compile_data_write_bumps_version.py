"""torch.compile (aot_eager, inductor) advances x's version counter for a write through
x.data.

f(x) = {x.data.add_(1); return x * 2} with x = arange(1., 5.). In eager x.data is a new
tensor with a version counter of its own (writes through .data are hidden from autograd),
so x._version is unchanged. On torch 2.13 aot_eager and inductor replay the input mutation
with a copy_ into x and advance x._version; values are eager's. The consequence shown here:
a graph that saved x before the call (y = w * x) backpropagates in eager but raises
'modified by an inplace operation' after the compiled call.

Pinned by the registered claim compile.data-write-bumps-version (deviation of
compile.version-bumps-match-eager). The x.data = y assignment form is pytorch/pytorch#139152.
"""

import sys
import warnings

import torch

warnings.filterwarnings("ignore")
try:
    import logging

    torch._logging.set_logs(
        dynamo=logging.CRITICAL, aot=logging.CRITICAL, inductor=logging.CRITICAL
    )
except Exception:
    pass


def f(x):
    x.data.add_(1)
    return x * 2


def run(call):
    w = torch.ones(4, requires_grad=True)
    x = torch.arange(1.0, 5.0)
    y = w * x  # saves x (at its current version) for w's gradient
    v0 = x._version
    out = call(x)
    bumped = x._version != v0
    try:
        y.sum().backward()
        backward = "runs"
    except RuntimeError as e:
        if "modified by an inplace operation" not in str(e):
            raise
        backward = "raises 'modified by an inplace operation'"
    return bumped, backward, x.tolist(), out.tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: version advanced={want[0]}, backward {want[1]}, x={want[2]}, out={want[3]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(f"{backend}: version advanced={got[0]}, backward {got[1]}, x={got[2]}, out={got[3]}")
        assert got[2:] == want[2:], f"{backend} values differ from eager"
        if got[:2] != want[:2]:
            bad.append(
                f"{backend} {'advances' if got[0] else 'keeps'} x._version, backward {got[1]}"
            )
    if bad:
        print(
            f"REPRODUCES: x.data.add_(1) in a compiled function: {'; '.join(bad)} "
            f"(eager: version unchanged, backward {want[1]})"
        )
        return 1
    print("FIXED: aot_eager and inductor leave x._version unchanged, as eager does")
    return 0


if __name__ == "__main__":
    sys.exit(main())
