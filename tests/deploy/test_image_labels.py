"""deploy/image_labels.py: the versions the images are labelled with, and the build's check."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

import recommender
from tests.deploy.conftest import DEPLOY, REPO


def _labels() -> ModuleType:
    spec = importlib.util.spec_from_file_location("image_labels", DEPLOY / "image_labels.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("image_labels", module)
    spec.loader.exec_module(module)
    return module


labels = _labels()


def test_project_version_is_the_package_version() -> None:
    assert labels.project_version(REPO) == recommender.__version__


def test_catalog_version_names_the_catalog_contents(catalog_copy: Path) -> None:
    before = labels.catalog_version(catalog_copy)
    assert before == labels.catalog_version(REPO / "catalogs")
    assert before.startswith("sha256:") and len(before) == len("sha256:") + 12
    edge = catalog_copy / "edge.yaml"
    edge.write_text(edge.read_text() + "\n# edited\n")
    assert labels.catalog_version(catalog_copy) != before
    (catalog_copy / "notes.txt").write_text("not a catalog file")
    edge.write_text(edge.read_text().removesuffix("\n# edited\n"))
    assert labels.catalog_version(catalog_copy) == before


def test_empty_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no catalog YAML files"):
        labels.catalog_version(tmp_path)


def test_build_args_and_the_check_agree(capsys: pytest.CaptureFixture[str]) -> None:
    assert labels.main(["build-args"]) == 0
    args = dict(a.split("=", 1) for a in capsys.readouterr().out.split() if "=" in a)
    assert args["PROJECT_VERSION"] == recommender.__version__
    given = ["--project-version", args["PROJECT_VERSION"]]
    assert labels.main(["check", *given, "--catalog-version", args["CATALOG_VERSION"]]) == 0


def test_check_refuses_a_stale_label(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "catalogs", root / "catalogs", ignore=shutil.ignore_patterns("sources"))
    shutil.copy(REPO / "pyproject.toml", root)
    old = labels.catalog_version(root / "catalogs")
    (root / "catalogs" / "edge.yaml").write_text("# changed\n")
    argv = ["--root", str(root), "check", "--project-version", recommender.__version__]
    assert labels.main([*argv, "--catalog-version", old]) == 1
    assert "CATALOG_VERSION" in capsys.readouterr().err
    assert labels.main([*argv[:3], "--project-version", "", "--catalog-version", old]) == 1
