//! Library half of the `ranklet` command-line tool: data readers, the faer
//! backend, training loops, benchmarks. It contains no algorithm: every
//! learner, metric and the model format live in `ranklet-core`.

pub mod bench;
pub mod data;
pub mod faer_backend;
