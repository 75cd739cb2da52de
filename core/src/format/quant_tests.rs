//! Tests of model kind 7 (quantised linear): round trip and integer scores
//! against an `i128` brute force, the quantiser against an independent
//! rounding, the accumulator bound at its exact limit (and one dimension
//! more refused), the error bound of docs/format.md on random models, and
//! every parse and writer error of the kind.

// Index loops mirror the formulas in docs/format.md.
#![allow(clippy::needless_range_loop)]

extern crate std;

use std::vec;
use std::vec::Vec;

use super::crc32::crc32;
use super::field;
use super::kind::quant::{accumulator_fits, layout, max_dim};
use super::*;

fn emit(spec: &ModelSpec<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; spec.buffer_len()];
    let n = spec.emit(&mut buf).unwrap();
    assert_eq!(n, buf.len());
    buf
}

fn fix_crc(bytes: &mut [u8]) {
    let at = bytes.len() - field::CRC_LEN;
    let crc = crc32(&bytes[..at]);
    bytes[at..].copy_from_slice(&crc.to_le_bytes());
}

fn section_offset(b: &[u8], id: u16) -> usize {
    let n = u16::from_le_bytes([b[field::SECTION_COUNT.start], b[field::SECTION_COUNT.start + 1]]) as usize;
    for e in 0..n {
        let at = field::HEADER_LEN + e * field::section::ENTRY_LEN;
        if u16::from_le_bytes([b[at], b[at + 1]]) == id {
            let o = at + field::section::OFFSET.start;
            return u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as usize;
        }
    }
    panic!("no section {id}")
}

struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [-1, 1).
    fn f(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn i16(&mut self) -> i16 {
        self.next_u64() as i16
    }
}

/// The owned arrays of a quantised model.
struct Q {
    width: QuantWidth,
    scale: f64,
    bias: i64,
    a: Vec<f32>,
    z: Vec<f32>,
    w: Vec<i16>,
}

impl Q {
    fn random(rng: &mut Rng, d: usize, width: QuantWidth) -> Q {
        let a = (0..d).map(|_| (0.01 + rng.f().abs()) as f32).collect();
        let z = (0..d).map(|_| (10.0 * rng.f()) as f32).collect();
        let w = (0..d)
            .map(|_| match width {
                QuantWidth::I16 => rng.i16(),
                QuantWidth::I8 => rng.i16() >> 8,
            })
            .collect();
        Q { width, scale: 1e-4, bias: (rng.next_u64() >> 20) as i64 - (1 << 43), a, z, w }
    }
    fn model(&self) -> QuantModel<'_> {
        QuantModel {
            width: self.width,
            scale: self.scale,
            bias: self.bias,
            input_scale: &self.a,
            zero_point: &self.z,
            weights: &self.w,
        }
    }
    fn bytes(&self, meta: &str) -> Vec<u8> {
        emit(&ModelSpec::new(Model::Quant(self.model()), ElementType::F32).with_metadata(meta))
    }
    /// `B + Σ W_j q_j` in i128, the brute force.
    fn exact(&self, q: &[i16]) -> i128 {
        self.bias as i128 + self.w.iter().zip(q).map(|(&w, &q)| w as i128 * q as i128).sum::<i128>()
    }
}

/// The quantiser's reference: the same two `f32` operations, then std's
/// `f64::round` (ties away from zero) and saturation.
fn quantize_reference(x: f32, z: f32, a: f32) -> i16 {
    let t = ((x - z) / a) as f64;
    t.round().clamp(-32768.0, 32767.0) as i16
}

/// The quantised models of the corruption tests and the fuzz seeds.
pub(super) fn sample_quant_files() -> Vec<Vec<u8>> {
    let mut rng = Rng(77);
    vec![
        Q::random(&mut rng, 5, QuantWidth::I16).bytes("quantized=i16\n"),
        Q::random(&mut rng, 3, QuantWidth::I8).bytes(""),
    ]
}

