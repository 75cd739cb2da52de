#!/usr/bin/env bash
# The main job on the data shipped with the repository: train a compact
# KPCRank ranker of red wines by taster score on 75 % of the wines
# (hyperparameters by 5-fold CV; 64 landmark wines chosen by pivoted
# Cholesky, --basis 64), write it as a .rkl model, export it for a device (a
# metadata-free copy and a C array for firmware), then score and evaluate
# the held-out 25 % through the same validated parser a device uses.
set -euo pipefail
cd "$(dirname "$0")/.."
# One build for the demo and the tests: the `test` profile (optimised,
# debug assertions on) and every target, so that `cargo test --workspace`
# afterwards compiles nothing but doc tests. Building only the binary
# (`-p ranklet --bin ranklet`) would show the demo sooner but cost more in
# all: on a fresh clone it took 395 CPU-seconds against 603 for this build,
# and `cargo test --workspace` after it then compiled for at least 337 more
# (368 with part of the test run, which takes 31 in all) instead of none,
# because the tests' dev-dependencies change the features of shared
# dependencies (faer, gemm, pulp and everything above them compile again).
# A release build here would compile the whole dependency tree a second
# time. (README.md gives the dates and loads of these figures.)
build=(cargo build --profile test --workspace --all-targets)
R="${CARGO_TARGET_DIR:-target}/debug/ranklet"
t0=$(date +%s)
if [ -x "$R" ]; then
    echo "demo: bringing the build up to date (${build[*]}): seconds if nothing changed" >&2
else
    echo "demo: first build (${build[*]}): ranklet and every test, optimised;" \
        "about 600 CPU-seconds, 5–7 min on 2 idle cores (longer on a busy machine);" \
        "cargo's progress follows" >&2
fi
# cargo draws a progress bar on a terminal; in a log (stderr not a terminal)
# it prints a line per crate and then nothing while the last, largest crates
# compile, so say every 30 s that the build is still going.
ticker=
if [ ! -t 2 ]; then
    (while sleep 30; do echo "demo: still building ($(($(date +%s) - t0)) s)" >&2; done) &
    ticker=$!
    trap 'kill "$ticker" 2>/dev/null || true' EXIT
fi
"${build[@]}"
if [ -n "$ticker" ]; then
    kill "$ticker" 2>/dev/null || true
    trap - EXIT
fi
echo "demo: build done in $(($(date +%s) - t0)) s; training and scoring take a few seconds" >&2
out=target/demo
mkdir -p "$out"
data=data/wine-quality/winequality_red.csv
# A seeded 75/25 split: model selection sees only the training wines.
bash scripts/holdout-split.sh "$data" "$out/wine_train.csv" "$out/wine_test.csv" 1 0.25

"$R" train --algo kpcrank --kernel rbf:0.02,0.05,0.1 --components 5,10,20,40 --cv 5 --basis 64 \
    --standardize --data "$out/wine_train.csv" --label-col quality -o "$out/wine.rkl"
"$R" inspect -m "$out/wine.rkl" | head -12
"$R" export -m "$out/wine.rkl" --strip-metadata -o "$out/wine.device.rkl"
"$R" export -m "$out/wine.device.rkl" --c-array wine_model -o "$out/wine_model.c"
echo "device copy: $(wc -c < "$out/wine.device.rkl") bytes; C array in $out/wine_model.c and .h"
"$R" score -m "$out/wine.device.rkl" --data "$out/wine_test.csv" --label-col quality > "$out/wine.scores"
echo "scored $(wc -l < "$out/wine.scores") held-out wines; first five scores:"
head -5 "$out/wine.scores"
echo "held-out quality (wines not used for training or model selection):"
"$R" eval -m "$out/wine.device.rkl" --data "$out/wine_test.csv" --label-col quality \
    --metric disagreement,cindex,kendall,spearman,ndcg@10
