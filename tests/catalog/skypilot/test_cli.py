"""``recommender catalog import-skypilot`` end to end through Typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from recommender.cli import app

from .conftest import FLAT

runner = CliRunner()


def _run(*args: str | Path) -> tuple[int, str, str]:
    result = runner.invoke(app, ["catalog", "import-skypilot", *map(str, args)])
    # Rich wraps stderr at the terminal width; tests match on words, not line breaks.
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def test_import_writes_catalogs_and_prints_a_summary(out_dir: Path) -> None:
    code, stdout, _ = _run(FLAT, "--out", out_dir)
    assert code == 0, stdout
    assert sorted(p.name for p in out_dir.glob("*.yaml")) == [
        "accelerators.yaml",
        "aws.yaml",
        "azure.yaml",
        "gcp.yaml",
    ]
    assert "SkyPilot import" in stdout and "(written)" in stdout
    assert "x local-zone:" in stdout and "x gpu-count-fixed:" in stdout
    assert "warning(s) remain" in stdout
    listed = runner.invoke(
        app,
        ["catalog", "list", "--cloud", "gcp", "--gpu", "L4", "--format", "json"],
        env={"RECOMMENDER_CATALOG_DIR": str(out_dir)},
    )
    offers = json.loads(listed.stdout)
    (g2,) = [
        o
        for o in offers
        if o["instance_type"] == "g2-standard-4"
        and o["region"] == "us-central1"
        and o["pricing"] == "on-demand"
    ]
    assert g2["price_per_hour"] == 0.70683


def test_json_output_and_rerun_is_unchanged(out_dir: Path) -> None:
    _run(FLAT, "--out", out_dir)
    before = (out_dir / "gcp.yaml").read_bytes()
    code, stdout, _ = _run(FLAT, "--out", out_dir, "--format", "json")
    assert code == 0
    doc = json.loads(stdout)  # nothing but JSON on stdout
    gcp = doc["clouds"]["gcp"]
    assert gcp["changed"] is False and gcp["instances"] > 0 and gcp["offers"] > 0
    assert gcp["fix_counts"]["host-price-zero"] == 1
    assert {f["kind"] for f in doc["fixes"]} >= {"spot-placeholder", "file-choice"}
    assert any(w["check"] == "price-outlier" for w in doc["warnings"])
    assert (out_dir / "gcp.yaml").read_bytes() == before


def test_dry_run_and_cloud_filter(out_dir: Path) -> None:
    code, stdout, _ = _run(FLAT, "--out", out_dir, "--cloud", "azure", "--dry-run", "--details")
    assert code == 0
    assert "(would change)" in stdout and "Standard_NV6ads_A10_v5" in stdout
    assert "azure: what the import changed" in stdout
    assert "gcp: what the import changed" not in stdout
    assert sorted(p.name for p in out_dir.iterdir()) == ["accelerators.yaml"]


def test_refused_import_leaves_files_untouched(out_dir: Path) -> None:
    assert _run(FLAT, "--out", out_dir)[0] == 0
    acc = out_dir / "accelerators.yaml"
    acc.write_text(acc.read_text().replace("  - id: B200\n", "  - id: B200-X\n"))
    before = {p.name: p.read_bytes() for p in out_dir.iterdir()}
    code, _, stderr = _run(FLAT, "--out", out_dir)
    assert code == 1
    assert "refused: the imported catalog has" in stderr and "nothing was written" in stderr
    assert "unknown accelerator 'B200'" in stderr
    assert {p.name: p.read_bytes() for p in out_dir.iterdir()} == before


def test_bad_input_is_a_clear_error(tmp_path: Path, out_dir: Path) -> None:
    code, _, stderr = _run(tmp_path, "--out", out_dir)
    assert code == 2 and "no SkyPilot CSV" in stderr
    (tmp_path / "aws_broken.csv").write_text("InstanceType,Price\np3.2xlarge,3.06\n")
    code, _, stderr = _run(tmp_path, "--out", out_dir)
    assert code == 2 and "aws_broken.csv:1 missing column(s)" in stderr
    code, _, stderr = _run(FLAT, "--out", out_dir, "--retrieved", "yesterday")
    assert code == 2 and "YYYY-MM-DD" in stderr


def test_bad_provenance_file_names_file_line_and_field(flat_copy: Path, out_dir: Path) -> None:
    prov = flat_copy / "provenance.yaml"
    prov.write_text(prov.read_text().replace("    commit: 2c3d7ea7\n", "    comit: 2c3d7ea7\n", 1))
    code, _, stderr = _run(flat_copy, "--out", out_dir)
    assert code == 2
    assert "provenance.yaml:9 files.aws_gpu_vms.csv.comit: unknown field" in stderr
