//! `ranklet inspect`: a model file's header, parameters summary and
//! metadata, read through the device parser (`ModelView::new_checked`), so a
//! file it accepts is a file a device accepts.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use ranklet::args::heading;
use ranklet::error::CliError;
use ranklet::model_io::{crc_of, elem_name, kind_name, read_model};
use ranklet_core::format::{BasisView, Kernel, ModelView};

use crate::input::RowsArgs;

/// `ranklet inspect` arguments: `-m MODEL` as for every command that reads
/// a model; the former positional `inspect MODEL` is kept as a hidden alias.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// Model file (.rkl).
    #[arg(short, long, required_unless_present = "model_path", help_heading = heading::MODEL)]
    pub model: Option<PathBuf>,
    /// The model file given positionally (hidden alias of -m).
    #[arg(hide = true, value_name = "MODEL", conflicts_with = "model")]
    pub model_path: Option<PathBuf>,
    /// Linear models: how many of the largest weights (by |w|) to list;
    /// preference GPs over items: how many items of highest posterior mean.
    #[arg(long, default_value_t = 10, help_heading = heading::OUTPUT)]
    pub top: usize,
    /// Quantised models: rows whose inputs to check against the calibrated
    /// ranges (`--data FILE`); prints `saturated_inputs` (count, share of
    /// rows × features).
    #[command(flatten)]
    pub rows: RowsArgs,
}

/// The `inspect` report (`key: value` lines, then metadata and weights).
pub fn inspect_text(v: &ModelView<'_>, top: usize) -> String {
    let mut s = String::new();
    let bytes = v.into_inner();
    let p = v.producer_version();
    let _ = writeln!(s, "kind: {}", kind_name(v.kind()));
    let _ = writeln!(s, "dim: {}", v.dim());
    let _ = writeln!(s, "element_type: {}", elem_name(v.element_type()));
    let _ = writeln!(s, "bytes: {}", bytes.len());
    let _ = writeln!(s, "checksum: crc32 {:#010x}", crc_of(bytes));
    let _ = writeln!(s, "format_version: {}", v.format_version());
    let _ = writeln!(s, "min_reader_version: {}", v.min_reader_version());
    let _ = writeln!(s, "producer_version: {}.{}.{}", p[0], p[1], p[2]);
    let _ = writeln!(s, "feature_centring: {}", if v.feature_centring().is_some() { "yes" } else { "no" });
    if let Some(k) = v.kernel() {
        let kernel = match k.kernel() {
            Kernel::Linear => "linear".to_string(),
            Kernel::Rbf { gamma } => format!("rbf gamma={gamma}"),
            Kernel::Polynomial { gamma, coef0, degree } => {
                format!("polynomial gamma={gamma} coef0={coef0} degree={degree}")
            }
        };
        let _ = writeln!(s, "kernel: {kernel}");
        let storage = match k.basis() {
            BasisView::Dense(_) => "dense".to_string(),
            BasisView::Sparse { values, .. } => format!("sparse ({} non-zeros)", values.len()),
        };
        let _ = writeln!(s, "basis_rows: {}", k.rows());
        let _ = writeln!(s, "basis_storage: {storage}");
        let _ = writeln!(s, "kernel_centring: {}", if k.centring().is_some() { "yes" } else { "no" });
        let _ = writeln!(s, "offset: {}", k.offset());
    }
    if let Some(o) = v.online() {
        let _ = writeln!(s, "lambda: {}", o.lambda());
        let _ = writeln!(s, "observations: {}", o.count());
        let _ = writeln!(s, "prior_id: crc32 {:#010x}", o.prior_id());
        let moved: f64 = o.weights().iter().zip(o.prior().iter()).map(|(w, p)| (w - p) * (w - p)).sum::<f64>().sqrt();
        let norm: f64 = o.prior().iter().map(|p| p * p).sum::<f64>().sqrt();
        let _ = writeln!(s, "distance_from_prior: {moved} (|w0| = {norm})");
        largest_weights(&mut s, o.offset(), o.weights(), top);
    }
    if let Some(l) = v.linear() {
        largest_weights(&mut s, l.offset(), l.weights(), top);
    }
    if let Some(q) = v.quant() {
        quant_report(&mut s, &q, top);
    }
    if let Some(p) = v.pref_gp() {
        let _ = writeln!(s, "sigma: {}", p.sigma());
        let _ = writeln!(s, "preferences_absorbed: {}", p.count());
        let _ = writeln!(s, "items: {}", p.items());
        let mean: Vec<f64> = p.mean().iter().collect();
        top_items(&mut s, &mean, |i| p.cov(i, i), |i| p.item_name(i), top);
    }
    if let Some(p) = v.pref_lowrank() {
        let _ = writeln!(s, "sigma: {}", p.sigma());
        let _ = writeln!(s, "preferences_absorbed: {}", p.count());
        let _ = writeln!(s, "items: {}", p.items());
        let _ = writeln!(s, "covariance: low-rank, factor rank {} plus a diagonal", p.rank());
        let mean: Vec<f64> = p.mean().iter().collect();
        top_items(&mut s, &mean, |i| p.cov(i, i), |i| p.item_name(i), top);
    }
    if let Some(p) = v.pref_inductive() {
        let _ = writeln!(s, "kernel: {}", p.kernel());
        let _ = writeln!(s, "amplitude: {}", p.scale());
        let _ = writeln!(s, "sigma: {}", p.sigma());
        let _ = writeln!(s, "preferences_absorbed: {}", p.count());
        let _ = writeln!(s, "basis_rows: {}", p.rows());
    }
    let meta = v.metadata();
    if meta.is_empty() {
        let _ = writeln!(s, "metadata: (none)");
    } else {
        let _ = writeln!(s, "metadata:");
        for line in meta.lines() {
            let _ = writeln!(s, "  {line}");
        }
    }
    s
}

