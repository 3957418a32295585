"""Every source row is accounted for: imported (perhaps fixed) or skipped with a reason."""

from __future__ import annotations

from recommender.catalog.skypilot import ImportResult
from recommender.catalog.skypilot.accounting import RowLedger, account
from recommender.catalog.skypilot.parse import Origin


def test_a_row_the_ledger_never_heard_of_is_a_silent_drop() -> None:
    rows = [Origin("a.csv", n) for n in (2, 3, 4, 5)]
    ledger = RowLedger()
    ledger.use([rows[0], rows[1]])
    ledger.fix(rows[1], "empty-spot")
    ledger.skip(rows[2], "local-zone")
    (a,) = account(rows, ledger)
    assert (a.read, a.imported, a.fixed, a.skipped, a.fixes) == (
        4,
        2,
        1,
        {"local-zone": 1},
        {"empty-spot": 1},
    )
    assert a.silent == [rows[3]]


def test_imported_wins_over_a_skip_and_the_first_reason_is_kept() -> None:
    row, other = Origin("a.csv", 2), Origin("a.csv", 3)
    ledger = RowLedger()
    ledger.skip(row, "unpaired-gpu-row")
    ledger.use([row])
    ledger.skip(other, "duplicate-row")
    ledger.skip(other, "no-price")
    (a,) = account([row, other], ledger)
    assert (a.imported, a.skipped, a.silent) == (1, {"duplicate-row": 1}, [])


def test_the_fixture_import_drops_no_row_silently(imported: ImportResult) -> None:
    accounts = imported.accounting()
    assert {a.file for a in accounts} >= {"aws_gpu_vms.csv", "gcp_gpu_vms.csv", "azure_gpu_vms.csv"}
    for a in accounts:
        assert a.read > 0 and a.silent == [], a.file
        assert a.imported + a.skipped_total == a.read
    reasons = {r for a in accounts for r in a.skipped}
    assert "local-zone" in reasons and "file-choice" in reasons
