//! `ranklet stats`: the additive statistics of linear RLS / RankRLS
//! (`ranklet_core::learn::ls_stats`) of SVMlight files, streamed block by
//! block (or CSV files, read whole), of their raw or Nyström features, written as a `.rks` file (`docs/format.md`, "Statistics files")
//! that `ranklet train --from-stats` merges with others; with `--pairs`,
//! the statistics of explicit preference pairs over the shard's rows.
//! `docs/scale.md` gives the recipe for shards computed in parallel or on
//! other machines.

use std::path::PathBuf;

use clap::Args;
use ranklet::args::{heading, parse_kernel_list, KernelList, QueryWeightArg};
use ranklet::data::csv::{read_csv, CsvOptions};
use ranklet::data::svmlight::SvmlightOptions;
use ranklet::error::{check_writable, write_atomic, CliError};
use ranklet::family::ls_stats::{PairSummer, Shard};
use ranklet::family::nystrom_stats::{read_map, sample_svmlight, NystromSpec, Reservoir};
use ranklet::hostbackend::{BackendChoice, HostBackend};

use ranklet_core::format::stats::StatsContent;

use crate::cli_values::{self, lib_enum};

/// `ranklet stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// SVMlight/LETOR files, or CSV files (`.csv`, with --label-col and
    /// --qid-col); their rows are summarised together (a query is its qid,
    /// whichever file or line its rows are on).
    #[arg(long, required = true, num_args = 1.., value_name = "FILE", help_heading = heading::ROWS)]
    pub data: Vec<PathBuf>,
    /// Feature dimension d (default: the largest index met). Shards merge
    /// only with the same d: give every shard of a data set the same value.
    #[arg(long, help_heading = heading::ROWS)]
    pub num_features: Option<usize>,
    /// Weighting of the within-query graphs, as `ranklet train`'s (fixed in
    /// the statistics).
    #[arg(long, value_parser = lib_enum::<cli_values::QueryWeight>(), default_value = "equal", help_heading = heading::LEARNER)]
    pub query_weight: QueryWeightArg,
    /// Keep per-fold statistics for K-fold cross-validation, a query's fold
    /// being splitmix64(qid XOR seed) mod K.
    #[arg(long, value_name = "K", help_heading = heading::CV)]
    pub cv: Option<usize>,
    /// Keep every query's partial sums in the file, so that a query may
    /// have rows in any number of shards, anywhere in them (file size
    /// O(queries·d)). By default a query is sealed when its run of
    /// consecutive lines ends — except a file's first and last runs, which
    /// may continue in the neighbouring shards — leaving only its id; a
    /// sealed query met again is refused.
    #[arg(long, help_heading = heading::ROWS)]
    pub keep_queries: bool,
    /// Statistics of explicit preference pairs (the `--pairs` file of
    /// `ranklet train`: `winner loser [magnitude]`, rows numbered from 0
    /// across this shard's --data files) instead of queries: the normal
    /// equations of Σ (f(x_winner) − f(x_loser) − magnitude)², which
    /// `ranklet train --from-stats --algo rankrls` solves. Both rows of a
    /// pair must be in this shard. With --cv K a pair's fold is its winner
    /// row's query's (splitmix64(qid XOR seed) mod K, as rows'), or, for
    /// rows without qids, that of a hash of the pair's values. Without
    /// --keep-queries, --kernel and --landmarks.
    #[arg(long, value_name = "PAIRS", conflicts_with_all = ["keep_queries", "kernel", "landmarks"], help_heading = heading::ROWS)]
    pub pairs: Option<PathBuf>,
    /// Seed of the fold assignment (and of the landmark sample).
    #[arg(long, default_value_t = 1, help_heading = heading::CV)]
    pub seed: u64,
    /// Nyström statistics: the kernel of the feature map (`rbf:G`,
    /// `poly:D[:G[:C]]`, `linear`); needs --basis. Every row x is mapped
    /// to φ(x) = L⁻¹k_m(x) over M landmarks (K_mm = LLᵀ) and the statistics
    /// are those of φ; `ranklet train --from-stats` fits the reduced-basis
    /// kernel model (rls, rankrls, kpcr, kpcrank).
    #[arg(long, value_parser = parse_kernel_list, requires = "basis", conflicts_with = "landmarks", help_heading = heading::LEARNER)]
    pub kernel: Option<KernelList>,
    /// At most M landmarks, chosen by pivoted Cholesky of the kernel matrix
    /// of a sample of the rows (as `ranklet train --basis` on all rows).
    #[arg(long, value_name = "M", requires = "kernel", help_heading = heading::LEARNER)]
    pub basis: Option<usize>,
    /// The sample the landmarks are chosen from: N rows drawn uniformly
    /// (seeded by --seed) in a first pass over --data; all rows when there
    /// are at most N.
    #[arg(long, value_name = "N", default_value_t = 10000, help_heading = heading::LEARNER)]
    pub sample: usize,
    /// Nyström statistics with the feature map (kernel, landmarks, L) of
    /// this statistics file, so that shards share one map: compute one
    /// shard with --kernel/--basis, the others with --landmarks that file.
    #[arg(long, value_name = "L.rks", conflicts_with_all = ["kernel", "basis"], help_heading = heading::LEARNER)]
    pub landmarks: Option<PathBuf>,
    /// Linear-algebra backend.
    #[arg(long, value_parser = lib_enum::<cli_values::Backend>(), default_value = "faer", help_heading = heading::LEARNER)]
    pub backend: BackendChoice,
    /// CSV: the label column (default `label`). CSV files (by the `.csv`
    /// extension) are read whole, as `ranklet train --data` reads them,
    /// then summarised in blocks; a non-numeric query id counts as the
    /// FNV-1a hash of its text.
    #[arg(long, help_heading = heading::ROWS)]
    pub label_col: Option<String>,
    /// CSV: the query-id column.
    #[arg(long, help_heading = heading::ROWS)]
    pub qid_col: Option<String>,
    /// Output statistics file (.rks).
    #[arg(short, long, help_heading = heading::OUTPUT)]
    pub output: PathBuf,
}

