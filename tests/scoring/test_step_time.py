"""scoring.step_time: the per-cell time model, checked with hand-worked numbers."""

from __future__ import annotations

import numpy as np
import pytest

from recommender import predict
from recommender.catalog import Catalog
from recommender.models.arch import GivenArch
from recommender.scoring.calibration import by_execution, prior_calibration
from recommender.scoring.hardware import MEM_EFFICIENT_ATTENTION_SPEED, capabilities
from recommender.scoring.memory import state_bytes
from recommender.scoring.plan import attention_speed
from recommender.scoring.shape import activation_element_bytes, shape_of
from recommender.scoring.step_time import (
    ALLREDUCE_STEP_LATENCY_NVLINK_S,
    ALLREDUCE_STEP_LATENCY_PCIE_S,
    ALLREDUCE_STEP_LATENCY_XGMI_S,
    FP8_CAST_BYTES_PER_ELEMENT,
    Cells,
    allreduce_latency_s,
    step_time,
)
from recommender.workload import Workload

from .conftest import make

TFLOPS = 100e12
BANDWIDTH = 1e12
LINK = 100e9


def _cells(**overrides: float) -> Cells:
    one = np.array([1.0])
    values: dict[str, object] = {
        "flop_per_s": one * TFLOPS,
        "bytes_per_s": one * BANDWIDTH,
        "link_bytes_per_s": one * LINK,
        "host_link_bytes_per_s": one * 25e9,
        "allreduce_step_s": one * ALLREDUCE_STEP_LATENCY_NVLINK_S,
        "fused_attention": np.array([True]),
        "attention_speed": one,
        "attention_flop_per_s": one * TFLOPS,
        "fp8_linears": np.array([False]),
        "tp": one,
        "dp": one,
        "stage": one * 0,
        "ckpt": one * 0,
        "offload": one * 0,
        "micro_batch": one,
        "accumulation": one,
    }
    values.update({k: np.array([v]) for k, v in overrides.items()})
    return Cells(**values)  # type: ignore[arg-type]


def _job():  # type: ignore[no-untyped-def]
    # A shapeless "other" model: 1e12 training FLOPs per sample, 1e6 parameters.
    w = make(
        model={
            "parameters": 1e6,
            "flops_per_sample": 3e12,
            "family": "other",
            "memory_bytes_per_sample": 3e6,
        },
        batch_size=1,
    )
    s = shape_of(w)
    return w, s, state_bytes(w, s)


def test_compute_is_flops_over_the_achievable_rate() -> None:
    w, s, st = _job()
    t = step_time(w, s, st, _cells(), prior_calibration(), 2.0)
    kernels = t.compute_s[0] - 3e12 / TFLOPS
    assert t.compute_s[0] == pytest.approx(3e12 / TFLOPS + kernels)
    assert 0 <= kernels < 0.01  # per-kernel overheads only


def test_full_checkpointing_adds_a_forward_pass() -> None:
    w, s, st = _job()
    cal = prior_calibration()
    none = step_time(w, s, st, _cells(), cal, 2.0)
    full = step_time(w, s, st, _cells(ckpt=2), cal, 2.0)
    forward = 1e12 / TFLOPS
    # one more forward of FLOPs, plus its ~100 kernels (5 us each in the priors)
    assert full.compute_s[0] - none.compute_s[0] == pytest.approx(forward, abs=1e-3)
    assert full.recompute_flops_share[0] == pytest.approx(1 / 3)


def test_accumulation_repeats_micro_steps_but_not_the_all_reduce() -> None:
    w, s, st = _job()
    cal = prior_calibration()
    one = step_time(w, s, st, _cells(dp=8), cal, 2.0)
    four = step_time(w, s, st, _cells(dp=8, accumulation=4), cal, 2.0)
    assert four.compute_s[0] == pytest.approx(4 * one.compute_s[0])
    assert four.dp_comm_s[0] <= one.dp_comm_s[0]


def test_ring_all_reduce_moves_2_n_minus_1_over_n_of_the_gradients() -> None:
    # 1e9 parameters of bf16 gradients over 8 GPUs: 2 x 7/8 x 2 GB / 100 GB/s = 35 ms, less
    # what hides behind the backward (overlap x 2/3 of the micro-step).
    w = make(model={"parameters": 1e9, "flops_per_sample": 3e9, "family": "other"}, batch_size=1)
    s = shape_of(w)
    cal = prior_calibration().with_values(comm_overlap=0.0)
    t = step_time(w, s, state_bytes(w, s), _cells(dp=8), cal, 2.0)
    assert t.dp_comm_s[0] == pytest.approx(2 * 7 / 8 * 2e9 / LINK)


