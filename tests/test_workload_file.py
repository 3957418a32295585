"""Workload files are read as strictly as the API reads a body: size, encoding, types, numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.catalog.problems import WorkloadError
from recommender.settings import Settings
from recommender.workload import load_workload
from recommender.workload_file import MAX_WORKLOAD_FILE_BYTES

YAML = """\
name: w
kind: training
model: {parameters: 3.4e8, flops_per_sample: 7.8e11}
batch_size: 32
data: {samples: 1000}
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # problems then name the file relative to it: "w.yaml:4"


def _write(tmp_path: Path, text: str | bytes, name: str = "w.yaml") -> Path:
    p = tmp_path / name
    if isinstance(text, str):
        p.write_text(text, encoding="utf-8")
    else:
        p.write_bytes(text)
    return p


def _problem(path: Path) -> str:
    with pytest.raises(WorkloadError) as info:
        load_workload(path)
    assert info.value.problems
    return str(info.value.problems[0])


def test_yaml_exponent_numbers_are_numbers(tmp_path: Path) -> None:
    w = load_workload(_write(tmp_path, YAML))
    assert w.model.parameters == 3.4e8
    assert w.batch_size == 32


@pytest.mark.parametrize(
    ("value", "why"), [("true", "valid integer"), ('"32"', "valid integer"), ("32.5", "integer")]
)
def test_batch_size_has_the_apis_strict_type(tmp_path: Path, value: str, why: str) -> None:
    text = YAML.replace("batch_size: 32", f"batch_size: {value}")
    message = _problem(_write(tmp_path, text))
    assert "w.yaml:4 batch_size:" in message
    assert why in message


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", ".NaN"])
def test_infinite_and_nan_numbers_are_refused_with_the_field(tmp_path: Path, value: str) -> None:
    text = YAML.replace("parameters: 3.4e8", f"parameters: {value}")
    message = _problem(_write(tmp_path, text))
    assert "w.yaml:3 model.parameters: must be a finite number" in message


def test_json_trailing_comma_is_refused_with_the_line(tmp_path: Path) -> None:
    text = '{\n  "name": "w",\n  "kind": "inference",\n  "model": {"parameters": 1e8,},\n}\n'
    message = _problem(_write(tmp_path, text, "w.json"))
    assert message.startswith("w.json:4")
    assert "invalid JSON" in message


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_json_nan_and_infinity_are_refused(tmp_path: Path, constant: str) -> None:
    text = f'{{"name": "w", "kind": "inference", "model": {{"parameters": {constant}}}}}'
    assert "not a number JSON allows" in _problem(_write(tmp_path, text, "w.json"))


def test_json_fields_keep_their_lines(tmp_path: Path) -> None:
    text = '{\n  "name": "w",\n  "kind": "inference",\n  "batch_size": true,\n'
    text += '  "model": {"parameters": 1e8, "flops_per_sample": 1e9}\n}\n'
    assert _problem(_write(tmp_path, text, "w.json")).startswith("w.json:4 batch_size:")


def test_undecodable_file_names_the_byte_offset(tmp_path: Path) -> None:
    raw = YAML.encode().replace(b"name: w", b"name: w\xff")
    message = _problem(_write(tmp_path, raw))
    assert "w.yaml:1" in message
    assert "byte 0xff at offset 7" in message


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    assert load_workload(_write(tmp_path, b"\xef\xbb\xbf" + YAML.encode())).name == "w"


def test_file_over_the_api_body_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    big = YAML + "#" * MAX_WORKLOAD_FILE_BYTES + "\n"
    assert "larger than 1048576 bytes" in _problem(_write(tmp_path, big))


def test_file_limit_is_the_apis_default_body_limit() -> None:
    assert Settings.model_fields["max_body_bytes"].default == MAX_WORKLOAD_FILE_BYTES


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("data: {samples: 1.0e30}", "data.samples"),
        ("targets: {requests_per_s: 1.0e30}", "targets.requests_per_s"),
        ("constraints: {max_gpus: 100000000}", "constraints.max_gpus"),
        ("inference: {prompt_tokens: 1000000000}", "inference.prompt_tokens"),
        ("batch_size: 10000000000", "batch_size"),
    ],
)
def test_absurd_quantities_are_refused_with_the_bound(
    tmp_path: Path, line: str, field: str
) -> None:
    key = line.split(":")[0]
    text = "\n".join(ln for ln in YAML.splitlines() if not ln.startswith(key)) + "\n" + line
    message = _problem(_write(tmp_path, text))
    assert f" {field}: must be <=" in message


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    assert "duplicate key" in _problem(_write(tmp_path, YAML + "batch_size: 8\n"))


@pytest.mark.parametrize("text", ["- a\n- b\n", "", "just text\n", "{"])
def test_not_a_mapping_or_broken_syntax_is_a_workload_error(tmp_path: Path, text: str) -> None:
    _problem(_write(tmp_path, text))


def test_missing_file_is_a_workload_error(tmp_path: Path) -> None:
    assert "cannot read file" in _problem(tmp_path / "nope.yaml")
