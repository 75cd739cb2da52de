//! `ranklet inspect` and `ranklet export`: look inside a model file, and
//! turn it into a C array for firmware and/or a copy without metadata
//! (`--strip-metadata`, the device copy).
//!
//! Both read the model through the device parser (`ModelView::new_checked`),
//! so a file they accept is a file a device accepts.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use ranklet_core::format::{
    field, Basis, BasisView, ElementType, FeatureCentring, Kernel, KernelCentring, KernelModel, LinearModel, Model,
    ModelKind, ModelSpec, ModelView,
};

use crate::commands::read_model;
use crate::error::{write_atomic, CliError};

/// `ranklet inspect` arguments.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// Model file (.rkl).
    pub model: PathBuf,
    /// Linear models: how many of the largest weights (by |w|) to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
}

/// `ranklet export` arguments.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Model file (.rkl).
    #[arg(short, long)]
    pub model: PathBuf,
    /// Emit a C source defining `const uint8_t NAME[]` (8-byte aligned) and
    /// `const size_t NAME_len`.
    #[arg(long, value_name = "NAME", required_unless_present = "strip_metadata")]
    pub c_array: Option<String>,
    /// Drop the metadata section: the same model (kind, element type,
    /// parameters bit for bit) re-emitted by the model writer without META.
    /// Without --c-array, writes the stripped `.rkl` to -o.
    #[arg(long)]
    pub strip_metadata: bool,
    /// Output file: the C file with --c-array (default: stdout; `-o FILE.c`
    /// also writes the matching header `FILE.h`), else the stripped model.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

fn kind_name(k: ModelKind) -> &'static str {
    match k {
        ModelKind::Linear => "linear",
        ModelKind::KernelExpansion => "kernel-expansion",
        _ => "unknown",
    }
}

fn elem_name(e: ElementType) -> &'static str {
    match e {
        ElementType::F32 => "f32",
        ElementType::F64 => "f64",
    }
}

fn crc_of(bytes: &[u8]) -> u32 {
    let at = bytes.len().saturating_sub(field::CRC_LEN);
    bytes.get(at..).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes)
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
    if let Some(l) = v.linear() {
        let _ = writeln!(s, "offset: {}", l.offset());
        let mut w: Vec<(usize, f64)> = l.weights().iter().enumerate().collect();
        w.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
        let n = top.min(w.len());
        let _ = writeln!(s, "largest_weights: {n} of {} by |w| (feature numbers 1-based)", w.len());
        for (j, wj) in w.iter().take(n) {
            let _ = writeln!(s, "  feature {}\t{wj}", j + 1);
        }
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

/// `ranklet inspect`.
pub fn inspect(a: InspectArgs) -> Result<(), CliError> {
    let bytes = read_model(&a.model)?;
    let v = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    print!("{}", inspect_text(&v, a.top));
    Ok(())
}

/// Whether `name` is a C identifier (and not a reserved-looking one).
fn is_c_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__")
}

fn guard_for(name: &str) -> String {
    format!("{}_RKL_H", name.to_ascii_uppercase())
}

/// The header declaring the array.
pub fn c_header(name: &str, v: &ModelView<'_>, source: &str) -> String {
    let guard = guard_for(name);
    format!(
        "/* Generated by `ranklet export` from {source}: {} model, dim {}, {}, {} bytes, crc32 {:#010x}. */\n\
         #ifndef {guard}\n#define {guard}\n\n#include <stddef.h>\n#include <stdint.h>\n\n\
         #ifdef __cplusplus\nextern \"C\" {{\n#endif\n\n\
         /* The model bytes, 8-byte aligned; pass to rk_model_parse(). */\n\
         extern const uint8_t {name}[];\n/* Their number. */\nextern const size_t {name}_len;\n\n\
         #ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */\n",
        kind_name(v.kind()),
        v.dim(),
        elem_name(v.element_type()),
        v.into_inner().len(),
        crc_of(v.into_inner()),
    )
}

