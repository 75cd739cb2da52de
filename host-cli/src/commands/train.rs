//! `ranklet train`: argument parsing in two stages (clap's raw flags here,
//! validated objects in [`RowsPlan`], [`ranklet::train_rows`]) and the orchestration of reading,
//! cross-validation, fitting and writing. With `--items/--orders` it learns
//! from sample orders (paper 003; `ranklet::ordering`), with `--edges` from
//! labelled edges (004; `ranklet::family::kron`), with `--prefs` from
//! preferences between items (000 §5, 001; `ranklet::family::pref`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use ranklet::args::{
    heading, parse_cv, parse_kernel_arg, parse_list, parse_metric, KernelArg, Precision, QueryWeightArg,
};
use ranklet::cv::{self, Scheme};
use ranklet::data::svmlight::SvmlightOptions;
use ranklet::data::{read_edges, EdgeOptions};
use ranklet::error::{check_writable, write_atomic, CliError};
use ranklet::family::kron::{EdgeMetric, KronAlgo, NodeSets, PairArg};
use ranklet::family::ls_stats::fit_merged;
use ranklet::family::ls_stream::fit_linear_stream;
use ranklet::family::pref::{
    fit_prefs, tie_notes, PrefAlgo, PrefFit, PrefKernel, PrefModelKind, PrefRequest, RelationResidual,
};
use ranklet::family::{Algo, Family, RowFamily};
use ranklet::fit::Fitted;
use ranklet::hostbackend::{BackendChoice, HostBackend};
use ranklet::metric::Metric;
use ranklet::model_io::model_bytes;
use ranklet::ordering::{self, parse_reduce_arg, OrderAlgo, OrdersRequest, ReduceMethod};
use ranklet::train_edges::{fit_edges, EdgesRequest};
use ranklet::train_rows::{fit_error, fit_rows, push_chosen, rows_meta, RowsCv, RowsPlan, RowsRequest};
use ranklet_core::learn::ls_stats;

use crate::cli_output::{note, Bar};
use crate::cli_values::{self, lib_enum};
use crate::input::{DataArgs, Loaded, PairsArgs};

/// The learner of `ranklet train`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TrainAlgo {
    /// Regularised least squares on the scores (ridge regression); rows.
    Rls,
    /// Least squares on score differences within queries / pairs / orders.
    Rankrls,
    /// Regression on the top-p kernel principal components; rows.
    Kpcr,
    /// RankRLS on the top-p kernel principal components (000 §4); rows.
    Kpcrank,
    /// Expected Rank Regression (003 eq. 5); sample orders.
    Err,
    /// Kronecker RLS: regression over labelled edges (004 eq. 5); edges.
    KronRls,
    /// Kronecker RankRLS: conditional ranking over labelled edges,
    /// conditioned on the first node (004 eq. 6); edges.
    KronRankrls,
    /// Probit pairwise GP with EP (000 §5, eq. 10); preferences between
    /// items (--prefs).
    PrefGp,
    /// XPGP: the pairwise GP on attributes and relations between the items
    /// (001); --prefs with --relation / --relation-groups.
    Xpgp,
    /// Score-difference GP: Gaussian likelihood on s_a − s_b, exact (000
    /// §5); --prefs with differences.
    DiffGp,
}

