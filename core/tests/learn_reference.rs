//! The learners against direct numpy transcriptions of their closed forms
//! (`fixtures/learn/gen_learn.py`; regenerate with
//! `python3 gen_learn.py > learn.txt`). The fixture data is well conditioned
//! (λ ≥ 0.1 or the top 12 components of an RBF kernel with eigenvalues
//! above 1e-3), so both sides agree to ~1e-12; the asserted 1e-8 relative
//! leaves four orders of magnitude for rounding and still fails on any
//! wrong formula.

use ranklet_core::backend::Portable;
use ranklet_core::graph::{Graph, Pair, QueryWeight};
use ranklet_core::kernel::{center_kernel, center_test_kernel, kernel_matrix, kernel_matrix_workspace_len, Kernel};
use ranklet_core::learn::expansion::{Centring, Expansion};
use ranklet_core::learn::kpc::{
    self, cv_fold, cv_fold_workspace_len, kpc_coefficients, kpc_decompose, kpc_decompose_workspace_len,
    kpc_normal_equations, kpc_normal_equations_workspace_len, kpc_predict_projected, kpc_project, kpc_solve, KpcGrid,
};
use ranklet_core::learn::ls::*;
use ranklet_core::learn::{mean, LearnError};
use ranklet_core::linalg::chol::cholesky_leading_in_place;
use ranklet_core::linalg::Rows;
use ranklet_core::{MatMut, MatRef};

struct Fixture(Vec<(String, usize, usize, Vec<f64>)>);

impl Fixture {
    fn load() -> Self {
        let text = include_str!("fixtures/learn/learn.txt");
        let mut lines = text.lines().filter(|l| !l.starts_with('#'));
        let mut out = Vec::new();
        while let Some(head) = lines.next() {
            let mut h = head.split_whitespace();
            let name = h.next().unwrap().to_string();
            let r: usize = h.next().unwrap().parse().unwrap();
            let c: usize = h.next().unwrap().parse().unwrap();
            let vals: Vec<f64> = lines.next().unwrap().split_whitespace().map(|v| v.parse().unwrap()).collect();
            assert_eq!(vals.len(), r * c, "{name}");
            out.push((name, r, c, vals));
        }
        Fixture(out)
    }
    fn get(&self, name: &str) -> (usize, usize, &[f64]) {
        let e = self.0.iter().find(|e| e.0 == name).unwrap_or_else(|| panic!("no {name}"));
        (e.1, e.2, &e.3)
    }
}

fn assert_close(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= rel * scale, "{what}[{i}]: {g} vs {w} (scale {scale})");
    }
}

fn backend_work() -> Vec<f64> {
    vec![0.0; Portable::workspace_len(64)]
}

fn kmat(kernel: &Kernel, a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Vec<f64> {
    let mut w = backend_work();
    let mut be = Portable::new(&mut w);
    let (x, y) = (Rows::Dense(a), Rows::Dense(b));
    let mut out = vec![0.0; a.nrows() * b.nrows()];
    let mut kw = vec![0.0; kernel_matrix_workspace_len(&x, &y)];
    kernel_matrix(&mut be, kernel, &x, &y, MatMut::from_col_major(&mut out, a.nrows(), b.nrows()).unwrap(), &mut kw)
        .unwrap();
    out
}

fn predict_dual(kt: &[f64], nt: usize, n: usize, a: &[f64]) -> Vec<f64> {
    let k = MatRef::from_col_major(kt, nt, n).unwrap();
    (0..nt).map(|t| (0..n).map(|i| k.at(t, i) * a[i]).sum()).collect()
}

struct Data {
    fx: Fixture,
    n: usize,
    d: usize,
    nt: usize,
}

impl Data {
    fn new() -> Self {
        let fx = Fixture::load();
        let (n, d, _) = fx.get("X");
        let (nt, _, _) = fx.get("Xt");
        Data { fx, n, d, nt }
    }
    fn x(&self) -> MatRef<'_, f64> {
        MatRef::from_row_major(self.fx.get("X").2, self.n, self.d).unwrap()
    }
    fn xt(&self) -> MatRef<'_, f64> {
        MatRef::from_row_major(self.fx.get("Xt").2, self.nt, self.d).unwrap()
    }
    fn s(&self) -> &[f64] {
        self.fx.get("s").2
    }
    fn qptr(&self) -> Vec<usize> {
        self.fx.get("qptr").2.iter().map(|&v| v as usize).collect()
    }
}

