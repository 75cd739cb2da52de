"""RLScore's side of bench/kron_vs_rlscore.sh: times KronRLS (closed form,
kernel mode) or CGKronRLS (MINRES over the observed edges) on a problem
written by `ranklet bench kron --write-data DIR`, and prints one JSON line
with the keys of `ranklet bench kron`.

    python kron_rlscore.py closed|cg DIR [ITERS] [REPEAT] [two|one]

`one`: the one-domain problem of `ranklet bench kron --domains one`: one
kernel matrix from the u features, passed as both K1 and K2 (RLScore has
no one-domain mode; it decomposes it twice).

Timed, as on ranklet's side: the two RBF kernel matrices (numpy: norms,
one gemm, exp) and the learner's constructor (which trains). Reading the
files is not timed. `kernel_s` is the median time of the kernels alone;
for the closed form, `eigen_s` and `solve_s` split one replay of KronRLS's
steps in numpy (untimed otherwise) into the two eigendecompositions and the
four products.
"""
import json
import os
import sys
import time

import numpy as np
from rlscore.learner import CGKronRLS, KronRLS


def read(d):
    meta = {}
    for line in open(os.path.join(d, "meta.txt")):
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            meta[k.strip()] = v.strip()
    pu, pv, dd, q = (int(meta[k]) for k in ("p_u", "p_v", "d", "edges"))
    xu = np.fromfile(os.path.join(d, "x_u.f64"), dtype="<f8").reshape(pu, dd)
    xv = np.fromfile(os.path.join(d, "x_v.f64"), dtype="<f8").reshape(pv, dd)
    y = np.fromfile(os.path.join(d, "y.f64"), dtype="<f8")  # column-major vec(Y)
    e = np.fromfile(os.path.join(d, "edges.i32"), dtype="<i4").reshape(q, 2)
    return meta, xu, xv, y, e


def rbf(x, gamma):
    n = (x * x).sum(axis=1)
    return np.exp(-gamma * (n[:, None] + n[None, :] - 2.0 * (x @ x.T)))


class Count:
    """CGKronRLS callback: counts the MINRES iterations."""

    def __init__(self):
        self.n = 0

    def callback(self, learner):
        self.n += 1

    def finished(self, learner):
        pass


def main():
    mode, d = sys.argv[1], sys.argv[2]
    iters = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    repeat = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    one = len(sys.argv) > 5 and sys.argv[5] == "one"
    meta, xu, xv, y, e = read(d)
    if one:
        xv = xu
    gamma, lam = float(meta["gamma"]), float(meta["lambda"])
    pu, pv = xu.shape[0], xv.shape[0]
    rows, cols = e[:, 0].astype(np.int32), e[:, 1].astype(np.int32)
    y_e = y[rows + cols * pu]
    times, ktimes = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        k1 = rbf(xu, gamma)
        k2 = k1 if one else rbf(xv, gamma)
        tk = time.perf_counter()
        if mode == "closed":
            learner = KronRLS(K1=k1, K2=k2, Y=y, regparam=lam)
            coef_sum, its = float(np.sum(learner.A)), 0
        else:
            count = Count()
            learner = CGKronRLS(K1=k1, K2=k2, Y=y_e, label_row_inds=rows, label_col_inds=cols,
                                regparam=lam, maxiter=iters, callback=count)
            coef_sum, its = float(np.sum(learner.A)), count.n
        t1 = time.perf_counter()
        times.append(t1 - t0)
        ktimes.append(tk - t0)
    times.sort()
    ktimes.sort()
    phases = {}
    if mode == "closed":
        # Where RLScore's time goes: KronRLS's steps replayed in numpy
        # (la.eigh of K1 and K2, then V.T @ Y @ U, the division and
        # V @ . @ U.T), once, outside the timing above.
        k1 = rbf(xu, gamma)
        k2 = k1 if one else rbf(xv, gamma)
        ym = y.reshape(pu, pv, order="F")
        t0 = time.perf_counter()
        e1, v = np.linalg.eigh(k1)
        e2, u = np.linalg.eigh(k2)
        t1 = time.perf_counter()
        a = v @ ((v.T @ ym @ u) / (np.outer(e1, e2) + lam)) @ u.T
        t2 = time.perf_counter()
        phases = {"eigen_s": t1 - t0, "solve_s": t2 - t1, "replay_coef_sum": float(a.sum())}
    print(json.dumps({
        "mode": mode, "domains": "one" if one else "two", "p_u": pu, "p_v": pv, "d": xu.shape[1], "gamma": gamma, "lambda": lam,
        "edges": pu * pv if mode == "closed" else len(y_e), "iters": iters if mode == "cg" else 0,
        "iterations_run": its, "coef_sum": coef_sum, "backend": "rlscore",
        "threads": int(os.environ.get("OMP_NUM_THREADS", "0")), "timed": "rbf kernels + fit",
        "repeat": repeat, "median_s": times[len(times) // 2], "min_s": times[0], "max_s": times[-1],
        "kernel_s": ktimes[len(ktimes) // 2], **phases,
    }))


if __name__ == "__main__":
    main()
