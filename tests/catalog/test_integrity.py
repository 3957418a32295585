"""Integrity checks: each catches its case, with the place of the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog import CatalogError, Problem, load_catalog, validate_catalog

from .test_loader import GOOD_CLOUD, _only_accelerators, _write


def _problems(catalog_copy: Path, text: str, name: str = "gcp.yaml") -> list[Problem]:
    d = _only_accelerators(catalog_copy)
    _write(d, name, text)
    return validate_catalog(d)


def _checks(problems: list[Problem]) -> set[tuple[str, str, str]]:
    return {(p.check, p.severity, p.field) for p in problems}


def test_clean_file_has_no_problems(catalog_copy: Path) -> None:
    assert _problems(catalog_copy, GOOD_CLOUD) == []


def test_spot_above_on_demand_is_an_error(catalog_copy: Path) -> None:
    problems = _problems(catalog_copy, GOOD_CLOUD.replace("spot: 0.2}", "spot: 0.9}"))
    assert _checks(problems) == {("spot-price", "error", "families[0].instances[0].prices[0].spot")}
    assert problems[0].line == 14
    assert "spot 0.9 exceeds on-demand 0.70683" in problems[0].message


def test_spot_equal_to_on_demand_is_a_placeholder_warning(catalog_copy: Path) -> None:
    problems = _problems(catalog_copy, GOOD_CLOUD.replace("spot: 0.2}", "spot: 0.70683}"))
    assert _checks(problems) == {
        ("spot-price", "warning", "families[0].instances[0].prices[0].spot")
    }


def test_unknown_accelerator_suggests_the_canonical_id(catalog_copy: Path) -> None:
    problems = _problems(catalog_copy, GOOD_CLOUD.replace("accelerator: L4", "accelerator: l-4"))
    (p,) = problems
    assert p.check == "unknown-accelerator" and p.line == 9
    assert "'l-4'" in p.message and "'L4'" in p.message


def test_gpu_count_beyond_what_any_instance_carries(catalog_copy: Path) -> None:
    text = GOOD_CLOUD.replace("accelerator: L4", "accelerator: H100-SXM5-80GB")
    text = text.replace("gpus: 1", "gpus: 12")
    (p,) = _problems(catalog_copy, text)
    assert p.check == "gpu-count" and "12 x H100-SXM5-80GB" in p.message


def test_gpu_count_must_match_the_gcp_name(catalog_copy: Path) -> None:
    text = GOOD_CLOUD.replace("g2-standard-4", "a2-ultragpu-2g")
    (p,) = _problems(catalog_copy, text)
    assert p.check == "gpu-count" and "has 2 GPUs by its name" in p.message


def test_gpu_memory_must_match_the_accelerator(catalog_copy: Path) -> None:
    text = GOOD_CLOUD.replace("vcpus: 4\n", "vcpus: 4\n        gpu_memory_gib: 40\n")
    (p,) = _problems(catalog_copy, text)
    assert p.check == "gpu-memory" and p.field.endswith("gpu_memory_gib")


def test_region_must_be_listed_and_well_formed(catalog_copy: Path) -> None:
    text = GOOD_CLOUD.replace("{region: europe-west4", "{region: eu-west-1")
    text = text.replace(
        "regions: [us-central1, europe-west4]",
        "regions: [us-central1, europe-west4, us-central1-a]",
    )
    checks = _checks(_problems(catalog_copy, text))
    assert ("unknown-region", "error", "families[0].instances[0].prices[1].region") in checks
    assert ("unknown-region", "error", "regions[2]") in checks


def test_duplicates_are_reported(catalog_copy: Path) -> None:
    text = GOOD_CLOUD.replace("{region: europe-west4", "{region: us-central1")
    text += """\
      - name: g2-standard-4
        accelerator: L4
        gpus: 1
        vcpus: 4
        memory_gib: 16
        prices:
          - {region: us-central1, on_demand: 0.7}
"""
    checks = _checks(_problems(catalog_copy, text))
    assert ("duplicate", "error", "families[0].instances[0].prices[1].region") in checks
    assert ("duplicate", "error", "families[0].instances[1].name") in checks


def test_price_outlier_is_a_warning(catalog_copy: Path) -> None:
    text = GOOD_CLOUD.replace(
        "regions: [us-central1, europe-west4]",
        "regions: [us-central1, europe-west4, us-east4, asia-east1]",
    ).replace(
        "          - {region: europe-west4, on_demand: 0.77, spot: 0.25}\n",
        "          - {region: europe-west4, on_demand: 0.77, spot: 0.25}\n"
        "          - {region: us-east4, on_demand: 0.72}\n"
        "          - {region: asia-east1, on_demand: 2.5}\n",
    )
    (p,) = _problems(catalog_copy, text)
    assert (p.check, p.severity) == ("price-outlier", "warning")
    assert p.field == "families[0].instances[0].prices[3].on_demand"


def test_errors_block_loading_but_warnings_do_not(catalog_copy: Path) -> None:
    d = _only_accelerators(catalog_copy)
    _write(d, "gcp.yaml", GOOD_CLOUD.replace("spot: 0.2}", "spot: 0.70683}"))
    assert [w.check for w in load_catalog(d).warnings] == ["spot-price"]
    _write(d, "gcp.yaml", GOOD_CLOUD.replace("spot: 0.2}", "spot: 0.9}"))
    with pytest.raises(CatalogError, match=r"spot 0\.9 exceeds"):
        load_catalog(d)


def test_accelerator_names_must_not_collide(catalog_copy: Path) -> None:
    acc = catalog_copy / "accelerators.yaml"
    acc.write_text(
        acc.read_text().replace(
            "aliases: [NVIDIA T4, T4g, NVIDIA T4G]", "aliases: [NVIDIA T4, T4g, NVIDIA L4]"
        )
    )
    problems = validate_catalog(_only_accelerators(catalog_copy))
    assert [p.check for p in problems] == ["ambiguous-name"]
    assert "'NVIDIA L4' also belongs to 'T4'" in problems[0].message
