"""torch.compile (inductor) returns the argument itself for x.clone() after an
indexed write into x.

def f(x):
    x[0] = 0            # also x[1:3] = 5
    return x.clone()

Eager (the oracle) returns a new tensor with its own storage; on torch 2.13
inductor returns x itself (out is x), so a later write into the "clone" writes
the caller's x. Values are eager's. aot_eager returns a new tensor; x[...] = 0
is not affected.

Pinned by the registered claim compile.clone-after-setitem-returns-input
(deviation of compile.output-aliasing-matches-eager).
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


def int_index(x):
    x[0] = 0
    return x.clone()


def slice_(x):
    x[1:3] = 5
    return x.clone()


def run(call):
    x = torch.arange(1.0, 5.0)
    out = call(x)
    shares = out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    return out is x, shares, out.tolist()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    bad = []
    for fn, text in ((int_index, "x[0] = 0"), (slice_, "x[1:3] = 5")):
        want = run(fn)
        print(
            f"{text}; return x.clone(): eager out is x={want[0]} shares storage={want[1]} "
            f"values={want[2]}"
        )
        for backend in ("aot_eager", "inductor"):
            torch._dynamo.reset()
            got = run(torch.compile(fn, backend=backend, fullgraph=True))
            print(f"  {backend}: out is x={got[0]} shares storage={got[1]} values={got[2]}")
            if got != want:
                bad.append(
                    f"{backend} {text}: out is x={got[0]}, shares storage={got[1]}, values {got[2]}"
                )
    if bad:
        print(
            f"REPRODUCES: the clone is the argument: {'; '.join(bad)} "
            "(eager: a new tensor with its own storage)"
        )
        return 1
    print("FIXED: every backend returns a new tensor for x.clone() after the write")
    return 0


if __name__ == "__main__":
    sys.exit(main())