def test_a_small_all_reduce_waits_longer_the_more_ranks_its_ring_has() -> None:
    # NCCL's ring: 3.6 us + 2 (n-1) hops; 0.4 us a hop over NVLink (9.2 us at 8 ranks), the
    # 8-rank PCIe measurement (42.6 us) spread over its 14 hops.
    ranks = np.array([2.0, 4.0, 8.0])
    nvlink = allreduce_latency_s(ranks, ALLREDUCE_STEP_LATENCY_NVLINK_S)
    pcie = allreduce_latency_s(ranks, ALLREDUCE_STEP_LATENCY_PCIE_S)
    xgmi = allreduce_latency_s(ranks, ALLREDUCE_STEP_LATENCY_XGMI_S)
    assert nvlink == pytest.approx([4.4e-6, 6.0e-6, 9.2e-6])
    assert pcie[2] == pytest.approx(42.6e-6)
    assert xgmi[2] == pytest.approx(13.6e-6)  # rccl-tests, 1-8 KB on 8 x MI300X
    assert np.all(np.diff(pcie) > 0) and np.all(pcie > xgmi) and np.all(xgmi > nvlink)


def test_each_accelerators_links_set_its_all_reduce_latency(catalog: Catalog) -> None:
    from recommender.scoring.hardware import allreduce_step_latency_s

    step = {a: allreduce_step_latency_s(catalog.accelerator(a)) for a in ("H100", "MI300X", "L4")}
    assert step == {
        "H100": ALLREDUCE_STEP_LATENCY_NVLINK_S,
        "MI300X": ALLREDUCE_STEP_LATENCY_XGMI_S,
        "L4": ALLREDUCE_STEP_LATENCY_PCIE_S,
    }


def test_tensor_parallel_all_reduces_pay_the_latency_of_their_ring() -> None:
    # Same link bandwidth, PCIe vs NVLink latency: the step differs by (all-reduces) x (the
    # latency gap at that many ranks), so the gaps at 8 and 2 ranks keep the latencies' ratio.
    w, s, st = _job()
    cal = prior_calibration()

    def gap(tp: float) -> float:
        slow = _cells(tp=tp, allreduce_step_s=ALLREDUCE_STEP_LATENCY_PCIE_S)
        fast = _cells(tp=tp, allreduce_step_s=ALLREDUCE_STEP_LATENCY_NVLINK_S)
        pcie = step_time(w, s, st, slow, cal, 2.0).tp_comm_s[0]
        nvlink = step_time(w, s, st, fast, cal, 2.0).tp_comm_s[0]
        return float(pcie - nvlink)

    both = allreduce_latency_s(np.array([8.0, 2.0]), ALLREDUCE_STEP_LATENCY_PCIE_S)
    both -= allreduce_latency_s(np.array([8.0, 2.0]), ALLREDUCE_STEP_LATENCY_NVLINK_S)
    assert gap(8.0) / gap(2.0) == pytest.approx(both[0] / both[1])


@pytest.mark.parametrize("execution", ["eager", "compiled"])
def test_a_materialised_score_matrix_costs_memory_traffic_in_either_execution_mode(
    execution: str,
) -> None:
    """An unfused attention writes and reads the (heads x tokens x tokens) score matrix even
    when a compiler fuses the element-wise kernels around it: compiled execution counts 4 passes
    per forward (QK^T writes it, a fused softmax reads and writes it, PV reads it)."""
    w = make(model={**make().model.model_dump(exclude_none=True), "execution": execution})
    s = shape_of(w)
    cal = prior_calibration()
    fused = step_time(w, s, state_bytes(w, s), _cells(), cal, 2.0)
    unfused = step_time(w, s, state_bytes(w, s), _cells(fused_attention=False), cal, 2.0)
    # 24 layers x 16 heads x 512^2 bf16 elements per pass; forward + 2 x backward passes
    passes = cal.attention_passes[execution]
    extra = 24 * 16 * 512**2 * 2.0 * passes * 3 / BANDWIDTH
    assert passes >= 4
    assert unfused.memory_s[0] - fused.memory_s[0] == pytest.approx(extra)


