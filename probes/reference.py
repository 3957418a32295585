"""The built-in reference workloads: four typical jobs the probe can time on any machine.

Each follows the ``module:function`` contract (takes a ``torch.device``, returns
``(batches, step)``) and has two sizes: a tiny one that runs on a CPU in seconds and a
realistic one for a GPU (bf16 autocast; fp16 on GPUs without bf16). Batches come from a
small pool made up front, so the loader is nearly free, except ``cnn-train``, whose loader
does the CPU augmentation (flip, uint8 -> float, normalise) a torchvision pipeline does, into
pageable memory.

- ``transformer-train``: GPT-style decoder language-model training step (AdamW).
- ``cnn-train``: ResNet-style image classifier training step (SGD, momentum).
- ``recsys-train``: DLRM-style embedding tables + MLPs, click-through training (SGD).
- ``llm-decode``: greedy decoding of one token per sequence against a full KV cache.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

__all__ = ["REFERENCE", "ReferenceInfo", "WorkloadKind", "compute_dtype"]

WorkloadKind = Literal["training", "inference"]

Batches = Iterator[Any]
Step = Callable[[Any], object]


@dataclass(frozen=True)
class ReferenceInfo:
    make: Callable[[torch.device], tuple[Batches, Step]]
    kind: WorkloadKind
    summary: str


def _gpu(device: torch.device) -> bool:
    return device.type == "cuda"


def compute_dtype(device: torch.device) -> torch.dtype:
    """bf16 on GPUs that have it (Ampere and later), fp16 on older ones, fp32 on the CPU."""
    if not _gpu(device):
        return torch.float32
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def _autocast(device: torch.device) -> contextlib.AbstractContextManager[object]:
    if _gpu(device):
        return torch.autocast("cuda", dtype=compute_dtype(device))
    return contextlib.nullcontext()


def _pool(make: Callable[[], Any], device: torch.device, n: int = 4) -> Batches:
    """Cycle over ``n`` prepared CPU batches, pinned when they will go to a GPU."""
    items = [make() for _ in range(n)]
    if _gpu(device):
        items = [tuple(t.pin_memory() for t in item) for item in items]
    return itertools.cycle(items)


class _Decoder(nn.Module):
    def __init__(self, vocab: int, d: int, layers: int, heads: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(
            d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        n = tokens.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(n, device=tokens.device)
        h = self.blocks(self.embed(tokens), mask=mask, is_causal=True)
        out: torch.Tensor = self.head(h)
        return out


def transformer_train(device: torch.device) -> tuple[Batches, Step]:
    vocab, d, layers, heads, seq, batch = (
        (32000, 1024, 12, 16, 1024, 8) if _gpu(device) else (2048, 128, 2, 4, 64, 8)
    )
    with torch.device(device):
        model = _Decoder(vocab, d, layers, heads)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)

    def step(batch: tuple[torch.Tensor]) -> None:
        (tokens,) = batch
        with _autocast(device):
            logits = model(tokens[:, :-1])
            loss = F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())
        torch.autograd.backward(loss)
        opt.step()
        opt.zero_grad(set_to_none=True)

    return _pool(lambda: (torch.randint(0, vocab, (batch, seq + 1)),), device), step


def _block(cin: int, cout: int, stride: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


def _resnet_like(widths: tuple[int, ...], classes: int) -> nn.Module:
    layers: list[nn.Module] = [
        nn.Conv2d(3, widths[0], 3, 1, 1, bias=False),
        nn.BatchNorm2d(widths[0]),
        nn.ReLU(inplace=True),
    ]
    cin = widths[0]
    for i, w in enumerate(widths):
        layers += [_block(cin, w, 1 if i == 0 else 2), _block(w, w, 1)]
        cin = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1) * 255
_STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) * 255


def _augmented(images: torch.Tensor, labels: torch.Tensor) -> Batches:
    """Yield flipped, normalised float32 NCHW batches made from uint8 NHWC images."""
    while True:
        x = images.permute(0, 3, 1, 2).float()
        x = torch.where(torch.rand(x.shape[0], 1, 1, 1) < 0.5, x.flip(3), x)
        yield ((x - _MEAN) / _STD).contiguous(), labels


def cnn_train(device: torch.device) -> tuple[Batches, Step]:
    side, batch, widths = (224, 128, (64, 128, 256, 512)) if _gpu(device) else (32, 16, (8, 16))
    with torch.device(device):
        model = _resnet_like(widths, 1000)
    if _gpu(device):
        model = model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(batch: tuple[torch.Tensor, torch.Tensor]) -> None:
        x, y = batch
        if _gpu(device):
            x = x.contiguous(memory_format=torch.channels_last)
        with _autocast(device):
            loss = F.cross_entropy(model(x), y)
        torch.autograd.backward(loss)
        opt.step()
        opt.zero_grad(set_to_none=True)

    images = torch.randint(0, 256, (batch, side, side, 3), dtype=torch.uint8)
    return _augmented(images, torch.randint(0, 1000, (batch,))), step


class _Dlrm(nn.Module):
    def __init__(self, tables: int, rows: int, dim: int, dense: int, top: tuple[int, ...]) -> None:
        super().__init__()
        self.embeddings = nn.ModuleList(
            nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(tables)
        )
        self.bottom = nn.Sequential(nn.Linear(dense, 4 * dim), nn.ReLU(), nn.Linear(4 * dim, dim))
        sizes = ((tables + 1) * dim, *top)
        mlp: list[nn.Module] = []
        for a, b in itertools.pairwise(sizes):
            mlp += [nn.Linear(a, b), nn.ReLU()]
        self.top = nn.Sequential(*mlp, nn.Linear(sizes[-1], 1))

    def forward(self, dense: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
        pooled = [emb(ids[:, i : i + 1]) for i, emb in enumerate(self.embeddings)]
        out: torch.Tensor = self.top(torch.cat([self.bottom(dense), *pooled], dim=1))
        return out.squeeze(1)


def recsys_train(device: torch.device) -> tuple[Batches, Step]:
    tables, rows, dim, batch, top = (
        (26, 200_000, 128, 8192, (1024, 512, 256)) if _gpu(device) else (8, 10_000, 16, 256, (64,))
    )
    with torch.device(device):
        model = _Dlrm(tables, rows, dim, 13, top)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step(batch: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> None:
        dense, ids, clicks = batch
        with _autocast(device):
            logits = model(dense, ids)
        torch.autograd.backward(F.binary_cross_entropy_with_logits(logits.float(), clicks))
        opt.step()
        opt.zero_grad(set_to_none=True)

    def make() -> tuple[torch.Tensor, ...]:
        return (
            torch.randn(batch, 13),
            torch.randint(0, rows, (batch, tables)),
            torch.randint(0, 2, (batch,)).float(),
        )

    return _pool(make, device), step


class _CachedAttention(nn.Module):
    """One decoder layer attending over a full, fixed-length KV cache (a ring buffer)."""

    k: torch.Tensor
    v: torch.Tensor

    def __init__(self, d: int, heads: int, batch: int, cache: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.out = nn.Linear(d, d, bias=False)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        shape = (batch, heads, cache, d // heads)
        self.register_buffer("k", torch.randn(shape))
        self.register_buffer("v", torch.randn(shape))

    def forward(self, x: torch.Tensor, pos: int) -> torch.Tensor:
        b = x.shape[0]
        q, k, v = self.qkv(self.norm1(x)).view(b, 1, 3, self.heads, -1).unbind(2)
        self.k[:, :, pos] = k[:, 0]
        self.v[:, :, pos] = v[:, 0]
        att = F.scaled_dot_product_attention(q.transpose(1, 2), self.k, self.v)
        x = x + self.out(att.transpose(1, 2).reshape(b, 1, -1))
        out: torch.Tensor = x + self.mlp(self.norm2(x))
        return out


def llm_decode(device: torch.device) -> tuple[Batches, Step]:
    vocab, d, layers, heads, cache, batch = (
        (32000, 2048, 16, 16, 1024, 32) if _gpu(device) else (2048, 128, 2, 4, 64, 4)
    )
    dtype = compute_dtype(device)
    with torch.device(device):
        embed = nn.Embedding(vocab, d).to(dtype)
        blocks = nn.ModuleList(_CachedAttention(d, heads, batch, cache) for _ in range(layers))
        blocks = blocks.to(dtype)
        head = nn.Linear(d, vocab, bias=False).to(dtype)
    position = itertools.count()

    @torch.inference_mode()
    def step(batch_: tuple[torch.Tensor]) -> None:
        (tokens,) = batch_
        pos = next(position) % cache
        h = embed(tokens)
        for block in blocks:
            h = block(h, pos)
        head(h[:, -1]).argmax(-1)

    return _pool(lambda: (torch.randint(0, vocab, (batch, 1)),), device), step


REFERENCE: dict[str, ReferenceInfo] = {
    "transformer-train": ReferenceInfo(
        transformer_train, "training", "GPT-style decoder LM training (AdamW)"
    ),
    "cnn-train": ReferenceInfo(cnn_train, "training", "ResNet-style image classifier training"),
    "recsys-train": ReferenceInfo(recsys_train, "training", "DLRM-style click-through training"),
    "llm-decode": ReferenceInfo(llm_decode, "inference", "greedy LLM decoding, full KV cache"),
}
