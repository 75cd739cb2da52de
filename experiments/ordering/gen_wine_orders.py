#!/usr/bin/env python3
"""Sample orders over the red wines of the wine-quality data (003 §4.2 design).

Usage: gen_wine_orders.py CSV OUTDIR N L FOLDS SEED

- Items: every wine is an object `w<row>` (row = 1-based data row), its 11
  physico-chemical attributes standardised to mean 0, sd 1 over all 1599
  wines (the attributes have very different units; RCDR and PCA are not
  scale invariant). `quality` is not an attribute.
- Orders: N orders of L distinct wines drawn uniformly at random, sorted by
  taster score (quality, descending). Ties (same quality) are ordered
  uniformly at random: each tied group gets a fresh random permutation.
- The N orders are split into FOLDS folds (order i goes to fold i mod FOLDS
  after a random shuffle); OUTDIR/train_F.txt holds the orders outside fold F,
  OUTDIR/test_F.txt the orders of fold F.
"""
import csv
import os
import sys

import numpy as np


def main():
    src, out, N, L, folds, seed = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
    with open(src) as f:
        rows = list(csv.reader(f))
    header, data = rows[0], np.array(rows[1:], dtype=float)
    X, q = data[:, :-1], data[:, -1]
    X = (X - X.mean(0)) / X.std(0)
    os.makedirs(out, exist_ok=True)
    items = os.path.join(out, "items.csv")
    if not os.path.exists(items):
        with open(items, "w") as f:
            f.write("id," + ",".join(h.replace(" ", "_") for h in header[:-1]) + "\n")
            for j, r in enumerate(X):
                f.write(f"w{j + 1}," + ",".join(repr(float(v)) for v in r) + "\n")
    rng = np.random.default_rng(seed)
    orders = []
    for _ in range(N):
        o = rng.choice(len(X), L, replace=False)
        tie = rng.permutation(L)  # random order inside ties
        orders.append(o[np.lexsort((tie, -q[o]))])
    fold = rng.permutation(N) % folds
    for F in range(folds):
        for name, sel in (("train", fold != F), ("test", fold == F)):
            with open(os.path.join(out, f"{name}_{F}.txt"), "w") as f:
                for o, s in zip(orders, sel):
                    if s:
                        f.write(" ".join(f"w{j + 1}" for j in o) + "\n")


if __name__ == "__main__":
    main()
