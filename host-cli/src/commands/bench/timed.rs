//! A [`Backend`] that times every call it forwards, and the time between
//! calls, for `ranklet bench pref --breakdown`: where one EP fit spends
//! its time, operation by operation.
//!
//! Each backend call is timed under its operation's name; the time spent
//! in core between two calls is booked under `core: A → B` (the calls
//! before and after it), which names the serial code there without
//! touching core (e.g. `core: pair_sq_dists → pair_scatter` is the round's
//! two `gemv`, the site passes and `α`; `core: cholesky → pair_scatter`
//! the reversed copies of the prior's factor). Every method of the trait
//! is forwarded, defaults included, so the wrapped backend's overrides are
//! the ones timed.

use std::time::{Duration, Instant};

use ranklet_core::backend::{Backend, Tri};
use ranklet_core::graph::{Graph, Pair};
use ranklet_core::kernel::Kernel;
use ranklet_core::{LinalgError, MatMut, MatRef};

/// Time and calls of one operation (or one stretch of core code).
#[derive(Clone, Debug, Default)]
pub struct OpTime {
    /// `cholesky`, `gemm_lower`, …, or `core: A → B`.
    pub name: String,
    /// Number of calls (or stretches).
    pub calls: usize,
    /// Their total time.
    pub total: Duration,
}

/// The timing wrapper (see the module docs).
pub struct Timed<B> {
    inner: B,
    ops: Vec<OpTime>,
    last_op: &'static str,
    last_end: Instant,
}

impl<B: Backend> Timed<B> {
    /// Wraps `inner`; the clock starts at [`Timed::start`].
    pub fn new(inner: B) -> Self {
        Timed { inner, ops: Vec::new(), last_op: "start", last_end: Instant::now() }
    }

    /// Forgets what was recorded and starts the clock: the next gap is
    /// booked as `core: start → …`.
    pub fn start(&mut self) {
        self.ops.clear();
        self.last_op = "start";
        self.last_end = Instant::now();
    }

    /// Books the time since the last call as `core: last → end` and
    /// returns what was recorded, in order of first appearance.
    pub fn finish(&mut self) -> Vec<OpTime> {
        let now = Instant::now();
        let gap = now - self.last_end;
        self.book(format!("core: {} → end", self.last_op), gap);
        std::mem::take(&mut self.ops)
    }

    fn book(&mut self, name: String, d: Duration) {
        match self.ops.iter_mut().find(|o| o.name == name) {
            Some(o) => {
                o.calls += 1;
                o.total += d;
            }
            None => self.ops.push(OpTime { name, calls: 1, total: d }),
        }
    }

    /// Runs one forwarded call under `name`.
    fn time<R>(&mut self, name: &'static str, f: impl FnOnce(&mut B) -> R) -> R {
        let t0 = Instant::now();
        let gap = t0 - self.last_end;
        self.book(format!("core: {} → {name}", self.last_op), gap);
        let r = f(&mut self.inner);
        let t1 = Instant::now();
        self.book(name.to_string(), t1 - t0);
        self.last_op = name;
        self.last_end = t1;
        r
    }
}

impl<B: Backend> Backend for Timed<B> {
    fn gemm(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.time("gemm", |be| be.gemm(alpha, a, b, beta, c))
    }
    fn gemm_lower(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        a_tri: Tri,
        b: MatRef<'_, f64>,
        b_tri: Tri,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.time("gemm_lower", |be| be.gemm_lower(alpha, a, a_tri, b, b_tri, beta, c))
    }
    fn syrk(&mut self, alpha: f64, a: MatRef<'_, f64>, beta: f64, c: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("syrk", |be| be.syrk(alpha, a, beta, c))
    }
    fn sym_eigen(&mut self, a: MatRef<'_, f64>, vals: &mut [f64], vecs: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("sym_eigen", |be| be.sym_eigen(a, vals, vecs))
    }
    fn sym_eigen_pair(
        &mut self,
        a1: MatRef<'_, f64>,
        vals1: &mut [f64],
        vecs1: MatMut<'_, f64>,
        a2: MatRef<'_, f64>,
        vals2: &mut [f64],
        vecs2: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.time("sym_eigen_pair", |be| be.sym_eigen_pair(a1, vals1, vecs1, a2, vals2, vecs2))
    }
    fn sym_eigen_top_k(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.time("sym_eigen_top_k", |be| be.sym_eigen_top_k(a, vals, vecs))
    }
    fn cholesky_in_place(&mut self, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("cholesky", |be| be.cholesky_in_place(a))
    }
    fn cholesky_solve_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("cholesky_solve", |be| be.cholesky_solve_in_place(l, b))
    }
    fn solve_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("solve_lower", |be| be.solve_lower_in_place(l, b))
    }
    fn solve_lower_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("solve_lower_lower", |be| be.solve_lower_lower_in_place(l, b))
    }
    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("sym_solve", |be| be.sym_solve_in_place(a, b))
    }
    fn lu_solve_in_place(&mut self, a: MatMut<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("lu_solve", |be| be.lu_solve_in_place(a, b))
    }
    fn kernel_values(
        &mut self,
        kernel: &Kernel,
        xn: &[f64],
        yn: &[f64],
        symmetric: bool,
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.time("kernel_values", |be| be.kernel_values(kernel, xn, yn, symmetric, out))
    }
    fn center_kernel_in_place(&mut self, k: MatMut<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
        self.time("center_kernel", |be| be.center_kernel_in_place(k, colmean))
    }
    fn pair_sq_dists(&mut self, c: MatRef<'_, f64>, pairs: &[Pair], out: &mut [f64]) -> Result<(), LinalgError> {
        self.time("pair_sq_dists", |be| be.pair_sq_dists(c, pairs, out))
    }
    fn pair_scatter(
        &mut self,
        a: MatRef<'_, f64>,
        a_tri: Tri,
        pairs: &[Pair],
        tau: &[f64],
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        self.time("pair_scatter", |be| be.pair_scatter(a, a_tri, pairs, tau, out))
    }
    fn laplacian_columns(
        &mut self,
        pairs: &[Pair],
        tau: &[f64],
        q: MatMut<'_, f64>,
        tmp: &mut [f64],
    ) -> Result<(), LinalgError> {
        self.time("laplacian_columns", |be| be.laplacian_columns(pairs, tau, q, tmp))
    }
    fn sqrt_sandwich_in_place(&mut self, graph: &Graph<'_>, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        self.time("sqrt_sandwich", |be| be.sqrt_sandwich_in_place(graph, a))
    }
}