/// The `top` items of a preference GP over fixed items by posterior mean,
/// with their standard deviations (`var(i)`) and names.
fn top_items<'n>(
    s: &mut String,
    mean: &[f64],
    var: impl Fn(usize) -> f64,
    name: impl Fn(usize) -> Option<&'n str>,
    top: usize,
) {
    let mut order: Vec<usize> = (0..mean.len()).collect();
    order.sort_by(|&a, &b| mean[b].total_cmp(&mean[a]).then(a.cmp(&b)));
    let k = top.min(order.len());
    let _ = writeln!(s, "top_items: {k} of {} by posterior mean (mean, sd)", order.len());
    for &i in order.iter().take(k) {
        let label = name(i).map_or_else(|| i.to_string(), str::to_string);
        let _ = writeln!(s, "  {label}\t{}\t{}", mean[i], var(i).max(0.0).sqrt());
    }
}

/// The offset and the `top` largest weights by |w|.
fn largest_weights(s: &mut String, offset: f64, weights: ranklet_core::format::Array<'_>, top: usize) {
    let _ = writeln!(s, "offset: {offset}");
    let mut w: Vec<(usize, f64)> = weights.iter().enumerate().collect();
    w.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
    let n = top.min(w.len());
    let _ = writeln!(s, "largest_weights: {n} of {} by |w| (feature numbers 1-based)", w.len());
    for (j, wj) in w.iter().take(n) {
        let _ = writeln!(s, "  feature {}\t{wj}", j + 1);
    }
}

/// A quantised model: its scales, the accumulator bound and the
/// worst-case score error bound (docs/format.md, "QUANT"), then the
/// per-feature input scale, zero point, calibrated range and weight of the
/// `top` features with the largest |W|.
fn quant_report(s: &mut String, q: &ranklet_core::format::QuantView<'_>, top: usize) {
    use ranklet_core::format::{kind::quant::max_dim, QuantWidth};
    let width = match q.width() {
        QuantWidth::I8 => "i8",
        QuantWidth::I16 => "i16",
    };
    let _ = writeln!(s, "weights: {width}; inputs: i16 (per-feature scale a_j and zero point z_j)");
    let _ = writeln!(s, "score_scale: {:e} (model score ≈ scale × integer score)", q.scale());
    let _ = writeln!(s, "integer_bias: {}", q.bias());
    let _ = writeln!(
        s,
        "accumulator: i64, products i32; bound |B| + d·{}·32768 ≤ 2^63−1 holds for d ≤ {}",
        q.width().w_max(),
        max_dim(q.bias(), q.width())
    );
    let e = q.error_bound();
    let _ = writeln!(
        s,
        "error_bound: {e:e} (worst-case |scale·S − float score| for inputs inside the calibrated ranges; saturated inputs add |v_j|·distance beyond the range)"
    );
    let _ = writeln!(s, "order: items whose float scores differ by more than {:e} keep their order", 2.0 * e);
    let d = q.dim();
    let mut js: Vec<usize> = (0..d).collect();
    js.sort_by(|&a, &b| q.weight(b).unsigned_abs().cmp(&q.weight(a).unsigned_abs()).then(a.cmp(&b)));
    let n = top.min(d);
    let _ =
        writeln!(s, "features: {n} of {d} by |W| (feature numbers 1-based): weight, input scale, zero point, range");
    for &j in js.iter().take(n) {
        let (lo, hi) = q.range(j);
        let _ = writeln!(
            s,
            "  feature {}\t{}\ta={:e}\tz={}\t[{lo}, {hi}]",
            j + 1,
            q.weight(j),
            q.input_scale(j),
            q.zero_point(j)
        );
    }
}

/// `ranklet inspect`.
pub fn inspect(a: InspectArgs) -> Result<(), CliError> {
    let path = a.model.or(a.model_path).ok_or_else(|| CliError::input("-m MODEL is required"))?;
    let bytes = read_model(&path)?;
    let v = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    // The saturation report of --data is computed first, so that an error
    // leaves stdout empty.
    let saturation = match (&a.rows.data, v.quant()) {
        (None, _) => None,
        (Some(data), None) => {
            return Err(CliError::input(format!(
                "--data {}: only a quantised model has ranges its inputs can saturate (export --quantize)",
                data.display()
            )))
        }
        (Some(data), Some(q)) => {
            let ds = a.rows.read(a.rows.is_csv().then_some(v.dim()))?;
            let (sat, total) = ranklet::model_io::saturated_inputs(&q, &ds);
            Some(format!(
                "saturated_inputs: {sat} of {total} ({:.6}) in {}\n",
                sat as f64 / total.max(1) as f64,
                data.display()
            ))
        }
    };
    print!("{}{}", inspect_text(&v, a.top), saturation.unwrap_or_default());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::sample_model as model;

    #[test]
    fn inspect_lists_header_metadata_and_largest_weights() {
        let b = model();
        let v = ModelView::new_checked(&b).unwrap();
        let t = inspect_text(&v, 2);
        for want in ["kind: linear", "dim: 3", "element_type: f32", "format_version: 1.0", "min_reader_version: 1.0"] {
            assert!(t.contains(want), "{want} missing:\n{t}");
        }
        assert!(t.contains(&format!("bytes: {}", b.len())));
        assert!(t.contains("  feature 2\t-3\n  feature 3\t2\n"), "{t}");
        assert!(!t.contains("feature 1\t"));
        assert!(t.contains("  lambda=1"));
    }
}
