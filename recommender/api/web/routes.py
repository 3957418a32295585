"""Routes of the page: ``/``, ``/r/{id}`` (a shared recommendation), the examples and the
model registry's names the form offers, ``/static``.

The page is one HTML document; ``/r/{id}`` serves the same document, whose script reads the id
from the address and fetches ``GET /v1/recommendations/{id}``. Documents carry a strict
Content-Security-Policy (no inline script or style, nothing from another origin), which the
page is written to satisfy.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from recommender.api.deps import ServicesDep
from recommender.api.problems import ProblemError
from recommender.api.web.examples import Example, load_examples
from recommender.models.registry import ModelRegistryError, default_registry
from recommender.store import get_recommendation

__all__ = ["CONTENT_SECURITY_POLICY", "STATIC_DIR", "install", "router"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
INDEX = STATIC_DIR / "index.html"
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_DOCUMENT_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


def _page(status: int = 200) -> FileResponse:
    return FileResponse(
        INDEX, status_code=status, media_type="text/html", headers=_DOCUMENT_HEADERS
    )


@router.get("/")
def index() -> FileResponse:
    return _page()


@router.get("/r/{recommendation_id}")
def shared(recommendation_id: str, services: ServicesDep) -> FileResponse:
    """The page for a stored recommendation; 404 (the same page, saying so) when unknown."""
    try:
        key = uuid.UUID(recommendation_id)
    except ValueError:
        return _page(404)
    with services.db.session() as session:
        found = get_recommendation(session, key) is not None
    return _page(200 if found else 404)


@router.get("/web/examples.json")
def examples() -> list[Example]:
    return list(load_examples())


class ModelName(BaseModel):
    """A registry model as the form's model field suggests it."""

    name: str
    title: str
    family: str
    parameters: float


@router.get("/web/models.json")
def models() -> list[ModelName]:
    """The bundled model registry's names, for the model field's suggestions."""
    try:
        registry = default_registry()
    except ModelRegistryError as exc:
        raise ProblemError(503, "model-registry-unavailable", str(exc)) from exc
    return [
        ModelName(name=e.name, title=e.title, family=e.family, parameters=e.parameters)
        for e in registry
    ]


def install(app: FastAPI) -> None:
    """Serve the page and its static files from ``app``."""
    app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
