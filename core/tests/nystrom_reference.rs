//! The reduced-basis (Nyström) learners against numpy
//! (`fixtures/nystrom/gen_nystrom.py`; regenerate with
//! `python3 gen_nystrom.py > nystrom.txt`): the landmarks and residuals of
//! pivoted Cholesky against a brute-force recomputation of the Schur
//! complement at every step, and the predictions of Nyström RLS / RankRLS
//! and KPCR / KPCRank against the reduced system and the symmetric feature
//! map `K_nm·K_mm^{-½}` solved independently. The fixture's `K_mm` has
//! condition number 1.6 and its full `K` 4.0e2 (recorded in the file), so
//! both sides agree to ~1e-13; the asserted 1e-9 relative leaves room for
//! the different orders of summation. With `m = n` the Nyström learners
//! must reproduce the full ones (same bound, same conditioning).

use ranklet_core::backend::Portable;
use ranklet_core::graph::{Graph, QueryWeight};
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::expansion::{Centring, Expansion};
use ranklet_core::learn::kpc::{self, KpcGrid};
use ranklet_core::learn::{ls, nystrom};
use ranklet_core::linalg::Rows;
use ranklet_core::MatRef;

struct Fixture(Vec<(String, usize, usize, Vec<f64>)>);

impl Fixture {
    fn load() -> Self {
        let text = include_str!("fixtures/nystrom/nystrom.txt");
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
    fn x(&self) -> MatRef<'_, f64> {
        let (n, d, v) = self.get("X");
        MatRef::from_row_major(v, n, d).unwrap()
    }
    fn xt(&self) -> MatRef<'_, f64> {
        let (n, d, v) = self.get("Xt");
        MatRef::from_row_major(v, n, d).unwrap()
    }
    fn qptr(&self) -> Vec<usize> {
        self.get("qptr").2.iter().map(|&v| v as usize).collect()
    }
}

const KERNEL: Kernel = Kernel::Rbf { gamma: 0.5 };
const TOL: f64 = 1e-9;

fn assert_close(got: &[f64], want: &[f64], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(scale > 0.0, "{what}: all-zero reference");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= rel * scale, "{what}[{i}]: {g} vs {w} (scale {scale})");
    }
}

