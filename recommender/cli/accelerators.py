"""``recommender accelerators``: the spec sheets the scoring engine uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recommender.cli._app import CatalogDirOption, app, load_catalog_or_exit
from recommender.cli._output import Format, FormatOption, out, print_csv, print_json, table

if TYPE_CHECKING:
    from recommender.catalog import Accelerator

__all__ = ["accelerators"]


def _row(acc: Accelerator) -> dict[str, object]:
    peak = acc.peak_tflops
    return {
        "id": acc.id,
        "marketing_name": acc.marketing_name,
        "skypilot_name": acc.skypilot_name,
        "vendor": acc.vendor,
        "memory_gb": acc.memory_gb,
        "memory_bandwidth_gbs": acc.memory_bandwidth_gbs,
        **{f"{p}_tflops": peak.get(p) for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")},
        "host_link_gbs": acc.host_link.gbs_per_direction,
        "nvlink_gbs": acc.nvlink_gbs,
        "tdp_w": acc.tdp_w,
        "source": acc.source.url or acc.source.name,
    }


@app.command()
def accelerators(fmt: FormatOption = Format.table, catalog_dir: CatalogDirOption = None) -> None:
    """List accelerators with dense peak TFLOPS per precision, memory and links."""
    catalog = load_catalog_or_exit(catalog_dir)
    rows = [_row(a) for a in catalog.accelerators]
    if fmt is Format.json:
        print_json(rows)
        return
    if fmt is Format.csv:
        print_csv(rows)
        return

    def num(v: object) -> str:
        return "-" if v is None else f"{v:g}" if isinstance(v, float | int) else str(v)

    out.print(
        table(
            f"{len(rows)} accelerators (dense peak; int8 in TOPS)",
            [
                "id",
                ("GB", "right"),
                ("GB/s", "right"),
                ("fp32", "right"),
                ("tf32", "right"),
                ("bf16", "right"),
                ("fp16", "right"),
                ("fp8", "right"),
                ("int8", "right"),
                ("host GB/s", "right"),
                ("NVLink GB/s", "right"),
                ("W", "right"),
            ],
            [
                (
                    r["id"],
                    num(r["memory_gb"]),
                    num(r["memory_bandwidth_gbs"]),
                    num(r["fp32_tflops"]),
                    num(r["tf32_tflops"]),
                    num(r["bf16_tflops"]),
                    num(r["fp16_tflops"]),
                    num(r["fp8_tflops"]),
                    num(r["int8_tflops"]),
                    num(r["host_link_gbs"]),
                    num(r["nvlink_gbs"]),
                    num(r["tdp_w"]),
                )
                for r in rows
            ],
        )
    )
