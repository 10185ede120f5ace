"""torch.compile (aot_eager, inductor) returns x.detach().add_(y) without history, so y
gets no gradient through it.

f(x, y) = x.detach().add_(y) with x = arange(1., 5.) (no grad) and y = leaf * 1, leaf
requiring grad. In eager the in-place add of a tensor that requires grad gives the result a
grad_fn (AddBackward0), like x.clone().add_(y). On torch 2.13 aot_eager and inductor return
it with grad_fn None and requires_grad False, so ((f(x, y) + y).sum()).backward() gives
leaf.grad = 1 instead of eager's 2. Values are eager's; the "eager" backend matches eager.

Pinned by the registered claim compile.detached-alias-history-dropped (deviation of
compile.output-autograd-metadata-matches-eager).
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


def f(x, y):
    return x.detach().add_(y)


def run(call):
    leaf = torch.arange(1.0, 5.0).requires_grad_()
    y = leaf * 1
    out = call(torch.arange(1.0, 5.0), y)
    grad_fn = type(out.grad_fn).__name__ if out.grad_fn is not None else None
    (out + y).sum().backward()
    return grad_fn, leaf.grad.tolist(), out.tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: out.grad_fn={want[0]} leaf.grad={want[1]} out={want[2]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(f"{backend}: out.grad_fn={got[0]} leaf.grad={got[1]} out={got[2]}")
        assert got[2] == want[2], f"{backend} values differ from eager"
        if got[1] != want[1] or (got[0] is None) != (want[0] is None):
            bad.append(f"{backend} out.grad_fn={got[0]}, leaf.grad={got[1]}")
    if bad:
        print(
            f"REPRODUCES: x.detach().add_(y) loses its history: {'; '.join(bad)} "
            f"(eager: grad_fn={want[0]}, leaf.grad={want[1]})"
        )
        return 1
    print(f"FIXED: aot_eager and inductor keep the history (leaf.grad={want[1]}, as eager)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