fn with_backend<R>(f: impl FnOnce(&mut Portable<'_>) -> R) -> R {
    let mut w = vec![0.0; Portable::workspace_len(64)];
    let mut be = Portable::new(&mut w);
    f(&mut be)
}

/// The rows `piv` of `x`, column-major (a basis for [`Expansion`]).
fn gather(x: MatRef<'_, f64>, piv: &[usize]) -> Vec<f64> {
    let (r, d) = (piv.len(), x.ncols());
    let mut out = vec![0.0; r * d];
    for (t, &p) in piv.iter().enumerate() {
        for j in 0..d {
            out[j * r + t] = x.at(p, j);
        }
    }
    out
}

/// Predictions on `Xt` of `offset + Σ alpha_j k(x, x_{piv_j})`.
fn predict_landmarks(fx: &Fixture, piv: &[usize], alpha: &[f64], offset: f64) -> Vec<f64> {
    let d = fx.x().ncols();
    let basis = gather(fx.x(), piv);
    let basis = Rows::Dense(MatRef::from_col_major(&basis, piv.len(), d).unwrap());
    let e = Expansion { kernel: KERNEL, basis, alpha, offset, centring: None };
    let xt = Rows::Dense(fx.xt());
    let mut out = vec![0.0; fx.xt().nrows()];
    let mut work = vec![0.0; e.predict_workspace_len(&xt)];
    with_backend(|be| e.predict(be, &xt, &mut out, &mut work)).unwrap();
    out
}

#[test]
fn pivoted_cholesky_matches_brute_force_picks_residuals_and_factor() {
    let fx = Fixture::load();
    let (n, m) = (fx.x().nrows(), fx.get("piv").1);
    let x = Rows::Dense(fx.x());
    let (mut g, mut piv, mut resid) = (vec![0.0; n * m], vec![0; m], vec![0.0; n]);
    let r = nystrom::pivoted_cholesky(&KERNEL, &x, 0.0, &mut g, &mut piv, &mut resid).unwrap();
    assert_eq!(r, m);
    let want: Vec<usize> = fx.get("piv").2.iter().map(|&v| v as usize).collect();
    assert_eq!(piv, want);
    // Residuals are differences of O(1) numbers: absolute 1e-12.
    for (i, (a, b)) in resid.iter().zip(fx.get("resid").2).enumerate() {
        assert!((a - b).abs() <= 1e-12, "resid[{i}]: {a} vs {b}");
    }
    // G (row-major in the fixture) against the factor written column-major.
    let gref = MatRef::from_row_major(fx.get("G").2, n, m).unwrap();
    let got = MatRef::from_col_major(&g, n, m).unwrap();
    for i in 0..n {
        for j in 0..m {
            assert!((got.at(i, j) - gref.at(i, j)).abs() <= 1e-12, "G[{i},{j}]");
        }
    }
    // The residual trace is the trace-norm error of K ≈ GGᵀ and shrinks
    // with every landmark.
    let mut last = f64::INFINITY;
    for mm in 1..=m {
        let (mut g, mut piv, mut resid) = (vec![0.0; n * mm], vec![0; mm], vec![0.0; n]);
        nystrom::pivoted_cholesky(&KERNEL, &x, 0.0, &mut g, &mut piv, &mut resid).unwrap();
        let tr: f64 = resid.iter().sum();
        assert!(tr < last, "trace {tr} after {mm} landmarks, {last} before");
        last = tr;
    }
}

#[test]
fn pivoted_cholesky_stops_at_the_pivot_tolerance_on_a_rank_deficient_kernel() {
    // Duplicated rows: the kernel matrix has rank 5 of 10, so at most five
    // landmarks are taken whatever m, and the residual is zero after them.
    let fx = Fixture::load();
    let d = fx.x().ncols();
    let mut rows = vec![0.0; 10 * d];
    for i in 0..10 {
        for j in 0..d {
            rows[j * 10 + i] = fx.x().at(i % 5, j);
        }
    }
    let x = Rows::Dense(MatRef::from_col_major(&rows, 10, d).unwrap());
    let (mut g, mut piv, mut resid) = (vec![0.0; 10 * 8], vec![0; 8], vec![0.0; 10]);
    let r =
        nystrom::pivoted_cholesky(&KERNEL, &x, nystrom::default_pivot_tol(10), &mut g, &mut piv, &mut resid).unwrap();
    assert_eq!(r, 5);
    let mut picked = piv[..5].to_vec();
    picked.sort_unstable();
    assert!(picked.windows(2).all(|w| w[0] % 5 != w[1] % 5), "a duplicate was picked: {picked:?}");
    assert!(resid.iter().all(|&v| v <= 1e-12), "{resid:?}");
    assert!(g[5 * 10..].iter().all(|&v| v == 0.0));
}

#[test]
fn nystrom_rls_and_rankrls_match_the_reduced_system() {
    let fx = Fixture::load();
    let (n, m) = (fx.x().nrows(), fx.get("piv").1);
    let qptr = fx.qptr();
    let s = fx.get("s").2;
    let x = Rows::Dense(fx.x());
    let cases = [
        ("nys_rankrls_pred", Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal }),
        ("nys_rls_pred", Graph::Identity { n }),
    ];
    for (name, graph) in cases {
        let (mut piv, mut alpha) = (vec![0; m], vec![0.0; m]);
        let mut work = vec![0.0; nystrom::ls_fit_workspace_len(n, m)];
        let r = with_backend(|be| {
            nystrom::ls_fit(
                be,
                &nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s },
                0.1,
                0.0,
                &mut piv,
                &mut alpha,
                &mut work,
            )
        })
        .unwrap();
        assert_eq!(r, m);
        assert_close(&predict_landmarks(&fx, &piv, &alpha, 0.0), fx.get(name).2, TOL, name);
    }
}

#[test]
fn nystrom_kpcr_and_kpcrank_match_the_symmetric_feature_map() {
    let fx = Fixture::load();
    let (n, m, nt) = (fx.x().nrows(), fx.get("piv").1, fx.xt().nrows());
    let qptr = fx.qptr();
    let s = fx.get("s").2;
    let (x, xt) = (Rows::Dense(fx.x()), Rows::Dense(fx.xt()));
    let p = 5;
    let lambdas = [0.0, 0.5];
    for (algo, graph) in
        [("kpcrank", Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal }), ("kpcr", Graph::Identity { n })]
    {
        for lam in lambdas {
            let name = format!("nys_{algo}_lam{lam:?}_pred");
            let (mut piv, mut alpha) = (vec![0; m], vec![0.0; m]);
            let mut work = vec![0.0; nystrom::kpc_fit_workspace_len(n, m, p)];
            let (r, offset) = with_backend(|be| {
                let data = nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s };
                nystrom::kpc_fit(be, &data, lam, p, 0.0, &mut piv, &mut alpha, &mut work)
            })
            .unwrap();
            assert_eq!(r, m);
            assert_close(&predict_landmarks(&fx, &piv, &alpha, offset), fx.get(&name).2, TOL, &name);
        }
        // The CV fold (validation rows = Xt) gives the same predictions for
        // every (λ, p) point it shares with the fit.
        let grid = KpcGrid { lambdas: &lambdas, components: &[2, p] };
        let mut preds = vec![0.0; grid.len() * nt];
        let mut usable = [0; 2];
        let mut piv = vec![0; m];
        let mut work = vec![0.0; nystrom::kpc_cv_fold_workspace_len(n, nt, m, &grid)];
        with_backend(|be| {
            nystrom::kpc_cv_fold(
                be,
                &nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s },
                &xt,
                &grid,
                0.0,
                &mut piv,
                kpc::FoldOut { preds: &mut preds, usable: &mut usable },
                &mut work,
            )
        })
        .unwrap();
        for (li, lam) in lambdas.iter().enumerate() {
            let name = format!("nys_{algo}_lam{lam:?}_pred");
            assert_close(&preds[(li * 2 + 1) * nt..][..nt], fx.get(&name).2, TOL, &format!("fold {name}"));
        }
    }
}