#[test]
fn primal_rls_and_rankrls_match_numpy() {
    let data = Data::new();
    let qptr = data.qptr();
    let cases = [
        ("rankrls_primal_linear_equal_w", Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal }),
        ("rankrls_primal_linear_pairs_w", Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Pairs }),
        ("rls_primal_linear_w", Graph::Identity { n: data.n }),
    ];
    for (name, graph) in cases {
        let mut bw = backend_work();
        let mut be = Portable::new(&mut bw);
        let mut w = vec![0.0; data.d];
        let mut work = vec![0.0; ls_primal_workspace_len(data.n, data.d)];
        ls_primal(&mut be, data.x(), &graph, data.s(), 0.5, &mut w, &mut work).unwrap();
        assert_close(&w, data.fx.get(name).2, 1e-8, name);
    }
}

#[test]
fn dual_rls_and_rankrls_match_numpy() {
    let data = Data::new();
    let qptr = data.qptr();
    let kernel = Kernel::Rbf { gamma: 0.3 };
    let k = kmat(&kernel, data.x(), data.x());
    let kt = kmat(&kernel, data.xt(), data.x());
    let (_, _, praw) = data.fx.get("pairs");
    let pairs: Vec<Pair> =
        praw.chunks(3).map(|c| Pair { winner: c[0] as usize, loser: c[1] as usize, magnitude: c[2] }).collect();
    let cases = [
        ("rankrls_dual_rbf_equal_pred", Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal }),
        ("rankrls_dual_rbf_pairs_pred", Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Pairs }),
        ("rls_dual_rbf_pred", Graph::Identity { n: data.n }),
        ("rankrls_dual_rbf_explicit_pred", Graph::Pairs { n: data.n, pairs: &pairs }),
    ];
    for (name, graph) in cases {
        let mut bw = backend_work();
        let mut be = Portable::new(&mut bw);
        let mut a = vec![0.0; data.n];
        let mut work = vec![0.0; ls_dual_workspace_len(data.n)];
        let kv = MatRef::from_col_major(&k, data.n, data.n).unwrap();
        ls_dual(&mut be, kv, &graph, data.s(), 0.1, &mut a, &mut work).unwrap();
        let pred = predict_dual(&kt, data.nt, data.n, &a);
        assert_close(&pred, data.fx.get(name).2, 1e-8, name);
    }
}

/// Runs the KPC pipeline once with `p_max` components and returns the test
/// predictions for every p in `ps`.
fn kpc_predictions(data: &Data, graph: &Graph<'_>, ps: &[usize], p_max: usize) -> Vec<Vec<f64>> {
    let (n, nt) = (data.n, data.nt);
    let kernel = Kernel::Rbf { gamma: 0.3 };
    let k = kmat(&kernel, data.x(), data.x());
    let kt = kmat(&kernel, data.xt(), data.x());
    let mut bw = backend_work();
    let mut be = Portable::new(&mut bw);
    let mut kc = vec![0.0; n * n];
    let mut colmean = vec![0.0; n];
    let grand = center_kernel(
        MatRef::from_col_major(&k, n, n).unwrap(),
        MatMut::from_col_major(&mut kc, n, n).unwrap(),
        &mut colmean,
    )
    .unwrap();
    let mut vals = vec![0.0; p_max];
    let mut vecs = vec![0.0; n * p_max];
    let mut work = vec![0.0; kpc_decompose_workspace_len(n, p_max)];
    let rank = kpc_decompose(
        &mut be,
        MatRef::from_col_major(&kc, n, n).unwrap(),
        &mut vals,
        MatMut::from_col_major(&mut vecs, n, p_max).unwrap(),
        &mut work,
    )
    .unwrap();
    assert_eq!(rank, p_max);
    let vv = MatRef::from_col_major(&vecs, n, p_max).unwrap();
    let mut m = vec![0.0; p_max * p_max];
    let mut r = vec![0.0; p_max];
    let mut work = vec![0.0; kpc_normal_equations_workspace_len(n, p_max)];
    kpc_normal_equations(
        &mut be,
        &kpc::KpcSystem { graph, s: data.s(), vals: &vals, vecs: vv },
        0.0,
        MatMut::from_col_major(&mut m, p_max, p_max).unwrap(),
        &mut r,
        &mut work,
    )
    .unwrap();
    let usable = cholesky_leading_in_place(MatMut::from_col_major(&mut m, p_max, p_max).unwrap()).unwrap();
    assert_eq!(usable, p_max);
    let mut ktc = vec![0.0; nt * n];
    center_test_kernel(
        MatRef::from_col_major(&kt, nt, n).unwrap(),
        &colmean,
        grand,
        MatMut::from_col_major(&mut ktc, nt, n).unwrap(),
    )
    .unwrap();
    let mut t = vec![0.0; nt * p_max];
    kpc_project(
        &mut be,
        MatRef::from_col_major(&ktc, nt, n).unwrap(),
        &vals,
        vv,
        MatMut::from_col_major(&mut t, nt, p_max).unwrap(),
    )
    .unwrap();
    let offset = if matches!(graph, Graph::Identity { .. }) { mean(data.s()) } else { 0.0 };
    ps.iter()
        .map(|&p| {
            let mut w = vec![0.0; p];
            kpc_solve(MatRef::from_col_major(&m, p_max, p_max).unwrap(), &r, &mut w).unwrap();
            let mut pred = vec![0.0; nt];
            kpc_predict_projected(MatRef::from_col_major(&t, nt, p_max).unwrap(), &w, &mut pred).unwrap();
            // The expansion form f(x) = Σ αᵢ k̂(x, xᵢ) must give the same.
            let mut alpha = vec![0.0; n];
            kpc_coefficients(&vals, vv, &w, &mut alpha).unwrap();
            let via_alpha = predict_dual(&ktc, nt, n, &alpha);
            assert_close(&via_alpha, &pred, 1e-10, "expansion vs projection");
            pred.iter_mut().for_each(|v| *v += offset);
            pred
        })
        .collect()
}

