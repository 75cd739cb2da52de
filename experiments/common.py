"""Shared helpers of the experiment drivers: running the release binary,
reading its cross-validation table, writing data files, and replacing one
section of docs/results.md between markers.

Every random choice is drawn from numpy.random.default_rng(seed) with seeds
fixed in the drivers, so a rerun reproduces the data files bit for bit."""

import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BIN = os.environ.get("RANKLET_BIN") or os.path.join(TARGET, "release", "ranklet")
RESULTS = os.path.join(ROOT, "docs", "results.md")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(args, capture=True):
    """Runs `ranklet ARGS`; returns stdout; raises with stderr on failure."""
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("ranklet %s failed (%d): %s" % (" ".join(map(str, args)), p.returncode, p.stderr[-2000:]))
    return p.stdout, p.stderr


def chosen(stderr):
    """The `chosen: kernel=… lambda=… [components=…]` line of `train`."""
    m = re.search(r"^chosen: (.*)$", stderr, re.M)
    return m.group(1) if m else "?"


def evaluate(model, data, metric, pairs=None, extra=()):
    args = ["eval", "-m", model, "--data", data, "--metric", metric] + list(extra)
    if pairs:
        args += ["--pairs", pairs]
    out, _ = run(args)
    vals = {}
    for line in out.splitlines():
        k, v = line.split("\t")
        vals[k] = float(v)
    return vals[metric]


def write_svmlight(path, labels, qids, rows):
    """rows: list of (indices 1-based, values)."""
    with open(path, "w") as f:
        for y, q, (idx, val) in zip(labels, qids, rows):
            feats = " ".join("%d:%.17g" % (i, v) for i, v in zip(idx, val))
            f.write("%.17g qid:%s %s\n" % (y, q, feats))


def read_svmlight_raw(path):
    """(labels, qids, rest-of-line strings) of an SVMlight file."""
    labels, qids, rest = [], [], []
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            t = line.split(None, 2)
            labels.append(float(t[0]))
            qids.append(t[1])
            rest.append(t[2].rstrip("\n"))
    return np.array(labels), qids, rest


def write_svmlight_raw(path, labels, qids, rest):
    with open(path, "w") as f:
        for y, q, r in zip(labels, qids, rest):
            f.write("%.17g %s %s\n" % (y, q, r))


def replace_section(name, text):
    """Replaces the text between <!-- BEGIN name --> and <!-- END name -->
    in docs/results.md (appends the section if absent)."""
    begin, end = "<!-- BEGIN %s -->" % name, "<!-- END %s -->" % name
    body = open(RESULTS).read() if os.path.exists(RESULTS) else "# Results\n"
    block = "%s\n%s\n%s" % (begin, text.strip("\n"), end)
    if begin in body and end in body:
        i, j = body.index(begin), body.index(end) + len(end)
        body = body[:i] + block + body[j:]
    else:
        body = body.rstrip("\n") + "\n\n" + block + "\n"
    tmp = RESULTS + ".tmp"
    with open(tmp, "w") as f:
        f.write(body)
    os.replace(tmp, RESULTS)
    log("updated section '%s' of %s" % (name, os.path.relpath(RESULTS, ROOT)))


def stamp(t0, cmd):
    """Provenance line: command, date (UTC), wall time, commit."""
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
    except OSError:
        rev = "?"
    if os.environ.get("RANKLET_BIN"):
        cmd += "` with `RANKLET_BIN=%s" % os.path.relpath(BIN, ROOT)
    return "Produced by `%s` on %s (UTC), wall time %.0f s, at commit %s (plus uncommitted work tree, if any)." % (
        cmd, time.strftime("%Y-%m-%d %H:%M", time.gmtime()), time.time() - t0, rev)


def mean_std(v):
    v = np.asarray(v, dtype=float)
    return v.mean(), (v.std(ddof=1) if len(v) > 1 else 0.0)
