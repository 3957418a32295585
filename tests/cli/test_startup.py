"""The command line imports only what a command needs (speed is in benchmarks/cli_startup.py)."""

from __future__ import annotations

import subprocess
import sys
from typing import get_args

from recommender.cli.recommend import Objective
from recommender.scoring.results import Objective as EngineObjective

HEAVY = ("numpy", "sqlalchemy", "alembic", "fastapi", "uvicorn", "boto3", "torch", "pydantic")


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys\nprint('--modules--', *sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd="/"
    )
    return set(done.stdout.rpartition("--modules--")[2].split())


def test_help_loads_no_engine_web_database_or_sdk() -> None:
    code = "import sys; sys.argv = ['recommender', '--help']\nfrom recommender.cli import main\n"
    code += "try:\n    main()\nexcept SystemExit:\n    pass"
    loaded = _modules_after(code)
    assert "recommender.cli" in loaded  # the probe ran the command line
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    assert not {m for m in loaded if m.startswith(("recommender.catalog", "recommender.scoring"))}


def test_import_recommender_is_lazy_until_a_name_is_used() -> None:
    assert "recommender.scoring" not in _modules_after("import recommender")
    assert "recommender.scoring" in _modules_after("import recommender; recommender.recommend")


def test_cli_objective_choices_are_the_engines() -> None:
    assert get_args(Objective) == get_args(EngineObjective)
