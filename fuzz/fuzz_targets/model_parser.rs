//! `ModelView::new_checked` on arbitrary bytes; on success, every accessor
//! and every scoring entry point, with inputs of the right and wrong shapes.
//!
//! Contract under test (core/src/format/mod.rs, "Reading"): once
//! `new_checked` returns `Ok`, no accessor and no scoring function panics,
//! the arrays it hands out are finite and of the documented lengths, and
//! scoring only fails for reasons that are about its *input* (or
//! `ScoreOverflow`). The file is also re-emitted through `ModelSpec` and
//! parsed again: the parameters must come back bit for bit.
//!
//! Built with `--cfg fuzzing`, so the CRC comparison is skipped and the
//! fuzzer reaches the section checks behind it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranklet_core::format::kind::quant::accumulator_fits;
use ranklet_core::format::{
    Array, Basis, BasisView, BilinearModel, DualPairModel, ElementType, FeatureCentring, KernelCentring, KernelModel,
    LinearModel, Model, ModelKind, ModelSpec, ModelView, OnlineModel, PairDomain, PairKernel, PrefGpModel,
    PrefInductiveModel, QuantModel, ScoreError, Values,
};
use ranklet_core::learn::pref::device::DevicePrefGp;

/// Largest dimension for which a right-length dense input is built (a sparse
/// kernel model can declare d up to 2^32 − 1 in a few hundred bytes).
const DENSE_CAP: usize = 1 << 12;

/// A deterministic stream of bytes taken from the fuzz input.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        if self.data.is_empty() {
            return 0x5a;
        }
        let b = self.data[self.at % self.data.len()];
        self.at = self.at.wrapping_add(7);
        b
    }

    /// A small finite value: a multiple of 1/8 in [-16, 16).
    fn small(&mut self) -> f32 {
        (self.next() as i8) as f32 / 8.0
    }

    /// Any f32 bit pattern (NaN and infinities included).
    fn raw(&mut self) -> f32 {
        f32::from_le_bytes([self.next(), self.next(), self.next(), self.next()])
    }
}

fn finite_len(a: Array<'_>, len: usize, what: &str) {
    assert_eq!(a.len(), len, "{what}: length");
    assert_eq!(a.iter().len(), len, "{what}: iterator length");
    let mut n = 0;
    for (i, v) in a.iter().enumerate() {
        assert!(v.is_finite(), "{what}[{i}] = {v} is not finite");
        assert_eq!(a.get(i).map(f64::to_bits), Some(v.to_bits()), "{what}: get({i}) disagrees with iter");
        n += 1;
    }
    assert_eq!(n, len);
    assert!(a.get(len).is_none());
    assert!(a.get(usize::MAX).is_none());
    let _ = a.slice(usize::MAX, 2).len();
    let _ = a.slice(len / 2, usize::MAX).len();
    assert_eq!(a.slice(0, len).len(), len);
}

/// Errors a scoring call may return for an input that is well formed.
fn ok_or_overflow<T>(r: Result<T, ScoreError>, what: &str) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(ScoreError::ScoreOverflow) => None,
        Err(e) => panic!("{what}: well-formed input rejected with {e:?}"),
    }
}

fn expect_err<T: core::fmt::Debug>(r: Result<T, ScoreError>, what: &str) {
    assert!(r.is_err(), "{what}: accepted: {r:?}");
}

