//! The probabilistic preference learners as the CLI drives them (papers
//! 000 §5 and 001): `--algo pref-gp | xpgp | diff-gp` on preferences between
//! items given by id (`--prefs`), with the items' attributes (`--items`, or
//! the rows of `--data`) and, for xpgp, relations between the items
//! (`--relation`, `--relation-groups`).
//!
//! | `--algo` | likelihood | prior covariance |
//! |---|---|---|
//! | pref-gp | probit `Φ((f_w − f_l)/(√2·σ))` (000 eq. 10, 001 §3.2), EP | `K_attr` (001 eq. 1) |
//! | xpgp | the same | `a·K_attr + Σ_r b_r·K_rel,r` (001 eq. 5; `K_rel,r` the regularised Laplacian of relation r, eq. 2) |
//! | diff-gp | Gaussian on `s_a − s_b` (000 §5, last part), exact | `K_attr` |
//!
//! **Not a [`Family`](super::Family)**: that trait's hooks fit rows under a
//! λ grid chosen by cross-validation; a preference GP has no grid (its
//! hyperparameters are fitted by the evidence with `--kernel rbf:auto`, or
//! fixed with `rbf:G`) and its data are items and judgements between them.
//! This module is its sibling driver: reading and checking the data
//! ([`PrefData`]), the evaluation metrics on held-out judgements
//! ([`PrefMetric`]), and the hooks into core's learner
//! (`ranklet_core::learn::pref`) and the model kinds of the format.
//!
//! Ties: pref-gp and xpgp drop `a b tie` lines (the probit likelihood has
//! no tie outcome) and say how many ([`tie_notes`], which the CLI prints);
//! diff-gp keeps a tie as the observed difference 0.

use std::path::Path;

use ranklet_core::backend::Backend;
use ranklet_core::format::kind::pref_gp::packed_len;
use ranklet_core::format::{self, ElementType, ModelSpec, ModelView, PrefGpView, PrefInductiveView, PrefLowRankView};
use ranklet_core::graph::Pair;
use ranklet_core::kernel::Kernel;
use ranklet_core::learn::pref::active::{select_cov_workspace_len, select_pairs_cov, Pick};
use ranklet_core::learn::pref::device::DevicePrefGp;
use ranklet_core::learn::pref::hyper::{self, OptParams};
use ranklet_core::learn::pref::{xpgp, EpParams, Likelihood, PrefPosterior};
use ranklet_core::learn::LearnError;
use ranklet_core::linalg::Rows;
use ranklet_core::metrics;
use ranklet_core::MatRef;

use crate::args::KernelArg;
use crate::data::prefs::read_prefs;
use crate::data::prefs::{Binary, Prefs, Relation, RelationKind, Ties};
use crate::data::{read_node_features, NodeFeatureOptions};
use crate::error::CliError;
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::progress::{self, OnProgress};

/// The preference learners.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefAlgo {
    /// Probit pairwise GP on the attributes, EP (000 §5, eq. 10).
    PrefGp,
    /// Probit pairwise GP on attributes and relations (001, XPGP).
    Xpgp,
    /// Gaussian likelihood on score differences, exact (000 §5).
    DiffGp,
}

impl PrefAlgo {
    /// The `--algo` name.
    pub fn name(self) -> &'static str {
        match self {
            PrefAlgo::PrefGp => "pref-gp",
            PrefAlgo::Xpgp => "xpgp",
            PrefAlgo::DiffGp => "diff-gp",
        }
    }
    /// From the `--algo` (and model metadata) name.
    pub fn from_name(s: &str) -> Option<PrefAlgo> {
        match s {
            "pref-gp" => Some(PrefAlgo::PrefGp),
            "xpgp" => Some(PrefAlgo::Xpgp),
            "diff-gp" => Some(PrefAlgo::DiffGp),
            _ => None,
        }
    }
}

/// `--relation-residual` of the low-rank xpgp: what becomes of each
/// relation kernel's spectrum beyond its `--relation-rank K` eigenpairs
/// (`ranklet_core::learn::pref::xpgp_lowrank`, "The dropped spectrum as a
/// constant").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RelationResidual {
    /// Dropped: the plain truncation, `p = m + ΣK` features.
    #[default]
    None,
    /// Kept as one constant `1/(λ̄ + ι⁻²)` per relation (`λ̄` the mean
    /// dropped Laplacian eigenvalue): one more feature per judged item.
    Constant,
}

impl RelationResidual {
    /// The `--relation-residual` name.
    pub fn name(self) -> &'static str {
        match self {
            RelationResidual::None => "none",
            RelationResidual::Constant => "constant",
        }
    }
    /// From the `--relation-residual` name.
    pub fn from_name(s: &str) -> Option<RelationResidual> {
        match s {
            "none" => Some(RelationResidual::None),
            "constant" => Some(RelationResidual::Constant),
            _ => None,
        }
    }
}

/// `--kernel` of the preference GPs: the RBF kernel of 001 eq. 1, its
/// width fitted by the evidence (`rbf:auto`, the default) or given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrefKernel {
    /// γ (and the other hyperparameters) fitted.
    Auto,
    /// `exp(−γ‖x − x'‖²)` with this γ; the other hyperparameters fitted.
    Rbf(f64),
}

impl PrefKernel {
    /// From `train --kernel` (absent: `rbf:auto`).
    ///
    /// # Errors
    /// A grid, or a kernel other than RBF.
    pub fn from_arg(k: Option<&KernelArg>) -> Result<PrefKernel, CliError> {
        match k {
            None | Some(KernelArg::RbfAuto) => Ok(PrefKernel::Auto),
            Some(KernelArg::List(l)) => match l.0[..] {
                [Kernel::Rbf { gamma }] => Ok(PrefKernel::Rbf(gamma)),
                _ => Err(CliError::input("--kernel: the preference GPs take one RBF kernel, rbf:G or rbf:auto")),
            },
        }
    }
}

/// Largest dense attribute matrix read (elements).
const MAX_DENSE: usize = 1 << 27;

/// Items: ids and dense attributes, row-major `n × d`.
#[derive(Clone, Debug)]
pub struct PrefItems {
    /// Ids, in file order.
    pub ids: Vec<String>,
    /// Attribute dimension.
    pub d: usize,
    /// Attributes, row-major.
    pub x: Vec<f64>,
    /// The file they came from.
    pub source: String,
}

impl PrefItems {
    /// The rows of a data set as items (ids `"0"`, `"1"`, …: the 0-based
    /// row numbers); `source` names them.
    ///
    /// # Errors
    /// Too many features to hold densely.
    pub fn from_rows(ds: &crate::data::Dataset, source: &str) -> Result<PrefItems, CliError> {
        let x = ds.to_dense(MAX_DENSE).ok_or_else(|| {
            CliError::input(format!("{source}: {} rows × {} features is too large", ds.n_rows(), ds.n_features()))
        })?;
        let ids = (0..ds.n_rows()).map(|i| i.to_string()).collect();
        Ok(PrefItems { ids, d: ds.n_features(), x, source: source.to_string() })
    }

