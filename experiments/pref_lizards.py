"""Lizard contests (BradleyTerry2's flatlizards data): who wins a contest
between two male flat lizards, predicted from the lizards' covariates for
contests held out of training (inductive over contests).

Data (GPL-2, read in place, never copied into the repository): the
directory PAIRED_COMPARISONS (environment variable; default
../shared/data/paired-comparisons next to the repository, then
/work/shared/data/paired-comparisons) with flatlizards_contests.tsv (100
contests, winner loser) and flatlizards_predictors.tsv (77 lizards; the
17 measured covariates: throat/frontleg/badge colour PCs, badge size,
testosterone, SVL, head length/width/height, condition, and repro.tactic as
resident = 1, floater = 0; the numeric `id` column is not a covariate).
Covariates are standardised; a missing value (NA, "at random" per the data
documentation) becomes the column mean, 0 after standardising.

Design: 10-fold cross-validation over the 100 contests, repeated with R
shuffles (seeds 1..R). Per fold:
- pref-gp (probit GP, EP; RBF kernel, hyperparameters by the evidence),
  trained with `ranklet train --algo pref-gp --items lizards.csv --prefs
  train.txt`, evaluated with `ranklet eval` on the held-out contests;
- Bradley-Terry with a structured ability beta . x (a logistic regression
  without intercept on x_winner - x_loser), by maximum likelihood: (a) the
  four covariates of the documentation's Whiting.model (throat.PC1,
  throat.PC3, head.length, SVL), (b) all 17 covariates; (c) all 17 with a
  ridge penalty chosen by inner 5-fold CV from {0.1, 1, 10, 100}.
Metrics on the held-out contests: pair error (P(w > l) < 1/2), AUC of
P(w > l) vs P(l > w), log loss -mean log P(w > l).

Usage: python3 experiments/pref_lizards.py [--reps R] [--out DIR]"""

import argparse
import os
import time

import numpy as np

import common as C
import pref_common as P

WHITING = ["throat.PC1", "throat.PC3", "head.length", "SVL"]


def data_dir():
    env = os.environ.get("PAIRED_COMPARISONS")
    cands = [env] if env else []
    cands += [os.path.join(C.ROOT, "..", "shared", "data", "paired-comparisons"),
              "/work/shared/data/paired-comparisons"]
    for d in cands:
        if d and os.path.exists(os.path.join(d, "flatlizards_contests.tsv")):
            return os.path.abspath(d)
    raise SystemExit("flatlizards_contests.tsv not found; set PAIRED_COMPARISONS to the paired-comparisons directory")


def load(d):
    with open(os.path.join(d, "flatlizards_predictors.tsv")) as f:
        header = f.readline().rstrip("\n").split("\t")
        rows = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    names = [h for h in header[2:]]  # after the row name and `id`
    ids = [r[0] for r in rows]
    x = np.full((len(rows), len(names)), np.nan)
    for i, r in enumerate(rows):
        for j, v in enumerate(r[2:]):
            if v == "NA":
                continue
            if names[j] == "repro.tactic":
                x[i, j] = 1.0 if v == "resident" else 0.0
            else:
                x[i, j] = float(v)
    n_na = int(np.isnan(x).sum())
    mu = np.nanmean(x, 0)
    sd = np.nanstd(x, 0)
    z = (x - mu) / sd
    z[np.isnan(z)] = 0.0
    index = {s: i for i, s in enumerate(ids)}
    with open(os.path.join(d, "flatlizards_contests.tsv")) as f:
        f.readline()
        contests = [tuple(index[t] for t in l.split()) for l in f if l.strip()]
    return ids, names, z, contests, n_na


def bt_predict(z, cols, train, test, l2=0.0):
    dx = np.array([z[w, cols] - z[l, cols] for w, l in train])
    beta, ok = P.bradley_terry(dx, l2)
    dt = np.array([z[w, cols] - z[l, cols] for w, l in test])
    return 1.0 / (1.0 + np.exp(-(dt @ beta))), ok


