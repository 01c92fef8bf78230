#!/bin/bash
# Session 20's GPU board runs (session 19's script): the entries named in $1 (one a line) on a 2 x H200 host, the probe's default run
# (what a user's probe file holds), gpu+interpreter, as two shards side by side: shard i on GPU i and 16 cores,
# two probes at once a shard. Writes $OUT/<tag>.log (the device, versions, commit, each shard's end) and the rows
# it made in $OUT/<tag>-rows.tgz (unpacked over docs/bugs/rows/gpu+interpreter/ here, then `harness bugs --no-run`).
set -u
LIST=$1; TAG=$2; CODE=${3:-}  # the commit the tree is at (a copy's own git may be older)
export CASEBOOK_BUG_CACHE=$PWD/.bugcache
log=$OUT/$TAG.log
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "code ${CODE:-$(git rev-parse --short HEAD)}"; } > "$log" 2>&1
for i in 0 1; do
  ( s=$(date +%s); CUDA_VISIBLE_DEVICES=$i taskset -c $((16 * i))-$((16 * i + 15)) python3 -m harness bugs \
      --backend gpu+interpreter --runs default --record --jobs 2 --peers "" --shard $((i + 1))/2 $(cat "$LIST") \
      > "$OUT/$TAG-shard$i.log" 2>&1
    echo "rc=$? at $(( $(date +%s) - s )) s" >> "$OUT/$TAG-shard$i.log" ) &
done
wait
for i in 0 1; do echo "## shard $((i + 1))/2" >> "$log"; grep -E "rows recorded|^rc=|error:" "$OUT/$TAG-shard$i.log" >> "$log"; done
(cd docs/bugs/rows/gpu+interpreter && tar czf "$OUT/$TAG-rows.tgz" $(for e in $(cat "$OLDPWD/$LIST"); do
  [ -f "$e.json" ] && echo "$e.json"; done))
cat "$log"
