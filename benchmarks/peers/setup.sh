#!/usr/bin/env bash
# The peer tools of the real-bug scoreboard (harness/bugs/peers.py), each in a virtual
# environment of its own under ${XDG_CACHE_HOME:-~/.cache}/triton-casebook-peers/<tool>:
#
#   ttsem       PyPI ttsem 0.1.0 with its [triton] extra (torch 2.14.0, triton 3.8.0) on Python >= 3.12.
#               torch 2.14.0 from PyPI is the CUDA build with its nvidia-* wheels: several GiB.
#   triton-viz  PyPI triton-viz 3.0 over this python's torch and triton (--system-site-packages).
#   gpucheck    PyPI gpucheck 0.1.0 (+ hypothesis) over this python's torch and triton (--system-site-packages).
#
# Usage: benchmarks/peers/setup.sh [ttsem] [triton-viz] [gpucheck]     (all three by default)
# Environment: PEERS_PYTHON (the python of the triton-viz and gpucheck venvs; default: python3 on PATH),
#              PEERS_PYTHON312 (a python >= 3.12 for ttsem; default: python3.12 on PATH or pyenv's 3.12.x).
# The adapters find the venvs at the same place (harness/bugs/peer_*.py); a missing venv is a
# "could not run" row on the scoreboard, never a quiet one.
set -euo pipefail

ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/triton-casebook-peers"
BASE_PY="${PEERS_PYTHON:-$(command -v python3)}"
mkdir -p "$ROOT"

find_py312() {
    if [[ -n "${PEERS_PYTHON312:-}" ]]; then echo "$PEERS_PYTHON312"; return; fi
    for c in python3.13 python3.12; do
        p="$(command -v "$c" 2>/dev/null || true)"
        if [[ -n "$p" ]] && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then echo "$p"; return; fi
    done
    for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12.*/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13.*/bin/python3; do
        [[ -x "$p" ]] && { echo "$p"; return; }
    done
    echo "setup.sh: ttsem needs Python >= 3.12 (set PEERS_PYTHON312)" >&2
    return 1
}

fresh_venv() {  # fresh_venv NAME PYTHON [--system-site-packages]
    local dir="$ROOT/$1"
    rm -rf "$dir.new"
    "$2" -m venv ${3:-} "$dir.new"
    "$dir.new/bin/python" -m pip install --quiet --upgrade pip >/dev/null
    echo "$dir.new"
}

done_venv() {  # done_venv NAME: the venv takes its place only when its install finished
    local dir="$ROOT/$1"
    rm -rf "$dir"
    mv "$dir.new" "$dir"
    # venv scripts name their folder: rewrite the shebangs and activate scripts for the final path
    grep -rlI --null "$dir.new" "$dir/bin" | xargs -0 -r sed -i "s#$dir.new#$dir#g"
    echo "$1: $(du -sh "$dir" | cut -f1) in $dir"
}

setup_ttsem() {
    local py v
    py="$(find_py312)"
    v="$(fresh_venv ttsem "$py")"
    "$v/bin/python" -m pip install --quiet 'ttsem[triton]==0.1.0'
    "$v/bin/python" -c 'import ttsem, torch, triton; print("ttsem", torch.__version__, triton.__version__)'
    done_venv ttsem
}

setup_viz() {
    local v
    v="$(fresh_venv triton-viz "$BASE_PY" --system-site-packages)"
    # over the base python's torch and triton (pinned, so pip does not replace them)
    "$v/bin/python" -m pip install --quiet 'triton-viz==3.0' \
        "triton==$("$BASE_PY" -c 'import triton; print(triton.__version__)')"
    "$v/bin/python" -c 'import triton_viz, triton; from triton_viz.clients import Sanitizer; print("triton-viz ok, triton", triton.__version__)'
    done_venv triton-viz
}

setup_gpucheck() {
    local v
    v="$(fresh_venv gpucheck "$BASE_PY" --system-site-packages)"
    "$v/bin/python" -m pip install --quiet 'gpucheck[hypothesis]==0.1.0' \
        "triton==$("$BASE_PY" -c 'import triton; print(triton.__version__)')"
    "$v/bin/python" -c 'import gpucheck, torch, triton; print("gpucheck ok, torch", torch.__version__, "triton", triton.__version__)'
    done_venv gpucheck
}

tools=("$@")
[[ ${#tools[@]} -eq 0 ]] && tools=(ttsem triton-viz gpucheck)
for t in "${tools[@]}"; do
    case "$t" in
        ttsem) setup_ttsem ;;
        triton-viz) setup_viz ;;
        gpucheck) setup_gpucheck ;;
        *) echo "setup.sh: no peer tool '$t' (ttsem, triton-viz, gpucheck)" >&2; exit 2 ;;
    esac
done
