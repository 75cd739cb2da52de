//! Kronecker conditional ranking (paper 004) as the CLI drives it:
//! `--algo kron-rls | kron-rankrls` on labelled edges (`--edges`) between
//! nodes given by features (`--nodes`, or `--nodes-u`/`--nodes-v`) or by
//! precomputed kernels (`--kernel-u precomputed:FILE`).
//!
//! **Not a [`Family`](super::Family).** That trait's hooks fit and predict
//! *rows* of a [`Table`](crate::table::Table), and its CV splits rows or
//! queries; edge data needs node kernels, an edge list and splits over
//! *nodes*. This module is the sibling driver for edge data: the training
//! problem ([`EdgeProblem`]), one fit on a subset of the nodes for a whole
//! λ grid ([`EdgeProblem::fit_subset`]: one eigendecomposition for every λ
//! on a complete graph, conjugate gradient per λ otherwise), predictions
//! for edges between any nodes ([`predict_edges`]), the conditional metrics
//! over an edge list ([`EdgeMetric`]), and the model encoding used by
//! `-o`/`score`/`eval`/`rank` ([`PairModel`]). The CV loop over
//! conditioning nodes is `crate::cv::cross_validate_edges`.
//!
//! Orientation as in `ranklet_core::learn::kron`: the first node `u` of an
//! edge is the **conditioning** node; each `u` ranks its `v`s.
//!
//! ## Model files
//!
//! Node **features**: the pair kinds of the format (1.2), built by core's
//! `format::pair_model` — a bilinear model (kind 3, `W = X_uᵀ·A·X_v`) for
//! the linear node kernel, a dual pair model (kind 6: the training nodes,
//! their kernel and `A`) for RBF/polynomial node kernels — scored by
//! `ModelView::score_pair_f64` ([`PairModel`]).
//!
//! **Precomputed** node kernels have no stored basis to evaluate a kernel
//! against, so kind 6 cannot hold them; they are written in an interim
//! encoding: a *linear* model over the outer product of the two kernel rows
//! `k_u(u, ·) ⊗ k_v(v, ·)` against the training nodes, `W = A` row-major
//! (metadata `pair_encoding=outer`, `pair_basis=kernel_rows`,
//! `train_u_ids`, `train_v_ids`); scoring new nodes takes their kernel rows
//! (`--kernel-u precomputed:ROWS`).

use ranklet_core::backend::Backend;
use ranklet_core::format::{self, ElementType, ModelSpec, ModelView, PairDomain};
use ranklet_core::graph::QueryWeight;
use ranklet_core::kernel::{kernel_matrix, kernel_matrix_workspace_len, Kernel};
use ranklet_core::learn::kron::{self, Domains, KronEigen, Loss, PairKernel};
use ranklet_core::learn::LearnError;
use ranklet_core::linalg::cg::{CgControl, CgInfo, CgParams};
use ranklet_core::linalg::Rows;
use ranklet_core::metrics;
use ranklet_core::{LinalgError, MatMut, MatRef};

use crate::data::nodes::{read_kernel_rows, KernelOptions};
use crate::data::{read_node_features, read_node_kernel, MatrixLayout, NodeFeatureOptions};
use crate::data::{EdgeData, NodeFeatures, NodeKernel};
use crate::error::CliError;
use crate::metric::Metric;
use crate::progress::{self, OnProgress};

/// The Kronecker learners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KronAlgo {
    /// Regression over the edges (004 eq. 5).
    Rls,
    /// Conditional ranking (004 eq. 6), conditioned on the first node.
    Rankrls,
}

impl KronAlgo {
    /// The `--algo` name.
    pub fn name(self) -> &'static str {
        match self {
            KronAlgo::Rls => "kron-rls",
            KronAlgo::Rankrls => "kron-rankrls",
        }
    }
}

/// `--pair-kernel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PairArg {
    /// Ordinary Kronecker kernel `k(u,ū)·k(v,v̄)` (004 eq. 7).
    #[default]
    Kron,
    /// Symmetric Kronecker kernel (004 eq. 8), one node set only.
    Sym,
    /// Reciprocal Kronecker kernel (004 eq. 9), one node set only.
    Recip,
}

