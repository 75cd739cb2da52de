"""scikit-learn's conventions: its own estimator checks, clone and
get/set_params, GridSearchCV with GroupKFold over queries, pickling."""

import pickle

import numpy as np
import pytest
from sklearn.base import TransformerMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

import ranklet
from conftest import letor

# Checks that cannot apply, each with the reason.
SKIPPED = {
    # The library refuses a one-row training set (an order of one item)
    # with the CLI's message ("<arrays>: at least 2 rows are needed to
    # learn a ranking", "orders:1: an order needs at least 2 items, this one
    # has 1"), which is not one of the phrasings this check accepts ("1
    # sample", …).
    "check_fit2d_1sample": "one-row data is refused with the CLI's message, not scikit-learn's wording",
}
# And those that cannot apply to the transformers of sample orders (whose
# ``y`` is one score per item: the one order of the items by decreasing
# score).
TRANSFORMER_SKIPPED = {
    # fit's second argument is named ``orders`` (a list of orders of item
    # positions, or one score per item): renaming it ``y`` would break the
    # public keyword; a Pipeline passes it positionally.
    "check_fit_score_takes_y": "fit's second argument is the public 'orders' (positionally scikit-learn's y)",
}

ROW_LEARNERS = [
    ranklet.RLS(),
    ranklet.RankRLS(),
    ranklet.KPCR(n_components=4, kernel="rbf"),
    ranklet.KPCRank(n_components=4, kernel="rbf"),
    ranklet.RankRLSCV(cv=2),
]
TRANSFORMERS = [ranklet.RCDR(n_components=1), ranklet.RCDR(n_components=2, correlation="spearman"), ranklet.PCA()]


@parametrize_with_checks(ROW_LEARNERS + TRANSFORMERS)
def test_sklearn_estimator_checks(estimator, check):
    name = getattr(check, "func", check).__name__
    transformer = isinstance(estimator, TransformerMixin)
    reason = SKIPPED.get(name) or (TRANSFORMER_SKIPPED.get(name) if transformer else None)
    if reason:
        pytest.skip(reason)
    check(estimator)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        ranklet.RankRLS().predict(np.zeros((2, 3)))


def test_clone_and_params():
    est = ranklet.KPCRank(n_components=3, kernel="rbf", gamma=0.5)
    c = clone(est)
    assert c.get_params() == est.get_params()
    c.set_params(alpha=2.0)
    assert c.alpha == 2.0 and est.alpha == 0.0


def test_grid_search_with_group_kfold_over_queries():
    X, y, qid = letor(seed=3, n_queries=10)
    grid = GridSearchCV(ranklet.RankRLS(), {"alpha": [0.01, 1.0, 100.0]}, cv=GroupKFold(5))
    grid.fit(X, y, groups=qid, qid=qid)
    assert grid.best_params_["alpha"] in (0.01, 1.0, 100.0)
    assert grid.best_estimator_.predict(X).shape == (len(y),)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))


def test_pickle_round_trip_keeps_the_model_bytes():
    X, y, qid = letor(seed=4)
    for est in [ranklet.RankRLS(kernel="rbf"), ranklet.KPCRankCV(n_components=[1, 2], cv=2)]:
        est.fit(X, y, qid=qid)
        back = pickle.loads(pickle.dumps(est))
        assert back.to_bytes() == est.to_bytes()
        np.testing.assert_array_equal(back.predict(X), est.predict(X))
    m = ranklet.load(est.to_bytes())
    assert pickle.loads(pickle.dumps(m)).to_bytes() == m.to_bytes()


def test_dataframe_column_names_in_the_model():
    pd = pytest.importorskip("pandas")
    X, y, qid = letor(seed=5)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    est = ranklet.RankRLS().fit(df, y, qid=qid)
    m = ranklet.load(est.to_bytes())
    assert list(m.feature_names_in_) == list(df.columns)
    np.testing.assert_array_equal(m.predict(df), est.predict(df))
    with pytest.raises(ValueError, match="feature names"):
        est.predict(df[df.columns[::-1]])
    with pytest.raises(ValueError, match="not the model's features"):
        m.predict(df[df.columns[::-1]])


def test_float32_fortran_order_equals_float64():
    X, y, qid = letor(seed=6)
    a = ranklet.RankRLS(precision="f64").fit(np.asfortranarray(X), y, qid=qid).to_bytes()
    b = ranklet.RankRLS(precision="f64").fit(X, y, qid=qid).to_bytes()
    assert a == b
    X32 = X.astype(np.float32)
    c = ranklet.RankRLS(precision="f64").fit(X32, y, qid=qid)
    d = ranklet.RankRLS(precision="f64").fit(X32.astype(np.float64), y, qid=qid)
    assert c.to_bytes() == d.to_bytes()


def test_pairs_train_a_ranker():
    X, y, _ = letor(seed=8)
    order = np.argsort(-y, kind="stable")
    pairs = np.array([(order[i], order[i + 1]) for i in range(len(y) - 1) if y[order[i]] > y[order[i + 1]]])
    est = ranklet.RankRLS().fit(X, y, pairs=pairs)
    assert ranklet.metrics.pair_error(est.predict(X), pairs) < 0.5
