"""The page's routes without a browser: documents, CSP, static files, examples, the landscape."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from recommender.api.web import CONTENT_SECURITY_POLICY, load_examples
from recommender.catalog.problems import WorkloadError
from recommender.workload import Workload

from ..conftest import REPO, workload


class _Refs(HTMLParser):
    """Scripts, stylesheets and anything a strict CSP would refuse."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self.refused: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "script":
            if a.get("src"):
                self.scripts.append(a["src"] or "")
            else:
                self._in_script = True
        if tag == "link" and a.get("rel") == "stylesheet":
            self.styles.append(a.get("href") or "")
        if tag == "style":
            self.refused.append("<style>")
        for name, value in attrs:
            if name == "style" or name.startswith("on"):
                self.refused.append(f"{tag} {name}={value!r}")
            if name in ("src", "href") and value and "//" in value:
                self.refused.append(f"{tag} {name}={value!r} (another origin)")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.refused.append("inline script")


def _refs(html: str) -> _Refs:
    parser = _Refs()
    parser.feed(html)
    return parser


def test_the_page_is_one_document_a_strict_csp_allows(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    refs = _refs(r.text)
    assert refs.scripts and refs.styles
    assert refs.refused == []


def test_every_file_the_page_loads_is_served(client: TestClient) -> None:
    refs = _refs(client.get("/").text)
    kinds = {".js": "javascript", ".css": "text/css"}
    for url in [*refs.scripts, *refs.styles]:
        r = client.get(url)
        assert r.status_code == 200, url
        assert kinds[Path(url).suffix] in r.headers["content-type"]
    assert client.get("/static/nothing-here.js").status_code == 404


def test_a_shared_link_opens_a_stored_recommendation(client: TestClient) -> None:
    created = client.post("/v1/recommendations", json=workload())
    assert created.status_code == 201
    page = client.get(f"/r/{created.json()['id']}")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.text == client.get("/").text


@pytest.mark.parametrize("link", ["/r/00000000-0000-0000-0000-000000000000", "/r/not-an-id"])
def test_an_unknown_link_is_a_404_page(client: TestClient, link: str) -> None:
    r = client.get(link)
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_the_examples_are_every_example_file(client: TestClient) -> None:
    r = client.get("/web/examples.json")
    assert r.status_code == 200
    served = r.json()
    files = sorted(p.name for p in (REPO / "examples").glob("*.yaml"))
    assert files
    assert [e["file"] for e in served] == files
    for e in served:
        assert Workload.model_validate(e["workload"]).name == e["name"]


def test_a_bad_example_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("name: x\nkind: training\nbatch_size: 0\n")
    with pytest.raises(WorkloadError, match=r"broken\.yaml"):
        load_examples(tmp_path)


def test_the_page_is_not_part_of_the_api_document(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert paths
    assert not [p for p in paths if not p.startswith(("/v1/", "/healthz", "/readyz", "/metrics"))]


def _landscape(body: dict[str, Any]) -> dict[str, Any]:
    land: dict[str, Any] = body["landscape"]
    return land


def test_the_landscape_is_returned_and_stored_when_asked_for(client: TestClient) -> None:
    plain = client.post("/v1/recommendations", json=workload())
    assert plain.status_code == 201
    assert plain.json()["landscape"] is None
    r = client.post("/v1/recommendations", json={**workload(), "landscape": True})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["picks"]
    points = _landscape(body)["points"]
    assert len(points) == body["offers_feasible"]
    assert sorted(p["rank"] for p in points if p["rank"]) == [p["rank"] for p in body["picks"]]
    assert all(p["memory"]["components_gb"] for p in body["picks"])
    stored = client.get(f"/v1/recommendations/{body['id']}").json()
    assert stored["landscape"] == body["landscape"]
    assert stored["request"]["landscape"] is True


def test_landscape_is_a_boolean(client: TestClient) -> None:
    r = client.post("/v1/recommendations", json={**workload(), "landscape": "yes"})
    assert r.status_code == 422
    assert [e["field"] for e in r.json()["errors"]] == ["landscape"]


def test_the_model_names_are_the_registry(client: TestClient) -> None:
    from recommender.models.registry import default_registry

    r = client.get("/web/models.json")
    assert r.status_code == 200
    served = r.json()
    registry = list(default_registry())
    assert registry
    assert [m["name"] for m in served] == [e.name for e in registry]
    assert all(m["parameters"] > 0 and m["title"] for m in served)
