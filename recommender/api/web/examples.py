"""The bundled example workloads the page's form starts from (``examples/*.yaml``)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from recommender.workload import load_workload

__all__ = ["Example", "default_examples_dir", "load_examples"]

PACKAGED_DIR_NAME = "_examples"  # where the wheel carries them (pyproject force-include)


class Example(BaseModel):
    """One example file: its name and the workload document as written (unset fields absent)."""

    file: str
    name: str
    kind: str
    workload: dict[str, Any]


def default_examples_dir() -> Path:
    """The checkout's ``examples/``, else the copy packaged in the wheel."""
    package = Path(__file__).resolve().parents[2]  # recommender/
    root = package.parent
    in_checkout = (root / "pyproject.toml").is_file() and (root / "examples").is_dir()
    return root / "examples" if in_checkout else package / PACKAGED_DIR_NAME


@functools.lru_cache(maxsize=4)
def load_examples(directory: Path | None = None) -> tuple[Example, ...]:
    """Every ``*.yaml`` workload in ``directory``, by file name; a bad file raises
    :class:`~recommender.catalog.problems.WorkloadError` naming it."""
    d = directory or default_examples_dir()
    out = []
    for path in sorted(d.glob("*.yaml")):
        w = load_workload(path)
        doc = w.model_dump(mode="json", exclude_unset=True)
        out.append(Example(file=path.name, name=w.name, kind=w.kind, workload=doc))
    return tuple(out)
