//! `ranklet`: train, evaluate, export and benchmark ranklet models.
//!
//! `main` maps the result of [`run`] to an exit code: 0 success, 2 bad input
//! (a file, a flag or a value the user can fix), 1 any other failure. Errors
//! are printed once to stderr with the `ranklet: ` prefix; results go to
//! stdout.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use ranklet::bench;

/// Learn rankings and preferences, export them as compact model files.
#[derive(Parser, Debug)]
#[command(name = "ranklet", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Benchmarks of the numerical core.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Bench(cmd) => bench::run(cmd),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("ranklet: {msg}");
            ExitCode::from(1)
        }
    }
}
