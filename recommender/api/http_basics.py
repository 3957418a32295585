"""HTTP manners every answer gets: HEAD wherever GET works, security headers, and the
interactive docs served from the package's own Swagger UI files (no CDN).

``HEAD`` is answered as ``GET`` without the body (RFC 9110 §9.3.2), so load balancers can
probe ``/healthz`` and ``/readyz`` with it. Every response says ``nosniff``, may not be
framed, sends no referrer, and carries a Content-Security-Policy: ``default-src 'none'``
for API answers; the docs page may load only its own scripts and styles.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from starlette.datastructures import MutableHeaders
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DOCS_ASSETS", "HeadAsGetMiddleware", "SecurityHeadersMiddleware", "install_docs"]

DOCS_ASSETS = "/docs/assets"
# For JSON answers: nothing may load, nothing may frame them.
API_CSP = "default-src 'none'; frame-ancestors 'none'"
# For HTML pages (the docs, the web page): own files only; the docs page starts Swagger UI
# with an inline script and Swagger UI sets inline styles; the OpenAPI document is fetched.
HTML_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'"
)
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class HeadAsGetMiddleware:
    """``HEAD`` requests run as ``GET``; the headers go out, the body does not."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                html = headers.get("content-type", "").startswith("text/html")
                headers.setdefault("Content-Security-Policy", HTML_CSP if html else API_CSP)
            await send(message)

        await self.app(scope, receive, with_headers)


def _swagger_dir() -> Path:
    import swagger_ui_bundle

    return Path(swagger_ui_bundle.swagger_ui_path)


def install_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI from the ``swagger-ui-bundle`` package's files, served here)."""
    app.mount(DOCS_ASSETS, StaticFiles(directory=_swagger_dir()), name="docs-assets")
    oauth_redirect = "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - API docs",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon-32x32.png",
            oauth2_redirect_url=oauth_redirect,
        )

    @app.get(oauth_redirect, include_in_schema=False)
    async def docs_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()