fn accessors(view: &ModelView<'_>, data: &[u8]) -> usize {
    assert_eq!(view.into_inner().len(), data.len());
    let _ = (view.format_version(), view.min_reader_version(), view.producer_version());
    let _ = format!("{} {:?}", view.format_version(), view);
    let dim = view.dim();
    assert!(dim > 0);
    let elem = view.element_type();
    let _ = elem.size();

    // Metadata: every key present must be found, absent ones must not panic.
    let meta = view.metadata();
    for line in meta.lines() {
        if let Some((k, _)) = line.split_once('=') {
            assert!(view.metadata_get(k).is_some(), "metadata key {k:?} not found");
        }
    }
    for key in ["", "algorithm", "lambda", "=", "\r", "a=b"] {
        let _ = view.metadata_get(key);
    }

    if let Some((mean, scale)) = view.feature_centring() {
        assert_eq!(mean.element_type(), elem);
        finite_len(mean, dim, "centring mean");
        finite_len(scale, dim, "centring scale");
        assert!(scale.iter().all(|s| s != 0.0), "zero scale accepted");
    }

    match view.kind() {
        ModelKind::PrefGp => {
            let p = view.pref_gp().expect("pref-gp kind without view");
            assert!(view.linear().is_none() && view.kernel().is_none() && view.pref_inductive().is_none());
            assert!(p.sigma() > 0.0 && p.sigma().is_finite());
            assert_eq!(p.items(), dim);
            finite_len(p.mean(), dim, "pref mean");
            finite_len(p.cov_packed(), dim * (dim + 1) / 2, "pref cov");
            for i in 0..dim.min(64) {
                assert!(p.cov(i, i) > 0.0, "pref: Σ_ii <= 0 accepted");
            }
            assert!(p.cov(dim, 0).is_nan());
            let names = p.item_names();
            assert!(names.is_empty() || names.lines().count() == dim);
            let _ = p.item_name(dim);
        }
        ModelKind::PrefInductive => {
            let p = view.pref_inductive().expect("pref-inductive kind without view");
            assert!(p.sigma() > 0.0 && p.scale() > 0.0);
            let m = p.rows();
            assert!(m > 0);
            finite_len(p.basis(), m * dim, "pref basis");
            finite_len(p.alpha(), m, "pref alpha");
            finite_len(p.w_packed(), m * (m + 1) / 2, "pref W");
        }
        ModelKind::Linear => {
            assert!(view.kernel().is_none());
            let l = view.linear().expect("linear kind without linear view");
            assert!(l.offset().is_finite());
            finite_len(l.weights(), dim, "weights");
        }
        ModelKind::KernelExpansion => {
            assert!(view.linear().is_none());
            let k = view.kernel().expect("kernel kind without kernel view");
            let _ = format!("{:?}", k.kernel());
            assert!(k.offset().is_finite());
            let m = k.rows();
            assert!(m > 0);
            finite_len(k.coeffs(), m, "coeffs");
            match k.basis() {
                BasisView::Dense(rows) => finite_len(rows, m * dim, "dense basis"),
                BasisView::Sparse { row_ptr, indices, values } => {
                    assert_eq!(row_ptr.len(), m + 1);
                    assert!(!row_ptr.is_empty());
                    let nnz = indices.len();
                    finite_len(values, nnz, "sparse values");
                    assert_eq!(row_ptr.get(0), Some(0));
                    assert_eq!(row_ptr.get(m).map(|e| e as usize), Some(nnz));
                    assert!(row_ptr.get(m + 1).is_none());
                    let ptr: Vec<u32> = row_ptr.iter().collect();
                    for w in ptr.windows(2) {
                        assert!(w[0] <= w[1], "row_ptr decreases");
                        let row = indices.slice(w[0] as usize, (w[1] - w[0]) as usize);
                        let cols: Vec<u32> = row.iter().collect();
                        assert!(cols.iter().all(|&j| (j as usize) < dim), "index >= dim");
                        assert!(cols.windows(2).all(|p| p[0] < p[1]), "indices not increasing");
                    }
                    let _ = indices.slice(usize::MAX, 1).len();
                    assert!(indices.get(nnz).is_none());
                }
            }
            if let Some(c) = k.centring() {
                assert!(c.grand_mean().is_finite());
                finite_len(c.col_means(), m, "kernel col means");
            }
        }
        ModelKind::OnlineRankRls => {
            assert!(view.linear().is_none() && view.kernel().is_none());
            let o = view.online().expect("online kind without online view");
            assert!(o.lambda().is_finite() && o.lambda() > 0.0);
            assert!(o.offset().is_finite());
            finite_len(o.weights(), dim, "online w");
            finite_len(o.rhs(), dim, "online b");
            finite_len(o.prior(), dim, "online w0");
            finite_len(o.rhs_compensation(), dim, "online c");
            finite_len(o.factor_packed(), dim * (dim + 1) / 2, "online L");
            let floor = 0.999 * o.lambda().sqrt();
            for i in 0..dim {
                assert!(o.factor_packed().get(i * (i + 1) / 2 + i).unwrap() >= floor, "L diagonal below the floor");
            }
        }
        ModelKind::Bilinear => {
            assert!(view.linear().is_none() && view.kernel().is_none() && view.feature_centring().is_none());
            let b = view.bilinear().expect("bilinear kind without bilinear view");
            assert_eq!(b.dim_u(), dim);
            assert!(b.dim_v() > 0 && b.offset().is_finite());
            finite_len(b.w(), dim * b.dim_v(), "W");
            assert_eq!(view.pair_dims(), Some((dim, b.dim_v())));
            assert_eq!(view.pair_workspace_len(), b.dim_v());
            let sign = match b.pair() {
                PairKernel::Kronecker => None,
                PairKernel::Symmetric => Some(1.0),
                PairKernel::Reciprocal => Some(-1.0),
            };
            if let Some(sign) = sign {
                assert_eq!(b.dim_v(), dim);
                for i in 0..dim {
                    for j in 0..dim {
                        assert!(
                            b.w().get(i * dim + j) == b.w().get(j * dim + i).map(|x| sign * x),
                            "W not (anti)symmetric"
                        );
                    }
                }
                if sign < 0.0 {
                    assert_eq!(b.offset(), 0.0);
                }
            }
        }
        ModelKind::DualPair => {
            assert!(view.linear().is_none() && view.kernel().is_none() && view.feature_centring().is_none());
            let d = view.dual_pair().expect("dual pair kind without dual view");
            let _ = format!("{:?} {:?}", d.kernel_u(), d.kernel_v());
            assert_eq!(d.dim_u(), dim);
            assert!(d.rows_u() > 0 && d.rows_v() > 0 && d.dim_v() > 0 && d.offset().is_finite());
            finite_len(d.basis_u(), d.rows_u() * dim, "basis u");
            finite_len(d.basis_v(), d.rows_v() * d.dim_v(), "basis v");
            finite_len(d.coeffs(), d.rows_u() * d.rows_v(), "A");
            if !d.two_domains() {
                assert_eq!((d.rows_v(), d.dim_v(), d.kernel_v()), (d.rows_u(), dim, d.kernel_u()));
            } else {
                assert_eq!(d.pair(), PairKernel::Kronecker);
            }
            if d.pair() == PairKernel::Reciprocal {
                assert_eq!(d.offset(), 0.0);
            }
        }
        ModelKind::QuantLinear => {
            assert!(view.linear().is_none() && view.kernel().is_none() && view.feature_centring().is_none());
            assert_eq!(elem, ElementType::F32);
            let q = view.quant().expect("quantised kind without quant view");
            assert_eq!(q.dim(), dim);
            assert!(q.scale().is_finite() && q.scale() > 0.0);
            assert!(accumulator_fits(dim, q.bias(), q.width()), "accumulator bound broken");
            for j in 0..dim.min(DENSE_CAP) {
                let (a, z) = (q.input_scale(j), q.zero_point(j));
                assert!(a.is_finite() && a > 0.0 && z.is_finite());
                let _ = (q.weight(j), q.range(j));
            }
            let _ = (q.weight(dim), q.input_scale(dim), q.error_bound());
            if dim <= DENSE_CAP {
                // The extreme inputs: exact against an i128 brute force.
                for extreme in [i16::MIN, i16::MAX] {
                    let x = vec![extreme; dim];
                    let want = q.bias() as i128 + (0..dim).map(|j| q.weight(j) as i128 * extreme as i128).sum::<i128>();
                    assert_eq!(view.score_dense_i16(&x).map(|s| s as i128), Ok(want));
                }
            }
        }
        _ => {}
    }
    dim
}

