"""bool_tensor.copy_(complex_tensor) of a value with a zero real part and a
non-zero imaginary part (0.5j): True (non-zero, as numpy and .to(bool) say) or
False (the real part only)?"""

import numpy as np
import torch

src = torch.tensor([0.5j, 0j, 1 + 0j], dtype=torch.complex128)
dst = torch.zeros(3, dtype=torch.bool)
dst.copy_(src)
print(
    torch.__version__,
    "copy_:",
    dst.tolist(),
    "to(bool):",
    src.to(torch.bool).tolist(),
    "numpy:",
    np.array([0.5j, 0j, 1 + 0j]).astype(bool).tolist(),
)
