"""004 §6.1: rock-paper-scissors, conditional ranking of unseen players.

Per repetition: 100 training players and 100 test players; a player's
strategy (probabilities of rock, paper, scissors) is drawn from a symmetric
Dirichlet(α) distribution; the three probabilities are the player's node
features (linear node kernel). 1000 training games between distinct
unordered pairs of training players (no pair plays twice: the edges reader
refuses a repeated edge); each game gives two edges, +1 from the winner, -1
from the loser (0 both ways for a tie, so the expected label is
P(u beats v) - P(v beats u), the reciprocal relation rescaled). Test edges:
all ordered pairs of distinct test players, labelled with the reciprocal
relation Q(u, v) = P(u beats v) + P(tie)/2 (Q(u, v) + Q(v, u) = 1).
Learners: kron-rls and kron-rankrls (query weighting `pairs`: every pair of
edges leaving the same player counts once, 004 eq. 6 and RankRLS on the
explicit edges as the paper ran it) with the ordinary and the reciprocal
Kronecker kernel, lambda = 2^-30, conjugate gradient (incomplete graph);
metric: conditional rank loss (004 eq. 4) per test player, averaged.

Three tables: α = w (w read as the Dirichlet concentration), α = 1/w (the direction of the
paper's words), and a sweep of α placing Table 1's rows on our curve. The
first CHECK repetitions of every configuration are also solved on the
explicit 9-dimensional product-feature system in numpy (the paper's own
method: ridge on φ(u, v) = vec(x_u x_vᵀ), the reciprocal features
(φ(u, v) − φ(v, u))/2, per-player centring for the ranking loss with pair
weighting), and the test predictions of both are compared.

Usage: kron_rps.py [REPS] [SWEEP_REPS] [CHECK]   (defaults 100 20 2)
"""

import os
import re
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


SWEEP = (300, 100, 30, 10, 3, 1, 0.3, 0.1, 0.03, 0.01)


def write_nodes(path, prefix, p):
    with open(path, "w") as f:
        for i, row in enumerate(p):
            f.write("%s%d %s\n" % (prefix, i, " ".join("%d:%.17g" % (k + 1, v) for k, v in enumerate(row))))


def explicit(ptr, train, y, pte, test, algo, pair):
    """The paper's method: ridge (λ = 2^-30) on the explicit product
    features, per-player centring (pair weighting) for the ranking loss;
    solved by an SVD of the 2000 × 9 design. Returns the test scores."""
    def feats(p, edges):
        f = np.array([np.outer(p[a], p[b]).ravel() for a, b in edges])
        if pair == "recip":
            f = 0.5 * (f - np.array([np.outer(p[b], p[a]).ravel() for a, b in edges]))
        return f
    x, t = feats(ptr, train), y.copy()
    if algo == "kron-rankrls":
        first = np.array([a for a, _ in train])
        for a in np.unique(first):
            m = first == a
            x[m] -= x[m].mean(axis=0)
            t[m] -= t[m].mean()
    # Pair weighting: the per-player block of L is l·C, so each centred
    # row enters with weight l (its player's edge count): scale by sqrt(l).
    if algo == "kron-rankrls":
        cnt = np.bincount(first, minlength=len(ptr))[first].astype(float)
        x, t = x * np.sqrt(cnt)[:, None], t * np.sqrt(cnt)
    u, sv, vt = np.linalg.svd(x, full_matrices=False)
    w = vt.T @ ((sv / (sv * sv + LAMBDA)) * (u.T @ t))
    return feats(pte, test) @ w


def rank_loss(truth, score, n):
    """004 eq. 4 per conditioning player (ties in the score count ½), averaged."""
    tot, cnt = 0.0, 0
    for i in range(n):
        m = np.arange(n) != i
        t, f = truth[i, m], score[i, m]
        comp = (t[:, None] - t[None, :]) > 0
        c = comp.sum()
        if c == 0:
            continue
        df = f[:, None] - f[None, :]
        tot += (((df < 0) & comp).sum() + 0.5 * ((df == 0) & comp).sum()) / c
        cnt += 1
    return tot / cnt


