//! `ranklet`: train, evaluate, export and benchmark ranklet models.
//!
//! `main` maps the result of a command to an exit code: 0 success, 2 bad
//! input (a file, a flag or a value the user can fix), 1 any other failure.
//! Errors are printed once to stderr with the `ranklet: ` prefix; results go
//! to stdout, progress to stderr.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use ranklet::commands::{self, EvalArgs, ScoreArgs, TrainArgs};
use ranklet::{bench, error::CliError};

/// Learn rankings and preferences, export them as compact model files.
#[derive(Parser, Debug)]
#[command(name = "ranklet", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Train a ranker (or regressor) and write it as a .rkl model file.
    Train(TrainArgs),
    /// Score every row of a data file with a model (one score per line, input order).
    Score(ScoreArgs),
    /// Evaluate a model on a data file (lines `metric<TAB>value`).
    Eval(EvalArgs),
    /// Reduce item attributes with RCDR (Kendall, Spearman) or PCA from sample orders.
    ///
    /// Writes the basis as TSV. `train`/`eval` with --items/--orders learn and
    /// evaluate from sample orders (see `ranklet train --items X --help`).
    Reduce(ranklet::ordinal::ReduceArgs),
    /// Show a model file's header, parameters summary and metadata.
    Inspect(ranklet::export::InspectArgs),
    /// Export a model as a C array and/or a copy without metadata (--strip-metadata).
    Export(ranklet::export::ExportArgs),
    /// Benchmarks of the numerical core.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Line plot (PNG) of the columns of a tab-separated file.
    #[command(hide = true)]
    PlotLines(ranklet::plot::PlotLinesArgs),
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Train(a) => commands::train(a),
        Command::Score(a) => commands::score(a),
        Command::Eval(a) => commands::eval(a),
        Command::Reduce(a) => ranklet::ordinal::reduce(a),
        Command::Inspect(a) => ranklet::export::inspect(a),
        Command::Export(a) => ranklet::export::export(a),
        Command::Bench(cmd) => bench::run(cmd).map_err(CliError::input),
        Command::PlotLines(a) => ranklet::plot::plot_lines(a),
    }
}

fn main() -> ExitCode {
    // `train`/`eval` with --items/--orders: supervised ordering (ordinal.rs).
    if let Some(code) = ranklet::ordinal::main_if_ordinal() {
        return code;
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints usage errors itself; they are bad input (exit 2),
            // --help and --version are not errors.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ranklet: {e}");
            ExitCode::from(e.code)
        }
    }
}