#[test]
fn kpcrank_and_kpcr_match_the_papers_equations() {
    let data = Data::new();
    let qptr = data.qptr();
    let ps = [1usize, 3, 6, 12];
    let rank_graph = Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal };
    let preds = kpc_predictions(&data, &rank_graph, &ps, 12);
    for (p, pred) in ps.iter().zip(&preds) {
        let name = format!("kpcrank_rbf_p{p}_pred");
        assert_close(pred, data.fx.get(&name).2, 1e-8, &name);
    }
    let preds = kpc_predictions(&data, &Graph::Identity { n: data.n }, &ps, 12);
    for (p, pred) in ps.iter().zip(&preds) {
        let name = format!("kpcr_rbf_p{p}_pred");
        assert_close(pred, data.fx.get(&name).2, 1e-8, &name);
    }
}

#[test]
fn one_decomposition_equals_refitting_every_p() {
    // The leading-block path (one eigendecomposition with p_max = 12, one
    // Cholesky) against a fresh decomposition with exactly p components for
    // every p.
    let data = Data::new();
    let qptr = data.qptr();
    let graph = Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Pairs };
    let ps: Vec<usize> = (1..=12).collect();
    let shared = kpc_predictions(&data, &graph, &ps, 12);
    for (i, &p) in ps.iter().enumerate() {
        let fresh = kpc_predictions(&data, &graph, &[p], p);
        assert_close(&shared[i], &fresh[0], 1e-9, &format!("p = {p}"));
    }
}

#[test]
fn learners_reject_bad_parameters() {
    let data = Data::new();
    let mut bw = backend_work();
    let mut be = Portable::new(&mut bw);
    let g = Graph::Identity { n: data.n };
    let mut w = vec![0.0; data.d];
    let mut work = vec![0.0; ls_primal_workspace_len(data.n, data.d)];
    assert!(ls_primal(&mut be, data.x(), &g, data.s(), -1.0, &mut w, &mut work).is_err());
    assert!(ls_primal(&mut be, data.x(), &g, data.s(), f64::NAN, &mut w, &mut work).is_err());
    let short = &mut work[..10];
    assert!(ls_primal(&mut be, data.x(), &g, data.s(), 1.0, &mut w, short).is_err());
    let mut s_bad = data.s().to_vec();
    s_bad[3] = f64::INFINITY;
    assert!(ls_primal(&mut be, data.x(), &g, &s_bad, 1.0, &mut w, &mut work).is_err());
}

/// Rows `keep` of the fixture as a row-major matrix.
fn select_rows(x: MatRef<'_, f64>, keep: &[usize]) -> Vec<f64> {
    keep.iter().flat_map(|&i| (0..x.ncols()).map(move |j| x.at(i, j))).collect()
}

