"""The profile schema: round-trip, the compute-fraction helper, and errors naming the field."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from recommender.profile import (
    Capabilities,
    Classification,
    CopyBandwidth,
    Diagnosis,
    Figure,
    Machine,
    Profile,
    ProfileError,
    StageTiming,
    WorkloadProfile,
    load_profile,
)


def _timing(v: float) -> StageTiming:
    return StageTiming(mean=v, median=v, p90=v)


def make_profile() -> Profile:
    fig = Figure(value=700.0, unit="TFLOP/s", repeats=5, spec_peak=989.4, fraction_of_peak=0.71)
    return Profile(
        created_at=dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        probe_version="0.1.0",
        machine=Machine(
            hostname="vm-1",
            vcpus=16,
            device="cuda",
            accelerator="H200-SXM-141GB",
            accelerator_name_raw="NVIDIA H200",
            gpu_count=1,
        ),
        capabilities=Capabilities(
            matmul_tflops={"bf16": fig},
            h2d_gbs=CopyBandwidth(pinned=Figure(value=50.0, unit="GB/s", repeats=3)),
        ),
        workload=WorkloadProfile(
            name="reference:transformer-train",
            batch_size=8,
            devices_used=1,
            warmup_steps=2,
            steps_measured=10,
            wall_s=1.0,
            throughput_samples_per_s=80.0,
            data_wait_s=_timing(0.01),
            h2d_s=_timing(0.01),
            compute_s=_timing(0.075),
            idle_s=_timing(0.025),
            step_s=_timing(0.1),
            bytes_to_device_per_step=1e6,
            bytes_to_device_per_sample=1.25e5,
        ),
        classification=Classification(
            bound="balanced", limiting_stage="compute", gpu_busy_fraction=0.75
        ),
        diagnoses=[Diagnosis(code="gpu-unused", severity="warning", message="m", remedies=["r"])],
    )


def test_round_trip_through_json() -> None:
    profile = make_profile()
    again = Profile.model_validate_json(profile.to_json())
    assert again == profile
    assert again.capabilities.matmul_tflops["bf16"].fraction_of_peak == 0.71


def test_compute_fraction_is_compute_over_step() -> None:
    assert make_profile().compute_fraction() == pytest.approx(0.75)
    no_workload = make_profile().model_copy(update={"workload": None})
    assert no_workload.compute_fraction() is None


def test_unknown_fields_from_a_newer_probe_are_ignored() -> None:
    doc = json.loads(make_profile().to_json())
    doc["machine"]["future_field"] = 1
    assert Profile.model_validate(doc).machine.hostname == "vm-1"


def test_load_profile_names_the_field(tmp_path: Path) -> None:
    doc = json.loads(make_profile().to_json())
    doc["machine"]["device"] = "tpu"
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError, match=r"p\.json: field machine\.device"):
        load_profile(path)


def test_load_profile_reports_the_json_line(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{\n  "schema_version": 1,\n  oops\n}')
    with pytest.raises(ProfileError, match=r"p\.json:3: not valid JSON"):
        load_profile(path)


def test_a_future_schema_version_is_refused(tmp_path: Path) -> None:
    doc = json.loads(make_profile().to_json())
    doc["schema_version"] = 2
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError, match="schema_version"):
        load_profile(path)


def test_load_profile_reads_a_written_profile(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(make_profile().to_json())
    assert load_profile(path) == make_profile()
