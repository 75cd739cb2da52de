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
#
#        bench/eigen_vs_numpy.sh topk [REPEAT]
# times the top-k solver (faer backend) against scipy.sparse.linalg.eigsh
# (ARPACK) instead, side by side for each case, n, k and thread count, with
# both residuals, and writes the section "Top-k eigenpairs vs ARPACK":
# Env:   TOPK_SIZES="2000 3000"  TOPS="10 50"  THREADS="1 2"
#        CASES="hard easy"  (hard: --dim 20 --gamma 0.025 --dist normal;
#        easy: --dim 10 --gamma 0.1 --dist uniform)  TOPK_TOLS="2e-15 0"
# Run it alone: flock /work/bench.lock bench/eigen_vs_numpy.sh topk 5
set -euo pipefail

cd "$(dirname "$0")/.."
MODE=full
if [ "${1:-}" = topk ]; then
    MODE=topk
    shift
fi
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

if [ "$MODE" = topk ]; then
    TOPK_SIZES="${TOPK_SIZES:-2000 3000}"
    THREADS="${THREADS:-1 2}"
    CASES="${CASES:-hard easy}"
    # ranklet's residual tolerances: 2e-15 gives about eigsh's residual
    # (ARPACK's default tol is machine precision relative to each Ritz
    # value); 0 is ranklet's default, 1000·ε relative to ‖A‖.
    TOPK_TOLS="${TOPK_TOLS:-2e-15 0}"
    for c in $CASES; do
        case "$c" in
            hard) spec="--dim 20 --gamma 0.025 --dist normal" ;;
            easy) spec="--dim 10 --gamma 0.1 --dist uniform" ;;
            *) echo "unknown case $c" >&2; exit 2 ;;
        esac
        for n in $TOPK_SIZES; do
            for top in $TOPS; do
                for t in $THREADS; do
                    # shellcheck disable=SC2086
                    for tol in $TOPK_TOLS; do
                        RAYON_NUM_THREADS=$t "$RANKLET" bench eigen --n "$n" --backend faer --top "$top" \
                            --repeat "$REPEAT" --seed 42 --tol "$tol" $spec | tee -a "$RESULTS" >&2
                    done
                    # shellcheck disable=SC2086
                    OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t "$PY" bench/eigen_numpy.py time --solver eigsh \
                        --n "$n" --top "$top" --repeat "$REPEAT" --seed 42 $spec | tee -a "$RESULTS" >&2
                done
            done
        done
    done
    "$PY" bench/eigen_numpy.py report-topk --results "$RESULTS" --out docs/performance.md \
        --load-start "$LOAD_START" \
        --cmd "flock /work/bench.lock bench/eigen_vs_numpy.sh topk $REPEAT (TOPK_SIZES=\"$TOPK_SIZES\" TOPS=\"$TOPS\" THREADS=\"$THREADS\" CASES=\"$CASES\" TOPK_TOLS=\"$TOPK_TOLS\")"
    exit 0
fi

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
