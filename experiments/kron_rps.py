"""004 §6.1: rock-paper-scissors, conditional ranking of unseen players.

Per repetition and per w in {1, 10, 100}: 100 training players and 100 test
players; a player's strategy (probabilities of rock, paper, scissors) is
drawn from a Dirichlet distribution with concentration w (all three
parameters w, as the issue states). The three probabilities are the
player's node features (linear node kernel). 1000 training games between
distinct unordered pairs of training players (no pair plays twice: the edges
reader refuses a repeated edge); each game gives two edges, +1 from the
winner, -1 from the loser (0 both ways for a tie, so the expected label is
P(u beats v) - P(v beats u), the reciprocal relation rescaled). Test edges:
all ordered pairs of distinct test players, labelled with the reciprocal
relation Q(u, v) = P(u beats v) + P(tie)/2 (Q(u, v) + Q(v, u) = 1; ranking
by the bare P(u beats v) differs when the tie probabilities differ).
Learners: kron-rls and kron-rankrls with the ordinary and the reciprocal
Kronecker kernel, lambda = 2^-30, conjugate gradient (incomplete graph; the
paper used explicit product features with RLScore); metric: conditional
rank loss (004 eq. 4) per test player, averaged.

Usage: kron_rps.py [REPS]   (default 20)

A second table uses Dirichlet(1/w): 004 describes w1 as players with close to
equal move probabilities and w100 as players with a favourite move, the
opposite of what Dirichlet(w) gives (see the note in the results).
"""

import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import log, mean_std, replace_section, run, stamp  # noqa: E402

# beats[a, b] = 1 if move a beats move b (0 rock, 1 paper, 2 scissors).
BEATS = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]], dtype=float)
LAMBDA = 2.0 ** -30
PAPER = {  # Table 1 of 004: c.reg, c.reg (r), c.rank, c.rank (r)
    1: (0.4875, 0.4868, 0.4876, 0.4880),
    10: (0.04172, 0.04145, 0.04519, 0.04291),
    100: (0.001380, 0.001366, 0.001424, 0.001354),
}
RUNS = [("kron-rls", "kron"), ("kron-rls", "recip"), ("kron-rankrls", "kron"), ("kron-rankrls", "recip")]


def write_nodes(path, prefix, p):
    with open(path, "w") as f:
        for i, row in enumerate(p):
            f.write("%s%d %s\n" % (prefix, i, " ".join("%d:%.17g" % (k + 1, v) for k, v in enumerate(row))))


def one(rng, w, tmp, alpha=None):
    a = w if alpha is None else alpha
    ptr = rng.dirichlet([a, a, a], size=100)
    pte = rng.dirichlet([a, a, a], size=100)
    write_nodes(os.path.join(tmp, "train.nodes"), "p", ptr)
    write_nodes(os.path.join(tmp, "test.nodes"), "t", pte)
    iu, ju = np.triu_indices(100, 1)
    pick = rng.choice(len(iu), size=1000, replace=False)
    with open(os.path.join(tmp, "train.edges"), "w") as f:
        for g in pick:
            a, b = iu[g], ju[g]
            ma, mb = rng.choice(3, p=ptr[a]), rng.choice(3, p=ptr[b])
            if ma == mb:
                f.write("p%d p%d 0\np%d p%d 0\n" % (a, b, b, a))
                continue
            win, lose = (a, b) if BEATS[ma, mb] else (b, a)
            f.write("p%d p%d 1\np%d p%d -1\n" % (win, lose, lose, win))
    # Q(i, j) = P(i beats j) + P(tie)/2, the reciprocal relation
    # (Q(i, j) + Q(j, i) = 1); ranked per i as P(i beats j) - P(j beats i).
    pwin = pte @ BEATS @ pte.T
    pwin = 0.5 + 0.5 * (pwin - pwin.T)
    with open(os.path.join(tmp, "test.edges"), "w") as f:
        for i in range(100):
            for j in range(100):
                if i != j:
                    f.write("t%d t%d %.17g\n" % (i, j, pwin[i, j]))
    out = []
    for algo, pair in RUNS:
        model = os.path.join(tmp, "m.rkl")
        run(["train", "--algo", algo, "--pair-kernel", pair, "--edges", os.path.join(tmp, "train.edges"),
             "--nodes", os.path.join(tmp, "train.nodes"), "--kernel", "linear", "--lambda", repr(LAMBDA),
             "--precision", "f64", "-o", model])
        o, _ = run(["eval", "-m", model, "--edges", os.path.join(tmp, "test.edges"), "--nodes",
                    os.path.join(tmp, "test.nodes"), "--metric", "condrankloss"])
        out.append(float(o.split("\t")[1]))
    return out


