"""Multi-node plans: when one instance is not enough, how many, how split, at what cost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from recommender import InvalidOptionError, load_workload, predict, recommend
from recommender.catalog import Catalog
from recommender.scoring import multinode, multinode_grid
from recommender.scoring.cluster_layout import distinct_configurations
from recommender.scoring.clusters import network_columns, node_counts, resilience_overhead
from recommender.scoring.multinode_grid import ClusterHardware, Grid
from recommender.scoring.shape import Shape
from recommender.workload import Workload

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOKENS = 1e12
SEQUENCE = 4096
THIRTY_DAYS_H = 30 * 24.0


def _pretrain(**extra: Any) -> Workload:
    """Llama-3.1-70B pretraining on 1e12 tokens (4,096-token samples, 4 M-token batches)."""
    spec: dict[str, Any] = {
        "name": "llama70b-pretrain",
        "kind": "training",
        "model": {"name": "llama-3.1-70b", "sequence_length": SEQUENCE},
        "precision": "bf16",
        "batch_size": 1,
        "training": {"global_batch": 1024},
        "data": {"samples": TOKENS / SEQUENCE, "epochs": 1},
        "targets": {"deadline_hours": THIRTY_DAYS_H},
    }
    for key, value in extra.items():
        spec[key] = {**spec.get(key, {}), **value} if isinstance(value, dict) else value
    return Workload.model_validate(spec)


def _deepseek(**constraints: Any) -> Workload:
    return Workload.model_validate(
        {
            "name": "deepseek-v3-serving",
            "kind": "inference",
            "model": {"name": "deepseek-v3", "execution": "compiled"},
            "precision": "bf16",
            "inference": {"prompt_tokens": 1024, "output_tokens": 256, "weights": "fp8"},
            "targets": {"tokens_per_s": 20000, "tpot_ms": 100},
            "constraints": constraints,
        }
    )


def test_70b_pretraining_in_30_days_gets_several_h100_nodes_with_tp_inside(
    catalog: Catalog,
) -> None:
    r = recommend(
        _pretrain(constraints={"accelerators": ["H100-SXM5-80GB"]}),
        catalog=catalog,
        objective="cheapest",
    )
    assert r.picks
    for p in r.picks:
        assert p.gpus == 8 and p.nodes >= 2 and p.total_gpus == 8 * p.nodes
        assert p.plan is not None and 2 <= p.plan.tensor_parallel <= 8  # inside the node
        tp, pp, dp = p.plan.tensor_parallel, p.plan.pipeline_parallel, p.plan.data_parallel
        assert tp * pp * dp == p.total_gpus
        assert p.plan.global_batch == 1024
        assert p.predicted.total_hours is not None and p.predicted.total_hours <= THIRTY_DAYS_H
        assert p.cost.total_usd is not None and p.cost.total_usd > 0
        assert p.cost.per_hour_usd == pytest.approx(p.price_per_hour * p.nodes, rel=1e-6)
        assert 0.5 < p.predicted.scaling_efficiency <= 1.0
        assert any(f"{p.nodes} x {p.instance_type}" in line for line in p.why)
    # The cost is the nodes' price for the hours: 6 N D FLOPs at a sane MFU (25-70 %).
    best = r.picks[0]
    assert best.predicted.total_hours is not None
    flops = 6 * 70.6e9 * TOKENS
    mfu = flops / (best.predicted.total_hours * 3600 * best.total_gpus * 989e12)  # type: ignore[operator]
    assert 0.25 < mfu < 0.7


def test_a_7b_fine_tune_stays_on_one_instance_and_unchanged(catalog: Catalog) -> None:
    w = load_workload(EXAMPLES / "llm-finetune.yaml")
    multi = recommend(w, catalog=catalog, top=5)
    single = recommend(
        w.model_copy(update={"constraints": w.constraints.model_copy(update={"max_nodes": 1})}),
        catalog=catalog,
        top=5,
    )
    assert multi.picks and all(p.nodes == 1 and p.total_gpus == p.gpus for p in multi.picks)
    assert multi.model_dump() == single.model_dump()


def test_deepseek_v3_spans_nodes_only_where_one_instance_cannot_hold_it(
    catalog: Catalog,
) -> None:
    anywhere = recommend(_deepseek(), catalog=catalog, top=10)
    assert anywhere.picks and all(p.nodes == 1 for p in anywhere.picks)  # 8 x H200 holds it
    h200 = recommend(_deepseek(accelerators=["H200-SXM-141GB"]), catalog=catalog)
    assert h200.picks and all(p.nodes == 1 for p in h200.picks)
    h100 = recommend(_deepseek(accelerators=["H100-SXM5-80GB"]), catalog=catalog)
    assert h100.picks
    for p in h100.picks:  # 671 B parameters in fp8 > 8 x 80 GB
        assert p.nodes == 2 and p.plan is not None
        assert (p.plan.tensor_parallel, p.plan.pipeline_parallel) == (8, 2)
        assert p.memory is not None and p.memory.needed_gb < p.memory.available_gb
        assert p.cost.monthly_usd is not None and p.cost.replicas >= 1


def test_a_family_without_fast_networking_is_not_multi_node_unless_allowed(
    catalog: Catalog,
) -> None:
    # GCP A2 Ultra (8 x A100 80 GB) has 100 Gbps Ethernet between VMs, no GPUDirect.
    only_a2 = {"clouds": ["gcp"], "accelerators": ["A100-SXM4-80GB"]}
    r = recommend(_pretrain(constraints=only_a2), catalog=catalog)
    assert not r.picks
    assert any("constraints.network: ethernet" in a for a in r.advice)
    # A smaller run (5e10 tokens) that Ethernet clusters can finish within the month.
    small = {"samples": 5e10 / SEQUENCE, "epochs": 1}
    allowed = recommend(
        _pretrain(constraints={**only_a2, "network": "ethernet"}, data=small), catalog=catalog
    )
    assert allowed.picks and all(p.nodes > 1 for p in allowed.picks)
    assert all(any("Ethernet" in limit for limit in p.limits) for p in allowed.picks)
    # The same job over EFA / InfiniBand scales better than over Ethernet.
    fast = recommend(
        _pretrain(constraints={"accelerators": ["A100-SXM4-80GB"]}, data=small), catalog=catalog
    )
    assert fast.picks
    ethernet_eff = max(p.predicted.scaling_efficiency for p in allowed.picks)
    assert max(p.predicted.scaling_efficiency for p in fast.picks) > ethernet_eff


def test_multi_node_on_spot_only_when_asked(catalog: Catalog) -> None:
    spot_only = {"accelerators": ["H100-SXM5-80GB"], "spot": True, "spot_only": True}
    r = recommend(_pretrain(constraints=spot_only), catalog=catalog)
    assert not r.picks and any("multi_node_spot" in a for a in r.advice)
    asked = recommend(
        _pretrain(constraints={**spot_only, "multi_node_spot": True}), catalog=catalog
    )
    assert asked.picks and all(p.pricing == "spot" and p.nodes > 1 for p in asked.picks)
    assert all(any("reclaimed node" in limit for limit in p.limits) for p in asked.picks)


def test_checkpoint_and_restart_overheads_grow_with_nodes_and_spot() -> None:
    nodes = np.array([2.0, 8.0, 64.0])
    on_demand = resilience_overhead(1.1e12, nodes, np.zeros(3, dtype=bool), 600.0)
    spot = resilience_overhead(1.1e12, nodes, np.ones(3, dtype=bool), 600.0)
    assert np.all(np.diff(on_demand) > 0) and np.all(spot > on_demand)
    assert on_demand[0] < 0.02  # two nodes lose little


def test_node_counts_cover_small_counts_and_the_limit() -> None:
    counts = node_counts(64).tolist()
    assert counts[:7] == [2, 3, 4, 5, 6, 7, 8] and counts[-1] == 64 and 48 in counts
    assert node_counts(1).size == 0 and node_counts(37).tolist()[-1] == 37


def test_bad_input_is_refused_naming_the_field(catalog: Catalog) -> None:
    with pytest.raises(ValidationError, match="max_nodes"):
        _pretrain(constraints={"max_nodes": 0})
    with pytest.raises(ValidationError, match=r"training\.tensor_parallel"):
        _pretrain(training={"tensor_parallel": 3})  # 64 heads
    with pytest.raises(InvalidOptionError, match="nodes"):
        predict(_pretrain(), "H100", 8, nodes=0, catalog=catalog)
    bert = load_workload(EXAMPLES / "bert-inference.yaml")
    with pytest.raises(InvalidOptionError, match="nodes must be 1 for this workload"):
        predict(bert, "T4", 1, nodes=2, catalog=catalog)


def test_an_unmeetable_deadline_names_the_fastest_plan_and_its_time(catalog: Catalog) -> None:
    r = recommend(_pretrain(targets={"deadline_hours": 24}), catalog=catalog)
    assert not r.picks and r.excluded["misses the deadline"] > 0
    (line,) = [a for a in r.advice if a.startswith("No plan meets the 24 h deadline")]
    assert " x " in line and " h for $" in line and "max_nodes" in line


def test_predict_on_nodes(catalog: Catalog) -> None:
    w = _pretrain()
    four = predict(w, "H100", 8, nodes=4, catalog=catalog)
    sixteen = predict(w, "H100", 8, nodes=16, catalog=catalog)
    assert four.nodes == 4 and four.total_gpus == 32 and four.fits_in_memory
    assert four.plan is not None and four.plan.tensor_parallel <= 8
    # 4x the nodes: close to 4x (more memory per GPU can allow a better layout: ZeRO's
    # superlinear effect), never a collapse.
    assert 3.0 < sixteen.throughput / four.throughput < 4.5
    serve = predict(_deepseek(), "H100", 8, nodes=2, catalog=catalog)
    assert serve.fits_in_memory and serve.tokens_per_s and serve.plan is not None
    assert serve.plan.pipeline_parallel == 2
    assert not predict(_deepseek(), "H100", 8, catalog=catalog).fits_in_memory


def test_the_catalog_says_each_familys_network(catalog: Catalog) -> None:
    t = catalog.offers
    names = {"p5.48xlarge": 3200, "a3-megagpu-8g": 1600, "Standard_ND96isr_H100_v5": 3200}
    for name, gbps in names.items():
        rows = np.flatnonzero(np.isin(t.instance, t.codes([name], "instance")))[:1]
        net = network_columns(catalog, t, rows)
        assert net.fast[0] and net.placement[0]
        assert net.bytes_per_s[0] < gbps * 1e9 / 8  # achieved, below the line rate
    g2 = np.flatnonzero(np.isin(t.instance, t.codes(["g2-standard-96"], "instance")))[:1]
    assert not network_columns(catalog, t, g2).fast[0]
    for cloud in catalog.clouds.values():
        for fam in cloud.families:
            assert fam.network is not None and fam.network.source.url, fam.name


def test_under_a_budget_the_fastest_cluster_within_it(catalog: Catalog) -> None:
    # Llama 3.1 70B: fewer nodes run the same plan with less communication (cheaper, slower).
    # Not the 405B: at this global batch its fewer-node plans need tensor parallelism and
    # gradient accumulation (ZeRO-3 gathers the weights again every micro-step), so under the
    # shipped calibration none costs less than its fastest cluster: nothing to pick between.
    def run(budget: float) -> Any:
        spec = {
            "name": "70b",
            "kind": "training",
            "model": {"name": "llama-3.1-70b", "sequence_length": SEQUENCE},
            "precision": "bf16",
            "batch_size": 1,
            "training": {"global_batch": 1024, "offload": "none"},  # fits no single instance
            "data": {"samples": 1e11 / SEQUENCE, "epochs": 1},
            "constraints": {"clouds": ["aws"], "accelerators": ["H100-SXM5-80GB"]},
            "targets": {"budget_usd": budget},
        }
        return recommend(Workload.model_validate(spec), catalog=catalog, objective="fastest")

    loose = run(1e7).picks[0]
    assert loose.cost.total_usd is not None
    # a budget just below the fastest cluster's cost: the fastest one within it has fewer
    # nodes (fewer nodes scale better: cheaper, slower)
    budget = 0.999 * loose.cost.total_usd
    tight = run(budget).picks[0]
    assert tight.cost.total_usd is not None and tight.cost.total_usd <= budget
    assert tight.nodes < loose.nodes
    assert tight.predicted.total_hours is not None and loose.predicted.total_hours is not None
    assert tight.predicted.total_hours > loose.predicted.total_hours
    none = run(1e5)
    assert not none.picks
    assert any(a.startswith("No plan fits the $100,000 budget: the cheapest") for a in none.advice)


def test_a_static_batch_across_nodes_decodes_to_its_cap(catalog: Catalog) -> None:
    """Static batches served across nodes run to the generation cap as on one node: a cap of
    twice the mean output costs more decode steps, so fewer tokens per second."""

    def serve(**inference: Any) -> Workload:
        w = _deepseek()
        spec = w.inference.model_copy(update=inference) if w.inference else None
        return w.model_copy(
            update={
                "inference": spec,
                "targets": w.targets.model_copy(update={"tpot_ms": None, "tokens_per_s": None}),
            }
        )

    same = predict(serve(engine="static"), "H100", 8, nodes=2, catalog=catalog)
    capped = predict(
        serve(engine="static", max_output_tokens=512), "H100", 8, nodes=2, catalog=catalog
    )
    assert same.tokens_per_s and capped.tokens_per_s
    assert capped.tokens_per_s < 0.9 * same.tokens_per_s


def _dense_layout_cells(
    w: Workload, s: Shape, hw: ClusterHardware, nodes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The layout rules evaluated on the whole (layout, configuration, node count) grid with
    ``np.mod``: the reference ``layout_grid``'s staged, quotient-based tests must match."""
    lay = multinode_grid._layouts(w, s)
    tp, pp, cp = (lay[:, i].reshape(-1, 1, 1) for i in (0, 1, 6))
    gpus, n = hw.gpus.reshape(1, -1, 1), nodes.reshape(1, 1, -1)
    valid = (tp <= gpus) & (np.mod(gpus, tp) == 0) & (pp <= n) & (np.mod(n, pp) == 0)
    valid &= pp <= max(s.layers, 1.0)
    per_node = np.maximum(gpus / tp, 1.0)
    cp_in = np.minimum(cp, per_node)
    valid &= (np.mod(per_node, cp_in) == 0) & (np.mod(cp, cp_in) == 0)
    valid &= np.mod(n / pp, cp / np.minimum(cp, per_node)) == 0
    group = per_node * (n / pp)
    if w.training.global_batch:
        valid &= np.mod(w.training.global_batch, group / cp) == 0
    valid &= np.mod(group, lay[:, 5].reshape(-1, 1, 1)) == 0
    li, ci, ki = np.nonzero(valid)
    return li, ci, ki


