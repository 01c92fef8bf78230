#!/bin/bash
# Session 20's GPU board runs: the entries named in $1 (one a line), the probe's default run (what a user's probe
# file holds), gpu+interpreter, one shard a GPU (each on its share of the cores), $4 probes at once a shard
# (default 1: one probe a GPU, as a user runs `harness probe`; session 19 ran 2). Writes $OUT/<tag>.log (the
# device, versions, commit, each shard's end) and the rows it made in $OUT/<tag>-rows.tgz (unpacked over
# docs/bugs/rows/gpu+interpreter/ here, then `harness bugs --no-run`).
set -u
LIST=$1; TAG=$2; CODE=${3:-}; JOBS=${4:-1}  # CODE: the commit the tree is at (a copy's own git may be older)
BACKEND=${BACKEND:-gpu+interpreter}  # session 24: gpu for the GPU-only board (boards-session24/run-gpu-only.sh)
export CASEBOOK_BUG_CACHE=$PWD/.bugcache
log=$OUT/$TAG.log
N=$(nvidia-smi -L | wc -l); C=$(( $(nproc) / N ))
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "code ${CODE:-$(git rev-parse --short HEAD)}; $N shards, $JOBS probes at once a shard"; } > "$log" 2>&1
for ((i = 0; i < N; i++)); do
  ( s=$(date +%s); CUDA_VISIBLE_DEVICES=$i taskset -c $((C * i))-$((C * i + C - 1)) python3 -m harness bugs \
      --backend "$BACKEND" --runs default --record --jobs "$JOBS" --peers "" --shard $((i + 1))/$N $(cat "$LIST") \
      > "$OUT/$TAG-shard$i.log" 2>&1
    echo "rc=$? at $(( $(date +%s) - s )) s" >> "$OUT/$TAG-shard$i.log" ) &
done
wait
for ((i = 0; i < N; i++)); do echo "## shard $((i + 1))/$N" >> "$log"; grep -E "rows recorded|^rc=|error:" "$OUT/$TAG-shard$i.log" >> "$log"; done
(cd "docs/bugs/rows/$BACKEND" && tar czf "$OUT/$TAG-rows.tgz" $(for e in $(cat "$OLDPWD/$LIST"); do
  [ -f "$e.json" ] && echo "$e.json"; done))
cat "$log"
