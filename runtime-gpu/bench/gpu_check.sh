#!/usr/bin/env bash
# GPU check of runtime-gpu: the pytest suite on CUDA, then the train-step benchmark.
#
#   OUT=/some/dir bench/gpu_check.sh        (default OUT: ./bench-out)
#
# Writes under $OUT: pytest-cuda.log, pytest-cuda.xml, bench.log, bench-result.json/.txt, summary.txt.
# Environment: PYTHON (default python3), BENCH_ARGS (extra arguments for train_step_bench.py),
# PYTEST_TIMEOUT_S / BENCH_TIMEOUT_S (defaults 300 / 240).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
OUT="${OUT:-$PWD/bench-out}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

if ! "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>"$OUT/cuda-check.log"; then
  say "gpu_check: CUDA is not available to $PYTHON (torch missing, or no GPU):"
  cat "$OUT/cuda-check.log" | tee -a "$summary"
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda build", torch.version.cuda)' 2>&1 | tee -a "$summary"
  exit 2
fi
"$PYTHON" - <<'PY' 2>&1 | tee -a "$summary"
import torch, platform
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda, "device", torch.cuda.get_device_name(0))
try:
    import transformers; print("transformers", transformers.__version__)
except Exception as e:
    print("transformers: not importable:", e)
PY

cd "$ROOT"
say "== pytest on CUDA (ARL_TEST_DEVICE=cuda)"
ARL_TEST_DEVICE=cuda timeout "${PYTEST_TIMEOUT_S:-300}" "$PYTHON" -m pytest -q -rs --junitxml="$OUT/pytest-cuda.xml" tests > "$OUT/pytest-cuda.log" 2>&1
pytest_rc=$?
tail -n 25 "$OUT/pytest-cuda.log" | tee -a "$summary"
say "pytest exit status: $pytest_rc"

say "== train-step benchmark"
# shellcheck disable=SC2086
timeout "${BENCH_TIMEOUT_S:-240}" "$PYTHON" "$HERE/train_step_bench.py" --device cuda --out "$OUT" ${BENCH_ARGS:-} > "$OUT/bench.log" 2>&1
bench_rc=$?
tail -n 60 "$OUT/bench.log" | tee -a "$summary"
say "benchmark exit status: $bench_rc"

[ "$pytest_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
