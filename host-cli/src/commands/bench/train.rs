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

use crate::args::{kernel_name, parse_kernel_list, KernelList};
use crate::data::svmlight::{read_svmlight, SvmlightOptions};
use crate::family::{Algo, RowFamily};
use crate::fit::Target;
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::rng::SplitMix64;
use crate::table::Table;

/// Arguments of `ranklet bench train`.
#[derive(Args, Debug)]
pub struct TrainBenchArgs {
    /// Learner.
    #[arg(long, value_enum)]
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
    #[arg(long, value_enum, default_value_t = BackendChoice::Faer)]
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
}

/// The benchmark data set (see the module docs).
pub fn bench_table(n: usize, d: usize, query_size: usize, seed: u64) -> Table {
    let mut rng = SplitMix64(seed);
    let x: Vec<f64> = (0..n * d).map(|_| rng.next_f64()).collect();
    let s: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let q = query_size.max(1);
    let mut query_ptr: Vec<usize> = (0..n).step_by(q).collect();
    query_ptr.push(n);
    Table::from_dense(x, d, s, query_ptr)
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
    for _ in 0..a.repeat {
        let t0 = Instant::now();
        let model = family.fit_first(&mut backend, &table, &target).map_err(|e| e.to_string())?;
        times.push(t0.elapsed().as_secs_f64());
        std::hint::black_box(&model);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    Ok(format!(
        "{{\"algo\":\"{}\",\"kernel\":\"{}\",\"n\":{},\"d\":{},\"query_size\":{},\"components\":{},\"lambda\":{},\"backend\":\"{}\",\"repeat\":{},\"median_s\":{},\"min_s\":{},\"max_s\":{}}}",
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
        times[times.len() - 1]
    ))
}
