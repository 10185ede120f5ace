"""The same eager statements behave differently on CUDA and on the CPU (device divergence).

Four eager behaviours, run on both devices (needs CUDA; on a CPU-only machine this prints
NOT APPLICABLE, decided with torch.cuda.is_available()):

1. e = torch.zeros(1).expand(2, 2); e[0] = 1 - the CPU raises the internal-overlap
   RuntimeError ('more than one element of the written-to tensor refers to a single memory
   location'; torch 2.2-2.14), CUDA writes (the Python scalar is filled without the
   overlap check).
2. The bits of NaN + 1 for the float32 NaN 0xffc00001 (sign bit and a payload): x86 CPU
   kernels keep the operand's NaN, CUDA returns the canonical NaN 0x7fffffff (IEEE 754
   leaves the result NaN's sign and payload open).
3. uint16/uint32/uint64 add_, mul_ and integer-tensor indexing: the CPU lacks only add_,
   CUDA (2.11.0+cu130) lacks all nine kernels.
4. a1 = torch.arange(6).reshape(2, 3) (int64); a0 = (torch.tensor([17.]) requiring grad
   * 1)[0]; a1[0] = a0 - on the CPU a1 comes back requiring grad (an integer tensor with a
   grad_fn), on CUDA it does not.

Expected: one eager program gives the same result (or the same error) on both devices,
or the difference is documented; none of these four is. The project's probe output for
2.11.0+cu130 shows all four divergences.

REPRODUCES when any of the four differs between cpu and cuda (listing them); FIXED when
all four agree; NOT APPLICABLE without CUDA.

Claims: sequences.write-overlap-raises (states the CUDA write), sequences.dtype-support
(CUDA kernel gaps), compile.grad-scalar-into-integer-tensor-refused (the eager CPU half of
item 4). Related probe: conformance/probes/cuda_device_differences.py.
"""

import struct
import sys
import warnings

import torch

warnings.filterwarnings("ignore")


def expanded_write(dev):
    e = torch.zeros(1, device=dev).expand(2, 2)
    try:
        e[0] = 1
    except RuntimeError as err:
        return f"RuntimeError ({str(err).splitlines()[0][:40]}...)"
    return f"writes {e.tolist()}"


def nan_bits(dev):
    nan = struct.unpack("<f", struct.pack("<I", 0xFFC00001))[0]
    t = torch.tensor([nan], dtype=torch.float32, device=dev)
    t.add_(1)
    return f"0x{struct.unpack('<I', struct.pack('<f', t.cpu().item()))[0]:08x}"


def wide_unsigned_kernels(dev):
    missing = []
    for name in ("uint16", "uint32", "uint64"):
        dtype = getattr(torch, name, None)
        if dtype is None:
            continue
        for op, fn in (
            ("add_", lambda z: z.add_(z)),
            ("mul_", lambda z: z.mul_(z)),
            ("index", lambda z: z[torch.tensor([0], device=dev)]),
        ):
            try:
                fn(torch.zeros(2, dtype=dtype, device=dev))
            except (RuntimeError, NotImplementedError):
                missing.append(f"{name} {op}")
    return "missing: " + (", ".join(missing) or "none")


def grad_scalar_into_int(dev):
    a1 = torch.arange(6, device=dev).reshape(2, 3)
    a0 = (torch.tensor([17.0], device=dev, requires_grad=True) * 1)[0]
    try:
        a1[0] = a0
    except RuntimeError as err:
        return f"RuntimeError ({str(err).splitlines()[0][:40]}...)"
    return f"a1.requires_grad {a1.requires_grad}"


CHECKS = (
    ("e = zeros(1).expand(2, 2); e[0] = 1", expanded_write),
    ("bits of NaN(0xffc00001) + 1", nan_bits),
    ("uint16/32/64 add_/mul_/index kernels", wide_unsigned_kernels),
    ("int64 a1[0] = 0-d value requiring grad", grad_scalar_into_int),
)


def main():
    if not torch.cuda.is_available():
        print(
            f"NOT APPLICABLE: no CUDA device (torch {torch.__version__}, torch.cuda.is_available() is False)"
        )
        return 3
    differ = []
    for label, check in CHECKS:
        cpu, cuda = check("cpu"), check("cuda")
        print(f"{torch.__version__}: {label}: cpu -> {cpu}; cuda -> {cuda}")
        if cpu != cuda:
            differ.append(f"{label}: cpu {cpu} / cuda {cuda}")
    if not differ:
        print("FIXED: the four eager behaviours agree on cpu and cuda")
        return 0
    print(
        f"REPRODUCES: {len(differ)} of 4 eager behaviours differ between cpu and cuda: "
        + "; ".join(differ)
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
