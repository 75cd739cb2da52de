//! `ranklet bench train …`: time one training run of a learner on a fixed,
//! reproducible data set, excluding data generation:
//!
//! ```text
//! ranklet bench train --algo kpcrank --kernel rbf:0.1 --n 2000 --components 50
//! {"algo":"kpcrank","kernel":"rbf:0.1","n":2000,"d":10,"query_size":10,"components":50,"lambda":0,"backend":"faer","repeat":3,"median_s":…,"min_s":…,"max_s":…}
//! ```
//!
//! Data: `n` points of R^d with coordinates uniform in [0, 1) drawn point by
//! point from splitmix64 seeded with `S`, then `n` scores uniform in [0, 1)
//! from the same stream; queries are consecutive blocks of `query_size`
//! rows. `bench/rankers_numpy.py` rebuilds exactly these arrays. With
//! `--data FILE` the rows of an SVMlight file are used instead (read before
//! the timing; `query_size` is then reported as 0).

use std::time::Instant;

use clap::Args;
use ranklet::args::{kernel_name, parse_kernel_list, KernelList, QueryWeightArg};
use ranklet::arrays::{dense_table, from_dense};
use ranklet::data::svmlight::{read_svmlight, SvmlightOptions};
use ranklet::error::CliError;
use ranklet::family::{Algo, RowFamily};
use ranklet::fit::Target;
use ranklet::hostbackend::{BackendChoice, HostBackend};
use ranklet::progress;
use ranklet::rng::SplitMix64;
use ranklet::table::Table;
use ranklet::train_rows::{fit_rows, fit_table, RowsRequest};
use ranklet_core::format::ElementType;
use ranklet_core::kernel::Kernel;

use crate::cli_values::{self, lib_enum};

/// Arguments of `ranklet bench train`.
#[derive(Args, Debug)]
pub struct TrainBenchArgs {
    /// Learner.
    #[arg(long, value_parser = lib_enum::<cli_values::Algo>())]
    pub algo: Algo,
    /// Kernel (`linear`, `rbf:G`, `poly:D[:G[:C]]`).
    #[arg(long, default_value = "rbf:0.1", value_parser = parse_kernel_list)]
    pub kernel: KernelList,
    /// Rows (required unless `--data`).
    #[arg(long, required_unless_present = "data")]
    pub n: Option<usize>,
    /// Features.
    #[arg(long, default_value_t = 10)]
    pub d: usize,
    /// Rows per query.
    #[arg(long, default_value_t = 10)]
    pub query_size: usize,
    /// Components (kpcr/kpcrank).
    #[arg(long, default_value_t = 50)]
    pub components: usize,
    /// Ridge λ (default 1 for rls/rankrls, 0 for kpcr/kpcrank).
    #[arg(long)]
    pub lambda: Option<f64>,
    /// Backend.
    #[arg(long, value_parser = lib_enum::<cli_values::Backend>(), default_value = "faer")]
    pub backend: BackendChoice,
    /// Timed repetitions (median reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Seed of the data.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Train on this SVMlight file instead (read before the timing, rows
    /// grouped by query as `ranklet train` does; `--n`, `--d`,
    /// `--query-size` and `--seed` are then ignored).
    #[arg(long)]
    pub data: Option<std::path::PathBuf>,
    /// Time the whole row driver (`train_rows`: checks, training table,
    /// fit, model bytes) instead of the fit alone, from arrays in memory
    /// (query ids = row / query-size): `dataset` — the data set a reader
    /// would give, built before the timing, then `fit_rows` (the path of
    /// `ranklet train --data` after parsing); `arrays` — the row-major
    /// matrix, through `arrays::dense_table` and `fit_table` (the path of
    /// the Python estimators on a numpy array).
    #[arg(long, value_parser = ["dataset", "arrays"])]
    pub driver: Option<String>,
}

/// The benchmark data set (see the module docs).
pub fn bench_table(n: usize, d: usize, query_size: usize, seed: u64) -> Table {
    let (x, s) = bench_arrays(n, d, seed);
    let q = query_size.max(1);
    let mut query_ptr: Vec<usize> = (0..n).step_by(q).collect();
    query_ptr.push(n);
    Table::from_dense(x, d, s, query_ptr)
}

