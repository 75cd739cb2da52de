#!/usr/bin/env python3
"""RankRLS with the RBF kernel from Python: ranklet against RLScore's
`QueryRankRLS`, side by side in one run, on the same arrays.

Data: `bench/rankers_numpy.py`'s `data(n, 10, 42)` (the arrays of `ranklet
bench train`), queries of 10 consecutive rows; kernel exp(−0.1‖x − x'‖²),
λ = 1. ranklet: `ranklet.RankRLS(alpha=1, kernel="rbf", gamma=0.1,
precision="f64").fit(X, y, qid)`; RLScore: `QueryRankRLS(X, y, qid,
regparam=1, kernel="GaussianKernel", gamma=0.1)`, run in its own venv (it
is not a dependency of the repository; install it as
/work/shared/anchors/README.md says) by this same script with the argument
`rlscore`. Rounds alternate the two; best-of-N wall time and CPU time of the
fit. Predictions on the training rows are compared (max |difference|, and
after removing the mean, since a ranking model is defined up to a constant).

Usage: PYTHONPATH=python RLSCORE_PYTHON=/tmp/rlsvenv/bin/python \
           target/pyenv/bin/python bench/rlscore_rbf.py [N] [ROUNDS]
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rankers_numpy import data  # noqa: E402


def arrays(n):
    X, y = data(n, 10, 42)
    return X, y, np.arange(n) // 10


def run_rlscore(n, out):
    from rlscore.learner import QueryRankRLS

    X, y, qid = arrays(n)
    t0, c0 = time.perf_counter(), time.process_time()
    learner = QueryRankRLS(X, y, qid, regparam=1.0, kernel="GaussianKernel", gamma=0.1)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    np.save(out, np.asarray(learner.predict(X)).reshape(-1))
    print(json.dumps({"wall_s": wall, "cpu_s": cpu}))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    import ranklet

    X, y, qid = arrays(n)
    est = ranklet.RankRLS(alpha=1.0, kernel="rbf", gamma=0.1, precision="f64")
    py = os.environ.get("RLSCORE_PYTHON", "/tmp/rlsvenv/bin/python")
    times = {"ranklet": [], "rlscore": []}
    cpu = {"ranklet": [], "rlscore": []}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rls.npy")
        for _ in range(rounds):
            t0, c0 = time.perf_counter(), time.process_time()
            est.fit(X, y, qid=qid)
            times["ranklet"].append(time.perf_counter() - t0)
            cpu["ranklet"].append(time.process_time() - c0)
            r = subprocess.run([py, os.path.abspath(__file__), "rlscore", str(n), out],
                               capture_output=True, text=True, check=True)
            line = json.loads(r.stdout.strip().splitlines()[-1])
            times["rlscore"].append(line["wall_s"])
            cpu["rlscore"].append(line["cpu_s"])
        theirs = np.load(out)
    ours = est.predict(X)
    diff = np.max(np.abs(ours - theirs))
    diff_c = np.max(np.abs((ours - ours.mean()) - (theirs - theirs.mean())))
    print(json.dumps({"n": n, "rounds": rounds, "ranklet_best_s": min(times["ranklet"]),
                      "rlscore_best_s": min(times["rlscore"]), "ratio": min(times["ranklet"]) / min(times["rlscore"]),
                      "ranklet_cpu_best_s": min(cpu["ranklet"]), "rlscore_cpu_best_s": min(cpu["rlscore"]),
                      "max_abs_diff": float(diff), "max_abs_diff_centred": float(diff_c),
                      "max_abs_score": float(np.max(np.abs(theirs)))}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "rlscore":
        run_rlscore(int(sys.argv[2]), sys.argv[3])
    else:
        main()
