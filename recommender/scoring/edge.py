"""Edge placement: which device (and how many) runs an inference workload within a power
budget and a unit price, at the target rate.

Edge spec sheets quote peak TOPS that real models rarely see (often sparse, always at the
best layer shapes), so compute runs at ``EDGE_EFFICIENCY`` of the peak. Devices without
their own DRAM (Coral, Hailo) keep weights in on-chip SRAM; a model larger than
``SRAM_MODEL_LIMIT_BYTES`` streams weights over the host link on every inference.
Each power mode a device has (Jetson ``nvpmodel``: 7 / 15 / 25 W on an Orin Nano) is a
candidate of its own, with the throughput that mode allows; the best mode per device is
picked. A device that needs a host (Coral USB, Hailo M.2) carries the host's price and power.
Cost = units x (list price + host price) + energy over the deployment's lifetime at the
mode's power plus the host's (``targets.energy_usd_per_kwh``, ``targets.lifetime_years``).
"""

from __future__ import annotations

import math

from recommender.catalog.schema import EdgeDevice, PowerMode
from recommender.scoring.engine import Context
from recommender.scoring.explain import bottleneck_advice
from recommender.scoring.freshness import catalog_freshness
from recommender.scoring.rank import P95_FACTOR
from recommender.scoring.results import Cost, Objective, Pick, Predicted, Recommendation
from recommender.scoring.shape import BYTES_PER_ELEMENT

__all__ = ["EDGE_EFFICIENCY", "EdgeEstimate", "estimate", "recommend_edge"]

EDGE_EFFICIENCY = 0.3
SRAM_MODEL_LIMIT_BYTES = 16e6
HOST_STREAM_BPS = 0.4e9  # USB 3 / PCIe Gen2 x1 class links of stick and M.2 accelerators
HOURS_PER_YEAR = 8766.0


class EdgeEstimate:
    """Per-device prediction for one workload."""

    def __init__(self, ctx: Context, dev: EdgeDevice, mode: PowerMode | None = None) -> None:
        w = ctx.workload
        self.device = dev
        self.mode = mode or dev.modes()[-1]
        ops = (
            self.mode.int8_tops
            if w.precision in ("int8", "fp8")
            else (self.mode.fp16_tflops or self.mode.int8_tops / 2)
        )
        weight_bytes = w.parameters * BYTES_PER_ELEMENT[w.precision]
        self.compute_s = w.batch_size * w.flops_per_sample / (ops * 1e12 * EDGE_EFFICIENCY)
        if dev.memory_gb > 0:
            bw = (self.mode.memory_bandwidth_gbs or dev.memory_bandwidth_gbs or 50.0) * 1e9 * 0.6
            self.memory_s = weight_bytes / bw
            self.fits = weight_bytes <= dev.memory_gb * 1e9 * 0.7
        else:
            streamed = weight_bytes > SRAM_MODEL_LIMIT_BYTES
            self.memory_s = weight_bytes / HOST_STREAM_BPS if streamed else 0.0
            self.fits = weight_bytes <= 20 * SRAM_MODEL_LIMIT_BYTES
        self.step_s = self.compute_s + self.memory_s
        self.throughput = w.batch_size / self.step_s
        t = w.targets
        self.units = max(t.devices or 1, math.ceil((t.requests_per_s or 0) / self.throughput))
        hours = t.lifetime_years * HOURS_PER_YEAR
        self.power_w = self.mode.watts + (dev.host.power_w if dev.host else 0.0)
        self.unit_usd = dev.list_price_usd + (dev.host.price_usd if dev.host else 0.0)
        self.energy_usd = self.units * self.power_w / 1000 * hours * t.energy_usd_per_kwh
        self.total_usd = self.units * self.unit_usd + self.energy_usd
        self.per_hour = self.total_usd / hours
        self.latency_s = self.step_s * P95_FACTOR
        self.bottleneck = "compute" if self.compute_s >= self.memory_s else "memory-bandwidth"

    def problems(self, ctx: Context) -> list[str]:
        t = ctx.workload.targets
        dev = self.device
        out = []
        precision = ctx.workload.precision
        if precision not in dev.precisions and not (
            precision == "fp32" and "fp16" in dev.precisions
        ):
            out.append(f"precision {precision} unsupported (runs {', '.join(dev.precisions)})")
        if not self.fits:
            out.append("model too large for its memory")
        if t.power_budget_w is not None and self.power_w > t.power_budget_w:
            out.append(f"draws {self.power_w:g} W > {t.power_budget_w:g} W budget")
        if t.unit_price_usd is not None and self.unit_usd > t.unit_price_usd:
            out.append(f"costs ${self.unit_usd:g} > ${t.unit_price_usd:g} per unit")
        if t.p95_latency_ms is not None and self.latency_s * 1e3 > t.p95_latency_ms:
            out.append(f"p95 ~{self.latency_s * 1e3:.0f} ms > {t.p95_latency_ms:g} ms")
        if t.budget_usd is not None and self.total_usd > t.budget_usd:
            out.append(f"${self.total_usd:,.0f} over the ${t.budget_usd:,.0f} budget")
        return out


