//! `ranklet stats`: the additive statistics of linear RLS / RankRLS
//! (`ranklet_core::learn::ls_stats`) of SVMlight files, streamed block by
//! block, written as a `.rks` file (`docs/format.md`, "Statistics files")
//! that `ranklet train --from-stats` merges with others. `docs/scale.md`
//! gives the recipe for shards computed in parallel or on other machines.

use std::path::PathBuf;

use clap::Args;

use crate::args::{heading, QueryWeightArg};
use crate::data::svmlight::SvmlightOptions;
use crate::error::{check_writable, write_atomic, CliError};
use crate::family::ls_stats::Shard;
use crate::hostbackend::{BackendChoice, HostBackend};

/// `ranklet stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    /// SVMlight/LETOR files; their rows are summarised together (a query
    /// is its qid, whichever file or line its rows are on).
    #[arg(long, required = true, num_args = 1.., value_name = "FILE", help_heading = heading::ROWS)]
    pub data: Vec<PathBuf>,
    /// Feature dimension d (default: the largest index met). Shards merge
    /// only with the same d: give every shard of a data set the same value.
    #[arg(long, help_heading = heading::ROWS)]
    pub num_features: Option<usize>,
    /// Weighting of the within-query graphs, as `ranklet train`'s (fixed in
    /// the statistics).
    #[arg(long, value_enum, default_value_t, help_heading = heading::LEARNER)]
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
    /// Seed of the fold assignment.
    #[arg(long, default_value_t = 1, help_heading = heading::CV)]
    pub seed: u64,
    /// Linear-algebra backend.
    #[arg(long, value_enum, default_value_t = BackendChoice::Faer, help_heading = heading::LEARNER)]
    pub backend: BackendChoice,
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
    if let Some(csv) = a.data.iter().find(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"))) {
        return Err(CliError::input(format!(
            "{}: ranklet stats reads SVMlight/LETOR rows (`label qid:q i:v …`), not CSV; convert the file, \
             or train it whole with `ranklet train --data {} --label-col NAME`",
            csv.display(),
            csv.display()
        )));
    }
    let folds = match a.cv {
        None => 1,
        Some(k) if (2..=u16::MAX as usize).contains(&k) => k,
        Some(k) => return Err(CliError::input(format!("--cv {k}: a number of folds from 2 to 65535"))),
    };
    let opts = SvmlightOptions { num_features: a.num_features, optional_label: false };
    let mut backend = HostBackend::new(a.backend);
    let shard =
        Shard::from_svmlight(&mut backend, &a.data, &opts, a.query_weight.to_core(), folds, a.seed, a.keep_queries)?;
    let bytes = shard.to_bytes()?;
    write_atomic(&a.output, &bytes)?;
    eprintln!(
        "wrote {} ({} bytes: {} rows, {} queries of which {} open, d = {}, {} fold(s))",
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
