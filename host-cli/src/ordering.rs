//! Supervised ordering from sample orders (paper 003): the glue between the
//! items/orders files and `ranklet_core::learn::ordering`, used by `ranklet reduce`,
//! and by `ranklet train` / `ranklet eval` when they are given
//! `--items/--orders`.
//!
//! The algorithms (ERR, Kendall/Spearman RCDR, PCA, the fold-back of a
//! reduced model) are in `ranklet_core::learn::ordering`; this module calls core and
//! maps its errors.
//!
//! ```text
//! ranklet reduce --method rcdr-kendall|rcdr-spearman|pca --items I --orders O --dims K -o BASIS.tsv
//! ranklet train --algo err|rankrls --items I --orders O [--lambda L] [--reduce METHOD:K] -o MODEL.rkl
//! ranklet eval -m MODEL.rkl --items I --orders O [--metric spearman,kendall]
//! ```

use std::path::Path;

use ranklet_core::format;
use ranklet_core::learn::ordering::{self as order, OrderError, OrderLearner, RankCorr};
use ranklet_core::metrics::{self, Correlation};
use ranklet_core::{LinalgError, MatRef};

use crate::data::orders::{parse_items_str, parse_orders_str, read_items, read_orders, Items};
use crate::error::CliError;
use crate::fit::Fitted;
use crate::hostbackend::{BackendChoice, HostBackend};
use crate::model_io::model_bytes;

/// A dimension-reduction method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceMethod {
    /// Kendall RCDR (003 §3, Fig. 3 with τ).
    RcdrKendall,
    /// Spearman RCDR (Fig. 3 with ρ).
    RcdrSpearman,
    /// PCA of the attributes of the objects in the orders.
    Pca,
}

impl ReduceMethod {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ReduceMethod::RcdrKendall => "rcdr-kendall",
            ReduceMethod::RcdrSpearman => "rcdr-spearman",
            ReduceMethod::Pca => "pca",
        }
    }
    /// From the name on the command line.
    pub fn from_name(s: &str) -> Option<ReduceMethod> {
        [ReduceMethod::RcdrKendall, ReduceMethod::RcdrSpearman, ReduceMethod::Pca].into_iter().find(|m| m.name() == s)
    }
}

/// Maps a core error to the CLI's: numerical breakdown is exit 1, anything
/// about the input exit 2.
fn core_err(ctx: &str, e: OrderError) -> CliError {
    match e {
        OrderError::Linalg(LinalgError::NotPositiveDefinite { .. })
        | OrderError::Linalg(LinalgError::Singular { .. })
        | OrderError::Linalg(LinalgError::NoConvergence { .. }) => CliError::failure(format!("{ctx}: {e}")),
        _ => CliError::input(format!("{ctx}: {e}")),
    }
}

/// A basis (`K′ × d`, row-major) and one number per component (`‖R‖/N`
/// for RCDR, the contribution ratio for PCA).
pub fn compute_basis(
    backend: &mut HostBackend,
    data: &Loaded,
    method: ReduceMethod,
    dims: usize,
) -> Result<(Vec<f64>, Vec<f64>), CliError> {
    let (n, d) = (data.items.len(), data.items.n_attrs());
    if dims == 0 || dims > d {
        return Err(CliError::input(format!("--dims {dims}: must be between 1 and {d} (the number of attributes)")));
    }
    let orders = order::Orders { x: data.x()?, order_ptr: &data.order_ptr, items: &data.flat };
    let (mut basis, mut norms) = (vec![0.0; dims * d], vec![0.0; dims]);
    let ml = data.max_len();
    let ctx = method.name();
    match method {
        ReduceMethod::RcdrKendall | ReduceMethod::RcdrSpearman => {
            let corr = if method == ReduceMethod::RcdrKendall { RankCorr::Kendall } else { RankCorr::Spearman };
            let mut work = vec![0.0; order::rcdr_workspace_len(n, d, dims, ml)];
            let mut iwork = vec![0; order::rcdr_iwork_len(n, ml)];
            order::rcdr(&orders, corr, &mut basis, &mut norms, &mut work, &mut iwork).map_err(|e| core_err(ctx, e))?;
        }
        ReduceMethod::Pca => {
            let mut work = vec![0.0; order::pca_workspace_len(d)];
            let mut iwork = vec![0; order::pca_iwork_len(n)];
            order::pca(backend, &orders, &mut basis, &mut norms, &mut work, &mut iwork)
                .map_err(|e| core_err(ctx, e))?;
        }
    }
    Ok((basis, norms))
}

