//! Fitting one model with fixed hyperparameters: the glue between a
//! [`Table`] and the learners of `ranklet_core::learn`. No algorithm lives
//! here — only the choice of primal or dual by shape, buffer allocation, and
//! the conversion of a linear-kernel solution into a linear model.

use ranklet_core::backend::Backend;
use ranklet_core::graph::{Graph, Pair, QueryWeight};
use ranklet_core::kernel::{kernel_matrix, kernel_matrix_workspace_len, Kernel, Rows};
use ranklet_core::learn;
use ranklet_core::{LinalgError, MatMut, MatRef};

use crate::table::Table;

/// The learners of the rankers issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Algo {
    /// Regularised least squares on the scores (ridge regression).
    Rls,
    /// Least squares on score differences within queries / pairs.
    Rankrls,
    /// Regression on the top-p kernel principal components.
    Kpcr,
    /// RankRLS on the top-p kernel principal components (000 §4).
    Kpcrank,
}

impl Algo {
    /// Whether the learner ranks (uses the preference graph) rather than
    /// regresses.
    pub fn is_ranker(self) -> bool {
        matches!(self, Algo::Rankrls | Algo::Kpcrank)
    }
    /// Whether the learner uses kernel principal components.
    pub fn is_kpc(self) -> bool {
        matches!(self, Algo::Kpcr | Algo::Kpcrank)
    }
    /// Lower-case name, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Rls => "rls",
            Algo::Rankrls => "rankrls",
            Algo::Kpcr => "kpcr",
            Algo::Kpcrank => "kpcrank",
        }
    }
}

/// One point of the hyperparameter grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// The kernel.
    pub kernel: Kernel,
    /// Ridge λ (RLS/RankRLS: > 0 for dual problems; KPC: ≥ 0).
    pub lambda: f64,
    /// Number of principal components (KPC learners only).
    pub components: usize,
}

/// What the scores of the training rows are compared with.
#[derive(Clone, Copy, Debug)]
pub enum Target<'a> {
    /// The labels of the rows, compared within queries (or as regression
    /// targets).
    Labels(QueryWeight),
    /// Explicit pairs over the table's rows.
    Pairs(&'a [Pair]),
}

/// A trained model in host memory (f64), before it is written as `.rkl`.
#[derive(Clone, Debug)]
pub enum Fitted {
    /// `f(x) = offset + w·x`.
    Linear {
        /// Weights (`d`).
        w: Vec<f64>,
        /// Offset.
        offset: f64,
    },
    /// `f(x) = offset + Σᵢ αᵢ k̃(x, xᵢ)`, with `k̃` the test-centred kernel
    /// when `centring` is present (KPC learners).
    Kernel {
        /// Kernel.
        kernel: Kernel,
        /// The basis rows (the training rows).
        basis: Box<Table>,
        /// Coefficients (`basis.n()`).
        alpha: Vec<f64>,
        /// Offset.
        offset: f64,
        /// Column means of the training kernel and its grand mean.
        centring: Option<(Vec<f64>, f64)>,
    },
}

