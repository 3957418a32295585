"""The shared machinery: merge (partial failure keeps rows), diff, integrity check, atomic write.

The cloud side is a :class:`Refresher` (our own protocol) returning a prepared ``Fetched``;
the cloud SDKs themselves are exercised in ``test_aws.py``, ``test_gcp.py``, ``test_azure.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog.loader import load_catalog
from recommender.catalog.refresh import (
    Fetched,
    RefreshOptions,
    RefreshSettings,
    diff_catalogs,
    refresh_cloud,
)
from recommender.catalog.refresh.base import Machine, Quote, Skipped
from recommender.catalog.refresh.merge import merge
from recommender.catalog.refresh.retry import Backoff, ThrottledError
from recommender.catalog.schema import Source
from tests.catalog.refresh.conftest import TODAY, cloud_catalog, instance, write_catalog

G5 = Machine("g5.xlarge", "g5", "G5", "whole instance", "A10G", 1, 4.0, 16.0, 250.0)
G6 = Machine("g6.xlarge", "g6", "G6", "whole instance", "L4", 1, 4.0, 16.0, 250.0)


def previous_aws() -> object:
    return cloud_catalog(
        "aws",
        {
            "g5": [
                instance(
                    "g5.xlarge",
                    "A10G",
                    1,
                    [
                        ("us-east-1", 1.006, 0.40),
                        ("us-west-2", 1.006, 0.45),
                        ("eu-west-1", 1.1, None),
                    ],
                )
            ],
            "p3": [instance("p3.2xlarge", "V100-SXM2-16GB", 1, [("us-east-1", 3.06, 0.9)])],
        },
    )


def fetched_aws(*, failed: dict[str, str] | None = None) -> Fetched:
    """us-east-1 answered (g5 cheaper, g6 new, p3 gone); us-west-2 failed."""
    f = Fetched("aws", Source(name="AWS EC2 API + Price List API"))
    f.add(G5, Quote("us-east-1", 0.9, 0.35, ("us-east-1a",)))
    f.add(G6, Quote("us-east-1", 0.8048, 0.9))  # spot above on-demand: dropped
    f.regions = {"us-east-1"}
    f.failed = failed if failed is not None else {"us-west-2": "still throttled"}
    f.skip(Skipped("dl2q.24xlarge", "unknown-accelerator", "x", "Qualcomm AI100", ("us-east-1",)))
    return f


def test_merge_keeps_rows_of_regions_not_refreshed() -> None:
    result = merge(previous_aws(), fetched_aws(), today=TODAY)  # type: ignore[arg-type]
    rows = {
        (i.name, p.region): (p.on_demand, p.spot)
        for fam in result.catalog.families
        for i in fam.instances
        for p in i.prices
    }
    assert rows[("g5.xlarge", "us-east-1")] == (0.9, 0.35)  # refreshed
    assert rows[("g5.xlarge", "us-west-2")] == (1.006, 0.45)  # failed: previous row kept
    assert rows[("g5.xlarge", "eu-west-1")] == (1.1, None)  # not visible: kept
    assert rows[("g6.xlarge", "us-east-1")] == (0.8048, None)
    assert ("p3.2xlarge", "us-east-1") not in rows  # gone from a refreshed region
    assert "still throttled" in result.kept_regions["us-west-2"]
    assert set(result.kept_regions) == {"us-west-2", "eu-west-1"}
    assert any("spot 0.9 not below on-demand" in n for n in result.notes)
    assert result.catalog.source.retrieved == TODAY
    assert "kept for 2 region(s)" in (result.catalog.source.note or "")


def test_diff_counts_added_removed_and_moved_prices() -> None:
    before = previous_aws()
    after = merge(before, fetched_aws(), today=TODAY).catalog  # type: ignore[arg-type]
    diff = diff_catalogs(before, after, threshold=0.05)  # type: ignore[arg-type]
    assert [r.label() for r in diff.added] == ["g6.xlarge (1 x L4) us-east-1 on_demand"]
    assert {(r.instance_type, r.pricing) for r in diff.removed} == {
        ("p3.2xlarge", "on_demand"),
        ("p3.2xlarge", "spot"),
    }
    changed = {(c.row.instance_type, c.row.pricing): round(c.share, 3) for c in diff.changed}
    assert changed == {("g5.xlarge", "on_demand"): -0.105, ("g5.xlarge", "spot"): -0.125}
    assert diff.before == 7 and diff.drop_share == pytest.approx(2 / 7)
    assert diff_catalogs(before, after, threshold=0.2).changed == []  # type: ignore[arg-type]


def _setup(catalog_dir: Path) -> tuple[Path, bytes]:
    path = write_catalog(catalog_dir, previous_aws())  # type: ignore[arg-type]
    return path, path.read_bytes()


def test_refresh_writes_a_valid_catalog(catalog_dir: Path, use) -> None:  # type: ignore[no-untyped-def]
    path, _ = _setup(catalog_dir)
    use(fetched_aws())
    report = refresh_cloud(
        "aws", catalog_dir, RefreshOptions(), RefreshSettings(max_drop=0.5, today=TODAY)
    )
    assert report.error is None and report.written
    loaded = load_catalog(catalog_dir).clouds["aws"]
    assert {i.name for f in loaded.families for i in f.instances} == {"g5.xlarge", "g6.xlarge"}
    assert loaded.source.name == "AWS EC2 API + Price List API"
    assert loaded.source.retrieved == TODAY
    assert path.read_text().startswith("# aws GPU instance catalog, refreshed from the cloud APIs")
    assert report.unknown_accelerators == ["Qualcomm AI100"]
    assert report.failed_regions == {"us-west-2": "still throttled"}
    assert not list(catalog_dir.glob(".aws.yaml.*"))  # no temporary file left behind


def test_dry_run_writes_nothing(catalog_dir: Path, use) -> None:  # type: ignore[no-untyped-def]
    path, before = _setup(catalog_dir)
    use(fetched_aws())
    report = refresh_cloud("aws", catalog_dir, RefreshOptions(), RefreshSettings(dry_run=True))
    assert report.error is None and not report.written and report.diff is not None
    assert path.read_bytes() == before
    assert any("a real run would refuse" in n for n in report.notes)  # 2/7 > 20 %


def test_large_drop_is_refused_unless_forced(catalog_dir: Path, use) -> None:  # type: ignore[no-untyped-def]
    path, before = _setup(catalog_dir)
    use(fetched_aws())
    report = refresh_cloud("aws", catalog_dir, RefreshOptions(), RefreshSettings(max_drop=0.1))
    assert report.error and "28.6%" in report.error and "--force" in report.error
    assert path.read_bytes() == before
    forced = refresh_cloud(
        "aws", catalog_dir, RefreshOptions(), RefreshSettings(max_drop=0.1, force=True)
    )
    assert forced.written and path.read_bytes() != before


def test_integrity_errors_refuse_the_result(catalog_dir: Path, use) -> None:  # type: ignore[no-untyped-def]
    path, before = _setup(catalog_dir)
    broken = fetched_aws()
    too_many = Machine("g5.96xlarge", "g5", "G5", None, "A10G", 64, 192.0, 768.0)
    broken.add(too_many, Quote("us-east-1", 40.0))
    use(broken)
    report = refresh_cloud("aws", catalog_dir, RefreshOptions(), RefreshSettings(force=True))
    assert report.error and "integrity check" in report.error
    assert "aws.yaml" in report.error and "64 x A10G" in report.error
    assert path.read_bytes() == before


def test_every_region_failing_is_an_error(catalog_dir: Path, use) -> None:  # type: ignore[no-untyped-def]
    path, before = _setup(catalog_dir)
    nothing = Fetched("aws", Source(name="x"), failed={"us-east-1": "still throttled"})
    use(nothing)
    report = refresh_cloud("aws", catalog_dir, RefreshOptions(), RefreshSettings())
    assert report.error and "no aws region could be refreshed" in report.error
    assert path.read_bytes() == before


def test_unreadable_previous_catalog_needs_force(catalog_dir: Path, use) -> None:  # type: ignore[no-untyped-def]
    (catalog_dir / "aws.yaml").write_text("cloud: aws\nfamilies: [\n")
    use(fetched_aws(failed={}))
    report = refresh_cloud("aws", catalog_dir, RefreshOptions(), RefreshSettings())
    assert report.error and "cannot be read" in report.error
    forced = refresh_cloud("aws", catalog_dir, RefreshOptions(), RefreshSettings(force=True))
    assert forced.written and forced.diff is not None and forced.diff.before == 0


def test_backoff_retries_only_throttling(sleeps: list[float], backoff: Backoff) -> None:
    calls: list[int] = []

    def flaky(fail: int) -> str:
        calls.append(1)
        if len(calls) <= fail:
            raise RuntimeError("Rate exceeded")
        return "ok"

    def throttle(exc: BaseException) -> float | None:
        return 0.0 if "Rate" in str(exc) else None

    assert backoff.call(lambda: flaky(2), throttle, "x") == "ok"
    assert sleeps == [1.0, 2.0]  # exponential
    calls.clear()
    with pytest.raises(ThrottledError, match="after 3 attempts"):
        backoff.call(lambda: flaky(99), throttle, "x")
    assert len(calls) == 3

    def broken() -> str:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):  # not throttling: no retry
        backoff.call(broken, throttle, "x")
    assert Backoff(cap_s=5.0).delay(10, asked_s=60.0) == 5.0  # capped, even when asked more
