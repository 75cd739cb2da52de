//! Supervised ordering from sample orders (paper 003): `ranklet reduce`, and
//! `ranklet train` / `ranklet eval` when they are given `--items/--orders`.
//!
//! The algorithms (ERR, Kendall/Spearman RCDR, PCA, the fold-back of a
//! reduced model) are in `ranklet_core::learn::ordering`; this module reads the items
//! and orders files, calls core, and writes the basis (TSV) or the model
//! (.rkl, a plain linear model over the original attributes). Every output
//! file is written atomically, so an error leaves no file behind.
//!
//! ```text
//! ranklet reduce --method rcdr-kendall|rcdr-spearman|pca --items I --orders O --dims K -o BASIS.tsv
//! ranklet train --algo err|rankrls --items I --orders O [--lambda L] [--reduce METHOD:K] -o MODEL.rkl
//! ranklet eval -m MODEL.rkl --items I --orders O [--metric spearman,kendall]
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use ranklet_core::format::{ElementType, ModelView};
use ranklet_core::learn::ordering::{self as order, OrderError, OrderLearner, RankCorr};
use ranklet_core::metrics::{self, Correlation};
use ranklet_core::{LinalgError, MatRef};

use crate::commands::{model_bytes, read_model};
use crate::data::orders::{read_items, read_orders, Items};
use crate::error::{write_atomic, CliError};
use crate::fit::Fitted;
use crate::hostbackend::{BackendChoice, HostBackend};

/// A dimension-reduction method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReduceMethod {
    /// Kendall RCDR (003 §3, Fig. 3 with τ).
    RcdrKendall,
    /// Spearman RCDR (Fig. 3 with ρ).
    RcdrSpearman,
    /// PCA of the attributes of the objects in the orders.
    Pca,
}

impl ReduceMethod {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ReduceMethod::RcdrKendall => "rcdr-kendall",
            ReduceMethod::RcdrSpearman => "rcdr-spearman",
            ReduceMethod::Pca => "pca",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "rcdr-kendall" => Some(ReduceMethod::RcdrKendall),
            "rcdr-spearman" => Some(ReduceMethod::RcdrSpearman),
            "pca" => Some(ReduceMethod::Pca),
            _ => None,
        }
    }
}

/// The items and orders files.
#[derive(Args, Debug, Clone)]
pub struct OrderData {
    /// Items CSV: an `id` column and numeric attribute columns.
    #[arg(long)]
    pub items: PathBuf,
    /// Sample orders: one order per line, item ids most preferred first.
    #[arg(long)]
    pub orders: PathBuf,
}

/// Items and orders in the CSR form core takes.
pub struct Loaded {
    /// The items.
    pub items: Items,
    /// Order boundaries.
    pub order_ptr: Vec<usize>,
    /// Item indices, most preferred first within each order.
    pub flat: Vec<usize>,
}

impl Loaded {
    fn x(&self) -> Result<MatRef<'_, f64>, CliError> {
        MatRef::from_row_major(self.items.attrs(), self.items.len(), self.items.n_attrs())
            .map_err(|e| CliError::failure(e.to_string()))
    }
    fn max_len(&self) -> usize {
        self.order_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
    }
}

impl OrderData {
    /// Reads and checks both files (errors name the file and line).
    pub fn load(&self) -> Result<Loaded, CliError> {
        let items = read_items(&self.items)?;
        if items.n_attrs() == 0 {
            return Err(CliError::input(format!("{}: the items have no attribute columns", self.items.display())));
        }
        let orders = read_orders(&self.orders, &items)?;
        let mut order_ptr = vec![0];
        let mut flat = Vec::new();
        for o in &orders {
            flat.extend_from_slice(o);
            order_ptr.push(flat.len());
        }
        Ok(Loaded { items, order_ptr, flat })
    }
}

/// Maps a core error to the CLI's: numerical breakdown is exit 1, anything
/// about the input exit 2.
fn core_err(ctx: &str, e: OrderError) -> CliError {
    match e {
        OrderError::Linalg(LinalgError::NotPositiveDefinite { .. })
        | OrderError::Linalg(LinalgError::Singular { .. })
        | OrderError::Linalg(LinalgError::NoConvergence { .. }) => CliError::failure(format!("{ctx}: {e}")),
        _ => CliError::input(format!("{ctx}: {e}")),
    }
}

