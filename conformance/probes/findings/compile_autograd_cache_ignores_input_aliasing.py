"""torch.compile (inductor) with the AOTAutograd cache on: a fresh compile called
with aliasing inputs is served the graph compiled for non-aliasing ones.

def f(x, y):
    x.mul_(2)
    return x + y

compiled(f)(torch.ones(4), torch.ones(4))   # first compile: separate inputs
torch._dynamo.reset()
base = torch.ones(8)
compiled(f)(base[:4], base[2:6])            # fresh compile: overlapping views

Eager (the oracle) returns [4, 4, 3, 3] for the overlapping views (the write
into x changes y's first two elements). With the AOTAutograd cache on (torch
2.13's default; set explicitly here, with a private cache folder), the fresh
inductor compile hits the cache entry of the first compile, which assumed
separate inputs, and returns [3, 3, 3, 3]. With the cache off the same fresh
compile returns eager's [4, 4, 3, 3].

Pinned by the registered claim compile.autograd-cache-ignores-aliasing-pinned
(deviation of compile.autograd-cache-respects-aliasing).
"""

import os
import shutil
import sys
import tempfile
import warnings

CACHE_DIR = tempfile.mkdtemp(prefix="finding_aotautograd_cache_")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = CACHE_DIR  # before torch is imported

import torch  # noqa: E402

warnings.filterwarnings("ignore")
try:
    import logging

    torch._logging.set_logs(
        dynamo=logging.CRITICAL, aot=logging.CRITICAL, inductor=logging.CRITICAL
    )
except Exception:
    pass


def f(x, y):
    x.mul_(2)
    return x + y


def aliased(call):
    base = torch.ones(8)
    return call(base[:4], base[2:6]).tolist()


def fresh_compile_on_aliased(cache_on):
    import torch._functorch.config as functorch_config

    functorch_config.enable_autograd_cache = cache_on
    torch._dynamo.reset()
    torch.compile(f, backend="inductor", fullgraph=True)(torch.ones(4), torch.ones(4))
    torch._dynamo.reset()
    return aliased(torch.compile(f, backend="inductor", fullgraph=True))


def main():
    if not hasattr(torch, "compile"):
        print("NOT APPLICABLE: torch.compile does not exist in this torch")
        return 3
    try:
        import torch._functorch.config as functorch_config
    except ImportError:
        functorch_config = None
    if not hasattr(functorch_config, "enable_autograd_cache"):
        print(
            "NOT APPLICABLE: this torch has no AOTAutograd cache "
            "(torch._functorch.config.enable_autograd_cache)"
        )
        return 3
    want = aliased(f)
    print(f"eager on base[:4], base[2:6]: {want}")
    off = fresh_compile_on_aliased(False)
    print(f"inductor, AOTAutograd cache off, fresh compile on the aliased views: {off}")
    on = fresh_compile_on_aliased(True)
    print(f"inductor, AOTAutograd cache on, fresh compile on the aliased views: {on}")
    if on != want:
        print(
            f"REPRODUCES: with the AOTAutograd cache on, a fresh inductor compile on aliasing "
            f"inputs returns {on} (eager {want}; cache off {off})"
        )
        return 1
    print(
        f"FIXED: with the AOTAutograd cache on, the fresh compile on aliasing inputs returns "
        f"eager's {want}"
    )
    return 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        shutil.rmtree(CACHE_DIR, ignore_errors=True)
    sys.exit(code)
