"""Replays the attacks and faults of issue 13 against ``recommender serve`` on loopback.

Each case starts a fresh service (2 workers, scratch SQLite file, a copy of the bundled
catalog), runs for a bounded time with a bounded number of requests, and prints one figure:

- disk-fill: bytes the database (file and WAL) grows per minute, period by period, while two
  clients post the largest recommendation the schema stores (the most real regions, the
  longest name, 50 picks) and the 950 KB region of the original attack, with a small
  anonymous quota: it grows until the quota is reached, then stays; the rows kept stay at it.
- stall: a normal client's p99 with and without two clients posting 660 KB bodies of
  330,000 invalid items (rate limits off, so the bounded work itself is measured).
- db-locked: time to a 503 for a profile upload while another process holds the database
  lock, and the /metrics and /v1/catalog/offers latency meanwhile.
- idle: whether a normal client is answered while 2,000 idle connections are open, and how
  many of those the server has closed after its header timeout; and the workers' memory
  while 400 clients trickle 1 MB bodies, and after the body timeout.
- catalogs: mixed-version and incomplete answers over 100 randomised updates (two files a
  moment apart, then the manifest), deletions and truncations of catalog files.
- spread: each worker's share of 2,000 requests on new connections (SO_REUSEPORT).

Clients use distinct loopback source addresses (127.0.0.2, ...) so that per-address limits
apply to each as they would to separate hosts.

    python benchmarks/abuse.py [--case disk-fill --case stall ...] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import itertools
import os
import random
import re
import resource
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from _service import child_pids, free_port, running

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from recommender.cli import main; main()"]
PROFILE = REPO / "tests" / "api" / "data" / "profile.json"
sys.path.insert(0, str(REPO))
from recommender.catalog.manifest import write_manifest  # noqa: E402
from recommender.workload import Constraints  # noqa: E402

WORKLOAD: dict[str, Any] = {
    "name": "abuse",
    "kind": "training",
    "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11},
    "batch_size": 8,
    "data": {"samples": 8.8e4, "epochs": 2},
}


@dataclass
class Service:
    url: str
    root: Path
    proc: subprocess.Popen[str]
    key: str

    @property
    def db(self) -> Path:
        return self.root / "abuse.db"

    def worker_pids(self) -> list[int]:
        return child_pids(self.proc.pid)

    def rss_mb(self) -> float:
        total = 0
        for pid in self.worker_pids() or [self.proc.pid]:
            with contextlib.suppress(OSError):
                status = Path(f"/proc/{pid}/status").read_text()
                total += int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        return total / 1024


@contextlib.contextmanager
def service(env_changes: dict[str, str], *, access_log: bool = False) -> Iterator[Service]:
    with tempfile.TemporaryDirectory(prefix="recommender-abuse-") as tmp:
        root = Path(tmp)
        catalog = root / "catalog"
        shutil.copytree(REPO / "catalogs", catalog, ignore=shutil.ignore_patterns("sources"))
        env = {
            **os.environ,
            "RECOMMENDER_DATABASE_URL": f"sqlite:///{root}/abuse.db",
            "RECOMMENDER_CATALOG_DIR": str(catalog),
            "RECOMMENDER_CATALOG_POLL_SECONDS": "0",
            **env_changes,
        }
        key = subprocess.run(
            [*CLI, "apikey", "create", "--name", "abuse"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        port = free_port()
        cmd = [*CLI, "serve", "--port", str(port), "--workers", "2"]
        cmd.append("--access-log" if access_log else "--no-access-log")
        url = f"http://127.0.0.1:{port}"
        with (
            (root / "serve.log").open("w") as log,
            running(cmd, url, stop_timeout_s=60, env=env, stdout=log, stderr=log, text=True) as p,
        ):
            yield Service(url, root, p, key)


def client(url: str, source: str, **kw: Any) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=source)
    return httpx.AsyncClient(base_url=url, transport=transport, timeout=30, **kw)


def p99_ms(latencies: list[float]) -> float:
    if len(latencies) < 2:
        return float("nan")
    return statistics.quantiles(latencies, n=100, method="inclusive")[98] * 1e3


# -- disk fill ---------------------------------------------------------------------------
@functools.cache
def _longest_regions() -> list[str]:
    """As many of the catalog's region names as ``constraints.regions`` admits, longest first:
    the service refuses a region it does not know, so padded names would not be stored."""
    from recommender import load_catalog

    bound = Constraints.model_fields["regions"].metadata[0].max_length
    names = sorted(set(load_catalog(REPO / "catalogs").offers.region_names), key=len)
    return names[::-1][:bound]


def largest_request(i: int) -> dict[str, Any]:
    """The largest recommendation request that is stored: the name at its bound, the most
    regions (real ones, the longest names) the schema admits, 50 picks."""
    name = f"fill-{i}".ljust(200, "z")
    constraints = {"regions": _longest_regions()}
    return {**WORKLOAD, "name": name, "top": 50, "constraints": constraints}


def _db_bytes(svc: Service) -> int:
    return sum(p.stat().st_size for p in svc.root.glob("abuse.db*") if p.suffix != ".lock")


async def _filler(svc: Service, source: str, until: float, tally: Counter[int]) -> None:
    async with client(svc.url, source) as c:
        i = 0
        while time.monotonic() < until:
            i += 1
            body = (
                largest_request(i)
                if i % 10
                else {**WORKLOAD, "constraints": {"regions": ["r" * 950_000]}}
            )
            try:
                r = await c.post("/v1/recommendations", json=body)
            except httpx.HTTPError:
                tally[-1] += 1
                continue
            tally[r.status_code] += 1
            if r.status_code == 429:
                await asyncio.sleep(float(r.headers.get("retry-after", "1")) / 10)


DISK_FILL_QUOTA = 100  # anonymous recommendations kept: reached within the first quarter
DISK_FILL_PERIODS = 4


def case_disk_fill(seconds: float) -> None:
    env = {
        "RECOMMENDER_ANONYMOUS_MAX_STORED": str(DISK_FILL_QUOTA),
        "RECOMMENDER_PRUNE_INTERVAL_SECONDS": "2",
        "RECOMMENDER_RATE_LIMIT_PER_ADDRESS": "600/minute",
    }
    with service(env) as svc:
        sizes = [_db_bytes(svc)]
        tally: Counter[int] = Counter()
        period = seconds / DISK_FILL_PERIODS

        async def run(until: float) -> None:
            await asyncio.gather(*(_filler(svc, f"127.0.0.{n}", until, tally) for n in (2, 3)))

        for _ in range(DISK_FILL_PERIODS):  # the first fills up to the quota; then at it
            asyncio.run(run(time.monotonic() + period))
            sizes.append(_db_bytes(svc))
        with sqlite3.connect(svc.db) as conn:
            rows = conn.execute("SELECT count(*) FROM recommendations").fetchone()[0]
    growth = ", ".join(f"{(b - a) / period * 60 / 1e6:.1f}" for a, b in itertools.pairwise(sizes))
    print(
        f"disk-fill: the database (file, WAL) grew {growth} MB/min in {DISK_FILL_PERIODS} "
        f"periods of {period:.0f} s ({sizes[-1] / 1e6:.1f} MB in all; issue: 925 MB in 20 s); "
        f"rows kept {rows} (anonymous quota {DISK_FILL_QUOTA}, pruned every 2 s); answers "
        f"{dict(sorted(tally.items()))}"
    )


# -- one client stalls a worker ------------------------------------------------------------
HUGE_INVALID = (
    b'{"name":"x","kind":"training","model":{"parameters":1,"flops_per_sample":1},'
    b'"data":{"samples":1},"constraints":{"regions":[' + b",".join([b"1"] * 330_000) + b"]}}"
)


async def _normal(url: str, until: float, latencies: list[float]) -> None:
    async with client(url, "127.0.0.9") as c:
        while time.monotonic() < until:
            started = time.perf_counter()
            r = await c.post("/v1/recommendations", json={**WORKLOAD, "top": 3})
            if r.status_code == 201:
                latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.02)


async def _abuser(url: str, source: str, until: float, sizes: list[int]) -> None:
    headers = {"content-type": "application/json"}
    async with client(url, source) as c:
        while time.monotonic() < until:
            with contextlib.suppress(httpx.HTTPError):
                r = await c.post("/v1/recommendations", content=HUGE_INVALID, headers=headers)
                sizes.append(len(r.content))


def case_stall(seconds: float) -> None:
    env = {"RECOMMENDER_RATE_LIMIT_PER_ADDRESS": "", "RECOMMENDER_RATE_LIMIT_PER_KEY": ""}
    with service(env) as svc:
        calm: list[float] = []
        asyncio.run(_normal(svc.url, time.monotonic() + seconds / 2, calm))
        loud: list[float] = []
        sizes: list[int] = []

        async def run() -> None:
            until = time.monotonic() + seconds / 2
            await asyncio.gather(
                _normal(svc.url, until, loud),
                _abuser(svc.url, "127.0.0.2", until, sizes),
                _abuser(svc.url, "127.0.0.3", until, sizes),
            )

        asyncio.run(run())
    before, during = p99_ms(calm), p99_ms(loud)
    print(
        f"stall: normal p99 {before:.1f} ms alone, {during:.1f} ms beside two clients posting "
        f"{len(HUGE_INVALID) / 1e3:.0f} KB bodies of 330,000 invalid items (ratio "
        f"{during / before:.2f}); {len(sizes)} abusive answers of at most "
        f"{max(sizes, default=0)} bytes (issue: 42.5 MB, p99 5.4 s)"
    )


# -- a locked database -----------------------------------------------------------------------
def case_db_locked(seconds: float) -> None:
    doc = PROFILE.read_text()
    with service({"RECOMMENDER_DB_LOCK_TIMEOUT_MS": "1000"}) as svc:
        headers = {"Authorization": f"Bearer {svc.key}", "content-type": "application/json"}
        lock = sqlite3.connect(svc.db, isolation_level=None, timeout=30)
        lock.execute("BEGIN EXCLUSIVE")
        to_503: list[float] = []
        side: list[float] = []
        statuses: Counter[int] = Counter()
        try:
            until = time.monotonic() + seconds
            while time.monotonic() < until and len(to_503) < 20:
                started = time.perf_counter()
                r = httpx.post(f"{svc.url}/v1/profiles", content=doc, headers=headers, timeout=60)
                statuses[r.status_code] += 1
                if r.status_code == 503:
                    to_503.append(time.perf_counter() - started)
                for path in ("/metrics", "/v1/catalog/offers?limit=5"):
                    started = time.perf_counter()
                    assert httpx.get(f"{svc.url}{path}", timeout=60).status_code == 200
                    side.append(time.perf_counter() - started)
        finally:
            lock.close()
        ready = httpx.get(f"{svc.url}/readyz", timeout=10).status_code
    print(
        f"db-locked (SQLite, BEGIN EXCLUSIVE held): profile upload answered 503 in "
        f"{statistics.median(to_503) * 1e3:.0f} ms median, {max(to_503) * 1e3:.0f} ms max "
        f"({dict(statuses)}); /metrics and /v1/catalog/offers meanwhile p50 "
        f"{statistics.median(side) * 1e3:.1f} ms, max {max(side) * 1e3:.1f} ms "
        f"(issue: 500s, 42 s); /readyz after release {ready}"
    )


# -- idle connections and trickled bodies ------------------------------------------------------
def _open_idle(port: int, count: int) -> list[socket.socket]:
    socks = []
    for i in range(count):
        s = socket.socket()
        s.bind((f"127.0.1.{1 + i % 200}", 0))
        s.connect(("127.0.0.1", port))
        socks.append(s)
    return socks


def _closed(s: socket.socket) -> bool:
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def case_idle(seconds: float) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16_384), hard))
    env = {
        "RECOMMENDER_SERVER_HEADER_TIMEOUT_SECONDS": "5",
        "RECOMMENDER_SERVER_BODY_TIMEOUT_SECONDS": "5",
    }
    with service(env) as svc:
        port = int(svc.url.rsplit(":", 1)[1])
        idle = _open_idle(port, 2000)
        answered, latencies = 0, []
        for _ in range(20):
            started = time.perf_counter()
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{svc.url}/v1/catalog/offers?limit=1", timeout=10).status_code == 200:
                    answered += 1
                    latencies.append(time.perf_counter() - started)
        time.sleep(7)
        closed = sum(_closed(s) for s in idle)
        for s in idle:
            s.close()
        rss_before = svc.rss_mb()
        trickling = _trickle(port, 400)
        time.sleep(2)
        rss_peak = svc.rss_mb()
        time.sleep(6)  # past the body timeout
        answers = Counter(_answer(s) for s in trickling)
        for s in trickling:
            s.close()
        time.sleep(1)
        rss_after = svc.rss_mb()
    print(
        f"idle: {answered}/20 normal requests answered with 2,000 idle connections open "
        f"(p50 {statistics.median(latencies) * 1e3:.1f} ms); {closed}/2000 idle ones closed by "
        f"the server after its 5 s header timeout (issue: unreachable at 1,100)"
    )
    print(
        f"trickle: workers' RSS {rss_before:.0f} MB before, {rss_peak:.0f} MB with 400 clients "
        f"half-way through 1 MB bodies, {rss_after:.0f} MB after; answers {dict(answers)} "
        "(408: the 5 s body timeout; 503: the buffered-body bound) (issue: 800 bodies took "
        "1 GB, 820 MB kept)"
    )


def _answer(s: socket.socket) -> str:
    """What the server did to a trickling client: its status line's code, or closed."""
    s.setblocking(False)
    try:
        data = s.recv(64)
    except BlockingIOError:
        return "waiting"
    except OSError:
        return "closed"
    return data[9:12].decode() if data.startswith(b"HTTP/1.1 ") else "closed"