/// The C source defining the array; includes `header` if given.
pub fn c_source(name: &str, v: &ModelView<'_>, source: &str, header: Option<&str>) -> String {
    let bytes = v.into_inner();
    let mut s = format!(
        "/* Generated by `ranklet export` from {source}: {} model, dim {}, {}, {} bytes, crc32 {:#010x}. */\n",
        kind_name(v.kind()),
        v.dim(),
        elem_name(v.element_type()),
        bytes.len(),
        crc_of(bytes),
    );
    match header {
        Some(h) => {
            let _ = writeln!(s, "#include \"{h}\"\n");
        }
        None => {
            let _ = writeln!(s, "#include <stddef.h>\n#include <stdint.h>\n");
            let _ = writeln!(
                s,
                "/* Declare elsewhere as:\n   extern const uint8_t {name}[];\n   extern const size_t {name}_len; */\n"
            );
        }
    }
    s += "#if defined(__cplusplus)\n#define RANKLET_EXPORT_ALIGN alignas(8)\n#else\n#define RANKLET_EXPORT_ALIGN _Alignas(8)\n#endif\n\n";
    let _ = writeln!(s, "RANKLET_EXPORT_ALIGN const uint8_t {name}[{}] = {{", bytes.len());
    for chunk in bytes.chunks(12) {
        let line: Vec<String> = chunk.iter().map(|b| format!("0x{b:02x}")).collect();
        let _ = writeln!(s, "    {},", line.join(", "));
    }
    let _ = writeln!(s, "}};\nconst size_t {name}_len = {};", bytes.len());
    s
}

fn header_path(c: &Path) -> PathBuf {
    c.with_extension("h")
}

/// The model of `v` without its metadata, re-emitted through the core
/// writer (same kind, element type, dimension and parameter values; the
/// values round-trip exactly, `f32` through `f64` and back). The result
/// passes `ModelView::new_checked`.
pub fn strip_metadata(v: &ModelView<'_>) -> Result<Vec<u8>, CliError> {
    let vec = |a: ranklet_core::format::Array<'_>| a.iter().collect::<Vec<f64>>();
    let (mean, scale) = match v.feature_centring() {
        Some((m, s)) => (vec(m), vec(s)),
        None => (Vec::new(), Vec::new()),
    };
    let centring = v.feature_centring().map(|_| FeatureCentring { mean: &mean, scale: &scale });
    let emit = |model: Model<'_>| -> Result<Vec<u8>, CliError> {
        let spec = ModelSpec::new(model, v.element_type());
        let mut buf = vec![0u8; spec.buffer_len()];
        let n = spec.emit(&mut buf).map_err(|e| CliError::input(format!("re-emitting the model: {e}")))?;
        buf.truncate(n);
        Ok(buf)
    };
    if let Some(l) = v.linear() {
        let w = vec(l.weights());
        return emit(Model::Linear(LinearModel { w: &w, offset: l.offset(), centring }));
    }
    let Some(k) = v.kernel() else {
        return Err(CliError::input(format!("model kind {}: cannot strip", kind_name(v.kind()))));
    };
    let coeffs = vec(k.coeffs());
    let col_means = k.centring().map(|c| vec(c.col_means())).unwrap_or_default();
    let kernel_centring = k.centring().map(|c| KernelCentring { col_means: &col_means, grand_mean: c.grand_mean() });
    let (dense, row_ptr, indices, values);
    let basis = match k.basis() {
        BasisView::Dense(rows) => {
            dense = vec(rows);
            Basis::Dense(&dense)
        }
        BasisView::Sparse { row_ptr: rp, indices: ix, values: vs } => {
            row_ptr = rp.iter().collect::<Vec<u32>>();
            indices = ix.iter().collect::<Vec<u32>>();
            values = vec(vs);
            Basis::Sparse { row_ptr: &row_ptr, indices: &indices, values: &values }
        }
    };
    emit(Model::Kernel(KernelModel {
        dim: v.dim(),
        kernel: k.kernel(),
        basis,
        coeffs: &coeffs,
        offset: k.offset(),
        centring,
        kernel_centring,
    }))
}

