#!/usr/bin/env bash
# The large detector on our own int32-offset fixtures (tests/probe_fixtures/int32/), each kernel and its widened
# twin, probed as a user would: every default backend, the default budget (20 s with a GPU). Run from the repository
# root on a GPU machine; writes to ${OUT:-.}/large-fixtures-<gpu>.log.
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' ' '-' | tr 'A-Z' 'a-z')
log="${OUT:-.}/large-fixtures-${gpu}.log"
{
  date -u
  nvidia-smi -L
  python -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  for f in row_scale permute_rows paged_sum expert_gate; do
    for l in launch launch_fixed; do
      echo "## python -m harness probe tests/probe_fixtures/int32/$f.py --launcher $l (defaults)"
      s=$(date +%s.%N)
      python -m harness probe "tests/probe_fixtures/int32/$f.py" --launcher "$l" 2>&1 \
        | grep -E "^probe |^P[0-9]{3} |large: |gpu reference: done|skipped: the probe" | cut -c1-400
      echo "rc=${PIPESTATUS[0]} wall $(python -c "import time; print(round(time.time() - $s, 1))") s"
    done
  done
} > "$log" 2>&1
cat "$log"