/// A basis (`K′ × d`, row-major) and one number per component (`‖R‖/N`
/// for RCDR, the contribution ratio for PCA).
pub fn compute_basis(
    backend: &mut HostBackend,
    data: &Loaded,
    method: ReduceMethod,
    dims: usize,
) -> Result<(Vec<f64>, Vec<f64>), CliError> {
    let (n, d) = (data.items.len(), data.items.n_attrs());
    if dims == 0 || dims > d {
        return Err(CliError::input(format!("--dims {dims}: must be between 1 and {d} (the number of attributes)")));
    }
    let x = data.x()?;
    let (mut basis, mut norms) = (vec![0.0; dims * d], vec![0.0; dims]);
    let ml = data.max_len();
    let ctx = method.name();
    match method {
        ReduceMethod::RcdrKendall | ReduceMethod::RcdrSpearman => {
            let corr = if method == ReduceMethod::RcdrKendall { RankCorr::Kendall } else { RankCorr::Spearman };
            let mut work = vec![0.0; order::rcdr_workspace_len(n, d, dims, ml)];
            let mut iwork = vec![0; order::rcdr_iwork_len(n, ml)];
            order::rcdr(x, &data.order_ptr, &data.flat, corr, &mut basis, &mut norms, &mut work, &mut iwork)
                .map_err(|e| core_err(ctx, e))?;
        }
        ReduceMethod::Pca => {
            let mut work = vec![0.0; order::pca_workspace_len(d)];
            let mut iwork = vec![0; order::pca_iwork_len(n)];
            order::pca(backend, x, &data.order_ptr, &data.flat, &mut basis, &mut norms, &mut work, &mut iwork)
                .map_err(|e| core_err(ctx, e))?;
        }
    }
    Ok((basis, norms))
}

/// `ranklet reduce`.
#[derive(Args, Debug)]
pub struct ReduceArgs {
    /// Reduction method.
    #[arg(long, value_enum)]
    pub method: ReduceMethod,
    #[command(flatten)]
    pub data: OrderData,
    /// Number of components K′ (1 ≤ K′ ≤ number of attributes).
    #[arg(long)]
    pub dims: usize,
    /// Linear-algebra backend (PCA's eigendecomposition).
    #[arg(long, value_enum, default_value_t = BackendChoice::Faer)]
    pub backend: BackendChoice,
    /// Output basis (TSV): one line per component, the importance
    /// (‖R‖/N for RCDR, contribution ratio for PCA), then the vector.
    #[arg(short, long)]
    pub output: PathBuf,
}

/// `ranklet reduce`.
pub fn reduce(a: ReduceArgs) -> Result<(), CliError> {
    let data = a.data.load()?;
    let mut backend = HostBackend::new(a.backend);
    let (basis, norms) = compute_basis(&mut backend, &data, a.method, a.dims)?;
    let d = data.items.n_attrs();
    let mut out = String::new();
    out.push_str(&format!(
        "# ranklet reduce --method {} --dims {}; items={} ({} objects), orders={} (N = {})\n",
        a.method.name(),
        a.dims,
        a.data.items.display(),
        data.items.len(),
        a.data.orders.display(),
        data.order_ptr.len() - 1
    ));
    out.push_str(&format!(
        "# {}\t{}\n",
        if a.method == ReduceMethod::Pca { "contribution_ratio" } else { "norm_R_over_N" },
        data.items.attr_names().join("\t")
    ));
    for (l, nr) in norms.iter().enumerate() {
        out.push_str(&format!("{nr}"));
        for v in &basis[l * d..(l + 1) * d] {
            out.push_str(&format!("\t{v}"));
        }
        out.push('\n');
    }
    write_atomic(&a.output, out.as_bytes())?;
    eprintln!("wrote {} ({} components)", a.output.display(), a.dims);
    Ok(())
}

/// The learner of `ranklet train --items …`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OrderAlgo {
    /// Expected Rank Regression (003 eq. 5).
    Err,
    /// RankRLS with each order as a query.
    Rankrls,
}

/// `ranklet train --items I --orders O`: supervised ordering.
#[derive(Args, Debug)]
pub struct OrderTrainArgs {
    /// Learner.
    #[arg(long, value_enum)]
    pub algo: OrderAlgo,
    #[command(flatten)]
    pub data: OrderData,
    /// Ridge λ ≥ 0.
    #[arg(long, default_value_t = 1.0)]
    pub lambda: f64,
    /// Reduce the attributes first and learn on the reduced ones:
    /// `rcdr-kendall:K`, `rcdr-spearman:K` or `pca:K`. The model is folded
    /// back to the original attributes.
    #[arg(long)]
    pub reduce: Option<String>,
    /// Linear-algebra backend.
    #[arg(long, value_enum, default_value_t = BackendChoice::Faer)]
    pub backend: BackendChoice,
    /// Element type of the model file.
    #[arg(long, default_value = "f32", value_parser = ["f32", "f64"])]
    pub precision: String,
    /// Output model file (.rkl).
    #[arg(short, long)]
    pub output: PathBuf,
}

