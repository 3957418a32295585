"""Dependencies the routers declare, as ``Annotated`` aliases: services, catalog, API keys.

Everything an endpoint needs hangs off :class:`Services` (built by the app factory, one per
app): the settings, the database, the catalog state and the metrics. Keys travel as
``Authorization: Bearer <key>`` or ``X-API-Key: <key>``; a missing or wrong key is a 401
problem, a valid key that is not an admin key on an admin route a 403. Only a key's visible
prefix is ever logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Response, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from recommender.api.catalog_state import CatalogState
from recommender.api.metrics import Metrics
from recommender.api.problems import ProblemError
from recommender.catalog import Catalog
from recommender.settings import Settings
from recommender.store import ApiKeyInfo, Database, key_prefix, verify_key

__all__ = [
    "CATALOG_VERSION_HEADER",
    "AdminKey",
    "ApiKey",
    "CatalogDep",
    "OptionalKey",
    "Services",
    "ServicesDep",
    "optional_key",
    "require_key",
]

log = logging.getLogger("recommender.api.auth")


@dataclass(frozen=True, slots=True)
class Services:
    settings: Settings
    db: Database
    catalogs: CatalogState
    metrics: Metrics


async def get_services(request: Request) -> Services:  # async: no threadpool hop
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


CATALOG_VERSION_HEADER = "X-Catalog-Version"


async def get_catalog(services: ServicesDep, response: Response) -> Catalog:
    """The serving catalog, taken once per request (a reload meanwhile does not change what
    this request answers from); its version goes out in ``X-Catalog-Version``."""
    current = services.catalogs.current
    catalog = current.catalog if current else None
    if current is not None:
        response.headers[CATALOG_VERSION_HEADER] = current.version
    if catalog is None:
        raise ProblemError(
            503,
            "catalog-unavailable",
            "No catalog is loaded: the catalog files were refused (see GET /v1/catalog/status "
            "and the service log); fix them and the service loads them within the poll interval.",
        )
    return catalog


CatalogDep = Annotated[Catalog, Depends(get_catalog)]

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key from `recommender apikey create`, as `Authorization: Bearer <key>`.",
)

header = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    scheme_name="ApiKeyHeader",
    description="The same key as `X-API-Key: <key>` (what `recommender probe --post-to` sends).",
)

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="recommender"'}


def require_key(
    request: Request,
    services: ServicesDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    header_key: Annotated[str | None, Security(header)],
) -> ApiKeyInfo:
    """The caller's API key; 401 problem when it is missing, malformed, unknown or revoked."""
    known: ApiKeyInfo | None = getattr(request.state, "api_key", None)
    if known is not None:
        return known
    key = credentials.credentials if credentials is not None else header_key
    if not key:
        raise ProblemError(
            401,
            "missing-api-key",
            "This endpoint needs an API key: send `Authorization: Bearer <key>` or "
            "`X-API-Key: <key>` (create one with `recommender apikey create --name NAME`).",
            headers=_CHALLENGE,
        )
    with services.db.session() as session:
        info = verify_key(session, key)
    if info is None:
        prefix = key_prefix(key)
        log.warning("rejected API key %s", f"prefix {prefix}" if prefix else "(malformed)")
        raise ProblemError(
            401,
            "invalid-api-key",
            "The API key is malformed, unknown or revoked.",
            headers=_CHALLENGE,
        )
    request.state.api_key = info
    return info


ApiKey = Annotated[ApiKeyInfo, Depends(require_key)]


def optional_key(request: Request, services: ServicesDep) -> ApiKeyInfo | None:
    """The caller's API key on an endpoint that does not need one: ``None`` when none is
    sent, 401 when the one sent is not valid. (Read from the headers directly, so that the
    OpenAPI document does not declare the operation as needing a key.)"""
    if request.headers.get("authorization") is None and request.headers.get("x-api-key") is None:
        return None
    bearer_value = request.headers.get("authorization", "")
    scheme, _, credentials = bearer_value.partition(" ")
    given = (
        HTTPAuthorizationCredentials(scheme=scheme, credentials=credentials.strip())
        if scheme.lower() == "bearer" and credentials.strip()
        else None
    )
    return require_key(request, services, given, request.headers.get("x-api-key"))


OptionalKey = Annotated[ApiKeyInfo | None, Depends(optional_key)]


async def require_admin(key: ApiKey) -> ApiKeyInfo:
    if not key.admin:
        raise ProblemError(
            403,
            "admin-key-required",
            f"The API key {key.prefix!r} ({key.name}) is not an admin key; "
            "create one with `recommender apikey create --name NAME --admin`.",
        )
    return key


AdminKey = Annotated[ApiKeyInfo, Depends(require_admin)]
