"""Azure refresher (azure-mgmt-compute, azure-identity, httpx): GPU VM sizes per region, priced.

``ComputeManagementClient.resource_skus.list()`` names every VM size in every region with
its capabilities (``GPUs``, ``vCPUs``, ``MemoryGB``, ``MaxResourceVolumeMB``) and any
restriction for this subscription; the GPU model comes from the size name through
:mod:`recommender.catalog.families` (Azure's API does not name it). Prices come from the
public Retail Prices API (:mod:`recommender.catalog.refresh.azure_prices`). Credentials:
``DefaultAzureCredential``; with ``instance_metadata`` off, its managed-identity step (the
only one that asks 169.254.169.254) is excluded.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

import httpx

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh.azure_prices import retail_prices
from recommender.catalog.refresh.base import (
    CredentialsRejectedError,
    Fetched,
    Machine,
    MissingCredentialsError,
    Quote,
    RefreshError,
    RefreshOptions,
    Skipped,
    import_sdk,
)
from recommender.catalog.refresh.mapping import resolve_family
from recommender.catalog.refresh.retry import ThrottledError
from recommender.catalog.schema import CloudName, Source

__all__ = ["AZURE_CREDENTIALS_HELP", "AzureClients", "AzureRefresher"]

SOURCE = "Azure Resource SKUs API + Retail Prices API"
SOURCE_URL = (
    "https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices"
)
AZURE_CREDENTIALS_HELP = (
    "set AZURE_SUBSCRIPTION_ID, and either AZURE_TENANT_ID, AZURE_CLIENT_ID and "
    "AZURE_CLIENT_SECRET (a service principal) or sign in with `az login`"
)
MANAGEMENT_SCOPE = "https://management.azure.com/.default"
# Sizes that share one GPU; Azure reports "GPUs: 1" for them. Source:
# https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/nva10v5-series
FRACTIONAL = {
    "Standard_NV6ads_A10_v5": "1/6 of an A10",
    "Standard_NV12ads_A10_v5": "1/3 of an A10",
    "Standard_NV18ads_A10_v5": "1/2 of an A10",
}


@dataclass(frozen=True, slots=True)
class AzureClients:
    """The resource-SKU operations of a compute client, and an HTTP client for prices."""

    skus: Any  # azure.mgmt.compute.operations.ResourceSkusOperations
    http: httpx.Client


def _credential(options: RefreshOptions) -> Any:
    identity = import_sdk("azure", "azure.identity", "azure-identity")
    core_errors = import_sdk("azure", "azure.core.exceptions", "azure-core")
    credential = identity.DefaultAzureCredential(
        exclude_managed_identity_credential=not options.instance_metadata,
        exclude_interactive_browser_credential=True,
    )
    try:
        credential.get_token(MANAGEMENT_SCOPE)
    except core_errors.ClientAuthenticationError as exc:
        detail = "managed identity not tried: instance metadata disabled"
        raise MissingCredentialsError(
            "Azure", AZURE_CREDENTIALS_HELP, None if options.instance_metadata else detail
        ) from exc
    return credential


def azure_throttle(exc: BaseException) -> float | None:
    """0.0 when ``exc`` is an Azure SDK HTTP 429 / 503, else ``None``."""
    return 0.0 if getattr(exc, "status_code", None) in (429, 503) else None


class AzureRefresher:
    """Azure GPU VM sizes (NC, ND, NV) per region, priced pay-as-you-go and spot."""

    cloud: CloudName = "azure"
    source_name = SOURCE

    def __init__(self, clients: AzureClients | None = None) -> None:
        self._clients = clients

    def clients(self, options: RefreshOptions) -> AzureClients:
        """A compute client on DefaultAzureCredential; fails fast without credentials."""
        compute = import_sdk("azure", "azure.mgmt.compute", "azure-mgmt-compute")
        subscription = os.environ.get("AZURE_SUBSCRIPTION_ID")
        if not subscription:
            raise MissingCredentialsError("Azure", AZURE_CREDENTIALS_HELP, "no subscription")
        client = compute.ComputeManagementClient(
            _credential(options),
            subscription,
            connection_timeout=options.connect_timeout_s,
            read_timeout=options.read_timeout_s,
            retry_total=3,
        )
        timeout = httpx.Timeout(options.read_timeout_s, connect=options.connect_timeout_s)
        return AzureClients(client.resource_skus, httpx.Client(timeout=timeout))

    def ready(self, options: RefreshOptions) -> None:
        """Build the clients now, so missing SDKs or credentials fail before any work."""
        if self._clients is None:
            self._clients = self.clients(options)

    def fetch(self, names: AcceleratorNames, options: RefreshOptions) -> Fetched:
        clients = self._clients or self.clients(options)
        fetched = Fetched("azure", Source(name=SOURCE, url=SOURCE_URL))
        by_region = self._sizes(clients, names, options, fetched)
        regions = sorted(by_region)
        for i, region in enumerate(regions):
            options.progress(f"azure {region}", i, len(regions))
            machines = by_region[region]
            try:
                prices = retail_prices(clients.http, region, machines, options.backoff)
            except (ThrottledError, httpx.HTTPError) as exc:
                fetched.fail(region, str(exc).splitlines()[0][:300])
                continue
            fetched.regions.add(region)
            for name, machine in sorted(machines.items()):
                quote = Quote(region, prices.get((name, False)), prices.get((name, True)))
                if quote.on_demand is None and quote.spot is None:
                    fetched.skip(Skipped(name, "no-price", "no retail price", None, (region,)))
                else:
                    fetched.add(machine, quote)
        options.progress("azure done", len(regions), len(regions))
        return fetched

    def _sizes(
        self,
        clients: AzureClients,
        names: AcceleratorNames,
        options: RefreshOptions,
        fetched: Fetched,
    ) -> dict[str, dict[str, Machine]]:
        """Region -> GPU size name -> machine, from the resource SKUs."""
        filters: list[str | None] = [f"location eq '{r}'" for r in options.regions] or [None]
        by_region: dict[str, dict[str, Machine]] = defaultdict(dict)
        restricted: dict[str, int] = defaultdict(int)
        for flt, region in zip(filters, options.regions or (None,), strict=True):
            try:
                skus = self._list(clients, flt, options)
            except RefreshError as exc:
                if region is None:
                    raise
                fetched.fail(region, str(exc))
                continue
            for sku in skus:
                _take(sku, names, fetched, by_region, restricted, options)
        if restricted:
            where = ", ".join(f"{r} ({n})" for r, n in sorted(restricted.items()))
            fetched.notes.append(
                f"GPU sizes restricted for this subscription (NotAvailableForSubscription) "
                f"in {where}; kept with their public prices"
            )
        return dict(by_region)

    def _list(self, clients: AzureClients, flt: str | None, options: RefreshOptions) -> list[Any]:
        errors = import_sdk("azure", "azure.core.exceptions", "azure-core")

        def drain() -> list[Any]:
            pager = clients.skus.list(filter=flt) if flt else clients.skus.list()
            return list(pager)

        try:
            return options.backoff.call(drain, azure_throttle, f"resource SKUs {flt or 'all'}")
        except errors.ClientAuthenticationError as exc:
            raise CredentialsRejectedError(
                f"Azure refused the credentials ({exc}); {AZURE_CREDENTIALS_HELP}"
            ) from exc
        except (ThrottledError, errors.AzureError) as exc:
            raise RefreshError(f"listing resource SKUs failed: {exc}") from exc


def _capabilities(sku: Any) -> dict[str, str]:
    return {str(c.name): str(c.value) for c in (sku.capabilities or [])}


def _text(value: Any) -> str:
    """An SDK enum's wire value (``Location``), or the string itself."""
    return str(getattr(value, "value", value) or "")