#[test]
fn holdout_shortcuts_equal_refitting_without_each_block() {
    let data = Data::new();
    let qptr = data.qptr();
    let (n, d) = (data.n, data.d);
    let kernel = Kernel::Rbf { gamma: 0.3 };
    let k = kmat(&kernel, data.x(), data.x());
    for weight in [None, Some(QueryWeight::Equal), Some(QueryWeight::Pairs)] {
        let graph = match weight {
            None => Graph::Identity { n },
            Some(w) => Graph::Queries { query_ptr: &qptr, weight: w },
        };
        let blocks: Vec<(usize, usize)> = match weight {
            None => (0..n).map(|i| (i, i + 1)).collect(),
            Some(_) => qptr.windows(2).map(|w| (w[0], w[1])).collect(),
        };
        let mb = blocks.iter().map(|b| b.1 - b.0).max().unwrap();
        let mut bw = backend_work();
        let mut be = Portable::new(&mut bw);
        // Shortcuts.
        let mut primal = vec![0.0; n];
        let mut work = vec![0.0; ls_primal_holdout_workspace_len(n, d, mb)];
        ls_primal_holdout(&mut be, data.x(), &graph, data.s(), 0.5, &mut primal, &mut work).unwrap();
        let mut dual = vec![0.0; n];
        let mut work = vec![0.0; ls_dual_holdout_workspace_len(n, mb)];
        let kv = MatRef::from_col_major(&k, n, n).unwrap();
        ls_dual_holdout(&mut be, kv, &graph, data.s(), 0.1, &mut dual, &mut work).unwrap();
        // Brute force: refit without the block, predict the block.
        for &(r0, r1) in &blocks {
            let keep: Vec<usize> = (0..n).filter(|&i| i < r0 || i >= r1).collect();
            let m = keep.len();
            let xs = select_rows(data.x(), &keep);
            let ss: Vec<f64> = keep.iter().map(|&i| data.s()[i]).collect();
            let qp: Vec<usize> = {
                let mut v = vec![0usize];
                for w in qptr.windows(2) {
                    let len = (w[0]..w[1]).filter(|i| keep.contains(i)).count();
                    if len > 0 {
                        v.push(v.last().unwrap() + len);
                    }
                }
                v
            };
            let g2 = match weight {
                None => Graph::Identity { n: m },
                Some(w) => Graph::Queries { query_ptr: &qp, weight: w },
            };
            let xv = MatRef::from_row_major(&xs, m, d).unwrap();
            let mut w = vec![0.0; d];
            let mut work = vec![0.0; ls_primal_workspace_len(m, d)];
            ls_primal(&mut be, xv, &g2, &ss, 0.5, &mut w, &mut work).unwrap();
            let mut a = vec![0.0; m];
            let ks: Vec<f64> =
                keep.iter().flat_map(|&j| keep.iter().map(move |&i| (i, j))).map(|(i, j)| k[j * n + i]).collect();
            let mut work = vec![0.0; ls_dual_workspace_len(m)];
            ls_dual(&mut be, MatRef::from_col_major(&ks, m, m).unwrap(), &g2, &ss, 0.1, &mut a, &mut work).unwrap();
            for r in r0..r1 {
                let fp: f64 = (0..d).map(|j| data.x().at(r, j) * w[j]).sum();
                let fd: f64 = keep.iter().zip(&a).map(|(&i, ai)| k[i * n + r] * ai).sum();
                // The held-out identity is exact, including the per-query
                // constant that a ranking loss ignores.
                let (gp, gd, wp, wd) = (primal[r], dual[r], fp, fd);
                assert!((gp - wp).abs() < 1e-9, "{weight:?} primal row {r}: {gp} vs {wp}");
                assert!((gd - wd).abs() < 1e-9, "{weight:?} dual row {r}: {gd} vs {wd}");
            }
        }
    }
}

