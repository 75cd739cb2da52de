"""004 §6.2 design (a symmetric relation, objects of unseen groups) on the
red-wine data: wines are the nodes (standardised attributes, RBF node
kernel), the relation between two wines is 2 for the same taster quality,
1 for adjacent qualities and 0 otherwise (as 004's 20-Newsgroups relation:
same group / same top-level group / else). Training wines come from the
qualities {4, 6, 8}, test wines from the unseen qualities {3, 5, 7}, equally
many per quality where the group is large enough (quality 5 and 6 hold 85 %
of the wines; without stratification the training graph is nearly all one
group and the learner learns "typical of quality 6" instead of "alike"); for a
test wine, the other test wines are ranked by the learned relation
(conditional ranking on the first node), measured by the conditional rank
loss (004 eq. 4, per test wine, averaged).

Learners (one domain, complete training graph including each wine with
itself): with the ordinary Kronecker pair kernel, kron-rls and kron-rankrls
in closed form (004's Table 2 setting); with the symmetric pair kernel,
kron-rls in closed form and by CG (200 iterations, self-loops dropped so
the graph is incomplete), kron-rankrls by CG (the ranking loss with a
symmetric pair kernel has no closed form in 004; §4.4, Fig. 3). λ by 3-fold CV over
conditioning wines on the training graph. Repetitions: fresh random draws
of the training and test wines.

Usage: python3 experiments/kron_wine.py [--reps R] [--n-train N] [--n-test N]
Rewrites the `kron-wine` section of docs/results.md.
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, log, replace_section, run, stamp  # noqa: E402

TRAIN_Q, TEST_Q = (4, 6, 8), (3, 5, 7)


def relation(qa, qb):
    d = abs(qa - qb)
    return 2.0 if d == 0 else (1.0 if d == 1 else 0.0)


def stratified(rng, q, groups, n):
    """About n wines, equally many from each quality group (all of a group
    smaller than its share)."""
    share = n // len(groups)
    out = [rng.choice(np.flatnonzero(q == g), min(share, int((q == g).sum())), replace=False) for g in groups]
    return np.concatenate(out)


def similarity_baseline(x, q, te, gamma):
    """004 eq. 41: rank the other test wines by kernel similarity to the
    conditioning wine; conditional rank loss (ties ½)."""
    xt = x[te]
    k = np.exp(-gamma * ((xt[:, None] - xt[None]) ** 2).sum(-1))
    y = np.vectorize(relation)(q[te][:, None], q[te][None])
    losses = []
    for u in range(len(te)):
        d = y[u][:, None] - y[u][None]
        m = d > 0
        if m.sum():
            ds = k[u][:, None] - k[u][None]
            losses.append(((ds[m] < 0).sum() + 0.5 * (ds[m] == 0).sum()) / m.sum())
    return float(np.mean(losses))


def write_nodes(path, ids, x):
    with open(path, "w") as f:
        for i, row in zip(ids, x):
            f.write(i + " " + " ".join("%d:%.17g" % (j + 1, v) for j, v in enumerate(row)) + "\n")


def write_edges(path, ids, q):
    with open(path, "w") as f:
        for a, qa in zip(ids, q):
            for b, qb in zip(ids, q):
                f.write("%s %s %g\n" % (a, b, relation(qa, qb)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n-train", type=int, default=120)
    ap.add_argument("--n-test", type=int, default=120)
    args = ap.parse_args()
    t0 = time.time()
    path = os.path.join(ROOT, "data", "wine-quality", "winequality_red.csv")
    raw = np.genfromtxt(path, delimiter=",", names=True)
    names = [n for n in raw.dtype.names if n != "quality"]
    x = np.column_stack([raw[n] for n in names]).astype(float)
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    q = raw["quality"].astype(int)
    gamma = 1.0 / x.shape[1]
    lambdas = ",".join("%g" % 2.0 ** e for e in range(-6, 7, 2))
    setups = [("kron-rls", "ordinary kernel, closed form", []),
              ("kron-rankrls", "ordinary kernel, closed form", []),
              ("kron-rls", "symmetric kernel, closed form", []),
              ("kron-rls", "symmetric kernel, CG, 200 iterations", ["--max-iter", "200"]),
              ("kron-rankrls", "symmetric kernel, CG, 200 iterations", ["--max-iter", "200"])]
    res = {s[:2]: [] for s in setups}
    base = []
    chosen = {s[:2]: [] for s in setups}
    rng = np.random.default_rng(62)
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            tr = stratified(rng, q, TRAIN_Q, args.n_train)
            te = stratified(rng, q, TEST_Q, args.n_test)
            base.append(similarity_baseline(x, q, te, gamma))
            ids_tr, ids_te = ["w%d" % i for i in tr], ["w%d" % i for i in te]
            f = lambda n: os.path.join(tmp, n)  # noqa: E731
            write_nodes(f("train_nodes.txt"), ids_tr, x[tr])
            write_nodes(f("test_nodes.txt"), ids_te, x[te])
            write_edges(f("train_edges.txt"), ids_tr, q[tr])
            write_edges(f("test_edges.txt"), ids_te, q[te])
            for algo, how, extra in setups:
                # The closed form needs a complete graph; CG is forced by
                # leaving out nothing but asking for iterations: drop the
                # self-loops so the graph is incomplete.
                edges = f("train_edges.txt")
                pair = "sym" if how.startswith("symmetric") else "kron"
                if "CG" in how:
                    edges = f("train_edges_cg.txt")
                    with open(f("train_edges.txt")) as src, open(edges, "w") as dst:
                        for line in src:
                            a, b, _ = line.split()
                            if a != b:
                                dst.write(line)
                model = f("m.rkl")
                _, err = run(["train", "--algo", algo, "--pair-kernel", pair, "--edges", edges, "--nodes",
                              f("train_nodes.txt"), "--kernel", "rbf:%g" % gamma, "--lambda", lambdas, "--cv", "3",
                              "-o", model] + extra)
                lam = [ln for ln in err.splitlines() if ln.startswith("chosen")]
                chosen[(algo, how)].append(lam[0] if lam else "?")
                out, _ = run(["eval", "-m", model, "--edges", f("test_edges.txt"), "--nodes", f("test_nodes.txt"),
                              "--metric", "condrankloss"])
                v = float(out.split()[1])
                res[(algo, how)].append(v)
                log("rep %d %s %s: %.4f" % (rep, algo, how, v))
    lines = ["## Symmetric relation between wines of unseen quality groups (004 §6.2 design)", "",
             "Wines as nodes (11 standardised attributes, RBF node kernel γ = 1/11), relation 2 = same quality, "
             "1 = adjacent, 0 = otherwise; ordinary or symmetric Kronecker pair kernel; training on up to %d wines of qualities %s, "
             "stratified (complete graph, up to %d edges), test on up to %d wines of the unseen qualities %s, stratified: for each test wine the other "
             "test wines are ranked, conditional rank loss (004 eq. 4) averaged over test wines; λ by 3-fold CV over "
             "conditioning wines; %d random draws (mean ± std). The CG rows drop the self-loops (so the graph is "
             "incomplete and the iterative solver runs)." % (args.n_train, TRAIN_Q, args.n_train ** 2, args.n_test,
                                                              TEST_Q, args.reps), "",
             "| learner | solver | conditional rank loss |", "|---|---|---:|"]
    lines.append("| similarity baseline (004 eq. 41) | — | %.4f ± %.4f |" % (np.mean(base), np.std(base, ddof=1)
                                                                              if len(base) > 1 else 0))
    for (algo, how), v in res.items():
        lines.append("| %s | %s | %.4f ± %.4f |" % (algo, how, np.mean(v), np.std(v, ddof=1) if len(v) > 1 else 0))
    lines += ["", "004 §6.2 on 20 Newsgroups (different groups for training and testing, closed forms, Table 2): "
              "\"the method optimizing a ranking-based loss over the pairs greatly outperforms the one regressing the "
              "values\"; with a symmetric kernel and CG (Fig. 3, groups shared), enforcing symmetry helps, most for "
              "the ranking loss. Compare the rows above with those two statements; the numbers of a different data "
              "set are not comparable.", "", stamp(t0, "experiments/kron_wine.sh")]
    replace_section("kron-wine", "\n".join(lines))


if __name__ == "__main__":
    main()
