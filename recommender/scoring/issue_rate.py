"""How fast a GPU's multiprocessors issue memory requests, and the decode bandwidth a serving
runtime whose kernels keep few requests in flight reaches with it.

A streaming kernel moves bytes at ``min(memory bandwidth, bytes in flight / latency)``
(Little's law). Kernels tuned for the chip keep enough loads in flight to saturate its
memory; a portable matrix-vector kernel keeps a roughly fixed number of bytes in flight per
multiprocessor, so its rate follows the multiprocessors' count and clock instead of the
memory. llama.cpp's CUDA decode kernels are such a runtime: in ggml-org/llama.cpp#6017
ggerganov's llama-bench generates 74.77 tokens/s with Llama 7B F16 on one A100 80GB PCIe,
1.1 TB/s of weights where its HBM delivers 1.5 (the prior, ``priors.json``, is the limit that
reproduces it), and the development set shows the kernels reaching about 42-55 % of an A100's
or H100's HBM bandwidth where they reach 80-90 % of consumer GDDR cards', whose
multiprocessors are fewer per byte/s of memory.

The bytes a kernel keeps in flight per multiprocessor are the kernel's; the time each request
waits is the die's DRAM latency, which a pointer chase measures in the die's own cycles
(``achievable.yaml`` ``memory_latency_cycles``: 572 on an A100, 658 on an H100 PCIe, 632 on an
L40). The limit is therefore stated at the A100's latency (``REFERENCE_DIE``, the part the
prior was measured on) and scales on another die by the A100's latency over its own: an H100
keeps 13 % fewer bytes per cycle flowing than an A100 from the same kernel. A die with no
measurement takes the reference's.

The multiprocessor-cycles per second of a part come from its datasheet FP32 peak:
``fp32 = 2 x FP32 lanes per SM x SMs x clock``, with the lanes per SM of its architecture
(``FP32_LANES_PER_SM``), so no SM count or clock is stored per part: an A100's 19.5 TFLOP/s
over 2 x 64 lanes is 152.3 G SM-cycles/s (108 SMs at 1,410 MHz), an H100 PCIe's 51.0 over
2 x 128 is 199 G (114 SMs at 1,755 MHz).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from recommender.catalog.schema import Accelerator
from recommender.scoring.achievable import memory_latency_cycles
from recommender.scoring.calibration import Calibration
from recommender.scoring.hardware import achievable_bandwidth

__all__ = [
    "FP32_LANES_PER_SM",
    "REFERENCE_DIE",
    "kernels_of",
    "latency_share",
    "runtime_bandwidth_cap",
    "runtime_limit_note",
    "sm_cycles_per_s",
]

FloatArray = npt.NDArray[np.float64]

# FP32 lanes (CUDA cores) per streaming multiprocessor, NVIDIA's architecture whitepapers:
# Pascal GP104 (GeForce GTX 1080 whitepaper: 20 SMs x 128), Volta GV100 (64), Turing TU102
# (64), Ampere GA10x (GA102 whitepaper: 128, two FP32 datapaths), Ada AD102 (128), Hopper
# GH100 (128), Blackwell GB202 (128). The datacentre dies of Pascal and Ampere keep 64
# (``FP32_LANES_PER_SM_BY_CHIP``: GP100 and GA100 whitepapers). Other vendors' parts are left
# out: their catalog FP32 peaks mix vector and matrix rates (MI300X's 163.4 TFLOP/s is its
# matrix FP32), so no cycle rate is derived for them and no runtime limit applies.
FP32_LANES_PER_SM = {
    "pascal": 128,
    "volta": 64,
    "turing": 64,
    "ampere": 128,
    "ada": 128,
    "hopper": 128,
    "blackwell": 128,
}
FP32_LANES_PER_SM_BY_CHIP = {"GP100": 64, "GA100": 64}
FLOPS_PER_LANE_CYCLE = 2.0  # one fused multiply-add
# Dated builds of a runtime that run its decode kernels unchanged and differ in how they launch
# them (``serving_step.uncaptured_decode_s``): the calibration keys the kernels' limit by the
# runtime they are, so both spellings share one fitted value.
KERNELS_OF = {"llama.cpp-2024": "llama.cpp"}
# The die whose DRAM latency a runtime's limit (``Calibration.decode_bytes_per_sm_cycle``) is
# stated at: GA100, the A100 80GB PCIe of ggml-org/llama.cpp#6017 that the prior reproduces.
REFERENCE_DIE = "GA100"


def kernels_of(runtime: str | None) -> str:
    """The runtime whose decode kernels ``runtime`` runs ("" for none)."""
    return KERNELS_OF.get(runtime or "", runtime or "")


def sm_cycles_per_s(acc: Accelerator) -> float | None:
    """Multiprocessor-cycles per second of ``acc`` (SMs x boost clock), from its datasheet
    FP32 peak; None for an architecture with no lane count above."""
    lanes = FP32_LANES_PER_SM_BY_CHIP.get(acc.chip or "", FP32_LANES_PER_SM.get(acc.architecture))
    if lanes is None:
        return None
    return acc.peak_tflops.fp32 * 1e12 / (FLOPS_PER_LANE_CYCLE * lanes)


def latency_share(acc: Accelerator) -> float:
    """The bytes per SM-cycle a kernel streams on ``acc``'s die against the reference die's
    (Little's law at a fixed number of bytes in flight): the reference's DRAM latency in
    cycles over the die's; 1 for a die with no measurement."""
    latencies = memory_latency_cycles()
    own = latencies.get(acc.chip or "")
    if own is None:
        return 1.0
    return latencies[REFERENCE_DIE].cycles / own.cycles


def _limit(acc: Accelerator, per_cycle: float) -> float | None:
    """Bytes/s a runtime's decode kernels stream at most on ``acc`` (None: no cycle rate)."""
    cycles = sm_cycles_per_s(acc)
    return None if cycles is None else per_cycle * latency_share(acc) * cycles


def runtime_bandwidth_cap(
    accs: Sequence[Accelerator], runtime: str | None, cal: Calibration
) -> FloatArray:
    """Per accelerator, the bytes/s a decode step of ``runtime`` streams at most: its fitted
    bytes per SM-cycle (``Calibration.decode_bytes_per_sm_cycle``, at the reference die's
    latency) times the die's ``latency_share`` times the part's SM-cycles per second; infinite
    for a runtime with no such limit or a part with no cycle rate."""
    per_cycle = cal.decode_bytes_per_sm_cycle.get(kernels_of(runtime))
    caps = np.full(len(accs), np.inf)
    if per_cycle is None:
        return caps
    for i, acc in enumerate(accs):
        limit = _limit(acc, per_cycle)
        if limit is not None:
            caps[i] = limit
    return caps


def runtime_limit_note(acc: Accelerator, runtime: str | None, cal: Calibration) -> str | None:
    """What the plan assumes of ``runtime``'s decode kernels on ``acc``, where they, not the
    memory, set the rate (None where they do not)."""
    per_cycle = cal.decode_bytes_per_sm_cycle.get(kernels_of(runtime))
    cycles = sm_cycles_per_s(acc)
    limit = None if per_cycle is None else _limit(acc, per_cycle)
    if limit is None or cycles is None:
        return None
    memory = achievable_bandwidth(acc, cal)
    if limit >= memory:
        return None
    return (
        f"{runtime}'s decode kernels stream at most {limit / 1e12:.2f} TB/s on the {acc.id} "
        f"({limit / cycles:.1f} B per SM-cycle at {cycles / 1e9:.0f} G SM-cycles/s), "
        f"{limit / memory:.0%} of what its memory delivers: an engine tuned for the part "
        "(vLLM, SGLang, TensorRT-LLM) decodes faster on it"
    )