impl TrainAlgo {
    /// The learner on rows (`--data`, `--pairs`).
    fn on_rows(self) -> Result<Algo, CliError> {
        match self {
            TrainAlgo::Rls => Ok(Algo::Rls),
            TrainAlgo::Rankrls => Ok(Algo::Rankrls),
            TrainAlgo::Kpcr => Ok(Algo::Kpcr),
            TrainAlgo::Kpcrank => Ok(Algo::Kpcrank),
            TrainAlgo::Err => {
                Err(CliError::input("--algo err learns from sample orders: give --items and --orders, not --data"))
            }
            TrainAlgo::KronRls | TrainAlgo::KronRankrls => {
                Err(CliError::input("--algo kron-rls/kron-rankrls learn from labelled edges: give --edges, not --data"))
            }
            TrainAlgo::PrefGp | TrainAlgo::Xpgp | TrainAlgo::DiffGp => Err(CliError::input(
                "--algo pref-gp/xpgp/diff-gp learn from preferences between items: give --prefs (with --items or --data)",
            )),
        }
    }
    /// The learner on preferences between items (`--prefs`).
    fn on_prefs(self) -> Result<PrefAlgo, CliError> {
        match self {
            TrainAlgo::PrefGp => Ok(PrefAlgo::PrefGp),
            TrainAlgo::Xpgp => Ok(PrefAlgo::Xpgp),
            TrainAlgo::DiffGp => Ok(PrefAlgo::DiffGp),
            other => Err(CliError::input(format!(
                "--algo {}: preferences between items (--prefs) train pref-gp, xpgp or diff-gp",
                other.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string())
            ))),
        }
    }
    /// The learner on labelled edges (`--edges`).
    fn on_edges(self) -> Result<KronAlgo, CliError> {
        match self {
            TrainAlgo::KronRls => Ok(KronAlgo::Rls),
            TrainAlgo::KronRankrls => Ok(KronAlgo::Rankrls),
            other => Err(CliError::input(format!(
                "--algo {}: edges (--edges) train kron-rls or kron-rankrls",
                other.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string())
            ))),
        }
    }
    /// The learner on sample orders (`--items`, `--orders`).
    fn on_orders(self) -> Result<OrderAlgo, CliError> {
        match self {
            TrainAlgo::Err => Ok(OrderAlgo::Err),
            TrainAlgo::Rankrls => Ok(OrderAlgo::Rankrls),
            other => Err(CliError::input(format!(
                "--algo {}: sample orders (--items/--orders) train err or rankrls",
                other.to_possible_value().map_or_else(String::new, |v| v.get_name().to_string())
            ))),
        }
    }
}

