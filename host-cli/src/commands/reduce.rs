//! `ranklet reduce`: reduce item attributes with RCDR (Kendall, Spearman) or
//! PCA from sample orders and write the basis as TSV (atomically, so an
//! error leaves no file behind).

use std::path::PathBuf;

use clap::Args;

use crate::error::{write_atomic, CliError};
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::input::OrderData;
use crate::ordering::{compute_basis, ReduceMethod};

/// `ranklet reduce`.
#[derive(Args, Debug)]
pub struct ReduceArgs {
    /// Reduction method.
    #[arg(long, value_enum)]
    pub method: ReduceMethod,
    #[command(flatten)]
    pub data: OrderData,
    /// Number of components K′ (1 ≤ K′ ≤ number of attributes).
    #[arg(long)]
    pub dims: usize,
    /// Linear-algebra backend (PCA's eigendecomposition).
    #[arg(long, value_enum, default_value_t = BackendChoice::Faer)]
    pub backend: BackendChoice,
    /// Output basis (TSV): one line per component, the importance
    /// (‖R‖/N for RCDR, contribution ratio for PCA), then the vector.
    #[arg(short, long)]
    pub output: PathBuf,
}

/// `ranklet reduce`.
pub fn reduce(a: ReduceArgs) -> Result<(), CliError> {
    let data = a.data.load()?;
    let mut backend = HostBackend::new(a.backend);
    let (basis, norms) = compute_basis(&mut backend, &data, a.method, a.dims)?;
    let d = data.items.n_attrs();
    let mut out = String::new();
    out.push_str(&format!(
        "# ranklet reduce --method {} --dims {}; items={} ({} objects), orders={} (N = {})\n",
        a.method.name(),
        a.dims,
        a.data.items.display(),
        data.items.len(),
        a.data.orders.display(),
        data.order_ptr.len() - 1
    ));
    out.push_str(&format!(
        "# {}\t{}\n",
        if a.method == ReduceMethod::Pca { "contribution_ratio" } else { "norm_R_over_N" },
        data.items.attr_names().join("\t")
    ));
    for (l, nr) in norms.iter().enumerate() {
        out.push_str(&format!("{nr}"));
        for v in &basis[l * d..(l + 1) * d] {
            out.push_str(&format!("\t{v}"));
        }
        out.push('\n');
    }
    write_atomic(&a.output, out.as_bytes())?;
    eprintln!("wrote {} ({} components)", a.output.display(), a.dims);
    Ok(())
}
