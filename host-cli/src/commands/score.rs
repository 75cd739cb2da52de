//! `ranklet score`: one score per row of a data file, in input order.

use std::path::PathBuf;

use clap::Args;
use ranklet_core::format::ModelView;

use crate::error::CliError;
use crate::input::DataArgs;
use crate::model_io::{read_model, score_rows};

/// `ranklet score` / `ranklet eval` arguments shared: the model.
#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// Model file (.rkl).
    #[arg(short, long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
}

/// `ranklet score`.
pub fn score(a: ScoreArgs) -> Result<(), CliError> {
    let bytes = read_model(&a.model)?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let (ds, _) = a.data.read(a.data.is_csv().then_some(view.dim()))?;
    let scores = score_rows(&view, &ds, &a.data.data)?;
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
