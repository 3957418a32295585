"""The ``recommender`` command line: one module per command group, registered here."""

from __future__ import annotations

from recommender.cli import _app

__all__ = ["app", "main"]

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


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
