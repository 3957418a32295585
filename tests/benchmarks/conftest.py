"""The benchmark scripts import one another as top-level modules (``python
benchmarks/accuracy.py`` puts their folder on the path); the tests of them do the same."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