#[test]
fn round_trip_and_integer_scores_against_i128() {
    let mut rng = Rng(1);
    for width in [QuantWidth::I16, QuantWidth::I8] {
        for d in [1usize, 2, 7, 136, 1000] {
            let m = Q::random(&mut rng, d, width);
            let b = m.bytes("k=v\n");
            let v = ModelView::new_checked(&b).unwrap();
            assert_eq!(v.kind(), ModelKind::QuantLinear);
            assert_eq!(v.format_version(), Version { major: 1, minor: 3 });
            assert_eq!(v.min_reader_version(), Version { major: 1, minor: 3 });
            assert_eq!(v.dim(), d);
            let q = v.quant().unwrap();
            assert_eq!((q.width(), q.scale(), q.bias(), q.dim()), (width, m.scale, m.bias, d));
            for j in 0..d {
                assert_eq!(q.weight(j), m.w[j]);
                assert_eq!(q.input_scale(j).to_bits(), m.a[j].to_bits());
                assert_eq!(q.zero_point(j).to_bits(), m.z[j].to_bits());
            }
            assert!(v.linear().is_none() && v.feature_centring().is_none());
            let rows = 5;
            let qs: Vec<i16> = (0..rows * d).map(|_| rng.i16()).collect();
            let mut out = vec![0i64; rows];
            v.score_dense_i16_rows(&qs, &mut out).unwrap();
            for r in 0..rows {
                let row = &qs[r * d..(r + 1) * d];
                let s = v.score_dense_i16(row).unwrap();
                assert_eq!(s as i128, m.exact(row));
                assert_eq!(out[r], s);
            }
            // Float inputs: quantised as the model says, then the same sum.
            let x: Vec<f32> = (0..d).map(|j| m.z[j] + (30000.0 * rng.f()) as f32 * m.a[j]).collect();
            let mut qx = vec![0i16; d];
            v.quantize_dense(&x, &mut qx).unwrap();
            for j in 0..d {
                assert_eq!(qx[j], quantize_reference(x[j], m.z[j], m.a[j]));
            }
            let s = v.score_dense_quant(&x).unwrap();
            assert_eq!(s as i128, m.exact(&qx));
            // The float entry points: c·S.
            let want = m.scale * s as f64;
            assert_eq!(v.score_dense_f64(&x.iter().map(|&v| v as f64).collect::<Vec<_>>()).unwrap(), want);
            assert_eq!(v.score_dense(&x).unwrap(), want as f32);
            // Sparse: the missing features are 0, quantised like any value.
            let mut x0 = x.clone();
            x0[0] = 0.0;
            let idx: Vec<u32> = (1..d as u32).collect();
            assert_eq!(
                v.score_sparse(&idx, &x[1..]).unwrap(),
                (m.scale * v.score_dense_quant(&x0).unwrap() as f64) as f32
            );
        }
    }
}

#[test]
fn quantizer_rounds_ties_away_and_saturates() {
    let cases: &[(f32, f32, f32, i16)] = &[
        (0.0, 0.0, 1.0, 0),
        (0.5, 0.0, 1.0, 1),
        (-0.5, 0.0, 1.0, -1),
        (0.49999997, 0.0, 1.0, 0),
        (1.5, 0.0, 1.0, 2),
        (-2.5, 0.0, 1.0, -3),
        (32766.5, 0.0, 1.0, 32767),
        (32767.0, 0.0, 1.0, 32767),
        (40000.0, 0.0, 1.0, 32767),
        (-32767.5, 0.0, 1.0, -32768),
        (-32768.0, 0.0, 1.0, -32768),
        (-1e30, 0.0, 1.0, -32768),
        (f32::INFINITY, 0.0, 1.0, 32767),
        (f32::NEG_INFINITY, 0.0, 1.0, -32768),
        (f32::MAX, -f32::MAX, 1.0, 32767),
        (3.0, 1.0, 0.5, 4),
        (1.0, 1.0, 1e-30, 0),
        (1.0000001, 1.0, 1e-30, 32767),
    ];
    for &(x, z, a, want) in cases {
        assert_eq!(quantize(x, z, a), want, "quantize({x}, {z}, {a})");
    }
    let mut rng = Rng(3);
    for _ in 0..100_000 {
        let (z, a) = ((100.0 * rng.f()) as f32, (1e-3 + rng.f().abs()) as f32);
        let x = z + (40000.0 * rng.f()) as f32 * a;
        assert_eq!(quantize(x, z, a), quantize_reference(x, z, a), "x={x} z={z} a={a}");
    }
}

