//! The three learners that ask questions pick the same next pair of the
//! same posterior: the online RankRLS (rows `xᵢ`, posterior of the scores
//! `N(Xw, X·A⁻¹·Xᵀ)`), the device preference GP (that posterior written as a
//! kind-8 model) and active exploration (`select_pairs_cov`, what `ranklet
//! suggest` calls; it shares its search with `select_pairs`). Exactly
//! representable cases pin the tie rule, where the three rules used to
//! differ; random ones check that they agree generically.

use ranklet_core::backend::Portable;
use ranklet_core::format::{ElementType, Model, ModelSpec, ModelView, PrefGpModel, Values};
use ranklet_core::learn::online::OnlineRankRls;
use ranklet_core::learn::pref::active::{select_cov_workspace_len, select_pairs_cov, Pick};
use ranklet_core::learn::pref::device::DevicePrefGp;
use ranklet_core::learn::pref::Likelihood;
use ranklet_core::learn::LearnError;
use ranklet_core::LinalgError;

/// The next pair `(i, j, ratio)` of each path, for `n` candidate rows
/// (`n × d`) of `learner`.
fn three_paths(learner: &OnlineRankRls<'_, f64>, rows: &[f64], n: usize) -> [Option<(usize, usize, f64)>; 3] {
    let d = learner.dim();
    let mut work = vec![0.0; OnlineRankRls::<f64>::next_pair_workspace_len(n, d)];
    let online = learner.next_pair(rows, n, &mut work).unwrap();

    // The same posterior over the n items: μ = X·w, Σ = ZᵀZ with Z = L⁻¹Xᵀ.
    let mean: Vec<f64> = rows.chunks(d).map(|x| learner.score(x).unwrap()).collect();
    let z: Vec<Vec<f64>> = rows
        .chunks(d)
        .map(|x| {
            let mut zi = x.to_vec();
            let l = learner.factor_packed();
            for r in 0..d {
                let row = &l[r * (r + 1) / 2..r * (r + 1) / 2 + r + 1];
                let s: f64 = (0..r).map(|c| row[c] * zi[c]).sum();
                zi[r] = (zi[r] - s) / row[r];
            }
            zi
        })
        .collect();
    let mut cov = Vec::new();
    for i in 0..n {
        for j in 0..=i {
            cov.push((0..d).map(|k| z[i][k] * z[j][k]).sum::<f64>());
        }
    }
    let m = Model::PrefGp(PrefGpModel {
        sigma: 0.5,
        count: 0,
        mean: Values::F64(&mean),
        cov_packed: Values::F64(&cov),
        item_names: "",
    });
    let spec = ModelSpec::new(m, ElementType::F64);
    let mut file = vec![0u8; spec.buffer_len()];
    spec.emit(&mut file).unwrap();
    let view = ModelView::new_checked(&file).unwrap();
    let mut st = vec![0.0f64; DevicePrefGp::<f64>::storage_len(n)];
    let gp = DevicePrefGp::from_model(&mut st, &view).unwrap();
    let device = gp.next_pair();

    let cands: Vec<(usize, usize)> = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect();
    let mut bw = vec![0.0; Portable::workspace_len(n)];
    let mut be = Portable::new(&mut bw);
    let mut picks = [Pick::default(); 1];
    let mut work = vec![0.0; select_cov_workspace_len(n)];
    let lik = Likelihood::Probit { sigma: 0.5 };
    let got = select_pairs_cov(&mut be, &mean, &cov, lik, &cands, &mut picks, &mut work).unwrap();
    let active = (got == 1).then(|| (cands[picks[0].candidate].0, cands[picks[0].candidate].1, picks[0].ratio()));
    [online, device, active]
}

/// Rows `cᵢ·eᵢ` under the prior `w0` with λ = 1 and no observations:
/// `L = I`, `w = w0`, so `μᵢ = w0ᵢ·cᵢ` and `v_ij = cᵢ² + cⱼ²`, exact in
/// every path (integer `cᵢ`, so the eigen factor's `√(cᵢ²)` is exact too).
fn diagonal(w0: &[f64], c: &[f64]) -> [Option<(usize, usize, f64)>; 3] {
    let n = c.len();
    let mut storage = vec![0.0; OnlineRankRls::<f64>::storage_len(n)];
    let learner = OnlineRankRls::new(&mut storage, w0, 1.0, 0).unwrap();
    let mut rows = vec![0.0; n * n];
    for (i, &ci) in c.iter().enumerate() {
        rows[i * n + i] = ci;
    }
    three_paths(&learner, &rows, n)
}