impl PairArg {
    /// Core's pair kernel.
    pub fn to_core(self) -> PairKernel {
        match self {
            PairArg::Kron => PairKernel::Kronecker,
            PairArg::Sym => PairKernel::Symmetric,
            PairArg::Recip => PairKernel::Reciprocal,
        }
    }
    /// The name as on the command line and in model metadata.
    pub fn name(self) -> &'static str {
        match self {
            PairArg::Kron => "kron",
            PairArg::Sym => "sym",
            PairArg::Recip => "recip",
        }
    }
    /// From the metadata name.
    pub fn from_name(s: &str) -> Option<PairArg> {
        match s {
            "kron" => Some(PairArg::Kron),
            "sym" => Some(PairArg::Sym),
            "recip" => Some(PairArg::Recip),
            _ => None,
        }
    }
}

/// One node set: ids and either dense features or a precomputed kernel.
#[derive(Clone, Debug)]
pub struct Nodes {
    /// Node ids, in file order (kernel column order for a kernel).
    pub ids: Vec<String>,
    /// The representation.
    pub repr: NodeRepr,
}

/// How nodes are given.
#[derive(Clone, Debug)]
pub enum NodeRepr {
    /// Row-major `n × d` features.
    Features {
        /// Feature dimension.
        d: usize,
        /// The values.
        x: Vec<f64>,
    },
    /// A symmetric `n × n` kernel matrix.
    Precomputed {
        /// The values (row-major = column-major).
        k: Vec<f64>,
    },
}

/// Largest dense feature matrix read (elements).
const MAX_DENSE: usize = 1 << 28;

impl Nodes {
    /// From node features (made dense).
    pub fn from_features(f: &NodeFeatures) -> Result<Nodes, CliError> {
        let x = f
            .to_dense(MAX_DENSE)
            .ok_or_else(|| CliError::input(format!("{} nodes × {} features is too large", f.len(), f.n_features())))?;
        Ok(Nodes { ids: f.ids().to_vec(), repr: NodeRepr::Features { d: f.n_features(), x } })
    }
    /// From a node kernel.
    pub fn from_kernel(k: &NodeKernel) -> Nodes {
        Nodes { ids: k.ids().to_vec(), repr: NodeRepr::Precomputed { k: k.values().to_vec() } }
    }
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.ids.len()
    }
    /// Never empty when read.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// The kernel between feature rows `a` (`na × d`) and `b` (`nb × d`),
/// column-major `na × nb`.
pub fn cross_gram<B: Backend>(
    backend: &mut B,
    kernel: &Kernel,
    a: &[f64],
    na: usize,
    b: &[f64],
    nb: usize,
    d: usize,
) -> Result<Vec<f64>, CliError> {
    let err = |e: ranklet_core::LinalgError| CliError::input(format!("node kernel: {e}"));
    let xa = Rows::Dense(MatRef::from_row_major(a, na, d).map_err(err)?);
    let xb = Rows::Dense(MatRef::from_row_major(b, nb, d).map_err(err)?);
    super::Workspace::new("the node kernel matrix", na, nb, "use fewer nodes", || na * nb).check()?;
    let mut out = vec![0.0; na * nb];
    let mut work = vec![0.0; kernel_matrix_workspace_len(&xa, &xb)];
    kernel_matrix(backend, kernel, &xa, &xb, MatMut::from_col_major(&mut out, na, nb).map_err(err)?, &mut work)
        .map_err(err)?;
    Ok(out)
}

/// `g[rows, cols]` of a column-major `n × ·` matrix, column-major.
fn sub(g: &[f64], n: usize, rows: &[usize], cols: &[usize]) -> Vec<f64> {
    let mut out = Vec::with_capacity(rows.len() * cols.len());
    for &c in cols {
        for &r in rows {
            out.push(g[r + c * n]);
        }
    }
    out
}

/// A training problem on labelled edges.
pub struct EdgeProblem {
    /// The learner.
    pub algo: KronAlgo,
    /// The pair kernel (not Kronecker only for one node set).
    pub pair: PairKernel,
    /// Query weighting of the ranking loss.
    pub weight: QueryWeight,
    /// One node set (u and v index the same nodes).
    pub one_domain: bool,
    /// Gram matrix of the u nodes (column-major, `n_u × n_u`).
    pub g_u: Vec<f64>,
    /// Gram matrix of the v nodes (equal to `g_u` for one domain).
    pub g_v: Vec<f64>,
    /// Number of u nodes.
    pub n_u: usize,
    /// Number of v nodes.
    pub n_v: usize,
    /// The edges, indexing the node sets.
    pub edges: Vec<(usize, usize)>,
    /// Their labels.
    pub labels: Vec<f64>,
}

