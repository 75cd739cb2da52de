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

/// Refuses metadata lines a model file could not hold: a key is one word
/// without `=` or a line break, a value one line.
///
/// # Errors
/// [`CliError::input`] naming the first bad key.
pub fn check_metadata(metadata: &[(String, String)]) -> Result<(), CliError> {
    match metadata.iter().find(|(k, v)| k.is_empty() || k.contains(['=', '\n']) || v.contains('\n')) {
        Some((k, _)) => {
            Err(CliError::input(format!("metadata key {k:?}: a key is one word without '=', a value one line")))
        }
        None => Ok(()),
    }
}

/// The model of `bytes` with the lines `key=value` of `extra` appended to
/// its metadata: every other section is copied unchanged, the sections laid
/// out again as the writer lays them out (in the same order, each at a
/// multiple of [`field::SECTION_ALIGN`]), the length and checksum written
/// anew. The result is the file the writer emits for the same model with
/// the longer metadata, byte for byte, for every kind, so a learner whose
/// driver writes its own metadata can add lines (the Python package's
/// feature names) without a metadata parameter in each driver.
///
/// # Errors
/// [`CliError::input`]: `bytes` is not a valid model, a key of `extra` is
/// malformed ([`check_metadata`]) or already in the model's metadata, or the
/// result would be longer than the format's 4 GiB.
pub fn with_metadata(bytes: &[u8], extra: &[(String, String)]) -> Result<Vec<u8>, CliError> {
    use field::section as entry;
    use format::section_id;

    let view = ModelView::new_checked(bytes).map_err(|e| CliError::input(format!("not a valid model: {e}")))?;
    check_metadata(extra)?;
    if extra.is_empty() {
        return Ok(bytes.to_vec());
    }
    if let Some((k, _)) = extra.iter().find(|(k, _)| view.metadata_get(k).is_some()) {
        return Err(CliError::input(format!("metadata key {k:?} is already in the model's metadata")));
    }
    let mut meta = view.metadata().to_string();
    if !meta.is_empty() && !meta.ends_with('\n') {
        meta.push('\n');
    }
    for (k, v) in extra {
        meta.push_str(&format!("{k}={v}\n"));
    }
    // The checked view guarantees every read below is in bounds.
    let u16_at = |at: usize| bytes.get(at..at + 2).and_then(|s| s.try_into().ok()).map_or(0, u16::from_le_bytes);
    let u32_at = |at: usize| bytes.get(at..at + 4).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes);
    let count = usize::from(u16_at(field::SECTION_COUNT.start));
    // (id, flags, payload) in file order; the metadata replaced, or put
    // first when the model has none (its id is the smallest, and the
    // writer orders sections by id).
    let mut secs: Vec<(u16, u16, &[u8])> = Vec::with_capacity(count + 1);
    for e in 0..count {
        let at = field::HEADER_LEN + e * entry::ENTRY_LEN;
        let (off, len) = (u32_at(at + entry::OFFSET.start) as usize, u32_at(at + entry::LEN.start) as usize);
        let payload = bytes.get(off..off + len).unwrap_or(&[]);
        secs.push((u16_at(at + entry::ID.start), u16_at(at + entry::FLAGS.start), payload));
    }
    match secs.iter_mut().find(|(id, _, _)| *id == section_id::META) {
        Some(s) => s.2 = meta.as_bytes(),
        None => secs.insert(0, (section_id::META, 0, meta.as_bytes())),
    }
    let align = |x: usize| x.div_ceil(field::SECTION_ALIGN) * field::SECTION_ALIGN;
    let table_end = field::HEADER_LEN + secs.len() * entry::ENTRY_LEN;
    let mut offsets = Vec::with_capacity(secs.len());
    let mut at = table_end;
    for (_, _, p) in &secs {
        at = align(at);
        offsets.push(at);
        at += p.len();
    }
    let total = at + field::CRC_LEN;
    let too_long = || {
        CliError::input(format!("the model with its metadata would take {total} bytes, more than the format's 4 GiB"))
    };
    let total32 = u32::try_from(total).map_err(|_| too_long())?;
    let mut out = vec![0u8; total];
    out[..field::HEADER_LEN].copy_from_slice(&bytes[..field::HEADER_LEN]);
    out[field::TOTAL_LEN].copy_from_slice(&total32.to_le_bytes());
    let n = u16::try_from(secs.len()).map_err(|_| CliError::input("too many sections"))?;
    out[field::SECTION_COUNT].copy_from_slice(&n.to_le_bytes());
    for (e, ((id, flags, p), off)) in secs.iter().zip(&offsets).enumerate() {
        let at = field::HEADER_LEN + e * entry::ENTRY_LEN;
        out[at + entry::ID.start..at + entry::ID.end].copy_from_slice(&id.to_le_bytes());
        out[at + entry::FLAGS.start..at + entry::FLAGS.end].copy_from_slice(&flags.to_le_bytes());
        out[at + entry::OFFSET.start..at + entry::OFFSET.end].copy_from_slice(&(*off as u32).to_le_bytes());
        out[at + entry::LEN.start..at + entry::LEN.end].copy_from_slice(&(p.len() as u32).to_le_bytes());
        out[*off..*off + p.len()].copy_from_slice(p);
    }
    let body = total - field::CRC_LEN;
    let crc = format::crc32::crc32(&out[..body]);
    out[body..].copy_from_slice(&crc.to_le_bytes());
    ModelView::new_checked(&out).map_err(|e| CliError::failure(format!("the model with its metadata: {e}")))?;
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
        ModelKind::PrefLowRank => "pref-gp-lowrank",
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

