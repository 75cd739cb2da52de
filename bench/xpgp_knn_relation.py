"""A k-nearest-neighbour relation over the items of bench/pref_sparse_data.py
for bench/xpgp_lowrank.sh: each item linked to its K nearest items
(Euclidean, in blocks of rows, no n × n matrix held), weight
exp(−‖x_i − x_j‖²/h²) with h the median neighbour distance, symmetrised
(an edge listed once, the larger weight). Written as `--relation` lines
`id id weight`.

    python3 bench/xpgp_knn_relation.py DIR [K]
"""
import sys

import numpy as np

out = sys.argv[1]
k = int(sys.argv[2]) if len(sys.argv) > 2 else 10
raw = np.genfromtxt(f"{out}/items.csv", delimiter=",", dtype=str, skip_header=1)
ids, x = raw[:, 0], raw[:, 1:].astype(float)
n = len(ids)
sq = (x * x).sum(1)
nbr = np.empty((n, k), dtype=np.int64)
dist = np.empty((n, k))
for a in range(0, n, 1024):
    b = min(n, a + 1024)
    d2 = sq[a:b, None] + sq[None, :] - 2.0 * x[a:b] @ x.T
    d2[np.arange(b - a), np.arange(a, b)] = np.inf
    idx = np.argpartition(d2, k, axis=1)[:, :k]
    nbr[a:b] = idx
    dist[a:b] = np.take_along_axis(d2, idx, axis=1).clip(0.0)
h2 = np.median(dist)
w = {}
for i in range(n):
    for j, d2 in zip(nbr[i], dist[i]):
        key = (min(i, j), max(i, j))
        w[key] = max(w.get(key, 0.0), float(np.exp(-d2 / h2)))
with open(f"{out}/knn.rel", "w") as fh:
    fh.writelines(f"{ids[i]} {ids[j]} {v!r}\n" for (i, j), v in sorted(w.items()))
print(f"{len(w)} edges over {n} items (k = {k}, h² = {h2:.4g})", file=sys.stderr)
