//! `ModelSpec` from fuzz data → `emit` into exactly `buffer_len()` bytes →
//! `ModelView::new_checked` → the same parameters.
//!
//! Contract under test (core/src/format/mod.rs, "Writing"): `emit` never
//! panics, on error writes nothing (and returns the error `check` gives),
//! and a file it writes always passes `new_checked` with the parameters
//! rounded to the element type and nothing else changed.
//!
//! Shapes are decoded so that most specs are valid (d ≤ 9, m ≤ 6, a sparse
//! basis drawn from bit masks); `corrupt` then breaks one thing on purpose
//! so that the rejection paths are reached too.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use ranklet_core::format::{
    Basis, BasisView, BilinearModel, DualPairModel, ElementType, EmitError, FeatureCentring, Kernel, KernelCentring,
    KernelModel, LinearModel, Model, ModelSpec, ModelView, PairDomain, PairKernel, ScoreError,
};

/// A parameter value: mostly small and exact, sometimes anything at all.
fn value(u: &mut Unstructured<'_>) -> arbitrary::Result<f64> {
    Ok(match u8::arbitrary(u)? % 8 {
        0 => f64::arbitrary(u)?,                   // any bits: NaN, ∞, subnormal
        1 => f32::arbitrary(u)? as f64,            // exactly representable in f32
        2 => f64::from(i16::arbitrary(u)?) * 1e35, // overflows f32 when large
        3 => -0.0,
        _ => f64::from(i8::arbitrary(u)?) / 16.0,
    })
}

fn values(u: &mut Unstructured<'_>, n: usize) -> arbitrary::Result<Vec<f64>> {
    (0..n).map(|_| value(u)).collect()
}

#[derive(Debug)]
struct Case {
    elem: ElementType,
    dim: usize,
    linear: bool,
    w: Vec<f64>,
    offset: f64,
    centring: Option<(Vec<f64>, Vec<f64>)>,
    kernel: Kernel,
    dense: Option<Vec<f64>>,
    csr: (Vec<u32>, Vec<u32>, Vec<f64>),
    coeffs: Vec<f64>,
    kc: Option<(Vec<f64>, f64)>,
    metadata: String,
    producer: [u16; 3],
}

fn case(u: &mut Unstructured<'_>) -> arbitrary::Result<Case> {
    let elem = if bool::arbitrary(u)? { ElementType::F64 } else { ElementType::F32 };
    let dim = 1 + usize::from(u8::arbitrary(u)? % 9);
    let m = 1 + usize::from(u8::arbitrary(u)? % 6);
    let linear = bool::arbitrary(u)?;
    let w = values(u, dim)?;
    let offset = value(u)?;
    let centring = if bool::arbitrary(u)? {
        let mean = values(u, dim)?;
        let scale = (0..dim)
            .map(|_| value(u).map(|s| if s == 0.0 { 1.0 } else { s }))
            .collect::<arbitrary::Result<Vec<_>>>()?;
        Some((mean, scale))
    } else {
        None
    };
    let kernel = match u8::arbitrary(u)? % 3 {
        0 => Kernel::Linear,
        1 => Kernel::Rbf { gamma: value(u)?.abs() },
        _ => Kernel::Polynomial { gamma: value(u)?, coef0: value(u)?, degree: u8::arbitrary(u)? % 5 },
    };
    let dense = if bool::arbitrary(u)? { Some(values(u, m * dim)?) } else { None };
    let mut row_ptr = vec![0u32];
    let mut indices = Vec::new();
    for _ in 0..m {
        let mask = u16::arbitrary(u)?;
        indices.extend((0..dim as u32).filter(|j| mask & (1 << j) != 0));
        row_ptr.push(indices.len() as u32);
    }
    let sv = values(u, indices.len())?;
    let coeffs = values(u, m)?;
    let kc = if bool::arbitrary(u)? { Some((values(u, m)?, value(u)?)) } else { None };
    let metadata = String::arbitrary(u)?;
    let producer = <[u16; 3]>::arbitrary(u)?;
    Ok(Case {
        elem,
        dim,
        linear,
        w,
        offset,
        centring,
        kernel,
        dense,
        csr: (row_ptr, indices, sv),
        coeffs,
        kc,
        metadata,
        producer,
    })
}