/// `ranklet train`: from rows (`--data`, optionally `--pairs`) or from
/// sample orders (`--items --orders`). Flags of one data kind are refused
/// with the other (clap names both flags; exit 2).
#[derive(Args, Debug)]
#[command(mut_group("input", |g| g.arg("from_stats")))]
pub struct TrainArgs {
    #[command(flatten)]
    pub data: DataArgs,
    /// rls/rankrls (linear or Nyström statistics) or kpcr/kpcrank (Nyström
    /// statistics, `ranklet stats --kernel --basis`) from statistics files
    /// instead of rows: merged (a query split across files counts as
    /// whole), the CV table from their folds (--cv K as they were made),
    /// the model as `--data` on all their rows would give (Nyström: the
    /// reduced-basis kernel model over the files' landmarks).
    #[arg(long, value_name = "S.rks", num_args = 1.., conflicts_with_all = ["data", "items", "edges", "prefs", "kernel", "basis", "standardize", "plot_cv", "metric"], help_heading = heading::ROWS)]
    pub from_stats: Vec<PathBuf>,
    /// Reduce the attributes first and learn on the reduced ones:
    /// `rcdr-kendall:K`, `rcdr-spearman:K` or `pca:K`. The model is folded
    /// back to the original attributes.
    #[arg(long, value_name = "METHOD:K", value_parser = parse_reduce_arg, requires = "orders", conflicts_with = "data", help_heading = heading::ORDERS)]
    pub reduce: Option<(ReduceMethod, usize)>,
    /// Learner: rls, rankrls, kpcr, kpcrank on rows; err, rankrls on sample
    /// orders; kron-rls, kron-rankrls on edges; pref-gp, xpgp, diff-gp on
    /// preferences between items.
    #[arg(long, value_enum, help_heading = heading::LEARNER)]
    pub algo: TrainAlgo,
    /// Kernel(s): `linear`, `rbf:G`, `poly:D[:G[:C]]`; a comma list is a
    /// grid (`rbf:0.5,1,2` = three RBF widths). Preference GPs: `rbf:G` or
    /// `rbf:auto` (the default there: γ fitted by the evidence); elsewhere
    /// the default is `linear`.
    #[arg(long, value_parser = parse_kernel_arg, conflicts_with = "orders", help_heading = heading::LEARNER)]
    pub kernel: Option<KernelArg>,
    /// Ridge λ ≥ 0, or (rows) a comma list (grid). Default 1 for rls,
    /// rankrls and err, 0 for kpcr and kpcrank.
    #[arg(long, allow_hyphen_values = true, help_heading = heading::LEARNER)]
    pub lambda: Option<String>,
    /// Number of principal components (kpcr/kpcrank), or a comma list.
    #[arg(long, conflicts_with_all = ["items", "edges"], help_heading = heading::LEARNER)]
    pub components: Option<String>,
    /// Reduced basis (rls, rankrls, kpcr, kpcrank on rows): at most M
    /// landmark training rows, chosen by pivoted Cholesky of the kernel
    /// matrix; the learner is solved in their (Nyström) feature space and
    /// the model stores only them. With --cv the landmarks are chosen
    /// inside each fold from its training rows. 1 ≤ M ≤ rows. For pref-gp
    /// and diff-gp: sparse EP on at most M inducing items (chosen the same
    /// way), memory n·M instead of n²; the model is the inductive kind over
    /// them.
    #[arg(long, value_name = "M", conflicts_with = "edges", help_heading = heading::LEARNER)]
    pub basis: Option<usize>,
    /// xpgp with --basis M: keep the K smallest eigenpairs of each
    /// relation's Laplacian (the K largest of its kernel (Δ + I/ι²)⁻¹,
    /// found by Lanczos on the edge list; default min(M, items)). Memory
    /// n·(M + ΣK), no n × n matrix in the fit.
    #[arg(long, value_name = "K", requires = "basis", help_heading = heading::LEARNER)]
    pub relation_rank: Option<usize>,
    /// xpgp with --basis M: what becomes of each relation kernel's
    /// spectrum beyond the K kept eigenpairs. `none` drops it (default:
    /// the cost stays n·(M + ΣK)); `constant` keeps it as one constant
    /// 1/(λ̄ + ι⁻²) per relation (λ̄ the mean dropped Laplacian eigenvalue,
    /// from the trace; exact when the dropped spectrum is flat), at the
    /// price of one more feature per judged item — worth it when the
    /// evidence makes the relation kernel nearly flat (ι⁻² above the
    /// Laplacian's eigenvalues) and K ≪ items.
    #[arg(long, value_parser = lib_enum::<cli_values::RelationResidual>(), default_value = "none", requires = "basis", help_heading = heading::LEARNER)]
    pub relation_residual: RelationResidual,
    /// Weighting of the within-query graphs (rows): `equal` (each query
    /// counts equally, L_q = I − 11ᵀ/l_q) or `pairs` (plain Laplacian, each
    /// pair counts equally).
    #[arg(long, value_parser = lib_enum::<cli_values::QueryWeight>(), default_value = "equal", conflicts_with = "items", help_heading = heading::LEARNER)]
    pub query_weight: QueryWeightArg,
    /// Standardise every feature to mean 0 and standard deviation 1 over the
    /// training rows; the model stores the transform and applies it when
    /// scoring. Dense data only (centring would fill sparse rows).
    #[arg(long, conflicts_with_all = ["items", "edges"], help_heading = heading::LEARNER)]
    pub standardize: bool,
    /// Pair kernel over edges: kron (ordinary Kronecker), sym (symmetric)
    /// or recip (reciprocal); sym and recip need one node set.
    #[arg(long, value_parser = lib_enum::<cli_values::PairKernel>(), requires = "edges", help_heading = heading::LEARNER)]
    pub pair_kernel: Option<PairArg>,
    /// Conjugate-gradient iterations on an incomplete graph (edges;
    /// default 200). Early stopping regularises too.
    #[arg(long, requires = "edges", help_heading = heading::LEARNER)]
    pub max_iter: Option<usize>,
    /// Linear-algebra backend.
    #[arg(long, value_parser = lib_enum::<cli_values::Backend>(), default_value = "faer", help_heading = heading::LEARNER)]
    pub backend: BackendChoice,
    /// Cross-validation (rows): a number of folds, or `loo` for the
    /// closed-form leave-one-out (rls) / leave-query-out (rankrls). Required
    /// for grids.
    #[arg(long, value_name = "K|loo", value_parser = parse_cv, conflicts_with = "items", help_heading = heading::CV)]
    pub cv: Option<Scheme>,
    /// Metric that selects the grid point.
    #[arg(
        long,
        value_parser = parse_metric,
        conflicts_with = "items",
        help_heading = heading::CV,
        help = concat!(
            "Metric that selects the grid point: one of ",
            ranklet::metric_names!(),
            " (default: disagreement, or pairerror with --pairs)"
        )
    )]
    pub metric: Option<Metric>,
    /// Seed of the fold assignment.
    #[arg(long, default_value_t = 1, conflicts_with = "items", help_heading = heading::CV)]
    pub seed: u64,
    /// Also write the cross-validation curve as a PNG (needs --cv).
    #[arg(long, conflicts_with_all = ["items", "edges"], help_heading = heading::CV)]
    pub plot_cv: Option<PathBuf>,
    /// Preference GPs (pref-gp, diff-gp): write the inductive model (kind
    /// 9: basis rows, α, W), which predicts new items from their
    /// attributes, instead of the posterior over the training items (kind
    /// 8, by item id), which `suggest` and devices use.
    #[arg(long, requires = "prefs", help_heading = heading::OUTPUT)]
    pub inductive: bool,
    /// Element type of the model file.
    #[arg(long, value_parser = lib_enum::<cli_values::Precision>(), default_value = "f32", help_heading = heading::OUTPUT)]
    pub precision: Precision,
    /// Output model file (.rkl).
    #[arg(short, long, help_heading = heading::OUTPUT)]
    pub output: PathBuf,
}