    /// Reads an items file (node features: CSV with an `id` column, or
    /// `id i:v …` lines), `num_features` as `--num-features`.
    ///
    /// # Errors
    /// The reader's errors (file and line); too many attributes to hold
    /// densely.
    pub fn read_file(path: &Path, num_features: Option<usize>) -> Result<PrefItems, CliError> {
        let f = read_node_features(path, &NodeFeatureOptions { num_features })?;
        let x = f.to_dense(MAX_DENSE).ok_or_else(|| {
            CliError::input(format!(
                "{}: {} items × {} attributes is too large",
                path.display(),
                f.len(),
                f.n_features()
            ))
        })?;
        Ok(PrefItems { ids: f.ids().to_vec(), d: f.n_features(), x, source: path.display().to_string() })
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Never empty when read.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Attributes of item `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }
}

/// The observations a learner takes.
#[derive(Clone, Debug)]
pub enum Observations {
    /// `(winner, loser)` pairs (pref-gp, xpgp).
    Binary(Binary),
    /// `(a, b, s_a − s_b)` (diff-gp).
    Differences(Vec<(usize, usize, f64)>),
}

impl Observations {
    /// Number of observations used.
    pub fn len(&self) -> usize {
        match self {
            Observations::Binary(b) => b.pairs.len(),
            Observations::Differences(d) => d.len(),
        }
    }
    /// `true` without observations.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The observations as core's pairs (magnitude 1 for a binary one).
    fn pairs(&self) -> Vec<Pair> {
        match self {
            Observations::Binary(b) => {
                b.pairs.iter().map(|&(w, l)| Pair { winner: w, loser: l, magnitude: 1.0 }).collect()
            }
            Observations::Differences(v) => {
                v.iter().map(|&(a, b, m)| Pair { winner: a, loser: b, magnitude: m }).collect()
            }
        }
    }
}

/// Items, judgements and relations, read and checked.
#[derive(Clone, Debug)]
pub struct PrefData {
    /// The items.
    pub items: PrefItems,
    /// The judgements as read.
    pub prefs: Prefs,
    /// The judgements as the learner takes them.
    pub obs: Observations,
    /// The relations (xpgp), `--relation` files first, then the projected
    /// `--relation-groups`.
    pub relations: Vec<Relation>,
}

impl PrefData {
    /// The data of `algo` from items, judgements and relations already read
    /// against the items' ids (the readers' `parse_*_str` for data in
    /// memory); `ties` as `--ties`.
    ///
    /// # Errors
    /// Relations refused or missing for `algo` (see [`check_relations`]);
    /// diff-gp given a bare preference; no preference left after dropping
    /// ties.
    pub fn new(
        items: PrefItems,
        prefs: Prefs,
        relations: Vec<Relation>,
        algo: PrefAlgo,
        ties: Ties,
    ) -> Result<PrefData, CliError> {
        check_relations(algo, relations.len())?;
        let obs = observations(&prefs, algo, Path::new(prefs.source()), ties)?;
        Ok(PrefData { items, prefs, obs, relations })
    }
}

impl PrefData {
    /// The relations as core's XPGP takes them (borrowed).
    fn core_relations(&self) -> Vec<xpgp::Relation<'_>> {
        self.relations
            .iter()
            .map(|r| match &r.kind {
                RelationKind::Edges(e) => xpgp::Relation::Edges(e),
                RelationKind::Groups(g) => xpgp::Relation::Groups(g),
            })
            .collect()
    }
}

/// Relations are required by xpgp and refused by the others.
///
/// # Errors
/// Bad input naming the flags: xpgp without relations, relations for
/// pref-gp or diff-gp.
pub fn check_relations(algo: PrefAlgo, n_rel: usize) -> Result<(), CliError> {
    match algo {
        PrefAlgo::Xpgp if n_rel == 0 => {
            Err(CliError::input("--algo xpgp needs at least one --relation or --relation-groups"))
        }
        PrefAlgo::PrefGp | PrefAlgo::DiffGp if n_rel > 0 => Err(CliError::input(format!(
            "--algo {}: relations (--relation, --relation-groups) are used by xpgp only",
            algo.name()
        ))),
        _ => Ok(()),
    }
}

/// The observations of `prefs` for `algo` (read from `path`); `ties` says
/// what a binary learner makes of a tie (held-out judgements are scored with
/// [`Ties::Drop`]: a tie has no direction to get right).
pub fn observations(prefs: &Prefs, algo: PrefAlgo, path: &Path, ties: Ties) -> Result<Observations, CliError> {
    if algo == PrefAlgo::DiffGp {
        return Ok(Observations::Differences(prefs.differences()?));
    }
    let bin = prefs.binary_with(ties);
    if bin.pairs.is_empty() {
        return Err(CliError::input(format!(
            "{}: no strict preference (every line is a tie: {} ties dropped)",
            path.display(),
            bin.ties_dropped
        )));
    }
    Ok(Observations::Binary(bin))
}

/// What became of the ties of the preferences read from `source`, one note
/// per kind (none for diff-gp, which keeps a tie as the difference 0); the
/// CLI prints them as `ranklet: note: …`.
pub fn tie_notes(source: &str, obs: &Observations) -> Vec<String> {
    let Observations::Binary(bin) = obs else { return Vec::new() };
    let mut notes = Vec::new();
    if bin.ties_dropped > 0 {
        notes.push(format!(
            "{source}: {} ties dropped ({} preferences kept); the probit likelihood has no tie outcome \
             (--ties both keeps a tie as two opposite judgements)",
            bin.ties_dropped,
            bin.pairs.len()
        ));
    }
    if bin.ties_both > 0 {
        notes.push(format!(
            "{source}: {} ties kept as two opposite judgements each ({} judgements in all)",
            bin.ties_both,
            bin.pairs.len()
        ));
    }
    notes
}

/// Which model kind `train` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefModelKind {
    /// Kind 8: the posterior `N(μ, Σ)` over the training items, by name
    /// (transductive: predicts and suggests pairs among those items; what a
    /// device updates).
    FixedItems,
    /// Kind 9: basis rows, `α` and `W` (inductive: predicts new items from
    /// their attributes; pref-gp and diff-gp only).
    Inductive,
}

/// The fitted hyperparameters, by name, as `θ` holds them in log space
/// (`ranklet_core::learn::pref::xpgp`): `a`, `gamma`, the noise (`sigma`
/// or `noise`), then `b_r`, `iota_r` per relation.
fn theta_names(algo: PrefAlgo, n_rel: usize) -> Vec<String> {
    let noise = if algo == PrefAlgo::DiffGp { "noise" } else { "sigma" };
    let mut v = vec!["a".to_string(), "gamma".to_string(), noise.to_string()];
    for r in 0..n_rel {
        v.push(format!("b_{r}"));
        v.push(format!("iota_{r}"));
    }
    v
}

/// How to make a preference GP's item matrices smaller.
const ITEMS_WAY_OUT: &str =
    "use --basis M (sparse EP on M inducing items, n × M), or fewer items (a sample of the items and the judgements between them)";

/// Fits `algo` on `data` — EP (or the exact Gaussian posterior) with the
/// hyperparameters maximising the evidence (`ranklet_core::learn::pref::
/// hyper::fit_hyper`; the RBF width fixed by `--kernel rbf:G`) — and
/// encodes the model file (`kind`). Returns its bytes and a one-line
/// summary (hyperparameters, evidence) for the user. The search reports
/// each iteration to `on` (phase [`HYPER`]), which may stop it
/// ([`progress::interrupted`]).
///
/// # Errors
/// Bad input ([`CliError::input`]): an inductive model with relations, no
/// attributes without relations. Numerical failure ([`CliError::failure`]).
#[allow(clippy::too_many_arguments)]
pub fn train<B: Backend>(
    backend: &mut B,
    algo: PrefAlgo,
    kernel: PrefKernel,
    kind: PrefModelKind,
    data: &PrefData,
    element: ElementType,
    meta: &mut String,
    on: OnProgress<'_>,
) -> Result<(Vec<u8>, String), CliError> {
    let items = &data.items;
    let (n, d) = (items.len(), items.d);
    if kind == PrefModelKind::Inductive && !data.relations.is_empty() {
        return Err(CliError::input("--inductive: a model with relations (xpgp) is over its fixed item set"));
    }
    if d == 0 && data.relations.is_empty() {
        return Err(CliError::input(format!("{}: the items have no attributes", items.source)));
    }
    // The fit holds several n × n matrices (prior, posterior, factors):
    // refused before work where even one does not fit.
    super::Workspace::new("one n × n matrix over the items (the fit holds several)", n, n, ITEMS_WAY_OUT, || n * n)
        .check()?;
    let pairs = data.obs.pairs();
    let m = pairs.len();
    let rels = data.core_relations();
    let fail = |e: LearnError| CliError::learn(format_args!("--algo {}", algo.name()), e);
    let x = if d > 0 {
        Some(Rows::Dense(MatRef::from_row_major(&items.x, n, d).map_err(|e| fail(e.into()))?))
    } else {
        None
    };
    let prior = xpgp::XpgpPrior { n, x, relations: &rels };
    // θ in log space (see `theta_names`): core's starting point and box.
    let p = xpgp::theta_len(rels.len());
    let (mut theta, mut lo, mut hi) = (vec![0.0; p], vec![0.0; p], vec![0.0; p]);
    let gamma = match kernel {
        PrefKernel::Rbf(g) => Some(g),
        PrefKernel::Auto => None,
    };
    let lik = hyper::start(algo == PrefAlgo::DiffGp, gamma, d, &pairs, &mut theta, &mut lo, &mut hi).map_err(fail)?;
    let ep = EpParams::default();
    let opt = OptParams::default();
    // The posterior and the evidence's workspace, exactly as core counts
    // them (several n × n matrices), refused before work where their sum
    // does not fit; allocated without aborting where the check passed but
    // the memory went elsewhere.
    let storage_len = PrefPosterior::storage_len(n, m);
    let work_len = hyper::evidence_workspace_len(&prior) + hyper::minimize_workspace_len(p, opt.memory.max(1));
    crate::mem::check(
        &format!("the posterior and evidence workspace over {n} items and {m} preferences"),
        storage_len.checked_add(work_len),
        8,
        ITEMS_WAY_OUT,
    )?;
    let zeros = |len| crate::mem::zeros(len, ITEMS_WAY_OUT);
    let mut storage = zeros(storage_len)?;
    let mut post = PrefPosterior::new(n, m, &mut storage).map_err(fail)?;
    let mut work = zeros(work_len)?;
    // Each optimiser iteration is reported (of at most `max_iter`), and the
    // callback may stop the search there; nothing is fitted when no
    // hyperparameter is free but the final EP.
    let total = if free_count(&lo, &hi) == 0 { 0 } else { opt.max_iter };
    let problem = hyper::HyperProblem { prior: &prior, pairs: &pairs, lik, ep };
    let report = searched(on, total, |stop| {
        let search = hyper::Search { lo: &lo, hi: &hi, opt };
        hyper::fit_hyper_until(backend, &problem, &mut theta, &search, &mut post, &mut work, stop)
    })?;
    let report = report.map_err(fail)?;

    let fitted = Fitted {
        algo,
        kernel,
        theta: &theta,
        n_rel: rels.len(),
        log_evidence: post.log_evidence(),
        ep_rounds: post.iterations(),
        jitter: post.jitter(),
        report: &report,
    };
    let (summary, sigma) = fitted.describe("", "", meta);
    let bytes = match kind {
        PrefModelKind::FixedItems => {
            let mut names = String::new();
            for id in &items.ids {
                names.push_str(id);
                names.push('\n');
            }
            let mut buf = vec![0.0; packed_len(n)];
            let cov = MatRef::from_col_major(post.cov(), n, n).map_err(|e| fail(e.into()))?;
            let model = format::pref_gp_model(post.mean(), cov, sigma, m as u64, &names, &mut buf)
                .map_err(|e| CliError::failure(format!("cannot write the model: {e}")))?;
            emit(model, element, meta)?
        }
        PrefModelKind::Inductive => {
            // W = K⁻¹ − K⁻¹ΣK⁻¹ of the file is core's R = S̃ − S̃ΣS̃,
            // column by column.
            let mut r = vec![0.0; n * n];
            post.inductive_w(&pairs, &mut r, &mut vec![0.0; 3 * n]).map_err(fail)?;
            let mut buf = vec![0.0; packed_len(n)];
            let w = MatRef::from_col_major(&r, n, n).map_err(|e| fail(e.into()))?;
            let k = Kernel::Rbf { gamma: theta[1].exp() };
            let fit = format::PrefInductiveModel {
                kernel: k,
                scale: theta[0].exp(),
                sigma,
                count: m as u64,
                dim: d,
                basis: &items.x,
                alpha: post.alpha(),
                w_packed: &[],
            };
            let model = format::pref_inductive_model(fit, w, &mut buf)
                .map_err(|e| CliError::failure(format!("cannot write the model: {e}")))?;
            meta.push_str(&format!("items_ids={}\n", items.ids.join(",")));
            emit(model, element, meta)?
        }
    };
    Ok((bytes, summary))
}

/// What a fit found, for its summary line, metadata and model `σ`: the one
/// description of the dense, sparse and low-rank fits.
struct Fitted<'a> {
    algo: PrefAlgo,
    kernel: PrefKernel,
    /// `θ` in log space (`theta_names` order).
    theta: &'a [f64],
    n_rel: usize,
    log_evidence: f64,
    ep_rounds: usize,
    jitter: f64,
    report: &'a hyper::OptReport,
}

impl Fitted<'_> {
    /// The summary line (`approx` after the learner's name), the metadata
    /// lines appended to `meta` (`approx_meta` after the likelihood), and
    /// the probit σ of the model file: for the Gaussian likelihood the σ
    /// with 2σ² = noise², so that P(i ≻ j) = Φ(m/√(noise² + v)) is the
    /// probability that the observed difference is positive.
    fn describe(&self, approx: &str, approx_meta: &str, meta: &mut String) -> (String, f64) {
        let (algo, report) = (self.algo, self.report);
        let names = theta_names(algo, self.n_rel);
        let values: Vec<String> = names.iter().zip(self.theta).map(|(k, t)| format!("{k}={:.6e}", t.exp())).collect();
        let noise = self.theta[xpgp::THETA_NOISE].exp();
        let sigma = if algo == PrefAlgo::DiffGp { noise * std::f64::consts::FRAC_1_SQRT_2 } else { noise };
        let summary = format!(
            "{}{approx}: {} log_evidence={:.6} ep_rounds_final_refit={} jitter={:e} optimizer_iterations={} \
             evaluations={}{}",
            algo.name(),
            values.join(" "),
            self.log_evidence,
            self.ep_rounds,
            self.jitter,
            report.iterations,
            report.evaluations,
            if report.converged { "" } else { " (not converged: budget or line search exhausted)" }
        );
        // Full precision in the metadata (the summary line rounds).
        for (k, t) in names.iter().zip(self.theta) {
            meta.push_str(&format!("{k}={}\n", t.exp()));
        }
        meta.push_str(&format!(
            "likelihood={}\n{approx_meta}log_evidence={}\nep_rounds_final_refit={}\njitter={:e}\noptimizer_iterations={}\n\
             optimizer_evaluations={}\noptimizer_converged={}\nkernel_fitted={}\n",
            if algo == PrefAlgo::DiffGp { "gaussian" } else { "probit" },
            self.log_evidence,
            self.ep_rounds,
            self.jitter,
            report.iterations,
            report.evaluations,
            u8::from(report.converged),
            if self.kernel == PrefKernel::Auto { "rbf:auto" } else { "no (rbf:G)" },
        ));
        (summary, sigma)
    }
}

