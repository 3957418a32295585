"""NVML access: per-GPU facts and a background GPU-utilisation sampler.

Everything degrades to ``None`` / empty when NVML (``nvidia-ml-py`` and the driver's
``libnvidia-ml.so``) is missing, so the probe runs on machines without a GPU.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from recommender.profile import GpuFacts

__all__ = ["DriverInfo", "UtilizationSampler", "nvml", "nvml_gpus", "nvml_id_for_cuda"]

T = TypeVar("T")


def nvml() -> ModuleType | None:
    """The initialised ``pynvml`` module, or ``None`` when NVML cannot start."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    module: ModuleType = pynvml
    return module


def _try(call: Callable[[], T]) -> T | None:
    try:
        return call()
    except Exception:  # any NVMLError: not supported on this GPU / driver
        return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _facts(lib: ModuleType, index: int) -> GpuFacts:
    h = lib.nvmlDeviceGetHandleByIndex(index)
    memory = _try(lambda: int(lib.nvmlDeviceGetMemoryInfo(h).total))
    power_mw = _try(lambda: lib.nvmlDeviceGetEnforcedPowerLimit(h))
    cc = _try(lambda: lib.nvmlDeviceGetCudaComputeCapability(h))
    return GpuFacts(
        index=index,
        name=_text(lib.nvmlDeviceGetName(h)),
        memory_total_bytes=memory,
        compute_capability=f"{cc[0]}.{cc[1]}" if cc else None,
        pcie_gen_current=_try(lambda: int(lib.nvmlDeviceGetCurrPcieLinkGeneration(h))),
        pcie_gen_max=_try(lambda: int(lib.nvmlDeviceGetMaxPcieLinkGeneration(h))),
        pcie_width_current=_try(lambda: int(lib.nvmlDeviceGetCurrPcieLinkWidth(h))),
        pcie_width_max=_try(lambda: int(lib.nvmlDeviceGetMaxPcieLinkWidth(h))),
        power_limit_w=power_mw / 1000.0 if power_mw else None,
        sm_clock_max_mhz=_try(lambda: int(lib.nvmlDeviceGetMaxClockInfo(h, lib.NVML_CLOCK_SM))),
        memory_clock_max_mhz=_try(
            lambda: int(lib.nvmlDeviceGetMaxClockInfo(h, lib.NVML_CLOCK_MEM))
        ),
    )


class DriverInfo:
    """The NVIDIA driver version and the CUDA version it supports, as NVML reports them."""

    def __init__(self, driver: str | None = None, cuda: str | None = None) -> None:
        self.driver = driver
        self.cuda = cuda


def nvml_gpus() -> tuple[list[GpuFacts], DriverInfo]:
    """Facts about every GPU NVML sees, and the driver; empty without NVML."""
    lib = nvml()
    if lib is None:
        return [], DriverInfo()
    try:
        count = int(lib.nvmlDeviceGetCount())
        gpus = [_facts(lib, i) for i in range(count)]
        driver = _try(lambda: _text(lib.nvmlSystemGetDriverVersion()))
        cuda_int = _try(lambda: int(lib.nvmlSystemGetCudaDriverVersion()))
        cuda = f"{cuda_int // 1000}.{cuda_int % 1000 // 10}" if cuda_int else None
        return gpus, DriverInfo(driver, cuda)
    finally:
        _try(lib.nvmlShutdown)


def nvml_id_for_cuda(cuda_index: int) -> int | str:
    """NVML's index (or UUID) of CUDA device ``cuda_index``, through CUDA_VISIBLE_DEVICES.

    NVML numbers every GPU in the machine; CUDA numbers only the visible ones.
    """
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")]
    visible = [v for v in visible if v]
    if cuda_index >= len(visible):
        return cuda_index
    chosen = visible[cuda_index]
    return int(chosen) if chosen.isdigit() else chosen


def _handle(lib: ModuleType, gpu: int | str) -> object:
    if isinstance(gpu, int):
        return lib.nvmlDeviceGetHandleByIndex(gpu)
    return lib.nvmlDeviceGetHandleByUUID(gpu)


class UtilizationSampler:
    """Samples one GPU's utilisation (% of time a kernel ran) every ``interval_s`` seconds.

    ``gpu`` is an NVML index or UUID (see :func:`nvml_id_for_cuda`).
    """

    def __init__(self, gpu: int | str, interval_s: float = 0.1) -> None:
        self.gpu = gpu
        self.interval_s = interval_s
        self.samples: list[float] = []
        self.available = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> UtilizationSampler:
        lib = nvml()
        if lib is None:
            return self
        handle = _try(lambda: _handle(lib, self.gpu))
        if handle is None:
            _try(lib.nvmlShutdown)
            return self
        self.available = True
        self._thread = threading.Thread(target=self._run, args=(lib, handle), daemon=True)
        self._thread.start()
        return self

    def _run(self, lib: ModuleType, handle: object) -> None:
        try:
            while not self._stop.is_set():
                rates = _try(lambda: lib.nvmlDeviceGetUtilizationRates(handle))
                if rates is not None:
                    self.samples.append(float(rates.gpu))
                self._stop.wait(self.interval_s)
        finally:
            _try(lib.nvmlShutdown)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * self.interval_s + 1)

    def mean(self) -> float | None:
        return sum(self.samples) / len(self.samples) if self.samples else None
