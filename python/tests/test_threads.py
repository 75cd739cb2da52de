"""The GIL is released while a model trains: fits on two threads give the
models a serial fit gives, and a third Python thread keeps running during
them. Ctrl-C (SIGINT) stops a long fit between steps with
KeyboardInterrupt."""

import _thread
import threading

import numpy as np

import ranklet
from conftest import letor


def test_two_fits_on_two_threads_while_python_runs():
    X, y, qid = letor(seed=31, n_queries=40, per_query=(20, 30))
    make = [
        lambda: ranklet.RankRLS(kernel="rbf", gamma=0.2),
        lambda: ranklet.KPCRankCV(n_components=[5, 10, 20], cv=3, kernel="rbf", gamma=0.2),
    ]
    serial = [m().fit(X, y, qid=qid).to_bytes() for m in make]

    ticks = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1

    during = [None, None]
    results = [None, None]

    def fit(i):
        before = ticks[0]
        results[i] = make[i]().fit(X, y, qid=qid).to_bytes()
        during[i] = ticks[0] - before

    counter = threading.Thread(target=count)
    counter.start()
    workers = [threading.Thread(target=fit, args=(i,)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    counter.join()
    assert results == serial
    # The counting thread ran while the fits were inside the library.
    assert max(during) > 100, during


def test_sigint_stops_a_long_fit_with_keyboard_interrupt():
    X, y, qid = letor(seed=32, n_queries=60, per_query=(25, 35))
    # Leave-query-out over many λ with an RBF kernel: one step per λ.
    est = ranklet.RankRLSCV(alphas=np.logspace(-3, 3, 400), cv="loo", kernel="rbf", gamma=0.1)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        est.fit(X, y, qid=qid)
    except KeyboardInterrupt:
        interrupted = True
    else:
        interrupted = False
    finally:
        timer.cancel()
    assert interrupted
    assert not hasattr(est, "model_")


def test_sigint_stops_a_preference_gp_between_optimiser_iterations():
    """The evidence search reports each iteration; Ctrl-C stops it there."""
    rng = np.random.default_rng(33)
    X = rng.normal(size=(600, 4))
    f = X @ rng.normal(size=4)
    pairs = rng.integers(0, 600, size=(3000, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pairs[f[pairs[:, 0]] < f[pairs[:, 1]]] = pairs[f[pairs[:, 0]] < f[pairs[:, 1]]][:, ::-1]
    est = ranklet.PrefGP()
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        est.fit(X, pairs)
    except KeyboardInterrupt:
        interrupted = True
    else:
        interrupted = False
    finally:
        timer.cancel()
    assert interrupted
    assert not hasattr(est, "model_")
