"""torch.compile (aot_eager, inductor) drops an in-place op on a 0-d float64 argument (CPU).

f(x) = {x.add_(5); return x * 2} with x = torch.tensor(1.0, dtype=torch.float64).
Eager (the oracle) leaves x == 6 and returns 12. On torch 2.13 CPU the aot_eager and
inductor compiles leave x == 1 (value and version counter unchanged) and return 2: the
write is lost and later reads in the function see the old value. float32 and int64
0-d arguments are not affected.

Pinned by the registered claim compile.zero-dim-float64-mutation-dropped (deviation of
compile.input-mutations-match-eager).
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
    x.add_(5)
    return x * 2


def run(call):
    x = torch.tensor(1.0, dtype=torch.float64)
    v0 = x._version
    out = call(x)
    return x.item(), out.item(), x._version > v0


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: x={want[0]} out={want[1]} version advanced={want[2]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(f"{backend}: x={got[0]} out={got[1]} version advanced={got[2]}")
        if got != want:
            bad.append(f"{backend} leaves x={got[0]}, returns {got[1]}")
    if bad:
        print(
            f"REPRODUCES: x.add_(5) on a 0-d float64 argument is dropped: {'; '.join(bad)} "
            f"(eager: x={want[0]}, returns {want[1]})"
        )
        return 1
    print(
        f"FIXED: aot_eager and inductor apply the write like eager (x={want[0]}, returns {want[1]})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
