#!/usr/bin/env bash
# Check the probe on a GPU machine against a plain measurement taken in the same run.
#
# 1. runs `recommender probe --device cuda` with a time budget (default 90 s) and checks that
#    it ends within it;
# 2. measures, with a few lines of plain torch, one big bf16 matmul (8192^3, CUDA events,
#    median of 20) and a pinned 512 MiB host-to-device copy (median of 10);
# 3. prints the probe's figures beside the plain ones with the ratio, and FAILs a figure
#    that differs by more than 20 %; prints every precision's burst matmul figure (int8 and fp8
#    too: the rates achievable.yaml lacks for Hopper) and the sustained one (one precision run
#    back to back) beside its burst, which is information, not a check;
# 4. times one kernel of a replayed CUDA graph (benchmarks/gpu_kernel_replay.py) beside the
#    engine's figure for the part: information, not a check.
# Takes under 5 minutes. Needs the package installed with a CUDA build of torch
# (pip install -e '.[probe]'). Results go to $OUT (or a temporary directory).
#
#   benchmarks/gpu_probe_check.sh            # PROBE_SECONDS=60 benchmarks/gpu_probe_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RESULTS="${OUT:-$(mktemp -d)}"
mkdir -p "$RESULTS"
BUDGET="${PROBE_SECONDS:-90}"
PY="${PYTHON:-python3}"
[[ -z "${PYTHON:-}" && -x .venv/bin/python ]] && PY=.venv/bin/python

"$PY" - <<'EOF'
import sys
try:
    import torch
    import recommender.cli  # noqa: F401
except ImportError as exc:
    sys.exit(f"gpu_probe_check: {exc}; install the package first: pip install -e '.[probe]'")
if not torch.cuda.is_available():
    sys.exit(f"gpu_probe_check: torch {torch.__version__} sees no CUDA GPU: run this on a GPU machine")
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")
EOF

# The console script next to the interpreter, so the budget counts from process start.
RECOMMENDER="$(dirname "$(command -v "$PY")")/recommender"
[[ -x "$RECOMMENDER" ]] || RECOMMENDER="$(command -v recommender || true)"
[[ -n "$RECOMMENDER" ]] || { echo "gpu_probe_check: no recommender command on PATH" >&2; exit 1; }

echo "== probe (budget ${BUDGET} s): $RECOMMENDER probe --device cuda"
start_ns=$(date +%s%N)
set +e
"$RECOMMENDER" probe --device cuda --seconds "$BUDGET" \
  --format json --output "$RESULTS/profile.json" >/dev/null 2>"$RESULTS/probe.stderr"
probe_rc=$?
set -e
wall_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
echo "probe exit code $probe_rc, wall ${wall_ms} ms"
if [[ ! -s "$RESULTS/profile.json" ]]; then
  cat "$RESULTS/probe.stderr" >&2
  echo "FAIL: the probe wrote no profile" >&2
  exit 1
fi

echo "== plain reference measurement"
set +e
"$PY" - "$RESULTS" "$BUDGET" "$wall_ms" "$probe_rc" <<'EOF'
import json
import statistics
import sys
from pathlib import Path

import torch

results, budget, wall = Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]) / 1e3
probe_rc = int(sys.argv[4])
profile = json.loads((results / "profile.json").read_text())
dev = torch.device("cuda", 0)


def timed(fn, reps):
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


n = 8192
a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
for _ in range(5):
    a @ b
torch.cuda.synchronize()
ref_tflops = 2 * n**3 / timed(lambda: a @ b, 20) / 1e12
del a, b

size = 512 << 20
host = torch.empty(size, dtype=torch.uint8, pin_memory=True).fill_(1)
gpu = torch.empty(size, dtype=torch.uint8, device=dev)
for _ in range(2):
    gpu.copy_(host, non_blocking=True)
torch.cuda.synchronize()
ref_h2d = size / timed(lambda: gpu.copy_(host, non_blocking=True), 10) / 1e9

caps = profile["capabilities"]
probe_tflops = (caps["matmul_tflops"].get("bf16") or {}).get("value")
probe_h2d = ((caps.get("h2d_gbs") or {}).get("pinned") or {}).get("value")
rows = [
    ("matmul bf16 TFLOP/s", probe_tflops, ref_tflops),
    ("h2d pinned GB/s", probe_h2d, ref_h2d),
]
failed = []
print(f"{'figure':<22}{'probe':>12}{'plain':>12}{'ratio':>8}")
for name, probe_v, ref_v in rows:
    ratio = probe_v / ref_v if probe_v else None
    ok = ratio is not None and 0.8 <= ratio <= 1.25
    failed += [] if ok else [name]
    shown = "-" if probe_v is None else f"{probe_v:.4g}"
    ratio_s = "-" if ratio is None else f"{ratio:.3f}"
    print(f"{name:<22}{shown:>12}{ref_v:>12.4g}{ratio_s:>8}  {'ok' if ok else 'FAIL'}")
for p, fig in (caps.get("matmul_tflops") or {}).items():  # information: every precision's burst
    share = f", {fig['fraction_of_peak']:.0%} of the datasheet" if fig.get("fraction_of_peak") else ""
    print(f"matmul {p} burst {fig['value']:.4g} TFLOP/s{share}")
for p, held in (caps.get("matmul_sustained_tflops") or {}).items():
    burst = (caps["matmul_tflops"].get(p) or {}).get("value")
    share = f", {held['value'] / burst:.0%} of the burst" if burst else ""
    print(f"matmul {p} sustained {held['value']:.4g} TFLOP/s (windows {held.get('min') or 0:.4g}"
          f"-{held.get('max') or 0:.4g}){share}: {held['method']}")
in_budget = wall <= budget
print(f"probe wall {wall:.1f} s of a {budget:g} s budget: {'ok' if in_budget else 'FAIL'}")
w = profile.get("workload") or {}
c = profile.get("classification") or {}
print(f"machine: {profile['machine']['gpu_count']} x {profile['machine']['accelerator']}; "
      f"workload {w.get('name')}: {w.get('throughput_samples_per_s')} samples/s, "
      f"{c.get('bound')} ({c.get('limiting_stage')})")
summary = {
    "probe_exit_code": probe_rc,
    "probe_wall_s": wall,
    "budget_s": budget,
    "figures": [{"figure": n, "probe": p, "plain": r} for n, p, r in rows],
    "sustained": caps.get("matmul_sustained_tflops") or {},
    "diagnoses": [d["code"] for d in profile.get("diagnoses", [])],
    "failed": failed + ([] if in_budget else ["budget"]) + ([] if probe_rc == 0 else ["exit code"]),
}
(results / "gpu_probe_check.json").write_text(json.dumps(summary, indent=2) + "\n")
print(f"results in {results}")
sys.exit(1 if summary["failed"] else 0)
EOF
check_rc=$?
set -e

# 4. Information, not a check: what one kernel of a replayed CUDA graph costs here, beside the
#    engine's figure for the part (kernel_costs.replayed_kernel_s).
echo "== a replayed kernel's cost"
"$PY" benchmarks/gpu_kernel_replay.py "$RESULTS" || echo "gpu_kernel_replay failed (not a check)"
exit "$check_rc"
