#!/usr/bin/env python3
"""Summarise and plot wine.sh results: mean ρ over folds and repetitions
against K′ for each method and (N, L) setting (003 Fig. 4 layout).
Usage: plot_wine.py RESULTS.tsv SUMMARY.tsv PLOT.png"""
import sys

import numpy as np

res, summ, png = sys.argv[1:4]
rows = [l.rstrip("\n").split("\t") for l in open(res)][1:]
settings = sorted({(r[0], int(r[1]), int(r[2])) for r in rows})
methods = ["KRCDR", "SRCDR", "PCA", "ORIG"]
table = {}
for s, N, L in settings:
    for m in methods:
        for k in range(1, 12):
            v = [float(r[7]) for r in rows if r[0] == s and r[5] == m and int(r[6]) == k and r[7] != "NA"]
            na = sum(1 for r in rows if r[0] == s and r[5] == m and int(r[6]) == k and r[7] == "NA")
            if v or na:
                table[(s, m, k)] = (np.mean(v) if v else float("nan"), np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan"), len(v), na)
with open(summ, "w") as f:
    f.write("setting\tN\tL\tK\t" + "\t".join(f"{m}_rho\t{m}_se" for m in methods[:3]) + "\tORIG_rho\tORIG_se\n")
    for s, N, L in settings:
        orig = table[(s, "ORIG", 11)]
        for k in range(1, 12):
            cells = []
            for m in methods[:3]:
                mu, se, n, na = table.get((s, m, k), (float("nan"),) * 2 + (0, 0))
                cells.append(f"{mu:.4f}\t{se:.4f}" + (f" ({na} failed)" if na else ""))
            f.write(f"{s}\t{N}\t{L}\t{k}\t" + "\t".join(cells) + f"\t{orig[0]:.4f}\t{orig[1]:.4f}\n")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("matplotlib is not installed: no plot (the summary is written)")
fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings), 3.6), sharey=False)
for ax, (s, N, L) in zip(np.atleast_1d(axes), settings):
    ks = np.arange(1, 12)
    for m, st in (("KRCDR", "o-"), ("SRCDR", "s--"), ("PCA", "^-")):
        ax.plot(ks, [table[(s, m, k)][0] for k in ks], st, label=m, ms=4)
    ax.axhline(table[(s, "ORIG", 11)][0], color="k", ls=":", label="ORIG")
    ax.set_title(f"({s}) N={N}, L={L}")
    ax.set_xlabel("K′")
    ax.set_ylabel("mean ρ (held-out orders)")
    ax.grid(alpha=0.3)
np.atleast_1d(axes)[0].legend(loc="lower right")
fig.suptitle("ERR on red wine-quality orders after RCDR / PCA (003 Fig. 4 design)")
fig.tight_layout()
fig.savefig(png, dpi=110)
