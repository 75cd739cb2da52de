//! `ranklet score`: one score per row of a data file, or per edge of an
//! edges file (pair models), in input order.
//!
//! Rows are scored in the model's element type unless `--precision` says
//! otherwise: an `f64` model reads the rows' `f64` values, computes in `f64`
//! and prints the shortest decimal that parses back to the same `f64`
//! (Rust's `Display`), so the host scores equal the learner's predictions;
//! `--precision f32` (the default of an `f32` model) is the device path,
//! `f32` inputs and `f32` scores, printed as the shortest decimal of the
//! `f32`.

use clap::{ArgGroup, Args};
use ranklet::args::{heading, Precision};
use ranklet::data::{read_edges, EdgeOptions};
use ranklet::error::CliError;
use ranklet::family::kron::{PairModel, ScoringNodes};
use ranklet::model_io::{quant_note, score_rows, score_rows_quant, warn_width};
use ranklet_core::format::{ElementType, ModelView, PrefInductiveView};

use crate::cli_output::{note, warn};
use crate::cli_values::{self, lib_enum};
use crate::input::{EdgesArgs, ModelArgs, RowsArgs};

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
    /// Arithmetic of row scoring: f64 (f64 inputs, round-trippable f64
    /// scores) or f32 (the device path: f32 inputs and scores). Default: the
    /// model's element type.
    #[arg(long, value_parser = lib_enum::<cli_values::Precision>(), conflicts_with = "edges", help_heading = heading::OUTPUT)]
    pub precision: Option<Precision>,

    /// Inductive preference GPs: print `mean<TAB>sd` of each row's latent
    /// utility (the posterior standard deviation, 000 §5) instead of the
    /// mean alone.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub sd: bool,
}

/// `ranklet score`.
pub fn score(a: ScoreArgs) -> Result<(), CliError> {
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    if let Some(gp) = view.pref_inductive() {
        return score_pref(&a, &gp, view.dim());
    }
    if a.sd {
        return Err(CliError::input("--sd applies to inductive preference GPs (train --inductive)"));
    }
    if view.pref_gp().is_some() || view.pref_lowrank().is_some() {
        return Err(CliError::input(format!(
            "{}: a preference GP over a fixed item set scores its own items: see `ranklet inspect` (posterior means) or `ranklet suggest`",
            a.model.model.display()
        )));
    }
    let precision = a.precision.map_or(view.element_type(), Precision::element);
    let rows_f32 = a.graph.edges.is_none() && precision == ElementType::F32;
    let scores = match &a.graph.edges {
        Some(edges_path) => {
            let model = PairModel::from_view(&view)?;
            let nodes = ScoringNodes::read(&a.graph.files(), &model, &view)?;
            let edges =
                read_edges(edges_path, &EdgeOptions { one_domain: model.one_domain, ..EdgeOptions::default() })?;
            nodes.score_edges(&view, &model, &edges)?
        }
        None if view.quant().is_some() => {
            // A quantised model: its exact integer scores.
            let ds = a.rows.read_unlabelled(a.rows.is_csv().then_some(view.dim()))?;
            warn(warn_width(view.dim(), &ds, a.rows.path()?));
            let scores = score_rows_quant(&view, &ds, a.rows.path()?)?;
            note(quant_note(&view, &ds, a.rows.path()?));
            return print_lines(scores);
        }
        None => {
            let ds = a.rows.read_unlabelled(a.rows.is_csv().then_some(view.dim()))?;
            warn(warn_width(view.dim(), &ds, a.rows.path()?));
            score_rows(&view, &ds, a.rows.path()?, precision)?
        }
    };
    if rows_f32 {
        // An f32 score is printed as the f32 it is (shortest round trip).
        print_lines(scores.into_iter().map(|s| s as f32).collect())
    } else {
        print_lines(scores)
    }
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

/// `ranklet score` with an inductive preference GP (kind 9): the posterior
/// mean (and with `--sd` the standard deviation) of each row's latent
/// utility, in input order.
fn score_pref(a: &ScoreArgs, gp: &PrefInductiveView<'_>, dim: usize) -> Result<(), CliError> {
    let path = a.rows.path()?;
    let ds = a.rows.read_unlabelled(Some(dim))?;
    if ds.n_features() > dim {
        return Err(CliError::input(format!("{}: {} features, the model has {dim}", path.display(), ds.n_features())));
    }
    let mut x = vec![0.0; dim];
    let mut work = vec![0.0; gp.predict_workspace_len()];
    let mut out = String::new();
    for i in 0..ds.n_rows() {
        x.iter_mut().for_each(|v| *v = 0.0);
        let (c, v) = ds.row(i);
        c.iter().zip(v).for_each(|(&c, &v)| x[c as usize] = v);
        let (m, var) = gp
            .predict(&x, &mut work)
            .map_err(|e| CliError::input(format!("{}:{}: {e}", path.display(), ds.source_line(i))))?;
        if a.sd {
            out.push_str(&format!("{m}\t{}\n", var.sqrt()));
        } else {
            out.push_str(&format!("{m}\n"));
        }
    }
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(())
}
