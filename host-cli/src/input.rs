//! The data a command reads, as clap argument groups with their help
//! headings: the `--data` rows (SVMlight or CSV), the `--pairs` over those
//! rows, the `--items`/`--orders` of supervised ordering, the
//! `--prefs`/`--relation` of the preference GPs (over `--items` or the rows
//! of `--data`), the `--edges` and their nodes, the `-m/--model` file; and
//! reading them through the library's readers (errors name the file and
//! line).

use std::path::{Path, PathBuf};

use clap::{ArgGroup, Args};
use ranklet::args::{heading, DataFormat};
use ranklet::data::prefs::{read_groups, read_prefs, read_relation};
use ranklet::data::{self, csv::CsvOptions, svmlight::SvmlightOptions, Dataset, ErrorKind};
use ranklet::error::CliError;
use ranklet::family::kron::NodeFiles;
use ranklet::family::pref::{check_relations, PrefAlgo, PrefData, PrefItems, PrefModel, Scored};
use ranklet::mem::PairCost;
pub use ranklet::ordering::Loaded;
use ranklet_core::graph::Pair;

use crate::cli_values::{self, lib_enum};

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
        ranklet::model_io::read_model(&self.model)
    }
}

/// A small linear model with metadata, for the commands' unit tests.
#[cfg(test)]
pub(crate) fn sample_model() -> Vec<u8> {
    use ranklet_core::format::{self, ElementType, ModelSpec};
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

/// Rows of labelled feature vectors: `--data` and how it is read.
///
/// `--data` is optional here so that `train`/`eval` can take sample orders
/// instead; each command makes it required where it is the only kind.
#[derive(Args, Debug, Clone)]
pub struct RowsArgs {
    /// Data file: SVMlight/LETOR (`label [qid:q] i:v …`) or CSV (by the
    /// `.csv` extension, or `--format csv`).
    #[arg(long, help_heading = heading::ROWS)]
    pub data: Option<PathBuf>,
    /// File format; by default from the extension.
    #[arg(long, value_parser = lib_enum::<cli_values::DataFormat>(), help_heading = heading::ROWS)]
    pub format: Option<DataFormat>,
    /// CSV: the label column (default `label`).
    #[arg(long, help_heading = heading::ROWS)]
    pub label_col: Option<String>,
    /// CSV: the query-id column.
    #[arg(long, help_heading = heading::ROWS)]
    pub qid_col: Option<String>,
    /// SVMlight: the feature dimension to learn over (default: the largest
    /// index in the file); a higher index is then an error. Not needed for
    /// test data with higher indices: every kernel scores those exactly
    /// (the training rows are 0 there).
    #[arg(long, help_heading = heading::ROWS)]
    pub num_features: Option<usize>,
}

impl RowsArgs {
    /// The `--data` file (clap requires it wherever rows are the input).
    pub fn path(&self) -> Result<&Path, CliError> {
        self.data.as_deref().ok_or_else(|| CliError::input("--data is required"))
    }

    /// Whether the data is read as CSV (by `--format`, else the extension).
    pub fn is_csv(&self) -> bool {
        match self.format {
            Some(f) => f == DataFormat::Csv,
            None => self.data.as_deref().and_then(Path::extension).is_some_and(|e| e.eq_ignore_ascii_case("csv")),
        }
    }

    /// Reads labelled rows (training, evaluation), with the feature
    /// dimension fixed to `num_features` when checked against a model.
    pub fn read(&self, num_features: Option<usize>) -> Result<Dataset, CliError> {
        self.read_with(num_features, false)
    }

    /// Reads rows to score: the label may be left out (an SVMlight line
    /// `[qid:q] i:v …`, a CSV file without a label column); the labels of
    /// unlabelled rows are 0.
    pub fn read_unlabelled(&self, num_features: Option<usize>) -> Result<Dataset, CliError> {
        self.read_with(num_features, true)
    }

    /// How the format was chosen, for messages: `by --format` or `by its
    /// extension`.
    fn format_source(&self) -> &'static str {
        if self.format.is_some() {
            "by --format"
        } else {
            "by its extension"
        }
    }

    fn read_with(&self, num_features: Option<usize>, optional_label: bool) -> Result<Dataset, CliError> {
        let path = self.path()?;
        if self.is_csv() {
            let opts = CsvOptions { label_col: self.label_col.clone(), qid_col: self.qid_col.clone(), optional_label };
            let ds = data::csv::read_csv(path, &opts)?;
            if let Some(d) = num_features {
                if ds.n_features() != d {
                    return Err(CliError::input(format!(
                        "{}: {} feature columns, the model has {d}: the file needs the model's {d} feature columns \
                         in training order, besides the label{} (e.g. `label,f1,…,f{d}`)",
                        path.display(),
                        ds.n_features(),
                        if self.qid_col.is_some() { " and qid columns" } else { " column (if any)" },
                    )));
                }
            }
            Ok(ds)
        } else {
            if self.label_col.is_some() || self.qid_col.is_some() {
                return Err(CliError::input(format!(
                    "{}: --label-col/--qid-col apply to CSV data only, and this file is read as SVMlight ({}); \
                     add --format csv to read it as CSV",
                    path.display(),
                    self.format_source()
                )));
            }
            // When scoring, SVMlight data is read at its own width: core
            // scores features beyond the model's exactly.
            let num_features = if num_features.is_some() { None } else { self.num_features };
            let opts = SvmlightOptions { num_features, optional_label };
            data::svmlight::read_svmlight(path, &opts).map_err(|e| {
                let mut err = CliError::from(e.clone());
                // A malformed line, unless it only lacks a label (which says
                // so itself): maybe a file in another format.
                if e.kind() == ErrorKind::Malformed && !e.message().starts_with("no label") {
                    err.msg.push_str(&format!(
                        " (read as SVMlight {}, lines `label [qid:q] i:v …`; for CSV with a header add --format csv)",
                        self.format_source()
                    ));
                }
                err
            })
        }
    }
}

