#!/usr/bin/env python3
"""numpy side of bench/rankers_vs_numpy.sh.

Rebuilds the data of `ranklet bench train` (splitmix64, seed S: n·d
coordinates uniform in [0, 1) point by point, then n scores; queries are
consecutive blocks of `query_size` rows) and times, on the same arrays:

  eigh N        numpy.linalg.eigh of the RBF kernel exp(-0.1‖xi-xj‖²) (K built
                outside the timing) — the paper's KPCRank needs this full
                decomposition, and it is the yardstick the rankers' speed goals in
                docs/performance.md are stated against;
  linear N D    the closed form of linear RankRLS with the query-wise graph
                L = blockdiag(I − 11ᵀ/l_q): w = solve(XᵀLX + λI, XᵀLs), with LX
                formed by subtracting query means (np.add.reduceat) and XᵀLX
                by one BLAS product.
  interleaved N D ROUNDS T -- CMD…
                the file → model comparison: per round, numpy's `linear N D`
                closed form (the fastest of three calls in this process) and
                then CMD once as a
                separate process with RAYON_NUM_THREADS=T (wall time around
                it), so that both sides see the same machine speed; prints
                both lists, their medians and the median of the rounds'
                ratios;
  svmlight N D PATH
                writes those arrays as an SVMlight/LETOR file for the file →
                model rows (label = score, qid = query block, every feature
                with 6 decimals, as LETOR files hold them); prints nothing.

Prints one JSON line per measurement: {"what":…, "n":…, "median_s":…}.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

MASK = (1 << 64) - 1


def splitmix(seed, count):
    out = np.empty(count)
    s = seed
    for i in range(count):
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out[i] = (z >> 11) * (1.0 / (1 << 53))
    return out


def splitmix_fast(seed, count):
    """Vectorised splitmix64 (uint64 arithmetic wraps mod 2^64)."""
    with np.errstate(over="ignore"):
        k = np.arange(1, count + 1, dtype=np.uint64)
        s = np.uint64(seed) + k * np.uint64(0x9E3779B97F4A7C15)
        z = s
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def data(n, d, seed):
    v = splitmix_fast(seed, n * d + n)
    return v[: n * d].reshape(n, d), v[n * d :]


def linear_closed_form(n, d, seed, lam=1.0):
    """numpy's closed form of linear RankRLS on the bench arrays (queries of 10)."""
    x, s = data(n, d, seed)
    starts = np.arange(0, n, 10)
    sizes = np.diff(np.append(starts, n))

    def closed_form():
        xm = np.repeat(np.add.reduceat(x, starts, axis=0) / sizes[:, None], sizes, axis=0)
        sm = np.repeat(np.add.reduceat(s, starts) / sizes, sizes)
        lx = x - xm
        a = lx.T @ lx + lam * np.eye(d)
        return np.linalg.solve(a, lx.T @ (s - sm))

    return closed_form


def timed(f, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    assert np.allclose(splitmix(42, 5), splitmix_fast(42, 5), rtol=0, atol=0)
    what, n = sys.argv[1], int(sys.argv[2])
    repeat = int(sys.argv[4]) if len(sys.argv) > 4 and what != "svmlight" else 3
    seed = 42
    if what == "eigh":
        x, _ = data(n, 10, seed)
        sq = (x * x).sum(1)
        K = np.exp(-0.1 * np.maximum(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0))
        med = timed(lambda: np.linalg.eigh(K), repeat)
        print(json.dumps({"what": "eigh", "n": n, "median_s": med}))
    elif what == "linear":
        d = int(sys.argv[3])
        closed_form = linear_closed_form(n, d, seed)
        med = timed(closed_form, repeat)
        print(json.dumps({"what": "linear", "n": n, "d": d, "median_s": med}))
    elif what == "interleaved":
        d, rounds, threads = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
        cmd = sys.argv[sys.argv.index("--") + 1 :]
        closed_form = linear_closed_form(n, d, seed)
        closed_form()  # warm: the first call pays page faults of its temporaries
        env = dict(os.environ, RAYON_NUM_THREADS=threads)
        ours, theirs = [], []
        for _ in range(rounds):
            # numpy at its best: the fastest of three calls in a row (the
            # first after a pause can take 3-5x as long, its temporaries'
            # pages faulted in again).
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                closed_form()
                best = min(best, time.perf_counter() - t0)
            theirs.append(best)
            # BLAS's worker threads spin for a while after a product (on two
            # cores they would take one from the command): let them sleep.
            time.sleep(0.5)
            t0 = time.perf_counter()
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            ours.append(time.perf_counter() - t0)
            time.sleep(0.5)
        ratios = sorted(a / b for a, b in zip(ours, theirs))
        print(
            json.dumps(
                {
                    "what": "interleaved",
                    "cmd_s": ours,
                    "numpy_s": theirs,
                    "cmd_median_s": sorted(ours)[rounds // 2],
                    "numpy_median_s": sorted(theirs)[rounds // 2],
                    "ratio_median": ratios[rounds // 2],
                }
            )
        )
    elif what == "svmlight":
        d, path = int(sys.argv[3]), sys.argv[4]
        x, s = data(n, d, seed)
        qid = np.arange(n) // 10 + 1
        fmt = "%.6f qid:%d " + " ".join(f"{j + 1}:%.6f" for j in range(d))
        with open(path, "w") as f:
            for lo in range(0, n, 10_000):
                hi = min(n, lo + 10_000)
                block = np.column_stack([s[lo:hi], qid[lo:hi], x[lo:hi]])
                f.write("\n".join(fmt % tuple(r) for r in block.tolist()))
                f.write("\n")
    else:
        raise SystemExit(f"unknown measurement {what}")


if __name__ == "__main__":
    main()
