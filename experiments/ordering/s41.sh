#!/usr/bin/env bash
# 003 §4.1 / Table 2: first and second vectors and ‖R‖/N of Kendall RCDR,
# Spearman RCDR and PCA on the synthetic data (w* = [1, 1, 0.5, 0, 0],
# attribute 5 = attribute 4, 1000 objects, 300 orders of 5), then the same
# ‖R‖/N over 20 seeds (is the paper's last column ‖R‖/N?).
# Usage: experiments/ordering/s41.sh   (from the repository root; needs python3 + numpy)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q --release -p ranklet
R=${CARGO_TARGET_DIR:-target}/release/ranklet
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
OUT=experiments/ordering/out; mkdir -p "$OUT"
python3 experiments/ordering/gen_s41.py "$T/main" 20060101
for m in rcdr-kendall rcdr-spearman pca; do
  $R reduce --method $m --items "$T/main/items.csv" --orders "$T/main/orders.txt" --dims 2 -o "$OUT/s41_$m.tsv" 2>/dev/null
  echo "== $m (seed 20060101): importance, w1..w5"; grep -v '^#' "$OUT/s41_$m.tsv"
done
echo "== importance of the first and second component over 20 seeds (mean, sd, min, max)"
for s in $(seq 1 20); do
  python3 experiments/ordering/gen_s41.py "$T/s$s" $s
  for m in rcdr-kendall rcdr-spearman pca; do
    $R reduce --method $m --items "$T/s$s/items.csv" --orders "$T/s$s/orders.txt" --dims 2 -o "$T/s$s/$m.tsv" 2>/dev/null
    grep -v '^#' "$T/s$s/$m.tsv" | cut -f1 | paste -s | sed "s/^/$m\t/"
  done
done > "$OUT/s41_seeds.tsv"
python3 - "$OUT/s41_seeds.tsv" <<'PY'
import sys, numpy as np
rows = [l.split('\t') for l in open(sys.argv[1]).read().split('\n') if l]
for m in ("rcdr-kendall", "rcdr-spearman", "pca"):
    v = np.array([[float(a), float(b)] for mm, a, b in rows if mm == m])
    for c in (0, 1):
        print(f"{m}\tcomponent {c+1}\tmean {v[:,c].mean():.4f}\tsd {v[:,c].std(ddof=1):.4f}\tmin {v[:,c].min():.4f}\tmax {v[:,c].max():.4f}")
PY
