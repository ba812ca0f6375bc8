#!/usr/bin/env bash
# local_train's GPU figures in one go (issue 39), for a lent GPU machine: the decode benchmark, the GPU test
# tier, and the trainer against TRL. Each part writes its output under $OUT (default ./gpu-out) and has its own
# time limit, so a hang in one part does not take the others. Parts: decode, packing, trl05, tests, b05at24
# (the default, in that order), b15. Wheels in .whl/ (msgspec, tomlkit, TRL and its missing needs) are installed
# first when present: `bash bench/gpu_check.sh decode tests`.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
parts=${*:-decode packing trl05 tests b05at24}
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
  python3 -c "import trl, peft; print('trl', trl.__version__, 'peft', peft.__version__)" 2>&1 | tail -1; } 2>&1
run() {  # name, seconds, command...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.json" 2> "$OUT/$name.err"
  echo "== $name: rc=$? in $((SECONDS - t0)) s"; tail -c 1500 "$OUT/$name.json"; echo
}
for part in $parts; do
  case $part in
    decode) run decode 45 python3 bench/bench_decode.py --shapes qwen2.5-0.5b --graphs-only --profile ;;
    packing) run packing 90 python3 bench/bench_packing.py --device cuda --shape qwen2.5-0.5b --rounds 3 ;;
    trl05) run trl05 140 python3 bench/bench_local_train.py --device cuda --model-shape qwen2.5-0.5b \
             --repeats 1 --trl-python python3 ;;
    tests) run tests 175 python3 -m pytest -p no:cacheprovider -q -m gpu tests/test_train_gpu.py \
             -k "not through_the_cli and not lora_trains" -s ;;
    b05at24) run b05at24 50 python3 bench/bench_local_train.py --device cuda --model-shape qwen2.5-0.5b --no-trl \
               --repeats 1 --steps 2 --memory-budget 24 --quick-decode ;;
    b15) run b15 70 python3 bench/bench_local_train.py --device cuda --model-shape qwen2.5-1.5b --no-trl \
           --repeats 1 --steps 2 --quick-decode ;;
  esac
done