#[test]
fn one_call_kpc_fit_and_fold_match_the_papers_equations() {
    // kpc::fit (data rows → α, centring terms) and kpc::cv_fold (every
    // (λ, p) of one fold from one decomposition) against the same numpy
    // fixtures as the step-by-step path above.
    let data = Data::new();
    let qptr = data.qptr();
    let kernel = Kernel::Rbf { gamma: 0.3 };
    let (x, xt) = (Rows::Dense(data.x()), Rows::Dense(data.xt()));
    let ps = [1usize, 3, 6, 12];
    let graphs = [
        ("kpcrank", Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal }),
        ("kpcr", Graph::Identity { n: data.n }),
    ];
    for (name, graph) in graphs {
        let mut bw = backend_work();
        let mut be = Portable::new(&mut bw);
        let grid = KpcGrid { lambdas: &[0.0], components: &ps };
        let mut preds = vec![0.0; ps.len() * data.nt];
        let mut usable = [0usize];
        let mut work = vec![0.0; cv_fold_workspace_len(&x, &xt, &grid)];
        cv_fold(
            &mut be,
            &kpc::Training { kernel: &kernel, rows: &x, graph: &graph, s: data.s() },
            &xt,
            &grid,
            kpc::FoldOut { preds: &mut preds, usable: &mut usable },
            &mut work,
        )
        .unwrap();
        assert_eq!(usable[0], 12);
        for (i, &p) in ps.iter().enumerate() {
            let want = data.fx.get(&format!("{name}_rbf_p{p}_pred")).2;
            assert_close(&preds[i * data.nt..(i + 1) * data.nt], want, 1e-8, &format!("{name} fold p={p}"));
            // One fit per p, scored through the expansion.
            let mut alpha = vec![0.0; data.n];
            let mut cm = vec![0.0; data.n];
            let mut work = vec![0.0; kpc::fit_workspace_len(&x, p)];
            let f = kpc::fit(
                &mut be,
                &kpc::Training { kernel: &kernel, rows: &x, graph: &graph, s: data.s() },
                0.0,
                p,
                &mut alpha,
                &mut cm,
                &mut work,
            )
            .unwrap();
            let e = Expansion {
                kernel,
                basis: x,
                alpha: &alpha,
                offset: f.offset,
                centring: Some(Centring { col_means: &cm, grand_mean: f.grand_mean }),
            };
            let mut out = vec![0.0; data.nt];
            let mut work = vec![0.0; e.predict_workspace_len(&xt)];
            e.predict(&mut be, &xt, &mut out, &mut work).unwrap();
            assert_close(&out, want, 1e-8, &format!("{name} fit p={p}"));
        }
        // p beyond n is refused; beyond the fold's usable rank gives NaN
        // predictions, never a silent number.
        let mut alpha = vec![0.0; data.n];
        let mut cm = vec![0.0; data.n];
        let big = data.n + 1;
        let mut work = vec![0.0; kpc::fit_workspace_len(&x, 2)];
        assert!(matches!(
            kpc::fit(
                &mut be,
                &kpc::Training { kernel: &kernel, rows: &x, graph: &graph, s: data.s() },
                0.0,
                big,
                &mut alpha,
                &mut cm,
                &mut work
            ),
            Err(LearnError::TooManyComponents { .. })
        ));
        assert_eq!(
            kpc::fit(
                &mut be,
                &kpc::Training { kernel: &kernel, rows: &x, graph: &graph, s: data.s() },
                0.0,
                0,
                &mut alpha,
                &mut cm,
                &mut work
            ),
            Err(LearnError::NoComponents)
        );
    }
}