/// Breaks one thing in the case (most inputs break nothing).
fn corrupt(c: &mut Case, u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let at = usize::from(u8::arbitrary(u)?);
    match u8::arbitrary(u)? % 16 {
        0 => {
            c.w.pop();
        }
        1 => c.coeffs.push(1.0),
        2 => {
            let n = c.csr.0.len();
            if let Some(p) = c.csr.0.get_mut(at % n) {
                *p = p.wrapping_add(1);
            }
        }
        3 => {
            if !c.csr.1.is_empty() {
                let n = c.csr.1.len();
                c.csr.1[at % n] = u32::arbitrary(u)? % 12;
            }
        }
        4 => {
            if let Some((ref mut mean, _)) = c.centring {
                mean.pop();
            }
        }
        5 => {
            if let Some((_, ref mut scale)) = c.centring {
                if let Some(s) = scale.get_mut(at % c.dim) {
                    *s = if bool::arbitrary(u)? { 0.0 } else { 1e-300 };
                }
            }
        }
        6 => {
            if let Some((ref mut m, _)) = c.kc {
                m.pop();
            }
        }
        7 => {
            if let Some(ref mut d) = c.dense {
                d.pop();
            }
        }
        8 => c.kernel = Kernel::Rbf { gamma: -value(u)?.abs() },
        _ => {}
    }
    Ok(())
}

fn check_view(c: &Case, spec: &ModelSpec<'_>, view: &ModelView<'_>) {
    let round = |x: f64| match c.elem {
        ElementType::F32 => (x as f32) as f64,
        ElementType::F64 => x,
    };
    let same = |a: ranklet_core::format::Array<'_>, want: &[f64], what: &str| {
        assert_eq!(a.len(), want.len(), "{what}: length");
        for (i, (g, &w)) in a.iter().zip(want).enumerate() {
            assert_eq!(g.to_bits(), round(w).to_bits(), "{what}[{i}]: wrote {w:e}, read {g:e}");
        }
    };
    assert_eq!(view.element_type(), c.elem);
    assert_eq!(view.dim(), spec.dim());
    assert_eq!(view.metadata(), c.metadata.as_str());
    assert_eq!(view.producer_version(), c.producer);
    match (&c.centring, view.feature_centring()) {
        (None, None) => {}
        (Some((m, s)), Some((vm, vs))) => {
            same(vm, m, "mean");
            same(vs, s, "scale");
        }
        _ => panic!("feature centring lost or invented"),
    }
    for line in c.metadata.lines() {
        if let Some((k, _)) = line.split_once('=') {
            assert!(view.metadata_get(k).is_some());
        }
    }
    if c.linear {
        let l = view.linear().expect("linear model read back as another kind");
        assert_eq!(l.offset().to_bits(), c.offset.to_bits(), "offset is stored as f64");
        same(l.weights(), &c.w, "weights");
    } else {
        let k = view.kernel().expect("kernel model read back as another kind");
        assert_eq!(k.kernel(), c.kernel);
        assert_eq!(k.offset().to_bits(), c.offset.to_bits());
        same(k.coeffs(), &c.coeffs, "coeffs");
        match (&c.dense, k.basis()) {
            (Some(d), BasisView::Dense(a)) => same(a, d, "dense basis"),
            (None, BasisView::Sparse { row_ptr, indices, values }) => {
                assert!(row_ptr.iter().eq(c.csr.0.iter().copied()));
                assert!(indices.iter().eq(c.csr.1.iter().copied()));
                same(values, &c.csr.2, "sparse values");
            }
            _ => panic!("basis storage changed"),
        }
        match (&c.kc, k.centring()) {
            (None, None) => {}
            (Some((m, g)), Some(kc)) => {
                assert_eq!(kc.grand_mean().to_bits(), g.to_bits());
                same(kc.col_means(), m, "col means");
            }
            _ => panic!("kernel centring lost or invented"),
        }
    }
    // Scoring a round-tripped model: no panic, only overflow as an error.
    let x: Vec<f32> = (0..view.dim()).map(|j| j as f32 * 0.25 - 1.0).collect();
    match view.score_dense(&x) {
        Ok(s) => assert!(s.is_finite()),
        Err(ScoreError::ScoreOverflow) => {}
        Err(e) => panic!("score_dense on a written model: {e:?}"),
    }
    match view.score_dense_f64(&x.iter().map(|&v| v as f64).collect::<Vec<_>>()) {
        Ok(s) => assert!(s.is_finite()),
        Err(ScoreError::ScoreOverflow) => {}
        Err(e) => panic!("score_dense_f64 on a written model: {e:?}"),
    }
}