/// Quantised models: the integer entry points agree with each other and
/// with the float one, refuse bad lengths and NaN; other kinds refuse them.
fn quant_scoring(view: &ModelView<'_>, data: &[u8]) {
    let dim = view.dim();
    if view.quant().is_none() {
        assert_eq!(view.score_dense_i16(&[]), Err(ScoreError::KindMismatch));
        assert_eq!(view.score_dense_quant(&[]), Err(ScoreError::KindMismatch));
        return;
    }
    let q = view.quant().unwrap();
    if dim > DENSE_CAP {
        return;
    }
    let mut b = Bytes { data, at: data.len() / 2 };
    assert!(matches!(view.score_dense_i16(&vec![0; dim + 1]), Err(ScoreError::DimensionMismatch { .. })));
    let x: Vec<f32> = (0..dim).map(|_| b.raw()).collect();
    let mut qx = vec![0i16; dim];
    if x.iter().all(|v| v.is_finite()) {
        view.quantize_dense(&x, &mut qx).unwrap();
        let s = view.score_dense_quant(&x).unwrap();
        assert_eq!(view.score_dense_i16(&qx), Ok(s));
        let mut rows = [0i64; 2];
        let two: Vec<i16> = qx.iter().chain(&qx).copied().collect();
        view.score_dense_i16_rows(&two, &mut rows).unwrap();
        assert_eq!(rows, [s, s]);
        // The float score is c·S in the model's units; a large c may take
        // it past f64, which is the ScoreOverflow error, not a panic.
        let want = q.scale() * s as f64;
        match view.score_dense_f64(&x.iter().map(|&v| v as f64).collect::<Vec<_>>()) {
            Ok(f) => assert_eq!(f.to_bits(), want.to_bits()),
            Err(e) => assert!(e == ScoreError::ScoreOverflow && !want.is_finite(), "{e:?}"),
        }
    } else {
        assert_eq!(view.score_dense_quant(&x), Err(ScoreError::NonFiniteInput));
        assert_eq!(view.quantize_dense(&x, &mut qx), Err(ScoreError::NonFiniteInput));
    }
}

/// Pair models: wrong and right lengths, the workspace, exact
/// (anti)symmetry, rows equal to single pairs, and the single-row entry
/// points refusing the kind.
fn pair_scoring(view: &ModelView<'_>, data: &[u8]) {
    let (du, dv) = view.pair_dims().unwrap();
    let mut b = Bytes { data, at: data.len() / 3 };
    assert_eq!(view.score_dense(&[]), Err(ScoreError::KindMismatch));
    assert_eq!(view.score_sparse(&[], &[]), Err(ScoreError::KindMismatch));
    assert_eq!(view.score_dense_rows(&[], &mut []), Err(ScoreError::KindMismatch));
    let wl = view.pair_workspace_len();
    if du > DENSE_CAP || dv > DENSE_CAP || wl > 3 * DENSE_CAP {
        return;
    }
    let mut work = vec![f32::NAN; wl];
    let mut work64 = vec![f64::NAN; wl];
    let xu: Vec<f32> = (0..du).map(|_| b.small()).collect();
    let xv: Vec<f32> = (0..dv).map(|_| b.small()).collect();
    expect_err(view.score_pair(&xu[..du - 1], &xv, &mut work), "short xu");
    expect_err(view.score_pair(&xu, &xv[..dv - 1], &mut work), "short xv");
    if wl > 0 {
        expect_err(view.score_pair(&xu, &xv, &mut work[..wl - 1]), "short workspace");
    }
    let s = ok_or_overflow(view.score_pair(&xu, &xv, &mut work), "score_pair");
    let xu64: Vec<f64> = xu.iter().map(|&x| x as f64).collect();
    let xv64: Vec<f64> = xv.iter().map(|&x| x as f64).collect();
    let s64 = ok_or_overflow(view.score_pair_f64(&xu64, &xv64, &mut work64), "score_pair_f64");
    if let Some(s) = s {
        assert!(s.is_finite());
        let mut rows = xv.clone();
        rows.extend_from_slice(&xv);
        let mut out = [f32::NAN; 2];
        if ok_or_overflow(view.score_pair_rows(&xu, &rows, &mut work, &mut out), "score_pair_rows").is_some() {
            assert_eq!(out[0].to_bits(), s.to_bits());
            assert_eq!(out[1].to_bits(), s.to_bits());
        }
    }
    if du == dv {
        let sign = match view.pair_kernel().unwrap() {
            PairKernel::Kronecker => None,
            PairKernel::Symmetric => Some(1.0f32),
            PairKernel::Reciprocal => Some(-1.0f32),
        };
        if let (Some(sign), Some(s)) = (sign, s) {
            let back = view.score_pair(&xv, &xu, &mut work).expect("swapped pair overflowed");
            assert!(back == sign * s, "not exactly (anti)symmetric: {s} vs {back}");
        }
        if let (Some(sign), Some(s)) = (sign, s64) {
            let back = view.score_pair_f64(&xv64, &xu64, &mut work64).expect("swapped pair overflowed");
            assert!(back == sign as f64 * s, "not exactly (anti)symmetric (f64)");
        }
    }
    let raw: Vec<f32> = (0..dv).map(|_| b.raw()).collect();
    let r = view.score_pair(&xu, &raw, &mut work);
    if raw.iter().all(|v| v.is_finite()) {
        ok_or_overflow(r, "score_pair(raw)");
    } else {
        assert_eq!(r, Err(ScoreError::NonFiniteInput));
    }
}