/// Pairwise preferences over the rows of `--data`.
#[derive(Args, Debug, Clone)]
pub struct PairsArgs {
    /// Pairwise preferences `winner loser [magnitude]` over the 0-based rows
    /// of --data; the labels of --data are then not used.
    #[arg(long, requires = "data", help_heading = heading::PAIRS)]
    pub pairs: Option<PathBuf>,
}

impl PairsArgs {
    /// Reads the pairs, if given, over `n_rows` rows, refusing a file whose
    /// pairs would not fit in memory at `cost` each
    /// ([`ranklet::mem::read_pairs_checked`]).
    pub fn read(&self, n_rows: usize, cost: &PairCost<'_>) -> Result<Option<Vec<Pair>>, CliError> {
        Ok(match &self.pairs {
            Some(p) => Some(ranklet::mem::read_pairs_checked(p, n_rows, cost)?),
            None => None,
        })
    }

    /// What `ranklet train --pairs` holds per pair, an upper bound: the
    /// pair (24 bytes: two `usize` and an `f64`; the training graph,
    /// `Graph::Pairs`, borrows the pairs, and the learners go over them
    /// without storage per pair); with `--cv K` (`folds` = K, 0 without),
    /// the K splits, each holding every pair once, as a training or a
    /// validation pair (24·K), the shuffled pair indices in their folds (8,
    /// at most 16 with the folds' spare capacity) and a validation flag (1).
    pub fn training_cost(folds: usize) -> PairCost<'static> {
        let cv = if folds == 0 { 0 } else { folds.saturating_mul(24).saturating_add(17) };
        PairCost {
            bytes: cv.saturating_add(24),
            holds: "training on them",
            way_out: "compute statistics of shards with `ranklet stats --data SHARD --pairs SHARD_PAIRS` (each \
                      shard with the pairs of its own rows) and train on them with `ranklet train --from-stats \
                      --algo rankrls`, or give fewer pairs",
        }
    }
}

/// The data of a command that learns or evaluates from any kind: rows
/// (`--data`), optionally with `--pairs`, or sample orders (`--items
/// --orders`). One of `--data` and `--items` is required; every sample-order
/// flag conflicts with every rows or pairs flag (clap's message names both;
/// exit 2).
#[derive(Args, Debug, Clone)]
#[command(group(ArgGroup::new("input").required(true).args(["data", "items", "edges"])))]
#[command(group(ArgGroup::new("items_data").args(["orders", "prefs"])))]
#[command(group(ArgGroup::new("items_needs").args(["items"]).requires("items_data")))]
#[command(group(ArgGroup::new("pref_items").args(["data", "items"])))]
#[command(group(
    ArgGroup::new("sample_orders")
        .args(["items", "orders"])
        .multiple(true)
        .conflicts_with_all(["data", "format", "label_col", "qid_col", "num_features", "pairs"])
))]
#[command(group(
    ArgGroup::new("graph")
        .args(["edges", "nodes", "nodes_u", "nodes_v", "kernel_u", "kernel_v", "symmetrize"])
        .multiple(true)
        .conflicts_with_all([
            "data", "format", "label_col", "qid_col", "num_features", "pairs", "items", "orders", "prefs",
            "relation", "relation_groups",
        ])
))]
pub struct DataArgs {
    #[command(flatten)]
    pub rows: RowsArgs,
    #[command(flatten)]
    pub pairs: PairsArgs,
    #[command(flatten)]
    pub orders: OrdersArgs,
    #[command(flatten)]
    pub graph: EdgesArgs,
    #[command(flatten)]
    pub prefs: PrefsArgs,
}

