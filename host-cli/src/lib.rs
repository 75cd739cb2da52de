//! The host library: data readers, the faer backend, the family drivers,
//! cross-validation, the model writer — shared by the `ranklet` binary and
//! the Python extension. It contains no algorithm: every learner, metric and
//! the model format live in `ranklet-core`.
//!
//! Whatever its features, no function of it takes a command-line type or a
//! progress bar, and none prints: drivers take plain request structs and
//! report progress through a callback ([`progress::OnProgress`]); what a
//! command prints (notes, summaries, tables) is returned to it. The command
//! line itself (the subcommands, their flag groups and readers, the value
//! enums of the flags, the progress bar, the plots, the exit codes) is the
//! binary's own module tree, declared in `src/main.rs`.
//!
//! Modules in dependency order: each imports only modules listed before it
//! (no import cycles).
//!
//! - `data` (readers; nothing else of the crate), `vexp` (vectorised
//!   `exp`), `rng` (splitmix64)
//! - `kernel_par` (the parallel kernel-matrix passes) → vexp;
//!   `faer_backend` → kernel_par
//! - `error` (`CliError` and its exit code, atomic writes) → data
//! - `progress` (the progress/cancel callback) → error
//! - `arrays` (data sets from arrays in memory, for the Python extension)
//!   → data, error
//! - `table` → data; `metric` → error; `hostbackend` → faer_backend
//! - `fit` (the host-side model, `Target`) → table
//! - `args` (help headings, value enums, typed value parsers incl. the CV
//!   `Scheme`, kernels) → error, metric
//! - `model_io` (model bytes, reading model files, scoring rows/items) → args, data,
//!   error, fit
//! - `ordering` (supervised ordering over core: the items and orders read,
//!   the reduced bases, the training driver) → error, fit, hostbackend,
//!   model_io
//! - `family` (one module per learner family: its grid point, grid and
//!   hooks into core; `family::kron`, the edge-data driver, also reads
//!   nodes) → args, data, error, fit, metric, progress, table
//! - `cv` (k-fold and leave-out, generic over `family::Family`) → rng, args,
//!   error, family, fit, metric, progress, table
//! - `train_rows` (the training driver on rows, called by `train`
//!   and the Python extension) → args, cv, data, error, family, fit,
//!   hostbackend, metric, model_io, progress, table
//! - `train_edges` (the training driver on labelled edges, called
//!   by `train` and the Python extension) → args, cv, data, error, family,
//!   hostbackend, progress
//! - `stats_rows` (statistics shards from rows in memory, their merge and
//!   the fit from them, for the Python extension's Dask layer) → args,
//!   error, family, fit, hostbackend, model_io, train_rows
//! - `feedback` (simulated users of the on-device online learner) → error,
//!   metric, model_io
//! - the binary's modules import the library as `ranklet::…`; the library
//!   never imports them.

#![forbid(unsafe_code)]

pub mod args;
pub mod arrays;
pub mod cv;
pub mod data;
pub mod error;
pub mod faer_backend;
pub mod family;
pub mod feedback;
pub mod fit;
pub mod hostbackend;
pub mod hugebuf;
pub mod kernel_par;
pub mod mem;
pub mod metric;
pub mod model_io;
pub mod ordering;
pub mod progress;
pub mod rng;
pub mod stats_rows;
pub mod table;
pub mod train_edges;
pub mod train_rows;
pub mod vexp;
