"""benchmarks/gpu_kernel_replay.py: the GPU measurement of a replayed kernel's cost, beside the
engine's figure for the part the GPU names itself as."""

from __future__ import annotations

import pytest

from recommender.scoring.kernel_costs import CUDA_GRAPH_KERNEL_S, REFERENCE_KERNEL_CLOCK_MHZ

replay = pytest.importorskip("gpu_kernel_replay")


def test_the_engines_figure_is_found_by_the_name_torch_reports() -> None:
    """torch.cuda.get_device_name gives the nvidia-smi name; an H100 SXM's is resolved and
    charged its 1,980 MHz cycles, a GPU neither catalog knows gets no figure."""
    part, seconds = replay.engine_kernel_s("NVIDIA H100 80GB HBM3")
    assert part == "H100-SXM5-80GB"
    assert seconds == pytest.approx(CUDA_GRAPH_KERNEL_S * REFERENCE_KERNEL_CLOCK_MHZ / 1980.0)
    assert replay.engine_kernel_s("NVIDIA Quantum Flux 9000") == (None, None)


def test_without_a_cuda_gpu_it_says_so(tmp_path: object) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is present: the script measures instead")
    with pytest.raises(SystemExit, match="no CUDA GPU"):
        replay.main(["gpu_kernel_replay.py", str(tmp_path)])
