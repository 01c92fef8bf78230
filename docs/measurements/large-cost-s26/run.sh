#!/bin/bash
# Each int32 entry's buggy version through prof.py, one process each, on the GPU machine: $OUT/large-cost.log.
export CASEBOOK_BUG_CACHE=$PWD/.bugcache
log=$OUT/large-cost.log
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "code ${1:-$(git rev-parse --short HEAD)}"; } > "$log" 2>&1
for e in $(cat .large-list); do
  PYTHONPATH=$PWD timeout 150 python3 docs/measurements/large-cost-s26/prof.py "$e" buggy 2>&1 | grep -E "^RESULT|Error" | tail -2 >> "$log"
done
cat "$log"
