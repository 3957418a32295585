"""Integrity checks over a whole catalog (gpuhunt-style): every problem, with its place.

Each check is a small function registered in :data:`CHECKS`; :func:`check_catalog` runs them
all and returns every :class:`Problem` found. Errors make a catalog unusable (the loader
refuses it); warnings flag data that is legal but suspicious (a price far from the same
instance's price elsewhere, a placeholder spot price) and are reported by
``recommender catalog validate``.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from recommender.catalog.names import AcceleratorNames, normalize_name
from recommender.catalog.network_checks import NETWORK_CHECKS
from recommender.catalog.problems import Problem
from recommender.catalog.schema import Accelerator, CloudCatalog, InstanceType
from recommender.catalog.yamlfile import Document, format_path

if TYPE_CHECKING:
    from recommender.catalog.catalog import Catalog

__all__ = ["CHECKS", "REGION_PATTERNS", "check_catalog"]

PathKey = tuple[str | int, ...]

# How each cloud spells a region; a region of another cloud or a zone does not match.
REGION_PATTERNS: dict[str, re.Pattern[str]] = {
    "aws": re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+$"),
    "gcp": re.compile(r"^[a-z]+-[a-z]+\d+$"),
    "azure": re.compile(r"^[a-z]+[a-z0-9]*$"),
}
# A price this many times above (or below 1/this of) the same instance's median across
# regions is flagged.
OUTLIER_FACTOR = 2.0
# Sorted regional prices of one instance that jump by this factor split into two groups
# (GCP's H100 at 4.20/GPU in some regions and 9.80+ in others); real regional premiums
# rise gradually (largest jump 1.46x in the shipped data).
SPLIT_FACTOR = 1.5
# Memory the cloud reports may differ from the datasheet by this share (GiB vs GB, reserved).
MEMORY_TOLERANCE = 0.12

Check = Callable[["Catalog"], Iterator[Problem]]
CHECKS: list[Check] = []


def _check(fn: Check) -> Check:
    CHECKS.append(fn)
    return fn


def check_catalog(catalog: Catalog) -> list[Problem]:
    """Run every registered check; problems come sorted by file and line."""
    problems = [p for check in CHECKS for p in check(catalog)]
    return sorted(problems, key=lambda p: (p.file, p.line or 0, p.field))


def _clouds(catalog: Catalog) -> Iterator[tuple[str, Document[CloudCatalog]]]:
    yield from catalog.cloud_docs.items()


@_check
def accelerator_ids_unique(catalog: Catalog) -> Iterator[Problem]:
    doc = catalog.accelerator_doc
    seen: dict[str, int] = {}
    owner: dict[str, str] = {}
    for i, acc in enumerate(doc.model.accelerators):
        if acc.id in seen:
            yield doc.lines.problem(
                ("accelerators", i, "id"),
                f"duplicate accelerator id {acc.id!r} (first at accelerators[{seen[acc.id]}])",
                check="duplicate",
            )
        seen.setdefault(acc.id, i)
        # Every name but the SkyPilot one (shared by variants on purpose) must be unique.
        names = {
            normalize_name(n): n
            for n in reversed([acc.id, acc.marketing_name, *acc.nvidia_smi_names, *acc.aliases])
        }
        for key, name in names.items():
            if owner.setdefault(key, acc.id) != acc.id:
                yield doc.lines.problem(
                    ("accelerators", i),
                    f"name {name!r} also belongs to {owner[key]!r}: resolution would be ambiguous",
                    check="ambiguous-name",
                )


@_check
def regions_well_formed(catalog: Catalog) -> Iterator[Problem]:
    for cloud, doc in _clouds(catalog):
        pattern = REGION_PATTERNS[cloud]
        seen: set[str] = set()
        for i, region in enumerate(doc.model.regions):
            if region in seen:
                yield doc.lines.problem(
                    ("regions", i), f"region {region!r} listed twice", check="duplicate"
                )
            seen.add(region)
            if not pattern.match(region):
                yield doc.lines.problem(
                    ("regions", i),
                    f"{region!r} is not a {cloud} region name (a zone, or another cloud's region?)",
                    check="unknown-region",
                )


def _instances(doc: Document[CloudCatalog]) -> Iterator[tuple[PathKey, InstanceType]]:
    for f, fam in enumerate(doc.model.families):
        for j, inst in enumerate(fam.instances):
            yield ("families", f, "instances", j), inst


@_check
def instances_consistent(catalog: Catalog) -> Iterator[Problem]:
    names = catalog.names
    for cloud, doc in _clouds(catalog):
        seen_fam: set[str] = set()
        for f, fam in enumerate(doc.model.families):
            if fam.name in seen_fam:
                yield doc.lines.problem(
                    ("families", f, "name"), f"duplicate family {fam.name!r}", check="duplicate"
                )
            seen_fam.add(fam.name)
        seen: dict[tuple[str, str, int], str] = {}
        for path, inst in _instances(doc):
            key = (inst.name, inst.accelerator, inst.gpus)
            if key in seen:
                yield doc.lines.problem(
                    (*path, "name"),
                    f"duplicate instance {inst.name} "
                    f"({inst.gpus} x {inst.accelerator}), first at "
                    f"{seen[key]}",
                    check="duplicate",
                )
            seen.setdefault(key, format_path(path))
            acc = names.by_id(inst.accelerator)
            if acc is None:
                yield from _unknown_accelerator(doc, path, inst.accelerator, names)
                continue
            yield from _gpu_consistency(doc, path, cloud, inst, acc)


def _unknown_accelerator(
    doc: Document[CloudCatalog], path: PathKey, name: str, names: AcceleratorNames
) -> Iterator[Problem]:
    matches = names.resolve_all(name, strict=False)
    if matches:
        hint = f"; use the canonical id {matches[0].id!r}"
    else:
        close = names.suggest(name)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
    yield doc.lines.problem(
        (*path, "accelerator"),
        f"unknown accelerator {name!r} (not an id in accelerators.yaml){hint}",
        check="unknown-accelerator",
    )


_GCP_COUNT = re.compile(r"-(\d+)g$")


def _gpu_consistency(
    doc: Document[CloudCatalog],
    path: PathKey,
    cloud: str,
    inst: InstanceType,
    acc: Accelerator,
) -> Iterator[Problem]:
    name, gpus, gpu_memory_gib = inst.name, inst.gpus, inst.gpu_memory_gib
    if gpus > acc.max_per_instance:
        yield doc.lines.problem(
            (*path, "gpus"),
            f"{gpus} x {acc.id} in one instance, but "
            f"no instance carries more than {acc.max_per_instance}",
            check="gpu-count",
        )
    m = _GCP_COUNT.search(name) if cloud == "gcp" else None
    if m and int(m.group(1)) != gpus:
        yield doc.lines.problem(
            (*path, "gpus"),
            f"{name} has {m.group(1)} GPUs by its name, the catalog says {gpus}",
            check="gpu-count",
        )
    if gpu_memory_gib is not None:
        share = inst.gpu_fraction or 1.0
        expected_gb = acc.memory_gb * share
        off = abs(gpu_memory_gib - expected_gb) / expected_gb
        if off > MEMORY_TOLERANCE:
            of = f" ({share:g} of {acc.memory_gb:g})" if inst.gpu_fraction else ""
            yield doc.lines.problem(
                (*path, "gpu_memory_gib"),
                f"{gpu_memory_gib:g} GiB per device, but {acc.id} has {expected_gb:g} GB{of}",
                check="gpu-memory",
            )


@_check
def prices_sane(catalog: Catalog) -> Iterator[Problem]:
    for _cloud, doc in _clouds(catalog):
        known = set(doc.model.regions)
        for path, inst in _instances(doc):
            seen: set[str] = set()
            for k, p in enumerate(inst.prices):
                where = (*path, "prices", k)
                if p.region not in known:
                    yield doc.lines.problem(
                        (*where, "region"),
                        f"region {p.region!r} is not in this file's regions list",
                        check="unknown-region",
                    )
                if p.region in seen:
                    yield doc.lines.problem(
                        (*where, "region"), f"second price for {p.region}", check="duplicate"
                    )
                seen.add(p.region)
                if p.on_demand is None and p.spot is None:
                    yield doc.lines.problem(
                        where, "neither an on-demand nor a spot price", check="price"
                    )
                if p.on_demand is not None and p.spot is not None:
                    if p.spot > p.on_demand:
                        yield doc.lines.problem(
                            (*where, "spot"),
                            f"spot {p.spot:g} exceeds on-demand {p.on_demand:g}",
                            check="spot-price",
                        )
                    elif p.spot == p.on_demand:
                        yield doc.lines.problem(
                            (*where, "spot"),
                            f"spot equals on-demand ({p.spot:g}): a placeholder, not a spot price",
                            severity="warning",
                            check="spot-price",
                        )


@_check
def price_outliers(catalog: Catalog) -> Iterator[Problem]:
    """A region far from the instance's median, or prices that fall into two groups."""
    for _cloud, doc in _clouds(catalog):
        for path, inst in _instances(doc):
            priced = sorted(
                (p.on_demand, p.region, k) for k, p in enumerate(inst.prices) if p.on_demand
            )
            if len(priced) < 3:
                continue
            split = _split(priced)
            if split is not None:
                yield _split_warning(doc, path, inst.name, priced[:split], priced[split:])
                continue
            median = statistics.median(v for v, _, _ in priced)
            for od, region, k in priced:
                if not median / OUTLIER_FACTOR <= od <= median * OUTLIER_FACTOR:
                    yield doc.lines.problem(
                        (*path, "prices", k, "on_demand"),
                        f"{inst.name} costs {od:g}/h in {region}, "
                        f"{od / median:.2f}x its median {median:g}/h over "
                        f"{len(priced)} regions",
                        severity="warning",
                        check="price-outlier",
                    )


