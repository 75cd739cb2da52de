//! Model files: reading and validating one, serialising a fitted model, and
//! scoring data through the device parser.

use std::path::Path;

use ranklet_core::format::{self, field, ElementType, ModelKind, ModelSpec, ModelView};

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
                            basis.row(i).for_each(|(c, v)| row[c as usize] = v);
                            row
                        })
                        .collect::<Vec<f64>>();
                    format::Basis::Dense(&dense_basis)
                }
                None => {
                    let mut ptr = vec![0u32];
                    let (mut idx, mut val) = (Vec::new(), Vec::new());
                    for i in 0..basis.n() {
                        for (c, v) in basis.row(i) {
                            idx.push(c);
                            val.push(v);
                        }
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

/// Reads and validates a model file.
pub fn read_model(path: &Path) -> Result<Vec<u8>, CliError> {
    let bytes = std::fs::read(path).map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
    ModelView::new_checked(&bytes)
        .map_err(|e| CliError::input(format!("{}: not a valid model: {e}", path.display())))?;
    Ok(bytes)
}

/// Scores every row of the data through the device parser, in input order.
///
/// `precision` picks the path: `F64` reads the rows' `f64` values and
/// computes in `f64` (for an `f64` model, the learner's own predictions up
/// to summation order); `F32` rounds the inputs to `f32` as a device does
/// and rounds the score to `f32` (computed in the model's element type).
/// Features beyond the model's dimension are scored by core exactly (the
/// training rows were 0 there; see `ModelView::score_sparse`).
pub fn score_rows(
    view: &ModelView<'_>,
    ds: &Dataset,
    path: &Path,
    precision: ElementType,
) -> Result<Vec<f64>, CliError> {
    let at =
        |i: usize, e: format::ScoreError| CliError::input(format!("{}:{}: {e}", path.display(), ds.source_line(i)));
    if view.quant().is_some() {
        // Integer scores, exact as f64 below 2⁵³ (a d = 136 i16 model's
        // stay below 2³⁸); `precision` does not apply.
        return Ok(score_rows_quant(view, ds, path)?.into_iter().map(|s| s as f64).collect());
    }
    let mut out = Vec::with_capacity(ds.n_rows());
    let mut vals32 = Vec::new();
    for i in 0..ds.n_rows() {
        let (c, v) = ds.row(i);
        let s = match precision {
            ElementType::F64 => view.score_sparse_f64(c, v).map_err(|e| at(i, e))?,
            ElementType::F32 => {
                vals32.clear();
                vals32.extend(v.iter().map(|&x| x as f32));
                f64::from(view.score_sparse(c, &vals32).map_err(|e| at(i, e))?)
            }
        };
        out.push(s);
    }
    Ok(out)
}

/// The warning where the rows at `path` do not look like the data of a
/// model of `dim` features, which would otherwise score silently: most
/// feature values at indices beyond `dim` (they score 0), or rows that all
/// have one width other than `dim` (a dense file of another data set);
/// `None` where the data fits. The caller shows it (the CLI on stderr).
pub fn warn_width(dim: usize, ds: &Dataset, path: &Path) -> Option<String> {
    let nnz = ds.nnz();
    let mut beyond: Vec<u32> = ds.col().iter().copied().filter(|&c| c as usize >= dim).collect();
    let values_beyond = beyond.len();
    let msg = if nnz > 0 && 2 * values_beyond > nnz {
        beyond.sort_unstable();
        beyond.dedup();
        format!(
            "{}: {values_beyond} of its {nnz} feature values, at {} distinct indices up to {}, lie beyond the \
             model's {dim} features and are ignored (they score 0); is this the data the model was trained on \
             (indices 1..{dim})?",
            path.display(),
            beyond.len(),
            ds.n_features()
        )
    } else {
        let w = ds.n_features();
        let dense = (0..ds.n_rows()).all(|i| ds.row(i).0.len() == w);
        if !dense || w == dim || ds.n_rows() == 0 {
            return None;
        }
        let effect = if w > dim { "the extra ones are ignored" } else { "the missing ones score as 0" };
        format!(
            "{}: every row has {w} features, the model {dim}: {effect}; is this the data the model was trained on?",
            path.display()
        )
    };
    Some(msg)
}

/// The integer scores of a quantised model (kind 7): each row as a dense
/// `f32` row (missing features 0, features beyond the model's dimension
/// dropped as for a linear model; [`quant_note`] says so), quantised and
/// scored by the device code (`score_dense_quant`), in input order.
pub fn score_rows_quant(view: &ModelView<'_>, ds: &Dataset, path: &Path) -> Result<Vec<i64>, CliError> {
    let dim = view.dim();
    let mut dense = vec![0.0f32; dim];
    let mut out = Vec::with_capacity(ds.n_rows());
    for i in 0..ds.n_rows() {
        let (c, v) = ds.row(i);
        dense.fill(0.0);
        for (&c, &x) in c.iter().zip(v) {
            if let Some(slot) = dense.get_mut(c as usize) {
                *slot = x as f32;
            }
        }
        let s = view
            .score_dense_quant(&dense)
            .map_err(|e| CliError::input(format!("{}:{}: {e}", path.display(), ds.source_line(i))))?;
        out.push(s);
    }
    Ok(out)
}

/// The note of a quantised model scoring rows with features beyond its
/// dimension (they get weight 0; see [`score_rows_quant`]); `None` for any
/// other model or data. The caller shows it (the CLI on stderr).
pub fn quant_note(view: &ModelView<'_>, ds: &Dataset, path: &Path) -> Option<String> {
    let dim = view.dim();
    view.quant()?;
    let dropped_rows = (0..ds.n_rows()).filter(|&i| ds.row(i).0.iter().any(|&c| c as usize >= dim)).count();
    (dropped_rows > 0).then(|| {
        format!(
            "{dropped_rows} rows of {} have features beyond the model's {dim}; the model gives them weight 0",
            path.display()
        )
    })
}

/// How many inputs of `ds`'s rows saturate in the quantised model `q`
/// (`QuantView::saturated_inputs`; a sparse row's absent features are 0),
/// and how many inputs there are (rows × d).
pub fn saturated_inputs(q: &format::QuantView<'_>, ds: &Dataset) -> (usize, usize) {
    let n = (0..ds.n_rows()).map(|i| {
        let (c, x) = ds.row(i);
        q.saturated_inputs(c.iter().zip(x).map(|(&j, &v)| (j as usize, v as f32)))
    });
    (n.sum(), ds.n_rows().saturating_mul(q.dim()))
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
        ModelKind::QuantLinear => "quantized-linear",
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
