#!/bin/bash
# Session 27's GPU board runs (the script of session 26) on ONE GPU (the kind lent this session), a shard of the list a call (a device call
# lasts at most 10 minutes): the entries named in $1 (one a line), the probe's default run, gpu+interpreter, one
# probe at a time, only the $4-th shard (I/N, every N-th entry by name). Writes $OUT/<tag>.log (the device,
# versions, commit, the shard's end) and the rows it made in $OUT/<tag>-rows.tgz (unpacked over
# docs/bugs/rows/gpu+interpreter/ here, then `harness bugs --no-run --record`).
set -u
LIST=$1; TAG=$2; CODE=$3; SHARD=$4
export CASEBOOK_BUG_CACHE=$PWD/.bugcache
log=$OUT/$TAG.log
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "code $CODE; shard $SHARD, 1 probe at a time on one GPU"; } > "$log" 2>&1
s=$(date +%s)
python3 -m harness bugs --backend gpu+interpreter --runs default --record --jobs 1 --peers "" --shard "$SHARD" \
  $(cat "$LIST") > "$OUT/$TAG-shard.log" 2>&1
echo "rc=$? at $(( $(date +%s) - s )) s" >> "$OUT/$TAG-shard.log"
grep -E "rows recorded|^rc=|error:" "$OUT/$TAG-shard.log" >> "$log"
(cd docs/bugs/rows/gpu+interpreter && tar czf "$OUT/$TAG-rows.tgz" $(for e in $(cat "$OLDPWD/$LIST"); do
  [ -f "$e.json" ] && echo "$e.json"; done))
cat "$log"
