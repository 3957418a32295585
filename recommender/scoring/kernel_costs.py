"""What one GPU kernel of a decode step costs beyond its roofline: launched one by one from
an eager Python loop, the host's launch (``EAGER_LAUNCH_S``); replayed as a CUDA graph, a
fixed count of the die's own clock cycles (``replayed_kernel_s``), from which the length of
one cycle on each part follows (``cycle_s``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from recommender.catalog.fractions import whole_device_id
from recommender.catalog.schema import Accelerator
from recommender.scoring.achievable import boost_clocks

__all__ = [
    "CUDA_GRAPH_KERNEL_S",
    "EAGER_LAUNCH_S",
    "REFERENCE_KERNEL_CLOCK_MHZ",
    "REFERENCE_KERNEL_CYCLES",
    "cycle_s",
    "replayed_kernel_s",
]

FloatArray = npt.NDArray[np.float64]

# Device time per kernel of a decode step replayed as a CUDA graph (no per-kernel launch from
# the host; ~2 us of tail and scheduling each, NVIDIA's CUDA Graphs blog measurements), taken
# at the boost clock of an A100 (``REFERENCE_KERNEL_CLOCK_MHZ``).
CUDA_GRAPH_KERNEL_S = 2e-6
# A replayed kernel's fixed cost is the die's own work: the front end dispatching its grid,
# the last wave draining, the completion flush before the next kernel starts. All of it runs
# on the die's clock (its DRAM latency, too, is a near-constant count of the die's cycles:
# ``achievable.yaml`` ``memory_latency_cycles``, 572-658 on GA100, GH100 and AD102), so the
# 2 us are cycles: 2,820 at an A100's 1,410 MHz (GA100, ``issue_rate.REFERENCE_DIE``, the
# part llama.cpp's kernel-count prior from ggml-org/llama.cpp#6017 charges them on), 1.12 us
# on an RTX 4090 at 2,520 MHz. A part with no boost clock in ``achievable.yaml`` pays the 2 us.
REFERENCE_KERNEL_CLOCK_MHZ = 1410.0
REFERENCE_KERNEL_CYCLES = CUDA_GRAPH_KERNEL_S * REFERENCE_KERNEL_CLOCK_MHZ * 1e6
# Host time to launch one kernel from an eager PyTorch loop: the PyTorch blog "Accelerating
# Generative AI with PyTorch II: GPT, Fast" (2023) times the eager Llama-2-7B decode loop at
# 39 ms a step on an A100, which launches 32 x 40 + 23 = 1,303 kernels
# (benchmarks/data/decode_kernels.py): 30 us each, part of ``serving_step_s.eager``.
EAGER_LAUNCH_S = 3e-5


def replayed_kernel_s(accs: Sequence[Accelerator]) -> FloatArray:
    """Per accelerator, the device time of one kernel of a decode step replayed as a CUDA
    graph: ``CUDA_GRAPH_KERNEL_S``'s cycles at the part's boost clock (``achievable.yaml``;
    a share of a device, its whole device's), the 2 us themselves where it has none."""
    clocks = boost_clocks()
    out = np.full(len(accs), CUDA_GRAPH_KERNEL_S)
    for i, acc in enumerate(accs):
        # a share of a device (``L4-0.125``) runs its kernels on the whole device's clock
        clock = clocks.get(acc.id) or clocks.get(whole_device_id(acc.id))
        if clock is not None:
            out[i] = CUDA_GRAPH_KERNEL_S * REFERENCE_KERNEL_CLOCK_MHZ / clock.mhz
    return out


def cycle_s(kernel_s: npt.ArrayLike) -> FloatArray:
    """Seconds per clock cycle of each part's die, from its replayed kernel's cost
    (``replayed_kernel_s``), which is ``REFERENCE_KERNEL_CYCLES`` of them (the reference
    clock's for a part with none)."""
    return np.asarray(np.asarray(kernel_s, dtype=float) / REFERENCE_KERNEL_CYCLES)
