"""The machine's identity: host, cloud and instance type, CPU, memory, GPUs, software versions.

The cloud and instance type come from the environment (``RECOMMENDER_CLOUD``,
``RECOMMENDER_INSTANCE_TYPE``) or from DMI files (``/sys/class/dmi/id``); the probe never
calls a cloud metadata endpoint. The GPU's name resolves to the catalog's canonical id,
using the memory size to choose between variants that share a name.
"""

from __future__ import annotations

import os
import platform
import socket
from collections.abc import Sequence
from pathlib import Path

import torch

from probes.nvml import DriverInfo, nvml_gpus
from probes.spec import CloudName, SpecIndex, SpecSheet
from recommender.profile import DeviceKind, GpuFacts, Machine

__all__ = ["DMI_DIR", "cpu_model", "detect_cloud", "identify_accelerator", "machine_facts"]

DMI_DIR = Path("/sys/class/dmi/id")
_CLOUD_VENDORS: dict[str, CloudName] = {"amazon": "aws", "google": "gcp", "microsoft": "azure"}
_CLOUDS: dict[str, CloudName] = {"aws": "aws", "gcp": "gcp", "azure": "azure"}
_AZURE_ASSET_TAG = "7783-7084-3265-9085-8269-3286-77"


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(errors="replace").strip()
    except OSError:
        return None
    return text or None


def detect_cloud(dmi_dir: Path = DMI_DIR) -> tuple[CloudName | None, str | None]:
    """``(cloud, instance_type)`` from the environment, else DMI; ``None`` where unknown.

    AWS Nitro instances put the instance type in DMI's ``product_name``; GCP and Azure do
    not, so there only the cloud is known unless ``RECOMMENDER_INSTANCE_TYPE`` is set.
    """
    cloud = _CLOUDS.get(os.environ.get("RECOMMENDER_CLOUD", "").lower())
    itype = os.environ.get("RECOMMENDER_INSTANCE_TYPE") or None
    vendor = (_read(dmi_dir / "sys_vendor") or "").lower()
    product = _read(dmi_dir / "product_name")
    if cloud is None:
        cloud = next((c for key, c in _CLOUD_VENDORS.items() if key in vendor), None)
        if cloud is None and _read(dmi_dir / "chassis_asset_tag") == _AZURE_ASSET_TAG:
            cloud = "azure"
    if itype is None and cloud == "aws" and product and "." in product:
        itype = product
    return cloud, itype


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    text = _read(cpuinfo) or ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("model name", "Model", "cpu model") and value.strip():
            return value.strip()
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return None


def identify_accelerator(
    raw_name: str, memory_bytes: int | None, names: SpecIndex | None
) -> SpecSheet | None:
    """The catalog entry for an ``nvidia-smi`` name; the closest memory size breaks ties."""
    if names is None:
        return None
    found = names.resolve_all(raw_name, strict=False)
    if not found:
        return None
    if memory_bytes is None or len(found) == 1:
        return found[0]
    return min(found, key=lambda a: abs(a.memory_gb - memory_bytes / 1e9))


def _torch_gpus() -> list[GpuFacts]:
    """GPU facts from torch alone, for machines where NVML is missing."""
    out = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        out.append(
            GpuFacts(
                index=i,
                name=p.name,
                memory_total_bytes=int(p.total_memory),
                compute_capability=f"{p.major}.{p.minor}",
            )
        )
    return out


def machine_facts(
    device: DeviceKind,
    names: SpecIndex | None,
    *,
    gpus: Sequence[GpuFacts] | None = None,
    driver: DriverInfo | None = None,
) -> tuple[Machine, SpecSheet | None]:
    """The :class:`Machine` section and the catalog spec of GPU 0 (``None`` on the CPU)."""
    if gpus is None:
        gpus, driver = nvml_gpus()
        if not gpus and torch.cuda.is_available():
            gpus = _torch_gpus()
    driver = driver or DriverInfo()
    cloud, itype = detect_cloud()
    spec: SpecSheet | None = None
    raw: str | None = None
    if device == "cuda" and gpus:
        raw = gpus[0].name
        spec = identify_accelerator(raw, gpus[0].memory_total_bytes, names)
    machine = Machine(
        hostname=socket.gethostname(),
        cloud=cloud,
        instance_type=itype,
        os=f"{platform.system()} {platform.release()}",
        cpu_model=cpu_model(),
        vcpus=os.cpu_count() or 1,
        memory_bytes=_memory_bytes(),
        device=device,
        accelerator=spec.id if spec else raw,
        accelerator_name_raw=raw,
        gpu_count=len(gpus),
        gpus=list(gpus),
        driver_version=driver.driver,
        cuda_driver_version=driver.cuda,
        cuda_version=torch.version.cuda,
        torch_version=torch.__version__,
        python_version=platform.python_version(),
    )
    return machine, spec
