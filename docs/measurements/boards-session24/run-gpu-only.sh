#!/bin/bash
# Session 24: the GPU-only board (--backend gpu: the GPU's detectors alone) with session 20's script (its header says
# what it does and writes; the rows it packs are docs/bugs/rows/gpu/'s).
BACKEND=gpu exec bash "$(dirname "$0")/../boards-session20/run.sh" "$@"