/// `ranklet stats`.
pub fn stats(a: StatsArgs) -> Result<(), CliError> {
    // Before reading anything: a pass over gigabytes must not end in
    // "cannot write", nor in a parse error on a format this command does
    // not read.
    check_writable(&a.output)?;
    let is_csv = |p: &PathBuf| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let csv = a.data.iter().filter(|p| is_csv(p)).count();
    if csv > 0 && csv < a.data.len() {
        return Err(CliError::input(format!(
            "{} and {}: one shard reads one format (CSV by the .csv extension, else SVMlight); make a shard of each",
            a.data.iter().find(|p| is_csv(p)).map_or(String::new(), |p| p.display().to_string()),
            a.data.iter().find(|p| !is_csv(p)).map_or(String::new(), |p| p.display().to_string()),
        )));
    }
    if csv == 0 && (a.label_col.is_some() || a.qid_col.is_some()) {
        return Err(CliError::input("--label-col/--qid-col apply to CSV data (files ending in .csv)"));
    }
    let folds = match a.cv {
        None => 1,
        Some(k) if (2..=u16::MAX as usize).contains(&k) => k,
        Some(k) => return Err(CliError::input(format!("--cv {k}: a number of folds from 2 to 65535"))),
    };
    let pairs = match &a.pairs {
        Some(p) => Some(PairSummer::read(p)?),
        None => None,
    };
    let opts = SvmlightOptions { num_features: a.num_features, optional_label: false };
    let mut backend = HostBackend::new(a.backend);
    let datasets = if csv > 0 {
        let opts = CsvOptions { label_col: a.label_col.clone(), qid_col: a.qid_col.clone(), optional_label: false };
        a.data.iter().map(|p| read_csv(p, &opts).map_err(CliError::from)).collect::<Result<Vec<_>, _>>()?
    } else {
        Vec::new()
    };
    let map = match (&a.landmarks, &a.kernel, a.basis) {
        (Some(l), _, _) => {
            let spec = read_map(l)?;
            if let Some(p) = a.num_features.filter(|&p| p != spec.input_dim) {
                return Err(CliError::input(format!(
                    "--num-features {p}: the landmarks of {} have {} features",
                    l.display(),
                    spec.input_dim
                )));
            }
            Some(spec)
        }
        (None, Some(k), Some(m)) => {
            let kernel = match &k.0[..] {
                [k] => *k,
                _ => return Err(CliError::input("--kernel: statistics take one kernel, not a grid")),
            };
            if m == 0 || a.sample == 0 {
                return Err(CliError::input("--basis M and --sample N: at least 1"));
            }
            let (sample, p) = if csv > 0 {
                let mut r = Reservoir::new(a.sample, a.seed);
                for ds in &datasets {
                    (0..ds.n_rows()).for_each(|i| r.offer(ds.row(i).0, ds.row(i).1));
                }
                r.finish(datasets.first().map(|d| d.n_features()))?
            } else {
                sample_svmlight(&a.data, &opts, a.sample, a.seed)?
            };
            let spec = NystromSpec::from_sample(kernel, &sample, p, m)?;
            if spec.m() < m.min(sample.len() / p.max(1)) {
                eprintln!(
                    "reduced basis: {} landmark rows (at most {m}): the sample's kernel matrix has that numerical rank",
                    spec.m()
                );
            }
            Some(spec)
        }
        _ => None,
    };
    let map_note = map.as_ref().map(|m| format!(", Nyström map: {}", m.describe())).unwrap_or_default();
    let shard = match pairs {
        Some(summer) if csv > 0 => {
            let sets: Vec<&ranklet::data::Dataset> = datasets.iter().collect();
            let name = a.data.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(",");
            Shard::pairs_from_datasets(&mut backend, &sets, &name, a.query_weight.to_core(), folds, a.seed, summer)?
        }
        None if csv > 0 => {
            let mut all: Option<Shard> = None;
            for (ds, path) in datasets.iter().zip(&a.data) {
                let s = Shard::from_dataset(
                    &mut backend,
                    ds,
                    &path.display().to_string(),
                    a.query_weight.to_core(),
                    folds,
                    a.seed,
                    a.keep_queries,
                    map.clone(),
                )?;
                match &mut all {
                    Some(t) => t.merge(&s)?,
                    None => all = Some(s),
                }
            }
            all.ok_or_else(|| CliError::input("--data: no file"))?
        }
        pairs => Shard::from_svmlight_mapped(
            &mut backend,
            &a.data,
            &opts,
            a.query_weight.to_core(),
            folds,
            a.seed,
            a.keep_queries,
            map,
            pairs,
        )?,
    };
    let bytes = shard.to_bytes()?;
    write_atomic(&a.output, &bytes)?;
    if shard.content == StatsContent::Pairs {
        eprintln!(
            "wrote {} ({} bytes: {} pairs, d = {}, {} fold(s))",
            a.output.display(),
            bytes.len(),
            shard.rows(),
            shard.shape.d,
            folds
        );
        return Ok(());
    }
    eprintln!(
        "wrote {} ({} bytes: {} rows, {} queries of which {} open, d = {}, {} fold(s){map_note})",
        a.output.display(),
        bytes.len(),
        shard.rows(),
        shard.qids.len() + shard.sealed_qids.len(),
        shard.qids.len(),
        shard.shape.d,
        folds
    );
    Ok(())
}