fn parse_reduce(s: &str) -> Result<(ReduceMethod, usize), CliError> {
    let bad = || CliError::input(format!("--reduce '{s}': expected rcdr-kendall:K, rcdr-spearman:K or pca:K"));
    let (m, k) = s.split_once(':').ok_or_else(bad)?;
    let m = ReduceMethod::parse(m.trim()).ok_or_else(bad)?;
    let k = k.trim().parse::<usize>().map_err(|_| bad())?;
    Ok((m, k))
}

/// Fits a linear model (over the original attributes) from orders.
pub fn fit_orders(
    backend: &mut HostBackend,
    data: &Loaded,
    algo: OrderAlgo,
    lambda: f64,
    basis: Option<&[f64]>,
) -> Result<(Vec<f64>, f64), CliError> {
    let (n, d) = (data.items.len(), data.items.n_attrs());
    let dz = basis.map_or(d, |b| b.len() / d);
    let learner = match algo {
        OrderAlgo::Err => OrderLearner::Err,
        OrderAlgo::Rankrls => OrderLearner::RankRls,
    };
    let mut w = vec![0.0; d];
    let mut work = vec![0.0; order::fit_linear_workspace_len(data.flat.len(), dz)];
    let mut iwork = vec![0; order::fit_linear_iwork_len(n)];
    let offset = order::fit_linear(
        backend,
        data.x()?,
        &data.order_ptr,
        &data.flat,
        learner,
        lambda,
        basis,
        &mut w,
        &mut work,
        &mut iwork,
    )
    .map_err(|e| core_err("training", e))?;
    Ok((w, offset))
}

/// `ranklet train --items … --orders …`.
pub fn train(a: OrderTrainArgs) -> Result<(), CliError> {
    if !(a.lambda.is_finite() && a.lambda >= 0.0) {
        return Err(CliError::input(format!("--lambda must be a finite number ≥ 0, got {}", a.lambda)));
    }
    let reduce = a.reduce.as_deref().map(parse_reduce).transpose()?;
    let data = a.data.load()?;
    let mut backend = HostBackend::new(a.backend);
    let basis = match reduce {
        Some((m, k)) => Some(compute_basis(&mut backend, &data, m, k)?.0),
        None => None,
    };
    let (w, offset) = fit_orders(&mut backend, &data, a.algo, a.lambda, basis.as_deref())?;
    let algo = match a.algo {
        OrderAlgo::Err => "err",
        OrderAlgo::Rankrls => "rankrls",
    };
    let mut meta = format!(
        "algorithm={algo}\nitems={}\norders={}\nn_orders={}\nlambda={}\nattributes={}\n",
        a.data.items.display(),
        a.data.orders.display(),
        data.order_ptr.len() - 1,
        a.lambda,
        data.items.attr_names().join(",")
    );
    if let (Some((m, k)), Some(b)) = (reduce, &basis) {
        meta.push_str(&format!("reduce={}:{k}\n", m.name()));
        let rows: Vec<String> = b
            .chunks(data.items.n_attrs())
            .map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","))
            .collect();
        meta.push_str(&format!("basis={}\n", rows.join(";")));
    }
    let element = if a.precision == "f64" { ElementType::F64 } else { ElementType::F32 };
    let bytes = model_bytes(&Fitted::Linear { w, offset }, data.items.n_attrs(), element, &meta, None)?;
    write_atomic(&a.output, &bytes)?;
    eprintln!("wrote {} ({} bytes)", a.output.display(), bytes.len());
    Ok(())
}

/// `ranklet eval -m MODEL --items I --orders O`.
#[derive(Args, Debug)]
pub struct OrderEvalArgs {
    /// Model file (.rkl).
    #[arg(short, long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub data: OrderData,
    /// Metrics, comma-separated: spearman, kendall (Kendall τ-b).
    #[arg(long, default_value = "spearman,kendall")]
    pub metric: String,
}

/// Scores every item through the device parser (f64 inputs).
pub fn score_items(view: &ModelView<'_>, items: &Items, path: &Path) -> Result<Vec<f64>, CliError> {
    if view.dim() != items.n_attrs() {
        return Err(CliError::input(format!(
            "{}: {} attributes, the model has {}",
            path.display(),
            items.n_attrs(),
            view.dim()
        )));
    }
    (0..items.len())
        .map(|i| {
            view.score_dense_f64(items.attrs_of(i))
                .map_err(|e| CliError::input(format!("{}: item {}: {e}", path.display(), items.ids()[i])))
        })
        .collect()
}