/// The `--kernel` list of the learners that do not fit a kernel (default
/// `linear`).
fn kernels_or_linear(k: &Option<KernelArg>) -> Result<Vec<ranklet_core::kernel::Kernel>, CliError> {
    k.as_ref().map_or(Ok(vec![ranklet_core::kernel::Kernel::Linear]), KernelArg::kernels)
}

/// The training request of `--data` (stage two of argument parsing): the
/// flags as plain values, checked by [`RowsRequest::plan`].
fn rows_plan(a: &TrainArgs) -> Result<RowsPlan, CliError> {
    let algo = a.algo.on_rows()?;
    let lambdas = a.lambda.as_deref().map(|l| parse_list::<f64>("lambda", l)).transpose()?;
    let components = a.components.as_deref().map(|c| parse_list::<usize>("components", c)).transpose()?;
    let request = RowsRequest {
        algo,
        kernels: kernels_or_linear(&a.kernel)?,
        lambdas,
        components,
        basis: a.basis,
        query_weight: a.query_weight,
        standardize: a.standardize,
        cv: a.cv,
        metric: a.metric,
        seed: a.seed,
        element: a.precision.element(),
        backend: a.backend,
        metadata: Vec::new(),
    };
    request.plan(a.data.pairs.pairs.is_some())
}

/// `ranklet train`.
pub fn train(a: TrainArgs) -> Result<(), CliError> {
    // Before reading or fitting anything: a run of minutes must not end in
    // "cannot write".
    check_writable(&a.output)?;
    if !a.from_stats.is_empty() {
        return train_from_stats(&a);
    }
    if a.data.graph.edges.is_some() {
        return train_edges(&a);
    }
    if a.data.prefs.prefs.is_some() {
        return train_prefs(&a);
    }
    match a.data.orders.paths() {
        Some((items, orders)) => train_orders(&a, items, orders),
        None => train_rows(&a),
    }
}

/// `ranklet train --data …`: reading, then the library's driver
/// ([`fit_rows`]), then the file and the reports.
fn train_rows(a: &TrainArgs) -> Result<(), CliError> {
    let plan = rows_plan(a)?;
    let data_path = a.data.rows.path()?;
    if a.plot_cv.is_some() && plan.scheme.is_none() {
        return Err(CliError::input("--plot-cv needs --cv"));
    }
    if train_rows_streamed(a, &plan, data_path)? {
        return Ok(());
    }
    let ds = a.data.rows.read(None)?;
    let folds = match a.cv {
        Some(Scheme::KFold(k)) => k,
        _ => 0,
    };
    let pairs = a.data.pairs.read(ds.n_rows(), &PairsArgs::training_cost(folds))?;
    let mut bar = Bar::default();
    let fit = fit_rows(&plan, ds, pairs.as_deref(), &data_path.display().to_string(), &mut |p| bar.show(p))?;
    drop(bar);
    fit.notes.iter().for_each(|n| eprintln!("{n}"));
    eprintln!("chosen: {}", fit.chosen);
    if let Some(r) = fit.landmarks {
        eprintln!("reduced basis: {r} landmark rows (at most {}) of {}", plan.family.basis().unwrap_or(r), fit.rows);
    }
    write_model(&a.output, &fit.bytes)?;
    // The CV table is printed (and plotted) only once the model is written,
    // so a failed run prints nothing to stdout and leaves no file.
    match (&fit.cv, &plan.family) {
        (Some(RowsCv::Ls(r)), RowFamily::Ls(f)) => report_cv(a, r, f),
        (Some(RowsCv::Kpc(r)), RowFamily::Kpc(f)) => report_cv(a, r, f),
        _ => Ok(()),
    }
}

