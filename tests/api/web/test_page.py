"""The page end to end in headless Chromium against the served app on 127.0.0.1.

Each test drives the page as a person would (choose, type, click, press Enter, pick a file)
and checks what the page shows against what the API answered. The desktop run writes the
screenshot the README shows (tests/api/web/screenshots/page-1280.png).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import DATA, mint
from .conftest import Console, Served

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
# What the form may add to an example's workload (request fields beside the workload).
REQUEST_DEFAULTS = {"objective": "balanced", "top": 5, "landscape": True}

pytestmark = pytest.mark.slow


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")


def _submit(page: Any, press_enter_in: str | None = None) -> Any:
    """Submit the form (a click, or Enter in a field); the API's response."""
    with page.expect_response(
        lambda r: r.url.endswith("/v1/recommendations") and r.request.method == "POST"
    ) as answer:
        if press_enter_in:
            page.press(press_enter_in, "Enter")
        else:
            page.click("#submit")
    return answer.value


def _shown_picks(page: Any) -> list[list[str]]:
    page.wait_for_selector("#picks tbody tr.pick")
    rows: list[list[str]] = page.eval_on_selector_all(
        "#picks tbody tr.pick", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    return rows


def _assert_table_matches(page: Any, body: dict[str, Any]) -> None:
    picks = body["picks"]
    assert picks, body["advice"]
    rows = _shown_picks(page)
    assert len(rows) == len(picks)
    for row, pick in zip(rows, picks, strict=True):
        assert row[0] == str(pick["rank"])
        nodes = pick.get("nodes") or 1
        instance = pick["instance_type"] if nodes == 1 else f"{nodes} × {pick['instance_type']}"
        assert (row[1], row[3]) == (pick["cloud"], instance)
        assert row[4] == f"{pick['gpus']} × {pick['accelerator']}"
        assert row[10] == pick["predicted"]["bottleneck"]


def _assert_chart_matches(page: Any, body: dict[str, Any]) -> None:
    points = [p for p in body["landscape"]["points"] if p["cost_usd"] > 0 and p["time_s"] > 0]
    assert points
    assert page.locator("#chart g.points circle.pt").count() == len(points)
    assert page.locator("#chart g.picks circle.pick").count() == len(body["picks"])
    if sum(p["pareto_optimal"] for p in points) > 1:
        assert page.locator("#chart polyline.frontier").count() == 1
    assert page.locator("#memory rect.bar").count() >= len(body["picks"])


def _no_blocking(console: Console) -> None:
    assert console.blocking() == []


def test_submit_the_prefilled_example_and_see_picks_chart_and_link(
    served: Served, desktop: tuple[Any, Console], screenshots: Path
) -> None:
    page, console = desktop
    _open(page, served.url + "/")
    example = httpx.get(served.url + "/web/examples.json").json()
    chosen = page.input_value("#example")
    assert chosen == "llm-finetune.yaml"
    page.check("#f-spot")
    response = _submit(page)
    assert response.status == 201
    body = response.json()
    sent_by_page = json.loads(response.request.post_data)
    workload = next(e["workload"] for e in example if e["file"] == chosen)
    workload["constraints"]["spot"] = True
    assert sent_by_page == {**workload, **REQUEST_DEFAULTS}  # the form keeps every field
    assert {p["pricing"] for p in body["landscape"]["points"]} == {"on-demand", "spot"}
    _assert_table_matches(page, body)
    _assert_chart_matches(page, body)
    assert page.url == f"{served.url}/r/{body['id']}"
    assert page.get_attribute("#share-link", "href") == f"{served.url}/r/{body['id']}"
    first = page.locator("#picks tr.why").first.inner_text()
    assert body["picks"][0]["why"][0] in first
    advice = page.locator("#advice li").all_inner_texts()
    assert advice == body["advice"]
    page.locator("#chart g.picks circle.pick").last.click()  # rings are drawn last-rank first
    assert body["picks"][0]["instance_type"] in page.inner_text("#offer-detail")
    page.screenshot(path=str(screenshots / "page-1280.png"), full_page=True)
    _no_blocking(console)


def test_a_workload_typed_from_blank_is_what_the_api_gets(
    served: Served, desktop: tuple[Any, Console]
) -> None:
    page, console = desktop
    _open(page, served.url + "/")
    page.select_option("#example", "")
    page.fill("#f-name", "typed-by-hand")
    page.select_option("#f-kind", "training")
    page.fill("#f-model", "25M")
    page.fill("#f-flops", "1.2e10")
    page.select_option("#f-family", "cnn")
    page.fill("#f-batch", "64")
    page.fill("#f-samples", "1e5")
    page.check("input[name=cloud][value=gcp]")
    page.fill("#f-maxgpus", "4")
    page.select_option("#f-objective", "cheapest")
    page.fill("#f-top", "3")
    response = _submit(page)
    assert response.status == 201, response.text()
    sent = json.loads(response.request.post_data)
    assert sent == {
        "name": "typed-by-hand",
        "kind": "training",
        "model": {"parameters": 2.5e7, "flops_per_sample": 1.2e10, "family": "cnn"},
        "precision": "bf16",
        "batch_size": 64,
        "data": {"samples": 1e5},
        "constraints": {"clouds": ["gcp"], "max_gpus": 4},
        "objective": "cheapest",
        "top": 3,
        "landscape": True,
    }
    body = response.json()
    _assert_table_matches(page, body)
    assert {p["cloud"] for p in body["picks"]} == {"gcp"}
    assert max(p["gpus"] for p in body["picks"]) <= 4
    _no_blocking(console)


@pytest.mark.parametrize(
    ("selector", "value", "field"),
    [
        ("#f-batch", "0", "batch_size"),
        ("#f-layers", "-3", "model.architecture.transformer.layers"),  # a union tag inside
        ("#f-maxgpus", "two", "constraints.max_gpus"),
    ],
)
def test_the_api_field_error_is_shown_next_to_its_field(
    served: Served, desktop: tuple[Any, Console], selector: str, value: str, field: str
) -> None:
    page, console = desktop
    _open(page, served.url + "/")
    page.fill(selector, value)
    response = _submit(page)
    assert response.status == 422
    problem = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert field in [e["field"] for e in problem["errors"]]
    error = page.locator(f'.field-error[data-field="{field}"]')
    error.wait_for()
    holder = page.locator(".field", has=page.locator(selector))
    assert holder.locator(".field-error").inner_text().startswith(field + ":")
    assert page.get_attribute(selector, "aria-invalid") == "true"
    assert error.get_attribute("id") in (page.get_attribute(selector, "aria-describedby") or "")
    assert page.evaluate("document.activeElement.id") == selector[1:]
    assert page.is_hidden("#results")
    _no_blocking(console)


def test_a_shared_link_renders_the_stored_recommendation(
    served: Served, desktop: tuple[Any, Console]
) -> None:
    page, console = desktop
    example = httpx.get(served.url + "/web/examples.json").json()
    serving = next(e["workload"] for e in example if e["file"] == "llm-serving.yaml")
    created = httpx.post(
        served.url + "/v1/recommendations",
        json={**serving, "landscape": True, "objective": "fastest", "top": 4},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    _open(page, f"{served.url}/r/{body['id']}")
    _assert_table_matches(page, body)
    _assert_chart_matches(page, body)
    assert page.input_value("#f-name") == serving["name"]
    assert page.input_value("#f-objective") == "fastest"
    assert page.input_value("#f-top") == "4"
    assert "p95 latency" in page.inner_text("#chart")
    _no_blocking(console)


def test_an_unknown_shared_link_says_so(served: Served, desktop: tuple[Any, Console]) -> None:
    page, _ = desktop
    missing = "00000000-0000-4000-8000-000000000000"
    _open(page, f"{served.url}/r/{missing}")
    assert page.is_visible("#form-error")
    assert f"No stored recommendation {missing}" in page.inner_text("#form-error")
    assert page.is_hidden("#results")


def test_an_uploaded_probe_profile_calibrates_the_recommendation(
    served: Served, desktop: tuple[Any, Console], tmp_path: Path
) -> None:
    page, console = desktop
    key = mint(served.app, name="web-test")
    profile = tmp_path / "profile.json"
    profile.write_text((DATA / "profile.json").read_text())
    _open(page, served.url + "/?example=resnet50-imagenet.yaml")
    assert page.input_value("#f-name") == "resnet50-imagenet"
    page.set_input_files("#f-profile", str(profile))
    page.fill("#f-apikey", key)
    response = _submit(page)
    assert response.status == 201, response.text()
    body = response.json()
    profile_id = page.input_value("#f-profile-id")
    assert re.fullmatch(r"[0-9a-f-]{36}", profile_id)
    assert body["profile_id"] == profile_id
    assert json.loads(response.request.post_data)["profile_id"] == profile_id
    assert "Stored as profile " + profile_id in page.inner_text("#profile-status")
    assert body["picks"]
    assert any(w.startswith("calibrated with your probe profile") for w in body["picks"][0]["why"])
    assert "calibrated with your probe profile" in page.locator("#picks tr.why").first.inner_text()
    _no_blocking(console)


def test_a_profile_upload_without_a_key_is_refused_at_the_file_field(
    served: Served, desktop: tuple[Any, Console], tmp_path: Path
) -> None:
    page, _ = desktop
    profile = tmp_path / "profile.json"
    profile.write_text((DATA / "profile.json").read_text())
    _open(page, served.url + "/")
    page.set_input_files("#f-profile", str(profile))
    with page.expect_response(lambda r: r.url.endswith("/v1/profiles")) as answer:
        page.click("#submit")
    assert answer.value.status == 401
    error = page.locator('.field-error[data-field="(profile)"]')
    error.wait_for()
    assert "401" in error.inner_text()
    assert page.get_attribute("#f-profile", "aria-invalid") == "true"


def test_every_field_has_a_label_and_enter_submits(
    served: Served, desktop: tuple[Any, Console]
) -> None:
    page, console = desktop
    _open(page, served.url + "/")
    unlabelled = page.evaluate(
        """[...document.querySelectorAll('input, select, textarea')]
             .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
             .map(el => el.id || el.name)"""
    )
    assert page.locator("input, select, textarea").count() > 20
    assert unlabelled == []
    page.focus("#f-batch")
    page.keyboard.press("Control+a")
    page.keyboard.type("2")
    response = _submit(page, press_enter_in="#f-batch")
    assert response.status == 201
    assert json.loads(response.request.post_data)["batch_size"] == 2
    _assert_table_matches(page, response.json())
    _no_blocking(console)


def test_axe_finds_no_accessibility_violation(served: Served, browser: Any) -> None:
    """axe-core (vendored) over the page with a recommendation shown: WCAG 2 A/AA rules,
    colour contrast included. Its script is injected, so this context bypasses the CSP."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    try:
        page = context.new_page()
        _open(page, served.url + "/")
        page.click("#submit")
        _shown_picks(page)
        page.add_script_tag(path=str(AXE))
        result = page.evaluate(
            """axe.run(document, {runOnly: {type: 'tag',
                 values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"""
        )
        assert result["passes"]
        assert "color-contrast" in {r["id"] for r in result["passes"]}
        violations = [
            (v["id"], v["help"], [n["target"] for n in v["nodes"]][:3])
            for v in result["violations"]
        ]
        assert violations == []
    finally:
        context.close()


def test_on_a_phone_nothing_overflows_and_it_still_works(
    served: Served, phone: tuple[Any, Console], screenshots: Path
) -> None:
    page, console = phone
    _open(page, served.url + "/")
    response = _submit(page)
    assert response.status == 201
    _assert_table_matches(page, response.json())
    overflow = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert overflow[0] <= overflow[1]
    form_box = page.locator("#workload-form").bounding_box()
    results_box = page.locator("#results").bounding_box()
    assert form_box and results_box
    assert results_box["y"] >= form_box["y"] + form_box["height"]  # one column
    assert results_box["width"] <= overflow[1]
    page.screenshot(path=str(screenshots / "page-phone.png"), full_page=True)
    _no_blocking(console)


@pytest.mark.parametrize(
    "example",
    sorted(p.name for p in (Path(__file__).resolve().parents[3] / "examples").glob("*.yaml")),
)
def test_every_example_submits_and_renders(
    served: Served, desktop: tuple[Any, Console], example: str
) -> None:
    page, console = desktop
    _open(page, served.url + "/")
    page.select_option("#example", example)
    response = _submit(page)
    assert response.status == 201, response.text()
    body = response.json()
    _assert_table_matches(page, body)
    drawn = page.locator("#chart g.points circle.pt").count()
    assert drawn == (len(body["landscape"]["points"]) if body["landscape"] else len(body["picks"]))
    _no_blocking(console)


def test_fields_the_page_does_not_know_are_shown_as_they_come(
    served: Served, desktop: tuple[Any, Console]
) -> None:
    """A pick that carries a plan (scoring engine v2) shows it, whatever its shape."""
    page, console = desktop
    created = httpx.post(served.url + "/v1/recommendations", json=_example(served, "llm-finetune"))
    assert created.status_code == 201
    body = created.json()
    assert body["picks"]
    body["picks"][0]["plan"] = {"recipe": "fsdp", "nodes": 2}
    body["picks"][0]["future_field"] = 2  # picks know `nodes` now (multi-node plans)
    body["picks"][0]["nodes"] = 4
    body["future_summary"] = "drawn generically"
    page.route(
        f"**/v1/recommendations/{body['id']}",
        lambda route: route.fulfill(json=body, status=200),
    )
    _open(page, f"{served.url}/r/{body['id']}")
    rows = _shown_picks(page)
    assert f"4 × {body['picks'][0]['instance_type']}" in rows[0]  # a multi-node placement
    extra = page.locator("#picks tr.why").first.locator("dl.extra").first
    assert extra.locator(":scope > dt").all_inner_texts() == ["plan", "future_field"]
    nested = extra.locator(":scope > dd").first.locator("dl.extra")
    assert nested.locator("dt").all_inner_texts() == ["recipe", "nodes"]
    assert nested.locator("dd").all_inner_texts() == ["fsdp", "2"]
    assert "drawn generically" in page.inner_text("#results dl.top-extra")
    _no_blocking(console)


def _example(served: Served, stem: str) -> dict[str, Any]:
    examples = httpx.get(served.url + "/web/examples.json").json()
    workload: dict[str, Any] = next(e["workload"] for e in examples if e["file"] == stem + ".yaml")
    return workload


def test_a_registry_model_is_offered_and_sent_by_name(
    served: Served, desktop: tuple[Any, Console]
) -> None:
    page, console = desktop
    _open(page, served.url + "/")
    names = httpx.get(served.url + "/web/models.json").json()
    assert names
    offered = page.eval_on_selector_all("#model-names option", "os => os.map(o => o.value)")
    assert offered == [m["name"] for m in names]
    page.select_option("#example", "")
    page.fill("#f-name", "by-name")
    page.fill("#f-model", "llama-3.1-8b")
    page.fill("#f-batch", "1")
    page.fill("#f-samples", "1000")
    refused = _submit(page)  # a registry transformer needs the tokens of one sample
    assert refused.status == 422
    assert [e["field"] for e in refused.json()["errors"]] == ["(whole body)"]
    shown = page.locator('.field-error[data-field="model.sequence_length"]')
    shown.wait_for()
    assert "tokens of one sample" in shown.inner_text()
    assert page.get_attribute("#f-model-seq", "aria-invalid") == "true"
    page.fill("#f-model-seq", "2048")
    response = _submit(page)
    assert response.status == 201, response.text()
    sent = json.loads(response.request.post_data)["model"]
    assert sent == {"name": "llama-3.1-8b", "sequence_length": 2048}
    _assert_table_matches(page, response.json())
    _no_blocking(console)