#[test]
fn equal_ratios_go_to_the_larger_variance_then_the_smaller_pair() {
    // μ = [0, 1, 10, 12], v = cᵢ² + cⱼ² with c = [1, 1, 2, 2]: (0, 1) has
    // v/m² = 2/1 and (2, 3) has 8/4, every other pair less. The online
    // learner used to take the smaller pair (0, 1); now all take (2, 3).
    for path in diagonal(&[0.0, 1.0, 5.0, 6.0], &[1.0, 1.0, 2.0, 2.0]) {
        assert_eq!(path, Some((2, 3, 2.0)));
    }
    // Equal ratio and variance: the smaller pair.
    for path in diagonal(&[0.0, 1.0, 5.0, 6.0], &[1.0, 1.0, 1.0, 1.0]) {
        assert_eq!(path, Some((0, 1, 2.0)));
    }
    // Equal means (every ratio +∞): the larger variance.
    for path in diagonal(&[3.0, 1.0, 1.0, 0.75], &[1.0, 3.0, 3.0, 4.0]) {
        assert_eq!(path, Some((1, 3, f64::INFINITY)));
    }
}

/// Uniform numbers in `[0, 1)` by xorshift from `seed`.
fn rng(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn random_posteriors_ask_the_same_question() {
    let mut next = rng(0x9e37_79b9_7f4a_7c15);
    let mut uniform = || next() * 2.0 - 1.0;
    for case in 0..20 {
        let (d, n) = (2 + case % 4, 3 + case % 7);
        let mut storage = vec![0.0; OnlineRankRls::<f64>::storage_len(d)];
        let w0: Vec<f64> = (0..d).map(|_| uniform()).collect();
        let mut learner = OnlineRankRls::new(&mut storage, &w0, 0.5, 0).unwrap();
        for _ in 0..case {
            let a: Vec<f64> = (0..d).map(|_| uniform()).collect();
            let b: Vec<f64> = (0..d).map(|_| uniform()).collect();
            learner.observe(&a, &b, 1.0).unwrap();
        }
        let rows: Vec<f64> = (0..n * d).map(|_| uniform()).collect();
        let [online, device, active] = three_paths(&learner, &rows, n);
        let (i, j, r) = online.unwrap();
        for other in [device, active] {
            let (oi, oj, or) = other.unwrap();
            assert_eq!((oi, oj), (i, j), "case {case}: {online:?} vs {other:?}");
            // v from ‖L⁻¹(xᵢ − xⱼ)‖², from Σ entries and from an eigen factor:
            // the same number up to rounding of the ill-conditioned ones.
            assert!((or - r).abs() <= 1e-8 * r, "case {case}: {r} vs {or}");
        }
    }
}

/// `select_pairs_lowrank` (a kind-10 posterior `CCᵀ + diag(r)`, screened
/// search, factor updated between picks) against `select_pairs_cov` on the
/// same posterior assembled densely with every pair a candidate (each pick
/// scores all pairs): the same pairs in the same order, their variances and
/// mean differences to 1e-9 relative (an eigendecomposition against a
/// factor update: rounding near 1e-13). Items with and without a diagonal
/// variance, both likelihoods, more picks than the factor's rank; a
/// posterior with a single pair left, and none.
#[test]
fn lowrank_picks_are_the_dense_picks_of_every_pair() {
    use ranklet_core::learn::pref::active::{select_lowrank_workspace_len, select_pairs_lowrank, PairPick};
    let mut next = rng(0x2545_f491_4f6c_dd1d);
    for (n, p, k) in [(9, 2, 6), (24, 3, 10), (40, 5, 12)] {
        let mean: Vec<f64> = (0..n).map(|_| 2.0 * next() - 1.0).collect();
        let c: Vec<f64> = (0..n * p).map(|_| next() - 0.5).collect();
        let r: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { 0.0 } else { 0.2 * next() }).collect();
        let mut cov = Vec::new();
        for i in 0..n {
            for j in 0..=i {
                let cc: f64 = (0..p).map(|t| c[i * p + t] * c[j * p + t]).sum();
                cov.push(cc + if i == j { r[i] } else { 0.0 });
            }
        }
        let cands: Vec<(usize, usize)> = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect();
        for lik in [Likelihood::Probit { sigma: 0.3 }, Likelihood::Gaussian { noise: 0.4 }] {
            let mut bw = vec![0.0; Portable::workspace_len(n)];
            let mut be = Portable::new(&mut bw);
            let mut want = vec![Pick::default(); k];
            let mut work = vec![0.0; select_cov_workspace_len(n)];
            let got_w = select_pairs_cov(&mut be, &mean, &cov, lik, &cands, &mut want, &mut work).unwrap();
            let mut got = vec![PairPick::default(); k];
            let mut work = vec![0.0; select_lowrank_workspace_len(n, p, k).unwrap()];
            let mut order = vec![0u32; n];
            let got_l = select_pairs_lowrank(&mean, &c, p, &r, lik, &mut got, &mut work, &mut order).unwrap();
            assert_eq!(got_l, got_w, "n = {n}, {lik:?}");
            assert_eq!(got_l, k);
            for (t, (g, w)) in got.iter().zip(&want).enumerate() {
                let (wi, wj) = cands[w.candidate];
                assert_eq!((g.i, g.j), (wi, wj), "n = {n}, {lik:?}, pick {t}");
                assert!((g.var - w.var).abs() <= 1e-9 * w.var, "pick {t}: variance {} vs {}", g.var, w.var);
                let scale = w.mean_diff.abs().max(1e-3);
                assert!(
                    (g.mean_diff - w.mean_diff).abs() <= 1e-9 * scale,
                    "pick {t}: mean {} vs {}",
                    g.mean_diff,
                    w.mean_diff
                );
            }
        }
    }
    // Two items: one pair, then none left; a certain posterior: none.
    let lik = Likelihood::Probit { sigma: 1.0 };
    let mut got = [PairPick::default(); 3];
    let mut work = vec![0.0; select_lowrank_workspace_len(2, 1, 3).unwrap()];
    let mut order = [0u32; 2];
    let n =
        select_pairs_lowrank(&[0.5, 0.0], &[1.0, 0.0], 1, &[0.0, 0.5], lik, &mut got, &mut work, &mut order).unwrap();
    assert_eq!(n, 1);
    assert_eq!((got[0].i, got[0].j), (0, 1));
    assert!((got[0].var - 1.5).abs() <= 1e-15 && (got[0].mean_diff - 0.5).abs() <= 1e-15);
    let n =
        select_pairs_lowrank(&[0.5, 0.0], &[1.0, 1.0], 1, &[0.0, 0.0], lik, &mut got, &mut work, &mut order).unwrap();
    assert_eq!(n, 0);
    // Shapes and values: each refusal by its own error.
    let mut err = |mean: &[f64], c: &[f64], r: &[f64], lik: Likelihood, work: &mut [f64], order: &mut [u32]| {
        select_pairs_lowrank(mean, c, 1, r, lik, &mut got, work, order).unwrap_err()
    };
    let dims = LearnError::Numerics(LinalgError::DimensionMismatch);
    assert_eq!(err(&[0.5, 0.0], &[1.0], &[0.0, 0.0], lik, &mut work, &mut order), dims);
    assert_eq!(err(&[0.5, 0.0], &[1.0, 0.0], &[0.0], lik, &mut work, &mut order), dims);
    assert_eq!(err(&[0.5, 0.0], &[1.0, 0.0], &[0.0, 0.0], lik, &mut work, &mut order[..1]), dims);
    let negative = LearnError::Numerics(LinalgError::InvalidParameter);
    assert_eq!(err(&[0.5, 0.0], &[1.0, 0.0], &[0.0, -1.0], lik, &mut work, &mut order), negative);
    let nan = LearnError::Numerics(LinalgError::NonFinite);
    assert_eq!(err(&[0.5, f64::NAN], &[1.0, 0.0], &[0.0, 0.0], lik, &mut work, &mut order), nan);
    assert_eq!(err(&[0.5, 0.0], &[f64::INFINITY, 0.0], &[0.0, 0.0], lik, &mut work, &mut order), nan);
    let bad_noise = Likelihood::Probit { sigma: 0.0 };
    assert_eq!(err(&[0.5, 0.0], &[1.0, 0.0], &[0.0, 0.0], bad_noise, &mut work, &mut order), LearnError::BadNoise);
    // 2·(1 + 6) + 6 + 7 = 27 values for n = 2, p = 1, k = 3.
    let short = LearnError::Numerics(LinalgError::WorkspaceTooSmall { needed: 27, got: 26 });
    assert_eq!(err(&[0.5, 0.0], &[1.0, 0.0], &[0.0, 0.0], lik, &mut work[..26], &mut order), short);
}
