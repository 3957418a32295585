"""The HTTP API: ``create_app(settings)`` builds the FastAPI application (see :mod:`.app`)."""

from recommender.api.app import create_app, create_app_from_env

__all__ = ["create_app", "create_app_from_env"]
