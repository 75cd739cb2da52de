//! Scoring on a validated [`ModelView`]: the device path. Nothing here
//! allocates, and nothing panics.
//!
//! # Precision
//!
//! The arithmetic type follows the model and the input:
//!
//! | model element type | entry point | computed in |
//! |---|---|---|
//! | `f32` | `f32` inputs ([`score_dense`](ModelView::score_dense), [`score_sparse`](ModelView::score_sparse), `…_rows`) | `f32` |
//! | `f64` | `f32` inputs | `f64`, rounded to `f32` once |
//! | either | `f64` inputs (`…_f64`) | `f64` |
//!
//! An `f32` model on a device therefore never touches `f64` arithmetic
//! (which a single-precision FPU such as the Cortex-M4F's would emulate in
//! software), except for the stored `f64` offsets and kernel parameters,
//! which are rounded to `f32` once per score.
//!
//! To keep `f32` sums accurate, every sum is *blocked*: the hot dot-product
//! loops run four independent lanes over blocks of `BLOCK` (64) terms, and the
//! block sums are combined pairwise (a binary cascade), so the rounding
//! error grows with `BLOCK/4 + log2(n/BLOCK)` rather than with `n`.
//!
//! ## Accuracy bound
//!
//! For an `f32` linear model with `d ≤ 2²⁰` features, the score `s₃₂` and the
//! `f64` training-side prediction `s₆₄` (same `f32` input, *unrounded* `f64`
//! parameters) satisfy
//!
//! `|s₃₂ − s₆₄| ≤ 1e-5 · (|b| + Σ_j |w_j·x'_j|)`
//!
//! (the sum is the condition scale of the dot product: parameter rounding
//! contributes `2⁻²⁴`, each product and the centring `≈ 3·2⁻²⁴`, the blocked
//! sum at most `(BLOCK/4 + 2 + log2(d/BLOCK))·2⁻²⁴ ≈ 34·2⁻²⁴`). When the terms
//! do not cancel (`|s₆₄|` comparable to the scale), this is a relative error
//! of 1e-5. Kernel expansions obey the same bound with the scale
//! `|b| + Σ_i |a_i|·(|k_i| + |c_i| + |k̄| + |g|)`, times the kernel's own
//! amplification (RBF: `1 + γ‖x' − x_i‖²`; polynomial of degree p: `p`). The
//! tests in this module check both bounds on random models.

use super::input::{Centred, Input};
use super::sum::Arith;
use super::{ElementType, ModelView, ScoreError};

fn finite_f32(s: f64) -> Result<f32, ScoreError> {
    let r = s as f32;
    if s.is_finite() && r.is_finite() {
        Ok(r)
    } else {
        Err(ScoreError::ScoreOverflow)
    }
}

fn finite_f64(s: f64) -> Result<f64, ScoreError> {
    if s.is_finite() {
        Ok(s)
    } else {
        Err(ScoreError::ScoreOverflow)
    }
}