/// Preferences between items by id, and relations between the items
/// (preference GPs, papers 000 §5 and 001; formats in
/// [`data::prefs`](ranklet::data::prefs)). The items are `--items` (CSV with
/// an `id` column, or `id i:v …` lines) or the rows of `--data` (ids: the
/// 0-based row numbers).
#[derive(Args, Debug, Clone, Default)]
pub struct PrefsArgs {
    /// Preferences by item id: `winner loser`, `a b tie` (dropped by pref-gp
    /// and xpgp, a difference of 0 for diff-gp) or `a b d` (score difference
    /// s_a − s_b, which diff-gp needs).
    #[arg(long, requires = "pref_items", conflicts_with = "pairs", help_heading = heading::PREFS)]
    pub prefs: Option<PathBuf>,
    /// What pref-gp and xpgp make of `a b tie`: drop it, or keep it as the
    /// two opposite judgements a ≻ b and b ≻ a (likelihood Φ(d/c)·Φ(−d/c),
    /// largest when the two items score equal). diff-gp keeps a tie as the
    /// difference 0 either way.
    #[arg(long, value_parser = lib_enum::<cli_values::Ties>(), default_value = "drop", requires = "prefs", help_heading = heading::PREFS)]
    pub ties: data::prefs::Ties,
    /// A relation between the items, `u v [w]` (undirected, w ≥ 0, default
    /// 1); one relation type per file, repeat the flag for several (xpgp).
    #[arg(long, requires = "prefs", help_heading = heading::PREFS)]
    pub relation: Vec<PathBuf>,
    /// A bipartite relation `item group [w]`, projected to co-membership
    /// (items sharing a group are related); repeatable (xpgp).
    #[arg(long, requires = "prefs", help_heading = heading::PREFS)]
    pub relation_groups: Vec<PathBuf>,
}

/// Labelled edges and their nodes (Kronecker learners, paper 004): `--edges`
/// with node features (`--nodes` for one node set, `--nodes-u`/`--nodes-v`
/// for two) or precomputed node kernels (`--kernel-u precomputed:FILE`,
/// `--kernel-v …`; one node set without `--kernel-v`).
#[derive(Args, Debug, Clone, Default)]
pub struct EdgesArgs {
    /// Labelled edges `u v y` (one per line; u is the conditioning node).
    #[arg(long, help_heading = heading::EDGES)]
    pub edges: Option<PathBuf>,
    /// Node features of one node set (u and v are the same kind of node):
    /// `id i:v …` or CSV with an `id` column.
    #[arg(long, requires = "edges", conflicts_with_all = ["nodes_u", "nodes_v", "kernel_u", "kernel_v"], help_heading = heading::EDGES)]
    pub nodes: Option<PathBuf>,
    /// Node features of the first (conditioning) nodes.
    #[arg(long, requires_all = ["edges", "nodes_v"], conflicts_with_all = ["kernel_u", "kernel_v"], help_heading = heading::EDGES)]
    pub nodes_u: Option<PathBuf>,
    /// Node features of the second nodes.
    #[arg(long, requires_all = ["edges", "nodes_u"], help_heading = heading::EDGES)]
    pub nodes_v: Option<PathBuf>,
    /// Precomputed kernel of the first nodes, `precomputed:FILE` (a square
    /// matrix with ids, or bare); alone, the kernel of one node set. For
    /// scoring: the kernel rows of the new nodes against the training nodes.
    #[arg(long, value_parser = parse_precomputed, requires = "edges", conflicts_with = "nodes_v", help_heading = heading::EDGES)]
    pub kernel_u: Option<PathBuf>,
    /// Precomputed kernel of the second nodes, `precomputed:FILE`.
    #[arg(long, value_parser = parse_precomputed, requires = "kernel_u", help_heading = heading::EDGES)]
    pub kernel_v: Option<PathBuf>,
    /// Use (K + Kᵀ)/2 for a precomputed kernel that is not symmetric
    /// (refused otherwise).
    #[arg(long, requires = "kernel_u", help_heading = heading::EDGES)]
    pub symmetrize: bool,
}

