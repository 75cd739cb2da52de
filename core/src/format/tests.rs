//! Tests of the model format: byte-exact fixture, round trips, scoring
//! against a direct f64 computation, corruption and truncation, versions,
//! unknown sections, writer errors, and a never-panic property test.

// Index loops mirror the formulas in docs/format.md.
#![allow(clippy::needless_range_loop)]

extern crate std;

use std::vec;
use std::vec::Vec;

use super::crc32::crc32;
use super::field;
use super::*;
use crate::MatRef as PrefMatRef;

/// The worked example of `docs/format.md`, also committed as a fixture.
const FIXTURE_HEX: &str = include_str!("../../tests/fixtures/format/linear_tiny_f32.hex");
const SPEC_MD: &str = include_str!("../../../docs/format.md");

fn parse_hex(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.lines() {
        let data = line.split('#').next().unwrap_or("");
        for tok in data.split_whitespace() {
            out.push(u8::from_str_radix(tok, 16).expect("hex byte"));
        }
    }
    out
}

fn tiny_spec() -> ModelSpec<'static> {
    const W: [f64; 3] = [0.5, -1.0, 2.0];
    let mut spec = ModelSpec::new(Model::Linear(LinearModel { w: &W, offset: 0.25, centring: None }), ElementType::F32)
        .with_metadata("algorithm=rankrls\n");
    spec.producer = [0, 1, 0];
    spec
}

fn emit(spec: &ModelSpec<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; spec.buffer_len()];
    let n = spec.emit(&mut buf).expect("emit");
    assert_eq!(n, buf.len());
    buf
}

fn fix_crc(bytes: &mut [u8]) {
    let at = bytes.len() - field::CRC_LEN;
    let crc = crc32(&bytes[..at]);
    bytes[at..].copy_from_slice(&crc.to_le_bytes());
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
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
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    #[cfg_attr(not(feature = "kernel"), allow(dead_code))] // used by the kernel-scoring tests only
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

fn round(v: f64, et: ElementType) -> f64 {
    match et {
        ElementType::F32 => v as f32 as f64,
        ElementType::F64 => v,
    }
}

/// Owned parameters of a kernel model, for building specs in tests.
struct KernelData {
    dim: usize,
    kernel: Kernel,
    dense: Vec<f64>,
    row_ptr: Vec<u32>,
    indices: Vec<u32>,
    values: Vec<f64>,
    coeffs: Vec<f64>,
    offset: f64,
    mean: Vec<f64>,
    scale: Vec<f64>,
    col_means: Vec<f64>,
    grand_mean: f64,
}

impl KernelData {
    fn random(rng: &mut Rng, m: usize, dim: usize, kernel: Kernel, density: f64) -> Self {
        let mut dense = vec![0.0; m * dim];
        let (mut row_ptr, mut indices, mut values) = (vec![0u32], Vec::new(), Vec::new());
        for i in 0..m {
            for j in 0..dim {
                if (rng.f() + 1.0) / 2.0 < density {
                    let v = rng.f();
                    dense[i * dim + j] = v;
                    indices.push(j as u32);
                    values.push(v);
                }
            }
            row_ptr.push(indices.len() as u32);
        }
        KernelData {
            dim,
            kernel,
            dense,
            row_ptr,
            indices,
            values,
            coeffs: (0..m).map(|_| rng.f()).collect(),
            offset: rng.f(),
            mean: (0..dim).map(|_| 0.1 * rng.f()).collect(),
            scale: (0..dim).map(|_| 0.5 + (rng.f() + 1.0)).collect(),
            col_means: (0..m).map(|_| rng.f()).collect(),
            grand_mean: rng.f(),
        }
    }

    fn model(&self, sparse: bool, centring: bool, kcentring: bool) -> KernelModel<'_> {
        KernelModel {
            dim: self.dim,
            kernel: self.kernel,
            basis: if sparse {
                Basis::Sparse { row_ptr: &self.row_ptr, indices: &self.indices, values: &self.values }
            } else {
                Basis::Dense(&self.dense)
            },
            coeffs: &self.coeffs,
            offset: self.offset,
            centring: centring.then_some(FeatureCentring { mean: &self.mean, scale: &self.scale }),
            kernel_centring: kcentring
                .then_some(KernelCentring { col_means: &self.col_means, grand_mean: self.grand_mean }),
        }
    }

    /// Direct f64 evaluation of the model with parameters rounded to `et`,
    /// as written in docs/format.md.
    #[cfg_attr(not(feature = "kernel"), allow(dead_code))] // used by the kernel-scoring tests only
    fn reference(&self, x: &[f64], et: ElementType, centring: bool, kcentring: bool) -> f64 {
        let m = self.coeffs.len();
        let xc: Vec<f64> = (0..self.dim)
            .map(|j| if centring { (x[j] - round(self.mean[j], et)) / round(self.scale[j], et) } else { x[j] })
            .collect();
        let k: Vec<f64> = (0..m)
            .map(|i| {
                let row = &self.dense[i * self.dim..(i + 1) * self.dim];
                let dot: f64 = row.iter().zip(&xc).map(|(&b, &x)| round(b, et) * x).sum();
                let dist: f64 = row.iter().zip(&xc).map(|(&b, &x)| (x - round(b, et)).powi(2)).sum();
                match self.kernel {
                    Kernel::Linear => dot,
                    Kernel::Rbf { gamma } => (-gamma * dist).exp(),
                    Kernel::Polynomial { gamma, coef0, degree } => (gamma * dot + coef0).powi(degree as i32),
                }
            })
            .collect();
        let kmean = k.iter().sum::<f64>() / m as f64;
        let mut s = self.offset;
        for i in 0..m {
            let kt = if kcentring { k[i] - kmean - round(self.col_means[i], et) + self.grand_mean } else { k[i] };
            s += round(self.coeffs[i], et) * kt;
        }
        s
    }

    /// The condition scale of [`Self::reference`]'s sum, times the kernel's
    /// amplification, as in the accuracy bound of `score.rs`.
    #[cfg_attr(not(feature = "kernel"), allow(dead_code))] // used by the kernel-scoring tests only
    fn scale(&self, x: &[f64], et: ElementType, centring: bool, kcentring: bool) -> f64 {
        let m = self.coeffs.len();
        let xc: Vec<f64> = (0..self.dim)
            .map(|j| if centring { (x[j] - round(self.mean[j], et)) / round(self.scale[j], et) } else { x[j] })
            .collect();
        let mut maxdist = 0.0f64;
        let k: Vec<f64> = (0..m)
            .map(|i| {
                let row = &self.dense[i * self.dim..(i + 1) * self.dim];
                let dot: f64 = row.iter().zip(&xc).map(|(&b, &x)| round(b, et) * x).sum();
                let dist: f64 = row.iter().zip(&xc).map(|(&b, &x)| (x - round(b, et)).powi(2)).sum();
                maxdist = maxdist.max(dist);
                match self.kernel {
                    Kernel::Linear => dot,
                    Kernel::Rbf { gamma } => (-gamma * dist).exp(),
                    Kernel::Polynomial { gamma, coef0, degree } => (gamma * dot + coef0).powi(degree as i32),
                }
            })
            .collect();
        let kmean = k.iter().sum::<f64>() / m as f64;
        let amp = match self.kernel {
            Kernel::Linear => 1.0,
            Kernel::Rbf { gamma } => 1.0 + gamma * maxdist,
            Kernel::Polynomial { degree, .. } => degree as f64,
        };
        let mut sc = self.offset.abs();
        for i in 0..m {
            let c = if kcentring { self.col_means[i].abs() + kmean.abs() + self.grand_mean.abs() } else { 0.0 };
            sc += self.coeffs[i].abs() * (k[i].abs() + c);
        }
        amp * sc
    }
}

/// Error of an `f32` score against the f64 reference, as a fraction of the
/// condition scale of the sum (the bound stated in `score.rs`, "Accuracy
/// bound"): with cancelling terms a relative-to-the-result error would
/// measure the cancellation, not the scoring.
fn scaled_err(got: f64, want: f64, scale: f64) -> f64 {
    (got - want).abs() / scale.max(1e-300)
}

fn rel_err(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs().max(1e-300)
}

// ---------------------------------------------------------------- fixture

#[test]
fn fixture_emit_is_byte_exact() {
    let bytes = emit(&tiny_spec());
    let want = parse_hex(FIXTURE_HEX);
    assert_eq!(bytes, want, "emitted:\n{}", hex_dump(&bytes));
}

#[test]
fn fixture_parses_and_scores() {
    let bytes = parse_hex(FIXTURE_HEX);
    let v = ModelView::new_checked(&bytes).unwrap();
    assert_eq!(v.format_version(), Version { major: 1, minor: 0 });
    assert_eq!(v.min_reader_version(), Version { major: 1, minor: 0 });
    assert_eq!(v.producer_version(), [0, 1, 0]);
    assert_eq!(v.kind(), ModelKind::Linear);
    assert_eq!(v.element_type(), ElementType::F32);
    assert_eq!(v.dim(), 3);
    assert_eq!(v.metadata(), "algorithm=rankrls\n");
    assert_eq!(v.metadata_get("algorithm"), Some("rankrls"));
    assert_eq!(v.metadata_get("lambda"), None);
    let l = v.linear().unwrap();
    assert_eq!(l.offset(), 0.25);
    assert_eq!(l.weights().iter().collect::<Vec<_>>(), [0.5, -1.0, 2.0]);
    assert!(v.kernel().is_none());
    assert!(v.feature_centring().is_none());
    // 0.25 + 0.5·1 − 1·2 + 2·3 = 4.75 (the worked example in docs/format.md)
    assert_eq!(v.score_dense(&[1.0, 2.0, 3.0]), Ok(4.75));
    assert_eq!(v.score_sparse(&[0, 2], &[1.0, 3.0]), Ok(6.75));
    assert_eq!(v.into_inner(), &bytes[..]);
}

#[test]
fn parser_accepts_any_alignment() {
    let bytes = emit(&tiny_spec());
    let mut shifted = vec![0u8; bytes.len() + 8];
    for shift in 0..8 {
        shifted[shift..shift + bytes.len()].copy_from_slice(&bytes);
        let v = ModelView::new_checked(&shifted[shift..shift + bytes.len()]).unwrap();
        assert_eq!(v.score_dense(&[1.0, 2.0, 3.0]), Ok(4.75));
    }
}

fn hex_dump(b: &[u8]) -> std::string::String {
    use std::fmt::Write;
    let mut s = std::string::String::new();
    for (i, chunk) in b.chunks(16).enumerate() {
        let _ = write!(s, "{:04x}:", i * 16);
        for x in chunk {
            let _ = write!(s, " {x:02x}");
        }
        s.push('\n');
    }
    s
}

#[test]
fn spec_tables_match_field_constants() {
    let render = |fields: &[(&str, field::Field, &str, &str)]| {
        for (name, r, ty, _) in fields {
            let row = std::format!("| {}..{} | `{}` | {} |", r.start, r.end, name, ty);
            assert!(SPEC_MD.contains(&row), "docs/format.md lacks the row `{row}`");
        }
    };
    render(field::HEADER_FIELDS);
    render(field::section::FIELDS);
    render(field::kernel::FIELDS);
    render(field::online::FIELDS);
    render(field::bilinear::FIELDS);
    render(field::pair_dual::FIELDS);
    render(field::quant::FIELDS);
    render(field::pref_gp::FIELDS);
    render(field::pref_kernel::FIELDS);
    render(field::pref_lowrank::FIELDS);
    render(crate::format::stats::field::FIELDS);
    assert_eq!(field::HEADER_LEN, 28);
    assert!(SPEC_MD.contains(FIXTURE_HEX.trim()), "docs/format.md must show the fixture hex verbatim");
}

// ------------------------------------------------------------ round trips

#[test]
fn linear_round_trip_all_variants() {
    let mut rng = Rng(0x1234_5678);
    for &et in &[ElementType::F32, ElementType::F64] {
        for centring in [false, true] {
            let d = 17;
            let w: Vec<f64> = (0..d).map(|_| rng.f()).collect();
            let mean: Vec<f64> = (0..d).map(|_| rng.f()).collect();
            let scale: Vec<f64> = (0..d).map(|_| 0.5 + rng.f().abs()).collect();
            let offset = rng.f();
            let spec = ModelSpec::new(
                Model::Linear(LinearModel {
                    w: &w,
                    offset,
                    centring: centring.then_some(FeatureCentring { mean: &mean, scale: &scale }),
                }),
                et,
            )
            .with_metadata("algorithm=rankrls\nlambda=0.5\ncv=0.91,0.93\n");
            let bytes = emit(&spec);
            let v = ModelView::new_checked(&bytes).unwrap();
            assert_eq!(v.element_type(), et);
            assert_eq!(v.dim(), d);
            assert_eq!(v.producer_version(), CRATE_VERSION);
            assert_eq!(v.metadata_get("lambda"), Some("0.5"));
            let l = v.linear().unwrap();
            assert_eq!(l.offset(), offset);
            for (a, b) in l.weights().iter().zip(&w) {
                assert_eq!(a, round(*b, et));
            }
            assert_eq!(v.feature_centring().is_some(), centring);
            for _ in 0..20 {
                let x: Vec<f64> = (0..d).map(|_| rng.f() * 3.0).collect();
                let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                let xw: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
                let term = |x: &[f64], j: usize| {
                    let xc = if centring { (x[j] - round(mean[j], et)) / round(scale[j], et) } else { x[j] };
                    round(w[j], et) * xc
                };
                let reference = |x: &[f64]| offset + (0..d).map(|j| term(x, j)).sum::<f64>();
                let cond = |x: &[f64]| offset.abs() + (0..d).map(|j| term(x, j).abs()).sum::<f64>();
                let r64 = reference(&x);
                assert!(rel_err(v.score_dense_f64(&x).unwrap(), r64) <= 1e-12);
                let r32 = reference(&xw);
                assert!(scaled_err(v.score_dense(&x32).unwrap() as f64, r32, cond(&xw)) <= 1e-5);
                // sparse input: every other feature
                let idx: Vec<u32> = (0..d as u32).step_by(2).collect();
                let vals: Vec<f32> = idx.iter().map(|&j| x32[j as usize]).collect();
                let mut xs = vec![0.0; d];
                for (&j, &val) in idx.iter().zip(&vals) {
                    xs[j as usize] = val as f64;
                }
                assert!(scaled_err(v.score_sparse(&idx, &vals).unwrap() as f64, reference(&xs), cond(&xs)) <= 1e-5);
            }
        }
    }
}

#[cfg_attr(not(feature = "kernel"), allow(dead_code))] // used by the kernel-scoring tests only
fn kernels() -> [Kernel; 4] {
    [
        Kernel::Linear,
        Kernel::Rbf { gamma: 0.3 },
        Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 },
        Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 1 },
    ]
}

