"""Load on the HTTP service: concurrent recommendations and profile uploads over loopback.

Starts ``recommender serve`` in a subprocess (uvicorn, a scratch SQLite file in WAL mode,
the bundled catalog) unless ``--url`` names a running service, creates an API key, then for
``--seconds`` (after a warm-up) keeps ``--concurrency`` recommendation requests and
``--uploaders`` profile uploads in flight with httpx's AsyncClient. Workloads vary (model
size, kind, precision, constraints, objective, top), so nothing is answered twice alike.

Prints requests/s, p50/p90/p99 latency per kind, the error count, the CPU time per request
of the service (its processes, from ``/proc``) and of this client, with the request rate the
machine's CPUs could sustain at that cost, and profiles accepted vs profiles the service then
reports stored (they must be equal: nothing lost). Then, as the reference measured in the same
run, the same client drives ``_floor_app.py`` (FastAPI on uvicorn, the same routes doing no
work, the same workers) with recommendations only: the rate this machine allows any FastAPI
service under this client, and the service's share of it. Exits 1 on any
error or lost profile.

    python benchmarks/load.py [--seconds 20] [--workers 2] [--concurrency 8] [--uploaders 2]
    python benchmarks/load.py --database-url postgresql+psycopg://postgres@127.0.0.1/test
    python benchmarks/load.py --url http://127.0.0.1:8000 --api-key rk_...
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _service import child_pids, free_port, running

CLI = [sys.executable, "-c", "from recommender.cli import main; main()"]
HERE = Path(__file__).resolve().parent
PROFILE = Path(__file__).resolve().parents[1] / "tests" / "api" / "data" / "profile.json"


@dataclass
class Tally:
    """Latencies (seconds) of successful requests, and the failures, of one kind."""

    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        return statistics.quantiles(self.latencies, n=1000, method="inclusive")[int(q * 10) - 1]


def workloads(seed: int) -> Iterator[dict[str, Any]]:
    """An endless, varied stream of recommendation requests."""
    rng = random.Random(seed)
    while True:
        kind = rng.choice(["training", "training", "inference"])
        params = 10 ** rng.uniform(7.5, 10.3)
        body: dict[str, Any] = {
            "name": f"load-{kind}-{params:.2e}",
            "kind": kind,
            "model": {"parameters": params, "flops_per_sample": params * rng.uniform(200, 6000)},
            "precision": rng.choice(["bf16", "fp16", "fp32"]),
            "batch_size": rng.choice([1, 8, 16, 32, 64]),
            "objective": rng.choice(["cheapest", "fastest", "balanced"]),
            "top": rng.choice([1, 3, 5, 10]),
        }
        if kind == "training":
            body["data"] = {"samples": 10 ** rng.uniform(4, 7), "epochs": rng.choice([1, 2, 3])}
        if rng.random() < 0.3:
            body["constraints"] = {"clouds": [rng.choice(["aws", "gcp", "azure"])]}
        if rng.random() < 0.2:
            body["constraints"] = {"spot": False, "max_gpus": rng.choice([1, 2, 4, 8])}
        yield body


async def recommend_loop(
    client: httpx.AsyncClient, stream: Iterator[dict[str, Any]], until: float, tally: Tally
) -> None:
    while time.perf_counter() < until:
        body = next(stream)
        started = time.perf_counter()
        try:
            r = await client.post("/v1/recommendations", json=body)
        except httpx.HTTPError as exc:
            tally.errors.append(f"{type(exc).__name__}: {exc}")
            continue
        if r.status_code == 201 and r.json()["picks"] is not None:
            tally.latencies.append(time.perf_counter() - started)
        else:
            tally.errors.append(f"{r.status_code}: {r.text[:200]}")


async def upload_loop(
    client: httpx.AsyncClient, doc: dict[str, Any], key: str, until: float, tally: Tally
) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    while time.perf_counter() < until:
        doc["machine"]["hostname"] = f"vm-{uuid.uuid4().hex[:8]}"
        started = time.perf_counter()
        try:
            r = await client.post("/v1/profiles", json=doc, headers=headers)
        except httpx.HTTPError as exc:
            tally.errors.append(f"{type(exc).__name__}: {exc}")
            continue
        if r.status_code == 201:
            tally.latencies.append(time.perf_counter() - started)
        else:
            tally.errors.append(f"{r.status_code}: {r.text[:200]}")


@dataclass
class Cpu:
    """CPU seconds spent during the measured window, by the service and by this client."""

    server_s: float | None  # None: a service this script did not start (--url)
    client_s: float


def process_tree_cpu_s(root: int) -> float:
    """User + system CPU seconds of ``root`` and its child processes (uvicorn's workers),
    from ``/proc/<pid>/stat`` (fields 14 and 15, utime and stime, in clock ticks)."""
    ticks = 0
    for pid in [root, *child_pids(root)]:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


async def drive(
    args: argparse.Namespace, url: str, key: str, server_pid: int | None = None
) -> tuple[Tally, Tally, int, float, Cpu]:
    run = uuid.uuid4().hex[:8]
    doc = json.loads(PROFILE.read_text())
    doc["workload"]["name"] = f"load-{run}"
    limits = httpx.Limits(max_connections=args.concurrency + args.uploaders + 4)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:
        warm = time.perf_counter() + args.warmup
        stream = workloads(0)
        await asyncio.gather(
            *(recommend_loop(client, stream, warm, Tally()) for _ in range(args.concurrency))
        )
        recs, ups = Tally(), Tally()
        server_before = process_tree_cpu_s(server_pid) if server_pid else None
        client_before = time.process_time()
        started = time.perf_counter()
        until = started + args.seconds
        await asyncio.gather(
            *(recommend_loop(client, stream, until, recs) for _ in range(args.concurrency)),
            *(upload_loop(client, doc, key, until, ups) for _ in range(args.uploaders)),
        )
        elapsed = time.perf_counter() - started
        server_s = None
        if server_pid is not None and server_before is not None:
            server_s = process_tree_cpu_s(server_pid) - server_before
        cpu = Cpu(server_s, time.process_time() - client_before)
        listed = await client.get("/v1/profiles", params={"workload": doc["workload"]["name"]})
        stored = int(listed.json()["total"])
    return recs, ups, stored, elapsed, cpu


@contextlib.contextmanager
def served(args: argparse.Namespace) -> Iterator[tuple[str, str, int]]:
    """A fresh service on loopback with a scratch database; yields (url, api key, pid)."""
    with tempfile.TemporaryDirectory(prefix="recommender-load-") as tmp:
        database = args.database_url or f"sqlite:///{tmp}/load.db"
        env = {**os.environ, "RECOMMENDER_DATABASE_URL": database}
        env["RECOMMENDER_CATALOG_POLL_SECONDS"] = "0"
        # One loopback client is every request: this measures throughput, not the limiter
        # (benchmarks/abuse.py measures that).
        env["RECOMMENDER_RATE_LIMIT_PER_ADDRESS"] = ""
        env["RECOMMENDER_RATE_LIMIT_PER_KEY"] = ""
        create = [*CLI, "apikey", "create", "--name", "load"]
        key = subprocess.run(create, env=env, capture_output=True, text=True, check=True).stdout
        port = free_port()
        cmd = [*CLI, "serve", "--port", str(port), "--workers", str(args.workers)]
        url = f"http://127.0.0.1:{port}"
        cmd.append("--no-access-log")
        with running(cmd, url, env=env, stderr=subprocess.DEVNULL) as proc:
            yield url, key.strip(), proc.pid


@contextlib.contextmanager
def floor_served(args: argparse.Namespace) -> Iterator[tuple[str, str, int]]:
    """The reference: ``_floor_app`` (FastAPI, the same routes, no work) on uvicorn with the
    same workers; yields (url, a placeholder key, pid)."""
    port = free_port()
    cmd = [sys.executable, "-m", "uvicorn", "--factory", "_floor_app:create_app"]
    cmd += ["--app-dir", str(HERE), "--port", str(port), "--workers", str(args.workers)]
    url = f"http://127.0.0.1:{port}"
    with running([*cmd, "--no-access-log"], url, stderr=subprocess.DEVNULL) as proc:
        yield url, "", proc.pid


def report_reference(service: Tally, floor: Tally, elapsed: float, cpu: Cpu) -> None:
    rate = len(floor.latencies) / elapsed
    print(
        f"reference, the same client against FastAPI + uvicorn answering the same route with "
        f"no work ({len(floor.errors)} errors): {rate:.1f} recommendations/s, "
        f"p99 {floor.percentile(99) * 1e3:.1f} ms"
    )
    report_cpu(floor, Tally(), cpu)
    print(f"  the service reaches {len(service.latencies) / elapsed / rate:.0%} of it")


def report_cpu(recs: Tally, ups: Tally, cpu: Cpu) -> None:
    """CPU per request of the service and of the client, and the request rate the machine's
    CPUs could sustain at that cost (all cores busy, the one-process client on one of them):
    when the client shares the machine, that rate bounds what any service could show here."""
    requests = len(recs.latencies) + len(ups.latencies)
    if not requests:
        return
    client_ms = cpu.client_s / requests * 1e3
    if cpu.server_s is None:
        print(f"  CPU per request: client {client_ms:.2f} ms (service not started here)")
        return
    server_ms = cpu.server_s / requests * 1e3
    # All cores busy, and the client (one process) on at most one of them.
    ceiling = min((os.cpu_count() or 1) * 1e3 / (server_ms + client_ms), 1e3 / client_ms)
    print(
        f"  CPU per request: service {server_ms:.2f} ms, client {client_ms:.2f} ms; "
        f"{os.cpu_count()} CPU(s) at that cost sustain at most {ceiling:.0f} requests/s"
    )


def report(
    args: argparse.Namespace, recs: Tally, ups: Tally, stored: int, elapsed: float, cpu: Cpu
) -> bool:
    backend = "PostgreSQL" if (args.database_url or "").startswith("postgres") else "SQLite (WAL)"
    server = args.url if args.url else f"{args.workers} uvicorn worker(s), {backend}"
    print(
        f"{elapsed:.1f} s on {os.cpu_count()} CPU(s), load average before {args.load_before:.2f}; "
        f"server: {server}; clients: {args.concurrency} recommending, {args.uploaders} "
        "uploading (httpx AsyncClient, one process)"
    )
    for name, t in (("recommendations", recs), ("profile uploads", ups)):
        p50, p90, p99 = (t.percentile(q) * 1e3 for q in (50, 90, 99))
        print(
            f"  {name:16} {len(t.latencies) / elapsed:7.1f} req/s   p50 {p50:6.1f} ms"
            f"   p90 {p90:6.1f} ms   p99 {p99:6.1f} ms   errors {len(t.errors)}"
        )
    report_cpu(recs, ups, cpu)
    accepted = len(ups.latencies)
    print(f"  profiles accepted {accepted}, stored {stored}")
    for err in (recs.errors + ups.errors)[:5]:
        print(f"  error: {err}")
    return not recs.errors and not ups.errors and accepted == stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="Measured duration.")
    parser.add_argument("--warmup", type=float, default=3.0, help="Unmeasured seconds first.")
    parser.add_argument("--concurrency", type=int, default=8, help="Recommendations in flight.")
    parser.add_argument("--uploaders", type=int, default=2, help="Profile uploads in flight.")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers to start.")
    parser.add_argument(
        "--database-url", help="Database for the started service (default: a scratch SQLite)."
    )
    parser.add_argument(
        "--reference",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Also drive the no-work FastAPI app (_floor_app.py) with the same client.",
    )
    parser.add_argument("--url", help="Target a running service instead of starting one.")
    parser.add_argument("--api-key", help="With --url: a key that may upload profiles.")
    args = parser.parse_args()
    args.load_before = os.getloadavg()[0]
    if args.url:
        if not args.api_key:
            parser.error("--url needs --api-key (profile uploads need a key)")
        outcome = asyncio.run(drive(args, args.url, args.api_key))
    else:
        with served(args) as (url, key, pid):
            outcome = asyncio.run(drive(args, url, key, pid))
    ok = report(args, *outcome)
    if args.reference and not args.url:
        floor_args = argparse.Namespace(**{**vars(args), "uploaders": 0})
        with floor_served(floor_args) as (url, key, pid):
            floor, _, _, floor_elapsed, floor_cpu = asyncio.run(drive(floor_args, url, key, pid))
        report_reference(outcome[0], floor, floor_elapsed, floor_cpu)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
