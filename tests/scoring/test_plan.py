"""scoring.plan: the fit planner on the workloads teams bring (issue 9's scenarios)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from recommender import predict, recommend
from recommender.catalog import Catalog
from recommender.workload import Workload

from .conftest import make


def _train(model: dict[str, Any], batch: int, **extra: Any) -> Workload:
    return make(model=model, batch_size=batch, **extra)


def test_a_7b_full_fine_tune_fits_8_a100_80gb_and_names_its_recipe(catalog: Catalog) -> None:
    w = _train({"name": "llama-2-7b", "sequence_length": 2048}, 16)
    p = predict(w, "A100-SXM4-80GB", 8, catalog=catalog)
    assert p.fits_in_memory
    assert p.plan is not None
    assert p.plan.sharding in ("zero1", "zero2", "zero3")  # 16 B x 6.74 B = 108 GB of state
    assert p.plan.attention == "flash"
    assert p.plan.micro_batch * p.plan.gradient_accumulation >= 16
    assert any("ZeRO" in a for a in p.plan.assumed)


def test_the_same_fine_tune_described_by_figures_is_feasible(catalog: Catalog) -> None:
    # parameters + flops_per_sample only (6 N per token, 2,048 tokens): used to get
    # "0 of 6814 offers feasible" from a FLOP-proportional activation guess.
    w = _train({"parameters": 6.74e9, "flops_per_sample": 6 * 6.74e9 * 2048}, 16)
    r = recommend(w, catalog=catalog, top=3)
    assert r.picks
    assert r.offers_feasible > 100


def test_llama_3_8b_at_4096_tokens_fits_8_h100(catalog: Catalog) -> None:
    w = _train({"name": "llama-3-8b", "sequence_length": 4096}, 8)
    p = predict(w, "H100-SXM5-80GB", 8, catalog=catalog)
    assert p.fits_in_memory
    assert p.plan is not None and p.plan.assumed


def test_resnet50_amp_batch_256_fits_a_v100_16gb(catalog: Catalog) -> None:
    # NVIDIA DeepLearningExamples trains ResNet-50 v1.5 with AMP at batch 256 on V100 16 GB.
    w = _train({"name": "resnet-50"}, 256, precision="fp16")
    p = predict(w, "V100-SXM2-16GB", 1, catalog=catalog)
    assert p.fits_in_memory
    assert p.plan is not None and p.plan.micro_batch == 256
    assert p.plan.attention is None  # a CNN has no attention kernel to choose


def test_qlora_of_a_70b_model_fits_one_80gb_gpu(catalog: Catalog) -> None:
    w = _train(
        {"name": "llama-3.1-70b", "sequence_length": 2048},
        4,
        training={"lora": {"rank": 16, "quantized_base": True}},
    )
    p = predict(w, "A100-SXM4-80GB", 1, catalog=catalog)
    assert p.fits_in_memory
    full = _train({"name": "llama-3.1-70b", "sequence_length": 2048}, 4)
    assert not predict(full, "A100-SXM4-80GB", 1, catalog=catalog).fits_in_memory


def test_what_the_user_pins_is_respected(catalog: Catalog) -> None:
    w = _train(
        {"name": "llama-2-7b", "sequence_length": 2048},
        16,
        training={"checkpointing": "full", "sharding": "zero3", "micro_batch": 2},
    )
    p = predict(w, "A100-SXM4-80GB", 8, catalog=catalog)
    assert p.plan is not None
    assert (p.plan.checkpointing, p.plan.sharding, p.plan.micro_batch) == ("full", "zero3", 2)
    assert p.plan.gradient_accumulation == 8
    assert not any("checkpointing" in a or "ZeRO" in a for a in p.plan.assumed)
    free = predict(
        _train({"name": "llama-2-7b", "sequence_length": 2048}, 16), "A100-80GB", 8, catalog=catalog
    )
    assert free.throughput > p.throughput  # full recomputation costs a forward pass


def test_full_checkpointing_costs_a_third_more_compute(catalog: Catalog) -> None:
    base = {"name": "llama-2-7b", "sequence_length": 2048}
    pinned = {"sharding": "zero3", "micro_batch": 1}
    none = _train(base, 1, training={**pinned, "checkpointing": "none"})
    full = _train(base, 1, training={**pinned, "checkpointing": "full"})
    a = predict(none, "H100", 8, catalog=catalog).breakdown.compute_s
    b = predict(full, "H100", 8, catalog=catalog).breakdown.compute_s
    assert b / a == pytest.approx(4 / 3, rel=0.05)


def test_a_model_that_fits_nowhere_is_infeasible_with_a_remedy(catalog: Catalog) -> None:
    # One instance at most (multi-node plans would place it on a cluster: tests/scoring/
    # test_multinode.py).
    w = _train(
        {"name": "llama-3.1-405b", "sequence_length": 4096},
        1,
        training={"offload": "none"},
        constraints={"max_nodes": 1},
    )
    r = recommend(w, catalog=catalog)
    assert not r.picks
    assert any("ZeRO-3 / FSDP" in a for a in r.advice)


def test_inferentia_is_never_a_training_pick(catalog: Catalog) -> None:
    w = _train({"name": "resnet-50"}, 256, precision="bf16")
    r = recommend(w, catalog=catalog, top=20, objective="cheapest")
    assert r.picks
    assert all("Inferentia" not in p.accelerator for p in r.picks)


@pytest.mark.parametrize(
    ("patch", "needle"),
    [
        ({"training": {"lora": {"rank": 0}}}, "training.lora.rank"),
        ({"training": {"tensor_parallel": 3}}, "training.tensor_parallel: 3 does not divide"),
        ({"model": {"name": "lama-3-8b", "sequence_length": 8}}, "did you mean"),
    ],
)
def test_impossible_recipes_name_the_field(patch: dict[str, Any], needle: str) -> None:
    spec: dict[str, Any] = {
        "name": "x",
        "kind": "training",
        "model": {"name": "llama-3-8b", "sequence_length": 128},
        "data": {"samples": 10},
        **patch,
    }
    with pytest.raises(ValidationError) as info:
        Workload.model_validate(spec)
    assert needle in str(info.value)


def _every_cell(grid: Any, gpus: Any) -> tuple[Any, Any]:
    """The dense (recipe x configuration) grid: what the planner would cost without pruning."""
    import numpy as np

    choice, config = np.nonzero(np.ones((len(grid), gpus.shape[-1]), dtype=bool))
    return choice.astype(np.int64), config.astype(np.int64)


@pytest.mark.parametrize(
    "workload",
    [
        _train({"name": "llama-2-7b", "sequence_length": 2048}, 16),
        _train({"name": "llama-2-7b", "sequence_length": 2048}, 16, training={"sharding": "zero3"}),
        _train(
            {"name": "llama-2-7b", "sequence_length": 2048}, 16, training={"tensor_parallel": 8}
        ),
        _train({"name": "llama-3.1-70b", "sequence_length": 4096}, 8),
        _train({"name": "resnet-50"}, 256, precision="fp16"),
        make(),
    ],
    ids=["7b", "7b-zero3-pinned", "7b-tp8-pinned", "70b-offload", "resnet", "bert"],
)
def test_pruned_cells_never_change_a_plan(
    catalog: Catalog, workload: Workload, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The planner costs only the cells that can win (valid recipes, no ZeRO over one rank,
    # offload only where nothing fits on the device): every offer's plan must be the one
    # costing the whole grid picks, pinned recipes and all-invalid configurations included.
    import numpy as np

    from recommender.scoring import plan

    pruned = recommend(workload, catalog=catalog, top=5, landscape=True)
    monkeypatch.setattr(plan, "_cells_to_cost", _every_cell)
    dense = recommend(workload, catalog=catalog, top=5, landscape=True)
    assert pruned.model_dump() == dense.model_dump()
    assert pruned.offers_feasible == dense.offers_feasible
    assert np.isfinite([p.predicted.throughput for p in pruned.picks]).all()