/// The accumulator bound at its exact limit: with the bias that leaves room
/// for exactly d extreme products, the extreme inputs and weights reach
/// `i64::MAX` (and near `i64::MIN`) exactly, as an `i128` brute force says;
/// the same bias with one dimension more is refused at parse time.
#[test]
fn quant_bound_exact_at_the_limit() {
    for (width, w_min) in [(QuantWidth::I16, i16::MIN), (QuantWidth::I8, i8::MIN as i16)] {
        let per = width.w_max() as i64 * (1 << 15);
        for d in [1usize, 2, 1000, 4096] {
            for sign in [1i64, -1] {
                let bias = sign * (i64::MAX - d as i64 * per);
                assert_eq!(max_dim(bias, width), d as u128);
                assert!(accumulator_fits(d, bias, width) && !accumulator_fits(d + 1, bias, width));
                let m = Q { width, scale: 1.0, bias, a: vec![1.0; d], z: vec![0.0; d], w: vec![w_min; d] };
                let b = m.bytes("");
                let v = ModelView::new_checked(&b).unwrap();
                // Positive extreme: W = q = −2^15 (products +2^30 or +2^22);
                // negative: q = 32767, the most negative product reachable.
                let q = vec![if sign > 0 { i16::MIN } else { i16::MAX }; d];
                let s = v.score_dense_i16(&q).unwrap();
                assert_eq!(s as i128, m.exact(&q));
                if sign > 0 {
                    assert_eq!(s, i64::MAX);
                }
                // The same through the float quantiser (inputs far out of
                // range saturate to the same q).
                let x = vec![if sign > 0 { -1e9f32 } else { 1e9 }; d];
                assert_eq!(v.score_dense_quant(&x).unwrap(), s);

                // One dimension more with the same bias: the writer refuses,
                // and a file made with a bias that fits, then given this
                // bias (checksum fixed), is refused by the parser.
                let d1 = d + 1;
                let mut m1 = Q { width, scale: 1.0, bias, a: vec![1.0; d1], z: vec![0.0; d1], w: vec![w_min; d1] };
                let spec = ModelSpec::new(Model::Quant(m1.model()), ElementType::F32);
                assert_eq!(spec.check(), Err(EmitError::BadDimensions));
                m1.bias = bias - sign * per;
                let mut b1 = m1.bytes("");
                assert!(ModelView::new_checked(&b1).is_ok());
                let at = section_offset(&b1, section_id::QUANT) + layout::BIAS.start;
                b1[at..at + 8].copy_from_slice(&bias.to_le_bytes());
                fix_crc(&mut b1);
                assert_eq!(ModelView::new_checked(&b1).map(|_| ()), Err(ParseError::BadDimensions));
            }
        }
        // The bias i64::MIN leaves no room at all.
        assert!(!accumulator_fits(1, i64::MIN, width));
        // With |B| ≤ 2^62 every dimension the header can hold passes.
        assert!(accumulator_fits(u32::MAX as usize, 1 << 62, width));
        assert!(accumulator_fits(u32::MAX as usize, -(1 << 62), width));
    }
}

/// The float model `f(x) = b + Σ w_j (x_j − μ_j)/σ_j` in f64.
fn float_score(w: &[f64], b: f64, mean: &[f64], scale: &[f64], x: &[f32]) -> f64 {
    b + (0..w.len()).map(|j| w[j] * (x[j] as f64 - mean[j]) / scale[j]).sum::<f64>()
}

