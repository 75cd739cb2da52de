//! `ranklet bench …`: benchmarks of the numerical core, one JSON line each
//! (`eigen`: the symmetric eigendecomposition; `train`: one training run).

use clap::Subcommand;

pub mod eigen;
pub mod rng;
pub mod train;

/// Benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Time the symmetric eigendecomposition (full or top-k) of a kernel matrix.
    Eigen(eigen::EigenArgs),
    /// Time one training run of a learner on generated data.
    Train(train::TrainBenchArgs),
}

/// Runs a benchmark subcommand.
pub fn run(cmd: BenchCommand) -> Result<(), String> {
    match cmd {
        BenchCommand::Eigen(args) => {
            let line = eigen::bench_eigen(&args)?;
            println!("{line}");
            Ok(())
        }
        BenchCommand::Train(args) => {
            let line = train::bench_train(&args)?;
            println!("{line}");
            Ok(())
        }
    }
}
