//! The learners, as the CLI drives them (the learner families of `ranklet::family` on a
//! `ranklet::table::Table` read by `ranklet::data::svmlight`), against
//! independent numpy closed forms, on both backends; and the
//! one-decomposition-per-fold KPCRank cross-validation against refitting
//! every (fold, p) from scratch.
//!
//! Reference values: `fixtures/parse_rank/reference.txt`, written by
//! `fixtures/parse_rank/gen_parse_rank.py` (regenerate from that directory
//! with `python3 gen_parse_rank.py > reference.txt`; versions on its first
//! line). It solves `a = solve(LK + λI, Ls)` (and, on the dense data, the
//! primal `(XᵀLX + λI)w = XᵀLs`) and transcribes 000 eqs. 2–9 for KPCRank
//! with numpy's dense LAPACK routines; it does not share any code with
//! ranklet.
//!
//! Tolerance: 1e-8 relative to the largest |prediction|, four orders of
//! magnitude above rounding and far below any wrong formula. The systems are well conditioned
//! (cond(LK + λI) ≲ 1e5 with λ = 1 for the linear kernel whose entries are
//! ~10², λ = 0.1 for the RBF kernel whose entries are ≤ 1; the KPCRank cuts
//! are at relative eigen-gaps > 1e-3), so rounding alone would give ~1e-12;
//! the observed deviations are printed (`--nocapture`).
//!
//! The parse-rank data is read from `data/parse-rank/` (a copy of `../shared/data/parse-rank/`, MIT); when it is
//! missing these tests fail (they never pass vacuously).

use std::path::Path;

use ranklet::cv::{self, Scheme};
use ranklet::data::svmlight::{read_svmlight, SvmlightOptions};
use ranklet::data::Dataset;
use ranklet::family::kpc::Kpc;
use ranklet::family::ls::{LeastSquares, LsPoint};
use ranklet::family::{Algo, Family, RowFamily};
use ranklet::fit::{Fitted, Target};
use ranklet::hostbackend::{BackendChoice, HostBackend};
use ranklet::metric::Metric;
use ranklet::progress;
use ranklet::table::Table;
use ranklet_core::graph::QueryWeight;
use ranklet_core::kernel::Kernel;

const PARSE_TRAIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/parse-rank/rank_train.light");
const PARSE_TEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data/parse-rank/rank_test.light");
const DENSE_TRAIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/parse_rank/synth_dense_train.light");
const DENSE_TEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/parse_rank/synth_dense_test.light");

/// The acceptance bound (see the module docs).
const REL_TOL: f64 = 1e-8;

/// Hyperparameters used by `gen_parse_rank.py` (keep in sync).
const PARSE_LAMBDA_LINEAR: f64 = 1.0;
const PARSE_LAMBDA_RBF: f64 = 0.1;
const PARSE_GAMMA: f64 = 1e-3;
const DENSE_LAMBDA_LINEAR: f64 = 0.5;
const DENSE_LAMBDA_RBF: f64 = 0.1;
const DENSE_GAMMA: f64 = 0.3;

/// `name → values` from `reference.txt` (`name count` then one line of
/// values).
fn reference(name: &str) -> Vec<f64> {
    let text = include_str!("fixtures/parse_rank/reference.txt");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    while let Some(head) = lines.next() {
        let mut h = head.split_whitespace();
        let key = h.next().expect("fixture header");
        let count: usize = h.next().expect("fixture count").parse().expect("fixture count");
        let vals: Vec<f64> = lines
            .next()
            .expect("fixture values")
            .split_whitespace()
            .map(|v| v.parse().expect("fixture value"))
            .collect();
        assert_eq!(vals.len(), count, "{key}: count");
        if key == name {
            return vals;
        }
    }
    panic!("reference.txt has no entry {name}: regenerate it with gen_parse_rank.py");
}

