"""Eager: a uint16 (also uint32, uint64) tensor saves in torch.save's legacy
format and pickles, but loading it raises AttributeError.

t = torch.tensor([1, 2], dtype=torch.uint16)
torch.save(t, buf, _use_new_zipfile_serialization=False)   # works
torch.load(buf, weights_only=False)    # AttributeError: type object
                                       # 'torch.storage.UntypedStorage' has no attribute 'dtype'
pickle.loads(pickle.dumps(t))          # the same AttributeError

The legacy persistent_load reads storage_type.dtype, and these dtypes (torch 2.3)
have no typed storage class, so the saved record names UntypedStorage. The zip
format round-trips the same tensor. Expected: every format that saves the
tensor loads it back (values, dtype, shape).

Pinned by the registered claim serialization.wide-unsigned-legacy-load-fails
(where serialization.metadata-and-values-round-trip deviates).
"""

import io
import pickle
import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def main():
    if not hasattr(torch, "uint16"):
        print(f"NOT APPLICABLE: torch {torch.__version__} has no torch.uint16")
        return 3
    release = tuple(int(v) for v in torch.__version__.split("+")[0].split(".")[:2])
    if release < (2, 6):
        # torch.save and pickle learned uint16 in 2.6 (2.4.1 and 2.5.1 raise KeyError
        # 'dtype torch.uint16 is not recognized' on saving, in either format).
        print(f"NOT APPLICABLE: torch {torch.__version__} cannot save a uint16 tensor (< 2.6)")
        return 3
    t = torch.tensor([1, 2], dtype=torch.uint16)
    legacy = io.BytesIO()
    # control: the zip format round-trips it
    buf = io.BytesIO()
    torch.save(t, buf)
    buf.seek(0)
    z = torch.load(buf, weights_only=False)
    assert z.dtype == torch.uint16 and z.tolist() == [1, 2], f"zip round trip gave {z!r}"
    torch.save(t, legacy, _use_new_zipfile_serialization=False)
    data = pickle.dumps(t)
    loads = {
        "torch.load(legacy, weights_only=False)": lambda: torch.load(
            io.BytesIO(legacy.getvalue()), weights_only=False
        ),
        "torch.load(legacy, weights_only=True)": lambda: torch.load(
            io.BytesIO(legacy.getvalue()), weights_only=True
        ),
        "pickle.loads(pickle.dumps(t))": lambda: pickle.loads(data),
    }
    failed = []
    for name, load in loads.items():
        try:
            u = load()
        except AttributeError as e:
            failed.append(f"{name}: AttributeError: {str(e).splitlines()[0]}")
            continue
        ok = u.dtype == torch.uint16 and u.tolist() == [1, 2]
        print(f"{name}: {u!r}")
        if not ok:
            raise AssertionError(f"{name} loaded {u!r}")
    for f in failed:
        print(f)
    if failed:
        print(
            f"REPRODUCES: a uint16 tensor saved in the legacy format / pickled does not load "
            f"({len(failed)} of {len(loads)} loads): {failed[0]}"
        )
        return 1
    print("FIXED: the legacy format and pickle round-trip a uint16 tensor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
