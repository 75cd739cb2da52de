#!/usr/bin/env bash
# Deterministic held-out split of a CSV file with a header line:
#   bash scripts/holdout-split.sh IN.csv TRAIN.csv TEST.csv [SEED=1] [FRACTION=0.25]
# Data row i (1-based, after the header) goes to TEST when
# frac((i + SEED)·2654435761 / 2³²) < FRACTION (Knuth's multiplicative hash:
# a fixed, well-spread pseudo-random choice), to TRAIN otherwise; both files
# keep the header. Every product is an integer below 2⁵³, so any awk gives
# the same split.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 IN.csv TRAIN.csv TEST.csv [SEED] [FRACTION]" >&2; exit 2; }
in=$1 train=$2 test=$3 seed=${4:-1} frac=${5:-0.25}
awk -v seed="$seed" -v frac="$frac" -v train="$train.tmp" -v test="$test.tmp" '
    NR == 1 { print > train; print > test; next }
    { h = ((NR - 1 + seed) * 2654435761) % 4294967296
      if (h / 4294967296 < frac) print > test; else print > train }
' "$in"
mv "$train.tmp" "$train"
mv "$test.tmp" "$test"
