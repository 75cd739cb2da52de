#!/usr/bin/env python3
"""Overhead of the Python package over the library, side by side in one run.

  fit      linear RankRLS (λ = 1) on the arrays of `ranklet bench train`
           (n × d from splitmix64 seed 42, queries of 10 consecutive rows;
           rebuilt by bench/rankers_numpy.py's `data`): the median time of
           `ranklet.RankRLS(alpha=1).fit(X, y, qid)` from a numpy array, and
           the median of `ranklet bench train` (the library's fit on the same
           arrays already in a table, no Python) in the same run.
  predict  µs per `predict` call on 100 rows of that model: the estimator
           (scikit-learn's input checks + the extension), and the extension's
           `score` alone.

Usage: RANKLET_BIN=target/release/ranklet PYTHONPATH=python \
           python3 bench/python_overhead.py [N] [D] [REPEAT]
Prints one JSON line per measurement.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rankers_numpy import data, timed  # noqa: E402

import ranklet  # noqa: E402
from ranklet import _ranklet  # noqa: E402


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 136
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    X, y = data(n, d, 42)
    qid = np.arange(n) // 10
    est = ranklet.RankRLS(alpha=1.0)
    py_s = timed(lambda: est.fit(X, y, qid=qid), repeat)
    out = subprocess.run(
        [os.environ.get("RANKLET_BIN", "ranklet"), "bench", "train", "--algo", "rankrls", "--kernel", "linear",
         "--n", str(n), "--d", str(d), "--query-size", "10", "--lambda", "1", "--repeat", str(repeat)],
        capture_output=True, text=True, check=True,
    ).stdout
    cli_s = json.loads(out.strip().splitlines()[-1])["median_s"]
    print(json.dumps({"what": "fit rankrls linear", "n": n, "d": d, "python_median_s": py_s,
                      "library_median_s": cli_s, "ratio": py_s / cli_s}))

    rows = np.ascontiguousarray(X[:100])
    model = est.to_bytes()
    calls = 2000
    for what, f in [("predict (estimator)", lambda: est.predict(rows)),
                    ("score (extension)", lambda: _ranklet.score(model, rows, None, None))]:
        f()
        per_call = timed(lambda: [f() for _ in range(calls)], 5) / calls
        print(json.dumps({"what": what, "rows": 100, "d": d, "us_per_call": per_call * 1e6}))


if __name__ == "__main__":
    main()