def estimate(ctx: Context, dev: EdgeDevice, mode: PowerMode | None = None) -> EdgeEstimate:
    return EdgeEstimate(ctx, dev, mode)


def _host_text(dev: EdgeDevice) -> str:
    if dev.host is None:
        return ""
    return f" + host {dev.host.name} (${dev.host.price_usd:g}, {dev.host.power_w:g} W)"


def _pick(rank_no: int, e: EdgeEstimate, ctx: Context, objective: Objective) -> Pick:
    dev = e.device
    units = e.units
    why = [
        f"{'lowest lifetime cost' if objective != 'fastest' else 'lowest latency'}: "
        f"{units} x {dev.name} at ${dev.list_price_usd:g}{_host_text(dev)} "
        f"+ ${e.energy_usd:,.0f} energy",
        f"predicted {e.throughput:.4g} inferences/s per device, p95 ~{e.latency_s * 1e3:.1f} ms, "
        f"in its {e.mode.name} power mode ({e.power_w:g} W with the host)"
        if dev.host
        else f"predicted {e.throughput:.4g} inferences/s per device, "
        f"p95 ~{e.latency_s * 1e3:.1f} ms, in its {e.mode.name} power mode ({e.power_w:g} W)",
    ]
    return Pick(
        rank=rank_no,
        cloud="edge",
        region=None,
        instance_type=dev.id,
        accelerator=dev.name,
        gpus=units,
        pricing="purchase",
        purchase="unit",
        price_per_hour=round(e.per_hour / units, 6),
        predicted=Predicted(
            throughput=e.throughput * units,
            step_time_s=e.step_s,
            total_hours=None,
            bottleneck=e.bottleneck,
            utilization=1.0,
            p95_latency_ms=e.latency_s * 1e3,
        ),
        cost=Cost(
            total_usd=round(e.total_usd, 2),
            per_hour_usd=round(e.per_hour, 6),
            replicas=units,
            energy_usd=round(e.energy_usd, 2),
        ),
        why=why,
        limits=[f"{e.bottleneck}-bound on the device"],
    )


def _best_mode(ctx: Context, dev: EdgeDevice, objective: Objective) -> EdgeEstimate:
    """The device's mode that meets the targets and ranks best (else its top mode)."""
    modes = [estimate(ctx, dev, m) for m in dev.modes()]
    meeting = [e for e in modes if not e.problems(ctx)]
    return min(meeting, key=lambda e: _order(e, objective)) if meeting else modes[-1]


def _order(e: EdgeEstimate, objective: Objective) -> tuple[float, float]:
    if objective == "fastest":
        return (e.latency_s, e.total_usd)
    if objective == "cheapest":
        return (e.total_usd, e.latency_s)
    return (e.total_usd * e.latency_s, 0.0)


def recommend_edge(ctx: Context, objective: Objective, top: int) -> Recommendation:
    devices = ctx.catalog.edge_devices
    estimates = [_best_mode(ctx, d, objective) for d in devices]
    excluded: dict[str, int] = {}
    ok = []
    for e in estimates:
        problems = e.problems(ctx)
        for p in problems:
            reason = p.split(":")[0] if ":" in p else p.split(" ")[0]
            label = {
                "model": "model too large",
                "draws": "over the power budget",
                "costs": "over the unit price",
                "p95": "misses the p95 latency",
                "precision": "precision unsupported",
            }.get(reason, "over budget")
            excluded[label] = excluded.get(label, 0) + 1
        if not problems:
            ok.append(e)

    ok.sort(key=lambda e: _order(e, objective))
    picks = [_pick(i + 1, e, ctx, objective) for i, e in enumerate(ok[:top])]
    advice = (
        bottleneck_advice(ctx.workload, picks[0].predicted.bottleneck, 1.0)
        if picks
        else [
            "No edge device meets the targets: "
            + ", ".join(f"{n} {k}" for k, n in excluded.items())
        ]
    )
    if ctx.workload.precision not in ("int8", "fp8"):
        advice.append(
            "Quantise to int8 (post-training quantisation): edge accelerators "
            "quote their TOPS at int8, and Coral/Hailo run int8 only."
        )
    return Recommendation(
        workload=ctx.workload.name,
        workload_class="edge",
        objective=objective,
        picks=picks,
        advice=advice,
        offers_considered=len(devices),
        offers_feasible=len(ok),
        excluded=excluded,
        catalog=catalog_freshness(ctx.catalog),
    )
