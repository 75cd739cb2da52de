//! `ranklet reduce`: reduce item attributes with RCDR (Kendall, Spearman) or
//! PCA from sample orders and write the basis as TSV (atomically, so an
//! error leaves no file behind).

use std::path::PathBuf;

use clap::{ArgGroup, Args};
use ranklet::args::heading;
use ranklet::error::{write_atomic, CliError};
use ranklet::hostbackend::{BackendChoice, HostBackend};
use ranklet::ordering::{compute_basis, ReduceMethod};

use crate::cli_values::{self, lib_enum};
use crate::input::{Loaded, OrdersArgs};

/// `ranklet reduce`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["items"])))]
#[command(group(ArgGroup::new("orders_input").required(true).args(["orders"])))]
pub struct ReduceArgs {
    /// Reduction method.
    #[arg(long, value_parser = lib_enum::<cli_values::ReduceMethod>(), help_heading = heading::LEARNER)]
    pub method: ReduceMethod,
    #[command(flatten)]
    pub data: OrdersArgs,
    /// Number of components K′ (1 ≤ K′ ≤ number of attributes).
    #[arg(long, help_heading = heading::LEARNER)]
    pub dims: usize,
    /// Linear-algebra backend (PCA's eigendecomposition).
    #[arg(long, value_parser = lib_enum::<cli_values::Backend>(), default_value = "faer", help_heading = heading::LEARNER)]
    pub backend: BackendChoice,
    /// Output basis (TSV): one line per component, the importance
    /// (‖R‖/N for RCDR, contribution ratio for PCA), then the vector.
    #[arg(short, long, help_heading = heading::OUTPUT)]
    pub output: PathBuf,
}

/// `ranklet reduce`.
pub fn reduce(a: ReduceArgs) -> Result<(), CliError> {
    let (items, orders) = a.data.paths().ok_or_else(|| CliError::input("--items and --orders are required"))?;
    let data = Loaded::read(items, orders)?;
    let mut backend = HostBackend::new(a.backend);
    let (basis, norms) = compute_basis(&mut backend, &data, a.method, a.dims)?;
    let d = data.items.n_attrs();
    let mut out = String::new();
    out.push_str(&format!(
        "# ranklet reduce --method {} --dims {}; items={} ({} objects), orders={} (N = {})\n",
        a.method.name(),
        a.dims,
        items.display(),
        data.items.len(),
        orders.display(),
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
