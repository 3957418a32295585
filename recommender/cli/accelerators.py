"""``recommender accelerators``: the spec sheets the scoring engine uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recommender.cli._app import CatalogDirOption, app, load_catalog_or_exit
from recommender.cli._output import (
    Column,
    Format,
    FormatOption,
    WideOption,
    print_csv,
    print_json,
    print_rows,
)

if TYPE_CHECKING:
    from recommender.catalog import Accelerator
    from recommender.catalog.schema import Precision

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
        **{f"{p}_tflops": peak.get(p) for p in PRECISIONS},
        "host_link_gbs": acc.host_link.gbs_per_direction,
        "nvlink_gbs": acc.nvlink_gbs,
        "tdp_w": acc.tdp_w,
        "source": acc.source.url or acc.source.name,
    }


PRECISIONS: tuple[Precision, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")
# Narrow terminals lose the links and power first, then the precisions fewest jobs use.
COLUMNS = (
    Column("id", ident=True),
    Column("GB", right=True),
    Column("GB/s", right=True),
    Column("fp32", right=True, drop=2),
    Column("tf32", right=True, drop=4),
    Column("bf16", right=True),
    Column("fp16", right=True, drop=3),
    Column("fp8", right=True),
    Column("int8", right=True, drop=5),
    Column("host GB/s", right=True, drop=8),
    Column("NVLink GB/s", right=True, drop=7),
    Column("W", right=True, drop=6),
)


@app.command()
def accelerators(
    fmt: FormatOption = Format.table, wide: WideOption = False, catalog_dir: CatalogDirOption = None
) -> None:
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

    keys = ["memory_gb", "memory_bandwidth_gbs"] + [f"{p}_tflops" for p in PRECISIONS]
    keys += ["host_link_gbs", "nvlink_gbs", "tdp_w"]
    print_rows(
        f"{len(rows)} accelerators (dense peak TFLOPS; int8 in TOPS)",
        COLUMNS,
        [(r["id"], *(num(r[k]) for k in keys)) for r in rows],
        fmt,
        wide=wide,
    )