def test_fp8_training_runs_attention_at_the_16_bit_rate(catalog: Catalog) -> None:
    """float8 recipes convert the linear layers only: the attention kernels of an fp8
    training job run at the bf16 rate, its matrices at the fp8 rate."""
    cal = prior_calibration()
    fp8 = capabilities(catalog.accelerators, "fp8", cal)
    bf16 = capabilities(catalog.accelerators, "bf16", cal)
    h100 = catalog.accelerators.index(catalog.accelerator("H100-SXM5-80GB"))
    assert fp8.flops[h100] > 1.5 * bf16.flops[h100]
    assert fp8.training_attention_flops[h100] == pytest.approx(bf16.flops[h100])
    assert bf16.training_attention_flops[h100] == pytest.approx(bf16.flops[h100])
    a100 = catalog.accelerators.index(catalog.accelerator("A100-SXM4-80GB"))  # no fp8 units
    assert fp8.training_attention_flops[a100] == pytest.approx(fp8.flops[a100])


def test_float8_training_pays_for_casting_every_linear_operand() -> None:
    """Each element entering or leaving a weight matrix costs ~8 B of cast traffic per step:
    for the encoder of ``make()`` (24 layers, h 1024, plain MLP 4h, 512 tokens) that is
    (h + 3h) + 2h + (h + 4h) + (4h + h) = 16h elements per token and layer."""
    w = make()
    s = shape_of(w)
    assert s.linear_io_elements == pytest.approx(16 * 1024 * 512 * 24)
    cal = prior_calibration()
    plain = step_time(w, s, state_bytes(w, s), _cells(), cal, 2.0)
    fp8 = step_time(w, s, state_bytes(w, s), _cells(fp8_linears=True), cal, 2.0)
    extra = s.linear_io_elements * FP8_CAST_BYTES_PER_ELEMENT / BANDWIDTH
    assert fp8.memory_s[0] - plain.memory_s[0] == pytest.approx(extra)


def _resnet50_inference(execution: str, precision: str):  # type: ignore[no-untyped-def]
    w = make(
        kind="inference",
        model={"name": "resnet-50", "execution": execution},
        precision=precision,
        batch_size=64,
    )
    s = shape_of(w)
    return w, s, state_bytes(w, s)


def test_an_engine_build_streams_each_cnn_activation_twice() -> None:
    """TensorRT folds batch norm into the convolution and fuses the activation and residual
    add into its epilogue: each of ResNet-50's 11.11 M activations per image is written once
    and read once (``cnn_passes.engine`` = 2), at 16 bits for fp16."""
    cal = prior_calibration()
    assert cal.cnn_passes["engine"] == 2.0
    w, s, state = _resnet50_inference("engine", "fp16")
    t = step_time(w, s, state, _cells(micro_batch=64), cal, 2.0)
    activations = 64 * 11.11e6 * 2 * 2.0
    assert t.memory_s[0] == pytest.approx((activations + state.weights) / BANDWIDTH)
    # the same model compiled by torch.compile keeps its separate norm and activation passes
    w, s, state = _resnet50_inference("compiled", "fp16")
    compiled = step_time(w, s, state, _cells(micro_batch=64), cal, 2.0)
    assert compiled.memory_s[0] > 2 * t.memory_s[0]


def test_an_engine_convolution_moves_its_activations_while_it_computes() -> None:
    """Per kernel the roofline is the larger of compute and memory time: an engine build's
    fused convolutions hide their traffic behind their matrix work (device time = max), a
    compiled graph's separate element-wise kernels add it (device time = sum)."""
    cal = prior_calibration()
    for bandwidth in (BANDWIDTH, BANDWIDTH / 100):  # compute-bound, then memory-bound
        w, s, state = _resnet50_inference("engine", "fp16")
        t = step_time(w, s, state, _cells(micro_batch=64, bytes_per_s=bandwidth), cal, 2.0)
        assert t.device_s[0] == pytest.approx(max(t.compute_s[0], t.memory_s[0]) + t.issue_s[0])
        assert t.overlap_s[0] == pytest.approx(min(t.compute_s[0], t.memory_s[0]))
    w, s, state = _resnet50_inference("compiled", "fp16")
    t = step_time(w, s, state, _cells(micro_batch=64), cal, 2.0)
    assert t.overlap_s[0] == 0.0
    assert t.device_s[0] == pytest.approx(t.compute_s[0] + t.memory_s[0] + t.issue_s[0])


