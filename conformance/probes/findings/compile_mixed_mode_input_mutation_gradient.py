"""torch.compile (aot_eager, inductor), called under no_grad, drops the history of a write
into a grad input made inside an enable_grad() block: the leaf gets a wrong gradient.

f(a) = {with enable_grad(): a.mul_(-2); return a * 1} with a = leaf * 1, leaf =
arange(1., 5.) requiring grad, called under torch.no_grad(). In eager the write recorded
under enable_grad gives a a MulBackward0 grad_fn, so a.sum().backward() leaves
leaf.grad = -2. On torch 2.13 aot_eager and inductor replay the write without its history:
leaf.grad = 1 (a.grad_fn is still the MulBackward0 of leaf * 1). Values are eager's; the
Dynamo-only "eager" backend matches eager.

Pinned by the registered claim compile.mixed-mode-input-mutation-gradient (deviation of
compile.gradients-match-eager).
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


def f(a):
    with torch.enable_grad():
        a.mul_(-2)
    return a * 1


def run(call):
    leaf = torch.arange(1.0, 5.0).requires_grad_()
    a = leaf * 1
    before = a.grad_fn  # MulBackward0 of leaf * 1
    with torch.no_grad():
        out = call(a)
    recorded = a.grad_fn is not before  # the write under enable_grad gave a a new grad_fn
    a.sum().backward()
    return leaf.grad.tolist(), recorded, a.tolist(), out.tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: leaf.grad={want[0]} write recorded in a.grad_fn={want[1]} a={want[2]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(f"{backend}: leaf.grad={got[0]} write recorded in a.grad_fn={got[1]} a={got[2]}")
        assert got[2:] == want[2:], f"{backend} values differ from eager"
        if got[:2] != want[:2]:
            bad.append(f"{backend} leaf.grad={got[0]}, write recorded={got[1]}")
    if bad:
        print(
            f"REPRODUCES: enable_grad a.mul_(-2) under an outer no_grad: {'; '.join(bad)} "
            f"(eager leaf.grad={want[0]})"
        )
        return 1
    print(f"FIXED: aot_eager and inductor give eager's leaf.grad={want[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
