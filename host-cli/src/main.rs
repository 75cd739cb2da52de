//! `ranklet`: train, evaluate, export and benchmark ranklet models.
//!
//! `main` maps the result of a command to an exit code: 0 success, 2 bad
//! input (a file, a flag or a value the user can fix), 1 any other failure.
//! Errors are printed once to stderr with the `ranklet: ` prefix; results go
//! to stdout, progress to stderr.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use ranklet::commands::{bench, eval, export, inspect, plot_lines, reduce, score, train};
use ranklet::error::CliError;

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
    Train(train::TrainArgs),
    /// Score every row of a data file with a model (one score per line, input order).
    Score(score::ScoreArgs),
    /// Evaluate a model on a data file (lines `metric<TAB>value`).
    Eval(eval::EvalArgs),
    /// Reduce item attributes with RCDR (Kendall, Spearman) or PCA from sample orders.
    ///
    /// Writes the basis as TSV. `train`/`eval` with --items/--orders learn and
    /// evaluate from sample orders (see `ranklet train --items X --help`).
    Reduce(reduce::ReduceArgs),
    /// Show a model file's header, parameters summary and metadata.
    Inspect(inspect::InspectArgs),
    /// Export a model as a C array and/or a copy without metadata (--strip-metadata).
    Export(export::ExportArgs),
    /// Benchmarks of the numerical core.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Line plot (PNG) of the columns of a tab-separated file.
    #[command(hide = true)]
    PlotLines(plot_lines::PlotLinesArgs),
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Train(a) => train::train(a),
        Command::Score(a) => score::score(a),
        Command::Eval(a) => eval::eval(a),
        Command::Reduce(a) => reduce::reduce(a),
        Command::Inspect(a) => inspect::inspect(a),
        Command::Export(a) => export::export(a),
        Command::Bench(cmd) => bench::run(cmd).map_err(CliError::input),
        Command::PlotLines(a) => plot_lines::plot_lines(a),
    }
}

fn main() -> ExitCode {
    // `train`/`eval` with --items/--orders: supervised ordering (ordinal.rs).
    if let Some(code) = main_if_ordinal() {
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

/// `train` and `eval` in their supervised-ordering form.
#[derive(Parser, Debug)]
#[command(name = "ranklet")]
struct OrdCli {
    #[command(subcommand)]
    command: OrdCommand,
}

#[derive(Subcommand, Debug)]
enum OrdCommand {
    /// Learn a linear ranking function from sample orders (ERR or RankRLS,
    /// optionally on RCDR/PCA-reduced attributes) and write it as .rkl.
    Train(train::OrderTrainArgs),
    /// Mean Spearman ρ / Kendall τ-b between a model and held-out orders.
    Eval(eval::OrderEvalArgs),
}

/// `true` when the command line is `train` or `eval` with `--items`: the
/// supervised-ordering form handled here.
fn is_ordinal(args: &[OsString]) -> bool {
    let sub = args.get(1).and_then(|s| s.to_str());
    matches!(sub, Some("train") | Some("eval"))
        && args.iter().skip(2).filter_map(|s| s.to_str()).any(|s| s == "--items" || s.starts_with("--items="))
}

/// Runs `train`/`eval` with `--items` and returns the exit code, or `None`
/// when the command line is not of that form (then the ordinary parser runs).
fn main_if_ordinal() -> Option<ExitCode> {
    let args: Vec<OsString> = std::env::args_os().collect();
    if !is_ordinal(&args) {
        return None;
    }
    let cli = match OrdCli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return Some(ExitCode::from(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    let r = match cli.command {
        OrdCommand::Train(a) => train::train_orders(a),
        OrdCommand::Eval(a) => eval::eval_orders(a),
    };
    Some(match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ranklet: {e}");
            ExitCode::from(e.code)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinal_form_detection() {
        let v = |s: &[&str]| s.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(is_ordinal(&v(&["ranklet", "train", "--algo", "err", "--items", "i.csv"])));
        assert!(is_ordinal(&v(&["ranklet", "eval", "--items=i.csv"])));
        assert!(!is_ordinal(&v(&["ranklet", "train", "--data", "d.svm"])));
        assert!(!is_ordinal(&v(&["ranklet", "score", "--items", "i.csv"])));
        assert!(!is_ordinal(&v(&["ranklet"])));
    }
}
