//! The faer implementation of `ranklet_core::backend::Backend` (being written).
