"""Activations and FLOPs of one UNet evaluation of the registry's diffusion models.

``forward_activations`` in ``catalogs/models.yaml`` counts, as timm's ``infer_macts`` does for
a CNN (fvcore's activation count: the output elements of every convolution and matrix
multiply), the elements one forward pass writes: what an inference engine's fused build
streams once each, and what eager kernels read and write again in their element-wise passes
(group norm, SiLU, GEGLU, residual adds). Attention itself is not counted (fvcore does not
count ``scaled_dot_product_attention``, whose output the next projection reads); its FLOPs are
reported apart.

The UNets are built from their published ``unet/config.json`` (the diffusers fields that
differ from ``UNet2DConditionModel``'s defaults) on the meta device, so nothing is computed
or downloaded; the parameter count must equal the registry's exact checkpoint count, which
checks the configuration. One evaluation: batch 1, 77 text tokens, the registry resolution.

    pip install torch diffusers && python benchmarks/data/diffusion_activations.py

diffusers 0.42.1 with torch 2.13.0 gave the committed figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from unittest.mock import patch

import torch
import torch.nn.functional as functional
from torch.utils._python_dispatch import TorchDispatchMode

TEXT_TOKENS = 77  # CLIP's context length: every prompt is padded to it
LATENT_CHANNELS = 4
VAE_DOWNSAMPLE = 8  # latent side = image side / 8
FLOP_PER_MAC = 2


@dataclass(frozen=True)
class UNet:
    parameters: int  # the checkpoint's exact count (catalogs/models.yaml)
    image_side: int
    context_dim: int
    config: dict[str, Any] = field(default_factory=dict)
    added_cond: dict[str, int] = field(default_factory=dict)  # SDXL's micro-conditioning


MODELS = {
    # stabilityai/stable-diffusion-xl-base-1.0, unet/config.json
    "stable-diffusion-xl": UNet(
        parameters=2_567_463_684,
        image_side=1024,
        context_dim=2048,
        config={
            "addition_embed_type": "text_time",
            "addition_embed_type_num_heads": 64,
            "addition_time_embed_dim": 256,
            "attention_head_dim": [5, 10, 20],
            "block_out_channels": [320, 640, 1280],
            "cross_attention_dim": 2048,
            "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
            "projection_class_embeddings_input_dim": 2816,
            "sample_size": 128,
            "transformer_layers_per_block": [1, 2, 10],
            "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"],
            "use_linear_projection": True,
        },
        added_cond={"text_embeds": 1280, "time_ids": 6},
    ),
    # stabilityai/stable-diffusion-2-base, unet/config.json
    "stable-diffusion-2": UNet(
        parameters=865_910_724,
        image_side=512,
        context_dim=1024,
        config={
            "attention_head_dim": [5, 10, 20, 20],
            "block_out_channels": [320, 640, 1280, 1280],
            "cross_attention_dim": 1024,
            "sample_size": 64,
            "use_linear_projection": True,
        },
    ),
}

# ATen operators whose output fvcore's activation count takes (conv, linear, matmul, einsum
# reach the dispatcher as these).
COUNTED = frozenset({"convolution", "mm", "addmm", "bmm", "baddbmm"})


class Count(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.activations = 0
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name in COUNTED:
            self.activations += out.numel()
            self.flops += FLOP_PER_MAC * out.numel() * _reduction(name, args)
        return out


def _reduction(name: str, args: tuple[Any, ...]) -> int:
    """Multiply-accumulates per output element: the contracted dimension."""
    if name == "convolution":
        weight = args[1]  # (out, in / groups, kh, kw): in / groups inputs per output
        return int(weight.shape[1] * math.prod(weight.shape[2:]))
    a = args[1] if name in ("addmm", "baddbmm") else args[0]
    return int(a.shape[-1])


class Attention:
    """Stands in for ``scaled_dot_product_attention``: an output of the right shape, and the
    FLOPs of its two matrix products (QK^T and PV), counted apart."""

    def __init__(self) -> None:
        self.flops = 0

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *a: Any, **kw: Any):  # type: ignore[no-untyped-def]
        lq, lk, d = q.shape[-2], k.shape[-2], q.shape[-1]
        batch_heads = math.prod(q.shape[:-2])
        self.flops += 2 * FLOP_PER_MAC * batch_heads * lq * lk * d
        return torch.empty(*q.shape[:-1], v.shape[-1], device=q.device, dtype=q.dtype)


def count(unet: UNet) -> tuple[int, int, int, int]:
    """(parameters, activations, conv + linear FLOPs, attention FLOPs) of one evaluation."""
    from diffusers import UNet2DConditionModel

    with torch.device("meta"):
        model = UNet2DConditionModel(**unet.config).eval()
    side = unet.image_side // VAE_DOWNSAMPLE
    with torch.device("meta"):
        sample = torch.empty(1, LATENT_CHANNELS, side, side)
        context = torch.empty(1, TEXT_TOKENS, unet.context_dim)
        added = {k: torch.empty(1, n) for k, n in unet.added_cond.items()}
        timestep = torch.tensor(10.0)
    attention = Attention()
    with (
        patch.object(functional, "scaled_dot_product_attention", attention),
        torch.no_grad(),
        Count() as c,
    ):
        model(sample, timestep, encoder_hidden_states=context, added_cond_kwargs=added or None)
    params = sum(p.numel() for p in model.parameters())
    return params, c.activations, c.flops, attention.flops


def main() -> None:
    for name, unet in MODELS.items():
        params, acts, flops, attn = count(unet)
        check = "matches" if params == unet.parameters else f"!= registry {unet.parameters:,}"
        print(
            f"{name:<20} {unet.image_side} px: parameters {params:,} ({check}); "
            f"activations {acts / 1e6:,.1f} M; conv + linear {flops / 1e12:.4f} TFLOPs, "
            f"attention {attn / 1e12:.4f} TFLOPs, total {(flops + attn) / 1e12:.4f}"
        )


if __name__ == "__main__":
    main()
