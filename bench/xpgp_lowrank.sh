#!/usr/bin/env bash
# The low-rank XPGP at scale (`train --algo xpgp --basis M --relation-rank K`)
# on the synthetic setup of bench/pref_sparse.sh (d = 5 features uniform in
# [0, 1), winner by Σ sin(2πx_k) plus per-item noise; bench/pref_sparse_data.py)
# with a k-nearest-neighbour relation over the items
# (bench/xpgp_knn_relation.py): held-out pair error, wall time, peak memory
# (/usr/bin/time -v) and the load average before and after, beside
# pref-gp --basis M (the attributes alone) on the same data. Prints a
# Markdown table; docs/performance.md quotes it (not rewritten).
#
#   N=10000 P=20000 BASIS=200 RANK=100 bash bench/xpgp_lowrank.sh
#
# Env: N (10000), P (20000 training judgements), T (10000 held out),
#      BASIS (200), RANK (100), KNN (10), DATA (/tmp/xpgp-lowrank-N),
#      BUILD (1: cargo build --release -p ranklet first), R (the binary).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-10000}
P=${P:-20000}
T=${T:-10000}
BASIS=${BASIS:-200}
RANK=${RANK:-100}
KNN=${KNN:-10}
DATA=${DATA:-/tmp/xpgp-lowrank-$N}
BUILD=${BUILD:-1}
[ "$BUILD" = 1 ] && cargo build --release -p ranklet >&2
R=${R:-"${CARGO_TARGET_DIR:-target}/release/ranklet"}
mkdir -p "$DATA"
[ -f "$DATA/items.csv" ] || python3 bench/pref_sparse_data.py "$DATA" "$N" "$P" "$T"
[ -f "$DATA/knn.rel" ] || python3 bench/xpgp_knn_relation.py "$DATA" "$KNN"

run() { # label, algo, then train flags
    local label=$1 algo=$2
    shift 2
    local l0 l1 t kb err
    l0=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -v -o "$DATA/$label.time" "$R" train --algo "$algo" --items "$DATA/items.csv" \
        --prefs "$DATA/train.txt" -o "$DATA/$label.rkl" "$@" 2> "$DATA/$label.err"
    l1=$(cut -d' ' -f1 /proc/loadavg)
    t=$(grep 'Elapsed (wall clock)' "$DATA/$label.time" | awk '{print $NF}')
    kb=$(grep 'Maximum resident set size' "$DATA/$label.time" | awk '{print $NF}')
    err=$("$R" eval -m "$DATA/$label.rkl" --items "$DATA/items.csv" --prefs "$DATA/test.txt" --metric pairerror |
        awk '{print $2}')
    echo "| $label | $err | $t | $((kb / 1024)) | $(stat -c %s "$DATA/$label.rkl") | $l0 → $l1 | $(tail -n 2 "$DATA/$label.err" | head -n 1) |"
}
echo "| model | held-out pair error | wall (m:ss) | peak MB | model bytes | load 1-min before → after | summary |"
echo "|---|---:|---:|---:|---:|---|---|"
run "xpgp-M$BASIS-K$RANK" xpgp --relation "$DATA/knn.rel" --basis "$BASIS" --relation-rank "$RANK"
run "pref-gp-M$BASIS" pref-gp --basis "$BASIS"
