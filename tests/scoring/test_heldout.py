"""Every prediction says how far off predictions of its kind have been on published
measurements held out of the fit (recommender/scoring/heldout.py)."""

from __future__ import annotations

from recommender import predict, recommend
from recommender.catalog import Catalog
from recommender.scoring.heldout import accuracy_class, expected_error, held_out
from recommender.workload import Workload

from .conftest import make, single_stream_decode


def _serving(batch: int | None) -> Workload:
    spec: dict[str, object] = {
        "name": "chat",
        "kind": "inference",
        "model": {"name": "llama-3-8b"},
        "precision": "bf16",
        "inference": {"prompt_tokens": 512, "output_tokens": 256},
    }
    if batch is not None:
        spec["batch_size"] = batch
    return Workload.model_validate(spec)


def test_each_workload_is_judged_in_the_benchmark_class_it_belongs_to() -> None:
    assert accuracy_class(make()) == "training"
    assert accuracy_class(single_stream_decode("llama-2-7b")) == "llm-decode"
    assert accuracy_class(_serving(None)) == "llm-serving"
    assert accuracy_class(_serving(32)) == "llm-serving"
    resnet = make(kind="inference", model={"name": "resnet-50"}, batch_size=64)
    assert accuracy_class(resnet) == "inference"
    whisper = Workload.model_validate(
        {
            "name": "asr",
            "kind": "inference",
            "model": {"name": "whisper-large-v3"},
            "precision": "fp16",
            "inference": {"prompt_tokens": 4, "output_tokens": 75},
        }
    )
    assert accuracy_class(whisper) == "inference"  # the benchmark scores Whisper as inference


def test_a_prediction_from_the_model_alone_carries_the_error_without_a_baseline(
    catalog: Catalog,
) -> None:
    p = predict(_serving(None), "H100-SXM5-80GB", 1, catalog=catalog)
    e = p.expected_error
    assert e is not None and e.accuracy_class == "llm-serving" and not e.with_baseline
    saved = held_out().classes["llm-serving"].without_baseline
    assert (e.median_pct, e.mean_pct, e.scored) == (saved.median_pct, saved.mean_pct, saved.count)
    note = next(n for n in p.notes if n.startswith("accuracy:"))
    assert f"{e.median_pct:.0f} %" in note and "from the model alone" in note
    scaled = held_out().classes["llm-serving"].with_baseline
    assert scaled.median_pct is not None and scaled.median_pct < e.median_pct
    assert f"makes them sharper: {scaled.median_pct:.0f} %" in note


def test_a_prediction_scaled_from_a_baseline_carries_the_error_of_that_scaling(
    catalog: Catalog,
) -> None:
    w = make(baseline={"accelerator": "A100-80GB", "gpus": 1, "throughput": 123.0})
    p = predict(w, "H100-SXM5-80GB", 1, catalog=catalog)
    assert p.calibrated_from is not None
    e = p.expected_error
    assert e is not None and e.with_baseline and e.accuracy_class == "training"
    assert e == expected_error(w, True)
    note = next(n for n in p.notes if n.startswith("accuracy:"))
    assert "scaled from a measurement of this workload" in note and "sharper" not in note


def test_a_recommendation_carries_it_and_says_it(catalog: Catalog) -> None:
    r = recommend(make(), catalog=catalog, top=2)
    assert r.picks and r.expected_error == expected_error(make(), False)
    (advice,) = [a for a in r.advice if "on published measurements held out of the fit" in a]
    assert advice.startswith("Predictions use spec sheets and calibrated efficiencies: training")
    scaled = held_out().classes["training"].with_baseline.median_pct
    assert f"`recommender probe`) makes them sharper: {scaled:.0f} %" in advice
    w = make(baseline={"accelerator": "A100-80GB", "gpus": 1, "throughput": 123.0})
    calibrated = recommend(w, catalog=catalog, top=2)
    assert calibrated.expected_error == expected_error(w, True)
    (line,) = [a for a in calibrated.advice if a.startswith("Accuracy: ")]
    assert f"off by {scaled:.0f} % (median" in line and "sharper" not in line


def test_edge_devices_have_no_held_out_error(catalog: Catalog) -> None:
    edge = Workload.model_validate(
        {
            "name": "detector",
            "kind": "edge",
            "precision": "int8",
            "batch_size": 1,
            "model": {"parameters": 3.2e6, "flops_per_sample": 8.7e9, "family": "cnn"},
        }
    )
    assert accuracy_class(edge) is None and expected_error(edge, False) is None
    assert recommend(edge, catalog=catalog, top=1).expected_error is None
