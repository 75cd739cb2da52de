//! Nyström kernel rankers from **additive statistics**: the reduced-basis
//! learners of [`super::nystrom`] trained on row blocks summarised
//! independently (shards, partitions on other machines), with the
//! landmarks chosen once and every block mapped by the same features.
//!
//! # The feature map
//!
//! Landmarks `z_1…z_m` and `L` with `K_mm = LLᵀ` come from
//! [`super::nystrom::landmarks`] (pivoted Cholesky of a sample, the very
//! steps `--basis` takes on the training rows). A row's features are
//! `φ(x) = L⁻¹k_m(x)` ([`features`]): for the rows the pivoted Cholesky
//! saw, the rows of its factor `G = K_nm·L⁻ᵀ`, so the statistics of `φ` are
//! those of [`super::nystrom`]'s primal problem, and a weight vector `β`
//! in feature space is the kernel expansion `a = L⁻ᵀβ` over the landmarks
//! ([`super::nystrom::coefficients`]) — the usual reduced-basis model a
//! device scores. (Equivalently `K_mm^{-1/2}` up to the rotation
//! `K_mm^{-1/2}L`, which no learner here sees: RLS/RankRLS and the
//! components of KPC are rotation-equivariant.)
//!
//! # RLS / RankRLS
//!
//! [`super::ls_stats`] on `φ` in `m` dimensions, unchanged.
//!
//! # KPCR / KPCRank (000 §3–4 in the landmark space)
//!
//! The centred features `φ − φ̄` of the training rows have the `m × m`
//! covariance `C = Σφφᵀ − (Σφ)(Σφ)ᵀ/n` (000 §6.1's centring, from the fold
//! totals); its top-p eigenvectors `U_p` give the components
//! `z = U_pᵀ(φ − φ̄)`. The normal equations of 000 eq. 8,
//! `(ZᵀLZ + λI)·w̄ = ZᵀLs`, are `(U_pᵀAU_p + λI)·w̄ = U_pᵀb` with `A`, `b`
//! the RankRLS system of [`super::ls_stats`] (a query Laplacian annihilates
//! constants, so centring changes neither) or, for KPCR (`L = I`),
//! `A = C`, `b = Σφy − Σφ·Σy/n`. As in [`super::kpc`], one Cholesky
//! factorisation of the `p_max × p_max` matrix gives every `p` by its
//! leading block, so a whole (λ, p) grid costs one `m × m`
//! eigendecomposition per training system (the full data, and total − fold
//! `k` for each fold) and one `p_max³` factorisation per λ. The model is
//! `f(x) = b₀ + βᵀ(φ(x) − φ̄)`, `β = U_pw̄`, `b₀ = mean(s)` for KPCR and 0
//! for KPCRank: `a = L⁻ᵀβ` and offset `b₀ − βᵀφ̄`, exactly
//! [`super::nystrom::kpc_fit`]'s model when the landmarks are the same.

use super::kpc::kpc_solve;
use super::ls_stats::{fold_systems, value, StatsRef, Target, N, SX, SY};
use super::{check_lambda, LearnError};
use crate::backend::Backend;
use crate::kernel::{kernel_matrix, kernel_matrix_workspace_len, Kernel};
use crate::linalg::chol::cholesky_leading_in_place;
use crate::linalg::Rows;
use crate::{scratch, LinalgError, MatMut, MatRef};

/// A Nyström feature map: the kernel, the `m` landmark rows and `L`
/// (`m × m`, column-major, lower triangle with the diagonal read).
#[derive(Clone, Copy, Debug)]
pub struct FeatureMap<'a> {
    /// The kernel.
    pub kernel: &'a Kernel,
    /// The landmarks (`m` rows).
    pub landmarks: &'a Rows<'a>,
    /// `L`, `K_mm = LLᵀ`.
    pub factor: &'a [f64],
}

/// Scratch for [`features`] of the rows `x`.
pub fn features_workspace_len(map: &FeatureMap<'_>, x: &Rows<'_>) -> usize {
    kernel_matrix_workspace_len(map.landmarks, x)
}

