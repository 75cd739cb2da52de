//! # ranklet-core
//!
//! The part of ranklet that is mathematics or must run on a device. It is
//! `#![no_std]`, never allocates and contains no `unsafe`. Every routine works
//! on buffers the caller owns; a routine that needs scratch memory has a
//! `*_workspace_len` companion that says exactly how much.
//!
//! ## Layers, bottom up
//!
//! Papers are cited by number (000–004); `docs/papers.md` maps them to
//! titles and sections, `docs/architecture.md` draws the whole tree.
//!
//! - [`real`]: the [`Real`] trait over `f32` and `f64` (training is f64,
//!   device scoring f32 by default).
//! - [`error`]: [`LinalgError`], the one error type of the numerical layers.
//! - [`workspace`]: caller scratch memory; the [`scratch!`] macro declares a
//!   routine's scratch once, so its size and its slicing cannot drift.
//! - [`linalg`]: strided matrix views ([`MatRef`], [`MatMut`]) over caller
//!   slices, data rows (dense or CSR, [`linalg::Rows`]), level-1/2/3 kernels
//!   (dot, axpy, gemv, cache-blocked gemm and syrk), Cholesky (also of the
//!   longest positive leading block), triangular solves, a pivoted LDLᵀ
//!   solve, LU, and conjugate gradient with a caller matvec.
//! - [`eigen`]: symmetric eigensolvers: Householder tridiagonalisation +
//!   implicit QL (full), cyclic Jacobi (tiny matrices, high relative
//!   accuracy), a top-k solver costing O(n²k), and fixed-capacity wrappers
//!   whose capacity is a const generic.
//! - [`special`]: the standard normal's `Φ`, `log Φ` and inverse Mills
//!   ratio, stable for every `z`, shared by the preference learners and
//!   the preference model kinds.
//! - [`backend`]: the small trait every learner is written against (gemm,
//!   syrk, full and top-k symmetric eigen, Cholesky, solves), with
//!   [`backend::Portable`] as core's own implementation. The host CLI plugs
//!   in a faer implementation for kernel matrices of thousands of rows.
//! - [`kernel`]: kernel functions (linear, RBF, polynomial), kernel matrices
//!   over dense or sparse rows, kernel centring (000 §6.1).
//! - [`graph`]: preference graphs and their Laplacians `L` (identity, query
//!   groups, explicit pairs), with `L^½` where it is cheap.
//! - [`learn`]: the learners, one module per family (RLS/RankRLS, KPCR/
//!   KPCRank, Kronecker conditional ranking on graphs, kernel expansions,
//!   supervised ordering, preference GPs by EP with XPGP relation kernels —
//!   [`learn::pref`]), each with a
//!   fit-to-model entry point and, where CV reuses work, a "one
//!   decomposition, every grid point" entry point; and online RankRLS
//!   ([`learn::online`]), which absorbs one preference at a time into a
//!   state in caller storage (an O(D²) Cholesky update) and picks the next
//!   pair to ask; the device preference GP ([`learn::pref::device`]);
//!   the shape both device learners share, with their store size and save
//!   written once ([`learn::device`]), and their bounded log of answered
//!   pairs ([`learn::pair_log`]); [`learn::LearnError`].
//! - [`metrics`]: ranking metrics (disagreement, c-index, Kendall τ-b,
//!   Spearman ρ, AUC, NDCG, MAP, pair error), per query and averaged, and
//!   per conditioning node of a relation matrix (004 eq. 4).
//! - [`format`]: the `.rkl` model format: zero-copy validated parsing of
//!   `&[u8]` of any alignment, writing, and scoring (`docs/format.md`).
//! - [`rank`]: ordering and top-k of scores without allocation, and of
//!   rows scored by a model.
//! - [`store`]: a two-slot (A/B) store over a caller byte region, so that
//!   a save torn at any byte leaves the previous state loadable.
//!
//! Private: `sort`, the one home of core's sorts, heap selection and
//! mid-ranks.
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
// Index loops mirror the formulas they
// implement; `!(x > tol)` is the deliberate NaN-catching form of a test.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

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
pub mod rank;
pub mod real;
mod sort;
pub mod special;
pub mod store;
pub mod workspace;

pub use error::LinalgError;
pub use linalg::{MatMut, MatRef};
pub use real::Real;