#[test]
#[cfg(feature = "kernel")] // scores kernel expansions
fn kernel_round_trip_and_scores_all_variants() {
    let mut rng = Rng(0xDEAD_BEEF);
    let mut checked = 0;
    for kernel in kernels() {
        let data = KernelData::random(&mut rng, 7, 11, kernel, 0.4);
        for &et in &[ElementType::F32, ElementType::F64] {
            for sparse in [false, true] {
                for centring in [false, true] {
                    for kc in [false, true] {
                        let spec = ModelSpec::new(Model::Kernel(data.model(sparse, centring, kc)), et);
                        let bytes = emit(&spec);
                        let v = ModelView::new_checked(&bytes).unwrap();
                        assert_eq!(v.kind(), ModelKind::KernelExpansion);
                        let k = v.kernel().unwrap();
                        assert_eq!(k.kernel(), kernel);
                        assert_eq!(k.rows(), 7);
                        assert_eq!(k.offset(), data.offset);
                        assert_eq!(k.centring().is_some(), kc);
                        match (k.basis(), sparse) {
                            (BasisView::Dense(a), false) => assert_eq!(a.len(), 7 * 11),
                            (BasisView::Sparse { row_ptr, indices, values }, true) => {
                                assert_eq!(row_ptr.iter().collect::<Vec<_>>(), data.row_ptr);
                                assert_eq!(indices.iter().collect::<Vec<_>>(), data.indices);
                                assert_eq!(values.len(), data.values.len());
                            }
                            _ => panic!("wrong basis storage"),
                        }
                        let tol = match et {
                            ElementType::F32 => 1e-6,
                            ElementType::F64 => 1e-12,
                        };
                        for _ in 0..10 {
                            let x32: Vec<f32> = (0..11).map(|_| rng.f() as f32).collect();
                            let x: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
                            let want = data.reference(&x, et, centring, kc);
                            let got64 = v.score_dense_f64(&x).unwrap();
                            assert!(rel_err(got64, want) <= tol, "{kernel:?} {et:?} {sparse} {centring} {kc}");
                            let got32 = v.score_dense(&x32).unwrap() as f64;
                            let sc = data.scale(&x, et, centring, kc);
                            assert!(scaled_err(got32, want, sc) <= 1e-5, "{kernel:?} {et:?} {sparse} {centring} {kc}");
                            // the same input, sparse
                            let idx: Vec<u32> = (0..11u32).filter(|&j| j % 3 != 1).collect();
                            let vals: Vec<f32> = idx.iter().map(|&j| x32[j as usize]).collect();
                            let mut xs = vec![0.0; 11];
                            for (&j, &val) in idx.iter().zip(&vals) {
                                xs[j as usize] = val as f64;
                            }
                            let want_s = data.reference(&xs, et, centring, kc);
                            let got_s = v.score_sparse(&idx, &vals).unwrap() as f64;
                            let sc_s = data.scale(&xs, et, centring, kc);
                            assert!(
                                scaled_err(got_s, want_s, sc_s) <= 1e-5,
                                "{kernel:?} {et:?} {sparse} {centring} {kc}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(checked, 4 * 2 * 2 * 2 * 2 * 10);
}

#[test]
#[cfg(feature = "kernel")] // scores kernel expansions
fn f32_model_close_to_f64_parameters() {
    // Against the *unrounded* parameters the f32 model is within 1e-5 of
    // the f64 score, relative to Σ|a_i·k_i| + |offset| (cancellation-aware).
    let mut rng = Rng(42);
    for kernel in kernels() {
        let data = KernelData::random(&mut rng, 9, 13, kernel, 0.5);
        let spec = ModelSpec::new(Model::Kernel(data.model(false, false, false)), ElementType::F32);
        let bytes = emit(&spec);
        let v = ModelView::new_checked(&bytes).unwrap();
        for _ in 0..10 {
            let x32: Vec<f32> = (0..13).map(|_| rng.f() as f32).collect();
            let x: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
            let want = data.reference(&x, ElementType::F64, false, false);
            let scale = data.offset.abs() + data.coeffs.iter().map(|a| a.abs()).sum::<f64>() * 10.0;
            assert!((v.score_dense(&x32).unwrap() as f64 - want).abs() <= 1e-5 * scale);
        }
    }
}

#[test]
#[cfg(feature = "kernel")] // scores kernel expansions
fn rows_entry_points_match_single_rows() {
    let mut rng = Rng(7);
    let data = KernelData::random(&mut rng, 5, 6, Kernel::Rbf { gamma: 0.7 }, 0.5);
    let spec = ModelSpec::new(Model::Kernel(data.model(true, true, true)), ElementType::F32);
    let bytes = emit(&spec);
    let v = ModelView::new_checked(&bytes).unwrap();
    let x: Vec<f32> = (0..4 * 6).map(|_| rng.f() as f32).collect();
    let mut out = [0f32; 4];
    v.score_dense_rows(&x, &mut out).unwrap();
    for r in 0..4 {
        assert_eq!(out[r], v.score_dense(&x[r * 6..(r + 1) * 6]).unwrap());
    }
    let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let mut out64 = [0f64; 4];
    v.score_dense_rows_f64(&x64, &mut out64).unwrap();
    assert_eq!(out64[1], v.score_dense_f64(&x64[6..12]).unwrap());
    // sparse rows: row 0 = {1: 0.5}, row 1 = {}, row 2 = {0: 1, 5: -2}
    let mut out3 = [0f32; 3];
    v.score_sparse_rows(&[0, 1, 1, 3], &[1, 0, 5], &[0.5, 1.0, -2.0], &mut out3).unwrap();
    assert_eq!(out3[0], v.score_sparse(&[1], &[0.5]).unwrap());
    assert_eq!(out3[1], v.score_sparse(&[], &[]).unwrap());
    assert_eq!(out3[2], v.score_sparse(&[0, 5], &[1.0, -2.0]).unwrap());
    let mut untouched = [9f32; 3];
    assert!(v.score_sparse_rows(&[0, 1, 1, 3], &[1, 5, 0], &[0.5, 1.0, -2.0], &mut untouched).is_err());
    assert_eq!(untouched, [9.0; 3]);
    assert!(v.score_dense_rows(&x[..23], &mut out).is_err());
}

#[test]
#[cfg(feature = "kernel")] // scores kernel expansions
fn wide_sparse_basis_195097_features() {
    // 100 training rows over 195 097 features, ~50 non-zeros each: the
    // sparse file stays small where a dense one would be 78 MB.
    let (m, d) = (100usize, 195_097usize);
    let mut rng = Rng(99);
    let (mut row_ptr, mut indices, mut values) = (vec![0u32], Vec::new(), Vec::new());
    for _ in 0..m {
        let mut row: Vec<u32> = (0..50).map(|_| rng.below(d) as u32).collect();
        row.sort_unstable();
        row.dedup();
        for j in row {
            indices.push(j);
            values.push(rng.f());
        }
        row_ptr.push(indices.len() as u32);
    }
    let coeffs: Vec<f64> = (0..m).map(|_| rng.f()).collect();
    let model = KernelModel {
        dim: d,
        kernel: Kernel::Rbf { gamma: 0.1 },
        basis: Basis::Sparse { row_ptr: &row_ptr, indices: &indices, values: &values },
        coeffs: &coeffs,
        offset: 0.0,
        centring: None,
        kernel_centring: None,
    };
    let bytes = emit(&ModelSpec::new(Model::Kernel(model), ElementType::F32));
    assert!(bytes.len() < 100 * 50 * 8 + 2000, "{}", bytes.len());
    let v = ModelView::new_checked(&bytes).unwrap();
    // scoring a basis row itself: its own RBF term is exactly 1
    let (s, e) = (row_ptr[3] as usize, row_ptr[4] as usize);
    let xv: Vec<f32> = values[s..e].iter().map(|&v| v as f32).collect();
    let got = v.score_sparse(&indices[s..e], &xv).unwrap() as f64;
    let mut want = 0.0;
    for i in 0..m {
        let (a, b) = (row_ptr[i] as usize, row_ptr[i + 1] as usize);
        let mut dense_x = std::collections::BTreeMap::new();
        for k in s..e {
            dense_x.insert(indices[k], (values[k] as f32) as f64);
        }
        let mut dist = 0.0;
        let mut seen = std::collections::BTreeSet::new();
        for k in a..b {
            let xj = dense_x.get(&indices[k]).copied().unwrap_or(0.0);
            dist += (xj - (values[k] as f32) as f64).powi(2);
            seen.insert(indices[k]);
        }
        for (j, xj) in &dense_x {
            if !seen.contains(j) {
                dist += xj * xj;
            }
        }
        want += (coeffs[i] as f32) as f64 * (-0.1 * dist).exp();
    }
    assert!(rel_err(got, want) <= 1e-6, "{got} {want}");
    // A feature past the model's dimension (as in the parse-rank test
    // file): every basis row is 0 there, so each squared distance is
    // ‖b_i‖² + 1.
    let got = v.score_sparse(&[195_097], &[1.0]).unwrap() as f64;
    let want: f64 = (0..m)
        .map(|i| {
            let (a, b) = (row_ptr[i] as usize, row_ptr[i + 1] as usize);
            let n2: f64 = values[a..b].iter().map(|&v| ((v as f32) as f64).powi(2)).sum();
            (coeffs[i] as f32) as f64 * (-0.1 * (n2 + 1.0)).exp()
        })
        .sum();
    assert!(rel_err(got, want) <= 1e-5, "{got} {want}");
}

/// A model over `d` features scores a sparse row with features `>= d`
/// (its tail) as the same model over `d + extra` features (zero-padded
/// weights and basis rows, identity centring there) scores the whole row:
/// for every kernel, dense and sparse bases, with and without feature and
/// kernel centring, through the `f64` entry point (to 1e-12 of the scale)
/// and the `f32` one (1e-5).
#[test]
#[cfg(feature = "kernel")] // scores kernel expansions
fn features_past_dim_score_as_a_wider_model() {
    let (m, d, extra) = (6usize, 5usize, 4usize);
    let mut rng = Rng(2024);
    let kernels =
        [Kernel::Linear, Kernel::Rbf { gamma: 0.3 }, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 }];
    let dense: Vec<f64> = (0..m * d).map(|t| if t % 4 == 1 { 0.0 } else { rng.f() }).collect();
    let pad = |x: &[f64], rows: usize, fill: f64| -> Vec<f64> {
        (0..rows).flat_map(|i| x[i * d..(i + 1) * d].iter().copied().chain(core::iter::repeat_n(fill, extra))).collect()
    };
    let dense_wide = pad(&dense, m, 0.0);
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
    let col_means: Vec<f64> = (0..m).map(|_| 0.4 * rng.f()).collect();
    let mean: Vec<f64> = (0..d).map(|_| 0.2 * rng.f()).collect();
    let scale: Vec<f64> = (0..d).map(|_| 0.5 + rng.f().abs()).collect();
    let (mean_wide, scale_wide) = (pad(&mean, 1, 0.0), pad(&scale, 1, 1.0));
    let w: Vec<f64> = (0..d).map(|_| rng.f()).collect();
    let w_wide = pad(&w, 1, 0.0);
    // rows with a head and a tail, a tail only, and a head only
    let rows: [(&[u32], &[f64]); 3] =
        [(&[0, 2, 4, 5, 8], &[0.5, -1.25, 2.0, 0.75, -1.5]), (&[6, 7], &[1.0, 2.5]), (&[1, 3], &[-0.5, 0.25])];
    let mut checked = 0;
    for et in [ElementType::F32, ElementType::F64] {
        for feature_centring in [false, true] {
            let fc = |wide: bool| {
                feature_centring.then(|| {
                    if wide {
                        FeatureCentring { mean: &mean_wide, scale: &scale_wide }
                    } else {
                        FeatureCentring { mean: &mean, scale: &scale }
                    }
                })
            };
            let mut pairs = vec![(
                emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 0.5, centring: fc(false) }), et)),
                emit(&ModelSpec::new(Model::Linear(LinearModel { w: &w_wide, offset: 0.5, centring: fc(true) }), et)),
            )];
            for kernel in kernels {
                for sparse in [false, true] {
                    for kc in [false, true] {
                        let model = |wide: bool| {
                            let basis = match (sparse, wide) {
                                (true, _) => Basis::Sparse { row_ptr: &row_ptr, indices: &indices, values: &values },
                                (false, false) => Basis::Dense(&dense),
                                (false, true) => Basis::Dense(&dense_wide),
                            };
                            let k = KernelModel {
                                dim: if wide { d + extra } else { d },
                                kernel,
                                basis,
                                coeffs: &coeffs,
                                offset: -0.25,
                                centring: fc(wide),
                                kernel_centring: kc
                                    .then_some(KernelCentring { col_means: &col_means, grand_mean: 0.125 }),
                            };
                            emit(&ModelSpec::new(Model::Kernel(k), et))
                        };
                        pairs.push((model(false), model(true)));
                    }
                }
            }
            for (narrow, wide) in &pairs {
                let (vn, vw) = (ModelView::new_checked(narrow).unwrap(), ModelView::new_checked(wide).unwrap());
                assert_eq!((vn.dim(), vw.dim()), (d, d + extra));
                for (idx, val) in rows {
                    let (a, b) = (vn.score_sparse_f64(idx, val).unwrap(), vw.score_sparse_f64(idx, val).unwrap());
                    assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{et:?} {a} {b}");
                    let v32: Vec<f32> = val.iter().map(|&v| v as f32).collect();
                    let (a, b) = (vn.score_sparse(idx, &v32).unwrap(), vw.score_sparse(idx, &v32).unwrap());
                    assert!((a - b).abs() <= 1e-5 * b.abs().max(1.0), "{et:?} {a} {b}");
                    checked += 1;
                }
                // the f32 batch entry point too
                let mut out = [0f32; 2];
                vn.score_sparse_rows(
                    &[0, 5, 7],
                    &[0, 2, 4, 5, 8, 6, 7],
                    &[0.5, -1.25, 2.0, 0.75, -1.5, 1.0, 2.5],
                    &mut out,
                )
                .unwrap();
                assert_eq!(out[0], vn.score_sparse(rows[0].0, &[0.5, -1.25, 2.0, 0.75, -1.5]).unwrap());
                assert_eq!(out[1], vn.score_sparse(rows[1].0, &[1.0, 2.5]).unwrap());
                assert_eq!(vn.score_sparse_f64(&[6, 6], &[1.0, 1.0]), Err(ScoreError::BadInputIndex));
            }
        }
    }
    assert_eq!(checked, 2 * 2 * (1 + 3 * 2 * 2) * 3);
}

#[test]
fn linear_d136_f32_size() {
    let w = [0.125f64; 136];
    let bare = ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 0.0, centring: None }), ElementType::F32);
    let short = bare.with_metadata("algorithm=rankrls\n");
    let longer = bare.with_metadata("algorithm=rankrls\nlambda=0.5\n");
    std::println!(
        "linear d=136 f32: {} bytes bare, {} with 18 B metadata, {} with 29 B metadata",
        bare.buffer_len(),
        short.buffer_len(),
        longer.buffer_len()
    );
    assert_eq!(bare.buffer_len(), 28 + 12 + 8 + 136 * 4 + 4);
    assert!(short.buffer_len() <= 640);
}

// ------------------------------------------------- corruption, truncation

fn sample_files() -> Vec<Vec<u8>> {
    let mut rng = Rng(5);
    let a = KernelData::random(&mut rng, 3, 4, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 2 }, 0.5);
    let b = KernelData::random(&mut rng, 3, 5, Kernel::Rbf { gamma: 1.5 }, 0.6);
    let w = [1.0, -2.0, 0.5, 0.25];
    let (mean, scale) = ([0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 4.0, 8.0]);
    let dual_a = DualData::random(&mut rng, PairKernel::Kronecker, true, Kernel::Rbf { gamma: 0.5 }, Kernel::Linear);
    let dual_b = DualData::random(
        &mut rng,
        PairKernel::Reciprocal,
        false,
        Kernel::Polynomial { gamma: 1.0, coef0: 0.5, degree: 2 },
        Kernel::Linear,
    );
    let lin = ModelSpec::new(
        Model::Linear(LinearModel {
            w: &w,
            offset: -1.0,
            centring: Some(FeatureCentring { mean: &mean, scale: &scale }),
        }),
        ElementType::F64,
    )
    .with_metadata("k=v\n");
    vec![
        emit(&tiny_spec()),
        emit(&lin),
        emit(&ModelSpec::new(Model::Kernel(a.model(false, true, true)), ElementType::F32).with_metadata("x=1")),
        emit(&ModelSpec::new(Model::Kernel(b.model(true, false, true)), ElementType::F64)),
        emit(&online_spec(ElementType::F32)),
        emit(&online_spec(ElementType::F64).with_metadata("prior=abc\n")),
        emit(&bilinear_spec(PairKernel::Symmetric, 2, 2, &[1.0, -0.5, -0.5, 2.0], 0.25)),
        emit(&ModelSpec::new(
            Model::Bilinear(BilinearModel {
                pair: PairKernel::Reciprocal,
                dim_u: 2,
                dim_v: 2,
                w: &[0.0, 1.5, -1.5, 0.0],
                offset: 0.0,
            }),
            ElementType::F64,
        )),
        emit(&ModelSpec::new(Model::DualPair(dual_a.model()), ElementType::F32).with_metadata("pair=kron\n")),
        emit(&ModelSpec::new(Model::DualPair(dual_b.model()), ElementType::F64)),
        emit(&pref_gp_spec(ElementType::F32, PREF_NAMES)),
        emit(&pref_gp_spec(ElementType::F64, "").with_metadata("sigma=0.5\n")),
        emit(&pref_inductive_spec(ElementType::F32)),
        emit(&pref_inductive_spec(ElementType::F64)),
        emit(&pref_lowrank_spec(ElementType::F32, PREF_NAMES)),
        emit(&pref_lowrank_spec(ElementType::F64, "")),
    ]
    .into_iter()
    .chain(super::quant_tests::sample_quant_files())
    .collect()
}

