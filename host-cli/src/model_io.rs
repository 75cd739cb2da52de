//! Model files: reading and validating one, serialising a fitted model, and
//! scoring data through the device parser.

use std::path::{Path, PathBuf};

use clap::Args;
use ranklet_core::format::{self, field, ElementType, ModelKind, ModelSpec, ModelView};
use ranklet_core::kernel::Kernel;

use crate::args::heading;
use crate::data::orders::Items;
use crate::data::Dataset;
use crate::error::CliError;
use crate::fit::Fitted;

/// Serialises a fitted model.
pub fn model_bytes(
    fitted: &Fitted,
    d: usize,
    element: ElementType,
    meta: &str,
    centring: Option<format::FeatureCentring<'_>>,
) -> Result<Vec<u8>, CliError> {
    let fmt_err = |e: format::EmitError| CliError::failure(format!("cannot write the model: {e}"));
    let (sparse_ptr, sparse_idx, sparse_val, dense_basis);
    let model = match fitted {
        Fitted::Linear { w, offset } => format::Model::Linear(format::LinearModel { w, offset: *offset, centring }),
        Fitted::Kernel { kernel, basis, alpha, offset, centring: kc } => {
            let b = match basis.dense() {
                Some(_) => {
                    dense_basis = (0..basis.n())
                        .flat_map(|i| {
                            let mut row = vec![0.0; d];
                            let (c, v) = basis.row(i);
                            c.iter().zip(v).for_each(|(&c, &v)| row[c as usize] = v);
                            row
                        })
                        .collect::<Vec<f64>>();
                    format::Basis::Dense(&dense_basis)
                }
                None => {
                    let mut ptr = vec![0u32];
                    let (mut idx, mut val) = (Vec::new(), Vec::new());
                    for i in 0..basis.n() {
                        let (c, v) = basis.row(i);
                        idx.extend_from_slice(c);
                        val.extend_from_slice(v);
                        ptr.push(
                            u32::try_from(idx.len())
                                .map_err(|_| CliError::failure("basis too large for the format"))?,
                        );
                    }
                    (sparse_ptr, sparse_idx, sparse_val) = (ptr, idx, val);
                    format::Basis::Sparse { row_ptr: &sparse_ptr, indices: &sparse_idx, values: &sparse_val }
                }
            };
            format::Model::Kernel(format::KernelModel {
                dim: d,
                kernel: *kernel,
                basis: b,
                coeffs: alpha,
                offset: *offset,
                centring,
                kernel_centring: kc.as_ref().map(|(c, g)| format::KernelCentring { col_means: c, grand_mean: *g }),
            })
        }
    };
    let spec = ModelSpec::new(model, element).with_metadata(meta);
    let mut out = vec![0u8; spec.buffer_len()];
    let n = spec.emit(&mut out).map_err(fmt_err)?;
    out.truncate(n);
    Ok(out)
}

/// `-m/--model`: the model file a command reads.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Model file (.rkl).
    #[arg(short, long, help_heading = heading::MODEL)]
    pub model: PathBuf,
}

impl ModelArgs {
    /// Reads and validates the model file.
    pub fn read(&self) -> Result<Vec<u8>, CliError> {
        read_model(&self.model)
    }
}

/// Reads and validates a model file.
pub fn read_model(path: &Path) -> Result<Vec<u8>, CliError> {
    let bytes = std::fs::read(path).map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
    ModelView::new_checked(&bytes)
        .map_err(|e| CliError::input(format!("{}: not a valid model: {e}", path.display())))?;
    Ok(bytes)
}

/// Scores every row of the data through the device parser (f32 inputs;
/// the model's own element type), in input order.
///
/// Features beyond the model's dimension never met the learner: every basis
/// row and every weight is 0 there. Linear and polynomial models depend on
/// them only through products with those zeros, so they are dropped (exactly)
/// with a note on stderr; an RBF model depends on them through ‖x − xᵢ‖², so
/// they are an error naming the first such line (train with
/// `--num-features`).
pub fn score_rows(view: &ModelView<'_>, ds: &Dataset, path: &Path) -> Result<Vec<f64>, CliError> {
    let dim = view.dim();
    let linear = !matches!(view.kernel().map(|k| k.kernel()), Some(Kernel::Rbf { .. }));
    let mut out = Vec::with_capacity(ds.n_rows());
    let (mut idx, mut vals32) = (Vec::new(), Vec::new());
    let mut dropped_rows = 0usize;
    for i in 0..ds.n_rows() {
        let (c, v) = ds.row(i);
        idx.clear();
        vals32.clear();
        for (&c, &x) in c.iter().zip(v) {
            if (c as usize) < dim {
                idx.push(c);
                vals32.push(x as f32);
            } else if !linear {
                return Err(CliError::input(format!(
                    "{}:{}: feature {} is beyond the model's {dim} features (an RBF model depends on it; train with --num-features)",
                    path.display(),
                    ds.source_line(i),
                    c + 1
                )));
            }
        }
        if idx.len() < c.len() {
            dropped_rows += 1;
        }
        let s = view
            .score_sparse(&idx, &vals32)
            .map_err(|e| CliError::input(format!("{}:{}: {e}", path.display(), ds.source_line(i))))?;
        out.push(s as f64);
    }
    if dropped_rows > 0 {
        eprintln!(
            "ranklet: note: {dropped_rows} rows of {} have features beyond the model's {dim}; the model gives them weight 0",
            path.display()
        );
    }
    Ok(out)
}

/// Scores every item through the device parser (f64 inputs).
pub fn score_items(view: &ModelView<'_>, items: &Items, path: &Path) -> Result<Vec<f64>, CliError> {
    if view.dim() != items.n_attrs() {
        return Err(CliError::input(format!(
            "{}: {} attributes, the model has {}",
            path.display(),
            items.n_attrs(),
            view.dim()
        )));
    }
    (0..items.len())
        .map(|i| {
            view.score_dense_f64(items.attrs_of(i))
                .map_err(|e| CliError::input(format!("{}: item {}: {e}", path.display(), items.ids()[i])))
        })
        .collect()
}

/// The model kind's name in reports.
pub fn kind_name(k: ModelKind) -> &'static str {
    match k {
        ModelKind::Linear => "linear",
        ModelKind::KernelExpansion => "kernel-expansion",
        ModelKind::OnlineRankRls => "online-rankrls",
        ModelKind::Bilinear => "bilinear",
        ModelKind::DualPair => "dual-pair",
        ModelKind::PrefGp => "pref-gp",
        ModelKind::PrefInductive => "pref-gp-inductive",
        _ => "unknown",
    }
}

/// The element type's name in reports.
pub fn elem_name(e: ElementType) -> &'static str {
    match e {
        ElementType::F32 => "f32",
        ElementType::F64 => "f64",
    }
}

/// The stored CRC-32 (the file's last four bytes).
pub fn crc_of(bytes: &[u8]) -> u32 {
    let at = bytes.len().saturating_sub(field::CRC_LEN);
    bytes.get(at..).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes)
}

/// A small linear model with metadata, for unit tests.
#[cfg(test)]
pub(crate) fn sample_model() -> Vec<u8> {
    let w = [0.5, -3.0, 2.0];
    let spec = ModelSpec::new(
        format::Model::Linear(format::LinearModel { w: &w, offset: 0.25, centring: None }),
        ElementType::F32,
    )
    .with_metadata("algorithm=rankrls\nlambda=1\n");
    let mut b = vec![0u8; spec.buffer_len()];
    spec.emit(&mut b).unwrap();
    b
}