@pytest.mark.parametrize(
    "workload",
    [
        pytest.param(lambda: load_workload(EXAMPLES / "llm-pretrain-multinode.yaml"), id="70b"),
        pytest.param(
            lambda: _pretrain(model={"sequence_length": 65536}, training={"global_batch": 64}),
            id="context",
        ),
        pytest.param(lambda: _pretrain(training={"global_batch": 96}), id="batch-96"),
        pytest.param(lambda: _pretrain(model={"name": "mixtral-8x7b"}, training={}), id="experts"),
    ],
)
def test_the_layout_grid_keeps_exactly_the_cells_the_rules_allow(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, workload: Callable[[], Workload]
) -> None:
    seen: list[tuple[Workload, Shape, ClusterHardware, np.ndarray]] = []

    def capture(
        w: Workload, s: Shape, hw: ClusterHardware, nodes: np.ndarray
    ) -> tuple[Grid, tuple[int, int, int]]:
        seen.append((w, s, hw, nodes))
        return multinode_grid.layout_grid(w, s, hw, nodes)

    monkeypatch.setattr(multinode, "layout_grid", capture)
    recommend(workload(), catalog=catalog, top=3)
    assert seen, "the planner searched no node counts"
    for w, s, hw, nodes in seen:
        g, shape = multinode_grid.layout_grid(w, s, hw, nodes)
        li, ci, ki = _dense_layout_cells(w, s, hw, nodes)
        assert len(li) > 0
        np.testing.assert_array_equal(g.cell, np.ravel_multi_index((li, ci, ki), shape))
        np.testing.assert_array_equal(g.gpus, hw.gpus[ci])
        np.testing.assert_array_equal(g.nodes, nodes[ki])


def test_distinct_configurations_are_what_np_unique_gives() -> None:
    """The node search's configurations: the same order and inverse as ``np.unique`` over the
    stacked keys, ties and repeats included."""
    rng = np.random.default_rng(7)
    acc = rng.integers(0, 5, 400).astype(np.float64)
    gpus = rng.choice([1.0, 4.0, 8.0], 400)
    network = rng.choice([25e9, 50e9, 100e9, 400e9], 400)
    a, g, n, inverse = distinct_configurations(acc, gpus, network)
    unique, expected = np.unique(np.stack([acc, gpus, network]), axis=1, return_inverse=True)
    np.testing.assert_array_equal(np.stack([a, g, n]), unique)
    np.testing.assert_array_equal(inverse, expected.reshape(-1))
    empty = distinct_configurations(np.zeros(0), np.zeros(0), np.zeros(0))
    assert all(len(x) == 0 for x in empty)
