"""Device memory bandwidth: a large buffer-to-buffer copy, read and write bytes both counted.

The buffers are far larger than the last-level cache (at least 8x the GPU's L2, 1 GiB on a
GPU by default) so the figure is DRAM/HBM bandwidth, comparable with the spec sheet, which
also counts both directions of traffic. On the CPU the same copy measures host memory.
"""

from __future__ import annotations

import torch

from probes.timing import Deadline, measure
from recommender.profile import Figure

__all__ = ["CPU_BUFFER_BYTES", "GPU_BUFFER_BYTES", "memory_bandwidth_gbs"]

GPU_BUFFER_BYTES = 1 << 30
CPU_BUFFER_BYTES = 256 << 20


def _buffer_bytes(device: torch.device, requested: int | None) -> int:
    if requested is not None:
        return requested
    if device.type != "cuda":
        return CPU_BUFFER_BYTES
    l2 = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0))
    free, _total = torch.cuda.mem_get_info(device)
    return int(min(max(GPU_BUFFER_BYTES, 8 * l2), free // 4))


def memory_bandwidth_gbs(
    device: torch.device,
    deadline: Deadline,
    *,
    spec_peak: float | None = None,
    buffer_bytes: int | None = None,
) -> Figure | None:
    """Median GB/s of ``dst.copy_(src)``, counting the bytes read plus the bytes written."""
    size = _buffer_bytes(device, buffer_bytes)
    src = torch.empty(size // 4, dtype=torch.float32, device=device).fill_(1.0)
    dst = torch.zeros_like(src)
    samples = measure(lambda: dst.copy_(src), device, deadline, warmup=2, max_repeats=30)
    if not samples:
        return None
    moved = 2.0 * src.numel() * src.element_size()
    timer = "CUDA events" if device.type == "cuda" else "perf_counter"
    return samples.figure(
        moved / 1e9,
        unit="GB/s",
        spec_peak=spec_peak,
        method=f"copy of {size / 2**20:.0f} MiB, read + write counted; {timer}; "
        f"median of {len(samples.seconds)}",
    )
