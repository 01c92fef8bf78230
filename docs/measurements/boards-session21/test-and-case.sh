#!/bin/bash
# Session 21's GPU run at the session's final probe code: the new case's GPU record, then the test half's board
# with session 20's script (gpu+interpreter, one probe a GPU, the 20 s budget).
set -u
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "code $1"; python3 -m harness record reduce-combine-transforms --backend gpu; echo "record rc=$?"; } \
  > "$OUT/case-record-gpu-$1.log" 2>&1
tar czf "$OUT/case-recorded.tgz" cases/reduce-combine-transforms/recorded cases/reduce-combine-transforms/README.md
bash docs/measurements/boards-session20/run.sh docs/measurements/boards-session20/test.txt gpu-test-h200-x2-$1 $1 1
cat "$OUT/case-record-gpu-$1.log"
