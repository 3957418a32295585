"""The two versions an image is labelled with: the project's and the catalog's.

The project version is ``[project].version`` in pyproject.toml. The catalog version names the
exact catalog YAML files baked into the image: ``sha256:`` and the first 12 hex digits of a
SHA-256 over every ``catalogs/*.yaml`` (sorted by name; each file's name, a NUL, its bytes,
a NUL). Standard library only: the Dockerfiles run it before anything is installed.

    python3 deploy/image_labels.py build-args        # --build-arg PROJECT_VERSION=0.1.0 ...
    python3 deploy/image_labels.py catalog-version   # sha256:...
    python3 deploy/image_labels.py check --project-version V --catalog-version C   # the build
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tomllib
from pathlib import Path

__all__ = ["CATALOG_DIGEST_HEX_CHARS", "catalog_version", "main", "project_version"]

ROOT = Path(__file__).resolve().parent.parent
# 12 hex digits (48 bits) tell catalog releases apart, as git's short hashes do commits.
CATALOG_DIGEST_HEX_CHARS = 12


def project_version(root: Path = ROOT) -> str:
    """``[project].version`` from ``root/pyproject.toml``."""
    with (root / "pyproject.toml").open("rb") as fh:
        return str(tomllib.load(fh)["project"]["version"])


def catalog_version(catalog_dir: Path = ROOT / "catalogs") -> str:
    """``sha256:<12 hex>`` over the directory's YAML files (names and contents)."""
    files = sorted(catalog_dir.glob("*.yaml"))
    if not files:
        raise FileNotFoundError(f"{catalog_dir}: no catalog YAML files")
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()[:CATALOG_DIGEST_HEX_CHARS]


def _check(root: Path, given_project: str, given_catalog: str) -> list[str]:
    wanted = {
        "PROJECT_VERSION": (given_project, project_version(root)),
        "CATALOG_VERSION": (given_catalog, catalog_version(root / "catalogs")),
    }
    return [
        f"build arg {name}={given!r} does not match the sources ({actual!r}); build with "
        "`docker build $(python3 deploy/image_labels.py build-args) ...`"
        for name, (given, actual) in wanted.items()
        if given != actual
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build-args", help="print the docker build arguments")
    sub.add_parser("project-version", help="print the project version")
    sub.add_parser("catalog-version", help="print the catalog version")
    check = sub.add_parser("check", help="exit 1 unless the given versions match the sources")
    check.add_argument("--project-version", default="")
    check.add_argument("--catalog-version", default="")
    args = parser.parse_args(argv)
    if args.command == "build-args":
        print(
            f"--build-arg PROJECT_VERSION={project_version(args.root)} "
            f"--build-arg CATALOG_VERSION={catalog_version(args.root / 'catalogs')}"
        )
        return 0
    if args.command == "project-version":
        print(project_version(args.root))
        return 0
    if args.command == "catalog-version":
        print(catalog_version(args.root / "catalogs"))
        return 0
    problems = _check(args.root, args.project_version, args.catalog_version)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