/// A fit on a subset of nodes: the coefficients `A` (`p_u × p_v`,
/// column-major) over `train_u × train_v`, and CG's report when iterative.
#[derive(Clone, Debug)]
pub struct SubFit {
    /// Coefficient matrix, column-major.
    pub coef: Vec<f64>,
    /// CG iterations and residual (incomplete graphs).
    pub cg: Option<CgInfo>,
}

impl EdgeProblem {
    /// The loss of the learner.
    pub fn loss(&self) -> Loss {
        match self.algo {
            KronAlgo::Rls => Loss::Regression,
            KronAlgo::Rankrls => Loss::Ranking(self.weight),
        }
    }

    /// Fits on the edges between `train_u` and `train_v` (node indices;
    /// for one domain the same list) for every λ of `lambdas`. Complete
    /// subgraph: one [`KronEigen`] for all λ; otherwise [`kron::kron_cg`]
    /// per λ with `max_iter`, each iteration reported to `on` (phase
    /// "conjugate gradient"), which may stop it ([`progress::interrupted`]).
    pub fn fit_subset<B: Backend>(
        &self,
        backend: &mut B,
        train_u: &[usize],
        train_v: &[usize],
        lambdas: &[f64],
        max_iter: usize,
        on: OnProgress<'_>,
    ) -> Vec<Result<SubFit, CliError>> {
        let (pu, pv) = (train_u.len(), train_v.len());
        let mut pos_u = vec![usize::MAX; self.n_u];
        train_u.iter().enumerate().for_each(|(i, &u)| pos_u[u] = i);
        let mut pos_v = vec![usize::MAX; self.n_v];
        train_v.iter().enumerate().for_each(|(j, &v)| pos_v[v] = j);
        let mut edges = Vec::new();
        let mut y = Vec::new();
        for (&(u, v), &l) in self.edges.iter().zip(&self.labels) {
            if pos_u[u] != usize::MAX && pos_v[v] != usize::MAX {
                edges.push((pos_u[u], pos_v[v]));
                y.push(l);
            }
        }
        if edges.is_empty() {
            return lambdas.iter().map(|_| Err(CliError::input("no training edges in this fold"))).collect();
        }
        let k_u = sub(&self.g_u, self.n_u, train_u, train_u);
        let k_v = if self.one_domain { Vec::new() } else { sub(&self.g_v, self.n_v, train_v, train_v) };
        let (Ok(ku), Ok(kv)) = (
            MatRef::from_col_major(&k_u, pu, pu),
            MatRef::from_col_major(if self.one_domain { &k_u } else { &k_v }, pv, pv),
        ) else {
            return lambdas.iter().map(|_| Err(LearnError::from(LinalgError::DimensionMismatch).into())).collect();
        };
        let domains =
            if self.one_domain { Domains::One { k: ku, pair: self.pair } } else { Domains::Two { k_u: ku, k_v: kv } };
        let loss = self.loss();
        let complete =
            edges.len() == pu * pv && !(self.pair != PairKernel::Kronecker && matches!(loss, Loss::Ranking(_)));
        if complete {
            let mut ymat = vec![0.0; pu * pv];
            for (&(i, j), &l) in edges.iter().zip(&y) {
                ymat[i + j * pu] = l;
            }
            let mut store = vec![0.0; KronEigen::store_len(pu, pv)];
            let mut work = vec![0.0; KronEigen::new_workspace_len(pv).max(pu * pv)];
            let eig = match KronEigen::new(backend, &domains, loss, &mut store, &mut work) {
                Ok(e) => e,
                Err(e) => return lambdas.iter().map(|_| Err(e.into())).collect(),
            };
            let ym = MatRef::from_col_major(&ymat, pu, pv).expect("shape");
            return lambdas
                .iter()
                .map(|&lam| {
                    let mut coef = vec![0.0; pu * pv];
                    eig.solve(backend, lam, ym, MatMut::from_col_major(&mut coef, pu, pv).expect("shape"), &mut work)?;
                    Ok(SubFit { coef, cg: None })
                })
                .collect();
        }
        let q = edges.len();
        lambdas
            .iter()
            .map(|&lam| {
                let mut a = vec![0.0; q];
                let mut coef = vec![0.0; pu * pv];
                let mut work = vec![0.0; kron::kron_cg_workspace_len(pu, pv, q)];
                progress::report(on, CG, 0, max_iter)?;
                let mut stopped = false;
                let info = kron::kron_cg(
                    backend,
                    &kron::KronSystem { domains, loss, edges: &edges, y: &y, lambda: lam },
                    &CgParams::new(max_iter, 1e-10),
                    &mut a,
                    MatMut::from_col_major(&mut coef, pu, pv).expect("shape"),
                    &mut work,
                    |it, _, _| {
                        stopped = progress::report(on, CG, it.min(max_iter), max_iter).is_err();
                        if stopped {
                            CgControl::Stop
                        } else {
                            CgControl::Continue
                        }
                    },
                )?;
                if stopped {
                    return Err(progress::interrupted());
                }
                progress::report(on, CG, max_iter, max_iter)?;
                Ok(SubFit { coef, cg: Some(info) })
            })
            .collect()
    }
}

