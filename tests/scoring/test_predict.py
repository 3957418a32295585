"""predict(): roofline behaviour, bottlenecks, memory fit, calibration, scaling."""

from __future__ import annotations

import pytest

from recommender import UnknownAcceleratorError, predict
from recommender.catalog import Catalog
from recommender.scoring.calibration import default_calibration
from recommender.scoring.transfer import transfer_exponents
from recommender.workload import Workload

from .conftest import make

LLAMA_7B = {
    "family": "transformer",
    "architecture": {
        "layers": 32,
        "hidden_size": 4096,
        "intermediate_size": 11008,
        "mlp": "gated",
        "sequence_length": 2048,
        "vocab_size": 32000,
    },
}


def test_faster_gpu_is_faster(catalog: Catalog, bert_training: Workload) -> None:
    t4 = predict(bert_training, "T4", catalog=catalog)
    a100 = predict(bert_training, "A100-80GB", catalog=catalog)
    h100 = predict(bert_training, "H100", catalog=catalog)
    assert t4.throughput < a100.throughput < h100.throughput
    assert t4.accelerator == "T4" and h100.accelerator == "H100-SXM5-80GB"


def test_prediction_is_not_the_datasheet_roofline(catalog: Catalog) -> None:
    # A pure-compute job: the prediction must sit well below peak FLOP/s.
    w = make(
        model={
            "parameters": 1e6,
            "flops_per_sample": 1e12,
            "family": "other",
            "memory_bytes_per_sample": 1e6,
        }
    )
    p = predict(w, "H100", catalog=catalog)
    peak = 989.4e12
    achieved = p.throughput * 1e12
    assert 0.2 * peak < achieved < 0.8 * peak


def test_mixed_precision_beats_fp32_on_tensor_cores(catalog: Catalog) -> None:
    fp32 = predict(make(precision="fp32"), "A100-80GB", catalog=catalog)
    bf16 = predict(make(precision="bf16"), "A100-80GB", catalog=catalog)
    assert bf16.throughput > 2 * fp32.throughput


def test_missing_precision_falls_back_and_says_so(catalog: Catalog) -> None:
    p = predict(make(precision="bf16"), "T4", catalog=catalog)
    assert any("no bf16 units: predicted at fp16" in n for n in p.notes)


def test_slow_input_pipeline_is_transfer_bound(catalog: Catalog) -> None:
    w = make(
        data={
            "samples": 1e6,
            "bytes_per_sample": 5e5,
            "decode_cpu_seconds_per_sample": 0.2,
            "source": "network",
        }
    )
    p = predict(w, "H100", 8, catalog=catalog)
    assert p.bottleneck == "input-pipeline"
    assert p.utilization < 0.7
    assert p.breakdown.input_pipeline_s == pytest.approx(p.step_time_s)


def test_pageable_big_batches_can_be_host_transfer_bound(catalog: Catalog) -> None:
    w = make(
        model={"parameters": 1e6, "flops_per_sample": 1e6, "family": "other"},
        data={"samples": 1e6, "device_bytes_per_sample": 5e7, "source": "memory"},
    )
    assert predict(w, "T4", catalog=catalog).bottleneck == "host-transfer"


def test_does_not_fit_reports_shortfall_and_remedies(catalog: Catalog) -> None:
    # 6.7 B parameters: even with the optimizer offloaded, bf16 weights and gradients alone
    # (4 B/parameter, ~27 GB) exceed an L4's 24 GB.
    w = make(model=LLAMA_7B, batch_size=4)
    p = predict(w, "L4", catalog=catalog)
    assert not p.fits_in_memory
    assert p.memory.shortfall_gb > 3
    text = " ".join(p.memory.remedies)
    assert "ZeRO-3 / FSDP" in text and "QLoRA" in text
    assert "bigger GPU: H200-SXM-141GB" in text  # 16 B/parameter = 108 GB: the H200 holds it
    assert p.memory.components_gb["state"] > 20