/// The features `φ(x) = L⁻¹k_m(x)` of the rows `x` into `out` (`n × m`,
/// row-major, the layout [`super::ls_stats::accumulate`] reads): the
/// kernel block `K_mx` by the backend's gemm, then one triangular solve
/// with `n` right-hand sides.
///
/// # Errors
/// [`LinalgError::DimensionMismatch`] on shapes; [`LinalgError::NonFinite`]
/// for a non-finite row or kernel value; as [`kernel_matrix`].
pub fn features<B: Backend>(
    backend: &mut B,
    map: &FeatureMap<'_>,
    x: &Rows<'_>,
    out: &mut [f64],
    work: &mut [f64],
) -> Result<(), LinalgError> {
    let (m, n) = (map.landmarks.nrows(), x.nrows());
    if m == 0 || map.factor.len() != m * m || x.ncols() != map.landmarks.ncols() || out.len() != n * m {
        return Err(LinalgError::DimensionMismatch);
    }
    if n == 0 {
        return Ok(());
    }
    // K_mx, m × n column-major: row-major n × m.
    kernel_matrix(backend, map.kernel, map.landmarks, x, MatMut::from_col_major(out, m, n)?, work)?;
    if out.iter().any(|v| !v.is_finite()) {
        return Err(LinalgError::NonFinite);
    }
    backend.solve_lower_in_place(MatRef::from_col_major(map.factor, m, m)?, MatMut::from_col_major(out, m, n)?)
}

/// A (λ, p) grid of KPCR / KPCRank from statistics.
#[derive(Clone, Copy, Debug)]
pub struct Grid<'a> {
    /// Ridge values `λ ≥ 0`.
    pub lambdas: &'a [f64],
    /// Component counts `p ≥ 1`, each at most `m`.
    pub components: &'a [usize],
}

impl Grid<'_> {
    fn points(&self) -> usize {
        self.lambdas.len() * self.components.len()
    }

    fn p_max(&self) -> usize {
        self.components.iter().copied().max().unwrap_or(0)
    }
}

scratch! {
    /// Scratch of [`kpc_solve_stats`].
    struct KpcScratch(m: usize, k: usize, p: usize) {
        /// Each fold's system `A_k` (`m × m`).
        a: k * m * m,
        /// Each fold's `b_k`.
        b: k * m,
        /// Each fold's `sᵀL_ks` and row count.
        c: k * 2,
        /// The training system `A`.
        sys: m * m,
        /// The training covariance `C`.
        cov: m * m,
        /// Its eigenvectors.
        vecs: m * m,
        /// Its eigenvalues.
        vals: m,
        /// `U_p` (`m × p`).
        up: m * p,
        /// `A·U_p`.
        au: m * p,
        /// `M = U_pᵀAU_p + λI`, then its leading factor.
        mm: p * p,
        /// `U_pᵀb`, then `w̄`.
        r: p,
        /// `w̄`.
        w: p,
        /// `β`.
        beta: m,
        /// `A_k·β`.
        t: m,
        /// The training `b`.
        bt: m,
        /// The training `Σφ`.
        sx: m,
    }
}

/// Scratch for [`kpc_solve_stats`].
pub fn kpc_solve_stats_workspace_len(m: usize, folds: usize, grid: &Grid<'_>) -> usize {
    KpcScratch::len(m, folds, grid.p_max())
}

/// What [`kpc_solve_stats`] writes.
#[derive(Debug)]
pub struct KpcOut<'a> {
    /// Full-data feature-space weights `β` per grid point (`λ`-major:
    /// point `li·P + pi`), `points × m`; NaN where the point is unusable.
    pub beta: &'a mut [f64],
    /// Full-data offsets `b₀ − βᵀφ̄` per grid point.
    pub offset: &'a mut [f64],
    /// `K × points` (empty without folds): fold `k`'s held-out objective
    /// per held-out row, `(s − f)ᵀL_k(s − f)/n_k`, of the model trained
    /// without fold `k` (with `L_k = I` for KPCR); NaN where unusable.
    pub cv: &'a mut [f64],
}