/// Runs an evidence search `fit`, which calls its stop callback after each
/// optimiser iteration: each of at most `total` iterations is reported to
/// `on`, whose `Break` ends the search there ([`progress::interrupted`]).
/// The dense and the sparse fits' one progress loop.
fn searched<R>(
    on: OnProgress<'_>,
    total: usize,
    fit: impl FnOnce(&mut dyn FnMut(usize) -> bool) -> R,
) -> Result<R, CliError> {
    progress::report(on, HYPER, 0, total)?;
    let mut stopped = false;
    let out = fit(&mut |it| {
        stopped = it > 0 && progress::report(on, HYPER, it.min(total), total).is_err();
        stopped
    });
    if stopped {
        return Err(progress::interrupted());
    }
    progress::report(on, HYPER, total, total)?;
    Ok(out)
}

/// Fits `algo` (pref-gp or diff-gp) by sparse EP on at most `basis`
/// inducing items (`ranklet_core::learn::pref::sparse`: DTC, the inducing
/// items chosen by pivoted Cholesky of the kernel at the starting
/// hyperparameters and held fixed, the hyperparameters fitted by the sparse
/// evidence as [`train`] does by the dense one), and encodes the inductive
/// model (kind 9) over the inducing items. Memory O(n·m + m² + M), never
/// `n × n`. Returns the model bytes and the summary line; `basis` above the
/// item count means every item. Progress and cancellation as [`train`].
/// xpgp goes to [`train_lowrank`] (its relations by `relation_rank`
/// Laplacian eigenpairs each and `residual`; the model over the fixed
/// items).
///
/// # Errors
/// Bad input: no attributes (pref-gp, diff-gp), `basis = 0`,
/// `relation_rank` or a residual for a learner without relations.
/// Resources: the sizes checked before allocation. Numerical failure.
#[allow(clippy::too_many_arguments)]
pub fn train_sparse<B: Backend>(
    backend: &mut B,
    algo: PrefAlgo,
    kernel: PrefKernel,
    basis: usize,
    (relation_rank, residual): (Option<usize>, RelationResidual),
    data: &PrefData,
    element: ElementType,
    meta: &mut String,
    on: OnProgress<'_>,
) -> Result<(Vec<u8>, String), CliError> {
    use ranklet_core::learn::pref::sparse;
    let items = &data.items;
    let (n, d) = (items.len(), items.d);
    if basis == 0 {
        return Err(CliError::input("--basis must be ≥ 1"));
    }
    if algo == PrefAlgo::Xpgp {
        return train_lowrank(backend, kernel, basis, (relation_rank, residual), data, element, meta, on);
    }
    if relation_rank.is_some() {
        return Err(CliError::input(format!(
            "--relation-rank applies to --algo xpgp (the rank of its relation kernels), not {}",
            algo.name()
        )));
    }
    if residual != RelationResidual::None {
        return Err(CliError::input(format!(
            "--relation-residual applies to --algo xpgp (its relation kernels), not {}",
            algo.name()
        )));
    }
    if d == 0 {
        return Err(CliError::input(format!("{}: the items have no attributes", items.source)));
    }
    let m = basis.min(n);
    let pairs = data.obs.pairs();
    let np = pairs.len();
    let fail = |e: LearnError| CliError::learn(format_args!("--algo {} --basis {basis}", algo.name()), e);
    let x = Rows::Dense(MatRef::from_row_major(&items.x, n, d).map_err(|e| fail(e.into()))?);
    // Starting θ and bounds: core's policy, as the dense fit's.
    let (mut theta, mut lo, mut hi) = (vec![0.0; 3], vec![0.0; 3], vec![0.0; 3]);
    let gamma = match kernel {
        PrefKernel::Rbf(g) => Some(g),
        PrefKernel::Auto => None,
    };
    let lik = hyper::start(algo == PrefAlgo::DiffGp, gamma, d, &pairs, &mut theta, &mut lo, &mut hi).map_err(fail)?;
    let way_out = "use a smaller --basis M";
    let zeros = |len| crate::mem::zeros(len, way_out);
    let (piv, zx) = inducing_items(items, &x, theta[1].exp(), m, &fail)?;
    let r = piv.len();
    let prior =
        sparse::SparsePrior { x, z: Rows::Dense(MatRef::from_row_major(&zx, r, d).map_err(|e| fail(e.into()))?) };
    let ep = EpParams::default();
    let opt = OptParams::default();
    let storage_len = sparse::SparsePosterior::storage_len(n, r, np);
    let work_len = sparse::evidence_workspace_len(&prior).checked_add(hyper::minimize_workspace_len(3, opt.memory));
    crate::mem::check(
        &format!(
            "the sparse posterior and evidence workspace over {n} items, {r} inducing points and {np} preferences"
        ),
        work_len.and_then(|w| w.checked_add(storage_len)),
        8,
        way_out,
    )?;
    let mut storage = zeros(storage_len)?;
    let mut post = sparse::SparsePosterior::new(n, r, np, &mut storage).map_err(fail)?;
    let mut work = zeros(work_len.unwrap_or(0))?;
    let total = if free_count(&lo, &hi) == 0 { 0 } else { opt.max_iter };
    let problem = sparse::SparseProblem { prior: &prior, pairs: &pairs, lik, ep };
    let report = searched(on, total, |stop| {
        let search = hyper::Search { lo: &lo, hi: &hi, opt };
        sparse::fit_hyper_until(backend, &problem, &mut theta, &search, &mut post, &mut work, stop)
    })?;
    let report = report.map_err(fail)?;
    let fitted = Fitted {
        algo,
        kernel,
        theta: &theta,
        n_rel: 0,
        log_evidence: post.log_evidence(),
        ep_rounds: post.iterations(),
        jitter: post.jitter(),
        report: &report,
    };
    let (summary, sigma) = fitted.describe(
        &format!(" (sparse DTC, {r} inducing items)"),
        &format!(
            "approximation=sparse EP, DTC on inducing items (pivoted Cholesky, held fixed)\n\
             inducing_points={r}\nbasis_requested={basis}\n"
        ),
        meta,
    );
    let ids: Vec<&str> = piv.iter().map(|&i| items.ids[i].as_str()).collect();
    meta.push_str(&format!("inducing_ids={}\n", ids.join(",")));
    let (mut w, mut tmp) = (zeros(r * r)?, zeros(r * r)?);
    post.inducing_w(backend, &mut w, &mut tmp).map_err(fail)?;
    let mut buf = vec![0.0; packed_len(r)];
    let wm = MatRef::from_col_major(&w, r, r).map_err(|e| fail(e.into()))?;
    let fit = format::PrefInductiveModel {
        kernel: Kernel::Rbf { gamma: theta[1].exp() },
        scale: theta[0].exp(),
        sigma,
        count: np as u64,
        dim: d,
        basis: &zx,
        alpha: post.alpha(),
        w_packed: &[],
    };
    let model = format::pref_inductive_model(fit, wm, &mut buf)
        .map_err(|e| CliError::failure(format!("cannot write the model: {e}")))?;
    let bytes = emit(model, element, meta)?;
    Ok((bytes, summary))
}