/// `ranklet train` of linear RLS / RankRLS with one λ and no CV from an
/// SVMlight file, read and fitted in one pass
/// ([`ranklet::family::ls_stream`]): the same model (to rounding), metadata
/// and messages as the in-memory path. `Ok(false)` where it does not apply
/// (nothing written; the caller reads the file into memory).
fn train_rows_streamed(a: &TrainArgs, plan: &RowsPlan, data_path: &Path) -> Result<bool, CliError> {
    let RowFamily::Ls(f) = &plan.family else {
        return Ok(false);
    };
    let points = f.points();
    let rows = &a.data.rows;
    if plan.scheme.is_some()
        || a.standardize
        || a.data.pairs.pairs.is_some()
        || rows.is_csv()
        || rows.label_col.is_some()
        || rows.qid_col.is_some()
        || f.basis.is_some()
        || points.len() != 1
        || points[0].kernel != ranklet_core::kernel::Kernel::Linear
    {
        return Ok(false);
    }
    let p = points[0];
    let mut backend = HostBackend::new(a.backend);
    let opts = SvmlightOptions { num_features: rows.num_features, ..Default::default() };
    let Some(fit) = fit_linear_stream(&mut backend, data_path, &opts, f.ranker, a.query_weight.to_core(), p.lambda)?
    else {
        return Ok(false);
    };
    let fit = fit.map_err(fit_error)?;
    let mut meta = rows_meta(f.name(), &data_path.display().to_string(), fit.rows, fit.queries, a.query_weight);
    eprintln!("chosen: {}", push_chosen(&mut meta, f, &p));
    let bytes = model_bytes(&Fitted::Linear { w: fit.w, offset: 0.0 }, fit.d, plan.request.element, &meta, None)?;
    write_model(&a.output, &bytes)?;
    Ok(true)
}

/// `ranklet train --from-stats …`: linear RLS / RankRLS from merged
/// statistics ([`ranklet::family::ls_stats`]); metadata and messages as the
/// in-memory path's.
fn train_from_stats(a: &TrainArgs) -> Result<(), CliError> {
    let (target, ranker, kpc) = match a.algo {
        TrainAlgo::Rls => (ls_stats::Target::Rls, false, false),
        TrainAlgo::Rankrls => (ls_stats::Target::RankRls, true, false),
        TrainAlgo::Kpcr => (ls_stats::Target::Rls, false, true),
        TrainAlgo::Kpcrank => (ls_stats::Target::RankRls, true, true),
        _ => return Err(CliError::input("--from-stats trains --algo rls, rankrls, kpcr or kpcrank")),
    };
    let default_lambda = if kpc { "0" } else { "1" };
    let lambdas: Vec<f64> = parse_list("lambda", a.lambda.as_deref().unwrap_or(default_lambda))?;
    let cv = match a.cv {
        None => None,
        Some(Scheme::KFold(k)) => Some(k),
        Some(Scheme::Loo) => return Err(CliError::input("--cv loo: statistics give k-fold cross-validation only")),
    };
    let mut backend = HostBackend::new(a.backend);
    let merged = ranklet::family::ls_stats::merge_files(&a.from_stats)?;
    if merged.map.is_some() || kpc {
        return train_nystrom_from_stats(a, &mut backend, &merged, target, kpc, &lambdas, cv);
    }
    if a.components.is_some() {
        return Err(CliError::input("--components applies to --algo kpcr and kpcrank"));
    }
    let fit = fit_merged(&mut backend, &merged, target, a.query_weight.to_core(), &lambdas, cv)?;
    let files = a.from_stats.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(",");
    let (bytes, chosen) =
        ranklet::stats_rows::linear_model(&fit, ranker, &lambdas, &files, a.query_weight, a.precision.element(), &[])?;
    eprintln!("chosen: {chosen}");
    write_model(&a.output, &bytes)?;
    print!("{}", fit.cv_table());
    Ok(())
}

