"""The answer says what was used: a CPU profile is named as unused, advice follows the data."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import recommender
from recommender.catalog import Catalog
from recommender.cli import app
from recommender.profile import Classification, Machine, Profile
from tests.test_profile import make_profile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RECSYS = {
    "name": "dlrm",
    "kind": "training",
    "model": {"parameters": 2e7, "flops_per_sample": 1e8, "family": "recsys"},
    "batch_size": 2048,
    "data": {"samples": 1e8, "bytes_per_sample": 4e4, "source": "network", "read_gbps": 0.05},
}
PROBE_ADVICE = "`recommender probe`) makes them sharper"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return recommender.load_catalog()


def _cpu_profile() -> Profile:
    p = make_profile()
    machine = Machine(hostname="laptop", vcpus=8, device="cpu", cpu_model="Intel Xeon")
    return p.model_copy(update={"machine": machine})


def test_cpu_profile_is_named_as_unused_and_the_probe_is_not_advised(catalog: Catalog) -> None:
    without = recommender.recommend(RECSYS, catalog=catalog)
    with_cpu = recommender.recommend(RECSYS, catalog=catalog, profile=_cpu_profile())
    assert any(PROBE_ADVICE in a for a in without.advice)
    assert not any(PROBE_ADVICE in a for a in with_cpu.advice)
    (note,) = [a for a in with_cpu.advice if a.startswith("The probe profile given was not used")]
    assert "measured on the cpu (Intel Xeon)" in note


def test_cli_prints_the_unused_profile_note(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(_cpu_profile().to_json(), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["recommend", str(EXAMPLES / "bert-inference.yaml"), "--profile", str(path)]
    )
    assert result.exit_code == 0, result.output
    assert "not used" in " ".join(result.stdout.split())


def test_tabular_data_gets_no_jpeg_advice(catalog: Catalog) -> None:
    r = recommender.recommend(RECSYS, catalog=catalog)
    assert r.picks
    assert r.picks[0].predicted.bottleneck == "input-pipeline"
    assert any("NVTabular" in a for a in r.advice)
    assert not any("JPEG" in a or "DALI" in a for a in r.advice)
    cnn = {**RECSYS, "model": {**RECSYS["model"], "family": "cnn"}}  # type: ignore[dict-item]
    assert any("DALI" in a for a in recommender.recommend(cnn, catalog=catalog).advice)


def _own_profile(base: Profile) -> Profile:
    """``base`` as if the probe had run RECSYS's own training code (``--workload
    train.py:make_model``): a training step of its FLOPs per sample."""
    assert base.workload is not None
    own = base.workload.model_copy(
        update={"name": "train.py:make_model", "kind": "training", "flops_per_sample": 1e8}
    )
    return base.model_copy(update={"workload": own})


def test_advice_follows_the_measured_compute_bound_classification(catalog: Catalog) -> None:
    p = _own_profile(make_profile())  # an H200 profile of RECSYS itself: it calibrates
    busy = Classification(bound="compute-bound", limiting_stage="compute", gpu_busy_fraction=0.96)
    r = recommender.recommend(
        RECSYS, catalog=catalog, profile=p.model_copy(update={"classification": busy})
    )
    assert r.picks
    assert not any(a.startswith("Transfer-bound") for a in r.advice)
    assert any(a.startswith("Compute-bound") for a in r.advice)
