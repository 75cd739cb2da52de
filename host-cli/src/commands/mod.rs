//! One module per subcommand: its clap arguments and the function that runs
//! it. Commands call the shared layers (`input`, `model_io`, `ordering`,
//! `fit`, `cv`, …); no other module imports a command.

pub mod bench;
pub mod eval;
pub mod export;
pub mod inspect;
pub mod online_update;
pub mod plot_lines;
pub mod rank;
pub mod reduce;
pub mod score;
pub mod simulate_feedback;
pub mod stats;
pub mod suggest;
pub mod train;
