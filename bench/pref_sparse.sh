#!/usr/bin/env bash
# Sparse EP (`train --algo pref-gp --basis M`) against the dense preference
# GP on the synthetic setup of bench/pref_vs_numpy.sh (d = 5 features
# uniform in [0, 1), winner by Σ sin(2πx_k) plus per-item noise; data by
# bench/pref_sparse_data.py), hyperparameters fitted by each model's own
# evidence (`rbf:auto`): held-out pair error, wall time and peak memory
# (/usr/bin/time -v), and the load average before and after each run.
# Prints a Markdown table; docs/performance.md quotes it (not rewritten).
#
#   bash bench/pref_sparse.sh                # n = 2 000, 10 000 prefs, M = 200, dense too
#   N=100000 P=200000 BASIS=256 DENSE=0 bash bench/pref_sparse.sh   # the scale run
#
# Env: N (2000), P (10000 training judgements), T (10000 held out),
#      BASIS (200), DENSE (1), DATA (/tmp/pref-sparse-N), BUILD (1).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-2000}
P=${P:-10000}
T=${T:-10000}
BASIS=${BASIS:-200}
DENSE=${DENSE:-1}
DATA=${DATA:-/tmp/pref-sparse-$N}
BUILD=${BUILD:-1}
[ "$BUILD" = 1 ] && cargo build --release -p ranklet >&2
R="${CARGO_TARGET_DIR:-target}/release/ranklet"
mkdir -p "$DATA"
[ -f "$DATA/items.csv" ] || python3 bench/pref_sparse_data.py "$DATA" "$N" "$P" "$T"

run() { # label, then train flags
    local label=$1
    shift
    local l0 l1 t
    l0=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v -o "$DATA/$label.time" "$R" train --algo pref-gp --items "$DATA/items.csv" \
        --prefs "$DATA/train.txt" -o "$DATA/$label.rkl" "$@" 2> "$DATA/$label.err"
    l1=$(cut -d' ' -f1 /proc/loadavg)
    t=$(grep 'Elapsed (wall clock)' "$DATA/$label.time" | awk '{print $NF}')
    local kb
    kb=$(grep 'Maximum resident set size' "$DATA/$label.time" | awk '{print $NF}')
    local err
    err=$("$R" eval -m "$DATA/$label.rkl" --items "$DATA/items.csv" --prefs "$DATA/test.txt" --metric pairerror |
        awk '{print $2}')
    echo "| $label | $err | $t | $((kb / 1024)) | $l0 → $l1 | $(tail -n 2 "$DATA/$label.err" | head -n 1) |"
}
echo "| model | held-out pair error | wall (m:ss) | peak MB | load 1-min before → after | summary |"
echo "|---|---:|---:|---:|---|---|"
run "sparse-M$BASIS" --basis "$BASIS"
[ "$DENSE" = 1 ] && run dense --inductive
true