def one(rng, alpha, tmp, check=False):
    """One repetition: losses of the four learners (RUNS order); with
    `check`, also (max |score − explicit score| / max |explicit score|,
    |loss − explicit loss|) per learner, and the CG iterations."""
    ptr = rng.dirichlet([alpha] * 3, size=100)
    pte = rng.dirichlet([alpha] * 3, size=100)
    write_nodes(os.path.join(tmp, "train.nodes"), "p", ptr)
    write_nodes(os.path.join(tmp, "test.nodes"), "t", pte)
    iu, ju = np.triu_indices(100, 1)
    pick = rng.choice(len(iu), size=1000, replace=False)
    train, ys = [], []
    with open(os.path.join(tmp, "train.edges"), "w") as f:
        for g in pick:
            a, b = iu[g], ju[g]
            ma, mb = rng.choice(3, p=ptr[a]), rng.choice(3, p=ptr[b])
            if ma == mb:
                win, lose, lab = a, b, 0.0
            else:
                win, lose, lab = (a, b, 1.0) if BEATS[ma, mb] else (b, a, 1.0)
            f.write("p%d p%d %g\np%d p%d %g\n" % (win, lose, lab, lose, win, -lab + 0.0))
            train += [(win, lose), (lose, win)]
            ys += [lab, -lab]
    # Q(i, j) = P(i beats j) + P(tie)/2, the reciprocal relation
    # (Q(i, j) + Q(j, i) = 1).
    pwin = pte @ BEATS @ pte.T
    q = 0.5 + 0.5 * (pwin - pwin.T)
    test = [(i, j) for i in range(100) for j in range(100) if i != j]
    with open(os.path.join(tmp, "test.edges"), "w") as f:
        for i, j in test:
            f.write("t%d t%d %.17g\n" % (i, j, q[i, j]))
    out, chk, iters = [], [], 0
    for algo, pair in RUNS:
        model = os.path.join(tmp, "m.rkl")
        _, err = run(["train", "--algo", algo, "--pair-kernel", pair, "--query-weight", "pairs",
                      "--edges", os.path.join(tmp, "train.edges"), "--nodes", os.path.join(tmp, "train.nodes"),
                      "--kernel", "linear", "--lambda", repr(LAMBDA), "--precision", "f64", "-o", model])
        m = re.search(r"CG: (\d+) iterations", err)
        iters = max(iters, int(m.group(1)) if m else 0)
        o, _ = run(["eval", "-m", model, "--edges", os.path.join(tmp, "test.edges"), "--nodes",
                    os.path.join(tmp, "test.nodes"), "--metric", "condrankloss"])
        out.append(float(o.split("\t")[1]))
        if check:
            o, _ = run(["score", "-m", model, "--edges", os.path.join(tmp, "test.edges"), "--nodes",
                        os.path.join(tmp, "test.nodes")])
            ours = np.array([float(v) for v in o.split()])
            ref = explicit(ptr, train, np.array(ys), pte, test, algo, pair)
            s_ref = np.zeros((100, 100))
            for (i, j), v in zip(test, ref):
                s_ref[i, j] = v
            chk.append((np.abs(ours - ref).max() / np.abs(ref).max(), abs(out[-1] - rank_loss(q, s_ref, 100))))
    return out, chk, iters


def table(res, name, alphas, paper=True):
    sweep = name == "α"  # the key is α itself: one column
    head = "| %s |%s c.reg | c.reg (r) | c.rank | c.rank (r) |" % (name, "" if sweep else " α |")
    lines = [head, "|---|---|---|---|---|" + ("" if sweep else "---|")]
    for key, a in alphas:
        cells = []
        for k in range(4):
            m, s = mean_std(res[key][:, k])
            cell = "%.4g ± %.2g" % (m, s)
            if paper and key in PAPER:
                cell += " (paper %.4g)" % PAPER[key][k]
            cells.append(cell)
        lines.append("| %s |%s %s |" % (key, "" if sweep else " %s |" % a, " | ".join(cells)))
    return lines


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    sweep_reps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    check = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    t0 = time.time()
    rng = np.random.default_rng(20261123)
    res, inv, sweep = {}, {}, {}
    worst_score, worst_loss, max_iters = 0.0, 0.0, 0

    def block(alpha, n):
        nonlocal worst_score, worst_loss, max_iters
        rows = []
        for r in range(n):
            o, c, it = one(rng, alpha, tmp, check=r < check)
            rows.append(o)
            max_iters = max(max_iters, it)
            for ds, dl in c:
                worst_score, worst_loss = max(worst_score, ds), max(worst_loss, dl)
        return np.array(rows)

    with tempfile.TemporaryDirectory() as tmp:
        for w in (1, 10, 100):
            res[w] = block(float(w), reps)
            log("w=%d (alpha w): %s" % (w, res[w].mean(axis=0)))
        for w in (1, 10, 100):
            inv[w] = block(1.0 / w, reps)
            log("w=%d (alpha 1/w): %s" % (w, inv[w].mean(axis=0)))
        for a in SWEEP:
            sweep[a] = block(a, sweep_reps)
            log("alpha=%g: %s" % (a, sweep[a].mean(axis=0)))
    lines = [
        "Rock–paper–scissors (004 §6.1, Table 1): conditional rank loss (eq. 4) on 100 unseen test players, "
        "mean ± std over %d repetitions (the paper: 100), λ = 2⁻³⁰. Per repetition: strategies (rock, paper, "
        "scissors probabilities, the node features) of 100 training and 100 test players ~ Dirichlet(α, α, α); "
        "1000 games between distinct pairs of training players, two edges per game (±1, 0 for a tie); test "
        "label Q(u, v) = P(u beats v) + P(tie)/2 (reciprocal) for every ordered pair of distinct test players. "
        "`train --algo kron-rls|kron-rankrls --pair-kernel kron|recip --query-weight pairs --nodes … --kernel linear "
        "--lambda 2^-30` (conjugate gradient, ≤ 200 iterations, at most %d run; the paper trained RLScore on "
        "explicit product features), `eval --edges … --nodes … --metric condrankloss`." % (reps, max_iters),
        "",
        "**α = w** (w read as the Dirichlet concentration):",
        "",
    ]
    lines += table(res, "w", [(w, str(w)) for w in (1, 10, 100)])
    lines += ["", "**α = 1/w** (the direction of the paper's words: w1 near-uniform players, w100 a favourite move):", ""]
    lines += table(inv, "w", [(w, "1/%d" % w if w > 1 else "1") for w in (1, 10, 100)])
    lines += ["", "**Sweep of α** (%d repetitions each), to place Table 1's rows on our curve:" % sweep_reps, ""]
    lines += table(sweep, "α", [(a, "%g" % a) for a in SWEEP], paper=False)
    lines += [
        "",
        "Check against the explicit system (the paper's own method): on the first %d repetitions of every "
        "configuration above (%d data sets, 4 learners each), numpy ridge on the 9 explicit product features "
        "(reciprocal: (φ(u, v) − φ(v, u))/2; ranking: per-player centring with pair weights) gives test scores "
        "within %.2g of ours relative to the largest score, and conditional rank losses within %.2g."
        % (check, check * (6 + len(SWEEP)), worst_score, worst_loss),
        "",
        NOTES,
        "",
        stamp(t0, "experiments/kron_rps.sh %d %d %d" % (reps, sweep_reps, check)),
    ]
    replace_section("kron-rps", "\n".join(lines))


