//! The k algebraically largest eigenpairs of a symmetric operator (being written).

use crate::{LinalgError, MatMut, MatRef, Real};

/// A symmetric linear operator applied to a block of vectors: the top-k
/// solver only ever touches `A` through this, so a backend can supply its own
/// (parallel) matrix product.
pub trait SymOperator<T: Real> {
    /// The dimension `n` of the square operator.
    fn dim(&self) -> usize;
    /// `Y ← A·X` for `X`, `Y` of shape `n × b`.
    fn apply(&mut self, x: MatRef<'_, T>, y: MatMut<'_, T>) -> Result<(), LinalgError>;
}
