#!/usr/bin/env bash
# The GPU measurement in one call, for a GPU machine available for a few minutes:
# what the card and its software are, then .ci/gpu (build with CUDA, the
# SASS/register/occupancy table, the GPU tests, the table of SiluGrad and
# SwiGluGrad against XLA's autodiff and the same-mix bound, the training
# steps, the temporary memory routed against unrouted), every table also as
# JSON, every log kept, all under $OUT (default ./gpu_out):
#   $OUT/environment.txt   nvidia-smi, nvcc, Python, jax and its devices
#   $OUT/ci_gpu.log        .ci/gpu's whole output (its tables in markdown)
#   $OUT/sass.json         benchmarks/sass_instructions.py's rows
#   $OUT/table.json        benchmarks/device_bandwidth.py's rows
#   $OUT/route.json        benchmarks/route_swiglu.py's rows (memory and steps)
#   $OUT/status            .ci/gpu's exit status
#     benchmarks/gpu_measure.sh           PYTHON, GPU_BUILD_DIR, GPU_SKIP_BUILD, GPU_SKIP_TESTS as
#                                         .ci/gpu takes them
# A device call may run 10 minutes at most; where the build and the tests
# leave too little of it, run it twice back to back (the machine stays warm
# between calls): once with GPU_SKIP_TESTS=1 OUT=... for the tables, or
# GPU_SKIP_BUILD=1 for a second call on the module the first one built.
# Without a GPU it does the same as far as .ci/gpu goes there (build, SASS,
# the table's harness on the CPU) and says so in environment.txt.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/gpu_out}
mkdir -p "$OUT"
PYTHON=${PYTHON:-python3}
{
  date -u
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,driver_version --format=csv 2>&1
  else
    echo "nvidia-smi: not found"
  fi
  nvcc --version 2>&1 | tail -1
  "$PYTHON" -c 'import sys, jax; print(sys.version.split()[0], "jax", jax.__version__); print(jax.devices())' 2>&1
  nproc
} > "$OUT/environment.txt"
cat "$OUT/environment.txt"
cd "$ROOT" || exit 1
GPU_TABLE_JSON="$OUT/table.json" GPU_SASS_JSON="$OUT/sass.json" GPU_ROUTE_JSON="$OUT/route.json" \
  PYTHON="$PYTHON" .ci/gpu 2>&1 | tee "$OUT/ci_gpu.log"
status=${PIPESTATUS[0]}
echo "$status" > "$OUT/status"
exit "$status"
