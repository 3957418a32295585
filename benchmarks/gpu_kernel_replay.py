"""What one kernel of a replayed CUDA graph costs on this GPU, beside the engine's figure.

The engine charges each kernel of a decode step replayed as a CUDA graph ~2,820 cycles of the
part's boost clock (``kernel_costs.replayed_kernel_s``: 2 us at an A100's 1,410 MHz). This
measures it: a chain of small element-wise kernels (``KERNEL_ELEMENTS`` bf16 values each, a
decode layer's norm or residual add) is captured as one graph and replayed; the time per
kernel is the replay's over the chain's length, the median of ``REPLAYS``. It prints the time,
the SM clock NVML reports during the run, their product in cycles, and the engine's figure for
the part with the ratio; information, not a check. A second GPU of another clock tells whether
the cost is cycles (the same count on both) or time (the same microseconds).

Needs a CUDA build of torch (pip install -e '.[probe]'); ``benchmarks/gpu_probe_check.sh`` runs
it. Results go to $OUT (or the directory given).

    python benchmarks/gpu_kernel_replay.py [results-dir]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

# A decode layer's small kernels (RMS norm, residual add, RoPE) touch one hidden vector a
# token: 4,096 bf16 values for an 8B Llama.
KERNEL_ELEMENTS = 4096
# Chain lengths: a llama.cpp Q4 layer launches 30, a 32-layer token 960.
CHAIN_LENGTHS = (32, 256, 1024)
REPLAYS = 50
WARMUP_REPLAYS = 5


def engine_kernel_s(device_name: str) -> tuple[str | None, float | None]:
    """(catalog id, seconds the engine charges a replayed kernel) for the GPU torch names
    ``device_name`` (None, None where neither catalog resolves it)."""
    from recommender.catalog import load_catalog
    from recommender.catalog.names import UnknownAcceleratorError
    from recommender.scoring.kernel_costs import replayed_kernel_s

    catalog = load_catalog()
    try:
        acc = catalog.accelerator(device_name)
    except UnknownAcceleratorError:
        return None, None
    return acc.id, float(replayed_kernel_s([acc])[0])


def _sm_clock_mhz() -> float | None:
    """The SM clock NVML reports now (None without NVML: the probe's own loader)."""
    from probes.nvml import nvml

    lib = nvml()
    if lib is None:
        return None
    try:
        handle = lib.nvmlDeviceGetHandleByIndex(0)
        return float(lib.nvmlDeviceGetClockInfo(handle, lib.NVML_CLOCK_SM))
    except lib.NVMLError:
        return None


def measure(length: int) -> tuple[float, float | None]:
    """(seconds per kernel, SM MHz seen right after) of a replayed chain of ``length``."""
    import torch

    x = torch.zeros(KERNEL_ELEMENTS, device="cuda", dtype=torch.bfloat16)
    one = torch.ones_like(x)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            x.add_(one)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(length):
            x.add_(one)
    for _ in range(WARMUP_REPLAYS):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPLAYS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / length)
    clock = _sm_clock_mhz()
    return statistics.median(times), clock


def main(argv: list[str]) -> int:
    try:
        import torch
    except ImportError as exc:
        sys.exit(f"gpu_kernel_replay: {exc}; install the probe extra: pip install -e '.[probe]'")
    if not torch.cuda.is_available():
        sys.exit("gpu_kernel_replay: torch sees no CUDA GPU: run this on a GPU machine")
    results = Path(argv[1] if len(argv) > 1 else os.environ.get("OUT", "."))
    results.mkdir(parents=True, exist_ok=True)
    name = torch.cuda.get_device_name(0)
    part, engine_s = engine_kernel_s(name)
    rows: list[dict[str, Any]] = []
    print(f"{name} ({part or 'not in the catalogs'}): a replayed kernel of {KERNEL_ELEMENTS} bf16")
    for length in CHAIN_LENGTHS:
        seconds, clock = measure(length)
        cycles = seconds * clock * 1e6 if clock else None
        ratio = seconds / engine_s if engine_s else None
        rows.append({"chain": length, "seconds": seconds, "sm_mhz": clock, "cycles": cycles})
        print(
            f"  chain {length:>5}: {seconds * 1e6:6.2f} us a kernel"
            + (f" at {clock:.0f} MHz = {cycles:,.0f} cycles" if cycles else "")
            + (f"; engine {engine_s * 1e6:.2f} us, measured / engine {ratio:.2f}" if ratio else "")
        )
    summary = {"device": name, "part": part, "engine_seconds": engine_s, "rows": rows}
    (results / "gpu_kernel_replay.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