impl ModelView<'_> {
    /// Scores one dense input of length [`dim`](Self::dim).
    ///
    /// Computed in `f32` for an `f32` model, in `f64` (rounded once) for an
    /// `f64` model; see the module docs for the accuracy bound.
    ///
    /// # Errors
    ///
    /// [`ScoreError::DimensionMismatch`] if `x.len() != dim()`,
    /// [`ScoreError::NonFiniteInput`] if `x` holds NaN or infinity,
    /// [`ScoreError::ScoreOverflow`] if the score is not a finite `f32`.
    pub fn score_dense(&self, x: &[f32]) -> Result<f32, ScoreError> {
        self.single_row()?;
        self.score_f32(Input::D32(x))
    }

    /// Scores one dense `f64` input, computing in `f64` whatever the
    /// element type.
    ///
    /// # Errors
    ///
    /// As [`score_dense`](Self::score_dense), with the overflow test on
    /// `f64`.
    pub fn score_dense_f64(&self, x: &[f64]) -> Result<f64, ScoreError> {
        self.single_row()?;
        let input = Input::D64(x);
        input.check(self.dim())?;
        finite_f64(self.eval::<f64>(input)?)
    }

    /// Scores one sparse input: `indices` 0-based and strictly increasing,
    /// `values[k]` the value of feature `indices[k]`, all other features 0.
    ///
    /// Precision as [`score_dense`](Self::score_dense).
    ///
    /// # Errors
    ///
    /// [`ScoreError::DimensionMismatch`] if the slices differ in length,
    /// [`ScoreError::BadInputIndex`] if an index is `>= dim()` or the
    /// indices are not strictly increasing, [`ScoreError::NonFiniteInput`],
    /// [`ScoreError::ScoreOverflow`].
    pub fn score_sparse(&self, indices: &[u32], values: &[f32]) -> Result<f32, ScoreError> {
        self.single_row()?;
        self.score_f32(Input::Sparse(indices, values))
    }

    /// Scores `out.len()` dense rows stored row-major in `x`
    /// (`x.len() == out.len() * dim()`), writing score `r` to `out[r]`.
    ///
    /// # Errors
    ///
    /// As [`score_dense`](Self::score_dense). Lengths and finiteness of all
    /// of `x` are checked before anything is written; only
    /// [`ScoreError::ScoreOverflow`] can leave `out` partly written (rows
    /// before the failing one hold their scores).
    pub fn score_dense_rows(&self, x: &[f32], out: &mut [f32]) -> Result<(), ScoreError> {
        self.single_row()?;
        let expected = out
            .len()
            .checked_mul(self.dim())
            .ok_or(ScoreError::DimensionMismatch { expected: usize::MAX, got: x.len() })?;
        if x.len() != expected {
            return Err(ScoreError::DimensionMismatch { expected, got: x.len() });
        }
        if !x.iter().all(|v| v.is_finite()) {
            return Err(ScoreError::NonFiniteInput);
        }
        for (row, o) in x.chunks_exact(self.dim()).zip(out.iter_mut()) {
            *o = self.score_f32_unchecked(Input::D32(row))?;
        }
        Ok(())
    }

    /// [`score_dense_rows`](Self::score_dense_rows) for `f64` inputs and
    /// outputs (computed in `f64`).
    ///
    /// # Errors
    ///
    /// As [`score_dense_rows`](Self::score_dense_rows).
    pub fn score_dense_rows_f64(&self, x: &[f64], out: &mut [f64]) -> Result<(), ScoreError> {
        self.single_row()?;
        let expected = out
            .len()
            .checked_mul(self.dim())
            .ok_or(ScoreError::DimensionMismatch { expected: usize::MAX, got: x.len() })?;
        if x.len() != expected {
            return Err(ScoreError::DimensionMismatch { expected, got: x.len() });
        }
        if !x.iter().all(|v| v.is_finite()) {
            return Err(ScoreError::NonFiniteInput);
        }
        for (row, o) in x.chunks_exact(self.dim()).zip(out.iter_mut()) {
            *o = finite_f64(self.eval::<f64>(Input::D64(row))?)?;
        }
        Ok(())
    }

    /// Scores `out.len()` sparse rows given in CSR form: row `r` is
    /// `indices[row_ptr[r]..row_ptr[r + 1]]` with its `values`
    /// (`row_ptr.len() == out.len() + 1`, `row_ptr[0] == 0`, non-decreasing,
    /// last entry `== indices.len() == values.len()`).
    ///
    /// # Errors
    ///
    /// [`ScoreError::DimensionMismatch`] for inconsistent lengths or row
    /// pointers, otherwise as [`score_sparse`](Self::score_sparse). All rows
    /// are checked before anything is written; only
    /// [`ScoreError::ScoreOverflow`] can leave `out` partly written.
    pub fn score_sparse_rows(
        &self,
        row_ptr: &[u32],
        indices: &[u32],
        values: &[f32],
        out: &mut [f32],
    ) -> Result<(), ScoreError> {
        self.single_row()?;
        let expected = out
            .len()
            .checked_add(1)
            .ok_or(ScoreError::DimensionMismatch { expected: usize::MAX, got: row_ptr.len() })?;
        if row_ptr.len() != expected {
            return Err(ScoreError::DimensionMismatch { expected, got: row_ptr.len() });
        }
        if indices.len() != values.len() {
            return Err(ScoreError::DimensionMismatch { expected: indices.len(), got: values.len() });
        }
        let row = |r: usize| -> Result<(&[u32], &[f32]), ScoreError> {
            let mismatch = ScoreError::DimensionMismatch { expected: indices.len(), got: 0 };
            let s = *row_ptr.get(r).ok_or(mismatch)? as usize;
            let e = *row_ptr.get(r + 1).ok_or(mismatch)? as usize;
            match (indices.get(s..e), values.get(s..e)) {
                (Some(i), Some(v)) => Ok((i, v)),
                _ => Err(ScoreError::DimensionMismatch { expected: indices.len(), got: e }),
            }
        };
        if row_ptr.first() != Some(&0) || row_ptr.last().map(|&e| e as usize) != Some(indices.len()) {
            return Err(ScoreError::DimensionMismatch { expected: indices.len(), got: 0 });
        }
        for r in 0..out.len() {
            let (i, v) = row(r)?;
            Input::Sparse(i, v).check(self.dim())?;
        }
        for (r, o) in out.iter_mut().enumerate() {
            let (i, v) = row(r)?;
            *o = self.score_f32_unchecked(Input::Sparse(i, v))?;
        }
        Ok(())
    }

    /// [`ScoreError::KindMismatch`] for a pair model or a preference GP,
    /// which the single-row entry points do not score.
    fn single_row(&self) -> Result<(), ScoreError> {
        if self.is_pair() || self.pref_gp().is_some() || self.pref_inductive().is_some() {
            Err(ScoreError::KindMismatch)
        } else {
            Ok(())
        }
    }

    fn score_f32(&self, input: Input<'_>) -> Result<f32, ScoreError> {
        if let (true, Input::D32(x)) = (self.body.lazy_input_check(), input) {
            // Lazy finiteness check: for this kind a NaN or infinite input
            // always makes the score NaN or infinite (see
            // `Kind::LAZY_INPUT_CHECK`). Scan the input only then, which
            // reports the same error as checking first.
            if x.len() != self.dim() {
                return Err(ScoreError::DimensionMismatch { expected: self.dim(), got: x.len() });
            }
            return self.score_f32_unchecked(input).map_err(|e| match e {
                ScoreError::ScoreOverflow if !x.iter().all(|v| v.is_finite()) => ScoreError::NonFiniteInput,
                e => e,
            });
        }
        input.check(self.dim())?;
        self.score_f32_unchecked(input)
    }

    /// The `f32` entry points after the input check: `f32` arithmetic for
    /// an `f32` model, `f64` rounded once for an `f64` model.
    fn score_f32_unchecked(&self, input: Input<'_>) -> Result<f32, ScoreError> {
        match self.element_type() {
            ElementType::F32 => {
                let s = self.eval::<f32>(input)?;
                if s.is_finite() {
                    Ok(s)
                } else {
                    Err(ScoreError::ScoreOverflow)
                }
            }
            ElementType::F64 => finite_f32(self.eval::<f64>(input)?),
        }
    }

    /// The score in the arithmetic type `R`, on a checked input (the
    /// kind's scorer, through the registry).
    fn eval<R: Arith>(&self, input: Input<'_>) -> Result<R, ScoreError> {
        let x = Centred { input, centring: self.feature_centring() };
        self.body.eval(x, self.dim())
    }
}

