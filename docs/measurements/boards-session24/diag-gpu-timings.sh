export CASEBOOK_BUG_CACHE=$PWD/.bugcache
export CASEBOOK_TIMINGS=$OUT/timings.jsonl
for spec in "vllm-prefix-prefill-kcache-x-hardcoded-8 fixed" "gemlite-gemv-revsplitk-n-tail-unmasked buggy" "te-permute-int32-row-offset-overflow buggy"; do
  set -- $spec
  echo "== $1 $2"
  python3 - "$1" "$2" <<'PY' 2>&1 | tail -40
import sys, time, json
from pathlib import Path
from harness.bugs.manifest import read
from harness.bugs.board import probe_variant
e = read(Path("bugs") / sys.argv[1])
t = time.monotonic(); t_wall = time.time()
print("start wall", round(t_wall, 2))
row = probe_variant(e, sys.argv[2], "gpu+interpreter", jobs=2)
p = row.get("probe", row)
print("wall", round(time.monotonic() - t, 1), "seconds", p.get("seconds"), p.get("codes"))
for x in p.get("ran", []):
    if not x["status"].startswith("skipped: opt-in"):
        print("  ", x["backend"], x["detector"], x["status"][:50], x["seconds"])
PY
done
python3 -c "import numpy; print('numpy', numpy.__version__)"
