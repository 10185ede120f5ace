"""torch.compile (inductor): backward through t0.copy_(t0) of a transposed
tensor that requires grad raises a stride AssertionError.

def f(a0):
    t0 = a0 + a0
    return t0.copy_(t0)

leaf = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
f(leaf.t()).sum().backward()

Eager (the oracle) gives leaf.grad = 2 everywhere. On torch 2.13 inductor runs
the forward with eager's values, but backward raises AssertionError ('expected
size 3==3, stride 1==2 at dim=0; ...'). aot_eager, and inductor with a
contiguous a0, give eager's gradient. The project's release runs find backward
working on 2.1.2-2.11.0 and failing from 2.12.0 (a regression).

Pinned by the registered claim
compile.self-copy-of-non-contiguous-grad-output-backward-fails (deviation of
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


def f(a0):
    t0 = a0 + a0
    return t0.copy_(t0)


def run(call):
    leaf = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    out = call(leaf.t())
    values = out.detach().flatten().tolist()
    try:
        out.sum().backward()
    except AssertionError as e:  # the finding: eager's backward runs
        first = (str(e).strip().splitlines() or [""])[0][:160]
        return values, f"backward raised AssertionError: {first}"
    return values, leaf.grad.flatten().tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: out={want[0]} leaf.grad={want[1]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(f"{backend}: out={got[0]} leaf.grad={got[1]}")
        if isinstance(got[1], str):
            bad.append(f"{backend} forward gives eager's values={got[0] == want[0]}, {got[1]}")
        elif got != want:
            bad.append(f"{backend} out={got[0]} leaf.grad={got[1]}")
    if bad:
        print(f"REPRODUCES: {'; '.join(bad)} (eager leaf.grad={want[1]})")
        return 1
    print(f"FIXED: aot_eager and inductor give eager's leaf.grad {want[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
