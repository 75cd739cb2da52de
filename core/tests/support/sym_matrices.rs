//! Symmetric test matrices shared by the nalgebra reference tests
//! (`core/tests/nalgebra_reference.rs`) and the fixed-capacity eigensolver
//! benchmark (`core/examples/bench_fixed_eigen.rs`): random, two tight
//! eigenvalue clusters, and graded (`D·H·D`, D from 1 down to 1e-6). All
//! column-major n × n and exactly symmetric.
#![allow(dead_code)]

/// xorshift64 in [-1, 1).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64) * 2.0 - 1.0
    }
}

/// Column-major n×n.
pub fn random_sym(n: usize, rng: &mut Rng) -> Vec<f64> {
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in j..n {
            let x = rng.next();
            a[i + j * n] = x;
            a[j + i * n] = x;
        }
    }
    a
}

/// A random orthogonal matrix: product of n Householder reflectors.
pub fn random_orthogonal(n: usize, rng: &mut Rng) -> Vec<f64> {
    let mut q = vec![0.0; n * n];
    for i in 0..n {
        q[i + i * n] = 1.0;
    }
    for _ in 0..n {
        let v: Vec<f64> = (0..n).map(|_| rng.next()).collect();
        let vv: f64 = v.iter().map(|x| x * x).sum();
        // q ← q·(I − 2vvᵀ/vᵀv)
        for i in 0..n {
            let s: f64 = (0..n).map(|k| q[i + k * n] * v[k]).sum::<f64>() * 2.0 / vv;
            for k in 0..n {
                q[i + k * n] -= s * v[k];
            }
        }
    }
    q
}

/// Q·diag(λ)·Qᵀ (lower triangle computed, mirrored).
pub fn from_spectrum(q: &[f64], lam: &[f64], n: usize) -> Vec<f64> {
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in j..n {
            let s: f64 = (0..n).map(|k| q[i + k * n] * lam[k] * q[j + k * n]).sum();
            a[i + j * n] = s;
            a[j + i * n] = s;
        }
    }
    a
}

/// Q·diag(λ)·Qᵀ, eigenvalues in two tight clusters (±1 + k·1e-6).
pub fn clustered(n: usize, rng: &mut Rng) -> Vec<f64> {
    let q = random_orthogonal(n, rng);
    let lam: Vec<f64> =
        (0..n).map(|k| if k % 2 == 0 { 1.0 + k as f64 * 1e-6 } else { -1.0 - k as f64 * 1e-6 }).collect();
    from_spectrum(&q, &lam, n)
}

/// D·H·D with D from 1 down to 1e-6 (large entries top-left).
pub fn graded(n: usize, rng: &mut Rng) -> Vec<f64> {
    let h = random_sym(n, rng);
    let d: Vec<f64> = (0..n).map(|i| 10f64.powf(-6.0 * i as f64 / (n - 1) as f64)).collect();
    let mut a = vec![0.0; n * n];
    for j in 0..n {
        for i in 0..n {
            a[i + j * n] = d[i] * h[i + j * n] * d[j];
        }
    }
    a
}
