//! `ranklet rank`: the top-k candidates for one conditioning node by a
//! pair model (Kronecker learners, paper 004): every candidate `v` is
//! scored as the edge `(U, v)`, printed best first as `id<TAB>score`.

use std::path::PathBuf;

use clap::Args;
use ranklet::args::heading;
use ranklet::error::CliError;
use ranklet::family::kron::{NodeFiles, PairModel, ScoringNodes};
use ranklet_core::format::ModelView;

use crate::input::ModelArgs;

/// `ranklet rank` arguments.
#[derive(Args, Debug)]
pub struct RankArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The conditioning node's id.
    #[arg(long = "for", value_name = "U", help_heading = heading::EDGES)]
    pub for_node: String,
    /// Node features of the candidate (second) nodes; for a one-node-set
    /// model also where U is looked up unless --nodes is given.
    #[arg(long, help_heading = heading::EDGES)]
    pub candidates: PathBuf,
    /// Node features holding U (default: the candidates file).
    #[arg(long, help_heading = heading::EDGES)]
    pub nodes: Option<PathBuf>,
    /// How many candidates to print.
    #[arg(short, long, default_value_t = 10, help_heading = heading::OUTPUT)]
    pub k: usize,
}

/// `ranklet rank`.
pub fn rank(a: RankArgs) -> Result<(), CliError> {
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    let model = PairModel::from_view(&view)?;
    let u_file = a.nodes.clone().unwrap_or_else(|| a.candidates.clone());
    let graph = if model.one_domain {
        NodeFiles { nodes: Some(u_file.clone()), ..NodeFiles::default() }
    } else {
        NodeFiles { nodes_u: Some(u_file.clone()), nodes_v: Some(a.candidates.clone()), ..NodeFiles::default() }
    };
    let mut nodes = ScoringNodes::read(&graph, &model, &view)?;
    if model.one_domain && a.nodes.is_some() {
        let cand = ScoringNodes::read(
            &NodeFiles { nodes: Some(a.candidates.clone()), ..NodeFiles::default() },
            &model,
            &view,
        )?;
        (nodes.v_ids, nodes.v) = (cand.v_ids, cand.v);
    }
    let u = nodes
        .u_ids
        .iter()
        .position(|id| *id == a.for_node)
        .ok_or_else(|| CliError::input(format!("--for {}: no such node in {}", a.for_node, u_file.display())))?;
    let phi_u = &nodes.u[u * model.d_u..(u + 1) * model.d_u];
    let mut buf = Vec::new();
    let mut scored = nodes
        .v_ids
        .iter()
        .enumerate()
        .map(|(j, id)| {
            Ok((id.as_str(), model.score(&view, phi_u, &nodes.v[j * model.d_v..(j + 1) * model.d_v], &mut buf)?))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    scored.sort_by(|x, y| y.1.total_cmp(&x.1));
    for (id, s) in scored.iter().take(a.k) {
        println!("{id}\t{s}");
    }
    Ok(())
}
