//! `ranklet suggest`: the next pairs to ask of a preference-GP model over a
//! fixed item set (001 §5): lines `a<TAB>b<TAB>variance<TAB>mean_difference`
//! (item ids; the variance and mean of `f_a − f_b` when the pair was
//! picked), best first, each chosen after pretend answers to the earlier
//! ones. A low-rank model (kind 10, `--algo xpgp --basis M`) is searched
//! among every pair of its items by the screened rule without an `n × n`
//! matrix, its factor updated between picks. For an inductive model
//! (`train --inductive` or `--basis M`) the candidates are every pair of
//! the items of `--items`, searched the same way; such a model is not
//! updated between picks, so it proposes one pair.

use clap::Args;
use ranklet::args::heading;
use ranklet::error::CliError;
use ranklet::family::pref::{suggest as pick, suggest_inductive, suggest_lowrank, PrefItems};
use ranklet_core::format::ModelView;

use crate::input::ModelArgs;

/// `ranklet suggest` arguments.
#[derive(Args, Debug)]
pub struct SuggestArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Number of pairs to propose.
    #[arg(short, long, default_value_t = 10, help_heading = heading::OUTPUT)]
    pub k: usize,
    /// Inductive models: the items to choose the pair among (CSV with an
    /// `id` column and the model's attribute columns, or `id i:v …` lines).
    #[arg(long, help_heading = heading::PREFS)]
    pub items: Option<std::path::PathBuf>,
}

/// `ranklet suggest`.
pub fn suggest(a: SuggestArgs) -> Result<(), CliError> {
    if a.k == 0 {
        return Err(CliError::input("-k must be ≥ 1"));
    }
    let bytes = a.model.read()?;
    let view = ModelView::new_checked(&bytes).map_err(|e| CliError::input(e.to_string()))?;
    if let Some(gp) = view.pref_inductive() {
        let path = a.items.as_deref().ok_or_else(|| {
            CliError::input(
                "a model trained with --inductive or --basis suggests among the items given by --items FILE",
            )
        })?;
        let items = PrefItems::read_file(path, None)?;
        let Some(s) = suggest_inductive(&gp, view.dim(), &items)? else {
            eprintln!("ranklet: note: no pair left to ask (every difference is certain)");
            return Ok(());
        };
        println!("{}\t{}\t{:.6e}\t{:.6e}", items.ids[s.i], items.ids[s.j], s.var_diff, s.mean_diff);
        if a.k > 1 {
            eprintln!(
                "ranklet: note: 1 pair suggested of the {} asked (an inductive model is not updated between picks)",
                a.k
            );
        }
        return Ok(());
    }
    if a.items.is_some() {
        return Err(CliError::input("--items applies to inductive preference GPs (a fixed-set model knows its items)"));
    }
    // Kind 10 or kind 8: the same picks, the same item names.
    let (picks, names) = match (view.pref_lowrank(), view.pref_gp()) {
        (Some(gp), _) => (suggest_lowrank(&gp, a.k), gp.item_names()),
        (None, Some(gp)) => (pick(&gp, a.k), gp.item_names()),
        (None, None) => {
            return Err(CliError::input(format!(
                "{}: suggest needs a preference GP over a fixed item set (train --algo pref-gp|xpgp|diff-gp without --inductive)",
                a.model.model.display()
            )))
        }
    };
    // A learner's error (or a memory refusal) names the model file, as the
    // refusal of another kind does.
    let picks = picks.map_err(|e| CliError { msg: format!("{}: {}", a.model.model.display(), e.msg), ..e })?;
    let name = |i: usize| names.lines().nth(i).map_or_else(|| i.to_string(), str::to_string);
    let mut out = String::new();
    for s in &picks {
        out.push_str(&format!("{}\t{}\t{:.6e}\t{:.6e}\n", name(s.i), name(s.j), s.var_diff, s.mean_diff));
    }
    print!("{out}");
    if picks.len() < a.k {
        eprintln!("ranklet: note: {} pairs suggested of the {} asked", picks.len(), a.k);
    }
    Ok(())
}