/// The inducing items of a sparse fit: at most `m` items chosen by the
/// pivoted Cholesky of the RBF kernel of width `gamma` over `x`
/// (`sparse::choose_inducing`; fewer for duplicated or collinear items).
/// Returns their indices and their attributes (row-major).
///
/// # Errors
/// Too little memory for the `n × m` factor; a failed factorisation.
fn inducing_items(
    items: &PrefItems,
    x: &Rows<'_>,
    gamma: f64,
    m: usize,
    fail: &dyn Fn(LearnError) -> CliError,
) -> Result<(Vec<usize>, Vec<f64>), CliError> {
    use ranklet_core::learn::pref::sparse;
    let n = items.len();
    crate::mem::check(
        &format!("the pivoted Cholesky factor of {n} items and {m} inducing points"),
        Some(sparse::inducing_workspace_len(n, m)).filter(|&v| v < usize::MAX >> 4),
        8,
        "use a smaller --basis M",
    )?;
    let mut piv = vec![0usize; m];
    let r = {
        let mut w = crate::mem::zeros(sparse::inducing_workspace_len(n, m), "use a smaller --basis M")?;
        sparse::choose_inducing(&Kernel::Rbf { gamma }, x, &mut piv, &mut w).map_err(fail)?
    };
    piv.truncate(r);
    let mut zx = Vec::with_capacity(r * items.d);
    for &i in &piv {
        zx.extend_from_slice(items.row(i));
    }
    Ok((piv, zx))
}

