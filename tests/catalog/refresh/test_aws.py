"""AWS refresher against botocore's Stubber (real client, real service model) and moto."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any
from unittest.mock import Mock

import boto3
import pytest
from botocore.stub import ANY, Stubber
from moto import mock_aws

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh import (
    Backoff,
    CredentialsRejectedError,
    MissingCredentialsError,
    RefreshOptions,
)
from recommender.catalog.refresh.aws import AwsRefresher
from recommender.catalog.refresh.aws_pricing import parse_product
from tests.catalog.refresh.conftest import fixture

REGION = "us-east-1"


def _client(service: str, region: str) -> Any:
    return boto3.client(
        service, region_name=region, aws_access_key_id="AKIDTEST", aws_secret_access_key="x"
    )


def _spot_pages() -> list[dict[str, Any]]:
    pages = fixture("aws_spot_price_history.json")["pages"]
    for page in pages:
        for entry in page["SpotPriceHistory"]:
            entry["Timestamp"] = dt.datetime.fromisoformat(entry["Timestamp"])
    return pages


def _price_list(products: list[dict[str, Any]], token: str | None = None) -> dict[str, Any]:
    page: dict[str, Any] = {
        "FormatVersion": "aws_v1",
        "PriceList": [json.dumps(p) for p in products],
    }
    if token:
        page["NextToken"] = token
    return page


def _pricing_filters(field: str, value: str) -> list[dict[str, str]]:
    terms = [
        ("regionCode", REGION),
        ("operatingSystem", "Linux"),
        ("tenancy", "Shared"),
        ("preInstalledSw", "NA"),
        ("capacitystatus", "Used"),
        (field, value),
    ]
    return [{"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in terms]


def _stub_east(ec2: Stubber, pricing: Stubber) -> None:
    """us-east-1: one throttle, then two pages of types, offerings, spot and prices."""
    types = fixture("aws_describe_instance_types.json")["pages"]
    ec2.add_client_error("describe_instance_types", service_error_code="RequestLimitExceeded")
    ec2.add_response("describe_instance_types", types[0], {})
    ec2.add_response("describe_instance_types", types[1], {"NextToken": "page-2"})
    offerings = fixture("aws_instance_type_offerings.json")
    del offerings["_source"]
    wanted = ["g5.12xlarge", "g5.xlarge", "inf2.xlarge", "p4d.24xlarge"]
    ec2.add_response(
        "describe_instance_type_offerings",
        offerings,
        {
            "LocationType": "availability-zone",
            "Filters": [{"Name": "instance-type", "Values": wanted}],
        },
    )
    spot = _spot_pages()
    expected = {"InstanceTypes": wanted, "ProductDescriptions": ANY, "StartTime": ANY}
    ec2.add_response("describe_spot_price_history", spot[0], expected)
    ec2.add_response(
        "describe_spot_price_history", spot[1], {**expected, "NextToken": "spot-page-2"}
    )
    prices = fixture("aws_price_list.json")
    gpu = {
        "ServiceCode": "AmazonEC2",
        "Filters": _pricing_filters("instanceFamily", "GPU instance"),
        "FormatVersion": "aws_v1",
    }
    pricing.add_response("get_products", _price_list(prices["gpu_instance_pages"][0], "p2"), gpu)
    pricing.add_response(
        "get_products", _price_list(prices["gpu_instance_pages"][1]), {**gpu, "NextToken": "p2"}
    )
    pricing.add_response("get_products", _price_list(prices["ml_asic_pages"][0]), None)
    # p4d.24xlarge is not under "GPU instance" in this fixture: asked for by type instead.
    by_type = {**gpu, "Filters": _pricing_filters("instanceType", "p4d.24xlarge")}
    pricing.add_response("get_products", _price_list(prices["p4d_pages"][0]), by_type)


@pytest.fixture
def stubbed() -> dict[str, Any]:
    clients = {
        ("ec2", REGION): _client("ec2", REGION),
        ("ec2", "us-west-2"): _client("ec2", "us-west-2"),
        ("pricing", REGION): _client("pricing", REGION),
    }
    stubs = {key: Stubber(c) for key, c in clients.items()}
    _stub_east(stubs[("ec2", REGION)], stubs[("pricing", REGION)])
    for _ in range(3):  # us-west-2 is throttled to death
        stubs[("ec2", "us-west-2")].add_client_error(
            "describe_instance_types", service_error_code="Throttling", http_status_code=400
        )
    for s in stubs.values():
        s.activate()
    return {"clients": clients, "stubs": stubs}


def test_stubbed_refresh_paginates_retries_and_reports(
    stubbed: dict[str, Any], names: AcceleratorNames, backoff: Backoff, sleeps: list[float]
) -> None:
    refresher = AwsRefresher(lambda service, region: stubbed["clients"][(service, region)])
    options = RefreshOptions(regions=(REGION, "us-west-2"), backoff=backoff)
    fetched = refresher.fetch(names, options)
    for s in stubbed["stubs"].values():
        s.assert_no_pending_responses()

    assert fetched.regions == {REGION}
    assert "us-west-2" in fetched.failed and "throttled" in fetched.failed["us-west-2"]
    assert len(sleeps) == 1 + 2  # one retry in us-east-1, two in us-west-2

    by_name = {m.name: m for m in fetched.machines.values()}
    assert by_name["g5.xlarge"].accelerator == "A10G" and by_name["g5.xlarge"].gpus == 1
    assert by_name["g5.12xlarge"].gpus == 4
    assert by_name["p4d.24xlarge"].accelerator == "A100-SXM4-40GB"
    assert by_name["inf2.xlarge"].accelerator == "Inferentia2"
    assert by_name["g5.xlarge"].gpu_memory_gib == pytest.approx(22888 / 1024, abs=0.01)

    g5 = fetched.quotes[by_name["g5.xlarge"].key][REGION]
    assert g5.on_demand == pytest.approx(1.006)
    assert g5.spot == pytest.approx(0.4023)  # latest of 1a, cheaper than 1b; local zone ignored
    assert g5.zones == ("us-east-1a", "us-east-1b")
    assert fetched.quotes[by_name["p4d.24xlarge"].key][REGION].on_demand == pytest.approx(32.7726)
    assert fetched.quotes[by_name["inf2.xlarge"].key][REGION].spot is None

    skipped = {s.instance_type: s for s in fetched.skipped}
    assert skipped["dl2q.24xlarge"].reason == "unknown-accelerator"
    assert skipped["dl2q.24xlarge"].accelerator == "Qualcomm AI100"
    assert skipped["g6f.large"].reason == "fractional-gpu"
    assert fetched.unknown_accelerators == ["Qualcomm AI100"]
    assert "m5.large" not in skipped and "m5.large" not in by_name


def test_parse_product_takes_plain_linux_on_demand_only() -> None:
    prices = fixture("aws_price_list.json")
    assert parse_product(json.dumps(prices["gpu_instance_pages"][0][0])) == ("g5.xlarge", 1.006)
    assert parse_product(json.dumps(prices["gpu_instance_pages"][0][1])) is None  # reservation
    assert parse_product(json.dumps(prices["sql_server"])) is None


def test_refused_credentials_stop_the_refresh(names: AcceleratorNames, backoff: Backoff) -> None:
    ec2 = _client("ec2", REGION)
    with Stubber(ec2) as stub:
        stub.add_client_error("describe_instance_types", service_error_code="AuthFailure")
        refresher = AwsRefresher(lambda s, r: ec2 if s == "ec2" else _client(s, r))
        with pytest.raises(CredentialsRejectedError, match="AuthFailure"):
            refresher.fetch(names, RefreshOptions(regions=(REGION,), backoff=backoff))


def _pricing_from_fixture() -> Mock:
    """A pricing client (spec: the real one) answering get_products from the fixture."""
    prices = fixture("aws_price_list.json")
    pages = {
        "GPU instance": prices["gpu_instance_pages"],
        "Machine Learning ASIC Instances": prices["ml_asic_pages"],
        "p4d.24xlarge": prices["p4d_pages"],
    }

    def paginate(**kwargs: Any) -> list[dict[str, Any]]:
        value = kwargs["Filters"][-1]["Value"]
        return [_price_list(p) for p in pages.get(value, [[]])]

    client = Mock(spec=_client("pricing", REGION))
    client.get_paginator.return_value.paginate.side_effect = paginate
    return client


@mock_aws
def test_moto_refresh_lists_regions_offerings_and_spot(
    names: AcceleratorNames, backoff: Backoff, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    pricing = _pricing_from_fixture()

    def make(service: str, region: str) -> Any:
        return pricing if service == "pricing" else boto3.client(service, region_name=region)

    refresher = AwsRefresher(make)
    regions = refresher._regions(make, RefreshOptions(backoff=backoff))
    assert REGION in regions and "eu-west-1" in regions  # describe_regions, served by moto

    fetched = refresher.fetch(names, RefreshOptions(regions=(REGION,), backoff=backoff))
    by_name = {m.name: m for m in fetched.machines.values()}
    g5 = fetched.quotes[by_name["g5.xlarge"].key][REGION]
    assert g5.on_demand == pytest.approx(1.006)
    assert g5.spot is not None and g5.spot < g5.on_demand  # moto's spot history
    assert set(g5.zones) <= {f"{REGION}{z}" for z in "abcdef"} and g5.zones
    assert by_name["p5en.48xlarge"].accelerator == "H200-SXM-141GB"
    assert by_name["trn1.32xlarge"].accelerator == "Trainium1"
    assert fetched.unknown_accelerators  # moto's data has GPUs our catalog lacks
    assert all(s.regions == (REGION,) for s in fetched.skipped)


def test_missing_credentials_fail_fast_without_metadata(
    names: AcceleratorNames, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in list(os.environ):
        if var.startswith("AWS_") and var != "AWS_EC2_METADATA_DISABLED":
            monkeypatch.delenv(var)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    import botocore.credentials

    def no_metadata(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the instance metadata provider was asked")

    monkeypatch.setattr(botocore.credentials.InstanceMetadataProvider, "load", no_metadata)
    monkeypatch.setattr(botocore.credentials.ContainerProvider, "load", no_metadata)
    with pytest.raises(MissingCredentialsError, match="AWS_ACCESS_KEY_ID") as info:
        AwsRefresher().fetch(names, RefreshOptions(instance_metadata=False))
    assert "AWS_PROFILE" in str(info.value)