#[test]
fn error_bound_holds_on_random_models_and_orders_are_kept() {
    let mut rng = Rng(11);
    let mut worst = 0.0f64;
    for width in [QuantWidth::I16, QuantWidth::I8] {
        for (case, &d) in [1usize, 3, 11, 136, 500].iter().enumerate() {
            let w: Vec<f64> = (0..d).map(|j| rng.f() * if j % 5 == 0 { 100.0 } else { 1.0 }).collect();
            let mean: Vec<f64> = (0..d).map(|_| rng.f()).collect();
            let scale: Vec<f64> = (0..d).map(|_| 0.1 + rng.f().abs()).collect();
            let b = 3.0 * rng.f();
            // Ranges of every sort: around 0, far from 0, narrow, constant.
            let (mut lo, mut hi) = (vec![0f32; d], vec![0f32; d]);
            for j in 0..d {
                let (c, r) = match j % 4 {
                    0 => (0.0, 1.0),
                    1 => (1000.0 * rng.f(), 0.01 + rng.f().abs()),
                    2 => (1.0, 0.003),
                    _ => (5.0 * rng.f(), if case % 2 == 0 { 0.0 } else { 2.0 }),
                };
                lo[j] = (c - r) as f32;
                hi[j] = (c + r) as f32;
            }
            let centring = Some(FeatureCentring { mean: &mean, scale: &scale });
            let (mut a, mut z, mut wq) = (vec![0f32; d], vec![0f32; d], vec![0i16; d]);
            let qz = quantize_linear(
                &w,
                b,
                centring,
                (&lo, &hi),
                width,
                QuantArrays { input_scale: &mut a, zero_point: &mut z, weights: &mut wq },
            )
            .unwrap();
            let model =
                QuantModel { width, scale: qz.scale, bias: qz.bias, input_scale: &a, zero_point: &z, weights: &wq };
            let bytes = emit(&ModelSpec::new(Model::Quant(model), ElementType::F32));
            let v = ModelView::new_checked(&bytes).unwrap();
            let q = v.quant().unwrap();
            let e = qz.error_bound;
            assert!(q.error_bound() >= e, "file bound {} < exact bound {e}", q.error_bound());
            for j in 0..d {
                // The calibrated range covers [lo, hi].
                let (l, h) = q.range(j);
                assert!(l <= lo[j] as f64 && h >= hi[j] as f64, "feature {j}: [{l}, {h}] vs [{}, {}]", lo[j], hi[j]);
            }
            let mut scored = Vec::new();
            for _ in 0..200 {
                // In range, including the ends.
                let x: Vec<f32> = (0..d)
                    .map(|j| match rng.next_u64() % 8 {
                        0 => lo[j],
                        1 => hi[j],
                        _ => (lo[j] as f64 + (hi[j] as f64 - lo[j] as f64) * (rng.f() + 1.0) / 2.0) as f32,
                    })
                    .collect();
                let f = float_score(&w, b, &mean, &scale, &x);
                let s = v.score_dense_quant(&x).unwrap();
                let err = (qz.scale * s as f64 - f).abs();
                assert!(err <= e, "{width:?} d={d}: |c·S − f| = {err:e} > E = {e:e}");
                worst = worst.max(err / e);
                scored.push((f, s));
            }
            for p in &scored {
                for r in &scored {
                    if p.0 - r.0 > 2.0 * e {
                        assert!(p.1 > r.1, "order lost: f {} > {} + 2E but S {} <= {}", p.0, r.0, p.1, r.1);
                    }
                }
            }
            // Out of range: saturation, and the error grows by |v_j| per
            // unit beyond the range, as documented.
            let x: Vec<f32> = (0..d).map(|j| hi[j] + 10.0).collect();
            let f = float_score(&w, b, &mean, &scale, &x);
            let extra: f64 = (0..d).map(|j| (w[j] / scale[j]).abs() * (x[j] as f64 - q.range(j).1).max(0.0)).sum();
            let err = (qz.scale * v.score_dense_quant(&x).unwrap() as f64 - f).abs();
            assert!(err <= e + extra * (1.0 + 1e-12), "saturated: {err:e} > {e:e} + {extra:e}");
        }
    }
    std::eprintln!("quantised scores: worst error {worst:.3} of the bound E");
}

