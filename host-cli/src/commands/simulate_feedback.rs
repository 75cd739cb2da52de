//! `ranklet simulate-feedback`: replays users who answer pairwise
//! questions by a hidden true ranking, to the on-device online RankRLS
//! learner started from a host-trained prior, and prints the held-out
//! pair error (disagreement) against the number of answers, averaged
//! over users, for the active next-pair rule and for random pairs
//! (`ranklet::feedback` has the protocol).

use std::path::{Path, PathBuf};

use clap::{ArgGroup, Args};
use indicatif::{ProgressBar, ProgressStyle};
use ranklet::error::{write_atomic, CliError};
use ranklet::feedback::{answers_to_reach, mean_std, Curve, Rule, Setup};

use crate::input::{ModelArgs, RowsArgs};
use crate::plot::{draw, Figure, Series};

/// `ranklet simulate-feedback` arguments.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["data"])))]
pub struct SimulateFeedbackArgs {
    /// The prior: a linear model (e.g. `ranklet train --algo rankrls`)
    /// over the items' features.
    #[command(flatten)]
    pub model: ModelArgs,
    /// The items the simulated users compare.
    #[command(flatten)]
    pub rows: RowsArgs,
    /// The hidden true scores, one number per line per item (`#`
    /// comments); default: the labels of --data.
    #[arg(long)]
    pub oracle: Option<PathBuf>,
    /// Questions per user.
    #[arg(long)]
    pub rounds: usize,
    /// Ask by the next-pair rule (paper 001 §5). With --random, or with
    /// neither, both rules run on the same users.
    #[arg(long)]
    pub active: bool,
    /// Ask uniformly random pairs of the candidates.
    #[arg(long)]
    pub random: bool,
    /// Ridge λ pulling the learner towards the prior.
    #[arg(long, default_value_t = 1.0)]
    pub lambda: f32,
    /// Simulated users (each its own test/pool split and questions).
    #[arg(long, default_value_t = 20)]
    pub users: usize,
    /// Record the held-out error after every this many answers.
    #[arg(long, default_value_t = 10)]
    pub every: usize,
    /// Items drawn from the pool for each question.
    #[arg(long, default_value_t = 32)]
    pub candidates: usize,
    /// Fraction of the items held out to measure the error.
    #[arg(long, default_value_t = 0.5)]
    pub test_frac: f64,
    /// Seed of the users' splits and questions.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the learning curves as a PNG.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write the state the first user's learner ends in (the first rule
    /// run) as a .rkl file (kind online-rankrls; `ranklet inspect`/`score`
    /// read it).
    #[arg(long)]
    pub save_state: Option<PathBuf>,
}

/// Reads one number per line (blank lines and `#` comments skipped).
fn read_oracle(path: &Path, n: usize) -> Result<Vec<f64>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
    let mut out = Vec::with_capacity(n);
    for (ln, line) in text.lines().enumerate() {
        let t = line.split('#').next().unwrap_or("").trim();
        if t.is_empty() {
            continue;
        }
        let v: f64 =
            t.parse().ok().filter(|v: &f64| v.is_finite()).ok_or_else(|| {
                CliError::input(format!("{}:{}: '{t}' is not a finite number", path.display(), ln + 1))
            })?;
        out.push(v);
    }
    if out.len() != n {
        return Err(CliError::input(format!("{}: {} scores for {n} items", path.display(), out.len())));
    }
    Ok(out)
}