#[cfg(test)]
mod tests {
    use super::*;
    use ranklet_core::format::{Basis, FeatureCentring, KernelModel, LinearModel, Model, PrefGpModel, Values};
    use ranklet_core::kernel::Kernel;

    fn emit(spec: ModelSpec<'_>) -> Vec<u8> {
        let mut b = vec![0u8; spec.buffer_len()];
        let n = spec.emit(&mut b).unwrap();
        b.truncate(n);
        b
    }

    fn extra(lines: &[(&str, &str)]) -> Vec<(String, String)> {
        lines.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// Metadata added to a written model gives the bytes the writer emits
    /// with the longer metadata: for models with and without metadata, with
    /// sections of lengths that are not multiples of the alignment (item
    /// names, odd metadata), in both element types and several kinds.
    #[test]
    fn with_metadata_is_the_writers_file_with_the_longer_metadata() {
        let w = [0.5, -3.0, 2.0];
        let (mean, scale) = ([0.1, 0.2, 0.3], [1.0, 2.0, 0.5]);
        let basis = [1.0, 0.0, 2.0, 0.5, -1.0, 0.25];
        let coeffs = [0.75, -0.5];
        let (pm, pc) = ([0.5, -0.25, 1.0], [1.0, 0.2, 0.8, -0.1, 0.3, 1.5]);
        let models = || {
            [
                (Model::Linear(LinearModel { w: &w, offset: 0.25, centring: None }), ElementType::F32),
                (
                    Model::Linear(LinearModel {
                        w: &w,
                        offset: -1.0,
                        centring: Some(FeatureCentring { mean: &mean, scale: &scale }),
                    }),
                    ElementType::F64,
                ),
                (
                    Model::Kernel(KernelModel {
                        dim: 3,
                        kernel: Kernel::Rbf { gamma: 0.5 },
                        basis: Basis::Dense(&basis),
                        coeffs: &coeffs,
                        offset: 0.0,
                        centring: None,
                        kernel_centring: None,
                    }),
                    ElementType::F32,
                ),
                (
                    Model::PrefGp(PrefGpModel {
                        sigma: 0.5,
                        count: 7,
                        mean: Values::F64(&pm),
                        cov_packed: Values::F64(&pc),
                        item_names: "apple\nbanana\ncherry\n",
                    }),
                    ElementType::F32,
                ),
            ]
        };
        let add = extra(&[("feature_names", "[\"a\", \"b\", \"c\"]"), ("x", "1")]);
        for before in ["", "algorithm=rankrls\n", "lambda=0.5\ncv=odd length\n"] {
            let after = format!("{before}feature_names=[\"a\", \"b\", \"c\"]\nx=1\n");
            for (k, (model, et)) in models().into_iter().enumerate() {
                let spec = ModelSpec::new(model, et);
                let got = with_metadata(&emit(spec.with_metadata(before)), &add).unwrap();
                assert_eq!(got, emit(spec.with_metadata(&after)), "model {k}, metadata {before:?}");
                let v = ModelView::new_checked(&got).unwrap();
                assert_eq!(v.metadata_get("feature_names"), Some("[\"a\", \"b\", \"c\"]"));
            }
        }
    }

    #[test]
    fn with_metadata_refuses_bad_keys_known_keys_and_bad_models() {
        let m = sample_model();
        let err = |e: CliError| e.to_string();
        let e = err(with_metadata(&m, &extra(&[("lambda", "2")])).unwrap_err());
        assert!(e.contains("\"lambda\" is already in the model's metadata"), "{e}");
        let e = err(with_metadata(&m, &extra(&[("a=b", "2")])).unwrap_err());
        assert!(e.contains("a key is one word without '='"), "{e}");
        let e = err(with_metadata(&m, &extra(&[("a", "two\nlines")])).unwrap_err());
        assert!(e.contains("a value one line"), "{e}");
        let mut bad = m.clone();
        bad[30] ^= 1;
        let e = err(with_metadata(&bad, &extra(&[("a", "1")])).unwrap_err());
        assert!(e.starts_with("not a valid model"), "{e}");
        // Nothing to add: the same bytes.
        assert_eq!(with_metadata(&m, &[]).unwrap(), m);
    }
}
