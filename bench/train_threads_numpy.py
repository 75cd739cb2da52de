#!/usr/bin/env python3
"""numpy side of bench/train_threads.sh, on the rows of an SVMlight file
(read outside every timing; queries = the file's qid blocks, which
bench/hard_rbf_data.py writes contiguous):

    python3 bench/train_threads_numpy.py FILE GAMMA P LAMBDA REPEAT

Times, median of REPEAT, with numpy's BLAS threads as the environment sets
them (OPENBLAS_NUM_THREADS):
  eigh    numpy.linalg.eigh of the RBF kernel K = exp(-γ‖xi − xj‖²), K built
          outside the timing (the yardstick the training-speed goals of docs/performance.md are stated against);
  paper   KPCRank by the paper's method (000 §3-4, eqs. 1-9) from the
          arrays: kernel, centring HKH, full eigh, the top-P components
          Z = VΛ^½, M = ZᵀLZ, w = M⁻¹ZᵀLs, α = VΛ^{-½}w (the yardstick of the
          KPCRank goal);
  rankrls RankRLS by numpy: kernel, L^½KL^½ + λI, Cholesky, solves
          (for reference).
Prints one JSON line.
"""
import json
import sys

import numpy as np

from rankers_numpy import timed  # median wall time of `repeat` calls (same directory)


def read(path):
    ys, qs, xs = [], [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            ys.append(float(parts[0]))
            qs.append(int(parts[1].split(":")[1]))
            xs.append([float(p.split(":")[1]) for p in parts[2:]])
    return np.array(xs), np.array(ys), np.array(qs)


def main():
    path, gamma, p, lam, repeat = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
    x, s, q = read(path)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    sizes = np.diff(np.r_[starts, len(q)])

    def kernel():
        sq = (x * x).sum(1)
        return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0))

    def lap(a):
        """L·a for L = blockdiag(I − 11ᵀ/l_q) (query means removed)."""
        return a - np.repeat(np.add.reduceat(a, starts, axis=0) / sizes.reshape((-1,) + (1,) * (a.ndim - 1)), sizes, axis=0)

    def paper():
        k = kernel()
        cm = k.mean(0)
        kc = k - cm[None, :] - cm[:, None] + cm.mean()
        w, v = np.linalg.eigh(kc)
        w, v = w[::-1][:p], v[:, ::-1][:, :p]
        z = v * np.sqrt(w)
        m = z.T @ lap(z)
        wb = np.linalg.solve(m, z.T @ lap(s))
        return v @ (wb / np.sqrt(w))

    def rankrls():
        k = kernel()
        c = lap(lap(k).T).T + lam * np.eye(len(s))
        f = np.linalg.cholesky(c)
        t = np.linalg.solve(f.T, np.linalg.solve(f, lap(s)))
        return lap(t)

    k = kernel()
    out = {
        "n": len(s),
        "d": x.shape[1],
        "queries": len(starts),
        "eigh_s": timed(lambda: np.linalg.eigh(k), repeat),
        "paper_s": timed(paper, repeat),
        "rankrls_s": timed(rankrls, repeat),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
