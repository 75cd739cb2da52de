#!/usr/bin/env python3
"""SVMlight data whose RBF kernel spectrum decays slowly (the hard case for
top-k eigensolvers): x in R^20 ~ N(0, I), y = tanh(w.x / 4) + 0.3 noise,
queries of 20 rows. Used with --kernel rbf:0.025 in docs/performance.md.

    python3 bench/hard_rbf_data.py 2000 > /tmp/hard_2000.light
"""
import math
import random
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
r = random.Random(7)
w = [r.gauss(0, 1) for _ in range(20)]
out = sys.stdout
for i in range(n):
    x = [r.gauss(0, 1) for _ in range(20)]
    y = math.tanh(sum(a * b for a, b in zip(x, w)) / 4) + 0.3 * r.gauss(0, 1)
    out.write("%.6f qid:%d %s\n" % (y, i // 20, " ".join("%d:%.6f" % (j + 1, x[j]) for j in range(20))))
