"""Relevance feedback in the design of 001 §6 (OHSUMED: ~150 documents per
query, a weighted cosine-similarity graph between them, 10 queries, known
pairs drawn at random, the remaining pairs predicted), on the red wine data
(data/wine-quality/winequality_red.csv, 1599 wines, 11 attributes, taster
quality 3-8).

- 10 "queries": 10 disjoint random sets of 150 wines (seed 7). Within a
  query the attributes are standardised; the preferences are every pair of
  wines of different quality (the better one wins).
- Relation (xpgp): the 10-nearest-neighbour graph by cosine similarity of
  the standardised attributes, weight = the cosine similarity (negative
  ones dropped), symmetrised. NB: the wines have no second source of
  information (OHSUMED had the documents' keywords beside the 25 LETOR
  features), so the relation here is built from the same attributes as the
  attribute kernel.
- Known pairs: m = 25, 50, 100, 150 drawn at random per query and
  repetition; the remaining pairs of the query are the test set.
- Learners: pref-gp (attributes only), xpgp (attributes + the relation),
  both with hyperparameters by the evidence; RankRLS (RBF kernel, gamma
  and lambda by 5-fold CV over the known pairs) on the same known pairs.
  Error rate = pair error of the remaining pairs; AUC of P(w > l) vs
  P(l > w) (the GPs only: RankRLS gives no probabilities, like the SVM of
  001 Fig. 2).
- Active vs random (001 Fig. 4): xpgp with 5 random known pairs, then
  `ranklet suggest -k 5` rounds (answered by the taster scores; a pair of
  equal quality is answered `tie`, which counts against the budget) up to
  25 questions; against 25 random strictly ordered pairs and 25 random
  pairs of any kind (equal quality answered `tie`). Two active arms:
  ties dropped by the learner (the default), and ties kept as two opposite
  judgements (`--ties both`).

- Low-rank XPGP (`--lowrank M:K[:c][,M:K[:c]…]`): only the
  relevance-feedback part, xpgp dense against `xpgp --basis M
  --relation-rank K` (the relation through its K smallest Laplacian
  eigenpairs, the attributes through M inducing wines; `:c` adds
  `--relation-residual constant`, the dropped spectrum as one constant)
  on the same draws; prints a markdown table (and writes it to
  DIR/lowrank.md, and each finished (query, draw) to DIR/lowrank.jsonl),
  nothing else.

Usage: python3 experiments/pref_wine.py [--reps R] [--out DIR] [--lowrank M:K[:c],...]"""

import argparse
import json
import os
import time

import numpy as np

import common as C
import pref_common as P

SIZES = [25, 50, 100, 150]
N_QUERIES, PER_QUERY, KNN = 10, 150, 10
RANKRLS = ["--algo", "rankrls", "--kernel", "rbf:0.01,0.03,0.1,0.3", "--lambda", "0.01,0.1,1,10", "--cv", "5"]


def load():
    path = os.path.join(C.ROOT, "data", "wine-quality", "winequality_red.csv")
    raw = np.loadtxt(path, delimiter=",", skiprows=1)
    return raw[:, :-1], raw[:, -1]


def knn_cosine(z, k):
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    s = u @ u.T
    np.fill_diagonal(s, -np.inf)
    w = {}
    for i in range(len(z)):
        for j in np.argsort(-s[i])[:k]:
            if s[i, j] > 0:
                a, b = min(i, j), max(i, j)
                w[(a, b)] = float(s[i, j])
    return [(a, b, v) for (a, b), v in sorted(w.items())]


def query_files(q, x, y, out):
    z = (x - x.mean(0)) / x.std(0)
    d = f"{out}/q{q}"
    os.makedirs(d, exist_ok=True)
    ids = [str(i) for i in range(len(z))]
    with open(f"{d}/items.csv", "w") as f:  # rows = items; `label` is unused (0)
        f.write("label," + ",".join("a%d" % (j + 1) for j in range(z.shape[1])) + "\n")
        for row in z:
            f.write("0," + ",".join("%.17g" % v for v in row) + "\n")
    P.write_relation(f"{d}/knn.rel", knn_cosine(z, KNN), ids)
    pairs = [(i, j) for i in range(len(y)) for j in range(len(y)) if y[i] > y[j]]
    return d, pairs


