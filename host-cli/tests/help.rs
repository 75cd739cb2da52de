//! Walks every subcommand's `--help` (nested `bench` subcommands and the
//! hidden `plot-lines` included) through the built binary: each exits 0 and
//! prints a usage line naming the command; every flag it lists sits under a
//! heading; in the commands that read data or a model, every flag but
//! `--help` sits under a named heading (a data kind, Learner,
//! Cross-validation, Model, Output), not the catch-all `Options`; and
//! `train --help` lists every data kind's flags under that kind's heading.

use std::collections::BTreeMap;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ranklet");

/// The commands whose flags are all grouped under named headings.
const GROUPED: &[&str] = &["train", "eval", "score", "rank", "reduce", "inspect", "export", "suggest"];

/// The parsed `--help` of one command.
struct Help {
    text: String,
    /// Flag (`--long`, or `-s` when there is no long form) → its heading.
    flags: BTreeMap<String, String>,
    /// Subcommands listed under `Commands:` (without `help`).
    commands: Vec<String>,
}

fn help(path: &[&str]) -> Help {
    let out = Command::new(BIN).args(path).arg("--help").output().expect("run ranklet");
    let text = String::from_utf8(out.stdout).expect("UTF-8 help");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{path:?} --help: exit {:?}\n{text}{stderr}", out.status.code());
    let usage = ["Usage: ranklet"].iter().chain(path).copied().collect::<Vec<_>>().join(" ");
    assert!(text.lines().any(|l| l.starts_with(&usage)), "{path:?}: no `{usage}` line:\n{text}");
    let (mut flags, mut commands) = (BTreeMap::new(), Vec::new());
    let mut heading: Option<String> = None;
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') && !line.starts_with("Usage") {
            heading = Some(line.trim_end_matches(':').to_string());
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let item = line.trim_start();
        // Flags start at column 2 (`-s, --long`) or 6 (`--long`); deeper
        // lines are descriptions and possible values.
        if (2..=6).contains(&indent) && item.starts_with('-') {
            let name = item
                .split([',', ' ', '='])
                .filter(|t| t.starts_with('-'))
                .find(|t| t.starts_with("--"))
                .or_else(|| item.split([',', ' ']).next())
                .unwrap()
                .to_string();
            let h = heading.clone().unwrap_or_else(|| panic!("{path:?}: {name} is under no heading:\n{text}"));
            assert!(!["Usage", "Commands", "Arguments"].contains(&h.as_str()), "{path:?}: {name} under {h}");
            assert!(flags.insert(name.clone(), h).is_none(), "{path:?}: {name} listed twice:\n{text}");
        } else if indent == 2 && heading.as_deref() == Some("Commands") {
            let name = item.split_whitespace().next().unwrap().to_string();
            if name != "help" {
                commands.push(name);
            }
        }
    }
    Help { text, flags, commands }
}

/// Every command path reachable from the top-level help, plus the hidden
/// `plot-lines`.
fn walk() -> Vec<(Vec<String>, Help)> {
    let mut todo: Vec<Vec<String>> = vec![vec![], vec!["plot-lines".into()]];
    let mut done = Vec::new();
    while let Some(path) = todo.pop() {
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        let h = help(&refs);
        for c in &h.commands {
            let mut p = path.clone();
            p.push(c.clone());
            todo.push(p);
        }
        done.push((path, h));
    }
    done
}

#[test]
fn every_subcommand_help_exits_zero_with_usage_and_headed_flags() {
    let all = walk();
    let paths: Vec<String> = all.iter().map(|(p, _)| p.join(" ")).collect();
    for want in [
        "train",
        "score",
        "eval",
        "rank",
        "reduce",
        "inspect",
        "export",
        "suggest",
        "bench",
        "bench eigen",
        "bench train",
        "plot-lines",
    ] {
        assert!(paths.iter().any(|p| p == want), "`{want} --help` was not walked: {paths:?}");
    }
    for (path, h) in &all {
        assert!(h.flags.contains_key("--help"), "{path:?} lists no --help:\n{}", h.text);
        if path.len() == 1 && GROUPED.contains(&path[0].as_str()) {
            for (flag, heading) in &h.flags {
                assert!(
                    flag == "--help" || heading != "Options",
                    "{path:?}: {flag} is under the catch-all Options heading:\n{}",
                    h.text
                );
            }
        }
    }
}