/// The progress phase of a conjugate-gradient fit.
pub const CG: &str = "conjugate gradient";

/// Predictions `f(a, b)` for `pairs` of (row of `k_a`, row of `k_b`):
/// `k_a` is `m_a × p_u` (kernel rows of first nodes against the training
/// u nodes, column-major), `k_b` `m_b × p_v`; each comes with its row count
/// as `(k_a, m_a)`, `(k_b, m_b)`.
pub fn predict_edges<B: Backend>(
    backend: &mut B,
    pair: PairKernel,
    coef: &[f64],
    (pu, pv): (usize, usize),
    (k_a, m_a): (&[f64], usize),
    (k_b, m_b): (&[f64], usize),
    pairs: &[(usize, usize)],
) -> Result<Vec<f64>, LearnError> {
    let c = MatRef::from_col_major(coef, pu, pv)?;
    let ka = MatRef::from_col_major(k_a, m_a, pu)?;
    let kb = MatRef::from_col_major(k_b, m_b, pv)?;
    let mut out = vec![0.0; pairs.len()];
    let mut work = vec![0.0; kron::predict_pairs_workspace_len(pair, pv, m_a, m_b)];
    kron::predict_pairs(backend, pair, c, ka, kb, pairs, &mut out, &mut work)?;
    Ok(out)
}

/// Predictions of the edges `edges` (indices into the problem's node sets)
/// by a [`SubFit`] over `train_u × train_v`.
pub fn predict_problem_edges<B: Backend>(
    backend: &mut B,
    prob: &EdgeProblem,
    fit: &SubFit,
    train_u: &[usize],
    train_v: &[usize],
    edges: &[(usize, usize)],
) -> Result<Vec<f64>, LearnError> {
    // The distinct first and second nodes of the edges.
    let (mut us, mut vs) = (Vec::new(), Vec::new());
    let (mut iu, mut iv) = (vec![usize::MAX; prob.n_u], vec![usize::MAX; prob.n_v]);
    let pairs: Vec<(usize, usize)> = edges
        .iter()
        .map(|&(u, v)| {
            if iu[u] == usize::MAX {
                iu[u] = us.len();
                us.push(u);
            }
            if iv[v] == usize::MAX {
                iv[v] = vs.len();
                vs.push(v);
            }
            (iu[u], iv[v])
        })
        .collect();
    let k_a = sub(&prob.g_u, prob.n_u, &us, train_u);
    let k_b = sub(&prob.g_v, prob.n_v, &vs, train_v);
    predict_edges(
        backend,
        prob.pair,
        &fit.coef,
        (train_u.len(), train_v.len()),
        (&k_a, us.len()),
        (&k_b, vs.len()),
        &pairs,
    )
}

/// A metric over an edge list, per conditioning (first) node, averaged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EdgeMetric {
    /// Conditional rank loss (004 eq. 4), normalised per node: the node's
    /// disagreement error, averaged over nodes with a comparable pair.
    CondRankLoss,
    /// AUC per node of `label > threshold` (0/1 labels), averaged over
    /// nodes with a positive and a negative edge.
    Auc(f64),
}

