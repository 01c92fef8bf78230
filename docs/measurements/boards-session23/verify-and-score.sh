#!/bin/bash
# Session 23's first GPU run of new first-run entries: session 22's script, unchanged (verify --record, then the board).
exec bash "$(dirname "$0")/../boards-session22/verify-and-score.sh" "$@"
