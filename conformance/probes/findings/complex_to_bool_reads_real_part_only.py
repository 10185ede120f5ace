"""Complex-to-bool conversion of 0.5j: False on torch 2.1/2.2 (real part only), True from
2.3 on (behaviour change between releases).

bool_tensor.copy_(complex_tensor) and complex_tensor.to(torch.bool) of a value with a
zero real part and a non-zero imaginary part. torch 2.1.2 (and 2.2.2) read only the real
part and give False, unlike NumPy (np.array(0.5j).astype(bool) is True) and Python
(bool(0.5j) is True); from 2.3 the conversion tests the whole value and gives True
(PR #121803 'Fixed behaviour for the conversion of complex tensors to bool', March 2024,
for issue #120875).

REPRODUCES when the installed torch reads only the real part (0.5j converts to False in
copy_ and .to: torch 2.1/2.2); FIXED when it converts the whole value, as NumPy and Python
do (torch >= 2.3, so 2.13).

Claims: sequences.copy-in-place and sequences.as-tensor (recorded deviations for
torch >= 2.1, < 2.3). Related probe: conformance/probes/complex_to_bool_copy.py.
"""

import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def main():
    src = torch.tensor([0.5j, 0j, 1 + 0j], dtype=torch.complex128)
    dst = torch.zeros(3, dtype=torch.bool)
    dst.copy_(src)
    copied = dst.tolist()
    converted = src.to(torch.bool).tolist()
    reference = np.array([0.5j, 0j, 1 + 0j]).astype(bool).tolist()
    print(
        f"{torch.__version__}: [0.5j, 0j, 1+0j] -> bool: copy_ {copied}, .to {converted}, "
        f"numpy {reference}"
    )
    if copied[0] is False or converted[0] is False:
        print(
            f"REPRODUCES: 0.5j converts to False (real part only): copy_ {copied}, "
            f".to {converted}, numpy {reference}"
        )
        return 1
    print(f"FIXED: 0.5j converts to True, as in NumPy: copy_ {copied}, .to {converted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
