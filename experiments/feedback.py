"""Learning on the device (online RankRLS from pairwise answers): held-out
pair error against the number of answers for the active next-pair rule
(paper 001 §5) and for random pairs, averaged over simulated users, on the
red-wine data and on MSLR-like d = 136 data.

Each data set: a prior is trained on the host (`ranklet train --algo
rankrls --kernel linear`) from a few labelled items; the other items are
the ones simulated users compare (`ranklet simulate-feedback`): each user
holds out half of them, and answers questions about the rest by the hidden
true scores (the taster's quality for the wine; the generating relevance
grade for MSLR-like). Features are standardised (z-scores over the items)
before anything sees them: the learner's ridge is isotropic in the feature
space it is given.

Usage: python3 experiments/feedback.py [--users U] [--out DIR]
Rewrites the `feedback` section of docs/results.md and docs/img/feedback_*.png.
"""

import argparse
import os
import time

import numpy as np

import common as C


def standardise(x):
    s = x.std(axis=0)
    s[s == 0] = 1.0
    return (x - x.mean(axis=0)) / s


def write_rows(path, y, x):
    C.write_svmlight(path, y, [1] * len(y), [(range(1, x.shape[1] + 1), row) for row in x])


def wine_data(out):
    """Wine: 11 features, quality 3–8; prior from 40 wines."""
    path = os.path.join(C.ROOT, "data", "wine-quality", "winequality_red.csv")
    raw = np.genfromtxt(path, delimiter=",", names=True)
    names = [n for n in raw.dtype.names if n != "quality"]
    x = standardise(np.column_stack([raw[n] for n in names]).astype(float))
    y = raw["quality"].astype(float)
    rng = np.random.default_rng(11)
    idx = rng.permutation(len(y))
    prior, items = idx[:40], idx[40:]
    return x, y, prior, items


def mslr_data(out):
    """MSLR-like: 136 features (LETOR's MSLR-WEB has 136), 3000 items.

    x = z·M with z ~ N(0, I) and M mixing neighbouring features, so
    features are correlated in blocks as in web-search feature sets; the
    relevance score is a sparse linear function of x plus noise, cut into
    grades 0–4 at the quantiles 50/75/90/97 % (most documents are not
    relevant). The prior is trained on 150 items."""
    rng = np.random.default_rng(136)
    n, d = 3000, 136
    z = rng.standard_normal((n, d))
    m = np.eye(d)
    for j in range(d - 1):
        m[j, j + 1] = 0.6
    x = standardise(z @ m)
    w = np.zeros(d)
    informative = rng.choice(d, 30, replace=False)
    w[informative] = rng.standard_normal(30)
    s = x @ w
    s = s / s.std() + 0.5 * rng.standard_normal(n)
    y = np.digitize(s, np.quantile(s, [0.5, 0.75, 0.9, 0.97])).astype(float)
    idx = rng.permutation(n)
    return x, y, idx[:150], idx[150:]


def run_set(name, data, args, out):
    x, y, prior, items = data
    prior_path = os.path.join(out, f"{name}_prior.light")
    items_path = os.path.join(out, f"{name}_items.light")
    write_rows(prior_path, y[prior], x[prior])
    write_rows(items_path, y[items], x[items])
    model = os.path.join(out, f"{name}_prior.rkl")
    C.run(["train", "--algo", "rankrls", "--kernel", "linear", "--lambda", args.prior_lambda, "--data", prior_path,
           "-o", model])
    img = os.path.join(C.ROOT, "docs", "img", f"feedback_{name}.png")
    state = os.path.join(out, f"{name}_state.rkl")
    t0 = time.time()
    tsv, err = C.run(["simulate-feedback", "-m", model, "--data", items_path, "--rounds", args.rounds[name],
                      "--users", args.users, "--every", args.every, "--candidates", args.candidates,
                      "--lambda", args.lambda_, "--seed", 7, "--plot", img, "--save-state", state])
    secs = time.time() - t0
    rows = [line.split("\t") for line in tsv.strip().splitlines()]
    head, body = rows[0], [[float(v) for v in r] for r in rows[1:]]
    col = {h: i for i, h in enumerate(head)}
    summary = [line for line in err.splitlines() if line.startswith("random:")]
    ties = [line for line in err.splitlines() if "answered \"same\"" in line]
    return {"name": name, "n_items": len(items), "d": x.shape[1], "n_prior": len(prior), "head": col, "body": body,
            "summary": summary[0] if summary else "?", "ties": ties, "secs": secs}


def table(r, every):
    col, body = r["head"], r["body"]
    marks = sorted({0, 10, 25, 50, 100, 200, 300, 500, 1000, 1500, 2000} & {int(b[0]) for b in body})
    lines = ["| answers | random | active |", "|---:|---:|---:|"]
    for b in body:
        if int(b[0]) in marks:
            se = lambda k: (b[col[k + ":hi"]] - b[col[k + ":lo"]]) / 2
            lines.append("| %d | %.4f ± %.4f | %.4f ± %.4f |" % (b[0], b[col["random"]], se("random"),
                                                               b[col["active"]], se("active")))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--out", default="/tmp/ranklet-exp/feedback")
    args = ap.parse_args()
    args.every, args.candidates, args.lambda_, args.prior_lambda = 10, 32, 1.0, 1.0
    args.rounds = {"wine": 300, "mslr": 1500}
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    results = [run_set("wine", wine_data(args.out), args, args.out),
               run_set("mslr", mslr_data(args.out), args, args.out)]
    text = ["## Learning on the device: active vs random questions", "",
            "`ranklet simulate-feedback` (the f32 online RankRLS learner of `core/src/learn/online.rs`, "
            "ridge λ = %g towards a host-trained RankRLS prior; %d simulated users; each round the rule picks a pair "
            "among %d items drawn from the user's pool; held-out disagreement over the other half of the items, "
            "mean ± standard error over users)." % (args.lambda_, args.users, args.candidates), ""]
    for r in results:
        text += ["### %s: %d items × %d features, prior from %d labelled items" % (
            {"wine": "Red wine (taster quality)", "mslr": "MSLR-like, d = 136 (grades 0–4)"}[r["name"]],
            r["n_items"], r["d"], r["n_prior"]), "", table(r, args.every), "",
            "Summary: %s. (simulation %.0f s)" % (r["summary"], r["secs"]), "",
            "Ties: " + "; ".join(r["ties"]) + ".", "",
            "![%s](img/feedback_%s.png)" % (r["name"], r["name"]), ""]
    text += ["Reading the curves: the random rule's rise on the MSLR-like data (to about 0.34 near 200 answers, "
             "then down) is the fit of a few pairs in 136 dimensions with a ridge (λ = 1) small against ‖d‖² ≈ 272 "
             "of a random pair: until the answers outnumber the dimensions, each pulls w along its own direction "
             "(a double-descent peak); the active rule asks about pairs the current model cannot tell apart, whose "
             "differences are small, and avoids it. On the wine the active rule asks more questions whose answer is "
             "\"same\" (equal quality): a pair the model scores alike is often a true tie with 6 grades, and such "
             "an answer teaches nothing. λ was not tuned; both rules use the same.", ""]
    text.append(C.stamp(t0, "experiments/feedback.sh"))
    C.replace_section("feedback", "\n".join(text))


if __name__ == "__main__":
    main()
