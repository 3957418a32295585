"""Speed of ``recommend()`` over the full catalog, against two references in the same run.

1. ``recommend()``: predict, cost and rank every GPU offer of every cloud and region, and
   build the top-5 picks with reasons and alternatives (in-process, catalog already loaded).
2. A per-offer Python loop doing the same work: the engine's predictor and cost model called
   on one offer at a time, then a sort (what the code would cost without vectorisation).
3. gpuhunt (PyPI), the peer a user would otherwise reach for, loaded with the SAME offers
   (written in its v2 CSV catalog format and served from ``GPUHUNT_CATALOG_URL=file://...``),
   timing its in-memory ``Catalog.query()`` for all GPU offers: a filter only, no prediction.

Each figure is the median of repeated runs after a warm-up.

    python benchmarks/bench_recommend.py [--repeats 50]
"""

from __future__ import annotations

import argparse
import csv
import io
import logging
import os
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from recommender import Workload, load_catalog, load_workload, recommend
from recommender.catalog import Catalog
from recommender.scoring.cost import costs_of
from recommender.scoring.engine import context
from recommender.scoring.predict import Rows

WORKLOAD = {
    "name": "bench-bert-large",
    "kind": "training",
    "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11, "family": "transformer"},
    "precision": "bf16",
    "batch_size": 32,
    "data": {"samples": 8.8e4, "epochs": 2, "bytes_per_sample": 4.0e3},
}
# A job no single instance finishes in time: the multi-node planner searches node counts for
# every offer (the shipped example: Llama-3.1-70B pretraining on 1e12 tokens within 30 days).
MULTI_NODE_EXAMPLE = Path(__file__).resolve().parents[1] / "examples/llm-pretrain-multinode.yaml"
# LLM serving at a public endpoint: the shipped serving example with its TTFT and TPOT held
# for the 99th percentile of randomly arriving requests, so the planner also searches each
# configuration's slot occupancy (``scoring.queueing``) across its whole grid.
SERVING_EXAMPLE = Path(__file__).resolve().parents[1] / "examples/llm-serving.yaml"
GPUHUNT_FIELDS = [
    "instance_name",
    "location",
    "price",
    "cpu",
    "memory",
    "gpu_count",
    "gpu_name",
    "gpu_memory",
    "spot",
    "disk_size",
    "gpu_vendor",
    "flags",
    "cpu_arch",
    "provider_data",
]


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def per_offer_loop(w: Workload, catalog: Catalog) -> list[int]:
    ctx = context(w, catalog)
    t = catalog.offers
    scored = []
    for i in range(len(t)):
        rows = Rows(
            acc=t.acc[i : i + 1],
            gpus=t.gpus[i : i + 1].astype(np.float64),
            vcpus=t.vcpus[i : i + 1],
            local_disk_gb=t.local_disk_gb[i : i + 1],
        )
        p = ctx.predict(rows)
        c = costs_of(w, p, t.price[i : i + 1], t.spot[i : i + 1])
        if bool(p.fits[0]):
            scored.append((float(c.total_usd[0]) * float(c.hours[0]), i))
    scored.sort()
    return [i for _, i in scored[:5]]


def write_gpuhunt_catalog(catalog: Catalog, root: Path) -> int:
    """Our offers in gpuhunt's v2 catalog layout: {root}/{provider}/{version}/catalog.zip."""
    t = catalog.offers
    rows: dict[str, list[dict[str, str]]] = {}
    for o in t.offers():
        acc = catalog.accelerator(o.accelerator)
        rows.setdefault(o.cloud, []).append(
            {
                "instance_name": o.instance_type,
                "location": o.region,
                "price": str(o.price_per_hour),
                "cpu": str(int(o.vcpus)),
                "memory": str(o.memory_gib),
                "gpu_count": str(o.gpus),
                "gpu_name": acc.skypilot_name or acc.id,
                "gpu_memory": str(acc.memory_gb),
                "spot": str(o.pricing == "spot"),
                "disk_size": str(o.local_disk_gb),
                "gpu_vendor": acc.vendor if acc.vendor in ("nvidia", "amd") else "",
                "flags": "",
                "cpu_arch": "x86",
                "provider_data": "{}",
            }
        )
    for provider, items in rows.items():
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=GPUHUNT_FIELDS)
        writer.writeheader()
        writer.writerows(items)
        version_dir = root / provider / "bench"
        version_dir.mkdir(parents=True)
        (root / provider / "version").write_text("bench")
        with zipfile.ZipFile(version_dir / "catalog.zip", "w") as z:
            z.writestr(f"{provider}.csv", buf.getvalue())
    return sum(len(v) for v in rows.values())


def gpuhunt_query_ms(catalog: Catalog, repeats: int) -> tuple[float, int]:
    logging.getLogger("gpuhunt").setLevel(logging.CRITICAL)  # absent providers are expected
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        written = write_gpuhunt_catalog(catalog, root)
        os.environ["GPUHUNT_CATALOG_URL"] = root.as_uri()
        import gpuhunt

        hunt = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
        hunt.load()
        found = hunt.query(provider=["aws", "gcp", "azure"], min_gpu_count=1)
        assert len(found) == written, (len(found), written)
        ms = median_ms(
            lambda: hunt.query(provider=["aws", "gcp", "azure"], min_gpu_count=1), repeats
        )
    return ms, written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    catalog = load_catalog()
    w = Workload.model_validate(WORKLOAD)
    n = len(catalog.offers)
    ours = median_ms(lambda: recommend(w, catalog=catalog, top=5), args.repeats)
    loop = median_ms(lambda: per_offer_loop(w, catalog), max(3, args.repeats // 10))
    hunt, hunt_n = gpuhunt_query_ms(catalog, args.repeats)
    print(f"offers: {n} (instance x region x pricing, all clouds)")
    print(f"recommend() (predict + cost + rank + explain): median {ours:8.2f} ms")
    big = load_workload(MULTI_NODE_EXAMPLE)
    multi = median_ms(lambda: recommend(big, catalog=catalog, top=5), args.repeats)
    print(f"recommend() with the node search (70B, 30 days): median {multi:6.2f} ms")
    serving = load_workload(SERVING_EXAMPLE)
    spec = serving.model_dump(mode="json", exclude_unset=True)
    spec["targets"] = {**spec.get("targets", {}), "latency_percentile": 99.0}
    public = Workload.model_validate(spec)
    served = median_ms(lambda: recommend(public, catalog=catalog, top=5), args.repeats)
    print(f"recommend() serving, p99 TTFT and TPOT (13B):    median {served:6.2f} ms")
    print(
        f"per-offer Python loop, same work:               median {loop:8.2f} ms "
        f"({loop / ours:.0f}x slower)"
    )
    print(
        f"gpuhunt Catalog.query() over {hunt_n} offers:    median {hunt:8.2f} ms "
        f"(recommend is {hunt / ours:.1f}x faster)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
