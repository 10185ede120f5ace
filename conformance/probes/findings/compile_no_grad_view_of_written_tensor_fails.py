"""torch.compile (aot_eager, inductor) fails to compile a function, called under
no_grad, that makes its argument require grad, takes a view of it and then
writes the argument in place.

def f(a0):
    a0.requires_grad_()
    t1 = a0[:]
    a0.mul_(2)
    return t1

with a0 = torch.arange(1.0, 5.0)[:] (a view of a base that does not require
grad) and the call made under torch.no_grad(). Eager (the oracle) returns
[2, 4, 6, 8]; on torch 2.13 aot_eager and inductor raise BackendCompilerFailed.
Without the write (return a0[:] only) every backend returns eager's values.
Compiled with fullgraph=False: Dynamo does not trace Tensor.requires_grad_()
(fullgraph=True raises Unsupported for that), so it breaks the graph there and
the failure comes from compiling the rest (t1 = a0[:]; a0.mul_(2); return t1).

Pinned by the registered claim compile.no-grad-view-of-written-tensor-fails
(deviation of compile.errors-match-eager).
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

try:
    from torch._dynamo.exc import BackendCompilerFailed
except ImportError:  # no Dynamo: main() reports NOT APPLICABLE first
    BackendCompilerFailed = RuntimeError


def f(a0):
    a0.requires_grad_()
    t1 = a0[:]
    a0.mul_(2)
    return t1


def run(call):
    a0 = torch.arange(1.0, 5.0)[:]
    with torch.no_grad():
        return call(a0).detach().tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: {want}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        try:
            got = run(torch.compile(f, backend=backend))
        except BackendCompilerFailed as e:  # the finding: eager ran the same call
            inner = getattr(e, "inner_exception", None) or e
            first = (str(inner).strip().splitlines() or [""])[0].split(". ")[0][:160]
            what = f"{type(e).__name__} ({type(inner).__name__}: {first})"
            print(f"{backend}: raised {what}")
            bad.append(f"{backend} raised {what}")
            continue
        print(f"{backend}: {got}")
        if got != want:
            bad.append(f"{backend} returned {got}")
    if bad:
        print(f"REPRODUCES: {'; '.join(bad)} (eager returns {want})")
        return 1
    print(f"FIXED: aot_eager and inductor return eager's {want}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