/// Errors of fitting: numerical failure or a parameter the data cannot
/// support (e.g. more components than the kernel matrix has rank).
#[derive(Debug)]
pub enum FitError {
    /// A core routine refused or failed.
    Linalg(LinalgError),
    /// The requested number of components exceeds the numerical rank.
    TooManyComponents {
        /// Requested p.
        requested: usize,
        /// Usable components.
        rank: usize,
    },
    /// The learner cannot use this kind of supervision.
    Unsupported(&'static str),
}

impl From<LinalgError> for FitError {
    fn from(e: LinalgError) -> Self {
        FitError::Linalg(e)
    }
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FitError::Linalg(LinalgError::NotPositiveDefinite { .. }) => {
                f.write_str("the training system is singular (increase --lambda)")
            }
            FitError::Linalg(e) => write!(f, "{e}"),
            FitError::TooManyComponents { requested, rank } => {
                write!(f, "--components {requested} exceeds the numerical rank {rank} of the (centred) kernel matrix")
            }
            FitError::Unsupported(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FitError {}

/// The core graph for a table and target.
pub fn graph<'a>(algo: Algo, table: &'a Table, target: &Target<'a>) -> Graph<'a> {
    match (algo.is_ranker(), target) {
        (_, Target::Pairs(p)) => Graph::Pairs { n: table.n(), pairs: p },
        (false, _) => Graph::Identity { n: table.n() },
        (true, Target::Labels(w)) => Graph::Queries { query_ptr: &table.query_ptr, weight: *w },
    }
}

/// Whether the primal (feature-space) solve is the cheaper one: linear
/// kernel, dense rows and no more features than rows (`d³ + n·d²` against
/// `n³ + n²·d`).
pub fn use_primal(algo: Algo, params: &Params, table: &Table) -> bool {
    !algo.is_kpc() && params.kernel == Kernel::Linear && table.dense().is_some() && table.d() <= table.n()
}

/// The kernel matrix between the rows of `a` and `b` (`a.n() × b.n()`,
/// column-major).
pub fn kernel_between<B: Backend>(
    backend: &mut B,
    kernel: &Kernel,
    a: &Table,
    b: &Table,
) -> Result<Vec<f64>, LinalgError> {
    let (x, y) = (a.rows()?, b.rows()?);
    let mut out = vec![0.0; a.n() * b.n()];
    let mut work = vec![0.0; kernel_matrix_workspace_len(&x, &y)];
    kernel_matrix(backend, kernel, &x, &y, MatMut::from_col_major(&mut out, a.n(), b.n())?, &mut work)?;
    Ok(out)
}

/// Fits one model on all rows of `table`.
pub fn fit<B: Backend>(
    backend: &mut B,
    algo: Algo,
    params: &Params,
    table: &Table,
    target: &Target<'_>,
) -> Result<Fitted, FitError> {
    if matches!(target, Target::Pairs(_)) && !algo.is_ranker() {
        return Err(FitError::Unsupported("rls and kpcr regress on scores; use rankrls or kpcrank with --pairs"));
    }
    let g = graph(algo, table, target);
    let n = table.n();
    if use_primal(algo, params, table) {
        let x = table.dense().ok_or(LinalgError::DimensionMismatch)?;
        let mut w = vec![0.0; table.d()];
        let mut work = vec![0.0; learn::ls_primal_workspace_len(n, table.d())];
        learn::ls_primal(backend, x, &g, &table.labels, params.lambda, &mut w, &mut work)?;
        return Ok(Fitted::Linear { w, offset: 0.0 });
    }
    let k = kernel_between(backend, &params.kernel, table, table)?;
    let kv = MatRef::from_col_major(&k, n, n)?;
    if !algo.is_kpc() {
        let mut a = vec![0.0; n];
        let mut work = vec![0.0; learn::ls_dual_workspace_len(n)];
        learn::ls_dual(backend, kv, &g, &table.labels, params.lambda, &mut a, &mut work)?;
        return Ok(expansion_to_model(params.kernel, table, a, 0.0, None)?);
    }
    let kpc = KpcFit::new(backend, kv, params.components)?;
    if kpc.rank < params.components {
        return Err(FitError::TooManyComponents { requested: params.components, rank: kpc.rank });
    }
    let sol = kpc.solve_all(backend, &g, &table.labels, params.lambda, params.components)?;
    if sol.usable < params.components {
        return Err(FitError::TooManyComponents { requested: params.components, rank: sol.usable });
    }
    let w = sol.weights(params.components)?;
    let mut alpha = vec![0.0; n];
    learn::kpc_coefficients(&kpc.vals, kpc.vecs()?, &w, &mut alpha)?;
    let offset = if algo.is_ranker() { 0.0 } else { learn::mean(&table.labels) };
    Ok(expansion_to_model(params.kernel, table, alpha, offset, Some((kpc.colmean.clone(), kpc.grand)))?)
}

/// A kernel expansion as a model; with the linear kernel it is folded into
/// `w = Xᵀα` (minus the centring terms), so a linear kernel always gives a
/// linear model.
fn expansion_to_model(
    kernel: Kernel,
    table: &Table,
    alpha: Vec<f64>,
    offset: f64,
    centring: Option<(Vec<f64>, f64)>,
) -> Result<Fitted, LinalgError> {
    if kernel != Kernel::Linear {
        return Ok(Fitted::Kernel { kernel, basis: Box::new(table.clone()), alpha, offset, centring });
    }
    let rows = table.rows()?;
    let mut w = vec![0.0; table.d()];
    learn::dual_to_primal(&rows, &alpha, &mut w)?;
    let mut off = offset;
    if let Some((colmean, grand)) = centring {
        // k̃(x, xᵢ) = x·xᵢ − x·x̄ − colmeanᵢ + grand, x̄ = mean training row.
        let sa: f64 = alpha.iter().sum();
        let ones = vec![1.0 / table.n() as f64; table.n()];
        let mut xbar = vec![0.0; table.d()];
        learn::dual_to_primal(&rows, &ones, &mut xbar)?;
        w.iter_mut().zip(&xbar).for_each(|(wj, xj)| *wj -= sa * xj);
        off += sa * grand - alpha.iter().zip(&colmean).map(|(a, c)| a * c).sum::<f64>();
    }
    Ok(Fitted::Linear { w, offset: off })
}

/// One decomposition of a centred training kernel, reusable for every λ
/// and every p ≤ p_max (000 §4.2).
pub struct KpcFit {
    /// Top eigenvalues, largest first.
    pub vals: Vec<f64>,
    vecs: Vec<f64>,
    n: usize,
    /// Column means of the uncentred kernel.
    pub colmean: Vec<f64>,
    /// Grand mean of the uncentred kernel.
    pub grand: f64,
    /// Numerical rank among the computed components.
    pub rank: usize,
}

/// The factored normal equations of one λ, for every p ≤ usable.
pub struct KpcSolution {
    m: Vec<f64>,
    r: Vec<f64>,
    p_max: usize,
    /// Leading components whose normal equations are positive definite.
    pub usable: usize,
}

impl KpcSolution {
    /// `w̄_p` for `p ≤ usable` components (O(p²)).
    pub fn weights(&self, p: usize) -> Result<Vec<f64>, LinalgError> {
        if p > self.usable {
            return Err(LinalgError::InvalidParameter);
        }
        let mut w = vec![0.0; p];
        learn::kpc_solve(MatRef::from_col_major(&self.m, self.p_max, self.p_max)?, &self.r, &mut w)?;
        Ok(w)
    }
}

impl KpcFit {
    /// Centres `k` (`n × n`) and computes its top `p_max` eigenpairs.
    pub fn new<B: Backend>(backend: &mut B, k: MatRef<'_, f64>, p_max: usize) -> Result<Self, FitError> {
        let n = k.nrows();
        if p_max == 0 {
            return Err(FitError::Unsupported("--components must be at least 1"));
        }
        if p_max > n {
            return Err(FitError::TooManyComponents { requested: p_max, rank: n });
        }
        let mut kc = vec![0.0; n * n];
        let mut colmean = vec![0.0; n];
        let grand = learn::center_kernel(k, MatMut::from_col_major(&mut kc, n, n)?, &mut colmean)?;
        let mut vals = vec![0.0; p_max];
        let mut vecs = vec![0.0; n * p_max];
        let mut work = vec![0.0; learn::kpc_decompose_workspace_len(n, p_max)];
        let rank = learn::kpc_decompose(
            backend,
            MatRef::from_col_major(&kc, n, n)?,
            &mut vals,
            MatMut::from_col_major(&mut vecs, n, p_max)?,
            &mut work,
        )?;
        Ok(KpcFit { vals, vecs, n, colmean, grand, rank })
    }

    /// The eigenvectors (`n × p_max`).
    pub fn vecs(&self) -> Result<MatRef<'_, f64>, LinalgError> {
        MatRef::from_col_major(&self.vecs, self.n, self.vals.len())
    }

    /// Builds and factors `M = ZᵀLZ + λI` for the first `min(p_max, rank)`
    /// components.
    pub fn solve_all<B: Backend>(
        &self,
        backend: &mut B,
        graph: &Graph<'_>,
        s: &[f64],
        lambda: f64,
        p_max: usize,
    ) -> Result<KpcSolution, LinalgError> {
        let p = p_max.min(self.rank);
        let mut m = vec![0.0; p * p];
        let mut r = vec![0.0; p];
        let mut work = vec![0.0; learn::kpc_normal_equations_workspace_len(self.n, p)];
        let vecs = MatRef::from_col_major(&self.vecs, self.n, self.vals.len())?;
        learn::kpc_normal_equations(
            backend,
            graph,
            s,
            &self.vals[..p],
            vecs,
            lambda,
            MatMut::from_col_major(&mut m, p, p)?,
            &mut r,
            &mut work,
        )?;
        let usable = learn::kpc_factor(MatMut::from_col_major(&mut m, p, p)?)?;
        Ok(KpcSolution { m, r, p_max: p, usable })
    }
}

impl Fitted {
    /// Scores (f64) of the rows of `table`.
    pub fn predict<B: Backend>(&self, backend: &mut B, table: &Table) -> Result<Vec<f64>, LinalgError> {
        match self {
            Fitted::Linear { w, offset } => {
                let mut out = vec![*offset; table.n()];
                for (i, o) in out.iter_mut().enumerate() {
                    let (c, v) = table.row(i);
                    // Features beyond the model's dimension have weight 0.
                    *o += c.iter().zip(v).map(|(&c, &v)| w.get(c as usize).copied().unwrap_or(0.0) * v).sum::<f64>();
                }
                Ok(out)
            }
            Fitted::Kernel { kernel, basis, alpha, offset, centring } => {
                let (nt, n) = (table.n(), basis.n());
                let mut kt = kernel_between(backend, kernel, table, basis)?;
                if let Some((colmean, grand)) = centring {
                    let mut c = vec![0.0; nt * n];
                    learn::center_test_kernel(
                        MatRef::from_col_major(&kt, nt, n)?,
                        colmean,
                        *grand,
                        MatMut::from_col_major(&mut c, nt, n)?,
                    )?;
                    kt = c;
                }
                let mut out = vec![0.0; nt];
                ranklet_core::linalg::blas::gemv(1.0, MatRef::from_col_major(&kt, nt, n)?, alpha, 0.0, &mut out)?;
                out.iter_mut().for_each(|v| *v += offset);
                Ok(out)
            }
        }
    }
}

/// Rows of a fitted model's basis, for writers.
pub fn basis_rows(t: &Table) -> Result<Rows<'_>, LinalgError> {
    t.rows()
}