def gp_eval(algo, d, known, test, tag, extra=()):
    tr, te, m = f"{d}/{tag}_train.txt", f"{d}/{tag}_test.txt", f"{d}/{tag}_{algo}.rkl"
    P.write_prefs(tr, known)
    P.write_prefs(te, test)
    rel = ["--relation", f"{d}/knn.rel"] if algo == "xpgp" else []
    C.run(["train", "--algo", algo, "--data", f"{d}/items.csv", "--prefs", tr, "-o", m] + rel + list(extra))
    out, _ = C.run(["eval", "-m", m, "--data", f"{d}/items.csv", "--prefs", te, "--metric", "pairerror,auc"])
    return {k: float(v) for k, v in (l.split("\t") for l in out.splitlines())}, m


def active_run(d, yq, pairs, start, budget, tag, ties):
    """001 §5 / Fig. 4: `start` known pairs, then `ranklet suggest -k 5`
    rounds answered by the taster scores (equal quality: `tie`) up to
    `budget` questions; xpgp trained with `--ties TIES`. Returns the metrics
    on the strictly ordered pairs not asked, and the number of ties asked."""
    lines = ["%d %d" % p for p in start]
    n_ties = 0
    tr, mdl, te = f"{d}/{tag}.txt", f"{d}/{tag}.rkl", f"{d}/{tag}_test.txt"
    train = ["train", "--algo", "xpgp", "--data", f"{d}/items.csv", "--prefs", tr, "--relation", f"{d}/knn.rel",
             "--ties", ties, "-o", mdl]
    while len(lines) < budget:
        with open(tr, "w") as f:
            f.write("\n".join(lines) + "\n")
        C.run(train)
        out, _ = C.run(["suggest", "-m", mdl, "-k", min(5, budget - len(lines))])
        for l in out.splitlines():
            i, j = (int(t) for t in l.split("\t")[:2])
            if yq[i] > yq[j]:
                lines.append(f"{i} {j}")
            elif yq[j] > yq[i]:
                lines.append(f"{j} {i}")
            else:
                lines.append(f"{i} {j} tie")
                n_ties += 1
    asked = {tuple(int(t) for t in l.split()[:2]) for l in lines}
    test = [p for p in pairs if p not in asked and (p[1], p[0]) not in asked]
    with open(tr, "w") as f:
        f.write("\n".join(lines) + "\n")
    P.write_prefs(te, test)
    C.run(train)
    out, _ = C.run(["eval", "-m", mdl, "--data", f"{d}/items.csv", "--prefs", te, "--metric", "pairerror,auc"])
    return {k: float(v) for k, v in (l.split("\t") for l in out.splitlines())}, n_ties


def rankrls_eval(d, known, test, tag, seed):
    tr, te, m = f"{d}/{tag}_train.pairs", f"{d}/{tag}_test.pairs", f"{d}/{tag}_rankrls.rkl"
    P.write_prefs(tr, known)
    P.write_prefs(te, test)
    C.run(["train"] + RANKRLS + ["--seed", seed, "--data", f"{d}/items.csv", "--pairs", tr, "-o", m])
    return {"pairerror": C.evaluate(m, f"{d}/items.csv", "pairerror", pairs=te)}


