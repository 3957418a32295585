"""TGI 1.0's GPTQ (int4) kernels in a decode step: an eager continuous-batching engine serving
int4 weights (TGI 1.0.3, the development set's) runs two of each layer's matmuls as Triton
kernels, launched from Python (``triton_launches_s``) and walking their input features in a
serial loop of the die's cycles (``triton_loops_s``), and the other two as exllama kernels,
which rebuild their matrices in fp16 above eight rows (``exllama_rebuild_bytes``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from recommender.models.transformer import TransformerArch
from recommender.scoring.kernel_costs import EAGER_LAUNCH_S, REFERENCE_KERNEL_CLOCK_MHZ
from recommender.workload import Workload

__all__ = [
    "EXLLAMA_RECONSTRUCT_BYTES",
    "EXLLAMA_RECONSTRUCT_ROWS",
    "TRITON_GPTQ_CYCLES_PER_INPUT",
    "TRITON_LAUNCH_S",
    "TRITON_MATMULS_PER_LAYER",
    "exllama_rebuild_bytes",
    "gptq_engine",
    "triton_launches_s",
    "triton_loops_s",
]

FloatArray = npt.NDArray[np.float64]

# The int4 (GPTQ) matmuls per layer that TGI 1.0.3, the eager engine of the development set,
# runs as Triton kernels: the column-parallel QKV and gate-up always
# (huggingface/text-generation-inference@v1.0.3, server/text_generation_server/utils/
# weights.py: ``get_multi_weights_col`` passes use_exllama False); the row-parallel O and down
# take the exllama CUDA kernels.
TRITON_MATMULS_PER_LAYER = 2.0
# Host time to launch one Triton kernel from Python in its 2022-2023 releases: 96 us for a
# cached matmul (triton-lang/triton#459, against 23 us for torch's own), 108 us before the
# 2024 launcher rewrite (triton-lang/triton#3638).
TRITON_LAUNCH_S = 1e-4
# On the device that Triton matmul (server/text_generation_server/utils/gptq/quant_linear.py,
# "code based https://github.com/fpgaminer/GPTQ-triton") walks the input features in one
# serial loop per output tile, so at a decode step's few rows it takes a fixed count of the
# die's cycles per input feature, however few weights it reads: fxmarty/q4f16-gemm-gemv-
# benchmark (README, 2023) times GPTQ-for-LLaMa's Triton kernel, of the same fpgaminer
# lineage, on a 1 x 8192 by 8192 x 8192 int4 matmul at 0.2038 ms on an A100-SXM4-80GB, 287 k
# cycles at its 1,410 MHz boost clock: 35.1 per input feature. The same table's A10G, 0.1746
# ms at 1,710 MHz, is 36.4 (tests/scoring/test_tgi_gptq.py checks the two agree).
TRITON_GPTQ_A100_S, TRITON_GPTQ_INPUTS = 0.2038e-3, 8192
# (an A100's boost clock is the replayed kernel's reference, ``REFERENCE_KERNEL_CLOCK_MHZ``)
TRITON_GPTQ_CYCLES_PER_INPUT = (
    TRITON_GPTQ_A100_S * REFERENCE_KERNEL_CLOCK_MHZ * 1e6 / TRITON_GPTQ_INPUTS
)
# Above this many rows (tokens in the step's batch) TGI 1.0.3's exllama matmul rebuilds the
# whole int4 matrix in fp16 in a scratch buffer and multiplies with cuBLAS; at or below it, it
# runs its own int4 kernel (text-generation-inference@v1.0.3, server/text_generation_server/
# utils/gptq/exllama.py: ``matmul_recons_thd = 8``, exllama's default;
# huggingface/text-generation-inference#757: at larger batches exllama dequantizes and calls
# cuBLAS, which "can not be faster than running in fp16").
EXLLAMA_RECONSTRUCT_ROWS = 8.0
# Bytes per weight the rebuild moves beyond the int4 read: the fp16 matrix written to the
# scratch buffer and read back by the GEMM.
EXLLAMA_RECONSTRUCT_BYTES = 2.0 + 2.0


def triton_launches_s(w: Workload, execution: str, layers: float) -> float:
    """Host seconds an eager continuous-batching engine's int4 weights add to its step: TGI
    1.0's GPTQ matmuls launch as Triton kernels from Python (``TRITON_MATMULS_PER_LAYER`` a
    layer), each ~3x the launch of the kernel it replaces, a cost a captured CUDA graph does
    not pay; its GPTQ Llama 2 70B ran 1.97-2.2x slower a token than its fp16 on the same eight
    A100s at 1-20 users. A static-batch loop (Hugging Face generate, whose GPTQ layers take
    CUDA kernels) is not charged."""
    if not gptq_engine(w, execution):
        return 0.0
    return layers * TRITON_MATMULS_PER_LAYER * (TRITON_LAUNCH_S - EAGER_LAUNCH_S)


def gptq_engine(w: Workload, execution: str) -> bool:
    """Whether ``w`` is int4 (GPTQ) weights served by an eager continuous-batching engine:
    TGI 1.0, whose GPTQ layers run TGI's own Triton and exllama kernels (a static-batch loop,
    Hugging Face generate, takes CUDA GPTQ kernels)."""
    spec = w.inference
    return (
        execution == "eager"
        and spec is not None
        and spec.engine == "continuous"
        and spec.weights == "int4"
    )


def triton_loops_s(
    w: Workload, execution: str, layers: float, hidden: float, cycle: npt.ArrayLike
) -> FloatArray:
    """Device seconds TGI 1.0's Triton GPTQ matmuls (``TRITON_MATMULS_PER_LAYER`` a layer, both
    over the layer's input, ``hidden`` features) add beyond their launch: each takes
    ``TRITON_GPTQ_CYCLES_PER_INPUT`` cycles of the die a feature, and the host launches the
    next while it runs, so a matmul costs the longer of the two (``triton_launches_s``
    charges the launch); ``cycle`` is the seconds of one cycle of each cell's die
    (``kernel_costs.cycle_s``). The matrices' int4 reads stay in the step's weight stream: for
    Llama 2 70B over 8 A100s a few us against the loop's 204."""
    if not gptq_engine(w, execution):
        return np.zeros_like(np.asarray(cycle, dtype=float))
    loop = TRITON_GPTQ_CYCLES_PER_INPUT * hidden * np.asarray(cycle, dtype=float)
    return np.asarray(layers * TRITON_MATMULS_PER_LAYER * np.maximum(loop - TRITON_LAUNCH_S, 0.0))


def exllama_rebuild_bytes(w: Workload, execution: str, b: FloatArray) -> FloatArray:
    """Bytes TGI 1.0's int4 step adds when its batch has more than
    ``EXLLAMA_RECONSTRUCT_ROWS`` rows: its exllama matmuls, the row-parallel attention output
    and MLP down projections (the column-parallel ones are Triton's), rebuild their matrices
    in fp16 (``EXLLAMA_RECONSTRUCT_BYTES`` a weight, over the whole model: each tensor-parallel
    rank rebuilds its share)."""
    arch = w.model.architecture
    if not gptq_engine(w, execution) or not isinstance(arch, TransformerArch) or arch.is_moe:
        return np.zeros_like(b)
    per_layer = arch.hidden_size * (arch.n_heads * arch.d_head + arch.d_ff)
    rebuilt = arch.layers * per_layer * EXLLAMA_RECONSTRUCT_BYTES
    return np.asarray(np.where(b > EXLLAMA_RECONSTRUCT_ROWS, rebuilt, 0.0))