/// A kind-8 posterior loaded on the "device" (f32 and f64): P(i ≻ j),
/// ranking, next pair and observations from the fuzz bytes; an observation
/// either succeeds with a finite posterior whose variances stay positive,
/// or fails and changes nothing.
fn pref_device(view: &ModelView<'_>, data: &[u8]) {
    fn run<R: ranklet_core::Real + ranklet_core::rank::Score + ranklet_core::learn::pref::device::PrefReal>(
        view: &ModelView<'_>,
        data: &[u8],
    ) {
        let n = view.dim();
        let mut storage = vec![R::ZERO; DevicePrefGp::<R>::storage_len(n)];
        let Ok(mut gp) = DevicePrefGp::<R>::from_model(&mut storage, view) else {
            // Only an f64 file whose values overflow f32 may be refused.
            assert_eq!(core::mem::size_of::<R>(), 4, "an f64 device refused a valid kind-8 model");
            return;
        };
        let mut b = Bytes { data, at: 1 };
        for _ in 0..4 {
            let (i, j) = (b.next() as usize % (n + 1), b.next() as usize % (n + 1));
            match gp.prob(i, j) {
                Ok((p, v)) => {
                    assert!(i < n && j < n);
                    assert!(p.to_f64() >= 0.0 && p.to_f64() <= 1.0 && v.to_f64() >= 0.0, "P or v out of range");
                }
                Err(_) => assert!(i >= n || j >= n),
            }
        }
        if let Some((i, j, r)) = gp.next_pair() {
            assert!(i < j && j < n && !(r.to_f64() < 0.0));
        } else {
            assert!(n < 2);
        }
        let mut order = vec![0u32; n];
        gp.rank(&mut order).expect("rank");
        for k in 1..n {
            assert!(gp.mean()[order[k - 1] as usize] >= gp.mean()[order[k] as usize]);
        }
        for _ in 0..3 {
            let (w, l) = (b.next() as usize % (n + 1), b.next() as usize % (n + 1));
            let (m0, c0) = (gp.mean().to_vec(), gp.cov_packed().to_vec());
            match gp.observe(w, l) {
                Ok(()) => {
                    assert!(w < n && l < n && w != l);
                    assert!(gp.mean().iter().chain(gp.cov_packed()).all(|x| x.is_finite()), "non-finite posterior");
                    for i in 0..n {
                        assert!(gp.cov(i, i).unwrap().to_f64() > 0.0, "variance <= 0 after observe");
                    }
                }
                Err(_) => {
                    assert!(gp.mean() == &m0[..] && gp.cov_packed() == &c0[..], "a failed observe changed the state");
                }
            }
        }
        // The device state writes back as a kind-8 file, unless rounding has
        // pushed it outside the file's checks (then the writer says so).
        let spec = ModelSpec::new(gp.to_model(), ElementType::F32);
        let mut buf = vec![0u8; spec.buffer_len()];
        if spec.emit(&mut buf).is_ok() {
            ModelView::new_checked(&buf).expect("device state written but not readable");
        }
    }
    if view.dim() <= 96 {
        run::<f32>(view, data);
        run::<f64>(view, data);
    }
}

fn pref_inductive_predictions(view: &ModelView<'_>, data: &[u8]) {
    let p = view.pref_inductive().unwrap();
    let d = view.dim();
    if d > DENSE_CAP || p.rows() > 512 {
        return;
    }
    let mut b = Bytes { data, at: 3 };
    let x: Vec<f64> = (0..d).map(|_| b.small() as f64).collect();
    let y: Vec<f64> = (0..d).map(|_| b.small() as f64).collect();
    let mut work = vec![0.0; p.prob_workspace_len()];
    if let Ok((_, var)) = p.predict(&x, &mut work) {
        assert!(var >= 0.0);
    }
    if let Ok((pr, v)) = p.prob(&x, &y, &mut work) {
        assert!((0.0..=1.0).contains(&pr) && v >= 0.0);
    }
    expect_err(p.predict(&x[..d - 1], &mut work), "short x");
    expect_err(p.predict(&x, &mut work[..p.rows() - 1]), "short work");
}

