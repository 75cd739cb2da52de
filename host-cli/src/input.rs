//! How a data file is read: the `--data` rows (SVMlight or CSV) with their
//! optional `--pairs`, and the `--items`/`--orders` of supervised ordering.

use std::path::PathBuf;

use clap::Args;
use ranklet_core::graph::Pair;
use ranklet_core::MatRef;

use crate::data::orders::{read_items, read_orders, Items};
use crate::data::{self, csv::CsvOptions, svmlight::SvmlightOptions, Dataset};
use crate::error::CliError;

/// How a data file is read.
#[derive(Args, Debug, Clone)]
pub struct DataArgs {
    /// Data file: SVMlight/LETOR (`label [qid:q] i:v …`) or CSV (by the
    /// `.csv` extension, or `--format csv`).
    #[arg(long)]
    pub data: PathBuf,
    /// File format; by default from the extension.
    #[arg(long, value_parser = ["svmlight", "csv"])]
    pub format: Option<String>,
    /// CSV: the label column (default `label`).
    #[arg(long)]
    pub label_col: Option<String>,
    /// CSV: the query-id column.
    #[arg(long)]
    pub qid_col: Option<String>,
    /// SVMlight: the feature dimension to learn over (default: the largest
    /// index in the file). Set it when test data may use higher indices and
    /// the kernel is RBF, whose value depends on every feature.
    #[arg(long)]
    pub num_features: Option<usize>,
    /// Pairwise preferences `winner loser [magnitude]` over the 0-based rows
    /// of --data; the labels of --data are then not used.
    #[arg(long)]
    pub pairs: Option<PathBuf>,
}

impl DataArgs {
    /// Whether the data is read as CSV (by `--format`, else the extension).
    pub fn is_csv(&self) -> bool {
        match self.format.as_deref() {
            Some(f) => f == "csv",
            None => self.data.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")),
        }
    }

    /// Reads the data (and pairs), with the feature dimension fixed to
    /// `num_features` when scoring against a model.
    pub fn read(&self, num_features: Option<usize>) -> Result<(Dataset, Option<Vec<Pair>>), CliError> {
        let ds = if self.is_csv() {
            let opts = CsvOptions { label_col: self.label_col.clone(), qid_col: self.qid_col.clone() };
            let ds = data::csv::read_csv(&self.data, &opts)?;
            if let Some(d) = num_features {
                if ds.n_features() != d {
                    return Err(CliError::input(format!(
                        "{}: {} feature columns, the model has {d}",
                        self.data.display(),
                        ds.n_features()
                    )));
                }
            }
            ds
        } else {
            if self.label_col.is_some() || self.qid_col.is_some() {
                return Err(CliError::input("--label-col/--qid-col apply to CSV data only"));
            }
            // When scoring, SVMlight data is read at its own width and
            // `score_rows` decides what features beyond the model mean.
            let num_features = if num_features.is_some() { None } else { self.num_features };
            data::svmlight::read_svmlight(&self.data, &SvmlightOptions { num_features })?
        };
        let pairs = match &self.pairs {
            Some(p) => Some(
                data::pairs::read_pairs(p, ds.n_rows())?
                    .into_iter()
                    .map(|p| Pair { winner: p.winner, loser: p.loser, magnitude: p.magnitude })
                    .collect(),
            ),
            None => None,
        };
        Ok((ds, pairs))
    }
}

/// The items and orders files.
#[derive(Args, Debug, Clone)]
pub struct OrderData {
    /// Items CSV: an `id` column and numeric attribute columns.
    #[arg(long)]
    pub items: PathBuf,
    /// Sample orders: one order per line, item ids most preferred first.
    #[arg(long)]
    pub orders: PathBuf,
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

impl OrderData {
    /// Reads and checks both files (errors name the file and line).
    pub fn load(&self) -> Result<Loaded, CliError> {
        let items = read_items(&self.items)?;
        if items.n_attrs() == 0 {
            return Err(CliError::input(format!("{}: the items have no attribute columns", self.items.display())));
        }
        let orders = read_orders(&self.orders, &items)?;
        let mut order_ptr = vec![0];
        let mut flat = Vec::new();
        for o in &orders {
            flat.extend_from_slice(o);
            order_ptr.push(flat.len());
        }
        Ok(Loaded { items, order_ptr, flat })
    }
}
