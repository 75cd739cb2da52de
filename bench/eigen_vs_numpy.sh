#!/usr/bin/env bash
# Times ranklet's symmetric eigensolvers (faer and portable backends; full and
# top-k for k = 10, 50) against numpy.linalg.eigh / scipy.linalg.eigh on the
# same RBF kernel matrix at n = 250, 500, 1000, 2000, in one run, prints the
# table and writes it into docs/performance.md ("Symmetric eigendecomposition").
#
# Usage: bench/eigen_vs_numpy.sh [REPEAT]      (default REPEAT = 5)
# Env:   SIZES="250 500 1000 2000"  TOPS="10 50"
#        PORTABLE_REPEAT_2000 (default: REPEAT) — repeats of the slow portable
#        full decomposition at n = 2000.
set -euo pipefail

cd "$(dirname "$0")/.."
REPEAT="${1:-5}"
SIZES="${SIZES:-250 500 1000 2000}"
TOPS="${TOPS:-10 50}"
PORTABLE_REPEAT_2000="${PORTABLE_REPEAT_2000:-$REPEAT}"
PY="${PYTHON:-python3}"

if ! "$PY" -c 'import numpy, scipy' 2>/dev/null; then
    echo "installing numpy and scipy with pip" >&2
    "$PY" -m pip install --quiet numpy scipy
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release -p ranklet >&2
RANKLET="$CARGO_TARGET_DIR/release/ranklet"

LOAD_START="$(cut -d" " -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
RESULTS="$(mktemp)"
trap 'rm -f "$RESULTS"' EXIT

for n in $SIZES; do
    for top in 0 $TOPS; do
        [ "$top" -le "$n" ] || continue
        for backend in faer portable; do
            r="$REPEAT"
            if [ "$backend" = portable ] && [ "$top" = 0 ] && [ "$n" -ge 2000 ]; then
                r="$PORTABLE_REPEAT_2000"
            fi
            "$RANKLET" bench eigen --n "$n" --backend "$backend" --top "$top" --repeat "$r" --seed 42 | tee -a "$RESULTS" >&2
        done
        "$PY" bench/eigen_numpy.py time --n "$n" --top "$top" --repeat "$REPEAT" --seed 42 | tee -a "$RESULTS" >&2
    done
done

"$PY" bench/eigen_numpy.py report --results "$RESULTS" --out docs/performance.md --load-start "$LOAD_START" \
    --cmd "bench/eigen_vs_numpy.sh $REPEAT (SIZES=\"$SIZES\" TOPS=\"$TOPS\" PORTABLE_REPEAT_2000=$PORTABLE_REPEAT_2000)"
