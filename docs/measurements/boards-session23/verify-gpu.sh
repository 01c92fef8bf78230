#!/bin/bash
# Session 23: `harness bugs --verify --backend gpu --record` on the entries named in $1 (one a line: those with no
# recorded/verify-gpu.json yet). Writes $OUT/verify-gpu-<list>-<commit>.log (device, versions, commit, each
# entry's verdict) and the records it made in $OUT/verify-records-<list>.tgz (unpacked over bugs/ here).
set -u
export CASEBOOK_BUG_CACHE=$PWD/.bugcache
LIST=$1; CODE=$2; TAG=$(basename "$LIST" .txt)
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "code $CODE"; python3 -m harness bugs --verify --backend gpu --record $(cat "$LIST"); echo "verify rc=$?"; date -u; } \
  > "$OUT/verify-gpu-$TAG-$CODE.log" 2>&1
(cd bugs && tar czf "$OUT/verify-records-$TAG.tgz" $(for e in $(cat "../$LIST"); do [ -f "$e/recorded/verify-gpu.json" ] && echo "$e/recorded/verify-gpu.json"; done))
cat "$OUT/verify-gpu-$TAG-$CODE.log"
