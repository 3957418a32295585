"""Every example workload in examples/ runs through recommend and predict and makes sense."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender import load_workload, predict, recommend
from recommender.catalog import Catalog

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))


def test_there_are_at_least_five_examples() -> None:
    names = {p.stem for p in EXAMPLES}
    assert {
        "llm-finetune",
        "resnet50-imagenet",
        "llm-serving",
        "bert-inference",
        "edge-detector",
    } <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_recommends(path: Path, catalog: Catalog) -> None:
    w = load_workload(path)
    r = recommend(w, catalog=catalog, top=3)
    assert r.picks, r.advice
    assert r.advice
    for p in r.picks:
        assert p.predicted.throughput > 0
        assert p.why
        if w.kind == "training":
            assert p.predicted.total_hours is not None and p.cost.total_usd is not None
    if w.kind == "edge":
        assert r.workload_class == "edge"
        assert all(p.cloud == "edge" and p.pricing == "purchase" for p in r.picks)
    else:
        top = r.picks[0]
        prediction = predict(w, top.accelerator, top.gpus, catalog=catalog, nodes=top.nodes)
        assert prediction.fits_in_memory


def test_llm_serving_example_reports_tokens(catalog: Catalog) -> None:
    w = load_workload(EXAMPLES[[p.stem for p in EXAMPLES].index("llm-serving")])
    p = recommend(w, catalog=catalog, objective="cheapest", top=1).picks[0]
    assert p.predicted.tokens_per_s is not None
    assert p.cost.per_million_unit == "tokens"
    assert p.cost.replicas * p.predicted.tokens_per_s >= 5000


def test_long_context_example_splits_each_sequence(catalog: Catalog) -> None:
    w = load_workload(EXAMPLES[[p.stem for p in EXAMPLES].index("llm-long-context")])
    for p in recommend(w, catalog=catalog, top=3).picks:
        assert p.plan is not None and p.plan.context_parallel > 1
        assert any("context parallel" in line for line in p.why)


def test_llamacpp_example_is_told_what_hbm_buys_it(catalog: Catalog) -> None:
    """A memory-bound llama.cpp decode is not told that HBM parts have 3-10x the bandwidth
    (its kernels reach about half of it there) but what does pay, and an A100's plan names
    the limit its kernels set."""
    w = load_workload(EXAMPLES[[p.stem for p in EXAMPLES].index("llm-local-llamacpp")])
    r = recommend(w, catalog=catalog, top=3)
    assert any("llama.cpp's decode kernels" in line for line in r.advice)
    assert not any("3-10x the bandwidth" in line for line in r.advice)
    a100 = predict(w, "A100-SXM4-80GB", 1, catalog=catalog)
    assert a100.plan is not None
    assert any("llama.cpp's decode kernels stream at most" in a for a in a100.plan.assumed)
