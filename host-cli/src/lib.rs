//! Library half of the `ranklet` command-line tool: data readers, the faer
//! backend, training loops, benchmarks. It contains no algorithm: every
//! learner, metric and the model format live in `ranklet-core`.
//!
//! Modules in dependency order: each imports only modules listed before it
//! (no import cycles).
//!
//! - `data` (readers; nothing else of the crate), `vexp` (vectorised
//!   `exp`), `rng` (splitmix64)
//! - `kernel_par` (the parallel kernel-matrix passes) → vexp;
//!   `faer_backend` → kernel_par
//! - `error` (`CliError`, the exit-code mapping, atomic writes) → data
//! - `progress` (the progress/cancel callback; the CLI's bar) → error
//! - `arrays` (data sets from arrays in memory, for the Python extension)
//!   → data, error
//! - `table` → data; `metric` → error; `hostbackend` → faer_backend
//! - `fit` (the host-side model, `Target`) → table
//! - `args` (help headings, value enums, typed value parsers incl. the CV
//!   `Scheme`, kernels) → error, metric
//! - `input` (the data flags of a command — rows, pairs, sample orders,
//!   edges and nodes — and reading them) → args, data, error
//! - `family` (one module per learner family: its grid point, grid and
//!   hooks into core; `family::kron`, the edge-data driver, also reads
//!   nodes) → args, data, error, fit, input, metric, table
//! - `cv` (k-fold and leave-out, generic over `family::Family`) → rng, args,
//!   error, family, fit, metric, progress, table
//! - `model_io` (`-m/--model`, model bytes, scoring rows/items) → args, data,
//!   error, fit
//! - `train_rows` (the clap-free training driver on rows, called by `train`
//!   and the Python extension) → args, cv, data, error, family, fit,
//!   hostbackend, metric, model_io, progress, table
//! - `stats_rows` (statistics shards from rows in memory, their merge and
//!   the fit from them, for the Python extension's Dask layer) → args,
//!   error, family, fit, hostbackend, model_io, train_rows
//! - `ordering` (supervised-ordering glue over core) → error, hostbackend, input
//! - `plot` → cv, error, family
//! - `feedback` (simulated users of the on-device online learner) → error,
//!   metric, model_io
//! - `commands` (one module per subcommand; `bench/` has `rng`, `eigen`,
//!   `train`) → any of the above; no module imports a command, and commands
//!   do not import each other.

#![forbid(unsafe_code)]

pub mod args;
pub mod arrays;
pub mod commands;
pub mod cv;
pub mod data;
pub mod error;
pub mod faer_backend;
pub mod family;
pub mod feedback;
pub mod fit;
pub mod hostbackend;
pub mod hugebuf;
pub mod input;
pub mod kernel_par;
pub mod mem;
pub mod metric;
pub mod model_io;
pub mod ordering;
pub mod plot;
pub mod progress;
pub mod rng;
pub mod stats_rows;
pub mod table;
pub mod train_rows;
pub mod vexp;