/// Reads an SVMlight file, failing loudly when shared data is missing.
fn read(path: &str, num_features: Option<usize>) -> Dataset {
    assert!(
        Path::new(path).exists(),
        "data file {path} is missing: the repository's data/ copy must be present for \
         this test"
    );
    read_svmlight(path, &SvmlightOptions { num_features, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"))
}

/// Training and test data read with a common dimension (the larger of the
/// two), as `gen_parse_rank.py` does.
fn pair_of(train: &str, test: &str) -> (Dataset, Dataset) {
    let d = read(train, None).n_features().max(read(test, None).n_features());
    (read(train, Some(d)), read(test, Some(d)))
}

/// Predictions of `model` for the rows of `ds`, in file order (a table is
/// grouped by query; `orig` maps back).
fn predict_in_file_order(model: &Fitted, backend: &mut HostBackend, ds: &Dataset) -> Vec<f64> {
    let t = Table::from_dataset(ds, true);
    let p = model.predict(backend, &t).expect("predict");
    let mut out = vec![f64::NAN; ds.n_rows()];
    for (i, &r) in t.orig.iter().enumerate() {
        out[r] = p[i];
    }
    out
}

/// `max |got − want| / max |want|`, after checking the lengths and
/// finiteness.
fn rel_dev(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    assert!(got.iter().all(|v| v.is_finite()), "non-finite prediction");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0);
    got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max) / scale
}

const BACKENDS: [BackendChoice; 2] = [BackendChoice::Portable, BackendChoice::Faer];

/// One row learner at one grid point.
#[derive(Clone, Copy, Debug)]
struct Params {
    kernel: Kernel,
    lambda: f64,
    components: usize,
}

/// Fits `algo` at `p` through the learner family the CLI uses.
fn fit_one(be: &mut HostBackend, algo: Algo, p: &Params, table: &Table, target: &Target<'_>) -> Result<Fitted, String> {
    let comps = algo.is_kpc().then(|| vec![p.components]);
    let family = RowFamily::new(algo, vec![p.kernel], vec![p.lambda], comps).map_err(|e| e.to_string())?;
    family.fit_first(be, table, target).map_err(|e| e.to_string())
}

/// Fits on `train`, predicts `test` with both backends, compares with the
/// reference entry `name`.
fn check(name: &str, algo: Algo, params: Params, weight: QueryWeight, train: &Dataset, test: &Dataset) {
    let want = reference(name);
    let table = Table::from_dataset(train, true);
    for choice in BACKENDS {
        let mut be = HostBackend::new(choice);
        let model = fit_one(&mut be, algo, &params, &table, &Target::Labels(weight))
            .unwrap_or_else(|e| panic!("{name} ({choice:?}): {e}"));
        let got = predict_in_file_order(&model, &mut be, test);
        let dev = rel_dev(&got, &want);
        eprintln!("{name} {choice:?}: max relative deviation {dev:.3e}");
        assert!(dev <= REL_TOL, "{name} ({choice:?}): deviation {dev:.3e} > {REL_TOL:e}");
    }
}

fn rankrls(kernel: Kernel, lambda: f64) -> Params {
    Params { kernel, lambda, components: 0 }
}

#[test]
fn rankrls_parse_rank_sparse_matches_numpy() {
    let (train, test) = pair_of(PARSE_TRAIN, PARSE_TEST);
    // Wide and sparse: the table must stay CSR and the learner go through
    // the dual (d ≫ n), the case this test is about.
    assert_eq!((train.n_rows(), test.n_rows()), (100, 100));
    assert!(train.n_features() >= 195_094);
    assert!(Table::from_dataset(&train, true).dense().is_none());
    for (weight, tag) in [(QueryWeight::Equal, "equal"), (QueryWeight::Pairs, "pairs")] {
        let lin = rankrls(Kernel::Linear, PARSE_LAMBDA_LINEAR);
        check(&format!("parse_rankrls_linear_{tag}"), Algo::Rankrls, lin, weight, &train, &test);
        let rbf = rankrls(Kernel::Rbf { gamma: PARSE_GAMMA }, PARSE_LAMBDA_RBF);
        check(&format!("parse_rankrls_rbf_{tag}"), Algo::Rankrls, rbf, weight, &train, &test);
    }
}