Priced = list[tuple[float, str, int]]


def _split(priced: Priced) -> int | None:
    """Where sorted prices jump by :data:`SPLIT_FACTOR` between two groups of 2+ regions."""
    gap, at = max((priced[i + 1][0] / priced[i][0], i + 1) for i in range(len(priced) - 1))
    if gap < SPLIT_FACTOR or at < 2 or len(priced) - at < 2:
        return None  # no jump, or a lone region (the median test covers that)
    return at


def _split_warning(
    doc: Document[CloudCatalog], path: PathKey, name: str, low: Priced, high: Priced
) -> Problem:
    def group(g: Priced) -> str:
        regions = ", ".join(sorted(r for _, r, _ in g))
        span = f"{g[0][0]:g}" if g[0][0] == g[-1][0] else f"{g[0][0]:g}-{g[-1][0]:g}"
        return f"{span}/h in {len(g)} regions ({regions})"

    return doc.lines.problem(
        (*path, "prices"),
        f"{name} on-demand prices fall into two groups {high[0][0] / low[-1][0]:.2f}x apart: "
        f"{group(low)} vs {group(high)}; one group is likely mispriced",
        severity="warning",
        check="price-outlier",
    )


def _dominates(a: Accelerator, b: Accelerator) -> bool:
    """``a`` is at least ``b`` in memory, bandwidth and compute, and more in one of them."""
    ge = (
        a.memory_gb >= b.memory_gb
        and a.memory_bandwidth_gbs >= b.memory_bandwidth_gbs
        and a.peak_tflops.fp32 >= b.peak_tflops.fp32
    )
    gt = (
        a.memory_gb > b.memory_gb
        or a.memory_bandwidth_gbs > b.memory_bandwidth_gbs
        or a.peak_tflops.fp32 > b.peak_tflops.fp32
    )
    return ge and gt and a.architecture == b.architecture