fn scoring(view: &ModelView<'_>, data: &[u8]) {
    if view.is_pair() {
        return pair_scoring(view, data);
    }
    quant_scoring(view, data);
    if view.pref_gp().is_some() || view.pref_inductive().is_some() {
        let x = vec![0.5f32; view.dim().min(DENSE_CAP)];
        assert_eq!(view.score_dense(&x), Err(ScoreError::KindMismatch));
        assert_eq!(view.score_sparse(&[], &[]), Err(ScoreError::KindMismatch));
        return if view.pref_gp().is_some() { pref_device(view, data) } else { pref_inductive_predictions(view, data) };
    }
    assert_eq!(view.score_pair(&[], &[], &mut []), Err(ScoreError::KindMismatch));
    let dim = view.dim();
    let mut b = Bytes { data, at: data.len() / 3 };

    // Dense inputs of the wrong length.
    for len in [0usize, 1, dim.wrapping_sub(1), dim + 1] {
        if len == dim || len > DENSE_CAP + 1 {
            continue;
        }
        let x: Vec<f32> = (0..len).map(|_| b.small()).collect();
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        assert!(matches!(view.score_dense(&x), Err(ScoreError::DimensionMismatch { .. })));
        assert!(matches!(view.score_dense_f64(&x64), Err(ScoreError::DimensionMismatch { .. })));
        let mut out = [0f32; 1];
        expect_err(view.score_dense_rows(&x, &mut out), "dense rows, wrong length");
        let mut out64 = [0f64; 1];
        expect_err(view.score_dense_rows_f64(&x64, &mut out64), "dense rows f64, wrong length");
    }
    // Zero rows is always fine.
    view.score_dense_rows(&[], &mut []).expect("zero dense rows");
    view.score_dense_rows_f64(&[], &mut []).expect("zero dense rows f64");
    view.score_sparse_rows(&[0], &[], &[], &mut []).expect("zero sparse rows");

    // Dense inputs of the right length.
    if dim <= DENSE_CAP {
        let x: Vec<f32> = (0..dim).map(|_| b.small()).collect();
        let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let s = ok_or_overflow(view.score_dense(&x), "score_dense");
        let s64 = ok_or_overflow(view.score_dense_f64(&x64), "score_dense_f64");
        if let Some(s) = s {
            assert!(s.is_finite());
        }
        if let Some(s) = s64 {
            assert!(s.is_finite());
        }

        // Two rows: the same input twice must give the one-row score twice.
        let mut x2 = x.clone();
        x2.extend_from_slice(&x);
        let mut out = [f32::NAN; 2];
        if ok_or_overflow(view.score_dense_rows(&x2, &mut out), "score_dense_rows").is_some() {
            let s = s.expect("rows scored but the single row overflowed");
            assert_eq!(out[0].to_bits(), s.to_bits());
            assert_eq!(out[1].to_bits(), s.to_bits());
        }
        let mut x2_64 = x64.clone();
        x2_64.extend_from_slice(&x64);
        let mut out64 = [f64::NAN; 2];
        if ok_or_overflow(view.score_dense_rows_f64(&x2_64, &mut out64), "score_dense_rows_f64").is_some() {
            let s = s64.expect("rows scored but the single row overflowed");
            assert_eq!(out64[0].to_bits(), s.to_bits());
            assert_eq!(out64[1].to_bits(), s.to_bits());
        }

        // Raw bit patterns: non-finite values are rejected, finite ones may
        // overflow, nothing panics.
        let raw: Vec<f32> = (0..dim).map(|_| b.raw()).collect();
        let r = view.score_dense(&raw);
        if raw.iter().all(|v| v.is_finite()) {
            ok_or_overflow(r, "score_dense(raw)");
        } else {
            assert_eq!(r, Err(ScoreError::NonFiniteInput));
        }
        let raw64: Vec<f64> = raw.iter().map(|&v| v as f64).collect();
        let _ = view.score_dense_f64(&raw64);
        // Extremes: overflow is an error, never a panic or a non-finite Ok.
        let big = vec![f32::MAX; dim];
        if let Ok(s) = view.score_dense(&big) {
            assert!(s.is_finite());
        }
        let big64 = vec![f64::MAX; dim];
        if let Ok(s) = view.score_dense_f64(&big64) {
            assert!(s.is_finite());
        }
        let mut nan = x.clone();
        if let Some(v) = nan.last_mut() {
            *v = f32::NAN;
        }
        assert_eq!(view.score_dense(&nan), Err(ScoreError::NonFiniteInput));
    }

    // Sparse input: sorted, in range.
    let mut idx = Vec::new();
    let mut j: usize = b.next() as usize % 4;
    while j < dim && idx.len() < 64 {
        idx.push(j as u32);
        j = j.saturating_add(1 + b.next() as usize % 9);
    }
    let val: Vec<f32> = idx.iter().map(|_| b.small()).collect();
    let s = ok_or_overflow(view.score_sparse(&idx, &val), "score_sparse");
    if let Some(s) = s {
        assert!(s.is_finite());
    }
    // The same row twice through the CSR entry point.
    let k = idx.len() as u32;
    let mut idx2 = idx.clone();
    idx2.extend_from_slice(&idx);
    let mut val2 = val.clone();
    val2.extend_from_slice(&val);
    let mut out = [f32::NAN; 2];
    if ok_or_overflow(view.score_sparse_rows(&[0, k, 2 * k], &idx2, &val2, &mut out), "score_sparse_rows").is_some() {
        let s = s.expect("rows scored but the single row overflowed");
        assert_eq!(out[0].to_bits(), s.to_bits());
        assert_eq!(out[1].to_bits(), s.to_bits());
    }
    // Sparse with a dense equivalent: same score up to rounding is not
    // asserted (different summation order); only that neither panics.
    if dim <= DENSE_CAP {
        let mut dense = vec![0f32; dim];
        for (&j, &v) in idx.iter().zip(&val) {
            dense[j as usize] = v;
        }
        let _ = view.score_dense(&dense);
    }

    // Sparse inputs that must be rejected.
    if idx.len() >= 2 {
        let mut rev = idx.clone();
        rev.reverse();
        assert_eq!(view.score_sparse(&rev, &val), Err(ScoreError::BadInputIndex), "unsorted indices");
        let mut dup = idx.clone();
        dup[1] = dup[0];
        assert_eq!(view.score_sparse(&dup, &val), Err(ScoreError::BadInputIndex), "repeated index");
    }
    let oob = [u32::try_from(dim).unwrap_or(u32::MAX)];
    // Indices past the dimension are scored (the model is 0 there), not refused.
    assert_ne!(view.score_sparse(&oob, &[1.0]), Err(ScoreError::BadInputIndex), "index == dim");
    assert_ne!(view.score_sparse(&[u32::MAX], &[1.0]), Err(ScoreError::BadInputIndex), "index u32::MAX");
    assert!(matches!(view.score_sparse(&idx, &[]), Err(ScoreError::DimensionMismatch { .. })) || idx.is_empty());
    if !idx.is_empty() {
        let mut nan = val.clone();
        nan[0] = f32::INFINITY;
        assert_eq!(view.score_sparse(&idx, &nan), Err(ScoreError::NonFiniteInput));
    }
    // Arbitrary (unsorted, out of range) indices straight from the bytes.
    let n = b.next() as usize % 8;
    let wild: Vec<u32> = (0..n).map(|_| u32::from_le_bytes([b.next(), b.next(), 0, 0]) % 64).collect();
    let wild_v: Vec<f32> = (0..n).map(|_| b.raw()).collect();
    let _ = view.score_sparse(&wild, &wild_v);

    // Broken CSR row pointers.
    let mut out = [0f32; 2];
    for ptr in [[1, k, 2 * k], [0, 2 * k, k], [0, k, 2 * k + 1], [0, u32::MAX, 2 * k], [0, k, u32::MAX]] {
        if ptr == [0, k, 2 * k] {
            continue;
        }
        expect_err(view.score_sparse_rows(&ptr, &idx2, &val2, &mut out), "broken row_ptr");
    }
    expect_err(view.score_sparse_rows(&[0, k], &idx2, &val2, &mut out), "row_ptr too short");
    if !idx2.is_empty() {
        expect_err(view.score_sparse_rows(&[0, k, 2 * k], &idx2, &val2[1..], &mut out), "values too short");
    }
    let wild_ptr: Vec<u32> = (0..3).map(|_| b.next() as u32 % 8).collect();
    let _ = view.score_sparse_rows(&wild_ptr, &wild, &wild_v, &mut out);
}