def test_an_int8_engine_keeps_activations_in_8_bits_a_framework_does_not() -> None:
    """Between quantised layers an engine's int8 build passes int8 tensors; torchao-style
    int8 in a framework quantises each matmul's input on the fly and hands bf16 on."""
    assert activation_element_bytes("int8", "engine") == 1.0
    assert activation_element_bytes("fp8", "engine") == 1.0
    assert activation_element_bytes("int8", "compiled") == 2.0
    assert activation_element_bytes("fp16", "engine") == 2.0
    assert activation_element_bytes("fp32", "eager") == 4.0
    cal = prior_calibration()
    w, s, state = _resnet50_inference("engine", "int8")
    t = step_time(
        w, s, state, _cells(micro_batch=64), cal, activation_element_bytes("int8", "engine")
    )
    activations = 64 * 11.11e6 * 2 * 1.0
    assert t.memory_s[0] == pytest.approx((activations + state.weights) / BANDWIDTH)


def test_an_engine_takes_the_compiled_constants_it_has_no_own_entry_for() -> None:
    """An engine fuses at least what a compiler fuses: transformer passes and kernel issue
    costs, which have no ``engine`` entry, are the compiled ones."""
    cal = prior_calibration()
    assert "engine" not in cal.transformer_passes
    encoder = make().model.model_dump(exclude_none=True)
    runs = {
        mode: make(kind="inference", model={**encoder, "execution": mode}, batch_size=8)
        for mode in ("compiled", "engine")
    }
    times = {}
    for mode, w in runs.items():
        s = shape_of(w)
        times[mode] = step_time(w, s, state_bytes(w, s), _cells(micro_batch=8), cal, 2.0)
    assert times["engine"].memory_s[0] == pytest.approx(times["compiled"].memory_s[0])
    assert times["engine"].issue_s[0] == pytest.approx(times["compiled"].issue_s[0])
    assert by_execution({"eager": 1.0, "compiled": 2.0}, "engine") == 2.0
    with pytest.raises(KeyError):
        by_execution({"compiled": 2.0}, "eager")


def test_a_cnn_launches_the_kernels_its_registry_entry_counts() -> None:
    """Eager issue time follows each CNN's counted kernels per forward (timm's definitions):
    in fp32 SE-ResNeXt101 launches 542 to ResNet-50's 174; an entry without a count takes
    174."""
    from recommender.models.registry import resolve_model
    from recommender.scoring.step_time import KERNELS_CNN_FORWARD, _kernels_per_forward

    def kernels(name: str, execution: str = "eager") -> float:
        w = make(model={"name": name, "execution": execution}, precision="fp32", batch_size=1)
        return _kernels_per_forward(w, shape_of(w))

    assert kernels("resnet-50") == KERNELS_CNN_FORWARD == 174.0
    assert kernels("se-resnext101-32x4d") == 542.0
    assert kernels("se-resnext101-32x4d", "compiled") < kernels("se-resnext101-32x4d")
    assert resolve_model("yolov8m").architecture.forward_kernels is None
    assert kernels("yolov8m") == KERNELS_CNN_FORWARD


def test_eager_mixed_precision_casts_every_weighted_layer_each_forward(catalog: Catalog) -> None:
    """torch.autocast re-casts the fp32 weights of ResNet-50's 54 weighted layers on every
    forward (its cast cache lives for one autocast region): 174 + 54 eager kernels in fp16 or
    bf16, 174 in fp32; a compiled graph folds the casts. At batch 1 on a V100 the eager
    network is issue-bound, so fp16 runs at about 174 / 228 of the fp32 rate, not faster."""
    from recommender.scoring.step_time import (
        AUTOCAST_CASTS_PER_CNN_KERNEL,
        KERNELS_CNN_FORWARD,
        _kernels_per_forward,
    )

    def job(precision: str, execution: str = "eager") -> Workload:
        return make(
            kind="inference",
            model={"name": "resnet-50", "execution": execution},
            precision=precision,
            batch_size=1,
        )

    def kernels(precision: str, execution: str = "eager") -> float:
        w = job(precision, execution)
        return _kernels_per_forward(w, shape_of(w))

    assert round(KERNELS_CNN_FORWARD * AUTOCAST_CASTS_PER_CNN_KERNEL, 9) == 54.0
    assert kernels("fp16") == kernels("bf16") == pytest.approx(228.0)
    assert kernels("fp32") == kernels("tf32") == KERNELS_CNN_FORWARD
    assert kernels("fp16", "compiled") == kernels("fp32", "compiled")

    def rate(precision: str, execution: str = "eager") -> float:
        return predict(job(precision, execution), "V100-SXM2-16GB", 1, catalog=catalog).throughput

    assert rate("fp16") == pytest.approx(rate("fp32") * 174.0 / 228.0, rel=0.1)
    assert rate("fp16", "compiled") > rate("fp16")


