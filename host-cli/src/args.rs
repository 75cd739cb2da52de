//! Argument values shared by several commands: the help headings, the
//! value enums of closed sets (`--precision`, `--query-weight`, `--format`;
//! the binary's flags read them through enums of its own), the typed
//! value parsers (`--cv`, `--kernel`, `--metric`: `Result<_, String>`, so
//! that the command line reports a bad value, exit 2), comma lists, and
//! kernels (the `--kernel` grammar, its printed form and its model-file
//! form).

use ranklet_core::format::ElementType;
use ranklet_core::graph::QueryWeight;
use ranklet_core::kernel::Kernel;

use crate::error::CliError;
use crate::metric::Metric;

/// The `--help` headings: one per data kind, then the learner, model
/// selection and output.
pub mod heading {
    /// `--data` and how it is read.
    pub const ROWS: &str = "Rows (SVMlight/CSV)";
    /// `--pairs`.
    pub const PAIRS: &str = "Pairwise preferences";
    /// `--items`, `--orders`, `--reduce`.
    pub const ORDERS: &str = "Sample orders (supervised ordering)";
    /// `--edges`, `--nodes*`, `--kernel-u/-v`: graphs (Kronecker learners).
    pub const EDGES: &str = "Edges and nodes (Kronecker learners)";
    /// `--prefs`, `--relation`, `--relation-groups`: preference GPs.
    pub const PREFS: &str = "Preferences between items (preference GPs)";
    /// The model a command reads.
    pub const MODEL: &str = "Model";
    /// The learner and its hyperparameters.
    pub const LEARNER: &str = "Learner";
    /// Model selection.
    pub const CV: &str = "Cross-validation";
    /// What is written.
    pub const OUTPUT: &str = "Output";
}

/// `--precision`: the element type of a model file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// Single precision (devices).
    #[default]
    F32,
    /// Double precision.
    F64,
}

impl Precision {
    /// The model format's element type.
    pub fn element(self) -> ElementType {
        match self {
            Precision::F32 => ElementType::F32,
            Precision::F64 => ElementType::F64,
        }
    }
}

/// `--query-weight`: how the within-query graphs are weighted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueryWeightArg {
    /// Each query counts equally: `L_q = I − 11ᵀ/l_q`.
    #[default]
    Equal,
    /// Each pair counts equally: the plain Laplacian.
    Pairs,
}

impl QueryWeightArg {
    /// Core's weighting.
    pub fn to_core(self) -> QueryWeight {
        match self {
            QueryWeightArg::Equal => QueryWeight::Equal,
            QueryWeightArg::Pairs => QueryWeight::Pairs,
        }
    }
    /// The name on the command line (and in model metadata).
    pub fn name(self) -> &'static str {
        match self {
            QueryWeightArg::Equal => "equal",
            QueryWeightArg::Pairs => "pairs",
        }
    }
}

/// `--format`: how a data file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataFormat {
    /// SVMlight / LETOR lines `label [qid:q] i:v …`.
    Svmlight,
    /// CSV with a header.
    Csv,
}

/// How held-out predictions are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// k folds: whole queries; rows when the data is one query; pairs for
    /// pair data.
    KFold(usize),
    /// Closed-form leave-one-out (RLS) / leave-query-out (RankRLS).
    Loo,
}

/// Value parser of `--cv`: a fold count `K ≥ 2`, or `loo`.
pub fn parse_cv(s: &str) -> Result<Scheme, String> {
    match s.trim() {
        "loo" => Ok(Scheme::Loo),
        k => k
            .parse::<usize>()
            .ok()
            .filter(|&k| k >= 2)
            .map(Scheme::KFold)
            .ok_or_else(|| format!("'{k}' is neither a fold count ≥ 2 nor 'loo'")),
    }
}

/// A parsed `--kernel` list (one kernel, or a grid).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelList(pub Vec<Kernel>);

