"""t.is_set_to(u) where u is a conjugate view (t.conj()) or a negative view
(t.conj().imag) with the same storage, storage offset, sizes and strides:
True, as the docstring says, or False (the math-bit fallback materializes
the argument first)? Plain views (t[...], t.imag) for comparison."""

import torch

t = torch.zeros(2, 3, dtype=torch.complex64)
conj = t.conj()
neg = conj.imag
same = (
    conj.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
    and conj.storage_offset() == t.storage_offset()
    and conj.stride() == t.stride()
    and conj.shape == t.shape
)
print(
    torch.__version__,
    "same layout:",
    same,
    "t.is_set_to(t.conj()):",
    t.is_set_to(conj),
    "t.conj().is_set_to(t):",
    conj.is_set_to(t),
    "t.conj().is_set_to(itself):",
    conj.is_set_to(conj),
    "neg.is_set_to(itself):",
    neg.is_set_to(neg),
    "t.is_set_to(t[...]):",
    t.is_set_to(t[...]),
    "t.imag.is_set_to(t.imag):",
    t.imag.is_set_to(t.imag),
)
