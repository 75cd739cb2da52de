//! `ranklet`: train, evaluate, export and benchmark ranklet models.
//!
//! `main` parses the command line with one clap parser, runs the command
//! and maps its result to an exit code (`ranklet::error`): 0 success, 2 bad
//! input (a file, a flag or a value the user can fix), 1 any other failure.
//! Errors are printed once to stderr with the `ranklet: ` prefix; results go
//! to stdout, progress to stderr.
//!
//! The binary's own modules hold everything of the command line: the host
//! library (`ranklet::…`, shared with the Python extension) takes no clap
//! type, draws no bar and prints nothing. In dependency order:
//!
//! - `cli_values` (clap enums of the library's flag enums, one conversion
//!   each), `cli_output` (exit codes, warnings and notes, the progress bar)
//! - `input` (the data and model flags of a command, and reading them
//!   through the library) → cli_values
//! - `plot` (PNG figures, plotters)
//! - `commands` (one module per subcommand; `bench/` has its own) → any of
//!   the above; no module imports a command, and commands do not import
//!   each other.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use ranklet::error::CliError;

mod cli_output;
mod cli_values;
mod commands;
mod input;
mod plot;

use cli_output::{exit_code, usage_exit_code};
use commands::{
    bench, eval, export, inspect, online_update, plot_lines, rank, reduce, score, simulate_feedback, stats, suggest,
    train,
};

// The examples that end each subcommand's `--help`.
/// `Train`'s `--help` examples.
const EX_TRAIN: &str = "Examples:
  ranklet train --algo rankrls --kernel linear --lambda 1 --data data/wine-quality/winequality_red.csv --label-col quality -o /tmp/wine.rkl
  ranklet train --algo rankrls --kernel rbf:0.05 --lambda 0.1,1,10 --cv 5 --basis 300 --data data/wine-quality/winequality_red.svmlight -o /tmp/wine-rbf.rkl
  ranklet train --algo pref-gp --kernel rbf:auto --items items.csv --prefs judgements.txt -o /tmp/gp.rkl";
/// `Stats`'s `--help` examples.
const EX_STATS: &str = "Examples:
  ranklet stats --data shard-00.light --num-features 136 --cv 5 --seed 1 -o /tmp/shard-00.rks
  ranklet stats --data part.00 --kernel rbf:0.01 --basis 256 --sample 20000 -o /tmp/p00.rks   (Nyström features)
  ranklet stats --data part.01 --landmarks /tmp/p00.rks -o /tmp/p01.rks   (the same landmarks)";
/// `Score`'s `--help` examples.
const EX_SCORE: &str = "Examples:
  ranklet score -m /tmp/wine.rkl --data data/wine-quality/winequality_red.csv --label-col quality
  ranklet score -m /tmp/wine.rkl --data rows.light      (lines `1:7.4 2:0.7 …`; labels and qids optional)
  ranklet score -m /tmp/wine.rkl --data rows.txt --format csv > scores.txt";
/// `Eval`'s `--help` examples.
const EX_EVAL: &str = "Examples:
  ranklet eval -m /tmp/wine.rkl --data data/wine-quality/winequality_red.csv --label-col quality
  ranklet eval -m /tmp/wine.rkl --data data/wine-quality/winequality_red.svmlight --metric ndcg@10,map,kendall
  ranklet eval -m /tmp/gp.rkl --items items.csv --prefs held_out.txt --metric pairerror,auc";
/// `Rank`'s `--help` examples.
const EX_RANK: &str = "Examples:
  ranklet rank -m /tmp/pairs.rkl --for D00001 --candidates targets.txt
  ranklet rank -m /tmp/pairs.rkl --for D00001 --nodes drugs.txt --candidates targets.txt -k 5";
/// `Reduce`'s `--help` examples.
const EX_REDUCE: &str = "Examples:
  ranklet reduce --method rcdr-kendall --dims 3 --items items.csv --orders orders.txt -o /tmp/basis.tsv
  ranklet reduce --method pca --dims 2 --items items.csv --orders orders.txt -o /tmp/pca.tsv";
/// `Inspect`'s `--help` examples.
const EX_INSPECT: &str = "Examples:
  ranklet inspect -m /tmp/wine.rkl
  ranklet inspect -m /tmp/wine.rkl --top 3";
/// `Export`'s `--help` examples.
const EX_EXPORT: &str = "Examples:
  ranklet export -m /tmp/wine.rkl --c-array wine_model -o wine_model.c      (also writes wine_model.h)
  ranklet export -m /tmp/wine.rkl --quantize i16 --calibrate data/wine-quality/winequality_red.svmlight -o /tmp/wine-i16.rkl
  ranklet export -m /tmp/wine.rkl --strip-metadata -o /tmp/wine-bare.rkl";
