//! Library half of the `ranklet` command-line tool: data readers, the faer
//! backend, training loops, benchmarks. It contains no algorithm: every
//! learner, metric and the model format live in `ranklet-core`.
//!
//! Layers, lowest first (a module imports only from layers above it in this
//! list): `data` (readers) → `error` → `table`, `metric`, `faer_backend`,
//! `hostbackend` → `fit` → `cv` → `args` (shared argument values) →
//! `input` (reading the data a command names) → `model_io` (model files) →
//! `ordering` (supervised-ordering glue), `plot` → `commands` (one module
//! per subcommand).

#![forbid(unsafe_code)]

pub mod args;
pub mod commands;
pub mod cv;
pub mod data;
pub mod error;
pub mod faer_backend;
pub mod fit;
pub mod hostbackend;
pub mod input;
pub mod metric;
pub mod model_io;
pub mod ordering;
pub mod plot;
pub mod table;
