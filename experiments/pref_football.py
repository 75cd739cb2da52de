"""Premier League results 2008/9-2012/13 (BradleyTerry2's football data,
GPL-2, read in place from the PAIRED_COMPARISONS directory, as
pref_lizards.py): teams only, with the home advantage as a covariate.

Items: each team twice, at home (`Ars@h`) and away (`Ars@a`); a match is a
judgement between the home item of the home team and the away item of the
away team (the winner first; a draw is `tie`, which the probit learners
drop: draws are counted and excluded from the test metrics).
- pref-gp: attributes = one-hot team (29) and the home indicator, RBF
  kernel, hyperparameters by the evidence;
- xpgp: attribute = the home indicator only, and the bipartite relation
  item-team (`--relation-groups`: both items of a team are related, 001 §7),
  so the team strength comes from the relation kernel and the home effect
  from the attribute kernel;
- Bradley-Terry with home advantage: P(home wins) = sigmoid(a_home - a_away +
  h), abilities and h by maximum likelihood with a tiny ridge (1e-3) for
  identifiability (the abilities are defined up to a constant).
5-fold CV over the decisive matches (seeds 1..R), draws always left out.

Usage: python3 experiments/pref_football.py [--reps R] [--out DIR]"""

import argparse
import os
import time

import numpy as np

import common as C
import pref_common as P
import pref_lizards as L


def load(d):
    with open(os.path.join(d, "football.tsv")) as f:
        f.readline()
        rows = [l.split() for l in f if l.strip()]
    teams = sorted({r[1] for r in rows} | {r[2] for r in rows})
    t = {s: i for i, s in enumerate(teams)}
    games = [(t[r[1]], t[r[2]], int(r[3])) for r in rows]
    return teams, games


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--out", default="/tmp/ranklet-exp/pref-football")
    a = ap.parse_args()
    t0 = time.time()
    os.makedirs(a.out, exist_ok=True)
    d = L.data_dir()
    teams, games = load(d)
    nt = len(teams)
    ids = [f"{s}@h" for s in teams] + [f"{s}@a" for s in teams]
    onehot = np.vstack([np.hstack([np.eye(nt), np.ones((nt, 1))]), np.hstack([np.eye(nt), np.zeros((nt, 1))])])
    P.write_items(f"{a.out}/items_onehot.csv", ids, onehot)
    P.write_items(f"{a.out}/items_home.csv", ids, onehot[:, -1:], ["home"])
    with open(f"{a.out}/team.groups", "w") as f:
        for k, s in enumerate(ids):
            f.write(f"{s} {teams[k % nt]}\n")
    decisive = [(h, w, r) for h, w, r in games if r != 0]
    draws = len(games) - len(decisive)
    # judgement as (winner item, loser item)
    judg = [(h, nt + w) if r > 0 else (nt + w, h) for h, w, r in decisive]
    res = {}
    fits = []
    for rep in range(a.reps):
        rng = np.random.default_rng(rep + 1)
        folds = np.array_split(rng.permutation(len(judg)), 5)
        for k, f in enumerate(folds):
            fs = set(f.tolist())
            train = [judg[i] for i in range(len(judg)) if i not in fs]
            test = [judg[i] for i in f]
            tr, te = f"{a.out}/train.txt", f"{a.out}/test.txt"
            P.write_prefs(tr, train, ids)
            P.write_prefs(te, test, ids)
            m = f"{a.out}/m.rkl"
            err = P.train("pref-gp", f"{a.out}/items_onehot.csv", tr, m)
            res.setdefault("pref-gp (one-hot team + home)", []).append(P.evaluate(m, f"{a.out}/items_onehot.csv", te))
            err2 = P.train("xpgp", f"{a.out}/items_home.csv", tr, m, ["--relation-groups", f"{a.out}/team.groups"])
            res.setdefault("xpgp (home attribute + team relation)", []).append(P.evaluate(m, f"{a.out}/items_home.csv", te))
            fits.append((err.strip().splitlines()[0], err2.strip().splitlines()[0]))
            # Bradley-Terry with home advantage: columns = teams, then h.
            def design(js):
                x = np.zeros((len(js), nt + 1))
                for r_, (wi, li) in enumerate(js):
                    x[r_, wi % nt] += 1.0
                    x[r_, li % nt] -= 1.0
                    x[r_, nt] = 1.0 if wi < nt else -1.0  # the winner was at home
                return x
            beta, _ = P.bradley_terry(design(train), l2=1e-3)
            p = 1.0 / (1.0 + np.exp(-(design(test) @ beta)))
            res.setdefault("Bradley–Terry + home advantage (ML)", []).append(P.metrics_from_prob(p))
            C.log(f"rep {rep} fold {k}: " + "  ".join(f"{n.split(' ')[0]} {v[-1]['pairerror']:.3f}" for n, v in res.items()))
    lines = [
        "## Premier League results: preference GPs vs Bradley–Terry with home advantage",
        "",
        C.stamp(t0, f"experiments/pref_football.sh --reps {a.reps}"),
        "",
        f"Data: BradleyTerry2's `football` (read in place from `{os.path.relpath(d, C.ROOT)}`; GPL-2): "
        f"{len(games)} matches, {nt} teams, 5 seasons pooled; {draws} draws left out (ties are dropped by",
        f"the probit likelihood), {len(decisive)} decisive matches in 5-fold CV × {a.reps} shuffles.",
        "Items = team × venue; see `experiments/pref_football.py` for the two GP encodings.",
        "",
        "| learner | pair error | AUC | log loss |",
        "|---|---|---|---|",
    ]
    for name, v in res.items():
        cells = []
        for mname in ("pairerror", "auc", "logloss"):
            mu, s = C.mean_std([r[mname] for r in v])
            cells.append(f"{mu:.3f} ± {s:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", f"First fold's fits: `{fits[0][0]}`; `{fits[0][1]}`."]
    C.replace_section("pref-football", "\n".join(lines))


if __name__ == "__main__":
    main()