/// `OnlineUpdate`'s `--help` examples.
const EX_ONLINEUPDATE: &str = "Examples:
  ranklet online-update -m /tmp/wine.rkl --data rows.light --pairs answers.txt -o /tmp/state.rkl
  ranklet online-update -m /tmp/state.rkl --data rows.light --pairs more_answers.txt -o /tmp/state2.rkl";
/// `SimulateFeedback`'s `--help` examples.
const EX_SIMULATEFEEDBACK: &str = "Examples:
  ranklet simulate-feedback -m /tmp/wine.rkl --data data/wine-quality/winequality_red.svmlight --rounds 50 --active
  ranklet simulate-feedback -m /tmp/wine.rkl --data data/wine-quality/winequality_red.svmlight --rounds 50 --random --users 20";
/// `Suggest`'s `--help` examples.
const EX_SUGGEST: &str = "Examples:
  ranklet suggest -m /tmp/gp.rkl
  ranklet suggest -m /tmp/gp.rkl -k 3";
/// `Bench`'s `--help` examples.
const EX_BENCH: &str = "Examples:
  ranklet bench read --data data/parse-rank/rank_train.light
  ranklet bench eigen --help";

/// Learn rankings and preferences, export them as compact model files.
#[derive(Parser, Debug)]
#[command(name = "ranklet", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Train a ranker (or regressor) from rows, pairwise preferences or
    /// sample orders, and write it as a .rkl model file.
    #[command(after_help = EX_TRAIN)]
    Train(train::TrainArgs),
    /// Summarise SVMlight rows as additive statistics of linear RLS /
    /// RankRLS (.rks), for `train --from-stats` to merge with other shards.
    #[command(after_help = EX_STATS)]
    Stats(stats::StatsArgs),
    /// Score every row of a data file with a model (one score per line, input order).
    #[command(after_help = EX_SCORE)]
    Score(score::ScoreArgs),
    /// Evaluate a model on rows, pairs or sample orders (lines `metric<TAB>value`).
    #[command(after_help = EX_EVAL)]
    Eval(eval::EvalArgs),
    /// Top-k candidates for one conditioning node by a pair model (trained
    /// on --edges): lines `id<TAB>score`, best first.
    #[command(after_help = EX_RANK)]
    Rank(rank::RankArgs),
    /// Reduce item attributes with RCDR (Kendall, Spearman) or PCA from sample orders.
    ///
    /// Writes the basis as TSV. `train --reduce METHOD:K` learns on the
    /// reduced attributes directly.
    #[command(after_help = EX_REDUCE)]
    Reduce(reduce::ReduceArgs),
    /// Show a model file's header, parameters summary and metadata.
    #[command(after_help = EX_INSPECT, override_usage = "ranklet inspect [OPTIONS] <-m MODEL | MODEL>")]
    Inspect(inspect::InspectArgs),
    /// Export a model as a C array and/or a copy without metadata (--strip-metadata).
    #[command(after_help = EX_EXPORT)]
    Export(export::ExportArgs),
    /// Apply recorded pairwise feedback to an on-device learner state (from
    /// a linear prior or a saved state), as the device does, and write the
    /// state it ends in.
    #[command(after_help = EX_ONLINEUPDATE)]
    OnlineUpdate(online_update::OnlineUpdateArgs),
    /// Replay simulated users answering pairwise questions to the on-device
    /// online learner (active vs random questions); prints the held-out
    /// pair error against the number of answers.
    #[command(after_help = EX_SIMULATEFEEDBACK)]
    SimulateFeedback(simulate_feedback::SimulateFeedbackArgs),
    /// The next pairs to ask of a preference GP over a fixed item set (001
    /// §5): lines `a<TAB>b<TAB>variance<TAB>mean_difference`, best first.
    ///
    /// Greedy: the pair of highest variance / squared mean of f_a − f_b,
    /// then the posterior updated as if the more probable answer had been
    /// given, and again. An inductive model (--inductive, --basis) proposes
    /// one pair among every pair of the items of --items (a screened
    /// search, no n × n matrix).
    #[command(after_help = EX_SUGGEST)]
    Suggest(suggest::SuggestArgs),
    /// Benchmarks of the numerical core.
    #[command(subcommand, after_help = EX_BENCH)]
    Bench(bench::BenchCommand),
    /// Line plot (PNG) of the columns of a tab-separated file.
    #[command(hide = true)]
    PlotLines(plot_lines::PlotLinesArgs),
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Train(a) => train::train(a),
        Command::Stats(a) => stats::stats(a),
        Command::Score(a) => score::score(a),
        Command::Eval(a) => eval::eval(a),
        Command::Rank(a) => rank::rank(a),
        Command::Reduce(a) => reduce::reduce(a),
        Command::Inspect(a) => inspect::inspect(a),
        Command::Export(a) => export::export(a),
        Command::OnlineUpdate(a) => online_update::online_update(a),
        Command::SimulateFeedback(a) => simulate_feedback::simulate_feedback(a),
        Command::Suggest(a) => suggest::suggest(a),
        Command::Bench(cmd) => bench::run(cmd).map_err(CliError::input),
        Command::PlotLines(a) => plot_lines::plot_lines(a),
    }
}

