//! `ranklet bench read …`: time reading one data file (SVMlight or CSV) into
//! a [`Dataset`](ranklet::data::Dataset), the whole reader: the file read,
//! UTF-8 check, parsing and the join of the parallel chunks.
//!
//! ```text
//! ranklet bench read --data big.light --repeat 5
//! {"file":"big.light","bytes":…,"rows":…,"nnz":…,"threads":2,"repeat":5,"median_s":…,"min_s":…,"max_s":…,"mb_per_s":…}
//! ```
//!
//! `mb_per_s` is the file's size in 10⁶ bytes over the median time. The
//! threads are rayon's (`RAYON_NUM_THREADS`).

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use ranklet::data::csv::{read_csv, CsvOptions};
use ranklet::data::svmlight::{read_svmlight, SvmlightOptions};

/// Arguments of `ranklet bench read`.
#[derive(Args, Debug)]
pub struct ReadBenchArgs {
    /// The data file (CSV by the `.csv` extension, SVMlight otherwise).
    #[arg(long)]
    pub data: PathBuf,
    /// CSV: the label column.
    #[arg(long)]
    pub label_col: Option<String>,
    /// Timed repetitions (median reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
}

/// Runs the benchmark and returns its JSON line.
pub fn bench_read(a: &ReadBenchArgs) -> Result<String, String> {
    let bytes = std::fs::metadata(&a.data).map_err(|e| format!("{}: {e}", a.data.display()))?.len();
    let csv = a.data.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let mut times = Vec::with_capacity(a.repeat.max(1));
    let (mut rows, mut nnz) = (0, 0);
    for _ in 0..a.repeat.max(1) {
        let t = Instant::now();
        let ds = if csv {
            read_csv(&a.data, &CsvOptions { label_col: a.label_col.clone(), qid_col: None, ..Default::default() })
        } else {
            read_svmlight(&a.data, &SvmlightOptions::default())
        }
        .map_err(|e| e.to_string())?;
        times.push(t.elapsed().as_secs_f64());
        (rows, nnz) = (ds.n_rows(), ds.nnz());
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    Ok(format!(
        "{{\"file\":\"{}\",\"bytes\":{bytes},\"rows\":{rows},\"nnz\":{nnz},\"threads\":{},\"repeat\":{},\"median_s\":{median},\"min_s\":{},\"max_s\":{},\"mb_per_s\":{:.1}}}",
        a.data.display(),
        rayon::current_num_threads(),
        times.len(),
        times[0],
        times[times.len() - 1],
        bytes as f64 / 1e6 / median
    ))
}