impl EdgeMetric {
    /// From a `--metric` value: `condrankloss` (or `disagreement`), `auc[:T]`.
    pub fn from_metric(m: Metric) -> Result<EdgeMetric, CliError> {
        match m {
            Metric::CondRankLoss | Metric::Disagreement => Ok(EdgeMetric::CondRankLoss),
            Metric::Auc(t) => Ok(EdgeMetric::Auc(t)),
            other => Err(CliError::input(format!(
                "--metric {}: edges take condrankloss or auc (per conditioning node)",
                other.name()
            ))),
        }
    }
    /// The name as printed.
    pub fn name(self) -> String {
        match self {
            EdgeMetric::CondRankLoss => "condrankloss".into(),
            EdgeMetric::Auc(0.0) => "auc".into(),
            EdgeMetric::Auc(t) => format!("auc:{t}"),
        }
    }
    /// Larger is better (AUC).
    pub fn higher_is_better(self) -> bool {
        matches!(self, EdgeMetric::Auc(_))
    }
    /// The metric over edges `(u, ·)` with `labels` and `preds`, grouped by
    /// `u`; also the number of nodes used.
    pub fn eval(self, us: &[usize], labels: &[f64], preds: &[f64]) -> Result<(f64, usize), String> {
        let mut order: Vec<usize> = (0..us.len()).collect();
        order.sort_by_key(|&e| us[e]);
        let mut ptr = vec![0];
        for k in 1..order.len() {
            if us[order[k]] != us[order[k - 1]] {
                ptr.push(k);
            }
        }
        ptr.push(order.len());
        let l: Vec<f64> = order.iter().map(|&e| labels[e]).collect();
        let p: Vec<f64> = order.iter().map(|&e| preds[e]).collect();
        let mut work = vec![0usize; metrics::index_workspace_len(l.len())];
        let q = match self {
            EdgeMetric::CondRankLoss => metrics::disagreement(&l, &p, &ptr, &mut work),
            EdgeMetric::Auc(t) => metrics::auc_by_query(&l, &p, &ptr, t, &mut work),
        }
        .map_err(|e| format!("{}: {e}", self.name()))?;
        Ok((q.value, q.queries_used))
    }
}

/// What `--nodes*`/`--kernel-*` gave: features or kernels per domain.
pub struct NodeSets {
    /// u nodes.
    pub u: Nodes,
    /// v nodes (a copy of `u` for one domain).
    pub v: Nodes,
    /// One node set.
    pub one_domain: bool,
}

impl EdgeProblem {
    /// The problem of `edges` over `nodes` with the node `kernel` (features).
    ///
    /// # Errors
    /// Edges naming unknown nodes (file:line), mixed representations.
    pub fn new<B: Backend>(
        backend: &mut B,
        algo: KronAlgo,
        pair: PairArg,
        weight: QueryWeight,
        kernel: &Kernel,
        nodes: &NodeSets,
        edges: &EdgeData,
    ) -> Result<EdgeProblem, CliError> {
        let on = edges.on_nodes(&nodes.u.ids, &nodes.v.ids)?;
        let gram = |b: &mut B, n: &Nodes| -> Result<Vec<f64>, CliError> {
            match &n.repr {
                NodeRepr::Features { d, x } => cross_gram(b, kernel, x, n.len(), x, n.len(), *d),
                NodeRepr::Precomputed { k } => Ok(k.clone()),
            }
        };
        let g_u = gram(backend, &nodes.u)?;
        let g_v = if nodes.one_domain { g_u.clone() } else { gram(backend, &nodes.v)? };
        Ok(EdgeProblem {
            algo,
            pair: pair.to_core(),
            weight,
            one_domain: nodes.one_domain,
            g_u,
            g_v,
            n_u: nodes.u.len(),
            n_v: nodes.v.len(),
            edges: on.edges().to_vec(),
            labels: on.labels().to_vec(),
        })
    }
}

/// How a pair model's node vectors are formed (metadata `pair_basis`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairBasis {
    /// Node features (linear node kernel).
    Features,
    /// Kernel rows against the training nodes (precomputed kernels).
    KernelRows,
}

/// A pair model decoded from a linear model file with `pair_encoding=outer`.
#[derive(Clone, Debug)]
pub struct PairModel {
    /// Dimension of the u vectors.
    pub d_u: usize,
    /// Dimension of the v vectors.
    pub d_v: usize,
    /// Node vector kind.
    pub basis: PairBasis,
    /// Pair kernel.
    pub pair: PairArg,
    /// One node set.
    pub one_domain: bool,
    /// A pair kind of the format (scored by `score_pair_f64`), not the
    /// interim outer-product encoding.
    pub native: bool,
}