#[test]
fn one_call_ls_fit_and_holdout_match_the_step_functions() {
    let data = Data::new();
    let qptr = data.qptr();
    let graph = Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal };
    let mut bw = backend_work();
    let mut be = Portable::new(&mut bw);
    let x = Rows::Dense(data.x());
    // Linear kernel on dense rows with d ≤ n: primal, equal to ls_primal.
    assert_eq!(Form::choose(&Kernel::Linear, &x), Form::Primal);
    let mut w = vec![0.0; data.d];
    let mut work = vec![0.0; fit_workspace_len(&Kernel::Linear, &x)];
    assert_eq!(
        fit(
            &mut be,
            &ranklet_core::learn::kpc::Training { kernel: &Kernel::Linear, rows: &x, graph: &graph, s: data.s() },
            0.5,
            &mut w,
            &mut work
        )
        .unwrap(),
        Form::Primal
    );
    assert_close(&w, data.fx.get("rankrls_primal_linear_equal_w").2, 1e-8, "ls::fit primal");
    // RBF: dual, scored through the expansion, equal to the fixture.
    let kernel = Kernel::Rbf { gamma: 0.3 };
    let mut a = vec![0.0; data.n];
    let mut work = vec![0.0; fit_workspace_len(&kernel, &x)];
    assert_eq!(
        fit(
            &mut be,
            &ranklet_core::learn::kpc::Training { kernel: &kernel, rows: &x, graph: &graph, s: data.s() },
            0.1,
            &mut a,
            &mut work
        )
        .unwrap(),
        Form::Dual
    );
    let e = Expansion { kernel, basis: x, alpha: &a, offset: 0.0, centring: None };
    let xt = Rows::Dense(data.xt());
    let mut out = vec![0.0; data.nt];
    let mut work = vec![0.0; e.predict_workspace_len(&xt)];
    e.predict(&mut be, &xt, &mut out, &mut work).unwrap();
    assert_close(&out, data.fx.get("rankrls_dual_rbf_equal_pred").2, 1e-8, "ls::fit dual");
    // The one-call leave-query-out equals the step function on the kernel.
    let mut got = vec![0.0; data.n];
    let mut work = vec![0.0; holdout_workspace_len(&kernel, &x, &graph)];
    holdout(
        &mut be,
        &ranklet_core::learn::kpc::Training { kernel: &kernel, rows: &x, graph: &graph, s: data.s() },
        0.1,
        &mut got,
        &mut work,
    )
    .unwrap();
    let k = kmat(&kernel, data.x(), data.x());
    let mut want = vec![0.0; data.n];
    let mb = qptr.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    let mut work = vec![0.0; ls_dual_holdout_workspace_len(data.n, mb)];
    ls_dual_holdout(
        &mut be,
        MatRef::from_col_major(&k, data.n, data.n).unwrap(),
        &graph,
        data.s(),
        0.1,
        &mut want,
        &mut work,
    )
    .unwrap();
    assert_close(&got, &want, 1e-12, "ls::holdout");
    // λ = 0 is refused for the dual form, a pair graph for the shortcut.
    assert_eq!(
        fit(
            &mut be,
            &ranklet_core::learn::kpc::Training { kernel: &kernel, rows: &x, graph: &graph, s: data.s() },
            0.0,
            &mut a,
            &mut vec![0.0; fit_workspace_len(&kernel, &x)]
        ),
        Err(LearnError::BadLambda)
    );
    let pairs = [Pair { winner: 0, loser: 1, magnitude: 1.0 }];
    let pg = Graph::Pairs { n: data.n, pairs: &pairs };
    let mut work = vec![0.0; holdout_workspace_len(&kernel, &x, &pg)];
    assert_eq!(
        holdout(
            &mut be,
            &ranklet_core::learn::kpc::Training { kernel: &kernel, rows: &x, graph: &pg, s: data.s() },
            0.1,
            &mut got,
            &mut work
        ),
        Err(LearnError::Unsupported)
    );
}

#[test]
fn linear_kernel_expansion_folds_into_the_same_linear_model() {
    // A centred linear-kernel KPC expansion and its folded (w, b) score
    // every test row identically.
    let data = Data::new();
    let qptr = data.qptr();
    let graph = Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal };
    let mut bw = backend_work();
    let mut be = Portable::new(&mut bw);
    let (x, xt) = (Rows::Dense(data.x()), Rows::Dense(data.xt()));
    let p = 3.min(data.d);
    let mut alpha = vec![0.0; data.n];
    let mut cm = vec![0.0; data.n];
    let mut work = vec![0.0; kpc::fit_workspace_len(&x, p)];
    let f = kpc::fit(
        &mut be,
        &kpc::Training { kernel: &Kernel::Linear, rows: &x, graph: &graph, s: data.s() },
        0.0,
        p,
        &mut alpha,
        &mut cm,
        &mut work,
    )
    .unwrap();
    let e = Expansion {
        kernel: Kernel::Linear,
        basis: x,
        alpha: &alpha,
        offset: f.offset,
        centring: Some(Centring { col_means: &cm, grand_mean: f.grand_mean }),
    };
    let mut via_expansion = vec![0.0; data.nt];
    let mut work = vec![0.0; e.predict_workspace_len(&xt)];
    e.predict(&mut be, &xt, &mut via_expansion, &mut work).unwrap();
    let mut w = vec![0.0; data.d];
    let mut work = vec![0.0; e.fold_linear_workspace_len()];
    let b = e.fold_linear(&mut w, &mut work).unwrap();
    let mut via_linear = vec![0.0; data.nt];
    ranklet_core::learn::expansion::predict_linear(&w, b, &xt, &mut via_linear).unwrap();
    assert_close(&via_linear, &via_expansion, 1e-9, "folded linear model");
}
