"""benchmarks/accuracy.py: rows become workloads honestly, and the harness's baseline
shortcut is exactly what ``predict`` does with a ``baseline:``."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from recommender import predict
from recommender.workload import Workload

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

accuracy = pytest.importorskip("accuracy")
published = pytest.importorskip("published")


@pytest.fixture(scope="module")
def loaded() -> tuple[list[object], Counter[str], object]:
    catalog = accuracy.bench_catalog()
    rows, skipped = published.load_rows(catalog)
    return rows, skipped, catalog


def test_every_usable_row_is_used_or_skipped_with_a_reason(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    import csv

    rows, skipped, _ = loaded
    with published.ROWS.open(newline="") as fh:
        total = sum(1 for _ in csv.DictReader(fh))
    assert len(rows) + sum(skipped.values()) == total
    assert len(rows) > 500
    classes = {r.cls for r in rows}
    assert classes == {"training", "inference", "llm-serving", "llm-decode"}
    assert len({r.source for r in rows}) >= 10


def test_the_baseline_shortcut_matches_predict_with_a_baseline(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    from accuracy_transfer import pair_alpha

    from recommender.scoring.calibrate import modelled_throughput
    from recommender.scoring.calibration import default_calibration

    rows, _, catalog = loaded
    cal = default_calibration()
    single = [r for r in rows if r.cls == "training" and r.observation.gpus == 1]
    pairs = [
        (a, b)
        for a, b in accuracy.pairs(single)
        if single[a].observation.accelerator != single[b].observation.accelerator
    ][:3]
    assert pairs
    for a, b in pairs:
        oa, ob = single[a].observation, single[b].observation
        modelled = modelled_throughput([oa, ob], catalog, cal)
        # The gap carries to another part to the power its relation takes (transfer.py).
        alpha = pair_alpha(single, catalog, cal.baseline_transfer, a, b)
        shortcut = modelled[1] * (oa.throughput / modelled[0]) ** alpha
        base = {"accelerator": oa.accelerator, "gpus": oa.gpus, "throughput": oa.throughput}
        w = Workload.model_validate(
            {**oa.workload.model_dump(exclude_unset=True), "baseline": base}
        )
        p = predict(w, ob.accelerator, ob.gpus, catalog=catalog, calibration=cal)
        assert p.throughput == pytest.approx(shortcut, rel=0.01)


def test_rows_say_how_their_source_ran_them(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """Vision and diffusion rows the source ran through an inference engine use the engine
    mode (LLM serving keeps its decode-step mode); MLPerf's SDXL runs 20 steps with
    classifier-free guidance: 40 UNet evaluations per image."""
    from recommender.models.registry import resolve_model

    rows, _, _ = loaded
    by_key = {r.key.split("|")[0]: r.observation.workload for r in rows}
    assert by_key["mlperf-inference-v5.1/retinanet/Offline"].model.execution == "engine"
    assert by_key["mlperf-inference-v5.1/llama2-70b-99/Offline"].model.execution == "compiled"
    sdxl = by_key["mlperf-inference-v5.1/stable-diffusion-xl/Offline"]
    per_evaluation = resolve_model("stable-diffusion-xl").architecture.forward_flops
    assert sdxl.forward_flops_per_sample == pytest.approx(40 * per_evaluation)
    # NeuSight times forward + backward only: no optimizer update, no optimizer state
    neusight = [r.observation.workload for r in rows if r.source == "neusight"]
    trained = [w for w in neusight if w.training_job]
    assert trained and not any(w.model.optimizer_step for w in trained)
    dle = [r.observation.workload for r in rows if r.source == "nvidia-dle" and r.cls == "training"]
    assert dle and all(w.model.optimizer_step for w in dle)
    # torchtitan's 70B runs state tensor parallel 8; the batch is per data-parallel replica
    titan = [r.observation.workload for r in rows if r.key.startswith("torchtitan")]
    assert {w.training.tensor_parallel for w in titan} >= {1, 8}
    # the checkpointing and sharding a task states are pinned in the recipe
    assert {(w.training.checkpointing, w.training.sharding) for w in titan} >= {
        ("full", "zero3"),
        ("selective", "zero3"),
    }
    dle_recipes = {(w.training.checkpointing, w.training.sharding) for w in dle}
    assert dle_recipes == {("auto", "auto")}


def test_an_engines_stated_settings_reach_the_serving_spec(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """A row that states its engine's cap on sequences per copy and its share of memory (AMD's
    vLLM harness in MLPerf) pins them, with its tensor parallelism, in ``inference``; a row that
    states none keeps the engine's defaults (256 sequences, vLLM's 0.9)."""
    rows, _, _ = loaded
    amd = [
        r.observation.workload
        for r in rows
        if r.key.startswith("mlperf-inference-v5.1/llama2-70b-99/Interactive")
        and r.observation.accelerator == "MI300X"
    ]
    assert amd and {
        (w.inference.tensor_parallel, w.inference.max_batch, w.inference.memory_utilization)
        for w in amd
        if w.inference is not None
    } == {(1, 600, 1.0)}
    oci = [r.observation.workload for r in rows if r.source == "oci-blog"]
    assert oci and {
        (w.inference.tensor_parallel, w.inference.max_batch, w.inference.memory_utilization)
        for w in oci
        if w.inference is not None
    } == {(8, 256, None)}


def test_whisper_tokens_become_transcripts_by_the_datasets_length(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """MLPerf's Whisper result counts generated tokens (the submission checker reads
    result_tokens_per_second); at the dataset's 75 tokens per transcript they become
    transcripts per second, predicted by the encoder-decoder's generation loop."""
    import csv

    rows, _, _ = loaded
    whisper = [r for r in rows if "whisper" in r.key]
    assert whisper and all(r.absolute for r in whisper)
    with published.ROWS.open(newline="") as fh:
        source = {r["row_id"]: r for r in csv.DictReader(fh)}
    for r in whisper:
        w = r.observation.workload
        assert w.inference is not None and w.inference.output_tokens == 75
        value = float(source[r.row_id]["value"])
        assert r.observation.throughput == pytest.approx(value / 75)


