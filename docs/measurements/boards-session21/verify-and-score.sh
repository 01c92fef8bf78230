#!/bin/bash
# Session 21's first GPU run of the two new first-run entries: --verify --record on the GPU (verify-gpu.json), then
# their first scoring with session 20's board script (gpu+interpreter, one probe a GPU, the 20 s budget).
set -u
export CASEBOOK_BUG_CACHE=$PWD/.bugcache
LIST=docs/measurements/boards-session21/first-run-new.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "code $1"; python3 -m harness bugs --verify --backend gpu --record $(cat $LIST); echo "verify rc=$?"; } > "$OUT/verify-gpu-$1.log" 2>&1
(cd bugs && tar czf "$OUT/verify-records.tgz" $(for e in $(cat "../$LIST"); do echo "$e/recorded"; done))
bash docs/measurements/boards-session20/run.sh $LIST gpu-first-run-new-h200-x2-$1 $1 1
cat "$OUT/verify-gpu-$1.log"