/// `ranklet train --from-stats` on Nyström statistics
/// ([`ranklet::family::nystrom_stats`]): the reduced-basis kernel model.
fn train_nystrom_from_stats(
    a: &TrainArgs,
    backend: &mut HostBackend,
    merged: &ranklet::family::ls_stats::Shard,
    target: ls_stats::Target,
    kpc: bool,
    lambdas: &[f64],
    cv: Option<usize>,
) -> Result<(), CliError> {
    use ranklet::family::nystrom_stats::NystromAlgo;
    let components: Vec<usize> = match &a.components {
        Some(c) => parse_list("components", c)?,
        None => Vec::new(),
    };
    let algo = if kpc { NystromAlgo::Kpc(target) } else { NystromAlgo::Ls(target) };
    let files = a.from_stats.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(",");
    let (bytes, fit, chosen) = ranklet::stats_rows::nystrom_model(
        backend,
        merged,
        algo,
        a.query_weight,
        lambdas,
        &components,
        cv,
        &files,
        a.precision.element(),
        &[],
    )?;
    eprintln!("chosen: {chosen}");
    write_model(&a.output, &bytes)?;
    print!("{}", fit.cv_table());
    Ok(())
}

/// Writes the model file atomically and says so.
fn write_model(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    write_atomic(path, bytes)?;
    eprintln!("wrote {} ({} bytes)", path.display(), bytes.len());
    Ok(())
}

/// Prints the CV table and, with `--plot-cv`, draws its figure.
fn report_cv<F: Family>(a: &TrainArgs, report: &cv::CvReport<F::Point>, family: &F) -> Result<(), CliError> {
    print_cv(report, family);
    match &a.plot_cv {
        Some(png) => crate::plot::plot_cv(png, report, family),
        None => Ok(()),
    }
}

fn print_cv<F: Family>(report: &cv::CvReport<F::Point>, family: &F) {
    println!("# cross-validation: {}, metric {}", report.scheme, report.metric.name());
    println!("{}\tmean\tstd", family.columns().join("\t"));
    for p in &report.points {
        let cols = family.values(&p.params).join("\t");
        match &p.failure {
            Some(why) if !p.mean().is_finite() => println!("{cols}\t-\t-\t# {why}"),
            _ => println!("{cols}\t{:.6}\t{:.6}", p.mean(), p.std()),
        }
    }
}

/// `ranklet train --items … --orders …`.
fn train_orders(a: &TrainArgs, items: &Path, orders: &Path) -> Result<(), CliError> {
    let algo = a.algo.on_orders()?;
    if a.basis.is_some() {
        return Err(CliError::input("--basis does not apply to sample orders (their reduced basis is --reduce)"));
    }
    let lambda = match parse_list::<f64>("lambda", a.lambda.as_deref().unwrap_or("1"))?[..] {
        [l] => l,
        _ => return Err(CliError::input("--lambda: sample-order training takes one λ, not a grid")),
    };
    if !(lambda.is_finite() && lambda >= 0.0) {
        return Err(CliError::input(format!("--lambda must be a finite number ≥ 0, got {lambda}")));
    }
    let req = OrdersRequest { algo, lambda, reduce: a.reduce, element: a.precision.element(), backend: a.backend };
    let data = Loaded::read(items, orders)?;
    let bytes = ordering::train_orders(&req, &data, &items.display().to_string(), &orders.display().to_string())?;
    write_model(&a.output, &bytes)
}

