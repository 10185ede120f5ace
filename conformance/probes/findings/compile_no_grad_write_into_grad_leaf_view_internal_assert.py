"""torch.compile fails on a no_grad write into a view of a leaf that requires grad, on
every backend (the Dynamo-only "eager" backend included).

f(x) = {with no_grad(): x[...] = 0; return x + 1} with x = leaf.t(), leaf a (2, 3)
float32 leaf that requires grad. Eager accepts it (a write under no_grad into a view of a
grad leaf is allowed) and returns ones. On torch 2.13 torch.compile raises
TorchRuntimeError ('new_fn INTERNAL ASSERT FAILED' at autograd/variable.cpp) while Dynamo
propagates fake tensors, whatever the backend; torch 2.5-2.10 and 2.14.1 compile it.

Pinned by the registered claim compile.inplace-on-grad-leaf-view-fails (first form;
deviation of compile.errors-match-eager).
"""

import re
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
    with torch.no_grad():
        x[...] = 0
    return x + 1


def inputs():
    leaf = torch.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    return leaf.t()


def assert_text(exc):
    """'new_fn INTERNAL ASSERT FAILED at variable.cpp:NNN' out of Dynamo's long message."""
    m = re.search(r"(\w+) INTERNAL ASSERT FAILED at \"([^\"]*)\":(\d+)", str(exc))
    if m is None:
        return str(exc).strip().splitlines()[0][:200]
    return f"'{m.group(1)} INTERNAL ASSERT FAILED at {m.group(2).rsplit('/', 1)[-1]}:{m.group(3)}'"


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = f(inputs()).tolist()
    print(f"eager (not compiled): returns {want}")
    raised = []
    for backend in ("eager", "aot_eager", "inductor"):
        torch._dynamo.reset()
        try:
            got = torch.compile(f, backend=backend, fullgraph=True)(inputs()).tolist()
        except Exception as e:
            # 2.11-2.13 raise the INTERNAL ASSERT this finding is named after; other
            # releases refuse the same program with other errors: still an error where
            # eager runs, reported with its own text.
            msg = f"{type(e).__name__} {assert_text(e)}"
            print(f"backend={backend}: raised {msg}")
            raised.append((backend, msg))
            continue
        print(f"backend={backend}: returns {got}")
        assert got == want, f"{backend} returned {got}, eager {want}"
    if raised:
        names = ", ".join(b for b, _ in raised)
        print(
            f"REPRODUCES: no_grad x[...] = 0 into a view of a grad leaf, then x + 1: backends {names} raise "
            f"{raised[0][1]} (eager returns {want})"
        )
        return 1
    print(f"FIXED: every backend compiles it and returns eager's {want}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