/// Value parser of `--kernel` (through [`parse_kernels`]; the command-line
/// parser names the flag, so the message drops its own `--kernel: `).
pub fn parse_kernel_list(s: &str) -> Result<KernelList, String> {
    parse_kernels(s).map(KernelList).map_err(|e| e.msg.trim_start_matches("--kernel: ").to_string())
}

/// `--kernel` as `train` takes it: a kernel or a grid, or `rbf:auto` (an RBF
/// kernel whose width the preference GPs fit by their evidence).
#[derive(Clone, Debug, PartialEq)]
pub enum KernelArg {
    /// Given kernels.
    List(KernelList),
    /// `rbf:auto`.
    RbfAuto,
}

impl KernelArg {
    /// The given kernels, for the learners that do not fit a kernel.
    ///
    /// # Errors
    /// `rbf:auto` ([`CliError::input`]).
    pub fn kernels(&self) -> Result<Vec<Kernel>, CliError> {
        match self {
            KernelArg::List(l) => Ok(l.0.clone()),
            KernelArg::RbfAuto => Err(CliError::input(
                "--kernel rbf:auto: only the preference GPs (pref-gp, xpgp, diff-gp) fit the kernel width; give rbf:G",
            )),
        }
    }
}

/// Value parser of `train --kernel`: `rbf:auto`, or as [`parse_kernel_list`].
pub fn parse_kernel_arg(s: &str) -> Result<KernelArg, String> {
    if s.trim() == "rbf:auto" {
        return Ok(KernelArg::RbfAuto);
    }
    parse_kernel_list(s).map(KernelArg::List).map_err(|mut e| {
        if e.contains("rbf kernel needs its width") {
            e.push_str(", or rbf:auto for the preference GPs (pref-gp, xpgp, diff-gp), which fit it");
        }
        e
    })
}

/// Value parser of a single `--metric`.
pub fn parse_metric(s: &str) -> Result<Metric, String> {
    Metric::parse(s).map_err(|e| e.msg)
}

/// A parsed comma list of metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricList(pub Vec<Metric>);

/// Value parser of a `--metric` comma list.
pub fn parse_metric_list(s: &str) -> Result<MetricList, String> {
    Metric::parse_list(s).map(MetricList).map_err(|e| e.msg)
}

/// Parses a comma list of numbers.
pub fn parse_list<T: std::str::FromStr>(flag: &str, s: &str) -> Result<Vec<T>, CliError> {
    s.split(',')
        .map(|t| {
            t.trim().parse::<T>().map_err(|_| CliError::input(format!("--{flag}: '{}' is not a valid value", t.trim())))
        })
        .collect()
}

/// Parses `--kernel`: comma-separated specs (each read by core's
/// `Kernel::from_str`) where a bare number repeats the previous kernel with a
/// new first parameter (`rbf:0.5,1,2`).
pub fn parse_kernels(s: &str) -> Result<Vec<Kernel>, CliError> {
    let mut out: Vec<Kernel> = Vec::new();
    for tok in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let spec = if tok.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            if tok.contains(':') {
                return Err(CliError::input(format!("--kernel: '{tok}' is not a number")));
            }
            match out.last() {
                Some(Kernel::Rbf { .. }) => format!("rbf:{tok}"),
                Some(Kernel::Polynomial { gamma, coef0, .. }) => format!("poly:{tok}:{gamma}:{coef0}"),
                _ => return Err(CliError::input(format!("--kernel: '{tok}' does not follow an rbf or poly kernel"))),
            }
        } else {
            tok.to_string()
        };
        // The parser's message shows the whole value; a token of a list is named.
        let k = spec.parse::<Kernel>().map_err(|e| match tok == s.trim() {
            true => CliError::input(format!("--kernel: {e}")),
            false => CliError::input(format!("--kernel: '{tok}': {e}")),
        })?;
        out.push(k);
    }
    if out.is_empty() {
        return Err(CliError::input("--kernel: empty"));
    }
    Ok(out)
}

/// Human-readable kernel, as on the command line.
pub fn kernel_name(k: &Kernel) -> String {
    k.to_string()
}
