"""Where a ``POST /v1/recommendations`` spends its CPU, stage by stage, in one process.

The service's own work per request, timed piece by piece on the requests
``benchmarks/load.py`` sends (the same varied stream), without HTTP: validating the body,
``recommend()``, dumping the answer, the JSON the store writes, the insert and commit into a
scratch SQLite database (migrated as ``recommender db upgrade`` does), and the response body.
The reference is ``recommend()`` itself, measured in the same run: each stage is printed as
its median and as a share of it. What the HTTP stack adds on top is the difference between
this sum and the per-request CPU that ``benchmarks/load.py`` observes.

    python benchmarks/service_stages.py [--requests 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from load import CLI, workloads

from recommender import load_catalog
from recommender.api.schemas import RecommendationRequest, StoredRecommendation
from recommender.scoring import recommend
from recommender.store import add_recommendation
from recommender.store.database import Database

WARMUP = 30
STAGES = ("validate", "recommend", "dump", "store json", "insert + commit", "response")


def _scratch_database(directory: Path) -> Database:
    url = f"sqlite:///{directory / 'stages.db'}"
    subprocess.run([*CLI, "db", "upgrade", "--database-url", url], check=True, capture_output=True)
    return Database(url)


def _one(body: dict[str, Any], catalog: Any, db: Database) -> dict[str, float]:
    """Seconds of each stage for one request."""
    took: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        out = fn()
        took[name] = time.perf_counter() - started
        return out

    req = timed("validate", lambda: RecommendationRequest.model_validate(body))
    asked, w = req.as_sent(), req.workload()
    rec = timed(
        "recommend", lambda: recommend(w, catalog=catalog, objective=req.objective, top=req.top)
    )
    result = timed("dump", lambda: rec.model_dump(mode="json"))
    timed("store json", lambda: json.dumps(result))
    started = time.perf_counter()
    with db.session() as session:
        row = add_recommendation(
            session, request=asked, result=result, workload_name=w.name,
            objective=req.objective, profile_id=None,
        )  # fmt: skip
        created, rec_id = row.created_at, row.id
    took["insert + commit"] = time.perf_counter() - started
    stored = StoredRecommendation(
        **dict(rec), id=rec_id, created_at=created, profile_id=None, request=asked
    )
    timed("response", stored.model_dump_json)
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    catalog = load_catalog()
    stream = workloads(1)
    samples: dict[str, list[float]] = {name: [] for name in STAGES}
    with tempfile.TemporaryDirectory(prefix="service-stages-") as tmp:
        db = _scratch_database(Path(tmp))
        for i in range(WARMUP + args.requests):
            took = _one(next(stream), catalog, db)
            if i >= WARMUP:
                for name in STAGES:
                    samples[name].append(took[name])
        db.dispose()
    reference = statistics.median(samples["recommend"])
    total = sum(statistics.median(v) for v in samples.values())
    print(f"{args.requests} requests of benchmarks/load.py's stream, one process, SQLite")
    for name in STAGES:
        median = statistics.median(samples[name])
        print(
            f"  {name:16} median {median * 1e3:7.3f} ms  ({median / reference:5.0%} of recommend)"
        )
    print(f"  {'sum of medians':16}        {total * 1e3:7.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