impl PairModel {
    /// Reads the pair description from a model's metadata.
    ///
    /// # Errors
    /// Not a pair model (with the hint to use rows), inconsistent metadata.
    pub fn from_view(view: &ModelView<'_>) -> Result<PairModel, CliError> {
        let get = |k: &str| view.metadata_get(k);
        if let (Some((d_u, d_v)), Some(p)) = (view.pair_dims(), view.pair_kernel()) {
            let pair = match p {
                PairKernel::Kronecker => PairArg::Kron,
                PairKernel::Symmetric => PairArg::Sym,
                PairKernel::Reciprocal => PairArg::Recip,
            };
            // Symmetric/reciprocal models are over one node set; a
            // Kronecker model says so in its metadata (default: two).
            let one_domain = pair != PairArg::Kron || get("domains") == Some("one");
            return Ok(PairModel { d_u, d_v, basis: PairBasis::Features, pair, one_domain, native: true });
        }
        if get("pair_encoding") != Some("outer") {
            return Err(CliError::input(
                "the model is not a pair model (train it with --edges); score rows with --data",
            ));
        }
        let num = |k: &str| -> Result<usize, CliError> {
            get(k)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| CliError::input(format!("pair model: metadata {k} missing or invalid")))
        };
        let (d_u, d_v) = (num("d_u")?, num("d_v")?);
        if d_u.checked_mul(d_v) != Some(view.dim()) {
            return Err(CliError::input("pair model: d_u·d_v is not the model's dimension"));
        }
        let basis = match get("pair_basis") {
            Some("features") => PairBasis::Features,
            Some("kernel_rows") => PairBasis::KernelRows,
            _ => return Err(CliError::input("pair model: metadata pair_basis missing or invalid")),
        };
        let pair = get("pair_kernel")
            .and_then(PairArg::from_name)
            .ok_or_else(|| CliError::input("pair model: metadata pair_kernel missing or invalid"))?;
        Ok(PairModel { d_u, d_v, basis, pair, one_domain: get("domains") == Some("one"), native: false })
    }

    /// Score of one pair from its node vectors: the model's own pair
    /// scorer, or core's score of the outer-product encoding
    /// ([`kron::outer_pair_score`]).
    pub fn score(
        &self,
        view: &ModelView<'_>,
        phi_u: &[f64],
        phi_v: &[f64],
        buf: &mut Vec<f64>,
    ) -> Result<f64, CliError> {
        if self.native {
            buf.resize(view.pair_workspace_len(), 0.0);
            return view.score_pair_f64(phi_u, phi_v, buf).map_err(|e| CliError::input(e.to_string()));
        }
        buf.resize(self.d_u * self.d_v, 0.0);
        kron::outer_pair_score(self.pair.to_core(), phi_u, phi_v, buf, |w| {
            view.score_dense_f64(w).map_err(|e| CliError::input(e.to_string()))
        })
    }
}

/// The model file of a fit on all nodes (`coef` column-major
/// `p_u × p_v`): a pair kind of the format for node features, the interim
/// outer-product encoding for precomputed kernels (see the module docs);
/// `meta` gets the encoding's keys. Returns the bytes and the kind's name.
///
/// # Errors
/// Mixed node representations; the format's emit errors.
pub fn model_file_bytes(
    kernel: &Kernel,
    nodes: &NodeSets,
    pair: PairArg,
    coef: &[f64],
    element: ElementType,
    meta: &mut String,
) -> Result<(Vec<u8>, &'static str), CliError> {
    let (pu, pv) = (nodes.u.len(), nodes.v.len());
    let fmt_err = |e: format::EmitError| CliError::failure(format!("cannot write the model: {e}"));
    let emit = |spec: ModelSpec<'_>| -> Result<Vec<u8>, CliError> {
        let mut out = vec![0u8; spec.buffer_len()];
        let n = spec.emit(&mut out).map_err(fmt_err)?;
        out.truncate(n);
        Ok(out)
    };
    match (&nodes.u.repr, &nodes.v.repr) {
        (NodeRepr::Features { d: du, x: xu }, NodeRepr::Features { d: dv, x: xv }) => {
            let u = PairDomain { kernel: *kernel, dim: *du, basis: xu };
            let v = (!nodes.one_domain).then_some(PairDomain { kernel: *kernel, dim: *dv, basis: xv });
            let mut buf = vec![0.0; format::pair_model_buffer_len(&u, v.as_ref())];
            let a = MatRef::from_col_major(coef, pu, pv).map_err(|e| CliError::failure(e.to_string()))?;
            let model = format::pair_model(u, v, pair.to_core(), a, 0.0, &mut buf).map_err(fmt_err)?;
            let name = if *kernel == Kernel::Linear { "bilinear" } else { "dual-pair" };
            meta.push_str(&format!("pair_model={name}\n"));
            let bytes = emit(ModelSpec::new(model, element).with_metadata(meta))?;
            Ok((bytes, name))
        }
        (NodeRepr::Precomputed { .. }, NodeRepr::Precomputed { .. }) => {
            let mut w = vec![0.0; pu * pv];
            let a = MatRef::from_col_major(coef, pu, pv).map_err(|e| CliError::failure(e.to_string()))?;
            kron::outer_weights(a, &mut w).map_err(|e| CliError::failure(e.to_string()))?;
            meta.push_str(&format!(
                "pair_encoding=outer\npair_basis=kernel_rows\nd_u={pu}\nd_v={pv}\ntrain_u_ids={}\ntrain_v_ids={}\n",
                nodes.u.ids.join(","),
                nodes.v.ids.join(",")
            ));
            let model = format::Model::Linear(format::LinearModel { w: &w, offset: 0.0, centring: None });
            let bytes = emit(ModelSpec::new(model, element).with_metadata(meta))?;
            Ok((bytes, "linear over kernel-row products (interim)"))
        }
        _ => Err(CliError::input("mixed node representations (features and a precomputed kernel)")),
    }
}

