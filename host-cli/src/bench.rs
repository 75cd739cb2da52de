//! `ranklet bench …`: benchmarks of the numerical core.

use clap::Subcommand;

/// Benchmarks.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {}

/// Runs a benchmark subcommand.
pub fn run(cmd: BenchCommand) -> Result<(), String> {
    match cmd {}
}
