"""AWS refresher (boto3): which GPU / Neuron instance types run where, and what they cost.

Per region: ``describe_instance_types`` (``GpuInfo``, ``NeuronInfo`` and
``InferenceAcceleratorInfo`` name the device and count), ``describe_instance_type_offerings``
by availability zone (local zones such as ``us-east-1-atl-2a`` are left out),
``describe_spot_price_history`` for spot and the Price List API for on-demand (see
:mod:`recommender.catalog.refresh.aws_pricing`). Credentials come from boto3's standard
chain; with ``instance_metadata`` off, the container and EC2 instance-role providers are
removed from it, so no metadata endpoint is ever asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh.aws_pricing import (
    PRICING_REGION,
    aws_throttle,
    error_code,
    on_demand_prices,
    spot_prices,
)
from recommender.catalog.refresh.base import (
    CredentialsRejectedError,
    Fetched,
    Machine,
    MissingCredentialsError,
    Quote,
    RefreshError,
    RefreshOptions,
    Skipped,
    chunks,
    import_sdk,
)
from recommender.catalog.refresh.mapping import resolve_family
from recommender.catalog.refresh.retry import ThrottledError
from recommender.catalog.schema import CloudName, Source

__all__ = ["AWS_CREDENTIALS_HELP", "AwsRefresher", "ClientFactory"]

SOURCE = "AWS EC2 API + Price List API"
SOURCE_URL = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstanceTypes.html"
AWS_CREDENTIALS_HELP = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary "
    "keys), or AWS_PROFILE naming a profile in ~/.aws/credentials or ~/.aws/config "
    "(e.g. after `aws sso login`)"
)
AUTH_CODES = frozenset(
    {
        "AuthFailure",
        "UnauthorizedOperation",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "ExpiredToken",
        "ExpiredTokenException",
        "SignatureDoesNotMatch",
        "AccessDeniedException",
    }
)
METADATA_PROVIDERS = ("container-role", "iam-role")

# (service, region) -> a boto3 client; tests pass moto- or Stubber-backed clients.
ClientFactory = Callable[[str, str], Any]


class AwsRefresher:
    """EC2 instance types with accelerators, per region, priced on-demand and spot."""

    cloud: CloudName = "aws"
    source_name = SOURCE

    def __init__(self, client_factory: ClientFactory | None = None) -> None:
        self._factory = client_factory

    def clients(self, options: RefreshOptions) -> ClientFactory:
        """boto3 clients on the standard credential chain; fails fast without credentials."""
        boto3 = import_sdk("aws", "boto3", "boto3")
        botocore_session = import_sdk("aws", "botocore.session", "boto3")
        config = import_sdk("aws", "botocore.config", "boto3").Config(
            connect_timeout=options.connect_timeout_s,
            read_timeout=options.read_timeout_s,
            retries={"max_attempts": 3, "mode": "standard"},
            user_agent_extra="instance-recommender-refresh",
        )
        core = botocore_session.get_session()
        if not options.instance_metadata:
            resolver = core.get_component("credential_provider")
            for provider in METADATA_PROVIDERS:
                resolver.remove(provider)
        if core.get_credentials() is None:
            raise MissingCredentialsError("AWS", AWS_CREDENTIALS_HELP)
        session = boto3.session.Session(botocore_session=core)

        def make(service: str, region: str) -> Any:
            return session.client(service, region_name=region, config=config)

        return make

    def ready(self, options: RefreshOptions) -> None:
        """Build the clients now, so missing SDKs or credentials fail before any work."""
        if self._factory is None:
            self._factory = self.clients(options)

    def fetch(self, names: AcceleratorNames, options: RefreshOptions) -> Fetched:
        make = self._factory or self.clients(options)
        fetched = Fetched("aws", Source(name=SOURCE, url=SOURCE_URL))
        regions = self._regions(make, options)
        pricing = make("pricing", PRICING_REGION)
        region_errors: tuple[type[Exception], ...] = (ThrottledError, *_sdk_errors())
        for i, region in enumerate(regions):
            options.progress(f"aws {region}", i, len(regions))
            try:
                self._region(make("ec2", region), pricing, region, names, options, fetched)
            except region_errors as exc:
                _raise_if_auth(exc)
                fetched.fail(region, _describe(exc))
            else:
                fetched.regions.add(region)
        options.progress("aws done", len(regions), len(regions))
        return fetched

    def _regions(self, make: ClientFactory, options: RefreshOptions) -> list[str]:
        if options.regions:
            return list(options.regions)
        ec2 = make("ec2", PRICING_REGION)
        region_errors: tuple[type[Exception], ...] = (ThrottledError, *_sdk_errors())
        try:
            got = options.backoff.call(
                lambda: ec2.describe_regions(AllRegions=False), aws_throttle, "describe_regions"
            )
        except region_errors as exc:
            _raise_if_auth(exc)
            raise RefreshError(f"cannot list the AWS regions: {_describe(exc)}") from exc
        return sorted(r["RegionName"] for r in got.get("Regions", []))

    def _region(
        self,
        ec2: Any,
        pricing: Any,
        region: str,
        names: AcceleratorNames,
        options: RefreshOptions,
        fetched: Fetched,
    ) -> None:
        machines = _accelerated_types(ec2, region, names, options, fetched)
        zones_of = _offered_zones(ec2, region, sorted(machines), options)
        spot = spot_prices(ec2, options.backoff, region, zones_of) if zones_of else {}
        on_demand = on_demand_prices(pricing, options.backoff, region, zones_of)
        for name, zones in sorted(zones_of.items()):
            quote = Quote(region, on_demand.get(name), spot.get(name), zones)
            if quote.on_demand is None and quote.spot is None:
                fetched.skip(
                    Skipped(
                        name, "no-price", "offered, but no on-demand or spot price", None, (region,)
                    )
                )
                continue
            fetched.add(machines[name], quote)


def _sdk_errors() -> tuple[type[Exception], ...]:
    exceptions = import_sdk("aws", "botocore.exceptions", "boto3")
    return (exceptions.ClientError, exceptions.BotoCoreError)


def _raise_if_auth(exc: BaseException) -> None:
    if error_code(exc) in AUTH_CODES:
        raise CredentialsRejectedError(
            f"AWS refused the request ({exc}); check that the credentials are valid and "
            "allow ec2:DescribeRegions, ec2:DescribeInstanceTypes, "
            "ec2:DescribeInstanceTypeOfferings, ec2:DescribeSpotPriceHistory and "
            f"pricing:GetProducts ({AWS_CREDENTIALS_HELP})"
        ) from exc


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def _device(info: dict[str, Any]) -> tuple[str, int, float | None, bool] | None:
    """(name, count, MiB per device, fractional?) of the accelerator, or ``None``."""
    for section, key in (
        ("GpuInfo", "Gpus"),
        ("NeuronInfo", "NeuronDevices"),
        ("InferenceAcceleratorInfo", "Accelerators"),
    ):
        devices = info.get(section, {}).get(key) or []
        if devices:
            d = devices[0]
            mib = d.get("MemoryInfo", {}).get("SizeInMiB")
            fractional = float(d.get("GpuPartitionSize", 1.0)) < 1.0
            return str(d["Name"]), int(d["Count"]), mib, fractional
    return None


def _machine(
    info: dict[str, Any], region: str, names: AcceleratorNames, fetched: Fetched
) -> Machine | None:
    device = _device(info)
    if device is None:
        return None
    name = str(info["InstanceType"])
    reported, count, mib, fractional = device
    if fractional or count < 1:
        fetched.skip(
            Skipped(name, "fractional-gpu", f"a fraction of one {reported}", reported, (region,))
        )
        return None
    match = resolve_family("aws", name, reported, names, family_guess=name.split(".")[0])
    if isinstance(match, Skipped):
        fetched.skip(replace(match, regions=(region,)))
        return None
    if match.note and match.note not in fetched.notes:
        fetched.notes.append(match.note)
    archs = info.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    return Machine(
        name=name,
        family=match.family,
        family_title=match.title,
        price_model=match.price_model,
        accelerator=match.accelerator,
        gpus=match.true_gpus or count,
        vcpus=float(info["VCpuInfo"]["DefaultVCpus"]),
        memory_gib=float(info["MemoryInfo"]["SizeInMiB"]) / 1024,
        local_disk_gb=float(info.get("InstanceStorageInfo", {}).get("TotalSizeInGB", 0)),
        gpu_memory_gib=round(float(mib) / 1024, 2) if mib else None,
        arch="arm64" if "arm64" in archs else "x86_64",
    )


def _accelerated_types(
    ec2: Any, region: str, names: AcceleratorNames, options: RefreshOptions, fetched: Fetched
) -> dict[str, Machine]:
    def pages() -> list[dict[str, Any]]:
        return list(ec2.get_paginator("describe_instance_types").paginate())

    got = options.backoff.call(pages, aws_throttle, f"ec2 describe_instance_types {region}")
    out: dict[str, Machine] = {}
    for page in got:
        for info in page.get("InstanceTypes", []):
            machine = _machine(info, region, names, fetched)
            if machine is not None:
                out[machine.name] = machine
    return out


def _offered_zones(
    ec2: Any, region: str, types: list[str], options: RefreshOptions
) -> dict[str, tuple[str, ...]]:
    """Type -> the region's own availability zones (not local zones) that offer it."""
    own_zone = re.compile(rf"^{re.escape(region)}[a-z]$")
    zones: dict[str, set[str]] = {}
    for chunk in chunks(types, 100):

        def pages(chunk: list[str] = chunk) -> list[dict[str, Any]]:
            paginator = ec2.get_paginator("describe_instance_type_offerings")
            return list(
                paginator.paginate(
                    LocationType="availability-zone",
                    Filters=[{"Name": "instance-type", "Values": chunk}],
                )
            )

        got = options.backoff.call(pages, aws_throttle, f"ec2 offerings {region}")
        for page in got:
            for offer in page.get("InstanceTypeOfferings", []):
                if own_zone.match(offer["Location"]):
                    zones.setdefault(offer["InstanceType"], set()).add(offer["Location"])
    return {name: tuple(sorted(z)) for name, z in zones.items()}