#[test]
fn every_single_byte_corruption_is_rejected() {
    for file in sample_files() {
        assert!(ModelView::new_checked(&file).is_ok());
        let mut bad = file.clone();
        for i in 0..file.len() {
            for pattern in 1..=255u8 {
                bad[i] = file[i] ^ pattern;
                assert!(ModelView::new_checked(&bad).is_err(), "byte {i} ^ {pattern:#04x} accepted");
                bad[i] = file[i];
            }
        }
    }
}

#[test]
fn every_truncation_and_extension_is_rejected() {
    for file in sample_files() {
        for n in 0..file.len() {
            assert!(ModelView::new_checked(&file[..n]).is_err(), "prefix of {n} bytes accepted");
        }
        let mut longer = file.clone();
        longer.push(0);
        assert!(matches!(ModelView::new_checked(&longer), Err(ParseError::TrailingBytes { .. })));
    }
}

#[test]
fn specific_errors() {
    let good = emit(&tiny_spec());
    let check = |f: &dyn Fn(&mut Vec<u8>), want: ParseError| {
        let mut b = good.clone();
        f(&mut b);
        fix_crc(&mut b);
        assert_eq!(ModelView::new_checked(&b).map(|_| ()), Err(want));
    };
    assert_eq!(ModelView::new_checked(&good[..10]).map(|_| ()), Err(ParseError::TooShort { len: 10 }));
    check(&|b| b[0] = b'X', ParseError::BadMagic);
    check(
        &|b| b[field::FORMAT_MAJOR] = 2,
        ParseError::UnsupportedVersion { found: Version { major: 2, minor: 0 }, supported: FORMAT_VERSION },
    );
    check(
        &|b| b[field::FORMAT_MAJOR] = 0,
        ParseError::UnsupportedVersion { found: Version { major: 0, minor: 0 }, supported: FORMAT_VERSION },
    );
    check(
        &|b| {
            b[field::FORMAT_MINOR] = FORMAT_VERSION.minor + 1;
            b[field::MIN_READER_MINOR] = FORMAT_VERSION.minor + 1;
        },
        ParseError::ReaderTooOld {
            required: Version { major: 1, minor: FORMAT_VERSION.minor + 1 },
            supported: FORMAT_VERSION,
        },
    );
    // a 1.7 file readable by 1.0 readers is accepted
    let mut b = good.clone();
    b[field::FORMAT_MINOR] = 7;
    fix_crc(&mut b);
    assert_eq!(ModelView::new_checked(&b).unwrap().format_version(), Version { major: 1, minor: 7 });
    check(&|b| b[field::KIND] = 11, ParseError::BadKind { code: 11 });
    check(&|b| b[field::KIND] = KIND_RESERVED_GP, ParseError::BadKind { code: 4 });
    check(&|b| b[field::ELEMENT_TYPE] = 3, ParseError::BadElementType { code: 3 });
    check(&|b| b[field::RESERVED.start] = 1, ParseError::BadHeader);
    check(&|b| b[field::DIM.start] = 0, ParseError::BadDimensions);
    check(&|b| b[field::DIM.start] = 4, ParseError::BadSection { id: section_id::LINEAR });
    check(&|b| b[field::SECTION_COUNT.start] = 40, ParseError::BadSectionTable);
    let mut b = good.clone();
    let n = b.len();
    b[n - 1] ^= 0x80;
    assert!(matches!(ModelView::new_checked(&b), Err(ParseError::BadChecksum { .. })));

    // Section table of the fixture: entry 0 = META, entry 1 = LINEAR.
    let e0 = field::HEADER_LEN;
    let e1 = e0 + field::section::ENTRY_LEN;
    // unknown optional section: skipped (the metadata disappears)
    let mut b = good.clone();
    b[e0 + field::section::ID.start] = 99;
    fix_crc(&mut b);
    let v = ModelView::new_checked(&b).unwrap();
    assert_eq!(v.metadata(), "");
    assert_eq!(v.score_dense(&[1.0, 2.0, 3.0]), Ok(4.75));
    check(
        &|b| {
            b[e0 + field::section::ID.start] = 99;
            b[e0 + field::section::FLAGS.start] = 1;
        },
        ParseError::UnknownRequiredSection { id: 99 },
    );
    check(&|b| b[e0 + field::section::FLAGS.start] = 1, ParseError::BadSection { id: section_id::META });
    check(&|b| b[e1 + field::section::FLAGS.start] = 0, ParseError::BadSection { id: section_id::LINEAR });
    check(&|b| b[e1 + field::section::FLAGS.start] = 3, ParseError::BadSection { id: section_id::LINEAR });
    check(&|b| b[e0 + field::section::ID.start] = 3, ParseError::BadSection { id: section_id::LINEAR });
    check(&|b| b[e1 + field::section::ID.start] = 1, ParseError::BadSection { id: section_id::META });
    check(&|b| b[e1 + field::section::ID.start] = 4, ParseError::BadSection { id: section_id::KERNEL });
    check(
        &|b| {
            b[e1 + field::section::ID.start] = 99;
            b[e1 + field::section::FLAGS.start] = 0;
        },
        ParseError::MissingSection { id: section_id::LINEAR },
    );
    check(&|b| b[e1 + field::section::OFFSET.start] = 0, ParseError::BadSectionTable);
    check(&|b| b[e1 + field::section::LEN.start] = 0xF0, ParseError::BadSectionTable);
    // metadata: invalid UTF-8
    let meta_at = good.windows(9).position(|w| w == b"algorithm").unwrap();
    check(&|b| b[meta_at] = 0xFF, ParseError::BadMetadata);
    // a NaN weight
    let lin_at = u32::from_le_bytes(good[e1 + 4..e1 + 8].try_into().unwrap()) as usize;
    check(&|b| b[lin_at + 8..lin_at + 12].copy_from_slice(&f32::NAN.to_le_bytes()), ParseError::NonFinite);
    check(&|b| b[lin_at..lin_at + 8].copy_from_slice(&f64::INFINITY.to_le_bytes()), ParseError::NonFinite);
}

#[test]
fn kernel_section_errors() {
    let mut rng = Rng(11);
    let data = KernelData::random(&mut rng, 3, 4, Kernel::Rbf { gamma: 1.0 }, 0.7);
    let good = emit(&ModelSpec::new(Model::Kernel(data.model(true, false, false)), ElementType::F32));
    let entry = |b: &[u8], id: u16| -> usize {
        let n = u16::from_le_bytes([b[24], b[25]]) as usize;
        (0..n)
            .map(|e| field::HEADER_LEN + e * 12)
            .find(|&at| u16::from_le_bytes([b[at], b[at + 1]]) == id)
            .map(|at| u32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap()) as usize)
            .unwrap()
    };
    let ks = entry(&good, section_id::KERNEL);
    let bs = entry(&good, section_id::BASIS_SPARSE);
    let check = |f: &dyn Fn(&mut Vec<u8>), want: ParseError| {
        let mut b = good.clone();
        f(&mut b);
        fix_crc(&mut b);
        assert_eq!(ModelView::new_checked(&b).map(|_| ()), Err(want));
    };
    check(&|b| b[ks + field::kernel::GAMMA.start..][..8].copy_from_slice(&0.0f64.to_le_bytes()), ParseError::BadKernel);
    check(
        &|b| b[ks + field::kernel::GAMMA.start..][..8].copy_from_slice(&(-1.0f64).to_le_bytes()),
        ParseError::BadKernel,
    );
    check(&|b| b[ks + field::kernel::COEF0.start..][..8].copy_from_slice(&1.0f64.to_le_bytes()), ParseError::BadKernel);
    check(&|b| b[ks + field::kernel::DEGREE] = 2, ParseError::BadKernel);
    check(&|b| b[ks + field::kernel::KERNEL] = 9, ParseError::BadKernel);
    check(&|b| b[ks + field::kernel::STORAGE] = 1, ParseError::BadSection { id: section_id::BASIS_SPARSE });
    check(&|b| b[ks + field::kernel::STORAGE] = 7, ParseError::BadSection { id: section_id::KERNEL });
    check(&|b| b[ks + field::kernel::ROWS.start] = 0, ParseError::BadDimensions);
    check(&|b| b[ks + field::kernel::ROWS.start] = 4, ParseError::BadSection { id: section_id::COEFFS });
    // row_ptr[0] != 0
    check(&|b| b[bs] = 1, ParseError::BadSparseIndex);
    // first column index out of range (d = 4)
    let nnz_rows = 4 * 4;
    check(&|b| b[bs + nnz_rows] = 4, ParseError::BadSparseIndex);
    // polynomial degree 0 is rejected by the writer
    let spec = ModelSpec::new(
        Model::Kernel(KernelModel {
            kernel: Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 0 },
            ..data.model(true, false, false)
        }),
        ElementType::F32,
    );
    assert_eq!(spec.check(), Err(EmitError::BadKernel));
}

/// The format holds the trainer's kernel domain: a polynomial kernel with
/// γ ≤ 0 or c < 0 (which an older reader accepted) is refused at parse time.
#[test]
fn kernel_outside_the_trainers_domain_is_rejected_at_parse_time() {
    let mut rng = Rng(12);
    let poly = Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 2 };
    let data = KernelData::random(&mut rng, 3, 4, poly, 0.7);
    let good = emit(&ModelSpec::new(Model::Kernel(data.model(false, false, false)), ElementType::F64));
    ModelView::new_checked(&good).unwrap();
    let n = u16::from_le_bytes([good[24], good[25]]) as usize;
    let ks = (0..n)
        .map(|e| field::HEADER_LEN + e * 12)
        .find(|&at| u16::from_le_bytes([good[at], good[at + 1]]) == section_id::KERNEL)
        .map(|at| u32::from_le_bytes(good[at + 4..at + 8].try_into().unwrap()) as usize)
        .unwrap();
    for (at, v) in [
        (field::kernel::GAMMA.start, -0.5f64),
        (field::kernel::GAMMA.start, 0.0),
        (field::kernel::COEF0.start, -1.0),
        (field::kernel::COEF0.start, f64::NEG_INFINITY),
    ] {
        let mut b = good.clone();
        b[ks + at..][..8].copy_from_slice(&v.to_le_bytes());
        fix_crc(&mut b);
        assert_eq!(ModelView::new_checked(&b).map(|_| ()), Err(ParseError::BadKernel), "field at {at} = {v}");
    }
    // and the writer refuses to produce such a file in the first place
    for kernel in [
        Kernel::Polynomial { gamma: -0.5, coef0: 1.0, degree: 2 },
        Kernel::Polynomial { gamma: 0.5, coef0: -1.0, degree: 2 },
    ] {
        let spec =
            ModelSpec::new(Model::Kernel(KernelModel { kernel, ..data.model(false, false, false) }), ElementType::F64);
        assert_eq!(spec.check(), Err(EmitError::BadKernel));
    }
}

#[test]
fn unsorted_sparse_basis_row_is_rejected() {
    let (row_ptr, indices, values) = ([0u32, 2], [2u32, 1], [1.0, 2.0]);
    let coeffs = [1.0];
    let spec = |indices: &'static [u32]| KernelModel {
        dim: 3,
        kernel: Kernel::Linear,
        basis: Basis::Sparse { row_ptr: &[0, 2], indices, values: &[1.0, 2.0] },
        coeffs: &[1.0],
        offset: 0.0,
        centring: None,
        kernel_centring: None,
    };
    let _ = (row_ptr, indices, values, coeffs);
    let good = emit(&ModelSpec::new(Model::Kernel(spec(&[1, 2])), ElementType::F32));
    for bad_idx in [&[2u32, 1][..], &[1, 1], &[1, 3]] {
        assert_eq!(
            ModelSpec::new(Model::Kernel(spec(bad_idx)), ElementType::F32).check(),
            Err(EmitError::BadSparseIndex)
        );
        // same bytes written by hand: the parser rejects them too
        let mut b = good.clone();
        let pos = b.windows(8).position(|w| w == [1, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        b[pos] = bad_idx[0] as u8;
        b[pos + 4] = bad_idx[1] as u8;
        fix_crc(&mut b);
        assert_eq!(ModelView::new_checked(&b).map(|_| ()), Err(ParseError::BadSparseIndex));
    }
}

// --------------------------------------------------- online RankRLS state

/// A valid online state, d = 3, λ = 2 (diagonal of L above √2).
const ONLINE_W: [f32; 3] = [0.5, -1.0, 2.0];
const ONLINE_B: [f64; 3] = [1.0, -2.0, 4.5];
const ONLINE_W0: [f64; 3] = [0.25, 0.0, 1.0];
const ONLINE_C: [f32; 3] = [1e-8, 0.0, -3e-9];
const ONLINE_L: [f32; 6] = [1.5, 0.3, 1.6, -0.2, 0.1, 1.45];

fn online_spec(et: ElementType) -> ModelSpec<'static> {
    ModelSpec::new(
        Model::Online(OnlineModel {
            lambda: 2.0,
            count: (1 << 40) + 7,
            prior_id: 0xDEAD_BEEF,
            offset: -0.75,
            w: Values::F32(&ONLINE_W),
            b: Values::F64(&ONLINE_B),
            b_comp: Values::F32(&ONLINE_C),
            w0: Values::F64(&ONLINE_W0),
            l_packed: Values::F32(&ONLINE_L),
        }),
        et,
    )
}

#[test]
fn online_state_round_trip_and_scores_as_linear() {
    for et in [ElementType::F32, ElementType::F64] {
        let bytes = emit(&online_spec(et));
        let v = ModelView::new_checked(&bytes).unwrap();
        assert_eq!(v.kind(), ModelKind::OnlineRankRls);
        assert_eq!(v.format_version(), Version { major: 1, minor: 1 });
        assert_eq!(v.min_reader_version(), Version { major: 1, minor: 1 });
        assert_eq!(v.dim(), 3);
        assert!(v.linear().is_none() && v.kernel().is_none());
        let o = v.online().unwrap();
        assert_eq!((o.lambda(), o.count(), o.prior_id(), o.offset()), (2.0, (1 << 40) + 7, 0xDEAD_BEEF, -0.75));
        let all = |a: Array<'_>| a.iter().collect::<Vec<f64>>();
        let widen = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
        assert_eq!(all(o.weights()), widen(&ONLINE_W));
        assert_eq!(all(o.rhs()), ONLINE_B.iter().map(|&x| round(x, et)).collect::<Vec<_>>());
        assert_eq!(all(o.prior()), ONLINE_W0.to_vec());
        assert_eq!(all(o.rhs_compensation()), widen(&ONLINE_C));
        assert_eq!(all(o.factor_packed()), widen(&ONLINE_L));
        // -0.75 + 0.5·1 − 1·2 + 2·3 = 3.75, exact in both types.
        assert_eq!(v.score_dense(&[1.0, 2.0, 3.0]), Ok(3.75));
        assert_eq!(v.score_dense_f64(&[1.0, 2.0, 3.0]), Ok(3.75));
        assert_eq!(v.score_sparse(&[2], &[1.0]), Ok(1.25));
    }
}

