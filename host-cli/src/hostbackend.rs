//! The backend the CLI trains with: faer (default, both cores) or core's
//! portable one (`--backend portable`), behind one type.

use ranklet_core::backend::{Backend, Portable, Tri};
use ranklet_core::graph::{Graph, Pair};
use ranklet_core::kernel::Kernel;
use ranklet_core::{LinalgError, MatMut, MatRef};

use crate::faer_backend::FaerBackend;

/// Which implementation of the heavy linear algebra to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// faer, multi-threaded.
    Faer,
    /// ranklet-core's allocation-free single-threaded implementation.
    Portable,
}

impl BackendChoice {
    /// Lower-case name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BackendChoice::Faer => "faer",
            BackendChoice::Portable => "portable",
        }
    }
}

/// A backend chosen at run time.
pub enum HostBackend {
    /// faer.
    Faer(FaerBackend),
    /// Core's portable backend with a growable workspace.
    Portable(Vec<f64>),
}

impl HostBackend {
    /// The chosen backend.
    pub fn new(choice: BackendChoice) -> Self {
        match choice {
            BackendChoice::Faer => HostBackend::Faer(FaerBackend::new()),
            BackendChoice::Portable => HostBackend::Portable(Vec::new()),
        }
    }

    /// A single-threaded backend of the same kind, for tasks already spread
    /// over rayon's threads (one backend per task): its results do not
    /// depend on the number of threads.
    pub fn sequential(&self) -> HostBackend {
        match self {
            HostBackend::Faer(_) => HostBackend::Faer(FaerBackend::sequential()),
            HostBackend::Portable(_) => HostBackend::Portable(Vec::new()),
        }
    }
}

/// Runs `$op` on the faer backend or on a `Portable` over a workspace
/// sized for order `$n`.
macro_rules! dispatch {
    ($self:ident, $n:expr, |$b:ident| $op:expr) => {
        match $self {
            HostBackend::Faer($b) => $op,
            HostBackend::Portable(work) => {
                let need = $n;
                if work.len() < need {
                    work.resize(need, 0.0);
                }
                let $b = &mut Portable::new(work);
                $op
            }
        }
    };
}

impl Backend for HostBackend {
    fn gemm(
        &mut self,
        alpha: f64,
        a: MatRef<'_, f64>,
        b: MatRef<'_, f64>,
        beta: f64,
        c: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.gemm(alpha, a, b, beta, c))
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
        dispatch!(self, 0, |be| be.gemm_lower(alpha, a, a_tri, b, b_tri, beta, c))
    }
    fn syrk(&mut self, alpha: f64, a: MatRef<'_, f64>, beta: f64, c: MatMut<'_, f64>) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.syrk(alpha, a, beta, c))
    }
    fn sym_eigen(&mut self, a: MatRef<'_, f64>, vals: &mut [f64], vecs: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = a.nrows();
        dispatch!(self, ranklet_core::eigen::tridiag::sym_eigen_workspace_len(n), |be| be.sym_eigen(a, vals, vecs))
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
        let n = a1.nrows().max(a2.nrows());
        dispatch!(self, ranklet_core::eigen::tridiag::sym_eigen_workspace_len(n), |be| be
            .sym_eigen_pair(a1, vals1, vecs1, a2, vals2, vecs2))
    }
    fn sym_eigen_top_k(
        &mut self,
        a: MatRef<'_, f64>,
        vals: &mut [f64],
        vecs: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        let (n, k) = (a.nrows(), vals.len());
        dispatch!(self, ranklet_core::eigen::topk::top_k_workspace_len(n, k), |be| be.sym_eigen_top_k(a, vals, vecs))
    }
    fn cholesky_in_place(&mut self, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.cholesky_in_place(a))
    }
    fn cholesky_solve_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.cholesky_solve_in_place(l, b))
    }
    fn solve_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.solve_lower_in_place(l, b))
    }
    fn solve_lower_lower_in_place(&mut self, l: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.solve_lower_lower_in_place(l, b))
    }
    fn sym_solve_in_place(&mut self, a: MatRef<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        let n = a.nrows();
        dispatch!(self, ranklet_core::linalg::ldlt::sym_indefinite_solve_workspace_len(n), |be| be
            .sym_solve_in_place(a, b))
    }
    fn lu_solve_in_place(&mut self, a: MatMut<'_, f64>, b: MatMut<'_, f64>) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.lu_solve_in_place(a, b))
    }
    fn kernel_values(
        &mut self,
        kernel: &Kernel,
        xn: &[f64],
        yn: &[f64],
        symmetric: bool,
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.kernel_values(kernel, xn, yn, symmetric, out))
    }
    fn center_kernel_in_place(&mut self, k: MatMut<'_, f64>, colmean: &mut [f64]) -> Result<f64, LinalgError> {
        dispatch!(self, 0, |be| be.center_kernel_in_place(k, colmean))
    }
    fn sqrt_sandwich_in_place(&mut self, graph: &Graph<'_>, a: MatMut<'_, f64>) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.sqrt_sandwich_in_place(graph, a))
    }
    fn pair_sq_dists(&mut self, c: MatRef<'_, f64>, pairs: &[Pair], out: &mut [f64]) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.pair_sq_dists(c, pairs, out))
    }
    fn pair_scatter(
        &mut self,
        a: MatRef<'_, f64>,
        a_tri: Tri,
        pairs: &[Pair],
        tau: &[f64],
        out: MatMut<'_, f64>,
    ) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.pair_scatter(a, a_tri, pairs, tau, out))
    }
    fn laplacian_columns(
        &mut self,
        pairs: &[Pair],
        tau: &[f64],
        q: MatMut<'_, f64>,
        tmp: &mut [f64],
    ) -> Result<(), LinalgError> {
        dispatch!(self, 0, |be| be.laplacian_columns(pairs, tau, q, tmp))
    }
}