def lowrank_main(a):
    """Dense xpgp against `--basis M --relation-rank K` on the draws of the
    relevance-feedback part (same seeds)."""
    t0 = time.time()
    specs = []
    for s in a.lowrank.split(","):
        t = s.split(":")
        if len(t) not in (2, 3) or (len(t) == 3 and t[2] != "c"):
            raise SystemExit(f"--lowrank: {s!r} is not M:K or M:K:c")
        specs.append((int(t[0]), int(t[1]), len(t) == 3))
    arms = ["xpgp"] + [f"xpgp M={m_} K={k_}" + (" +const" if c_ else "") for m_, k_, c_ in specs]
    os.makedirs(a.out, exist_ok=True)
    log = open(f"{a.out}/lowrank.jsonl", "a")
    x, y = load()
    perm = np.random.default_rng(7).permutation(len(y))
    res = {}
    for q in range(a.queries):
        rows = perm[q * PER_QUERY:(q + 1) * PER_QUERY]
        d, pairs = query_files(q, x[rows], y[rows], a.out)
        for rep in range(a.reps):
            r = np.random.default_rng(1000 * q + rep)
            for m in SIZES:
                pick = r.choice(len(pairs), m, replace=False)
                known = [pairs[k] for k in pick]
                chosen = set(pick.tolist())
                test = [p for k, p in enumerate(pairs) if k not in chosen]
                tag = f"r{rep}_m{m}"
                v, _ = gp_eval("xpgp", d, known, test, tag)
                res.setdefault(("xpgp", m), []).append(v)
                for (mb, kr, cst), arm in zip(specs, arms[1:]):
                    extra = ["--relation-residual", "constant"] if cst else []
                    v, _ = gp_eval("xpgp", d, known, test, f"{tag}_lr{mb}_{kr}{'c' if cst else ''}",
                                   ["--basis", str(mb), "--relation-rank", str(kr)] + extra)
                    res.setdefault((arm, m), []).append(v)
            log.write(json.dumps({"query": q, "rep": rep, "pairerror": {
                f"{l}@{m}": res[(l, m)][-1]["pairerror"] for l in arms for m in SIZES}}) + "\n")
            log.flush()
            C.log(f"query {q} rep {rep}: " + "  ".join(
                f"{k[0]}@{k[1]} {v[-1]['pairerror']:.3f}" for k, v in res.items() if k[1] in (25, 150)))
    lines = [
        "| known pairs per query | " + " | ".join(f"{l} error" for l in arms) + " | "
        + " | ".join(f"{l} − xpgp" for l in arms[1:]) + " |",
        "|---" * (2 * len(arms)) + "|",
    ]
    for m in SIZES:
        base = [v["pairerror"] for v in res[("xpgp", m)]]
        cells = ["%.4f ± %.3f" % C.mean_std([v["pairerror"] for v in res[(l, m)]]) for l in arms]
        diffs = []
        for l in arms[1:]:
            e = [v["pairerror"] for v in res[(l, m)]]
            diffs.append("%+.4f (max |Δ| per draw %.3f)" % (np.mean(e) - np.mean(base),
                                                           max(abs(u - w) for u, w in zip(e, base))))
        lines.append(f"| {m} | " + " | ".join(cells) + " | " + " | ".join(diffs) + " |")
    lines += ["", C.stamp(t0, f"experiments/pref_wine.py --lowrank {a.lowrank} --reps {a.reps} --queries {a.queries}")]
    text = "\n".join(lines) + "\n"
    os.makedirs(a.out, exist_ok=True)
    with open(f"{a.out}/lowrank.md", "w") as f:
        f.write(text)
    print(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--active-reps", type=int, default=2)
    ap.add_argument("--queries", type=int, default=N_QUERIES)
    ap.add_argument("--out", default="/tmp/ranklet-exp/pref-wine")
    ap.add_argument("--lowrank", default=None, help="M:K[,M:K…]: only dense vs low-rank xpgp")
    a = ap.parse_args()
    if a.lowrank:
        return lowrank_main(a)
    t0 = time.time()
    x, y = load()
    rng = np.random.default_rng(7)
    perm = rng.permutation(len(y))
    res = {}  # (learner, m) -> list of metric dicts (one per query x rep)
    act = {"random": [], "random-all": [], "active": [], "active-ties": []}
    ties_asked = {"random-all": [], "active": [], "active-ties": []}
    for q in range(a.queries):
        rows = perm[q * PER_QUERY:(q + 1) * PER_QUERY]
        d, pairs = query_files(q, x[rows], y[rows], a.out)
        yq = y[rows]
        for rep in range(a.reps):
            r = np.random.default_rng(1000 * q + rep)
            for m in SIZES:
                pick = r.choice(len(pairs), m, replace=False)
                known = [pairs[k] for k in pick]
                chosen = set(pick.tolist())
                test = [p for k, p in enumerate(pairs) if k not in chosen]
                tag = f"r{rep}_m{m}"
                for algo in ("pref-gp", "xpgp"):
                    v, _ = gp_eval(algo, d, known, test, tag)
                    res.setdefault((algo, m), []).append(v)
                res.setdefault(("rankrls", m), []).append(rankrls_eval(d, known, test, tag, rep + 1))
            C.log(f"query {q} rep {rep}: " + "  ".join(
                f"{k[0]}@{k[1]} {v[-1]['pairerror']:.3f}" for k, v in res.items() if k[1] in (25, 150)))
        for rep in range(a.active_reps):
            r = np.random.default_rng(5000 + 1000 * q + rep)
            budget = 25
            # random: 25 known pairs among the strictly ordered pairs
            pick = r.choice(len(pairs), budget, replace=False)
            known = [pairs[k] for k in pick]
            test = [p for k, p in enumerate(pairs) if k not in set(pick.tolist())]
            v, _ = gp_eval("xpgp", d, known, test, f"a{rep}_random")
            act["random"].append(v)
            # random over all pairs of the query (equal quality answered
            # `tie`, dropped by the learner): the counterpart of the active
            # arm, which also chooses among all pairs.
            every = [(i, j) for i in range(len(yq)) for j in range(i + 1, len(yq))]
            lines, n_ties = [], 0
            for k in r.choice(len(every), budget, replace=False):
                i, j = every[k]
                if yq[i] == yq[j]:
                    lines.append(f"{i} {j} tie")
                    n_ties += 1
                else:
                    lines.append(f"{i} {j}" if yq[i] > yq[j] else f"{j} {i}")
            asked = {tuple(int(t) for t in l.split()[:2]) for l in lines}
            test = [p for p in pairs if p not in asked and (p[1], p[0]) not in asked]
            tr, mdl, te = f"{d}/a{rep}_rall.txt", f"{d}/a{rep}_rall.rkl", f"{d}/a{rep}_rall_test.txt"
            with open(tr, "w") as f:
                f.write("\n".join(lines) + "\n")
            P.write_prefs(te, test)
            if n_ties < budget:
                C.run(["train", "--algo", "xpgp", "--data", f"{d}/items.csv", "--prefs", tr, "--relation",
                       f"{d}/knn.rel", "-o", mdl])
                out, _ = C.run(["eval", "-m", mdl, "--data", f"{d}/items.csv", "--prefs", te,
                                "--metric", "pairerror,auc"])
                act["random-all"].append({k: float(v) for k, v in (l.split("\t") for l in out.splitlines())})
            else:
                act["random-all"].append({"pairerror": 0.5, "auc": 0.5})
            ties_asked["random-all"].append(n_ties)
            # active: 5 random, then suggest rounds of 5; ties dropped by
            # the learner (the default) or kept as two opposite judgements.
            start = [pairs[k] for k in r.choice(len(pairs), 5, replace=False)]
            for arm, ties in (("active", "drop"), ("active-ties", "both")):
                v, n_ties = active_run(d, yq, pairs, start, budget, f"a{rep}_{arm}", ties)
                act[arm].append(v)
                ties_asked[arm].append(n_ties)
            C.log(f"query {q} active rep {rep}: random {act['random'][-1]}  active {act['active'][-1]}  "
                  f"active-ties {act['active-ties'][-1]}  ties {ties_asked['active'][-1]}/{ties_asked['active-ties'][-1]}")

    tsv = f"{a.out}/curve.tsv"
    with open(tsv, "w") as f:
        f.write("known pairs per query\t" + "\t".join(
            f"{l}:{s}" for l in ("pref-gp", "xpgp", "rankrls") for s in ("", "lo", "hi")).replace(":\t", "\t") + "\n")
        for m in SIZES:
            cells = []
            for l in ("pref-gp", "xpgp", "rankrls"):
                mu, s = C.mean_std([v["pairerror"] for v in res[(l, m)]])
                cells += [mu, mu - s, mu + s]
            f.write(f"{m}\t" + "\t".join("%.6g" % c for c in cells) + "\n")
    png = os.path.join(C.ROOT, "docs", "img", "pref_wine_error.png")
    C.run(["plot-lines", "--input", tsv, "--title", "wine relevance feedback: error rate on the remaining pairs",
           "--ylabel", "error rate (mean ± std over queries × reps)", "-o", png])

    lines = [
        "## Relevance feedback on wines: PGP vs XPGP vs RankRLS (001 §6 design, Figs. 2 and 4)",
        "",
        C.stamp(t0, f"experiments/pref_wine.sh --reps {a.reps} --active-reps {a.active_reps} --queries {a.queries}"),
        "",
        f"{a.queries} queries of {PER_QUERY} red wines (disjoint, seed 7), attributes standardised per query;",
        "preferences = every pair of wines of different taster quality; relation (xpgp) = the",
        f"{KNN}-nearest-neighbour cosine-similarity graph of the standardised attributes (weights = cosine).",
        f"{a.reps} random draws of the known pairs per query and size (the paper: 20); the remaining pairs",
        "are predicted. Mean ± std over the queries × draws. RankRLS: RBF, γ and λ by 5-fold CV on the",
        "known pairs.",
        "",
        "| known pairs per query | PGP error | XPGP error | RankRLS error | PGP AUC | XPGP AUC |",
        "|---|---|---|---|---|---|",
    ]
    for m in SIZES:
        cell = lambda l, k: "%.3f ± %.3f" % C.mean_std([v[k] for v in res[(l, m)]])
        lines.append(f"| {m} | {cell('pref-gp', 'pairerror')} | {cell('xpgp', 'pairerror')} | "
                     f"{cell('rankrls', 'pairerror')} | {cell('pref-gp', 'auc')} | {cell('xpgp', 'auc')} |")
    lines += [
        "",
        "![error rate vs known pairs](img/pref_wine_error.png)",
        "",
        "Paper (OHSUMED, Fig. 2, as its text states it): XPGP below PGP and SVM at every size, mean error",
        "rates reduced by 12–40 %.",
        "",
        f"**Active vs random (001 Fig. 4 design)**, xpgp, 25 questions per query, {a.active_reps} runs per query:",
        "",
        "| selection | error rate | AUC |",
        "|---|---|---|",
    ]
    for k, name in (("random", "random (strictly ordered pairs)"), ("random-all", "random (all pairs; ties dropped)"),
                    ("active", "active, ties dropped"), ("active-ties", "active, ties kept (`--ties both`)")):
        e = C.mean_std([v["pairerror"] for v in act[k]])
        u = C.mean_std([v["auc"] for v in act[k]])
        lines.append(f"| {name} | {e[0]:.3f} ± {e[1]:.3f} | {u[0]:.3f} ± {u[1]:.3f} |")
    runs = len(act["random"])
    lines += [""]
    for k, name in (("active", "ties dropped"), ("active-ties", "ties kept")):
        better = sum(1 for r_, a_ in zip(act["random"], act[k]) if a_["pairerror"] < r_["pairerror"])
        better_all = sum(1 for r_, a_ in zip(act["random-all"], act[k]) if a_["pairerror"] < r_["pairerror"])
        lines.append(f"Active ({name}) beat random over strictly ordered pairs in {better} of {runs} paired runs "
                     f"and random over all pairs in {better_all}; its questions answered `tie` (equal quality): "
                     f"{sum(ties_asked[k])} of {runs * 20} suggested.")
    lines.append(f"Random over all pairs: {sum(ties_asked['random-all'])} of {runs * 25} questions answered `tie` "
                 "(an arm whose 25 answers were all ties would count as error 0.5; none here unless stated).")
    C.replace_section("pref-wine", "\n".join(lines))


if __name__ == "__main__":
    main()