def _trickle(port: int, count: int) -> list[socket.socket]:
    socks = []
    head = (
        b"POST /v1/profiles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000000\r\n\r\n"
    )
    for i in range(count):
        s = socket.socket()
        s.bind((f"127.0.2.{1 + i % 200}", 0))
        s.connect(("127.0.0.1", port))
        s.sendall(head + b" " * 524_000)
        socks.append(s)
    return socks


# -- catalogs under randomised updates ----------------------------------------------------------
MARKED = re.compile(r"\{region: ([\w-]+), on_demand: ([0-9.]+)")


def _mark(path: Path, value: float) -> str:
    """Set the first on-demand price in ``path`` to ``value``; returns that row's region."""
    text = path.read_text()
    first = MARKED.search(text)
    assert first is not None
    path.write_text(text[: first.start(2)] + f"{value:.1f}" + text[first.end(2) :])
    return first.group(1)


async def _watch(url: str, regions: list[str], until: float, seen: list[tuple[str, Any]]) -> None:
    params = [("region", r) for r in regions] + [("limit", "1000")]
    async with client(url, "127.0.0.5") as c:
        while time.monotonic() < until:
            with contextlib.suppress(httpx.HTTPError):
                r = await c.get("/v1/catalog/offers", params=params)
                if r.status_code == 200:
                    body = r.json()
                    marks = sorted(
                        (o["cloud"], o["price_per_hour"])
                        for o in body["items"]
                        if o["price_per_hour"] >= 1000 and o["pricing"] == "on-demand"
                    )
                    seen.append((r.headers["x-catalog-version"], (body["total"], marks)))
            await asyncio.sleep(0.01)


