"""Accelerator name resolution: every spelling a user, a cloud or ``nvidia-smi`` uses.

A name resolves case-insensitively (and ignoring spaces, ``_`` and ``-``) from the canonical
id, the SkyPilot name (``A100-80GB``), the marketing name (``H100-SXM5-80GB``), the names
``nvidia-smi`` prints (``NVIDIA H100 80GB HBM3``, ``Tesla T4``) and listed aliases. A SkyPilot
name can stand for several variants (``A100-80GB`` is both the SXM and the PCIe card): then
:meth:`AcceleratorNames.resolve_all` returns all of them and :meth:`~AcceleratorNames.resolve`
the first one listed in ``accelerators.yaml``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from recommender.catalog.problems import NotFoundError
from recommender.catalog.schema import Accelerator

__all__ = ["AcceleratorNames", "UnknownAcceleratorError", "normalize_name"]

_NOISE = re.compile(r"[\s_\-/]+")


def normalize_name(name: str) -> str:
    """Fold case and drop separators: ``'NVIDIA A100-SXM4-80GB'`` -> ``'nvidiaa100sxm480gb'``."""
    return _NOISE.sub("", name).lower()


class UnknownAcceleratorError(NotFoundError):
    """No accelerator answers to the name; the message suggests the closest ones."""

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(
            f"unknown accelerator {name!r}{hint} (`recommender accelerators` lists them all)"
        )


class AcceleratorNames:
    """Index from every known spelling to the accelerators it names."""

    def __init__(self, accelerators: Iterable[Accelerator]) -> None:
        self._by_id: dict[str, Accelerator] = {}
        self._index: dict[str, list[Accelerator]] = {}
        for acc in accelerators:
            self._by_id[acc.id] = acc
            for name in acc.names():
                bucket = self._index.setdefault(normalize_name(name), [])
                if acc not in bucket:
                    bucket.append(acc)
            # "NVIDIA A100-SXM4-80GB" also answers to "A100-SXM4-80GB" and vice versa.
            for name in acc.nvidia_smi_names:
                bare = re.sub(r"^(nvidia|tesla)\s+", "", name, flags=re.IGNORECASE)
                bucket = self._index.setdefault(normalize_name(bare), [])
                if acc not in bucket:
                    bucket.append(acc)

    @property
    def accelerators(self) -> list[Accelerator]:
        """Every accelerator indexed, in the order given."""
        return list(self._by_id.values())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.resolve_all(name, strict=False))

    def by_id(self, canonical_id: str) -> Accelerator | None:
        """Exact lookup by canonical id (what the cloud catalogs use)."""
        return self._by_id.get(canonical_id)

    def resolve_all(self, name: str, *, strict: bool = True) -> tuple[Accelerator, ...]:
        """Every accelerator ``name`` may stand for, the canonical-id match first."""
        exact = self._by_id.get(name)
        if exact is not None:
            return (exact,)
        key = normalize_name(name)
        found = self._index.get(key)
        if not found:
            # "nvidia a100 80gb pcie" -> "a100 80gb pcie"
            stripped = re.sub(r"^(nvidia|tesla|aws|amd)", "", key)
            found = self._index.get(stripped)
        if found:
            return tuple(found)
        if strict:
            raise UnknownAcceleratorError(name, self.suggest(name))
        return ()

    def resolve(self, name: str) -> Accelerator:
        """The accelerator ``name`` stands for; raises :class:`UnknownAcceleratorError`."""
        return self.resolve_all(name)[0]

    def suggest(self, name: str, n: int = 3) -> list[str]:
        keys = {normalize_name(a.id): a.id for a in self._by_id.values()}
        for key, accs in self._index.items():
            keys.setdefault(key, accs[0].id)
        close = difflib.get_close_matches(normalize_name(name), list(keys), n=n * 2, cutoff=0.6)
        out: list[str] = []
        for key in close:
            if keys[key] not in out:
                out.append(keys[key])
        return out[:n]
