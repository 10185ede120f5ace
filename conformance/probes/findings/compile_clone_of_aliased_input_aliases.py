"""torch.compile with inductor returns a 'clone' that shares storage with the inputs when
the cloned argument aliases another argument that was written.

f(a0, a1) = {a1.sub_(a1); return a0.clone()} with a0 = base.unsqueeze(0), a1 = base,
base = arange(1., 5.). Eager (and aot_eager) return a tensor with storage of its own; on
torch 2.13 inductor's output shares base's storage, so a write into the 'clone' changes
base. Values are eager's (zeros). With a0, a1 not aliasing, inductor's clone is new.

Pinned by the registered claim compile.clone-of-aliased-input-aliases (deviation of
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
try:  # its key ignores input aliasing (pytorch/pytorch#139789): compile from scratch
    torch._functorch.config.enable_autograd_cache = False
except Exception:
    pass


def f(a0, a1):
    a1.sub_(a1)
    return a0.clone()


def run(call):
    base = torch.arange(1.0, 5.0)
    out = call(base.unsqueeze(0), base)
    values = out.tolist()
    shares = out.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
    out.add_(7)  # a write into the clone must not reach base
    return shares, base.tolist(), values


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    want = run(f)
    print(
        f"eager: shares base's storage={want[0]}, base after out.add_(7)={want[1]}, out={want[2]}"
    )
    bad = []
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        got = run(torch.compile(f, backend=backend, fullgraph=True))
        print(
            f"{backend}: shares base's storage={got[0]}, base after out.add_(7)={got[1]}, out={got[2]}"
        )
        assert got[2] == want[2], f"{backend} values differ from eager"
        if got[:2] != want[:2]:
            bad.append(
                f"{backend} output shares base's storage={got[0]}, "
                f"base after out.add_(7) = {got[1]}"
            )
    if bad:
        print(
            f"REPRODUCES: a0.clone() after a1.sub_(a1), a0 and a1 views of one base: {'; '.join(bad)} "
            f"(eager: new storage, base stays {want[1]})"
        )
        return 1
    print("FIXED: the clone owns new storage under aot_eager and inductor, as in eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
