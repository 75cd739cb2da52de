//! `ranklet score`: one score per row of a data file, in input order.

use clap::{ArgGroup, Args};
use ranklet_core::format::ModelView;

use crate::error::CliError;
use crate::input::RowsArgs;
use crate::model_io::{score_rows, ModelArgs};

/// `ranklet score` arguments: the model and the rows to score.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["data"])))]
pub struct ScoreArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub rows: RowsArgs,
}

/// `ranklet score`.
pub fn score(a: ScoreArgs) -> Result<(), CliError> {
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let ds = a.rows.read(a.rows.is_csv().then_some(view.dim()))?;
    let scores = score_rows(&view, &ds, a.rows.path()?)?;
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