/// The node files of labelled edges, as the flags name them: features of
/// one node set (`nodes`) or two (`nodes_u`, `nodes_v`), or precomputed
/// kernels (`kernel_u`, alone for one node set, and `kernel_v`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeFiles {
    /// `--nodes`.
    pub nodes: Option<std::path::PathBuf>,
    /// `--nodes-u`.
    pub nodes_u: Option<std::path::PathBuf>,
    /// `--nodes-v`.
    pub nodes_v: Option<std::path::PathBuf>,
    /// `--kernel-u precomputed:FILE` (the file).
    pub kernel_u: Option<std::path::PathBuf>,
    /// `--kernel-v precomputed:FILE` (the file).
    pub kernel_v: Option<std::path::PathBuf>,
    /// `--symmetrize`: use (K + Kᵀ)/2 for a kernel that is not symmetric.
    pub symmetrize: bool,
}

impl NodeSets {
    /// Reads the training nodes of `--nodes`, `--nodes-u/-v` or
    /// `--kernel-u/-v`.
    ///
    /// # Errors
    /// Reader errors (file:line, asymmetric kernels without `--symmetrize`),
    /// no node flag.
    pub fn read_training(g: &NodeFiles) -> Result<NodeSets, CliError> {
        let fopts = NodeFeatureOptions::default();
        let kopts = KernelOptions { symmetrize: g.symmetrize, ..KernelOptions::default() };
        let feats =
            |p: &std::path::Path| -> Result<Nodes, CliError> { Nodes::from_features(&read_node_features(p, &fopts)?) };
        let kern =
            |p: &std::path::Path| -> Result<Nodes, CliError> { Ok(Nodes::from_kernel(&read_node_kernel(p, &kopts)?)) };
        match (&g.nodes, &g.nodes_u, &g.nodes_v, &g.kernel_u, &g.kernel_v) {
            (Some(n), None, None, None, None) => {
                let u = feats(n)?;
                Ok(NodeSets { v: u.clone(), u, one_domain: true })
            }
            (None, Some(nu), Some(nv), None, None) => Ok(NodeSets { u: feats(nu)?, v: feats(nv)?, one_domain: false }),
            (None, None, None, Some(ku), None) => {
                let u = kern(ku)?;
                Ok(NodeSets { v: u.clone(), u, one_domain: true })
            }
            (None, None, None, Some(ku), Some(kv)) => Ok(NodeSets { u: kern(ku)?, v: kern(kv)?, one_domain: false }),
            _ => Err(CliError::input(
                "--edges needs its nodes: --nodes FILE, --nodes-u FILE --nodes-v FILE, or --kernel-u precomputed:FILE \
                 [--kernel-v precomputed:FILE]",
            )),
        }
    }
}

