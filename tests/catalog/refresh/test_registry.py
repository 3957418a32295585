"""Every cloud refresher is registered in one place, documented in the README and tested."""

from __future__ import annotations

import subprocess
import sys

import pytest

from recommender.catalog.refresh import REFRESHERS, get_refresher
from recommender.catalog.refresh.base import RefreshError
from tests.catalog.refresh.conftest import REPO

HEADING = "## Refreshing catalogs from the cloud APIs"


def _readme_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert HEADING in text, f"README.md has no {HEADING!r} section"
    section = text.split(HEADING, 1)[1]
    return section.split("\n## ", 1)[0]


def test_the_three_clouds_are_registered() -> None:
    assert set(REFRESHERS) == {"aws", "gcp", "azure"}


@pytest.mark.parametrize("name", sorted(REFRESHERS))
def test_refresher_is_documented_and_tested(name: str) -> None:
    entry = REFRESHERS[name]
    refresher = get_refresher(name)
    assert refresher.cloud == name
    assert entry.doc and entry.doc == (type(refresher).__doc__ or "").strip().splitlines()[0]
    section = _readme_section()
    assert f"`{name}`" in section, f"README's refresh section does not list {name}"
    assert entry.doc in section, f"README's refresh section does not quote: {entry.doc}"
    assert (REPO / "tests" / "catalog" / "refresh" / f"test_{name}.py").is_file()


def test_unknown_name_is_refused() -> None:
    with pytest.raises(RefreshError, match="known: aws, gcp, azure"):
        get_refresher("oracle")


def test_cloud_sdks_are_imported_only_when_a_refresher_runs() -> None:
    code = (
        "import sys, recommender.cli, recommender.catalog.refresh.registry\n"
        "heavy = ['boto3', 'botocore', 'google.cloud.compute_v1', 'google.cloud.billing_v1',\n"
        "         'azure.mgmt.compute', 'azure.identity']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
