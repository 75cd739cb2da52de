#!/usr/bin/env python3
"""The preference GP from Python against BoTorch's `PairwiseGP`, side by
side in one run, on the same items and judgements.

Data: `bench/pref_sparse_data.py DIR N M T` (d = 5 attributes uniform in
[0, 1), latent Σ_k sin(2π·x_k), judgements between random pairs won by
the larger latent plus noise; M training and T held-out judgements).

- ranklet: `ranklet.PrefGP(precision="f64").fit(X, prefs)` — the probit
  pairwise GP of 000 §5 by EP, `rbf:auto` (amplitude and width by the
  evidence, σ fixed), the posterior mean at the items;
- BoTorch: `PairwiseGP(X, comparisons)` (its default kernel: a scaled
  RBF with one length scale per attribute and its default priors; the
  Laplace approximation) and `fit_gpytorch_mll` on
  `PairwiseLaplaceMarginalLogLikelihood`, float64, the posterior mean at
  the items. It runs in its own venv (not a dependency of the repository:
  `python3 -m venv /tmp/btvenv && /tmp/btvenv/bin/pip install botorch`)
  by this same script with the argument `botorch`.

Rounds alternate the two; best-of-N wall time and CPU time of the fit
(model construction included, data loading not). Held-out pair error:
the share of the T held-out judgements whose winner does not get the
larger posterior mean (an exact tie counts one half).

With BASIS given, the sparse fit `ranklet.PrefGP(basis=BASIS)` (EP on
BASIS inducing items) runs in the same rounds too.

Usage: PYTHONPATH=python BOTORCH_PYTHON=/tmp/btvenv/bin/python \\
           target/pyenv/bin/python bench/pref_botorch.py [N] [M] [T] [ROUNDS] [BASIS]
Prints one JSON line.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load(d):
    with open(os.path.join(d, "items.csv")) as fh:
        next(fh)  # header: id,x0,x1,...
        rows = [line.rstrip("\n").split(",") for line in fh if line.strip()]
    index = {r[0]: k for k, r in enumerate(rows)}
    X = np.array([[float(v) for v in r[1:]] for r in rows], dtype=np.float64)

    def pairs(name):
        with open(os.path.join(d, name)) as fh:
            return np.array([[index[w] for w in line.split()[:2]] for line in fh if line.strip()], dtype=np.int64)

    return X, pairs("train.txt"), pairs("test.txt")


def pair_error(mean, pairs):
    w, l = mean[pairs[:, 0]], mean[pairs[:, 1]]
    return float(np.mean((w < l) + 0.5 * (w == l)))


def run_botorch(d, out):
    import torch
    from botorch.fit import fit_gpytorch_mll
    from botorch.models.pairwise_gp import PairwiseGP, PairwiseLaplaceMarginalLogLikelihood

    X, train, _ = load(d)
    tx = torch.tensor(X, dtype=torch.float64)
    tc = torch.tensor(train, dtype=torch.long)
    t0, c0 = time.perf_counter(), time.process_time()
    model = PairwiseGP(tx, tc)
    mll = PairwiseLaplaceMarginalLogLikelihood(model.likelihood, model)
    fit_gpytorch_mll(mll)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    model.eval()
    with torch.no_grad():
        mean = model.posterior(tx).mean.reshape(-1).numpy()
    np.save(out, mean)
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "torch_threads": torch.get_num_threads()}))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    m = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    t = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    basis = int(sys.argv[5]) if len(sys.argv) > 5 else None
    import ranklet

    learners = {"ranklet": lambda: ranklet.PrefGP(precision="f64")}
    if basis is not None:
        learners[f"ranklet_basis{basis}"] = lambda: ranklet.PrefGP(precision="f64", basis=basis)

    py = os.environ.get("BOTORCH_PYTHON", "/tmp/btvenv/bin/python")
    times = {name: [] for name in [*learners, "botorch"]}
    cpu = {name: [] for name in times}
    fitted = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(HERE, "pref_sparse_data.py"), tmp, str(n), str(m), str(t)],
                       check=True, capture_output=True)
        X, train, test = load(tmp)
        out = os.path.join(tmp, "botorch.npy")
        for _ in range(rounds):
            for name, make in learners.items():
                est = make()
                t0, c0 = time.perf_counter(), time.process_time()
                est.fit(X, train)
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
                fitted[name] = est
            r = subprocess.run([py, os.path.abspath(__file__), "botorch", tmp, out],
                               capture_output=True, text=True, check=True)
            line = json.loads(r.stdout.strip().splitlines()[-1])
            times["botorch"].append(line["wall_s"])
            cpu["botorch"].append(line["cpu_s"])
        theirs = np.load(out)
    means = {name: est.predict() for name, est in fitted.items()}
    means["botorch"] = theirs
    out = {"n": n, "m": m, "t": t, "rounds": rounds, "torch_threads": line["torch_threads"]}
    for name in times:
        out[f"{name}_best_s"] = min(times[name])
        out[f"{name}_cpu_best_s"] = min(cpu[name])
        out[f"{name}_all_s"] = times[name]
        out[f"{name}_pair_error"] = pair_error(means[name], test)
        out[f"{name}_train_pair_error"] = pair_error(means[name], train)
        out[f"{name}_over_botorch"] = min(times[name]) / min(times["botorch"])
    for name, est in fitted.items():
        out[f"{name}_hyperparameters"] = est.hyperparameters_
        out[f"{name}_log_evidence"] = est.log_evidence_
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "botorch":
        run_botorch(sys.argv[2], sys.argv[3])
    else:
        main()
