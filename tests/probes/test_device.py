"""Machine identity: cloud and instance type from env / DMI, CPU model, GPU name resolution."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from unittest.mock import Mock

import pynvml
import pytest

from probes import nvml as nvml_module
from probes.device import cpu_model, detect_cloud, identify_accelerator, machine_facts
from probes.nvml import DriverInfo, UtilizationSampler, nvml_gpus, nvml_id_for_cuda
from recommender.catalog import Catalog
from recommender.profile import GpuFacts


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECOMMENDER_CLOUD", raising=False)
    monkeypatch.delenv("RECOMMENDER_INSTANCE_TYPE", raising=False)


def _dmi(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text + "\n")
    return tmp_path


def test_aws_nitro_names_its_instance_type_in_dmi(tmp_path: Path) -> None:
    dmi = _dmi(tmp_path, sys_vendor="Amazon EC2", product_name="p4d.24xlarge")
    assert detect_cloud(dmi) == ("aws", "p4d.24xlarge")


def test_gcp_and_azure_give_the_cloud_only(tmp_path: Path) -> None:
    gcp = tmp_path / "g"
    gcp.mkdir()
    _dmi(gcp, sys_vendor="Google", product_name="Google Compute Engine")
    assert detect_cloud(gcp) == ("gcp", None)
    azure = tmp_path / "a"
    azure.mkdir()
    _dmi(azure, sys_vendor="Xen", chassis_asset_tag="7783-7084-3265-9085-8269-3286-77")
    assert detect_cloud(azure) == ("azure", None)


def test_the_environment_overrides_dmi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOMMENDER_CLOUD", "GCP")
    monkeypatch.setenv("RECOMMENDER_INSTANCE_TYPE", "a3-highgpu-8g")
    assert detect_cloud(tmp_path) == ("gcp", "a3-highgpu-8g")
    assert detect_cloud(tmp_path / "absent") == ("gcp", "a3-highgpu-8g")


def test_no_dmi_means_unknown(tmp_path: Path) -> None:
    assert detect_cloud(tmp_path / "absent") == (None, None)


def test_cpu_model_from_cpuinfo(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC 7R13 Processor\n")
    assert cpu_model(info) == "AMD EPYC 7R13 Processor"


@pytest.mark.parametrize(
    ("raw", "memory", "expected"),
    [
        ("NVIDIA H200", 150_754_820_096, "H200-SXM-141GB"),
        ("Tesla T4", 15_843_721_216, "T4"),
        ("NVIDIA GeForce RTX 2080", None, None),
    ],
)
def test_gpu_names_resolve_to_catalog_ids(
    catalog: Catalog, raw: str, memory: int | None, expected: str | None
) -> None:
    acc = identify_accelerator(raw, memory, catalog.names)
    assert (acc.id if acc else None) == expected


def test_a_shared_name_is_settled_by_memory(catalog: Catalog) -> None:
    variants = catalog.names.resolve_all("A100", strict=False)
    if len(variants) < 2:
        pytest.skip("the catalog lists a single A100 variant")
    small = min(variants, key=lambda a: a.memory_gb)
    picked = identify_accelerator("A100", int(small.memory_gb * 1e9), catalog.names)
    assert picked is not None and picked.memory_gb == small.memory_gb


def test_machine_facts_on_a_gpu_host(catalog: Catalog) -> None:
    gpus = [
        GpuFacts(index=i, name="NVIDIA H200", memory_total_bytes=150_754_820_096) for i in range(8)
    ]
    machine, spec = machine_facts(
        "cuda", catalog.names, gpus=gpus, driver=DriverInfo("550.54.15", "12.4")
    )
    assert spec is not None and machine.accelerator == spec.id == "H200-SXM-141GB"
    assert machine.accelerator_name_raw == "NVIDIA H200" and machine.gpu_count == 8
    assert (machine.driver_version, machine.cuda_driver_version) == ("550.54.15", "12.4")
    assert machine.vcpus >= 1 and machine.torch_version


def test_machine_facts_on_the_cpu_names_no_accelerator(catalog: Catalog) -> None:
    machine, spec = machine_facts("cpu", catalog.names, gpus=[])
    assert spec is None and machine.accelerator is None and machine.device == "cpu"


def _fake_nvml() -> Mock:
    """A pynvml module (mocked from the real one) describing one H200."""
    lib = Mock(spec=pynvml)
    lib.NVMLError = pynvml.NVMLError
    lib.nvmlDeviceGetCount.return_value = 1
    lib.nvmlDeviceGetName.return_value = "NVIDIA H200"
    lib.nvmlDeviceGetMemoryInfo.return_value = SimpleNamespace(total=150_754_820_096)
    lib.nvmlDeviceGetEnforcedPowerLimit.return_value = 700_000
    lib.nvmlDeviceGetCudaComputeCapability.return_value = (9, 0)
    lib.nvmlDeviceGetCurrPcieLinkGeneration.return_value = 5
    lib.nvmlDeviceGetMaxPcieLinkGeneration.return_value = 5
    lib.nvmlDeviceGetCurrPcieLinkWidth.return_value = 16
    lib.nvmlDeviceGetMaxPcieLinkWidth.return_value = 16
    lib.nvmlDeviceGetMaxClockInfo.side_effect = pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
    lib.nvmlSystemGetDriverVersion.return_value = "550.54.15"
    lib.nvmlSystemGetCudaDriverVersion.return_value = 12040
    lib.nvmlDeviceGetUtilizationRates.return_value = SimpleNamespace(gpu=87, memory=40)
    return lib


def test_nvml_facts_and_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    lib = _fake_nvml()
    monkeypatch.setattr(nvml_module, "nvml", lambda: lib)
    (gpu,), driver = nvml_gpus()
    assert gpu.name == "NVIDIA H200" and gpu.memory_total_bytes == 150_754_820_096
    assert gpu.power_limit_w == 700.0 and gpu.compute_capability == "9.0"
    assert (gpu.pcie_gen_current, gpu.pcie_width_max) == (5, 16)
    assert gpu.sm_clock_max_mhz is None  # NOT_SUPPORTED is no figure, not a failure
    assert (driver.driver, driver.cuda) == ("550.54.15", "12.4")
    lib.nvmlShutdown.assert_called_once()


def test_the_sampler_collects_utilisation(monkeypatch: pytest.MonkeyPatch) -> None:
    lib = _fake_nvml()
    monkeypatch.setattr(nvml_module, "nvml", lambda: lib)
    with UtilizationSampler("GPU-1234", interval_s=0.01) as sampler:
        time.sleep(0.05)
    assert sampler.available and sampler.mean() == 87.0 and len(sampler.samples) >= 2
    lib.nvmlDeviceGetHandleByUUID.assert_called_once_with("GPU-1234")


def test_without_nvml_there_is_nothing_to_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nvml_module, "nvml", lambda: None)
    with UtilizationSampler(0) as sampler:
        time.sleep(0.01)
    assert not sampler.available and sampler.mean() is None
    assert nvml_gpus()[0] == []


@pytest.mark.parametrize(
    ("visible", "index", "expected"),
    [(None, 1, 1), ("2,3", 1, 3), ("GPU-aa,GPU-bb", 0, "GPU-aa"), ("5", 2, 2)],
)
def test_cuda_indices_map_to_nvml_through_visible_devices(
    monkeypatch: pytest.MonkeyPatch, visible: str | None, index: int, expected: int | str
) -> None:
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert nvml_id_for_cuda(index) == expected
