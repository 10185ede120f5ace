"""torch.compile turns `p.data = q.data` into an op that advances p's version counter, so
the backward of a graph that saved p before the call fails (pytorch/pytorch#139152).

assign(p, q) = {p.data = q.data; return p * 1}. p is h = leaf * 1.0 (leaf = ones(3),
requires_grad) and y = h * h saved h for backward before the call. Eager (the oracle):
the .data assignment leaves h's version counter alone, y.sum().backward() succeeds and
leaf.grad is [4, 4, 4] (h now holds 2s). Under aot_eager and inductor h._version
advances by 1 and backward raises RuntimeError 'one of the variables needed for gradient
computation has been modified by an inplace operation'. Each run gets fresh tensors.

Pinned by the registered claims compile.issue-139152-data-assignment-keeps-version
(expected deviation) and compile.issue-139152-pinned.
"""

import importlib
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


def _isolate():
    for module, name, value in (
        ("torch._functorch.config", "enable_autograd_cache", False),
        ("torch._inductor.config", "fx_graph_cache", False),
        ("torch._inductor.config", "compile_threads", 1),
    ):
        try:
            mod = importlib.import_module(module)
        except Exception:
            continue
        if hasattr(mod, name):
            setattr(mod, name, value)


def assign(p, q):
    p.data = q.data
    return p * 1


def run(call):
    leaf = torch.ones(3, requires_grad=True)
    h = leaf * 1.0
    y = h * h  # saves h for backward
    v0 = h._version
    out = call(h, torch.full((3,), 2.0))
    delta = h._version - v0
    try:
        y.sum().backward()
        back = f"ok, leaf.grad = {leaf.grad.tolist()}"
    except RuntimeError as err:  # the finding: backward refuses under compile
        back = f"RuntimeError: {str(err).splitlines()[0].split(': [')[0]}"
    return out.detach().tolist(), delta, back


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    _isolate()
    want = run(assign)
    print(f"eager: out {want[0]}, version delta {want[1]}, backward {want[2]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(assign, backend=backend, fullgraph=True))
        print(f"{backend}: out {got[0]}, version delta {got[1]}, backward {got[2]}")
        if got != want:
            bad.append(f"{backend}: version delta {got[1]}, backward {got[2]}")
    torch._dynamo.reset()
    if bad:
        print(
            "REPRODUCES: p.data = q.data inside the compiled function: "
            + "; ".join(bad)
            + f" (eager: version delta {want[1]}, backward {want[2]})"
        )
        return 1
    print(f"FIXED: aot_eager and inductor leave the version counter alone; backward {want[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