/// Fits xpgp at scale (`--algo xpgp --basis M`,
/// `ranklet_core::learn::pref::xpgp_lowrank`): each relation through the
/// `K` smallest eigenpairs of its Laplacian (`--relation-rank K`, default
/// `min(M, n)`; Lanczos on the edge list, held fixed), the attributes (if
/// any) through at most `M` inducing items chosen as [`train_sparse`]
/// chooses them (held fixed), sparse EP on the `p = m + ΣK` features (`+ u`,
/// one per judged item, with `--relation-residual constant`: each
/// relation's dropped spectrum as one constant), the hyperparameters by the
/// evidence. Memory O(n·p + p² + M). The model is
/// kind 10, the posterior over the items in low-rank form
/// (`Cov(f_i, f_j) = c_iᵀc_j + δ_ij·r_i`, n·(p + 2) values), which `eval`,
/// `suggest` and `inspect` read in O(p) per pair.
///
/// # Errors
/// Bad input: `--relation-rank 0`. Resources: the sizes checked before
/// allocation. Numerical failure (a Lanczos run that does not converge
/// names its way out).
#[allow(clippy::too_many_arguments)]
fn train_lowrank<B: Backend>(
    backend: &mut B,
    kernel: PrefKernel,
    basis: usize,
    (relation_rank, residual): (Option<usize>, RelationResidual),
    data: &PrefData,
    element: ElementType,
    meta: &mut String,
    on: OnProgress<'_>,
) -> Result<(Vec<u8>, String), CliError> {
    use ranklet_core::format::{PrefLowRankModel, Values};
    use ranklet_core::learn::pref::{sparse, xpgp_lowrank as lr};
    let algo = PrefAlgo::Xpgp;
    let items = &data.items;
    let (n, d) = (items.len(), items.d);
    if relation_rank == Some(0) {
        return Err(CliError::input("--relation-rank must be ≥ 1"));
    }
    let m = basis.min(n);
    let k = relation_rank.unwrap_or(m).min(n);
    let pairs = data.obs.pairs();
    let np = pairs.len();
    let fail = |e: LearnError| {
        CliError::learn(
            format_args!("--algo xpgp --basis {basis} --relation-rank {k} --relation-residual {}", residual.name()),
            e,
        )
    };
    let rels = data.core_relations();
    let pt = xpgp::theta_len(rels.len());
    let (mut theta, mut lo, mut hi) = (vec![0.0; pt], vec![0.0; pt], vec![0.0; pt]);
    let gamma = match kernel {
        PrefKernel::Rbf(g) => Some(g),
        PrefKernel::Auto => None,
    };
    let lik = hyper::start(false, gamma, d, &pairs, &mut theta, &mut lo, &mut hi).map_err(fail)?;
    let way_out = match residual {
        RelationResidual::None => "use a smaller --basis M or --relation-rank K",
        RelationResidual::Constant => {
            "use a smaller --basis M or --relation-rank K, or --relation-residual none (no feature per judged item)"
        }
    };
    let zeros = |len| crate::mem::zeros(len, way_out);
    // Each relation's K smallest Laplacian eigenpairs (held fixed).
    let params = lr::default_eigen_params();
    let mut eig = Vec::with_capacity(rels.len());
    let mut rel_meta = String::new();
    for (r, rel) in rels.iter().enumerate() {
        let wl = lr::relation_eigen_workspace_len(n, k, rel, &params);
        let il = lr::relation_eigen_iwork_len(n, rel);
        crate::mem::check(
            &format!("the {k} smallest Laplacian eigenpairs of relation {r} over {n} items"),
            n.checked_mul(k).and_then(|v| v.checked_add(wl)).and_then(|v| v.checked_add(il)),
            8,
            way_out,
        )?;
        let mut vals = vec![0.0; k];
        let mut vecs = zeros(n * k)?;
        let info = {
            let mut work = zeros(wl)?;
            let mut iwork = vec![0usize; il];
            lr::relation_eigen(n, rel, &mut vals, &mut vecs, &mut work, &mut iwork, &params).map_err(fail)?
        };
        rel_meta.push_str(&format!(
            "relation_{r}_rank={k}\nrelation_{r}_components={}\nrelation_{r}_lanczos_restarts={}\n\
             relation_{r}_lanczos_max_residual={:e}\nrelation_{r}_largest_kept_laplacian_eigenvalue={}\n",
            info.components,
            info.lanczos.iterations,
            info.lanczos.max_residual,
            vals.last().copied().unwrap_or(0.0),
        ));
        let dropped = match residual {
            RelationResidual::None => None,
            RelationResidual::Constant => lr::dropped_mean(n, info.trace, &vals),
        };
        eig.push((vals, vecs, dropped));
    }
    // The judged items, which carry the residual constant's features.
    let mut judged = vec![0usize; n];
    let u = lr::judged_items(n, &pairs, &mut judged).map_err(fail)?;
    judged.truncate(u);
    // The attributes' inducing items (held fixed), if there are attributes.
    let x = if d > 0 {
        Some(Rows::Dense(MatRef::from_row_major(&items.x, n, d).map_err(|e| fail(e.into()))?))
    } else {
        None
    };
    let (piv, zx) = match &x {
        Some(x) => inducing_items(items, x, theta[1].exp(), m, &fail)?,
        None => (Vec::new(), Vec::new()),
    };
    let r = piv.len();
    let attr = match x {
        Some(x) => Some(sparse::SparsePrior {
            x,
            z: Rows::Dense(MatRef::from_row_major(&zx, r, d).map_err(|e| fail(e.into()))?),
        }),
        None => None,
    };
    let re: Vec<lr::RelationEigen<'_>> =
        eig.iter().map(|(v, u, dm)| lr::RelationEigen { vals: v, vecs: u, dropped_mean: *dm }).collect();
    let prior = lr::LowRankPrior { n, attr, relations: &re, residual_items: &judged };
    let (pf, u_res) = (prior.p(), prior.u());
    let ep = EpParams::default();
    let opt = OptParams::default();
    let storage_len = lr::storage_len(&prior, np);
    let work_len = lr::evidence_workspace_len(&prior).checked_add(hyper::minimize_workspace_len(pt, opt.memory.max(1)));
    crate::mem::check(
        &format!(
            "the low-rank posterior and evidence workspace over {n} items, {pf} features{} and {np} preferences",
            if u_res > 0 {
                format!(" ({u_res} of them the relations' residual on the judged items)")
            } else {
                String::new()
            }
        ),
        work_len.and_then(|w| w.checked_add(storage_len)),
        8,
        way_out,
    )?;
    let mut storage = zeros(storage_len)?;
    let mut post = lr::new_posterior(&prior, np, &mut storage).map_err(fail)?;
    let mut work = zeros(work_len.unwrap_or(0))?;
    let total = if free_count(&lo, &hi) == 0 { 0 } else { opt.max_iter };
    let problem = lr::LowRankProblem { prior: &prior, pairs: &pairs, lik, ep };
    let report = searched(on, total, |stop| {
        lr::fit_hyper_until(backend, &problem, &mut theta, (&lo, &hi), &opt, &mut post, &mut work, stop)
    })?;
    let report = report.map_err(fail)?;
    drop(work);
    let fitted = Fitted {
        algo,
        kernel,
        theta: &theta,
        n_rel: rels.len(),
        log_evidence: post.log_evidence(),
        ep_rounds: post.iterations(),
        jitter: post.jitter(),
        report: &report,
    };
    let (summary, sigma) = fitted.describe(
        &format!(
            " (low-rank: {r} inducing items, relation rank {k}{})",
            if u_res > 0 { format!(", relation residual constant on {u_res} judged items") } else { String::new() }
        ),
        &format!(
            "approximation=low-rank XPGP: sparse EP on the attribute kernel's DTC features (inducing items by \
             pivoted Cholesky) and each relation's smallest Laplacian eigenpairs (Lanczos), both held fixed\n\
             inducing_points={r}\nbasis_requested={basis}\nfeatures={pf}\n{rel_meta}{}",
            residual_meta(&theta, residual, &re, u_res)
        ),
        meta,
    );
    if r > 0 {
        let ids: Vec<&str> = piv.iter().map(|&i| items.ids[i].as_str()).collect();
        meta.push_str(&format!("inducing_ids={}\n", ids.join(",")));
    }
    // The model: kind 10 over the items, Σ = CCᵀ + diag(r) with
    // C = ΦL_B⁻ᵀ (core's p × n column-major factor is C row-major).
    let (mut mean, mut var) = (vec![0.0; n], vec![0.0; n]);
    {
        let mut mw = zeros(pf * sparse::PAIR_BLOCK)?;
        post.item_marginals(backend, &mut mean, &mut var, &mut mw).map_err(fail)?;
    }
    let mut c = zeros(pf * n)?;
    post.item_cov_factor(backend, &mut c).map_err(fail)?;
    let mut names = String::new();
    for id in &items.ids {
        names.push_str(id);
        names.push('\n');
    }
    let model = format::Model::PrefLowRank(PrefLowRankModel {
        sigma,
        count: np as u64,
        rank: pf,
        mean: Values::F64(&mean),
        resid: Values::F64(post.residual_variances()),
        factor: Values::F64(&c),
        item_names: &names,
    });
    let bytes = emit(model, element, meta)?;
    Ok((bytes, summary))
}

