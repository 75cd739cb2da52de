//! # ranklet-core
//!
//! The part of ranklet that is mathematics or must run on a device. It is
//! `#![no_std]`, never allocates and contains no `unsafe`. Every routine works
//! on buffers the caller owns; a routine that needs scratch memory has a
//! `*_workspace_len` companion that says exactly how much.
//!
//! ## Layers, bottom up
//!
//! - [`real`]: the [`Real`] trait over `f32` and `f64` (training is f64,
//!   device scoring f32 by default).
//! - [`linalg`]: strided matrix views ([`MatRef`], [`MatMut`]) over caller
//!   slices, level-1/2/3 kernels (dot, axpy, gemv, cache-blocked gemm and
//!   syrk), Cholesky, triangular solves, a pivoted LDLᵀ solve for symmetric
//!   indefinite systems, and conjugate gradient with a caller matvec.
//! - [`eigen`]: symmetric eigensolvers: Householder tridiagonalisation +
//!   implicit QL (full), cyclic Jacobi (tiny matrices, high relative accuracy),
//!   a top-k solver costing O(n²k), and fixed-capacity wrappers whose capacity
//!   is a const generic.
//! - [`backend`]: the small trait every learner is written against (gemm, syrk,
//!   full and top-k symmetric eigen, Cholesky, solves), with [`backend::Portable`]
//!   as core's own implementation. The host CLI plugs in a faer implementation
//!   for kernel matrices of thousands of rows.
//!
//! - [`kernel`], [`graph`], [`learn`]: kernels over dense and sparse rows,
//!   preference-graph Laplacians, and the least-squares learners (RLS,
//!   RankRLS, KPCR, KPCRank) written once over [`backend::Backend`].
//!
//! The FFI crate and the host CLI call into these layers; neither contains an
//! algorithm of its own.
//!
//! ## Minimum supported Rust version
//!
//! Rust 1.85 (edition 2021). Raising it is a minor-version change.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// Numerical kernels take many buffers; index loops mirror the formulas they
// implement; `!(x > tol)` is the deliberate NaN-catching form of a test.
#![allow(clippy::too_many_arguments, clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

pub mod backend;
pub mod eigen;
pub mod error;
pub mod format;
pub mod graph;
pub mod interop_nalgebra;
pub mod kernel;
pub mod learn;
pub mod linalg;
pub mod metrics;
pub mod order;
pub mod rank;
pub mod real;

pub use error::LinalgError;
pub use linalg::{MatMut, MatRef};
pub use real::Real;
