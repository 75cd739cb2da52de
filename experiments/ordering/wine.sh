#!/usr/bin/env bash
# 003 §4.2 / Fig. 4 design on the red wine-quality data: mean Spearman ρ on
# held-out orders of ERR (λ = LAMBDA) on the original attributes (ORIG) and
# on K′ = 1..11 dimensions from Kendall RCDR, Spearman RCDR and PCA, for three
# (N, L) settings, 5-fold cross-validation over orders, REPS repetitions with
# different samples of orders. Writes out/wine_rho.tsv, out/wine_summary.tsv
# and out/wine_rho.png (matplotlib, plot_wine.py).
# Usage: experiments/ordering/wine.sh   (from the repository root; needs python3 + numpy + matplotlib)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q --release -p ranklet
R=${CARGO_TARGET_DIR:-target}/release/ranklet
CSV=${WINE_CSV:-/work/shared/data/wine-quality/winequality_red.csv}
LAMBDA=${LAMBDA:-1}
REPS=${REPS:-2}
FOLDS=5
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
OUT=experiments/ordering/out; mkdir -p "$OUT"
RES="$OUT/wine_rho.tsv"
echo -e "setting\tN\tL\trep\tfold\tmethod\tK\trho" > "$RES"
for setting in "a 50 3" "b 200 5" "c 1000 10"; do
  set -- $setting; S=$1; N=$2; L=$3
  for rep in $(seq 1 $REPS); do
    D="$T/$S$rep"
    python3 experiments/ordering/gen_wine_orders.py "$CSV" "$D" $N $L $FOLDS $((1000 * rep + N + L))
    for f in $(seq 0 $((FOLDS - 1))); do
      run() { # method K reduce-flag...
        local m=$1 k=$2; shift 2
        if $R train --algo err --lambda $LAMBDA --items "$D/items.csv" --orders "$D/train_$f.txt" "$@" -o "$D/m.rkl" 2>"$D/err.log"; then
          rho=$($R eval -m "$D/m.rkl" --items "$D/items.csv" --orders "$D/test_$f.txt" --metric spearman | cut -f2)
        else rho=NA; sed "s/^/# $S $rep $f $m $k: /" "$D/err.log" >&2; fi
        echo -e "$S\t$N\t$L\t$rep\t$f\t$m\t$k\t$rho" >> "$RES"
      }
      run ORIG 11
      for k in $(seq 1 11); do
        run KRCDR $k --reduce rcdr-kendall:$k
        run SRCDR $k --reduce rcdr-spearman:$k
        run PCA $k --reduce pca:$k
      done
    done
  done
done
python3 experiments/ordering/plot_wine.py "$RES" "$OUT/wine_summary.tsv" "$OUT/wine_rho.png"
cat "$OUT/wine_summary.tsv"