def test_pretraining_is_not_told_to_fine_tune_with_qlora(catalog: Catalog) -> None:
    # The same 7 B model on 2e11 tokens (30 per parameter) is pretraining: a frozen 4-bit base
    # is no remedy; sharding and a bigger GPU still are.
    w = make(model=LLAMA_7B, batch_size=4, data={"samples": 1e8, "epochs": 1})
    text = " ".join(predict(w, "L4", catalog=catalog).memory.remedies)
    assert "QLoRA" not in text
    assert "ZeRO-3 / FSDP" in text


def test_fp32_training_remedy_is_mixed_precision(catalog: Catalog) -> None:
    w = make(precision="fp32", model={"parameters": 2e9, "flops_per_sample": 1e12}, batch_size=8)
    p = predict(w, "T4", catalog=catalog)
    assert not p.fits_in_memory
    assert p.memory.remedies[0].startswith("train in mixed precision")


def test_micro_batching_fits_what_the_batch_alone_does_not(catalog: Catalog) -> None:
    w = make(precision="fp32", batch_size=256)  # BERT-Large at 512 tokens in fp32 on a T4
    p = predict(w, "T4", catalog=catalog)
    assert p.fits_in_memory
    assert p.plan is not None
    assert (p.plan.micro_batch or 0) < 256
    assert (p.plan.micro_batch or 0) * (p.plan.gradient_accumulation or 0) >= 256
    pinned = make(precision="fp32", batch_size=256, training={"micro_batch": 256})
    assert not predict(pinned, "T4", catalog=catalog).fits_in_memory


def test_zero_sharding_makes_a_big_model_fit_on_many_gpus(catalog: Catalog) -> None:
    w = make(model=LLAMA_7B, batch_size=1, training={"offload": "none"})
    assert not predict(w, "H100", 1, catalog=catalog).fits_in_memory
    eight = predict(w, "H100", 8, catalog=catalog)
    assert eight.fits_in_memory
    assert eight.plan is not None and eight.plan.sharding in ("zero1", "zero2", "zero3")
    assert any("ZeRO" in n for n in eight.notes)


def test_optimizer_offload_is_the_last_resort(catalog: Catalog) -> None:
    # One H100 cannot hold 7B x 16 B of state; with the optimizer in host memory it can.
    w = make(model=LLAMA_7B, batch_size=1)
    one = predict(w, "H100", 1, catalog=catalog)
    assert one.fits_in_memory
    assert one.plan is not None and one.plan.offload == "optimizer"
    eight = predict(w, "H100", 8, catalog=catalog)
    assert eight.plan is not None and eight.plan.offload == "none"


def test_scaling_efficiency_is_predicted_not_assumed(catalog: Catalog) -> None:
    # Large gradients, small compute per step: PCIe all-reduce cannot hide behind backward.
    w = make(model={"parameters": 1e9, "flops_per_sample": 1e11, "family": "other"}, batch_size=1)
    pcie = predict(w, "L4", 8, catalog=catalog)
    nvlink = predict(w, "H100", 8, catalog=catalog)
    assert pcie.scaling_efficiency < 0.9
    assert pcie.scaling_efficiency < nvlink.scaling_efficiency
    one = predict(w, "L4", 1, catalog=catalog)
    assert pcie.throughput < 8 * one.throughput


def test_baseline_calibrates_the_baseline_gpu_exactly(catalog: Catalog) -> None:
    w = make(baseline={"accelerator": "A100-80GB", "gpus": 1, "throughput": 123.0})
    p = predict(w, "A100-SXM4-80GB", catalog=catalog)
    assert p.throughput == pytest.approx(123.0, rel=1e-6)
    assert p.calibrated_from and "123" in p.calibrated_from
    other = predict(w, "H100", catalog=catalog)
    uncalibrated = predict(make(), "H100", catalog=catalog)
    ratio = predict(make(), "A100-80GB", catalog=catalog).throughput / 123.0
    # Part of the gap carries over to another part (transfer.py): Hopper is not Ampere.
    at = catalog.accelerators.index
    a100, h100 = catalog.accelerator("A100-80GB"), catalog.accelerator("H100")
    alpha = default_calibration().baseline_transfer
    carried = transfer_exponents(catalog.accelerators, at(a100), alpha, w.precision)[at(h100)]
    assert other.throughput == pytest.approx(uncalibrated.throughput / ratio**carried, rel=1e-6)


