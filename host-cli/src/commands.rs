//! `ranklet train`, `ranklet score`, `ranklet eval`: argument parsing in two
//! stages (clap's raw flags here, validated objects in [`TrainPlan`]) and the
//! orchestration of reading, cross-validation, fitting and writing.

use std::path::{Path, PathBuf};

use clap::Args;
use ranklet_core::format::{self, ElementType, ModelSpec, ModelView};
use ranklet_core::graph::{Pair, QueryWeight};
use ranklet_core::kernel::Kernel;

use crate::cv::{self, Grid, Scheme};
use crate::data::{self, csv::CsvOptions, svmlight::SvmlightOptions, Dataset};
use crate::error::{write_atomic, CliError};
use crate::fit::{self, Algo, Fitted, Target};
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::metric::Metric;
use crate::table::Table;

/// How a data file is read.
#[derive(Args, Debug, Clone)]
pub struct DataArgs {
    /// Data file: SVMlight/LETOR (`label [qid:q] i:v …`) or CSV (by the
    /// `.csv` extension, or `--format csv`).
    #[arg(long)]
    pub data: PathBuf,
    /// File format; by default from the extension.
    #[arg(long, value_parser = ["svmlight", "csv"])]
    pub format: Option<String>,
    /// CSV: the label column (default `label`).
    #[arg(long)]
    pub label_col: Option<String>,
    /// CSV: the query-id column.
    #[arg(long)]
    pub qid_col: Option<String>,
    /// SVMlight: the feature dimension to learn over (default: the largest
    /// index in the file). Set it when test data may use higher indices and
    /// the kernel is RBF, whose value depends on every feature.
    #[arg(long)]
    pub num_features: Option<usize>,
    /// Pairwise preferences `winner loser [magnitude]` over the 0-based rows
    /// of --data; the labels of --data are then not used.
    #[arg(long)]
    pub pairs: Option<PathBuf>,
}

impl DataArgs {
    fn is_csv(&self) -> bool {
        match self.format.as_deref() {
            Some(f) => f == "csv",
            None => self.data.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")),
        }
    }

    /// Reads the data (and pairs), with the feature dimension fixed to
    /// `num_features` when scoring against a model.
    pub fn read(&self, num_features: Option<usize>) -> Result<(Dataset, Option<Vec<Pair>>), CliError> {
        let ds = if self.is_csv() {
            let opts = CsvOptions { label_col: self.label_col.clone(), qid_col: self.qid_col.clone() };
            let ds = data::csv::read_csv(&self.data, &opts)?;
            if let Some(d) = num_features {
                if ds.n_features() != d {
                    return Err(CliError::input(format!(
                        "{}: {} feature columns, the model has {d}",
                        self.data.display(),
                        ds.n_features()
                    )));
                }
            }
            ds
        } else {
            if self.label_col.is_some() || self.qid_col.is_some() {
                return Err(CliError::input("--label-col/--qid-col apply to CSV data only"));
            }
            // When scoring, SVMlight data is read at its own width and
            // `score_rows` decides what features beyond the model mean.
            let num_features = if num_features.is_some() { None } else { self.num_features };
            data::svmlight::read_svmlight(&self.data, &SvmlightOptions { num_features })?
        };
        let pairs = match &self.pairs {
            Some(p) => Some(
                data::pairs::read_pairs(p, ds.n_rows())?
                    .into_iter()
                    .map(|p| Pair { winner: p.winner, loser: p.loser, magnitude: p.magnitude })
                    .collect(),
            ),
            None => None,
        };
        Ok((ds, pairs))
    }
}

