"""torch.compile (aot_eager, inductor) loses requires_grad_() called on another name of
an argument or of an intermediate.

Two forms, x = arange(1., 5.) not requiring grad, grad mode enabled:
  * argument: f(x) = {t = x.add_(1); t.requires_grad_(); return x * 2}. t is x (an
    in-place method returns self), so in eager x requires grad after the call and so does
    the output. Compiled: neither does.
  * intermediate: g(x) = {t1 = x.clone(); t2 = t1.sub_(x); t1.requires_grad_(); return t2}.
    t2 is t1, so eager returns a tensor that requires grad; compiled returns one that does
    not (returning t1 by its own name keeps it). This form regressed after 2.9 (2.5.1 and
    2.9.1 keep requires_grad, per the project's release runs).
Values are eager's; the Dynamo-only "eager" backend matches eager.

Pinned by the registered claim compile.requires-grad-through-alias-dropped (deviations of
compile.input-mutations-match-eager and compile.output-autograd-metadata-matches-eager).
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


def argument_other_name(x):
    t = x.add_(1)  # t is x
    t.requires_grad_()
    return x * 2


def intermediate_other_name(x):
    t1 = x.clone()
    t2 = t1.sub_(x)  # t2 is t1
    t1.requires_grad_()
    return t2


def run(call):
    x = torch.arange(1.0, 5.0)
    out = call(x)
    return x.requires_grad, out.requires_grad, out.tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    release = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2])
    if release < (2, 5):
        # Dynamo traces Tensor.requires_grad_ under fullgraph=True from 2.5 (2.4.1 raises
        # Unsupported: Tensor.requires_grad_), so the lost flag cannot be observed before.
        print(
            f"NOT APPLICABLE: torch {torch.__version__}: Dynamo < 2.5 does not trace requires_grad_()"
        )
        return 3
    bad = []
    for fn in (argument_other_name, intermediate_other_name):
        want = run(fn)
        print(
            f"{fn.__name__} eager: x.requires_grad={want[0]} out.requires_grad={want[1]} out={want[2]}"
        )
        for backend in ("aot_eager", "inductor"):
            torch._dynamo.reset()
            got = run(torch.compile(fn, backend=backend, fullgraph=True))
            print(
                f"{fn.__name__} {backend}: x.requires_grad={got[0]} "
                f"out.requires_grad={got[1]} out={got[2]}"
            )
            assert got[2] == want[2], f"{backend} values differ from eager"
            diffs = [
                f"{name}.requires_grad={g} (eager {w})"
                for name, g, w in zip(("x", "out"), got[:2], want[:2], strict=True)
                if g != w
            ]
            if diffs:
                bad.append(f"{fn.__name__} under {backend}: {', '.join(diffs)}")
    if bad:
        print("REPRODUCES: requires_grad_() on another name is lost: " + "; ".join(bad))
        return 1
    print("FIXED: aot_eager and inductor keep requires_grad set through another name, as eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
