//! `ranklet score`: one score per row of a data file, or per edge of an
//! edges file (pair models), in input order.

use clap::{ArgGroup, Args};
use ranklet_core::format::ModelView;

use crate::data::{read_edges, EdgeOptions};
use crate::error::CliError;
use crate::family::kron::{PairModel, ScoringNodes};
use crate::input::{EdgesArgs, RowsArgs};
use crate::model_io::{score_rows, score_rows_quant, ModelArgs};

/// `ranklet score` arguments: the model and the rows (or edges) to score.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["data", "edges"])))]
#[command(group(
    ArgGroup::new("graph")
        .args(["edges", "nodes", "nodes_u", "nodes_v", "kernel_u", "kernel_v", "symmetrize"])
        .multiple(true)
        .conflicts_with_all(["data", "format", "label_col", "qid_col", "num_features"])
))]
pub struct ScoreArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub rows: RowsArgs,
    #[command(flatten)]
    pub graph: EdgesArgs,
}

/// `ranklet score`.
pub fn score(a: ScoreArgs) -> Result<(), CliError> {
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let scores = match &a.graph.edges {
        Some(edges_path) => {
            let model = PairModel::from_view(&view)?;
            let nodes = ScoringNodes::read(&a.graph, &model, &view)?;
            let edges = read_edges(edges_path, &EdgeOptions { one_domain: model.one_domain })?;
            nodes.score_edges(&view, &model, &edges)?
        }
        None if view.quant().is_some() => {
            // A quantised model: its exact integer scores.
            let ds = a.rows.read(a.rows.is_csv().then_some(view.dim()))?;
            let scores = score_rows_quant(&view, &ds, a.rows.path()?)?;
            return print_lines(scores);
        }
        None => {
            let ds = a.rows.read(a.rows.is_csv().then_some(view.dim()))?;
            score_rows(&view, &ds, a.rows.path()?)?
        }
    };
    print_lines(scores)
}

/// One value per line on stdout; a broken pipe ends quietly.
fn print_lines<T: std::fmt::Display>(scores: Vec<T>) -> Result<(), CliError> {
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for s in scores {
        if writeln!(out, "{s}").is_err() {
            return Ok(()); // broken pipe: the reader has gone, not an error
        }
    }
    let _ = out.flush();
    Ok(())
}
