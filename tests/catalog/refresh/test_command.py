"""``recommender catalog refresh`` end to end: no credentials, dry run, JSON output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recommender.cli import app
from tests.catalog.refresh.conftest import REPO, cloud_catalog, instance, write_catalog
from tests.catalog.refresh.test_run import fetched_aws, previous_aws

NEEDS = {
    "aws": ("no AWS credentials", "AWS_ACCESS_KEY_ID"),
    "gcp": ("no GCP credentials", "GOOGLE_APPLICATION_CREDENTIALS"),
    "azure": ("no Azure credentials", "AZURE_SUBSCRIPTION_ID"),
}


GCP, AZ = "us-central1", "eastus"


def _catalog_copy(tmp_path: Path) -> Path:
    """The shipped catalogs, plus a small file for any cloud whose file is not there yet."""
    directory = tmp_path / "catalogs"
    directory.mkdir()
    for f in (REPO / "catalogs").glob("*.yaml"):
        shutil.copy(f, directory / f.name)
    samples = {
        "aws": previous_aws(),
        "gcp": cloud_catalog(
            "gcp", {"g2-standard": [instance("g2-standard-4", "L4", 1, [(GCP, 0.71, 0.28)])]}
        ),
        "azure": cloud_catalog(
            "azure", {"NCasT4_v3": [instance("Standard_NC4as_T4_v3", "T4", 1, [(AZ, 0.53, None)])]}
        ),
    }
    for cloud, sample in samples.items():
        if not (directory / f"{cloud}.yaml").exists():
            write_catalog(directory, sample)  # type: ignore[arg-type]
    return directory


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def _clean_env(home: Path) -> dict[str, str]:
    """No cloud credentials of any kind, and every metadata endpoint switched off."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "GOOGLE_", "GCE_", "CLOUDSDK_", "AZURE_", "MSI_", "IDENTITY_"))
    }
    env.update(
        HOME=str(home),
        CI="true",  # implies --no-instance-metadata
        AWS_EC2_METADATA_DISABLED="true",
        GCE_METADATA_HOST="127.0.0.1:1",
        GCE_METADATA_IP="127.0.0.1:1",
        COLUMNS="200",
    )
    return env


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_no_credentials_fails_fast_and_leaves_catalogs_byte_identical(
    cloud: str, tmp_path: Path
) -> None:
    directory = _catalog_copy(tmp_path)
    before = _snapshot(directory)
    home = tmp_path / "home"
    home.mkdir()
    command = [sys.executable, "-c", "from recommender.cli import main; main()"]
    done = subprocess.run(  # timeout: a credential chain that waits on the network hangs it
        [*command, "catalog", "refresh", "--cloud", cloud, "--catalog-dir", str(directory)],
        env=_clean_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    headline, variable = NEEDS[cloud]
    assert headline in done.stderr and variable in done.stderr
    assert done.stdout == ""
    assert _snapshot(directory) == before  # same files, same bytes, no temporary left


def test_dry_run_json_prints_the_diff_and_writes_nothing(
    catalog_dir: Path,
    use,  # type: ignore[no-untyped-def]
) -> None:
    path = write_catalog(catalog_dir, previous_aws())  # type: ignore[arg-type]
    before = path.read_bytes()
    refresher = use(fetched_aws())
    result = CliRunner().invoke(
        app,
        [
            "catalog",
            "refresh",
            "--cloud",
            "aws",
            "--dry-run",
            "--regions",
            "us-east-1,us-west-2",
            "--no-instance-metadata",
            "--catalog-dir",
            str(catalog_dir),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    report = doc["clouds"][0]
    assert doc["dry_run"] and not report["written"] and report["error"] is None
    assert report["diff"]["rows_before"] == 7 and len(report["diff"]["added"]) == 1
    assert report["failed_regions"] == {"us-west-2": "still throttled"}
    assert report["unknown_accelerators"] == ["Qualcomm AI100"]
    assert path.read_bytes() == before
    options = refresher.calls[0]
    assert options.regions == ("us-east-1", "us-west-2") and not options.instance_metadata


def test_table_output_and_refusal_exit_code(
    catalog_dir: Path,
    use,  # type: ignore[no-untyped-def]
) -> None:
    path = write_catalog(catalog_dir, previous_aws())  # type: ignore[arg-type]
    before = path.read_bytes()
    use(fetched_aws())
    args = ["catalog", "refresh", "--cloud", "aws", "--catalog-dir", str(catalog_dir)]
    refused = CliRunner().invoke(app, [*args, "--max-drop", "0.1"])
    assert refused.exit_code == 1
    assert "+1 added, -2 removed" in refused.stdout
    assert "more than --max-drop 10%" in refused.stderr
    assert path.read_bytes() == before
    written = CliRunner().invoke(app, [*args, "--max-drop", "0.5"])
    assert written.exit_code == 0, written.output
    assert f"wrote {path}" in written.stdout.replace("\n", "")


def test_unknown_cloud_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["catalog", "refresh", "--cloud", "oracle"])
    assert result.exit_code == 2
    assert "'oracle' is not a cloud" in " ".join(result.output.split())


def test_missing_sdk_names_the_pip_extra(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib

    from recommender.catalog.refresh import base

    real_import = importlib.import_module

    def without_boto3(name: str, package: str | None = None) -> object:
        if name.split(".")[0] in ("boto3", "botocore"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, package)

    monkeypatch.setattr(base.importlib, "import_module", without_boto3)
    result = CliRunner().invoke(
        app, ["catalog", "refresh", "--cloud", "aws", "--catalog-dir", str(catalog_dir)]
    )
    assert result.exit_code == 1
    text = " ".join(result.stderr.split())
    assert "needs the boto3 package" in text
    assert "pip install 'instance-recommender[refresh]'" in text