/// `ranklet train --prefs …`: the preference GPs (000 §5, 001). The
/// hyperparameters are fitted by the evidence with `--kernel rbf:auto` (the
/// default), or the RBF width is fixed by `--kernel rbf:G`.
fn train_prefs(a: &TrainArgs) -> Result<(), CliError> {
    let algo = a.algo.on_prefs()?;
    for (given, flag) in [
        (a.lambda.is_some(), "--lambda"),
        (a.components.is_some(), "--components"),
        (a.cv.is_some(), "--cv"),
        (a.metric.is_some(), "--metric"),
        (a.standardize, "--standardize"),
        (a.plot_cv.is_some(), "--plot-cv"),
    ] {
        if given {
            return Err(CliError::input(format!(
                "{flag} does not apply to --algo {} (its hyperparameters are fitted by the evidence)",
                algo.name()
            )));
        }
    }
    let kernel = PrefKernel::from_arg(a.kernel.as_ref())?;
    let kind = if a.inductive { PrefModelKind::Inductive } else { PrefModelKind::FixedItems };
    let data = crate::input::read_pref_data(&a.data, algo)?;
    tie_notes(data.prefs.source(), &data.obs).into_iter().for_each(|n| note(Some(n)));
    if let Some(m) = a.basis.filter(|&m| m > data.items.len()) {
        note(Some(format!("--basis {m} is more than the {} items: every item is an inducing point", data.items.len())));
    }
    if let Some(k) = a.relation_rank.filter(|&k| k > data.items.len()) {
        note(Some(format!("--relation-rank {k} is more than the {} items: every eigenpair is kept", data.items.len())));
    }
    let req = PrefRequest {
        algo,
        kernel,
        kind,
        element: a.precision.element(),
        backend: a.backend,
        basis: a.basis,
        relation_rank: a.relation_rank,
        relation_residual: a.relation_residual,
    };
    let mut bar = Bar::default();
    let PrefFit { bytes, summary } = fit_prefs(&req, &data, &mut |p| bar.show(p))?;
    drop(bar);
    write_atomic(&a.output, &bytes)?;
    eprintln!("{summary}");
    eprintln!("wrote {} ({} bytes)", a.output.display(), bytes.len());
    Ok(())
}

/// `ranklet train --edges …`: Kronecker RLS / RankRLS (004). CV folds are
/// over conditioning nodes (`ranklet::cv::cross_validate_edges`).
fn train_edges(a: &TrainArgs) -> Result<(), CliError> {
    let algo = a.algo.on_edges()?;
    let edges_path = a.data.graph.edges.as_deref().ok_or_else(|| CliError::input("--edges is required"))?;
    let lambdas: Vec<f64> = parse_list("lambda", a.lambda.as_deref().unwrap_or("1"))?;
    let kernel = match &kernels_or_linear(&a.kernel)?[..] {
        [k] => *k,
        _ => return Err(CliError::input("--kernel: edges take one node kernel, not a grid")),
    };
    let folds = match a.cv {
        None => None,
        Some(Scheme::KFold(k)) => Some(k),
        Some(Scheme::Loo) => {
            return Err(CliError::input("--cv loo: edges take a number of folds (over conditioning nodes)"))
        }
    };
    let req = EdgesRequest {
        algo,
        kernel,
        pair: a.pair_kernel.unwrap_or_default(),
        query_weight: a.query_weight,
        lambdas,
        folds,
        metric: EdgeMetric::from_metric(a.metric.unwrap_or(Metric::CondRankLoss))?,
        seed: a.seed,
        max_iter: a.max_iter.unwrap_or(200),
        element: a.precision.element(),
        backend: a.backend,
    };
    req.check()?;
    let nodes = NodeSets::read_training(&a.data.graph.files())?;
    req.check_nodes(&nodes)?;
    let edges = read_edges(edges_path, &EdgeOptions { one_domain: nodes.one_domain, ..EdgeOptions::default() })?;
    let mut bar = Bar::default();
    let fit = fit_edges(&req, &nodes, &edges, &edges_path.display().to_string(), &mut |p| bar.show(p))?;
    drop(bar);
    eprintln!("{}", fit.describe);
    if let Some(info) = &fit.cg {
        eprintln!(
            "CG: {} iterations, relative residual {:.3e}{}",
            info.iterations,
            info.rel_residual,
            if info.converged { "" } else { " (iteration budget reached)" }
        );
    }
    write_atomic(&a.output, &fit.bytes)?;
    eprintln!("wrote {} ({} bytes, {} pair model)", a.output.display(), fit.bytes.len(), fit.kind);
    eprintln!("chosen: lambda={}", fit.lambda);
    if let Some(r) = &fit.report {
        println!("# cross-validation: {}, metric {}", r.scheme, r.metric.name());
        println!("lambda\tmean\tstd");
        for p in &r.points {
            match &p.failure {
                Some(why) if !p.mean().is_finite() => println!("{}\t-\t-\t# {why}", p.params),
                _ => println!("{}\t{:.6}\t{:.6}", p.params, p.mean(), p.std()),
            }
        }
    }
    Ok(())
}