/// Times the row driver on the rows of `table` (see `--driver`).
fn time_driver(
    a: &TrainBenchArgs,
    driver: &str,
    table: &Table,
    kernel: Kernel,
    lambda: f64,
) -> Result<Vec<f64>, String> {
    if a.data.is_some() {
        return Err("--driver takes generated data, not --data".into());
    }
    let (n, d) = (table.n(), table.d());
    let (x, labels) = bench_arrays(n, d, a.seed);
    let q = a.query_size.max(1) as i64;
    let qids: Vec<i64> = (0..n as i64).map(|i| i / q).collect();
    let request = RowsRequest {
        algo: a.algo,
        kernels: vec![kernel],
        lambdas: Some(vec![lambda]),
        components: a.algo.is_kpc().then(|| vec![a.components]),
        basis: None,
        query_weight: QueryWeightArg::default(),
        standardize: false,
        cv: None,
        metric: None,
        seed: 1,
        element: ElementType::F32,
        backend: a.backend,
        metadata: Vec::new(),
    };
    let plan = request.plan(false).map_err(|e| e.to_string())?;
    let mut times = Vec::with_capacity(a.repeat);
    for _ in 0..a.repeat {
        let fit = if driver == "dataset" {
            let ds = from_dense(n, d, |i, j| x[i * d + j], &labels, Some(&qids)).map_err(|e| e.to_string())?;
            let t0 = Instant::now();
            let fit = fit_rows(&plan, ds, None, "<bench>", &mut progress::silent);
            times.push(t0.elapsed().as_secs_f64());
            fit
        } else {
            let t0 = Instant::now();
            let fit = dense_table(n, d, |i, j| x[i * d + j], &labels, Some(&qids), true)
                .and_then(|t| t.ok_or_else(|| CliError::input("rows too large for a dense table")))
                .and_then(|t| fit_table(&plan, t, None, "<bench>", &mut progress::silent));
            times.push(t0.elapsed().as_secs_f64());
            fit
        };
        std::hint::black_box(fit.map_err(|e| e.to_string())?);
    }
    Ok(times)
}

/// The benchmark's row-major `n × d` matrix and its `n` scores.
fn bench_arrays(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix64(seed);
    let x: Vec<f64> = (0..n * d).map(|_| rng.next_f64()).collect();
    let s: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    (x, s)
}

/// Runs the benchmark and returns its JSON line.
pub fn bench_train(a: &TrainBenchArgs) -> Result<String, String> {
    let n = a.n.unwrap_or(0);
    if (a.data.is_none() && (n < 2 || a.d == 0)) || a.repeat == 0 {
        return Err("need --n ≥ 2, --d ≥ 1, --repeat ≥ 1".into());
    }
    let kernel = *a.kernel.0.first().ok_or("no kernel")?;
    let lambda = a.lambda.unwrap_or(if a.algo.is_kpc() { 0.0 } else { 1.0 });
    let components = a.algo.is_kpc().then(|| vec![a.components]);
    let family = RowFamily::new(a.algo, vec![kernel], vec![lambda], components).map_err(|e| e.to_string())?;
    let table = match &a.data {
        Some(path) => {
            let ds = read_svmlight(path, &SvmlightOptions::default()).map_err(|e| e.to_string())?;
            Table::from_dataset(&ds, true)
        }
        None => bench_table(n, a.d, a.query_size, a.seed),
    };
    let target = Target::Labels(Default::default());
    let mut backend = HostBackend::new(a.backend);
    let mut times = Vec::with_capacity(a.repeat);
    if let Some(driver) = &a.driver {
        times = time_driver(a, driver, &table, kernel, lambda)?;
    }
    for _ in 0..a.repeat - times.len().min(a.repeat) {
        let t0 = Instant::now();
        let model = family.fit_first(&mut backend, &table, &target).map_err(|e| e.to_string())?;
        times.push(t0.elapsed().as_secs_f64());
        std::hint::black_box(&model);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    Ok(format!(
        "{{\"algo\":\"{}\",\"kernel\":\"{}\",\"n\":{},\"d\":{},\"query_size\":{},\"components\":{},\"lambda\":{},\"backend\":\"{}\",\"repeat\":{},\"median_s\":{},\"min_s\":{},\"max_s\":{},\"driver\":\"{}\"}}",
        a.algo.name(),
        kernel_name(&kernel),
        table.n(),
        table.d(),
        if a.data.is_some() { 0 } else { a.query_size },
        if a.algo.is_kpc() { a.components } else { 0 },
        lambda,
        a.backend.name(),
        a.repeat,
        median,
        times[0],
        times[times.len() - 1],
        a.driver.as_deref().unwrap_or("fit")
    ))
}