/// Mean correlation between `scores` and the orders.
pub fn mean_corr(scores: &[f64], data: &Loaded, c: Correlation) -> Result<metrics::QueryMean, CliError> {
    let ml = data.max_len();
    let mut work = vec![0; metrics::index_workspace_len(ml)];
    let mut fwork = vec![0.0; metrics::real_workspace_len(ml)];
    metrics::mean_order_correlation(scores, &data.order_ptr, &data.flat, c, &mut work, &mut fwork)
        .map_err(|e| CliError::input(format!("evaluation: {e}")))
}

/// `ranklet eval --items … --orders …`: prints `metric<TAB>value` lines.
pub fn eval(a: OrderEvalArgs) -> Result<(), CliError> {
    let mut metrics_wanted = Vec::new();
    for m in a.metric.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        metrics_wanted.push(match m {
            "spearman" => ("spearman", Correlation::SpearmanRho),
            "kendall" => ("kendall", Correlation::KendallTauB),
            _ => return Err(CliError::input(format!("--metric: unknown '{m}' (spearman, kendall)"))),
        });
    }
    if metrics_wanted.is_empty() {
        return Err(CliError::input("--metric: empty"));
    }
    let bytes = read_model(&a.model)?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let data = a.data.load()?;
    let scores = score_items(&view, &data.items, &a.data.items)?;
    for (name, c) in metrics_wanted {
        let q = mean_corr(&scores, &data, c)?;
        println!("{name}\t{:.6}", q.value);
        if q.queries_skipped > 0 {
            eprintln!("ranklet: note: {name}: {} orders skipped (all items scored equal)", q.queries_skipped);
        }
    }
    Ok(())
}

/// `train` and `eval` in their supervised-ordering form.
#[derive(Parser, Debug)]
#[command(name = "ranklet")]
struct OrdCli {
    #[command(subcommand)]
    command: OrdCommand,
}

#[derive(Subcommand, Debug)]
enum OrdCommand {
    /// Learn a linear ranking function from sample orders (ERR or RankRLS,
    /// optionally on RCDR/PCA-reduced attributes) and write it as .rkl.
    Train(OrderTrainArgs),
    /// Mean Spearman ρ / Kendall τ-b between a model and held-out orders.
    Eval(OrderEvalArgs),
}

/// `true` when the command line is `train` or `eval` with `--items`: the
/// supervised-ordering form handled here.
pub fn is_ordinal(args: &[OsString]) -> bool {
    let sub = args.get(1).and_then(|s| s.to_str());
    matches!(sub, Some("train") | Some("eval"))
        && args.iter().skip(2).filter_map(|s| s.to_str()).any(|s| s == "--items" || s.starts_with("--items="))
}

/// Runs `train`/`eval` with `--items` and returns the exit code, or `None`
/// when the command line is not of that form (then the ordinary parser runs).
pub fn main_if_ordinal() -> Option<ExitCode> {
    let args: Vec<OsString> = std::env::args_os().collect();
    if !is_ordinal(&args) {
        return None;
    }
    let cli = match OrdCli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return Some(ExitCode::from(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    let r = match cli.command {
        OrdCommand::Train(a) => train(a),
        OrdCommand::Eval(a) => eval(a),
    };
    Some(match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ranklet: {e}");
            ExitCode::from(e.code)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_spec() {
        assert_eq!(parse_reduce("pca:3").unwrap(), (ReduceMethod::Pca, 3));
        assert_eq!(parse_reduce("rcdr-kendall:2").unwrap(), (ReduceMethod::RcdrKendall, 2));
        assert_eq!(parse_reduce("rcdr-spearman: 1").unwrap(), (ReduceMethod::RcdrSpearman, 1));
        for bad in ["pca", "pca:x", "lda:2", ":2", "pca:-1"] {
            assert_eq!(parse_reduce(bad).unwrap_err().code, 2, "{bad}");
        }
    }

    #[test]
    fn ordinal_form_detection() {
        let v = |s: &[&str]| s.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(is_ordinal(&v(&["ranklet", "train", "--algo", "err", "--items", "i.csv"])));
        assert!(is_ordinal(&v(&["ranklet", "eval", "--items=i.csv"])));
        assert!(!is_ordinal(&v(&["ranklet", "train", "--data", "d.svm"])));
        assert!(!is_ordinal(&v(&["ranklet", "score", "--items", "i.csv"])));
        assert!(!is_ordinal(&v(&["ranklet"])));
    }
}
