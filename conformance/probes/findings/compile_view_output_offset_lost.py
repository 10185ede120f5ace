"""torch.compile (aot_eager, inductor) returns a view argument regenerated at
storage offset 0 when two other arguments that alias each other are written.

def f(a0, a1, a2):
    t0 = a2.zero_()
    a0.copy_(a1)
    return t0

b0 = torch.arange(1, 5); b1 = torch.arange(15, 19)
f(b0[:][:], b0, b1[:].select(0, 1))

Eager (the oracle) returns a2 itself: a 0-d view of b1 at storage offset 1
holding 0. On torch 2.13 aot_eager and inductor return a new 0-d view of b1 at
storage offset 0, reading b1[0] = 15; a2 itself is written correctly. A write
through one alias alone (a0.add_(1), a1.sub_(a1)) returns a2 correctly. The
AOTAutograd cache is switched off so that a cached graph compiled for
non-aliasing inputs cannot be served (see
compile_autograd_cache_ignores_input_aliasing.py).

Pinned by the registered claim compile.view-output-offset-lost (deviation of
compile.outputs-match-eager).
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
    import torch._functorch.config as _functorch_config

    if hasattr(_functorch_config, "enable_autograd_cache"):
        _functorch_config.enable_autograd_cache = False
except ImportError:
    pass


def f(a0, a1, a2):
    t0 = a2.zero_()
    a0.copy_(a1)
    return t0


def run(call):
    b0, b1 = torch.arange(1, 5), torch.arange(15, 19)
    a2 = b1[:].select(0, 1)
    out = call(b0[:][:], b0, a2)
    return out.item(), out.storage_offset(), a2.item()


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(f"eager: out={want[0]} storage_offset={want[1]} a2={want[2]}")
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(f"{backend}: out={got[0]} storage_offset={got[1]} a2={got[2]}")
        if got != want:
            bad.append(f"{backend} returns {got[0]} at storage offset {got[1]} (a2 = {got[2]})")
    if bad:
        print(
            f"REPRODUCES: the returned view of a2 lost its offset: {'; '.join(bad)} "
            f"(eager returns a2: {want[0]} at offset {want[1]})"
        )
        return 1
    print(f"FIXED: aot_eager and inductor return a2 ({want[0]} at storage offset {want[1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
