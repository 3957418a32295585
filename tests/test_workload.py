"""The workload contract: validation names the field, architectures derive sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from recommender.catalog.problems import WorkloadError
from recommender.workload import TransformerArch, Workload, load_workload

BASE = {
    "name": "w",
    "kind": "training",
    "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11},
    "batch_size": 8,
    "data": {"samples": 1000},
}


def _fields(exc: ValidationError) -> set[str]:
    return {".".join(str(p) for p in e["loc"]) for e in exc.errors()}


def test_design_example_validates() -> None:
    w = Workload.model_validate(
        {
            "name": "bert-large-finetune",
            "kind": "training",
            "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11},
            "precision": "bf16",
            "batch_size": 32,
            "data": {"samples": 8.8e4, "epochs": 2, "bytes_per_sample": 4.0e3},
            "baseline": {"accelerator": "A100-80GB", "gpus": 1, "throughput": 150},
            "constraints": {
                "clouds": ["gcp", "azure"],
                "regions": ["europe-west4"],
                "spot": True,
                "max_gpus": 8,
            },
            "targets": {"deadline_hours": 12, "budget_usd": 500},
        }
    )
    assert w.total_samples == 1.76e5
    assert w.flops_per_sample == 7.8e11


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"precision": "fp64"}, "precision"),
        ({"kind": "serving"}, "kind"),
        ({"model": {"parameters": -1, "flops_per_sample": 1e9}}, "model.parameters"),
        ({"data": {"samples": 10, "epochs": 0}}, "data.epochs"),
        ({"constraints": {"clouds": ["oracle"]}}, "constraints.clouds.0"),
        ({"targets": {"deadline_hours": -3}}, "targets.deadline_hours"),
        ({"batchsize": 8}, "batchsize"),
    ],
)
def test_impossible_values_name_the_field(patch: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Workload.model_validate({**BASE, **patch})
    assert field in _fields(info.value)


def test_model_needs_flops_or_architecture() -> None:
    with pytest.raises(
        ValidationError,
        match="give flops_per_sample, a model name, an hf_config, or an architecture",
    ):
        Workload.model_validate({**BASE, "model": {"parameters": 1e9}})


def test_training_needs_samples() -> None:
    with pytest.raises(ValidationError, match=r"training needs data\.samples"):
        Workload.model_validate({**BASE, "data": {}})


def test_an_inference_engine_build_is_refused_for_training() -> None:
    engine = {**BASE["model"], "execution": "engine"}  # type: ignore[dict-item]
    with pytest.raises(ValidationError, match="engine is an inference engine's build"):
        Workload.model_validate({**BASE, "model": engine})
    served = Workload.model_validate({**BASE, "kind": "inference", "model": engine})
    assert served.model.execution == "engine"


def test_min_gpus_above_max_is_refused() -> None:
    with pytest.raises(ValidationError, match="min_gpus"):
        Workload.model_validate({**BASE, "constraints": {"min_gpus": 4, "max_gpus": 2}})


def test_architecture_derives_parameters_and_flops() -> None:
    # GPT-3 175B: 96 layers, d 12288, 2048 tokens -> ~174.6 B non-embedding parameters
    # (Brown et al. 2020, Table 2.1); Kaplan: forward ~ 2N FLOPs per token.
    arch = TransformerArch(layers=96, hidden_size=12288, sequence_length=2048, vocab_size=50257)
    assert arch.non_embedding_parameters == pytest.approx(174e9, rel=0.01)
    per_token = arch.forward_flops_per_token()
    assert per_token == pytest.approx(2 * arch.non_embedding_parameters, rel=0.05)
    w = Workload.model_validate(
        {
            **BASE,
            "model": {"architecture": arch.model_dump()},
        }
    )
    assert w.parameters == pytest.approx(arch.parameters)
    assert w.flops_per_sample == pytest.approx(3 * per_token * 2048)  # training = 3x forward
    inference = w.model_copy(update={"kind": "inference"})
    assert inference.flops_per_sample == pytest.approx(per_token * 2048)


def test_moe_experts_multiply_parameters_not_flops() -> None:
    dense = TransformerArch(layers=12, hidden_size=768, sequence_length=512)
    moe = dense.model_copy(update={"experts": 8})
    assert moe.parameters > 5 * dense.parameters
    # top-1 routing: one expert per token; only the router's small matrix is added
    assert moe.forward_flops_per_token() == pytest.approx(dense.forward_flops_per_token(), rel=1e-3)


@pytest.mark.parametrize(
    ("architecture", "field"),
    [
        # found by the API contract fuzzing: d_ff = 8.5e304 x 2108 overflowed to infinity
        ({"hidden_size": 2108, "layers": 1, "head_dim": 1, "ffn_multiplier": 8.5e304}, "ffn_"),
        ({"hidden_size": 10**400, "layers": 1}, "hidden_size"),
        ({"hidden_size": 64, "layers": 1, "extra_parameters": 1e308}, "extra_parameters"),
        # every dimension at its ceiling: finite arithmetic, refused by the parameter bound
        (
            {
                "hidden_size": 2**31 - 1,
                "layers": 2**31 - 1,
                "intermediate_size": 2**31 - 1,
                "vocab_size": 2**31 - 1,
                "head_dim": 2**31 - 1,
                "experts": 2**31 - 1,
                "experts_per_token": 2**31 - 1,
            },
            "parameters",
        ),
    ],
)
def test_absurd_architectures_are_refused_by_validation_not_arithmetic(
    architecture: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        Workload.model_validate({**BASE, "model": {"architecture": architecture}})
    assert field in str(caught.value)


def test_load_workload_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: x\nkind: training\nmodel: {parameters: 1e9, flops_per_sample: 1e9}\n"
        "batch_size: 0\ndata: {samples: 10}\n"
    )
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    (problem,) = info.value.problems
    assert (problem.line, problem.field) == (4, "batch_size")
    assert str(problem).endswith("w.yaml:4 batch_size: must be >= 1 (got 0)")


def test_load_workload_reads_json(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(
        '{"name": "x", "kind": "inference", "model": {"parameters": 1e8, "flops_per_sample": 2e8}}'
    )
    assert load_workload(path).kind == "inference"


def test_a_registry_model_round_trips_through_its_dump() -> None:
    w = Workload.model_validate(
        {**BASE, "model": {"name": "llama-3.1-8b", "sequence_length": 4096}}
    )
    again = Workload.model_validate(w.model_dump(exclude_unset=True))
    assert again.parameters == w.parameters
    assert again.model.architecture == w.model.architecture
    assert Workload.model_validate(w.model_dump()).model.name == "llama-3.1-8b"


def test_image_size_scales_a_cnn_by_its_pixels_and_a_vit_by_its_patches() -> None:
    """EfficientNet-B4 is registered at timm's 320 px; trained at 380 px (DeepLearningExamples'
    configs.yml) every convolution runs on (380/320)^2 times the pixels. A ViT-S/16 at 384 px
    runs 24 x 24 patches and the class token."""
    native = Workload.model_validate({**BASE, "model": {"name": "efficientnet-b4"}})
    at_380 = Workload.model_validate(
        {**BASE, "model": {"name": "efficientnet-b4", "image_size": 380}}
    )
    scale = 380**2 / 320**2
    assert at_380.flops_per_sample == pytest.approx(native.flops_per_sample * scale)
    arch, base = at_380.model.architecture, native.model.architecture
    assert arch.forward_activations == pytest.approx(base.forward_activations * scale)
    assert (arch.resolution, arch.forward_kernels) == ("380x380", base.forward_kernels)
    assert at_380.parameters == native.parameters
    again = Workload.model_validate(at_380.model_dump())  # the dump states 380 px already
    assert again.flops_per_sample == pytest.approx(at_380.flops_per_sample)
    vit = Workload.model_validate({**BASE, "model": {"name": "vit-small-16", "image_size": 384}})
    assert vit.model.tokens_per_sample == (384 // 16) ** 2 + 1


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ({"name": "bert-large", "image_size": 380}, "input is tokens"),
        ({"name": "vit-small-16", "image_size": 383}, "must divide image_size"),
        ({"parameters": 1e6, "flops_per_sample": 1e9, "image_size": 224}, "give a model name"),
        (
            {
                "architecture": {"type": "cnn", "parameters": 1e6, "forward_flops": 1e9},
                "image_size": 224,
            },
            "states its resolution",
        ),
    ],
)
def test_image_size_is_refused_where_pixels_mean_nothing(model: dict, reason: str) -> None:
    with pytest.raises(ValidationError, match="image_size: .*" + reason):
        Workload.model_validate({**BASE, "model": model})
