"""Property: no workload input, however wrong, ends in a traceback (library or command line).

Hypothesis builds workload documents from a valid one by replacing fields (every section of
the schema) with values of any JSON/YAML type, including huge, negative, infinite and NaN
numbers, and writes them as YAML, JSON or arbitrary bytes. Each must either be recommended
on or be refused with a :class:`RecommenderError` (library) / exit 2 and a message (CLI).
Run with ``-s`` to see how many inputs were generated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import recommender
from recommender.catalog import Catalog
from recommender.cli import app

BASE: dict[str, Any] = {
    "name": "prop",
    "kind": "training",
    "model": {"parameters": 3.4e8, "flops_per_sample": 7.8e11},
    "batch_size": 32,
    "data": {"samples": 8.8e4, "epochs": 2, "bytes_per_sample": 4.0e3},
}
PATHS = [
    ("name",),
    ("kind",),
    ("precision",),
    ("batch_size",),
    ("model",),
    ("model", "parameters"),
    ("model", "flops_per_sample"),
    ("model", "family"),
    ("model", "architecture"),
    ("data", "samples"),
    ("data", "epochs"),
    ("data", "read_gbps"),
    ("data", "source"),
    ("baseline",),
    ("baseline", "accelerator"),
    ("baseline", "throughput"),
    ("constraints", "clouds"),
    ("constraints", "regions"),
    ("constraints", "accelerators"),
    ("constraints", "max_gpus"),
    ("constraints", "spot"),
    ("targets", "deadline_hours"),
    ("targets", "requests_per_s"),
    ("inference",),
    ("inference", "prompt_tokens"),
    ("unknown_field",),
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "32", "1e8", "gcp", "us-central-1", "A100", "training", "bf16"]),
    st.text(max_size=12),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _set(doc: dict[str, Any], path: tuple[str, ...], value: object) -> None:
    node = doc
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    doc = json.loads(json.dumps(BASE))
    for path in draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=4)):
        _set(doc, path, draw(VALUES))
    return doc


def _encode(doc: dict[str, Any], how: str) -> bytes:
    if how == "json":
        return json.dumps(doc, allow_nan=True).encode()
    return yaml.safe_dump(doc, allow_unicode=True).encode()


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return recommender.load_catalog()


def test_library_never_lets_anything_but_recommender_errors_out(catalog: Catalog) -> None:
    seen = {"inputs": 0, "refused": 0, "tracebacks": 0}

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(documents())
    def check(doc: dict[str, Any]) -> None:
        seen["inputs"] += 1
        try:
            recommender.recommend(doc, catalog=catalog, top=3)
        except recommender.RecommenderError:
            seen["refused"] += 1
        except Exception:
            seen["tracebacks"] += 1
            raise

    check()
    print(f"\nlibrary: {seen}")
    assert seen["inputs"] >= 100 and seen["refused"] > 0
    assert seen["tracebacks"] == 0


def test_cli_answers_every_file_with_a_result_or_exit_2(
    catalog: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recommender.cli.recommend.load_catalog_or_exit", lambda _d: catalog)
    runner = CliRunner()
    seen = {"inputs": 0, "refused": 0, "tracebacks": 0}

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.one_of(
            st.tuples(documents(), st.sampled_from(["yaml", "json"])).map(
                lambda d: (_encode(d[0], d[1]), d[1])
            ),
            st.tuples(st.binary(max_size=200), st.sampled_from(["yaml", "json"])),
        )
    )
    def check(case: tuple[bytes, str]) -> None:
        raw, suffix = case
        path = tmp_path / f"w.{suffix}"
        path.write_bytes(raw)
        seen["inputs"] += 1
        result = runner.invoke(app, ["recommend", str(path), "--format", "json"])
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            seen["tracebacks"] += 1
            raise result.exception
        assert result.exit_code in (0, 2, 3), result.output
        if result.exit_code == 0:
            assert json.loads(result.stdout)["picks"] is not None
        elif result.exit_code == 3:  # a valid workload no offer can run: the answer says why
            answer = json.loads(result.stdout)
            assert answer["picks"] == [] and answer["advice"]
        else:
            seen["refused"] += 1
            assert "error" in result.stderr

    check()
    print(f"\ncommand line: {seen}")
    assert seen["inputs"] >= 100 and seen["refused"] > 0
    assert seen["tracebacks"] == 0
