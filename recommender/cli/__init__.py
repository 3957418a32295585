"""The ``recommender`` command line: one module per command group, registered here."""

from __future__ import annotations

from recommender.cli import _app

__all__ = ["EXIT_INTERNAL_ERROR", "app", "main"]

app = _app.app

# Each import registers its commands on ``app`` (or on the ``catalog`` group).
from recommender.cli import accelerators as _accelerators  # noqa: E402,F401
from recommender.cli import apikey as _apikey  # noqa: E402,F401
from recommender.cli import campaign as _campaign  # noqa: E402,F401
from recommender.cli import catalog as _catalog  # noqa: E402,F401
from recommender.cli import catalog_import as _catalog_import  # noqa: E402,F401
from recommender.cli import catalog_refresh as _catalog_refresh  # noqa: E402,F401
from recommender.cli import db as _db  # noqa: E402,F401
from recommender.cli import models as _models  # noqa: E402,F401
from recommender.cli import probe as _probe  # noqa: E402,F401
from recommender.cli import probe_plan as _probe_plan  # noqa: E402,F401
from recommender.cli import recommend as _recommend  # noqa: E402,F401
from recommender.cli import serve as _serve  # noqa: E402,F401

# sysexits.h EX_SOFTWARE: a bug of ours, not of the input
EXIT_INTERNAL_ERROR = 70


def main() -> None:
    """Console-script entry point: a library error is a message, never a traceback."""
    import os
    import sys

    try:
        app()
    except Exception as exc:
        # imported here: the catalog package is not loaded for --help
        from recommender.errors import RecommenderError

        if isinstance(exc, RecommenderError):  # a command that did not catch its own
            print(f"error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
        if os.environ.get("RECOMMENDER_DEBUG"):
            raise
        print(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug: please report it with the command line "
            "(RECOMMENDER_DEBUG=1 shows the traceback).",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_INTERNAL_ERROR) from None


if __name__ == "__main__":  # pragma: no cover
    main()