/// The low-rank fit's metadata on the relations' residual at the fitted
/// `θ`: the choice, the residual features, and per relation with a
/// constant the mean dropped Laplacian eigenvalue `λ̄`, the constant
/// `g_c = 1/(λ̄ + ι⁻²)` and the per-item variance `b·g_c` it adds.
fn residual_meta(
    theta: &[f64],
    residual: RelationResidual,
    re: &[ranklet_core::learn::pref::xpgp_lowrank::RelationEigen<'_>],
    u: usize,
) -> String {
    let mut s = format!("relation_residual={}\nresidual_features={u}\n", residual.name());
    for (r, rel) in re.iter().enumerate() {
        let (Some(mean), Ok(Some((gc, var)))) =
            (rel.dropped_mean, ranklet_core::learn::pref::xpgp_lowrank::residual_constant(theta, r, rel))
        else {
            continue;
        };
        s.push_str(&format!(
            "relation_{r}_dropped_mean_laplacian_eigenvalue={mean}\nrelation_{r}_residual_constant={gc}\n\
             relation_{r}_residual_variance={var}\n"
        ));
    }
    s
}

/// What to fit: the learner, its kernel, the model kind and its element
/// type, the backend (`ranklet train --prefs …`'s flags, or a Python
/// estimator's parameters).
#[derive(Clone, Copy, Debug)]
pub struct PrefRequest {
    /// The learner.
    pub algo: PrefAlgo,
    /// `rbf:auto` or a fixed width.
    pub kernel: PrefKernel,
    /// Over the fixed items (kind 8) or inductive (kind 9).
    pub kind: PrefModelKind,
    /// Element type of the model file.
    pub element: ElementType,
    /// The backend.
    pub backend: BackendChoice,
    /// Sparse EP on at most this many inducing items ([`train_sparse`];
    /// for xpgp, with each relation through its smallest Laplacian
    /// eigenpairs), or `None` for the dense fit.
    pub basis: Option<usize>,
    /// xpgp with `basis`: the number `K` of Laplacian eigenpairs kept per
    /// relation (`--relation-rank`; default `min(basis, n)`).
    pub relation_rank: Option<usize>,
    /// xpgp with `basis`: what becomes of each relation's dropped spectrum
    /// (`--relation-residual`; default none, the plain truncation).
    pub relation_residual: RelationResidual,
}

/// A fitted preference model: the `.rkl` bytes and the one-line summary
/// (hyperparameters, evidence) the CLI prints.
#[derive(Clone, Debug)]
pub struct PrefFit {
    /// The model file.
    pub bytes: Vec<u8>,
    /// The summary line.
    pub summary: String,
}

/// The preference-GP driver: the metadata of the data (sources, counts,
/// ties, relations) and [`train`]. Both the CLI and the Python estimators
/// call it, so the same data and request give the same bytes (apart from
/// the sources' names).
///
/// # Errors
/// As [`train`].
pub fn fit_prefs(req: &PrefRequest, data: &PrefData, on: OnProgress<'_>) -> Result<PrefFit, CliError> {
    let algo = req.algo;
    let mut meta = format!(
        "algorithm={}\nitems={}\nprefs={}\nn_items={}\nn_prefs={}\nties_dropped={}\nties_both={}\n",
        algo.name(),
        data.items.source,
        data.prefs.source(),
        data.items.len(),
        data.obs.len(),
        match &data.obs {
            Observations::Binary(b) => b.ties_dropped,
            Observations::Differences(_) => 0,
        },
        match &data.obs {
            Observations::Binary(b) => b.ties_both,
            Observations::Differences(_) => 0,
        }
    );
    for (r, rel) in data.relations.iter().enumerate() {
        let covered = rel.covered(data.items.len());
        meta.push_str(&format!("relation_{r}={} (items covered: {covered})\n", rel.source));
    }
    if req.basis.is_some() && algo == PrefAlgo::Xpgp && req.kind == PrefModelKind::Inductive {
        return Err(CliError::input("--inductive: a model with relations (xpgp) is over its fixed item set"));
    }
    if req.relation_residual != RelationResidual::None && req.basis.is_none() {
        return Err(CliError::input(
            "--relation-residual needs --basis M (the low-rank xpgp; without --basis the relation kernels are dense)",
        ));
    }
    if req.relation_rank.is_some() && req.basis.is_none() {
        return Err(CliError::input(
            "--relation-rank needs --basis M (the low-rank xpgp; without --basis the relation kernels are dense)",
        ));
    }
    let mut backend = HostBackend::new(req.backend);
    let (bytes, summary) = match req.basis {
        Some(m) => {
            let rel = (req.relation_rank, req.relation_residual);
            train_sparse(&mut backend, algo, req.kernel, m, rel, data, req.element, &mut meta, on)?
        }
        None => train(&mut backend, algo, req.kernel, req.kind, data, req.element, &mut meta, on)?,
    };
    Ok(PrefFit { bytes, summary })
}

/// How many parameters a box leaves free.
fn free_count(lo: &[f64], hi: &[f64]) -> usize {
    lo.iter().zip(hi).filter(|(a, b)| a < b).count()
}

/// The progress phase of the hyperparameter search: one report per
/// optimiser iteration, of at most `OptParams::max_iter` (0 when nothing is
/// free); the callback may stop it between iterations.
pub const HYPER: &str = "fitting hyperparameters by the evidence";

/// Serialises `model` with `meta`.
fn emit(model: format::Model<'_>, element: ElementType, meta: &str) -> Result<Vec<u8>, CliError> {
    let spec = ModelSpec::new(model, element).with_metadata(meta);
    let mut out = vec![0u8; spec.buffer_len()];
    let len = spec.emit(&mut out).map_err(|e| CliError::failure(format!("cannot write the model: {e}")))?;
    out.truncate(len);
    Ok(out)
}

/// A preference model read from a file: kind 8 (over named items), 9
/// (inductive) or 10 (over named items, low-rank).
pub enum PrefModel<'a> {
    /// Kind 8.
    Fixed(PrefGpView<'a>),
    /// Kind 9, and its attribute dimension.
    Inductive(PrefInductiveView<'a>, usize),
    /// Kind 10.
    LowRank(PrefLowRankView<'a>),
}

impl<'a> PrefModel<'a> {
    /// The preference model of `view`, if it is one.
    pub fn of(view: &ModelView<'a>) -> Option<PrefModel<'a>> {
        view.pref_gp()
            .map(PrefModel::Fixed)
            .or_else(|| view.pref_lowrank().map(PrefModel::LowRank))
            .or_else(|| view.pref_inductive().map(|v| PrefModel::Inductive(v, view.dim())))
    }
}

/// Held-out evaluation of a preference model: for each strict judgement
/// `w ≻ l` (ties dropped, counted on stderr), the posterior means and
/// `P(w ≻ l)` with its logarithm. A kind-8 model looks the ids of the
/// preferences file up among its own items; a kind-9 model scores the
/// attributes of `--items`/`--data`.
pub struct Scored {
    /// `(winner, loser)` indices into `mean`.
    pub pairs: Vec<(usize, usize)>,
    /// Posterior mean per item.
    pub mean: Vec<f64>,
    /// `P(w ≻ l)` per pair.
    pub prob: Vec<f64>,
    /// `log P(w ≻ l)` per pair (stable in the tails).
    pub log_prob: Vec<f64>,
    /// What became of ties ([`tie_notes`]).
    pub notes: Vec<String>,
}

/// Scores the held-out preferences of the file `path` with `model`: a
/// kind-8 model by its own item names (`items` unused), a kind-9 model
/// over `items` (required).
///
/// # Errors
/// Reader errors (file and line), ids the model does not know, a model
/// over fixed items (kind 8 or 10) without item names, no items or items
/// of another attribute dimension for kind 9, only ties.
pub fn score_prefs(model: &PrefModel<'_>, items: Option<&PrefItems>, path: &Path) -> Result<Scored, CliError> {
    if matches!(model, PrefModel::Fixed(_) | PrefModel::LowRank(_)) && model_names(model).is_empty() {
        return Err(CliError::input("the model has no item names to look the preferences up by"));
    }
    let items = match model {
        PrefModel::Fixed(_) | PrefModel::LowRank(_) => None,
        PrefModel::Inductive(..) => items,
    };
    let scorer = PrefScorer::new(model, items, &path.display().to_string())?;
    let prefs = read_prefs(path, &scorer.ids())?;
    let obs = observations(&prefs, PrefAlgo::PrefGp, path, Ties::Drop)?;
    let notes = tie_notes(&path.display().to_string(), &obs);
    let Observations::Binary(bin) = obs else { unreachable!() };
    let (mean, _) = scorer.posterior()?;
    let (prob, log_prob) = scorer.probs(&mean, &bin.pairs)?;
    Ok(Scored { pairs: bin.pairs, mean, prob, log_prob, notes })
}

/// A preference model ready to score: kind 8 over its own items (by
/// index), kind 9 over the attributes of given items.
pub struct PrefScorer<'m, 'i> {
    model: &'m PrefModel<'m>,
    items: Option<&'i PrefItems>,
    /// Named in errors.
    source: String,
}

impl<'m, 'i> PrefScorer<'m, 'i> {
    /// The scorer of `model`; `items` (required for kind 9, whose attribute
    /// dimension they must have) are what a kind-9 model scores. `source`
    /// names the judgements in errors.
    ///
    /// # Errors
    /// Kind 9 without items, or with items of another dimension.
    pub fn new(
        model: &'m PrefModel<'m>,
        items: Option<&'i PrefItems>,
        source: &str,
    ) -> Result<PrefScorer<'m, 'i>, CliError> {
        match (model, items) {
            (PrefModel::Fixed(v), _) => {
                let mut storage = vec![0.0f64; DevicePrefGp::<f64>::storage_len(v.items())];
                DevicePrefGp::<f64>::from_view(&mut storage, v).map_err(|e| CliError::learn(source, e))?;
            }
            (PrefModel::Inductive(_, dim), Some(items)) if items.d != *dim => {
                return Err(CliError::input(format!("{}: {} attributes, the model has {}", items.source, items.d, dim)))
            }
            (PrefModel::Inductive(..), Some(_)) | (PrefModel::LowRank(_), _) => {}
            (PrefModel::Inductive(..), None) => {
                return Err(CliError::input("an inductive preference model scores items given by their attributes"))
            }
        }
        Ok(PrefScorer { model, items, source: source.to_string() })
    }

    /// The ids of the items scored (kind 8: the model's item names).
    pub fn ids(&self) -> Vec<String> {
        match (self.model, self.items) {
            (PrefModel::Fixed(v), _) => (0..v.items()).map(|i| v.item_name(i).unwrap_or("").to_string()).collect(),
            (PrefModel::LowRank(v), _) => (0..v.items()).map(|i| v.item_name(i).unwrap_or("").to_string()).collect(),
            (_, Some(items)) => items.ids.clone(),
            (_, None) => Vec::new(),
        }
    }

    /// Number of items scored.
    pub fn len(&self) -> usize {
        match (self.model, self.items) {
            (PrefModel::Fixed(v), _) => v.items(),
            (PrefModel::LowRank(v), _) => v.items(),
            (_, Some(items)) => items.len(),
            (_, None) => 0,
        }
    }

    /// `true` without items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn score_err(&self, i: usize, e: ranklet_core::format::ScoreError) -> CliError {
        let (source, id) = self.items.map_or(("items", ""), |it| (it.source.as_str(), it.ids[i].as_str()));
        CliError::input(format!("{source}: item {id}: {e}"))
    }

    /// Each item's posterior mean and variance.
    ///
    /// # Errors
    /// Items the model cannot score (non-finite attributes, overflow).
    pub fn posterior(&self) -> Result<(Vec<f64>, Vec<f64>), CliError> {
        match (self.model, self.items) {
            (PrefModel::Fixed(v), _) => {
                let mean = v.mean().iter().collect();
                Ok((mean, (0..v.items()).map(|i| v.cov(i, i)).collect()))
            }
            (PrefModel::LowRank(v), _) => {
                let mean = v.mean().iter().collect();
                Ok((mean, (0..v.items()).map(|i| v.cov(i, i)).collect()))
            }
            (PrefModel::Inductive(v, _), Some(items)) => {
                let mut work = vec![0.0; v.prob_workspace_len()];
                let (mut mean, mut var) = (vec![0.0; items.len()], vec![0.0; items.len()]);
                for i in 0..items.len() {
                    (mean[i], var[i]) = v.predict(items.row(i), &mut work).map_err(|e| self.score_err(i, e))?;
                }
                Ok((mean, var))
            }
            (PrefModel::Inductive(..), None) => Ok((Vec::new(), Vec::new())),
        }
    }

    /// `P(w ≻ l)` and its logarithm (stable in the tails) for each pair of
    /// item indices, given the items' posterior means `mean`.
    ///
    /// # Errors
    /// An index out of range; items the model cannot score.
    pub fn probs(&self, mean: &[f64], pairs: &[(usize, usize)]) -> Result<(Vec<f64>, Vec<f64>), CliError> {
        let n = self.len();
        if let Some(&(w, l)) = pairs.iter().find(|&&(w, l)| w >= n || l >= n) {
            return Err(CliError::input(format!("pair ({w}, {l}): an item index beyond the {n} items")));
        }
        let mut prob = Vec::with_capacity(pairs.len());
        let mut log_prob = Vec::with_capacity(pairs.len());
        match (self.model, self.items) {
            (PrefModel::Fixed(v), _) => {
                let mut storage = vec![0.0f64; DevicePrefGp::<f64>::storage_len(v.items())];
                let gp =
                    DevicePrefGp::<f64>::from_view(&mut storage, v).map_err(|e| CliError::learn(&self.source, e))?;
                for &(w, l) in pairs {
                    let (p, var) = gp.prob(w, l).map_err(|e| CliError::learn(&self.source, e))?;
                    prob.push(p);
                    log_prob.push(log_prob_of(mean[w] - mean[l], var, v.sigma()));
                }
            }
            (PrefModel::LowRank(v), _) => {
                for &(w, l) in pairs {
                    let (p, var) = v.prob(w, l).ok_or_else(|| {
                        CliError::input(format!("pair ({w}, {l}): an item index beyond the {n} items"))
                    })?;
                    prob.push(p);
                    log_prob.push(log_prob_of(mean[w] - mean[l], var, v.sigma()));
                }
            }
            (PrefModel::Inductive(v, _), Some(items)) => {
                let mut work = vec![0.0; v.prob_workspace_len()];
                for &(w, l) in pairs {
                    let (p, var) = v.prob(items.row(w), items.row(l), &mut work).map_err(|e| self.score_err(w, e))?;
                    prob.push(p);
                    log_prob.push(log_prob_of(mean[w] - mean[l], var, v.sigma()));
                }
            }
            (PrefModel::Inductive(..), None) => {}
        }
        Ok((prob, log_prob))
    }
}

/// `log P(w ≻ l) = log Φ(m/√(2σ² + v))` by core's tail-stable `log Φ`.
fn log_prob_of(mean_diff: f64, var_diff: f64, sigma: f64) -> f64 {
    ranklet_core::special::log_norm_cdf(mean_diff / (2.0 * sigma * sigma + var_diff.max(0.0)).sqrt())
}

/// One suggested question.
#[derive(Clone, Debug, PartialEq)]
pub struct Suggestion {
    /// The pair (item indices of the model).
    pub i: usize,
    /// Second item.
    pub j: usize,
    /// Posterior mean of `f_i − f_j` when it was picked.
    pub mean_diff: f64,
    /// Posterior variance of `f_i − f_j` when it was picked.
    pub var_diff: f64,
}

/// The next `k` pairs to ask of a kind-8 model (001 §5): core's
/// `active::select_pairs_cov` over every pair `i < j` of the stored
/// posterior (the pair of highest `v/m²` by the one rule of
/// `learn::next_pair`, then the posterior updated as if the more probable
/// answer had been given, and again).
///
/// # Errors
/// A failed eigendecomposition or update.
pub fn suggest(view: &PrefGpView<'_>, k: usize) -> Result<Vec<Suggestion>, CliError> {
    let n = view.items();
    let bad = |e: LearnError| CliError::learn("suggest", e);
    let mean: Vec<f64> = view.mean().iter().collect();
    let cov: Vec<f64> = view.cov_packed().iter().collect();
    let candidates: Vec<(usize, usize)> = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect();
    let mut picks = vec![Pick::default(); k.min(candidates.len())];
    let mut work = vec![0.0; select_cov_workspace_len(n)];
    let lik = Likelihood::Probit { sigma: view.sigma() };
    let mut backend = HostBackend::new(BackendChoice::Faer);
    let got = select_pairs_cov(&mut backend, &mean, &cov, lik, &candidates, &mut picks, &mut work).map_err(bad)?;
    Ok(picks[..got]
        .iter()
        .map(|p| {
            let (i, j) = candidates[p.candidate];
            Suggestion { i, j, mean_diff: p.mean_diff, var_diff: p.var }
        })
        .collect())
}

/// The item names text of a model over fixed items (`""` for kind 9).
fn model_names<'a>(model: &PrefModel<'a>) -> &'a str {
    match model {
        PrefModel::Fixed(v) => v.item_names(),
        PrefModel::LowRank(v) => v.item_names(),
        PrefModel::Inductive(..) => "",
    }
}

/// The next `k` pairs to ask of a kind-10 (low-rank) model among every
/// pair of its items, as [`suggest`] picks them for kind 8 (the pair of
/// highest `v/m²` by the one rule of `learn::next_pair`, then the posterior
/// updated as if the more probable answer had been given, and again), but
/// without an `n × n` matrix: core's `active::select_pairs_lowrank`, a
/// screened search per pick with the model's variance
/// `v_ij = ‖c_i − c_j‖² + r_i + r_j` (O(p) per pair) and an update of the
/// `n × (p + 2k)` factor. Fewer than `k` only when no pair is left to ask.
///
/// # Errors
/// Too little memory for the factor; non-finite values.
pub fn suggest_lowrank(view: &PrefLowRankView<'_>, k: usize) -> Result<Vec<Suggestion>, CliError> {
    use ranklet_core::learn::pref::active::{select_lowrank_workspace_len, select_pairs_lowrank, PairPick};
    let (n, p) = (view.items(), view.rank());
    let bad = |e: LearnError| CliError::learn("suggest", e);
    let k = k.min(n.saturating_mul(n.saturating_sub(1)) / 2);
    let way_out = "ask for fewer pairs (-k)";
    let what = format!("the factor of {n} items at rank {p} for {k} pairs");
    let len = crate::mem::check_len(&what, select_lowrank_workspace_len(n, p, k), 8, way_out)?;
    let mean: Vec<f64> = view.mean().iter().collect();
    let resid: Vec<f64> = view.resid().iter().collect();
    let c: Vec<f64> = view.factor().iter().collect();
    let mut work = crate::mem::zeros(len, way_out)?;
    let mut order = vec![0u32; n];
    let mut picks = vec![PairPick::default(); k];
    let lik = Likelihood::Probit { sigma: view.sigma() };
    let got = select_pairs_lowrank(&mean, &c, p, &resid, lik, &mut picks, &mut work, &mut order).map_err(bad)?;
    Ok(picks[..got].iter().map(|b| Suggestion { i: b.i, j: b.j, mean_diff: b.mean_diff, var_diff: b.var }).collect())
}

/// Items per block of [`suggest_inductive`]'s projections.
const SUGGEST_BLOCK: usize = 2048;

/// The next pair to ask of a kind-9 (inductive) model among every pair of
/// `items`, without an `n × n` matrix: the one rule of
/// `learn::next_pair` through core's screened search
/// (`next_pair::best_pair_screened`, as the online learner's
/// `next_pair_screened`). The variance of `f_i − f_j` is the model's,
/// `v = max(0, a·(k_ii + k_jj − 2k_ij) − q_ijᵀWq_ij)` with
/// `q_ij = k_i − k_j` over the basis; `W = FFᵀ` (`F = Q·Λ^½` from the
/// eigendecomposition of the stored `W`, negative rounding eigenvalues
/// clamped to 0) makes the quadratic form `‖Fᵀk_i − Fᵀk_j‖²`, O(M) per
/// pair after O(n·M²) of projections. The screen's bound is the prior's,
/// `v ≤ (√(a·k_ii) + √(a·k_jj))²`. Memory O(n·M + M²).
///
/// # Errors
/// Too little memory for `n × M`, attribute dimensions that differ from
/// the model's, a failed eigendecomposition, non-finite values.
pub fn suggest_inductive(
    view: &PrefInductiveView<'_>,
    dim: usize,
    items: &PrefItems,
) -> Result<Option<Suggestion>, CliError> {
    use ranklet_core::learn::next_pair::best_pair_screened;
    use ranklet_core::MatMut;
    use rayon::prelude::*;
    let (n, r, d) = (items.len(), view.rows(), dim);
    if items.d != d {
        return Err(CliError::input(format!("{}: {} attributes, the model has {d}", items.source, items.d)));
    }
    let bad = |e: ranklet_core::LinalgError| CliError::learn("suggest", LearnError::from(e));
    let way_out = "suggest on fewer items, or a model with a smaller --basis";
    let elems = n.checked_mul(r).and_then(|v| v.checked_add(r.checked_mul(r)?.checked_mul(3)?));
    crate::mem::check(&format!("the projections of {n} items on {r} basis rows"), elems, 8, way_out)?;
    let zeros = |len| crate::mem::zeros::<f64>(len, way_out);
    // F = Q·Λ^½ from W = QΛQᵀ (lower triangle read).
    let mut w = zeros(r * r)?;
    let wp = view.w_packed();
    for i in 0..r {
        for j in 0..=i {
            w[j * r + i] =
                wp.get(packed_len(i) + j).ok_or_else(|| bad(ranklet_core::LinalgError::DimensionMismatch))?;
        }
    }
    let mut lam = vec![0.0; r];
    let mut f = zeros(r * r)?;
    let mut backend = HostBackend::new(BackendChoice::Faer);
    backend
        .sym_eigen(
            MatRef::from_col_major(&w, r, r).map_err(bad)?,
            &mut lam,
            MatMut::from_col_major(&mut f, r, r).map_err(bad)?,
        )
        .map_err(bad)?;
    for (col, l) in f.chunks_exact_mut(r).zip(&lam) {
        let s = l.max(0.0).sqrt();
        col.iter_mut().for_each(|v| *v *= s);
    }
    // Per item: k_i (a block at a time), the mean k_iᵀα, the prior
    // variance a·k_ii and z_i = Fᵀk_i (column i of z, r × n).
    let alpha: Vec<f64> = view.alpha().iter().collect();
    let mut z = zeros(n * r)?;
    let mut kblock = zeros(SUGGEST_BLOCK.min(n.max(1)) * r)?;
    let (mut mean, mut prior) = (vec![0.0; n], vec![0.0; n]);
    let mut i0 = 0;
    while i0 < n {
        let i1 = (i0 + SUGGEST_BLOCK).min(n);
        let kb = &mut kblock[..(i1 - i0) * r];
        kb.par_chunks_mut(r).zip(mean[i0..i1].par_iter_mut().zip(prior[i0..i1].par_iter_mut())).enumerate().for_each(
            |(k, (kx, (m, p)))| {
                *p = view.kernel_row(items.row(i0 + k), kx);
                *m = kx.iter().enumerate().map(|(i, v)| v * alpha[i]).sum();
            },
        );
        backend
            .gemm(
                1.0,
                MatRef::from_col_major(&f, r, r).map_err(bad)?.t(),
                MatRef::from_col_major(kb, r, i1 - i0).map_err(bad)?,
                0.0,
                MatMut::from_col_major(&mut z[i0 * r..i1 * r], r, i1 - i0).map_err(bad)?,
            )
            .map_err(bad)?;
        i0 = i1;
    }
    if !(mean.iter().chain(&prior).all(|v| v.is_finite()) && z.iter().all(|v| v.is_finite())) {
        return Err(bad(ranklet_core::LinalgError::NonFinite));
    }
    let radius: Vec<f64> = prior.iter().map(|p| p.max(0.0).sqrt()).collect();
    let (kernel, scale) = (view.kernel(), view.scale());
    let sq = |x: &[f64]| x.iter().map(|v| v * v).sum::<f64>();
    let var = |i: usize, j: usize| -> f64 {
        let (x, y) = (items.row(i), items.row(j));
        let xy: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
        let kxy = scale * kernel.from_dot(xy, sq(x), sq(y));
        let pv = prior[i] + prior[j] - 2.0 * kxy;
        let q = ranklet_core::linalg::sq_dist(&z[i * r..(i + 1) * r], &z[j * r..(j + 1) * r]);
        (pv - q).max(0.0)
    };
    let margin = 1.0 + (4 * d + 16) as f64 * f64::EPSILON;
    let mut order = vec![0u32; n];
    let best = best_pair_screened(&mean, &radius, margin, &mut order, var).map_err(bad)?;
    Ok(best.map(|c| Suggestion { i: c.i, j: c.j, mean_diff: mean[c.i] - mean[c.j], var_diff: c.var }))
}

/// A metric on held-out judgements `w ≻ l` (ties dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefMetric {
    /// Fraction of judgements whose posterior means are ordered wrongly
    /// (equal means count ½), the "error rate" of 001 §6 and the pair error
    /// of 000 §6.2.
    PairError,
    /// AUC of the predicted probabilities: each judgement once as it was
    /// observed (positive, score `P(w ≻ l)`) and once reversed (negative,
    /// score `P(l ≻ w)`); the Mann–Whitney statistic of the two sets.
    Auc,
    /// Mean negative log predictive probability `−log P(w ≻ l)`.
    LogLoss,
}

