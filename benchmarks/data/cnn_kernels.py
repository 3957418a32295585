"""GPU kernels one eager forward pass of each registry CNN launches, counted from timm's
definitions: every ATen operator call that reaches a device kernel (views, reshapes and other
metadata-only operators excluded), one image, ``model.eval()``, meta device.

    pip install torch timm && python benchmarks/data/cnn_kernels.py
"""

from __future__ import annotations

from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# Registry name -> (timm model, input side).
MODELS = {
    "resnet-50": ("resnet50", 224),
    "resnet-152": ("resnet152", 224),
    "efficientnet-b0": ("efficientnet_b0", 224),
    "efficientnet-b4": ("efficientnet_b4", 320),
    "se-resnext101-32x4d": ("seresnext101_32x4d", 224),
    "mobilenetv3-large": ("mobilenetv3_large_100", 224),
    "convnext-base": ("convnext_base", 224),
    "densenet-121": ("densenet121", 224),
}
# Operators that only describe a tensor (no kernel runs): views and reshapes, allocations,
# and queries of a tensor's metadata.
VIEWS = ("view", "_unsafe_view", "reshape", "_reshape_alias", "t", "transpose", "permute")
MORE_VIEWS = ("expand", "expand_as", "unsqueeze", "squeeze", "slice", "select", "as_strided")
SPLITS = ("alias", "detach", "flatten", "unflatten", "split", "split_with_sizes", "chunk")
OTHERS = ("unbind", "narrow", "view_as", "contiguous", "lift_fresh")
ALLOCATIONS = ("empty", "empty_strided", "empty_like")
QUERIES = ("dim", "size", "stride", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset")
METADATA = frozenset((*VIEWS, *MORE_VIEWS, *SPLITS, *OTHERS, *ALLOCATIONS, *QUERIES))


class Count(TorchDispatchMode):
    """Kernels launched inside the mode, by ATen operator (``decode_kernels.py`` reuses it)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    @property
    def kernels(self) -> int:
        return sum(self.ops.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        name = func.overloadpacket.__name__
        if name not in METADATA:
            self.ops[name] += 1
        return func(*args, **(kwargs or {}))


def count(timm_name: str, side: int) -> int:
    import timm

    with torch.device("meta"):
        model = timm.create_model(timm_name, pretrained=False).eval()
        x = torch.empty(1, 3, side, side)
    with torch.no_grad(), Count() as c:
        model(x)
    return c.kernels


def main() -> None:
    for name, (timm_name, side) in MODELS.items():
        print(f"{name:<22} {timm_name:<24} {side} px: {count(timm_name, side)} kernels")


if __name__ == "__main__":
    main()
