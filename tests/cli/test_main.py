"""The console-script entry point: library errors and bugs end in a message, not a traceback."""

from __future__ import annotations

import pytest

import recommender.cli as cli
from recommender.catalog.problems import NotFoundError


def _raise(exc: Exception) -> None:
    raise exc


def test_uncaught_library_error_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "app", lambda: _raise(NotFoundError("unknown region 'mars'")))
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == 2
    assert capsys.readouterr().err == "error: unknown region 'mars'\n"


def test_a_bug_is_reported_as_such_with_exit_70(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("RECOMMENDER_DEBUG", raising=False)
    monkeypatch.setattr(cli, "app", lambda: _raise(KeyError("x")))
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == cli.EXIT_INTERNAL_ERROR
    err = capsys.readouterr().err
    assert "internal error: KeyError" in err
    assert "Traceback" not in err


def test_debug_variable_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECOMMENDER_DEBUG", "1")
    monkeypatch.setattr(cli, "app", lambda: _raise(KeyError("x")))
    with pytest.raises(KeyError):
        cli.main()
