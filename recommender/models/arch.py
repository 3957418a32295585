"""Model architectures described exactly, and what follows from the shape alone.

A transformer is counted matrix by matrix, so gated MLPs (SwiGLU / GeGLU: three matrices),
grouped-query attention (``kv_heads`` < ``heads``), separate ``head_dim``, tied embeddings,
mixture-of-experts FFNs (total vs active parameters), DeepSeek's multi-head latent attention
and encoder-decoder stacks come out as their published parameter counts. Sources:

- parameter counts: the matrices of Vaswani et al. 2017 and of each model's published
  ``config.json``; gated MLP: Shazeer 2020, "GLU Variants Improve Transformer"; GQA: Ainslie
  et al. 2023; MoE: Fedus et al. 2022 (Switch), Jiang et al. 2024 (Mixtral); MLA: DeepSeek-AI
  2024, "DeepSeek-V2", section 2.1.
- FLOPs: 2 per multiply-accumulate of every matrix a token passes through (Kaplan et al.
  2020, Table 1), plus attention's score and value products, ``4 s d_attn`` per token and
  layer for the whole score matrix (the PaLM paper's MFU formula, Chowdhery et al. 2022,
  appendix B: ``6N + 12 L H Q T`` for a training token).
- KV cache: K and V of every layer and KV head per token; MLA caches the compressed latent
  and the decoupled RoPE key (``kv_lora_rank + qk_rope_head_dim`` per layer).
- ViT: Dosovitskiy et al. 2021 (patch embedding, class token, learned positions).

Vision CNNs, diffusion UNets and DiTs are described by their published figures (parameters,
forward FLOPs at a stated resolution): their shapes are too varied to count here.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, Discriminator, Field, Tag, model_validator

from recommender.models.transformer import (
    FLOP_PER_MAC,
    ArchBase,
    Count,
    Positive,
    PositiveInt,
    TransformerArch,
)

__all__ = [
    "Architecture",
    "GivenArch",
    "TransformerArch",
    "VisionTransformerArch",
    "at_image_size",
]


class VisionTransformerArch(ArchBase):
    """A ViT (Dosovitskiy et al. 2021): patches of ``patch_size`` of a square image."""

    type: Literal["vit"] = "vit"
    image_size: PositiveInt
    patch_size: PositiveInt
    channels: PositiveInt = 3
    layers: PositiveInt
    hidden_size: PositiveInt
    heads: PositiveInt
    intermediate_size: PositiveInt
    num_classes: Count = 1000
    bias: bool = True
    mlp: Literal["gated", "plain"] = "plain"
    dropout: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.image_size % self.patch_size:
            raise ValueError(
                f"patch_size ({self.patch_size}) must divide image_size ({self.image_size})"
            )
        if self.hidden_size % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide hidden_size ({self.hidden_size})")
        return self

    @property
    def tokens(self) -> int:
        """Patches plus the class token."""
        return (self.image_size // self.patch_size) ** 2 + 1

    def as_encoder(self) -> TransformerArch:
        """The encoder stack as a transformer (no vocabulary), for FLOPs and activations."""
        return TransformerArch(
            type="encoder",
            layers=self.layers,
            hidden_size=self.hidden_size,
            heads=self.heads,
            intermediate_size=self.intermediate_size,
            mlp=self.mlp,
            bias=self.bias,
            dropout=self.dropout,
            sequence_length=self.tokens,
        )

    def _patch_embedding_parameters(self) -> float:
        h = self.hidden_size
        return float(self.channels * self.patch_size**2 * h + h)

    @cached_property
    def parameters(self) -> float:
        h = self.hidden_size
        encoder = self.as_encoder().non_embedding_parameters
        embeddings = self._patch_embedding_parameters() + h + self.tokens * h  # + cls + pos
        head = self.num_classes * h + self.num_classes
        return encoder + embeddings + head

    @cached_property
    def active_parameters(self) -> float:
        return self.parameters

    def forward_flops(self) -> float:
        enc = self.as_encoder()
        per_token = enc.forward_flops_per_token(self.tokens)
        patches = FLOP_PER_MAC * (self.tokens - 1) * self._patch_embedding_parameters()
        head = FLOP_PER_MAC * self.num_classes * self.hidden_size
        return per_token * self.tokens + patches + head


class GivenArch(ArchBase):
    """A model described by its published figures (CNNs, diffusion UNets, DiTs, others)."""

    type: Literal["cnn", "diffusion-unet", "dit", "other"]
    parameters: Positive
    forward_flops: Positive = Field(description="FLOPs of one sample's forward pass.")
    activation_bytes_per_sample: Positive | None = Field(
        default=None, description="Training activations kept for backward, 16-bit, per sample."
    )
    forward_activations: Positive | None = Field(
        default=None,
        description="Activation elements one forward pass writes (timm's infer_macts x 1e6).",
    )
    traffic_activations: Positive | None = Field(
        default=None,
        description="Element-wise traffic of one eager forward pass in ResNet-equivalent conv "
        "outputs, where the net's chain of element-wise kernels per conv output is not a "
        "ResNet's (benchmarks/data/cnn_traffic.py); else forward_activations stands for it.",
    )
    forward_kernels: PositiveInt | None = Field(
        default=None,
        le=10_000_000,
        description="GPU kernels one eager forward pass launches (ATen operators that reach "
        "a kernel; benchmarks/data/cnn_kernels.py counts them from timm's definitions).",
    )
    resolution: str | None = None
    denoising_steps: PositiveInt | None = None

    @cached_property
    def active_parameters(self) -> float:
        return self.parameters


def _architecture_tag(value: Any) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump()
    if not isinstance(value, dict):
        return "transformer"
    kind = value.get("type", value.get("kind", "decoder"))
    if kind == "vit":
        return "vit"
    if kind in ("cnn", "diffusion-unet", "dit", "other"):
        return "given"
    return "transformer"


Architecture = Annotated[
    Annotated[TransformerArch, Tag("transformer")]
    | Annotated[VisionTransformerArch, Tag("vit")]
    | Annotated[GivenArch, Tag("given")],
    Discriminator(_architecture_tag),
]


# A CNN's stated input, "WxH" in pixels (the registry's ``resolution``).
RESOLUTION = re.compile(r"^(\d+)x(\d+)$")
# The per-image figures that follow the pixel count: every convolution, normalisation and
# activation runs once per output pixel of its feature map, whose sides are the input's over
# a fixed stride, so their FLOPs and activation elements scale with H x W. The classifier
# after global pooling does not (ResNet-50: 4.1 MFLOPs of 8.2 G) and is scaled with the rest.
PER_PIXEL_FIELDS = (
    "forward_flops",
    "forward_activations",
    "traffic_activations",
    "activation_bytes_per_sample",
)


def at_image_size(
    arch: VisionTransformerArch | GivenArch, size: int
) -> VisionTransformerArch | GivenArch:
    """``arch`` run on square images ``size`` pixels a side: a ViT's patches follow the
    image; a CNN's per-image FLOPs and activations scale by the pixels against its stated
    ``resolution`` (kernels and parameters stay). Anything else raises ``ValueError``."""
    if isinstance(arch, VisionTransformerArch):
        return VisionTransformerArch.model_validate({**arch.model_dump(), "image_size": size})
    match = RESOLUTION.match(arch.resolution or "")
    if arch.type != "cnn" or match is None:
        raise ValueError(
            "it scales a CNN whose architecture states its resolution ('WxH') "
            f"or a ViT; this is a {arch.type} with resolution {arch.resolution!r}"
        )
    scale = size * size / (int(match[1]) * int(match[2]))
    fields: dict[str, Any] = {"resolution": f"{size}x{size}"}
    for name in PER_PIXEL_FIELDS:
        value = getattr(arch, name)
        if value is not None:
            fields[name] = value * scale
    return GivenArch.model_validate({**arch.model_dump(), **fields})