NOTES = (
    "Reading. (1) The learner and the metric are not the cause: the check above solves the paper's own "
    "formulation (RLS/RankRLS on explicit product features) independently of ranklet, and eq. 4 is recomputed "
    "in numpy. Their small differences are the rounding floor of the dual at λ = 2⁻³⁰: conjugate gradient works "
    "on dual coefficients of size ~1/λ, and its recursive residual drifts from the true one by about "
    "ε·‖K‖·‖a‖ (core `linalg::cg` docs), ~10⁻⁴ of the scores here — immaterial next to the spread between "
    "repetitions, but of the order of the w100-level losses themselves. (2) The test relation must be the "
    "reciprocal Q (what the ±1/0 game labels estimate, and bilinear in the strategies, so a linear Kronecker "
    "model can be exact): ranking by the bare P(u beats v), which the paper's sentence names, adds the "
    "symmetric tie term −½(p_u − ⅓)·(p_v − ⅓) that no model trained on these labels sees, and floors every "
    "learner near 0.17 (numpy check, Dirichlet α = 1, 10 repetitions) — far above Table 1's w10 and w100. "
    "(3) The generator is what differs. 004 defers it to Pahikkala et al. (2010b) and says only that w1 "
    "players play the three moves with close to equal probability and w100 players have a favourite move. "
    "Dirichlet(w) does the opposite (at α = 100 every strategy is within a few percent of uniform; Q − ½ is "
    "second order in those deviations, and a fit from 1000 noisy games gets the sign of the whole relation "
    "right or wrong — losses near 0 or 1 per repetition, hence the std ≈ 0.2 and a mean near ½). The sweep "
    "places Table 1 on our curve: w1 (0.49) is where α ≥ 30–100 (near-uniform players, chance level), w10 "
    "(0.042) at α ≈ 1, w100 (0.0014) between α = 0.1 and 0.03. No single Dirichlet map of w gives all three "
    "rows (α = 1/w gets w10 and w100 ten times too easy and w1 far too easy); the generator of 2010b is not "
    "available here, so Table 1's absolute values are **not reproduced**; what the sweep shows is that our "
    "learners reach the paper's loss levels at the corresponding strategy spreads. (4) Within a row: "
    "c.reg and c.reg (r) are equal up to the rounding above, and must be — every game enters in both "
    "directions with opposite labels, so the ordinary-kernel RLS solution is already antisymmetric (its "
    "mirror image −S·w solves the same problem, and the solution is unique); Table 1's small differences in "
    "that column therefore come from something outside the model (their solver's rounding at λ = 2⁻³⁰, or "
    "data not entered symmetrically). The ranking loss is not better than regression here, as in the paper "
    "(\"regression proves to be competitive\"), and the reciprocal kernel lowers RankRLS's loss a little "
    "in most rows (within the spread between repetitions), as in the paper's Table 1."
)


if __name__ == "__main__":
    main()