#[cfg(test)]
mod tests {
    //! The accuracy bound of the module docs, on random models: `f32`
    //! scores against the `f64` training-side prediction (unrounded `f64`
    //! parameters, the same `f32` input).
    extern crate std;
    use std::vec;
    use std::vec::Vec;

    use super::super::{
        Basis, ElementType, FeatureCentring, Kernel, KernelCentring, KernelModel, LinearModel, Model, ModelSpec,
        ModelView,
    };

    struct Rng(u64);
    impl Rng {
        fn f(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let u = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
            u as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    fn emit(spec: &ModelSpec<'_>) -> Vec<u8> {
        let mut buf = vec![0u8; spec.buffer_len()];
        spec.emit(&mut buf).unwrap();
        buf
    }

    /// `(max |s32 − s64| / scale, max |s32 − s64| / |s64| over rows with
    /// |s64| ≥ scale / 4)` for random linear models.
    fn linear_errors(d: usize, centring: bool, sparse: bool, seed: u64) -> (f64, f64) {
        let mut rng = Rng(seed);
        let w: Vec<f64> = (0..d).map(|_| rng.f()).collect();
        let mean: Vec<f64> = (0..d).map(|_| 0.3 * rng.f()).collect();
        let scale: Vec<f64> = (0..d).map(|_| 0.5 + rng.f().abs()).collect();
        let b = rng.f();
        let c = centring.then_some(FeatureCentring { mean: &mean, scale: &scale });
        let bytes =
            emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: b, centring: c }), ElementType::F32));
        let v = ModelView::new_checked(&bytes).unwrap();
        let (mut abs_max, mut rel_max) = (0.0f64, 0.0f64);
        for _ in 0..40 {
            // Inputs with a positive bias, so that many scores do not cancel.
            let x32: Vec<f32> =
                (0..d).map(|j| if sparse && j % 3 != 0 { 0.0 } else { (rng.f() * 2.0 + 0.5) as f32 }).collect();
            let xc = |j: usize| {
                let x = x32[j] as f64;
                if centring {
                    (x - mean[j]) / scale[j]
                } else {
                    x
                }
            };
            let s64 = b + (0..d).map(|j| w[j] * xc(j)).sum::<f64>();
            let cond = b.abs() + (0..d).map(|j| (w[j] * xc(j)).abs()).sum::<f64>();
            let s32 = if sparse {
                let idx: Vec<u32> = (0..d as u32).filter(|&j| x32[j as usize] != 0.0).collect();
                let vals: Vec<f32> = idx.iter().map(|&j| x32[j as usize]).collect();
                v.score_sparse(&idx, &vals).unwrap()
            } else {
                v.score_dense(&x32).unwrap()
            } as f64;
            let err = (s32 - s64).abs();
            abs_max = abs_max.max(err / cond);
            if s64.abs() >= cond / 4.0 {
                rel_max = rel_max.max(err / s64.abs());
            }
        }
        (abs_max, rel_max)
    }

    #[test]
    fn f32_linear_within_bound_of_f64_prediction() {
        let mut worst = (0.0f64, 0.0f64);
        for (i, &d) in [1usize, 3, 17, 64, 100, 1000, 4096, 20_000].iter().enumerate() {
            for centring in [false, true] {
                for sparse in [false, true] {
                    let (a, r) = linear_errors(d, centring, sparse, 7 + i as u64);
                    assert!(a <= 1e-5, "d={d} centring={centring} sparse={sparse}: {a:e} of the scale");
                    assert!(r <= 1e-5, "d={d} centring={centring} sparse={sparse}: relative {r:e}");
                    worst = (worst.0.max(a), worst.1.max(r));
                }
            }
        }
        std::eprintln!("f32 linear: worst error {:.2e} of Σ|w·x|+|b|, {:.2e} relative", worst.0, worst.1);
    }

    #[test]
    #[cfg(not(feature = "kernel"))]
    fn kernel_models_parse_but_do_not_score_without_the_feature() {
        let (coeffs, basis) = ([1.0, -1.0], [1.0, 0.0, 0.0, 1.0]);
        let model = KernelModel {
            dim: 2,
            kernel: Kernel::Rbf { gamma: 0.5 },
            basis: Basis::Dense(&basis),
            coeffs: &coeffs,
            offset: 0.0,
            centring: None,
            kernel_centring: None,
        };
        let bytes = emit(&ModelSpec::new(Model::Kernel(model), ElementType::F32));
        let v = ModelView::new_checked(&bytes).unwrap();
        assert_eq!(v.score_dense(&[1.0, 2.0]), Err(super::ScoreError::UnsupportedKind));
        assert_eq!(v.score_dense_f64(&[1.0, 2.0]), Err(super::ScoreError::UnsupportedKind));
    }

    #[test]
    #[cfg(feature = "kernel")]
    fn f32_kernel_within_bound_of_f64_prediction() {
        let mut rng = Rng(99);
        let kernels =
            [Kernel::Linear, Kernel::Rbf { gamma: 0.05 }, Kernel::Polynomial { gamma: 0.1, coef0: 1.0, degree: 3 }];
        let mut worst = 0.0f64;
        for kernel in kernels {
            for (m, d) in [(5usize, 3usize), (40, 30), (200, 100)] {
                for sparse in [false, true] {
                    for kc in [false, true] {
                        let dense: Vec<f64> =
                            (0..m * d).map(|t| if sparse && t % 3 == 1 { 0.0 } else { rng.f() }).collect();
                        let (mut row_ptr, mut indices, mut values) = (vec![0u32], Vec::new(), Vec::new());
                        for i in 0..m {
                            for j in 0..d {
                                if dense[i * d + j] != 0.0 {
                                    indices.push(j as u32);
                                    values.push(dense[i * d + j]);
                                }
                            }
                            row_ptr.push(indices.len() as u32);
                        }
                        let coeffs: Vec<f64> = (0..m).map(|_| rng.f()).collect();
                        let col_means: Vec<f64> = (0..m).map(|_| 0.5 * rng.f()).collect();
                        let grand = 0.3 * rng.f();
                        let b = rng.f();
                        let basis = if sparse {
                            Basis::Sparse { row_ptr: &row_ptr, indices: &indices, values: &values }
                        } else {
                            Basis::Dense(&dense)
                        };
                        let model = KernelModel {
                            dim: d,
                            kernel,
                            basis,
                            coeffs: &coeffs,
                            offset: b,
                            centring: None,
                            kernel_centring: kc.then_some(KernelCentring { col_means: &col_means, grand_mean: grand }),
                        };
                        let bytes = emit(&ModelSpec::new(Model::Kernel(model), ElementType::F32));
                        let v = ModelView::new_checked(&bytes).unwrap();
                        for _ in 0..10 {
                            let x32: Vec<f32> = (0..d).map(|_| rng.f() as f32).collect();
                            let x: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
                            let (mut k, mut amp) = (vec![0.0; m], 1.0f64);
                            for i in 0..m {
                                let row = &dense[i * d..(i + 1) * d];
                                let dot: f64 = row.iter().zip(&x).map(|(a, b)| a * b).sum();
                                let dist: f64 = row.iter().zip(&x).map(|(a, b)| (a - b) * (a - b)).sum();
                                k[i] = match kernel {
                                    Kernel::Linear => dot,
                                    Kernel::Rbf { gamma } => {
                                        amp = amp.max(1.0 + gamma * dist);
                                        (-gamma * dist).exp()
                                    }
                                    Kernel::Polynomial { gamma, coef0, degree } => {
                                        amp = amp.max(degree as f64);
                                        (gamma * dot + coef0).powi(degree as i32)
                                    }
                                };
                            }
                            let kbar = k.iter().sum::<f64>() / m as f64;
                            let (mut s64, mut cond) = (b, b.abs());
                            for i in 0..m {
                                let kt = if kc { k[i] - kbar - col_means[i] + grand } else { k[i] };
                                s64 += coeffs[i] * kt;
                                let mag = if kc {
                                    k[i].abs() + kbar.abs() + col_means[i].abs() + grand.abs()
                                } else {
                                    k[i].abs()
                                };
                                cond += coeffs[i].abs() * mag;
                            }
                            let s32 = if sparse {
                                let idx: Vec<u32> = (0..d as u32).collect();
                                v.score_sparse(&idx, &x32).unwrap()
                            } else {
                                v.score_dense(&x32).unwrap()
                            } as f64;
                            let e = (s32 - s64).abs() / (cond * amp);
                            assert!(e <= 1e-5, "{kernel:?} m={m} d={d} sparse={sparse} kc={kc}: {e:e}");
                            worst = worst.max(e);
                        }
                    }
                }
            }
        }
        std::eprintln!("f32 kernel: worst error {worst:.2e} of the scale");
    }

    #[test]
    fn non_finite_input_reported_as_before_the_lazy_check() {
        let w = [1.0, -2.0, 0.0];
        for centring in [false, true] {
            let (mean, scale) = ([0.5, 0.0, 1.0], [2.0, 1.0, 0.5]);
            let c = centring.then_some(FeatureCentring { mean: &mean, scale: &scale });
            for et in [ElementType::F32, ElementType::F64] {
                let bytes = emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 1.0, centring: c }), et));
                let v = ModelView::new_checked(&bytes).unwrap();
                for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                    // also where the weight is 0 (0·∞ = NaN)
                    for j in 0..3 {
                        let mut x = [1.0f32; 3];
                        x[j] = bad;
                        assert_eq!(v.score_dense(&x), Err(super::ScoreError::NonFiniteInput));
                    }
                }
                assert_eq!(v.score_dense(&[f32::MAX, -f32::MAX, 0.0]), Err(super::ScoreError::ScoreOverflow));
                assert!(matches!(
                    v.score_dense(&[1.0, 2.0]),
                    Err(super::ScoreError::DimensionMismatch { expected: 3, got: 2 })
                ));
            }
        }
    }

    #[test]
    fn f64_models_still_compute_in_f64() {
        let w = [1.0, 1e-9, -1.0];
        let bytes =
            emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 0.0, centring: None }), ElementType::F64));
        let v = ModelView::new_checked(&bytes).unwrap();
        // 1e8 + 1 − 1e8: the f64 path keeps the 1 that an f32 sum would lose.
        assert_eq!(v.score_dense_f64(&[1e8, 1e9, 1e8]).unwrap(), 1.0);
        assert_eq!(v.score_dense(&[1e8, 1e9, 1e8]).unwrap(), 1.0);
    }
}