#[test]
fn train_and_eval_help_list_every_data_kind_under_its_heading() {
    let rows = "Rows (SVMlight/CSV)";
    let pairs = "Pairwise preferences";
    let orders = "Sample orders (supervised ordering)";
    let edges = "Edges and nodes (Kronecker learners)";
    let prefs = "Preferences between items (preference GPs)";
    let train = help(&["train"]);
    for (flag, heading) in [
        ("--prefs", prefs),
        ("--relation", prefs),
        ("--relation-groups", prefs),
        ("--inductive", "Output"),
        ("--data", rows),
        ("--format", rows),
        ("--label-col", rows),
        ("--pairs", pairs),
        ("--items", orders),
        ("--orders", orders),
        ("--reduce", orders),
        ("--edges", edges),
        ("--nodes", edges),
        ("--nodes-u", edges),
        ("--nodes-v", edges),
        ("--kernel-u", edges),
        ("--kernel-v", edges),
        ("--symmetrize", edges),
        ("--pair-kernel", "Learner"),
        ("--max-iter", "Learner"),
        ("--algo", "Learner"),
        ("--kernel", "Learner"),
        ("--lambda", "Learner"),
        ("--components", "Learner"),
        ("--cv", "Cross-validation"),
        ("--metric", "Cross-validation"),
        ("--output", "Output"),
        ("--precision", "Output"),
    ] {
        assert_eq!(train.flags.get(flag).map(String::as_str), Some(heading), "train --help: {flag}:\n{}", train.text);
    }
    let eval = help(&["eval"]);
    for (flag, heading) in [
        ("--model", "Model"),
        ("--data", rows),
        ("--pairs", pairs),
        ("--items", orders),
        ("--orders", orders),
        ("--edges", edges),
    ] {
        assert_eq!(eval.flags.get(flag).map(String::as_str), Some(heading), "eval --help: {flag}:\n{}", eval.text);
    }
    for cmd in ["score", "eval", "rank", "export", "inspect"] {
        let h = help(&[cmd]);
        assert!(h.text.contains("-m, --model"), "{cmd} --help lacks -m/--model:\n{}", h.text);
    }
}

/// Every visible subcommand's `--help` ends with two or three examples of
/// itself; `--metric` lists the metric names wherever it is; `-k` is
/// `-k, --k` wherever it is; `inspect`'s usage shows both spellings of its
/// model path.
#[test]
fn every_subcommand_help_ends_with_examples_and_shares_spellings() {
    for (path, h) in walk() {
        if path.len() != 1 || path[0] == "plot-lines" {
            continue;
        }
        let cmd = format!("ranklet {}", path[0]);
        let tail: Vec<&str> =
            h.text.trim_end().rsplit_once("\nExamples:\n").map_or(vec![], |(_, t)| t.lines().collect());
        assert!((2..=3).contains(&tail.len()), "{cmd} --help does not end with 2–3 examples:\n{}", h.text);
        for l in tail {
            assert!(l.starts_with(&format!("  {cmd} ")), "{cmd}: example `{l}` is not of {cmd}");
        }
        if h.flags.contains_key("--metric") {
            assert!(h.text.contains("ndcg[@K], map, pairerror"), "{cmd} --help does not list the metrics:\n{}", h.text);
        }
        if h.text.contains("\n  -k") {
            assert!(h.text.contains("-k, --k <K>"), "{cmd}: -k without --k:\n{}", h.text);
        }
    }
    assert!(help(&["inspect"]).text.contains("Usage: ranklet inspect [OPTIONS] <-m MODEL | MODEL>"));
}