def _settle(url: str, version: str, timeout_s: float) -> bool:
    """Wait until eight status answers in a row (both workers) name ``version``."""
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        answers = {httpx.get(f"{url}/v1/catalog/status").json()["version"] for _ in range(8)}
        if answers == {version}:
            return True
        time.sleep(0.2)
    return False


def case_catalogs(steps: int) -> None:
    with service({"RECOMMENDER_CATALOG_POLL_SECONDS": "0.1"}) as svc:
        catalog = svc.root / "catalog"
        aws, gcp = catalog / "aws.yaml", catalog / "gcp.yaml"
        rng = random.Random(13)
        published: dict[str, Any] = {}
        regions = [_mark(aws, 1000.0), _mark(gcp, 1000.0)]
        version = write_manifest(catalog).version
        started = time.monotonic()
        if not _settle(svc.url, version, 30):  # the watcher starts once both workers serve it
            raise SystemExit(f"catalogs: the service never served version {version}")
        print(f"  catalogs: both workers on the marked version {time.monotonic() - started:.1f} s")
        first = httpx.get(
            f"{svc.url}/v1/catalog/offers",
            params=[("region", r) for r in regions] + [("limit", "1000")],
        ).json()
        published[version] = (first["total"], [("aws", 1000.0), ("gcp", 1000.0)])
        seen: list[tuple[str, Any]] = []
        actions: Counter[str] = Counter()

        async def mutate() -> None:
            nonlocal version
            good = {p.name: p.read_bytes() for p in catalog.glob("*.yaml")}
            for step in range(1, steps + 1):
                action = rng.choice(["update", "update", "delete", "truncate"])
                actions[action] += 1
                if action == "update":
                    value = 1000.0 + step
                    _mark(aws, value)
                    await asyncio.sleep(rng.uniform(0.05, 0.3))  # two files, a moment apart
                    _mark(gcp, value)
                    version = write_manifest(catalog).version
                    published[version] = (first["total"], [("aws", value), ("gcp", value)])
                    good = {p.name: p.read_bytes() for p in catalog.glob("*.yaml")}
                else:
                    victim = catalog / rng.choice(sorted(good))
                    if action == "delete":
                        victim.unlink()
                    else:
                        data = good[victim.name].splitlines(keepends=True)
                        victim.write_bytes(b"".join(data[: rng.randint(1, len(data) - 1)]))
                    await asyncio.sleep(rng.uniform(0.2, 0.5))
                    for name, data in good.items():  # the operator puts it back
                        (catalog / name).write_bytes(data)
                await asyncio.sleep(rng.uniform(0.2, 0.4))

        async def run() -> None:
            until = time.monotonic() + steps * 1.5 + 5
            watcher = asyncio.create_task(_watch(svc.url, regions, until, seen))
            await mutate()
            await asyncio.sleep(1)
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

        asyncio.run(run())
        settled = time.monotonic()
        answers = _settle(svc.url, version, 30)  # every worker on the last published version
        settle_s = time.monotonic() - settled + 1.0  # run() waited 1 s already
    mixed = sum(1 for v, (_, marks) in seen if len({m for _, m in marks}) > 1)
    unknown = sum(1 for v, answer in seen if published.get(v) != answer)
    versions = len({v for v, _ in seen})
    for v, answer in [(v, a) for v, a in seen if published.get(v) != a][:3]:
        print(f"  not published: {v} {answer} (published: {published.get(v)})")
    print(
        f"catalogs: {len(seen)} answers over {steps} randomised changes "
        f"({dict(actions)}): {mixed} mixed-version, {unknown} not a published version "
        f"(incomplete or unknown); {versions} versions served; every worker on the last "
        f"published version {settle_s:.1f} s after the last change"
        + ("" if answers else " NOT REACHED")
    )


