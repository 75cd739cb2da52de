//! `ranklet eval`: metrics of a model (lines `metric<TAB>value`) on rows
//! (`--data`, optionally `--pairs`) or on sample orders (`--items
//! --orders`: mean Spearman ρ / Kendall τ-b over the orders).

use std::path::Path;

use clap::Args;
use ranklet::args::{heading, parse_metric_list, MetricList};
use ranklet::data::{read_edges, EdgeOptions};
use ranklet::error::CliError;
use ranklet::family::kron::{EdgeMetric, PairModel, ScoringNodes};
use ranklet::family::pref::{PrefMetric, PrefModel};
use ranklet::metric::Metric;
use ranklet::model_io::{quant_note, read_model, score_items, score_rows, warn_width};
use ranklet::ordering::mean_corr;
use ranklet_core::format::ModelView;

use crate::cli_output::{note, warn};
use crate::input::{score_prefs, DataArgs, Loaded, ModelArgs};
use ranklet::mem::PairCost;

/// `ranklet eval` arguments. Flags of one data kind are refused with the
/// other (clap names both flags; exit 2).
#[derive(Args, Debug)]
pub struct EvalArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub data: DataArgs,
    /// Metrics, comma-separated.
    #[arg(
        long,
        value_parser = parse_metric_list,
        help_heading = heading::OUTPUT,
        help = concat!(
            "Metrics, comma-separated, of ",
            ranklet::metric_names!(),
            " (default: disagreement,cindex,kendall, or pairerror with --pairs or --prefs, or spearman,kendall with \
             --items). ndcg and map need graded labels ≥ 0; sample orders take spearman and kendall (τ-b); \
             preference GPs with --prefs take pairerror, auc (of P(w ≻ l) against P(l ≻ w)) and logloss \
             (−mean log P(w ≻ l)); e.g. --metric ndcg@10,kendall"
        )
    )]
    pub metric: Option<MetricList>,
    /// Rows only: also compare the model's scores with those of this model
    /// on the same rows (e.g. a quantised model against the float model it
    /// was exported from): prints `kendall_vs_reference` (τ-b over all rows,
    /// ignoring queries), and for a quantised model `max_error_vs_reference`
    /// (max |scale·S − reference score|), its `error_bound` and
    /// `saturated_inputs` (inputs beyond the calibrated ranges: count and
    /// share of rows × features).
    #[arg(long, value_name = "MODEL", help_heading = heading::OUTPUT)]
    pub reference: Option<std::path::PathBuf>,
}

/// `ranklet eval`.
pub fn eval(a: EvalArgs) -> Result<(), CliError> {
    if a.data.graph.edges.is_some() {
        return eval_edges(&a);
    }
    if a.data.prefs.prefs.is_some() {
        return eval_prefs(&a);
    }
    match a.data.orders.paths() {
        Some((items, orders)) => eval_orders(&a, items, orders),
        None => eval_rows(&a),
    }
}

/// `ranklet eval --data …`.
fn eval_rows(a: &EvalArgs) -> Result<(), CliError> {
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let data_path = a.data.rows.path()?;
    let ds = a.data.rows.read(a.data.rows.is_csv().then_some(view.dim()))?;
    // Per pair: the pair (24 bytes) and its rows for pairerror (16).
    let cost = PairCost {
        bytes: 40,
        holds: "the pairs and their rows (pairerror)",
        way_out: "evaluate the pairs in parts (the error rate of the whole is the pair-weighted mean of the parts')",
    };
    let pairs = a.data.pairs.read(ds.n_rows(), &cost)?;
    warn(warn_width(view.dim(), &ds, data_path));
    let scores = score_rows(&view, &ds, data_path, view.element_type())?;
    note(quant_note(&view, &ds, data_path));
    // NDCG and MAP need graded (non-negative) relevance labels, so they are
    // computed on request only.
    let metrics = match &a.metric {
        Some(m) => m.0.clone(),
        None if pairs.is_some() => vec![Metric::PairError],
        None => vec![Metric::Disagreement, Metric::Cindex, Metric::Kendall],
    };
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
        .map_err(|e| CliError::input(format!("{}: {}", data_path.display(), e.msg)))?;
        lines.push(format!("{}\t{v:.6}", m.name()));
    }
    if let Some(r) = &a.reference {
        let rbytes = read_model(r)?;
        let rview = ModelView::new_checked(&rbytes).map_err(|e| CliError::input(e.to_string()))?;
        let rscores = score_rows(&rview, &ds, data_path, rview.element_type())?;
        note(quant_note(&rview, &ds, data_path));
        let n = scores.len();
        let tau = Metric::Kendall
            .eval_labels(&rscores, &scores, &[0, n])
            .map_err(|e| CliError::input(format!("--reference {}: {}", r.display(), e.msg)))?;
        lines.push(format!("kendall_vs_reference\t{tau:.6}"));
        if let Some(q) = view.quant() {
            let err = scores.iter().zip(&rscores).map(|(s, f)| (q.scale() * s - f).abs()).fold(0.0, f64::max);
            lines.push(format!("max_error_vs_reference\t{err:e}"));
            lines.push(format!("error_bound\t{:e}", q.error_bound()));
            let (sat, total) = ranklet::model_io::saturated_inputs(&q, &ds);
            lines.push(format!("saturated_inputs\t{sat}\t{:.6}", sat as f64 / total.max(1) as f64));
        }
    }
    println!("{}", lines.join("\n"));
    Ok(())
}

