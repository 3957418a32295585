"""Host<->device copy bandwidth (pinned and pageable) and GPU-to-GPU peer bandwidth.

nvbandwidth's method: 512 MiB buffers, several back-to-back copies per timed sample, CUDA
events on the copying stream, the median over samples. Pinned (page-locked) host memory is
what DMA engines read at full PCIe speed; pageable memory goes through a staging buffer
and is what a data loader without ``pin_memory=True`` gets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from probes.timing import Deadline, measure
from recommender.profile import CopyBandwidth, Figure

__all__ = ["BUFFER_BYTES", "Transfers", "host_device_bandwidth", "peer_bandwidth_gbs"]

BUFFER_BYTES = 512 << 20
COPIES_PER_SAMPLE = 4


@dataclass
class Transfers:
    h2d: CopyBandwidth = field(default_factory=CopyBandwidth)
    d2h: CopyBandwidth = field(default_factory=CopyBandwidth)
    skipped: list[str] = field(default_factory=list)


def _repeat(copy: Callable[[], object], times: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(times):
            copy()

    return run


def _figure(
    copy: Callable[[], object],
    nbytes: int,
    device: torch.device,
    deadline: Deadline,
    label: str,
    spec_peak: float | None,
    copies: int,
) -> Figure | None:
    samples = measure(_repeat(copy, copies), device, deadline, warmup=1, max_repeats=10)
    if not samples:
        return None
    timer = "CUDA events" if device.type == "cuda" else "perf_counter"
    return samples.figure(
        copies * nbytes / 1e9,
        unit="GB/s",
        spec_peak=spec_peak,
        method=f"{label}: {copies} x {nbytes / 2**20:.0f} MiB per sample; {timer}; "
        f"median of {len(samples.seconds)}",
    )


def host_device_bandwidth(
    device: torch.device,
    deadline: Deadline,
    *,
    spec_peak: float | None = None,
    buffer_bytes: int = BUFFER_BYTES,
    copies: int = COPIES_PER_SAMPLE,
) -> Transfers:
    """H2D and D2H GB/s from pinned and from pageable host memory (GPU only)."""
    result = Transfers()
    if device.type != "cuda":
        result.skipped.append("host<->device copies: no accelerator (--device cpu)")
        return result
    dev = torch.empty(buffer_bytes, dtype=torch.uint8, device=device)
    pageable = torch.ones(buffer_bytes, dtype=torch.uint8)
    pinned = torch.empty(buffer_bytes, dtype=torch.uint8, pin_memory=True).fill_(1)
    cases: list[tuple[str, Callable[[], object]]] = [
        ("h2d pinned", lambda: dev.copy_(pinned, non_blocking=True)),
        ("h2d pageable", lambda: dev.copy_(pageable)),
        ("d2h pinned", lambda: pinned.copy_(dev, non_blocking=True)),
        ("d2h pageable", lambda: pageable.copy_(dev)),
    ]
    for i, (label, copy) in enumerate(cases):
        share = deadline.fraction(1.0 / (len(cases) - i))
        fig = _figure(copy, buffer_bytes, device, share, label, spec_peak, copies)
        if fig is None:
            result.skipped.append(f"{label}: over the time budget")
            continue
        direction = result.h2d if label.startswith("h2d") else result.d2h
        setattr(direction, label.split()[1], fig)
    return result


def peer_bandwidth_gbs(
    deadline: Deadline,
    *,
    spec_peak: float | None = None,
    buffer_bytes: int = BUFFER_BYTES,
    copies: int = COPIES_PER_SAMPLE,
) -> Figure | None:
    """GB/s of copies from GPU 0 to GPU 1, timed on the host around both devices' sync."""
    src_dev, dst_dev = torch.device("cuda", 0), torch.device("cuda", 1)
    src = torch.ones(buffer_bytes, dtype=torch.uint8, device=src_dev)
    dst = torch.empty(buffer_bytes, dtype=torch.uint8, device=dst_dev)

    def copy_and_wait() -> None:
        for _ in range(copies):
            dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize(src_dev)
        torch.cuda.synchronize(dst_dev)

    samples = measure(copy_and_wait, torch.device("cpu"), deadline, warmup=1, max_repeats=10)
    if not samples:
        return None
    p2p = torch.cuda.can_device_access_peer(0, 1)
    return samples.figure(
        copies * buffer_bytes / 1e9,
        unit="GB/s",
        spec_peak=spec_peak,
        method=f"cuda:0 -> cuda:1, {copies} x {buffer_bytes / 2**20:.0f} MiB per sample, "
        f"peer access {'on' if p2p else 'off (through host)'}; perf_counter around sync; "
        f"median of {len(samples.seconds)}",
    )