fn main() -> ExitCode {
    match Cli::try_parse() {
        Ok(cli) => exit_code(run(cli)),
        Err(e) => usage_exit_code(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("ranklet").chain(args.iter().copied()))
    }

    #[test]
    fn the_parser_is_consistent() {
        Cli::command().debug_assert();
    }

    /// What `main_if_ordinal` used to sniff from argv: `train`/`eval` with
    /// `--items` take the supervised-ordering form, other commands do not
    /// know `--items`. The one parser now decides by the flags given.
    #[test]
    fn ordinal_form_detection() {
        let t = parse(&["train", "--algo", "err", "--items", "i.csv", "--orders", "o.txt", "-o", "m.rkl"]).unwrap();
        assert!(
            matches!(&t.command, Command::Train(a) if a.data.orders.paths().is_some() && a.data.rows.data.is_none())
        );
        let e = parse(&["eval", "-m", "m.rkl", "--items=i.csv", "--orders", "o.txt"]).unwrap();
        assert!(matches!(&e.command, Command::Eval(a) if a.data.orders.paths().is_some()));
        let r = parse(&["train", "--algo", "rls", "--data", "d.svm", "-o", "m.rkl"]).unwrap();
        assert!(
            matches!(&r.command, Command::Train(a) if a.data.orders.paths().is_none() && a.data.rows.data.is_some())
        );
        assert!(parse(&["score", "-m", "m.rkl", "--items", "i.csv"]).is_err());
        assert!(parse(&[]).is_err());
    }

    /// Flags of another data kind are refused by the parser, naming both.
    #[test]
    fn flags_of_another_data_kind_are_refused() {
        let base = ["train", "--algo", "err", "--items", "i.csv", "--orders", "o.txt", "-o", "m.rkl"];
        for (extra, other) in [
            (&["--data", "d.svm"][..], "--data"),
            (&["--pairs", "p.txt"][..], "--pairs"),
            (&["--kernel", "rbf:1"][..], "--kernel"),
            (&["--cv", "3"][..], "--cv"),
            (&["--label-col", "y"][..], "--label-col"),
            (&["--standardize"][..], "--standardize"),
        ] {
            let args: Vec<&str> = base.iter().chain(extra).copied().collect();
            let e = parse(&args).map(|_| ()).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{args:?}: {e}");
            let msg = e.to_string();
            assert!(msg.contains(other) && (msg.contains("--items") || msg.contains("--orders")), "{args:?}: {msg}");
            assert!(e.use_stderr(), "a usage error exits 2");
        }
        let e = parse(&["train", "--algo", "err", "--data", "d.svm", "--reduce", "pca:2", "-o", "m"])
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains("--reduce") && e.to_string().contains("--data"), "{e}");
        let e = parse(&["eval", "-m", "m", "--data", "d.svm", "--items", "i.csv", "--orders", "o"])
            .map(|_| ())
            .unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict, "{e}");
    }

    #[test]
    fn closed_sets_and_lists_are_parsed_by_clap() {
        let base = ["train", "--algo", "rls", "--data", "d.svm", "-o", "m.rkl"];
        for bad in
            [["--cv", "1"], ["--cv", "x"], ["--precision", "f16"], ["--query-weight", "x"], ["--kernel", "sigmoid"]]
        {
            let args: Vec<&str> = base.iter().chain(&bad).copied().collect();
            let e = parse(&args).map(|_| ()).unwrap_err();
            use clap::error::ErrorKind;
            assert!(matches!(e.kind(), ErrorKind::InvalidValue | ErrorKind::ValueValidation), "{args:?}: {e}");
            assert!(e.use_stderr(), "a usage error exits 2");
        }
        let args: Vec<&str> = base.iter().chain(&["--cv", "loo", "--kernel", "rbf:0.5,1"]).copied().collect();
        let Command::Train(a) = parse(&args).unwrap().command else { panic!("train") };
        assert_eq!(a.cv, Some(ranklet::cv::Scheme::Loo));
        assert!(matches!(&a.kernel, Some(ranklet::args::KernelArg::List(l)) if l.0.len() == 2));
    }
}
