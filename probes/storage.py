"""Sequential read throughput of local storage, with the page cache defeated.

A scratch file is written (sized to fit the time budget, at most 1 GiB), flushed with
``fsync``, then read back in 8 MiB chunks. Reads use ``O_DIRECT`` into a page-aligned buffer
where the file system supports it; otherwise the file's cached pages are dropped with
``posix_fadvise(DONTNEED)`` before every read. The method string says which one ran, and
flags a memory-backed file system (tmpfs), whose figure is RAM, not a disk.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from probes.timing import Deadline, measure
from recommender.profile import Figure

__all__ = ["MAX_FILE_BYTES", "filesystem_type", "storage_read_mbs"]

MAX_FILE_BYTES = 1 << 30
CHUNK_BYTES = 8 << 20
_CPU = torch.device("cpu")


def filesystem_type(path: Path, mounts: Path = Path("/proc/mounts")) -> str | None:
    """The file system type of ``path`` from ``/proc/mounts`` (Linux), else ``None``."""
    try:
        lines = mounts.read_text().splitlines()
    except OSError:
        return None
    target = str(path.resolve())
    best: tuple[str, str | None] = ("", None)
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        mount, fstype = parts[1], parts[2]
        inside = target == mount or target.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) > len(best[0]):
            best = (mount, fstype)
    return best[1]


def _write_scratch(path: Path, deadline: Deadline, max_bytes: int, chunk: int) -> int:
    """Write random chunks until ``max_bytes`` or the deadline; fsync; return the size."""
    rng = np.random.default_rng()
    written = 0
    with path.open("wb") as fh:
        while written < max_bytes:
            fh.write(rng.bytes(chunk))
            written += chunk
            if deadline.expired():
                break
        fh.flush()
        os.fsync(fh.fileno())
    return written


def _drop_cache(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _reader(path: Path, chunk: int, direct: bool) -> tuple[int, mmap.mmap]:
    """Open ``path`` for reading; ``O_DIRECT`` raises OSError where unsupported."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECT", 0) if direct else 0)
    fd = os.open(path, flags)
    buf = mmap.mmap(-1, chunk)  # page-aligned, as O_DIRECT requires
    try:
        os.preadv(fd, [buf], 0)
    except OSError:
        os.close(fd)
        buf.close()
        raise
    return fd, buf


def _read_all(fd: int, buf: mmap.mmap, size: int) -> None:
    offset = 0
    while offset < size:
        n = os.preadv(fd, [buf], offset)
        if n <= 0:
            break
        offset += n


def _open_uncached(path: Path, chunk: int) -> tuple[int, mmap.mmap, str]:
    if hasattr(os, "O_DIRECT"):
        try:
            fd, buf = _reader(path, chunk, direct=True)
            return fd, buf, "O_DIRECT"
        except OSError:
            pass
    fd, buf = _reader(path, chunk, direct=False)
    how = "posix_fadvise(DONTNEED)" if hasattr(os, "posix_fadvise") else "page cache NOT dropped"
    return fd, buf, how


def storage_read_mbs(
    directory: Path | None,
    deadline: Deadline,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    chunk: int = CHUNK_BYTES,
) -> Figure | None:
    """Median MB/s of reading a scratch file in ``directory`` (default: the temp dir)."""
    where = Path(directory or tempfile.gettempdir())
    fd_tmp, name = tempfile.mkstemp(prefix=".probe-read-", dir=where)
    os.close(fd_tmp)
    path = Path(name)
    try:
        t0 = time.monotonic()
        size = _write_scratch(path, deadline.fraction(0.4), max_bytes, chunk)
        write_s = time.monotonic() - t0
        fd, buf, how = _open_uncached(path, chunk)
        try:
            dropping = how.startswith("posix_fadvise")
            before = (lambda: _drop_cache(path)) if dropping else None
            if deadline.remaining() < write_s:
                return None
            # No warm-up: a warm read is exactly what must not be measured.
            samples = measure(
                lambda: _read_all(fd, buf, size),
                _CPU,
                deadline,
                warmup=0,
                max_repeats=5,
                before=before,
            )
        finally:
            os.close(fd)
            buf.close()
    finally:
        path.unlink(missing_ok=True)
    if not samples:
        return None
    fstype = filesystem_type(where) or "unknown fs"
    if fstype in {"tmpfs", "ramfs"}:
        fstype += ", memory-backed: RAM, not a disk"
    return samples.figure(
        size / 1e6,
        unit="MB/s",
        method=f"sequential read of a {size / 2**20:.0f} MiB file in {where} ({fstype}), "
        f"{chunk >> 20} MiB chunks, {how}; median of {len(samples.seconds)}",
    )