/// `ranklet train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Learner.
    #[arg(long, value_enum)]
    pub algo: Algo,
    /// Kernel(s): `linear`, `rbf:G`, `poly:D[:G[:C]]`; a comma list is a
    /// grid (`rbf:0.5,1,2` = three RBF widths).
    #[arg(long, default_value = "linear")]
    pub kernel: String,
    /// Ridge λ, or a comma list (grid). Default 1 for rls/rankrls, 0 for the
    /// component learners.
    #[arg(long, allow_hyphen_values = true)]
    pub lambda: Option<String>,
    /// Number of principal components (kpcr/kpcrank), or a comma list.
    #[arg(long)]
    pub components: Option<String>,
    /// Cross-validation: a number of folds, or `loo` for the closed-form
    /// leave-one-out (rls) / leave-query-out (rankrls). Required for grids.
    #[arg(long)]
    pub cv: Option<String>,
    /// Metric that selects the grid point (default: disagreement, or
    /// pairerror with --pairs).
    #[arg(long)]
    pub metric: Option<String>,
    /// Seed of the fold assignment.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Weighting of the within-query graphs: `equal` (each query counts
    /// equally, L_q = I − 11ᵀ/l_q) or `pairs` (plain Laplacian, each pair
    /// counts equally).
    #[arg(long, default_value = "equal", value_parser = ["equal", "pairs"])]
    pub query_weight: String,
    #[command(flatten)]
    pub data: DataArgs,
    /// Standardise every feature to mean 0 and standard deviation 1 over the
    /// training rows; the model stores the transform and applies it when
    /// scoring. Dense data only (centring would fill sparse rows).
    #[arg(long)]
    pub standardize: bool,
    /// Linear-algebra backend.
    #[arg(long, value_enum, default_value_t = BackendChoice::Faer)]
    pub backend: BackendChoice,
    /// Element type of the model file.
    #[arg(long, default_value = "f32", value_parser = ["f32", "f64"])]
    pub precision: String,
    /// Output model file (.rkl).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Also write the cross-validation curve as a PNG (needs --cv).
    #[arg(long)]
    pub plot_cv: Option<PathBuf>,
}

/// Parses a comma list of numbers.
fn parse_list<T: std::str::FromStr>(flag: &str, s: &str) -> Result<Vec<T>, CliError> {
    s.split(',')
        .map(|t| {
            t.trim().parse::<T>().map_err(|_| CliError::input(format!("--{flag}: '{}' is not a valid value", t.trim())))
        })
        .collect()
}

/// Parses `--kernel`: comma-separated specs (each read by core's
/// `Kernel::from_str`) where a bare number repeats the previous kernel with a
/// new first parameter (`rbf:0.5,1,2`).
pub fn parse_kernels(s: &str) -> Result<Vec<Kernel>, CliError> {
    let mut out: Vec<Kernel> = Vec::new();
    for tok in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let spec = if tok.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            if tok.contains(':') {
                return Err(CliError::input(format!("--kernel: '{tok}' is not a number")));
            }
            match out.last() {
                Some(Kernel::Rbf { .. }) => format!("rbf:{tok}"),
                Some(Kernel::Polynomial { gamma, coef0, .. }) => format!("poly:{tok}:{gamma}:{coef0}"),
                _ => return Err(CliError::input(format!("--kernel: '{tok}' does not follow an rbf or poly kernel"))),
            }
        } else {
            tok.to_string()
        };
        let k = spec.parse::<Kernel>().map_err(|e| CliError::input(format!("--kernel: '{tok}': {e}")))?;
        out.push(k);
    }
    if out.is_empty() {
        return Err(CliError::input("--kernel: empty"));
    }
    Ok(out)
}

/// Human-readable kernel, as on the command line.
pub fn kernel_name(k: &Kernel) -> String {
    k.to_string()
}

/// Validated training request (stage two of argument parsing).
struct TrainPlan {
    algo: Algo,
    grid: Grid,
    scheme: Option<Scheme>,
    metric: Metric,
    weight: QueryWeight,
    element: ElementType,
}