def test_absurd_baseline_is_clipped_and_flagged(catalog: Catalog) -> None:
    w = make(baseline={"accelerator": "A100-80GB", "gpus": 1, "throughput": 1e9})
    p = predict(w, "A100-80GB", catalog=catalog)
    assert any("scale clipped" in n for n in p.notes)


def test_unknown_accelerator_and_bad_gpu_count(catalog: Catalog, bert_training: Workload) -> None:
    with pytest.raises(UnknownAcceleratorError, match="did you mean"):
        predict(bert_training, "H100-SXM6", catalog=catalog)
    with pytest.raises(ValueError, match="gpus must be >= 1"):
        predict(bert_training, "H100", 0, catalog=catalog)


def test_llm_decode_is_memory_bound_and_reports_tokens(catalog: Catalog) -> None:
    w = make(
        kind="inference",
        batch_size=1,
        precision="bf16",
        model={
            "family": "transformer",
            "execution": "compiled",
            "architecture": {
                "layers": 32,
                "hidden_size": 4096,
                "sequence_length": 4096,
                "vocab_size": 32000,
            },
        },
        inference={"prompt_tokens": 128, "output_tokens": 256},
    )
    p = predict(w, "A100-80GB", catalog=catalog)
    assert p.bottleneck == "memory-bandwidth"
    assert p.tokens_per_s is not None
    # Weights (~13 GB) read per token at ~1.5 TB/s: tens of tokens/s per sequence.
    assert 20 < p.tokens_per_s < 200


def _resnet(precision: str) -> Workload:
    return make(model={"name": "resnet-50"}, batch_size=256, precision=precision)


def test_fp32_convolutions_run_as_tf32_on_nvidia_parts_that_have_it(catalog: Catalog) -> None:
    # cuDNN's default in PyTorch (torch.backends.cudnn.allow_tf32 = True): a ResNet-50 stated
    # in fp32 trains at the TF32 rate on an A100 (DeepLearningExamples: 938 img/s in TF32),
    # not at the CUDA cores' 19.5 TFLOP/s, and the prediction says so.
    fp32 = predict(_resnet("fp32"), "A100-SXM4-80GB", catalog=catalog)
    tf32 = predict(_resnet("tf32"), "A100-SXM4-80GB", catalog=catalog)
    assert fp32.throughput == pytest.approx(tf32.throughput)
    assert any("run as TF32" in n for n in fp32.notes)
    # No TF32 units before Ampere: the V100 stays at fp32, and so does a transformer's fp32
    # matmuls (torch.backends.cuda.matmul.allow_tf32 defaults to False) and an AMD part.
    v100_fp32 = predict(_resnet("fp32"), "V100-SXM2-16GB", catalog=catalog)
    v100_fp16 = predict(_resnet("fp16"), "V100-SXM2-16GB", catalog=catalog)
    assert v100_fp32.throughput < 0.6 * v100_fp16.throughput
    assert not any("TF32" in n for n in v100_fp32.notes)
    bert = predict(make(precision="fp32"), "A100-SXM4-80GB", catalog=catalog)
    bert_tf32 = predict(make(precision="tf32"), "A100-SXM4-80GB", catalog=catalog)
    assert bert.throughput < 0.5 * bert_tf32.throughput
    mi300x_fp32 = predict(_resnet("fp32"), "MI300X", catalog=catalog)
    mi300x_tf32 = predict(_resnet("tf32"), "MI300X", catalog=catalog)
    assert mi300x_fp32.throughput < mi300x_tf32.throughput
