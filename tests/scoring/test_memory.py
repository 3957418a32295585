"""scoring.memory: optimizer state, ZeRO sharding and LoRA, with the sources' own figures."""

from __future__ import annotations

import numpy as np
import pytest

from recommender.scoring.memory import NF4_BYTES_PER_PARAMETER, lora_parameters, state_bytes
from recommender.scoring.shape import shape_of

from .conftest import make

ONE = np.array([1.0])


def _per_gpu(w: object, tp: float, dp: float, stage: float, offload: float = 0.0) -> float:
    from recommender.workload import Workload

    assert isinstance(w, Workload)
    st = state_bytes(w, shape_of(w))
    args = (np.array([tp]), np.array([dp]), np.array([stage]), np.array([offload]))
    return float(st.per_gpu(*args)[0])


def test_mixed_precision_adam_is_16_bytes_per_parameter() -> None:
    # ZeRO (Rajbhandari et al. 2020) section 3.1: 2 + 2 + 12 bytes per parameter.
    w = make(model={"parameters": 1e9, "flops_per_sample": 1e12}, precision="bf16")
    assert state_bytes(w, shape_of(w)).total == pytest.approx(16e9)


@pytest.mark.parametrize(
    ("stage", "gb"),
    [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)],
)
def test_zero_figure_1_model_states_per_gpu(stage: int, gb: float) -> None:
    # ZeRO paper Figure 1: a 7.5 B model on 64 GPUs with mixed-precision Adam (K = 12):
    # 120 GB (DDP), 31.4 GB (P_os), 16.6 GB (P_os+g), 1.9 GB (P_os+g+p) per GPU.
    w = make(model={"parameters": 7.5e9, "flops_per_sample": 1e12}, precision="fp16")
    assert _per_gpu(w, 1, 64, stage) / 1e9 == pytest.approx(gb, rel=0.02)


def test_tensor_parallel_divides_the_state() -> None:
    w = make(model={"parameters": 8e9, "flops_per_sample": 1e12})
    assert _per_gpu(w, 4, 1, 0) == pytest.approx(_per_gpu(w, 1, 1, 0) / 4)


def test_offload_keeps_only_weights_and_gradients_on_the_gpu() -> None:
    w = make(model={"parameters": 1e9, "flops_per_sample": 1e12})
    assert _per_gpu(w, 1, 1, 0, offload=1) == pytest.approx(4e9)


def test_qlora_keeps_a_4_bit_base_and_small_adapters() -> None:
    # QLoRA (Dettmers et al. 2023): NF4 + double quantisation = 4.127 bits per parameter.
    w = make(
        model={"name": "llama-2-70b", "sequence_length": 512},
        training={"lora": {"rank": 64, "quantized_base": True}},
    )
    st = state_bytes(w, shape_of(w))
    adapters = lora_parameters(w, shape_of(w))
    assert adapters < 0.01 * w.parameters
    assert st.weights == pytest.approx(w.parameters * NF4_BYTES_PER_PARAMETER + adapters * 2)
    assert st.total < 45e9  # "finetune a 65B parameter model on a single 48GB GPU"


def test_eight_bit_adam_and_sgd_hold_less_state() -> None:
    base = {"model": {"parameters": 1e9, "flops_per_sample": 1e12}}
    adam8 = make(**base, training={"optimizer": "adamw-8bit"})
    sgd = make(**base, training={"optimizer": "sgd-momentum"})
    assert state_bytes(adam8, shape_of(adam8)).total == pytest.approx(10e9)  # 2+2+4+2
    assert state_bytes(sgd, shape_of(sgd)).total == pytest.approx(12e9)  # 2+2+4+4


def test_a_diffusion_sample_holds_one_denoiser_evaluation() -> None:
    """SDXL inference runs its UNet 50 times an image, freeing each step's activations: the
    activations it must hold are one evaluation's, so an image fits a 24 GB L4 (it was
    charged 50 evaluations' worth, 141 GB, and fitted no GPU), and a source's own count of
    evaluations (MLPerf's 40, in ``flops_per_sample``) holds no more."""
    from recommender import predict
    from recommender.workload import Workload

    def sdxl(**model: float) -> Workload:
        return Workload.model_validate(
            {
                "name": "sdxl",
                "kind": "inference",
                "model": {"name": "stable-diffusion-xl", **model},
                "precision": "fp16",
                "batch_size": 1,
            }
        )

    registry = sdxl()
    p = predict(registry, "L4")
    assert p.fits_in_memory
    per_evaluation = 6.7612e12  # catalogs/models.yaml: one UNet evaluation at 1024x1024
    assert registry.forward_flops_per_sample == pytest.approx(50 * per_evaluation)
    mlperf = sdxl(flops_per_sample=40 * per_evaluation)
    assert predict(mlperf, "L4").memory.components_gb == p.memory.components_gb