#[test]
fn online_state_errors() {
    let good = emit(&online_spec(ElementType::F32));
    let sec_at = |b: &[u8]| {
        // The ONLINE_STATE section is the only one: first table entry.
        let e = field::HEADER_LEN + field::section::OFFSET.start;
        u32::from_le_bytes(b[e..e + 4].try_into().unwrap()) as usize
    };
    let id = section_id::ONLINE_STATE;
    let with = |f: &dyn Fn(&mut Vec<u8>, usize)| {
        let mut b = good.clone();
        let at = sec_at(&b);
        f(&mut b, at);
        fix_crc(&mut b);
        ModelView::new_checked(&b).map(|_| ())
    };
    let lam = field::online::LAMBDA.start;
    assert_eq!(
        with(&|b, at| b[at + lam..at + lam + 8].copy_from_slice(&0.0f64.to_le_bytes())),
        Err(ParseError::BadSection { id })
    );
    assert_eq!(
        with(&|b, at| b[at + lam..at + lam + 8].copy_from_slice(&(-1.0f64).to_le_bytes())),
        Err(ParseError::BadSection { id })
    );
    assert_eq!(
        with(&|b, at| b[at + lam..at + lam + 8].copy_from_slice(&f64::NAN.to_le_bytes())),
        Err(ParseError::NonFinite)
    );
    assert_eq!(with(&|b, at| b[at + field::online::RESERVED.start] = 1), Err(ParseError::BadSection { id }));
    // λ = 4 puts the floor 0.999·2 above L's diagonal (1.5, 1.6, 1.45).
    assert_eq!(
        with(&|b, at| b[at + lam..at + lam + 8].copy_from_slice(&4.0f64.to_le_bytes())),
        Err(ParseError::BadSection { id })
    );
    // A non-finite factor entry.
    let l0 = field::online::LEN + 4 * 3 * 4;
    assert_eq!(
        with(&|b, at| b[at + l0..at + l0 + 4].copy_from_slice(&f32::INFINITY.to_le_bytes())),
        Err(ParseError::NonFinite)
    );
    // A file claiming format 1.0 cannot hold a kind of 1.1.
    assert_eq!(
        with(&|b, _| {
            b[field::FORMAT_MINOR] = 0;
            b[field::MIN_READER_MINOR] = 0;
        }),
        Err(ParseError::BadHeader)
    );
    // The writer refuses what the parser would.
    let spec = |lambda: f64, l: &'static [f32], w: &'static [f32]| {
        ModelSpec::new(
            Model::Online(OnlineModel {
                lambda,
                count: 0,
                prior_id: 0,
                offset: 0.0,
                w: Values::F32(w),
                b: Values::F32(w),
                b_comp: Values::F32(w),
                w0: Values::F32(w),
                l_packed: Values::F32(l),
            }),
            ElementType::F32,
        )
        .check()
    };
    assert_eq!(spec(2.0, &ONLINE_L, &ONLINE_W), Ok(()));
    assert_eq!(spec(0.0, &ONLINE_L, &ONLINE_W), Err(EmitError::BadState));
    assert_eq!(spec(4.0, &ONLINE_L, &ONLINE_W), Err(EmitError::BadState));
    assert_eq!(spec(2.0, &ONLINE_L[..5], &ONLINE_W), Err(EmitError::BadDimensions));
    assert_eq!(spec(2.0, &[], &[]), Err(EmitError::BadDimensions));
    assert_eq!(spec(2.0, &[1.5, 0.3, f32::NAN, -0.2, 0.1, 1.45], &ONLINE_W), Err(EmitError::NonFinite));
}

// ------------------------------------------------------------- the writer

#[test]
fn writer_errors() {
    let w = [1.0, 2.0];
    let lin = |w: &'static [f64], et| ModelSpec::new(Model::Linear(LinearModel { w, offset: 0.0, centring: None }), et);
    let spec = lin(&[1.0, 2.0], ElementType::F32);
    let mut small = vec![0xAAu8; spec.buffer_len() - 1];
    assert_eq!(spec.emit(&mut small), Err(EmitError::BufferTooSmall { needed: spec.buffer_len(), got: small.len() }));
    assert!(small.iter().all(|&b| b == 0xAA), "nothing written on error");
    let mut big = vec![0xAAu8; spec.buffer_len() + 5];
    assert_eq!(spec.emit(&mut big), Ok(spec.buffer_len()));
    assert!(big[spec.buffer_len()..].iter().all(|&b| b == 0xAA));
    assert_eq!(lin(&[], ElementType::F32).check(), Err(EmitError::BadDimensions));
    assert_eq!(lin(&[f64::NAN], ElementType::F64).check(), Err(EmitError::NonFinite));
    assert_eq!(lin(&[f64::INFINITY], ElementType::F64).check(), Err(EmitError::NonFinite));
    assert_eq!(lin(&[1e39], ElementType::F32).check(), Err(EmitError::NonFinite));
    assert_eq!(lin(&[1e39], ElementType::F64).check(), Ok(()));
    let mut buf = vec![0xAAu8; 256];
    assert_eq!(lin(&[1e39], ElementType::F32).emit(&mut buf), Err(EmitError::NonFinite));
    assert!(buf.iter().all(|&b| b == 0xAA), "nothing written on error");
    let c = |mean: &'static [f64], scale: &'static [f64], et| {
        ModelSpec::new(
            Model::Linear(LinearModel { w: &[1.0, 2.0], offset: 0.0, centring: Some(FeatureCentring { mean, scale }) }),
            et,
        )
        .check()
    };
    assert_eq!(c(&[0.0], &[1.0, 1.0], ElementType::F32), Err(EmitError::BadDimensions));
    assert_eq!(c(&[0.0, 0.0], &[1.0, 0.0], ElementType::F32), Err(EmitError::BadScale));
    assert_eq!(c(&[0.0, 0.0], &[1.0, 1e-50], ElementType::F32), Err(EmitError::BadScale));
    assert_eq!(c(&[0.0, 0.0], &[1.0, 1e-50], ElementType::F64), Ok(()));
    let _ = w;
    let nan_offset =
        ModelSpec::new(Model::Linear(LinearModel { w: &[1.0], offset: f64::NAN, centring: None }), ElementType::F64);
    assert_eq!(nan_offset.check(), Err(EmitError::NonFinite));
    let bad_dense = KernelModel {
        dim: 2,
        kernel: Kernel::Linear,
        basis: Basis::Dense(&[1.0, 2.0, 3.0]),
        coeffs: &[1.0, 2.0],
        offset: 0.0,
        centring: None,
        kernel_centring: None,
    };
    assert_eq!(ModelSpec::new(Model::Kernel(bad_dense), ElementType::F32).check(), Err(EmitError::BadDimensions));
    let bad_kc = KernelModel {
        basis: Basis::Dense(&[1.0, 2.0, 3.0, 4.0]),
        kernel_centring: Some(KernelCentring { col_means: &[1.0], grand_mean: 0.0 }),
        ..bad_dense
    };
    assert_eq!(ModelSpec::new(Model::Kernel(bad_kc), ElementType::F32).check(), Err(EmitError::BadDimensions));
    let rbf0 =
        KernelModel { basis: Basis::Dense(&[1.0, 2.0, 3.0, 4.0]), kernel: Kernel::Rbf { gamma: 0.0 }, ..bad_dense };
    assert_eq!(ModelSpec::new(Model::Kernel(rbf0), ElementType::F32).check(), Err(EmitError::BadKernel));
}

#[test]
fn scoring_input_errors() {
    let bytes = emit(&tiny_spec());
    let v = ModelView::new_checked(&bytes).unwrap();
    assert_eq!(v.score_dense(&[1.0, 2.0]), Err(ScoreError::DimensionMismatch { expected: 3, got: 2 }));
    assert_eq!(v.score_dense(&[1.0, f32::NAN, 0.0]), Err(ScoreError::NonFiniteInput));
    assert_eq!(v.score_dense_f64(&[1.0, f64::INFINITY, 0.0]), Err(ScoreError::NonFiniteInput));
    assert_eq!(v.score_sparse(&[0, 1], &[1.0]), Err(ScoreError::DimensionMismatch { expected: 2, got: 1 }));
    assert_eq!(v.score_sparse(&[3], &[1.0]), Ok(0.25)); // past dim: weight 0
    assert_eq!(v.score_sparse(&[2, 3], &[1.0, 1.0]), Ok(2.25));
    assert_eq!(v.score_sparse(&[1, 0], &[1.0, 1.0]), Err(ScoreError::BadInputIndex));
    assert_eq!(v.score_sparse(&[1, 1], &[1.0, 1.0]), Err(ScoreError::BadInputIndex));
    assert_eq!(v.score_sparse(&[], &[]), Ok(0.25));
    // f32 overflow of a finite f64 score
    assert_eq!(v.score_dense(&[0.0, 0.0, 3e38]), Err(ScoreError::ScoreOverflow));
    assert!(v.score_dense_f64(&[0.0, 0.0, 3e38]).is_ok());
    assert_eq!(v.score_dense_f64(&[0.0, 0.0, f64::MAX]), Err(ScoreError::ScoreOverflow));
}

#[test]
fn errors_display() {
    use std::string::ToString;
    let e = ParseError::UnsupportedVersion { found: Version { major: 2, minor: 0 }, supported: FORMAT_VERSION };
    assert_eq!(e.to_string(), "unsupported model format version 2.0 (this reader supports 1.5)");
    let _: &dyn core::error::Error = &e;
}

// ---------------------------------------------------------- never panics

/// Runs every accessor and scoring function of a view that parsed.
fn exercise(v: &ModelView<'_>) {
    let d = v.dim();
    let _ = (v.kind(), v.element_type(), v.metadata(), v.metadata_get("a"), v.producer_version());
    if let Some(l) = v.linear() {
        assert_eq!(l.weights().len(), d);
        assert!(l.weights().iter().all(f64::is_finite));
    }
    if let Some(k) = v.kernel() {
        assert_eq!(k.coeffs().len(), k.rows());
    }
    if let Some(p) = v.pref_gp() {
        assert_eq!(p.mean().len(), p.items());
        let _ = (p.cov(0, d - 1), p.cov(d, 0), p.item_name(0));
    }
    if let Some(p) = v.pref_inductive() {
        if d <= 4096 && p.rows() <= 4096 {
            let mut w = vec![0.0; p.prob_workspace_len()];
            let _ = p.predict(&vec![0.5; d], &mut w);
            let _ = p.prob(&vec![0.5; d], &vec![-0.5; d], &mut w);
        }
    }
    if let Some((du, dv)) = v.pair_dims() {
        if du <= 4096 && dv <= 4096 && v.pair_workspace_len() <= 1 << 16 {
            let mut w32 = vec![0.0f32; v.pair_workspace_len()];
            let mut w64 = vec![0.0f64; v.pair_workspace_len()];
            let _ = v.score_pair(&vec![0.5; du], &vec![-0.5; dv], &mut w32);
            let _ = v.score_pair_f64(&vec![0.5; du], &vec![-0.5; dv], &mut w64);
            let mut out = [0.0f32; 2];
            let _ = v.score_pair_rows(&vec![0.25; du], &vec![1.0; 2 * dv], &mut w32, &mut out);
        }
    }
    if d <= 4096 {
        let x = vec![0.5f32; d];
        let _ = v.score_dense(&x);
        let x64 = vec![-0.25f64; d];
        let _ = v.score_dense_f64(&x64);
    }
    let _ = v.score_sparse(&[0], &[1.0]);
    if let Some(q) = v.quant() {
        assert_eq!(q.dim(), d);
        let _ = (q.error_bound(), q.range(d - 1), q.weight(d), q.scale(), q.bias());
        if d <= 4096 {
            let s = v.score_dense_i16(&vec![i16::MIN; d]);
            assert!(s.is_ok());
            let mut qx = vec![0i16; d];
            v.quantize_dense(&vec![0.5f32; d], &mut qx).unwrap();
            assert_eq!(v.score_dense_quant(&vec![0.5f32; d]), v.score_dense_i16(&qx));
        }
    }
}

proptest::proptest! {
    #[test]
    fn new_checked_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
        if let Ok(v) = ModelView::new_checked(&bytes) {
            exercise(&v);
        }
    }

    #[test]
    fn new_checked_never_panics_on_mutated_files_with_fixed_crc(
        which in 0usize..16,
        edits in proptest::collection::vec((proptest::num::usize::ANY, proptest::num::u8::ANY), 1..6),
        cut in proptest::option::of(proptest::num::usize::ANY),
    ) {
        let files = sample_files();
        let mut b = files[which].clone();
        for (at, val) in edits {
            let n = b.len() - field::CRC_LEN;
            b[at % n] = val;
        }
        if let Some(c) = cut {
            let n = field::HEADER_LEN + field::CRC_LEN + c % (b.len() - field::HEADER_LEN - field::CRC_LEN);
            b.truncate(n);
            let len = b.len() as u32;
            b[field::TOTAL_LEN].copy_from_slice(&len.to_le_bytes());
        }
        fix_crc(&mut b);
        if let Ok(v) = ModelView::new_checked(&b) {
            exercise(&v);
        }
    }
}

// ------------------------------------------------------------ pair models

const PAIRS: [PairKernel; 3] = [PairKernel::Kronecker, PairKernel::Symmetric, PairKernel::Reciprocal];

fn sign_of(pair: PairKernel) -> f64 {
    match pair {
        PairKernel::Kronecker => 0.0,
        PairKernel::Symmetric => 1.0,
        PairKernel::Reciprocal => -1.0,
    }
}

/// A random `rows × cols` row-major matrix, made exactly symmetric or
/// antisymmetric for those pair kernels.
fn pair_matrix(rng: &mut Rng, rows: usize, cols: usize, pair: PairKernel) -> Vec<f64> {
    let mut m: Vec<f64> = (0..rows * cols).map(|_| rng.f()).collect();
    if pair != PairKernel::Kronecker {
        let s = sign_of(pair);
        for i in 0..rows {
            for j in i..cols {
                let v = if i == j && s < 0.0 { 0.0 } else { m[i * cols + j] };
                m[i * cols + j] = v;
                m[j * cols + i] = s * v;
            }
        }
    }
    m
}

/// `Σ_ij M[i, j]·p_i·q_j` in f64.
fn bilinear_form(m: &[f64], p: &[f64], q: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..p.len() {
        for j in 0..q.len() {
            s += m[i * q.len() + j] * p[i] * q[j];
        }
    }
    s
}

/// The pair score from a bilinear form `g` in f64, and its scale (the sum
/// of the magnitudes of the terms).
fn pair_reference(pair: PairKernel, offset: f64, g: impl Fn(bool) -> (f64, f64)) -> (f64, f64) {
    let (g_uv, c_uv) = g(false);
    match pair {
        PairKernel::Kronecker => (offset + g_uv, offset.abs() + c_uv),
        _ => {
            let (g_vu, c_vu) = g(true);
            (offset + 0.5 * (g_uv + sign_of(pair) * g_vu), offset.abs() + 0.5 * (c_uv + c_vu))
        }
    }
}

fn abs_form(m: &[f64], p: &[f64], q: &[f64]) -> f64 {
    let a: Vec<f64> = m.iter().map(|x| x.abs()).collect();
    let pa: Vec<f64> = p.iter().map(|x| x.abs()).collect();
    let qa: Vec<f64> = q.iter().map(|x| x.abs()).collect();
    bilinear_form(&a, &pa, &qa)
}

