#!/bin/bash
# Session 23's GPU board runs: session 20's script, unchanged (its header says what it does and writes).
exec bash "$(dirname "$0")/../boards-session20/run.sh" "$@"
