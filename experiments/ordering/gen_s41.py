#!/usr/bin/env python3
"""003 §4.1 data: w* = [1, 1, 0.5, 0, 0], 1000 objects, attributes 1-4 N(0,1),
attribute 5 = attribute 4, 300 orders of 5 objects sorted by descending w*.x.

Usage: gen_s41.py OUTDIR SEED  (writes OUTDIR/items.csv, OUTDIR/orders.txt)
Seed 20060101 gives exactly core/tests/fixtures/order/s41_*.
"""
import os
import sys

import numpy as np

out, seed = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(seed)
X = rng.standard_normal((1000, 5))
X[:, 4] = X[:, 3]
wstar = np.array([1, 1, 0.5, 0, 0])
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "orders.txt"), "w") as f:
    for _ in range(300):
        o = rng.choice(1000, 5, replace=False)
        o = o[np.argsort(-(X[o] @ wstar), kind="stable")]
        f.write(" ".join(f"o{j}" for j in o) + "\n")
with open(os.path.join(out, "items.csv"), "w") as f:
    f.write("id,a1,a2,a3,a4,a5\n")
    for j, r in enumerate(X):
        f.write(f"o{j}," + ",".join(repr(float(v)) for v in r) + "\n")