def table(res, reps, alpha_name):
    lines = [
        "| w | α | c.reg ours | c.reg paper | c.reg (r) ours | c.reg (r) paper | c.rank ours | c.rank paper | "
        "c.rank (r) ours | c.rank (r) paper |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in (1, 10, 100):
        cells = []
        for k in range(4):
            m, s = mean_std(res[w][:, k])
            cells += ["%.4g ± %.2g" % (m, s), "%.4g" % PAPER[w][k]]
        lines.append("| %d | %s | %s |" % (w, alpha_name(w), " | ".join(cells)))
    return lines


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    t0 = time.time()
    rng = np.random.default_rng(20261123)
    res, inv = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for w in (1, 10, 100):
            res[w] = np.array([one(rng, w, tmp) for _ in range(reps)])
            log("w=%d: %s" % (w, res[w].mean(axis=0)))
        for w in (1, 10, 100):
            inv[w] = np.array([one(rng, w, tmp, alpha=1.0 / w) for _ in range(reps)])
            log("w=%d (alpha 1/w): %s" % (w, inv[w].mean(axis=0)))
    lines = [
        "Rock–paper–scissors (004 §6.1, Table 1): conditional rank loss (eq. 4) on 100 unseen test players, "
        "mean ± std over %d repetitions (as the paper), λ = 2⁻³⁰. Per repetition: strategies (rock, paper, "
        "scissors probabilities, the node features) of 100 training and 100 test players ~ Dirichlet(α, α, α); "
        "1000 games between distinct pairs of training players, two edges per game (±1, 0 for a tie); test "
        "label Q(u, v) = P(u beats v) + P(tie)/2 (reciprocal) for every ordered pair of distinct test players. "
        "`train --algo kron-rls|kron-rankrls --pair-kernel kron|recip --nodes … --kernel linear --lambda 2^-30` "
        "(conjugate gradient, ≤ 200 iterations; the paper trained RLScore on explicit product features), "
        "`eval --edges … --nodes … --metric condrankloss`." % reps,
        "",
        "**α = w** (the issue's description):",
        "",
    ]
    lines += table(res, reps, lambda w: str(w))
    lines += ["", "**α = 1/w** (the direction of the paper's words, see below):", ""]
    lines += table(inv, reps, lambda w: "1/%d" % w if w > 1 else "1")
    lines += [
        "",
        "Notes. 004 defers the generator to Pahikkala et al. (2010b) and only says that in w1 players play "
        "the three moves with close to equal probability and in w100 each has a favourite move. A symmetric "
        "Dirichlet(w) does the opposite: at α = 100 every strategy is within a few percent of uniform, the "
        "relation Q − ½ is of second order in those deviations, and a fit from 1000 noisy games gets its sign "
        "right or wrong as a whole (a loss near 0 or near 1 per repetition, hence the large std and a mean "
        "near ½). The α = 1/w table runs the paper's direction; neither reproduces the paper's w1 (≈ 0.49), "
        "whose generator must make strategies even closer to uniform than α = 1. The comparison that "
        "transfers is within a row: reciprocal vs ordinary kernel and regression vs ranking loss. c.reg and "
        "c.reg (r) agree to 4 digits: every game enters in both directions with opposite labels, so the "
        "ordinary-kernel RLS fit is already antisymmetric and the reciprocal kernel only removes the "
        "rounding and early-stopping differences. Cross-check (one repetition, α = 1, done by hand): `rls`/`rankrls` on the 9 explicit product features with the conditioning player as the query (the paper's method) give 0.043845 / 0.068689, kron-rls / kron-rankrls 0.043843 / 0.068689 on the same data.",
        "",
        stamp(t0, "experiments/kron_rps.sh %d" % reps),
    ]
    replace_section("kron-rps", "\n".join(lines))


if __name__ == "__main__":
    main()