impl PrefMetric {
    /// Parses `pairerror`, `auc`, `logloss`.
    pub fn parse(s: &str) -> Result<PrefMetric, CliError> {
        match s.trim() {
            "pairerror" => Ok(PrefMetric::PairError),
            "auc" => Ok(PrefMetric::Auc),
            "logloss" => Ok(PrefMetric::LogLoss),
            other => Err(CliError::input(format!(
                "--metric: '{other}' does not apply to preferences (pairerror, auc, logloss)"
            ))),
        }
    }

    /// The name as printed.
    pub fn name(self) -> &'static str {
        match self {
            PrefMetric::PairError => "pairerror",
            PrefMetric::Auc => "auc",
            PrefMetric::LogLoss => "logloss",
        }
    }

    /// The metric of `pairs` (winner, loser) given each item's posterior
    /// mean `mean` and, per pair, the predictive `P(w ≻ l)` and its
    /// logarithm (computed by core, stable in the tails).
    ///
    /// # Errors
    /// No pairs, or a non-finite input (core's metric errors).
    pub fn eval(self, mean: &[f64], pairs: &[(usize, usize)], prob: &[f64], log_prob: &[f64]) -> Result<f64, CliError> {
        let err = |e: metrics::MetricError| CliError::failure(format!("{}: {e}", self.name()));
        if pairs.is_empty() {
            return Err(CliError::input(format!("{}: no held-out preference", self.name())));
        }
        match self {
            PrefMetric::PairError => metrics::pair_error(mean, pairs, None).map_err(err),
            PrefMetric::Auc => {
                let m = prob.len();
                let labels: Vec<f64> = (0..2 * m).map(|k| if k < m { 1.0 } else { 0.0 }).collect();
                let scores: Vec<f64> = prob.iter().copied().chain(prob.iter().map(|p| 1.0 - p)).collect();
                let mut work = vec![0usize; metrics::index_workspace_len(2 * m)];
                metrics::auc(&labels, &scores, 0.5, &mut work).map_err(err)
            }
            PrefMetric::LogLoss => {
                if let Some(v) = log_prob.iter().find(|v| !v.is_finite()) {
                    return Err(CliError::failure(format!("logloss: a log probability of {v}")));
                }
                Ok(-log_prob.iter().sum::<f64>() / log_prob.len() as f64)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_on_a_small_case_by_hand() {
        // Items 0..3 with means 3, 2, 1; pairs 0≻1 (right), 2≻1 (wrong),
        // 0≻2 (right).
        let mean = [3.0, 2.0, 1.0];
        let pairs = [(0, 1), (2, 1), (0, 2)];
        let prob = [0.9, 0.3, 0.6];
        let logp: Vec<f64> = prob.iter().map(|p: &f64| p.ln()).collect();
        let e = PrefMetric::PairError.eval(&mean, &pairs, &prob, &logp).unwrap();
        assert!((e - 1.0 / 3.0).abs() < 1e-15);
        // Positives {0.9, 0.3, 0.6}, negatives {0.1, 0.7, 0.4}: of the 9
        // (pos, neg) comparisons, 0.9 beats 3, 0.6 beats 2 (0.1, 0.4), 0.3
        // beats 1 (0.1): 6/9.
        let auc = PrefMetric::Auc.eval(&mean, &pairs, &prob, &logp).unwrap();
        assert!((auc - 6.0 / 9.0).abs() < 1e-15, "{auc}");
        let ll = PrefMetric::LogLoss.eval(&mean, &pairs, &prob, &logp).unwrap();
        let want = -(0.9f64.ln() + 0.3f64.ln() + 0.6f64.ln()) / 3.0;
        assert!((ll - want).abs() < 1e-15);
        assert!(PrefMetric::parse("ndcg").is_err());
        assert_eq!(PrefMetric::parse(" auc").unwrap(), PrefMetric::Auc);
    }
}
