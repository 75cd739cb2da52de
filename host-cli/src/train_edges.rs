//! The training driver on labelled edges (Kronecker RLS / RankRLS, paper
//! 004), without a command line: a plain request ([`EdgesRequest`]), the
//! nodes and edges already read or built from arrays, progress and
//! cancellation through the callback. `ranklet train --edges` and the
//! Python estimators both call [`fit_edges`], so the same data and request
//! give the same model bytes.

use ranklet_core::format::ElementType;
use ranklet_core::kernel::Kernel;
use ranklet_core::linalg::cg::CgInfo;

use crate::args::QueryWeightArg;
use crate::cv::{cross_validate_edges, CvReport};
use crate::data::EdgeData;
use crate::error::CliError;
use crate::family::kron::{model_file_bytes, EdgeMetric, EdgeProblem, KronAlgo, NodeRepr, NodeSets, PairArg};
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::progress::OnProgress;

/// What to fit (`ranklet train --edges …`'s flags as plain values).
#[derive(Clone, Debug)]
pub struct EdgesRequest {
    /// The learner.
    pub algo: KronAlgo,
    /// The node kernel (features; ignored for precomputed kernels).
    pub kernel: Kernel,
    /// The pair kernel.
    pub pair: PairArg,
    /// Query weighting of the ranking loss.
    pub query_weight: QueryWeightArg,
    /// λ, or the grid CV chooses from.
    pub lambdas: Vec<f64>,
    /// Folds over conditioning nodes, if cross-validating.
    pub folds: Option<usize>,
    /// The CV metric.
    pub metric: EdgeMetric,
    /// Seed of the folds.
    pub seed: u64,
    /// CG iterations at most (incomplete graphs).
    pub max_iter: usize,
    /// Element type of the model file.
    pub element: ElementType,
    /// The backend.
    pub backend: BackendChoice,
}

impl EdgesRequest {
    /// The checks of the request alone (before any data is read).
    ///
    /// # Errors
    /// A λ that is not finite and ≥ 0, no CG iteration, a grid without CV.
    pub fn check(&self) -> Result<(), CliError> {
        if let Some(l) = self.lambdas.iter().find(|l| !(l.is_finite() && **l >= 0.0)) {
            return Err(CliError::input(format!("--lambda must be a finite number ≥ 0, got {l}")));
        }
        if self.lambdas.is_empty() {
            return Err(CliError::input("--lambda: empty"));
        }
        if self.max_iter == 0 {
            return Err(CliError::input("--max-iter must be ≥ 1"));
        }
        if self.lambdas.len() > 1 && self.folds.is_none() {
            return Err(CliError::input("a grid of values (comma list) needs --cv K to choose among them"));
        }
        Ok(())
    }

    /// The pair kernel fits the node sets: symmetric and reciprocal pair
    /// kernels need one.
    ///
    /// # Errors
    /// Otherwise.
    pub fn check_nodes(&self, nodes: &NodeSets) -> Result<(), CliError> {
        if self.pair != PairArg::Kron && !nodes.one_domain {
            return Err(CliError::input(format!(
                "--pair-kernel {}: symmetric and reciprocal pair kernels need one node set (--nodes, or --kernel-u alone)",
                self.pair.name()
            )));
        }
        Ok(())
    }
}

/// A trained model and what a caller may report about it.
#[derive(Clone, Debug)]
pub struct EdgesFit {
    /// The `.rkl` file.
    pub bytes: Vec<u8>,
    /// The kind of pair model written.
    pub kind: &'static str,
    /// The chosen λ.
    pub lambda: f64,
    /// The CV table, if cross-validated.
    pub report: Option<CvReport<f64>>,
    /// CG's report (incomplete graphs).
    pub cg: Option<CgInfo>,
    /// The problem in one line (edges, nodes, solver).
    pub describe: String,
}

/// Fits `req` on `edges` over `nodes`: CV over conditioning nodes when
/// asked, the final fit on every node, the model file (`source` names the
/// edges in its metadata).
///
/// # Errors
/// The request's and the data's checks, a failed fit; `interrupted` when
/// `on` stops it.
pub fn fit_edges(
    req: &EdgesRequest,
    nodes: &NodeSets,
    edges: &EdgeData,
    source: &str,
    on: OnProgress<'_>,
) -> Result<EdgesFit, CliError> {
    req.check()?;
    req.check_nodes(nodes)?;
    let (algo, pair, max_iter) = (req.algo, req.pair, req.max_iter);
    let mut backend = HostBackend::new(req.backend);
    let prob = EdgeProblem::new(&mut backend, algo, pair, req.query_weight.to_core(), &req.kernel, nodes, edges)?;
    let complete = prob.edges.len() == prob.n_u * prob.n_v;
    let describe = format!(
        "{source}: {} edges, {} × {} nodes, {} graph ({})",
        prob.edges.len(),
        prob.n_u,
        prob.n_v,
        if complete { "complete" } else { "incomplete" },
        if complete && !(pair != PairArg::Kron && algo == KronAlgo::Rankrls) {
            "closed form, one eigendecomposition for every λ".to_string()
        } else {
            format!("conjugate gradient, at most {max_iter} iterations")
        }
    );
    let report = match req.folds {
        Some(k) => {
            Some(cross_validate_edges(&mut backend, &prob, &req.lambdas, k, req.metric, req.seed, max_iter, &mut *on)?)
        }
        None => None,
    };
    let lambda = match &report {
        Some(r) => {
            let best = r.best().ok_or_else(|| {
                let why = r.points.iter().find_map(|p| p.failure.clone()).unwrap_or_default();
                CliError::input(format!("no grid point could be evaluated: {why}"))
            })?;
            r.points[best].params
        }
        None => req.lambdas[0],
    };
    let all_u: Vec<usize> = (0..prob.n_u).collect();
    let all_v: Vec<usize> = (0..prob.n_v).collect();
    let fit = prob.fit_subset(&mut backend, &all_u, &all_v, &[lambda], max_iter, on).pop();
    let fit = fit.unwrap_or_else(|| Err(CliError::failure("no fit")))?;
    let mut meta = format!(
        "algorithm={}\ntraining_edges={source}\nedges={}\nn_u={}\nn_v={}\ndomains={}\ncomplete={}\npair_kernel={}\nnode_kernel={}\nquery_weight={}\nlambda={lambda}\n",
        algo.name(),
        prob.edges.len(),
        prob.n_u,
        prob.n_v,
        if nodes.one_domain { "one" } else { "two" },
        u8::from(complete),
        pair.name(),
        match nodes.u.repr {
            NodeRepr::Precomputed { .. } => "precomputed".to_string(),
            _ => req.kernel.to_string(),
        },
        req.query_weight.name(),
    );
    match &fit.cg {
        Some(info) => meta.push_str(&format!(
            "solver=cg\ncg_iterations={}\ncg_rel_residual={:e}\nmax_iter={max_iter}\n",
            info.iterations, info.rel_residual
        )),
        None => meta.push_str("solver=closed-form\n"),
    }
    if let Some(r) = &report {
        meta.push_str(&format!("cv={}\ncv_metric={}\n", r.scheme, r.metric.name()));
        for (i, p) in r.points.iter().enumerate() {
            meta.push_str(&format!("cv.{i}=lambda={} mean={} std={}\n", p.params, p.mean(), p.std()));
        }
    }
    let (bytes, kind) = model_file_bytes(&req.kernel, nodes, pair, &fit.coef, req.element, &mut meta)?;
    Ok(EdgesFit { bytes, kind, lambda, report, cg: fit.cg, describe })
}
