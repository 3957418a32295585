"""GCP refresher (google-cloud-compute, google-cloud-billing): GPU machines per region, priced.

``MachineTypesClient.aggregated_list`` gives the machine types of every zone (A2, A3, A4, G2
carry their GPUs; N1 hosts take attached ones), ``AcceleratorTypesClient.aggregated_list``
the GPUs each zone can attach (and how many per instance), and the Cloud Billing catalog
(``CloudCatalogClient.list_skus`` for Compute Engine) the prices. Every instance is priced
as host + attached GPUs: vCPUs x core SKU + GiB x RAM SKU + GPUs x GPU SKU; N1 + T4 / V100 /
P100 / P4 shapes are built within GCP's per-GPU-count vCPU and memory limits. Zones collapse
to regions. Credentials: Application Default Credentials; with ``instance_metadata`` off,
only ``GOOGLE_APPLICATION_CREDENTIALS`` or the gcloud ADC file are read, so the metadata
server is never asked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recommender.catalog.names import AcceleratorNames
from recommender.catalog.refresh.base import (
    CredentialsRejectedError,
    Fetched,
    MissingCredentialsError,
    RefreshError,
    RefreshOptions,
    import_sdk,
)
from recommender.catalog.refresh.gcp_machines import ZoneMachines, build_offers
from recommender.catalog.refresh.gcp_pricing import COMPUTE_ENGINE_SERVICE, SkuPrices
from recommender.catalog.refresh.retry import ThrottledError
from recommender.catalog.schema import CloudName, Source

__all__ = ["GCP_CREDENTIALS_HELP", "GcpClients", "GcpRefresher"]

SOURCE = "GCP Compute Engine API + Cloud Billing Catalog API"
SOURCE_URL = "https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list"
GCP_CREDENTIALS_HELP = (
    "set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file or run "
    "`gcloud auth application-default login`, and set GOOGLE_CLOUD_PROJECT to the project "
    "whose machine types to list"
)
SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
# Series whose machine types may carry or take GPUs (RE2 full match on the name).
MACHINE_FILTER = "name eq '(a[0-9]+[a-z]*|g[0-9]+|n1)-.*'"


@dataclass(frozen=True, slots=True)
class GcpClients:
    """The three API clients and the project to list machine types in."""

    machine_types: Any  # compute_v1.MachineTypesClient
    accelerator_types: Any  # compute_v1.AcceleratorTypesClient
    catalog: Any  # billing_v1.CloudCatalogClient
    project: str


def _adc_file() -> Path:
    config = os.environ.get("CLOUDSDK_CONFIG") or str(Path.home() / ".config" / "gcloud")
    return Path(config) / "application_default_credentials.json"


def _credentials(options: RefreshOptions) -> tuple[Any, str | None]:
    auth = import_sdk("gcp", "google.auth", "google-auth")
    errors = import_sdk("gcp", "google.auth.exceptions", "google-auth")
    if options.instance_metadata:
        try:
            creds, project = auth.default(scopes=SCOPES)
        except errors.DefaultCredentialsError as exc:
            raise MissingCredentialsError("GCP", GCP_CREDENTIALS_HELP) from exc
        return creds, project
    path = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS") or str(_adc_file())
    if not Path(path).is_file():
        raise MissingCredentialsError(
            "GCP", GCP_CREDENTIALS_HELP, f"instance metadata disabled; no file at {path}"
        )
    try:
        creds, project = auth.load_credentials_from_file(path, scopes=SCOPES)
    except errors.DefaultCredentialsError as exc:
        raise MissingCredentialsError("GCP", GCP_CREDENTIALS_HELP, f"{path}: {exc}") from exc
    return creds, project


def gcp_throttle(exc: BaseException) -> float | None:
    """0.0 when ``exc`` is GCP saying "slow down" (429 / ResourceExhausted, 503), else None."""
    errors = import_sdk("gcp", "google.api_core.exceptions", "google-api-core")
    if isinstance(exc, errors.TooManyRequests | errors.ServiceUnavailable):
        return 0.0
    return None


def _raise_if_auth(exc: BaseException) -> None:
    errors = import_sdk("gcp", "google.api_core.exceptions", "google-api-core")
    auth_errors = import_sdk("gcp", "google.auth.exceptions", "google-auth")
    if isinstance(
        exc, errors.Unauthenticated | errors.PermissionDenied | auth_errors.GoogleAuthError
    ):
        raise CredentialsRejectedError(
            f"GCP refused the request ({exc}); check the credentials and that they may list "
            f"machine and accelerator types (compute.*.list) and read the billing catalog "
            f"({GCP_CREDENTIALS_HELP})"
        ) from exc


class GcpRefresher:
    """GCP A2 / A3 / A4 / G2 machines and N1 + T4 / V100 / P100 / P4, priced host + GPUs."""

    cloud: CloudName = "gcp"
    source_name = SOURCE

    def __init__(self, clients: GcpClients | None = None) -> None:
        self._clients = clients

    def clients(self, options: RefreshOptions) -> GcpClients:
        """Clients on Application Default Credentials; fails fast without credentials."""
        compute = import_sdk("gcp", "google.cloud.compute_v1", "google-cloud-compute")
        billing = import_sdk("gcp", "google.cloud.billing_v1", "google-cloud-billing")
        creds, project = _credentials(options)
        project = (
            os.environ.get("GOOGLE_CLOUD_PROJECT")
            or os.environ.get("CLOUDSDK_CORE_PROJECT")
            or project
        )
        if not project:
            raise MissingCredentialsError("GCP", GCP_CREDENTIALS_HELP, "no project")
        return GcpClients(
            compute.MachineTypesClient(credentials=creds),
            compute.AcceleratorTypesClient(credentials=creds),
            billing.CloudCatalogClient(credentials=creds),
            project,
        )

    def ready(self, options: RefreshOptions) -> None:
        """Build the clients now, so missing SDKs or credentials fail before any work."""
        if self._clients is None:
            self._clients = self.clients(options)

    def fetch(self, names: AcceleratorNames, options: RefreshOptions) -> Fetched:
        clients = self._clients or self.clients(options)
        fetched = Fetched("gcp", Source(name=SOURCE, url=SOURCE_URL))
        errors = import_sdk("gcp", "google.api_core.exceptions", "google-api-core")
        try:
            options.progress("gcp machine types", 0, 3)
            zones = self._machine_types(clients, options, fetched)
            options.progress("gcp accelerator types", 1, 3)
            self._accelerator_types(clients, options, zones, fetched)
            options.progress("gcp billing SKUs", 2, 3)
            prices = self._skus(clients, options)
        except (ThrottledError, errors.GoogleAPIError) as exc:
            _raise_if_auth(exc)
            raise RefreshError(f"the GCP listing failed: {exc}") from exc
        options.progress("gcp pricing", 3, 3)
        build_offers(zones, prices, names, fetched)
        return fetched

    def _call(self, fn: Any, options: RefreshOptions, what: str, **kwargs: Any) -> list[Any]:
        """Run a listing call and drain its pager, with GCP's own retry and ours around it."""
        retry_mod = import_sdk("gcp", "google.api_core.retry", "google-api-core")
        errors = import_sdk("gcp", "google.api_core.exceptions", "google-api-core")
        retry = retry_mod.Retry(
            predicate=retry_mod.if_exception_type(
                errors.TooManyRequests, errors.ServiceUnavailable
            ),
            initial=1.0,
            maximum=16.0,
            multiplier=2.0,
            timeout=4 * options.read_timeout_s,
        )

        def drain() -> list[Any]:
            return list(fn(**kwargs, retry=retry, timeout=options.read_timeout_s))

        return options.backoff.call(drain, gcp_throttle, what)

    def _machine_types(
        self, clients: GcpClients, options: RefreshOptions, fetched: Fetched
    ) -> dict[str, ZoneMachines]:
        request = {"project": clients.project, "filter": MACHINE_FILTER}
        pairs = self._call(
            clients.machine_types.aggregated_list, options, "machine types", request=request
        )
        zones: dict[str, ZoneMachines] = {}
        for key, scoped in pairs:
            zone = key.removeprefix("zones/")
            region = zone.rpartition("-")[0]
            if not options.wants(region):
                continue
            # A zone can appear on several pages ("no results on this page" on one of them).
            zm = zones.setdefault(zone, ZoneMachines(zone, region))
            _zone_warning(scoped, region, fetched)
            zm.machine_types.extend(scoped.machine_types)
        for zm in zones.values():
            if zm.region not in fetched.failed:
                fetched.regions.add(zm.region)
        return zones

    def _accelerator_types(
        self,
        clients: GcpClients,
        options: RefreshOptions,
        zones: dict[str, ZoneMachines],
        fetched: Fetched,
    ) -> None:
        request = {"project": clients.project}
        pairs = self._call(
            clients.accelerator_types.aggregated_list,
            options,
            "accelerator types",
            request=request,
        )
        for key, scoped in pairs:
            zone = key.removeprefix("zones/")
            if zone in zones:
                _zone_warning(scoped, zones[zone].region, fetched)
                zones[zone].accelerator_types.extend(scoped.accelerator_types)

    def _skus(self, clients: GcpClients, options: RefreshOptions) -> SkuPrices:
        skus = self._call(
            clients.catalog.list_skus,
            options,
            "billing SKUs",
            request={"parent": COMPUTE_ENGINE_SERVICE, "currency_code": "USD"},
        )
        prices = SkuPrices(skus)
        if not len(prices):
            raise RefreshError("the Cloud Billing catalog returned no Compute Engine price")
        return prices


def _zone_warning(scoped: Any, region: str, fetched: Fetched) -> None:
    """A scoped list's warning other than "no results" fails the zone's region."""
    warning = getattr(scoped, "warning", None)
    code = str(getattr(warning, "code", "") or "")
    if code and code not in ("NO_RESULTS_ON_PAGE", "UNDEFINED_CODE"):
        fetched.fail(region, f"{code}: {getattr(warning, 'message', '')}".strip())
