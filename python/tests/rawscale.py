"""LETOR-like rows as users have them, and an f64 (long double) reference
for the linear least-squares learners on them.

``raw_letor`` gives features at raw scales: log-normal and Pareto columns
from 10⁻³ to 10⁹, a column whose mean is far larger than its spread
(``1e9 + noise``), a query-level column (constant within each query), a
constant column, a duplicated column, duplicated rows, one-row queries and
queries whose labels are all equal.

``reference`` solves ``(XᵀLX + λI)w = XᵀLy`` from rows centred first (per
query for RankRLS), accumulated and solved in ``np.longdouble`` by Gaussian
elimination on the equilibrated system: independent of the library's
statistics and solver, and more precise than f64 where the platform's long
double is wider."""

import numpy as np


def raw_letor(seed, n_queries=40, d=10, shuffle=False):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 25, size=n_queries)
    sizes[:: max(1, n_queries // 6)] = 1  # one-row queries
    qid = np.repeat(np.arange(1, n_queries + 1) * 13 + 5, sizes)
    n = len(qid)
    cols = []
    for j in range(d):
        kind = j % 5
        scale = 10.0 ** rng.uniform(-3, 9)
        if kind == 0:
            cols.append(scale * rng.lognormal(0.0, 1.5, size=n))
        elif kind == 1:
            cols.append(scale * (rng.pareto(1.3, size=n) + 1.0))
        elif kind == 2:
            cols.append(1e9 + 1e3 * rng.normal(size=n))  # mean ≫ spread
        elif kind == 3:
            per_q = scale * rng.lognormal(size=n_queries)
            cols.append(np.repeat(per_q, sizes))  # query-level feature
        else:
            cols.append(scale * rng.normal(size=n))
    X = np.column_stack(cols)
    X[:, -1] = 7.25  # a constant column
    if d >= 3:
        X[:, -2] = X[:, 0]  # a duplicated column
    # Duplicated rows: a few rows copied onto their query's next row.
    for i in rng.choice(n - 1, size=n // 15, replace=False):
        if qid[i] == qid[i + 1]:
            X[i + 1] = X[i]
    z = (np.log1p(np.abs(X[:, 0]) / np.abs(X[:, 0]).mean()) + 0.5 * (X[:, 2] - 1e9) / 1e3
         + 0.3 * np.log1p(X[:, 1] / X[:, 1].mean()) + rng.normal(scale=0.4, size=n))
    y = np.digitize(z, np.quantile(z, [0.4, 0.7, 0.9])).astype(float)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    for q in range(2, n_queries, 7):  # all-equal labels within a query
        y[starts[q]:starts[q] + sizes[q]] = 2.0
    if shuffle:
        order = rng.permutation(n)
        X, y, qid = X[order], y[order], qid[order]
    return X, y, qid


def for_rls(X):
    """``X`` without its columns whose spread is below 10⁻⁵ of their mean
    (the ``1e9 + noise`` column, the constant one). RLS has no offset, so
    beside such a column, which is nearly the constant vector, its system
    is ill-conditioned beyond f64 (κ ≈ 10¹² here): the RLS checks at 1e-9
    run on the other columns, and the whole ``X`` is checked to
    ``tolerance(κ)``."""
    X = np.asarray(X)
    spread = X.std(axis=0)
    keep = spread > 1e-5 * np.abs(X.mean(axis=0))
    return X[:, keep]


def _solve(A, b):
    """Gaussian elimination with partial pivoting, in A's dtype, on the
    system equilibrated by its diagonal."""
    s = 1.0 / np.sqrt(np.diag(A))
    M = A * s[:, None] * s[None, :]
    z = b * s
    n = len(z)
    M = M.copy()
    z = z.copy()
    for k in range(n):
        p = k + int(np.argmax(np.abs(M[k:, k])))
        if p != k:
            M[[k, p]] = M[[p, k]]
            z[[k, p]] = z[[p, k]]
        f = M[k + 1:, k] / M[k, k]
        M[k + 1:, k:] -= f[:, None] * M[k, k:][None, :]
        z[k + 1:] -= f * z[k]
    w = np.zeros(n, dtype=A.dtype)
    for k in range(n - 1, -1, -1):
        w[k] = (z[k] - M[k, k + 1:] @ w[k + 1:]) / M[k, k]
    return w * s


def _groups(X):
    """Groups of identical columns (their indices), first occurrences first."""
    groups, seen = [], {}
    for j in range(X.shape[1]):
        key = X[:, j].tobytes()
        if key in seen:
            groups[seen[key]].append(j)
        else:
            seen[key] = len(groups)
            groups.append([j])
    return groups


def _system(X, y, qid, algo, weight):
    X = np.asarray(X, dtype=np.longdouble)
    y = np.asarray(y, dtype=np.longdouble)
    d = X.shape[1]
    A = np.zeros((d, d), dtype=np.longdouble)
    b = np.zeros(d, dtype=np.longdouble)
    if algo == "rls":
        # XᵀX = XcᵀXc + n·x̄x̄ᵀ, Xᵀy likewise: no digits cancel.
        m, my = X.mean(axis=0), y.mean()
        Xc, yc = X - m, y - my
        A = Xc.T @ Xc + len(y) * np.outer(m, m)
        b = Xc.T @ yc + len(y) * m * my
    else:
        for q in np.unique(qid):
            rows = qid == q
            Xc = X[rows] - X[rows].mean(axis=0)
            yc = y[rows] - y[rows].mean()
            c = rows.sum() if weight == "pairs" else 1
            A += c * (Xc.T @ Xc)
            b += c * (Xc.T @ yc)
    return A, b


def reference(X, y, qid, lam, algo, weight="equal", cond=False):
    """Weights of RLS (``algo == "rls"``, no offset) or RankRLS with the
    query weighting ``weight``, from rows centred first, in long double.

    Identical columns share the ridge solution's weight equally (for a
    fixed sum the penalty is least so): the system is solved over one
    column per group, with penalty ``λ/|group|``, and the weight split.
    With ``cond`` also the condition number of that equilibrated system
    (how many digits an f64 solve may lose)."""
    groups = _groups(np.asarray(X))
    Xr = np.asarray(X)[:, [g[0] for g in groups]]
    A, b = _system(Xr, y, qid, algo, weight)
    pen = np.array([np.longdouble(lam) / len(g) for g in groups], dtype=np.longdouble)
    A = A + np.diag(pen)
    wr = _solve(A, b)
    w = np.zeros(np.asarray(X).shape[1], dtype=np.longdouble)
    for g, v in zip(groups, wr):
        w[g] = v / len(g)
    if not cond:
        return w
    s = 1.0 / np.sqrt(np.diag(A))
    k = np.linalg.cond(np.asarray(A * s[:, None] * s[None, :], dtype=np.float64))
    return w, float(k)


def tolerance(kappa):
    """1e-9, or the f64 forward-error bound ``κ·ε`` (with a factor 100 for
    the accumulation and the scoring) where the system is worse
    conditioned than that allows."""
    return max(1e-9, 100.0 * kappa * np.finfo(np.float64).eps)


def reference_scores(X, w):
    return np.asarray(np.asarray(X, dtype=np.longdouble) @ w, dtype=np.float64)