/// Every (λ, p) of `grid` for the full data and, with `K > 1` folds, every
/// fold's training part (total − fold `k`), from merged Nyström statistics
/// (module docs). A point whose `p` exceeds the usable components of its
/// training system (eigenvalues of `C` above `n·ε·λ_max`, and a positive
/// definite leading block of `M`) is NaN.
///
/// # Errors
/// [`LearnError::NoComponents`] for an empty grid or `p = 0`;
/// [`LearnError::TooManyComponents`] for `p > m`; `BadLambda`; `BadGraph`
/// for an empty fold or query record; dimension and workspace errors.
pub fn kpc_solve_stats<B: Backend>(
    backend: &mut B,
    stats: &StatsRef<'_>,
    target: Target,
    grid: &Grid<'_>,
    out: KpcOut<'_>,
    work: &mut [f64],
) -> Result<(), LearnError> {
    let shape = &stats.shape;
    shape.check()?;
    let (m, kf, np, pts) = (shape.d, shape.folds, grid.components.len(), grid.points());
    let p_max = grid.p_max();
    if np == 0 || grid.lambdas.is_empty() || grid.components.contains(&0) {
        return Err(LearnError::NoComponents);
    }
    if p_max > m {
        return Err(LearnError::TooManyComponents { requested: p_max, rank: m });
    }
    for &l in grid.lambdas {
        check_lambda(l, false)?;
    }
    let cv_len = if kf > 1 { kf * pts } else { 0 };
    if stats.totals.len() != shape.totals_buffer_len()
        || out.beta.len() != pts * m
        || out.offset.len() != pts
        || out.cv.len() != cv_len
    {
        return Err(LinalgError::DimensionMismatch.into());
    }
    let (KpcScratch { a, b, c, sys, cov, vecs, vals, up, au, mm, r, w, beta, t, bt, sx }, _) =
        KpcScratch::split(work, m, kf, p_max)?;
    fold_systems(stats, target, a, b, c)?;
    let (mm2, mt) = (m * m, shape.total_len());
    let total = |k: usize, i: usize| value(&stats.totals[k * 2 * mt..(k + 1) * 2 * mt], i);
    let sxx = |k: usize, i: usize, j: usize| {
        let (i, j) = if i >= j { (i, j) } else { (j, i) };
        total(k, shape.sxx() + i * (i + 1) / 2 + j)
    };
    out.beta.fill(f64::NAN);
    out.offset.fill(f64::NAN);
    out.cv.fill(f64::NAN);
    let fits = if kf > 1 { kf + 1 } else { 1 };
    for f in 0..fits {
        let held = (kf > 1 && f < kf).then_some(f);
        let in_train = |k: usize| held != Some(k);
        // Training rows, Σφ, Σy, and the covariance C: the folds' co-moments
        // plus their means' spread about the training mean (positive
        // semi-definite parts only, so no digits cancel).
        let n: f64 = (0..kf).filter(|&k| in_train(k)).map(|k| total(k, N)).sum();
        if !(n >= 1.0) {
            return Err(LearnError::BadGraph);
        }
        let my: f64 = (0..kf).filter(|&k| in_train(k)).map(|k| total(k, N) * total(k, SY)).sum::<f64>() / n;
        let sy = n * my;
        for (i, v) in sx.iter_mut().enumerate() {
            *v = (0..kf).filter(|&k| in_train(k)).map(|k| total(k, N) * total(k, SX + i)).sum();
        }
        let dev = |k: usize, i: usize| total(k, SX + i) - sx[i] / n;
        for j in 0..m {
            for i in j..m {
                let v: f64 =
                    (0..kf).filter(|&k| in_train(k)).map(|k| sxx(k, i, j) + total(k, N) * dev(k, i) * dev(k, j)).sum();
                cov[j * m + i] = v;
                cov[i * m + j] = v;
            }
        }
        // The training system.
        match target {
            Target::Rls => {
                sys.copy_from_slice(cov);
                for i in 0..m {
                    bt[i] = (0..kf)
                        .filter(|&k| in_train(k))
                        .map(|k| total(k, shape.sxy() + i) + total(k, N) * dev(k, i) * (total(k, SY) - my))
                        .sum();
                }
            }
            Target::RankRls => {
                for j in 0..m {
                    for i in j..m {
                        let v: f64 = (0..kf).filter(|&k| in_train(k)).map(|k| a[k * mm2 + j * m + i]).sum();
                        sys[j * m + i] = v;
                        sys[i * m + j] = v;
                    }
                }
                for i in 0..m {
                    bt[i] = (0..kf).filter(|&k| in_train(k)).map(|k| b[k * m + i]).sum();
                }
            }
        }
        backend.sym_eigen(MatRef::from_col_major(cov, m, m)?, vals, MatMut::from_col_major(vecs, m, m)?)?;
        // The top components, largest first, above the rank cut of
        // super::nystrom (n·ε·λ_max).
        let lmax = vals.last().copied().unwrap_or(0.0);
        let cut = n * f64::EPSILON * lmax.abs().max(f64::MIN_POSITIVE);
        let pc = (0..p_max).take_while(|&l| vals[m - 1 - l] > cut).count();
        for l in 0..pc {
            up[l * m..(l + 1) * m].copy_from_slice(&vecs[(m - 1 - l) * m..(m - l) * m]);
        }
        if pc == 0 {
            continue;
        }
        let upm = MatRef::from_col_major(&up[..m * pc], m, pc)?;
        backend.gemm(
            1.0,
            MatRef::from_col_major(sys, m, m)?,
            upm,
            0.0,
            MatMut::from_col_major(&mut au[..m * pc], m, pc)?,
        )?;
        crate::linalg::blas::gemv(1.0, upm.t(), bt, 0.0, &mut r[..pc])?;
        let b0 = if target == Target::Rls { sy / n } else { 0.0 };
        for (li, &lambda) in grid.lambdas.iter().enumerate() {
            let mut mmv = MatMut::from_col_major(&mut mm[..pc * pc], pc, pc)?;
            backend.gemm(1.0, upm.t(), MatRef::from_col_major(&au[..m * pc], m, pc)?, 0.0, mmv.rb_mut())?;
            for i in 0..pc {
                *mmv.at_mut(i, i) += lambda;
            }
            let usable = cholesky_leading_in_place(mmv)?;
            for (pi, &p) in grid.components.iter().enumerate() {
                if p > usable.min(pc) {
                    continue;
                }
                kpc_solve(MatRef::from_col_major(&mm[..pc * pc], pc, pc)?, r, &mut w[..p])?;
                // β = U_p·w̄.
                crate::linalg::blas::gemv(1.0, upm.submatrix(0, 0, m, p)?, &w[..p], 0.0, beta)?;
                let shift: f64 = beta.iter().zip(sx.iter()).map(|(b, s)| b * s / n).sum();
                let c0 = b0 - shift;
                let pt = li * np + pi;
                match held {
                    None => {
                        out.beta[pt * m..(pt + 1) * m].copy_from_slice(beta);
                        out.offset[pt] = c0;
                    }
                    Some(k) => out.cv[k * pts + pt] = held_out(stats, target, k, (a, b, c), (beta, c0), t),
                }
            }
        }
    }
    Ok(())
}

