"""CPU vs CUDA: the eager behaviours the suite's model and pins treat per device.

Prints one line per behaviour and device (CUDA lines only where
``torch.cuda.is_available()``):

- ``e = t.expand(2, 2); e[0] = 1``: raises the internal-overlap RuntimeError,
  or writes (CUDA fills from the host-side scalar without the overlap check);
- the grad_fn of ``x[0] = 1`` and ``x[...] = 1`` on a 2-d non-leaf;
- the bits of ``NaN + 1`` (float32, a NaN with the sign bit and a payload):
  x86 keeps the operand's NaN, CUDA returns the canonical 0x7fffffff;
- uint16/uint32/uint64 ``add_`` / ``mul_`` / indexing kernels;
- ``a1[0] = a0`` (a1 int64, a0 a 0-d float32 that requires grad): does a1
  come back requiring grad.

Used by: conformance/model (``Model(device=...)``), the pins
test_grad_scalar_into_integer_tensor_refused_pinned and
test_zero_dim_float64_mutation_dropped_pinned.
"""

import struct

import torch


def probe(dev):
    e = torch.zeros(1, device=dev).expand(2, 2)
    try:
        e[0] = 1
        print(dev, "setitem into expanded: writes", e.tolist())
    except RuntimeError as err:
        print(dev, "setitem into expanded: RuntimeError", str(err).splitlines()[0][:80])
    for index in (0, Ellipsis):
        x = torch.ones(2, 3, device=dev, requires_grad=True) * 1
        x[index] = 1.0
        print(dev, f"x[{index!r}] = 1 grad_fn:", type(x.grad_fn).__name__)
    nan = struct.unpack("<f", struct.pack("<I", 0xFFC00001))[0]
    t = torch.tensor([nan], dtype=torch.float32, device=dev)
    t.add_(1)
    bits = struct.unpack("<I", struct.pack("<f", t.cpu().item()))[0]
    print(dev, f"NaN(0xffc00001) + 1 = 0x{bits:08x}")
    for dt in ("uint16", "uint32", "uint64"):
        dtype = getattr(torch, dt, None)
        if dtype is None:
            continue
        res = []
        for name, fn in (
            ("add_", lambda z: z.add_(z)),
            ("mul_", lambda z: z.mul_(z)),
            ("index", lambda z: z[torch.tensor([0], device=dev)]),
        ):
            try:
                fn(torch.zeros(2, dtype=dtype, device=dev))
                res.append(f"{name} ok")
            except (RuntimeError, NotImplementedError) as err:
                res.append(f"{name} {type(err).__name__}")
        print(dev, dt, ", ".join(res))
    a1 = torch.arange(6, device=dev).reshape(2, 3)
    a0 = (torch.tensor([17.0], device=dev, requires_grad=True) * 1)[0]
    a1[0] = a0
    print(
        dev,
        "int64 a1[0] = 0-d grad value: requires_grad",
        a1.requires_grad,
        a1.detach()[0].tolist(),
    )


print("torch", torch.__version__)
probe("cpu")
if torch.cuda.is_available():
    probe("cuda")