impl EdgesArgs {
    /// The node files, for the library's readers.
    pub fn files(&self) -> NodeFiles {
        NodeFiles {
            nodes: self.nodes.clone(),
            nodes_u: self.nodes_u.clone(),
            nodes_v: self.nodes_v.clone(),
            kernel_u: self.kernel_u.clone(),
            kernel_v: self.kernel_v.clone(),
            symmetrize: self.symmetrize,
        }
    }
}

/// Value parser of `--kernel-u/-v`: `precomputed:FILE`.
pub fn parse_precomputed(s: &str) -> Result<PathBuf, String> {
    match s.strip_prefix("precomputed:") {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => Err(format!("'{s}': expected precomputed:FILE")),
    }
}

/// Sample orders over items (supervised ordering, paper 003).
///
/// Optional here so that `train`/`eval` can take rows instead; `reduce`
/// requires them.
#[derive(Args, Debug, Clone)]
pub struct OrdersArgs {
    /// Items: CSV with an `id` column and numeric attribute columns; with
    /// --prefs also `id i:v …` lines (by the extension, as node features).
    #[arg(long, help_heading = heading::ORDERS)]
    pub items: Option<PathBuf>,
    /// Sample orders: one order per line, item ids most preferred first.
    #[arg(long, requires = "items", help_heading = heading::ORDERS)]
    pub orders: Option<PathBuf>,
}

impl OrdersArgs {
    /// The items and orders files, when both are given.
    pub fn paths(&self) -> Option<(&Path, &Path)> {
        Some((self.items.as_deref()?, self.orders.as_deref()?))
    }
}

/// Reads the items of the preference GPs: `--items` (node features: CSV
/// with an `id` column, or `id i:v …` lines) or the rows of `--data` (ids
/// `"0"`, `"1"`, …).
///
/// # Errors
/// The readers' errors (file and line); no items file given; too many
/// attributes to hold densely.
pub fn read_pref_items(data: &DataArgs) -> Result<PrefItems, CliError> {
    if let Some(path) = &data.orders.items {
        return PrefItems::read_file(path, data.rows.num_features);
    }
    let path = data.rows.path().map_err(|_| CliError::input("--prefs needs the items: --items FILE or --data FILE"))?;
    PrefItems::from_rows(&data.rows.read(None)?, &path.display().to_string())
}

/// Reads the items, the preferences and the relations for `algo`.
/// Relations are refused for pref-gp and diff-gp and required for xpgp;
/// [`ranklet::family::pref::tie_notes`] says what became of ties.
///
/// # Errors
/// Every reader error (file and line: unknown ids, self-preferences,
/// edges to unknown items, non-finite or negative weights); diff-gp
/// given a bare preference; no preference left after dropping ties.
pub fn read_pref_data(data: &DataArgs, algo: PrefAlgo) -> Result<PrefData, CliError> {
    let p = &data.prefs;
    let prefs_path = p.prefs.as_deref().ok_or_else(|| CliError::input("--prefs is required"))?;
    let n_rel = p.relation.len() + p.relation_groups.len();
    check_relations(algo, n_rel)?;
    let items = read_pref_items(data)?;
    let prefs = read_prefs(prefs_path, &items.ids)?;
    let mut relations = Vec::with_capacity(n_rel);
    for r in &p.relation {
        relations.push(read_relation(r, &items.ids)?);
    }
    for g in &p.relation_groups {
        relations.push(read_groups(g, &items.ids)?);
    }
    PrefData::new(items, prefs, relations, algo, p.ties)
}

/// Scores the held-out preferences of `--prefs` with `model` (a kind-9
/// model over the items of `--items`/`--data`).
///
/// # Errors
/// No `--prefs`; reader errors (file and line), ids the model does not
/// know, attribute dimensions that differ from the model's, only ties.
pub fn score_prefs(model: &PrefModel<'_>, data: &DataArgs) -> Result<Scored, CliError> {
    let path = data.prefs.prefs.as_deref().ok_or_else(|| CliError::input("--prefs is required"))?;
    let items = match model {
        PrefModel::Fixed(_) | PrefModel::LowRank(_) => None,
        PrefModel::Inductive(..) => Some(read_pref_items(data)?),
    };
    ranklet::family::pref::score_prefs(model, items.as_ref(), path)
}
