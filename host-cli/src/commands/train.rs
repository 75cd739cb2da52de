//! `ranklet train`: argument parsing in two stages (clap's raw flags here,
//! validated objects in [`TrainPlan`]) and the orchestration of reading,
//! cross-validation, fitting and writing; `train_orders` is the
//! supervised-ordering form (`--items/--orders`).

use std::path::PathBuf;

use clap::Args;
use ranklet_core::format::{self, ElementType};
use ranklet_core::graph::QueryWeight;
use ranklet_core::kernel::Kernel;

use crate::args::{kernel_name, parse_kernels, parse_list};
use crate::cv::{self, Grid, Scheme};
use crate::error::{write_atomic, CliError};
use crate::fit::{self, Algo, Fitted, Target};
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::input::{DataArgs, OrderData};
use crate::metric::Metric;
use crate::model_io::model_bytes;
use crate::ordering::{compute_basis, fit_orders, parse_reduce, OrderAlgo};
use crate::table::Table;

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

/// `ranklet train --items … --orders …`.
pub fn train_orders(a: OrderTrainArgs) -> Result<(), CliError> {
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