/// `ranklet simulate-feedback`.
pub fn simulate_feedback(a: SimulateFeedbackArgs) -> Result<(), CliError> {
    let prior = a.model.read()?;
    let ds = a.rows.read(None)?;
    let (n, d) = (ds.n_rows(), ds.n_features());
    let oracle = match &a.oracle {
        Some(p) => read_oracle(p, n)?,
        None => ds.labels().to_vec(),
    };
    let dense = ds.to_dense(usize::MAX).ok_or_else(|| CliError::input("the items do not fit in memory densely"))?;
    let x: Vec<f32> = dense.iter().map(|&v| v as f32).collect();
    if x.iter().any(|v| !v.is_finite()) {
        return Err(CliError::input(format!("{}: a feature overflows f32", a.rows.path()?.display())));
    }
    if a.users == 0 || a.rounds == 0 {
        return Err(CliError::input("--users and --rounds must be at least 1"));
    }
    let setup = Setup {
        x: &x,
        d,
        oracle: &oracle,
        prior: &prior,
        lambda: a.lambda,
        rounds: a.rounds,
        every: a.every,
        candidates: a.candidates,
        test_frac: a.test_frac,
    };
    setup.check()?;
    let rules: Vec<Rule> = match (a.active, a.random) {
        (true, false) => vec![Rule::Active],
        (false, true) => vec![Rule::Random],
        _ => vec![Rule::Random, Rule::Active],
    };
    let bar = ProgressBar::new((rules.len() * a.users) as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} users {elapsed}")
            .unwrap_or(ProgressStyle::default_bar()),
    );
    bar.set_prefix("simulate-feedback");
    let mut results: Vec<(Rule, Vec<Curve>)> = Vec::new();
    let mut tie_share = Vec::new();
    let mut state = None;
    for &rule in &rules {
        let mut curves = Vec::with_capacity(a.users);
        let mut ties = 0;
        for u in 0..a.users {
            let keep = a.save_state.is_some() && state.is_none();
            let run = setup.run(rule, a.seed.wrapping_mul(1_000_003).wrapping_add(u as u64), keep)?;
            if run.state.is_some() {
                state = run.state;
            }
            ties += run.ties;
            curves.push(run.curve);
            bar.inc(1);
        }
        tie_share.push((rule, ties as f64 / (a.users * a.rounds) as f64));
        results.push((rule, curves));
    }
    bar.finish_and_clear();

    // The table: answers, then per rule the mean and mean ± standard error.
    let stats: Vec<(Rule, Vec<f64>, Vec<f64>)> = results
        .iter()
        .map(|(r, c)| {
            let (m, s) = mean_std(c);
            let se: Vec<f64> = s.iter().map(|v| v / (c.len() as f64).sqrt()).collect();
            (*r, m, se)
        })
        .collect();
    let points = stats.iter().map(|(_, m, _)| m.len()).min().unwrap_or(0);
    let answers: Vec<f64> = (0..points).map(|t| (t * a.every) as f64).collect();
    let mut head = vec!["answers".to_string()];
    for (r, _, _) in &stats {
        head.extend([r.name().to_string(), format!("{}:lo", r.name()), format!("{}:hi", r.name())]);
    }
    let mut out = vec![head.join("\t")];
    for t in 0..points {
        let mut row = vec![format!("{}", t * a.every)];
        for (_, m, se) in &stats {
            row.extend([format!("{:.6}", m[t]), format!("{:.6}", m[t] - se[t]), format!("{:.6}", m[t] + se[t])]);
        }
        out.push(row.join("\t"));
    }
    println!("{}", out.join("\n"));

    // The summary: how many answers the active rule needs to reach the
    // random rule's final error.
    let find = |r: Rule| stats.iter().find(|s| s.0 == r);
    if let (Some(rand), Some(act)) = (find(Rule::Random), find(Rule::Active)) {
        let target = *rand.1.last().unwrap_or(&f64::NAN);
        let last = (points.saturating_sub(1)) * a.every;
        match answers_to_reach(&act.1, target, a.every) {
            Some(k) => eprintln!(
                "random: {target:.4} after {last} answers; active reaches it after {k} ({:.2}×), ends at {:.4}",
                k as f64 / last.max(1) as f64,
                act.1.last().copied().unwrap_or(f64::NAN)
            ),
            None => eprintln!(
                "random: {target:.4} after {last} answers; active does not reach it (ends at {:.4})",
                act.1.last().copied().unwrap_or(f64::NAN)
            ),
        }
    }

    for (r, share) in &tie_share {
        eprintln!(
            "{}: {:.1} % of the questions were answered \"same\" (equal oracle scores; nothing learned)",
            r.name(),
            100.0 * share
        );
    }

    if let Some(path) = &a.plot {
        let series = stats
            .iter()
            .map(|(r, m, se)| Series {
                name: format!("{} ({} users)", r.name(), a.users),
                x: answers.clone(),
                y: m.clone(),
                band: Some((
                    m.iter().zip(se).map(|(m, s)| m - s).collect(),
                    m.iter().zip(se).map(|(m, s)| m + s).collect(),
                )),
                markers: false,
            })
            .collect();
        let fig = Figure {
            title: format!("held-out pair error vs answers (λ = {}, {} candidates)", a.lambda, a.candidates),
            xlabel: "answers".into(),
            ylabel: "held-out disagreement".into(),
            log_x: false,
            series,
            highlight: None,
            size: (900, 560),
        };
        draw(path, &fig)?;
        eprintln!("wrote {}", path.display());
    }
    if let (Some(path), Some(bytes)) = (&a.save_state, state) {
        write_atomic(path, &bytes)?;
        eprintln!("wrote {} ({} bytes)", path.display(), bytes.len());
    }
    Ok(())
}