/// The learner of `ranklet train --items …`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderAlgo {
    /// Expected Rank Regression (003 eq. 5).
    Err,
    /// RankRLS with each order as a query.
    Rankrls,
}

pub fn parse_reduce(s: &str) -> Result<(ReduceMethod, usize), CliError> {
    let bad = || CliError::input(format!("--reduce '{s}': expected rcdr-kendall:K, rcdr-spearman:K or pca:K"));
    let (m, k) = s.split_once(':').ok_or_else(bad)?;
    let m = ReduceMethod::from_name(m.trim()).ok_or_else(bad)?;
    let k = k.trim().parse::<usize>().map_err(|_| bad())?;
    Ok((m, k))
}

/// Value parser of `--reduce METHOD:K` (through [`parse_reduce`]).
pub fn parse_reduce_arg(s: &str) -> Result<(ReduceMethod, usize), String> {
    parse_reduce(s).map_err(|e| e.msg)
}

/// Fits a linear model (over the original attributes) from orders.
pub fn fit_orders(
    backend: &mut HostBackend,
    data: &Loaded,
    algo: OrderAlgo,
    lambda: f64,
    basis: Option<&[f64]>,
) -> Result<(Vec<f64>, f64), CliError> {
    let (n, d) = (data.items.len(), data.items.n_attrs());
    let dz = basis.map_or(d, |b| b.len() / d);
    let learner = match algo {
        OrderAlgo::Err => OrderLearner::Err,
        OrderAlgo::Rankrls => OrderLearner::RankRls,
    };
    let mut w = vec![0.0; d];
    let mut work = vec![0.0; order::fit_linear_workspace_len(data.flat.len(), dz)];
    let mut iwork = vec![0; order::fit_linear_iwork_len(n)];
    let orders = order::Orders { x: data.x()?, order_ptr: &data.order_ptr, items: &data.flat };
    let offset = order::fit_linear(backend, &orders, learner, lambda, basis, &mut w, &mut work, &mut iwork)
        .map_err(|e| core_err("training", e))?;
    Ok((w, offset))
}

/// What `ranklet train --items … --orders …` fits (its flags as plain
/// values).
#[derive(Clone, Copy, Debug)]
pub struct OrdersRequest {
    /// The learner.
    pub algo: OrderAlgo,
    /// λ.
    pub lambda: f64,
    /// A reduced basis to learn in first (`--reduce METHOD:K`).
    pub reduce: Option<(ReduceMethod, usize)>,
    /// Element type of the model file.
    pub element: format::ElementType,
    /// The backend.
    pub backend: BackendChoice,
}

/// The driver of training from sample orders, shared by `ranklet train
/// --items … --orders …` and the Python estimators: the reduced basis if
/// asked, the linear model, its metadata (`items`, `orders` name the data)
/// and the model bytes.
///
/// # Errors
/// A λ that is not finite and ≥ 0; the learners' errors.
pub fn train_orders(req: &OrdersRequest, data: &Loaded, items: &str, orders: &str) -> Result<Vec<u8>, CliError> {
    let lambda = req.lambda;
    if !(lambda.is_finite() && lambda >= 0.0) {
        return Err(CliError::input(format!("--lambda must be a finite number ≥ 0, got {lambda}")));
    }
    let mut backend = HostBackend::new(req.backend);
    let basis = match req.reduce {
        Some((m, k)) => Some(compute_basis(&mut backend, data, m, k)?.0),
        None => None,
    };
    let (w, offset) = fit_orders(&mut backend, data, req.algo, lambda, basis.as_deref())?;
    let algo = match req.algo {
        OrderAlgo::Err => "err",
        OrderAlgo::Rankrls => "rankrls",
    };
    let mut meta = format!(
        "algorithm={algo}\nitems={items}\norders={orders}\nn_orders={}\nlambda={}\nattributes={}\n",
        data.order_ptr.len() - 1,
        lambda,
        data.items.attr_names().join(",")
    );
    if let (Some((m, k)), Some(b)) = (req.reduce, &basis) {
        meta.push_str(&format!("reduce={}:{k}\n", m.name()));
        let rows: Vec<String> = b
            .chunks(data.items.n_attrs())
            .map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","))
            .collect();
        meta.push_str(&format!("basis={}\n", rows.join(";")));
    }
    model_bytes(&Fitted::Linear { w, offset }, data.items.n_attrs(), req.element, &meta, None)
}