impl TrainPlan {
    fn new(a: &TrainArgs) -> Result<TrainPlan, CliError> {
        let kernels = parse_kernels(&a.kernel)?;
        let default_lambda = if a.algo.is_kpc() { "0" } else { "1" };
        let lambdas: Vec<f64> = parse_list("lambda", a.lambda.as_deref().unwrap_or(default_lambda))?;
        if let Some(l) = lambdas.iter().find(|l| !(l.is_finite() && **l >= 0.0)) {
            return Err(CliError::input(format!("--lambda must be a finite number ≥ 0, got {l}")));
        }
        if !a.algo.is_kpc() {
            if let Some(l) = lambdas.iter().find(|l| **l == 0.0) {
                if !kernels.iter().all(|k| *k == Kernel::Linear) {
                    return Err(CliError::input(format!("--lambda {l}: kernel rls/rankrls need λ > 0")));
                }
            }
        }
        let components = match (&a.components, a.algo.is_kpc()) {
            (Some(c), true) => {
                let v: Vec<usize> = parse_list("components", c)?;
                if v.contains(&0) {
                    return Err(CliError::input("--components must be ≥ 1"));
                }
                v
            }
            (None, true) => return Err(CliError::input(format!("--algo {} needs --components P", a.algo.name()))),
            (Some(_), false) => return Err(CliError::input("--components applies to kpcr and kpcrank only")),
            (None, false) => vec![0],
        };
        let grid = Grid { kernels, lambdas, components };
        let scheme = match a.cv.as_deref() {
            None => None,
            Some("loo") => Some(Scheme::Loo),
            Some(k) => Some(Scheme::KFold(
                k.parse::<usize>()
                    .ok()
                    .filter(|&k| k >= 2)
                    .ok_or_else(|| CliError::input(format!("--cv: '{k}' is neither a fold count ≥ 2 nor 'loo'")))?,
            )),
        };
        if grid.is_grid() && scheme.is_none() {
            return Err(CliError::input("a grid of values (comma list) needs --cv K to choose among them"));
        }
        let metric = match &a.metric {
            Some(m) => Metric::parse(m)?,
            None if a.data.pairs.is_some() => Metric::PairError,
            None => Metric::Disagreement,
        };
        if a.data.pairs.is_some() && metric != Metric::PairError {
            return Err(CliError::input("with --pairs, model selection uses --metric pairerror"));
        }
        let weight = if a.query_weight == "pairs" { QueryWeight::Pairs } else { QueryWeight::Equal };
        let element = if a.precision == "f64" { ElementType::F64 } else { ElementType::F32 };
        Ok(TrainPlan { algo: a.algo, grid, scheme, metric, weight, element })
    }
}

/// `ranklet train`.
pub fn train(a: TrainArgs) -> Result<(), CliError> {
    let plan = TrainPlan::new(&a)?;
    if a.plot_cv.is_some() && plan.scheme.is_none() {
        return Err(CliError::input("--plot-cv needs --cv"));
    }
    let (ds, pairs) = a.data.read(None)?;
    if pairs.is_none() && ds.n_rows() < 2 {
        return Err(CliError::input(format!(
            "{}: at least 2 rows are needed to learn a ranking",
            a.data.data.display()
        )));
    }
    let mut table = Table::from_dataset(&ds, pairs.is_none());
    let stats = if a.standardize {
        if table.dense().is_none() {
            return Err(CliError::input(format!(
                "--standardize needs dense data; {} has {} features",
                a.data.data.display(),
                table.d()
            )));
        }
        // Statistics of all training rows (also used inside CV folds).
        let (mean, scale) = table.feature_stats();
        table = table.standardized(&mean, &scale);
        Some((mean, scale))
    } else {
        None
    };
    let target = match &pairs {
        Some(p) => Target::Pairs(p),
        None => Target::Labels(plan.weight),
    };
    let mut backend = HostBackend::new(a.backend);
    let mut meta = format!(
        "algorithm={}\ntraining_data={}\nrows={}\nqueries={}\nquery_weight={}\n",
        plan.algo.name(),
        a.data.data.display(),
        table.n(),
        table.n_queries(),
        a.query_weight
    );
    // The CV table is printed (and plotted) only once the model is written,
    // so a failed run prints nothing to stdout and leaves no file.
    let mut cv_report = None;
    let chosen = match plan.scheme {
        Some(scheme) => {
            let report =
                cv::cross_validate(&mut backend, plan.algo, &plan.grid, &table, &target, scheme, plan.metric, a.seed)?;
            let best = report.best().ok_or_else(|| {
                let why = report.points.iter().find_map(|p| p.failure.clone()).unwrap_or_default();
                CliError::input(format!("no grid point could be evaluated: {why}"))
            })?;
            meta.push_str(&format!("cv={}\ncv_metric={}\n", report.scheme, report.metric.name()));
            for (i, p) in report.points.iter().enumerate() {
                meta.push_str(&format!(
                    "cv.{i}=kernel={} lambda={} components={} mean={} std={}\n",
                    kernel_name(&p.params.kernel),
                    p.params.lambda,
                    p.params.components,
                    p.mean(),
                    p.std()
                ));
            }
            let chosen = report.points[best].params;
            cv_report = Some(report);
            chosen
        }
        None => plan.grid.points()[0],
    };
    let fitted = fit::fit(&mut backend, plan.algo, &chosen, &table, &target).map_err(|e| match e {
        fit::FitError::Linalg(ranklet_core::LinalgError::NotPositiveDefinite { .. })
        | fit::FitError::Linalg(ranklet_core::LinalgError::Singular { .. }) => CliError::failure(e.to_string()),
        _ => CliError::input(e.to_string()),
    })?;
    meta.push_str(&format!(
        "kernel={}\nlambda={}\n{}",
        kernel_name(&chosen.kernel),
        chosen.lambda,
        if plan.algo.is_kpc() { format!("components={}\n", chosen.components) } else { String::new() }
    ));
    eprintln!(
        "chosen: kernel={} lambda={}{}",
        kernel_name(&chosen.kernel),
        chosen.lambda,
        if plan.algo.is_kpc() { format!(" components={}", chosen.components) } else { String::new() }
    );
    if stats.is_some() {
        meta.push_str("standardize=1\n");
    }
    let centring = stats.as_ref().map(|(m, s)| format::FeatureCentring { mean: m, scale: s });
    let bytes = model_bytes(&fitted, ds.n_features(), plan.element, &meta, centring)?;
    write_atomic(&a.output, &bytes)?;
    eprintln!("wrote {} ({} bytes)", a.output.display(), bytes.len());
    if let Some(report) = &cv_report {
        print_cv(report, plan.algo);
        if let Some(png) = &a.plot_cv {
            crate::plot::plot_cv(png, report, plan.algo)?;
        }
    }
    Ok(())
}

