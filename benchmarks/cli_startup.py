"""Wall time of the ``recommender`` command as a user starts it, against references in the same run.

Each figure is the median of ``--repeats`` fresh interpreter starts (after one warm-up, so
that the OS page cache holds the files), the cases taken in turn:

- ``python -c pass``: the interpreter alone (the floor);
- ``python -c "import recommender"``: the library's top-level import;
- ``recommender --help``: the command line's start-up (target <= 0.3 s);
- ``recommender recommend <example>``: a whole recommendation (target <= 0.7 s);
- ``recommender accelerators`` and ``recommender catalog list --limit 5``: the catalog path.

The command line is started as ``python -c "from recommender.cli import main; main()"``, which
is what the console script does. ``--path DIR`` puts DIR first on ``sys.path`` so a second
checkout (e.g. the commit before a change) can be measured with the same interpreter.

    python benchmarks/cli_startup.py [--repeats 9] [--path /tmp/before]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "bert-inference.yaml"
CLI = "import sys; sys.argv[0] = 'recommender'; from recommender.cli import main; main()"
TARGETS_S = {"recommender --help": 0.3, "recommender recommend": 0.7}  # from issue 14


def cases() -> dict[str, list[str]]:
    py = sys.executable
    return {
        "python -c pass": [py, "-c", "pass"],
        'python -c "import recommender"': [py, "-c", "import recommender"],
        "recommender --help": [py, "-c", CLI, "--help"],
        "recommender recommend": [py, "-c", CLI, "recommend", str(EXAMPLE)],
        "recommender accelerators": [py, "-c", CLI, "accelerators"],
        "recommender catalog list": [py, "-c", CLI, "catalog", "list", "--limit", "5"],
    }


def wall_s(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    # cwd "/": ``python -c`` puts the working directory first on sys.path
    done = subprocess.run(argv, env=env, cwd="/", capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[2:]} exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--path", type=Path, help="checkout to import recommender from")
    args = parser.parse_args()
    env = dict(os.environ, COLUMNS="100")
    if args.path is not None:
        env["PYTHONPATH"] = str(args.path.resolve())
    load = os.getloadavg()[0]
    print(
        f"{args.repeats} runs each, median wall time; "
        f"load average {load:.1f} on {os.cpu_count()} CPUs"
    )
    runs: dict[str, list[float]] = {name: [] for name in cases()}
    for argv in cases().values():
        wall_s(argv, env)  # warm-up
    for _ in range(args.repeats):  # round robin: a burst of load slows every case alike
        for name, argv in cases().items():
            runs[name].append(wall_s(argv, env))
    floor = statistics.median(runs["python -c pass"])
    for name, times in runs.items():
        median = statistics.median(times)
        target = TARGETS_S.get(name)
        note = (
            f"  (target <= {target:g} s: {'met' if median <= target else 'MISSED'})"
            if target
            else ""
        )
        print(f"{name:34s} {median:6.3f} s  {median / floor:5.1f}x pass{note}")


if __name__ == "__main__":
    main()
