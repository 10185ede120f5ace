"""torch.compile (aot_eager, inductor) refuses x.detach().add_(1) when x is a view of a
leaf that requires grad.

f(x) = {x.detach().add_(1); return x * 1} with x = leaf.unsqueeze(1), leaf = arange(1., 5.)
requiring grad, grad mode enabled. Eager accepts it (the detached alias does not require
grad, so autograd does not see the write) and returns [[2], [3], [4], [5]]. On torch 2.13
aot_eager and inductor raise RuntimeError 'a view of a leaf Variable that requires grad is
being used in an in-place operation': they replay the write on the input view outside the
graph. The Dynamo-only "eager" backend runs it.

Pinned by the registered claim compile.inplace-on-grad-leaf-view-fails (third form;
deviation of compile.errors-match-eager).
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

REFUSAL = "a view of a leaf Variable that requires grad"


def f(x):
    x.detach().add_(1)
    return x * 1


def inputs():
    leaf = torch.arange(1.0, 5.0).requires_grad_()
    return leaf.unsqueeze(1)


def line_with(exc, text):
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    hit = [ln for ln in lines if text in ln]
    return (hit or lines or [""])[0][:200]


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = f(inputs()).tolist()
    print(f"eager: returns {want}")
    raised = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        try:
            got = torch.compile(f, backend=backend, fullgraph=True)(inputs()).tolist()
        except Exception as e:
            if REFUSAL not in str(e):
                raise
            msg = f"{type(e).__name__}: {line_with(e, REFUSAL)}"
            print(f"{backend}: raised {msg}")
            raised.append((backend, msg))
            continue
        print(f"{backend}: returns {got}")
        assert got == want, f"{backend} returned {got}, eager {want}"
    if raised:
        names = ", ".join(b for b, _ in raised)
        print(
            f"REPRODUCES: x.detach().add_(1), x a view of a grad leaf, raises under {names} "
            f"(eager returns {want}): {raised[0][1]}"
        )
        return 1
    print(f"FIXED: aot_eager and inductor run it and return eager's {want}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