/// Checks a pair model against `reference(xu, xv) -> (score, scale)` on
/// random inputs: f64 to 1e-12, f32 to 1e-5 of the scale, exact
/// (anti)symmetry, rows = singles bit for bit, ranking = order of the rows.
/// `(xu, xv) -> (score, scale)` in f64.
type PairReference<'r> = &'r dyn Fn(&[f64], &[f64]) -> (f64, f64);

fn check_pair_scores(v: &ModelView<'_>, rng: &mut Rng, reference: PairReference<'_>) {
    let (du, dv) = v.pair_dims().unwrap();
    let pair = v.pair_kernel().unwrap();
    let wl = v.pair_workspace_len();
    let (mut w32, mut w64) = (vec![0.0f32; wl], vec![0.0f64; wl]);
    let n = 7;
    let xu64: Vec<f64> = (0..du).map(|_| rng.f()).collect();
    let rows64: Vec<f64> = (0..n * dv).map(|_| rng.f()).collect();
    let xu32: Vec<f32> = xu64.iter().map(|&x| x as f32).collect();
    let rows32: Vec<f32> = rows64.iter().map(|&x| x as f32).collect();
    let (mut s32, mut s64) = (vec![0.0f32; n], vec![0.0f64; n]);
    v.score_pair_rows(&xu32, &rows32, &mut w32, &mut s32).unwrap();
    v.score_pair_rows_f64(&xu64, &rows64, &mut w64, &mut s64).unwrap();
    for r in 0..n {
        let xv64 = &rows64[r * dv..(r + 1) * dv];
        let xv32 = &rows32[r * dv..(r + 1) * dv];
        let one64 = v.score_pair_f64(&xu64, xv64, &mut w64).unwrap();
        let one32 = v.score_pair(&xu32, xv32, &mut w32).unwrap();
        assert_eq!(one64.to_bits(), s64[r].to_bits(), "rows vs single, f64");
        assert_eq!(one32.to_bits(), s32[r].to_bits(), "rows vs single, f32");
        let (want, scale) = reference(&xu64, xv64);
        assert!((one64 - want).abs() <= 1e-12 * scale.max(1e-300), "f64: {one64} vs {want} (scale {scale})");
        let xu_r: Vec<f64> = xu32.iter().map(|&x| x as f64).collect();
        let xv_r: Vec<f64> = xv32.iter().map(|&x| x as f64).collect();
        let (want32, scale32) = reference(&xu_r, &xv_r);
        assert!((one32 as f64 - want32).abs() <= 1e-5 * scale32, "f32: {one32} vs {want32} (scale {scale32})");
        if pair != PairKernel::Kronecker {
            let sw64 = v.score_pair_f64(xv64, &xu64, &mut w64).unwrap();
            let sw32 = v.score_pair(xv32, &xu32, &mut w32).unwrap();
            if pair == PairKernel::Symmetric {
                assert!(sw64 == one64 && sw32 == one32, "not exactly symmetric");
            } else {
                assert!(sw64 == -one64 && sw32 == -one32, "not exactly antisymmetric");
            }
        }
    }
    let (mut order, mut top) = (vec![0u32; n], vec![0u32; 3]);
    let mut sc = vec![0.0f32; n];
    crate::rank::order_candidates(v, &xu32, &rows32, &mut w32, &mut sc, &mut order).unwrap();
    assert_eq!(sc, s32);
    let mut want = vec![0u32; n];
    crate::rank::order(&s32, &mut want).unwrap();
    assert_eq!(order, want);
    crate::rank::top_k_candidates(v, &xu32, &rows32, &mut w32, &mut sc, &mut top).unwrap();
    assert_eq!(top, want[..3]);
}

#[test]
fn bilinear_round_trip_and_scores() {
    let mut rng = Rng(0xB111);
    for et in [ElementType::F32, ElementType::F64] {
        for pair in PAIRS {
            let (du, dv) = if pair == PairKernel::Kronecker { (3, 5) } else { (4, 4) };
            let w = pair_matrix(&mut rng, du, dv, pair);
            let offset = if pair == PairKernel::Reciprocal { 0.0 } else { 0.375 };
            let spec = ModelSpec::new(Model::Bilinear(BilinearModel { pair, dim_u: du, dim_v: dv, w: &w, offset }), et);
            let bytes = emit(&spec);
            let v = ModelView::new_checked(&bytes).unwrap();
            assert_eq!(v.kind(), ModelKind::Bilinear);
            assert_eq!(v.format_version(), Version { major: 1, minor: 2 });
            assert_eq!(v.min_reader_version(), Version { major: 1, minor: 2 });
            assert_eq!((v.dim(), v.pair_dims(), v.pair_kernel()), (du, Some((du, dv)), Some(pair)));
            assert!(v.is_pair() && v.linear().is_none() && v.dual_pair().is_none());
            assert_eq!(v.pair_workspace_len(), dv);
            let b = v.bilinear().unwrap();
            assert_eq!((b.pair(), b.dim_u(), b.dim_v(), b.offset()), (pair, du, dv, offset));
            let ws: Vec<f64> = w.iter().map(|&x| round(x, et)).collect();
            assert_eq!(b.w().iter().collect::<Vec<_>>(), ws);
            // Re-emitting the parsed parameters gives the same bytes.
            let again =
                ModelSpec::new(Model::Bilinear(BilinearModel { pair, dim_u: du, dim_v: dv, w: &ws, offset }), et);
            assert_eq!(emit(&again), bytes);
            let reference = |xu: &[f64], xv: &[f64]| {
                pair_reference(pair, offset, |swap| {
                    let (p, q) = if swap { (xv, xu) } else { (xu, xv) };
                    (bilinear_form(&ws, p, q), abs_form(&ws, p, q))
                })
            };
            check_pair_scores(&v, &mut rng, &reference);
        }
    }
}

fn kernel_f64(k: &Kernel, x: &[f64], y: &[f64]) -> f64 {
    let dot: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
    let dist: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
    match *k {
        Kernel::Linear => dot,
        Kernel::Rbf { gamma } => (-gamma * dist).exp(),
        Kernel::Polynomial { gamma, coef0, degree } => (gamma * dot + coef0).powi(degree as i32),
    }
}

fn kernel_rows(k: &Kernel, basis: &[f64], d: usize, x: &[f64]) -> Vec<f64> {
    basis.chunks_exact(d).map(|row| kernel_f64(k, x, row)).collect()
}

/// Owned parameters of a dual pair model.
struct DualData {
    pair: PairKernel,
    ku: Kernel,
    kv: Kernel,
    du: usize,
    dv: usize,
    bu: Vec<f64>,
    bv: Option<Vec<f64>>,
    a: Vec<f64>,
    offset: f64,
}

impl DualData {
    fn random(rng: &mut Rng, pair: PairKernel, two: bool, ku: Kernel, kv: Kernel) -> Self {
        let (du, mu) = (3, 4);
        let (dv, mv) = if two { (2, 5) } else { (du, mu) };
        let bu: Vec<f64> = (0..mu * du).map(|_| rng.f()).collect();
        let bv = two.then(|| (0..mv * dv).map(|_| rng.f()).collect());
        let a: Vec<f64> = (0..mu * mv).map(|_| rng.f()).collect();
        let offset = if pair == PairKernel::Reciprocal { 0.0 } else { -0.5 };
        DualData { pair, ku, kv: if two { kv } else { ku }, du, dv, bu, bv, a, offset }
    }

    fn model(&self) -> DualPairModel<'_> {
        DualPairModel {
            pair: self.pair,
            u: PairDomain { kernel: self.ku, dim: self.du, basis: &self.bu },
            v: self.bv.as_ref().map(|b| PairDomain { kernel: self.kv, dim: self.dv, basis: b }),
            coeffs: &self.a,
            offset: self.offset,
        }
    }

    /// The f64 score of the stored (rounded) parameters, and its scale.
    #[cfg_attr(not(feature = "kernel"), allow(dead_code))] // used by the kernel-scoring tests only
    fn reference(&self, et: ElementType, xu: &[f64], xv: &[f64]) -> (f64, f64) {
        let r = |v: &[f64]| v.iter().map(|&x| round(x, et)).collect::<Vec<f64>>();
        let (bu, a) = (r(&self.bu), r(&self.a));
        let bv = self.bv.as_deref().map_or_else(|| bu.clone(), r);
        let g = |x: &[f64], y: &[f64]| {
            let (p, q) = (kernel_rows(&self.ku, &bu, self.du, x), kernel_rows(&self.kv, &bv, self.dv, y));
            (bilinear_form(&a, &p, &q), abs_form(&a, &p, &q))
        };
        pair_reference(self.pair, self.offset, |swap| if swap { g(xv, xu) } else { g(xu, xv) })
    }
}

#[cfg_attr(not(feature = "kernel"), allow(dead_code))] // used by the kernel-scoring tests only
fn dual_kernels() -> [(Kernel, Kernel); 3] {
    [
        (Kernel::Rbf { gamma: 0.7 }, Kernel::Polynomial { gamma: 0.5, coef0: 1.0, degree: 3 }),
        (Kernel::Linear, Kernel::Rbf { gamma: 0.2 }),
        (Kernel::Polynomial { gamma: 1.0, coef0: 0.0, degree: 2 }, Kernel::Linear),
    ]
}

#[test]
#[cfg(feature = "kernel")]
fn dual_pair_round_trip_and_scores() {
    let mut rng = Rng(0xD0A1);
    for et in [ElementType::F32, ElementType::F64] {
        for (ku, kv) in dual_kernels() {
            for (pair, two) in [
                (PairKernel::Kronecker, true),
                (PairKernel::Kronecker, false),
                (PairKernel::Symmetric, false),
                (PairKernel::Reciprocal, false),
            ] {
                let data = DualData::random(&mut rng, pair, two, ku, kv);
                let bytes = emit(&ModelSpec::new(Model::DualPair(data.model()), et));
                let v = ModelView::new_checked(&bytes).unwrap();
                assert_eq!(v.kind(), ModelKind::DualPair);
                assert_eq!(v.format_version(), Version { major: 1, minor: 2 });
                let d = v.dual_pair().unwrap();
                assert_eq!((d.pair(), d.two_domains(), d.kernel_u(), d.kernel_v()), (pair, two, ku, data.kv));
                assert_eq!((d.rows_u(), d.rows_v(), d.dim_u(), d.dim_v()), (4, if two { 5 } else { 4 }, 3, data.dv));
                assert_eq!(d.offset(), data.offset);
                let r = |v: &[f64]| v.iter().map(|&x| round(x, et)).collect::<Vec<f64>>();
                assert_eq!(d.coeffs().iter().collect::<Vec<_>>(), r(&data.a));
                assert_eq!(d.basis_u().iter().collect::<Vec<_>>(), r(&data.bu));
                let want_ws = match (pair, two) {
                    (PairKernel::Kronecker, true) => 9,
                    (PairKernel::Kronecker, false) => 8,
                    _ => 12,
                };
                assert_eq!(v.pair_workspace_len(), want_ws);
                let reference = |xu: &[f64], xv: &[f64]| data.reference(et, xu, xv);
                check_pair_scores(&v, &mut rng, &reference);
            }
        }
    }
}

#[test]
#[cfg(not(feature = "kernel"))]
fn dual_pair_models_parse_but_do_not_score_without_the_feature() {
    let mut rng = Rng(3);
    let data = DualData::random(&mut rng, PairKernel::Kronecker, true, Kernel::Linear, Kernel::Linear);
    let bytes = emit(&ModelSpec::new(Model::DualPair(data.model()), ElementType::F32));
    let v = ModelView::new_checked(&bytes).unwrap();
    let mut w = vec![0.0f32; v.pair_workspace_len()];
    assert_eq!(v.score_pair(&[0.0; 3], &[0.0; 2], &mut w), Err(ScoreError::UnsupportedKind));
}

/// Kernel matrix of row-major rows.
fn gram(k: &Kernel, x: &[f64], d: usize) -> Vec<f64> {
    let rows: Vec<&[f64]> = x.chunks_exact(d).collect();
    let mut g = vec![0.0; rows.len() * rows.len()];
    for (i, a) in rows.iter().enumerate() {
        for (j, b) in rows.iter().enumerate() {
            g[i + j * rows.len()] = kernel_f64(k, a, b);
        }
    }
    g
}

#[test]
fn pair_model_from_a_kron_fit_scores_as_the_learners_predictions() {
    use crate::backend::Portable;
    use crate::learn::kron::{self, Domains, Loss};
    use crate::{MatMut, MatRef};
    let mut rng = Rng(0xF17);
    let kernels: &[Kernel] =
        if cfg!(feature = "kernel") { &[Kernel::Linear, Kernel::Rbf { gamma: 0.4 }] } else { &[Kernel::Linear] };
    for &kernel in kernels {
        for pair in PAIRS {
            let (p, d) = (6, 3);
            let x: Vec<f64> = (0..p * d).map(|_| rng.f()).collect();
            let y: Vec<f64> = (0..p * p).map(|_| rng.f()).collect();
            let k = gram(&kernel, &x, d);
            let km = MatRef::from_col_major(&k, p, p).unwrap();
            let domains = Domains::One { k: km, pair };
            let mut coef = vec![0.0; p * p];
            let mut work = vec![0.0; kron::fit_workspace_len(p, p)];
            let mut bw = vec![0.0; Portable::workspace_len(p)];
            let mut be = Portable::new(&mut bw);
            kron::fit(
                &mut be,
                &domains,
                Loss::Regression,
                MatRef::from_col_major(&y, p, p).unwrap(),
                0.5,
                MatMut::from_col_major(&mut coef, p, p).unwrap(),
                &mut work,
            )
            .unwrap();
            let a = MatRef::from_col_major(&coef, p, p).unwrap();
            // New nodes: their kernel rows against the training nodes.
            let n = 4;
            let xn: Vec<f64> = (0..n * d).map(|_| rng.f()).collect();
            let mut kn = vec![0.0; n * p];
            for i in 0..n {
                for j in 0..p {
                    kn[i + j * n] = kernel_f64(&kernel, &xn[i * d..(i + 1) * d], &x[j * d..(j + 1) * d]);
                }
            }
            let knm = MatRef::from_col_major(&kn, n, p).unwrap();
            let pairs: Vec<(usize, usize)> = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
            let mut want = vec![0.0; pairs.len()];
            let mut pw = vec![0.0; kron::predict_pairs_workspace_len(pair, p, n, n)];
            kron::predict_pairs(&mut be, pair, a, knm, knm, &pairs, &mut want, &mut pw).unwrap();

            let u = PairDomain { kernel, dim: d, basis: &x };
            let mut buf = vec![0.0; pair_model_buffer_len(&u, None)];
            let model = pair_model(u, None, pair, a, 0.0, &mut buf).unwrap();
            assert_eq!(matches!(model, Model::Bilinear(_)), kernel == Kernel::Linear);
            let bytes = emit(&ModelSpec::new(model, ElementType::F64));
            let v = ModelView::new_checked(&bytes).unwrap();
            let mut ws = vec![0.0; v.pair_workspace_len()];
            let mut scale = 0.0f64;
            for (e, &(i, j)) in pairs.iter().enumerate() {
                let s = v.score_pair_f64(&xn[i * d..(i + 1) * d], &xn[j * d..(j + 1) * d], &mut ws).unwrap();
                scale = scale.max(want[e].abs());
                assert!((s - want[e]).abs() <= 1e-9 * (1.0 + want[e].abs()), "{kernel:?} {pair:?}: {s} vs {}", want[e]);
            }
            assert!(scale > 1e-3);
        }
    }
}

