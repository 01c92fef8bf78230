#!/bin/bash
# Issue 38: the boards at bb8618d^1 (pre) and bb8618d (post) on one 2 x H200 host, side by side:
# GPU board (gpu+interpreter): pre on GPU 0 (cores 0-11), post on GPU 1 (cores 12-23), same entries, same order,
# two probes at once a side; CPU board (interpreter) for the entries in $3 on cores 24-31, 4 shards of 2 cores,
# each entry at pre and at once at post. Stops starting GPU entries at $2 seconds (SIGINT: rows kept as each ends).
set -u
GPU_LIST=$1; STOP=$2; CPU_LIST=${3:-}
ROOT=$PWD; M=$OUT/m; mkdir -p $M
export CASEBOOK_BUG_CACHE=$ROOT/.bugcache
for s in pre post; do mkdir -p /tmp/$s && tar xzf shared/spine/$s.tgz -C /tmp/$s; rm -rf /tmp/$s/docs/bugs/rows/*; done
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c "import torch, triton, numpy; print('torch', torch.__version__, 'triton', triton.__version__, 'numpy', numpy.__version__, 'cuda', torch.version.cuda)"; } > $M/env.txt 2>&1
gpu_side() {  # side gpu cores
  (cd /tmp/$1 && CUDA_VISIBLE_DEVICES=$2 timeout -s INT $STOP taskset -c $3 python3 -m harness bugs \
     --backend gpu+interpreter --record --jobs 2 --peers "" $(cat $ROOT/$GPU_LIST)) > $M/gpu-$1.log 2>&1
  echo "exit $?" >> $M/gpu-$1.log
}
cpu_shard() {  # cores entries...
  local c=$1; shift
  for e in "$@"; do for s in pre post; do
    (cd /tmp/$s && CUDA_VISIBLE_DEVICES= taskset -c $c timeout 400 python3 -m harness bugs --backend interpreter \
       --record --jobs 1 --timeout 60 --peers "" $e) >> $M/cpu-$s.log 2>&1; echo "$e $s exit $? $(date -u +%T)" >> $M/cpu-order.log
  done; done
}
[ -n "$GPU_LIST" ] && { gpu_side pre 0 0-11 & gpu_side post 1 12-23 & }
if [ -n "$CPU_LIST" ]; then
  mapfile -t C < $CPU_LIST; n=${#C[@]}
  for i in 0 1 2 3; do sh=(); for ((j=i; j<n; j+=4)); do sh+=("${C[$j]}"); done
    [ ${#sh[@]} -gt 0 ] && cpu_shard $((24+2*i)),$((25+2*i)) "${sh[@]}" &
  done
fi
wait
tar czf $M/m.tgz -C /tmp pre/docs/bugs/rows post/docs/bugs/rows
tail -4 $M/gpu-pre.log $M/gpu-post.log 2>/dev/null; cat $M/cpu-order.log 2>/dev/null; cat $M/env.txt
