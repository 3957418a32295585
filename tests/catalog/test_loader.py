"""Loader errors name the file, the line and the field; every problem is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog import CatalogError, load_catalog, validate_catalog

GOOD_CLOUD = """\
schema_version: 1
cloud: gcp
source: {name: test}
regions: [us-central1, europe-west4]
families:
  - name: g2
    instances:
      - name: g2-standard-4
        accelerator: L4
        gpus: 1
        vcpus: 4
        memory_gib: 16
        prices:
          - {region: us-central1, on_demand: 0.70683, spot: 0.2}
          - {region: europe-west4, on_demand: 0.77, spot: 0.25}
"""


def _write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def _only_accelerators(catalog_copy: Path) -> Path:
    for f in catalog_copy.glob("*.yaml"):
        if f.name != "accelerators.yaml":
            f.unlink()
    return catalog_copy


def test_valid_minimal_cloud_file_loads(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    _write(d, "gcp.yaml", GOOD_CLOUD)
    cat = load_catalog(d)
    assert len(cat.offers) == 4
    assert cat.clouds["gcp"].families[0].instances[0].prices[0].on_demand == pytest.approx(0.70683)


def test_error_names_file_line_and_field(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    _write(d, "gcp.yaml", GOOD_CLOUD.replace("gpus: 1", "gpus: 0"))
    with pytest.raises(CatalogError) as info:
        load_catalog(d)
    (problem,) = info.value.problems
    assert problem.file.endswith("gcp.yaml")
    assert problem.line == 10
    assert problem.field == "families[0].instances[0].gpus"
    assert "must be >= 1" in problem.message
    assert str(problem).endswith("gcp.yaml:10 families[0].instances[0].gpus: must be >= 1 (got 0)")


def test_every_schema_problem_is_reported_at_once(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    bad = GOOD_CLOUD.replace("gpus: 1", "gpus: -1").replace("vcpus: 4", "vcpus: many")
    bad = bad.replace("on_demand: 0.77", "on_demand: -0.77")
    _write(d, "gcp.yaml", bad)
    with pytest.raises(CatalogError) as info:
        load_catalog(d)
    fields = {p.field for p in info.value.problems}
    assert fields == {
        "families[0].instances[0].gpus",
        "families[0].instances[0].vcpus",
        "families[0].instances[0].prices[1].on_demand",
    }
    assert {p.line for p in info.value.problems} == {10, 11, 15}


def test_unknown_field_is_an_error_not_ignored(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    _write(d, "gcp.yaml", GOOD_CLOUD.replace("vcpus: 4", "vcpu: 4"))
    problems = validate_catalog(d)
    messages = {(p.field, p.message) for p in problems}
    assert (
        "families[0].instances[0].vcpu",
        "unknown field (a typo? see the catalog format in the README)",
    ) in messages
    assert ("families[0].instances[0].vcpus", "required field is missing") in messages


def test_yaml_syntax_error_names_the_line(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    _write(d, "gcp.yaml", GOOD_CLOUD.replace("  - name: g2\n", "  - name: [g2\n"))
    (problem,) = validate_catalog(d)
    assert problem.file.endswith("gcp.yaml")
    assert problem.line is not None and problem.line >= 6
    assert "invalid YAML" in problem.message


def test_duplicate_yaml_key_is_refused(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    _write(d, "gcp.yaml", GOOD_CLOUD.replace("vcpus: 4\n", "vcpus: 4\n        vcpus: 8\n"))
    (problem,) = validate_catalog(d)
    assert (problem.line, problem.field) == (12, "families[0].instances[0].vcpus")
    assert "duplicate key" in problem.message


def test_cloud_file_must_declare_its_own_cloud(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    _write(d, "aws.yaml", GOOD_CLOUD)
    (problem,) = validate_catalog(d)
    assert problem.field == "cloud" and "declares cloud 'gcp'" in problem.message


def test_missing_accelerator_file(tmp_path: Path) -> None:
    (problem,) = validate_catalog(tmp_path)
    assert problem.file.endswith("accelerators.yaml") and "not found" in problem.message
    with pytest.raises(CatalogError):
        load_catalog(tmp_path)


def test_broken_files_do_not_hide_each_other(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    _write(d, "gcp.yaml", GOOD_CLOUD.replace("gpus: 1", "gpus: 0"))
    _write(d, "azure.yaml", "cloud: azure\n: [\n")
    files = {Path(p.file).name for p in validate_catalog(d)}
    assert files == {"gcp.yaml", "azure.yaml"}