/// Full-learner predictions on `Xt` of a kernel expansion over all rows.
fn predict_full(fx: &Fixture, alpha: &[f64], offset: f64, centring: Option<Centring<'_>>) -> Vec<f64> {
    let e = Expansion { kernel: KERNEL, basis: Rows::Dense(fx.x()), alpha, offset, centring };
    let xt = Rows::Dense(fx.xt());
    let mut out = vec![0.0; fx.xt().nrows()];
    let mut work = vec![0.0; e.predict_workspace_len(&xt)];
    with_backend(|be| e.predict(be, &xt, &mut out, &mut work)).unwrap();
    out
}

#[test]
fn with_every_row_as_a_landmark_the_nystrom_learners_equal_the_full_ones() {
    let fx = Fixture::load();
    let n = fx.x().nrows();
    let qptr = fx.qptr();
    let s = fx.get("s").2;
    let x = Rows::Dense(fx.x());
    let graphs = [Graph::Queries { query_ptr: &qptr, weight: QueryWeight::Equal }, Graph::Identity { n }];
    for graph in graphs {
        // RLS / RankRLS dual, λ = 0.1.
        let mut a = vec![0.0; n];
        let mut work = vec![0.0; ls::fit_workspace_len(&KERNEL, &x)];
        let data = nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s };
        with_backend(|be| ls::fit(be, &data, 0.1, &mut a, &mut work)).unwrap();
        let full = predict_full(&fx, &a, 0.0, None);
        let (mut piv, mut alpha) = (vec![0; n], vec![0.0; n]);
        let mut work = vec![0.0; nystrom::ls_fit_workspace_len(n, n)];
        let tol = nystrom::default_pivot_tol(n);
        let r = with_backend(|be| {
            nystrom::ls_fit(
                be,
                &nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s },
                0.1,
                tol,
                &mut piv,
                &mut alpha,
                &mut work,
            )
        })
        .unwrap();
        assert_eq!(r, n, "cond(K) = 4e2: every row is a landmark");
        assert_close(&predict_landmarks(&fx, &piv, &alpha, 0.0), &full, TOL, "ls m = n");

        // KPCR / KPCRank, p = 12, λ = 0 and 0.5.
        for lam in [0.0, 0.5] {
            let p = 12;
            let (mut a, mut cm) = (vec![0.0; n], vec![0.0; n]);
            let mut work = vec![0.0; kpc::fit_workspace_len(&x, p)];
            let f = with_backend(|be| {
                kpc::fit(
                    be,
                    &nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s },
                    lam,
                    p,
                    &mut a,
                    &mut cm,
                    &mut work,
                )
            })
            .unwrap();
            let full = predict_full(&fx, &a, f.offset, Some(Centring { col_means: &cm, grand_mean: f.grand_mean }));
            let (mut piv, mut alpha) = (vec![0; n], vec![0.0; n]);
            let mut work = vec![0.0; nystrom::kpc_fit_workspace_len(n, n, p)];
            let (r, offset) = with_backend(|be| {
                let data = nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s };
                nystrom::kpc_fit(be, &data, lam, p, tol, &mut piv, &mut alpha, &mut work)
            })
            .unwrap();
            assert_eq!(r, n);
            assert_close(&predict_landmarks(&fx, &piv, &alpha, offset), &full, TOL, &format!("kpc m = n, λ = {lam}"));
        }
    }
}

#[test]
fn bad_requests_are_refused() {
    let fx = Fixture::load();
    let n = fx.x().nrows();
    let s = fx.get("s").2;
    let x = Rows::Dense(fx.x());
    let graph = Graph::Identity { n };
    let mut work = vec![0.0; nystrom::kpc_fit_workspace_len(n, n + 1, 3)];
    with_backend(|be| {
        // m = 0 and m > n.
        for m in [0, n + 1] {
            let (mut piv, mut alpha) = (vec![0; m], vec![0.0; m]);
            assert!(nystrom::ls_fit(
                be,
                &nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s },
                0.1,
                0.0,
                &mut piv,
                &mut alpha,
                &mut work
            )
            .is_err());
        }
        // More components than landmarks; a negative pivot tolerance.
        let (mut piv, mut alpha) = (vec![0; 2], vec![0.0; 2]);
        let data = nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s };
        let e = nystrom::kpc_fit(be, &data, 0.0, 3, 0.0, &mut piv, &mut alpha, &mut work);
        assert!(matches!(e, Err(ranklet_core::learn::LearnError::TooManyComponents { requested: 3, .. })), "{e:?}");
        let e = nystrom::ls_fit(
            be,
            &nystrom::Training { kernel: &KERNEL, rows: &x, graph: &graph, s },
            0.1,
            -1.0,
            &mut piv,
            &mut alpha,
            &mut work,
        );
        assert!(e.is_err());
    });
}