/// Mean correlation between `scores` and the orders.
pub fn mean_corr(scores: &[f64], data: &Loaded, c: Correlation) -> Result<metrics::QueryMean, CliError> {
    let ml = data.max_len();
    let mut work = vec![0; metrics::index_workspace_len(ml)];
    let mut fwork = vec![0.0; metrics::real_workspace_len(ml)];
    metrics::mean_order_correlation(scores, &data.order_ptr, &data.flat, c, &mut work, &mut fwork)
        .map_err(|e| CliError::input(format!("evaluation: {e}")))
}

/// Items and orders in the CSR form core takes.
pub struct Loaded {
    /// The items.
    pub items: Items,
    /// Order boundaries.
    pub order_ptr: Vec<usize>,
    /// Item indices, most preferred first within each order.
    pub flat: Vec<usize>,
}

impl Loaded {
    /// The items' attributes, row-major.
    pub fn x(&self) -> Result<MatRef<'_, f64>, CliError> {
        MatRef::from_row_major(self.items.attrs(), self.items.len(), self.items.n_attrs())
            .map_err(|e| CliError::failure(e.to_string()))
    }
    /// The length of the longest order.
    pub fn max_len(&self) -> usize {
        self.order_ptr.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
    }
}

impl Loaded {
    /// Reads and checks the items and orders files (errors name the file
    /// and line).
    pub fn read(items_path: &Path, orders_path: &Path) -> Result<Loaded, CliError> {
        let items = read_items(items_path)?;
        Self::check_attrs(&items, &items_path.display().to_string())?;
        let orders = read_orders(orders_path, &items)?;
        Ok(Self::of(items, orders))
    }

    /// Parses and checks the texts of an items and an orders file (`items`,
    /// `orders` name them in errors).
    pub fn parse(items_text: &str, items: &str, orders_text: &str, orders: &str) -> Result<Loaded, CliError> {
        let it = parse_items_str(items_text, items)?;
        Self::check_attrs(&it, items)?;
        let o = parse_orders_str(orders_text, orders, &it)?;
        Ok(Self::of(it, o))
    }

    fn check_attrs(items: &Items, name: &str) -> Result<(), CliError> {
        if items.n_attrs() == 0 {
            return Err(CliError::input(format!("{name}: the items have no attribute columns")));
        }
        Ok(())
    }

    fn of(items: Items, orders: Vec<Vec<usize>>) -> Loaded {
        let mut order_ptr = vec![0];
        let mut flat = Vec::new();
        for o in &orders {
            flat.extend_from_slice(o);
            order_ptr.push(flat.len());
        }
        Loaded { items, order_ptr, flat }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_spec() {
        assert_eq!(parse_reduce("pca:3").unwrap(), (ReduceMethod::Pca, 3));
        assert_eq!(parse_reduce("rcdr-kendall:2").unwrap(), (ReduceMethod::RcdrKendall, 2));
        assert_eq!(parse_reduce("rcdr-spearman: 1").unwrap(), (ReduceMethod::RcdrSpearman, 1));
        for bad in ["pca", "pca:x", "lda:2", ":2", "pca:-1"] {
            assert_eq!(parse_reduce(bad).unwrap_err().code, 2, "{bad}");
        }
    }
}
