#!/usr/bin/env python3
"""Overhead of the Python package over the library, side by side in one run.

  fit      linear RankRLS (λ = 1, f32 model) on the arrays of `ranklet bench
           train` (n × d from splitmix64 seed 42, queries of 10 consecutive
           rows; rebuilt by bench/rankers_numpy.py's `data`), interleaved
           round by round:
             python f64 / f32   `ranklet.RankRLS(alpha=1).fit(X, y, qid)` from
                                a C-ordered float64 (float32) numpy array;
             driver arrays      `ranklet bench train --driver arrays` (best of
                                3 in one process per round): the same
                                row driver from a Rust row-major Vec (dense
                                table built from it, fit, model bytes) — the
                                Python path without Python;
             driver dataset     `--driver dataset`: `fit_rows` from the data set
                                a reader gives (the CLI's `train --data` after
                                parsing);
             fit only           `ranklet bench train`: the fit alone on a
                                prebuilt table.
           Best-of-N wall time for each, and the CPU time (user + system, all
           threads) of the Python fits.
  predict  µs per `predict` call on 100 rows and on 1 row of that model: the
           estimator (scikit-learn's input checks + the extension), and the
           extension's `score` alone.

Usage: RANKLET_BIN=target/release/ranklet PYTHONPATH=python \
           python3 bench/python_overhead.py [N] [D] [ROUNDS]
Prints one JSON line per measurement.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rankers_numpy import data  # noqa: E402

import ranklet  # noqa: E402
from ranklet import _ranklet  # noqa: E402


def cli(n, d, driver, repeat=3):
    args = [os.environ.get("RANKLET_BIN", "ranklet"), "bench", "train", "--algo", "rankrls", "--kernel", "linear",
            "--n", str(n), "--d", str(d), "--query-size", "10", "--lambda", "1", "--repeat", str(repeat)]
    if driver != "fit only":
        args += ["--driver", driver.split()[1]]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["min_s"]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    d = int(sys.argv[2]) if len(sys.argv) > 2 else 136
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    X, y = data(n, d, 42)
    X32 = X.astype(np.float32)
    qid = np.arange(n) // 10
    est = ranklet.RankRLS(alpha=1.0)
    est.fit(X, y, qid=qid)  # warm-up
    wall = {k: [] for k in ["python f64", "python f32", "driver arrays", "driver dataset", "fit only"]}
    cpu = {"python f64": [], "python f32": []}
    for _ in range(rounds):
        for what, x in [("python f64", X), ("python f32", X32)]:
            t0, c0 = time.perf_counter(), time.process_time()
            est.fit(x, y, qid=qid)
            wall[what].append(time.perf_counter() - t0)
            cpu[what].append(time.process_time() - c0)
        for what in ["driver arrays", "driver dataset", "fit only"]:
            wall[what].append(cli(n, d, what))
    base = min(wall["driver arrays"])
    for what, ts in wall.items():
        line = {"what": f"fit rankrls linear: {what}", "n": n, "d": d, "rounds": rounds, "best_s": min(ts),
                "median_s": sorted(ts)[len(ts) // 2], "over_driver_arrays": min(ts) / base}
        if what in cpu:
            line["cpu_best_s"] = min(cpu[what])
        print(json.dumps(line), flush=True)

    model = est.to_bytes()
    calls = 2000
    for k in (100, 1):
        rows = np.ascontiguousarray(X[:k])
        for what, f in [("predict (estimator)", lambda: est.predict(rows)),
                        ("score (extension)", lambda: _ranklet.score(model, rows, None, None))]:
            f()
            best = min(_timed(f, calls) for _ in range(5))
            print(json.dumps({"what": what, "rows": k, "d": d, "us_per_call_best": best * 1e6}), flush=True)


def _timed(f, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        f()
    return (time.perf_counter() - t0) / calls


if __name__ == "__main__":
    main()
