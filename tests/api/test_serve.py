"""`recommender serve` end to end: uvicorn in a subprocess on loopback, one or two workers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from probes.upload import post_profile
from recommender.profile import Profile
from tests.api.conftest import workload

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-c", "from recommender.cli import main; main()"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_ready(url: str, proc: subprocess.Popen[Any], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "server exited"
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("server not ready in time")


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_answers_and_stops_cleanly(
    workers: int, tmp_path: Path, catalog_dir: Path, profile_doc: dict[str, Any]
) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "RECOMMENDER_DATABASE_URL": f"sqlite:///{tmp_path}/serve.db",
        "RECOMMENDER_CATALOG_DIR": str(catalog_dir),
    }
    key = subprocess.run(
        [*CLI, "apikey", "create", "--name", "t"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    cmd = [*CLI, "serve", "--port", str(port)]
    cmd += ["--workers", str(workers), "--no-access-log"]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, proc)
        r = httpx.post(f"{url}/v1/recommendations", json={**workload(), "top": 2}, timeout=10)
        assert r.status_code == 201 and r.json()["picks"]
        up = httpx.post(
            f"{url}/v1/profiles",
            json=profile_doc,
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert up.status_code == 201
        # What `recommender probe --post-to URL --api-key KEY` does.
        sent = post_profile(Profile.model_validate(profile_doc), url, key)
        assert sent.status == 201 and sent.body["hostname"] == "train-a100-1"
        listed = httpx.get(f"{url}/v1/profiles", timeout=10).json()
        assert listed["total"] == 2
        assert httpx.get(f"{url}{r.headers['location']}", timeout=10).status_code == 200
        assert httpx.get(f"{url}/docs", timeout=10).status_code == 200
        for _ in range(4):  # each on a new connection: any worker may answer
            more = httpx.post(f"{url}/v1/recommendations", json=workload(), timeout=10)
            assert more.status_code == 201
        for _ in range(6):  # whichever worker answers the scrape reports all of them
            scraped = httpx.get(f"{url}/metrics", timeout=10).text
            assert 'recommender_recommendations_served_total{objective="balanced"} 5.0' in scraped
        versions = [
            line
            for line in scraped.splitlines()
            if line.startswith("recommender_catalog_version") and line.endswith(" 1.0")
        ]
        assert len(versions) == workers and len({v.split("version=")[1] for v in versions}) == 1
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Serving on http://127.0.0.1" in err and key.split("_", 2)[2] not in err


def test_connections_get_tcp_nodelay_even_from_a_proto_0_listener() -> None:
    """uvicorn's multi-worker listener has proto 0, so asyncio leaves Nagle on; ours doesn't."""
    import asyncio
    from unittest.mock import Mock

    import uvicorn
    from uvicorn.server import ServerState

    from recommender.cli.serve import NoDelayH11Protocol

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0, like uvicorn's
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    client = socket.create_connection(listener.getsockname())
    accepted, _ = listener.accept()
    try:
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        config = uvicorn.Config(app=Mock())
        config.load()
        transport = Mock(spec=asyncio.Transport)
        transport.get_extra_info.side_effect = lambda name, default=None: (
            accepted if name == "socket" else default
        )
        loop = asyncio.new_event_loop()
        protocol = NoDelayH11Protocol(
            config=config, server_state=ServerState(), app_state={}, _loop=loop
        )
        protocol.connection_made(transport)
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        loop.close()
        for s in (client, accepted, listener):
            s.close()


def test_worker_app_reads_the_environment_and_tunes_the_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, catalog_dir: Path
) -> None:
    from recommender.cli.serve import GIL_SWITCH_INTERVAL_S, worker_app

    monkeypatch.setenv("RECOMMENDER_DATABASE_URL", f"sqlite:///{tmp_path}/w.db")
    monkeypatch.setenv("RECOMMENDER_CATALOG_DIR", str(catalog_dir))
    before = sys.getswitchinterval()
    try:
        app = worker_app()
        assert sys.getswitchinterval() == pytest.approx(GIL_SWITCH_INTERVAL_S)
    finally:
        sys.setswitchinterval(before)
    services = app.state.services
    assert services.settings.database_url.endswith("/w.db")
    assert services.catalogs.directory == catalog_dir
