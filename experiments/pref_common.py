"""Shared parts of the preference-GP experiments (pref_*.py): running
`ranklet train/eval` on preferences between items, the metrics on held-out
judgements as `ranklet eval` defines them (for the Python baselines), and
the Bradley-Terry baseline as a logistic regression on covariate
differences (the model of the BradleyTerry2 documentation's flatlizards
example, fitted here with scipy)."""

import numpy as np
from scipy import optimize, special

import common as C


def write_items(path, ids, x, names=None):
    """CSV items file: an `id` column and the attributes."""
    names = names or ["x%d" % (j + 1) for j in range(x.shape[1])]
    with open(path, "w") as f:
        f.write("id," + ",".join(names) + "\n")
        for i, row in zip(ids, x):
            f.write(str(i) + "," + ",".join("%.17g" % v for v in row) + "\n")


def write_prefs(path, pairs, ids=None):
    """`winner loser` lines (pairs of indices, mapped through `ids`)."""
    with open(path, "w") as f:
        for w, l in pairs:
            f.write("%s %s\n" % ((ids[w], ids[l]) if ids is not None else (w, l)))


def write_relation(path, edges, ids):
    with open(path, "w") as f:
        for i, j, w in edges:
            f.write("%s %s %.17g\n" % (ids[i], ids[j], w))


def train(algo, items, prefs, model, extra=()):
    """`ranklet train` on preferences; returns stderr (hyperparameters,
    evidence)."""
    _, err = C.run(["train", "--algo", algo, "--items", items, "--prefs", prefs, "-o", model] + list(extra))
    return err


def evaluate(model, items, prefs, metrics=("pairerror", "auc", "logloss")):
    out, _ = C.run(["eval", "-m", model, "--items", items, "--prefs", prefs, "--metric", ",".join(metrics)])
    vals = {}
    for line in out.splitlines():
        k, v = line.split("\t")
        vals[k] = float(v)
    return vals


def metrics_from_prob(p):
    """The CLI's pref metrics from P(w > l) of each held-out judgement (as
    observed): pairerror (P < 1/2 wrong, = 1/2 half), AUC of {p} vs {1-p},
    mean -log p."""
    p = np.asarray(p, float)
    err = np.mean(np.where(p < 0.5, 1.0, np.where(p == 0.5, 0.5, 0.0)))
    pos, neg = p, 1.0 - p
    allv = np.concatenate([pos, neg])
    # Mann-Whitney with ties 1/2, by ranks.
    from scipy.stats import rankdata
    r = rankdata(allv)
    m = len(pos)
    auc = (r[:m].sum() - m * (m + 1) / 2) / (m * m)
    ll = -np.mean(np.log(np.clip(p, 1e-300, 1.0)))
    return {"pairerror": err, "auc": auc, "logloss": ll}


def bradley_terry(dx, l2=0.0):
    """Logistic regression without intercept on rows dx = x_winner - x_loser
    (every label 1): P(w > l) = sigmoid(beta . dx). Maximum likelihood
    (l2 = 0) or with a ridge penalty l2 * |beta|^2 / 2. Returns beta and
    whether the optimiser converged (ML diverges on separable data)."""
    dx = np.asarray(dx, float)

    def f(b):
        z = dx @ b
        return -np.sum(special.log_expit(z)) + 0.5 * l2 * b @ b

    def g(b):
        z = dx @ b
        return -dx.T @ special.expit(-z) + l2 * b

    r = optimize.minimize(f, np.zeros(dx.shape[1]), jac=g, method="BFGS", options={"maxiter": 5000, "gtol": 1e-8})
    # Converged: a small gradient at a moderate beta (on separable data
    # the ML estimate runs off to infinity and the gradient only fades).
    ok = np.linalg.norm(g(r.x)) < 1e-4 and np.abs(r.x).max() < 50
    return r.x, bool(ok)


def mean_std(v):
    return C.mean_std(v)
