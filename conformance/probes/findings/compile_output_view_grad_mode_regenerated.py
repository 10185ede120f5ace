"""torch.compile (aot_eager, inductor) regenerates a returned view of an input in the
caller's grad mode instead of the grad mode it was taken in.

Two forms, x = leaf * 1 with leaf = arange(1., 5.) requiring grad:
  * f(x) = {with no_grad(): v = x[1:]; return v}, called with grad enabled.
    Eager: v.grad_fn is None (a view made under no_grad). Compiled: v has a grad_fn.
  * g(x) = {with enable_grad(): v = x[1:]; return v}, called under no_grad().
    Eager: v.grad_fn is a SliceBackward0. Compiled: v.grad_fn is None.
Values are eager's; the Dynamo-only "eager" backend matches eager.

Pinned by the registered claim compile.output-view-grad-mode-regenerated (deviation of
compile.output-autograd-metadata-matches-eager).
"""

import contextlib
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


def no_grad_view(x):
    with torch.no_grad():
        v = x[1:]
    return v


def enable_grad_view(x):
    with torch.enable_grad():
        v = x[1:]
    return v


FORMS = [  # (function, grad mode of the caller)
    (no_grad_view, "grad"),
    (enable_grad_view, "no_grad"),
]


def run(call, ambient):
    leaf = torch.arange(1.0, 5.0).requires_grad_()
    x = leaf * 1
    with torch.no_grad() if ambient == "no_grad" else contextlib.nullcontext():
        v = call(x)
    return type(v.grad_fn).__name__ if v.grad_fn is not None else None, v.tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    bad = []
    for fn, ambient in FORMS:
        want = run(fn, ambient)
        print(f"{fn.__name__} (called under {ambient}) eager: grad_fn={want[0]} values={want[1]}")
        for backend in ("aot_eager", "inductor"):
            torch._dynamo.reset()
            got = run(torch.compile(fn, backend=backend, fullgraph=True), ambient)
            print(
                f"{fn.__name__} (called under {ambient}) {backend}: grad_fn={got[0]} values={got[1]}"
            )
            assert got[1] == want[1], f"values differ: {got[1]} vs {want[1]}"
            if (got[0] is None) != (want[0] is None):
                bad.append(f"{fn.__name__} under {backend}: grad_fn={got[0]} (eager {want[0]})")
    if bad:
        print("REPRODUCES: returned view regenerated in the caller's grad mode: " + "; ".join(bad))
        return 1
    print("FIXED: the returned views keep eager's grad_fn-is-None under aot_eager and inductor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
