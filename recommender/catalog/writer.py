"""Writing catalog files: deterministic YAML, replaced atomically.

The same catalog always yields byte-identical text (field order as in the schema, one price
row per line), so importer and refresh output diffs cleanly in review. Files are written to a
temporary file in the same directory and renamed over the old one, so a crash or a refused
result never leaves a half-written catalog behind.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

__all__ = ["dump_yaml", "write_atomic"]


class _Flow(dict[str, Any]):
    """A mapping written on one line (``{region: x, on_demand: y}``)."""


class _Dumper(yaml.SafeDumper):
    pass


def _flow(dumper: yaml.SafeDumper, data: _Flow) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=True)


def _block(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=False)


_Dumper.add_representer(_Flow, _flow)
_Dumper.add_representer(dict, _block)

# Mappings written inline: small records that read best as one row.
_FLOW_KEYS = frozenset({"prices", "peak_tflops", "host_link"})


def _plain(value: Any, key: str | None = None) -> Any:
    if isinstance(value, dict):
        items = {k: _plain(v, k) for k, v in value.items() if v is not None and v != []}
        return _Flow(items) if key in _FLOW_KEYS else items
    if isinstance(value, list):
        return [_plain(v, key) for v in value]
    return value


def dump_yaml(model: BaseModel, *, header: str = "") -> str:
    """``model`` as YAML text: ``None`` and empty lists left out, schema field order kept."""
    data = _plain(model.model_dump(mode="json"))
    body = yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    lines = [f"# {line}".rstrip() for line in header.strip().splitlines()] if header else []
    return "\n".join([*lines, body]) if lines else body


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path: str | Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename; the old file stays intact on failure."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; keep the replaced file's mode, else the umask's default.
        os.chmod(tmp, _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
