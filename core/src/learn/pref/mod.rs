//! Probabilistic preference learning (000 §5, 001): the probit preference GP; `device` holds the posterior on a device (ADF updates, `P(i ≻ j)`, next pair).
pub mod device;