# -- spread over workers ------------------------------------------------------------------------
def case_spread(requests: int) -> None:
    env = {"RECOMMENDER_RATE_LIMIT_PER_ADDRESS": ""}
    with service(env, access_log=True) as svc:
        for i in range(requests):
            httpx.get(f"{svc.url}/v1/catalog/status", timeout=10)  # a new connection each
            if i % 500 == 499:
                time.sleep(0.1)
        time.sleep(1)
        log = (svc.root / "serve.log").read_text()
    pids = Counter(re.findall(r"\[(\d+)\] [\d.:]+ - \"GET /v1/catalog/status", log))
    shares = ", ".join(f"{n / requests:.1%}" for n in sorted(pids.values(), reverse=True))
    print(
        f"spread: {requests} requests on new connections over {len(pids)} workers: {shares} "
        "(issue: 157-167 vs 301 per second)"
    )


CASES = {
    "disk-fill": lambda a: case_disk_fill(a.seconds),
    "stall": lambda a: case_stall(a.seconds),
    "db-locked": lambda a: case_db_locked(min(a.seconds, 20)),
    "idle": lambda a: case_idle(a.seconds),
    "catalogs": lambda a: case_catalogs(a.catalog_steps),
    "spread": lambda a: case_spread(2000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="Default: all.")
    parser.add_argument("--seconds", type=float, default=20.0, help="Duration of timed cases.")
    parser.add_argument("--catalog-steps", type=int, default=100, help="Catalog changes.")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f}")
    for name in args.case or list(CASES):
        CASES[name](args)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
