//! `ranklet online-update`: applies recorded pairwise feedback to an
//! on-device learner state on the host, exactly as a device does (the same
//! core learner, in `f32`), and writes the state it ends in. Starts from a
//! linear prior (with `--lambda`) or continues a saved state (kind
//! online-rankrls, e.g. uploaded from a device). The tests compare the
//! emulated device's weights with this command's.

use std::path::PathBuf;

use clap::Args;
use ranklet::args::heading;
use ranklet::error::{write_atomic, CliError};
use ranklet::model_io::crc_of;
use ranklet_core::format::{ElementType, ModelKind, ModelSpec, ModelView};
use ranklet_core::learn::online::OnlineRankRls;

use crate::input::{ModelArgs, PairsArgs, RowsArgs};
use ranklet::mem::PairCost;

/// `ranklet online-update` arguments.
#[derive(Args, Debug)]
pub struct OnlineUpdateArgs {
    /// A linear prior, or a saved online state to continue.
    #[command(flatten)]
    pub model: ModelArgs,
    /// The items the feedback refers to (rows of --data).
    #[command(flatten)]
    pub rows: RowsArgs,
    /// The feedback, in order: `winner loser [magnitude]` row numbers of
    /// --data (magnitude 0 lines are skipped, as a device would not send
    /// them).
    #[command(flatten)]
    pub pairs: PairsArgs,
    /// Ridge λ towards the prior (required with a linear prior; a saved
    /// state keeps its own).
    #[arg(long)]
    pub lambda: Option<f32>,
    /// Output state file (.rkl, kind online-rankrls, f32).
    #[arg(short, long, help_heading = heading::OUTPUT)]
    pub output: PathBuf,
}

/// `ranklet online-update`.
pub fn online_update(a: OnlineUpdateArgs) -> Result<(), CliError> {
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let data_path = a.rows.path()?.to_path_buf();
    let ds = a.rows.read_unlabelled(a.rows.is_csv().then_some(view.dim()))?;
    // Per pair: the pair (24 bytes); the learner's state does not grow.
    let cost = PairCost {
        bytes: 24,
        holds: "the pairs",
        way_out: "give the pairs in parts, one online-update per part, each from the state the previous one wrote",
    };
    let pairs = a.pairs.read(ds.n_rows(), &cost)?.ok_or_else(|| CliError::input("--pairs is required"))?;
    let d = view.dim();
    if ds.n_features() > d {
        return Err(CliError::input(format!(
            "{}: {} features, the model has {d}",
            data_path.display(),
            ds.n_features()
        )));
    }
    let row = |i: usize| -> Vec<f32> {
        let mut x = vec![0f32; d];
        let (cols, vals) = ds.row(i);
        for (&j, &v) in cols.iter().zip(vals) {
            x[j as usize] = v as f32;
        }
        x
    };
    let mut storage = vec![0f32; OnlineRankRls::<f32>::storage_len(d)];
    let (mut learner, offset) = match view.kind() {
        ModelKind::Linear => {
            let lambda = a.lambda.ok_or_else(|| CliError::input("--lambda is required with a linear prior"))?;
            OnlineRankRls::from_linear_model(&mut storage, &view, lambda, crc_of(&bytes))
                .map_err(|e| CliError::input(format!("{}: {e}", a.model.model.display())))?
        }
        ModelKind::OnlineRankRls => {
            let o = view.online().ok_or_else(|| CliError::failure("online state without its view"))?;
            if a.lambda.is_some_and(|l| l as f64 != o.lambda()) {
                return Err(CliError::input(format!(
                    "--lambda: the saved state has lambda {}, which it keeps",
                    o.lambda()
                )));
            }
            let l = OnlineRankRls::restore(&mut storage, &o)
                .map_err(|e| CliError::input(format!("{}: {e}", a.model.model.display())))?;
            (l, o.offset())
        }
        _ => {
            return Err(CliError::input(format!("{}: not a linear model or an online state", a.model.model.display())))
        }
    };
    let pairs_path = a.pairs.pairs.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
    for (k, p) in pairs.iter().enumerate() {
        if p.magnitude == 0.0 {
            continue;
        }
        learner
            .observe(&row(p.winner), &row(p.loser), p.magnitude as f32)
            .map_err(|e| CliError::input(format!("{pairs_path}: pair {}: {e}", k + 1)))?;
    }
    let spec = ModelSpec::new(learner.to_model(offset), ElementType::F32);
    let mut out = vec![0u8; spec.buffer_len()];
    spec.emit(&mut out).map_err(|e| CliError::failure(format!("state: {e}")))?;
    write_atomic(&a.output, &out)?;
    eprintln!("wrote {} ({} observations in all)", a.output.display(), learner.count());
    Ok(())
}