/// Node vectors for scoring with a [`PairModel`]: the u and v nodes of
/// `--nodes`/`--nodes-u`/`--nodes-v` (features, dimension fixed to the
/// model's) or `--kernel-u/-v` (kernel rows against the training nodes,
/// whose ids the model stores).
pub struct ScoringNodes {
    /// u node ids.
    pub u_ids: Vec<String>,
    /// u vectors, row-major `len × d_u`.
    pub u: Vec<f64>,
    /// v node ids.
    pub v_ids: Vec<String>,
    /// v vectors, row-major `len × d_v`.
    pub v: Vec<f64>,
}

impl ScoringNodes {
    /// Reads the node vectors a pair model scores.
    ///
    /// # Errors
    /// Reader errors; node flags that do not fit the model.
    pub fn read(
        g: &NodeFiles,
        model: &PairModel,
        view: &ranklet_core::format::ModelView<'_>,
    ) -> Result<Self, CliError> {
        let dense = |p: &std::path::Path, d: usize| -> Result<(Vec<String>, Vec<f64>), CliError> {
            let f = read_node_features(p, &NodeFeatureOptions { num_features: Some(d) })?;
            if f.n_features() != d {
                return Err(CliError::input(format!(
                    "{}: {} features, the model's nodes have {d}",
                    p.display(),
                    f.n_features()
                )));
            }
            let n = Nodes::from_features(&f)?;
            match n.repr {
                NodeRepr::Features { x, .. } => Ok((n.ids, x)),
                NodeRepr::Precomputed { .. } => unreachable!("features"),
            }
        };
        let rows = |p: &std::path::Path, key: &str| -> Result<(Vec<String>, Vec<f64>), CliError> {
            let ids: Vec<String> = view
                .metadata_get(key)
                .ok_or_else(|| CliError::input(format!("pair model: metadata {key} missing")))?
                .split(',')
                .map(str::to_string)
                .collect();
            let r = read_kernel_rows(p, &ids, MatrixLayout::default())?;
            Ok((r.ids().to_vec(), r.values().to_vec()))
        };
        let ((u_ids, u), (v_ids, v)) = match (model.basis, g) {
            (PairBasis::Features, NodeFiles { nodes: Some(n), .. }) if model.one_domain => {
                let u = dense(n, model.d_u)?;
                (u.clone(), u)
            }
            (PairBasis::Features, NodeFiles { nodes_u: Some(nu), nodes_v: Some(nv), .. }) if !model.one_domain => {
                (dense(nu, model.d_u)?, dense(nv, model.d_v)?)
            }
            (PairBasis::KernelRows, NodeFiles { kernel_u: Some(ku), kernel_v: None, .. }) if model.one_domain => {
                let u = rows(ku, "train_u_ids")?;
                (u.clone(), u)
            }
            (PairBasis::KernelRows, NodeFiles { kernel_u: Some(ku), kernel_v: Some(kv), .. }) if !model.one_domain => {
                (rows(ku, "train_u_ids")?, rows(kv, "train_v_ids")?)
            }
            _ => {
                return Err(CliError::input(match (model.basis, model.one_domain) {
                    (PairBasis::Features, true) => "this model scores nodes given by --nodes FILE (one node set)",
                    (PairBasis::Features, false) => "this model scores nodes given by --nodes-u FILE --nodes-v FILE",
                    (PairBasis::KernelRows, true) => {
                        "this model scores nodes given by their kernel rows, --kernel-u precomputed:ROWS"
                    }
                    (PairBasis::KernelRows, false) => {
                        "this model scores nodes given by their kernel rows, --kernel-u precomputed:ROWS \
                         --kernel-v precomputed:ROWS"
                    }
                }))
            }
        };
        Ok(ScoringNodes { u_ids, u, v_ids, v })
    }
}

impl ScoringNodes {
    /// Scores every edge of `edges` (input order) with the pair model.
    ///
    /// # Errors
    /// An edge naming a node not in the node files (file:line).
    pub fn score_edges(&self, view: &ModelView<'_>, model: &PairModel, edges: &EdgeData) -> Result<Vec<f64>, CliError> {
        let on = edges.on_nodes(&self.u_ids, &self.v_ids)?;
        let mut buf = Vec::with_capacity(model.d_u * model.d_v);
        on.edges()
            .iter()
            .map(|&(i, j)| {
                model.score(
                    view,
                    &self.u[i * model.d_u..(i + 1) * model.d_u],
                    &self.v[j * model.d_v..(j + 1) * model.d_v],
                    &mut buf,
                )
            })
            .collect()
    }
}