/// `ranklet export`.
pub fn export(a: ExportArgs) -> Result<(), CliError> {
    if let Some(name) = &a.c_array {
        if !is_c_identifier(name) {
            return Err(CliError::input(format!("--c-array {name:?}: not a C identifier")));
        }
    }
    let read = read_model(&a.model)?;
    let v = ModelView::new_checked(&read).map_err(|e| CliError::input(e.to_string()))?;
    let stripped;
    let v = if a.strip_metadata {
        stripped = strip_metadata(&v)?;
        ModelView::new_checked(&stripped).map_err(|e| CliError::input(format!("stripped model: {e}")))?
    } else {
        v
    };
    let source =
        a.model.file_name().map_or_else(|| a.model.display().to_string(), |n| n.to_string_lossy().into_owned());
    let Some(name) = a.c_array else {
        let Some(out) = a.output else {
            return Err(CliError::input("--strip-metadata without --c-array needs -o OUT.rkl".to_string()));
        };
        return write_atomic(&out, v.into_inner());
    };
    match a.output {
        None => {
            print!("{}", c_source(&name, &v, &source, None));
        }
        Some(out) => {
            let h = header_path(&out);
            if h == out {
                return Err(CliError::input(format!("-o {}: the C file must not end in .h", out.display())));
            }
            let h_name = h.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            write_atomic(&h, c_header(&name, &v, &source).as_bytes())?;
            write_atomic(&out, c_source(&name, &v, &source, Some(&h_name)).as_bytes())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ranklet_core::format::{LinearModel, Model, ModelSpec};

    fn model() -> Vec<u8> {
        let w = [0.5, -3.0, 2.0];
        let spec = ModelSpec::new(Model::Linear(LinearModel { w: &w, offset: 0.25, centring: None }), ElementType::F32)
            .with_metadata("algorithm=rankrls\nlambda=1\n");
        let mut b = vec![0u8; spec.buffer_len()];
        spec.emit(&mut b).unwrap();
        b
    }

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

    #[test]
    fn strip_metadata_keeps_the_model_and_drops_meta() {
        let b = model();
        let v = ModelView::new_checked(&b).unwrap();
        let s = strip_metadata(&v).unwrap();
        let sv = ModelView::new_checked(&s).unwrap();
        assert!(s.len() < b.len());
        assert_eq!(sv.metadata(), "");
        assert_eq!((sv.kind(), sv.dim(), sv.element_type()), (v.kind(), v.dim(), v.element_type()));
        let (l, sl) = (v.linear().unwrap(), sv.linear().unwrap());
        assert_eq!(l.offset(), sl.offset());
        assert!(l.weights().iter().zip(sl.weights().iter()).all(|(a, b)| a.to_bits() == b.to_bits()));
        assert_eq!(v.score_dense(&[1.0, 2.0, 3.0]), sv.score_dense(&[1.0, 2.0, 3.0]));
        // Stripping again changes nothing.
        assert_eq!(strip_metadata(&sv).unwrap(), s);
    }

    #[test]
    fn c_source_holds_the_bytes_and_names() {
        let b = model();
        let v = ModelView::new_checked(&b).unwrap();
        let c = c_source("my_model", &v, "m.rkl", Some("m.h"));
        assert!(c.contains("#include \"m.h\""));
        assert!(c.contains(&format!("const uint8_t my_model[{}] = {{", b.len())));
        assert!(c.contains(&format!("const size_t my_model_len = {};", b.len())));
        let parsed: Vec<u8> = c
            .split(['{', '}'])
            .nth(1)
            .unwrap()
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| u8::from_str_radix(t.trim_start_matches("0x"), 16).unwrap())
            .collect();
        assert_eq!(parsed, b);
        let h = c_header("my_model", &v, "m.rkl");
        assert!(h.contains("extern const uint8_t my_model[];") && h.contains("#ifndef MY_MODEL_RKL_H"));
        assert!(is_c_identifier("_a1") && !is_c_identifier("1a") && !is_c_identifier("a-b") && !is_c_identifier(""));
    }
}