#[test]
fn parse_errors_of_the_kind() {
    let mut rng = Rng(21);
    let m = Q::random(&mut rng, 4, QuantWidth::I16);
    let good = m.bytes("");
    let sec = section_offset(&good, section_id::QUANT);
    let check = |f: &dyn Fn(&mut Vec<u8>), want: ParseError| {
        let mut b = good.clone();
        f(&mut b);
        fix_crc(&mut b);
        assert_eq!(ModelView::new_checked(&b).map(|_| ()), Err(want));
    };
    let id = section_id::QUANT;
    check(&|b| b[field::ELEMENT_TYPE] = 2, ParseError::BadElementType { code: 2 });
    check(&|b| b[sec + layout::WIDTH] = 3, ParseError::BadSection { id });
    check(&|b| b[sec + layout::WIDTH] = 0, ParseError::BadSection { id });
    // i8 width with the length of i16 weights
    check(&|b| b[sec + layout::WIDTH] = 1, ParseError::BadSection { id });
    check(&|b| b[sec + layout::RESERVED.start + 3] = 1, ParseError::BadSection { id });
    check(&|b| b[sec..sec + 8].copy_from_slice(&0.0f64.to_le_bytes()), ParseError::BadScale);
    check(&|b| b[sec..sec + 8].copy_from_slice(&(-1.0f64).to_le_bytes()), ParseError::BadScale);
    check(&|b| b[sec..sec + 8].copy_from_slice(&f64::NAN.to_le_bytes()), ParseError::NonFinite);
    check(&|b| b[sec..sec + 8].copy_from_slice(&f64::INFINITY.to_le_bytes()), ParseError::NonFinite);
    let a1 = sec + layout::LEN + 4;
    let z2 = sec + layout::LEN + 16 + 8;
    check(&|b| b[a1..a1 + 4].copy_from_slice(&0.0f32.to_le_bytes()), ParseError::BadScale);
    check(&|b| b[a1..a1 + 4].copy_from_slice(&(-0.5f32).to_le_bytes()), ParseError::BadScale);
    check(&|b| b[a1..a1 + 4].copy_from_slice(&f32::NAN.to_le_bytes()), ParseError::NonFinite);
    check(&|b| b[z2..z2 + 4].copy_from_slice(&f32::INFINITY.to_le_bytes()), ParseError::NonFinite);
    // An older version than the kind's.
    check(
        &|b| {
            b[field::FORMAT_MINOR] = 2;
            b[field::MIN_READER_MINOR] = 2;
        },
        ParseError::BadHeader,
    );
    // The dimension of the header does not match the section.
    check(&|b| b[field::DIM.start] = 5, ParseError::BadSection { id });
    // A feature-centring section is refused (centring is folded in).
    let lin_c = emit(&ModelSpec::new(
        Model::Linear(LinearModel {
            w: &[1.0; 4],
            offset: 0.0,
            centring: Some(FeatureCentring { mean: &[0.0; 4], scale: &[1.0; 4] }),
        }),
        ElementType::F32,
    ));
    // Graft: the linear file's kind byte and LINEAR section id become the
    // quantised kind's — its own section is then the wrong length, so
    // check FEATURE_CENTRING is refused first, before the QUANT section.
    let mut b = lin_c.clone();
    b[field::KIND] = ModelKind::QuantLinear.code();
    b[field::FORMAT_MINOR] = 3;
    b[field::MIN_READER_MINOR] = 3;
    fix_crc(&mut b);
    assert_eq!(ModelView::new_checked(&b).map(|_| ()), Err(ParseError::BadSection { id: section_id::LINEAR }));
    let e1 = field::HEADER_LEN + field::section::ENTRY_LEN;
    b[e1..e1 + 2].copy_from_slice(&section_id::QUANT.to_le_bytes());
    fix_crc(&mut b);
    assert_eq!(
        ModelView::new_checked(&b).map(|_| ()),
        Err(ParseError::BadSection { id: section_id::FEATURE_CENTRING })
    );
    // Missing QUANT section: the only section renamed to an unknown
    // optional one (skipped).
    let mut b = good.clone();
    b[field::HEADER_LEN..field::HEADER_LEN + 2].copy_from_slice(&99u16.to_le_bytes());
    b[field::HEADER_LEN + 2] = 0;
    fix_crc(&mut b);
    assert_eq!(ModelView::new_checked(&b).map(|_| ()), Err(ParseError::MissingSection { id: section_id::QUANT }));
}

