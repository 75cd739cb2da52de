//! `ranklet score`: one score per row of a data file, or per edge of an
//! edges file (pair models), in input order.

use clap::{ArgGroup, Args};
use ranklet_core::format::ModelView;

use crate::data::{read_edges, EdgeOptions};
use crate::error::CliError;
use crate::family::kron::{PairModel, ScoringNodes};
use crate::input::{EdgesArgs, RowsArgs};
use crate::model_io::{score_rows, ModelArgs};

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
            let edges =
                read_edges(edges_path, &EdgeOptions { one_domain: model.one_domain, ..EdgeOptions::default() })?;
            nodes.score_edges(&view, &model, &edges)?
        }
        None => {
            let ds = a.rows.read(a.rows.is_csv().then_some(view.dim()))?;
            score_rows(&view, &ds, a.rows.path()?)?
        }
    };
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