/// Pair models (kinds 3 and 6) from the case's dimension, kernel, offset
/// and fuzz data: `W` or `A` sometimes made (anti)symmetric, sometimes not;
/// `check` and `emit` agree, a written file reads back with the same
/// parameters, and its pair scores are finite (or overflow) and exactly
/// (anti)symmetric.
fn pair_round_trip(u: &mut Unstructured<'_>, c: &Case) -> arbitrary::Result<()> {
    let pair = match u8::arbitrary(u)? % 3 {
        0 => PairKernel::Kronecker,
        1 => PairKernel::Symmetric,
        _ => PairKernel::Reciprocal,
    };
    let kron = pair == PairKernel::Kronecker;
    let bilinear = bool::arbitrary(u)?;
    let two = kron && bool::arbitrary(u)?;
    let du = c.dim;
    let dv = if two || (kron && bool::arbitrary(u)?) { 1 + usize::from(u8::arbitrary(u)? % 5) } else { du };
    let mu = 1 + usize::from(u8::arbitrary(u)? % 4);
    let mv = if two { 1 + usize::from(u8::arbitrary(u)? % 4) } else { mu };
    let offset = if pair == PairKernel::Reciprocal && bool::arbitrary(u)? { 0.0 } else { c.offset };
    let (r, k) = if bilinear { (du, dv) } else { (mu, mv) };
    let mut m = values(u, r * k)?;
    if !kron && r == k && bool::arbitrary(u)? {
        let sign = if pair == PairKernel::Symmetric { 1.0 } else { -1.0 };
        for i in 0..r {
            for j in i..r {
                let x = if i == j && sign < 0.0 { 0.0 } else { m[i * r + j] };
                m[i * r + j] = x;
                m[j * r + i] = sign * x;
            }
        }
    }
    let bu = values(u, mu * du)?;
    let bv = values(u, mv * dv)?;
    let kv = if bool::arbitrary(u)? { Kernel::Linear } else { Kernel::Rbf { gamma: 0.5 } };
    let model = if bilinear {
        Model::Bilinear(BilinearModel { pair, dim_u: du, dim_v: dv, w: &m, offset })
    } else {
        Model::DualPair(DualPairModel {
            pair,
            u: PairDomain { kernel: c.kernel, dim: du, basis: &bu },
            v: (two || dv != du).then_some(PairDomain { kernel: kv, dim: dv, basis: &bv }),
            coeffs: &m,
            offset,
        })
    };
    let spec = ModelSpec { model, element_type: c.elem, metadata: &c.metadata, producer: c.producer };
    let len = spec.buffer_len();
    let mut buf = vec![0xA5u8; len];
    match (spec.check(), spec.emit(&mut buf)) {
        (Err(e1), Err(e2)) => {
            assert_eq!(e1, e2, "check and emit disagree");
            assert!(buf.iter().all(|&b| b == 0xA5), "emit wrote into the buffer and then failed");
            return Ok(());
        }
        (Ok(()), Ok(n)) => assert_eq!(n, len),
        (a, b) => panic!("check {a:?} but emit {b:?}"),
    }
    let view = ModelView::new_checked(&buf).unwrap_or_else(|e| panic!("emitted pair model rejected: {e:?}"));
    let round = |x: f64| match c.elem {
        ElementType::F32 => (x as f32) as f64,
        ElementType::F64 => x,
    };
    let same = |a: ranklet_core::format::Array<'_>, want: &[f64], what: &str| {
        assert_eq!(a.len(), want.len(), "{what}: length");
        assert!(a.iter().zip(want).all(|(g, &w)| g.to_bits() == round(w).to_bits()), "{what} changed");
    };
    assert_eq!((view.pair_dims(), view.pair_kernel()), (Some((du, dv)), Some(pair)));
    assert_eq!(view.score_dense(&vec![0.0; du]), Err(ScoreError::KindMismatch));
    if bilinear {
        let b = view.bilinear().expect("bilinear model read back as another kind");
        assert_eq!(b.offset().to_bits(), offset.to_bits());
        same(b.w(), &m, "W");
    } else {
        let d = view.dual_pair().expect("dual pair model read back as another kind");
        assert_eq!((d.kernel_u(), d.rows_u(), d.rows_v()), (c.kernel, mu, mv));
        assert_eq!(d.offset().to_bits(), offset.to_bits());
        same(d.coeffs(), &m, "A");
        same(d.basis_u(), &bu, "basis u");
    }
    let mut work = vec![0f32; view.pair_workspace_len()];
    let xu: Vec<f32> = (0..du).map(|j| j as f32 * 0.25 - 1.0).collect();
    let xv: Vec<f32> = (0..dv).map(|j| 0.5 - j as f32 * 0.125).collect();
    match view.score_pair(&xu, &xv, &mut work) {
        Ok(s) => {
            assert!(s.is_finite());
            if !kron {
                let back = view.score_pair(&xv, &xu, &mut work).expect("swapped pair");
                let want = if pair == PairKernel::Symmetric { s } else { -s };
                assert!(back == want, "not exactly (anti)symmetric: {s} vs {back}");
            }
        }
        Err(ScoreError::ScoreOverflow) | Err(ScoreError::UnsupportedKind) => {}
        Err(e) => panic!("score_pair on a written model: {e:?}"),
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(mut c) = case(&mut u) else { return };
    if u8::arbitrary(&mut u).unwrap_or(0) % 4 == 0 {
        let _ = pair_round_trip(&mut u, &c);
        return;
    }
    if corrupt(&mut c, &mut u).is_err() {
        return;
    }
    let fc = c.centring.as_ref().map(|(m, s)| FeatureCentring { mean: m, scale: s });
    let model = if c.linear {
        Model::Linear(LinearModel { w: &c.w, offset: c.offset, centring: fc })
    } else {
        let basis = match &c.dense {
            Some(d) => Basis::Dense(d),
            None => Basis::Sparse { row_ptr: &c.csr.0, indices: &c.csr.1, values: &c.csr.2 },
        };
        Model::Kernel(KernelModel {
            dim: c.dim,
            kernel: c.kernel,
            basis,
            coeffs: &c.coeffs,
            offset: c.offset,
            centring: fc,
            kernel_centring: c.kc.as_ref().map(|(m, g)| KernelCentring { col_means: m, grand_mean: *g }),
        })
    };
    let spec = ModelSpec { model, element_type: c.elem, metadata: &c.metadata, producer: c.producer };

    let len = spec.buffer_len();
    let checked = spec.check();
    let mut buf = vec![0xA5u8; len];
    let emitted = spec.emit(&mut buf);
    match (checked, emitted) {
        (Err(e1), Err(e2)) => {
            assert_eq!(e1, e2, "check and emit disagree");
            assert!(buf.iter().all(|&b| b == 0xA5), "emit wrote into the buffer and then failed");
            return;
        }
        (Ok(()), Ok(n)) => assert_eq!(n, len),
        (a, b) => panic!("check {a:?} but emit {b:?}"),
    }

    // One byte short: BufferTooSmall, nothing written.
    let mut short = vec![0x5Au8; len - 1];
    assert_eq!(spec.emit(&mut short), Err(EmitError::BufferTooSmall { needed: len, got: len - 1 }));
    assert!(short.iter().all(|&b| b == 0x5A));
    // A larger buffer: same bytes, tail untouched.
    let mut long = vec![0x33u8; len + 3];
    assert_eq!(spec.emit(&mut long), Ok(len));
    assert_eq!(&long[..len], &buf[..]);
    assert_eq!(&long[len..], &[0x33; 3]);

    let view = ModelView::new_checked(&buf).unwrap_or_else(|e| panic!("emitted model rejected: {e:?}\n{c:?}"));
    check_view(&c, &spec, &view);
    // Any alignment: the same bytes one byte into a buffer.
    let mut shifted = vec![0u8; len + 1];
    shifted[1..].copy_from_slice(&buf);
    let view1 = ModelView::new_checked(&shifted[1..]).expect("misaligned copy rejected");
    check_view(&c, &spec, &view1);
});