/// `ranklet eval --prefs …` with a preference-GP model: `pairerror`
/// (default), `auc`, `logloss` on the held-out preferences (ties dropped).
fn eval_prefs(a: &EvalArgs) -> Result<(), CliError> {
    let names: Vec<String> = match &a.metric {
        Some(m) => m.0.iter().map(|m| m.name()).collect(),
        None => vec!["pairerror".into()],
    };
    let metrics = names.iter().map(|n| PrefMetric::parse(n)).collect::<Result<Vec<_>, _>>()?;
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let model = PrefModel::of(&view).ok_or_else(|| {
        CliError::input(format!(
            "{}: --prefs evaluates preference-GP models (train --algo pref-gp|xpgp|diff-gp); use --pairs for row models",
            a.model.model.display()
        ))
    })?;
    let s = score_prefs(&model, &a.data)?;
    s.notes.iter().for_each(|n| note(Some(n)));
    let mut lines = Vec::with_capacity(metrics.len());
    for m in metrics {
        let v = m.eval(&s.mean, &s.pairs, &s.prob, &s.log_prob)?;
        lines.push(format!("{}\t{v:.6}", m.name()));
    }
    println!("{}", lines.join("\n"));
    Ok(())
}

/// `ranklet eval --items … --orders …`: mean correlation with the orders.
fn eval_orders(a: &EvalArgs, items: &Path, orders: &Path) -> Result<(), CliError> {
    let metrics = match &a.metric {
        Some(m) => m.0.clone(),
        None => vec![Metric::Spearman, Metric::Kendall],
    };
    let mut metrics_wanted = Vec::with_capacity(metrics.len());
    for m in metrics {
        let c = m.correlation().ok_or_else(|| {
            CliError::input(format!("--metric: unknown '{}' for sample orders (spearman, kendall)", m.name()))
        })?;
        metrics_wanted.push((m.name(), c));
    }
    if metrics_wanted.is_empty() {
        return Err(CliError::input("--metric: empty"));
    }
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let data = Loaded::read(items, orders)?;
    let scores = score_items(&view, &data.items, items)?;
    for (name, c) in metrics_wanted {
        let q = mean_corr(&scores, &data, c)?;
        println!("{name}\t{:.6}", q.value);
        if q.queries_skipped > 0 {
            eprintln!("ranklet: note: {name}: {} orders skipped (all items scored equal)", q.queries_skipped);
        }
    }
    Ok(())
}

/// `ranklet eval --edges …`: conditional metrics of a pair model, per
/// conditioning (first) node, averaged (`condrankloss` by default; `auc`
/// for 0/1 labels).
fn eval_edges(a: &EvalArgs) -> Result<(), CliError> {
    let path = a.data.graph.edges.as_deref().ok_or_else(|| CliError::input("--edges is required"))?;
    let metrics = match &a.metric {
        Some(m) => m.0.iter().map(|&m| EdgeMetric::from_metric(m)).collect::<Result<Vec<_>, _>>()?,
        None => vec![EdgeMetric::CondRankLoss],
    };
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let model = PairModel::from_view(&view)?;
    let nodes = ScoringNodes::read(&a.data.graph.files(), &model, &view)?;
    let edges = read_edges(path, &EdgeOptions { one_domain: model.one_domain, ..EdgeOptions::default() })?;
    let scores = nodes.score_edges(&view, &model, &edges)?;
    let us: Vec<usize> = edges.edges().iter().map(|&(u, _)| u).collect();
    let mut lines = Vec::with_capacity(metrics.len());
    for m in metrics {
        if m == EdgeMetric::Auc(0.0) {
            if let Some(e) = edges.labels().iter().position(|&y| y != 0.0 && y != 1.0) {
                return Err(CliError::input(format!(
                    "{}:{}: label {} — auc needs 0/1 labels (or auc:T for a threshold)",
                    path.display(),
                    edges.source_line(e),
                    edges.labels()[e]
                )));
            }
        }
        let (v, used) =
            m.eval(&us, edges.labels(), &scores).map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
        lines.push(format!("{}\t{v:.6}", m.name()));
        eprintln!("ranklet: {}: averaged over {used} conditioning nodes", m.name());
    }
    println!("{}", lines.join("\n"));
    Ok(())
}