fn print_cv(report: &cv::CvReport, algo: Algo) {
    println!("# cross-validation: {}, metric {}", report.scheme, report.metric.name());
    println!("kernel\tlambda\t{}mean\tstd", if algo.is_kpc() { "components\t" } else { "" });
    for p in &report.points {
        let comp = if algo.is_kpc() { format!("{}\t", p.params.components) } else { String::new() };
        match &p.failure {
            Some(why) if !p.mean().is_finite() => {
                println!("{}\t{}\t{comp}-\t-\t# {why}", kernel_name(&p.params.kernel), p.params.lambda)
            }
            _ => println!(
                "{}\t{}\t{comp}{:.6}\t{:.6}",
                kernel_name(&p.params.kernel),
                p.params.lambda,
                p.mean(),
                p.std()
            ),
        }
    }
}

/// Serialises a fitted model.
pub fn model_bytes(
    fitted: &Fitted,
    d: usize,
    element: ElementType,
    meta: &str,
    centring: Option<format::FeatureCentring<'_>>,
) -> Result<Vec<u8>, CliError> {
    let fmt_err = |e: format::EmitError| CliError::failure(format!("cannot write the model: {e}"));
    let (sparse_ptr, sparse_idx, sparse_val, dense_basis);
    let model = match fitted {
        Fitted::Linear { w, offset } => format::Model::Linear(format::LinearModel { w, offset: *offset, centring }),
        Fitted::Kernel { kernel, basis, alpha, offset, centring: kc } => {
            let b = match basis.dense() {
                Some(_) => {
                    dense_basis = (0..basis.n())
                        .flat_map(|i| {
                            let mut row = vec![0.0; d];
                            let (c, v) = basis.row(i);
                            c.iter().zip(v).for_each(|(&c, &v)| row[c as usize] = v);
                            row
                        })
                        .collect::<Vec<f64>>();
                    format::Basis::Dense(&dense_basis)
                }
                None => {
                    let mut ptr = vec![0u32];
                    let (mut idx, mut val) = (Vec::new(), Vec::new());
                    for i in 0..basis.n() {
                        let (c, v) = basis.row(i);
                        idx.extend_from_slice(c);
                        val.extend_from_slice(v);
                        ptr.push(
                            u32::try_from(idx.len())
                                .map_err(|_| CliError::failure("basis too large for the format"))?,
                        );
                    }
                    (sparse_ptr, sparse_idx, sparse_val) = (ptr, idx, val);
                    format::Basis::Sparse { row_ptr: &sparse_ptr, indices: &sparse_idx, values: &sparse_val }
                }
            };
            format::Model::Kernel(format::KernelModel {
                dim: d,
                kernel: *kernel,
                basis: b,
                coeffs: alpha,
                offset: *offset,
                centring,
                kernel_centring: kc.as_ref().map(|(c, g)| format::KernelCentring { col_means: c, grand_mean: *g }),
            })
        }
    };
    let spec = ModelSpec::new(model, element).with_metadata(meta);
    let mut out = vec![0u8; spec.buffer_len()];
    let n = spec.emit(&mut out).map_err(fmt_err)?;
    out.truncate(n);
    Ok(out)
}

/// `ranklet score` / `ranklet eval` arguments shared: the model.
#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// Model file (.rkl).
    #[arg(short, long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
}

