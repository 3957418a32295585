"""Spec sheets for shares of a device: what a fractional GPU offer (AWS g6f: 1/8 L4) gets.

A cloud that sells a fraction of a GPU partitions its memory and time-slices (or partitions)
its compute: the share gets that fraction of the memory, memory bandwidth and peak FLOP/s of
the whole device. Each (accelerator, fraction) sold becomes a derived :class:`Accelerator`
(id ``L4-0.125``), so that everything that predicts per accelerator predicts the share, not
the whole device.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from recommender.catalog.schema import Accelerator, CloudCatalog, PeakTflops, Source

__all__ = ["fraction_id", "fractional_sheets", "whole_device_id"]


def fraction_id(accelerator: str, fraction: float) -> str:
    """``L4-0.125``: the derived id of a ``fraction`` of ``accelerator``."""
    return f"{accelerator}-{fraction:g}"


def whole_device_id(accelerator: str) -> str:
    """The id of the device a derived share's id (``L4-0.125``) is a share of; any other id
    unchanged."""
    whole, _, tail = accelerator.rpartition("-")
    try:
        share = float(tail)
    except ValueError:
        return accelerator
    return (
        whole
        if whole and 0.0 < share < 1.0 and fraction_id(whole, share) == accelerator
        else accelerator
    )


def _share(acc: Accelerator, fraction: float) -> Accelerator:
    peaks = {k: (v * fraction if v else None) for k, v in acc.peak_tflops.model_dump().items()}
    return acc.model_copy(
        update={
            "id": fraction_id(acc.id, fraction),
            "marketing_name": f"{acc.marketing_name} ({fraction:g} share)",
            "skypilot_name": None,
            "nvidia_smi_names": [],
            "aliases": [],
            "memory_gb": acc.memory_gb * fraction,
            "memory_bandwidth_gbs": acc.memory_bandwidth_gbs * fraction,
            "peak_tflops": PeakTflops.model_validate(peaks),
            "nvlink_gbs": None,
            "tdp_w": acc.tdp_w * fraction if acc.tdp_w else None,
            "max_per_instance": 1,
            "source": Source(
                name=f"derived: {fraction:g} of the {acc.id} spec sheet "
                "(memory, bandwidth and peaks scaled by the share)",
                url=acc.source.url,
                retrieved=acc.source.retrieved,
            ),
        }
    )


def fractional_sheets(
    accelerators: Sequence[Accelerator], clouds: Iterable[CloudCatalog]
) -> list[Accelerator]:
    """A derived sheet per (accelerator, fraction) the cloud catalogs sell, sorted by id."""
    by_id = {a.id: a for a in accelerators}
    wanted = {
        (inst.accelerator, inst.gpu_fraction)
        for cat in clouds
        for fam in cat.families
        for inst in fam.instances
        if inst.gpu_fraction and inst.accelerator in by_id
    }
    sheets = [_share(by_id[acc], fraction) for acc, fraction in wanted if fraction is not None]
    return sorted(sheets, key=lambda a: a.id)
