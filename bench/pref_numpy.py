#!/usr/bin/env python3
"""The probit preference GP in numpy/scipy, for bench/pref_vs_numpy.sh.

Reads the problem written by `ranklet bench pref --write-data DIR` and times
the same phases as `ranklet bench pref` (see its module docs), printing one
JSON line:

  python3 bench/pref_numpy.py DIR parallel REPEAT
  python3 bench/pref_numpy.py DIR sequential 1

* parallel: ranklet's EP schedule (parallel EP, damping and convergence
  test from meta.txt, rank-one sites on f_w - f_l) with the posterior of
  each round in its plain dense form: B = I + L^T W L by a full product,
  C = L_B^-1 L^T by a full triangular solve (~3.3 n^3 flops), W applied
  sparsely through a scipy.sparse difference matrix D; written
  independently with numpy/scipy (scipy.linalg.cholesky / solve_triangular
  on OpenBLAS). Same rounds and fixed point as ranklet, whose round uses an
  upper factor of K so that its products are triangular (~4 n^3 / 3 flops,
  core/src/learn/pref/mod.rs): the ratio is that of the two rounds.
* sequential: R&W Algorithm 3.5 with the sites on f_w - f_l (one site at a
  time, rank-one updates of Sigma, Sigma recomputed after each sweep in the
  m x m form), as in core/tests/fixtures/pref/gen_pref.py, stopped by the
  same test on the sites (max change per sweep). The textbook way; its
  cost per sweep is O(m n^2) rank-one updates plus an m x m solve.

Both then time one evidence + gradient evaluation warm-started from the
converged sites (kernel, EP, Q = aa^T - (W - W Sigma W), the three
derivatives), and the gradient alone.
"""
import json
import sys
import time

import numpy as np
import scipy
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.special import log_ndtr


def read(dirname):
    meta = {}
    for line in open(f"{dirname}/meta.txt"):
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            meta[k.strip()] = v.strip()
    n, m, d = int(meta["n"]), int(meta["m"]), int(meta["d"])
    x = np.fromfile(f"{dirname}/x.f64", dtype="<f8").reshape(n, d)
    pr = np.fromfile(f"{dirname}/pairs.i32", dtype="<i4").reshape(m, 2)
    return meta, x, pr[:, 0].astype(np.int64), pr[:, 1].astype(np.int64)


def kernel(x, a, gamma):
    sq = (x * x).sum(1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * x @ x.T, 0.0)
    return a * np.exp(-gamma * d2)


def ratio(z):
    return np.exp(-0.5 * z * z - 0.5 * np.log(2 * np.pi) - log_ndtr(z))


def chol_jitter(K):
    n = K.shape[0]
    scale = max(np.trace(K) / n, 0.0) or 1.0
    for step in range(8):
        eps = 0.0 if step == 0 else scale * 10.0 ** (-11 + step)
        try:
            return sla.cholesky(K + eps * np.eye(n), lower=True), eps
        except np.linalg.LinAlgError:
            pass
    raise np.linalg.LinAlgError("K not PSD")


def site_update(mu_s, v_s, tau, nu, c2):
    den = 1.0 - tau * v_s
    v_c = v_s / den
    mu_c = (mu_s - v_s * nu) / den
    s2 = c2 + v_c
    s = np.sqrt(s2)
    z = mu_c / s
    r = ratio(z)
    b = r * (z + r) / s2
    dd = 1.0 - v_c * b
    return b / dd, (r / s + mu_c * b) / dd, mu_c, v_c, z, r


class Parallel:
    def __init__(self, w, l, n, c2, damping, tol):
        m = len(w)
        self.w, self.l, self.c2, self.damping, self.tol = w, l, c2, damping, tol
        rows = np.repeat(np.arange(m), 2)
        cols = np.stack([w, l], 1).reshape(-1)
        vals = np.tile([1.0, -1.0], m)
        self.D = sp.csr_matrix((vals, (rows, cols)), shape=(m, n))
        self.tau = np.zeros(m)
        self.nu = np.zeros(m)

    def posterior(self, L):
        D, tau = self.D, self.tau
        n = L.shape[0]
        WL = D.T @ (tau[:, None] * (D @ L))
        B = np.eye(n) + L.T @ WL
        LB = sla.cholesky(B, lower=True)
        C = sla.solve_triangular(LB, L.T, lower=True)
        h = D.T @ self.nu
        mu = C.T @ (C @ h)
        Cd = C[:, self.w] - C[:, self.l]
        v = (Cd * Cd).sum(0)
        logdetB = 2.0 * np.log(np.diag(LB)).sum()
        return C, mu, v, h, logdetB

    def run(self, K):
        L, _ = chol_jitter(K)
        rounds = 0
        damping, last = self.damping, np.inf
        while True:
            C, mu, v, h, logdetB = self.posterior(L)
            rounds += 1
            ms = mu[self.w] - mu[self.l]
            t_new, n_new, *_ = site_update(ms, v, self.tau, self.nu, self.c2)
            t = (1 - damping) * self.tau + damping * t_new
            nv = (1 - damping) * self.nu + damping * n_new
            change = max((self.c2 * np.abs(t - self.tau)).max(), (np.sqrt(self.c2) * np.abs(nv - self.nu)).max())
            if change < self.tol:
                # ranklet's test: the sites would move by less than tol, so
                # they are kept and this round's posterior is theirs.
                break
            self.tau, self.nu = np.maximum(t, 0.0), nv
            if change > last:  # ranklet's adaptive damping
                damping = max(0.5 * damping, 0.125)
            else:
                damping = min(1.25 * damping, self.damping)
            last = change
            if rounds > 1000:
                raise RuntimeError("no convergence")
        Sigma = C.T @ C
        return self.finish(Sigma, mu, v, h, logdetB), rounds

    def finish(self, Sigma, mu, v, h, logdetB):
        ms = mu[self.w] - mu[self.l]
        _, _, mu_c, v_c, z, r = site_update(ms, v, self.tau, self.nu, self.c2)
        tau, nu = self.tau, self.nu
        a = 1.0 + tau * v_c
        site = log_ndtr(z) + 0.5 * np.log(a) - 0.5 * (nu * nu * v_c + 2 * nu * mu_c - tau * mu_c * mu_c) / a
        logZ = site.sum() - 0.5 * logdetB + 0.5 * h @ mu
        return dict(Sigma=Sigma, mu=mu, logZ=logZ, mu_c=mu_c, v_c=v_c, z=z, r=r, h=h)

    def gradient(self, post, K, a, gamma):
        D, tau = self.D, self.tau
        mu, Sigma = post["mu"], post["Sigma"]
        alpha = post["h"] - D.T @ (tau * (D @ mu))
        WS = D.T @ (tau[:, None] * (D @ Sigma))  # W Sigma
        WSW = D.T @ (tau[:, None] * (D @ WS.T))  # W Sigma W
        W = (D.T @ sp.diags(tau) @ D).toarray()
        Q = np.outer(alpha, alpha) - W + WSW
        K0 = K / a
        ga = 0.5 * (Q * K).sum()
        with np.errstate(divide="ignore"):
            lk = np.where(K0 > 0, np.log(np.where(K0 > 0, K0, 1.0)), 0.0)
        gg = 0.5 * a * (Q * K0 * lk).sum()
        gs = (-post["r"] * post["z"] * self.c2 / (self.c2 + post["v_c"])).sum()
        return np.array([ga, gg, gs])


