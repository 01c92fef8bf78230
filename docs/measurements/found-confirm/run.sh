#!/usr/bin/env bash
# GPU confirmations of turbo-gnn 0.1.0rc4 (set Z), fastqml 0.2.1 (set Y) and mlipops 0.6.0 (set W).
# Run from the repository root on the GPU machine, with .foundwhl/ carried (the packages' wheels and
# the few pure dependencies turbo-gnn's import needs; see README.md beside this file):
#   bash docs/measurements/found-confirm/run.sh
# Writes $OUT/found-confirm-h200.log (and the raw compute-sanitizer logs beside it).
set -u
OUT=${OUT:-/tmp/found-confirm-out}
mkdir -p "$OUT"
LOG="$OUT/${FOUND_LOG:-found-confirm-h200.log}"
SITE=/tmp/site
if [ ! -d "$SITE/mlipops" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" .foundwhl/*.whl
fi
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
unset TRITON_INTERPRET
{
  echo "# docs/measurements/found-confirm/run.sh at $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u '+%Y-%m-%d %H:%M UTC')"
  nvidia-smi -L 2>&1
  CS=$(command -v compute-sanitizer || { [ -x /usr/local/cuda/bin/compute-sanitizer ] && echo /usr/local/cuda/bin/compute-sanitizer; } || true)
  if [ -n "$CS" ]; then echo "compute-sanitizer: $CS ($("$CS" --version 2>&1 | tail -1))"; else echo "compute-sanitizer: not found (the memcheck rows will say not run)"; fi
  echo "wheels: $(cd .foundwhl && ls | tr '\n' ' ')"
} > "$LOG" 2>&1
timeout 580 python3 docs/measurements/found-confirm/confirm.py --logdir "$OUT" "$@" >> "$LOG" 2>&1
echo "exit $?" >> "$LOG"
tail -c 11500 "$LOG"
