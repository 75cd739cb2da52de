//! Library half of the `ranklet` command-line tool: data readers, the faer
//! backend, training loops, benchmarks. It contains no algorithm: every
//! learner, metric and the model format live in `ranklet-core`.

pub mod bench;
pub mod bench_train;
pub mod commands;
pub mod cv;
pub mod data;
pub mod error;
pub mod export;
pub mod faer_backend;
pub mod fit;
pub mod hostbackend;
pub mod metric;
pub mod ordinal;
pub mod plot;
pub mod table;
