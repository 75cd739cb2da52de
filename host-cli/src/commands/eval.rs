//! `ranklet eval`: metrics of a model on a data file (lines
//! `metric<TAB>value`).

use std::path::PathBuf;

use clap::Args;
use ranklet_core::format::ModelView;
use ranklet_core::metrics::Correlation;

use crate::commands::score::ScoreArgs;
use crate::error::CliError;
use crate::input::OrderData;
use crate::metric::Metric;
use crate::model_io::{read_model, score_items, score_rows};
use crate::ordering::mean_corr;

/// `ranklet eval`.
#[derive(Args, Debug)]
pub struct EvalArgs {
    #[command(flatten)]
    pub score: ScoreArgs,
    /// Metrics, comma-separated (default: disagreement,cindex,kendall, or
    /// pairerror with --pairs). ndcg and map need graded labels ≥ 0.
    #[arg(long)]
    pub metric: Option<String>,
}

/// `ranklet eval`.
pub fn eval(a: EvalArgs) -> Result<(), CliError> {
    let bytes = read_model(&a.score.model)?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let (ds, pairs) = a.score.data.read(a.score.data.is_csv().then_some(view.dim()))?;
    let scores = score_rows(&view, &ds, &a.score.data.data)?;
    // NDCG and MAP need graded (non-negative) relevance labels, so they are
    // computed on request only.
    let default = if pairs.is_some() { "pairerror" } else { "disagreement,cindex,kendall" };
    let metrics = Metric::parse_list(a.metric.as_deref().unwrap_or(default))?;
    let g = ds.query_groups();
    let labels: Vec<f64> = g.rows().iter().map(|&r| ds.labels()[r]).collect();
    let preds: Vec<f64> = g.rows().iter().map(|&r| scores[r]).collect();
    // Every metric is computed before anything is printed: a metric that
    // cannot be evaluated leaves stdout empty.
    let mut lines = Vec::with_capacity(metrics.len());
    for m in metrics {
        let v = match &pairs {
            Some(p) => m.eval_pairs(&scores, p),
            None => m.eval_labels(&labels, &preds, g.query_ptr()),
        }
        .map_err(|e| CliError::input(format!("{}: {}", a.score.data.data.display(), e.msg)))?;
        lines.push(format!("{}\t{v:.6}", m.name()));
    }
    println!("{}", lines.join("\n"));
    Ok(())
}

/// `ranklet eval -m MODEL --items I --orders O`.
#[derive(Args, Debug)]
pub struct OrderEvalArgs {
    /// Model file (.rkl).
    #[arg(short, long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub data: OrderData,
    /// Metrics, comma-separated: spearman, kendall (Kendall τ-b).
    #[arg(long, default_value = "spearman,kendall")]
    pub metric: String,
}

/// `ranklet eval --items … --orders …`: prints `metric<TAB>value` lines.
pub fn eval_orders(a: OrderEvalArgs) -> Result<(), CliError> {
    let mut metrics_wanted = Vec::new();
    for m in a.metric.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        metrics_wanted.push(match m {
            "spearman" => ("spearman", Correlation::SpearmanRho),
            "kendall" => ("kendall", Correlation::KendallTauB),
            _ => return Err(CliError::input(format!("--metric: unknown '{m}' (spearman, kendall)"))),
        });
    }
    if metrics_wanted.is_empty() {
        return Err(CliError::input("--metric: empty"));
    }
    let bytes = read_model(&a.model)?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let data = a.data.load()?;
    let scores = score_items(&view, &data.items, &a.data.items)?;
    for (name, c) in metrics_wanted {
        let q = mean_corr(&scores, &data, c)?;
        println!("{name}\t{:.6}", q.value);
        if q.queries_skipped > 0 {
            eprintln!("ranklet: note: {name}: {} orders skipped (all items scored equal)", q.queries_skipped);
        }
    }
    Ok(())
}
