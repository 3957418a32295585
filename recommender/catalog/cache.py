"""A per-user cache of validated catalogs, so that a command does not re-parse the YAML.

Parsing and validating the bundled catalog (PyYAML building ~60,000 nodes, then pydantic and
the integrity checks) takes ~0.4 s of every ``recommender recommend``; loading the same
catalog from a pickle takes ~0.03 s. An entry is keyed by everything the result depends on:

- the bytes of every catalog file (``accelerators.yaml``, the cloud files, ``edge.yaml``) and
  the directory they were read from (problems name their files by path);
- the code that builds a catalog: size and modification time of every module of
  :mod:`recommender.catalog`, the package version, and the Python, pydantic and numpy versions
  (a pickle of their objects is only valid for the same versions).

So an edited catalog or a changed schema misses the cache and loads from the files, never a
stale answer. Only catalogs that loaded without errors are stored. Any problem with the cache
(unreadable, corrupt, a read-only home) is a miss, never an error: the files are the truth.

Where: ``$RECOMMENDER_CACHE_DIR``, else the platform's user cache directory (platformdirs:
``~/.cache/instance-recommender`` on Linux). ``RECOMMENDER_CACHE_DIR=off`` turns it off.
The directory is created private to the user (0700): a pickle is code to whoever can write it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from recommender.catalog.catalog import Catalog

__all__ = ["CACHE_ENV", "cache_dir", "cache_key", "cached_catalog"]

CACHE_ENV = "RECOMMENDER_CACHE_DIR"
OFF_VALUES = frozenset({"off", "0", "none", "false"})
APP_NAME = "instance-recommender"
# Bump when the layout of an entry changes (what is pickled, not what the catalog holds).
ENTRY_FORMAT = "catalog-cache/1"
# At most this many entries are kept: when one is written, the least recently used beyond
# it go (a catalog edited daily must not leave a pickle per day behind forever).
KEEP_ENTRIES = 8
_CODE_DIR = Path(__file__).resolve().parent
log = logging.getLogger(__name__)


def cache_dir() -> Path | None:
    """Where entries live, or ``None`` when the cache is turned off."""
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return None if env.strip().lower() in OFF_VALUES or not env.strip() else Path(env)
    import platformdirs  # a core dependency; imported here to keep ``import recommender`` lean

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def _code_fingerprint() -> Iterable[bytes]:
    from importlib.metadata import PackageNotFoundError, version

    import numpy
    import pydantic

    try:
        own = version(APP_NAME)
    except PackageNotFoundError:  # a source tree on sys.path, not installed
        own = "source"
    yield f"{ENTRY_FORMAT}|{own}|{sys.version}|{pydantic.VERSION}|{numpy.__version__}".encode()
    for path in sorted(_CODE_DIR.rglob("*.py")):
        st = path.stat()
        yield f"|{path.relative_to(_CODE_DIR)}:{st.st_size}:{st.st_mtime_ns}".encode()


def cache_key(directory: Path, files: dict[str, bytes]) -> str:
    """The entry name for ``files`` (name -> bytes) read from ``directory``."""
    h = hashlib.blake2b(digest_size=20)
    for part in _code_fingerprint():
        h.update(part)
    h.update(str(directory.resolve()).encode())
    for name in sorted(files):
        data = files[name]
        h.update(f"|{name}:{len(data)}|".encode())
        h.update(data)
    return h.hexdigest()


def _private(where: Path) -> bool:
    """Whether only this user can write entries in ``where`` (else they are not loaded: a
    pickle planted by someone else would run their code)."""
    if not hasattr(os, "getuid"):  # Windows: the user's profile directory is private
        return True
    try:
        st = where.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read(path: Path) -> Catalog | None:
    if not _private(path.parent):
        log.debug("catalog cache %s is writable by others; not used", path.parent)
        return None
    try:
        with path.open("rb") as fh:
            value = pickle.load(fh)
    except FileNotFoundError:
        return None
    except Exception as exc:  # a corrupt or foreign entry is a miss: the files are the truth
        log.debug("catalog cache entry %s unreadable (%s); loading the files", path, exc)
        return None
    return value if isinstance(value, Catalog) else None


def _prune(where: Path) -> None:
    entries = sorted(where.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP_ENTRIES:]:
        with contextlib.suppress(OSError):
            old.unlink()


def _write(where: Path, path: Path, catalog: Catalog) -> None:
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".entry-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(catalog, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)  # atomic: a reader sees the old entry or the new, whole
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        _prune(where)
    except Exception as exc:  # a read-only home, an unpicklable attribute: work without a cache
        log.debug("catalog cache not written to %s (%s)", where, exc)


def cached_catalog(
    directory: Path,
    files: dict[str, bytes],
    load: Callable[[], Catalog],
    reread: Callable[[], dict[str, bytes]],
) -> Catalog:
    """The catalog for ``files`` from the cache, else ``load()``'s, stored for next time.

    ``load`` raises (a :class:`~recommender.catalog.CatalogError`) for a catalog with errors;
    nothing is stored then. Nor is it when ``reread()`` (the files' bytes after the load)
    differs from ``files``: a file replaced during the load must not be stored under the key
    of the bytes it had before.
    """
    where = cache_dir()
    if where is None:
        return load()
    path = where / f"{cache_key(directory, files)}.pickle"
    hit = _read(path)
    if hit is not None:
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept by _prune
        return hit
    catalog = load()
    catalog.offers  # noqa: B018 - build the offers table now, so the entry holds it too
    if reread() == files:
        _write(where, path, catalog)
    return catalog