#[test]
fn rankrls_parse_rank_linear_model_is_primal_w() {
    // With the linear kernel the fit is folded into w = Xᵀa: a linear model
    // whose weights past the training features are exactly 0, so scoring
    // the test file's extra features gives the same as dropping them.
    let (train, _) = pair_of(PARSE_TRAIN, PARSE_TEST);
    let d_train = read(PARSE_TRAIN, None).n_features();
    let table = Table::from_dataset(&train, true);
    let mut be = HostBackend::new(BackendChoice::Faer);
    let model = fit_one(
        &mut be,
        Algo::Rankrls,
        &rankrls(Kernel::Linear, PARSE_LAMBDA_LINEAR),
        &table,
        &Target::Labels(QueryWeight::Equal),
    )
    .unwrap();
    match model {
        Fitted::Linear { w, offset } => {
            assert_eq!(offset, 0.0);
            assert!(w[d_train..].iter().all(|&v| v == 0.0));
            assert!(w[..d_train].iter().any(|&v| v != 0.0));
        }
        Fitted::Kernel { .. } => panic!("a linear-kernel RankRLS must be exported as a linear model"),
    }
}

#[test]
fn rankrls_dense_matches_numpy() {
    let (train, test) = pair_of(DENSE_TRAIN, DENSE_TEST);
    let table = Table::from_dataset(&train, true);
    assert!(table.dense().is_some() && table.d() <= table.n(), "the dense fixture must take the primal path");
    let ls = LeastSquares {
        ranker: true,
        kernels: vec![Kernel::Linear],
        lambdas: vec![1.0],
        basis: None,
        cg_note: Default::default(),
    };
    assert!(ls.use_primal(&LsPoint { kernel: Kernel::Linear, lambda: 1.0 }, &table));
    for (weight, tag) in [(QueryWeight::Equal, "equal"), (QueryWeight::Pairs, "pairs")] {
        let lin = rankrls(Kernel::Linear, DENSE_LAMBDA_LINEAR);
        check(&format!("dense_rankrls_linear_{tag}"), Algo::Rankrls, lin, weight, &train, &test);
        let rbf = rankrls(Kernel::Rbf { gamma: DENSE_GAMMA }, DENSE_LAMBDA_RBF);
        check(&format!("dense_rankrls_rbf_{tag}"), Algo::Rankrls, rbf, weight, &train, &test);
    }
}

#[test]
fn kpcrank_parse_rank_rbf_matches_numpy() {
    // p = 3 and 15 go through the top-k eigensolver, p = 40 through the
    // full one (3p ≥ n); λ = 0 as in 000 eq. 8.
    let (train, test) = pair_of(PARSE_TRAIN, PARSE_TEST);
    for p in [3, 15, 40] {
        let params = Params { kernel: Kernel::Rbf { gamma: PARSE_GAMMA }, lambda: 0.0, components: p };
        check(&format!("parse_kpcrank_rbf_p{p}"), Algo::Kpcrank, params, QueryWeight::Equal, &train, &test);
    }
}

/// The folds of `cv.rs` for label data with several queries: `folds_of`
/// over query indices, training on the other queries, each kept whole.
fn query_folds(table: &Table, k: usize, seed: u64) -> Vec<(Table, Table)> {
    let nq = table.n_queries();
    assert!(nq > 1, "the query split needs several queries");
    cv::folds_of(nq, k, seed)
        .iter()
        .map(|f| {
            let rest: Vec<usize> = (0..nq).filter(|q| f.binary_search(q).is_err()).collect();
            (table.subset_queries(&rest).0, table.subset_queries(f).0)
        })
        .collect()
}