/// Reads and validates a model file.
pub fn read_model(path: &Path) -> Result<Vec<u8>, CliError> {
    let bytes = std::fs::read(path).map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
    ModelView::new_checked(&bytes)
        .map_err(|e| CliError::input(format!("{}: not a valid model: {e}", path.display())))?;
    Ok(bytes)
}

/// Scores every row of the data through the device parser (f32 inputs;
/// the model's own element type), in input order.
///
/// Features beyond the model's dimension never met the learner: every basis
/// row and every weight is 0 there. Linear and polynomial models depend on
/// them only through products with those zeros, so they are dropped (exactly)
/// with a note on stderr; an RBF model depends on them through ‖x − xᵢ‖², so
/// they are an error naming the first such line (train with
/// `--num-features`).
pub fn score_rows(view: &ModelView<'_>, ds: &Dataset, path: &Path) -> Result<Vec<f64>, CliError> {
    let dim = view.dim();
    let linear = !matches!(view.kernel().map(|k| k.kernel()), Some(Kernel::Rbf { .. }));
    let mut out = Vec::with_capacity(ds.n_rows());
    let (mut idx, mut vals32) = (Vec::new(), Vec::new());
    let mut dropped_rows = 0usize;
    for i in 0..ds.n_rows() {
        let (c, v) = ds.row(i);
        idx.clear();
        vals32.clear();
        for (&c, &x) in c.iter().zip(v) {
            if (c as usize) < dim {
                idx.push(c);
                vals32.push(x as f32);
            } else if !linear {
                return Err(CliError::input(format!(
                    "{}:{}: feature {} is beyond the model's {dim} features (an RBF model depends on it; train with --num-features)",
                    path.display(),
                    ds.source_line(i),
                    c + 1
                )));
            }
        }
        if idx.len() < c.len() {
            dropped_rows += 1;
        }
        let s = view
            .score_sparse(&idx, &vals32)
            .map_err(|e| CliError::input(format!("{}:{}: {e}", path.display(), ds.source_line(i))))?;
        out.push(s as f64);
    }
    if dropped_rows > 0 {
        eprintln!(
            "ranklet: note: {dropped_rows} rows of {} have features beyond the model's {dim}; the model gives them weight 0",
            path.display()
        );
    }
    Ok(out)
}

/// `ranklet score`.
pub fn score(a: ScoreArgs) -> Result<(), CliError> {
    let bytes = read_model(&a.model)?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let (ds, _) = a.data.read(a.data.is_csv().then_some(view.dim()))?;
    let scores = score_rows(&view, &ds, &a.data.data)?;
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for s in scores {
        if writeln!(out, "{s}").is_err() {
            return Ok(()); // broken pipe: the reader has gone, not an error
        }
    }
    let _ = out.flush();
    Ok(())
}

/// `ranklet eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    #[command(flatten)]
    pub score: ScoreArgs,
    /// Metrics, comma-separated (default: disagreement,cindex,kendall, or
    /// pairerror with --pairs). ndcg and map need graded labels ≥ 0.
    #[arg(long)]
    pub metric: Option<String>,
}

/// `ranklet eval`.
pub fn eval(a: EvalArgs) -> Result<(), CliError> {
    let bytes = read_model(&a.score.model)?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let (ds, pairs) = a.score.data.read(a.score.data.is_csv().then_some(view.dim()))?;
    let scores = score_rows(&view, &ds, &a.score.data.data)?;
    // NDCG and MAP need graded (non-negative) relevance labels, so they are
    // computed on request only.
    let default = if pairs.is_some() { "pairerror" } else { "disagreement,cindex,kendall" };
    let metrics = Metric::parse_list(a.metric.as_deref().unwrap_or(default))?;
    let g = ds.query_groups();
    let labels: Vec<f64> = g.rows().iter().map(|&r| ds.labels()[r]).collect();
    let preds: Vec<f64> = g.rows().iter().map(|&r| scores[r]).collect();
    // Every metric is computed before anything is printed: a metric that
    // cannot be evaluated leaves stdout empty.
    let mut lines = Vec::with_capacity(metrics.len());
    for m in metrics {
        let v = match &pairs {
            Some(p) => m.eval_pairs(&scores, p),
            None => m.eval_labels(&labels, &preds, g.query_ptr()),
        }
        .map_err(|e| CliError::input(format!("{}: {}", a.score.data.data.display(), e.msg)))?;
        lines.push(format!("{}\t{v:.6}", m.name()));
    }
    println!("{}", lines.join("\n"));
    Ok(())
}