/// Fold `k`'s held-out objective per row of the model `βᵀφ + c0`, from
/// its own system (`a`, `b`, `c` of [`fold_systems`]): RankRLS
/// `(c_k − 2βᵀb_k + βᵀA_kβ)/n_k` (a query Laplacian ignores `c0`); RLS
/// the squared residuals with the offset, from the fold's raw totals.
fn held_out(
    stats: &StatsRef<'_>,
    target: Target,
    k: usize,
    (a, b, c): (&[f64], &[f64], &[f64]),
    (beta, c0): (&[f64], f64),
    t: &mut [f64],
) -> f64 {
    let (m, mt) = (stats.shape.d, stats.shape.total_len());
    let ak = &a[k * m * m..(k + 1) * m * m];
    for i in 0..m {
        t[i] = (0..m).map(|j| if i >= j { ak[j * m + i] } else { ak[i * m + j] } * beta[j]).sum();
    }
    let quad: f64 = beta.iter().zip(t.iter()).map(|(p, q)| p * q).sum();
    let lin: f64 = beta.iter().zip(&b[k * m..(k + 1) * m]).map(|(p, q)| p * q).sum();
    let (ck, nk) = (c[2 * k], c[2 * k + 1]);
    let mut obj = ck - 2.0 * lin + quad;
    if target == Target::Rls {
        let rec = &stats.totals[k * 2 * mt..(k + 1) * 2 * mt];
        // The fold's Σx and Σy are its count times its means.
        let bx: f64 = (0..m).map(|i| beta[i] * nk * value(rec, SX + i)).sum();
        obj += -2.0 * c0 * nk * value(rec, SY) + 2.0 * c0 * bx + nk * c0 * c0;
    }
    obj / nk
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::backend::Portable;
    use crate::graph::{Graph, QueryWeight};
    use crate::learn::ls_stats::{accumulate, accumulate_workspace_len, fold_of, RowBlock, StatsMut, StatsShape};
    use crate::learn::nystrom::{landmarks, landmarks_workspace_len};

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Statistics of the rows `keep` (row indices, features `phi` n × m)
    /// with `folds` folds, every query open.
    fn stats_of(
        phi: &[f64],
        y: &[f64],
        q: &[u64],
        keep: &[usize],
        shape: &StatsShape,
        seed: u64,
    ) -> (Vec<f64>, Vec<f64>, Vec<u64>, Vec<f64>) {
        let m = shape.d;
        let (mut ids, mut slots) = (Vec::new(), Vec::new());
        for &i in keep {
            let s = ids.iter().position(|&v| v == q[i]).unwrap_or_else(|| {
                ids.push(q[i]);
                ids.len() - 1
            });
            slots.push(s);
        }
        let x: Vec<f64> = keep.iter().flat_map(|&i| phi[i * m..(i + 1) * m].iter().copied()).collect();
        let (yk, qk): (Vec<f64>, Vec<u64>) = keep.iter().map(|&i| (y[i], q[i])).unzip();
        let mut totals = vec![0.0; shape.totals_buffer_len()];
        let mut sealed = totals.clone();
        let mut queries = vec![0.0; ids.len() * 2 * shape.query_len()];
        let mut pw = vec![0.0; Portable::workspace_len(m)];
        let mut work = vec![0.0; accumulate_workspace_len(shape, keep.len())];
        accumulate(
            &mut Portable::new(&mut pw),
            shape,
            seed,
            &x,
            &RowBlock { y: &yk, qids: &qk, slots: &slots },
            StatsMut { totals: &mut totals, sealed: &mut sealed, queries: &mut queries },
            &mut work,
        )
        .unwrap();
        (totals, sealed, ids, queries)
    }

    /// The one-pass KPCR / KPCRank CV table — fold `k` from total − fold
    /// `k`, every (λ, p) — equals, to 1e-9 relative, the held-out objective
    /// computed directly: a model fitted on the statistics of the other
    /// folds' rows alone (one fold), scored on fold `k`'s rows by
    /// `βᵀφ + offset`, the residuals weighed by fold `k`'s own query graph
    /// (the identity for KPCR).
    #[test]
    fn one_pass_kpc_cv_equals_fold_fits_scored_directly() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let (p, nq) = (3, 24);
        let (mut x, mut y, mut q) = (Vec::new(), Vec::new(), Vec::new());
        for qi in 0..nq {
            for _ in 0..2 + (rng.next() * 6.0) as usize {
                let r: Vec<f64> = (0..p).map(|_| rng.next() * 3.0 - 1.5).collect();
                y.push(r[0] - r[1] * r[2] + 0.2 * rng.next());
                x.extend(r);
                q.push(100 + qi as u64 * 3);
            }
        }
        let n = y.len();
        let kernel = Kernel::Rbf { gamma: 0.4 };
        let xr = Rows::Dense(MatRef::from_row_major(&x, n, p).unwrap());
        let mut piv = vec![0usize; 12];
        let mut lmat = vec![0.0; 144];
        let mut w = vec![0.0; landmarks_workspace_len(n, 12)];
        let m = landmarks(&kernel, &xr, 1e-12, &mut piv, &mut lmat, &mut w).unwrap();
        assert_eq!(m, 12);
        let lm: Vec<f64> = piv.iter().flat_map(|&i| x[i * p..(i + 1) * p].iter().copied()).collect();
        let lmr = Rows::Dense(MatRef::from_row_major(&lm, m, p).unwrap());
        let map = FeatureMap { kernel: &kernel, landmarks: &lmr, factor: &lmat };
        let mut phi = vec![0.0; n * m];
        let mut pw = vec![0.0; Portable::workspace_len(m)];
        let mut fw = vec![0.0; features_workspace_len(&map, &xr)];
        features(&mut Portable::new(&mut pw), &map, &xr, &mut phi, &mut fw).unwrap();
        let (kf, seed) = (3, 5);
        let grid = Grid { lambdas: &[0.0, 0.5], components: &[2, 5, 9] };
        let pts = 6;
        for (target, weight) in [
            (Target::RankRls, QueryWeight::Equal),
            (Target::RankRls, QueryWeight::Pairs),
            (Target::Rls, QueryWeight::Equal),
        ] {
            let shape = StatsShape { d: m, folds: kf, weight };
            let all: Vec<usize> = (0..n).collect();
            let (t, s, ids, qr) = stats_of(&phi, &y, &q, &all, &shape, seed);
            let st = StatsRef { shape, seed, totals: &t, sealed: &s, qids: &ids, queries: &qr };
            let (mut beta, mut off, mut cv) = (vec![0.0; pts * m], vec![0.0; pts], vec![0.0; kf * pts]);
            let mut work = vec![0.0; kpc_solve_stats_workspace_len(m, kf, &grid)];
            let out = KpcOut { beta: &mut beta, offset: &mut off, cv: &mut cv };
            kpc_solve_stats(&mut Portable::new(&mut pw), &st, target, &grid, out, &mut work).unwrap();
            for k in 0..kf {
                let train: Vec<usize> = (0..n).filter(|&i| fold_of(q[i], seed, kf) != k).collect();
                let held: Vec<usize> = (0..n).filter(|&i| fold_of(q[i], seed, kf) == k).collect();
                assert!(!held.is_empty());
                let one = StatsShape { folds: 1, ..shape };
                let (t1, s1, i1, q1) = stats_of(&phi, &y, &q, &train, &one, seed);
                let st1 = StatsRef { shape: one, seed, totals: &t1, sealed: &s1, qids: &i1, queries: &q1 };
                let (mut b1, mut o1) = (vec![0.0; pts * m], vec![0.0; pts]);
                let mut w1 = vec![0.0; kpc_solve_stats_workspace_len(m, 1, &grid)];
                let out = KpcOut { beta: &mut b1, offset: &mut o1, cv: &mut [] };
                kpc_solve_stats(&mut Portable::new(&mut pw), &st1, target, &grid, out, &mut w1).unwrap();
                // Held-out rows grouped by query, their residuals under L_k.
                let mut order = held.clone();
                order.sort_by_key(|&i| q[i]);
                let mut ptr = vec![0];
                for j in 1..order.len() {
                    if q[order[j]] != q[order[j - 1]] {
                        ptr.push(j);
                    }
                }
                ptr.push(order.len());
                let nh = order.len();
                for pt in 0..pts {
                    let r: Vec<f64> = order
                        .iter()
                        .map(|&i| {
                            let f: f64 = (0..m).map(|j| b1[pt * m + j] * phi[i * m + j]).sum::<f64>() + o1[pt];
                            y[i] - f
                        })
                        .collect();
                    let g = match target {
                        Target::Rls => Graph::Identity { n: nh },
                        Target::RankRls => Graph::Queries { query_ptr: &ptr, weight },
                    };
                    let mut lr = vec![0.0; nh];
                    g.apply(&r, &mut lr).unwrap();
                    let want = r.iter().zip(&lr).map(|(a, b)| a * b).sum::<f64>() / nh as f64;
                    let got = cv[k * pts + pt];
                    assert!(
                        (got - want).abs() <= 1e-9 * want.abs(),
                        "{target:?} {weight:?} fold {k} point {pt}: {got} vs {want}"
                    );
                }
            }
        }
    }
}