def _restricted(sku: Any, region: str) -> bool:
    for r in sku.restrictions or []:
        if _text(getattr(r, "type", None)).lower() == "location":
            return region in [v.lower() for v in (getattr(r, "values_property", None) or [])]
    return False


def _take(
    sku: Any,
    names: AcceleratorNames,
    fetched: Fetched,
    by_region: dict[str, dict[str, Machine]],
    restricted: dict[str, int],
    options: RefreshOptions,
) -> None:
    if _text(sku.resource_type) != "virtualMachines" or not sku.locations:
        return
    region = str(sku.locations[0]).lower()
    if not options.wants(region):
        return
    machine = _machine(str(sku.name), _capabilities(sku), region, names, fetched)
    if machine is not None:
        by_region[region][machine.name] = machine
        if _restricted(sku, region):
            restricted[region] += 1


def _machine(
    name: str, caps: dict[str, str], region: str, names: AcceleratorNames, fetched: Fetched
) -> Machine | None:
    gpus = int(float(caps.get("GPUs", "0") or 0))
    if name in FRACTIONAL:
        fetched.skip(Skipped(name, "fractional-gpu", FRACTIONAL[name], "A10", (region,)))
        return None
    match = resolve_family("azure", name, None, names)
    if isinstance(match, Skipped):
        if gpus > 0:  # a GPU size no family knows: report it, never drop it silently
            fetched.skip(replace(match, regions=(region,)))
        return None
    gpus = match.true_gpus or gpus
    if gpus < 1:
        fetched.skip(
            Skipped(name, "no-gpu-count", "Azure reports no GPUs capability", None, (region,))
        )
        return None
    return Machine(
        name=name,
        family=match.family,
        family_title=match.title,
        price_model=match.price_model,
        accelerator=match.accelerator,
        gpus=gpus,
        vcpus=float(caps["vCPUs"]),
        memory_gib=float(caps["MemoryGB"]),
        local_disk_gb=round(float(caps.get("MaxResourceVolumeMB", "0")) / 1024, 1),
        arch="arm64" if caps.get("CpuArchitectureType", "").lower() == "arm64" else "x86_64",
    )