#[test]
fn writer_errors_of_the_kind() {
    let (a, z, w) = ([1.0f32; 3], [0.0f32; 3], [1i16, -2, 3]);
    let ok = QuantModel { width: QuantWidth::I16, scale: 0.5, bias: 0, input_scale: &a, zero_point: &z, weights: &w };
    let check = |m: QuantModel<'_>, et: ElementType, want: EmitError| {
        assert_eq!(ModelSpec::new(Model::Quant(m), et).check(), Err(want));
        let mut buf = [0xAAu8; 256];
        assert_eq!(ModelSpec::new(Model::Quant(m), et).emit(&mut buf), Err(want));
        assert!(buf.iter().all(|&b| b == 0xAA), "nothing written on error");
    };
    assert!(ModelSpec::new(Model::Quant(ok), ElementType::F32).check().is_ok());
    check(ok, ElementType::F64, EmitError::BadDimensions);
    check(QuantModel { weights: &w[..2], ..ok }, ElementType::F32, EmitError::BadDimensions);
    check(QuantModel { zero_point: &z[..2], ..ok }, ElementType::F32, EmitError::BadDimensions);
    check(
        QuantModel { input_scale: &[], zero_point: &[], weights: &[], ..ok },
        ElementType::F32,
        EmitError::BadDimensions,
    );
    check(QuantModel { scale: 0.0, ..ok }, ElementType::F32, EmitError::BadScale);
    check(QuantModel { scale: f64::NAN, ..ok }, ElementType::F32, EmitError::NonFinite);
    check(QuantModel { input_scale: &[1.0, 0.0, 1.0], ..ok }, ElementType::F32, EmitError::BadScale);
    check(QuantModel { zero_point: &[0.0, f32::NAN, 0.0], ..ok }, ElementType::F32, EmitError::NonFinite);
    check(QuantModel { width: QuantWidth::I8, weights: &[1, 128, 0], ..ok }, ElementType::F32, EmitError::BadQuant);
    check(QuantModel { width: QuantWidth::I8, weights: &[1, -129, 0], ..ok }, ElementType::F32, EmitError::BadQuant);
    check(QuantModel { bias: i64::MIN, ..ok }, ElementType::F32, EmitError::BadDimensions);
    assert!(ModelSpec::new(
        Model::Quant(QuantModel { width: QuantWidth::I8, weights: &[127, -128, 0], ..ok }),
        ElementType::F32
    )
    .check()
    .is_ok());

    // quantize_linear: bad ranges and lengths, nothing written.
    let (mut qa, mut qz, mut qw) = ([7.0f32; 3], [7.0f32; 3], [7i16; 3]);
    let wf = [1.0, 2.0, 3.0];
    let (lo, hi) = ([0.0f32; 3], [1.0f32; 3]);
    let mut run = |w: &[f64], lo: &[f32], hi: &[f32]| {
        let r = quantize_linear(
            w,
            0.0,
            None,
            (lo, hi),
            QuantWidth::I16,
            QuantArrays { input_scale: &mut qa, zero_point: &mut qz, weights: &mut qw },
        );
        assert!(qa == [7.0; 3] && qz == [7.0; 3] && qw == [7; 3], "written on error");
        r
    };
    assert_eq!(run(&wf, &[0.0, 2.0, 0.0], &hi).map(|_| ()), Err(EmitError::NonFinite));
    assert_eq!(run(&wf, &[0.0, f32::NAN, 0.0], &hi).map(|_| ()), Err(EmitError::NonFinite));
    assert_eq!(run(&[1.0, f64::INFINITY, 0.0], &lo, &hi).map(|_| ()), Err(EmitError::NonFinite));
    assert_eq!(run(&wf[..2], &lo, &hi).map(|_| ()), Err(EmitError::BadDimensions));
    assert_eq!(run(&wf, &lo[..2], &hi).map(|_| ()), Err(EmitError::BadDimensions));
    // All-zero weights: c = 1, W = 0, and the model still writes.
    let zq = quantize_linear(
        &[0.0; 3],
        2.0,
        None,
        (&lo, &hi),
        QuantWidth::I16,
        QuantArrays { input_scale: &mut qa, zero_point: &mut qz, weights: &mut qw },
    )
    .unwrap();
    assert_eq!((zq.scale, zq.bias, qw), (1.0, 2, [0; 3]));
}

