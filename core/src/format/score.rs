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
//! ## The fast path and the features
//!
//! An `f32` model that is linear in its raw features (a linear model or an
//! online RankRLS state, without feature centring) gets a fast path at
//! parse time (`DenseF32`, in `view`): `b + ⟨w, x⟩` in `f32`
//! over the weights as a native `&[f32]` when the model bytes are aligned
//! (little-endian targets), else read as bytes, with the same bits either
//! way; a row's finiteness is checked only when its score is not finite.
//! Every other model goes through the general path, which dispatches on
//! element type, input form and centring. The features `kernel`, `f64` and
//! `centring` each keep one part of the general path; with all three off
//! (and `all-kinds` off, so that only linear models parse) a build links
//! only the fast path, and refuses the other models with
//! [`ScoreError::UnsupportedKind`] (`ParseError::KindNotInBuild` for kinds
//! it does not parse).
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

use super::input::{Centred, Input, Vals};
use super::sum::Arith;
use super::{ElementType, ModelView, ScoreError};

#[cfg(feature = "f64")]
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
        match self.dense {
            Some(fast) => fast.score(x, self.dim()),
            None => self.score_dense_general(x),
        }
    }

    /// [`score_dense`](Self::score_dense) of a model without the fast path.
    #[cfg(any(feature = "kernel", feature = "f64", feature = "centring"))]
    fn score_dense_general(&self, x: &[f32]) -> Result<f32, ScoreError> {
        self.single_row()?;
        self.score_f32(Input::D32(x))
    }

    /// Without the features `kernel`, `f64` and `centring`, only the fast
    /// path scores dense rows: every other single-row model is refused.
    #[cfg(not(any(feature = "kernel", feature = "f64", feature = "centring")))]
    fn score_dense_general(&self, _x: &[f32]) -> Result<f32, ScoreError> {
        self.single_row()?;
        Err(ScoreError::UnsupportedKind)
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
    /// Indices may reach past [`dim`](Self::dim): the training rows were 0
    /// there, and the score is the one of the same model trained with those
    /// features (linear weights and polynomial kernels ignore them, an RBF
    /// kernel's squared distances gain their squared norm). Precision as
    /// [`score_dense`](Self::score_dense).
    ///
    /// # Errors
    ///
    /// [`ScoreError::DimensionMismatch`] if the slices differ in length,
    /// [`ScoreError::BadInputIndex`] if the indices are not strictly
    /// increasing, [`ScoreError::NonFiniteInput`],
    /// [`ScoreError::ScoreOverflow`].
    pub fn score_sparse(&self, indices: &[u32], values: &[f32]) -> Result<f32, ScoreError> {
        self.single_row()?;
        self.score_f32(Input::Sparse(indices, Vals::F32(values)))
    }

    /// [`score_sparse`](Self::score_sparse) for `f64` values, computed in
    /// `f64` whatever the element type.
    ///
    /// # Errors
    ///
    /// As [`score_sparse`](Self::score_sparse), with the overflow test on
    /// `f64`.
    pub fn score_sparse_f64(&self, indices: &[u32], values: &[f64]) -> Result<f64, ScoreError> {
        self.single_row()?;
        let input = Input::Sparse(indices, Vals::F64(values));
        input.check(self.dim())?;
        finite_f64(self.eval::<f64>(input)?)
    }

    /// Scores `out.len()` dense rows stored row-major in `x`
    /// (`x.len() == out.len() * dim()`), writing score `r` to `out[r]`.
    ///
    /// Rows are scored in order, each input read once: a row's finiteness
    /// is checked as in [`score_dense`](Self::score_dense) (for a linear
    /// model only when its score is not finite), not in a separate pass
    /// over all of `x` first.
    ///
    /// # Errors
    ///
    /// As [`score_dense`](Self::score_dense). Lengths are checked before
    /// anything is written. An error in row `r`
    /// ([`ScoreError::NonFiniteInput`], [`ScoreError::ScoreOverflow`])
    /// stops there: `out[..r]` hold their scores, `out[r..]` is untouched.
    pub fn score_dense_rows(&self, x: &[f32], out: &mut [f32]) -> Result<(), ScoreError> {
        self.single_row()?;
        let dim = self.dim();
        let expected =
            out.len().checked_mul(dim).ok_or(ScoreError::DimensionMismatch { expected: usize::MAX, got: x.len() })?;
        if x.len() != expected {
            return Err(ScoreError::DimensionMismatch { expected, got: x.len() });
        }
        match self.dense {
            Some(fast) => {
                for (row, o) in x.chunks_exact(dim).zip(out.iter_mut()) {
                    *o = fast.score(row, dim)?;
                }
                Ok(())
            }
            None => self.score_dense_rows_general(x, out),
        }
    }

    /// [`score_dense_rows`](Self::score_dense_rows) of a model without the
    /// fast path, lengths checked.
    #[cfg(any(feature = "kernel", feature = "f64", feature = "centring"))]
    fn score_dense_rows_general(&self, x: &[f32], out: &mut [f32]) -> Result<(), ScoreError> {
        for (row, o) in x.chunks_exact(self.dim()).zip(out.iter_mut()) {
            *o = self.score_f32(Input::D32(row))?;
        }
        Ok(())
    }

    /// See [`score_dense_general`](Self::score_dense_general).
    #[cfg(not(any(feature = "kernel", feature = "f64", feature = "centring")))]
    fn score_dense_rows_general(&self, _x: &[f32], _out: &mut [f32]) -> Result<(), ScoreError> {
        Err(ScoreError::UnsupportedKind)
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
    /// last entry `== indices.len() == values.len()`). Indices past
    /// [`dim`](Self::dim) are scored as in [`score_sparse`](Self::score_sparse).
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
            Input::Sparse(i, Vals::F32(v)).check(self.dim())?;
        }
        for (r, o) in out.iter_mut().enumerate() {
            let (i, v) = row(r)?;
            *o = self.score_f32_unchecked(Input::Sparse(i, Vals::F32(v)))?;
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
            #[cfg(feature = "f64")]
            ElementType::F64 => finite_f32(self.eval::<f64>(input)?),
            #[cfg(not(feature = "f64"))]
            ElementType::F64 => Err(ScoreError::UnsupportedKind),
        }
    }

    /// The score in the arithmetic type `R`, on a checked input (the
    /// kind's scorer, through the registry), its tail cut off first.
    /// Models this build cannot score (an `f64` model without the feature
    /// `f64`, feature centring without `centring`) give
    /// [`ScoreError::UnsupportedKind`].
    fn eval<R: Arith>(&self, input: Input<'_>) -> Result<R, ScoreError> {
        if (!cfg!(feature = "f64") && self.element_type() == ElementType::F64)
            || (!cfg!(feature = "centring") && self.feature_centring().is_some())
        {
            return Err(ScoreError::UnsupportedKind);
        }
        let centring = if cfg!(feature = "centring") { self.feature_centring() } else { None };
        let (input, tail) = input.split_tail(self.dim());
        let x = Centred { input, centring, tail };
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

    #[cfg(feature = "kernel")]
    use super::super::KernelCentring;
    use super::super::{
        Basis, ElementType, FeatureCentring, Kernel, KernelModel, LinearModel, Model, ModelSpec, ModelView,
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
            for centring in [false, true].into_iter().filter(|&c| !c || cfg!(feature = "centring")) {
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
    #[cfg(all(not(feature = "kernel"), feature = "all-kinds"))]
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
        for centring in [false, true].into_iter().filter(|&c| !c || cfg!(feature = "centring")) {
            let (mean, scale) = ([0.5, 0.0, 1.0], [2.0, 1.0, 0.5]);
            let c = centring.then_some(FeatureCentring { mean: &mean, scale: &scale });
            for et in [ElementType::F32, ElementType::F64]
                .into_iter()
                .filter(|&e| e == ElementType::F32 || cfg!(feature = "f64"))
            {
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
    #[cfg(feature = "f64")]
    fn f64_models_still_compute_in_f64() {
        let w = [1.0, 1e-9, -1.0];
        let bytes =
            emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 0.0, centring: None }), ElementType::F64));
        let v = ModelView::new_checked(&bytes).unwrap();
        // 1e8 + 1 − 1e8: the f64 path keeps the 1 that an f32 sum would lose.
        assert_eq!(v.score_dense_f64(&[1e8, 1e9, 1e8]).unwrap(), 1.0);
        assert_eq!(v.score_dense(&[1e8, 1e9, 1e8]).unwrap(), 1.0);
    }

    #[test]
    fn fast_path_aligned_and_unaligned_weights_score_bit_identical() {
        let mut rng = Rng(99);
        for d in [1usize, 3, 4, 5, 63, 64, 65, 136, 200, 1000] {
            let w: Vec<f64> = (0..d).map(|_| rng.f()).collect();
            let bytes = emit(&ModelSpec::new(
                Model::Linear(LinearModel { w: &w, offset: 0.3, centring: None }),
                ElementType::F32,
            ));
            let rows: Vec<f32> = (0..5 * d).map(|_| (rng.f() * 3.0) as f32).collect();
            let mut reference: Option<(Vec<u32>, Vec<u32>)> = None;
            for shift in 0..4 {
                // The model at `shift` bytes past a 4-aligned address.
                let mut buf = vec![0u8; bytes.len() + 8];
                let base = buf.as_ptr().align_offset(4);
                buf[base + shift..base + shift + bytes.len()].copy_from_slice(&bytes);
                let model = &buf[base + shift..base + shift + bytes.len()];
                let v = ModelView::new_checked(model).unwrap();
                let fast = v.dense.expect("an f32 linear model without centring has the fast path");
                // Weights start 28 + 12 + 8 bytes into the file (header,
                // one section entry, the f64 offset): aligned iff the file is.
                assert_eq!(fast.is_aligned(), cfg!(target_endian = "little") && shift == 0, "d={d} shift={shift}");
                let single: Vec<u32> = rows.chunks_exact(d).map(|r| v.score_dense(r).unwrap().to_bits()).collect();
                let mut out = vec![0f32; 5];
                v.score_dense_rows(&rows, &mut out).unwrap();
                let batch: Vec<u32> = out.iter().map(|s| s.to_bits()).collect();
                assert_eq!(single, batch, "d={d} shift={shift}: batch and single rows differ");
                match &reference {
                    None => reference = Some((single, batch)),
                    Some((s0, b0)) => {
                        assert_eq!(&single, s0, "d={d}: shift {shift} scores differ from the aligned copy");
                        assert_eq!(&batch, b0, "d={d}: shift {shift} batch differs from the aligned copy");
                    }
                }
            }
        }
    }

    #[test]
    fn batch_error_leaves_earlier_rows_scored_and_the_rest_untouched() {
        let w = [1.0, -2.0, 0.5];
        let bytes =
            emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 1.0, centring: None }), ElementType::F32));
        let v = ModelView::new_checked(&bytes).unwrap();
        let good = [1.0f32, 1.0, 2.0];
        for (bad, want) in [
            ([0.0, f32::NAN, 0.0], super::ScoreError::NonFiniteInput),
            ([0.0, 0.0, f32::INFINITY], super::ScoreError::NonFiniteInput),
            ([f32::MAX, -f32::MAX, 0.0], super::ScoreError::ScoreOverflow),
        ] {
            let x: Vec<f32> = [good, good, bad, good].concat();
            let mut out = [7.0f32; 4];
            assert_eq!(v.score_dense_rows(&x, &mut out), Err(want));
            assert_eq!(out, [1.0, 1.0, 7.0, 7.0]);
        }
        // lengths are checked before anything is written
        let mut out = [7.0f32; 4];
        assert!(matches!(v.score_dense_rows(&[0.0; 11], &mut out), Err(super::ScoreError::DimensionMismatch { .. })));
        assert_eq!(out, [7.0; 4]);
    }

    /// Models outside the fast path: scored with the feature that serves
    /// them, refused with `UnsupportedKind` without it (and still fully
    /// validated at parse time either way).
    #[test]
    fn models_outside_the_fast_path_follow_the_features() {
        let (w, mean, scale) = ([1.0, -2.0, 0.5], [0.5, 0.0, 1.0], [2.0, 1.0, 0.5]);
        let x = [1.0f32, 2.0, 3.0];
        let rows = [x, x].concat();
        let unsupported = Err(super::ScoreError::UnsupportedKind);

        let f64_model =
            emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 1.0, centring: None }), ElementType::F64));
        let v = ModelView::new_checked(&f64_model).unwrap();
        assert!(v.dense.is_none());
        let mut out = [7.0f32; 2];
        if cfg!(feature = "f64") {
            assert_eq!(v.score_dense(&x), Ok(1.0 + 1.0 - 4.0 + 1.5));
            assert_eq!(v.score_dense_rows(&rows, &mut out), Ok(()));
            assert_eq!(out, [-0.5; 2]);
        } else {
            assert_eq!(v.score_dense(&x), unsupported);
            assert_eq!(v.score_dense_rows(&rows, &mut out).map(|_| 0.0), unsupported);
            assert_eq!(v.score_sparse(&[0, 2], &[1.0, 3.0]), unsupported);
            assert_eq!(v.score_dense_f64(&[1.0, 2.0, 3.0]).map(|s| s as f32), unsupported);
            assert_eq!(out, [7.0; 2]);
        }

        let c = Some(FeatureCentring { mean: &mean, scale: &scale });
        let centred =
            emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 1.0, centring: c }), ElementType::F32));
        let v = ModelView::new_checked(&centred).unwrap();
        assert!(v.dense.is_none());
        // x' = ((1 − 0.5)/2, 2/1, (3 − 1)/0.5) = (0.25, 2, 4)
        if cfg!(feature = "centring") {
            assert_eq!(v.score_dense(&x), Ok(1.0 + 0.25 - 4.0 + 2.0));
        } else {
            assert_eq!(v.score_dense(&x), unsupported);
            assert_eq!(v.score_sparse(&[0], &[1.0]), unsupported);
        }

        // Parse-time validation does not depend on the features: a
        // non-finite f64 weight and a zero scale are refused as before.
        let patched = |file: &[u8], region: &[u8], at: usize, value: &[u8]| -> Vec<u8> {
            let mut b = file.to_vec();
            let start = region.as_ptr() as usize - file.as_ptr() as usize + at;
            b[start..start + value.len()].copy_from_slice(value);
            let n = b.len();
            let crc = super::super::crc32::crc32(&b[..n - 4]);
            b[n - 4..].copy_from_slice(&crc.to_le_bytes());
            b
        };
        let weights = ModelView::new_checked(&f64_model).unwrap().linear().unwrap().weights();
        let nan_weight = patched(&f64_model, weights.as_bytes(), 8, &f64::NAN.to_le_bytes());
        assert_eq!(ModelView::new_checked(&nan_weight).err(), Some(super::super::ParseError::NonFinite));
        let scales = ModelView::new_checked(&centred).unwrap().feature_centring().unwrap().1;
        let zero_scale = patched(&centred, scales.as_bytes(), 4, &0f32.to_le_bytes());
        assert_eq!(ModelView::new_checked(&zero_scale).err(), Some(super::super::ParseError::BadScale));
    }

    /// Without `all-kinds` (and `kernel`), the parser refuses every kind
    /// but linear with `KindNotInBuild`, after the header and checksum
    /// checks; with them, it accepts them.
    #[test]
    fn kinds_outside_the_build_are_refused_at_parse_time() {
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
        let parsed = ModelView::new_checked(&bytes).map(|v| v.kind());
        if cfg!(any(feature = "all-kinds", feature = "kernel")) {
            assert_eq!(parsed, Ok(super::super::ModelKind::KernelExpansion));
        } else {
            assert_eq!(parsed, Err(super::super::ParseError::KindNotInBuild { code: 2 }));
        }
        // A damaged file of such a kind still gets the checksum error first.
        let mut bad = bytes.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert!(matches!(ModelView::new_checked(&bad), Err(super::super::ParseError::BadChecksum { .. })));
    }
}
