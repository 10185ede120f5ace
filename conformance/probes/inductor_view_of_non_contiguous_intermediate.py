# Does inductor return an output view of an intermediate as eager does when
# the intermediate is not contiguous? (thorough seed 2 on 2.13 at edebd72:
# t0 = a0.clone(); return t0.expand(...) for a transposed a0 came back dense.)
# Prints, per form and backend, each output's strides and storage offset, which
# outputs share storage, and whether a write into out0 raises.
import torch

print(torch.__version__)


def base():
    return torch.arange(1.0, 7.0).reshape(2, 3)


def expand_of_clone(a0):
    return a0.clone().expand(2, -1, -1)


def views_of_clone(a0):
    t0 = a0.clone()
    return t0[1:], t0[:1]


def views_beside_base(a0):
    t0 = a0.clone()
    return t0, t0[1:]


def view_of_product(a0):
    return (a0 * 2)[1:]


FORMS = [
    ("expand-of-transposed-clone", expand_of_clone, lambda: base().t()),
    ("views-of-transposed-clone", views_of_clone, lambda: base().t()),
    ("expand-of-contiguous-clone", expand_of_clone, base),
    ("views-beside-their-base", views_beside_base, lambda: base().t()),
    ("view-of-transposed-product", view_of_product, lambda: base().t()),
]

for name, fn, make in FORMS:
    for backend in ("eager-mode", "aot_eager", "inductor"):
        torch._dynamo.reset()
        f = fn if backend == "eager-mode" else torch.compile(fn, backend=backend)
        try:
            out = f(make())
        except Exception as e:  # noqa: BLE001 - a probe reports what happens
            print(name, backend, "raised", type(e).__name__, str(e).splitlines()[0][:120])
            continue
        outs = out if isinstance(out, tuple) else (out,)
        layout = [(tuple(o.stride()), o.storage_offset()) for o in outs]
        ptrs = [o.untyped_storage().data_ptr() for o in outs]
        shared = len(set(ptrs)) < len(ptrs)
        try:
            outs[0].add_(1)
            write = "write ok"
        except RuntimeError as e:
            write = "write raised " + str(e).splitlines()[0][:60]
        print(name, backend, "strides/offsets", layout, "outputs share storage:", shared, write)
