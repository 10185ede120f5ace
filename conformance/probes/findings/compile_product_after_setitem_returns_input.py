"""torch.compile (inductor) returns the argument itself for x * 1 after a slice
write into x (torch 2.14.1).

def f(x):
    x[1:3] = 5
    return x * 1

Eager (the oracle) returns a new tensor; the project's probe
(conformance/probes/inductor_setitem_output_aliases_input.py) finds that
inductor on torch 2.14.1 returns x itself (out is x), so a write into the
output writes the caller's x, while torch 2.13.0 returns a new tensor. The
other forms the probe tries (x[...] = 0, x.add_(1), x.add_(1); x.mul_(2), each
followed by return x * 1) are unaffected, and so is aot_eager. The clone form
(x[1:3] = 5; return x.clone()) returns x already on 2.13: see
compile_clone_after_setitem_returns_input.py.

No claim pins it: the suite records it as the torch >=2.14 deviation of
compile.issue-135441-setitem-bumps-version (aliasing aspect), and the probe above.
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


def f(x):
    x[1:3] = 5
    return x * 1


def run(call):
    x = torch.ones(4)
    out = call(x)
    shares = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    return out is x, shares, out.tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: out is x={want[0]} shares storage={want[1]} values={want[2]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(f"{backend}: out is x={got[0]} shares storage={got[1]} values={got[2]}")
        if got != want:
            bad.append(f"{backend}: out is x={got[0]}, shares storage={got[1]}, values {got[2]}")
    if bad:
        print(
            f"REPRODUCES: x[1:3] = 5; return x * 1 returns the argument: {'; '.join(bad)} "
            "(eager: a new tensor)"
        )
        return 1
    print(f"FIXED: aot_eager and inductor return a new tensor for x * 1 (values {want[2]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