def test_flash_attention_2_runs_at_about_half_rate_on_hopper_only(catalog: Catalog) -> None:
    """FlashAttention-2 (``attention: flash``) on Hopper: 329.5 against the native kernels'
    631.3 TFLOP/s (pytorch/pytorch#142132); SDPA's own dispatch (auto) runs the native one,
    and on Ampere FlashAttention-2 is the native kernel."""
    accs = [catalog.accelerator("H100-SXM5-80GB"), catalog.accelerator("A100-SXM4-80GB")]
    caps = capabilities(accs, "bf16", prior_calibration())
    assert caps.flash2_speed.tolist() == pytest.approx([329.5 / 631.3, 1.0])

    def long_training(attention: str) -> Workload:
        return make(
            model={"name": "llama-3.1-8b", "sequence_length": 32768, "execution": "compiled"},
            batch_size=1,
            training={"attention": attention, "context_parallel": 1},
        )

    def rate(attention: str, acc: str) -> float:
        return predict(long_training(attention), acc, 8, catalog=catalog).throughput

    assert rate("flash", "H100-SXM5-80GB") < 0.9 * rate("auto", "H100-SXM5-80GB")
    assert rate("flash", "A100-SXM4-80GB") == pytest.approx(rate("auto", "A100-SXM4-80GB"))
    flash = predict(long_training("flash"), "H100-SXM5-80GB", 8, catalog=catalog)
    auto = predict(long_training("auto"), "H100-SXM5-80GB", 8, catalog=catalog)
    assert flash.plan is not None and flash.plan.attention == "flash"
    assert auto.plan is not None and auto.plan.attention == "sdpa"  # cuDNN's, via SDPA


def test_both_planners_take_the_attention_rate_from_one_rule(catalog: Catalog) -> None:
    """A materialised score matrix runs as plain GEMMs (rate 1) on any GPU; a fused kernel
    on a GPU without FlashAttention is the memory-efficient one; pinned FlashAttention-2 on
    Hopper runs at its half rate. ``plan`` and ``multinode`` both read ``attention_speed``."""
    accs = [
        catalog.accelerator("V100-SXM2-16GB"),
        catalog.accelerator("H100-SXM5-80GB"),
        catalog.accelerator("A100-SXM4-80GB"),
    ]
    caps = capabilities(accs, "fp16", prior_calibration())
    acc = np.arange(3, dtype=np.int32)

    def speeds(attention: str, fused: bool) -> list[float]:
        w = make(training={"attention": attention})
        return attention_speed(w, caps, acc, np.full(3, fused)).tolist()

    assert speeds("eager", False) == [1.0, 1.0, 1.0]
    assert speeds("auto", True) == [MEM_EFFICIENT_ATTENTION_SPEED, 1.0, 1.0]
    assert speeds("flash", True) == pytest.approx(
        [MEM_EFFICIENT_ATTENTION_SPEED, 329.5 / 631.3, 1.0]
    )


def test_a_model_that_counts_its_activations_streams_them_whatever_its_family() -> None:
    """Swin-B is no CNN (windowed attention, which no transformer shape describes), but its
    registry entry counts its activations (27.50 M ResNet-equivalent conv outputs per 224 px
    image, benchmarks/data/cnn_traffic.py): its element-wise traffic is those elements times
    the execution's passes, as a CNN's is, not the 150 FLOPs a byte a shapeless model gets."""
    cal = prior_calibration()
    w = make(
        kind="inference",
        model={"name": "swin-base", "execution": "eager"},
        precision="fp16",
        batch_size=64,
    )
    assert w.model.resolved_family != "cnn"
    s = shape_of(w)
    state = state_bytes(w, s)
    t = step_time(w, s, state, _cells(micro_batch=64), cal, 2.0)
    counted = w.model.architecture
    assert isinstance(counted, GivenArch) and counted.traffic_activations is not None
    activations = 64 * counted.traffic_activations * by_execution(cal.cnn_passes, "eager") * 2.0
    assert t.memory_s[0] == pytest.approx((activations + state.weights) / BANDWIDTH)
    assert activations > 64 * 30.94e9 / 150.0 * 2  # the flat guess streamed under half of it
