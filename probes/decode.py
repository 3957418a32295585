"""CPU data-decode throughput per core: how fast one core turns stored samples into tensors.

Each codec is timed in the calling thread (one core), in MB of *encoded* input consumed per
second, so that ``bytes_per_sample x samples/s / figure`` is the number of cores a loader
needs. Codecs: ``jpeg`` (Pillow decode of 224x224 photos-like images, the vision
bottleneck), ``zlib`` (compressed record pages, as in Parquet/TFRecord/WebDataset shards),
and ``image-normalize`` (uint8 HWC -> float32 CHW mean/std, torchvision's ToTensor +
Normalize, counted per input byte).
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable

import numpy as np
import torch

from probes.timing import Deadline, measure
from recommender.profile import Figure

__all__ = ["CODECS", "decode_mbs_per_core"]

_CPU = torch.device("cpu")
_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32).reshape(3, 1, 1) * 255
_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32).reshape(3, 1, 1) * 255


def _image(rng: np.random.Generator, side: int) -> np.ndarray:
    """A smooth, photo-like uint8 HWC image (pure noise would not compress like a photo)."""
    coarse = rng.integers(0, 256, size=(side // 8, side // 8, 3)).astype(np.uint8)
    img = np.kron(coarse, np.ones((8, 8, 1), dtype=np.uint8))
    noise = rng.integers(-12, 12, size=img.shape)
    out: np.ndarray = np.clip(img.astype(np.int16) + noise, 0, 255).astype(np.uint8)
    return out


def _jpeg(rng: np.random.Generator) -> tuple[Callable[[], object], int]:
    from PIL import Image  # the probe extra installs Pillow

    blobs = []
    for _ in range(16):
        buf = io.BytesIO()
        Image.fromarray(_image(rng, 224)).save(buf, format="JPEG", quality=90)
        blobs.append(buf.getvalue())

    def decode() -> None:
        for blob in blobs:
            with Image.open(io.BytesIO(blob)) as im:
                np.asarray(im.convert("RGB"))

    return decode, sum(len(b) for b in blobs)


def _zlib(rng: np.random.Generator) -> tuple[Callable[[], object], int]:
    # Text-like bytes (16 symbols) compress about 2:1, like numeric record pages.
    pages = [
        zlib.compress((rng.integers(0, 16, size=64 << 10) + 48).astype(np.uint8).tobytes(), 6)
        for _ in range(64)
    ]

    def decode() -> None:
        for page in pages:
            zlib.decompress(page)

    return decode, sum(len(p) for p in pages)


def _normalize(rng: np.random.Generator) -> tuple[Callable[[], object], int]:
    images = [_image(rng, 224) for _ in range(16)]

    def decode() -> None:
        for img in images:
            (img.transpose(2, 0, 1).astype(np.float32) - _MEAN) / _STD

    return decode, sum(i.nbytes for i in images)


CODECS: dict[str, Callable[[np.random.Generator], tuple[Callable[[], object], int]]] = {
    "jpeg": _jpeg,
    "zlib": _zlib,
    "image-normalize": _normalize,
}


def decode_mbs_per_core(
    deadline: Deadline, *, codecs: tuple[str, ...] = tuple(CODECS)
) -> tuple[dict[str, Figure], list[str]]:
    """Single-core MB/s of encoded input per codec, and the codecs skipped with the reason."""
    rng = np.random.default_rng(0)
    figures: dict[str, Figure] = {}
    skipped: list[str] = []
    for i, name in enumerate(codecs):
        share = deadline.fraction(1.0 / (len(codecs) - i))
        try:
            call, nbytes = CODECS[name](rng)
        except ImportError as exc:
            skipped.append(f"decode {name}: {exc.name or exc} is not installed")
            continue
        samples = measure(call, _CPU, share, warmup=1, max_repeats=15)
        if not samples:
            skipped.append(f"decode {name}: over the time budget")
            continue
        figures[name] = samples.figure(
            nbytes / 1e6,
            unit="MB/s",
            method=f"{name} decode of {nbytes / 1e6:.2f} MB encoded input on one core "
            f"(perf_counter); median of {len(samples.seconds)}",
        )
    return figures, skipped