#[test]
fn pair_model_builder_two_domains_and_errors() {
    use crate::MatRef;
    let mut rng = Rng(0xB1D);
    let (pu, du, pv, dv) = (3, 2, 4, 5);
    let xu: Vec<f64> = (0..pu * du).map(|_| rng.f()).collect();
    let xv: Vec<f64> = (0..pv * dv).map(|_| rng.f()).collect();
    let a: Vec<f64> = (0..pu * pv).map(|_| rng.f()).collect();
    let am = MatRef::from_row_major(&a, pu, pv).unwrap();
    let u = PairDomain { kernel: Kernel::Linear, dim: du, basis: &xu };
    let v = PairDomain { kernel: Kernel::Linear, dim: dv, basis: &xv };
    assert_eq!(pair_model_buffer_len(&u, Some(&v)), du * dv + dv);
    let mut buf = vec![0.0; du * dv + dv];
    let Model::Bilinear(b) = pair_model(u, Some(v), PairKernel::Kronecker, am, 1.5, &mut buf).unwrap() else {
        panic!("linear kernels give a bilinear model")
    };
    // W = X_uᵀ·A·X_v
    for s in 0..du {
        for t in 0..dv {
            let mut want = 0.0;
            for i in 0..pu {
                for j in 0..pv {
                    want += xu[i * du + s] * a[i * pv + j] * xv[j * dv + t];
                }
            }
            assert!((b.w[s * dv + t] - want).abs() < 1e-12);
        }
    }
    assert_eq!((b.dim_u, b.dim_v, b.offset), (du, dv, 1.5));
    let rbf = PairDomain { kernel: Kernel::Rbf { gamma: 1.0 }, ..v };
    assert_eq!(pair_model_buffer_len(&u, Some(&rbf)), pu * pv);
    let mut buf = vec![0.0; pu * pv];
    let Model::DualPair(dp) = pair_model(u, Some(rbf), PairKernel::Kronecker, am, 0.0, &mut buf).unwrap() else {
        panic!("an RBF domain gives a dual model")
    };
    assert_eq!(dp.coeffs, &a[..]);
    // errors
    let mut small = vec![0.0; 3];
    assert_eq!(
        pair_model(u, Some(v), PairKernel::Kronecker, am, 0.0, &mut small).map(|_| ()),
        Err(EmitError::BufferTooSmall { needed: du * dv + dv, got: 3 })
    );
    let mut buf = vec![0.0; 100];
    assert_eq!(pair_model(u, Some(v), PairKernel::Symmetric, am, 0.0, &mut buf).map(|_| ()), Err(EmitError::BadPair));
    let at = MatRef::from_row_major(&a, pv, pu).unwrap();
    assert_eq!(
        pair_model(u, Some(v), PairKernel::Kronecker, at, 0.0, &mut buf).map(|_| ()),
        Err(EmitError::BadDimensions)
    );
    let ragged = PairDomain { basis: &xu[..5], ..u };
    assert_eq!(
        pair_model(ragged, Some(v), PairKernel::Kronecker, am, 0.0, &mut buf).map(|_| ()),
        Err(EmitError::BadDimensions)
    );
}

fn bilinear_spec<'a>(pair: PairKernel, du: usize, dv: usize, w: &'a [f64], offset: f64) -> ModelSpec<'a> {
    ModelSpec::new(Model::Bilinear(BilinearModel { pair, dim_u: du, dim_v: dv, w, offset }), ElementType::F32)
}

#[test]
fn pair_writer_errors() {
    let sym = [1.0, 2.0, 2.0, 3.0];
    let anti = [0.0, 2.0, -2.0, 0.0];
    let k = PairKernel::Kronecker;
    assert_eq!(bilinear_spec(k, 2, 2, &sym, 0.0).check(), Ok(()));
    assert_eq!(bilinear_spec(PairKernel::Symmetric, 2, 2, &sym, 1.0).check(), Ok(()));
    assert_eq!(bilinear_spec(PairKernel::Reciprocal, 2, 2, &anti, 0.0).check(), Ok(()));
    assert_eq!(bilinear_spec(PairKernel::Symmetric, 2, 2, &anti, 0.0).check(), Err(EmitError::BadPair));
    assert_eq!(bilinear_spec(PairKernel::Reciprocal, 2, 2, &sym, 0.0).check(), Err(EmitError::BadPair));
    assert_eq!(bilinear_spec(PairKernel::Reciprocal, 2, 2, &anti, 0.5).check(), Err(EmitError::BadPair));
    // The check is on the stored values: not symmetric in f64, but once rounded to f32.
    let near = [1.0, 0.1, 0.1 + 1e-9, 1.0];
    assert_eq!(bilinear_spec(PairKernel::Symmetric, 2, 2, &near, 0.0).check(), Ok(()));
    let mut near64 = bilinear_spec(PairKernel::Symmetric, 2, 2, &near, 0.0);
    near64.element_type = ElementType::F64;
    assert_eq!(near64.check(), Err(EmitError::BadPair));
    assert_eq!(bilinear_spec(PairKernel::Symmetric, 2, 3, &[0.0; 6], 0.0).check(), Err(EmitError::BadDimensions));
    assert_eq!(bilinear_spec(k, 2, 2, &sym[..3], 0.0).check(), Err(EmitError::BadDimensions));
    assert_eq!(bilinear_spec(k, 0, 2, &[], 0.0).check(), Err(EmitError::BadDimensions));
    assert_eq!(bilinear_spec(k, 1, 1, &[f64::NAN], 0.0).check(), Err(EmitError::NonFinite));
    assert_eq!(bilinear_spec(k, 1, 1, &[1e39], 0.0).check(), Err(EmitError::NonFinite));
    assert_eq!(bilinear_spec(k, 1, 1, &[1.0], f64::INFINITY).check(), Err(EmitError::NonFinite));

    let mut rng = Rng(1);
    let data = DualData::random(&mut rng, k, true, Kernel::Linear, Kernel::Rbf { gamma: 1.0 });
    let dual = |f: &dyn Fn(&mut DualPairModel<'_>)| {
        let mut m = data.model();
        f(&mut m);
        ModelSpec::new(Model::DualPair(m), ElementType::F32).check()
    };
    assert_eq!(dual(&|_| {}), Ok(()));
    assert_eq!(dual(&|m| m.pair = PairKernel::Symmetric), Err(EmitError::BadPair));
    assert_eq!(dual(&|m| m.coeffs = &m.coeffs[1..]), Err(EmitError::BadDimensions));
    assert_eq!(dual(&|m| m.u.basis = &m.u.basis[1..]), Err(EmitError::BadDimensions));
    assert_eq!(dual(&|m| m.u.basis = &[]), Err(EmitError::BadDimensions));
    assert_eq!(dual(&|m| m.u.kernel = Kernel::Rbf { gamma: -1.0 }), Err(EmitError::BadKernel));
    assert_eq!(dual(&|m| m.offset = f64::NAN), Err(EmitError::NonFinite));
    let one = DualData::random(&mut rng, PairKernel::Reciprocal, false, Kernel::Linear, Kernel::Linear);
    let mut m = one.model();
    assert_eq!(ModelSpec::new(Model::DualPair(m), ElementType::F64).check(), Ok(()));
    m.offset = 1.0;
    assert_eq!(ModelSpec::new(Model::DualPair(m), ElementType::F64).check(), Err(EmitError::BadPair));
}

/// The offset of the section `id` in a file.
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

#[test]
fn pair_parse_errors() {
    let patch = |good: &[u8], f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.to_vec();
        f(&mut b);
        fix_crc(&mut b);
        ModelView::new_checked(&b).map(|_| ())
    };
    // bilinear: a Kronecker model with a square W that is neither symmetric nor antisymmetric
    let w = [1.0, 2.0, 3.0, 4.0];
    let good = emit(&bilinear_spec(PairKernel::Kronecker, 2, 2, &w, 0.0));
    let at = section_offset(&good, section_id::BILINEAR);
    let bl = field::bilinear::PAIR + at;
    let bad10 = Err(ParseError::BadSection { id: section_id::BILINEAR });
    assert_eq!(patch(&good, &|_| {}), Ok(()));
    assert_eq!(patch(&good, &|b| b[bl] = 2), bad10);
    assert_eq!(patch(&good, &|b| b[bl] = 3), bad10);
    assert_eq!(patch(&good, &|b| b[bl] = 0), bad10);
    assert_eq!(patch(&good, &|b| b[bl] = 4), bad10);
    assert_eq!(patch(&good, &|b| b[at + field::bilinear::RESERVED.start + 2] = 1), bad10);
    assert_eq!(patch(&good, &|b| b[at + field::bilinear::DIM_V.start] = 0), Err(ParseError::BadDimensions));
    assert_eq!(patch(&good, &|b| b[at + field::bilinear::DIM_V.start] = 3), bad10);
    let w0 = at + field::bilinear::LEN;
    assert_eq!(patch(&good, &|b| b[w0..w0 + 4].copy_from_slice(&f32::NAN.to_le_bytes())), Err(ParseError::NonFinite));
    // a version older than the kind
    assert_eq!(
        patch(&good, &|b| {
            b[field::FORMAT_MINOR] = 1;
            b[field::MIN_READER_MINOR] = 1;
        }),
        Err(ParseError::BadHeader)
    );
    // symmetric code with d_v != d_u
    let rect = emit(&bilinear_spec(PairKernel::Kronecker, 2, 3, &[1.0; 6], 0.0));
    let at_r = section_offset(&rect, section_id::BILINEAR);
    assert_eq!(patch(&rect, &|b| b[at_r] = 2), Err(ParseError::BadDimensions));
    // reciprocal with an offset; symmetric W under the reciprocal code
    let anti = [0.0, 2.0, -2.0, 0.0];
    let rec = emit(&bilinear_spec(PairKernel::Reciprocal, 2, 2, &anti, 0.0));
    let at2 = section_offset(&rec, section_id::BILINEAR);
    assert_eq!(patch(&rec, &|_| {}), Ok(()));
    let off = at2 + field::bilinear::OFFSET.start;
    assert_eq!(
        patch(&rec, &|b| b[off..off + 8].copy_from_slice(&1.0f64.to_le_bytes())),
        Err(ParseError::BadSection { id: section_id::BILINEAR })
    );
    let w01 = at2 + field::bilinear::LEN + 4;
    assert_eq!(
        patch(&rec, &|b| b[w01..w01 + 4].copy_from_slice(&(-2.0f32).to_le_bytes())),
        Err(ParseError::BadSection { id: section_id::BILINEAR })
    );
    // the single-row sections of other kinds are rejected
    let mut rng = Rng(9);
    let data = DualData::random(&mut rng, PairKernel::Kronecker, true, Kernel::Rbf { gamma: 0.5 }, Kernel::Linear);
    let good = emit(&ModelSpec::new(Model::DualPair(data.model()), ElementType::F32));
    let at = section_offset(&good, section_id::PAIR_DUAL);
    let bad11 = Err(ParseError::BadSection { id: section_id::PAIR_DUAL });
    assert_eq!(patch(&good, &|_| {}), Ok(()));
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::PAIR] = 2), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::PAIR] = 9), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::DOMAINS] = 3), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::DOMAINS] = 1), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::RESERVED.start] = 1), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::RESERVED2.start + 3] = 1), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::KERNEL_U] = 7), Err(ParseError::BadKernel));
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::DEGREE_V] = 1), Err(ParseError::BadKernel));
    let g = at + field::pair_dual::GAMMA_U.start;
    assert_eq!(patch(&good, &|b| b[g..g + 8].copy_from_slice(&(-1.0f64).to_le_bytes())), Err(ParseError::BadKernel));
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::ROWS_U.start] = 0), Err(ParseError::BadDimensions));
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::ROWS_V.start] = 4), bad_len(section_id::PAIR_BASIS_V));
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::DIM_V.start] = 0), Err(ParseError::BadDimensions));
    let o = at + field::pair_dual::OFFSET.start;
    assert_eq!(patch(&good, &|b| b[o..o + 8].copy_from_slice(&f64::NAN.to_le_bytes())), Err(ParseError::NonFinite));
    let c0 = section_offset(&good, section_id::PAIR_COEFFS);
    assert_eq!(
        patch(&good, &|b| b[c0..c0 + 4].copy_from_slice(&f32::INFINITY.to_le_bytes())),
        Err(ParseError::NonFinite)
    );
    // one domain: the second domain's fields must repeat the first's
    let one = DualData::random(&mut rng, PairKernel::Symmetric, false, Kernel::Rbf { gamma: 0.5 }, Kernel::Linear);
    let good = emit(&ModelSpec::new(Model::DualPair(one.model()), ElementType::F64));
    let at = section_offset(&good, section_id::PAIR_DUAL);
    assert_eq!(patch(&good, &|_| {}), Ok(()));
    let gv = at + field::pair_dual::GAMMA_V.start;
    assert_eq!(patch(&good, &|b| b[gv..gv + 8].copy_from_slice(&0.25f64.to_le_bytes())), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::ROWS_V.start] = 5), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::DIM_V.start] = 2), bad11);
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::PAIR] = 3), bad11); // reciprocal, offset −0.5
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::PAIR] = 1), Ok(()));
    assert_eq!(patch(&good, &|b| b[at + field::pair_dual::DOMAINS] = 2), Err(ParseError::BadSection { id: 11 }));
}

fn bad_len(id: u16) -> Result<(), ParseError> {
    Err(ParseError::BadSection { id })
}

#[test]
fn pair_and_single_row_entry_points_do_not_mix() {
    let w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let bytes = emit(&bilinear_spec(PairKernel::Kronecker, 2, 3, &w, 0.5));
    let v = ModelView::new_checked(&bytes).unwrap();
    assert_eq!(v.score_dense(&[1.0, 2.0]), Err(ScoreError::KindMismatch));
    assert_eq!(v.score_dense(&[1.0]), Err(ScoreError::KindMismatch));
    assert_eq!(v.score_dense_f64(&[1.0, 2.0]), Err(ScoreError::KindMismatch));
    assert_eq!(v.score_sparse(&[0], &[1.0]), Err(ScoreError::KindMismatch));
    assert_eq!(v.score_dense_rows(&[1.0, 2.0], &mut [0.0]), Err(ScoreError::KindMismatch));
    assert_eq!(v.score_dense_rows_f64(&[1.0, 2.0], &mut [0.0]), Err(ScoreError::KindMismatch));
    assert_eq!(v.score_sparse_rows(&[0, 1], &[0], &[1.0], &mut [0.0]), Err(ScoreError::KindMismatch));
    let mut ws = [0.0f32; 3];
    // 0.5 + [1 2]·W·[1 0 −1] = 0.5 + (1·(1 − 3) + 2·(4 − 6)) = −5.5
    assert_eq!(v.score_pair(&[1.0, 2.0], &[1.0, 0.0, -1.0], &mut ws), Ok(-5.5));
    assert_eq!(v.score_pair_f64(&[1.0, 2.0], &[1.0, 0.0, -1.0], &mut [0.0; 3]), Ok(-5.5));
    assert_eq!(
        v.score_pair(&[1.0], &[1.0, 0.0, -1.0], &mut ws),
        Err(ScoreError::DimensionMismatch { expected: 2, got: 1 })
    );
    assert_eq!(
        v.score_pair(&[1.0, 2.0], &[1.0, 0.0], &mut ws),
        Err(ScoreError::DimensionMismatch { expected: 3, got: 2 })
    );
    assert_eq!(
        v.score_pair(&[1.0, 2.0], &[1.0, 0.0, -1.0], &mut [0.0; 2]),
        Err(ScoreError::DimensionMismatch { expected: 3, got: 2 })
    );
    assert_eq!(v.score_pair(&[f32::NAN, 2.0], &[1.0, 0.0, -1.0], &mut ws), Err(ScoreError::NonFiniteInput));
    assert_eq!(v.score_pair(&[1.0, 2.0], &[1.0, f32::INFINITY, -1.0], &mut ws), Err(ScoreError::NonFiniteInput));
    assert_eq!(v.score_pair(&[3e38, 3e38], &[3e38, 0.0, 0.0], &mut ws), Err(ScoreError::ScoreOverflow));
    let mut out = [0.0f32; 2];
    assert_eq!(
        v.score_pair_rows(&[1.0, 2.0], &[0.0; 5], &mut ws, &mut out),
        Err(ScoreError::DimensionMismatch { expected: 6, got: 5 })
    );
    let mut rows = [0.0f32; 6];
    rows[4] = f32::NAN;
    assert_eq!(v.score_pair_rows(&[1.0, 2.0], &rows, &mut ws, &mut out), Err(ScoreError::NonFiniteInput));
    assert_eq!(out, [0.0; 2], "nothing written on an input error");
    let mut order = [0u32; 3];
    assert_eq!(
        crate::rank::order_candidates(&v, &[1.0, 2.0], &[0.0; 6], &mut ws, &mut out, &mut order),
        Err(crate::rank::RankError::LengthMismatch { expected: 2, got: 3 })
    );
    // pair entry points on a single-row model
    let lin = emit(&tiny_spec());
    let l = ModelView::new_checked(&lin).unwrap();
    assert!(!l.is_pair() && l.pair_dims().is_none() && l.pair_kernel().is_none());
    assert_eq!(l.pair_workspace_len(), 0);
    assert_eq!(l.score_pair(&[1.0; 3], &[1.0; 3], &mut []), Err(ScoreError::KindMismatch));
    assert_eq!(l.score_pair_f64(&[1.0; 3], &[1.0; 3], &mut []), Err(ScoreError::KindMismatch));
    assert_eq!(l.score_pair_rows(&[1.0; 3], &[], &mut [], &mut []), Err(ScoreError::KindMismatch));
}