#[test]
fn scoring_errors_of_the_kind() {
    let mut rng = Rng(31);
    let m = Q::random(&mut rng, 3, QuantWidth::I16);
    let b = m.bytes("");
    let v = ModelView::new_checked(&b).unwrap();
    assert_eq!(v.score_dense_i16(&[1, 2]), Err(ScoreError::DimensionMismatch { expected: 3, got: 2 }));
    assert_eq!(v.score_dense_quant(&[1.0, f32::NAN, 0.0]), Err(ScoreError::NonFiniteInput));
    assert_eq!(v.score_dense_quant(&[1.0, f32::INFINITY, 0.0]), Err(ScoreError::NonFiniteInput));
    assert_eq!(v.score_dense(&[1.0, f32::INFINITY, 0.0]), Err(ScoreError::NonFiniteInput));
    let mut out = [5i16; 3];
    assert_eq!(v.quantize_dense(&[1.0, 2.0], &mut out), Err(ScoreError::DimensionMismatch { expected: 3, got: 2 }));
    assert_eq!(v.quantize_dense(&[1.0, f32::NAN, 2.0], &mut out), Err(ScoreError::NonFiniteInput));
    assert_eq!(out, [5; 3]);
    let mut rows = [9i64; 2];
    assert!(v.score_dense_i16_rows(&[0; 5], &mut rows).is_err());
    assert_eq!(rows, [9; 2]);
    // Integer entry points refuse other kinds.
    let lin = emit(&ModelSpec::new(
        Model::Linear(LinearModel { w: &[1.0; 3], offset: 0.0, centring: None }),
        ElementType::F32,
    ));
    let lv = ModelView::new_checked(&lin).unwrap();
    assert!(lv.quant().is_none());
    assert_eq!(lv.score_dense_i16(&[1, 2, 3]), Err(ScoreError::KindMismatch));
    assert_eq!(lv.score_dense_quant(&[1.0; 3]), Err(ScoreError::KindMismatch));
    assert_eq!(lv.quantize_dense(&[1.0; 3], &mut out), Err(ScoreError::KindMismatch));
}