class Sequential(Parallel):
    """R&W Algorithm 3.5 with the sites on f_w - f_l."""

    def run(self, K):
        n = K.shape[0]
        Dd = self.D.toarray()
        Sigma = K.copy()
        mu = np.zeros(n)
        sweeps = 0
        while True:
            t_old, n_old = self.tau.copy(), self.nu.copy()
            for s in range(len(self.w)):
                wi, li = self.w[s], self.l[s]
                sd = Sigma[:, wi] - Sigma[:, li]
                v = sd[wi] - sd[li]
                ms = mu[wi] - mu[li]
                t_new, n_new, *_ = site_update(ms, v, self.tau[s], self.nu[s], self.c2)
                dtau = t_new - self.tau[s]
                dnu = n_new - self.nu[s]
                self.tau[s], self.nu[s] = t_new, n_new
                k = dtau / (1.0 + dtau * v)
                # mu = Sigma' h' with h' = h + dnu d
                mu = mu + sd * ((dnu - dtau * ms) / (1.0 + dtau * v))
                Sigma -= k * np.outer(sd, sd)
            sweeps += 1
            # recompute from scratch (m x m form)
            Ss = np.sqrt(self.tau)
            DK = Dd @ K
            A = DK @ Dd.T
            B = np.eye(len(Ss)) + Ss[:, None] * A * Ss[None, :]
            V = np.linalg.solve(B, Ss[:, None] * DK)
            Sigma = K - DK.T @ (Ss[:, None] * V)
            Sigma = 0.5 * (Sigma + Sigma.T)
            mu = Sigma @ (Dd.T @ self.nu)
            change = max((self.c2 * np.abs(self.tau - t_old)).max(), (np.sqrt(self.c2) * np.abs(self.nu - n_old)).max())
            if change < self.tol or sweeps > 200:
                break
        # evidence with the parallel code's formulas at these sites
        L, _ = chol_jitter(K)
        C, mu, v, h, logdetB = self.posterior(L)
        return self.finish(C.T @ C, mu, v, h, logdetB), sweeps


def main():
    dirname, mode, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
    meta, x, w, l = read(dirname)
    n = x.shape[0]
    a, gamma, sigma = float(meta["a"]), float(meta["gamma"]), float(meta["sigma"])
    damping, tol = float(meta["damping"]), float(meta["tol"])
    c2 = 2 * sigma * sigma
    cls = Parallel if mode == "parallel" else Sequential
    tk, tep, tev, tg = [], [], [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        K = kernel(x, a, gamma)
        tk.append(time.perf_counter() - t0)
        ep = cls(w, l, n, c2, damping, tol)
        t0 = time.perf_counter()
        post, rounds = ep.run(K)
        tep.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        g = ep.gradient(post, K, a, gamma)
        tg.append(time.perf_counter() - t0)
        # one evaluation as an optimiser step does it: kernel, warm EP, gradient
        t0 = time.perf_counter()
        K2 = kernel(x, a, gamma)
        warm = Parallel(w, l, n, c2, damping, tol)
        warm.tau, warm.nu = ep.tau.copy(), ep.nu.copy()
        post2, _ = warm.run(K2)
        g2 = warm.gradient(post2, K2, a, gamma)
        tev.append(time.perf_counter() - t0)
    med = lambda t: sorted(t)[len(t) // 2]
    print(
        json.dumps(
            dict(
                impl=f"numpy-{mode}",
                n=n,
                m=len(w),
                ep_rounds=rounds,
                log_z=post["logZ"],
                eval_log_z=post2["logZ"],
                grad=list(g2),
                kernel_s=med(tk),
                ep_s=med(tep),
                eval_s=med(tev),
                grad_s=med(tg),
                numpy=np.__version__,
                scipy=scipy.__version__,
            )
        )
    )


if __name__ == "__main__":
    main()
