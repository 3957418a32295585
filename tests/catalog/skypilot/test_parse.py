"""Reading SkyPilot vms.csv rows: GpuInfo shapes, empty cells, errors with file:line:column."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog.skypilot import SkyPilotFormatError, read_vms
from recommender.catalog.skypilot.parse import Origin, parse_gpu_info

from .conftest import FLAT

HERE = Origin("x.csv", 2)


def test_aws_gpu_info_gives_memory_per_device() -> None:
    raw = (
        "{'Gpus': [{'Name': 'T4', 'Manufacturer': 'NVIDIA', 'Count': 4, 'LogicalGpuCount': 4, "
        "'GpuPartitionSize': 1.0, 'Workloads': ['graphics', 'ml-ai'], 'MemoryInfo': "
        "{'SizeInMiB': 16384}}], 'TotalGpuMemoryInMiB': 65536}"
    )
    info = parse_gpu_info(raw, HERE)
    assert (info.name, info.count, info.memory_gib) == ("T4", 4, 16.0)


def test_neuron_gpu_info_has_its_own_shape() -> None:
    raw = (
        "{'TotalNeuronDeviceMemoryInMiB': 524288, 'Gpus': [{'Count': 16, 'Name': 'Trainium', "
        "'CoreInfo': {'Count': 2, 'Version': 2}, 'MemoryInfo': {'SizeInMiB': 32768}}]}"
    )
    info = parse_gpu_info(raw, HERE)
    assert (info.name, info.count, info.memory_gib) == ("Trainium", 16, 32.0)


def test_neuron_total_is_split_over_devices_when_per_device_is_missing() -> None:
    raw = "{'TotalNeuronDeviceMemoryInMiB': 65536, 'Gpus': [{'Count': 2, 'Name': 'Inferentia2'}]}"
    assert parse_gpu_info(raw, HERE).memory_gib == 32.0


def test_gcp_and_azure_gpu_info() -> None:
    gcp = parse_gpu_info("{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]}", HERE)
    assert (gcp.name, gcp.memory_gib) == (None, 80.0)
    azure = parse_gpu_info("A100-80GB", HERE)  # Azure writes a bare name
    assert (azure.name, azure.memory_gib) == ("A100-80GB", None)
    assert parse_gpu_info("", HERE).memory_gib is None


def test_bad_gpu_info_names_the_place() -> None:
    with pytest.raises(SkyPilotFormatError, match=r"^x\.csv:2 GpuInfo: not a Python-repr dict"):
        parse_gpu_info("{'Gpus': [", HERE)


def test_rows_of_a_real_file() -> None:
    rows = list(read_vms(FLAT / "aws_gpu_vms_more.csv"))
    lax = [r for r in rows if r.zone == "usw2-lax1-az1"]
    assert len(lax) == 1 and lax[0].region == "us-west-2"
    assert lax[0].origin == Origin("aws_gpu_vms_more.csv", 5)
    assert lax[0].local_disk_gb == 900.0  # LocalDiskSize 900 x LocalDiskCount 1
    p5e = [r for r in rows if r.instance_type == "p5e.48xlarge"]
    assert all(r.price is None for r in p5e)  # empty on-demand cell
    assert p5e[0].local_disk_gb == 3800.0 * 8
    gcp = list(read_vms(FLAT / "gcp_gpu_accelerators.csv"))
    assert gcp[0].instance_type == "" and gcp[0].key == "A100 x 1"


def test_missing_columns_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "aws.csv"
    bad.write_text("InstanceType,Price\ng4dn.xlarge,0.5\n")
    with pytest.raises(
        SkyPilotFormatError, match=r"aws\.csv:1 missing column\(s\) AcceleratorName"
    ):
        list(read_vms(bad))


def test_bad_number_names_file_line_and_column(tmp_path: Path) -> None:
    lines = (FLAT / "azure_gpu_vms.csv").read_text().splitlines()
    lines[3] = lines[3].replace(",0.526,", ",0.5x6,")
    bad = tmp_path / "azure.csv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(SkyPilotFormatError) as info:
        list(read_vms(bad, "azure.csv"))
    assert str(info.value) == "azure.csv:4 Price: '0.5x6' is not a number"