// ------------------------------------------------ preference GPs (kinds 8, 9)

/// A valid kind-8 posterior over 3 items (Σ positive definite).
const PREF_MEAN: [f64; 3] = [0.5, -0.25, 1.0];
const PREF_COV: [f64; 6] = [1.0, 0.2, 0.8, -0.1, 0.3, 1.5];
const PREF_NAMES: &str = "apple\nbanana\ncherry\n";

fn pref_gp_spec(et: ElementType, names: &'static str) -> ModelSpec<'static> {
    ModelSpec::new(
        Model::PrefGp(PrefGpModel {
            sigma: 0.5,
            count: 7,
            mean: Values::F64(&PREF_MEAN),
            cov_packed: Values::F64(&PREF_COV),
            item_names: names,
        }),
        et,
    )
}

/// A valid kind-9 model: d = 2, m = 3 basis rows, RBF kernel.
const PI_BASIS: [f64; 6] = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
const PI_ALPHA: [f64; 3] = [0.5, -1.0, 0.25];
/// `W` (symmetric PSD: diagonally dominant), packed lower.
const PI_W: [f64; 6] = [0.05, 0.01, 0.04, 0.0, -0.005, 0.03];
const PI_KERNEL: Kernel = Kernel::Rbf { gamma: 0.5 };

fn pref_inductive_spec(et: ElementType) -> ModelSpec<'static> {
    ModelSpec::new(
        Model::PrefInductive(PrefInductiveModel {
            kernel: PI_KERNEL,
            scale: 2.0,
            sigma: 0.3,
            count: 11,
            dim: 2,
            basis: &PI_BASIS,
            alpha: &PI_ALPHA,
            w_packed: &PI_W,
        }),
        et,
    )
}

fn unpack(p: &[f64], n: usize) -> Vec<f64> {
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            m[i * n + j] = p[i * (i + 1) / 2 + j];
            m[j * n + i] = p[i * (i + 1) / 2 + j];
        }
    }
    m
}

#[test]
fn pref_gp_round_trip() {
    for et in [ElementType::F32, ElementType::F64] {
        for names in ["", PREF_NAMES] {
            let bytes = emit(&pref_gp_spec(et, names).with_metadata("algo=pref-gp\n"));
            let v = ModelView::new_checked(&bytes).unwrap();
            assert_eq!(v.kind(), ModelKind::PrefGp);
            assert_eq!(v.kind().code(), 8);
            assert_eq!(v.format_version(), Version { major: 1, minor: 4 });
            assert_eq!(v.min_reader_version(), Version { major: 1, minor: 4 });
            assert_eq!(v.dim(), 3);
            assert!(v.linear().is_none() && v.pref_inductive().is_none() && v.online().is_none());
            let p = v.pref_gp().unwrap();
            assert_eq!((p.sigma(), p.count(), p.items()), (0.5, 7, 3));
            let all = |a: Array<'_>| a.iter().collect::<Vec<f64>>();
            assert_eq!(all(p.mean()), PREF_MEAN.iter().map(|&x| round(x, et)).collect::<Vec<_>>());
            assert_eq!(all(p.cov_packed()), PREF_COV.iter().map(|&x| round(x, et)).collect::<Vec<_>>());
            let full = unpack(&PREF_COV, 3);
            for i in 0..3 {
                for j in 0..3 {
                    assert_eq!(p.cov(i, j), round(full[i * 3 + j], et));
                }
            }
            assert!(p.cov(3, 0).is_nan());
            assert_eq!(p.item_names(), names);
            assert_eq!(p.item_name(1), if names.is_empty() { None } else { Some("banana") });
            assert_eq!(v.metadata_get("algo"), Some("pref-gp"));
            // Not a row scorer.
            assert_eq!(v.score_dense(&[1.0; 3]), Err(ScoreError::KindMismatch));
            assert_eq!(v.score_dense_f64(&[1.0; 3]), Err(ScoreError::KindMismatch));
            assert_eq!(v.score_sparse(&[0], &[1.0]), Err(ScoreError::KindMismatch));
            assert_eq!(v.score_pair(&[1.0; 3], &[1.0; 3], &mut []), Err(ScoreError::KindMismatch));
        }
    }
    // The builder from a full matrix writes the same bytes (only the lower
    // triangle is read: poison the upper one).
    let mut full = unpack(&PREF_COV, 3);
    full[1] = f64::NAN;
    full[2] = 99.0;
    let mut buf = [0.0; 6];
    let m = pref_gp_model(&PREF_MEAN, PrefMatRef::from_row_major(&full, 3, 3).unwrap(), 0.5, 7, PREF_NAMES, &mut buf)
        .unwrap();
    assert_eq!(emit(&ModelSpec::new(m, ElementType::F32)), emit(&pref_gp_spec(ElementType::F32, PREF_NAMES)));
    let sq = PrefMatRef::from_row_major(&full, 3, 3).unwrap();
    assert_eq!(
        pref_gp_model(&PREF_MEAN, sq, 0.5, 7, "", &mut [0.0; 5]).map(|_| ()),
        Err(EmitError::BufferTooSmall { needed: 6, got: 5 })
    );
    let wide = PrefMatRef::from_row_major(&full[..6], 2, 3).unwrap();
    assert_eq!(pref_gp_model(&PREF_MEAN, wide, 0.5, 7, "", &mut [0.0; 6]).map(|_| ()), Err(EmitError::BadDimensions));
    // The file length the device side sizes its save buffer with.
    assert_eq!(PrefGpModel::file_len(3, ElementType::F32), Some(emit(&pref_gp_spec(ElementType::F32, "")).len()));
    assert_eq!(PrefGpModel::file_len(usize::MAX, ElementType::F32), None);
}

#[test]
fn pref_gp_errors() {
    let good = emit(&pref_gp_spec(ElementType::F32, PREF_NAMES));
    let id = section_id::PREF_GP;
    let at = section_offset(&good, id);
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        fix_crc(&mut b);
        ModelView::new_checked(&b).map(|_| ())
    };
    let put_f64 = |b: &mut Vec<u8>, at: usize, x: f64| b[at..at + 8].copy_from_slice(&x.to_le_bytes());
    let put_f32 = |b: &mut Vec<u8>, at: usize, x: f32| b[at..at + 4].copy_from_slice(&x.to_le_bytes());
    let sigma = at + field::pref_gp::SIGMA.start;
    assert_eq!(with(&|b| put_f64(b, sigma, 0.0)), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| put_f64(b, sigma, -0.5)), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| put_f64(b, sigma, f64::NAN)), Err(ParseError::NonFinite));
    assert_eq!(with(&|b| b[at + field::pref_gp::RESERVED.start + 7] = 1), Err(ParseError::BadSection { id }));
    // Σ starts after μ (3 f32); the diagonal is at packed 0, 2, 5.
    let cov = at + field::pref_gp::LEN + 3 * 4;
    assert_eq!(with(&|b| put_f32(b, cov, 0.0)), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| put_f32(b, cov + 5 * 4, -1.5)), Err(ParseError::BadSection { id }));
    // |Σ_10| = 0.9 > 1.001·√(1·0.8) = 0.895: not a covariance.
    assert_eq!(with(&|b| put_f32(b, cov + 4, 0.9)), Err(ParseError::BadSection { id }));
    // … 0.894 passes (the bound is a necessary condition only).
    assert_eq!(with(&|b| put_f32(b, cov + 4, 0.894)), Ok(()));
    assert_eq!(with(&|b| put_f32(b, cov + 3 * 4, f32::INFINITY)), Err(ParseError::NonFinite));
    assert_eq!(with(&|b| put_f32(b, at + field::pref_gp::LEN, f32::NAN)), Err(ParseError::NonFinite));
    // N in the header must match the section's length.
    assert_eq!(with(&|b| b[field::DIM.start] = 2), Err(ParseError::BadSection { id }));
    // Item names: N lines each ended by '\n', UTF-8.
    let names = section_offset(&good, section_id::PREF_ITEM_NAMES);
    let nid = ParseError::BadSection { id: section_id::PREF_ITEM_NAMES };
    assert_eq!(with(&|b| b[names + 5] = b'x'), Err(nid)); // "applexbanana\n…": 2 lines
    assert_eq!(with(&|b| b[names + 1] = 0xFF), Err(nid)); // not UTF-8
    assert_eq!(with(&|b| b[names + 1] = b'\n'), Err(nid)); // 4 lines
                                                           // The names section is optional: a reader that drops its required
                                                           // flag still reads; marking it required is a flag error.
    let entry = |b: &[u8], id: u16| {
        (0..2)
            .map(|e| field::HEADER_LEN + e * field::section::ENTRY_LEN)
            .find(|&e| u16::from_le_bytes([b[e], b[e + 1]]) == id)
            .unwrap()
    };
    let e = entry(&good, section_id::PREF_ITEM_NAMES);
    assert_eq!(with(&|b| b[e + field::section::FLAGS.start] = 1), Err(nid));
    // A file claiming 1.2 cannot hold a kind of 1.4.
    assert_eq!(
        with(&|b| {
            b[field::FORMAT_MINOR] = 2;
            b[field::MIN_READER_MINOR] = 2;
        }),
        Err(ParseError::BadHeader)
    );
    // A file needing a reader newer than this one is ReaderTooOld here.
    assert!(matches!(
        with(&|b| {
            b[field::FORMAT_MINOR] = FORMAT_VERSION.minor + 1;
            b[field::MIN_READER_MINOR] = FORMAT_VERSION.minor + 1;
        }),
        Err(ParseError::ReaderTooOld { .. })
    ));
    // Another kind's section in a kind-8 file.
    assert_eq!(
        with(&|b| b[e] = section_id::PREF_ALPHA as u8),
        Err(ParseError::BadSection { id: section_id::PREF_ALPHA })
    );

    // The writer refuses what the parser would.
    let check = |sigma: f64, mean: &'static [f64], cov: &'static [f64], names: &'static str, et: ElementType| {
        ModelSpec::new(
            Model::PrefGp(PrefGpModel {
                sigma,
                count: 0,
                mean: Values::F64(mean),
                cov_packed: Values::F64(cov),
                item_names: names,
            }),
            et,
        )
        .check()
    };
    let f32_ = ElementType::F32;
    assert_eq!(check(0.5, &PREF_MEAN, &PREF_COV, PREF_NAMES, f32_), Ok(()));
    assert_eq!(check(0.0, &PREF_MEAN, &PREF_COV, "", f32_), Err(EmitError::BadState));
    assert_eq!(check(f64::NAN, &PREF_MEAN, &PREF_COV, "", f32_), Err(EmitError::NonFinite));
    assert_eq!(check(0.5, &PREF_MEAN, &PREF_COV[..5], "", f32_), Err(EmitError::BadDimensions));
    assert_eq!(check(0.5, &[], &[], "", f32_), Err(EmitError::BadDimensions));
    assert_eq!(check(0.5, &PREF_MEAN, &[1.0, 0.9, 0.8, -0.1, 0.3, 1.5], "", f32_), Err(EmitError::BadState));
    assert_eq!(check(0.5, &PREF_MEAN, &[1.0, 0.2, 0.8, -0.1, 0.3, 0.0], "", f32_), Err(EmitError::BadState));
    assert_eq!(check(0.5, &PREF_MEAN, &[1.0, 0.2, 0.8, -0.1, 0.3, 1e39], "", f32_), Err(EmitError::NonFinite));
    assert_eq!(check(0.5, &PREF_MEAN, &[1.0, 0.2, 0.8, -0.1, 0.3, 1e39], "", ElementType::F64), Ok(()));
    assert_eq!(check(0.5, &PREF_MEAN, &PREF_COV, "a\nb\n", f32_), Err(EmitError::BadDimensions));
    assert_eq!(check(0.5, &PREF_MEAN, &PREF_COV, "a\nb\nc", f32_), Err(EmitError::BadDimensions));
    // A diagonal entry that is positive in f64 but rounds to 0 in f32.
    assert_eq!(check(0.5, &PREF_MEAN, &[1.0, 0.0, 1e-50, 0.0, 0.0, 1.0], "", f32_), Err(EmitError::BadState));
}