def bt_ridge(z, cols, train, test, rng):
    grid = [0.1, 1.0, 10.0, 100.0]
    folds = np.array_split(rng.permutation(len(train)), 5)
    score = []
    for l2 in grid:
        ll = 0.0
        for f in folds:
            inner = [train[k] for k in range(len(train)) if k not in set(f)]
            p, _ = bt_predict(z, cols, inner, [train[k] for k in f], l2)
            ll -= np.sum(np.log(p))
        score.append(ll)
    l2 = grid[int(np.argmin(score))]
    return bt_predict(z, cols, train, test, l2)[0], l2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default="/tmp/ranklet-exp/pref-lizards")
    a = ap.parse_args()
    t0 = time.time()
    os.makedirs(a.out, exist_ok=True)
    d = data_dir()
    ids, names, z, contests, n_na = load(d)
    items = f"{a.out}/lizards.csv"
    P.write_items(items, ids, z, [n.replace(".", "_") for n in names])
    all_cols = list(range(len(names)))
    w_cols = [names.index(n) for n in WHITING]
    res = {}
    ridge_picks = []
    hyper = []
    divergent = {"BT, Whiting's 4 covariates (ML)": 0, "BT, all 17 covariates (ML)": 0}
    for rep in range(a.reps):
        rng = np.random.default_rng(100 + rep)
        folds = np.array_split(rng.permutation(len(contests)), 10)
        for k, f in enumerate(folds):
            test = [contests[i] for i in f]
            train = [contests[i] for i in range(len(contests)) if i not in set(f)]
            tr, te, model = f"{a.out}/train.txt", f"{a.out}/test.txt", f"{a.out}/m.rkl"
            P.write_prefs(tr, train, ids)
            P.write_prefs(te, test, ids)
            err = P.train("pref-gp", items, tr, model)
            hyper.append(err.strip().splitlines()[0] if err.strip() else "?")
            res.setdefault("pref-gp (EP, RBF, evidence)", []).append(P.evaluate(model, items, te))
            for label, cols in (("BT, Whiting's 4 covariates (ML)", w_cols), ("BT, all 17 covariates (ML)", all_cols)):
                p, ok = bt_predict(z, cols, train, test)
                divergent[label] += 0 if ok else 1
                res.setdefault(label, []).append(P.metrics_from_prob(p))
            p, l2 = bt_ridge(z, all_cols, train, test, rng)
            ridge_picks.append(l2)
            res.setdefault("BT, all 17 covariates, ridge (inner CV)", []).append(P.metrics_from_prob(p))
            C.log(f"rep {rep} fold {k}: " + "  ".join(
                f"{m.split(',')[0]} {v[-1]['pairerror']:.2f}" for m, v in res.items()))
    n_folds = a.reps * 10
    lines = [
        "## Lizard contests: pref-gp vs Bradley–Terry with covariates",
        "",
        C.stamp(t0, f"experiments/pref_lizards.sh --reps {a.reps}"),
        "",
        f"Data: BradleyTerry2's `flatlizards` (read in place from `{os.path.relpath(d, C.ROOT)}`; GPL-2):",
        f"{len(contests)} contests between {len(ids)} lizards, {len(names)} covariates, standardised, {n_na} missing",
        "values set to the column mean. 10-fold CV over contests, "
        f"{a.reps} shuffles ({n_folds} folds); every learner sees the same folds.",
        "Bradley–Terry = logistic regression without intercept on x_winner − x_loser (the structured",
        "model of the BradleyTerry2 docs' `Whiting.model`, fitted by scipy BFGS here; R's `BTm` not run).",
        "",
        "| learner | pair error | AUC | log loss |",
        "|---|---|---|---|",
    ]
    for name, v in res.items():
        cells = []
        for m in ("pairerror", "auc", "logloss"):
            mu, s = C.mean_std([r[m] for r in v])
            cells.append(f"{mu:.3f} ± {s:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Mean ± std over the folds (each fold has 10 held-out contests, so the std is large).",
        f"ML fits that did not converge (separable training folds): "
        + ", ".join(f"{k}: {v} of {n_folds}" for k, v in divergent.items()) + ".",
        f"Ridge penalties chosen: " + ", ".join(f"{l}: {ridge_picks.count(l)}" for l in sorted(set(ridge_picks))) + ".",
        f"pref-gp fit of the first fold: `{hyper[0]}`.",
    ]
    C.replace_section("pref-lizards", "\n".join(lines))


if __name__ == "__main__":
    main()