@_check
def price_inversions(catalog: Catalog) -> Iterator[Problem]:
    """A strictly better GPU of the same generation priced below a lesser one, per GPU."""
    names = catalog.names
    for _cloud, doc in _clouds(catalog):
        cheapest: dict[tuple[str, str], tuple[float, PathKey]] = {}
        for path, inst in _instances(doc):
            for k, p in enumerate(inst.prices):
                if p.on_demand is None:
                    continue
                key = (p.region, inst.accelerator)
                per_gpu = p.on_demand / inst.gpus
                if key not in cheapest or per_gpu < cheapest[key][0]:
                    cheapest[key] = (per_gpu, (*path, "prices", k, "on_demand"))
        pairs: dict[tuple[str, str], list[str]] = defaultdict(list)
        first_path: dict[tuple[str, str], PathKey] = {}
        for (region, a_id), (a_price, a_path) in cheapest.items():
            a = names.by_id(a_id)
            for (region_b, b_id), (b_price, _) in cheapest.items():
                b = names.by_id(b_id)
                if region_b != region or a is None or b is None or not _dominates(a, b):
                    continue
                if a_price < 0.9 * b_price:
                    pairs[(a_id, b_id)].append(region)
                    first_path.setdefault((a_id, b_id), a_path)
        for (a_id, b_id), regions in sorted(pairs.items()):
            yield doc.lines.problem(
                first_path[(a_id, b_id)],
                f"{a_id} is cheaper per GPU "
                f"than the lesser {b_id} in {len(regions)} region(s) "
                f"({', '.join(sorted(regions)[:4])}...)",
                severity="warning",
                check="price-inversion",
            )


@_check
def edge_devices_sane(catalog: Catalog) -> Iterator[Problem]:
    doc = catalog.edge_doc
    if doc is None:
        return
    seen: set[str] = set()
    for i, dev in enumerate(doc.model.devices):
        if dev.id in seen:
            yield doc.lines.problem(
                ("devices", i, "id"), f"duplicate edge device {dev.id!r}", check="duplicate"
            )
        seen.add(dev.id)
        if dev.power_w_min > dev.power_w_max:
            yield doc.lines.problem(
                ("devices", i, "power_w_min"),
                f"{dev.power_w_min:g} W minimum exceeds the {dev.power_w_max:g} W maximum",
                check="power",
            )
        for k, mode in enumerate(dev.power_modes):
            if not dev.power_w_min <= mode.watts <= dev.power_w_max:
                yield doc.lines.problem(
                    ("devices", i, "power_modes", k, "watts"),
                    f"mode {mode.name} at {mode.watts:g} W is outside the device's "
                    f"{dev.power_w_min:g}-{dev.power_w_max:g} W",
                    check="power",
                )
            if mode.int8_tops > dev.int8_tops * (1 + 1e-9):
                yield doc.lines.problem(
                    ("devices", i, "power_modes", k, "int8_tops"),
                    f"mode {mode.name} allows {mode.int8_tops:g} TOPS, above the device's "
                    f"{dev.int8_tops:g}",
                    check="power",
                )


CHECKS.extend(NETWORK_CHECKS)