#[test]
fn pref_inductive_round_trip_and_predictions() {
    for et in [ElementType::F32, ElementType::F64] {
        let bytes = emit(&pref_inductive_spec(et));
        let v = ModelView::new_checked(&bytes).unwrap();
        assert_eq!(v.kind(), ModelKind::PrefInductive);
        assert_eq!(v.kind().code(), 9);
        assert_eq!(v.format_version(), Version { major: 1, minor: 4 });
        assert_eq!(v.dim(), 2);
        let p = v.pref_inductive().unwrap();
        assert_eq!((p.kernel(), p.scale(), p.sigma(), p.count(), p.rows()), (PI_KERNEL, 2.0, 0.3, 11, 3));
        let r = |a: &[f64]| a.iter().map(|&x| round(x, et)).collect::<Vec<_>>();
        assert_eq!(p.basis().iter().collect::<Vec<_>>(), r(&PI_BASIS));
        assert_eq!(p.alpha().iter().collect::<Vec<_>>(), r(&PI_ALPHA));
        assert_eq!(p.w_packed().iter().collect::<Vec<_>>(), r(&PI_W));
        assert_eq!(v.score_dense_f64(&[1.0, 1.0]), Err(ScoreError::KindMismatch));

        // Against the dense formulas on the stored values: mean = k_xᵀα,
        // var = a·k(x,x) − k_xᵀWk_x, P = Φ(Δm/√(2σ² + v)).
        let (basis, alpha, w) = (r(&PI_BASIS), r(&PI_ALPHA), unpack(&r(&PI_W), 3));
        let kx = |x: &[f64]| kernel_rows(&PI_KERNEL, &basis, 2, x).iter().map(|k| 2.0 * k).collect::<Vec<_>>();
        let quad = |a: &[f64], b: &[f64]| {
            let mut s = 0.0;
            for i in 0..3 {
                for j in 0..3 {
                    s += a[i] * w[i * 3 + j] * b[j];
                }
            }
            s
        };
        let mut work = vec![0.0; p.prob_workspace_len()];
        for (x, y) in [([0.3, -0.2], [1.0, 1.0]), ([0.0, 0.0], [0.0, 1.0]), ([2.0, -1.0], [0.5, 0.5])] {
            let (ka, kb) = (kx(&x), kx(&y));
            let mean_x: f64 = ka.iter().zip(&alpha).map(|(k, a)| k * a).sum();
            let mean_y: f64 = kb.iter().zip(&alpha).map(|(k, a)| k * a).sum();
            let var_x = 2.0 - quad(&ka, &ka);
            let var_y = 2.0 - quad(&kb, &kb);
            let cov = 2.0 * kernel_f64(&PI_KERNEL, &x, &y) - quad(&ka, &kb);
            let (m, var) = p.predict(&x, &mut work).unwrap();
            assert!((m - mean_x).abs() < 1e-14 && (var - var_x).abs() < 1e-14, "{m} {mean_x} {var} {var_x}");
            let (prob, vd) = p.prob(&x, &y, &mut work).unwrap();
            let vd_ref = var_x + var_y - 2.0 * cov;
            assert!((vd - vd_ref).abs() < 1e-13, "{vd} {vd_ref}");
            // Φ by the erfc series-free route: scipy-free closed form check of symmetry
            // and of one value below.
            let (q, _) = p.prob(&y, &x, &mut work).unwrap();
            assert!((prob + q - 1.0).abs() < 1e-15);
            let z = (mean_x - mean_y) / (2.0 * 0.09 + vd_ref).sqrt();
            assert!((prob - 0.5 * libm::erfc(-z / core::f64::consts::SQRT_2)).abs() < 1e-15);
        }
        assert_eq!(p.predict(&[1.0], &mut work), Err(ScoreError::DimensionMismatch { expected: 2, got: 1 }));
        assert_eq!(p.predict(&[1.0, f64::NAN], &mut work), Err(ScoreError::NonFiniteInput));
        assert_eq!(p.predict(&[1.0, 0.0], &mut [0.0; 2]), Err(ScoreError::DimensionMismatch { expected: 3, got: 2 }));
        assert_eq!(
            p.prob(&[1.0, 0.0], &[0.0, 0.0], &mut [0.0; 5]),
            Err(ScoreError::DimensionMismatch { expected: 6, got: 5 })
        );
    }
    // P(x ≻ y) at a known point: W = 0, α = e_0, linear kernel, d = 1, one
    // basis row x_0 = 1: mean(x) = a·x, var(x) = a·x²; x = 1, y = 0:
    // P = Φ(a/√(2σ² + a)) with a = 2, σ = 1: Φ(1) = 0.841344746068543.
    let spec = ModelSpec::new(
        Model::PrefInductive(PrefInductiveModel {
            kernel: Kernel::Linear,
            scale: 2.0,
            sigma: 1.0,
            count: 0,
            dim: 1,
            basis: &[1.0],
            alpha: &[1.0],
            w_packed: &[0.0],
        }),
        ElementType::F64,
    );
    let bytes = emit(&spec);
    let v = ModelView::new_checked(&bytes).unwrap();
    let (p, vd) = v.pref_inductive().unwrap().prob(&[1.0], &[0.0], &mut [0.0; 2]).unwrap();
    assert!((p - 0.841_344_746_068_543).abs() < 1e-15 && vd == 2.0, "{p} {vd}");
}

#[test]
fn pref_inductive_errors() {
    let good = emit(&pref_inductive_spec(ElementType::F64));
    let id = section_id::PREF_KERNEL;
    let at = section_offset(&good, id);
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        fix_crc(&mut b);
        ModelView::new_checked(&b).map(|_| ())
    };
    let put_f64 = |b: &mut Vec<u8>, at: usize, x: f64| b[at..at + 8].copy_from_slice(&x.to_le_bytes());
    use field::pref_kernel as pk;
    assert_eq!(with(&|b| put_f64(b, at + pk::SIGMA.start, 0.0)), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| put_f64(b, at + pk::SCALE.start, -2.0)), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| put_f64(b, at + pk::SCALE.start, f64::INFINITY)), Err(ParseError::NonFinite));
    assert_eq!(with(&|b| put_f64(b, at + pk::GAMMA.start, 0.0)), Err(ParseError::BadKernel));
    assert_eq!(with(&|b| put_f64(b, at + pk::COEF0.start, 1.0)), Err(ParseError::BadKernel));
    assert_eq!(with(&|b| b[at + pk::KERNEL] = 9), Err(ParseError::BadKernel));
    assert_eq!(with(&|b| b[at + pk::RESERVED.start] = 1), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| b[at + pk::ROWS.start] = 0), Err(ParseError::BadDimensions));
    assert_eq!(with(&|b| b[at + pk::ROWS.start] = 2), Err(ParseError::BadSection { id: section_id::PREF_BASIS }));
    let w = section_offset(&good, section_id::PREF_W);
    assert_eq!(with(&|b| put_f64(b, w, -0.5)), Err(ParseError::BadSection { id: section_id::PREF_W }));
    // |W_10| = 0.045 > 1.001·√(0.05·0.04) = 0.04477.
    assert_eq!(with(&|b| put_f64(b, w + 8, 0.045)), Err(ParseError::BadSection { id: section_id::PREF_W }));
    assert_eq!(with(&|b| put_f64(b, w + 8, f64::NAN)), Err(ParseError::NonFinite));
    let alpha = section_offset(&good, section_id::PREF_ALPHA);
    assert_eq!(with(&|b| put_f64(b, alpha, f64::NEG_INFINITY)), Err(ParseError::NonFinite));
    assert_eq!(with(&|b| b[field::DIM.start] = 3), Err(ParseError::BadSection { id: section_id::PREF_BASIS }));
    assert_eq!(
        with(&|b| {
            b[field::FORMAT_MINOR] = 3;
            b[field::MIN_READER_MINOR] = 3;
        }),
        Err(ParseError::BadHeader)
    );
    // The writer refuses what the parser would.
    let check =
        |kernel: Kernel, scale: f64, sigma: f64, basis: &'static [f64], alpha: &'static [f64], w: &'static [f64]| {
            ModelSpec::new(
                Model::PrefInductive(PrefInductiveModel {
                    kernel,
                    scale,
                    sigma,
                    count: 0,
                    dim: 2,
                    basis,
                    alpha,
                    w_packed: w,
                }),
                ElementType::F32,
            )
            .check()
        };
    assert_eq!(check(PI_KERNEL, 2.0, 0.3, &PI_BASIS, &PI_ALPHA, &PI_W), Ok(()));
    assert_eq!(check(Kernel::Rbf { gamma: -1.0 }, 2.0, 0.3, &PI_BASIS, &PI_ALPHA, &PI_W), Err(EmitError::BadKernel));
    assert_eq!(check(PI_KERNEL, 0.0, 0.3, &PI_BASIS, &PI_ALPHA, &PI_W), Err(EmitError::BadState));
    assert_eq!(check(PI_KERNEL, 2.0, 0.0, &PI_BASIS, &PI_ALPHA, &PI_W), Err(EmitError::BadState));
    assert_eq!(check(PI_KERNEL, 2.0, 0.3, &PI_BASIS[..5], &PI_ALPHA, &PI_W), Err(EmitError::BadDimensions));
    assert_eq!(check(PI_KERNEL, 2.0, 0.3, &PI_BASIS, &PI_ALPHA[..2], &PI_W), Err(EmitError::BadDimensions));
    assert_eq!(check(PI_KERNEL, 2.0, 0.3, &PI_BASIS, &PI_ALPHA, &PI_W[..5]), Err(EmitError::BadDimensions));
    assert_eq!(
        check(PI_KERNEL, 2.0, 0.3, &PI_BASIS, &PI_ALPHA, &[0.5, 0.9, 0.4, 0.0, 0.0, 0.3]),
        Err(EmitError::BadState)
    );
    assert_eq!(check(PI_KERNEL, 2.0, 0.3, &PI_BASIS, &[0.5, f64::NAN, 0.25], &PI_W), Err(EmitError::NonFinite));
    // The builder packs the lower triangle of a full W.
    let full = unpack(&PI_W, 3);
    let mut buf = [0.0; 6];
    let fit = |dim| PrefInductiveModel {
        kernel: PI_KERNEL,
        scale: 2.0,
        sigma: 0.3,
        count: 11,
        dim,
        basis: &PI_BASIS,
        alpha: &PI_ALPHA,
        w_packed: &[],
    };
    let m = pref_inductive_model(fit(2), PrefMatRef::from_row_major(&full, 3, 3).unwrap(), &mut buf).unwrap();
    assert_eq!(emit(&ModelSpec::new(m, ElementType::F64)), good);
    let wm = PrefMatRef::from_row_major(&full, 3, 3).unwrap();
    assert_eq!(pref_inductive_model(fit(3), wm, &mut [0.0; 6]).map(|_| ()), Err(EmitError::BadDimensions));
}

/// A valid kind-10 model: N = 3 items, rank p = 2.
const LR_MEAN: [f64; 3] = [0.5, -0.25, 1.0];
const LR_RESID: [f64; 3] = [0.1, 0.0, 0.2];
const LR_C: [f64; 6] = [1.0, 0.5, -0.5, 0.25, 0.0, 2.0];

fn pref_lowrank_spec(et: ElementType, names: &'static str) -> ModelSpec<'static> {
    ModelSpec::new(
        Model::PrefLowRank(PrefLowRankModel {
            sigma: 0.7,
            count: 9,
            rank: 2,
            mean: Values::F64(&LR_MEAN),
            resid: Values::F64(&LR_RESID),
            factor: Values::F64(&LR_C),
            item_names: names,
        }),
        et,
    )
}

#[test]
fn pref_lowrank_round_trip_and_pair_variances() {
    for et in [ElementType::F32, ElementType::F64] {
        for names in ["", PREF_NAMES] {
            let bytes = emit(&pref_lowrank_spec(et, names).with_metadata("algorithm=xpgp\n"));
            let v = ModelView::new_checked(&bytes).unwrap();
            assert_eq!(v.kind(), ModelKind::PrefLowRank);
            assert_eq!(v.kind().code(), 10);
            assert_eq!(v.format_version(), Version { major: 1, minor: 5 });
            assert_eq!(v.min_reader_version(), Version { major: 1, minor: 5 });
            assert_eq!(v.dim(), 3);
            assert!(v.pref_gp().is_none() && v.pref_inductive().is_none());
            assert_eq!(v.score_dense(&[0.0; 3]), Err(ScoreError::KindMismatch));
            let p = v.pref_lowrank().unwrap();
            assert_eq!((p.items(), p.rank(), p.sigma(), p.count()), (3, 2, 0.7, 9));
            assert_eq!(p.item_names(), names);
            // f32 stores every value here exactly but 0.1 and 0.2.
            let tol = if et == ElementType::F32 { 1e-7 } else { 1e-15 };
            let cov = |i: usize, j: usize| {
                let d = LR_C[2 * i] * LR_C[2 * j] + LR_C[2 * i + 1] * LR_C[2 * j + 1];
                d + if i == j { LR_RESID[i] } else { 0.0 }
            };
            for i in 0..3 {
                for j in 0..3 {
                    assert!((p.cov(i, j) - cov(i, j)).abs() <= tol, "cov({i}, {j})");
                    let (m, var) = p.pair(i, j).unwrap();
                    let want = if i == j { 0.0 } else { cov(i, i) + cov(j, j) - 2.0 * cov(i, j) };
                    assert!((m - (LR_MEAN[i] - LR_MEAN[j])).abs() <= tol && (var - want).abs() <= 4.0 * tol);
                    let (pr, v2) = p.prob(i, j).unwrap();
                    let z = (LR_MEAN[i] - LR_MEAN[j]) / (2.0 * 0.49 + want).sqrt();
                    assert!((pr - crate::special::norm_cdf(z)).abs() <= 4.0 * tol && v2 == var);
                }
            }
            assert!(p.cov(3, 0).is_nan() && p.pair(0, 3).is_none() && p.prob(3, 3).is_none());
            if !names.is_empty() {
                assert_eq!(p.item_name(2), Some("cherry"));
            }
        }
    }
}

#[test]
fn pref_lowrank_errors() {
    let good = emit(&pref_lowrank_spec(ElementType::F32, PREF_NAMES));
    let id = section_id::PREF_LOWRANK;
    let at = section_offset(&good, id);
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        fix_crc(&mut b);
        ModelView::new_checked(&b).map(|_| ())
    };
    assert_eq!(with(&|_| ()), Ok(()));
    let put_f64 = |b: &mut Vec<u8>, at: usize, x: f64| b[at..at + 8].copy_from_slice(&x.to_le_bytes());
    let put_f32 = |b: &mut Vec<u8>, at: usize, x: f32| b[at..at + 4].copy_from_slice(&x.to_le_bytes());
    let lay = |f: field::Field| at + f.start;
    assert_eq!(with(&|b| put_f64(b, lay(field::pref_lowrank::SIGMA), 0.0)), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| put_f64(b, lay(field::pref_lowrank::SIGMA), f64::NAN)), Err(ParseError::NonFinite));
    assert_eq!(with(&|b| b[lay(field::pref_lowrank::RESERVED) + 3] = 1), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| b[lay(field::pref_lowrank::RANK)] = 0), Err(ParseError::BadSection { id }));
    // A rank that does not match the section's length.
    assert!(with(&|b| b[lay(field::pref_lowrank::RANK)] = 3).is_err());
    assert!(with(&|b| b[lay(field::pref_lowrank::RANK) + 7] = 0x80).is_err());
    // r starts after μ (3 f32); r_1 < 0 is not a variance.
    let r = at + field::pref_lowrank::LEN + 3 * 4;
    assert_eq!(with(&|b| put_f32(b, r + 4, -1e-6)), Err(ParseError::BadSection { id }));
    assert_eq!(with(&|b| put_f32(b, r + 8 + 4, f32::INFINITY)), Err(ParseError::NonFinite));
    // A file claiming 1.4 cannot hold kind 10.
    assert_eq!(
        with(&|b| {
            b[field::FORMAT_MINOR] = 4;
            b[field::MIN_READER_MINOR] = 4;
        }),
        Err(ParseError::BadHeader)
    );
    // Another kind's section in a kind-10 file.
    let entry = (0..2)
        .map(|e| field::HEADER_LEN + e * field::section::ENTRY_LEN)
        .find(|&e| u16::from_le_bytes([good[e], good[e + 1]]) == section_id::PREF_ITEM_NAMES)
        .unwrap();
    assert_eq!(
        with(&|b| b[entry] = section_id::PREF_ALPHA as u8),
        Err(ParseError::BadSection { id: section_id::PREF_ALPHA })
    );
    // Every truncation is an error.
    for len in 0..good.len() {
        assert!(ModelView::new_checked(&good[..len]).is_err());
    }

    // The writer refuses what the parser would.
    let check = |sigma: f64, rank: usize, resid: &'static [f64], names: &'static str| {
        ModelSpec::new(
            Model::PrefLowRank(PrefLowRankModel {
                sigma,
                count: 0,
                rank,
                mean: Values::F64(&LR_MEAN),
                resid: Values::F64(resid),
                factor: Values::F64(&LR_C),
                item_names: names,
            }),
            ElementType::F64,
        )
        .check()
    };
    assert_eq!(check(0.7, 2, &LR_RESID, ""), Ok(()));
    assert_eq!(check(0.0, 2, &LR_RESID, ""), Err(EmitError::BadState));
    assert_eq!(check(0.7, 2, &[0.1, -0.1, 0.0], ""), Err(EmitError::BadState));
    assert_eq!(check(0.7, 0, &LR_RESID, ""), Err(EmitError::BadDimensions));
    assert_eq!(check(0.7, 3, &LR_RESID, ""), Err(EmitError::BadDimensions));
    assert_eq!(check(0.7, 2, &[0.1, 0.0], ""), Err(EmitError::BadDimensions));
    assert_eq!(check(0.7, 2, &LR_RESID, "a\nb\n"), Err(EmitError::BadDimensions));
    assert_eq!(check(f64::NAN, 2, &LR_RESID, ""), Err(EmitError::NonFinite));
}