/// `cross_validate` (one decomposition per fold for the largest p, every p
/// and λ from it) against `fit` from scratch on every fold × λ × p.
fn cv_equals_refit(ds: &Dataset, kernel: Kernel, lambdas: &[f64], ps: &[usize], k: usize, seed: u64) {
    let table = Table::from_dataset(ds, true);
    let family =
        Kpc { ranker: true, kernels: vec![kernel], lambdas: lambdas.to_vec(), components: ps.to_vec(), basis: None };
    let target = Target::Labels(QueryWeight::Equal);
    let metric = Metric::Disagreement;
    let folds = query_folds(&table, k, seed);
    for choice in BACKENDS {
        let mut be = HostBackend::new(choice);
        let report = cv::cross_validate(
            &mut be,
            &family,
            &table,
            &target,
            Scheme::KFold(k),
            metric,
            seed,
            &mut progress::silent,
        )
        .expect("cross-validation");
        let points = family.points();
        assert_eq!(report.points.len(), points.len());
        let mut means = Vec::new();
        let mut max_dev = 0.0f64;
        for (pt, params) in report.points.iter().zip(&points) {
            assert_eq!(pt.params, *params, "grid order");
            assert!(pt.failure.is_none(), "{params:?}: {:?}", pt.failure);
            let mut refit = Vec::new();
            for (tr, va) in &folds {
                let model = family.fit(&mut be, params, tr, &target).expect("refit");
                let preds = model.predict(&mut be, va).expect("predict");
                refit.push(metric.eval_labels(&va.labels, &preds, &va.query_ptr).expect("metric"));
            }
            // 1e-9: the metric is a ratio of pair counts; both paths give
            // the same orderings (their predictions agree to ~1e-12), so in
            // practice the values are identical.
            for (f, (a, b)) in pt.folds.iter().zip(&refit).enumerate() {
                max_dev = max_dev.max((a - b).abs());
                assert!((a - b).abs() <= 1e-9, "{choice:?} {params:?} fold {f}: cv {a} vs refit {b}");
            }
            means.push(refit.iter().sum::<f64>() / refit.len() as f64);
        }
        // The curve: one mean per grid point.
        for (pt, m) in report.points.iter().zip(&means) {
            assert!((pt.mean() - m).abs() <= 1e-9, "{choice:?} {:?}: mean {} vs {m}", pt.params, pt.mean());
        }
        // The selected point: the smallest mean disagreement. `best()` takes
        // the last of equal means (Iterator::max_by); mirror it, and check
        // the set of minimisers is the same.
        let min = means.iter().copied().fold(f64::INFINITY, f64::min);
        let argmin = means.iter().rposition(|&m| m == min).unwrap();
        let best = report.best().expect("a best point");
        assert_eq!(best, argmin, "{choice:?}: cv chose {:?}, refit {:?}", points[best], points[argmin]);
        let curve: Vec<String> =
            report.points.iter().map(|p| format!("{}:{:.4}", p.params.components, p.mean())).collect();
        eprintln!(
            "{choice:?} λ∈{lambdas:?} curve (p:mean) {} → best {:?}; max |cv − refit| per fold {max_dev:.1e}",
            curve.join(" "),
            points[best]
        );
    }
}

#[test]
fn kpcrank_cv_one_decomposition_equals_refit_parse_rank() {
    let ds = read(PARSE_TRAIN, None);
    let ps: Vec<usize> = (1..=15).collect();
    cv_equals_refit(&ds, Kernel::Rbf { gamma: PARSE_GAMMA }, &[0.0, 0.5], &ps, 5, 7);
}

#[test]
fn kpcrank_cv_one_decomposition_equals_refit_dense() {
    // 50 training rows: with p up to 15 and 3 folds, the largest p crosses
    // the top-k / full eigensolver switch (3p ≥ n) while single refits at
    // small p stay on the top-k path.
    let ds = read(DENSE_TRAIN, None);
    let ps: Vec<usize> = (1..=15).collect();
    cv_equals_refit(&ds, Kernel::Rbf { gamma: DENSE_GAMMA }, &[0.0], &ps, 3, 11);
}