/// `widen_range`: about the midpoint by `2^bits`, never inside the given
/// range, finite; a constant feature by the half-width `quantize_linear`
/// gives it; `bits = 0`, `lo > hi` and NaN unchanged. Then a model
/// calibrated on the widened range: `saturates` exactly beyond
/// `z ± 32767.5·a` (as `quantize` clips), and `saturated_inputs` of dense
/// and sparse rows (absent features are 0) against a count by hand.
#[test]
fn headroom_widens_ranges_and_saturation_is_counted() {
    assert_eq!(widen_range(-1.0, 3.0, 0), (-1.0, 3.0));
    assert_eq!(widen_range(-1.0, 3.0, 4), (1.0 - 32.0, 1.0 + 32.0));
    assert_eq!(widen_range(0.0, 0.25, 2), (0.125 - 0.5, 0.125 + 0.5));
    assert_eq!(widen_range(5.0, 5.0, 3), (5.0 - 20.0, 5.0 + 20.0));
    assert_eq!(widen_range(0.0, 0.0, 1), (-1.0, 1.0));
    assert_eq!(widen_range(2.0, 1.0, 4), (2.0, 1.0));
    assert!(widen_range(f32::NAN, 1.0, 4).0.is_nan());
    assert_eq!(widen_range(-f32::MAX, f32::MAX, 4), (-f32::MAX, f32::MAX));
    let (l, h) = widen_range(0.1, 0.3, 5);
    assert!(l <= 0.1 && h >= 0.3 && ((h as f64 - l as f64) / (0.3f32 as f64 - 0.1f32 as f64) - 32.0).abs() < 1e-6);

    // Three features calibrated on [0, 1], [−2, 2] and [10, 10] (constant),
    // widened by 2¹.
    let (lo, hi): (Vec<f32>, Vec<f32>) =
        [(0.0f32, 1.0f32), (-2.0, 2.0), (10.0, 10.0)].iter().map(|&(l, h)| widen_range(l, h, 1)).unzip();
    let (mut a, mut z, mut w) = ([0f32; 3], [0f32; 3], [0i16; 3]);
    let q = quantize_linear(
        &[1.0, -1.0, 0.5],
        0.0,
        None,
        (&lo, &hi),
        QuantWidth::I16,
        QuantArrays { input_scale: &mut a, zero_point: &mut z, weights: &mut w },
    )
    .unwrap();
    let model = QuantModel {
        width: QuantWidth::I16,
        scale: q.scale,
        bias: q.bias,
        input_scale: &a,
        zero_point: &z,
        weights: &w,
    };
    let b = emit(&ModelSpec::new(Model::Quant(model), ElementType::F32));
    let v = ModelView::new_checked(&b).unwrap().quant().unwrap();
    for j in 0..3 {
        let (rl, rh) = v.range(j);
        assert!(rl <= lo[j] as f64 && rh >= hi[j] as f64, "feature {j}");
        // Inside the range and up to half a step beyond: not saturated;
        // beyond q = 32767.5 or q = −32768.5 (i16's asymmetric ends):
        // saturated, and quantize clips it.
        let step = a[j] as f64;
        for (x, sat) in [
            (rl, false),
            (rh, false),
            (rh + 0.4 * step, false),
            (rl - 0.4 * step, false),
            (rh + step, true),
            (rl - 1.6 * step, true),
        ] {
            let x = x as f32;
            let t = (x - z[j]) / a[j];
            assert_eq!(v.saturates(j, x), sat, "feature {j}, x = {x}, t = {t}");
            if sat {
                assert!(matches!(quantize(x, z[j], a[j]), i16::MIN | i16::MAX));
            }
        }
        assert!(v.saturates(j, f32::NAN));
    }
    // Ranges: [−0.5, 1.5], [−4, 4], [0, 20] (the constant feature's
    // half-width max(10, 1)/2 = 5, doubled).
    assert!(!v.saturates(2, 0.0) && v.saturates(2, -1.0) && v.saturates(2, 21.0));
    assert_eq!(v.saturated_inputs([(0, 2.0f32), (1, 0.0), (2, 25.0)]), 2);
    assert_eq!(v.saturated_inputs([(0, 0.5f32), (1, -3.0), (2, 10.0)]), 0);
    // Sparse: absent features are 0, in range for all three.
    assert_eq!(v.saturated_inputs([(1, 9.0f32)]), 1);
    assert_eq!(v.saturated_inputs(core::iter::empty()), 0);
    // Features ≥ d are ignored.
    assert_eq!(v.saturated_inputs([(7, 1e9f32)]), 0);
}
