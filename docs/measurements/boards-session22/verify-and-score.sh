#!/bin/bash
# Session 22's first GPU run of new first-run entries: --verify --record on the GPU, then their first scoring
# with the board script (gpu+interpreter, one probe a GPU, the 20 s budget). $1: the list, $2: the commit.
set -u
export CASEBOOK_BUG_CACHE=$PWD/.bugcache
LIST=$1; CODE=$2; TAG=$(basename "$LIST" .txt)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "code $CODE"; python3 -m harness bugs --verify --backend gpu --record $(cat $LIST); echo "verify rc=$?"; } > "$OUT/verify-gpu-$TAG-$CODE.log" 2>&1
(cd bugs && tar czf "$OUT/verify-records-$TAG.tgz" $(for e in $(cat "../$LIST"); do echo "$e/recorded"; done))
bash docs/measurements/boards-session22/run.sh $LIST gpu-$TAG-h200-x2-$CODE $CODE 1
cat "$OUT/verify-gpu-$TAG-$CODE.log"