/// Rebuilds a `ModelSpec` from the view, emits it, parses it again and
/// compares every parameter bit for bit.
fn reemit(view: &ModelView<'_>) {
    let v = |a: Array<'_>| -> Vec<f64> { a.iter().collect() };
    let centring = view.feature_centring().map(|(m, s)| (v(m), v(s)));
    let fc = centring.as_ref().map(|(m, s)| FeatureCentring { mean: m, scale: s });
    let (w, coeffs, dense, csr, kc, online, pair, quant, pref);
    let model = match view.kind() {
        ModelKind::QuantLinear => {
            let q = view.quant().unwrap();
            let d = view.dim();
            quant = (
                (0..d).map(|j| q.input_scale(j)).collect::<Vec<f32>>(),
                (0..d).map(|j| q.zero_point(j)).collect::<Vec<f32>>(),
                (0..d).map(|j| q.weight(j)).collect::<Vec<i16>>(),
            );
            Model::Quant(QuantModel {
                width: q.width(),
                scale: q.scale(),
                bias: q.bias(),
                input_scale: &quant.0,
                zero_point: &quant.1,
                weights: &quant.2,
            })
        }
        ModelKind::PrefGp => {
            let p = view.pref_gp().unwrap();
            pref = [v(p.mean()), v(p.cov_packed())];
            Model::PrefGp(PrefGpModel {
                sigma: p.sigma(),
                count: p.count(),
                mean: Values::F64(&pref[0]),
                cov_packed: Values::F64(&pref[1]),
                item_names: p.item_names(),
            })
        }
        ModelKind::PrefInductive => {
            let p = view.pref_inductive().unwrap();
            pref = [v(p.basis()), v(p.alpha())];
            w = v(p.w_packed());
            Model::PrefInductive(PrefInductiveModel {
                kernel: p.kernel(),
                scale: p.scale(),
                sigma: p.sigma(),
                count: p.count(),
                dim: view.dim(),
                basis: &pref[0],
                alpha: &pref[1],
                w_packed: &w,
            })
        }
        ModelKind::Bilinear => {
            let b = view.bilinear().unwrap();
            w = v(b.w());
            Model::Bilinear(BilinearModel {
                pair: b.pair(),
                dim_u: b.dim_u(),
                dim_v: b.dim_v(),
                w: &w,
                offset: b.offset(),
            })
        }
        ModelKind::DualPair => {
            let d = view.dual_pair().unwrap();
            pair = [v(d.basis_u()), v(d.basis_v()), v(d.coeffs())];
            let u = PairDomain { kernel: d.kernel_u(), dim: d.dim_u(), basis: &pair[0] };
            Model::DualPair(DualPairModel {
                pair: d.pair(),
                u,
                v: d.two_domains().then_some(PairDomain { kernel: d.kernel_v(), dim: d.dim_v(), basis: &pair[1] }),
                coeffs: &pair[2],
                offset: d.offset(),
            })
        }
        ModelKind::OnlineRankRls => {
            let o = view.online().unwrap();
            online = [v(o.weights()), v(o.rhs()), v(o.rhs_compensation()), v(o.prior()), v(o.factor_packed())];
            Model::Online(OnlineModel {
                lambda: o.lambda(),
                count: o.count(),
                prior_id: o.prior_id(),
                offset: o.offset(),
                w: Values::F64(&online[0]),
                b: Values::F64(&online[1]),
                b_comp: Values::F64(&online[2]),
                w0: Values::F64(&online[3]),
                l_packed: Values::F64(&online[4]),
            })
        }
        ModelKind::Linear => {
            let l = view.linear().unwrap();
            w = v(l.weights());
            Model::Linear(LinearModel { w: &w, offset: l.offset(), centring: fc })
        }
        _ => {
            let k = view.kernel().unwrap();
            coeffs = v(k.coeffs());
            let basis = match k.basis() {
                BasisView::Dense(rows) => {
                    dense = v(rows);
                    Basis::Dense(&dense)
                }
                BasisView::Sparse { row_ptr, indices, values } => {
                    csr = (row_ptr.iter().collect::<Vec<u32>>(), indices.iter().collect::<Vec<u32>>(), v(values));
                    Basis::Sparse { row_ptr: &csr.0, indices: &csr.1, values: &csr.2 }
                }
            };
            kc = k.centring().map(|c| (v(c.col_means()), c.grand_mean()));
            Model::Kernel(KernelModel {
                dim: view.dim(),
                kernel: k.kernel(),
                basis,
                coeffs: &coeffs,
                offset: k.offset(),
                centring: fc,
                kernel_centring: kc.as_ref().map(|(m, g)| KernelCentring { col_means: m, grand_mean: *g }),
            })
        }
    };
    let spec = ModelSpec {
        model,
        element_type: view.element_type(),
        metadata: view.metadata(),
        producer: view.producer_version(),
    };
    let len = spec.buffer_len();
    let mut buf = vec![0u8; len];
    let n = spec.emit(&mut buf).unwrap_or_else(|e| panic!("a parsed model does not re-emit: {e:?}"));
    assert_eq!(n, len);
    let back = ModelView::new_checked(&buf).unwrap_or_else(|e| panic!("re-emitted model rejected: {e:?}"));

    assert_eq!(back.kind(), view.kind());
    assert_eq!(back.element_type(), view.element_type());
    assert_eq!(back.dim(), view.dim());
    assert_eq!(back.metadata(), view.metadata());
    assert_eq!(back.producer_version(), view.producer_version());
    let same = |a: Array<'_>, b: Array<'_>, what: &str| {
        assert!(a.iter().map(f64::to_bits).eq(b.iter().map(f64::to_bits)), "{what} changed on re-emit");
    };
    match (view.feature_centring(), back.feature_centring()) {
        (None, None) => {}
        (Some((m1, s1)), Some((m2, s2))) => {
            same(m1, m2, "mean");
            same(s1, s2, "scale");
        }
        _ => panic!("feature centring lost or invented on re-emit"),
    }
    if let (Some(a), Some(b)) = (view.bilinear(), back.bilinear()) {
        assert_eq!((a.pair(), a.dim_u(), a.dim_v()), (b.pair(), b.dim_u(), b.dim_v()));
        assert_eq!(a.offset().to_bits(), b.offset().to_bits());
        same(a.w(), b.w(), "W");
    } else if let (Some(a), Some(b)) = (view.dual_pair(), back.dual_pair()) {
        assert_eq!(
            (a.pair(), a.two_domains(), a.kernel_u(), a.kernel_v()),
            (b.pair(), b.two_domains(), b.kernel_u(), b.kernel_v())
        );
        assert_eq!((a.rows_u(), a.rows_v(), a.dim_u(), a.dim_v()), (b.rows_u(), b.rows_v(), b.dim_u(), b.dim_v()));
        assert_eq!(a.offset().to_bits(), b.offset().to_bits());
        same(a.basis_u(), b.basis_u(), "basis u");
        same(a.basis_v(), b.basis_v(), "basis v");
        same(a.coeffs(), b.coeffs(), "A");
    } else if let (Some(a), Some(b)) = (view.quant(), back.quant()) {
        assert_eq!((a.width(), a.scale().to_bits(), a.bias()), (b.width(), b.scale().to_bits(), b.bias()));
        for j in 0..view.dim() {
            assert_eq!(a.input_scale(j).to_bits(), b.input_scale(j).to_bits());
            assert_eq!(a.zero_point(j).to_bits(), b.zero_point(j).to_bits());
            assert_eq!(a.weight(j), b.weight(j));
        }
    } else if let (Some(a), Some(b)) = (view.pref_gp(), back.pref_gp()) {
        assert_eq!(
            (a.sigma().to_bits(), a.count(), a.items(), a.item_names()),
            (b.sigma().to_bits(), b.count(), b.items(), b.item_names())
        );
        same(a.mean(), b.mean(), "pref mean");
        same(a.cov_packed(), b.cov_packed(), "pref cov");
    } else if let (Some(a), Some(b)) = (view.pref_inductive(), back.pref_inductive()) {
        assert_eq!((a.kernel(), a.rows(), a.count()), (b.kernel(), b.rows(), b.count()));
        assert_eq!((a.sigma().to_bits(), a.scale().to_bits()), (b.sigma().to_bits(), b.scale().to_bits()));
        same(a.basis(), b.basis(), "pref basis");
        same(a.alpha(), b.alpha(), "pref alpha");
        same(a.w_packed(), b.w_packed(), "pref W");
    } else if let (Some(a), Some(b)) = (view.online(), back.online()) {
        assert_eq!((a.lambda().to_bits(), a.count(), a.prior_id()), (b.lambda().to_bits(), b.count(), b.prior_id()));
        assert_eq!(a.offset().to_bits(), b.offset().to_bits());
        same(a.weights(), b.weights(), "online w");
        same(a.rhs(), b.rhs(), "online b");
        same(a.prior(), b.prior(), "online w0");
        same(a.rhs_compensation(), b.rhs_compensation(), "online c");
        same(a.factor_packed(), b.factor_packed(), "online L");
    } else {
        match (view.linear(), back.linear(), view.kernel(), back.kernel()) {
            (Some(a), Some(b), None, None) => {
                assert_eq!(a.offset().to_bits(), b.offset().to_bits());
                same(a.weights(), b.weights(), "weights");
            }
            (None, None, Some(a), Some(b)) => {
                assert_eq!(a.kernel(), b.kernel());
                assert_eq!(a.offset().to_bits(), b.offset().to_bits());
                assert_eq!(a.rows(), b.rows());
                same(a.coeffs(), b.coeffs(), "coeffs");
                match (a.basis(), b.basis()) {
                    (BasisView::Dense(x), BasisView::Dense(y)) => same(x, y, "dense basis"),
                    (
                        BasisView::Sparse { row_ptr: p1, indices: i1, values: v1 },
                        BasisView::Sparse { row_ptr: p2, indices: i2, values: v2 },
                    ) => {
                        assert!(p1.iter().eq(p2.iter()), "row_ptr changed");
                        assert!(i1.iter().eq(i2.iter()), "indices changed");
                        same(v1, v2, "sparse values");
                    }
                    _ => panic!("basis storage changed on re-emit"),
                }
                match (a.centring(), b.centring()) {
                    (None, None) => {}
                    (Some(c1), Some(c2)) => {
                        assert_eq!(c1.grand_mean().to_bits(), c2.grand_mean().to_bits());
                        same(c1.col_means(), c2.col_means(), "col means");
                    }
                    _ => panic!("kernel centring lost or invented on re-emit"),
                }
            }
            _ => panic!("model body changed on re-emit"),
        }
    }
    // Same parameters, same scores.
    if let Some((du, dv)) = view.pair_dims() {
        let wl = view.pair_workspace_len();
        if du <= DENSE_CAP && dv <= DENSE_CAP && wl <= 3 * DENSE_CAP {
            let xu: Vec<f32> = (0..du).map(|j| (j % 5) as f32 - 2.0).collect();
            let xv: Vec<f32> = (0..dv).map(|j| (j % 3) as f32 - 1.0).collect();
            let (mut w1, mut w2) = (vec![0f32; wl], vec![0f32; wl]);
            let (s1, s2) = (view.score_pair(&xu, &xv, &mut w1), back.score_pair(&xu, &xv, &mut w2));
            assert_eq!(s1.map(f32::to_bits), s2.map(f32::to_bits));
        }
    } else if view.dim() <= DENSE_CAP && view.pref_gp().is_none() && view.pref_inductive().is_none() {
        let x: Vec<f32> = (0..view.dim()).map(|j| (j % 5) as f32 - 2.0).collect();
        let (s1, s2) = (view.score_dense(&x), back.score_dense(&x));
        assert_eq!(s1.map(f32::to_bits), s2.map(f32::to_bits));
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(view) = ModelView::new_checked(data) else {
        return;
    };
    let _ = ElementType::from_code(data.get(21).copied().unwrap_or(0));
    accessors(&view, data);
    scoring(&view, data);
    reemit(&view);
});
