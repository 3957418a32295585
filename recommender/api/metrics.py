"""Prometheus metrics, on a registry of the app's own (two apps in one process never mix).

Requests are counted and timed by route *template* (``/v1/profiles/{profile_id}``, not each
id) and status, by a pure-ASGI middleware that adds a few microseconds per request.

Under ``recommender serve --workers N`` the workers share ``PROMETHEUS_MULTIPROC_DIR``
(prometheus_client's multiprocess mode): each worker writes its values there, and a scrape of
any worker reports the sum over all of them (counters, histograms) or every live worker's
value by ``pid`` (catalog gauges, so that a worker serving another version shows).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recommender.api.catalog_state import Loaded

__all__ = ["Metrics", "MetricsMiddleware"]

UNMATCHED = "<unmatched>"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"})
# Request latency buckets (seconds), dense where the service's answers fall.
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Metrics:
    """Every metric the service exports, registered on ``self.registry``."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "recommender_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=r,
        )
        self.latency = Histogram(
            "recommender_http_request_duration_seconds",
            "Time to answer an HTTP request, by method, route template and status.",
            ["method", "route", "status"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.recommendations = Counter(
            "recommender_recommendations_served",
            "Recommendations computed and stored, by objective.",
            ["objective"],
            registry=r,
        )
        self.predictions = Counter(
            "recommender_predictions_served", "Predictions computed.", registry=r
        )
        self.profiles = Counter(
            "recommender_profiles_stored", "Probe profiles accepted and stored.", registry=r
        )
        self.catalog_loaded = Gauge(
            "recommender_catalog_loaded_timestamp_seconds",
            "When the serving catalog was loaded (Unix time).",
            registry=r,
            multiprocess_mode="liveall",
        )
        self.catalog_offers = Gauge(
            "recommender_catalog_offers",
            "Offers in the serving catalog.",
            registry=r,
            multiprocess_mode="liveall",
        )
        self.catalog_version = Gauge(
            "recommender_catalog_version_info",
            "1 for the catalog version (manifest) being served, 0 for ones served before.",
            ["version"],
            registry=r,
            multiprocess_mode="liveall",
        )
        self._age: Callable[[], float | None] = lambda: None
        self._serving: str | None = None
        self.catalog_reloads = Counter(
            "recommender_catalog_reloads",
            "Catalog (re)load attempts, by outcome (loaded or refused).",
            ["outcome"],
            registry=r,
        )

    def watch_catalog_age(self, age: Callable[[], float | None]) -> None:
        """The catalog age is computed when scraped (it grows by itself)."""
        self._age = age

    def record_reload(self, loaded: bool, current: Loaded | None) -> None:
        """Count a (re)load attempt; after a good one, record what this process serves."""
        self.catalog_reloads.labels("loaded" if loaded else "refused").inc()
        if loaded and current is not None:
            self.catalog_loaded.set(current.loaded_at.timestamp())
            self.catalog_offers.set(len(current.catalog.offers))
            if self._serving is not None and self._serving != current.version:
                # 0, not removed: multiprocess mode cannot remove a label (prometheus_client)
                self.catalog_version.labels(self._serving).set(0)
            self._serving = current.version
            self.catalog_version.labels(current.version).set(1)

    def exposition(self) -> bytes:
        multiproc_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
        if multiproc_dir:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=multiproc_dir)  # type: ignore[no-untyped-call]
        else:
            registry = self.registry
        # Recomputed per scrape on a registry of its own, so that it is never double-counted.
        scrape = CollectorRegistry()
        scrape.register(_AgeCollector(self._age))
        return generate_latest(registry) + generate_latest(scrape)


class _AgeCollector(Collector):
    def __init__(self, age: Callable[[], float | None]) -> None:
        self.age = age

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily(
            "recommender_catalog_age_seconds",
            "Age of the oldest price data in the serving catalog (NaN: none loaded).",
            value=_nan_if_none(self.age()),
        )


def _nan_if_none(value: float | None) -> float:
    return float("nan") if value is None else value


class MetricsMiddleware:
    """Counts and times every HTTP request by route template and final status."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_and_record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_record)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or UNMATCHED
            method = scope["method"] if scope["method"] in _METHODS else "OTHER"
            labels = (method, template, str(status))
            self.metrics.requests.labels(*labels).inc()
            self.metrics.latency.labels(*labels).observe(time.perf_counter() - start)
