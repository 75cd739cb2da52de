#!/usr/bin/env bash
# Compact kernel models: the demo's KPCRank RBF wine ranker
# (scripts/demo.sh: --standardize, 5-fold CV over rbf:0.02,0.05,0.1 ×
# p = 5,10,20,40) trained on all training rows and on m = 32, 64, 128
# landmarks (--basis), on three seeded 75/25 splits (scripts/holdout-split.sh);
# held-out disagreement of the device copy (ranklet export --strip-metadata)
# and its bytes. Rewrites the 'compact-wine' section of docs/performance.md.
#   experiments/compact_wine.sh [--out DIR]     (SKIP_BUILD=1 to reuse a build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
out=/tmp/ranklet-exp/compact_wine
[ "${1:-}" = --out ] && out=$2
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -p ranklet --manifest-path "$root/Cargo.toml"
R="${RANKLET_BIN:-$CARGO_TARGET_DIR/release/ranklet}"
mkdir -p "$out"
t0=$(date +%s)
grid=(--algo kpcrank --kernel rbf:0.02,0.05,0.1 --components 5,10,20,40 --cv 5 --standardize --label-col quality)
rows=""
summary=""
declare -A sum
for seed in 1 2 3; do
    bash "$root/scripts/holdout-split.sh" "$root/data/wine-quality/winequality_red.csv" \
        "$out/train$seed.csv" "$out/test$seed.csv" "$seed" 0.25
    ntr=$(($(wc -l < "$out/train$seed.csv") - 1))
    nte=$(($(wc -l < "$out/test$seed.csv") - 1))
    for m in full 128 64 32; do
        extra=()
        [ "$m" = full ] || extra=(--basis "$m")
        tag="${seed}_$m"
        s=$(date +%s.%N)
        "$R" train "${grid[@]}" "${extra[@]}" --data "$out/train$seed.csv" -o "$out/wine_$tag.rkl" \
            > "$out/cv_$tag.txt" 2> "$out/train_$tag.log"
        e=$(date +%s.%N)
        "$R" export -m "$out/wine_$tag.rkl" --strip-metadata -o "$out/wine_$tag.device.rkl"
        bytes=$(wc -c < "$out/wine_$tag.device.rkl")
        ev() { "$R" eval -m "$out/wine_$tag.device.rkl" --data "$1" --label-col quality --metric disagreement | cut -f2; }
        held=$(ev "$out/test$seed.csv")
        train_dis=$(ev "$out/train$seed.csv")
        chosen=$(sed -n 's/^chosen: //p' "$out/train_$tag.log")
        used=$("$R" inspect -m "$out/wine_$tag.rkl" | sed -n 's/^basis_rows: //p')
        [ -n "$used" ] || used=$ntr
        secs=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')
        [ "$m" = full ] && full_held=$held
        diff=$(awk -v a="$held" -v b="$full_held" 'BEGIN { printf "%+.4f", a - b }')
        sum[$m]=$(awk -v a="${sum[$m]:-0}" -v b="$held" 'BEGIN { printf "%.6f", a + b / 3 }')
        echo "seed $seed, $m: $used basis rows, $bytes bytes, held-out disagreement $held ($diff vs full; training $train_dis), $chosen, train ${secs}s" >&2
        rows+="| $seed ($ntr / $nte) | $m | $used | $chosen | $held | $diff | $train_dis | $bytes | $secs |"$'\n'
    done
done
for m in full 128 64 32; do
    summary+="| $m | ${sum[$m]} | $(awk -v a="${sum[$m]}" -v b="${sum[full]}" 'BEGIN { printf "%+.4f", a - b }') |"$'\n'
done
load=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
section=$(cat <<MD
<!-- BEGIN compact-wine -->
## Compact kernel models: the wine ranker on m landmarks (\`--basis\`)

The demo's KPCRank RBF ranker of red wines (\`--standardize\`, 5-fold CV over
\`rbf:0.02,0.05,0.1\` × p = 5, 10, 20, 40, chosen inside each setting) trained on
75 % of the wines and evaluated on the other 25 % (seeded splits
\`scripts/holdout-split.sh IN TRAIN TEST SEED 0.25\`, seeds 1–3; the demo uses
seed 1): with all training rows as its basis (full) and with at most m
landmarks chosen by pivoted Cholesky (\`--basis m\`, chosen inside each CV
fold from the fold's training rows). Disagreement is the fraction of
mis-ordered pairs of wines of different quality (lower is better), of the
device copy (\`ranklet export --strip-metadata\`, f32) scored through the
device parser; bytes are that copy's size. "train s" is the whole
\`ranklet train\` command (CV and final fit), one run each. A reduced learner
costs n + n·m kernel evaluations and O(n·m²) flops for the landmarks and their
features (pivoted Cholesky, \`core/src/learn/nystrom.rs\`), O(n·m² + m³) for
KPC on them, and n·m + n numbers of memory, against n² kernel evaluations, an
n × n matrix and its eigen- or Cholesky decomposition for the full learner;
scoring a row costs m instead of n kernel evaluations.

| split (train / test) | basis | rows | chosen by CV | held-out disagreement | vs full | training-set disagreement | device bytes | train s |
|---|---|---|---|---|---|---|---|---|
${rows%$'\n'}

Mean over the three splits:

| basis | held-out disagreement | vs full |
|---|---|---|
${summary%$'\n'}

Produced by \`experiments/compact_wine.sh\`${RANKLET_BIN:+ with \`RANKLET_BIN=$RANKLET_BIN\`} on $(date -u '+%Y-%m-%d %H:%M') (UTC), wall time $(( $(date +%s) - t0 )) s,
load average $load, at commit $commit (plus uncommitted work tree, if any).
<!-- END compact-wine -->
MD
)
SECTION="$section" python3 - "$root/docs/performance.md" <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path).read()
sec = os.environ["SECTION"]
pat = re.compile(r"<!-- BEGIN compact-wine -->.*?<!-- END compact-wine -->", re.S)
text = pat.sub(lambda _: sec, text) if pat.search(text) else text.rstrip("\n") + "\n\n" + sec + "\n"
open(path, "w").write(text)
PY
echo "docs/performance.md: section compact-wine rewritten" >&2
