"""Generator of the nonlinear query data set of the noise experiment.

Queries of 5–10 items, x ~ N(0, I_5), score
    s = 0.6 + 0.2 * z(f(x)) + 0.1 * b_q + 0.02 * e,
    f(x) = sin(2 x1) + x2 x3 + 0.5 x4^2 − |x5|,
where z() standardises f over the generated rows, b_q ~ N(0, 1) is a
per-query offset (only the order inside a query matters, as in parse
ranking) and e ~ N(0, 1) a small intrinsic noise. The scale (std about
0.2, centred near 0.6) mimics the F-score labels of the parse data, so
the label noise sigma = 0.5 and 1.0 of the experiment is as strong here
as in the paper's Table 1.

Usage: python3 gen_synthetic.py OUT_PREFIX [--seed S] [--queries Q]
writes OUT_PREFIX_train.light and OUT_PREFIX_test.light (Q queries each)."""

import argparse

import numpy as np

import common as C


def f(x):
    return np.sin(2 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.5 * x[:, 3] ** 2 - np.abs(x[:, 4])


def generate(prefix, seed=7, queries=100):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 11, size=2 * queries)
    n = int(sizes.sum())
    x = rng.standard_normal((n, 5))
    fx = f(x)
    z = (fx - fx.mean()) / fx.std()
    qid = np.repeat(np.arange(2 * queries), sizes)
    b = rng.standard_normal(2 * queries)[qid]
    s = 0.6 + 0.2 * z + 0.1 * b + 0.02 * rng.standard_normal(n)
    rows = [(range(1, 6), x[i]) for i in range(n)]
    for part, sel in (("train", qid < queries), ("test", qid >= queries)):
        idx = np.flatnonzero(sel)
        C.write_svmlight(f"{prefix}_{part}.light", s[idx], [str(q + 1) for q in qid[idx]], [rows[i] for i in idx])
    return int((qid < queries).sum()), int((qid >= queries).sum())


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--queries", type=int, default=100)
    a = ap.parse_args()
    print(generate(a.prefix, a.seed, a.queries))
