"""Browser fixtures: the service on a loopback port, and Debian's Chromium driven by Playwright.

The service runs in-process (uvicorn in a thread) on the bundled catalog and a SQLite file.
Chromium is found at ``$RECOMMENDER_CHROMIUM`` or where Debian's ``chromium`` package puts it;
Playwright never downloads a browser of its own. Without a browser these tests skip, saying
so, except under CI (``CI`` set), where they fail: CI installs the browser (.ci/run).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from recommender.api import create_app
from recommender.settings import Settings

CHROMIUM_CANDIDATES = (
    "/usr/lib/chromium/chromium",  # Debian's chromium package (the binary its wrapper runs)
    "chromium",
    "chromium-browser",
    "google-chrome",
)
SERVER_START_TIMEOUT_S = 30.0
# The README's images; a test run writes its screenshots to a scratch folder unless
# RECOMMENDER_SCREENSHOTS_DIR names one (e.g. this folder, to refresh the README's images), so
# that `make test` leaves the tracked files alone.
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
SCREENSHOTS_ENV = "RECOMMENDER_SCREENSHOTS_DIR"


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this run's screenshots go (see :data:`SCREENSHOTS_ENV`)."""
    chosen = os.environ.get(SCREENSHOTS_ENV)
    where = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    where.mkdir(parents=True, exist_ok=True)
    return where


DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def find_chromium() -> str | None:
    env = os.environ.get("RECOMMENDER_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for candidate in CHROMIUM_CANDIDATES:
        found = shutil.which(candidate) or (candidate if Path(candidate).is_file() else None)
        if found:
            return found
    return None


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the browser tests (.ci/run installs chromium)")
    pytest.skip(f"{reason}: browser tests skipped (apt-get install chromium to run them)")


@dataclass
class Served:
    url: str
    app: Any
    server: uvicorn.Server
    thread: threading.Thread


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The whole service (API and page) on 127.0.0.1, bundled catalog, fresh database."""
    db_dir = tmp_path_factory.mktemp("web-db")
    settings = Settings(
        database_url=f"sqlite:///{db_dir}/recommender.db",
        catalog_poll_seconds=0,
        catalog_max_age_days=0,
    )
    app = create_app(settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield Served(f"http://127.0.0.1:{port}", app, server, thread)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@dataclass
class Console:
    """What the page printed: CSP violations and uncaught errors fail a test."""

    messages: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def blocking(self) -> list[str]:
        csp = [m for m in self.messages if "Content Security Policy" in m]
        return csp + self.errors


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed (pip install -e '.[dev]')")
    path = find_chromium()
    if path is None:
        _unavailable("no Chromium found (RECOMMENDER_CHROMIUM, /usr/lib/chromium/chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox"])
        try:
            yield b
        finally:
            b.close()


def _open(browser: Any, viewport: dict[str, int]) -> tuple[Any, Any, Console]:
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    console = Console()
    page.on("console", lambda m: console.messages.append(m.text))
    page.on("pageerror", lambda e: console.errors.append(str(e)))
    page.set_default_timeout(30_000)
    return context, page, console


@pytest.fixture
def desktop(browser: Any) -> Iterator[tuple[Any, Console]]:
    context, page, console = _open(browser, DESKTOP)
    yield page, console
    context.close()


@pytest.fixture
def phone(browser: Any) -> Iterator[tuple[Any, Console]]:
    context, page, console = _open(browser, PHONE)
    yield page, console
    context.close()
