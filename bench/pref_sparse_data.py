"""Synthetic preference data for bench/pref_sparse.sh: the setup of
`ranklet bench pref` (d features uniform in [0, 1), latent
f(x) = Σ_k sin(2π·x_k), each judgement between a random pair i ≠ j won by
the larger of f + (u₁ + u₂ + u₃ − 1.5) drawn per item and pair), written as
an items CSV and two preference files: `train.txt` (M judgements) and
`test.txt` (T held-out judgements between random pairs, same noise).
Plain Python (no numpy needed).

    python3 bench/pref_sparse_data.py DIR N M T [D] [SEED]
"""
import math
import random
import sys

out, n, m, t = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
d = int(sys.argv[5]) if len(sys.argv) > 5 else 5
rng = random.Random(int(sys.argv[6]) if len(sys.argv) > 6 else 1)
x = [[rng.random() for _ in range(d)] for _ in range(n)]
f = [sum(math.sin(2 * math.pi * v) for v in row) for row in x]


def noise():
    return rng.random() + rng.random() + rng.random() - 1.5


def judgements(k):
    for _ in range(k):
        i = rng.randrange(n)
        j = (i + 1 + rng.randrange(n - 1)) % n
        yield (i, j) if f[i] + noise() >= f[j] + noise() else (j, i)


with open(f"{out}/items.csv", "w") as fh:
    fh.write("id," + ",".join(f"x{k}" for k in range(d)) + "\n")
    for a in range(n):
        fh.write(f"i{a}," + ",".join(repr(v) for v in x[a]) + "\n")
for name, k in (("train.txt", m), ("test.txt", t)):
    with open(f"{out}/{name}", "w") as fh:
        fh.writelines(f"i{a} i{b}\n" for a, b in judgements(k))
