//! `ranklet bench …`: benchmarks of the numerical core, one JSON line each
//! (`eigen`: the symmetric eigendecomposition; `train`: one training run;
//! `kron`: one Kronecker RLS fit, closed form or CG; `read`: one data file
//! read; `pref`: the probit preference GP's EP and one evidence + gradient
//! evaluation).

use clap::Subcommand;

pub mod eigen;
pub mod kron;
pub mod pref;
pub mod read;
pub mod timed;
pub mod train;

/// Benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Time the symmetric eigendecomposition (full or top-k) of a kernel matrix.
    Eigen(eigen::EigenArgs),
    /// Time one training run of a learner on generated data.
    Train(train::TrainBenchArgs),
    /// Time one Kronecker RLS fit (RBF node kernels included): closed form on a
    /// complete p × p graph, or CG on an incomplete one.
    Kron(kron::KronBenchArgs),
    /// Time reading one SVMlight or CSV data file (MB/s).
    Read(read::ReadBenchArgs),
    /// Time the probit preference GP: EP to convergence and one evidence +
    /// gradient evaluation at fixed hyperparameters (optionally a whole
    /// hyperparameter fit).
    Pref(pref::PrefBenchArgs),
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
        BenchCommand::Kron(args) => {
            let line = kron::bench_kron(&args)?;
            println!("{line}");
            Ok(())
        }
        BenchCommand::Read(args) => {
            let line = read::bench_read(&args)?;
            println!("{line}");
            Ok(())
        }
        BenchCommand::Pref(args) => {
            let line = pref::bench_pref(&args)?;
            println!("{line}");
            Ok(())
        }
    }
}