def test_mlperf_llama_tokens_become_requests_by_the_datasets_output_length(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """MLPerf's Llama results are generated tokens/s; each benchmark's dataset fixes the
    tokens per request (llama3.1-8b: 129, from one log's samples/s and tokens/s over the
    whole dataset), so the rows are requests/s at that length, not at the engine's default."""
    import csv

    rows, _, _ = loaded
    with published.ROWS.open(newline="") as fh:
        source = {r["row_id"]: r for r in csv.DictReader(fh)}
    lengths = {"llama-3.1-8b": 129, "llama-2-70b": 294, "llama-3.1-405b": 685}
    mlperf = [
        r
        for r in rows
        if r.source == "mlperf-inference-v5.1" and source[r.row_id]["model_key"] in lengths
    ]
    assert {source[r.row_id]["model_key"] for r in mlperf} == set(lengths)
    for r in mlperf:
        tokens = lengths[source[r.row_id]["model_key"]]
        w = r.observation.workload
        assert w.inference is not None and w.inference.output_tokens == tokens
        row = source[r.row_id]
        assert row["metric"] in ("tokens_per_s", "output_tokens_per_s")
        value = float(row["value"]) * (r.observation.gpus if row["scope"] == "per_gpu" else 1)
        assert r.absolute and r.observation.throughput == pytest.approx(value / tokens)


def test_generated_tokens_of_no_stated_length_are_baselines_only(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """A per-sample workload's generated tokens whose count per sample no source states are
    a fixed multiple of its samples/s: a baseline for the same dataset, not an absolute rate;
    the no-baseline score leaves such rows out and the pairs keep them."""
    import numpy as np

    rows, _, catalog = loaded
    w = Workload.model_validate(
        {
            "name": "asr",
            "kind": "inference",
            "model": {"name": "whisper-large-v3", "sequence_length": 448},
        }
    )
    row = {"value": "120", "gpus": "2", "scope": "system", "metric": "output_tokens_per_s"}
    assert published._measured(row, w) == (120.0, False)
    whisper = [r for r in rows if "whisper" in r.key]
    other = next(
        r for r in whisper if r.observation.accelerator != whisper[0].observation.accelerator
    )
    same = [replace(r, absolute=False) for r in (whisper[0], other)]
    scores = accuracy.evaluate(same, catalog, np.ones(2), [0, 1], accuracy.pairs(same))
    assert not scores["absolute"].all()
    assert scores["baseline"].all()


def test_lookup_floor_recovers_a_separable_table(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """accuracy_floor.py's table fit is exact on rows that are separable by construction (each
    throughput a run offset x a factor per configuration x GPUs), so what it prints on the
    published rows is their noise, not the fit's."""
    from dataclasses import replace

    floor = pytest.importorskip("accuracy_floor")
    rows = loaded[0][:200]
    configs = sorted({floor.per_config(r) for r in rows}, key=repr)
    runs = sorted({r.key for r in rows})
    factor = {c: 1.0 + n for n, c in enumerate(configs)}
    offset = {k: 10.0 + 3 * n for n, k in enumerate(runs)}
    synthetic = [
        replace(
            r,
            observation=replace(
                r.observation,
                throughput=offset[r.key] * factor[floor.per_config(r)] * r.observation.gpus,
            ),
        )
        for r in rows
    ]
    table = floor.fit_table(synthetic, list(range(len(synthetic))), floor.per_config)
    model = floor.modelled(synthetic, table, floor.per_config)
    errors = [accuracy.with_baseline(synthetic, model, a, b) for a, b in accuracy.pairs(synthetic)]
    assert errors and max(errors) < 1e-6


def test_fit_subsample_is_stratified_and_stable_under_added_rows(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """Each source gets its share of the fit's rows, and rows added to one source move the
    subsample by about as many rows, not all of it (every-k-th-row sampling reshuffled it)."""
    rows = loaded[0]
    limit = 300
    full = accuracy._subsample(rows, limit)
    assert len(full) == limit
    totals, taken = Counter(r.source for r in rows), Counter(r.source for r in full)
    for source, n in totals.items():
        assert abs(taken[source] - limit * n / len(rows)) < 1.0
    source = max(totals, key=lambda s: totals[s])
    dropped = [r for r in rows if r.source == source][:7]
    fewer = accuracy._subsample([r for r in rows if r not in dropped], limit)
    moved = {r.row_id for r in full} ^ {r.row_id for r in fewer}
    assert len(moved) <= 2 * len(dropped) + 4


def test_multi_node_rows_carry_their_nodes_and_network(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """KempnerForge's runs over 2-8 nodes of 4 H200 (InfiniBand) and torchtitan's over 4-64
    nodes are planned across their nodes; the network is the assumed 400 Gb/s NIC per GPU at
    the fabric's achieved share. Single-node rows stay single-node."""
    from recommender.scoring.multinode import FABRIC_EFFICIENCY

    rows, _, _ = loaded
    kempner = [r for r in rows if r.source == "kempnerforge" and r.observation.nodes > 1]
    assert {r.observation.nodes for r in kempner} == {2, 4, 8}
    for r in kempner:
        o = r.observation
        line = 400e9 / 8 * (o.gpus / o.nodes)
        assert o.gpus / o.nodes == 4
        assert o.node_network_bytes_per_s == pytest.approx(line * FABRIC_EFFICIENCY["infiniband"])
        assert o.multinode_training
    titan = [r for r in rows if r.source == "torchtitan" and r.observation.nodes > 1]
    assert titan and all(r.observation.node_network_bytes_per_s > 0 for r in titan)
    assert all(
        r.observation.node_network_bytes_per_s == 0 for r in rows if r.observation.nodes == 1
    )


def test_the_readme_shows_the_tables_of_the_last_fit() -> None:
    """``accuracy.py --write`` saves its cross-validated tables beside the calibration it
    fits; the README shows exactly those, and both name the same number of rows."""
    import json
    import re

    root = BENCHMARKS.parent
    saved = accuracy.README_TABLES.read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- (.+?), (\d+) rows -->\n((?:\|.*\|\n?)+)", saved)
    assert [b[0] for b in blocks] == ["leave-one-source-out", "leave-one-architecture-out"]
    for _, _, table in blocks:
        assert table.strip() in readme
    note = json.loads(accuracy.CALIBRATION_JSON.read_text())["notes"]["fitted"]
    assert {f"of the {b[1]} predictable rows" for b in blocks} == {
        re.search(r"of the \d+ predictable rows", note).group(0)  # type: ignore[union-attr]
    }


def test_a_row_that_needs_more_than_the_peak_at_its_precision_is_skipped(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """DeepLearningExamples' BERT-Large "FP32" pre-training on V100 (19 and 149.6 sequences/s
    at 512 tokens) needs about 1.3x the V100's 15.7 TFLOP/s FP32 peak: it cannot have run as
    labelled, so it is skipped with that reason; its FP16 twin (75 sequences/s) is scored."""
    rows, skipped, catalog = loaded
    ids = {r.row_id for r in rows}
    assert skipped["needs more FLOP/s than its GPUs' peak at the stated precision"] == 2
    assert not {"extra:0013", "extra:0015"} & ids
    assert "extra:0014" in ids
    fp16 = next(r for r in rows if r.row_id == "extra:0014")
    o = fp16.observation
    v100 = catalog.accelerator(o.accelerator)
    assert published.above_peak(o.workload, v100, o.gpus, o.throughput) is None
    fp32 = o.workload.model_copy(update={"precision": "fp32"})
    share = published.above_peak(fp32, v100, o.gpus, 19.0)
    assert share is not None and 1.2 < share < 1.45


def test_the_held_out_errors_predictions_carry_are_the_readme_table() -> None:
    """Every prediction carries its class's leave-one-source-out error (heldout.json); the
    same ``--write`` run that saved the README's table wrote it, so its means and counts are
    that table's, class by class, with and without a baseline."""
    import re

    from recommender.scoring.heldout import held_out

    saved = accuracy.README_TABLES.read_text(encoding="utf-8")
    block = re.search(r"<!-- leave-one-source-out, (\d+) rows -->\n((?:\|.*\|\n?)+)", saved)
    assert block is not None
    data = held_out()
    assert data.rows == int(block.group(1))
    cells = [line.strip("|").split("|") for line in block.group(2).strip().splitlines()[2:]]
    table = {c[0].strip(): [x.strip() for x in c[1:]] for c in cells}
    assert set(data.classes) == set(table) - {"all"}
    for cls, errors in data.classes.items():
        pairs, with_mean, _, _, _, rows, without_mean = table[cls]
        assert (errors.with_baseline.count, errors.without_baseline.count) == (
            int(pairs),
            int(rows),
        )
        assert f"{errors.with_baseline.mean_pct:.1f}" == with_mean
        assert f"{errors.without_baseline.mean_pct:.1f}" == without_mean
        for e in (errors.with_baseline, errors.without_baseline):
            assert e.median_pct is not None and 0 < e.median_pct <= e.mean_pct  # type: ignore[operator]


def test_a_fold_fits_its_transfer_exponents_without_the_source_it_scores(
    loaded: tuple[list[object], Counter[str], object],
) -> None:
    """The exponents a leave-one-source-out fold scores its pairs with come only from the
    other sources' pairs: whatever the model says about the held-out source's rows, they do
    not move."""
    import numpy as np
    from accuracy_transfer import fitted_transfer

    rows, _, catalog = loaded
    rng = np.random.default_rng(1)
    measured = np.array([r.observation.throughput for r in rows])
    modelled = measured * np.exp(rng.normal(0.0, 0.3, len(rows)))
    held = {i for i, r in enumerate(rows) if r.source == "llamacpp-gpu-benchmarks"}
    assert held
    pair_list = accuracy.pairs(rows)
    first = fitted_transfer(rows, catalog, modelled, pair_list, held)
    moved = modelled.copy()
    moved[sorted(held)] *= np.exp(rng.normal(0.0, 1.0, len(held)))
    assert fitted_transfer(rows, catalog, moved, pair_list, held) == first
    assert fitted_transfer(rows, catalog, moved, pair_list) != first  # in the fit, they would
