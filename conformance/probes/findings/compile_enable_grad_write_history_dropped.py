"""torch.compile (aot_eager, inductor) drops the autograd history an argument
gains in an enable_grad block when the function is called under no_grad.

def f(a0, a1):
    with torch.enable_grad():
        a0.copy_(a1)
    return a0

with a0 = torch.arange(1.0, 5.0) (does not require grad) and a1 a leaf that
requires grad, called under torch.no_grad(). Eager (the oracle): a0, and the
returned a0, require grad with a CopyBackwards grad_fn (the copy ran with grad
enabled). On torch 2.13 aot_eager and inductor return a0 with
requires_grad=False and no grad_fn, and the argument itself loses it too;
values are eager's. Called with grad enabled, the metadata matches eager.

Pinned by the registered claim compile.enable-grad-write-history-dropped
(deviation of compile.output-autograd-metadata-matches-eager).
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


def f(a0, a1):
    with torch.enable_grad():
        a0.copy_(a1)
    return a0


def run(call):
    a0 = torch.arange(1.0, 5.0)
    a1 = torch.arange(15.0, 19.0).requires_grad_()
    with torch.no_grad():
        out = call(a0, a1)
    name = type(out.grad_fn).__name__ if out.grad_fn is not None else None
    return out.requires_grad, name, a0.requires_grad, out.detach().tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(
        f"eager: out.requires_grad={want[0]} grad_fn={want[1]} a0.requires_grad={want[2]} "
        f"values={want[3]}"
    )
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(
            f"{backend}: out.requires_grad={got[0]} grad_fn={got[1]} a0.requires_grad={got[2]} "
            f"values={got[3]}"
        )
        if got[:3] != want[:3]:
            bad.append(
                f"{backend} out.requires_grad={got[0]} grad_fn={got[1]} a0.requires_grad={got[2]}"
            )
        if got[3] != want[3]:
            bad.append(f"{backend} values {got[3]}")
    if bad:
        print(f"REPRODUCES: {'; '.join(bad)} (eager: requires_grad={want[0]}, grad_fn={want[1]})")
        return 1
    print(
        f"FIXED: aot_eager and inductor keep eager's history (requires_grad={want[0]}, "
        f"grad_fn={want[1]})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
