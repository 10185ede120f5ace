"""torch.compile (inductor) returns views of a non-contiguous intermediate as
new dense tensors.

a0 = torch.arange(1.0, 7.0).reshape(2, 3).t()     # transposed, non-contiguous

def expand_of_clone(a0):
    return a0.clone().expand(2, -1, -1)

def views_of_clone(a0):
    t0 = a0.clone()
    return t0[1:], t0[:1]

Eager (the oracle): the expanded output has a zero stride (strides (0, 1, 3)),
so writing into it raises ("more than one element of the written-to tensor
refers to a single memory location"); the two views share t0's storage. On
torch 2.13 inductor returns the expanded output as a dense tensor (strides
(1, 2, 6), writable) and the two views as tensors that share no storage.
Values are eager's; aot_eager keeps eager's views, and so does inductor for a
contiguous clone or for views returned beside their base.

Pinned by the registered claim
compile.view-of-non-contiguous-intermediate-materialized (deviations of
compile.output-writes-propagate-like-eager and
compile.output-aliasing-matches-eager).
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


def expand_of_clone(a0):
    return a0.clone().expand(2, -1, -1)


def views_of_clone(a0):
    t0 = a0.clone()
    return t0[1:], t0[:1]


def make():
    return torch.arange(1.0, 7.0).reshape(2, 3).t()


def observe(call_expand, call_views):
    e = call_expand(make())
    try:
        e.add_(1)
        writable = True
    except RuntimeError:
        writable = False
    v1, v2 = call_views(make())
    shared = v1.untyped_storage().data_ptr() == v2.untyped_storage().data_ptr()
    values = (call_expand(make()).tolist(), [v.tolist() for v in call_views(make())])
    return tuple(e.stride()), writable, shared, values


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = observe(expand_of_clone, views_of_clone)
    print(f"eager: expand strides={want[0]} writable={want[1]}; views share storage={want[2]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = observe(
            torch.compile(expand_of_clone, backend=backend, fullgraph=True),
            torch.compile(views_of_clone, backend=backend, fullgraph=True),
        )
        print(
            f"{backend}: expand strides={got[0]} writable={got[1]}; "
            f"views share storage={got[2]}; values equal eager={got[3] == want[3]}"
        )
        if got[0] != want[0] or got[1] != want[1]:
            bad.append(f"{backend} expand output strides {got[0]} writable={got[1]}")
        if got[2] != want[2]:
            bad.append(f"{backend} views share storage={got[2]}")
        if got[3] != want[3]:
            bad.append(f"{backend} values differ")
    if bad:
        print(
            f"REPRODUCES: views of a transposed clone come back as new dense tensors: "
            f"{'; '.join(bad)} (eager: strides {want[0]} writable={want[1]}, "
            f"views share storage={want[2]})"
        )
        return 1
    print(
        f"FIXED: aot_eager and inductor return eager's views (strides {want[0]}, "
        f"views share storage={want[2]})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
